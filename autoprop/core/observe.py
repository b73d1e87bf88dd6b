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

from .tensor import _EXTRA, _FORWARD, _RECORDING, Tensor, Variable

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
IMPLICIT = ("float()", "complex()", "numpy conversion (np.asarray / np.array)", ".tolist()")


def note_escape(tensor, how, value):
    """Breadcrumb: a tracked tensor's value left the tape (np.asarray, float(), .numpy()).

    The tape keeps ``(how, tensor, value, position, site)``: ``position`` is the number of
    ops recorded so far, ``site`` the user's ``file:line`` for an implicit conversion
    (:data:`IMPLICIT`), else None."""
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
                acc._escapes.append((how, tensor, acc._ops, site or _user_site()))


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
            if not _WATCHERS and not _FORWARD:
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


def _user_stacklevel():
    """The stacklevel of the first frame outside autoprop, numpy and scipy (the user's line)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(_SKIP) or f"{os.sep}scipy{os.sep}" in name or name.startswith("<__array")):
            return level
        frame, level = frame.f_back, level + 1
    return level


def _user_site():
    """``"file:line"`` of the first frame outside autoprop, numpy and scipy (the user's line)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(_SKIP) or f"{os.sep}scipy{os.sep}" in name or name.startswith("<__array")):
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
    if frame is not None and f"{os.sep}scipy{os.sep}" in frame.f_code.co_filename:
        return None  # scipy called numpy: the scipy hint of the warning names what to do
    return found


def _public_scipy(frame):
    """``(module's public path, function name, whether that path names it)`` of a scipy frame;
    a decorator's wrapper (scipy._lib's ``wrapper(*args)``, which converts the arrays before it
    calls the function) is named by the function it wraps, the one of its closure's cells."""
    def public(module, name):
        path = ".".join(p for p in module.split(".") if not p.startswith("_"))
        try:
            return path, name, callable(getattr(importlib.import_module(path), name, None))
        except ImportError:
            return path, name, False
    found = public(frame.f_globals.get("__name__", "scipy"), frame.f_code.co_name)
    if not found[2]:
        for var in frame.f_code.co_freevars:
            f = frame.f_locals.get(var)
            if callable(f) and str(getattr(f, "__module__", "")).startswith("scipy."):
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
            return (" It happened inside np.lib.stride_tricks.as_strided, which reads the memory of a "
                    "numpy array and never dispatches to autoprop: write "
                    "np.lib.stride_tricks.sliding_window_view on the Tensor, with the window's shape "
                    "(and axis=...), recorded: each window's gradient goes back to its elements; take "
                    "a step by slicing its result (windows[::2, ::2]).")
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


def _ndarray_method_hint():
    """Where the conversion ran inside ``a.dot(t)`` with ``a`` a numpy array, a C method that
    never dispatches (the user's frame calls ``.dot(``): the recorded spellings."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_SKIP):
        frame = frame.f_back  # (autoprop's own frames: Tensor.__array__, the observer)
    if frame is None or not re.search(r"\.dot\s*\(", _call_text(frame)):
        return ""
    return (" It happened inside a.dot(t) with `a` a numpy array: ndarray.dot is numpy's C method "
            "and never dispatches to autoprop (t.dot(a) on the Tensor does). Write a @ t or "
            "np.dot(a, t) (recorded).")


def _scipy_hint():
    """Where the conversion ran inside scipy: the scipy function the user called (the
    outermost scipy frame) and, when ``autoprop.scipy`` records it, the replacement."""
    frame, scipy_frames = sys._getframe(2), []
    while frame is not None:
        if f"{os.sep}scipy{os.sep}" in frame.f_code.co_filename:
            scipy_frames.append(frame)
        elif scipy_frames and not frame.f_code.co_filename.startswith(_SKIP):
            break
        frame = frame.f_back
    if not scipy_frames:
        return ""
    # the outermost frame that is a public scipy function (scipy.linalg.solve_triangular), not a
    # decorator's wrapper around it (scipy._lib's ``wrapper``); else the outermost one
    public, name = next((n for n in map(_public_scipy, reversed(scipy_frames)) if n[2]),
                        _public_scipy(scipy_frames[-1]))[:2]
    ours = f"autoprop.{public}" if public.startswith("scipy.") else None
    try:
        mod = importlib.import_module(ours) if ours else None
    except ImportError:
        mod = None
    if mod is not None and callable(getattr(mod, name, None)):
        return (f" It happened inside {public}.{name}, a scipy function that converts its input "
                f"to numpy: use {ours}.{name} (the same signature, recorded) instead.")
    np_twin = _numpy_linalg_twin(public, name)
    if np_twin:
        return (f" It happened inside {public}.{name}, a scipy function that converts its input "
                f"to numpy: use {np_twin} on the Tensor instead (recorded; numpy's signature, which "
                "may differ from scipy's).")
    return (f" It happened inside {public}.{name}, a scipy function that converts its input to "
            "numpy and has no autoprop twin: write it with numpy operations on the Tensor (recorded), "
            "or give it a gradient with @ap.custom_gradient (ap.numpy_function would run it, but "
            "its output is a constant: no gradient).")


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

    ``how`` None: ``Tensor.__array__`` (numpy made an array of it). Otherwise the Python
    number conversion that ran (``"float()"``, ``"int()"``, ``"complex()"``,
    ``"operator.index()"``), which is also what ``math.exp(t)``, ``np.float64(t)`` and
    ``np.fromiter`` call.
    """
    tape = _carrier(tensor)
    if tape is None:
        return
    if how is not None and not _STRICT and not _first_at_site(tape):
        return  # (warned at this line already during this recording; the tape counts it)
    kind = "ForwardAccumulator" if getattr(tape, "_forward", False) else "GradientTape"
    if how is not None:
        msg = (
            f"{_describe(tensor, tape)} (shape {tensor.shape}, dtype {tensor.dtype}) carries "
            f"gradient on a recording {kind} and was converted to a Python number by {how} "
            "here (also what math.exp/sqrt/log/tanh/pow, np.float64(), complex() and "
            "np.fromiter call on a Tensor): the number is a constant, so the gradient path "
            "ends at this line and the tape will miss this contribution (a wrong gradient, "
            "not None, when the target also depends on the source another way). Fix: use a "
            "numpy function on the tensor itself (np.exp(t), np.sqrt(t), t ** p: recorded); "
            "to take the value on purpose, call t.item() or t.numpy() (quiet), or "
            "float(ap.stop_gradient(t))."
        )
        if how == ".tolist()":
            msg = (
                f"{_describe(tensor, tape)} (shape {tensor.shape}, dtype {tensor.dtype}) carries "
                f"gradient on a recording {kind} and was converted to Python numbers by .tolist() "
                "here: the numbers are constants, so the gradient path ends at this line and the "
                "tape will miss this contribution (sum(t.tolist()) + np.sum(t) gives half the "
                "gradient). Fix: use numpy functions on the tensor itself (np.sum(t), t[i], "
                "np.stack/np.concatenate: recorded); to take the values on purpose, call "
                "t.numpy().tolist() (quiet)."
            )
        if _STRICT:
            raise TapeEscapeError(msg)
        warnings.warn(msg + _NOT_REPEATED, TapeEscapeWarning, stacklevel=_user_stacklevel())
        return
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
        "call .numpy() to leave the tape on purpose."
        + (_numpy_hint() or _scipy_hint() or _ndarray_method_hint())
    )
    if _STRICT:
        raise TapeEscapeError(msg)
    if _first_at_site(tape):
        warnings.warn(msg + _NOT_REPEATED, TapeEscapeWarning, stacklevel=_user_stacklevel())

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


def partial_escape_text(who, escapes, lost):
    """The message of the error ``who`` (``"GradientTape.gradient"``, ``"ForwardAccumulator.jvp"``)
    raises for a partial escape: ``escapes`` the ``(how, tensor, position, site)`` of each value that
    left (``(how, tensor, position, site, count)`` for ``count`` of them), ``lost`` how the requested
    sources it came from are named. It names the first escape's ``file:line`` and its way out, how
    many left and at which lines, and what to write instead."""
    how, tensor, pos, site = escapes[0][:4]
    sites = {}
    for e in escapes:  # (a fifth field: how many escapes the entry stands for, observe._overflow)
        sites[e[3]] = sites.get(e[3], 0) + (e[4] if len(e) > 4 else 1)
    path, _, line = (site or "?:0").rpartition(":")
    text = linecache.getline(path, int(line) if line.isdigit() else 0).strip()
    after = text.split("]", 1)[1].lstrip() if "]" in text else ""
    setitem = after.startswith("=") and not after.startswith("==")
    way = how + (" (an assignment into a numpy array, `out[...] = t`, converts t so)" if setitem else "")
    n, lines = sum(sites.values()), len(sites)
    where = "; ".join(f"{s} ({c}x)" for s, c in list(sites.items())[:3]) + ("; ..." if lines > 3 else "")
    who_t = f"Variable {tensor.name!r}" if isinstance(tensor, Variable) else f"a tensor of shape {tensor.shape}"
    return (
        f"{who}: refused, the result would be wrong: {n} value{'s' if n > 1 else ''} computed from "
        f"{', '.join(lost[:4]) or 'the sources'}{', ...' if len(lost) > 4 else ''} left the tape implicitly "
        "before the target was made, and the target was then computed partly off the tape (it is still a "
        "Tensor because another part stayed on it), so the paths through those values would be missing: a "
        "partial gradient, or None for a source whose only path left. The first: "
        f"{who_t} left through {way} at {site} (after {pos} recorded ops){': ' + text if text else ''}. "
        f"{n} in all, at {lines} line{'s' if lines > 1 else ''}: {where}. Write instead: keep the "
        "computation on Tensors: collect the pieces in a Python list and stack them (`pieces.append(t)`, "
        "then `out = np.stack(pieces).reshape(shape)`, or ap.numpy.stack) instead of writing them into an "
        "np.zeros buffer or np.array([...]); tape operations (np.einsum over "
        "np.lib.stride_tricks.sliding_window_view, ap.where, np.concatenate, np.exp(t) for math.exp(t)) "
        "instead of float(), .tolist() or numpy on plain arrays. A value taken only to print or log: "
        "t.item() or t.numpy() (the explicit exits, never refused), or take it after the target is made."
    )
