"""False PASSes a new-user tester found in `gradcheck check` (session 6): gradients below the
absolute tolerance (D10), scalar parameters in attribute style (D5), a loss that writes into
y_pred or its cache (D3), parameters of sub-layers and parameters built in the first forward (D4).

Each case is the tester's repro, run through the installed console script as the tester did, or
in process through ``check_layer``.
"""

import pytest
from test_cli_verdict import flat, run, write

from gradcheck import check_layer

# --------------------------------------------------------------------------- D10: tiny gradients

TINY = """

class Tiny:
    def __init__(self): self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        self.X = X; return 1e-10 * X ** 2
    def backward(self, dY): return dY * 1e-10 * self.X   # BUG: should be 2e-10

class TinyOK(Tiny):
    def backward(self, dY): return dY * 2e-10 * self.X

class Tinier:
    def __init__(self): self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        self.X = X; return 1e-13 * X ** 2
    def backward(self, dY): return dY * 1e-13 * self.X   # BUG: a directional test passes it vacuously
"""


def _tiny():
    ns = {}
    exec(TINY, ns)  # noqa: S102 - the test's own layer source
    return ns


@pytest.mark.parametrize("mode", ["fast", "full", "sample"])
def test_a_x2_bug_in_gradients_below_atol_fails_at_their_own_scale(mode):
    ns = _tiny()
    res = check_layer(ns["Tiny"](), (8, 5), twin=None, mode=mode)
    assert not res.passed and res.failing_tensors == ["dX"]
    c = res.records[0].comparisons[0]
    assert c.atol < 1e-15  # 1e-9 of |dX| <= 4e-10, not the 1e-9 floor that passes anything
    assert any("own scale" in n for n in res.notes), res.notes
    ok = check_layer(ns["TinyOK"](), (8, 5), twin=None, mode=mode)
    assert ok.passed, ok.notes


def test_a_directional_test_below_atol_is_not_a_pass():
    res = check_layer(_tiny()["Tinier"](), (8, 5), twin=None, mode="fast")
    assert not res.passed and res.failing_tensors == ["dX"]


def test_cli_tiny_gradients_fail_and_never_say_directional_failed_then_pass(tmp_path):
    f = write(tmp_path, TINY)
    p = run("check", f"{f}::Tiny", "--input-shape", "8,5")
    out = flat(p)
    assert p.returncode == 1, out
    assert "FAIL: Tiny: gradient mismatch in dX" in out and "0.5 times the correct gradient" in out  # 1e-10 * X for 2e-10 * X
    assert "own scale" in out
    ok = run("check", f"{f}::TinyOK", "--input-shape", "8,5")
    out = flat(ok)
    assert ok.returncode == 0, out
    assert not ("directional test failed" in out and "PASS" in out), out

