"""numpy's numerical helpers that student code calls on arrays: ``np.trapezoid``,
``np.polyval``, ``np.quantile``/``np.percentile``/``np.nanquantile``/``np.nanpercentile`` (every
method), ``np.nanmedian``, ``np.insert``, ``np.vander``, ``np.linalg.cond``, ``np.piecewise``, ``np.polyfit``,
``np.apply_along_axis``, ``np.float_power``, ``np.interp``, ``np.bincount(weights=)``,
``np.nanstd``/``nanprod``/``nancumsum``, ``np.cumulative_sum``, ``np.heaviside``,
``np.copysign``, ``np.ldexp``, ``np.block`` and ``np.compress``/``extract``/``delete``, each
built from recorded primitives
(``registry.defcomposite``): the derivative is the chain rule through them.
Derivations: ``lessons/10-gradient-tape.md`` (composites).
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import views as _views
from ..observe import OwnFloat, carries_value, own
from ..registry import defcomposite
from ..tape import refuse_traced, replayed
from ..tensor import Tensor
from ._common import _axes_tuple, _axis_index, _check_kw, _ddof, _read_values, _t, _value
from .elementwise import cast, power, where
from .linalg import matmul
from .reductions import prod, sum  # noqa: A004
from .shape import concatenate, getitem, index_add, moveaxis, ravel, reshape, stack, transpose
from .stacking import _axis_arg, _nan_fill, nanmean, sort

__all__ = ["trapezoid", "polyval", "quantile", "percentile", "nanquantile", "nanpercentile", "nanmedian", "apply_along_axis", "float_power",
           "nanprod", "nancumsum", "cumulative_sum", "heaviside", "copysign", "ldexp", "nanstd", "compress",
           "extract", "delete", "interp", "bincount", "block", "insert", "vander", "cond", "piecewise", "polyfit"]

_S = builtins.slice


def _along(nd, axis, s):
    return (_S(None),) * (axis % nd) + (s,)


_ONE = own(1.0)  # (trapezoid's default dx: autoprop's, not a value the user gave)


@defcomposite("trapezoid", "sum(d * (y[1:] + y[:-1]) / 2) along axis, d = dx or diff(x)",
              numpy=tuple(f for f in (getattr(np, "trapezoid", None),) if f is not None))
def trapezoid(y, x=None, dx=_ONE, axis=-1):
    """``numpy.trapezoid`` over Tensors: ``sum(d * (y[1:] + y[:-1]) / 2)`` along ``axis``.

    Parameters
    ----------
    y : Tensor or array_like
    x : Tensor or array_like, optional
        The sample points (1-D along ``axis``, or ``y``'s shape); ``d = diff(x)``. A Tensor gets
        its gradient.
    dx : float, default 1.0
        The spacing when ``x`` is None.
    axis : int, default -1

    Returns
    -------
    Tensor
        ``y``'s shape without ``axis``.

    Notes
    -----
    numpy's function written in recorded primitives (slices, diff, multiply, sum), so its gradient is the
    composition's. Source: ``lessons/10-gradient-tape.md`` (composites).
    """
    y = _t(y)
    if x is None:
        d = dx
    else:
        x = _t(x)
        # (numpy's dispatch: a boolean or integer x is numpy's own diff, xor for booleans)
        d = np.diff(x) if x.ndim == 1 else np.diff(x, axis=axis)
        if x.ndim == 1 and y.ndim > 1:  # numpy: a 1-D x runs along axis
            d = reshape(d, shape=tuple(-1 if i == axis % y.ndim else 1 for i in range(y.ndim)))
    pairs = getitem(y, _along(y.ndim, axis, _S(1, None))) + getitem(y, _along(y.ndim, axis, _S(None, -1)))
    return sum(d * pairs / own(2.0), axis=axis)


@defcomposite("polyval", "Horner's rule y = (...(p0 x + p1) x + ...) + pn: recorded products "
                         "and sums, so p and x both get gradients", numpy=(np.polyval,))
def polyval(p, x):
    """``numpy.polyval`` over Tensors: ``p[0] x**(n-1) + ... + p[n-1]`` by Horner's rule.

    Parameters
    ----------
    p : Tensor or array_like, 1-D
        Coefficients, highest power first.
    x : Tensor, array_like or scalar

    Returns
    -------
    Tensor
        ``x``'s shape.

    Notes
    -----
    numpy's function written in recorded primitives (Horner's products and sums), so its gradient is the
    composition's: ``p`` and ``x`` both get gradients. Source: ``lessons/10-gradient-tape.md`` (composites).
    """
    p, x = _t(p), _t(x)
    y = x * own(0.0)
    for i in range(p.shape[0]):
        y = y * x + getitem(p, (i,))
    return y


try:  # numpy's table of the 13 methods: each one's virtual index and gamma (numpy's own numbers)
    from numpy.lib._function_base_impl import _QuantileMethods as _METHODS
except ImportError:  # (an older or newer numpy: 'linear' alone, numpy's default)
    _METHODS = {"linear": {"get_virtual_index": lambda n, q: (n - 1) * q, "fix_gamma": lambda g, _: g}}
#: d(virtual index)/dq of the continuous methods (Hyndman & Fan's n + 1 - alpha - beta); the
#: others' gamma is piecewise constant in q (q gets no gradient)
_SLOPE = {"linear": lambda n: n - 1, "weibull": lambda n: n + 1, "hazen": lambda n: n,
          "interpolated_inverted_cdf": lambda n: n, "median_unbiased": lambda n: n + 1 / 3,
          "normal_unbiased": lambda n: n + 1 / 4}


def _quantile(a, q, axis, keepdims, method, name, nan=False):
    """numpy's quantile of every ``method`` (and, with ``nan``, nanquantile's: NaNs left out of
    each slice's count): the order statistics ``s`` of ``a`` over ``axis`` (None, an int or a tuple
    of axes) at numpy's virtual index ``v(n, q)``. The continuous methods ('linear', 'weibull',
    'hazen', 'interpolated_inverted_cdf', 'median_unbiased', 'normal_unbiased', and
    'averaged_inverted_cdf', 'midpoint') are ``s[lo] + gamma (s[lo + 1] - s[lo])``: the gradient
    splits ``(1 - gamma, gamma)`` between the two, and ``q`` (a Tensor too) gets
    ``(s[lo + 1] - s[lo]) dv/dq`` where gamma moves with q (not for the last two, whose gamma is
    0, 1/2 or 1). The discontinuous ones ('inverted_cdf', 'closest_observation', 'lower',
    'higher', 'nearest') pick one order statistic: its whole gradient goes to that element, as
    torch's and jax's quantile do, and q gets none. A slice holding a NaN gives NaN (nanquantile:
    an all-NaN slice), which gets no gradient."""
    refuse_traced(name, "its positions and counts come from the values, read in Python: a replay would reuse the "
                        "first call's")
    if method not in _METHODS:
        raise ValueError(f"numpy.{name}: {method!r} is not a valid method. Use one of: {tuple(_METHODS)}")
    qt = _t(q)
    qv = qt.numpy()
    a = _t(a)
    weak = isinstance(q, (int, float)) and not isinstance(q, bool)  # a Python number: numpy's weak q
    weak_q = float(q) if type(q) is OwnFloat else q  # (autoprop's q = 0.5 or 30 / 100: a Python float's dtype)
    dt = np.result_type(a.dtype, weak_q if weak else qt.dtype, np.float16)  # numpy's result dtype
    a = a if a.dtype == dt else cast(a, dtype=dt)
    if np.any((qv < 0) | (qv > 1)):
        raise ValueError(f"numpy.{name}: quantiles must be in the range [0, 1]" if "quantile" in name
                         else f"numpy.{name}: percentiles must be in the range [0, 100]")
    axes = tuple(range(a.ndim)) if axis is None else _axes_tuple(axis, a.ndim)
    rest = tuple(d for d in range(a.ndim) if d not in axes)
    flat = reshape(transpose(a, axes=rest + axes), shape=tuple(a.shape[d] for d in rest) + (-1,))
    s = moveaxis(sort(flat, axis=-1), -1, 0)  # the order statistics first (NaNs last)
    isnan = np.isnan(s._value)
    n = s.shape[0] - np.sum(isnan, axis=0) if nan else np.full(s.shape[1:], s.shape[0])
    bad = n == 0 if nan else isnan[-1] if s.shape[0] else np.ones(s.shape[1:], bool)
    qb = qv.reshape(qv.shape + (1,) * (s.ndim - 1))  # q's axes first, then the kept ones
    props = _METHODS[method]
    with np.errstate(invalid="ignore", divide="ignore"):
        v = np.asarray(props["get_virtual_index"](n, qb))
    hi_n = np.maximum(n - 1, 0)
    if props["fix_gamma"] is None:  # one order statistic
        lo = hi = np.clip(v, 0, hi_n).astype(np.intp)
        t = None
    else:
        fl = np.floor(v)
        lo = np.clip(fl, 0, hi_n).astype(np.intp)
        hi = np.clip(fl + 1, 0, hi_n).astype(np.intp)
        out = (v < 0) | (v >= n - 1)
        lo, hi = np.where(out, np.where(v < 0, 0, hi_n), lo), np.where(out, np.where(v < 0, 0, hi_n), hi)
        gamma = np.asarray(props["fix_gamma"](v - fl, v), dtype=np.float64)
        slope = _SLOPE.get(method)
        # gamma comes from n and q: autoprop's own constant unless q is a value the user gave (a float
        # or float array could be one that left the tape: it counts, as x * 0.3 does; review25a)
        t = gamma.astype(a.dtype)
        t = own(t) if isinstance(q, Tensor) or not carries_value(q) else Tensor._wrap(t)
        if slope is not None and isinstance(q, Tensor):  # gamma = v(q) - floor(v): dv/dq
            t = t + (qt - own(np.asarray(qv))).astype(a.dtype).reshape(qb.shape) * own(np.asarray(slope(n), a.dtype))
    grid = tuple(np.arange(k).reshape((-1,) + (1,) * (s.ndim - 2 - i)) for i, k in enumerate(s.shape[1:]))
    below = getitem(s, (lo,) + grid)
    if t is None:
        r = below
    else:
        above = getitem(s, (hi,) + grid)
        r = below + (above - below) * t
    if np.any(bad):
        r = where(np.broadcast_to(bad, r.shape), np.asarray(np.nan, r.dtype), r)
    if keepdims:  # numpy keeps the reduced axes as length 1, after q's axes
        r = reshape(r, shape=qv.shape + tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)))
    return r


def _no_overwrite(name, overwrite_input):
    if overwrite_input:
        raise TypeError(f"autoprop cannot record numpy.{name}(..., overwrite_input=True): it asks "
                        "numpy to reorder the input in place, and a Tensor never changes; call "
                        f"numpy.{name} without it (the values are the same)")


def _pct(q):
    """q / 100, a Python number staying one (numpy's weak scalar: float32 data stay float32)."""
    if isinstance(q, (int, float)) and not isinstance(q, bool):
        return q / 100.0 if carries_value(q) else own(q / 100.0)  # (an integer percentile: autoprop's q)
    if not isinstance(q, Tensor) and not carries_value(q):  # (integers: [10, 90])
        return own(np.asarray(q) / 100.0)
    return _t(q) / 100.0


def _q_method(name, method, kw):
    """numpy's ``method`` (or its deprecated alias ``interpolation=``); ``weights=`` refused."""
    if kw.pop("weights", None) is not None:
        raise TypeError(f"autoprop cannot record numpy.{name}(..., weights=...): numpy's weighted "
                        "quantile (method='inverted_cdf' only) is not recorded; repeat the samples "
                        f"(np.repeat is recorded) or call numpy.{name} without weights")
    interpolation = kw.pop("interpolation", None)
    _check_kw(name, kw)
    return method if interpolation is None else interpolation


_QDOC = ("numpy's virtual index v(n, q) of each method: s[floor v] + gamma (s[floor v + 1] - s[floor v]) for "
         "the continuous methods, the one order statistic s[v] for inverted_cdf, closest_observation, "
         "lower, higher, nearest (its whole gradient to that element, as torch and jax)")


@defcomposite("quantile", _QDOC, numpy=(np.quantile,))
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw):
    """``numpy.quantile`` on Tensors, every ``method`` numpy has.

    Parameters
    ----------
    a, q, axis, keepdims, method
        As numpy's (``q`` a Tensor too: the continuous methods are linear in it between order
        statistics). ``out=``, ``overwrite_input=True`` and ``weights=`` are refused.

    Returns
    -------
    Tensor with numpy's shape and ``a``'s float dtype.

    Notes
    -----
    The continuous methods ('linear', 'weibull', 'hazen', 'interpolated_inverted_cdf',
    'median_unbiased', 'normal_unbiased', 'averaged_inverted_cdf', 'midpoint') interpolate between
    two order statistics: the gradient splits ``(1 - gamma, gamma)`` between them. The
    discontinuous ones ('inverted_cdf', 'closest_observation', 'lower', 'higher', 'nearest') pick
    one element of the sorted values: its whole gradient goes to that element (the first of tied
    values in numpy's sort order), as torch's and jax's do. A slice holding a NaN is NaN, with no
    gradient.
    """
    method = _q_method("quantile", method, dict(kw, out=out))
    _no_overwrite("quantile", overwrite_input)
    return _quantile(a, q, axis, keepdims, method, "quantile")


@defcomposite("percentile", "quantile(a, q / 100)", numpy=(np.percentile,))
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw):
    """``numpy.percentile`` on Tensors: :func:`quantile` of ``q / 100`` (every method)."""
    method = _q_method("percentile", method, dict(kw, out=out))
    _no_overwrite("percentile", overwrite_input)
    return _quantile(a, _pct(q), axis, keepdims, method, "percentile")


@defcomposite("nanquantile", "quantile of each slice's non-NaN values (their count n): NaNs get no "
                             "gradient", numpy=(np.nanquantile,))
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw):
    """``numpy.nanquantile`` on Tensors: :func:`quantile` (every method) of each slice's values
    that are not NaN; an all-NaN slice is NaN (no gradient). NaNs get no gradient."""
    method = _q_method("nanquantile", method, dict(kw, out=out))
    _no_overwrite("nanquantile", overwrite_input)
    return _quantile(a, q, axis, keepdims, method, "nanquantile", nan=True)


@defcomposite("nanpercentile", "nanquantile(a, q / 100)", numpy=(np.nanpercentile,))
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw):
    """``numpy.nanpercentile`` on Tensors: :func:`nanquantile` of ``q / 100``."""
    method = _q_method("nanpercentile", method, dict(kw, out=out))
    _no_overwrite("nanpercentile", overwrite_input)
    return _quantile(a, _pct(q), axis, keepdims, method, "nanpercentile", nan=True)


@defcomposite("nanmedian", "the mean of the middle non-NaN element(s) of each slice: nanquantile 0.5",
              numpy=(np.nanmedian,))
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``numpy.nanmedian`` on Tensors: the middle (or the mean of the two middle) non-NaN values of
    each slice, half the gradient to each of two; an all-NaN slice is NaN (no gradient)."""
    _check_kw("nanmedian", {"out": out})
    _no_overwrite("nanmedian", overwrite_input)
    return _quantile(a, own(0.5), _axis_arg(axis), keepdims, "linear", "nanmedian", nan=True)


@defcomposite("apply_along_axis", "func1d on each 1-D slice, stacked: the chain rule through "
                                  "func1d's own recorded operations", numpy=(np.apply_along_axis,))
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``numpy.apply_along_axis`` over Tensors: ``func1d`` on every 1-D slice along ``axis``, stacked.

    Parameters
    ----------
    func1d : callable
        Called with a 1-D Tensor (then ``*args, **kwargs``); it is differentiated through the
        operations it records, as any code on Tensors.
    axis : int
    arr : Tensor or array_like
    *args, **kwargs
        Passed to ``func1d``.

    Returns
    -------
    Tensor
        ``func1d``'s result axes put where ``axis`` was (numpy's rule).

    Raises
    ------
    ValueError
        When an axis other than ``axis`` has length 0 (as numpy).

    Notes
    -----
    numpy's function written in recorded primitives (moveaxis, getitem, stack, reshape, transpose, and func1d's own), so its gradient is the
    composition's. Source: ``lessons/10-gradient-tape.md`` (composites).
    """
    arr = _t(arr)
    ax = axis % arr.ndim
    moved = moveaxis(arr, ax, -1)
    lead = moved.shape[:-1]
    outs = [_t(func1d(getitem(moved, idx), *args, **kwargs)) for idx in np.ndindex(*lead)]
    if not outs:
        raise ValueError("numpy.apply_along_axis: cannot apply_along_axis when any iteration "
                         "dimensions are 0")
    res = reshape(stack(outs), shape=lead + outs[0].shape)
    r = outs[0].ndim
    if r == 0:
        return res
    nl = len(lead)  # numpy puts func1d's axes where axis was
    return transpose(res, axes=tuple(range(ax)) + tuple(range(nl, nl + r)) + tuple(range(ax, nl)))


@defcomposite("float_power", "power in float64, or complex128 for a complex input (numpy's float_power): the "
                             "power record on casts", numpy=(np.float_power,))
def float_power(x1, x2):
    """``numpy.float_power`` over Tensors: ``x1 ** x2`` computed in float64 (complex128 if either is complex).

    Parameters
    ----------
    x1, x2 : Tensor, array_like or scalar
        numpy's ``dtype=complex`` reaches here as complex inputs (the ufunc dispatch casts them, recorded).

    Returns
    -------
    Tensor, float64 or complex128 (numpy's loops ``dd->d``, ``DD->D``), the broadcast shape

    Notes
    -----
    The recorded ``power`` of casts to numpy's loop dtype (numpy's definition), so the gradient is
    power's (``d/dx1 = x2 x1**(x2-1)``, ``d/dx2 = x1**x2 log x1``; holomorphic for complex values, the
    convention of every complex record: ``ap.explain('power')``) cast back to each input's dtype.
    """
    x1, x2 = _t(x1), _t(x2)
    dt = np.dtype(np.complex128 if "c" in (x1.dtype.kind, x2.dtype.kind) else np.float64)
    return power(cast(x1, dtype=dt), cast(x2, dtype=dt))


# --- more numpy names (session 18): each the recorded functions numpy's documentation defines
# it by (jax.numpy differentiates the same) -----------------------------------------------
@defcomposite("nanprod", "prod(where(isnan(x), 1, x)): NaNs get no gradient", numpy=(np.nanprod,))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    """``numpy.nanprod`` over Tensors: the product with NaNs counted as 1.

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
    numpy's function written in recorded primitives (``prod(where(isnan(x), 1, x))``), so its gradient is the
    composition's: the NaNs get gradient 0. Source: ``lessons/10-gradient-tape.md`` (composites).
    """
    _check_kw("nanprod", dict(kw, out=out, dtype=dtype))
    return prod(_nan_fill(a, 1.0), axis=_axis_arg(axis), keepdims=bool(keepdims))


@defcomposite("nancumsum", "cumsum(where(isnan(x), 0, x)): NaNs get no gradient", numpy=(np.nancumsum,))
def nancumsum(a, axis=None, dtype=None, out=None):
    """``numpy.nancumsum`` over Tensors: the running sum with NaNs counted as 0.

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
    numpy's function written in recorded primitives (``cumsum(where(isnan(x), 0, x))``), so its gradient is the
    composition's: the NaNs get gradient 0. Source: ``lessons/10-gradient-tape.md`` (composites).
    """
    _check_kw("nancumsum", dict(out=out, dtype=dtype))
    return np.cumsum(_nan_fill(a, 0.0), axis=axis)


def cumulative(name, x, axis, include_initial, cum, initial):
    """numpy 2's ``cumulative_sum``/``cumulative_prod`` over a recorded ``cum`` (np.cumsum,
    cumprod): ``axis`` required beyond 1-D (as numpy), ``include_initial`` a leading slice of
    ``initial`` (0 or 1, a constant) along ``axis``. The one place of their argument handling."""
    x = _t(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"numpy.{name}: axis is required for a {x.ndim}-D array "
                             f"(shape {x.shape}), as numpy's")
        axis = 0
    c = cum(x, axis=_axis_index(axis, x.ndim))
    if not include_initial:
        return c
    shape = list(x.shape)
    shape[axis] = 1
    return concatenate(Tensor._wrap(np.full(shape, initial, x.dtype)), c, axis=axis)


@defcomposite("cumulative_sum", "cumsum along axis, with a leading 0 for include_initial=True "
                                "(numpy 2's name)", numpy=tuple(f for f in [getattr(np, "cumulative_sum", None)] if f))
def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """``numpy.cumulative_sum`` (numpy 2) over Tensors: ``cumsum`` along ``axis``.

    Parameters
    ----------
    x : Tensor or array_like
    axis : int, optional
        Required beyond 1-D, as numpy.
    include_initial : bool, default False
        A leading slice of zeros along ``axis`` (a constant: no gradient).

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
    numpy's function written in recorded primitives (cumsum, concatenate), so its gradient is the
    composition's. Source: ``lessons/10-gradient-tape.md`` (composites).
    """
    _check_kw("cumulative_sum", dict(out=out, dtype=dtype))
    return cumulative("cumulative_sum", x, axis, include_initial, np.cumsum, 0)


@defcomposite("heaviside", "where(x1 < 0, 0, where(x1 > 0, 1, x2)), NaN at NaN: d/dx1 = 0, "
                           "d/dx2 = 1 where x1 = 0", numpy=(np.heaviside,))
def heaviside(x1, x2, /, out=None, **kw):
    """``numpy.heaviside`` over Tensors: 0 where ``x1 < 0``, 1 where ``x1 > 0``, ``x2`` where ``x1 == 0``.

    Parameters
    ----------
    x1 : Tensor or array_like
        Gets gradient 0 everywhere (a zero array, not None: the step is piecewise constant and its
        jump at 0 has no derivative).
    x2 : Tensor, array_like or scalar
        Gets ``g`` where ``x1 == 0``, 0 elsewhere.

    Returns
    -------
    Tensor
        The broadcast shape; NaN where ``x1`` is NaN (as numpy).

    Raises
    ------
    TypeError
        For ``out=`` and other ufunc options.

    Notes
    -----
    A recorded ``where`` of ``x2`` and numpy's own step values.
    """
    _check_kw("heaviside", dict(kw, out=out))
    x1, x2 = _t(x1), _t(x2)
    v = x1._value
    step = np.heaviside(v, np.zeros((), np.result_type(v, x2.dtype)))  # 0, 1 or NaN, exactly
    out = _connected(where(v == 0, x2 + np.zeros_like(step), step), x1)
    return _views.layout_as(out, np.heaviside(v, x2._value))  # (numpy's layout: tape44 H1)


def _connected(out, x):
    """``out``, with ``x`` recorded as an input of zero derivative (a where that never picks it):
    a source used with derivative 0 gets zeros, not None (None: unconnected), as TF, torch, jax."""
    if not isinstance(x, Tensor) or x.dtype.kind not in "fc":
        return out
    return where(np.zeros(out.shape, bool), x, out)


@defcomposite("copysign", "|x1| * (-1 where x2's sign bit is set, else 1): d/dx1 = that sign "
                          "times sign(x1), d/dx2 = 0", numpy=(np.copysign,))
def copysign(x1, x2, /, out=None, **kw):
    """``numpy.copysign`` over Tensors: ``|x1|`` with the sign of ``x2`` (its sign bit: ``-0.0`` is
    negative).

    Parameters
    ----------
    x1, x2 : Tensor, array_like or scalar

    Returns
    -------
    Tensor
        The broadcast shape.

    Raises
    ------
    TypeError
        For ``out=`` and other ufunc options.

    Notes
    -----
    Recorded ``absolute(x1) * s`` with ``s = -1`` where ``x2``'s sign bit is set, else 1 (a constant):
    ``d/dx1 = s sign(x1)``, 0 at ``x1 = 0`` (abs's rule ``abs'(0) = 0``); ``x2`` gets gradient 0
    (a zero array), its sign being piecewise constant.
    """
    _check_kw("copysign", dict(kw, out=out))
    x1, x2 = _t(x1), _t(x2)
    s = own(np.where(np.signbit(x2._value), -1.0, 1.0).astype(np.result_type(x1.dtype, x2.dtype, np.float16)))
    return _views.layout_as(_connected(np.abs(x1) * s, x2), np.copysign(x1._value, x2._value))  # (tape44 H1)


@defcomposite("ldexp", "x1 * 2**x2 (x2 an integer exponent, no gradient)", numpy=(np.ldexp,))
def ldexp(x1, x2, /, out=None, **kw):
    """``numpy.ldexp`` over Tensors: ``x1 * 2**x2``.

    Parameters
    ----------
    x1 : Tensor or array_like
    x2 : array_like of int
        The exponents (integers, no gradient).

    Returns
    -------
    Tensor
        The broadcast shape; ``x1``'s float dtype.

    Raises
    ------
    TypeError
        If ``x2`` is not integer (numpy refuses it too), or for ``out=``.

    Notes
    -----
    The recorded ``multiply`` of ``x1`` by the constant ``2**x2``: ``d/dx1 = 2**x2``.
    """
    _check_kw("ldexp", dict(kw, out=out))
    x1, x2 = _t(x1), _value(x2)
    if np.asarray(x2).dtype.kind not in "iub":
        raise TypeError(f"numpy.ldexp: the exponent x2 must be integers, as numpy's; got {np.asarray(x2).dtype}")
    return x1 * own(np.ldexp(np.ones((), np.result_type(x1.dtype, np.float16)), x2))


@defcomposite("nanstd", "norm(x - nanmean(x), NaNs as 0) / sqrt(count - ddof): NaNs get no "
                        "gradient; the norm's subgradient 0 at zero spread", numpy=(np.nanstd,))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    """``numpy.nanstd`` over Tensors: the standard deviation of the elements that are not NaN.

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
        The reduced shape, real (a complex input gives a real std).

    Raises
    ------
    TypeError
        For ``out=``, ``dtype=`` and other options without a recorded derivative.
    ValueError
        For both ``ddof`` and ``correction``.

    Notes
    -----
    ``norm(x - nanmean(x), NaNs as 0) / sqrt(count - ddof)`` in recorded primitives: the NaNs get
    gradient 0; where the spread is exactly 0 the norm's subgradient 0 applies (0, never NaN).
    """
    ddof = _ddof(ddof, kw)
    _check_kw("nanstd", dict(kw, out=out, dtype=dtype))
    a, axis = _t(a), _axis_arg(axis)
    d = _nan_fill(a - nanmean(a, axis=axis, keepdims=True), 0.0)

    def den(v):  # sqrt(count - ddof) from the values: each autoprop.function replay's own (tape.replayed; issue 15)
        count = np.sum(~np.isnan(v), axis=axis, keepdims=bool(keepdims))
        return own(np.asarray(np.sqrt(np.maximum(count - ddof, 0))).astype(np.zeros(0, a.dtype).real.dtype))  # (complex: real)
    return np.linalg.norm(d, axis=None if a.ndim == 0 else axis,  # (norm has no axis 0 at 0-d)
                          keepdims=bool(keepdims)) / (replayed(den, a) if type(ddof) in (int, float) else den(a._value))


@defcomposite("compress", "take(x, nonzero(condition), axis) (flattened for axis=None)",
              numpy=(np.compress,), methods=("compress",))
def compress(condition, a, axis=None, out=None):
    """``numpy.compress`` over Tensors: the slices along ``axis`` where ``condition`` is true.

    Parameters
    ----------
    condition : 1-D array_like of bool (values; no gradient)
    a : Tensor or array_like
    axis : int, optional
        None: of the flattened array.

    Returns
    -------
    Tensor

    Raises
    ------
    TypeError
        For ``out=``.

    Notes
    -----
    numpy's function written in recorded primitives (ravel, take), so its gradient is the
    composition's: the kept elements get ``g``, the others 0. Source: ``lessons/10-gradient-tape.md`` (composites).
    """
    _check_kw("compress", {"out": out})
    _read_values("compress", (condition,))  # the kept count sets the result's shape
    a = _t(a)
    idx = np.nonzero(np.asarray(_value(condition)).ravel())[0]
    return np.take(a if axis is not None else ravel(a), idx, axis=axis if axis is not None else 0)


@defcomposite("extract", "take(ravel(x), nonzero(ravel(condition)))", numpy=(np.extract,))
def extract(condition, arr):
    """``numpy.extract`` over Tensors: ``ravel(arr)[ravel(condition) != 0]``.

    Parameters
    ----------
    condition : array_like (values; no gradient)
    arr : Tensor or array_like

    Returns
    -------
    Tensor, 1-D

    Notes
    -----
    numpy's function written in recorded primitives (ravel, take), so its gradient is the
    composition's: the picked elements get ``g``, the others 0. Source: ``lessons/10-gradient-tape.md`` (composites).
    """
    _read_values("extract", (condition,))
    return compress(np.asarray(_value(condition)).ravel(), ravel(_t(arr)))


@defcomposite("delete", "take(x, the positions numpy keeps, axis) (flattened for axis=None)",
              numpy=(np.delete,))
def delete(arr, obj, axis=None):
    """``numpy.delete`` over Tensors: ``arr`` without the entries ``obj`` along ``axis``.

    Parameters
    ----------
    arr : Tensor or array_like
    obj : int, slice or array_like of int
    axis : int, optional
        None: of the flattened array.

    Returns
    -------
    Tensor

    Raises
    ------
    numpy.exceptions.AxisError, IndexError
        As numpy (it computes the kept positions).

    Notes
    -----
    numpy's function written in recorded primitives (ravel, take at the positions numpy keeps), so its gradient is the
    composition's: the deleted entries get gradient 0. Source: ``lessons/10-gradient-tape.md`` (composites).
    """
    a = _t(arr)
    a, axis = (ravel(a), 0) if axis is None else (a, _axis_index(axis, builtins.max(a.ndim, 1)))
    keep = np.delete(np.arange(a.shape[axis]), _value(obj))
    return np.take(a, keep, axis=axis)


_F64 = np.dtype(np.float64)


@defcomposite("interp", "fp[j] + slope_j (x - xp[j]) on xp's interval j, fp[0] / fp[-1] (or "
                        "left / right) outside: gradients to x, xp and fp", numpy=(np.interp,))
def interp(x, xp, fp, left=None, right=None, period=None):
    """``numpy.interp`` over Tensors: piecewise-linear interpolation of ``(xp, fp)`` at ``x``.

    Parameters
    ----------
    x : Tensor or array_like
    xp : Tensor or array_like, 1-D, increasing, at least 2 points
    fp : Tensor or array_like, ``xp``'s shape
    left, right : Tensor or scalar, optional
        The values below ``xp[0]`` and above ``xp[-1]`` (default ``fp[0]``, ``fp[-1]``).

    Returns
    -------
    Tensor
        ``x``'s shape; float64 (complex128 for a complex ``fp``) as numpy's, whatever the
        inputs' dtypes (float32 inputs are cast first, recorded).

    Raises
    ------
    TypeError
        For ``period=`` (unwrap ``x`` first).
    ValueError
        If ``xp`` and ``fp`` are not 1-D of one length of at least 2.

    Notes
    -----
    ``fp[j] + (fp[j+1] - fp[j]) / (xp[j+1] - xp[j]) (x - xp[j])`` on ``xp``'s interval j, written
    in recorded primitives: ``x``, ``xp`` and ``fp`` all get gradients. Kinks: at an inner knot
    ``x == xp[j]`` ``x`` gets the slope of the interval to its right; at ``x == xp[-1]`` and
    outside ``[xp[0], xp[-1]]`` it gets 0 (the value is ``fp[-1]``, ``left`` or ``right``).
    """
    refuse_traced("interp", "the interval of each x is found from the values (np.searchsorted), read in Python: "
                            "a replay would reuse the first call's")
    if period is not None:
        raise TypeError("autoprop cannot record numpy.interp(..., period=...); unwrap x first "
                        "(np.mod and np.concatenate are recorded)")
    # numpy computes in float64 (complex128 for a complex fp), whatever the inputs' dtypes
    x, xp, fp = (a if a.dtype == dt else a.astype(dt) for a, dt in (
        (_t(x), _F64), (_t(xp), _F64), (_t(fp), np.dtype(np.complex128 if _t(fp).dtype.kind == "c" else _F64))))
    if xp.ndim != 1 or fp.shape != xp.shape or xp.size < 2:
        raise ValueError(f"numpy.interp: xp and fp must be 1-D of one length (>= 2 here); got "
                         f"shapes {xp.shape} and {fp.shape}")
    j = np.clip(np.searchsorted(xp._value, x._value, side="right") - 1, 0, xp.size - 2)
    x0, f0 = np.take(xp, j), np.take(fp, j)
    y = (np.take(fp, j + 1) - f0) / (np.take(xp, j + 1) - x0) * (x - x0) + f0
    lo = fp[0] if left is None else _t(left).astype(y.dtype)
    hi = fp[-1] if right is None else _t(right).astype(y.dtype)
    y = where(x._value == xp._value[-1], fp[-1] + np.zeros(y.shape, y.dtype), y)
    return where(x._value < xp._value[0], lo + np.zeros(y.shape, y.dtype),
                 where(x._value > xp._value[-1], hi + np.zeros(y.shape, y.dtype), y))


@defcomposite("bincount", "index_add of weights at x (repeats accumulate): dweights = g[x]; "
                          "without weights, integer counts (no gradient)", numpy=(np.bincount,))
def bincount(x, /, weights=None, minlength=0):
    """``numpy.bincount`` over Tensors: the weighted count of each non-negative integer in ``x``.

    Parameters
    ----------
    x : array_like of non-negative int (values; no gradient)
    weights : Tensor or array_like, ``x``'s shape, optional
        Differentiable: ``d counts[k] / d weights[i] = 1`` where ``x[i] == k``.
    minlength : int, default 0

    Returns
    -------
    Tensor, float64, shape (max(max(x) + 1, minlength),) with weights; without weights numpy's
    integer counts (no gradient).

    Raises
    ------
    ValueError
        If ``weights`` does not have ``x``'s shape, or as numpy (negative ``x``).

    Notes
    -----
    The recorded ``index_add`` of the weights at ``x`` (repeats accumulate): ``dweights = g[x]``.
    """
    xv = np.asarray(_value(x))
    counts = np.bincount(xv, minlength=minlength)  # numpy's checks and length
    if weights is None:
        return counts
    w = _t(weights)
    if w.shape != xv.shape:
        raise ValueError(f"numpy.bincount: weights must have x's shape {xv.shape}; got {w.shape}")
    w = w.astype(np.float64) if w.dtype != np.float64 else w  # numpy's weighted counts are float64
    return index_add(w, key=(xv,), shape=counts.shape)


@defcomposite("block", "concatenate of the nested lists, the innermost along the last axis (each "
                       "leaf first given numpy's leading axes of length 1)", numpy=(np.block,))
def block(arrays):
    """``numpy.block`` over Tensors: one array assembled from nested lists of blocks.

    Parameters
    ----------
    arrays : Tensor, array_like, or nested lists of them
        The innermost lists are joined along the last axis, the next ones along the one before.

    Returns
    -------
    Tensor
        numpy's shape: every leaf first given leading axes of length 1 up to the largest ndim.

    Raises
    ------
    TypeError
        For tuples in the nesting (as numpy).
    ValueError
        If the blocks' shapes do not fit.

    Notes
    -----
    numpy's function written in recorded primitives (reshape, concatenate), so its gradient is the
    composition's: each block gets its slice of ``g``. Source: ``lessons/10-gradient-tape.md`` (composites).
    """
    def depth(x):
        if isinstance(x, tuple):
            raise TypeError("numpy.block: tuples are not allowed in the nesting, as numpy's; use lists")
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0

    levels = depth(arrays)

    def leaves(x):
        return [leaf for e in x for leaf in leaves(e)] if isinstance(x, list) else [_t(x)]
    ndim = builtins.max([levels] + [leaf.ndim for leaf in leaves(arrays)])

    def build(x, level):
        if not isinstance(x, list):
            x = _t(x)
            return reshape(x, shape=(1,) * (ndim - x.ndim) + x.shape)
        return concatenate(*[build(e, level + 1) for e in x], axis=level - levels)
    return build(arrays, 0)


# --- more numpy names (session 19, tester 18's refusals) -----------------------------------------
@defcomposite("insert", "take(concatenate(ravel(arr), ravel(values)), the positions numpy's own insert "
                        "puts them at): arr's entries and values' (each copy) get their gradients",
              numpy=(np.insert,))
def insert(arr, obj, values, axis=None):
    """``numpy.insert`` on Tensors (``values`` a Tensor too), as a gather: numpy's own insert run
    on the positions of ``arr`` and codes of ``values`` (so its broadcasting and ordering rules
    hold); ``values`` are cast to ``arr``'s dtype, as numpy does. A value broadcast to several
    places gets the sum of their gradients."""
    a = _t(arr)
    v = _t(values)
    v = v if v.dtype == a.dtype else cast(v, dtype=a.dtype)
    pos = np.arange(a.size).reshape(a.shape)
    codes = -1 - np.arange(v.size).reshape(v.shape)
    idx = np.insert(pos, _value(obj), codes, axis=axis)
    flat = concatenate(ravel(a), ravel(v), axis=0)
    return getitem(flat, (np.where(idx >= 0, idx, a.size - 1 - idx),))


@defcomposite("vander", "columns x**k as running products (numpy's multiply.accumulate), decreasing "
                        "powers unless increasing=True", numpy=(np.vander,))
def vander(x, N=None, increasing=False):
    """``numpy.vander`` on a 1-D Tensor: the columns ``x**k``, ``k = 0..N-1``, as running products
    ``1, x, x*x, ...`` (numpy's own multiply.accumulate: the same values; no 0 * inf at x = 0)."""
    x = _t(x)
    if x.ndim != 1:
        raise ValueError(f"numpy.vander: x must be a one-dimensional array or sequence; got shape {x.shape}")
    n = x.shape[0] if N is None else int(N)
    if x.dtype != np.promote_types(x.dtype, int):  # numpy's dtype: float32 gives float64
        x = x.astype(np.promote_types(x.dtype, int))
    cols, c = [], own(np.ones(x.shape, x.dtype))  # (autoprop's constant: no escape check counts it)
    for _ in range(n):
        cols.append(c)
        c = c * x
    v = stack(cols, axis=1) if cols else Tensor._wrap(np.ones((x.shape[0], 0), x.dtype))
    v = v if isinstance(v, Tensor) else Tensor._wrap(np.asarray(v))  # (N=1: the ones alone)
    return v if increasing else getitem(v, (_S(None), _S(None, None, -1)))


@defcomposite("cond", "p None/2/-2: s_max / s_min (or its inverse) of svdvals(x); other p: "
                      "norm(x, p) * norm(inv(x), p): the chain rule through svdvals, inv and norm",
              numpy=(np.linalg.cond,))
def cond(x, p=None):
    """``numpy.linalg.cond`` on Tensors, every ``p`` numpy accepts.

    Parameters
    ----------
    x : Tensor (..., M, N)
        Square for p other than None, 2, -2.
    p : {None, 2, -2, 'fro', 'nuc', 1, -1, inf, -inf}

    Returns
    -------
    Tensor (...): numpy's value.

    Raises
    ------
    ValueError
        For a singular matrix with p other than None/2/-2: numpy's value is inf, whose derivative
        is undefined (with p None/2/-2 a singular matrix gives inf too, recorded as s_max / 0).
    """
    x = _t(x)
    if p is None or p in (2, -2):
        s = np.linalg.svd(x, compute_uv=False)
        big, small = getitem(s, (Ellipsis, 0)), getitem(s, (Ellipsis, -1))
        with np.errstate(divide="ignore", invalid="ignore"):
            return small / big if p == -2 else big / small
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if np.any(~np.isfinite(np.linalg.cond(x._value, p))):
        raise ValueError(f"numpy.linalg.cond(x, p={p!r}) of a singular matrix is inf: its derivative "
                         "is undefined, so autoprop cannot record it (p=None, 2 or -2 give inf via "
                         "the singular values)")
    return np.linalg.norm(x, p, axis=(-2, -1)) * np.linalg.norm(np.linalg.inv(x), p, axis=(-2, -1))


@defcomposite("piecewise", "where(cond_k, f_k(x[cond_k]) scattered back, ...), later conditions over "
                           "earlier ones; 0 elsewhere: each f_k's own recorded operations",
              numpy=(np.piecewise,))
def piecewise(x, condlist, funclist, *args, **kw):
    """``numpy.piecewise`` on a Tensor ``x``: each ``f_k`` (a callable, run on the Tensor
    ``x[cond_k]`` as numpy runs it, or a constant) on the entries its condition selects; numpy's
    rules (one more function than conditions: the 'otherwise' one; a later condition wins).

    The conditions are constants (boolean arrays, or comparisons of Tensors: their values);
    entries no condition selects are 0 and get no gradient.
    """
    x = _t(x)
    cl = [_value(c) for c in condlist] if isinstance(condlist, (list, tuple)) else _value(condlist)
    if np.isscalar(cl) or (not isinstance(cl[0], (list, np.ndarray)) and x.ndim != 0):  # numpy's rule
        cl = [cl]
    conds = list(np.asarray(cl, dtype=bool))
    if len(funclist) == len(conds) + 1:
        conds.append(~np.any(conds, axis=0))
    elif len(funclist) != len(conds):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or {len(conds) + 1} "
                         "functions are expected")
    y = Tensor._wrap(np.zeros(x.shape, x.dtype))
    for c, f in zip(conds, funclist):
        if not np.any(c):
            continue
        key = np.nonzero(c) if x.ndim else ()
        vals = _t(f(getitem(x, key), *args, **kw)) if callable(f) else _t(np.asarray(_value(f), x.dtype))
        vals = vals if vals.dtype == x.dtype else cast(vals, dtype=x.dtype)
        if vals.shape != (key[0].size,) if x.ndim else vals.shape != ():
            vals = reshape(vals + np.zeros((key[0].size,) if x.ndim else (), x.dtype), shape=(-1,) if x.ndim else ())
        placed = index_add(vals, key=key, shape=x.shape) if x.ndim else vals
        y = where(c, placed, y)
    return y


@defcomposite("polyfit", "numpy's scaled least squares: lstsq(vander(x, deg + 1) w / scale, y w) / "
                         "scale; cov= inv(lhs.T lhs) / outer(scale, scale) times resid / (n - order)",
              numpy=(np.polyfit,))
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """``numpy.polyfit`` on Tensors (``x``, ``y`` and ``w`` all differentiable), numpy's steps: the
    columns of ``vander(x, deg + 1)`` (times ``w``) scaled to unit norm, ``lstsq`` (the recorded
    pinv solution, exact for a full-rank fit), the coefficients unscaled; ``full=True`` returns
    numpy's ``(c, residuals, rank, s, rcond)``, ``cov=True`` (or 'unscaled') ``(c, V)``.

    Raises
    ------
    ValueError
        For numpy's bad input (deg < 0, x not 1-D, ...), and for a rank-deficient fit, whose
        coefficients numpy picks with a cut-off: their derivative is undefined there.
    """
    order = int(deg) + 1
    x, y = _t(x), _t(y)
    if deg < 0 or x.ndim != 1 or x.shape[0] == 0 or y.ndim not in (1, 2) or x.shape[0] != y.shape[0]:
        np.polyfit(x._value, y._value, deg)  # numpy's own error
    dt = np.result_type(x.dtype, y.dtype, np.float64) if x.dtype.kind != "f" or y.dtype.kind != "f" \
        else np.result_type(x.dtype, y.dtype)
    x, y = (cast(t, dtype=dt) if t.dtype != dt else t for t in (x, y))
    if rcond is None:
        rcond = x.shape[0] * np.finfo(dt).eps
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = _t(w)
        if w.ndim != 1 or w.shape[0] != y.shape[0]:
            raise TypeError("expected a 1-d array for weights" if w.ndim != 1 else
                            "expected w and y to have the same length")
        lhs = lhs * reshape(w, shape=(-1, 1))
        rhs = rhs * (reshape(w, shape=(-1, 1)) if rhs.ndim == 2 else w)
    scale = np.sqrt(sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = np.linalg.lstsq(lhs, rhs, rcond=rcond)
    if rank != order:
        raise ValueError(f"numpy.polyfit: the fit of degree {deg} is rank-deficient (rank {rank} < "
                         f"{order}): numpy's coefficients then depend on its cut-off and their "
                         "derivative is undefined; lower deg or use more distinct x")
    c = transpose(transpose(c) / scale)
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    vbase = np.linalg.inv(matmul(transpose(lhs), lhs)) / (reshape(scale, shape=(-1, 1)) * scale)
    if cov == "unscaled":
        fac = 1.0
    else:
        if x.shape[0] <= order:
            raise ValueError("the number of data points must exceed order to scale the covariance matrix")
        fac = resids / (x.shape[0] - order)
    if y.ndim == 1:
        return c, vbase * fac
    return c, reshape(vbase, shape=vbase.shape + (1,)) * fac
