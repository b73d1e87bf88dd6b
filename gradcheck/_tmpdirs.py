"""The temporary folders gradcheck makes (``/tmp/gradcheck-*``), and the sweep of those a killed process left.

Each folder is made with a marker beside it, ``<folder>.owner``, naming the process that made it (its pid and its
start time, so a reused pid is not taken for it). ``kill -9`` of the grader runs no cleanup (tester22g: the
``gradcheck-grade-*`` and ``gradcheck-zygote-*`` folders were left), so :func:`sweep`, run when a ``gradcheck``
command starts, removes the folders whose maker has ended: only this user's, only with such a marker (a folder of
another user, or of an older gradcheck, is left alone), never a running process's, never through a link. The marker
sits beside the folder, not in it, so a sandbox's folder holds exactly the submission's files. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile

__all__ = ["TemporaryDirectory", "mkdtemp", "remove", "sweep"]

#: The names of gradcheck's folders in the temporary folder, and of their markers.
PREFIX, MARKER = "gradcheck-", ".owner"


def _started(pid: int) -> str:
    """The start time of process ``pid`` (field 22 of ``/proc/<pid>/stat``, clock ticks since boot), "" unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()[19].decode()
    except (OSError, IndexError, UnicodeDecodeError):
        return ""


def _alive(pid: int, started: str) -> bool:
    """Whether process ``pid`` still runs and is the one that started at ``started`` (when both are known)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    now = _started(pid)
    return not (now and started) or now == started


def mkdtemp(prefix: str) -> str:
    """:func:`tempfile.mkdtemp` with ``prefix`` (a ``gradcheck-`` name) and its marker naming this process; the
    folder's path. A marker that cannot be written leaves the folder as ``mkdtemp`` would (never swept)."""
    path = tempfile.mkdtemp(prefix=prefix)
    with contextlib.suppress(OSError):
        fd = os.open(path + MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(f"{os.getpid()} {_started(os.getpid())}\n")
    return path


def remove(path: str) -> None:
    """Remove a folder of :func:`mkdtemp` and its marker (what is already gone is no error)."""
    shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.unlink(path + MARKER)


class TemporaryDirectory:
    """``with TemporaryDirectory(prefix) as path``: :func:`mkdtemp`, then :func:`remove` at the end."""

    def __init__(self, prefix: str) -> None:
        self.name = mkdtemp(prefix)

    def __enter__(self) -> str:
        return self.name

    def __exit__(self, *exc: object) -> None:
        remove(self.name)


def sweep(tmp: str | None = None) -> list[str]:
    """Remove the folders of :func:`mkdtemp` in ``tmp`` (default the temporary folder) whose maker has ended, with
    their markers; the folders removed. Only this user's markers and folders, read without following links; a
    marker that cannot be read, or names a running process, is left."""
    tmp = tmp or tempfile.gettempdir()
    try:
        names = os.listdir(tmp)
    except OSError:
        return []
    uid, out = os.getuid(), []
    for name in names:
        if not (name.startswith(PREFIX) and name.endswith(MARKER)):
            continue
        marker = os.path.join(tmp, name)
        folder = marker[: -len(MARKER)]
        try:
            st = os.lstat(marker)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != uid:
                continue
            with open(marker, encoding="ascii") as fh:
                pid, _, started = fh.read().strip().partition(" ")
            if _alive(int(pid), started):
                continue
            st = os.lstat(folder)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == uid:
                shutil.rmtree(folder, ignore_errors=True)
                out.append(folder)
        except FileNotFoundError:  # the folder was removed, not its marker
            pass
        except (OSError, ValueError):
            continue
        with contextlib.suppress(OSError):
            os.unlink(marker)
    return out
