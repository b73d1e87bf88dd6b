"""Session 27 (tester27s): Berkeley CS189's and MIT 6.036's activations, written ``forward(Z)`` /
``backward(Z, dY)`` (CS189: the layer calls ``self.activation.backward(Z, dLdY)``), and a bias halved at a batch of
2, where the batch's 1/N and a plain halving give the same numbers (both are said)."""

import numpy as np

INPUT = (8, 5)


class ReLU:
    """CS189's ReLU: backward takes forward's input Z and dY, correct."""

    ADAPT = True

    def forward(self, Z):
        return np.maximum(0, Z)

    def backward(self, Z, dY):
        return dY * (Z > 0)


class ReLUMaskInverted(ReLU):
    """The mask's comparison turned around (MIT 6.036 hw7's ``dLdA * (self.A <= 0)``)."""

    def backward(self, Z, dY):
        return dY * (Z <= 0)  # BUG: X <= 0 where X > 0 is due


class Scale:
    """Y = X * g + c, attribute style (g/dg, c/dc), at a batch of 2, correct."""

    ADAPT = True
    INPUT = (2, 4)

    def __init__(self):
        rng = np.random.default_rng(27)
        self.g, self.c = rng.uniform(0.5, 1.5, (1, 4)), rng.uniform(-0.5, 0.5, (1, 4))

    def forward(self, X):
        self.X = X
        return X * self.g + self.c

    def backward(self, dY):
        self.dg = np.sum(dY * self.X, axis=0, keepdims=True)
        self.dc = np.sum(dY, axis=0, keepdims=True)
        return dY * self.g


class ScaleHalved(Scale):
    """numpy-ml's Conv2D row of tester27s: ``dB / 2``, at a batch of 2 the same as a mean over the batch."""

    def backward(self, dY):
        dX = super().backward(dY)
        self.dg = np.sum(dY * self.X, axis=0, keepdims=True) / 2  # BUG: halved
        return dX
