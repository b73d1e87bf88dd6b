"""Session 13 (M5): a mode switch tested in a negated form (``self.state != "predicting"``, ``not ... ==``,
``not in``, ``if not self.training``, the eval branch in ``else``) gets the header's mode labels of what ran.

Each layer multiplies by 2 in training and by 1 in eval; its backward's EVAL branch is wrong (0.5), its training
branch right. The labels were swapped for a mode word outside the exact eval list (``"predicting"`` was taken
for a training word, so ``self.state = "predicting"`` was labelled training): the check FAILed the row named
``[training]`` while the eval branch had run. Now the row that FAILs is ``[eval]``, as it is for the plain forms.
"""

import pytest
from test_cli import both, run, run_here, student

LAYER = """
import numpy as np

class Layer:
    def __init__(self, D=5):
        self.W = np.linspace(0.5, 1.5, D)
        self.dW = np.zeros(D)
        INIT

    def _training(self):
        COND

    def forward(self, X):
        self.X = X
        return X * self.W * (2.0 if self._training() else 1.0)

    def backward(self, dY):
        tr = self._training()
        self.dW = (dY * self.X * (2.0 if tr else 1.0)).sum(axis=0)
        return dY * self.W * (2.0 if tr else EVAL_DX)
"""

#: (attribute set in __init__, the body of _training(): returns True where the training branch runs)
FORMS = {
    "ne-predicting": ('self.state = "fitting"', 'return self.state != "predicting"'),
    "not-eq-predicting": ('self.state = "fitting"', 'return not self.state == "predicting"'),
    "not-in-eval-words": ('self.state = "fitting"', 'return self.state not in ("predicting", "inferring")'),
    "ne-inferring": ('self.mode = "learning"', 'return self.mode != "inferring"'),
    "ne-validating": ('self.phase = "train"', 'return self.phase != "validating"'),
    "eq-predicting-else": ('self.state = "fitting"',
                           'if self.state == "predicting":\n            return False\n        else:\n'
                           '            return True'),
    "ne-eval-first-else": ('self.state = "predicting"',
                           'if self.state != "fitting":\n            return False\n        return True'),
    "not-training": ("self.training = True",
                     "if not self.training:\n            return False\n        return True"),
    "not-in-train-words": ('self.state = "predicting"', 'return not (self.state not in ("fitting", "training"))'),
}


def _layer(tmp_path, form, bug):
    init, cond = FORMS[form]
    body = LAYER.replace("INIT", init).replace("COND", cond).replace("EVAL_DX", "0.5" if bug else "1.0")
    return student(tmp_path, body, name=f"neg_{form.replace('-', '_')}.py")


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_negated_switch_labels_the_branch_that_ran(tmp_path, form):
    run_ = run if form == "ne-predicting" else run_here  # one form through the console script
    p = run_("check", f"{_layer(tmp_path, form, True)}::Layer", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 1, out
    assert "mode: eval and training" in out, out
    assert "FAIL: Layer [eval]: gradient mismatch in dX" in out, out
    assert "Layer [training]: gradient mismatch" not in out, out
    ok = run_("check", f"{_layer(tmp_path, form, False)}::Layer", "--input-shape", "4,5")
    assert ok.returncode == 0 and "mode: eval and training" in both(ok), both(ok)
