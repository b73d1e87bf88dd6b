"""numpy 2's array-API names, as composites of the records of the other families.

``numpy.linalg.matmul``, ``trace``, ``diagonal``, ``outer``, ``cross``, ``vecdot``,
``matrix_transpose`` and ``tensordot``, and ``numpy.vecdot``, ``matrix_transpose``,
``matvec`` and ``vecmat``: the same operations as the older numpy names, with the array
API's conventions (matrices are the *last* two axes, vectors the last axis, options
keyword-only). Their derivatives are the chain rule through the records they call
(``lessons/10-gradient-tape.md``); each name exists only where the installed numpy has it.
"""

from __future__ import annotations

import numpy as np

from ..registry import defcomposite
from ._common import _check_kw, _t
from .elementwise import multiply
from .linalg import _np_tensordot, matmul, outer
from .reductions import sum
from .shape import getitem, reshape, transpose
from .special import conj
from .stacking import cross, diagonal

__all__ = []


def _define(name, numpy_fn, formula, impl):
    """Register ``impl`` for ``numpy_fn`` when this numpy has it; list it in ``__all__``."""
    if numpy_fn is None:
        return
    key = "array_api_" + name.replace(".", "_")
    globals()[key] = defcomposite(key, formula, numpy=(numpy_fn,))(impl)
    __all__.append(key)


def _matrix(name, x):
    x = _t(x)
    if x.ndim < 2:
        raise ValueError(f"numpy.{name}: x must have at least 2 axes (a stack of matrices); "
                         f"got shape {x.shape}")
    return x


def _swap_last(x):
    axes = list(range(x.ndim))
    axes[-2:] = axes[-1], axes[-2]
    return transpose(x, axes=tuple(axes))


def _conj1(x1, x2):
    """``conj(x1), x2`` as Tensors: numpy's vecdot and vecmat conjugate x1 (a no-op when real)."""
    x1, x2 = _t(x1), _t(x2)
    return (conj(x1) if x1.dtype.kind == "c" else x1), x2


def _vecdot(x1, x2, /, *, axis=-1, **kw):
    _check_kw("vecdot", kw)
    x1, x2 = _conj1(x1, x2)
    return sum(multiply(x1, x2), axis=axis)


def _matrix_transpose(x, /):
    return _swap_last(_matrix("matrix_transpose", x))


def _matvec(x1, x2, /, **kw):  # (..., m, n) @ (..., n) -> (..., m)
    _check_kw("matvec", kw)
    x1, x2 = _t(x1), _t(x2)  # (no conjugate: matvec is x1 @ x2)
    return getitem(matmul(x1, reshape(x2, shape=(*x2.shape, 1))), key=(Ellipsis, 0))


def _vecmat(x1, x2, /, **kw):  # (..., n) @ (..., n, m) -> (..., m)
    _check_kw("vecmat", kw)
    x1, x2 = _conj1(x1, x2)
    return getitem(matmul(reshape(x1, shape=(*x1.shape[:-1], 1, x1.shape[-1])), x2),
                   key=(Ellipsis, 0, slice(None)))


def _linalg_trace(x, /, *, offset=0, dtype=None):
    _check_kw("linalg.trace", {"dtype": dtype})
    return sum(diagonal(_matrix("linalg.trace", x), offset, -2, -1), axis=-1)


def _linalg_diagonal(x, /, *, offset=0):
    return diagonal(_matrix("linalg.diagonal", x), offset, -2, -1)


def _linalg_outer(x1, x2, /):
    if _t(x1).ndim != 1 or _t(x2).ndim != 1:
        raise ValueError("numpy.linalg.outer: x1 and x2 must be 1-dimensional; got shapes "
                         f"{_t(x1).shape} and {_t(x2).shape}")
    return outer(x1, x2)


def _linalg_cross(x1, x2, /, *, axis=-1):
    if _t(x1).shape[axis] != 3 or _t(x2).shape[axis] != 3:
        raise ValueError("numpy.linalg.cross: both inputs must be 3-dimensional vectors along "
                         f"axis {axis}; got shapes {_t(x1).shape} and {_t(x2).shape}")
    return cross(x1, x2, axis=axis)


def _linalg_matmul(x1, x2, /):
    return matmul(x1, x2)


def _linalg_tensordot(x1, x2, /, *, axes=2):
    return _np_tensordot(x1, x2, axes=axes)


_LA = np.linalg
_VECDOT = "sum(conj(x1) * x2, axis) (conj only for a complex x1, as numpy)"
for _name, _fn, _formula, _impl in [
    ("vecdot", getattr(np, "vecdot", None), _VECDOT, _vecdot),
    ("matrix_transpose", getattr(np, "matrix_transpose", None), "swap the last two axes",
     _matrix_transpose),
    ("matvec", getattr(np, "matvec", None), "matmul(x1, x2[..., None])[..., 0]", _matvec),
    ("vecmat", getattr(np, "vecmat", None), "matmul(conj(x1)[..., None, :], x2)[..., 0, :] (conj: complex x1)",
     _vecmat),
    ("linalg.vecdot", getattr(_LA, "vecdot", None), _VECDOT, _vecdot),
    ("linalg.matrix_transpose", getattr(_LA, "matrix_transpose", None),
     "swap the last two axes", _matrix_transpose),
    ("linalg.trace", getattr(_LA, "trace", None), "trace over the last two axes", _linalg_trace),
    ("linalg.diagonal", getattr(_LA, "diagonal", None), "diagonal of the last two axes",
     _linalg_diagonal),
    ("linalg.outer", getattr(_LA, "outer", None), "outer of two 1-D arrays", _linalg_outer),
    ("linalg.cross", getattr(_LA, "cross", None), "cross of 3-vectors along axis", _linalg_cross),
    ("linalg.matmul", getattr(_LA, "matmul", None), "matmul", _linalg_matmul),
    ("linalg.tensordot", getattr(_LA, "tensordot", None), "tensordot", _linalg_tensordot),
]:
    _define(_name, _fn, _formula, _impl)
del _LA, _name, _fn, _formula, _impl
