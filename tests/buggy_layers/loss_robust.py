"""A Huber loss (delta 1) whose backward returns the residual unclipped (session 16, tester15b HuberBug), checked as
``gradcheck check --loss`` checks it on real data. ``LOSS``: the shape of y_pred; ``LOSS_DATA``:
``(--targets, --pred)``."""

import numpy as np

LOSS = (6, 4)
LOSS_DATA = ("real", "real")


class Huber:
    def forward(self, y_pred, y_true):
        self.r = y_pred - y_true
        a = np.abs(self.r)
        return np.mean(np.where(a <= 1, 0.5 * self.r**2, a - 0.5))

    def backward(self):
        return np.clip(self.r, -1, 1) / self.r.size


class HuberNoClip(Huber):
    def backward(self):
        return self.r / self.r.size  # BUG: beyond delta the derivative is sign(r), not r
