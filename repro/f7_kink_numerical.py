"""Run from the worktree root: PYTHONPATH=. .venv/bin/python repro/f7_kink_numerical.py

A grader test putting LeakyReLU's inputs exactly at 0 (its kink) with numerical=True (the default): a submission taking
x >= 0 as the positive side reads "Not graded: this test is faulty", the kink never named (with numerical=False the
row says dX differs only where the input is exactly 0: gradcheck.grading.checks._at_zero_parts)."""
import pathlib
import sys
import tempfile

sys.path.insert(0, "tests")
from test_grading_at_zero_s37 import LRELU  # noqa: E402
from test_grading_at_zero_s37 import TEST as AT_ZERO_TEST  # noqa: E402
from test_grading_keys_s35 import _grade  # noqa: E402

# test_grading_at_zero_s37's test with numerical=True (its default), the second layer the correct LeakyReLU
TEST = AT_ZERO_TEST.replace('"Everywhere"', '"LeakyReLU"').replace(",\n                          numerical=False)", ")")
assert "numerical" not in TEST and '"LeakyReLU"' in TEST

if __name__ == "__main__":
    src = LRELU.replace("SLOPE", "self.negative_slope")
    src += src.split("\n\n\n", 1)[1].replace("class LeakyReLU", "\n\nclass AtZero").replace("X > 0", "X >= 0")
    with tempfile.TemporaryDirectory() as tmp:
        r, data = _grade(pathlib.Path(tmp), {"layers.py": src}, TEST)
        print("status", r.status, "grader_error:", data["extra_data"].get("grader_error"))
        for t in data["tests"]:
            print(t["name"], t["score"], "/", t["max_score"], ":", " ".join(t["output"].split()))
