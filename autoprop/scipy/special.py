"""``scipy.special`` over autoprop Tensors, recorded on the tape.

scipy's ufuncs (``expit``, ``logit``, ``xlogy``, ``xlog1py``, ``gammaln``, ``digamma``,
``gamma``, ``loggamma``, ``betaln``, ``erf``, ``erfc``, ``erfcx``, ``erfinv``, ``ndtr``,
``log_ndtr``, ``ndtri``, ``i0``, ``i1``, ``i0e``, ``i1e``, ``entr``, ``log_expit``, ``expm1``, ``log1p``,
``exp1``, ``expi``, ``spence``, ``rel_entr``, ``kl_div``, ``beta``, ``zeta``) dispatch to autoprop when called on a Tensor, so
``scipy.special.expit(x)`` is recorded as written; so do ``gammainc`` and ``gammaincc`` (in both
arguments; the second derivative in ``a`` is refused by name), ``jv``
(``jn``), ``yv``, ``yn``, ``iv``, ``ive``, ``stdtr`` (in x; a gradient for the order or shape parameter
is refused by name), ``j0``, ``j1``, ``y0``, ``y1``, ``erfcinv``, ``rgamma`` and ``gammasgn``
(piecewise constant: no gradient). ``logsumexp``, ``softmax``,
``log_softmax``, ``polygamma`` and ``multigammaln`` are plain Python functions in scipy that convert their input to an
ndarray first: called on a Tensor they return a plain array, off the tape (while a tape
records, a ``TapeEscapeWarning`` names the scipy function and its twin here; an error
under ``ap.strict_mode()``). Use these instead; they are autoprop's primitives with
scipy's signatures. A call with no Tensor among its arguments is scipy's own function (plain arrays out, as scipy's), so a
twin replaces scipy's import in code that also computes on plain arrays (``autoprop/scipy/_plain.py``).

Derivatives: ``autoprop.explain("logsumexp")`` and so on. Source: the records in
``autoprop/core/prims/special.py`` and ``logexp.py``.

Examples
--------
>>> import autoprop as ap
>>> from autoprop.scipy import special
>>> x = ap.Variable([1.0, 2.0, 3.0])
>>> with ap.GradientTape() as tape:
...     y = special.logsumexp(x)
>>> tape.gradient(y, x).numpy().round(4)
array([0.09  , 0.2447, 0.6652])
"""

from __future__ import annotations

import numpy as _np
import scipy.special as _ss

from ..core import registry as _R
from ..core.observe import own
from ..core.prims._common import _t
from ..core.tensor import Tensor
from ._plain import scipy_on_plain as _scipy_on_plain

# scipy's ufuncs: the records (scipy.special.expit(tensor) reaches the same ones)
expit, logit, xlogy, gammaln, erf, erfc, erfinv = (
    _R.expit, _R.logit, _R.xlogy, _R.gammaln, _R.erf, _R.erfc, _R.erfinv)
digamma = psi = _R.digamma
ndtr, log_ndtr, ndtri, gamma, loggamma, betaln, i0, i1, xlog1py, entr, log_expit, erfcx, expm1, log1p = (
    _R.ndtr, _R.log_ndtr, _R.ndtri, _R.gamma, _R.loggamma, _R.betaln, _R.i0, _R.i1, _R.xlog1py, _R.entr,
    _R.log_expit, _R.erfcx, _R.expm1, _R.log1p)


def _in_x(name, pname):
    """The twin of scipy's ufunc ``name(p, x)``, recorded in ``x`` only: it calls scipy's ufunc on
    ``x`` as a Tensor, so autoprop's adaptor runs (``prims/special.py``: a ``p`` that carries
    gradient is refused by name). The record itself (``_R.<name>``) has no VJP for ``p``: called
    directly it gave a gradient of None for a watched ``p``, with no error (review24a)."""
    ufunc = getattr(_ss, name)

    def twin(p, x):
        return ufunc(p, _t(x))

    twin.__name__ = twin.__qualname__ = name
    twin.__doc__ = (
        f"``scipy.special.{name}({pname}, x)``, recorded in ``x``: scipy's value, and its derivative in x "
        f"(``autoprop.explain({name!r})``). Broadcasts as scipy's ufunc; real values.\n\n"
        f"Raises\n------\nTypeError\n    A ``{pname}`` that carries gradient (a watched Tensor, or one with a "
        f"tangent): its derivative in {pname} is not recorded. Pass it as a number or numpy array.\n")
    return twin


gammainc, gammaincc = _R.gammainc, _R.gammaincc  # (both arguments: autoprop.explain("gammainc"))
jv, yv, iv, ive, yn = _in_x("jv", "v"), _in_x("yv", "v"), _in_x("iv", "v"), _in_x("ive", "v"), _in_x("yn", "n")
stdtr = _in_x("stdtr", "df")
jn = jv
j0, j1, y0, y1, erfcinv, rgamma, gammasgn = _R.j0, _R.j1, _R.y0, _R.y1, _R.erfcinv, _R.rgamma, _R.gammasgn
beta = _R.beta  # (both arguments; scipy.special.beta on a Tensor reaches the same record)
i0e, i1e, exp1, expi, spence, rel_entr, kl_div = _R.i0e, _R.i1e, _R.exp1, _R.expi, _R.spence, _R.rel_entr, _R.kl_div


def betainc(a, b, x):
    """``scipy.special.betainc(a, b, x)``, the regularised incomplete beta function, recorded in ``x``.

    Parameters
    ----------
    a, b : array_like (or Tensors that carry no gradient)
        The shape parameters, positive.
    x : Tensor or array_like
        In [0, 1]; broadcast with ``a`` and ``b``.

    Returns
    -------
    Tensor
        scipy's value; d/dx = x^(a-1) (1-x)^(b-1) / B(a, b) (DLMF 8.17.2; ``autoprop.explain("betainc")``).

    Raises
    ------
    TypeError
        An ``a`` or ``b`` that carries gradient: the derivative in the shape parameters is not recorded
        (nor in jax: "Betainc gradient with respect to a and b not supported").
    """
    return _ss.betainc(a, b, _t(x))


def zeta(x, q=None):
    """``scipy.special.zeta(x, q)``, the Hurwitz zeta function (Riemann's for ``q=None``), recorded in both.

    Parameters
    ----------
    x : Tensor or array_like
        The exponent; differentiable where x > 1.
    q : Tensor or array_like, optional
        The shift; None: Riemann's zeta of ``x`` (recorded as ``zeta(x, 1)`` where x carries gradient).

    Returns
    -------
    Tensor
        scipy's value; d/dq = -x zeta(x + 1, q) (DLMF 25.11.17), d/dx = -sum_k log(k + q) (k + q)^-x by the
        Euler-Maclaurin summation scipy evaluates zeta with, to second order in x
        (``autoprop.explain("zeta")``, ``explain("zeta_dx")``).

    Raises
    ------
    TypeError
        Riemann's zeta of an ``x`` that carries gradient with an entry at or below 1 (scipy's analytic
        continuation there is not differentiated); the third derivative in ``x``.
    """
    return _ss.zeta(_t(x)) if q is None else _ss.zeta(_t(x), _t(q))


def polygamma(n, x):
    """``scipy.special.polygamma(n, x)``, recorded (scipy's is Python code that converts x to numpy).

    Parameters
    ----------
    n : int
        The order (no gradient); 0 is digamma.
    x : Tensor or array_like

    Returns
    -------
    Tensor
        d/dx polygamma(n, x) = polygamma(n + 1, x) (DLMF 5.15).
    """
    return _R.polygamma(x, n=int(n))


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``scipy.special.logsumexp``: log(sum(b * exp(a))) along ``axis``, recorded.

    Parameters
    ----------
    a : Tensor or array_like
    axis : int, tuple of int or None
    b : array_like or Tensor, optional
        Weights of any sign, broadcast against ``a`` (a Tensor: differentiable too).
    keepdims : bool
    return_sign : bool
        Also return sign(S), S = sum(b exp(a)); the value is then log|S|.

    Returns
    -------
    Tensor, or (Tensor, Tensor) for ``return_sign=True``
        scipy's values: log|S| (NaN where S < 0 without ``return_sign``, as scipy) and the sign, a
        constant (-1, 0 or 1: no gradient, as jax's). d log|S|/da = b e^a / S, d/db = e^a / S
        (``autoprop.explain("logsumexp_b")``); without ``b``, softmax(a) (``explain("logsumexp")``).

    Raises
    ------
    TypeError
        For complex weights ``b`` (no recorded derivative).

    Notes
    -----
    As scipy, a 0-d ``a`` (with ``b``: a 0-d broadcast shape) counts as 1-D of length 1 (``axis=0``,
    ``(0,)`` or ``(-1,)`` allowed; ``keepdims=True`` gives shape ``(1,)``), and an empty slice gives
    -inf (log 0) with the empty gradient.
    """
    a = _t(a)
    if not _np.broadcast_shapes(a.shape, _np.shape(b._value if isinstance(b, Tensor) else b)):
        a = a.reshape((1,))  # (scipy's atleast_1d; a recorded reshape)
    if b is None:
        out = _R.logsumexp(a, axis=_axis(axis), keepdims=bool(keepdims))
        if not return_sign:
            return out
        b_value = None
    else:
        b = b if isinstance(b, Tensor) else _np.asarray(b)
        if _np.iscomplexobj(b) or a.dtype.kind == "c":
            raise TypeError("autoprop's logsumexp records real a and weights b only; got a complex one "
                            "(scipy.special.logsumexp(a.numpy(), b=...) gives the value, with no gradient)")
        out = _R.logsumexp_b(a, b, axis=_axis(axis), keepdims=bool(keepdims))
        b_value = _np.asarray(b._value if isinstance(b, Tensor) else b)
    sign = _ss.logsumexp(a._value, axis=_axis(axis), b=b_value, keepdims=bool(keepdims), return_sign=True)[1]
    sign = _np.asarray(sign, out.dtype)
    if return_sign:
        return out, Tensor._wrap(sign)
    # (scipy: log of a negative sum, NaN; an empty sum, -inf with sign -1, stays -inf)
    negative = (sign < 0) & (out._value != -_np.inf)
    return _R.where(negative, own(_np.asarray(_np.nan, out.dtype)), out) if _np.any(negative) else out


def softmax(x, axis=None):
    """``scipy.special.softmax``: exp(x) / sum(exp(x)) along ``axis`` (None: all), recorded."""
    x = _t(x)
    if axis is None:
        return _R.softmax(x.reshape(-1), axis=0).reshape(x.shape)
    return _R.softmax(x, axis=axis)


def log_softmax(x, axis=None):
    """``scipy.special.log_softmax``: x - logsumexp(x) along ``axis`` (None: all), recorded."""
    x = _t(x)
    if axis is None:
        return _R.log_softmax(x.reshape(-1), axis=0).reshape(x.shape)
    return _R.log_softmax(x, axis=axis)


def multigammaln(a, d):
    """``scipy.special.multigammaln(a, d)``: the log of the multivariate gamma function, recorded.

    Parameters
    ----------
    a : Tensor or array_like
        Every entry above ``(d - 1) / 2``.
    d : int
        The dimension (no gradient).

    Returns
    -------
    Tensor
        ``a``'s shape: ``d (d - 1) / 4 log(pi) + sum_(j=0)^(d-1) gammaln(a - j / 2)`` (Muirhead,
        *Aspects of Multivariate Statistical Theory*, Theorem 2.1.12; scipy's own formula), so
        ``d/da = sum_j digamma(a - j / 2)``, recorded through ``gammaln``.

    Raises
    ------
    ValueError
        For a ``d`` that is not a positive integer, or an ``a`` at or below ``(d - 1) / 2``
        (scipy's conditions and messages).
    """
    a = _t(a)
    if not (_np.isscalar(d) or _np.ndim(d) == 0) or _np.floor(d) != d or d < 1:
        raise ValueError("d should be a positive integer (dimension)")
    d = int(d)
    if _np.any(a._value <= 0.5 * (d - 1)):
        raise ValueError(f"condition a ({a._value}) > 0.5 * (d-1) ({0.5 * (d - 1)}) not met")
    shifted = a[..., None] - 0.5 * _np.arange(d)
    return _R.sum(_R.gammaln(shifted), axis=-1) + (d * (d - 1) * 0.25) * _np.log(_np.pi)


# a call without a Tensor is scipy's own (an ndarray out, as the code the twin replaces scipy's in expects: corpus38 F7)
zeta, polygamma, multigammaln = (_scipy_on_plain(f, "scipy.special") for f in (zeta, polygamma, multigammaln))
logsumexp, softmax, log_softmax = (_scipy_on_plain(f, "scipy.special", promote=True)
                                   for f in (logsumexp, softmax, log_softmax))  # (integers as the twin computes them)
