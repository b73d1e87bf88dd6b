"""Bootstrap of a sandbox child process (:mod:`gradcheck.sandbox`): standalone, stdlib and numpy only.

The parent runs this module's bytecode, read from an anonymous file by a one-line bootstrap
(``python -I -S -B -c <sandbox._BOOT> <its descriptor> <config JSON>``: no path into this repository, and no
argument near Linux's 128 KiB per argument), and imports it for the wire codec only: one encoder and
decoder for both sides. Once student code has run the child is untrusted: the parent validates all
it sends and decides everything. A frame is ``b"GCSB"``, a 4-byte header length, an 8-byte payload length (big-endian),
a JSON header and the payload: raw little-endian arrays (dtype from :data:`ALLOWED_DTYPES`), never
a pickle. What student code returns is sent as a copy of its plain base-class array or number.

The dtypes a reply may hold are the request's to say (``"reply_dtypes"``, default :data:`ALLOWED_DTYPES`, the real
ones): a forward of the complex step asks for :data:`COMPLEX_DTYPES` alone, so its reply carries complex128 and
nothing else, and every other reply carries no complex array. The child packs only those (anything else is
described as a ``"badarray"``, whose dtype the parent names) and the parent decodes only those
(:func:`decode`'s ``allowed``), so a real reply is never read as complex nor a complex one cast to real.
"""

import _lsprof
import _signal
import collections.abc
import dis
import functools
import gc
import itertools
import json
import linecache
import marshal
import os
import resource
import signal
import struct
import sys
import time
import types

MAGIC = b"GCSB"
#: Exit code of a child whose own bootstrap failed (not the submission's code): the parent says so.
INTERNAL_EXIT = 70
#: Exit code of a child in which the submission's code raised while the child waited for the next request (a signal
#: handler's, the only code of the submission's that runs then): :func:`_waiting_failure`'s line on stderr says what.
WAITING_EXIT = 71
ALLOWED_DTYPES = frozenset(("|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8"))
#: The dtypes of a complex-step forward (the parent's inputs, and all its reply may hold): complex128 alone.
COMPLEX_DTYPES = frozenset(("<c16",))
BLOCKED_PACKAGES = ("gradcheck", "manualprop", "autoprop")
#: The most axes of an array on the wire: numpy's own limit (NPY_MAXDIMS, 64 since numpy 2.0), so any array the
#: student's code makes crosses and is judged as what it is (redteam29 F3: 33 to 64 axes read as a forged frame)
MAX_NDIM = 64
MAX_DEPTH, MAX_NODES = 8, 200_000  # nesting and JSON values of one decoded frame
def _guard_tables():
    """``(forbidden events, ((event, why), ...), write events, ((path event, argument index), ...))``, built anew at
    each call: the audit hook keeps its own immutable copies in its closure. Tables in module globals were reached
    through the hook's frame (``tb.tb_frame.f_globals``, tester18g H3) and emptied, which let ctypes and gc in."""
    why = {
        "os.fork": "starting processes (os.fork)", "os.forkpty": "starting processes (os.forkpty)",
        "os.posix_spawn": "starting processes (os.posix_spawn)", "os.spawn": "starting processes (os.spawn*)",
        "subprocess.Popen": "starting processes (subprocess)", "pty.spawn": "starting processes (pty.spawn)",
        "os.exec": "replacing the process (os.exec*)", "os.system": "running shell commands (os.system)",
        "os.kill": "sending signals (os.kill)", "os.killpg": "sending signals (os.killpg)",
        "os.symlink": "creating links (os.symlink)", "os.link": "creating links (os.link)",
        **dict.fromkeys(("socket.__new__", "socket.connect", "socket.bind"), "network access (socket)"),
        "ctypes.dlopen": "loading C libraries (ctypes)", "ctypes.dlsym": "loading C symbols (ctypes)",
        "ctypes.call_function": "calling C functions (ctypes)",
        **dict.fromkeys(("ctypes.cdata", "ctypes.addressof"), "reading raw memory (ctypes)"),
        **dict.fromkeys(("gc.get_objects", "gc.get_referrers", "gc.get_referents"),
                        "inspecting the interpreter's objects (gc)"),
        # a trace or profile function can rebind the hook's closure through its frame's f_locals
        "sys.settrace": "tracing (sys.settrace)",
        "sys.addaudithook": "installing audit hooks", "resource.prlimit": "changing process limits (prlimit)",
    }
    write = frozenset({"os.mkdir", "os.remove", "os.rmdir", "os.rename", "os.chmod", "os.truncate", "os.utime",
                       "shutil.rmtree", "shutil.copyfile", "shutil.move"})
    path = {**dict.fromkeys(write | {"os.listdir", "os.scandir", "os.chdir"}, 0), "shutil.copyfile": 1,
            "shutil.move": 1}
    return frozenset(why), tuple(why.items()), write, tuple(path.items())


class ProtocolViolation(Exception):
    """A frame that breaks the wire format's rules (the parent stops a child that sends one)."""


class ReplyTooLarge(ProtocolViolation):
    """A frame of ``size`` bytes, more than the reader takes (``limit``) or than it could copy."""

    def __init__(self, size, limit, why=""):
        super().__init__(f"a reply of {size} bytes ({why or f'over the limit of {limit} bytes'})")
        self.size, self.limit = size, limit


def frame(header, payload=b""):
    """The bytes of one frame."""
    hb = json.dumps(header).encode("utf-8")
    return MAGIC + struct.pack(">IQ", len(hb), len(payload)) + hb + payload


def read_frame(read, max_header=8 << 20, max_payload=1 << 62):
    """``(header, payload)`` of the next frame (``read(n)``: n bytes, b"" at the end: EOFError);
    ProtocolViolation past the caps."""
    if not (head := read(16)):
        raise EOFError
    if head[:4] != MAGIC:
        raise ProtocolViolation("bytes that are not a reply")
    hlen, plen = struct.unpack(">IQ", head[4:])
    if hlen > max_header or plen > max_payload:
        raise ReplyTooLarge(hlen + plen, max_header if hlen > max_header else max_payload,
                            f"over the limit of {max_header} bytes of header" if hlen > max_header else
                            f"over the limit of {max_payload} bytes of arrays")
    header = json.loads(read(hlen).decode("utf-8"))
    try:
        return header, read(plen) if plen else b""
    except MemoryError as exc:  # its bytes read and dropped, so the next frame is read whole
        while plen > 0:
            if not (chunk := read(min(plen, 1 << 16))):
                raise EOFError from None  # the input ended inside the frame
            plen -= len(chunk)
        raise PayloadNotRead(header, exc) from None


class PayloadNotRead(Exception):
    """A frame whose arrays did not fit in memory (``error``, a MemoryError), read past: ``header`` was read."""

    def __init__(self, header, error):
        super().__init__(str(error))
        self.header, self.error = header, error


#: The id of the request being answered (the parent's ``"rid"``, unguessable), echoed in each of its frames: a frame
#: the submission writes into the reply pipe without it is detected, not taken for a reply (tester22g M3; reading it
#: from this process's memory is within "the child's word").
REQUEST = [None]

#: ``[(shape, dtype, nbytes)]`` of the result being copied for a reply (by :meth:`Packer.copy` or the adapters'
#: ``_copy``, :func:`note_copies`), None between copies: a MemoryError meanwhile is an oversized reply.
COPYING = [None]


def note_copies(np, AD):
    """Make the adapters' ``_copy`` (each copy of what the student's code returned) note its size in :data:`COPYING`."""
    copy = AD._copy

    def noted(v):
        if isinstance(v, np.ndarray):
            a = np.ndarray.view(v, np.ndarray)  # the base class: nothing the submission defines runs
            COPYING[0] = (list(a.shape), a.dtype.str, int(a.size) * a.itemsize)
        out = copy(v)
        COPYING[0] = None
        return out
    AD._copy = noted


def _equal(np, a, b):
    """``np.array_equal(a, b, equal_nan=True)`` of two plain arrays of one shape: numeric arrays of one dtype holding
    the same bytes are equal without it (a forward's parameters as the parent set them: the bytes it copied in; its
    comparison costs some 10 us an array, a forward of a 100-layer network 200 of them), any others compared by it."""
    return (a.dtype == b.dtype and a.dtype.kind in "biufc" and a.tobytes() == b.tobytes()) or \
        np.array_equal(a, b, equal_nan=True)


class Packer:
    """Collects the arrays of one frame into its payload; :meth:`encode` gives the JSON stand-ins."""

    def __init__(self, np, allowed=ALLOWED_DTYPES):
        self.np, self.parts, self.offset = np, [], 0  # offset: the payload's length so far
        self.allowed = frozenset(allowed)  # the dtypes this frame may carry (little-endian ``dtype.str``)

    def copy(self, a):
        """A copy of the plain array ``a`` for the reply, its size noted first (a MemoryError here is the reply's)."""
        COPYING[0] = (list(a.shape), a.dtype.str, int(a.size) * a.itemsize)
        return self.np.array(a, copy=True)

    def ref(self, arr):
        # the shape given: np.ascontiguousarray makes a 0-d array 1-d
        """Append ``arr``'s bytes (little-endian, C order) to the payload; return its JSON stand-in
        (``{"__nd__": True, "dtype", "shape", "offset", "nbytes"}``).

        Raises
        ------
        ValueError
            For an array whose dtype is not among :attr:`allowed` (by default boolean, integer or float).
        """
        np = self.np  # a plain array's shape read directly (np.shape's dispatch costs more than the rest of a small
        # array's packing); a subclass's through np.shape, as always
        a = np.ascontiguousarray(arr).reshape(arr.shape if type(arr) is np.ndarray else np.shape(arr))
        dt = a.dtype
        if dt.kind not in "biufc" or (little := dt.newbyteorder("<")).str not in self.allowed:
            raise ValueError(f"only numeric arrays cross the sandbox's pipe; got dtype {dt}")
        b = a.astype(little, copy=False).tobytes()
        self.parts.append(b)
        self.offset += len(b)
        COPYING[0] = None
        return {"__nd__": True, "dtype": little.str, "shape": list(a.shape), "offset": self.offset - len(b),
                "nbytes": len(b)}

    def encode(self, obj):
        """``obj`` as JSON-ready data: arrays as :meth:`ref` stand-ins, dicts (string keys) and
        lists/tuples item by item, numpy scalars as Python numbers, the rest as it is.
        """
        if isinstance(obj, self.np.ndarray):
            return self.ref(obj)
        if isinstance(obj, dict):
            return {str(k): self.encode(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [self.encode(v) for v in obj]
        return obj.item() if isinstance(obj, self.np.generic) else obj

    def payload(self):
        """bytes: the collected arrays, in the order :meth:`ref` took them."""
        return b"".join(self.parts)


def _laid_out(np, arrays, req):
    """``arrays`` with those at the request's ``fortran`` positions as Fortran-ordered copies and those at its
    ``strided`` positions as copies holding every other element of a buffer twice their size: the layout the parent's
    arrays had (the shared memory and the codec carry C order; verify40 H1, the check's memory-layout rerun). A copy is
    not the shared memory: a write into it is not seen, as that probe's forward is not the one judged for writes."""
    at, step = req.get("fortran") or (), req.get("strided") or ()

    def laid(i, a):
        if not isinstance(a, np.ndarray) or (i not in at and i not in step):
            return a
        if i in at:
            return np.asfortranarray(a) if a.ndim >= 2 else a
        buf = np.empty(2 * a.size, a.dtype)  # (the parent's gradcheck.sources.strided_copy)
        buf[1::2] = -0.5 - a.ravel()
        out = buf[::2].reshape(a.shape)
        out[...] = a
        return out
    return [laid(i, a) for i, a in enumerate(arrays)]


def decode(np, obj, payload, max_nodes=MAX_NODES, allowed=ALLOWED_DTYPES):
    """The header with its array stand-ins replaced by new arrays; ProtocolViolation past the rules.

    At most :data:`MAX_DEPTH` levels and ``max_nodes`` values; every stand-in is checked (dtype among
    ``allowed``, shape, size) before any array is built and no payload byte backs two arrays, so a frame
    never costs more memory than its own length.
    """
    spans, count = [], [0]

    def check(o, depth):
        count[0] += 1
        if count[0] > max_nodes or depth > MAX_DEPTH:
            raise ProtocolViolation("a reply nested too deeply or with too many values")
        if isinstance(o, dict) and o.get("__nd__") is True:
            dtype, shape, off, n = o.get("dtype"), o.get("shape"), o.get("offset"), o.get("nbytes")
            if type(dtype) is not str or dtype not in allowed:
                raise ProtocolViolation(f"an array of dtype {repr(dtype)[:40]}")
            if not (type(shape) is list and len(shape) <= MAX_NDIM and all(type(x) is int and x >= 0 for x in shape)):
                raise ProtocolViolation("an array with a malformed shape")
            if not (type(off) is int and type(n) is int and 0 <= off and off + n <= len(payload)
                    and n == np.dtype(dtype).itemsize * functools.reduce(int.__mul__, shape, 1)):
                raise ProtocolViolation("an array whose size does not match its shape")
            spans.append((off, n)) if n else None
        elif isinstance(o, (dict, list)):
            for v in (o.values() if isinstance(o, dict) else o):
                check(v, depth + 1)

    def build(o):
        if isinstance(o, dict) and o.get("__nd__") is True:
            dt = np.dtype(o["dtype"])
            return np.frombuffer(payload, dt, o["nbytes"] // dt.itemsize, o["offset"]).reshape(o["shape"]).copy()
        if isinstance(o, dict):
            return {k: build(v) for k, v in o.items()}
        return [build(v) for v in o] if isinstance(o, list) else o
    try:
        check(obj, 0)
        end = 0
        for off, n in sorted(spans):
            if off < end:
                raise ProtocolViolation("arrays that share payload bytes")
            end = off + n
        return build(obj)
    finally:  # the two recursive closures hold themselves and the payload in a cycle: without this, every frame's
        check = build = None  # payload lived until the cyclic collector ran (30 MiB per request of a 2000x2000 input)


def reply_dtypes(header):
    """The dtypes the reply to request ``header`` may hold: its ``"reply_dtypes"`` among :data:`ALLOWED_DTYPES` and
    :data:`COMPLEX_DTYPES`, else :data:`ALLOWED_DTYPES`."""
    asked = header.get("reply_dtypes")
    if type(asked) is not list:
        return ALLOWED_DTYPES
    return frozenset(d for d in asked if type(d) is str) & (ALLOWED_DTYPES | COMPLEX_DTYPES)


#: ``[autoprop.Tensor, autoprop.Tensor.numpy]`` once :meth:`Child.op_tape` ran (else empty). Its forward on Tensors
#: may leave gradcheck's own Tensors anywhere in the layer's state (a batch norm's running statistics in ``__slots__``,
#: an OrderedDict, a class attribute or a module global), so that later calls on numpy arrays return Tensors:
#: :func:`describe` sends their values, as the same code on numpy arrays computes them (verify49a F1), wherever the
#: statistics were stored. A student's numpy code makes no autoprop Tensor itself.
_TAPED: list = []


def describe(np, packer, value, depth=0):
    """A value returned by student code as plain data: an array, a scalar, None, a tuple, or another type.

    Only the value's base class is read (``np.ndarray.view``, ``float.__float__``), so nothing
    the submission's subclass defines runs or reaches the parent. An array whose dtype the reply may not hold
    (``packer.allowed``: a complex one in a real request, a real one in a complex-step forward's) is a
    ``"badarray"`` naming its dtype; a number is sent as float64, where the reply may hold it.
    """
    t = type(value)
    if _TAPED and t is _TAPED[0]:  # gradcheck's own Tensor, left in the layer's state by --tape: its value
        value = np.array(_TAPED[1](value), copy=True)
        t = type(value)
    if value is None:
        return {"kind": "none"}
    if issubclass(t, np.ndarray):
        a = np.ndarray.view(value, np.ndarray)
        if a.dtype.kind in "biufc" and a.dtype.newbyteorder("<").str in packer.allowed:
            return {"kind": "array", "type": t.__name__, "array": packer.ref(packer.copy(a))}
        return {"kind": "badarray", "type": t.__name__, "dtype": str(a.dtype), "shape": list(a.shape)}
    if (issubclass(t, (float, int)) and not issubclass(t, bool) or issubclass(t, np.generic)) and \
            "<f8" in packer.allowed:
        plain = (float.__float__(value) if issubclass(t, float) else int.__float__(value) if issubclass(t, int)
                 else np.ndarray.view(np.asarray(value), np.ndarray))
        if np.asarray(plain).dtype.kind in "biuf":
            return {"kind": "scalar", "type": t.__name__, "array": packer.ref(np.array(plain, dtype=np.float64))}
    if t in (tuple, list) and depth == 0:
        return {"kind": t.__name__, "length": len(value), "items": [describe(np, packer, v, 1) for v in value[:64]]}
    return {"kind": "other", "type": t.__name__}


def _realpath_of(lstat, readlink, getcwd, S_ISLNK):
    """``os.path.realpath`` from primitives captured at start-up (nothing the submission can patch)."""

    def is_link(path):
        try:
            return S_ISLNK(lstat(path).st_mode)
        except OSError:
            return False

    def realpath(path):
        todo = (path if path.startswith("/") else getcwd() + "/" + path).split("/")[::-1]
        out, links = [], 0
        while todo:
            c = todo.pop()
            if c == "..":
                out.pop() if out else None
            elif c not in ("", ".") and not is_link(cand := "/" + "/".join(out + [c])):
                out.append(c)
            elif c not in ("", "."):
                links += 1
                if links > 40:
                    return "/\x00too-many-links"
                target = readlink(cand)
                out = [] if target.startswith("/") else out
                todo.extend(target.split("/")[::-1])
        return "/" + "/".join(out)
    return realpath


def install_guards(cfg):
    """Block imports of the course packages and, by audit hook, access outside the allowed folders.

    The hook's decisions use primitives and immutable tables captured now, in its closure (no module global), and
    compare exact str/bytes only, so patching ``posixpath.abspath``, ``os.path.realpath``, builtins or this
    module does not change them, and trace and profile functions (which can rebind a closure through ``f_locals``)
    are refused. That raises the bar; it is no wall: code in the same interpreter can rewrite the hook's memory
    (numpy's ``__array_interface__`` makes an array over any address, with no audit event, and the hook's frame is
    reached from a refused call's traceback: redteam37 F2 switched the hook off so, in about 40 lines). The hook is
    defence in depth; the isolation is the operating system's (namespaces, a uid, a seccomp filter:
    :mod:`gradcheck.isolation`), in the grader and in ``gradcheck check`` where this machine has them.
    """
    import _stat
    import importlib.abc
    import posix
    allow = tuple(cfg.get("allow", ()))  # tape mode: autoprop/manualprop importable
    blocked = tuple(p for p in BLOCKED_PACKAGES if p not in allow) + tuple(cfg.get("blocked", ()))

    class _Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):  # noqa: ARG002
            if name.split(".")[0] in blocked:
                what = ("the course packages (gradcheck, manualprop, autoprop) are not available to checked or graded code"
                        if name.split(".")[0] in BLOCKED_PACKAGES else "this assignment does not allow it")
                raise ImportError(f"No module named {name!r} in gradcheck's sandbox: {what}.", name=name)
            return None
    sys.meta_path.insert(0, _Blocker())
    for name in [m for m in sys.modules if m.split(".")[0] in blocked]:
        del sys.modules[name]
    realpath = _realpath_of(posix.lstat, posix.readlink, posix.getcwd, _stat.S_ISLNK)
    _any, _str, _bytes, _int, _type = any, str, bytes, int, type
    work = realpath(cfg.get("writable") or cfg["workdir"])
    read_roots = tuple(realpath(p) for p in cfg["read_roots"]) + (work, realpath(cfg["workdir"]))
    deny_roots = tuple(realpath(p) for p in cfg["deny_roots"])
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def under(path, roots):
        return _any(path == r or path.startswith(r + "/") for r in roots)

    def allowed(path, write):
        t = _type(path)
        if t is _int:
            return True
        if t is _bytes:
            path = path.decode("utf-8", "surrogateescape")
        elif t is not _str or "\x00" in path:  # a path-like object could answer differently to hook and open()
            return False
        p = realpath(path)
        if under(p, deny_roots):
            return False
        if p in ("/dev/null", "/dev/urandom", "/dev/zero"):
            return not write or p == "/dev/null"
        return under(p, (work,) if write else read_roots)

    forbidden, reasons, write_events, path_pairs = _guard_tables()  # immutable, in this closure only
    path_events = frozenset(e for e, _ in path_pairs)
    getframe, _id = sys._getframe, id  # (the codes are the module's, alive as long as it is: their ids are theirs)
    profilers = frozenset(map(id, (counting_calls.__code__, _count_calls.__code__, Child.window.__code__)))

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            write = bool(mode and _any(c in mode for c in "wax+")) or bool((flags or 0) & write_flags)
            if not allowed(path, write):
                raise PermissionError(
                    f"the grading sandbox does not allow {'writing' if write else 'reading'} {path!r}: "
                    f"a submission may {'write only into its own folder' if write else 'read only its own files'}")
        elif event in forbidden:
            for e, why in reasons:
                if e == event:
                    raise PermissionError(f"the grading sandbox does not allow {why}")
        elif event in path_events:
            for e, i in path_pairs:
                path = args[i] if e == event and args else None
                if path is not None and not allowed(path, event in write_events):
                    raise PermissionError(f"the grading sandbox does not allow {event} on {path!r}")
        elif event == "sys.setprofile" and _id(getframe(1).f_code) not in profilers:  # only the counters'
            raise PermissionError("the grading sandbox does not allow profiling (sys.setprofile)")
    sys.addaudithook(hook)
    _refuse_threads()
    _cap_recursion()


#: The highest recursion limit a submission may set (``sys.setrecursionlimit``): Python 3.11's frames of Python
#: calls live on the heap, so a runaway recursion under a limit of 10**9 filled the 2 GiB memory limit, frame by frame,
#: and ran into the time limit (34 s) instead of ending as the RecursionError it is; deep recursions of C calls
#: overflow the C stack (``RLIMIT_STACK``: a SIGSEGV, reported as such) well before it. The limit asked for is kept
#: in ``RECURSION[0]`` for the message.
MAX_RECURSION = 100_000
RECURSION = [None]


def _cap_recursion():
    """Make ``sys.setrecursionlimit`` hold the limit at :data:`MAX_RECURSION` at most (a larger one is noted)."""
    setlimit = sys.setrecursionlimit

    def capped(limit):
        if type(limit) is int and limit > MAX_RECURSION:
            RECURSION[0] = limit
            limit = MAX_RECURSION
        return setlimit(limit)
    capped.__doc__ = setlimit.__doc__
    sys.setrecursionlimit = capped


#: Why a thread is refused, and what to write instead (Python 3.11 has no audit event for it).
THREADS_REFUSED = ("the grading sandbox does not allow starting threads (threading.Thread.start, "
                   "concurrent.futures' thread pools, _thread.start_new_thread): a submission runs in one "
                   "thread, with one process of its own (the operating system refuses any other: a seccomp filter "
                   "denies a new thread, RLIMIT_NPROC a new process). Do the "
                   "work in the calling thread: call the function directly instead of starting a thread or "
                   "pool for it")


def _refuse_threads():
    """Make every way of starting a Python thread raise PermissionError(:data:`THREADS_REFUSED`), so
    that a submission learns why, not the kernel's "can't start new thread". Only the words: the refusal is the
    seccomp filter's (:mod:`gradcheck._seccomp` denies ``clone`` with ``CLONE_THREAD``), which Python cannot undo
    (redteam26 L2: a fresh ``_thread`` from ``_imp.create_builtin`` bypasses these patches; :func:`_error` then
    adds the same words to the kernel's refusal)."""
    import _thread

    def refused(*args, **kwargs):  # noqa: ARG001
        raise PermissionError(THREADS_REFUSED)
    for name in ("start_new_thread", "start_new", "start_joinable_thread"):
        if hasattr(_thread, name):
            setattr(_thread, name, refused)
    threading = sys.modules.get("threading")  # bound _thread's function when it was imported
    if threading is not None:
        for name in ("_start_new_thread", "_start_joinable_thread"):
            if hasattr(threading, name):
                setattr(threading, name, refused)


def drop_privileges(cfg):
    """Become the dedicated uid (namespaces sandbox as root: no groups, no capabilities), set the limits.

    Runs first, so no submitted code ever runs with the grader's uid or without its limits
    (set here, not by the parent in a ``preexec_fn``, unsafe with threads). A failure is the
    bootstrap's own (exit ``INTERNAL_EXIT``).
    """
    drop = cfg.get("drop")
    if drop:
        uid, gid = int(drop["uid"]), int(drop["gid"])
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
            raise RuntimeError("could not drop to the sandbox's uid")
        with open("/proc/self/status") as fh:
            caps = [ln.split()[1] for ln in fh if ln.startswith(("CapEff", "CapPrm", "CapAmb"))]
        if any(int(c, 16) for c in caps):
            raise RuntimeError("capabilities left after dropping the uid")
    for res, soft, hard in cfg.get("limits") or ():
        try:
            resource.setrlimit(res, (soft, hard))
        except (ValueError, OSError):  # above this machine's hard limit: keep the lower one
            resource.setrlimit(res, (min(soft, resource.getrlimit(res)[1]), resource.getrlimit(res)[1]))


def install_seccomp(program_hex):
    """Install the grader's seccomp filter (``gradcheck._seccomp.program``, as hex) on this process: the process
    sandbox's, where no bwrap installs it (the namespaces sandbox's comes from bwrap). True when installed, False
    when this kernel or C library refuses (the process sandbox isolates nothing anyway), None without a filter."""
    if not program_hex:
        return None
    try:
        import ctypes
        prog = bytes.fromhex(program_hex)
        buf = ctypes.create_string_buffer(prog, len(prog))

        class Fprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
        fprog = Fprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
        libc = ctypes.CDLL(None, use_errno=True)
        # PR_SET_NO_NEW_PRIVS (required to install a filter without privileges), PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return libc.prctl(38, 1, 0, 0, 0) == 0 and libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0
    except Exception:  # noqa: BLE001 - no prctl (not Linux), no ctypes
        return False


def _frames(tb):
    """``[(filename, lineno, function)]`` of a traceback, outermost first, without reading source lines: a
    RecursionError's 100,000 frames cost 30 ms so, against 2.4 s through ``traceback.extract_tb``."""
    out = []
    while tb is not None:
        code = tb.tb_frame.f_code
        out.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return out


#: The name :func:`_getattr_probe` looks up: no layer has it.
_MISSING = "_gradcheck_no_such_attribute"


def _getattr_probe(obj, cname: str):
    """``(answers_all, raised)`` for a built object whose class defines ``__getattr__``: gradcheck looks up
    attributes a layer may lack (NumpyDL's ``connect_to``, ``params``, ``grads``, ``training``) with ``getattr(obj,
    name, default)`` and ``hasattr``, which catch AttributeError alone (Python's data model: ``__getattr__`` raises
    AttributeError for a missing name). ``raised``: the message when ``__getattr__`` raised another error for a
    missing name (newuser44 F3: ``return self.params[name]`` raised KeyError: 'connect_to', reported as
    "__init__ raised"); ``answers_all``: the message to give if the adapters then fail, when it returned a value for
    the missing name (newuser44 F4: they failed on the value, "an error of gradcheck"). ``(None, None)`` otherwise."""
    if getattr(type(obj), "__getattr__", None) is None:
        return None, None
    fix = (f"make {cname}.__getattr__ raise AttributeError for a name it does not serve (Python's data model: "
           "getattr(obj, name, default) and hasattr catch AttributeError alone), e.g. `try: return self.params[name]` "
           "`except KeyError: raise AttributeError(name) from None`")
    try:
        value = getattr(obj, _MISSING)
    except AttributeError:
        return None, None
    except BaseException as exc:  # noqa: BLE001 - the student's __getattr__
        what = _error(exc, "/nonexistent")
        return None, (f"{cname}.__getattr__ raised {what.get('type')}: {what.get('message')} when gradcheck looked up "
                      f"an attribute the layer does not have ({_MISSING!r}; after {cname}.__init__ returned, gradcheck "
                      "looks up the optional attributes of the layers it reads, such as NumpyDL's connect_to, params, "
                      f"grads and training): {fix}.")
    return (f"{cname}.__getattr__ answers every name (getattr(obj, {_MISSING!r}) returned a "
            f"{type(value).__name__}), so gradcheck, which looks up the optional attributes of the layers it reads "
            f"(params, grads, training, connect_to, ...), cannot tell which {cname} has: {fix}."), None


def _signature_text(kind, target):
    """``Name(signature)`` of a class to load, for messages; ``""`` for other kinds; the bare name where
    :func:`inspect.signature` cannot read it."""
    import inspect

    try:
        return f"{target.__name__}{inspect.signature(target)}" if kind == "class" else ""
    except (TypeError, ValueError):
        return target.__name__


def _public_methods(obj) -> list[str]:
    """The names of ``obj``'s public callables (a class's or an object's), sorted: the parent's reading of what it is.
    A property that raises (``output`` before forward has run: verify47a F6) is no method, and was no ``__init__``'s
    error."""
    return sorted(m for m in dir(obj) if not m.startswith("_") and callable(_quiet(getattr, obj, m, None)))


def _adapters_own(AD, exc, workdir):
    """Whether ``exc`` is an error of the adapters' own code, not of the submission's: a built-in exception raised
    in a module of gradcheck's package (its innermost frame: the adapters' or the switch reader's), with no frame of
    the submission's files in its traceback (redteam25 M2: a partial's missing ``__name__`` was reported as
    "affine.__init__() raised AttributeError"; corpus40 H1: a TypeError of the probe's switch reading was reported
    as "Wrapped.forward ... raised TypeError")."""
    try:
        frames = _frames(exc.__traceback__)
        work = os.path.realpath(workdir) + os.sep
        own = os.path.dirname(os.path.realpath(AD.build.__code__.co_filename)) + os.sep
        return (type(exc).__module__ == "builtins" and bool(frames)
                and os.path.realpath(frames[-1][0]).startswith(own)
                and not any(f and os.path.isabs(f) and os.path.realpath(f).startswith(work) for f, _, _ in frames))
    except BaseException:  # noqa: BLE001 - a traceback the submission forged: its own error
        return False


def _error(exc, workdir, limit=500):
    """The report of an exception: its class's name as a string, message (its first line, cut to ``limit``
    characters at a word's end: :func:`cut_at_word`), where in the submission."""
    try:
        msg = str.strip(str(exc))
    except BaseException:  # noqa: BLE001
        msg = "(the exception's message could not be printed)"
    syntax = isinstance(exc, SyntaxError)
    where, line, work, real = "", "", os.path.realpath(workdir) + os.sep, {}
    caller = caller_line = ""
    try:
        msg = str(exc.msg) if syntax and exc.msg else msg
        ours = []  # the submission's frames, innermost first: the first, and the one that called it
        for filename, lineno, func in reversed([] if syntax else _frames(exc.__traceback__)):
            if filename not in real:  # each file's path resolved once; a Cython frame's co_filename is relative
                # ("numpy/random/_common.pyx"): resolved against the sandbox's cwd it looked like ours (newuser38 F4)
                real[filename] = os.path.realpath(filename) if filename and os.path.isabs(filename) else ""
            fn = real[filename]
            if fn.startswith(work):
                ours.append((fn[len(work):], lineno, func, filename))
                if len(ours) == 2:
                    break
        if ours:
            rel, lineno, func, filename = ours[0]
            where, line = f"{rel}:{lineno} in {func}", linecache.getline(filename, lineno).strip()
        if len(ours) == 2 and (ours[1][2] == ours[0][2] or ours[1][0] != ours[0][0]):
            # a sub-layer's method (or another file's code) raised: its line may be right and the call wrong, a
            # model's backward walking its layers in forward order (newuser38 F3): the calling line is named too
            rel, lineno, func, filename = ours[1]
            caller, caller_line = f"{rel}:{lineno} in {func}", linecache.getline(filename, lineno).strip()
        if syntax and exc.filename:
            fn = os.path.realpath(exc.filename)
            rel = fn[len(work):] if fn.startswith(work) else os.path.basename(exc.filename)
            where, line = f"{rel}, line {exc.lineno}", (exc.text or "").strip()
    except BaseException:  # noqa: BLE001 - a traceback or attributes the submission forged
        pass
    name = type.__dict__["__name__"].__get__(type(exc))  # its own name: a metaclass cannot answer
    if isinstance(exc, RuntimeError) and msg.startswith("can't start new thread"):  # the filter's refusal
        msg = f"{_first_line(msg)}: {THREADS_REFUSED}"
    if isinstance(exc, RecursionError) and RECURSION[0] is not None:
        msg = (f"{_first_line(msg) if msg else 'maximum recursion depth exceeded'} (the sandbox holds the "
               f"recursion limit at {MAX_RECURSION}: the code asked sys.setrecursionlimit for {RECURSION[0]})")
    msg = _host_paths(msg)
    return {"type": name, "message": cut_at_word(_first_line(msg), limit) if msg else "", "where": where,
            "line": str(line)[:200], "syntax": syntax, "caller": caller, "caller_line": str(caller_line)[:200]}


def _host_paths(text):
    """``text`` with the interpreter's own folders named rather than shown (tester22g: a student read "cannot import
    name 'sigmoid_helper' from 'code' (/root/.pyenv/versions/3.11.7/lib/python3.11/code.py)"): the standard
    library's folder as ``<standard library>``, numpy's site folder as ``<site-packages>``, the interpreter's
    prefixes as ``<python>``; the longest first, each as written and resolved."""
    try:
        places = [(os.path.dirname(os.__file__), "<standard library>")]
        if (np := sys.modules.get("numpy")) is not None and getattr(np, "__file__", None):
            places.append((os.path.dirname(os.path.dirname(np.__file__)), "<site-packages>"))
        places += [(p, "<python>") for p in (sys.prefix, sys.base_prefix, sys.exec_prefix) if p]
        places += [(os.path.realpath(p), label) for p, label in places]
        for path, label in sorted(places, key=lambda pl: -len(pl[0])):
            if len(path) > 4 and path != os.sep:
                text = text.replace(path, label)
    except BaseException:  # noqa: BLE001 - a module or attribute the submission replaced: the text as it is
        pass
    return text


def cut_at_word(text, limit):
    """``text`` cut to at most ``limit`` characters at a word's end, `` ...`` after it (mid-word only when the
    last space comes before half of it: one long token); whole when it fits (corpus37 F4: the tape's reason
    ended "... a tensor of shape (2, 2, 7, 7) lef")."""
    if len(text) <= limit:
        return text
    head = text[:limit - 4]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:(") + " ..."


def _first_line(msg):
    """The first line of an exception's message: up to its first newline alone (``str.splitlines`` also ends a line
    at a vertical tab, form feed, file separators and U+0085, and a message holding one lost what followed, tester23g
    L6); the parent escapes the control characters (``sandbox._clean``)."""
    return msg.split("\n", 1)[0].rstrip("\r")


def _forward_codes(AD, obj):
    """The code objects of the student's forward (behind an adapter too), for the forward-in-backward count: the
    forward the grader calls (an instance attribute ``self.forward = self._fwd`` before the class's, redteam25 H1)
    and every class's ``forward`` over the MRO, each unwrapped by :func:`_callable_codes`."""
    inner = obj.obj if isinstance(obj, (AD.Adapted, AD.BoundLoss)) else obj
    fns = [_quiet(getattr, obj, "student_forward"), _quiet(getattr, inner, "forward")]
    if not isinstance(obj, AD.FunctionPair):
        fns += [_quiet(lambda c: vars(c).get("forward"), c) for c in _quiet(lambda: type(inner).__mro__) or ()
                if c is not object]
    codes = set()
    for f in fns:
        codes |= _callable_codes(f)
    return codes


def _callable_codes(f, depth=0):
    """The code objects a call of ``f`` runs first: a function's own (a ``functools.wraps`` wrapper's wrapped
    function's instead, not the wrapper's, which a decorator shares with every function it decorates), a bound
    method's or static/class method's ``__func__``, a ``functools.partial``'s ``func``, a callable object's
    ``__call__``. Nothing of the submission runs: attributes are read from the objects' and types' dicts."""
    if f is None or depth > 8:
        return set()
    t, d = type(f), _quiet(object.__getattribute__, f, "__dict__") or {}
    if "__wrapped__" in d:
        return _callable_codes(d["__wrapped__"], depth + 1)
    if t is types.FunctionType:
        return {f.__code__}
    if t in (types.MethodType, staticmethod, classmethod):
        return _callable_codes(f.__func__, depth + 1)
    if isinstance(f, functools.partial):
        return _callable_codes(functools.partial.func.__get__(f), depth + 1)
    call = next((vars(c)["__call__"] for c in t.__mro__ if "__call__" in vars(c)), None)
    return _callable_codes(call, depth + 1) if isinstance(call, types.FunctionType) else set()


#: Objects the child stops holding only under a counting profiler (:func:`_dropped`): its counters' profilers (which
#: hold the code objects they recorded, and those their constants), their records and the key caches' old entries.
#: Dropped after a seal, such an object could be the last reference to something of the submission's, whose
#: ``__del__`` or weakref callback would run where nothing counts (redteam34 M1-M3's kind); emptied at the start of
#: the next counted step instead (:meth:`Child.window`, :func:`counting_calls`), where what runs is counted.
_LATER = []
#: The key caches (:func:`_cached`): ``{id(code): (code, key)}``, the code held so that its id stays its own
_KEYS, _TEXTS = {}, {}


def _dropped():
    """Empty :data:`_LATER`; called under a counting profiler, which counts what the submission's finalizers run."""
    _LATER.clear()


def _cached(cache, code, make):
    """``make(code)``, kept in ``cache`` by ``id(code)``: looking a code object up never hashes it (a code's hash is
    its constants', and a constant added with ``code.replace`` can be any object: redteam34 M2, a ``__hash__`` that
    differentiated forward while the count looked its keys up after its profiler was removed). A full cache is put
    aside in :data:`_LATER`, not freed."""
    hit = cache.get(id(code))
    if hit is not None and hit[0] is code:
        return hit[1]
    if len(cache) >= 4096:
        _LATER.append(dict(cache))
        cache.clear()
    key = make(code)
    cache[id(code)] = (code, key)
    return key


def _text(s):
    """A code object's name or file (a ``str`` subclass, given to ``code.replace``) as a plain ``str``, read by
    ``str``'s own slicing: none of its methods runs."""
    return str.__getitem__(s, slice(None))


def _const_key(c):
    """A constant of a code object as plain data compared by value: ``(type name, value)`` for the constants a
    compiler makes (an exact ``str``, ``bytes``, ... ; a float's or complex's ``repr``, an int's ``hex``), tuples and
    frozensets item by item, a code object's :func:`code_key`; any other object (only ``code.replace`` puts one
    there) is ``("object",)``. Nothing of the constant's own runs (no ``__hash__``, ``__eq__``, ``__repr__``)."""
    t = type(c)
    if t is types.CodeType:
        return code_key(c)
    if t is tuple or t is frozenset:
        return t.__name__, tuple(_const_key(x) for x in c)
    if t is float or t is complex:
        return t.__name__, repr(c)
    if t is int:  # (in hex: a decimal repr past 4300 digits raises, and dis writes the keys' repr)
        return "int", hex(c)
    if t in (str, bytes, bool, type(None), type(Ellipsis)):
        return t.__name__, c
    return ("object",)


def _consts(code):
    """``code.co_consts`` (a tuple subclass, given to ``code.replace``) item by item through ``tuple``'s own methods,
    each as :func:`_const_key` has it."""
    consts = code.co_consts
    return tuple(_const_key(tuple.__getitem__(consts, i)) for i in range(tuple.__len__(consts)))


def code_key(code):
    """A code object's bytecode, names, constants and arguments' count: a copy of forward's (tester21g M2) has its key.
    Plain data (:func:`_const_key`: hashing and comparing keys runs nothing of the submission's), kept per code
    (:func:`_cached`): the count runs around every forward under the staff policy."""
    return _cached(_KEYS, code, lambda c: (bytes.__getitem__(c.co_code, slice(None)), _consts(c),
                                           tuple.__getitem__(c.co_names, slice(None)), c.co_argcount,
                                           c.co_kwonlyargcount))


def _where(code):
    """Where a code object was compiled: its file, qualified name and first line, as plain strings (:func:`_text`).
    ``code.replace`` (or ``types.CodeType``) keeps them unless told otherwise."""
    return (_text(code.co_filename), _text(getattr(code, "co_qualname", code.co_name)),  # 3.10: no co_qualname
            code.co_firstlineno)


def _text_key(code):
    """What a copy of a code object made with ``code.replace`` keeps whatever its place and unused constants: its
    bytecode, the constants the bytecode loads (in order; not the tuple, to which a copy may add), its names and
    variable names, its arguments' count and its line table (relative to its first line, with columns on 3.11+: the
    layout of the text it was compiled from). Code compiled from other text (a helper of backward, even one whose
    bytecode is forward's: ``x ** 2`` beside ``x ** 3``) has another. Read by ``dis`` from a copy whose constants are
    their :func:`_const_key` and whose other fields are plain ``str``/``bytes``/``tuple`` (``dis`` calls ``repr`` on
    constants and iterates the exception table), kept per code (:func:`_cached`)."""
    return _cached(_TEXTS, code, _read_text)


def _read_text(code):
    """:func:`_text_key` computed."""
    plain = {"co_consts": _consts(code), "co_names": tuple.__getitem__(code.co_names, slice(None)),
             "co_filename": _text(code.co_filename), "co_name": _text(code.co_name),
             "co_linetable": bytes.__getitem__(code.co_linetable, slice(None))}
    if hasattr(code, "co_qualname"):  # 3.11+
        plain.update(co_qualname=_text(code.co_qualname),
                     co_exceptiontable=bytes.__getitem__(code.co_exceptiontable, slice(None)))
    safe = code.replace(**plain)
    loaded = tuple(i.argval for i in dis.get_instructions(safe) if i.opcode in dis.hasconst)
    return (safe.co_code, loaded, safe.co_names, safe.co_varnames, code.co_argcount, code.co_kwonlyargcount,
            safe.co_linetable)


def forward_keys(codes):
    """``key(code)``: the key :func:`counting_calls` counts a code object under: its :func:`code_key`, or, for a
    code object of another key compiled where one of ``codes`` (forward's) was (:func:`_where`) or with its text
    (:func:`_text_key`), that one's key: a modified copy of forward's code (redteam26 L1:
    ``forward.__code__.replace(co_consts=... + ("pad",))``, one extra constant, another code key, the same
    arithmetic; review28g L1: also ``co_firstlineno=...`` or ``co_qualname=...`` replaced) is forward's. No other code
    has forward's file, qualified name and first line, nor its bytecode, loaded constants, names and line table
    together, so no honest helper is counted (a self-adjoint backward has its own line). A copy whose line table or
    bytecode is replaced as well is code written anew, which no key tells from a helper."""
    keys = {code_key(c) for c in codes}
    at = {_where(c): code_key(c) for c in codes}
    text = {_text_key(c): code_key(c) for c in codes}
    # a text key holds its code's argument counts and line table as they are (_read_text): a code whose three match
    # none of forward's has no text key of forward's, and is not read by dis (most of the codes a count records:
    # numpy's, the child's own; their text keys were most of the sandbox's CPU time under the staff policy)
    shapes = {t[4:] for t in text}

    def key(code):
        k = code_key(code)
        if k in keys:
            return k
        found = at.get(_where(code))
        return found or (text.get(_text_key(code), k) if _shape_key(code) in shapes else k)
    return key


def _shape_key(code):
    """The last three items of :func:`_text_key` (the argument counts and the line table as plain ``bytes``), read
    without ``dis``: a code's text key can equal another's only where these do."""
    return code.co_argcount, code.co_kwonlyargcount, bytes.__getitem__(code.co_linetable, slice(None))


#: What :func:`counting_calls` uses, taken before any submission runs (a patched ``sys.getprofile`` is not read)
_COUNTER = (_lsprof.Profiler, sys.getprofile)
#: ``gc.collect`` and ``gc.disable`` as they were before any submission ran (:meth:`Child.counted_request`)
_GC = (gc.collect, gc.disable)
#: The profiler of the request :meth:`Child.counted_request` runs (None between requests): it records what runs
#: between the request's counted steps, and :func:`counting_calls` pauses it while its own profiler runs
_GAP = [None]
#: ``pthread_sigmask`` (``_signal``'s: ``signal``'s turns the old mask's numbers into enums, 0.2 ms for all of them),
#: the mask before any submission ran, no signal blocked (set by :func:`_run`), and every signal (:func:`_seal`,
#: :func:`_unseal`)
_SIG = (_signal.pthread_sigmask, (), tuple(int(s) for s in signal.valid_signals()))


def _seal():
    """Called under a counting profiler just before it is removed (the end of a :meth:`Child.window`, of
    :func:`_count_calls`, a pause of the window by :func:`counting_calls`): every signal blocked (the handlers already
    due run now, under the profiler still installed, so counted) and the collector's automatic runs off (a submission
    that switched them on cannot have its finalizers run by an allocation of the grader's). Until :func:`_unseal`
    under the next profiler, no submitted code can run (redteam33 S2: a timer's handler that took central differences
    of forward while no profiler was installed; S4: a cycle's ``__del__`` collected there). The mask is the thread's:
    it holds because the child runs one thread (its seccomp filter refuses threads, its BLAS runs one), so no other
    thread takes the signal. A handler's exception is dropped (it interrupted no code of the submission)."""
    for _ in range(4):  # the mask is set before the due handlers run: a second call only runs those left
        try:
            _SIG[0](signal.SIG_BLOCK, _SIG[2])
            break
        except BaseException:  # noqa: BLE001,S112 - the submission's handler raised
            continue
    _GC[1]()


def _unseal():
    """The signal mask as it was before any submission ran (:func:`_seal`); called under the next profiler, which
    counts the handlers of the signals that came meanwhile (they run now). A handler's exception is dropped."""
    for _ in range(4):
        try:
            _SIG[0](signal.SIG_SETMASK, _SIG[1])
            break
        except BaseException:  # noqa: BLE001,S112 - the submission's handler raised
            continue


def _counter_mark():
    """Called once by :func:`counting_calls` under its profiler before backward: its record gone means cleared."""


def held_forwards(root, limit=10000):
    """``{code_key: k}``: for each forward code, the ``k`` distinct objects of ``root``'s tree (``root``, its instance
    attributes, the items of its lists, tuples and dicts, and theirs, as far as ``limit`` objects) whose forward it is
    (the instance's own, else the first class's over the MRO) and that are ``root``, containers (:func:`_containers`)
    or of a class that is not ``root``'s, nor a base or subclass of it (a template ``Module.forward`` its subclasses
    ``Model`` and ``Linear`` share). Read when an object is loaded, before any forward runs: a container holding another
    container of its own class (a ``Sequential`` in a ``Sequential``, at any depth) calls forward's code once per such
    object it holds, which :func:`counting_calls` allows (fixr30's leftover: that was counted as a re-entry); an object
    made later (a copy of itself made in forward) is no such object, nor is one of ``root``'s class (or a subclass)
    that holds no layer of another forward of its own (redteam34 B1: a Linear keeping bare instances of itself,
    ``object.__new__(Linear)``, re-entered its forward on one per perturbation; a shallow copy's children are the
    original's). Modules, classes and functions are
    not entered; attributes are read from the objects' dicts."""
    layers, mro = _containers(root, limit), type.__dict__["__mro__"].__get__
    found, rt = {}, type(root)
    for keys, up, holds, t in layers:
        for k in keys if up is None or holds or t not in mro(rt) and rt not in mro(t) else ():  # (None: root)
            found[k] = found.get(k, 0) + 1
    return found


def _containers(root, limit):
    """``[[forward keys, parent, holds, type], ...]``: the objects with a forward of ``root``'s tree (as
    :func:`held_forwards` walks it, breadth first, each object once: where it is first reached), each with its nearest
    such ancestor's index (None: ``root`` itself, -1: none) and whether a forward of other code lies under it (a
    container: a layer of another class reached first through it, at any depth)."""
    layers, seen, todo, at = [], set(), [(root, -1, True)], 0
    leaves = (type, types.ModuleType, types.FunctionType, types.MethodType, str, bytes, int, float, complex,
              type(None))
    while at < len(todo) and len(seen) < limit:
        o, up, top = todo[at]
        todo[at], at = None, at + 1
        t = type(o)
        if id(o) in seen or issubclass(t, leaves):
            continue
        seen.add(id(o))
        if issubclass(t, (list, tuple)):
            seq = list if issubclass(t, list) else tuple
            todo += [(seq.__getitem__(o, i), up, False) for i in range(min(seq.__len__(o), limit))]
            continue
        if issubclass(t, dict):
            todo += [(v, up, False) for v in itertools.islice(dict.values(o), limit)]
            continue
        d = _quiet(object.__getattribute__, o, "__dict__")
        if type(d) is not dict:
            continue
        f = d.get("forward") or next((vars(c)["forward"] for c in t.__mro__ if "forward" in vars(c)), None)
        keys = frozenset(code_key(c) for c in _callable_codes(f))
        if keys:
            layers.append([keys, None if top else up, False, t])
            up = len(layers) - 1
            j = layers[up][1]
            while j is not None and j >= 0:  # each container above a layer of another forward holds one
                layers[j][2] = layers[j][2] or layers[j][0] != keys
                j = layers[j][1]
        todo += [(v, up, False) for v in itertools.islice(dict.values(d), limit)]
    return layers


def _student_methods(AD, obj):
    """``(forward, backward, direct)`` for :func:`counting_calls`: the student's forward the grader's call of
    ``obj.forward`` runs, and the backward its call of ``obj.backward`` enters: behind an adapter, the student's
    function or method the adapter calls once per call (a CS231n pair's ``student_forward``/``student_backward``, an
    adapted layer's or loss's own), ``direct`` False; else ``obj``'s own, ``direct`` True (called by the grader)."""
    if isinstance(obj, AD.FunctionPair):
        return obj.student_forward, obj.student_backward, False
    inner = obj.obj if isinstance(obj, (AD.Adapted, AD.BoundLoss)) else obj
    return _quiet(getattr, inner, "forward"), _quiet(getattr, inner, "backward"), inner is obj


def _module_codes(mod):
    """The code objects of module ``mod``'s functions and of its classes' methods (properties' too), nested ones
    included (a ``def forward`` inside an adapter's function): by identity, so that a submission's code is never
    among them, whatever its ``co_filename`` says."""
    out, todo = set(), []
    for v in list(vars(mod).values()):
        members = [v] if not isinstance(v, type) or v.__module__ != mod.__name__ else list(vars(v).values())
        for m in members:
            m = m.fget if isinstance(m, property) else getattr(m, "__func__", m)
            if isinstance(m, types.FunctionType) and m.__module__ == mod.__name__:
                todo.append(m.__code__)
    while todo:
        c = todo.pop()
        if c not in out:
            out.add(c)
            todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return out


def _forward_student(AD, obj):
    """``(forward, forward, direct)`` for :func:`counting_calls` around a call of ``obj.forward``: the student's forward
    is both what the count looks for and the entry the grader's call makes (:func:`_student_methods`)."""
    forward, _, direct = _student_methods(AD, obj)
    return forward, forward, direct


def _no_backward(enter, name):
    """The adapters' step hook (``on_step``: the probe's forward and backward calls, ``enter``) of a load whose probe
    must not run backward (``skip_backward``: it hung or crashed an earlier probe): each backward it would call
    raises instead, read as a backward that raises is (its gradients unknown; forward and its weights read alone)."""
    enter(name)
    if name == "backward":
        raise RuntimeError("not run: this backward did not finish when the grader's probe called it before")


def _entry_chain(f, depth=0):
    """The code objects one call of ``f`` enters one inside the other, outermost first, as far as they can be read
    without running anything: a function's own code, then its ``functools.wraps`` wrapped function's chain (or, for a
    wrapper without ``__wrapped__``, the chain of the one callable its closure holds: a decorator's ``f``); a bound,
    static or class method's function's; a ``functools.partial``'s ``func``'s; a callable object's ``__call__`` (and
    its ``__wrapped__``'s chain); a C-level wrapper (``functools.lru_cache``) its ``__wrapped__``'s.
    :func:`counting_calls` takes one call of each, where the profiler recorded it, as backward's own."""
    if f is None or depth > 8:
        return []
    t, d = type(f), _quiet(object.__getattribute__, f, "__dict__") or {}
    inner = _entry_chain(d["__wrapped__"], depth + 1) if "__wrapped__" in d else []
    if t is types.FunctionType:
        if "__wrapped__" not in d:
            held = [c.cell_contents for c in f.__closure__ or () if _quiet(lambda c=c: callable(c.cell_contents))]
            inner = _entry_chain(held[0], depth + 1) if len(held) == 1 else []
        return [f.__code__] + inner
    if t in (types.MethodType, staticmethod, classmethod):
        return _entry_chain(f.__func__, depth + 1)
    if isinstance(f, functools.partial):
        return _entry_chain(functools.partial.func.__get__(f), depth + 1)
    call = next((vars(c)["__call__"] for c in t.__mro__ if "__call__" in vars(c)), None)
    return ([call.__code__] if isinstance(call, types.FunctionType) else []) + inner


def _entry_calls(stats, chain, direct, keys, key=code_key):
    """The calls of backward's own entry (:func:`_entry_chain`) as the profiler recorded them, one per code, outermost
    first: the first code called at the top (by the grader: ``direct``) or at all (by an adapter), each next one called
    by the one before; then, while the last is one of forward's codes (``keys``: a wrapper forward and backward share,
    a class-based decorator's ``__call__`` behind the lambda its ``__get__`` returns), the one forward's code of
    another key that it called (``key``: :func:`forward_keys`'). The chain ends where the record disagrees, so each
    code counted off was called."""
    by_code = {id(e.code): e for e in stats}
    inward = {}  # id(code) -> calls of it made by recorded callers
    for e in stats:
        for s in e.calls or ():
            inward[id(s.code)] = inward.get(id(s.code), 0) + s.callcount
    made = []
    for c in chain:
        e = by_code.get(id(c))
        if e is None:
            break
        if not made:
            if (e.callcount - inward.get(id(c), 0) if direct else e.callcount) < 1:
                break
        elif not any(s.code is c and s.callcount for s in by_code[id(made[-1])].calls or ()):
            break
        made.append(c)
    while made and len(made) < 16 and key(made[-1]) in keys:
        seen = {key(c) for c in made}
        nxt = {id(s.code): s.code for s in by_code[id(made[-1])].calls or () if isinstance(s.code, types.CodeType)
               and s.callcount and key(s.code) in keys and key(s.code) not in seen}
        if len(nxt) != 1:
            break
        made.append(next(iter(nxt.values())))
    return made


def counting_calls(codes, fn, *args, **kw):
    """:func:`_count_calls` with the request's profiler (:data:`_GAP`, :meth:`Child.counted_request`) paused while it
    runs, then resumed (and the collector's automatic runs switched off again: a submission that switched them on
    must not have its garbage collected, its finalizers run, where no profiler counts)."""
    forward, entry, _ = kw.get("student") or (None, fn, True)
    # forward's and the entry's codes, read before the count (reading a callable object's __dict__ runs its class's
    # property, if it has one): under the request's profiler, which counts what runs there, never between profilers
    kw["chains"] = (_callable_codes(fn), _entry_chain(entry), _entry_chain(forward))
    gap = _GAP[0]
    _seal()  # (under the request's profiler: no submitted code runs between the two profilers)
    if gap is not None:
        gap.disable()
    try:
        return _count_calls(codes, fn, *args, **kw)
    finally:  # sealed by _count_calls before its profiler was removed
        if gap is not None:
            gap.enable()
        _unseal()
        if gap is not None:  # (under the request's profiler: the count's own profiler and record are freed here)
            _dropped()


def _count_calls(codes, fn, *args, student=None, probe=False, held=None, chains=None, **kw):
    """``(fn(*args, **kw), n)``: n calls of forward made while ``fn`` (backward, or forward itself) ran: calls of code in ``codes`` or of its
    :func:`code_key` (or compiled where forward's was: :func:`forward_keys`), counted by the standard library's C profiler (``_lsprof``) in ``sys.setprofile``'s slot: its
    counts live in C, with no closure or frame of a profile function for the submission's code to edit (redteam25
    H1b: a Python profile function's closure was), and switching it off or on is refused to the submission by the
    audit hook. Its ``clear()`` is caught: ``n`` is -1 when the profiler was removed or no longer holds the call of
    :func:`_counter_mark` made before ``fn`` and the call of ``fn`` itself. The count is still this process's word:
    the child's own functions and globals (this one, :func:`counting_calls`, ``_COUNTER``) are reachable from the
    submission's code through ``sys.modules["__main__"]``, and code that replaces them can fake a count
    (docs/gradescope.md, "What is isolated from what": the policy stops the honest habit and the known tricks, not
    every deliberate tampering, which is visible in the submitted code).

    Backward's own entry is not a call of forward (redteam26 H1, H2): a decorator without ``functools.wraps`` gives
    forward and backward one wrapper code, and a self-adjoint backward (``dout * self.c`` beside ``x * self.c``) has
    forward's key. ``student`` (:func:`_student_methods`; None: ``(None, fn, True)``) names the student's forward and
    the backward the call of ``fn`` enters: the one call of each code of that entry (:func:`_entry_calls`) is taken
    off its key's count; every further call is counted (a backward that is forward's code and calls it again, or
    calls forward). ``n`` is the largest count of one key divided by the times one call of forward enters a code of
    that key (a decorator applied twice: one call of forward, two of its wrapper code).

    Counted around forward itself (``fn`` the object's forward, ``student`` ``(forward, forward, direct)``:
    :func:`_forward_student`), ``n`` is the calls of forward's code that one call of forward made beyond its own entry
    (redteam30 H1: central differences taken inside forward, which re-enters itself with a flag, its backward applying
    the stored Jacobian); a subclass's forward calling its base's once (``super().forward(X)``) is that entry's next
    code (:func:`_entry_calls`), a container's call of its children's forward is another class's code, not counted.
    With ``probe`` (``fn`` the adapters' probe, which calls forward and backward as often as it needs), ``n`` is
    :func:`_probe_calls`': the calls of forward's code beyond those its own entries make. ``held``
    (:func:`held_forwards`, around forward and the probe only): each call of forward may call a code of forward's
    once more for each further object of the loaded tree whose forward it is (a container holding a container).
    ``chains``: ``(_callable_codes(fn), _entry_chain(entry), _entry_chain(forward))`` as :func:`counting_calls` read
    them under the request's profiler (reading them may run the submission's code: a ``__dict__`` property); else
    read here."""
    profiler, getprofile = _COUNTER
    prof = profiler(builtins=False)
    prof.enable()
    try:
        _counter_mark()
        _unseal()
        ret = fn(*args, **kw)
    finally:
        _seal()
        intact = getprofile() is prof
        prof.disable()
    stats = prof.getstats()
    _LATER.append((prof, stats))  # (they hold the code objects recorded: freed under the next profiler)
    forward, entry, direct = (None, fn, True) if student is None else student
    fn_codes, entry_chain, forward_chain = chains or (_callable_codes(fn), _entry_chain(entry), _entry_chain(forward))
    marks = [_counter_mark.__code__, *fn_codes]  # (compared by identity: hashing a code hashes its constants)
    if not intact or not all(any(e.code is c and e.callcount for e in stats) for c in marks):
        return ret, -1
    held = held or {}
    if probe:
        return ret, _probe_calls(stats, codes, forward_chain, held)
    keys, counts, per_call, key = {code_key(c) for c in codes}, {}, {}, forward_keys(codes)
    for e in stats:
        if isinstance(e.code, types.CodeType) and (k := key(e.code)) in keys:
            counts[k] = counts.get(k, 0) + e.callcount
    for c in _entry_calls(stats, entry_chain, direct, keys, key):
        if (k := key(c)) in counts:
            counts[k] -= 1
    for c in forward_chain:
        per_call[key(c)] = per_call.get(key(c), 0) + 1
    for k in counts:
        counts[k] -= held.get(k, 1) - 1
    return ret, max([0, *(-(-n // per_call.get(k, 1)) for k, n in counts.items())])


def _counting(count, codes, fn, *args, student=None, held=None, probe=False, **kw):
    """``counting_calls(codes, fn, *args, student=student, held=held, probe=probe, **kw)`` when ``count`` (the staff
    policy), else ``(fn(*args, **kw), None)``. ``student`` None: every call of forward's code counts (the request's
    steps that are not backward)."""
    if not count:
        return fn(*args, **kw), None
    return counting_calls(codes, fn, *args, student=student, held=held, probe=probe, **kw)


def _calls_sum(*counts):
    """The sum of forward-call counts, -1 (a count switched off) when one is."""
    return -1 if -1 in counts else sum(counts)


def _backward_setup(AD, obj, codes, guard):
    """``(backward, student, guard)`` for one backward request, read in one counted step (redteam31 H1a: a property
    or an array subclass's hook runs here): ``obj.backward``, :func:`_student_methods`, and, when ``guard``, the
    adapters' ``cache_guard`` of ``obj`` (its ``after`` or None); ``codes`` (a set) gets :func:`_forward_codes`."""
    codes |= _forward_codes(AD, obj)
    return obj.backward, _student_methods(AD, obj), _quiet(AD.cache_guard, obj) if guard else None


def _probe_calls(stats, codes, chain, held):
    """The calls of forward's code (``codes``, by :func:`forward_keys`) in a probe's profiler record ``stats`` made
    inside a call of forward (redteam30 H1: the differences taken inside forward on the probe input, which is the graded
    input, were kept for the graded forward to find). The probe calls forward and backward as often as it needs, so
    what is counted is re-entry: a code of forward's entered while it runs (``reccallcount``, beyond the places one
    call gives it in forward's entry, :func:`_entry_calls`: a decorator applied twice), and a next code of that entry
    (``super().forward``) called more often than the code before it. A backward that calls forward is not counted here
    (its graded call is); 0 for a probe that never called forward. A code that ``held`` (:func:`held_forwards`) gives
    k objects may be re-entered k - 1 times per call of it from outside (the probe's own: ``callcount`` less
    ``reccallcount``). ``chain``: forward's entry (:func:`_entry_chain`), read before the count."""
    keys, key = {code_key(c) for c in codes}, forward_keys(codes)
    made = _entry_calls(stats, chain, False, keys, key)
    by_code = {id(e.code): e for e in stats}
    places = {}
    for c in made:
        places[id(c)] = places.get(id(c), 0) + 1
    n = 0
    for e in stats:
        if isinstance(e.code, types.CodeType) and key(e.code) in keys:
            p = places.get(id(e.code), 1)
            nested = (e.callcount - e.reccallcount) * (held.get(key(e.code), 1) - 1)
            n = max(n, e.reccallcount - e.callcount * (p - 1) // p - nested)
    for a, b in zip(made, made[1:]):
        if a is not b:
            e = by_code[id(a)]
            n = max(n, sum(s.callcount for s in e.calls or () if s.code is b) - e.callcount)
    return n


def _spying(ap, tape, srcs, workdir, escapes, fn, *args, **kw):
    """``fn(*args, **kw)``, noting where the student's code turns a tracked Tensor into a numpy array
    (``cols[:, i] = X``, ``np.asarray(X)``) or a Python number (``float(alpha)``, ``math.exp(x)``):
    autoprop counts the escape in ``tape._escapes``; this names the line."""
    import linecache
    cls, names, work = ap.Tensor, {id(t): k for k, t in srcs.items()}, os.path.realpath(workdir) + os.sep
    methods = ("__array__", "__float__", "__complex__", "__int__")
    origs = {m: cls.__dict__[m] for m in methods if m in cls.__dict__}

    def spy(orig):
        def conversion(t, *a, **k):
            n = len(getattr(tape, "_escapes", None) or ())
            v = orig(t, *a, **k)
            f = sys._getframe(1)
            path = os.path.realpath(f.f_code.co_filename)
            where = f"{path[len(work):]}:{f.f_lineno} in {f.f_code.co_name}"
            if (len(getattr(tape, "_escapes", None) or ()) > n and path.startswith(work) and len(escapes) < 8
                    and all(e["where"] != where for e in escapes)):
                escapes.append({"tensor": names.get(id(t), ""), "where": where,
                                "line": linecache.getline(path, f.f_lineno).strip()[:200]})
            return v
        return conversion

    for m, orig in origs.items():
        setattr(cls, m, spy(orig))
    try:
        return fn(*args, **kw)
    finally:
        for m, orig in origs.items():
            setattr(cls, m, orig)


def _tensors_left(ap, obj, depth: int = 4):
    """The ids of the autoprop Tensors ``obj``'s state holds (its attributes, their dicts, lists and tuples, and
    sub-layers' attributes, to ``depth``): :meth:`Child.op_tape` takes them before forward runs on Tensors, so that
    :func:`_tensors_unwrapped` leaves a Tensor the layer held before as it was."""
    seen: set = set()
    _walk_tensors(ap, obj, depth, seen, lambda t: t)
    return {k for k in seen if type(k) is tuple}


def _walk_tensors(ap, value, depth, seen, put):
    """``put(value)`` for a Tensor (its id noted in ``seen`` as ``("t", id)``), the value it returns kept; else the
    walk into a dict's values, a list's or tuple's items and an object's attributes (plain types only, each once):
    the value with its Tensors replaced (a tuple rebuilt), or ``value`` itself."""
    if isinstance(value, ap.Tensor):
        seen.add(("t", id(value)))
        return put(value)
    if depth <= 0 or id(value) in seen or isinstance(value, (str, bytes, int, float, complex, type)) or value is None:
        return value
    seen.add(id(value))
    if type(value) is dict:
        for k in list(value):
            v = value[k]
            w = _walk_tensors(ap, v, depth - 1, seen, put)
            if w is not v:
                value[k] = w
        return value
    if type(value) in (list, tuple):
        items = [_walk_tensors(ap, v, depth - 1, seen, put) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        if type(value) is list:
            value[:] = items
            return value
        return tuple(items)
    if isinstance(value, (types.ModuleType, types.FunctionType, types.MethodType, types.BuiltinFunctionType)):
        return value
    slot = next((c.__dict__["__dict__"] for c in type(value).__mro__ if "__dict__" in c.__dict__), None)
    if isinstance(slot, types.GetSetDescriptorType):  # Python's own __dict__ slot: no code of the submission runs
        state = _quiet(slot.__get__, value)
        if type(state) is dict:
            _walk_tensors(ap, state, depth, seen, put)
    return value


def _tensors_unwrapped(ap, np, obj, held: set) -> None:
    """Each autoprop Tensor ``obj``'s forward on Tensors left in its state (a batch norm's running statistics,
    ``self.rm = (1 - m) * self.rm + m * mu``) but ``held`` (those it held before), replaced by its value as a numpy
    array: the layer's state as a forward on numpy arrays leaves it. Left a Tensor, the next forward on numpy arrays
    returned a Tensor (verify48d F6: every check after ``--tape`` of such a layer, the drawn parameters' among them,
    read as the student's forward failing)."""
    def put(t):
        return t if ("t", id(t)) in held else np.array(t.numpy(), copy=True)
    _walk_tensors(ap, obj, 4, set(), put)


def _quiet(fn, *args):
    """``fn(*args)``, or None if it raised (a student's object this cannot read)."""
    try:
        return fn(*args)
    except BaseException:  # noqa: BLE001
        return None


def _training(req):
    return {} if req.get("training") is None else {"training": req["training"]}


def _as_model(AD, obj, plain, nielsen, req):
    """``(model, usage)``: the header's words of a model of :func:`gradcheck._adapters.model_as_layer` (DLfS vol. 1's
    ``loss(x, t)``/``gradient(x, t)``, CS231n's ``loss(X, y) -> (loss, grads)``; ``plain``: a class whose forward is
    no ``call``), "" for another object; and the usage error, "" when none: such a model, or Nielsen's network
    (``nielsen``, :func:`gradcheck._adapters.backprop_as_model`), loaded without targets, or one it refuses."""
    if nielsen:
        return "", "" if req.get("targets") is not None else AD.backprop_usage(obj, req.get("file") or "")
    try:
        model = plain and AD.model_as_layer(obj) or ""
    except AD.AdapterError as exc:
        return "", str(exc)
    if model and req.get("targets") is None:
        return model, AD.model_usage(obj, req.get("file") or "", req.get("kind") == "loss")
    return model, ""


def _protocol_text(info, keras_call, nielsen, req, alias="", model=""):
    """``info`` with its ``text`` (the header's protocol line) saying what the load read beyond the adapter: forward
    found as ``call``/``__call__`` (Keras's, PyTorch's habit), backward as ``alias`` (``backprop``), Nielsen's
    ``backprop(x, y)`` as a model, a model with fixed targets (DLfS vol. 2's ``forward(x, t)``); ``model``'s words
    (:func:`_as_model`) instead, with ``no_dx``. Unchanged without a text."""
    if model and info.get("text"):  # its loss's gradients in its params alone
        return {**info, "text": model.replace("TARGETS", str(req.get("targets_spec"))), "no_dx": True}
    if alias and info.get("text"):
        info = {**info, "text": f"{info['text']}; backward is {alias}() (the class has no backward)"}
    if keras_call and info.get("text"):
        info = {**info, "text": f"{info['text']}; forward is {keras_call}() (" + (
            "Keras's name" if keras_call == "call" else "the layer called as layer(X), PyTorch's habit")
            + ": the class has no forward)"}
    if nielsen and info.get("text"):
        info = {**info, "text": f"{info['text']}; {nielsen}"}
    if req.get("targets") is not None and info.get("text"):
        info = {**info, "text": f"a model with targets: forward(x, t) -> loss L, t fixed ({req.get('targets_spec')}), "
                f"checked as forward(x) -> L with backward(dout=dL); {info['text']}"}
    return info


class Child:
    """The request loop's state and one method per request (:data:`OPS`).

    Each method replies exactly once; a failure of the submission's code replies ``stage="call"``.
    """

    def __init__(self, np, AD, workdir, reply, progress, sock=None):
        self.np, self.AD, self.workdir, self.reply, self.progress = np, AD, workdir, reply, progress
        self.objects, self.step, self.sock, self.modules = {}, None, sock, {}
        self.held = {}  # id(kept object) -> held_forwards() of it as loaded (for the staff policy's count)
        self._view = np.frombuffer, np.dtype  # taken before any submitted code ran: numpy patched later cannot
        #                                        make the arrays forward receives copies of the shared memory
        self.adapter_codes = _module_codes(AD)  # (before any submitted code ran: the adapters' own, by identity)
        #: the staff policy (:meth:`counted_request`): whether a request asked for it (a later ``free`` is counted
        #: too), the code objects of the forwards of the objects loaded since, and the calls of them counted where
        #: no reply could say so (freeing a copy, a failure, sending a reply), said by the next counted reply
        self.policy, self.known_codes, self.carry, self.collected = False, set(), 0, 0

    def receive_shared(self, spec):
        """The arrays of ``spec`` (``[{"dtype", "shape", "offset"}]``) as views of the memory file the parent sent
        with this request (one descriptor over :attr:`sock`, SCM_RIGHTS): what the student's code writes into them
        the parent reads itself, after the reply, in its own mapping."""
        import mmap
        import socket
        frombuffer, dtype = self._view
        _msg, fds, _flags, _addr = socket.recv_fds(self.sock, 1, 4)
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise RuntimeError("no shared memory came with the request")
        try:
            mm = mmap.mmap(fds[0], os.fstat(fds[0]).st_size)
        finally:
            os.close(fds[0])
        out = []
        for s in spec:
            if s["dtype"] not in ALLOWED_DTYPES | COMPLEX_DTYPES:  # the parent's (complex: the complex step's)
                raise ProtocolViolation(f"a shared array of dtype {s['dtype']!r}")
            n = functools.reduce(int.__mul__, s["shape"], 1)
            out.append(frombuffer(mm, dtype(s["dtype"]), n, s["offset"]).reshape(s["shape"]))
        return out

    def enter(self, step):
        """Tell the parent which step of a load runs now (so a hang or an exit is blamed on it)."""
        self.step = step
        self.progress(step)

    def keep(self, obj, held=None):
        """Keep ``obj`` for later requests (with ``held``, :func:`held_forwards` of it as loaded); return its id (a
        string)."""
        self.objects[oid := str(len(self.objects))] = obj
        self.held[id(obj)] = held or {}
        self.known(obj)
        return oid

    def known(self, obj):
        """Add the codes of ``obj``'s forward (:func:`_forward_codes`) to :attr:`known_codes`, inside a counted request
        only (reading them may run the submission's code: a property)."""
        if _GAP[0] is not None and obj is not None:
            self.known_codes |= _forward_codes(self.AD, obj) - self.adapter_codes

    def fail(self, exc, stage="call", limit=500, **meta):
        """Reply a failure: ``stage="reply"`` when the result was too large to copy, else ``stage``
        (default "call": the submission's code raised) with the error's report (class name, message up to
        ``limit`` characters, where in the submission).
        """
        big = oversized(exc)  # the adapters copying a result: not the student's code raising
        if big is not None:
            return self.reply(False, {"stage": "reply", **big})
        self.reply(False, {"stage": stage, **meta}, error=_error(exc, self.workdir, limit))

    def set_params(self, obj, params):
        """Write the parent's ``params`` (name -> array) into ``obj.params``: into the student's own array
        where it has that shape and is writeable (so references to it see the change), else as a new
        entry; nothing for an object without a ``params`` dict. The student's array is written through its base
        ``np.ndarray`` view (redteam31: nothing of a subclass, its ``__setitem__`` or ``shape``, runs here)."""
        own = getattr(obj, "params", None)
        for k, v in (params or {}).items():
            target = own.get(k) if isinstance(own, dict) else None
            base = self.np.ndarray.view(target, self.np.ndarray) if isinstance(target, self.np.ndarray) else None
            if base is not None and base.shape == v.shape and base.flags.writeable:
                base[...] = v
            elif isinstance(own, dict):
                own[k] = v

    def edit_params(self, obj, params, edit, undo):
        """:meth:`set_params`, then each ``(name, flat index, value)`` of ``edit`` set in ``obj.params[name]``
        (through its base ``np.ndarray`` view), its old value appended to ``undo`` for the caller to restore."""
        self.set_params(obj, params)
        for k, i, v in edit:  # one element set for this forward only
            target = obj.params[k]
            target = self.np.ndarray.view(target, self.np.ndarray) if isinstance(target, self.np.ndarray) else target
            undo.append((target, i, target.flat[i].copy()))
            target.flat[i] = v

    def dict_of(self, packer, d, layout=False, mapping=False):
        """A dict attribute (``params``, ``grads``) as plain data; ``layout``: the arrays' own memory layout;
        ``mapping``: any ``collections.abc.Mapping`` read as a dict (``grads``, as
        :func:`gradcheck._validation.check_grads` reads it in process; review30: a MutableMapping was 'must be a
        dict; got _G' here alone)."""
        if d is None or type(d) in (list, tuple) and not d:  # params, grads = [], []: none (DLFS vol. 2's losses)
            return {"kind": "absent"}
        if not isinstance(d, dict) and not (mapping and isinstance(d, collections.abc.Mapping)):
            return {"kind": "other", "type": type(d).__name__}
        items = {}
        for k, v in list(d.items())[:256]:
            items[str(k)] = {"key_type": type(k).__name__, **describe(self.np, packer, v, 1)}
            if layout and issubclass(type(v), self.np.ndarray):  # the copy sent has its own memory
                b = self.np.ndarray.view(v, self.np.ndarray)
                items[str(k)]["layout"] = [list(b.shape), list(b.strides), b.itemsize]
        return {"kind": "dict", "items": items}

    def state(self, obj, packer):
        """What the parent reads of an object: its ``params`` as :meth:`dict_of` describes them (with
        their memory layout), and, of its first 200 attributes, the public numbers, bools and strings
        (cut at 200 characters).
        """
        items = list(getattr(getattr(obj, "obj", obj), "__dict__", {}).items())[:200]  # an adapter's student
        np_num = (self.np.integer, self.np.floating)  # reg = np.float64(0.1): a number too (fixp24), sent as one
        items = [(k, v.item() if isinstance(v, np_num) else v) for k, v in items]
        scalars = {k: v if not isinstance(v, str) else v[:200] for k, v in items
                   if isinstance(k, str) and not k.startswith("_") and type(v) in (int, float, str, bool)}
        return {"params": self.dict_of(packer, getattr(obj, "params", None), True), "scalars": scalars}

    def _module(self, file, module=None):
        """The checked file's module: imported as ``module`` (``numpy_ml.neural_nets.layers.layers``: a file inside a
        package that imports relatively, as the parent's ``sandbox._packaged`` names it), else by its stem."""
        import importlib
        import importlib.util
        if module or file in self.modules:
            module = self.modules.setdefault(file, module)
            return sys.modules.get(module) or importlib.import_module(module)
        path = os.path.join(self.workdir, file)
        stem = os.path.splitext(os.path.basename(path))[0]
        mod = sys.modules.get(stem)
        if mod is None or getattr(mod, "__file__", None) != path:
            with open(path, "rb") as fh:
                head = fh.read(4096)
            utf16 = head[:2] in (b"\xff\xfe", b"\xfe\xff") or head.count(b"\x00") * 4 >= len(head) > 0
            if utf16:  # every other byte 0, or a byte-order mark: Python's "source code cannot contain null bytes"
                raise SyntaxError(f"{file} is saved as UTF-16 (Windows Notepad's 'Unicode'), and Python reads "
                                  "source files as UTF-8: save it as UTF-8 (Notepad: Save As, Encoding UTF-8)")
            with open(path, "rb") as fh:
                nul = fh.read().find(b"\x00")
            if nul >= 0:  # a stray NUL byte (newuser30 F7), as Python says it
                line = head[:nul].count(b"\n") + 1 if nul < len(head) else None
                raise SyntaxError(f"{file}: source code cannot contain null bytes (Python's words): a NUL byte "
                                  f"(\\x00) {'on line %d' % line if line else 'at byte %d' % nul}, which an editor "
                                  "usually shows as nothing or ^@; delete it (or retype that line) and save again")
            spec = importlib.util.spec_from_file_location(stem, path)
            mod = sys.modules[stem] = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(mod)
            except BaseException:
                sys.modules.pop(stem, None)
                raise
        return mod

    def op_load(self, req, packer):
        """Import the file; unless ``class`` is None, build the object and adapt it."""
        AD = self.AD
        self.enter("import")
        try:
            self._module(req["file"], req.get("module"))
        except BaseException as exc:  # noqa: BLE001
            return self.fail(exc, "import")
        if req.get("class") is None:  # import only (Sandbox.import_file): a later load reuses the module
            return self.reply(True, {"stage": "import"})
        try:  # NAME in the module: a class, a CS231n function pair or loss function (gradcheck/_adapters.py)
            kind, target = AD.find(self._module(req["file"]), req["class"])
        except AD.AdapterError as exc:
            return self.reply(False, {"stage": "class", "message": str(exc)})
        if (refused := self.refused_kind(kind, target, req)) is not None:
            return self.reply(False, refused)
        sig_text = _signature_text(kind, target)
        self.enter("constructor")
        try:
            probe = req.get("probe")
            obj, built = self.constructed(req.get("count_forward"), AD.build, kind, target, req.get("init"),
                                          req.get("seed"), len(probe) if isinstance(probe, list) else None, probe,
                                          req.get("wrt"), req.get("wrt_active") or 0, req.get("dtype") or "float64")
        except AD.InitError as exc:  # a usage error: the caller's init, not the student's code
            return self.reply(False, {"stage": "init", "message": str(exc),  # micrograd's Value: out of scope
                                      "methods": _public_methods(target) if kind == "class" else []})  # (students45 F7)
        except BaseException as exc:  # noqa: BLE001
            return self.fail(exc, "internal" if _adapters_own(AD, exc, self.workdir) else "init", signature=sig_text)
        self.known(obj)  # under the staff policy: the constructor's calls of forward, and a failed load's, counted
        answers_all, raised = _getattr_probe(obj, target.__name__) if kind == "class" else (None, None)
        if raised is not None:  # newuser44 F3: a KeyError of gradcheck's own lookup was "__init__ raised"
            return self.reply(False, {"stage": "protocol", "message": raised})
        AD.on_step = self.enter if not req.get("skip_backward") else functools.partial(_no_backward, self.enter)
        try:  # ML-From-Scratch's forward_pass/backward_pass, initialize(optimizer) (tester31e F1)
            passes = kind == "class" and AD.pass_as_forward(obj, req.get("probe"))
            passes = passes or kind == "class" and AD.gradient_protocol(obj, req.get("kind") or "layer", req.get("probe"))
            passes = passes or kind == "class" and AD.connect_as_built(obj, req.get("probe"))  # NumpyDL (corpus39 M1)
        except BaseException as exc:  # noqa: BLE001 - the student's set_input_shape or initialize
            return self.fail(exc, "init", signature=sig_text)
        held = _quiet(held_forwards, obj) or {}  # as built (forward_pass as forward), before any forward ran
        keras_call = kind == "class" and AD.call_as_forward(obj)  # call(self, x) as forward (Z4)
        alias = kind == "class" and AD.backprop_as_backward(obj)  # backprop(self, dY) as backward (corpus36 F3)
        nielsen = kind == "class" and not keras_call and AD.backprop_as_model(  # backprop(x, y): a model
            obj, bool(req.get("nabla_parts")))
        model, usage = _as_model(AD, obj, kind == "class" and not keras_call, nielsen, req)
        if usage:
            return self.reply(False, {"stage": "usage", "message": usage})
        if req.get("targets") is not None:  # DLfS vol. 2's model forward(x, t) -> loss (Y13)
            try:
                AD.with_targets(obj, req["targets"])
            except AD.AdapterError as exc:
                return self.reply(False, {"stage": "usage", "message": str(exc)})
        calls = None
        try:  # the adapter's probe runs student code: its own failures are the check's to report
            if req.get("kind") == "layer" and req.get("count_forward"):  # the staff policy: the probe's calls too
                codes = _forward_codes(AD, obj) - self.adapter_codes
                (obj, info), calls = counting_calls(codes, AD.adapt, obj, req.get("probe"), held=held,
                                                    student=_forward_student(AD, obj), probe=True)
            else:
                obj, info = AD.adapt(obj, req.get("probe")) if req.get("kind") == "layer" else (obj, getattr(
                    obj, "info", {}) if kind == "loss_function" else {})
            info = _protocol_text(info, keras_call, nielsen, req, alias, model)
            if kind == "class" and all(callable(getattr(obj, m, None)) for m in ("forward", "backward")) and \
                    req.get("kind") != "layer":  # a loss class: its prediction bound by forward's names
                obj = AD.BoundLoss(obj, req.get("probe"), req.get("pred_arg"))
                info = obj.info
            if passes and (key := "text" if info.get("text") else "call" if info.get("call") else None):
                info = {**info, key: f"{passes}; {info[key]}"}
        except AD.AdapterError as exc:  # UnreadableError: a result gradcheck cannot read, a usage error
            return self.reply(False, {"stage": "usage" if isinstance(exc, AD.UnreadableError) else "protocol",
                                      "message": str(exc)})
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt from the probed forward/backward
            return self.probe_failed(exc, answers_all)
        finally:
            AD.on_step = None
        self.reply_loaded(obj, info, packer, calls if None in (calls, built) else _calls_sum(calls, built), held,
                          built)

    def probe_failed(self, exc, answers_all):
        """Reply the failure of the adapters' probe: ``internal`` when it is their own error (:func:`_adapters_own`),
        then the words ``answers_all`` of :func:`_getattr_probe` when given (newuser44 F4: a ``__getattr__`` answering
        every name, not gradcheck's error); else the student's ``probe`` stage."""
        own = _adapters_own(self.AD, exc, self.workdir)
        if own and answers_all:
            return self.reply(False, {"stage": "protocol", "message": answers_all})
        return self.fail(exc, "internal" if own else "probe", step=self.step)

    def constructed(self, count, build, *args):
        """``(build(*args), n)``: the object built, and with the staff policy (``count``) the calls of its forward
        the constructor made beyond one per object of its tree whose forward it is (:func:`held_forwards`), counted
        apart from the load's (redteam33 C1: a Keras-style shape check, ``self.forward(np.zeros((1, n_in)))`` in
        ``__init__``, was counted as forwards of the probe). One call of a made-up input tells a constructor nothing
        of the grader's inputs and weights, which it has not seen; central differences need two calls for each
        entry. Without the policy n is None."""
        if not count:
            return build(*args), None
        codes, held, made = set(), {}, []

        def built():
            made.append(build(*args))
            codes.update(_forward_codes(self.AD, made[0]) - self.adapter_codes)
            held.update({k: n + 1 for k, n in (_quiet(held_forwards, made[0]) or {}).items()})
            return made[0]
        return counting_calls(codes, built, held=held)  # (each key's count less the number of its objects)

    def refused_kind(self, kind, target, req):
        """The reply's fields when what ``req`` asks of the object found (``kind``, ``target``) cannot be done (a
        function pair as a loss, --wrt of a class, --pred-arg of a function, a loss function or class as a layer), else
        None."""
        AD = self.AD
        if kind == "functions" and req.get("kind") != "layer":
            return {"stage": "class", "message": f"{req['class']} is a CS231n function pair; a "
                                      "loss is a class: forward(y_pred, y_true) -> float (its order read from the names), backward() -> dy_pred, "
                                      "or a CS231n loss function NAME(x, y) -> (loss, dx)."}
        if kind == "class" and req.get("wrt"):
            return {"stage": "usage", "message": f"--wrt names the arguments of a (loss, grad, ...) "
                                      f"function's gradients; {req['class']} is a class, whose backward's gradient is "
                                      "of its prediction (--pred-arg names that argument)."}
        if kind == "loss_function" and req.get("pred_arg"):  # accepted and ignored it would be a wrong number
            return {"stage": "usage", "message": f"--pred-arg names the prediction argument of a "
                                      f"loss class's forward; {req['class']} is a function: NAME(x, y) -> (loss, dx) "
                                      "takes the prediction first, and a (loss, grad) function of arguments --init "
                                      "gives is told whose gradient it returns by --wrt (--wrt theta)."}
        if kind == "class" and (req.get("kind") or "layer") == "layer" and (hint := AD.loss_without_flag(target)):
            return {"stage": "init", "message": hint}  # a loss class checked as a layer: --loss (newuser31b F4)
        if kind == "loss_function" and req.get("kind") == "layer":
            return {"stage": "class", "message": AD.not_a_layer(
                req["class"], self._module(req["file"]), target)}
        return None

    def reply_loaded(self, obj, info, packer, calls=None, held=None, built=None, extra=None):
        """The reply of a new object the parent gets a RemoteLayer of (op_load, op_sublayer): its id, state, methods,
        how forward and backward are called (usage errors), how it was read (``info``) and its class name; with the
        staff policy, ``forward_calls``: the probe's calls of forward beyond its own (:func:`_probe_calls`) and the
        constructor's beyond its allowance, ``constructor_calls`` (:meth:`constructed`) the latter; ``held``
        (:func:`held_forwards`) kept beside it."""
        fparams, shape = self.AD.signature(obj)
        oid = self.keep(obj, held)
        self.reply(True, {"id": oid, **self.state(obj, packer), "methods": _public_methods(obj), "forward_params": fparams,
                          "signature": shape, "protocol": info, "forward_calls": calls, "constructor_calls": built,
                          "class": getattr(obj, "class_name", None) or type(obj).__name__, **(extra or {})}, packer)

    def op_sublayer(self, obj, req, packer):
        """``obj.layers[index]`` adapted as the check reads a layer (on the probe ``inputs`` it receives in the
        model), kept as a new object (gradcheck.diagnose.first_failing_sublayer); ``{"id": None}`` when there is
        no such layer, it is the model itself, or the adapters cannot read it (not checkable alone, not blamed);
        ``same_as``: the index of the same object earlier in ``layers`` (checked there: redteam36 F4); ``next_new``:
        the index of the next layer not met before (:func:`gradcheck._adapters.next_new_layer`; -1: none, the search
        ends). The parent's ``params`` are written into the model first (a probe's last forward may have sent others:
        a weight zeroed, put back there). With the staff policy (``req["count_forward"]``) ``forward_calls`` counts the
        sub-layer's probe as a load's (its forward re-entered) and every call the parameters' writing made."""
        count, AD = req.get("count_forward"), self.AD
        _, calls = _counting(count, self.known_codes, self.set_params, obj, req.get("params"))  # (as a forward's)
        layers, i = getattr(obj, "layers", None), req.get("index")
        if not isinstance(layers, (list, tuple)) or type(i) is not int or not 0 <= i < len(layers) or layers[i] is obj \
                or not AD.forward_takes(layers[i], len(req.get("inputs") or ())):  # RNN.forward(x, h_prev)
            return self.reply(True, {"id": None, "forward_calls": calls})
        same_as = next((j for j in range(i) if layers[j] is layers[i]), None)
        ahead = _quiet(AD.next_new_layer, obj, layers, i)
        AD.on_step, held = self.enter, _quiet(held_forwards, layers[i]) or {}
        try:  # with the staff policy, the probe counted as a load's (the sub-layer's own forward re-entered)
            (sub, info), n = _counting(count, _forward_codes(AD, layers[i]) - self.adapter_codes, AD.adapt, layers[i],
                                       req.get("inputs"), req.get("training") is not False, held=held,
                                       student=_forward_student(AD, layers[i]) if count else None, probe=bool(count))
        except AD.AdapterError:
            return self.reply(True, {"id": None, "forward_calls": calls})
        except BaseException as exc:  # noqa: BLE001 - the probe runs student code
            return self.fail(exc, "internal" if _adapters_own(AD, exc, self.workdir) else "probe", step=self.step)
        finally:
            AD.on_step = None
        self.reply_loaded(sub, info, packer, calls if None in (calls, n) else _calls_sum(calls, n), held,
                          extra={"same_as": same_as, "next_new": ahead})

    def op_forward(self, obj, req, packer):
        """One forward; its inputs are views of the memory the parent shares (``req["shared"]``), which the
        parent reads after the reply: whether forward wrote into them is the parent's to see, not this reply's."""
        np = self.np
        try:
            out, calls = self.forward_counted(obj, req, _laid_out(self.np, req.get("shared", req.get("inputs", [])),
                                                                  req), self.set_params, obj, req.get("params"))
        except BaseException as exc:  # noqa: BLE001
            return self.fail(exc)
        own, given = getattr(obj, "params", None), req.get("params") or {}
        # read through the base views (a params dict subclass's get, an array subclass's methods: student code that
        # would run outside the forward the policy counts, redteam31 H1)
        held = {k: dict.get(own, k) for k in given} if isinstance(own, dict) else {}
        written = [str(k) for k, v in given.items() if isinstance(held.get(k), np.ndarray)
                   and np.shape(held[k]) == np.shape(v)
                   and not _equal(np, np.ndarray.view(held[k], np.ndarray), v)]  # verify40 M1
        kw = getattr(obj, "call_keywords", None) if isinstance(obj, self.AD.FunctionPair) else None
        keywords = {str(name): {str(k): describe(np, packer, v, 1) for k, v in list(d.items())[:64]}
                    for name, d in (kw or {}).items() if type(d) is dict}  # bn_param as forward left it
        self.reply(True, {"value": describe(self.np, packer, out), "keywords": keywords, "forward_calls": calls,
                          **({"params_written": written} if written else {})}, packer)

    def forward_counted(self, obj, req, inputs, prepare, *args):
        """``prepare(*args)`` (setting the parameters: a params Mapping's or array subclass's code may run), then
        ``(obj.forward(*inputs), n)``: with the staff policy (``req["count_forward"]``), n the calls of forward's
        code that this one call made beyond its own entry (:func:`counting_calls`; data for the parent to judge,
        redteam30 H1: differences of forward taken inside forward) plus every call ``prepare`` made (redteam31 H1:
        the request's other steps count too); -1 when a count was switched off; without the policy, n None."""
        if not req.get("count_forward"):
            prepare(*args)
            return obj.forward(*inputs, **_training(req)), None
        codes = _forward_codes(self.AD, obj) - self.adapter_codes  # an adapter's forward (a CS231n pair's) is ours
        _, before = counting_calls(codes, prepare, *args)
        out, n = counting_calls(codes, obj.forward, *inputs, student=_forward_student(self.AD, obj),
                                held=self.held.get(id(obj)), **_training(req))
        return out, -1 if -1 in (before, n) else before + n

    def op_forward_many(self, obj, req, packer):
        """Each forward has the per-call time limit: after one ends, a progress frame (at most one every
        0.2 s) tells the parent how many are done, and its deadline starts again."""
        values, prev, told, most = [], None, time.monotonic(), None
        edits = req.get("edits") or [()] * len(req["batches"])
        for inputs, params, edit in zip(req["batches"], req["params_list"], edits):
            inputs = prev = prev if inputs is None else inputs  # None: the previous inputs again
            undo = []
            try:
                out, calls = self.forward_counted(obj, req, [x.copy() for x in inputs], self.edit_params, obj,
                                                  params, edit, undo)
            except BaseException as exc:  # noqa: BLE001
                return self.fail(exc, index=len(values))
            finally:
                for target, i, old in reversed(undo):
                    target.flat[i] = old
            if calls is not None:  # the policy's count: the worst forward's (-1, a count switched off, first)
                most = calls if most is None or most != -1 and (calls == -1 or calls > most) else most
            values.append(describe(self.np, packer, out))  # (copying it is the reply's: not the call's failure)
            out = None
            if time.monotonic() - told > 0.2:
                self.progress("forwards", len(values))
                told = time.monotonic()
        self.reply(True, {"values": values, "forward_calls": most}, packer)

    def op_backward(self, obj, req, packer):
        """One backward; dY is a view of shared memory (``req["shared"]``) that the parent reads after the reply.
        ``cache_written`` (the adapters' ``cache_guard``) only words a message: the parent decides by behaviour.

        With the staff policy (``req["count_forward"]``) every call of forward's code the request makes is counted
        (redteam31 H1, H1a): not only backward's own but those of what else of the submission the request runs, before
        backward (reading ``forward``, ``backward`` and the cache for the guard: a property, an array subclass's
        hooks) and after it (the guard's comparison, ``grads`` and ``params`` read: a Mapping's ``__getitem__``, a
        property); -1 when one of the counts was switched off."""
        args = _laid_out(self.np, req.get("shared") or ([req["dY"]] if req.get("dY") is not None else []), req)
        count, codes = req.get("count_forward"), set()  # forward's codes: filled by _backward_setup, counted in
        try:
            (backward, student, guard), n0 = _counting(count, codes, _backward_setup, self.AD, obj, codes,
                                                       req.get("guard", True))
            ret, n1 = _counting(count, codes, backward, *args, student=student)
        except BaseException as exc:  # noqa: BLE001
            return self.fail(exc)
        out, n2 = _counting(count, codes, self.backward_reply, obj, guard, ret, packer)
        calls = None if not count else -1 if -1 in (n0, n1, n2) else n0 + n1 + n2
        self.reply(True, {**out, "forward_calls": calls}, packer)

    def backward_reply(self, obj, guard, ret, packer):
        """What :meth:`op_backward` replies besides the count: backward's value, the guard's message, ``grads`` and
        ``params`` (each read once, here, where the request's count sees what the submission runs for them)."""
        return {"value": describe(self.np, packer, ret), "cache_written": _quiet(guard) if guard is not None else None,
                "grads": self.dict_of(packer, getattr(obj, "grads", None), mapping=True),
                "params": self.dict_of(packer, getattr(obj, "params", None), True)}

    def op_step(self, obj, req, packer):
        """One ``update_mini_batch`` of Nielsen's network (:func:`gradcheck._adapters.nielsen_step`, on a copy) after
        ``req["params"]`` are set: ``x``, ``t`` (one sample a column), ``eta``, ``lmbda``, ``n``. Replies ``stepped``
        (the copy's arrays after the step, as :meth:`dict_of` describes a dict), ``last`` (backprop's gradients of the
        last sample the model's last backward saw, described alike), ``sums`` (their sum over its columns, alike),
        ``params`` (the method's first two parameters' names), ``method`` (its name), ``taken`` (the
        keywords passed beyond eta), ``forward_calls`` (the staff policy's count: every call of forward's code the
        request makes, as a backward's); ``refused`` instead of the step when the adapters find no step method they
        can call (:func:`gradcheck._adapters.step_method`: the parent says the step was not checked, and why)."""
        count, codes = req.get("count_forward"), set()
        try:
            _, n0 = _counting(count, codes, self.stepped_setup, obj, codes, req.get("params"))
            (stepped, method, taken, last, sums, said), n1 = _counting(count, codes, self.AD.nielsen_step, obj, req["x"], req["t"],
                                                     req["eta"], req.get("lmbda"), req.get("n"))
        except self.AD.AdapterError as exc:
            return self.reply(True, {"refused": str(exc), "forward_calls": None if not count else n0})
        except BaseException as exc:  # noqa: BLE001
            return self.fail(exc)
        (out, most, summed), n2 = _counting(count, codes, lambda: (self.dict_of(packer, stepped), self.dict_of(
            packer, last), self.dict_of(packer, sums)))
        calls = None if not count else -1 if -1 in (n0, n1, n2) else n0 + n1 + n2
        self.reply(True, {"stepped": out, "last": most, "sums": summed, "method": str(method),
                          "params": [str(k) for k in said], "taken": [str(k) for k in taken],
                          "forward_calls": calls}, packer)

    def stepped_setup(self, obj, codes, params):
        """:meth:`op_step`'s first counted step: ``codes`` (a set) gets :func:`_forward_codes` of ``obj``, then its
        parameters are set."""
        codes |= _forward_codes(self.AD, obj)
        self.set_params(obj, params)

    def op_clone(self, obj, req, packer):
        """A deep copy of ``obj`` (its caches and state as they are now) as a new object, ``params`` set. With the
        staff policy (``req["count_forward"]``) every call of forward's code the copy makes is counted (redteam31: a
        ``__deepcopy__`` taking differences of forward for the copy's backward to apply)."""
        count, codes = req.get("count_forward"), set()
        try:
            (new, params), calls = _counting(count, codes, self.cloned, obj, codes, req.get("params"), packer)
        except BaseException as exc:  # noqa: BLE001 - e.g. a student's __deepcopy__, an uncopyable attribute
            return self.fail(exc)
        self.reply(True, {"id": self.keep(new, self.held.get(id(obj))), "params": params, "forward_calls": calls}, packer)

    def cloned(self, obj, codes, params, packer):
        """``(a deep copy of obj, AD.copied, with params set, its params described)``; ``codes`` (a set) gets
        :func:`_forward_codes` of ``obj``, for :meth:`op_clone`'s count."""
        codes |= _forward_codes(self.AD, obj)
        new = self.AD.copied(obj)  # (copy.deepcopy, sharing a module or a lock it refuses: verify46a F8)
        self.set_params(new, params)
        return new, self.dict_of(packer, getattr(new, "params", None), True)

    def op_adapter(self, obj, req, packer):
        """``AD.<name>(obj, *args)`` for a ``name`` of :data:`ADAPTER_CALLS`; reply its value (strings, lists,
        dicts; numbers and arrays described), a usage failure when the adapters refuse (AdapterError), or, for a
        call that runs the submission's code (its ``fix_mask``), the student's error."""
        name = req.get("name")
        if name not in ADAPTER_CALLS:
            raise ProtocolViolation(f"no adapter call {str(name)[:40]!r}")
        student, unwrap = ADAPTER_CALLS[name]
        try:
            value = getattr(self.AD, name)(getattr(obj, "obj", obj) if unwrap else obj, *req.get("args") or ())
        except self.AD.AdapterError as exc:
            return self.reply(False, {"stage": "usage", "message": str(exc)})
        except BaseException as exc:  # noqa: BLE001 - the student's fix_mask raised (other rows: the loop's)
            if not student:
                raise
            return self.fail(exc)
        self.reply(True, {"value": self.plain(value, packer)}, packer)

    def plain(self, value, packer):
        """An adapter's result as reply data: strings, bools and None as they are, dicts and lists item by item,
        numbers and arrays described (:func:`describe`: only their base class read)."""
        if value is None or type(value) in (str, bool):
            return value
        if type(value) is dict:
            return {str(k): self.plain(v, packer) for k, v in value.items()}
        if type(value) in (list, tuple):
            return [self.plain(v, packer) for v in value]
        return describe(self.np, packer, value, 1)

    def op_free(self, obj, req, packer):  # noqa: ARG002 - a copy the parent no longer uses
        """Forget object ``req["id"]`` (a copy the parent no longer uses); reply ok."""
        self.held.pop(id(self.objects.pop(req["id"], None)), None)
        self.reply(True)

    def op_tape(self, obj, req, packer):
        """Tape mode: ``obj.forward`` on autoprop tensors under a GradientTape; reply with Y and VJPs.

        ``req``: ``inputs``, ``params`` (values to set first), ``training``, ``gs`` (one upstream
        gradient per VJP wanted; a persistent tape serves them all). Reply ``{"value": Y, "grads":
        [{"in0": ..., "W": ...}, ...], "unconnected": [...], "unconnected_read": [...]}`` (the unconnected sources
        some recorded operation took: forward read them for something else than Y); a failure replies ``stage="tape"``,
        ``"tape-escape"`` (a tensor became a numpy array) or ``"tape-left"`` (forward returned no Tensor). With the
        staff policy (``req["count_forward"]``) the reply's ``forward_calls`` are the calls of forward's code beyond
        the grader's two (on tensors, then on numpy arrays for backward's cache), as a forward request counts them.
        """
        np = self.np
        try:
            import autoprop as ap
        except BaseException as exc:  # noqa: BLE001
            return self.fail(exc, "tape")
        _TAPED[:] = [ap.Tensor, ap.Tensor.numpy]  # (later replies: its Tensors left in the layer's state as values)
        count, tr = req.get("count_forward"), _training(req)
        codes = _forward_codes(self.AD, obj) - self.adapter_codes if count else set()
        student, held = (_forward_student(self.AD, obj), self.held.get(id(obj))) if count else (None, None)
        spied = student and (*student[:2], False)  # forward's entry called by _spying, not at the count's top
        _, n0 = _counting(count, codes, self.set_params, obj, req.get("params"))  # (a params Mapping's code: counted)
        own = obj.params if isinstance(getattr(obj, "params", None), dict) else {}
        saved = dict(own)
        xs = [ap.constant(np.array(x, copy=True)) for x in req["inputs"]]
        srcs = {f"in{i}": x for i, x in enumerate(xs) if x.dtype.kind == "f"}
        tensors = {k: ap.constant(np.array(v, copy=True)) for k, v in saved.items()
                   if isinstance(v, np.ndarray) and v.dtype.kind == "f"}
        srcs.update(tensors)
        escapes, n1, n2, done = [], 0, 0, None
        before = _tensors_left(ap, obj)  # (not ``held``: the staff policy's held_forwards above)
        try:
            own.update(tensors)
            with ap.GradientTape(persistent=True) as tape:
                for t in srcs.values():
                    tape.watch(t)
                if count:  # the staff policy: forward's calls beyond the one the grader makes, as for a forward
                    Y, n1 = counting_calls(codes, _spying, ap, tape, srcs, self.workdir, escapes, obj.forward, *xs,
                                           student=spied, held=held, **tr)
                else:
                    Y = _spying(ap, tape, srcs, self.workdir, escapes, obj.forward, *xs, **tr)
            if escapes or not isinstance(Y, ap.Tensor):
                done = (False, {"stage": "tape-escape", "escapes": escapes} if escapes else
                        {"stage": "tape-left", "type": type(Y).__name__})
                return
            out, unconnected = [], set(srcs)
            for g in req.get("gs") or []:
                grads = {k: v for k, v in tape.gradient(Y, srcs, output_gradients=ap.constant(g)).items()
                         if v is not None}
                unconnected -= set(grads)
                out.append({k: describe(np, packer, np.asarray(v.numpy(), dtype=np.float64))
                            for k, v in grads.items()})
            taken = {k for node in getattr(tape, "_nodes", ()) for _, k in getattr(node, "pairs", ())}
            done = (True, {"value": describe(np, packer, np.asarray(Y.numpy(), dtype=np.float64)), "grads": out,
                           "unconnected": sorted(unconnected),  # of those, the ones an operation took (Ng's Wya:
                           "unconnected_read": sorted(k for k in unconnected  # yt_pred, not the checked a_next)
                                                      if getattr(srcs[k], "_key", None) in taken)})
        except BaseException as exc:  # noqa: BLE001
            done = exc
        finally:
            own.update(saved)  # and a numpy cache left behind for a later backward
            _tensors_unwrapped(ap, np, obj, before)  # (running statistics forward stored as Tensors: numpy again)
            fresh = [np.array(x, copy=True) for x in req["inputs"]]
            n2 = _quiet(lambda: _counting(count, codes, obj.forward, *fresh, student=student, held=held, **tr)) \
                or (None, 0)  # (a forward that raised here: uncounted, as a forward request's that raised)
            self.tape_reply(done, packer, _calls_sum(n0, n1, n2[1]) if count else None)

    def tape_reply(self, done, packer, calls):
        """:meth:`op_tape`'s reply, sent once its last forward ran: ``done`` its exception or ``(ok, meta)``; with the
        staff policy, ``calls`` (the request's calls of forward beyond the grader's two) in a reply that succeeded, or
        said by the next counted reply (:attr:`carry`) when it failed."""
        if calls is not None and not (type(done) is tuple and done[0]):
            self.carry = _calls_sum(self.carry, calls)
        if not isinstance(done, tuple):
            return self.fail(done, "tape", limit=1900)  # autoprop's reason whole: the parent keeps its fix (StudentTape)
        ok, meta = done
        self.reply(ok, {**meta, "forward_calls": calls} if ok and calls is not None else meta, packer)

    def serve(self, fd_in):
        """Answer requests until the end of input."""
        read = open(fd_in, "rb", buffering=1 << 20, closefd=False).read  # n bytes, fewer at the end
        while True:
            got = []
            if self.policy:  # between two requests, counted too (redteam33 S2, S4): said by the next counted reply
                self.carry = _calls_sum(self.carry, self.window(self.receive, read, got, waiting=True))
            else:
                self.receive(read, got)
            if got[0] is None:
                return
            if got[0][1] is None:  # not decoded: its failure replied
                continue
            # the request stays in `got` (no name of this loop holds it): under the policy it is dropped inside a
            # counted window (redteam34 M3: a weakref callback on forward's input array ran where this loop let go
            # of the previous request, after the receive window)
            self.policy = self.policy or bool(got[0][1].get("count_forward"))
            if got[0][1].get("count_forward") or self.policy and got[0][0] in ("free", "adapter"):  # (no forward)
                self.counted_request(got)
            else:
                if self.policy:  # a request of no count (another layer's, loaded without the policy): signals on
                    _unseal()
                self.dispatch(*got.pop())

    def receive(self, read, got):
        """Append the next request to ``got``: ``(op, req, packer)``, ``(op, None, None)`` when it could not be
        decoded (its failure replied), None at the end of input. Under the staff policy it runs in a :meth:`window` of
        its own: the time the child waits for the request, when only the submission's signal handlers or finalizers
        could run."""
        got.append(self.request(read))

    def request(self, read):
        """:meth:`receive`'s request read and decoded."""
        try:
            WAITING[0] = True  # (os._exit in a handler now: said by _exit_said)
            if self.policy:  # (sealed by the window's end; without the policy the mask is the submission's own)
                # the handlers of signals that came since the last reply was sealed run here, as those that come
                # during the read: a handler's exception or os._exit ends the child, said, wherever in the wait the
                # signal landed (it was dropped by _unseal when it came in the few milliseconds before the read:
                # timer47)
                _SIG[0](signal.SIG_SETMASK, _SIG[1])
            header, payload = read_frame(read)
        except EOFError as exc:  # the end of input, unless a handler of the submission's raised it (sigfix47)
            if (said := _waiting_failure(exc, self.workdir)) is not None:
                _die(said, WAITING_EXIT)
            return None
        except PayloadNotRead as exc:  # a submission that holds the memory the request's arrays need: a failure of
            REQUEST[0] = exc.header.get("rid")  # the request, replied as its decoding's (the child lives on, so the
            self.fail(exc.error, "grader")  # grader can measure what the submission holds)
            return exc.header.get("op"), None, None
        except BaseException as exc:  # noqa: BLE001 - e.g. a broken frame: the request could not be read
            if (said := _waiting_failure(exc, self.workdir)) is not None:  # a signal handler of the submission's
                _die(said, WAITING_EXIT)
            _die(f"{type(exc).__name__} while receiving a request" + (f": {exc}" if str(exc) else ""))
        finally:
            WAITING[0] = False
        op, COPYING[0], REQUEST[0] = header.get("op"), None, header.get("rid")
        try:  # the grader's side: a failure here is never the submission's fault (but for a closed socket)
            _cpu_limit(header.get("cpu"))
            shared = self.receive_shared(header["shared"]) if header.get("shared") is not None else None
            req = decode(self.np, header.get("args", {}), payload, max_nodes=1 << 40,
                         allowed=ALLOWED_DTYPES | COMPLEX_DTYPES)  # the parent's request
        except BaseException as exc:  # noqa: BLE001 - e.g. MemoryError for very large inputs
            payload = header = None
            # but for a signal handler of the submission's that landed here, after the read (a frame in its files):
            # said as one in the wait, before the request ran (verify47b F3: blamed on forward or on the child)
            if _error(exc, self.workdir)["where"] and (said := _waiting_failure(exc, self.workdir)) is not None:
                _die(said, WAITING_EXIT)
            self.fail(exc, "grader")
            return op, None, None
        if shared is not None:
            req["shared"] = shared
        return op, req, Packer(self.np, reply_dtypes(header))

    def dispatch(self, op, req, packer):
        """Run request ``op`` (of :data:`OPS`); it replies once (a failure of the grader's side: ``stage="child"``)."""
        try:  # the parent sends only the ops of OPS
            args = (req, packer) if op == "load" else (self.objects[req["id"]], req, packer)
            OPS[op](self, *args)
        except BaseException as exc:  # noqa: BLE001 - e.g. MemoryError while packing a reply
            big = oversized(exc, packer)
            packer = req = None
            if big is not None:  # what the student's code returned could not be copied into the reply
                self.reply(False, {"stage": "reply", **big})
            else:
                self.fail(exc, "child")  # "where" empty: not student code

    def counted_request(self, got):
        """One request under the staff policy, all of it counted (redteam32 A1, A3): the calls of forward its counted
        steps (:func:`counting_calls`) do not see, from its receipt to its reply sent, are counted by a profiler of
        the whole request (:meth:`window`) and added to the reply's ``forward_calls``: the submission's code the
        child runs between those steps (``state()`` reading a number subclass's ``item()``, the method listing
        reading a property, the finalizer of forward's result when the child drops it, a stream's ``flush``), and
        the finalizers of its cyclic garbage, which is collected in the window (the collector's automatic runs
        switched off: none runs where no profiler counts). What no reply of this request can say (a failure, a
        copy freed, an adapter's call such as the student's ``fix_mask``, the reply's sending) is said by the next
        counted reply (:attr:`carry`): a stored Jacobian is only of use to a later backward, whose reply the parent
        judges. ``tape`` and ``sublayer`` requests are counted too (note34-36: they were not), the forward calls
        they make themselves taken off as a forward's and a load probe's are (:meth:`op_tape`, :meth:`op_sublayer`).

        ``got``: ``[(op, req, packer)]``, emptied in the first window; the reply (``meta`` may hold the submission's
        strings: the class name :func:`describe` read) is dropped in the second: outside the windows this holds
        nothing the submission made (redteam34 M1: a ``str`` subclass's ``__del__`` ran where the reply's meta was
        freed, after its window)."""
        pending, reply = [], self.reply
        self.reply = lambda ok, meta=None, packer=None, error=None: pending.append((ok, meta, packer, error))
        try:
            n = self.window(self.counted_dispatch, got)
        finally:
            self.reply = reply
        sent = self.window(self.counted_reply, pending, n)  # (which sets carry: read it after)
        self.carry = _calls_sum(self.carry, sent)

    def counted_reply(self, pending, n):
        """Send the last reply of ``pending`` (emptied; none: a failure of the child) with ``n``, the request's calls
        of forward outside its counted steps, and :attr:`carry` added to its ``forward_calls`` (or kept for the next
        counted reply when it has none)."""
        ok, meta, packer, error = pending[-1] if pending else (False, {"stage": "child"}, None, None)
        pending.clear()
        if ok and type(meta) is dict and meta.get("forward_calls") is not None:
            meta["forward_calls"] = _calls_sum(meta["forward_calls"], n, self.carry)
            meta["forward_calls_between"], self.carry = self.carry, 0  # (for the parent's message)
        else:
            self.carry = _calls_sum(self.carry, n)
        self.reply(ok, meta, packer, error)

    def counted_dispatch(self, got):
        """:meth:`dispatch` of the request ``got`` holds (taken from it) inside :meth:`counted_request`'s window: the
        request's object's forward codes read first (a copy freed: before it is dropped), its cyclic garbage collected
        last (every 32nd request, all of it: garbage an earlier request left reachable is collected, and counted, in a
        later one's window)."""
        op, req, packer = got.pop()
        if op != "load":
            self.known(self.objects.get(req.get("id")))
        self.dispatch(op, req, packer)
        req = packer = None
        self.collected += 1  # the young generation: all the request made (no automatic run moved any older); a full
        _GC[0](0 if self.collected % 32 else 2)  # run now and then (~10 ms), for what an earlier request left alive

    def window(self, fn, *args, waiting=False):
        """``n``: the calls of forward (of :attr:`known_codes`, by :func:`forward_keys`; every call, as no step
        between counted steps calls forward) made while ``fn(*args)`` ran, outside the counted steps inside it
        (:func:`counting_calls` pauses this profiler); -1 when the profiler was removed or cleared (as there). The
        collector's automatic runs are switched off first; what the child put aside (:data:`_LATER`) is freed under
        this profiler, and this profiler with its record is put aside in turn: after the seal nothing is freed that
        could run the submission's code (its finalizers), nor is anything of it hashed (:func:`code_key`). ``waiting``
        (the wait for a request, :meth:`receive`): the signals stay sealed until :meth:`request` itself unseals them
        while the child waits, where a handler that raises or calls ``os._exit`` ends the child, said."""
        profiler, getprofile = _COUNTER
        gap = profiler(builtins=False)
        _GC[1]()
        _GAP[0] = gap
        gap.enable()
        try:
            _counter_mark()
            if not waiting:
                _unseal()
            _dropped()
            fn(*args)
        finally:
            _seal()
            _GAP[0] = None
            intact = getprofile() is gap
            gap.disable()
        stats = gap.getstats()
        _LATER.append((gap, stats))
        if not intact or not any(e.code is _counter_mark.__code__ and e.callcount for e in stats):
            return -1
        codes = self.known_codes
        keys, key = {code_key(c) for c in codes}, forward_keys(codes)
        return sum(e.callcount for e in stats if isinstance(e.code, types.CodeType) and key(e.code) in keys)


def _cpu_limit(seconds, setrlimit=resource.setrlimit, getrlimit=resource.getrlimit):
    """Set the soft ``RLIMIT_CPU`` to ``seconds`` (below the hard limit), as the parent asks at each request: the
    session's wall-clock limit, as far as the request may extend it, plus one second (``Sandbox._cpu_limit``).
    The functions are bound here, before any submitted code ran."""
    if type(seconds) is int and seconds > 0:
        hard = getrlimit(resource.RLIMIT_CPU)[1]
        try:
            setrlimit(resource.RLIMIT_CPU, (seconds if hard == resource.RLIM_INFINITY else min(seconds, hard), hard))
        except (ValueError, OSError):
            pass


def oversized(exc, packer=None):
    """The size of the reply that ``exc`` stopped: a MemoryError while a result was copied (:data:`COPYING`) or
    ``packer`` joined its payload into a frame; None for anything else."""
    offset = packer.offset if packer is not None else 0
    if not isinstance(exc, MemoryError) or not (COPYING[0] or offset):
        return None
    shape, dtype, nbytes = COPYING[0] or (None, None, 0)
    return {"nbytes": offset + nbytes, "shape": shape, "dtype": dtype, "array_nbytes": nbytes}


#: The request dispatcher: op name -> method (``load`` takes no object).
OPS = {name[3:]: fn for name, fn in vars(Child).items() if name.startswith("op_")}
#: The adapters' functions the parent calls on an object (``op_adapter``), each ``name: (runs the submission's code,
#: on the student's object behind an adapter)``: a random forward held (its ``fix_mask``), the generators'
#: fingerprints, another combination of forward's switches, the state forward may carry, the grader's point for
#: weights without gradients, numpy's functions the submission replaced (nnfs.init()), a function pair's bn_param
#: (running statistics compared with --reference).
ADAPTER_CALLS = {"hold_random": (True, False), "random_draws": (False, False), "set_variant": (False, False),
                 "state_values": (False, True), "stat_values": (False, True), "set_weights": (False, False),
                 "stored_inputs": (False, True),
                 "numpy_patched": (False, False), "penalty_numbers": (False, True),
                 "same_draws": (False, False), "set_pair_keywords": (False, False), "reused_layers": (False, True),
                 "grads_values": (True, True)}


class _Tail:
    """``sys.stdout``/``sys.stderr`` of the child: one write of more text than the parent keeps
    (``limit``, :attr:`gradcheck.sandbox.Sandbox.output_limit`) loses its head here, saying so, so
    that printing 100 MB costs the submission no time in the pipe. Anything else is the stream's;
    the parent still keeps only the tail of whatever reaches the pipe (``os.write`` too)."""

    def __init__(self, stream, limit):
        self._stream, self._keep = stream, max(1, limit // 2)  # room for the note in the tail

    def write(self, s):
        if type(s) is not str or len(s) <= self._keep:
            return self._stream.write(s)
        head = s[:-self._keep]
        n = len(head) if head.isascii() else len(head.encode("utf-8", "surrogateescape"))
        self._stream.write(f"[... {n} earlier bytes of output dropped ...]\n{s[-self._keep:]}")
        return len(s)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _die(text, code=INTERNAL_EXIT):
    print(f"gradcheck sandbox: {text}", file=sys.stderr)
    sys.stderr.flush()
    _OS_EXIT(code)


#: ``os._exit`` itself (:func:`_exit_said` takes its place in ``os`` for the submission); ``[True]`` while the child
#: waits for (and reads) the next request (:meth:`Child.request`)
_OS_EXIT, WAITING = os._exit, [False]


def _exit_said(status, /):
    """``os._exit(status)`` as the submission sees it in the sandbox: while the child waits for the next request (only
    a signal handler of the submission's runs then), first one line on stderr, ``"gradcheck sandbox: waiting:
    os._exit(N) (at FILE:LINE in FUNCTION; the handler of SIGNAME)"`` (:func:`_waiting_failure`, read from the
    caller's frames), which the parent reads to say what ended the process; then the process ends, as ``os._exit``
    ends it (no exit code of the child's own replaces N). There is no audit event for ``os._exit``: a submission that
    calls it otherwise (``posix._exit``) is told by its exit code alone."""
    if WAITING[0] and type(status) is int:
        try:
            tb, f, own = None, sys._getframe(1), _frames.__code__.co_filename
            while f is not None and f.f_code.co_filename != own:  # the caller's frames up to the child's own (the
                tb, f = types.TracebackType(tb, f, f.f_lasti, f.f_lineno), f.f_back  # handler's) as a traceback
            exc = SystemExit(status)
            exc.__traceback__ = tb  # (the frames of this stack, not the submission's objects)
            if (said := _waiting_failure(exc, WAITING_DIR[0], f"os._exit({status})")) is not None:
                os.write(2, f"gradcheck sandbox: {said}\n".encode("utf-8", "backslashreplace"))
        except BaseException:  # noqa: BLE001 - the exit is the submission's: it happens whatever this could read
            pass
    _OS_EXIT(status)


#: the folder of the submission's files (set by :func:`_run`), where :func:`_exit_said` reads where it was called
WAITING_DIR = [""]


def _waiting_failure(exc, workdir, head=None):
    """What ``exc`` is when code other than the child's own raised it while the child waited for a request: a signal
    handler of the submission's (a timer's, after ``signal.setitimer``; the only code of the submission's that runs
    between requests), which Python runs where the child's read of the pipe was interrupted. ``"waiting: TYPE:
    MESSAGE (at FILE:LINE in FUNCTION; the handler of SIGNAME)"`` (:func:`_error`'s report; the signal read from the
    handler's own arguments, ``(signum, frame)``, as plain ints; ``head`` in place of ``TYPE: MESSAGE`` when given:
    :func:`_exit_said`'s ``os._exit(N)``), or None when every frame of its traceback is the child's (its own
    failure: :func:`_die`'s exit ``INTERNAL_EXIT``). Nothing of the submission's runs here."""
    try:
        own, tb, first = _frames.__code__.co_filename, exc.__traceback__, None
        while tb is not None and first is None:
            first = tb.tb_frame if tb.tb_frame.f_code.co_filename != own else None
            tb = tb.tb_next
        if first is None:
            return None
        code, sig = first.f_code, None
        names = code.co_varnames[:code.co_argcount + bool(code.co_flags & 0x04)]  # positional, then *args
        for name in names:
            v = dict.get(first.f_locals, name) if type(first.f_locals) is dict else None
            v = v[0] if type(v) is tuple and v else v
            if type(v) is int and 0 < v < signal.NSIG:
                try:
                    sig = signal.Signals(v).name
                except ValueError:  # a real-time signal
                    sig = f"signal {v}"
                break
        report = _error(exc, workdir)
        where = f"at {report['where']}" if report["where"] else ""
        how = "; ".join(w for w in (where, f"the handler of {sig}" if sig else "") if w)
        said = head or report["type"] + (f": {report['message']}" if report["message"] else "")
        return f"waiting: {said}" + (f" ({how})" if how else "")
    except BaseException:  # noqa: BLE001 - a frame or traceback the submission forged: said without detail
        return "waiting: an exception of the submission's code"


def _preload(cfg):
    """numpy (with numpy.random) and the adapters' module (its code read from ``cfg["fd_adapters"]``): what
    every child imports before any submitted code runs; ``sys.path`` must be set."""
    import numpy as np  # after sys.path is set
    import numpy.random  # noqa: F401 - part of starting up (used to build layers' rng)
    AD = types.ModuleType("gradcheck_adapters")  # gradcheck/_adapters.py, sent as text like this file
    with open(cfg["fd_adapters"], "rb") as fh:  # compiled by the grader: sandbox._adapters_fd
        magic, code = fh.read(4), fh.read()
    from importlib.util import MAGIC_NUMBER
    if magic != MAGIC_NUMBER:
        raise SystemExit(f"gradcheck's sandbox child runs Python {sys.version.split()[0]} ({sys.executable}), "
                         "whose bytecode differs from the grader's: give Sandbox(python=...) the grader's own version")
    exec(marshal.loads(code), AD.__dict__)  # noqa: S102
    note_copies(np, AD)
    return np, AD


def _run(cfg, np, AD):
    """The child proper, from its limits on: ``sys.path`` and the working folder, the output streams, the
    guards, "ready" (no submitted code has run yet), then the requests until the end of input."""
    # no signal blocked, whatever the grader's process had blocked: a mask is kept across fork and exec, so a sandbox
    # started by a process or thread that blocks SIGALRM ran a submission whose timer never fired (suitetime44)
    _SIG[0](signal.SIG_SETMASK, _SIG[1])
    drop_privileges(cfg)
    install_seccomp(cfg.get("seccomp"))
    out = open(cfg["fd_out"], "wb", closefd=False)

    def send(head, payload=b""):
        for name in ("stdout", "stderr", "__stdout__", "__stderr__"):  # prints before the reply
            try:
                getattr(sys, name).flush()
            except BaseException:  # noqa: BLE001 - a stream replaced or closed by the submission
                pass
        out.write(frame({**head, "rid": REQUEST[0]}, payload))
        out.flush()
    base_path = [p for p in sys.path if p]  # the interpreter's own stdlib (isolated mode, no site)
    # the submission's folder joins sys.path only once the bootstrap's own imports are done and the guards are
    # in (below): numpy's import runs copy.py's `from org.python.core import ...`, which ran a submitted org.py
    # before "ready" and before the guards (tester19g F2)
    sys.path[:] = [*base_path, *cfg["sys_path"]]
    cfg["read_roots"] = [*cfg["read_roots"], *base_path]
    os.chdir(cfg["workdir"])
    if np is None:
        np, AD = _preload(cfg)
    else:  # forked by the zygote, numpy already in memory: a limit it does not fit is the grader's setup, as
        _fits_address_space()  # a child started anew that could not import numpy under it
    try:  # each printed line reaches the parent at once, also from code that hangs or is killed later
        sys.stdout.reconfigure(line_buffering=True)
    except (AttributeError, ValueError):
        pass
    limit = cfg.get("output_limit", 65536)
    sys.stdout, sys.stderr = _Tail(sys.stdout, limit), _Tail(sys.stderr, limit)
    import socket  # the parent's memory files come over it (SCM_RIGHTS); made before the hook refuses sockets
    sock = socket.socket(fileno=cfg["fd_shared"]) if cfg.get("fd_shared") is not None else None
    install_guards(cfg)
    WAITING_DIR[0], os._exit = cfg["workdir"], _exit_said  # an os._exit while the child waits is said (_exit_said)
    sys.path.insert(0, cfg["workdir"])  # the submission's modules: importable from now on, under the guards

    def reply(ok, meta=None, packer=None, error=None):
        error = {} if error is None else {"error": error}
        send({"ok": ok, "meta": meta or {}, **error}, packer.payload() if packer else b"")
    gc.freeze()  # what the child holds before any submitted code runs (numpy, the adapters, this module; none of it
    # garbage): the requests' full collections (Child.counted_dispatch) skip it, ~8 ms each, a collection of the
    # objects made since as before
    reply(True, {"ready": True})  # no submitted code has run yet
    # progress: a frame without "ok", the parent notes the step and keeps waiting for the reply
    Child(np, AD, cfg["workdir"], reply, lambda step, done=None: send({"progress": step, "done": done}),
          sock).serve(cfg["fd_in"])


def _fits_address_space():
    """MemoryError when this process's address space is already above its limit (``RLIMIT_AS``)."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    with open("/proc/self/status", encoding="ascii") as fh:
        kib = next((int(line.split()[1]) for line in fh if line.startswith("VmSize:")), 0)
    if limit != resource.RLIM_INFINITY and kib << 10 > limit:
        raise MemoryError(f"the interpreter and numpy use {kib >> 10} MiB of address space, above the limit of "
                          f"{limit >> 20} MiB")


def _public(cfg):
    """What ``sys.argv[1]`` keeps of the configuration: its pipes' descriptor numbers (no secret: a process can find
    its own descriptors), never a path (tester19g F9: the folders the guard refuses named the course's files)."""
    return json.dumps({k: cfg[k] for k in ("fd_in", "fd_out") if k in cfg})


def main():
    """The child's entry point: read the configuration (``argv[1]``, or the file its ``fd_config``
    descriptor holds), leave only its public part in ``sys.argv``, then run the zygote (a fork
    server) or the request loop.
    """
    cfg = json.loads(sys.argv[1])
    if "fd_config" in cfg:  # the configuration (host paths: the folders the guard refuses) read from a file given
        with open(cfg["fd_config"], "rb") as fh:  # by descriptor, closed now: never on the command line, which the
            cfg = json.loads(fh.read())  # submission reads in /proc/self/cmdline (tester19g F9)
    sys.argv[1:] = [_public(cfg)]
    if cfg.get("zygote"):
        return zygote(cfg)
    _run(cfg, None, None)


#: The zygote's messages to its parent and the parent's requests: one JSON object per SOCK_SEQPACKET message.
ZYGOTE_MESSAGE = 1 << 20


def zygote(cfg):
    """A pre-imported process that forks one fresh child per sandbox (``gradcheck._zygote.Zygote`` started by
    ``sandbox._zygote_for``, ``gradcheck check``).

    It imports numpy and the adapters once, runs no submitted code and installs no guard; each request (a child's
    configuration, its request, reply and output pipes as passed file descriptors, its environment) forks, by
    :func:`fork_server`, a child that takes those pipes as its only descriptors besides /dev/null, clears and sets
    its environment, draws new random seeds and runs :func:`_run` as a child started anew does (limits, guards,
    "ready"). Its children are reaped only when the parent releases them (``cfg["reap_on_release"]``).
    """
    base_path = [p for p in sys.path if p]
    sys.path[:] = [*base_path, *cfg["sys_path"]]
    np, AD = _preload(cfg)
    sys.path[:] = base_path  # each child sets its own, as one started anew
    fork_server(cfg["fd_sock"], functools.partial(_sandbox_fork, np, AD), cfg["reap_on_release"])


def fork_server(fd_sock, child, reap_on_release):
    """The one reply loop of both zygotes (the sandbox's, :func:`zygote`, and the grader's,
    ``gradcheck.grading.zygote``), the other end of ``gradcheck._zygote.Zygote``: "ready", then per request on the
    SOCK_SEQPACKET socket ``fd_sock`` (a JSON object with its ``id``, and passed descriptors) one fork that runs
    ``child(req, fds, enter)`` (:func:`_fork_one`); it tells the child's pid once its session exists, and its exit
    status. ``reap_on_release``: reap a child only when the parent releases it (``{"release": id}``), so that the pid
    (and its process group) the parent may signal stays that child's; else at once when its exit is told. At the end
    of the socket (the parent is gone) it kills its children's process groups and ends."""
    import select
    import signal
    import socket
    sock = socket.socket(fileno=fd_sock)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *a: None)
    kids = {}  # pid -> [request id, exit reported, released]

    def say(msg):
        sock.send(json.dumps(msg).encode())
    say({"ready": True})
    while True:
        ready = select.select([sock, wake_r], [], [])[0]
        if wake_r in ready:
            os.read(wake_r, 4096)
        for pid, kid in list(kids.items()):
            if not kid[1]:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                if info is not None:  # a zombie until reaped: its pid is not reused meanwhile
                    kid[1] = True
                    dead = info.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
                    say({"id": kid[0], "exit": -info.si_status if dead else info.si_status})
            if kid[1] and (kid[2] or not reap_on_release):
                os.waitpid(pid, 0)
                del kids[pid]
        if sock not in ready:
            continue
        msg, fds, _, _ = socket.recv_fds(sock, ZYGOTE_MESSAGE, 8)
        if not msg:  # the parent is gone: end what it started
            for pid in kids:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            os._exit(0)
        req = json.loads(msg)
        if "release" in req:
            for kid in kids.values():
                kid[2] = kid[2] or kid[0] == req["release"]
            for fd in fds:
                os.close(fd)
            os.write(wake_w, b"r")  # reap on the next turn if it has ended
            continue
        pid = _fork_one(req, fds, (sock, wake_r, wake_w, kids), child)
        kids[pid] = [req["id"], False, False]
        say({"id": req["id"], "pid": pid})
        del req, msg, fds


def _fork_one(req, fds, own, child):
    """Fork one child of a zygote for the request ``req`` with the passed descriptors ``fds`` (closed here in the
    zygote); ``own``: the zygote's socket, wake-up pipe and children. The fork runs ``child(req, fds, enter)``,
    which calls ``enter()`` first (the zygote's descriptors closed and its children forgotten, a session of its
    own) and never returns. Returns its pid once its session exists: a kill of its group reaches it."""
    import signal
    sid_r, sid_w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(sid_w)
        os.read(sid_r, 1)  # its own session exists before its pid is told
        os.close(sid_r)
        for fd in fds:
            os.close(fd)
        return pid

    def enter():
        sock, wake_r, wake_w, kids = own
        kids.clear()  # nothing of another child
        for fd in (sock.detach(), wake_r, wake_w, sid_r):
            os.close(fd)
        os.setsid()
        os.close(sid_w)
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # (SIGPIPE stays ignored, as Python sets it)
        child(req, fds, enter)
    finally:
        os._exit(INTERNAL_EXIT)  # never back into the zygote's loop


def _sandbox_fork(np, AD, req, fds, enter):
    """A sandbox child forked by :func:`zygote` for the request ``req`` with the passed pipes ``fds`` (request,
    reply, output; then the socket of the shared inputs, when the parent sends one): as a child started anew."""
    try:
        enter()
        fd_in, fd_out, fd_err, *shared = fds  # and the socket the parent's shared inputs come through, if any
        null = os.open(os.devnull, os.O_RDONLY)
        for fd, to in ((null, 0), (fd_err, 1), (fd_err, 2)):
            os.dup2(fd, to)
        keep = [2, *sorted((fd_in, fd_out, *shared)), 1 << 20]
        for lo, hi in zip(keep, keep[1:]):
            os.closerange(lo + 1, hi)
        cfg = req["cfg"]
        cfg["fd_in"], cfg["fd_out"] = fd_in, fd_out
        cfg["fd_shared"] = shared[0] if shared else None
        os.environ.clear()
        os.environ.update(req["env"])
        if "tempfile" in sys.modules:
            sys.modules["tempfile"].tempdir = None  # TMPDIR read again
        sys.argv[1:] = [_public(cfg)]  # the configuration's host paths are not left where the submission reads them
        np.random.seed()  # fresh draws, as a process started anew (Python's random reseeds itself at fork)
        _run(cfg, np, AD)
    except BaseException as exc:  # noqa: BLE001 - as the bootstrap of a child started anew
        _die(f"{type(exc).__name__} in the sandbox's own code" + (f": {exc}" if str(exc) else ""))
    try:
        import atexit
        atexit._run_exitfuncs()  # the end of input: the child ends as a process started anew would
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except BaseException as _exc:  # noqa: BLE001 - every student call is wrapped: this is the bootstrap's own
        _die(f"{type(_exc).__name__} in the sandbox's own code" + (f": {_exc}" if str(_exc) else ""))
