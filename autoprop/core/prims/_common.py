"""Helpers used inside VJPs and JVPs of every family (they work on ndarrays and Tensors)."""

from __future__ import annotations

import math
import operator
from cmath import isfinite as _isfinite  # real and complex scalars

import numpy as np

from manualprop._extremes import squares_finite  # (a kernel: numpy only)

from .. import registry as _registry
from ..tape import NotSaved
from ..tensor import _TRACERS, Tensor

#: the ``shapes`` text of every broadcasting binary primitive
BCAST = "broadcasting: each gradient is summed back to its input's shape"
SAME = "same as x"
#: the ``shapes`` text of a reduction with numpy's ``axis`` and ``keepdims``
REDUCED = "x (...); reduced axes removed unless keepdims"


def _shape(x):
    if type(x) is np.ndarray or type(x) is NotSaved:  # the usual cases, first
        return x.shape
    return x.shape if hasattr(x, "shape") else ()


def unbroadcast_like(g, x):
    """``unbroadcast(g, _shape(x))`` in one Python frame: the gradient of a binary
    operation's input ``x`` (an ndarray, a :class:`~autoprop.core.tape.NotSaved` stand-in, a
    Tensor or a scalar). The usual case, ``g`` of ``x``'s shape, returns ``g`` itself without
    the two calls; anything else is :func:`unbroadcast`."""
    xs = x.shape if type(x) is np.ndarray or type(x) is NotSaved else _shape(x)
    if type(g) is np.ndarray and g.shape == xs:
        return g
    return unbroadcast(g, xs)


def unbroadcast(g, shape):
    """Sum ``g`` over the axes that broadcasting added or stretched, back to ``shape``.

    This is the VJP of broadcasting: an input of shape (4,) added to a (3, 4) array
    was used 3 times, so its gradient is the sum of the 3 rows (``lessons/00-chain-rule.md``).

    Parameters
    ----------
    g : ndarray or Tensor
        A gradient of the broadcast result's shape.
    shape : tuple of int
        The input's shape (broadcastable to ``g``'s).

    Returns
    -------
    ndarray or Tensor of ``shape``.
    """
    gs = g.shape if type(g) is np.ndarray else _shape(g)
    if gs == shape:
        return g
    extra = len(gs) - len(shape)
    if extra > 0:  # (np.add.reduce: ndarray.sum without its Python wrapper, the same sum)
        g = np.add.reduce(g, axis=tuple(range(extra))) if type(g) is np.ndarray else \
            g.sum(axis=tuple(range(extra)))
        if g.shape == shape:  # a bias: (N, out) summed back to (out,)
            return g
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and _shape(g)[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def _keep_reduced(g, shape, axis, keepdims):
    """Reshape a reduction's gradient so it broadcasts against the input again."""
    if keepdims or not shape:  # (a 0-d input: numpy reduces it over axis 0 or -1 to itself)
        return g
    if axis is None:
        return g.reshape((1,) * len(shape))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = {a % len(shape) for a in axes}
    return g.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))


def _count(shape, axis):
    """How many entries a reduction over ``axis`` of an array of ``shape`` combines (1 for a
    0-d array, whose axis 0 or -1 numpy's reductions accept)."""
    if axis is None or not shape:
        return math.prod(shape)  # exact Python ints (np.prod costs more than a small VJP)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return math.prod(shape[a] for a in axes)


def _mT(x):
    return x.T if x.ndim == 2 else np.swapaxes(x, -1, -2)


def _t(x):
    """A Tensor of ``x``; a list or tuple that holds Tensors is stacked on the tape
    (``autoprop.numpy.array``), so ``np.mean([x, y])`` stays differentiable."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (list, tuple)) and _holds_tensor(x):
        return _registry.array(x)  # (stacking's, a family above this module: found by name)
    return Tensor(x)


def _holds_tensor(x):
    return any(isinstance(a, Tensor) or (isinstance(a, (list, tuple)) and _holds_tensor(a)) for a in x)


def einsum_operands(operands):
    """numpy.einsum's arguments as (subscripts, operands): the interleaved form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` becomes ``('ab,bc->ac', [a, b])``."""
    if operands and isinstance(operands[0], str):
        return operands[0], list(operands[1:])
    n = len(operands) // 2
    ops, subs = list(operands[0:2 * n:2]), list(operands[1:2 * n:2])
    out = operands[-1] if len(operands) % 2 else None

    def letters(sub):
        return "".join("..." if s is Ellipsis else
                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[int(s)] for s in sub)
    spec = ",".join(letters(s) for s in subs)
    return spec + ("" if out is None else "->" + letters(out)), ops


def einsum_diagonals(spec, ops, gather):
    """Operands with a repeated index inside one subscript ('ii', 'iij') replaced by
    their diagonals (``gather(op, positions)``), so each subscript has distinct letters."""
    ins, arrow, out = spec.partition("->")
    subs = ins.split(",")
    def repeated(sub):  # (a letter twice in one subscript; '...' is no letter: 'i...i' repeats i)
        letters = sub.replace("...", "")
        return len(set(letters)) != len(letters)

    if not arrow and any(repeated(s) for s in subs):
        letters = ins.replace(",", "").replace(".", "")  # numpy's implicit output, made explicit
        arrow, out = "->", ("..." if "..." in ins else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    for k, (sub, op) in enumerate(zip(subs, ops)):
        if not repeated(sub):
            continue
        uniq = "".join(dict.fromkeys(sub.replace("...", "."))).replace(".", "...")  # 'i...i' -> 'i...'
        pos = np.einsum(sub + "->" + uniq, np.arange(int(np.prod(_shape(op)))).reshape(_shape(op)))
        subs[k], ops[k] = uniq, gather(op, pos)
    return ",".join(subs) + arrow + out, ops


def _axis_index(axis, ndim):
    """numpy's normalisation of one axis: ``-ndim <= axis < ndim`` as ``0..ndim-1``, else numpy's
    AxisError (the composites that compute an axis themselves, never calling numpy's function
    on the values, check here: ``np.cumprod(x, axis=x.ndim)`` raises as numpy)."""
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(a, ndim)
    return a % ndim


def _axes_tuple(axis, ndim):
    """One axis or several, each normalised by :func:`_axis_index`; a repeated one is numpy's ValueError."""
    axes = tuple(_axis_index(a, ndim) for a in ((axis,) if np.ndim(axis) == 0 else axis))
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    return axes


def _qualified(name):
    """``numpy.<name>``, or ``name`` itself when it names its module (``scipy.special.erf``,
    ``numpy.logaddexp.reduce``: review26a saw 'numpy.numpy.logaddexp.reduce') or its class
    (``Tensor.sum``, a method)."""
    return name if name.startswith(("scipy.", "numpy.", "Tensor.")) else f"numpy.{name}"


def _no_out(name, kwargs, at=None, given=False):
    """Refuse numpy's ``out``: writing into an existing array is an in-place update no tape records.

    Parameters
    ----------
    name : str
        The numpy function's name (``"exp"``, ``"numpy.sum"``, ``"scipy.special.erf"``), or a
        Tensor method's (``"Tensor.sum"``: the rewrite is then ``y = t.sum(...)``).
    kwargs : dict
        The call's keywords; ``kwargs["out"]`` not None is refused.
    at : int, optional
        ``out``'s place among the function's positional parameters, counted from 1 (a ufunc's
        ``nin + 1``: ``np.exp(x, x)``'s out is its 2nd argument, ``np.maximum(x, y, x)``'s its
        3rd; ``np.sum``'s 4th). Named in the message, as numpy takes ``out`` there too.
    given : bool
        True when the call gave ``out`` at that place (``autoprop.numpy``'s names and numpy's
        ``__array_function__`` see the positional arguments); False when it may have come by
        either spelling (numpy's ``__array_ufunc__`` hands a positional out as ``out=``).

    Raises
    ------
    TypeError
        When ``out`` is given; the message names how it was given (corpus37 F5: a refusal of
        ``np.maximum(x, x * a, x)`` spoke of an ``out=`` the user never wrote).
    """
    if kwargs.get("out") is None:
        return
    q = _qualified(name)
    call = f"t.{q[len('Tensor.'):]}" if q.startswith("Tensor.") else q
    why = ("writing into an existing array is an in-place update, which the tape cannot undo in the "
           "backward pass.")
    if given:
        raise TypeError(f"autoprop cannot record {q}(...) with its {_ordinal(at)} positional argument, "
                        f"which is numpy's out: {why} Drop that argument and use the returned tensor: "
                        f"y = {call}(...).")
    if at is not None:
        raise TypeError(f"autoprop cannot record {q}(..., out=...) (numpy's out, given as out= or as its "
                        f"{_ordinal(at)} positional argument): {why} Drop it and use the returned "
                        f"tensor: y = {call}(...).")
    raise TypeError(f"autoprop cannot record {q}(..., out=...): {why} Drop out= and use the returned "
                    f"tensor: y = {call}(...).")


def _ordinal(n):
    """``1st``, ``2nd``, ``3rd``, ``4th``, ..., ``11th``, ``21st``."""
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _ddof(ddof, kw):
    """numpy 2's ``correction=`` (the array API's name of ``ddof``), popped from ``kw``: the
    ``ddof`` to use; both given is numpy's ValueError."""
    correction = kw.pop("correction", None)
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def _cast_inputs(xs, dtype, casting="same_kind"):
    """numpy's ``dtype=`` of a function that casts its inputs first (``np.concatenate``, a ufunc):
    each Tensor's recorded cast (a float one keeps its gradient); numpy's TypeError for a cast
    that ``casting`` forbids."""
    if dtype is None:
        return xs
    dtype = np.dtype(dtype)
    for x in xs:
        if isinstance(x, Tensor) and not np.can_cast(x.dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {x.dtype!r} to {dtype!r} according to the "
                            f"rule {casting!r}")
    return [x.astype(dtype) if isinstance(x, Tensor) and x.dtype != dtype else x for x in xs]


def _check_kw(name, kwargs, allowed=()):
    _no_out(name, kwargs)
    bad = [k for k, v in kwargs.items() if k not in allowed and k != "out" and v is not None
           and not (k in ("order", "casting") and v in ("C", "K", "A", "same_kind"))
           and not (k == "where" and v is True) and not (k == "subok" and v is True)]
    if bad:
        if (np_name := _TORCH_KW.get(bad[0])) is not None:  # x.sum(1, keepdim=True): PyTorch's spelling
            raise TypeError(
                f"autoprop cannot record {_qualified(name)}(..., {bad[0]}=...): {bad[0]} is PyTorch's name; "
                f"did you mean {np_name}={kwargs[bad[0]]!r} (numpy's name)?")
        raise TypeError(
            f"autoprop cannot record {_qualified(name)}(..., {bad[0]}=...): that option has no "
            f"registered derivative. Call {_qualified(name)} without it (or compute on values "
            "with ap.numpy_function, which gives no gradient)."
        )


#: PyTorch's keyword names of numpy's options (``t.sum(1, keepdim=True)``, ``t.mean(dim=0)``), for the error that
#: names numpy's (tester30k L1: "call numpy.sum without it" before)
_TORCH_KW = {"keepdim": "keepdims", "dim": "axis"}


def _value(x):
    return x._value if isinstance(x, Tensor) else x


def _values(a):
    """A Tensor's values, in lists and tuples too (``np.lexsort((a, b))``); others as they are."""
    if isinstance(a, Tensor):
        return a._value
    return type(a)(_values(v) for v in a) if type(a) in (list, tuple) else a


def _carries_tensor(value):
    """True when a value is a Tensor or a list/tuple holding one (a keyword recorded, not cut)."""
    return isinstance(value, Tensor) or (isinstance(value, (list, tuple)) and _holds_tensor(value))


def _read_values(name, args):
    """Under autoprop.function, refuse ``np.<name>`` computing a plain value (an index, a count, a bool) from a
    traced tensor among ``args``: the first call's value would be frozen into the replays."""
    if _TRACERS:
        _TRACERS[-1].value_only(name, args)


def _value_only(fn):
    """numpy functions that return plain values (bools, indices): computed on the values."""
    def run(*args, **kwargs):
        _read_values(fn.__name__, (*args, *kwargs.values()))
        return fn(*[_value(a) for a in args], **{k: _value(v) for k, v in kwargs.items()})
    run.__name__ = fn.__name__
    return run


def _all_finite(r):
    """True when ``r`` (ndarray, Tensor or scalar) has no inf or nan: one pass (a dot or a
    sum, ``squares_finite``; an overflow only sends a finite ``r`` down the slow path, which
    is exact too)."""
    v = r._value if isinstance(r, Tensor) else r
    if type(v) is np.ndarray and v.dtype.kind in "fc":  # the usual case: one reduction
        return squares_finite(v)
    s = v.sum() if hasattr(v, "sum") else v
    return s.dtype.kind not in "fc" or _isfinite(s) if hasattr(s, "dtype") else _isfinite(s)


def zero_rule(g, r):
    """The 0·inf rule: where the upstream gradient (or tangent) ``g`` is exactly 0, the
    contribution ``r`` computed from it is 0, even where the local derivative is infinite
    or undefined (``0 * inf``, ``0 / 0``). Applied by every elementwise primitive's VJP
    and JVP before summing back to an input's shape; costs one finiteness check when
    ``r`` is finite (the usual case). TensorFlow applies it to ``sqrt`` and ``rsqrt``;
    autoprop to every elementwise primitive (``lessons/12-when-to-write-backward.md``).

    Parameters
    ----------
    g : ndarray, Tensor or scalar
        The upstream gradient or tangent.
    r : ndarray, Tensor or scalar
        ``g`` times the local derivative, broadcast to the output's shape.

    Returns
    -------
    ``r``, with 0 wherever ``g == 0``.
    """
    if _all_finite(r):
        return r
    return np.where(g == 0, np.zeros((), np.result_type(_value(r))), r)


def times(g, factor):
    """``g * factor`` under the 0·inf rule (:func:`zero_rule`)."""
    r = g * factor
    if type(r) is np.ndarray and r.dtype.kind in "fc":  # the usual case: _all_finite, inlined
        if squares_finite(r):  # (r . r, one BLAS dot: a third of np.add.reduce's cost)
            return r
    elif _all_finite(r):
        return r
    return np.where(g == 0, np.zeros((), np.result_type(_value(r))), r)


def times_into(g, d, finite):
    """``g * d`` under the 0·inf rule, written into ``d``: :func:`times` for a VJP that made
    ``d`` itself (a fresh array nobody else holds) and knows from a pass it made anyway
    whether every entry of ``d`` is finite (``finite``; tanh's VJP has the minimum of ``d``).

    When ``d`` is finite the rule has nothing to zero (``0 * finite`` is 0), so the product
    needs no look at all: ``g * d`` goes into ``d``, without the finiteness sum of
    :func:`times` or a second array. Any other case (``d`` with a NaN or an inf, ``g`` a
    Tensor or of another shape or dtype) is :func:`times` itself. The values are those of
    :func:`times`; the one difference is the sign of a zero: where ``g`` is ``-0.0`` and
    some other entry of ``g`` is NaN or inf, :func:`times` rewrote the product ``-0.0`` as
    ``+0.0`` (it zeroes every ``g == 0`` entry once anything is non-finite), here it stays
    ``-0.0``, as it does in :func:`times` when everything is finite.

    Parameters
    ----------
    g : ndarray, Tensor or scalar
        The upstream gradient or tangent.
    d : ndarray
        The local derivative, fresh (overwritten with the product).
    finite : bool
        True only if no entry of ``d`` is NaN or inf.

    Returns
    -------
    ndarray or Tensor: ``g * d`` (``d`` itself on the fast path).
    """
    if finite and type(g) is np.ndarray and g.shape == d.shape and g.dtype is d.dtype:
        return np.multiply(g, d, out=d)
    return times(g, d)
