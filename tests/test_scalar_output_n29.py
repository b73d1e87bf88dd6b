"""newuser29 M1: a correct layer whose forward gives one number (an L2 penalty ``Y = 0.5 * lam * sum(X**2)``,
``dX = lam * X * dY``) got "wrong result (exit 1) ... gave Y as a single number", and with ``--loss`` exit 3
"forward() takes 2 positional arguments but 3 were given". A scalar Y is checked now (as shape (1,), backward given
dY as one number, as PyTorch's backward of a 0-d tensor): the right one PASSes, wrong ones FAIL; ``--loss`` on a
forward of one array is a usage error (exit 2) saying to drop it. The values FAILed are wrong by hand: lam*X is the
derivative of 0.5*lam*sum(X**2), and central differences below say so too."""

import numpy as np
import pytest
from test_cli import both, run_here, student

import gradcheck

LAYERS = """
import numpy as np


class L2Penalty:
    def __init__(self, lam=0.1):
        self.lam = lam

    def forward(self, X):
        self.X = X
        return 0.5 * self.lam * np.sum(X ** 2)

    def backward(self, dY=1.0):
        return self.lam * self.X * dY


class L2NoLam(L2Penalty):
    def backward(self, dY=1.0):
        return self.X * dY  # BUG: lam missing


class WSum:
    # a 0-d array output with a weight: Y = sum(tanh(X @ W))
    def __init__(self):
        self.W = np.random.default_rng(3).standard_normal(4)

    def forward(self, X):
        self.X = X
        return np.array(np.sum(np.tanh(X @ self.W)))

    def backward(self, dY):
        g = (1 - np.tanh(self.X @ self.W) ** 2) * dY
        self.dW = 2 * self.X.T @ g  # BUG: twice
        return np.outer(g, self.W)
"""


def test_a_scalar_output_is_checked_and_passes(tmp_path):
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::L2Penalty", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 0 and "PASS: L2Penalty: every gradient (dX) matches" in text, text
    assert "forward gives one number" in text and "checked as Y of shape (1,)" in text, text


@pytest.mark.parametrize(("cls", "wrong", "words"), [("L2NoLam", "dX", "10 times the correct gradient"),
                                                     ("WSum", "dW", "2 times the correct gradient")])
def test_a_wrong_backward_of_a_scalar_output_fails(tmp_path, cls, wrong, words):
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::{cls}", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 1 and f"FAIL: {cls}: gradient mismatch in {wrong}." in text and words in text, text


def test_in_process_check_layer_checks_it_too():
    ns = {}
    exec(LAYERS, ns)  # noqa: S102 - the test's own layers
    X = np.random.default_rng(1).standard_normal((5, 4))
    assert gradcheck.check_layer(ns["L2Penalty"](), X, twin=None).passed
    r = gradcheck.check_layer(ns["L2NoLam"](), X, twin=None)
    assert not r.passed
    num = np.zeros_like(X)  # independent central differences of forward, dY = 1
    layer, h = ns["L2Penalty"](), 1e-6
    for idx in np.ndindex(X.shape):
        Xp, Xm = X.copy(), X.copy()
        Xp[idx] += h
        Xm[idx] -= h
        num[idx] = (layer.forward(Xp) - layer.forward(Xm)) / (2 * h)
    np.testing.assert_allclose(num, 0.1 * X, rtol=1e-6, atol=1e-9)


def test_loss_on_a_forward_of_one_array_is_a_usage_error_saying_how(tmp_path):
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::L2Penalty", "--input-shape", "5,4", "--loss")
    text = both(p)
    assert p.returncode == 2, text
    assert "L2Penalty.forward takes one array (X)" in text and "drop --loss" in text, text


def test_a_forward_returning_a_number_by_mistake_still_says_so(tmp_path):
    """A Linear whose forward returns float(sum) and whose backward cannot take a number: not read as a scalar
    layer, the check says what forward gave (exit 1), as before."""
    f = student(tmp_path, """
import numpy as np
class Lin:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((4, 3))
    def forward(self, X):
        self.X = X
        return float(np.sum(X @ self.W))
    def backward(self, dY):
        self.dW = self.X.T @ dY
        return dY @ self.W.T
""")
    p = run_here("check", f"{f}::Lin", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 1 and "gave Y as a single number" in text, text
