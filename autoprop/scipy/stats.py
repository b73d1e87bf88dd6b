"""``scipy.stats`` densities and distribution functions over autoprop Tensors, recorded on the tape.

scipy.stats' distributions are Python code that converts its input to numpy arrays: called on a
Tensor they return a plain array, off the tape (a ``TapeEscapeWarning`` while a tape records, and
``tape.gradient`` of a target computed from it says why). These twins have scipy's signatures for
the methods listed, and are written with recorded numpy functions and ``scipy.special``'s recorded
ufuncs, so their derivatives are the chain rule through those records (each checked against HIPS
autograd and central differences in ``tests/test_autoprop_scipy_more.py``, and by autograd's own
``tests/test_scipy.py`` through ``tests/test_autoprop_peer.py``):

* ``norm``: ``pdf, logpdf, cdf, logcdf, sf, logsf(x, loc=0, scale=1)``;
* ``t``: ``pdf, logpdf, cdf, logcdf(x, df, loc=0, scale=1)``;
* ``gamma``: ``pdf, logpdf, cdf(x, a, loc=0, scale=1)``; ``chi2``: the same with ``df``;
* ``beta``: ``pdf, logpdf, cdf(x, a, b, loc=0, scale=1)``;
* ``poisson``: ``pmf, logpmf, cdf(k, mu, loc=0)`` (``k`` integers: no gradient);
* ``multivariate_normal``: ``pdf, logpdf(x, mean=None, cov=1, allow_singular=False)``,
  ``entropy(mean=None, cov=1)``; a matrix ``cov`` is read by its lower triangle, as scipy (so the
  gradient of ``cov`` lives there); a singular ``cov`` (``allow_singular=True``) is a constant;
* ``dirichlet``: ``pdf, logpdf(x, alpha)`` (``x`` with K or K - 1 components along its first axis, as
  scipy: the last one is then ``1 - sum(x)``).

Off the support each method gives scipy's value (``pdf`` 0, ``logpdf`` -inf, ``cdf`` 0 or 1: constants,
whose gradient is 0), and nan where a parameter is out of its domain (``scale <= 0``, a shape
``a``, ``b`` or ``df <= 0``, ``mu < 0``), as scipy's ``_argcheck``.

The distribution functions (``cdf``) go through ``scipy.special.betainc``/``gammainc``/``stdtr``:
``gammainc`` is recorded in its shape ``a`` too (``autoprop/core/prims/incgamma.py``), so ``gamma.cdf``
and ``chi2.cdf`` are differentiable in ``a`` and ``df``; ``betainc`` and ``stdtr`` are recorded in their
last argument only, so a gradient for ``beta.cdf``'s ``a``, ``b`` or ``t.cdf``'s ``df`` is refused by name. Other methods (``rvs``, ``fit``, ``ppf``, frozen
distributions ``norm(loc, scale)``) are not twinned: an AttributeError or TypeError says so.
Sources: scipy's own formulas (``scipy/stats/_continuous_distns.py``, ``_multivariate.py``).

Examples
--------
>>> import numpy as np, autoprop as ap
>>> from autoprop.scipy import stats
>>> mu = ap.Variable([0.5])
>>> with ap.GradientTape() as tape:
...     nll = -np.sum(stats.norm.logpdf(np.array([0.1, 0.9, 1.4]), mu, 2.0))
>>> tape.gradient(nll, mu).numpy()   # -sum(x - mu) / scale^2
array([-0.225])
"""

from __future__ import annotations

import numpy as _np

from ..core.observe import own
from ..core.prims._common import _t
from ..core.prims.special import _log1p_sq, log1pmx_over_u2_series, t_log_norm
from ..core.prims.special import t_logcdf as _t_logcdf_prim
from ..core.tensor import Tensor

try:
    import scipy.special as _ss
except ImportError:  # pragma: no cover - scipy comes with scikit-learn
    _ss = None

__all__ = ["norm", "t", "gamma", "chi2", "beta", "poisson", "multivariate_normal", "dirichlet"]

_LOG_2PI = float(_np.log(2.0 * _np.pi))


def _std(x, loc, scale):
    """``(x - loc) / scale``, ``log(scale)`` and where the scale is out of scipy's domain (``scale <= 0``
    or nan: scipy's value there is nan, :func:`_scipy_values`; the formulas see scale 1 there)."""
    scale, bad = _domain(scale, lambda s: s > 0)
    return (x - loc) / scale, _np.log(scale), bad


def _domain(p, ok):
    """``p`` with the entries where ``ok(p's values)`` fails replaced by 1 (so that no formula sees
    them: a nan or an inf there would reach the gradient), and the mask of those entries."""
    bad = ~ok(_np.asarray(_value(p)))
    return (_np.where(bad, 1.0, p) if _np.any(bad) else p), bad


def _support(y, outside, inner):
    """``y`` with the entries off the support (the mask ``outside``) replaced by ``inner``, a point
    inside, so that the formula neither makes nor differentiates a nan there (the double-where rule)."""
    return _np.where(outside, inner, y) if _np.any(outside) else y


def _scipy_values(out, bad, *fills):
    """scipy's conventions on a method's value: each ``(mask, value)`` of ``fills`` (off the support:
    0, -inf or 1, constants, so the gradient there is 0), then nan where ``bad`` (a parameter out of
    its domain: scipy's ``_argcheck``). Python scalars, so a float32 value stays float32."""
    for mask, value in fills:
        if _np.any(mask):
            out = _np.where(mask, value, out)
    return _np.where(bad, _np.nan, out) if _np.any(bad) else out


def _value(x):
    return x._value if isinstance(x, Tensor) else x


def _carries(x):
    from ..core import observe

    return isinstance(x, Tensor) and observe._carrier(x) is not None


def _shape_constant(who, **params):
    """A ``cdf`` is recorded in x, loc and scale only: a shape parameter that carries gradient is refused by the
    distribution's name and the parameter's (scipy.special's adaptor would name gammainc's ``a`` for chi2's df)."""
    for name, p in params.items():
        if _carries(p):
            raise TypeError(
                f"autoprop.scipy.stats.{who} is recorded in x, loc and scale only: its derivative in the shape "
                f"parameter {name} (a derivative of the incomplete gamma, beta or t function in its parameter) is not "
                f"recorded here, and {name} carries gradient here (a watched "
                f"Tensor). Pass {name} as a number or numpy array ({name}.numpy(), or ap.stop_gradient({name})); "
                f"the pdf and logpdf are differentiable in {name}.")


class _Distribution:
    """A scipy.stats distribution's twinned methods (the others raise, naming what exists)."""

    def __init__(self, name, methods):
        self._name = name
        self._methods = dict(methods)
        for key, fn in methods.items():
            fn.__name__ = key
            fn.__qualname__ = f"{name}.{key}"
            setattr(self, key, fn)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise AttributeError(
            f"autoprop.scipy.stats.{self._name} has no {attr!r}: its twinned methods are "
            f"{', '.join(sorted(self._methods))} (scipy's signatures). Use scipy.stats.{self._name}.{attr} "
            "on plain arrays (x.numpy()): no gradient.")

    def __call__(self, *args, **kwargs):
        raise TypeError(f"autoprop.scipy.stats.{self._name}: frozen distributions are not twinned; call "
                        f"its methods with the parameters ({self._name}.logpdf(x, ...)).")

    def __repr__(self):
        return f"<autoprop.scipy.stats.{self._name}: {', '.join(sorted(self._methods))}>"


# --- univariate continuous ------------------------------------------------------------------------
# Each method gives scipy's value off the support (0, -inf or 1) and nan where a parameter is out of
# its domain (scale <= 0, a shape <= 0), as scipy.stats' rv_continuous does (_argcheck, _support_mask);
# the formulas are evaluated at a point inside there (review24a: they gave nan, or a finite wrong
# number: gamma.pdf(-0.5, 1.0) was exp(0.5), norm.cdf(x, 0, -1) was ndtr(-x)).
def _norm_logpdf(x, loc=0, scale=1):
    z, log_s, bad = _std(x, loc, scale)
    return _scipy_values(-0.5 * z * z - 0.5 * _LOG_2PI - log_s, bad)


def _norm_pdf(x, loc=0, scale=1):
    return _np.exp(_norm_logpdf(x, loc, scale))


def _norm_cdf(x, loc=0, scale=1):
    z, _, bad = _std(x, loc, scale)
    return _scipy_values(_ss.ndtr(z), bad)


def _norm_logcdf(x, loc=0, scale=1):
    z, _, bad = _std(x, loc, scale)
    return _scipy_values(_ss.log_ndtr(z), bad)


def _norm_sf(x, loc=0, scale=1):
    z, _, bad = _std(x, loc, scale)
    return _scipy_values(_ss.ndtr(-z), bad)


def _norm_logsf(x, loc=0, scale=1):
    z, _, bad = _std(x, loc, scale)
    return _scipy_values(_ss.log_ndtr(-z), bad)


norm = _Distribution("norm", {"pdf": _norm_pdf, "logpdf": _norm_logpdf, "cdf": _norm_cdf, "logcdf": _norm_logcdf,
                              "sf": _norm_sf, "logsf": _norm_logsf})


def _t_kernel(z, df):
    """``-(df + 1)/2 log1p(z^2/df)``, the t log-density's kernel, with derivatives in df that keep their digits at a
    large df: for ``u = z^2/df < 0.1`` it is ``-z^2/2 - z^2/(2 df) + (df + 1)/2 phi(u)``, ``phi(u) = u - log1p(u)``
    as its series, where the log1p form's d/d(df), two terms of size z^2/(2 df) cancelling to O(1/df^2), lost
    them (review25a: 7.4e-4 relative at df = 1e12, the second derivative 1e-5); elsewhere the log1p form, through
    :func:`~autoprop.core.prims.special._log1p_sq` where ``z^2`` overflows (review27a L5: -inf at x = 1e200, df = 5,
    for mpmath's -2759.2424174446073). The square is formed only of the entries the series takes (the double-where
    rule: an overflowed square in the other branch made a NaN derivative in df)."""
    with _np.errstate(over="ignore"):
        small = _np.asarray(_value(z)) ** 2 / _np.asarray(_value(df)) < 0.1
    if not _np.any(small):
        return -(df + 1.0) / 2.0 * _log1p_sq(z, df)
    zs = _np.where(small, z, own(0.0)) if not _np.all(small) else z
    us = zs * zs / df
    phi = -log1pmx_over_u2_series(us)  # phi(u) / u^2, phi(u) = u - log1p(u)
    series = -(zs * zs) * own(0.5) - (zs * zs) / (df * own(2.0)) + (df + own(1.0)) * own(0.5) * (phi * us * us)
    if _np.all(small):
        return series
    return _np.where(small, series, -(df + 1.0) / 2.0 * _log1p_sq(_np.where(small, own(1.0), z), df))


def _t_logpdf(x, df, loc=0, scale=1):
    # log c(df) - (df + 1)/2 log1p(z^2/df) - log(scale), c(df) by t_log_norm (a series from df = 100 on, where the
    # gammaln's cancel) and the kernel by _t_kernel (a series where z^2/df < 0.1); df = inf: the normal's, as
    # scipy's t._logpdf
    z, log_s, bad = _std(x, loc, scale)
    df, bad_df = _domain(df, lambda v: v > 0)
    inf = _np.isposinf(_np.asarray(_value(df)))
    if _np.any(inf):
        safe = _np.where(inf, 1.0, df)
        kernel = _np.where(inf, -0.5 * z * z, _t_kernel(z, safe))
    else:
        kernel = _t_kernel(z, df)
    return _scipy_values(t_log_norm(df) + kernel - log_s, bad | bad_df)


def _t_pdf(x, df, loc=0, scale=1):
    return _np.exp(_t_logpdf(x, df, loc, scale))


def _t_cdf(x, df, loc=0, scale=1):
    # scipy's own stdtr(df, z), recorded in z (its derivative the t density; review24a: the betainc form
    # 1 - I_w(df/2, 1/2)/2, w = df/(df + z^2), lost its digits where w rounds near 1, cdf(1.0) at df = 1e15
    # was 0.883 for scipy's 0.841, and needed a series near z = 0); a df that carries gradient: refused
    _shape_constant("t.cdf", df=df)
    z, _, bad = _std(x, loc, scale)
    df, bad_df = _domain(df, lambda v: v > 0)
    return _scipy_values(_ss.stdtr(df, z), bad | bad_df)


def _t_logcdf(x, df, loc=0, scale=1):
    # log stdtr(df, z) recorded as one record (registry t_logcdf): finite far in the lower tail, where stdtr
    # underflows and log(stdtr) was -inf with a nan gradient (review24: x = -100, df = 1e4: -3470.9135628836716,
    # slope 50.004998, mpmath), its derivative pdf/cdf formed in logs; a df that carries gradient: refused
    _shape_constant("t.logcdf", df=df)
    z, log_s, bad = _std(x, loc, scale)
    df, bad_df = _domain(df, lambda v: v > 0)
    return _scipy_values(_t_logcdf_prim(_value(df), z), bad | bad_df)


t = _Distribution("t", {"pdf": _t_pdf, "logpdf": _t_logpdf, "cdf": _t_cdf, "logcdf": _t_logcdf})


def _gamma_logpdf(x, a, loc=0, scale=1):
    y, log_s, bad = _std(x, loc, scale)
    a, bad_a = _domain(a, lambda v: v > 0)
    below = _value(y) < 0  # (support: x >= loc)
    y = _support(y, below, 1.0)
    return _scipy_values(_ss.xlogy(a - 1.0, y) - y - _ss.gammaln(a) - log_s, bad | bad_a, (below, -_np.inf))


def _gamma_cdf(x, a, loc=0, scale=1):
    # differentiable in a too: gammainc's record carries its derivative in a (fixj25: the series and Legendre's
    # continued fraction, checked against jax)
    y, _, bad = _std(x, loc, scale)
    a, bad_a = _domain(a, lambda v: v > 0)
    below = _value(y) <= 0  # (at y = 0 the cdf is 0 for every scale: no inf (the density, a < 1) times dy/ds = 0)
    return _scipy_values(_ss.gammainc(a, _support(y, below, 1.0)), bad | bad_a, (below, 0.0))


gamma = _Distribution("gamma", {"pdf": lambda x, a, loc=0, scale=1: _np.exp(_gamma_logpdf(x, a, loc, scale)),
                                "logpdf": _gamma_logpdf, "cdf": _gamma_cdf})
# chi2(df) is gamma(df / 2, scale = 2): scipy's chi2_gen
chi2 = _Distribution("chi2", {
    "pdf": lambda x, df, loc=0, scale=1: _np.exp(_gamma_logpdf(x, df / 2.0, loc, 2.0 * scale)),
    "logpdf": lambda x, df, loc=0, scale=1: _gamma_logpdf(x, df / 2.0, loc, 2.0 * scale),
    "cdf": lambda x, df, loc=0, scale=1: _gamma_cdf(x, df / 2.0, loc, 2.0 * scale)})


def _beta_std(x, a, b, loc, scale):
    """y = (x - loc) / scale moved inside [0, 1] where it is off the support, log(scale), the masks
    (below 0, above 1, a parameter out of its domain), a and b (1 where out of their domain)."""
    y, log_s, bad = _std(x, loc, scale)
    a, bad_a = _domain(a, lambda v: v > 0)
    b, bad_b = _domain(b, lambda v: v > 0)
    yv = _value(y)
    below, above = yv < 0, yv > 1
    return _support(y, below | above, 0.5), log_s, below, above, bad | bad_a | bad_b, a, b


def _beta_logpdf(x, a, b, loc=0, scale=1):
    y, log_s, below, above, bad, a, b = _beta_std(x, a, b, loc, scale)
    return _scipy_values(_ss.xlogy(a - 1.0, y) + _ss.xlog1py(b - 1.0, -y) - _ss.betaln(a, b) - log_s, bad,
                         (below | above, -_np.inf))


def _beta_cdf(x, a, b, loc=0, scale=1):
    _shape_constant("beta.cdf", a=a, b=b)
    y, _, below, above, bad, a, b = _beta_std(x, a, b, loc, scale)
    edge = _value(y) == 0  # the cdf is 0 for every scale there (as _gamma_cdf's; review25a M1: nan for a < 1)
    if _np.any(edge):
        below, y = below | edge, _support(y, edge, 0.5)
    top = _value(y) == 1  # x == loc + scale: the cdf is 1 there, taken as constant as at the lower edge (the
    if _np.any(top):  # derivative from outside, 0, as jax's clip; from inside it is -inf for b < 1: review26a)
        above, y = above | top, _support(y, top, 0.5)
    return _scipy_values(_ss.betainc(a, b, y), bad, (below, 0.0), (above, 1.0))


beta = _Distribution("beta", {
    "pdf": lambda x, a, b, loc=0, scale=1: _np.exp(_beta_logpdf(x, a, b, loc, scale)),
    "logpdf": _beta_logpdf, "cdf": _beta_cdf})


# --- poisson (k: integers, no gradient) -------------------------------------------------------------
def _k(k, loc, who):
    if _carries(k) or _carries(loc):
        raise TypeError(f"autoprop.scipy.stats.poisson.{who}: k and loc are integers (no gradient); "
                        "the rate mu is differentiable")
    return _np.asarray(_value(k), dtype=float) - _np.asarray(_value(loc), dtype=float)


def _poisson_logpmf(k, mu, loc=0):
    k = _k(k, loc, "logpmf")
    mu, bad = _domain(mu, lambda v: v >= 0)  # (scipy: nan for mu < 0)
    ok = (k >= 0) & (k == _np.floor(k))  # scipy: -inf off the non-negative integers
    return _scipy_values(_np.where(ok, _ss.xlogy(_np.where(ok, k, 0.0), mu) - _ss.gammaln(_np.where(ok, k, 0.0) + 1.0)
                                   - mu, -_np.inf), bad)


def _poisson_cdf(k, mu, loc=0):
    k = _np.floor(_k(k, loc, "cdf"))
    mu, bad = _domain(mu, lambda v: v >= 0)
    return _scipy_values(_np.where(k >= 0, _ss.gammaincc(_np.where(k >= 0, k, 0.0) + 1.0, mu), 0.0), bad)  # pdtr


poisson = _Distribution("poisson", {"pmf": lambda k, mu, loc=0: _np.exp(_poisson_logpmf(k, mu, loc)),
                                    "logpmf": _poisson_logpmf, "cdf": _poisson_cdf})


# --- multivariate normal --------------------------------------------------------------------------
def _mvn_args(x, mean, cov):
    # the dimension as scipy's _process_parameters_psd infers it: mean's size when mean is given, else cov's side
    # when cov is a matrix, else 1; a one-dimensional distribution takes a cov of one entry (review24: a scalar
    # mean with a matrix or vector cov was broadcast, where scipy refuses)
    cov = _t(cov)
    d = int(_np.size(_value(mean))) if mean is not None else (cov.shape[0] if cov.ndim == 2 else 1)
    if d == 1 and cov.size != 1:
        said = "mean has one entry" if mean is not None else "no mean is given and cov is not a matrix"
        raise ValueError(f"autoprop.scipy.stats.multivariate_normal: {said}, so the distribution is "
                         f"one-dimensional (scipy's rule) and cov must have one entry; got shape {cov.shape}: "
                         "give a mean of cov's dimension")
    if d == 1:
        cov = cov.reshape((1, 1))
        mean = None if mean is None else _t(mean).reshape((1,))
    if cov.ndim == 0:
        cov = cov * _np.eye(d)
    elif cov.ndim == 1 and cov.shape[0] == d:
        cov = cov * _np.eye(d)  # scipy: a 1-D cov is the diagonal
    elif cov.ndim == 1:
        raise ValueError(f"autoprop.scipy.stats.multivariate_normal: a vector cov is the diagonal and must have "
                         f"length {d}, mean's; got shape {cov.shape}")
    elif cov.ndim != 2 or cov.shape[0] != d or cov.shape[1] != d:
        raise ValueError(f"autoprop.scipy.stats.multivariate_normal: cov must be a scalar, a vector or a square "
                         f"matrix; got shape {cov.shape}")
    else:  # scipy reads the lower triangle (its eigh(cov, lower=True)): the symmetric matrix it stands for
        cov = _np.tril(cov) + _np.swapaxes(_np.tril(cov, -1), -1, -2)
    mean = _np.zeros(d) if mean is None else _t(mean)
    if mean.shape != (d,):
        raise ValueError(f"autoprop.scipy.stats.multivariate_normal: mean must have shape ({d},); got {mean.shape}")
    if x is not None:
        x = _t(x)
        x = x.reshape(x.shape + (1,)) if d == 1 and (x.ndim == 0 or x.shape[-1] != 1) else x
        if x.shape[-1] != d:
            raise ValueError(f"autoprop.scipy.stats.multivariate_normal: x's last axis must have length {d}; "
                             f"got shape {x.shape}")
    return x, mean, cov, d


def _psd(cov, allow_singular):
    """(rank, log pseudo-determinant, a function of dev giving the Mahalanobis square, the support
    mask) of cov: scipy's _PSD (eigenvalues at or below 1e6 eps max|s| are zero)."""
    s = _np.linalg.eigvalsh(_np.asarray(_value(cov)))
    eps = 1e6 * _np.finfo(float).eps * _np.max(_np.abs(s))
    if _np.min(s) < -eps:
        raise ValueError("the input matrix must be symmetric positive semidefinite")
    if _np.min(s) > eps:  # full rank: recorded solve and slogdet (cov may carry gradient)
        def maha(dev):  # dev^T cov^-1 dev for each point (the rows of dev)
            flat = dev.reshape(-1, len(s))
            return _np.sum(flat * _np.linalg.solve(cov, flat.T).T, axis=1).reshape(dev.shape[:-1])
        return len(s), _np.linalg.slogdet(cov)[1], maha, None
    if not allow_singular:
        raise _np.linalg.LinAlgError("singular matrix")
    if _carries(cov):
        raise TypeError("autoprop.scipy.stats.multivariate_normal: a singular cov (allow_singular=True) is "
                        "taken as a constant, and this cov carries gradient: the pseudo-determinant's "
                        "derivative jumps where the rank changes")
    w, u = _np.linalg.eigh(_np.asarray(_value(cov)))
    keep = w > eps
    proj = u[:, keep] / _np.sqrt(w[keep])
    null = u[:, ~keep]
    return (int(keep.sum()), float(_np.sum(_np.log(w[keep]))), lambda dev: _np.sum((dev @ proj) ** 2, axis=-1),
            null)


def _mvn_logpdf(x, mean=None, cov=1, allow_singular=False):
    x, mean, cov, d = _mvn_args(x, mean, cov)
    rank, log_det, maha, null = _psd(cov, allow_singular)
    dev = x - mean
    out = -0.5 * (rank * _LOG_2PI + log_det + maha(dev))
    if null is not None and null.shape[1]:  # scipy: -inf off the support of a singular cov
        off = _np.any(_np.abs(_np.asarray(_value(dev)) @ null) > 1e-8 * (1.0 + _np.abs(_np.asarray(_value(dev))).max()),
                      axis=-1)
        out = _np.where(off, -_np.inf, out)
    return out


def _mvn_entropy(mean=None, cov=1):
    _, _, cov, d = _mvn_args(None, mean, cov)
    rank, log_det, _, _ = _psd(cov, True)
    return 0.5 * (rank * (1.0 + _LOG_2PI) + log_det)


multivariate_normal = _Distribution("multivariate_normal", {
    "logpdf": _mvn_logpdf,
    "pdf": lambda x, mean=None, cov=1, allow_singular=False: _np.exp(_mvn_logpdf(x, mean, cov, allow_singular)),
    "entropy": _mvn_entropy})


# --- dirichlet (components along the first axis, as scipy) ------------------------------------------
def _dirichlet_logpdf(x, alpha):
    # scipy's _dirichlet_check_parameters and _dirichlet_check_input, with their messages (review24a:
    # an alpha <= 0 gave -inf and an x = 0 with alpha < 1 +inf, where scipy refuses; the K - 1 form
    # of x, whose last component is 1 - sum(x), was refused, where scipy takes it)
    x, alpha = _t(x), _t(alpha)
    av = _np.asarray(alpha._value)
    if _np.min(av) <= 0:
        raise ValueError("All parameters must be greater than 0")
    if alpha.ndim != 1:
        raise ValueError(f"Parameter vector 'a' must be one dimensional, but a.shape = {alpha.shape}.")
    if x.ndim not in (1, 2) or x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("Vector 'x' must have either the same number of entries as, or one entry fewer than, "
                         f"parameter vector 'a', but alpha.shape = {alpha.shape} and x.shape = {x.shape}.")
    if x.shape[0] != alpha.shape[0]:  # (the last component, recorded: its gradient reaches the others)
        x = _np.concatenate([x, 1.0 - _np.sum(x, axis=0, keepdims=True)], axis=0)
    xv = _np.asarray(_value(x))
    if _np.min(xv) < 0:
        raise ValueError("Each entry in 'x' must be greater than or equal to zero.")
    if _np.max(xv) > 1:
        raise ValueError("Each entry in 'x' must be smaller or equal one.")
    a = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
    if _np.any((xv == 0) & (_np.asarray(_value(a)) < 1)):
        raise ValueError("Each entry in 'x' must be greater than zero if its alpha is less than one.")
    if _np.any(_np.abs(_np.sum(xv, axis=0) - 1.0) > 10e-10):
        raise ValueError(f"The input vector 'x' must lie within the normal simplex. but np.sum(x, 0) = "
                         f"{_np.sum(xv, axis=0)}.")
    log_b = _np.sum(_ss.gammaln(alpha)) - _ss.gammaln(_np.sum(alpha))
    return _np.sum(_ss.xlogy(a - 1.0, x), axis=0) - log_b


dirichlet = _Distribution("dirichlet", {"logpdf": _dirichlet_logpdf,
                                        "pdf": lambda x, alpha: _np.exp(_dirichlet_logpdf(x, alpha))})
