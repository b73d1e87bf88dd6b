"""Layers of two outputs (a class forward(x) -> (h, z) with backward(dh, dz), a CS231n pair of two outputs and a
cache) whose backward ignores one output's upstream gradient (session 17, TwoOutIgnore)."""

import numpy as np

INPUT = (4, 5)
INPUTS = {"twoout": [(4, 5), (5, 3)], "twooutnodz": [(4, 5), (5, 3)]}


class TwoOut:
    """h = tanh(x @ W), z = 2 x @ W: two outputs of one shape."""

    ADAPT = True  # read as `gradcheck check` reads it: the two outputs joined on the probe input

    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((5, 3))
        self.dW = np.zeros_like(self.W)

    def forward(self, x):
        self.x = x
        return np.tanh(x @ self.W), 2.0 * (x @ self.W)

    def backward(self, dh, dz):
        da = self.da(dh, dz)
        self.dW = self.x.T @ da
        return da @ self.W.T

    def da(self, dh, dz):
        return dh * (1 - np.tanh(self.x @ self.W) ** 2) + 2.0 * dz


class TwoOutIgnore(TwoOut):
    def da(self, dh, dz):
        return dh * (1 - np.tanh(self.x @ self.W) ** 2)  # BUG: dz, the second output's gradient, ignored


def twoout_forward(x, w):
    a = x @ w
    return np.tanh(a), a.sum(axis=1), (x, w, a)


def twoout_backward(dh, ds, cache):
    x, w, a = cache
    da = dh * (1 - np.tanh(a) ** 2) + ds[:, None]
    return da @ w.T, x.T @ da


twooutnodz_forward = twoout_forward


def twooutnodz_backward(dh, ds, cache):
    x, w, a = cache
    da = dh * (1 - np.tanh(a) ** 2)  # BUG: ds, the row sums' gradient, ignored
    return da @ w.T, x.T @ da
