"""A student's fully connected layer with a classic bug: the bias gradient is
averaged over the batch instead of summed.

Check it with::

    gradcheck check examples/student_linear_buggy.py::Linear --input-shape 8,5 \
        --init '{"in_features": 5, "out_features": 3}'

gradcheck exits 1 and names ``db``: ``dX`` and ``dW`` are right, ``db`` is the
correct value divided by the batch size (8), so it has the right shape but
the wrong values. The fix: ``dY.sum(axis=0)``. (If the loss already divides by
the batch size, as the mean cross-entropy does, that division is inside dY;
averaging again in the layer divides twice.)
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
        self.grads["b"] = dY.mean(axis=0)  # BUG: should be dY.sum(axis=0)
        return dY @ self.params["W"]
