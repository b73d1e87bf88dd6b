"""Session 26 (left26c; tester25s, note25 "Left"): a backward writing into an array its own forward made and cached
gets a verdict. Deep Learning from Scratch 2's TimeSoftmaxWithLoss does ``dx = ys; dx[np.arange(N * T), ts] -= 1``:
refused (exit 3), three planted bugs in it got no verdict. gradcheck runs forward before each backward, as training
does, so the verdict stands; a note says so and what a second backward after one forward gives. A write into the
caller's array (the input forward cached) is still refused.
"""

from pathlib import Path

import numpy as np
from test_cli import both, run_here, student

DLFS2 = Path(__file__).resolve().parent / "fixtures" / "dlfs2"
TSWL = ["--input-shape", "2,3,5", "--loss", "--targets", "labels:5"]


def _book(tmp_path, old="", new=""):
    text = (DLFS2 / "layers.py").read_text(encoding="utf-8")
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    f = tmp_path / "layers.py"
    f.write_text(text, encoding="utf-8")
    return f


def test_the_books_time_softmax_with_loss_passes_with_a_note(tmp_path):
    p = run_here("check", f"{_book(tmp_path)}::TimeSoftmaxWithLoss", *TSWL)
    text = both(p)
    assert p.returncode == 0 and "PASS: TimeSoftmaxWithLoss: dL/dy_pred matches" in text, text  # was exit 3
    assert "note: TimeSoftmaxWithLoss.backward modified its cache (self.cache[1], element [" in text, text
    assert ("an array its forward made (not an input): the verdict does not rest on it, since gradcheck "
            "called each backward after its own forward") in text
    assert "a second backward after the same forward gives another answer (max difference" in text, text


def test_a_bug_planted_in_it_is_named(tmp_path):
    f = _book(tmp_path, "        dx /= mask.sum()\n", "")
    p = run_here("check", f"{f}::TimeSoftmaxWithLoss", *TSWL)
    text = both(p)
    assert p.returncode == 1 and "FAIL: TimeSoftmaxWithLoss: gradient mismatch in dy_pred." in text, text
    assert "dy_pred is 6 times the correct gradient" in text, text


INPUT_WRITER = """
import numpy as np


class Scale:
    def forward(self, X):
        self.X = X
        return 2.0 * X

    def backward(self, dY):
        self.X *= 0  # the caller's array
        return 2.0 * dY
"""


def test_a_write_into_the_cached_input_is_still_refused(tmp_path):
    p = run_here("check", f"{student(tmp_path, INPUT_WRITER)}::Scale", "--input-shape", "3,4")
    text = both(p)
    assert p.returncode == 3 and "Scale.backward modified its cache (self.X" in text, text
    assert "PASS" not in text, text


OWN = """
import numpy as np


class Own:
    def forward(self, X, training=False):
        self.Y = np.tanh(X)
        return self.Y

    def backward(self, dY):
        d = self.Y  # an array forward made
        d **= 2
        d *= -1
        d += {one}
        return dY * d
"""


def _own(one):
    ns = {}
    exec(OWN.format(one=one), ns)  # noqa: S102 - the test's own layer source
    return ns["Own"]()


def test_diagnose_layer_agrees_with_the_cli_on_a_write_into_an_array_forward_made(tmp_path):
    """fixd26: the in-process probe's backward is judged by the one rule (sources.cache_write_verdict), as
    ``gradcheck check``'s sandbox judges it; before, diagnose_layer found "second-backward" (a FAIL) for a
    right tanh whose backward writes into its own self.Y, while the CLI said PASS with a note."""
    import numpy as np

    from gradcheck import diagnose_layer

    X = np.random.default_rng(0).standard_normal((4, 3))
    right = diagnose_layer(_own(1), X, twin=None)
    assert [f.code for f in right.findings if f.severity == "error"] == [], right.findings
    assert right.passed, right.findings
    wrong = diagnose_layer(_own(2), X, twin=None)  # 2 - tanh**2: the gradient itself is wrong
    assert not wrong.passed and "wrong-values" in [f.code for f in wrong.findings], wrong.findings
    assert "second-backward" not in [f.code for f in wrong.findings], wrong.findings
    p = run_here("check", f"{student(tmp_path, OWN.format(one=1))}::Own", "--input-shape", "4,3")
    text = both(p)
    assert p.returncode == 0 and "PASS" in text and "Own.backward modified its cache (self.Y" in text, text


class Drifting:
    """A backward that writes into an array its forward made (self.q, harmless) and also drifts (self.k doubles on
    every backward, never reset by forward): a second backward differs, and so does a fresh forward and backward."""

    def __init__(self):
        self.params, self.grads, self.k = {}, {}, 1.0

    def forward(self, X, training=False):
        self.p, self.q = np.tanh(X), X.copy()
        return self.p.copy()

    def backward(self, dY):
        self.q += 1.0
        self.k *= 2.0
        return dY * (1 - self.p ** 2) * self.k


def test_a_drifting_backward_is_not_excused_by_its_cache_write():
    """Kills own_cache_always_clears: the cache write excuses a second backward's other answer only when a fresh
    forward and backward give the first answer back (diagnose._Probes.own_cache)."""
    from gradcheck import diagnose_layer

    d = diagnose_layer(Drifting(), np.random.default_rng(0).standard_normal((3, 4)))
    assert not d.passed and "second-backward" in d.codes, (d.codes, [f.message for f in d.findings])
