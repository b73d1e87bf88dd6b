"""The gradient tape: record primitives during the forward pass, walk them in reverse.

How it works (derived in ``lessons/10-gradient-tape.md``):

* While a tape's ``with`` block is open, every primitive applied to a tensor that the
  tape *tracks* (watched, or computed from a watched tensor) appends a :class:`Node`
  (primitive, inputs, the input values, output) to the tape and tracks the output.
  A node saves only the values its VJPs read (the record's ``reads``: ``tanh`` its input,
  ``exp`` its output, ``add`` nothing but shapes); the others are :class:`NotSaved`
  stand-ins, so an intermediate nobody reads is freed as soon as the forward drops it.
  Tensors are named by their ``_key`` (never reused), not by ``id()``, so a record
  needs no reference to a tensor to name it.
* ``gradient(target, sources)`` seeds ``dL/dtarget`` (ones, or ``output_gradients``),
  then walks the nodes in reverse order; each node hands its output's gradient to the
  primitive's vector-Jacobian product (VJP) for every tracked input and accumulates
  the result. A slice's VJP (``x[:, t]``) returns a :class:`Scatter`, the slice's
  gradient and where it goes, which the walk adds into one buffer per input in place.
  The walk is a loop over a list, never recursion.
* A primitive with several outputs (``i, f, g, o = np.split(z, 4, axis=1)``) is ONE
  :class:`MultiNode` (:func:`call_multi`): the walk hands its VJP the tuple of its outputs'
  gradients, ``None`` for an output nobody used, and the VJP returns the input's gradient.
* If another tape is recording while ``gradient`` runs (nested tapes), the VJPs are
  computed on Tensors, so the outer tape records the backward pass and can
  differentiate it again. Otherwise they run on plain numpy arrays and record nothing.

This module knows no primitive: a node holds its record (``node.prim``, from
:mod:`autoprop.core.registry`, a floor above), and the walk calls what the record holds.
``explain``, ``summary`` and ``backward_source`` read a finished tape: their code is in
:mod:`autoprop.core.diagnose` and :mod:`autoprop.core.source`, above this module too.
"""

from __future__ import annotations

import enum
import itertools
import math
import warnings

import numpy as np

from . import complex as _cx
from . import observe as _observe
from . import views as _views
from .observe import _WATCHERS, note_cut  # noqa: F401  (note_cut: public for control.py)
from .tensor import (
    _EXTRA,
    _FORWARD,
    _RECORDING,
    _TRACERS,
    Tensor,
    Variable,
    _next_key,
    is_differentiable_dtype,
)


class TapeStateError(RuntimeError, ValueError):
    """A ``GradientTape`` or ``ForwardAccumulator`` entered while its ``with`` block is
    already open. A RuntimeError (autoprop's type for a tape in the wrong state) and a
    ValueError (TensorFlow's: "Tape is still recording", "Accumulator is already
    recording"), so code written for either catches it."""


class TapeArgumentError(TypeError, ValueError):
    """What ``GradientTape.watch`` was given is not a Tensor, or a gradient's target is None
    or a string. A TypeError (autoprop's type for an argument of the wrong kind) and a
    ValueError (TensorFlow's for ``watch(np.array(1.))`` and a None target), so code
    written for either catches it."""


#: The order in which the ``with`` blocks of tapes and forward accumulators were entered
#: (TensorFlow's nesting id, ``tape_nesting_id_counter`` in ``pywrap_tfe_src.cc``): an
#: accumulator's own tangent computations are recorded only by the tapes entered before it
#: (:meth:`autoprop.core.forward.ForwardAccumulator._hide_inner`). A tape resumed after
#: ``stop_recording`` keeps its number (TensorFlow gives it a new one, which would make it
#: an inner tape and drop the JVP operations after the pause from a reverse-over-forward
#: gradient: a partial, silently wrong derivative).
_next_nesting = itertools.count(1).__next__

#: Breadcrumbs for explain() are capped per tape (see :mod:`autoprop.core.observe`).
_MAX_CRUMBS = _observe.MAX_CRUMBS
#: :mod:`autoprop.core.diagnose` (``explain``, ``summary``) and :mod:`autoprop.core.source`
#: (``backward_source``): floors above this module, which it does not import; set by
#: ``autoprop/core/__init__.py`` once every module has loaded.
_diagnose = _source = None


class ShapeChanged(RuntimeError):
    """A step of :func:`autoprop.function`'s replay (an array made again at each call: ``tape.replayed``'s, the user's
    numpy on an integer argument, a ``numpy_function``'s output) gives another shape or dtype than when traced: the
    operations after it were traced for that shape. The trace traces again where no event has run yet, and
    refuses otherwise (its TraceError)."""


class UnconnectedGradients(enum.Enum):
    """What a source that the target does not depend on gets, as ``tf.UnconnectedGradients``.

    ``NONE`` (the default): ``None``. ``ZERO``: zeros of the source's shape and dtype.
    The strings ``"none"`` and ``"zero"`` are accepted wherever the enum is.
    """

    NONE = "none"
    ZERO = "zero"


def _unconnected(value):
    if isinstance(value, UnconnectedGradients):
        return value.value
    if value in ("none", "zero"):
        return value
    raise ValueError(
        f"unconnected_gradients must be 'none' or 'zero' (or ap.UnconnectedGradients.NONE / "
        f".ZERO); got {value!r}"
    )


class NotSaved:
    """What a record keeps of a value that none of its VJPs reads: its shape and dtype.

    A VJP gets it in place of that input (or output) and may ask for ``shape``,
    ``dtype``, ``ndim``, ``size`` and ``len()`` (``add``'s VJP sums ``g`` back to its
    inputs' shapes); using its values raises TypeError, so a record whose ``reads`` is
    wrong fails loudly instead of computing with a stale or missing value (TypeError, or
    AttributeError for an array attribute such as ``.T``).
    """

    __slots__ = ("shape", "dtype")
    __array_ufunc__ = None  # numpy refuses arithmetic with it (TypeError)

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self):
        """int: ``len(shape)``."""
        return len(self.shape)

    @property
    def size(self):
        """int: the number of elements, ``prod(shape)``."""
        return math.prod(self.shape)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d value")
        return self.shape[0]

    def _message(self):
        return (f"autoprop: a VJP read the value of an input or output that its record does "
                f"not save ({self!r}); the primitive's `reads=` must list it")

    def _refuse(self, *args, **kwargs):
        raise TypeError(self._message())

    __array__ = __getitem__ = __iter__ = __float__ = __bool__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _refuse
    __rtruediv__ = __matmul__ = __rmatmul__ = __neg__ = __pow__ = __rpow__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = _refuse

    def __getattr__(self, name):  # (AttributeError, so hasattr() and getattr(x, n, d) work)
        raise AttributeError(f"{name!r}: {self._message()}")

    def __repr__(self):
        return f"<not saved: {self.dtype}{self.shape}>"


class PartlySaved(NotSaved):
    """What a record keeps of a value whose VJPs read only some of its entries: its shape,
    its dtype and the entries where the boolean array ``mask`` is True, as ``values`` (in
    flat order; ``mask`` None: no entry).

    ``lstm_gates`` takes its derivative from its output (``s (1 - s)``, ``1 - g^2``) except
    where that cancels (a gate near saturation), where it needs the pre-activations ``a``:
    its record keeps the gates and only those entries of ``a`` (usually none), not all of
    ``a`` (:func:`keep_entries`). :meth:`take` hands a VJP the entries it asks for; asking for an
    entry that was not kept raises TypeError, and so does every other use of the values
    (as :class:`NotSaved`). ``key`` and ``ident`` are the ``_key`` and ``id()`` of the
    tensor it stands for (:func:`whole_value_needed`).
    """

    __slots__ = ("mask", "values", "key", "ident")

    @property
    def nbytes(self):
        """int: the bytes kept (``mask`` and ``values``)."""
        return self.values.nbytes + (0 if self.mask is None else self.mask.nbytes)

    def take(self, wanted):
        """The kept entries where the boolean array ``wanted`` (the value's shape) is True, in
        flat (C) order: what ``x[wanted]`` gives on the whole value."""
        out = self.values if self.mask is None else self.values[wanted[self.mask]]
        if out.size != np.count_nonzero(wanted):
            raise TypeError(self._message() + " (an entry it did not keep)")
        return out

    def __repr__(self):
        return f"<partly saved: {self.dtype}{self.shape}, {self.values.size} entries>"


def keep_entries(x, mask=None):
    """The ndarray ``x`` as a :class:`PartlySaved` that keeps the entries where the boolean
    array ``mask`` is True (None: no entry), or ``x`` itself when that would not be smaller
    (the mask costs a byte an entry)."""
    ps = object.__new__(PartlySaved)  # (no __init__ frames: this runs on every LSTM step)
    dt = x.dtype
    ps.shape, ps.dtype, ps.key, ps.ident = x.shape, dt, None, None
    if mask is None:
        values = _NO_VALUES.get(dt)
        if values is None:
            values = _NO_VALUES[dt] = np.empty(0, dt)  # (read-only use: one per dtype)
    else:
        values = x[mask]
        if values.nbytes + mask.nbytes >= x.nbytes:
            return x
    ps.mask, ps.values = mask, values
    return ps


_NO_VALUES: dict = {}  # dtype -> an empty array of it (keep_entries)


class WithSaved(tuple):
    """``(value, saved)``: a forward's result together with something its VJPs and JVPs read
    that is none of its inputs and outputs. :func:`call` makes ``value`` the output and
    passes ``saved`` to the VJPs and JVPs as the keyword ``saved`` (the record keeps it in its
    ``kwargs``; ``tape.summary()`` counts its bytes).

    ``rnn_cell`` (``tanh(h W^T + A[key])``) returns one while a tape or an accumulator
    listens: its derivative is ``1 - y^2`` from the output except where that cancels
    (``|y|`` near 1), where it needs the pre-activation, which is internal to the record;
    ``saved`` keeps only those entries (:func:`keep_entries`); so does ``lstm_gates_at``, whose
    ``value`` is the tuple of its four outputs (:func:`call_multi`). (A tuple: made in C, no
    Python frame per step.)
    """

    __slots__ = ()


def whole_value_needed(part, ans):
    """Whether a VJP run on Tensors (an outer tape or a forward accumulator records the
    backward pass) would need the whole input that ``part`` (a :class:`PartlySaved`) stands
    for: some recording tape or accumulator follows that input but not the record's output
    ``ans``, so a derivative written in ``ans`` would not reach it."""
    for tape in _RECORDING:
        if part.key in tape._tracked and ans._key not in tape._tracked:
            return True
    for acc in _FORWARD:
        if part.ident in acc._tangents and id(ans) not in acc._tangents:
            return True
    return False


_NOT_SAVED: dict = {}  # (shape, dtype) -> NotSaved: one stand-in per kind (immutable)
_F64 = np.dtype(np.float64)
_NOT_SAVED_F64: dict = {}  # shape -> NotSaved of float64, the usual case (a cheaper key)


def _not_saved(v):
    """The :class:`NotSaved` of an ndarray ``v`` (one per shape and dtype, reused)."""
    if v.dtype is _F64:
        cache, k = _NOT_SAVED_F64, v.shape
    else:
        cache, k = _NOT_SAVED, (v.shape, v.dtype)
    ns = cache.get(k)
    if ns is None:
        if len(cache) > 4096:
            cache.clear()
        ns = cache[k] = NotSaved(v.shape, v.dtype)
    return ns


class Scatter:
    """A gradient that is zero except at ``x[key]``, where it is ``value``: what the VJP of a
    basic-index ``x[key]`` (ints, slices, None, ``...``) returns in a plain backward pass.

    Written densely it would be ``z = zeros(shape); z[key] = value``, and an ``x`` read
    slice by slice (``x[:, t]`` for every time step ``t``) would get ``T`` full-size arrays
    of zeros, summed by the walk: O(T^2) work for O(T) values. Instead the walk writes
    ``value`` into one buffer per input, in place (:meth:`add_to`): the first contribution
    into fresh zeros, the next ones with ``+=`` at their own positions. Each element sees
    the same additions in the same order as the dense sum, so the numbers are the same.
    (TensorFlow's ``IndexedSlices``, JAX's scatter-add and PyTorch's ``index_put_`` with
    ``accumulate=True`` are the same idea.) ``np.asarray(scatter)`` gives the dense array.
    """

    __slots__ = ("key", "value", "shape")

    def __init__(self, key, value, shape):
        self.key, self.value, self.shape = key, value, shape

    def dense(self, dtype=None):
        """The gradient as an ndarray of ``shape``: zeros with ``value`` at ``key``."""
        value = self.value
        if dtype is None:
            dtype = value.dtype if type(value) is np.ndarray else np.result_type(value)
        z = np.zeros(self.shape, dtype=dtype)
        z[self.key] = value
        return z

    def __array__(self, dtype=None, copy=None):
        return self.dense(dtype)

    def add_to(self, prev, owned):
        """``prev + self``, written into ``prev`` itself when ``owned`` (a buffer the walk
        made, that nothing else holds) and of the right dtype; otherwise into a new buffer.

        Returns ``(result, owned)``: the gradient so far, and whether it is such a buffer."""
        if prev is None:
            return self.dense(), True
        value = self.value
        if type(prev) is not np.ndarray or prev.shape != self.shape:
            return prev + self.dense(), False  # an unusual shape or a scalar: the dense sum
        pd = prev.dtype
        if not owned or (type(value) is not np.ndarray or value.dtype is not pd) \
                and pd != getattr(value, "dtype", None):
            dtype = np.result_type(prev, value)
            if not owned or pd != dtype:
                prev = prev.astype(dtype)  # a copy: ``prev`` may be held elsewhere (a view of g)
        part = prev[self.key]
        if type(part) is np.ndarray:  # a view: added in place (np.add(part, value, out=part))
            part += value
        else:  # one element (every index an integer)
            prev[self.key] = part + value
        return prev, True


def _count_in(t, items, seen):
    """How many times ``t`` is among ``items``, or among the items of a list or tuple there (a
    variadic record's arguments, ``np.stack([a, b])``), each such container once (``seen``: the
    ids of those already counted)."""
    n = 0
    for a in items:
        if a is t:
            n += 1
        elif type(a) in (list, tuple) and id(a) not in seen:
            seen.add(id(a))
            n += _count_in(t, a, seen)
    return n


class Node:
    """One recorded primitive application.

    Attributes
    ----------
    prim : Primitive
        The registry entry (forward, VJP per argument, ``reads``).
    args : tuple
        The arguments as given (Tensors and constants); an argument that no VJP of the
        tracked inputs reads is a :class:`NotSaved` (a Variable stays: the model holds it).
    vals : list
        The raw values the forward saw (ndarrays / Python scalars); VJPs read these.
        :class:`NotSaved` where no VJP reads the value.
    kwargs : dict
        Non-differentiable keyword arguments (axis, shape, ...).
    out : Tensor or NotSaved
        The result, if a VJP reads it (``"ans"`` in the record's ``reads``).
    pairs : tuple of (int, int)
        ``(position in args, Tensor._key)`` of each input the tape tracks (the ones that
        get a VJP), in order: how the walk names them (a key is never reused, so no
        reference is needed). ``parents`` and ``keys`` are the two halves.
    key : int
        The output's ``_key``.
    """

    __slots__ = ("prim", "args", "vals", "kwargs", "out", "pairs", "key")

    def __init__(self, prim, args, vals, kwargs, out, parents, keys, key):
        self.prim = prim
        self.args = args
        self.vals = vals
        self.kwargs = kwargs
        self.out = out
        self.pairs = tuple(zip(parents, keys))
        self.key = key

    @property
    def parents(self):
        """tuple of int: the positions in ``args`` of the tracked inputs."""
        return tuple(i for i, _ in self.pairs)

    @property
    def keys(self):
        """tuple of int: ``Tensor._key`` of each tracked input, in the order of ``parents``."""
        return tuple(k for _, k in self.pairs)


    def out_keys(self):
        """tuple of int: the ``_key`` of each output (one; several for a :class:`MultiNode`)."""
        return (self.key,)

    def outs(self):
        """tuple: each output as :attr:`out` holds it (one; several for a :class:`MultiNode`)."""
        return (self.out,)


class MultiNode(Node):
    """One recorded application of a primitive with several outputs (``np.split``: one
    record, not one slice per piece).

    The same fields as :class:`Node`, except that ``key`` is the tuple of the outputs'
    ``_key`` and ``out`` the tuple of the outputs (Tensors, or :class:`NotSaved` when no
    VJP reads them). The walk gathers the outputs' gradients into one tuple, ``None`` for
    an output that got none (unused, or cut), and calls each VJP once with it; the VJP
    returns the input's gradient (``split``'s puts the pieces back side by side, zeros for
    a ``None``). Such a primitive is made with ``registry.defprim(..., multi=True)``; its
    forward returns a tuple of arrays and its JVP a tuple of tangents, one per output.
    """

    __slots__ = ()

    def out_keys(self):
        """tuple of int: the ``_key`` of each output (``key`` itself, already a tuple)."""
        return self.key

    def outs(self):
        """tuple: the outputs (``out`` itself: Tensors, or :class:`NotSaved` where no VJP reads one)."""
        return self.out


_new_tensor = _new_node = object.__new__
#: What an argument becomes before the forward sees it: a Python list is an array (``[[1., 2.]] @ w``, as
#: TensorFlow), a float autoprop made (``observe.OwnFloat``, marked for the escape check only) a plain float,
#: which numpy promotes as a weak scalar (a float32 tensor / it stays float32), and an array autoprop made
#: (``observe.OwnArray``: a recurrent layer's zero state, Dropout's mask) a plain view of it, so that the
#: forward and the VJPs run numpy's ufuncs on it directly, not through ``OwnArray.__array_ufunc__``'s Python
#: frames (the node's ``args`` keep the marked array: the escape check reads the mark there).
_PLAIN = {list: np.asarray, tuple: np.asarray, _observe.OwnFloat: float,
          _observe.OwnArray: lambda a: a.view(np.ndarray)}
_OwnArray = _observe.OwnArray
#: The types that stand for an integer array argument of a traced call (``autoprop.function``'s guard registers
#: its own): an index given to ``take``, ``take_along_axis`` or ``tensor_scatter_nd_*`` reaches the primitive as
#: itself, read from its slot at each replay (fn45), not as numpy's plain array of the first call's values.
INDEX_ARGUMENTS = set()


def _op_error(prim, vals, kwargs, exc):
    """numpy's message, prefixed with the operation and what it was given."""
    def desc(v):
        shape = getattr(v, "shape", None)
        return f"{getattr(v, 'dtype', type(v).__name__)}{tuple(shape)}" if shape is not None else repr(v)

    opts = ", ".join(f"{k}={v!r}" for k, v in kwargs.items() if k != "key")
    given = ", ".join(desc(v) for v in vals) + (f"; {opts}" if opts else "")
    sparse = next((type(v).__name__ for v in vals if type(v).__module__.startswith("scipy.sparse")), None)
    if sparse is not None:  # numpy made a 0-d object array of it (corpus38 F8: t @ A, A a graph's adjacency)
        return (f"autoprop.{prim.name}({given}): one operand is a scipy.sparse {sparse}, which autoprop does not take "
                f"(numpy sees a 0-d object, hence: {exc}); use its dense array: A.toarray() @ t (recorded, A a "
                "constant)")
    return f"autoprop.{prim.name}({given}): {exc}"


def call(prim, /, *args, **kwargs):
    """Run primitive ``prim`` on ``args`` and record it on every tape that tracks an input.

    This is ``Primitive.__call__`` itself (``registry.tanh(x)`` and every Tensor operator
    land here), written as one function on purpose: it runs for every operation, so the
    forward, the output tensor and the record (:func:`_record`) are one Python frame
    in the usual case, not the five that a call per step would cost (session 8 of
    ``docs/speed.md``).

    Parameters
    ----------
    prim : Primitive
    *args : Tensors, numpy arrays or Python scalars
    **kwargs
        Passed to the forward function unchanged.

    Returns
    -------
    Tensor
    """
    vals = []  # (a loop, not a comprehension: one frame fewer on Python 3.11)
    for a in args:
        vals.append(a._value if isinstance(a, Tensor) else _PLAIN[type(a)](a) if type(a) in _PLAIN else a)
    if kwargs and "axis" in kwargs and type(kwargs["axis"]) is list:  # axis=[0, 1] is (0, 1), as TF
        kwargs = dict(kwargs, axis=tuple(kwargs["axis"]))
    try:
        arr = prim.fwd(*vals, **kwargs) if kwargs else prim.fwd(*vals)
    except (ValueError, TypeError, IndexError) as exc:
        raise _op_exception(prim, vals, kwargs, exc) from exc
    if type(arr) is not np.ndarray:
        if type(arr) is WithSaved:  # (rnn_cell: what its VJPs read beside inputs and output)
            arr, kwargs = arr[0], {**kwargs, "saved": arr[1]}
        else:
            arr = np.asarray(arr)
    out = _new_tensor(Tensor)  # Tensor._wrap, inlined
    out._value = arr
    out._key = _next_key()
    if arr.base is not None:  # a view (x[0], x.T, ...): of an input tensor's values?
        _mark_view(prim, args, vals, out)
    if _RECORDING:
        dt = arr.dtype
        if prim.vjps is None:
            if dt.kind == "c":  # sign(z) = z / |z| is no constant: refused, not cut
                _cx.check_cut(prim, args, lambda a: any(a._key in t._tracked for t in _RECORDING))
            _observe.cut_by(prim.name, "a non-differentiable operation", args, out)
        elif dt is not _F64 and dt.kind not in "f":  # (is_differentiable_dtype, inlined)
            if dt.kind == "c":  # a complex result: recorded only by a primitive with complex rules
                _record_complex(prim, args, vals, kwargs, out)
            elif dt.kind == "O":
                raise _object_result(prim, vals, kwargs)
            else:
                _observe.cut_by(prim.name, f"a cast to the non-differentiable dtype {dt}", args, out)
        elif len(_RECORDING) == 1 and not _EXTRA:  # the usual case: one tape, no listener
            _record(_RECORDING[0], prim, args, vals, kwargs, out, False)
        else:  # ``vals`` is read again after each record: it stays as it is
            for tape in _RECORDING:
                _record(tape, prim, args, vals, kwargs, out, True)
    if _EXTRA:  # a forward accumulator is open, or a paused/exited tape listens
        if _FORWARD:
            if arr.dtype.kind == "O":
                raise _object_result(prim, vals, kwargs)
            for i, acc in enumerate(list(_FORWARD)):
                acc._push(i, prim, args, vals, kwargs, out)
        if _WATCHERS:
            _observe.after_op(prim, args, out)
        if _TRACERS:  # autoprop.function traces: the op is a step of its replay
            _TRACERS[-1].op(prim, args, vals, kwargs, (out,), False)
    return out


def _record_complex(prim, args, vals, kwargs, out):
    """:func:`_record` on every recording tape for a complex result: the tape is marked
    (its reverse walk then checks complex values, ``autoprop.core.complex``), and a
    primitive without complex rules that a tape records raises instead."""
    for tape in list(_RECORDING):
        n = len(tape._nodes)
        _record(tape, prim, args, vals, kwargs, out, True)
        if len(tape._nodes) > n:
            if prim.name not in _cx.COMPLEX_READY:
                del tape._nodes[n:]
                raise _cx.refusal(prim, f"a complex result, {out._value.dtype}{out._value.shape}")
            tape._complex = True


def apply(prim, args, kwargs):
    """``prim(*args, **kwargs)``: :func:`call` with the arguments as a tuple and a dict."""
    return call(prim, *args, **kwargs)


def call_multi(prim, /, *args, **kwargs):
    """:func:`call` for a primitive with several outputs (``defprim(..., multi=True)``): its
    forward returns a tuple of arrays, and one :class:`MultiNode` records them all.

    Returns
    -------
    list of Tensor
        One per output (a list: numpy's ``split`` returns one).
    """
    vals = []
    for a in args:
        vals.append(a._value if isinstance(a, Tensor) else _PLAIN[type(a)](a) if type(a) in _PLAIN else a)
    try:
        arrs = prim.fwd(*vals, **kwargs)
    except (ValueError, TypeError, IndexError) as exc:
        raise _op_exception(prim, vals, kwargs, exc) from exc
    if type(arrs) is WithSaved:  # (lstm_gates_at: what its VJPs read beside inputs and outputs, as call)
        arrs, kwargs = arrs[0], {**kwargs, "saved": arrs[1]}
    outs = []
    dt = None  # the first output's dtype, or the first complex one's (eigh of a Hermitian A: w real, v complex)
    base = src = None  # the array the last view viewed and the input it is (split's pieces all view x)
    own = None  # an array the pieces view that shares no memory with an input (lstm_gates_at's gates)
    for arr in arrs:
        out = _new_tensor(Tensor)  # Tensor._wrap, inlined (as in call)
        out._value = arr
        out._key = _next_key()
        b = arr.base
        if b is not None and b is not own:  # a view of an input's values: out *= 3 is refused
            if b is base and src is not None:  # the input found for the piece before
                _views.mark_view(out, src, prim.name)
            elif b is not base and _apart(b, args, vals):  # no piece of b views an input: one
                own = b  # look at b for all of them, not one per piece and input
            else:
                base, src = b, _mark_view(prim, args, vals, out)
        if dt is None or arr.dtype.kind == "c" and dt.kind != "c":
            dt = arr.dtype
        outs.append(out)
    outs = tuple(outs)
    if _RECORDING and outs:
        if dt.kind == "c":  # recorded only by a primitive with complex rules (_record_complex)
            for tape in list(_RECORDING):
                n = len(tape._nodes)
                if _record_multi(tape, prim, args, vals, kwargs, outs, True):
                    if prim.name not in _cx.COMPLEX_READY:
                        del tape._nodes[n:]
                        raise _cx.refusal(prim, f"a complex result, {dt}")
                    tape._complex = True
        elif not is_differentiable_dtype(dt):
            for out in outs:
                _observe.cut_by(prim.name, f"a cast to the non-differentiable dtype {dt}", args, out)
        else:
            shared = len(_RECORDING) > 1 or bool(_EXTRA)
            for tape in _RECORDING:
                _record_multi(tape, prim, args, vals, kwargs, outs, shared)
    if _EXTRA and outs:
        if _FORWARD:
            for i, acc in enumerate(list(_FORWARD)):
                acc._push(i, prim, args, vals, kwargs, outs)
        if _WATCHERS:
            for out in outs:
                _observe.after_op(prim, args, out)
        if _TRACERS:
            _TRACERS[-1].op(prim, args, vals, kwargs, outs, True)
    return list(outs)


def _record_multi(tape, prim, args, vals, kwargs, outs, shared):
    """:func:`_record` of a primitive with several outputs ``outs``: the node that
    :func:`_record` makes for the first output becomes a :class:`MultiNode` of all of them.
    Returns whether a node was recorded."""
    n = len(tape._nodes)
    _record(tape, prim, args, vals, kwargs, outs[0], shared)
    if len(tape._nodes) == n:  # no tracked input (breadcrumbs for the others too)
        if tape._cuts:
            for out in outs[1:]:
                _observe.carry_cut(tape, prim.vjps, args, out)
        return False
    node = tape._nodes[n]
    node.__class__ = MultiNode  # (the same slots: the node becomes a MultiNode in place)
    saved = type(node.out) is not NotSaved  # ("ans" in the record's reads: all outputs kept)
    keys, kept = [], []  # (loops, not generators: no frame per output on Python 3.11)
    for out in outs:
        keys.append(out._key)
        if saved:
            kept.append(out)
        else:
            ov = out._value
            ns = _NOT_SAVED_F64.get(ov.shape) if ov.dtype is _F64 else None  # (_not_saved, inlined)
            kept.append(_not_saved(ov) if ns is None else ns)
    node.key, node.out = tuple(keys), tuple(kept)
    tape._tracked.update(node.key)
    return True


def _object_result(prim, vals, kwargs):
    """The TypeError for a result of dtype object while a tape or accumulator listens: numpy
    keeps an operand such as ``fractions.Fraction(1, 3)`` or ``decimal.Decimal`` as a Python
    object, so the result has no float dtype and no derivative; without this error the tape
    would cut it and ``tape.gradient`` give None in silence (verify9 X15)."""
    odd = sorted({type(v).__name__ for v in vals if not isinstance(v, (np.ndarray, np.generic, int, float, complex))}
                 | {type(e).__name__ for v in vals if isinstance(v, np.ndarray) and v.dtype.kind == "O"
                    for e in v.flat[:1]})
    what = f"an operand of type {', '.join(odd)}" if odd else "an operand"
    return TypeError(_op_error(prim, vals, kwargs, (
        f"the result has dtype object ({what} is kept as a Python object by numpy), which no "
        "tape can differentiate. Convert it to a float first (float(value), or "
        "np.asarray(value, dtype=float))")))


def _op_exception(prim, vals, kwargs, exc):
    """The forward's exception again, its message prefixed by :func:`_op_error`."""
    msg = _op_error(prim, vals, kwargs, exc)
    try:
        return type(exc)(msg)  # same class (AxisError, ...) when it takes a message
    except Exception:  # noqa: BLE001 - numpy's ufunc errors take other arguments
        return next(c for c in (ValueError, TypeError, IndexError) if isinstance(exc, c))(msg)


def _mark_view(prim, args, vals, out):
    """Mark ``out`` as a view of an input tensor's values, so that ``out *= 3`` is refused
    (:meth:`Tensor._augmented`): numpy would write through into that input.

    Returns the input when ``out``'s ``base`` is that input's array itself (the usual case),
    so that :func:`call_multi` marks the other views of the same array without a search;
    None otherwise (found by shared memory, which depends on each view's extent, or no input)."""
    base = out._value.base
    i = 0
    for v in vals:  # the usual case first: numpy's view of an input's array (x[:, t])
        if v is base and isinstance(args[i], Tensor):
            _views.mark_view(out, args[i], prim.name)
            return args[i]
        i += 1
    for a, v in zip(args, vals):
        if isinstance(a, Tensor) and np.may_share_memory(out._value, v):
            _views.mark_view(out, a, prim.name)
            return None
    return None


def _apart(b, args, vals):
    """Whether the array ``b`` shares no memory with a tensor input's value (``np.may_share_memory``:
    their extents do not overlap), so that no view of ``b`` is a view of an input's values."""
    for a, v in zip(args, vals):
        if isinstance(a, Tensor) and np.may_share_memory(b, v):
            return False
    return True


def _plan(prim, mask, n):
    """What a node of ``prim`` with ``n`` arguments, of which those in the bit ``mask`` are
    tracked (``parents``), saves, from the record's ``reads`` (the union over the VJPs that
    will run; an argument past the VJPs, such as getitem's key, is always saved):
    ``(n, ans saved?, saved positions, positions not saved, positions saved in ``compact``
    form, parents)``. Without ``reads`` everything is saved. Cached per primitive and mask."""
    parents = tuple(i for i in range(n) if mask >> i & 1)
    reads = prim.reads
    if reads is None:
        plan = (n, True, tuple(range(n)), (), (), parents)
    else:
        if type(prim.vjps) is tuple:
            need = {r for i in parents for r in reads[i]}
            saved = tuple(i for i in range(n) if i in need or i >= len(reads))
        else:  # a variadic record (stack): one tuple for all its VJPs, "args" for every argument
            need = set(reads)
            saved = tuple(range(n)) if "args" in need else ()
        compact = tuple(i for i in saved if prim.compact and i in prim.compact)
        plan = (n, "ans" in need, saved, tuple(i for i in range(n) if i not in saved), compact, parents)
    prim.plans[mask] = plan
    return plan


def _stand_ins(tape, prim, args, vals, unsaved, compact, shared):
    """A node's ``(args, vals)`` when its record saves only part of its inputs
    (:func:`_plan`): an argument no VJP reads becomes a :class:`NotSaved` (shape and dtype),
    one the record keeps in ``compact`` form (relu's mask, not x) that form. ``vals`` is
    copied first when another tape or a forward accumulator still reads it (``shared``)."""
    nvals = vals.copy() if shared else vals
    nargs = None  # a list once an argument is replaced (a Linear's W and b never are)
    if compact:
        nargs = list(args)
        for i in compact:  # relu: the mask, not x (its VJP reads it alike)
            v = nvals[i]
            if type(v) is np.ndarray:
                c = prim.compact[i](v, shared)
                if type(c) is PartlySaved:
                    a = args[i]
                    if type(a) is Variable:  # the model holds it (and a later tape may watch it)
                        continue
                    c.key, c.ident = getattr(a, "_key", None), id(a)  # (whole_value_needed)
                if c is not v:
                    nvals[i] = nargs[i] = c
    cuts = tape._cuts
    for i in unsaved:
        v = nvals[i]
        if type(v) is np.ndarray:  # not read by any VJP: shape and dtype only
            a = args[i]
            if type(a) is _OwnArray:  # autoprop's own constant (its plain view in vals: _PLAIN) is
                continue  # kept as given, the mark for the escape check, as before _PLAIN unwrapped it
            ns = _NOT_SAVED_F64.get(v.shape) if v.dtype is _F64 else None  # (inlined)
            nvals[i] = ns = _not_saved(v) if ns is None else ns
            # a Variable costs nothing (the model holds it); a cut value is kept
            # for explain() (its breadcrumbs hold it anyway)
            if type(a) is not Variable and not (cuts and id(a) in cuts):
                if nargs is None:
                    nargs = list(args)
                nargs[i] = ns
    return (args if nargs is None else tuple(nargs)), nvals


def _record(tape, prim, args, vals, kwargs, out, shared):
    """Append a :class:`Node` to ``tape`` if it tracks an input of ``prim``.

    ``vals`` are the inputs' values (a saved plain-array argument is copied in place);
    ``shared``: another tape or a forward accumulator reads ``vals`` after this record, so
    the node's stand-ins for what it does not save go into a copy of the list, not into it."""
    vjps = prim.vjps
    tracked = tape._tracked
    pairs = []  # (position, key) of each tracked input
    mask = 0  # the same positions as bits: the key of the cached plan
    plain = False  # whether an argument is a plain ndarray (see the copy below)
    i = 0
    for a in args:
        if isinstance(a, Tensor):
            k = a._key
            if k in tracked:
                if vjps[i] is not None:
                    pairs.append((i, k))
                    mask |= 1 << i
            elif (
                tape._watch_accessed
                and type(a) is Variable
                and a._trainable  # (the property's slot, read without its frame)
                and a._value.dtype.kind in "fc"
                and vjps[i] is not None
            ):
                tracked.add(k)
                tape._accessed.append(a)
                if a._value.dtype.kind == "c":
                    tape._complex = True  # (its reverse walk checks complex values)
                pairs.append((i, k))
                mask |= 1 << i
        elif type(a) is np.ndarray:
            plain = True
        i += 1
    if not pairs:
        if tape._cuts:  # explain()'s breadcrumbs: only once something was cut
            _observe.carry_cut(tape, vjps, args, out)
        return
    n = len(vals)
    plan = prim.plans.get(mask)
    if plan is None or plan[0] != n:
        plan = _plan(prim, mask, n)
    _n, save_ans, saved, unsaved, compact, _parents = plan
    if tape._save_all:  # (backward_source's tape, which writes every op out)
        save_ans, saved, unsaved, compact = True, range(n), (), ()
    # A plain ndarray argument may be changed in place by the caller after the forward
    # pass; the VJP must see the value the forward saw: a saved one is copied (once, for
    # every tape: ``vals`` is shared). (Tensors' values are never written in place.)
    if plain:
        for i in saved:
            v = vals[i]
            if type(v) is np.ndarray and v is args[i]:
                vals[i] = v.copy()
    node = _new_node(Node)  # (its fields set here: no __init__ frame on every operation)
    node.prim = prim
    node.kwargs = kwargs
    node.pairs = tuple(pairs)
    node.key = key = out._key
    if unsaved or compact:
        node.args, node.vals = _stand_ins(tape, prim, args, vals, unsaved, compact, shared)
    else:
        node.args, node.vals = args, vals
    if save_ans:
        node.out = out
    else:
        ov = out._value
        ns = _NOT_SAVED_F64.get(ov.shape) if ov.dtype is _F64 else None
        node.out = _not_saved(ov) if ns is None else ns
    tape._nodes.append(node)
    tracked.add(key)


def replayed(make, *tensors):
    """``make(*values)``: an array a layer computes in Python from the values of ``tensors`` (a
    constant for the tape: Dropout's mask, max pooling's indices), and, while
    :func:`autoprop.function` traces, the same call again at each replay with that call's values
    (otherwise the trace would freeze the first call's array). ``tensors`` may hold non-Tensors
    (passed as they are)."""
    if _TRACERS and _TRACERS[-1].active:
        return _TRACERS[-1].produce(make, tensors)
    return make(*[t._value if isinstance(t, Tensor) else t for t in tensors])


def int_leaves(seq):
    """True for a (nested) list or tuple of Python or numpy integers and nothing else (no arrays, Tensors,
    floats or bools): a value :func:`replayed` may convert at each replay of autoprop.function (a list
    argument is part of the input signature by value; another list is read anew at each replay)."""
    return all(int_leaves(e) if type(e) in (list, tuple) else isinstance(e, (int, np.integer)) and type(e) is not bool
               for e in seq)


def tracing():
    """True while :func:`autoprop.function` records this thread's operations: a composite whose Python takes a
    branch on its values (np.median's NaN check) takes the branch that holds for every value."""
    return bool(_TRACERS) and _TRACERS[-1].active


def guard_traced(value):
    """While :func:`autoprop.function` traces, keep the Python list ``value`` (a numpy function's option, np.pad's
    ``pad_width``) with a copy of its items: a later call whose list holds other items traces again, as a Python
    value of the signature (a list read from outside the function, changed in place between calls, was frozen at
    its first items: verify40b F4). Otherwise nothing."""
    if tracing():
        _TRACERS[-1].guard(value)


def _python_ints(v):
    """True for a (nested) list or tuple of Python integers."""
    if isinstance(v, (list, tuple)):
        return all(_python_ints(e) for e in v)
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def refuse_traced(name, why):
    """While :func:`autoprop.function` traces, refuse the user's ``np.<name>`` by its own name (not an internal
    operation's: issue 15), saying ``why`` a replay cannot redo it; otherwise nothing."""
    if tracing():
        _TRACERS[-1].refuse(f"np.{name} ({why})")


def on_replay(effect, *tensors):
    """``effect(*values)``: a side effect a layer runs in Python on the values of ``tensors``
    (BatchNorm's running statistics), and, while :func:`autoprop.function` traces, again at each
    replay with that call's values. Returns what ``effect`` returns."""
    if _TRACERS and _TRACERS[-1].active:
        return _TRACERS[-1].effect(effect, tensors)
    return effect(*[t._value if isinstance(t, Tensor) else t for t in tensors])


def _sync_extra():
    if _FORWARD or _WATCHERS or _TRACERS:
        if not _EXTRA:
            _EXTRA.append(True)
    elif _EXTRA:
        _EXTRA.clear()


_watch_ops = _observe.watch_ops
_unwatch = _observe.unwatch


class GradientTape:
    """Record operations for reverse-mode automatic differentiation, as ``tf.GradientTape``.

    Operations run inside the ``with`` block are recorded when at least one input is
    *watched* (or computed from a watched tensor). ``gradient`` then walks the records
    in reverse and applies each primitive's vector-Jacobian product (VJP).

    Parameters
    ----------
    persistent : bool, default False
        A non-persistent tape allows one call to :meth:`gradient` (or one
        :meth:`jacobian`) and then releases its records; a persistent one allows many
        and keeps its records until it is deleted or :meth:`reset`.
    watch_accessed_variables : bool, default True
        Watch every trainable float :class:`Variable` that an operation reads while
        the tape is recording. With False only :meth:`watch` makes a tensor a source.

    Notes
    -----
    Source: ``lessons/10-gradient-tape.md`` (the tape), ``lessons/00-chain-rule.md``
    (VJPs). Tapes nest to any order: when another tape (or a
    :class:`~autoprop.ForwardAccumulator`) is active while ``gradient`` runs, the VJPs
    run on Tensors and are recorded in turn; otherwise they run on plain ndarrays and
    nothing is recorded. ``print(tape)`` lists the recorded operations
    (:meth:`summary`); :meth:`explain` says why a source got no gradient.

    Examples
    --------
    >>> import autoprop as ap
    >>> x = ap.Variable(3.0)
    >>> with ap.GradientTape() as tape:
    ...     y = x**3 + x**2 + x + 5
    >>> float(tape.gradient(y, x))
    34.0
    """

    _forward = False
    #: True: save every input and output (the recording tape of ``backward_source``,
    #: which writes each recorded op out); False: only what the VJPs read.
    _save_all = False
    #: True once a complex value is on the tape (a complex result recorded, a complex
    #: tensor watched): the reverse walk then checks each node (``autoprop.core.complex``)
    _complex = False

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed = bool(watch_accessed_variables)
        self._recording = False
        self._paused = False
        self._watch_ref = None
        self._watch_reason = ""
        self._post_mortem = None
        self._nodes: list[Node] = []
        self._tracked: set[int] = set()  # the _key of every tensor the tape tracks
        self._accessed: list[Variable] = []
        self._watched: list[Tensor] = []
        # breadcrumbs for explain(), created on first use (None: nothing noticed)
        self._cuts = None  # id(tensor) -> (op, why, position): values cut off the tape
        self._keep = None  # the tensors whose ids ``_cuts`` uses (keeps the ids valid)
        self._cut_args = None  # id(tensor) -> (op, args): a cut's own inputs (backward_source)
        self._escapes = None  # (how, tensor, value, position): values that left the tape
        self._escape_overflow = None  # the implicit ones beyond observe.MAX_CRUMBS: observe.note_escape
        self._escape_hints = None  # file:line -> the fix the escape warning named there (observe.note_escape)
        self._escaped_at = None  # a tensor key drawn at the first implicit escape: later tensors may hold its values
        self._used = False
        _views.HOLDERS.add(self)  # (what it holds is no alias: views.held_elsewhere)

    def _holds(self, t, need):
        """The number of references to Tensor ``t`` this tape holds (in its nodes' arguments,
        values, keyword arguments and outputs, its watched tensors and its breadcrumbs), the
        newest nodes first, counting stops once it reaches ``need``: what
        :func:`autoprop.core.views.held_elsewhere` does not count as an alias. A container two
        nodes share (nested tapes record one argument tuple) is counted once, as it holds ``t``
        once."""
        n, seen = 0, set()
        for node in reversed(self._nodes):
            out = node.out
            if out is t:
                n += 1
            elif type(out) is tuple and id(out) not in seen:
                seen.add(id(out))
                n += _count_in(t, out, seen)
            for c in (node.args, node.vals, node.kwargs):
                if c and id(c) not in seen:
                    seen.add(id(c))
                    n += _count_in(t, c.values() if type(c) is dict else c, seen)
            if n >= need:
                return n
        n += _count_in(t, self._watched, seen) + _count_in(t, self._keep or (), seen)
        for crumbs in (self._escapes or (), (self._cut_args or {}).values(),
                       (self._post_mortem or {}).values(), (self._escape_overflow or {}).values()):
            for entry in crumbs:  # (how, tensor, value, position), (op, args), (source, text), [how, Variable, ...]
                n += _count_in(t, entry, seen)
        return n

    def _clear(self):
        self._complex = False
        self._nodes: list[Node] = []
        self._tracked: set[int] = set()  # the _key of every tensor the tape tracks
        self._accessed: list[Variable] = []
        self._watched: list[Tensor] = []
        self._cuts = None
        self._keep = None
        self._cut_args = None
        self._escapes = self._escape_overflow = self._escape_hints = None
        self._used = False

    def _crumbs(self):
        """The breadcrumb containers, created on first use."""
        if self._cuts is None:
            self._cuts = {}
            self._keep = []
            self._cut_args = {}
        return self._cuts

    # --- context manager -----------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise TapeStateError(
                "GradientTape: this tape is already recording (nested `with` on the same tape)"
            )
        self._nesting = _next_nesting()  # (kept through stop_recording: the `with` order)
        self._start()
        return self

    def __exit__(self, *exc):
        self._stop()
        if self._watched and not self._used:
            # keep listening (weakly) to operations on explicitly watched tensors, so
            # explain() can say "computed after the block". Tapes that only auto-watch
            # Variables (a training step) skip this: nothing is added to their cost.
            _watch_ops(self, "after the tape's `with` block exited")
        return False

    def _start(self):
        self._warned_sites = None  # (observe: one TapeEscapeWarning per line per recording)
        self._recording = True
        _RECORDING.append(self)
        if self._watch_ref is not None:
            _unwatch(self._watch_ref)
            self._watch_ref = None

    def _stop(self):
        if self._recording:
            self._recording = False
            if self in _RECORDING:
                _RECORDING.remove(self)

    # --- watching ------------------------------------------------------------
    def watch(self, tensor):
        """Track ``tensor`` (or every tensor in a nested list/tuple/dict of them).

        Parameters
        ----------
        tensor : Tensor, Variable, or nested list/tuple/dict of them

        Raises
        ------
        TapeArgumentError
            A TypeError and a ValueError (TensorFlow's type), if an element is not a Tensor
            (wrap numpy arrays with ``ap.constant``).

        Warns
        -----
        UserWarning
            For an integer or boolean tensor: it is not differentiable, watching it has
            no effect (as in TensorFlow); cast it to float first.
        """
        for t in _flatten(tensor)[0]:
            if not isinstance(t, Tensor):
                raise TapeArgumentError(
                    f"GradientTape.watch: expected an autoprop Tensor or Variable, got "
                    f"{type(t).__name__}{_not_a_nest(t)}. Wrap arrays first: x = ap.constant(array)."
                )
            if not is_differentiable_dtype(t.dtype):
                warnings.warn(
                    f"GradientTape.watch: a tensor of dtype {t.dtype} is not differentiable "
                    "and will get no gradient (None); cast it to float first, e.g. "
                    "ap.constant(x, dtype='float64').",
                    stacklevel=2,
                )
                continue
            if t._key not in self._tracked:
                self._tracked.add(t._key)
                self._watched.append(t)
                if t.dtype.kind == "c":
                    self._complex = True  # (its reverse walk checks complex values)

    def watched_variables(self):
        """Return the Variables this tape watched (explicitly or by reading them), in order.

        Returns
        -------
        tuple of Variable
        """
        seen, out = set(), []
        for v in self._watched + self._accessed:
            if isinstance(v, Variable) and id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        return tuple(out)

    def stop_recording(self):
        """Context manager: operations inside it are not recorded by this tape.

        Raises
        ------
        RuntimeError
            If the tape is not recording (outside its ``with`` block).

        Examples
        --------
        >>> import autoprop as ap
        >>> x = ap.constant(4.0)
        >>> with ap.GradientTape() as tape:
        ...     tape.watch(x)
        ...     with tape.stop_recording():
        ...         y = x**2
        >>> print(tape.gradient(y, x))
        None
        """
        if _TRACERS:  # (autoprop.function: not traced)
            _TRACERS[-1].refuse("GradientTape.stop_recording")
        if not self._recording:
            raise RuntimeError(
                "GradientTape.stop_recording: the tape is not recording (call it inside "
                "the tape's `with` block)."
            )
        return _StopRecording(self)

    def reset(self):
        """Forget everything recorded and watched so far; the tape can be used again.

        Inside the ``with`` block the tape keeps recording from an empty state (as
        ``tf.GradientTape.reset``). The saved arrays are released.
        """
        if self._watch_ref is not None:
            _unwatch(self._watch_ref)
            self._watch_ref = None
        self._post_mortem = None
        self._clear()

    # --- the reverse walk ----------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE, trace=False):
        """Compute d(target)/d(sources) by walking the recorded operations in reverse.

        Parameters
        ----------
        target : Tensor or nested list of Tensors
            A non-scalar target is differentiated as the sum of its elements (several
            targets: the sum of all of them), unless ``output_gradients`` gives the
            upstream gradient dL/dtarget.
        sources : Tensor, Variable, or nested list/tuple/dict of them
            The result has the same structure.
        output_gradients : array_like or Tensor (nested like ``target``), optional
            Each of the target's shape.
        unconnected_gradients : {"none", "zero"} or UnconnectedGradients
            What a source the target does not depend on gets: None or zeros.
        trace : bool or callable, default False
            Print (or pass to the callable, one line at a time) every VJP applied
            during the walk, in reverse order, with the shapes of the upstream
            gradient and of the gradient it produces.

        Returns
        -------
        Tensor or None, in the structure of ``sources``; each gradient has its source's
        shape and dtype. Integer/bool sources get None (with a warning). A complex source
        ``z = x + iy`` gets ``dL/dx + i dL/dy`` (TensorFlow's and PyTorch's convention: a
        step ``-lr * g`` descends; HIPS autograd and JAX return the conjugate), and
        ``output_gradients`` of a complex target are read in the same convention
        (``autoprop.core.complex.public``).

        Raises
        ------
        RuntimeError
            On a second call to a non-persistent tape.
        ValueError
            If ``unconnected_gradients`` is unknown or ``output_gradients`` does not
            match ``target``.
        TypeError
            If a source is not a Tensor or the target left the tape; TapeEscapeError if a
            value from a source left it implicitly before the target was made and may have
            fed it (lesson 10, section 7); TapeArgumentError (also a ValueError) for a None target.
        """
        if _TRACERS and _TRACERS[-1].active:  # autoprop.function traces: the walk becomes its plan
            return _TRACERS[-1].gradient(self, target, sources, output_gradients, unconnected_gradients, trace)
        if self._used and not self._persistent:
            raise RuntimeError(
                "GradientTape.gradient can only be called once on a non-persistent tape: "
                "its records were released after the first call. Create the tape with "
                "GradientTape(persistent=True) to compute several gradients from one "
                "forward pass."
            )
        unconnected = ("none" if unconnected_gradients is UnconnectedGradients.NONE
                       else _unconnected(unconnected_gradients))
        if self._recording:
            warnings.warn(
                "GradientTape.gradient was called inside the tape's `with` block: the tape "
                "records the backward pass too, which costs memory and time. Call it after "
                "the block unless you want higher-order derivatives of this tape.",
                stacklevel=2,
            )
        flat_sources, rebuild = sources, list  # model.trainable_variables: no nesting
        checked = type(sources) is list  # every source a Tensor (then _gradient need not look)
        if checked:
            for x in sources:  # (a loop, not all(...): no generator frame)
                if not isinstance(x, Tensor):
                    flat_sources, rebuild = _flatten(sources)
                    checked = False
                    break
        else:
            flat_sources, rebuild = _flatten(sources)
        results = self._gradient(target, flat_sources, output_gradients, unconnected, trace, checked,
                                 public=self._complex)
        if not self._persistent:
            for r in results:
                if r is None:
                    self._remember_why(target, flat_sources, results)
                    break
            self._used = True
            self._release()
        return rebuild(results)

    def _gradient(self, target, flat_sources, output_gradients, unconnected, trace=False,
                  checked=False, public=False):
        for s in () if checked else flat_sources:  # (checked: gradient() saw only Tensors)
            if not isinstance(s, Tensor):
                raise TypeError(
                    f"GradientTape.gradient: sources must be Tensors or Variables; got "
                    f"{type(s).__name__}{_not_a_nest(s)}"
                )
        targets = [target] if isinstance(target, Tensor) else _flatten(target)[0]
        # (a plain target beside a Tensor one, [loss, 0.0], is a constant, as TensorFlow's: the escape message is
        # for a nest of plain values only, whose every gradient would be None; review24a)
        escaped = bool(self._escapes) and not any(isinstance(u, Tensor) for u in targets)
        constant = not escaped and bool(self._escapes) and _constant_targets(self, targets)
        for t in targets:
            if not isinstance(t, Tensor):  # (a Tensor passes _check_target)
                _check_target(t, "gradient")
            if escaped or constant:
                raise TypeError(_observe.plain_target_text(t, self._escapes, self._escape_hints))
        discrete = [t for t in targets if isinstance(t, Tensor) and t._value.dtype.kind in "biu"]
        if discrete:  # (TensorFlow warns too)
            warnings.warn(_discrete_target_text(target, targets, discrete), stacklevel=3)
        if self._escapes:  # a part of the target may have left the tape: refuse a partial gradient
            _diagnose.refuse_partial_escape(self, targets, flat_sources)
        seeds = ([None] * len(targets) if output_gradients is None  # (the usual case, inline)
                 else _pair_seeds(target, targets, output_gradients, "GradientTape.gradient"))
        if public:  # complex values on the tape: the user's upstream gradients in TF's convention
            seeds = [_cx.public(g) for g in seeds]
        if trace:
            trace = print if trace is True else trace
        grads = _backward(self, targets, seeds, flat_sources, trace)
        results = []
        for s in flat_sources:
            g = grads.get(s._key)
            sv = s._value
            if type(g) is np.ndarray and (g.dtype is sv.dtype or g.dtype == sv.dtype) \
                    and g.shape == sv.shape and sv.dtype.kind in "fc":
                r = _new_tensor(Tensor)  # the usual case: nothing to convert (Tensor._wrap, inlined)
                r._value = g
                r._key = _next_key()
                results.append(r)
                continue
            if g is None or not is_differentiable_dtype(s.dtype):
                if unconnected == "zero" and is_differentiable_dtype(s.dtype):
                    g = np.zeros(s.shape, s.dtype)
                else:
                    if not is_differentiable_dtype(s.dtype):
                        warnings.warn(
                            f"GradientTape.gradient: a source of dtype {s.dtype} is not "
                            "differentiable; its gradient is None. Cast it to float "
                            "(ap.constant(x, dtype='float64')) to get a gradient.",
                            stacklevel=3,
                        )
                    results.append(None)
                    continue
            if not isinstance(g, (Tensor, np.ndarray, np.generic)):
                g = np.asarray(g)  # (a Python number from a rule on 0-d values: no dtype)
            if g.dtype.kind == "c" and s.dtype.kind != "c":  # (a target that is the source)
                g = np.real(g)  # a real source: the real part (autoprop.core.complex)
            if isinstance(g, Tensor):
                if g.dtype != s.dtype:
                    g = g.astype(s.dtype)
                if g.shape != s.shape:
                    g = np.broadcast_to(g, s.shape)  # (a Tensor: numpy's dispatch records it)
                results.append(g)
            else:
                g = np.asarray(g)
                if g.dtype != s.dtype:
                    g = g.astype(s.dtype)
                if g.shape != s.shape:
                    g = np.broadcast_to(g, s.shape)
                results.append(Tensor._wrap(g))
        return [_cx.public(r) for r in results] if public else results

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """The Jacobian of ``target`` with respect to each source, as ``tf.GradientTape.jacobian``.

        One reverse walk per element of ``target`` (seeded with a one-hot upstream
        gradient); the rows are stacked.

        Parameters
        ----------
        target : Tensor, or nested list/tuple/dict of Tensors
            Any shape. A nested target (TensorFlow takes one Tensor) gives the Jacobian
            of each of its tensors, nested like ``target``.
        sources : Tensor or nested structure of Tensors
        unconnected_gradients : {"none", "zero"} or UnconnectedGradients
        parallel_iterations : int >= 1, optional
        experimental_use_pfor : bool, default True
            TensorFlow's choice of loop and its memory knob, checked as TensorFlow checks them
            (see Raises); they change no number, as in TensorFlow: autoprop has no vectorized
            loop (pfor) and runs one reverse walk per row, one at a time, whatever they say.

        Returns
        -------
        Tensor or None per source, shape ``target.shape + source.shape``, in the
        structure of ``sources`` (for a nested target: that, for each of its tensors,
        in the structure of ``target``). Under an open tape or ForwardAccumulator the
        result is recorded (Jacobians of Jacobians, forward-over-reverse).

        Raises
        ------
        RuntimeError
            If the (non-persistent) tape was already used, or is non-persistent and
            ``experimental_use_pfor=False`` (TensorFlow's sequential loop needs a persistent
            tape in eager mode).
        ValueError
            If ``parallel_iterations`` is below 1, or 1 with ``experimental_use_pfor``.
        TypeError
            If a target is None or a string, or a source is not a Tensor.

        Examples
        --------
        >>> import autoprop as ap
        >>> x = ap.constant([1.0, 2.0])
        >>> with ap.GradientTape() as g:
        ...     g.watch(x)
        ...     y = x * x
        >>> g.jacobian(y, x).numpy()
        array([[2., 0.],
               [0., 4.]])
        """
        if _TRACERS:  # (autoprop.function: not traced)
            _TRACERS[-1].refuse("GradientTape.jacobian")
        if self._used and not self._persistent:
            raise RuntimeError(
                "GradientTape.jacobian: this non-persistent tape was already used (its "
                "records were released). Use GradientTape(persistent=True)."
            )
        _loop_options(self, "jacobian", parallel_iterations, experimental_use_pfor)
        unconnected = _unconnected(unconnected_gradients)
        flat_sources, rebuild = _flatten(sources)
        for s in flat_sources:
            if not isinstance(s, Tensor):
                raise TypeError(
                    f"GradientTape.jacobian: sources must be Tensors or Variables; got "
                    f"{type(s).__name__}{_not_a_nest(s)}"
                )
        targets, rebuild_target = _flatten(target)  # a nested target: one Jacobian per leaf
        out = [rebuild(self._jacobian(t, flat_sources, unconnected)) for t in targets]
        if not self._persistent:
            self._used = True
            self._release()
        return rebuild_target(out)

    def _jacobian(self, target, flat_sources, unconnected):
        """The Jacobian of one target leaf with respect to each of ``flat_sources`` (a list)."""
        _check_target(target, "jacobian")
        target = target if isinstance(target, Tensor) else Tensor(target)
        n = target.size
        rows = [[] for _ in flat_sources]
        for k in range(n):
            seed = np.zeros(n, dtype=target.dtype)
            seed[k] = 1
            if target.dtype.kind == "c":  # d y_k: from the gradients of Re(y_k) and Im(y_k)
                res = _complex_row(self, target, flat_sources, seed.reshape(target.shape))
            else:  # a real target's rows are gradients: TF's convention (complex.public)
                res = self._gradient(target, flat_sources, seed.reshape(target.shape), "none",
                                     public=self._complex)
            for j, r in enumerate(res):
                rows[j].append(r)
        return [_stack_rows(rs, target.shape, s, unconnected) for s, rs in zip(flat_sources, rows)]

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians, as ``tf.GradientTape.batch_jacobian``.

        Assumes ``target[i]`` depends only on ``source[i]``; then one reverse walk per
        element of ``target[0]`` gives all examples at once. One more walk, with a random
        upstream gradient, checks the assumption: when rows interact (a batch mean,
        BatchNorm in training mode, attention across the batch) it warns instead of
        returning a wrong Jacobian silently (TensorFlow does not check).

        Parameters
        ----------
        target : Tensor, shape (batch, y1, ..., yn) with n >= 1, or nested list/tuple/dict of them
            A nested target (TensorFlow takes one Tensor) gives one result per tensor,
            nested like ``target``.
        source : Tensor, shape (batch, x1, ..., xm) with m >= 1
        unconnected_gradients : {"none", "zero"} or UnconnectedGradients
        parallel_iterations : int >= 1, optional
        experimental_use_pfor : bool, default True
            Checked as TensorFlow checks them, no number changed (:meth:`jacobian`).

        Returns
        -------
        Tensor of shape (batch, y1, ..., yn, x1, ..., xm), or None if unconnected.
        Under an open tape or ForwardAccumulator the result is recorded.

        Raises
        ------
        ValueError
            If the first dimensions of ``target`` and ``source`` differ, or either has rank
            below 2 (TensorFlow's "must have rank at least 2"); ``parallel_iterations``
            as :meth:`jacobian`.
        RuntimeError
            On a used non-persistent tape, and on a non-persistent one with
            ``experimental_use_pfor=False`` or ``parallel_iterations`` at most the number of
            elements of an example of ``target`` (TensorFlow's tiled loop runs twice).
        TypeError
            If ``source`` is not one Tensor, or a target is None or a string.

        Warns
        -----
        UserWarning
            If the cross-row probe finds that rows of ``target`` depend on other rows of
            ``source``.

        Examples
        --------
        >>> import autoprop as ap
        >>> x = ap.constant([[1.0, 2.0], [3.0, 4.0]])
        >>> with ap.GradientTape() as g:
        ...     g.watch(x)
        ...     y = x * x
        >>> g.batch_jacobian(y, x).numpy().tolist()
        [[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]
        """
        if _TRACERS:  # (autoprop.function: not traced)
            _TRACERS[-1].refuse("GradientTape.batch_jacobian")
        if self._used and not self._persistent:
            raise RuntimeError(
                "GradientTape.batch_jacobian: this non-persistent tape was already used."
            )
        _loop_options(self, "batch_jacobian", parallel_iterations, experimental_use_pfor)
        unconnected = _unconnected(unconnected_gradients)
        if not isinstance(source, Tensor):
            raise TypeError(
                f"GradientTape.batch_jacobian: source must be one Tensor or Variable (as in "
                f"TensorFlow); got {type(source).__name__}. For several sources, call "
                "batch_jacobian once per source with GradientTape(persistent=True)."
            )
        targets, rebuild_target = _flatten(target)  # a nested target: one result per leaf
        out = [self._batch_jacobian(t, source, unconnected, parallel_iterations) for t in targets]
        if not self._persistent:
            self._used = True
            self._release()
        return rebuild_target(out)

    def _batch_jacobian(self, target, source, unconnected, parallel_iterations=None):
        """:meth:`batch_jacobian` of one target leaf."""
        _check_target(target, "batch_jacobian")
        target = target if isinstance(target, Tensor) else Tensor(target)
        for what, t in (("target", target), ("source", source)):
            if t.ndim < 2:  # TensorFlow: "Shape (3,) must have rank at least 2"
                raise ValueError(
                    f"batch_jacobian: Shape {t.shape} must have rank at least 2: the {what} is "
                    f"(batch, ...) with at least one axis per example, as in TensorFlow. A rank-1 "
                    f"{what} has one number per example: reshape it to (batch, 1) "
                    f"({what}[:, None]), or take the diagonal of tape.jacobian(target, source)."
                )
        if target.shape[0] != source.shape[0]:
            raise ValueError(
                f"batch_jacobian: the first dimension of target {target.shape} and source "
                f"{source.shape} must be the same batch size"
            )
        b = target.shape[0]
        m = target.size // b if b else 0
        if parallel_iterations is not None and parallel_iterations <= m and not self._persistent:
            raise RuntimeError(
                f"GradientTape must be created with persistent=True to compute the batch_jacobian "
                f"with parallel_iterations={parallel_iterations} <= {m} elements per example (as "
                f"TensorFlow, whose vectorized loop then runs its body twice). The option changes no "
                f"number here: drop it, or use GradientTape(persistent=True)."
            )
        rows = []
        for k in range(m):
            seed = np.zeros((b, m), dtype=target.dtype)
            seed[:, k] = 1
            if target.dtype.kind == "c":  # dRe + i dIm, as jacobian (_complex_row)
                rows.append(_complex_row(self, target, [source], seed.reshape(target.shape))[0])
            else:
                rows.append(self._gradient(target, [source], seed.reshape(target.shape), "none")[0])
        if b > 1 and m and any(r is not None for r in rows):
            self._cross_row_probe(target, source, rows, b, m)
        if self._complex and target.dtype.kind != "c":  # a real target's rows are gradients
            rows = [_cx.public(r) for r in rows]
        if all(r is None for r in rows) and m:
            if unconnected == "none":
                return None
        return _stacked_rows(rows, source, (b,) + target.shape[1:] + source.shape[1:])

    def _cross_row_probe(self, target, source, rows, b, m):
        """Warn when target rows depend on other rows of source (batch_jacobian's silent
        assumption; TensorFlow does not check). One extra reverse walk with a random
        upstream gradient ``r``: the true ``r^T J`` equals the sum of the per-row
        Jacobians' products, row by row, only if no row reads another; for a generic
        ``r`` a cross-row dependence shows (with probability 1)."""
        r = np.random.default_rng(20240612).standard_normal((b, m)).astype(target.dtype)
        full = self._gradient(target, [source], r.reshape(target.shape), "zero")[0]
        # (a complex target: the seed r gives the gradient of Re(r . y), the real part of
        # the rows for a real source, the rows themselves for a complex one)
        dt = np.complex128 if source.dtype.kind == "c" else np.float64
        full = np.asarray(full._value, dt)
        pred = np.zeros(source.shape, dt)
        for k, row in enumerate(rows):
            if row is not None:
                w = np.real(r[:, k]).reshape((b,) + (1,) * (source.ndim - 1))
                pred += w * np.asarray(row._value if dt is np.complex128 else np.real(row._value), dt)
        scale = np.max(np.abs(full)) + np.max(np.abs(pred))
        err = float(np.max(np.abs(full - pred)))
        eps = 1e-6 if source.dtype == np.float32 or target.dtype == np.float32 else 1e-10
        if not np.isfinite(err) or err > eps * max(scale, 1e-300) * (1 + m):
            warnings.warn(
                f"GradientTape.batch_jacobian: target rows depend on other rows of the source "
                f"(a random cross-row probe differs by {err:.3g} from what independent rows "
                f"give, scale {scale:.3g}). batch_jacobian assumes target[i] depends only on "
                f"source[i] (no batch statistics, no mixing across the batch); its result is "
                f"wrong here. Use tape.jacobian(target, source) for the full "
                f"{target.shape + source.shape} Jacobian.",
                stacklevel=3,
            )

    def _release(self):
        self._nodes = []
        self._tracked = set()
        if self._cuts is not None:
            self._cuts = self._keep = self._cut_args = None
        if self._escapes is not None:
            self._escapes = self._escape_overflow = self._escape_hints = None
        if self._watch_ref is not None:
            _unwatch(self._watch_ref)
            self._watch_ref = None

    def _remember_why(self, target, sources, results):
        if self._post_mortem is None:
            self._post_mortem = {}
        for s, r in zip(sources, results):
            if r is None and isinstance(s, Tensor):
                try:
                    self._post_mortem[id(s)] = (s, _diagnose.explain(self, target, s))
                except Exception:  # diagnosis must never break a gradient call
                    pass

    # --- seeing the tape -----------------------------------------------------
    def backward_source(self, target, sources, output_gradients=None, names=None,
                        unconnected_gradients=UnconnectedGradients.NONE):
        """The reverse walk of :meth:`gradient` as straight-line numpy code.

        The walk runs once more with its VJPs on Tensors under a second tape, which
        records the backward pass as primitives; each becomes one numpy expression from
        its registry record's ``source`` template (:mod:`autoprop.core.source`). The tape
        is not used up: :meth:`gradient` can follow.

        Parameters
        ----------
        target, sources, output_gradients, unconnected_gradients
            As :meth:`gradient`. With ``unconnected_gradients="none"`` a source that gets
            no gradient raises (with :meth:`explain`'s reason); ``"zero"`` writes zeros.
        names : dict of str to Tensor, optional
            Names for forward tensors (``{tensor: "name"}`` is read the same way; other
            keys raise TypeError). Otherwise names come from the keys of a ``sources``
            dict, the caller's local variables that hold the tensors, and Variable names;
            the gradient of ``z`` is ``dz``; other forward values are named after their
            primitive (``tanh``, ``mm``), backward temporaries ``t``, ``t_2``, ...

        Returns
        -------
        BackwardSource
            ``.code`` (str: imports, one line per operation, shapes as comments),
            ``.inputs`` (the saved forward values and constants the code reads, by name),
            ``.outputs`` (the gradient variables, one per source) and ``.run()``, which
            executes the code and returns the gradients in the structure of ``sources``.

        Raises
        ------
        NotImplementedError
            If the backward pass uses a primitive without a source template (named).
        ValueError
            If a source gets no gradient (a non-differentiable operation, named by
            :meth:`explain`) and ``unconnected_gradients`` is ``"none"``.
        RuntimeError
            If the tape is still recording, or is non-persistent and already used.
        TypeError
            If ``names`` is not a dict of str to Tensor (or of Tensor to str).

        Examples
        --------
        >>> import numpy as np, autoprop as ap
        >>> W = ap.Variable([[1.0, 2.0], [3.0, 4.0]], name="W")
        >>> X = ap.constant([[0.5, -1.0]])
        >>> with ap.GradientTape() as tape:
        ...     z = X @ W
        ...     a = np.tanh(z)
        ...     loss = np.sum(a * a)
        >>> src = tape.backward_source(loss, [W])
        >>> print(src)
        import numpy as np
        # inputs: a (1, 2), z (1, 2), X (1, 2)
        da = a + a  # (1, 2)
        t = 1.0 / np.cosh(np.clip(z, -710.0, 710.0))  # (1, 2)
        dz = da * (t * t)  # (1, 2)
        dW = X.T @ dz  # (2, 2)
        >>> bool(np.allclose(src.run()[0], tape.gradient(loss, W).numpy(), rtol=1e-12))
        True
        """
        if _TRACERS:  # (autoprop.function: not traced)
            _TRACERS[-1].refuse("GradientTape.backward_source")
        import sys

        return _source.backward_source(self, target, sources, output_gradients, names,
                                unconnected_gradients, sys._getframe(1).f_locals)

    def explain(self, target, source):
        """Say why ``source`` gets no gradient from ``target`` (or that it does).

        Detects: never watched (a constant, a non-trainable Variable, or
        ``watch_accessed_variables=False``), an integer dtype, a value that left the
        tape through numpy / ``float()`` / ``.numpy()``, operations inside
        ``stop_recording`` or after the ``with`` block, ``stop_gradient``, a
        non-differentiable operation (comparison, argmax, round, integer cast),
        ``numpy_function``, a Variable replaced by a plain array, and a tape already
        used. Some of these are heuristics (see :mod:`autoprop.core.diagnose`).

        Parameters
        ----------
        target : Tensor (or any value)
        source : Tensor or Variable

        Returns
        -------
        str
            The explanation (also what ``print`` shows).
        """
        return _diagnose.explain(self, target, source)

    def summary(self):
        """The recorded operations in order: op, input shapes, output shape, bytes saved.

        Returns
        -------
        str
            One line per operation and a total of the bytes the tape holds for the
            backward pass: each block of memory counted once (a view such as ``W.T``
            counts as the array it views), with the part that is the current value of
            a Variable (parameters, which the model holds anyway) said separately.
        """
        return _diagnose.summary(self)

    def __str__(self):
        return self.summary()

    def __repr__(self):
        state = "recording" if self._recording else ("used" if self._used else "stopped")
        return (
            f"<GradientTape persistent={self._persistent} {state}, "
            f"{len(self._nodes)} ops recorded>"
        )

    def __del__(self):
        try:
            if self._recording:
                self._stop()
            if self._watch_ref is not None:
                _unwatch(self._watch_ref)
        except Exception:  # interpreter shutdown
            pass


def _loop_options(tape, method, parallel_iterations, use_pfor):
    """Check ``jacobian``'s and ``batch_jacobian``'s TensorFlow loop options as TensorFlow does
    (``backprop.py`` and ``pfor`` in ``parallel_for/control_flow_ops.py``). Neither changes a
    number, in TensorFlow or here: they choose how TensorFlow runs the rows (a vectorized
    ``pfor``, or a ``while_loop`` with ``parallel_iterations`` rows in flight, a memory knob),
    and autoprop, which has neither, always runs one reverse walk per row, one at a time. What
    TensorFlow refuses is refused: the sequential loop on a non-persistent tape (it calls
    ``gradient`` once per row), ``parallel_iterations`` below 1, and 1 with pfor."""
    if parallel_iterations is not None:
        if isinstance(parallel_iterations, bool) or not isinstance(parallel_iterations, (int, np.integer)):
            raise TypeError(f"GradientTape.{method}: parallel_iterations must be None or a positive "
                            f"integer; got {type(parallel_iterations).__name__}")
        if parallel_iterations < 1 or parallel_iterations == 1 and use_pfor:
            raise ValueError(
                f"GradientTape.{method}: parallel_iterations must be None or a positive integer, "
                f"and not 1 with experimental_use_pfor=True (TensorFlow's pfor: 'Use for_loop "
                f"instead'); got {parallel_iterations}"
            )
    if not use_pfor and not tape._persistent:
        raise RuntimeError(
            f"GradientTape must be created with persistent=True to compute the {method} with eager "
            f"execution enabled and with experimental_use_pfor set to False (as TensorFlow: its "
            f"sequential loop calls gradient once per row). The option changes no number here: "
            f"drop it, or use GradientTape(persistent=True)."
        )


def _constant_targets(tape, targets):
    """True when every target is a Tensor ``tape`` never tracked and a non-integer value left it implicitly: a
    constant that may be made of the escaped values (``import autoprop.numpy as np``: ``H = np.zeros(...);
    H[t] = np.tanh(...)``, then ``np.sum(H)`` is a constant Tensor), refused as a plain target is (fn41: its
    gradient was None, zeros with ``unconnected_gradients='zero'``, where the loss depends on the sources)."""
    first = getattr(tape, "_escaped_at", None)  # (a target made before the first escape cannot hold its values: a cut, as before)
    return (first is not None and any(e[0] in _observe.IMPLICIT and not _diagnose._integral(e[2]) for e in tape._escapes)
            and all(isinstance(u, Tensor) and u._key not in tape._tracked and u._key > first for u in targets))


def _check_target(t, where):
    """A target leaf (of a gradient or a Jacobian) must be a value, not None or a string (a
    forgotten return): :class:`TapeArgumentError` (TensorFlow raises ValueError for None)."""
    if t is None or isinstance(t, (str, bytes)):
        raise TapeArgumentError(
            f"GradientTape.{where}: the target is {t!r}, not a Tensor. Did the function "
            "that computes it forget to return it?"
        )


def _stacked_rows(rows, source, full):
    """:meth:`GradientTape.batch_jacobian`'s result of shape ``full`` from its ``rows`` (one gradient per element of
    ``target[0]``, of ``source``'s shape, None where unconnected: zeros), recorded when an outer tape records
    or a ForwardAccumulator is open (the rows then carry tangents: forward-over-reverse)."""
    if (_RECORDING or _FORWARD) and any(isinstance(r, Tensor) for r in rows):
        parts = [r if r is not None else Tensor(np.zeros(source.shape, source.dtype)) for r in rows]
        if not parts:
            return Tensor(np.zeros(full, source.dtype))
        st = np.stack(parts, axis=1)  # (b, m, *source.shape[1:]): recorded, numpy's dispatch
        return st.reshape(full)
    vals = [np.zeros(source.shape, source.dtype) if r is None else r._value for r in rows]
    if not vals:
        return Tensor._wrap(np.zeros(full, source.dtype))
    return Tensor._wrap(np.stack(vals, axis=1).reshape(full))


def _complex_row(tape, target, sources, seed):
    """One row of the Jacobian of a complex ``target``, ``d y_k / d source`` (as
    ForwardAccumulator's tangent of ``y_k``): the seed 1 gives the gradient of Re(y_k),
    the seed -i that of Im(y_k) (autoprop.core.complex). A real source gets
    ``dRe + i dIm``; a complex source the complex derivative, which exists only where
    ``y_k`` is holomorphic in it (Cauchy-Riemann: the two walks agree up to the factor -i);
    otherwise ValueError."""
    re = tape._gradient(target, sources, seed, "none")
    im = tape._gradient(target, sources, -1j * seed, "none")
    row = []
    for s, a, b in zip(sources, re, im):
        if a is None or b is None:
            row.append(a if b is None else b * 1j if a is None else None)
        elif s.dtype.kind != "c":
            row.append(a + 1j * b)
        elif np.allclose(b._value, -1j * a._value, rtol=1e-6, atol=1e-9 * (1 + np.abs(a._value).max())):
            row.append(a)
        else:
            raise ValueError(
                "GradientTape.jacobian: the complex target is not holomorphic in a complex "
                f"source of shape {s.shape} (d Im / d source is not -i d Re / d source), so it "
                "has no complex Jacobian; take the Jacobians of np.real(target) and "
                "np.imag(target), or of real and imaginary parts of the source"
            )
    return row


def _stack_rows(rows, tshape, source, unconnected):
    """Stack per-element gradients into a (target.shape + source.shape) Jacobian, recorded
    when a tape records or a ForwardAccumulator is open (as :func:`_stacked_rows`)."""
    full = tuple(tshape) + tuple(source.shape)
    if all(r is None for r in rows):
        if unconnected == "zero" or not rows:
            return Tensor._wrap(np.zeros(full, source.dtype))
        return None
    if (_RECORDING or _FORWARD) and any(isinstance(r, Tensor) for r in rows):
        parts = [r if r is not None else Tensor._wrap(np.zeros(source.shape, source.dtype)) for r in rows]
        return np.stack(parts, axis=0).reshape(full)  # (recorded: numpy's dispatch)
    vals = [np.zeros(source.shape, source.dtype) if r is None else r._value for r in rows]
    return Tensor._wrap(np.stack(vals, axis=0).reshape(full))


class _StopRecording:
    def __init__(self, tape):
        self._tape = tape
        self._was = False

    def __enter__(self):
        tape = self._tape
        self._was = tape._recording
        tape._stop()
        tape._paused = True
        _watch_ops(tape, "inside `with tape.stop_recording()`")
        return self

    def __exit__(self, *exc):
        tape = self._tape
        tape._paused = False
        _unwatch(tape._watch_ref)
        tape._watch_ref = None
        if self._was:
            tape._start()
        return False


def _seed_value(t, seed, higher):
    """dL/dt to start the walk from: ones of ``t``'s shape and dtype, or ``seed``
    (``output_gradients``); a Tensor when an outer tape records the walk (``higher``)."""
    if seed is None:
        v = np.empty(t._value.shape, t._value.dtype)  # np.ones without its Python wrapper
        v.fill(1)
    else:
        v = seed._value if isinstance(seed, Tensor) else np.asarray(seed)
        if v.dtype.kind == "c" and t.dtype.kind != "c":
            raise ValueError(
                f"output_gradients: a complex gradient ({v.dtype}) for a real target "
                f"({t.dtype}); a real target's gradient is real (its imaginary part would "
                "be dropped)"
            )
        if not isinstance(seed, Tensor):
            v = np.asarray(v, dtype=t.dtype)
        if v.shape != t.shape:
            raise ValueError(
                f"output_gradients: expected shape {t.shape} (the target's); got {v.shape}"
            )
    if higher:
        return seed if isinstance(seed, Tensor) else Tensor._wrap(v)
    return v


def _walk(tape, targets, seeds, sources, trace=None):
    """The reverse walk. Returns {tensor._key: gradient} (ndarrays, or Tensors when
    an outer tape records the backward pass)."""
    tracked = tape._tracked
    higher = bool(_RECORDING) or bool(_FORWARD)  # someone records: compute VJPs on Tensors
    keep = set()  # (a loop, not a set comprehension: one frame fewer on Python 3.11)
    for s in sources:
        keep.add(s._key)
    grads: dict = {}

    for t, seed in zip(targets, seeds):
        # a target that is also a source gets its seed, watched or not (TF: gradient(v, v) = 1)
        if not isinstance(t, Tensor) or (t._key not in tracked and t._key not in keep):
            continue
        v = _seed_value(t, seed, higher)
        k = t._key
        grads[k] = v if k not in grads else grads[k] + v

    nodes = tape._nodes[:]  # a snapshot: a recording tape may append while we walk
    reach = None if _roots_asked(tape, keep) else _reaching(nodes, keep)
    if trace:
        trace(f"backward walk over {len(nodes)} recorded ops (last first):")
    get, pop = grads.get, grads.pop
    # key -> the buffer Scatter.add_to made for it, that nothing else holds: later slices of
    # the same input are added into it in place while it is still the key's gradient
    # (``owned.get(ka) is prev``: any other addition makes a new array, so the test fails by
    # itself, with no bookkeeping on the usual path). Every contribution to a key comes
    # before the key's own node, which hands the buffer on as g, read only from then on.
    owned = {}
    cx = _cx if tape._complex else None  # complex values on the tape: checked
    for pos in range(len(nodes) - 1, -1, -1):
        node = nodes[pos]
        k = node.key
        g = get(k) if k in keep else pop(k, None)
        ans = node.out
        if g is None:
            if node.__class__ is not MultiNode or (g := _multi_gradient(k, keep, get, pop)) is None:
                continue
            if not higher:
                ans = _multi_values(ans)
        elif not higher and type(ans) is not NotSaved:
            ans = ans._value
        prim, kwargs = node.prim, node.kwargs
        if cx is not None:
            cx.check(prim, node.vals, ans, "an input of the reverse walk is complex")
        if higher:
            ins = [a if isinstance(a, Tensor) else v for a, v in zip(node.args, node.vals)]
        else:
            ins = node.vals
        vjps, joint = prim.vjps, prim.joint_vjp
        pairs = node.pairs if reach is None else _asked(node.pairs, reach)
        if not pairs:
            continue
        if joint is not None:  # every tracked input's gradient in one call, as jax's vjp:
            joint = joint(pairs, g, ans, *ins, **kwargs)  # (indexed by position)
        for i, ka in pairs:
            if joint is None:  # one VJP per input
                gi = vjps[i](g, ans, *ins, **kwargs) if kwargs else vjps[i](g, ans, *ins)
            else:
                gi = joint[i]
            if gi is None:  # "no gradient" (a custom_gradient's grad_fn said so)
                if trace:
                    trace(f"  #{pos:<4d} {node.prim.name:<14s} vjp[{i}]: no gradient (None)")
                continue
            if cx is not None:  # a complex gradient for a real input: its real part
                gi = cx.fit_real(gi, node.vals[i])
            if trace:
                _trace_vjp(trace, pos, node, i, g, gi)
            prev = get(ka)
            if gi.__class__ is Scatter:  # zero outside x[key]: added into one buffer per input
                scatter_into(grads, ka, gi, prev, owned)
            else:
                grads[ka] = gi if prev is None else prev + gi
    return grads


def scatter_into(grads, ka, gi, prev, owned):
    """The walk's addition of a :class:`Scatter` ``gi`` into the gradient ``prev`` of ``ka``: one buffer
    per input, added into in place while ``owned`` says nothing else holds it (``grads``: the walk's dict,
    or autoprop.function's list of slots)."""
    buf, mine = gi.add_to(prev, prev is not None and owned.get(ka) is prev)
    grads[ka] = buf
    if mine:
        owned[ka] = buf


# _backward(tape, targets, seeds, sources, trace=None): :func:`_walk` with numpy's divide-by-zero
# and invalid-value warnings off: the VJPs' 0·inf rule (``prims/_common.zero_rule``) makes
# ``0 * inf`` and ``0 / 0`` 0 where the upstream gradient is 0, and numpy's warning of the product
# before it named autoprop's own lines for a documented value (newuser24 L3: the naive softplus at
# 1000, ``sqrt(sum(x**2))**2`` at 0). An overflow still warns, and so does the forward (it runs
# outside the walk): those are the user's. np.errstate as a decorator, the same state as a
# ``with np.errstate(...)`` block around the call (its token kept per call: nested walks and
# threads are safe), without building and entering a new errstate object on every gradient
# call (about 1-2 us of a 64-32-10 B16 step's 120; session 31 of docs/speed.md).
_backward = np.errstate(divide="ignore", invalid="ignore")(_walk)


def _reaching(nodes, keep):
    """The keys whose gradient the walk needs: the sources' (``keep``) and every recorded output computed
    from one. An input computed from no source gets no VJP call (its gradient would reach no source):
    the walk does no work for it, and a VJP that refuses (the third derivative of gammainc in a, with
    a a Variable the outer tape watched but was not asked for; review26a) is not called."""
    reach = set(keep)
    add = reach.add
    for node in nodes:  # (recording order: an input is recorded before the ops that use it)
        for _, ka in node.pairs:
            if ka in reach:
                k = node.key
                if node.__class__ is MultiNode:
                    reach.update(k)
                else:
                    add(k)
                break
    return reach


def _roots_asked(tape, keep):
    """Whether every tensor the tape tracks from outside (watched, or a Variable it read) is a
    source. Every tracked key is then computed from a source, :func:`_reaching` would return all
    of them, and the walk skips that pass (a training step asks for every trainable variable)."""
    for t in tape._watched:
        if t._key not in keep:
            return False
    for v in tape._accessed:
        if v._key not in keep:
            return False
    return True


def _asked(pairs, reach):
    """A node's ``pairs`` (input position, key) without the inputs no source is computed from (not in
    ``reach``, :func:`_reaching`): their VJPs are not asked for."""
    for _, ka in pairs:
        if ka not in reach:
            return [p for p in pairs if p[1] in reach]
    return pairs


def _multi_gradient(keys, keep, get, pop):
    """A multi-output node's upstream gradient: the tuple of its outputs' gradients (None for an
    output that got none; the keys of ``keep``, the sources, stay in ``grads``), or None when no
    output got one (:func:`_backward`)."""
    g = []  # (loops, not comprehensions: no frame per node on Python 3.11)
    got = False
    for ko in keys:
        gk = get(ko) if ko in keep else pop(ko, None)
        g.append(gk)
        if gk is not None:
            got = True
    return tuple(g) if got else None


def _multi_values(outs):
    """A multi-output node's saved outputs as arrays (``NotSaved`` kept) for its VJPs."""
    if type(outs[0]) is NotSaved:  # a record saves all its outputs or none (_record_multi)
        return outs
    vals = []
    for a in outs:
        vals.append(a if type(a) is NotSaved else a._value)
    return tuple(vals)


def _trace_vjp(trace, pos, node, i, g, gi):
    """One line of the reverse walk's trace: node ``pos``'s VJP ``i`` took ``g`` to ``gi`` (shapes)."""
    gs = [None if x is None else tuple(np.shape(x)) for x in g] if type(g) is tuple else tuple(np.shape(g))
    trace(f"  #{pos:<4d} {node.prim.name:<14s} vjp[{i}]: g {gs} -> "
          f"d(arg {i}) {tuple(gi.shape if type(gi) is Scatter else np.shape(gi))}")


def _is_nest(x):
    """A container :func:`_flatten` walks into: a list, tuple (namedtuple) or dict (as tf.nest)."""
    return isinstance(x, (list, tuple, dict)) and not isinstance(x, Tensor)


def _sorted_keys(d):
    """A dict's keys in tf.nest's order: sorted, so two dicts pair by key, not by insertion."""
    try:
        return sorted(d)
    except TypeError:  # keys of mixed types: a fixed order all the same
        return sorted(d, key=lambda k: (type(k).__name__, repr(k)))


def _leaf_path(structure, leaf):
    """Where ``leaf`` (by identity) sits in the nest ``structure``: ``['b']``, ``[1]['x']``;
    None when it is not there."""
    if structure is leaf:
        return ""
    if isinstance(structure, dict):
        items = structure.items()
    elif isinstance(structure, (list, tuple)) and not isinstance(structure, Tensor):
        items = enumerate(structure)
    else:
        return None
    for k, sub in items:
        rest = _leaf_path(sub, leaf)
        if rest is not None:
            return f"[{k!r}]{rest}"
    return None


def _discrete_target_text(target, targets, discrete):
    """The warning for integer or boolean targets: the whole target (every source gets None),
    or the members of a target structure that contribute nothing while the others are
    differentiated (tfport46 F10: the text said "every source gets None" beside a right 3.0)."""
    head = "GradientTape.gradient: "
    why = "(integers and booleans are piecewise constant)"
    fix = ("Differentiate a float target (a loss computed from the float tensors, not from argmax, "
           "comparisons or casts).")
    if len(discrete) == len(targets):
        what = (f"the target has the dtype {discrete[0]._value.dtype}" if isinstance(target, Tensor)
                else f"every member of the target structure has an integer or boolean dtype "
                     f"({', '.join(sorted({str(t._value.dtype) for t in discrete}))})")
        return (f"{head}{what}, which carries no gradient {why}: every source gets None (zeros with "
                f"unconnected_gradients='zero'). {fix}")
    names = ", ".join(f"target{_leaf_path(target, t) or ''} ({t._value.dtype})" for t in discrete)
    one, others = len(discrete) == 1, len(targets) - len(discrete)
    return (f"{head}{names} {'has an integer or boolean dtype' if one else 'have integer or boolean dtypes'}, "
            f"which carries no gradient {why}: {'it contributes' if one else 'they contribute'} nothing (as a "
            f"zero upstream gradient); the other {others} member{'' if others == 1 else 's'} of the target "
            f"structure {'is' if others == 1 else 'are'} differentiated as usual. Leave "
            f"{'it' if one else 'them'} out of the target if that is not what you meant.")


def _flatten(structure):
    """Flatten nested lists/tuples/namedtuples/dicts of leaves; return (leaves, rebuild).

    Dicts are walked in sorted-key order, as ``tf.nest.flatten``, so two dicts with the
    same keys give their leaves in the same order whatever their insertion order;
    ``rebuild`` gives the same structure back (namedtuples and dict types kept, keys in
    ``structure``'s own order). Pair two structures with :func:`_flatten_like`.
    """
    if isinstance(structure, dict):
        keys = _sorted_keys(structure)
        parts = [_flatten(structure[k]) for k in keys]
        sizes = [len(p[0]) for p in parts]
        leaves = [x for p in parts for x in p[0]]

        def rebuild(vals):
            got, pos = {}, 0
            for k, (_, rb), n in zip(keys, parts, sizes):
                got[k] = rb(vals[pos : pos + n])
                pos += n
            if type(structure) is dict:
                return {k: got[k] for k in structure}
            out = structure.copy()  # (an OrderedDict, a defaultdict: its own type)
            for k in structure:
                out[k] = got[k]
            return out

        return leaves, rebuild
    if isinstance(structure, (list, tuple)) and not isinstance(structure, Tensor):
        parts = [_flatten(x) for x in structure]
        leaves = [x for p in parts for x in p[0]]
        sizes = [len(p[0]) for p in parts]

        def rebuild(vals):
            out, pos = [], 0
            for (_, rb), n in zip(parts, sizes):
                out.append(rb(vals[pos : pos + n]))
                pos += n
            if isinstance(structure, tuple):
                return type(structure)(*out) if hasattr(structure, "_fields") else tuple(out)
            return out

        return leaves, rebuild
    return [structure], lambda vals: vals[0]


def _not_a_nest(x):
    """The hint for an iterable that is not a nest (a dict view, a generator, a set): as in
    tf.nest, only lists, tuples and dicts are walked into, so say how to make it one."""
    if isinstance(x, (str, bytes, np.ndarray)) or not hasattr(x, "__iter__"):
        return ""
    return (f" (a {type(x).__name__} is not walked into: only lists, tuples and dicts are, as "
            "in tf.nest; pass list(...) of it, e.g. list(model.variables.values()))")


def _describe_nest(x):
    """A short picture of a nested structure, its leaves as ``.``: ``[., [.]]``, ``{'a': .}``."""
    text = _describe_nest_full(x)
    return text if len(text) <= 300 else text[:297] + "..."


def _describe_nest_full(x):
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_describe_nest_full(x[k])}" for k in _sorted_keys(x)) + "}"
    if _is_nest(x):
        inner = ", ".join(_describe_nest_full(v) for v in x)
        if isinstance(x, tuple):
            name = type(x).__name__ if hasattr(x, "_fields") else ""
            return f"{name}({inner}{',' if len(x) == 1 and not name else ''})"
        return f"[{inner}]"
    return "."


def _flatten_like(shallow, deep, where, names=("primals", "tangents")):
    """The leaves of ``deep`` paired with those of ``_flatten(shallow)``, as
    ``tf.nest.flatten_up_to``: ``deep`` must have ``shallow``'s structure, where a leaf of
    ``shallow`` takes ``deep``'s whole subtree there as one value (a list as an array).
    Lists and tuples match each other; dicts match by key.

    Raises
    ------
    ValueError
        Naming both structures (``where`` says which call), when they differ.
    """
    out = []

    def walk(s, d):
        if not _is_nest(s):
            out.append(d)
            return
        same = _is_nest(d) and isinstance(s, dict) == isinstance(d, dict)
        if same and isinstance(s, dict):
            same = set(s) == set(d)
            if same:
                for k in _sorted_keys(s):
                    walk(s[k], d[k])
                return
        elif same:
            same = len(s) == len(d)
            if same:
                for a, b in zip(s, d):
                    walk(a, b)
                return
        raise ValueError(
            f"{where}: {names[0]} and {names[1]} must have the same nested structure (a list "
            f"or tuple of the same length, a dict with the same keys); {names[0]} is "
            f"{_describe_nest(shallow)}, {names[1]} is {_describe_nest(deep)} (leaves shown "
            "as '.'; a leaf may be an array or a list of numbers)"
        )

    walk(shallow, deep)
    return out


def _pair_seeds(target, targets, output_gradients, where):
    """``output_gradients`` flattened to one per leaf of ``target`` (``targets``, already
    flattened), paired by structure (:func:`_flatten_like`; dicts by key). As in
    TensorFlow, ``[dy]`` for a single target ``y`` is ``dy``, and ``dy`` for ``[y]`` too."""
    if output_gradients is None:
        return [None] * len(targets)
    og = output_gradients
    if not _is_nest(target):
        if isinstance(og, (list, tuple)) and len(og) == 1 and isinstance(og[0], (Tensor, np.ndarray)):
            og = og[0]  # (TF's form: a list of one gradient per target)
        return [og]
    if len(targets) == 1 and not _is_nest(og):
        return [og]
    return _flatten_like(target, og, where, ("target", "output_gradients"))
