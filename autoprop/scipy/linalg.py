"""``scipy.linalg`` over autoprop Tensors, recorded on the tape.

scipy.linalg's functions are Python code that converts its input to a numpy array (they do not
dispatch): called on a Tensor they return a plain array, off the tape, and the gradient through them
is lost (while a tape records, a ``TapeEscapeWarning`` names the twin here; an error under
``ap.strict_mode()``). These twins have scipy's signatures and are built from autoprop's recorded
``numpy.linalg`` primitives (``solve``, ``cholesky``, ``inv``, ``det``) and the triangle masks
``np.tril``/``np.triu``, so their derivatives are the chain rule through those records (each
checked against HIPS autograd and central differences in ``tests/test_autoprop_scipy_linalg.py``).
A call with no Tensor among its arguments is scipy's own function (plain arrays out, as scipy's), so a
twin replaces scipy's import in code that also computes on plain arrays (``autoprop/scipy/_plain.py``). The twins:

* ``solve_triangular(a, b, trans, lower, unit_diagonal)``: ``np.linalg.solve`` of the triangle
  scipy reads (its unit diagonal, ``trans`` 0/'N', 1/'T', 2/'C'), so the gradient of ``a`` lives
  on that triangle, as jax's and torch's;
* ``cholesky(a, lower)``, ``cho_factor(a, lower)``, ``cho_solve((c, lower), b)``: ``np.linalg.cholesky``
  of the triangle scipy reads, and two triangular solves. ``cho_factor``'s other triangle holds
  zeros (scipy's holds whatever ``a`` had there: "random data", its documentation says);
* ``solve(a, b, lower, assume_a, transposed)``, ``inv(a, assume_a, lower)``: ``np.linalg.solve`` /
  ``np.linalg.inv`` of the matrix scipy's chosen solver reads (``'sym'``/``'her'``/``'pos'``: the
  ``lower`` or upper triangle mirrored; ``'diagonal'``, ``'tridiagonal'``, ``'upper triangular'``,
  ``'lower triangular'``: those entries only);
* ``det(a)``: ``np.linalg.det``;
* ``expm(A)``: a record of its own (``autoprop.explain("expm")``): scipy's value; its VJP is the
  Frechet derivative at A^T, the top-right block of ``expm([[A^T, g], [0, A^T]])``.
* ``sqrtm(A)`` and ``solve_sylvester(a, b, q)``: records of their own (``autoprop.explain("sqrtm")``),
  scipy's values; their derivatives are Sylvester solves (``Y dY + dY Y = dA``);
* ``block_diag(*arrs)``: the blocks along the diagonal, zeros elsewhere (scipy's batched form too):
  recorded concatenations, linear, so each block's gradient is its slice of the output's;
* ``solve_banded((l, u), ab, b)``: ``np.linalg.solve`` of the matrix the band ``ab`` holds (LAPACK's
  band storage, ``a[i, j] = ab[u + i - j, j]``), gathered from ``ab``, so the gradient of ``ab``
  lives on the band entries scipy reads (its unused corners get 0).

The values are those of the numpy.linalg routines (LU with partial pivoting for a triangular
system, where scipy substitutes): equal to scipy's up to rounding. ``check_finite`` is honoured
(a ValueError for infs and NaNs, as scipy); ``overwrite_a``/``overwrite_b`` are scipy's
permission to reuse the input's memory, which no result depends on: a Tensor is never written.

Examples
--------
>>> import numpy as np, autoprop as ap
>>> from autoprop.scipy import linalg
>>> A = ap.Variable([[4.0, 1.0], [1.0, 3.0]])
>>> with ap.GradientTape() as tape:
...     L = linalg.cholesky(A, lower=True)
...     x = linalg.solve_triangular(L, np.array([1.0, 2.0]), lower=True)
...     y = np.sum(x ** 2)                        # b^T A^-1 b
>>> round(float(y), 12), tape.gradient(y, A).numpy().round(4)   # -A^-1 b b^T A^-1, on the lower triangle
(1.363636363636, array([[-0.0083,  0.    ],
       [-0.1157, -0.405 ]]))
"""

from __future__ import annotations

import numpy as _np

from ..core import registry as _R
from ..core.prims._common import _t
from ._plain import scipy_on_plain as _scipy_on_plain

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "expm", "inv", "solve", "solve_banded",
           "solve_sylvester", "solve_triangular", "sqrtm"]

_TRANS = {0: 0, "N": 0, "n": 0, 1: 1, "T": 1, "t": 1, 2: 2, "C": 2, "c": 2}
_GENERAL = (None, "gen", "general", "banded")  # banded: the band is where a's nonzeros are
_MIRRORED = {"sym": False, "symmetric": False, "her": True, "hermitian": True,
             "pos": True, "positive definite": True}  # (True: the mirror is conjugated)


def _square(a, who):
    a = _t(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"autoprop.scipy.linalg.{who}: expected a square matrix (or a batch of them) "
                         f"of shape (..., n, n); got shape {a.shape}")
    return a


def _finite(check_finite, *arrays):
    """scipy's ``check_finite``: a ValueError for infs and NaNs (its message)."""
    if check_finite:
        for x in arrays:
            if not _np.all(_np.isfinite(x._value)):
                raise ValueError("array must not contain infs or NaNs")


def _mT(x):
    return _np.swapaxes(x, -1, -2)


def _eye(a):
    return _np.eye(a.shape[-1], dtype=a.dtype if a.dtype.kind in "fc" else _np.float64)


def _triangle(a, lower, unit_diagonal=False):
    """The triangle of ``a`` LAPACK reads (with ones on the diagonal for ``unit_diagonal``)."""
    if unit_diagonal:
        return (_np.tril(a, -1) if lower else _np.triu(a, 1)) + _eye(a)
    return _np.tril(a) if lower else _np.triu(a)


def _structured(a, assume_a, lower):
    """The matrix the solver ``assume_a`` reads from ``a`` (scipy.linalg.solve's table)."""
    if assume_a in _GENERAL:
        return a
    if assume_a in _MIRRORED:
        off = _np.tril(a, -1) if lower else _np.triu(a, 1)
        mirror = _mT(off)
        if _MIRRORED[assume_a] and a.dtype.kind == "c":  # Hermitian: LAPACK reads a real diagonal
            return off + _np.conj(mirror) + _np.real(a * _eye(a))
        return off + mirror + a * _eye(a)
    if assume_a == "diagonal":
        return a * _eye(a)
    if assume_a == "tridiagonal":
        i = _np.arange(a.shape[-1])
        return a * (_np.abs(i[:, None] - i[None, :]) <= 1)
    if assume_a in ("upper triangular", "lower triangular"):
        return _triangle(a, assume_a == "lower triangular")
    raise ValueError(f"{assume_a!r} is not a recognized matrix structure")


def _positive_definite(A):
    """scipy's 'pos' solver factors A by Cholesky: a LinAlgError when A is not positive definite."""
    _np.linalg.cholesky(A._value)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
    """``scipy.linalg.solve_triangular``: x with ``op(T) x = b``, recorded.

    Parameters
    ----------
    a : Tensor or array_like, shape (..., n, n)
        Only its ``lower`` (default: upper) triangle is read; with ``unit_diagonal`` not its diagonal
        either (taken as ones).
    b : Tensor or array_like, shape (..., n) or (..., n, k)
    trans : {0, 1, 2, 'N', 'T', 'C'}
        Solve ``T x = b``, ``T^T x = b`` or ``T^H x = b``.
    lower, unit_diagonal : bool
    overwrite_b : bool
        Accepted for scipy's signature: permission to reuse b's memory, which changes no value.
    check_finite : bool

    Returns
    -------
    Tensor
        x, of b's shape and the result dtype of a and b.

    Raises
    ------
    ValueError
        A non-square ``a``, an unknown ``trans``, or infs/NaNs with ``check_finite``.
    numpy.linalg.LinAlgError
        A singular triangle.

    Notes
    -----
    ``np.linalg.solve`` of ``op(triangle)``: dx = T^-1 (db - dT x); the gradient of ``a`` is
    -T^-T g x^T on the triangle read (Giles 2008), zero elsewhere, as jax's and torch's.
    """
    a, b = _square(a, "solve_triangular"), _t(b)
    if trans not in _TRANS:
        raise ValueError(f"autoprop.scipy.linalg.solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C'; "
                         f"got {trans!r}")
    _finite(check_finite, a, b)
    T = _triangle(a, lower, unit_diagonal)
    if _TRANS[trans]:
        T = _mT(T) if _TRANS[trans] == 1 else _np.conj(_mT(T))
    return _np.linalg.solve(T, b)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """``scipy.linalg.cholesky``: the Cholesky factor of a positive definite matrix, recorded.

    Parameters
    ----------
    a : Tensor or array_like, shape (..., n, n)
        Only its ``lower`` (default: upper) triangle is read.
    lower : bool
        True: L with ``a = L L^H``; False (scipy's default): U with ``a = U^H U``.
    overwrite_a : bool
        Accepted for scipy's signature (changes no value).
    check_finite : bool

    Returns
    -------
    Tensor
        L or U, shape (..., n, n), zeros in the other triangle.

    Raises
    ------
    ValueError
        A non-square ``a``, or infs/NaNs with ``check_finite``.
    numpy.linalg.LinAlgError
        ``a`` not positive definite.

    Notes
    -----
    ``np.linalg.cholesky(a, upper=not lower)``: dL = L Phi(L^-1 dA L^-H) (Murray 2016);
    ``autoprop.explain("cholesky")``.
    """
    a = _square(a, "cholesky")
    _finite(check_finite, a)
    return _np.linalg.cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``scipy.linalg.cho_factor``: ``(c, lower)`` for :func:`cho_solve`, recorded.

    Parameters
    ----------
    a, lower, overwrite_a, check_finite
        As :func:`cholesky`.

    Returns
    -------
    tuple of (Tensor, bool)
        ``c`` holds the factor in the ``lower`` (default: upper) triangle and zeros in the other
        (scipy's holds what ``a`` had there, "random data" by its documentation: read neither).

    Raises
    ------
    ValueError, numpy.linalg.LinAlgError
        As :func:`cholesky`.
    """
    return cholesky(a, lower=lower, overwrite_a=overwrite_a, check_finite=check_finite), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """``scipy.linalg.cho_solve``: x with ``A x = b`` from A's Cholesky factor, recorded.

    Parameters
    ----------
    c_and_lower : tuple of (Tensor or array_like, bool)
        What :func:`cho_factor` (or scipy's) returns: only ``c``'s ``lower`` (upper) triangle is read.
    b : Tensor or array_like, shape (..., n) or (..., n, k)
    overwrite_b : bool
        Accepted for scipy's signature (changes no value).
    check_finite : bool

    Returns
    -------
    Tensor
        x, of b's shape.

    Raises
    ------
    ValueError
        A non-square ``c``, or infs/NaNs with ``check_finite``.
    numpy.linalg.LinAlgError
        A singular factor.

    Notes
    -----
    Two triangular solves, L (L^H x) = b or U^H (U x) = b: the chain rule through
    ``np.linalg.solve``; the gradient of ``c`` lives on the triangle read.
    """
    c, lower = c_and_lower
    c, b = _square(c, "cho_solve"), _t(b)
    _finite(check_finite, c, b)
    T = _triangle(c, lower)
    H = _np.conj(_mT(T)) if T.dtype.kind == "c" else _mT(T)
    first, second = (T, H) if lower else (H, T)
    return _np.linalg.solve(second, _np.linalg.solve(first, b))


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
          transposed=False):
    """``scipy.linalg.solve``: x with ``a x = b`` (``a^T x = b`` if ``transposed``), recorded.

    Parameters
    ----------
    a : Tensor or array_like, shape (..., n, n)
    b : Tensor or array_like, shape (..., n) or (..., n, k)
    lower : bool
        For ``assume_a`` 'sym', 'her', 'pos': read a's lower (default: upper) triangle, mirrored.
    overwrite_a, overwrite_b : bool
        Accepted for scipy's signature (change no value).
    check_finite : bool
    assume_a : str, optional
        scipy's structures: None/'gen'/'general'/'banded' (every entry), 'sym'/'symmetric',
        'her'/'hermitian', 'pos'/'positive definite' (a triangle mirrored; 'pos' also raises
        LinAlgError for a matrix that is not positive definite, as scipy's Cholesky solver),
        'diagonal', 'tridiagonal', 'upper triangular', 'lower triangular' (those entries only).
    transposed : bool
        Solve ``a^T x = b`` (scipy: real ``a`` only).

    Returns
    -------
    Tensor
        x, of b's shape.

    Raises
    ------
    ValueError
        A non-square ``a``, an unknown ``assume_a``, or infs/NaNs with ``check_finite``.
    NotImplementedError
        ``transposed`` with a complex ``a`` (as scipy).
    numpy.linalg.LinAlgError
        A singular matrix; 'pos' and a matrix not positive definite.

    Notes
    -----
    ``np.linalg.solve`` of the matrix read: dX = A^-1 (dB - dA X) (``autoprop.explain("solve")``),
    the gradient of ``a`` on the entries read (a mirrored triangle collects both halves).
    """
    a, b = _square(a, "solve"), _t(b)
    _finite(check_finite, a, b)
    A = _structured(a, assume_a, lower)
    if assume_a in ("pos", "positive definite"):
        _positive_definite(A)
    if transposed:
        if A.dtype.kind == "c":
            raise NotImplementedError("scipy.linalg.solve can currently not solve a^T x = b or a^H x = b "
                                      "for complex matrices.")
        A = _mT(A)
    return _np.linalg.solve(A, b)


def inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    """``scipy.linalg.inv``: the inverse of the matrix scipy's solver reads, recorded.

    Parameters
    ----------
    a : Tensor or array_like, shape (..., n, n)
    overwrite_a : bool
        Accepted for scipy's signature (changes no value).
    check_finite : bool
    assume_a : str, optional
        As :func:`solve`.
    lower : bool
        As :func:`solve`.

    Returns
    -------
    Tensor
        shape (..., n, n).

    Raises
    ------
    ValueError, numpy.linalg.LinAlgError
        As :func:`solve`.

    Notes
    -----
    ``np.linalg.inv``: d(A^-1) = -A^-1 dA A^-1 (``autoprop.explain("inv")``).
    """
    a = _square(a, "inv")
    _finite(check_finite, a)
    A = _structured(a, assume_a, lower)
    if assume_a in ("pos", "positive definite"):
        _positive_definite(A)
    return _np.linalg.inv(A)


def det(a, overwrite_a=False, check_finite=True):
    """``scipy.linalg.det``, recorded.

    Parameters
    ----------
    a : Tensor or array_like, shape (..., n, n)
    overwrite_a : bool
        Accepted for scipy's signature (changes no value).
    check_finite : bool

    Returns
    -------
    Tensor
        shape (...).

    Raises
    ------
    ValueError
        A non-square ``a``, or infs/NaNs with ``check_finite``.

    Notes
    -----
    ``np.linalg.det``: d det A = tr(adj(A) dA) (Jacobi; ``autoprop.explain("det")``).
    """
    a = _square(a, "det")
    _finite(check_finite, a)
    return _np.linalg.det(a)


def block_diag(*arrs):
    """``scipy.linalg.block_diag``: the arrays along the diagonal of one matrix, zeros elsewhere, recorded.

    Parameters
    ----------
    *arrs : Tensor or array_like
        Each of shape (..., m_i, n_i); a scalar counts as (1, 1), a 1-D array of n as (1, n) (scipy's
        ``atleast_nd(a, 2)``); the leading (batch) shapes broadcast against each other (scipy >= 1.15).

    Returns
    -------
    Tensor, shape (..., sum m_i, sum n_i)
        In the arrays' result dtype; ``block_diag()`` is shape (1, 0), float64, as scipy.

    Notes
    -----
    Linear in each block: recorded ``broadcast_to`` and ``concatenate`` of the blocks and zero
    fillers, so the gradient of block i is the (m_i, n_i) slice of the output's gradient at its
    place (summed over broadcast batch axes), as jax's and torch's ``block_diag``.
    """
    blocks = [_t(a) for a in (arrs or ([],))]
    blocks = [b.reshape((1,) * (2 - b.ndim) + b.shape) if b.ndim < 2 else b for b in blocks]
    batch = _np.broadcast_shapes(*(b.shape[:-2] for b in blocks))
    blocks = [_np.broadcast_to(b, batch + b.shape[-2:]) for b in blocks]
    dtype = _np.result_type(*(b.dtype for b in blocks))
    cols = sum(b.shape[-1] for b in blocks)
    rows, c = [], 0
    for b in blocks:
        m, n = b.shape[-2:]
        rows.append(_np.concatenate([_np.zeros(batch + (m, c), dtype), b.astype(dtype),
                                     _np.zeros(batch + (m, cols - c - n), dtype)], axis=-1))
        c += n
    return _np.concatenate(rows, axis=-2)


def expm(A):
    """``scipy.linalg.expm``: the matrix exponential, recorded.

    Parameters
    ----------
    A : Tensor or array_like, shape (..., n, n)
        Real.

    Returns
    -------
    Tensor
        shape (..., n, n): scipy's value (Pade approximation with scaling and squaring).

    Raises
    ------
    ValueError
        A non-square ``A``.
    TypeError
        A complex ``A`` (the record's rules are checked at real values only).

    Notes
    -----
    dE = L(A, dA), the top-right block of expm([[A, dA], [0, A]]); the VJP is L(A^T, g)
    (Higham 2008, *Functions of Matrices*, Thm 3.6 and (3.17)).
    """
    return _R.expm(_square(A, "expm"))


def sqrtm(A):
    """``scipy.linalg.sqrtm``: the principal square root of a matrix, recorded.

    Parameters
    ----------
    A : Tensor or array_like, shape (..., n, n)
        Real or complex.

    Returns
    -------
    Tensor
        shape (..., n, n): scipy's value Y (Y Y = A). Complex for a complex A, and for a real A
        with an eigenvalue on the negative real axis (scipy's value).

    Raises
    ------
    ValueError
        A non-square ``A``.

    Notes
    -----
    Y dY + dY Y = dA, so dY = sylv(Y, Y, dA) and the VJP is sylv(Y^T, Y^T, g) (Higham 2008,
    *Functions of Matrices*, (6.5)); sqrtm is holomorphic, so at complex values these are the
    same formulas (autoprop.core.complex's convention); infinite at a singular A.
    ``autoprop.explain("sqrtm")``.
    """
    return _R.sqrtm(_square(A, "sqrtm"))


def solve_sylvester(a, b, q):
    """``scipy.linalg.solve_sylvester``: X with ``a X + X b = q``, recorded.

    Parameters
    ----------
    a : Tensor or array_like, shape (..., n, n)
    b : Tensor or array_like, shape (..., m, m)
    q : Tensor or array_like, shape (..., n, m)
        Real or complex; leading (batch) axes broadcast, one matrix at a time (scipy's is 2-D only).

    Returns
    -------
    Tensor
        shape (..., n, m): scipy's value (Bartels-Stewart).

    Raises
    ------
    ValueError
        A non-square ``a`` or ``b``, or a ``q`` whose last two axes are not (n, m).

    Notes
    -----
    dX = sylv(a, b, dq - da X - X db); the VJP solves the adjoint equation a^T L + L b^T = g, then
    dq = L, da = -L X^T, db = -X^T L (Kao & Hennequin 2020, *Automatic differentiation of Sylvester,
    Lyapunov and algebraic Riccati equations*). ``autoprop.explain("solve_sylvester")``.
    """
    a, b, q = _square(a, "solve_sylvester"), _square(b, "solve_sylvester"), _t(q)
    if q.ndim < 2 or q.shape[-2:] != (a.shape[-1], b.shape[-1]):
        raise ValueError(f"autoprop.scipy.linalg.solve_sylvester: q must have shape (..., {a.shape[-1]}, "
                         f"{b.shape[-1]}) for a {a.shape} and b {b.shape}; got shape {q.shape}")
    return _R.solve_sylvester(a, b, q)


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """``scipy.linalg.solve_banded``: x with ``a x = b`` for a banded ``a`` in LAPACK's band storage, recorded.

    Parameters
    ----------
    l_and_u : (int, int)
        The numbers of nonzero lower and upper diagonals.
    ab : Tensor or array_like, shape (l + u + 1, n)
        The band: ``a[i, j] = ab[u + i - j, j]`` (scipy's layout).
    b : Tensor or array_like, shape (n,) or (n, k)
    overwrite_ab, overwrite_b : bool
        Accepted for scipy's signature (change no value).
    check_finite : bool

    Returns
    -------
    Tensor
        ``b``'s shape.

    Raises
    ------
    ValueError
        ``(l, u)`` not two non-negative integers, ``ab`` not of shape (l + u + 1, n), ``b`` not of n
        rows, or infs/NaNs with ``check_finite``.
    numpy.linalg.LinAlgError
        A singular ``a``.

    Notes
    -----
    The dense ``a`` is gathered from ``ab`` (recorded indexing), then ``np.linalg.solve``
    (``d x = -a^-1 da x + a^-1 db``; ``autoprop.explain("solve")``): the gradient of ``ab`` is that
    of ``a`` at the band entries, 0 at the corners LAPACK never reads. The value is numpy's LU
    with partial pivoting (scipy's banded LU), equal up to rounding.
    """
    if (len(l_and_u) != 2 or not all(_np.ndim(k) == 0 and _np.asarray(k).dtype.kind in "iu" and k >= 0
                                     for k in l_and_u)):  # (int() would truncate 1.5: scipy refuses it)
        raise ValueError(f"autoprop.scipy.linalg.solve_banded: (l, u) must be two non-negative integers, the "
                         f"numbers of lower and upper diagonals; got {l_and_u!r}")
    lower, upper = (int(k) for k in l_and_u)
    ab, b = _t(ab), _t(b)
    n = ab.shape[-1] if ab.ndim == 2 else 0
    if ab.ndim != 2 or ab.shape[0] != lower + upper + 1:
        raise ValueError(f"autoprop.scipy.linalg.solve_banded: ab must have shape (l + u + 1, n) = "
                         f"({lower + upper + 1}, n) for (l, u) = ({lower}, {upper}); got shape {ab.shape}")
    if b.ndim not in (1, 2) or b.shape[0] != n:
        raise ValueError(f"autoprop.scipy.linalg.solve_banded: b must have {n} rows (ab's columns), "
                         f"shape ({n},) or ({n}, k); got shape {b.shape}")
    _finite(check_finite, ab, b)
    i, j = _np.indices((n, n))
    row = upper + i - j  # a[i, j] = ab[u + i - j, j] on the band
    band = (row >= 0) & (row <= lower + upper)
    a = _np.where(band, ab[_np.where(band, row, 0), j], 0.0)
    return _np.linalg.solve(a, b)


# a call without a Tensor is scipy's own (ndarrays out, as the code the twin replaces scipy's in expects: corpus38 F7)
(solve_triangular, cholesky, cho_factor, cho_solve, solve, inv, det, block_diag, expm, sqrtm, solve_sylvester,
 solve_banded) = (_scipy_on_plain(f, "scipy.linalg") for f in (
    solve_triangular, cholesky, cho_factor, cho_solve, solve, inv, det, block_diag, expm, sqrtm, solve_sylvester,
    solve_banded))
