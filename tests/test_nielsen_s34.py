"""nielsen34's findings on Nielsen-style networks (``backprop(x, y) -> (nabla_b, nabla_w)``), fixed by fixn34.

* F1: a matrix port's ``backprop(X, Y)`` (its own ``update_mini_batch`` feeds it the whole batch) is called with the
  whole batch too: its gradients must be those of the sum of the per-sample costs (Nielsen's convention), so a mean
  or an unsummed ``nabla_b`` FAILs (it PASSed: only single columns were fed, where sum and mean agree).
* F2: ``return (nabla_w, nabla_b)`` FAILs, "returned in the wrong order" (the lists were paired by shape).
* F4: a returned array of the wrong shape is named ("nabla_w[0] has shape (3, 3), expected (3, 4)"), not "grads has
  no key".
The networks are tests/fixtures/nielsen_s34 (written for these tests), each bug a replaced line.
"""

import pathlib

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
    """F1/F4: nabla_b = delta (unsummed, shape (3, 3) on 3 columns) is named with its shape and the one expected."""
    code, text = _check(tmp_path, "vnetwork.py", ("delta.sum(axis=1, keepdims=True)", "delta"))
    assert code != 0, text
    assert ("backprop(x, y) with the whole batch x of shape (4, 3) (one sample per column): nabla_b[0] has shape "
            "(3, 3), expected (3, 1) (the shape of biases[0])") in text, text


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
