"""Session 38 (fix38b, corpus37 F6): a conv or pool backward whose loop over output positions stops early.

``for i in range(H_out - 1)`` or a ``break`` in the loop over output rows: dX (and dW) right in the first rows of
output positions, zero beyond. It was "no known bug pattern". Beside them, session 37's leftovers: an LSTM step's
doubled dW_ih at a batch of 2 (fix37a's), and an LSTM step pair with one weight per gate on ``[x, h]`` (``Wf``, ``Wi``,
``Wo``, ``Wg`` of shape (D + H, H); fix37h's), not recognised as an LSTM step: its doubled dx was told attention's
1/sqrt(d_k).
"""

import numpy as np

from .conv import ConvNaive
from .pool_embed_rnn import MaxPool
from .session36 import LSTMCellTorch

INPUT = (3, 2, 4, 4)
#: the split-gate pairs' inputs: x (N, D), prev_h, prev_c (N, H), Wf, Wi, Wo, Wg (D + H, H), bf, bi, bo, bg (H,)
INPUTS = dict.fromkeys(("lstmsplit", "lstmsplitdx2"), [(2, 2), (2, 4), (2, 4), *[(6, 4)] * 4, *[(4,)] * 4])


class ConvRows(ConvNaive):
    """The naive convolution (one channel in, two out) with its loops over output rows and columns as methods (the
    control); forward without a mode, so one mode is checked."""

    INPUT = (2, 1, 3, 3)

    def __init__(self):
        super().__init__(C=1, F=2)

    def forward(self, X):
        return super().forward(X)

    def rows(self, dout):
        return range(dout.shape[2])

    def columns(self, dout):
        return range(dout.shape[3])

    def backward(self, dout):
        W, k, p = self.params["W"], self.k, self.pad
        dxp, dW = np.zeros_like(self.xp), np.zeros_like(W)
        for n in range(dout.shape[0]):
            for i in self.rows(dout):
                for j in self.columns(dout):
                    g = dout[n, :, i, j]
                    dW += g[:, None, None, None] * self.xp[n, :, i:i + k, j:j + k]
                    dxp[n, :, i:i + k, j:j + k] += np.tensordot(g, W, axes=1)
        self.grads["W"] = dW
        self.grads["b"] = dout.sum(axis=(0, 2, 3))
        return dxp[:, :, p:-p, p:-p]


class ConvFirstRowOnly(ConvRows):
    def rows(self, dout):
        return range(1)  # BUG: the first output row alone (range(1) where range(H_out) is due)


class ConvRowsColsMissLast(ConvRows):
    def rows(self, dout):
        return range(dout.shape[2] - 1)  # BUG: range(H_out - 1)

    def columns(self, dout):
        return range(dout.shape[3] - 1)  # BUG: range(W_out - 1)


class MaxPoolRowBreak(MaxPool):
    """The windows of all samples and channels at once, a loop over the output's positions, and a ``break`` after the
    second output row (meant for a debug print, left in)."""

    INPUT = (2, 2, 8, 8)

    def backward(self, dout):
        dX = np.zeros_like(self.X)
        n, c = np.indices(dout.shape[:2])
        for i in range(dout.shape[2]):
            for j in range(dout.shape[3]):
                window = self.X[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2].reshape(*dout.shape[:2], 4)
                r, s = np.divmod(window.argmax(axis=2), 2)
                dX[n, c, 2 * i + r, 2 * j + s] = dout[:, :, i, j]
            if i == 1:
                break  # BUG: stops after the second output row
        return dX


class MaxPoolEight(MaxPool):
    """The correct pool on the same (2, 2, 8, 8) input."""

    INPUT = (2, 2, 8, 8)


class ConvReturnAfterRow(ConvRows):
    """A ``return`` inside the loops, after the first sample's first output row."""

    def backward(self, dout):
        W, k, p = self.params["W"], self.k, self.pad
        dxp, dW = np.zeros_like(self.xp), np.zeros_like(W)
        for n in range(dout.shape[0]):
            for i in range(dout.shape[2]):
                for j in range(dout.shape[3]):
                    g = dout[n, :, i, j]
                    dW += g[:, None, None, None] * self.xp[n, :, i:i + k, j:j + k]
                    dxp[n, :, i:i + k, j:j + k] += np.tensordot(g, W, axes=1)
                self.grads["W"], self.grads["b"] = dW, dout.sum(axis=(0, 2, 3))
                return dxp[:, :, p:-p, p:-p]  # BUG: indented into the loop over rows
        return None


class LSTMCellTorchDWih2(LSTMCellTorch):
    """fix37a's leftover: manualprop.LSTM's layout, one step at a batch of 2 (x (2, 2), h and c (2, 4)), dW_ih doubled;
    was "a 1/batch is missing" (session 37 told the doubled dx apart, not a parameter's)."""

    INPUT = [(2, 2), (2, 4), (2, 4)]

    def backward(self, dh, dc):
        out = super().backward(dh, dc)
        self.grads["W_ih"] = 2.0 * self.grads["W_ih"]  # BUG: dW_ih doubled
        return out


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def lstmsplit_forward(x, prev_h, prev_c, Wf, Wi, Wo, Wg, bf, bi, bo, bg):
    """One LSTM step, a weight per gate on [x, h] joined."""
    z = np.concatenate([x, prev_h], axis=1)
    f, i, o = sigmoid(z @ Wf + bf), sigmoid(z @ Wi + bi), sigmoid(z @ Wo + bo)
    g = np.tanh(z @ Wg + bg)
    next_c = f * prev_c + i * g
    return o * np.tanh(next_c), next_c, (z, prev_c, f, i, o, g, next_c, Wf, Wi, Wo, Wg)


def lstmsplit_backward(dnext_h, dnext_c, cache, factor=1.0):
    z, prev_c, f, i, o, g, next_c, Wf, Wi, Wo, Wg = cache
    tc = np.tanh(next_c)
    dc = dnext_c + dnext_h * o * (1 - tc ** 2)
    daf, dai, dao, dag = dc * prev_c * f * (1 - f), dc * g * i * (1 - i), dnext_h * tc * o * (1 - o), dc * i * (1 - g ** 2)
    dz = daf @ Wf.T + dai @ Wi.T + dao @ Wo.T + dag @ Wg.T
    D = z.shape[1] - prev_c.shape[1]
    return (factor * dz[:, :D], dz[:, D:], dc * f, z.T @ daf, z.T @ dai, z.T @ dao, z.T @ dag,
            daf.sum(0), dai.sum(0), dao.sum(0), dag.sum(0))


lstmsplitdx2_forward = lstmsplit_forward


def lstmsplitdx2_backward(dnext_h, dnext_c, cache):
    return lstmsplit_backward(dnext_h, dnext_c, cache, factor=2.0)  # BUG: dx doubled
