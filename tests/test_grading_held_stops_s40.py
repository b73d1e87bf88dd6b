"""A signal at any step of a batch before its grading loop still writes the gradebook (session 40).

CI once found no gradebook.csv after ``test_a_signal_at_any_moment_of_a_batch_stops_it_within_seconds[1.0]``: a
SIGTERM that landed in ``grade_batch``'s steps before its pool ran (its second ``check_grading_inputs``, the pool's
start, the output folder's key and grading.json) left through the command's "interrupted; rerun the same command to
resume" with nothing written. The moment is made exact here: one ``gradcheck grade`` process (the console script's
code) runs the command again and again, each time with one step of the batch wrapped to send the process a real
SIGTERM or SIGINT as the batch calls it; each run exits as a stopped batch does (143 or 130, the summary's
"interrupted after 0 of 2"), its gradebook lists every submission not graded, no score, and their results.json say
so. Then a rerun of the same command resumes and grades both, a SIGTERM sent while it writes its gradebook held
until the gradebook is written.
"""

import csv
import io
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from gradcheck.grading.cli import EXIT_INTERRUPTED, EXIT_TERMINATED
from tests.test_startup_signals import python

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "assignments" / "linear_relu_ce" / "tests"
SOLUTION = (ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py").read_text()

#: ``grade_batch``'s steps before its grading loop (called by it or by its ``_batch_inputs``), then the loop's start
STEPS = ("check_grading_inputs", "check_tests_collect", "submission_folders", "_check_only", "_Pool", "_locked",
         "result_folders", "_batch_start", "_stale_imports", "_resume", "_only_these", "_run_batch")

#: Runs the command once per (step, signal) of argv[1] (JSON), printing one JSON line per run; then the rerun.
SCRIPT = r"""
import contextlib, io, json, os, sys
sys.argv[0] = "/venv/bin/gradcheck"
from gradcheck.cli import main
from gradcheck.grading import runner

cases, subs, tests, out = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]

def signalling(name, sig):
    real = getattr(runner, name)
    def step(*args, **kwargs):
        if sys._getframe(1).f_code.co_name in ("grade_batch", "_batch_inputs"):
            os.kill(os.getpid(), sig)
        return real(*args, **kwargs)
    return real, step

def run(folder):
    said, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(err):
        rc = main(["grade", subs, "--tests", tests, "--out", folder, "--no-progress", "--workers", "2"])
    book = os.path.join(folder, "gradebook.csv")  # as this run left it (the rerun rewrites one)
    status = {n: json.load(open(os.path.join(folder, n, "results.json")))["extra_data"]["status"]
              for n in sorted(os.listdir(subs)) if os.path.isfile(os.path.join(folder, n, "results.json"))}
    return {"rc": rc, "stdout": said.getvalue(), "stderr": err.getvalue(), "status": status,
            "gradebook": open(book, encoding="utf-8").read() if os.path.isfile(book) else None}

for name, sig in cases:
    real, step = signalling(name, sig)
    setattr(runner, name, step)
    try:
        print(json.dumps({"step": name, "sig": sig, **run(os.path.join(out, f"{name}-{sig}"))}), flush=True)
    finally:
        setattr(runner, name, real)
again = os.path.join(out, f"{cases[0][0]}-{cases[0][1]}")
real, step = signalling("_batch_gradebook", 15)
setattr(runner, "_batch_gradebook", step)
print(json.dumps({"step": "rerun", **run(again)}), flush=True)
"""


def _rows(text: str) -> dict:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO(text, newline=""))}


def test_a_signal_at_each_step_before_the_grading_loop_writes_every_submission_not_graded(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    for name in ("a_sol", "b_sol"):
        (subs / name).mkdir(parents=True)
        (subs / name / "layers.py").write_text(SOLUTION)
    out.mkdir()
    cases = [(s, int(sig)) for s in STEPS for sig in (signal.SIGTERM, signal.SIGINT)]
    done = subprocess.run(python("-c", SCRIPT, json.dumps(cases), str(subs), str(TESTS), str(out)), cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "MPLBACKEND": "Agg"})
    runs = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(runs) == len(cases) + 1, (done.stdout[-3000:], done.stderr[-3000:])
    for r in runs[:-1]:
        how = "SIGTERM" if r["sig"] == signal.SIGTERM else "Ctrl-C (SIGINT)"
        case = (r["step"], how, r["stdout"][-1500:], r["stderr"][-1500:])
        assert r["rc"] == (EXIT_TERMINATED if r["sig"] == signal.SIGTERM else EXIT_INTERRUPTED), case
        assert "Traceback" not in r["stderr"] and "interrupted after 0 of 2 submission(s)" in r["stdout"], case
        assert r["gradebook"] is not None, case
        rows = _rows(r["gradebook"])
        assert sorted(rows) == ["a_sol", "b_sol"], (case, rows)
        assert all(v["status"] == f"not graded: stopped by {how}" + (
            " (a time limit of the system running the grader, or a kill)" if "TERM" in how else "")
            and v["score"] == "" for v in rows.values()), (case, rows)
        assert r["status"] == {"a_sol": "not graded", "b_sol": "not graded"}, (case, r["status"])
    rerun = runs[-1]  # the same command again: both graded; its SIGTERM, sent while the gradebook is written, after it
    assert rerun["rc"] == EXIT_TERMINATED and "Traceback" not in rerun["stderr"], rerun
    rows = _rows(rerun["gradebook"])
    assert {n: (r["status"], r["score"]) for n, r in rows.items()} == {"a_sol": ("graded", "28"),
                                                                     "b_sol": ("graded", "28")}, rows


def test_a_stop_while_the_dask_cluster_is_reached_writes_every_submission_not_graded(tmp_path, monkeypatch):
    """Reaching a cluster may take CONNECT_TIMEOUT + WORKER_TIMEOUT seconds, so a stop there is not held: it ends the
    connection at once, and the batch writes its gradebook with no worker, every submission not graded."""
    from gradcheck.grading import runner
    from gradcheck.grading.stopping import Terminated

    subs = tmp_path / "subs"
    for name in ("a_sol", "b_sol"):
        (subs / name).mkdir(parents=True)
        (subs / name / "layers.py").write_text(SOLUTION)

    def connecting(*args):
        raise Terminated()
    monkeypatch.setattr(runner, "_dask_client", connecting)
    try:
        res = runner.grade_batch(subs, TESTS, tmp_path / "out", scheduler="tcp://127.0.0.1:8786", progress=False)
    except KeyboardInterrupt:  # (before: the stop left the batch with nothing written; failed here, not the session)
        pytest.fail(f"the stop left grade_batch; written: {sorted(os.listdir(tmp_path / 'out'))}")
    assert res.interrupted and res.workers == 0 and res.stopped_by.startswith("SIGTERM"), res.summary()
    with open(tmp_path / "out" / "gradebook.csv", encoding="utf-8") as fh:
        rows = _rows(fh.read())
    assert {n: r["status"].split(" (")[0] for n, r in rows.items()} == {
        "a_sol": "not graded: stopped by SIGTERM", "b_sol": "not graded: stopped by SIGTERM"}, rows
