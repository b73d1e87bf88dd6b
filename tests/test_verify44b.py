"""verify44b's findings on session 44's changes: a wrong gradient where every central difference is exactly 0 (a
saturated tanh at X + 1000) is a FAIL, not NOT CHECKED; the autodiff guard's ``if __name__ == "__main__":`` skip
needs a ``__name__`` the file cannot have rebound."""

import textwrap

import numpy as np
import pytest


class _SaturatedTanh:
    """tanh at inputs near 1000 (1 - tanh(x)**2 is 0.0 in float64), whose backward adds ``bug`` to dX."""

    params: dict = {}
    grads: dict = {}

    def __init__(self, bug):
        self.bug = bug

    def forward(self, X, training=False):
        self.Y = np.tanh(X)
        return self.Y

    def backward(self, dY):
        return dY * (1 - self.Y ** 2) + self.bug


def test_a_wrong_gradient_where_the_differences_are_all_zero_fails_at_a_large_input():
    """F1: every difference is 0 (the loss, of round-off 4e-13, never moves), so dX = 1e-6 is wrong, not unsettled
    by the floor's atol 1e-9 times max|x| = 1000; the right layer passes."""
    from gradcheck import check_layer

    X = np.random.default_rng(3).standard_normal((3, 5)) + 1000.0
    assert np.all(1 - np.tanh(X) ** 2 == 0.0)
    bad = check_layer(_SaturatedTanh(1e-6), X, twin=None, seed=0, mode="full")
    assert bad.failing_tensors == ["dX"] and not bad.unchecked, (bad.failing_tensors, bad.unchecked)
    assert check_layer(_SaturatedTanh(0.0), X, twin=None, seed=0, mode="full").passed
