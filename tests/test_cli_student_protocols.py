"""`gradcheck check` on layers written in students' own protocols (issue 10, tester10 T9, T10, T14, T5, L3):
each correct one PASSes and its one-bug twin FAILs, where before a correct one was refused (exit 1 or 3).

Each runs the CLI (the student's code in its sandbox) and fails on the code before these fixes: the NNFS layer
the console script, the others its ``gradcheck.cli.main`` in this process (``test_cli.run_here``), which spares the
start of a Python per check.
"""

from pathlib import Path

import pytest
from test_cli import both, run, run_here, student

# --------------------------------------------------------------------------- T9: Neural Networks from Scratch

LAYERS = Path(__file__).parent / "buggy_layers" / "protocols.py"


@pytest.mark.parametrize(("cls", "code"), [("NnfsDense", 0), ("NnfsDenseMeanBias", 1)])
def test_nnfs_layer_is_read_through_output_and_dinputs(cls, code):
    p = run("check", f"{LAYERS}::{cls}", "--input-shape", "6,4")
    out = both(p)
    assert p.returncode == code, out
    assert "stores Y in self.output" in out and "stores dX in self.dinputs" in out, out
    assert "(weights/dweights, biases/dbiases)" in out and "the error is in forward" not in out, out
    assert ("FAIL: NnfsDenseMeanBias: gradient mismatch in dbiases." in out) == bool(code), out


# --------------------------------------------------------------------------- T10: a stateless loss

MSE = """
import numpy as np

class MSE:
    def forward(self, y_pred, y_true):
        return float(np.mean((y_pred - y_true) ** 2))
    def backward(self, y_pred, y_true):
        return TWO * (y_pred - y_true) / y_pred.size
"""


@pytest.mark.parametrize(("two", "code"), [("2", 0), ("1", 1)])
def test_stateless_loss_backward_gets_prediction_and_target(tmp_path, two, code):
    p = run_here("check", f"{student(tmp_path, MSE.replace('TWO', two), 'mse.py')}::MSE", "--loss", "--input-shape", "6,2")
    out = both(p)
    assert p.returncode == code, out
    assert "loss: forward(y_pred=y_pred, y_true=y_true) and backward(y_pred=y_pred, y_true=y_true):" in \
        " ".join(out.split()), out
    assert "y_pred=1.0" not in out, out


# --------------------------------------------------------------------------- T14, T5: gradient dicts

DKEYS = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {'W': rng.standard_normal((5, 3)) * 0.4, 'b': np.zeros(3)}
        self.GRADS = {}
    def forward(self, X):
        self.X = X
        return X @ self.params['W'] + self.params['b']
    def backward(self, dY):
        self.GRADS[DW] = self.X.T @ dY * BUG
        self.GRADS[DB] = dY.sum(0)
        return dY @ self.params['W'].T
"""


@pytest.mark.parametrize(("grads", "keys", "said"), [("grads", ("'dW'", "'db'"), "grads['dW'] read for params['W']"),
                                                     ("param_grads", ("'W'", "'b'"), "params/param_grads dicts")])
@pytest.mark.parametrize(("bug", "code"), [("1", 0), ("2", 1)])
def test_gradient_dict_paired_by_keys(tmp_path, grads, keys, said, bug, code):
    src = DKEYS.replace("GRADS", grads).replace("DW", keys[0]).replace("DB", keys[1]).replace("BUG", bug)
    p = run_here("check", f"{student(tmp_path, src, 'dk.py')}::L", "--input-shape", "6,5")
    out = both(p)
    assert p.returncode == code, out
    assert said in " ".join(out.split()) and "has no key" not in out, out
    assert ("FAIL: L: gradient mismatch in dW." in out) == bool(code), out


# --------------------------------------------------------------------------- verify10 Y1: the learning rate's use

SELF_STEPPING = """
import numpy as np

class Dense:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((4, 3)) * 0.5, rng.standard_normal(3) * 0.1
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY, learning_rate):
        dW, db, dX = self.X.T @ dY, dY.sum(0), dY @ self.W.T
        self.W -= STEP_W
        self.b -= STEP_B
        return dX
"""


@pytest.mark.parametrize(("step_w", "step_b", "failing"), [
    ("learning_rate * dW", "learning_rate * db", None),  # correct
    ("learning_rate * dW", "db", "db"),  # the bias step forgets the rate
    ("learning_rate * learning_rate * dW", "learning_rate * db", "dW"),  # the rate applied twice
])
def test_a_self_stepping_backward_is_given_a_rate_that_shows_how_it_is_used(tmp_path, step_w, step_b, failing):
    """Given learning_rate=1 such a backward read its step as the gradient, so a rate forgotten or applied twice
    PASSed (verify10 Y1); given 0.25, the step over the rate is the gradient only when the rate is used once."""
    src = SELF_STEPPING.replace("STEP_W", step_w).replace("STEP_B", step_b)
    p = run_here("check", f"{student(tmp_path, src, 'sgd.py')}::Dense", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == (1 if failing else 0), out
    assert "learning_rate=0.25" in out, out
    if failing:
        assert f"FAIL: Dense: gradient mismatch in {failing}." in out, out


# --------------------------------------------------------------------------- verify10 Y2: an optimizer in backward

OPTIMIZED = """
import numpy as np

class Dense:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((4, 3)) * 0.5, rng.standard_normal(3) * 0.1
        self.vW, self.sW, self.t = np.zeros((4, 3)), np.zeros((4, 3)), 0
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY, learning_rate):
        dW, db, dX = self.X.T @ dY, dY.sum(0), dY @ self.W.T
STEP
        self.b -= learning_rate * db
        return dX
"""

DY = "not proportional to dY"
RATE = "not proportional to the rate"
AGAIN = "called a second time with the same dY and W put back, W moved differently"
DECAY = {"self.W -= learning_rate * (dW + 1e-4 * self.W)": "(an L2 penalty's gradient) in the gradient",
         "self.W -= learning_rate * dW + 1e-4 * self.W": "outside the rate"}


@pytest.mark.parametrize(("step", "seen"), [
    ("self.W -= learning_rate * np.clip(dW, -1, 1)", DY),  # gradient clipping
    ("self.t += 1\nself.vW = 0.9 * self.vW + 0.1 * dW\nself.sW = 0.999 * self.sW + 0.001 * dW ** 2\n"
     "self.W -= learning_rate * self.vW / (1 - 0.9 ** self.t) / (np.sqrt(self.sW / (1 - 0.999 ** self.t)) + 1e-8)",
     DY),  # Adam
    ("self.W -= learning_rate * (dW + 1e-4 * self.W)", DY),  # L2 weight decay in the gradient: named below
    ("self.W -= learning_rate * dW + 1e-4 * self.W", RATE),  # decoupled weight decay: named below
    ("self.vW = 0.9 * self.vW - learning_rate * dW\nself.W += self.vW", AGAIN),  # momentum, state from __init__
    ("if not hasattr(self, 'm'):\n    self.m = np.zeros_like(dW)\nself.m = 0.9 * self.m + dW\n"
     "self.W -= learning_rate * self.m", AGAIN),  # momentum, state made at the first call
    ("self.t += 1\nself.W -= learning_rate / (1 + 0.1 * self.t) * dW", AGAIN),  # a rate schedule
    ("self.vW = 0.9 * self.vW + 0.1 * dW\nself.W -= learning_rate * self.vW", AGAIN),  # an EMA of the gradient
])
def test_an_optimizer_inside_backward_is_not_checkable_as_written(tmp_path, step, seen):
    """Such a step over the rate is not the gradient: read so it FAILed a correct gradient (or PASSed momentum);
    the step is probed to be plain gradient descent (proportional to the rate and to dY, no memory across calls),
    else not checked (exit 3), naming what was seen and what to change (verify10 Y2)."""
    body = "\n".join(" " * 8 + line for line in step.split("\n"))
    p = run_here("check", f"{student(tmp_path, OPTIMIZED.replace('STEP', body), 'opt.py')}::Dense", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == 3, out
    assert "is not a plain gradient-descent step" in out and seen in out, out
    decay = "the part that is not is 0.0001 * W in every entry: a weight-decay term " + DECAY.get(step, "")
    assert (decay in out) == (step in DECAY) and ("weight-decay term" in out) == (step in DECAY), out  # λ·W exactly
    assert "not checkable as written and no gradient was compared" in out, out
    assert "have backward return or store the gradient" in out, out
    assert "FAIL" not in out and "PASS" not in out, out


# --------------------------------------------------------------------------- verify10 Y3: a default or keyword rate

DEFAULT_RATE = """
import numpy as np

class Dense:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((4, 3)) * 0.5, rng.standard_normal(3) * 0.1
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY, SIGNATURE):
        dW, db, dX = self.X.T @ dY, dY.sum(0), dY @ self.W.T
        self.W -= RATE * dW
        self.b -= RATE * db * BUG
        return dX
"""


@pytest.mark.parametrize(("signature", "rate"), [("learning_rate=0.01", "learning_rate"), ("*, lr", "lr"),
                                                 ("*, eta=0.1", "eta")])
@pytest.mark.parametrize("bug", ["1", "2"])
def test_a_default_or_keyword_only_rate_is_set_like_a_required_one(tmp_path, signature, rate, bug):
    """backward(dY, learning_rate=0.01) stepped at its default, unread (a FAIL in dX), and a keyword-only rate
    was not given (exit 3): both are given the probe rate and their step read (verify10 Y3)."""
    src = DEFAULT_RATE.replace("SIGNATURE", signature).replace("RATE", rate).replace("BUG", bug)
    p = run_here("check", f"{student(tmp_path, src, 'dflt.py')}::Dense", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == (0 if bug == "1" else 1), out
    assert f"it is called with {rate}=0.25" in out, out
    assert ("FAIL: Dense: gradient mismatch in db." in out) == (bug == "2"), out


LR_NONE = """
import numpy as np

class Dense:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((4, 3)) * 0.5, rng.standard_normal(3) * 0.1
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY, lr=None):
        self.dW, self.db = self.X.T @ dY, dY.sum(0) * BUG
        dX = dY @ self.W.T
        if lr is not None:
            self.W -= lr * self.dW
            self.b -= lr * self.db
        return dX
"""


@pytest.mark.parametrize("bug", ["1", "2"])
def test_a_rate_defaulting_to_none_is_not_a_self_stepping_backward(tmp_path, bug):
    """backward(dY, lr=None) steps only when given a rate: called without one it is an attribute-style layer
    (self.dW), checked as that, not given 0.25 (its dW and the read step were two gradients of W: exit 3)."""
    p = run_here("check", f"{student(tmp_path, LR_NONE.replace('BUG', bug), 'lrn.py')}::Dense", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == (0 if bug == "1" else 1), out
    assert "attribute style (W/dW, b/db)" in out and "updates the weights itself" not in out, out
    assert ("FAIL: Dense: gradient mismatch in db." in out) == (bug == "2"), out


# --------------------------------------------------------------------------- verify10 Y21, Y22, Y28: where the rate
# and the weights are

STEPPED = """
import numpy as np

class Param:
    def __init__(self, a):
        self.data = a

class Dense:
    def __init__(self, i=4, o=3, seed=0):
        rng = np.random.default_rng(seed)
        self.W, self.b = rng.standard_normal((i, o)) * 0.5, rng.standard_normal(o) * 0.1
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY, learning_rate):
        dW, db, dX = self.X.T @ dY, dY.sum(0), dY @ self.W.T
        self.W -= learning_rate * dW
        self.b -= learning_rate * db * BUG
        return dX

class Tanh:
    def forward(self, X):
        self.Y = np.tanh(X)
        return self.Y
    def backward(self, dY, learning_rate):
        return dY * (1 - self.Y ** 2)

class Model:
    def __init__(self):
        self.layers = [Dense(4, 5, 0), Tanh(), Dense(5, 3, 1)]
    def forward(self, X):
        for layer in self.layers:
            X = layer.forward(X)
        return X
    def backward(self, dY, learning_rate):
        for layer in reversed(self.layers):
            dY = layer.backward(dY, learning_rate)
        return dY

class ModelLr(Model):
    def __init__(self):
        super().__init__()
        self.lr = 0.1
    def backward(self, dY):
        for layer in reversed(self.layers):
            dY = layer.backward(dY, self.lr)
        return dY

class SGD:
    def __init__(self, lr):
        self.lr = lr
    def step(self, layer, dW, db):
        layer.W -= self.lr * dW
        layer.b -= self.lr * db

class DenseOpt(Dense):
    def __init__(self):
        super().__init__()
        self.opt = SGD(0.05)
    def backward(self, dY):
        dX = dY @ self.W.T
        self.opt.step(self, self.X.T @ dY, dY.sum(0) * BUG)
        return dX

class DenseLearningRate(Dense):
    def __init__(self):
        super().__init__()
        self.learning_rate = 0.05
    def backward(self, dY):
        dX = dY @ self.W.T
        self.W = self.W - self.learning_rate * (self.X.T @ dY)
        self.b = self.b - self.learning_rate * dY.sum(0) * BUG
        return dX

class DenseData:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = Param(rng.standard_normal((4, 3)) * 0.5), Param(rng.standard_normal(3) * 0.1)
    def forward(self, X):
        self.X = X
        return X @ self.W.data + self.b.data
    def backward(self, dY, learning_rate):
        dX = dY @ self.W.data.T
        self.W.data = self.W.data - learning_rate * (self.X.T @ dY)
        self.b.data = self.b.data - learning_rate * dY.sum(0) * BUG
        return dX
"""


@pytest.mark.parametrize(("cls", "said", "bias"), [
    ("Model", "it is called with learning_rate=0.25", "dlayers.0.b, dlayers.2.b"),  # Y21: sub-layers stepped
    ("ModelLr", "it steps with the rate in self.lr, set to 0.25", "dlayers.0.b, dlayers.2.b"),  # Y21: self.lr
    ("DenseOpt", "it steps with the rate in self.opt.lr, set to 0.25", "db"),  # Y22: an optimizer object
    ("DenseLearningRate", "it steps with the rate in self.learning_rate, set to 0.25", "db"),  # Y22, Y28: rebound
    ("DenseData", "it is called with learning_rate=0.25", "db"),  # Y28: a Parameter's .data rebound
])
@pytest.mark.parametrize("bug", ["1", "2"])
def test_the_rate_and_the_weights_are_found_where_the_student_keeps_them(tmp_path, cls, said, bias, bug):
    """A model stepping its sub-layers, a rate in self.lr or an optimizer object, a Parameter's .data rebound: the
    weights stepped at the student's own rate and not put back (a FAIL in dX of a correct layer) are stepped at
    the probe rate, read and put back (verify10 Y21, Y22, Y28)."""
    p = run_here("check", f"{student(tmp_path, STEPPED.replace('BUG', bug), 'stepped.py')}::{cls}", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == (0 if bug == "1" else 1), out
    assert "updates the weights itself: " + said in out, out
    assert (f"FAIL: {cls}: gradient mismatch in {bias}." in out) == (bug == "2"), out


# --------------------------------------------------------------------------- dX computed after the step

DX_AFTER = """
import numpy as np

class Dense:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((4, 3)) * 0.5, rng.standard_normal(3) * 0.1
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY, learning_rate):
        BEFORE
        self.W -= learning_rate * (self.X.T @ dY)
        self.b -= learning_rate * dY.sum(0)
        AFTER
"""


@pytest.mark.parametrize("after", [False, True])
def test_dx_computed_with_the_stepped_weights_is_named(tmp_path, after):
    """dX = dY @ W.T after W -= lr * dW FAILs in dX as before, now named dx-after-step (it depends on the rate;
    was "backward is not linear in dY"), and a dX computed first PASSes."""
    lines = ("pass", "return dY @ self.W.T") if after else ("dX = dY @ self.W.T", "return dX")
    src = DX_AFTER.replace("BEFORE", lines[0]).replace("AFTER", lines[1])
    p = run_here("check", f"{student(tmp_path, src, 'dxa.py')}::Dense", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == int(after), out
    assert ("FAIL: Dense: gradient mismatch in dX. diagnosis: backward computes dX with the weights after its own "
            "gradient-descent step: given a learning rate of 0 it returns another (nonzero) dX than given 0.25"
            in out) == after, out
    assert "backward is not linear in dY" not in out, out
