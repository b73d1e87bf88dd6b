"""Session 22 (review22 item 4): a forward that rebinds its own input (``X = X + 3``) before bounding it: the bounds
forward compares X with are read through the rebinding (-3 and 3 for ``np.clip(X + 3, 0, 6)``; they were read as 0
and 6, so the inputs were never drawn around 3, and a backward forgetting the upper clip passed at every seed). Each
bug with a correct twin that must PASS."""

import numpy as np

INPUT = (6, 4)


class ReLU6Shifted:
    """relu6(x + 3) = min(max(x + 3, 0), 6), hard-swish's inner term (MobileNetV3), forward's input rebound to the
    shifted value, correct."""

    ADAPT = True

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        X = np.asarray(X, dtype=np.float64)
        self.X = X
        X = X + 3
        return np.clip(X, 0, 6)

    def backward(self, dY):
        return dY * ((self.X > -3) & (self.X < 3))


class ReLU6ShiftedNoUpper(ReLU6Shifted):
    def backward(self, dY):
        return dY * (self.X > -3)  # BUG: the clip at 3 (6 after the shift) forgotten: gradient 1 above 3
