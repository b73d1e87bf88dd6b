"""A given atol at or below the floor (review31 GIVEN_ATOL_AT_FLOOR_PASS).

A given ``--atol`` / ``atol=`` larger than every |gradient| passes any gradient of that size, its negation too
(newuser30 F11: NOT CHECKED, never a PASS). Session 30 judged that only above ``ATOL_FLOOR`` (1e-9), so that a
gradient 0 by the layer's symmetry (attention's ``db_k``) is still compared at the zoo's ``atol=1e-9``; a Linear with
weights of 1e-11 and dX negated then PASSed at ``--atol 1e-9``. A tensor is now judged whenever its hand-derived
gradient rises above the round-off of its finite differences; one within it (0 to the differences) is compared.
"""
import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck.check import check_layer, check_loss

TINY = """
import numpy as np


class Lin:
    def __init__(self, W, sign=-1.0):
        self.params = {"W": np.array(W, dtype=float)}
        self.grads = {}
        self.sign = sign

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"]

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        return self.sign * (dY @ self.params["W"].T)  # sign=-1: dX negated
"""
W_TINY = [[3e-11, -2e-11, 1e-11], [-1e-11, 2e-11, 4e-11]]


def _lin(sign):
    ns = {}
    exec(TINY, ns)
    return ns["Lin"](W_TINY, sign)


def test_a_negated_dx_of_size_1e_10_is_not_checked_at_a_given_atol_of_1e_9():
    """Before: PASS (the given atol 1e-9 is 10 times every |dX|); now dX NOT CHECKED, never passed."""
    res = check_layer(_lin(-1.0), (4, 2), atol=1e-9, twin=None)
    assert not res.passed, res.table()
    assert "dX" in " ".join(res.unchecked), res.unchecked
    assert "dW" not in " ".join(res.unchecked), res.unchecked  # dW = X.T @ dY is of order 1: compared


def test_the_same_layer_at_its_default_atol_fails_its_negated_dx():
    res = check_layer(_lin(-1.0), (4, 2), twin=None)
    assert not res.passed and not res.unchecked, res.table()
    assert [r.tensor for r in res.records if r.kind != "forward" and not r.passed] == ["dX"], res.table()


def test_the_cli_says_not_checked_naming_the_given_atol(tmp_path):
    p = run_here("check", f"{student(tmp_path, TINY, 'tiny.py')}::Lin", "--input-shape", "4,2", "--init",
                 '{"W": %s}' % W_TINY, "--atol", "1e-9")
    text = both(p)
    assert p.returncode == 3, text
    assert "PASS" not in text and "the atol you gave (atol=1e-09 for dX" in text, text


SHIFT = """
import numpy as np


class Shifted:
    '''Y = X @ W + (c - mean(c)): the sum of dY/dc's entries is 0 in every direction of c along ones.'''

    def __init__(self):
        rng = np.random.default_rng(3)
        self.params = {"W": rng.standard_normal((3, 2)), "c": np.zeros(2)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + 0.0 * self.params["c"]

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        self.grads["c"] = np.zeros(2)  # the output does not move with c: its gradient is exactly 0
        return dY @ self.params["W"].T
"""


def test_a_gradient_zero_to_the_differences_is_compared_at_a_given_atol_of_1e_9():
    """A tensor whose every gradient is 0 (as attention's db_k at the zoo's atol=1e-9) keeps its comparison: PASS."""
    ns = {}
    exec(SHIFT, ns)
    res = check_layer(ns["Shifted"](), (4, 3), atol=1e-9, twin=None)
    assert res.passed and not res.unchecked, res.table()


class TinyLoss:
    """L = 1e-10 * sum(y_true * y_pred): dL/dy_pred = 1e-10 * y_true; ``sign=-1``: the gradient negated."""

    def __init__(self, sign):
        self.sign = sign

    def forward(self, y_true, y_pred):
        self.y_true = y_true
        return float(1e-10 * np.sum(y_true * y_pred))

    def backward(self):
        return self.sign * 1e-10 * self.y_true


class SignMSE:
    def forward(self, y_true, y_pred):
        self.d = y_pred - y_true
        return float(np.mean(self.d ** 2))

    def backward(self):
        return -2 * self.d / self.d.size  # the sign wrong


@pytest.mark.parametrize(("loss", "atol"), [(TinyLoss(-1.0), 1e-9), (SignMSE(), 100.0)])
def test_a_loss_at_a_given_atol_swamping_its_gradient_is_not_checked(loss, atol):
    """A loss's gradient judged as a layer's: the tiny loss at atol=1e-9 PASSed before (the floor); the MSE at
    atol=100 had no test (review31's surviving mutant loss_atol_default_only)."""
    rng = np.random.default_rng(0)
    res = check_loss(loss, rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), atol=atol, twin=None)
    assert not res.passed and res.unchecked, res.table()


def test_the_tiny_loss_fails_its_sign_at_an_atol_below_its_gradient():
    """The control: at atol=1e-13 (below |dy_pred| ~ 1e-10, above its round-off) the sign FAILs, the right one PASSes."""
    rng = np.random.default_rng(0)
    yt, yp = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    res = check_loss(TinyLoss(-1.0), yt, yp, atol=1e-13, twin=None)
    assert not res.passed and not res.unchecked, res.table()
    ok = check_loss(TinyLoss(1.0), yt, yp, atol=1e-13, twin=None)
    assert ok.passed, ok.table()


@pytest.mark.parametrize("off, judged", [(0.03, True), (0.3, False)])
def test_the_round_off_boundary_from_both_sides(off, judged):
    """review32 atol_resolved_x10: a constant offset in Y raises the differences' round-off (~4e-10 off), dX stays
    8e-11. off=0.03: dX 6 times its round-off, resolved: NOT CHECKED at the given 1e-9 (a rule 10x looser PASSed
    it); off=0.3: 0.6 times, 0 to the differences: compared at the atol given, as attention's db_k."""
    ns = {}
    exec(TINY.replace('return X @ self.params["W"]', 'return X @ self.params["W"] + self.off'), ns)
    layer = ns["Lin"](W_TINY, -1.0)
    layer.off = off
    res = check_layer(layer, (4, 2), atol=1e-9, twin=None)
    assert res.passed is not judged, res.table()
    assert ("dX" in " ".join(res.unchecked)) is judged, res.unchecked
