"""Session 23 (left23): tester22s's leftovers. Nielsen's naming (``nabla_W``, ``nabla_b``) with a weight gradient
taken from dY where the pre-activation's dZ is due (unnamed in session 22), and its correct twin."""

import numpy as np

INPUT = (5, 4)


class NablaW:
    """tanh(X @ W + b), gradients in self.nabla_W and self.nabla_b (Nielsen's names)."""

    ADAPT = True

    def __init__(self):
        self.W = np.random.default_rng(0).normal(0, 0.5, (4, 3))
        self.b = np.array([0.1, 0.0, -0.1])

    def forward(self, X):
        self.X = X
        return np.tanh(X @ self.W + self.b)

    def backward(self, dY):
        Y = np.tanh(self.X @ self.W + self.b)
        dZ = dY * (1 - Y ** 2)
        self.nabla_W = self.X.T @ dZ
        self.nabla_b = dZ.sum(0)
        return dZ @ self.W.T


class NablaWNoDerivative(NablaW):
    def backward(self, dY):
        Y = np.tanh(self.X @ self.W + self.b)
        dZ = dY * (1 - Y ** 2)
        self.nabla_W = self.X.T @ dY  # BUG: dY where dZ is due (tanh's derivative forgotten)
        self.nabla_b = dZ.sum(0)
        return dZ @ self.W.T
