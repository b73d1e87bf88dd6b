"""Linear algebra: matmul (with tf.matmul's transpose flags), tensordot, einsum, and the
numpy functions built on them (dot, outer); numpy.linalg's inv, det, slogdet, solve,
cholesky, svd, svdvals, qr, pinv, lstsq, matrix_power, multi_dot (norm, vector_norm,
matrix_norm: the reductions family; eigh/eigvalsh, eig/eigvals: ``linalg_eig``).
``slogdet``, ``svd`` and ``qr`` are records with several outputs (``defprim(..., multi=True)``),
returning numpy's ``SlogdetResult``, ``SVDResult``, ``QRResult``; a VJP adds a term for each
output that got a gradient (None: unused).

matmul, tensordot and einsum are multilinear: linear in each argument separately, so
every JVP is the primitive itself with one argument replaced by its tangent
(``registry.linear_jvp``, HIPS autograd's ``def_linear``); only the VJPs are written out.
The numpy.linalg records carry matrix-calculus VJPs and JVPs (sources at each one).
Derivations: ``lessons/01-linear-layer.md`` (matmul), ``lessons/13-matrix-calculus.md``.
"""

from __future__ import annotations

import builtins
import collections

import numpy as np

from ..registry import _Variadic, defcomposite, defprim, linear_jvp
from ..tensor import Tensor
from . import _common
from ._common import _check_kw, _mT, _no_out, _shape, _t, _value, unbroadcast
from ._linalg_complex import (
    _is_complex,
    _mH,
    qr_jvp_complex,
    qr_vjp_complex,
    svd_vjp_complex,
)
from ._linalg_helpers import (
    _eye,
    _right_solve,
    _used,
    det_cofactor,
    gelsd_rcond,
    lower_hermitian,
    lstsq_complex_refusal,
    lstsq_types,
    qr_complete,
    svd_full,
    upper_by_transpose,
)
from .elementwise import multiply
from .shape import concatenate, reshape

__all__ = ["matmul", "tensordot", "einsum", "dot", "outer", "inv", "det", "slogdet", "solve",
           "cholesky", "matrix_power", "multi_dot", "svd", "svdvals", "qr",
           "pinv", "lstsq"]


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
    numpy=(np.matmul,), methods=("__matmul__", "__rmatmul__"), reads=((1,), (0, 1)),  # dB: B's layout too
    source=lambda v: " @ ".join(("{%s}.T" if np.ndim(v[n]) == 2 else "np.swapaxes({%s}, -1, -2)")
                                % n if v.get("transpose_" + n) else "{%s}" % n for n in "ab"),
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
    shapes="A's free axes then B's free axes", numpy=(np.tensordot,), np_call=_np_tensordot, source="np.tensordot({a}, {b}, axes={axes})",
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
    _check_kw("einsum", dict(kw, out=out))  # interleaved form and 'ii' diagonals: _common
    spec, ops = _common.einsum_diagonals(*_common.einsum_operands(operands),
                                         lambda o, p: reshape(o, shape=(-1,))[p])
    ops = [_t(o) for o in ops]
    return einsum(*ops, subscripts=_einsum_normalize(spec, [o.shape for o in ops]))


einsum = defprim(
    "einsum", lambda *ops, subscripts: np.einsum(subscripts, *ops), _Variadic(_einsum_vjp),
    jvp=linear_jvp("einsum"),
    jacobian="multilinear: the einsum of the other operands",
    vjp="dX_i = einsum('<out>,<others>-><X_i>', g, *others), broadcast over X_i-only indices",
    shapes="as numpy.einsum (subscripts stored in explicit form)",
    kinks="np.einsum takes an operand's diagonal first ('ii', 'ii->i' work); the primitive "
          "called with a repeated index inside one operand has no VJP: NotImplementedError",
    numpy=(np.einsum,), np_call=_np_einsum, source="np.einsum({subscripts}, {ops})", reads=("args",),
)


@defcomposite("outer", "reshape(a, (-1, 1)) * reshape(b, (1, -1)): da = g @ b, db = g^T @ a",
              numpy=(np.outer,))
def outer(a, b, out=None):
    """``numpy.outer`` over Tensors: ``out[i, j] = a[i] b[j]`` of the flattened inputs.

    Parameters
    ----------
    a, b : Tensor or array_like (flattened, as numpy)

    Returns
    -------
    Tensor, shape (a.size, b.size)

    Raises
    ------
    TypeError
        For ``out=``.

    Notes
    -----
    numpy's outer written in recorded primitives, ``reshape(a, (-1, 1)) * reshape(b, (1, -1))``,
    so the gradient is the composition's: ``da = g @ b``, ``db = g^T @ a``.
    """
    _no_out("outer", {"out": out})
    return multiply(reshape(_t(a), shape=(-1, 1)), reshape(_t(b), shape=(1, -1)))


@defcomposite("dot", "matmul for 1-D/2-D operands, tensordot over (last of a, second-to-last of b) "
                     "above", numpy=(np.dot,), methods=("dot",))
def dot(a, b, out=None):
    """``numpy.dot`` / ``Tensor.dot``: numpy's dot product.

    Parameters
    ----------
    a, b : Tensor or array_like
        0-d: a product; 1-D and 2-D: ``matmul``; above: the sum over ``a``'s last axis and ``b``'s
        second-to-last (its only axis when 1-D).

    Returns
    -------
    Tensor
        numpy's shape (``a.shape[:-1] + b.shape[:-2] + b.shape[-1:]`` above 2-D).

    Raises
    ------
    TypeError
        For ``out=``.
    ValueError
        For mismatched inner lengths.

    Notes
    -----
    The recorded ``multiply``, ``matmul`` or ``tensordot`` (numpy's definition): their VJPs,
    ``da = g b^T``, ``db = a^T g`` for matrices.
    """
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
def _result_type(name, fields):
    """A namedtuple with the name and fields of numpy.linalg's result (numpy 2 keeps its own
    in the private numpy.linalg._linalg): ``q, r = ...`` and ``.Q``/``.R`` both work."""
    return collections.namedtuple(name, fields)


def _inv_vjp(g, ans, a):
    return -(_mT(ans) @ g @ _mT(ans))


inv = defprim(
    "inv", np.linalg.inv, _inv_vjp, jvp=lambda t, ans, a: -(ans @ t @ ans),
    jacobian="d(A^-1) = -A^-1 dA A^-1", vjp="dA = -X^T g X^T, X = A^-1",
    shapes="A (..., n, n) -> (..., n, n)", kinks="singular A: numpy raises LinAlgError",
    numpy=(np.linalg.inv,),
)


def _det_vjp(g, ans, a):  # g cof(A): _linalg_helpers, right at singular A
    return np.expand_dims(np.expand_dims(g, -1), -1) * det_cofactor(a, ans, det)


def _trace_inv_times(t, a):
    """tr(A^-1 t) per batch element: sum((A^-1)^T * t) over the last two axes."""
    return np.sum(_mT(np.linalg.inv(a)) * t, axis=(-2, -1))


det = defprim(
    "det", np.linalg.det, _det_vjp, jvp=lambda t, ans, a: np.sum(det_cofactor(a, ans, det) * t, (-2, -1)),
    jacobian="d det A = tr(adj(A) dA) = det A tr(A^-1 dA) where A is invertible (Jacobi's formula)",
    vjp="dA = g adj(A)^T (= g det(A) A^-T if A is invertible; else via the SVD, Stewart 1998)",
    shapes="A (..., n, n) -> (...)", numpy=(np.linalg.det,),
    kinks="none: det is a polynomial; the adjugate form is exact at singular A too",
)

_Slogdet = _result_type("SlogdetResult", "sign logabsdet")


def _slogdet_fwd(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return np.asarray(sign), np.asarray(logabsdet)


def _slogdet_regular(ans, a, pull=None):
    """``a`` itself when each matrix is invertible (numpy's sign != 0); refuses a singular one
    whose logabsdet carries a derivative (``pull`` nonzero there: the cotangent in reverse mode, in
    forward mode whether the matrix's tangent is nonzero; always when ``pull`` is None), as
    log|det A| has none there: d log|det A| = tr(adj(A) dA) / det A, whose
    entries are +-inf or 0/0 (torch and jax give +-inf with opposite signs). A singular
    matrix whose cotangent (tangent) is 0 gets gradient (tangent) 0: it is replaced by I before the
    inverse (review27a: forward mode refused the whole batch)."""
    singular = np.asarray(_value(ans[0])) == 0
    if not singular.any():
        return a
    blocking = singular if pull is None else singular & (np.asarray(_value(pull)) != 0)
    if blocking.any():
        where = f" (batch index {tuple(int(i) for i in np.argwhere(blocking)[0])})" if blocking.ndim else ""
        raise ValueError(
            f"numpy.linalg.slogdet: the derivative of logabsdet = log|det A| does not exist at a singular "
            f"A; the {_shape(a)[-2]}x{_shape(a)[-1]} matrix{where} is singular (det A = 0, logabsdet = -inf, "
            "and d log|det A| = tr(adj(A) dA) / det A is unbounded). np.linalg.det(A)'s gradient, the "
            "cofactor matrix, is finite there; or keep A away from singular (A + lambda I).")
    return np.where(singular[..., None, None], _eye(_shape(a)[-1], a), a)


def _slogdet_vjp(g, ans, a):
    gl = g[1]  # the sign is piecewise constant: its gradient g[0] contributes nothing
    if gl is None:
        return np.zeros(_shape(a), getattr(a, "dtype", np.float64))
    a = _slogdet_regular(ans, a, gl)
    return np.expand_dims(np.expand_dims(gl, -1), -1) * _mT(np.linalg.inv(a))


def _slogdet_jvp(t, ans, a):
    moving = np.any(np.asarray(_value(t)) != 0, axis=(-2, -1))  # (a singular matrix standing still: tangent 0)
    return np.zeros_like(ans[0]), _trace_inv_times(t, _slogdet_regular(ans, a, moving))


def _np_slogdet(a):
    return _Slogdet(*slogdet(_t(a)))


slogdet = defprim(
    "slogdet", _slogdet_fwd, _slogdet_vjp, jvp=_slogdet_jvp, multi=True,
    jacobian="d log|det A| = tr(A^-1 dA); d sign = 0 (piecewise constant)",
    vjp="dA = g_logabsdet A^-T (the sign's gradient adds nothing; a gradient on the sign alone: zeros)",
    shapes="A (..., n, n) -> sign (...), logabsdet (...): numpy's SlogdetResult",
    kinks="the sign is piecewise constant: a zero derivative (as jax; autograd ignores it); singular A: "
          "logabsdet -inf and no derivative (+-inf entries): a ValueError naming slogdet, unless that "
          "matrix's cotangent is 0",
    numpy=(np.linalg.slogdet,), np_call=_np_slogdet, source="{out} = np.linalg.slogdet({a})",
    reads=((0, "ans"),),  # (the sign: 0 marks a singular A)
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
    "cholesky", np.linalg.cholesky, upper_by_transpose(_cholesky_vjp), jvp=upper_by_transpose(_cholesky_jvp),
    jacobian="dL = L Phi(L^-1 dA L^-T), Phi = lower triangle with the diagonal halved",
    vjp="S = L^-T Phi(L^T g) L^-1; dA = Phi(S + S^T) (Murray 2016)",
    shapes="A (..., n, n) symmetric positive definite -> L (..., n, n) lower triangular (upper=True: L^T)",
    kinks="as numpy, only A's lower triangle is read (upper=True: the upper one), so the "
          "gradient lives on that triangle (a symmetric perturbation gets the same derivative "
          "as in TF/autograd); A not positive definite: LinAlgError",
    numpy=(np.linalg.cholesky,),
)


@defcomposite("matrix_power", "repeated matmul (binary powers); n < 0: of inv(A). The chain rule "
                              "through matmul: d(A^3) = dA A^2 + A dA A + A^2 dA",
              numpy=(np.linalg.matrix_power,))
def matrix_power(a, n):
    """``numpy.linalg.matrix_power`` over Tensors: ``A**n`` for an integer ``n``.

    Parameters
    ----------
    a : Tensor or array_like, shape (..., m, m)
    n : int
        ``n < 0``: the power of ``inv(a)``; ``n == 0``: the identity, a constant (no gradient).

    Returns
    -------
    Tensor, shape (..., m, m)

    Raises
    ------
    TypeError
        For a non-integer ``n``.
    numpy.linalg.LinAlgError
        For fewer than 2 axes or non-square matrices (numpy's messages), or a singular ``a`` with
        ``n < 0``.

    Notes
    -----
    numpy's binary powers written in recorded ``matmul`` (and ``inv``), so the gradient is the
    composition's: ``d(A^3) = dA A^2 + A dA A + A^2 dA``; ``lessons/13-matrix-calculus.md``.
    """
    a = _t(a)
    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"numpy.linalg.matrix_power: the exponent must be an integer; got {n!r}")
    if a.ndim < 2:  # numpy's checks (n = 1 returns a itself, which would skip every matmul)
        raise np.linalg.LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
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
    """``numpy.linalg.multi_dot`` over Tensors: the product of a chain of matrices.

    Parameters
    ----------
    arrays : sequence of Tensor or array_like
        Two or more; the first and last may be 1-D (as numpy).

    Returns
    -------
    Tensor
        numpy's shape.

    Raises
    ------
    ValueError
        For fewer than two arrays, or mismatched inner lengths.
    TypeError
        For ``out=``.

    Notes
    -----
    Recorded ``matmul`` left to right (numpy may pick another order: the same product up to
    rounding), so the gradient is the composition's.
    """
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
    return u, s, vh


def _svd_f(s, undefined="raise"):
    """F_ij = 1 / (s_j^2 - s_i^2) off the diagonal. At repeated or zero singular values the
    singular vectors have no derivative: ``undefined="raise"`` (reverse mode) refuses,
    ``"nan"`` (forward mode) puts NaN in those entries (:func:`_eigh_gap`'s rule)."""
    k = _shape(s)[-1]
    s2 = s * s
    gap = np.expand_dims(s2, -2) - np.expand_dims(s2, -1)
    off = 1.0 - _eye(k, s)
    gv = np.asarray(gap._value if isinstance(gap, Tensor) else gap)
    sv = np.asarray(s._value if isinstance(s, Tensor) else s)
    tie = (gv == 0) & (np.asarray(off) > 0)
    if np.any(tie) or np.any(sv == 0):
        if undefined == "nan":
            zero = np.expand_dims(sv == 0, -1) | np.expand_dims(sv == 0, -2)
            return np.where(tie | zero, np.nan, off / (gap + _eye(k, s) + tie))
        raise ValueError(
            "autoprop.svd: the derivative of the singular vectors is undefined at repeated "
            "or zero singular values (jax gives NaN there). If you differentiate np.linalg.svd's U "
            "or Vh: use the singular values alone (np.linalg.svd(a, compute_uv=False), or only S "
            "of the result) when their gradient is all you need. If you wrote no svd: this is the "
            "second derivative of singular values (np.linalg.norm(A, 'nuc'), norm(A, 2) or "
            "norm(A, -2), np.linalg.svdvals, lstsq's s), whose first derivative U diag(g) V^T "
            "holds the singular vectors: it does not exist at this A (the zero matrix, or tied "
            "singular values); differentiate once, or at an A with distinct nonzero singular values."
        )
    return off / (gap + _eye(k, s))


def _svd_vjp(g, ans, a):
    gu, gs, gvh = g
    u, s, vh = ans
    if _is_complex(u):
        return svd_vjp_complex(g, ans, _svd_f)
    v = _mT(vh)
    m, n = _shape(u)[-2], _shape(vh)[-1]
    k = _shape(s)[-1]
    out = None if gs is None else (u * np.expand_dims(gs, -2)) @ vh  # U diag(gS) V^T
    gu, gv = (gu if _used(gu) else None), (_mT(gvh) if _used(gvh) else None)
    if gu is not None or gv is not None:  # (S alone: no singular-vector term, defined at ties)
        eye_k = _eye(k, s)
        f = _svd_f(s)
        S = eye_k * np.expand_dims(s, -2)
        s_inv = eye_k * np.expand_dims(1.0 / s, -2)
        inner, extra = None, None
        if gu is not None:
            inner = (f * (_mT(u) @ gu - _mT(gu) @ u)) @ S
            if m > k:
                extra = (_eye(m, s) - u @ _mT(u)) @ gu @ s_inv @ vh
        if gv is not None:
            kv = S @ (f * (_mT(v) @ gv - _mT(gv) @ v))
            inner = kv if inner is None else inner + kv
            if n > k:
                e = u @ s_inv @ _mT(gv) @ (_eye(n, s) - v @ vh)
                extra = e if extra is None else extra + e
        vec = u @ inner @ vh if extra is None else u @ inner @ vh + extra
        out = vec if out is None else out + vec
    if out is None:
        return np.zeros(_shape(u)[:-1] + _shape(vh)[-1:], u.dtype)
    return out


def _svd_jvp(t, ans, a):
    """The SVD's JVP, real and complex A in one: P = U^* dA V, dS = diag(P) (its real part),
    dU = U (F o (P S + S P^*)) + (I - U U^*) dA V S^-1, dV = V (F o (S P + P^* S)) + (I - V V^*)
    dA^* U S^-1, dVh = dV^*, with ^* the transpose for real A (Townsend 2016) and the conjugate
    transpose for complex A, where dU also carries U's phase term U i Im diag(P) / S (PyTorch's
    svd_jvp: V's phases fixed, U's carry it). What differs is that adjoint and that term."""
    u, s, vh = ans
    cx = _is_complex(u)
    adj = _mH if cx else _mT  # (a tangent needs no conjugate of its own: only the adjoint differs)
    v = adj(vh)
    m, n = _shape(u)[-2], _shape(vh)[-1]
    k = _shape(s)[-1]
    eye_k = _eye(k, s)
    p = adj(u) @ t @ v  # U^* dA V
    ds = np.sum(p * eye_k, axis=-1)
    if cx:
        ds = np.real(ds)
    f = _svd_f(s, undefined="nan")
    S = eye_k * np.expand_dims(s, -2)
    with np.errstate(divide="ignore", invalid="ignore"):
        s_inv = eye_k * np.expand_dims(1.0 / s, -2)
        inner = f * (p @ S + S @ adj(p))
        if cx:  # U's phase term, i Im diag(P) / s
            inner = inner + eye_k * np.expand_dims(1j * np.imag(np.sum(p * eye_k, axis=-1)) / s, -2)
    du = u @ inner
    dv = v @ (f * (S @ p + adj(p) @ S))
    if m > k:
        du = du + (_eye(m, s) - u @ adj(u)) @ t @ v @ s_inv
    if n > k:
        dv = dv + (_eye(n, s) - v @ vh) @ adj(t) @ u @ s_inv
    return du, ds, adj(dv)


def _np_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    a = _t(a)
    if hermitian:  # numpy: |eigvalsh| of the matrix A's lower triangle stands for; U, Vh: eigh's vectors
        return svdvals(lower_hermitian(a, svd_vectors=compute_uv))
    if not compute_uv:  # numpy returns S alone (an array)
        return svdvals(a)
    u, s, vh = svd(a)
    if full_matrices and a.shape[-2] != a.shape[-1]:  # the extra vectors: _linalg_helpers
        return _SVDResult(*svd_full(a, u, s, vh, concatenate))
    return _SVDResult(u, s, vh)


_SVDResult = _result_type("SVDResult", "U S Vh")


svd = defprim(
    "svd", _svd_fwd, _svd_vjp, jvp=_svd_jvp, multi=True,
    jacobian="A = U S V^T: dS = diag(U^T dA V); dU = U (F o (P S + S P^T)) + (I - U U^T) dA V "
             "S^-1, P = U^T dA V, F_ij = 1/(s_j^2 - s_i^2); dV likewise (Townsend 2016)",
    vjp="dA = U [(F o (U^T gU - gU^T U)) S + diag(gS) + S (F o (V^T gV - gV^T V))] V^T "
        "+ (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T), gV = gVh^T (a term for each output "
        "that got a gradient)",
    shapes="A (..., m, n) -> U (..., m, k), S (..., k), Vh (..., k, n), k = min(m, n): numpy's "
           "SVDResult of the thin SVD (full_matrices=True of a non-square A adds the extra vectors "
           "outside the record; compute_uv=False: the svdvals record)",
    kinks="complex A: PyTorch's formulas, a loss that depends on the singular vectors' phases refused "
          "(ValueError, as PyTorch); repeated or zero singular values: a gradient reaching U or Vh is refused, ValueError (jax "
          "gives NaN; S alone is fine), forward mode gives them a NaN tangent; the extra vectors of "
          "full_matrices=True: no derivative, ValueError; hermitian=True: S alone (of A's lower triangle)",
    numpy=(np.linalg.svd,), np_call=_np_svd,
    source="{out} = np.linalg.svd({a}, full_matrices=False)", reads=(("ans",),),
)


# --- the singular values alone (np.linalg.svdvals, svd(compute_uv=False), norm ord 2/'nuc') ---
def _svdvals_vjp(g, ans, a):
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    if _is_complex(u):  # conj(U diag(g) V^H), g real
        return (np.conj(u) * np.expand_dims(np.real(g), -2)) @ np.conj(vh)
    return (u * np.expand_dims(g, -2)) @ vh  # U diag(g) V^T


def _svdvals_jvp(t, ans, a):
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    if _is_complex(u):  # Re diag(U^H dA V)
        return np.real(np.sum((_mH(u) @ t) * np.conj(vh), axis=-1))
    return np.sum((_mT(u) @ t) * vh, axis=-1)  # diag(U^T dA V)


svdvals = defprim(
    "svdvals", lambda a: np.linalg.svd(a, compute_uv=False), _svdvals_vjp, jvp=_svdvals_jvp,
    jacobian="ds_i = u_i^T dA v_i (first-order perturbation of a singular value)",
    vjp="dA = U diag(g) V^T", shapes="A (..., m, n) -> (..., min(m, n)), descending",
    kinks="repeated singular values: each alone is not differentiable there (their sum is); "
          "a zero singular value: |.| kinks; the formula picks numpy's singular vectors",
    numpy=tuple(f for f in (getattr(np.linalg, "svdvals", None),) if f is not None), source="np.linalg.svd({a}, compute_uv=False)",  # numpy >= 2
)


# --- the reduced QR decomposition --------------------------------------------------
# A = Q R (m >= n: Q (m, n) with Q^T Q = I, R (n, n) upper triangular). Differentiating,
# dA = dQ R + Q dR; with C = Q^T dA R^-1, Q^T dQ + dR R^-1 = C where Q^T dQ is
# antisymmetric and dR R^-1 upper triangular, so Q^T dQ = Omega = tril(C, -1) -
# tril(C, -1)^T, dR = (C - Omega) R and dQ = dA R^-1 - Q (C - Omega) (Walter & Lehmann 2018,
# "Algorithmic differentiation of linear algebra functions with application in optimum
# experimental design"; Seeger et al. 2017, "Auto-differentiating linear algebra", for LQ). The
# adjoint of that map (Liao et al. 2019, "Differentiable programming tensor networks"): with M = R gR^T - gQ^T Q, dA = (gQ + Q copyltu(M)) R^-T, where
# copyltu(M) = tril(M) + tril(M, -1)^T is the symmetric matrix with M's lower triangle.
# Derivation for students: lessons/13-matrix-calculus.md.
def _qr_fwd(a):
    if a.shape[-2] < a.shape[-1]:
        raise ValueError(f"autoprop.qr: the record takes a square or tall A (m >= n); got {a.shape} "
                         "(np.linalg.qr splits a wide A itself)")
    q, r = np.linalg.qr(a)
    return q, r


def _qr_full_rank(r):
    d = np.abs(np.diagonal(np.asarray(_value(r)), axis1=-2, axis2=-1))
    if not d.size:  # (an empty A: nothing to invert; its derivative is the empty array)
        return
    if np.any(d <= builtins.max(r.shape[-2:]) * np.finfo(d.dtype).eps * d.max(axis=-1, keepdims=True)):
        raise ValueError(
            "autoprop.qr: the derivative of the QR decomposition needs R^-1, and this A is "
            "rank-deficient (a diagonal entry of R is zero up to rounding): Q's columns beyond "
            "the rank are not determined by A. Remove the dependent columns first."
        )


def _qr_vjp(g, ans, a):
    gq, gr = g
    q, r = ans
    if not np.prod(_shape(a)):  # an empty A (m or n or a batch axis 0): numpy's empty Q, R; dA = [] (as torch)
        return np.zeros(_shape(a), q.dtype)
    _qr_full_rank(r)
    if _is_complex(q):
        return qr_vjp_complex(g, ans)
    gq = gq if _used(gq) else None
    mm = None if gr is None else r @ _mT(gr)  # M = R gR^T - gQ^T Q, a term per output used
    if gq is not None:
        mm = -(_mT(gq) @ q) if mm is None else mm - _mT(gq) @ q
    if mm is None:
        return np.zeros(_shape(q), q.dtype)
    s = np.tril(mm) + _mT(np.tril(mm, -1))  # copyltu(M)
    qs = q @ s if gq is None else gq + q @ s
    return _mT(np.linalg.solve(r, _mT(qs)))  # (gQ + Q S) R^-T


def _qr_jvp(t, ans, a):
    q, r = ans
    if not np.prod(_shape(a)):  # (an empty A: empty tangents)
        return np.zeros(_shape(q), q.dtype), np.zeros(_shape(r), r.dtype)
    _qr_full_rank(r)
    if _is_complex(q):
        return qr_jvp_complex(t, ans)
    x = _right_solve(t, r)  # dA R^-1
    c = _mT(q) @ x
    low = np.tril(c, -1)
    c_minus_omega = c - (low - _mT(low))
    return x - q @ c_minus_omega, c_minus_omega @ r


def _np_qr(a, mode="reduced"):
    """``np.linalg.qr`` over Tensors: ``reduced`` (default), ``r`` and ``complete``. A wide A = [X | Y]
    (m < n) is Q R_X = X, R = [R_X | Q^T Y], which is how LAPACK's Householder QR treats it (the same
    Q and R); a tall A's ``complete`` Q adds numpy's Householder completion, R = [R1; 0]
    (``_linalg_helpers.qr_complete``)."""
    a = _t(a)
    if a.ndim < 2:
        raise ValueError(f"numpy.linalg.qr: A must have at least 2 axes; got shape {a.shape}")
    m, n = a.shape[-2:]
    if mode not in ("reduced", "r", "complete"):
        raise TypeError(f"autoprop records numpy.linalg.qr with mode 'reduced', 'r' or 'complete'; "
                        f"mode={mode!r} (LAPACK's Householder factors) has no derivative")
    if mode == "complete" and m > n:  # Q's last m - n columns: numpy's Householder completion (_linalg_helpers)
        return _QRResult(*qr_complete(a, *qr(a), concatenate))
    if m >= n:
        q, r = qr(a)
    else:
        q, rx = qr(a[..., :m])
        r = concatenate(rx, matmul(np.conj(q) if q.dtype.kind == "c" else q, a[..., m:], transpose_a=True),
                        axis=-1)  # Q^H Y
    return r if mode == "r" else _QRResult(q, r)


_QRResult = _result_type("QRResult", "Q R")


qr = defprim(
    "qr", _qr_fwd, _qr_vjp, jvp=_qr_jvp,
    jacobian="A = Q R, C = Q^T dA R^-1, Omega = tril(C, -1) - tril(C, -1)^T: "
             "dR = (C - Omega) R, dQ = dA R^-1 - Q (C - Omega) (Walter & Lehmann 2018)",
    vjp="M = R gR^T - gQ^T Q; dA = (gQ + Q copyltu(M)) R^-T, copyltu(M) = tril(M) + "
        "tril(M, -1)^T (Liao et al. 2019); an output that got no gradient drops its term",
    shapes="A (..., m, n), m >= n -> Q (..., m, n), R (..., n, n): numpy's QRResult (a wide A "
           "and mode='r'/'complete' outside the record, np.linalg.qr's adaptor; a tall A's complete Q: "
           "numpy's Householder completion, recorded from Q (arXiv 2409.13374, as jax))",
    kinks="complex A: PyTorch's formula (R's diagonal real, as LAPACK's); rank-deficient A (a zero on R's diagonal, up to rounding): R^-1 does not exist, ValueError; "
          "numpy's signs of R's diagonal are kept (locally constant). A wide A = [X | Y] "
          "(np.linalg.qr): Q R_X = X, R = [R_X | Q^T Y], as LAPACK's Householder QR",
    numpy=(np.linalg.qr,), np_call=_np_qr, source="{out} = np.linalg.qr({a})", multi=True,
    reads=(("ans",),),
)




# --- the pseudo-inverse and least squares (a constant rank) -------------------------------
# X = A^+ where the rank of A is locally constant along the path (full rank min(m, n) always is):
# dX = -X dA X + X X^T dA^T (I - A X) + (I - X A) dA^T X^T X (Golub & Pereyra 1973, "The
# differentiation of pseudo-inverses and nonlinear least squares problems", Theorem 4.3, for any
# constant rank r); its adjoint gives the VJP below (the formula of autograd's grad_pinv; jax's and
# torch's pinv give it too). Below full rank (numpy's rank: singular values above rcond * the largest)
# a direction dA with a part U_perp^H dA V_perp in the null spaces changes the rank, and A^+ jumps
# along it: forward mode sees its tangent and refuses it; reverse mode cannot see the path and gives
# the derivative along the paths that keep the rank (the formula maps that part to 0).
def _pinv_rank_kept(t, a, rcond):
    """Raise ValueError if the tangent ``t`` of a rank-deficient ``a`` changes its rank."""
    (u, s, vh), tv = np.linalg.svd(np.asarray(_value(a))), np.asarray(_value(t))
    r = np.sum(s > np.asarray(rcond)[..., None] * s[..., :1], axis=-1)[..., None] if s.shape[-1] else 0
    r = np.where((np.asarray(rcond) >= 1)[..., None], s.shape[-1], r)  # (every value cut: A^+ = 0 always)
    if np.all(r == s.shape[-1]):
        return
    up = u * (np.arange(u.shape[-1]) >= r)[..., None, :]  # U_perp, V_perp: the columns beyond the rank
    vp = np.conj(_mT(vh)) * (np.arange(vh.shape[-1]) >= r)[..., None, :]
    normal = np.linalg.norm(np.conj(_mT(up)) @ tv @ vp, axis=(-2, -1))
    if np.any(normal > 1e-8 * np.linalg.norm(tv, axis=(-2, -1))):
        raise ValueError(
            "numpy.linalg.pinv (also inside numpy.linalg.lstsq and numpy.polyfit): this A has rank "
            f"{int(np.min(r))} < min(m, n) = {s.shape[-1]} (singular values at or below rcond * the largest, "
            f"rcond = numpy 2's rtol = {rcond}), and the tangent changes the rank (its part in A's null spaces, "
            "U_perp^T dA V_perp, is not 0): A^+ jumps along it, so it has no derivative. Along a path that keeps "
            "the rank (Golub & Pereyra 1973) the derivative is recorded; or regularise (A^T A + lambda I).")


def _pinv_cut_exact(a, rcond):
    """Raise ValueError if ``rcond`` cuts a singular value of ``a`` that is not zero up to rounding.

    Golub & Pereyra's formula is the derivative of A^+ where A's rank is locally constant; a cut
    value above rounding (rcond = 0.5 on a full-rank A) makes numpy's result the pseudo-inverse of
    A's truncation, whose derivative has terms 1/(s_i^2 - s_j^2) between kept and cut values: not
    recorded, refused rather than given wrong. rcond >= 1 cuts every value of every A: A^+ is 0
    near A (everywhere), and the formula gives its derivative 0 (X = 0)."""
    s = np.linalg.svd(np.asarray(_value(a)), compute_uv=False)
    if not s.shape[-1]:
        return
    top = s[..., :1]
    cut = np.where((s <= (rc := np.asarray(rcond)[..., None]) * top) & (rc < 1), s, 0.0)
    tiny = 8 * builtins.max(_shape(a)[-2:]) * np.finfo(s.dtype).eps * top
    if np.any(cut > tiny):
        raise ValueError(
            "numpy.linalg.pinv (also inside numpy.linalg.lstsq and numpy.polyfit): rcond (numpy 2's rtol) = "
            f"{rcond} cuts singular values of A that are not zero (the largest cut is {float(np.max(cut)):.3g}, "
            f"the largest kept {float(np.max(top)):.3g}): the result is the pseudo-inverse of A's truncation, "
            "whose derivative (terms 1/(s_i^2 - s_j^2) between kept and cut values) is not recorded. Give a "
            "smaller rcond, or truncate on the tape: u, s, vh = np.linalg.svd(A) and build the inverse from "
            "the kept terms.")


def _pinv_vjp(g, ans, a, rcond):
    _pinv_cut_exact(a, rcond)
    x, xt = ans, _mT(ans)
    m, n = _shape(a)[-2:]
    return (-(xt @ g @ xt) + (_eye(m, a) - a @ x) @ _mT(g) @ (x @ xt)
            + (xt @ x) @ _mT(g) @ (_eye(n, a) - x @ a))


def _pinv_jvp(t, ans, a, rcond):
    _pinv_cut_exact(a, rcond)
    _pinv_rank_kept(t, a, rcond)
    x, xt = ans, _mT(ans)
    m, n = _shape(a)[-2:]
    return (-(x @ t @ x) + (x @ xt) @ _mT(t) @ (_eye(m, a) - a @ x)
            + (_eye(n, a) - x @ a) @ _mT(t) @ (xt @ x))


def _np_pinv(a, rcond=None, hermitian=False, **kw):
    a = _t(a)
    if hermitian:  # numpy reads A's lower triangle (eigh): the Hermitian matrix it stands for (tape44 H2: conj)
        a = lower_hermitian(a)
    _check_kw("linalg.pinv", {k: v for k, v in kw.items() if k != "rtol"})
    if "rtol" in kw:  # numpy 2's Array API name; rtol=None is the API default max(m, n) eps
        if rcond is not None:
            raise ValueError("numpy.linalg.pinv: give rcond or rtol, not both")
        rtol = kw["rtol"]
        rcond = builtins.max(a.shape[-2:]) * np.finfo(a.dtype).eps if rtol is None else rtol
    return pinv(a, rcond=1e-15 if rcond is None else rcond)


pinv = defprim(
    "pinv", lambda a, rcond: np.linalg.pinv(a, rcond=rcond), _pinv_vjp, jvp=_pinv_jvp,
    jacobian="dX = -X dA X + X X^T dA^T (I - A X) + (I - X A) dA^T X^T X, X = A^+ "
             "(Golub & Pereyra 1973)",
    vjp="dA = -X^T g X^T + (I - A X) g^T X X^T + X^T X g^T (I - X A)",
    shapes="A (..., m, n) -> (..., n, m)",
    kinks="rank-deficient A (a singular value <= rcond * the largest): the derivative along paths "
          "that keep the rank (Golub & Pereyra's theorem holds for any constant rank); a direction that "
          "changes it has none (A^+ jumps): forward mode refuses such a tangent (ValueError), reverse mode "
          "cannot see the path and gives the constant-rank derivative, as jax, torch and autograd; rcond >= 1 cuts "
          "every value: A^+ = 0, derivative 0; hermitian=True: the pseudo-inverse of the symmetric matrix A's lower "
          "triangle stands for (numpy reads only that triangle), so the upper triangle gets no gradient",
    numpy=(np.linalg.pinv,), np_call=_np_pinv, source="np.linalg.pinv({a}, rcond={rcond})",
)


@defcomposite("lstsq", "x = pinv(A) @ b (exact for a full-rank A: the least-squares, or for a wide "
                       "A the minimum-norm, solution); residuals = sum((b - A x)**2, axis=0) when "
                       "m > n = rank; s = svdvals(A)", numpy=(np.linalg.lstsq,))
def lstsq(a, b, rcond=None):
    """``numpy.linalg.lstsq`` over Tensors: ``(x, residuals, rank, s)``.

    Parameters
    ----------
    a : Tensor or array, (m, n)
        float32/64, complex64/128, int or bool.
    b : Tensor or array, (m,) or (m, k)
        Likewise.
    rcond : float, optional
        Singular values at or below ``rcond`` times the largest count as zero; default
        (None) float64's machine precision times max(m, n), as numpy: numpy solves every system in double
        precision (float64, or complex128 when ``a`` or ``b`` is complex) and casts the results
        (``numpy.linalg._commonType``, :func:`~._linalg_helpers.lstsq_types`); ``rcond <= 0`` or ``>= 1`` is 2^-53, as numpy's
        LAPACK gelsd (:func:`~._linalg_helpers.gelsd_rcond`).

    Returns
    -------
    x : Tensor, (n,) or (n, k)
        ``pinv(a, rcond) @ b``: numpy's solution (the same SVD cut-off). float32 or complex64 only when both
        inputs are single precision, else float64 or complex128 (an int or bool input counts as double), as numpy.
    residuals : Tensor, (k,) or (1,) for a 1-D b
        Squared 2-norm of each column of ``b - a @ x`` (``sum(|r|**2)``, real for a complex
        system, as numpy) when m > n and the rank is n; otherwise empty, shape (0,), as numpy.
    rank : int
        numpy's rank of ``a`` (no gradient).
    s : Tensor, (min(m, n),)
        The singular values of ``a`` (the ``svdvals`` record), in ``x``'s real dtype.

    Raises
    ------
    numpy.linalg.LinAlgError
        For a non-2-D ``a`` or a ``b`` of more than 2 axes (numpy's class and words).
    TypeError
        For float16 or longdouble (numpy refuses them too). For a complex system that a tape or forward
        accumulator tracks: ``pinv`` has no complex rule, so complex ``lstsq`` gives values only (outside
        any tape, or on untracked inputs); the message names your dtypes.
    ValueError
        For a NaN ``rcond``. In forward mode for a tangent that changes a rank-deficient ``a``'s rank (see ``pinv``: reverse
        mode gives the derivative along paths that keep the rank).

    Notes
    -----
    Derivative: the chain rule through ``pinv`` (Golub & Pereyra 1973) and matmul;
    derivation in ``lessons/13-matrix-calculus.md``.
    """
    a, b = _t(a), _t(b)
    if a.ndim != 2 or b.ndim not in (1, 2):  # (numpy's class and words: lstsq takes no batch)
        raise np.linalg.LinAlgError(f"{a.ndim if a.ndim != 2 else b.ndim}-dimensional array given. Array must be two-dimensional "
                                    f"(numpy.linalg.lstsq: a must be 2-D and b 1-D or 2-D; got shapes "
                                    f"{a.shape} and {b.shape}; for a batch: np.linalg.pinv(a) @ b)")
    (work, out_t), user = lstsq_types(a.dtype, b.dtype), (a.dtype, b.dtype)
    a, b = (t if t.dtype == work else t.astype(work) for t in (a, b))  # numpy solves in double and casts back
    rcond = gelsd_rcond(rcond, *a.shape, work)
    rank = np.linalg.lstsq(a._value, b._value, rcond=rcond)[2]
    try:
        x = matmul(pinv(a, rcond=rcond), b)
    except TypeError as exc:  # (review28a L5: a complex64 system's refusal named complex128, pinv's dtype)
        raise lstsq_complex_refusal(*user) if work.kind == "c" else exc  # noqa: B904 (pinv's as context)
    res = Tensor._wrap(np.zeros((0,), dtype=np.float64))  # (numpy's when the rank is short or m <= n)
    if a.shape[0] > a.shape[1] == rank:  # (m > n = rank)
        r = b - matmul(a, x)  # |r|^2: r * conj(r), real (numpy's residuals of a complex system are float64)
        res = np.sum(np.real(r * np.conj(r)) if r.dtype.kind == "c" else r * r, axis=0)
        res = reshape(res, shape=(1,)) if b.ndim == 1 else res
    if out_t == work:
        return x, res, rank, svdvals(a)
    return x.astype(out_t), res.astype(np.float32), rank, svdvals(a).astype(np.float32)  # (both single precision)
