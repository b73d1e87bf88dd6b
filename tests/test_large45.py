"""Session 45's large-input rule (large45): a wrong gradient whose central differences settle at the gradient's
precision is a FAIL, not NOT CHECKED, however small (verify44c H1: FAILed at 7129f252, NOT CHECKED since)."""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad


class _Elementwise:
    """``tanh(1e-3 x)`` or ``sigmoid(1e-3 x)``, whose backward is scaled by ``factor`` (1.01, -1: a planted bug)."""

    def __init__(self, kind, factor=1.0):
        self.kind, self.factor, self.params, self.grads = kind, factor, {}, {}

    def forward(self, X, training=False):
        self.y = np.tanh(1e-3 * X) if self.kind == "tanh" else 1 / (1 + np.exp(-1e-3 * X))
        return self.y

    def backward(self, dY):
        d = 1e-3 * (1 - self.y ** 2) if self.kind == "tanh" else 1e-3 * self.y * (1 - self.y)
        return self.factor * dY * d


def _oracle(kind):
    return (lambda x: anp.tanh(1e-3 * x)) if kind == "tanh" else (lambda x: 0.5 * (1 + anp.tanh(0.5e-3 * x)))


_Z = np.random.default_rng(3).standard_normal((4, 6))
CASES = [("tanh", _Z + 1e4, 1.01), ("sigmoid", _Z * 1e6, -1.0), ("sigmoid", _Z + 1e4, 1.01)]


@pytest.mark.parametrize("kind,X,factor", CASES, ids=["tanh+1e4-x1.01", "sigmoid*1e6-sign", "sigmoid+1e4-x1.01"])
def test_a_wrong_small_gradient_whose_differences_settle_fails(kind, X, factor):
    """The differences' round-off is measured (2.7e-15 for tanh at X + 1e4, where atol is 8.9e-14; the sigmoid at
    X * 1e6 moves its loss by 3e-15 at h, its gradient 5e-14), and that measure, not atol times four (nor the floor,
    1e-9, at a gradient of 1e-7), is the spread's round-off. HIPS autograd says the planted error is there."""
    from gradcheck import check_layer

    G = np.random.default_rng(7).standard_normal(X.shape)
    layer = _Elementwise(kind, factor)
    layer.forward(X)
    truth = grad(lambda x: anp.sum(_oracle(kind)(x) * G))(X)
    top = np.abs(truth).max()
    assert top > 0 and np.abs(layer.backward(G) - truth).max() > 0.009 * top  # the bug is real
    res = check_layer(_Elementwise(kind, factor), X.copy(), twin=None, mode="full")
    assert not res.passed and res.failing_tensors == ["dX"] and not res.unchecked, (res.failing_tensors,
                                                                                  res.unchecked)


@pytest.mark.parametrize("kind,X", [(k, X) for k, X, _ in CASES], ids=["tanh+1e4", "sigmoid*1e6", "sigmoid+1e4"])
def test_the_right_small_gradients_pass(kind, X):
    from gradcheck import check_layer

    res = check_layer(_Elementwise(kind), X.copy(), twin=None, mode="full")
    assert res.passed and not res.unchecked, (res.failing_tensors, res.unchecked)


def test_analytic_roundoff_is_backwards_own():
    """A backward whose terms cancel at inputs of 3000 (a key bias's gradient, 0 in exact arithmetic) moves by its
    round-off when the inputs move by their last bit; one that accumulates into its gradients gives no excuse."""
    from gradcheck.check import _analytic_roundoff
    from gradcheck.sources import Call, manual_source

    class Cancel:
        params, grads = {}, {}

        def forward(self, X, training=False):
            self.X = X
            return X * 1.0

        def backward(self, dY):
            return dY * (self.X * 1.1 - self.X) / (0.1 * self.X)  # 1 but for rounding at |x| = 3000

    X = np.random.default_rng(0).standard_normal((3, 4)) - 3000.0
    call = Call(Cancel(), "Cancel", [X], ["X"], {}, False)
    call.forward(X.copy())
    G = np.ones(X.shape)
    own = _analytic_roundoff(call, G, manual_source(call, G), 0)
    assert 0 < own["@X"].max() <= 20 * np.spacing(3000.0) / 300

    class Accumulates(Cancel):
        total = 0.0

        def backward(self, dY):
            self.total = self.total + dY
            return self.total

    call = Call(Accumulates(), "Accumulates", [X], ["X"], {}, False)
    call.forward(X.copy())
    assert _analytic_roundoff(call, G, manual_source(call, G), 0) == {}
