"""Shared pytest configuration: hypothesis profiles, the notebooks run first, a bytecode cache
for the processes the tests start.

``HYPOTHESIS_PROFILE=ci`` (set by ``.ci/run``) bounds every property test to 25
examples with no deadline; ``dev`` (the default) uses hypothesis' defaults.

The notebooks (nbmake items, 10-60 s each) are moved to the front of the run: collected
last, they reached ``pytest -n 2``'s workers at the end, and one worker ran them alone
while the other had finished. First, they run while the other worker takes the many short
tests, and the short tests at the end balance the two (``--dist worksteal``, Makefile).
"""

import os

import pytest
from hypothesis import settings

# hostile submissions (tests/test_grading_hostile.py) run only inside the grader's sandbox, never here
collect_ignore = ["hostile"]

settings.register_profile("ci", max_examples=25, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_collection_modifyitems(items):
    """Notebooks first, every other test in its collected order (the same on every worker)."""
    items.sort(key=lambda item: item.path.suffix != ".ipynb")  # a stable sort


@pytest.fixture(autouse=True, scope="session")
def _bytecode_cache_for_child_processes(tmp_path_factory):
    """The ``gradcheck`` processes the CLI tests start (hundreds) read our modules' bytecode from a
    cache outside the tree, written by the first of them, instead of compiling every module again:
    with ``PYTHONDONTWRITEBYTECODE`` set (as in CI) a start-up compiled gradcheck, manualprop and
    autoprop each time (0.3 s of CPU). ``PYTHONPYCACHEPREFIX`` puts the cache under this run's
    temporary folder (shared by the xdist workers), so the tree stays free of ``__pycache__`` as
    that setting asks. The grader's child pytest sets its own environment (no bytecode written)."""
    base = tmp_path_factory.getbasetemp()  # an xdist worker's is <the run's>/popen-gwN
    run = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPYCACHEPREFIX", str(run / "pycache"))
        mp.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        yield
