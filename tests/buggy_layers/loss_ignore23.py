"""Session 23 (session 22's leftover): a masked cross-entropy with ``ignore_index`` -100, whose drawn labels (0 to 3)
never hit the ignored value, so a backward forgetting the mask, or dividing by every row where forward averages over
the kept ones, passed. ``gradcheck check --loss`` now checks again with every third label set to a constant forward
compares the labels with (``labels != self.ignore_index``); :func:`tests.buggy_layers.diagnose_loss` does the same.
``LOSS``: the shape of y_pred; ``LOSS_DATA``: ``(--targets, --pred)``."""

import numpy as np

LOSS = (12, 4)
LOSS_DATA = ("labels", "real")


class MaskedCE:
    """Mean cross-entropy of softmax(logits) over the rows whose label is not ``ignore_index``."""

    def __init__(self, ignore_index=-100):
        self.ignore_index = ignore_index

    def forward(self, logits, labels):
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        self.P, self.labels = e / e.sum(axis=1, keepdims=True), labels
        self.mask = labels != self.ignore_index
        self.kept = max(int(self.mask.sum()), 1)
        safe = np.where(self.mask, labels, 0)
        return -(np.log(self.P[np.arange(len(labels)), safe]) * self.mask).sum() / self.kept

    def _d(self):
        d = self.P.copy()
        d[np.arange(len(self.labels)), np.where(self.mask, self.labels, 0)] -= 1
        return d

    def backward(self):
        return self._d() * self.mask[:, None] / self.kept


class MaskedCENoMask(MaskedCE):
    def backward(self):
        return self._d() / self.kept  # BUG: the ignored rows' gradient not masked


class MaskedCEAllRows(MaskedCE):
    def backward(self):
        return self._d() * self.mask[:, None] / len(self.labels)  # BUG: divides by every row, not the kept ones
