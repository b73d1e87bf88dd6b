"""tester15b's wrong verdicts of the session-15 checker rules (each test fails on the code before its fix):
an unnamed binary cross-entropy on 0/1 integer labels ordered by backward's result (H1), unrecognised booleans
after the first never run (H3), a ``**kwargs`` flag read as the training switch (H4) and a ``padding="same"``
branch never run because ``"valid"`` is an eval word (H2)."""

import pytest
from test_cli import both, run_here, student

BCE = """
import numpy as np
class BCETargetGrad:
    '''bug: backward returns dL/db, the target's gradient'''
    def forward(self, a, b):
        self.p, self.y = a, b
        return -np.mean(b * np.log(a + 1e-7) + (1 - b) * np.log(1 - a + 1e-7))
    def backward(self):
        p = self.p
        return -(np.log(p + 1e-7) - np.log(1 - p + 1e-7)) / p.size
class BCELogitsSwappedTargetGrad:
    '''Keras's order, logits; bug: backward returns dL/da (the labels' gradient)'''
    def forward(self, a, b):
        self.z = b
        return np.mean(np.logaddexp(0, b) - a * b)
    def backward(self):
        return -self.z / self.z.size
class BCE:
    def forward(self, a, b):
        self.p, self.y = a, b
        return -np.mean(b * np.log(a + 1e-7) + (1 - b) * np.log(1 - a + 1e-7))
    def backward(self):
        p, y = self.p, self.y
        return (-y / (p + 1e-7) + (1 - y) / (1 - p + 1e-7)) / p.size
"""


@pytest.mark.parametrize(("cls", "shape", "pred", "code"), [
    ("BCETargetGrad", "8,1", ["--pred", "unit"], 1), ("BCETargetGrad", "8", ["--pred", "unit"], 1),
    ("BCELogitsSwappedTargetGrad", "8,1", [], 1), ("BCE", "8,1", ["--pred", "unit"], 0)])
def test_bce_on_integer_labels_is_ordered_by_the_data(tmp_path, cls, shape, pred, code):
    """H1: before, 0/1 integer labels of the prediction's shape left the order to backward's result, which chose
    the order that made a target's gradient right: PASS. Integer labels beside a float prediction are two kinds."""
    f = student(tmp_path, BCE, "bce.py")
    p = run_here("check", f"{f}::{cls}", "--loss", "--input-shape", shape, *pred, "--targets", "labels:2")
    out = both(p)
    assert p.returncode == code, out
    assert "the data say it" in out and "backward's result matches" not in out, out


FLAGS = """
import numpy as np
class TwoFlags:
    '''bug only with square=True and double=True'''
    def forward(self, X, square=False, double=False):
        self.X, self.s, self.d = X, square, double
        Y = X ** 2 if square else X * 1.0
        return 2 * Y if double else Y
    def backward(self, dY):
        g = 2 * self.X * dY if self.s else dY * 1.0
        return 2 * g if self.d and not self.s else g
"""


def test_a_second_boolean_is_run(tmp_path):
    """H3: before, only ``square`` was switched; ``double`` was never run nor named: PASS (exit 0). (Session 15 named
    it NOT CHECKED; since session 16 every combination of up to 3 booleans is checked: the bug FAILs, named.)"""
    f = student(tmp_path, FLAGS, "flags.py")
    p = run_here("check", f"{f}::TwoFlags", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 1 and "FAIL: TwoFlags [square=True, double=True]: gradient mismatch in dX" in out, out


KWARGS = """
import numpy as np
class KwargsFlag:
    def forward(self, X, **kwargs):
        self.X, self.r = X, kwargs.get("use_relu", False)
        return np.maximum(X, 0) if self.r else X * 1.0
    def backward(self, dY):
        return dY * (self.X > 0) if self.r else dY * 1.0
class KwargsFlagBug(KwargsFlag):
    def backward(self, dY):
        return dY * 1.0
"""


@pytest.mark.parametrize(("cls", "code"), [("KwargsFlag", 0), ("KwargsFlagBug", 1)])
def test_a_kwargs_flag_is_checked_at_each_value(tmp_path, cls, code):
    """H4: before, ``kwargs.get("use_relu", False)`` made ``**kwargs`` read as the training switch: use_relu=True
    never ran and the bug PASSed, the header saying training=True gave the same output."""
    f = student(tmp_path, KWARGS, "kw.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code and f"{cls} [use_relu=True]" in out and "training=True" not in out, out


PAD = """
import numpy as np
class BorderValidBug:
    '''bug in the border='valid' branch: backward of 3 * X is dY'''
    def forward(self, X, border="same"):
        self.X, self.p = X, border
        return 3 * X if border == "valid" else X ** 2
    def backward(self, dY):
        return dY if self.p == "valid" else 2 * self.X * dY
class PaddingSameBug:
    '''bug in the padding='same' branch, "valid" the default'''
    def forward(self, X, padding="valid"):
        self.X, self.p = X, padding
        return X ** 2 if padding == "same" else 3 * X
    def backward(self, dY):
        return self.X * dY if self.p == "same" else 3 * dY
"""


@pytest.mark.parametrize(("cls", "row"), [("BorderValidBug", "[border='valid']"),
                                          ("PaddingSameBug", "[padding='same']")])
def test_valid_and_same_are_two_string_values_not_a_mode(tmp_path, cls, row):
    """H2: before, "valid" (an eval word) made ``padding="valid"``/``"same"`` a mode switch read as eval, and the
    other branch never ran: PASS with no word. Only a training word beside an eval word is a mode."""
    f = student(tmp_path, PAD, "pad.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 1 and f"{cls} {row}" in out and "FAIL" in out, out


DISPATCH = """
import numpy as np
class NormDict:
    '''bug in the 'l1' branch (a factor 2), selected through a dict'''
    FUN = {"l2": lambda X: np.sqrt((X ** 2).sum(1)), "l1": lambda X: np.abs(X).sum(1)}
    def forward(self, X, norm="l2"):
        self.X, self.norm = X, norm
        return self.FUN[norm](X)
    def backward(self, dY):
        if self.norm == "l1":
            return dY[:, None] * 2 * np.sign(self.X)
        return dY[:, None] * self.X / np.sqrt((self.X ** 2).sum(1, keepdims=True))
class NormUpper(NormDict):
    def forward(self, X, norm="l2"):
        self.X, self.norm = X, norm
        return np.abs(X).sum(1) if norm.upper() == "L1" else np.sqrt((X ** 2).sum(1))
"""


@pytest.mark.parametrize("cls", ["NormDict", "NormUpper"])
def test_a_string_dispatched_without_a_literal_compare_is_not_checked(tmp_path, cls):
    """H5: before, a string selecting its branch through a dict or ``norm.upper() == "L1"`` PASSed (exit 0) with
    no word that only its default 'l2' ran. Session 18: the keys of the dict it indexes are its values, each checked
    (NormDict FAILs in its 'l1' branch); a method's result still says NOT CHECKED."""
    f = student(tmp_path, DISPATCH, "norm.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "6,5")
    out = " ".join(both(p).split())
    if cls == "NormDict":
        assert p.returncode == 1 and "FAIL: NormDict [norm='l1']: gradient mismatch in dX" in out, out
    else:
        assert p.returncode == 3 and "norm = 'l2' (its other values: none found" in out, out


EPS = """
import numpy as np
class BCE:
    '''forward with 1e-7 in the logs, backward the gradient without it (Deep Learning from Scratch's reading)'''
    def forward(self, a, b):
        self.p, self.y = a, b
        return -np.mean(b * np.log(a + 1e-7) + (1 - b) * np.log(1 - a + 1e-7))
    def backward(self):
        p, y = self.p, self.y
        return (p - y) / (p * (1 - p)) / p.size
class Other:
    def forward(self, a, b):
        return -np.mean(b * np.log(a + 1e-3) + np.log(1 - a + 1e-12))
    def backward(self):
        return 1 / (self.p + 1e-10)
"""


def test_the_eps_note_lists_only_the_loss_own_constants(tmp_path):
    """M1: before, the NOTE listed every eps of the file ("1e-07, 0.001, 1e-12, 1e-10"), in an order that varied."""
    f = student(tmp_path, EPS, "bce.py")
    p = run_here("check", f"{f}::BCE", "--loss", "--input-shape", "8,1", "--pred", "unit", "--targets", "labels:2")
    out = " ".join(both(p).split())
    assert p.returncode == 0 and "NOTE: backward is the derivative of the loss without its 1e-07 (forward's " \
        "log(y + 1e-07) read as log(y)" in out and "0.001" not in out and "1e-12" not in out, out
