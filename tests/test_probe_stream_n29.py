"""newuser29 H2: the checker's own draws (the upstream gradient ``G`` above all) come from a stream of their own
(:func:`gradcheck._kernel.probe_rng`), never the draws a user makes: ``check_layer`` drew ``G`` from
``default_rng(0)``, so with lesson 02's ``X = np.random.default_rng(0).standard_normal((4, 5))`` and an output
of ``X``'s shape ``G == X`` and a backward using ``X`` where ``dY`` is due, or a transposed square ``dW``, PASSED.
The bugs below FAIL on main at 62d1217 (``passed=True``) and are caught with the fix; independent finite
differences (here, plain numpy) say they are wrong."""

import numpy as np
import pytest
from student_layers import ReLU

import gradcheck
from gradcheck._kernel import probe_rng, upstream_draw


class ReLUuseX:
    def forward(self, X):
        self.X = X
        return np.maximum(X, 0)

    def backward(self, dY):
        return self.X * (self.X > 0)  # BUG: X where dY is due


class LinearSquareT:
    def __init__(self, n):
        self.W = np.random.default_rng(2).normal(size=(n, n))
        self.b = np.zeros(n)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW = (self.X.T @ dY).T  # BUG: transposed
        self.db = dY.sum(0)
        return dY @ self.W.T


class ParamsSquareT:
    def __init__(self, n):
        self.params = {"W": np.random.default_rng(2).normal(size=(n, n)), "b": np.zeros(n)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": (self.X.T @ dY).T, "b": dY.sum(0)}
        return dY @ self.params["W"].T


def _fd_dW(layer, W, X, G, h=1e-6):
    """Central differences of sum(forward(X) * G) in W, written out (the independent reference)."""
    num = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        w0 = W[idx]
        W[idx] = w0 + h
        lp = np.sum(layer.forward(X) * G)
        W[idx] = w0 - h
        lm = np.sum(layer.forward(X) * G)
        W[idx] = w0
        num[idx] = (lp - lm) / (2 * h)
    return num


def lesson_X(shape=(4, 5)):
    return np.random.default_rng(0).standard_normal(shape)  # lesson 02's draw


def test_G_is_not_the_users_first_draw():
    seen = []

    class Spy:
        def forward(self, X):
            return X * 1.0

        def backward(self, dY):
            seen.append(dY.copy())
            return dY

    X = lesson_X()
    assert gradcheck.check_layer(Spy(), X, twin=None).passed
    assert seen and not any(np.allclose(np.abs(g), np.abs(X)) for g in seen)


def test_relu_using_X_for_dY_fails_and_the_right_relu_passes():
    X = lesson_X()
    assert not gradcheck.check_layer(ReLUuseX(), X, twin=None).passed
    assert gradcheck.check_layer(ReLU(), X, twin=None).passed


@pytest.mark.parametrize("cls", [LinearSquareT, ParamsSquareT])
def test_transposed_square_dW_fails(cls):
    X = lesson_X((8, 5))
    # independently wrong: against plain central differences at another G, dW is off by O(1)
    layer, G = cls(5), np.random.default_rng(7).standard_normal((8, 5))
    W = layer.W if hasattr(layer, "W") else layer.params["W"]
    num = _fd_dW(layer, W, X, G)
    layer.forward(X)
    layer.backward(G)
    dW = layer.dW if hasattr(layer, "dW") else layer.grads["W"]
    assert np.abs(dW - num).max() > 1.0
    r = gradcheck.check_layer(cls(5), X, twin=None)
    assert not r.passed
    assert "dW" in r.failing_tensors and "dX" not in r.failing_tensors


def test_function_pair_relu_using_x_for_dout_fails():
    def relu_forward(x):
        return np.maximum(x, 0), x

    def relu_backward(dout, cache):
        return cache * (cache > 0)  # BUG: x where dout is due

    r = gradcheck.check_layer(gradcheck.function_pair(relu_forward, relu_backward), lesson_X(), twin=None)
    assert not r.passed


def test_check_vjp_v_is_not_the_users_draw():
    x = lesson_X()

    def relu(a):
        return np.maximum(a, 0)

    def wrong_vjp(g, ans, a):
        return a * (a > 0)  # x where g is due

    assert not gradcheck.check_vjp(relu, wrong_vjp, x).passed
    assert gradcheck.check_vjp(relu, lambda g, ans, a: g * (a > 0), x).passed


def test_G_proportional_to_an_input_is_drawn_again():
    # even an X that IS the checker's first draw (times 3) does not become G: the next draw is taken
    first = probe_rng(0).standard_normal((4, 5))
    G = upstream_draw(probe_rng(0), (4, 5), [3.0 * first])
    rng = probe_rng(0)
    rng.standard_normal((4, 5))
    np.testing.assert_array_equal(G, rng.standard_normal((4, 5)))
    cos = abs(np.sum(G * first)) / (np.linalg.norm(G) * np.linalg.norm(first))
    assert cos < 0.9
    assert not gradcheck.check_layer(ReLUuseX(), -2.0 * first, twin=None).passed  # G == -X/2 before the redraw


def test_other_shapes_zero_and_single_entries_are_not_avoided():
    first = probe_rng(0).standard_normal((4, 5))
    np.testing.assert_array_equal(upstream_draw(probe_rng(0), (4, 5), [first.T, np.zeros((4, 5))]), first)
    one = probe_rng(0).standard_normal((1,))
    np.testing.assert_array_equal(upstream_draw(probe_rng(0), (1,), [np.ones(1)]), one)


def test_stream_is_reproducible_per_seed_and_apart_from_default_rng():
    a, b = probe_rng(3).standard_normal(50), probe_rng(3).standard_normal(50)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, probe_rng(4).standard_normal(50))
    for s in (3, [3], [3, 0], [3, 1]):
        assert not np.allclose(a, np.random.default_rng(s).standard_normal(50))
    for child in np.random.default_rng(3).spawn(3):
        assert not np.allclose(a, child.standard_normal(50))
    r1 = gradcheck.check_layer(ReLU(), (4, 5), twin=None, seed=5)
    r2 = gradcheck.check_layer(ReLU(), (4, 5), twin=None, seed=5)
    np.testing.assert_array_equal(r1._upstream, r2._upstream)
