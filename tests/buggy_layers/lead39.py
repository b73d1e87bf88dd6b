"""Session 39 (review39 F6): a dense ReLU layer with a zero bias (the usual initial value) whose dW skips ReLU's
derivative was told "forward is affine in X (no nonlinearity)": relu is positively homogeneous, so Y(2X) - 2 Y(X)
+ Y(0) = 0 held; Y(X) + Y(-X) = 2 Y(0) does not (relu(z) + relu(-z) = |z|)."""

import numpy as np

INPUT = (6, 4)
KWARGS = {}


class ReluDense:
    """``Y = relu(X @ W + b)``, W (in, out), b zeros at init; the correct backward."""

    def __init__(self, D=4, H=3, seed=0):
        self.params = {"W": np.random.default_rng(seed).standard_normal((D, H)) * 0.5, "b": np.zeros(H)}
        self.grads = {}

    def forward(self, X):
        self.X, self.Z = X, X @ self.params["W"] + self.params["b"]
        return np.maximum(self.Z, 0)

    def backward(self, dY):
        dZ = dY * (self.Z > 0)
        self.grads["W"], self.grads["b"] = self.X.T @ dZ, dZ.sum(axis=0)
        return dZ @ self.params["W"].T


class ReluDenseDWFromDY(ReluDense):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["W"] = self.X.T @ dY  # BUG: dY where dZ = dY * relu'(Z) is due
        return dX
