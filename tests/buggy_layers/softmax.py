"""Softmax over the last axis, and softmax + cross-entropy as one layer (mean over the batch)."""

import numpy as np

INPUT = (5, 4)


def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class Softmax:
    params, grads = {}, {}

    def forward(self, X, training=False):
        self.out = softmax(X)
        return self.out

    def backward(self, dY):
        s = self.out
        return s * (dY - np.sum(dY * s, axis=-1, keepdims=True))


class SoftmaxTwice(Softmax):
    def backward(self, dY):
        s = softmax(self.out)  # BUG: softmax of the cached output
        return s * (dY - np.sum(dY * s, axis=-1, keepdims=True))


class SoftmaxCrossEntropy:
    """loss = mean_n -log softmax(X)[n, y_n], returned as shape (1,)."""

    params, grads = {}, {}

    def __init__(self, y=(0, 2, 1, 3, 2)):
        self.y = np.array(y)

    def forward(self, X, training=False):
        self.p = softmax(X)
        n = len(X)
        return np.array([-np.log(self.p[np.arange(n), self.y]).mean()])

    def backward(self, dY):
        n = len(self.p)
        d = self.p.copy()
        d[np.arange(n), self.y] -= 1
        return dY[0] * d / n


class CrossEntropyNoMean(SoftmaxCrossEntropy):
    def backward(self, dY):
        return super().backward(dY) * len(self.p)  # BUG: the forward's 1/N is missing


class CrossEntropyIgnoresUpstream(SoftmaxCrossEntropy):
    def backward(self, dY):
        return super().backward(np.ones(1))  # BUG: "the loss is the last layer", dY dropped


class SoftmaxDiagonal(Softmax):
    def backward(self, dY):
        return dY * self.out * (1 - self.out)  # BUG: only the diagonal of the Jacobian


class SoftmaxAxis0(Softmax):
    def backward(self, dY):
        s = self.out
        return s * (dY - np.sum(dY * s, axis=0, keepdims=True))  # BUG: axis=0, the softmax is over axis -1


class SoftmaxPlusSum(Softmax):
    def backward(self, dY):
        s = self.out
        return s * (dY + np.sum(dY * s, axis=-1, keepdims=True))  # BUG: + where - is due


class CrossEntropySign(SoftmaxCrossEntropy):
    def backward(self, dY):
        n = len(self.p)
        d = -self.p.copy()
        d[np.arange(n), self.y] += 1  # BUG: y_onehot - p where p - y_onehot is due
        return dY[0] * d / n


class SoftmaxExpFloat32(Softmax):
    """verify8's V11a repro (SoftExp32): read as "at a kink" and noise until session 10."""

    def forward(self, X, training=False):
        e = np.exp(X - X.max(1, keepdims=True), dtype=np.float32).astype(np.float64)  # BUG: exp in float32
        self.out = e / e.sum(1, keepdims=True)
        return self.out
