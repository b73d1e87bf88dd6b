"""Session 18's tester (tester18s) findings fixed by fixt18: a feature toggle set to a constant (``self.use_dropout =
True``) is a plain switch, each value checked (H1: its other branch never ran and the check PASSed); the diagnoses
of a function pair's repeated-index embedding, of a dropout mask beside a coincidental 1/N and of batch norm on one
sample; ``--jacobian``'s mode word."""

import pytest
from test_cli import both, run_here, student

USE_DROPOUT = """
import numpy as np

class Drop:
    def __init__(self, p=0.5):
        self.p = p; self.use_dropout = True
    def forward(self, x):
        if self.use_dropout:
            self.mask = (np.random.rand(*x.shape) > self.p) / (1 - self.p)
            return x * self.mask
        return x * self.K  # inverted dropout: eval passes x on
    def backward(self, dy):
        if self.use_dropout:
            return dy * self.mask
        return dy
    K = 1

class DropBug(Drop):
    K = 3

class Net:  # CS231n FullyConnectedNet's dropout sub-layer, its switch a constant
    def __init__(self):
        self.W = np.linspace(-1, 1, 20).reshape(5, 4); self.drop = DropBug()
    def forward(self, x):
        self.x = x
        return self.drop.forward(x @ self.W)
    def backward(self, dy):
        d = self.drop.backward(dy)
        self.dW = self.x.T @ d
        return d @ self.W.T

class Configured:  # self.use_dropout from an __init__ argument: configuration (--init chooses it), not a switch
    def __init__(self, dropout=1.0):
        self.p = dropout; self.use_dropout = dropout != 1
    def forward(self, x):
        return x * 2 if self.use_dropout else x * 3
    def backward(self, dy):
        return dy * 2 if self.use_dropout else dy * 3
"""


@pytest.mark.parametrize("cls, rows", [("DropBug", "DropBug [self.use_dropout=False]"),
                                       ("Net", "Net [self.drop.use_dropout=False]")])
def test_h1_a_constant_use_dropout_is_checked_at_each_value(tmp_path, cls, rows):
    """``self.use_dropout = True`` (CS231n's name) was read as configuration: the eval branch (its bug) never ran
    and the check PASSed, its mode 'forward has no training switch'."""
    f = student(tmp_path, USE_DROPOUT, "use_dropout.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "4,5" if cls == "Net" else "4,6")
    out = both(p)
    assert p.returncode == 1 and "PASS" not in out, out
    assert f"FAIL: {rows}: gradient mismatch in dX" in out, out
    assert "no training switch" not in out, out


def test_h1_a_use_flag_set_from_an_init_argument_stays_configuration(tmp_path):
    f = student(tmp_path, USE_DROPOUT, "use_dropout.py")
    p = run_here("check", f"{f}::Configured", "--input-shape", "4,6")
    out = both(p)
    assert p.returncode == 0 and "use_dropout=" not in out, out
    ok = run_here("check", f"{f}::Drop", "--input-shape", "4,6")
    assert ok.returncode == 0 and "Drop [self.use_dropout=False] dX" in both(ok), both(ok)


BATCHNORM = """
import numpy as np

class BatchNorm1d:
    def __init__(self, num_features=4, eps=1e-5):
        self.gamma = np.ones(num_features); self.beta = np.zeros(num_features); self.eps = eps
    def forward(self, x):
        self.xc = x - x.mean(axis=0)
        self.std = np.sqrt((self.xc ** 2).mean(axis=0) + self.eps)
        self.xhat = self.xc / self.std
        return self.gamma * self.xhat + self.beta
    def backward(self, dy):
        n = dy.shape[0]
        self.dbeta = dy.sum(axis=0); self.dgamma = (dy * self.xhat).sum(axis=0)
        dxhat = dy * self.gamma
        return (n * dxhat - dxhat.sum(axis=0) - self.xhat * (dxhat * self.xhat).sum(axis=0)) / (n * self.std)
"""


def test_m4_batch_norm_on_one_sample_says_so_not_dropout(tmp_path):
    """One sample: x - mean = 0, the output is beta for any input. NOT CHECKED was right, but its sentence spoke of
    dropout masks and keep probabilities."""
    f = student(tmp_path, BATCHNORM, "bn_one.py")
    p = run_here("check", f"{f}::BatchNorm1d", "--input-shape", "1,4")
    out = both(p)
    assert p.returncode == 3 and "PASS" not in out, out
    flat = " ".join(out.split())
    assert "x - mean = 0, so a batch normalisation's (or centring's) training output is the same for any input " \
           "(its shift beta, or 0 without one)" in flat, out
    assert "batch of at least 2 samples" in out and "normalises one sample" in out, out
    assert "mask" not in out and "keep probability" not in out, out
    ok = run_here("check", f"{f}::BatchNorm1d", "--input-shape", "3,4")
    assert ok.returncode == 0, both(ok)


TANH_AND_BN = """
import numpy as np

class Tanh:
    def forward(self, x):
        self.y = np.tanh(x)
        return self.y
    def backward(self, dy):
        return dy * (1 - self.y ** 2)

class BNRunningVar:  # running_var read in both modes, no gradient for it; training's dX lacks the mean's path
    def __init__(self, D=4):
        self.gamma = np.ones(D); self.beta = np.zeros(D); self.running_var = np.ones(D) * 2.0
    def forward(self, x, training=True):
        self.xhat = ((x - x.mean(0)) if training else x) / np.sqrt(self.running_var + 1e-5)
        return self.gamma * self.xhat + self.beta
    def backward(self, dy):
        self.dgamma = (dy * self.xhat).sum(0); self.dbeta = dy.sum(0)
        return dy * self.gamma / np.sqrt(self.running_var + 1e-5)
"""


def test_l6_jacobian_of_a_one_mode_layer_names_no_mode(tmp_path):
    f = student(tmp_path, TANH_AND_BN, "l6.py")
    p = run_here("check", f"{f}::Tanh", "--input-shape", "3,4", "--tape", "--jacobian")
    out = both(p)
    assert p.returncode == 0, out
    assert "jacobian dY/dX (12 x 12): tape (your forward, stacked VJPs) vs central differences" in out, out
    assert "eval mode" not in out, out


def test_l6_a_mode_whose_gradients_match_beside_a_weight_without_gradient_is_not_checked_not_fail(tmp_path):
    f = student(tmp_path, TANH_AND_BN, "l6.py")
    p = run_here("check", f"{f}::BNRunningVar", "--input-shape", "6,4")
    out = both(p)
    assert p.returncode == 1, out
    assert "NOT CHECKED: BNRunningVar [eval]: weight or constant (see the diagnosis)." in out, out
    assert "FAIL: BNRunningVar [eval]" not in out and "FAIL: BNRunningVar [training]: gradient mismatch in dX" in out


def test_m2_m3_l5_each_planted_bug_gets_its_own_name():
    """The planted bugs of tester18s's findings (tests/buggy_layers/tester18.py, TanhOfInput) each named exactly, not
    within the table's 90% hit rate: before, a max pool's windows, an extra 1/batch, 'no known bug pattern' or a
    bare constant factor."""
    from buggy_layers import EXPECTED, diagnose, first_code

    keys = [k for k in EXPECTED if k.startswith("tester18.py::") or k == "activations.py::TanhOfInput"]
    got = {k: first_code(diagnose(k)) for k in keys}
    assert len(keys) == 11 and got == {k: EXPECTED[k] for k in keys}, got
