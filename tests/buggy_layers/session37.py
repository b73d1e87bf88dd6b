"""Session 37 (corpus37 F3): a fully connected layer that flattens its input first, ``X.reshape(N, -1) @ W + b`` on
X of shape (N, 2, 3), W square (6, 6), as CS7643's Linear; its dX missing ``.T`` (``(dY @ W).reshape(X.shape)``) was
"no known bug pattern", though the same line on a 2-D input is named (``transposed-weight``)."""

import numpy as np

INPUT = (8, 2, 3)


class LinearFlat:
    """Y = X.reshape(N, -1) @ W + b, W of shape (6, 6) (in, out), dX reshaped back to X's shape."""

    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"W": 0.5 * rng.standard_normal((6, 6)), "b": rng.standard_normal(6)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        return X.reshape(len(X), -1) @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = self.X.reshape(len(self.X), -1).T @ dY
        self.grads["b"] = dY.sum(axis=0)
        return (dY @ self.params["W"].T).reshape(self.X.shape)


class LinearFlatDxNoT(LinearFlat):
    def backward(self, dY):
        super().backward(dY)
        return (dY @ self.params["W"]).reshape(self.X.shape)  # BUG: W where W.T is due (square W: the shapes agree)
