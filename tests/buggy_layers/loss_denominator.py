"""Binary cross-entropy classes with an eps in backward's denominators, checked as ``gradcheck check --loss --pred
probs --targets onehot`` checks them (session 15): a backward ``-(y/(p + eps) - (1-y)/(1-p + eps))`` or
``(p - y)/(p(1-p) + eps)`` beside a forward with or without the eps in its log. Each correct class is the exact
derivative of the loss with the eps or without it and passes on every seed (the copy without the eps is checked
too); a factor or a sign wrong beside the eps fails and is named. ``LOSS``: the shape of y_pred; ``LOSS_DATA``:
``(--targets, --pred)``."""

import numpy as np

LOSS = (6, 4)
LOSS_DATA = ("onehot", "probs")
EPS = 1e-7


class BCENoEpsForward:
    """forward without the eps, backward with it in the denominators."""

    def forward(self, y_pred, y_true):
        self.p, self.y = y_pred, y_true
        return -np.mean(y_true * np.log(y_pred) + (1 - y_true) * np.log(1 - y_pred))

    def backward(self):
        p, y = self.p, self.y
        return -(y / (p + EPS) - (1 - y) / (1 - p + EPS)) / p.size


class BCEOneDenominator(BCENoEpsForward):
    """forward with the eps in its logs, backward (p - y)/(p(1 - p) + eps)."""

    def forward(self, y_pred, y_true):
        self.p, self.y = y_pred, y_true
        return -np.mean(y_true * np.log(y_pred + EPS) + (1 - y_true) * np.log(1 - y_pred + EPS))

    def backward(self):
        p, y = self.p, self.y
        return (p - y) / (p * (1 - p) + EPS) / p.size


class BCENoEpsForwardNoMean(BCENoEpsForward):
    def backward(self):
        p, y = self.p, self.y
        return -(y / (p + EPS) - (1 - y) / (1 - p + EPS))  # BUG: the mean's 1/size


class BCEOneDenominatorSign(BCEOneDenominator):
    def backward(self):
        p, y = self.p, self.y
        return (y - p) / (p * (1 - p) + EPS) / p.size  # BUG: the sign
