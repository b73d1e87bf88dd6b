"""Session 45's MEDIUM findings of the students' and staff's testers (builder medium45): each test failed
before its fix."""
import json

from gradcheck.grading.runner import GRADER_ERROR, grade_submission


def test_grading_tests_that_do_not_import_tell_the_student_it_is_the_graders_side_and_not_final(tmp_path):
    """staff45 F3: a grading-test module failing to import (pytest exit 2) told every student "The autograder
    could not finish (pytest exit code 2); score 0", no word that it is not their fault nor that 0 is not final."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text("x = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(
        "from ref_layerz import Conv\n\n\ndef test_a(student, grade):\n    'A'\n")
    res = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", unsafe_no_isolation=True)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res.status == GRADER_ERROR and data["extra_data"]["status"] == GRADER_ERROR
    out = data["output"]
    assert "a problem on the grader's side, not in your submission" in out, out
    assert "not final" in out and "pytest exit code 2" in out and "Course staff have the log" in out, out
