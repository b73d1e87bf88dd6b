"""A binary cross-entropy on logits with unnamed arguments ``forward(a, b)`` beside integer 0/1 labels of the
prediction's shape, checked as ``gradcheck check --loss --targets labels:2 --pred-arg a`` checks it (session 16,
tester15b LOW): a backward that returns L's gradient with respect to the labels is named as the target's gradient.
``LOSS``: the shape of y_pred; ``LOSS_DATA``: ``(--targets, --pred)``."""

import numpy as np

LOSS = (8, 1)
LOSS_DATA = ("labels:2", "real")


class BCELogits:
    PRED_ARG = "a"

    def forward(self, a, b):
        self.s, self.y = 1 / (1 + np.exp(-a)), b
        return -np.mean(b * np.log(self.s) + (1 - b) * np.log(1 - self.s))

    def backward(self):
        return (self.s - self.y) / self.s.size


class BCELogitsTargetGrad(BCELogits):
    def backward(self):
        return -(np.log(self.s) - np.log(1 - self.s)) / self.s.size  # BUG: dL/db, the labels' gradient
