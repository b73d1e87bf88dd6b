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

from gradcheck._switch_reach import compared_constants

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


def test_a_constant_in_a_local_variable_of_forward_is_read_as_the_literal_is():
    class Literal:
        def forward(self, X):
            return np.clip(X, 1e-3, 1 - 1e-3)

    class Local:  # review25g H2: eps = 1e-3 was not seen
        def forward(self, X):
            eps = 1e-3
            return np.clip(X, eps, 1 - eps)

    class Alias:  # ignore = self.ignore_index: the attribute's value
        ignore_index = -100

        def forward(self, X):
            ignore = self.ignore_index
            return X != ignore

    class Unpacked:
        def forward(self, X):
            lo, hi = -2.0, 2.0
            return (X > lo) & (X < hi)

    class Either:  # two constant assignments: both are values forward may compare with, none is guessed
        def forward(self, X, training=False):
            if training:
                eps = 1e-3
            else:
                eps = 1e-5
            return np.maximum(X, eps)

    assert compared_constants(Literal()) == compared_constants(Local()) == [0.001, 0.999]
    assert compared_constants(Alias()) == [-100.0] and compared_constants(Unpacked()) == [-2.0, 2.0]
    assert compared_constants(Either()) == [1e-5, 1e-3]


EPS = 0.25  # a module constant a local variable of forward hides


def test_a_local_variable_hides_the_module_constant_and_is_not_guessed_when_it_varies():
    class Hidden:  # forward's own eps, not the module's
        def forward(self, X):
            EPS = 1e-3
            return np.clip(X, EPS, 1.0)

    class Module:
        def forward(self, X):
            return np.clip(X, EPS, 1.0)

    class Looped:  # assigned in a loop: its values cannot be read without running it (not the module's 0.25)
        def forward(self, X):
            EPS = 1.0
            for _ in range(3):
                EPS = EPS / 10
            return np.clip(X, EPS, 2.0)

    class Augmented:
        def forward(self, X):
            EPS = 1.0
            EPS *= 0.5
            return X > EPS

    class FromData:  # a value computed from the input: no constant
        def forward(self, X):
            EPS = float(X.mean())
            return X > EPS

    class Declared:  # global EPS, only read: the module's
        def forward(self, X):
            global EPS  # noqa: PLW0602 - the student's style
            return np.clip(X, EPS, 1.0)

    assert compared_constants(Hidden()) == [0.001, 1.0] and compared_constants(Module()) == [0.25, 1.0]
    assert compared_constants(Declared()) == [0.25, 1.0]
    assert compared_constants(Looped()) == [2.0] and compared_constants(Augmented()) == []
    assert compared_constants(FromData()) == []


BCE_LOCAL = """
import numpy as np


class BCELocal:
    def forward(self, y_true, y_pred):
        eps = 1e-3
        self.y, self.q, self.p = y_true, y_pred, np.clip(y_pred, eps, 1 - eps)
        return float(-np.mean(self.y * np.log(self.p) + (1 - self.y) * np.log(1 - self.p)))

    def backward(self):
        return (self.q - self.y) / (self.q * (1 - self.q)) / self.y.size  # BUG: forgets the clip


class BCELocalClipped(BCELocal):
    def backward(self):
        inside = (self.q > 1e-3) & (self.q < 1 - 1e-3)
        return (self.p - self.y) / (self.p * (1 - self.p)) / self.y.size * inside
"""

ALIAS = VALID.replace("def forward(self, logits, labels):", "def forward(self, logits, labels):\n"
                      "        ignore = self.ignore_index").replace(
    "self.mask = labels >= 0", "self.mask = labels != ignore").replace(
    "class ValidCE:", "class CE:\n    def __init__(self, ignore_index=-100):\n"
    "        self.ignore_index = ignore_index\n").replace("ValidCENoMask(ValidCE)", "CENoMask(CE)")


def test_a_bce_whose_clip_constant_is_a_local_variable_fails_when_backward_forgets_the_clip(tmp_path):
    f = student(tmp_path, BCE_LOCAL)
    args = ["--loss", "--input-shape", "8,3", "--pred", "unit", "--targets", "labels:2"]
    bad = run_here("check", f"{f}::BCELocal", *args)
    assert bad.returncode == 1 and "forward clips y_pred at 0.001 and 0.999" in both(bad), both(bad)
    good = run_here("check", f"{f}::BCELocalClipped", *args)
    assert good.returncode == 0 and "PASS: BCELocalClipped" in both(good), both(good)


def test_a_masked_loss_comparing_with_a_local_alias_of_ignore_index_fails_without_the_mask(tmp_path):
    f = student(tmp_path, ALIAS)
    args = ["--loss", "--input-shape", "12,4", "--targets", "labels"]
    bad = run_here("check", f"{f}::CENoMask", *args)
    assert bad.returncode == 1 and "forward compares labels with -100" in both(bad), both(bad)
    good = run_here("check", f"{f}::CE", *args)
    assert good.returncode == 0 and "PASS: CE" in both(good), both(good)


SWITCHES = '''
import numpy as np

FIT = "other"  # module constants a local of forward hides
TRAINING = True


class LocalWord:
    def forward(self, X, mode="predict"):
        FIT = "fit"
        if mode == FIT:
            return 2 * X
        return X


class LocalFlag:
    def forward(self, X, TRAINING=False):
        return 2 * X if TRAINING else X
'''


def test_a_local_of_forward_hides_the_module_constant_in_the_mode_words_and_switches(tmp_path):
    """The same kind in the training-switch walk: ``FIT = "fit"`` in forward is the word ``mode`` is compared with
    (the module's FIT was read: "other"), and a parameter ``TRAINING`` is no module switch ``global TRAINING``."""
    import importlib.util

    from gradcheck import _adapters, _switch_reach

    path = tmp_path / "switches_s25.py"
    path.write_text(SWITCHES)
    spec = importlib.util.spec_from_file_location("switches_s25", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert _adapters.mode_words(mod.LocalWord().forward, "mode") == ["fit"]
    assert _switch_reach.argument_words(mod.LocalWord().forward, "mode") == (["fit"], False)
    assert [n for n, *_ in _switch_reach.reached_switches(mod.LocalFlag().forward, ["TRAINING"])] == []
    assert _switch_reach.local_constant(mod.LocalWord().forward, "FIT") == (True, "fit")
    assert _switch_reach.local_constant(mod.LocalWord().forward, "np") == (False, None)


RELU6 = """
import numpy as np


class ReLU6Local:
    def forward(self, X):
        cap = 6.0
        self.X = X
        return np.clip(X, 0.0, cap)

    def backward(self, dY):
        return dY * (self.X > 0)  # BUG: forgets the cap at 6


class ReLU6LocalOk(ReLU6Local):
    def backward(self, dY):
        return dY * ((self.X > 0) & (self.X < 6.0))
"""


def test_a_layers_bound_in_a_local_variable_is_straddled(tmp_path):
    """The layers' straddle (diagnose.at_straddled_inputs) reads the same constants: a ReLU6 whose cap is a local
    ``cap = 6.0`` and whose backward forgets it PASSed (the drawn X never reach 6)."""
    f = student(tmp_path, RELU6)
    bad = run_here("check", f"{f}::ReLU6Local", "--input-shape", "4,3")
    assert bad.returncode == 1 and "forgets the bound at 6" in both(bad), both(bad)
    good = run_here("check", f"{f}::ReLU6LocalOk", "--input-shape", "4,3")
    assert good.returncode == 0, both(good)
