"""Session 18's tester's bugs (fixer fixt18, tester18s's mine/*.py): a CS231n word embedding pair assigning
``dW[x] += dout``, a dropout mask scale beside a coincidental 1/N, derivatives given the input, leaky slopes,
a skip path, an RNN step's next_h, 1/T, an average pool's area, a batch norm's eps dropped in backward and a group
norm's missing paths."""

import numpy as np

INPUT = (4, 6)
IDS = np.array([[0, 3, 1, 4], [4, 0, 2, 2], [5, 5, 1, 0]])
INPUTS = {"wordemb": [IDS, (6, 5)], "wordembbuffered": [IDS, (6, 5)], "taffine": [(2, 3, 4), (4, 5), (5,)],
          "taffinemeant": [(2, 3, 4), (4, 5), (5,)]}


def wordemb_forward(x, W):
    return W[x], (x, W)


def wordemb_backward(dout, cache):
    x, W = cache
    dW = np.zeros_like(W)
    np.add.at(dW, x, dout)
    return dW


def wordembbuffered_forward(x, W):
    return W[x], (x, W)


def wordembbuffered_backward(dout, cache):
    x, W = cache
    dW = np.zeros_like(W)
    dW[x] += dout  # BUG: buffered, the last occurrence of a repeated id wins
    return dW


class DropoutScale:
    """Inverted dropout, checked in training mode on a batch of 4 (a mask scale 1/4 of the right one looked 1/N)."""

    INPUT, KWARGS = (4, 6), {"training": True}

    def __init__(self, p=0.5):
        self.p = p

    def forward(self, x, training=False):
        if training:
            self.mask = (np.random.rand(*x.shape) > self.p) / (1 - self.p)
            return x * self.mask
        self.mask = np.ones_like(x)
        return x

    def backward(self, dy):
        return dy * self.mask


class DropoutWrongScale(DropoutScale):
    def backward(self, dy):
        return dy * (self.mask > 0) * (1 - self.p)  # BUG: (1 - p) where forward's 1 / (1 - p) is due


class Tanh:
    def forward(self, x, training=False):
        self.x, self.out = x, np.tanh(x)
        return self.out

    def backward(self, dy):
        return dy * (1 - self.out ** 2)


class SigmoidCachedInput(Tanh):
    def forward(self, x, training=False):
        self.x, self.out = x, 1 / (1 + np.exp(-x))
        return self.out

    def backward(self, dy):
        return dy * self.x * (1 - self.x)  # BUG: the input where the output is due


class LeakyRelu:
    def forward(self, x, training=False):
        self.x = x
        return np.where(x > 0, x, 0.01 * x)

    def backward(self, dy):
        return dy * np.where(self.x > 0, 1.0, 0.01)


class LeakyReluSlopes(LeakyRelu):
    def backward(self, dy):
        return dy * np.where(self.x > 0, 1.0, 0.1)  # BUG: 0.1 where forward's slope is 0.01


class ResidualBlock:
    INPUT = (3, 4)

    def __init__(self, D=4):
        rng = np.random.default_rng(3)
        self.params = {"W1": rng.standard_normal((D, D)) * 0.5, "W2": rng.standard_normal((D, D)) * 0.5}
        self.grads = {}

    def forward(self, x, training=False):
        self.x = x
        self.h = np.maximum(0, x @ self.params["W1"])
        return x + self.h @ self.params["W2"]

    def backward(self, dy):
        self.grads["W2"] = self.h.T @ dy
        dh = dy @ self.params["W2"].T * (self.h > 0)
        self.grads["W1"] = self.x.T @ dh
        return dy + dh @ self.params["W1"].T


class ResidualBlockNoSkip(ResidualBlock):
    def backward(self, dy):
        dx = super().backward(dy)
        return dx - dy  # BUG: the skip path's dy missing from dX


def taffine_forward(x, w, b):
    return np.einsum("ntd,dm->ntm", x, w) + b, (x, w, b)


def taffine_backward(dout, cache):
    x, w, b = cache
    return np.einsum("ntm,dm->ntd", dout, w), np.einsum("ntd,ntm->dm", x, dout), dout.sum(axis=(0, 1))


def taffinemeant_forward(x, w, b):
    return taffine_forward(x, w, b)


def taffinemeant_backward(dout, cache):
    dx, dw, db = taffine_backward(dout, cache)
    return dx, dw, db / cache[0].shape[1]  # BUG: divides by T


class AvgPool2x2:
    INPUT = (2, 2, 4, 4)

    def forward(self, x, training=False):
        N, C, H, W = x.shape
        return x.reshape(N, C, H // 2, 2, W // 2, 2).mean(axis=(3, 5))

    def backward(self, dy):
        return np.repeat(np.repeat(dy, 2, axis=2), 2, axis=3) / 4


class AvgPool2x2NoArea(AvgPool2x2):
    def backward(self, dy):
        return np.repeat(np.repeat(dy, 2, axis=2), 2, axis=3)  # BUG: the 1/4 of the window's area missing


class RNNStepTwo:
    """A vanilla RNN step, forward(x, prev_h), its weights as attributes."""

    INPUT, ADAPT = [(2, 3), (2, 4)], True  # attribute style: adapted as the CLI adapts it

    def __init__(self, D=3, H=4):
        rng = np.random.default_rng(10)
        self.Wx, self.Wh, self.b = rng.standard_normal((D, H)) * 0.5, rng.standard_normal((H, H)) * 0.5, np.zeros(H)

    def forward(self, x, h, training=False):
        self.x, self.h = x, h
        self.hn = np.tanh(x @ self.Wx + h @ self.Wh + self.b)
        return self.hn

    def backward(self, dh):
        da = dh * (1 - self.hn ** 2)
        self.dWx, self.dWh, self.db = self.x.T @ da, self.h.T @ da, da.sum(0)
        return da @ self.Wx.T, da @ self.Wh.T


class RNNStepNextH(RNNStepTwo):
    def backward(self, dh):
        dx, dprev = super().backward(dh)
        self.dWh = self.hn.T @ (dh * (1 - self.hn ** 2))  # BUG: next_h where prev_h is due
        return dx, dprev


class BNEps:
    INPUT = (6, 4)

    def __init__(self, D=4):
        self.gamma, self.beta = np.ones(D), np.zeros(D)

    def forward(self, x, training=False):
        self.var = x.var(0)
        self.xhat = (x - x.mean(0)) / np.sqrt(self.var + 1e-5)
        return self.gamma * self.xhat + self.beta

    def backward(self, dy):
        N, dxh = dy.shape[0], dy * self.gamma
        self.dgamma, self.dbeta = (dy * self.xhat).sum(0), dy.sum(0)
        return (N * dxh - dxh.sum(0) - self.xhat * (dxh * self.xhat).sum(0)) / (N * self.std())

    def std(self):
        return np.sqrt(self.var + 1e-5)


class BNEpsDropped(BNEps):
    def std(self):
        return np.sqrt(self.var)  # BUG: eps dropped in backward


class GroupNorm:
    INPUT = (2, 4, 3, 3)

    def __init__(self, C=4, G=2):
        self.G = G
        self.gamma, self.beta = np.linspace(0.5, 1.5, C).reshape(1, C, 1, 1), np.zeros((1, C, 1, 1))

    def forward(self, x, training=False):
        N = x.shape[0]
        xg = x.reshape(N, self.G, -1)
        self.inv = 1 / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)
        self.xhat = ((xg - xg.mean(-1, keepdims=True)) * self.inv).reshape(x.shape)
        return self.gamma * self.xhat + self.beta

    def backward(self, dy):
        N = dy.shape[0]
        self.dgamma, self.dbeta = (dy * self.xhat).sum(axis=(0, 2, 3), keepdims=True), dy.sum(axis=(0, 2, 3),
                                                                                             keepdims=True)
        dxh, xh = (dy * self.gamma).reshape(N, self.G, -1), self.xhat.reshape(N, self.G, -1)
        return self.paths(dxh, xh).reshape(dy.shape)

    def paths(self, dxh, xh):
        return self.inv * (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True))


class GroupNormNoPaths(GroupNorm):
    def paths(self, dxh, xh):
        return dxh * self.inv  # BUG: the mean and variance paths missing
