"""newuser24 L5: within_noise tries the largest mismatch alone first (``some``), so a plain bug needs one
evaluation per step (NOISE_STEPS: three since fixq29), not a whole estimate per step; the answer is the one the whole estimate gives."""

import numpy as np
import pytest

from gradcheck.uncertainty import NOISE_STEPS, within_noise


def _case(n, spread, m):
    calls = {"all": 0, "some": 0}

    def whole(e):
        calls["all"] += 1
        return n + spread * (1 if e > 1e-5 else -1)

    def some(e, idx):
        calls["some"] += 1
        out = np.full(n.shape, np.nan)
        for i in idx:
            out[i] = whole(e)[i]
        calls["all"] -= 1
        return out
    return calls, whole, some


@pytest.mark.parametrize("m_off,noise", [([0, 0, 7e-6], True), ([0, 0, 9e-6], False), ([1e-4, 0, 7e-6], False),
                                         ([3e-6, 0, 9e-6], False), ([5e-6, 0, 7e-6], True)])
def test_the_largest_mismatch_first_gives_the_same_answer(m_off, noise):
    n = np.array([1.0, -2.0, 0.5])
    spread = np.array([3e-6, 1e-12, 4e-6])
    m = n + np.array(m_off)
    calls, whole, some = _case(n, spread, m)
    want = within_noise(m, n, whole, 1e-5, 1e-6, 1e-9)
    calls["all"] = 0
    got = within_noise(m, n, whole, 1e-5, 1e-6, 1e-9, some=some)
    assert (got is not None) == noise and got == want
    if not noise and m_off[2] == 9e-6:  # the largest mismatch is not noise: decided from it alone
        assert calls == {"all": 0, "some": len(NOISE_STEPS)}
