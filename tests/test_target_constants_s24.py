"""review24g: a masked cross-entropy whose ``ignore_index`` is a default of forward's own parameter
(``forward(self, logits, labels, ignore_index=-100)``, as torch's ``F.cross_entropy``) was not checked again at that
label: ``compared_constants`` read numbers, module constants and ``self`` attributes, not forward's defaults, so a
backward forgetting the mask PASSed (session 23's re-check covered ``self.ignore_index`` only)."""

import numpy as np
from test_cli import both, run_here, student

from gradcheck._switch_reach import compared_constants

LIMIT = 3.0  # a module constant a forward's parameter of the same name hides

CE = """
import numpy as np


class ArgCE:
    def forward(self, logits, labels, ignore_index=-100):
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        self.P, self.labels = e / e.sum(axis=1, keepdims=True), labels
        self.mask = labels != ignore_index
        self.kept = max(int(self.mask.sum()), 1)
        safe = np.where(self.mask, labels, 0)
        return -(np.log(self.P[np.arange(len(labels)), safe]) * self.mask).sum() / self.kept

    def _d(self):
        d = self.P.copy()
        d[np.arange(len(self.labels)), np.where(self.mask, self.labels, 0)] -= 1
        return d

    def backward(self):
        return self._d() * self.mask[:, None] / self.kept


class ArgCENoMask(ArgCE):
    def backward(self):
        return self._d() / self.kept  # BUG: the ignored rows' gradient not masked
"""


def test_a_default_of_forwards_parameter_is_a_constant_it_compares_with():
    class Clip:
        def forward(self, X, lo=0.25, hi=None, training=False):
            return X.clip(lo, 6.0) if hi is None else X

    class Shadow:  # a parameter without a default hides a module constant of the same name
        def forward(self, X, LIMIT):
            return X > LIMIT

    class Module:  # the module constant itself is read
        def forward(self, X):
            return X > LIMIT

    assert compared_constants(Clip()) == [0.25, 6.0]
    assert compared_constants(Module()) == [3.0] and compared_constants(Shadow()) == []


def test_a_masked_loss_whose_ignore_index_is_a_default_is_checked_at_it(tmp_path):
    f = student(tmp_path, CE)
    bad = run_here("check", f"{f}::ArgCENoMask", "--loss", "--input-shape", "12,4", "--targets", "labels")
    text = both(bad)
    assert bad.returncode == 1 and "forward compares labels with -100" in text, text
    assert "whose target is -100, where the loss's gradient is 0" in text, text
    good = run_here("check", f"{f}::ArgCE", "--loss", "--input-shape", "12,4", "--targets", "labels")
    assert good.returncode == 0 and "PASS: ArgCE" in both(good), both(good)


VALID = CE.replace("class ArgCE:", "class ValidCE:").replace(
    "def forward(self, logits, labels, ignore_index=-100):", "def forward(self, logits, labels):").replace(
    "self.mask = labels != ignore_index", "self.mask = labels >= 0").replace("ArgCENoMask(ArgCE)", "ValidCENoMask(ValidCE)")


def test_ordered_target_values_go_just_beyond_a_drawn_end():
    from gradcheck.check_command import _target_plan

    def plan(vals, y):
        return _target_plan({"target_constants": vals, "target_ordered": vals}, y, "labels")

    y = np.array([0, 1, 2, 3, 0, 1, 2])
    line, values, y2 = plan(["0.0", "3.0", "1.0"], y)  # 1 is inside the drawn range
    assert "orders labels against 0 and 3" in line and values == [-1.0, 4.0] and y2.tolist() == [-1, 1, 2, 4, 0, 1, -1]
    assert plan(["2.0"], y) is None
    assert plan(["0.0"], y.astype(float))[1] == [-1.0]  # float targets too (review25g H1: not 0, a kept value)


def test_a_masked_loss_keeping_labels_at_least_0_is_checked_at_minus_1(tmp_path):
    """forward keeps labels >= 0 (an ordering comparison): -1 is on the side it leaves out, which the drawn labels
    (0 to 3) never reach; == and != comparisons with a drawn label are not extended (their other side may be no
    label at all)."""
    f = student(tmp_path, VALID)
    bad = run_here("check", f"{f}::ValidCENoMask", "--loss", "--input-shape", "12,4", "--targets", "labels")
    text = both(bad)
    assert bad.returncode == 1 and "forward orders labels against 0" in text, text
    assert "whose target is -1, where the loss's gradient is 0" in text, text
    good = run_here("check", f"{f}::ValidCE", "--loss", "--input-shape", "12,4", "--targets", "labels")
    assert good.returncode == 0 and "PASS: ValidCE" in both(good) and "set to -1" in both(good), both(good)
