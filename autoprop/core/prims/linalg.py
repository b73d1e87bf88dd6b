"""Linear algebra: matmul (with tf.matmul's transpose flags), tensordot, einsum, and the
numpy functions built on them (dot, outer); numpy.linalg's inv, det, slogdet, solve,
cholesky, eigh/eigvalsh, svd, matrix_power, multi_dot (norm: the reductions family).

matmul, tensordot and einsum are multilinear: linear in each argument separately, so
every JVP is the primitive itself with one argument replaced by its tangent
(``registry.linear_jvp``, HIPS autograd's ``def_linear``); only the VJPs are written out.
The numpy.linalg records carry matrix-calculus VJPs and JVPs (sources at each one).
Derivations: ``lessons/01-linear-layer.md`` (matmul), ``lessons/00-chain-rule.md``.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..registry import _Variadic, defcomposite, defprim, linear_jvp
from ..tensor import Tensor
from ._common import _check_kw, _mT, _no_out, _shape, _t, unbroadcast
from .elementwise import multiply
from .shape import reshape

__all__ = ["matmul", "tensordot", "einsum", "dot", "outer", "inv", "det", "slogdet", "solve",
           "cholesky", "eigh", "eigvalsh", "matrix_power", "multi_dot", "svd"]


def _plain_vjp_a(g, a, b):
    if b.ndim == 1:
        if a.ndim == 1:
            return g * b
        return unbroadcast(np.expand_dims(g, -1) * b, a.shape)
    if a.ndim == 1:
        return unbroadcast(np.sum(b * np.expand_dims(g, -2), axis=-1), a.shape)
    return unbroadcast(g @ _mT(b), a.shape)


def _plain_vjp_b(g, a, b):
    if a.ndim == 1:
        if b.ndim == 1:
            return g * a
        return unbroadcast(np.expand_dims(a, -1) * np.expand_dims(g, -2), b.shape)
    if b.ndim == 1:
        return unbroadcast(np.sum(a * np.expand_dims(g, -1), axis=-2), b.shape)
    if type(b) is np.ndarray and b.ndim == 2 and a.ndim == 2 and not b.flags.c_contiguous:
        # b is a transposed view (x @ W.T): give the gradient b's layout, so the VJP
        # of the transpose hands W a contiguous dW = g.T @ a (same flops)
        return (g.T @ a).T
    return unbroadcast(_mT(a) @ g, b.shape)


def _matmul_fwd(a, b, transpose_a=False, transpose_b=False):
    if (transpose_a and np.ndim(a) < 2) or (transpose_b and np.ndim(b) < 2):
        raise ValueError("matmul: transpose_a/transpose_b need an operand with at least 2 axes")
    return np.matmul(_mT(a) if transpose_a else a, _mT(b) if transpose_b else b)


def _matmul_vjp_a(g, ans, a, b, transpose_a=False, transpose_b=False):
    bb = _mT(b) if transpose_b else b
    if transpose_a:  # C = A^T B': dA = (g B'^T)^T = B' g^T
        return unbroadcast(bb @ _mT(g), a.shape)
    return _plain_vjp_a(g, a, bb)


def _matmul_vjp_b(g, ans, a, b, transpose_a=False, transpose_b=False):
    aa = _mT(a) if transpose_a else a
    if transpose_b:  # C = A' B^T: dB = (A'^T g)^T = g^T A' (contiguous, as dW = dY.T @ X)
        return unbroadcast(_mT(g) @ aa, b.shape)
    return _plain_vjp_b(g, aa, b)


matmul = defprim(
    "matmul", _matmul_fwd, _matmul_vjp_a, _matmul_vjp_b, jvp=linear_jvp("matmul"),
    jacobian="C = A B: dC_ij/dA_ik = B_kj, dC_ij/dB_kj = A_ik",
    vjp="dA = g @ B^T, dB = A^T @ g (1-D operands: outer products; batch axes summed); "
        "with transpose_b (C = A @ B^T, tf.matmul's flag): dB = g^T @ A",
    shapes="A (..., n, k), B (..., k, m) -> (..., n, m); a 1-D operand is a vector; "
           "transpose_a/transpose_b swap the last two axes of A/B first",
    numpy=(np.matmul,), methods=("__matmul__", "__rmatmul__"),
)


def _tensordot_axes(axes, nda, ndb):
    """Normalise tensordot's ``axes`` to two tuples of non-negative axis numbers."""
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        return tuple(range(nda - n, nda)), tuple(range(n))
    a_ax, b_ax = axes
    a_ax = (a_ax,) if isinstance(a_ax, (int, np.integer)) else tuple(a_ax)
    b_ax = (b_ax,) if isinstance(b_ax, (int, np.integer)) else tuple(b_ax)
    return tuple(int(a) % nda for a in a_ax), tuple(int(b) % ndb for b in b_ax)


def _tensordot_vjp_a(g, ans, a, b, axes):
    a_ax, b_ax = axes
    nda, ndb = len(_shape(a)), len(_shape(b))
    a_free = [d for d in range(nda) if d not in a_ax]
    b_free = [d for d in range(ndb) if d not in b_ax]
    r = np.tensordot(g, b, axes=(list(range(len(a_free), len(_shape(g)))), b_free))
    # r's axes: a_free, then b's summed axes in increasing order -> matching a axes
    order = sorted(range(len(b_ax)), key=lambda k: b_ax[k])
    src = a_free + [a_ax[k] for k in order]
    return np.transpose(r, tuple(int(p) for p in np.argsort(src)))


def _tensordot_vjp_b(g, ans, a, b, axes):
    a_ax, b_ax = axes
    nda, ndb = len(_shape(a)), len(_shape(b))
    a_free = [d for d in range(nda) if d not in a_ax]
    b_free = [d for d in range(ndb) if d not in b_ax]
    r = np.tensordot(a, g, axes=(a_free, list(range(len(a_free)))))
    order = sorted(range(len(a_ax)), key=lambda k: a_ax[k])
    src = [b_ax[k] for k in order] + b_free
    return np.transpose(r, tuple(int(p) for p in np.argsort(src)))


def _np_tensordot(a, b, axes=2):
    a, b = _t(a), _t(b)
    return tensordot(a, b, axes=_tensordot_axes(axes, a.ndim, b.ndim))


tensordot = defprim(
    "tensordot", lambda a, b, axes: np.tensordot(a, b, axes=axes), _tensordot_vjp_a, _tensordot_vjp_b,
    jvp=linear_jvp("tensordot"),
    jacobian="bilinear: C = sum over the paired axes of A B",
    vjp="dA = tensordot(g, B) over B's free axes, transposed back; dB likewise",
    shapes="A's free axes then B's free axes", numpy=(np.tensordot,), np_call=_np_tensordot,
)


def _einsum_normalize(subscripts, shapes):
    """Rewrite einsum subscripts in explicit form ('ij,jk->ik'), ellipses spelled out."""
    s = subscripts.replace(" ", "")
    ins, out = s.split("->") if "->" in s else (s, None)
    subs = ins.split(",")
    if len(subs) != len(shapes):
        raise ValueError(f"einsum: {len(subs)} operand subscripts for {len(shapes)} operands")
    used = {c for c in s if c.isalpha()}
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    n_ell = [len(shp) - (len(sub) - 3) if "..." in sub else 0 for sub, shp in zip(subs, shapes)]
    m = builtins.max(n_ell, default=0)
    ell = "".join(free[:m])
    subs = [sub.replace("...", ell[m - n:]) if "..." in sub else sub for sub, n in zip(subs, n_ell)]
    if out is None:
        letters = "".join(subs)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return ",".join(subs) + "->" + out


def _einsum_vjp(i, g, ans, *ops, subscripts):
    ins, out = subscripts.split("->")
    subs = ins.split(",")
    mine = subs[i]
    if len(set(mine)) != len(mine):
        raise NotImplementedError(
            f"autoprop: the gradient of einsum {subscripts!r} for operand {i} is not recorded: "
            "a repeated index inside one operand (a diagonal such as 'ii') has no VJP here. "
            "Take the diagonal first with x[np.arange(n), np.arange(n)], then einsum."
        )
    others = [s for j, s in enumerate(subs) if j != i]
    avail = set(out).union(*others)
    keep = "".join(c for c in mine if c in avail)
    r = np.einsum(",".join([out] + others) + "->" + keep, g, *[o for j, o in enumerate(ops) if j != i])
    shape_i = _shape(ops[i])
    if len(keep) != len(mine):
        rs = _shape(r)
        r = r.reshape(tuple(rs[keep.index(c)] if c in keep else 1 for c in mine))
    axes = tuple(d for d, n in enumerate(shape_i) if n == 1 and _shape(r)[d] != 1)
    if axes:
        r = r.sum(axis=axes, keepdims=True)
    if _shape(r) != shape_i:
        r = np.broadcast_to(r, shape_i)
    return r


def _np_einsum(*operands, out=None, optimize=False, **kw):
    _check_kw("einsum", dict(kw, out=out))
    if not operands or not isinstance(operands[0], str):
        raise TypeError(
            "autoprop records numpy.einsum only in its subscripts form, "
            "np.einsum('ij,jk->ik', a, b); the interleaved (operand, sublist) form is not "
            "supported: rewrite it with a subscripts string."
        )
    ops = [_t(o) for o in operands[1:]]
    return einsum(*ops, subscripts=_einsum_normalize(operands[0], [o.shape for o in ops]))


einsum = defprim(
    "einsum", lambda *ops, subscripts: np.einsum(subscripts, *ops), _Variadic(_einsum_vjp),
    jvp=linear_jvp("einsum"),
    jacobian="multilinear: the einsum of the other operands",
    vjp="dX_i = einsum('<out>,<others>-><X_i>', g, *others), broadcast over X_i-only indices",
    shapes="as numpy.einsum (subscripts stored in explicit form)",
    kinks="no gradient for an operand with a repeated index ('ii'): NotImplementedError",
    numpy=(np.einsum,), np_call=_np_einsum,
)


@defcomposite("outer", "reshape(a, (-1, 1)) * reshape(b, (1, -1)): da = g @ b, db = g^T @ a",
              numpy=(np.outer,))
def outer(a, b, out=None):
    _no_out("outer", {"out": out})
    return multiply(reshape(_t(a), shape=(-1, 1)), reshape(_t(b), shape=(1, -1)))


@defcomposite("dot", "matmul for 1-D/2-D operands, tensordot over (last of a, second-to-last of b) "
                     "above", numpy=(np.dot,), methods=("dot",))
def dot(a, b, out=None):
    _no_out("dot", {"out": out})
    a, b = _t(a), _t(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=((a.ndim - 1,), ((b.ndim - 2) if b.ndim > 1 else 0,)))


# --- np.linalg: inverse, determinants, solve, Cholesky, symmetric eigendecomposition ---
# Matrix calculus (Giles 2008, "An extended collection of matrix derivative results";
# Murray 2016, "Differentiation of the Cholesky decomposition"): with X = A^-1,
# dX = -X dA X, d det A = det A tr(A^-1 dA), d log|det A| = tr(A^-1 dA). Every VJP and JVP
# is written with numpy.linalg calls, so on Tensors (an outer tape) they are recorded.
# All operate on the last two axes; leading axes are a batch.
def _eye(n, like):
    return np.eye(n, dtype=getattr(like, "dtype", np.float64))


def _inv_vjp(g, ans, a):
    return -(_mT(ans) @ g @ _mT(ans))


inv = defprim(
    "inv", np.linalg.inv, _inv_vjp, jvp=lambda t, ans, a: -(ans @ t @ ans),
    jacobian="d(A^-1) = -A^-1 dA A^-1", vjp="dA = -X^T g X^T, X = A^-1",
    shapes="A (..., n, n) -> (..., n, n)", kinks="singular A: numpy raises LinAlgError",
    numpy=(np.linalg.inv,),
)


def _det_vjp(g, ans, a):
    return np.expand_dims(np.expand_dims(g * ans, -1), -1) * _mT(np.linalg.inv(a))


def _trace_inv_times(t, a):
    """tr(A^-1 t) per batch element: sum((A^-1)^T * t) over the last two axes."""
    return np.sum(_mT(np.linalg.inv(a)) * t, axis=(-2, -1))


det = defprim(
    "det", np.linalg.det, _det_vjp, jvp=lambda t, ans, a: ans * _trace_inv_times(t, a),
    jacobian="d det A = det A tr(A^-1 dA) (Jacobi's formula)",
    vjp="dA = g det(A) A^-T", shapes="A (..., n, n) -> (...)",
    kinks="singular A: the gradient needs A^-1 and raises LinAlgError", numpy=(np.linalg.det,),
)

try:  # numpy >= 2 names the result fields
    from numpy.linalg import SlogdetResult as _Slogdet
except ImportError:  # pragma: no cover
    from collections import namedtuple

    _Slogdet = namedtuple("SlogdetResult", "sign logabsdet")


def _np_slogdet(a):
    a = _t(a)
    sign, _ = np.linalg.slogdet(a._value)
    return _Slogdet(Tensor._wrap(np.asarray(sign)), slogdet(a))


slogdet = defprim(
    "slogdet", lambda a: np.linalg.slogdet(a)[1],
    lambda g, ans, a: np.expand_dims(np.expand_dims(g, -1), -1) * _mT(np.linalg.inv(a)),
    jvp=lambda t, ans, a: _trace_inv_times(t, a),
    jacobian="d log|det A| = tr(A^-1 dA)", vjp="dA = g A^-T",
    shapes="A (..., n, n) -> (...): log|det A| (numpy.linalg.slogdet's second result)",
    kinks="the sign (first result) is piecewise constant: no gradient",
    numpy=(np.linalg.slogdet,), np_call=_np_slogdet,
)


def _as_matrix(b, vector):
    return np.expand_dims(b, -1) if vector else b


def _solve_vjp_b(g, ans, a, b):
    vector = len(_shape(b)) == 1
    gb = np.linalg.solve(_mT(a), _as_matrix(g, vector))
    return unbroadcast(gb[..., 0] if vector else gb, _shape(b))


def _solve_vjp_a(g, ans, a, b):
    vector = len(_shape(b)) == 1
    gb = np.linalg.solve(_mT(a), _as_matrix(g, vector))
    return unbroadcast(-(gb @ _mT(_as_matrix(ans, vector))), _shape(a))


def _solve_jvp_a(t, ans, a, b):
    vector = len(_shape(b)) == 1
    dx = -np.linalg.solve(a, t @ _as_matrix(ans, vector))
    return dx[..., 0] if vector else dx


def _solve_jvp_b(t, ans, a, b):
    vector = len(_shape(b)) == 1
    dx = np.linalg.solve(a, _as_matrix(t, vector))
    return dx[..., 0] if vector else dx


solve = defprim(
    "solve", np.linalg.solve, _solve_vjp_a, _solve_vjp_b, jvp=(_solve_jvp_a, _solve_jvp_b),
    jacobian="X = A^-1 B: dX = A^-1 (dB - dA X)",
    vjp="dB = A^-T g, dA = -dB X^T (batch axes summed back by broadcasting)",
    shapes="A (..., n, n), B (..., n, k) or (n,) (a vector only when 1-D, as numpy 2) -> X of B's shape",
    kinks="singular A: LinAlgError", numpy=(np.linalg.solve,),
)


def _phi(x):
    """The lower triangle with the diagonal halved (Murray 2016's Phi)."""
    n = _shape(x)[-1]
    return np.tril(x) * (1.0 - 0.5 * _eye(n, x))


def _lower_sym(t):
    """The symmetric matrix numpy's cholesky/eigh read from t: its lower triangle mirrored."""
    return np.tril(t) + _mT(np.tril(t, -1))


def _cholesky_vjp(g, ans, a):
    L = ans
    p = _phi(_mT(L) @ g)
    s = np.linalg.solve(_mT(L), _mT(np.linalg.solve(_mT(L), _mT(p))))  # L^-T P L^-1
    return _phi(s + _mT(s))  # onto the lower triangle, the only part numpy reads


def _cholesky_jvp(t, ans, a):
    L = ans
    y = np.linalg.solve(L, _lower_sym(t))
    return L @ _phi(np.linalg.solve(L, _mT(y)))  # L Phi(L^-1 dA L^-T)


cholesky = defprim(
    "cholesky", np.linalg.cholesky, _cholesky_vjp, jvp=_cholesky_jvp,
    jacobian="dL = L Phi(L^-1 dA L^-T), Phi = lower triangle with the diagonal halved",
    vjp="S = L^-T Phi(L^T g) L^-1; dA = Phi(S + S^T) (Murray 2016)",
    shapes="A (..., n, n) symmetric positive definite -> L (..., n, n) lower triangular",
    kinks="as numpy, only A's lower triangle is read, so the gradient lives on the lower "
          "triangle (a symmetric perturbation gets the same derivative as in TF/autograd); "
          "A not positive definite: LinAlgError",
    numpy=(np.linalg.cholesky,),
)


def _eigh_fwd(a):
    w, v = np.linalg.eigh(a)
    return np.concatenate([np.expand_dims(w, -2), v], axis=-2)


def _eigh_gap(w):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it; refuses repeated eigenvalues."""
    n = _shape(w)[-1]
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)  # gap[i, j] = w_j - w_i
    off = 1.0 - _eye(n, w)
    gv = np.asarray(gap._value if isinstance(gap, Tensor) else gap)
    if np.any((gv == 0) & (np.asarray(off) > 0)):
        raise ValueError(
            "autoprop.eigh: the derivative of the eigenvectors is undefined at repeated "
            "eigenvalues (w_i == w_j): they can rotate freely within the eigenspace. Use "
            "np.linalg.eigvalsh (eigenvalues only) or perturb the matrix."
        )
    return off / (gap + _eye(n, w))


def _eigh_vjp(g, ans, a):
    w, v = ans[..., 0, :], ans[..., 1:, :]
    gw, gv = g[..., 0, :], g[..., 1:, :]
    m = (v * np.expand_dims(gw, -2)) @ _mT(v)  # V diag(gw) V^T
    if isinstance(gv, Tensor) or np.any(gv):  # plain zeros (eigvalsh): no eigenvector term
        m = m + v @ (_eigh_gap(w) * (_mT(v) @ gv)) @ _mT(v)
    return _phi(m + _mT(m))  # onto the lower triangle, the only part numpy reads


def _eigh_jvp(t, ans, a):
    w, v = ans[..., 0, :], ans[..., 1:, :]
    p = _mT(v) @ _lower_sym(t) @ v
    n = _shape(w)[-1]
    dw = np.sum(p * _eye(n, p), axis=-1)  # the diagonal of V^T dA V
    dv = v @ (_eigh_gap(w) * p)
    return np.concatenate([np.expand_dims(dw, -2), dv], axis=-2)


def _np_eigh(a, UPLO="L"):  # noqa: N803
    if UPLO != "L":
        raise TypeError("autoprop records numpy.linalg.eigh only with UPLO='L' (numpy's default)")
    out = eigh(_t(a))
    return _EighResult(out[..., 0, :], out[..., 1:, :])


try:
    from numpy.linalg import EighResult as _EighResult
except ImportError:  # pragma: no cover
    from collections import namedtuple

    _EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")


eigh = defprim(
    "eigh", _eigh_fwd, _eigh_vjp, jvp=_eigh_jvp,
    jacobian="A = V diag(w) V^T: dw = diag(V^T dA V), dV = V (F o (V^T dA V)), "
             "F_ij = 1/(w_j - w_i) (i != j), 0 on the diagonal",
    vjp="M = V (diag(gw) + F o (V^T gV)) V^T; dA = Phi(M + M^T) (lower triangle)",
    shapes="A (..., n, n) symmetric -> (..., n + 1, n): row 0 the eigenvalues (ascending), "
           "rows 1: the eigenvectors (columns); np.linalg.eigh returns the two parts",
    kinks="repeated eigenvalues: the eigenvector derivative is undefined, ValueError (the "
          "eigenvalue-only gradient, eigvalsh, is fine); only A's lower triangle is read",
    numpy=(np.linalg.eigh,), np_call=_np_eigh,
)


@defcomposite("eigvalsh", "the eigenvalue row of eigh: dA = Phi(2 V diag(g) V^T)",
              numpy=(np.linalg.eigvalsh,))
def eigvalsh(a, UPLO="L"):  # noqa: N803
    return _np_eigh(a, UPLO).eigenvalues


@defcomposite("matrix_power", "repeated matmul (binary powers); n < 0: of inv(A). The chain rule "
                              "through matmul: d(A^3) = dA A^2 + A dA A + A^2 dA",
              numpy=(np.linalg.matrix_power,))
def matrix_power(a, n):
    a = _t(a)
    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"numpy.linalg.matrix_power: the exponent must be an integer; got {n!r}")
    if n < 0:
        a, n = inv(a), -int(n)
    result, base = None, a
    while True:  # exponentiation by squaring, as numpy
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    if result is None:  # n == 0: the identity, a constant
        return Tensor._wrap(np.broadcast_to(_eye(a.shape[-1], a), a.shape).copy())
    return result


@defcomposite("multi_dot", "a chain of matmul, left to right (numpy may pick another order: the "
                           "same product up to rounding)", numpy=(np.linalg.multi_dot,))
def multi_dot(arrays, *, out=None):
    _no_out("multi_dot", {"out": out})
    arrays = [_t(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("numpy.linalg.multi_dot: expecting at least two arrays")
    result = arrays[0]
    for a in arrays[1:]:
        result = matmul(result, a)
    return result


# --- the thin SVD (Townsend 2016, "Differentiating the singular value decomposition") ---
def _svd_fwd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.concatenate([u, np.expand_dims(s, -2), _mT(vh)], axis=-2)


def _svd_parts(packed, m):
    return packed[..., :m, :], packed[..., m, :], packed[..., m + 1:, :]  # U, s, V


def _svd_f(s):
    """F_ij = 1 / (s_j^2 - s_i^2) off the diagonal; refuses repeated singular values."""
    k = _shape(s)[-1]
    s2 = s * s
    gap = np.expand_dims(s2, -2) - np.expand_dims(s2, -1)
    off = 1.0 - _eye(k, s)
    gv = np.asarray(gap._value if isinstance(gap, Tensor) else gap)
    sv = np.asarray(s._value if isinstance(s, Tensor) else s)
    if np.any((gv == 0) & (np.asarray(off) > 0)) or np.any(sv == 0):
        raise ValueError(
            "autoprop.svd: the derivative of the singular vectors is undefined at repeated "
            "or zero singular values. Use the singular values alone (np.linalg.svd(a, "
            "compute_uv=False)) when their gradient is all you need."
        )
    return off / (gap + _eye(k, s))


def _svd_vjp(g, ans, a):
    m, n = _shape(a)[-2:]
    u, s, v = _svd_parts(ans, m)
    gu, gs, gv = _svd_parts(g, m)
    k = _shape(s)[-1]
    eye_k = _eye(k, s)
    out = u @ (eye_k * np.expand_dims(gs, -2)) @ _mT(v)  # U diag(gs) V^T
    if isinstance(g, Tensor) or np.any(gu) or np.any(gv):
        f = _svd_f(s)
        S = eye_k * np.expand_dims(s, -2)
        s_inv = eye_k * np.expand_dims(1.0 / s, -2)
        j = f * (_mT(u) @ gu - _mT(gu) @ u)
        kk = f * (_mT(v) @ gv - _mT(gv) @ v)
        out = out + u @ (j @ S + S @ kk) @ _mT(v)
        if m > k:
            out = out + (_eye(m, s) - u @ _mT(u)) @ gu @ s_inv @ _mT(v)
        if n > k:
            out = out + u @ s_inv @ _mT(gv) @ (_eye(n, s) - v @ _mT(v))
    return out


def _svd_jvp(t, ans, a):
    m, n = _shape(a)[-2:]
    u, s, v = _svd_parts(ans, m)
    k = _shape(s)[-1]
    eye_k = _eye(k, s)
    p = _mT(u) @ t @ v  # U^T dA V
    ds = np.sum(p * eye_k, axis=-1)
    f = _svd_f(s)
    S = eye_k * np.expand_dims(s, -2)
    s_inv = eye_k * np.expand_dims(1.0 / s, -2)
    du = u @ (f * (p @ S + S @ _mT(p)))
    dv = v @ (f * (S @ p + _mT(p) @ S))
    if m > k:
        du = du + (_eye(m, s) - u @ _mT(u)) @ t @ v @ s_inv
    if n > k:
        dv = dv + (_eye(n, s) - v @ _mT(v)) @ _mT(t) @ u @ s_inv
    return np.concatenate([du, np.expand_dims(ds, -2), dv], axis=-2)


def _np_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    a = _t(a)
    if hermitian:
        raise TypeError("autoprop records numpy.linalg.svd only with hermitian=False")
    m = a.shape[-2]
    out = svd(a)
    u, s, v = out[..., :m, :], out[..., m, :], out[..., m + 1:, :]
    if not compute_uv:
        return s
    if full_matrices and a.shape[-2] != a.shape[-1]:
        raise TypeError(
            "autoprop records numpy.linalg.svd only with full_matrices=False (the thin SVD) "
            "for a non-square matrix: the extra singular vectors are not unique, so they "
            "have no derivative"
        )
    return _SVDResult(u, s, _mT(v))


try:
    from numpy.linalg import SVDResult as _SVDResult
except ImportError:  # pragma: no cover
    from collections import namedtuple

    _SVDResult = namedtuple("SVDResult", "U S Vh")


svd = defprim(
    "svd", _svd_fwd, _svd_vjp, jvp=_svd_jvp,
    jacobian="A = U S V^T: dS = diag(U^T dA V); dU = U (F o (P S + S P^T)) + (I - U U^T) dA V "
             "S^-1, P = U^T dA V, F_ij = 1/(s_j^2 - s_i^2); dV likewise (Townsend 2016)",
    vjp="dA = U [(F o (U^T gU - gU^T U)) S + diag(gS) + S (F o (V^T gV - gV^T V))] V^T "
        "+ (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)",
    shapes="A (..., m, n) -> (..., m + 1 + n, k), k = min(m, n): rows U, then s, then V "
           "(np.linalg.svd returns U, S, Vh)",
    kinks="repeated or zero singular values: the singular-vector derivative is undefined, "
          "ValueError (the values alone are fine); thin SVD only",
    numpy=(np.linalg.svd,), np_call=_np_svd,
)
