"""Issue 15, session 17: checks taken inline (Linear/Tanh backward's dY, Linear.forward's Y,
SoftmaxCrossEntropy.backward's call order, int64 labels' range) still fire after good calls."""

from __future__ import annotations

import numpy as np
import pytest

import manualprop as mp
from manualprop._validation import NonFiniteError


def _warm(layer, X):
    for _ in range(2):
        Y = layer.forward(X)
        layer.backward(np.ones_like(Y))
    return Y


@pytest.mark.parametrize("make", [lambda: mp.Linear(4, 3, rng=0), mp.Tanh])
def test_backward_refuses_a_bad_dY_after_good_calls(make):
    layer, X = make(), np.ones((5, 4))
    Y = _warm(layer, X)
    bad = np.ones_like(Y)
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"\.backward: dY must contain only finite values; got 1 NaN/inf "
                                         r"value\(s\), the first at index \(1, 2\)"):
        layer.backward(bad)
    with pytest.raises(ValueError, match=r"\.backward: dY must have the shape of the forward output, "
                                         rf"\({Y.shape[0]}, {Y.shape[1]}\); got \(5, 2\)"):
        layer.backward(np.ones((5, 2)))
    with pytest.raises(TypeError, match=r"\.backward: dY must have dtype float32 or float64; got int64"):
        layer.backward(np.ones(Y.shape, dtype=np.int64))
    # a float32 dY of a float64 layer is cast, as check_grad_output does
    assert np.array_equal(layer.backward(np.ones(Y.shape, dtype=np.float32)), layer.backward(np.ones_like(Y)))


@pytest.mark.parametrize("make", [lambda: mp.Linear(4, 3, rng=0), mp.Tanh])
def test_backward_before_forward_is_refused(make):
    with pytest.raises(RuntimeError, match=r"\.backward: must be called after forward\(\)"):
        make().backward(np.ones((5, 3)))


def test_linear_forward_names_a_nan_parameter_after_good_calls():
    layer, X = mp.Linear(4, 3, rng=0), np.ones((5, 4))
    _warm(layer, X)
    layer.params["b"][1] = np.nan
    with pytest.raises(NonFiniteError, match=r"Linear\(in_features=4, out_features=3\)\.forward: parameter b "
                                             r"contains 1 NaN/inf value\(s\), the first at index \(1,\)"):
        layer.forward(X)


def test_softmax_cross_entropy_backward_order_and_labels_after_good_calls():
    with pytest.raises(RuntimeError, match=r"SoftmaxCrossEntropy\(reduction='mean'\)\.backward: must be called "
                                           r"after forward\(\)"):
        mp.SoftmaxCrossEntropy().backward()
    loss, z = mp.SoftmaxCrossEntropy(), np.array([[0.0, 1.0, 2.0], [1.0, 0.0, -1.0]])
    for _ in range(2):
        loss.forward(np.array([2, 0]), z)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(loss.backward(), (p - np.eye(3)[[2, 0]]) / 2, rtol=0, atol=1e-15)
    for y in ([2, 3], [-1, 0]):
        with pytest.raises(ValueError, match=r"y_true labels must be in \[0, 3\)"):
            loss.forward(np.array(y), z)
