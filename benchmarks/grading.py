"""Grading throughput: 50 copies of the example assignment's mutants and solution, 2 workers.

Prints submissions per minute of the local pool and of a dask.distributed
``LocalCluster`` of N worker processes (one thread each; ``--dask-workers``, 0 to
skip) on the same submissions, side by side: ``--rounds`` times each, alternating, so
that a drifting machine load weighs on both alike (the cluster's start-up is timed apart,
not counted); it checks that both gave the same scores. Then it splits the time of
one submission into the cost of isolation (starting the child pytest process with our plugin, and
starting the namespaces sandbox process that imports numpy; the process-only
sandbox is timed too, for the cost of the namespaces) and the checks themselves.

Run::

    .venv/bin/python benchmarks/grading.py [--copies 50] [--workers 2] [--dask-workers 2] [--rounds 2]

Target: >= 150 submissions per minute on 2 cores (issue 11). A batch forks each submission's child
pytest from a pre-imported zygote (:mod:`gradcheck.grading.zygote`); the breakdown shows that
start beside a fresh ``python -m pytest``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
sys.path.insert(0, str(ROOT))

from gradcheck.grading.runner import _child_env, grade_batch  # noqa: E402
from gradcheck.grading.zygote import shared, spawn  # noqa: E402
from gradcheck.sandbox import Sandbox  # noqa: E402

TARGET_PER_MINUTE = 150  # submissions per minute with 2 workers on 2 cores (docs/speed.md)


def _median_time(fn, n: int = 5) -> float:
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def pytest_start(fork: bool = True) -> None:
    """A child pytest run with our plugin and one empty test: the fixed cost per submission.

    ``fork``: forked from the pre-imported zygote, as a batch does (:mod:`gradcheck.grading.zygote`);
    otherwise a fresh ``python -m pytest`` (one submission, ``gradcheck grade`` without a batch).
    """
    with tempfile.TemporaryDirectory() as tmp:
        ini = Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\n")
        empty = Path(tmp) / "test_empty.py"
        empty.write_text("import gradcheck.grading.checks, manualprop\n\ndef test_nothing():\n    pass\n")
        args = [str(empty), "-q", "-p", "gradcheck.grading.plugin", "-p", "no:cacheprovider", "-c", str(ini),
                "--rootdir", tmp, "-W", "ignore::pytest.PytestAssertRewriteWarning"]
        if fork:
            child = spawn(shared(_child_env()), args, tmp, str(Path(tmp) / "log"))
            child.communicate()
            assert child.returncode == 0, child.returncode
        else:
            subprocess.run([sys.executable, "-m", "pytest", *args], cwd=tmp, env=_child_env(), capture_output=True,
                           check=True)


def sandbox_start(isolation: str = "namespaces") -> None:
    """Start a sandbox and build one layer in it (python -I -S, numpy import, the student's import).

    ``isolation="namespaces"`` is what grading uses (bwrap, a uid per sandbox); ``"process"``
    the lighter one of ``gradcheck check``: the difference is the cost of the namespaces.
    """
    with Sandbox(files={"layers.py": str(ASSIGN / "solution" / "layers.py")}, timeout=10,
                 isolation=isolation) as sb:
        sb.load_layer("layers.py", "ReLU")


def side_by_side(subs: Path, tmp: Path, workers: int, n_workers: int, rounds: int):
    """Grade ``subs`` ``rounds`` times with the local pool and on a ``LocalCluster``, alternating.

    local, Dask, local, Dask, ...: a machine whose load drifts (other people's jobs) weighs
    on both alike. Prints the two rates side by side; returns the first local result and
    its wall time (for the breakdown below).
    """
    try:
        from distributed import LocalCluster
    except ImportError:
        sys.exit("the Dask run needs dask.distributed: pip install .[distributed] (or --dask-workers 0)")
    walls = {"local": 0.0, "dask": 0.0}
    first: dict = {}
    t0 = time.perf_counter()
    with LocalCluster(n_workers=n_workers, processes=True, threads_per_worker=1, dashboard_address=":0",
                      silence_logs=40) as cluster:
        start = time.perf_counter() - t0
        for r in range(rounds):
            for kind, how in (("local", {"workers": workers}), ("dask", {"scheduler": cluster.scheduler_address})):
                t1 = time.perf_counter()
                res = grade_batch(subs, ASSIGN / "tests", tmp / f"out-{kind}-{r}", seed=0, progress=False, **how)
                walls[kind] += time.perf_counter() - t1
                if kind not in first:
                    first[kind] = (res, time.perf_counter() - t1)
    (lres, lwall), (dres, _) = first["local"], first["dask"]
    same = [(s.name, s.score, s.tests) for s in dres.submissions] == [(s.name, s.score, s.tests) for s in lres.submissions]
    n = rounds * len(lres.submissions)
    lw, dw = walls["local"], walls["dask"]
    for label, left, right in (("", "local pool", "Dask LocalCluster"),
                               ("workers", f"{workers} threads", f"{dres.workers} processes x 1 thread"),
                               ("submissions graded", f"{n} ({rounds} rounds)", f"{n} ({rounds} rounds)"),
                               ("wall time", f"{lw:.1f} s", f"{dw:.1f} s"),
                               ("submissions per minute", f"{60 * n / lw:.0f}", f"{60 * n / dw:.0f}"),
                               ("cluster start (not counted)", "-", f"{start:.1f} s")):
        print(f"{label:28}{left:>26}{right:>26}")
    print(f"scores and per-test scores identical: {'yes' if same else 'NO'}")
    return lres, lwall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=50, help="submissions to grade (default 50)")
    ap.add_argument("--workers", type=int, default=2, help="workers of the local pool (default 2)")
    ap.add_argument("--dask-workers", type=int, default=2,
                    help="worker processes of the LocalCluster (default 2; 0: no Dask run)")
    ap.add_argument("--rounds", type=int, default=2,
                    help="with Dask: grade the copies this many times each way, alternating (default 2)")
    args = ap.parse_args()
    kinds = ["solution", *sorted(p.name for p in (ASSIGN / "mutants").iterdir() if p.is_dir())]
    with tempfile.TemporaryDirectory(prefix="gradcheck-bench-") as tmp:
        subs = Path(tmp) / "submissions"
        for i in range(args.copies):
            kind = kinds[i % len(kinds)]
            src = ASSIGN / ("solution" if kind == "solution" else f"mutants/{kind}") / "layers.py"
            (subs / f"{i:03d}-{kind}").mkdir(parents=True)
            shutil.copyfile(src, subs / f"{i:03d}-{kind}" / "layers.py")
        if args.dask_workers:
            res, wall = side_by_side(subs, Path(tmp), args.workers, args.dask_workers, args.rounds)
        else:
            t0 = time.perf_counter()
            res = grade_batch(subs, ASSIGN / "tests", Path(tmp) / "out", workers=args.workers, seed=0,
                              progress=False)
            wall = time.perf_counter() - t0
        per = [s.seconds for s in res.submissions]
        exec_times = [json.loads(Path(s.results_path).read_text())["extra_data"]["pytest_exit_code"] is not None
                      and json.loads(Path(s.results_path).read_text()).get("execution_time", 0.0)
                      for s in res.submissions]
        t_pytest = _median_time(pytest_start)
        t_fresh = _median_time(lambda: pytest_start(fork=False))
        t_sandbox = _median_time(sandbox_start)
        t_light = _median_time(lambda: sandbox_start("process"))
    rate = 60.0 * len(res.submissions) / wall
    mean_sub = statistics.mean(per)
    checks = max(mean_sub - t_pytest - t_sandbox, 0.0)
    print(f"graded {len(res.submissions)} submissions ({len(kinds)} kinds: solution + mutants) "
          f"with {args.workers} workers on {os.cpu_count()} cores in {wall:.1f} s")
    met = rate >= TARGET_PER_MINUTE
    print(f"throughput: {rate:.0f} submissions per minute (target >= {TARGET_PER_MINUTE} on 2 cores: "
          f"{'ok' if met else 'MISS'}; load average now {os.getloadavg()[0]:.1f})")
    print(f"per submission (mean wall time in a worker): {mean_sub:.2f} s")
    print(f"  isolation: child pytest start {t_pytest:.2f} s (forked from the zygote; a fresh python -m pytest "
          f"{t_fresh:.2f} s) + sandbox start {t_sandbox:.2f} s = {t_pytest + t_sandbox:.2f} s "
          f"({100 * (t_pytest + t_sandbox) / mean_sub:.0f}%)")
    print(f"  sandbox start: namespaces (bwrap, own uid) {t_sandbox:.3f} s vs process only {t_light:.3f} s "
          f"(namespaces cost {t_sandbox - t_light:+.3f} s)")
    print(f"  checks themselves (11 tests, references, numerical gradients, round trips): {checks:.2f} s "
          f"({100 * checks / mean_sub:.0f}%)")
    print(f"scores: {sorted({s.score for s in res.submissions})}; max {res.submissions[0].max_score:g}; "
          f"median submission time {statistics.median(per):.2f} s, slowest {max(per):.2f} s; "
          f"{len(exec_times)} results.json written")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
