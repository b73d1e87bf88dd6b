"""pytest plugin for grading tests (registered as the ``pytest11`` entry point ``gradcheck-grading``).

An assignment's grading tests are ordinary pytest tests that use these markers
and fixtures::

    import pytest
    from manualprop import Linear as RefLinear

    pytestmark = pytest.mark.forbid_imports("autoprop", "autograd", "torch", "jax", "tensorflow")

    @pytest.mark.points(6)
    @pytest.mark.visibility("visible")
    @pytest.mark.timeout(3)
    def test_linear_gradients(student, grade, rng):
        "Linear: gradients dX, dW, db"
        layer = student.layer("layers.py", "Linear", in_features=5, out_features=3)
        X = rng.standard_normal((8, 5))
        grade.layer_gradients(layer, X, RefLinear(5, 3), parts={"dX": 2, "dW": 2, "db": 2})

Markers
-------
points(n)
    The test's points (default 1).
visibility(v)
    ``"visible"`` (default), ``"hidden"``, ``"after_due_date"`` or ``"after_published"``
    (Gradescope's values).
timeout(seconds)
    Wall-clock limit of each call into the student's code in this test (the
    sandbox's per-request timeout). ``--grading-timeout`` is both the default for
    tests without the marker and a cap for those with it.
forbid_imports(*modules)
    The submission's files may not import these modules (checked with :mod:`ast`
    before the test; the sandbox also refuses them at run time). A submission that
    does gets a clear message and no credit for the test.
gradcheck_no_forward_in_backward
    A staff policy, off by default: a layer's ``backward`` that calls its own ``forward``
    (e.g. central differences of forward: right numbers, no derivation) fails the test
    (counted in the sandbox; :meth:`~gradcheck.sandbox.Sandbox.load_layer`).

Fixtures
--------
student
    Loads classes from the submission into a :class:`~gradcheck.sandbox.Sandbox`
    (one per session, restarted after a timeout or crash; a file whose import timed
    out or crashed is not imported again, its later tests fail at once with that reason):
    ``student.layer(file, cls, **init)``, ``student.loss(file, cls, **init)``.
grade
    Applies :mod:`gradcheck.grading.checks` and records partial credit:
    ``grade.layer_gradients``, ``grade.layer_forward``, ``grade.loss_value``,
    ``grade.loss_gradient``, ``grade.backward_repeatable``, ``grade.dtypes``,
    ``grade.forward_keywords`` (what a function pair's forward wrote into ``bn_param``),
    ``grade.check(verdict)``, ``grade.note(text)``.
rng
    ``numpy.random.Generator`` seeded from ``--grading-seed`` and the test's id.
grading_seed
    The session's seed (recorded in the results).

Options
-------
``--grading-submission DIR``, ``--grading-results PATH`` (Gradescope-schema JSON
written at the end of the session), ``--grading-seed N``, ``--grading-timeout S``,
``--grading-memory-mb M``, ``--grading-isolation namespaces|none`` (the sandbox's
strength; ``extra_data.isolation`` of the results records the level reached).

A failing check's message is the checker's diagnosis (Markdown), never an
assertion dump: the report's ``longrepr`` is replaced by the message of a
:class:`~gradcheck.grading.checks.GradingFailure` or a
:class:`~gradcheck.errors.GradcheckError`. The plugin does nothing in a pytest
run that uses none of it (it is auto-loaded wherever gradcheck is installed).
"""

from __future__ import annotations

import json
import os
import stat
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .. import errors as _errors
from ..errors import GradcheckError
from . import checks as C
from .static import forbidden_imports, format_violations

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")

_MARKERS = (
    "points(n): points of this grading test (gradcheck.grading; default 1)",
    "visibility(v): Gradescope visibility: visible, hidden, after_due_date or after_published",
    "timeout(seconds): wall-clock limit of each call into the student's code (gradcheck.grading); "
    "also pytest-timeout's per-test limit when that plugin is active",
    "forbid_imports(*modules): the submission may not import these modules (gradcheck.grading)",
    "gradcheck_no_forward_in_backward: a backward that calls the layer's forward fails (gradcheck.grading)",
)

_RESULTS = pytest.StashKey[dict]()
_PARTIAL = pytest.StashKey[dict]()


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
                help="wall-clock limit of each call into the student's code: the default, and a cap "
                     "for tests marked timeout(seconds)")
    g.addoption("--grading-memory-mb", metavar="MIB", type=int, default=1024,
                help="memory limit of the sandbox process")
    g.addoption("--grading-isolation", choices=("namespaces", "none"), default="namespaces",
                help="namespaces: the student's code runs in bwrap's namespaces as a dedicated uid "
                     "(gradcheck.isolation); none: the process sandbox only (gradcheck grade's "
                     "--unsafe-no-isolation)")


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers and the results collector."""
    for line in _MARKERS:
        config.addinivalue_line("markers", line)
    config.stash[_RESULTS] = {}
    config.stash[_PARTIAL] = {"blocked": set(), "started": time.time(), "notes": []}
    if config.getoption("--grading-submission", None):
        from .runner import check_options  # the same rules as `gradcheck grade`'s options

        try:
            check_options(seed=config.getoption("--grading-seed"), timeout=config.getoption("--grading-timeout"))
        except GradcheckError as exc:
            raise pytest.UsageError(str(exc)) from None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    """Validate markers and gather every forbidden module (the sandbox blocks them all)."""
    for item in items:
        m = item.get_closest_marker("visibility")
        if m is not None and (not m.args or m.args[0] not in VISIBILITIES):
            raise pytest.UsageError(f"{item.nodeid}: visibility must be one of {VISIBILITIES}; got {m.args}.")
        p = item.get_closest_marker("points")
        if p is not None and (not p.args or not isinstance(p.args[0], (int, float)) or p.args[0] < 0):
            raise pytest.UsageError(f"{item.nodeid}: points(n) needs a number >= 0; got {p.args}.")
        for fm in item.iter_markers("forbid_imports"):
            config.stash[_PARTIAL]["blocked"].update(fm.args)


def _points(item: pytest.Item) -> float:
    m = item.get_closest_marker("points")
    return float(m.args[0]) if m is not None else 1.0


def _visibility(item: pytest.Item) -> str:
    m = item.get_closest_marker("visibility")
    return m.args[0] if m is not None else "visible"


def _display_name(item: pytest.Item) -> str:
    fn = getattr(item, "function", None)
    doc = (getattr(fn, "__doc__", None) or "").strip()
    return doc.splitlines()[0].strip() if doc else item.name


# --------------------------------------------------------------------------- fixtures


_IGNORED_DIRS = ("__MACOSX", "__pycache__")


def _visible(path: Path) -> bool:
    return not path.name.startswith(".") and path.name not in _IGNORED_DIRS


class SandboxStartFailure(Exception):
    """The sandbox could not start, before any of the student's code ran (the grader's setup failed)."""


def _grader_error(exc: BaseException | None) -> bool:
    """Is ``exc`` a failure of the grader, not of the submission?

    Then the test is not graded, the session stops and the results carry
    ``extra_data.grader_error`` (``gradcheck grade`` reports a grader error, exit 1).
    """
    other = getattr(_errors, "GraderError", None)  # the sandbox failed outside the student's code
    return isinstance(exc, SandboxStartFailure) or (other is not None and isinstance(exc, other))


class _SandboxHolder:
    """One sandbox per session for the submission; a fresh one after a timeout or crash.

    A file whose import timed out or crashed the sandbox is not imported again: the
    failure is recorded once (:attr:`import_failures`) and every later test that uses
    the file fails at once with the same reason, instead of costing one timeout each.
    """

    def __init__(self, config: pytest.Config, submission: Path):
        self.config = config
        self.submission = submission
        self.sandbox = None
        self.notes: list[str] = []
        self._root: Path | None = None
        #: Sandbox processes started in this session (``extra_data.sandbox_starts`` of the results).
        self.starts = 0
        #: file -> the SandboxError of its import that timed out or ended the sandbox process.
        self.import_failures: dict[str, Exception] = {}
        self._imported: set[str] = set()  # files imported in the current sandbox
        #: isolation level of the sandboxes started ("namespaces+uid", "namespaces", "none"); None: none started
        self.level: str | None = None
        self.refused: dict[str, str] = {}  # submitted paths not read (links, devices) -> why

    @property
    def root(self) -> Path:
        """The submission folder, or the one folder it holds when it has no .py files itself.

        A zip made by compressing a folder unpacks as ``hw1/layers.py``: when the top
        level holds no ``.py`` file and exactly one folder (descending at most 3 levels)
        that holds ``.py`` files, that folder is graded as the submission, with a note.
        """
        if self._root is None:
            root = self.submission
            for _ in range(3):
                entries = [c for c in root.iterdir() if _visible(c)]
                dirs = [c for c in entries if c.is_dir() and not c.is_symlink()]
                if any(c.is_file() and c.suffix == ".py" for c in entries) or len(dirs) != 1:
                    break
                root = dirs[0]
            if root != self.submission and any(c.is_file() and c.suffix == ".py" for c in root.iterdir()):
                rel = root.relative_to(self.submission).as_posix()
                self.notes.append(f"Your files were inside the folder `{rel}/` (as when a zipped folder is "
                                  f"unpacked); they were graded as if they were at the top level.")
            else:
                root = self.submission
            self._root = root
        return self._root

    def listing(self, limit: int = 12) -> list[str]:
        """Names of the submission's files, relative to the submission (hidden ones left out)."""
        out = []
        for path in sorted(self.submission.rglob("*")):
            rel = path.relative_to(self.submission)
            if path.is_file() and all(_visible(Path(p)) for p in rel.parts):
                out.append(rel.as_posix())
        return out if len(out) <= limit else [*out[:limit], f"... ({len(out) - limit} more)"]

    def require(self, file: str) -> None:
        """Raise a student-facing :class:`~gradcheck.grading.checks.GradingFailure` when ``file`` is missing."""
        file = os.path.normpath(file).replace("\\", "/")
        if file in self.files():
            return
        if file in self.refused:
            raise C.GradingFailure(f"Your submission's `{file}` was not read: it is {self.refused[file]}, and the "
                                   f"autograder never follows links (nor reads devices or pipes). Upload the file "
                                   f"itself.")
        if (self.root / file).is_file():
            raise C.GradingFailure(f"Your submission's `{file}` was not loaded: it is larger than 1 MiB (or "
                                   f"the submission has more than 200 .py files).")
        found = self.listing()
        similar = [f for f in found if f.rsplit("/", 1)[-1].lower() == file.rsplit("/", 1)[-1].lower()]
        shown = ", ".join(f"`{f}`" for f in found) if found else "no files at all"
        hint = (f"Name the file exactly `{file}` (the name is case-sensitive) and upload it at the top level of "
                f"the submission, not inside a folder.")
        if not similar:
            hint += " Did you upload the right file (a .py file, not a notebook or a zip)?"
        raise C.GradingFailure(f"Your submission has no `{file}` at its top level; found: {shown}. {hint}")

    def files(self) -> dict[str, str]:
        """``{relative name: path}`` of the submission's ``.py`` files, found with ``lstat``.

        Symbolic links (to files or folders), devices and pipes are never followed or read:
        they are recorded in :attr:`refused` with the reason (a link named ``layers.py``
        pointing at the solution gets a message, not the solution's score).
        """
        out: dict[str, str] = {}
        base = str(self.root)
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            rel_dir = os.path.relpath(dirpath, base)
            rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
            keep = []
            for d in sorted(dirnames):
                if d.startswith(".") or d == "__pycache__":
                    continue
                if os.path.islink(os.path.join(dirpath, d)):
                    self.refused[rel_dir + d] = "a symbolic link to a folder"
                    continue
                keep.append(d)
            dirnames[:] = keep
            for f in sorted(filenames):
                if f.startswith(".") or not f.endswith(".py"):
                    continue
                rel, path = rel_dir + f, os.path.join(dirpath, f)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISLNK(st.st_mode):
                    self.refused[rel] = "a symbolic link"
                elif not stat.S_ISREG(st.st_mode):
                    self.refused[rel] = "not a regular file"
                if rel in self.refused:
                    note = (f"`{rel}` was not read: it is {self.refused[rel]} (the autograder never follows "
                            f"links, nor reads devices or pipes).")
                    if note not in self.notes:
                        self.notes.append(note)
                elif st.st_size <= 1 << 20 and len(out) < 200:
                    out[rel] = path
        return dict(sorted(out.items()))

    def get(self, timeout: float):
        from ..sandbox import Sandbox, SandboxError

        sb = self.sandbox
        if sb is None or sb._dead:
            if sb is not None:
                sb.close()
            try:
                strong = self.config.getoption("--grading-isolation") == "namespaces"
                sb = Sandbox(files=self.files(), timeout=timeout,
                             memory_mb=self.config.getoption("--grading-memory-mb"),
                             session_timeout=max(120.0, 20 * timeout),
                             blocked_modules=sorted(self.config.stash[_PARTIAL]["blocked"]),
                             isolation="namespaces" if strong else "process", hostile=True)
            except SandboxError as exc:
                if exc.reason != "start":
                    raise
                self.sandbox = None
                raise SandboxStartFailure(str(exc)) from None
            for n in sb.notes:
                if n not in self.notes:
                    self.notes.append(n)
            self.level = sb.isolation_level
            self.sandbox = sb
            self.starts += 1
            self._imported = set()
        sb.timeout = float(timeout)
        return sb

    def imported(self, file: str, timeout: float):
        """The sandbox with ``file`` imported (:meth:`get`, then the import alone, once per sandbox).

        Raises
        ------
        SandboxError
            The import raised, timed out or ended the sandbox process; the last two are
            recorded and raised again, without running anything, for every later test.
        """
        from ..sandbox import SandboxError

        first = self.import_failures.get(file)
        if first is not None:
            raise SandboxError(f"{first} This happened when `{file}` was first imported, in an earlier test; it "
                               f"is not imported again (each attempt would fail the same way), so every test that "
                               f"uses `{file}` fails for this reason.", reason=first.reason)
        sb = self.get(timeout)
        if file not in self._imported:
            try:
                sb.import_file(file)
            except SandboxError as exc:
                if exc.reason in ("timeout", "signal", "exit"):
                    self.import_failures[file] = exc
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
        pytest.skip("grading tests need --grading-submission DIR (run them with `gradcheck grade`)")
    path = Path(value).resolve()
    if not path.is_dir():
        raise pytest.UsageError(f"--grading-submission {value!r} is not a folder.")
    return path


@pytest.fixture(scope="session")
def _gradcheck_sandboxes(pytestconfig: pytest.Config, submission_dir: Path):
    holder = _SandboxHolder(pytestconfig, submission_dir)
    pytestconfig.stash[_PARTIAL]["holder"] = holder
    yield holder
    holder.close()


class Student:
    """Loads the submission's classes for one test (the ``student`` fixture).

    Parameters
    ----------
    holder : _SandboxHolder
    item : pytest.Item
    """

    def __init__(self, holder: _SandboxHolder, item: pytest.Item):
        self._holder = holder
        self._item = item
        m = item.get_closest_marker("timeout")
        cap = float(item.config.getoption("--grading-timeout"))
        self.timeout = min(float(m.args[0]), cap) if m is not None and m.args else cap
        self._checked = False

    def _guard(self) -> None:
        if self._checked:
            return
        self._checked = True
        banned: list[str] = []
        for m in self._item.iter_markers("forbid_imports"):
            banned += list(m.args)
        if banned:
            files = list(self._holder.files().values())
            bad = forbidden_imports(files, banned, root=str(self._holder.root))
            if bad:
                raise C.GradingFailure(format_violations(bad, banned))

    @property
    def sandbox(self):
        """The session's :class:`~gradcheck.sandbox.Sandbox` (started on first use)."""
        self._guard()
        return self._holder.get(self.timeout)

    def _sandbox_with(self, file: str):
        self._holder.require(file)
        self._guard()
        return self._holder.imported(file, self.timeout)

    def layer(self, file: str, class_name: str, **init: Any):
        """``class_name(**init)`` from ``file`` of the submission, as a :class:`~gradcheck.sandbox.RemoteLayer`."""
        layer = self._sandbox_with(file).load_layer(
            file, class_name, init, seed=int(self._item.config.getoption("--grading-seed")),
            no_forward_in_backward=self._item.get_closest_marker("gradcheck_no_forward_in_backward") is not None)
        layer.init_kwargs = init  # the --init of gradcheck.grading.diagnosis.reproduce
        return layer

    def loss(self, file: str, class_name: str, **init: Any):
        """A loss from the submission, as a :class:`~gradcheck.sandbox.RemoteLoss`."""
        loss = self._sandbox_with(file).load_loss(file, class_name, init)
        loss.init_kwargs = init  # the --init of gradcheck.grading.diagnosis.reproduce
        return loss

    @property
    def output(self) -> str:
        """The tail of what the student's code printed so far in this session."""
        sb = self._holder.sandbox
        return sb.output if sb is not None else ""


@pytest.fixture
def student(request: pytest.FixtureRequest, _gradcheck_sandboxes: _SandboxHolder) -> Student:
    """Load the submission's classes in the sandbox (see :class:`Student`)."""
    return Student(_gradcheck_sandboxes, request.node)


class Grade:
    """Partial credit and diagnoses for one test (the ``grade`` fixture).

    Every method runs a check from :mod:`gradcheck.grading.checks`, records the
    earned fraction of the test's points and raises
    :class:`~gradcheck.grading.checks.GradingFailure` (Markdown message) when a
    part failed. The earned fraction of a test is the points-weighted share of
    passed parts over all parts checked in it so far.
    """

    def __init__(self, item: pytest.Item):
        self._item = item
        self.verdict = C.Verdict()
        self.notes: list[str] = []

    def check(self, verdict: C.Verdict) -> C.Verdict:
        """Record ``verdict``'s parts; raise when one failed (the test then ends with its diagnosis)."""
        self.verdict.parts += verdict.parts
        self.verdict.notes += verdict.notes
        self._item.stash[_FRACTION] = self.verdict.fraction
        if not verdict.passed:
            raise C.GradingFailure(self.verdict.markdown(), self.verdict.fraction)
        return verdict

    def note(self, text: str) -> None:
        """Add a Markdown remark shown with the test's result."""
        self.notes.append(text)


def _recorded(name: str):
    check = getattr(C, name)

    def method(self: Grade, *args: Any, **kwargs: Any) -> C.Verdict:
        return self.check(check(*args, **kwargs))
    method.__name__, method.__doc__ = name, f":func:`gradcheck.grading.checks.{name}`, recorded (partial credit per part)."
    return method


for _name in ("layer_forward", "forward_keywords", "layer_gradients", "loss_value", "loss_gradient",
              "backward_repeatable", "dtypes"):
    setattr(Grade, _name, _recorded(_name))


_FRACTION = pytest.StashKey[float]()
_GRADE = pytest.StashKey[Grade]()


@pytest.fixture
def grade(request: pytest.FixtureRequest) -> Grade:
    """Record partial credit and diagnoses for this test (see :class:`Grade`)."""
    g = Grade(request.node)
    request.node.stash[_GRADE] = g
    return g


# --------------------------------------------------------------------------- reports


def _message(exc: BaseException) -> str:
    if isinstance(exc, (C.GradingFailure, GradcheckError)):
        return str(exc)
    text = str(exc).strip()
    return f"The check stopped with {type(exc).__name__}" + (f": {text}" if text else ".")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Replace tracebacks of graded failures by their message; record score, points and visibility."""
    outcome = yield
    rep = outcome.get_result()
    results = item.config.stash.get(_RESULTS, None)
    if results is None:
        return
    graded = "student" in getattr(item, "fixturenames", ()) or "grade" in getattr(item, "fixturenames", ())
    exc = call.excinfo.value if call.excinfo is not None else None
    if rep.failed and exc is not None and isinstance(exc, (C.GradingFailure, GradcheckError)):
        rep.longrepr = str(exc)
    if not graded:
        return
    entry = results.setdefault(item.nodeid, {
        "name": _display_name(item), "max_score": _points(item), "visibility": _visibility(item),
        "status": "passed", "output": "", "fraction": 1.0, "skipped": False,
    })
    if rep.failed and _grader_error(exc):
        rep.longrepr = str(exc)
        item.config.stash[_PARTIAL].setdefault("grader_error", str(exc))
        faulty_test = isinstance(exc, C.GradingTestError)  # the test's own reference is wrong, not the grader's setup
        item.session.shouldstop = ("gradcheck: a test's reference is faulty" if faulty_test else
                                   "gradcheck: the grader failed before any submitted code ran")
        what = "this test is faulty" if faulty_test else "the autograder failed before running your code"
        entry.update(status="failed", fraction=0.0,
                     output=f"Not graded: {what} (a problem on the grader's side, not in your submission). "
                            "Course staff have the details.")
    elif rep.skipped and rep.when in ("setup", "call"):
        entry.update(status="failed", fraction=0.0, skipped=True,
                     output=f"Not graded: {rep.longrepr[-1] if isinstance(rep.longrepr, tuple) else rep.longrepr}")
    elif rep.failed and entry["status"] == "passed":
        frac = exc.fraction if isinstance(exc, C.GradingFailure) else 0.0
        entry.update(status="failed", fraction=frac, output=_message(exc) if exc is not None else str(rep.longrepr))
    if rep.when == "call" and rep.passed:
        g = item.stash.get(_GRADE, None)
        if g is not None and g.verdict.parts:
            entry["output"] = "All checked: " + ", ".join(f"`{p.name}`" for p in g.verdict.parts) + " ok."
        if g is not None and g.notes:
            entry["output"] = (entry["output"] + "\n\n" + "\n\n".join(g.notes)).strip()
    if rep.when == "teardown":
        score = round(entry["max_score"] * entry["fraction"], 4)
        entry["score"] = score
        props = [("points", entry["max_score"]), ("score", score), ("visibility", entry["visibility"])]
        item.user_properties += props
        rep.user_properties = [*rep.user_properties, *props]  # junitxml reads the teardown report's


def _isolation_level(config: pytest.Config, holder: _SandboxHolder | None) -> str:
    """The level the student's code ran under (or would have: no sandbox was started)."""
    if holder is not None and holder.level:
        return holder.level
    if config.getoption("--grading-isolation") != "namespaces":
        return "none"
    from ..isolation import level_when_available

    return level_when_available()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the Gradescope-schema results JSON (``--grading-results``)."""
    config = session.config
    path = config.getoption("--grading-results")
    results = config.stash.get(_RESULTS, None)
    if not path or results is None:
        return
    partial = config.stash[_PARTIAL]
    holder = partial.get("holder")
    tests = []
    for entry in results.values():
        score = entry.get("score", round(entry["max_score"] * entry["fraction"], 4))
        tests.append({
            "name": entry["name"], "score": score, "max_score": entry["max_score"],
            "status": entry["status"], "output": entry["output"], "output_format": "md",
            "visibility": entry["visibility"],
        })
    total = round(sum(t["score"] for t in tests), 4)
    max_total = round(sum(t["max_score"] for t in tests), 4)
    notes = list(holder.notes) if holder is not None else []
    seed = int(config.getoption("--grading-seed"))
    grader_error = partial.get("grader_error")
    summary = [f"Score: {total:g} / {max_total:g}."]
    if grader_error:
        summary = ["The autograder failed (a problem on the grader's side, not in your submission); this score "
                   "is not final. Course staff have the details."]
    summary += [f"Note: {n}" for n in notes]
    out = {
        "score": total,
        "execution_time": round(time.time() - partial["started"], 3),
        "output": "\n\n".join(summary), "output_format": "md", "test_output_format": "md",
        "stdout_visibility": "hidden", "visibility": "visible",
        "tests": tests,
        "extra_data": {"grader": "gradcheck", "complete": True, "seed": seed, "max_score": max_total,
                       "notes": notes, "isolation": _isolation_level(config, holder),
                       "sandbox_starts": holder.starts if holder is not None else 0,
                       "import_failures": {f: e.reason for f, e in holder.import_failures.items()}
                       if holder is not None else {},
                       "pytest_exit_status": int(exitstatus)},
    }
    if grader_error:
        out["extra_data"].update(status="grader error", grader_error=grader_error)
    tmp = f"{path}.tmp"
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=2)
    os.replace(tmp, path)
