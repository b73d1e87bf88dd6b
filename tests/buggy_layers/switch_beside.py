"""Switches beside forward's training argument (session 17): a boolean (``forward(X, training, use_dropout)``) and a
string (``forward(X, training=True, mode='fast')``, 'fast' and 'slow' naming no mode), each value checked in every
combination with training; a bug in a branch only the other value reaches."""

import numpy as np

INPUT = (4, 5)


class DropScale:
    """A dropout-like mask when training and use_dropout; a scale that depends on use_dropout."""

    ADAPT = True  # read as `gradcheck check` reads it: its switches combined

    def __init__(self):
        self.rng = np.random.default_rng(0)

    def forward(self, X, training=False, use_dropout=True):
        self.scale = 3.0 if use_dropout else 2.0
        self.mask = (self.rng.random(X.shape) > 0.5) * 2.0 if training and use_dropout else np.ones_like(X)
        return X * self.mask * self.scale

    def backward(self, dY):
        return dY * self.mask * self.k()

    def k(self):
        return self.scale


class DropScaleBug(DropScale):
    def k(self):
        return self.scale if self.scale == 3.0 else 1.0  # BUG: x0.5 when use_dropout=False


class SquareMode:
    """forward(X, training=True, mode='fast'): 'fast' and 'slow' compute X**2 two ways."""

    ADAPT = True

    def forward(self, X, training=True, mode="fast"):
        self.X, self.mode = X, mode
        if mode == "fast":
            return X**2
        elif mode == "slow":
            return X * X
        return X

    def backward(self, dY):
        return self.k() * self.X * dY

    def k(self):
        return 2.0


class SquareModeBug(SquareMode):
    def k(self):
        return 2.0 if self.mode == "fast" else 1.0  # BUG: x0.5 in the 'slow' branch
