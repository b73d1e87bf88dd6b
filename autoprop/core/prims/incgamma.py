"""The regularised incomplete gamma functions ``P(a, x)`` (``scipy.special.gammainc``) and
``Q(a, x) = 1 - P`` (``gammaincc``), differentiable in both arguments.

In ``x``: ``dP/dx = x^(a-1) e^(-x) / Gamma(a)`` (DLMF 8.8.13; ``special._dgammainc``). In ``a`` there
is no closed form: ``dP/da`` is the ``a``-derivative of the two expansions scipy, Numerical Recipes
and Cephes evaluate ``P`` with, carried term by term beside them (forward-mode differentiation of
the algorithm, as TensorFlow's ``igamma_grad_a`` and jax's ``random_gamma_grad`` do; K. E. Moore,
"Derivative of the incomplete gamma integral", Applied Statistics AS 187, 1982, takes the same
route):

* ``x < a + 1``: the series ``P = x^a e^(-x) / Gamma(a + 1) * sum_n t_n``, ``t_0 = 1``,
  ``t_n = t_(n-1) x / (a + n)`` (DLMF 8.7.1), and ``dt_n/da = (dt_(n-1)/da - t_(n-1)/(a + n)) x / (a + n)``;
* otherwise Legendre's continued fraction for ``Q = x^a e^(-x) / Gamma(a) * CF`` (DLMF 8.9.2),
  evaluated by the modified Lentz method (Numerical Recipes, ``gcf``), each step's ``a``-derivative
  (``b_n = x + 2n + 1 - a``, ``a_n = -n (n - a)``: ``db_n/da = -1``, ``da_n/da = n``) beside it.

* ``a >= 1e4`` (where both need O(sqrt(a)) terms near ``x = a``, 1e5 at a = 1e10, and their prefactor
  ``x^a e^(-x) / Gamma(a)`` loses ``eps a log a`` in its exponent: 6.8e-10 relative at a = 1e6, 2.5e-7
  at 1e8, as jax's): Gauss-Legendre quadrature of ``dP/da = int_0^x (log t - psi(a)) f(t) dt``
  (``f`` P's integrand, DLMF 8.2.1), in ``z = (t - a)/sqrt(a)`` without cancellation (``_quadrature_da``).

Each element is summed until its own terms are below eps: one that has not converged in 100,000
terms is NaN alone (none does: a < 1e4 needs at most ~3,000).

Against ``jax.grad(jax.scipy.special.gammainc, 0)`` at 24 points from ``a = 1e-3`` to ``1e4`` the
relative difference is below 2e-11 (below 5e-14 for ``a <= 100``), and against central
differences of scipy's ``gammainc`` below 2e-7 (the differences' own error). For ``a`` from 1e4 to
1e16 and ``x = a + z sqrt(a)``, ``|z| <= 35``, against mpmath's quadrature of the same integrals at 50
digits: dP/da within 1.1e-11 relative (4e-16 at ``x = a``; jax.grad at a = x = 1e10 is 7e-6 off),
d2P/da2 within 1.2e-11 except near its zero close to ``x = a``, where the error is ~1e-15 / a absolute
(the integrand's positive and negative parts cancel there).

The ``a``-derivatives are records, ``gammainc_da(a, x)`` and ``gammainc_daa(a, x)`` (the second, the
same expansions carried to second order; against mpmath at 40 digits below 3e-14 relative at the
points above, 1e-8 where it is 1e-9 in absolute value), so an outer tape sees them: their
derivatives in ``x`` are ``dP/dx (log x - digamma(a))`` and ``dP/dx ((log x - digamma(a))^2 -
trigamma(a))`` (DLMF 8.8.13 differentiated in ``a``), recorded; the third derivative in ``a`` is
refused by name (jax differentiates once in ``a``: ``igamma_grad_a`` has no derivative).
"""

from __future__ import annotations

import numpy as np
import scipy.special as _ss

from ..registry import defprim
from ..tensor import Tensor
from ._common import BCAST, _value, times, unbroadcast
from .special import _dgammainc, _sp, log1pmx_over_u2_series

__all__ = ["gammainc", "gammaincc", "gammainc_da", "gammainc_daa"]

_TINY = 1e-300  # Lentz's guard against a zero denominator
_EPS = 1e-16
_MAXITER = 100000  # the series and the fraction need O(sqrt(a)) terms near x = a: 1e4 at a ~ 1e7


def _series_da(a, x):
    """(dP/da, d2P/da2) by the series (x < a + 1), each element until its own terms are below eps (NaN
    for an element that did not converge in ``_MAXITER`` terms: that element only). With
    ``q = 1/(a + n)`` (``q' = -q^2``, ``q'' = 2 q^3``): ``t_n = x q t_(n-1)``,
    ``t_n' = x q (t_(n-1)' - q t_(n-1))``, ``t_n'' = x q (t_(n-1)'' - 2 q t_(n-1)' + 2 q^2 t_(n-1))``."""
    sums = np.full((3,) + a.shape, np.nan)
    act = np.arange(a.size)  # the elements still summing
    aa, xx = a, x
    t, u, v = np.ones_like(a), np.zeros_like(a), np.zeros_like(a)
    s, ds, dds = t.copy(), u.copy(), v.copy()
    for n in range(1, _MAXITER + 1):
        q = 1.0 / (aa + n)
        r = xx * q
        t, u, v = t * r, (u - q * t) * r, (v - 2.0 * q * u + 2.0 * q * q * t) * r
        s, ds, dds = s + t, ds + u, dds + v
        done = ((np.abs(t) <= _EPS * np.abs(s)) & (np.abs(u) <= _EPS * np.abs(ds) + _TINY)
                & (np.abs(v) <= _EPS * np.abs(dds) + _TINY))
        if done.any():
            sums[:, act[done]] = s[done], ds[done], dds[done]
            keep = ~done
            act, aa, xx, t, u, v, s, ds, dds = (w[keep] for w in (act, aa, xx, t, u, v, s, ds, dds))
            if act.size == 0:
                break
    s, ds, dds = sums
    pre = np.exp(a * np.log(x) - x - _ss.gammaln(a + 1.0))  # x^a e^-x / Gamma(a + 1), and its
    lg = np.log(x) - _ss.digamma(a + 1.0)  # a-derivatives pre * lg, pre * (lg^2 - trigamma)
    return pre * (s * lg + ds), pre * (s * (lg * lg - _ss.polygamma(1, a + 1.0)) + 2.0 * lg * ds + dds)


def _fraction_da(a, x):
    """(dQ/da, d2Q/da2) by the continued fraction (x >= a + 1), each element until its own step is within
    eps of 1 (NaN for an element that did not converge: that element only): every quantity of the modified
    Lentz method with its first and second a-derivative (``b_n`` and ``a_n`` are linear in ``a``: their
    second derivatives are 0)."""
    out = np.full((3,) + a.shape, np.nan)
    act, aa = np.arange(a.size), a
    b, db = x + 1.0 - a, -1.0
    c, dc, ddc = np.full_like(a, 1.0 / _TINY), np.zeros_like(a), np.zeros_like(a)
    d = 1.0 / b
    dd, ddd = -db * d * d, 2.0 * db * db * d * d * d
    h, dh, ddh = d.copy(), dd.copy(), ddd.copy()
    for n in range(1, _MAXITER + 1):
        an, dan = -n * (n - aa), float(n)
        b = b + 2.0
        den = b + an * d  # d <- 1 / (b + a_n d)
        dden, ddden = db + dan * d + an * dd, 2.0 * dan * dd + an * ddd
        d = 1.0 / np.where(np.abs(den) < _TINY, _TINY, den)
        dd, ddd = -dden * d * d, -ddden * d * d + 2.0 * dden * dden * d * d * d
        w = 1.0 / c  # c <- b + a_n / c
        dw, ddw = -dc * w * w, -ddc * w * w + 2.0 * dc * dc * w * w * w
        cn = b + an * w
        dc, ddc = db + dan * w + an * dw, 2.0 * dan * dw + an * ddw
        c = np.where(np.abs(cn) < _TINY, _TINY, cn)
        delta, ddelta, dddelta = c * d, dc * d + c * dd, ddc * d + 2.0 * dc * dd + c * ddd
        h, dh, ddh = h * delta, dh * delta + h * ddelta, ddh * delta + 2.0 * dh * ddelta + h * dddelta
        done = ((np.abs(delta - 1.0) <= _EPS) & (np.abs(ddelta * h) <= _EPS * np.abs(dh) + _TINY)
                & (np.abs(dddelta * h) <= _EPS * np.abs(ddh) + _TINY))
        if done.any():
            out[:, act[done]] = h[done], dh[done], ddh[done]
            keep = ~done
            act, aa, b, c, dc, ddc, d, dd, ddd, h, dh, ddh = (
                w[keep] for w in (act, aa, b, c, dc, ddc, d, dd, ddd, h, dh, ddh))
            if act.size == 0:
                break
    h, dh, ddh = out
    pre = np.exp(a * np.log(x) - x - _ss.gammaln(a))  # x^a e^-x / Gamma(a)
    lg = np.log(x) - _ss.digamma(a)
    return pre * (h * lg + dh), pre * (h * (lg * lg - _ss.polygamma(1, a)) + 2.0 * lg * dh + ddh)


_A_LARGE = 1e4  # from here on the a-derivatives are a quadrature (the expansions need O(sqrt(a)) terms)
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(16)
_PANELS = 24


def _log1pmx_over_u2(u):
    """(log1p(u) - u) / u^2, without the cancellation of the difference for small u (-1/2 at u = 0)."""
    small = np.abs(u) < 0.1
    ub = np.where(small, 1.0, u)
    return np.where(small, log1pmx_over_u2_series(u), (np.log1p(ub) - ub) / (ub * ub))


def _quadrature_da(a, x):
    """(dP/da, d2P/da2) for a large a (``a >= _A_LARGE``) by Gauss-Legendre quadrature of
    ``dP/da = int_0^x (log t - psi(a)) f(t) dt`` and ``d2P/da2 = int_0^x ((log t - psi(a))^2 - psi'(a)) f(t) dt``,
    ``f(t) = t^(a-1) e^(-t) / Gamma(a)`` (P's integral, DLMF 8.2.1, differentiated in a under the integral
    sign), over the tail beyond x for x > a (both integrals over (0, inf) are 0: P(a, inf) = 1 for every a).

    In ``z = (t - a) / sqrt(a)`` (``u = z / sqrt(a)``) everything is computed without cancellation:
    ``f dt = exp(z^2 (log1p(u) - u) / u^2 - log1p(u) - c(a)) / sqrt(2 pi) dz`` with Stirling's remainder
    ``c(a) = lgamma(a) - (a - 1/2) log a + a - log(2 pi) / 2 = 1/(12a) - 1/(360a^3) + 1/(1260a^5)`` (DLMF 5.11.1;
    the prefactor ``x^a e^(-x) / Gamma(a)`` of the expansions lost ``eps a log a`` in its exponent, 2.5e-7
    relative at a = 1e8: review26a), ``log t - psi(a) = log1p(u) + (log a - psi(a))`` with ``log a - psi(a) =
    1/(2a) + 1/(12a^2) - 1/(120a^4) + 1/(252a^6)`` and ``psi'(a) = 1/a + 1/(2a^2) + 1/(6a^3) - 1/(30a^5) +
    1/(42a^7)`` (DLMF 5.11.2, 5.15.8; truncation below 1e-28 relative for a >= 1e4). The integrand falls as
    ``e^(-|z_x| s - s^2/2)`` a distance s beyond ``z_x``: 24 panels of 16 nodes over ``s`` in
    ``[0, 40 / max(|z_x|, 1)]`` (e^-40 left out)."""
    ra = np.sqrt(a)
    zx = (x - a) / ra
    upper = zx > 0  # integrate the tail beyond x (dP/da = -that)
    width = 40.0 / np.maximum(np.abs(zx), 1.0)
    lo = np.where(upper, zx, np.maximum(zx - width, 1.0 - ra))  # (t > 0: z > -sqrt(a))
    hi = np.where(upper, zx + width, zx)
    edges = np.linspace(0.0, 1.0, _PANELS + 1)
    s_nodes = (edges[:-1, None] + (edges[1:, None] - edges[:-1, None]) * (_GL_NODES + 1.0) / 2.0).ravel()
    s_weights = np.repeat(np.diff(edges), _GL_NODES.size) * np.tile(_GL_WEIGHTS, _PANELS) / 2.0
    span = (hi - lo)[:, None]
    z = lo[:, None] + span * s_nodes
    u = z / ra[:, None]
    inv = 1.0 / a[:, None]
    stirling = inv * (1.0 / 12 - inv * inv * (1.0 / 360 - inv * inv / 1260))
    l1 = np.log1p(u)
    dens = np.exp(z * z * _log1pmx_over_u2(u) - l1 - stirling) / np.sqrt(2.0 * np.pi)
    lg = l1 + inv * (0.5 + inv * (1.0 / 12 - inv * inv * (1.0 / 120 - inv * inv / 252)))
    trig = inv * (1.0 + inv * (0.5 + inv * (1.0 / 6 - inv * inv * (1.0 / 30 - inv * inv / 42))))
    w = span * s_weights * dens
    sign = np.where(upper, -1.0, 1.0)
    return sign * np.sum(w * lg, axis=1), sign * np.sum(w * (lg * lg - trig), axis=1)


def gammainc_a_derivative(a, x, k=1):
    """The derivative of ``scipy.special.gammainc(a, x)`` (``P``) in ``a``, of order 1 or 2, on arrays.

    Parameters
    ----------
    a : array_like of float
        The shape parameter, positive.
    x : array_like of float
        The argument, ``x >= 0``; broadcast against ``a``.
    k : {1, 2}, default 1
        The order of the derivative in ``a``.

    Returns
    -------
    ndarray of float64 (a float for 0-d inputs)
        ``d^k P(a, x)/da^k`` in the broadcast shape: 0 at ``x = 0`` and ``x = inf`` (P is 0 and 1 for
        every ``a``), NaN where ``a <= 0``, ``x < 0``, an argument is NaN, or (that element alone) the
        expansion did not converge. ``gammaincc``'s is its negative. Relative error below 2e-11 (for
        ``a >= 1e4`` 1.2e-11; the second derivative near its zero close to ``x = a``: ~1e-15 / a absolute).

    Notes
    -----
    The series (``x < a + 1``) or Legendre's continued fraction (DLMF 8.7.1, 8.9.2) with their
    a-derivatives carried term by term, and for ``a >= 1e4`` a quadrature of P's integral differentiated
    under the integral sign (the module's docstring); what the records ``gammainc_da``
    and ``gammainc_daa`` compute and what ``backward_source`` writes for them.
    """
    a, x = (np.array(v, dtype=np.float64) for v in np.broadcast_arrays(_value(a), _value(x)))
    out = np.full(a.shape, np.nan)
    ok = (a > 0) & (x >= 0) & np.isfinite(a)
    edge = ok & ((x == 0) | np.isposinf(x))
    out[edge] = 0.0
    big = ok & ~edge & (a >= _A_LARGE)
    low = ok & ~edge & ~big & (x < a + 1.0)
    high = ok & ~edge & ~big & ~low
    with np.errstate(over="ignore", under="ignore"):
        if big.any():  # (in blocks of 2048 elements: 384 nodes each, 6 MB a block)
            ab, xb = a[big], x[big]
            out[big] = np.concatenate([_quadrature_da(ab[i:i + 2048], xb[i:i + 2048])[k - 1]
                                       for i in range(0, ab.size, 2048)])
        if low.any():
            out[low] = _series_da(a[low], x[low])[k - 1]
        if high.any():
            out[high] = -_fraction_da(a[high], x[high])[k - 1]
    return out[()] if out.ndim == 0 else out


def _refuse_third_in_a(*_):
    raise TypeError(
        "autoprop: the third derivative of scipy.special.gammainc / gammaincc in a (d3P/da3) is not "
        "recorded; the first and second are (gammainc_da, gammainc_daa), and all their derivatives in x. "
        "The tape that asked for it differentiated the second derivative in a once more: ask that tape for "
        "x only (tape.gradient(d2, x)), or take the third by central differences of the second.")


def _dx_of(k):
    """d/dx (d^k P/da^k) = d^k/da^k (dP/dx): dP/dx (log x - digamma(a)) for k = 1, dP/dx ((log x -
    digamma(a))^2 - trigamma(a)) for k = 2 (DLMF 8.8.13 differentiated in a; 0 at x = 0 for a > 1)."""
    def factor(a, x):
        p = _dgammainc(None, a, x)
        lg = _ss.xlogy(p, x) - p * _ss.digamma(a)  # p (log x - digamma(a)), 0 where p = 0
        if k == 1:
            return lg
        return _ss.xlogy(lg, x) - lg * _ss.digamma(a) - p * _ss.polygamma(1, a)
    return factor


def _a_record(k, da_vjp, da_jvp):
    dx = _dx_of(k)
    return defprim(
        "gammainc_da" if k == 1 else "gammainc_daa", lambda a, x: gammainc_a_derivative(a, x, k), da_vjp,
        lambda g, ans, a, x: unbroadcast(times(g, dx(a, x)), np.shape(_value(x))),
        jvp=(da_jvp, lambda t, ans, a, x: times(t, dx(a, x))),
        jacobian=("d/da: gammainc_daa; " if k == 1 else "d/da: refused (the third in a); ")
        + "d/dx = dP/dx " + ("(log x - digamma(a))" if k == 1 else "((log x - digamma(a))^2 - trigamma(a))"),
        vjp="da = g * d^%d P/da^%d, dx = g * d/dx of it" % (k + 1, k + 1), shapes=BCAST,
        kinks="x = 0 and x = inf: 0 (P is 0 and 1 for every a); a <= 0, x < 0: nan",
        source="from autoprop.core.prims.incgamma import gammainc_a_derivative\n"
               "{out} = gammainc_a_derivative({0}, {1}, %d)" % k,
    )


gammainc_daa = _a_record(2, _refuse_third_in_a, _refuse_third_in_a)
gammainc_da = _a_record(
    1, lambda g, ans, a, x: unbroadcast(times(g, gammainc_daa(a, x)), np.shape(_value(a))),
    lambda t, ans, a, x: times(t, gammainc_daa(a, x)))


def _record(name, sign, formula):
    """scipy's ``name(a, x)`` (P: sign 1, Q = 1 - P: sign -1), recorded in both arguments."""
    def da_factor(a, x):
        return sign * (gammainc_da(a, x) if isinstance(a, Tensor) or isinstance(x, Tensor) else gammainc_a_derivative(a, x, 1))
    return defprim(
        name, getattr(_ss, name),
        lambda g, ans, a, x: unbroadcast(times(g, da_factor(a, x)), np.shape(_value(a))),
        lambda g, ans, a, x: unbroadcast(times(g, sign * _dgammainc(ans, a, x)), np.shape(_value(x))),
        jvp=(lambda t, ans, a, x: times(t, da_factor(a, x)), lambda t, ans, a, x: times(t, sign * _dgammainc(ans, a, x))),
        jacobian=f"{formula}; d/da: the a-derivative of the series (x < a + 1) or of the continued fraction "
                 "scipy evaluates (the record gammainc_da, autoprop.core.prims.incgamma)",
        vjp=f"da = g * {'' if sign > 0 else '-'}gammainc_da(a, x), dx = g * {formula.split(' = ', 1)[-1]}",
        shapes=BCAST, kinks="x = 0 with a < 1: an infinite slope in x; a <= 0 or x < 0: nan (as scipy); "
                            "the second derivative in a: refused",
        numpy=_sp(name), source=f"special.{name}({{0}}, {{1}})")


gammainc = _record("gammainc", 1.0, "d P(a, x)/dx = x^(a-1) e^(-x) / gamma(a) (DLMF 8.8.13)")
gammaincc = _record("gammaincc", -1.0, "d Q(a, x)/dx = -x^(a-1) e^(-x) / gamma(a) (Q = 1 - P, DLMF 8.2.5)")
