"""Complex matrices in np.linalg's decompositions: PyTorch's formulas, in PyTorch's convention
(the gradient ``dL/dx + i dL/dy``), reached from autoprop's internal one (HIPS autograd's
``dL/dx - i dL/dy``) by one conjugate of the output gradients in and of the input gradient out;
a JVP needs none (a tangent is a tangent). ``svd`` (PyTorch's ``svd_backward``: U carries the
phase term ``i Im diag(U^H gU) / s``; its JVP is ``linalg._svd_jvp``, one function for real and
complex A), ``qr`` (R's diagonal real, as LAPACK's: Q^H dQ
is skew-Hermitian with ``i Im diag(Q^H dA R^-1)`` on its diagonal), and, for ``linalg_eig.py``'s
eigh, the helpers and :func:`gauge_check`: a loss that depends on the phases of the singular
vectors or eigenvectors (each defined up to ``e^(i phi)``) is refused, as PyTorch refuses it.
"""

from __future__ import annotations

import numpy as np

from ._common import _mT, _shape, _value
from ._linalg_helpers import _eye, _right_solve, _used


def _mH(x):
    """The conjugate transpose (over the last two axes)."""
    return np.conj(_mT(x))


def _is_complex(x):
    return np.iscomplexobj(_value(x))


def _diag_embed(d, like):
    """diag(d) over the last axis, (..., k) -> (..., k, k)."""
    return np.expand_dims(d, -2) * _eye(_shape(d)[-1], like)


def _diagonal(x):
    return np.diagonal(x, axis1=-2, axis2=-1)


def gauge_check(name, vectors, phase, grads):
    """PyTorch's check that a loss does not depend on the phases of complex singular vectors or
    eigenvectors (each defined up to e^(i phi)): ``phase`` (Im diag(V^H gV), or its SVD sum) must
    be 0 up to rounding: at most 1e-6 of the largest entry of the vectors' gradients ``grads``
    (the bound of |Im diag(V^H gV)| for unit columns), plus 1e-12 (PyTorch allows 1e-2)."""
    ph = np.abs(np.asarray(_value(phase)))
    sc = max((float(np.max(np.abs(np.asarray(_value(g))), initial=0.0)) for g in grads), default=0.0)
    if np.any(ph > 1e-6 * sc + 1e-12):
        raise ValueError(
            f"autoprop.{name}: the {vectors} of a complex matrix are each defined up to a phase "
            f"e^(i phi), and this loss depends on those phases (Im diag of the {vectors}' "
            f"gradient term is {float(ph.max()):.3g}, not 0), so its gradient is undefined (PyTorch "
            "raises too). Use a loss invariant under the phases: |U|^2, U diag(s) V^H, U U^H, the "
            "singular values or eigenvalues.")


def svd_vjp_complex(g, ans, svd_f):
    """The VJP of ``np.linalg.svd`` of a complex matrix: PyTorch's ``svd_backward``.

    Parameters
    ----------
    g : tuple of (array or None)
        The output gradients ``(gU, gS, gVh)`` in autoprop's convention (None for an unused output).
    ans : tuple of arrays
        ``(U, S, Vh)``, U (..., m, k), S (..., k) real, Vh (..., k, n).
    svd_f : callable
        ``svd_f(s)`` -> F, F_ij = 1/(s_j^2 - s_i^2) off the diagonal (the real SVD's, shared).

    Returns
    -------
    ndarray, shape (..., m, n), complex
        dL/dA in autoprop's convention (conjugated in and out around PyTorch's formula).

    Raises
    ------
    ValueError
        When the loss depends on the singular vectors' phases (:func:`gauge_check`).
    """
    gu, gs, gvh = g
    u, s, vh = ans
    v = _mH(vh)
    m, n, k = _shape(u)[-2], _shape(vh)[-1], _shape(s)[-1]
    gu = np.conj(gu) if _used(gu) else None  # (PyTorch's convention from here on)
    gv = _mH(np.conj(gvh)) if _used(gvh) else None
    ret = None if gs is None else _diag_embed(np.real(gs) + np.zeros_like(s), u)
    if gu is not None or gv is not None:
        f, S, s_inv = svd_f(s), _diag_embed(s, u), _diag_embed(1.0 / s, u)
        uhgu = None if gu is None else _mH(u) @ gu - _mH(gu) @ u  # skew-Hermitian
        vhgv = None if gv is None else _mH(v) @ gv - _mH(gv) @ v
        phase = sum(np.imag(_diagonal(x)) for x in (uhgu, vhgv) if x is not None)
        gauge_check("svd", "singular vectors", phase, [x for x in (gu, gv) if x is not None])
        inner = 0.0
        if uhgu is not None:  # (F o U^H gU) S + i Im diag(U^H gU) / s: V's phases fixed, U's carry it
            inner = (f * uhgu) @ S + _diag_embed(_diagonal(uhgu) / (2.0 * s), u)
        if vhgv is not None:
            inner = inner + S @ (f * vhgv)
        ret = inner if ret is None else ret + inner
    out = np.zeros(_shape(u)[:-1] + _shape(vh)[-1:], u.dtype) if ret is None else u @ ret @ vh
    if gu is not None and m > k:
        out = out + (_eye(m, u) - u @ _mH(u)) @ gu @ s_inv @ vh
    if gv is not None and n > k:
        out = out + u @ s_inv @ _mH(gv) @ (_eye(n, u) - v @ vh)
    return np.conj(out)


def qr_vjp_complex(g, ans):
    """The VJP of ``np.linalg.qr`` (reduced) of a complex matrix: PyTorch's ``linalg_qr_backward``.

    With ``M = R gR^H - gQ^H Q`` and ``K = tril(M, -1) + tril(M, -1)^H + Re diag(M)`` (Hermitian):
    ``gA = (gQ + Q K) R^-H`` in PyTorch's convention, conjugated in and out here.

    Parameters
    ----------
    g : tuple of (array or None)
        ``(gQ, gR)`` in autoprop's convention (None for an unused output).
    ans : tuple of arrays
        ``(Q, R)``, Q (..., m, k), R (..., k, n) with a real diagonal (LAPACK's).

    Returns
    -------
    ndarray, shape (..., m, n), complex
    """
    gq, gr = g
    q, r = ans
    gq = np.conj(gq) if _used(gq) else None  # (PyTorch's convention from here on)
    mm = None if gr is None else r @ _mH(np.conj(gr))  # M = R gR^H - gQ^H Q
    if gq is not None:
        mm = -(_mH(gq) @ q) if mm is None else mm - _mH(gq) @ q
    if mm is None:
        return np.zeros(_shape(q), q.dtype)
    low = np.tril(mm, -1)  # K = tril(M, -1) + tril(M, -1)^H + Re diag(M): Hermitian
    k = low + _mH(low) + _eye(_shape(mm)[-1], q) * np.real(mm)
    qs = q @ k if gq is None else gq + q @ k
    return np.conj(_mH(np.linalg.solve(r, _mH(qs))))  # conj((gQ + Q K) R^-H)


def qr_jvp_complex(t, ans):
    """The JVP of ``np.linalg.qr`` of a complex matrix: tangents ``(dQ, dR)`` of ``(Q, R)``.

    ``X = dA R^-1``, ``C = Q^H X``; ``Q^H dQ`` is skew-Hermitian with ``i Im diag(C)`` on its
    diagonal (R's diagonal stays real), so ``dQ = X - Q (C - Omega)``, ``dR = (C - Omega) R``.

    Parameters
    ----------
    t : ndarray, shape (..., m, n)
        The tangent of A.
    ans : tuple of arrays
        ``(Q, R)`` as :func:`qr_vjp_complex`'s.

    Returns
    -------
    tuple of ndarrays
        ``(dQ, dR)`` with Q's and R's shapes.
    """
    q, r = ans
    x = _right_solve(t, r)  # dA R^-1
    c = _mH(q) @ x
    low = np.tril(c, -1)  # Q^H dQ: skew-Hermitian, i Im diag(C) on the diagonal (R's diagonal stays real)
    c_minus_omega = c - (low - _mH(low) + 1j * _eye(_shape(c)[-1], np.real(c)) * np.imag(c))
    return x - q @ c_minus_omega, c_minus_omega @ r
