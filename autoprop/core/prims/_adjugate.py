"""The adjugate (cofactor matrix) of square matrices, right at singular ones: the derivative
of ``det`` (``linalg.det``'s VJP and JVP, Jacobi's formula d det A = tr(adj(A) dA)).

Where A is invertible adj(A) = det(A) A^-1; at a singular A that form divides by zero, so
``linalg`` switches to the SVD form here (plain arrays) or to the minors' determinants
(Tensors on an outer tape: recorded, so higher derivatives stay right there too).
Source: ``lessons/13-matrix-calculus.md`` (section on det).
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._common import _mT, _shape, _value
from ._linalg_options import eigh_upper, svd_full, upper_by_transpose  # noqa: F401 (linalg's one import)


def cofactor_svd(a):
    """The cofactor matrix cof(A) = adj(A)^T of a plain array, right at singular A.

    With A = U S V^T: adj(A) = adj(V^T) adj(S) adj(U) and adj(Q) = det(Q) Q^T for an
    orthogonal Q, so cof(A) = det(U) det(V) U diag(p) V^T with p_i = prod_{j != i} s_j
    (Stewart 1998, "On the adjugate matrix", Linear Algebra Appl. 283). The p_i are
    prefix times suffix products: no division, so a zero singular value is fine.
    """
    u, s, vh = np.linalg.svd(a)
    ones = np.ones(s.shape[:-1] + (1,), s.dtype)
    pre = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    suf = np.cumprod(np.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    sign = np.linalg.det(u) * np.linalg.det(vh)  # +-1
    return sign[..., None, None] * ((u * (pre * suf)[..., None, :]) @ vh)


def cofactor_minors(a, det):
    """cof(A)_ij = (-1)^(i+j) det(A without row i and column j), from ``det`` (the
    recorded primitive, passed in) itself: on
    Tensors (an outer tape records the backward pass) this is recorded and differentiable
    again at singular A. n^2 determinants of (n-1) x (n-1) minors: used only there."""
    n = _shape(a)[-1]
    if n == 1:
        return np.ones_like(_value(a))
    keep = np.array([[k for k in range(n) if k != i] for i in range(n)])  # (n, n-1)
    minors = a[..., keep[:, None, :, None], keep[None, :, None, :]]  # (..., n, n, n-1, n-1)
    signs = 1.0 - 2.0 * (np.add.outer(np.arange(n), np.arange(n)) % 2)
    return signs * det(minors)


def singular(a):
    """Per batch element: is A singular to working precision (where det(A) A^-T fails)?"""
    v = np.asarray(_value(a))
    s = np.linalg.svd(v, compute_uv=False)
    return ~(s[..., -1] > s[..., 0] * (v.shape[-1] * np.finfo(v.dtype).eps))


def det_cofactor(a, ans, det):
    """d det(A)/dA = cof(A) = adj(A)^T (Jacobi's formula), defined for every A.

    Invertible A (the usual case): det(A) A^-T (``ans`` is det(A)). A batch with a
    singular matrix: on plain arrays the SVD form (:func:`cofactor_svd`); on Tensors (a
    higher-order tape) the minors (:func:`cofactor_minors`, with the ``det`` record), which
    stay differentiable.
    """
    if np.any(singular(a)):
        return cofactor_minors(a, det) if isinstance(a, Tensor) else cofactor_svd(a)
    return np.expand_dims(np.expand_dims(ans, -1), -1) * _mT(np.linalg.inv(a))
