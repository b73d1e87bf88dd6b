"""numpy's dispatch protocols over Tensors: ``np.tanh(t)``, ``np.sum(t)`` reach their record.

``Tensor.__array_ufunc__`` and ``__array_function__`` call these (through the registry, where
:mod:`autoprop.core.prims` puts them: ``registry.dispatch_ufunc``), with the tables the
records built (``registry._UFUNCS``, ``_FUNCTIONS``). A numpy function whose result is a
view of its input marks the Tensor it returns as one (:mod:`autoprop.core.views`).
"""

from __future__ import annotations

import numpy as np

from ..registry import _FUNCTIONS, _UFUNCS
from ..tensor import Tensor
from ..views import VIEW_FUNCTIONS, mark_view
from ._common import _check_kw
from .reductions import ufunc_method
from .shape import reshape

__all__ = ["dispatch_ufunc", "dispatch_function", "numpy_views"]


def dispatch_ufunc(ufunc, method, inputs, kwargs):
    """Route ``np.<ufunc>(tensor, ...)`` to the registered primitive, or explain why not."""
    name = ufunc.__name__
    if method != "__call__":  # reduce, accumulate, outer: the numpy function each computes
        return ufunc_method(ufunc, method, inputs, kwargs)
    _check_kw(name, kwargs)  # dtype=, where=, ...: refused, never dropped (a dropped option is a wrong number)
    if ufunc is np.positive:
        return inputs[0]
    prim = _UFUNCS.get(ufunc)
    if prim is None:
        raise TypeError(  # (a ufunc that is not numpy's is scipy.special's)
            f"autoprop cannot record {'numpy' if getattr(np, name, None) is ufunc else 'scipy.special'}.{name} "
            "on a Tensor: it has no registered "
            "derivative (VJP), so a tape could not differentiate through it. Use a "
            "supported function (see autoprop.PRIMITIVES), or ap.numpy_function(...) to "
            "run it as plain numpy with no gradient."
        )
    return prim(*inputs)


def dispatch_function(func, args, kwargs):
    """Route ``np.<function>(tensor, ...)`` to autoprop, or explain why it cannot."""
    impl = _FUNCTIONS.get(func)
    if impl is None:
        raise TypeError(f"autoprop cannot record {getattr(func, '__module__', None) or 'numpy'}.{func.__name__} on a Tensor: it has no registered "
                        "derivative (VJP). Use a supported function (see autoprop.numpy), or "
                        "ap.numpy_function(...) to run it as plain numpy with no gradient.")
    out = impl(*args, **kwargs)
    return numpy_views(func, args, out) if func in VIEW_FUNCTIONS else out


def numpy_views(func, args, out):
    """``out`` of ``np.<func>(*args)`` on tensors, each result marked as the view numpy would give
    (a result that is an input tensor itself becomes a new recorded tensor, as numpy's new view)."""
    tensors = [a for a in args if isinstance(a, Tensor)]

    def one(o):
        if not isinstance(o, Tensor) or not tensors:
            return o
        base = next((a for a in tensors if a is o or np.may_share_memory(a._value, o._value)), tensors[0])
        if o is base:
            o = reshape(o, shape=o.shape)
        if getattr(o, "_view", None) is None:
            mark_view(o, base, f"numpy.{func.__name__}")
        return o
    return type(out)(one(o) for o in out) if isinstance(out, (list, tuple)) else one(out)
