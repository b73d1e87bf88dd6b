"""review30 DTYPE_X_FLOAT64: under ``--dtype float32`` a layer was checked with X float64 beside its float32 weights,
so a backward branch on the input's dtype (``X.dtype == np.float32``, ``X.itemsize == 4``) never ran, and a layer
whose float32 dW is twice the gradient PASSed (exit 0). Its own float32 run (float32 X and weights) is now compared
with the copy given the same values in float64, as a branch on the weights' dtype was (tests/test_float32_own_s28)."""

import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck._float64_copy import own_gradients

LIN = """
import numpy as np


class Lin:
    def __init__(self, W):
        self.params = {"W": W}
        self.grads = {}

    def forward(self, X):
        self.X = X
        return X @ self.params["W"]

    def backward(self, dY):
        self.grads["W"] = K * (self.X.T @ dY)
        return dY @ self.params["W"].T
"""
INIT = '{"W": [[1, 2], [3, 4], [5, 6.5]]}'


@pytest.mark.parametrize("k", ["(2.0 if self.X.itemsize == 4 else 1.0)",
                               "(2.0 if self.X.dtype == np.float32 else 1.0)"])
def test_a_float32_input_only_branch_doubling_dw_fails(tmp_path, k):
    """Was: exit 0, PASS: Lin: every gradient (dX, dW) matches (X float64: the branch never ran)."""
    f = student(tmp_path, LIN.replace("K", k), "layers.py")
    p = run_here("check", f"{f}::Lin", "--input-shape", "4,3", "--init", INIT, "--dtype", "float32")
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "PASS" not in text and "FAIL: Lin: " in text and "dW" in text.partition("FAIL: Lin: ")[2], text
    assert "2 times" in text, text


def test_a_correct_float32_layer_passes_and_says_its_own_float32_backward_was_compared(tmp_path):
    f = student(tmp_path, LIN.replace("K", "1.0"), "layers.py")
    p = run_here("check", f"{f}::Lin", "--input-shape", "4,3", "--init", INIT, "--dtype", "float32")
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert "Its own float32 backward, run on the same inputs and parameters, gives the copy's gradients" in text, text


class _Seen:
    """A linear layer recording the dtype of each X its forward is given."""

    def __init__(self, W):
        self.params, self.grads, self.seen = {"W": W}, {}, []

    def forward(self, X, training=False):
        self.seen.append(X.dtype)
        self.X = X
        return X @ self.params["W"]

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        return dY @ self.params["W"].T


def test_own_gradients_gives_the_original_its_inputs_dtype_and_the_copy_float64():
    W = np.array([[1, 2], [3, 4], [5, 6.5]])
    mine, copy = _Seen(W.astype(np.float32)), _Seen(W)
    X = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    got = own_gradients(mine, copy, [X], None, "Lin")
    assert got is not None
    assert mine.seen == [np.float32] and copy.seen == [np.float64]
    np.testing.assert_allclose(got[0]["W"], got[1]["W"], rtol=1e-5)  # the same formula: within float32's round-off
