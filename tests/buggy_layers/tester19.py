"""Session 19's tester's bugs (fixer fixs19, tester19s's repro/*.py): attention whose backward omits the
1/sqrt(d_k) scale at a batch of 2 (d_k = 4: the factor is the batch size too)."""

import numpy as np

INPUT = [(2, 3, 4), (2, 3, 4), (2, 3, 4)]


def _softmax(S):
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class Attention:
    """softmax(Q K^T / sqrt(d)) V over a batch of sequences."""

    ADAPT = True

    def forward(self, Q, K, V):
        self.Q, self.K, self.V = Q, K, V
        self.s = 1 / np.sqrt(Q.shape[-1])
        self.P = _softmax(Q @ K.swapaxes(-1, -2) * self.s)
        return self.P @ V

    def backward(self, dO):
        dV = self.P.swapaxes(-1, -2) @ dO
        dP = dO @ self.V.swapaxes(-1, -2)
        dS = self.P * (dP - (dP * self.P).sum(-1, keepdims=True)) * self.s
        return dS @ self.K, dS.swapaxes(-1, -2) @ self.Q, dV


class AttentionNoScaleBwd(Attention):
    def backward(self, dO):
        dV = self.P.swapaxes(-1, -2) @ dO
        dP = dO @ self.V.swapaxes(-1, -2)
        dS = self.P * (dP - (dP * self.P).sum(-1, keepdims=True))  # BUG: * self.s missing
        return dS @ self.K, dS.swapaxes(-1, -2) @ self.Q, dV


class RoundedLinear:
    """Y = round(X) W: piecewise constant in X, so dX = 0."""

    INPUT = (4, 5)
    ADAPT = True

    def __init__(self):
        self.W = np.random.default_rng(0).normal(size=(5, 3))
        self.dW = np.zeros_like(self.W)

    def forward(self, X):
        self.X = X
        return np.round(X) @ self.W

    def backward(self, dY):
        self.dW = np.round(self.X).T @ dY
        return np.zeros_like(self.X)


class RoundedLinearDx(RoundedLinear):
    def backward(self, dY):
        super().backward(dY)
        return dY @ self.W.T  # BUG: the gradient of X @ W, but round(X) is flat in X (tester19s IntInput)


class LogSoftmax:
    """Y = log softmax(X) over axis 1."""

    INPUT = (4, 5)
    ADAPT = True

    def forward(self, X):
        m = X.max(axis=1, keepdims=True)
        self.out = X - m - np.log(np.exp(X - m).sum(axis=1, keepdims=True))
        return self.out

    def backward(self, dY):
        return dY - np.exp(self.out) * dY.sum(axis=1, keepdims=True)


class LogSoftmaxAxis0(LogSoftmax):
    def backward(self, dY):
        return dY - np.exp(self.out) * dY.sum(axis=0, keepdims=True)  # BUG: axis 0, forward's sum is over axis 1


class GeluTanh:
    """Y = GELU(X), tanh-approximated."""

    INPUT = (4, 5)
    ADAPT = True

    def forward(self, X):
        self.X = X
        self.t = np.tanh(np.sqrt(2 / np.pi) * (X + 0.044715 * X**3))
        return 0.5 * X * (1 + self.t)

    def backward(self, dY):
        X, t = self.X, self.t
        return dY * (0.5 * (1 + t) + 0.5 * X * (1 - t**2) * np.sqrt(2 / np.pi) * (1 + 3 * 0.044715 * X**2))


class GeluTanhErfBackward(GeluTanh):
    def backward(self, dY):
        from scipy.special import erf

        X = self.X  # BUG: the exact GELU's derivative for the tanh-approximated forward
        return dY * (0.5 * (1 + erf(X / np.sqrt(2))) + X * np.exp(-X * X / 2) / np.sqrt(2 * np.pi))


INPUTS = {"convlate": [(2, 2, 5, 5), (3, 2, 3, 3), (3,)]}
INIT = {"convlate": {"conv_param": {"stride": 1, "pad": 1}}}


def convlate_forward(x, w, b, conv_param):
    from .tester17 import conv_forward

    return conv_forward(x, w, b, conv_param)


def convlate_backward(dout, cache):
    from .tester17 import _conv_grads

    dxp, dw, db, pad = _conv_grads(dout, cache)
    H, W = cache[0].shape[2:]
    return dxp[:, :, pad + 1:pad + 1 + H, pad + 1:pad + 1 + W], dw, db  # BUG: the crop one too late (tester19s)
