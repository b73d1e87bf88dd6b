"""nielsen34's findings on Nielsen-style networks (``backprop(x, y) -> (nabla_b, nabla_w)``), fixed by fixn34.

* F1: a matrix port's ``backprop(X, Y)`` (its own ``update_mini_batch`` feeds it the whole batch) is called with the
  whole batch too: its gradients must be those of the sum of the per-sample costs (Nielsen's convention), so a mean
  or an unsummed ``nabla_b`` FAILs (it PASSed: only single columns were fed, where sum and mean agree).
* F2: ``return (nabla_w, nabla_b)`` FAILs, "returned in the wrong order" (the lists were paired by shape).
* F4: a returned array of the wrong shape is named ("nabla_w[0] has shape (3, 3), expected (3, 4)"), not "grads has
  no key".
The networks are tests/fixtures/nielsen_s34 (written for these tests), each bug a replaced line.
"""

import json
import pathlib

import numpy as np
import pytest
from test_cli import both, run_here, student

HERE = pathlib.Path(__file__).parent / "fixtures" / "nielsen_s34"
ARGS = ("--input-shape", "4,3", "--targets", "real@3,3", "--init", '{"sizes": [4, 3, 3, 3]}')


def _check(tmp_path, name, *edits):
    src = (HERE / name).read_text()
    for old, new in edits:
        assert old in src, old
        src = src.replace(old, new)
    p = run_here("check", f"{student(tmp_path, src, name)}::Network", *ARGS)
    return p.returncode, both(p)


@pytest.mark.parametrize("name", ["network.py", "vnetwork.py"])
def test_correct_networks_pass(tmp_path, name):
    """The one-sample network (network.py) and the matrix port both PASS, every gradient compared."""
    code, text = _check(tmp_path, name)
    assert code == 0, text
    assert "PASS: Network: every gradient (dX, dbiases[0], dbiases[1], dbiases[2], dweights[0]" in text, text
    batch = "backprop's gradients of the whole x, as update_mini_batch feeds it" in text
    assert batch == (name == "vnetwork.py"), text


def test_a_matrix_port_averaging_nabla_b_fails(tmp_path):
    """F1: nabla_b = delta.mean(axis=1) is 1/3 of the gradient of the summed cost on 3 columns: it PASSed."""
    code, text = _check(tmp_path, "vnetwork.py", ("delta.sum(axis=1, keepdims=True)", "delta.mean(axis=1, keepdims=True)"))
    assert code == 1, text
    assert "FAIL: Network: gradient mismatch in dbiases[0], dbiases[1], dbiases[2]." in text, text
    assert "0.333333 times the correct gradient" in text, text


def test_a_matrix_port_dividing_nabla_w_by_m_fails(tmp_path):
    """F1: nabla_w = delta @ a.T / x.shape[1] PASSed (on one column, m = 1)."""
    code, text = _check(tmp_path, "vnetwork.py", ("nw[-k] = delta @ acts[-k - 1].T", "nw[-k] = delta @ acts[-k - 1].T / x.shape[1]"))
    assert code == 1, text
    assert "gradient mismatch in dweights[0], dweights[1], dweights[2]" in text, text


def test_a_matrix_port_not_summing_nabla_b_is_named(tmp_path):
    """F1/F4: nabla_b = delta (unsummed, shape (3, 3) on 3 columns) is named with its shape and the one expected:
    since verify36 F2 (network.py's per-column bias deltas, summed by a matrix step, are read as such) on the step,
    which leaves the biases (3, 3), with the sum to add."""
    code, text = _check(tmp_path, "vnetwork.py", ("delta.sum(axis=1, keepdims=True)", "delta"))
    assert code == 1 and "PASS" not in text, text
    assert ("update_mini_batch left it of shape (3, 3), expected an array of shape (3, 1) (the 3 samples' bias deltas "
            "side by side, as backprop(X, Y) of the whole batch gives them: sum them over the columns, "
            "nabla_b.sum(axis=1, keepdims=True), in backprop or in update_mini_batch)") in " ".join(text.split()), text


@pytest.mark.parametrize("name", ["network.py", "vnetwork.py"])
def test_swapped_return_fails(tmp_path, name):
    """F2: return (nw, nb) PASSed (lists paired by shape); update_mini_batch unpacks (nabla_b, nabla_w)."""
    code, text = _check(tmp_path, name, ("return (nb, nw)", "return (nw, nb)"))
    assert code != 0 and "PASS" not in text, text
    assert ("returned in the wrong order (nabla_w, nabla_b): the gradients of weights first; expected (nabla_b, "
            "nabla_w), as update_mini_batch unpacks them") in text, text


def test_swapped_unpacking_is_the_order_expected(tmp_path):
    """F2: the order is update_mini_batch's: one unpacking (nabla_w, nabla_b) with a backprop returning so PASSes."""
    code, text = _check(tmp_path, "network.py", ("return (nb, nw)", "return (nw, nb)"),
                        ("delta_nabla_b, delta_nabla_w = self.backprop(x, y)",
                         "delta_nabla_w, delta_nabla_b = self.backprop(x, y)"))
    assert code == 0, text


def test_a_wrong_shape_is_named(tmp_path):
    """F4: nabla_w[0] of shape (3, 3) (the wrong activation) was 'grads has no entry for dweights[0]'."""
    code, text = _check(tmp_path, "network.py", ("nw[-k] = delta @ acts[-k - 1].T", "nw[-k] = delta @ acts[-k].T"))
    assert code != 0, text
    assert "backprop(x, y) with one sample x[:, j] of shape (4, 1): nabla_w[0] has shape (3, 3), expected (3, 4)" in text, text


# F3: a grading test of Nielsen's network: student.layer(..., targets=...) as check's --targets; without them the
# refusal is the test's mistake (GradingTestError, a grader error), never a 0 charged to a correct constructor.
_GRADING_TEST = '''
import numpy as np
import pytest


@pytest.mark.points(2)
def test_backprop(student):
    """Network: a model of its cost"""
    net = student.layer("network.py", "Network", TARGETS sizes=[4, 3, 3, 3])
    assert net.targets.shape == (3, 3) and np.all((net.targets > 0) & (net.targets < 1))
    assert net.forward(np.full((4, 3), 0.1)).shape == (1,)
'''


def _graded(tmp_path, targets):
    from gradcheck.grading.runner import grade_submission

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "network.py").write_text((HERE / "network.py").read_text())
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_network.py").write_text(_GRADING_TEST.replace("TARGETS", targets))
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out")
    return r, json.loads((tmp_path / "out" / "results.json").read_text())


def test_grading_without_targets_is_the_tests_mistake(tmp_path):
    """F3: the refusal asked for --targets, which a grading test could not give: the student scored 0 with "your
    constructor cannot take that"."""
    r, data = _graded(tmp_path, "")
    assert r.status == "grader error", data
    assert data["tests"][0]["output"].startswith("Not graded: this test is faulty"), data
    said = data["extra_data"]["grader_error"]
    assert "the test loads Network from network.py without targets" in said, said
    assert "student.layer('network.py', 'Network', targets='real@N_OUT,M', ...)" in said, said
    assert "your constructor cannot take that" not in json.dumps(data), data


def test_grading_with_targets_loads_the_model(tmp_path):
    """F3: targets='unit@3,3' (check's --targets) builds the model; its t is the layer's targets."""
    r, data = _graded(tmp_path, "targets='unit@3,3',")
    assert r.status == "graded" and [t["score"] for t in data["tests"]] == [2.0], data


def test_test_targets_draws_as_check_does():
    """F3: one rule: the grading API's targets are check's --targets draw (check_command.model_targets), an array as given."""
    from gradcheck.check_command import loss_data
    from gradcheck.grading.checks import GradingTestError
    from gradcheck.grading.plugin import _test_targets

    t, what = _test_targets("unit@3,4", 7)
    assert t.shape == (3, 4) and np.array_equal(t, loss_data("unit", "real", (3, 4), 7)[0]), what
    given = np.arange(6.0).reshape(2, 3)
    assert np.array_equal(_test_targets(given, 0)[0], given) and _test_targets(None, 0) is None
    with pytest.raises(GradingTestError, match="give t's shape after '@'"):
        _test_targets("labels:3", 0)
    with pytest.raises(GradingTestError, match="after '@' comes the shape of t"):
        _test_targets("real@x", 0)


def test_reproduce_gives_the_tests_targets():
    """F3: the 'run on your computer' command of a layer loaded with targets='real@3,3' adds --targets real@3,3 (the
    command refuses such a network without it)."""
    import types

    from gradcheck.grading.diagnosis import reproduce

    net = types.SimpleNamespace(file="network.py", loaded_name="Network", init_kwargs={"sizes": [4, 3, 3]},
                                targets_option="real@3,3")
    said = reproduce(net, (4, 3))
    assert "--input-shape 4,3 --targets real@3,3`" in said, said
    del net.targets_option
    assert "--targets" not in reproduce(net, (4, 3))


@pytest.mark.parametrize("loss", [(), ("--loss", "--pred", "unit", "--targets", "unit")])
def test_network2_cost_class_is_named(tmp_path, loss):
    """F8: network2.py's cost class (static fn, delta) was 'its public methods are none'; now the command that checks
    it, inside its network."""
    f = student(tmp_path, (HERE / "costs.py").read_text(), "network2.py")
    p = run_here("check", f"{f}::CrossEntropyCost", "--input-shape", "3,1", *loss)
    text = both(p)
    assert p.returncode == 2 and "its public methods are none" not in text, text
    assert "CrossEntropyCost has fn(a, y) and delta(z, a, y), network2.py's cost (Nielsen)" in text, text
    assert "gradcheck check network2.py::Network --input-shape N_IN,M --targets unit@N_OUT,M" in text, text


def test_static_methods_are_listed(tmp_path):
    """F8: a class's static methods are its public methods too."""
    f = student(tmp_path, (HERE / "costs.py").read_text(), "helpers.py")
    p = run_here("check", f"{f}::Helpers", "--input-shape", "3,1")
    text = both(p)
    assert p.returncode == 2 and "its public methods are squash(x)," in text, text
