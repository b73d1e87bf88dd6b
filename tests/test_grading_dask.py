"""Grading a batch on a dask.distributed cluster (``grade_batch(..., scheduler=ADDRESS)``; issue 11 §3).

One module fixture starts a ``LocalCluster`` of two worker processes (one thread each)
and grades the example assignment's solution, stub and four mutants plus a few hostile
submissions (tests/hostile/) through it, and the same folder with the local pool,
same seed: every score, status and per-test outcome must be identical, the results
must be written and signed by the client (a resumed batch skips them, regrades a
planted one), and the staff's mistakes must get a clear error.
"""

import csv
import json
import operator
import os
import sys
import time
from pathlib import Path

import pytest
from test_grading_hostile import LAYOUTS, submission

from gradcheck.errors import UsageError
from gradcheck.grading import runner
from gradcheck.grading.runner import GRADER_ERROR, _batch_key, _load_done, grade_batch
from gradcheck.sandbox import support

if os.environ.get("CI"):
    import distributed  # make test installs the [distributed] extra: in CI this test must run, never skip
else:
    distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
TESTS = ASSIGN / "tests"
#: one mutant per grading test a mutant fails (Linear, ReLU, cross-entropy and its cache, the float64 test
#: alone): every kind of per-test outcome goes through the cluster. The other four (db_not_summed,
#: transposed_dW, factor_2, upstream_ignored) fail the same tests as one of these, so they take the same
#: path through the cluster; test_grading.py grades each of the eight (each loses exactly its points).
MUTANTS = ["cache_mutated", "db_mean", "float32", "sign_flip"]
assert set(MUTANTS) <= set(json.loads((ASSIGN / "mutants" / "MUTANTS.json").read_text()))
#: hostile submissions graded through the cluster too: the issue's bypass, a forged exit code, a forged
#: reply frame, writes into the output folder (here the client's, which the worker must not reach)
HOSTILE = ["abspath_patch", "exit70", "forged_frame", "write_outputs"]
UNICODE = next(n for n in LAYOUTS if n.startswith("unicode"))
SEED = 13


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if support()[0] == "none":
        if os.environ.get("CI"):
            pytest.fail(f"CI must prove the isolation, but there are no namespaces: {support()[1]}")
        pytest.skip(f"no namespaces here: {support()[1]}")
    subs = tmp_path_factory.mktemp("dask-subs")
    out_dask = tmp_path_factory.mktemp("dask-graded")
    out_local = tmp_path_factory.mktemp("local-graded")
    for name in ["solution", "stub", *MUTANTS]:
        src = ASSIGN / name if name in ("solution", "stub") else ASSIGN / "mutants" / name
        (subs / name).mkdir()
        (subs / name / "layers.py").write_text((src / "layers.py").read_text())
    for name in HOSTILE:
        (subs / name).mkdir()
        (subs / name / "layers.py").write_text(submission(name, subs, out_dask))
    (subs / UNICODE).mkdir()
    (subs / UNICODE / "layers.py").write_bytes(LAYOUTS[UNICODE][0]["layers.py"])
    (subs / "symlink_layers").mkdir()
    (subs / "symlink_layers" / "layers.py").symlink_to(ASSIGN / "solution" / "layers.py")
    local = grade_batch(subs, TESTS, out_local, workers=2, seed=SEED, progress=False, plot=False)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0",
                                  silence_logs=40) as lc:
        dask = grade_batch(subs, TESTS, out_dask, seed=SEED, progress=False, scheduler=lc.scheduler_address)
        yield {"subs": subs, "local": local, "dask": dask, "out_local": out_local, "out_dask": out_dask,
               "address": lc.scheduler_address, "cluster": lc}


def dask_pool(graded, subs: Path, out: Path, key: bytes, options: dict) -> runner._Pool:
    """The pool grade_batch uses on the test cluster, bound to ``out``'s result folders."""
    client = runner._dask_client(graded["address"], subs, TESTS, False)
    pool = runner._Pool(TESTS, client=client)
    names = [p.name for p in subs.iterdir()] + ["broken"]
    pool.bind(key, options, runner.result_folders(out, names))
    return pool


def outcomes(out: Path, name: str) -> list[tuple]:
    data = json.loads((out / name / "results.json").read_text())
    return [(t["name"], t["score"], t["max_score"], t["status"]) for t in data["tests"]]


def test_the_cluster_gives_the_same_results_as_the_local_pool(graded):
    local = {s.name: s for s in graded["local"].submissions}
    dask = {s.name: s for s in graded["dask"].submissions}
    assert sorted(dask) == sorted(local) == sorted(p.name for p in graded["subs"].iterdir())
    assert graded["dask"].workers == 2 and not graded["dask"].interrupted
    for name, d in dask.items():
        lo = local[name]
        assert (d.status, d.score, d.max_score, d.tests) == (lo.status, lo.score, lo.max_score, lo.tests), name
        assert d.status == "graded" and d.results_path == str(graded["out_dask"] / name / "results.json")
        assert outcomes(graded["out_dask"], name) == outcomes(graded["out_local"], name), name
    # the scores are the deserved ones, not merely equal
    assert dask["solution"].score == dask[UNICODE].score == 28.0 and dask["stub"].score == 0.0
    assert dask["symlink_layers"].score == 0.0 and dask["abspath_patch"].score < 28.0
    assert 0 < dask["write_outputs"].score < 28.0 and all(0 < dask[m].score < 28.0 for m in MUTANTS)


def test_results_are_written_and_signed_by_the_client_with_the_workers_isolation(graded):
    out = graded["out_dask"]
    key = _batch_key(out)
    for s in graded["dask"].submissions:
        data = json.loads((out / s.name / "results.json").read_text())
        assert data["extra_data"]["isolation"] == support()[0] and data["extra_data"]["complete"] is True
        assert data["extra_data"]["worker"] and _load_done(out / s.name / "results.json", key) is not None
        assert (out / s.name / "junit.xml").read_text().startswith("<?xml")
    rows = list(csv.DictReader(open(out / "gradebook.csv", encoding="utf-8")))
    assert sorted(r["submission"] for r in rows) == sorted(s.name for s in graded["dask"].submissions)
    assert "1000" not in (out / "gradebook.csv").read_text()  # write_outputs' planted row is gone


def test_a_resumed_cluster_batch_skips_its_own_results_and_regrades_a_planted_one(graded):
    out = graded["out_dask"]
    planted = json.loads((out / "stub" / "results.json").read_text())
    planted["score"] = 28.0
    (out / "stub" / "results.json").write_text(json.dumps(planted))
    again = grade_batch(graded["subs"], TESTS, out, progress=False, plot=False, scheduler=graded["address"])
    by = {s.name: s for s in again.submissions}
    assert by["stub"].status == "graded" and by["stub"].score == 0.0
    assert {s.status for n, s in by.items() if n != "stub"} == {"skipped"}
    assert again.seed == SEED  # from out/grading.json


def test_ctrl_c_keeps_what_finished_and_the_same_call_resumes(graded, tmp_path):
    subs = tmp_path / "subs"
    for name in ("solution", "stub", "float32"):
        src = ASSIGN / name if name != "float32" else ASSIGN / "mutants" / name
        (subs / name).mkdir(parents=True)
        (subs / name / "layers.py").write_text((src / "layers.py").read_text())

    def ctrl_c(r):
        raise KeyboardInterrupt

    first = grade_batch(subs, TESTS, tmp_path / "out", seed=SEED, progress=False, on_done=ctrl_c,
                        scheduler=graded["address"])
    assert first.interrupted and 1 <= len(first.submissions) <= 3 and first.histogram is None
    local = {s.name: s for s in graded["local"].submissions}
    for s in first.submissions:
        assert (s.status, s.score, s.tests) == ("graded", local[s.name].score, local[s.name].tests)
    again = grade_batch(subs, TESTS, tmp_path / "out", progress=False, scheduler=graded["address"])
    by = {s.name: s for s in again.submissions}
    assert not again.interrupted and sorted(by) == ["float32", "solution", "stub"]
    assert {n for n, s in by.items() if s.status == "skipped"} == {s.name for s in first.submissions}
    assert all(by[n].score == local[n].score for n in by)


def test_a_failed_task_is_a_grader_error_that_a_resumed_batch_regrades(graded, tmp_path):
    key = _batch_key(tmp_path)
    pool = dask_pool(graded, graded["subs"], tmp_path, key,
                     {"seed": SEED, "timeout": 3.0, "submission_timeout": 300.0, "memory_mb": 1024})
    try:
        fut = pool.executor.submit(operator.truediv, 1, 0)
        pool._names[fut] = "broken"
        r = pool._take(fut)
    finally:
        pool.close()
    assert r.status == GRADER_ERROR and "ZeroDivisionError" in r.message and r.score == 0
    assert r.max_score == 28.0  # out of the assignment's points, not 0 / 0
    assert json.loads((tmp_path / "broken" / "results.json").read_text())["extra_data"]["status"] == GRADER_ERROR
    assert _load_done(tmp_path / "broken" / "results.json", key) is None


def _grading_children(subs: Path, workers: set[int]) -> list[int]:
    """Pids of the grading pytest processes (on the workers) of the submissions in ``subs``: a ``python -m
    pytest`` naming one, or a child forked by the zygote (gradcheck.grading.zygote) of a worker in ``workers``."""
    procs = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            ppid = int(next(ln for ln in (proc / "status").read_text().splitlines() if ln.startswith("PPid:")).split()[1])
        except (OSError, ValueError, StopIteration):
            continue
        procs[int(proc.name)] = (cmd, ppid)
    zygotes = {pid for pid, (cmd, ppid) in procs.items() if ppid in workers and any(b"gradcheck zygote" in c for c in cmd)}
    return [pid for pid, (cmd, ppid) in procs.items() if ppid in zygotes or (
        b"--grading-submission" in cmd and any(c.startswith(bytes(subs) + b"/") for c in cmd))]


def test_ctrl_c_stops_the_running_tasks_on_their_workers(graded, tmp_path):
    subs = tmp_path / "subs"
    for i in range(2):  # one per worker; each would hold its worker for the 90 s import limit
        (subs / f"hang{i}").mkdir(parents=True)
        (subs / f"hang{i}" / "layers.py").write_text("import time\ntime.sleep(600)\n")
    pool = dask_pool(graded, subs, tmp_path / "out", _batch_key(tmp_path),
                     {"seed": 0, "timeout": 90.0, "submission_timeout": 200.0, "memory_mb": 1024})
    try:
        futs = [pool.submit(s) for s in sorted(subs.iterdir())]
        deadline = time.monotonic() + 60
        while sum(map(len, pool.client.processing().values())) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        workers = set(pool.client.run(os.getpid).values())
        while len(_grading_children(subs, workers)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)  # the pytest children start (seconds on a loaded machine)
        assert len(_grading_children(subs, workers)) == 2
        time.sleep(1)  # and reach the hanging import in their sandboxes
        t0 = time.monotonic()
        pool.stop(futs)
        while _grading_children(subs, workers) and time.monotonic() - t0 < 60:
            time.sleep(0.2)
        waited = time.monotonic() - t0
    finally:
        pool.close()
    assert waited < 30, waited  # not the 90 s the hanging imports would have taken
    for i in range(2):  # the started placeholder stays: a resumed batch grades them
        assert _load_done(tmp_path / "out" / f"hang{i}" / "results.json", _batch_key(tmp_path)) is None


def test_a_malformed_reply_is_refused():
    good = {"result": {"name": "a", "score": 1.0, "max_score": 2.0, "status": "graded", "seconds": 0.5,
                       "tests": {"t": 1.0}, "message": ""}, "results": {"score": 1.0, "tests": [], "extra_data": {}},
            "junit": None}

    def check(**change):
        return runner._check_reply({**good, "result": {**good["result"], **change.pop("result", {})}, **change}, "a")

    assert check() is None
    assert "not a result" in runner._check_reply({"result": None, "results": {}}, "a")
    assert "not a result" in check(results={"score": 1.0, "tests": [], "extra_data": None})
    assert "another submission" in check(result={"name": "b"})
    assert "unknown status" in check(result={"status": "skipped"})
    assert "not numbers" in check(result={"tests": {"t": "28"}})
    assert "too large" in check(junit=b"x" * (runner.MAX_REPLY_BYTES + 1))
    assert "not the result's" in check(results={"score": 28.0, "tests": [], "extra_data": {}})


def test_a_worker_that_cannot_see_the_tests_says_so(tmp_path):
    p = runner.probe_worker(str(tmp_path / "nowhere"), str(tmp_path))
    assert p["isolation"] == support()[0] and p["submissions"] is True and "does not exist" in p["tests"]


def test_staff_mistakes_get_a_clear_error(graded, tmp_path, monkeypatch):
    subs = graded["subs"]
    with pytest.raises(UsageError, match="--workers is for the local pool"):
        grade_batch(subs, TESTS, tmp_path / "a", workers=2, scheduler=graded["address"], progress=False)
    with pytest.raises(UsageError, match="--unsafe-no-isolation is refused with --scheduler"):
        grade_batch(subs, TESTS, tmp_path / "b", unsafe_no_isolation=True, scheduler=graded["address"],
                    progress=False)
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", 1.0)
    with pytest.raises(UsageError, match="cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'"):
        grade_batch(subs, TESTS, tmp_path / "c", scheduler="tcp://127.0.0.1:9", progress=False)
    t0 = time.monotonic()  # a malformed address: refused at once (a Client made from it hung 40 s on exit)
    with pytest.raises(UsageError, match="'not an address' is neither a scheduler file nor an address"):
        grade_batch(subs, TESTS, tmp_path / "e", scheduler="not an address", progress=False)
    assert time.monotonic() - t0 < 5
    for name in "abce":  # a usage error writes nothing (no key, no grading.json): exit 2's promise
        assert not (tmp_path / name).exists() or not any((tmp_path / name).iterdir()), name
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    with pytest.raises(UsageError, match=r"pip install \.\[distributed\]"):
        grade_batch(subs, TESTS, tmp_path / "d", scheduler=graded["address"], progress=False)


def test_cli_grades_on_the_cluster(graded, tmp_path, capsys):
    from gradcheck.cli import main

    subs = tmp_path / "subs"
    (subs / "one").mkdir(parents=True)
    (subs / "one" / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    code = main(["grade", str(subs), "--tests", str(TESTS), "--out", str(tmp_path / "out"), "--no-progress",
                 "--scheduler", graded["address"]])
    text = capsys.readouterr().out
    assert code == 0 and "graded 1 submission(s)" in text and "with 2 worker(s)" in text, text
    assert json.loads((tmp_path / "out" / "one" / "results.json").read_text())["score"] == 28.0
    assert main(["grade", str(subs / "one"), "--tests", str(TESTS), "--out", str(tmp_path / "o2"),
                 "--scheduler", graded["address"]]) == 2
    assert "--scheduler is for a batch (a folder of submission folders)" in " ".join(capsys.readouterr().err.split())
