"""manualprop losses: closed-form cases, finite differences, HIPS autograd."""

import math

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

from manualprop import BinaryCrossEntropyWithLogits, Huber, MeanSquaredError, SoftmaxCrossEntropy

STRICT = dict(over="raise", invalid="raise", divide="raise")  # underflow to 0 is fine


def numerical_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + h
        fp = f()
        x[idx] = old - h
        fm = f()
        x[idx] = old
        g[idx] = (fp - fm) / (2 * h)
    return g


def anp_log_softmax(z):
    m = anp.max(z, axis=1, keepdims=True)
    return z - m - anp.log(anp.sum(anp.exp(z - m), axis=1, keepdims=True))


# ---------------------------------------------------------------- SoftmaxCrossEntropy


def test_cross_entropy_case_c14_large_logits():
    loss = SoftmaxCrossEntropy()
    with np.errstate(**STRICT):
        value = loss(np.array([0]), np.array([[1000.0, 1001.0, 1002.0]]))
        d = loss.backward()
    np.testing.assert_allclose(
        loss.cache["p"], [[0.0900305732, 0.2447284711, 0.6652409558]], rtol=1e-9
    )
    np.testing.assert_allclose(value, 2.40760596444, rtol=1e-11)
    np.testing.assert_allclose(d, [[-0.9099694268, 0.2447284711, 0.6652409558]], rtol=1e-9)
    assert isinstance(value, float)


def test_cross_entropy_case_c14_saturated():
    loss = SoftmaxCrossEntropy()
    with np.errstate(**STRICT):
        value = loss(np.array([1]), np.array([[0.0, -1000.0]]))
        d = loss.backward()
    assert value == 1000.0
    np.testing.assert_array_equal(d, [[1.0, -1.0]])
    assert not np.isnan(d).any()


def test_cross_entropy_vs_finite_differences_and_autograd():
    rng = np.random.default_rng(0)
    z = rng.normal(scale=3.0, size=(6, 4))
    y = np.array([0, 3, 1, 1, 2, 0])
    loss = SoftmaxCrossEntropy()
    value = loss(y, z)
    d = loss.backward()

    def L_anp(z):
        return -anp.mean(anp_log_softmax(z)[np.arange(6), y])

    np.testing.assert_allclose(value, L_anp(z), rtol=1e-12)
    np.testing.assert_allclose(
        d, numerical_grad(lambda: loss.forward(y, z), z), rtol=1e-6, atol=1e-9
    )
    np.testing.assert_allclose(d, grad(L_anp)(z), rtol=1e-7)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    np.testing.assert_allclose(d, (p - np.eye(4)[y]) / 6, rtol=1e-12)


def test_cross_entropy_float32_kept():
    z = np.array([[1.0, 2.0, 0.5]], dtype=np.float32)
    loss = SoftmaxCrossEntropy()
    value = loss(np.array([2]), z)
    assert loss.backward().dtype == np.float32
    np.testing.assert_allclose(
        value, -np.log(np.exp(0.5) / np.exp([1.0, 2.0, 0.5]).sum()), rtol=1e-6
    )


def test_cross_entropy_bad_input():
    loss = SoftmaxCrossEntropy()
    with pytest.raises(
        RuntimeError,
        match=r"^SoftmaxCrossEntropy\(.*\)\.backward: must be called after forward\(\)",
    ):
        loss.backward()
    z = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"y_true labels must be in \[0, 3\); got min 0, max 3"):
        loss(np.array([0, 3]), z)
    with pytest.raises(
        ValueError,
        match=r"y_true must be integer class labels of shape \(2,\) or float probabilities of shape \(2, 3\); got integer array of shape \(3,\)",
    ):
        loss(np.array([0, 1, 2]), z)
    with pytest.raises(ValueError, match=r"y_pred must have shape \(batch, classes\); got \(3,\)"):
        loss(np.array([0]), np.zeros(3))
    with pytest.raises(TypeError, match=r"y_pred must have dtype float32 or float64; got int64"):
        loss(np.array([0, 1]), np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(ValueError, match=r"y_pred must contain only finite values"):
        loss(np.array([0, 1]), np.array([[0.0, np.nan, 1.0], [0.0, 0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"y_pred must not be empty; got shape \(0, 3\)"):
        loss(np.zeros(0, dtype=int), np.zeros((0, 3)))


# ---------------------------------------------------------------- MeanSquaredError


def test_mse_values_and_gradient():
    loss = MeanSquaredError()
    y_true = np.array([[1.0, 2.0], [3.0, 4.0]])
    y_pred = np.array([[1.5, 2.0], [2.0, 6.0]])
    assert loss(y_true, y_pred) == pytest.approx((0.25 + 0 + 1 + 4) / 4, rel=1e-15)
    np.testing.assert_allclose(loss.backward(), [[0.25, 0.0], [-0.5, 1.0]], rtol=1e-15)


def test_mse_vs_finite_differences_and_autograd():
    rng = np.random.default_rng(1)
    y_true = rng.normal(size=(5, 3))
    y_pred = rng.normal(size=(5, 3))
    loss = MeanSquaredError()
    loss(y_true, y_pred)
    d = loss.backward()
    np.testing.assert_allclose(
        d, numerical_grad(lambda: loss.forward(y_true, y_pred), y_pred), rtol=1e-6, atol=1e-9
    )
    np.testing.assert_allclose(d, grad(lambda p: anp.mean((p - y_true) ** 2))(y_pred), rtol=1e-7)


def test_mse_bad_input():
    loss = MeanSquaredError()
    with pytest.raises(
        ValueError,
        match=r"^MeanSquaredError\(.*\)\.forward: y_true must have the shape of y_pred, \(3,\); got \(2,\)$",
    ):
        loss(np.zeros(2), np.zeros(3))
    with pytest.raises(TypeError, match=r"y_true must be a real numeric array; got dtype <U1"):
        loss(np.array(["a", "b"]), np.zeros(2))
    with pytest.raises(ValueError, match=r"y_true must contain only finite values"):
        loss(np.array([np.inf, 0.0]), np.zeros(2))
    # integer targets are accepted and cast
    assert loss(np.array([1, 0]), np.zeros(2)) == 0.5


# ---------------------------------------------------------------- reductions, smoothing, targets

LOSS_CASES = ["ce_labels", "ce_smooth", "ce_probs", "mse", "huber", "bce"]


def make_case(name, reduction, rng):
    """Return (loss, y_true, y_pred, autograd oracle of the loss as a function of y_pred)."""
    red = anp.mean if reduction == "mean" else anp.sum
    if name.startswith("ce"):
        z = rng.normal(scale=2.0, size=(5, 4))
        labels = np.array([3, 0, 1, 1, 2])
        if name == "ce_labels":
            T = np.eye(4)[labels]
            return (
                SoftmaxCrossEntropy(reduction),
                labels,
                z,
                lambda z: red(-anp.sum(T * anp_log_softmax(z), axis=1)),
            )
        if name == "ce_smooth":
            T = 0.8 * np.eye(4)[labels] + 0.2 / 4
            loss = SoftmaxCrossEntropy(reduction, label_smoothing=0.2)
            return loss, labels, z, lambda z: red(-anp.sum(T * anp_log_softmax(z), axis=1))
        T = rng.dirichlet(np.ones(4), size=5) * np.array(
            [[1.0], [1.0], [2.0], [0.5], [1.0]]
        )  # some rows not normalised
        return (
            SoftmaxCrossEntropy(reduction),
            T,
            z,
            lambda z: red(-anp.sum(T * anp_log_softmax(z), axis=1)),
        )
    y_pred = rng.normal(scale=2.0, size=(4, 3))
    if name == "mse":
        y_true = rng.normal(size=(4, 3))
        return MeanSquaredError(reduction), y_true, y_pred, lambda p: red((p - y_true) ** 2)
    if name == "huber":
        y_true = rng.normal(size=(4, 3))
        r = y_pred - y_true
        y_pred = np.where(
            np.abs(np.abs(r) - 1.3) < 1e-3, y_pred + 0.01, y_pred
        )  # stay off the kink

        def f(p):
            r = p - y_true
            return red(anp.where(anp.abs(r) <= 1.3, 0.5 * r**2, 1.3 * (anp.abs(r) - 0.65)))

        return Huber(delta=1.3, reduction=reduction), y_true, y_pred, f
    y_true = rng.uniform(size=(4, 3))  # soft targets in [0, 1]

    def bce(x):
        s = 1 / (1 + anp.exp(-x))
        return red(-y_true * anp.log(s) - (1 - y_true) * anp.log(1 - s))

    return BinaryCrossEntropyWithLogits(reduction), y_true, y_pred, bce


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("name", LOSS_CASES)
def test_loss_vs_finite_differences_and_autograd(name, reduction):
    rng = np.random.default_rng([LOSS_CASES.index(name), reduction == "sum"])
    loss, y_true, y_pred, oracle = make_case(name, reduction, rng)
    value = loss(y_true, y_pred)
    d = loss.backward()
    assert d.shape == y_pred.shape and d.dtype == y_pred.dtype
    np.testing.assert_allclose(value, oracle(y_pred), rtol=1e-12)
    np.testing.assert_allclose(d, grad(oracle)(y_pred), rtol=1e-7, atol=1e-14)
    fd = numerical_grad(lambda: loss.forward(y_true, y_pred), y_pred)
    np.testing.assert_allclose(d, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", LOSS_CASES)
def test_sum_is_n_times_mean(name):
    rng = np.random.default_rng(3)
    mean_loss, y_true, y_pred, _ = make_case(name, "mean", rng)
    if isinstance(mean_loss, SoftmaxCrossEntropy):
        sum_loss = SoftmaxCrossEntropy("sum", label_smoothing=mean_loss.label_smoothing)
        n = y_pred.shape[0]
    elif isinstance(mean_loss, Huber):
        sum_loss = Huber(delta=mean_loss.delta, reduction="sum")
        n = y_pred.size
    else:
        sum_loss = type(mean_loss)("sum")
        n = y_pred.size
    np.testing.assert_allclose(sum_loss(y_true, y_pred), n * mean_loss(y_true, y_pred), rtol=1e-13)
    np.testing.assert_allclose(sum_loss.backward(), n * mean_loss.backward(), rtol=1e-13)


def test_label_smoothing_matches_pytorch_decomposition():
    # PyTorch: (1 - eps) * nll + eps * mean_c(-log p_c)
    z = np.array([[1.0, 2.0, 3.0], [0.5, -0.5, 0.0]])
    y = np.array([0, 2])
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    eps = 0.1
    per = (1 - eps) * -logp[[0, 1], y] + eps * -logp.mean(1)
    loss = SoftmaxCrossEntropy(label_smoothing=eps)
    np.testing.assert_allclose(loss(y, z), per.mean(), rtol=1e-14)
    p = np.exp(logp)
    np.testing.assert_allclose(
        loss.backward(), (p - (0.9 * np.eye(3)[y] + 0.1 / 3)) / 2, rtol=1e-14
    )


def test_one_hot_probabilities_equal_labels():
    rng = np.random.default_rng(8)
    z = rng.normal(size=(6, 5))
    y = rng.integers(0, 5, size=6)
    a, b = SoftmaxCrossEntropy(), SoftmaxCrossEntropy()
    np.testing.assert_allclose(a(y, z), b(np.eye(5)[y], z), rtol=1e-14)
    np.testing.assert_allclose(a.backward(), b.backward(), rtol=1e-14, atol=1e-17)


def test_probability_targets_large_logits_no_nan():
    loss = SoftmaxCrossEntropy(label_smoothing=0.1)
    with np.errstate(**STRICT):
        value = loss(np.array([[0.0, 1.0]]), np.array([[0.0, -1000.0]]))
        d = loss.backward()
    # T = [0.05, 0.95]; log p = [0, -1000]
    np.testing.assert_allclose(value, 950.0, rtol=1e-14)
    np.testing.assert_allclose(d, [[0.95, -0.95]], rtol=1e-14)


def test_bce_with_logits_extremes():
    loss = BinaryCrossEntropyWithLogits()
    with np.errstate(**STRICT):
        value = loss(np.array([1.0]), np.array([-800.0]))
        d = loss.backward()
        assert value == 800.0 and d[0] == -1.0
        value = loss(np.array([0, 1]), np.array([800.0, 800.0]))
        np.testing.assert_allclose(value, 400.0, rtol=1e-15)
        np.testing.assert_allclose(loss.backward(), [0.5, 0.0], atol=1e-300)


def test_bce_with_logits_values():
    loss = BinaryCrossEntropyWithLogits()
    x = np.array([0.0, 2.0, -1.0])
    t = np.array([1, 0, 1])
    expected = np.array([math.log(2), math.log1p(math.exp(2.0)), math.log1p(math.exp(1.0))])
    np.testing.assert_allclose(loss(t, x), expected.mean(), rtol=1e-15)
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(loss.backward(), (s - t) / 3, rtol=1e-15)


def test_huber_values():
    loss = Huber()
    # r = [0.5, -2, 3] -> [0.125, 1.5, 2.5]
    value = loss(np.zeros(3), np.array([0.5, -2.0, 3.0]))
    np.testing.assert_allclose(value, (0.125 + 1.5 + 2.5) / 3, rtol=1e-15)
    np.testing.assert_allclose(loss.backward(), [0.5 / 3, -1 / 3, 1 / 3], rtol=1e-15)
    loss = Huber(delta=2.0, reduction="sum")
    assert loss(np.array([1.0, 0.0]), np.array([4.0, 2.0])) == 2 * (3 - 1) + 0.5 * 4
    np.testing.assert_array_equal(loss.backward(), [2.0, 2.0])


@pytest.mark.parametrize(
    "loss,y_true",
    [
        (SoftmaxCrossEntropy(label_smoothing=0.1), np.array([0, 2])),
        (SoftmaxCrossEntropy(), np.full((2, 3), 1 / 3)),
        (MeanSquaredError(), np.zeros((2, 3))),
        (Huber(), np.zeros((2, 3))),
        (BinaryCrossEntropyWithLogits(), np.ones((2, 3))),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, np.ndarray) else "",
)
def test_losses_keep_float32(loss, y_true):
    y_pred = np.array([[0.5, -1.0, 2.0], [0.0, 1.5, -0.5]], dtype=np.float32)
    value = loss(y_true, y_pred)
    assert isinstance(value, float)
    assert loss.backward().dtype == np.float32


def test_extended_losses_bad_input():
    with pytest.raises(
        ValueError, match=r"^MeanSquaredError: reduction must be one of 'mean', 'sum'; got 'none'$"
    ):
        MeanSquaredError("none")
    with pytest.raises(
        ValueError, match=r"^SoftmaxCrossEntropy: label_smoothing must be in \[0.0, 1.0\]; got 1.5$"
    ):
        SoftmaxCrossEntropy(label_smoothing=1.5)
    with pytest.raises(ValueError, match=r"^Huber: delta must be in \(0.0, inf\); got 0.0$"):
        Huber(delta=0)
    bce = BinaryCrossEntropyWithLogits()
    with pytest.raises(
        ValueError,
        match=r"^BinaryCrossEntropyWithLogits\(reduction='mean'\)\.forward: y_true must be in \[0.0, 1.0\]; got max 1.5",
    ):
        bce(np.array([0.0, 1.5]), np.zeros(2))
    with pytest.raises(
        RuntimeError,
        match=r"^Huber\(delta=1.0, reduction='mean'\)\.backward: must be called after forward",
    ):
        Huber().backward()
    ce = SoftmaxCrossEntropy()
    with pytest.raises(ValueError, match=r"y_true probabilities must be >= 0; got min -0.5"):
        ce(np.array([[1.5, -0.5]]), np.zeros((1, 2)))
    with pytest.raises(
        ValueError,
        match=r"got float array of shape \(2,\) \(float labels\? convert with y_true.astype\(int\)\)",
    ):
        ce(np.array([0.0, 1.0]), np.zeros((2, 2)))
    with pytest.raises(TypeError, match=r"y_true must be integer class labels .*; got dtype bool"):
        ce(np.array([True, False]), np.zeros((2, 2)))
