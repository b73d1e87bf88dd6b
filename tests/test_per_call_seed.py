"""Session 12 (diag12, Z16): a Dropout that seeds a new generator from a call counter in forward
(``rng = np.random.default_rng(self.calls); self.calls += 1``) draws another mask on every call. gradcheck cannot
hold it fixed (no generator lives between calls to rewind), and it was read as "forward changes the layer's
state ... (running statistics ...?)": a FAIL of a right layer. Now the seed is named as randomness gradcheck
cannot hold fixed: NOT CHECKED (exit 3), naming self.calls, with the advice to seed once in __init__."""

import pytest
from test_cli import both, run, run_here, student

from gradcheck.diagnose import diagnose_layer

SEEDED = '''
import numpy as np


class Dropout:
    """its mask from a generator seeded anew by a call counter: right backward"""
    def __init__(self, p=0.5):
        self.p, self.{attr} = p, 0

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        {seed}
        self.{attr} += 1
        self.mask = (rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask
'''

SEEDS = {"default_rng": "rng = np.random.default_rng(self.{attr})",
         "RandomState": "rng = np.random.RandomState(self.{attr} + 7)",
         "np.random.seed": "np.random.seed(self.{attr}); rng = np.random"}


@pytest.mark.parametrize("how", SEEDS)
def test_cli_per_call_seed_is_not_checked_and_named(tmp_path, how):
    attr = "calls" if how != "np.random.seed" else "step"
    src = SEEDED.replace("{seed}", SEEDS[how]).replace("{attr}", attr)
    through = run if how == "default_rng" else run_here  # one case through the console script
    p = through("check", f"{student(tmp_path, src)}::Dropout", "--input-shape", "4,3")
    out = both(p)
    assert p.returncode == 3 and "NOT CHECKED: Dropout [training]" in out, out
    assert "forward changes the layer's state" not in out and "running statistics" not in out, out
    assert f"forward seeds a new generator from self.{attr}, which it changes on every call" in out, out
    assert "seed once in __init__ (self.rng = np.random.default_rng(seed))" in out, out


def test_per_call_seed_in_process(tmp_path):
    import importlib.util

    path = student(tmp_path, SEEDED.replace("{seed}", SEEDS["default_rng"]).replace("{attr}", "calls"))
    spec = importlib.util.spec_from_file_location("per_call_seed", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    d = diagnose_layer(mod.Dropout(), (4, 3), name="Dropout", training=True)
    assert not d.passed and d.codes == ["non-deterministic"], d.report()
    assert "forward seeds a new generator from self.calls, which it changes on every call" in d.sentence()
