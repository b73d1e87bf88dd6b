"""Bootstrap of a sandbox child process (see :mod:`gradcheck.sandbox`).

This file is never imported by gradcheck. :class:`gradcheck.sandbox.Sandbox`
reads it as text and runs it with ``python -I -S -c <source> <config JSON>``,
so the child has no path into this repository: ``sys.path`` is set below to
the submission's temporary folder, the standard library and the
site-packages folders the parent names (for numpy), with no ``.pth`` processing
(``-S``), so an editable install of backprop-lab is not importable.

Only the standard library and numpy may be used here. The child is untrusted
once student code has run: everything it sends is data that the parent
validates, and nothing the parent decides (references, tolerances, verdicts)
ever lives here.

Wire format, both directions: ``b"GCSB"``, a 4-byte header length, an 8-byte
payload length (big-endian), a JSON header, then the payload. Arrays travel as
raw little-endian buffers described in the header (``dtype`` from a short list
of numeric types, ``shape``, ``offset``, ``nbytes``); nothing is pickled.
"""

import json
import os
import struct
import sys
import traceback

MAGIC = b"GCSB"
#: Exit code of a child whose own bootstrap failed (not the submission's code): the parent says so.
INTERNAL_EXIT = 70
ALLOWED_DTYPES = ("|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8")
BLOCKED_PACKAGES = ("gradcheck", "manualprop", "autoprop")
_FORBIDDEN_EVENTS = {
    "os.fork": "starting processes (os.fork)",
    "os.forkpty": "starting processes (os.forkpty)",
    "os.posix_spawn": "starting processes (os.posix_spawn)",
    "os.spawn": "starting processes (os.spawn*)",
    "os.exec": "replacing the process (os.exec*)",
    "os.system": "running shell commands (os.system)",
    "subprocess.Popen": "starting processes (subprocess)",
    "pty.spawn": "starting processes (pty.spawn)",
    "os.kill": "sending signals (os.kill)",
    "os.killpg": "sending signals (os.killpg)",
    "os.symlink": "creating links (os.symlink)",
    "os.link": "creating links (os.link)",
    "socket.__new__": "network access (socket)",
    "socket.connect": "network access (socket)",
    "socket.bind": "network access (socket)",
    "ctypes.dlopen": "loading C libraries (ctypes)",
    "ctypes.dlsym": "loading C symbols (ctypes)",
    "ctypes.call_function": "calling C functions (ctypes)",
    "ctypes.cdata": "reading raw memory (ctypes)",
    "ctypes.addressof": "reading raw memory (ctypes)",
    "sys.addaudithook": "installing audit hooks",
    "gc.get_objects": "inspecting the interpreter's objects (gc)",
    "gc.get_referrers": "inspecting the interpreter's objects (gc)",
    "gc.get_referents": "inspecting the interpreter's objects (gc)",
    "resource.prlimit": "changing process limits (prlimit)",
}
_PATH_EVENTS = {"os.listdir": 0, "os.scandir": 0, "os.chdir": 0, "os.mkdir": 0, "os.remove": 0,
                "os.rmdir": 0, "os.rename": 0, "os.chmod": 0, "os.truncate": 0, "os.utime": 0,
                "shutil.rmtree": 0, "shutil.copyfile": 1, "shutil.move": 1}
_WRITE_EVENTS = {"os.mkdir", "os.remove", "os.rmdir", "os.rename", "os.chmod", "os.truncate", "os.utime",
                 "shutil.rmtree", "shutil.copyfile", "shutil.move"}


# --------------------------------------------------------------------------- wire


def _read_exact(fd, n):
    chunks = []
    while n:
        b = os.read(fd, min(n, 1 << 20))
        if not b:
            raise EOFError
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def read_frame(fd):
    head = _read_exact(fd, 16)
    if head[:4] != MAGIC:
        raise EOFError
    hlen, plen = struct.unpack(">IQ", head[4:])
    header = json.loads(_read_exact(fd, hlen).decode("utf-8"))
    payload = _read_exact(fd, plen) if plen else b""
    return header, payload


def write_frame(fd, header, payload=b""):
    hb = json.dumps(header).encode("utf-8")
    data = MAGIC + struct.pack(">IQ", len(hb), len(payload)) + hb + payload
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class Packer:
    """Collects arrays into one payload; ``ref`` returns the JSON stand-in for an array."""

    def __init__(self, np):
        self.np = np
        self.parts = []
        self.offset = 0

    def ref(self, arr):
        np = self.np
        a = np.ascontiguousarray(arr)
        if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big"):
            a = a.astype(a.dtype.newbyteorder("<"))
        b = a.tobytes()
        desc = {"__nd__": True, "dtype": a.dtype.str, "shape": list(a.shape), "offset": self.offset,
                "nbytes": len(b)}
        self.parts.append(b)
        self.offset += len(b)
        return desc

    def payload(self):
        return b"".join(self.parts)


def unpack(np, obj, payload):
    """Replace array stand-ins in a decoded header by arrays (the parent is trusted here)."""
    if isinstance(obj, dict):
        if obj.get("__nd__"):
            buf = payload[obj["offset"]:obj["offset"] + obj["nbytes"]]
            return np.frombuffer(buf, dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()
        return {k: unpack(np, v, payload) for k, v in obj.items()}
    if isinstance(obj, list):
        return [unpack(np, v, payload) for v in obj]
    return obj


def describe(np, packer, value, depth=0):
    """Describe a value returned by student code: an array, a scalar, None, a tuple, or another type."""
    if value is None:
        return {"kind": "none"}
    if isinstance(value, np.ndarray):
        a = np.asarray(value).view(np.ndarray)
        if a.dtype.kind in "biuf" and a.dtype.itemsize <= 8:
            return {"kind": "array", "type": type(value).__name__, "array": packer.ref(a)}
        return {"kind": "badarray", "type": type(value).__name__, "dtype": str(a.dtype), "shape": list(a.shape)}
    if type(value) in (float, int) or (isinstance(value, np.generic) and np.asarray(value).dtype.kind in "biuf"):
        return {"kind": "scalar", "type": type(value).__name__,
                "array": packer.ref(np.asarray(value).view(np.ndarray).astype(np.float64))}
    if type(value) in (tuple, list) and depth == 0:
        return {"kind": type(value).__name__, "length": len(value),
                "items": [describe(np, packer, v, 1) for v in value[:64]]}
    return {"kind": "other", "type": type(value).__name__}


# --------------------------------------------------------------------------- guards


def install_guards(cfg):
    """Block imports of the course packages and, by audit hook, file access outside the allowed folders."""
    import importlib.abc

    allow = tuple(cfg.get("allow", ()))  # tape mode: autoprop/manualprop importable
    blocked = tuple(p for p in BLOCKED_PACKAGES if p not in allow) + tuple(cfg.get("blocked", ()))

    class _Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):  # noqa: ARG002
            if name.split(".")[0] in blocked:
                what = ("the course packages (gradcheck, manualprop, autoprop) are not available to submissions"
                        if name.split(".")[0] in BLOCKED_PACKAGES else "this assignment does not allow it")
                raise ImportError(f"No module named {name!r} in the grading sandbox: {what}.", name=name)
            return None

    sys.meta_path.insert(0, _Blocker())
    for name in list(sys.modules):
        if name.split(".")[0] in blocked:
            del sys.modules[name]

    # Decisions must not depend on anything the submission can patch (posixpath.abspath, os.path.realpath,
    # builtins): the path is resolved here with primitives captured now, on exact str/bytes only.
    import _stat
    import posix

    lstat, readlink, getcwd, S_ISLNK = posix.lstat, posix.readlink, posix.getcwd, _stat.S_ISLNK
    _any, _str, _bytes, _int, _type, _len = any, str, bytes, int, type, len

    def realpath(path):
        if not path.startswith("/"):
            path = getcwd() + "/" + path
        todo = path.split("/")[::-1]
        out = []
        links = 0
        while todo:
            c = todo.pop()
            if c == "" or c == ".":
                continue
            if c == "..":
                if out:
                    out.pop()
                continue
            cand = "/" + "/".join(out + [c])
            try:
                st = lstat(cand)
            except OSError:
                out.append(c)
                continue
            if S_ISLNK(st.st_mode):
                links += 1
                if links > 40:
                    return "/\x00too-many-links"
                target = readlink(cand)
                if target.startswith("/"):
                    out = []
                todo.extend(target.split("/")[::-1])
            else:
                out.append(c)
        return "/" + "/".join(out)

    sep = "/"
    work = realpath(cfg.get("writable") or cfg["workdir"])
    read_roots = tuple(realpath(p) for p in cfg["read_roots"]) + (work, realpath(cfg["workdir"]))
    deny_roots = tuple(realpath(p) for p in cfg["deny_roots"])
    read_files = ("/dev/null", "/dev/urandom", "/dev/zero")
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def under(path, roots):
        return _any(path == r or path.startswith(r + sep) for r in roots)

    def allowed(path, write):
        t = _type(path)
        if t is _int:
            return True
        if t is _bytes:
            path = path.decode("utf-8", "surrogateescape")
        elif t is not _str:  # a path-like object could answer differently to the hook and to open()
            return False
        if "\x00" in path:
            return False
        p = realpath(path)
        if under(p, deny_roots):
            return False
        if p in read_files:
            return not write or p == "/dev/null"
        if write:
            return under(p, (work,))
        return under(p, read_roots)

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            write = bool(mode and any(c in mode for c in "wax+")) or bool((flags or 0) & write_flags)
            if not allowed(path, write):
                raise PermissionError(
                    f"the grading sandbox does not allow {'writing' if write else 'reading'} {path!r}: "
                    f"a submission may {'write only into its own folder' if write else 'read only its own files'}"
                )
        elif event in _FORBIDDEN_EVENTS:
            raise PermissionError(f"the grading sandbox does not allow {_FORBIDDEN_EVENTS[event]}")
        elif event in _PATH_EVENTS:
            path = args[_PATH_EVENTS[event]] if args else None
            if path is not None and not allowed(path, event in _WRITE_EVENTS):
                raise PermissionError(f"the grading sandbox does not allow {event} on {path!r}")

    sys.addaudithook(hook)


# --------------------------------------------------------------------------- student calls


def _where(exc, workdir):
    """``student.py:12 in forward`` and the source line, for the innermost frame in the submission."""
    work = os.path.realpath(workdir) + os.sep
    frames = [] if isinstance(exc, SyntaxError) else traceback.extract_tb(exc.__traceback__)
    for fr in reversed(frames):
        fn = os.path.realpath(fr.filename) if fr.filename and not fr.filename.startswith("<") else ""
        if fn.startswith(work):
            return f"{fn[len(work):]}:{fr.lineno} in {fr.name}", (fr.line or "").strip()
    if isinstance(exc, SyntaxError) and exc.filename:
        fn = os.path.realpath(exc.filename)
        rel = fn[len(work):] if fn.startswith(work) else os.path.basename(exc.filename)
        return f"{rel}, line {exc.lineno}", (exc.text or "").strip()
    return "", ""


def _error(exc, workdir):
    try:
        msg = str(exc).strip()
    except BaseException:  # noqa: BLE001
        msg = "(the exception's message could not be printed)"
    if isinstance(exc, SyntaxError) and exc.msg:
        msg = str(exc.msg)
    where, line = _where(exc, workdir)
    return {"type": type(exc).__name__, "message": msg.splitlines()[0][:500] if msg else "",
            "where": where, "line": line[:200], "syntax": isinstance(exc, SyntaxError)}


class _spy_escapes:
    """Where the student's code turns a tracked Tensor into a numpy array (``cols[:, i] = X``,
    ``np.asarray(X)``): autoprop notes the escape in ``tape._escapes``; this names the line."""

    def __init__(self, ap, srcs, workdir):
        self.ap, self.names = ap, {id(t): k for k, t in srcs.items()}
        self.work = os.path.realpath(workdir) + os.sep

    def on(self, tape, escapes, fn, *args, **kw):
        cls, spy = self.ap.Tensor, self
        orig = cls.__array__

        def __array__(t, *a, **k):
            n = len(getattr(tape, "_escapes", None) or ())
            v = orig(t, *a, **k)
            f = sys._getframe(1)
            path = os.path.realpath(f.f_code.co_filename)
            where = f"{path[len(spy.work):]}:{f.f_lineno} in {f.f_code.co_name}"
            if (len(getattr(tape, "_escapes", None) or ()) > n and path.startswith(spy.work) and len(escapes) < 8
                    and all(e["where"] != where for e in escapes)):
                import linecache

                escapes.append({"tensor": spy.names.get(id(t), ""), "line": linecache.getline(path, f.f_lineno)
                                .strip()[:200], "where": where})
            return v
        cls.__array__ = __array__
        try:
            return fn(*args, **kw)
        finally:
            cls.__array__ = orig


def tape_request(np, obj, req, reply, packer, describe_fn, workdir):
    """Run ``obj.forward`` on autoprop tensors under a GradientTape; reply with Y and VJPs.

    ``req``: ``inputs``, ``params`` (values to set first), ``training``, ``gs`` (one
    upstream gradient per VJP wanted; a persistent tape serves them all). Reply
    ``{"value": Y, "grads": [{"in0": ..., "W": ...}, ...], "unconnected": [...]}``;
    a failure replies ``stage="tape"`` with the error (an unsupported numpy function
    names itself in the TypeError) or ``stage="tape-left"`` (forward returned no Tensor).
    """
    try:
        import autoprop as ap
    except BaseException as exc:  # noqa: BLE001
        reply(False, {"stage": "tape"}, error=_error(exc, workdir))
        return
    own = getattr(obj, "params", None)
    own = own if isinstance(own, dict) else {}
    for k, v in (req.get("params") or {}).items():
        if isinstance(own.get(k), np.ndarray) and own[k].shape == v.shape and own[k].flags.writeable:
            own[k][...] = v
    saved = dict(own)
    kw = {} if req.get("training") is None else {"training": req["training"]}
    xs = [ap.constant(np.array(x, copy=True)) for x in req["inputs"]]
    srcs = {f"in{i}": x for i, x in enumerate(xs) if x.dtype.kind == "f"}
    tensors = {k: ap.constant(np.array(v, copy=True)) for k, v in saved.items()
               if isinstance(v, np.ndarray) and v.dtype.kind == "f"}
    srcs.update(tensors)
    escapes, spy_off = [], _spy_escapes(ap, srcs, workdir)
    try:
        own.update(tensors)
        with ap.GradientTape(persistent=True) as tape:
            for t in srcs.values():
                tape.watch(t)
            Y = spy_off.on(tape, escapes, obj.forward, *xs, **kw)
        if escapes:
            reply(False, {"stage": "tape-escape", "escapes": escapes})
            return
        if not isinstance(Y, ap.Tensor):
            reply(False, {"stage": "tape-left", "type": type(Y).__name__})
            return
        out = []
        unconnected = set(srcs)
        for g in req.get("gs") or []:
            grads = tape.gradient(Y, srcs, output_gradients=ap.constant(g))
            item = {}
            for k, v in grads.items():
                if v is not None:
                    unconnected.discard(k)
                    item[k] = describe_fn(np, packer, np.asarray(v.numpy(), dtype=np.float64))
            out.append(item)
        reply(True, {"value": describe_fn(np, packer, np.asarray(Y.numpy(), dtype=np.float64)), "grads": out,
                     "unconnected": sorted(unconnected)}, packer)
    except BaseException as exc:  # noqa: BLE001
        reply(False, {"stage": "tape"}, error=_error(exc, workdir))
    finally:
        own.update(saved)
        try:  # leave a numpy cache behind for a later backward
            obj.forward(*[np.array(x, copy=True) for x in req["inputs"]], **kw)
        except BaseException:  # noqa: BLE001
            pass


def drop_privileges(cfg):
    """Namespaces sandbox: become the dedicated uid (no groups, no capabilities) and set the limits.

    Runs before anything else, so no submitted code ever runs with the grader's uid or
    without its limits. A failure is the bootstrap's own (exit ``INTERNAL_EXIT``).
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
    if cfg.get("limits"):
        import resource

        for res, soft, hard in cfg["limits"]:
            try:
                resource.setrlimit(res, (soft, hard))
            except (ValueError, OSError):  # above this machine's hard limit: keep the lower one
                resource.setrlimit(res, (min(soft, resource.getrlimit(res)[1]), resource.getrlimit(res)[1]))


class Child:
    """The request loop's state and one method per request (``op_load``, ``op_forward``, ...).

    Each method replies exactly once; a failure of the submission's code replies ``stage="call"``.
    """

    def __init__(self, np, AD, workdir, reply, progress=None):
        self.np, self.AD, self.workdir, self.reply = np, AD, workdir, reply
        self.objects = {}
        self.progress = progress or (lambda step: None)
        self.step = None

    def enter(self, step):
        """Tell the parent which step of a load runs now (so a hang or an exit is blamed on it)."""
        self.step = step
        self.progress(step)

    def fail(self, exc, stage="call", **meta):
        self.reply(False, {"stage": stage, **meta}, error=_error(exc, self.workdir))

    def set_params(self, obj, params):
        own = getattr(obj, "params", None)
        for k, v in (params or {}).items():
            target = own.get(k) if isinstance(own, dict) else None
            if isinstance(target, self.np.ndarray) and target.shape == v.shape and target.flags.writeable:
                target[...] = v
            elif isinstance(own, dict):
                own[k] = v

    def params_of(self, obj, packer):
        params = getattr(obj, "params", None)
        if params is None:
            return {"kind": "absent"}
        if not isinstance(params, dict):
            return {"kind": "other", "type": type(params).__name__}
        items = {}
        for k, v in list(params.items())[:256]:
            items[str(k)] = {"key_type": type(k).__name__, **describe(self.np, packer, v, 1)}
            if isinstance(v, self.np.ndarray):  # the copy sent back has its own memory: the parent checks the layout
                items[str(k)]["layout"] = [list(v.shape), list(v.strides), v.itemsize]
        return {"kind": "dict", "items": items}

    @staticmethod
    def scalars_of(obj):
        items = list(getattr(getattr(obj, "obj", obj), "__dict__", {}).items())[:200]  # an adapter's student
        return {k: v if not isinstance(v, str) else v[:200] for k, v in items
                if isinstance(k, str) and not k.startswith("_") and type(v) in (int, float, str, bool)}

    def _module(self, file):
        import importlib.util

        path = os.path.join(self.workdir, file)
        stem = os.path.splitext(os.path.basename(path))[0]
        mod = sys.modules.get(stem)
        if mod is None or getattr(mod, "__file__", None) != path:
            spec = importlib.util.spec_from_file_location(stem, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[stem] = mod
            try:
                spec.loader.exec_module(mod)
            except BaseException:
                sys.modules.pop(stem, None)
                raise
        return mod

    def op_load(self, req, packer):
        import inspect

        AD = self.AD
        self.enter("import")
        try:
            mod = self._module(req["file"])
        except BaseException as exc:  # noqa: BLE001
            return self.fail(exc, "import")
        if req.get("class") is None:  # import only (Sandbox.import_file): a later load reuses the module
            return self.reply(True, {"stage": "import"})
        try:  # NAME in the module: a class or a CS231n function pair (gradcheck/_adapters.py)
            kind, target = AD.find(mod, req["class"])
        except AD.AdapterError as exc:
            return self.reply(False, {"stage": "class", "message": str(exc)})
        if kind == "functions" and req.get("kind") != "layer":
            return self.reply(False, {"stage": "class", "message": f"{req['class']} is a CS231n function pair; a "
                                      "loss is a class: forward(y_true, y_pred) -> float, backward() -> dy_pred."})
        try:
            sig_text = f"{target.__name__}{inspect.signature(target)}" if kind == "class" else ""
        except (TypeError, ValueError):
            sig_text = target.__name__
        self.enter("constructor")
        try:
            obj = AD.build(kind, target, req.get("init"), req.get("seed"))
        except BaseException as exc:  # noqa: BLE001
            return self.fail(exc, "init", signature=sig_text)
        AD.on_step = self.enter  # the probe's forward and backward calls
        try:  # the adapter's probe runs student code: its own failures are the check's to report
            obj, info = AD.adapt(obj, req.get("probe")) if req.get("kind") == "layer" else (obj, {})
        except AD.AdapterError as exc:
            return self.reply(False, {"stage": "protocol", "message": str(exc)})
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt from the probed forward/backward
            return self.fail(exc, "probe", step=self.step)
        finally:
            AD.on_step = None
        fparams, shape = AD.signature(obj)  # how forward and backward are called (usage errors)
        oid = str(len(self.objects))
        self.objects[oid] = obj
        methods = sorted(m for m in dir(obj) if not m.startswith("_") and callable(getattr(obj, m, None)))
        self.reply(True, {"id": oid, "params": self.params_of(obj, packer), "scalars": self.scalars_of(obj),
                          "methods": methods, "forward_params": fparams, "signature": shape, "protocol": info,
                          "class": getattr(obj, "class_name", None) or type(obj).__name__}, packer)

    def op_forward(self, obj, req, packer):
        np = self.np
        self.set_params(obj, req.get("params"))
        kw = {} if req.get("training") is None else {"training": req["training"]}
        before = [x.copy() for x in req["inputs"]]
        try:
            out = obj.forward(*req["inputs"], **kw)
        except BaseException as exc:  # noqa: BLE001
            return self.fail(exc)
        mutated = [i for i, (a, b) in enumerate(zip(before, req["inputs"]))
                   if not (isinstance(b, np.ndarray) and a.shape == b.shape
                           and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))]
        self.reply(True, {"value": describe(np, packer, out), "mutated": mutated}, packer)

    def op_forward_many(self, obj, req, packer):
        kw = {} if req.get("training") is None else {"training": req["training"]}
        values, prev = [], None
        edits = req.get("edits") or [()] * len(req["batches"])
        for inputs, params, edit in zip(req["batches"], req["params_list"], edits):
            inputs = prev if inputs is None else inputs  # None: the previous inputs again
            prev = inputs
            self.set_params(obj, params)
            undo = []
            try:
                for k, i, v in edit:  # one element set for this forward only
                    target = obj.params[k]
                    undo.append((target, i, target.flat[i].copy()))
                    target.flat[i] = v
                values.append(describe(self.np, packer, obj.forward(*[x.copy() for x in inputs], **kw)))
            except BaseException as exc:  # noqa: BLE001
                return self.fail(exc, index=len(values))
            finally:
                for target, i, old in reversed(undo):
                    target.flat[i] = old
        self.reply(True, {"values": values}, packer)

    def op_backward(self, obj, req, packer):
        try:
            ret = obj.backward(*([req["dY"]] if req.get("dY") is not None else []))
        except BaseException as exc:  # noqa: BLE001
            return self.fail(exc)
        grads = getattr(obj, "grads", None)
        if isinstance(grads, dict):
            gdesc = {"kind": "dict", "items": {str(k): describe(self.np, packer, v, 1)
                                               for k, v in list(grads.items())[:256]}}
        else:
            gdesc = {"kind": "absent" if grads is None else "other", "type": type(grads).__name__}
        self.reply(True, {"value": describe(self.np, packer, ret), "grads": gdesc,
                          "params": self.params_of(obj, packer)}, packer)

    def op_clone(self, obj, req, packer):
        """A deep copy of ``obj`` (its caches and state as they are now) as a new object, ``params`` set."""
        import copy

        try:
            new = copy.deepcopy(obj)
            self.set_params(new, req.get("params"))
        except BaseException as exc:  # noqa: BLE001 - e.g. a student's __deepcopy__, an uncopyable attribute
            return self.fail(exc)
        oid = str(len(self.objects))
        self.objects[oid] = new
        self.reply(True, {"id": oid, "params": self.params_of(new, packer)}, packer)

    def op_free(self, obj, req, packer):  # noqa: ARG002 - a copy the parent no longer uses
        self.objects.pop(req["id"], None)
        self.reply(True)

    def op_tape(self, obj, req, packer):  # tape mode: the student's forward on autoprop tensors
        tape_request(self.np, obj, req, self.reply, packer, describe, self.workdir)

    def op_get_params(self, obj, req, packer):  # noqa: ARG002
        self.reply(True, {"params": self.params_of(obj, packer), "scalars": self.scalars_of(obj)}, packer)

    def serve(self, fd_in):
        """Answer requests until ``close`` or end of input."""
        while True:
            try:
                header, payload = read_frame(fd_in)
            except EOFError:
                return
            except BaseException as exc:  # noqa: BLE001 - e.g. MemoryError: the request could not be read
                print(f"gradcheck sandbox: {type(exc).__name__} while receiving a request"
                      + (f": {exc}" if str(exc) else ""), file=sys.stderr)
                sys.stderr.flush()
                os._exit(INTERNAL_EXIT)
            op = header.get("op")
            try:  # the grader's side: a failure here is never the submission's fault
                req = unpack(self.np, header.get("args", {}), payload)
            except BaseException as exc:  # noqa: BLE001 - e.g. MemoryError for very large inputs
                payload = header = None
                self.fail(exc, "grader")
                continue
            payload = None
            packer = Packer(self.np)
            if op == "close":
                self.reply(True)
                return
            try:
                fn = getattr(self, f"op_{op}", None) if isinstance(op, str) else None
                if fn is None:
                    self.reply(False, {"stage": "protocol"},
                               error={"type": "ValueError", "message": f"unknown op {op!r}"})
                elif op == "load":
                    fn(req, packer)
                else:
                    fn(self.objects[req["id"]], req, packer)
            except BaseException as exc:  # noqa: BLE001 - e.g. MemoryError while packing a reply
                packer = req = None
                self.fail(exc, "child")  # "where" empty: not student code


def main():
    cfg = json.loads(sys.argv[1])
    drop_privileges(cfg)
    fd_in, fd_out = cfg["fd_in"], cfg["fd_out"]
    # Wait for the parent's go-ahead: it sets this process's resource limits first.
    read_frame(fd_in)
    base_path = [p for p in sys.path if p]  # the interpreter's own stdlib (isolated mode, no site)
    sys.path[:] = [cfg["workdir"], *base_path, *cfg["sys_path"]]
    cfg["read_roots"] = [*cfg["read_roots"], *base_path]
    os.chdir(cfg["workdir"])
    import types

    import numpy as np  # after sys.path is set

    AD = types.ModuleType("gradcheck_adapters")  # gradcheck/_adapters.py, sent as text like this file
    exec(compile(cfg["adapters"], "<gradcheck adapters>", "exec"), AD.__dict__)  # noqa: S102
    try:  # each printed line reaches the parent at once, also from code that hangs or is killed later
        sys.stdout.reconfigure(line_buffering=True)
    except (AttributeError, ValueError):
        pass
    install_guards(cfg)

    def reply(ok, meta=None, packer=None, error=None):
        header = {"ok": ok, "meta": meta or {}}
        if error is not None:
            header["error"] = error
        # the submission's prints reach the parent before the reply (stdout is a pipe: block-buffered)
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - a stream replaced or closed by the submission
                pass
        write_frame(fd_out, header, packer.payload() if packer else b"")

    # Started: the interpreter, numpy and the guards are in place, no submitted code has run yet.
    import numpy.random  # noqa: F401 - part of starting up (used to build layers' rng)

    def progress(step):  # a frame without "ok": the parent notes the step and keeps waiting for the reply
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001
                pass
        write_frame(fd_out, {"progress": step})

    reply(True, {"ready": True})
    Child(np, AD, cfg["workdir"], reply, progress).serve(fd_in)


if __name__ == "__main__":
    try:
        main()
    except BaseException as _exc:  # noqa: BLE001 - every student call is wrapped: this is the bootstrap's own
        print(f"gradcheck sandbox: {type(_exc).__name__} in the sandbox's own code"
              + (f": {_exc}" if str(_exc) else ""), file=sys.stderr)
        sys.stderr.flush()
        os._exit(INTERNAL_EXIT)
