"""A correct ReLU whose file imports scipy (a package the namespaces sandbox does not provide)."""
import numpy as np
from scipy.special import expit  # noqa: F401


class ReLU:
    def forward(self, X, training=False):
        self.X = X
        return np.maximum(X, 0)

    def backward(self, dY):
        return dY * (self.X > 0)
