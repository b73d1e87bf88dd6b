"""A student's fully connected layer, written without subclassing (correct).

Check it with::

    gradcheck check examples/student_linear_correct.py::Linear --input-shape 8,5 \
        --init '{"in_features": 5, "out_features": 3}'

Y = X @ W.T + b with X (N, in), W (out, in), b (out,). With upstream dY (N, out):
dX = dY @ W (N, in), dW = dY.T @ X (out, in), db = dY.sum(axis=0) (out,):
b is added to every row, so its gradient collects every row of dY.
"""

import numpy as np


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        k = 1.0 / np.sqrt(in_features)
        self.params = {
            "W": rng.uniform(-k, k, size=(out_features, in_features)),
            "b": rng.uniform(-k, k, size=(out_features,)),
        }
        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(axis=0)
        return dY @ self.params["W"]
