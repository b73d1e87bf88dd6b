"""Tensor and Variable: immutable arrays that a :class:`~autoprop.GradientTape` can record.

A :class:`Tensor` wraps a numpy array and never changes it: every operation makes a
new Tensor. That is what lets the tape keep references to the arrays it saved during
the forward pass and trust them during the backward pass (see
``lessons/10-gradient-tape.md``). A :class:`Variable` is a Tensor whose value can be
replaced (``assign``), as ``tf.Variable``; replacing swaps in a new array, so arrays
saved by a tape are never changed under it.
"""

from __future__ import annotations

import itertools

import numpy as np

from . import views as _views
from .views import not_a_view

_FLOAT_KINDS = ("f", "c")
#: The functional update that does ``b[idx] op= v`` for a view's augmented assignment (newuser31 F5).
_SCATTER_HINT = {"+": "b = ap.tensor_scatter_nd_add(b, idx_nd, v)", "-": "b = ap.tensor_scatter_nd_add(b, idx_nd, -v)"}

#: Tapes whose ``with`` block is open and that are recording, innermost last (shared
#: with :mod:`autoprop.core.tape`; defined here so leaving the tape can be noticed).
_RECORDING: list = []
#: Forward-mode accumulators whose ``with`` block is open, innermost last.
_FORWARD: list = []
#: Non-empty while ``_FORWARD`` or a listening tape (:mod:`autoprop.core.observe`) is:
#: one check on the hot path.
_EXTRA: list = []
#: Non-empty while a replay of :func:`autoprop.function` runs the forward of an op that a tape recorded
#: when traced (``tracing._keeping``): a forward that keeps what its VJPs read only for a tape or a
#: listener (``WithSaved``: the cross-entropy's softmax, a recurrent step's pre-activation) keeps it then
#: too, so the replay's gradient step reads it instead of computing it again.
_KEEP_SAVED: list = []
#: The trace of :func:`autoprop.function` in progress (at most one; ``autoprop/function.py``): the
#: conversions of a traced tensor to a Python or numpy value and a Variable's ``assign*`` report to it.
_TRACERS: list = []
#: How many times a layer's Python state changed (``Layer.__setattr__``: ``trainable``, a rate, the running
#: statistics): :func:`autoprop.function` traces again when it moved since its trace or last replay.
_STATE: list = [0]
#: A new identity for every Tensor (``Tensor._key``): the tape's records and its reverse
#: walk name tensors by it, so a record need not keep a tensor alive to name it (an
#: ``id()`` is reused once its object is freed; a key never is).
_next_key = itertools.count(1).__next__


def _as_array(value, dtype=None):
    """Copy ``value`` into a fresh float64-by-default numpy array owned by a Tensor."""
    if isinstance(value, Tensor):
        value = value._value
    if dtype is None:
        arr = np.array(value)
        if arr.dtype.kind in "iub" and isinstance(value, float):
            arr = arr.astype(np.float64)
        if arr.dtype == np.float16 or arr.dtype.kind in "OUSV":
            raise TypeError(
                f"autoprop: cannot make a Tensor from a value of dtype {arr.dtype}; "
                "use float64 (the default) or float32"
            )
    else:
        arr = np.array(value, dtype=dtype)
    return arr


class Tensor:
    """An immutable n-dimensional array that gradient tapes can record.

    Parameters
    ----------
    value : array_like
        Any value ``numpy.array`` accepts. It is copied: changing the original array
        afterwards does not change the Tensor.
    dtype : numpy dtype, optional
        Python floats become float64 (as in TensorFlow with float64 inputs); float32
        arrays stay float32. Integer and boolean tensors are allowed but are not
        differentiable: a tape gives them no gradient (None).

    Notes
    -----
    ``Tensor`` supports ``+ - * / ** @``, unary minus, comparisons, indexing and the
    numpy dispatch protocols, so ``np.exp(t)`` on a Tensor is recorded like
    ``autoprop.exp(t)``. In-place changes are refused: a recorded value must stay
    what the backward pass will read.

    Leaving the tape. :meth:`numpy` and :meth:`item` take the value on purpose and are
    quiet. Every *implicit* conversion of a tensor that carries gradient (tracked by a
    recording :class:`~autoprop.GradientTape`, a trainable float Variable it would watch,
    or a tensor with a tangent in an open ``ForwardAccumulator``) gives a
    :class:`~autoprop.TapeEscapeWarning` (a ``TapeEscapeError`` under
    ``ap.strict_mode()``): ``np.asarray(t)`` and numpy code that does not dispatch, and the
    Python number conversions ``float(t)``, ``int(t)``, ``complex(t)``,
    ``operator.index(t)`` and ``t.tolist()`` (``t.numpy().tolist()`` is quiet). The latter include ``math.exp(t)``, ``math.sqrt(t)``,
    ``np.float64(t)`` and ``np.fromiter`` over a tensor, which call ``float(t)`` and so
    cannot be told apart from it: the plain number they return is a constant and its path
    contributes nothing to the gradient. Write ``np.exp(t)`` (recorded) instead, or
    ``t.item()`` / ``ap.stop_gradient(t)`` to take the value deliberately. ``round(t)``
    is ``t.round()``: recorded, and passes no gradient (piecewise constant).

    Examples
    --------
    >>> import autoprop as ap
    >>> t = ap.constant([1.0, 2.0, 3.0])
    >>> (t * 2).numpy()
    array([2., 4., 6.])
    """

    __slots__ = ("_value", "_key", "_view", "_views", "_family", "__weakref__")  # set only on views and their bases
    __array_priority__ = 1000  # numpy defers to our operators in mixed expressions

    def __init__(self, value, dtype=None):
        self._value = _as_array(value, dtype)
        self._key = _next_key()

    @classmethod
    def _wrap(cls, arr):
        """Wrap an array the caller owns without copying (internal fast path)."""
        t = object.__new__(Tensor)
        t._value = arr if type(arr) is np.ndarray else np.asarray(arr)
        t._key = _next_key()
        return t

    def __reduce_ex__(self, protocol):
        # pickle (and every library that pickles: multiprocessing, joblib, a cache on disk): the unpickled
        # tensor is a new constant (a new _key, __setstate__ below), so while a tape records, pickling a
        # tensor that carries gradient is an implicit escape, as np.asarray(t): the TapeEscapeWarning at the
        # user's line, the breadcrumb that explain() reads and gradient() refuses a target it fed (tester27t
        # H1: pickle.loads(pickle.dumps(h)) * x gave [1, 2] for 2x = [2, 4], with no word). A Variable's
        # pickle is a new Variable, a leaf of its own, as its deepcopy (Keras-style saving): never an
        # escape. copy.copy and copy.deepcopy never come here (__copy__, __deepcopy__: recorded copies).
        if (_RECORDING or _FORWARD) and type(self) is not Variable:
            hint = _observe.implicit_escape(self, "pickling")
            _observe.note_escape(self, "pickling", self._value, hint)
        # protocol 2's reduction at every protocol: object's of 0 and 1 (copyreg._reduce_ex) refuses a class
        # with __slots__ (review28a L3: TypeError where numpy's arrays pickle at any protocol); its
        # copyreg.__newobj__ and (None, slots) state are plain pickleable objects at protocol 0 too
        return object.__reduce_ex__(self, max(protocol, 2))

    def __setstate__(self, state):
        # pickle / copy.copy of a subclass: the values, and a new identity (_key)
        for k, v in (state[1] if isinstance(state, tuple) else state or {}).items():
            object.__setattr__(self, k, v)
        self._key = _next_key()

    # --- array facts ---------------------------------------------------------
    @property
    def shape(self):
        """tuple of int: the shape of the value."""
        return self._value.shape

    @property
    def dtype(self):
        """numpy.dtype: the dtype of the value."""
        return self._value.dtype

    @property
    def ndim(self):
        """int: number of axes."""
        return self._value.ndim

    @property
    def strides(self):
        """tuple of int: the strides of the value's memory, in bytes, as ``ndarray.strides``
        (read-only: numpy code such as ``as_strided(x, shape, x.strides + x.strides)`` reads
        them; ``np.lib.stride_tricks.as_strided`` on a Tensor is recorded against this layout,
        ``autoprop.core.prims.extra.as_strided``)."""
        return self._value.strides

    @property
    def size(self):
        """int: number of elements."""
        return self._value.size

    @property
    def itemsize(self):
        """int: the size of one element in bytes, as ``ndarray.itemsize`` (read-only metadata: numpy-ml's
        ``to_frames`` reads ``x.itemsize`` to compute strides, tester27t L3)."""
        return self._value.itemsize

    @property
    def nbytes(self):
        """int: the bytes the elements take, ``size * itemsize``, as ``ndarray.nbytes``."""
        return self._value.nbytes

    @property
    def __array_interface__(self):
        """Refused: numpy's interface to the value's raw memory (a data pointer).

        Raises
        ------
        AttributeError
            Always (so numpy, which looks for it, converts a Tensor through ``__array__``, which
            warns while a tape records); it names ``t.numpy().__array_interface__``.
        """
        raise AttributeError(_NO_INTERFACE)

    def view(self, *args, **kwargs):
        """Refused: ``ndarray.view`` gives another array over the same memory.

        Raises
        ------
        TypeError
            Always; it names the spellings: ``t`` itself (a Tensor never changes, so a view of it is
            no different), ``t.reshape(...)``, and ``t.numpy().view(dtype)`` to reinterpret bytes.
        """
        raise TypeError(
            "autoprop Tensors have no .view(): ndarray.view gives a second array over the same memory, for "
            "writes seen through both names, and a Tensor is never written. Use t itself where a view of t "
            "is meant (nothing can change it), t.reshape(shape) for other axes (recorded), and "
            "t.numpy().view(dtype) to reinterpret the bytes as another dtype (a plain array: no gradient).")

    def itemset(self, *args):
        """Refused: ``ndarray.itemset`` writes one element in place (gone from numpy 2).

        Raises
        ------
        TypeError
            Always; it names the recorded spellings.
        """
        raise TypeError(
            "autoprop Tensors are immutable: t.itemset(i, v) would write one element in place, changing a "
            "value that a gradient tape may have saved. Build a new tensor: t = ap.where(mask, v, t) with a "
            "boolean mask True at that element (recorded in t and v), or np.concatenate of pieces.")

    def setflags(self, write=None, align=None, uic=None):
        """``ndarray.setflags``, except making a Tensor writable: ``t.setflags()`` and ``t.setflags(write=False)`` do
        nothing (a Tensor is read-only already); ``align`` and ``uic`` get numpy's checks (review28a L4: they were
        refused where numpy allows them) and change no flag: ``t.flags`` is read from the value's memory each time
        (a fresh view), so after ``align=False`` (a promise not to rely on alignment, which no value depends on)
        ``t.flags.aligned`` still tells the memory's alignment.

        Parameters
        ----------
        write : bool or None
            Only ``None`` or False (True is refused).
        align, uic : bool or None
            As numpy's (``align=True`` on unaligned memory and ``uic=True`` raise numpy's ValueError).

        Raises
        ------
        TypeError
            For ``write=True``: it says why and what to write.
        """
        if write is not None and write:
            raise TypeError(
                f"autoprop Tensors are immutable: t.setflags(write={write!r}) cannot make a Tensor writable (a "
                "gradient tape may have saved its value). Build a new tensor with Tensor operations (ap.where, "
                "np.concatenate), or take a writable copy of the values with t.numpy() (a plain array, off the "
                "tape); t.flags reads the flags.")
        if align is not None or uic is not None:
            self._value.view().setflags(align=align, uic=uic)  # numpy's checks and words, on a throw-away view
        return None

    def tobytes(self, order="C"):
        """Refused: the value's raw bytes, a plain ``bytes`` off the tape.

        Raises
        ------
        TypeError
            Always; it names ``t.numpy().tobytes()``, the explicit exit.
        """
        raise TypeError(
            "autoprop Tensors have no .tobytes(): the bytes are a plain value off the tape, and rebuilding an "
            "array from them (np.frombuffer) would cut the gradient path without a word. To take the bytes on "
            f"purpose (a hash key, a file), write t.numpy().tobytes(order={order!r}) (quiet, explicit); "
            "to compute with the values, use the Tensor itself.")

    @property
    def flags(self):
        """numpy.flagsobj: the memory layout of the value (``np.isfortran(t)`` reads
        ``t.flags.fnc``), as a read-only view's: ``writeable`` is False and setting a flag
        changes only that throw-away view, never the Tensor."""
        v = self._value.view()
        v.setflags(write=False)
        return v.flags

    def numpy(self):
        """Return a copy of the value as a numpy array (changing it cannot affect the tape).

        The copy is a plain array: operations on it are not recorded (the gradient
        path ends here; :meth:`GradientTape.explain` reports it).
        """
        if _TRACERS:
            _TRACERS[-1].convert(self, ".numpy()")
        v = self._value.copy()
        if _RECORDING:
            _observe.note_escape(self, ".numpy()", v)
        return v

    def __array__(self, dtype=None, copy=None):
        # A read-only view: code that leaves the tape through numpy cannot write into a
        # value the tape saved. While a tape records or a ForwardAccumulator is open, an
        # implicit conversion of a Tensor that carries gradient (or a tangent) warns
        # (observe.TapeEscapeWarning); .numpy() stays quiet.
        if _TRACERS:
            _TRACERS[-1].convert(self, "a numpy conversion (np.asarray / np.array)")
        v = self._value.view()
        v.setflags(write=False)  # (as v.flags.writeable = False, without making the flags object)
        if dtype is not None and dtype != v.dtype:
            v = v.astype(dtype)
        elif copy:
            v = v.copy()
        if _RECORDING or _FORWARD:  # (an open ForwardAccumulator loses the tangent too)
            hint = _observe.implicit_escape(self)  # TapeEscapeWarning at the user's line (or raises)
            _observe.note_escape(self, "numpy conversion (np.asarray / np.array)", v, hint)  # (after: refused never left)
        return v

    def __len__(self):
        return len(self._value)

    def __float__(self):
        # float(t) is also what math.exp(t), math.sqrt(t), np.float64(t), complex(t) and
        # np.fromiter(...) call: they cannot be told apart here, so every one of them warns
        # while a tape records and t carries gradient (the rule: Notes of the class).
        if _TRACERS:
            _TRACERS[-1].convert(self, "float()")
        if _RECORDING or _FORWARD:
            hint = _observe.implicit_escape(self, "float()")
            _observe.note_escape(self, "float()", float(self._value), hint)
        return float(self._value)

    def __complex__(self):
        if _TRACERS:
            _TRACERS[-1].convert(self, "complex()")
        if _RECORDING or _FORWARD:
            hint = _observe.implicit_escape(self, "complex()")
            _observe.note_escape(self, "complex()", complex(self._value), hint)
        return complex(self._value)

    def __int__(self):
        if _TRACERS:
            _TRACERS[-1].convert(self, "int()")
        if _RECORDING or _FORWARD:
            hint = _observe.implicit_escape(self, "int()")
            _observe.note_escape(self, "int()", int(self._value), hint)
        return int(self._value)

    def __index__(self):
        if _TRACERS:
            _TRACERS[-1].convert(self, "operator.index() (an index or a range bound)")
        if _RECORDING or _FORWARD:
            _observe.implicit_escape(self, "operator.index()")
        return self._value.__index__()

    def __bool__(self):
        if _TRACERS:
            _TRACERS[-1].convert(self, "bool() (an `if`, `while`, `and`/`or` or `not` on it)")
        return bool(self._value)

    def item(self, *args):
        """One element as a Python scalar (leaves the tape), as ``ndarray.item``.

        With :meth:`numpy`, the explicit way to take a value on purpose: it never warns.
        ``float(t)`` (and ``math.exp(t)`` & co., which call it) warns while a tape records
        and ``t`` carries gradient; see the class Notes.

        Parameters
        ----------
        *args : int or tuple of int, optional
            numpy's: none for a one-element tensor, a flat index (``t.item(3)``), or one index
            per axis (``t.item((0, 1))``, ``t.item(0, 1)``).

        Returns
        -------
        int, float, complex or bool

        Raises
        ------
        ValueError, IndexError
            numpy's (more than one element and no index; an index out of range).
        """
        if _TRACERS:
            _TRACERS[-1].convert(self, ".item()")
        value = self._value.item(*args)
        if _RECORDING:
            _observe.note_escape(self, ".item()", value)
        return value

    def tolist(self):
        """The value as nested Python lists of numbers (leaves the tape).

        Like ``float(t)``, it warns (:class:`~autoprop.TapeEscapeWarning`) while a tape
        records or a ForwardAccumulator is open and ``t`` carries gradient: the numbers are
        constants, so ``sum(t.tolist())`` would silently drop ``t``'s gradient. To take the
        values on purpose, write ``t.numpy().tolist()`` (quiet).
        """
        if _TRACERS:
            _TRACERS[-1].convert(self, ".tolist()")
        if _RECORDING or _FORWARD:
            v = self._value.tolist()
            _observe.implicit_escape(self, ".tolist()")
            _observe.note_escape(self, ".tolist()", self._value)
            return v
        return self._value.tolist()

    def __format__(self, format_spec):
        """``f"{t:.4f}"``: a 0-d tensor formats its value, as numpy's 0-d arrays and torch's tensors do.

        An empty spec gives ``str(t)`` for any tensor. A spec for a tensor with axes raises
        TypeError (as torch and numpy): format its values one by one (``t.numpy()``). Like
        :meth:`item`, taking the value for display is deliberate: it never warns.
        """
        if _TRACERS:
            _TRACERS[-1].convert(self, "format() (an f-string)")
        if self._value.ndim == 0:
            if _RECORDING:
                _observe.note_escape(self, "format()", self._value.item())
            return format(self._value.item(), format_spec)
        if not format_spec:
            return str(self)
        raise TypeError(
            f"unsupported format string {format_spec!r} for a Tensor of shape {self.shape}: only a 0-d "
            "Tensor (one number) takes a format spec; format the values one by one from t.numpy(), e.g. "
            f"np.array2string(t.numpy(), formatter={{'float_kind': lambda v: format(v, {format_spec!r})}})."
        )

    def __repr__(self):
        body = np.array2string(self._value, separator=", ", prefix="    ")
        return f"<{type(self).__name__} shape={self.shape} dtype={self.dtype} {body}>"

    def __hash__(self):
        return id(self)

    def __iter__(self):
        # not a generator function: iter(t) of a 0-d tensor raises at once, as numpy's (np.iterable(t) False)
        if self._value.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    def __copy__(self):
        # numpy's copy.copy is a new array (ndarray.__copy__): here a recorded ``t.copy()``, as
        # ``__deepcopy__`` below (review23: it returned t itself, so ``prev = copy.copy(h);
        # prev *= 2`` was refused as an alias of h, where numpy leaves h as it was). A Variable's
        # is itself, as before.
        return self.copy() if type(self) is Tensor else self

    def __deepcopy__(self, memo):
        # numpy's deepcopy is a new array with the same values: here ``t.copy()``, recorded as the
        # identity, so the gradient flows through it (a new constant cut the path silently: tester22a
        # H2) and, as a new tensor no one else holds, ``c = copy.deepcopy(h); c *= 2`` rebinds c
        # and leaves h, as numpy's does. (TensorFlow's EagerTensor returns itself, which would make
        # that an alias here.) A Variable's deepcopy is a new Variable, as tf.Variable's (below).
        return self.copy()

    # --- in-place updates are refused ----------------------------------------
    def __setitem__(self, key, value):
        if _shuffling():
            raise TypeError(
                "autoprop Tensors are immutable: np.random.shuffle(t) (or rng.shuffle(t)) permutes t in "
                "place, writing its items. Write t = t[rng.permutation(len(t))] (a recorded gather: "
                "each element's gradient goes back to its place).")
        if type(self) is Tensor and self._value.dtype.kind in "biu":  # m = x > 0; m[:, 0] = True
            what = "a boolean mask (x > 0 of a Tensor is one)" if self.dtype.kind == "b" else "an integer Tensor"
            raise TypeError(
                f"autoprop Tensors are immutable, constants too: this {self.dtype} Tensor of shape "
                f"{self.shape} is {what}, which carries no gradient, but item assignment "
                "(t[...] = v) is refused for every Tensor, as in TensorFlow and jax. Take its values "
                "first and edit the numpy array: m = (x > 0).numpy(), then m[:, 0] = True (a mask "
                "or index array needs no gradient); or build it whole: m = (x > 0) | "
                "(np.arange(x.shape[1]) == 0), or np.where(cond, new, m)."
            )
        if type(self) is Tensor and _observe._carrier(self) is None:  # e.g. np.zeros_like(t)
            raise TypeError(
                f"autoprop Tensors are immutable, constants too: this {self.dtype} Tensor of "
                f"shape {self.shape} carries no gradient (np.zeros_like(t), np.ones_like(t) & co. "
                "of a Tensor return a constant Tensor), but item assignment (t[...] = v) is refused for every "
                "Tensor, as a record may have saved its value. To fill in a constant, start "
                "from a numpy array: z = np.zeros(t.shape) (or np.zeros_like(t.numpy())), "
                "then z[0] = 1.0; for values that depend on a Tensor, build a new tensor: "
                "ap.where(mask, v, z), or np.concatenate of pieces."
            )
        raise TypeError(
            "autoprop Tensors are immutable: item assignment (t[...] = v, also made by functions "
            "that write items, such as np.random.shuffle(t)) would change a "
            "value that a gradient tape may have saved for the backward pass. Build a new "
            "tensor instead, e.g. ap.where(mask, v, t), or ap.numpy.concatenate of pieces (a "
            "shuffle: t = t[rng.permutation(len(t))]); at integer positions idx (TensorFlow's scatter: "
            "the last of repeated positions wins, as numpy's), t[idx] = v is "
            "t = ap.tensor_scatter_nd_update(t, idx[:, None], v) and t[idx] += v is "
            "t = ap.tensor_scatter_nd_update(t, idx[:, None], t[idx] + v)."
        )

    # `t += 1` is `t = t + 1`: a new tensor bound to the name (recorded; the old tensor, which
    # a tape may have saved, is unchanged), as TF's eager tensors. A Variable refuses them
    # (below), as tf.Variable. Where numpy's `t += 1` would be seen through another name, the
    # rebinding would give a forward value that silently differs from the same code on arrays,
    # so it is refused (one rule, views.py): on a view of another tensor's values (``b[0]``,
    # ``b.T``, ``b.reshape(...)``: numpy's ``row = b[0]; row *= 3`` writes through into ``b``), on
    # a tensor that has a view (each while another tensor sharing its memory lives: views.alone), and on a tensor
    # something else holds (``b = t``, ``hist.append(t)``,
    # a caller's argument: ``views.held_elsewhere``; not a 0-d tensor, numpy's scalar, which
    # numpy's ``+=`` rebinds too).
    def _augmented(self, op, fn, other):
        made, views = getattr(self, "_view", None), getattr(self, "_views", None)
        if (made is not None or views is not None) and _views.alone(self):  # its base and views all gone:
            made = views = None  # numpy's write-through is seen by no one (corpus39 H4: np.var(x, 1).reshape(-1, 1))
        if views is not None and made is None:
            raise TypeError(
                f"autoprop: `t {op}= value` on a tensor that has a view ({views}, e.g. row = t[0]): "
                f"numpy would change the view as well, and autoprop never writes into a tensor, so "
                f"the view would keep the old values, unlike numpy's. Write `t = t {op} value` and "
                f"take the view from the new t. Source: lessons/10-gradient-tape.md."
            )
        if made is not None:
            made = f"{made[0]} of a tensor of shape {tuple(made[1])}"
            raise TypeError(
                f"autoprop: `t {op}= value` on a tensor made by {made}, a view of another "
                f"tensor's values: numpy would write through into that tensor as well, and "
                f"autoprop never writes into a tensor, so the result would differ from numpy's. "
                f"Compute the whole tensor anew: for `b[idx] {op}= v`, "
                f"{_SCATTER_HINT.get(op) or f'b = ap.tensor_scatter_nd_update(b, idx_nd, b[idx] {op} v)'} "
                f"(TensorFlow's functions, jax's b.at[idx].add / .set: indices of shape (n, K) into b's first K "
                f"axes, e.g. b[1:3] is [[1], [2]]), `b = b * scale` with a scale array, ap.where(mask, new, b), or "
                f"ap.numpy.concatenate of pieces; or write `t = t {op} value` if only t should change. Source: "
                f"lessons/10-gradient-tape.md."
            )
        if self._value.ndim and _views.held_elsewhere(self, other):
            raise TypeError(
                f"autoprop: `t {op}= value` on a tensor that something else also holds: another "
                f"name (`b = t`), a list, dict or attribute (`hist.append(t)`, `cache['t'] = t`, "
                f"`self.t = t`), the caller's variable when a function changes its argument "
                f"(`def f(z): z -= z.mean()`). numpy would change that one array in place, so every holder "
                f"would see the new values; autoprop never writes into a tensor, so only t would "
                f"be rebound and the others would keep the old values, unlike numpy's. Write "
                f"`t = t {op} value`: t becomes a new tensor and the other names still hold the "
                f"old value (as after a .copy() in numpy); where they should see the new value, "
                f"store or return the new t (`z = z - z.mean(); return z`). "
                f"Source: lessons/10-gradient-tape.md."
            )
        return fn(self, other)

    def __iadd__(self, other):
        return self._augmented("+", _R.add, other)

    def __isub__(self, other):
        return self._augmented("-", _R.subtract, other)

    def __imul__(self, other):
        return self._augmented("*", _R.multiply, other)

    def __itruediv__(self, other):
        return self._augmented("/", _R.divide, other)

    def __ipow__(self, other):
        return self._augmented("**", _R.power, other)

    def __imod__(self, other):
        return self._augmented("%", _R.remainder, other)

    def __ifloordiv__(self, other):
        return self._augmented("//", _R.floor_divide, other)

    def __imatmul__(self, other):
        return self._augmented("@", _R.matmul, other)

    # --- operators: each one is a registered primitive -----------------------
    def __add__(self, other):
        return _R.add(self, other)

    def __radd__(self, other):
        return _R.add(other, self)

    def __sub__(self, other):
        return _R.subtract(self, other)

    def __rsub__(self, other):
        return _R.subtract(other, self)

    def __mul__(self, other):
        return _R.multiply(self, other)

    def __rmul__(self, other):
        return _R.multiply(other, self)

    def __truediv__(self, other):
        return _R.divide(self, other)

    def __rtruediv__(self, other):
        return _R.divide(other, self)

    def __pow__(self, other):
        if self._value.dtype is _BOOL and type(other) is int and other == 2:
            return Tensor._wrap(self._value ** 2)  # (numpy's b ** 2 is np.square(b): int8)
        return _R.power(self, other)

    def __rpow__(self, other):
        return _R.power(other, self)

    def __floordiv__(self, other):
        return _R.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _R.floor_divide(other, self)

    def __mod__(self, other):
        return _R.remainder(self, other)

    def __rmod__(self, other):
        return _R.remainder(other, self)

    def __matmul__(self, other):
        return _R.matmul(self, other)

    def __rmatmul__(self, other):
        return _R.matmul(other, self)

    def __neg__(self):
        return _R.negative(self)

    def __pos__(self):
        # numpy's +a is a new array (np.positive): here a recorded ``t.copy()``, as copy.copy's
        # (fixr23, review23 LOW: it returned t itself, so ``b = +t; b += 1`` was refused as an
        # alias of t, where numpy leaves t as it was). A Variable's is itself, as before.
        return self.copy() if type(self) is Tensor else self

    def __abs__(self):
        return _R.absolute(self)

    def __lt__(self, other):
        return _R.less(self, other)

    def __le__(self, other):
        return _R.less_equal(self, other)

    def __gt__(self, other):
        return _R.greater(self, other)

    def __ge__(self, other):
        return _R.greater_equal(self, other)

    def __eq__(self, other):
        return _R.equal(self, other)

    def __ne__(self, other):
        return _R.not_equal(self, other)

    def __getitem__(self, key):
        return _R.getitem(self, key)

    # &, |, ^, <<, >>, ~: numpy's operators (bitwise on integers, logical on booleans, a
    # TypeError on floats), computed on the values: integers and booleans carry no gradient.
    def _bitwise(self, ufunc, a, b):
        return Tensor._wrap(np.asarray(ufunc(_plain(a), _plain(b))))

    def __and__(self, other):
        return self._bitwise(np.bitwise_and, self, other)

    def __rand__(self, other):
        return self._bitwise(np.bitwise_and, other, self)

    def __or__(self, other):
        return self._bitwise(np.bitwise_or, self, other)

    def __ror__(self, other):
        return self._bitwise(np.bitwise_or, other, self)

    def __xor__(self, other):
        return self._bitwise(np.bitwise_xor, self, other)

    def __rxor__(self, other):
        return self._bitwise(np.bitwise_xor, other, self)

    def __lshift__(self, other):
        return self._bitwise(np.left_shift, self, other)

    def __rlshift__(self, other):
        return self._bitwise(np.left_shift, other, self)

    def __rshift__(self, other):
        return self._bitwise(np.right_shift, self, other)

    def __rrshift__(self, other):
        return self._bitwise(np.right_shift, other, self)

    def __invert__(self):
        return Tensor._wrap(np.asarray(np.invert(self._value)))

    def __iand__(self, other):
        return self._augmented("&", Tensor.__and__, other)

    def __ior__(self, other):
        return self._augmented("|", Tensor.__or__, other)

    def __ixor__(self, other):
        return self._augmented("^", Tensor.__xor__, other)

    def __ilshift__(self, other):
        return self._augmented("<<", Tensor.__lshift__, other)

    def __irshift__(self, other):
        return self._augmented(">>", Tensor.__rshift__, other)

    def __divmod__(self, other):  # (numpy's divmod record: the remainder is differentiable)
        return np.divmod(self, other)

    def __rdivmod__(self, other):
        return np.divmod(other, self)

    # --- a Variable's assign methods, asked of a Tensor (tfport46 F11) ----------
    def _no_assign(self, method):
        sliced = method == "assign"
        raise AttributeError(
            f"'{type(self).__name__}' object has no attribute {method!r}: a Tensor is immutable, and "
            "only a Variable has assign, assign_add and assign_sub. "
            + ("A slice of a Variable (`v[0]`, `v[1:3]`) is a new Tensor, a copy, so TensorFlow's sliced "
               "assignment `v[0].assign(5.0)` is not supported: assign the whole variable with the slice "
               "replaced, `v.assign(ap.tensor_scatter_nd_update(v, [[0]], [5.0]))` or "
               "`v.assign(ap.where(mask, new_values, v))`."
               if sliced else "For a slice of a Variable: `v.assign(ap.tensor_scatter_nd_add(v, [[0]], "
               f"[{'-' if method == 'assign_sub' else ''}delta]))`."))

    @property
    def assign(self):
        """Not on a Tensor (immutable): raises AttributeError naming ``Variable.assign``'s
        alternatives for a slice, ``v.assign(ap.tensor_scatter_nd_update(v, idx, vals))``."""
        self._no_assign("assign")

    @property
    def assign_add(self):
        """Not on a Tensor: raises AttributeError (see :attr:`assign`)."""
        self._no_assign("assign_add")

    @property
    def assign_sub(self):
        """Not on a Tensor: raises AttributeError (see :attr:`assign`)."""
        self._no_assign("assign_sub")

    # --- numpy-style methods -------------------------------------------------
    @property
    def T(self):
        """Tensor: the transpose (axes reversed), as ``ndarray.T``."""
        return _R.transpose(self)

    def transpose(self, *axes):
        """Permute axes, as ``ndarray.transpose``."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _R.transpose(self, tuple(axes) if axes else None)  # (a tuple: a constant of an autoprop.function trace)

    def reshape(self, *shape, order="C", copy=None):
        """Return the same values with a new shape, as ``ndarray.reshape`` (``order`` 'C',
        'F' or 'A', as numpy)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _R._np_reshape(self, tuple(shape), order=order, copy=copy)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        """Sum over ``axis``, as ``ndarray.sum`` (numpy's argument order; ``dtype`` as
        ``np.sum``)."""
        if dtype is None and out is None and not kw and type(axis) is not list:
            return _R.sum(self, axis=axis, keepdims=keepdims)
        _R.method_out("sum", out)
        return _R._FUNCTIONS[np.sum](self, axis, dtype, out, keepdims, **kw)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        """Mean over ``axis``, as ``ndarray.mean`` (numpy's argument order; ``dtype`` as
        ``np.mean``)."""
        if dtype is None and out is None and not kw and type(axis) is not list:
            return _R.mean(self, axis=axis, keepdims=keepdims)
        _R.method_out("mean", out)
        return _R._FUNCTIONS[np.mean](self, axis, dtype, out, keepdims, **kw)

    def max(self, axis=None, out=None, keepdims=False, **kw):
        """Maximum over ``axis``, as ``ndarray.max`` (numpy's argument order); ties share the
        gradient equally."""
        if out is None and not kw and type(axis) is not list:
            return _R.max(self, axis=axis, keepdims=keepdims)
        _R.method_out("max", out)
        return _R._FUNCTIONS[np.max](self, axis, out=out, keepdims=keepdims, **kw)

    def min(self, axis=None, out=None, keepdims=False, **kw):
        """Minimum over ``axis``, as ``ndarray.min`` (numpy's argument order); ties share the
        gradient equally."""
        if out is None and not kw and type(axis) is not list:
            return _R.min(self, axis=axis, keepdims=keepdims)
        _R.method_out("min", out)
        return _R._FUNCTIONS[np.min](self, axis, out=out, keepdims=keepdims, **kw)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """Cast to ``dtype``; casting to an integer or bool dtype cuts the gradient. ndarray's
        options: ``casting`` checked as numpy's (numpy 2.4's ``'same_value'``: numpy's own check that
        every value survives, its ValueError otherwise); ``copy=False`` with the same dtype returns the
        tensor itself (as numpy returns the array); ``order`` lays the result out in memory as numpy's
        (read by ``ravel(order='K')``); ``subok`` changes nothing here."""
        dtype = np.dtype(dtype)
        if casting == "same_value":  # (numpy 2.4: the cast must keep every value; numpy's check and error)
            self._value.astype(dtype, casting="same_value")
        elif not np.can_cast(self._value.dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {self._value.dtype!r} to {dtype!r} "
                            f"according to the rule {casting!r}")
        if not copy and dtype == self._value.dtype:
            return self
        out = _R.cast(self, dtype=dtype)
        if order != "K" and out is not self:  # numpy's astype lays the result out in ``order`` (tape44 H1)
            _views.layout_as(out, np.empty_like(self._value, order=order))
        return out

    def ravel(self, order="C"):
        """Flatten to one axis, reading in numpy's ``order`` ('C', 'F', 'A', 'K')."""
        return _R.ravel(self, order=order)

    def squeeze(self, axis=None):
        """Remove axes of length one."""
        return _R.squeeze(self, axis=axis)

    def swapaxes(self, a, b):
        """Interchange two axes."""
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return _R.transpose(self, tuple(axes))

    def flatten(self, order="C"):
        """Flatten to one axis in numpy's ``order`` (a recorded reshape; no copy is visible, and
        ``f -= 1`` leaves ``self`` unchanged, as numpy's copy does)."""
        return not_a_view(self, lambda: _R.ravel(self, order=order))

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        """Product over ``axis``, as ``ndarray.prod`` (exact gradient with zeros; ``dtype``
        as ``np.prod``)."""
        _R.method_out("prod", out)
        return _R._FUNCTIONS[np.prod](self, axis, dtype, out, keepdims, **kw)

    def cumsum(self, axis=None, dtype=None, out=None):
        """Cumulative sum, as ``ndarray.cumsum`` (``dtype`` as ``np.cumsum``)."""
        _R.method_out("cumsum", out)
        return _R._FUNCTIONS[np.cumsum](self, axis, dtype, out)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        """Variance, as ``ndarray.var`` (numpy's argument order; ``dtype`` as ``np.var``)."""
        _R.method_out("var", out)
        return _R.var(self, axis, dtype, out, ddof, keepdims, **kw)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        """Standard deviation, as ``ndarray.std`` (numpy's argument order; ``dtype`` as
        ``np.std``)."""
        _R.method_out("std", out)
        return _R.std(self, axis, dtype, out, ddof, keepdims, **kw)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        """Sum along a diagonal, as ``ndarray.trace`` (``np.trace``; ``dtype``/``out``
        refused as there)."""
        _R.method_out("trace", out)
        return _R.trace(self, offset, axis1, axis2, dtype=dtype, out=out)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        """The diagonal's elements, as ``ndarray.diagonal`` (a read-only view there: the
        result refuses in-place operators, as every view of a Tensor)."""
        return np.diagonal(self, offset, axis1, axis2)  # (numpy's dispatch marks the view)

    def clip(self, min=None, max=None, out=None, **kwargs):  # noqa: A002
        """Clip to [min, max], as ``ndarray.clip``; ``out=`` and numpy's other keywords go to
        ``np.clip`` (which refuses ``out=``, naming the rewrite: tester27t L3)."""
        if out is None and not kwargs:
            return _R.clip(self, min, max)
        _R.method_out("clip", out)
        return np.clip(self, min, max, **kwargs)

    def dot(self, other, out=None):
        """``np.dot(self, other)`` (numpy's ``out`` refused: :func:`~autoprop.core.prims.dispatch.method_out`)."""
        _R.method_out("dot", out)
        return _R.dot(self, other)

    def repeat(self, repeats, axis=None):
        """Repeat elements, as ``ndarray.repeat`` (``np.repeat``: the gradient of each copy
        goes back to its element)."""
        return np.repeat(self, repeats, axis=axis)

    def take(self, indices, axis=None, out=None, mode="raise"):
        """Elements at ``indices``, as ``ndarray.take`` (``np.take``)."""
        _R.method_out("take", out)
        return np.take(self, indices, axis=axis, mode=mode)

    def cumprod(self, axis=None, dtype=None, out=None):
        """Cumulative product, as ``ndarray.cumprod`` (``np.cumprod``)."""
        _R.method_out("cumprod", out)
        return np.cumprod(self, axis=axis, dtype=dtype)

    def all(self, *args, **kwargs):
        """Whether every element is true, as ``ndarray.all`` (a bool tensor: no gradient; numpy's ``out`` refused,
        :func:`~autoprop.core.prims.dispatch.method_out`)."""
        _R.method_out("all", kwargs.get("out"), args)
        return np.all(self, *args, **kwargs)

    def any(self, *args, **kwargs):
        """Whether any element is true, as ``ndarray.any`` (a bool tensor: no gradient; numpy's ``out`` refused,
        :func:`~autoprop.core.prims.dispatch.method_out`)."""
        _R.method_out("any", kwargs.get("out"), args)
        return np.any(self, *args, **kwargs)

    def argsort(self, *args, **kwargs):
        """Indices that sort, as ``ndarray.argsort`` (integers: no gradient)."""
        return np.argsort(self, *args, **kwargs)

    def nonzero(self):
        """Indices of the nonzero elements, as ``ndarray.nonzero`` (integers: no gradient)."""
        return np.nonzero(self)

    def conj(self):
        """The complex conjugate, as ``ndarray.conj`` (a real tensor: itself, recorded)."""
        return np.conj(self)

    conjugate = conj

    @property
    def real(self):
        """Tensor: the real part, as ``ndarray.real`` (``np.real``)."""
        return np.real(self)

    @property
    def imag(self):
        """Tensor: the imaginary part, as ``ndarray.imag`` (``np.imag``: zeros for a real
        tensor, no gradient to pass)."""
        return np.imag(self)

    @property
    def mT(self):  # noqa: N802 - numpy's name
        """Tensor: the last two axes swapped, as ``ndarray.mT``."""
        return np.matrix_transpose(self)

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """Refused: ``ndarray.partition`` rearranges in place, and a Tensor never changes.

        Raises
        ------
        TypeError
            Always; it names the recorded spelling, ``t = np.partition(t, kth)``.
        """
        raise TypeError(
            "autoprop Tensors are immutable: t.partition(kth) would rearrange in place, "
            "changing a value that a gradient tape may have saved. Write "
            "t = np.partition(t, kth, axis=-1) (recorded: each element's gradient goes back "
            "to its place).")

    def argmax(self, axis=None, out=None):
        """Index of the maximum (an integer tensor: no gradient; numpy's ``out`` refused)."""
        _R.method_out("argmax", out)
        return _R.argmax(self, axis=axis)

    def argmin(self, axis=None, out=None):
        """Index of the minimum (an integer tensor: no gradient; numpy's ``out`` refused)."""
        _R.method_out("argmin", out)
        return _R.argmin(self, axis=axis)

    def round(self, decimals=0, out=None):
        """Round half to even to ``decimals`` places, as ``ndarray.round`` (no gradient:
        piecewise constant; numpy's ``out`` refused)."""
        _R.method_out("round", out)
        return _R.round(self, decimals=int(decimals))

    def copy(self, order="C"):
        """A new Tensor with the same values, as ``ndarray.copy``: recorded as the identity,
        so the gradient flows through it; ``order`` (default 'C', ndarray.copy's; np.copy's is 'K')
        lays it out in memory as numpy's copy, which ``ravel(order='K')`` reads."""
        return _R.copy(self, order=order)

    def sort(self, axis=-1, kind=None, order=None):
        """Refused: ``ndarray.sort`` sorts in place, and a Tensor never changes.

        Raises
        ------
        TypeError
            Always; it names the recorded spelling, ``t = np.sort(t, axis=...)``.
        """
        raise TypeError(
            "autoprop Tensors are immutable: t.sort() would sort in place, changing a value "
            "that a gradient tape may have saved. Write t = np.sort(t, axis=-1) (recorded: "
            "each element's gradient goes back to its place) or ap.numpy.sort(t)."
        )

    def fill(self, value):
        """Refused: ``ndarray.fill`` overwrites every element in place, and a Tensor never changes.

        Raises
        ------
        TypeError
            Always; it names the recorded spellings.
        """
        raise TypeError(
            "autoprop Tensors are immutable: t.fill(value) would overwrite every element in place. "
            "Write t = np.full_like(t, value) (a constant, no gradient to t) or, for a Tensor value, "
            "t = np.zeros_like(t) + value (recorded in value).")

    def resize(self, *new_shape, refcheck=True):
        """Refused: ``ndarray.resize`` changes the array in place, and a Tensor never changes.

        Raises
        ------
        TypeError
            Always; it names the recorded spellings.
        """
        raise TypeError(
            "autoprop Tensors are immutable: t.resize(shape) would change t in place. Write "
            "t = t.reshape(shape) for the same size, t = np.pad(t.ravel(), (0, k)).reshape(shape) "
            "for a larger one (ndarray.resize fills with zeros) or t = t.ravel()[:n].reshape(shape) "
            "for a smaller one: all recorded.")

    def put(self, indices, values, mode="raise"):
        """Refused: ``ndarray.put`` writes into the array, and a Tensor never changes.

        Raises
        ------
        TypeError
            Always (as numpy.put on a Tensor).
        """
        return np.put(self, indices, values, mode=mode)

    @property
    def flat(self):
        """Refused: ``ndarray.flat`` is a writable iterator over the buffer.

        Raises
        ------
        AttributeError
            Always; it names the recorded spellings (``t.ravel()``, ``t.ravel()[i]``,
            ``iter(t.ravel())``).
        """
        raise AttributeError(
            "autoprop Tensors have no .flat (numpy's writable iterator over the buffer: writes "
            "would change a value a gradient tape may have saved, and reads through it are not "
            "recorded). Use t.ravel() (or t.reshape(-1)) for the flattened tensor, "
            "t.ravel()[i] for one element, and `for v in t.ravel()` to iterate: all recorded."
        )

    def __round__(self, ndigits=None):
        # round(t): the recorded t.round() (a Tensor, as round() of an ndarray), not a
        # Python number that would leave the tape; it passes no gradient either way.
        return self.round(0 if ndigits is None else ndigits)

    # --- numpy dispatch protocols (plain ``np.`` code on Tensors is recorded) --
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs:  # np.tanh(t): straight to its primitive
            prim = _R._UFUNC_PRIMS.get(ufunc)
            if prim is not None and _own_dtypes(inputs):
                return prim(*inputs)
        out = kwargs.get("out")
        if out and isinstance(out[0], np.ndarray) and inputs and out[0] is inputs[0]:  # arr += t: numpy's out=arr
            if any(isinstance(a, Tensor) and (_observe._carrier(a) is not None or
                                              isinstance(a, Variable) and a.trainable) for a in inputs):  # a gradient would be lost, or could be (PyTorch refuses a requires_grad tensor)
                _ndarray_augmented_assignment(ufunc, out[0])  # (raises)
            # a constant (or a non-trainable Variable) no tape tracks: numpy's own in-place op on the values, as
            # `arr[...] = t` (corpus35 F3: `buf[:4] += ap.constant(...)` was refused with no tape at all)
            return getattr(ufunc, method)(*(_plain(a) for a in inputs), **kwargs)
        return _R.dispatch_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _R.dispatch_function(func, args, kwargs)


_F64, _BOOL = np.dtype(np.float64), np.dtype(np.bool_)


def _plain(a):
    return a._value if isinstance(a, Tensor) else a


def _own_dtypes(inputs):
    """True when a ufunc's record gives numpy's result dtype without a look at numpy's type
    resolution: every input a float or complex Tensor, a Python number only beside float64
    ones (float32 with 0.5 stays float32 in numpy); anything else (integers, booleans, arrays,
    numpy scalars) goes through ``dispatch_ufunc``, which follows the ufunc's own resolution."""
    narrow = scalar = False
    for a in inputs:
        if type(a) is Tensor or type(a) is Variable:
            dt = a._value.dtype
            if dt is not _F64:
                if dt.kind not in "fc":
                    return False
                narrow = True
        elif type(a) is float or type(a) is int:
            scalar = True
        else:
            return False
    return not (narrow and scalar)


def _shuffling():
    """True when the line that wrote an item (``__setitem__``'s caller, numpy's shuffle being C)
    calls a shuffle: the message then names what the user wrote."""
    import linecache
    import sys

    frame = sys._getframe(2)
    return "shuffle(" in linecache.getline(frame.f_code.co_filename, frame.f_lineno)


_AUGMENTED = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "true_divide": "/",
              "floor_divide": "//", "power": "**", "remainder": "%", "matmul": "@"}


def _ndarray_augmented_assignment(ufunc, arr):
    """Raise TypeError for ``arr += t`` with ``arr`` a numpy array (numpy calls the ufunc with
    ``out=arr``) and ``t`` carrying gradient on a recording tape or accumulator (PyTorch refuses a
    tensor that requires grad there too), naming the user's variable when a local of the calling line holds ``arr`` (or,
    for ``acc[1:4] += t``, the array ``arr`` is a part of)."""
    import sys  # (local: the import block is shared with other work)

    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_observe._SKIP):
        frame = frame.f_back
    local = list(frame.f_locals.items()) if frame is not None else []
    names = [k for k, v in local if v is arr]
    op = _AUGMENTED.get(ufunc.__name__, f"<{ufunc.__name__}>")
    if names or arr.base is None:
        name = names[0] if names else "arr"
        raise TypeError(
            f"`{name}` is a numpy array ({arr.dtype}, shape {arr.shape}), and `{name} {op}= <Tensor>` "
            f"asks numpy to write the Tensor's values into it in place (numpy.{ufunc.__name__}(..., "
            f"out={name})), which no tape can record. "
            f"Write `{name} = {name} {op} ...` instead: a new Tensor, recorded (numpy.{ufunc.__name__})."
        )
    whole = [k for k, v in local if v is arr.base] or [k for k, v in local if isinstance(v, np.ndarray)
                                                       and v.size > arr.size and np.may_share_memory(v, arr)]
    acc = whole[0] if whole else None
    target = f"`{acc}[...] {op}= <Tensor>`" if acc else f"`<part of a numpy array> {op}= <Tensor>`"
    acc = acc or "acc"
    raise TypeError(
        f"{target} asks numpy to write the Tensor's values into a part ({arr.dtype}, shape "
        f"{arr.shape}) of the numpy array {'`' + acc + '`' if whole else 'being added into'} in place "
        f"(numpy.{ufunc.__name__}(..., out=<that part>)), which no tape can record. Build a new Tensor "
        f"instead: `{acc} = {acc} {op} np.pad(t, [(before, after), ...])` (t placed at those positions, "
        f"zeros around it), or `{acc} = np.concatenate([{acc}[:i], {acc}[i:j] {op} t, {acc}[j:]])`; "
        f"both are recorded."
    )


class Variable(Tensor):
    """A Tensor whose value can be replaced, as ``tf.Variable``.

    Trainable float variables are watched automatically by a tape that reads them
    (``GradientTape(watch_accessed_variables=True)``, the default).

    Parameters
    ----------
    initial_value : array_like
        Copied; Python floats become float64.
    trainable : bool, default True
        Non-trainable variables are not watched automatically.
    name : str, optional
        Shown in ``repr`` and in error messages.
    dtype : numpy dtype, optional

    Raises
    ------
    ValueError
        From ``assign*`` when the new value's shape differs from the variable's.
    TypeError
        From ``assign*`` when the variable's dtype cannot hold the new value's: a float
        value into an integer variable (it would be truncated: ``[1.5, 2.5]`` -> ``[1, 2]``),
        a complex one into a float variable, an integer outside the integer variable's range
        (``300`` into int8 would wrap to ``44``; bounds from ``np.iinfo``, checked on the
        values), as ``tf.Variable`` refuses them. A cast within a
        kind or up to a wider kind (int into a float variable, float64 into float32) is done.

    Examples
    --------
    >>> import autoprop as ap
    >>> v = ap.Variable(3.0, name="v")
    >>> v.assign_sub(1.0).numpy()
    array(2.)
    """

    __slots__ = ("_trainable", "name")

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        super().__init__(initial_value, dtype)
        self._trainable = bool(trainable)
        self.name = name if name is not None else "Variable"

    @property
    def trainable(self):
        """bool: whether a tape watches this Variable on its own and models list it in ``trainable_variables``.
        Setting it to another value counts as a change of Python state (``_STATE``): an ``autoprop.function``
        traced before traces again (its replay read the old value)."""
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        """Set :attr:`trainable` (``bool(value)``); a change counts in ``_STATE``, so traced functions trace again."""
        value = bool(value)
        if value != self._trainable:
            _STATE[0] += 1
        self._trainable = value

    def _check_new(self, value, what, copy=True):
        value = value._value if isinstance(value, Tensor) else value
        came = value.dtype if isinstance(value, np.ndarray) else np.asarray(value).dtype
        ints = came.kind in "iu" and self.dtype.kind in "iu"  # (int64 -> uint8: by the values, below)
        if came != self.dtype and came.kind in "biufc" and not ints \
                and not np.can_cast(came, self.dtype, "same_kind"):
            # (float -> int, complex -> float: numpy would truncate or drop silently; TF refuses)
            lost, cast, kind = (("drop its imaginary part", "np.real(value)", "complex")
                                if came.kind == "c" else
                                ("truncate it", f"np.round(value).astype({self.dtype.name!r})", "float"))
            raise TypeError(
                f"Variable {self.name!r}.{what}: the variable's dtype {self.dtype} cannot hold a "
                f"value of dtype {came} (got {np.array2string(np.asarray(value), threshold=6)}; numpy "
                f"would {lost}), as tf.Variable refuses it. Cast the value yourself ({cast}), or "
                f"make the variable {kind} from the start")
        if ints and came != self.dtype and not np.can_cast(came, self.dtype, "safe"):
            # (int64 -> int8, uint64 -> int64: numpy would wrap 300 to 44; TF refuses a value
            # its dtype cannot hold; a value within the bounds is converted exactly)
            arr, info = np.asarray(value), np.iinfo(self.dtype)
            if arr.size and (int(arr.min()) < info.min or int(arr.max()) > info.max):
                raise TypeError(
                    f"Variable {self.name!r}.{what}: the variable's dtype {self.dtype} cannot hold "
                    f"the value of dtype {came} (got {np.array2string(arr, threshold=6)}; "
                    f"{self.dtype} holds {info.min} to {info.max}; numpy would wrap it around), as "
                    f"tf.Variable refuses it. Clip the value yourself "
                    f"(np.clip(value, {info.min}, {info.max})), or make the variable of a wider "
                    f"dtype ({came}) from the start")
        new = np.array(value, dtype=self.dtype) if copy else np.asarray(value, dtype=self.dtype)
        if new.shape != self.shape:
            raise ValueError(
                f"Variable {self.name!r}.{what}: the value must have the variable's shape "
                f"{self.shape}; got shape {new.shape}"
            )
        return new

    def read_value(self):
        """The variable's current value as a new Tensor, as ``tf.Variable.read_value``.

        Returns
        -------
        Tensor
            Of the variable's shape and dtype: a snapshot (a later ``assign`` does not change
            it), recorded on the tape as the identity (``np.copy``), so the gradient with
            respect to the variable flows through it: d(v.read_value())/dv = 1, as TF's
            ``backprop_test.py::testTapeNoOpOnVariableIsIdentity``. A tape watches a
            trainable variable read this way as it does any read.

        Examples
        --------
        >>> import autoprop as ap
        >>> v = ap.Variable(2.0, name="v")
        >>> with ap.GradientTape() as tape:
        ...     y = v.read_value() * 3.0
        >>> float(tape.gradient(y, v))
        3.0
        >>> r = v.read_value(); _ = v.assign(5.0); float(r)
        2.0
        """
        return _R.copy(self)

    def value(self):
        """The variable's current value as a new Tensor, as ``tf.Variable.value``.

        The same as :meth:`read_value` (in TensorFlow's eager mode both read the variable
        now; they differ only in graph mode, which autoprop does not have).

        Returns
        -------
        Tensor
            A recorded snapshot of the value, of the variable's shape and dtype.
        """
        return self.read_value()

    def assign(self, value):
        """Replace the value (a new array: values saved by a tape are not changed)."""
        if _TRACERS:
            _TRACERS[-1].assign(self, "assign", value)
        self._value = self._check_new(value, "assign")
        return self

    def assign_add(self, delta):
        """``self = self + delta`` (not recorded by tapes, as in TensorFlow)."""
        if _TRACERS:
            _TRACERS[-1].assign(self, "assign_add", delta)
        self._value = np.asarray(self._value + self._check_new(delta, "assign_add", copy=False))
        return self

    def assign_sub(self, delta):
        """``self = self - delta`` (not recorded by tapes, as in TensorFlow)."""
        if _TRACERS:
            _TRACERS[-1].assign(self, "assign_sub", delta)
        v = self._value
        if type(delta) is np.ndarray and delta.ndim and (delta.dtype is v.dtype or delta.dtype == v.dtype) \
                and delta.shape == v.shape:
            self._value = v - delta  # an optimizer's update: nothing to convert or check
            return self
        self._value = np.asarray(v - self._check_new(delta, "assign_sub", copy=False))
        return self

    def _refuse_inplace(self, op, fix):  # RuntimeError, as tf.Variable
        raise RuntimeError(
            f"Variable {self.name!r}: `v {op} value` is not supported (as in TensorFlow): "
            f"use {fix} to change the variable, or `out = v {op[:-1]} value` for a new tensor."
        )

    def __iadd__(self, other):
        self._refuse_inplace("+=", "v.assign_add(value)")

    def __isub__(self, other):
        self._refuse_inplace("-=", "v.assign_sub(value)")

    def __imul__(self, other):
        self._refuse_inplace("*=", "v.assign(v * value)")

    def __itruediv__(self, other):
        self._refuse_inplace("/=", "v.assign(v / value)")

    def __ipow__(self, other):
        self._refuse_inplace("**=", "v.assign(v ** value)")

    def __imatmul__(self, other):
        self._refuse_inplace("@=", "v.assign(v @ value)")

    def __repr__(self):
        body = np.array2string(self._value, separator=", ", prefix="    ")
        return (
            f"<Variable {self.name!r} shape={self.shape} dtype={self.dtype} "
            f"trainable={self.trainable} {body}>"
        )

    def __deepcopy__(self, memo):
        return Variable(self._value, trainable=self.trainable, name=self.name)


_NO_INTERFACE = (
    "autoprop Tensors have no __array_interface__ (numpy's interface to raw memory: an array built on it would "
    "read the value off the tape, with no word). np.asarray(t) converts (it warns while a tape records); "
    "t.numpy().__array_interface__ describes a copy of the values, taken on purpose.")


def is_differentiable_dtype(dtype):
    """True for floating and complex dtypes: the only ones a tape differentiates."""
    return np.dtype(dtype).kind in _FLOAT_KINDS


#: The floors above this module, which it reaches at call time only (it imports neither):
#: ``_R`` is :mod:`autoprop.core.registry`, the one table of every primitive by name, through
#: which the operators and methods above find theirs (``_R.add``); ``_observe`` is
#: :mod:`autoprop.core.observe`, told of a conversion that leaves a recording tape.
#: ``autoprop/core/__init__.py`` sets both once every module has loaded.
_R = _observe = None
