"""Unnamed loss classes ``forward(a, b)`` on data of two kinds, checked as ``gradcheck check --loss --pred real
--targets onehot`` checks them (session 15): logits beside one-hot targets, in either argument order. The order is
read from the data (L is affine in the target, not in the prediction), never from backward's result, so a backward
that differentiates the target (the planted bugs) is named and fails in both orders, and the correct twins pass.
``LOSS``: the shape of y_pred; ``LOSS_DATA``: ``(--targets, --pred)``."""

import numpy as np

LOSS = (6, 4)
LOSS_DATA = ("onehot", "real")


def _log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


class LogitsFirst:
    """L = -mean_n sum_k t log softmax(z): forward(z, t), logits first."""

    def forward(self, a, b):
        self.ls, self.t = _log_softmax(a), b
        return -np.sum(b * self.ls) / len(a)

    def backward(self):
        return (np.exp(self.ls) - self.t) / len(self.ls)


class TargetsFirst:
    """The same loss as forward(t, z), Keras's order."""

    def forward(self, a, b):
        self.ls, self.t = _log_softmax(b), a
        return -np.sum(a * self.ls) / len(b)

    def backward(self):
        return (np.exp(self.ls) - self.t) / len(self.ls)


class LogitsFirstTargetGrad(LogitsFirst):
    def backward(self):
        return -self.ls / len(self.ls)  # BUG: dL/dt, the target's gradient


class TargetsFirstTargetGrad(TargetsFirst):
    def backward(self):
        return -self.ls / len(self.ls)  # BUG: dL/dt, the target's gradient
