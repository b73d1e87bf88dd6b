"""newuser37 F5: a TA's test putting LeakyReLU's inputs at 0 on purpose (the derivative there is the assignment's
convention) graded a ``x >= 0`` split "no known bug pattern ... 12 of 24 elements", and the command it suggested
PASSes (random inputs are never 0). A failing input gradient that differs only where its input is exactly 0 now
says so, with dX / dY there, yours and the expected (:func:`gradcheck.grading.checks._at_zero_parts`); a bug that
also differs elsewhere keeps its own words.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from test_grading_keys_s35 import _grade  # noqa: E402

LRELU = '''import numpy as np


class LeakyReLU:
    def __init__(self, negative_slope=0.01):
        self.negative_slope = negative_slope

    def forward(self, X):
        self.pos = X > 0
        return np.where(self.pos, X, self.negative_slope * X)

    def backward(self, dY):
        return np.where(self.pos, dY, SLOPE * dY)
'''

TEST = '''import pytest
import manualprop as mp
from gradcheck.grading import away_from_kinks


@pytest.mark.points(1)
@pytest.mark.parametrize("name", ["AtZero", "Everywhere"])
def test_lrelu_at_zero(student, grade, rng, name):
    X = away_from_kinks(rng.standard_normal((4, 6)))
    X[:, ::2] = 0.0
    grade.layer_gradients(student.layer("layers.py", name, negative_slope=0.1), X, mp.LeakyReLU(0.1), seed=3,
                          numerical=False)
'''


def test_a_gradient_wrong_only_at_zero_says_the_convention_and_a_wrong_one_elsewhere_does_not(tmp_path):
    src = LRELU.replace("class LeakyReLU", "class AtZero").replace("X > 0", "X >= 0").replace(
        "SLOPE", "self.negative_slope") + LRELU.split("\n\n\n", 1)[1].replace("class LeakyReLU", "\n\nclass Everywhere"
                                                                            ).replace("SLOPE", "0.2")
    r, data = _grade(tmp_path, {"layers.py": src}, TEST)
    assert r.status == "graded" and len(data["tests"]) == 2, data
    rows = {("AtZero" if "AtZero" in t["name"] else "Everywhere"): " ".join(t["output"].split()) for t in data["tests"]}
    assert all(t["score"] == 0 for t in data["tests"]), rows
    assert ("dX differs from the expected value only where the input is exactly 0 (12 of 24 entries, each at x = 0), "
            "and matches everywhere else; your dX / dY there is 1, the expected 0.1. At a kink the derivative is a "
            "convention") in rows["AtZero"], rows["AtZero"]  # (before: "... (no known bug pattern)")
    assert "only where the input is exactly 0" not in rows["Everywhere"], rows["Everywhere"]
