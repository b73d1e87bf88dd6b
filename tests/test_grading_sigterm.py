"""SIGTERM to a running ``gradcheck grade`` (the signal a Gradescope or CI time limit sends) stops it as
Ctrl-C does (finding Z9): the finished submissions' rows are written, the unfinished ones are marked
``not graded`` with the reason (never a 0 for the student), the children are killed, exit 143."""

import csv
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from gradcheck.grading.cli import EXIT_INTERRUPTED, EXIT_TERMINATED
from tests.test_startup_signals import python

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
TESTS = ASSIGN / "tests"
#: slow in every test: a constructor that sleeps (inside the sandbox when the signal comes)
#: (a layer: forward and backward; a class without them is refused at load, before its constructor runs: left25)
SLOW = ("import time\n\nclass Linear:\n    def __init__(self, *a, **k):\n        time.sleep(60)\n\n"
        "    def forward(self, X):\n        return X\n\n    def backward(self, dY):\n        return dY\n\n"
        "ReLU = SoftmaxCrossEntropy = Linear\n")


def _submission(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "layers.py").write_text(text)
    return folder


def _grade_then_signal(args: list, started: list[Path], sig: int) -> tuple[int, str, str, float]:
    """Run ``gradcheck grade *args``; once every results.json of ``started`` exists (their grading
    runs), send ``sig``; return the exit code, stdout, stderr and the seconds it took to stop. The grader starts
    with SIGINT at its default whatever pytest's is (:func:`tests.test_startup_signals.python`): a pytest whose
    SIGINT is ignored (a background job of a script) passes that on, and the command keeps ignoring it (a decision
    of session 33), the batch is graded to its end and exits 0: session 34's CI failure of the Ctrl-C case,
    ``(0, 29.24, '')``, is that symptom exactly."""
    proc = subprocess.Popen(python("-m", "gradcheck", "grade", *map(str, args), "--timeout", "60",
                                   "--no-progress"), cwd=ROOT, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "MPLBACKEND": "Agg"})
    try:
        deadline = time.monotonic() + 120
        while not all(p.exists() for p in started):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        time.sleep(1.0)  # the slow ones are inside their sandboxes
        t0 = time.monotonic()
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=30)
        return proc.returncode, stdout, stderr, time.monotonic() - t0
    finally:
        proc.kill()


def _processes_naming(text: str) -> list[str]:
    """Command lines of the running processes that hold ``text`` (the grader's children name their
    submission), after waiting up to 5 s for them to go."""
    deadline, left = time.monotonic() + 5.0, []
    while time.monotonic() < deadline:
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if text in cmd and pid != str(os.getpid()):
                left.append(f"{pid}: {cmd[:200]}")
        if not left:
            break
        time.sleep(0.2)
    return left


@pytest.mark.parametrize("sig, code, how", [(signal.SIGTERM, EXIT_TERMINATED, "SIGTERM"),
                                            (signal.SIGINT, EXIT_INTERRUPTED, "Ctrl-C")])
def test_a_signal_to_a_batch_keeps_the_finished_rows_and_marks_the_rest_not_graded(tmp_path, sig, code, how):
    subs, out = tmp_path / "subs", tmp_path / "out"
    for name in ("a_fast", "b_fast"):
        _submission(subs / name, (ASSIGN / "solution" / "layers.py").read_text())
    for name in ("c_slow", "d_slow", "e_slow"):
        _submission(subs / name, SLOW)
    rc, stdout, stderr, took = _grade_then_signal(
        [subs, "--tests", TESTS, "--out", out, "--workers", "2"],
        [out / n / "results.json" for n in ("c_slow", "d_slow")], sig)
    assert rc == code and took < 15, (rc, took, stderr)
    assert "Traceback" not in stderr and "interrupted after 2 of 5 submission(s)" in stdout, stdout
    assert f"stopped by {how}" in stdout and "3 submission(s) not graded" in stdout, stdout
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv"))}
    assert sorted(rows) == ["a_fast", "b_fast", "c_slow", "d_slow", "e_slow"]
    assert [rows[n]["score"] for n in ("a_fast", "b_fast")] == ["28", "28"]
    for name in ("c_slow", "d_slow", "e_slow"):  # no 0 for the student: an empty score, the reason
        assert rows[name]["score"] == "" and rows[name]["percent"] == "", rows[name]
        assert rows[name]["status"].startswith("not graded") and how in rows[name]["status"], rows[name]
        data = json.loads((out / name / "results.json").read_text())
        assert data["score"] == 0.0 and data["extra_data"]["status"] == "not graded", data  # the schema needs a score
        assert data["extra_data"]["complete"] is False and how in data["output"], data  # resumed by a rerun
        assert "not your score" in data["output"], data
    assert _processes_naming(str(subs)) == []  # the graders and their sandboxes are gone


def test_sigterm_to_one_submission_writes_it_not_graded_and_kills_its_grader(tmp_path):
    sub, out = _submission(tmp_path / "slow", SLOW), tmp_path / "out"
    rc, stdout, stderr, took = _grade_then_signal([sub, "--tests", TESTS, "--out", out],
                                                  [out / "results.json"], signal.SIGTERM)
    assert rc == EXIT_TERMINATED and took < 15, (rc, took, stderr)
    assert "Traceback" not in stderr and "SIGTERM" in stderr, stderr
    data = json.loads((out / "results.json").read_text())
    assert data["score"] == 0.0 and data["extra_data"]["status"] == "not graded", data  # the schema needs a score
    assert "SIGTERM" in data["output"] and "not your score" in data["output"], data
    assert _processes_naming(str(sub)) == []
