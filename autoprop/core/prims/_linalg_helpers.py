"""Helpers of the linalg records, kept beside ``linalg.py`` (each family module stays within
its size): the adjugate that ``det`` differentiates with, the numpy.linalg options
reached through a transpose or a sign, and ``lstsq``'s rcond as LAPACK's gelsd reads it
(``gelsd_rcond``) and its working and result dtypes as numpy's ``_commonType`` (``lstsq_types``).

Adjugate. The cofactor matrix of square matrices, right at singular ones: the derivative of ``det`` (``linalg.det``'s VJP and JVP, Jacobi's formula d det A = tr(adj(A) dA)).

Where A is invertible adj(A) = det(A) A^-1; at a singular A that form divides by zero, so
``linalg`` switches to the SVD form here (plain arrays) or to the minors' determinants
(Tensors on an outer tape: recorded, so higher derivatives stay right there too).
Source: ``lessons/13-matrix-calculus.md`` (section on det).

Options. numpy.linalg options that the linalg records reach through a transpose or a sign:
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
* ``qr(a, mode='complete')``, A (m, n) with m > n: Q's last m - n columns span the complement of A's
  range, as the SVD's do, but numpy's are one definite smooth function of A, LAPACK's Householder
  completion. With Q = I - V T V^T (the compact WY form, V unit lower trapezoidal) and Q's first n
  columns [Q_nn; Q_pn] (the reduced record's, Walter & Lehmann 2018), Z = Q_pn (Q_nn - I)^-1 = V_2 V_1^-1,
  so Q_2 = [(Q_nn - I) Z^H; I + Z (Q_nn - I) Z^H]: recorded from the reduced Q, its derivative is the
  derivative of numpy's columns (jax's, arXiv 2409.13374 Eqs. 32-33; central differences of
  np.linalg.qr agree). Where LAPACK skipped a reflection (a column already zero below its diagonal,
  tau = 0: Q_nn - I singular) numpy's completion jumps under a perturbation: those columns come from a
  guarded record as the SVD's (a gradient reaching them raises ValueError); R and the first n columns
  stay differentiable. In a batch, per matrix: the others keep their completion.
"""

from __future__ import annotations

import numpy as np

from ..observe import own
from ..registry import Primitive
from ..tensor import Tensor
from ._common import _mT, _shape, _value


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


def inverse_if_regular(a):
    """A^-1 of the values of ``a``, or None when a matrix of the batch is singular to working
    precision: numpy raises, or the 1-norm condition number ||A||_1 ||A^-1||_1 (exact, from
    the computed inverse: no extra factorisation) exceeds 1 / (n eps), where det(A) A^-T
    has lost every digit."""
    v = np.asarray(_value(a))
    try:
        with np.errstate(all="ignore"):
            inv = np.linalg.inv(v)
            cond = np.abs(v).sum(axis=-2).max(axis=-1) * np.abs(inv).sum(axis=-2).max(axis=-1)
    except np.linalg.LinAlgError:
        return None
    return inv if np.all(cond < 1.0 / (v.shape[-1] * np.finfo(v.dtype).eps)) else None


def det_cofactor(a, ans, det):
    """d det(A)/dA = cof(A) = adj(A)^T (Jacobi's formula), defined for every A.

    Invertible A (the usual case): det(A) A^-T (``ans`` is det(A)). A batch with a
    singular matrix: on plain arrays the SVD form (:func:`cofactor_svd`); on Tensors (a
    higher-order tape) the minors (:func:`cofactor_minors`, with the ``det`` record), which
    stay differentiable. A 0 x 0 A (det 1, numpy's empty product) has an empty cofactor.
    """
    if _shape(a)[-1] == 0:
        return np.zeros_like(a)
    inv = inverse_if_regular(a)
    if inv is None:
        return cofactor_minors(a, det) if isinstance(a, Tensor) else cofactor_svd(a)
    if isinstance(a, Tensor):
        inv = np.linalg.inv(a)  # recorded: the next derivative goes through it
    return np.expand_dims(np.expand_dims(ans, -1), -1) * _mT(inv)


def gelsd_rcond(rcond, m, n, dtype):
    """The cut-off ``numpy.linalg.lstsq(a, b, rcond)`` applies, as a number in (0, 1) for ``pinv``.

    Parameters
    ----------
    rcond : float or None
        numpy's argument.
    m, n : int
        ``a``'s shape.
    dtype : numpy dtype
        The working dtype numpy solves in (float64 or complex128 for every input dtype: ``linalg._lstsq_types``;
        review28a: ``a``'s float32 with a float64 ``b`` cut another rank than numpy, an int ``a`` crashed here).

    Returns
    -------
    float
        Singular values at or below this times the largest count as zero. ``None``: numpy's default,
        ``finfo(dtype).eps * max(m, n)`` (float64's: fixa27's review found float32's eps gave another rank than numpy's). Otherwise numpy hands rcond to LAPACK's gelsd, whose DLALSD replaces
        ``rcond <= 0`` or ``rcond >= 1`` by DLAMCH('Epsilon') = 2^-53 ("if RCOND < 0, machine precision
        is used instead"; the code tests ``RCOND.LE.ZERO .OR. RCOND.GE.ONE``): review27a, rcond=-1 was
        handed to pinv, which then cut nothing and inverted a zero singular value (x ~ 1e16).

    Raises
    ------
    ValueError
        For a NaN ``rcond`` (LAPACK then cuts no value, not even an exact zero: no pseudo-inverse).
    """
    if rcond is None:
        return float(np.finfo(dtype).eps * max(m, n))
    r = float(rcond)
    if r != r:
        raise ValueError("numpy.linalg.lstsq: rcond is nan; expected a number (None: numpy's default "
                         "max(m, n) * eps; <= 0 or >= 1: LAPACK's 2^-53)")
    return r if 0.0 < r < 1.0 else float(np.finfo(np.float64).eps / 2)


def lstsq_types(*dtypes):
    """numpy's working and result dtypes for ``lstsq`` (``numpy.linalg._linalg._commonType``).

    Parameters
    ----------
    *dtypes : numpy dtype
        ``a``'s and ``b``'s.

    Returns
    -------
    work, result : numpy dtype
        ``work`` is float64, or complex128 when either is complex (numpy solves everything in double); ``result``
        is single precision (float32/complex64) only when every input is float32 or complex64, else double:
        an integer or bool input counts as double, as numpy's ``_commonType``.

    Raises
    ------
    TypeError
        For float16 or longdouble (numpy's words: "array type float16 is unsupported in linalg").
    """
    single, complex_ = True, False
    for dt in map(np.dtype, dtypes):
        if dt.kind in "fc":
            complex_ |= dt.kind == "c"
            if dt not in (np.float32, np.float64, np.complex64, np.complex128):
                raise TypeError(f"array type {dt.name} is unsupported in linalg (numpy.linalg.lstsq: "
                                f"expected float32/64, complex64/128, int or bool)")
            single &= dt in (np.float32, np.complex64)
        else:
            single = False
    work = np.dtype(np.complex128 if complex_ else np.float64)
    result = np.dtype((np.complex64 if complex_ else np.float32) if single else work)
    return work, result


def lstsq_complex_refusal(a_dtype, b_dtype):
    """The TypeError for ``lstsq`` of a complex system that a tape or forward accumulator tracks, naming the
    user's dtypes (review28a L5: pinv's refusal named complex128, the working dtype, for a complex64 system)."""
    return TypeError(f"autoprop.lstsq: a complex system (a {a_dtype}, b {b_dtype}) has no gradient rule (pinv's is "
                     "written for real matrices): complex lstsq gives values only, on inputs no tape or forward "
                     "accumulator tracks; split A x = b into real and imaginary parts (a real system of twice the "
                     "size) to differentiate it")


def _eye(n, like):
    return np.eye(n, dtype=getattr(like, "dtype", np.float64))


def _used(g):
    """An output's gradient that contributes: not None (the output got none) and, on plain
    arrays, not all zeros (HIPS autograd's test; on Tensors it is kept: a higher derivative)."""
    return g is not None and (isinstance(g, Tensor) or bool(np.any(g)))


def _right_solve(x, r):
    """x R^-1, i.e. the solution Y of Y R = x (R^T Y^T = x^T)."""
    return _mT(np.linalg.solve(_mT(r), _mT(x)))


def _signs(rec, ref):
    """+-1 per column: the sign that turns each column of ``rec`` into numpy's ``ref`` (complex
    vectors: the phase e^(i phi) that does, a constant on the tape as a sign is)."""
    if np.iscomplexobj(ref):
        p = np.sum(np.conj(_value(rec)) * ref, axis=-2, keepdims=True)
        a = np.abs(p)
        return np.where(a > 0, p / np.where(a > 0, a, 1.0), 1.0)
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
    at = transpose(a, axes=tuple(range(nd - 2)) + (nd - 1, nd - 2))
    w, v = eigh(np.conj(at) if a.dtype.kind == "c" else at)  # (complex: the conjugate transpose)
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


def svd_full(a, u, s, vh, concatenate):
    """U, S, Vh of ``np.linalg.svd(a, full_matrices=True)`` for a non-square Tensor ``a``
    from the thin record's outputs ``u, s, vh``."""
    m, n = a.shape[-2:]
    uf, _, vhf = np.linalg.svd(a._value, full_matrices=True)
    d = _signs(u, uf[..., :, : min(m, n)]).astype(a.dtype)
    u, vh = u * d, vh * np.conj(_mT(d))  # U S Vh is unchanged by a phase on a column of U, its conjugate on Vh's row
    extra = _EXTRA(a)
    if m > n:
        return concatenate(u, extra, axis=-1), s, vh
    return u, s, concatenate(vh, extra, axis=-2)


def _qr_extra_vjp(g, ans, a):
    if np.any(_value(g)):
        raise ValueError(
            f"numpy.linalg.qr(a, mode='complete'): a gradient reached Q's last m - n columns of the "
            f"{tuple(np.shape(a))[-2:]} matrix at an A where LAPACK skipped a Householder reflection (a column "
            "already zero below its diagonal entry): numpy's completion of Q jumps under a perturbation there, so "
            "those columns have no derivative. R and Q's first n columns are differentiable; use only them, or "
            "mode='reduced'.")
    return np.zeros(np.shape(a), getattr(a, "dtype", np.float64))


_QR_EXTRA = Primitive(
    "qr_extra_columns", lambda a: np.linalg.qr(a, mode="complete")[0][..., :, a.shape[-1]:], (_qr_extra_vjp,),
    {"jacobian": "none where LAPACK skipped a reflection", "vjp": "ValueError when a gradient reaches them",
     "shapes": "A (..., m, n), m > n -> Q[..., :, n:] of mode='complete'",
     "kinks": "no derivative (forward mode: NaN tangent)"},
    (_extra_jvp,),
)


def qr_complete(a, q1, r1, concatenate):
    """Q (..., m, m) and R (..., m, n) of ``np.linalg.qr(a, mode='complete')`` for a tall Tensor ``a``
    (m > n) from the reduced record's ``q1``, ``r1``: Q's last m - n columns by the Householder completion
    (the module's docstring), numpy's values (the formula's differ by rounding only; the difference is
    added as a constant), R = [R1; 0]."""
    m, n = a.shape[-2:]
    qf = np.linalg.qr(a._value, mode="complete")[0]
    if not n or not a.size:  # an empty A (n = 0: Q = I, numpy's; or a batch axis 0): Q1's columns and a constant
        return concatenate(q1, own(qf[..., :, n:]), axis=-1), concatenate(
            r1, own(np.zeros(r1.shape[:-2] + (m - n, n), a.dtype)), axis=-2)
    eye, dt = np.eye(n, dtype=a.dtype), a.dtype
    ct = (lambda x: np.conj(_mT(x))) if dt.kind == "c" else _mT
    # per matrix of a batch: False where LAPACK skipped a reflection (review27a: one such matrix guarded all)
    ok = (np.linalg.svd(qf[..., :n, :n] - eye, compute_uv=False)[..., -1] > 4 * n * np.finfo(dt).eps)[..., None, None]
    if ok.any():
        mm = q1[..., :n, :] - own(eye)
        if not ok.all():  # (a stand-in, -I, where the completion is not used: the solve stays regular)
            mm = np.where(ok, mm, own(-eye))
        zh = np.linalg.solve(ct(mm), ct(q1[..., n:, :]))  # Z^H = (Q_nn - I)^-H Q_pn^H
        top = mm @ zh
        extra = concatenate(top, own(np.eye(m - n, dtype=dt)) + ct(zh) @ top, axis=-2)
    # (a skipped reflection: the guarded columns)
    extra = extra if ok.all() else _QR_EXTRA(a) if not ok.any() else np.where(ok, extra, _QR_EXTRA(a))
    q = concatenate(q1, extra, axis=-1)
    q = q + own(qf - q._value)
    return q, concatenate(r1, own(np.zeros(r1.shape[:-2] + (m - n, n), dt)), axis=-2)


def lower_hermitian(a, svd_vectors=False):
    """The Hermitian (real: symmetric) matrix numpy's ``hermitian=True`` paths (``pinv``, ``svd``) read
    through eigh: A's strict lower triangle, its conjugate transpose above, and the diagonal's real part
    (LAPACK's heevd takes the diagonal's imaginary part as 0), all recorded (the upper triangle gets no
    gradient). tape44 H2: the conjugate was missing, so a complex A gave another matrix's pseudo-inverse.

    ``svd_vectors``: ``np.linalg.svd(A, hermitian=True)`` with ``compute_uv=True``, refused (TypeError):
    numpy's U and Vh are eigh's vectors, whose signs are not svd's; the message gives the rewrite."""
    if not svd_vectors:
        low = np.tril(a, -1)
        return low + np.conj(_mT(low)) + np.triu(np.tril(np.real(a)))
    raise TypeError("autoprop records numpy.linalg.svd(..., hermitian=True) only with compute_uv=False "
                    "(numpy then reads A's lower triangle, through eigh, whose vectors' signs differ from "
                    "svd's). For the vectors write w, v = np.linalg.eigh(A) (recorded): the singular values "
                    "are np.abs(w), U = v and Vh = (v * np.sign(w)).conj().T, each sorted by np.abs(w), as numpy")
