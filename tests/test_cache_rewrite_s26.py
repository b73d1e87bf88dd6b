"""Session 26 (left26c; tester25s, note25 "Left"): a backward writing into an array its own forward made and cached
gets a verdict. Deep Learning from Scratch 2's TimeSoftmaxWithLoss does ``dx = ys; dx[np.arange(N * T), ts] -= 1``:
refused (exit 3), three planted bugs in it got no verdict. gradcheck runs forward before each backward, as training
does, so the verdict stands; a note says so and what a second backward after one forward gives. A write into the
caller's array (the input forward cached) is still refused.
"""

from pathlib import Path

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
    assert "an array its forward made (not an input): harmless where every backward follows its own forward" in text
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
