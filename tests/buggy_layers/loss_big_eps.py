"""A cross-entropy on probabilities whose backward divides by ``p + eps`` (session 16, tester15b M1 and L3), checked
as ``gradcheck check --loss --pred probs --targets onehot`` checks it: a float guard of 1e-7 (at most the check's
rtol) is read as 0 and PASSes with a NOTE; a 1e-3 beside a forward with no eps, or a 1e-2 beside forward's
``log(p + 1e-7)``, moves the gradient beyond the tolerance even at probabilities of order 1 and FAILs, named.
``LOSS``: the shape of y_pred; ``LOSS_DATA``: ``(--targets, --pred)``."""

import numpy as np

LOSS = (6, 4)
LOSS_DATA = ("onehot", "probs")


class CEGuard:
    def forward(self, y_pred, y_true):
        self.p, self.t = y_pred, y_true
        return -np.sum(y_true * np.log(y_pred)) / y_pred.shape[0]

    def backward(self):
        return -self.t / (self.p + 1e-7) / self.p.shape[0]  # a float guard: read as 0


class CEMilliEps(CEGuard):
    def backward(self):
        return -self.t / (self.p + 1e-3) / self.p.shape[0]  # BUG: 1e-3 moves the gradient by up to 0.1% at p ~ 1


class CEEpsDiffer(CEGuard):
    def forward(self, y_pred, y_true):
        self.p, self.t = y_pred, y_true
        return -np.sum(y_true * np.log(y_pred + 1e-7)) / y_pred.shape[0]

    def backward(self):
        return -self.t / (self.p + 1e-2) / self.p.shape[0]  # BUG: backward's eps is not forward's
