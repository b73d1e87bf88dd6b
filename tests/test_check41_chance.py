"""Session 41 (helper check41), flags40's open (2, 3): a right dropout read as a fixed mask by chance. The rounds of
agreeing forwards asked before that reading bound its chance by AGREEMENT_CHANCE for every agreement share the
reference's trials cannot rule out (a Clopper-Pearson bound, not the share seen)."""

import math

import numpy as np
import pytest

from gradcheck.diagnose import AGREEMENT_CHANCE, AGREEMENT_TRIALS, agreement_bound, rounds_needed


class Agreeing:
    """A reference whose three forwards agree with probability q ** 3: each call keeps X with probability q."""

    def __init__(self, q, seed=0):
        self.q, self.rng = q, np.random.default_rng(seed)

    def forward(self, X, training=False):
        return X if self.rng.random() < self.q else X * self.rng.random()


@pytest.mark.parametrize("agree", [0, 1, 37, 100, 150])
def test_the_bound_is_an_exact_clopper_pearson_one(agree):
    s = agreement_bound(agree, AGREEMENT_TRIALS, AGREEMENT_CHANCE / 2)
    cdf = math.fsum(math.comb(AGREEMENT_TRIALS, i) * s ** i * (1 - s) ** (AGREEMENT_TRIALS - i) for i in range(agree + 1))
    assert cdf == pytest.approx(AGREEMENT_CHANCE / 2, rel=1e-6)


@pytest.mark.parametrize("q", [0.3, 0.8, 0.85])
def test_the_rounds_asked_bound_a_right_layers_chance(q):
    """redteam40's rounds took the share seen: at q = 0.8 (s = 0.512) 200 trials see 0.45 one time in 25, asking 18
    rounds, which a right layer agreeing at 0.512 passes with probability 6e-6."""
    X = np.random.default_rng(1).standard_normal((2, 3))
    for seed in range(3):
        ref = Agreeing(q, seed)
        R = rounds_needed(ref, [X])
        probe = Agreeing(q, seed)
        agree = sum(len({probe.forward(X).tobytes() for _ in range(3)}) == 1 for _ in range(AGREEMENT_TRIALS))
        s_plus = agreement_bound(agree, AGREEMENT_TRIALS, AGREEMENT_CHANCE / 2)
        need = max(3, math.ceil(math.log(AGREEMENT_CHANCE / 2) / math.log(s_plus)))
        assert R == (need if need <= 40 else None)  # check42: None (NOT CHECKED), not 40 rounds that bound nothing
        assert R is None or s_plus ** R <= AGREEMENT_CHANCE / 2
        assert R is None or (q ** 3) ** R <= AGREEMENT_CHANCE  # the true share, here known
