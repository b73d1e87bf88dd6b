"""numpy's polynomial functions and a few numerical-methods helpers over Tensors (session 29).

* ``np.polyadd``, ``polysub``, ``polymul``, ``polyder``, ``polyint``, ``polydiv`` and ``poly`` (roots to
  coefficients): numpy's own code (``numpy/lib/_polynomial_impl.py``) written with recorded primitives,
  step for step, so the values are numpy's and the derivative is the chain rule through ``add``,
  ``multiply``, ``convolve`` and ``concatenate``; jax.numpy differentiates the same compositions.
* ``np.poly`` of a square matrix (its characteristic polynomial) and ``np.roots`` are records of their
  own (session 30, review30): ``charpoly`` (Jacobi's formula with the adjugate's Faddeev-LeVerrier
  terms, smooth at repeated eigenvalues) and ``polyroots`` (the implicit function theorem at each
  simple root, every coefficient included; NaN where a gradient reaches a repeated root), numpy's
  values.
* ``np.ediff1d`` (``diff`` of the raveled array between ``to_begin`` and ``to_end``), ``np.resize``
  (a gather at numpy's own repetition of the positions), ``np.unwrap`` (``p`` plus numpy's
  correction, a piecewise-constant multiple of ``period``: ``d/dp = 1``), ``np.apply_over_axes``
  (numpy's loop, calling ``func`` on the Tensor), ``np.modf`` (the fraction ``x - trunc(x)``:
  ``d/dx = 1``; the integer part no gradient), ``np.frexp`` (the mantissa ``x 2^-e``: ``d/dx = 2^-e``,
  the exponent an integer) and ``np.i0`` (``d/dx I0(x) = I1(x)``, DLMF 10.29.3).

Derivations: ``lessons/10-gradient-tape.md`` (composites).
"""

from __future__ import annotations

import builtins

import numpy as np

from ..observe import own
from ..registry import defcomposite, defnumpy, defprim
from ..tensor import Tensor
from ._common import _axis_index, _check_kw, _t, _value
from ._linalg_helpers import _eye
from .elementwise import _unary
from .linalg_eig import beyond, lapack_coupling, lapack_eps, nan_linked
from .shape import _gather, _positions, concatenate, reshape
from .special import _ss, real
from .stacking import convolve, diff, stack

__all__ = ["ediff1d", "resize", "unwrap", "apply_over_axes", "modf", "modf_fraction", "frexp", "i0_numpy",
           "polyadd", "polysub", "polymul", "polyder", "polyint", "poly", "polydiv", "roots", "charpoly", "polyroots"]


def _is_tensor(*xs):
    return builtins.any(isinstance(x, Tensor) for x in xs)


@defcomposite("ediff1d", "concatenate(to_begin, diff(ravel(x)), to_end)", numpy=(np.ediff1d,))
def ediff1d(ary, to_end=None, to_begin=None):
    """``numpy.ediff1d`` over Tensors: the differences of the flattened array, with optional ends.

    Parameters
    ----------
    ary : Tensor or array_like
    to_end, to_begin : Tensor or array_like, optional
        Prepended / appended (flattened); a Tensor gets its gradient (the identity).

    Returns
    -------
    Tensor, shape (len(to_begin) + max(ary.size - 1, 0) + len(to_end),), ``ary``'s dtype
        (an empty ``ary`` has no differences: the ends alone)

    Raises
    ------
    TypeError
        If ``to_begin``/``to_end`` cannot be cast to ``ary``'s dtype under numpy's 'same_kind' rule.

    Notes
    -----
    numpy's definition: ``diff(ravel(ary))`` between the ends; recorded ``reshape``, ``diff``
    (``getitem`` and ``subtract``) and ``concatenate``.
    """
    a = _t(ary)
    parts = [diff(reshape(a, shape=(-1,)))] if a.size else [_t(own(np.zeros(0, a.dtype)))]
    for where, x in (("begin", to_begin), ("end", to_end)):
        if x is None:
            continue
        if not np.can_cast(np.asarray(_value(x)).dtype, a.dtype, casting="same_kind"):
            raise TypeError(f"dtype of `to_{where}` must be compatible with input `ary` under the `same_kind` rule.")
        x = reshape(_t(x), shape=(-1,))
        x = x if x.dtype == a.dtype else x.astype(a.dtype)
        parts.insert(0, x) if where == "begin" else parts.append(x)
    return concatenate(*parts, axis=0)


@defcomposite("resize", "x's elements repeated in order to fill the new shape (a gather)", numpy=(np.resize,))
def resize(a, new_shape):
    """``numpy.resize`` over Tensors: ``a`` flattened, repeated as often as needed, cut and reshaped.

    Parameters
    ----------
    a : Tensor or array_like
    new_shape : int or tuple of int

    Returns
    -------
    Tensor, shape ``new_shape``, ``a``'s dtype

    Raises
    ------
    ValueError
        For a negative dimension (numpy's message).

    Notes
    -----
    numpy's own ``resize`` run on the element positions, then a gather (its VJP adds ``g`` over
    the copies); an empty ``a`` gives numpy's zeros (no gradient: no element is read).
    """
    a = _t(a)
    pos = np.resize(_positions(a), new_shape)
    if a.size == 0:
        return Tensor(own(np.zeros(pos.shape, a.dtype)))
    return _gather(a, pos)


def _unwrap_correction(p, discont, axis, period):
    # numpy's unwrap on values (numpy/lib/_function_base_impl.py), up to its ph_correct.cumsum
    dd = np.diff(p, axis=axis)
    discont = period / 2 if discont is None else discont
    dtype = np.result_type(dd, period)
    if np.issubdtype(dtype, np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high, boundary_ambiguous = period / 2, True
    ddmod = np.mod(dd - -interval_high, period) + -interval_high
    if boundary_ambiguous:
        np.copyto(ddmod, interval_high, where=(ddmod == -interval_high) & (dd > 0))
    ph_correct = ddmod - dd
    np.copyto(ph_correct, 0, where=abs(dd) < discont)
    return ph_correct.cumsum(axis), dtype


@defcomposite("unwrap", "p + c with c numpy's correction, a piecewise-constant multiple of period (d/dp = 1)",
              numpy=(np.unwrap,))
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """``numpy.unwrap`` over Tensors: ``p`` with jumps larger than ``discont`` folded by ``period``.

    Parameters
    ----------
    p : Tensor or array_like
    discont, period : float, optional
        numpy's; values only (a Tensor is refused: its derivative is not recorded).
    axis : int, default -1

    Returns
    -------
    Tensor, ``p``'s shape, dtype ``result_type(diff(p), period)`` as numpy

    Raises
    ------
    TypeError
        If ``discont`` or ``period`` is a Tensor.

    Notes
    -----
    numpy computes ``p[1:] + cumsum(ph_correct)``, ``ph_correct`` a multiple of ``period`` chosen
    from the values: constant between the jumps, so ``d/dp = 1`` (jax.numpy's derivative). The
    correction is numpy's own on the values, added to the recorded ``p``: numpy's values exactly.
    """
    if _is_tensor(discont, period):
        raise TypeError("autoprop cannot record numpy.unwrap with a Tensor discont= or period=: their "
                        "derivative is not registered; pass numbers (the gradient for p is recorded)")
    p = _t(p)
    axis = _axis_index(axis, p.ndim)
    if p.shape[axis] < 2:
        return p.astype(np.result_type(p.dtype, period)) if p.dtype != np.result_type(p.dtype, period) else p + 0
    corr, dtype = _unwrap_correction(p._value, discont, axis, period)
    up = p if p.dtype == dtype else p.astype(dtype)
    first = tuple(slice(0, 1) if d == axis else slice(None) for d in range(p.ndim))
    rest = tuple(slice(1, None) if d == axis else slice(None) for d in range(p.ndim))
    return concatenate(up[first], p[rest] + own(corr), axis=axis)


@defcomposite("apply_over_axes", "func applied once per axis (the chain rule through func)",
              numpy=(np.apply_over_axes,))
def apply_over_axes(func, a, axes):
    """``numpy.apply_over_axes`` over Tensors: numpy's loop ``a = func(a, axis)``, keeping the dims.

    Parameters
    ----------
    func : callable
        ``func(a, axis)``, called with the Tensor (recorded as its own calls are).
    a : Tensor or array_like
    axes : int or sequence of int

    Returns
    -------
    Tensor, ``a``'s number of dimensions

    Raises
    ------
    ValueError
        If ``func`` returns neither ``a``'s dimensions nor one fewer (numpy's message).
    """
    val = _t(a)
    n = val.ndim
    for axis in ((axes,) if np.ndim(axes) == 0 else axes):
        axis = n + axis if axis < 0 else axis
        res = _t(func(val, axis))
        if res.ndim != val.ndim:
            res = reshape(res, shape=res.shape[:axis] + (1,) + res.shape[axis:])
            if res.ndim != val.ndim:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


modf_fraction = _unary("modf_fraction", lambda x: np.modf(x)[0], lambda ans, x: np.ones_like(ans),
                       "diag(1)", "dx = g (x - trunc(x): trunc is piecewise constant; numpy's modf)",
                       kinks="integers: a jump (the one-sided derivative 1 is used)", numpy=False,
                       source="np.modf({x})[0]")


def modf(x, /, out=None, **kw):
    """``numpy.modf`` over Tensors: ``(fraction, integer part)``, both with ``x``'s sign.

    Parameters
    ----------
    x : Tensor or array_like, float

    Returns
    -------
    (Tensor, Tensor)
        The fraction (recorded: ``d/dx = 1``) and the integer part (a constant: piecewise
        constant, no gradient), numpy's values (``modf(inf) = (0, inf)``).

    Raises
    ------
    TypeError
        For ``out=`` and other options.
    """
    _check_kw("modf", dict(kw, out=out))
    x = _t(x)
    return modf_fraction(x), Tensor(own(np.modf(x._value)[1]))


def frexp(x, /, out=None, **kw):
    """``numpy.frexp`` over Tensors: ``(mantissa, exponent)`` with ``x = mantissa * 2**exponent``.

    Parameters
    ----------
    x : Tensor or array_like, float

    Returns
    -------
    (Tensor, ndarray of int32)
        The mantissa (recorded: ``d/dx = 2^-e``, ``e`` piecewise constant) and numpy's exponents.

    Raises
    ------
    TypeError
        For ``out=`` and other options.

    Notes
    -----
    numpy's definition ``x = m 2^e``; the mantissa is recorded as ``x * 2^-h * 2^-(e-h)``
    (``h = e // 2``: each factor a power of two in range, so the products are exact, numpy's value).
    """
    _check_kw("frexp", dict(kw, out=out))
    x = _t(x)
    e = np.frexp(x._value)[1]
    one = np.ones((), np.result_type(x.dtype, np.float16))
    h = e // 2
    return x * own(np.ldexp(one, -h)) * own(np.ldexp(one, h - e)), e


defnumpy("modf", (np.modf,), modf)
defnumpy("frexp", (np.frexp,), frexp)


i0_numpy = _unary("i0_numpy", np.i0, lambda ans, x: _i1(x), "diag(i1(x))", "dx = g * i1(x) (DLMF 10.29.3)",
                  numpy=(np.i0,), source="np.i0({x})")


def _i1(x):  # (scipy.special.i1: special's record on a Tensor, its value on an array)
    if _ss is None:
        raise TypeError("autoprop: the derivative of numpy.i0 is scipy.special.i1; install scipy for it")
    return _ss.i1(x)


def _poly_pad(a1, a2):  # numpy's polyadd: the shorter padded with zeros at the front
    a1, a2 = _t(a1), _t(a2)
    a1 = reshape(a1, shape=(1,)) if a1.ndim == 0 else a1
    a2 = reshape(a2, shape=(1,)) if a2.ndim == 0 else a2
    d = len(a2) - len(a1)
    if d > 0:
        a1 = concatenate(_t(own(np.zeros(d, a1.dtype))), a1, axis=0)
    elif d < 0:
        a2 = concatenate(_t(own(np.zeros(-d, a2.dtype))), a2, axis=0)
    return a1, a2


@defcomposite("polyadd", "a1 + a2, the shorter padded with zeros at the front", numpy=(np.polyadd,))
def polyadd(a1, a2):
    """``numpy.polyadd`` over Tensors: the coefficients of the sum of two polynomials.

    Parameters
    ----------
    a1, a2 : Tensor or array_like, 1-D coefficients, highest power first

    Returns
    -------
    Tensor, shape (max(len(a1), len(a2)),)
    """
    a1, a2 = _poly_pad(a1, a2)
    return a1 + a2


@defcomposite("polysub", "a1 - a2, the shorter padded with zeros at the front", numpy=(np.polysub,))
def polysub(a1, a2):
    """``numpy.polysub`` over Tensors: the coefficients of ``a1 - a2``.

    Parameters
    ----------
    a1, a2 : Tensor or array_like, 1-D coefficients, highest power first

    Returns
    -------
    Tensor, shape (max(len(a1), len(a2)),)
    """
    a1, a2 = _poly_pad(a1, a2)
    return a1 - a2


def _1d(a):
    a = _t(a)
    return reshape(a, shape=(1,)) if a.ndim == 0 else a


@defcomposite("polymul", "convolve(a1, a2)", numpy=(np.polymul,))
def polymul(a1, a2):
    """``numpy.polymul`` over Tensors: the product's coefficients, ``convolve(a1, a2)`` as numpy.

    Parameters
    ----------
    a1, a2 : Tensor or array_like, 1-D coefficients, highest power first

    Returns
    -------
    Tensor, shape (len(a1) + len(a2) - 1,)
    """
    return convolve(_1d(a1), _1d(a2))


@defcomposite("polyder", "p[:-1] * arange(n, 0, -1), m times", numpy=(np.polyder,))
def polyder(p, m=1):
    """``numpy.polyder`` over Tensors: the coefficients of the ``m``-th derivative.

    Parameters
    ----------
    p : Tensor or array_like, 1-D coefficients, highest power first
    m : int, default 1

    Returns
    -------
    Tensor, shape (max(len(p) - m, 0),) (numpy's)

    Raises
    ------
    ValueError
        For ``m < 0`` (numpy's message).
    """
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = _t(p)
    for _ in range(m):
        p = p[:-1] * own(np.arange(len(p) - 1, 0, -1))
    return p


@defcomposite("polyint", "concatenate(p / arange(n, 0, -1), k), m times", numpy=(np.polyint,))
def polyint(p, m=1, k=None):
    """``numpy.polyint`` over Tensors: the coefficients of the ``m``-th antiderivative.

    Parameters
    ----------
    p : Tensor or array_like, 1-D coefficients, highest power first
    m : int, default 1
    k : Tensor or array_like, optional
        The integration constants (a scalar, or ``m`` of them); a Tensor gets its gradient.

    Returns
    -------
    Tensor, shape (len(p) + m,)

    Raises
    ------
    ValueError
        For ``m < 0`` or a ``k`` of another length (numpy's messages).
    """
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = _1d(own(np.zeros(m, float)) if k is None else k)
    if len(k) == 1 and m > 1:
        k = k[0] * own(np.ones(m, float))
    if len(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = _t(p)
    for i in range(m):
        p = concatenate(p / own(np.arange(len(p), 0, -1)), reshape(k[i], shape=(1,)), axis=0)
    return p


@defcomposite("poly", "prod_k (x - z_k) expanded: convolve(a, [1, -z_k]) for each root "
                      "(a square matrix: of its eigvals)", numpy=(np.poly,))
def poly(seq_of_zeros):
    """``numpy.poly`` over Tensors: the coefficients of the monic polynomial with the given roots.

    Parameters
    ----------
    seq_of_zeros : Tensor or array_like
        1-D roots, or a square matrix (its characteristic polynomial, by ``eigvals`` as numpy).

    Returns
    -------
    Tensor, shape (n + 1,); real when complex roots come in conjugate pairs (numpy's rule); the
    float 1.0 for no roots.

    Raises
    ------
    ValueError
        For another shape (numpy's message).

    Notes
    -----
    numpy's loop ``a = convolve(a, [1, -z])`` on recorded ``convolve`` and ``stack``; a matrix's
    coefficients are the record :data:`charpoly` (numpy's values, a derivative smooth in A even
    at repeated eigenvalues: review30's POLY_MATRIX_DEFECTIVE, through ``eigvals`` it was wrong at a
    Jordan block).
    """
    z = _1d(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        return charpoly(z)
    elif z.ndim == 1:
        dt = np.dtype(np.mintypecode(z.dtype.char))
        z = z if z.dtype == dt else z.astype(dt)
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if len(z) == 0:
        return 1.0
    a = _t(own(np.ones((1,), z.dtype)))
    one = _t(own(np.ones((), z.dtype)))
    for i in range(len(z)):
        a = convolve(a, stack([one, -z[i]]), mode="full")
    if a.dtype.kind == "c":
        r = np.asarray(z._value, complex)
        if np.all(np.sort(r) == np.sort(r.conjugate())):
            a = real(a)
    return a


@defcomposite("polydiv", "numpy's long division, each step r[k:k+n+1] - (r[k] / v[0]) v, recorded",
              numpy=(np.polydiv,))
def polydiv(u, v):
    """``numpy.polydiv`` over Tensors: quotient and remainder of ``u / v``.

    Parameters
    ----------
    u, v : Tensor or array_like, 1-D coefficients, highest power first

    Returns
    -------
    (Tensor, Tensor)
        The quotient (shape (max(len(u) - len(v) + 1, 1),)) and the remainder, its leading
        near-zeros dropped as numpy (``allclose(r[0], 0, rtol=1e-14)`` on the values).

    Notes
    -----
    numpy's loop with the in-place updates written as recorded slices and ``concatenate``:
    ``d = r[k] / v[0]``, ``q[k] = d``, ``r[k:k+n+1] -= d v``.
    """
    u, v = _1d(u) + 0.0, _1d(v) + 0.0
    m, n = len(u) - 1, len(v) - 1
    scale = 1.0 / v[0]
    r = u if u.dtype == (u[0] + v[0]).dtype else u.astype((u[0] + v[0]).dtype)
    qs = []
    for k in range(m - n + 1):
        d = scale * r[k]
        qs.append(d)
        r = concatenate(r[:k], r[k:k + n + 1] - d * v, r[k + n + 1:], axis=0)
    q = stack(qs) if qs else _t(own(np.zeros((1,), r.dtype)))
    while np.allclose(r._value[0], 0, rtol=1e-14) and r.shape[-1] > 1:
        r = r[1:]
    return q, r


def _adjugate_terms(a, c):
    """``B_0 .. B_{n-1}`` with ``adj(x I - A) = sum_k B_k x^(n-1-k)``: ``B_0 = I``, ``B_k = A B_(k-1) + c_k I``
    (the Faddeev-LeVerrier recursion; Gantmacher, *The Theory of Matrices* I, 1959, IV.4), ``c`` the
    characteristic polynomial's coefficients; on values or Tensors (an outer tape differentiates it)."""
    n = _shape_n(a)
    eye = _eye(n, a)
    bs = [eye + 0 * a]
    for k in range(1, n):
        bs.append(a @ bs[-1] + c[k] * eye)
    return bs


def _shape_n(a):
    return np.shape(a._value if isinstance(a, Tensor) else a)[-1]


def _charpoly_vjp(g, ans, a):
    bs = _adjugate_terms(a, ans)  # dc_(k+1) = -tr(B_k dA): dA = -sum_k g_(k+1) B_k^T
    out = -builtins.sum(g[k + 1] * np.swapaxes(b, -1, -2) for k, b in enumerate(bs))
    return np.real(out) if not np.iscomplexobj(_value(a)) else out


def _charpoly_jvp(t, ans, a):
    bs = _adjugate_terms(a, ans)
    dc = [-np.sum(b * np.swapaxes(t, -1, -2)) for b in bs]
    return np.stack([0 * dc[0]] + dc)


charpoly = defprim(
    "charpoly", np.poly, _charpoly_vjp, jvp=_charpoly_jvp,
    jacobian="c_k, the coefficients of det(x I - A) = sum_k c_k x^(n-k): dc_0 = 0, dc_(k+1) = -tr(B_k dA), "
             "adj(x I - A) = sum_k B_k x^(n-1-k), B_0 = I, B_k = A B_(k-1) + c_k I (Faddeev-LeVerrier; "
             "Jacobi's formula d det(M) = tr(adj(M) dM))",
    vjp="dA = -sum_k g_(k+1) B_k^T",
    shapes="A (n, n) -> (n + 1,) (numpy's np.poly of a square matrix: real when the eigenvalues come in "
           "conjugate pairs)",
    kinks="none: the coefficients are polynomials in A (smooth at repeated and defective eigenvalues too)",
    source="{out} = np.poly({0})", reads=((0, "ans"),),
)


def _poly_stripped(p):  # p without its leading zeros (numpy's roots drops them: roots at infinity)
    nz = np.nonzero(np.ravel(p))[0]
    return p[int(nz[0]):] if len(nz) else p[:0]


def _roots_unresolved(p, r):
    """True where the derivative of root ``r_i`` cannot be computed to ``linalg_eig.RESOLVED`` (``linalg_eig.beyond``).

    The derivative ``-r_i^(L-1-k) / p'(r_i)`` is computed from the root, so its error is the root's error ``dr_i``
    carried through: relatively ``dr_i (sum_(j != i) 2 / |r_i - r_j| + (L-1) / |r_i|)`` (``p''(r_i) / p'(r_i) =
    sum_(j != i) 2 / (r_i - r_j)``, and the powers), plus the rounding of ``p'(r_i)`` itself, ``eps sum_k
    |k p_k r_i^(k-1)| / |p'(r_i)|`` (its condition number; Higham 2002, sect. 5.1). ``dr_i <= n eps |y| |E| |x|``:
    the first-order change of an eigenvalue (Golub & Van Loan 2013, sect. 7.2.2) of numpy's companion matrix
    (leading zeros dropped; first row ``-p[1:] / p[0]``, ones below the diagonal; right eigenvector
    ``x_j = r^(d-1-j)``, left ``y_j`` Horner's partial sums ``sum_(k<=j) p_k r^(j-k)`` scaled to ``y x = 1``) under
    LAPACK's rounding ``|E| <= eps linalg_eig.lapack_coupling(C)`` (``eps`` float64's: numpy computes in double,
    ``linalg_eig.lapack_eps``; float32 adds its rounding of the first row and of the roots). A repeated root (``r +- sqrt(eps)`` computed):
    True; a simple one far from the others, as the roots of ``prod_(k=1..8) (x - k)``: False."""
    p, r = np.asarray(_value(p)), np.asarray(_value(r))
    ps = _poly_stripped(p)
    d = len(ps) - 1
    if len(r) == 0 or d < 1:
        return np.zeros(r.shape, bool)
    dt = np.result_type(p.dtype, r.dtype, np.float32)
    eps64, eps = lapack_eps(dt)
    with np.errstate(all="ignore"):
        xs = np.stack([r ** (d - 1 - j) for j in range(d)], axis=-1)
        ys = [ps[0] + 0 * r]
        for j in range(1, d):
            ys.append(ys[-1] * r + ps[j])
        ys = np.stack(ys, axis=-1)
        ys = ys / np.sum(ys * xs, axis=-1, keepdims=True)
        comp = np.eye(d, k=-1, dtype=dt)
        comp[0] = -ps[1:] / ps[0]
        dr = eps64 * np.diagonal(lapack_coupling(comp.astype(np.result_type(dt, np.float64)), ys, xs.T))
        if eps > eps64:  # float32: numpy's first row -p[1:] / p[0] rounded to it (that error, exactly), each root too
            row = np.abs(comp[0] - (-ps[1:].astype(np.float64) / ps[0]))  # (complex64: complex128's)
            dr = dr + np.abs(ys[:, 0]) * (np.abs(xs) @ row) + eps * np.abs(r)
        gap = np.abs(r[:, None] - r[None, :]) + np.diag(np.full(len(r), np.inf))
        k = np.arange(d, 0, -1)
        dps = np.polyder(ps)
        cond_dp = (np.abs(xs) @ np.abs(ps[:-1] * k)) / np.abs(np.polyval(dps, r))
        power = np.where(dr == 0, 0.0, (len(p) - 1) * dr / np.abs(r))
        est = dr * np.sum(2 / gap, axis=-1) + power + eps * cond_dp
    return beyond(est, dt)


def _roots_parts(p, r):
    """The Vandermonde rows ``r_i^(L-1-k)`` (L = len(p)) and ``p'(r_i)``; on values or Tensors."""
    L = _shape_n(p)
    pw = [r * 0 + 1]
    for _ in range(L - 1):
        pw.append(pw[-1] * r)
    vand = np.stack(pw[::-1], axis=-1)
    dp = vand[:, 1:] @ (p[:-1] * own(np.arange(L - 1, 0, -1, dtype=float)))
    return vand, dp


def _roots_weights(p, r):  # -1 / p'(r_i), 0 at the unresolved roots (the callers put NaN where they are reached)
    bad = _roots_unresolved(p, r)
    vand, dp = _roots_parts(p, r)
    return vand, -1 / np.where(bad, 1.0, dp), bad


def _polyroots_vjp(g, ans, p):
    if _shape_n(ans) == 0:
        return np.zeros(np.shape(_value(p)), np.asarray(_value(p)).dtype)
    vand, w, bad = _roots_weights(p, ans)
    gv = np.asarray(_value(g))
    out = (np.where(bad, 0.0, g) * w) @ vand  # dp_k = -sum_i g_i r_i^(L-1-k) / p'(r_i)
    if np.any(bad & (gv != 0)):  # a gradient reaching a repeated (unresolved) root: NaN (roots' Notes), linked
        out = nan_linked(out, True, p + np.sum(g) + np.sum(ans))
    return np.real(out) if not np.iscomplexobj(_value(p)) else out


def _polyroots_jvp(t, ans, p):
    if _shape_n(ans) == 0:
        return np.zeros(np.shape(_value(ans)), np.asarray(_value(ans)).dtype)
    vand, w, bad = _roots_weights(p, ans)
    return nan_linked((vand @ t) * w, bad, np.sum(t) + np.sum(p) + ans)


polyroots = defprim(
    "polyroots", np.roots, _polyroots_vjp, jvp=_polyroots_jvp,
    jacobian="p(r_i) = 0 (the implicit function theorem at a simple root): dr_i = -sum_k r_i^(L-1-k) dp_k / p'(r_i), "
             "L = len(p), for every coefficient, the leading and trailing zeros too",
    vjp="dp_k = -sum_i g_i r_i^(L-1-k) / p'(r_i)",
    shapes="p (L,) -> numpy's roots (complex unless all real)",
    kinks="a repeated or nearly repeated root (its derivative's first-order error bound above 1e-6, "
          "_roots_unresolved): not differentiable alone; a gradient reaching it makes dp NaN, its tangent NaN",
    source="{out} = np.roots({0})", reads=((0, "ans"),),
)


@defcomposite("roots", "numpy's roots, differentiated by the implicit function theorem (the record polyroots)",
              numpy=(np.roots,))
def roots(p):
    """``numpy.roots`` over Tensors: the roots of the polynomial with coefficients ``p``.

    Parameters
    ----------
    p : Tensor or array_like, 1-D coefficients, highest power first

    Returns
    -------
    Tensor
        numpy's roots in numpy's order (numpy's own call): the eigenvalues of the companion matrix
        (complex unless all are real, as ``np.linalg.eigvals``), then the zeros of trailing zero
        coefficients.

    Raises
    ------
    ValueError
        If ``p`` is not 1-D (numpy's message).

    Notes
    -----
    The derivative of a simple root ``r`` of ``p(x) = sum_k p_k x^(L-1-k)`` is the implicit
    function theorem's ``dr/dp_k = -r^(L-1-k) / p'(r)`` for every coefficient, including a trailing
    zero (review30, ROOTS_TRAILING_ZERO: numpy's constant root 0 moves with ``p_(L-1)`` as
    ``-1/p_(L-2)``, and so do the other roots) and a leading zero; in exact arithmetic the same as
    the eigenvalue derivative of the companion matrix (jax differentiates that).

    A repeated root (or one so close to another that its derivative's first-order error bound under
    rounding is above 1e-6, float64: ``polynomial._roots_unresolved`` gives the bound) is
    not differentiable alone (a double root splits as ``r +- sqrt(t)``). Symmetric functions of the
    roots are smooth, but cannot be told from the gradient: at the double root 1 of ``(x - 1)^2``,
    ``sum(roots)`` and ``sum(roots**2) / 2`` both send ``g = [1, 1]`` and their gradients are
    ``[-2, -1, 0]`` and ``[-3, -2, -1]``. So a gradient reaching such a root makes the whole
    gradient of ``p`` NaN (jax's eigvals gives NaN there too; review30, ROOTS_REPEATED_SILENT:
    a finite wrong number before), and its tangent in forward mode is NaN; a root that gets no
    gradient is no matter. For sums of powers of the roots use the coefficients (Newton's
    identities: ``sum(r) = -p_1 / p_0``).
    """
    p = _1d(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if p.dtype.kind not in "fc":
        p = p.astype(float)
    return polyroots(p)
