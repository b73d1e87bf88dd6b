"""numpy's stacking, splitting, rearranging and statistics functions over Tensors, each
built from recorded primitives (``registry.defcomposite``): the derivative is the chain
rule through them, so reverse mode, forward mode and higher orders come for free and
no new VJP can be wrong.

Functions that only move or copy elements (repeat, tile, roll, rot90, fliplr, diagonal,
diag, pad's 'edge'/'reflect'/..., ...) run numpy's own function on the array of element
*positions* and gather the Tensor at those positions (:func:`_moved`, with shape's
``_gather``, which np.pad's index modes use too): the values are
numpy's exactly, and the gather's VJP scatters ``g`` back, adding where an element was
copied. The rest are written with the primitives numpy's documentation defines them by
(vstack = concatenate of atleast_2d, cov = centred product / (N - ddof), ...).
Derivations: ``lessons/10-gradient-tape.md`` (composites), ``lessons/00-chain-rule.md``.
"""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import views as _views
from ..observe import OwnFloat, own, static
from ..registry import defcomposite
from ..tape import _python_ints, guard_traced, refuse_traced, replayed, tracing
from ..tensor import Tensor
from ._common import _axes_tuple, _axis_index, _check_kw, _t, _value
from .elementwise import clip, multiply, sqrt, subtract, where
from .reductions import max, mean, min, prod, sum  # noqa: A004
from .shape import (  # (_gather, _positions: the gathers at element positions, pad_by_index's too)
    _OPTION_NOT_STATIC,
    _gather,
    _positions,
    _shape_only,
    broadcast_to,
    concatenate,
    getitem,
    moveaxis,
    ravel,
    reshape,
    split,
    stack,
    take_along_axis,
    transpose,
)
from .special import conj, imag, real

__all__ = [
    "array", "asarray", "vstack", "hstack", "dstack", "column_stack", "row_stack", "append",
    "atleast_1d", "atleast_2d", "atleast_3d", "repeat", "tile", "roll", "rot90", "fliplr",
    "flipud", "rollaxis", "diagonal", "diag", "diagflat", "trace", "array_split", "hsplit",
    "vsplit", "dsplit", "sort", "partition", "diff", "gradient", "cross", "kron", "inner",
    "vdot", "convolve", "correlate", "linspace", "select", "cumprod", "median", "average", "ptp", "nansum", "nanmean",
    "nanmax", "nanmin", "cov", "corrcoef", "meshgrid", "broadcast_arrays", "r_", "c_",
]

_S = builtins.slice


# --- gathers: numpy's own function on element positions (shape's ``_gather``) ----------------
def _moved(name, numpy_fn, formula, zero=False, methods=()):
    """A numpy function that moves or copies elements: gather at numpy's positions."""
    @defcomposite(name, formula + "; the VJP scatters g back, adding over copies",
                  numpy=(numpy_fn,), methods=methods)
    def fn(a, *args, **kwargs):
        a = _t(a)
        shaped = _shape_only(args, tuple(kwargs.values()))  # Python options: the positions are the shape's (issue 15)
        if not shaped and tracing():
            lists = [v for v in (*args, *kwargs.values()) if not _shape_only(v)]
            if all(isinstance(v, list) and _python_ints(v) for v in lists):
                for v in lists:  # lists of Python ints (np.tile(x, [2, 1])): their items part of the signature,
                    guard_traced(v)  # as np.pad's pad_width (verify40b F4)
                shaped = True
            else:
                refuse_traced(name, _OPTION_NOT_STATIC.format("positions come"))
        if zero:  # positions + 1, so numpy's zeros become -1: the appended 0
            return _gather(a, numpy_fn(_positions(a) + 1, *args, **kwargs) - 1, zero=True, shaped=shaped)
        out = _gather(a, numpy_fn(_positions(a), *args, **kwargs), shaped=shaped)
        if numpy_fn in _views.VIEW_FUNCTIONS:  # numpy's result is a view: its layout (review36 F1)
            return _views.numpy_layout(out, numpy_fn(a._value, *args, **kwargs))
        return _views.layout_if_strided(out, a._value, lambda: numpy_fn(a._value, *args, **kwargs))  # (tape44 H1)
    return fn


repeat = _moved("repeat", np.repeat, "x repeated (a gather)")
tile = _moved("tile", np.tile, "x tiled (a gather)")
roll = _moved("roll", np.roll, "x rolled (a permutation)")
rot90 = _moved("rot90", np.rot90, "x rotated (a permutation)")
fliplr = _moved("fliplr", np.fliplr, "x reversed along axis 1")
flipud = _moved("flipud", np.flipud, "x reversed along axis 0")
rollaxis = _moved("rollaxis", np.rollaxis, "a transpose")
diagonal = _moved("diagonal", np.diagonal, "the diagonal's elements (a gather)",
                  methods=("diagonal",))
diag = _moved("diag", np.diag, "2-D: the diagonal; 1-D: a matrix with x on the diagonal, 0 "
                               "elsewhere (the zeros get no gradient)", zero=True)
diagflat = _moved("diagflat", np.diagflat, "a matrix with ravel(x) on the diagonal", zero=True)


@defcomposite("trace", "sum(diagonal(x)): the VJP puts g on the diagonal", numpy=(np.trace,),
              methods=("trace",))
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """``numpy.trace`` over Tensors: the sum of the diagonal at ``offset``.

    Parameters
    ----------
    a : Tensor or array_like, shape (..., n, m) with ``axis1``/``axis2`` the matrix axes
    offset, axis1, axis2 : int
        As numpy.

    Returns
    -------
    Tensor
        The remaining axes' shape, ``a``'s dtype.

    Raises
    ------
    TypeError
        For ``dtype=`` or ``out=`` (no recorded derivative; ``out=`` would write in place).

    Notes
    -----
    numpy's trace written in recorded primitives, ``sum(diagonal(a))``, so its gradient is the
    composition's: ``g`` on the diagonal, 0 elsewhere. Source: ``lessons/10-gradient-tape.md``.
    """
    _check_kw("trace", {"out": out, "dtype": dtype})
    return sum(diagonal(a, offset, axis1, axis2), axis=-1)


# --- lists that mix tensors and numbers ----------------------------------------------------
def _nested_has_tensor(obj):
    return isinstance(obj, Tensor) or (isinstance(obj, (list, tuple)) and
                                       builtins.any(_nested_has_tensor(o) for o in obj))


def array(object, dtype=None, *, copy=True, ndmin=0, **kw):  # noqa: A002
    """``numpy.array`` for nested lists that mix Tensors and numbers: the Tensors stay on
    the tape (a recorded stack), the numbers become constants.

    Parameters
    ----------
    object : Tensor, array_like, or nested lists/tuples of them (equal shapes per level)
    dtype : numpy dtype, optional
    ndmin : int
        Leading axes of length 1 added up to this many dimensions.

    Returns
    -------
    Tensor

    Raises
    ------
    ValueError
        If the nested pieces do not have equal shapes (as numpy).
    """
    _check_kw("array", kw)
    if isinstance(object, Tensor):
        out = object
    elif isinstance(object, (list, tuple)) and _nested_has_tensor(object):
        parts = [array(o) for o in object]
        shapes = {p.shape for p in parts}
        if len(shapes) > 1:
            raise ValueError(f"autoprop.numpy.array: the pieces have different shapes {sorted(shapes)}")
        out = stack(parts, axis=0) if parts else Tensor(np.array(object))
    else:
        return Tensor(np.array(_value(object), dtype=dtype, ndmin=ndmin))
    if dtype is not None and np.dtype(dtype) != out.dtype:
        out = out.astype(dtype)
    if out.ndim < ndmin:
        out = reshape(out, shape=(1,) * (ndmin - out.ndim) + out.shape)
    return out


def asarray(a, dtype=None, **kw):
    """``numpy.asarray``: a Tensor is returned as it is; lists mixing Tensors and numbers
    as :func:`array`."""
    return array(a, dtype=dtype, **kw)


# --- stacking ----------------------------------------------------------------------------
def _atleast_shape(n, shape):
    """numpy's rule: () -> (1, 1, 1), (k,) -> (1, k, 1), (a, b) -> (a, b, 1) for n = 3;
    leading 1s for n = 2."""
    nd = len(shape)
    if nd >= n:
        return shape
    if n < 3:
        return (1,) * (n - nd) + shape
    return {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}[nd]


def _atleast(n, arys):
    view = getattr(np, f"atleast_{n}d")  # (numpy's view of a value: its layout, _views.numpy_layout)
    out = [_views.numpy_layout(reshape(a, shape=_atleast_shape(n, a.shape)), view(a._value)) if a.ndim < n else a
           for a in (_t(x) for x in arys)]
    return out[0] if len(out) == 1 else tuple(out)


def _atleast_fn(n):
    @defcomposite(f"atleast_{n}d", "a reshape", numpy=(getattr(np, f"atleast_{n}d"),))
    def fn(*arys):
        return _atleast(n, arys)
    return fn


atleast_1d, atleast_2d, atleast_3d = (_atleast_fn(n) for n in (1, 2, 3))


def _list(tup, name):
    """The pieces to stack: a list or tuple, or one array (numpy stacks its rows)."""
    if isinstance(tup, (Tensor, np.ndarray)):
        t = _t(tup)
        return [getitem(t, (i,)) for i in range(t.shape[0])] if t.ndim else [t]
    if not isinstance(tup, (list, tuple)):
        raise TypeError(f"numpy.{name}: arrays to stack must be passed as a list or tuple")
    return [_t(a) for a in tup]


def _as_dtype(out, dtype, casting, name):
    """numpy's ``dtype``/``casting`` options of the stacking functions: a cast, or refused."""
    if casting != "same_kind":
        raise TypeError(f"autoprop cannot record numpy.{name}(..., casting={casting!r}): only "
                        "the default 'same_kind' is recorded")
    return out if dtype is None or np.dtype(dtype) == out.dtype else out.astype(dtype)


@defcomposite("vstack", "concatenate(atleast_2d(x_i), axis=0)", numpy=(np.vstack,))
def vstack(tup, *, dtype=None, casting="same_kind"):
    """``numpy.vstack`` over Tensors: ``concatenate(atleast_2d(x_i), axis=0)``.

    Parameters
    ----------
    tup : list or tuple of Tensor or array_like; or one array, whose rows are stacked (as numpy)
    dtype : numpy dtype, optional
        The result is cast to it (a recorded cast).
    casting : {'same_kind'}
        Only numpy's default is recorded.

    Returns
    -------
    Tensor
        numpy's shape; the pieces' common dtype (or ``dtype``).

    Raises
    ------
    TypeError
        If ``tup`` is no list, tuple or array, or ``casting`` is not 'same_kind'.
    ValueError
        If the pieces' shapes do not fit (numpy's message).

    Notes
    -----
    numpy's function written in recorded primitives (reshape, concatenate), so its gradient is the
    composition's: each input gets its own slice of ``g``. Source: ``lessons/10-gradient-tape.md``
    (composites).
    """
    parts = [atleast_2d(a) for a in _list(tup, "vstack")]
    return _as_dtype(concatenate(*parts, axis=0), dtype, casting, "vstack")


row_stack = vstack


@defcomposite("hstack", "concatenate(atleast_1d(x_i)) along axis 1 (axis 0 for 1-D)",
              numpy=(np.hstack,))
def hstack(tup, *, dtype=None, casting="same_kind"):
    """``numpy.hstack`` over Tensors: ``concatenate(atleast_1d(x_i))`` along axis 1 (axis 0 for 1-D).

    Parameters
    ----------
    tup : list or tuple of Tensor or array_like; or one array (its rows are the pieces)
    dtype : numpy dtype, optional
        The result is cast to it (a recorded cast).
    casting : {'same_kind'}
        Only numpy's default is recorded.

    Returns
    -------
    Tensor
        numpy's shape; the pieces' common dtype (or ``dtype``).

    Raises
    ------
    TypeError
        If ``tup`` is no list, tuple or array, or ``casting`` is not 'same_kind'.
    ValueError
        If the pieces' shapes do not fit (numpy's message).

    Notes
    -----
    numpy's function written in recorded primitives (reshape, concatenate), so its gradient is the
    composition's: each input gets its own slice of ``g``. Source: ``lessons/10-gradient-tape.md``
    (composites).
    """
    parts = [atleast_1d(a) for a in _list(tup, "hstack")]
    out = concatenate(*parts, axis=0 if parts and parts[0].ndim == 1 else 1)
    return _as_dtype(out, dtype, casting, "hstack")


@defcomposite("dstack", "concatenate(atleast_3d(x_i), axis=2)", numpy=(np.dstack,))
def dstack(tup):
    """``numpy.dstack`` over Tensors: ``concatenate(atleast_3d(x_i), axis=2)``.

    Parameters
    ----------
    tup : list or tuple of Tensor or array_like; or one array (its rows are the pieces)

    Returns
    -------
    Tensor
        At least 3-D, numpy's shape; the pieces' common dtype.

    Raises
    ------
    TypeError
        If ``tup`` is no list, tuple or array.

    Notes
    -----
    numpy's function written in recorded primitives (reshape, concatenate), so its gradient is the
    composition's: each input gets its own slice of ``g``. Source: ``lessons/10-gradient-tape.md``
    (composites).
    """
    return concatenate(*[atleast_3d(a) for a in _list(tup, "dstack")], axis=2)


@defcomposite("column_stack", "concatenate of columns (1-D inputs become (n, 1))",
              numpy=(np.column_stack,))
def column_stack(tup):
    """``numpy.column_stack`` over Tensors: 1-D pieces become columns ``(n, 1)``, then
    ``concatenate(..., axis=1)``.

    Parameters
    ----------
    tup : list or tuple of Tensor or array_like; or one array (its rows are the pieces)

    Returns
    -------
    Tensor, shape (n, sum of the pieces' columns)

    Raises
    ------
    TypeError
        If ``tup`` is no list, tuple or array.

    Notes
    -----
    numpy's function written in recorded primitives (reshape, concatenate), so its gradient is the
    composition's: each input gets its own slice of ``g``. Source: ``lessons/10-gradient-tape.md``
    (composites).
    """
    parts = [reshape(a, shape=(-1, 1)) if a.ndim < 2 else a for a in _list(tup, "column_stack")]
    return concatenate(*parts, axis=1)


@defcomposite("append", "concatenate((arr, values), axis) (axis=None: of the flattened)",
              numpy=(np.append,))
def append(arr, values, axis=None):
    """``numpy.append`` over Tensors: ``concatenate((arr, values), axis)``.

    Parameters
    ----------
    arr, values : Tensor or array_like
        Both get gradients.
    axis : int, optional
        None (numpy's default): both are flattened first, the result is 1-D.

    Returns
    -------
    Tensor

    Notes
    -----
    numpy's function written in recorded primitives (ravel, concatenate), so its gradient is the
    composition's: each input gets its own slice of ``g``. Source: ``lessons/10-gradient-tape.md``
    (composites).
    """
    arr, values = _t(arr), _t(values)
    if axis is None:
        return concatenate(ravel(arr), ravel(values), axis=0)
    return concatenate(arr, values, axis=axis)


# --- splitting ---------------------------------------------------------------------------
@defcomposite("array_split", "one record with an output per piece (split)", numpy=(np.array_split,))
def array_split(ary, indices_or_sections, axis=0):
    """``numpy.array_split`` over Tensors: like ``split``, but the sections need not be equal.

    Parameters
    ----------
    ary : Tensor or array_like
    indices_or_sections : int or sequence of int
        A number of sections (the first ``n % k`` one longer, as numpy) or the split points.
    axis : int, default 0

    Returns
    -------
    list of Tensor
        Views of ``ary`` along ``axis``.

    Raises
    ------
    ValueError
        For 0 or fewer sections; numpy's AxisError for an axis out of range.

    Notes
    -----
    One recorded multi-output ``split`` (a :class:`~autoprop.core.tape.MultiNode`): the VJP puts
    the pieces' gradients back side by side, zeros for a piece that got none.
    """
    return split(ary, indices_or_sections, axis=axis, _equal=False)


def _split_along(name, axis_of, min_ndim):
    @defcomposite(name, "split along an axis (slices)", numpy=(getattr(np, name),))
    def fn(ary, indices_or_sections):
        ary = _t(ary)
        if ary.ndim < min_ndim:
            raise ValueError(f"{name} only works on arrays of {min_ndim} or more dimensions")
        return split(ary, indices_or_sections, axis=axis_of(ary))
    return fn


hsplit = _split_along("hsplit", lambda a: 1 if a.ndim > 1 else 0, 1)
vsplit = _split_along("vsplit", lambda a: 0, 2)
dsplit = _split_along("dsplit", lambda a: 2, 3)


# --- sorting -------------------------------------------------------------------------------
def _along(a, idx_fn, axis, fresh=True):
    """``take_along_axis(a, idx_fn(a's values, axis))``. The positions come from the values: with ``fresh``
    (``idx_fn`` reads nothing but them and Python constants) an autoprop.function replay computes them again
    from its own values (``tape.replayed``; issue 15), else a trace refuses the array."""
    a = _t(a)
    if axis is None:
        a, axis = reshape(a, shape=(-1,)), 0
    idx = replayed(lambda v: idx_fn(v, axis), a) if fresh else idx_fn(a._value, axis)
    return take_along_axis(a, idx, axis=axis)


@defcomposite("sort", "take_along_axis(x, argsort(x)): g goes back to each element's place "
                      "(ties: numpy's stable order)", numpy=(np.sort,))
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``numpy.sort`` over Tensors: the values in ascending order along ``axis``.

    Parameters
    ----------
    a : Tensor or array_like
    axis : int or None, default -1
        None sorts the flattened array.
    kind, stable : optional
        Accepted; they change no sorted value. The gradient uses a stable order whatever they say.

    Returns
    -------
    Tensor
        ``a``'s shape (1-D for ``axis=None``) and dtype.

    Raises
    ------
    TypeError
        For ``order=`` (structured arrays: no derivative).

    Notes
    -----
    ``take_along_axis(a, argsort(a, kind='stable'))``, a recorded gather: each element gets the
    gradient of the place it was sorted to. Ties: equal elements keep their order (numpy's stable
    sort), so the first of them gets the first tied place's gradient; they are not averaged.
    Source: ``lessons/10-gradient-tape.md``.
    """
    _check_kw("sort", {"order": order})
    out = _along(a, lambda v, ax: np.argsort(v, axis=ax, kind="stable"), axis)
    return _k_layout(out, a)


def _k_layout(out, a):
    """``out`` laid out as numpy's ``a.copy(order='K')``, where np.sort and np.partition sort (tape44 H1)."""
    return _views.layout_if_strided(out, _value(a), lambda: np.empty_like(_value(a)))


@defcomposite("partition", "take_along_axis(x, argpartition(x, kth))", numpy=(np.partition,))
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.partition`` over Tensors: the ``kth`` element in its sorted place, smaller ones before.

    Parameters
    ----------
    a : Tensor or array_like
    kth : int or sequence of int
    axis : int or None, default -1
    kind : str, default 'introselect'
        Passed to ``np.argpartition``.

    Returns
    -------
    Tensor
        ``a``'s shape and dtype.

    Raises
    ------
    TypeError
        For ``order=``.

    Notes
    -----
    ``take_along_axis(a, argpartition(a, kth))``, a recorded gather: each element gets the
    gradient of the place numpy's argpartition moved it to (at ties, numpy's choice).
    """
    _check_kw("partition", {"order": order})
    if not _shape_only(kth, kind):
        refuse_traced("partition", _OPTION_NOT_STATIC.format("kth comes"))
    out = _along(a, lambda v, ax: np.argpartition(v, kth, axis=ax, kind=kind), axis, fresh=_shape_only(kth, kind))
    return _k_layout(out, a)


# --- differences ---------------------------------------------------------------------------
def _sl(nd, axis, s):
    return (_S(None),) * axis + (s,) + (_S(None),) * (nd - axis - 1)


@defcomposite("diff", "x[1:] - x[:-1] along the axis, n times", numpy=(np.diff,))
def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """``numpy.diff`` over Tensors: ``x[1:] - x[:-1]`` along ``axis``, ``n`` times.

    Parameters
    ----------
    a : Tensor or array_like
    n : int, default 1
    axis : int, default -1
    prepend, append : Tensor, array_like or scalar, optional
        Joined to ``a`` along ``axis`` first (a scalar broadcast to one slice); a Tensor gets
        its gradient.

    Returns
    -------
    Tensor
        ``a``'s shape with ``n`` fewer entries along ``axis`` (after prepend/append); ``a``
        itself for ``n == 0``, prepend/append ignored (numpy's rule).

    Raises
    ------
    ValueError
        If ``n < 0``, or ``a`` is 0-d (and ``n > 0``), as numpy; numpy's AxisError for an axis
        out of range.

    Notes
    -----
    Recorded slices and subtractions (numpy's definition), so the gradient is the composition's:
    ``dx_i = g_{i-1} - g_i`` for ``n = 1``.
    """
    a = _t(a)
    if n == 0:  # numpy returns its input unchanged, before prepend/append or any check
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _axis_index(axis, a.ndim)
    parts = []
    for extra in (prepend, append):
        if extra is np._NoValue:
            parts.append(None)
            continue
        e = _t(extra)
        if e.ndim == 0:
            e = broadcast_to(e, shape=a.shape[:ax] + (1,) + a.shape[ax + 1:])
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        a = concatenate(*[p for p in (parts[0], a, parts[1]) if p is not None], axis=ax)
    for _ in range(n):
        a = getitem(a, _sl(a.ndim, ax, _S(1, None))) - getitem(a, _sl(a.ndim, ax, _S(None, -1)))
    return a


def _twice(h):
    """``2 h`` of numpy.gradient's uniform step: autoprop's own constant (``observe.own``) when ``h`` is the
    default step or an integer, which no value that left the tape can be."""
    return own(2.0 * h) if type(h) is OwnFloat or isinstance(h, (int, np.integer)) else 2.0 * h


def _spacing(d, n):
    """One entry of numpy.gradient's ``varargs``: a scalar step, or a coordinate array of
    length ``n`` -> its differences (a scalar again when they are all equal, as numpy)."""
    v = np.asarray(_value(d))
    if v.ndim == 0:
        return d
    if v.ndim != 1:
        raise ValueError("distances must be either scalars or 1d")
    if len(v) != n:
        raise ValueError("when 1d, distances must match the length of the corresponding dimension")
    d = _t(d) if isinstance(d, Tensor) else v.astype(np.float64) if v.dtype.kind in "iub" else v
    dx = getitem(d, _S(1, None)) - getitem(d, _S(None, -1))
    dxv = np.asarray(_value(dx))
    return getitem(dx, 0) if np.all(dxv == dxv[0]) else dx


@defcomposite("gradient", "central differences (f[i+1] - f[i-1]) / 2h inside, one-sided at the "
                          "edges (edge_order 1 or 2); with coordinate arrays numpy's second-order "
                          "formula for uneven steps h1, h2: (-h2/(h1(h1+h2))) f[i-1] + "
                          "((h2-h1)/(h1 h2)) f[i] + (h1/(h2(h1+h2))) f[i+1]", numpy=(np.gradient,))
def gradient(f, *varargs, axis=None, edge_order=1):
    """``numpy.gradient`` over Tensors: central differences inside, one-sided at the edges.

    Parameters
    ----------
    f : Tensor or array_like
    *varargs : scalar, or 1-D coordinate arrays (Tensors differentiable too)
        The spacing: none (1), one scalar for all axes, or one entry per axis.
    axis : int or tuple of int, optional
    edge_order : {1, 2}

    Returns
    -------
    Tensor of ``f``'s shape, or a tuple of them (one per axis when there are several)

    Raises
    ------
    TypeError
        For a number of ``varargs`` that fits no axis count.
    ValueError
        For ``edge_order`` not 1 or 2, an axis shorter than ``edge_order + 1``, or a coordinate
        array that is not 1-D or not of the axis' length.

    Notes
    -----
    numpy's formulas written in recorded slices and arithmetic: ``(f[i+1] - f[i-1]) / 2h`` for an
    even step, numpy's second-order formula for uneven steps h1, h2
    (``-h2/(h1(h1+h2)) f[i-1] + (h2-h1)/(h1 h2) f[i] + h1/(h2(h1+h2)) f[i+1]``), so ``f`` and the
    coordinates get the composition's gradient.
    """
    f = _t(f)
    axes = tuple(range(f.ndim)) if axis is None else _axes_tuple(axis, f.ndim)
    if not varargs:
        hs = [own(1.0)] * len(axes)  # (numpy's default step: autoprop's constant, not the user's)
    elif len(varargs) == 1 and np.ndim(_value(varargs[0])) == 0:
        hs = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        hs = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    out = []
    for ax, h in zip(axes, hs):
        n = f.shape[ax]
        if n < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        h = _spacing(h, n)

        def at(s, ax=ax):
            return getitem(f, _sl(f.ndim, ax, s))
        if np.ndim(_value(h)) == 0:  # uniform
            mid = (at(_S(2, None)) - at(_S(None, -2))) / _twice(h)
            if edge_order == 1:
                first = (at(_S(1, 2)) - at(_S(0, 1))) / h
                last = (at(_S(n - 1, n)) - at(_S(n - 2, n - 1))) / h
            else:  # numpy's one-sided second-order coefficients: constants of its formula, autoprop's own
                first = (own(-1.5) * at(_S(0, 1)) + own(2.0) * at(_S(1, 2)) - own(0.5) * at(_S(2, 3))) / h
                last = (own(0.5) * at(_S(n - 3, n - 2)) - own(2.0) * at(_S(n - 2, n - 1)) + own(1.5) * at(_S(n - 1, n))) / h
        else:  # the differences h (n - 1,) of a coordinate array, along ax
            h = reshape(h, shape=tuple(n - 1 if i == ax else 1 for i in range(f.ndim)))

            def dh(s, h=h, ax=ax):
                return getitem(h, _sl(f.ndim, ax, s))
            h1, h2 = dh(_S(None, -1)), dh(_S(1, None))
            mid = (-h2 / (h1 * (h1 + h2)) * at(_S(None, -2)) + (h2 - h1) / (h1 * h2) * at(_S(1, -1))
                   + h1 / (h2 * (h1 + h2)) * at(_S(2, None)))
            if edge_order == 1:
                first = (at(_S(1, 2)) - at(_S(0, 1))) / dh(_S(0, 1))
                last = (at(_S(n - 1, n)) - at(_S(n - 2, n - 1))) / dh(_S(n - 2, n - 1))
            else:
                h1, h2 = dh(_S(0, 1)), dh(_S(1, 2))
                first = (-(2.0 * h1 + h2) / (h1 * (h1 + h2)) * at(_S(0, 1))
                         + (h1 + h2) / (h1 * h2) * at(_S(1, 2)) - h1 / (h2 * (h1 + h2)) * at(_S(2, 3)))
                h1, h2 = dh(_S(n - 3, n - 2)), dh(_S(n - 2, n - 1))
                last = (h2 / (h1 * (h1 + h2)) * at(_S(n - 3, n - 2)) - (h2 + h1) / (h1 * h2) * at(_S(n - 2, n - 1))
                        + (2.0 * h2 + h1) / (h2 * (h1 + h2)) * at(_S(n - 1, n)))
        out.append(concatenate(first, mid, last, axis=ax))
    return out[0] if len(out) == 1 else tuple(out)


# --- products --------------------------------------------------------------------------------
@defcomposite("cross", "the components a_j b_k - a_k b_j (bilinear: multiply and subtract)",
              numpy=(np.cross,))
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``numpy.cross`` over Tensors: the cross product of 2- or 3-vectors along the given axes.

    Parameters
    ----------
    a, b : Tensor or array_like, last axis (``axisa``/``axisb``) of length 2 or 3
    axisa, axisb, axisc : int, default -1
    axis : int, optional
        Overrides the three.

    Returns
    -------
    Tensor
        3-vectors along ``axisc``; two 2-vectors give the scalar ``a0 b1 - a1 b0``.

    Raises
    ------
    ValueError
        If a vector axis has a length other than 2 or 3.

    Notes
    -----
    Bilinear: the components ``a_j b_k - a_k b_j`` written as recorded products and differences.
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(_t(a), axisa, -1), moveaxis(_t(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")

    def comp(v, i):
        if i == 2 and v.shape[-1] == 2:
            return 0.0
        return getitem(v, (Ellipsis, i))
    a0, a1, a2 = (comp(a, i) for i in range(3))
    b0, b1, b2 = (comp(b, i) for i in range(3))
    z = a0 * b1 - a1 * b0
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    x, y = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    shape = np.broadcast_shapes(np.shape(x), np.shape(y), np.shape(z))
    c = stack([broadcast_to(_t(v), shape=shape) for v in (x, y, z)], axis=-1)
    return moveaxis(c, -1, axisc)


@defcomposite("kron", "reshape(a[:, None, ...] * b[None, :, ...]): each entry a_i b_j once",
              numpy=(np.kron,))
def kron(a, b):
    """``numpy.kron`` over Tensors: the Kronecker product.

    Parameters
    ----------
    a, b : Tensor or array_like

    Returns
    -------
    Tensor, shape ``(a.shape[i] * b.shape[i], ...)`` (the shorter shape padded with leading 1s)

    Notes
    -----
    ``reshape(a[:, None, ...] * b[None, :, ...])``: each product ``a_i b_j`` appears once, so
    ``da_i = sum_j g_ij b_j`` and ``db_j = sum_i g_ij a_i`` (the recorded multiply's VJP).
    """
    a, b = _t(a), _t(b)
    nd = builtins.max(a.ndim, b.ndim)
    sa, sb = (1,) * (nd - a.ndim) + a.shape, (1,) * (nd - b.ndim) + b.shape
    ea = reshape(a, shape=tuple(x for n in sa for x in (n, 1)))
    eb = reshape(b, shape=tuple(x for n in sb for x in (1, n)))
    return reshape(multiply(ea, eb), shape=tuple(p * q for p, q in zip(sa, sb)))


def _convolve_full_or_mode(a, v, mode, name):
    """numpy's 1-D convolution of ``a`` and ``v`` as a gather and a matmul: the Toeplitz
    matrix ``T[k, j] = a[k - j]`` (0 outside ``a``) read from ``a`` at numpy-computed
    positions, times ``v``; then numpy's slice of the full result for 'same' (centred,
    length max(n, m)) and 'valid' (length max - min + 1)."""
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"numpy.{name}: mode must be 'full', 'same' or 'valid'; got {mode!r}")
    a, v = _t(a), _t(v)
    if a.ndim != 1 or v.ndim != 1 or not a.size or not v.size:
        raise ValueError(f"numpy.{name}: a and v must be non-empty 1-D arrays; got shapes "
                         f"{a.shape} and {v.shape}")
    n, m = a.size, v.size
    k = np.arange(n + m - 1)[:, None] - np.arange(m)[None, :]
    full = _gather(a, np.where((k >= 0) & (k < n), k, -1), zero=True) @ v
    lo, hi = builtins.min(n, m), builtins.max(n, m)
    start = {"full": 0, "same": (lo - 1) // 2, "valid": lo - 1}[mode]
    return full if mode == "full" else getitem(full, _S(start, start + (hi if mode == "same" else hi - lo + 1)))


@defcomposite("convolve", "sum_j a[k - j] v[j]: a Toeplitz gather of a times v (its VJP "
                          "scatters back each product's share)", numpy=(np.convolve,))
def convolve(a, v, mode="full"):
    """``numpy.convolve`` over Tensors: the 1-D discrete convolution ``sum_j a[k - j] v[j]``.

    Parameters
    ----------
    a, v : Tensor or array_like, 1-D, non-empty
    mode : {'full', 'same', 'valid'}, default 'full'

    Returns
    -------
    Tensor, shape (n + m - 1,), (max(n, m),) or (max(n, m) - min(n, m) + 1,)

    Raises
    ------
    ValueError
        For another ``mode``, or inputs that are not non-empty and 1-D.

    Notes
    -----
    A recorded gather of ``a`` into the Toeplitz matrix ``T[k, j] = a[k - j]`` (0 outside ``a``),
    times ``v`` (matmul), then numpy's slice for the mode: the gather's VJP adds each product's
    share back to ``a``, the matmul's gives ``v`` its part.
    """
    return _convolve_full_or_mode(a, v, mode, "convolve")


@defcomposite("correlate", "sum_n a[n + k] conj(v[n]): convolve with conj(v) reversed (numpy's "
                           "swap and reversal when v is the longer)", numpy=(np.correlate,))
def correlate(a, v, mode="valid"):
    """``numpy.correlate`` over Tensors: ``c[k] = sum_n a[n + k] conj(v[n])``.

    Parameters
    ----------
    a, v : Tensor or array_like, 1-D, non-empty
    mode : {'valid', 'same', 'full'}, default 'valid'

    Returns
    -------
    Tensor
        As :func:`convolve` for the mode.

    Raises
    ------
    ValueError
        For another ``mode``, or inputs that are not non-empty and 1-D.

    Notes
    -----
    numpy's definition in recorded primitives: ``convolve`` of ``a`` with ``conj(v)`` reversed
    (numpy's swap and reversal when ``v`` is the longer), so the gradient is the composition's.
    """
    a, v = _t(a), _t(v)
    if v.dtype.kind == "c":  # numpy conjugates v (c[k] = sum_n a[n + k] conj(v[n])), even for a real a
        v = conj(v)
    if a.ndim == v.ndim == 1 and a.size < v.size:  # numpy correlates the swapped pair, reversed
        return getitem(_convolve_full_or_mode(v, getitem(a, _S(None, None, -1)), mode, "correlate"),
                       _S(None, None, -1))
    return _convolve_full_or_mode(a, getitem(v, _S(None, None, -1)), mode, "correlate")


@defcomposite("inner", "tensordot over the last axes of a and b", numpy=(np.inner,))
def inner(a, b):
    """``numpy.inner`` over Tensors: the sum product over the last axes of ``a`` and ``b``.

    Parameters
    ----------
    a, b : Tensor or array_like
        Last axes of one length; a 0-d operand multiplies.

    Returns
    -------
    Tensor, shape ``a.shape[:-1] + b.shape[:-1]``

    Notes
    -----
    The recorded ``tensordot`` over the last axes (``multiply`` for a scalar): its VJPs.
    """
    a, b = _t(a), _t(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return np.tensordot(a, b, axes=([-1], [-1]))


@defcomposite("vdot", "dot(ravel(conj(a)), ravel(b)) (conj only for a complex a)", numpy=(np.vdot,))
def vdot(a, b):
    """``numpy.vdot`` over Tensors: ``dot(ravel(conj(a)), ravel(b))``.

    Parameters
    ----------
    a, b : Tensor or array_like, of one size
        Flattened; ``a`` is conjugated when complex.

    Returns
    -------
    Tensor, shape ()

    Notes
    -----
    Recorded ``conj``, ``ravel`` and ``dot``: the gradient is the composition's.
    """
    a = _t(a)
    return np.dot(ravel(conj(a) if a.dtype.kind == "c" else a), ravel(_t(b)))


# --- construction ----------------------------------------------------------------------------
@defcomposite("linspace", "start + arange(num) * (stop - start) / div, the last point = stop",
              numpy=(np.linspace,))
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``numpy.linspace`` over Tensors: ``num`` points from ``start`` to ``stop``.

    Parameters
    ----------
    start, stop : Tensor, array_like or scalar
        Differentiable: point k is ``start + k (stop - start) / div`` (``div = num - 1``, or ``num``
        with ``endpoint=False``), so ``d/dstart = 1 - k/div`` and ``d/dstop = k/div``.
    num : int, default 50
    endpoint : bool, default True
        The last point is ``stop`` itself (its gradient goes to ``stop`` alone).
    retstep : bool, default False
        Also return the step ``(stop - start) / div`` (a Tensor).
    dtype : numpy dtype, optional
    axis : int, default 0
        Where the points' axis goes when ``start``/``stop`` are arrays.
    device : {None, 'cpu'}

    Returns
    -------
    Tensor, shape (num,) + broadcast shape of start and stop; or (Tensor, Tensor) with ``retstep``

    Raises
    ------
    ValueError
        If ``num < 0``.
    TypeError
        For a device other than the CPU.

    Notes
    -----
    numpy's formula written in recorded primitives (multiply, add, concatenate), so the gradient
    is the composition's. Source: ``lessons/10-gradient-tape.md`` (composites).
    """
    if device not in (None, "cpu"):
        raise TypeError(f"numpy.linspace: device={device!r}; autoprop runs on the CPU only")
    dt = np.result_type(_value(start), _value(stop), float(num))  # numpy's (Python numbers weak)
    start, stop = _t(start), _t(stop)
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    delta = stop - start
    shape = np.broadcast_shapes(start.shape, stop.shape)
    steps = own(np.arange(num, dtype=float).reshape((-1,) + (1,) * len(shape)))
    step = delta / div if div > 0 else delta * np.nan
    y = (steps * step if div > 0 else steps * delta) + start
    if endpoint and num > 1:
        y = concatenate(getitem(y, (_S(None, -1),)), reshape(broadcast_to(stop, shape=shape),
                                                                  shape=(1,) + shape), axis=0)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if dtype is not None or y.dtype != dt:
        y = y.astype(dt if dtype is None else dtype)
    return (y, step) if retstep else y


@defcomposite("select", "nested where: g goes to the first choice whose condition holds",
              numpy=(np.select,))
def select(condlist, choicelist, default=0):
    """``numpy.select`` over Tensors: at each place, the first choice whose condition holds.

    Parameters
    ----------
    condlist : list of bool arrays (values; no gradient)
    choicelist : list of Tensor or array_like, as long as ``condlist``
    default : Tensor or scalar, default 0
        Where no condition holds.

    Returns
    -------
    Tensor
        The broadcast shape; numpy's result dtype of the choices and ``default``.

    Raises
    ------
    ValueError
        If the two lists differ in length.

    Notes
    -----
    Nested recorded ``where``: ``g`` goes to the first choice whose condition holds at each place,
    to ``default`` where none does, and 0 to the others.
    """
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    out = _t(default)
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = where(np.asarray(_value(cond), dtype=bool), choice, out)
    dt = np.result_type(*[_value(c) for c in choicelist], _value(default))  # numpy's (0.5 weak)
    return out if out.dtype == dt else out.astype(dt)


@defcomposite("meshgrid", "reshape and broadcast_to of each input", numpy=(np.meshgrid,))
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """``numpy.meshgrid`` over Tensors: coordinate grids from 1-D coordinate vectors.

    Parameters
    ----------
    *xi : Tensor or array_like, 1-D (others are flattened, as numpy)
    copy : bool
        Changes no value (a Tensor is never written), so it has nothing to do here.
    sparse : bool, default False
        True: the reshaped vectors, not broadcast.
    indexing : {'xy', 'ij'}, default 'xy'

    Returns
    -------
    tuple of Tensor
        One grid per input.

    Raises
    ------
    ValueError
        For another ``indexing``.

    Notes
    -----
    Recorded ``reshape`` and ``broadcast_to``: each vector's gradient is ``g`` summed over the
    axes it was broadcast along.
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    out = [reshape(_t(x), shape=(1,) * i + (-1,) + (1,) * (nd - i - 1)) for i, x in enumerate(xi)]
    if indexing == "xy" and nd > 1:
        out[0] = reshape(out[0], shape=(1, -1) + (1,) * (nd - 2))
        out[1] = reshape(out[1], shape=(-1, 1) + (1,) * (nd - 2))
    return tuple(out) if sparse else broadcast_arrays(*out)


@defcomposite("broadcast_arrays", "broadcast_to the common shape", numpy=(np.broadcast_arrays,))
def broadcast_arrays(*args, subok=False):
    """``numpy.broadcast_arrays`` over Tensors: each input broadcast to the common shape.

    Parameters
    ----------
    *args : Tensor or array_like
    subok : bool
        Changes nothing for Tensors.

    Returns
    -------
    tuple of Tensor
        Each of the broadcast shape (an input already of that shape is returned as it is).

    Raises
    ------
    ValueError
        If the shapes do not broadcast (numpy's message).

    Notes
    -----
    Recorded ``broadcast_to``: the gradient is ``g`` summed over the broadcast axes.
    """
    ts = [_t(a) for a in args]
    shape = np.broadcast_shapes(*[t.shape for t in ts])
    return tuple(t if t.shape == shape else broadcast_to(t, shape=shape) for t in ts)


# --- statistics ------------------------------------------------------------------------------
@defcomposite("cumprod", "y_j = prod(x_0..x_j) as a product over a masked copy: exact with zeros "
                         "(O(n^2) memory along the axis)", numpy=(np.cumprod,))
def cumprod(a, axis=None, dtype=None, out=None):
    """``numpy.cumprod`` over Tensors: ``y_j = x_0 x_1 ... x_j`` along ``axis``.

    Parameters
    ----------
    a : Tensor or array_like
    axis : int, optional
        None (numpy's default): of the flattened array.
    dtype : dtype, optional
        numpy's: the products in ``dtype`` (``a`` cast to it first, a recorded cast: a float
        ``dtype`` keeps the gradient).

    Returns
    -------
    Tensor
        ``a``'s shape (1-D for ``axis=None``) and dtype (``dtype`` if given).

    Raises
    ------
    TypeError
        For ``out=``, or an integer/bool ``dtype`` for float values (a complex one to float): numpy
        casts them unsafely first, which has no derivative.
    numpy.exceptions.AxisError
        For an axis out of range.

    Notes
    -----
    Each ``y_j`` is the recorded ``prod`` of a masked copy (row j keeps ``x_0..x_j``, ones
    elsewhere), so the gradient is exact with zeros in ``x`` (no division by ``x``), at
    O(n^2) memory along the axis.
    """
    _check_kw("cumprod", {"out": out})
    a = _t(a)
    if dtype is not None:  # numpy's accumulate in dtype: a cast first (recorded: float64 <- float32 passes g back)
        dt = np.dtype(dtype)
        if a.dtype.kind in "fc" and (dt.kind not in "fc" or (a.dtype.kind == "c" and dt.kind == "f")):
            raise TypeError(  # (numpy casts unsafely: truncated or real parts, a product with no derivative)
                f"autoprop cannot record numpy.cumprod(..., dtype={dt}) of {a.dtype} values: numpy first casts them "
                f"to {dt} (dropping {'the imaginary parts' if dt.kind == 'f' else 'their fractions'}), a cast autoprop "
                "does not record. Use a float (complex) dtype, or say what you mean first: np.cumprod(np.real(t)), "
                "or np.cumprod(t.numpy(), dtype=...) for integers (no derivative).")
        a = a if a.dtype == dt else a.astype(dt)
    if axis is None or a.ndim == 0:  # (a 0-d ``a`` over axis 0 or -1: 1-D too, as numpy)
        if axis is not None:
            _axis_index(axis, 1)
        a, axis = reshape(a, shape=(-1,)), 0
    x = moveaxis(a, _axis_index(axis, a.ndim), -1)
    n = x.shape[-1]
    keep = static(np.tri(n, dtype=bool))  # row j keeps x_0..x_j (from the shape: a constant of a trace)
    rows = where(keep, reshape(x, shape=x.shape[:-1] + (1, n)), static(own(np.ones((), a.dtype))))
    return moveaxis(prod(rows, axis=-1), -1, axis)


def _axis_arg(axis):
    return tuple(axis) if isinstance(axis, list) else axis


@defcomposite("median", "the mean of the middle element(s) of sort(x)", numpy=(np.median,))
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``numpy.median`` over Tensors: the middle value (mean of the two middle ones for even n).

    Parameters
    ----------
    a : Tensor or array_like
    axis : int, tuple of int or None
        None: of the flattened array.
    overwrite_input : bool
        Changes no value (a Tensor is never written).
    keepdims : bool, default False

    Returns
    -------
    Tensor
        The reduced shape; NaN for a slice holding a NaN (as numpy).

    Raises
    ------
    TypeError
        For ``out=``.

    Notes
    -----
    The mean of the middle element(s) of the recorded ``sort``: those one or two elements get
    ``g`` (halved for two), the others 0. Ties go by numpy's stable order (``[1, 1, 1]``: the
    middle one gets it all). A slice holding a NaN passes no gradient.
    """
    _check_kw("median", {"out": out})
    a = _t(a)
    axis = _axis_arg(axis)
    if axis is None or isinstance(axis, tuple):
        axes = tuple(range(a.ndim)) if axis is None else _axes_tuple(axis, a.ndim)
        rest = [d for d in range(a.ndim) if d not in axes]
        moved = transpose(a, axes=tuple(rest) + axes)
        flat = reshape(moved, shape=tuple(a.shape[d] for d in rest) + (-1,))
        m = median(flat, axis=-1)
        if keepdims:
            m = reshape(m, shape=tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)))
        return m
    ax = _axis_index(axis, a.ndim)
    n = a.shape[ax]
    s = sort(a, axis=ax)
    mid = _S(n // 2, n // 2 + 1) if n % 2 else _S(n // 2 - 1, n // 2 + 1)
    m = mean(getitem(s, _sl(a.ndim, ax, mid)), axis=ax, keepdims=bool(keepdims))
    has_nan = replayed(lambda v: np.asarray(np.any(np.isnan(v), axis=ax, keepdims=bool(keepdims))), a)  # (each replay's)
    if not (np.any(has_nan) or tracing()):  # (a trace always masks: a later call's values may hold a NaN)
        return m
    return where(has_nan, static(own(np.asarray(np.nan, a.dtype))), m)


@defcomposite("average", "sum(w x) / sum(w) (weights None: mean)", numpy=(np.average,))
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """``numpy.average`` over Tensors: ``sum(w x) / sum(w)`` along ``axis`` (no weights: the mean).

    Parameters
    ----------
    a : Tensor or array_like
    axis : int, tuple of int or None
    weights : Tensor or array_like, optional
        ``a``'s shape, or the shape of ``a`` along the given ``axis`` (numpy >= 2.0: ``axis=(0, 1)``
        with weights of shape ``(a.shape[0], a.shape[1])``, in the order of ``axis``); a Tensor
        gets its gradient ``(x - average) / sum(w)``.
    returned : bool, default False
        Also return the sum of the weights (of the average's shape).
    keepdims : bool, default False

    Returns
    -------
    Tensor, or (Tensor, Tensor) with ``returned``

    Raises
    ------
    TypeError
        If ``weights`` has another shape than ``a`` and no ``axis`` is given (numpy's message).
    ValueError
        If such weights are not shaped like ``a`` along ``axis`` (numpy's message).
    numpy.exceptions.AxisError
        For an axis out of range.
    ZeroDivisionError
        If the weights sum to zero along an axis (numpy's check).

    Notes
    -----
    numpy's promotion: ``a`` and ``weights`` are cast to ``result_type(a, weights)`` (at least
    float64 for integer or boolean ``a``) before the sums, so float32 weights of float64 data are
    summed in float64, and the returned sum of weights has that dtype (without weights: the
    average's dtype). Recorded ``astype``, ``multiply``, ``sum`` and ``divide``: the gradient is
    the composition's.
    """
    a = _t(a)
    axis = _axis_arg(axis)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=bool(keepdims))
        scl = np.full(np.shape(avg), a.size / builtins.max(avg.size, 1))
        return (avg, Tensor(scl.astype(avg.dtype))) if returned else avg
    w = _t(weights)
    # numpy's result_dtype: the weights are summed and multiplied in it, never in their own dtype
    rdt = np.result_type(a.dtype, w.dtype, *(("f8",) if a.dtype.kind in "biu" else ()))
    a, w = (t if t.dtype == rdt else t.astype(rdt) for t in (a, w))
    if axis is not None:
        axis = _axes_tuple(axis, a.ndim)  # (numpy's normalize_axis_tuple: AxisError, repeated axis)
    if w.shape != a.shape:  # numpy's _weights_are_valid: weights shaped like a along the axes
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.shape != tuple(a.shape[ax] for ax in axis):
            raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
        w = reshape(transpose(w, axes=tuple(int(i) for i in np.argsort(axis))),
                    shape=tuple(s if ax in axis else 1 for ax, s in enumerate(a.shape)))
    wsum = sum(broadcast_to(w, shape=a.shape) if w.shape != a.shape else w, axis=axis,
               keepdims=bool(keepdims))
    if np.any(wsum._value == 0.0):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = sum(multiply(a, w), axis=axis, keepdims=bool(keepdims)) / wsum
    return (avg, broadcast_to(wsum, shape=avg.shape)) if returned else avg


@defcomposite("ptp", "max(x) - min(x)", numpy=(np.ptp,))
def ptp(a, axis=None, out=None, keepdims=False):
    """``numpy.ptp`` over Tensors: ``max(x) - min(x)`` along ``axis``.

    Parameters
    ----------
    a : Tensor or array_like
    axis : int, tuple of int or None
    keepdims : bool, default False

    Returns
    -------
    Tensor
        The reduced shape.

    Raises
    ------
    TypeError
        For ``out=``.

    Notes
    -----
    The recorded ``max`` and ``min`` reductions: ``g`` to the largest element, ``-g`` to the
    smallest, each split evenly among tied elements (``[3, 3, 1]``: 0.5, 0.5, -1), the registry's
    rule at ties.
    """
    _check_kw("ptp", {"out": out})
    axis = _axis_arg(axis)
    return subtract(max(a, axis=axis, keepdims=bool(keepdims)), min(a, axis=axis, keepdims=bool(keepdims)))



def _isnan(v):
    """``np.isnan(v)`` as an array (a 0-d value's is numpy's bool scalar): replayed's value (verify40b F1)."""
    return np.asarray(np.isnan(v))

def _nan_fill(a, fill):
    a = _t(a)  # (the NaN mask: from each autoprop.function replay's values, tape.replayed; issue 15)
    return where(replayed(_isnan, a), static(own(np.asarray(fill, a.dtype))), a)


@defcomposite("nansum", "sum(where(isnan(x), 0, x)): NaNs get no gradient", numpy=(np.nansum,))
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    """``numpy.nansum`` over Tensors: the sum with NaNs counted as 0.

    Parameters
    ----------
    a : Tensor or array_like
    axis : int, tuple of int or None
    keepdims : bool, default False

    Returns
    -------
    Tensor
        The reduced shape.

    Raises
    ------
    TypeError
        For ``out=``, ``dtype=`` and other options without a recorded derivative.

    Notes
    -----
    ``sum(where(isnan(x), 0, x))`` in recorded primitives: the NaNs get gradient 0, the other
    elements ``g``.
    """
    _check_kw("nansum", dict(kw, out=out, dtype=dtype))
    return sum(_nan_fill(a, 0.0), axis=_axis_arg(axis), keepdims=bool(keepdims))


@defcomposite("nanmean", "nansum(x) / count(not NaN)", numpy=(np.nanmean,))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    """``numpy.nanmean`` over Tensors: the mean of the elements that are not NaN.

    Parameters
    ----------
    a : Tensor or array_like
    axis : int, tuple of int or None
    keepdims : bool, default False

    Returns
    -------
    Tensor
        The reduced shape; NaN for an all-NaN slice (0 / 0, as numpy).

    Raises
    ------
    TypeError
        For ``out=``, ``dtype=`` and other options without a recorded derivative.

    Notes
    -----
    ``nansum(x) / count(not NaN)`` (the count a constant): each non-NaN element gets
    ``g / count``, the NaNs 0.
    """
    _check_kw("nanmean", dict(kw, out=out, dtype=dtype))
    a = _t(a)
    count = replayed(lambda v: own(np.asarray(np.sum(~np.isnan(v), axis=_axis_arg(axis), keepdims=bool(keepdims)),
                                              dtype=v.dtype)), a)
    return nansum(a, axis=axis, keepdims=keepdims) / count


def _nan_extreme(name, fn, fill):
    @defcomposite(name, f"{fn.name}(x with NaNs ignored); an all-NaN slice gives NaN",
                  numpy=(getattr(np, name),))
    def run(a, axis=None, out=None, keepdims=False, **kw):
        _check_kw(name, dict(kw, out=out))
        a = _t(a)
        axis = _axis_arg(axis)
        r = fn(_nan_fill(a, fill), axis=axis, keepdims=bool(keepdims))
        all_nan = replayed(lambda v: np.asarray(np.all(np.isnan(v), axis=axis, keepdims=bool(keepdims))), a)  # (each replay's)
        if not (np.any(all_nan) or tracing()):  # (a trace always masks: a later call may hold an all-NaN slice)
            return r
        return where(all_nan, static(own(np.asarray(np.nan, a.dtype))), r)
    return run


nanmax = _nan_extreme("nanmax", max, -np.inf)
nanmin = _nan_extreme("nanmin", min, np.inf)


def _cov_weight(w, name, n):
    """numpy.cov's checks of ``fweights`` / ``aweights`` (on the values); returns ``w``
    (a Tensor stays a Tensor: weights are differentiable) as float64, as numpy."""
    v = np.asarray(_value(w), dtype=float)
    if name == "fweights" and not np.all(v == np.around(v)):
        raise TypeError("fweights must be integer")
    if v.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if v.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if np.any(v < 0):
        raise ValueError(f"{name} cannot be negative")
    if not isinstance(w, Tensor):
        return v
    return w if w.dtype == np.float64 else w.astype(np.float64)  # (numpy: asarray(w, dtype=float))


@defcomposite("cov", "(X - mean) (X - mean)^T / (N - ddof): matmul of the centred rows; with "
                     "weights w = fweights * aweights, (X - avg) diag(w) (X - avg)^T / fact, "
                     "numpy's normalisation (avg the w-weighted mean, fact = sum w - ddof "
                     "sum(w aweights) / sum w)", numpy=(np.cov,))
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """``numpy.cov`` over Tensors: the covariance matrix of the rows (``rowvar=False``: the columns).

    Parameters
    ----------
    m : Tensor or array_like, 1-D or 2-D
    y : Tensor or array_like, optional
        More variables, stacked under ``m``'s.
    rowvar, bias : bool
    ddof : int, optional
        Default 1 (0 with ``bias=True``).
    fweights, aweights : Tensor or array_like, 1-D, optional
        Frequency and analytic weights; Tensors are differentiable.
    dtype : numpy dtype, optional
        The data's dtype in the computation; default ``result_type(m, y, float64)``.

    Returns
    -------
    Tensor, shape (k, k) for k variables (() for one)
        numpy's dtype: ``dtype`` without weights; with weights (always float64, as numpy's
        ``asarray(w, dtype=float)``) ``result_type(dtype, float64)``.

    Raises
    ------
    ValueError
        For ``m`` or ``y`` of more than 2 dimensions, a non-integer ``ddof`` or negative weights.
    TypeError
        For non-integer ``fweights``.
    RuntimeError
        For weights that are not 1-D or not one per observation (numpy's).

    Notes
    -----
    numpy's formula in recorded primitives: ``(X - mean)(X - mean)^H / (N - ddof)``; with weights
    ``w = fweights * aweights``, ``(X - avg) diag(w) (X - avg)^H / fact`` with numpy's ``avg`` and
    ``fact`` (``avg`` and ``sum w`` from :func:`average`, so float32 weights are summed in
    float64 as numpy does), and numpy's casts (the centred rows back to ``dtype``, ``c *= 1 / fact``
    keeping ``c``'s dtype). The gradient is the composition's. Non-positive degrees of freedom
    warn (RuntimeWarning) and divide by 0, as numpy.
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    for name, v in (("m", m), ("y", y)):  # numpy's check (a 3-D m would reach the matmul)
        if v is not None and np.ndim(_value(v)) > 2:
            raise ValueError(f"{name} has more than 2 dimensions")
    if dtype is None:  # numpy's: the data in result_type(m, y, float64), the weights in float64
        dtype = np.result_type(*(np.asarray(_value(v)).dtype for v in (m, y) if v is not None), np.float64)
    X = atleast_2d(m)
    X = X if X.dtype == dtype else X.astype(dtype)
    if not rowvar and np.ndim(_value(m)) != 1:
        X = transpose(X)
    if y is not None:
        Y = atleast_2d(y)
        Y = Y if Y.dtype == dtype else Y.astype(dtype)
        if not rowvar and Y.shape[0] != 1:
            Y = transpose(Y)
        X = concatenate(X, Y, axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = X.shape[1]
    w = None if fweights is None else _cov_weight(fweights, "fweights", n)
    aw = None if aweights is None else _cov_weight(aweights, "aweights", n)
    c = _cov_rows(X, ddof, aw if w is None else w if aw is None else w * aw, aw)
    return reshape(c, shape=tuple(d for d in c.shape if d != 1)) if 1 in c.shape else c


def _cov_rows(X, ddof, w, aw):
    """numpy.cov's computation on the rows of ``X`` (the data in its dtype; ``w`` the product of
    the float64 weights or None, ``aw`` the aweights or None), before the squeeze."""
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    if w is None:
        fact = X.shape[1] - ddof
    elif ddof == 0:
        fact = w_sum[0]
    elif aw is None:
        fact = w_sum[0] - ddof
    else:
        fact = w_sum[0] - ddof * sum(w * aw) / w_sum[0]
    if _value(fact) <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
        fact = 0
    Xc = X - avg[:, None]
    Xc = Xc if Xc.dtype == X.dtype else Xc.astype(X.dtype)  # (numpy's X -= avg keeps X's dtype)
    c = Xc @ _conj_t(Xc if w is None else Xc * w)
    # numpy's c *= 1 / fact (c keeps its dtype)
    c2 = c * (1.0 / fact if isinstance(fact, Tensor) else own(float(np.true_divide(1, fact))))
    return c2 if c2.dtype == c.dtype else c2.astype(c.dtype)


def _conj_t(x):
    """x^T, conjugated when x is complex (numpy's cov: X X^H)."""
    return conj(transpose(x)) if x.dtype.kind == "c" else transpose(x)


@defcomposite("corrcoef", "cov / (std_i std_j), clipped to [-1, 1] as numpy", numpy=(np.corrcoef,))
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """``numpy.corrcoef`` over Tensors: ``cov_ij / (std_i std_j)``.

    Parameters
    ----------
    x : Tensor or array_like, 1-D or 2-D
    y : Tensor or array_like, optional
    rowvar : bool, default True
    dtype : numpy dtype, optional

    Returns
    -------
    Tensor, shape (k, k) (() for one variable: 1.0, gradient 0)

    Raises
    ------
    ValueError, TypeError, RuntimeError
        As :func:`cov` (``x`` or ``y`` of more than 2 dimensions: ValueError).

    Notes
    -----
    Recorded :func:`cov`, ``sqrt`` of its diagonal, two divisions, and ``clip(-1, 1)`` as numpy
    (complex input: the real and imaginary parts clipped each, as numpy): the gradient is the
    composition's (clip's rule: an entry pushed beyond ±1 by rounding gets 0).
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = sqrt(diagonal(c))
    c = c / reshape(d, shape=(-1, 1))
    c = c / reshape(d, shape=(1, -1))
    if c.dtype.kind == "c":  # numpy clips the real and the imaginary parts, each to [-1, 1]
        return clip(real(c), own(-1.0), own(1.0)) + clip(imag(c), own(-1.0), own(1.0)) * own(np.asarray(1j, c.dtype))
    return clip(c, own(-1.0), own(1.0))


# --- r_ and c_: index-expression concatenation -----------------------------------------------
class _Concatenator:
    """``anp.r_[...]`` / ``anp.c_[...]`` over Tensors: slices become ranges (constants),
    the pieces are concatenated (recorded). String directives are not supported."""

    def __init__(self, columns):
        self.columns = columns

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        parts = []
        for it in items:
            if isinstance(it, str):
                raise TypeError("autoprop.numpy.r_/c_: string directives are not supported")
            if isinstance(it, _S):
                it = np.r_[it]
            t = _t(it)
            if self.columns:
                t = reshape(t, shape=(-1, 1)) if t.ndim <= 1 else t
                parts.append(t)
            else:
                parts.append(atleast_1d(t))
        return concatenate(*parts, axis=-1 if self.columns else 0)


r_ = _Concatenator(columns=False)
c_ = _Concatenator(columns=True)

