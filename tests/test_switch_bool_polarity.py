"""Session 13 (H3): a boolean switch attribute whose name is an eval word (``self.is_predicting``,
``self.validating``) is True in eval mode, as a string switch compared with that word is.

Each layer scales by 0.5 where its switch is True; its backward's db is 3 times too large there only. Before,
``is_predicting``, ``predicting`` and ``validating`` were read as training switches: ``--eval`` set them False,
ran the right branch and PASSed the bug. Every name is checked in both directions through the CLI: the mode
whose value sets the switch True FAILs, the other PASSes, and the header names the value set.
"""

import pytest
from test_cli import both, run, run_here, student

LAYER = """
import numpy as np

class Layer:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((5, 3)) * 0.3
        self.b = np.zeros(3)
        self.NAME = False

    def forward(self, X):
        self.X = X
        self.c = 0.5 if self.NAME else 1.0
        return self.c * (X @ self.W) + self.b

    def backward(self, dY):
        self.dW = self.c * self.X.T @ dY
        self.db = dY.sum(0) * (3 if self.NAME else 1)
        return self.c * dY @ self.W.T
"""

#: True in eval mode: the names of modes4.py (session 13's tester) and the other eval-stem words
EVAL_NAMES = ("is_predicting", "predicting", "validating", "is_validating", "is_eval", "eval_mode", "inference_mode",
              "is_inference", "is_test", "testing", "use_running_average", "deterministic", "evaluating", "inferring")
#: True in training mode
TRAIN_NAMES = ("is_training", "train_mode")


@pytest.mark.parametrize("name", EVAL_NAMES + TRAIN_NAMES)
def test_a_boolean_switch_is_set_true_in_the_mode_its_name_says(tmp_path, name):
    path = student(tmp_path, LAYER.replace("NAME", name), name=f"pol_{name}.py")
    run_ = run if name == "is_predicting" else run_here
    true_in, false_in = ("eval", "training") if name in EVAL_NAMES else ("training", "eval")
    bad = run_("check", f"{path}::Layer", "--input-shape", "8,5", f"--{true_in}")
    assert bad.returncode == 1, both(bad)
    assert f"mode: {true_in} (self.{name} = True)" in both(bad), both(bad)
    assert "gradient mismatch in db" in both(bad), both(bad)
    ok = run_("check", f"{path}::Layer", "--input-shape", "8,5", f"--{false_in}")
    assert ok.returncode == 0, both(ok)
    assert f"mode: {false_in} (self.{name} = False)" in both(ok), both(ok)
    plain = run_("check", f"{path}::Layer", "--input-shape", "8,5")
    assert plain.returncode == 1, both(plain)
    assert f"FAIL: Layer [{true_in}]: gradient mismatch in db." in both(plain), both(plain)
    assert f"Layer [{false_in}]: gradient mismatch" not in both(plain), both(plain)
