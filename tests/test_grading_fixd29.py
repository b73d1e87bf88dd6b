"""redteam29b's results folder under pressure: a full disk, a lost grading.json, a file-size limit, --single inside a
running batch. A full disk is simulated by making the write raise ``OSError(ENOSPC)`` (no mount needed, as CI has no
root); the real tmpfs runs are in redteam29b's ``rt/RUN.sh``."""

import csv
import errno
import json
import os
from pathlib import Path

import pytest

from gradcheck.errors import UsageError
from gradcheck.grading import runner
from gradcheck.grading.runner import GRADER_ERROR, grade_batch, grade_submission

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
#: the grading tests of these bookkeeping tests: two tests worth the assignment's 28 points (tests/fixtures/grading_28_points:
#: the assignment's own eleven cost about 1.2 CPU-s more a grading; what a check finds is not read here)
TESTS = Path(__file__).resolve().parent / "fixtures" / "grading_28_points"
SOLUTION = (ASSIGN / "solution" / "layers.py").read_text()
KW = dict(progress=False, plot=False, unsafe_no_isolation=True, workers=1)


def _subs(tmp_path: Path, *names: str) -> Path:
    for n in names:
        (tmp_path / "subs" / n).mkdir(parents=True)
        (tmp_path / "subs" / n / "layers.py").write_text(SOLUTION)
    return tmp_path / "subs"


def _full(*, ends: str):
    """An ``os.replace`` that raises ENOSPC when moving onto a file whose name ends with ``ends``."""
    real = os.replace

    def replace(src, dst, *a, **k):
        if str(dst).endswith(ends):
            raise OSError(errno.ENOSPC, "No space left on device", str(src))
        return real(src, dst, *a, **k)
    return replace


def _seeds(out: Path) -> tuple[dict[str, int], dict[str, int]]:
    own = {p.parent.name: json.loads(p.read_text())["extra_data"]["seed"] for p in out.glob("*/results.json")}
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as fh:
        book = {r["submission"]: int(r["seed"]) for r in csv.DictReader(fh)}
    return own, book


def test_a_lost_grading_json_grades_everyone_again_with_the_saved_seed(tmp_path):
    """SEED: an emptied grading.json made a resume draw a new seed, keep the saved results (seed 5), grade the changed
    one with the new seed and write the new seed in every gradebook row."""
    subs, out = _subs(tmp_path, "c1", "c2"), tmp_path / "out"
    grade_batch(subs, TESTS, out, seed=5, **KW)
    (out / "grading.json").write_text("")  # what a crash inside the old in-place write left
    (subs / "c2" / "layers.py").write_text(SOLUTION + "# edited\n")
    again = grade_batch(subs, TESTS, out, **KW)
    own, book = _seeds(out)
    assert own == book == {"c1": 5, "c2": 5} and again.seed == 5
    assert [r.status for r in again.submissions] == ["graded", "graded"]  # nothing kept unchecked
    assert "grading.json is missing or unreadable" in again.summary()
    assert json.loads((out / "grading.json").read_text())["seed"] == 5


def test_the_gradebook_seed_column_is_each_rows_own(tmp_path):
    rows = [runner.SubmissionResult("a", 1.0, 2.0, "skipped", 0.1, "", seed=5),
            runner.SubmissionResult("b", 2.0, 2.0, "graded", 0.1, "", seed=7),
            runner.SubmissionResult("c", 0.0, 2.0, GRADER_ERROR, 0.1, "")]
    runner.write_gradebook(tmp_path / "g.csv", rows, 9)
    with open(tmp_path / "g.csv", newline="", encoding="utf-8") as fh:
        assert {r["submission"]: r["seed"] for r in csv.DictReader(fh)} == {"a": "5", "b": "7", "c": "9"}


def test_grading_json_and_the_key_are_written_atomically_and_a_full_disk_before_the_run_is_exit_1(
        tmp_path, monkeypatch, capsys):
    """M3: grading.json was written in place (left 0 bytes) and a full disk there was a traceback."""
    from gradcheck.cli import main

    subs, out = _subs(tmp_path, "c1"), tmp_path / "out"
    out.mkdir()
    (out / "grading.json").write_text('{"seed": 3}')
    (out / runner.KEY_FILE).write_text("")  # an empty key (a full disk at its first write): made again
    monkeypatch.setattr(runner.os, "replace", _full(ends="grading.json"))
    rc = main(["grade", str(subs), "--batch", "--tests", str(TESTS), "--out", str(out), "--no-progress",
               "--unsafe-no-isolation"])
    err = " ".join(capsys.readouterr().err.split())
    assert rc == 1 and "Traceback" not in err, err
    assert "nothing was graded: grading.json could not be written in" in err and "No space left on device" in err
    assert (out / "grading.json").read_text() == '{"seed": 3}' and not list(out.glob("*.tmp"))
    assert len((out / runner.KEY_FILE).read_text()) == 64 and not (out / "c1").exists()


def test_a_full_disk_midway_is_exit_1_with_the_summary_naming_what_was_not_written(tmp_path, monkeypatch, capsys):
    """M1, M2, L2: the run exited 2 with no summary, saying "The 6 result(s) ... could be written" when 4 were;
    junit.xml was copied in place (0 bytes)."""
    from gradcheck.cli import main

    subs, out = _subs(tmp_path, "c1", "c2", "c3"), tmp_path / "out"
    real = os.replace

    def replace(src, dst, *a, **k):
        if Path(dst).parent.name == "c2" or Path(dst).name == "gradebook.csv":
            raise OSError(errno.ENOSPC, "No space left on device", str(src))
        return real(src, dst, *a, **k)
    monkeypatch.setattr(runner.os, "replace", replace)
    rc = main(["grade", str(subs), "--batch", "--tests", str(TESTS), "--out", str(out), "--no-progress",
               "--unsafe-no-isolation", "--workers", "1", "--seed", "2"])
    cap = capsys.readouterr()
    said = " ".join(cap.out.split())
    assert rc == 1, cap.err
    assert "grader error: c2: the grader failed: OSError: No space left on device" in said
    assert "error: 1 submission(s) could not have their results.json written" in said
    assert ("error: the gradebook could not be written in" in said and
            "2 of the 3 result(s) graded in this run were written to their results.json" in said)
    assert "scores out of 28: mean 28.00" in said  # the summary is printed
    assert {p.parent.name for p in out.glob("*/results.json")} == {"c1", "c3"}
    assert not (out / "c2" / "junit.xml").exists() and not list(out.rglob("*.tmp"))  # no 0-byte junit.xml
    assert all((out / n / "junit.xml").stat().st_size > 0 for n in ("c1", "c3"))


def test_a_figure_that_cannot_be_saved_is_a_warning(tmp_path, monkeypatch):
    """M4: a full disk at scores.png was a PIL traceback with no summary."""
    subs = _subs(tmp_path, "c1")

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr("matplotlib.figure.Figure.savefig", full)
    res = grade_batch(subs, TESTS, tmp_path / "out", **{**KW, "plot": True})
    assert res.histogram is None and res.gradebook and [r.score for r in res.submissions] == [28.0]
    assert "warning: the histogram could not be saved in" in res.summary()
    assert "No space left on device" in res.summary()


def test_a_saved_result_is_replaced_only_by_a_complete_new_one(tmp_path, monkeypatch):
    """L3: a regrade on a full disk replaced the saved 28/28 with the placeholder before the new one failed."""
    subs, out = _subs(tmp_path, "c1"), tmp_path / "out"
    grade_batch(subs, TESTS, out, seed=4, **KW)
    saved = (out / "c1" / "results.json").read_text()
    monkeypatch.setattr(runner.os, "replace", _full(ends="results.json"))
    res = grade_batch(subs, TESTS, out, seed=4, force=True, **KW)
    assert res.submissions[0].status == GRADER_ERROR and not res.submissions[0].written
    assert (out / "c1" / "results.json").read_text() == saved  # still the complete 28/28
    monkeypatch.undo()
    again = grade_batch(subs, TESTS, out, seed=4, **KW)
    assert [(r.status, r.score) for r in again.submissions] == [("skipped", 28.0)]


def test_single_into_a_folder_of_a_running_batch_is_refused(tmp_path):
    """L1: ``--single --out OUT/c1`` while a batch held OUT was accepted and overwrote c1's result."""
    subs, out = _subs(tmp_path, "c1"), tmp_path / "out"
    (out / "c1").mkdir(parents=True)
    (out / runner.KEY_FILE).write_text("k" * 64)
    with runner.output_lock(out), pytest.raises(UsageError, match="--out is inside .* as a batch"):
        grade_submission(subs / "c1", TESTS, out / "c1", unsafe_no_isolation=True)
    assert not (out / "c1" / "results.json").exists()


def test_a_file_size_limit_is_named_when_the_sandbox_cannot_start(monkeypatch):
    """M5: under ``ulimit -f`` the probe failed with "EOFError: marshal data too short" and advice on Docker's
    seccomp profile."""
    import resource

    from gradcheck import sandbox

    monkeypatch.setattr(sandbox, "support", lambda: ("none", "EOFError: marshal data too short"))
    monkeypatch.setattr(resource, "getrlimit", lambda which: (
        (200000, resource.RLIM_INFINITY) if which == resource.RLIMIT_FSIZE else (resource.RLIM_INFINITY,) * 2))
    with pytest.raises(runner.IsolationUnavailable, match=r"RLIMIT_FSIZE, `ulimit -f`: 200,000 bytes") as err:
        runner.isolation_level()
    assert "seccomp" not in str(err.value) and "marshal data too short" in str(err.value)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY,) * 2)
    with pytest.raises(runner.IsolationUnavailable, match="cannot isolate") as err:
        runner.isolation_level()
    assert "RLIMIT_FSIZE" not in str(err.value)


def test_a_regrade_stopped_midway_is_finished_by_the_next_run(tmp_path, monkeypatch):
    """fixd29's finding: a regrade for changed tests, killed after its first submission, left grading.json with the new
    tests' digest, so the next run kept c2's result of the old tests as current ("skipped"). grading.json now keeps a
    "regrading" mark until such a regrade finishes."""
    import shutil

    tests = tmp_path / "tests"
    shutil.copytree(TESTS, tests)
    subs, out = _subs(tmp_path, "c1", "c2"), tmp_path / "out"
    grade_batch(subs, tests, out, seed=3, **KW)
    first = next(tests.glob("test_*.py"))
    first.write_text(first.read_text() + "\n# the staff edited the tests\n")
    real = runner._run_batch

    def killed(pool, todo, results, *a):  # SIGKILL after the first submission: no cleanup runs
        real(pool, list(todo)[:1], results, *a)
        raise RuntimeError("killed")
    monkeypatch.setattr(runner, "_run_batch", killed)
    with pytest.raises(RuntimeError):
        grade_batch(subs, tests, out, seed=3, **KW)
    assert json.loads((out / "grading.json").read_text())["regrading"] is True
    monkeypatch.setattr(runner, "_run_batch", real)
    again = grade_batch(subs, tests, out, seed=3, **KW)
    assert [r.status for r in again.submissions] == ["graded", "graded"]  # c2 was "skipped": the old tests' result
    assert "stopped before it finished" in again.summary()
    assert "regrading" not in json.loads((out / "grading.json").read_text())
    assert [r.status for r in grade_batch(subs, tests, out, seed=3, **KW).submissions] == ["skipped", "skipped"]
