"""tester18g LOW 6 and LOW 7: what a failed grading keeps for the staff and for the student.

L6: ``extra_data.grader_log`` kept the last 4,000 characters of the child's log only, so a long stack dump
after "Fatal Python error: ..." lost the cause. L7: a failing hidden test with several trials lost its
``grade.note("trial k: ...")`` lines, which say at which sizes the check failed (the db-mean mutant).
"""

import json
from pathlib import Path

import pytest

from gradcheck.grading.runner import _log_excerpt, grade_submission

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = (ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py").read_text()
DB_MEAN = SOLUTION.replace('self.grads["b"] = dY.sum(axis=0)', 'self.grads["b"] = dY.mean(axis=0)')

TESTS = '''
import pytest
from manualprop import Linear as RefLinear

@pytest.mark.points(2)
def test_trials(student, grade, rng):
    for trial, n in enumerate((1, 4)):  # db = mean over a batch of 1 is right: trial 1 fails
        grade.note(f"trial {trial}: batch {n}")
        grade.layer_gradients(student.layer("layers.py", "Linear", in_features=3, out_features=2),
                              rng.standard_normal((n, 3)), RefLinear(3, 2), parts={"dX": 1, "db": 1}, seed=trial)
'''


def test_log_keeps_head_tail_and_the_fatal_error():
    short = "x" * 4000
    assert _log_excerpt(short) == short
    log = "start of the run\n" + "a\n" * 3000 + "Fatal Python error: Segmentation fault\n" + "b\n" * 3000 + "end\n"
    out = _log_excerpt(log)
    assert out.startswith("start of the run\n") and out.endswith("b\nend\n") and len(out) < 4200
    assert f"[... {len(log) - 4000} characters left out ...]\nFatal Python error: Segmentation fault\n" in out


def test_failing_trial_keeps_its_notes(tmp_path):
    assert DB_MEAN != SOLUTION
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(DB_MEAN)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_trials.py").write_text(TESTS)
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", timeout=10.0)
    (test,) = json.loads(Path(r.results_path).read_text())["tests"]
    assert test["score"] == pytest.approx(1.5), test  # trial 0 both parts, trial 1 dX: 3 of 4 parts
    out = test["output"]
    assert "`db`: **wrong**" in out and out.startswith("1 of 2 checks failed: trial 1: batch 4."), out
    assert "**trial 1: batch 4**" in out and out.endswith("Passed: trial 0: batch 1."), out  # each named (newuser25)
