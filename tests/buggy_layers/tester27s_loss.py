"""Session 27 (tester27s L2): a cross-entropy on probabilities (Berkeley CS189's ``losses.py``, MIT 6.036's ``NLL``)
whose backward returns the fused softmax + cross-entropy gradient ``(p - y) / N``, the gradient with respect to the
logits. ``LOSS``: the shape of y_pred; ``LOSS_DATA``: ``(--targets, --pred)``."""

import numpy as np

LOSS = (8, 5)
LOSS_DATA = ("onehot", "probs")


class CrossEntropy:
    """L = -sum(Y log Y_hat) / N on probabilities Y_hat, forward(Y, Y_hat) as CS189's: correct."""

    def forward(self, Y, Y_hat):
        self.Y, self.Y_hat = Y, Y_hat
        return -np.sum(Y * np.log(Y_hat)) / Y.shape[0]

    def backward(self):
        return -self.Y / self.Y_hat / self.Y.shape[0]


class CrossEntropyFused(CrossEntropy):
    """The softmax's input's gradient for the probabilities'."""

    def backward(self):
        return (self.Y_hat - self.Y) / self.Y.shape[0]  # BUG: dL/dlogits, not dL/dY_hat
