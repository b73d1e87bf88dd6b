"""numpy.linalg options that the linalg records reach through a transpose or a sign:
``cholesky(a, upper=True)``, ``eigh(a, UPLO='U')`` and ``svd(a, full_matrices=True)`` of a
non-square matrix.

* ``upper=True``: U = cholesky(A^T)^T (numpy reads the upper triangle), so the VJP and JVP
  are the lower ones on the transposes.
* ``UPLO='U'``: numpy reads A's upper triangle, which is the lower triangle of A^T, so the
  record ``eigh`` runs on the (recorded) transpose. LAPACK's upper path may return the
  opposite sign of an eigenvector; the result takes numpy's sign (a constant +-1 per column,
  so the derivative is the record's times that sign).
* ``full_matrices=True``, A (m, n) with m != n: the first k = min(m, n) singular vectors
  are the thin SVD's (recorded, Townsend 2016), signed as numpy's full SVD. The other
  |m - n| columns of U (m > n) or rows of Vh (m < n) span the orthogonal complement of A's
  range (row space): any orthonormal basis of it is an SVD, so they have no derivative. They
  come from a guarded record: reverse mode raises a ValueError if a gradient reaches them
  (none does when only S, or only the first k vectors, are used), and forward mode gives
  them a NaN tangent ("undefined", never a silently wrong number).

Source: ``lessons/13-matrix-calculus.md``.
"""

from __future__ import annotations

import numpy as np

from ..registry import Primitive
from ..tensor import Tensor
from ._common import _mT, _value


def _signs(rec, ref):
    """+-1 per column: the sign that turns each column of ``rec`` into numpy's ``ref``."""
    return np.where(np.sum(ref * _value(rec), axis=-2, keepdims=True) < 0, -1.0, 1.0)


def upper_by_transpose(rule):
    """A cholesky VJP/JVP for ``upper=True``: numpy reads A's upper triangle and returns
    U = L^T with L = cholesky(A^T), so the rule runs on the transposes."""
    def run(g, ans, a, upper=False):
        if upper:
            return _mT(rule(_mT(g), _mT(ans), _mT(a)))
        return rule(g, ans, a)
    return run


def eigh_upper(a, eigh, transpose):
    """``np.linalg.eigh(a, UPLO='U')`` on a Tensor: returns (w, v), numpy's signs."""
    nd = a.ndim
    out = eigh(transpose(a, axes=tuple(range(nd - 2)) + (nd - 1, nd - 2)))
    w, v = out[..., 0, :], out[..., 1:, :]
    ref = np.linalg.eigh(a._value, UPLO="U").eigenvectors
    return w, v * _signs(v, ref).astype(a.dtype)


def _extra_vjp(g, ans, a):
    if np.any(_value(g)):
        raise ValueError(
            "numpy.linalg.svd(a, full_matrices=True): a gradient reached the extra singular "
            f"vectors of the non-square {tuple(np.shape(a))[-2:]} matrix (U's columns or Vh's "
            "rows beyond min(m, n)). They span the complement of A's range and are not unique, "
            "so they have no derivative. Use only S and the first min(m, n) vectors, or "
            "full_matrices=False (the thin SVD)."
        )
    return np.zeros(np.shape(a), getattr(a, "dtype", np.float64))


def _extra_jvp(t, ans, a):
    nan = np.full(np.shape(_value(ans)), np.nan, _value(ans).dtype)
    return Tensor._wrap(nan) if isinstance(t, Tensor) else nan


def _extra_fwd(a):
    m, n = a.shape[-2:]
    u, _, vh = np.linalg.svd(a, full_matrices=True)
    return u[..., :, n:] if m > n else vh[..., m:, :]


_EXTRA = Primitive(
    "svd_extra_vectors", _extra_fwd, (_extra_vjp,),
    {"jacobian": "none: not unique", "vjp": "ValueError when a gradient reaches them",
     "shapes": "A (..., m, n) -> U[..., :, n:] (m > n) or Vh[..., m:, :] (m < n)",
     "kinks": "no derivative (forward mode: NaN tangent)"},
    (_extra_jvp,),
)


def svd_full(a, u, s, v, concatenate):
    """U, S, Vh of ``np.linalg.svd(a, full_matrices=True)`` for a non-square Tensor ``a``
    from the thin record's ``u, s, v`` (V's columns)."""
    m, n = a.shape[-2:]
    uf, _, vhf = np.linalg.svd(a._value, full_matrices=True)
    d = _signs(u, uf[..., :, : min(m, n)]).astype(a.dtype)
    u, v = u * d, v * d  # U S V^T is unchanged by flipping a column of U and V together
    extra = _EXTRA(a)
    if m > n:
        return concatenate(u, extra, axis=-1), s, _mT(v)
    return u, s, concatenate(_mT(v), extra, axis=-2)
