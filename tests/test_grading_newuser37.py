"""newuser37's grader findings (session 37): F3 a plain ``assert`` of a grading test on the student's output made the
whole submission a grader error (0, every other row "Not counted", exit 1, regraded every run), and
``pytest.fail(msg)``'s row said "The check stopped with Failed: ..."; F2, F2b a CS231n-style class (forward returning
``(Y, cache)``) lost points check gave it; F1 a correct dropout's training gradient was compared with the reference's
own mask (0/3); F4 a backward that never ends cost the forward tests too.
"""

import inspect
import json
from pathlib import Path

import pytest

from gradcheck.grading import plugin
from gradcheck.grading.checks import GradingFailure
from tests.buggy_layers import switches
from tests.test_cli import run_here
from tests.test_grading_keys_s35 import shown

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"

#: staff tests of a TA's own: a plain assert on the student's forward (the docs' test_backprop pattern), the same
#: check with pytest.fail, and a graded check; the student's Linear adds b twice (each of the three fails)
_ASSERTS = '''import numpy as np
import pytest
from manualprop import Linear as RefLinear

@pytest.mark.points(1)
def test_assert(student, grade, rng):
    """Linear: forward output by assert"""
    layer = student.layer("layers.py", "Linear", in_features=5, out_features=3)
    X = np.ones((4, 5))
    Y = layer.forward(X)
    assert np.allclose(Y, X @ layer.params["W"].T + layer.params["b"]), "forward is not X @ W.T + b"

@pytest.mark.points(1)
def test_fail(student, grade, rng):
    """Linear: forward output by pytest.fail"""
    layer = student.layer("layers.py", "Linear", in_features=5, out_features=3)
    X = np.ones((4, 5))
    if not np.allclose(layer.forward(X), X @ layer.params["W"].T + layer.params["b"]):
        pytest.fail("forward is not X @ W.T + b")

@pytest.mark.points(2)
def test_graded(student, grade, rng):
    """Linear: forward output graded"""
    layer = student.layer("layers.py", "Linear", in_features=5, out_features=3)
    grade.layer_forward(layer, rng.standard_normal((8, 5)), RefLinear(5, 3), points=2)
'''


def test_a_failed_assert_or_pytest_fail_is_the_students_failure_of_that_test_alone(tmp_path):
    """F3: the assert's row was a grader error (status "grader error", score 0, the other rows "Not counted", exit
    1); pytest.fail's row read "The check stopped with Failed: ...". Now each fails its own row with no points and its
    message (the assert's with pytest's rewritten comparison and the failing line), the other rows are graded, the
    batch is graded (exit 0)."""
    src = (ASSIGN / "solution" / "layers.py").read_text()
    bug = src.replace("return X @ self.params[\"W\"].T + self.params[\"b\"]",
                      "return X @ self.params[\"W\"].T + 2 * self.params[\"b\"]", 1)
    assert bug != src
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(bug)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_staff.py").write_text(_ASSERTS)
    r = run_here("grade", tmp_path / "sub", "--single", "--tests", tmp_path / "tests", "--out", tmp_path / "out",
                 "--seed", "1", "--no-progress")
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert r.returncode == 0 and "grader_error" not in data["extra_data"], (r.stdout, r.stderr, data["extra_data"])
    assert data["extra_data"]["status"] == "graded"
    rows = {t["name"]: t for t in data["tests"]}
    by_assert, by_fail = rows["Linear: forward output by assert"], rows["Linear: forward output by pytest.fail"]
    assert (by_assert["score"], by_assert["status"], by_fail["score"], by_fail["status"]) == (0, "failed", 0, "failed")
    assert shown(by_assert["output"]).startswith("AssertionError: forward is not X @ W.T + b\n\n`assert False`"), \
        by_assert
    assert shown(by_assert["output"]).endswith("at test_staff.py, line 11, in test_assert: `assert np.allclose(Y, X @ "
                                               "layer.params[\"W\"].T + layer.params[\"b\"]), \"forward is not X @ W.T + "
                                               "b\"`"), by_assert["output"]
    assert shown(by_fail["output"]) == "Failed: forward is not X @ W.T + b"
    graded = rows["Linear: forward output graded"]
    assert graded["score"] == 0 and graded["max_score"] == 2 and "Not counted" not in graded["output"]
    assert data["score"] == 0 and len(data["tests"]) == 3


class _Item:
    """What :func:`plugin._test_failed` reads of a pytest item: its path (the tests' folder)."""

    def __init__(self, path):
        self.path, self.nodeid = path, "test_x.py::test_a"


def _raised_in(filename: str) -> AssertionError:
    """An AssertionError raised by code whose frame is of ``filename``."""
    try:
        exec(compile("assert 1 == 2, 'where'", filename, "exec"), {})
    except AssertionError as exc:
        return exc
    raise RuntimeError("not raised")


@pytest.mark.parametrize("where", ["tests", "gradcheck"])
def test_an_assert_is_the_tests_verdict_only_where_the_tests_own_frame_raised_it(tmp_path, where):
    """F3's care: an AssertionError raised in gradcheck's own frames (an assert of the grader's code: its bug) is not
    the student's failure (None here: the plugin's internal-error path takes it); one raised in a frame of the tests'
    folder is (a GradingFailure, fraction 0)."""
    folder = tmp_path / "tests"
    folder.mkdir()
    filename = str(folder / "test_x.py") if where == "tests" else str(Path(plugin.__file__).with_name("checks.py"))
    call = type("C", (), {"excinfo": type("E", (), {"value": _raised_in(filename)})})
    got = plugin._test_failed(_Item(folder / "test_x.py"), call)
    if where == "tests":
        assert isinstance(got, GradingFailure) and got.fraction == 0 and str(got).startswith("AssertionError: where")
    else:
        assert got is None


#: a correct Linear written CS231n-style as a class: forward returns (out, cache), backward takes (dout, cache); the
#: cache as the input itself beside a params dict (F2), and as a tuple (x,) beside attributes self.W, self.dW (F2b)
_CS231N = {"params_cache_x": '''import numpy as np

class Linear:
    def __init__(self, in_features, out_features):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((out_features, in_features)) * 0.1, "b": np.zeros(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        return X @ self.params["W"].T + self.params["b"], X

    def backward(self, dY, cache):
        self.grads["W"], self.grads["b"] = dY.T @ cache, dY.sum(axis=0)
        return dY @ self.params["W"]
''', "attributes_tuple_cache": '''import numpy as np

class Linear:
    def __init__(self, in_features, out_features):
        self.W = np.random.randn(out_features, in_features) * 0.01
        self.b = np.zeros(out_features)

    def forward(self, x):
        return x.dot(self.W.T) + self.b, (x,)

    def backward(self, dout, cache):
        x, = cache
        self.dW, self.db = dout.T.dot(x), dout.sum(axis=0)
        return dout.dot(self.W)
'''}

_CS231N_TESTS = '''import pytest
from manualprop import Linear as RefLinear

pytestmark = [pytest.mark.gradcheck_no_forward_in_backward]

@pytest.mark.points(2)
def test_forward(student, grade, rng):
    """Linear: forward output"""
    grade.layer_forward(student.layer("layers.py", "Linear", in_features=5, out_features=3), rng.standard_normal((8, 5)),
                        RefLinear(5, 3), points=2)

@pytest.mark.points(6)
def test_gradients(student, grade, rng):
    """Linear: gradients"""
    grade.layer_gradients(student.layer("layers.py", "Linear", in_features=5, out_features=3),
                          rng.standard_normal((8, 5)), RefLinear(5, 3), parts={"dX": 2, "dW": 2, "db": 2}, seed=1)
'''


def test_a_cs231n_style_class_is_graded_as_check_reads_it(tmp_path):
    """F2: a params-dict class whose forward returns (Y, cache) scored 14/28 on the built-in assignment ("gave Y as a
    tuple": graded as loaded, without the probe that reads the cache); F2b: an attribute-style one returning a tuple
    cache (x,) under the no-forward-in-backward policy scored 0/6 ("Linear.forward called Linear.forward again 1
    time(s)": the adapter's call of the student's forward counted as a second one), where check PASSes both. Now
    each scores 8/8 in one batch."""
    from gradcheck.grading.runner import grade_batch

    for name, src in _CS231N.items():
        (tmp_path / "subs" / name).mkdir(parents=True)
        (tmp_path / "subs" / name / "layers.py").write_text(src)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_lin.py").write_text(_CS231N_TESTS)
    grade_batch(tmp_path / "subs", tmp_path / "tests", tmp_path / "out", workers=1, seed=0, progress=False, plot=False)
    for name in _CS231N:
        data = json.loads((tmp_path / "out" / name / "results.json").read_text())
        rows = [(t["name"], t["score"], t["output"]) for t in data["tests"]]
        assert data["extra_data"]["status"] == "graded" and data["score"] == 8, (name, rows)
        assert rows[0][1:] == (2, "All checked: `Y` ok.") and rows[1][1:] == (6, "All checked: `dX`, `dW`, `db` ok."), rows


#: inverted dropout (the planted-bug table's Drop, its mode the ``train`` argument), as a submission's Dropout; its
#: generator kept on the layer (check holds it)
_DROPOUT = "import numpy as np\n\n\n" + inspect.getsource(switches.Drop).replace("class Drop:", "class Dropout:")
_DROPOUT_TESTS = '''import pytest
import manualprop as mp

@pytest.mark.points(3)
def test_dropout_train_gradient(student, grade, rng):
    """Dropout: training-mode gradient dX (p = 0.5)"""
    grade.layer_gradients(student.layer("layers.py", "Dropout", p=0.5), rng.standard_normal((6, 5)), mp.Dropout(0.5),
                          training=True, seed=7, points=3)
'''


def test_a_random_forward_is_graded_as_check_grades_it_not_against_the_references_mask(tmp_path):
    """F1: ``grade.layer_gradients(student Dropout, X, manualprop.Dropout(0.5), training=True)`` compared the student's
    dX with the reference's, made with the reference's own mask: a correct inverted dropout scored 0/3 ("dX differs
    ... expected 0"), where ``gradcheck check --training --reference manualprop.Dropout`` exits 0 ("reference: not
    compared: the forward is random"). Now, as check: the reference is not compared (said), dX is judged by central
    differences of the student's forward with its draws held: the correct one 3/3, a backward without the scale 0/3
    by central differences."""
    from gradcheck.grading.runner import grade_batch

    wrong = _DROPOUT.replace("dY * self.mask\n", "dY * (self.mask != 0)\n")
    assert wrong != _DROPOUT
    for name, src in (("correct", _DROPOUT), ("no_scale", wrong)):
        (tmp_path / "subs" / name).mkdir(parents=True)
        (tmp_path / "subs" / name / "layers.py").write_text(src)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_d.py").write_text(_DROPOUT_TESTS)
    grade_batch(tmp_path / "subs", tmp_path / "tests", tmp_path / "out", workers=1, seed=0, progress=False, plot=False)
    said = "reference: not compared: the forward is random in this mode"
    rows = {n: json.loads((tmp_path / "out" / n / "results.json").read_text())["tests"][0] for n in ("correct", "no_scale")}
    assert rows["correct"]["score"] == 3 and rows["correct"]["output"].startswith("All checked: `dX` ok."), rows
    assert said in rows["correct"]["output"]
    assert rows["no_scale"]["score"] == 0 and "dX disagrees with central differences" in rows["no_scale"]["output"]
    assert said in rows["no_scale"]["output"]


def test_a_random_forward_graded_without_central_differences_is_the_tests_mistake():
    """F1's care: with ``numerical=False`` nothing can grade a random forward's gradients (the reference's mask is its
    own): a GradingTestError naming why, never the student's 0; with the default, a manualprop Dropout (held by its
    ``fix_mask``) passes against another manualprop Dropout. ``grade.layer_forward(training=True)`` against a random
    reference passes when the masks agree (the same generator) and is the test's mistake when they differ (a correct
    dropout scored 0)."""
    import numpy as np

    import manualprop as mp
    from gradcheck.grading.checks import GradingTestError, layer_forward, layer_gradients

    X = np.random.default_rng(0).standard_normal((6, 5))
    assert layer_gradients(mp.Dropout(0.5, rng=1), X, mp.Dropout(0.5, rng=2), training=True, seed=7).passed
    with pytest.raises(GradingTestError, match=r"numerical=False\) on a layer whose training forward is random"):
        layer_gradients(mp.Dropout(0.5, rng=1), X, mp.Dropout(0.5, rng=2), training=True, numerical=False)
    assert layer_forward(mp.Dropout(0.5, rng=1), X, mp.Dropout(0.5, rng=1), training=True).passed  # the same mask
    with pytest.raises(GradingTestError, match=r"layer_forward\(\.\.\., training=True\) against Dropout, whose "
                                               r"training forward is random"):  # was: Y wrong, a correct layer's 0
        layer_forward(mp.Dropout(0.5, rng=1), X, mp.Dropout(0.5, rng=2), training=True)


#: an attribute-style layer (its weight found by the probe) whose backward alone never ends
_HANGS = '''import numpy as np

class Scale:
    def __init__(self, n):
        self.gamma = np.linspace(0.5, 1.5, n)

    def forward(self, X, training=False):
        self.X = X
        return X * self.gamma

    def backward(self, dY):
        i = 0
        while i < 10:
            pass
        self.dgamma = (dY * self.X).sum(axis=0)
        return dY * self.gamma
'''
_HANGS_TESTS = '''import numpy as np
import pytest

class RefScale:
    def __init__(self, n):
        self.params, self.grads = {"gamma": np.ones(n)}, {}

    def forward(self, X, training=False):
        self.X = X
        return X * self.params["gamma"]

    def backward(self, dY):
        self.grads["gamma"] = (dY * self.X).sum(axis=0)
        return dY * self.params["gamma"]

def test_forward(student, grade, rng):
    """Scale: forward"""
    grade.layer_forward(student.layer("layers.py", "Scale", n=4), rng.standard_normal((8, 4)), RefScale(4))

def test_forward_again(student, grade, rng):
    """Scale: forward again"""
    grade.layer_forward(student.layer("layers.py", "Scale", n=4), rng.standard_normal((8, 4)), RefScale(4))

def test_gradients(student, grade, rng):
    """Scale: gradients"""
    grade.layer_gradients(student.layer("layers.py", "Scale", n=4), rng.standard_normal((8, 4)), RefScale(4))
'''


def test_a_backward_that_never_ends_costs_the_gradient_tests_alone(tmp_path):
    """F4: an infinite loop in an attribute-style layer's backward zeroed its forward-only tests too ("Scale's
    parameters are none"): the probe's backward hung, and the layer was loaded again without a probe, so its
    weights were unknown. Now it is loaded again with the probe's forward and its backward not run: each forward
    test earns its point (the first, whose probe hung, and a later one), the gradient test says the backward did not
    finish."""
    from gradcheck.grading.runner import grade_batch

    (tmp_path / "subs" / "hangs").mkdir(parents=True)
    (tmp_path / "subs" / "hangs" / "layers.py").write_text(_HANGS)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_s.py").write_text(_HANGS_TESTS)
    grade_batch(tmp_path / "subs", tmp_path / "tests", tmp_path / "out", workers=1, seed=0, progress=False, plot=False,
                timeout=1.0)
    data = json.loads((tmp_path / "out" / "hangs" / "results.json").read_text())
    rows = [(t["name"], t["score"], t["output"]) for t in data["tests"]]
    assert data["extra_data"]["status"] == "graded", rows
    assert rows[0][1:] == (1, "All checked: `Y` ok.") and rows[1][1:] == (1, "All checked: `Y` ok."), rows
    assert rows[2][1] == 0 and "Scale.backward (called after a probe forward" in shown(rows[2][2]), rows
    assert "did not finish within 1 s" in rows[2][2], rows
