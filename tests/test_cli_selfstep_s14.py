"""`gradcheck check` on layers whose backward steps their own weights (issue 10, session 14): a layer that also
stores its gradients (``self.dW``, ``self.grads['W']``) has the stored ones checked as well as its step, so a wrong
stored gradient that an optimizer or a reader would take is no PASS (finding 1); a rate held by a global instance or
a module-level object reached through two attributes, and weights nested two levels deep, are found and set
(finding 2).

Each runs the CLI (the student's code in its sandbox) and fails on the code before these fixes.
"""

import pytest
from test_cli import both, run, student

# --------------------------------------------------------------------------- finding 1: stored and stepped

STORES = """
import numpy as np

class Linear:
    def __init__(self):
        rng = np.random.default_rng(7)
        self.W = rng.standard_normal((5, 3)) * 0.5; self.b = rng.standard_normal(3) * 0.1; self.lr = 0.1
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        self.dW = STORED_DW
        self.db = dY.sum(0)
        dX = dY @ self.W.T
        self.W -= self.lr * (STEP_DW)
        self.b -= self.lr * self.db
        return dX
"""

RIGHT = "self.X.T @ dY"


@pytest.mark.parametrize(("stored", "step", "code", "said"), [
    (RIGHT, RIGHT, 0, None),
    (RIGHT + " / len(dY)", RIGHT, 1, "self.dW as backward stores it, which is wrong; its step of W is right"),
    (RIGHT, "2 * self.dW", 1, "W's step over the rate, which is wrong; self.dW as backward stores it is right"),
    (RIGHT + " / len(dY)", "3 * self.dW", 1, "self.dW as backward stores it, which is wrong; its step of W is wrong too"),
])
def test_a_stored_gradient_beside_the_step_is_checked(tmp_path, stored, step, code, said):
    """``self.dW = X.T @ dY / N`` (wrong) with ``self.W -= lr * X.T @ dY`` (right) PASSed: the step was checked in
    dW's place and the stored dW, which an optimizer or a reader takes as W's gradient, ignored. Both are checked:
    the one further from a central difference is read, and the FAIL line says which is wrong."""
    src = STORES.replace("STORED_DW", stored).replace("STEP_DW", step)
    p = run("check", f"{student(tmp_path, src, 'st.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    if code:
        assert f"FAIL: Linear: gradient mismatch in dW (dW is {said}" in " ".join(out.split()), out
        assert "PASS" not in out, out
    else:
        assert "PASS: Linear: every gradient (dX, dW, db)" in out, out


GRADS_DICT = """
import numpy as np

class Linear:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((5, 3)) * 0.5, "b": rng.standard_normal(3) * 0.1}
        self.grads = {}
        self.lr = 0.1
    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]
    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        self.grads["b"] = dY.STORED(0)
        dX = dY @ self.params["W"].T
        self.params["W"] -= self.lr * self.grads["W"]
        self.params["b"] -= self.lr * dY.STEP(0)
        return dX
"""


@pytest.mark.parametrize(("stored", "step", "code"), [("sum", "sum", 0), ("mean", "sum", 1), ("sum", "mean", 1)])
def test_a_stored_grads_dict_beside_the_step_is_checked(tmp_path, stored, step, code):
    """``self.grads['b'] = dY.mean(0)`` (wrong) with ``self.params['b'] -= lr * dY.sum(0)`` PASSed: the step
    overwrote grads['b']. The stored one is checked too."""
    src = GRADS_DICT.replace("STORED", stored).replace("STEP", step)
    p = run("check", f"{student(tmp_path, src, 'gd.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    if code:
        assert "FAIL: Linear: gradient mismatch in db" in out and "PASS" not in out, out
        which = "self.grads['b'] as backward stores it, which is wrong" if stored == "mean" else \
            "b's step over the rate, which is wrong; self.grads['b'] as backward stores it is right"
        assert which in " ".join(out.split()), out
    else:
        assert "PASS: Linear: every gradient (dX, dW, db)" in out, out
