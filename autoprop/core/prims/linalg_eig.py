"""The eigendecompositions: np.linalg.eigh and eigvalsh of a symmetric or complex Hermitian
matrix (numpy reads one triangle; complex: PyTorch's formulas, ``_linalg_complex``), eig and
eigvals of a general matrix (real with a real or complex spectrum, or complex: PyTorch's
linalg_eig_backward/linalg_eig_jvp, the eigenvectors' phases free). Each is one
record with two outputs (numpy's ``EighResult``/``EigResult``: ``w, v = ...``); a VJP adds
a term for each output that got a gradient, so the eigenvalues alone are differentiable at
repeated eigenvalues, as in jax, while A is diagonalizable with a well-conditioned V; at a defective
(or nearly defective) A a gradient reaching such an eigenvalue is NaN (:func:`unresolved` gives the
bound; review30). Derivations: Magnus 1985 (eig: HIPS autograd's
``grad_eig`` on real values); ``lessons/13-matrix-calculus.md``. Beside them, the matrix
exponential (scipy.linalg.expm; ``autoprop.scipy.linalg.expm``), whose derivative is its
Frechet derivative, the top-right block of the exponential of a block matrix; the Sylvester
equation's solution (scipy.linalg.solve_sylvester) and the principal square root
(scipy.linalg.sqrtm), whose derivatives are Sylvester solves (Kao & Hennequin 2020; Higham
2008, (6.5)).
"""

from __future__ import annotations

import numpy as np

from ..registry import defcomposite, defprim
from ..tensor import Tensor
from ._common import _holds_tensor, _mT, _shape, _t, unbroadcast
from ._linalg_complex import _diag_embed, _diagonal, _is_complex, _mH, gauge_check
from ._linalg_helpers import eigh_upper
from .linalg import _eye, _lower_sym, _phi, _result_type, _used
from .shape import transpose

__all__ = ["eigh", "eigvalsh", "eig", "eigvals", "expm", "solve_sylvester", "sqrtm"]


# --- eigh of a symmetric matrix (its lower triangle, as numpy reads it) ----------------
def _eigh_fwd(a):
    w, v = np.linalg.eigh(a)
    return w, v


def _eigh_gap(w, name="eigh", undefined="raise"):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it. At repeated eigenvalues (w_i ==
    w_j) the eigenvector derivative is undefined: ``undefined="raise"`` (reverse mode: a
    gradient reached the eigenvectors) refuses, ``"nan"`` (forward mode, where the tangent
    of the eigenvectors is computed whether used or not) puts NaN in those entries, as jax's
    JVP gives inf/NaN there."""
    n = _shape(w)[-1]
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)  # gap[i, j] = w_j - w_i
    off = 1.0 - _eye(n, w)
    gv = np.asarray(gap._value if isinstance(gap, Tensor) else gap)
    tie = (gv == 0) & (np.asarray(off) > 0)
    if np.any(tie):
        if undefined == "nan":
            return np.where(tie, np.nan, off / (gap + _eye(n, w) + tie))
        raise ValueError(
            f"autoprop.{name}: the derivative of the eigenvectors is undefined at repeated "
            "eigenvalues (w_i == w_j): they can rotate freely within the eigenspace (jax gives "
            f"NaN there). Use np.linalg.{'eigvals' if name == 'eig' else 'eigvalsh'} (eigenvalues only; or "
            "only the eigenvalues of the result: their gradient is defined) or perturb the matrix."
        )
    return off / (gap + _eye(n, w))


def _eigh_vjp_complex(g, ans):
    """PyTorch's linalg_eigh backward, in its convention (one conjugate in and out): gA = V (skew(V^H gV)
    o F + diag(gw)) V^H, skew(X) = (X - X^H) / 2, refused when the loss depends on the eigenvectors'
    phases (Im diag(V^H gV) != 0); then onto numpy's lower triangle (its diagonal's real part)."""
    gw, gv = g
    w, v = ans
    vh = _mH(v)
    m = None if gw is None else _diag_embed(np.real(gw) + np.zeros_like(w), v)
    if _used(gv):
        vhgv = vh @ np.conj(gv)
        gauge_check("eigh", "eigenvectors", np.imag(_diagonal(vhgv)), [gv])
        e = _eigh_gap(w) * (0.5 * (vhgv - _mH(vhgv)))
        m = e if m is None else m + e
    if m is None:
        return np.zeros(_shape(v), v.dtype)
    ga = v @ m @ vh  # Hermitian; numpy reads tril(A, -1), its mirror and Re diag(A)
    low = np.tril(ga + _mH(ga), -1)
    return np.conj(low + _eye(_shape(w)[-1], v) * np.real(ga))


def _eigh_vjp(g, ans, a):
    gw, gv = g
    w, v = ans
    if _is_complex(v):
        return _eigh_vjp_complex(g, ans)
    vt = _mT(v)
    m = None if gw is None else (v * np.expand_dims(gw, -2)) @ vt  # V diag(gw) V^T
    if _used(gv):  # (eigenvalues alone, eigvalsh: no eigenvector term, defined at ties)
        e = v @ (_eigh_gap(w) * (vt @ gv)) @ vt
        m = e if m is None else m + e
    if m is None:
        return np.zeros(_shape(v), v.dtype)
    return _phi(m + _mT(m))  # onto the lower triangle, the only part numpy reads


def _eigh_jvp(t, ans, a):
    w, v = ans
    if _is_complex(v):  # dA = tril(t, -1) + its conjugate mirror + Re diag(t), as numpy reads A
        low = np.tril(t, -1)
        p = _mH(v) @ (low + _mH(low) + _eye(_shape(w)[-1], v) * np.real(t)) @ v
        return np.real(_diagonal(p)), v @ (_eigh_gap(w, undefined="nan") * p)
    p = _mT(v) @ _lower_sym(t) @ v
    n = _shape(w)[-1]
    dw = np.sum(p * _eye(n, p), axis=-1)  # the diagonal of V^T dA V
    return dw, v @ (_eigh_gap(w, undefined="nan") * p)


def _np_eigh(a, UPLO="L"):  # noqa: N803
    if UPLO in ("U", "u"):  # the lower triangle of A^T (_linalg_helpers)
        return _EighResult(*eigh_upper(_t(a), eigh, transpose))
    if UPLO not in ("L", "l"):
        raise ValueError(f"numpy.linalg.eigh: UPLO must be 'L' or 'U'; got {UPLO!r}")
    return _EighResult(*eigh(_t(a)))


_EighResult = _result_type("EighResult", "eigenvalues eigenvectors")


eigh = defprim(
    "eigh", _eigh_fwd, _eigh_vjp, jvp=_eigh_jvp, multi=True,
    jacobian="A = V diag(w) V^T: dw = diag(V^T dA V), dV = V (F o (V^T dA V)), "
             "F_ij = 1/(w_j - w_i) (i != j), 0 on the diagonal",
    vjp="M = V (diag(gw) + F o (V^T gV)) V^T (a term for each output that got a gradient); "
        "dA = Phi(M + M^T) (lower triangle)",
    shapes="A (..., n, n) symmetric -> eigenvalues (..., n) ascending, eigenvectors (..., n, n) "
           "(columns): numpy's EighResult",
    kinks="complex A: PyTorch's formulas, a loss that depends on the eigenvectors' phases refused "
          "(ValueError, as PyTorch); repeated eigenvalues: the eigenvalues' gradient is defined (as jax); a gradient reaching "
          "the eigenvectors there is refused, ValueError (jax gives NaN), and forward mode gives "
          "the eigenvectors a NaN tangent (jax's inf/NaN); only A's lower triangle is read",
    numpy=(np.linalg.eigh,), np_call=_np_eigh, source="{out} = np.linalg.eigh({a})",
    reads=(("ans",),),
)


@defcomposite("eigvalsh", "the eigenvalue row of eigh: dA = Phi(2 V diag(g) V^T)",
              numpy=(np.linalg.eigvalsh,))
def eigvalsh(a, UPLO="L"):  # noqa: N803
    """The eigenvalues of a symmetric (Hermitian) matrix, ascending: numpy's ``np.linalg.eigvalsh``.

    Parameters
    ----------
    a : Tensor or array_like, shape (..., n, n)
        Real symmetric or complex Hermitian; only the triangle ``UPLO`` names is read.
    UPLO : {'L', 'U'}, default 'L'

    Returns
    -------
    Tensor, shape (..., n), real
        The eigenvalue row of :func:`eigh`, so its gradient is eigh's with no eigenvector term:
        ``dA = Phi(2 V diag(g) V^T)`` (the lower triangle), defined at repeated eigenvalues too.

    Raises
    ------
    ValueError
        ``UPLO`` other than 'L' or 'U'.
    """
    return _np_eigh(a, UPLO).eigenvalues




# --- eig of a general matrix: real (a real or a complex spectrum) or complex ----------------
# A = V diag(w) V^-1 with distinct eigenvalues, numpy's unit-norm columns. Real V: with
# P = V^-1 dA V: dw = diag(P), dV = Q - V diag(diag(V^T Q)), Q = V (F o P) (the second
# term keeps each column at unit norm); the adjoint: dA = V^-T (diag(gw) + F o (V^T G)) V^T,
# G = gV - V diag(diag(V^T gV)) (Magnus 1985, "On differentiating eigenvalues and
# eigenvectors", Econometric Theory 1; the formula of autograd's grad_eig on real values).
# Complex V (a complex A, or a real A with a complex spectrum): PyTorch's linalg_eig_backward,
# gA = V^-H (diag(gw) + (V^H gV - V^H V Re diag(V^H gV)) / conj(E)) V^H, E_ij = w_j - w_i, in
# its convention (dL/dx + i dL/dy); conjugated in and out (autoprop's convention inside,
# core/complex.py) it is the real formula above with G = gV - conj(V) Re diag(V^T gV): the
# columns' norms fixed, their phases free, so a loss that depends on the phases (Im diag(V^H gV)
# != 0 in PyTorch's convention) is refused as PyTorch refuses it. Its JVP (linalg_eig_jvp):
# dw = diag(P), dV = Q - V Re diag(V^H Q); a real A's gradient is the real part (core/complex.py).
def _eig_fwd(a):
    w, v = np.linalg.eig(a)
    return w, v


RESOLVED = 1e-6  # the largest first-order error bound (relative, float64) of a derivative given (:func:`unresolved`)


def _resolved(dtype):
    """The largest first-order relative error bound of a derivative given in ``dtype``: ``RESOLVED (eps /
    eps_64)^(3/8)``.

    :data:`RESOLVED` (1e-6) in float64 and complex128; 1.9e-3 in float32 and complex64, ``eps`` being float32's
    (2^-23): the bound ``eps / gap`` grows as eps, the threshold as eps^(3/8), so a derivative as well resolved as a
    float64 one at 1e-6 is kept (session 31's rule, :func:`beyond`, :func:`unresolved`).

    Parameters
    ----------
    dtype : numpy dtype or type
        The derivative's dtype, promoted with float32 (``np.result_type(dtype, np.float32)``: float16, int8 and
        int16 count as float32, larger integers as float64).

    Returns
    -------
    float
        The threshold (a numpy float64). Raises ``ValueError`` for a dtype that has no float promotion (object:
        ``np.finfo``'s "not inexact").
    """
    eps = np.finfo(np.result_type(dtype, np.float32)).eps
    return RESOLVED * (eps / np.finfo(np.float64).eps) ** 0.375


def beyond(est, dtype):
    """True where the first-order relative error bound ``est`` of a derivative in ``dtype`` is above ``RESOLVED``
    (1e-6 in float64; ``RESOLVED (eps / eps_64)^(3/8)``, 1.9e-3, in float32), or NaN: no derivative is given there
    (:func:`unresolved`, ``polynomial._roots_unresolved``)."""
    return ~(np.asarray(est) <= _resolved(dtype))


def lapack_eps(dtype):
    """``(eps of LAPACK's computation, eps of the outputs)`` of numpy's eig, eigvals and roots on ``dtype``.

    numpy's linalg computes in double precision whatever the input (``numpy.linalg._commonType``: float32 and
    complex64 go to LAPACK's dgeev/zgeev) and rounds w and V to the input's precision only at the end, so
    float32 input has float64's backward error and float32's rounding of the outputs (review32,
    F32_EIG_NAN_NUMPY_COMPUTES_IN_FLOAT64: float32's eps for both NaN'd a symmetric pair 1e-4 apart).

    Parameters
    ----------
    dtype : numpy dtype or type
        The input's dtype (float32, float64, complex64, complex128), promoted with float32 as :func:`_resolved`
        does (float16, int8, int16 count as float32).

    Returns
    -------
    tuple of (float, float)
        ``(eps_64, eps_out)``: float64's eps (2^-52) for LAPACK's backward error, and the outputs' eps (2^-23 for
        float32 and complex64 input, 2^-52 else) for their final rounding, numpy floats. Raises ``ValueError`` for
        a dtype that has no float promotion (object: ``np.finfo``'s "not inexact").
    """
    dt = np.result_type(dtype, np.float32)
    return np.finfo(np.float64).eps, np.finfo(dt).eps


def _balanced(a):
    """gebal of each matrix of ``a`` (..., n, n): ``(B, lo, hi, perm, scale, ||B_act||_F)``, ``T = P D`` as columns
    ``perm`` and powers of 2 ``scale`` (:func:`lapack_coupling`)."""
    from scipy.linalg.lapack import get_lapack_funcs

    a = np.asarray(a)
    n = a.shape[-1]
    a3 = a.reshape((-1, n, n))
    gebal = get_lapack_funcs("gebal", (a3,))
    b = np.empty(a3.shape, np.result_type(a3.dtype, np.float32))
    lo, hi = np.zeros(len(a3), int), np.zeros(len(a3), int)
    perm, scale = np.broadcast_to(np.arange(n), a3.shape[:2]).copy(), np.ones(a3.shape[:2])
    fro = np.zeros(len(a3))
    for k, m in enumerate(a3):
        b[k], lo[k], hi[k], ps, _ = gebal(m, permute=1, scale=1)
        scale[k, lo[k]:hi[k] + 1] = ps[lo[k]:hi[k] + 1]  # gebal's PSCALE: D(j) in the active part, else P(j),
        if lo[k] > 0 or hi[k] < n - 1:  # the interchanges made from n down to ihi+1, then from 1 up to ilo-1
            pk = list(range(n))  # (LAPACK's dgebal documentation)
            for j in [*range(n - 1, hi[k], -1), *range(lo[k])]:
                q = int(ps[j]) - 1
                pk[j], pk[q] = pk[q], pk[j]
            perm[k] = pk
        fro[k] = np.linalg.norm(b[k, lo[k]:hi[k] + 1, lo[k]:hi[k] + 1])  # ||B_act||_F
    shape = a.shape[:-2]
    return tuple(z.reshape(shape + z.shape[1:]) for z in (b, lo, hi, perm, scale, fro))


def lapack_coupling(a, y, x, bal=None):
    """``|y_j E x_i| / eps`` bounded for LAPACK's rounding ``E`` in numpy's eig of ``a``, shape (..., len(y), x's columns).

    numpy's eig is LAPACK's geev: it balances, ``B = T^-1 A T`` (gebal: a permutation that isolates the eigenvalues of
    triangular parts, then a diagonal scaling; T exact), and reduces only the active block ``B[lo:hi+1, lo:hi+1]``
    (Anderson et al., *LAPACK Users' Guide*, 3rd ed., 1999, sect. 4.8.1.2 and 4.11.1.1). Its backward error is
    normwise in that block, ``||E_act|| <= eps ||B_act||`` (a zero of A no longer exact there), so that part couples
    ``y`` and ``x`` by ``eps ||B_act|| ||(y T)_act|| ||(T^-1 x)_act||`` (Golub & Van Loan 2013, sect. 7.2.2); the
    orthogonal factor also mixes the active rows of the columns right of the block and the active columns of the
    rows above it (their norms, entrywise), and the isolated part is exact up to its entries' own rounding (``|B|``).
    The constant ``p(n)`` of the bound is left out, as in the Users' Guide's approximate error bounds (sect. 4.8.1.1,
    ``EPSMCH * ABNRM / RCONDE``).

    Parameters
    ----------
    a : ndarray, shape (..., n, n)
        One matrix or a batch (gebal matrix by matrix, the rest batched: session 33, left33).
    y : ndarray, shape (..., k, n)
        Rows (left vectors).
    x : ndarray, shape (..., n, m)
        Columns (right vectors).
    bal : tuple, optional
        :func:`_balanced` of ``a``, when the caller has it (one gebal per matrix for several calls).
    """
    y, x = np.asarray(y), np.asarray(x)
    b, lo, hi, perm, scale, fro = _balanced(a) if bal is None else bal
    n = b.shape[-1]
    # y T and T^-1 x, T = P D (a permutation times powers of 2: exact): columns perm[j] of y times scale[j]
    take = np.broadcast_to(perm[..., None, :], y.shape[:-1] + (n,)) if y.ndim > 1 else perm
    yb = np.abs(np.take_along_axis(y, take, axis=-1) * scale[..., None, :])
    xb = np.abs(np.take_along_axis(x, np.broadcast_to(perm[..., :, None], x.shape), axis=-2) / scale[..., :, None])
    idx = np.arange(n)
    act = (idx >= lo[..., None]) & (idx <= hi[..., None])  # (..., n)
    sq = np.abs(b) ** 2
    col = np.sqrt(np.sum(np.where(act[..., :, None], sq, 0.0), axis=-2))  # ||B[act, c]|| per column c
    row = np.sqrt(np.sum(np.where(act[..., None, :], sq, 0.0), axis=-1))  # ||B[r, act]|| per row r
    right, above = idx > hi[..., None], idx < lo[..., None]
    e = np.abs(b).astype(float)
    e = e + np.where(act[..., :, None] & right[..., None, :], col[..., None, :], 0.0)
    e = e + np.where(above[..., :, None] & act[..., None, :], row[..., :, None], 0.0)
    ny = np.sqrt(np.sum(np.where(act[..., None, :], yb, 0.0) ** 2, axis=-1))  # ||(y T)_act|| per row of y
    nx = np.sqrt(np.sum(np.where(act[..., :, None], xb, 0.0) ** 2, axis=-2))  # ||(T^-1 x)_act|| per column of x
    return yb @ e @ xb + fro[..., None, None] * (ny[..., :, None] * nx[..., None, :])


def unresolved(a, w, v, vi):
    """True where the derivative of eigenvalue ``w_i`` of ``a`` cannot be computed to ``RESOLVED`` (relative), with
    ``y_i`` a row of ``vi``: the first look; :func:`_eig_unresolved` gives a second look, the reduced resolvent as a
    whole, to each eigenvalue this one rejects (:func:`resolvent_bound`).

    Parameters
    ----------
    a : ndarray, shape (..., n, n)
        The matrix (a polynomial's companion matrix for its roots).
    w : ndarray, shape (..., n)
        Its eigenvalues as computed.
    v, vi : ndarray, shape (..., n, n)
        Its eigenvectors (columns ``x_i``) and ``V^-1`` as computed (rows ``y_i``, ``y_i x_i = 1``).

    Returns
    -------
    ndarray of bool, shape (..., n)
        ``eps sum_(j != i) (c_ji |x_j| / |x_i| + c_ij |y_j| / |y_i|) / |w_i - w_j|`` plus the rounding of the
        computed row ``y_i`` of ``V^-1``, ``eps_V (1 + || |y_i| |V| |V^-1| || / |y_i|)`` (Higham 2002, 14.1; eps_V
        the eps of V's dtype), above ``RESOLVED`` (:func:`beyond`; an exact tie: True, unless the rounding does not
        couple the two, ``c = 0``, as at ``c I``, whose eigenvalues then get jax's derivative),
        ``c_ji = |y_j E x_i| / eps`` (:func:`lapack_coupling`).

    Notes
    -----
    The derivative of ``w_i`` is ``y_i^T x_i^T`` (its gradient; Magnus 1985), so its error is that of the computed
    ``x_i`` and ``y_i``. A perturbation ``E`` of ``A`` moves them, to first order, by
    ``dx_i = sum_(j != i) x_j (y_j E x_i) / (w_i - w_j)`` and ``dy_i = sum_(j != i) y_j (y_i E x_j) / (w_i - w_j)``
    (Golub & Van Loan, *Matrix Computations*, 4th ed., 2013, sect. 7.2.4, eigenvector sensitivity; Stewart & Sun,
    *Matrix Perturbation Theory*, 1990, ch. V), so their relative change is bounded by the sum above with ``E``
    LAPACK's rounding (:func:`lapack_coupling`): the gap to every other eigenvalue weighted by how the rounding
    couples the two (which holds the neighbours' condition numbers), not ``kappa_i`` alone (session 30's rule, which
    NaN'd ``[[1, 1e6], [0, 2]]`` and the roots of ``prod (x - k)``, k = 1..8: review31). It is invariant under
    ``A -> cA`` and LAPACK's balancing, 0 across the zero block of a triangular A (whose eigenvalues numpy computes
    exactly), infinite at a repeated eigenvalue, and about ``eps kappa^2`` at a Jordan block perturbed by ``t``
    (``w = l +- sqrt(t)``, ``kappa ~ 1/sqrt(t)``), where the derivative itself is ``~ kappa``: no digit of it is
    right. Against mpmath at 60 digits (review31's sweeps and fixv31a's, /work/wt/fixv31a_sweep) the bound is above
    the true error, by 10 to 1e4. The sum term by term is an upper bound of the reduced resolvent's
    (``sum_(j != i) x_j y_j / (w_i - w_j)``) as a whole, which is what a simple eigenvalue beside a defective
    block needs (:func:`resolvent_bound`): its terms are huge there, their sum is not.
    """
    a, w, v, vi = (np.asarray(x._value if isinstance(x, Tensor) else x) for x in (a, w, v, vi))
    dt = np.result_type(a.dtype, v.dtype, np.float32)
    eps, eps_out = lapack_eps(dt)
    off = ~np.eye(w.shape[-1], dtype=bool)
    with np.errstate(all="ignore"):
        m = lapack_coupling(np.broadcast_to(a, v.shape), vi, v)  # m[j, i] = |y_j E x_i| / eps
        nx, ny = np.linalg.norm(v, axis=-2), np.linalg.norm(vi, axis=-1)
        gap = np.abs(w[..., None, :] - w[..., :, None])  # gap[j, i] = |w_i - w_j|
        tx = np.sum(np.where(off & (m > 0), m * nx[..., :, None] / gap, 0.0), axis=-2) / nx
        ty = np.sum(np.where(off & (m > 0), m * ny[..., None, :] / gap, 0.0), axis=-1) / ny
        # V^-1 solved in V's precision (|y_i| |V| |V^-1|: Higham 2002, 14.1); w and V rounded to it
        est = eps * (tx + ty) + eps_out * (1 + np.linalg.norm(np.abs(vi) @ np.abs(v) @ np.abs(vi), axis=-1) / ny)
    return beyond(est, dt)


def _bordered(a, w, v):
    """``N_i = A - w_i I + x_i c_i`` for every eigenvalue, shape (..., n, n, n) (axis -3: i), and ``c_i``, shape
    (..., n, n) (rows), ``c_i = x_i^H / (x_i^H x_i)``: on values or Tensors.

    For a simple eigenvalue ``N_i`` is invertible and ``c_i N_i^-1 = y_i``, the left eigenvector with ``y_i x_i = 1``
    (``y_i N_i = y_i (A - w_i I) + (y_i x_i) c_i = c_i``; ``N_i x_i = x_i``), without ``V^-1``: at a simple
    eigenvalue beside a defective block the rows of V^-1 are huge and cancel, this one is not (Wilkinson 1965,
    *The Algebraic Eigenvalue Problem*, ch. 2 on the bordered/deflated matrix; Golub & Van Loan 2013, 7.2.4)."""
    n = _shape(v)[-2]
    c = _mT(np.conj(v)) / np.expand_dims(np.sum(np.conj(v) * v, axis=-2), -1)  # rows c_i
    xt = _mT(v)  # rows x_i
    nm = np.expand_dims(a, -3) - np.expand_dims(np.expand_dims(w, -1), -1) * _eye(n, v) \
        + np.expand_dims(xt, -1) * np.expand_dims(c, -2)
    return nm, c


def resolvent_bound(a, w, x, eps, eps_out):
    """The second look: the error bound of the derivative of a simple eigenvalue ``w`` of ``a`` (a matrix or a stack of them, ``(..., n, n)``) with right
    eigenvector ``x``.

    ``y = c N^-1`` (:func:`_bordered`) and the reduced resolvent ``S = sum_(j != i) x_j y_j / (w_j - w)`` as a whole,
    ``S = (I - x y) N^-1 (I - x y)`` (``N`` maps the complementary invariant subspace as ``A - w I`` does, up to a
    component along ``x``, which ``I - x y`` removes; Kato 1995, *Perturbation Theory for Linear Operators*, I.5.3,
    the reduced resolvent; it exists beside a defective block, whose own terms ``x_j y_j`` are unbounded). Then
    ``dx = -S E x`` and ``dy = -y E S`` (the sums of :func:`unresolved`'s Notes), bounded entry by entry by
    :func:`lapack_coupling` with ``S``'s rows and columns; plus the solve's rounding, ``eps_out (1 + || |y| |L| |U|
    |N^-1| || / |y|)`` with ``L U`` the LU factors of ``N`` (backward error ``|dN| <= c_n eps |L| |U|``: Higham 2002,
    Thm 9.3 and sect. 14.1; not ``|N|``: at a near-multiple eigenvalue of an isolated triangular block, where the
    rounding model of the block says nothing moves, the factors grow and this term is large, left33's sweep: 8 and 38
    at k76, whose gradient was 56% off with ``|N|``), and the computed ``w``'s error carried by ``N``:
    ``(eps c(y, x) + eps_out |w|) ||y N^-1|| / |y|``.

    Parameters
    ----------
    a : ndarray, shape (..., n, n)
    w : ndarray, shape (...,)
        The eigenvalue as computed (one per matrix).
    x : ndarray, shape (..., n)
        Its right eigenvector as computed (numpy's unit column).
    eps, eps_out : float
        :func:`lapack_eps` of the dtype.

    Returns
    -------
    ndarray of float, shape (...,)
        The first-order relative error bound of ``y x^T`` (``inf`` where ``N`` is singular: a repeated eigenvalue).
    """
    import scipy.linalg

    a, w, x = np.asarray(a), np.asarray(w), np.asarray(x)
    nm, c = _bordered(a[..., None, :, :], w[..., None, None], x[..., None, :, None])
    nm, c = nm[..., 0, 0, :, :], c[..., 0, 0, :]
    pl, u = scipy.linalg.lu(nm, permute_l=True)  # (the factors N^-1 is computed from: partial pivoting, as numpy)
    sing = np.any(np.diagonal(u, axis1=-2, axis2=-1) == 0, axis=-1)  # (exactly singular: NaN, its bound inf)
    ni = np.full(nm.shape, np.nan, nm.dtype)
    try:
        ni[~sing] = np.linalg.inv(nm[~sing])
    except np.linalg.LinAlgError:  # (LAPACK found a zero pivot scipy's factors did not: matrix by matrix)
        for k in zip(*np.nonzero(~sing)):
            try:
                ni[k] = np.linalg.inv(nm[k])
            except np.linalg.LinAlgError:
                pass
    y = (c[..., None, :] @ ni)[..., 0, :]
    q = np.eye(x.shape[-1]) - x[..., :, None] * y[..., None, :]
    s = q @ ni @ q
    nx, ny = np.linalg.norm(x, axis=-1), np.linalg.norm(y, axis=-1)
    bal = _balanced(a)
    tx = np.linalg.norm(lapack_coupling(a, s, x[..., :, None], bal)[..., 0], axis=-1) / nx
    ty = np.linalg.norm(lapack_coupling(a, y[..., None, :], s, bal)[..., 0, :], axis=-1) / ny
    solve = np.linalg.norm((np.abs(y)[..., None, :] @ np.abs(pl) @ np.abs(u) @ np.abs(ni))[..., 0, :], axis=-1) / ny
    dl = eps * lapack_coupling(a, y[..., None, :], x[..., :, None], bal)[..., 0, 0] + eps_out * np.abs(w)  # (w's error)
    est = eps * (tx + ty) + eps_out * (1 + solve) + dl * np.linalg.norm((y[..., None, :] @ ni)[..., 0, :], axis=-1) / ny
    return np.where(np.isfinite(est), est, np.inf)


def nan_linked(value, mask, link):
    """``value`` where ``mask`` is False, NaN where it is True, the NaN linked to the inputs.

    ``np.where(mask, np.nan, value)`` would take the NaN from a constant, whose derivative is 0: a
    gradient NaN on purpose (an unresolved eigenvalue or root) would have a finite Hessian of zeros
    (review31, HESSIAN_FINITE_WHERE_GRADIENT_NAN). ``value + where(mask, nan * link, 0)`` has the same
    value (``link`` finite) and its derivative with respect to whatever ``link`` depends on is
    ``NaN * dlink`` where ``mask``: NaN at every order, in reverse and forward mode and on nested tapes;
    0 elsewhere, even where ``dlink`` is NaN (a simple eigenvalue beside an unresolved one, left33).

    Parameters
    ----------
    value : Tensor or ndarray
    mask : ndarray of bool, broadcastable to ``value``
    link : Tensor or ndarray, broadcastable to ``value``, finite
        A sum of the record's inputs, output and incoming gradient or tangent.
    """
    return value + np.where(mask, np.nan * link, 0.0)  # (not where(mask, nan, 0) * link: 0 * a NaN derivative of
    # link, as an unresolved eigenvalue's tangent, would NaN the entries left alone at the next order)


def _eig_unresolved(a, w, v):
    """``(unresolved, bordered, singular)`` on the values: the eigenvalues of ``A = V diag(w) V^-1`` whose derivative
    is not resolved, shape (..., n); those resolved only with their left eigenvector from the bordered solve
    (:func:`resolvent_bound`), not from ``V^-1``, shape (..., n); the matrices (...,) whose V cannot be inverted at
    all (an exactly defective A).

    Each eigenvalue :func:`unresolved` rejects gets a second look, :func:`resolvent_bound`: a simple eigenvalue
    beside a defective or nearly defective block (SIMPLE_EIGENVALUE_BESIDE_JORDAN_NAN: ``[[2, 1, .3], [0, 2, .7],
    [0, 0, 5]]``'s 5) is resolved there, and its left eigenvector is taken from it when the row of ``V^-1`` is not
    (its rounding term is then what rejected it); an eigenvalue of the block itself stays unresolved: ``N`` is
    singular there (``y N = 0`` with ``y`` the block's left eigenvector, ``y x = 0``), to working precision when
    computed, and the second look's solve term (its LU factors) is huge, whatever the rounding model of an isolated
    triangular block says entry by entry."""
    a, w, v = (np.asarray(x._value if isinstance(x, Tensor) else x) for x in (a, w, v))
    if not v.size:  # (0, 0) matrices, or none: nothing unresolved (reshape(-1, 0, 0) has no -1)
        return np.zeros(v.shape[:-1], bool), np.zeros(v.shape[:-1], bool), np.zeros(v.shape[:-2], bool)
    vs = v.reshape((-1,) + v.shape[-2:])
    sing = np.zeros(vs.shape[:1], bool)
    with np.errstate(all="ignore"):
        try:  # (one batched inverse; matrix by matrix only when one of them is singular)
            vis = np.linalg.inv(vs)
        except np.linalg.LinAlgError:
            vis = np.full(vs.shape, np.nan, np.result_type(vs.dtype, np.float32))
            for i, m in enumerate(vs):
                try:
                    vis[i] = np.linalg.inv(m)
                except np.linalg.LinAlgError:
                    sing[i] = True
        a_s = np.broadcast_to(a, v.shape).reshape(vs.shape)
        w_s = w.reshape(vs.shape[:-1])
        bad = unresolved(a_s, w_s, vs, vis)
        sub = np.zeros(bad.shape, bool)
        if bad.any():
            dt = np.result_type(a.dtype, v.dtype, np.float32)
            eps, eps_out = lapack_eps(dt)
            work = np.result_type(dt, np.float64)
            def second(look):  # the flagged (matrix, eigenvalue) pairs, all at once
                k, i = np.nonzero(look)
                if len(k):
                    est = resolvent_bound(a_s[k].astype(work), w_s[k, i], vs[k, :, i].astype(
                        np.result_type(work, vs.dtype)), eps, eps_out)
                    bad[k, i] = beyond(est, dt)
                    sub[k, i] = ~bad[k, i]

            first = bad.copy()
            second(first)
            # then the other eigenvalues of a matrix that keeps an unresolved one: its V^-1 is not used at all (its
            # unresolved eigenvalues' rows are huge, and their NaN tangents would reach every row)
            second(bad.any(axis=-1)[:, None] & ~first)
    return bad.reshape(v.shape[:-1]), sub.reshape(v.shape[:-1]), sing.reshape(v.shape[:-2])


def _reduced(a, w, v, mask):
    """``(Y, S)`` from the bordered inverses ``N_i^-1`` (:func:`_bordered`) where ``mask`` (..., n), on values or
    Tensors (an outer tape differentiates them): rows ``y_i = c_i N_i^-1`` (the left eigenvectors, ``y_i x_i = 1``),
    shape (..., n, n), and the reduced resolvents ``S_i = (I - x_i y_i) N_i^-1 (I - x_i y_i) = sum_(j != i) x_j y_j /
    (w_j - w_i)`` (:func:`resolvent_bound`), shape (..., n, n, n) (axis -3: i); where not ``mask``, ``N_i = I``
    (values of no meaning, never used)."""
    n = _shape(v)[-2]
    nm, c = _bordered(a, w, v)
    ni = np.linalg.inv(np.where(mask[..., None, None], nm, _eye(n, v)))
    y = (np.expand_dims(c, -2) @ ni)[..., 0, :]
    q = _eye(n, v) - np.expand_dims(_mT(v), -1) * np.expand_dims(y, -2)  # I - x_i y_i
    return y, q @ ni @ q


def _left_rows(a, w, v, sub, noinv):
    """``Y``, shape (..., n, n): ``V^-1`` with row i the bordered solve's ``y_i`` where ``sub`` (:func:`_reduced`);
    in the matrices ``noinv`` (...,) (one with an unresolved eigenvalue, whose every other row is bordered, or a
    singular V) no ``V^-1``: 0 in the rows not bordered (never used unless NaN'd)."""
    n = _shape(w)[-1]
    if noinv.any():
        vi = np.where(noinv[..., None, None], 0.0, np.linalg.inv(np.where(noinv[..., None, None], _eye(n, v), v)))
    else:
        vi = np.linalg.inv(v)
    return np.where(sub[..., None], _reduced(a, w, v, sub)[0], vi)


def _kept(w, v, bad, cut=None):
    """``(w, V)`` with the unresolved eigenvalues' entries (and every entry of the matrices ``cut``) replaced by 0 and
    identity columns: their NaN tangents and gradients (nan_linked) must not reach the others through a product."""
    n = _shape(w)[-1]
    col = bad if cut is None else bad | cut[..., None]
    return np.where(col, 0.0, w), np.where(col[..., None, :], _eye(n, v), v)


def _eig_vjp(g, ans, a):
    gw, gv = g
    w, v = ans
    n = _shape(w)[-1]
    bad, sub, sing = _eig_unresolved(a, w, v)  # (..., n): ill-conditioned eigenvalues (repeated in a defective A)
    vbad = bad.any(axis=-1)  # (...,): per matrix (a batch's other matrices keep their gradient: review32)
    # in such a matrix the eigenvectors of the others are differentiable (through their reduced resolvents), not
    # those of the unresolved eigenvalues
    if _used(gv) and np.any(bad & np.any(np.asarray(gv._value if isinstance(gv, Tensor) else gv) != 0, axis=-2)):
        raise ValueError(
            "autoprop.eig: the derivative of the eigenvectors is undefined at a defective or nearly defective A "
            f"(an eigenvalue whose derivative's first-order error bound under rounding is above {_resolved(getattr(v, 'dtype', float)):.2g}: a repeated "
            "eigenvalue without a basis of eigenvectors; see autoprop.core.prims.linalg_eig.unresolved); a gradient "
            "(or a higher derivative) reached the eigenvectors of those eigenvalues. Perturb the matrix, or use only "
            "symmetric functions of the eigenvalues through another path (np.trace, np.poly(A), det).")
    m = None if gw is None else np.expand_dims(gw, -2) * _eye(n, w)  # diag(gw)
    nan = None  # the matrices whose gradient reaches an unresolved eigenvalue (or whose V is singular): NaN
    if gw is not None and bad.any():
        hit = np.asarray(gw._value if isinstance(gw, Tensor) else gw) != 0
        nan = np.any(bad & hit, axis=-1)
    extra = None
    if _used(gv):  # (eigenvalues alone, eigvals: no eigenvector term, defined at ties)
        if _is_complex(v):  # (PyTorch's V^H gV, conjugated: diag(V^T gV) its conjugate)
            d = np.sum(v * gv, axis=-2, keepdims=True)
            gauge_check("eig", "eigenvectors", np.imag(d), [gv])
            gv = gv - np.conj(v) * np.real(d)  # the unit-norm constraint, the phases free
        else:
            gv = gv - v * np.sum(v * gv, axis=-2, keepdims=True)  # the unit-norm constraint
        if vbad.any():  # dx_i = -S_i dA x_i: its adjoint -S_i^T G_i x_i^T, not the sum over j (huge terms there)
            wk, vk = _kept(w, v, bad)
            u = (_mT(_reduced(a, wk, vk, sub)[1]) @ np.expand_dims(_mT(gv), -1))[..., 0]  # rows S_i^T G_i
            extra = -(_mT(np.where((vbad[..., None] & sub)[..., None], u, 0.0)) @ _mT(vk))
            gv = np.where(vbad[..., None, None], 0.0, gv)
        wd = np.where(vbad[..., None], np.arange(n), w) if vbad.any() else w  # (no gradient reaches those V)
        e = _eigh_gap(wd, "eig") * (_mT(v) @ gv)
        m = e if m is None else m + e
    if m is None:
        return np.zeros(_shape(v), v.dtype)
    # rows of V^-1 replaced by the bordered solve's left eigenvectors where the first look did not resolve them, and
    # a matrix with an unresolved eigenvalue (V may be singular to working precision) solved with Y, not with V
    ypath = vbad | sub.any(axis=-1) if nan is None else (vbad | sub.any(axis=-1)) & ~nan
    if nan is None and not ypath.any():
        return np.linalg.solve(_mT(v), m @ _mT(v))
    # a singular V cannot be solved with, and a NaN matrix's V gets no gradient (a Hessian would then reach the
    # eigenvectors of a defective matrix): I there, then NaN
    cut = sing | ypath if nan is None else sing | ypath | nan
    vs = np.where(cut[..., None, None], _eye(n, v), v)
    out = np.linalg.solve(_mT(vs), m @ _mT(vs))
    if ypath.any():
        wk, vk = _kept(w, v, bad, nan)
        ys = _left_rows(a, wk, vk, sub & ypath[..., None], vbad | sing)
        out = np.where(ypath[..., None, None], _mT(ys) @ m @ _mT(vk), out)
    if extra is not None:
        out = out + extra
    if nan is None:
        return out
    link = np.sum(w, axis=-1) + np.sum(gw, axis=-1)
    return nan_linked(out, nan[..., None, None], link[..., None, None])


def _eig_jvp(t, ans, a):
    w, v = ans
    n = _shape(w)[-1]
    bad, sub, sing = _eig_unresolved(a, w, v)
    vbad = bad.any(axis=-1)
    if not (sub.any() or vbad.any()):
        p = np.linalg.solve(v, t @ v)  # V^-1 dA V
        q = v @ (_eigh_gap(w, "eig", undefined="nan") * p)
    else:  # Y for V^-1 (_eig_vjp); in a matrix with an unresolved eigenvalue dx_i = -S_i dA x_i (_reduced)
        ypath = vbad | sub.any(axis=-1)
        wk, vk = _kept(w, v, bad)
        vs = np.where((sing | ypath)[..., None, None], _eye(n, v), v)
        p = np.linalg.solve(vs, t @ vs)
        p = np.where(ypath[..., None, None], _left_rows(a, wk, vk, sub, vbad | sing) @ t @ vk, p)
        q = (np.where(sing[..., None, None], _eye(n, v), v) if sing.any() else v) @ (
            _eigh_gap(w, "eig", undefined="nan") * p)
        if vbad.any():
            qs = -(_reduced(a, wk, vk, sub)[1] @ np.expand_dims(t, -3) @ np.expand_dims(_mT(vk), -1))[..., 0]  # rows
            q = np.where(vbad[..., None, None], _mT(qs), q)
    dw = np.sum(p * _eye(n, p), axis=-1)
    if _is_complex(v):  # dV = Q - V Re diag(V^H Q) (PyTorch's linalg_eig_jvp)
        dv = q - v * np.real(np.sum(np.conj(v) * q, axis=-2, keepdims=True))
    else:
        dv = q - v * np.sum(v * q, axis=-2, keepdims=True)
    if not bad.any():
        return dw, dv
    # an unresolved eigenvalue's tangent is NaN (not differentiable alone: forward mode cannot know that only a
    # symmetric function of them is used), and so is its eigenvector's
    link = np.sum(t, axis=(-2, -1)) + np.sum(w, axis=-1)
    return (nan_linked(dw, bad, link[..., None]), nan_linked(dv, bad[..., None, :], link[..., None, None]))


def _np_eig(a):
    return _EigResult(*eig(_t(a)))


_EigResult = _result_type("EigResult", "eigenvalues eigenvectors")


eig = defprim(
    "eig", _eig_fwd, _eig_vjp, jvp=_eig_jvp,
    jacobian="A = V diag(w) V^-1, P = V^-1 dA V: dw = diag(P), dV = Q - V diag(diag(V^T Q)), "
             "Q = V (F o P), F_ij = 1/(w_j - w_i) (i != j), 0 on the diagonal; complex V: "
             "dV = Q - V Re diag(V^H Q) (PyTorch's linalg_eig_jvp)",
    vjp="G = gV - V diag(diag(V^T gV)); dA = V^-T (diag(gw) + F o (V^T G)) V^T (Magnus 1985); "
        "complex V: PyTorch's linalg_eig_backward, V^-H (diag(gw) + (V^H gV - V^H V Re diag(V^H gV)) "
        "/ conj(E)) V^H in its convention, i.e. G = gV - conj(V) Re diag(V^T gV) in autoprop's",
    shapes="A (..., n, n) real or complex -> eigenvalues (..., n) (numpy's order), eigenvectors "
           "(..., n, n) (unit-norm columns): numpy's EigResult (complex for a complex A or a "
           "complex spectrum; a real A's gradient is real)",
    kinks="complex eigenvectors: each defined up to a phase e^(i phi), a loss that depends on the "
          "phases refused (ValueError, as PyTorch); repeated eigenvalues: the eigenvalues' "
          "gradient is defined while A is diagonalizable with a well-conditioned V, a gradient reaching the "
          "eigenvectors is refused, ValueError (forward mode: a NaN tangent); a defective or nearly defective A "
          "(an eigenvalue whose derivative's first-order error bound is above 1e-6, linalg_eig.unresolved): a gradient reaching "
          "those eigenvalues is NaN for that matrix (their sum's is smooth, their own is not, and the two cannot "
          "be told apart from g), their tangent NaN, their eigenvectors' gradient refused (ValueError); a simple "
          "eigenvalue beside them keeps its gradient, tangent and eigenvector's derivatives (left eigenvector and "
          "reduced resolvent from the bordered matrix A - w I + x x^H, not from V^-1: linalg_eig.resolvent_bound)",
    numpy=(np.linalg.eig,), np_call=_np_eig, source="{out} = np.linalg.eig({a})", multi=True,
    reads=((0, "ans"),),
)


@defcomposite("eigvals", "the eigenvalue row of eig: dA = V^-T diag(g) V^T",
              numpy=(np.linalg.eigvals,))
def eigvals(a):
    """The eigenvalues of a general square matrix in numpy's order: numpy's ``np.linalg.eigvals``.

    Parameters
    ----------
    a : Tensor or array_like, shape (..., n, n), real or complex

    Returns
    -------
    Tensor, shape (..., n)
        Complex for a complex A or a complex spectrum. The eigenvalue row of :func:`eig`, so its
        gradient is ``dA = V^-T diag(g) V^T`` (Magnus 1985; PyTorch's ``linalg_eig_backward`` for
        complex V, conjugated in and out), defined at repeated eigenvalues while A is
        diagonalizable; a real A's gradient is real.

    Notes
    -----
    At a defective or nearly defective A (a repeated eigenvalue without a basis of eigenvectors:
    an eigenvalue whose derivative's first-order error bound under rounding, against the gaps to the
    others, is above 1e-6: :func:`unresolved`) the eigenvalues are not differentiable one by one (a
    Jordan block perturbed by ``t`` splits as ``l +- sqrt(t)``) and the formula would divide by a
    near-singular V (review30: a finite wrong number). Symmetric functions of them are smooth, but
    they cannot be told from the gradient ``g`` alone (``sum(w)`` and ``sum(w**2) / 2`` give the same
    ``g`` at a double eigenvalue 1 and different gradients), so a gradient reaching such an
    eigenvalue is NaN for its matrix (jax gives NaN too), and its tangent in forward mode is NaN.
    A simple eigenvalue beside such a block keeps its gradient ``y x^T / (y x)``: its left eigenvector
    is then taken from ``A - w I + x x^H`` (:func:`autoprop.core.prims.linalg_eig.resolvent_bound`),
    not from ``V^-1``, whose rows are lost there (``[[2, 1, .3], [0, 2, .7], [0, 0, 5]]``: d(w_5)/dA's
    third row is ``[16/90, 7/30, 1]``, as torch and jax give).
    For the characteristic polynomial use ``np.poly(A)`` (smooth, recorded on its own), for the
    sum ``np.trace(A)``.
    """
    return _np_eig(a).eigenvalues


# --- expm: the matrix exponential (scipy.linalg.expm) ----------------------------------------
def _expm_fwd(a):
    import scipy.linalg  # (a dependency, as scipy.special; loaded on first use)

    return scipy.linalg.expm(a)


def _frechet(a, t):
    """L(a, t), the Frechet derivative of expm at ``a`` in direction ``t``: the top-right block of
    expm([[a, t], [0, a]]) (Higham 2008, *Functions of Matrices*, Thm 3.6 and (10.15); Mathias
    1996). On Tensors (an outer tape) through the record itself, so it is differentiated again."""
    n = _shape(a)[-1]
    zero = np.zeros(_shape(a), np.result_type(getattr(a, "dtype", float), getattr(t, "dtype", float)))
    big = np.concatenate([np.concatenate([a, t], axis=-1), np.concatenate([zero, a], axis=-1)], axis=-2)
    e = expm(big) if isinstance(big, Tensor) else _expm_fwd(big)
    return e[..., :n, n:]


expm = defprim(
    "expm", _expm_fwd, lambda g, ans, a: _frechet(_mT(a), g), jvp=lambda t, ans, a: _frechet(a, t),
    jacobian="dE = L(A, dA), the top-right block of expm([[A, dA], [0, A]]) (Higham 2008, Thm 3.6)",
    vjp="dA = L(A^T, g), the top-right block of expm([[A^T, g], [0, A^T]]) (the adjoint of L(A, .) "
        "is L(A^T, .): Higham 2008 (3.17))",
    shapes="A (..., n, n) -> (..., n, n)", kinks="none: expm is entire",
    source="{out} = scipy.linalg.expm({a})", reads=((0,),),
)


# --- solve_sylvester: A X + X B = Q (scipy.linalg.solve_sylvester); sqrtm ----------------------
def _sylvester_fwd(a, b, q):
    """scipy's Bartels-Stewart solve of ``a x + x b = q``, one matrix at a time over broadcast
    leading axes (scipy's own is 2-D only)."""
    import scipy.linalg

    a, b, q = np.asarray(a), np.asarray(b), np.asarray(q)
    if a.ndim == b.ndim == q.ndim == 2:
        return scipy.linalg.solve_sylvester(a, b, q)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2])
    a, b, q = (np.broadcast_to(m, batch + m.shape[-2:]) for m in (a, b, q))
    out = np.empty(batch + q.shape[-2:], np.result_type(a, b, q, 1.0))
    for i in np.ndindex(*batch):
        out[i] = scipy.linalg.solve_sylvester(a[i], b[i], q[i])
    return out


def _sylv(a, b, q):
    """``solve_sylvester(a, b, q)``: recorded when any operand is a Tensor (an outer tape or an
    accumulator records the derivative), else the value."""
    return solve_sylvester(a, b, q) if _holds_tensor((a, b, q)) else _sylvester_fwd(a, b, q)


def _sylvester_joint(pairs, g, ans, a, b, q):
    # <G, dX> = <L, dQ - dA X - X dB> with A^T L + L B^T = G (the adjoint Sylvester equation)
    lam = _sylv(_mT(a), _mT(b), g)
    parts = {0: lambda: unbroadcast(-(lam @ _mT(ans)), _shape(a)),
             1: lambda: unbroadcast(-(_mT(ans) @ lam), _shape(b)), 2: lambda: unbroadcast(lam, _shape(q))}
    return {i: parts[i]() for i, _ in pairs}


solve_sylvester = defprim(
    "solve_sylvester", _sylvester_fwd,
    lambda g, ans, a, b, q: _sylvester_joint([(0, None)], g, ans, a, b, q)[0],
    lambda g, ans, a, b, q: _sylvester_joint([(1, None)], g, ans, a, b, q)[1],
    lambda g, ans, a, b, q: _sylvester_joint([(2, None)], g, ans, a, b, q)[2],
    jvp=(lambda t, ans, a, b, q: _sylv(a, b, -(t @ ans)), lambda t, ans, a, b, q: _sylv(a, b, -(ans @ t)),
         lambda t, ans, a, b, q: _sylv(a, b, t)),
    jacobian="A dX + dX B = dQ - dA X - X dB: dX = sylv(A, B, dQ - dA X - X dB) (Kao & Hennequin "
             "2020, Automatic differentiation of Sylvester, Lyapunov and Riccati equations, eq. 5)",
    vjp="L = sylv(A^T, B^T, g) (the adjoint equation A^T L + L B^T = g); dQ = L, dA = -L X^T, dB = -X^T L",
    shapes="A (..., n, n), B (..., m, m), Q (..., n, m) -> X (..., n, m); batch axes broadcast",
    kinks="A and -B sharing an eigenvalue: no unique solution (scipy's answer is then unreliable)",
    source="{out} = scipy.linalg.solve_sylvester({a}, {b}, {q})", reads=((0, 1, "ans"),) * 3,
    joint_vjp=_sylvester_joint,
)


def _sqrtm_fwd(a):
    import scipy.linalg

    return scipy.linalg.sqrtm(a)


def _sqrtm_vjp(g, ans, a):
    """dA = sylv(Y^T, Y^T, g), except at a singular Y (review24: autograd and this gave 4.5e15 at diag(1, 0), the
    solve dividing by rounding noise): see :func:`_sqrtm_singular_vjp`."""
    if _holds_tensor((g, ans)) or np.ndim(ans) != 2:
        _sqrtm_refuse_singular(ans)
        return _sylv(_mT(ans), _mT(ans), g)
    out = _sqrtm_singular_vjp(np.asarray(g), np.asarray(ans))
    return _sylv(_mT(ans), _mT(ans), g) if out is None else out


def _sqrtm_zero(y):
    """The eigenvalues and vectors ``(s, V)`` of a square root ``y`` and the mask of those that are 0 to working
    precision, or None when none is.

    0 means: A's eigenvalue ``l_i = s_i^2`` is not resolved from 0 by the eig and Schur decompositions scipy's
    sqrtm and this VJP compute in floating point, ``|s_i|^2 <= n eps |w_i| |A| |v_i|`` (w_i the left eigenvector,
    row i of V^-1; |A| bounded by |Y| |Y|; eps of y's dtype): the componentwise condition of ``l_i`` times eps
    (Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, section 7.2; Geurts 1982), the error rounding
    the data by eps each entry can make in it. For a diagonal A that is ``n eps |l_i|``, relative: diag(1, 1e-20)'s
    ``s = 1e-10`` is resolved and its exact 2e10 given (review25a); for ``Q diag(1, 1e-20) Q^T`` it is about
    ``eps ||A||``, and the stored matrix's small eigenvalue 1e-17 is not resolved: the derivative there is
    ``1/(2 s)`` of an s known to no digit (review26a: session 25 gave a finite number 16% off; now +-inf). Just
    above that the VJP is as good as the decompositions: for Q diag(1, l) Q^T (a rotation by 0.3) its relative error
    against mpmath at 60 digits is 5e-4 at l = 1e-15 and 3e-15, 1.5e-5 at 1e-14, 5e-6 at 1e-12, 1e-8 at 1e-10."""
    s, v = np.linalg.eig(y)
    eps = np.finfo(np.result_type(y.dtype, np.float32)).eps
    try:
        w = np.linalg.inv(v)
    except np.linalg.LinAlgError:  # (a defective Y: no eigenbasis; every eigenvalue counted unresolved)
        return np.zeros_like(s), v, np.ones(s.shape, bool)
    ay = np.abs(y)
    cond = np.einsum("ij,jk,ki->i", np.abs(w), ay @ ay, np.abs(v))
    zero = np.abs(s) ** 2 <= s.size * eps * cond
    return (np.where(zero, 0.0, s), v, zero) if zero.any() else None


def _sqrtm_refuse_singular(ans):
    y = np.asarray(ans._value if isinstance(ans, Tensor) else ans)
    ys = y.reshape((-1,) + y.shape[-2:])
    if any(_sqrtm_zero(m) is not None for m in ys):
        raise ValueError("autoprop.sqrtm: A is singular to working precision (an eigenvalue of A not resolved "
                         "from 0: |s|^2 <= n eps |w| |A| |v|, its componentwise condition), where the "
                         "derivative of its square root is infinite; only reverse mode's first-order gradient of one "
                         "matrix is given there (+-inf in the entries it reaches), not a tangent, a batch or a "
                         "higher order")


def _sqrtm_singular_vjp(g, y):
    """dA at a singular ``y`` (diagonalizable, Y = V S V^-1): Y dY + dY Y = dA gives (V^-1 dY V)_ij = (V^-1 dA V)_ij
    / (s_i + s_j) (Higham 2008, (6.5) in Y's eigenbasis), so dA = V^-T K V^T with K = (V^T g V^-T) / (s_i + s_j);
    where s_i = s_j = 0 (to working precision) a nonzero numerator makes K infinite, and the entries of dA it
    reaches are +-inf (the true derivative: d sqrt(lam)/d lam = 1 / (2 sqrt(lam)) at lam = 0); a numerator of 0
    there contributes 0 (the 0 inf rule). None when y is not singular."""
    found = _sqrtm_zero(y)
    if found is None:
        return None
    s, v, zero = found
    vi = np.linalg.inv(v)
    h = v.T @ g @ vi.T
    both = zero[:, None] & zero[None, :]
    k = np.where(both, 0.0, h / np.where(both, 1.0, s[:, None] + s[None, :]))
    finite = vi.T @ k @ v.T
    hot = both & (np.abs(h) > np.sqrt(np.finfo(float).eps) * np.max(np.abs(h), initial=0.0))
    reach = vi.T @ np.where(hot, np.sign(np.real(h)), 0.0) @ v.T
    reach = np.real(reach) if np.isrealobj(y) else reach
    finite = np.real(finite) if np.isrealobj(y) and np.isrealobj(g) else finite
    big = np.abs(reach) > np.sqrt(np.finfo(float).eps)
    return np.where(big, np.sign(np.real(reach)) * np.inf, finite)


sqrtm = defprim(
    "sqrtm", _sqrtm_fwd, _sqrtm_vjp,
    jvp=lambda t, ans, a: _sqrtm_refuse_singular(ans) or _sylv(ans, ans, t),
    jacobian="Y Y = A, so Y dY + dY Y = dA: dY = sylv(Y, Y, dA) (Higham 2008, Functions of Matrices, (6.5))",
    vjp="dA = sylv(Y^T, Y^T, g) (the adjoint Sylvester equation)",
    shapes="A (..., n, n) -> (..., n, n)",
    kinks="A singular to working precision (an eigenvalue l of A with |l| <= n eps |w| |A| |v|, its componentwise "
          "condition: not resolved from 0 by the decompositions, and Y Y's Sylvester operator singular): "
          "an infinite derivative, +-inf in the entries of dA it reaches (the eigenbasis solve; refused at higher "
          "order and for a batch); a real A with a negative eigenvalue has a complex Y (holomorphic: the same rules)",
    source="{out} = scipy.linalg.sqrtm({a})", reads=(("ans",),),
)
