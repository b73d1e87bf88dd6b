"""A forward without a training argument that changes state the next call reads (tester14 #4): a call counter
annealing a temperature. Named forward-changes-state, with the attributes it changes, not a BatchNorm's running
statistics; its twin keeps the temperature fixed."""

import numpy as np

INPUT = (4, 5)


class AnnealedTanh:
    """Y = tanh(X s), s = 1 / (1 + 0.001 t) fixed (t set outside forward)."""

    ADAPT = True

    def __init__(self):
        self.t = 0
        self.s = 1.0

    def forward(self, X):
        self.X = X
        return np.tanh(X * self.s)

    def backward(self, dY):
        return dY * (1 - np.tanh(self.X * self.s) ** 2) * self.s


class AnnealedTanhCounts(AnnealedTanh):
    def forward(self, X):
        self.t += 1  # BUG: every call anneals s, so two calls on the same input differ
        self.s = 1.0 / (1 + 0.001 * self.t)
        return super().forward(X)


class CenterRunningMean:
    """Y = X - mean(X, axis=0): the batch's own mean."""

    ADAPT = True

    def __init__(self):
        self.mean = None

    def forward(self, X):
        self.mean = X.mean(axis=0)
        return X - self.mean

    def backward(self, dY):
        return dY - dY.mean(axis=0)


class CenterRunningMeanEMA(CenterRunningMean):
    def forward(self, X):
        m = X.mean(axis=0)  # BUG: the output reads an EMA of earlier calls' means (tester19s EMAState): two calls on
        self.mean = m if self.mean is None else 0.9 * self.mean + 0.1 * m  # the same input agree (a fixed point)
        return X - self.mean
