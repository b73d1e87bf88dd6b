"""``autoprop.function``: a Python training step traced once, then replayed on numpy arrays.

autoprop's counterpart of ``tf.function``. The first call with a new input signature runs the
Python function eagerly (its results are the eager results) and records, beside the tapes:

* every primitive applied (its forward, where each argument comes from: an argument of the
  call, a Variable read at that point, an earlier result, a constant);
* each ``tape.gradient`` as a plan made once from the tape's nodes: which VJPs, in what order,
  pruned as the reverse walk prunes them, with the slot each gradient accumulates into;
* the events whose Python must run again: ``optimizer.apply_gradients`` (through
  ``manualprop.optim``'s hook: the optimizer's real code, so learning-rate schedules and step
  counters keep working), ``Variable.assign*``, and what layers register with
  :func:`autoprop.core.tape.replayed` (Dropout's mask, max pooling's indices, BatchNorm's
  statistics in inference, the loss's int64 cast of other integer labels, Embedding's checked
  indices, the causal mask) and :func:`autoprop.core.tape.on_replay` (BatchNorm's running
  statistics, the loss's label check, the layers' and losses' NaN/inf checks of their inputs).

A later call with the same signature replays the list: forwards, VJPs and events on raw arrays
held in a list of slots, no Tensor objects, no tape, no reverse walk. The arithmetic is the
same functions on the same values in the same order, so the replay's numbers are the eager
step's bit for bit (``tests/test_autoprop_function_s38.py`` checks it).

This module stands above ``autoprop.core`` (as ``optimizers`` does): the core reports to the
trace in progress through ``autoprop.core.tensor._TRACERS`` and knows nothing of this module,
layers or optimizers; the optimizer reports through ``manualprop.optim._APPLY_HOOKS``.
"""

from __future__ import annotations

import copy
import dis
import functools
import gc
import linecache
import operator
import os
import sys
import threading
import types
import weakref

import numpy as np

from manualprop import optim as _optim

from .core import observe as _observe
from .core import registry as _registry
from .core import tape as _tape
from .core.tensor import (
    _FORWARD,
    _KEEP_SAVED,
    _RECORDING,
    _STATE,
    _TRACERS,
    Tensor,
    Variable,
    _next_key,
)

__all__ = ["function", "TraceError"]

_wrap_new = object.__new__
_FORWARD_CALLS = (_tape.call.__code__, _tape.call_multi.__code__)
_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NUMPY = os.path.dirname(os.path.abspath(np.__file__)) + os.sep
_MANUAL = os.path.dirname(os.path.abspath(_optim.__file__)) + os.sep
_HERE = os.path.abspath(__file__)
_ANP = os.path.join(_PKG, "numpy", "__init__.py")


class TraceError(RuntimeError):
    """Something a function traced by :func:`autoprop.function` did cannot be replayed
    faithfully (it would freeze a value, or it uses a feature the trace does not support).
    Raised while tracing, naming the line; nothing is cached for that signature."""


def _user_line():
    """``file:line: source`` of the innermost frame outside autoprop, manualprop and numpy."""
    f = sys._getframe(1)
    while f is not None:
        name = os.path.abspath(f.f_code.co_filename)
        if not (name.startswith(_PKG) or name.startswith(_NUMPY) or name.startswith(_MANUAL)):
            src = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
            return f"{f.f_code.co_filename}:{f.f_lineno}" + (f": `{src}`" if src else "")
        f = f.f_back
    return "an unknown line"


def _wrap(v):
    t = _wrap_new(Tensor)  # Tensor._wrap, inlined
    t._value = v
    t._key = _next_key()
    return t


def _global_state():
    """numpy's global random state (the legacy ``RandomState``'s ``get_state()`` tuple), read past ``np.random``'s
    names (patched while a trace runs)."""
    return np.random.mtrand._rand.get_state()


def _same_state(a, b):
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]


class _OtherDraws:
    """The draws other threads make from numpy's global random state through ``np.random``'s names while a trace
    runs (review39 F5: they changed the state the trace compares before and after, and the trace refused itself).

    Each is made holding the global generator's own lock (which numpy's draws take, whatever name they come
    through), with the state read before and after it: :meth:`explain` then tells whether these draws alone lead
    from the state the trace started with to the one it ended with. A draw of the tracing thread's own (through a
    name bound before the trace) is a step no record starts from: refused, as without another thread."""

    def __init__(self):
        self.lock = getattr(getattr(np.random.mtrand._rand, "_bit_generator", None), "lock", None)
        self.steps = []  # (state before, state after) of each other thread's draw, in the lock's order
        self.open = True

    def draw(self, original, args, kwargs):
        """``original(*args, **kwargs)`` for another thread, recorded while the trace runs."""
        if self.lock is None or not self.open:
            return original(*args, **kwargs)
        with self.lock:
            before = _global_state()
            try:
                return original(*args, **kwargs)
            finally:
                if self.open:
                    self.steps.append((before, _global_state()))

    def snapshot(self, start):
        """The global state now, taken under the lock (``start``: the records before it forgotten; else the
        recording closed)."""
        if self.lock is None:
            return _global_state()
        with self.lock:
            if start:
                self.steps.clear()
            else:
                self.open = False
            return _global_state()

    def explain(self, before, after):
        """Whether the other threads' recorded draws account for every change from ``before`` to ``after``."""
        for a, b in self.steps:
            if not _same_state(a, before):
                return False
            before = b
        return _same_state(before, after)


def _np_random_refusal(name, original, thread, others):
    def refused(*args, **kwargs):
        if threading.get_ident() != thread:  # (another thread, not traced: numpy's own draw, accounted for)
            return others.draw(original, args, kwargs)
        raise TraceError(
            f"autoprop.function: np.random.{name} was called while tracing, at {_user_line()}. A trace "
            "runs the Python once: the draw would be frozen into every replay. Draw outside the "
            "function and pass the draw in as an argument (autoprop has no random module of its own; "
            "autoprop.layers.Dropout draws a fresh mask at each replay).")
    return refused


_NP_RANDOM_NAMES = [n for n in dir(np.random) if not n.startswith("_")
                    and callable(getattr(np.random, n)) and hasattr(np.random.mtrand._rand, n)
                    or n == "seed"]


def _from_user():
    """True when the innermost frame outside numpy and this module is the user's code, not
    autoprop's or manualprop's (whose uses of an argument are recorded or checked again).
    ``autoprop.numpy``'s ``asarray`` and ``array`` count as numpy's: they give the user numpy's
    result (fn44: ``anp.asarray(y).tolist()`` read the first call's labels)."""
    f = sys._getframe(1)
    while f is not None:
        name = os.path.abspath(f.f_code.co_filename)
        if (name.startswith(_NUMPY) or name == _HERE or f.f_code.co_filename.startswith("<__array")
                or name == _ANP and f.f_code.co_name in ("asarray", "array")):
            f = f.f_back
            continue
        return not (name.startswith(_PKG) or name.startswith(_MANUAL))
    return False


def _reader():
    """The name of autoprop's or manualprop's function reading an integer argument's values in Python (the
    innermost frame outside numpy and this module), or None inside a primitive's forward (below ``tape.call``: its
    result is recomputed from each call's values at a replay, as getitem's index)."""
    f = sys._getframe(1)
    reader = None
    while f is not None:
        code = f.f_code
        if code in _FORWARD_CALLS:
            return None
        name = os.path.abspath(code.co_filename)
        if reader is None and not (name.startswith(_NUMPY) or name == _HERE or code.co_filename.startswith("<__array")):
            reader = f"autoprop's {code.co_name}"
        f = f.f_back
    return reader


def _python_scalars(seq):
    """True for a (nested) tuple of Python numbers and None: the axes of ``x.swapaxes(-1, -2)``
    or ``x.transpose(0, 2, 1, 3)``, a shape; a constant of the trace as an ``axis=`` keyword is
    (verify38 F9: the attention layers' transposes were refused as "a Python tuple"). A list is
    not (it may be changed in place between calls, unseen)."""
    if type(seq) is not tuple:
        return False
    for e in seq:
        if not (e is None or type(e) in (int, float, bool, complex) or _python_scalars(e)):
            return False
    return True


def _has_tensor(args):
    for a in args:
        if isinstance(a, Tensor) or type(a) in (list, tuple) and _has_tensor(a):
            return True
    return False


def _has_array(values):
    """True when ``values`` holds an array, a Tensor or something else not a number, None, a string or a dtype (a
    ``*_like`` call's other arguments: its result then depends on more than the shape)."""
    return any(not (v is None or isinstance(v, (int, float, complex, np.generic, str, np.dtype, type))
                    or _python_scalars(v)) for v in values)


def _python_number(out):
    """True for a numpy scalar or a Python number, or a tuple holding one (``np.divmod``'s): a value out of an
    integer argument that no trace records."""
    if type(out) is tuple:
        return any(_python_number(o) for o in out)
    return isinstance(out, (np.generic, int, float, complex))


def _plain_arg(a):
    if isinstance(a, _TracedInts):
        return a._ap_array
    if type(a) in (list, tuple):
        return type(a)(_plain_arg(e) for e in a)
    return a


def _array_bound(v):
    """True for a slice with an array or a tensor as a bound (``W[k:]``, k a 0-d integer array argument): a
    value of the call that would be a constant of the trace (verify39 F1: replayed with the first call's k)."""
    return isinstance(v, slice) and any(isinstance(b, (np.ndarray, Tensor)) for b in (v.start, v.stop, v.step))


#: id -> the user's made arrays (:func:`_made_static`) of every trace, alive
_MADE = weakref.WeakValueDictionary()


def _made_static(a, trace, what):
    """``a`` (numpy's array from shapes and numbers only, in the user's code under ``trace``: ``np.zeros_like(y)`` of an
    integer argument, ``np.arange(n)``, ``np.eye(k)``) marked a constant of the trace
    (:func:`autoprop.core.observe.static`), read-only: a write into it is refused at the trace, naming the line
    (:func:`_written_refusal`; fn46 left it writable, and a write the bytes did not show -- an empty mask from a
    global -- was frozen: verify46b F3). ``trace`` holds it by weak reference and keeps a copy, which the operations
    given ``a`` hold (:meth:`_Trace.held`); one still alive when the traced function has returned (kept on an object,
    in a cache or a global, where a later write would not reach the replays: verify46b F1) is refused
    (:meth:`_Trace.refuse_kept`)."""
    _observe.static(a)
    if trace.active:
        kept = a.copy()
        kept.flags.writeable = False
        trace.made[id(a)] = (weakref.ref(a), kept, what, _user_line())
        _MADE[id(a)] = a
    return a


def _written_refusal(trace, err):
    """TraceError for numpy's "assignment destination is read-only" (``err``) raised in the user's code while
    ``trace`` ran, when it names one of the trace's made arrays (:func:`_made_static`), else None."""
    tb, frame = err.__traceback__, None
    while tb is not None:
        name = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if not (name.startswith(_PKG) or name.startswith(_NUMPY) or name.startswith(_MANUAL)):
            frame, line = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    if frame is None:
        return None
    mine = {}
    for k, v in frame.f_locals.items():
        base = v
        while type(base) is np.ndarray and base.base is not None and _MADE.get(id(base)) is not base:
            base = base.base
        hit = trace.made.get(id(base)) if type(base) is np.ndarray else None
        if hit is not None and hit[0]() is base:
            mine[k] = hit
    if not mine:
        return None
    src = linecache.getline(frame.f_code.co_filename, line).strip()
    names = ", ".join(f"`{k}` ({what} made at {where})" for k, (_r, _c, what, where) in mine.items())
    return TraceError(
        f"autoprop.function: a write into an array made in the traced code from shapes and numbers, at "
        f"{frame.f_code.co_filename}:{line}" + (f": `{src}`" if src else "") + f"; made arrays there: {names}. "
        "Such an array is a constant of the trace, read-only while it traces: the values written into it (a global "
        "array's, a count, the labels) may change between calls, and the replays would keep the first call's. "
        "Build it with autoprop's operations instead (ap.where(cond, a, b) for a masked value, ap.one_hot(y, K) for "
        "a one-hot, autoprop.numpy.take_along_axis(logits, y[:, None], axis=1) or logits[np.arange(N), y] for the "
        "labels' logits), or compute it outside the function and pass it in as an argument. An array used by "
        "numpy alone, never given to an autoprop operation, can be a copy: np.zeros(n).copy().")


def _keeping(fwd):
    """``fwd`` as a replay runs it for an op that a tape recorded when traced: with ``_KEEP_SAVED`` set, so
    that a forward which keeps what its VJPs read only for a tape (``tape.WithSaved``: the cross-entropy's
    softmax, a recurrent step's pre-activation) keeps it, and the replay's gradient step reads it instead of
    computing it again (the same values: the VJPs read what they would have computed)."""
    def keeping(*vals, **kw):
        _KEEP_SAVED.append(True)
        try:
            return fwd(*vals, **kw)
        finally:
            _KEEP_SAVED.pop()

    return keeping


def _held_kw(trace, kw, where):
    """``kw`` with its made arrays (directly or in a tuple: ``x[np.arange(n), y]``'s key) as
    :meth:`_Trace.held` gives them."""
    def held(v):
        if type(v) is tuple:
            return tuple(held(e) for e in v)
        return trace.held(v, v, where) if isinstance(v, np.ndarray) and _observe.is_static(v) else v
    return {k: held(v) for k, v in kw.items()}


def _read_at_replay(v):
    """An array or tensor in a keyword argument, read from its slot at each replay; not one autoprop made from
    shapes only (np.roll's, np.trace's positions: ``observe.static``), a constant of the trace (issue 15)."""
    return isinstance(v, Tensor) or isinstance(v, np.ndarray) and not _observe.is_static(v)


#: numpy's scalar types of numbers (np.int64(0), np.float32(0.5), np.bool_(True)): constants of the user's code
_NUMPY_NUMBERS = frozenset(t for t in set(np.sctypeDict.values()) if issubclass(t, (np.number, np.bool_)))


def _call_leaves(x, trace, leaves, depth=0):
    """True when ``x`` (an argument of the user's numpy call on an integer argument) is a constant of the trace's code
    (a number, None, ``...``, a string, a dtype, a slice of ints, a tuple of them) or a guarded argument of ``trace``
    (appended to ``leaves``); False for anything else (a list, an array, a Tensor: refused as before)."""
    if isinstance(x, _TracedInts):
        leaves.append(x)
        return x._ap_trace is trace
    if type(x) is tuple and depth < 8:
        return all(_call_leaves(e, trace, leaves, depth + 1) for e in x)
    if type(x) is slice:
        return all(b is None or type(b) is int for b in (x.start, x.stop, x.step))
    return (x is None or x is Ellipsis or type(x) in (int, float, bool, complex, str) or isinstance(x, np.dtype)
            or type(x) in _NUMPY_NUMBERS  # (``y != np.int64(0)``: a number of the code, as 0 is; verify45c M4)
            or isinstance(x, type) and issubclass(x, (np.generic, int, float, bool, complex)))


def _put_leaves(x, values):
    """``x`` with each guarded argument replaced by the next of ``values`` (plain arrays), in :func:`_call_leaves`'
    order."""
    if isinstance(x, _TracedInts):
        return _plain_arg(next(values))
    if type(x) is tuple:
        return tuple(_put_leaves(e, values) for e in x)
    return x


def _deferred(guard, what, fn, args, kwargs):
    """The user's ``fn(*args, **kwargs)`` (an index, a method such as ``.reshape(-1, 1)`` or ``.astype(float)``, a
    ufunc with numbers, ``y == c``) on integer or boolean arguments and constants: another guarded array, whose values
    a ``produce`` step of the trace computes again at each replay by the same call on that call's values (fn45:
    ``anp.take_along_axis(z, y[:, None], axis=1)``), an early step (:meth:`_Trace.prepare`): a result of another
    shape or dtype than the traced one (a shape set by the values) traces again before any event. None when the call
    takes anything else or gives no array (a number)."""
    trace, leaves = guard._ap_trace, []
    if not guard._watched() or not (_call_leaves(args, trace, leaves) and _call_leaves(tuple(kwargs.values()), trace, leaves)):
        return None

    def call(values):
        it = iter(values)
        return fn(*_put_leaves(args, it), **dict(zip(kwargs, _put_leaves(tuple(kwargs.values()), it))))
    out = call(leaves)
    if type(out) is not np.ndarray or out.dtype.kind not in "biufc":
        return None
    shape, dtype, line = out.shape, out.dtype, _user_line()

    def make(*values):
        r = call(values)
        if type(r) is not np.ndarray or r.shape != shape or r.dtype != dtype:
            raise _tape.ShapeChanged(
                f"autoprop.function: {what} on the integer or boolean array argument `{guard._ap_name}` gives "
                f"{getattr(r, 'dtype', type(r).__name__)} of shape {getattr(r, 'shape', '()')} at this call, where "
                f"the traced call's was {dtype} of shape {shape} (at {line}): its shape depends on the values. "
                "Compute it outside the function and pass it in as an argument.")
        return r
    result = trace.produce(make, leaves, pure=True)
    slot = trace.produced.pop(id(result))[0]
    derived = _TracedInts(result, trace, guard._ap_name)
    trace.produced[id(derived)] = (slot, derived)
    return derived


class _IntsArray(np.ndarray):
    """What ``isinstance`` sees of a :class:`_TracedInts` (its ``__class__``): an ndarray, for autoprop's own
    checks (the losses', the trace's :meth:`_Trace.spec`). Never made: numpy's C code sees the real type."""


#: the integer argument's metadata, part of the input signature: the user's code reads it freely
_META = frozenset(("shape", "dtype", "ndim", "size", "itemsize", "nbytes", "strides", "flags"))
#: its methods that give the values as Python's: refused to autoprop's code too (``_TracedInts._guard``)
_PYTHON_VALUES = frozenset(("tolist", "item", "tobytes"))
#: numpy's functions that read only the metadata: autoprop's code calls them freely
_METADATA_FUNCTIONS = frozenset(getattr(np, n) for n in ("ndim", "shape", "size", "result_type", "can_cast",
                                                         "may_share_memory", "shares_memory", "iscomplexobj",
                                                         "isrealobj", "broadcast_shapes") if hasattr(np, n))
#: of those, the ones the user's code calls freely too: ``np.shape(y)``, ``np.ndim(y)``, ``np.size(y)`` read the
#: signature's metadata as ``y.shape`` does (verify44a L1); ``np.shares_memory`` & co. read addresses (refused)
_USER_METADATA = frozenset(getattr(np, n) for n in ("ndim", "shape", "size", "result_type", "can_cast", "iscomplexobj",
                                                    "isrealobj") if hasattr(np, n))
#: numpy's functions whose result is made from the shape and dtype only (and a number: full_like's fill value): a
#: constant of the trace, :func:`autoprop.core.observe.static` (``anp.zeros_like(y)``: fn45)
_LIKE = frozenset((np.zeros_like, np.ones_like, np.full_like))
#: its methods and attributes that make an array: the user's code gets another guarded array (its values as
#: unreadable; an operation given it refuses it, naming the argument, as it is not the argument itself)
_DERIVED = frozenset(("reshape", "ravel", "flatten", "copy", "astype", "transpose", "swapaxes", "squeeze", "view",
                      "take", "repeat", "diagonal", "conj", "conjugate", "T", "mT", "real", "imag"))


class _TracedInts(np.lib.mixins.NDArrayOperatorsMixin):
    """An integer or boolean array argument as the traced function sees it (one per argument: the same array
    passed twice is two slots). While its trace records, the user's own reads of its values
    (``np.count_nonzero(y != 0)``, ``if y[0] == k``, ``y -= 1``, ``y.max()``, ``int(...)``, iteration) are
    refused: the Python would run only at trace time and its result would be frozen into every replay.
    autoprop's and manualprop's code (the losses' label checks, a primitive's forward) read it as the plain
    array it holds; their conversions to Python values outside a primitive's forward are refused too (a shape or
    split points read from it would be constants of the trace).

    Not an ndarray for numpy's C code (as JAX's tracers and HIPS autograd's boxes are not): its values reach
    Python only through this class's own methods, which refuse the user's code. ``np.ndarray.tolist(y)``,
    ``memoryview(y)``, ``bytes(y)``, ``struct.unpack``, ``ctypes``' ``from_buffer``, ``np.ndarray(buffer=y)``,
    ``np.nditer(y)`` raise TypeError (fn44: they read an ndarray subclass's memory past every Python hook, and
    the replay kept the first call's values). ``isinstance(y, np.ndarray)`` is True (``__class__``).

    Read at each replay, as ``W[y]`` (fn45): the index of ``anp.take(x, y, axis=1)`` (any mode),
    ``anp.take_along_axis(x, idx, axis=1)``, ``ap.tensor_scatter_nd_add/update(x, idx, u)`` (``tape.INDEX_ARGUMENTS``:
    the composite gives the guard itself to the primitive); a boolean mask as ``where=m`` of ``anp.sum``, ``mean``,
    ``prod``, ``max``, ``min`` (a mean's count recorded too); the inputs of ``ap.numpy_function(f, [y])``, whose ``f``
    runs again at each call (one output). Metadata, part of the signature: ``y.shape``, ``np.shape(y)``,
    ``np.ndim(y)``, ``np.size(y)``; ``np.zeros_like(y)``, ``ones_like``, ``full_like`` are constants of the trace.
    The user's own ``y[:, None]``, ``y.reshape(-1, 1)``, ``y.astype(np.float64)``, ``y - 1``, ``y == c``, ``~m`` (an
    index, a method of :data:`_DERIVED` or a ufunc, with numbers, slices and other such arguments): another guard,
    computed again at each replay by the same call, before the replay's other steps (:func:`_deferred`; a result of
    another shape, as ``y[m]`` for another count of ``m``, traces again, before any event ran). Still refused:
    numpy's functions of it (``np.expand_dims(y, 1)``), a Python number from it, and ``np.eye(C)[y]`` (numpy's C
    indexing meets the guard first: make ``I = autoprop.constant(np.eye(C))`` outside, then ``I[y]``, or write
    ``anp.take(np.eye(C), y, axis=0)``). Arrays the user's code makes from numbers (``np.arange(N)``, ``np.eye(C)``,
    ``np.zeros(shape)``: :data:`_CONSTANTS`; ``np.zeros_like(y)``) are constants of the trace, read-only while it
    runs (a write refused naming the line) and refused if kept after the call (:func:`_made_static`):
    ``logits[np.arange(N), y]`` replays each call's labels (fn46)."""

    __slots__ = ("_ap_array", "_ap_trace", "_ap_name", "__weakref__")
    __hash__ = None

    def __init__(self, array, trace, name):
        self._ap_array = array  # a plain ndarray: the argument's values
        self._ap_trace = trace
        self._ap_name = name

    @property
    def __class__(self):  # (isinstance(y, np.ndarray) for autoprop's checks; type(y) is this class)
        return _IntsArray

    shape = property(lambda self: self._ap_array.shape)
    dtype = property(lambda self: self._ap_array.dtype)
    ndim = property(lambda self: self._ap_array.ndim)
    size = property(lambda self: self._ap_array.size)

    def __len__(self):
        return len(self._ap_array)

    def _watched(self):
        """True while this argument's trace records the tracing thread's own code."""
        trace = self._ap_trace
        return trace is not None and trace.active and trace in _TRACERS

    def _guard(self, what, python=False, hint=""):
        """Refuse ``what`` on the values to the user's code while the trace records; ``python``: a conversion to
        Python values (an iteration, ``int()``, ``tolist()``, numpy's functions), refused to autoprop's own code
        too, outside a primitive's forward (fn44: ``anp.split(x, y)``, ``anp.reshape(x, y)`` read the first
        call's ids as split points or a shape, constants of the trace)."""
        if not self._watched():
            return
        if python and not _from_user():
            reader = _reader()
            if reader is not None:
                raise TraceError(
                    f"autoprop.function: {reader} reads the values of the integer or boolean array argument "
                    f"`{self._ap_name}` in Python ({what}), at {_user_line()}: as a shape, axes, split points or a "
                    "count they would be the first call's at every replay. Pass them as Python ints (part of the "
                    "input signature: other values trace again), or run this code eagerly (without "
                    "@autoprop.function).")
            return
        if _from_user():
            raise TraceError(
                f"autoprop.function: {what} on the integer or boolean array argument `{self._ap_name}` of the "
                f"traced function, at {_user_line()}. A trace runs the Python once: the result would be the "
                "first call's, frozen into every replay (tf.function gets a tensor there). Compute it "
                "outside the function and pass it in as an argument (a count or a mask as a float "
                "array, e.g. np.asarray(n, dtype=np.float64) or (y != 0).astype(np.float64), which each "
                "replay reads anew), or give the integer array only to autoprop's layers, losses and "
                "operations." + hint)

    def _value_read(self, out, what):
        """``out``, computed from the values for autoprop's own code (a ufunc, an index, a method): a numpy scalar or
        a Python number is a value read in Python, refused outside a primitive's forward as :meth:`_guard`'s
        ``python`` reads are (verify44a H1: ``anp.var(x, ddof=k)`` computed ``n - k`` as a numpy scalar, a constant
        of the trace, and ``anp.linalg.norm(v, ord=k)`` branched on ``ord == 1``: every replay used the first call's
        k). An array result goes on: an operation given it refuses it (not an argument of the call)."""
        if _python_number(out):
            self._guard(what, python=True)
        return out

    def _made(self, out, how):
        """``out``, computed from the values for autoprop's own code: a plain array kept (while the trace records)
        with the argument's name, for the message of an operation that is then given it (verify44a M1: BCE's cast
        of integer targets was refused as "neither an argument of the call", not naming the argument)."""
        if type(out) is np.ndarray and self._watched():
            self._ap_trace.derived[id(out)] = (out, self._ap_name, how, _reader() or "autoprop's code")
        return out

    def _derived(self, out, what):
        """``out`` (computed from the values) for the user's code: an array as another guarded one."""
        if isinstance(out, np.ndarray) and not isinstance(out, _TracedInts):
            return _TracedInts(out.view(np.ndarray), self._ap_trace, self._ap_name)
        self._guard(what)
        return out

    def __getattr__(self, name):  # (numpy's other methods and attributes: the plain array's)
        if name.startswith("__"):  # (numpy's probes, __array_interface__ & co.: __array__ answers)
            raise AttributeError(name)
        value = getattr(self._ap_array, name)
        if name in _PYTHON_VALUES:
            self._guard(f".{name}()", python=True)
        if name in _META or not self._watched():
            return value
        if not _from_user():  # (autoprop's code: its Python numbers are refused outside a forward, _value_read)
            if not callable(value):
                return value

            def method(*args, **kwargs):
                return self._made(self._value_read(value(*args, **kwargs), f".{name}()"), f".{name}()")
            return method
        if name not in _DERIVED:
            self._guard(f".{name}" + ("()" if callable(value) else ""))
        if not callable(value):
            out = _deferred(self, f".{name}", getattr, (self, name), {})
            return out if out is not None else self._derived(value, f".{name}")

        def derived(*args, **kwargs):
            if name == "view" and any(isinstance(a, type) and issubclass(a, np.ndarray)
                                      for a in (*args, kwargs.get("type"))):
                self._guard(".view() as another array type")
            out = _deferred(self, f".{name}()", lambda a, *rest, **kw: getattr(a, name)(*rest, **kw), (self, *args),
                            kwargs)
            return out if out is not None else self._derived(value(*_plain_arg(args), **kwargs), f".{name}()")
        return derived

    def __array__(self, dtype=None, copy=None):
        self._guard("__array__() (numpy's conversion to a plain array: a numpy array indexed with it, np.eye(C)[y], or "
                    "numpy's C code given it)", hint=f" To index a numpy array with it, make that array a Tensor outside "
                    f"the function (I = autoprop.constant(np.eye(C)), then I[{self._ap_name}]: each replay reads "
                    f"{self._ap_name}), or take from it with autoprop's take: "
                    f"autoprop.numpy.take(np.eye(C), {self._ap_name}, axis=0) (numpy's np.take and np.eye(C)[...] "
                    "never show the index to autoprop). For the labels' logits: logits[np.arange(N), "
                    f"{self._ap_name}] or autoprop.numpy.take_along_axis(logits, {self._ap_name}[:, None], axis=1).")
        a = self._ap_array
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return self._made(a.astype(dtype), f"np.asarray(..., dtype={np.dtype(dtype)})")
        return self._made(a.copy() if copy else a, "np.asarray()")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if _has_tensor(inputs):
            return NotImplemented  # (the Tensor's own dispatch records the operation)
        what = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        if method == "__call__" and "out" not in kwargs and self._watched() and _from_user():
            out = _deferred(self, what, ufunc, inputs, kwargs)
            if out is not None:
                return out
        self._guard(what)
        if "out" in kwargs:
            kwargs["out"] = _plain_arg(kwargs["out"])
        return self._made(self._value_read(getattr(ufunc, method)(*_plain_arg(inputs), **kwargs), what), what)

    def __array_function__(self, func, types, args, kwargs):
        if _has_tensor(args) or _has_tensor(kwargs.values()):
            return NotImplemented
        if func in _LIKE and not _has_array(args[1:]) and not _has_array(kwargs.values()):
            out = func(*_plain_arg(args), **kwargs)
            return _made_static(out, self._ap_trace, f"np.{func.__name__}({self._ap_name})") if self._watched() \
                else _observe.static(out)
        if func is np.take_along_axis and len(args) > 1 and args[1] is self and self._watched() and (
                type(args[0]) is np.ndarray and args[0].dtype.kind in "fc" and _observe.is_static(args[0])):
            return func(Tensor._wrap(args[0]), *args[1:], **kwargs)  # (a table made in the code: recorded, fn46)
        if func not in _USER_METADATA:
            self._guard(f"np.{func.__name__}", python=func not in _METADATA_FUNCTIONS)
        return self._made(func(*_plain_arg(args), **{k: _plain_arg(v) for k, v in kwargs.items()}),
                          f"np.{func.__name__}")

    def __getitem__(self, key):
        if self._watched() and _from_user():
            out = _deferred(self, "indexing", operator.getitem, (self, key), {})
            if out is not None:
                return out
        self._guard("indexing")
        return self._made(self._value_read(self._ap_array[_plain_arg(key)], "indexing"), "indexing")

    def __setitem__(self, key, value):
        self._guard("an assignment into it")
        self._ap_array[_plain_arg(key)] = _plain_arg(value)

    def __copy__(self):
        return _TracedInts(self._ap_array.copy(), self._ap_trace, self._ap_name)

    def __deepcopy__(self, memo):
        return self.__copy__()


def _guarded_read(convert, what):
    def read(self, *args):
        self._guard(what, python=True)
        return convert(self._ap_array, *args)
    read.__name__ = what
    return read


# Python's conversions of the values (numpy's indexing tries __index__ first: a non-0-d array's TypeError sends it
# to __array__), each refused to the user's code while the trace records
for _name, _convert, _what in (
        ("__iter__", iter, "iterating"), ("__contains__", lambda a, v: v in a, "`in`"),
        ("__bool__", bool, "bool() (an `if` on it)"), ("__int__", int, "int()"), ("__index__", operator.index, "an index"),
        ("__float__", float, "float()"), ("__complex__", complex, "complex()"), ("__repr__", repr, "repr()"),
        ("__str__", str, "str()"), ("__format__", format, "format()"), ("__round__", round, "round()"),
        ("__reduce_ex__", lambda a, protocol: a.__reduce_ex__(protocol), ".__reduce__()")):
    setattr(_TracedInts, _name, _guarded_read(_convert, _what))
del _name, _convert, _what

# a primitive's forward gets the plain array (core's conversion table; core knows nothing of this)
_tape._PLAIN[_TracedInts] = lambda a: a._ap_array
_tape.INDEX_ARGUMENTS.add(_TracedInts)  # (take, take_along_axis, tensor_scatter_nd_*: the index as itself)

#: numpy's constructors that copy or view an array as a plain ndarray in C, past ``__array_function__``: an
#: integer argument given to one of them would leave its guard (verify42b F18: ``np.asarray(y)`` then a loop
#: over the labels made a one-hot of the first call's labels, frozen into every replay). Patched while a trace
#: runs, as np.random's names are. ``np.asanyarray(y)`` too: it gives the argument itself, as it gave the ndarray
#: subclass the guard was before fn44 (the guard is no ndarray for C code: its ``__array__`` refuses the user's).
_ESCAPES = ("asarray", "array", "ascontiguousarray", "asfortranarray", "frombuffer", "asanyarray")


def _watched_ints(a, depth=0):
    """The integer argument (a watched :class:`_TracedInts`) in ``a`` or in its (nested) lists and tuples."""
    if isinstance(a, _TracedInts):
        return a if a._watched() else None
    if type(a) in (list, tuple) and depth < 8:
        for e in a:
            hit = _watched_ints(e, depth + 1)
            if hit is not None:
                return hit
    return None


def _numpy_caller():
    """The numpy function the user called when numpy's own Python (not the user's code) calls a patched
    constructor (:data:`_ESCAPES`), as ``numpy.ma.core.array``; else None."""
    f, outer = sys._getframe(2), None  # (the caller of escape)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_NUMPY):
        outer, f = f, f.f_back
    if outer is None:
        return None
    module = outer.f_globals.get("__name__", "numpy")
    return f"{module}.{getattr(outer.f_code, 'co_qualname', outer.f_code.co_name)}"


def _escape_guard(name, original, thread):
    """``np.<name>`` while a trace runs: on an integer argument of the traced function, in the user's code of the
    tracing thread, the argument itself when the result would hold its values unchanged (``y = np.asarray(y)``:
    it stays guarded, and autoprop's operations read each call's values); anything else refused, naming the
    argument and the line."""
    def escape(*args, **kwargs):
        if args and threading.get_ident() == thread:
            hit = _watched_ints(args[0])
            if hit is not None and _from_user():
                dtype = kwargs.get("dtype", args[1] if len(args) > 1 and name != "frombuffer" else None)
                inside = _numpy_caller()
                if inside is not None:  # (np.ma.array(m), as_strided(m): numpy's Python would hand the guard to C)
                    hit._guard(f"{inside} (np.{name} inside it: numpy's C code needs a real array)")
                if (hit is args[0] and name != "frombuffer" and (dtype is None or np.dtype(dtype) == hit.dtype)
                        and kwargs.get("ndmin", 0) <= hit.ndim and (name != "array" or len(args) <= 2)):
                    return hit
                hit._guard(f"np.{name}")
        return original(*args, **kwargs)
    escape.__name__ = name
    escape.__wrapped__ = original
    return escape


class _Plan:
    """One ``tape.gradient`` of a trace: the reverse walk's VJP calls as a list, made once."""

    __slots__ = ("seeds", "steps", "results", "slots")


class _Trace:
    """The recording of one call (one input signature) and its replay."""

    def __init__(self, name):
        self.name = name
        self._active = True  # False while an event's own Python runs (its ops are not steps)
        self.thread = threading.get_ident()  # the tracing thread: other threads' code is not traced
        self.opt_serial = next(_optim._SERIALS)  # optimizers made after this one: made inside
        self.slot = {}  # Tensor._key -> slot of its value
        self.nslots = 0
        self.steps = []  # ("op" | "produce" | "effect" | "grad", ...) in program order
        self.produced = {}  # id(array) -> (slot, array): arrays from replayed() / array arguments
        self.start = _next_key()  # Tensors with a smaller key were made before the trace
        self.kwslot = {}  # out key -> slot of the kwargs with "saved" (WithSaved forwards)
        self.opspecs = {}  # first out key -> (slot per argument or None, the constants' template)
        self.argslots = []  # the slots the call's array arguments fill
        self.early = []  # (make, ins, slot): pure steps of the arguments alone, computed first at replay (prepare)
        self.early_slots = set()  # the argument slots and the early steps' slots
        self.state = None  # tensor._STATE when traced or last replayed
        self.names = ()  # the values of the function's global and closure names when traced (_Names)
        self.called = {}  # id -> (layer, its layout function, its comparison): the layers called while tracing
        self.layout = ()  # (layer, layout function, comparison, layout when traced): their lists and dicts of layers
        self.guards = []  # (list, a copy of its items when traced): tape.guard_traced's options (np.pad's pad_width)
        self.derived = {}  # id(array) -> (array, argument, how, by): autoprop's plain arrays from an integer argument
        self.int_origin = {}  # Tensor._key -> the integer argument's name: results of recorded ops on one (messages)
        self.int_tensors = {}  # id -> (value, name): integer Tensor arguments' arrays (messages)
        self.made = {}  # id -> (weakref to the array, its read-only copy, what made it, line): the user's constants

    @property
    def active(self):
        """True while the trace records this thread's operations (not inside an event's own
        Python, and never another thread's: its eager code runs beside the trace untouched)."""
        return self._active and threading.get_ident() == self.thread

    @active.setter
    def active(self, value):
        self._active = value

    # ------------------------------------------------------------------ recording
    def layer_called(self, layer, layout, same=None):
        """A layer's ``__call__`` while this trace records (autoprop.layers reports it, with the function reading
        its lists and dicts of layers: ``layout(layer)``, compared at each call by :meth:`same_layout`; ``same``:
        ``same(layer, then)`` says what ``_same(layout(layer), then)`` says, without building the layout)."""
        if self.active:
            self.called.setdefault(id(layer), (layer, layout, same))

    def same_layout(self):
        """Whether every layer called while tracing holds the same layers and Variables in its lists, tuples and
        dicts as when traced (an in-place change, ``model.layers.pop()``, sets no attribute: review39)."""
        for layer, layout, same, then in self.layout:
            if not (same(layer, then) if same is not None else _same(layout(layer), then)):
                return False
        return True

    def guard(self, value):
        """Keep the list ``value`` and a copy of its items (:func:`autoprop.core.tape.guard_traced`)."""
        if self.active:
            self.guards.append((value, copy.deepcopy(value)))

    def same_guards(self):
        """Whether every guarded list holds the items it held when traced (else the call traces again)."""
        return all(value == then for value, then in self.guards)

    def new_slot(self):
        self.nslots += 1
        return self.nslots - 1

    def refuse(self, what):
        if threading.get_ident() != self.thread:
            return  # (another thread's eager code)
        raise TraceError(
            f"autoprop.function: {what} is not supported inside a traced function (at {_user_line()}); "
            "call it outside the function, or run this code eagerly (without @autoprop.function).")

    def value_only(self, name, args):
        """np.allclose, np.count_nonzero & co. (plain values computed from the tensors' values); ``anp.sum(m)``,
        ``anp.reshape(y, (-1, 1))`` & co. given an integer or boolean array argument as data and no float Tensor
        (numpy's own function on the values, not recorded: refused naming it, verify44a M2)."""
        if threading.get_ident() == self.thread and name not in ("compress", "extract"):  # (a condition: its own)
            for a in args:
                g = _watched_ints(a)
                if g is not None and g._ap_trace is self and name in ("take", "take_along_axis") and len(args) > 1 \
                        and a is args[1]:
                    raise TraceError(
                        f"autoprop.function: autoprop.numpy.{name} (or np.{name}) takes from a plain array at the "
                        f"integer argument `{g._ap_name}`, at {_user_line()}: with no float Tensor among its inputs it "
                        "is numpy's own function on the values, which the trace does not record, and the table may "
                        "change between calls. Make the table a Tensor outside the function (T = "
                        f"autoprop.constant(table), then autoprop.numpy.{name}(T, {g._ap_name}, axis=...): each replay "
                        f"reads {g._ap_name}); a table made inside from shapes (np.eye(K)) is taken as a constant; a "
                        "float Tensor is taken and recorded.")
                if g is not None and g._ap_trace is self:
                    raise TraceError(
                        f"autoprop.function: autoprop.numpy.{name} (or np.{name}) gets the integer or boolean array "
                        f"argument `{g._ap_name}` as data, at {_user_line()}: with no float Tensor among its inputs it "
                        "is numpy's own function on the values (nothing in it has a derivative), which the trace "
                        "does not record, so every replay would get the first call's result. Pass "
                        f"`{g._ap_name}` as a float array ({g._ap_name}.astype(np.float64) before the call: a float "
                        "argument is traced as a Tensor, and autoprop's operations on it are recorded), or compute "
                        "this outside the function and pass the result in as an argument.")
        for a in args:
            for t in (a if type(a) in (list, tuple) else (a,)):
                if isinstance(t, Tensor):
                    self.convert(t, f"np.{name} (a plain value computed from the tensor's values)")

    def convert(self, t, what):
        if not self.active:
            return
        if (t._key in self.slot or isinstance(t, Variable) or t._key >= self.start) and not (
                t._key not in self.slot and _observe.is_static(t._value)):  # (a constant from shapes: a constant)
            self.derived_refusal(t._value, what, "a tensor")  # (ap.convert_to_tensor(y): names y)
            arg = self.int_origin.get(t._key)
            if arg is not None:  # (anp.abs(y), a recorded op of an integer argument, then anp.sum of it: verify44a L5)
                raise TraceError(
                    f"autoprop.function: {what} of a traced tensor computed from the integer or boolean array argument "
                    f"`{arg}` at {_user_line()}: the trace records autoprop's operations on `{arg}`, but this one "
                    "gives a plain value (no float Tensor among its inputs), which would be the first call's at every "
                    f"replay. Pass `{arg}` as a float array ({arg}.astype(np.float64) before the call: a float "
                    "argument is traced as a Tensor and every operation on it is recorded), or compute this outside "
                    "the function and pass the result in as an argument.")
            raise TraceError(
                f"autoprop.function: {what} of a traced tensor at {_user_line()}. While a function is "
                "traced a tensor stands for the value of every later call, so it cannot become a Python "
                "or numpy value: the first call's value would be frozen into the replays (tf.function "
                "refuses the same). Compute with autoprop operations (ap.where for an `if`), or return "
                "the tensor and convert it outside the function.")

    def held(self, a, v, where):
        """The constant an operation's replay reads for the static array ``a`` (``v``: its value as the operation
        takes it, a cast maybe): ``v`` for autoprop's own; for the user's made one (:func:`_made_static`), its copy
        made with it (or ``v``, made now), never ``a`` itself (held by weak reference: :meth:`refuse_kept`);
        TraceError for one made while another trace ran."""
        if not isinstance(a, np.ndarray) or _MADE.get(id(a)) is not a:
            return v  # (autoprop's own, read-only)
        hit = self.made.get(id(a))
        if hit is not None and hit[0]() is a:
            if a.flags.writeable or a.tobytes() != hit[1].tobytes():  # (the user set it writable again)
                raise TraceError(
                    f"autoprop.function: {where} gets the array {hit[2]} made at {hit[3]}, made writable and "
                    f"written into since, at {_user_line()}: a constant of the trace is read-only while it traces. "
                    "Build it with autoprop's operations (ap.where, ap.one_hot), or compute it outside the "
                    "function and pass it in as an argument.")
            return hit[1] if v is a else v  # (v: the operation's cast of it, made now)
        raise TraceError(
            f"autoprop.function: {where} gets an array made from shapes while another trace ran, at {_user_line()}: "
            "kept since, its values now are not provably those it was made with, so the trace refuses rather than "
            "freeze them. Make it again in this function, build it with autoprop's operations (ap.where(mask, v, z); "
            "a one-hot: ap.one_hot(y, K) or anp.take(np.eye(K), y, axis=0)), or compute it outside the function and "
            "pass it in as an argument.")

    def refuse_kept(self):
        """TraceError when a made array (:func:`_made_static`) is still alive after the traced function returned:
        kept on an object, in a cache, a global or a closure, a later write into it would not reach the replays,
        which hold its copy (verify46b F1). A made array held only by a reference cycle is not kept: ``gc.collect``
        settles it, run only when one is still alive (a full collection costs ~0.9 CPU-s in a process holding a test
        suite's modules; nothing to settle when reference counting freed them all, as it does in most traces)."""
        if any(ref() is not None for ref, *_ in self.made.values()):
            gc.collect()
        alive = [(what, line) for ref, _kept, what, line in self.made.values() if ref() is not None]
        self.made = {k: (lambda: None, *rest) for k, (_r, *rest) in self.made.items()}
        if alive:
            what, line = alive[0]
            raise TraceError(
                f"autoprop.function: the array {what} made at {line} outlives the traced call (kept on an object, in "
                "a cache or a global): it is a constant of the trace, and a later write into it (a mask pruned, a "
                "table updated) would not reach the replays, which keep its first values. Keep such state in a "
                "Variable (ap.Variable(mask, trainable=False), changed with .assign), make it anew inside the "
                "function at each call, or pass it in as an argument.")

    def spec(self, a, v, where):
        """Where an argument's value comes from at replay: ("s", slot), ("v", var, slot) or ("c", value)."""
        if isinstance(a, Tensor):
            if type(a) is Variable or isinstance(a, Variable):
                if a._key >= self.start:
                    self.made_inside(a)
                s = self.new_slot()
                return ("v", a, s)
            s = self.slot.get(a._key)
            if s is not None:
                return ("s", s)
            if a._key < self.start:  # a Tensor captured from outside: immutable, held by reference
                return ("c", v)
            if _observe.is_static(a._value):  # of autoprop's constant from shapes (anp.zeros_like(y))
                return ("c", self.held(a._value, v, where))
            self.derived_refusal(a._value, where, "a tensor")  # (anp.dot(t, y): y's values as a constant Tensor)
            raise TraceError(
                f"autoprop.function: {where} gets a tensor made inside the function from a value that is "
                f"not traced (autoprop.constant, Tensor(...) of a numpy array), at {_user_line()}: the "
                "trace would freeze that value. Pass it as an argument, or make it outside the function.")
        if isinstance(a, np.ndarray):
            hit = self.produced.get(id(a))
            if hit is not None and hit[1] is a:
                return ("s", hit[0])
            if _observe.is_static(a):  # autoprop's own, from shapes only (np.tril's mask): a constant (issue 15)
                return ("c", self.held(a, v, where))
            if isinstance(a, _TracedInts):  # y.astype(np.float64), y.reshape(-1, 1): a copy or view of an argument
                raise TraceError(
                    f"autoprop.function: {where} gets an array made inside the function from the integer argument "
                    f"`{a._ap_name}` (cast, reshaped or copied: now {a.dtype}, shape {a.shape}), at {_user_line()}: "
                    "the trace does not follow numpy's own calls on it, so it would freeze the first call's values. "
                    f"Convert `{a._ap_name}` outside the function and pass the result as the argument "
                    f"({a._ap_name}.astype(np.float64) before the call), or give `{a._ap_name}` itself to "
                    "autoprop's layers, losses and operations.")
            self.derived_refusal(a, where, "a numpy array")
            raise TraceError(
                f"autoprop.function: {where} gets a numpy array that is neither an argument of the call "
                f"nor a Variable, at {_user_line()}. The trace cannot prove it constant (a fresh draw, "
                "an attribute rebound between calls), so it refuses rather than freeze it: pass the "
                "array as an argument, hold it in an autoprop.Variable, or make it an autoprop.constant "
                "outside the function.")
        if isinstance(a, (list, tuple)) and not _python_scalars(a):
            raise TraceError(
                f"autoprop.function: {where} gets a Python {type(a).__name__} as an array at "
                f"{_user_line()}: pass an array argument or an autoprop.constant made outside the function.")
        return ("c", v)

    def derived_refusal(self, a, where, kind):
        """Refuse an array autoprop's code made from an integer or boolean argument (:meth:`_TracedInts._made`),
        naming the argument (verify44a M1: BCE's cast of integer targets was "neither an argument of the call")."""
        made = self.derived.get(id(a))
        if made is None or made[0] is not a:
            return
        _, arg, how, by = made
        mask = (f"As a mask, pass a boolean array as the argument (where={arg} reads a boolean argument at each replay) "
                f"or select with it inside the function (anp.where({arg}, z, 0) or z * {arg}: each replay reads it); as "
                "data, " if a.dtype == bool else "Where it is data, ")
        advice = (f"{mask}convert `{arg}` outside the function and pass the result as the argument "
                  f"({arg}.astype(np.float64) before the call: a float array argument is traced as a Tensor, read anew "
                  f"at each replay); as indices, give `{arg}` only to what reads it at each replay (t[{arg}], "
                  "autoprop's layers and losses)")
        raise TraceError(
            f"autoprop.function: {where} gets {kind} made from the integer or boolean array argument `{arg}` by {by} "
            f"({how}: now {a.dtype}, shape {a.shape}), at {_user_line()}: the trace does not follow that numpy call, "
            f"so every replay would get the first call's values. {advice}, or run this code eagerly (without "
            "@autoprop.function).")

    def made_inside(self, var):
        raise TraceError(
            f"autoprop.function: a Variable made inside the traced function is used at {_user_line()}: "
            "a replay would keep the first call's Variable and its value from one call to the next, "
            "where each eager call makes a new one. Make the Variable outside the function (as "
            "tf.function requires) and pass it in or close over it; a layer that builds its Variables on its "
            "first call: call the model once before the traced function, or build() it.")

    def op(self, prim, args, vals, kwargs, outs, multi):
        if not self.active:
            return
        if _FORWARD:
            self.refuse("a ForwardAccumulator")
        if _registry.PRIMITIVES.get(prim.name) is not prim and getattr(prim.fwd, "__closure__", None):
            self.refuse(f"{prim.name} (a primitive made at run time, whose forward and VJPs hold this "
                        "call's values: custom_gradient)")
        where = f"autoprop.{prim.name}"
        kw = kwargs
        if "saved" in kwargs:
            kw = {k: v for k, v in kwargs.items() if k != "saved"}
        kw, kwfill = self.kw_spec(kw, where)
        template, fill, vfill = [], [], []
        for i, (a, v) in enumerate(zip(args, vals)):
            sp = self.spec(a, v, where)
            if sp[0] == "s":
                template.append(None)
                fill.append((i, sp[1]))
            elif sp[0] == "v":
                template.append(None)
                vfill.append((i, sp[1], sp[2]))
            else:
                template.append(sp[1])
        inputs = (*args, *(e for v in kwargs.values() for e in (v if type(v) is tuple else (v,))))  # (getitem's key)
        origin = next((a._ap_name if isinstance(a, _TracedInts) else self.int_origin[a._key] for a in inputs
                       if isinstance(a, _TracedInts) or isinstance(a, Tensor) and a._key in self.int_origin), None)
        outslots = []
        for o in outs:
            s = self.new_slot()
            self.slot[o._key] = s
            outslots.append(s)
            if origin is not None:
                self.int_origin[o._key] = origin
        # the VJPs' kwargs: with "saved" when the forward returns a WithSaved, which may depend on
        # the values (lstm_gates_at), so every replay writes them into this slot
        kws = self.new_slot()
        self.kwslot[outs[0]._key] = kws
        specs = [None] * len(args)  # (slot, a Variable's read?) of each argument, None for a constant
        for i, s in fill:
            specs[i] = (s, False)
        for i, _var, s in vfill:
            specs[i] = (s, True)
        # a forward that kept what its VJPs read for this trace's tape (kwargs' "saved") keeps it at
        # every replay too (_keeping): the gradient step then reads it, as the tape's walk does
        fwd = _keeping(prim.fwd) if "saved" in kwargs and _RECORDING else prim.fwd
        self.steps.append(("op", fwd, template, tuple(fill), tuple(vfill), kw,
                           tuple(outslots), multi, kws, kwfill, prim))
        self.opspecs[outs[0]._key] = (specs, template)

    def kw_spec(self, kw, where):
        """The keyword arguments without their arrays, and where each array comes from at replay.
        Only ``getitem``'s integer index arrays are taken (``W[y]``, Embedding's lookup: verify38
        F8), when each is an integer argument of the call or an array a layer makes at each replay
        (Embedding's checked indices): the result's shape is then the indices' shape, part of the
        signature. An index array autoprop made from shapes only (np.roll's, np.trace's: ``observe.static``) stays
        in ``kw``, a constant. Any other array is refused (a boolean mask sets the shape by its values).
        Returns ``(kw, fill)``, ``fill`` a tuple of (name, the tuple's template or None, slots)."""
        fill = []
        for k, v in kw.items():
            if any(_array_bound(e) for e in (v if isinstance(v, tuple) else (v,))):
                raise TraceError(
                    f"autoprop.function: {where} gets a slice whose bound is an array in its keyword argument "
                    f"{k}= (W[k:] with k a 0-d integer array argument?), at {_user_line()}: the bound sets the "
                    "result's shape, and the trace would freeze the first call's. Pass the bound as a Python "
                    "int (each value then traces once), or run this code eagerly (without @autoprop.function).")
            if _read_at_replay(v):
                fill.append((k, None, self.index_slot(v, where, k)))
            elif isinstance(v, tuple) and any(_read_at_replay(e) for e in v):
                arrays = tuple((i, self.index_slot(e, where, k)) for i, e in enumerate(v) if _read_at_replay(e))
                fill.append((k, tuple(None if _read_at_replay(e) else _held_kw(self, {k: e}, where)[k] for e in v),
                             arrays))
        if fill:
            kw = {k: v for k, v in kw.items() if k not in {f[0] for f in fill}}
        return _held_kw(self, kw, where), tuple(fill)

    def index_slot(self, v, where, k):
        hit = self.produced.get(id(v)) if isinstance(v, np.ndarray) else None
        if (hit is not None and hit[1] is v and where == "autoprop.getitem" and k == "key"
                and v.dtype.kind in "iu"):
            return hit[0]
        boolean = isinstance(v, np.ndarray) and v.dtype.kind == "b"
        what = ("a boolean mask, whose count of True sets the result's shape" if boolean
                else "not an integer argument of the call")
        arg = self.int_tensors.get(id(v))
        if arg is not None and arg[0] is v or isinstance(v, Tensor):  # (verify46b F6: the advice below refused too)
            name = arg[1] if arg is not None and arg[0] is v else "y"
            raise TraceError(
                f"autoprop.function: {where} gets the integer autoprop Tensor argument `{name}` in its keyword "
                f"argument {k}= (labels passed as ap.constant({name})), at {_user_line()}: an integer Tensor carries "
                "no gradient and autoprop's operations take its values as numpy's, which the trace does not read "
                "anew at each replay, so it would freeze them. Pass the labels as the numpy integer array itself "
                f"({name}.numpy() outside the function; each replay then "
                "reads that call's labels: logits[np.arange(N), y], "
                "autoprop.numpy.take_along_axis(logits, y[:, None], axis=1)), or use ap.one_hot(y, K), or run "
                "this code eagerly (without @autoprop.function).")
        raise TraceError(
            f"autoprop.function: {where} gets an array in its keyword argument {k}= (an index array?), "
            f"{what}, at {_user_line()}: the trace would freeze it. Index with slices or with an integer "
            "array passed as an argument of the function (the labels' logits: logits[np.arange(N), y] with "
            "N = logits.shape[0], or autoprop.numpy.take_along_axis(logits, y[:, None], axis=1)), or run this "
            "code eagerly (without @autoprop.function).")

    def produce(self, make, tensors, pure=False):
        """``make(*values of tensors)``, made again at each replay. ``pure``: ``make`` is a function of its
        inputs alone, with no side effect (the user's numpy on an integer argument, :func:`_deferred`; a
        ``numpy_function`` with ``stateful=False``); where its inputs are the call's arguments or other such
        steps' results, each replay computes it before any other step (:meth:`prepare`), so that a result of
        another shape than the traced one traces again before any event ran (verify45c H1)."""
        ins = [self.spec(t, t._value if isinstance(t, Tensor) else t, "a layer's replayed value")
               if isinstance(t, (Tensor, np.ndarray)) else ("c", t) for t in tensors]
        self.active = False
        try:
            out = make(*[t._value if isinstance(t, Tensor) else t for t in tensors])
        finally:
            self.active = True
        if not isinstance(out, np.ndarray):  # (a Python number would enter the ops as a constant)
            raise TypeError(f"autoprop.core.tape.replayed: {make!r} returned {type(out).__name__}, not an array")
        s = self.new_slot()
        self.produced[id(out)] = (s, out)
        if pure and all(sp[0] == "c" or sp[0] == "s" and sp[1] in self.early_slots for sp in ins):
            self.early_slots.add(s)
            self.early.append((make, ins, s))
            self.steps.append(("early", make, ins, s))
        else:
            self.steps.append(("produce", make, ins, s))
        return out

    def effects_recorded(self):
        """The trace's events so far (``Variable.assign*``, ``apply_gradients``, a layer's replayed effect)."""
        return any(step[0] == "effect" for step in self.steps)

    def same_value(self, src, out):
        """``out`` (a new Tensor: stop_gradient's) holds ``src``'s value: at each replay, the value ``src`` has then.
        No gradient flows from ``out`` to ``src``: the plans are made from the tapes, where ``out`` is a cut."""
        ins = [self.spec(src, src._value if isinstance(src, Tensor) else src, "autoprop.stop_gradient")]
        s = self.new_slot()
        self.slot[out._key] = s
        self.steps.append(("produce", _itself, ins, s))

    def effect(self, fn, tensors):
        ins = [self.spec(t, t._value if isinstance(t, Tensor) else t, "a layer's replayed effect")
               if isinstance(t, (Tensor, np.ndarray)) else ("c", t) for t in tensors]
        self.steps.append(("effect", fn, ins))
        self.active = False
        try:
            return fn(*[t._value if isinstance(t, Tensor) else t for t in tensors])
        finally:
            self.active = True

    def assign(self, var, method, value):
        if not self.active:
            return
        if var._key >= self.start:
            self.made_inside(var)
        if isinstance(value, Tensor) or isinstance(value, np.ndarray):
            sp = self.spec(value, value._value if isinstance(value, Tensor) else value, f"{method}")
        else:
            sp = ("c", value)
        self.steps.append(("effect", getattr(type(var), method), [("c", var), sp]))

    def apply(self, opt, grads_and_vars):
        """``opt.apply_gradients(grads_and_vars)`` as an event (the optimizer's real code at replay).
        ``NotImplemented`` (the optimizer then runs its own code) while the trace does not record:
        in the event's own Python, at another thread's step or replay."""
        if not self.active:
            return NotImplemented
        if getattr(opt, "_serial", -1) > self.opt_serial:
            raise TraceError(
                f"autoprop.function: {type(opt).__name__}.apply_gradients at {_user_line()}: the optimizer "
                "was made inside the traced function. Each eager call makes a fresh one (new slots, "
                "step 0), where a replay would keep this one and its state (momentum, Adam's moments, "
                "iterations) from one call to the next. Make the optimizer outside the function and "
                "close over it (tf.function refuses variables made at every call the same way).")
        pairs = list(grads_and_vars)
        ins, variables = [], []
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                break  # (the optimizer writes the message below)
            g, var = pair
            if not isinstance(var, Variable):
                self.refuse(f"apply_gradients to a {type(var).__name__} (not an autoprop.Variable)")
            ins.append(("c", None) if g is None else self.spec(g, getattr(g, "_value", g), "apply_gradients"))
            variables.append(var)
        else:
            fn = functools.partial(_apply_event, opt, tuple(variables))
            self.steps.append(("effect", fn, ins))
        self.active = False  # (the optimizer's own code now: this hook declines)
        try:
            return type(opt).apply_gradients(opt, pairs)
        finally:
            self.active = True

    def gradient(self, tape, target, sources, output_gradients, unconnected, trace):
        if tape._persistent:
            self.refuse("a persistent GradientTape")
        if not tape._watch_accessed:
            self.refuse("GradientTape(watch_accessed_variables=False)")
        if _RECORDING:
            self.refuse("a nested GradientTape (gradient while another tape records)")
        if output_gradients is not None:
            self.refuse("gradient(..., output_gradients=...)")
        if trace:
            self.refuse("gradient(..., trace=...)")
        if tape._complex:
            self.refuse("a complex value on the tape")
        if unconnected not in (_tape.UnconnectedGradients.NONE, "none"):
            self.refuse("gradient(..., unconnected_gradients='zero')")
        if tape._used:
            self.refuse("a second gradient call on a non-persistent tape")
        flat_sources, _ = _tape._flatten(sources) if type(sources) is not list else (sources, None)
        targets = [target] if isinstance(target, Tensor) else _tape._flatten(target)[0]
        plan = self.plan(tape, targets, flat_sources)
        self.active = False
        try:
            results = tape.gradient(target, sources)
        finally:
            self.active = True
        flat_results = [results] if isinstance(results, Tensor) or results is None else _tape._flatten(results)[0]
        out = []
        for r in flat_results:
            if r is None:
                out.append(None)
            else:
                rs = self.new_slot()
                self.slot[r._key] = rs
                out.append(rs)
        plan.results = out
        self.steps.append(("grad", plan))
        return results

    def plan(self, tape, targets, sources):
        """The reverse walk of :func:`autoprop.core.tape._walk` as a list of VJP calls on slots."""
        gslot = {}

        def g_of(key):
            s = gslot.get(key)
            if s is None:
                s = gslot[key] = len(gslot)
            return s

        tracked = tape._tracked
        keep = {s._key for s in sources}
        p = _Plan()
        p.seeds = []
        for t in targets:
            if not isinstance(t, Tensor) or (t._key not in tracked and t._key not in keep):
                continue
            if t._value.dtype.kind not in "f":
                self.refuse("a gradient of a non-float target")
            p.seeds.append((g_of(t._key), t._value.shape, t._value.dtype))
        nodes = tape._nodes[:]
        reach = None if _tape._roots_asked(tape, keep) else _tape._reaching(nodes, keep)
        steps = []
        for node in reversed(nodes):
            multi = node.__class__ is _tape.MultiNode
            pairs = node.pairs if reach is None else _tape._asked(node.pairs, reach)
            if not pairs:
                continue
            outkeys = node.key if multi else (node.key,)
            gs = tuple(g_of(k) for k in outkeys)
            first = outkeys[0]
            specs, template = self.opspecs[first]
            ins = list(node.vals)
            fill = []
            prim = node.prim
            for j, v in enumerate(ins):
                # every value is passed, also where the node keeps a NotSaved stand-in: what a record
                # saves may depend on the values (lstm_gates_at's WithSaved), and a VJP reads only
                # what it needs; the compact form (relu's mask) where the node kept one
                sp = specs[j]
                if sp is None:
                    ins[j] = template[j]
                    continue
                s, is_var = sp
                c = None
                if prim.compact and j in prim.compact and not is_var and not isinstance(v, _tape.NotSaved):
                    c = prim.compact[j]
                fill.append((j, s, c))
                ins[j] = None
            ans = ("slots", tuple(self.slot[k] for k in outkeys)) if multi else ("slot", self.slot[first])
            kws = self.kwslot.get(first)
            steps.append((prim.vjps, prim.joint_vjp, multi, gs, ans, ins, tuple(fill),
                          _held_kw(self, node.kwargs, f"autoprop.{prim.name}"), kws,  # (a made key: its copy)
                          tuple((i, g_of(ka)) for i, ka in pairs)))
        p.steps = steps
        res = []
        for s in sources:
            if s._key not in gslot:
                res.append(None)
            else:
                res.append((gslot[s._key], s._value.shape, s._value.dtype))
        p.slots = (len(gslot), res)
        return p

    # ------------------------------------------------------------------ replay
    def prepare(self, arrays):
        """The replay's slots with this call's arguments and the early steps' results (:meth:`produce`'s ``pure``:
        the user's numpy on its integer arguments), computed before any step of the program; None where one of
        them has another shape or dtype than when traced (the caller traces again: no event has run). An early
        step that raises otherwise runs again at its place in the program, where it raises as the eager call
        would (after the events before it)."""
        env = [None] * self.nslots
        for s, v in zip(self.argslots, arrays):
            env[s] = v
        for make, ins, s in self.early:
            try:
                env[s] = make(*_values(ins, env))
            except _tape.ShapeChanged:
                return None
            except Exception:  # (raised again at its place: run)
                pass
        return env

    def replay(self, arrays):
        """:meth:`prepare` and :meth:`run` (benchmarks/train_step.py times it); TraceError where :meth:`prepare`
        finds another shape (:class:`Function` traces again there)."""
        env = self.prepare(arrays)
        if env is None:
            raise TraceError(f"autoprop.function: {self.name}'s replay: the user's numpy on an integer argument has "
                             "another shape than when traced (a new count of a mask): trace again")
        return self.run(env)

    def run(self, env):
        """Run the steps on the prepared slots ``env`` (:meth:`prepare`); returns ``env``."""
        for step in self.steps:
            kind = step[0]
            if kind == "op":
                _k, fwd, template, fill, vfill, kw, outslots, multi, kws, kwfill, prim = step
                if kwfill:
                    kw = _fill_kwargs(kw, kwfill, env)
                vals = template.copy()
                for i, s in fill:
                    vals[i] = env[s]
                for i, var, s in vfill:
                    vals[i] = env[s] = var._value
                try:
                    arr = fwd(*vals, **kw) if kw else fwd(*vals)
                except (ValueError, TypeError, IndexError) as exc:  # the eager call's error (verify39 F3: W[10])
                    raise _tape._op_exception(prim, vals, kw, exc) from exc
                if type(arr) is _tape.WithSaved:
                    env[kws] = {**kw, "saved": arr[1]}
                    arr = arr[0]
                else:
                    env[kws] = kw
                if multi:
                    for s, a in zip(outslots, arr):
                        env[s] = a
                else:
                    env[outslots[0]] = arr if type(arr) is np.ndarray else np.asarray(arr)
            elif kind == "grad":
                _grad(step[1], env)
            elif kind == "produce" or kind == "early" and env[step[3]] is None:
                _k, make, ins, s = step
                try:
                    env[s] = make(*_values(ins, env))
                except _tape.ShapeChanged as exc:
                    raise TraceError(str(exc)) from None
            elif kind == "early":
                pass
            else:
                _k, fn, ins = step
                fn(*_values(ins, env))
        return env


def _fill_kwargs(kw, kwfill, env):
    """The keyword arguments of a replayed op with this call's index arrays (Trace.kw_spec)."""
    kw = dict(kw)
    for k, template, slots in kwfill:
        if template is None:
            kw[k] = env[slots]
        else:
            key = list(template)
            for i, s in slots:
                key[i] = env[s]
            kw[k] = tuple(key)
    return kw


def _same(a, b):
    """``a`` and ``b`` (layouts: nested tuples of objects) hold the same objects, by identity."""
    if a is b:
        return True
    if type(a) is not tuple or type(b) is not tuple or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is not y and not _same(x, y):
            return False
    return True


def _itself(value):
    return value


def _values(ins, env):
    out = []
    for sp in ins:
        if sp[0] == "s":
            out.append(env[sp[1]])
        elif sp[0] == "v":
            out.append(sp[1]._value)
        else:
            out.append(sp[1])
    return out


def _apply_event(opt, variables, *grads):
    """The replayed ``opt.apply_gradients(zip(grads, variables))``, ``grads`` the plan's arrays.

    An optimizer whose ``apply_gradients`` and ``_update_all`` are the base class's, with no
    listener (``_APPLY_HOOKS``: an outer trace) and plain SGD, takes its checked update of array
    pairs (``_SGD_ON``, autoprop's ``_sgd_on_variables``) on the arrays themselves, as
    ``_update_all`` would after reading each Tensor: the same checks and bits, without four
    Tensors and the pairs' loop. Anything else, or a pair that update refuses (it changes
    nothing then), takes ``apply_gradients`` on Tensors, which writes the message."""
    cls = type(opt)
    if (variables and not _optim._APPLY_HOOKS and cls.apply_gradients is _APPLY_GRADIENTS
            and _optim._base_update_all(opt) and _optim._plain_sgd(opt)):
        sgd_on = _optim._SGD_ON.get(type(variables[0]))
        if sgd_on is not None and sgd_on(opt.learning_rate, grads, variables):
            opt.iterations += 1  # (as apply_gradients after its update)
            return
    pairs = []
    for g, v in zip(grads, variables):
        pairs.append((None if g is None else _wrap(g), v))
    type(opt).apply_gradients(opt, pairs)


_APPLY_GRADIENTS = _optim.Optimizer.apply_gradients


@np.errstate(divide="ignore", invalid="ignore")  # (as the reverse walk, tape._backward)
def _grad(plan, env):
    n, res = plan.slots
    genv = [None] * n
    for s, shape, dtype in plan.seeds:
        v = np.empty(shape, dtype)
        v.fill(1)
        genv[s] = v if genv[s] is None else genv[s] + v
    owned = {}
    Scatter = _tape.Scatter
    for vjps, joint, multi, gs, ans, ins, fill, kwargs, kws, pairs in plan.steps:
        if multi:
            g = tuple(genv[s] for s in gs)
            if all(x is None for x in g):
                continue
            a = tuple(env[s] for s in ans[1])
        else:
            g = genv[gs[0]]
            if g is None:
                continue
            a = env[ans[1]]
        if kws is not None:
            kwargs = env[kws]
        if fill:
            ins = ins.copy()
            for j, s, c in fill:
                v = env[s]
                if c is not None:
                    v = c(v, True)
                    if type(v) is _tape.PartlySaved:
                        v.key = v.ident = None
                ins[j] = v
        if joint is not None:
            joint = joint(pairs, g, a, *ins, **kwargs)
        for i, ga in pairs:
            if joint is None:
                gi = vjps[i](g, a, *ins, **kwargs) if kwargs else vjps[i](g, a, *ins)
            else:
                gi = joint[i]
            if gi is None:
                continue
            prev = genv[ga]
            if gi.__class__ is Scatter:  # (the walk's in-place addition of a slice's gradient)
                _tape.scatter_into(genv, ga, gi, prev, owned)
            else:
                genv[ga] = gi if prev is None else prev + gi
    for r, out in zip(res, plan.results):
        if out is None:
            continue
        gs, shape, dtype = r
        g = genv[gs]
        if type(g) is not np.ndarray or g.dtype != dtype or g.shape != shape:  # GradientTape._gradient's
            g = np.asarray(g)  # conversions of a VJP's result that is not an array of the source's kind
            if g.dtype != dtype:
                g = g.astype(dtype)
            if g.shape != shape:
                g = np.broadcast_to(g, shape)
        env[out] = g


# ---------------------------------------------------------------------------- the decorator
_ARRAY, _PY = "array", "python"


def _flatten_args(x, leaves, sig):
    """The leaves of the call's arguments (nested lists, tuples, dicts) and the signature."""
    if type(x) is np.ndarray:  # (the usual leaf first)
        sig.append((_ARRAY, True, x.shape, x.dtype.str))
        leaves.append(x)
    elif type(x) in (list, tuple):
        sig.append((type(x), len(x)))
        for e in x:
            _flatten_args(e, leaves, sig)
    elif type(x) is dict:
        sig.append((dict, tuple(x)))
        for k in x:
            _flatten_args(x[k], leaves, sig)
    elif isinstance(x, Variable):
        sig.append(("variable", id(x)))
    elif isinstance(x, (Tensor, np.ndarray)):
        v = x._value if isinstance(x, Tensor) else x
        sig.append((_ARRAY, type(x) is np.ndarray, v.shape, v.dtype.str))
        leaves.append(x)
    else:
        try:
            hash(x)
        except TypeError:
            raise TypeError(
                f"autoprop.function: an argument of type {type(x).__name__} is neither an array, a "
                "Tensor, a Variable nor hashable: the input signature cannot name it") from None
        # (0.0 == -0.0, one hash: their signs kept apart, 1 / x differs)
        sig.append((_PY, type(x), x, str(x)) if isinstance(x, float) and x == 0 else (_PY, type(x), x))


def _as_traced(x, trace, name):
    """The argument as the traced function sees it: a float array becomes a Tensor (as
    tf.function converts numpy arguments), an integer array (labels) stays an array whose
    identity names its slot; each array leaf gets a slot. ``name``: the argument's, for messages."""
    if type(x) in (list, tuple):
        return type(x)(_as_traced(e, trace, f"{name}[{i}]") for i, e in enumerate(x))
    if type(x) is dict:
        return {k: _as_traced(v, trace, f"{name}[{k!r}]") for k, v in x.items()}
    if isinstance(x, Variable) or not isinstance(x, (Tensor, np.ndarray)):
        return x
    s = trace.new_slot()
    trace.argslots.append(s)
    trace.early_slots.add(s)
    if isinstance(x, Tensor):
        t = _wrap(x._value)
        trace.slot[t._key] = s
        if x._value.dtype.kind in "iub":  # (messages: labels passed as ap.constant(y), verify46b F6)
            trace.int_tensors[id(x._value)] = (x._value, name)
        return t
    if x.dtype.kind in "fc":
        t = _wrap(x)
        trace.slot[t._key] = s
        return t
    v = _TracedInts(x.view(np.ndarray), trace, name)  # (one per argument: the same array passed twice is two slots)
    trace.produced[id(v)] = (s, v)
    return v


def _outputs(x, trace):
    """The result's structure with each traced tensor as ("slot", s)."""
    if type(x) in (list, tuple):
        return (type(x), [_outputs(e, trace) for e in x])
    if type(x) is dict:
        return (dict, {k: _outputs(v, trace) for k, v in x.items()})
    if isinstance(x, Tensor) and not isinstance(x, Variable):
        s = trace.slot.get(x._key)
        if s is None:
            if x._key >= trace.start:
                raise TraceError("autoprop.function: the function returns a tensor made inside it from a "
                                 "value that is not traced: return it as an array made outside, or compute "
                                 "it from the arguments")
            return ("const", x)
        return ("slot", s)
    if isinstance(x, types.GeneratorType):
        raise TraceError(
            "autoprop.function: the function is a generator function (it returns a generator): its "
            "body runs only when the generator is consumed, after the trace, so nothing would be traced "
            "and every call would return the first call's generator. Decorate a function that returns "
            "its values, and loop outside it.")
    if isinstance(x, np.ndarray):
        raise TraceError(
            "autoprop.function: the function returns a numpy array: it would be the first call's array "
            "at every replay. Return tensors (or Python values, which are constants of the trace).")
    return ("const", x)


def _rebuild(spec, env):
    kind, v = spec
    if kind == "slot":
        return _wrap(env[v])
    if kind == "const":
        return v
    if kind is dict:
        return {k: _rebuild(e, env) for k, e in v.items()}
    return kind(_rebuild(e, env) for e in v) if kind is tuple else [_rebuild(e, env) for e in v]


def _body(fn):
    """``(f, k)``: the Python function a traced callable runs, ``k`` positional arguments bound before the call's:
    a ``functools.partial``'s ``func`` (its ``args`` bound), a callable object's ``__call__`` (a bound method);
    ``fn`` itself otherwise (verify43b F5: a partial or a callable object raised AttributeError ``__name__``, and
    their global names were not watched)."""
    k = 0
    while isinstance(fn, functools.partial):
        k += len(fn.args)
        fn = fn.func
    if getattr(getattr(fn, "__func__", fn), "__code__", None) is None and callable(fn):
        call = fn.__call__
        if getattr(getattr(call, "__func__", call), "__code__", None) is not None:
            fn = call
    return fn, k


def _parameter_names(fn, n):
    """The names of the first ``n`` positional parameters of ``fn`` (``*args``'s as ``args[i]``), for messages."""
    fn, bound = _body(fn)
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    names = list(code.co_varnames[:code.co_argcount]) if code is not None else []
    if code is not None and getattr(fn, "__self__", None) is not None and names:
        names = names[1:]  # (a bound method: self is not an argument of the call)
    names = names[bound:]
    star = code.co_varnames[code.co_argcount + code.co_kwonlyargcount] if code is not None and code.co_flags & 4 else None
    out = []
    for i in range(n):
        if i < len(names):
            out.append(names[i])
        elif star is not None:
            out.append(f"{star}[{i - len(names)}]")
        else:
            out.append(f"argument {i + 1}")
    return out


def _escape_patches(fn, trace):
    """(namespace, name, original, guard) for numpy's constructors in ``_ESCAPES`` and :data:`_CONSTANTS`: numpy's own
    names, and the traced function's global names bound to them (``from numpy import asarray``)."""
    thread = trace.thread

    def guard(n, original):
        return _escape_guard(n, original, thread) if n in _ESCAPES else _constant_guard(n, original, trace)
    out = [(np.__dict__, n, getattr(np, n), guard(n, getattr(np, n))) for n in (*_ESCAPES, *_CONSTANTS)]
    body = _body(fn)[0]
    g = getattr(getattr(body, "__func__", body), "__globals__", None)
    if g is not None and g is not np.__dict__:
        originals = {id(getattr(np, n)): n for n in (*_ESCAPES, *_CONSTANTS)}
        for k, v in list(g.items()):
            n = originals.get(id(v))
            if n is not None and v is getattr(np, n):
                out.append((g, k, v, guard(n, v)))
    return out


#: numpy's constructors whose array, made in the user's code of a traced function from Python numbers only (shapes,
#: a fill value), is a constant of the trace (:func:`_made_static`): ``logits[np.arange(N), y]`` (the
#: cross-entropy idiom, N from a shape: fn46), ``x * np.eye(3)``. Patched while a trace runs, as :data:`_ESCAPES`.
_CONSTANTS = ("arange", "eye", "identity", "zeros", "ones", "full", "tri")


def _numbers(x, depth=0):
    """True for Python's or numpy's numbers, None, strings, dtypes and number types, in tuples and lists of them."""
    if type(x) in (tuple, list) and depth < 4:
        return all(_numbers(e, depth + 1) for e in x)
    return (x is None or type(x) in (int, float, bool, complex, str) or type(x) in _NUMPY_NUMBERS
            or isinstance(x, np.dtype) or isinstance(x, type) and issubclass(x, (np.generic, int, float, bool, complex)))


def _constant_guard(name, original, trace):
    """``np.<name>`` while ``trace`` runs: called by the user's own code (the frame calling it) of the tracing thread
    with numbers only, a constant of the trace (:func:`_made_static`); else numpy's own call."""
    def make(*args, **kwargs):
        out = original(*args, **kwargs)
        if (threading.get_ident() == trace.thread and trace.active and type(out) is np.ndarray
                and _numbers(args) and _numbers(tuple(kwargs.values()))):
            caller = os.path.abspath(sys._getframe(1).f_code.co_filename)
            if not (caller.startswith(_PKG) or caller.startswith(_NUMPY) or caller.startswith(_MANUAL)):
                return _made_static(out, trace, f"np.{name}(...)")
        return out
    make.__name__ = name
    make.__wrapped__ = original
    return make


_TRACE_LOCK = threading.RLock()
_UNBOUND = object()


class _Names:
    """The global and closure names a traced function's own code reads (its nested functions and
    comprehensions too): ``model``, ``opt``, ``reg``. A trace keeps their values as it left them;
    a name rebound since (``opt = SGD(learning_rate=1.0)``, ``reg = 1.0``) makes the next call
    trace again, as an eager call reads the new object (verify38 F0b: a rebound optimizer was
    replayed as the old one, silently). A value read through an object or a dict
    (``state["scale"]``) or by a function it calls is not seen: a constant of the trace."""

    __slots__ = ("globals", "names", "cells")

    def __init__(self, fn):
        f = getattr(fn, "__func__", fn)  # (a bound method: its function's names)
        code = getattr(f, "__code__", None)
        self.globals = getattr(f, "__globals__", None) or {}
        self.cells = tuple(getattr(f, "__closure__", None) or ())
        names, stack = set(), [code] if code is not None else []
        while stack:
            c = stack.pop()
            names.update(i.argval for i in dis.get_instructions(c) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME"))
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        self.names = tuple(sorted(names))

    def values(self):
        g = self.globals
        out = [g.get(n, _UNBOUND) for n in self.names]
        for c in self.cells:
            try:
                out.append(c.cell_contents)
            except ValueError:  # (a cell not yet filled)
                out.append(_UNBOUND)
        return out

    def rebound(self, saved):
        """True when a name is bound to another object than ``saved`` (the trace's): :meth:`values` compared item by
        item as it is read, without building its list (at each call of a traced function: issue 15)."""
        g, i = self.globals, 0
        for n in self.names:
            if g.get(n, _UNBOUND) is not saved[i]:
                return True
            i += 1
        for c in self.cells:
            try:
                v = c.cell_contents
            except ValueError:  # (a cell not yet filled)
                v = _UNBOUND
            if v is not saved[i]:
                return True
            i += 1
        return False



#: traces kept per input signature besides the newest, for other shapes of the user's numpy on an integer argument
#: (``y[m]``: one per count of ``m``), the oldest dropped
_VARIANTS = 8


def _no_cache():
    """None: a copied instance's cache of a traced method (:meth:`Function.__reduce__`)."""
    return None


class Function:
    """A Python function traced per input signature and replayed (:func:`function`)."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self._fn = fn
        if not isinstance(getattr(self, "__name__", None), str):  # a partial, a callable object: its body's name
            inner = fn
            while isinstance(inner, functools.partial):
                inner = inner.func
            self.__name__ = getattr(inner, "__name__", None) or type(inner).__name__
        self._names = _Names(_body(fn)[0])
        self._traces = {}
        self._variants = {}  # signature -> other traces of it: where the shape of y[m] & co. differed (prepare)
        self.traces = 0  # how many traces ran (a new signature, a layer's Python state changed, a name rebound)

    def __get__(self, obj, objtype=None):  # a method: bound per instance, one cache each
        if obj is None:
            return self
        bound = obj.__dict__.get(f"_autoprop_function_{id(self)}")
        if bound is None or bound._fn.__self__ is not obj:  # (none yet, or a shallow copy's: the original's)
            bound = Function(self._fn.__get__(obj, objtype))
            bound._cache = True
            obj.__dict__[f"_autoprop_function_{id(self)}"] = bound
        return bound

    def __reduce__(self):
        """copy.deepcopy and pickle: the function without its traces (they hold modules and the trace's arrays;
        a copy traces anew for itself, verify46b F4). A method's per-instance cache (:meth:`__get__`) becomes
        None, so the copied instance binds its own on the next access (a copied cache would train the
        original's weights)."""
        if self.__dict__.get("_cache"):
            return (_no_cache, ())
        return (Function, (self._fn,))  # (a bound method: bound to the copy by copy and pickle)

    @property
    def trace_count(self):
        """int: how many input signatures have been traced."""
        return len(self._traces)

    def __call__(self, *args, **kwargs):
        if _TRACERS:  # called inside another traced function: inlined in its trace (as TF)
            return self._fn(*args, **kwargs)
        if _RECORDING or _FORWARD:
            raise TraceError(
                f"autoprop.function: {self.__name__} was called while a GradientTape or ForwardAccumulator "
                "records: its replay is not recorded on them (the gradient would be missing). Open the "
                "tape inside the function, or call the function undecorated.")
        leaves, sig = [], []
        for a in args:  # (the top level inline: a training step's arguments are arrays)
            if type(a) is np.ndarray:
                sig.append((_ARRAY, True, a.shape, a.dtype.str))
                leaves.append(a)
            else:
                _flatten_args(a, leaves, sig)
        if kwargs:
            sig.append("keywords")
            _flatten_args(kwargs, leaves, sig)
        key = tuple(sig)
        entry = self._traces.get(key)
        if entry is None or not self._usable(entry[0]):
            self._variants.pop(key, None)
            return self._trace(key, args, kwargs)
        arrays = [x._value if isinstance(x, Tensor) else x for x in leaves]
        for chosen in (entry, *self._variants.get(key, ())):
            env = chosen[0].prepare(arrays) if chosen is entry or self._usable(chosen[0]) else None
            if env is not None:
                break
        else:  # the user's numpy on an integer argument has another shape (y[m], another count): trace again
            result = self._trace(key, args, kwargs)
            variants = self._variants.setdefault(key, [])
            variants.insert(0, entry)
            del variants[_VARIANTS:]
            return result
        trace, out = chosen
        trace.run(env)
        trace.state = _STATE[0]  # (the replay's own events set the running statistics)
        return _rebuild(out, env)

    def _usable(self, trace):
        """False where a layer's attribute was set since, a list or dict of its layers changed, or a global or
        closure name was rebound (the call traces again)."""
        return (trace.state == _STATE[0] and not self._names.rebound(trace.names) and trace.same_layout()
                and trace.same_guards())

    def _trace(self, key, args, kwargs):
        with _TRACE_LOCK:  # one trace at a time (the core reports to the innermost, _TRACERS[-1])
            return self._trace_locked(key, args, kwargs)

    def _trace_locked(self, key, args, kwargs):
        trace = _Trace(self.__name__)
        names = _parameter_names(self._fn, len(args))
        targs = tuple(_as_traced(a, trace, n) for a, n in zip(args, names))
        tkwargs = {k: _as_traced(v, trace, k) for k, v in kwargs.items()}
        patched = {n: getattr(np.random, n) for n in _NP_RANDOM_NAMES}
        escapes = _escape_patches(self._fn, trace)
        others = _OtherDraws()  # other threads' draws meanwhile: not the trace's (review39 F5)
        _TRACERS.append(trace)
        _tape._sync_extra()
        _optim._APPLY_HOOKS.append(trace.apply)
        for n in patched:
            setattr(np.random, n, _np_random_refusal(n, patched[n], trace.thread, others))
        for holder, n, _original, guard in escapes:
            holder[n] = guard
        try:
            state = others.snapshot(start=True)
            try:
                result = self._fn(*targs, **tkwargs)
            except ValueError as e:
                refusal = _written_refusal(trace, e) if "read-only" in str(e) else None
                if refusal is None:
                    raise
                raise refusal from e
            out = _outputs(result, trace)
            after = others.snapshot(start=False)
        finally:
            for n, f in patched.items():
                setattr(np.random, n, f)
            for holder, n, original, guard in reversed(escapes):
                if holder.get(n) is guard:
                    holder[n] = original
            _optim._APPLY_HOOKS.remove(trace.apply)
            _TRACERS.remove(trace)
            _tape._sync_extra()
            trace.derived = {}  # (messages only: the arrays are not kept)
        if not others.explain(state, after):
            raise TraceError(
                f"autoprop.function: {self.__name__} drew from numpy's global random state while tracing "
                "(through a name imported before the trace; another thread's draws through np.random's names are "
                "not counted): the draw would be frozen into every replay. "
                "Draw outside the function and pass the draw in as an argument.")
        trace.refuse_kept()
        trace.state = _STATE[0]
        trace.names = self._names.values()  # (as the trace left them: its own Python side effects kept)
        trace.layout = tuple((layer, f, same, then) for layer, f, same in trace.called.values() if (then := f(layer)))
        self._traces[key] = (trace, out)
        self.traces += 1
        return result


def function(fn=None):
    """Trace a Python function once per input signature and replay it on numpy arrays.

    autoprop's ``tf.function``. The first call with a new input signature *traces*: it runs
    the Python eagerly (the undecorated function's results) and records the primitives, each
    ``tape.gradient`` as a plan of VJP calls, and the events whose Python runs at every call
    (``apply_gradients``, ``Variable.assign*``, Dropout's mask, BatchNorm's statistics). A
    later call with that signature *replays* the record on numpy arrays (no Tensors, tape or
    reverse walk): the eager step's numbers, bit for bit.

    Parameters
    ----------
    fn : callable
        Typically a Keras-style training step: a ``GradientTape`` block, ``tape.gradient``,
        ``optimizer.apply_gradients``, ``return loss``.

    Returns
    -------
    Function
        Callable as ``fn``; ``.trace_count`` says how many signatures were traced.

    Raises
    ------
    TraceError
        While tracing, naming the line, wherever a trace would freeze a value or cannot follow the code:
        converting a traced tensor to a Python or numpy value (``float``, ``bool`` and so a Python ``if`` on
        it, ``int``, ``.numpy()``, ``np.asarray``, ``.item()``, an index), or numpy's value-only functions on
        one (``np.allclose``, ``np.any``, ``np.count_nonzero``); ``np.random``'s module-level functions; a
        numpy array that enters an operation without being an argument or a Variable (not guarded: a fresh draw
        or an attribute rebound between calls; one made in it from numbers, ``np.arange(N)``, is a read-only
        constant: a write into it, or keeping it after the call, refused); a tensor made inside the function
        from such a value; a persistent or nested tape, ``watch_accessed_variables=False``, ``stop_recording``,
        ``jacobian``, ``batch_jacobian``, ``backward_source``, ``output_gradients=``, ``unconnected_gradients='zero'``, a
        ``ForwardAccumulator``, ``custom_gradient``, a Variable or optimizer made inside the function; a call
        while a tape records; a generator function; the function's own numpy on an integer or boolean array
        argument (``np.count_nonzero(y != 0)``, ``y -= 1``, an ``if`` or a loop on it).

    Notes
    -----
    The input signature (as ``tf.function``'s): the shape and dtype of each array or Tensor argument, the identity
    of each Variable, the value of every other (hashable) argument such as ``training=True``. A new signature traces
    again. Float arrays come as Tensors, integer and boolean arrays (labels, masks) as guarded arrays, one per argument,
    for autoprop's operations (``np.asarray(y)`` gives the argument itself; its values as a plain array, a buffer, an
    iterator or Python numbers, ``y.tolist()``, are refused, naming it; no ndarray for numpy's C code:
    ``np.ndarray.sum(y)``, ``memoryview(y)`` raise numpy's bare TypeError); a list of ints (``W[idx]``): by value.
    autoprop's own Python reading them outside an operation (``anp.reshape(x, y)``, ``anp.var(x, ddof=k)``) is refused
    too: pass Python ints; so is one given as data with no float Tensor (``anp.sum(m)``: numpy's own function,
    unrecorded): pass a float array (``anp.take`` & co. read it at each replay: ``_TracedInts``); not refused: ``gc.get_referents(y)``.

    Variables are read by reference at each replay (an ``assign`` between calls is seen); a layer attribute, a
    Variable's ``trainable``, a list of layers or a global or closure name of the function's own code
    (``opt = SGD(...)``, ``reg = 1.0``) changed since traces again. Other Python values (read through an object, a
    dict or a function it calls; a captured Tensor) are constants of the trace, as in TensorFlow; a list of ints
    given to np.pad, np.tile, np.repeat, np.roll & co. as an option (``pad_width``, ``reps``) is part of the
    signature, its items read at each call (changed in place: traced again), and an array option is refused. Python
    side effects (``print``, appending to a list) run only while tracing, as in TensorFlow; the layers' and losses'
    checks of their inputs' values run at every replay, as do integer index arguments (``W[y]``, Embedding); a
    boolean mask index is refused. ``stop_gradient`` passes its value on at each replay. One trace runs at a time.

    Examples
    --------
    >>> import numpy as np, autoprop as ap
    >>> model = ap.layers.Sequential(ap.layers.Linear(3, 2, rng=0))
    >>> loss_fn, opt = ap.losses.SoftmaxCrossEntropy(), ap.optimizers.SGD(learning_rate=0.1)
    >>> @ap.function
    ... def train_step(x, y):
    ...     with ap.GradientTape() as tape:
    ...         loss = loss_fn(y, model(x, training=True))
    ...     grads = tape.gradient(loss, model.trainable_variables)
    ...     opt.apply_gradients(zip(grads, model.trainable_variables))
    ...     return loss
    >>> x, y = np.ones((4, 3)), np.array([0, 1, 1, 0])
    >>> first = train_step(x, y)                # traces (runs eagerly, updates once)
    >>> second = train_step(x, y)               # replays: the loss after that update
    >>> train_step.trace_count, bool(second.numpy() < first.numpy())
    (1, True)
    """
    if fn is None:
        return function
    return Function(fn)
