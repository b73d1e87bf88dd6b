"""Session 38 (newuser38 F1): an affine layer ``Y = (X + b) @ W`` whose dW forgets the shift (``X.T @ dY`` where
``(X + b).T @ dY`` is due) was told "forward applies a nonlinearity to Z, so dW = X.T @ dZ with dZ = dY * f'(Z)":
there is no nonlinearity. b starts at zeros, so the bug shows at the drawn parameters only (as the grader draws)."""

import numpy as np

INPUT = (8, 4)
KWARGS = {}


class ShiftLinear:
    """``Y = (X + b) @ W``, W (in, out), b (in,) zeros at init; the correct backward."""

    def __init__(self, D=4, H=3, seed=0):
        self.W = np.random.default_rng(seed).standard_normal((D, H))
        self.b = np.zeros(D)

    def forward(self, X):
        self.X = X
        return (X + self.b) @ self.W

    def backward(self, dY):
        self.dW = (self.X + self.b).T @ dY
        self.db = (dY @ self.W.T).sum(0)
        return dY @ self.W.T


class ShiftLinearDW(ShiftLinear):
    def backward(self, dY):
        dX = super().backward(dY)
        self.dW = self.X.T @ dY  # BUG: the shift b forgotten
        return dX
