"""Loss classes with a small constant inside forward's log, checked as ``gradcheck check --loss --targets labels``
checks them (session 14, tester14): Deep Learning from Scratch's ``SoftmaxWithLoss`` (``-log(y + 1e-7)``, backward
the gradient of ``-log(y)``) and a twin whose backward keeps the eps pass whichever seed draws the data (the copy of
forward without the eps is checked too); a sign or a factor wrong beside the eps fails. ``LOSS``: the shape of
y_pred; ``LOSS_DATA``: ``(--targets, --pred)``."""

import numpy as np

LOSS = (6, 4)
LOSS_DATA = ("labels", "real")


def softmax(x):
    x = x - np.max(x, axis=-1, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)


def cross_entropy_error(y, t):
    batch_size = y.shape[0]
    return -np.sum(np.log(y[np.arange(batch_size), t] + 1e-7)) / batch_size


class SoftmaxWithLoss:
    def forward(self, x, t):
        self.t, self.y = t, softmax(x)
        return cross_entropy_error(self.y, self.t)

    def backward(self, dout=1):
        dx = self.y.copy()
        dx[np.arange(len(self.t)), self.t] -= 1
        return dx / len(self.t) * dout


class SoftmaxWithLossKeepsEps(SoftmaxWithLoss):
    def backward(self, dout=1):
        n = len(self.t)
        yt = self.y[np.arange(n), self.t]
        w = yt / (yt + 1e-7)  # the derivative of -log(y + 1e-7), as forward has it
        dx = self.y * w[:, None]
        dx[np.arange(n), self.t] -= w
        return dx / n * dout


class SoftmaxWithLossEpsSign(SoftmaxWithLoss):
    def backward(self, dout=1):
        dx = self.y.copy()
        dx[np.arange(len(self.t)), self.t] -= 1
        return -dx / len(self.t) * dout  # BUG: the sign


class SoftmaxWithLossEpsFactor(SoftmaxWithLoss):
    def backward(self, dout=1):
        dx = self.y.copy()
        dx[np.arange(len(self.t)), self.t] -= 1
        return 2 * dx / len(self.t) * dout  # BUG: a factor 2
