"""numpy's numerical helpers that student code calls on arrays: ``np.trapezoid``,
``np.polyval``, ``np.quantile``/``np.percentile`` (the default 'linear' method),
``np.apply_along_axis`` and ``np.float_power``, each built from recorded primitives
(``registry.defcomposite``): the derivative is the chain rule through them.
Derivations: ``lessons/10-gradient-tape.md`` (composites).
"""

from __future__ import annotations

import builtins

import numpy as np

from ..registry import defcomposite
from ._common import _check_kw, _t
from .elementwise import cast, power
from .reductions import sum  # noqa: A004
from .shape import getitem, moveaxis, reshape, stack, transpose
from .stacking import diff, sort

__all__ = ["trapezoid", "polyval", "quantile", "percentile", "apply_along_axis", "float_power"]

_S = builtins.slice


def _along(nd, axis, s):
    return (_S(None),) * (axis % nd) + (s,)


@defcomposite("trapezoid", "sum(d * (y[1:] + y[:-1]) / 2) along axis, d = dx or diff(x)",
              numpy=tuple(f for f in (getattr(np, "trapezoid", None),) if f is not None))
def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = _t(y)
    if x is None:
        d = dx
    else:
        x = _t(x)
        d = diff(x) if x.ndim == 1 else diff(x, axis=axis)
        if x.ndim == 1 and y.ndim > 1:  # numpy: a 1-D x runs along axis
            d = reshape(d, shape=tuple(-1 if i == axis % y.ndim else 1 for i in range(y.ndim)))
    pairs = getitem(y, _along(y.ndim, axis, _S(1, None))) + getitem(y, _along(y.ndim, axis, _S(None, -1)))
    return sum(d * pairs / 2.0, axis=axis)


@defcomposite("polyval", "Horner's rule y = (...(p0 x + p1) x + ...) + pn: recorded products "
                         "and sums, so p and x both get gradients", numpy=(np.polyval,))
def polyval(p, x):
    p, x = _t(p), _t(x)
    y = x * 0.0
    for i in range(p.shape[0]):
        y = y * x + getitem(p, (i,))
    return y


def _quantile(a, q, axis, keepdims, method, name):
    """numpy's 'linear' quantile: ``q`` (a Tensor too: the result is linear in it between
    order statistics) at position ``q (n - 1)`` of the sorted values over ``axis`` (None,
    an int or a tuple of axes), between the floor and the ceil order statistic."""
    if method != "linear":
        raise TypeError(f"autoprop records numpy.{name} with method='linear' (numpy's default) "
                        f"only; got method={method!r}")
    qt = _t(q)
    qv = qt.numpy()
    if np.any((qv < 0) | (qv > 1)):
        raise ValueError(f"numpy.{name}: quantiles must be in the range [0, 1]"
                         if name == "quantile" else f"numpy.{name}: percentiles must be in the range [0, 100]")
    a = _t(a)
    axes = tuple(range(a.ndim)) if axis is None else tuple(
        x % a.ndim for x in ((axis,) if np.ndim(axis) == 0 else axis))
    rest = tuple(d for d in range(a.ndim) if d not in axes)
    flat = reshape(transpose(a, axes=rest + axes), shape=tuple(a.shape[d] for d in rest) + (-1,))
    s = moveaxis(sort(flat, axis=-1), -1, 0)  # the order statistics first
    n = s.shape[0]
    lo = np.floor(qv * (n - 1)).astype(np.intp)
    hi = np.minimum(lo + 1, n - 1)
    t = reshape(qt * (n - 1) - lo, shape=qv.shape + (1,) * (s.ndim - 1))
    below, above = getitem(s, (lo,)), getitem(s, (hi,))
    r = below + (above - below) * t
    if keepdims:  # numpy keeps the reduced axes as length 1, after q's axes
        r = reshape(r, shape=qv.shape + tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)))
    return r


def _no_overwrite(name, overwrite_input):
    if overwrite_input:
        raise TypeError(f"autoprop cannot record numpy.{name}(..., overwrite_input=True): it asks "
                        "numpy to reorder the input in place, and a Tensor never changes; call "
                        f"numpy.{name} without it (the values are the same)")


@defcomposite("quantile", "linear interpolation between two order statistics of sort(a): "
                          "the gradient splits (1 - t, t) between them", numpy=(np.quantile,))
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw):
    _check_kw("quantile", dict(kw, out=out))
    _no_overwrite("quantile", overwrite_input)
    return _quantile(a, q, axis, keepdims, method, "quantile")


@defcomposite("percentile", "quantile(a, q / 100)", numpy=(np.percentile,))
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw):
    _check_kw("percentile", dict(kw, out=out))
    _no_overwrite("percentile", overwrite_input)
    return _quantile(a, _t(q) / 100.0, axis, keepdims, method, "percentile")


@defcomposite("apply_along_axis", "func1d on each 1-D slice, stacked: the chain rule through "
                                  "func1d's own recorded operations", numpy=(np.apply_along_axis,))
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
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


@defcomposite("float_power", "power in float64 (numpy's float_power): the power record on "
                             "float64 casts", numpy=(np.float_power,))
def float_power(x1, x2):
    return power(cast(_t(x1), dtype=np.dtype(np.float64)), cast(_t(x2), dtype=np.dtype(np.float64)))
