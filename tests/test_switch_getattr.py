"""Session 13 (M8): a switch forward reads with ``getattr(self, name)`` (``name`` a closure's, a global's or a
literal string) and copies into another attribute (``self.flag = bool(getattr(self, "is_eval"))``).

Before, the copy ``self.flag`` (which forward overwrites) was taken for the switch once a forward had run: the
header said ``mode: eval (forward has no training argument)``, the table showed [training] and [eval] rows,
the "training" row ran backward with ``self.flag = True`` after a forward with ``is_eval = False``, and a line
said both forwards give the same output. Now ``self.is_eval`` is the switch, set True in eval mode.
"""

import pytest
from test_cli import both, run, run_here, student

LAYER = """
import numpy as np

def make(name):
    class Layer:
        def __init__(self):
            rng = np.random.default_rng(0)
            self.W = rng.standard_normal((5, 3)) * 0.3
            self.b = np.zeros(3)
            setattr(self, name, False)

        def forward(self, X):
            self.X = X
            self.flag = bool(getattr(self, READ))
            self.c = 0.5 if self.flag else 1.0
            return self.c * (X @ self.W) + self.b

        def backward(self, dY):
            self.dW = self.c * self.X.T @ dY
            self.db = dY.sum(0) * (BAD if self.flag else 1)
            return self.c * dY @ self.W.T
    return Layer

Layer = make(NAME)
"""


@pytest.mark.parametrize("name,read", [("is_eval", "name"), ("is_training", "name"), ("is_eval", "'is_eval'"),
                                       ("use_running_average", "name"), ("is_predicting", "name")])
def test_a_getattr_switch_is_set_and_labelled(tmp_path, name, read):
    true_in, false_in = ("training", "eval") if "train" in name else ("eval", "training")
    body = LAYER.replace("NAME", repr(name)).replace("READ", read)
    bad = student(tmp_path, body.replace("BAD", "3"), name=f"ga_{name}_bad.py")
    run_ = run if (name, read) == ("is_eval", "name") else run_here  # one switch through the console script
    p = run_("check", f"{bad}::Layer", "--input-shape", "8,5")
    out = both(p)
    assert p.returncode == 1, out
    assert f"mode: eval and training (self.{name} = " in out, out
    assert f"FAIL: Layer [{true_in}]: gradient mismatch in db." in out, out
    assert f"Layer [{false_in}]: gradient mismatch" not in out, out
    assert "give the same output" not in out, out
    assert "self.flag" not in out, out
    ok = run_("check", f"{student(tmp_path, body.replace('BAD', '1'), name=f'ga_{name}_ok.py')}::Layer",
             "--input-shape", "8,5")
    assert ok.returncode == 0 and "mode: eval and training" in both(ok), both(ok)
