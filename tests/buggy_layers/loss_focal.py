"""A binary focal loss (gamma 2) on probabilities and 0/1 labels whose backward leaves out the derivative of the
modulating factor (1 - p_t)**2 (session 16, tester15b FocalBug). ``LOSS``: the shape of y_pred; ``LOSS_DATA``:
``(--targets, --pred)``."""

import numpy as np

LOSS = (8, 1)
LOSS_DATA = ("labels:2", "unit")


class Focal:
    def forward(self, y_pred, y_true):
        self.y = y_true
        self.pt = np.where(y_true == 1, y_pred, 1 - y_pred)
        return -np.mean((1 - self.pt) ** 2 * np.log(self.pt))

    def backward(self):
        pt = self.pt
        dpt = 2 * (1 - pt) * np.log(pt) - (1 - pt) ** 2 / pt
        return dpt * np.where(self.y == 1, 1.0, -1.0) / pt.size


class FocalFactorConstant(Focal):
    def backward(self):
        pt = self.pt
        dpt = -((1 - pt) ** 2) / pt  # BUG: the factor (1 - pt)**2 treated as a constant
        return dpt * np.where(self.y == 1, 1.0, -1.0) / pt.size
