"""tester15 H1: a directional test whose step crosses kinks of the forward is no FAIL, and its fallback is
a bisection over blocks of entries, not an element scan; a wrong entry outside the sample still FAILs.

``Saw`` is a triangle wave of period 4e-3 (slope +-1, a ReLU with its kinks close together), so a step
along a 20x20 input crosses a few of them, as a step along a 700x700 ReLU input does (case C28)."""

import textwrap

import numpy as np
import pytest

from gradcheck.numerical import directional_derivatives, directional_kinks
from tests.test_cli import run_here

SAW = textwrap.dedent('''
    import numpy as np

    P = 4e-3


    class Saw:
        def forward(self, X):
            self.X = X
            return np.abs(np.mod(X, P) - P / 2)

        def backward(self, dY):
            return dY * np.sign(np.mod(self.X, P) - P / 2)


    class SawOneWrong(Saw):
        def backward(self, dY):
            dX = super().backward(dY)
            dX.flat[dX.size // 2 + 3] *= 2.0  # one entry of 400 wrong
            return dX
''')


@pytest.fixture
def saw(tmp_path):
    (tmp_path / "saw.py").write_text(SAW)
    return tmp_path


def test_fast_mode_kinks_crossed_pass_without_an_element_scan(saw):
    r = run_here("check", "saw.py::Saw", "--input-shape", "20,20", "--mode", "fast", cwd=saw)
    assert r.returncode == 0, r.stdout
    assert "fast mode: the directional test of dX was off because its step crossed 6 kink(s)" in r.stdout
    assert "element by element" not in r.stdout
    assert "6 element(s) at a kink" in r.stdout


def test_sample_mode_kinks_crossed_pass(saw):
    r = run_here("check", "saw.py::Saw", "--input-shape", "20,20", "--mode", "sample", cwd=saw)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "outside the sampled entries" not in r.stdout


@pytest.mark.parametrize("mode", ["fast", "sample"])
def test_one_wrong_entry_among_kinks_still_fails(saw, mode):
    r = run_here("check", "saw.py::SawOneWrong", "--input-shape", "20,20", "--mode", mode, cwd=saw)
    assert r.returncode == 1, r.stdout
    assert "FAIL: SawOneWrong: gradient mismatch in dX" in r.stdout


def _relu_case(n, seed):
    rng = np.random.default_rng(seed)
    X, G = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    return X, G, G * (X > 0)


def test_directional_kinks_names_the_crossed_entries_and_refuses_a_wrong_one():
    """On a 300x300 ReLU whose step crosses kinks: the entries found are those within one step of 0, and the
    same direction with one wrong entry (not at a kink) gives None."""
    X, G, g = _relu_case(300, 4)
    (u, d), = directional_derivatives(lambda x: np.maximum(x, 0), [X], {}, G, input_names=["X"],
                                      groups=[["X"]], n_dirs=1)[("X",)]

    def agree(a, n):
        return abs(a - n) <= 1e-6 * (abs(a) + abs(n)) + 1e-9

    assert not agree(float(np.sum(g * u["X"])), d)  # this direction crosses kinks
    found = directional_kinks(lambda x: np.maximum(x, 0), [X], {}, G, u, {"X": g}, input_names=["X"], agree=agree)
    near = {tuple(int(i) for i in ix) for ix in np.argwhere(np.abs(X) < 6.06e-6 * np.abs(u["X"]))}
    assert found is not None and set(found["X"]) == near and len(near) >= 1
    far = int(np.argmax(np.abs(X)))
    g_bad = g.copy()
    g_bad.flat[far] += 1.0
    assert directional_kinks(lambda x: np.maximum(x, 0), [X], {}, G, u, {"X": g_bad}, input_names=["X"],
                             agree=agree) is None
