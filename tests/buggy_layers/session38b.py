"""Session 38 (fix38b, corpus37 F6): a conv or pool backward whose loop over output positions stops early.

``for i in range(H_out - 1)`` or a ``break`` in the loop over output rows: dX (and dW) right in the first rows of
output positions, zero beyond. It was "no known bug pattern".
"""

import numpy as np

from .conv import ConvNaive
from .pool_embed_rnn import MaxPool
from .session36 import LSTMCellTorch

INPUT = (3, 2, 4, 4)


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
    """A ``break`` after the first output row (meant for a debug print, left in)."""

    INPUT = (2, 2, 8, 8)

    def backward(self, dout):
        dX = np.zeros_like(self.X)
        for n in range(dout.shape[0]):
            for c in range(dout.shape[1]):
                for i in range(dout.shape[2]):
                    for j in range(dout.shape[3]):
                        r, s = divmod(np.argmax(self.X[n, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2]), 2)
                        dX[n, c, 2 * i + r, 2 * j + s] = dout[n, c, i, j]
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
