"""fixq29: a correct layer whose forward cancels digits (a LayerNorm adding 1e7 inside) was named a bug at fixn29's
probe_rng(0) G ("dX differs from the correct gradient in 6 of 6 sampled elements (no known bug pattern); got
-0.0889499, expected -0.0205171"): its dX is HIPS autograd's to 1e-16 and the differences at steps 1e-3..1e-1 agree
with it to 1e-4, but at dX[0, 2] the estimates at 2h and h/2 landed near the one at h (a quantised forward) and the
spread they measured was below half the mismatch. The round-off grows as 1/h: the estimate at h/4 measures it too
(gradcheck.uncertainty.NOISE_STEPS); before, 5 of seeds 0-19 named the correct layer a bug."""

import sys

import numpy as np
import pytest

from gradcheck.uncertainty import NOISE_STEPS, within_noise

OFFSET_LAYERNORM = '''
import numpy as np

class LayerNorm:
    def __init__(self, D=3):
        self.params, self.grads = {"gamma": np.ones(D), "beta": np.zeros(D)}, {}

    def forward(self, X, training=False):
        X = X * 1e-3 + 1e7
        mu, var = X.mean(-1, keepdims=True), X.var(-1, keepdims=True)
        self.istd = 1 / np.sqrt(var + 1e-5)
        self.xhat = (X - mu) * self.istd
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def backward(self, dY):
        self.grads["gamma"] = (dY * self.xhat).sum(0)
        self.grads["beta"] = dY.sum(0)
        d = dY * self.params["gamma"]
        return 1e-3 * self.istd * (d - d.mean(-1, keepdims=True) - self.xhat * (d * self.xhat).mean(-1, keepdims=True))
'''


def test_the_estimate_at_a_quarter_step_measures_the_round_off():
    """dX[0, 2] of the case above: the estimates at h, 2h and h/2 within 8.1e-3 of one another, 2.3e-2 off."""
    assert NOISE_STEPS == (2.0, 0.5, 0.25)
    n, m, eps = np.array([0.5]), np.array([0.5 + 2.3e-2]), 1e-5
    at = {2 * eps: n + 8.1e-3, eps / 2: n - 4e-3, eps / 4: n - 2e-1}
    got = within_noise(m, n, lambda e: at[e], eps, 1e-6, 1e-9)
    assert got == pytest.approx((2.3e-2, 2e-1))
    at[eps / 4] = n - 4e-3  # no round-off at h/4 either: a mismatch of 2.3e-2 is not noise
    assert within_noise(m, n, lambda e: at[e], eps, 1e-6, 1e-9) is None


@pytest.mark.parametrize("seed", range(8))
def test_a_correct_layer_cancelling_digits_is_never_named_a_bug(tmp_path, monkeypatch, seed):
    from gradcheck import diagnose_layer

    (tmp_path / "offset_ln_q29.py").write_text(OFFSET_LAYERNORM)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("offset_ln_q29", None)
    from offset_ln_q29 import LayerNorm

    d = diagnose_layer(LayerNorm(), (4, 3), mode="full", method="central", seed=seed)
    assert not d.result.passed  # the estimate is noise: no PASS either
    assert [f.code for f in d.findings] == ["numerical-noise"], d.findings
