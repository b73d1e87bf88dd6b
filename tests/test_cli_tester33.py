"""Findings of session 33's tester (fixer fixc33) on the deeplearning.ai "Step by Step" assignments: Andrew Ng's
1/m belongs to the parameters' gradients only, a 1/m in dA_prev is a bug and the suggested wrapper must not hide
it (F1, F5), the mixed-1/m hint shows the named gradient's formula (F6)."""

import warnings

import numpy as np
from test_cli import both, run_here, student

from gradcheck import check_layer

NG = """
import numpy as np

def linear_forward(A, W, b):
    Z = np.dot(W, A) + b
    return Z, (A, W, b)

def linear_backward(dZ, cache):
    A_prev, W, b = cache
    m = A_prev.shape[1]
    dW = (1/m) * np.dot(dZ, A_prev.T)
    db = (1/m) * np.sum(dZ, axis=1, keepdims=True)
    dA_prev = (1/m) * np.dot(W.T, dZ)          # BUG: Ng's dA_prev has no 1/m
    return dA_prev, dW, db

linear_m_forward = linear_forward
def linear_m_backward(dout, cache):             # the wrapper gradcheck suggests now: the parameters' 1/m undone
    dA, dW, db = linear_backward(dout, cache); m = dout.shape[1]
    return dA, m * dW, m * db

ngdw_forward = linear_forward
def ngdw_backward(dZ, cache):
    A_prev, W, b = cache
    m = A_prev.shape[1]
    return np.dot(W.T, dZ), np.dot(dZ, A_prev.T), np.sum(dZ, axis=1, keepdims=True) / m   # dW misses 1/m

class DenseColsDXM:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((2, 3)); self.b = np.zeros((2, 1))
    def forward(self, X):
        self.X = X; return self.W @ X + self.b
    def backward(self, dZ):
        m = self.X.shape[1]
        self.dW = dZ @ self.X.T / m; self.db = dZ.sum(axis=1, keepdims=True) / m
        return self.W.T @ dZ / m                 # BUG: 1/m in dX
"""
SHAPES = ["--input-shape", "3,4;2,3;2,1"]


def test_one_over_m_in_dA_prev_is_a_bug_and_the_wrapper_leaves_dA(tmp_path):
    """F1: dA_prev = (1/m) W.T dZ was "dA and dW and db are 4 times too small ... a convention mismatch" with a
    wrapper `return m * dA, m * dW, m * db` that then PASSed the bug."""
    f = student(tmp_path, NG)
    p = run_here("check", f"{f}::linear", *SHAPES)
    text = both(p)
    assert p.returncode == 1, text
    assert "dA is 4 times too small: an extra 1/m" in text and "a bug in any convention" in text, text
    assert "dA and dW and db are" not in text and "m * dA" not in text, text
    assert "return dA, m * dW, m * db" in text, text  # the parameters' 1/m is still Ng's convention, undone


def test_the_suggested_wrapper_still_fails_the_dA_bug(tmp_path):
    """F1/F5: through the suggested wrapper (m * dW, m * db) the bug FAILs, and the fix said is to remove 1/m from
    dA, not "divide dW and db by m as well"."""
    f = student(tmp_path, NG)
    p = run_here("check", f"{f}::linear_m", *SHAPES)
    text = both(p)
    assert p.returncode == 1, text
    assert "remove the 1/m from dA" in text and "by m as well" not in text, text


def test_class_with_one_over_m_in_dX_is_a_bug(tmp_path):
    """F1 for a class: the 1/m in the input's gradient is named a bug, only dW and db are convention."""
    f = student(tmp_path, NG)
    p = run_here("check", f"{f}::DenseColsDXM", "--input-shape", "3,4")
    text = both(p)
    assert p.returncode == 1, text
    assert "dX is 4 times too small: an extra 1/m" in text and "self.W.T @ dY, no / m" in text, text
    assert "multiply dX" not in text and "dX and dW" not in text, text


def test_mixed_one_over_m_hint_shows_the_named_gradients_formula(tmp_path):
    """F6: "divide dW by m as well (db = np.sum(dZ, axis=1, keepdims=True) / m)" showed db's formula."""
    f = student(tmp_path, NG)
    p = run_here("check", f"{f}::ngdw", *SHAPES)
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "divide dW by m as well (dW = np.dot(dZ, A_prev.T) / m)" in text, text
    assert "db = np.sum(dZ, axis=1, keepdims=True) / m)" not in text, text


POOL = """
import numpy as np

def pool_forward(A_prev, hparameters, mode="max"):
    f = hparameters["f"]
    m, H, W, C = A_prev.shape
    win = A_prev.reshape(m, H // f, f, W // f, f, C)
    A = win.max(axis=(2, 4)) if mode == "max" else win.mean(axis=(2, 4))
    return A, (A_prev, hparameters)

def pool_backward(dA, cache, mode="max"):
    A_prev, hparameters = cache
    f = hparameters["f"]
    m, H, W, C = A_prev.shape
    win = A_prev.reshape(m, H // f, f, W // f, f, C)
    if mode == "max":
        mask = win == win.max(axis=(2, 4), keepdims=True)
        return (mask * dA[:, :, None, :, None, :]).reshape(A_prev.shape)
    elif mode == "average":
        share = SHARE
        return np.broadcast_to(dA[:, :, None, :, None, :] * share, win.shape).reshape(A_prev.shape).copy()
"""
POOL_ARGS = ["--input-shape", "2,4,4,3", "--init", '{"hparameters": {"f": 2, "stride": 2}}']


def test_pair_string_keyword_is_checked_at_each_value(tmp_path):
    """F2: pool_forward(A_prev, hparameters, mode="max") was checked at its default alone; a broken
    mode="average" backward PASSed with no word. Each value its source compares mode with is checked."""
    f = student(tmp_path, POOL.replace("SHARE", "1.0"))  # BUG: average's gradient is dA / (f * f)
    p = run_here("check", f"{f}::pool", *POOL_ARGS)
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "each value of mode checked: mode='max' PASS, mode='average' FAIL" in text, text
    assert "dA_prev is 4 times the correct gradient" in text, text
    # F4: the header says one mode; no footer asks for --training (a usage error for a function pair)
    assert "mode: forward has no training switch: one mode" in text and "--training" not in text, text


def test_pair_string_keyword_correct_at_each_value_passes(tmp_path):
    """F2: the correct pair PASSes at both values, and says so; a value given in --init is checked alone."""
    f = student(tmp_path, POOL.replace("SHARE", "1.0 / (f * f)"))
    p = run_here("check", f"{f}::pool", *POOL_ARGS)
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert "each value of mode checked: mode='max' PASS, mode='average' PASS" in text, text
    p = run_here("check", f"{f}::pool", "--input-shape", "2,4,4,3", "--init",
                 '{"hparameters": {"f": 2, "stride": 2}, "mode": "average"}')
    text = " ".join(both(p).split())
    assert p.returncode == 0 and "each value of mode" not in text, text


CELL = """
import numpy as np

def cell_forward(x, parameters):
    a = np.tanh(parameters["Wax"] @ x)
    y_pred = parameters["Wya"] @ a + parameters["by"]
    return a, y_pred, (x, a, parameters)

def cell_backward(da, cache):
    x, a, parameters = cache
    dz = da * (1 - a ** 2)
    return {"dx": parameters["Wax"].T @ dz, "dWax": dz @ x.T}
"""


def _cell_init():
    import json

    import numpy as np
    rng = np.random.default_rng(0)
    return json.dumps({"parameters": {"Wax": rng.standard_normal((5, 3)).round(4).tolist(),
                                      "Wya": rng.standard_normal((2, 5)).round(4).tolist(),
                                      "by": rng.standard_normal((2, 1)).round(4).tolist()}})


def test_weights_the_checked_output_does_not_read_are_compared_as_zero(tmp_path):
    """F3: rnn_forward's Wya and by (read only by y_pred, which backward takes no gradient for) were NOT CHECKED
    with "the output is too large for the step to move it measurably" where rnn_cell's PASSed as zeros: the
    checked output does not depend on them at all, their gradient is exactly 0 and backward's (no key) is 0."""
    f = student(tmp_path, CELL)
    p = run_here("check", f"{f}::cell", "--input-shape", "3,60", "--init", _cell_init())
    text = " ".join(both(p).split())
    assert "default: the round-off" in text, text  # the atol is above the floor here: the case of F3
    assert p.returncode == 0, text
    assert "too large for the step" not in text and "NOT CHECKED" not in text, text
    assert "dWya is exactly 0: the checked output does not move at all" in text, text


RELU = """
import numpy as np

def relu_forward(Z):
    return np.maximum(0, Z), Z

def relu_backward(dA, cache):
    Z = cache
    dZ = np.array(dA, copy=True)
    dZ[Z <= THRESHOLD] = 0
    return dZ
"""


def test_relu_threshold_off_is_caught_where_no_entry_lies_near_the_kink(tmp_path):
    """F10: dZ[Z <= 0.5] = 0 PASSed at (3, 4), seed 0: no drawn entry lay in (0, 0.5]. A constant forward compares
    with that has one side unprobed within 0.5 is checked around, as constants beyond the range are."""
    f = student(tmp_path, RELU.replace("THRESHOLD", "0.5"))
    p = run_here("check", f"{f}::relu", "--input-shape", "3,4", "--mode", "full")
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "forward compares Z with 0, where the drawn inputs have no entry within 0.5 on one side" in text, text
    g = student(tmp_path, RELU.replace("THRESHOLD", "0"))  # the correct ReLU still PASSes there
    p = run_here("check", f"{g}::relu", "--input-shape", "3,4", "--mode", "full")
    assert p.returncode == 0, both(p)


def test_not_stacked_note_is_said_once(tmp_path):
    """F7: '... one input entry at a time (1 entries), not stacked as one batch: the inputs have different sizes
    along axis 0' was printed once per scan (4 times for Ng's linear_backward)."""
    f = student(tmp_path, NG)
    text = " ".join(both(run_here("check", f"{f}::linear", *SHAPES)).split())
    assert text.count("not stacked as one batch") == 1, text


def test_wrong_axis_hint_shows_the_axis_to_sum_over():
    """F12: rnn_cell_backward's batch-last dba = np.sum(dtanh, axis=0, keepdims=True) was told "over axis=1, not
    axis=0 (...: np.sum(dvalues, axis=0, keepdims=True))", the example contradicting the advice."""
    import numpy as np
    import pytest

    from gradcheck._validation import check_output

    with pytest.raises(Exception) as exc:
        check_output(np.zeros((1, 4)), owner="rnn_cell", tensor="dba", produced_by="rnn_cell_backward",
                     expected_shape=(5, 1))
    text = " ".join(str(exc.value).split())
    assert "over axis=1, not axis=0" in text, text
    assert "np.sum(dY, axis=1, keepdims=True)" in text and "axis=0, keepdims=True))" not in text, text


PAD = """
import numpy as np

def padded_forward(x, hparameters):
    pad = hparameters["pad"]
    return np.pad(x, ((0, 0), (pad, pad))) * 2.0, (x, hparameters)

def padded_backward(dout, cache):
    x, hparameters = cache
    pad = hparameters["pad"]
    dx = np.zeros_like(x)
    dx[:, :] = 2.0 * dout[:, pad:-pad]          # empty at pad = 0: -0 is 0
    return dx
"""


def test_pad_zero_empty_slice_cause_is_named(tmp_path):
    """F11: conv_backward's da_prev_pad[pad:-pad] at pad=0 failed with 'could not broadcast ... shape (0,0,3)' and
    no word of x[0:-0] being empty."""
    f = student(tmp_path, PAD)
    p = run_here("check", f"{f}::padded", "--input-shape", "3,4", "--init", '{"hparameters": {"pad": 0}}')
    text = " ".join(both(p).split())
    assert p.returncode == 3, text
    assert "pad is 0 in --init, and x[pad:-pad] is then x[0:-0], an empty slice" in text, text


# ---- review34 UNREACHED_WRONG_PASS: the rule of F3 on an output too large for the step 0.5


class _Offset:
    """``Y = c X + k X @ W`` whose backward says ``dW = 0`` (true: ``k X.T @ dY``)."""

    def __init__(self, c, k):
        self.params = {"W": np.random.default_rng(0).standard_normal((3, 3))}
        self.grads, self.c, self.k = {}, c, k

    def forward(self, X, training=False):
        return self.c * X + self.k * (X @ self.params["W"])

    def backward(self, dY):
        self.grads["W"] = np.zeros_like(self.params["W"])  # wrong: k X.T @ dY
        return self.c * dY + self.k * dY @ self.params["W"].T


def _check(layer, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return check_layer(layer, X, twin=None)


def _dW(r):
    return next(rec for rec in r.records if rec.tensor == "dW").comparisons


def test_differences_zero_by_the_outputs_rounding_are_not_compared_as_zero():
    """UNREACHED_WRONG_PASS (HIGH): ``Y = 1e20 X + X @ W`` with ``dW = 0`` (true ``X.T @ dY``, of order 1) PASSed
    as "dW is exactly 0 ... compared exactly": half an entry's move of W is below the rounding of |Y| ~ 1e20, so
    the differences at the step 0.5 are 0 too. Such a dW is NOT CHECKED, never a PASS."""
    X = np.random.default_rng(1).standard_normal((4, 3))
    r = _check(_Offset(1e20, 1.0), X)
    assert not r.passed
    assert [c.unchecked for c in _dW(r)] == ["atol"], _dW(r)
    assert not any("dW is exactly 0" in n for n in r.notes), r.notes
    assert np.abs(X.T @ r._upstream).max() > 0.1  # the true dW, of order 1, that PASSed as 0


def test_a_gradient_below_the_check_step_seen_at_half_an_entry_is_not_compared_as_zero():
    """The step-0.5 differences are what tells "exactly 0" from "too small for the check's step" (review34 mutant
    ck_unreached_no_fd): ``Y = X + 1e-15 X @ W`` (|Y| ~ 1: the default atol 2.4e-9 is above the floor, the round-off
    at the step 0.5 below it); the differences at the default step are all 0, the true dW (~1e-15) moves Y at the
    step 0.5, so dW is NOT CHECKED (not "exactly 0")."""
    X = np.random.default_rng(1).standard_normal((40, 3))
    r = _check(_Offset(1.0, 1e-15), X)
    assert np.all(r.gradients["numerical"]["dW"] == 0)  # the case: zeros at the check's step
    assert np.abs(1e-15 * X.T @ r._upstream).min() > 0  # but the true dW is not 0
    assert not any("dW is exactly 0" in n for n in r.notes), r.notes
    assert [c.unchecked for c in _dW(r)] == ["atol"], _dW(r)
    assert not r.passed


def test_a_weight_forward_does_not_read_is_still_compared_as_zero_in_process():
    """tester33 F3 kept: W not read at all (|Y| ~ 1, default atol above the floor) is compared as exact zeros."""
    X = np.random.default_rng(1).standard_normal((40, 3))
    r = _check(_Offset(1.0, 0.0), X)
    assert r.passed
    assert [c.unchecked for c in _dW(r)] == [""], _dW(r)
    assert any("default: the round-off" in n for n in r.notes), r.notes  # the atol above the floor: the case
    note = next(n for n in r.notes if n.startswith("dW is exactly 0"))
    assert "could hide only below" in note, note


def test_a_given_atol_is_not_replaced_by_the_compared_as_zero_rule():
    """The rule applies to the default atol alone: a given atol above every |dW| (here all 0) is NOT CHECKED as
    "given-atol" (newuser30 F11), whatever the differences at the step 0.5 say."""
    X = np.random.default_rng(1).standard_normal((40, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = check_layer(_Offset(1.0, 0.0), X, twin=None, atol=1e-3)
    assert [c.unchecked for c in _dW(r)] == ["given-atol"], _dW(r)
    assert not any("dW is exactly 0" in n for n in r.notes), r.notes
