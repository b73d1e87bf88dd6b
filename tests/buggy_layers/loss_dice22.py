"""A soft Dice loss, 1 - (2 sum(p t) + s) / (sum(p) + sum(t) + s), smooth s = 1 (V-Net's and segmentation courses'
form), whose backward differentiates only the numerator (the quotient rule's denominator term forgotten), and a
per-sample Dice (the mean over the batch of each row's) with the same bug (session 22); each with its correct twin.
Probabilities and 0/1 masks of shape ``LOSS``."""

import numpy as np

LOSS = (4, 6)
LOSS_DATA = ("labels:2", "unit")


class Dice:
    smooth = 1.0

    def forward(self, y_pred, y_true):
        self.p, self.t = y_pred, y_true.astype(float)
        self.num = 2 * np.sum(self.p * self.t) + self.smooth
        self.den = np.sum(self.p) + np.sum(self.t) + self.smooth
        return 1 - self.num / self.den

    def backward(self):
        return -(2 * self.t * self.den - self.num) / self.den**2


class DiceNoDenominator(Dice):
    def backward(self):
        return -2 * self.t / self.den  # BUG: d(num)/dp / den alone: the denominator's derivative forgotten


class DicePerSample:
    smooth = 1.0

    def forward(self, y_pred, y_true):
        self.p, self.t = y_pred, y_true.astype(float)
        self.num = 2 * np.sum(self.p * self.t, axis=1, keepdims=True) + self.smooth
        self.den = np.sum(self.p, axis=1, keepdims=True) + np.sum(self.t, axis=1, keepdims=True) + self.smooth
        return np.mean(1 - self.num / self.den)

    def backward(self):
        return -(2 * self.t * self.den - self.num) / self.den**2 / self.p.shape[0]


class DicePerSampleNoDenominator(DicePerSample):
    def backward(self):
        return -2 * self.t / self.den / self.p.shape[0]  # BUG: the denominator's derivative forgotten
