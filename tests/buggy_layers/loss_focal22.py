"""A binary focal loss with alpha (RetinaNet's -alpha_t (1 - p_t)**gamma log(p_t), alpha_t = alpha where y = 1 and
1 - alpha where y = 0; gamma 2, alpha 0.25) whose backward: holds the modulating factor constant, weights both classes
by alpha, or leaves alpha_t out (session 22); and its correct twin. Probabilities and 0/1 labels of shape ``LOSS``."""

import numpy as np

LOSS = (10, 1)
LOSS_DATA = ("labels:2", "unit")


class FocalAlpha:
    def __init__(self, gamma=2.0, alpha=0.25):
        self.gamma, self.alpha = gamma, alpha

    def forward(self, y_pred, y_true):
        self.y = y_true
        self.pt = np.where(y_true == 1, y_pred, 1 - y_pred)
        self.at = np.where(y_true == 1, self.alpha, 1 - self.alpha)
        return -np.mean(self.at * (1 - self.pt) ** self.gamma * np.log(self.pt))

    def _dpt(self):
        pt, g = self.pt, self.gamma
        return g * (1 - pt) ** (g - 1) * np.log(pt) - (1 - pt) ** g / pt

    def backward(self):
        return self.at * self._dpt() * np.where(self.y == 1, 1.0, -1.0) / self.pt.size


class FocalAlphaFactorConstant(FocalAlpha):
    def backward(self):
        dpt = -((1 - self.pt) ** self.gamma) / self.pt  # BUG: the factor (1 - p_t)**gamma treated as a constant
        return self.at * dpt * np.where(self.y == 1, 1.0, -1.0) / self.pt.size


class FocalAlphaBothClasses(FocalAlpha):
    def backward(self):
        return self.alpha * self._dpt() * np.where(self.y == 1, 1.0, -1.0) / self.pt.size  # BUG: alpha, not alpha_t


class FocalAlphaDropped(FocalAlpha):
    def backward(self):
        return self._dpt() * np.where(self.y == 1, 1.0, -1.0) / self.pt.size  # BUG: alpha_t left out
