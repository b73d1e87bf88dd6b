"""Run from the worktree root: PYTHONPATH=. .venv/bin/python repro/f7_kink_numerical.py

A grader test putting LeakyReLU's inputs exactly at 0 (its kink) with numerical=True (the default): a submission taking
x >= 0 as the positive side reads "Not graded: this test is faulty", the kink never named (with numerical=False the
row says dX differs only where the input is exactly 0: gradcheck.grading.checks._at_zero_parts)."""
import pathlib
import sys
import tempfile

sys.path.insert(0, "tests")
from test_grading_at_zero_s37 import LRELU  # noqa: E402
from test_grading_keys_s35 import _grade  # noqa: E402

TEST = '''import pytest
import manualprop as mp
from gradcheck.grading import away_from_kinks


@pytest.mark.points(1)
@pytest.mark.parametrize("name", ["AtZero", "LeakyReLU"])
def test_lrelu_at_zero(student, grade, rng, name):
    X = away_from_kinks(rng.standard_normal((4, 6)))
    X[:, ::2] = 0.0
    grade.layer_gradients(student.layer("layers.py", name, negative_slope=0.1), X, mp.LeakyReLU(0.1), seed=3)
'''

if __name__ == "__main__":
    src = LRELU.replace("SLOPE", "self.negative_slope")
    src += src.split("\n\n\n", 1)[1].replace("class LeakyReLU", "\n\nclass AtZero").replace("X > 0", "X >= 0")
    with tempfile.TemporaryDirectory() as tmp:
        r, data = _grade(pathlib.Path(tmp), {"layers.py": src}, TEST)
        print("status", r.status, "grader_error:", data["extra_data"].get("grader_error"))
        for t in data["tests"]:
            print(t["name"], t["score"], "/", t["max_score"], ":", " ".join(t["output"].split()))
