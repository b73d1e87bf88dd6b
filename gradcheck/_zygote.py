"""The one zygote of gradcheck: a pre-imported process that forks one fresh child per request.

Two callers, one class: ``sandbox._zygote_for`` (each process-isolation sandbox child of ``gradcheck check``,
numpy and the adapters imported once: ``_sandbox_child.zygote``) and ``grading.zygote`` (one child pytest per
submission of a batch, pytest and gradcheck imported once). Both servers run ``_sandbox_child.fork_server``, the
one reply loop, over a SOCK_SEQPACKET socket: "ready", then per request a fork in a session of its own whose pid
is told once that session exists, then its exit status. What the two callers do differently is an option of
:class:`Zygote` (the command, the server's configuration, its home, the descriptors it inherits, when a child is
reaped, what a lost child becomes) or theirs (what the fork runs, what a child that did not start means).
Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading

from . import _tmpdirs

__all__ = ["Zygote", "ZygoteChild"]


class ZygoteChild:
    """A child forked by a :class:`Zygote`, used as a :class:`subprocess.Popen` is: ``pid`` (its session; 0 until
    told), ``returncode`` (``-n`` for signal n), :meth:`poll`, :meth:`wait`, :meth:`communicate` (its ``log``
    file's tail), :meth:`kill`, :meth:`kill_group`. ``lost``: its zygote ended before its exit was told. Under
    ``reap_on_release`` its pid stays its own until :meth:`release`, so signalling it never reaches another
    process."""

    def __init__(self, zygote: Zygote, rid: int, log: str | None = None) -> None:
        self._zygote, self._rid, self.log, self.pid, self.returncode, self.lost = zygote, rid, log, 0, None, False
        self.started, self.ended = threading.Event(), threading.Event()

    def poll(self) -> int | None:
        """The exit status told by the zygote (``-n`` for signal n), or None while it runs."""
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the end; :attr:`returncode` (None for a child lost with its zygote before its exit was told).

        Raises
        ------
        subprocess.TimeoutExpired
            When it has not ended after ``timeout`` seconds.
        """
        if not self.ended.wait(timeout):
            raise subprocess.TimeoutExpired(self._zygote.child_name, timeout)
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[bytes, None]:
        """Wait for the end (TimeoutExpired after ``timeout`` s); its log's last 16 kB. A child lost with the
        zygote ends with returncode -9."""
        self.wait(timeout)
        self.returncode = -signal.SIGKILL if self.returncode is None else self.returncode
        try:
            with open(self.log, "rb") as fh:  # type: ignore[arg-type]  # None: TypeError, no log
                fh.seek(max(0, os.fstat(fh.fileno()).st_size - 16000))
                return fh.read(), None
        except (OSError, TypeError):
            return b"", None

    def kill(self) -> None:
        """SIGKILL to the child; nothing when it is ``lost`` or its pid was never told (``pid`` 0, which
        ``os.kill`` would read as the caller's own process group)."""
        if not self.lost and self.pid > 0:
            os.kill(self.pid, signal.SIGKILL)

    def kill_group(self) -> None:
        """SIGKILL to the child's process group (its session: what it started too); nothing when it is ``lost``
        or its pid was never told (``os.killpg(0, ...)`` is the caller's own group)."""
        if not self.lost and self.pid > 0:
            os.killpg(self.pid, signal.SIGKILL)

    def release(self) -> None:
        """The child is gone (killed, its exit waited for) and its pid no longer used: the zygote may reap it."""
        self._zygote.release(self._rid)


class Zygote:
    """A pre-imported process (the server ``argv`` + ``cfg`` as JSON, running ``_sandbox_child.fork_server``) that
    forks one fresh child per :meth:`spawn`.

    Parameters
    ----------
    argv : list of str
        The server's command, before its configuration (the sandbox: ``python -I -S -B -c <_sandbox_child>``;
        the grader: ``python -c <grading.zygote._SERVER>``).
    cfg : dict
        The server's configuration; ``fd_sock`` (its end of the socket) and ``reap_on_release`` are added.
    env : dict
        Its environment (thread counts must be set before numpy loads); kept as :attr:`env`.
    name : str
        Its reader thread's name and its temporary folder's prefix (the server's working folder).
    fds : tuple of int
        More descriptors it inherits (the sandbox's adapters' code), closed here once it started.
    own_home : bool
        ``HOME`` and ``TMPDIR`` set to its folder (the sandbox's).
    reap_on_release : bool
        A child is reaped only when :meth:`release` d (the sandbox's: the pid it signals stays that child's);
        False: reaped when its exit is told (the grader's, which signals a child only before its exit).
    kill_lost : bool
        When the zygote dies, the children it still has are killed by their process groups and end with -9
        (the sandbox's); False: left running and ``returncode`` left None (the grader's runner stops them).
    child_name : str
        What a child is called in its :class:`subprocess.TimeoutExpired` ("sandbox child", "grading child").
    key : tuple, optional
        What its children's start depends on (the sandbox compares it to choose a zygote).
    """

    def __init__(self, argv: list[str], cfg: dict, env: dict[str, str], *, name: str, fds: tuple[int, ...] = (),
                 own_home: bool = False, reap_on_release: bool = True, kill_lost: bool = True,
                 child_name: str = "zygote child", key: tuple | None = None) -> None:
        self.key, self.env, self.owner, self.gone = key, dict(env), os.getpid(), False
        self._lock, self._kids, self._next = threading.Lock(), {}, 0
        self.reap_on_release, self.kill_lost, self.child_name = reap_on_release, kill_lost, child_name
        try:
            self._home = _tmpdirs.mkdtemp(f"{name}-")
            self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            cfg = {**cfg, "fd_sock": theirs.fileno(), "reap_on_release": reap_on_release}
            with theirs:
                self._proc = subprocess.Popen(
                    [*argv, json.dumps(cfg)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, cwd=self._home,
                    env={**env, "HOME": self._home, "TMPDIR": self._home} if own_home else env,
                    pass_fds=(theirs.fileno(), *fds), start_new_session=True, close_fds=True)
        except BaseException:
            if hasattr(self, "_sock"):
                self._sock.close()
            if hasattr(self, "_home"):
                _tmpdirs.remove(self._home)
            raise
        finally:  # the server has its copies
            for fd in fds:
                os.close(fd)
        self.ready = threading.Event()  # the server's imports done (or the zygote ended)
        self._reader = threading.Thread(target=self._read, name=name, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                msg = self._sock.recv(1 << 16)
            except OSError:
                msg = b""
            if not msg:
                break
            msg = json.loads(msg)
            if msg.get("ready"):
                self.ready.set()
                continue
            with self._lock:  # reaped at its exit (not reap_on_release): forgotten then
                kid = self._kids.get(msg["id"]) if "pid" in msg or self.reap_on_release else \
                    self._kids.pop(msg["id"], None)
            if kid is not None and "pid" in msg:
                kid.pid = int(msg["pid"])
                kid.started.set()
            elif kid is not None:
                kid.returncode = int(msg["exit"])
                kid.ended.set()
        with self._lock:  # the zygote is gone: its children, orphans now, are lost
            lost, self._kids, self.gone = list(self._kids.values()), {}, True
        self.ready.set()
        for kid in lost:
            if self.kill_lost:
                if kid.pid and not kid.ended.is_set():
                    with contextlib.suppress(OSError):
                        os.killpg(kid.pid, signal.SIGKILL)
                kid.returncode = -signal.SIGKILL if kid.returncode is None else kid.returncode
            kid.lost = True
            kid.started.set()
            kid.ended.set()

    def spawn(self, req: dict, fds: tuple[int, ...] = (), log: str | None = None) -> ZygoteChild | None:
        """Fork a child for the request ``req`` (a JSON object; its ``id`` is added) with the descriptors ``fds``
        passed; None when the zygote is gone before the request was sent. Else the child once its pid is told
        (its session exists), or after 30 s without it: then ``pid`` is 0 (perhaps forked all the same), or
        ``lost``; what that means is the caller's. ``log``: the file :meth:`ZygoteChild.communicate` reads."""
        with self._lock:
            if self.gone or self._proc.poll() is not None:
                return None
            self._next += 1
            kid = self._kids[self._next] = ZygoteChild(self, self._next, log)
            try:
                socket.send_fds(self._sock, [json.dumps({**req, "id": self._next}).encode()], list(fds))
            except OSError:  # closed (close() ran) or broken
                self._kids.pop(self._next, None)
                return None
        kid.started.wait(30.0)
        return kid

    def release(self, rid: int) -> None:
        """Forget child ``rid`` (:meth:`ZygoteChild.release`); under ``reap_on_release`` tell the zygote to reap it,
        so its pid is reused only now."""
        with self._lock:
            if self._kids.pop(rid, None) is not None and self.reap_on_release:
                with contextlib.suppress(OSError):
                    self._sock.send(json.dumps({"release": rid}).encode())

    def close(self) -> None:
        """End the zygote (it kills the children it still has) and remove its folder."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        try:
            self._proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(5.0)
        self._sock.close()
        _tmpdirs.remove(self._home)
