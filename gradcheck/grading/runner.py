"""Grade one submission or a folder of submissions: results.json, JUnit XML, gradebook, histogram.

One submission
--------------
:func:`grade_submission` first writes a zero-score ``results.json`` (so a crash
of anything later still leaves a valid, failing result), then runs the
assignment's grading tests in a **child pytest process**:

* ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` and ``-p gradcheck.grading.plugin``: only
  our plugin is loaded;
* ``-c <private empty pytest.ini> --rootdir <tests folder> --confcutdir <tests folder>``
  and ``-p no:cacheprovider``; the working directory is a private temporary
  folder and the submission is never on ``sys.path``: the submission's
  ``conftest.py``, ``pytest.ini`` or ``sitecustomize.py`` are never read;
* inside it the student's classes run in a :class:`gradcheck.sandbox.Sandbox`, so
  references, numerical gradients, hidden tests and the verdict stay with the grader;
* the whole child has a wall-clock limit (``submission_timeout``); on expiry its
  process group is killed and the result says so.

At the end ``results.json`` is replaced atomically by the plugin's results
(Gradescope schema) and ``junit.xml`` is written next to it.

A batch
-------
:func:`grade_batch` grades every sub-folder of a folder in parallel (a thread
per worker, each driving child processes), with a tqdm progress bar; it is
resumable (a submission whose ``results.json`` is complete is skipped unless
``force``) and writes ``gradebook.csv`` and ``scores.png`` (histogram).
"""

from __future__ import annotations

import csv
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SubmissionResult", "BatchResult", "grade_submission", "grade_batch", "is_single_submission",
           "placeholder_results", "plot_histogram", "write_gradebook"]

_INI = "[pytest]\njunit_family = xunit1\n"


@dataclass
class SubmissionResult:
    """Outcome of grading one submission.

    Attributes
    ----------
    name : str
        Submission folder name.
    score, max_score : float
    status : {"graded", "error", "skipped"}
        ``"error"``: the grader itself could not finish (pytest crashed or the
        submission's time ran out); the student gets 0 and the output says why.
        ``"skipped"``: already graded (resumed batch).
    seconds : float
        Wall-clock time of the grading (0 when skipped).
    results_path : str
    tests : dict of str -> float
        Score per test name.
    message : str
        For ``"error"``: what went wrong.
    """

    name: str
    score: float
    max_score: float
    status: str
    seconds: float
    results_path: str
    tests: dict[str, float] = field(default_factory=dict)
    message: str = ""


@dataclass
class BatchResult:
    """Outcome of :func:`grade_batch`: one :class:`SubmissionResult` per submission, and file paths."""

    submissions: list[SubmissionResult]
    seed: int
    workers: int
    seconds: float
    gradebook: str
    histogram: str | None

    def summary(self) -> str:
        """A few lines: counts, time, throughput, score statistics, file paths."""
        graded = [s for s in self.submissions if s.status == "graded"]
        skipped = [s for s in self.submissions if s.status == "skipped"]
        errors = [s for s in self.submissions if s.status == "error"]
        done = len(graded) + len(errors)
        rate = 60.0 * done / self.seconds if self.seconds > 0 and done else 0.0
        scores = [s.score for s in self.submissions]
        mx = max((s.max_score for s in self.submissions), default=0.0)
        lines = [f"graded {done} submission(s) in {self.seconds:.1f} s with {self.workers} worker(s) "
                 f"({rate:.0f} per minute); {len(skipped)} skipped (already graded; --force regrades); "
                 f"{len(errors)} grader error(s); seed {self.seed}"]
        if scores:
            import statistics

            lines.append(f"scores out of {mx:g}: mean {statistics.mean(scores):.2f}, median "
                         f"{statistics.median(scores):g}, min {min(scores):g}, max {max(scores):g}; "
                         f"full marks: {sum(s.score >= s.max_score > 0 for s in self.submissions)}, "
                         f"zero: {sum(s.score == 0 for s in self.submissions)}")
        for e in errors:
            lines.append(f"  grader error: {e.name}: {e.message}")
        lines.append(f"gradebook: {self.gradebook}")
        if self.histogram:
            lines.append(f"histogram: {self.histogram}")
        return "\n".join(lines)


def is_single_submission(path: str | os.PathLike) -> bool:
    """True when ``path`` is one submission (it holds ``.py`` files), False for a folder of submissions."""
    p = Path(path)
    return p.is_dir() and any(c.is_file() and c.suffix == ".py" for c in p.iterdir())


def placeholder_results(message: str, seed: int | None = None, *, complete: bool = False) -> dict[str, Any]:
    """A zero-score results.json (Gradescope schema) carrying ``message``."""
    return {
        "score": 0.0, "output": message, "output_format": "md", "stdout_visibility": "hidden",
        "visibility": "visible", "tests": [],
        "extra_data": {"grader": "gradcheck", "complete": complete, "seed": seed},
    }


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "PYTEST_")) and k not in ("COV_CORE_SOURCE", "COV_CORE_CONFIG")}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def grade_submission(submission: str | os.PathLike, tests: str | os.PathLike, out: str | os.PathLike, *,
                     seed: int = 0, timeout: float = 3.0, submission_timeout: float = 300.0,
                     memory_mb: int = 1024, name: str | None = None) -> SubmissionResult:
    """Grade one submission folder with an assignment's grading tests.

    Parameters
    ----------
    submission : path
        The folder with the student's files (e.g. ``/autograder/submission``).
    tests : path
        A grading test file or a folder of them.
    out : path
        Folder for ``results.json`` and ``junit.xml`` (created).
    seed : int, default 0
        Seed of the hidden property tests (recorded in the results).
    timeout : float, default 3.0
        Default wall-clock limit of each call into the student's code (tests may
        set their own with ``@pytest.mark.timeout``).
    submission_timeout : float, default 300.0
        Wall-clock limit of the whole grading run of this submission.
    memory_mb : int, default 1024
        Memory limit of the sandbox process.
    name : str, optional
        Name shown in the results (default the folder name).

    Returns
    -------
    SubmissionResult
    """
    sub = Path(submission).resolve()
    tests_p = Path(tests).resolve()
    out_p = Path(out).resolve()
    name = name or sub.name
    results_path = out_p / "results.json"
    t0 = time.monotonic()
    _write_json(results_path, placeholder_results(
        "Grading started but did not finish; if you see this, the autograder stopped unexpectedly.", seed))
    root = tests_p if tests_p.is_dir() else tests_p.parent
    with tempfile.TemporaryDirectory(prefix="gradcheck-grade-") as tmp:
        ini = Path(tmp) / "pytest.ini"
        ini.write_text(_INI)
        res_tmp, junit_tmp = Path(tmp) / "results.json", Path(tmp) / "junit.xml"
        work = Path(tmp) / "cwd"
        work.mkdir()
        cmd = [sys.executable, "-m", "pytest", str(tests_p), "-p", "gradcheck.grading.plugin",
               "-p", "no:cacheprovider", "-c", str(ini), "--rootdir", str(root), "--confcutdir", str(root),
               "-q", "--no-header", "-rN", "--tb=line", "-o", f"junit_suite_name={name}",
               "--junitxml", str(junit_tmp), "--grading-submission", str(sub),
               "--grading-results", str(res_tmp), "--grading-seed", str(int(seed)),
               "--grading-timeout", str(float(timeout)), "--grading-memory-mb", str(int(memory_mb))]
        proc = subprocess.Popen(cmd, cwd=work, env=_child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            log, _ = proc.communicate(timeout=submission_timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            log, _ = proc.communicate()
            timed_out = True
        log_text = (log or b"").decode("utf-8", "replace")[-4000:]
        seconds = time.monotonic() - t0
        if junit_tmp.exists():
            shutil.copyfile(junit_tmp, out_p / "junit.xml")
        data = None
        if res_tmp.exists() and not timed_out and proc.returncode in (0, 1):
            try:
                data = json.loads(res_tmp.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = None
    if data is None:
        if timed_out:
            msg = (f"Grading this submission took longer than {submission_timeout:g} s and was stopped; "
                   f"score 0. Each call into your code is limited to {timeout:g} s, so this points to "
                   f"very slow code overall.")
        else:
            msg = (f"The autograder could not finish (pytest exit code {proc.returncode}); score 0. "
                   f"Course staff have the log.")
        data = placeholder_results(msg, seed, complete=True)
        data["extra_data"].update(status="error", grader_log=log_text, submission=name,
                                  execution_time=round(seconds, 3))
        _write_json(results_path, data)
        return SubmissionResult(name, 0.0, 0.0, "error", seconds, str(results_path), message=msg)
    data.setdefault("extra_data", {}).update(submission=name, status="graded", pytest_exit_code=proc.returncode)
    data["execution_time"] = round(seconds, 3)
    _write_json(results_path, data)
    return SubmissionResult(name, float(data["score"]), _max_score(data), "graded", seconds,
                            str(results_path), tests={t["name"]: float(t["score"]) for t in data["tests"]})


def _max_score(data: dict[str, Any]) -> float:
    """Total points: recorded in extra_data (results.json's top level has no max_score field)."""
    extra = data.get("extra_data") or {}
    if "max_score" in extra:
        return float(extra["max_score"])
    return float(sum(float(t.get("max_score", 0.0)) for t in data.get("tests", [])))


def _load_done(results_path: Path) -> SubmissionResult | None:
    try:
        data = json.loads(results_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    extra = data.get("extra_data") or {}
    if not extra.get("complete"):
        return None
    return SubmissionResult(results_path.parent.name, float(data.get("score", 0.0)),
                            _max_score(data), "skipped", 0.0, str(results_path),
                            tests={t["name"]: float(t["score"]) for t in data.get("tests", [])},
                            message=extra.get("status", ""))


def write_gradebook(path: str | os.PathLike, results: Sequence[SubmissionResult], seed: int) -> str:
    """Write the CSV gradebook: one row per submission, one column per test.

    Columns: ``submission, score, max_score, percent, status, seconds, seed``, then
    each test's score (names as in results.json).

    Returns
    -------
    str
        The path written.
    """
    names: list[str] = []
    for r in results:
        for t in r.tests:
            if t not in names:
                names.append(t)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["submission", "score", "max_score", "percent", "status", "seconds", "seed", *names])
        for r in sorted(results, key=lambda r: r.name):
            pct = f"{100 * r.score / r.max_score:.1f}" if r.max_score else "0.0"
            status = "graded" if r.status == "skipped" and r.message != "error" else r.status
            w.writerow([r.name, f"{r.score:g}", f"{r.max_score:g}", pct, status, f"{r.seconds:.2f}", seed,
                        *(f"{r.tests[n]:g}" if n in r.tests else "" for n in names)])
    return str(p)


def plot_histogram(path: str | os.PathLike, results: Sequence[SubmissionResult], title: str = "") -> str:
    """Save a histogram of the scores (one bar per point value; mean and median marked).

    Returns
    -------
    str
        The path written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    scores = np.array([r.score for r in results], dtype=float)
    mx = max((r.max_score for r in results), default=1.0) or 1.0
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=120)
    edges = np.arange(0, np.ceil(mx) + 2) - 0.5
    counts, _, bars = ax.hist(scores, bins=edges, color="#4C72B0", edgecolor="white", rwidth=0.9)
    for c, b in zip(counts, bars):
        if c:
            ax.annotate(f"{int(c)}", (b.get_x() + b.get_width() / 2, c), ha="center", va="bottom", fontsize=9,
                        xytext=(0, 2), textcoords="offset points")
    if len(scores):
        ax.axvline(scores.mean(), color="#C44E52", ls="--", lw=1.5, label=f"mean {scores.mean():.1f}")
        ax.axvline(np.median(scores), color="#55A868", ls=":", lw=2, label=f"median {np.median(scores):.1f}")
        ax.legend(loc="upper left", frameon=False)
    ax.set_xlim(-0.8, mx + 0.8)
    ax.set_ylim(0, max(counts.max() if len(counts) else 1, 1) * 1.18)
    step = 1 if mx <= 25 else int(np.ceil(mx / 20))
    ax.set_xticks(np.arange(0, mx + 1, step))
    ax.set_xlabel(f"score (out of {mx:g}; each bar: scores rounded to the nearest point)")
    ax.set_ylabel("submissions")
    ax.set_title(title or f"Scores of {len(scores)} submissions")
    ax.spines[["top", "right"]].set_visible(False)
    ax.yaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p)
    plt.close(fig)
    return str(p)


def grade_batch(submissions_dir: str | os.PathLike, tests: str | os.PathLike, out: str | os.PathLike, *,
                workers: int | None = None, force: bool = False, seed: int | None = None, timeout: float = 3.0,
                submission_timeout: float = 300.0, memory_mb: int = 1024, progress: bool = True,
                plot: bool = True, on_done: Callable[[SubmissionResult], None] | None = None) -> BatchResult:
    """Grade every submission folder in ``submissions_dir`` in parallel.

    Parameters
    ----------
    submissions_dir : path
        One sub-folder per submission (hidden folders are ignored).
    tests, timeout, submission_timeout, memory_mb
        As in :func:`grade_submission`.
    out : path
        ``out/<submission>/results.json`` and ``junit.xml``; ``out/gradebook.csv``,
        ``out/scores.png``, ``out/grading.json`` (the batch's seed, for resuming).
    workers : int, optional
        Submissions graded at once; default the number of CPU cores.
    force : bool, default False
        Regrade submissions that already have a complete results.json.
    seed : int, optional
        Seed of the hidden tests; default the seed recorded in ``out/grading.json``
        by an earlier run, else a fresh random one (recorded).
    progress : bool, default True
        Show a tqdm progress bar.
    plot : bool, default True
        Write the histogram.
    on_done : callable, optional
        Called with each finished :class:`SubmissionResult`.

    Returns
    -------
    BatchResult
    """
    src = Path(submissions_dir).resolve()
    out_p = Path(out).resolve()
    out_p.mkdir(parents=True, exist_ok=True)
    subs = sorted(p for p in src.iterdir() if p.is_dir() and not p.name.startswith((".", "__")))
    meta_path = out_p / "grading.json"
    if seed is None:
        try:
            seed = int(json.loads(meta_path.read_text())["seed"])
        except (OSError, ValueError, KeyError, TypeError):
            seed = secrets.randbelow(2**31)
    meta_path.write_text(json.dumps({"seed": seed, "tests": str(Path(tests).resolve()),
                                     "submissions": str(src)}, indent=2))
    workers = max(1, int(workers or os.cpu_count() or 1))
    t0 = time.monotonic()
    results: list[SubmissionResult] = []
    todo = []
    for s in subs:
        done = None if force else _load_done(out_p / s.name / "results.json")
        if done is not None:
            results.append(done)
        else:
            todo.append(s)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(subs), initial=len(results), desc="grading", unit="submission", dynamic_ncols=True)
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futs = {pool.submit(grade_submission, s, tests, out_p / s.name, seed=seed, timeout=timeout,
                                submission_timeout=submission_timeout, memory_mb=memory_mb): s for s in todo}
            for fut in as_completed(futs):
                r = fut.result()
                results.append(r)
                if on_done is not None:
                    on_done(r)
                if bar is not None:
                    bar.set_postfix_str(f"{r.name}: {r.score:g}/{r.max_score:g}", refresh=False)
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.monotonic() - t0
    gradebook = write_gradebook(out_p / "gradebook.csv", results, seed)
    hist = plot_histogram(out_p / "scores.png", results, title=f"Scores: {src.name} ({len(results)} submissions)") \
        if plot and results else None
    return BatchResult(sorted(results, key=lambda r: r.name), seed, workers, seconds, gradebook, hist)
