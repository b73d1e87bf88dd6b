"""numpy.linalg's tensor functions, tensorsolve and tensorinv, as composites: numpy's own
reshape of the problem to a square matrix, then the ``solve`` and ``inv`` records of the
``linalg`` family, so the derivatives are the chain rule through those (``X = A^-1 B:
dX = A^-1 (dB - dA X)``, ``d(A^-1) = -A^-1 dA A^-1``; ``lessons/13-matrix-calculus.md``).
"""

from __future__ import annotations

import numpy as np

from ..registry import defcomposite
from ._common import _t
from .linalg import inv, solve
from .shape import reshape, transpose

__all__ = ["tensorsolve", "tensorinv"]


@defcomposite("tensorsolve", "x = solve(A as a (prod(b.shape), prod(x.shape)) matrix, ravel(b)) "
                             "reshaped: the chain rule through transpose, reshape and solve",
              numpy=(np.linalg.tensorsolve,))
def tensorsolve(a, b, axes=None):
    """``numpy.linalg.tensorsolve`` over Tensors: the ``x`` with ``tensordot(a, x, x.ndim) == b``.

    Parameters
    ----------
    a : Tensor or array_like
        Shape ``b.shape + x.shape`` (after ``axes``), ``prod(x.shape) == prod(b.shape)``.
    b : Tensor or array_like
    axes : tuple of int, optional
        Axes of ``a`` moved to the end first, in this order (as numpy).

    Returns
    -------
    Tensor, shape ``a.shape[b.ndim:]``

    Raises
    ------
    numpy.linalg.LinAlgError
        If the problem is not square (the message gives the sizes), or the reshaped matrix is
        singular.

    Notes
    -----
    numpy's own reshape to ``solve(A, ravel(b))`` with ``A`` of shape (prod(b.shape),
    prod(x.shape)), in recorded ``transpose``, ``reshape`` and ``solve``: ``dX = A^-1 (dB - dA X)``
    (``lessons/13-matrix-calculus.md``).
    """
    a, b = _t(a), _t(b)
    if axes is not None:  # numpy moves these axes of a to the end, in this order
        order = [k for k in range(a.ndim) if k not in {k % a.ndim for k in axes}]
        a = transpose(a, tuple(order + [k % a.ndim for k in axes]))
    x_shape = a.shape[-(a.ndim - b.ndim):]  # numpy's own rule (all of a.shape when equal)
    n = int(np.prod(x_shape, dtype=np.int64))
    if a.size != n * n or b.size != n:
        raise np.linalg.LinAlgError(
            f"numpy.linalg.tensorsolve: a square problem needs a.size == prod(x.shape)**2 and "
            f"b.size == prod(x.shape), x.shape being a's last a.ndim - b.ndim axes {x_shape}; "
            f"got a of shape {a.shape} (after moving axes) and b of shape {b.shape}")
    return reshape(solve(reshape(a, (n, n)), reshape(b, (n,))), x_shape)


@defcomposite("tensorinv", "inv of a reshaped to (prod(shape[ind:]), prod(shape[:ind])), "
                           "reshaped to shape[ind:] + shape[:ind]: the chain rule through inv",
              numpy=(np.linalg.tensorinv,))
def tensorinv(a, ind=2):
    """``numpy.linalg.tensorinv`` over Tensors: the inverse with respect to ``tensordot(., ., ind)``.

    Parameters
    ----------
    a : Tensor or array_like
        ``prod(a.shape[:ind]) == prod(a.shape[ind:])``.
    ind : int, default 2
        The number of leading axes that form the first index.

    Returns
    -------
    Tensor, shape ``a.shape[ind:] + a.shape[:ind]``

    Raises
    ------
    ValueError
        For ``ind`` that is not a positive integer.
    numpy.linalg.LinAlgError
        If the problem is not square, or the reshaped matrix is singular.

    Notes
    -----
    ``inv`` of ``a`` reshaped to (prod(shape[:ind]), prod(shape[ind:])), reshaped back, in
    recorded primitives: ``d(A^-1) = -A^-1 dA A^-1`` (``lessons/13-matrix-calculus.md``).
    """
    a = _t(a)
    if not isinstance(ind, (int, np.integer)) or ind <= 0:
        raise ValueError(f"numpy.linalg.tensorinv: ind must be a positive integer; got {ind!r}")
    m = int(np.prod(a.shape[:ind], dtype=np.int64))
    if int(np.prod(a.shape[ind:], dtype=np.int64)) != m:
        raise np.linalg.LinAlgError(
            f"numpy.linalg.tensorinv: prod(a.shape[:{ind}]) must equal prod(a.shape[{ind}:]) "
            f"(a square problem); a has shape {a.shape}")
    return reshape(inv(reshape(a, (m, m))), a.shape[ind:] + a.shape[:ind])
