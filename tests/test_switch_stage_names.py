"""Session 13 (M7): a string switch named as Lightning (``stage="fit"``/``"validate"``) or a data split
(``split="train"``/``"val"``) names it, a forward argument or an attribute, is set to both modes.

Before, ``forward(X, stage="train")`` was no switch: only its default branch ran, a WARNING said so and the
check PASSed (exit 0) a bug in the eval branch. Each layer scales by 0.5 in eval; its backward forgets that
scale in eval only.
"""

import pytest
from test_cli import both, run, run_here, student

ARG = """
import numpy as np

class Layer:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((5, 3)) * 0.3
        self.b = np.zeros(3)

    def forward(self, X, NAME=TRAIN):
        self.X, self.NAME = X, NAME
        self.c = 0.5 if NAME == EVAL else 1.0
        return self.c * (X @ self.W) + self.b

    def backward(self, dY):
        self.dW = self.c * self.X.T @ dY
        self.db = dY.sum(0)
        return (BAD if self.NAME == EVAL else self.c) * dY @ self.W.T
"""

ATTR = """
import numpy as np

class Layer:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((5, 3)) * 0.3
        self.b = np.zeros(3)
        self.NAME = TRAIN

    def forward(self, X):
        self.X = X
        self.c = 0.5 if self.NAME == EVAL else 1.0
        return self.c * (X @ self.W) + self.b

    def backward(self, dY):
        self.dW = self.c * self.X.T @ dY
        self.db = dY.sum(0)
        return (BAD if self.NAME == EVAL else self.c) * dY @ self.W.T
"""

#: (template, switch name, training value, eval value)
FORMS = {
    "arg-stage-validation": (ARG, "stage", "train", "validation"),
    "arg-stage-lightning": (ARG, "stage", "fit", "validate"),
    "arg-stage-predict": (ARG, "stage", "fit", "predict"),
    "arg-split-val": (ARG, "split", "train", "val"),
    "arg-phase-test": (ARG, "phase", "train", "test"),
    "attr-stage-lightning": (ATTR, "stage", "fit", "validate"),
    "attr-split-val": (ATTR, "split", "train", "val"),
}


def _layer(tmp_path, form, bug):
    tpl, name, train, ev = FORMS[form]
    body = tpl.replace("NAME", name).replace("TRAIN", repr(train)).replace("EVAL", repr(ev))
    return student(tmp_path, body.replace("BAD", "1.0" if bug else "self.c"), name=f"st_{form.replace('-', '_')}.py")


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_stage_or_split_switch_is_checked_in_both_modes(tmp_path, form):
    run_ = run if form == "arg-stage-validation" else run_here  # one form through the console script
    p = run_("check", f"{_layer(tmp_path, form, True)}::Layer", "--input-shape", "8,5")
    out = both(p)
    assert p.returncode == 1, out
    assert "mode: eval and training" in out, out
    assert "FAIL: Layer [eval]: gradient mismatch in dX" in out, out
    assert "Layer [training]: gradient mismatch" not in out, out
    assert "WARNING" not in out, out
    ev = run_("check", f"{_layer(tmp_path, form, True)}::Layer", "--input-shape", "8,5", "--eval")
    assert ev.returncode == 1, both(ev)
    ok = run_("check", f"{_layer(tmp_path, form, False)}::Layer", "--input-shape", "8,5")
    assert ok.returncode == 0 and "mode: eval and training" in both(ok), both(ok)


def test_a_split_argument_compared_with_no_mode_word_stays_no_switch(tmp_path):
    body = ARG.replace("NAME", "split").replace("TRAIN", "'rows'").replace("EVAL", "'cols'").replace("BAD", "self.c")
    p = run_here("check", f"{student(tmp_path, body, name='split_rows.py')}::Layer", "--input-shape", "8,5")
    assert p.returncode == 0, both(p)
    assert "mode: eval and training" not in both(p) and "split='test'" not in both(p), both(p)
