"""Session 44's fixes of verify43c's and redteam43's findings about the checker and the grader (fixes44)."""

from __future__ import annotations

import numpy as np
import pytest
from test_grading_redteam43 import BatchNorm as RedteamBatchNorm

from gradcheck.diagnose import kept_scale, own_eval_mean_finding


class _DropoutF32:
    """Dropout in float32 code (Deep Learning from Scratch 2's style): ``inverse`` True scales the kept entries by
    1/p where p is the drop probability (bugs43 H2), else by 1/(1 - p) (inverted dropout, right)."""

    def __init__(self, p=0.3, bug=False, dtype=np.float32):
        self.p, self.bug, self.dtype = p, bug, dtype
        self.rng, self.params, self.grads, self.mask = np.random.default_rng(0), {}, {}, None

    def forward(self, X, training=False):
        X = np.asarray(X, dtype=self.dtype)
        if not training:
            self.mask = None
            return X
        keep = self.rng.random(X.shape) >= self.p
        self.mask = (keep / (self.p if self.bug else 1 - self.p)).astype(self.dtype)
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else (dY * self.mask).astype(self.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_kept_scale_of_a_low_precision_mask_is_one_scale(dtype):
    """verify43c F8: a float32 (float16) mask over the check's float64 X is one scale within its own rounding."""
    X = np.random.default_rng(1).uniform(0.5, 1.5, (50, 8))
    Y = _DropoutF32(0.3, dtype=dtype).forward(X, training=True).astype(np.float64)
    share, scale = kept_scale(Y, X)
    assert scale == pytest.approx(1 / 0.7, rel=1e-2) and 0.5 < share < 0.9
    assert kept_scale(X.astype(dtype).astype(np.float64), X) == (1.0, pytest.approx(1.0, rel=1e-2))
    noisy = X * (1 + 1e-4 * np.random.default_rng(2).standard_normal(X.shape))  # float64 ratios that vary: no scale
    assert kept_scale(noisy, X)[1] is None


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_own_mean_fails_a_low_precision_one_over_p_dropout(dtype):
    """verify43c F8: the 1/p dropout in float32 code is FAILed by its own eval mean, as its float64 twin is; the
    inverted one (right) is not."""
    found = own_eval_mean_finding([(_DropoutF32(0.3, bug=True, dtype=dtype), "")], "Drop", (4, 6), 0)
    assert found is not None and found.code == "own-mean"
    assert own_eval_mean_finding([(_DropoutF32(0.3, dtype=dtype), "")], "Drop", (4, 6), 0) is None


def _zoo(label):
    import manualprop
    from gradcheck.zoo import entries_for

    entry = next(e for e in entries_for(label.split("[")[0]) if e.label == label)
    return entry.make(manualprop, np.random.default_rng(0)), entry.input_shape


@pytest.mark.parametrize("label,offset", [("MultiHeadAttention[causal]", -3000.0)])
def test_right_attention_far_from_zero_is_not_checked_not_failed(label, offset):
    """verify43c F4: a right attention at X +/- 3000, whose central differences are the step's error at h and
    round-off's below it, FAILed dW_q, dW_k (db_k, dX); now no verdict (independent differences at small absolute
    steps agree with its backward: /work/wt/notes/verify43c-cases/fd_mha.py)."""
    from gradcheck import check_layer

    layer, shape = _zoo(label)
    X = np.random.default_rng(1).standard_normal(shape) + offset
    res = check_layer(layer, X, twin=None, seed=0, mode="full")
    assert res.failing_tensors == [] and res.unchecked, (res.failing_tensors, res.unchecked)
    assert any(c.unchecked == "converge" for r in res.records for c in r.comparisons)


def test_right_transformer_block_at_plus_3000_passes():
    """steps46: its dW_q was its own round-off (-5.2e-10 where the true one is -1.6e-13: the textbook softmax VJP
    cancels on saturated rows) and gradcheck rightly FAILed it; with the shifted VJP (softmax46) it PASSes, and its
    dW_q is the 60-digit decimal one (/work/wt/notes/steps46-truth3.py)."""
    from gradcheck import check_layer

    layer, shape = _zoo("TransformerBlock[postLN-causal]")
    X = np.random.default_rng(1).standard_normal(shape) + 3000.0
    res = check_layer(layer, X, twin=None, seed=0, mode="full")
    assert res.passed and res.failing_tensors == [] and not res.unchecked, (res.failing_tensors, res.unchecked)


def test_a_backward_off_by_1e_4_still_fails_at_minus_3000():
    from gradcheck import check_layer

    layer, shape = _zoo("MultiHeadAttention[causal]")
    right = layer.backward
    layer.backward = lambda dY: right(dY) * (1 + 1e-4)
    X = np.random.default_rng(1).standard_normal(shape) - 3000.0
    res = check_layer(layer, X, twin=None, seed=0, mode="full")
    assert not res.passed and "dX" in res.failing_tensors


def test_not_checked_sentence_names_the_input_scale():
    """The verdict says why and what to do (a smaller input), not FAIL 'forward rounds its output to a grid'."""
    from gradcheck.diagnose import diagnose_layer

    layer, shape = _zoo("MultiHeadAttention[causal]")
    X = np.random.default_rng(1).standard_normal(shape) - 3000.0
    said = diagnose_layer(layer, X, twin=None).sentence()
    assert said.startswith("NOT CHECKED") and "do not converge at this input scale" in said
    assert "smaller input" in said


class _NormWrongAxis:
    """A normalisation over ``axis`` whose backward divides its sums by the size of the other axis (verify43c F11's
    featfirst.py: batch norm with N = dY.shape[1], bugs43 H4's layer norm with D = dY.shape[0], Ng's features-first
    layer norm with D = dY.shape[1])."""

    def __init__(self, axis=0):
        self.axis, self.params, self.grads = axis, {}, {}

    def forward(self, X, training=False):
        self.s = np.sqrt(X.var(self.axis, keepdims=True) + 1e-5)
        self.xh = (X - X.mean(self.axis, keepdims=True)) / self.s
        return self.xh

    def backward(self, dY):
        a, n = self.axis, dY.shape[1 - self.axis]  # BUG: the other axis's size
        return (dY - dY.sum(a, keepdims=True) / n - self.xh * (dY * self.xh).sum(a, keepdims=True) / n) / self.s


@pytest.mark.parametrize("axis", [0, 1])
def test_a_size_from_the_other_axis_is_named_so_at_a_square_input(axis):
    """verify43c F11: right at 5 x 5, wrong with 6 rows; it was told 'the means divide by N-1' (axis 0) or 'statistics
    treated as constants' (axis 1), bugs it does not have."""
    from gradcheck.diagnose import diagnose_layer

    d = diagnose_layer(_NormWrongAxis(axis), (5, 5), twin=None)
    said = " ".join(d.sentence().split())
    assert not d.passed and d.codes[0] == "wrong-axis-size", said
    assert "N-1" not in said and "constants" not in said and "right where X has the shape" in said


class _CumulativeBN(RedteamBatchNorm):
    """A class batchnorm with PyTorch's ``momentum=None``: the running statistics are the mean of every batch so far,
    ``running = (1 - 1/t) running + batch / t`` with ``t = num_batches_tracked``, which starts at ``start`` (PyTorch: 0;
    1 averages the first batch with the initial statistics, a bug)."""

    def __init__(self, num_features, start=0):
        super().__init__(num_features, update="cumulative")  # (the base class updates nothing for this word)
        self.momentum, self.num_batches_tracked = None, start

    def forward(self, X, training=False):
        if training:
            n = len(X)
            self.num_batches_tracked += 1
            f = 1.0 / self.num_batches_tracked
            self.running_mean = (1 - f) * self.running_mean + f * X.mean(axis=0)
            self.running_var = (1 - f) * self.running_var + f * X.var(axis=0) * n / (n - 1)
        return super().forward(X, training)


def test_a_cumulative_average_counted_from_one_does_not_keep_its_gradient_points():
    """verify44b F5: accepting any share 1 - 1/t for a count the forward raises by one (verify43c F6's fix, reverted)
    passed a cumulative average whose count starts at 1, whose first batch is averaged with the initial statistics:
    the check cannot see where a count started, so the running statistics are compared with the reference's
    momentum, as before (a right momentum=None class is a documented false FAIL, docs/gradescope.md)."""
    import manualprop as mp
    from gradcheck.grading.checks import layer_gradients

    X = np.random.default_rng(3).normal(1.0, 2.0, (6, 4))
    bug = layer_gradients(_CumulativeBN(4, start=1), X, mp.BatchNorm1D(4), training=True, seed=1)
    assert not any(p.passed for p in bug.parts) and "running" in bug.parts[0].message, bug.markdown()


def test_the_grading_child_imports_the_graders_gradcheck(monkeypatch, tmp_path):
    """verify43c F9: ``python -m gradcheck grade`` run in a second clone (its folder first on sys.path, no PYTHONPATH)
    graded in children that imported the editable install's gradcheck, another tree's code."""
    import subprocess
    import sys
    from pathlib import Path

    import gradcheck
    from gradcheck.grading.runner import _child_env

    monkeypatch.delenv("PYTHONPATH", raising=False)
    out = subprocess.run([sys.executable, "-c", "import gradcheck; print(gradcheck.__file__)"], cwd=tmp_path,
                         env=_child_env(), capture_output=True, text=True, timeout=60, check=True).stdout
    assert Path(out.strip()).resolve() == Path(gradcheck.__file__).resolve()


class _SoftmaxCE:
    """Softmax cross-entropy ``forward(y_true, logits)`` (labels): ``shift`` subtracts each row's max first; ``logp``
    takes np.log of the probabilities (underflows to log 0 at a logit ~745 below its row's max)."""

    def __init__(self, shift, logp):
        self.shift, self.logp = shift, logp

    def forward(self, y, z):
        z = z - z.max(axis=1, keepdims=True) if self.shift else z
        with np.errstate(all="ignore"):
            e = np.exp(z)
            logp = np.log(e / e.sum(axis=1, keepdims=True)) if self.logp else z - np.log(e.sum(axis=1, keepdims=True))
        return float(-logp[np.arange(len(y)), y].mean())


def test_an_underflowing_log_softmax_is_not_told_to_subtract_the_row_maximum():
    """redteam43 F3: a softmax that subtracts the row max, then takes log(probs), was told to subtract the row max."""
    from gradcheck.grading.checks import _overflowed

    z = np.array([[1002.0, 0.0, -3.0], [1.0, 2.0, 3.0]])
    y = np.array([1, 2])
    said = _overflowed(float("inf"), 501.0, z, _SoftmaxCE(shift=True, logp=True), y)
    assert "Subtract the row maximum" not in said and "log-sum-exp" in said and "rounds to 0" in said, said
    said = _overflowed(float("inf"), 501.0, z, _SoftmaxCE(shift=False, logp=False), y)  # no shift: exp overflows
    assert "Subtract the row maximum before exp" in said and "log-sum-exp" not in said, said


def test_a_nan_loss_at_ordinary_logits_is_told_neither_overflow_nor_underflow():
    """verify44b F6: a loss NaN for another reason at logits 2.6 apart was told a logit lay 745 below its row's max."""
    from gradcheck.grading.checks import _overflowed

    class _NanCE:
        def forward(self, y, z):
            return float("nan")

    z = np.array([[0.1, 2.7, -0.2], [1.0, 2.0, 3.0]])
    said = _overflowed(float("nan"), 1.2, z, _NanCE(), np.array([1, 2]))
    assert "745" not in said and "Subtract the row maximum" not in said and "0/0" in said, said


@pytest.mark.parametrize("bug", [-1.0, 1.01])
def test_a_wrong_small_gradient_at_a_large_offset_still_fails(bug):
    """verify44c F1: tanh(1e-3 x) at X + 1e4 whose backward flips dX's sign or makes it 1% too large was NOT CHECKED
    (the differences and the gradient both under atol times |x|); central differences settle it: a FAIL, as on main."""
    from gradcheck import check_layer

    class SmallTanh:
        def __init__(self):
            self.params, self.grads = {}, {}

        def forward(self, X, training=False):
            self.Y = np.tanh(1e-3 * X)
            return self.Y

        def backward(self, dY):
            return bug * 1e-3 * dY * (1 - self.Y ** 2)

    X = np.random.default_rng(1).standard_normal((4, 3)) + 1e4
    res = check_layer(SmallTanh(), X, twin=None, seed=0)
    assert "dX" in res.failing_tensors and not res.unchecked, res.table()
