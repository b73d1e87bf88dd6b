"""A module fixture's files made once per test run, shared by the xdist workers (testtime38, session 38).

``--dist worksteal`` hands the tests of one module to both workers when one runs out of work, and each worker
then runs the module's fixture: in a run of ``tests/test_grading*.py`` of session 38,
``tests/test_grading_cs231n.py`` graded its whole batch twice (115 s and 190 s of setup on a loaded machine).
:func:`once_per_run` makes a fixture's folder once: the first worker makes it while holding a lock, a second one
waits for it and reads the same files. Only for a fixture whose tests read its files and never write them.
:func:`value_once_per_run` does the same for a fixture that returns objects (a batch's ``SubmissionResult`` list):
pickled into the folder by the worker that made it, each worker reads its own copy.
"""

import contextlib
import fcntl
import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any


def once_per_run(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``name`` of this test run, filled by ``make(folder)`` once (by the first xdist worker to ask; a
    worker asking while it is made waits for it). A ``make`` that raised leaves no folder: the next one to ask makes
    it again (the fixture's error is its own)."""
    base = tmp_path_factory.getbasetemp()  # an xdist worker's is <the run's>/popen-gwN
    run = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, done = run / f"shared-{name}", run / f"shared-{name}.done"
    with open(run / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released at the close, or when a worker dies holding it
        if not done.exists():
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(folder)  # what a worker that died midway left
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


def value_once_per_run(tmp_path_factory, name: str, make: Callable[[Path], Any]) -> Any:
    """:func:`once_per_run` for a fixture's value: ``make(folder)`` fills the folder and returns a picklable value,
    once per test run; every worker (the one that made it too) gets it unpickled from ``folder/value.pickle``, so
    none holds objects the others do not see."""
    def make_and_keep(folder: Path) -> None:
        (folder / "value.pickle").write_bytes(pickle.dumps(make(folder)))

    return pickle.loads((once_per_run(tmp_path_factory, name, make_and_keep) / "value.pickle").read_bytes())
