"""Session 20 (session 19's leftover 3): attention whose softmax backward keeps only the Jacobian's diagonal, Mish
whose backward takes the cached output for the input, and a strided convolution whose col2im assigns (=) where
overlapping windows must add (+=)."""

import numpy as np

from .tester19 import Attention

INPUT = (4, 5)


class SDPASoftmaxDiag(Attention):
    """softmax(Q K^T / sqrt(d)) V (tester19's), the softmax's backward p * (1 - p) * dP."""

    INPUT = [(2, 3, 4), (2, 3, 4), (2, 3, 4)]

    def backward(self, dO):
        dV = self.P.swapaxes(-1, -2) @ dO
        dP = dO @ self.V.swapaxes(-1, -2)
        dS = self.P * (1 - self.P) * dP * self.s  # BUG: the Jacobian's diagonal only, p * (dP - sum(p * dP)) due
        return dS @ self.K, dS.swapaxes(-1, -2) @ self.Q, dV


def _mish(x):
    return x * np.tanh(np.log1p(np.exp(x)))


def _mish_grad(x):
    sp, s = np.log1p(np.exp(x)), 1 / (1 + np.exp(-x))
    t = np.tanh(sp)
    return t + x * (1 - t**2) * s


class Mish:
    """Y = x tanh(softplus(x))."""

    ADAPT = True

    def forward(self, X):
        self.X = X
        self.out = _mish(X)
        return self.out

    def backward(self, dY):
        return dY * _mish_grad(self.X)


class MishTwice(Mish):
    def backward(self, dY):
        x = self.out  # BUG: the cached output taken for the input: f'(f(x)) * dY
        return dY * _mish_grad(x)


class ConvStrided:
    """Conv2D, kernel 3, stride 2, no padding (overlapping windows), im2col and its col2im as loops."""

    INPUT = (2, 2, 7, 7)
    ADAPT = True

    def __init__(self, C=2, F=3, k=3, stride=2):
        rng = np.random.default_rng(0)
        self.W, self.b = 0.5 * rng.standard_normal((F, C, k, k)), rng.standard_normal(F)
        self.k, self.s = k, stride

    def forward(self, X):
        k, s = self.k, self.s
        N, C, H, W_ = X.shape
        self.X, self.Ho, self.Wo = X, (H - k) // s + 1, (W_ - k) // s + 1
        self.cols = np.stack([X[:, :, i * s:i * s + k, j * s:j * s + k].reshape(N, -1)
                              for i in range(self.Ho) for j in range(self.Wo)], axis=1)  # (N, Ho*Wo, C*k*k)
        out = self.cols @ self.W.reshape(len(self.W), -1).T + self.b  # (N, Ho*Wo, F)
        return out.transpose(0, 2, 1).reshape(N, -1, self.Ho, self.Wo)

    def backward(self, dY):
        N, F = dY.shape[:2]
        d = dY.reshape(N, F, -1).transpose(0, 2, 1)  # (N, Ho*Wo, F)
        self.dW = np.einsum("npf,npk->fk", d, self.cols).reshape(self.W.shape)
        self.db = d.sum(axis=(0, 1))
        dcols = d @ self.W.reshape(F, -1)  # (N, Ho*Wo, C*k*k)
        return self.col2im(dcols)

    def col2im(self, dcols):
        k, s = self.k, self.s
        dX = np.zeros_like(self.X)
        for i in range(self.Ho):
            for j in range(self.Wo):
                dX[:, :, i * s:i * s + k, j * s:j * s + k] += dcols[:, i * self.Wo + j].reshape(dX.shape[:2] + (k, k))
        return dX


class ConvStridedCol2imAssign(ConvStrided):
    def col2im(self, dcols):
        k, s = self.k, self.s
        dX = np.zeros_like(self.X)
        for i in range(self.Ho):
            for j in range(self.Wo):  # BUG: = where += is due: overlapping windows (stride 2 < kernel 3)
                dX[:, :, i * s:i * s + k, j * s:j * s + k] = dcols[:, i * self.Wo + j].reshape(dX.shape[:2] + (k, k))
        return dX
