"""Layers with a learnable scalar (tester14 #1): a PReLU's slope ``alpha`` held as a 0-d array or a numpy scalar,
beside W and b. Its gradient ``dalpha`` is checked like any weight's; forgotten, the layer is not checked as a whole
(weight-or-constant), as for a one-element ``alpha``. A Python float stays a hyperparameter."""

import numpy as np

INPUT = (6, 4)


class PReLUDense:
    """Y = prelu(X @ W + b, alpha), alpha a learnable 0-d array with its gradient dalpha."""

    ADAPT = True

    def __init__(self, alpha=None):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((4, 3)), rng.standard_normal(3) * 0.1
        self.alpha = np.array(0.25) if alpha is None else alpha

    def forward(self, X):
        self.X, self.Z = X, X @ self.W + self.b
        return np.where(self.Z > 0, self.Z, self.alpha * self.Z)

    def backward(self, dY):
        dZ = dY * np.where(self.Z > 0, 1.0, self.alpha)
        self.dW, self.db = self.X.T @ dZ, dZ.sum(0)
        self.dalpha = np.sum(dY * self.Z * (self.Z <= 0))
        return dZ @ self.W.T


class PReLUDenseF64(PReLUDense):
    """alpha a numpy scalar (np.float64), with its gradient."""

    def __init__(self):
        super().__init__(alpha=np.float64(0.25))


class PReLUDenseNoGrad(PReLUDense):
    def backward(self, dY):
        dX = super().backward(dY)
        del self.dalpha  # BUG: dalpha forgotten (a 0-d alpha once read as a hyperparameter: a silent PASS)
        return dX


class PReLUDenseF64NoGrad(PReLUDenseF64):
    def backward(self, dY):
        dX = super().backward(dY)
        del self.dalpha  # BUG: dalpha forgotten (np.float64 alpha)
        return dX
