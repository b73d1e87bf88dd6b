"""Session 15 (issue 15): manualprop's step writes into arrays it made itself, with the same bits.

``Linear.forward`` adds the bias into the product it just made (``Y = X @ W.T; Y += b``, not a
second (batch, out) array) and ``SoftmaxCrossEntropy.forward`` divides ``e`` by its row sums in
place (the softmax it caches). Each test compares with the out-of-place expression it replaces,
bit for bit, and checks that nothing the caller holds is written to.
"""

import numpy as np
import pytest

import manualprop as mp


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_linear_forward_adds_the_bias_in_place_with_the_bits_of_the_sum(dtype):
    lin = mp.Linear(6, 5, rng=0, dtype=dtype)
    X = np.random.default_rng(1).standard_normal((7, 6)).astype(dtype)
    X_before, W_before, b_before = X.copy(), lin.params["W"].copy(), lin.params["b"].copy()
    Y = lin.forward(X)
    expected = X @ lin.params["W"].T + lin.params["b"]
    assert Y.dtype == dtype and Y.shape == (7, 5)
    assert np.array_equal(Y, expected)
    # the caller's input and the parameters are untouched; Y is a new array
    assert np.array_equal(X, X_before) and np.array_equal(lin.params["W"], W_before)
    assert np.array_equal(lin.params["b"], b_before)
    assert not np.shares_memory(Y, X) and not np.shares_memory(Y, lin.params["b"])


def test_linear_forward_with_a_bias_of_another_dtype_keeps_numpys_promotion():
    # a float32 layer whose bias was replaced by a float64 array: X @ W.T + b is float64 (as
    # before); an unguarded Y += b would have cast the sum back to float32
    lin = mp.Linear(3, 2, rng=0, dtype=np.float32)
    lin.params["b"] = np.array([0.1, -0.2])
    X = np.ones((4, 3), np.float32)
    Y = lin.forward(X)
    expected = X @ lin.params["W"].T + lin.params["b"]
    assert Y.dtype == np.float64
    assert np.array_equal(Y, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_softmax_cross_entropy_divides_in_place_with_the_bits_of_e_over_s(dtype):
    rng = np.random.default_rng(2)
    z = (rng.standard_normal((9, 4)) * 3).astype(dtype)
    y = rng.integers(0, 4, 9)
    z_before = z.copy()
    loss = mp.SoftmaxCrossEntropy()
    value = loss.forward(y, z)
    shifted = z - z.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    p = e / s
    assert np.array_equal(loss.cache["p"], p) and loss.cache["p"].dtype == dtype
    assert value == float((np.log(s[:, 0]) - shifted[np.arange(9), y]).sum()) / 9
    dz = p.copy()
    dz[np.arange(9), y] -= 1
    dz *= dtype(1.0 / 9) if dtype is np.float32 else 1.0 / 9
    assert np.array_equal(loss.backward(), dz)
    assert np.array_equal(z, z_before)  # the logits are not written to
