"""Session 12 (diag12, finding 2): a training-mode Dropout whose held mask drops every entry gives Y = 0 for any
input, so dX = 0 whatever backward does and a planted bug PASSed (seen on a 4x3 input once in 4,096 runs, a CI
flake). Now the check draws the mask again (up to :data:`gradcheck.diagnose._REDRAWS` times, from the state the
layer's generator has then: the same draws for the same seed) until the forward depends on its input; when no
draw does (a drop rate of 1.0), it says so and gives no PASS: NOT CHECKED, exit 3, a WARNING."""

import numpy as np
import pytest
from test_cli import both, run, student

import manualprop as mp
from gradcheck.diagnose import diagnose_layer


class RngDropout:
    """its mask from a generator made once in __init__ (rewound by the check); ``right``: the 1/(1-p) scale"""

    def __init__(self, p=0.5, seed=0, right=False):
        self.p, self.rng, self.right = p, np.random.default_rng(seed), right

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / max(1 - self.p, 1e-300)
        return X * self.mask

    def backward(self, dY):
        if self.mask is None:
            return dY
        return dY * (self.mask if self.right else self.mask > 0)  # BUG unless right: the scale is missing


class MpDropoutNoScale(mp.Dropout):
    """manualprop's Dropout (held with fix_mask(True)) whose backward forgets the scale"""

    def backward(self, dY):
        f = self.cache["factor"]
        return dY if f is None else dY * (f > 0)


#: seeds whose first held mask on a 3x2 input drops every entry (a PASS of the buggy layers on main)
RNG_SEEDS, MP_SEEDS = (51, 103, 262), (70, 74, 233)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_an_all_dropped_rewound_mask_is_drawn_again_and_the_bug_fails(seed):
    d = diagnose_layer(RngDropout(0.5, seed), (3, 2), name="D", training="auto")
    assert not d.passed, d.report()
    train = next(x for x in [d, *d.other_modes] if x.training)
    assert "mask-scale" in train.codes, train.report()
    assert diagnose_layer(RngDropout(0.5, seed, right=True), (3, 2), name="D", training="auto").passed


@pytest.mark.parametrize("seed", MP_SEEDS)
def test_an_all_dropped_fixed_mask_is_drawn_again_and_the_bug_fails(seed):
    d = diagnose_layer(MpDropoutNoScale(0.5, rng=seed), (3, 2), name="D", training="auto")
    assert not d.passed, d.report()
    train = next(x for x in [d, *d.other_modes] if x.training)
    assert "mask-scale" in train.codes, train.report()
    assert diagnose_layer(mp.Dropout(0.5, rng=seed), (3, 2), name="D", training="auto").passed


@pytest.mark.parametrize("layer", [lambda: RngDropout(1.0, 0, right=True), lambda: mp.Dropout(1.0, rng=0)])
def test_a_rate_of_one_is_not_checked_and_says_why(layer):
    """p = 1: every call returns zeros (a deterministic forward): dX = 0 compared with dX = 0 is no PASS."""
    d = diagnose_layer(layer(), (4, 3), name="D", training=True)
    assert not d.passed and d.codes == ["all-dropped"], d.report()
    assert d.result is not None and d.result.passed  # the comparison ran: zeros against zeros
    s = d.sentence()
    assert "in training mode the forward does not depend on its input (it returns zeros for any input: a mask " \
           "that keeps no entry, a drop rate of 1 or a keep probability of 0?): a mask that drops every entry " \
           "gives dX = 0 whatever backward does" in s, s


@pytest.mark.parametrize("right", [True, False])
def test_every_draw_dropping_all_is_not_checked_and_says_why(right):
    """p = 0.9 on 2 entries (seed 0; the forward is seen random), p = 0.8 on 4 (seed 40): the held mask and the 4
    drawn again drop every entry, so no draw is left to compare: not passed, named; the same on a second run
    (the draws come from the seeded generator)."""
    for p, seed, shape in ((0.9, 0, (2, 1)), (0.8, 40, (2, 2)), (0.9, 0, (2, 1))):
        d = diagnose_layer(RngDropout(p, seed, right=right), shape, name="D", training=True)
        assert not d.passed and d.codes == ["all-dropped"], d.report()
        assert "does not depend on its input for any of the 5 masks drawn (its draws held fixed, then drawn " \
               "again)" in d.sentence(), d.sentence()


def test_a_backward_that_returns_something_else_still_fails():
    """A forward of zeros, a backward that returns dY: FAIL (a real mismatch), the warning beside it."""
    class Ones(RngDropout):
        def backward(self, dY):
            return dY

    d = diagnose_layer(Ones(1.0, 0), (4, 3), name="D", training=True)
    assert not d.passed and d.result.failing_tensors == ["dX"] and "all-dropped" in d.codes, d.report()


RATE_ONE = '''
import numpy as np

class Dropout:
    def __init__(self, p=1.0):
        self.p, self.rng = p, np.random.default_rng(0)

    def forward(self, X, training=False):
        self.mask = (self.rng.random(X.shape) >= self.p) * 1.0 if training else None
        return X if self.mask is None else X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask * 2.0  # BUG: the scale 2; dX = 0 either way
'''


def test_cli_rate_of_one_is_not_checked_with_a_warning(tmp_path):
    p = run("check", f"{student(tmp_path, RATE_ONE)}::Dropout", "--input-shape", "4,3")
    out = both(p)
    assert p.returncode == 3 and "PASS" not in out, out
    assert "WARNING: in training mode the forward does not depend on its input (it returns zeros" in out, out
    assert "NOT CHECKED: Dropout [training]" in out, out


def test_a_held_mask_is_not_checked_on_a_stacked_batch():
    """A rewound generator draws a mask of another shape for a stacked batch (the checker's fast scan of the
    inputs): its first rows repeat the check's mask, and seed 22 on 2x2 drew the same 4 entries again for the
    batch-independence probe's second arrangement (a 1-in-16 coincidence), so the stacked scan ran with other
    masks in later copies: 4 elements "at a kink" and a PASS of the missing scale. The held forward's inputs
    are now moved one entry at a time."""
    d = diagnose_layer(RngDropout(0.5, 22), (2, 2), name="D", training=True)
    assert not d.passed and d.result.failing_tensors == ["dX"] and not d.result.kinks, d.report()
    assert diagnose_layer(RngDropout(0.5, 22, right=True), (2, 2), name="D", training=True).passed
