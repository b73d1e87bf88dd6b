"""One lock rule for a batch and one submission (session 30; fixd29's leftover of redteam29b L1).

Session 29 refused ``--single --out OUT/c1`` while a batch graded into OUT (the single looked for a batch's key file
above its --out), but a batch on OUT started while that ``--single`` graded into OUT/c1 was not refused, and would have
written c1's result under the single's feet; nor was a ``--single`` refused in the moment a batch had locked OUT but not
yet written its key file. Now every run holds its --out exclusively and each folder above it shared
(:func:`gradcheck.grading.runner.output_lock`), whichever kind it is and whichever started first. The locks are
``flock``s, which two open descriptions conflict on within one process too: a lock held here stands for the other
run."""

import os

import pytest
from test_grading_fixd29 import KW, TESTS, _subs

from gradcheck.errors import UsageError
from gradcheck.grading import runner
from gradcheck.grading.runner import grade_batch, grade_submission


def test_a_batch_started_during_a_single_into_a_folder_inside_its_out_is_refused(tmp_path):
    """Was: accepted (the batch locked OUT alone; the single held OUT/c1)."""
    subs, out = _subs(tmp_path, "c1"), tmp_path / "out"
    (out / "c1").mkdir(parents=True)
    with runner.output_lock(out / "c1"), pytest.raises(
            UsageError, match=rf"--out '{out}' is in use: another gradcheck grade run \(PID {os.getpid()}\) is grading "
                              r"into a folder inside it, whose results a run into it would overwrite\. Wait"):
        grade_batch(subs, TESTS, out, **KW)
    assert sorted(p.name for p in out.iterdir()) == ["c1"] and not any((out / "c1").iterdir())  # nothing written


def test_a_single_inside_a_batch_that_has_not_written_its_key_yet_is_refused(tmp_path):
    """Was: accepted (the single looked for the batch's key file above its --out, written after the lock)."""
    subs, out = _subs(tmp_path, "c1"), tmp_path / "out"
    (out / "c1").mkdir(parents=True)
    with runner.output_lock(out), pytest.raises(UsageError, match=r"--out is inside .* is grading into: its results"):
        grade_submission(subs / "c1", TESTS, out / "c1", unsafe_no_isolation=True)
    assert not (out / "c1" / "results.json").exists()


def test_runs_into_folders_side_by_side_are_not_refused(tmp_path):
    """Two singles into OUT/c1 and OUT/c2 (each holds OUT shared) both run; a second run into OUT/c1 is refused as
    before, naming the folder as in use."""
    out = tmp_path / "out"
    for c in ("c1", "c2"):
        (out / c).mkdir(parents=True)
    with runner.output_lock(out / "c1"), runner.output_lock(out / "c2"):
        with pytest.raises(UsageError, match=r"is in use: another gradcheck grade run \(PID \d+\) is grading into it\."):
            with runner.output_lock(out / "c1"):
                pass
    with runner.output_lock(out):  # all released
        pass
