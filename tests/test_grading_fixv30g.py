"""review30's REGRADE_UNWRITTEN: a regrade of every submission (the tests changed) that could not write one
submission's results.json (a full disk, simulated as tests/test_grading_fixd29.py does) dropped grading.json's
"regrading" mark, so the next run kept that submission's result of the OLD tests as current ("skipped")."""

import json
import shutil

from gradcheck.grading import runner
from gradcheck.grading.runner import GRADER_ERROR, grade_batch
from tests.test_grading_fixd29 import KW, TESTS, _full, _subs


def test_a_regrade_that_could_not_write_a_result_regrades_it_at_the_next_run(tmp_path, monkeypatch):
    subs, out, tests = _subs(tmp_path, "c1", "c2"), tmp_path / "out", tmp_path / "tests"
    shutil.copytree(TESTS, tests)
    grade_batch(subs, tests, out, seed=3, **KW)
    old = json.loads((out / "c2" / "results.json").read_text())
    first = sorted(tests.glob("test_*.py"))[0]
    first.write_text(first.read_text() + "\n# the staff edited the tests\n")  # a new digest: everyone regraded
    with monkeypatch.context() as m:
        m.setattr(runner.os, "replace", _full(ends="c2/results.json"))
        regrade = grade_batch(subs, tests, out, seed=3, **KW)
    assert {r.name: (r.status, r.written) for r in regrade.submissions} == {
        "c1": ("graded", True), "c2": (GRADER_ERROR, False)}
    assert json.loads((out / "c2" / "results.json").read_text()) == old  # the old tests' result is still on disk
    assert json.loads((out / "grading.json").read_text()).get("regrading") is True  # so the mark stays
    again = grade_batch(subs, tests, out, seed=3, **KW)
    assert {r.name: r.status for r in again.submissions} == {"c1": "graded", "c2": "graded"}
    assert [r.score for r in again.submissions] == [28.0, 28.0]
    assert json.loads((out / "c2" / "results.json").read_text()) != old
    assert "regrading" not in json.loads((out / "grading.json").read_text())  # every result written: dropped
    assert {r.name: r.status for r in grade_batch(subs, tests, out, seed=3, **KW).submissions} == {
        "c1": "skipped", "c2": "skipped"}
