"""Session 22 (session 21's leftovers): a scale layer's backward without its factor (named "the activation's
derivative" before), and, in the other modules of this session, the planted losses and attention forms; each bug with
a correct twin that must PASS."""

import numpy as np

INPUT = (6, 4)


class ScaleGamma:
    """Y = X * gamma, a learned per-feature scale (params/grads dicts)."""

    ADAPT = True

    def __init__(self, D=4):
        self.params = {"gamma": np.random.default_rng(0).uniform(0.5, 2.0, D)}
        self.grads = {"gamma": np.zeros(D)}

    def forward(self, X):
        self.X = X
        return X * self.params["gamma"]

    def backward(self, dY):
        self.grads["gamma"] = (dY * self.X).sum(axis=0)
        return dY * self.params["gamma"]


class ScaleGammaNoGamma(ScaleGamma):
    def backward(self, dY):
        self.grads["gamma"] = (dY * self.X).sum(axis=0)
        return dY  # BUG: the factor gamma forward multiplies X by is missing (was "the activation's derivative")


class ScaleSeed:
    """Y = X * self.s, the seed protocol (a weight without a gradient, backward returns dX alone)."""

    ADAPT = True

    def __init__(self, D=4):
        self.s = np.random.default_rng(1).uniform(0.5, 2.0, D)

    def forward(self, X):
        return X * self.s

    def backward(self, dY):
        return dY * self.s


class ScaleSeedNoS(ScaleSeed):
    def backward(self, dY):
        return dY  # BUG: dY * self.s
