"""Shared pytest configuration: hypothesis profiles, the notebooks run first, a bytecode cache
for the processes the tests start.

``HYPOTHESIS_PROFILE=ci`` (set by ``.ci/run``) bounds every property test to 25
examples with no deadline; ``dev`` (the default) uses hypothesis' defaults.

The notebooks (nbmake items, 10-60 s each) are moved to the front of the run: collected
last, they reached ``pytest -n 2``'s workers at the end, and one worker ran them alone
while the other had finished. First, they run while the other worker takes the many short
tests, and the short tests at the end balance the two (``--dist worksteal``, Makefile).

The known-long tests (:data:`LONG_FIRST`) follow them, for the same reason: a 120 s module fixture that
starts late on one worker makes the run's tail (the other worker, its short tests done, can only
steal that module's remaining tests and run the fixture a second time). First in the order, they
start the first worker's share, and worksteal hands the short tests at the end of that share to the
other worker, so the run ends on short tests.
"""

import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

# hostile submissions (tests/test_grading_hostile.py) run only inside the grader's sandbox, never here; Deep Learning
# from Scratch's files (tests/test_dlfs*_s25.py check them through gradcheck) are two packages both named `common`,
# which --doctest-modules would import under one name (an import-path mismatch) and which hold no doctests; so is
# fixtures/steps_itself_s33/layers.py beside fixtures/mlfs_style/layers.py (a submission: it must be named layers.py)
collect_ignore = ["hostile", "fixtures/dlfs1", "fixtures/dlfs2", "fixtures/steps_itself_s33",
                  "fixtures/nielsen_s34",  # submissions named network.py, read by tests/test_nielsen_s34.py
                  "fixtures/grading_28_points"]  # grading tests (the plugin's fixtures) the bookkeeping tests grade

# gradcheck check's sandbox when a test gives no --isolation: the process sandbox (its zygote forks a child in about
# 0.1 s; the namespaces sandbox, check's "auto" default where bwrap works, starts in about 1 s more on this machine:
# about 900 checks would take 15 minutes longer). The tests of isolation give --isolation or clear this variable
# (tests/test_check_isolation_default_s37.py).
os.environ.setdefault("GRADCHECK_ISOLATION", "process")

# the grading child (gradcheck.grading.runner._child_env) and the console script import the gradcheck of this tree,
# not the editable install's: without this checkout first on PYTHONPATH, a test run from a git worktree graded with
# the main checkout's plugin and checks (review38: mutants of gradcheck/grading/plugin.py survived every grading test
# run from a worktree, and were killed with it)
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH", "")) if p)

settings.register_profile("ci", max_examples=25, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


#: Node-id prefixes of the longest tests (``make test --durations=30``, session 18: seconds of setup or
#: call on a quiet 2-core machine), longest first; a module with a module fixture is named whole, so its
#: tests stay together behind the fixture. A test missing here only runs in its collected place.
LONG_FIRST = (
    "tests/test_grading_hostile.py",  # 122 s: module fixture grading ~100 hostile submissions
    "tests/test_grading_cs231n.py",  # 45 s module fixture
    "tests/test_grading_dask.py",  # 44 s module fixture (a LocalCluster)
    "tests/test_cli_discovery.py::test_the_last_of_many_sub_layers_is_checked",  # 33 s + 8 s
    "tests/test_cli.py::test_zoo_passes_and_writes_plots",  # 30 s
    "tests/test_grading_signals_s14.py",  # 22 + 16 + 10 + 9 + 7 s
    "tests/test_grading_adversarial.py",  # 27 s module fixture
    "tests/test_buggy_layers.py",  # 24 s module fixture
    "tests/test_autoprop_peer.py::test_autograd_numpy_test_files_pass_through_the_adapter",  # 20 s
    "tests/test_autoprop_peer.py::test_autograd_linalg_scipy_fft_test_files_fail_only_where_listed",  # 30 s
    "tests/test_grading_hidden_inputs.py::test_a_branch_bug_is_caught_by_every_trial_on_every_seed",  # 3 x 20-25 s
    "tests/test_grading_hidden_inputs.py::test_the_solution_earns_every_hidden_point_on_every_seed",  # 20 s
    "tests/test_grading.py",  # 14 s module fixture, 12 s, 7 s
)


def _rank(item) -> tuple[int, int]:
    """Notebooks (0), then the :data:`LONG_FIRST` tests in its order (1, i), then the rest (2)."""
    if item.path.suffix == ".ipynb":
        return (0, 0)
    return next(((1, i) for i, p in enumerate(LONG_FIRST) if item.nodeid.startswith(p)), (2, 0))


#: Notebooks a test of ours executes too, each with that test: nbmake's item of the notebook is left out of a run
#: that collected the test, whose execution asserts what nbmake's does (the notebook runs to its end without an
#: error, on the project's kernel) and more (session 40: notebook 07 ran twice in a make test, nbmake's item and
#: test_exercises' ``solved`` fixture). A run without the test (``pytest notebooks``) keeps nbmake's item.
EXECUTED_BY = {"notebooks/07-exercises.ipynb": "tests/test_exercises.py::test_solution_passes_every_test"}


def pytest_collection_modifyitems(config, items):
    """Notebooks first, then the known-long tests, every other test in its collected order (the same
    order on every worker); a notebook's nbmake item left out where a test executes it (:data:`EXECUTED_BY`)."""
    ids = {item.nodeid for item in items}
    twice = [item for item in items if item.path.suffix == ".ipynb"
             and EXECUTED_BY.get(item.nodeid.partition("::")[0]) in ids]
    if twice:
        config.hook.pytest_deselected(items=twice)
        items[:] = [item for item in items if item not in twice]
    items.sort(key=_rank)  # a stable sort


@pytest.fixture(autouse=True, scope="session")
def _bytecode_cache_for_child_processes(tmp_path_factory):
    """The ``gradcheck`` processes the CLI tests start (hundreds) read our modules' bytecode from a
    cache outside the tree, written by the first of them, instead of compiling every module again:
    with ``PYTHONDONTWRITEBYTECODE`` set (as in CI) a start-up compiled gradcheck, manualprop and
    autoprop each time (0.3 s of CPU). ``PYTHONPYCACHEPREFIX`` puts the cache under this run's
    temporary folder (shared by the xdist workers), so the tree stays free of ``__pycache__`` as
    that setting asks. The grader's child pytest sets its own environment (it reads that cache and writes no
    bytecode), so what only it imports (pytest's own modules) is written once here, at the start
    (:func:`_warm_grading_bytecode`)."""
    base = tmp_path_factory.getbasetemp()  # an xdist worker's is <the run's>/popen-gwN
    run = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPYCACHEPREFIX", str(run / "pycache"))
        mp.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        # (a run that collected no test of the grader's never starts a grading child: nothing to write)
        warm = _warm_grading_bytecode(run / "pycache") if "gradcheck.grading" in sys.modules else None
        yield
    if warm is not None:  # (a run shorter than it: waited for, not left running)
        try:
            warm.wait(timeout=300)
        except subprocess.TimeoutExpired:
            warm.kill()
            warm.wait()


#: What a grading child imports, written into the run's bytecode cache once (:func:`_warm_grading_bytecode`): the
#: grading zygote's preload (gradcheck, manualprop, autoprop, numpy, scipy's parts) and pytest's own plugins, as the
#: zygote imports them (:mod:`gradcheck.grading.zygote`); by the first process to lock the cache's ``.warm.lock``
_GRADING_IMPORTS = """\
import contextlib, fcntl, os, sys
cache = os.environ["PYTHONPYCACHEPREFIX"]
os.makedirs(cache, exist_ok=True)
with open(os.path.join(cache, ".warm.lock"), "w") as lock:
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        sys.exit()  # another worker's is writing it
    if os.path.exists(os.path.join(cache, ".warm")):
        sys.exit()
    import _pytest.config, gradcheck.grading.zygote as z
    for m in [*z.PRELOAD, *("_pytest." + p for p in _pytest.config.default_plugins)]:
        with contextlib.suppress(Exception):
            __import__(m)
    open(os.path.join(cache, ".warm"), "w").close()
"""


def _warm_grading_bytecode(cache: Path) -> subprocess.Popen | None:
    """A process writing the bytecode of what a grading child imports into the run's cache ``cache``, once per run
    (the first xdist worker's; the other's ends at once), in the background, with the grading child's environment
    (:func:`gradcheck.grading.runner._child_env`) but writing bytecode. The grading children (each ``gradcheck grade``
    of one submission starts a fresh ``python -m pytest``, each worker's batches a zygote) only read that cache: each
    compiled pytest's modules, and until the CLI tests had written them numpy's, the standard library's and ours
    (1-2 s of CPU a child; the grading tests run first, :data:`LONG_FIRST`). Python writes each file whole (a
    temporary file renamed), so a child starting meanwhile reads a file or compiles it, as before. None where it
    cannot start."""
    from gradcheck.grading.runner import _child_env

    env = {**_child_env(), "PYTHONPYCACHEPREFIX": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        return subprocess.Popen([sys.executable, "-c", _GRADING_IMPORTS], env=env, cwd=str(cache.parent),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None


@pytest.fixture(autouse=True)
def _one_submission_forked_by_the_zygote(request, monkeypatch):
    """A submission graded alone in this process (``grade_submission``, ``gradcheck grade --single`` through
    ``run_here``, ``runner._run_child``) gets its child pytest from the grading zygote, as each submission of a batch
    does (:mod:`gradcheck.grading.zygote`: forked from a process that imported numpy, pytest and gradcheck once),
    instead of a fresh ``python -m pytest`` (:func:`gradcheck.grading.runner._pytest_child`): about 1 CPU-s of
    start-up less per grading (session 43: the 35 test files with such gradings, 330 -> 272 CPU-s at -n 0). What the
    child runs, its session, its limits, its sandbox and the runner's reading of its end are the same; what differs is
    only the process start, which the tests that run ``gradcheck grade`` as a command keep (tests/test_grading.py's
    ``python -m gradcheck grade``, test_grading_sigterm, test_grading_signals_s14, test_grading_child_sigint_s33: the
    fresh child and its SIGINT). A test marked ``fresh_grading_child`` gets the fresh ``python -m pytest`` in process
    (test_grading's zero-results-before-the-student's-code test)."""
    if request.node.get_closest_marker("fresh_grading_child") is None:
        from gradcheck.grading import runner, zygote

        fresh = runner._pytest_child

        def forked(args: list, cwd: Path, env: dict):
            z = zygote.shared(runner._child_env())  # (started as a batch starts it: env holds this grading's TMPDIR)
            kid = z and zygote.spawn(z, args, str(cwd), str(Path(cwd).parent / "pytest.log"), env)
            return kid or fresh(args, cwd, env)

        monkeypatch.setattr(runner, "_pytest_child", forked)
    yield


_TESTS = Path(__file__).resolve().parent
_HELPERS: list = []  # the generators of the helper modules (tests/*.py not named test_*), found once


def _generators(module) -> list:
    """``(name, generator)`` for each numpy generator (``Generator``, legacy ``RandomState``) at ``module``'s top level."""
    return [(k, v) for k, v in sorted(vars(module).items()) if isinstance(v, (np.random.Generator, np.random.RandomState))]


@pytest.fixture(autouse=True)
def _module_generators_reseeded(request):
    """Before each test, every numpy generator at the top level of its module and of the helper modules is seeded from
    the test's node id: a test draws the same values whichever tests ran before it in its xdist worker. Before, a
    module's ``R = np.random.default_rng(26)`` drawn from by many tests gave each one the draws left by the tests
    ``--dist worksteal`` had happened to give that worker first (session 27: test_autoprop_fix26t's block_diag
    gradient failed at 6.8e-10 against atol 1e-10 in one order only). Draws made at import (parametrized cases,
    module constants) are untouched; the generators keep their identity (their state is set, not replaced)."""
    if not _HELPERS:
        _HELPERS.extend(g for name, m in list(sys.modules.items()) if (f := getattr(m, "__file__", None))
                        and Path(f).parent == _TESTS and not Path(f).name.startswith(("test_", "conftest"))
                        for g in _generators(m))
        _HELPERS.append(("", None))  # found: not searched again
    module = getattr(request.node, "module", None)
    for name, gen in [*(_generators(module) if module is not None else []), *_HELPERS]:
        seed = zlib.crc32(f"{request.node.nodeid}::{name}".encode())
        if isinstance(gen, np.random.RandomState):
            gen.seed(seed)
        elif gen is not None:
            gen.bit_generator.state = type(gen.bit_generator)(seed).state



@pytest.fixture
def never_starved(monkeypatch):
    """A function: called (``never_starved()``) just before a call into the sandbox that loops, it makes the sandbox's
    ``/proc`` reading stand in as a process that has had all its CPU time (each reading 5 s more than the last), so
    the loop is stopped at its wall-clock limit as the submission's, never given the load's allowance (up to
    ``STARVED_FACTOR`` limits) and never reported as starved. For a test that bounds how long the stop takes: with
    the real reading a loaded or stalled machine stretches it, or reports the loop starved (a stall injector, 3 s in
    every 5: "importing loop.py was stopped at its time limit ... 0.13 s short"). The calls before it keep the real
    reading, so a correct call the load kept off the cores still gets its allowance. The real reading has its own
    tests (tests/test_sandbox_starved_s16.py)."""
    from gradcheck import sandbox

    used, real = [0.0], sandbox._tree_usage

    def had_its_cpu(pid):  # (the run-queue wait read as it is)
        used[0] += 5.0
        return used[0], True, real(pid)[2]

    return lambda: monkeypatch.setattr(sandbox, "_tree_usage", had_its_cpu)
