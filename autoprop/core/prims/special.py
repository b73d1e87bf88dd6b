"""More elementwise functions: numpy's remaining real ufuncs (exp2, cbrt, the inverse
hyperbolic functions, hypot, logaddexp2, fmax/fmin, remainder/fmod and ``%``, sinc)
and ``scipy.special``'s (expit, logit, xlogy, xlog1py, gammaln, digamma, polygamma, gamma,
loggamma, betaln, erfinv, erfcx, ndtr, log_ndtr, ndtri, i0, i1, entr, log_expit, and
erf/erfc/expm1/log1p under their scipy names), with the compositions that are exact (fabs, deg2rad and
friends, real/imag/conj of real input, nan_to_num).

One record each (registry.defprim): forward, VJP and JVP per argument (the same
factor in both modes, as ``elementwise._unary``), derivation text, numpy names.
scipy is optional: without it the scipy names are simply not registered.
Derivations: standard calculus; sources at each record (DLMF for the special functions).
"""

from __future__ import annotations

import numpy as np

from .. import observe as _observe
from ..observe import own
from ..registry import defcomposite, defnondiff, defnumpy, defprim
from ..tensor import Tensor
from ._common import BCAST, SAME, _check_kw, _shape, _t, _value, times, unbroadcast
from .elementwise import (
    NAN_RULE,
    _binary,
    _pair_share,
    _tie_share,
    _unary,
    absolute,
    multiply,
    where,
)

try:
    import scipy.special as _ss
except ImportError:  # pragma: no cover - scipy comes with scikit-learn
    _ss = None

__all__ = [
    "exp2", "cbrt", "arcsinh", "arccosh", "arctanh", "hypot", "logaddexp2", "fmax", "fmin",
    "remainder", "fmod", "sinc", "fabs", "deg2rad", "rad2deg", "radians", "degrees", "real", "imag", "conj",
    "nan_to_num", "real_if_close", "angle", "expit", "logit", "xlogy", "gammaln", "digamma", "erfinv", "trunc",
]

_LN2 = float(np.log(2.0))


def _sp(name):
    """``scipy.special.<name>`` as a one-entry numpy tuple (empty without scipy)."""
    return (getattr(_ss, name),) if _ss is not None and hasattr(_ss, name) else ()


def _elementwise(name, fwd, factor, jacobian, kinks="none (smooth)", numpy=True, source=None):
    """:func:`~.elementwise._unary` with both formula texts made from ``jacobian``."""
    return _unary(name, fwd, factor, f"diag({jacobian})", f"dx = g * {jacobian}", kinks=kinks, numpy=numpy,
                  source=source)


exp2 = _elementwise("exp2", np.exp2, lambda ans, x: ans * _LN2, "2^x ln 2")
cbrt = _elementwise("cbrt", np.cbrt, lambda ans, x: 1.0 / (3.0 * ans * ans), "1 / (3 cbrt(x)^2)",
                    kinks="x = 0: inf (a vertical tangent)")
arcsinh = _elementwise("arcsinh", np.arcsinh, lambda ans, x: 1.0 / np.sqrt(x * x + 1.0),
                       "1 / sqrt(x^2 + 1)")
arccosh = _elementwise("arccosh", np.arccosh, lambda ans, x: 1.0 / np.sqrt(x * x - 1.0),
                       "1 / sqrt(x^2 - 1)", kinks="x = 1: inf; x < 1: nan (as numpy)")
arctanh = _elementwise("arctanh", np.arctanh, lambda ans, x: 1.0 / (1.0 - x * x), "1 / (1 - x^2)",
                       kinks="|x| = 1: inf; |x| > 1: nan (as numpy)")


# sum_k c[k] v^k by Horner's rule, the one loop the series below share: numpy's own, which records on a
# Tensor v (products and sums: every derivative order of the polynomial is right)
_polyval = np.polynomial.polynomial.polyval

#: (log1p(u) - u) / u^2 = sum_j (-1)^(j+1) u^j / (j + 2) = -1/2 + u/3 - u^2/4 + ... (log1p's Taylor series, DLMF
#: 4.6.1): 17 terms for |u| < 0.1 (the next, 0.1^17 / 19, is 5e-19 of the sum's -1/2). Shared by the t
#: log-density's kernel (autoprop.scipy.stats, recorded) and gammainc's saddle-point density (incgamma).
LOG1PMX_SERIES = np.array([(-1.0) ** (j + 1) / (j + 2) for j in range(17)])


def log1pmx_over_u2_series(u):
    """``(log1p(u) - u) / u^2`` for ``|u| < 0.1`` by :data:`LOG1PMX_SERIES` (no cancellation; -1/2 at u = 0).

    Parameters
    ----------
    u : Tensor, ndarray or float
        With ``|u| < 0.1`` (the caller selects those entries; beyond, the series is not summed far enough).

    Returns
    -------
    Tensor or ndarray
        ``u``'s shape; recorded when ``u`` is a Tensor (Horner's products and sums, :data:`_polyval`).
    """
    return _polyval(u, LOG1PMX_SERIES)


# d/du sin(u)/u = sum_k (-1)^k 2k u^(2k-1) / (2k+1)!, k >= 1: the coefficients of u^(2k-1)
_SINC_D_SERIES = np.array([(-1) ** k * 2 * k / float(np.prod(np.arange(1, 2 * k + 2, dtype=float)))
                           for k in range(1, 11)])


def _sinc_d(ans, x):
    # d/dx sin(pi x)/(pi x) = (cos(pi x) - sinc(x)) / x = pi (u cos u - sin u) / u^2, u = pi x.
    # The difference cancels for small u (relative error ~ eps / u^2, and 0 / 0 at 0), so
    # |u| < 1 takes the Taylor series above (10 terms: truncation below 1e-18 relative), a
    # polynomial, recorded on Tensors: every derivative order is right at 0 too
    # (sinc''(0) = -pi^2/3, the series' -pi u / 3 differentiated)
    xv = x._value if isinstance(x, Tensor) else np.asarray(x)
    small = np.abs(xv) < 1.0 / np.pi
    u = np.pi * x
    series = np.pi * u * _polyval(u * u, _SINC_D_SERIES)
    if np.all(small):
        return series
    direct = (np.cos(np.pi * x) - ans) / np.where(small, 1.0, x)
    return np.where(small, series, direct)


sinc = _elementwise("sinc", np.sinc, _sinc_d, "(cos(pi x) - sinc(x)) / x (a Taylor series for |pi x| < 1)",
                    kinks="none: near 0 the derivative is its Taylor series (exact at 0, "
                          "sinc''(0) = -pi^2/3, in every mode)", numpy=(np.sinc,))


def _hypot_safe(ans):
    return np.where(ans == 0, 1.0, ans)


hypot = _binary(
    "hypot", np.hypot,
    lambda ans, a, b: np.where(ans == 0, 0.0, a / _hypot_safe(ans)),
    lambda ans, a, b: np.where(ans == 0, 0.0, b / _hypot_safe(ans)),
    "d sqrt(a^2 + b^2)/da = a / hypot(a, b), d/db = b / hypot(a, b)",
    "da = g a / h, db = g b / h, h = hypot(a, b)",
    kinks="a = b = 0: the subgradient 0 (never nan)",
)
logaddexp2 = _binary(
    "logaddexp2", np.logaddexp2,
    lambda ans, a, b: _pair_share(a, b, np.exp2), lambda ans, a, b: _pair_share(b, a, np.exp2),
    "d log2(2^a + 2^b)/da = 2^a / (2^a + 2^b) = 1 / (1 + 2^(b - a))",
    "da = g / (1 + 2^(b - a)), db = g / (1 + 2^(a - b)) (from a - b: exact at any magnitude)",
    kinks="as logaddexp: an input at -inf gets 0; at +inf the limit, 1 beside a finite input, 1/2 each at "
          "(inf, inf) (jax: 1 each); 1/2 each at a = b = 1e20 (torch's 1 / (1 + 2^(b - a)))",
)


fmax = _binary("fmax", np.fmax, lambda ans, a, b: _tie_share(a, b, True, nan_wins=False),
               lambda ans, a, b: _tie_share(b, a, True, nan_wins=False), "1 to the larger argument (NaN ignored)",
               "da = g [a > b or b is NaN] + 0.5 g [a == b]",
               kinks="a == b: each side gets half of g (as maximum); a NaN input: " + NAN_RULE)
fmin = _binary("fmin", np.fmin, lambda ans, a, b: _tie_share(a, b, False, nan_wins=False),
               lambda ans, a, b: _tie_share(b, a, False, nan_wins=False), "1 to the smaller argument (NaN ignored)",
               "da = g [a < b or b is NaN] + 0.5 g [a == b]",
               kinks="a == b: each side gets half of g (as minimum); a NaN input: " + NAN_RULE)


def _val(x):
    return x._value if hasattr(x, "_value") else x


remainder = _binary(
    "remainder", np.remainder, lambda ans, a, b: 1.0,
    lambda ans, a, b: -np.floor_divide(_val(a), _val(b)),
    "a mod b = a - b floor(a / b): d/da = 1, d/db = -floor(a / b)",
    "da = g, db = -g floor(a / b)",
    kinks="jumps where a / b is an integer (the derivative there is the one-sided one)",
    methods=("__mod__", "__rmod__"),
)
fmod = _binary(
    "fmod", np.fmod, lambda ans, a, b: 1.0, lambda ans, a, b: -np.trunc(np.divide(_val(a), _val(b))),
    "fmod(a, b) = a - b trunc(a / b): d/da = 1, d/db = -trunc(a / b)",
    "da = g, db = -g trunc(a / b)", kinks="jumps where a / b is an integer",
)


trunc = defnondiff("trunc", np.trunc, "trunc is piecewise constant", numpy=(np.trunc, np.fix))


# --- exact compositions ----------------------------------------------------------------
@defcomposite("fabs", "absolute(x) (the same values for real x)", numpy=(np.fabs,))
def fabs(x, out=None, **kw):
    """``numpy.fabs`` over Tensors: ``|x|`` for real ``x``.

    Parameters
    ----------
    x : Tensor or array_like

    Returns
    -------
    Tensor
        ``x``'s shape and float dtype.

    Raises
    ------
    TypeError
        For ``out=`` and other ufunc options.

    Notes
    -----
    The recorded ``absolute``: ``d|x|/dx = sign(x)``, 0 at ``x = 0`` (the registry's
    ``abs'(0) = 0``).
    """
    _check_kw("fabs", dict(kw, out=out))
    return absolute(x)


def _scaled(name, factor):
    @defcomposite(name, f"x * ({factor[0]}): the derivative is the constant", numpy=(getattr(np, name),))
    def fn(x, out=None, **kw):
        _check_kw(name, dict(kw, out=out))
        return multiply(x, own(factor[1]))  # numpy's own formula: x * (pi / 180) or x * (180 / pi)
    return fn


deg2rad = _scaled("deg2rad", ("pi / 180", np.pi / 180.0))
rad2deg = _scaled("rad2deg", ("180 / pi", 180.0 / np.pi))
radians = _scaled("radians", ("pi / 180", np.pi / 180.0))
degrees = _scaled("degrees", ("180 / pi", 180.0 / np.pi))


def _is_c(x):
    return np.iscomplexobj(x._value if isinstance(x, Tensor) else x)


def _match(x, g):
    """``g`` for an input ``x``: complex when ``x`` is (a real ``g`` into a complex input)."""
    return g * (1.0 + 0.0j) if _is_c(x) and not _is_c(g) else g


# real, imag, conj, angle: autograd's rules (autoprop.core.complex); on real input the
# identity, zeros, the identity, and a piecewise constant
real = defprim("real", np.real, lambda g, ans, x: _match(x, g), jvp=lambda t, ans, x: np.real(t),
               jacobian="d Re(z) = Re(dz)", vjp="dz = g (real; autograd's convention)", shapes=SAME,
               kinks="none (real input: the identity)", numpy=(np.real,), source="np.real({0})",
               reads=((0,),))


def _imag_vjp(g, ans, x):
    return np.multiply(g, -1j) if _is_c(x) else g * 0.0  # (-1j * g of a numpy float scalar: a Python complex)


imag = defprim("imag", np.imag, _imag_vjp, jvp=lambda t, ans, x: np.imag(t),
               jacobian="d Im(z) = Im(dz)", vjp="dz = -i g (real input: 0)", shapes=SAME,
               kinks="none (real input: zeros, derivative 0)", numpy=(np.imag,), source="np.imag({0})",
               reads=((0,),))


def _np_conj(x, out=None, **kw):
    _check_kw("conjugate", dict(kw, out=out))
    return conj(x)


conj = defprim("conj", np.conjugate, lambda g, ans, x: np.conjugate(g), jvp=lambda t, ans, x: np.conjugate(t),
               jacobian="d conj(z) = conj(dz)", vjp="dz = conj(g) (real input: the identity)", shapes=SAME,
               numpy=(np.conjugate,), np_call=_np_conj, source="np.conjugate({0})", reads=((),))


@defcomposite("real_if_close", "the identity for real input", numpy=(np.real_if_close,))
def real_if_close(a, tol=100):
    """``numpy.real_if_close`` over Tensors: a real Tensor as it is.

    Parameters
    ----------
    a : Tensor or array_like, real
    tol : float
        Unused for real input (numpy's tolerance for dropping an imaginary part).

    Returns
    -------
    Tensor
        ``a`` itself (the identity: ``g`` passes unchanged).

    Raises
    ------
    TypeError
        For a complex ``a``: whether numpy's result is real depends on the values, so no
        derivative can be recorded for it; use ``np.real``.
    """
    a = _t(a)
    if a.dtype.kind == "c":  # numpy's choice of dtype depends on the values: a real or complex result
        raise TypeError("autoprop cannot record numpy.real_if_close of a complex Tensor: whether "
                        "the result is real depends on the values; use np.real (its gradient is "
                        "defined) when the imaginary part is negligible")
    return a


def _angle_d(ans, z, deg):
    # d angle(z) as a complex factor: conj(i z) / |z|^2 (autograd), (x 180/pi for deg=True);
    # a real z: 0 (angle is 0 or pi there, piecewise constant)
    if not _is_c(z):
        return z * 0.0
    d = np.conjugate(z * 1j) / (z * np.conjugate(z)).real
    return d * (180.0 / np.pi) if deg else d


def _angle_jvp(t, ans, z, deg=False):
    return np.real(times(t, _angle_d(ans, z, deg)))


angle = defprim("angle", lambda z, deg=False: np.angle(z, deg=deg),
                lambda g, ans, z, deg=False: times(g, _angle_d(ans, z, deg)), jvp=_angle_jvp,
                jacobian="d angle(z) = Im(conj(z) dz) / |z|^2", vjp="dz = g conj(i z) / |z|^2 (real z: 0)",
                shapes=SAME, kinks="z = 0: nan (undefined), 0 where g = 0; real z: 0 (piecewise constant)",
                numpy=(np.angle,), source="np.angle({z}, deg={deg})")


@defcomposite("nan_to_num", "where(finite, x, replacement): g passes where x is finite, 0 to "
                            "the replaced entries (to a Tensor nan=/posinf=/neginf= there)",
              numpy=(np.nan_to_num,))
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``numpy.nan_to_num`` over Tensors: NaN, +inf and -inf replaced by finite numbers.

    Parameters
    ----------
    x : Tensor or array_like
    copy : bool
        Changes no value (a Tensor is never written).
    nan, posinf, neginf : scalar or Tensor, optional
        The replacements (numpy's defaults: 0 and the largest finite numbers); a Tensor gets the
        sum of ``g`` over the places it fills.

    Returns
    -------
    Tensor
        ``x``'s shape and dtype (complex: the real and imaginary parts each replaced).

    Notes
    -----
    A recorded ``where``: ``g`` passes where ``x`` is finite, the replaced entries get gradient 0.
    """
    x = _t(x)
    if x.dtype.kind == "c":  # numpy replaces the real and imaginary parts each on its own
        parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf) for p in (real(x), imag(x))]
        return parts[0] + parts[1] * 1j
    v, given = x._value, {"nan": nan, "posinf": posinf, "neginf": neginf}
    fill = np.nan_to_num(v, **{k: _value(c) for k, c in given.items()})  # the replacements (values)
    finite = np.isfinite(v)  # (none replaced: fill's entries are x's own values, none read back)
    out = where(finite, x, own(fill) if finite.all() else fill)
    for c, at in zip(given.values(), (np.isnan, np.isposinf, np.isneginf)):
        if isinstance(c, Tensor):  # a Tensor replacement: recorded where it is used (d/dc = sum g there)
            out = where(at(v), c if c.dtype == x.dtype else c.astype(x.dtype), out)
    return out


# --- scipy.special ----------------------------------------------------------------------
def _sigmoid_prim():
    from ..registry import PRIMITIVES

    return PRIMITIVES["sigmoid"]


@defcomposite("expit", "sigmoid(x): the recorded sigmoid primitive", numpy=_sp("expit"))
def expit(x, out=None, **kw):
    """``scipy.special.expit`` over Tensors: the logistic sigmoid ``1 / (1 + exp(-x))``.

    Parameters
    ----------
    x : Tensor or array_like

    Returns
    -------
    Tensor
        ``x``'s shape.

    Raises
    ------
    TypeError
        For ``out=`` and other ufunc options.

    Notes
    -----
    The recorded ``sigmoid`` primitive: ``d/dx = s (1 - s)`` (``lessons/02-activations.md``).
    """
    _check_kw("expit", dict(kw, out=out))
    return _sigmoid_prim()(x)


logit = _elementwise("logit", getattr(_ss, "logit", lambda x: np.log(x / (1.0 - x))),
                     lambda ans, x: 1.0 / (x * (1.0 - x)), "1 / (x (1 - x))",
                     kinks="x = 0 or 1: inf; outside [0, 1]: nan", numpy=_sp("logit"))


def _xlogy_fwd(a, b):
    return _ss.xlogy(a, b) if _ss is not None else np.where(a == 0, 0.0, a * np.log(b))


def _a_over(a, b, pole):
    """``a / b``, the d/db factor of xlogy (``b``) and xlog1py (``1 + b``), guarded only at
    ``a = 0`` with ``b = pole`` (0/0; xlogy(0, b) is 0 for every b, so d/db is 0 there, and so
    are its derivatives). At ``a = 0`` with any other ``b`` the quotient itself is 0 and keeps
    its dependence on ``a``: d/da (d/db) = 1 / b there, as jax (testGradOfXlogyAtZero); a guard
    on ``a = 0`` alone made that mixed second derivative 0."""
    den = b if pole == 0 else 1.0 + b
    both = (np.asarray(_val(a)) == 0) & (np.asarray(_val(b)) == pole)
    if not np.any(both):
        return a / den
    return np.where(both, 0.0, a / np.where(both, 1.0, den))


xlogy = _binary(
    "xlogy", _xlogy_fwd, lambda ans, a, b: np.log(b), lambda ans, a, b: _a_over(a, b, 0.0),
    "d (a log b)/da = log b, d/db = a / b", "da = g log(b), db = g a / b (0 at a = b = 0)",
    kinks="a = 0: d/db = a / b = 0, its derivative in a 1 / b (as jax); a = b = 0: d/db is 0 "
          "(xlogy(0, b) = 0 for every b), and so are its derivatives there (the true d2/da db = 1/b "
          "is infinite; jax gives nan); b <= 0: d/da as log(b) (-inf, nan)",
    numpy=_sp("xlogy"),
    source="special.xlogy({0}, {1})",
)


def _polyg(x, n):
    """polygamma(n, x): recorded (the polygamma primitive) when x is a Tensor."""
    from ..registry import PRIMITIVES

    return PRIMITIVES["polygamma"](x, n=n) if hasattr(x, "_value") else _ss.polygamma(n, x)


if _ss is not None:
    gammaln = _elementwise("gammaln", _ss.gammaln, lambda ans, x: _polyg(x, 0), "digamma(x)",
                           kinks="poles at 0, -1, -2, ...", numpy=_sp("gammaln"))
    digamma = _elementwise("digamma", _ss.digamma, lambda ans, x: _polyg(x, 1),
                           "polygamma(1, x) (DLMF 5.15.1)", kinks="poles at 0, -1, -2, ...",
                           numpy=_sp("digamma"))
    erfinv = _elementwise("erfinv", _ss.erfinv,
                          lambda ans, x: (np.sqrt(np.pi) / 2.0) * np.exp(ans * ans),
                          "sqrt(pi)/2 exp(erfinv(x)^2) (the inverse function rule)",
                          kinks="|x| = 1: inf; |x| > 1: nan", numpy=_sp("erfinv"))
    # polygamma(n, x) in x, every order: d/dx polygamma(n, x) = polygamma(n + 1, x) (DLMF 5.15)
    polygamma = defprim(
        "polygamma", lambda x, n: _ss.polygamma(n, x),
        lambda g, ans, x, n: g * _polyg(x, n + 1), jvp=lambda t, ans, x, n: t * _polyg(x, n + 1),
        jacobian="diag(polygamma(n + 1, x))", vjp="dx = g polygamma(n + 1, x)", shapes=SAME,
        kinks="poles at 0, -1, -2, ...; n (an integer keyword) gets no gradient",
        source="special.polygamma({n}, {x})",
    )
    __all__ += ["polygamma"]
else:  # pragma: no cover
    gammaln = digamma = erfinv = polygamma = None


# --- more scipy.special ufuncs (jax.scipy.special and HIPS autograd differentiate them) ------
# Each: forward (scipy's ufunc, which dispatches here on a Tensor), one derivative factor for the
# VJP (g * factor) and the JVP (t * factor), written with recorded functions of x or of the
# output, so second order works. Derivatives: DLMF (5.2.1 gamma/digamma, 7.2 erf, 10.29 Bessel
# I, 5.12 beta); ndtr(x) = (1 + erf(x / sqrt 2)) / 2.
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
_SQRT_2_OVER_PI = float(np.sqrt(2.0 / np.pi))
_INV_SQRT2 = float(1.0 / np.sqrt(2.0))


# i1(x) / x = sum_k (x^2 / 4)^k / (2 k! (k + 1)!) (DLMF 10.25.2): its coefficients in x^2, k < 10
# (the next term is below 1e-20 for |x| < 1)
_I1_OVER_X_SERIES = np.array([0.5 / (float(np.prod(np.arange(1, k + 1))) * float(np.prod(np.arange(1, k + 2))))
                              / 4.0 ** k for k in range(10)])


def _i1_over_x(x):
    """i1(x) / x, recorded when x is a Tensor: for |x| < 1 its Taylor series (a polynomial in
    x^2: 1/2 at 0, and every derivative right at and near 0, where the quotient differentiated
    cancels; a guard at 0 made it a constant there: the third derivative of i1 at 0 was 1/2,
    truly 3/8), else the quotient."""
    xv = np.asarray(_val(x))
    small = np.abs(xv) < 1.0
    p = _polyval(x * x, _I1_OVER_X_SERIES)
    if np.all(small):
        return p
    return np.where(small, p, _ss.i1(x) / np.where(small, 1.0, x))


def _i1e_over_x(x):
    """i1e(x) / x = e^(-|x|) i1(x) / x, recorded when x is a Tensor: for |x| < 1 e^(-|x|) times the series
    of :func:`_i1_over_x`, else scipy's scaled i1e(x) / x (finite to |x| = 1e308: i1(x) itself overflows
    beyond |x| ~ 713, and e^(-|x|) i1(x) / x was inf * 0 = nan there; review26a)."""
    small = np.abs(np.asarray(_val(x))) < 1.0
    if np.all(small):
        return np.exp(-np.abs(x)) * _polyval(x * x, _I1_OVER_X_SERIES)
    xs = np.where(small, x, 0.0)  # (x * x overflowed at |x| = 1e300 in the branch not taken)
    p = np.exp(-np.abs(xs)) * _polyval(xs * xs, _I1_OVER_X_SERIES)
    return np.where(small, p, _ss.i1e(x) / np.where(small, 1.0, x))


_ERFCX_CF_FROM, _ERFCX_CF_TERMS = 2.0, 80  # (80 terms: within 2.2e-16 of mpmath from x = 2 on)


def _derfcx(ans, x):
    """erfcx'(x) = 2 x erfcx(x) - 2/sqrt(pi), whose two terms cancel for a large x (erfcx(x) ~ 1/(x sqrt(pi))): 2.4e-8
    relative at x = 1e4, 0 instead of -1/(x^2 sqrt(pi)) from x ~ 7e7 on (log_ndtr's second derivative at -1e8). From
    x = 2 on, with sqrt(pi) erfcx(x) = 1/(x + T), T = (1/2)/(x + (2/2)/(x + (3/2)/(x + ...))) (Laplace's continued
    fraction, DLMF 7.9.2), it is -2/sqrt(pi) T/(x + T): 80 terms from the bottom, within 2.2e-16 of mpmath (the
    direct form 5.6e-15 at 4, 2.2e-14 at 8; its second derivative 7e-15 at 2.5). Recorded when ``x`` is a Tensor."""
    big = np.asarray(_value(x)) >= _ERFCX_CF_FROM
    if not np.any(big):
        return 2.0 * x * ans - 2.0 / _SQRT_PI
    xs = np.where(big, x, _ERFCX_CF_FROM)
    t = 0.0
    for k in range(_ERFCX_CF_TERMS, 1, -1):
        t = (k / 2.0) / (xs + t)
    t = 0.5 / (xs + t)
    cf = (-2.0 / _SQRT_PI) * t / (xs + t)
    if np.all(big):
        return cf
    return np.where(big, cf, 2.0 * x * ans - 2.0 / _SQRT_PI)


def _dlog_ndtr(ans, x):
    """d log_ndtr(x)/dx = phi(x) / Phi(x), ``ans`` = log_ndtr(x); recorded when ``x`` is a Tensor (its derivative,
    -phi/Phi (x + phi/Phi), is then the second). For x < 0, sqrt(2/pi) / erfcx(-x/sqrt 2) (Phi(x) = exp(-x^2/2)
    erfcx(-x/sqrt 2) / 2, DLMF 7.2.3, 7.18.5: nothing cancels; exp(-x^2/2 - log_ndtr(x)) was 7e-7 off at x = -1e5,
    94% at -1e8, inf at -1e10, as torch's; jax 1.0 there). For x >= 0, exp(-x^2/2 - ans) / sqrt(2 pi): the
    erfcx form squares erfcx(-x/sqrt 2) ~ 2 exp(x^2/2) in its derivative, which overflowed from x ~ 26.6 (review28a:
    the second derivative -0 at x = 30, mpmath -4.42e-195). The one slope of log_ndtr: the ``log_ndtr`` record and
    ``t_logcdf``'s at df = inf (:func:`_dt_logcdf`) both use it."""
    xv = np.asarray(_value(x), np.float64)
    neg = xv < 0.0
    if np.all(neg):
        return _SQRT_2_OVER_PI / _ss.erfcx(x * -_INV_SQRT2)
    xs = np.where(neg, own(0.0), x) if np.any(neg) else x  # (the branch not taken stays finite: no inf * 0)
    with np.errstate(over="ignore"):  # (x > 1.3e154: x * x = inf, the slope exp(-inf) = 0, as it rounds)
        sq = xs * xs
    hi = _INV_SQRT_2PI * np.exp(-0.5 * sq - (np.where(neg, own(np.log(0.5)), ans) if np.any(neg) else ans))
    hi = hi * own(np.exp(-0.5 * _square_rounding(np.where(neg, 0.0, np.minimum(xv, 40.0)))))
    if not np.any(neg):
        return hi
    return np.where(neg, _SQRT_2_OVER_PI / _ss.erfcx(np.where(neg, x, own(-1.0)) * -_INV_SQRT2), hi)


def _square_rounding(x):
    """``x^2 - fl(x * x)``, exactly (Dekker 1971's splitting of x into two 26-bit halves; |x| < 1e150): the
    rounding of x * x, which in exp(-x^2/2) is a relative error of up to x^2 2^-54 (2e-14 at x = 27.3)."""
    c = 134217729.0 * x  # 2^27 + 1
    xh = c - (c - x)
    xl = x - xh
    return ((xh * xh - x * x) + 2.0 * xh * xl) + xl * xl


if _ss is not None:
    ndtr = _elementwise("ndtr", _ss.ndtr, lambda ans, x: _INV_SQRT_2PI * np.exp(-0.5 * (x * x)),
                        "exp(-x^2/2) / sqrt(2 pi) (the normal density)", source="special.ndtr({x})")
    log_ndtr = _elementwise("log_ndtr", _ss.log_ndtr, _dlog_ndtr,
                            "phi(x) / Phi(x) (density / ndtr): x < 0, sqrt(2/pi) / erfcx(-x/sqrt 2) (Phi(x) = "
                            "exp(-x^2/2) erfcx(-x/sqrt 2) / 2, DLMF 7.2.3, 7.18.5: nothing cancels); x >= 0, "
                            "exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi) (erfcx(-x/sqrt 2)^2 overflowed in the second "
                            "derivative from x ~ 26.6)",
                            source="special.log_ndtr({x})")
    ndtri = _elementwise("ndtri", _ss.ndtri, lambda ans, x: np.sqrt(2.0 * np.pi) * np.exp(0.5 * (ans * ans)),
                         "sqrt(2 pi) exp(ndtri(x)^2 / 2) (the inverse function rule)",
                         kinks="x = 0, 1: inf; outside [0, 1]: nan", source="special.ndtri({x})")
    gamma = _elementwise("gamma", _ss.gamma, lambda ans, x: ans * _ss.digamma(x), "gamma(x) digamma(x)",
                         kinks="poles at 0, -1, -2, ...", source="special.gamma({x})")
    loggamma = _elementwise("loggamma", _ss.loggamma, lambda ans, x: _ss.digamma(x),
                            "digamma(x) (real x > 0; scipy gives nan for real x < 0)",
                            kinks="x <= 0: nan (as scipy)", source="special.loggamma({x})")
    i0 = _elementwise("i0", _ss.i0, lambda ans, x: _ss.i1(x), "i1(x) (DLMF 10.29.3)",
                      source="special.i0({x})")
    i1 = _elementwise("i1", _ss.i1, lambda ans, x: _ss.i0(x) - _i1_over_x(x),
                      "i0(x) - i1(x) / x (DLMF 10.29.2; i1(x) / x a Taylor series for |x| < 1)", source="special.i1({x})")
    entr = _elementwise("entr", _ss.entr, lambda ans, x: -np.log(x) - 1.0, "-log(x) - 1",
                        kinks="x = 0: +inf; x < 0: nan (entr is -inf there)", source="special.entr({x})")
    log_expit = _elementwise("log_expit", _ss.log_expit, lambda ans, x: _ss.expit(-x),
                             "expit(-x) = 1 - sigmoid(x)", source="special.log_expit({x})")
    erfcx = _elementwise("erfcx", _ss.erfcx, _derfcx,
                         "2 x erfcx(x) - 2 / sqrt(pi) (from x = 2 on -2/sqrt(pi) T / (x + T), T the tail of "
                         "Laplace's continued fraction sqrt(pi) erfcx(x) = 1 / (x + T), DLMF 7.9.2: no cancellation)",
                         source="special.erfcx({x})")
    betaln = _binary(
        "betaln", _ss.betaln,
        lambda ans, a, b: _ss.digamma(a) - _ss.digamma(a + b),
        lambda ans, a, b: _ss.digamma(b) - _ss.digamma(a + b),
        "d/da = digamma(a) - digamma(a + b), d/db = digamma(b) - digamma(a + b)",
        "da = g (digamma(a) - digamma(a + b)), db = g (digamma(b) - digamma(a + b))",
        kinks="poles where a, b or a + b is 0, -1, -2, ...", source="special.betaln({0}, {1})")
    xlog1py = _binary(
        "xlog1py", _ss.xlog1py, lambda ans, a, b: np.log1p(b),
        lambda ans, a, b: _a_over(a, b, -1.0),
        "d (a log1p b)/da = log1p(b), d/db = a / (1 + b)",
        "da = g log1p(b), db = g a / (1 + b) (0 at a = 0, b = -1)",
        kinks="a = 0: d/db = a / (1 + b) = 0, its derivative in a 1 / (1 + b) (as jax); a = 0, b = -1: "
              "d/db and its derivatives 0 (xlog1py(0, b) = 0 for every b; jax: nan); b <= -1: d/da -inf, nan",
        source="special.xlog1py({0}, {1})")
    __all__ += ["ndtr", "log_ndtr", "ndtri", "gamma", "loggamma", "i0", "i1", "entr", "log_expit", "erfcx",
                "betaln", "xlog1py"]



def _drgamma(ans, x):
    # d/dx 1/gamma(x) = -rgamma(x) digamma(x) (DLMF 5.2.2), 0 times a pole at x = -n (n = 0, 1, ...), and near one
    # (|x + n| < 0.1) a product of a tiny and a huge factor whose derivative cancels (review25a: the second
    # derivative at -1 + 1e-9 was 205.48 for mpmath's 0.8456): there the reflection 1/gamma(x) = sin(pi x)
    # gamma(1-x) / pi (DLMF 5.5.3), smooth for x < 1, differentiated, with x = -n + d and sin(pi x) = (-1)^n
    # sin(pi d) (d exact: x + n loses nothing so near -n): (-1)^n (cos(pi d) gamma(1-x) - sin(pi d) gamma(1-x)
    # digamma(1-x) / pi), = (-1)^n n! at x = -n; written with recorded primitives, so higher orders are right
    # there too (rgamma''(0) = 2 euler_gamma)
    xv = np.asarray(_value(x))
    n = np.rint(xv)
    near = (n <= 0) & (np.abs(xv - n) < 0.1) & (n >= -170)  # (past 170, n! overflows)
    big = (xv < -170) & (xv == np.floor(xv))  # a zero where n! overflows: the slope is (-1)^n inf
    if not (near.any() or big.any()):
        return -ans * _ss.digamma(x)
    direct = -ans * _ss.digamma(np.where(near | big, 0.5, x))
    z = np.where(near, x, own(0.0))
    d = z - own(np.where(near, n, 0.0))
    sign = own(np.where(np.mod(n, 2) == 0, 1.0, -1.0))
    gz = _ss.gamma(own(1.0) - z)
    pi = own(np.pi)
    refl = sign * (np.cos(pi * d) * gz - np.sin(pi * d) * gz * _ss.digamma(own(1.0) - z) / pi)
    out = np.where(near, refl, direct)
    if big.any():
        out = np.where(big, own(np.where(np.mod(xv, 2) == 0, np.inf, -np.inf)), out)
    return out


# --- scipy.special: incomplete gamma, Bessel J/Y/I of any order, erfcinv, rgamma, gammasgn ----------
# (HIPS autograd's autograd/scipy/special.py differentiates the same ones.) Each factor is written
# with scipy's ufuncs, which dispatch to these records on a Tensor, so every order is recorded.
_SQRT_PI = float(np.sqrt(np.pi))


def _refuse_param(fn, p, pname, formula, why):
    """A gradient for the parameter ``p`` of ``fn(p, x)`` (recorded in x only) is refused by name."""
    if isinstance(p, Tensor) and _observe._carrier(p) is not None:
        raise TypeError(
            f"autoprop: scipy.special.{fn}({pname}, x) is recorded in x only ({formula}); its "
            f"derivative in {pname} ({why}) is not, and {pname} carries gradient here (a watched "
            f"Tensor). Pass {pname} as a number or numpy array ({pname}.numpy(), or "
            f"ap.stop_gradient({pname})).")


def _in_x(name, ufunc, factor, formula, pname, why, kinks):
    """The record of scipy's ``ufunc(p, x)``, differentiable in ``x``: VJP ``g * factor(ans, p, x)``
    summed to x's shape, JVP ``t * factor``; scipy's ufunc dispatches here through an adaptor that
    refuses a ``p`` carrying gradient (:func:`_refuse_param`)."""
    prim = defprim(
        name, ufunc, None, lambda g, ans, p, x: unbroadcast(times(g, factor(ans, p, x)), _shape(x)),
        jvp=(None, lambda t, ans, p, x: times(t, factor(ans, p, x))),
        jacobian=f"{formula}; {pname}: refused when it carries gradient", vjp=f"dx = g * ({formula.split(' = ', 1)[-1]})",
        shapes=BCAST, kinks=kinks, source=f"special.{name}({{0}}, {{1}})")

    def np_call(p, x, out=None, **kw):
        _check_kw(f"scipy.special.{name}", dict(kw, out=out))
        _refuse_param(name, p, pname, formula, why)
        return prim(_value(p), x)
    defnumpy(f"scipy.special.{name}", (ufunc,), np_call)
    return prim


def _dgammainc(ans, a, x):
    # x^(a-1) e^(-x) / gamma(a): in logs where x > 0 (x^(a-1) alone overflows for a large a); at x = 0 the power
    # itself, whose derivative there is (a-1) x^(a-2) e^(-x) / gamma(a) - ... (P'' at 0 is 1 for a = 2, autograd's),
    # which the log form's exp(log 0) = 0 times 1/x turned into 0 (review24a)
    at0 = (np.asarray(_value(x)) == 0) & (np.asarray(_value(a)) >= 1)  # (a < 1: the log form's -inf is right)
    if not np.any(at0):
        return np.exp(_ss.xlogy(a - 1.0, x) - x - _ss.gammaln(a))
    xs = np.where(at0, 1.0, x)
    return np.where(at0, np.power(x, a - 1.0) * np.exp(-x - _ss.gammaln(a)),
                    np.exp(_ss.xlogy(a - 1.0, xs) - xs - _ss.gammaln(a)))


_T_BIG = 100.0  # df at and above this: t_log_norm's asymptotic series
_T_MID = 1.0  # df in [1, 100): the series at df + 2 _T_SHIFT, brought down by the recurrence
_T_SHIFT = 50  # (1 + 100 = 101: in the series' range)


def _t_series(df):
    """t_log_norm by its asymptotic series in ``1/a``, ``a = df/2``: ``-log(2 pi)/2 + sum_k c_k / a^(2k-1)``, ``c_k =
    B_2k (2^(1-2k) - 2) / (2k (2k-1))`` (-1/8, 1/192, -1/640, 17/14336, -31/18432, 691/180224, -5461/425984: the
    log of DLMF 5.11.13's ratio, from log Gamma's Stirling series at a + 1/2 and a, B_2k(1/2) = (2^(1-2k) - 1) B_2k).
    Seven terms: the eighth is 2e-27 at df = 100, so the first and second derivatives keep 1e-16 (four terms left
    3e-15 and 1.5e-14 of them there)."""
    ia = 2.0 / df
    return -0.5 * np.log(2.0 * np.pi) + ia * _polyval(ia * ia, _T_SERIES)


_T_SERIES = np.array([-1.0 / 8.0, 1.0 / 192.0, -1.0 / 640.0, 17.0 / 14336.0, -31.0 / 18432.0, 691.0 / 180224.0,
                      -5461.0 / 425984.0])


def t_log_norm(df):
    """Student's t's log normalising constant, ``log(Gamma((df + 1)/2) / (Gamma(df/2) sqrt(df pi)))``, recorded.

    Parameters
    ----------
    df : Tensor, ndarray or float
        Degrees of freedom, positive (``inf`` allowed: the normal's ``-log(2 pi)/2``).

    Returns
    -------
    Tensor or ndarray
        ``df``'s shape and dtype. Below df = 1 the difference of ``gammaln``'s; from 100 on the series
        ``-log(2 pi)/2 - 1/(8a) + 1/(192 a^3) - 1/(640 a^5) + ...``, ``a = df/2`` (:func:`_t_series`; the log of DLMF
        5.11.13's ``Gamma(a + 1/2)/Gamma(a) = sqrt(a) (1 - 1/(8a) + 1/(128 a^2) + ...)``), where the gammaln's cancel (review24a: at df = 1e10 the t log-density was off
        by 6e-7, at 1e15 by 3; scipy takes ``log(poch(df/2, 1/2))``). Between, the series at df + 100 and the
        recurrence Gamma(a + 3/2)/Gamma(a + 1) = Gamma(a + 1/2)/Gamma(a) (a + 1/2)/a (DLMF 5.5.1): each step adds
        ``log1p(-1/(df + 2k + 1)^2) / 2`` (the step's 1/2 log((a+1)/a) - log((a+1/2)/a), written without
        cancellation, also in its derivative ``1/(2b(b+1)(2b+1))``, b = a + k): the gammaln difference's derivative
        in df, digamma's of size 1/df cancelling to O(1/df^2), was off by up to 6.7e-12 relative just below 100
        (session 26's note), 4e-13 at 20; now within 3e-15 of mpmath from df = 2 to 1e3.
    """
    v = np.asarray(_value(df))
    big, mid = v >= _T_BIG, (v >= _T_MID) & (v < _T_BIG)
    if not (np.any(big) or np.any(mid)):
        return _ss.gammaln((df + 1.0) / 2.0) - _ss.gammaln(df / 2.0) - 0.5 * np.log(df * np.pi)
    small = ~(big | mid)
    out = _t_series(np.where(big, df, _T_BIG))
    if np.any(mid):
        dm = np.where(mid, df, _T_MID)
        steps = np.sum(np.log1p(-1.0 / np.square(dm[..., None] + own(2.0 * np.arange(_T_SHIFT) + 1.0))), axis=-1)
        out = np.where(mid, _t_series(dm + 2.0 * _T_SHIFT) + 0.5 * steps, out)
    if np.any(small):
        ds = np.where(small, df, 1.0)
        out = np.where(small, _ss.gammaln((ds + 1.0) / 2.0) - _ss.gammaln(ds / 2.0) - 0.5 * np.log(ds * np.pi), out)
    return out


def _dstdtr(ans, df, x):  # the t density at x (df = inf: the normal's)
    inf = np.isposinf(df)
    safe = np.where(inf, 1.0, df)
    return np.exp(t_log_norm(df) + np.where(inf, -0.5 * x * x, -(safe + 1.0) / 2.0 * np.log1p(x * x / safe)))


def _log1p_sq(x, df):
    """``log(1 + x^2 / df)``, also where ``x^2`` overflows (``|x| > 1.3e154``: it was inf, so t.logcdf was -inf at
    x = -1e240, df = 3, for mpmath's -1657.76; review25a): ``2 log|x| - log(df) + log1p(df / x / x)`` there, no
    square formed (squaring ``x / 1e150`` overflowed again past ``|x| = 1.34e304``: -inf with a NaN slope at
    x = -2e304, for mpmath's -2101.9393229132049, slope 1.5e-304; review26a). Recorded when ``x`` or ``df`` is a
    Tensor; the unused branch sees a safe x (the double-where rule)."""
    big = np.abs(np.asarray(_value(x))) > 1e150
    if not big.any():
        return np.log1p(x * x / df)
    xs = np.where(big, own(1.0), x)
    xb = np.where(big, x, own(1e150))  # (|xb| > 1e150: df / xb / xb at most 1e-300 df, no overflow)
    far = own(2.0) * np.log(np.abs(xb)) - np.log(df) + np.log1p(df / xb / xb)
    return np.where(big, far, np.log1p(xs * xs / df))


def _log_betainc_tail(df, x):
    """``log stdtr(df, x)`` for ``x < 0`` far in the tail, where stdtr underflows: ``stdtr = I_w(a, 1/2) / 2``,
    ``w = df / (df + x^2)``, ``a = df / 2`` (DLMF 8.17.2 through x -> w), with ``log I_w(a, b) = a log w + b log(1 - w)
    - log a - betaln(a, b) + log cf``, cf the continued fraction of DLMF 8.17.22 (Numerical Recipes' betacf, modified
    Lentz), which converges in a few terms there (w < (a + 1)/(a + b + 2)); log w and log(1 - w) from log1p (w rounds
    near 1 for a large df). Against mpmath at 50 digits: relative 1e-16 at (x, df) = (-100, 1e4), 3e-13 at (-40,
    1e6)."""
    a, b = df / 2.0, 0.5
    log_w, log_1mw, h = _tail_cf(df, x)
    # -log(a) - betaln(a, 1/2) = t_log_norm(df) + log 2 - log(df)/2 (Gamma(a + 1/2)/Gamma(a) is t_log_norm's ratio):
    # its series from df = 100 on, where scipy's betaln(a, 1/2) cancels (review25a: 2e-10 at df = 1e6)
    return a * log_w + b * log_1mw + t_log_norm(df) - 0.5 * np.log(df) + np.log(h)


def _tail_cf(df, x):
    """``(log w, log(1 - w), cf)`` of :func:`_log_betainc_tail`: the continued fraction by modified Lentz (recorded
    when ``x`` is a Tensor). With them the density over the distribution in the tail is f/F = df / (|x| cf): the
    logs of f and F, -(df + 1)/2 log(1 + x^2/df) and -df/2 of it plus O(1) terms, cancel in closed form."""
    a, b = df / 2.0, 0.5
    with np.errstate(over="ignore"):  # (|x| > 1.3e154: r = inf, w = 0, log w from _log1p_sq)
        r = x * x
    w = df / (df + r)
    log_w, log_1mw = -_log1p_sq(x, df), -np.log1p(df / r)
    tiny = 1e-300
    c, d = own(np.ones(np.shape(_value(w)))), 1.0 - (a + b) * w / (a + 1.0)
    d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
    h = d
    for m in range(1, 2001):
        for aa in (m * (b - m) * w / ((a - 1.0 + 2 * m) * (a + 2 * m)),
                   -(a + m) * (a + b + m) * w / ((a + 2 * m) * (a + 1.0 + 2 * m))):
            d = 1.0 + aa * d
            d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            h = h * d * c
        if np.all(np.abs(_value(d * c) - 1.0) < 1e-16):
            break
    return log_w, log_1mw, h


def _t_logcdf_fwd(df, x):
    """``log stdtr(df, x)``: scipy's stdtr's log for x <= 0, ``log1p(-stdtr(df, -x))`` for x > 0 (log(stdtr) rounds
    near 1: review28a, -6.661e-16 at x = 8, df = inf, mpmath -6.221e-16; 0 at x = 9, mpmath -1.13e-19), log_ndtr at
    df = inf, and where stdtr underflows (below e^-700, x < 0) the tail's continued fraction
    (:func:`_log_betainc_tail`), where scipy's t.logcdf is -inf."""
    df, x = np.broadcast_arrays(np.asarray(df, dtype=np.float64), np.asarray(x, dtype=np.float64))
    with np.errstate(divide="ignore"):
        out = np.where(x > 0, np.log1p(-_ss.stdtr(df, -x)), np.log(_ss.stdtr(df, x)))
    inf = np.isposinf(df)
    if inf.any():  # (the normal: scipy's log_ndtr, accurate in both tails)
        out[inf] = _ss.log_ndtr(x[inf])
    fin = ~(out > -700.0) & (x < 0) & np.isfinite(x) & (df > 0) & ~inf  # (the lower tail)
    if fin.any():
        big = fin & (df >= 1e5) & (np.abs(x) <= 1e150)
        if big.any():
            out[big] = _log_tail_quadrature(df[big], x[big])
        fin &= ~big
        if fin.any():
            out[fin] = _log_betainc_tail(df[fin], x[fin])
    return out[()] if out.ndim == 0 else out


_LAGUERRE = np.polynomial.laguerre.laggauss(20)


def _log_tail_quadrature(df, x):
    """``log stdtr(df, x)`` for ``x < 0`` in the tail and ``df >= 1e5``, where the continued fraction converges in
    O(sqrt(df)) terms (review25a: 8.2e-7 relative at df = 1e16, x = -40, the slope 6.6e-4): the Mills-ratio form
    ``F(x) = f(x) int_0^inf g(s) ds`` (:func:`_tail_quadrature`). Against mpmath's betainc at 60 digits: below
    3.2e-16 relative for df in 1e5..1e16, x from -37 to -1e12."""
    log_f, k, s = _tail_quadrature(df, x)
    return log_f - np.log(k) + np.log(s)


def _tail_quadrature(df, x):
    """``(log f(x), k, S)`` with ``F(x) = f(x) S / k`` for ``x < 0``: ``g(s) = f(x - s) / f(x) = (1 + (s^2 + 2|x| s) /
    (df + x^2))^(-(df+1)/2)`` integrated by 20-node Gauss-Laguerre quadrature (DLMF 3.5.27) after ``s = v / k``, ``k =
    (df + 1) |x| / (df + x^2)`` the decay rate of g at 0, so the integrand ``g(v / k) e^v`` is nearly flat (curvature
    O(1/x^2 + 1/df)); ``S = sum w g(v / k) e^v``. The density over the distribution, f/F = k / S, has no log of
    either (t_logcdf's derivative in the tail). Recorded when ``x`` is a Tensor."""
    v, w = _LAGUERRE
    ax, r = -x[..., None], (df + x * x)[..., None]
    k = (df[..., None] + 1.0) * ax / r
    s = v / k
    log_g = -(df[..., None] + 1.0) / 2.0 * np.log1p((s * s + 2.0 * ax * s) / r)
    log_f = t_log_norm(df) - (df + 1.0) / 2.0 * _log1p_sq(x, df)
    return log_f, k[..., 0], np.sum(w * np.exp(log_g + v), axis=-1)


def _dt_logcdf(ans, df, x):
    """d log stdtr(df, x)/dx = f(x) / F(x): exp(log f - log F) (finite where both underflow), except where that
    difference of two large logs rounds (the ratio was 6.4e-7 off at df = inf, x = -1e5, 78% at -1e8; 3.3e-7 at df =
    1e12, x = -1e5; 2.2e-12 at df = 1e4, x = -1e3): at df = inf the normal's phi / Phi
    (log_ndtr's, :func:`_dlog_ndtr`), and in the tail, as the value takes it, the quadrature's k / S (:func:`_tail_quadrature`) or the
    continued fraction's df / (|x| cf) (:func:`_tail_cf`)."""
    inf = np.isposinf(df)
    safe = np.where(inf, 1.0, df)
    with np.errstate(over="ignore"):  # (-x^2/2 of the normal's branch where x^2 overflows and df is finite)
        out = np.exp(t_log_norm(df) + np.where(inf, -0.5 * x * x, -(safe + 1.0) / 2.0 * _log1p_sq(x, safe)) - ans)
    xv, dv = np.broadcast_arrays(np.asarray(_value(x), np.float64), np.asarray(df, np.float64))
    quad = (np.asarray(_value(ans)) <= -700.0) & (xv < 0) & (dv >= 1e5) & np.isfinite(dv) & (np.abs(xv) <= 1e150)
    if np.any(quad):
        xs = np.where(quad, x, own(-40.0))
        _, k, s = _tail_quadrature(np.where(quad, dv, 1e5), xs * own(np.ones(xv.shape)))
        out = np.where(quad, k / s, out)
    frac = (np.asarray(_value(ans)) <= -700.0) & (xv < 0) & (dv > 0) & (dv < 1e5) & np.isfinite(xv)
    if np.any(frac):
        dfs = np.where(frac, dv, 3.0)
        xs = np.where(frac, x, own(-40.0)) * own(np.ones(xv.shape))
        out = np.where(frac, own(dfs) / (np.abs(xs) * _tail_cf(dfs, xs)[2]), out)
    if np.any(inf):
        out = np.where(inf, _dlog_ndtr(np.where(inf, ans, own(np.log(0.5))), np.where(inf, x, own(0.0))), out)
    return out


if _ss is not None:
    _WHY_V = "a series in the order; jax and torch do not differentiate it either"
    jv = _in_x("jv", _ss.jv, lambda ans, v, x: 0.5 * (_ss.jv(v - 1.0, x) - _ss.jv(v + 1.0, x)),
               "d J_v(x)/dx = (J_(v-1)(x) - J_(v+1)(x)) / 2 (DLMF 10.6.1)", "v", _WHY_V,
               kinks="x < 0 with a non-integer v: nan (as scipy)")
    yv = _in_x("yv", _ss.yv, lambda ans, v, x: 0.5 * (_ss.yv(v - 1.0, x) - _ss.yv(v + 1.0, x)),
               "d Y_v(x)/dx = (Y_(v-1)(x) - Y_(v+1)(x)) / 2 (DLMF 10.6.1)", "v", _WHY_V,
               kinks="x = 0: a pole; x < 0: nan (as scipy)")
    yn = _in_x("yn", _ss.yn, lambda ans, n, x: 0.5 * (_ss.yn(n - 1, x) - _ss.yn(n + 1, x)),
               "d Y_n(x)/dx = (Y_(n-1)(x) - Y_(n+1)(x)) / 2 (DLMF 10.6.1)", "n",
               "an integer order: no derivative", kinks="x = 0: a pole; x < 0: nan (as scipy)")
    iv = _in_x("iv", _ss.iv, lambda ans, v, x: 0.5 * (_ss.iv(v - 1.0, x) + _ss.iv(v + 1.0, x)),
               "d I_v(x)/dx = (I_(v-1)(x) + I_(v+1)(x)) / 2 (DLMF 10.29.1)", "v", _WHY_V,
               kinks="x < 0 with a non-integer v: nan (as scipy)")
    # ive = iv e^(-|x|): d/dx = e^(-|x|) (I_(v-1) + I_(v+1)) / 2 - sign(x) ive (no division by x)
    ive = _in_x("ive", _ss.ive,
                lambda ans, v, x: 0.5 * (_ss.ive(v - 1.0, x) + _ss.ive(v + 1.0, x)) - np.sign(x) * ans,
                "d ive(v, x)/dx = (ive(v-1, x) + ive(v+1, x)) / 2 - sign(x) ive(v, x) (DLMF 10.29.1 "
                "times e^(-|x|))", "v", _WHY_V, kinks="x = 0: |x| has a kink (sign(0) = 0 taken)")
    j0 = _elementwise("j0", _ss.j0, lambda ans, x: -_ss.j1(x), "-j1(x) (DLMF 10.6.2)", source="special.j0({x})")
    y0 = _elementwise("y0", _ss.y0, lambda ans, x: -_ss.y1(x), "-y1(x) (DLMF 10.6.2)",
                      kinks="x = 0: a pole; x < 0: nan (as scipy)", source="special.y0({x})")
    j1 = _elementwise("j1", _ss.j1, lambda ans, x: 0.5 * (_ss.j0(x) - _ss.jv(2.0, x)),
                      "(j0(x) - jv(2, x)) / 2 (DLMF 10.6.1)", source="special.j1({x})")
    y1 = _elementwise("y1", _ss.y1, lambda ans, x: 0.5 * (_ss.y0(x) - _ss.yv(2.0, x)),
                      "(y0(x) - yv(2, x)) / 2 (DLMF 10.6.1)", kinks="x = 0: a pole; x < 0: nan (as scipy)",
                      source="special.y1({x})")
    erfcinv = _elementwise("erfcinv", _ss.erfcinv, lambda ans, x: (-_SQRT_PI / 2.0) * np.exp(ans * ans),
                           "-sqrt(pi)/2 exp(erfcinv(x)^2) (the inverse function rule: erfc' = "
                           "-2/sqrt(pi) exp(-y^2))", kinks="x = 0, 2: -inf; outside [0, 2]: nan",
                           source="special.erfcinv({x})")
    stdtr = _in_x("stdtr", _ss.stdtr, _dstdtr,
                  "d stdtr(df, x)/dx = Gamma((df+1)/2) / (Gamma(df/2) sqrt(df pi)) (1 + x^2/df)^(-(df+1)/2), the t "
                  "density (DLMF 8.17.2 through x -> df/(df + x^2))", "df",
                  "a hypergeometric series, as betainc's a; jax and TensorFlow do not differentiate it either",
                  kinks="none in x (df = inf: the normal's ndtr)")
    t_logcdf = defprim(
        "t_logcdf", _t_logcdf_fwd, None,
        lambda g, ans, p, x: unbroadcast(times(g, _dt_logcdf(ans, p, x)), _shape(x)),
        jvp=(None, lambda t, ans, p, x: times(t, _dt_logcdf(ans, p, x))),
        jacobian="d log stdtr(df, x)/dx = t pdf(x) / stdtr(df, x) = exp(log pdf - log cdf); df: not differentiated "
                 "(refused by autoprop.scipy.stats.t.logcdf when it carries gradient)",
        vjp="dx = g * exp(log t_pdf(df, x) - ans)", shapes=BCAST,
        kinks="none in x; the value far in the lower tail from a continued fraction (DLMF 8.17.22), finite where "
              "stdtr underflows (scipy's log(stdtr) is -inf there)",
        source="{out} = np.log(special.stdtr({0}, {1}))")
    rgamma = _elementwise("rgamma", _ss.rgamma, _drgamma,
                          "-rgamma(x) digamma(x) (1/gamma differentiated, DLMF 5.2.2); at x = 0, -1, -2, ... "
                          "(0 times digamma's pole) the reflection 1/gamma(x) = sin(pi x) gamma(1-x) / pi "
                          "(DLMF 5.5.3) differentiated: (-1)^n n! at x = -n",
                          kinks="none (rgamma is entire): at and within 0.1 of the zeros x = 0, -1, ..., -170 the "
                                "reflection formula's derivative ((-1)^n n! at -n), +-inf at the zeros past -170",
                          source="special.rgamma({x})")
    gammasgn = defnondiff("gammasgn", _ss.gammasgn, "gammasgn is piecewise constant (+1 or -1)",
                          numpy=(_ss.gammasgn,))
    __all__ += ["jv", "yv", "yn", "iv", "ive", "j0", "y0", "j1", "y1", "erfcinv",
                "rgamma", "gammasgn", "stdtr", "t_logcdf"]
else:  # pragma: no cover
    jv = yv = yn = iv = ive = j0 = y0 = j1 = y1 = erfcinv = rgamma = gammasgn = stdtr = None
    t_logcdf = None
