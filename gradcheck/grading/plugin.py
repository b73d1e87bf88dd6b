"""pytest plugin for grading tests (the ``pytest11`` entry point ``gradcheck-grading``).

An assignment's grading tests are ordinary pytest tests::

    pytestmark = pytest.mark.forbid_imports("autoprop", "autograd", "torch", "jax", "tensorflow")

    @pytest.mark.points(6)
    @pytest.mark.visibility("visible")
    @pytest.mark.timeout(3)
    def test_linear_gradients(student, grade, rng):
        "Linear: gradients dX, dW, db"
        layer = student.layer("layers.py", "Linear", in_features=5, out_features=3)
        grade.layer_gradients(layer, rng.standard_normal((8, 5)), RefLinear(5, 3),
                              parts={"dX": 2, "dW": 2, "db": 2})

Markers: ``points(n)`` (default 1); ``visibility(v)`` (Gradescope's: ``visible``, the default,
``hidden``, ``after_due_date``, ``after_published``); ``timeout(seconds)``, the wall-clock limit of
each call into the student's code in that test (``--grading-timeout`` is that of a test without one);
``forbid_imports(*modules)``, checked with :mod:`ast` before the test (the sandbox refuses them at
run time too): no credit, a clear message; ``gradcheck_no_forward_in_backward``, a staff policy: a
``backward`` that calls its own ``forward`` fails (counted in the sandbox); ``(False)`` on one test switches a
module's ``pytestmark`` off for that test (one that calls backward for another property, e.g. dtypes).

Fixtures: ``student`` (:class:`Student`: the submission's classes in the session's sandbox),
``grade`` (:class:`Grade`: the checks of :mod:`gradcheck.grading.checks`, partial credit per
part), ``rng`` (seeded from ``--grading-seed`` and the test's id), ``grading_seed``. Options:
``--grading-submission DIR``, ``--grading-results PATH`` (Gradescope-schema JSON),
``--grading-seed``, ``--grading-timeout``, ``--grading-memory-mb``, ``--grading-isolation``. A
failing check's report is its Markdown message, never an assertion dump. Inert in a run that uses
none of it.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import math
import os
import stat
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .. import _validation as V
from .._switch_reach import source_tree
from ..compare import close
from ..errors import (
    GradcheckError,
    GraderError,
    InternalError,
    StudentCodeError,
    UsageError,
    code,
    marked,
)
from . import checks as C
from .runner import (
    GRADER_SECONDS,
    LATER_TESTS,
    STUDENT_STARTED,
    SUBMISSION_SECONDS,
    VISIBILITIES,
    check_options,
    placeholder_results,
    result_row,
    shown_file,
    tests_imports,
    visible_score,
    write_json,
)
from .static import (
    MAX_BYTES,
    Markdown,
    code_span,
    forbidden_imports,
    format_violations,
    graded_files,
    markdown_text,
    name_span,
    scan,
    vendored_engines,
)

_MARKERS = (
    "points(n): points of this grading test (gradcheck.grading; default 1)",
    "visibility(v): Gradescope visibility: visible, hidden, after_due_date or after_published",
    "timeout(seconds): wall-clock limit of each call into the student's code (gradcheck.grading); "
    "also pytest-timeout's per-test limit when that plugin is active",
    "forbid_imports(*modules): the submission may not import these modules (gradcheck.grading)",
    "gradcheck_no_forward_in_backward(on=True): a backward that calls the layer's forward fails "
    "(gradcheck.grading); (False) on a test switches a module's pytestmark off for it",
)

def _policy_on(item: pytest.Item) -> bool:
    """Whether the staff policy ``gradcheck_no_forward_in_backward`` holds in ``item``: its closest marker (the test's
    own before its class's and module's ``pytestmark``), on unless that marker says ``False``
    (``@pytest.mark.gradcheck_no_forward_in_backward(False)``, or ``on=False``).

    Raises
    ------
    GradingTestError
        When the marker's argument is not True or False (a test's mistake, never the submission's).
    """
    m = item.get_closest_marker("gradcheck_no_forward_in_backward")
    if m is None:
        return False
    on = m.kwargs.get("on", m.args[0] if m.args else True)
    if on is not True and on is not False or len(m.args) > 1 or set(m.kwargs) - {"on"}:
        raise C.GradingTestError(f"{item.nodeid}: gradcheck_no_forward_in_backward takes True or False (on=...); "
                               f"got {m.args!r} {m.kwargs!r}")
    return on


_RESULTS = pytest.StashKey[dict]()
_PARTIAL = pytest.StashKey[dict]()
_FRACTION = pytest.StashKey[float]()
_GRADE = pytest.StashKey["Grade"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Grading options (inert unless given)."""
    g = parser.getgroup("gradcheck-grading", "grading with gradcheck")
    g.addoption("--grading-submission", metavar="DIR", default=None,
                help="folder of the submission to grade (its files are loaded only into a sandbox)")
    g.addoption("--grading-results", metavar="PATH", default=None,
                help="write a Gradescope-schema results JSON here at the end of the session")
    g.addoption("--grading-seed", metavar="N", type=int, default=0,
                help="seed of the rng fixture and of hidden property tests (recorded in the results)")
    g.addoption("--grading-timeout", metavar="SECONDS", type=float, default=3.0,
                help="wall-clock limit of each call into the student's code in a test without a "
                     "timeout(seconds) marker")
    g.addoption("--grading-submission-timeout", metavar="SECONDS", type=float, default=None,
                help="the runner's limit of the whole grading (gradcheck grade --submission-timeout): the bug "
                     "diagnoses' seconds are the grader's, added to it up to that much (DiagnosisClock)")
    g.addoption("--grading-memory-mb", metavar="MIB", type=int, default=1024,
                help="memory limit of the sandbox process")
    g.addoption("--grading-isolation", choices=("namespaces", "none"), default="namespaces",
                help="namespaces: bwrap's namespaces and a dedicated uid (gradcheck.isolation); "
                     "none: the process sandbox only (gradcheck grade's --unsafe-no-isolation)")


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers and the results collector; check options as `gradcheck grade` does."""
    for line in _MARKERS:
        config.addinivalue_line("markers", line)
    config.stash[_RESULTS] = {}
    config.stash[_PARTIAL] = {"blocked": set(), "started": time.time()}
    if config.getoption("--grading-submission", None):
        try:
            check_options(seed=config.getoption("--grading-seed"), timeout=config.getoption("--grading-timeout"))
        except GradcheckError as exc:
            raise pytest.UsageError(str(exc)) from None


def _hidden(item: pytest.Item) -> str:
    """``item``'s visibility if its result is hidden from the student when they submit (``hidden``,
    ``after_due_date``, ``after_published``), else "" (visible, the default)."""
    m = item.get_closest_marker("visibility")
    return str(m.args[0]) if m is not None and m.args and m.args[0] != "visible" else ""


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    """Validate markers and gather every forbidden module (the sandbox blocks them all). In a grading session
    the hidden tests (:func:`_hidden`) run after every visible one, grouped by their visibility, each group in a
    sandbox process of its own (:meth:`_SandboxHolder.serve`), so nothing they give the submission reaches the
    output of a test shown at another time (tester20g H2); the results keep the file's order."""
    if config.getoption("--grading-submission", None):
        config.stash[_PARTIAL]["order"] = {item.nodeid: k for k, item in enumerate(items)}
        rank = {v: k for k, v in enumerate(VISIBILITIES)}  # visible first; a bad one is refused below
        items[:] = sorted(items, key=lambda i: rank.get(_hidden(i) or "visible", len(rank)))
    for item in items:
        m = item.get_closest_marker("visibility")
        if m is not None and (not m.args or m.args[0] not in VISIBILITIES):
            raise pytest.UsageError(f"{item.nodeid}: visibility must be one of {VISIBILITIES}; got {m.args}.")
        p = item.get_closest_marker("points")
        if p is not None and (not p.args or not isinstance(p.args[0], (int, float)) or p.args[0] < 0):
            raise pytest.UsageError(f"{item.nodeid}: points(n) needs a number >= 0; got {p.args}.")
        _marker_timeout(item)
        for fm in item.iter_markers("forbid_imports"):
            config.stash[_PARTIAL]["blocked"].update(fm.args)
        if _may_grade(item) and (why := _points_contradiction(item)):
            raise pytest.UsageError(why)  # only a graded test calls grade.<check>: any other test is not read
    _one_name_each([i for i in items if {"student", "grade"} & set(getattr(i, "fixturenames", ()))])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the first test shown later (:func:`_hidden`; they run after every visible test), create
    :data:`LATER_TESTS` beside the results: a submission time limit passed from then on is charged to the later
    tests' rows alone (``runner._later_too_slow``), so what the student sees at once never depends on them."""
    path, partial = item.config.getoption("--grading-results", None), item.config.stash.get(_PARTIAL, None)
    if path and partial is not None and _hidden(item) and not partial.get("later_started"):
        partial["later_started"] = True
        with contextlib.suppress(OSError):
            Path(path).with_name(LATER_TESTS).touch()


def _may_grade(item: pytest.Item) -> bool:
    """Whether a test may call ``grade.<check>``, so :func:`_points_contradiction` reads it: it names the ``grade``
    fixture, or its code reads an attribute ``getfixturevalue`` (``grade = request.getfixturevalue("grade")``,
    review34 PLUGIN_POINTS_GETFIXTUREVALUE: such a test's points(2) beside ``points=3`` was no longer refused). Both
    cheap (the fixture names, the names its compiled code uses): no source is read for any other test."""
    if "grade" in getattr(item, "fixturenames", ()):
        return True
    code = getattr(getattr(item, "function", None), "__code__", None)
    return code is not None and "getfixturevalue" in code.co_names


def _points_contradiction(item: pytest.Item) -> str:
    """Why a test's points contradict themselves (tester21g LOW: each was rescaled silently), or '': a test whose
    body makes one ``grade.<check>(...)`` call, outside any loop, giving its points as literals (``parts={"dX": 2,
    ...}``, ``points=3``) that do not add up to its ``points(n)`` marker (1 without one), ``points(5)`` beside parts
    summing to 6. A test of several calls (trials, several checks) shares its points among them by these weights,
    as documented, and is not judged here."""
    found = _one_check(getattr(item, "function", None))
    if found is None:
        return ""
    check, what, total, parts = found
    marker = item.get_closest_marker("points")
    points = float(marker.args[0]) if marker is not None and marker.args else 1.0
    if close(total, points, 1e-9, 0.0):  # the one rule at math.isclose's default (a sum of points)
        return ""
    return (f"{item.nodeid}: points({points:g}) but its one check, grade.{check}(...), gives "
            f"{what} {total:g}{' (' + parts + ')' if parts else ''}: the test's points "
            f"would be rescaled silently. Make them agree (points({total:g}), or parts/points adding up to "
            f"{points:g}).")


@functools.lru_cache(maxsize=None)
def _one_check(function) -> tuple | None:
    """``(check, what, total, parts)`` of a test function whose body makes one ``grade.<check>(...)`` call, outside
    any loop, with literal ``parts={...}`` (``what`` "parts sum", ``parts`` its source) or ``points=n`` (``what``
    "points=", ``parts`` ""); None for any other function. Read once per function (the items of a parametrized test
    share it): the source's syntax tree, which costs milliseconds a test."""
    tree = source_tree(function)
    if tree is None:
        return None
    calls, looped = [], set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):
            looped.update(id(n) for n in ast.walk(node))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == "grade":
            calls.append(node)
    if len(calls) != 1 or id(calls[0]) in looped:
        return None
    given = {k.arg: k.value for k in calls[0].keywords if k.arg in ("parts", "points")}
    try:
        total = sum(float(v) for v in ast.literal_eval(given["parts"]).values()) if "parts" in given else \
            float(ast.literal_eval(given["points"])) if "points" in given else None
    except (ValueError, TypeError, AttributeError, SyntaxError):
        return None
    if total is None:
        return None
    if "parts" in given:
        return calls[0].func.attr, "parts sum", total, ast.unparse(given["parts"])
    return calls[0].func.attr, "points=", total, ""


def _one_name_each(graded: list) -> None:
    """pytest.UsageError naming two graded tests of the same name (their docstrings' first line): the gradebook has
    one column per name and results.json a row each, so they would share a column silently (tester20g M3)."""
    seen: dict[str, str] = {}
    for item in graded:
        name = _entry(item)["name"]
        if name in seen:
            raise pytest.UsageError(
                f"{seen[name]} and {item.nodeid}: two grading tests named {name!r} (the first line of their "
                f"docstrings); each test's name is its column in the gradebook. Give one of them another docstring.")
        seen[name] = item.nodeid


def pytest_collection_finish(session: pytest.Session) -> None:
    """Keep the graded tests in order and write them as not yet run (:func:`_write_results`)."""
    config = session.config
    if config.stash.get(_RESULTS, None) is None or not config.getoption("--grading-results"):
        return  # not a grading session (any pytest run where gradcheck is installed): nothing to write or digest
    order = config.stash[_PARTIAL].get("order", {})
    config.stash[_PARTIAL]["collected"] = sorted(
        [i for i in session.items if {"student", "grade"} & set(getattr(i, "fixturenames", ()))],
        key=lambda i: order.get(i.nodeid, len(order)))
    config.stash[_PARTIAL]["imports"] = tests_imports(str(session.path))  # what a resume checks (tester17g F6)
    _write_results(config, None)
    from ..sandbox import charge_requests_to

    charge_requests_to(Path(config.getoption("--grading-results")).with_name(SUBMISSION_SECONDS))
    _scan_submission(config)
    _start_diagnosis_clock(config)


def _start_diagnosis_clock(config: pytest.Config) -> None:
    """The submission's :class:`~gradcheck.grading.diagnosis.DiagnosisClock`: the bug diagnoses' seconds are the
    grader's, charged to :data:`GRADER_SECONDS` as the scan's are (the runner adds them to ``--submission-timeout``,
    up to that much in all: the clock has what the scan left of it), so the score never depends on them
    (redteam25 H2). None without ``--grading-submission-timeout`` (the diagnoses' forwards counted alone)."""
    from .diagnosis import CLOCK, DiagnosisClock

    limit = config.getoption("--grading-submission-timeout", None)
    CLOCK[0] = None if not limit or not config.getoption("--grading-results", None) else DiagnosisClock(
        max(float(limit) - config.stash[_PARTIAL].get("grader_seconds", 0.0), 0.0), lambda s: _charge(config, s))


def _scan_submission(config: pytest.Config) -> None:
    """Scan the submission's files once, before any test (:func:`~gradcheck.grading.static.scan`: the
    forbidden-import guard's and the integrity report's reading, cached), and write its wall-clock seconds to
    :data:`GRADER_SECONDS` after each file: the grader's work is not charged to the submission's time (tester19g
    F1), even when the runner's limit comes in the middle of the scan (tester23g M1). What is scanned is bounded:
    the files the sandbox receives (:meth:`_SandboxHolder.files`, at most :data:`MAX_READ_BYTES` in all)."""
    value = config.getoption("--grading-submission")
    if not value or not Path(value).is_dir():
        return
    t0 = time.monotonic()
    holder = config.stash[_PARTIAL]["holder"] = _SandboxHolder(config, Path(value).resolve())
    with contextlib.suppress(OSError):
        for path in holder.files().values():
            scan(path)
            t1 = time.monotonic()  # charged file by file (tester23g M1: a scan past the limit was never charged)
            _charge(config, t1 - t0)
            t0 = t1
    _charge(config, time.monotonic() - t0)


def _charge(config: pytest.Config, seconds: float) -> None:
    """Add ``seconds`` of the grader's own work to :data:`GRADER_SECONDS` (beside ``--grading-results``), which
    the runner adds to the submission's time limit."""
    partial = config.stash[_PARTIAL]
    partial["grader_seconds"] = total = partial.get("grader_seconds", 0.0) + seconds
    with contextlib.suppress(OSError):
        Path(config.getoption("--grading-results")).with_name(GRADER_SECONDS).write_text(f"{total:.3f}")


#: The most ``.py`` files of a submission the sandbox receives (the files the tests load by name always among them)
MAX_FILES = 200
#: The most bytes of ``.py`` files the sandbox receives in all (the files the tests load by name always among them):
#: each is scanned first (:func:`_scan_submission`), at up to about 5 s of CPU per MiB (tester23g M1: 62 files of
#: 1 MiB of ``import os`` lines, about 150 s of scan, scored a correct solution 0 "too slow" under load). A file
#: not received cannot be imported, so what is not scanned cannot run.
MAX_READ_BYTES = 4 << 20


def _package_alone(folder: Path) -> bool:
    """Whether ``folder`` is a package holding no ``.py`` file but its ``__init__.py`` (``layers/__init__.py``): the
    student's module as a package, not a zipped folder of files."""
    try:
        return [c.name for c in folder.iterdir() if c.suffix == ".py"] == ["__init__.py"]
    except OSError:
        return False


def _visible(name: str) -> bool:
    return not name.startswith(".") and name not in ("__MACOSX", "__pycache__")


class SandboxStartFailure(Exception):
    """The sandbox could not start, before any of the student's code ran (the grader's setup failed)."""


def failed(store: dict, key: Any, timeout: float) -> Exception | None:
    """The failure kept in ``store`` (``_SandboxHolder.import_failures``, ``load_failures``: ``{key: (error, the
    per-call limit it had)}``) for ``key``, to be raised again without running anything; None when there is none, or
    when it was a timeout under a smaller limit than this test's ``timeout`` (verify45b F9: a test's timeout(10) lost
    its 5 points as an earlier test's timeout(1) had timed out the same constructor of 1.5 s)."""
    exc, limit = store.get(key, (None, 0.0))
    return exc if exc is not None and (getattr(exc, "reason", None) != "timeout" or timeout <= limit) else None


class _SandboxHolder:
    """The session's sandbox for the submission (a fresh one after a timeout or crash: ``starts``,
    ``level``). A file whose import timed out or ended the sandbox is not imported again: its
    failure (``import_failures``) fails every later test that uses it at once, not by a timeout."""

    def __init__(self, config: pytest.Config, submission: Path):
        self.config, self.submission = config, submission
        self.sandbox, self._root, self.level, self.starts = None, None, None, 0
        self.notes: list[str] = []
        #: a file whose import timed out or ended the sandbox, and the per-call limit it had (s)
        self.import_failures: dict[str, tuple[Exception, float]] = {}
        #: a load that timed out (its constructor or its probe forward), by file, class, kind and arguments, and the
        #: per-call limit it had (s)
        self.load_failures: dict[tuple, tuple[Exception, float]] = {}
        self._imported: set[str] = set()  # files imported in the current sandbox
        self.refused: dict[str, str] = {}
        self._walked: list[tuple[str, str, int]] | None = None  # (relative name, path, size) of each .py file
        self._wanted: list[str] = []  # the files the tests asked for by name (require), read first
        self._cap_note = ""  # the note of the files the caps left out (files), replaced when it changes
        self.serving: str | None = None  # whom the sandbox serves: "" the visible tests, else a hidden test's id
        self.own_starts = 0  # the sandboxes started for a hidden test while the previous one was alive
        self._own = False

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    @property
    def root(self) -> Path:
        """The submission folder, or the one folder it holds (at most 3 levels down) when it has
        no ``.py`` file itself: a zipped folder unpacks as ``hw1/layers.py`` (with a note)."""
        if self._root is None:
            root = self.submission
            for _ in range(3):
                entries = [c for c in root.iterdir() if _visible(c.name)]
                dirs = [c for c in entries if c.is_dir() and not c.is_symlink()]
                if any(c.is_file() and c.suffix == ".py" for c in entries) or len(dirs) != 1 or \
                        dirs[0].suffix == ".py" or _package_alone(dirs[0]):  # a folder named layers.py/ (tester15
                    break  # L1), a package layers/__init__.py alone (tester17g L9): not a zipped folder
                root = dirs[0]
            if root != self.submission and any(c.is_file() and c.suffix == ".py" for c in root.iterdir()):
                rel = root.relative_to(self.submission).as_posix()
                self.notes.append(f"Your files were inside the folder {code_span(rel + '/')} (as when a zipped folder is "
                                  f"unpacked); they were graded as if they were at the top level.")
            else:
                root = self.submission
            self._root = root
        return self._root

    def require(self, file: str) -> None:
        """Raise a student-facing :class:`~gradcheck.grading.checks.GradingFailure` when ``file`` is missing."""
        file = os.path.normpath(file).replace("\\", "/")
        if file in self.files():
            return
        if file in self.refused:
            raise C.GradingFailure(f"Your submission's `{file}` was not read: it is {self.refused[file]}, and the "
                                   f"autograder never follows links inside a submission (nor reads devices or pipes). "
                                   f"Upload the file itself.")
        size = next((n for rel, _, n in self._walk() if rel == file), None)
        if size is not None and size <= MAX_BYTES:  # left out by the count cap: the tests name it, so it is read
            self._wanted.append(file)
            self.close()  # the next sandbox holds it
            return
        if size is not None:
            raise C.GradingFailure(f"Your submission's `{file}` was not loaded: it holds {size:,} bytes, more than "
                                   f"the {MAX_BYTES:,} bytes (1 MiB) the autograder reads of one file.")
        base = file.rsplit("/", 1)[-1].lower()
        files = [p.relative_to(self.submission).as_posix() for p in sorted(self.submission.rglob("*")) if p.is_file()]
        found = [f for f in files if all(_visible(n) for n in f.split("/"))]
        similar = [f for f in found if f.rsplit("/", 1)[-1].lower() == base]
        more = f", ... ({len(found) - 12} more)" if len(found) > 12 else ""
        found = found[:12]
        # what was there but not read: a folder named with a dot (skipped), a link to a folder (never followed)
        hidden: dict[str, list[str]] = {}
        for f in files:
            parts = f.split("/")
            cut = next((i for i, n in enumerate(parts[:-1]) if not _visible(n)), None)
            if cut is not None and parts[cut] != "__pycache__":
                hidden.setdefault("/".join(parts[:cut + 1]), []).append(f)
        # a .py file named with a dot (skipped), in a folder that is read
        dotted = [f for f in files if f.lower().endswith(".py") and not _visible(f.rsplit("/", 1)[-1])
                  and all(_visible(n) for n in f.split("/")[:-1])]
        similar += [f for f in dotted if f.rsplit("/", 1)[-1].lstrip(".").lower() == base]
        not_read = [f"{shown_file(f)} (a file whose name starts with a dot: the autograder skips it)" for f in dotted[:12]]
        for folder, inside in hidden.items():
            match = [f for f in inside if f.rsplit("/", 1)[-1].lower() == base]
            similar += match
            what = "a folder whose name starts with a dot" if folder.rsplit("/", 1)[-1][:1] == "." else \
                "a folder of macOS archive data"
            not_read.append(f"{shown_file(folder + '/')} ({what}: the autograder skips it"
                            + (f"; it holds {', '.join(shown_file(f) for f in match[:3])})" if match else ")"))
        root = "" if self.root == self.submission else self.root.relative_to(self.submission).as_posix() + "/"
        for rel, why in self.refused.items():
            if why == "a symbolic link to a folder":
                try:
                    target = f" to {shown_file(os.readlink(self.root / rel))}"
                except OSError:
                    target = ""
                not_read.append(f"{shown_file(root + rel)} (a symbolic link{target}: the autograder never follows links "
                                f"inside a submission)")
        hint = (f"Name the file exactly `{file}` (the name is case-sensitive) and upload it at the top level of "
                f"the submission, not inside a folder."
                + ("" if similar or not_read else " Did you upload the right file (a .py file, not a notebook or a zip)?")
                + (" Upload the files themselves, not a link to them." if any("symbolic link" in r for r in not_read)
                   else ""))
        shown = ", ".join(shown_file(f) for f in found) + more if found else (  # confusables named (M4)
            "no file the autograder reads" if not_read else "no files at all")
        seen = f" Not read: {'; '.join(not_read)}." if not_read else ""
        folder = f" `{file}` is a folder, not a file." if (self.root / file).is_dir() else ""
        if file.endswith(".py") and (self.root / file[:-3] / "__init__.py").is_file():  # one clear note (L9)
            folder += (f" `{file[:-3]}/` is a package (a folder holding `__init__.py`), not the file `{file}` the "
                       f"autograder loads: put its code in a file named `{file}` at the top level.")
            hint = hint.replace(" Did you upload the right file (a .py file, not a notebook or a zip)?", "")
        raise C.GradingFailure(f"Your submission has no `{file}` at its top level; found: {shown}.{seen}{folder} {hint}")

    def _walk(self) -> list[tuple[str, str, int]]:
        """``(relative name, path, size)`` of every ``.py`` file of the submission (walked once per session,
        tester17g F3: every load walked it again), by ``lstat``: links, devices and pipes are never read but
        ``refused`` with a note (a link named ``layers.py`` to the solution gets a message, not its score)."""
        if self._walked is not None:
            return self._walked
        self._walked, base = [], str(self.root)
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            rel_dir = os.path.relpath(dirpath, base).replace(os.sep, "/") + "/"
            rel_dir = "" if rel_dir == "./" else rel_dir
            dirnames[:] = sorted(d for d in dirnames if d[:1] != "." and d != "__pycache__")
            for d in [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                self.refused[rel_dir + d] = "a symbolic link to a folder"
                self._note(f"{code_span(rel_dir + d + '/')} was not read: it is a symbolic link to a folder (the autograder never "
                           f"follows links inside a submission); upload the files themselves.")
                dirnames.remove(d)
            for f in sorted(f for f in filenames if not f.startswith(".") and f.endswith(".py")):
                rel, path = rel_dir + f, os.path.join(dirpath, f)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    why = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
                    self.refused[rel] = why
                    self._note(f"{code_span(rel)} was not read: it is {why} (the autograder never follows links inside a "
                               f"submission, nor reads devices or pipes).")
                else:
                    self._walked.append((rel, path, st.st_size))
        return self._walked

    def files(self) -> dict[str, str]:
        """``{relative name: path}`` of the ``.py`` files read (:meth:`_walk`), each up to :data:`MAX_BYTES`, at most
        :data:`MAX_FILES` and :data:`MAX_READ_BYTES` in all: the files the tests asked for by name first (``require``;
        tester17g F3: the cap kept the first 200 in walk order, dropping ``layers.py`` behind f00000..f09999.py),
        then the others smallest first (name order among equals); a note names the caps when they left files out."""
        small = [(rel, path, size) for rel, path, size in self._walk() if size <= MAX_BYTES]
        out = {rel: path for rel, path, _ in small if rel in self._wanted}
        room = MAX_READ_BYTES - sum(size for rel, _, size in small if rel in out)
        for rel, path, size in sorted((f for f in small if f[0] not in out), key=lambda f: (f[2], f[0])):
            if len(out) < MAX_FILES and size <= room:
                out[rel], room = path, room - size
        if len(small) > len(out):
            left = sorted(rel for rel, _, _ in small if rel not in out)
            shown = ", ".join(shown_file(r) for r in left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
            if self._cap_note in self.notes:  # the files the tests asked for since are read now
                self.notes.remove(self._cap_note)
            self._cap_note = (f"The submission has {len(small)} .py files; the autograder "
                       f"reads at most {MAX_FILES} files and {MAX_READ_BYTES >> 20} MiB in all (the files the tests load "
                       f"by name, then the smallest others), so {len(left)} were not read and cannot be imported: "
                       f"{shown}.")
            self._note(self._cap_note)
        return dict(sorted(out.items()))

    def _new_sandbox(self, files: dict[str, str], timeout: float):
        """A sandbox of the grader's kind (hostile, its memory, isolation and blocked modules) holding ``files``."""
        from ..sandbox import Sandbox

        opt = self.config.getoption
        return Sandbox(files=files, timeout=timeout, memory_mb=opt("--grading-memory-mb"),
                       session_timeout=max(120.0, 20 * timeout), hostile=True,
                       blocked_modules=sorted(self.config.stash[_PARTIAL]["blocked"]),
                       isolation="namespaces" if opt("--grading-isolation") == "namespaces" else "process")

    @contextlib.contextmanager
    def edited(self, texts: dict[str, str], timeout: float):
        """While inside, a sandbox of its own (:meth:`_new_sandbox`) holding the submission's files with ``texts``
        (``{file name: source}``) in place of some: the copy without a log's eps that grading checks as ``gradcheck
        check`` does (:mod:`gradcheck._log_eps`; :func:`gradcheck.cli._edited_loader`, check's)."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="gradcheck-edited-") as d:
            d, files = os.path.realpath(d), self.files()
            for k, t in texts.items():
                if k in files:
                    os.makedirs(os.path.dirname(os.path.join(d, k)), exist_ok=True)
                    with open(os.path.join(d, k), "w", encoding="utf-8") as fh:
                        fh.write(t)
                    files[k] = os.path.join(d, k)
            with self._new_sandbox(files, timeout) as sb:
                yield sb

    def get(self, timeout: float):
        """The live sandbox (a new one when there is none or it died), with ``timeout`` set."""
        from ..sandbox import SandboxError

        if self.sandbox is None or self.sandbox._dead:
            self.close()
            opt = self.config.getoption
            if (path := opt("--grading-results", None)) and not self.starts:  # the submission's code runs from now
                with contextlib.suppress(OSError):
                    Path(path).with_name(STUDENT_STARTED).touch()
            try:
                sb = self._new_sandbox(self.files(), timeout)
            except SandboxError as exc:
                if exc.reason != "start":
                    raise
                raise SandboxStartFailure(str(exc)) from None
            sb.nabla_parts = True  # a Nielsen gradient of a wrong shape fails its part alone (nielsen36)
            for n in sb.notes:  # plain text (a submitted file's name)
                self._note(markdown_text(n))
            self.sandbox, self.level, self._imported = sb, sb.isolation_level, set()
            self.starts, self.own_starts, self._own = self.starts + (not self._own), self.own_starts + self._own, False
        self.sandbox.timeout = float(timeout)
        return self.sandbox

    def serve(self, item: pytest.Item) -> None:
        """Make the sandbox serve ``item``: the visible tests share one process; the hidden tests of one
        visibility (:func:`_hidden`: ``hidden``, ``after_due_date``, ``after_published``, each shown to the student
        at one time, or never) share a process of their own (the zygote forks it), so module globals they filled
        cannot reach the output of a test shown at another time (tester20g H2: a Linear that recorded its hidden
        inputs printed them in a visible test). A start that replaces a live sandbox is counted in
        :attr:`own_starts`, not in :attr:`starts` (crashes and timeouts)."""
        who = _hidden(item)
        if who == self.serving:
            return
        if self.serving is not None and self.sandbox is not None and not self.sandbox._dead:
            self.close()
            self._own = True
        self.serving = who

    def imported(self, file: str, timeout: float):
        """The sandbox with ``file`` imported (once per sandbox). SandboxError when the import
        raised, timed out or ended the sandbox; the last two are raised again, without running
        anything, for every later test."""
        from ..sandbox import SandboxError

        first = failed(self.import_failures, file, timeout)
        if first is not None:
            raise SandboxError(f"{marked(first)} This happened when {code(file)} was first imported, in an earlier "
                               f"test; it is not imported again (each attempt would fail the same way), so every "
                               f"test that uses {code(file)} fails for this reason.", reason=first.reason)
        sb = self.get(timeout)
        if file not in self._imported:
            try:
                sb.import_file(file)
            except SandboxError as exc:
                if exc.reason in ("timeout", "signal", "exit"):
                    self.import_failures[file] = (exc, timeout)
                raise
            self._imported.add(file)
        return sb

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None


@pytest.fixture(scope="session")
def grading_seed(pytestconfig: pytest.Config) -> int:
    """The seed of this grading session (``--grading-seed``)."""
    return int(pytestconfig.getoption("--grading-seed"))


@pytest.fixture
def rng(request: pytest.FixtureRequest, grading_seed: int) -> np.random.Generator:
    """A generator seeded from the session seed and the test's id (stable per test)."""
    return np.random.default_rng([grading_seed, zlib.crc32(request.node.nodeid.encode())])


@pytest.fixture(scope="session")
def submission_dir(pytestconfig: pytest.Config) -> Path:
    """The submission folder (``--grading-submission``); tests are skipped without it."""
    value = pytestconfig.getoption("--grading-submission")
    if not value:
        pytest.skip(f"grading tests need --grading-submission DIR (run them with {code('gradcheck grade')})")
    path = Path(value).resolve()
    if not path.is_dir():
        raise pytest.UsageError(f"--grading-submission {value!r} is not a folder.")
    return path


@pytest.fixture(scope="session")
def _gradcheck_sandboxes(pytestconfig: pytest.Config, submission_dir: Path):
    holder = pytestconfig.stash[_PARTIAL].get("holder")  # made by the scan before the tests (_scan_submission)
    if holder is None or holder.submission != submission_dir:
        holder = pytestconfig.stash[_PARTIAL]["holder"] = _SandboxHolder(pytestconfig, submission_dir)
    yield holder
    holder.close()


#: The smallest ``timeout(seconds)`` marker taken (s): below it no call into Python code finishes (verify45b F5: a
#: timeout(1e-300) gave every student 0, "importing layers.py did not finish within 1e-300 s").
MARKER_FLOOR = 0.01

#: pytest-timeout's ``timeout`` marker's ``method`` values: how it stops a test; the grader stops each call into the
#: submission's sandbox itself, so they are read (checked) and change nothing.
_TIMEOUT_METHODS = ("signal", "thread")


def _marker_timeout(item: pytest.Item) -> float | None:
    """The seconds of ``item``'s ``timeout(seconds)`` marker, None without one: the limit of each call into the
    student's code in that test, whatever ``--grading-timeout`` (``gradcheck grade --timeout``, the limit of a test
    without a marker) says. Until session 45 the option capped the marker, so a test's ``timeout(5)`` graded at the
    default 3 s unless the staff also passed ``--timeout 5`` (staff45 F1). pytest-timeout's spelling is read too:
    ``timeout(timeout=10)``, ``method=`` (``"signal"``/``"thread"``) and ``func_only=`` (a bool), positional or by
    keyword; those two say how pytest-timeout stops a whole test and change nothing here. Every ``timeout`` marker
    of the test, its file's and its class's included, must be right, and a test, class or file may carry one
    (the closest is the test's limit).

    Raises
    ------
    pytest.UsageError
        A marker without a number of seconds, of one below :data:`MARKER_FLOOR` or not finite, of an argument
        pytest-timeout does not take (``seconds=10``), or two on one node (the test's mistake, refused at collection;
        verify45b F4, F5: such markers were taken silently, or their value ignored).
    """
    for node in item.listchain() if hasattr(item, "listchain") else ():
        if len(mine := [m for m in getattr(node, "own_markers", ()) if m.name == "timeout"]) > 1:
            raise pytest.UsageError(f"{item.nodeid}: {len(mine)} timeout(seconds) markers on {node.nodeid or node.name}"
                                    f": {', '.join(_marker_text(m) for m in mine)}; give it one.")
    seconds = [_marker_seconds(m, item.nodeid) for m in item.iter_markers("timeout")]
    return seconds[0] if seconds else None


def _marker_text(m: Any) -> str:
    """``timeout(10, method='thread')``: how marker ``m`` was written."""
    return f"timeout({', '.join([*map(repr, m.args), *(f'{k}={v!r}' for k, v in m.kwargs.items())])})"


def _marker_seconds(m: Any, nodeid: str) -> float:
    """The seconds of one ``timeout`` marker ``m`` (:func:`_marker_timeout`, which says what is refused)."""
    names = ("timeout", "method", "func_only")
    bad = [k for k in m.kwargs if k not in names] or [k for k in names[:len(m.args)] if k in m.kwargs]
    given = dict(zip(names, m.args)) | dict(m.kwargs)
    why = (f"{_marker_text(m)} takes pytest-timeout's arguments (timeout, method, func_only); {', '.join(bad)} is "
           f"not one of them, or is given twice" if bad or len(m.args) > len(names) else
           f"{_marker_text(m)}: method must be one of {_TIMEOUT_METHODS}" if given.get("method", "signal")
           not in _TIMEOUT_METHODS else
           f"{_marker_text(m)}: func_only must be True or False" if not isinstance(given.get("func_only", False), bool)
           else "")
    v = given.get("timeout")
    if not why and (isinstance(v, bool) or not isinstance(v, (int, float)) or not MARKER_FLOOR <= v < math.inf):
        why = (f"timeout(seconds) needs a number of seconds >= {MARKER_FLOOR:g} (each call into the student's code is "
               f"limited to it); got {_marker_text(m)}")
    if why:
        raise pytest.UsageError(f"{nodeid}: {why}.")
    return float(v)


class Student:
    """Loads the submission's classes for one test (the ``student`` fixture), with the test's
    timeout (its marker, else ``--grading-timeout``) and its ``forbid_imports`` guard."""

    def __init__(self, holder: _SandboxHolder, item: pytest.Item):
        self._holder, self._item, self._checked = holder, item, set()
        own = _marker_timeout(item)  # the test's limit; --grading-timeout is that of a test without one (staff45 F1)
        self.timeout = own if own is not None else float(item.config.getoption("--grading-timeout"))

    def _guard(self, file: str) -> None:
        """The ``forbid_imports`` guard, once per loaded file, over the files importing it may run
        (:func:`~gradcheck.grading.static.graded_files`: not a script beside it that nothing imports)."""
        file = os.path.normpath(file).replace("\\", "/")
        banned = [] if file in self._checked else [b for m in self._item.iter_markers("forbid_imports")
                                                   for b in m.args]
        self._checked.add(file)
        files = graded_files(file, self._holder.files()) if banned else []
        if banned and (bad := forbidden_imports(files, banned, root=str(self._holder.root))):
            raise C.GradingFailure(format_violations(bad, banned))

    def _load(self, file: str, class_name: str, init: dict, kind: str, targets: Any = None):

        self._holder.require(file)
        self._guard(file)
        t = _test_targets(targets, int(self._item.config.getoption("--grading-seed")))
        key = (file, class_name, kind, repr(sorted(init.items())), None if t is None else t[1])
        sb = self._holder.imported(file, self.timeout)
        policy = _policy_on(self._item)
        try:
            obj = self._once(key, lambda: sb.load_loss(file, class_name, init, no_forward_in_backward=policy) if kind == "loss" else sb.load_layer(
                file, class_name, init, seed=int(self._item.config.getoption("--grading-seed")),
                no_forward_in_backward=policy, targets=t))
        except UsageError as exc:
            if t is None and "--targets" in str(exc):  # Nielsen's backprop(x, y), a model's: the test gives no labels
                raise C.GradingTestError(
                    f"the test loads {class_name} from {file} without targets, which it needs: "
                    f"{str(exc).partition(': ')[2]} In a grading test: student.layer({file!r}, {class_name!r}, "
                    f"targets='real@N_OUT,M', ...) (check's --targets, labels:K@N for a model of class labels such "
                    f"as DLfS's or CS231n's TwoLayerNet; or the array t itself), the network then "
                    f"a model forward(X) -> its cost, its targets in .targets (docs/gradescope.md).") from None
            if "--init" not in str(exc):
                raise
            raise _init_refused(self._item, file, class_name, init, str(exc)) from None
        if t is not None:  # the test's reference computes its cost with the same t; check's option, for reproduce
            obj.targets, obj.targets_option = t[0], targets if isinstance(targets, str) else None
        if callable(probed := getattr(obj, "probed", None)):  # built again with the test's input as its probe
            obj.probed = lambda xs, *a, **k: self._probe(
                (*key, repr([(np.shape(x), np.asarray(x).dtype.str) for x in xs])), obj, lambda: probed(xs, *a, **k),
                lambda: self._holder.imported(file, self.timeout).load_layer(
                    file, class_name, init, seed=int(self._item.config.getoption("--grading-seed")),
                    no_forward_in_backward=policy, probe_inputs=[x.copy() for x in xs], skip_backward=True))
        obj.init_kwargs, obj.loaded_name = init, class_name  # the --init and NAME of gradcheck.grading.diagnosis.reproduce
        # its copy without a log's eps, checked as gradcheck check checks it (grade45)
        obj.edit_files, obj.load_edited = self._holder.files(), functools.partial(
            self._edited, file, class_name, init, policy, t if kind == "layer" else kind)
        V.remember_calls(obj)  # affine_backward(dY), not affine.backward(dY), in this test's messages
        return obj

    @contextlib.contextmanager
    def _edited(self, file: str, class_name: str, init: dict, policy: bool, t: Any, texts: dict[str, str],
                xs: list[np.ndarray]):
        """While inside, ``class_name(**init)`` of ``file`` loaded as :meth:`_load` loads it (probed on ``xs``) from the
        submission's files with ``texts`` in place of some, in a sandbox of its own (:meth:`_SandboxHolder.edited`);
        ``t`` ``"loss"``: the loss ``class_name`` as :meth:`loss` loads it."""
        with self._holder.edited(texts, self.timeout) as sb:
            if isinstance(t, str):
                yield sb.load_loss(file, class_name, init, no_forward_in_backward=policy)
                return
            yield sb.load_layer(file, class_name, init, seed=int(self._item.config.getoption("--grading-seed")),
                                no_forward_in_backward=policy, targets=t, probe_inputs=[x.copy() for x in xs])

    def _probe(self, key: tuple, obj: Any, call: Any, reload: Any) -> Any:
        """``obj.probed(...)`` (``call``) once per key (:meth:`_once`). When the probe's backward ended the sandbox
        (a crash, an exit, a hang: ``SandboxError.step`` "backward"), now or in an earlier test, ``obj`` is loaded
        again with the probe's input and its backward not run (``reload()``: ``skip_backward``, read as a backward
        that raises), in a new sandbox when that one ended, and the error raised, so the grader reads ``obj`` as so
        loaded: a forward is graded on its own, its weights read from the probe's forward (newuser26: a correct
        Affine.forward scored 0 when its backward segfaulted in the probe, 2/2 when it raised NotImplementedError;
        newuser37 F4: an attribute-style BatchNorm1D whose backward looped forever, loaded without a probe, lost
        its forward tests too, "BatchNorm1D's parameters are none"), and the gradients' test meets the backward
        itself. The failure is kept (``load_failures``), so a later test's probe does not run that backward again; ``obj``
        is loaded again once (a test's later checks keep the state its earlier ones left: running statistics)."""
        from ..sandbox import SandboxError

        try:
            return self._once(key, call)
        except SandboxError as exc:
            if exc.step != "backward" or exc.reason not in ("signal", "exit", "timeout"):
                raise
            self._holder.load_failures.setdefault(key, (exc, self.timeout))
            if not obj.__dict__.get("_backward_skipped"):  # once: a test's later checks keep its state (running stats)
                fresh = reload()
                obj.__dict__.update({k: v for k, v in fresh.__dict__.items() if k not in ("probed", "init_kwargs")})
                obj._backward_skipped = True
            raise

    def _once(self, key: tuple, call: Any) -> Any:
        """``call()``, unless the same call (``key``: file, class, arguments, and the probe input's shapes and dtypes)
        timed out in an earlier test: then a SandboxError saying so at once (tester19g F6: a forward that hangs on the
        probe cost one timeout per test that loaded the class). Another input (another shape) is tried: a hang that
        depends on it is not charged to a test that never gave it."""
        from ..sandbox import SandboxError

        if (first := failed(self._holder.load_failures, key, self.timeout)) is not None:
            raise SandboxError(f"Not run: {marked(first)} This happened when {code(key[1])} was first loaded with these "
                               f"arguments and input shapes, in an earlier test; it is not run again (the same call "
                               f"would not finish again), so every test that loads it so fails for this reason.",
                               reason=first.reason, step=getattr(first, "step", None))
        try:
            return call()
        except SandboxError as exc:
            if exc.reason == "timeout":
                self._holder.load_failures[key] = (exc, self.timeout)
            raise

    def layer(self, file: str, class_name: str, *, targets: Any = None, **init: Any):
        """``class_name(**init)`` from the submission's ``file``, a :class:`~gradcheck.sandbox.RemoteLayer`.
        ``targets``: a model's labels, as ``gradcheck check --targets`` gives them (``"real@3,4"``, ``"labels:3"``
        with its ``@`` shape) or the array ``t`` itself: a model ``forward(x, t) -> loss`` or Nielsen's
        ``backprop(x, y)`` is then graded as ``forward(X) -> L`` (its cost), ``t`` kept as the layer's ``targets``
        (:func:`_test_targets`). ``targets`` is this method's own keyword, never a constructor argument."""
        return self._load(file, class_name, init, "layer", targets)

    def loss(self, file: str, class_name: str, **init: Any):
        """A loss from the submission, as a :class:`~gradcheck.sandbox.RemoteLoss`."""
        return self._load(file, class_name, init, "loss")


def _test_targets(targets: Any, seed: int) -> tuple[np.ndarray, str] | None:
    """``(t, its description)`` of a grading test's ``targets`` (:meth:`Student.layer`): the array ``t`` as given (a
    float64 copy), or a ``gradcheck check --targets`` spec drawn as check draws it (:func:`gradcheck.check_command.
    model_targets`, seeded by ``--grading-seed``); None for None. GradingTestError (the test's mistake) for a spec
    check refuses, or a ``labels:K``/``onehot:K`` without ``@`` and the shape of t (the input is not known yet)."""
    if targets is None:
        return None
    if not isinstance(targets, str):
        t = np.array(targets, dtype=np.float64)
        return t, f"the test's targets t of shape {t.shape}"
    from ..check_command import model_targets

    try:
        return model_targets(targets, seed, None)
    except UsageError as exc:
        raise C.GradingTestError(f"student.layer(..., targets={targets!r}): {exc}") from None
    except TypeError:  # labels:K without '@': t's batch would be read from the input's shape
        raise C.GradingTestError(f"student.layer(..., targets={targets!r}): give t's shape after '@' "
                                 f"({targets}@N,...): the input's shape is not known when the layer is loaded") from None


def _init_refused(item: pytest.Item, file: str, cls: str, init: dict, text: str) -> GradcheckError:
    """The error of a constructor that cannot take the test's keywords ``init`` (its message ``text`` written for
    ``gradcheck check --init``): the test's own mistake (GradingTestError) when the test module's reference class of
    the same name does not take them either (tester20g M2: ``dim=4`` for ``Scale(d)``), else the submission's, in
    words without a command-line flag the student never used."""
    import inspect

    shown = ", ".join(f"{k}={v!r}" for k, v in init.items())
    refs = [v for v in vars(getattr(item, "module", None) or object()).values()
            if isinstance(v, type) and v.__name__ == cls]
    for ref in refs[:1]:
        try:
            inspect.signature(ref).bind_partial(**init)
        except TypeError as why:
            return C.GradingTestError(f"the test builds {cls}({shown}) from {file}, which its own reference "
                                      f"{ref.__module__}.{ref.__qualname__} does not accept either ({why}).")
        except ValueError:  # no signature to read
            pass
    text = text.partition(": ")[2] if text.startswith(f"{file}::") else text
    text = text.replace("--init key", "the keyword").split(", which only --init can give")[0]
    return StudentCodeError(f"The grading test builds {code(f'{cls}({shown})')} from {code(file)}, and your constructor cannot "
                            f"take that: {text.rstrip('.')}. Use the constructor arguments the assignment gives.")


@pytest.fixture
def student(request: pytest.FixtureRequest, _gradcheck_sandboxes: _SandboxHolder) -> Student:
    """Load the submission's classes in the sandbox (see :class:`Student`; a hidden test's own: :meth:`_SandboxHolder.
    serve`)."""
    _gradcheck_sandboxes.serve(request.node)
    return Student(_gradcheck_sandboxes, request.node)


class Grade:
    """Partial credit for one test (the ``grade`` fixture): ``layer_forward``, ``layer_gradients``,
    ``forward_keywords``, ``loss_value``, ``loss_gradient``, ``backward_repeatable``, ``dtypes``, ``mini_batch_step`` run
    the check of that name (:mod:`gradcheck.grading.checks`) and record its parts. Every check of the test runs and
    counts, as pytest-subtests and Gradescope's partial credit count each trial (newuser25 H2: a test of several
    trials scored the trials before the first failure, so one bug scored 31 or 31.667 by which trial failed first):
    the test earns the points-weighted share of all the parts passed, and fails at its end (:meth:`failure`, raised
    by :func:`pytest_pyfunc_call`) with each failing check's diagnosis, named by the notes given before it
    ("trial 2: batch 3")."""

    def __init__(self, item: pytest.Item):
        self._item, self.verdict, self.notes = item, C.Verdict(), []
        #: ``(notes given since the check before, verdict)`` of each check, in order
        self.checks: list[tuple[list[str], C.Verdict]] = []

    def check(self, verdict: C.Verdict) -> C.Verdict:
        """Record ``verdict``'s parts (the test goes on: a failure is raised at its end, :meth:`failure`)."""
        said = sum(len(n) for n, _ in self.checks)
        self.checks.append((self.notes[said:], verdict))
        self.verdict.parts += verdict.parts
        self.verdict.notes += verdict.notes
        self.verdict.not_checked = "\n\n".join(t for t in (self.verdict.not_checked, verdict.not_checked) if t)
        self._item.stash[_FRACTION] = self.verdict.fraction
        return verdict

    def note(self, text: str) -> None:
        """Add a Markdown remark shown with the test's result (the test's own: written as it is, never escaped); notes
        given before a check name it (a trial)."""
        self.notes.append(Markdown(text))

    def failure(self) -> C.GradingFailure | None:
        """The test's failure once it has run (None when every check passed): :meth:`markdown`, and the share of the
        test's points its passed parts earn, by their weights, over every check."""
        return None if self.verdict.passed else C.GradingFailure(self.markdown(), self.verdict.fraction)

    def markdown(self) -> str:
        """The failing test's output: one check's diagnosis and the notes; for several, which failed (named by their
        notes, else "check k of n"), each failing one's diagnosis under its name, then those that passed."""
        if len(self.checks) < 2:
            return "\n\n".join([self.verdict.markdown(), *self.notes]).strip()
        named = [("; ".join(n) or f"check {i + 1} of {len(self.checks)}", v) for i, (n, v) in enumerate(self.checks)]
        failed = [(name, v) for name, v in named if not v.passed]
        passed = [name for name, v in named if v.passed]
        head = (f"{len(failed)} of {len(named)} checks failed: {', '.join(n for n, _ in failed)}. Every check counts: "
                f"this test earns the share of its points that the parts passed, over all {len(named)}.")
        later = self.notes[sum(len(n) for n, _ in self.checks):]  # notes after the last check
        return "\n\n".join([head, *(f"**{name}**\n\n{v.markdown()}" for name, v in failed),
                             *([f"Passed: {', '.join(passed)}."] if passed else []), *later])


def _recorded(name: str):
    def method(self: Grade, *args: Any, **kwargs: Any) -> C.Verdict:
        check = getattr(C, name)
        _bound(check, name, args, kwargs)
        return self.check(check(*args, **kwargs))
    method.__name__, method.__doc__ = name, f":func:`gradcheck.grading.checks.{name}`, recorded."
    return method


def _bound(check: Any, name: str, args: tuple, kwargs: dict) -> None:
    """The staff's arguments of ``grade.<name>(...)`` bound against the check's signature before it runs: a keyword
    it does not take (``grade.layer_gradients(..., point=3)``), one too many or one missing is the test's mistake, a
    :class:`~gradcheck.grading.checks.GradingTestError` (tester22g H1: the TypeError, raised in this frame, not the
    test's, cost every student the test's points with exit 0), never the submission's."""
    import inspect

    try:
        inspect.signature(check).bind(*args, **kwargs)
    except TypeError as exc:
        takes = ", ".join(p.name + ("=" if p.kind is p.KEYWORD_ONLY else "")
                          for p in inspect.signature(check).parameters.values())
        raise C.GradingTestError(f"grade.{name}(...) was called with arguments it does not take: {exc} "
                                 f"(grade.{name} takes {takes}).") from None


for _name in ("layer_forward", "forward_keywords", "layer_gradients", "loss_value", "loss_gradient",
              "backward_repeatable", "dtypes", "mini_batch_step", "instances_apart"):
    setattr(Grade, _name, _recorded(_name))


@pytest.fixture
def grade(request: pytest.FixtureRequest) -> Grade:
    """Record partial credit and diagnoses for this test (see :class:`Grade`)."""
    g = request.node.stash[_GRADE] = Grade(request.node)
    return g


def _entry(item: pytest.Item) -> dict:
    """A graded test's results entry: name (the docstring's first line), points, visibility."""
    doc = (getattr(getattr(item, "function", None), "__doc__", None) or "").strip()
    points, vis = item.get_closest_marker("points"), item.get_closest_marker("visibility")
    return {"name": doc.splitlines()[0].strip() if doc else item.name,
            "max_score": float(points.args[0]) if points is not None else 1.0,
            "visibility": vis.args[0] if vis is not None else "visible",
            "status": "passed", "output": "", "fraction": 1.0, "skipped": False}


def pytest_runtest_logfinish(nodeid: str, location: tuple) -> None:  # noqa: ARG001
    """After each test, the submission's requests' seconds written for the runner (``sandbox.charge_requests_to``;
    between tests, at most every 0.25 s)."""
    if (sb := sys.modules.get("gradcheck.sandbox")) is not None:  # (a pytest run that made no sandbox: nothing)
        sb.write_requests_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """A graded test whose checks failed fails once its body has run (:meth:`Grade.failure`): every trial ran."""
    with V.own_call_names():  # a function pair loaded in the test: messages name its own functions
        outcome = yield
    g = pyfuncitem.stash.get(_GRADE, None)
    if g is not None and outcome.excinfo is None and (failure := g.failure()) is not None:
        outcome.force_exception(failure)


def _all_checked(g, names) -> str:
    """A passing test's first line: "All checked: `dX`, ... ok.", but "Checked (not the running statistics,
    below)" when the notes say they were not looked for (a layer no copy could be made of: verify46a F8) or not
    checked (:func:`gradcheck._running_stats.unchecked`: verify47a F3, F4, F11)."""
    from .._running_stats import unchecked

    unlooked = unchecked([*g.notes, *g.verdict.notes])
    return (("Checked (not the running statistics, below): " if unlooked else "All checked: ")
            + ", ".join(map(name_span, names)) + " ok.")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Replace tracebacks of graded failures by their message; record score, points and visibility.

    A :class:`~gradcheck.errors.GraderError` (or a sandbox that could not start) is the grader's
    failure: the test is not graded, the session stops and the results carry
    ``extra_data.grader_error``.
    """
    outcome = yield
    rep = outcome.get_result()
    results = item.config.stash.get(_RESULTS, None)
    if results is None:
        return
    exc = call.excinfo.value if call.excinfo is not None else None
    if rep.failed and isinstance(exc, (C.GradingFailure, GradcheckError)):
        rep.longrepr = str(exc)
    if not {"student", "grade"} & set(getattr(item, "fixturenames", ())):
        return
    entry = results.setdefault(item.nodeid, _entry(item))
    if rep.failed and (failed := _test_failed(item, call)) is not None:  # the test's assert or pytest.fail
        exc = failed
        rep.longrepr = str(exc)
    elif rep.failed and (where := _tests_own_error(item, call)):  # the staff's typo: a grader error, not a score
        exc = C.GradingTestError(f"the test raised {type(exc).__name__}: {_exc_text(exc)} ({where})")
    elif rep.failed and isinstance(exc, Exception) and not isinstance(exc, (GradcheckError, C.GradingFailure,
                                                                           SandboxStartFailure)):
        exc = _internal_error(exc)  # gradcheck's own bug (tester22g M3: "The check stopped with AttributeError")
    if rep.failed and isinstance(exc, (SandboxStartFailure, GraderError)):
        rep.longrepr = str(exc)
        faulty_test = isinstance(exc, C.GradingTestError)  # the test's own reference is wrong, not the grader's setup
        if "grader_error" not in item.config.stash[_PARTIAL]:  # the first: in a test shown later (hidden)?
            item.config.stash[_PARTIAL]["grader_error_later"] = bool(_hidden(item))
        item.config.stash[_PARTIAL].setdefault("grader_error", f"test {item.nodeid}: {exc}" if faulty_test
                                               else str(exc))
        memory = isinstance(exc, C.MemoryBudgetError)  # the setup's memory limit, checked before the check ran
        internal = isinstance(exc, InternalError)
        from ..sandbox import SandboxStarved

        busy = isinstance(exc, SandboxStarved)  # the machine's load had the time (tester22g H2), not the submission
        item.session.shouldstop = ("gradcheck: a test's reference is faulty" if faulty_test else
                                   "gradcheck: a check needs more memory than --memory-mb" if memory else
                                   "gradcheck: the machine's load starved the sandbox" if busy else
                                   "gradcheck: the grader's own code failed" if internal else
                                   "gradcheck: the grader failed before any submitted code ran")
        what = ("this test is faulty" if faulty_test else "this check needs more memory than the autograder "
                "allows" if memory else "the grading machine was too busy to time your code fairly; it is graded "
                "again" if busy else "the autograder's own code failed during this check" if internal else
                "the autograder failed before running your code")
        entry.update(status="failed", fraction=0.0,
                     output=f"Not graded: {what} (a problem on the grader's side, not in your submission). "
                            "Course staff have the details.")
    elif rep.skipped and rep.when in ("setup", "call"):
        entry.update(status="failed", fraction=0.0, skipped=True, output="Not graded: " + markdown_text(
            rep.longrepr[-1] if isinstance(rep.longrepr, tuple) else rep.longrepr))
    elif rep.failed and entry["status"] == "passed":
        if isinstance(exc, C.GradingFailure):  # Markdown the grader wrote (names in code spans, messages escaped)
            output = str(exc)
        elif exc is None or isinstance(exc, GradcheckError):  # plain text, which quotes the submission's strings
            output = markdown_text(str(rep.longrepr) if exc is None else marked(exc))  # gradcheck's code spans kept
        else:
            text = str(exc).strip()
            output = markdown_text(f"The check stopped with {type(exc).__name__}" + (f": {text}" if text else "."))
        g = item.stash.get(_GRADE, None)  # the trials' notes up to the failing one (tester18g L7: "trial 2: batch")
        own = g is not None and isinstance(exc, C.GradingFailure) and str(exc) == g.markdown()  # said them already
        notes = "\n\n".join(g.notes) if g is not None and rep.when == "call" and not own else ""
        entry.update(status="failed", fraction=exc.fraction if isinstance(exc, C.GradingFailure) else 0.0,
                     output=(output + "\n\n" + notes).strip() if notes else output)
    g = item.stash.get(_GRADE, None)
    if rep.when == "call" and rep.passed and g is not None:
        if g.verdict.parts:
            names = dict.fromkeys(p.name for p in g.verdict.parts)  # each once: trials repeat them (tester23g)
            entry["output"] = _all_checked(g, names)
        said = g.notes + [n for n in g.verdict.notes if n not in g.notes]  # the checks' own (a layout used)
        if said:
            entry["output"] = (entry["output"] + "\n\n" + "\n\n".join(map(markdown_text, said))).strip()
    if rep.when == "teardown":
        entry["score"] = round(entry["max_score"] * entry["fraction"], 4)
        props = [("points", entry["max_score"]), ("score", entry["score"]), ("visibility", entry["visibility"])]
        item.user_properties += props
        rep.user_properties = [*rep.user_properties, *props]  # junitxml reads the teardown report's
        _write_results(item.config, None)  # the rows so far: a grading stopped for time keeps them


def _raised_in_tests(item: pytest.Item, exc: BaseException) -> Any:
    """The traceback entry where ``exc`` was raised (the innermost frame that is not Python's or a library's: numpy's
    error on the test's own arrays is raised where the test called it) when it is a frame of a file of the tests'
    folder (the test function or a helper of the staff's), else None (gradcheck's own frames, the reference's in
    manualprop, a library's)."""
    folder, frames, tb = os.path.dirname(os.path.abspath(str(item.path))), [], exc.__traceback__
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    raised = next((t for t in reversed(frames) if not _library(os.path.abspath(t.tb_frame.f_code.co_filename))), None)
    where = os.path.abspath(raised.tb_frame.f_code.co_filename) if raised is not None else ""
    return raised if where.startswith(folder + os.sep) else None


def _test_failed(item: pytest.Item, call: pytest.CallInfo) -> C.GradingFailure | None:
    """The test's own verdict on the submission, as pytest and Gradescope read it: an ``AssertionError`` raised in a
    frame of the tests' folder (a plain ``assert`` of the test function on the student's output, pytest's rewritten
    message kept, or of a staff helper it calls) or ``pytest.fail(msg)`` fails this test alone, with no points, its
    message and (for an assert) the failing line shown (newuser37 F3: an ``assert`` of the docs' own ``test_backprop``
    made the whole submission a grader error, every other row "Not counted", exit 1, regraded every run; tester21g
    M1's ``assert 1 == 2`` of the staff is read as pytest reads it: a failed test, which grading the solution shows).
    Told by where it was raised, never by its text: an AssertionError raised in gradcheck's frames (an ``assert`` of
    the grader's own code: its bug) or a library's is not the test's (:func:`_internal_error`), nor one of a reference
    the test file defines, called by gradcheck's checks (:func:`_reference_frame`: the test's error), nor pytest-timeout's
    ``Failed`` (:func:`gradcheck._validation.not_the_students`), nor one in a fixture's setup or teardown (an error
    there in pytest, not a failure). None for any other failure."""
    exc = call.excinfo.value if call.excinfo is not None and getattr(call, "when", "call") == "call" else None
    if isinstance(exc, pytest.fail.Exception) and not V.not_the_students(exc):
        return C.GradingFailure(markdown_text(f"Failed: {exc.msg}" if exc.msg else "Failed."))
    if not isinstance(exc, AssertionError) or isinstance(exc, C.GradingFailure) or _reference_frame(exc) or \
            (raised := _raised_in_tests(item, exc)) is None:  # a reference of the test file's: the test's error
        return None
    import linecache

    code = raised.tb_frame.f_code
    line = linecache.getline(code.co_filename, raised.tb_lineno).strip()
    first, *explained = str(exc).strip().splitlines() or [""]  # the message, then pytest's rewritten comparison
    where = f"{os.path.basename(code.co_filename)}, line {raised.tb_lineno}, in {code.co_name}"
    return C.GradingFailure("\n\n".join([markdown_text(f"AssertionError: {first}".strip(" :")), *(
        ["  \n".join(map(code_span, explained))] if explained else []), f"{markdown_text(f'at {where}:')} "
        f"{code_span(line)}"]))


def _tests_own_error(item: pytest.Item, call: pytest.CallInfo) -> str:
    """Where a test's own code failed (``"test_x.py, line 55, in test_a"``) when an exception was raised by a frame
    of a file of the tests' folder (the innermost frame that is not Python's or a library's: numpy's error on the
    test's own arrays is raised where the test called it): a typo in the staff's test (tester16g H4: ``RefRelu()``
    for ``RefReLU()`` cost the reference solution a point, "The check stopped with NameError"), a KeyError, a
    shape error of the test's own arrays (tester21g M1: each graded the solution 0 with exit 0; an ``assert`` of the
    test's own is the test's verdict, :func:`_test_failed`, read before this); or by the test's reference (:func:`_reference_frame`); or a fixture misspelt. The submission
    runs in its sandbox process, so none of its frames is in this traceback: what it does reaches the test as
    gradcheck's errors (StudentCodeError, SandboxError) and failures (GradingFailure), raised in gradcheck's
    frames and never counted here, whichever test frames they pass through. '' for any other failure."""
    exc = call.excinfo.value if call.excinfo is not None else None
    if isinstance(exc, pytest.FixtureLookupError):  # a fixture's name misspelt (tester20g M2: ``studnet``)
        return f"{os.path.basename(str(item.path))}: {item.name} asks for a fixture that does not exist"
    if not isinstance(exc, Exception) or isinstance(exc, (GradcheckError, C.GradingFailure)):
        return ""
    if not isinstance(exc, AssertionError) and (where := _reference_frame(exc)):  # tester20g M2: a broadcast error
        return where
    if (raised := _raised_in_tests(item, exc)) is None:
        return ""
    folder = os.path.dirname(os.path.abspath(str(item.path)))
    return (f"{os.path.relpath(os.path.abspath(raised.tb_frame.f_code.co_filename), folder)}, line {raised.tb_lineno}, "
            f"in {raised.tb_frame.f_code.co_name}")


class _InternalError(InternalError):
    """An exception of gradcheck's own code during a graded check (not the test's, not the submission's: what the
    submission does reaches the grader as gradcheck's errors): a grader error naming where it was raised."""


def _internal_error(exc: Exception) -> _InternalError:
    """``exc``, raised by gradcheck's (or a library's) code during a check, as a grader error for the staff naming the
    innermost frame of gradcheck's (the student reads only that the autograder failed, never the exception)."""
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    ours = [t for t in frames if os.sep + "gradcheck" + os.sep in t.tb_frame.f_code.co_filename] or frames
    where = (f" ({os.path.basename(ours[-1].tb_frame.f_code.co_filename)}, line {ours[-1].tb_lineno}, in "
             f"{ours[-1].tb_frame.f_code.co_name})") if ours else ""
    return _InternalError(f"gradcheck's own code raised {type(exc).__name__}: {_exc_text(exc)}{where}: a bug of the "
                          f"grader, not the submission's; please report it")


def _exc_text(exc: BaseException) -> str:
    """An exception's text for a message (a FixtureLookupError's: the missing name, not its tuple)."""
    if isinstance(exc, pytest.FixtureLookupError):
        return f"no fixture named {exc.argname!r} (the grading fixtures: student, grade, rng, grading_seed)"
    return str(exc).strip()


def _library(path: str) -> bool:
    """Whether ``path`` is Python's own or an installed package's code (numpy's), not staff or gradcheck code."""
    import sysconfig

    roots = {os.path.abspath(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return path.startswith("<") or any(path.startswith(r + os.sep) for r in roots)


def _reference_frame(exc: BaseException) -> str:
    """Where code that gradcheck's checks called, outside gradcheck and the libraries, raised ``exc``: the test's
    reference (``"ref_layers.py, line 12, in forward"``), '' for any other failure. The submission runs in its
    sandbox process, so no code of it is in this traceback; an exception raised in gradcheck's own code or in the
    test function itself (which may read the student's arrays) is not counted here."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append((os.path.abspath(tb.tb_frame.f_code.co_filename), tb.tb_lineno, tb.tb_frame.f_code.co_name))
        tb = tb.tb_next
    ours = [i for i, f in enumerate(frames) if f[0].startswith(package)]
    called = [f for f in frames[ours[-1] + 1:] if not _library(f[0])] if ours else []
    if not called or any(f[0].startswith(package) for f in called):
        return ""
    file, line, name = called[-1]
    return f"the reference: {os.path.basename(file)}, line {line}, in {name}"


def _isolation_level(config: pytest.Config, holder: _SandboxHolder | None) -> str:
    """The level the student's code ran under (or would have: no sandbox was started)."""
    if holder is not None and holder.level:
        return holder.level
    if config.getoption("--grading-isolation") != "namespaces":
        return "none"
    from ..isolation import level_when_available

    return level_when_available()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the Gradescope-schema results JSON (``--grading-results``); the requests' seconds are written nowhere
    more (``sandbox.charge_requests_to``)."""
    _write_results(session.config, int(exitstatus))
    if (sb := sys.modules.get("gradcheck.sandbox")) is not None:
        sb.write_requests_seconds()
        sb.charge_requests_to(None)


def _row(e: dict) -> dict:
    return result_row(e["name"], e["max_score"], e["visibility"], e["output"], e["status"],
                    e.get("score", round(e["max_score"] * e["fraction"], 4)))


def _write_results(config: pytest.Config, exitstatus: int | None) -> None:
    """Write the results JSON (``--grading-results``): at the end (``exitstatus``), and while the session
    runs (None: ``extra_data.complete`` false, a row per collected graded test, ``"status": "not run"``
    until it finished), so that a grading stopped for time still knows every test and its points. At the
    end, a collected test the session did not reach (stopped by a grader error) is a 0-point row out of
    its points."""
    path, results = config.getoption("--grading-results"), config.stash.get(_RESULTS, None)
    if not path or results is None:
        return
    partial, seed = config.stash[_PARTIAL], int(config.getoption("--grading-seed"))
    if exitstatus is None:
        done = {n: e for n, e in results.items() if "score" in e}
        tests = [_row(done[i.nodeid]) if i.nodeid in done else _row({**_entry(i), "fraction": 0.0, "status": "not run"})
                 for i in partial.get("collected", [])]
        data = {**placeholder_results("", seed), "tests": tests}
        default = float(config.getoption("--grading-timeout"))  # each test's limit per call, for runner._too_slow
        data["extra_data"]["call_limits"] = sorted({_marker_timeout(i) or default for i in partial.get("collected", [])})
        return write_json(Path(path), data)
    holder, grader_error = partial.get("holder"), partial.get("grader_error")
    # a graded test the session stopped before (a grader error) still counts its points (Gradescope's rule)
    unrun = ("Not graded: the autograder stopped before this test (a problem on the grader's side, not in "
             "your submission). Course staff have the details." if grader_error else
             "Not run: the grading session stopped before this test; score 0.")
    collected = partial.get("collected", [])
    ids = {i.nodeid for i in collected}
    tests = [_row(results[i.nodeid]) if i.nodeid in results else
             _row({**_entry(i), "fraction": 0.0, "status": "failed", "output": unrun})
             for i in collected] + [_row(e) for n, e in results.items() if n not in ids]
    # a grader error in a test shown later (hidden: they run after every visible one) leaves the visible rows and the
    # top-level output as they were, as runner._later_too_slow does for time (redteam29 F1: any grader error a
    # submission could cause in a hidden test told one bit of its input); otherwise 0 for every test, as the
    # gradebook says (a partial sum would look final)
    later = bool(grader_error and partial.get("grader_error_later"))
    if grader_error:
        tests = [t if later and t["visibility"] == "visible" else _not_counted(t) for t in tests]
    total = round(sum(t["score"] for t in tests), 4)
    max_total = round(sum(t["max_score"] for t in tests), 4)
    notes = list(holder.notes) if holder is not None else []
    summary = ["The autograder failed (a problem on the grader's side, not in your submission); your "
               "score is 0 for now and not final: you will be graded again. Course staff have the details."
               if grader_error and not later else visible_score(tests), *(f"Note: {n}" for n in notes)]
    out = placeholder_results("\n\n".join(summary), seed, complete=True)  # the schema's fields, as the runner's
    out.update(score=total, execution_time=math.ceil(time.time() - partial["started"]), test_output_format="md",
               tests=tests)
    extra = out["extra_data"]
    extra.update(max_score=max_total, notes=notes, isolation=_isolation_level(config, holder),
                 tests_imports=partial.get("imports", {}),
                 sandbox_starts=holder.starts if holder is not None else 0, pytest_exit_status=int(exitstatus),
                 hidden_sandbox_starts=holder.own_starts if holder is not None else 0,
                 import_failures={f: e.reason for f, (e, _) in holder.import_failures.items()} if holder is not None else {})
    if grader_error:
        extra.update(status="grader error", grader_error=grader_error)
    elif holder is not None:
        t0 = time.monotonic()
        extra["integrity"] = _integrity(holder)
        _charge(config, time.monotonic() - t0)
    write_json(Path(path), out)


def _not_counted(row: dict) -> dict:
    """A finished test's row in a grader error's results: 0 points (the score is not final), the output
    saying what it gave."""
    if row["status"] == "failed" and not row["score"]:
        return row
    return {**row, "score": 0.0, "status": "failed",
            "output": (f"Not counted: the autograder failed in another test, so this score is 0 for now; this "
                       f"test gave {row['score']:g} / {row['max_score']:g} before.\n\n" + row["output"]).strip()}


def _integrity(holder: _SandboxHolder) -> list[str]:
    """Report lines for staff on the submission's files (:func:`~gradcheck.grading.static.vendored_engines`:
    a copy of an autodiff engine under another name?); never a failure of the grading."""
    try:
        return vendored_engines(holder.files())
    except Exception as exc:  # noqa: BLE001 - a report, not the grade
        return [f"the files could not be compared with known autodiff engines ({type(exc).__name__})"]
