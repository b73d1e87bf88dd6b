"""manualprop losses: closed-form cases, finite differences, HIPS autograd."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

from manualprop import MeanSquaredError, SoftmaxCrossEntropy

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
