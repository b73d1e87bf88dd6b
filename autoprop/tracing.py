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

numpy constants (issue 15). tf.function keeps the numpy values its Python computes while tracing as constants of
the graph. Here an array is a constant of the trace only where its provenance says it cannot differ at a later call
with the same signature:

* an array that numpy's constructors (``np.zeros``, ``np.ones``, ``np.empty``, ``np.full``, ``np.eye``,
  ``np.identity``, ``np.arange``, ``np.linspace``, ``np.array``/``np.asarray`` of numbers, ``np.diag``,
  ``np.triu_indices``, ``np.meshgrid`` & co.: ``_CONSTRUCTORS``) make from Python values, called by the function's
  own code (not a library's) by their numpy names (``np.zeros``, ``anp.zeros``; read from the call's source span,
  Python 3.11+: before, such an array is refused as before);
* whatever numpy computes from such arrays and Python values only: ``3 * np.eye(3)``, ``np.triu(np.ones((n, n)), 1)
  * -1e10``, slices, reshapes, ``c.sum()``, writes of constants into one (``h[0] = 1.0``, ``c += 1``); Tensors made
  from them (``ap.constant(np.eye(3))``, autoprop.numpy's names on them, ``np.zeros_like(x)`` of a traced ``x``);
* Python ints (shapes, counts, indices) count as Python values, constants of the trace whatever they were read
  from (a dict, an attribute, ``len(lst)``), as in TensorFlow; a float or complex only when it is a literal of the
  traced code, a Python argument of the call or a global or closure value of the function (each part of the
  signature), and a numpy scalar only when computed from constants (``c.sum()``, ``c[0]``): a draw
  (``rng.random()``), ``float(outside[0])``, ``W.tolist()`` or ``cfg.scale`` is refused; a Python list only when
  nothing outside the running code holds it (a literal, a local, an argument: ``np.array(SCALES)`` of a global
  list, changed in place between calls, is refused).

Not a constant, refused where it enters an operation, naming why and the line: an array that meets any other array
(an argument's values, an array from outside the function, a draw, an
integer argument as an index: ``np.eye(n)[y]``, one-hot by the labels; ``ap.constant(np.eye(n))[y]`` is recorded,
read at each replay), or whose memory was written with such a value (``h[:] = outside``, ``np.copyto``, ``out=``),
or viewed as a plain array (``c.view(np.ndarray)``, writes through it unseen). Each use holds a copy of the value the
array has then, and so does the tracing call's tape (a write after a use changes later uses only, as eagerly).
A constant the function keeps after the call (a cache in a dict, an attribute, a global, a closure), or returns, is
refused at the trace's end: the user could change or rebind it before a later call, which a replay would not see.
While tracing, the constants' memory is read-only to code the trace cannot follow, so ``rng.shuffle(c)`` or
``rng.random(out=c)`` (numpy's Cython) raises :class:`TraceError` instead of freezing a draw. A tensor written into a numpy array (``H[t + 1] = h``) is refused
with the rewrite (a list and ``np.stack``).

This module stands above ``autoprop.core`` (as ``optimizers`` does): the core reports to the
trace in progress through ``autoprop.core.tensor._TRACERS`` and knows nothing of this module,
layers or optimizers; the optimizer reports through ``manualprop.optim._APPLY_HOOKS``.
"""

from __future__ import annotations

import ast
import copy
import dis
import functools
import gc
import linecache
import os
import sys
import sysconfig
import threading
import types
import weakref

import numpy as np

from manualprop import optim as _optim

from .core import observe as _observe
from .core import registry as _registry
from .core import tape as _tape
from .core.tensor import _FORWARD, _RECORDING, _STATE, _TRACERS, Tensor, Variable, _next_key

__all__ = ["function", "TraceError"]

_wrap_new = object.__new__
_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NUMPY = os.path.dirname(os.path.abspath(np.__file__)) + os.sep
_MANUAL = os.path.dirname(os.path.abspath(_optim.__file__)) + os.sep
_HERE = os.path.abspath(__file__)


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


def _exc_line(exc):
    """``file:line: source`` of the innermost frame of ``exc``'s traceback outside the libraries (:data:`_LIBRARY`)."""
    where = "an unknown line"
    tb = exc.__traceback__
    while tb is not None:
        name = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if not name.startswith(_LIBRARY) and not name.endswith(".pyx"):  # (Cython's frames: numpy's .pyx)
            src = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip()
            where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" + (f": `{src}`" if src else "")
        tb = tb.tb_next
    return where


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
    autoprop's or manualprop's (whose uses of an argument are recorded or checked again)."""
    f = sys._getframe(1)
    while f is not None:
        name = os.path.abspath(f.f_code.co_filename)
        if name.startswith(_NUMPY) or name == _HERE or f.f_code.co_filename.startswith("<__array"):
            f = f.f_back
            continue
        return not (name.startswith(_PKG) or name.startswith(_MANUAL))
    return False


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


def _array_bound(v):
    """True for a slice with an array or a tensor as a bound (``W[k:]``, k a 0-d integer array argument): a
    value of the call that would be a constant of the trace (verify39 F1: replayed with the first call's k)."""
    return isinstance(v, slice) and any(isinstance(b, (np.ndarray, Tensor)) for b in (v.start, v.stop, v.step))


def _read_at_replay(v):
    """An array or tensor in a keyword argument, read from its slot at each replay; not one autoprop made from
    shapes only (np.roll's, np.trace's positions: ``observe.static``), a constant of the trace (issue 15)."""
    return isinstance(v, Tensor) or isinstance(v, np.ndarray) and not _observe.is_static(v)


class _TracedInts(np.ndarray):
    """An integer or boolean array argument as the traced function sees it (a view of the
    caller's array, one per argument: the same array passed twice is two slots). While its
    trace records, the user's own numpy on it (``np.count_nonzero(y != 0)``, ``if y[0] == k``,
    ``y -= 1``, ``y.max()``, ``int(...)``, iteration) is refused: the Python would run only at
    trace time and its result would be frozen into every replay. autoprop's and manualprop's
    code (the losses' label checks, a primitive's forward) read it as a plain array."""

    def __array_finalize__(self, obj):
        self._ap_trace = getattr(obj, "_ap_trace", None)
        self._ap_name = getattr(obj, "_ap_name", "?")

    def _watched(self):
        """True while this argument's trace records the tracing thread's own code."""
        trace = self._ap_trace
        return trace is not None and trace.active and trace in _TRACERS

    def _guard(self, what):
        if self._watched() and _from_user():
            raise TraceError(
                f"autoprop.function: {what} on the integer or boolean array argument `{self._ap_name}` of the "
                f"traced function, at {_user_line()}. A trace runs the Python once: the result would be the "
                "first call's, frozen into every replay (tf.function gets a tensor there). Compute it "
                "outside the function and pass it in as an argument (a count or a mask as a float "
                "array, e.g. np.asarray(n, dtype=np.float64) or (y != 0).astype(np.float64), which each "
                "replay reads anew), or give the integer array only to autoprop's layers, losses and "
                "operations.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if _has_tensor(inputs):
            return NotImplemented  # (the Tensor's own dispatch records the operation)
        self._guard(f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}"))
        if "out" in kwargs:
            kwargs["out"] = _plain(kwargs["out"])
        return getattr(ufunc, method)(*_plain(inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if _has_tensor(args) or _has_tensor(kwargs.values()):
            return NotImplemented
        self._guard(f"np.{func.__name__}")
        return func(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()})

    def view(self, *args, **kwargs):
        out = np.ndarray.view(self, *args, **kwargs)
        if not isinstance(out, _TracedInts):  # (a plain array of the same memory: its values unwatched)
            self._guard(".view() as another array type")
        return out

    def __array__(self, *args, **kwargs):
        self._guard("__array__()")
        return np.ndarray.__array__(self, *args, **kwargs)


def _guarded_method(name, what):
    method = getattr(np.ndarray, name)

    def guarded(self, *args, **kwargs):
        self._guard(what)
        return method(self, *args, **kwargs)
    guarded.__name__ = name
    return guarded


_GUARDED = {"__getitem__": "indexing", "__setitem__": "an assignment into it", "__iter__": "iterating",
            "__bool__": "bool() (an `if` on it)", "__int__": "int()", "__float__": "float()",
            "__index__": "an index"}
for _name in ("item", "tolist", "tobytes", "argmax", "argmin", "argsort", "argpartition", "sort",
              "partition", "nonzero", "searchsorted", "fill", "put", "itemset", "dot", "trace",
              "dump", "dumps", "tofile", "__complex__", "__reduce__", "__reduce_ex__", "__setstate__",
              "__dlpack__"):
    _GUARDED[_name] = f".{_name}()"
for _name, _what in _GUARDED.items():
    if hasattr(np.ndarray, _name):
        setattr(_TracedInts, _name, _guarded_method(_name, _what))


def _guarded_attribute(name):
    attribute = getattr(np.ndarray, name)

    def get(self):
        self._guard(f".{name}")  # (a plain array, a buffer or an iterator over the values: unwatched)
        return attribute.__get__(self)
    return property(get, doc=f"ndarray.{name}, refused to the user's code while the argument's trace records")


for _name in ("base", "data", "flat", "ctypes", "__array_interface__", "__array_struct__"):
    setattr(_TracedInts, _name, _guarded_attribute(_name))
del _name, _what
# a primitive's forward gets the plain array (core's conversion table; core knows nothing of this)
_tape._PLAIN[_TracedInts] = lambda a: np.ndarray.view(a, np.ndarray)

#: numpy's constructors that copy or view an array as a plain ndarray in C, past ``__array_function__``: an
#: integer argument given to one of them would leave its guard (verify42b F18: ``np.asarray(y)`` then a loop
#: over the labels made a one-hot of the first call's labels, frozen into every replay). Patched while a trace
#: runs, as np.random's names are.
_ESCAPES = ("asarray", "array", "ascontiguousarray", "asfortranarray", "frombuffer")


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
                if (hit is args[0] and name != "frombuffer" and (dtype is None or np.dtype(dtype) == hit.dtype)
                        and kwargs.get("ndmin", 0) <= hit.ndim and (name != "array" or len(args) <= 2)):
                    return hit
                hit._guard(f"np.{name}")
        return original(*args, **kwargs)
    escape.__name__ = name
    escape.__wrapped__ = original
    return escape


# ---------------------------------------------------------------- numpy constants made inside the function
# (issue 15) tf.function holds the numpy values its Python computes while tracing as constants of the graph. Here
# an array is a constant of the trace only when its provenance says it cannot differ at a later call: numpy's
# constructors (np.zeros, np.eye, np.arange, np.array of numbers: _CONSTRUCTORS) called by the function from
# Python values, and whatever numpy computes from such arrays and Python values only (3 * np.eye(3),
# np.triu(np.ones((3, 3)), 1), a slice, a reshape), marked by the type _TraceConst. An array that meets any other
# array (an argument's values, an array from outside the function, a draw, an integer argument as an index) is not,
# nor one written into with such a value (the memory's owner is "tainted"); both are refused where they enter an
# operation, naming why. Tensors made inside from constants (ap.constant([1., 2.]), autoprop.numpy's names on
# them) are kept by key (_Trace.consts).


def _root(a):
    """The array that owns ``a``'s memory (the end of its ``base`` chain)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _plain(a):
    """``a`` with each :class:`_TraceConst` and :class:`_TracedInts` in it (in lists, tuples, dict values) a plain
    ndarray view."""
    if isinstance(a, (_TraceConst, _TracedInts)):
        return np.ndarray.view(a, np.ndarray)
    if type(a) in (list, tuple):
        return type(a)(_plain(e) for e in a)
    if type(a) is dict:
        return {k: _plain(v) for k, v in a.items()}
    return a


def _tracing_now():
    """The trace recording this thread now, or None."""
    if _TRACERS:
        t = _TRACERS[-1]
        if t.active:
            return t
    return None


def _const_of(r, trace, taint=None):
    """numpy's result ``r`` with each plain array in it a :class:`_TraceConst` of ``trace`` (``taint``: why it is
    not a constant, None when it is)."""
    if type(r) is np.ndarray:
        v = r.view(_TraceConst)
        v._ap_trace, v._ap_taint = trace, taint
        trace.views.append(weakref.ref(v))
        if taint is None:
            trace.const_root(v)
        return v
    if isinstance(r, _TraceConst):
        r._ap_trace, r._ap_taint = trace, taint or r._ap_taint
        if taint is None:
            trace.const_root(r)
        return r
    if isinstance(r, np.generic):
        if taint is None:
            trace.scalars[id(r)] = r  # (a numpy scalar computed from constants: c.sum(), c[0])
        return r
    if type(r) in (list, tuple):
        return type(r)(_const_of(e, trace, taint) for e in r)
    if isinstance(r, tuple) and hasattr(r, "_fields"):  # (numpy's named results: EighResult)
        return type(r)(*(_const_of(e, trace, taint) for e in r))
    return r


def _literals(code):
    """``({id: value}, {id: tuple}, {tuples})`` of ``code``'s literals: its floats and complex numbers, and its tuples
    of ints (``(0, 2, 1)``, also the constant behind a list display ``[0, 2, 1]``), nested in its constants' tuples
    and frozensets; nested code objects have their own."""
    scalars, tuples, values, stack = {}, {}, set(), list(code.co_consts)
    while stack:
        k = stack.pop()
        if type(k) in (float, complex):
            scalars[id(k)] = k
        elif type(k) in (tuple, frozenset):
            stack.extend(k)
            if type(k) is tuple and all(type(e) in (int, bool) for e in k):
                tuples[id(k)] = k
                values.add(k)
    return scalars, tuples, values


def _held(obj, skip, depth):
    """Whether ``obj`` (a list, a tuple or list holding it) is held by anything but running frames and tuples and
    lists so held (the rows of ``np.array([[1.0, 2.0], [3.0, 4.0]])`` are held by the literal's list only)."""
    holders = gc.get_referrers(obj)
    skip = skip | {id(holders)}  # (this search's own list)
    for r in holders:
        if id(r) in skip or isinstance(r, (types.FrameType, types.GeneratorType)) or hasattr(type(r), "__next__"):
            continue  # (running code: a frame, a generator, a loop's iterator)
        if type(r) in (tuple, list) and depth < 4:
            if _held(r, skip, depth + 1):
                return True
            continue
        return True
    return False


def _links_to(r, o):
    """``(r, key, o)`` for each place where the container ``r`` holds ``o``: a dict's key, a list's index, a closure
    cell (key None), a ``__slots__`` attribute (key the attribute's name, as a 1-tuple)."""
    t = type(r)
    if t is dict:
        return [(r, k, o) for k, v in r.items() if v is o]
    if t is list:
        return [(r, i, o) for i, v in enumerate(r) if v is o]
    if t is types.CellType:
        return [(r, None, o)] if _follow(r, None) is o else []
    out = []
    d = getattr(r, "__dict__", None)
    if type(d) is dict and not isinstance(r, (type, types.ModuleType)):  # (an object whose attributes Python keeps
        out = [(d, k, o) for k, v in d.items() if v is o]  # inline: its dict made now, which then holds them)
    names = [n for c in t.__mro__ for n in (getattr(c, "__slots__", ()) if not isinstance(
        getattr(c, "__slots__", ()), str) else (c.__slots__,))]
    return out + [(r, (n,), o) for n in names if getattr(r, n, _UNBOUND) is o]


def _option_holder(r):
    """Whether ``r`` may be where a user keeps an option (a module's names, an object's attributes, a dict of options,
    a list or tuple of them, a closure): not running code (a frame, a generator, a loop's iterator), nor a record of
    autoprop's holding tensors or arrays (an operation's arguments), nor a registry keyed by ids."""
    if isinstance(r, (types.FrameType, types.GeneratorType)) or hasattr(type(r), "__next__"):
        return False
    t = type(r)
    if t in (list, tuple):
        return not any(isinstance(e, (Tensor, np.ndarray)) for e in r)
    if t is dict:
        return all(type(k) is str for k in r) and not any(isinstance(v, (Tensor, np.ndarray)) for v in r.values())
    if t is types.CellType:
        return True
    mod = getattr(t, "__module__", "") or ""
    return not (mod.startswith(("autoprop", "manualprop", "numpy", "builtins", "gc", "types")))


def _follow(c, k):
    """What the link ``(c, k)`` of :meth:`_Trace.holders` reaches now."""
    if type(c) is dict:
        return c.get(k, _UNBOUND)
    if type(c) is list:
        return c[k] if k < len(c) else _UNBOUND
    if k is None:
        try:
            return c.cell_contents
        except ValueError:
            return _UNBOUND
    return getattr(c, k[0], _UNBOUND)


def _arrays_in(x):
    if isinstance(x, np.ndarray):
        yield x
    elif isinstance(x, (list, tuple)):
        for e in x:
            yield from _arrays_in(e)
    elif type(x) is dict:
        for e in x.values():
            yield from _arrays_in(e)


def _tensor_in(x):
    return isinstance(x, Tensor) or isinstance(x, (list, tuple)) and any(_tensor_in(e) for e in x)


def _result(trace, r, inputs, what, written=()):
    """A numpy result computed from ``inputs`` while ``trace`` records: a constant of the trace when every input
    is one, else marked with why not; ``written``: arrays the call wrote into (tainted then)."""
    if trace is None:
        return r
    if trace.is_const(inputs):
        return _const_of(r, trace)
    why = f"computed by {what} at {_user_line()} from a value that is not a constant of the trace"
    for w in (*written, *_arrays_in(r)):  # (and a view of a constant's memory in r: np.broadcast_arrays)
        if isinstance(w, np.ndarray):
            trace.taint(w, why)
    return _const_of(r, trace, why)


_WRITES_FIRST = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis}


class _unlocked:
    """``with _unlocked(arrays):`` the read-only constants among ``arrays`` (and the arrays their memory comes
    through) writable for a write the trace follows, read-only again after."""

    def __init__(self, arrays):
        self.opened = []
        for a in arrays:
            if isinstance(a, np.ndarray) and not a.flags.writeable:
                chain = [a]
                while isinstance(chain[-1].base, np.ndarray):
                    chain.append(chain[-1].base)
                trace = _tracing_now()
                if trace is None or id(chain[-1]) not in trace.const_roots and id(chain[-1]) not in trace.tainted:
                    continue  # (another read-only array: numpy's own error)
                for b in reversed(chain):
                    if not b.flags.writeable:
                        b.flags.writeable = True
                        self.opened.append(b)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        trace = _tracing_now()
        for b in reversed(self.opened):
            if trace is None or id(_root(b)) not in trace.tainted:
                b.flags.writeable = False


class _TraceConst(np.ndarray):
    """A numpy array the traced function made from Python values only (see above): held as a constant of the
    trace where it enters an operation, unless ``_ap_taint`` (why not) is set or its memory was written with a
    value that is not constant (``_Trace.tainted``). numpy's operations on it give :class:`_TraceConst` results,
    marked by their inputs; beside a Tensor it defers to the Tensor's dispatch, which records it as a constant.
    Its priority is below ndarray's, so a plain array's method (``a.dot(c)``) gives a plain array."""

    __array_priority__ = -1.0

    def __repr__(self):  # (numpy's, as the eager array prints)
        return repr(np.ndarray.view(self, np.ndarray))

    def __array_finalize__(self, obj):
        self._ap_trace = getattr(obj, "_ap_trace", None)
        if self._ap_trace is not None:
            self._ap_trace.views.append(weakref.ref(self))
        taint = getattr(obj, "_ap_taint", None)
        if taint is None and self._ap_trace is not None:  # (a copy of a written array: not a constant either)
            hit = self._ap_trace.tainted.get(id(_root(obj)))
            taint = hit[1] if hit is not None else None
        self._ap_taint = taint

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        if _tensor_in(inputs) or out is not None and _tensor_in(out):
            return NotImplemented  # (the Tensor's dispatch records the operation, or refuses out=)
        written = (inputs[0],) if method == "at" else out or ()
        with _unlocked(written):
            r = getattr(ufunc, method)(*_plain(inputs), **_plain(kwargs))  # (out's plain views made unlocked)
        if out is not None:
            rs = list(r) if type(r) is tuple else [r]
            for i, o in enumerate(out):
                if o is not None and i < len(rs):
                    rs[i] = o
            r = tuple(rs) if type(r) is tuple else rs[0]
        ins = (inputs, {k: v for k, v in kwargs.items() if k != "out"})
        trace = _tracing_now()
        why = trace.ints_in(inputs, f"np.{ufunc.__name__} of") if trace is not None else None
        if why:
            return _const_of(r, trace, f"computed at {_user_line()} by {why}")
        return _result(_tracing_now(), r, ins, f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}"),
                       written)

    def __array_function__(self, func, types, args, kwargs):
        if any(issubclass(t, Tensor) for t in types):
            return NotImplemented
        written = (args[0],) if func in _WRITES_FIRST and args else ()
        if kwargs.get("out") is not None:
            written = (*written, *(kwargs["out"] if type(kwargs["out"]) is tuple else (kwargs["out"],)))
        with _unlocked(written):
            r = func(*_plain(args), **_plain(kwargs))
        return _result(_tracing_now(), r, (args, kwargs), f"np.{func.__name__}", written)

    def __getitem__(self, key):
        r = np.ndarray.__getitem__(self, key)
        trace = _tracing_now()
        if (trace is not None and isinstance(r, np.generic) and self._ap_trace is trace
                and trace.is_const(self) and trace.is_const(key)):
            trace.scalars[id(r)] = r  # (c[0] of a constant: a constant)
        if trace is not None and isinstance(r, np.ndarray) and self._ap_trace is trace:
            why = trace.ints_in(key if type(key) is tuple else (key,), "indexed by")
            if why:
                return _const_of(r, trace, f"indexed at {_user_line()}: {why}")
        if trace is not None and isinstance(r, np.ndarray) and not trace.is_const(key):
            r = _const_of(r, trace, f"indexed at {_user_line()} by an array that is not a constant of the trace "
                          "(an integer argument's values?)")
        return r

    def __setitem__(self, key, value):
        trace = _tracing_now()
        if trace is not None and self._ap_trace is trace:
            if _tensor_in(value) and not trace.is_const(value) and _from_user():
                raise TraceError(
                    f"autoprop.function: a tensor is written into a numpy array at {_user_line()}. A numpy array "
                    "holds numbers, not a traced value: the write would keep the first call's numbers, and no "
                    "tape sees it. Collect the pieces in a Python list and stack them (hs.append(h); "
                    "H = np.stack(hs)), or build the array with np.concatenate or ap.where.")
            why = trace.ints_in((*(key if type(key) is tuple else (key,)), value), "written at")
            if why:
                trace.taint(self, f"written at {_user_line()}: {why}")
            elif not (trace.is_const(key) and trace.is_const(value)):
                trace.taint(self, f"written at {_user_line()} with a value that is not a constant of the trace")
        with _unlocked((self,)):
            np.ndarray.__setitem__(self, key, _plain(value))

    def view(self, *args, **kwargs):
        r = np.ndarray.view(self, *args, **kwargs)
        trace = _tracing_now()
        if trace is not None and not isinstance(r, _TraceConst) and _from_user():  # (writes through it unseen)
            trace.taint(self, f"viewed as a plain array at {_user_line()}")
        return r


def _method(name, writes):
    method = getattr(np.ndarray, name)

    def run(self, *args, **kwargs):
        with _unlocked((self,) if writes else ()):
            r = method(np.ndarray.view(self, np.ndarray), *_plain(args), **_plain(kwargs))
        trace = _tracing_now()
        if trace is None or self._ap_trace is not trace:
            return r
        return _result(trace, r, (self, args, kwargs), f".{name}()", (self,) if writes else ())
    run.__name__ = name
    return run


# the methods that take another array (or write one in): marked by all their inputs
for _name, _writes in (("dot", False), ("take", False), ("compress", False), ("choose", False),
                       ("repeat", False), ("searchsorted", False), ("put", True), ("fill", True),
                       ("itemset", True), ("setfield", True), ("sort", True), ("partition", True),
                       ("resize", True)):
    if hasattr(np.ndarray, _name):
        setattr(_TraceConst, _name, _method(_name, _writes))
del _name, _writes

# numpy's constructors and the functions that build arrays from Python data (no array to dispatch on); while a
# trace runs, numpy's module names are these (as np.random's are refusals): autoprop.numpy's names for them are
# numpy's own (``anp.zeros is np.zeros``), looked up at each use
_FROM_VALUES = ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray")  # (values, not a shape)
_CONSTRUCTORS = ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "copy", "zeros", "ones",
                 "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "eye", "identity", "tri",
                 "arange", "linspace", "logspace", "geomspace", "diag", "diagflat", "vander", "indices",
                 "triu_indices", "tril_indices", "diag_indices", "meshgrid", "concatenate", "stack", "vstack",
                 "hstack", "column_stack", "block", "outer", "kron", "tile", "repeat")


_LIBRARY = tuple({os.path.abspath(p) + os.sep for k, p in sysconfig.get_paths().items()
                  if k in ("stdlib", "platstdlib", "purelib", "platlib")}) + (_PKG, _NUMPY, _MANUAL)
_CALLEES = {}  # (code, instruction offset) -> the name the call there calls, or None


def _callee(frame):
    """The name called by the call ``frame`` executes (``np.zeros(3)``: "zeros"), from the source span of its
    instruction (Python 3.11's ``co_positions``); None when it cannot be read (Python 3.10: no constant then)."""
    key = (frame.f_code, frame.f_lasti)
    if key in _CALLEES:
        return _CALLEES[key]
    name = None
    try:
        pos = list(frame.f_code.co_positions())[frame.f_lasti // 2]
        lines = [linecache.getline(frame.f_code.co_filename, n).encode() for n in range(pos[0], pos[1] + 1)]
        lines[-1] = lines[-1][:pos[3]]
        lines[0] = lines[0][pos[2]:]
        node = ast.parse(b"\n".join(lines).decode().strip(), mode="eval").body
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    except (AttributeError, IndexError, TypeError, ValueError, SyntaxError):
        pass
    if len(_CALLEES) > 10000:
        _CALLEES.clear()
    _CALLEES[key] = name
    return name


def _constructor(name, original, trace):
    """numpy's ``name`` while ``trace`` runs: its array a constant of the trace when the traced code (not a
    library: numpy's own Cython draws fill np.empty's memory) calls it by that name, on constants."""
    def made(*args, **kwargs):
        return trace.constructed(original(*args, **kwargs), args, kwargs, name, sys._getframe(1))
    made.__name__ = name
    made.__wrapped__ = original
    return made


# an operation gets a copy of a constant's value at its use: the tape's node (the tracing call's own gradient) holds
# it, as the eager tape copies a plain array it saves, so a write into the constant after its use changes nothing
# recorded (verify42b F4: a one-hot buffer reused over time steps gave the tracing call every step's last one-hot)
_tape._PLAIN[_TraceConst] = lambda a: np.array(np.ndarray.view(a, np.ndarray), copy=True)


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
        self.state = None  # tensor._STATE when traced or last replayed
        self.names = ()  # the values of the function's global and closure names when traced (_Names)
        self.called = {}  # id -> (layer, its layout function, its comparison): the layers called while tracing
        self.layout = ()  # (layer, layout function, comparison, layout when traced): their lists and dicts of layers
        self.guards = []  # (list, a copy of its items when traced): tape.guard_traced's options (np.pad's pad_width)
        self.consts = set()  # keys of the Tensors made inside from constants of the trace (issue 15)
        self.tainted = {}  # id(memory owner) -> (owner, why): numpy constants written with another value
        self.const_roots = {}  # id(memory owner) -> owner: the memory of the numpy constants (plain views of it)
        self.views = []  # weak references to the _TraceConst arrays made (writable again at the end: unlock)
        self.scalars = {}  # id -> numpy scalar computed from constants (c.sum(), c[0]): a constant too
        self.lists = {}  # id(list) -> (list, held outside the function?): the Python lists is_const read
        self.literals = {}  # code object -> {id: value} of its float and complex literals (co_consts)
        self.kept = []  # (weak reference, line): each constant's memory and constant Tensor, to outlive no call
        self.pyvalues = {}  # id -> value: the call's Python arguments and the function's global and closure values

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
        """Keep the list ``value``, a copy of its items and the dicts and lists that hold it
        (:func:`autoprop.core.tape.guard_traced`)."""
        if self.active:
            self.guards.append((value, copy.deepcopy(value), self.holders(value)))

    def holders(self, value):
        """The links by which the list ``value`` is reached now, up to a module's names or a closure (at most three
        steps up, twelve objects): ``(container, key, held)`` for each dict entry (an object's attributes, a dict of
        options, a module's names), list item, closure cell and ``__slots__`` attribute on the way. A later call
        finding another object at one of them traces again, as the eager call would read that one (verify41b F1:
        ``opts["reps"] = [1, 3]`` between calls was replayed with [1, 2]; verify42b F3: also one level up,
        ``cfg.opts = [[1, 3]]`` read as ``cfg.opts[0]``, a tuple's holder, a ``__slots__`` attribute). A search of
        the heap each: the first 64 lists of a trace."""
        for held, _then, holders in self.guards:
            if held is value:
                return holders  # (the same list again: searched once)
        if len(self.guards) >= 64:
            return ()
        out, frontier, seen = [], [value], {id(value)}
        mine = {id(out), id(self.guards), id(self.__dict__)}  # (this search's own lists: not holders)
        for _depth in range(3):  # (one search of the heap a step: all of a step's objects at once)
            above, dicts = [], []
            mine |= {id(frontier), id(above), id(dicts)}
            refs = gc.get_referrers(*frontier)
            mine.add(id(refs))
            for r in refs:
                if id(r) in mine or not _option_holder(r):
                    continue
                links = [link for o in frontier for link in _links_to(r, o)]
                out.extend(links)
                if type(r) is dict and "__builtins__" in r or type(r) is types.CellType:
                    continue  # (a module's names, a closure: their own rebinding is seen by _Names)
                if (links or type(r) is tuple) and id(r) not in seen and len(seen) < 12:
                    seen.add(id(r))
                    above.append(r)
                    if type(r) is dict:
                        dicts.append(r)
            if dicts:  # (the objects whose attributes these dicts are: rebound themselves, one step up)
                owners = gc.get_referrers(*dicts)
                mine.add(id(owners))
                for owner in owners:
                    if (getattr(owner, "__dict__", None) is not None and any(owner.__dict__ is d for d in dicts)
                            and not isinstance(owner, (type, types.ModuleType)) and id(owner) not in seen):
                        seen.add(id(owner))
                        above.append(owner)
            frontier = above
            if not frontier:
                break
        return tuple(out)

    def same_guards(self):
        """Whether every guarded list holds the items it held when traced, reached by the same links (else the call
        traces again)."""
        for value, then, holders in self.guards:
            if value != then:
                return False
            for c, k, held in holders:
                if _follow(c, k) is not held:
                    return False
        return True

    def new_slot(self):
        self.nslots += 1
        return self.nslots - 1

    # ------------------------------------------------------------------ constants made inside (issue 15)
    def is_const(self, x):
        """True when ``x`` (nested in lists, tuples and dict values) is the same at every call of this
        signature as now: Python values (constants of the trace, as in TensorFlow) and numpy scalars, dtypes,
        arrays made inside from them (:class:`_TraceConst`, not written with another value since), autoprop's own
        arrays from shapes only, Tensors made inside from such values. Not an array from outside the function,
        an argument or its values, a draw, a Variable."""
        t = type(x)
        if x is None or t in (int, bool, str, bytes, range) or x is Ellipsis or isinstance(x, (np.dtype, type)):
            return True
        if t in (float, complex) or isinstance(x, (float, complex, np.generic)):
            return self.known_scalar(x)
        if t is _TraceConst:
            return x._ap_trace is self and x._ap_taint is None and id(_root(x)) not in self.tainted
        if t is list:
            return not self.held_outside(x) and all(self.is_const(e) for e in x)
        if t is tuple or isinstance(x, tuple):
            return all(self.is_const(e) for e in x)
        if t is dict:
            return all(self.is_const(e) for e in x.values())
        if t is slice:
            return self.is_const((x.start, x.stop, x.step))
        if isinstance(x, np.ndarray):
            if t is _observe.OwnArray or _observe.is_static(x):
                return True
            if t is np.ndarray and self.const_roots:
                r = id(_root(x))
                return r in self.const_roots and r not in self.tainted
            return False
        if isinstance(x, Tensor):
            return (x._key in self.consts and type(x) is not Variable
                    and id(_root(x._value)) not in self.tainted)
        return False

    def known_scalar(self, x):
        """Whether the float, complex or numpy scalar ``x`` is the same at every call of this signature: a literal of
        the traced code (its code objects' constants, by identity), a Python argument of the call or a global or
        closure value of the function (both part of the signature), or a numpy scalar computed from constants.
        Not a draw (``rng.random()``: verify42b F12), nor a value read from an outside array (``W[0]``,
        ``W.tolist()``: F2) or through an object (``cfg.scale``), whose next call's value no replay would read."""
        i = id(x)
        if self.scalars.get(i) is x or self.pyvalues.get(i) is x:
            return True
        if isinstance(x, np.generic):
            return False
        for scalars, _tuples, _values in self.code_literals():
            if scalars.get(i) is x:
                return True
        return False

    def code_literals(self):
        """The literals (:func:`_literals`) of the code running now, from the traced function's frame in (not a
        library's, nor the caller's of the traced function: CFG = {"a": 0.5} in its module)."""
        f = sys._getframe(2)
        while f is not None:
            code = f.f_code
            if code is _TRACE_CODE:
                break
            if not os.path.abspath(code.co_filename).startswith(_LIBRARY):
                lits = self.literals.get(code)
                if lits is None:
                    lits = self.literals[code] = _literals(code)
                yield lits
            f = f.f_back

    def ints_in(self, xs, what):
        """The first reason :meth:`int_values` gives for one of ``xs``, or None."""
        for x in xs:
            why = self.int_values(x, what)
            if why:
                return why
        return None

    def int_values(self, x, what):
        """Why the list or tuple of ints ``x`` (nested) used as values (``np.array(x)``, an index of a constant, an
        operand) is no constant of the trace, or None: a literal of the traced code and an argument of the call
        are; one built while tracing (``np.ndarray.tolist(y)`` of an integer argument, a comprehension) may hold
        values a later call computes anew (verify42b F18: the labels' one-hot)."""
        t = type(x)
        if t not in (list, tuple):
            return None
        if self.pyvalues.get(id(x)) is x:
            return None
        if all(type(e) in (list, tuple) for e in x) and x:
            for e in x:
                why = self.int_values(e, what)
                if why:
                    return why
            return None
        if not x or not all(type(e) in (int, bool) or isinstance(e, np.integer) for e in x):
            return None  # (floats: known_scalar; arrays, slices: their own rules)
        for _scalars, tuples, values in self.code_literals():
            if tuples.get(id(x)) is x or t is list and len(x) > 2 and tuple(x) in values:
                return None
        return (f"{what} the Python {t.__name__} of ints {x!r}, built while tracing (a comprehension, .tolist(), "
                "np.ndarray.tolist(y) of an integer argument): a later call may build another. Write it as a "
                "literal tuple, pass it as an argument, or index with an integer argument (autoprop reads each "
                "call's)")

    def held_outside(self, lst):
        """Whether the Python list ``lst`` is held by anything but the running code (a module's global, an
        attribute, a dict's entry, a closure, another list, a tuple so held): changed in place or rebound between
        calls, a replay would not see it (verify42b F10: np.array(SCALES) replayed the first items). A search of the
        heap, once per list of a trace."""
        hit = self.lists.get(id(lst))
        if hit is not None and hit[0] is lst:
            return hit[1]
        if self.pyvalues.get(id(lst)) is lst:
            return False  # (an argument of the call, or in one: part of the signature, by value)
        held = _held(lst, {id(self.lists), id(self.literals)}, 0)
        self.lists[id(lst)] = (lst, held)
        return held

    def keep_watch(self, obj):
        """A constant's memory or a constant Tensor, which must not outlive the call (:meth:`kept_constants`)."""
        try:
            self.kept.append((weakref.ref(obj), _user_line()))
        except TypeError:
            pass

    def kept_constants(self):
        """At the trace's end: refuse a constant that outlives the call (kept in a dict, an attribute, a global, a
        closure): the user may change or rebind it between calls, and a replay holds the value it had when traced
        (verify42b F1: a lazily cached mask changed in place was replayed as the first one)."""
        kept, self.kept = self.kept, []
        alive = [line for ref, line in kept if ref() is not None]
        if alive:
            gc.collect()  # (a cycle the function left: not kept)
            alive = [line for ref, line in kept if ref() is not None]
        if alive:
            raise TraceError(
                f"autoprop.function: {self.name} keeps a numpy array (or a tensor of one) that it made, at "
                f"{alive[0]}, after the call returns (in a dict, an attribute, a global or a closure: a cache?). The "
                "trace holds its value as a constant, but it may be changed or rebound before a later call, which "
                "a replay would not see. Make it at every call, or make it outside the function and pass it in as "
                "an argument (or hold it in an autoprop.Variable).")

    def constructed(self, r, args, kwargs, name, frame):
        """``r``, numpy's ``name`` on ``args`` and ``kwargs``, called by ``frame``: a :class:`_TraceConst` when the
        traced code (not a library: numpy's Cython draws fill np.empty's memory) called it by that name, on
        constants of the trace; else ``r``."""
        if not (threading.get_ident() == self.thread and self.active and self in _TRACERS and any(
                type(a) is np.ndarray for a in _arrays_in(r))):
            return r
        user = not os.path.abspath(frame.f_code.co_filename).startswith(_LIBRARY) and _callee(frame) == name
        if user and name in _FROM_VALUES and args:
            why = self.int_values(args[0], "made from")
            if why:
                return _const_of(r, self, f"made by np.{name} at {_user_line()} {why}")
        if not self.is_const((args, kwargs)):
            why = self.why_not((args, kwargs)) if user else None
            return _const_of(r, self, f"made by np.{name} at {_user_line()} {why}") if why else r
        if user:
            return _const_of(r, self)
        return r  # (a library's np.asarray(c): a plain view of a constant's memory, a constant too: is_const)

    def why_not(self, x):
        """Why the Python value ``x`` (nested) is no constant of the trace, when a list, a number or a numpy scalar in
        it is the reason (:meth:`is_const`); else None."""
        t = type(x)
        if t is list and self.held_outside(x):
            return ("from a Python list held outside the function (a global, an attribute, a dict's entry), which may "
                    "be changed in place or rebound between calls unseen by a replay")
        if t in (list, tuple) or isinstance(x, tuple) or t is dict:
            for e in (x.values() if t is dict else x):
                why = self.why_not(e)
                if why:
                    return why
            return None
        if isinstance(x, np.generic) and not self.known_scalar(x):
            return (f"from the numpy scalar {x!r}, not computed from constants of the trace (a draw such as "
                    "rng.integers(), an element of an array from outside the function, np.exp(0.5): write np.exp "
                    "of a constant array, or a Python literal)")
        if isinstance(x, (float, complex)) and not self.known_scalar(x):
            return (f"from the Python number {x!r}, computed while tracing (a draw such as rng.random(), a value read "
                    "from an outside array or an object's attribute, 1.0 / n): a later call would compute it anew. "
                    "Write it as a literal, pass it as an argument, or compute it with numpy on constants "
                    "(np.full(n, 1.0) / n)")
        return None

    def const_root(self, a):
        """The memory of the array ``a`` holds a constant of the trace (plain views of it are constants too): made
        read-only, so that a write no hook sees (``rng.shuffle(c)``, ``rng.random(out=c)``: numpy's Cython) raises
        instead of changing a constant unseen; the writes the trace follows unlock it (:func:`_unlocked`)."""
        r = _root(a)
        if id(r) not in self.const_roots and id(r) not in self.tainted:
            self.const_roots[id(r)] = r
            self.keep_watch(r)
            r.flags.writeable = False
        if a.flags.writeable and id(r) not in self.tainted:
            a.flags.writeable = False

    def unlock(self):
        """At the trace's end: the constants' memory (and the views of it made while tracing) writable again, as
        eager arrays are (an array the function kept, ``self.buf = np.zeros(n)``, is the user's after)."""
        for r in self.const_roots.values():
            r.flags.writeable = True
        for ref in self.views:
            v = ref()
            if v is not None and not v.flags.writeable:
                try:
                    v.flags.writeable = True
                except ValueError:  # (a view of memory that was read-only before: numpy's own)
                    pass
        self.const_roots.clear()
        self.tainted.clear()
        self.views.clear()

    def taint(self, a, why):
        """The memory of the :class:`_TraceConst` ``a`` now holds a value that is not a constant (``why``)."""
        r = _root(a)
        self.tainted.setdefault(id(r), (r, why))
        if not r.flags.writeable and id(r) in self.const_roots:
            r.flags.writeable = True  # (no constant now: written as eager code writes it)

    def made_constant(self, out, inputs, like=None):
        """The core made the constant Tensor(s) ``out`` from ``inputs`` (numpy's own function on values,
        ``ap.constant``): kept as constants of the trace when every input is one (``like``: a Tensor whose shape
        only was read, np.zeros_like's: traced or captured, its shape is the trace's)."""
        if not self.active or not self.is_const(inputs):
            return
        if like is not None and not (self.is_const(like) or isinstance(like, Tensor) and (
                like._key in self.slot or like._key < self.start)):
            return
        for t in (out if isinstance(out, (list, tuple)) else (out,)):
            if isinstance(t, Tensor):
                self.consts.add(t._key)
                self.keep_watch(t)

    def not_const(self, a):
        """Why the array or tensor ``a`` is not a constant of the trace (for the refusal)."""
        if isinstance(a, Tensor):
            a = a._value
        if isinstance(a, _TraceConst) and a._ap_trace is self:
            if a._ap_taint is not None:
                return f"it was {a._ap_taint}"
        hit = self.tainted.get(id(_root(a)))
        if hit is not None:
            return f"it was made inside the function, then {hit[1]}"
        return None

    def frozen(self, a):
        """A plain copy of the constant array ``a``, marked static (the trace holds it; the user's array may be
        written later)."""
        return _observe.static(np.array(_plain(a), copy=True))

    def refuse(self, what):
        if threading.get_ident() != self.thread:
            return  # (another thread's eager code)
        raise TraceError(
            f"autoprop.function: {what} is not supported inside a traced function (at {_user_line()}); "
            "call it outside the function, or run this code eagerly (without @autoprop.function).")

    def value_only(self, name, args):
        """np.allclose, np.count_nonzero & co. (plain values computed from the tensors' values)."""
        for a in args:
            for t in (a if type(a) in (list, tuple) else (a,)):
                if isinstance(t, Tensor):
                    self.convert(t, f"np.{name} (a plain value computed from the tensor's values)")

    def convert(self, t, what):
        if not self.active:
            return
        if t._key in self.consts and self.is_const(t):
            return  # (a constant of the trace: its value is every call's)
        if t._key in self.slot or isinstance(t, Variable) or t._key >= self.start:
            raise TraceError(
                f"autoprop.function: {what} of a traced tensor at {_user_line()}. While a function is "
                "traced a tensor stands for the value of every later call, so it cannot become a Python "
                "or numpy value: the first call's value would be frozen into the replays (tf.function "
                "refuses the same). Compute with autoprop operations (ap.where for an `if`), or return "
                "the tensor and convert it outside the function.")

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
            if self.is_const(a):  # made inside from constants of the trace (issue 15)
                return ("c", self.frozen(v))
            why = self.not_const(a) or "its value came from an array that is not a constant of the trace"
            raise TraceError(
                f"autoprop.function: {where} gets a tensor made inside the function from a value that is "
                f"not traced (autoprop.constant, Tensor(...) of a numpy array), at {_user_line()}: {why}, so the "
                "trace would freeze that value. Pass it as an argument, or make it outside the function.")
        if isinstance(a, np.ndarray):
            hit = self.produced.get(id(a))
            if hit is not None and hit[1] is a:
                return ("s", hit[0])
            if _observe.is_static(a):  # autoprop's own, from shapes only (np.tril's mask): a constant (issue 15)
                return ("c", v)
            if self.is_const(a):  # made inside from Python values only (3 * np.eye(3), np.zeros(n)): issue 15
                return ("c", self.frozen(v))
            why = self.not_const(a)
            raise TraceError(
                f"autoprop.function: {where} gets a numpy array that is neither an argument of the call "
                f"nor a Variable, at {_user_line()}. " + (
                    f"It is no constant of the trace: {why}. " if why else
                    "The trace cannot prove it constant (an array from outside the function, whose contents may be "
                    "changed or rebound between calls; an integer argument's values; a fresh draw). ") +
                "Only an array made inside the function from Python values (np.zeros(n), 3 * np.eye(3), "
                "np.arange(n)) is a constant of the trace. It refuses rather than freeze the value: pass the "
                "array as an argument, hold it in an autoprop.Variable, or make it an autoprop.constant "
                "outside the function.")
        if isinstance(a, (list, tuple)) and not _python_scalars(a):
            raise TraceError(
                f"autoprop.function: {where} gets a Python {type(a).__name__} as an array at "
                f"{_user_line()}: pass an array argument or an autoprop.constant made outside the function.")
        return ("c", v)

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
        outslots = []
        for o in outs:
            s = self.new_slot()
            self.slot[o._key] = s
            outslots.append(s)
        # the VJPs' kwargs: with "saved" when the forward returns a WithSaved, which may depend on
        # the values (lstm_gates_at), so every replay writes them into this slot
        kws = self.new_slot()
        self.kwslot[outs[0]._key] = kws
        specs = [None] * len(args)  # (slot, a Variable's read?) of each argument, None for a constant
        for i, s in fill:
            specs[i] = (s, False)
        for i, _var, s in vfill:
            specs[i] = (s, True)
        self.steps.append(("op", prim.fwd, template, tuple(fill), tuple(vfill), kw,
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
        if any(isinstance(e, _TraceConst) or isinstance(e, Tensor) and e._key in self.consts
               for v in kw.values() for e in (v if isinstance(v, tuple) else (v,))):
            kw = {k: self.kw_frozen(v) for k, v in kw.items()}  # (p[np.arange(n), y]: the constant part held)
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
                fill.append((k, tuple(None if _read_at_replay(e) else e for e in v), arrays))
        if fill:
            kw = {k: v for k, v in kw.items() if k not in {f[0] for f in fill}}
        return kw, tuple(fill)

    def kw_frozen(self, v):
        """A keyword's value with its constant arrays (and the values of its constant Tensors) as frozen copies."""
        if isinstance(v, tuple):
            return tuple(self.kw_frozen(e) for e in v)
        if isinstance(v, (np.ndarray, Tensor)) and self.is_const(v):
            return self.frozen(v._value if isinstance(v, Tensor) else v)
        return v

    def index_slot(self, v, where, k):
        hit = self.produced.get(id(v)) if isinstance(v, np.ndarray) else None
        if (hit is not None and hit[1] is v and where == "autoprop.getitem" and k == "key"
                and v.dtype.kind in "iu"):
            return hit[0]
        boolean = isinstance(v, np.ndarray) and v.dtype.kind == "b"
        why = self.not_const(v)
        what = ("a boolean mask, whose count of True sets the result's shape" if boolean
                else f"no constant of the trace ({why})" if why else "not an integer argument of the call")
        raise TraceError(
            f"autoprop.function: {where} gets an array in its keyword argument {k}= (an index array?), "
            f"{what}, at {_user_line()}: the trace would freeze it. Index with slices or with an integer "
            "array passed as an argument of the function, or run this code eagerly (without "
            "@autoprop.function).")

    def produce(self, make, tensors):
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
        self.steps.append(("produce", make, ins, s))
        return out

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
            nkw = node.kwargs if kws is None else None  # (else each replay's, env[kws]: the node's may hold a
            # constant's memory, which must not outlive the call: kept_constants)
            steps.append((prim.vjps, prim.joint_vjp, multi, gs, ans, ins, tuple(fill), nkw, kws,
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
    def replay(self, arrays):
        env = [None] * self.nslots
        for s, v in zip(self.argslots, arrays):
            env[s] = v
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
            elif kind == "produce":
                _k, make, ins, s = step
                env[s] = make(*_values(ins, env))
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
            and cls._update_all is _UPDATE_ALL and _optim._plain_sgd(opt)):
        sgd_on = _optim._SGD_ON.get(type(variables[0]))
        if sgd_on is not None and sgd_on(opt.learning_rate, grads, variables):
            opt.iterations += 1  # (as apply_gradients after its update)
            return
    pairs = []
    for g, v in zip(grads, variables):
        pairs.append((None if g is None else _wrap(g), v))
    type(opt).apply_gradients(opt, pairs)


_APPLY_GRADIENTS, _UPDATE_ALL = _optim.Optimizer.apply_gradients, _optim.Optimizer._update_all


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
    if isinstance(x, Tensor):
        t = _wrap(x._value)
        trace.slot[t._key] = s
        return t
    if x.dtype.kind in "fc":
        t = _wrap(x)
        trace.slot[t._key] = s
        return t
    v = x.view(_TracedInts)  # (a view per argument: the same array passed twice is two slots)
    v._ap_trace = trace
    v._ap_name = name
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
                if trace.is_const(x):
                    raise TraceError(
                        "autoprop.function: the function returns a tensor made inside it from constants (numpy "
                        "arrays made from Python values): a replay would return the one tensor of the trace at "
                        "every call, whose memory the caller may have written. Make it outside the function, or "
                        "compute it from the arguments.")
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


def _python_leaves(x):
    """The Python values among the call's arguments (in lists, tuples and dict values, and those lists): part of its
    signature."""
    if type(x) in (list, tuple):
        if type(x) is list:
            yield x
        for e in x:
            yield from _python_leaves(e)
    elif type(x) is dict:
        for e in x.values():
            yield from _python_leaves(e)
    elif not isinstance(x, (np.ndarray, Tensor)):
        yield x


def _parameter_names(fn, n):
    """The names of the first ``n`` positional parameters of ``fn`` (``*args``'s as ``args[i]``), for messages."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    names = list(code.co_varnames[:code.co_argcount]) if code is not None else []
    if code is not None and getattr(fn, "__self__", None) is not None and names:
        names = names[1:]  # (a bound method: self is not an argument of the call)
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


def _escape_patches(fn, thread):
    """(namespace, name, original, guard) for numpy's constructors in ``_ESCAPES``: numpy's own names, and the
    traced function's global names bound to them (``from numpy import asarray``)."""
    out = []
    for n in _ESCAPES:
        original = getattr(np, n)
        out.append((np.__dict__, n, original, _escape_guard(n, original, thread)))
    g = getattr(getattr(fn, "__func__", fn), "__globals__", None)
    if g is not None and g is not np.__dict__:
        originals = {id(getattr(np, n)): n for n in _ESCAPES}
        for k, v in list(g.items()):
            n = originals.get(id(v))
            if n is not None and v is getattr(np, n):
                out.append((g, k, v, _escape_guard(n, v, thread)))
    return out


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



class Function:
    """A Python function traced per input signature and replayed (:func:`function`)."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._names = _Names(fn)
        self._traces = {}
        self.traces = 0  # how many traces ran (a new signature, a layer's Python state changed, a name rebound)

    def __get__(self, obj, objtype=None):  # a method: bound per instance, one cache each
        if obj is None:
            return self
        bound = obj.__dict__.get(f"_autoprop_function_{id(self)}")
        if bound is None:
            bound = Function(self._fn.__get__(obj, objtype))
            obj.__dict__[f"_autoprop_function_{id(self)}"] = bound
        return bound

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
        # a layer's attribute set since, a list or dict of its layers changed, or a global or closure name
        # rebound: trace again
        if (entry is None or entry[0].state != _STATE[0] or self._names.rebound(entry[0].names)
                or not entry[0].same_layout() or not entry[0].same_guards()):
            return self._trace(key, args, kwargs)
        trace, out = entry
        env = trace.replay([x._value if isinstance(x, Tensor) else x for x in leaves])
        trace.state = _STATE[0]  # (the replay's own events set the running statistics)
        return _rebuild(out, env)

    def _trace(self, key, args, kwargs):
        with _TRACE_LOCK:  # one trace at a time (the core reports to the innermost, _TRACERS[-1])
            return self._trace_locked(key, args, kwargs)

    def _trace_locked(self, key, args, kwargs):
        trace = _Trace(self.__name__)
        names = _parameter_names(self._fn, len(args))
        targs = tuple(_as_traced(a, trace, n) for a, n in zip(args, names))
        tkwargs = {k: _as_traced(v, trace, k) for k, v in kwargs.items()}
        for v in (*_python_leaves(args), *_python_leaves(kwargs), *self._names.values()):
            trace.pyvalues[id(v)] = v  # (part of the signature: a float among them is a constant of the trace)
        patched = {n: getattr(np.random, n) for n in _NP_RANDOM_NAMES}
        escapes = _escape_patches(self._fn, trace.thread)
        others = _OtherDraws()  # other threads' draws meanwhile: not the trace's (review39 F5)
        _TRACERS.append(trace)
        _tape._sync_extra()
        _optim._APPLY_HOOKS.append(trace.apply)
        for n in patched:
            setattr(np.random, n, _np_random_refusal(n, patched[n], trace.thread, others))
        for holder, n, _original, guard in escapes:
            holder[n] = guard
        made = {n: getattr(np, n) for n in _CONSTRUCTORS}
        for n, f in made.items():
            setattr(np, n, _constructor(n, f, trace))
        try:
            state = others.snapshot(start=True)
            try:
                result = self._fn(*targs, **tkwargs)
            except ValueError as exc:  # (numpy's, for a write into a constant no hook saw: _Trace.const_root)
                if not ("read-only" in str(exc) or "writable" in str(exc)) or not trace.const_roots:
                    raise
                raise TraceError(
                    f"autoprop.function: {self.__name__} writes in place, at {_exc_line(exc)}, into a numpy array "
                    f"made inside the function ({exc}), by code the trace cannot follow (a numpy Generator's "
                    "rng.shuffle(c) or rng.random(out=c), a compiled function's out=): such an array is a "
                    "constant of the trace, and the write would be frozen into every replay. Draw outside the "
                    "function and pass the draw in as an argument.") from exc
            out = _outputs(result, trace)
            after = others.snapshot(start=False)
        finally:
            for n, f in patched.items():
                setattr(np.random, n, f)
            for n, f in made.items():
                setattr(np, n, f)
            trace.unlock()
            for holder, n, original, guard in reversed(escapes):
                if holder.get(n) is guard:
                    holder[n] = original
            _optim._APPLY_HOOKS.remove(trace.apply)
            _TRACERS.remove(trace)
            _tape._sync_extra()
        trace.kept_constants()
        if not others.explain(state, after):
            raise TraceError(
                f"autoprop.function: {self.__name__} drew from numpy's global random state while tracing "
                "(through a name imported before the trace; another thread's draws through np.random's names are "
                "not counted): the draw would be frozen into every replay. "
                "Draw outside the function and pass the draw in as an argument.")
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
        numpy array that enters an operation without being an argument, a Variable or a constant of the trace
        (Notes), saying why (``np.eye(n)[y]``, ``h[:] = outside``); a tensor made inside the function from such
        a value; a tensor written into a numpy array; ``rng.shuffle(c)`` of a constant; a persistent or nested
        tape, ``watch_accessed_variables=False``, ``stop_recording``, ``jacobian``, ``batch_jacobian``,
        ``backward_source``, ``output_gradients=``, ``unconnected_gradients='zero'``, a
        ``ForwardAccumulator``, ``custom_gradient``, a Variable or optimizer made inside the function; a call
        while a tape records; a generator function; the function's own numpy on an integer or boolean array
        argument (``np.count_nonzero(y != 0)``, ``y -= 1``, an ``if`` or a loop on it).

    Notes
    -----
    The input signature (as ``tf.function``'s): the shape and dtype of each array or Tensor argument, the identity
    of each Variable, the value of every other (hashable) argument such as ``training=True``; a new one traces again.
    Float arrays reach the function as Tensors (as tf.function converts them), integer and boolean arrays (labels,
    masks) as guarded arrays, one per argument, for autoprop's operations (``np.asarray(y)`` is the argument itself;
    its values as a plain array, a buffer or Python numbers, ``y.view(np.ndarray)``, ``y.tolist()``, ``y.flat``,
    are refused, naming it); a list of ints (labels, ``W[idx]``): by value.

    Variables are read by reference at each replay (an ``assign`` between calls is seen); a layer attribute, a
    Variable's ``trainable``, a list of layers or a global or closure name of the function's own code
    (``opt = SGD(...)``, ``reg = 1.0``) changed since traces again. Other Python values (read through an object, a
    dict or a function it calls; a captured Tensor) are constants of the trace, as in TensorFlow; a list of ints
    given to np.pad, np.tile & co. as an option (``pad_width``, ``reps``) is part of the signature (changed in
    place, or rebound where it was reached from, up to three steps: traced again); an array option is refused.
    numpy arrays made inside from Python values only (``3 * np.eye(3)``, ``np.zeros(n)``, ``np.arange(n)``) are
    constants of the trace, as in TensorFlow, not one that met another array, a list held outside the function,
    a float that is no literal, argument or global of the function, or a list of ints built while tracing; one
    kept after the call or returned is refused (the module's docstring). Python side effects run only while tracing,
    as in TensorFlow; the layers' and losses' checks of their inputs run at every replay, as do integer index
    arguments (``W[y]``); a boolean mask index is refused; ``stop_gradient`` passes its value on. One trace at a time.

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


_TRACE_CODE = Function._trace_locked.__code__  # (the frame that calls the traced function)
