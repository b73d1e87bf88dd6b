"""More numpy names over Tensors (sessions 19, 20): the values-only table, selections, statistics.

* :data:`VALUES_ONLY`: numpy functions and ufuncs whose result is integers, booleans or
  metadata (``np.argwhere``, ``np.digitize``, ``np.isin``, ``np.signbit``, ``np.result_type``,
  ``np.linalg.matrix_rank``, ...): computed on the Tensor's values, as ``np.argsort`` and
  ``np.nonzero`` (``shape.py``); they pass no gradient, as every index.
* Selections, gathers at the positions numpy's own function computes (the VJP scatters ``g``
  back, adding over copies): ``np.unique`` and numpy 2's ``unique_values``/``_counts``/
  ``_inverse``/``_all`` (each unique value is its first occurrence, as ``jax.numpy.unique``:
  the first occurrence gets the gradient, the index outputs are integers), ``np.sort_complex``,
  ``np.trim_zeros``, ``np.choose``, ``np.lib.stride_tricks.sliding_window_view`` (a read-only
  view in numpy, marked as one: ``views.py``), ``np.lib.stride_tricks.as_strided`` (session 35: the
  positions its byte strides name in x's value, as numpy lays it out; never outside x's elements; numpy's
  function never dispatches, so numpy's public name is a wrapper that sends a Tensor here).
* numpy's set functions ``union1d``, ``intersect1d`` (``return_indices``), ``setdiff1d``,
  ``setxor1d``: sorted unique values, each gathered at its first occurrence in
  ``concatenate(ravel(ar1), ravel(ar2))`` (unique's convention: a value both arrays hold gives
  ar1's first copy the gradient; ``intersect1d(return_indices=True)`` gathers at numpy's ind1).
  jax 0.10.2 gives these a zero gradient; torch's gather at those positions is the reference.
* ``np.histogram``/``histogram_bin_edges``/``histogram2d``/``histogramdd``: counts are
  constants (integers for the 1-D unweighted histogram, as numpy); Tensor weights give weighted
  counts recorded in the weights (``bincount`` of each sample's bin, found as numpy does), with
  numpy's own values; the edges ``linspace(min(x), max(x), bins + 1)`` (when numpy computes them
  from the data) move with ``min(x)`` and ``max(x)``, recorded: ``d edge_k = (1 - k/n) d min +
  (k/n) d max``; ``density=True`` divides by the recorded volumes and total, as jax.
* Statistics: ``np.nanvar``, ``np.nancumprod``, ``np.cumulative_prod``,
  ``np.divmod`` (the quotient is piecewise constant, the remainder ``np.remainder``'s record),
  ``np.astype``, ``np.unstack``.
* scipy.special's ``beta``, ``zeta`` (``zeta(x, q)``: ``d/dq = -x zeta(x + 1, q)``, and in ``x``
  ``-sum_k log(k + q) (k + q)^-x`` by the Euler-Maclaurin summation scipy evaluates zeta with, to second
  order (records ``zeta_dx``, ``zeta_dxx``; the third in x refused by name); Riemann's ``zeta(x)`` as
  ``zeta(x, 1)`` for x > 1) and ``betainc``
  (``I_x(a, b)``: differentiable in ``x``, ``d/dx = x^(a-1) (1-x)^(b-1) / B(a, b)``; a gradient
  for ``a`` or ``b``, a hypergeometric series, is refused naming it, as jax refuses it).

Each is the recorded functions numpy's documentation defines it by (jax.numpy differentiates the
same). Derivations: ``lessons/10-gradient-tape.md`` (composites).
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import observe as _observe
from .. import views as _views
from ..registry import defcomposite, defnumpy, defprim
from ..tape import replayed
from ..tensor import Tensor
from ._common import (
    BCAST,
    _axes_tuple,
    _check_kw,
    _ddof,
    _read_values,
    _shape,
    _t,
    _value,
    _values,
    times,
    unbroadcast,
)
from .elementwise import _binary, cast, floor_divide
from .numeric import bincount, cumulative
from .reductions import sum  # noqa: A004
from .shape import (
    _gather,
    _positions,
    broadcast_to,
    concatenate,
    getitem,
    moveaxis,
    ravel,
    reshape,
    stack,
    take,
    take_along_axis,
)
from .special import _elementwise, _i1e_over_x, _polyval, remainder
from .stacking import _axis_arg, _nan_fill, cumprod, nanmean

try:
    import scipy.special as _ss
except ImportError:  # pragma: no cover - scipy comes with scikit-learn
    _ss = None

__all__ = ["VALUES_ONLY", "unique", "union1d", "intersect1d", "setdiff1d", "setxor1d", "sort_complex", "trim_zeros", "histogram", "histogram_bin_edges", "histogram2d", "histogramdd",
           "nanvar", "nancumprod", "cumulative_prod", "divmod_", "choose",
           "sliding_windows", "sliding_window_view", "as_strided", "astype", "unstack", "beta", "zeta", "zeta_dx", "zeta_dxx", "betainc",
           "i0e", "i1e", "exp1", "expi", "rel_entr", "kl_div", "spence"]

_S = builtins.slice

# --- values only: integers, booleans, metadata (no derivative needed) ----------------------
#: numpy functions and ufuncs computed on a Tensor's values (the result passes no gradient: an
#: index, a boolean, a dtype or a rank is piecewise constant), beside ``shape.py``'s argsort,
#: nonzero, argpartition, searchsorted, allclose & co.
VALUES_ONLY = tuple(dict.fromkeys(f for f in (  # (dict: numpy's aliases once, bitwise_not is invert)
    np.argwhere, np.flatnonzero, np.digitize, np.lexsort, np.isin, np.nanargmin, np.nanargmax,
    np.tril_indices_from, np.triu_indices_from, np.diag_indices_from, np.iscomplexobj, np.isrealobj,
    np.iscomplex, np.isreal, np.result_type, np.can_cast, np.common_type,
    np.min_scalar_type, np.array_equiv, np.linalg.matrix_rank, np.ravel_multi_index, np.unravel_index,
    np.array2string, np.array_repr, np.array_str, np.may_share_memory, np.shares_memory,
    np.logical_xor, np.bitwise_and, np.bitwise_or, np.bitwise_xor,
    np.invert, np.left_shift, np.right_shift, np.gcd, np.lcm, getattr(np, "bitwise_count", None),
) if f is not None))


#: the functions of :data:`VALUES_ONLY` that read a tensor's shape or dtype alone (the trace's signature holds
#: them); the others read its values, refused inside ``autoprop.function`` (verify43b F11: ``argwhere(x >
#: 0).shape[0]`` replayed the first call's count)
METADATA_ONLY = frozenset(f for f in (
    np.tril_indices_from, np.triu_indices_from, np.diag_indices_from, np.iscomplexobj, np.isrealobj, np.result_type,
    np.can_cast, np.common_type, np.min_scalar_type, np.may_share_memory, np.shares_memory))


def _ufunc_values(f):
    def run(*args, **kwargs):
        _check_kw(f.__name__, kwargs)
        _read_values(f.__name__, args)
        return f(*[_value(a) for a in args])
    return run


def _function_values(f):
    def run(*args, **kwargs):
        if f not in METADATA_ONLY:
            _read_values(f.__name__, (*args, *kwargs.values()))
        return f(*[_values(a) for a in args], **{k: _values(v) for k, v in kwargs.items()})
    run.__name__ = f.__name__
    return run


for _f in VALUES_ONLY:
    defnumpy("values only", (_f,), _ufunc_values(_f) if isinstance(_f, np.ufunc) else _function_values(_f))


def _empty_like(prototype, dtype=None, order="K", subok=True, shape=None, **kw):
    """``np.empty_like(t)``: a constant (values undefined, as numpy's: filled with zeros here)."""
    _check_kw("empty_like", kw)
    return Tensor._wrap(np.zeros_like(_value(prototype), dtype=dtype, order=order, shape=shape))


defnumpy("constants", (np.empty_like,), _empty_like)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw):
    """``np.full_like``; a Tensor ``fill_value`` is broadcast by a recorded add (its
    gradient is the sum of g over the copies), not copied in by numpy.copyto."""
    if not isinstance(fill_value, Tensor):
        return Tensor._wrap(np.full_like(_value(a), fill_value, dtype, order, subok, shape, **kw))
    _check_kw("full_like", kw)
    base = np.zeros_like(_value(a), dtype=dtype, shape=shape)
    if base.dtype.kind not in "fc":  # an integer/bool result: no gradient, as numpy's cast
        return Tensor._wrap(np.full_like(base, _value(fill_value)))
    return Tensor._wrap(base) + fill_value.astype(base.dtype)


defnumpy("constants", (np.full_like,), _full_like)


# --- selections: gathers at numpy's positions ----------------------------------------------
def _first_occurrences(flat, u):
    """For each value of ``u`` (numpy's unique values, any order) the index of its first
    occurrence in the 1-D ``flat`` (the k-th NaN of ``u``: the k-th NaN of ``flat``)."""
    order = np.argsort(flat, kind="stable")  # equal values: the earliest first; NaNs last
    pos = np.searchsorted(flat[order], u, side="left")
    nan = np.isnan(u) if u.dtype.kind in "fc" else np.zeros(u.shape, bool)
    pos[nan] += np.arange(int(nan.sum()))
    return order[np.minimum(pos, flat.size - 1)]


def _unique_values(a, u, axis):
    a = _t(a)
    if axis is None:
        return take(ravel(a), _first_occurrences(a._value.ravel(), np.asarray(u)), axis=0)
    idx = np.unique(a._value, return_index=True, axis=axis)[1]
    return take(a, idx, axis=axis)


def _unique_like(f):
    def run(ar, *args, **kwargs):
        res = f(_value(ar), *args, **kwargs)
        axis = kwargs.get("axis", args[3] if f is np.unique and len(args) > 3 else None)
        if isinstance(res, np.ndarray):
            return _unique_values(ar, res, axis)
        vals = _unique_values(ar, res[0], axis)
        return type(res)(vals, *res[1:]) if hasattr(res, "_fields") else (vals, *res[1:])
    run.__name__ = f.__name__
    return run


unique = defcomposite(
    "unique", "take(x, the first occurrence of each unique value): the VJP adds g to those "
              "elements (as jax.numpy.unique); indices, inverse and counts are integers (no gradient)",
    numpy=(np.unique,))(_unique_like(np.unique))
for _f in (getattr(np, n, None) for n in ("unique_values", "unique_counts", "unique_inverse", "unique_all")):
    if _f is not None:  # numpy 2's array-API names: the same gather (their derivative: unique's)
        defnumpy("unique", (_f,), _unique_like(_f))


# numpy's set functions: sorted unique values, each the first occurrence of its value in
# concatenate(ravel(ar1), ravel(ar2)) (np.unique's convention above: for a value in both arrays,
# ar1's first copy gets the gradient, ar2's none); isin is values only (VALUES_ONLY)
def _set_values(name, vals, *arrays):
    ts = [_t(a) for a in arrays]
    dtype = np.result_type(*[t.dtype for t in ts])
    flat = concatenate(*[ravel(cast(t, dtype=dtype) if t.dtype != dtype else t) for t in ts], axis=0)
    vals = np.asarray(vals)
    if vals.size == 0:
        return take(flat, np.zeros(0, np.intp), axis=0)
    return take(flat, _first_occurrences(flat._value, vals), axis=0)


@defcomposite("union1d", "take(concatenate(ar1, ar2), the first occurrence of each unique value): "
                         "a value in both gives ar1's first copy the gradient", numpy=(np.union1d,))
def union1d(ar1, ar2):
    """``numpy.union1d`` over Tensors: the sorted unique values of both arrays.

    Parameters
    ----------
    ar1, ar2 : Tensor or array_like (flattened)

    Returns
    -------
    Tensor, 1-D
        Of the two inputs' common dtype.

    Notes
    -----
    numpy's own function finds the values; the result is a recorded ``take`` from
    ``concatenate(ravel(ar1), ravel(ar2))`` at each value's first occurrence there (``np.unique``'s
    convention: a value both arrays hold gives ``ar1``'s first copy the gradient, ``ar2``'s none); the VJP scatters ``g`` back to those elements, 0 to the other copies.
    torch's gather at the same positions is the reference (jax gives these a zero gradient).
    """
    return _set_values("union1d", np.union1d(_value(ar1), _value(ar2)), ar1, ar2)


@defcomposite("intersect1d", "take(ar1, the first occurrence of each common value) (return_indices: "
                             "at numpy's ind1); ar2 gets no gradient, the indices are integers",
              numpy=(np.intersect1d,))
def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """``numpy.intersect1d`` over Tensors: the sorted values both arrays hold.

    Parameters
    ----------
    ar1, ar2 : Tensor or array_like (flattened)
    assume_unique : bool, default False
    return_indices : bool, default False
        Also return numpy's integer indices into ``ar1`` and ``ar2`` (no gradient).

    Returns
    -------
    Tensor, 1-D; or (Tensor, ndarray, ndarray) with ``return_indices``

    Notes
    -----
    A recorded ``take`` from ``ar1`` at each common value's first occurrence (with
    ``return_indices``: at numpy's ``ind1``): those elements get ``g``, ``ar1``'s other copies 0;
    ``ar2`` is not on the path (its gradient is None).
    """
    res = np.intersect1d(_value(ar1), _value(ar2), assume_unique=assume_unique, return_indices=return_indices)
    if not return_indices:
        return _set_values("intersect1d", res, ar1)
    return (take(ravel(_t(ar1)), res[1], axis=0), *res[1:])


@defcomposite("setdiff1d", "take(ar1, the first occurrence of each value not in ar2) (assume_unique: "
                           "ar1's elements not in ar2, in ar1's order); ar2 gets no gradient",
              numpy=(np.setdiff1d,))
def setdiff1d(ar1, ar2, assume_unique=False):
    """``numpy.setdiff1d`` over Tensors: the sorted unique values of ``ar1`` not in ``ar2``.

    Parameters
    ----------
    ar1, ar2 : Tensor or array_like (flattened)
    assume_unique : bool, default False
        True: ``ar1``'s elements not in ``ar2``, in ``ar1``'s order (as numpy).

    Returns
    -------
    Tensor, 1-D

    Notes
    -----
    A recorded ``take`` from ``ar1`` at each kept value's first occurrence: those elements get
    ``g``, the other copies 0; ``ar2`` is not on the path (its gradient is None).
    """
    if assume_unique:
        a = ravel(_t(ar1))
        return take(a, np.flatnonzero(~np.isin(a._value, _value(ar2), assume_unique=True)), axis=0)
    return _set_values("setdiff1d", np.setdiff1d(_value(ar1), _value(ar2)), ar1)


@defcomposite("setxor1d", "take(concatenate(ar1, ar2), the first occurrence of each value in only "
                          "one of them)", numpy=(np.setxor1d,))
def setxor1d(ar1, ar2, assume_unique=False):
    """``numpy.setxor1d`` over Tensors: the sorted unique values in exactly one of the arrays.

    Parameters
    ----------
    ar1, ar2 : Tensor or array_like (flattened)
    assume_unique : bool, default False

    Returns
    -------
    Tensor, 1-D

    Notes
    -----
    numpy's own function finds the values; the result is a recorded ``take`` from
    ``concatenate(ravel(ar1), ravel(ar2))`` at each value's first occurrence there (``np.unique``'s
    convention); the VJP scatters ``g`` back to those elements, 0 to the other copies.
    torch's gather at the same positions is the reference (jax gives these a zero gradient).
    """
    return _set_values("setxor1d", np.setxor1d(_value(ar1), _value(ar2), assume_unique=assume_unique),
                       ar1, ar2)


@defcomposite("sort_complex", "x gathered in numpy's order (real part, then imaginary part), as "
                              "complex: a permutation", numpy=(np.sort_complex,))
def sort_complex(a):
    """``numpy.sort_complex`` over Tensors: sorted by real part, then imaginary part, as complex.

    Parameters
    ----------
    a : Tensor or array_like
        Sorted along the last axis.

    Returns
    -------
    Tensor
        ``a``'s shape, complex (complex64 for int8/int16/uint8/uint16 input, else complex128 or
        ``a``'s complex dtype, as numpy).

    Notes
    -----
    A recorded ``take_along_axis`` at numpy's stable argsort (a permutation: each element gets the
    gradient of its sorted place; ties keep their order), then a cast to complex.
    """
    a = _t(a)
    order = np.argsort(a._value, axis=-1, kind="stable")  # numpy's complex order: real, then imag
    s = take_along_axis(a, order, axis=-1)
    return s if s.dtype.kind == "c" else cast(s, dtype=np.complex64 if s.dtype.char in "bhBH" else np.complex128)


@defcomposite("trim_zeros", "x[first:last] along each trimmed axis, the slice numpy keeps",
              numpy=(np.trim_zeros,))
def trim_zeros(filt, trim="fb", axis=None):
    """``numpy.trim_zeros`` over Tensors: the leading and/or trailing zeros cut off.

    Parameters
    ----------
    filt : Tensor or array_like
    trim : str, default 'fb'
        'f' front, 'b' back.
    axis : int or tuple of int, optional
        numpy 2's: trim along these axes (all by default), where a whole slice is zero.

    Returns
    -------
    Tensor
        A slice of ``filt`` (empty along an axis when all is zero).

    Notes
    -----
    A recorded basic slice at the bounds numpy keeps: the kept elements get ``g``, the trimmed
    zeros 0.
    """
    a = _t(filt)
    v, trim = a._value, trim.lower()
    axes = range(v.ndim) if axis is None else _axes_tuple(axis, v.ndim)
    key = [_S(None)] * v.ndim
    for ax in axes:
        nz = np.flatnonzero(np.any(v != 0, axis=tuple(d for d in range(v.ndim) if d != ax)))
        if nz.size == 0:  # all zeros: numpy keeps nothing
            key[ax] = _S(0, 0)
            continue
        key[ax] = _S(int(nz[0]) if "f" in trim else 0, int(nz[-1]) + 1 if "b" in trim else v.shape[ax])
    return getitem(a, tuple(key))


@defcomposite("choose", "the element of choices[a[i]] at i: a gather from the stacked choices "
                        "(broadcast), numpy's mode for the index", numpy=(np.choose,))
def choose(a, choices, out=None, mode="raise"):
    """``numpy.choose`` over Tensors: at each place, the element of ``choices[a]``.

    Parameters
    ----------
    a : array_like of int (values; no gradient)
    choices : sequence of Tensor or array_like
        Broadcast with ``a`` to one shape; each gets its gradient.
    mode : {'raise', 'wrap', 'clip'}, default 'raise'
        numpy's handling of an index out of range.

    Returns
    -------
    Tensor
        The broadcast shape; the choices' common dtype.

    Raises
    ------
    TypeError
        For ``out=``.
    ValueError
        For an index out of range with ``mode='raise'`` (numpy's "invalid entry in choice array").

    Notes
    -----
    A recorded gather from the stacked, broadcast choices at the positions numpy's own choose picks:
    the chosen element gets ``g``; a choice broadcast from a smaller shape sums it.
    """
    _check_kw("choose", {"out": out})
    idx = np.asarray(_value(a))
    ts = [_t(c) for c in choices]
    shape = np.broadcast_shapes(idx.shape, *[t.shape for t in ts])
    dtype = np.result_type(*[t.dtype for t in ts])
    stacked = stack([broadcast_to(cast(t, dtype=dtype) if t.dtype != dtype else t, shape=shape)
                     for t in ts], axis=0)
    pos = _positions(stacked)  # (n, *shape): numpy's choose on the positions picks the same places
    return _gather(stacked, np.choose(np.broadcast_to(idx, shape), list(pos), mode=mode))


_WINDOWS = np.lib.stride_tricks.sliding_window_view


@defcomposite("sliding_window_view", "every window of x (a gather: the VJP adds g over the "
                                     "windows that share an element); a read-only view in numpy",
              numpy=(np.lib.stride_tricks.sliding_window_view,))
def sliding_windows(x, window_shape, axis=None, *, subok=False, writeable=False):
    """``numpy.lib.stride_tricks.sliding_window_view`` over Tensors: every window of ``x``.

    Parameters
    ----------
    x : Tensor or array_like
    window_shape : int or tuple of int
    axis : int or tuple of int, optional
    subok : bool
        Changes nothing for Tensors.
    writeable : bool, default False
        True is refused.

    Returns
    -------
    Tensor
        numpy's shape (each window axis shortened by ``window - 1``, then ``window_shape``); a
        view in numpy, marked as one here (it refuses ``+=``); its value is numpy's own read-only view.

    Raises
    ------
    TypeError
        For ``writeable=True`` (a Tensor is never written).

    Notes
    -----
    A recorded gather at numpy's own windows of the element positions: the VJP adds ``g`` over the
    windows that share an element (``[1, 2, 3]``, windows of 2: the middle element gets two).
    """
    if writeable:
        raise TypeError("autoprop cannot record numpy's sliding_window_view with writeable=True: a "
                        "Tensor is never written; drop writeable=True (the windows are recorded)")
    x = _t(x)
    out = _gather(x, _WINDOWS(_positions(x), window_shape, axis))  # (numpy's windows of the positions)
    return _views.numpy_layout(out, _WINDOWS(x._value, window_shape, axis))  # (numpy's layout: review36 F1)


sliding_window_view = sliding_windows  # (the registry's name of the composite)


# --- np.lib.stride_tricks.as_strided: the flat positions of x its view reads, gathered ---------
def _strided_positions(x, shape, strides):
    """The C-order positions in ``x`` (a Tensor) that ``numpy.lib.stride_tricks.as_strided(x's value,
    shape, strides)`` reads, one per element of the view (an intp array of ``shape``), after every
    check (a view reaching outside x's elements is refused, never read)."""
    v, call = x._value, f"as_strided(x, shape={shape}, strides={strides})"
    shape = v.shape if shape is None else tuple(int(n) for n in np.atleast_1d(shape))
    strides = v.strides if strides is None else tuple(int(s) for s in np.atleast_1d(strides))
    about = f"x: shape {v.shape}, {v.dtype} ({v.itemsize} bytes each), strides {v.strides}"
    if len(shape) != len(strides) or any(n < 0 for n in shape):
        raise ValueError(f"autoprop {call}: shape {shape} and strides {strides} must have one entry per axis "
                         f"and sizes >= 0 ({about})")
    if any(s % v.itemsize for s in strides):
        raise ValueError(f"autoprop {call}: each stride must be a multiple of x's itemsize, {v.itemsize} bytes "
                         f"for {v.dtype} ({about}); numpy would read elements cut in two. Take them from x.strides")
    off = np.zeros(shape, np.intp)  # each element's byte offset from x's first element, as numpy reads
    for i, s in zip(np.indices(shape, sparse=True), strides):
        off = off + i * s
    if v.flags.c_contiguous:  # (most Tensors: element k sits at byte k * itemsize)
        hit, pos = (off >= 0) & (off < v.nbytes), off // v.itemsize
    else:  # x's own elements' byte offsets (its layout, as numpy shows it), looked up
        mine = np.zeros(v.shape, np.intp)
        for i, s in zip(np.indices(v.shape, sparse=True), v.strides):
            mine = mine + i * s
        order = np.argsort(mine, axis=None, kind="stable")
        sorted_ = mine.ravel()[order]
        if sorted_.size > 1 and np.any(sorted_[1:] == sorted_[:-1]):
            raise ValueError(f"autoprop {call}: elements of x share memory ({about}: overlapping windows, "
                             f"as sliding_window_view and as_strided make, or a zero stride, as np.broadcast_to "
                             f"gives), so a read cannot name the element whose gradient it is; "
                             f"pass x + 0.0 (recorded, in memory of its own; x.copy() keeps the layout)")
        j = np.minimum(np.searchsorted(sorted_, off), max(sorted_.size - 1, 0))
        hit, pos = (sorted_[j] == off if sorted_.size else np.zeros(shape, bool)), order[j]
    if not hit.all():
        where = tuple(int(k) for k in np.argwhere(~hit)[0])
        raise ValueError(
            f"autoprop {call}: the view reaches memory outside x's elements ({about}, {v.nbytes} bytes): "
            f"its element {where} reads byte offset {int(off[where])}, where numpy would read memory that is "
            f"not x's. Make the last window end inside x (for windows of size k with step s on an axis of "
            f"length n: (n - k) // s + 1 windows){'; negative strides read before x' if min(strides, default=0) < 0 else ''}")
    return pos


_NP_AS_STRIDED = np.lib.stride_tricks.as_strided


@defcomposite("as_strided", "a gather at the flat positions of x the view reads: the VJP adds g into x's "
                            "positions (windows that overlap add), the JVP is the same view of the tangent")
# (no numpy=: numpy's as_strided never dispatches; autoprop.numpy.lib.stride_tricks' name calls it)
def as_strided(x, shape=None, strides=None, subok=False, writeable=None):
    """``numpy.lib.stride_tricks.as_strided`` over Tensors: a view of ``x`` with the given shape and strides.

    Parameters
    ----------
    x : Tensor or array_like
    shape : sequence of int, optional
        The view's shape; default ``x.shape``.
    strides : sequence of int, optional
        Bytes between neighbours along each axis of the view, read against ``x``'s value laid out
        as numpy shows it (``x.strides``, ``x.itemsize``): numpy's layout of the same expression
        (C order for most Tensors; a transpose's, a flip's, a diagonal's or a window view's own
        strides: :func:`autoprop.core.views.numpy_layout`). Default ``x.strides``.
    subok : bool
        Changes nothing for Tensors.
    writeable : bool, optional
        ``True`` given explicitly is refused (numpy's default, not given, is accepted: the view is
        marked as one, so ``+=`` on it is refused).

    Returns
    -------
    Tensor
        ``shape``, ``x``'s dtype: numpy's values, recorded as a gather; its value is numpy's own
        read-only view of ``x``'s value (its strides numpy's).

    Raises
    ------
    ValueError
        Strides that are not multiples of ``x.itemsize``; a view reaching outside ``x``'s elements
        (numpy reads memory that is not ``x``'s there; a negative stride from ``x``'s first element);
        ``x``'s elements sharing memory (a zero stride, overlapping windows: no read names one
        element); shape and strides of different lengths.
    TypeError
        ``writeable=True``: a Tensor is never written.

    Notes
    -----
    Each element of the view reads one element of ``x``: the view is ``ravel(x)[pos]`` with ``pos``
    the positions numpy's strides name, so the VJP adds ``g`` into ``x`` at ``pos`` (overlapping
    windows read an element more than once: its gradient is the sum, as ``torch.as_strided``'s).
    Source: numpy's ``as_strided`` documentation; ``lessons/20-conv2d.md`` (im2col).
    """
    if writeable:
        raise TypeError("autoprop cannot record np.lib.stride_tricks.as_strided with writeable=True: a Tensor "
                        "is never written (no in-place on Tensors); drop writeable=True (the view is recorded)")
    x = _t(x)
    out = _gather(x, _strided_positions(x, shape, strides))
    _views.numpy_layout(out, _NP_AS_STRIDED(x._value, shape, strides, writeable=False))  # (checked: inside x)
    _views.mark_view(out, x, "np.lib.stride_tricks.as_strided")  # (numpy's result is a view: += refused)
    return out


def numpy_as_strided(x, shape=None, strides=None, subok=False, writeable=None):
    """``autoprop.numpy.lib.stride_tricks.as_strided``: the recorded :func:`as_strided` for a Tensor, numpy's
    own function (its default ``writeable=True``) otherwise. numpy's own name is left as numpy's: its
    ``as_strided`` never dispatches, and autoprop does not replace numpy's functions."""
    if isinstance(x, Tensor):
        return as_strided(x, shape, strides, subok, writeable)
    return _NP_AS_STRIDED(x, shape, strides, subok, True if writeable is None else writeable)


# --- histograms: integer counts, edges that move with min(x) and max(x) ----------------------
def _edges(a, bins, range_):
    """numpy's edges, recorded in ``min(a)`` and ``max(a)`` when numpy takes them from the data."""
    v = a._value
    plain = None if range_ is None else tuple(_value(r) for r in range_)
    e = np.histogram_bin_edges(v, bins=_value(bins), range=plain)
    ends = range_ is not None and np.ndim(_value(bins)) == 0 and any(isinstance(r, Tensor) for r in range_)
    if (range_ is not None and not ends) or np.ndim(_value(bins)) == 1 or v.size == 0:
        return Tensor._wrap(e) if not isinstance(bins, Tensor) else _t(bins)
    lo, hi = (np.min(a), np.max(a)) if range_ is None else (_t(r) for r in range_)  # recorded
    w = np.linspace(0.0, 1.0, e.size).astype(e.dtype)  # d e_k = (1 - k/n) d lo + (k/n) d hi
    return Tensor._wrap(e) + (lo - lo._value) * (1.0 - w) + (hi - hi._value) * w


@defcomposite("histogram_bin_edges", "linspace(min(x), max(x), bins + 1) when numpy takes the "
                                     "range from the data (d e_k = (1 - k/n) d min + (k/n) d max); "
                                     "given edges: constants; a given range: recorded in its Tensor "
                                     "ends the same way", numpy=(np.histogram_bin_edges,))
def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - numpy's name
    """``numpy.histogram_bin_edges`` over Tensors: numpy's bin edges, recorded in the data's range.

    Parameters
    ----------
    a : Tensor or array_like
    bins : int, str or array_like
        Given edges (an array) are returned as they are (a Tensor of them stays one).
    range : (float, float), optional
        Its Tensor ends are recorded as the data's min and max would be.
    weights : array_like, optional
        Not used (numpy's bin estimators do not use it either).

    Returns
    -------
    Tensor, 1-D, numpy's edges (its values, bit for bit)

    Notes
    -----
    When numpy takes the range from the data the edges are ``linspace(min(a), max(a), n + 1)``,
    recorded: ``d edge_k = (1 - k/n) d min + (k/n) d max``, so the smallest and largest elements
    get the gradient (split evenly at ties, the min/max rule), the others 0.
    """
    return _edges(_t(a), bins, range)


def _numpy_valued(value, recorded):
    """numpy's own ``value`` (bit for bit) carrying ``recorded``'s derivative: ``value + (r - r)``
    (numpy sums weighted counts in its own order; the recorded sum may round otherwise)."""
    delta = recorded - recorded._value
    return Tensor._wrap(value) + (delta if delta.dtype == value.dtype else cast(delta, dtype=value.dtype))


def _counts(cols, edges, weights):
    """numpy.histogramdd's weighted counts, recorded in the weights: each sample's bin found as
    numpy finds it (searchsorted on the edges, the last edge in the last bin, outliers dropped),
    then ``bincount(bin, weights)``: d counts[k] / d w_i = 1 where sample i falls in bin k."""
    nbin = [e.size + 1 for e in edges]
    where = []
    for c, e in zip(cols, edges):
        k = np.searchsorted(e, c, side="right")
        k[c == e[-1]] -= 1
        where.append(k)
    flat = np.ravel_multi_index(where, nbin) if cols else np.zeros(0, np.intp)
    h = reshape(bincount(flat, weights=ravel(_t(weights)), minlength=int(np.prod(nbin))), shape=nbin)
    return getitem(h, (_S(1, -1),) * len(nbin))


def _dd_histogram(cols, bins, range_, density, weights, res, np_edges):
    """Counts and recorded edges of a D-dimensional histogram (``cols``: D 1-D Tensors; ``res``
    and ``np_edges``: numpy's own counts and edges, whose values the results carry)."""
    edges = [_numpy_valued(e, _edges(c, b, r)) for c, b, r, e in zip(cols, bins, range_, np_edges)]
    if isinstance(weights, Tensor):
        counts = _counts([c._value for c in cols], np_edges, weights)
        if not density:
            return _numpy_valued(res, counts), edges
    elif not density:  # counts: a constant (integers in 1-D unweighted, as numpy; else numpy's floats)
        return (Tensor._wrap(res) if res.dtype.kind == "f" else res), edges
    else:
        w = None if weights is None else np.ravel(_value(weights))  # (np.histogram: a's shape)
        counts = Tensor._wrap(np.histogramdd(np.stack([c._value for c in cols], -1), bins=np_edges,
                                             weights=w)[0])
    total = sum(counts)
    for i, e in enumerate(edges):  # counts / the bin's volume / sum(counts), as numpy
        shape = [1] * len(edges)
        shape[i] = -1
        counts = counts / reshape(e[1:] - e[:-1], shape=tuple(shape))
    return _numpy_valued(res, counts / total), edges


def _per_axis(x, d, what):
    if x is None or np.ndim(_value(x)) == 0 and not isinstance(x, (list, tuple)):
        return [x] * d
    if len(x) != d:
        raise ValueError(f"numpy.histogramdd: {what} must have one entry per dimension ({d}); got {len(x)}")
    return list(x)


@defcomposite("histogramdd", "counts: constants without weights; with weights, bincount(bin of each "
                             "sample, weights) (d counts/d w = 1 in the sample's bin); edges: "
                             "histogram_bin_edges per axis (moving with min and max); density=True: "
                             "counts / (sum(counts) * the bin's volume)", numpy=(np.histogramdd,))
def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002 - numpy's name
    """``numpy.histogramdd`` over Tensors: the D-dimensional histogram and its edges.

    Parameters
    ----------
    sample : Tensor or array_like, shape (N, D); or a sequence of D 1-D arrays
    bins, range, density
        As numpy (``bins`` and ``range`` one entry per dimension).
    weights : Tensor or array_like, shape (N,), optional

    Returns
    -------
    H : Tensor, shape of the bins
        Counts: numpy's own values. Without weights and density a constant; with Tensor weights
        ``d H[k] / d w_i = 1`` where sample i falls in bin k; ``density=True`` divides by the
        recorded bin volumes and total.
    edges : list of Tensor
        One per dimension, as :func:`histogram_bin_edges` (recorded in each column's min and max
        when numpy takes the range from the data).

    Raises
    ------
    ValueError
        If ``range`` (or a list of ``bins``) does not have one entry per dimension.
    """
    if isinstance(sample, (list, tuple)):
        cols = [ravel(_t(c)) for c in sample]
    else:
        s = _t(sample)
        s = reshape(s, shape=(-1, 1)) if s.ndim == 1 else s
        cols = [getitem(s, (_S(None), i)) for i in builtins.range(s.shape[1])]
    res, np_edges = np.histogramdd(np.stack([c._value for c in cols], -1) if cols else _value(sample),
                                   bins=_values(bins), range=_values(range), density=density,
                                   weights=_value(weights))
    d = len(cols)
    bins_ = list(bins) if hasattr(bins, "__len__") and not isinstance(bins, str) else [bins] * d  # (numpy's rule)
    return _dd_histogram(cols, bins_, _per_axis(range, d, "range"), density, weights, res, np_edges)


@defcomposite("histogram2d", "histogramdd((x, y), ...): counts constants without weights, "
                             "differentiable in the weights; edges moving with min and max",
              numpy=(np.histogram2d,))
def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002 - numpy's name
    """``numpy.histogram2d`` over Tensors: :func:`histogramdd` of ``(x, y)``.

    Parameters
    ----------
    x, y : Tensor or array_like, 1-D, of one length
    bins, range, density
        As numpy (one array of edges is used for both axes).
    weights : Tensor or array_like, optional

    Returns
    -------
    H : Tensor, shape (nx, ny)
        float64 counts: a constant without weights and density, else recorded (see
        :func:`histogramdd`).
    xedges, yedges : Tensor
        Recorded in each coordinate's min and max when numpy takes the range from the data.
    """
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):  # numpy's rule: one array of edges for both axes
        bins = [bins, bins]
    h, edges = histogramdd([x, y], bins=bins, range=range, density=density, weights=weights)
    return h, edges[0], edges[1]


@defcomposite("histogram", "counts: integers (no gradient); with weights, bincount(bin of each "
                           "sample, weights) (d counts/d w = 1 in the sample's bin); edges: "
                           "histogram_bin_edges; density=True: counts / (sum(counts) diff(edges))",
              numpy=(np.histogram,))
def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002 - numpy's name
    """``numpy.histogram`` over Tensors: the counts and the bin edges.

    Parameters
    ----------
    a : Tensor or array_like (flattened)
    bins : int, str or array_like, default 10
    range : (float, float), optional
    density : bool, optional
    weights : Tensor or array_like, ``a``'s shape, optional

    Returns
    -------
    hist : ndarray of int, or Tensor
        Without weights or density: numpy's integer counts (no gradient, as numpy's are integers).
        With Tensor weights: ``d hist[k] / d w_i = 1`` where ``a_i`` falls in bin k. With
        ``density=True``: ``counts / (sum(counts) diff(edges))``, recorded in the edges too.
    bin_edges : Tensor, 1-D
        As :func:`histogram_bin_edges` (recorded in ``min(a)`` and ``max(a)`` when numpy takes the
        range from the data).

    Notes
    -----
    Each sample's bin is found as numpy finds it (searchsorted, the last edge in the last bin,
    outliers dropped), then a recorded ``bincount``; the values are numpy's own.
    """
    a = _t(a)
    counts, np_edges = np.histogram(a._value, bins=_value(bins), range=_values(range), density=density,
                                    weights=_value(weights))
    h, (edges,) = _dd_histogram([ravel(a)], [bins], [range], density, weights, counts, [np_edges])
    return h, edges


# --- statistics --------------------------------------------------------------------------------
@defcomposite("nanvar", "sum((x - nanmean(x))^2, NaNs as 0) / (count - ddof): NaNs get no gradient",
              numpy=(np.nanvar,))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    """``numpy.nanvar`` over Tensors: the variance of the elements that are not NaN.

    Parameters
    ----------
    a : Tensor or array_like
    axis : int, tuple of int or None
    ddof : int, default 0
        (``correction=``, numpy 2's name, too; both given is ValueError.)
    keepdims : bool, default False

    Returns
    -------
    Tensor
        The reduced shape, real (``|d|**2`` for complex input, as numpy).

    Raises
    ------
    TypeError
        For ``out=``, ``dtype=`` and other options without a recorded derivative.
    ValueError
        For both ``ddof`` and ``correction``.

    Notes
    -----
    ``sum((x - nanmean(x))**2, NaNs as 0) / (count - ddof)`` in recorded primitives, so the
    gradient is the composition's, ``2 (x - mean) / (count - ddof)``; the NaNs get 0.
    """
    ddof = _ddof(ddof, kw)
    _check_kw("nanvar", dict(kw, out=out, dtype=dtype))
    a, axis = _t(a), _axis_arg(axis)
    d = _nan_fill(a - nanmean(a, axis=axis, keepdims=True), 0.0)
    sq = d * d if d.dtype.kind != "c" else np.real(d * np.conj(d))  # (numpy's |d|^2 for complex)

    def den(v):  # count - ddof from the values: each autoprop.function replay's own (tape.replayed; issue 15)
        count = np.sum(~np.isnan(v), axis=axis, keepdims=bool(keepdims))
        return _observe.own(np.asarray(np.maximum(count - ddof, 0)).astype(sq.dtype))
    return sum(sq, axis=axis, keepdims=bool(keepdims)) / (replayed(den, a) if type(ddof) in (int, float) else den(a._value))


@defcomposite("nancumprod", "cumprod(where(isnan(x), 1, x)): NaNs get no gradient", numpy=(np.nancumprod,))
def nancumprod(a, axis=None, dtype=None, out=None):
    """``numpy.nancumprod`` over Tensors: the running product with NaNs counted as 1.

    Parameters
    ----------
    a : Tensor or array_like
    axis : int, optional
        None: of the flattened array.

    Returns
    -------
    Tensor

    Raises
    ------
    TypeError
        For ``out=`` or ``dtype=``.

    Notes
    -----
    ``cumprod(where(isnan(x), 1, x))`` in recorded primitives (exact with zeros, as
    :func:`~autoprop.core.prims.stacking.cumprod`): the NaNs get gradient 0.
    """
    _check_kw("nancumprod", dict(out=out, dtype=dtype))
    return cumprod(_nan_fill(a, 1.0), axis=axis)


@defcomposite("cumulative_prod", "cumprod along axis, with a leading 1 for include_initial=True "
                                 "(numpy 2's name)",
              numpy=tuple(f for f in [getattr(np, "cumulative_prod", None)] if f))
def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """``numpy.cumulative_prod`` (numpy 2) over Tensors: ``cumprod`` along ``axis``.

    Parameters
    ----------
    x : Tensor or array_like
    axis : int, optional
        Required beyond 1-D, as numpy.
    include_initial : bool, default False
        A leading slice of ones along ``axis`` (a constant: no gradient).

    Returns
    -------
    Tensor
        ``x``'s shape, one longer along ``axis`` with ``include_initial``.

    Raises
    ------
    ValueError
        For ``axis=None`` on an array of 2 or more dimensions.
    TypeError
        For ``out=`` or ``dtype=``.

    Notes
    -----
    The recorded ``cumprod`` composite (a product per prefix, exact with zeros) and a
    ``concatenate``: the gradient is the composition's.
    """
    _check_kw("cumulative_prod", dict(out=out, dtype=dtype))
    return cumulative("cumulative_prod", x, axis, include_initial, cumprod, 1)


def divmod_(x1, x2, /, out=None, **kw):
    """``np.divmod(a, b)`` = ``(a // b, a % b)``: the quotient is piecewise constant (no gradient),
    the remainder is ``np.remainder``'s record (``d/da = 1``, ``d/db = -floor(a / b)``)."""
    _check_kw("divmod", dict(kw, out=out))
    return floor_divide(x1, x2), remainder(x1, x2)


defnumpy("divmod", (np.divmod,), divmod_)


def astype(x, dtype, /, *, copy=True, device=None):
    """``np.astype(t, dtype)``: ``t.astype(dtype)`` (recorded as the cast)."""
    return _t(x).astype(dtype, copy=copy)


defnumpy("astype", (np.astype,), astype)


@defcomposite("unstack", "x[i] along axis for every i (views)", numpy=tuple(f for f in [getattr(np, "unstack", None)] if f))
def unstack(x, /, *, axis=0):
    """``numpy.unstack`` (numpy 2) over Tensors: the slices of ``x`` along ``axis``.

    Parameters
    ----------
    x : Tensor or array_like
    axis : int, default 0

    Returns
    -------
    tuple of Tensor
        ``x.shape[axis]`` views, each without ``axis``.

    Notes
    -----
    Recorded ``moveaxis`` and basic indexing: each slice's gradient goes back to its place.
    """
    x = moveaxis(_t(x), axis, 0)
    return tuple(getitem(x, (i,)) for i in builtins.range(x.shape[0]))


# --- scipy.special: beta, zeta -------------------------------------------------------------------
def _refuse_riemann_zeta_x(x):
    if isinstance(x, Tensor) and _observe._carrier(x) is not None and not np.all(np.asarray(x._value) > 1):
        raise TypeError(
            "autoprop: scipy.special.zeta(x) (Riemann's) is recorded in x for x > 1 (as zeta(x, 1): "
            "d/dx = -sum_k log(k) k^-x); this x has an entry at or below 1, where scipy continues it "
            "analytically and its derivative is not recorded. Pass x as a number or numpy array there.")


def _refuse_betainc_ab(a, b):
    for name, v in (("a", a), ("b", b)):
        if isinstance(v, Tensor) and _observe._carrier(v) is not None:
            raise TypeError(
                f"autoprop: scipy.special.betainc(a, b, x) is recorded in x only (d/dx = x^(a-1) "
                f"(1-x)^(b-1) / B(a, b)); its derivative in the shape parameter {name} (a "
                f"hypergeometric series, which jax and TensorFlow do not differentiate either) is "
                f"not, and {name} carries gradient here (a watched Tensor). Pass {name} as a number "
                f"or numpy array ({name}.numpy(), or ap.stop_gradient({name})).")


def _dbetainc_dx(a, b, x):
    # x^(a-1) (1-x)^(b-1) / B(a, b): in logs inside (0, 1); at x = 0 and 1 exactly the powers themselves, whose
    # derivative there the log form's exp(log 0) = 0 times 1/x turned into 0 (review24a: I'' at 0 was 0 for a = 2,
    # b = 2, where I = 3x^2 - 2x^3 has I''(0) = 6, I''(1) = -6)
    # (where a < 1 at 0, or b < 1 at 1, the log form's infinite slope has the right sign: the powers' would be inf - inf)
    xv = np.asarray(_value(x))
    end = ((xv == 0) & (np.asarray(_value(a)) >= 1)) | ((xv == 1) & (np.asarray(_value(b)) >= 1))
    if not np.any(end):
        return np.exp(_ss.xlogy(a - 1.0, x) + _ss.xlog1py(b - 1.0, -x) - _ss.betaln(a, b))
    xs = np.where(end, 0.5, x)
    return np.where(end, np.power(x, a - 1.0) * np.power(1.0 - x, b - 1.0) * np.exp(-_ss.betaln(a, b)),
                    np.exp(_ss.xlogy(a - 1.0, xs) + _ss.xlog1py(b - 1.0, -xs) - _ss.betaln(a, b)))


def _dzeta_dq(x, q):
    return -x * _ss.zeta(x + 1.0, q)


# d^k/dx^k zeta(x, q), k = 1, 2, by the Euler-Maclaurin summation scipy's own zeta evaluates (Cephes zeta.c;
# DLMF 2.10.1 applied to sum_k (k + q)^-x): zeta = sum_(k<N) (k + q)^-x + a^(1-x) / (x - 1) + a^-x / 2
# + sum_(j=1..12) B_2j / (2j)! x (x + 1) ... (x + 2j - 2) a^(1 - x - 2j), a = q + N >= max(10, x), each term
# differentiated in x in closed form (the j-th: times (D1 - log a), then ((D1 - log a)^2 - D2), D_m = sum_i
# (x + i)^-m); x > 1, q > 0 (elsewhere nan: scipy's real zeta has no x-derivative we record there).
_EM = tuple(float(ss_b) for ss_b in (_ss.bernoulli(24)[2::2] / _ss.factorial(np.arange(2, 25, 2))
                                      if _ss is not None else ()))


def zeta_x_derivative(x, q, k=1):
    """``d^k zeta(x, q) / dx^k`` (k = 1 or 2) on arrays: float64, the broadcast shape; NaN where x <= 1 or q <= 0."""
    x, q = (np.array(v, dtype=np.float64) for v in np.broadcast_arrays(_value(x), _value(q)))
    ok = (x > 1) & (q > 0) & np.isfinite(x) & np.isfinite(q)
    xs, qs = np.where(ok, x, 2.0), np.where(ok, q, 1.0)
    n = np.clip(np.ceil(np.maximum(10.0, xs) - qs), 9, 200)
    d1, d2 = np.zeros_like(xs), np.zeros_like(xs)
    for i in range(int(n.max())):
        lg = np.log(qs + i)
        term = np.where(i < n, np.exp(-xs * lg), 0.0)
        d1 -= lg * term
        d2 += lg * lg * term
    lg, u = np.log(qs + n), xs - 1.0
    t = np.exp(-u * lg) / u  # a^(1-x) / (x - 1)
    d1 -= t * (lg + 1.0 / u)
    d2 += t * ((lg + 1.0 / u) ** 2 + 1.0 / u ** 2)
    h = np.exp(-xs * lg) / 2.0
    d1 -= lg * h
    d2 += lg * lg * h
    p, s1, s2 = np.ones_like(xs), np.zeros_like(xs), np.zeros_like(xs)
    for j, c in enumerate(_EM, 1):
        for i in (range(1) if j == 1 else range(2 * j - 3, 2 * j - 1)):  # the factors x + i of x (x+1)...(x+2j-2)
            p, s1, s2 = p * (xs + i), s1 + 1.0 / (xs + i), s2 + 1.0 / (xs + i) ** 2
        term = c * p * np.exp(-(xs + 2 * j - 1) * lg)
        d1 += term * (s1 - lg)
        d2 += term * ((s1 - lg) ** 2 - s2)
    out = np.where(ok, d1 if k == 1 else d2, np.nan)
    return out[()] if out.ndim == 0 else out


def _refuse_third_in_x(*_):
    raise TypeError(
        "autoprop: the third derivative of scipy.special.zeta(x, q) in x is not recorded; the first and second "
        "are (zeta_dx, zeta_dxx), and all their derivatives in q. The tape that asked for it differentiated the "
        "second derivative in x once more: ask that tape for q only (tape.gradient(d2, q)), or take the third by "
        "central differences of the second.")


if _ss is not None:
    beta = _binary(
        "beta", _ss.beta,
        lambda ans, a, b: ans * (_ss.digamma(a) - _ss.digamma(a + b)),
        lambda ans, a, b: ans * (_ss.digamma(b) - _ss.digamma(a + b)),
        "d B(a, b)/da = B(a, b) (digamma(a) - digamma(a + b)) (DLMF 5.12.1), and alike in b",
        "da = g B (digamma(a) - digamma(a + b)), db = g B (digamma(b) - digamma(a + b))",
        kinks="poles where a or b is 0, -1, -2, ...", source="special.beta({0}, {1})")

    def _np_riemann_zeta(x, out=None):
        _check_kw("zeta", {"out": out})
        _refuse_riemann_zeta_x(x)
        if isinstance(x, Tensor) and _observe._carrier(x) is not None:  # (scipy's Riemann value: zeta(x, 1)'s
            y = zeta(x, _observe.own(np.ones((), x.dtype)))  # differs by up to 5 ulp, added as a constant)
            return y + _observe.own(np.asarray(_ss.zeta(x._value) - y._value))
        return Tensor._wrap(_ss.zeta(_value(x)))

    def _np_betainc(a, b, x, out=None):
        _check_kw("betainc", {"out": out})
        _refuse_betainc_ab(a, b)
        return betainc(_value(a), _value(b), x)

    betainc = defprim(
        "betainc", _ss.betainc, None, None,
        lambda g, ans, a, b, x: unbroadcast(times(g, _dbetainc_dx(a, b, x)), _shape(x)),
        jvp=(None, None, lambda t, ans, a, b, x: times(t, _dbetainc_dx(a, b, x))),
        jacobian="d I_x(a, b)/dx = x^(a-1) (1-x)^(b-1) / B(a, b) (DLMF 8.17.2); a, b: refused "
                 "when they carry gradient (as jax), by scipy.special.betainc's adaptor",
        vjp="dx = g x^(a-1) (1-x)^(b-1) / B(a, b)", shapes=BCAST,
        kinks="x = 0 with a < 1 and x = 1 with b < 1: an infinite derivative",
        source="special.betainc({0}, {1}, {2})")
    defnumpy("scipy.special.betainc", (_ss.betainc,), _np_betainc)

    def _zeta_x_record(k, dx_vjp, dx_jvp):
        """zeta_dx (k = 1) or zeta_dxx (k = 2): d^k zeta / dx^k, and its q-derivative d/dx^k of -x zeta(x + 1, q)."""
        if k == 1:  # d/dq zeta_x = -zeta(x + 1, q) - x zeta_x(x + 1, q)
            def dq(x, q):
                return -zeta(x + 1.0, q) - x * zeta_dx(x + 1.0, q)
        else:  # d/dq zeta_xx = -2 zeta_x(x + 1, q) - x zeta_xx(x + 1, q)
            def dq(x, q):
                return -2.0 * zeta_dx(x + 1.0, q) - x * zeta_dxx(x + 1.0, q)
        return defprim(
            "zeta_dx" if k == 1 else "zeta_dxx", lambda x, q: zeta_x_derivative(x, q, k), dx_vjp,
            lambda g, ans, x, q: unbroadcast(times(g, dq(x, q)), _shape(q)),
            jvp=(dx_jvp, lambda t, ans, x, q: times(t, dq(x, q))),
            jacobian=("d/dx: zeta_dxx; " if k == 1 else "d/dx: refused (the third in x); ")
            + "d/dq = %s of -x zeta(x + 1, q) (DLMF 25.11.17): -%s" % (
                ("d/dx", "zeta(x + 1, q) - x zeta_dx(x + 1, q)") if k == 1 else
                ("d2/dx2", "2 zeta_dx(x + 1, q) - x zeta_dxx(x + 1, q)")),
            vjp="dx = g * d^%d zeta/dx^%d, dq = g * d/dq of it" % (k + 1, k + 1), shapes=BCAST,
            kinks="x <= 1 or q <= 0: nan (Euler-Maclaurin for x > 1, q > 0)",
            source="from autoprop.core.prims.extra import zeta_x_derivative\n"
                   "{out} = zeta_x_derivative({0}, {1}, %d)" % k)

    zeta_dxx = _zeta_x_record(2, _refuse_third_in_x, _refuse_third_in_x)
    zeta_dx = _zeta_x_record(
        1, lambda g, ans, x, q: unbroadcast(times(g, zeta_dxx(x, q)), _shape(x)),
        lambda t, ans, x, q: times(t, zeta_dxx(x, q)))

    def _dzeta_dx(x, q):
        return zeta_dx(x, q) if isinstance(x, Tensor) or isinstance(q, Tensor) else zeta_x_derivative(x, q, 1)

    zeta = defprim(
        "zeta", _ss._ufuncs._zeta,
        lambda g, ans, x, q: unbroadcast(times(g, _dzeta_dx(x, q)), _shape(x)),
        lambda g, ans, x, q: unbroadcast(times(g, _dzeta_dq(x, q)), _shape(q)),
        jvp=(lambda t, ans, x, q: times(t, _dzeta_dx(x, q)), lambda t, ans, x, q: times(t, _dzeta_dq(x, q))),
        jacobian="d zeta(x, q)/dq = -x zeta(x + 1, q) (DLMF 25.11.17); d/dx = -sum_k log(k + q) (k + q)^-x, "
                 "by Euler-Maclaurin (the record zeta_dx; zeta_x_derivative)",
        vjp="dx = g * zeta_dx(x, q), dq = -g x zeta(x + 1, q)", shapes=BCAST,
        kinks="x = 1: a pole; q <= 0: poles (as scipy); d/dx where x <= 1 or q <= 0: nan; the third "
              "derivative in x: refused",
        numpy=(_ss._ufuncs._zeta,), source="special.zeta({0}, {1})")
    # scipy.special.zeta(x, q) calls the ufunc _zeta, recorded in both arguments; zeta(x) (Riemann's,
    # _riemann_zeta) is recorded as zeta(x, 1) where x carries gradient (x > 1; refused by name below 1)
    defnumpy("scipy.special.zeta", (_ss._ufuncs._riemann_zeta,), _np_riemann_zeta)

# -log1p(u) / u = -sum_k (-u)^k / (k + 1): spence's derivative log(z) / (1 - z) at z = 1 + u, a polynomial
# for |u| < 1/4 (28 terms: the next below 1e-18), where the quotient differentiated cancels
_SPENCE_SERIES = np.array([-((-1.0) ** k) / (k + 1) for k in range(28)])


def _dspence(ans, z):
    """d spence(z)/dz = log(z) / (1 - z), recorded when z is a Tensor.

    scipy's ``spence(z) = integral from 1 to z of log(t) / (1 - t) dt`` (DLMF 25.12.1 with z -> 1 - z:
    scipy's docstring), so its derivative is the integrand (the fundamental theorem of calculus). At
    z = 1 the quotient is 0 / 0 and, differentiated again, cancels: for ``|z - 1| < 1/4`` it is
    ``-log1p(u) / u = -sum_k (-u)^k / (k + 1)``, ``u = z - 1`` (the Mercator series of log1p, DLMF
    4.6.1), 28 terms (the next below 1e-18 relative), -1 at z = 1 and every derivative right there.
    ``-inf`` at z = 0 (log z), NaN for z < 0 (as scipy's spence)."""
    u = z - 1.0
    near = np.abs(np.asarray(_value(u))) < 0.25
    p = _polyval(u, _SPENCE_SERIES)
    if np.all(near):
        return p
    return np.where(near, p, np.log(z) / (1.0 - np.where(near, 0.5, z)))


def _hankel_coefficients(terms):
    """The coefficients d_1 .. d_terms of ``sqrt(2 pi x) (i0e(x) - i1e(x)) ~ sum_k d_k x^-k`` (x -> +inf).

    Hankel's expansion (DLMF 10.40.1): ``e^(-x) I_nu(x) ~ (2 pi x)^(-1/2) sum_k (-1)^k a_k(nu) x^-k``,
    ``a_k(nu) = prod_{j=1..k} (4 nu^2 - (2j - 1)^2) / (k! 8^k)`` (DLMF 10.17.1), so
    ``d_k = (-1)^k (a_k(0) - a_k(1))`` (d_0 = 0: the leading terms cancel exactly here, not in
    floating point; d_1 = 1/2, d_2 = 3/16, all positive). Exact rationals, rounded once."""
    from fractions import Fraction
    from math import factorial

    def a(k, nu):
        p = Fraction(1)
        for j in range(1, k + 1):
            p *= 4 * nu * nu - (2 * j - 1) ** 2
        return p / (factorial(k) * 8 ** k)
    return np.array([float((-1) ** k * (a(k, 0) - a(k, 1))) for k in range(1, terms + 1)])


# i0e(x) - i1e(x) at |x| >= _HANKEL_FROM: 36 terms of Hankel's expansion. Against mpmath (60 digits), with rounding:
# 1.2e-16 relative at 20 (30 terms: 7e-16; at 15 the series cannot pass 6e-12), the first derivatives of i0e and
# i1e within 4.7e-16 from |x| = 20 on, the second 3.6e-15. review28a L1: the switch was at 25, where scipy's
# i0e - i1e cancels below it: i0e'' 2.5e-13 off at 20, i1e' 1.1e-14.
_HANKEL_FROM = 20.0
_HANKEL_D = _hankel_coefficients(36)


def _i0e_minus_i1e(ax):
    """``i0e(ax) - i1e(ax)`` for ``ax >= _HANKEL_FROM`` (``ax = |x|``), recorded when ``ax`` is a Tensor.

    The difference of the two scaled Bessel functions, each ``~ (2 pi ax)^(-1/2)``, is ``~ (2 pi)^(-1/2)
    ax^(-3/2) / 2``: formed from scipy's i0e and i1e it loses ``log10(2 ax)`` digits, and its derivative
    ``log10(ax^2)`` (review27a: i1e'' at 1e8 had the wrong sign, i1e' at 1e16 was 0). Hankel's expansion
    (:func:`_hankel_coefficients`) gives it as ``(2 pi)^(-1/2) u^(3/2) sum_k d_(k+1) u^k``, ``u = 1 / ax``:
    positive terms, no cancellation, and every derivative order is the polynomial's, recorded."""
    u = 1.0 / ax
    return (1.0 / np.sqrt(2.0 * np.pi)) * (u * np.sqrt(u)) * _polyval(u, _HANKEL_D)


def _d_scaled_bessel(ans, x, order):
    """d/dx of ``i0e`` (``order`` 0) or ``i1e`` (1) at ``x``, ``ans`` the function's value there.

    ``i0e' = i1e(x) - sign(x) i0e(x)`` (DLMF 10.29.3 times e^(-|x|)) and ``i1e' = i0e(x) - i1e(x) / x -
    sign(x) i1e(x)`` (DLMF 10.29.2; ``i1e(x) / x`` a series near 0), both through the difference
    ``i0e(|x|) - i1e(|x|)`` (i0e even, i1e odd): ``i0e' = -sign(x) (i0e - i1e)(|x|)``,
    ``i1e' = (i0e - i1e)(|x|) - i1e(x) / x``. For ``|x| >= 20`` that difference is Hankel's expansion
    (:func:`_i0e_minus_i1e`), below it scipy's two functions. Recorded on Tensors: every order."""
    big = np.abs(np.asarray(_value(x))) >= _HANKEL_FROM
    if not big.all():
        direct = _ss.i1e(x) - np.sign(x) * ans if order == 0 else _ss.i0e(x) - _i1e_over_x(x) - np.sign(x) * ans
        if not big.any():
            return direct
    xb = np.where(big, x, _HANKEL_FROM) if not big.all() else x  # (the branch not taken: a harmless |x|)
    diff = _i0e_minus_i1e(np.abs(xb))
    far = -np.sign(xb) * diff if order == 0 else diff - ans / xb
    return far if big.all() else np.where(big, far, direct)


if _ss is not None:
    i0e = _elementwise("i0e", _ss.i0e, lambda ans, x: _d_scaled_bessel(ans, x, 0),
                       "i1e(x) - sign(x) i0e(x) (DLMF 10.29.3 times e^(-|x|); for |x| >= 20 -sign(x) times "
                       "Hankel's expansion of i0e(|x|) - i1e(|x|), DLMF 10.40.1: no cancellation)",
                       kinks="x = 0: e^(-|x|) has a kink (sign(0) = 0 taken: 0, as jax)", source="special.i0e({x})")
    i1e = _elementwise("i1e", _ss.i1e, lambda ans, x: _d_scaled_bessel(ans, x, 1),
                       "i0e(x) - i1e(x) / x - sign(x) i1e(x) (DLMF 10.29.2; i1e(x) / x = e^(-|x|) times a Taylor "
                       "series for |x| < 1; for |x| >= 20 i0e(|x|) - i1e(|x|) is Hankel's expansion, DLMF 10.40.1)", kinks="x = 0: 1/2 (the kink of e^(-|x|) "
                       "meets i1(0) = 0: differentiable)", source="special.i1e({x})")
    exp1 = _elementwise("exp1", _ss.exp1, lambda ans, x: -np.exp(-x) / x, "-e^(-x) / x (DLMF 6.2.1)",
                        kinks="x = 0: -inf; x < 0: nan (scipy's real exp1)", source="special.exp1({x})")
    expi = _elementwise("expi", _ss.expi, lambda ans, x: np.exp(x) / x, "e^x / x (DLMF 6.2.5)",
                        kinks="x = 0: a pole", source="special.expi({x})")
    spence = _elementwise("spence", _ss.spence, _dspence, "log(z) / (1 - z) (scipy's spence(z) = integral from 1 "
                          "to z of log(t) / (1 - t) dt, DLMF 25.12.1; -1 at z = 1, a Taylor series there)",
                          kinks="z = 0: -inf (log z); z < 0: nan (as scipy)", source="special.spence({x})")
    rel_entr = _binary(
        "rel_entr", _ss.rel_entr, lambda ans, x, y: np.log(x / y) + 1.0, lambda ans, x, y: -x / y,
        "d (x log(x/y))/dx = log(x/y) + 1, d/dy = -x / y (scipy.special.rel_entr's definition, x log(x/y) for "
        "x, y > 0, by the product rule and d log(x/y)/dy = -1/y)", "dx = g (log(x/y) + 1), dy = -g x / y",
        kinks="x = 0: d/dx -inf (one-sided), d/dy 0; x < 0 or y <= 0 (scipy's inf): nan or inf",
        source="special.rel_entr({0}, {1})")
    kl_div = _binary(
        "kl_div", _ss.kl_div, lambda ans, x, y: np.log(x / y), lambda ans, x, y: 1.0 - x / y,
        "d (x log(x/y) - x + y)/dx = log(x/y), d/dy = 1 - x / y (scipy.special.kl_div's definition, "
        "x log(x/y) - x + y for x, y > 0: rel_entr's derivatives plus those of -x + y)",
        "dx = g log(x/y), dy = g (1 - x / y)",
        kinks="x = 0: d/dx -inf (one-sided), d/dy 1; x < 0 or y <= 0 (scipy's inf): nan or inf",
        source="special.kl_div({0}, {1})")
else:  # pragma: no cover
    beta = zeta = betainc = i0e = i1e = exp1 = expi = spence = rel_entr = kl_div = None
