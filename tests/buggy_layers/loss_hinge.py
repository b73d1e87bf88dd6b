"""CS231n's multiclass SVM loss (the hinge ``max(0, s_j - s_y + 1)`` summed over the wrong classes, averaged over the
batch) as a loss class, checked as ``gradcheck check --loss --targets labels`` checks it (session 16, tester15 L3):
the correct class's entry of the gradient is minus the number of classes whose margin is positive; a backward that
subtracts 1 there instead, or forgets the 1/N, fails with its bug named. ``LOSS``: the shape of the scores;
``LOSS_DATA``: ``(--targets, --pred)``."""

import numpy as np

LOSS = (6, 5)
LOSS_DATA = ("labels", "real")


class SVMLoss:
    def forward(self, x, y):
        self.x, self.y = x, y
        N = x.shape[0]
        correct = x[np.arange(N), y][:, None]
        margins = np.maximum(0, x - correct + 1.0)
        margins[np.arange(N), y] = 0
        self.margins = margins
        return margins.sum() / N

    def backward(self):
        N = self.x.shape[0]
        dx = (self.margins > 0).astype(float)
        dx[np.arange(N), self.y] -= (self.margins > 0).sum(axis=1)
        return dx / N


class SVMLossMinusOne(SVMLoss):
    def backward(self):
        N = self.x.shape[0]
        dx = (self.margins > 0).astype(float)
        dx[np.arange(N), self.y] -= 1  # BUG: minus the count of positive margins is due, not 1
        return dx / N


class SVMLossNoCount(SVMLoss):
    def backward(self):
        N = self.x.shape[0]
        dx = (self.margins > 0).astype(float)  # BUG: the correct class's entry -count never subtracted
        return dx / N


class SVMLossNoMean(SVMLoss):
    def backward(self):
        N = self.x.shape[0]
        dx = (self.margins > 0).astype(float)
        dx[np.arange(N), self.y] -= (self.margins > 0).sum(axis=1)
        return dx  # BUG: the 1/N of the batch mean missing
