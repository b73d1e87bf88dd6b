"""Stopping ``gradcheck grade`` at any moment, the batch's output folder and its gradebook (session 14).

The grader's real processes (the zygote, the child pytest, the sandbox), no mocks: a signal sent
during the start-up checks (S14-1) or while the first graders start (S14-2) stops the run within a
few seconds with the documented exit and message; a submission removed from the batch is named in
the summary (S14-3); a second run on the same ``--out`` is refused (S14-4); a refused archive has
its own gradebook status (S14-5).
"""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradcheck.grading.cli import EXIT_INTERRUPTED, EXIT_TERMINATED
from tests.test_startup_signals import python

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
TESTS = ASSIGN / "tests"
SOLUTION = (ASSIGN / "solution" / "layers.py").read_text()
#: a forward that never returns (each call is cut at --timeout) and one that sleeps with every
#: catchable signal ignored (the tester's batch3: a_loop, b_sig)
LOOP = SOLUTION + "\n\ndef _fw(self, X, training=False):\n    while True:\n        pass\n\n\nLinear.forward = _fw\n"
SIG_IGNORED = SOLUTION + (
    "\n\nimport signal, time\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGHUP):\n"
    "    signal.signal(s, signal.SIG_IGN)\n\n\nclass ReLU(ReLU):\n"
    "    def forward(self, X, training=False):\n        time.sleep(1000)\n")


def _batch(folder: Path, **subs: str) -> Path:
    for name, text in subs.items():
        (folder / name).mkdir(parents=True)
        (folder / name / "layers.py").write_text(text)
    return folder


def _start(subs: Path, out: Path, *more: str) -> subprocess.Popen:
    """``gradcheck grade`` started with SIGINT at its default whatever pytest's is (:func:`python`: a pytest run as
    a background job of a script ignores SIGINT, and a command started so keeps ignoring it)."""
    return subprocess.Popen(python("-m", "gradcheck", "grade", str(subs), "--tests", str(TESTS),
                                   "--out", str(out), "--no-progress", *more), cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "MPLBACKEND": "Agg"})


def _signal_after(proc: subprocess.Popen, out: Path, delay: float, sig: int) -> tuple[int, str, str, float]:
    """Send ``sig`` ``delay`` s after ``proc`` began its start-up checks (they create ``out``: the
    imports, slow on a loaded machine, are over); its exit code, stdout, stderr, and the seconds
    from the signal to its end."""
    try:
        deadline = time.monotonic() + 60
        while not out.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.01)
        time.sleep(delay)
        assert proc.poll() is None, proc.communicate()
        t0 = time.monotonic()
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=90)
        return proc.returncode, stdout, stderr, time.monotonic() - t0
    finally:
        proc.kill()


@pytest.mark.parametrize("sig, code, how", [(signal.SIGTERM, EXIT_TERMINATED, "SIGTERM"),
                                            (signal.SIGINT, EXIT_INTERRUPTED, "Ctrl-C")])
def test_a_signal_during_the_start_up_checks_exits_as_documented(tmp_path, sig, code, how):
    """S14-1: the start-up checks start a sandbox (``isolation_level``); a signal then ended the run
    with a traceback and exit 1 (a grader error). A fresh interpreter each time: no cached check."""
    subs = _batch(tmp_path / "subs", a_sol=SOLUTION)
    out = tmp_path / "out"
    rc, stdout, stderr, took = _signal_after(_start(subs, out, "--workers", "1"), out, 0.3, sig)
    assert "Traceback" not in stderr, stderr
    assert rc == code and took < 10, (rc, took, stderr)
    # the start-up checks' own message when the signal lands in them (a loaded machine: every run this session);
    # on an idle one they can end within the 0.3 s, and the batch's documented stop message is the right one then
    said = stderr + stdout
    assert f"stopped by {how}" in said or "interrupted; rerun the same command to resume" in said, (stdout, stderr)


@pytest.mark.parametrize("delay", [1.0, 2.5, 4.0, 5.5])
def test_a_signal_at_any_moment_of_a_batch_stops_it_within_seconds(tmp_path, delay):
    """S14-2: a signal that came while the zygote was still importing reached a child forked
    after it before the child had its own session: its killpg failed, the child ran to its end
    (26-29 s). Sent at several moments, the run stops within a few seconds each time; the rows
    are written, the unfinished ones not graded, and a rerun grades them."""
    subs = _batch(tmp_path / "subs", a_loop=LOOP, b_sig=SIG_IGNORED, c_sol=SOLUTION)
    out = tmp_path / "out"
    rc, stdout, stderr, took = _signal_after(_start(subs, out, "--workers", "2"), out, delay,
                                               signal.SIGTERM)
    assert rc == EXIT_TERMINATED and "Traceback" not in stderr, (rc, stdout, stderr)
    assert took < 12.0, (delay, took, stdout)
    if "during the start-up checks" in stderr:  # a loaded machine: still checking (S14-1), nothing written
        assert not (out / "gradebook.csv").exists() and not (out / "b_sig").exists(), stderr
        return
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv"))}
    assert sorted(rows) == ["a_loop", "b_sig", "c_sol"], rows
    not_graded = [n for n, r in rows.items() if r["status"].startswith("not graded")]
    assert not_graded and all(rows[n]["score"] == "" for n in not_graded), rows
    assert "b_sig" in not_graded, rows  # its sleep lasts 1000 s: it cannot have finished
    data = json.loads((out / "b_sig" / "results.json").read_text())
    assert data["extra_data"]["status"] == "not graded" and data["score"] == 0.0 and data["tests"] == [], data


def test_a_batch_stopped_while_its_graders_start_resumes_the_unfinished(tmp_path):
    """S14-2: after a stop in that window, the rerun of the same command grades the submissions
    whose placeholders say not graded, and keeps the finished ones."""
    subs = _batch(tmp_path / "subs", a_sol=SOLUTION, b_sig=SIG_IGNORED)
    out = tmp_path / "out"
    rc, stdout, stderr, took = _signal_after(_start(subs, out, "--workers", "2"), out, 3.0,
                                               signal.SIGINT)
    assert rc == EXIT_INTERRUPTED and took < 12.0, (rc, took, stdout, stderr)
    rerun = subprocess.run([sys.executable, "-m", "gradcheck", "grade", str(subs), "--tests", str(TESTS),
                            "--out", str(out), "--no-progress", "--workers", "2"], cwd=ROOT, text=True,
                           capture_output=True, env={**os.environ, "MPLBACKEND": "Agg"}, timeout=300)
    assert rerun.returncode == 0, (rerun.stdout, rerun.stderr)
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv"))}
    assert {n: r["status"] for n, r in rows.items()} == {"a_sol": "graded", "b_sig": "graded"}, rows
    assert rows["a_sol"]["score"] == "28" and float(rows["b_sig"]["score"]) < 28, rows


def _grade(subs: Path, out: Path, *more: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradcheck", "grade", str(subs), "--tests", str(TESTS),
                           "--out", str(out), "--no-progress", "--workers", "2", *more], cwd=ROOT, text=True,
                          capture_output=True, env={**os.environ, "MPLBACKEND": "Agg"}, timeout=300)


def test_a_submission_removed_from_the_batch_is_named_in_the_summary(tmp_path):
    """S14-3: a submission moved out of the batch lost its gradebook row on the rerun without a word.
    The gradebook lists the batch as it is; the summary names the results it no longer lists, and
    their results.json stay."""
    subs, out = _batch(tmp_path / "subs", a_sol=SOLUTION, sol_d=SOLUTION), tmp_path / "out"
    first = _grade(subs, out)
    assert first.returncode == 0 and "no longer in the batch" not in first.stdout, first
    (subs / "sol_d").rename(tmp_path / "sol_d_removed")
    second = _grade(subs, out)
    assert second.returncode == 0, second
    rows = [r["submission"] for r in csv.DictReader(open(out / "gradebook.csv"))]
    assert rows == ["a_sol"], rows
    line = next(ln for ln in second.stdout.splitlines() if "no longer in the batch" in ln)
    assert "1 submission(s)" in line and "sol_d" in line and "a_sol" not in line, second.stdout
    data = json.loads((out / "sol_d" / "results.json").read_text())
    assert data["score"] == 28 and data["extra_data"]["submission"] == "sol_d", data


def test_a_second_run_on_the_same_output_folder_is_refused_naming_the_first(tmp_path):
    """S14-4: two runs on one --out both graded everything, racing on its files. The output folder
    is locked: the second run exits 2 at once, naming the running one's PID; the first is unharmed."""
    subs, out = _batch(tmp_path / "subs", a_sol=SOLUTION, b_sig=SIG_IGNORED), tmp_path / "out"
    first = _start(subs, out, "--workers", "2")
    try:
        deadline = time.monotonic() + 120
        while not (out / "b_sig" / "results.json").exists():  # the first run is grading
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.05)
        second = _grade(subs, out)
        assert second.returncode == 2, second
        assert f"PID {first.pid}" in second.stderr and "Traceback" not in second.stderr, second.stderr
        assert not (out / "gradebook.csv").exists()  # the second one wrote nothing
        first.send_signal(signal.SIGINT)
        stdout, stderr = first.communicate(timeout=60)
        assert first.returncode == EXIT_INTERRUPTED and "not graded" in stdout, (stdout, stderr)
    finally:
        first.kill()
    third = _grade(subs, out, "--timeout", "0.5")  # the lock went with the first run
    assert third.returncode == 0, third
    assert not [p.name for p in out.iterdir() if "lock" in p.name]  # session 16: the folder's own flock, no file


def test_a_refused_archive_has_the_status_refused_not_graded(tmp_path):
    """S14-5: a zip the grader refuses (a member outside the folder, a name given twice) and a
    .tar.gz were listed as ``graded`` while their results said "This submission is not graded".
    They are ``refused`` in the gradebook, results.json and summary, also when a rerun skips them."""
    import tarfile
    import zipfile

    subs, out = _batch(tmp_path / "subs", a_sol=SOLUTION), tmp_path / "out"
    with zipfile.ZipFile(subs / "evil.zip", "w") as zf:
        zf.writestr("layers.py", SOLUTION)
        zf.writestr("../../escaped.py", "x = 1\n")
    with zipfile.ZipFile(subs / "dup.zip", "w") as zf, pytest.warns(UserWarning, match="Duplicate name"):
        zf.writestr("layers.py", SOLUTION)
        zf.writestr("layers.py", SOLUTION)
    with tarfile.open(subs / "dave.tar.gz", "w:gz") as tar:
        tar.add(subs / "a_sol" / "layers.py", arcname="layers.py")
    for run in (1, 2):  # the second run skips every one (resumed) and must say the same
        done = _grade(subs, out)
        assert done.returncode == 0, done
        rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv"))}
        assert {n: (r["status"], r["score"]) for n, r in rows.items()} == {
            "a_sol": ("graded", "28"), "dave.tar.gz": ("refused", "0"), "dup.zip": ("refused", "0"),
            "evil.zip": ("refused", "0")}, (run, rows)
        assert "refused 3 submission(s)" in done.stdout and "dave.tar.gz, dup.zip, evil.zip" in done.stdout, done.stdout
        assert f"graded {1 if run == 1 else 0} submission(s)" in done.stdout, done.stdout
    for name in ("dave.tar.gz", "dup.zip", "evil.zip"):
        data = json.loads((out / name / "results.json").read_text())
        assert data["extra_data"]["status"] == "refused" and data["score"] == 0, data
        assert data["output"].startswith("This submission is not graded: "), data
    assert not list(tmp_path.rglob("escaped.py"))


def test_a_single_submission_run_is_refused_while_another_run_grades_into_its_out(tmp_path):
    """Session 14's leftover: a batch run locked its --out (S14-4), one submission (``--single``, Gradescope's
    ``/autograder/results``) did not, so two runs on one folder both graded and raced on results.json. The other
    run here is this test process holding the same lock (:func:`output_lock`): the grade exits 2 at once with the
    batch's message, naming this PID, and writes nothing; once the lock is released it grades."""
    from test_cli import run_here

    from gradcheck.grading.runner import output_lock

    sub, out = _batch(tmp_path / "subs", a_sol=SOLUTION) / "a_sol", tmp_path / "out"
    out.mkdir()
    args = ("grade", sub, "--single", "--tests", TESTS, "--out", out, "--no-progress", "--timeout", "1")
    with output_lock(out):
        p = run_here(*args)
    assert p.returncode == 2 and "Traceback" not in p.stderr, (p.returncode, p.stderr)
    assert (f"--out {str(out)!r} is in use: another gradcheck grade run (PID {os.getpid()}) is grading into it. "
            "Wait for it to end (or stop it) and rerun this command, or give another --out.") in " ".join(
                p.stderr.split()), p.stderr
    assert not (out / "results.json").exists()  # refused before anything was written
    p = run_here(*args)  # the lock went with the other run
    assert p.returncode == 0 and json.loads((out / "results.json").read_text())["score"] > 0, (p.stdout, p.stderr)
    # session 16: the lock is the folder's own (flock on its fd): only the results stay (a .gradcheck-lock did)
    assert sorted(os.listdir(out)) == ["junit.xml", "results.json"], os.listdir(out)
