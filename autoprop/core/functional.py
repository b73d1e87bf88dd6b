"""Second derivatives from nested tapes: :func:`hessian`, :func:`hessian_vector_product`.

Both differentiate the gradient that an inner tape computes while an outer tape
records (``lessons/10-gradient-tape.md``: nested tapes).
"""

from __future__ import annotations

import numpy as np

from .tape import GradientTape
from .tensor import Tensor


def _as_source(x):
    if isinstance(x, Tensor):
        return x
    return Tensor(np.asarray(x, dtype=np.result_type(np.asarray(x).dtype, np.float64)))


def _inner_gradient(f, x):
    with GradientTape() as inner:
        inner.watch(x)
        y = f(x)
    if not isinstance(y, Tensor) or y.size != 1:
        raise ValueError(
            f"hessian: f must return a scalar Tensor (one element); got "
            f"{getattr(y, 'shape', type(y).__name__)}"
        )
    return inner.gradient(y, x, unconnected_gradients="zero")


def hessian(f, x):
    """The Hessian of a scalar function, by a jacobian of a gradient (nested tapes).

    Parameters
    ----------
    f : callable
        ``f(x) -> scalar Tensor``, written with tape operations.
    x : Tensor or array_like
        The point; float.

    Returns
    -------
    Tensor of shape ``x.shape + x.shape``: ``H[i..., j...] = d2 f / dx[i...] dx[j...]``.

    Raises
    ------
    ValueError
        If ``f(x)`` is not a scalar.

    Examples
    --------
    >>> import autoprop as ap
    >>> H = ap.hessian(lambda x: ap.sum(x**3), ap.constant([1.0, 2.0]))
    >>> H.numpy()
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    x = _as_source(x)
    with GradientTape() as outer:
        outer.watch(x)
        g = _inner_gradient(f, x)
    return outer.jacobian(g, x, unconnected_gradients="zero")


def hessian_vector_product(f, x, v):
    """``H v`` without forming ``H``: reverse-over-reverse on nested tapes.

    Parameters
    ----------
    f : callable
        ``f(x) -> scalar Tensor``.
    x : Tensor or array_like
    v : array_like or Tensor of ``x``'s shape

    Returns
    -------
    Tensor of ``x``'s shape.

    Raises
    ------
    ValueError
        If ``f(x)`` is not a scalar or ``v`` has another shape than ``x``.
    """
    x = _as_source(x)
    v = v._value if isinstance(v, Tensor) else np.asarray(v, dtype=x.dtype)
    if v.shape != x.shape:
        raise ValueError(f"hessian_vector_product: v must have x's shape {x.shape}; got {v.shape}")
    with GradientTape() as outer:
        outer.watch(x)
        g = _inner_gradient(f, x)
    return outer.gradient(g, x, output_gradients=v, unconnected_gradients="zero")
