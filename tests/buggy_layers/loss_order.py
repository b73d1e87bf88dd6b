"""Loss classes checked as ``gradcheck check --loss --pred probs --targets probs --pred-arg NAME`` checks them
(session 14, tester14): an unnamed asymmetric loss ``forward(p, q)`` on data of one kind for both arguments, so only
``--pred-arg`` can say which is the prediction; the planted bugs return L's gradient with respect to the target (the
wrong argument differentiated), their twins the prediction's. ``LOSS``: the shape of y_pred; ``LOSS_DATA``:
``(--targets, --pred)``."""

import numpy as np

LOSS = (6, 4)
LOSS_DATA = ("probs", "probs")


class CrossEntropy:
    """L = -mean_n sum_k q log p: p the predicted probabilities, q the target's."""

    PRED_ARG = "p"

    def forward(self, p, q):
        self.p, self.q = p, q
        return -np.sum(q * np.log(p)) / p.shape[0]

    def backward(self):
        return -self.q / self.p / self.p.shape[0]


class CrossEntropyTargetGrad(CrossEntropy):
    def backward(self):
        return -np.log(self.p) / self.p.shape[0]  # BUG: dL/dq, the target's gradient


class KL:
    """KL(a || b) = mean_n sum_k a log(a / b): a the prediction."""

    PRED_ARG = "a"

    def forward(self, a, b):
        self.a, self.b = a, b
        return np.sum(a * np.log(a / b)) / a.shape[0]

    def backward(self):
        return (np.log(self.a / self.b) + 1) / self.a.shape[0]


class KLTargetGrad(KL):
    def backward(self):
        return -self.a / self.b / self.a.shape[0]  # BUG: dL/db, the target's gradient
