"""Session 42's fixes to gradcheck's comparison (helper check42): each test failed before its fix."""

import numpy as np
import pytest

from gradcheck import check_layer, diagnose_layer
from gradcheck.diagnose import AGREEMENT_CHANCE, MAX_ROUNDS, rounds_needed
from gradcheck.grading.checks import layer_gradients
from manualprop import Dropout


class Agreeing:
    """A reference whose three forwards agree with probability q ** 3: each call keeps X with probability q."""

    def __init__(self, q, seed=0):
        self.q, self.rng = q, np.random.default_rng(seed)

    def forward(self, X, training=False):
        return X if self.rng.random() < self.q else X * self.rng.random()


def test_no_rounds_where_none_bound_a_right_layers_chance():
    """check41 capped the rounds at MAX_ROUNDS: at q = 0.95 (three calls agree 86% of the time) 40 rounds leave a right
    layer a chance of 0.86 ** 40 = 2e-3 of the fixed-mask reading, not 1e-6. None: no bounded number of rounds."""
    X = np.random.default_rng(1).standard_normal((2, 3))
    assert 0.95 ** (3 * MAX_ROUNDS) > AGREEMENT_CHANCE
    assert all(rounds_needed(Agreeing(0.95, seed), [X]) is None for seed in range(3))
    assert all(rounds_needed(Agreeing(1.0, seed), [X]) is None for seed in range(2))
    assert 3 <= rounds_needed(Agreeing(0.3, 0), [X]) <= MAX_ROUNDS  # a bound within reach: rounds as before


class FirstDropped:
    """A training forward the same at every call that drops X's first entry (a mask drawn once)."""

    def forward(self, X, training=False):
        self.mask = np.ones_like(X)
        if training:
            self.mask.flat[0] = 0.0
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


def test_a_fixed_mask_beside_a_reference_that_seldom_drops_is_not_checked():
    """Dropout(0.01) on 6 entries keeps them all 94% of the calls: a right layer agrees 120 forwards running with a
    chance far above 1e-6, so no verdict of fixed mask (check: NOT CHECKED, exit 3; the grader: not_checked, 0 points)."""
    X = np.random.default_rng(1).standard_normal((2, 3))
    d = diagnose_layer(FirstDropped(), X, training=True, reference=Dropout(p=0.01, rng=0))
    assert "fixed-mask" not in d.codes and d.result.unchecked == ["dX"], d.report()
    assert any("could not be told" in n for n in d.result.notes)
    assert not any("the forward is random in this mode" in n for n in d.result.notes)  # not known to be
    v = layer_gradients(FirstDropped(), X, Dropout(p=0.01, rng=0), training=True, seed=3)
    assert not v.passed and v.fraction == 0.0 and "could not be told" in v.not_checked


def test_a_fixed_mask_beside_a_reference_that_drops_often_is_still_named():
    X = np.random.default_rng(1).standard_normal((4, 5))
    d = diagnose_layer(FirstDropped(), X, training=True, reference=Dropout(p=0.3, rng=0))
    assert d.codes == ["fixed-mask"], d.report()
    part = layer_gradients(FirstDropped(), X, Dropout(p=0.3, rng=0), training=True, seed=3).parts[0]
    assert not part.passed and "gives the same output at every call" in part.message


class MixedScale:
    """verify40 L1: Y = [1e6 X[:, :1], 1e-6 X[:, 1:]]; ``k`` the small columns' factor in backward (2: a bug)."""

    k = 2.0

    def forward(self, X):
        return np.concatenate([1e6 * X[:, :1], 1e-6 * X[:, 1:]], axis=1)

    def backward(self, dY):
        return np.concatenate([1e6 * dY[:, :1], self.k * 1e-6 * dY[:, 1:]], axis=1)


class MixedScaleRight(MixedScale):
    k = 1.0


class Unresolved:
    """Y = 1e6 + 1e-6 X (right): the step cannot move the output, each entry's own round-off is the tensor's."""

    def forward(self, X):
        return 1e6 + 1e-6 * X

    def backward(self, dY):
        return 1e-6 * dY


@pytest.mark.parametrize("mode", ["full", "fast", "sample"])
def test_tiny_entries_beside_a_huge_column_are_judged_at_their_own_round_off(mode):
    """check41 left them NOT CHECKED (exit 3) for the right layer and the wrong alike, and sample mode PASSed the bug:
    differenced output entry by output entry, their round-off is their outputs' (about 4e-17), the floor 1e-9 judges
    them, and a factor 2 on 1e-6 FAILs."""
    X = np.random.default_rng(3).standard_normal((6, 20))
    right = check_layer(MixedScaleRight(), X, twin=None, mode=mode)
    assert right.passed and not right.unchecked, right.notes
    wrong = check_layer(MixedScale(), X, twin=None, mode=mode)
    assert not wrong.passed and wrong.failing_tensors == ["dX"] and not wrong.unchecked
    c = wrong.records[0].get("manual-vs-numerical")
    assert c.worst_a == pytest.approx(2 * c.worst_b, rel=1e-6) and abs(c.worst_b) < 1e-5


def test_an_output_the_step_cannot_move_stays_not_checked():
    res = check_layer(Unresolved(), np.random.default_rng(3).standard_normal((6, 20)), twin=None, mode="full")
    assert not res.passed and res.unchecked == ["dX"] and not res.failing_tensors  # no entry's round-off is smaller


class Cancel(MixedScaleRight):
    """Right, its small outputs computed through a cancellation, (1e4 x + 1e-6 x) - 1e4 x: their own noise (u 1e4 over
    the step, 18% of their 1e-6 gradient) is far above u |Y_j|."""

    def forward(self, X):
        s = X[:, 1:]
        return np.concatenate([1e6 * X[:, :1], (1e4 * s + 1e-6 * s) - 1e4 * s], axis=1)


def test_a_forward_noisier_than_its_outputs_round_off_is_no_false_fail():
    """Its entries' differences at h and smaller steps spread by that noise, which raises their atol (check.LOCAL_NOISE):
    at 1.17e-8 alone one entry failed by 6.8e-8 (exit 1 for a right layer)."""
    for seed in range(3):
        res = check_layer(Cancel(), np.random.default_rng(100 + seed).standard_normal((6, 20)), twin=None, mode="full",
                          seed=seed)
        assert not res.failing_tensors, res.notes
