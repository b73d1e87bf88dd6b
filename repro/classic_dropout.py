"""Classic (non-inverted) dropout: unscaled in training, scaled by 1 - p at test time (consistent gradients)."""
import numpy as np


class ClassicDropout:
    def __init__(self, p=0.5, seed=0):
        self.p, self.rng = p, np.random.default_rng(seed)

    def forward(self, X, training=False):
        if not training:
            self.mask = np.full_like(X, 1 - self.p)
            return X * (1 - self.p)
        self.mask = (self.rng.random(X.shape) >= self.p).astype(X.dtype)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask
