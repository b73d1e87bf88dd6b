"""Huber (delta) and smooth L1 (beta, PyTorch's SmoothL1Loss) losses whose backward gets one branch's factor wrong
(session 22): smooth L1's quadratic branch 0.5 r**2 / beta differentiated as r (the 1/beta forgotten), Huber's linear
branch delta (|r| - delta / 2) differentiated as sign(r) (delta forgotten); and each loss's correct twin. Real
predictions and targets of shape ``LOSS`` (``LOSS_DATA``: ``(--targets, --pred)``)."""

import numpy as np

LOSS = (6, 4)
LOSS_DATA = ("real", "real")


class SmoothL1Beta:
    """mean(0.5 r**2 / beta where |r| < beta, else |r| - 0.5 beta), beta 0.5 (torch.nn.SmoothL1Loss(beta=0.5))."""

    def __init__(self, beta=0.5):
        self.beta = beta

    def forward(self, y_pred, y_true):
        self.r = y_pred - y_true
        a = np.abs(self.r)
        return np.mean(np.where(a < self.beta, 0.5 * self.r**2 / self.beta, a - 0.5 * self.beta))

    def backward(self):
        return np.where(np.abs(self.r) < self.beta, self.r / self.beta, np.sign(self.r)) / self.r.size


class SmoothL1BetaNoBeta(SmoothL1Beta):
    def backward(self):
        return np.where(np.abs(self.r) < self.beta, self.r, np.sign(self.r)) / self.r.size  # BUG: r, not r / beta


class HuberDelta:
    """mean(0.5 r**2 where |r| <= delta, else delta (|r| - 0.5 delta)), delta 0.7 (torch.nn.HuberLoss(delta=0.7))."""

    def __init__(self, delta=0.7):
        self.delta = delta

    def forward(self, y_pred, y_true):
        self.r = y_pred - y_true
        a = np.abs(self.r)
        return np.mean(np.where(a <= self.delta, 0.5 * self.r**2, self.delta * (a - 0.5 * self.delta)))

    def backward(self):
        return np.clip(self.r, -self.delta, self.delta) / self.r.size


class HuberDeltaSignOnly(HuberDelta):
    def backward(self):
        r = self.r
        return np.where(np.abs(r) <= self.delta, r, np.sign(r)) / r.size  # BUG: beyond delta, delta * sign(r)
