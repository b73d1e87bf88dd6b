"""A pre-imported grader process that forks one fresh child pytest per submission of a batch.

``python -m pytest`` with numpy, pytest and gradcheck costs about 1 s of CPU per submission,
more than the checks. The zygote (one per grading process, with ``runner._child_env``) imports
them once and per request forks a child running ``pytest.main`` in its own session and log.
Nothing is reused across students; submitted code runs only in the sandbox the child starts.
The zygote holds no secret (no batch key) and reports each child's pid and exit status.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

__all__ = ["Zygote", "shared"]

#: Modules the zygote imports once (what a grading child imports anyway); missing ones skipped.
PRELOAD = ("numpy", "numpy.random", "pytest", "_pytest.junitxml", "gradcheck.grading.plugin",
           "gradcheck.grading.checks", "gradcheck.grading.diagnosis", "gradcheck.sandbox",
           "gradcheck.isolation", "gradcheck.check", "gradcheck.diagnose", "manualprop", "autoprop")

_SERVER = r"""# gradcheck zygote: forks one child pytest per submission
import contextlib, json, os, select, signal, sys
sys.path[:] = [p for p in sys.path if p]  # never the working folder
for _m in json.loads(sys.argv[1]):
    with contextlib.suppress(Exception):
        __import__(_m)
import gc, pytest
gc.collect()
gc.freeze()  # the imported modules stay shared with every child: no collection copies their pages
_wake_r, _wake_w = os.pipe()
os.set_blocking(_wake_w, False)
signal.set_wakeup_fd(_wake_w)
signal.signal(signal.SIGCHLD, lambda *a: None)
_kids = {}

def _say(msg):
    os.write(1, (json.dumps(msg) + "\n").encode())

def _child(req, sid_w):
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # (SIGPIPE stays ignored, as Python sets it)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C of a batch: pytest tears down
    code = 3
    try:
        os.setsid()
        os.close(sid_w)  # the zygote waits for this to report the pid: killpg(pid) reaches it from now
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

buf = b""
while True:
    ready, _, _ = select.select([0, _wake_r], [], [])
    if _wake_r in ready:
        os.read(_wake_r, 4096)
    while _kids:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        _say({"id": _kids.pop(pid), "exit": os.waitstatus_to_exitcode(status)})
    if 0 in ready:
        data = os.read(0, 1 << 16)
        if not data:  # the grader is gone: end what it started
            for pid in _kids:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
            os._exit(0)
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            req = json.loads(line)
            _sid_r, _sid_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(_sid_r)
                _child(req, _sid_w)
            os.close(_sid_w)
            os.read(_sid_r, 1)  # its own session exists before its pid is told: a stop can signal it
            os.close(_sid_r)
            _kids[pid] = req["id"]
            _say({"id": req["id"], "pid": pid})
"""


class _Child:
    """A forked grading child as the runner uses a :class:`subprocess.Popen`."""

    def __init__(self, log: str) -> None:
        self.pid, self.log, self.returncode = 0, log, None
        self.started, self.ended = threading.Event(), threading.Event()

    def poll(self) -> int | None:
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[bytes, None]:
        """Wait for the end (TimeoutExpired after ``timeout`` s); its log's last 16 kB. A child
        lost with the zygote ends with returncode -9."""
        if not self.ended.wait(timeout):
            raise subprocess.TimeoutExpired("grading child", timeout)
        self.returncode = -9 if self.returncode is None else self.returncode
        try:
            with open(self.log, "rb") as fh:
                fh.seek(max(0, os.fstat(fh.fileno()).st_size - 16000))
                return fh.read(), None
        except OSError:
            return b"", None


class Zygote:
    """The grader's end of the zygote, started with the child environment ``env`` (thread
    counts must be set before numpy loads): :meth:`spawn` one child pytest."""

    def __init__(self, env: dict[str, str]) -> None:
        self._home, self._env = tempfile.mkdtemp(prefix="gradcheck-zygote-"), dict(env)
        self._proc = subprocess.Popen([sys.executable, "-c", _SERVER, json.dumps(PRELOAD)],
                                      cwd=self._home, env=env, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      start_new_session=True, close_fds=True)
        self._lock, self._kids, self._next = threading.Lock(), {}, 0
        self._reader = threading.Thread(target=self._read, name="gradcheck-zygote", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        with self._proc.stdout as out:  # type: ignore[union-attr]  # closed at the zygote's end
            for line in out:
                msg = json.loads(line)
                with self._lock:
                    kid = self._kids.get(msg["id"]) if "pid" in msg else self._kids.pop(msg["id"], None)
                if kid is not None and "pid" in msg:
                    kid.pid = int(msg["pid"])
                    kid.started.set()
                elif kid is not None:
                    kid.returncode = int(msg["exit"])
                    kid.ended.set()
        with self._lock:  # the zygote died: its children are lost (no exit status)
            lost, self._kids = list(self._kids.values()), {}
        for kid in lost:
            kid.started.set()
            kid.ended.set()

    def spawn(self, args: list[str], cwd: str, log: str,
              env: dict[str, str] | None = None) -> _Child | None:
        """Fork a child running ``pytest.main(args)`` in ``cwd`` with environment ``env`` (default
        the zygote's), output to ``log``; None if the zygote is gone."""
        kid = _Child(log)
        with self._lock:
            if self._proc.poll() is not None:
                return None
            self._next += 1
            self._kids[self._next] = kid
            req = {"id": self._next, "args": args, "cwd": cwd, "log": log, "env": env or self._env}
            try:
                self._proc.stdin.write(json.dumps(req).encode() + b"\n")  # type: ignore[union-attr]
                self._proc.stdin.flush()  # type: ignore[union-attr]
            except (OSError, ValueError):  # its pipe is closed (close() ran) or broken
                self._kids.pop(self._next, None)
                return None
        kid.started.wait(30.0)
        return kid if kid.pid else None

    def close(self) -> None:
        try:
            self._proc.stdin.close()  # type: ignore[union-attr]
            self._proc.wait(timeout=5.0)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.kill()
            self._proc.wait()
        self._reader.join(5.0)  # it reads to the end of the zygote's output and closes the pipe
        shutil.rmtree(self._home, ignore_errors=True)


_shared: Zygote | None = None
_shared_lock = threading.Lock()


def shared(env: dict[str, str]) -> Zygote | None:
    """This process's zygote (started on first use, closed at exit); None without ``os.fork``."""
    global _shared
    if not hasattr(os, "fork"):
        return None
    with _shared_lock:
        if _shared is None or _shared._proc.poll() is not None:
            _shared = Zygote(env)
            atexit.register(_shared.close)
        return _shared
