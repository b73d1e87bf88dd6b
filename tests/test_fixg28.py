"""fixg28: review28g's findings on session 27's checker (H1 tiny gradients, M1-M3, H2 float32 casts, L1-L3)."""
import numpy as np
import pytest

from gradcheck import check_layer
from gradcheck.compare import EXTRAPOLATION_ROUNDOFF, VACUOUS, own_scale_atol


class _TinyLinear:
    """A Linear with W ~ scale N(0, 1), b ~ 0.1 N(0, 1) (review28g's repro/tiny); ``factor`` scales dX."""

    def __init__(self, scale=1e-10, factor=1.0):
        rng = np.random.default_rng(0)
        self.params = {"W": scale * rng.standard_normal((4, 3)), "b": 0.1 * rng.standard_normal(3)}
        self.grads, self.factor = {}, factor

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "b": dY.sum(axis=0)}
        return self.factor * dY @ self.params["W"].T


X54 = np.random.default_rng(5).standard_normal((5, 4))


@pytest.mark.parametrize("mode", ["fast", "full"])
@pytest.mark.parametrize("factor", [2.0, 0.0, -1.0])
def test_a_wrong_dx_below_the_default_atol_fails(mode, factor):
    """H1: every |dX| <= 6.2e-10 < the default atol 1e-9; 36 x the round-off (2.1e-9) passed a doubled and a zero dX."""
    r = check_layer(_TinyLinear(factor=factor), X54, twin=None, mode=mode)
    assert not r.passed, r.notes
    dx = [c for rec in r.records if rec.tensor == "dX" for c in rec.comparisons if "numerical" in c.pair]
    assert dx and not all(c.passed for c in dx) and max(c.atol for c in dx) < 1e-10, dx


@pytest.mark.parametrize("mode", ["fast", "full"])
def test_a_right_dx_below_the_default_atol_passes_and_says_what_it_can_tell(mode):
    r = check_layer(_TinyLinear(), X54, twin=None, mode=mode)
    assert r.passed, r.notes
    assert any("a factor of 2" in n and "is told" in n for n in r.notes), r.notes


def test_a_dx_below_its_own_round_off_is_not_checked():
    """W ~ 1e-13: |dX| ~ 3e-13 is far below the round-off 5.9e-11: no comparison can tell a factor of 2 there."""
    r = check_layer(_TinyLinear(scale=1e-13, factor=2.0), X54, twin=None, mode="full")
    dx = [c for rec in r.records if rec.tensor == "dX" for c in rec.comparisons if "numerical" in c.pair]
    assert dx and all(c.unchecked == "atol" for c in dx), dx
    assert any("NOT CHECKED dX" in n and "cannot tell a factor of 2" in n for n in r.notes), r.notes


def test_the_extrapolation_allowance_never_makes_the_atol_vacuous():
    assert own_scale_atol(2.2e-10, 5.9e-11, extrapolating=True) == pytest.approx(5.9e-11)
    assert own_scale_atol(1e-3, 1e-13, extrapolating=True) == pytest.approx(EXTRAPOLATION_ROUNDOFF * 1e-13)
    top = EXTRAPOLATION_ROUNDOFF * 1e-13 / VACUOUS  # the allowance exactly at the vacuous share: dropped
    assert own_scale_atol(top, 1e-13, extrapolating=True) == pytest.approx(max(1e-9 * top, 1e-13))
