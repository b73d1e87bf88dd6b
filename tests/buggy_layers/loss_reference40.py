"""Softmax cross-entropy losses checked against a reference loss, as ``gradcheck check --loss --targets labels
--reference manualprop.SoftmaxCrossEntropy`` checks them (session 40, verify39 F6): a loss summed over the batch has a
gradient right for its own forward, so central differences alone pass it; the reference's L and gradient, both N times
smaller, name the sum. ``LOSS``: the shape of y_pred; ``LOSS_DATA``: ``(--targets, --pred)``; ``REFERENCE``: the
reference each class is checked against."""

import numpy as np

import manualprop as mp

LOSS = (6, 5)
LOSS_DATA = ("labels", "real")


class CEMean:
    def forward(self, y_pred, y_true):
        z = y_pred - y_pred.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        self.p, self.y = np.exp(logp), y_true
        return -logp[np.arange(len(y_true)), y_true].mean()

    def backward(self):
        d = self.p.copy()
        d[np.arange(len(self.y)), self.y] -= 1
        return d / len(self.y)


class CESum(CEMean):
    def forward(self, y_pred, y_true):
        return super().forward(y_pred, y_true) * len(y_true)  # BUG: a sum over the batch, the reference's a mean

    def backward(self):
        return super().backward() * len(self.y)  # (right for that forward)


REFERENCE = {"CEMean": mp.SoftmaxCrossEntropy, "CESum": mp.SoftmaxCrossEntropy}
