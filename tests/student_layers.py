"""A protocol-conforming student-style Linear for planting one bug per subclass, and a correct ReLU as students write
it, as a class and as a student's file (tests only)."""

import inspect

import numpy as np


class StudentLinear:
    """Protocol-conforming Linear (square by default: a transposed dW keeps its shape);
    subclasses override one of ``dW``, ``db``, ``dX`` to plant one bug each."""

    def __init__(self, n_in=4, n_out=4, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"W": rng.standard_normal((n_out, n_in)), "b": rng.standard_normal(n_out)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def dW(self, dY):
        return dY.T @ self.X

    def db(self, dY):
        return dY.sum(axis=0)

    def dX(self, dY):
        return dY @ self.params["W"]

    def backward(self, dY):
        self.grads["W"] = self.dW(dY)
        self.grads["b"] = self.db(dY)
        return self.dX(dY)


# A correct ReLU as students write it: X cached in forward, dX = dY where X > 0.
class ReLU:
    def forward(self, X):
        self.X = X
        return np.maximum(X, 0)

    def backward(self, dY):
        return dY * (self.X > 0)


#: :class:`ReLU` as a student's file (``class ReLU:`` on its line 3)
RELU_SOURCE = "import numpy as np\n\n" + inspect.getsource(ReLU)
