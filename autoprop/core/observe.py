"""Breadcrumbs for :meth:`GradientTape.explain`: the tape's observer.

Recording a differentiable operation (``tape.call`` / ``_record``) does no
bookkeeping for ``explain``. This module is called only when something explain may
have to report happens, so a plain training step never enters it:

* a tracked value goes through an operation that passes no gradient (a comparison,
  argmax, round, an integer cast, ``stop_gradient``, ``numpy_function``): :func:`cut_by`
  remembers the output, and :func:`carry_cut` every value computed from it alone;
* a tracked value leaves the tape as a plain array or number (``np.asarray``,
  ``float()``, ``.numpy()``, ``.item()``): :func:`note_escape`;
* a tape that watched tensors explicitly is paused (``stop_recording``) or has exited
  its ``with`` block: it listens weakly to later operations (:func:`watch_ops`,
  :func:`after_op`) to say "computed after the block".

The breadcrumbs live on the tape (``_cuts``, ``_keep``, ``_escapes``), are capped at
:data:`MAX_CRUMBS` each, and are read by :mod:`autoprop.core.diagnose`.
Source: ``lessons/10-gradient-tape.md``.
"""

from __future__ import annotations

import dis
import importlib
import itertools
import linecache
import os
import re
import sys
import warnings
import weakref

import numpy as np
from numpy import dtype as np_dtype

from .tensor import _EXTRA, _FORWARD, _RECORDING, _TRACERS, Tensor, Variable, _next_key

#: Tapes that want to hear about operations they do not record: paused by
#: ``stop_recording`` or exited but still alive (weak references). Empty in a plain
#: training step.
_WATCHERS: list = []
#: Breadcrumbs kept per tape are capped so a long-lived tape cannot grow without bound.
MAX_CRUMBS = 10000
#: :mod:`autoprop.core.registry`, a floor above this module (it is not imported): its numpy
#: dispatch table names the functions autoprop records (:func:`_recorded_numpy_caller`). Set by
#: ``autoprop/core/__init__.py`` once every module has loaded.
_R = None


def cut_by(opname, why, args, out):
    """Breadcrumb: a tracked value went through an operation that passes no gradient.

    Reading a trainable Variable watches it here too (as in TensorFlow), although the
    operation is not recorded, so ``tape.watched_variables()`` lists it.
    """
    for tape in _RECORDING:
        if getattr(tape, "_forward", False):
            continue
        tracked, cuts = tape._tracked, tape._crumbs()
        for a in args:
            if (
                type(a) is Variable
                and tape._watch_accessed
                and a.trainable
                and a._value.dtype.kind in "fc"
                and a._key not in tracked
            ):
                tracked.add(a._key)
                tape._accessed.append(a)
            if isinstance(a, Tensor) and (a._key in tracked or id(a) in cuts):
                if len(cuts) < MAX_CRUMBS:
                    origin = cuts.get(id(a)) or (opname, why, len(tape._nodes))
                    cuts[id(out)] = origin
                    tape._cut_args[id(out)] = (opname, tuple(args))  # backward_source: `z > 0`
                    tape._keep.append(out)
                break


def carry_cut(tape, vjps, args, out):
    """An operation with no tracked input read a value that was cut: the cut travels
    with its output (called only when the tape holds cut breadcrumbs)."""
    cuts = tape._cuts
    cut_from = None
    for i, a in enumerate(args):
        if isinstance(a, Tensor) and vjps[i] is not None and id(a) in cuts:
            cut_from = cuts[id(a)]
    if cut_from is not None and len(cuts) < MAX_CRUMBS:
        cuts[id(out)] = cut_from
        tape._keep.append(out)  # keeps the id valid (a freed id would be reused)


def note_cut(opname, why, inputs, outputs):
    """Record that ``outputs`` were computed from ``inputs`` off the tape (stop_gradient,
    numpy_function): used only by :meth:`GradientTape.explain`."""
    for o in outputs:
        cut_by(opname, why, inputs, o)


#: The conversions that leave the tape *implicitly* (they warn): what gradient() refuses when
#: a value that depends on a requested source left through one of them before the target was
#: made (``diagnose.partial_escape``). ``.numpy()``, ``.item()`` and ``format()`` are the explicit,
#: documented exits (TensorFlow's ``.numpy()``): quiet and never refused. ``int()`` and
#: ``operator.index()`` are piecewise constant (their derivative is 0): nothing can be lost.
IMPLICIT = ("float()", "complex()", "numpy conversion (np.asarray / np.array)", ".tolist()", "pickling")


def note_escape(tensor, how, value, hint=None):
    """Breadcrumb: a tracked tensor's value left the tape (np.asarray, float(), .numpy()).

    The tape keeps ``(how, tensor, value, position, site)``: ``position`` is the number of
    ops recorded so far, ``site`` the user's ``file:line`` for an implicit conversion
    (:data:`IMPLICIT`), else None. ``hint``, what :func:`implicit_escape` found at that line
    (``out[...] = t``, ``a.dot(t)``, a scipy function and its twin), is kept per site in
    ``_escape_hints`` (the first one per line): the refusals of ``tape.gradient`` repeat it
    (:func:`escape_fix`), as a notebook that filters warnings never sees the warning's."""
    site = None
    for tape in _RECORDING:
        if getattr(tape, "_forward", False):
            continue
        if tensor._key in tape._tracked or (tape._cuts and id(tensor) in tape._cuts) or (
                type(tensor) is Variable and tape._watch_accessed and tensor.trainable
                and tensor._value.dtype.kind in "fc"):  # (a Variable it would watch on first use)
            if tape._escapes is None:
                tape._escapes = []
            if site is None and how in IMPLICIT:
                site = _user_site()
            if hint and site:
                if tape._escape_hints is None:
                    tape._escape_hints = {}
                tape._escape_hints.setdefault(site, hint)
            if how in IMPLICIT and getattr(tape, "_escaped_at", 0) is None:
                tape._escaped_at = _next_key()  # (tape._constant_targets: made after it)
            if len(tape._escapes) < MAX_CRUMBS:
                tape._escapes.append((how, tensor, value, len(tape._nodes), site))
            elif how in IMPLICIT and getattr(getattr(value, "dtype", None), "kind", "f") not in "biu":
                _overflow(tape, how, tensor, site)
    if how in IMPLICIT and getattr(getattr(value, "dtype", None), "kind", "f") not in "biu":
        # an open ForwardAccumulator loses the tangent the same way; its refusal reads only the earliest
        # position, so the capped list (the first MAX_CRUMBS, in order) can hide none
        for acc in _FORWARD:
            entry = acc._tangents.get(id(tensor))
            if entry is not None and entry[0] is tensor and len(acc._escapes) < MAX_CRUMBS:
                site = site or _user_site()
                acc._escapes.append((how, tensor, acc._ops, site))
                if hint:
                    acc._escape_hints.setdefault(site, hint)


class EscapedRef:
    """What a tape keeps of a tensor that left it implicitly beyond :data:`MAX_CRUMBS` breadcrumbs: its
    ``_key``, ``shape`` and ``dtype``, not its value (a Variable is kept itself: the model holds it)."""

    __slots__ = ("_key", "shape", "dtype")

    def __init__(self, tensor):
        self._key, self.shape, self.dtype = tensor._key, tensor.shape, tensor.dtype


def _overflow(tape, how, tensor, site):
    """An implicit escape beyond the cap (review25a H2: after 10,000 logged ``.numpy()`` values a real partial
    escape was dropped and ``gradient`` gave [1, 2] for [3, 6]). ``tape._escape_overflow`` keeps one entry per
    tensor, ``[how, tensor or EscapedRef, position, site, count]`` (its first escape: the earliest position is
    what ``diagnose.refuse_partial_escape`` compares), so it grows at most with the tensors the tape tracks."""
    if tape._escape_overflow is None:
        tape._escape_overflow = {}
    entry = tape._escape_overflow.get(tensor._key)
    if entry is not None:
        entry[4] += 1
        return
    kept = tensor if type(tensor) is Variable else EscapedRef(tensor)
    tape._escape_overflow[tensor._key] = [how, kept, len(tape._nodes), site, 1]


def after_op(prim, args, out):
    """Tell every listening (paused or exited) tape about an operation it did not record."""
    for ref in list(_WATCHERS):
        tape = ref()
        if tape is None:
            unwatch(ref)
            continue
        reason = tape._watch_reason
        tracked, cuts = tape._tracked, tape._crumbs()
        for a in args:
            if isinstance(a, Tensor) and (a._key in tracked or id(a) in cuts):
                if len(cuts) < MAX_CRUMBS:
                    cuts[id(out)] = cuts.get(id(a)) or (prim.name, reason, len(tape._nodes))
                    tape._keep.append(out)
                break


def watch_ops(tape, reason):
    """Let ``tape`` (weakly) hear about later operations, for ``reason``."""
    tape._watch_reason = reason
    if tape._watch_ref is None:
        tape._watch_ref = ref = weakref.ref(tape)
        _WATCHERS.append(ref)
        if not _EXTRA:
            _EXTRA.append(True)


def unwatch(ref):
    """Stop a tape listening (``ref`` is its weak reference)."""
    for i, r in enumerate(_WATCHERS):
        if r is ref:
            del _WATCHERS[i]
            if not _WATCHERS and not _FORWARD and not _TRACERS:  # (autoprop.function's trace listens too)
                _EXTRA.clear()
            return


# --- implicit escapes: warn at the line (issue 12, "never a silently wrong number") -------
class TapeEscapeWarning(UserWarning):
    """A Tensor that carries gradient became a plain ndarray *implicitly* while a tape records.

    ``np.array([x, y])``, ``cols[:, idx] = x`` and numpy (or scipy) functions that do not
    dispatch to autoprop convert a Tensor with ``__array__``: the result is a constant, so
    the gradient path ends there and the tape silently misses that contribution. The same
    holds for the Python number conversions ``float(t)``, ``int(t)``, ``complex(t)``,
    ``operator.index(t)`` and ``t.tolist()`` (``sum(t.tolist())`` reads like tensor code),
    and for ``math.exp(t)``, ``np.float64(t)`` and ``np.fromiter``, which call them (they
    cannot be told apart from ``float(t)``): they warn too. The explicit ways to take a value
    on purpose (``.numpy()``, ``.item()``, ``.numpy().tolist()``) stay quiet. ``ap.strict_mode()``
    (or ``warnings.simplefilter("error", ap.TapeEscapeWarning)``) turns it into an error.
    One warning per line of the user's code while a tape records (a loop writing 128 elements
    into an ndarray warns once); the tape counts every escape, and ``tape.gradient`` refuses a
    target one of them may have fed (``diagnose.refuse_partial_escape``), saying how many.
    """


class TapeEscapeError(TypeError):
    """The strict-mode form of :class:`TapeEscapeWarning`; also what ``tape.gradient`` (and
    ``jacobian``, ``batch_jacobian``, ``ForwardAccumulator.jvp``) raise for a target that a
    value which left the tape implicitly may have fed (a partial escape: the result would be
    wrong), in every mode."""


#: ``[True]`` while strict mode is on (:func:`strict_mode`).
_STRICT: list = []


class strict_mode:  # noqa: N801 - used as a function and as a context manager
    """Make an implicit escape from a recording tape an error (:class:`TapeEscapeError`).

    ``ap.strict_mode()`` switches it on for the rest of the program (``strict_mode(False)``
    off again); ``with ap.strict_mode(): ...`` for a block only.

    Parameters
    ----------
    enabled : bool, default True
    """

    def __init__(self, enabled=True):
        self._before = bool(_STRICT)
        _STRICT[:] = [True] if enabled else []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _STRICT[:] = [True] if self._before else []
        return False


_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../autoprop
_SKIP = tuple(os.path.dirname(os.path.abspath(m.__file__)) for m in
              [sys.modules.get("numpy")] if m is not None) + (_HERE,)
#: The libraries whose code converts a Tensor where the user called them (scipy's functions, scikit-learn's
#: check_array): not the user's line. The warning points at the user's call, and the hint names the library
#: function (:func:`_library_hint`).
_LIBRARIES = (f"{os.sep}scipy{os.sep}", f"{os.sep}sklearn{os.sep}")


def _in_library(filename):
    return any(lib in filename for lib in _LIBRARIES)


def _not_users(filename):
    """True for a frame of autoprop, numpy, scipy or scikit-learn (not the user's line)."""
    return filename.startswith(_SKIP) or _in_library(filename) or filename.startswith("<__array")


def _user_stacklevel():
    """The stacklevel of the first frame outside autoprop, numpy, scipy and scikit-learn (the user's line)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None:
        if not _not_users(frame.f_code.co_filename):
            return level
        frame, level = frame.f_back, level + 1
    return level


def _user_site():
    """``"file:line"`` of the first frame outside autoprop, numpy, scipy and scikit-learn (the user's line)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not _not_users(name):
            return f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def _first_at_site(carrier):
    """True for the first implicit escape at the user's line during this recording of
    ``carrier`` (a tape or an accumulator), False for a repeat: one TapeEscapeWarning per line
    per recording (a loop over 128 elements warned 128 times); the tape counts every escape,
    and ``gradient`` and ``explain`` report the counts."""
    seen = getattr(carrier, "_warned_sites", None)
    if seen is None:
        seen = carrier._warned_sites = set()
    site = _user_site()
    if site in seen:
        return False
    seen.add(site)
    return True


_NUMPY_DIR = _SKIP[0] if sys.modules.get("numpy") is not None else None
#: code object of a numpy function's Python implementation -> the numpy function (built once)
_RECORDED_CODE: dict = {}


def _recorded_numpy_caller():
    """The numpy function autoprop records that is converting a Tensor here without having
    dispatched to autoprop, or None: ``np.mean([t1, t2])`` (numpy looks for
    ``__array_function__`` on its arguments, not inside a list, so it converts the Tensors
    with ``__array__``). The outermost frame in numpy's files whose code is the Python
    implementation of a numpy function in autoprop's dispatch table."""
    if _NUMPY_DIR is None:
        return None
    if not _RECORDED_CODE:
        for f in _R._FUNCTIONS:
            code = getattr(getattr(f, "_implementation", f), "__code__", None)
            if code is not None:
                _RECORDED_CODE[code] = f
    frame, found = sys._getframe(2), None
    while frame is not None and frame.f_code.co_filename.startswith(_SKIP):
        if frame.f_code.co_filename.startswith(_NUMPY_DIR):
            found = _RECORDED_CODE.get(frame.f_code, found)
        elif found is not None and frame.f_code.co_filename.startswith(_HERE):
            found = None  # autoprop called that numpy function (after dispatch): not the user
        frame = frame.f_back
    if frame is not None and _in_library(frame.f_code.co_filename):
        return None  # scipy or scikit-learn called numpy: the library hint of the warning names what to do
    return found


def _public_name(frame):
    """``(module's public path, function name, whether that path names it)`` of a scipy or
    scikit-learn frame; a decorator's wrapper (scipy._lib's ``wrapper(*args)``, which converts
    the arrays before it calls the function) is named by the function it wraps, the one of its
    closure's cells; a method of an object that the public module holds by name is named
    ``object.method`` (``scipy.stats.norm.logpdf``: rv_continuous.logpdf of the instance
    ``norm``; before, "scipy.stats.logpdf", tester27t M1)."""
    def public(module, name):
        path = ".".join(p for p in module.split(".") if not p.startswith("_"))
        try:
            return path, name, callable(getattr(importlib.import_module(path), name, None))
        except ImportError:
            return path, name, False
    code = frame.f_code
    found = public(frame.f_globals.get("__name__", "scipy"), code.co_name)
    if not found[2] and code.co_argcount and code.co_varnames[0] == "self":
        owner = frame.f_locals.get("self")
        mod = sys.modules.get(found[0])
        public_objects = [(n, v) for n, v in (vars(mod).items() if mod is not None else ()) if not n.startswith("_")]
        same = [n for n, v in public_objects if v is owner] or [  # (a frozen norm(0, 1) runs a copy of norm)
            n for n, v in public_objects if type(v) is type(owner) and not isinstance(v, (type, dict, list, tuple))]
        if len(same) == 1:
            return found[0], f"{same[0]}.{code.co_name}", True
        cls = type(owner).__name__  # (an estimator's method: sklearn.linear_model.Ridge.predict)
        if mod is not None and getattr(mod, cls, None) is type(owner):
            return found[0], f"{cls}.{code.co_name}", True
    if not found[2]:
        for var in code.co_freevars:
            f = frame.f_locals.get(var)
            if callable(f) and str(getattr(f, "__module__", "")).startswith(("scipy.", "sklearn.")):
                wrapped = public(f.__module__, getattr(f, "__name__", ""))
                if wrapped[2]:
                    return wrapped
    return found


def _numpy_hint():
    """Where the conversion ran inside numpy's ``np.r_[...]``/``np.c_[...]`` or ``np.full(shape,
    t)``, which never dispatch (an index trick; a fill value copied into a new array): the
    recorded spelling."""
    frame = sys._getframe(2)
    while frame is not None and f"{os.sep}numpy{os.sep}" not in frame.f_code.co_filename:
        frame = frame.f_back  # (autoprop's own frames: Tensor.__array__, the observer)
    while frame is not None and f"{os.sep}numpy{os.sep}" in frame.f_code.co_filename:
        code = frame.f_code
        if code.co_name == "__getitem__" and code.co_filename.endswith("_index_tricks_impl.py"):
            import numpy as np  # (numpy is loaded: its frame is running)
            trick = "c_" if frame.f_locals.get("self") is np.c_ else "r_"
            return (f" It happened inside np.{trick}[...], numpy's index trick, which never dispatches to "
                    f"autoprop: write ap.numpy.{trick}[...] (the same indexing, recorded).")
        if code.co_name == "as_strided" and "stride_tricks" in code.co_filename:
            return (" It happened inside numpy's np.lib.stride_tricks.as_strided, which reads the memory of a "
                    "numpy array and never dispatches to autoprop: call autoprop.numpy.lib.stride_tricks."
                    "as_strided (the same arguments, recorded: each element's gradient goes back to the element "
                    "of x it reads; `import autoprop.numpy as np` makes np.lib.stride_tricks.as_strided that "
                    "one), or write np.lib.stride_tricks.sliding_window_view on the Tensor, with the window's "
                    "shape (and axis=...), recorded; take a step by slicing its result (windows[::2, ::2]).")
        if code.co_name == "full" and code.co_filename.endswith("numeric.py"):
            return (" It happened inside np.full(shape, t), which makes a numpy array of its own and copies "
                    "the fill value into it, so its result is never a Tensor: write t + np.zeros(shape) "
                    "(recorded: the fill's gradient is the sum of the result's), or np.full_like(a, t).")
        frame = frame.f_back
    return ""


def _call_text(frame):
    """The source text of the call running in ``frame``: its columns on CPython 3.11+ (the
    positions of the instruction at ``f_lasti``), else its whole line."""
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is not None:
        pos = next(itertools.islice(positions(), frame.f_lasti // 2, None), None)
        if pos and pos[0] == pos[1] == frame.f_lineno and pos[2] is not None and pos[3] is not None:
            return line.encode()[pos[2]:pos[3]].decode(errors="replace")  # (columns count bytes)
    return line


#: The instructions of ``a[...] = v`` (STORE_SLICE: ``a[i:j] = v`` on CPython 3.12+).
_STORES = frozenset(dis.opmap[n] for n in ("STORE_SUBSCR", "STORE_SLICE") if n in dis.opmap)
_ARRAY_CALL = re.compile(r"\s*([\w.]+\.)?(array|asarray|asanyarray|ascontiguousarray|asfortranarray)\s*\(")


def _users_frame():
    """The frame of the user's line running the conversion (the first outside autoprop and numpy),
    or None when it is scipy's or scikit-learn's (:func:`_library_hint` speaks of those)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_SKIP):
        frame = frame.f_back  # (autoprop's own frames: Tensor.__array__, the observer)
    return None if frame is None or _in_library(frame.f_code.co_filename) else frame


def _buffer_write_hint():
    """Where the user's line is an assignment into a numpy array (``out[...] = t``: its frame's
    instruction stores an item; numpy converts the Tensor with ``__array__``, or with ``float()``
    for one element, tester27t M2): what to write instead; "" else."""
    frame = _users_frame()
    if frame is None:
        return ""
    code, i = frame.f_code.co_code, frame.f_lasti
    if not (0 <= i < len(code) and code[i] in _STORES):
        return ""
    return (" It happened in an assignment into a numpy array (`out[...] = t`, into a buffer made by "
            "np.zeros, np.empty or np.zeros_like): numpy copies the Tensor's values into its own "
            "memory, so the buffer is a plain array off the tape. Write instead: collect the pieces in a "
            "Python list and stack them (`rows.append(t)`, then `out = np.stack(rows)`: recorded), or "
            "compute the whole array with Tensor operations (`out = W[x]` for a gather, "
            "ap.where(mask, t, out) for a masked write, np.concatenate of pieces).")


def _user_line_hint():
    """Where the conversion ran in numpy's C code called by the user's own line: an assignment
    into a numpy array (:func:`_buffer_write_hint`), ``a.dot(t)`` with ``a`` a numpy array (a C
    method that never dispatches), or ``np.array``/``np.asarray`` of Tensors (the call's text):
    the recorded spellings; "" else."""
    frame = _users_frame()
    if frame is None:
        return ""
    buffer = _buffer_write_hint()
    if buffer:
        return buffer
    text = _call_text(frame)
    if re.search(r"\.dot\s*\(", text):
        return (" It happened inside a.dot(t) with `a` a numpy array: ndarray.dot is numpy's C method "
                "and never dispatches to autoprop (t.dot(a) on the Tensor does). Write a @ t or "
                "np.dot(a, t) (recorded).")
    if _ARRAY_CALL.match(text):
        return (" It happened in np.array(...) / np.asarray(...) of Tensors: numpy builds a plain array "
                "of its own from them (a list gives numpy no hook to dispatch), off the tape. Write "
                "np.stack([a, b]) for a list of Tensors (np.concatenate to join them: both recorded), and "
                "on a single Tensor leave the call out: numpy functions on the Tensor itself are recorded. A "
                "copy kept aside that the result is not computed from (a cache for a hand-written backward): "
                "t.numpy().copy() (an explicit exit, never refused) or np.copy(t) (recorded).")
    return ""


def _library_hint():
    """Where the conversion ran inside scipy or scikit-learn: the function the user called (the
    outermost frame of the library) and what to write instead (:func:`_scipy_hint`,
    :func:`_sklearn_hint`); "" elsewhere."""
    frame, frames = sys._getframe(2), []
    while frame is not None:
        if _in_library(frame.f_code.co_filename):
            frames.append(frame)
        elif frames and not frame.f_code.co_filename.startswith(_SKIP):
            break
        frame = frame.f_back
    if not frames:
        return ""
    # the library the user called (scikit-learn calling scipy.linalg.cholesky: scikit-learn's function, which
    # the user can replace), and its outermost frame that is a public function
    # (scipy.linalg.solve_triangular), not a decorator's wrapper around it (scipy._lib's ``wrapper``); else
    # its outermost one
    lib = next(lib for lib in _LIBRARIES if lib in frames[-1].f_code.co_filename)
    frames = [f for f in frames if lib in f.f_code.co_filename]
    public, name = next((n for n in map(_public_name, reversed(frames)) if n[2]), _public_name(frames[-1]))[:2]
    if public.split(".")[0] == "sklearn":
        return _sklearn_hint(public, name)
    return _scipy_hint(public, name)


def _sklearn_hint(public, name):
    """The hint for a conversion inside scikit-learn's ``public.name``: its input check made a
    plain array; scikit-learn has no autoprop twins."""
    if name in ("check_array", "check_X_y", "as_float_array", "column_or_1d"):
        return (f" It happened inside {public}.{name}, scikit-learn's input check, which converts its "
                "input with np.asarray: the checked array is a plain constant, off the tape. Check the "
                f"values and keep the Tensor: call {name} on t.numpy() (quiet) for the check, and "
                "compute with t itself (recorded).")
    return (f" It happened inside {public}.{name}, a scikit-learn function: it checks its input with "
            "check_array (np.asarray), which makes a plain numpy array of the Tensor, and computes in "
            "numpy; autoprop has no twins of scikit-learn's functions. Write the formula with numpy "
            "operations on the Tensor (recorded: @, np.exp, np.log, np.sum; autoprop.scipy.special's "
            "softmax and logsumexp), or give it a gradient with @ap.custom_gradient.")


def _scipy_hint(public, name):
    """The hint for a conversion inside scipy's ``public.name`` (``name`` may be ``object.method``,
    ``norm.logpdf``): ``autoprop.scipy``'s twin when it records it, else numpy's recorded
    namesake, else what to write; it says which methods a twinned object has when it lacks this one."""
    ours = f"autoprop.{public}" if public.startswith("scipy.") else None
    try:
        twin = importlib.import_module(ours) if ours else None
    except ImportError:
        twin = None
    owner = None
    for part in name.split(".") if twin is not None else ():
        owner, twin = twin, getattr(twin, part, None)
    where = f" It happened inside {public}.{name}, a scipy function that converts its input to numpy"
    if callable(twin):
        return f"{where}: use {ours}.{name} (the same signature, recorded) instead."
    np_twin = _numpy_linalg_twin(public, name)
    if np_twin:
        return (f"{where}: use {np_twin} on the Tensor instead (recorded; numpy's signature, which "
                "may differ from scipy's).")
    has = ""
    if "." in name and owner is not None and not isinstance(owner, type(sys)):
        methods = sorted(k for k, v in vars(owner).items() if callable(v) and not k.startswith("_"))
        has = f" ({ours}.{name.rpartition('.')[0]} twins {', '.join(methods)} only)"
    return (f"{where} and has no autoprop twin{has}: write it with numpy operations on the Tensor "
            "(recorded), or give it a gradient with @ap.custom_gradient (ap.numpy_function would run it, "
            "but its output is a constant: no gradient).")


def _numpy_linalg_twin(public, name):
    """``"np.linalg.<name>"`` when scipy.linalg's function ``name`` has a numpy.linalg namesake
    that autoprop records (``scipy.linalg.eigh``: ``np.linalg.eigh``), else None."""
    if public != "scipy.linalg":
        return None
    import numpy as np  # (numpy is loaded: scipy's frame is running)
    f = getattr(np.linalg, name, None)
    return f"np.linalg.{name}" if f is not None and f in _R._FUNCTIONS else None


def _describe(tensor, tape):
    if isinstance(tensor, Variable):
        return f"Variable {tensor.name!r}"
    if getattr(tape, "_forward", False):
        return "a Tensor with a tangent"
    for pos in range(len(tape._nodes) - 1, -1, -1):
        if tensor._key in tape._nodes[pos].out_keys():
            return f"the Tensor computed by {tape._nodes[pos].prim.name} (recorded op #{pos})"
    return "a watched Tensor"


def _carrier(tensor):
    """The recording tape (or open ForwardAccumulator) on which ``tensor`` carries
    gradient: tracked by it, a trainable float Variable it would watch on first use, or a
    tensor with a tangent. None when there is none."""
    for tape in _RECORDING:
        if getattr(tape, "_forward", False):
            continue
        if tensor._key in tape._tracked or (
            type(tensor) is Variable and tape._watch_accessed and tensor.trainable
            and tensor._value.dtype.kind in "fc"
        ):
            return tape
    for acc in _FORWARD:
        entry = acc._tangents.get(id(tensor))
        if entry is not None and entry[0] is tensor:
            return acc
    return None


_NOT_REPEATED = (
    " (One warning per line while this tape records: later conversions at this line are not "
    "repeated but counted; tape.gradient refuses a target they may have fed, saying how many.)")


def implicit_escape(tensor, how=None):
    """An implicit conversion while a tape records: warn (or raise in strict mode) when
    ``tensor`` carries gradient (:func:`_carrier`).

    Parameters
    ----------
    tensor : Tensor
    how : str or None
        None: ``Tensor.__array__`` (numpy made an array of it). Otherwise the conversion that
        ran, a key of :data:`HOW_FIX`: ``"float()"``, ``"int()"``, ``"complex()"``,
        ``"operator.index()"`` (also what ``math.exp(t)``, ``np.float64(t)`` and
        ``np.fromiter`` call), ``".tolist()"``, ``"pickling"`` (``Tensor.__reduce_ex__``).

    Returns
    -------
    str or None
        For a numpy conversion warned at its line, the hint that names what ran there and
        what to write instead (``out[...] = t``, ``a.dot(t)``, ``np.array`` of Tensors, a scipy
        or scikit-learn function), "" when none applies; :func:`note_escape` keeps it for the
        refusals. None otherwise.

    Raises
    ------
    TapeEscapeError
        In strict mode; and for a list of Tensors given to a numpy function autoprop records.
    """
    tape = _carrier(tensor)
    if tape is None:
        return None
    kind = "ForwardAccumulator" if getattr(tape, "_forward", False) else "GradientTape"
    if how is not None:
        if not _STRICT and not _first_at_site(tape):
            return None  # (warned at this line already during this recording; the tape counts it)
        hint = _buffer_write_hint() if how in ("float()", "complex()", "int()") else ""
        msg = _conversion_message(tensor, tape, kind, how, hint)
        if _STRICT:
            raise TapeEscapeError(msg)
        warnings.warn(msg + _NOT_REPEATED, TapeEscapeWarning, stacklevel=_user_stacklevel())
        return hint
    fn = _recorded_numpy_caller()
    if fn is not None:  # a container of Tensors given to a numpy function autoprop records
        module = ".".join(p for p in fn.__module__.split(".") if not p.startswith("_"))
        also = (f", and so is ap.numpy.{fn.__name__}(values, ...), which stacks a list of Tensors"
                if module == "numpy" else "")
        raise TapeEscapeError(
            f"{module}.{fn.__name__} was given {_describe(tensor, tape)} (shape {tensor.shape}) "
            "inside a list or tuple: numpy converts a container to a plain array without "
            "dispatching to autoprop, so the gradient through it would be lost (0, or a wrong "
            "number when the target depends on the source another way). Stack the Tensors "
            f"first: {module}.{fn.__name__}(np.stack(values), ...) is recorded{also}.")
    if not _STRICT and not _first_at_site(tape):
        return None  # (warned at this line, and its hint kept, already during this recording)
    hint = _numpy_hint() or _library_hint() or _user_line_hint()
    msg = (
        f"{_describe(tensor, tape)} (shape {tensor.shape}, dtype {tensor.dtype}) carries gradient "
        f"on a recording {kind} and was converted implicitly to a plain numpy array here "
        "(np.array/np.asarray of Tensors, assignment into an ndarray, or a numpy/scipy function "
        "that does not dispatch to autoprop): the gradient path ends at this line and the "
        f"{kind} will miss this contribution. Fix: np.stack([a, b]) instead of np.array([a, b]) "
        "or np.asarray([a, b]) of Tensors (numpy gives a list no hook, np.stack dispatches and is "
        "recorded; np.concatenate likewise), a Tensor operation (ap.where, ap.numpy.concatenate) instead of item "
        "assignment, and for plain-numpy code the tape cannot see, @ap.custom_gradient with its "
        "VJP (ap.numpy_function runs such code too, but its output is a constant: no gradient); "
        "call .numpy() to leave the tape on purpose." + hint
    )
    if _STRICT:
        raise TapeEscapeError(msg)
    warnings.warn(msg + _NOT_REPEATED, TapeEscapeWarning, stacklevel=_user_stacklevel())
    return hint


_NUMBER_FIX = ("use a numpy function on the tensor itself (np.exp(t), np.sqrt(t), t ** p: recorded); to take the "
               "value on purpose, call t.item() or t.numpy() (quiet), or float(ap.stop_gradient(t))")
#: What to write instead of each implicit conversion that is not numpy's (numpy's depends on where it ran: the
#: hint :func:`implicit_escape` finds, kept per line by :func:`note_escape`): the warning's "Fix:" and the
#: refusals' (:func:`escape_fix`).
HOW_FIX = {
    "float()": _NUMBER_FIX, "complex()": _NUMBER_FIX, "int()": _NUMBER_FIX, "operator.index()": _NUMBER_FIX,
    ".tolist()": ("use numpy functions on the tensor itself (np.sum(t), t[i], np.stack/np.concatenate: recorded); "
                  "to take the values on purpose, call t.numpy().tolist() (quiet)"),
    "pickling": ("keep the Tensor itself while the tape records (copy.copy(t), copy.deepcopy(t) and t.copy() are "
                 "recorded copies: the gradient flows through them); to save or send the values on purpose, "
                 "pickle t.numpy() (quiet), or pickle after the tape's `with` block"),
}


def _conversion_message(tensor, tape, kind, how, hint):
    """The TapeEscapeWarning's text for ``how``, a conversion of :data:`HOW_FIX` (a Python number, ``.tolist()``,
    pickling) of ``tensor``, which carries gradient on ``tape`` (a ``kind``); ``hint`` the buffer write's
    (:func:`_buffer_write_hint`: numpy calls ``float(t)`` to write a 0-d Tensor into an element), else ""."""
    who = f"{_describe(tensor, tape)} (shape {tensor.shape}, dtype {tensor.dtype}) carries gradient on a recording {kind}"
    if hint:
        return (f"{who} and was converted to a Python number by {how} here, to be written into an element of a "
                "numpy array: the element is a constant, so the gradient path ends at this line and the tape will "
                "miss this contribution." + hint)
    if how == ".tolist()":
        what = ("was converted to Python numbers by .tolist() here: the numbers are constants, so the gradient path "
                "ends at this line and the tape will miss this contribution (sum(t.tolist()) + np.sum(t) gives "
                "half the gradient)")
    elif how == "pickling":
        what = ("was pickled here (pickle.dumps, or a library that pickles its arguments: multiprocessing, joblib, "
                "a cache written to disk): the unpickled Tensor is a new constant with the same values, so the "
                "gradient path ends at this line and the tape will miss every contribution through the copy (a "
                "wrong gradient, not None, when the target also depends on the source another way: tester27t H1)")
    else:
        what = (f"was converted to a Python number by {how} here (also what math.exp/sqrt/log/tanh/pow, "
                "np.float64(), complex() and np.fromiter call on a Tensor): the number is a constant, so the "
                "gradient path ends at this line and the tape will miss this contribution (a wrong gradient, not "
                "None, when the target also depends on the source another way)")
    return f"{who} and {what}. Fix: {HOW_FIX[how]}."


class OwnFloat(float):
    """A Python float that autoprop's own implementation made (``std``'s ``sqrt(n - ddof)``): never a value
    that left the tape, so :func:`carries_value` passes it (review25a M2: ``float(t)`` logged, then ``np.std(x)``,
    was refused). Arithmetic on it gives a plain float, so the mark never reaches a value mixed with the user's."""

    __slots__ = ()


class OwnArray(np.ndarray):
    """An ndarray that autoprop's own implementation made (``linspace``'s ``0..num-1``, the 0 ``diagflat``
    appends), passed by :func:`carries_value` as :class:`OwnFloat` is. A numpy operation on it gives a plain
    ndarray (its operands unmarked first), so the mark never reaches a value computed with the user's; beside a
    Tensor it defers to the Tensor's dispatch, which records it, mark and all."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(isinstance(i, Tensor) for i in inputs):
            return NotImplemented
        if "out" in kwargs:
            kwargs["out"] = _unmarked(kwargs["out"])
        return getattr(ufunc, method)(*_unmarked(inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if any(issubclass(t, Tensor) for t in types):
            return NotImplemented
        return func(*_unmarked(args), **_unmarked(kwargs))


def _unmarked(x):
    """``x`` with every :class:`OwnArray` in it (in tuples, lists and dict values) a plain ndarray view."""
    if type(x) is OwnArray:
        return x.view(np.ndarray)
    if isinstance(x, (tuple, list)):
        return type(x)(_unmarked(v) for v in x)
    if isinstance(x, dict):
        return {k: _unmarked(v) for k, v in x.items()}
    return x


def own(value):
    """``value`` (a float number or an ndarray made inside autoprop) marked as autoprop's own constant:
    :class:`OwnFloat` or :class:`OwnArray` (a view), which :func:`carries_value` passes. For the constants an
    implementation computes from shapes and counts only, never from a value the user gave."""
    if isinstance(value, np.ndarray):
        return value.view(OwnArray)
    if isinstance(value, np.generic):
        return np.asarray(value).view(OwnArray)  # (0-d: keeps its dtype)
    return OwnFloat(value) if isinstance(value, float) else value  # (an int carries no value anyway)


_OWN = (OwnFloat, OwnArray)

_STATIC = weakref.WeakValueDictionary()  # id -> array: the arrays :func:`static` marked


def static(value):
    """``value``, an ndarray autoprop's implementation made from shapes and Python constants only (np.roll's
    positions for a given shape and shift, np.tril's mask), never from a value: marked so that
    :func:`autoprop.function` holds it as a constant of its trace (a trace's signature fixes every shape; issue
    15). Made read-only, so it stays the array the trace holds. Returns ``value`` itself (an :class:`OwnArray`
    too when it was one). Not for arrays computed from a value (a sort's positions, a NaN count): those are
    :func:`autoprop.core.tape.replayed`'s."""
    value.flags.writeable = False
    _STATIC[id(value)] = value
    return value


def is_static(a):
    """True for an array :func:`static` marked (this very object, alive)."""
    return _STATIC.get(id(a)) is a



def carries_value(a):
    """Could the constant argument ``a`` of a recorded op hold a value that left the tape?
    A float or complex number, array or Tensor could; an integer, a bool, an index (slices,
    ``...``), a dtype, None or a string cannot (a value that left through ``float()`` and came
    back as an integer has the derivative 0: nothing is lost), nor a constant autoprop's own
    implementation made (:func:`own`). Read by
    ``diagnose.refuse_partial_escape`` and the ForwardAccumulator's twin of it."""
    if type(a) in _OWN or a is None or a is Ellipsis or isinstance(a, (bool, int, str, slice, type, np_dtype)) or (
            callable(a) and getattr(a, "dtype", None) is None):  # (np.piecewise's functions)
        return False
    if isinstance(a, (tuple, list)):
        return any(carries_value(x) for x in a)
    dtype = getattr(a, "dtype", None)  # ndarray, numpy scalar, Tensor, NotSaved
    if dtype is not None:
        try:
            return np_dtype(dtype).kind in "fcO"
        except TypeError:
            return True
    return True


#: Keyword arguments of a record that cannot carry a value back onto the tape: a record's own saved arrays
#: (``tape.WithSaved``), ``pinv``'s ``rcond`` (a threshold: A^+ does not depend on it where it is
#: differentiable), a cast's ``dtype``.
STATIC_KWARGS = frozenset({"saved", "rcond", "dtype"})


def kwargs_carry_value(kwargs):
    """Could a keyword argument of a recorded op (``node.kwargs``) hold a value that left the tape
    (``np.pad(x, 1, constant_values=float(x[0]))``, review25a H1)? :func:`carries_value` of each, except
    :data:`STATIC_KWARGS`. ``kwargs`` is a dict or None."""
    return bool(kwargs) and any(carries_value(v) for k, v in kwargs.items() if k not in STATIC_KWARGS)


def _site_source(site):
    """The user's source line at ``site`` (``"file:line"``), stripped; "" when it cannot be read (code
    compiled from a string)."""
    path, _, line = (site or "?:0").rpartition(":")
    return linecache.getline(path, int(line) if line.isdigit() else 0).strip()


def escape_fix(how, site, hints):
    """What to write instead at the line ``site`` where a value left the tape through ``how``: the
    hint the TapeEscapeWarning gave there (``hints``, a carrier's ``_escape_hints``, kept by
    :func:`note_escape`: ``out[...] = t``, ``a.dot(t)``, ``np.array`` of Tensors, a scipy function's
    twin), else :data:`HOW_FIX`'s for ``how``; "" when neither applies. The refusals repeat it, as a
    notebook that filters warnings never sees the warning (tester27t M2)."""
    hint = (hints or {}).get(site)
    if hint:
        return hint
    fix = HOW_FIX.get(how)
    return f" Fix for that line: {fix}." if fix else ""


def _first_escape(who_t, how, site, pos, hints):
    """``"<who_t> left through <how> at <site> (after <pos> recorded ops): `<source>`."`` and the fix
    for that line (:func:`escape_fix`)."""
    text = _site_source(site)
    return (f"{who_t} left through {how} at {site} (after {pos} recorded ops)" + (f": `{text}`" if text else "")
            + "." + escape_fix(how, site, hints))


def _sites(escapes):
    """``(how many values left, at how many lines, "site (n x); ..." for the first three)`` of
    ``escapes``, each ``(how, tensor, position, site)`` or ``(..., count)`` for ``count`` of them."""
    sites = {}
    for e in escapes:  # (a fifth field: how many escapes the entry stands for, observe._overflow)
        sites[e[3]] = sites.get(e[3], 0) + (e[4] if len(e) > 4 else 1)
    where = "; ".join(f"{s} ({c}x)" for s, c in list(sites.items())[:3]) + ("; ..." if len(sites) > 3 else "")
    return sum(sites.values()), len(sites), where


_GENERAL_FIX = (
    "keep the computation on Tensors: collect the pieces in a Python list and stack them (`pieces.append(t)`, "
    "then `out = np.stack(pieces).reshape(shape)`, or ap.numpy.stack) instead of writing them into an np.zeros "
    "buffer or np.array([...]); tape operations (np.einsum over np.lib.stride_tricks.sliding_window_view, "
    "ap.where, np.concatenate, np.exp(t) for math.exp(t), a @ t for a.dot(t), autoprop.scipy's twins for scipy's "
    "functions) instead of float(), .tolist() or numpy on plain arrays.")


def partial_escape_text(who, escapes, lost, hints=None):
    """The message of the error ``who`` (``"GradientTape.gradient"``, ``"ForwardAccumulator.jvp"``)
    raises for a partial escape: ``escapes`` the ``(how, tensor, position, site)`` of each value that
    left (``(how, tensor, position, site, count)`` for ``count`` of them), ``lost`` how the requested
    sources it came from are named, ``hints`` the carrier's ``_escape_hints``. It names the first
    escape's ``file:line``, its source and way out and what to write there (:func:`escape_fix`), how
    many left and at which lines, and what to write in general."""
    how, tensor, pos, site = escapes[0][:4]
    n, lines, where = _sites(escapes)
    who_t = f"Variable {tensor.name!r}" if isinstance(tensor, Variable) else f"a tensor of shape {tensor.shape}"
    return (
        f"{who}: refused, the result would be wrong: {n} value{'s' if n > 1 else ''} computed from "
        f"{', '.join(lost[:4]) or 'the sources'}{', ...' if len(lost) > 4 else ''} left the tape implicitly "
        "before the target was made, and an op on the way to the target then read a plain constant (a number "
        "or an array the tape does not track) that may hold them: the tape cannot trace plain values, so if "
        "it does, the paths through those values would be missing: a partial gradient, or None for a source "
        "whose only path left. The first: "
        + _first_escape(who_t, how, site, pos, hints) +
        f" {n} in all, at {lines} line{'s' if lines > 1 else ''}: {where}. In general: " + _GENERAL_FIX +
        " A value taken only to print or log: t.item() or t.numpy() (the explicit exits, never refused), or "
        "take it after the target is made."
    )


def plain_target_text(t, escapes, hints):
    """The message of ``GradientTape.gradient``'s TypeError for a target ``t`` that is a plain value (not a
    Tensor) on a tape that saw a gradient-carrying tensor's value leave it (``escapes``, the tape's
    ``(how, tensor, value, position, site)``; ``hints`` its ``_escape_hints``): every gradient would be None.
    It names the first implicit escape's ``file:line``, its source and what to write there
    (:func:`escape_fix`), and the other lines (tester27t M2: it named none, and spoke of np.asarray for a
    buffer write); an explicit ``.numpy()``/``.item()`` alone is said to be one."""
    implicit = [e for e in escapes if e[0] in IMPLICIT]
    how, tensor, _value, pos, site = (implicit or escapes)[0]
    others = len({id(e[1]) for e in escapes} - {id(tensor)})
    more = f" (and {others} more tensors so)" if others else ""
    kind = f"numpy {type(t).__name__}" if isinstance(t, (np.ndarray, np.generic)) else type(t).__name__
    who = f"Variable {tensor.name!r}" if isinstance(tensor, Variable) else "a tensor"
    what = (f"a constant Tensor (shape {t.shape}) that no operation on this tape made, computed from plain values,"
            if isinstance(t, Tensor) else f"a plain {kind}, not a Tensor,")
    head = (f"GradientTape.gradient: the target is {what} because the computation left the "
            f"tape: {who} of shape {tensor.shape} that carries gradient was turned into a plain value by {how}")
    if not implicit:
        return (f"{head} after {pos} recorded ops{more} (a quiet, explicit conversion: give the Tensor itself as "
                "the target). Every gradient would be None.")
    n, lines, where = _sites([(e[0], e[1], e[3], e[4]) for e in implicit])
    text = _site_source(site)
    return (f"{head} at {site} (after {pos} recorded ops){more}" + (f": `{text}`" if text else "") + "."
            + escape_fix(how, site, hints) + f" {n} implicit conversion{'s' if n > 1 else ''} in all, at {lines} "
            f"line{'s' if lines > 1 else ''}: {where}. Every gradient would be None. In general: " + _GENERAL_FIX)
