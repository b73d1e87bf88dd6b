"""One reading of a self-stepping backward's weight step as a gradient (``_adapters._sgd_snapshot``/``_sgd_read``),
also where the weights were not probed (a layer adapted without inputs: ``adapt(obj)``). Session 20 merged
``_read_update``, that path's own reader, which wrote ``W_grad`` beside a gradient backward stores itself (``self.dW``,
two gradients of W) and so never checked the stored one (tester13 M1, fixed on the probed path only)."""
import numpy as np

from gradcheck._adapters import LR_PROBE, adapt


class Dense:
    def __init__(self, factor=1.0):
        self.W = np.arange(6.0).reshape(2, 3) / 7
        self.factor = factor

    def forward(self, X):
        self.X = X
        return X @ self.W

    def backward(self, dY, learning_rate):
        self.dW = self.X.T @ dY
        self.W -= learning_rate * self.dW * self.factor  # factor 2: a step that is not the stored dW
        return dY @ self.W.T


def _one_step(factor):
    obj = Dense(factor)
    W0 = obj.W.copy()
    layer, _ = adapt(obj)  # no inputs: not probed
    X, dY = np.ones((4, 2)), np.arange(12.0).reshape(4, 3)
    layer.forward(X)
    layer.backward(dY)
    return obj, W0, X.T @ dY


def test_a_stored_gradient_beside_the_step_is_the_one_checked():
    obj, W0, dW = _one_step(1.0)
    np.testing.assert_array_equal(obj.W, W0)  # put back
    np.testing.assert_allclose(obj.dW, dW)
    assert not hasattr(obj, "W_grad")  # was: the step read into W_grad beside dW


def test_a_step_that_is_not_the_stored_gradient_replaces_it():
    obj, W0, dW = _one_step(2.0)
    np.testing.assert_array_equal(obj.W, W0)
    np.testing.assert_allclose(obj.dW, 2 * dW, rtol=1e-12)  # the step over the rate: the check FAILs on it
    assert not hasattr(obj, "W_grad") and LR_PROBE > 0
