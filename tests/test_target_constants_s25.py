"""review25g H1 and H2: the constants a loss's forward compares its target or prediction with, read so that the
verdict does not depend on the draw or on how the constant is spelled.

H1: a masked cross-entropy keeping ``labels >= 0`` whose backward forgets the mask PASSed when the drawn labels
held no 0 (at 8 rows of 10 classes, seed 0; at 3 rows, seeds 0 and 1) and FAILed when they did: the ``== / !=``
rule set every third label to 0 (a kept label) before the ordering rule could go past the bound (-1).
H2: a constant held in a local variable of forward (``eps = 1e-3``, ``ignore = self.ignore_index``) was not seen,
so a BCE whose backward forgets its clip, and a masked cross-entropy forgetting its mask, PASSed."""

import numpy as np
import pytest
from test_cli import both, run_here, student

VALID = """
import numpy as np


class ValidCE:
    def forward(self, logits, labels):
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        self.P, self.labels = e / e.sum(axis=1, keepdims=True), labels
        self.mask = labels >= 0
        self.kept = max(int(self.mask.sum()), 1)
        safe = np.where(self.mask, labels, 0)
        return -(np.log(self.P[np.arange(len(labels)), safe]) * self.mask).sum() / self.kept

    def _d(self):
        d = self.P.copy()
        d[np.arange(len(self.labels)), np.where(self.mask, self.labels, 0)] -= 1
        return d

    def backward(self):
        return self._d() * self.mask[:, None] / self.kept


class ValidCENoMask(ValidCE):
    def backward(self):
        return self._d() / self.kept  # BUG: the ignored rows' gradient not masked
"""


@pytest.mark.parametrize(("shape", "seed"), [("8,10", 0), ("16,10", 0), ("3,10", 0), ("3,10", 1), ("3,10", 2),
                                             ("3,10", 3)])
def test_a_masked_loss_keeping_labels_at_least_0_fails_whatever_labels_are_drawn(tmp_path, shape, seed):
    """8,10 at seed 0 and 3,10 at seeds 0 and 1 draw no label 0 (they PASSed); 16,10 and 3,10 at 2, 3 draw one."""
    f = student(tmp_path, VALID)
    args = ["--loss", "--input-shape", shape, "--targets", "labels", "--seed", str(seed)]
    bad = run_here("check", f"{f}::ValidCENoMask", *args)
    text = both(bad)
    assert bad.returncode == 1 and "forward orders labels against 0" in text, text
    assert "set to -1" in text and "whose target is -1, where the loss's gradient is 0" in text, text
    good = run_here("check", f"{f}::ValidCE", *args)
    assert good.returncode == 0 and "PASS: ValidCE" in both(good) and "set to -1" in both(good), both(good)


def test_ordered_constants_go_past_the_drawn_labels_whether_or_not_the_bound_is_drawn():
    from gradcheck.check_command import _target_plan

    drawn0 = np.array([0, 1, 2, 3, 0, 1, 2])
    none0 = np.array([1, 2, 3, 1, 2, 3, 1])  # no 0 drawn: 0 is below every label, -1 still the other side
    for y in (drawn0, none0):
        line, consts, y2 = _target_plan({"target_constants": [0.0], "target_ordered": [0.0]}, y, "labels")
        assert consts == [-1.0] and y2.tolist() == [-1, *y[1:3], -1, *y[4:6], -1], (y, consts, y2)
        assert "forward orders labels against 0" in line and "set to -1" in line, line
    # above the drawn labels too (labels <= 3: 4), and inside them nothing (both sides drawn)
    _, consts, _ = _target_plan({"target_constants": [3.0, 2.0], "target_ordered": [3.0, 2.0]}, drawn0, "labels")
    assert consts == [4.0]
    _, consts, _ = _target_plan({"target_constants": [5.0], "target_ordered": [5.0]}, drawn0, "labels")
    assert consts == [6.0]
    assert _target_plan({"target_constants": [2.0], "target_ordered": [2.0]}, drawn0, "labels") is None
    # an equality constant and an ordered one together: both in one re-check
    line, consts, y2 = _target_plan({"target_constants": [-100.0, 0.0], "target_ordered": [0.0]}, none0, "labels")
    assert consts == [-100.0, -1.0] and y2.tolist() == [-100, 2, 3, -1, 2, 3, -100], (consts, y2)
    assert "compares labels with -100" in line and "orders labels against 0" in line, line
