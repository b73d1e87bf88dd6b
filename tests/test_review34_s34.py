"""Findings of session 34's reviewer (review34) on session 33's diff, fixed by fixv34."""

import warnings

import numpy as np
import pytest

from gradcheck import check_layer


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


def test_differences_zero_by_the_outputs_rounding_do_not_prove_a_zero_gradient():
    """UNREACHED_WRONG_PASS (HIGH): ``Y = 1e20 X + X @ W`` with ``dW = 0`` (true ``X.T @ dY``, of order 1) PASSed
    as "dW is exactly 0 ... compared exactly": half an entry's move of W is below the rounding of |Y| ~ 1e20, so
    the differences at the step 0.5 are 0 too. Such a dW is NOT CHECKED, never a PASS."""
    X = np.random.default_rng(1).standard_normal((4, 3))
    r = _check(_Offset(1e20, 1.0), X)
    assert not r.passed
    assert [c.unchecked for c in _dW(r)] == ["atol"], _dW(r)
    assert not any("dW is exactly 0" in n for n in r.notes), r.notes
    assert np.abs(X.T @ r._upstream).max() > 0.1  # the true dW, of order 1, that PASSed as 0


def test_a_gradient_below_the_check_step_but_seen_at_half_an_entry_is_not_exactly_0():
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


def test_a_weight_forward_does_not_read_is_still_compared_as_exact_zeros():
    """tester33 F3 kept: W not read at all (|Y| ~ 1, default atol above the floor) is compared as exact zeros."""
    X = np.random.default_rng(1).standard_normal((40, 3))
    r = _check(_Offset(1.0, 0.0), X)
    assert r.passed
    assert [c.unchecked for c in _dW(r)] == [""], _dW(r)
    assert any("default: the round-off" in n for n in r.notes), r.notes  # the atol above the floor: the case
    note = next(n for n in r.notes if n.startswith("dW is exactly 0"))
    assert "could hide only below" in note, note


NML_CE_COPY = '''
import numpy as np


def _is_binary(x):
    if not np.array_equal(x, x.astype(bool)):
        raise ValueError("Matrix must be binary")


def _is_stochastic(X):
    if not np.allclose(np.sum(X, axis=-1), np.ones(X.shape[0])):
        raise ValueError("Array should be stochastic")


class CrossEntropy:
    @staticmethod
    def loss(y, y_pred):
        _is_binary(y)
        _is_stochastic(y_pred)
        return -np.sum(y * np.log(y_pred + np.finfo(float).eps))

    @staticmethod
    def grad(y, y_pred):
        _is_binary(y)
        _is_stochastic(y_pred)
        return y_pred - y
'''


def test_a_copy_of_numpy_mls_cross_entropy_with_its_input_checks_is_probed_on_the_targets_asked_for(tmp_path):
    """NML_CE_COPY_PROBE_NOT_BINARY (MEDIUM): numpy-ml's CrossEntropy copied into a student's file, with its checks
    (y binary, y_pred stochastic), raised on the reading probe's soft targets: both readings "relative error 1",
    checked as dL/dy_pred, exit 3 with ``--targets onehot``. The probe draws the targets as --targets asks."""
    from test_cli import both, run_here, student

    f = student(tmp_path, NML_CE_COPY)
    p = run_here("check", f"{f}::CrossEntropy", "--loss", "--input-shape", "4,3", "--targets", "onehot")
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert "dL/dz = grad(y, y_pred) with y_pred = softmax(z)" in text, text
    assert "PASS: CrossEntropy: dL/dy_pred matches" in text and "neither reading" not in text, text


def test_a_reading_that_raises_on_the_probe_is_named_as_raising_not_as_relative_error_1():
    from gradcheck import _adapters

    ns = {}
    exec(compile(NML_CE_COPY, "nml_ce_copy.py", "exec"), ns)  # noqa: S102 - the test's own text
    obj, first = ns["CrossEntropy"](), {"loss": False, "grad": False}
    soft, words = _adapters._two_arg_reading(obj, "loss", "grad", first)  # no probe: soft targets (4, 3)
    assert "as dL/dy_pred, raised ValueError: Matrix must be binary" in words, words
    assert "as dL/dz with y_pred = softmax(z) (numpy-ml's CrossEntropy), raised ValueError: Matrix must be binary" \
        in words and "relative error" not in words, words
    onehot = np.eye(3)[np.random.default_rng(0).integers(0, 3, 5)]
    assert _adapters._two_arg_reading(obj, "loss", "grad", first, (onehot, np.zeros((5, 3)))) == (True, "")
    probs = np.full((5, 3), 1 / 3)  # rows summing to 1, not binary: raises again, named
    assert "raised ValueError" in _adapters._two_arg_reading(obj, "loss", "grad", first, (probs, probs))[1]
