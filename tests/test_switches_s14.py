"""Session 14 (switches): a PASS must not hide a branch gradcheck did not run, and a probe must not misread
non-finite outputs.

- F1: a forward that reads an attribute switch gradcheck does not know as a mode (a boolean ``self.use_noise``,
  a string ``self.kind`` compared with words that are no mode words) is checked with every value the switch can
  take, each row labelled with the switch's name and value; a bug in the other branch FAILs. When its other
  values cannot be found it is NOT CHECKED (exit 3), naming the switch and the value checked.
- F3: a forward whose output is NaN is reported as a non-finite output, not as a forward that does not use W
  (the usage probe compared NaN outputs as equal).
"""

from test_cli import both, run, run_here, student

NAN_FORWARD = """
import numpy as np

class NaNForward:
    def __init__(self):
        self.W = np.ones((5, 3)) * 0.1
    def forward(self, X):
        self.X = X
        return np.log(X) @ self.W
    def backward(self, dY):
        self.dW = np.log(self.X).T @ dY
        return (dY @ self.W.T) / self.X
"""


def test_f3_a_nan_output_is_no_unused_weight(tmp_path):
    p = run("check", f"{student(tmp_path, NAN_FORWARD, 'nan_fwd.py')}::NaNForward", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 1, out
    assert "does not use W" not in out, out
    assert "NaNForward.forward(X) gave Y containing" in out and "non-finite" in out, out


#: A layer whose forward branches on an attribute switch that selects no training mode: Y = 2 X in one branch,
#: Y = X ** 2 in the other; backward's OTHER branch is right only when BUG is False.
SWITCH_LAYER = """
import numpy as np

class Layer:
    BUG = False

    def __init__(self):
        INIT

    def forward(self, X):
        self.X = X
        return X ** 2 if COND else 2.0 * X

    def backward(self, dY):
        if COND:
            return dY * (2.0 if self.BUG else 2.0 * self.X)
        return 2.0 * dY

class LayerBug(Layer):
    BUG = True
"""

#: (the attribute set in __init__, the test of the other branch, the rows' labels: the switch's values)
SETTABLE = {
    "bool": ("self.stochastic = False", "self.stochastic", ("self.stochastic=False", "self.stochastic=True")),
    "bool-noisy-true": ("self.noisy = True", "not self.noisy", ("self.noisy=True", "self.noisy=False")),
    "string": ('self.kind = "lin"', 'self.kind == "sq"', ("self.kind='lin'", "self.kind='sq'")),
    "string-mode-name": ('self.mode = "plain"', 'self.mode == "fancy"', ("self.mode='plain'", "self.mode='fancy'")),
    "string-listed": ('assert "lin" in ("lin", "sq"); self.kind = "lin"', 'self.kind != "lin"',
                      ("self.kind='lin'", "self.kind='sq'")),
}


def _switch_file(tmp_path, init, cond, name="switch_layer.py"):
    return student(tmp_path, SWITCH_LAYER.replace("INIT", init).replace("COND", cond), name)


import pytest  # noqa: E402


@pytest.mark.parametrize("form", SETTABLE)
def test_f1_each_value_of_a_plain_switch_is_checked_and_labelled(tmp_path, form):
    init, cond, (first, other) = SETTABLE[form]
    f = _switch_file(tmp_path, init, cond)
    ok = run_here("check", f"{f}::Layer", "--input-shape", "4,5")
    out = both(ok)
    assert ok.returncode == 0, out
    assert f"Layer [{first}] dX" in out and f"Layer [{other}] dX" in out, out
    assert "mode: each value of " in out and "which selects no training mode" in out, out
    bad = run_here("check", f"{f}::LayerBug", "--input-shape", "4,5")
    out = both(bad)
    assert bad.returncode == 1, out
    assert f"FAIL: LayerBug [{other}]: gradient mismatch in dX" in out, out
    assert "PASS" not in out, out


@pytest.mark.parametrize("init, cond, shown", [
    ('self.kind = "lin"', 'self.kind != "lin"', "self.kind = 'lin' (its other values: none found"),
    ('self.act = "relu"', 'self.act in ("tanh", "gelu")', "self.act = 'relu' (other values 'tanh', 'gelu' not run)"),
])
def test_f1_a_switch_whose_other_values_cannot_each_be_set_is_not_checked(tmp_path, init, cond, shown):
    """Its other values not found (``!= 'lin'``), or more than one: the one branch that ran passes, the verdict is
    NOT CHECKED (exit 3) naming the switch and what was checked, never a PASS."""
    f = _switch_file(tmp_path, init, cond)
    for cls in ("Layer", "LayerBug"):  # the bug is in a branch that never ran: the same verdict
        p = run_here("check", f"{f}::{cls}", "--input-shape", "4,5")
        out = both(p)
        assert p.returncode == 3, out
        assert f"NOT CHECKED: {cls}: forward reads {shown}" in out and f"The check of {cls} passed" in out, out
        assert "PASS" not in out, out


TRAINING_AND_SWITCH = """
import numpy as np

class Layer:
    BUG = False

    def __init__(self):
        self.noisy = False

    def forward(self, X, training=False):
        self.X = X
        return X ** 2 if self.noisy else 2.0 * X

    def backward(self, dY):
        if self.noisy:
            return dY * (2.0 if self.BUG else 2.0 * self.X)
        return 2.0 * dY

class LayerBug(Layer):
    BUG = True
"""


def test_f1_a_plain_switch_beside_a_training_argument_is_set_too(tmp_path):
    """forward(X, training) that also reads self.noisy: self.noisy was left as it was (False), its True branch
    never ran, and a bug there PASSed."""
    f = student(tmp_path, TRAINING_AND_SWITCH, "train_and_switch.py")
    ok = run_here("check", f"{f}::Layer", "--input-shape", "4,5")
    assert ok.returncode == 0, both(ok)
    # each value checked, as its own variant: as built (False) and True, neither tied to the mode (flags40: the
    # header said "training: ..., self.noisy = True", training checked only with the value the layer was not built with)
    assert "Layer [training=False, self.noisy=False]" in both(ok) and ", self.noisy=True] " in both(ok), both(ok)
    bad = run_here("check", f"{f}::LayerBug", "--input-shape", "4,5")
    out = both(bad)
    assert bad.returncode == 1 and "PASS" not in out, out
    assert ", self.noisy=True]: gradient mismatch in dX" in out, out
