"""autoprop.scipy's twins at the edges of their domains (review24a, session 24): the names in
``autoprop.scipy.special`` refuse a gradient for the order or shape parameter as scipy's ufuncs
do (they returned None for it, silently), and ``autoprop.scipy.stats`` gives scipy's values off
the support (0, -inf, 1) and nan for a parameter out of its domain (a scale <= 0, a shape <= 0),
where the formulas gave nan, or a finite wrong number (``gamma.pdf(-0.5, a=1)`` was 1.65, scipy's
0; ``norm.cdf(x, 0, -1)`` was ndtr(-x), scipy's nan).

Each value is scipy's own (scipy.stats is the reference for the values); each gradient inside the
support is checked against central differences of scipy's function, and is 0 off the support
(a constant there) and at an invalid parameter (nan, a constant).
"""

import warnings

import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as sst

import autoprop as ap
from autoprop.scipy import special as aps
from autoprop.scipy import stats as aps_stats

IN_X = ["gammainc", "gammaincc", "jv", "jn", "yv", "yn", "iv", "ive", "stdtr"]
REFUSE_P = [n for n in IN_X if n not in ("gammainc", "gammaincc")]  # (a: tests/test_autoprop_incgamma.py)


@pytest.mark.parametrize("name", REFUSE_P)
def test_the_special_twins_refuse_a_parameter_that_carries_gradient(name):
    p, x = ap.Variable(2.0), ap.Variable(0.8)
    with ap.GradientTape(), pytest.raises(TypeError, match=rf"{'jv' if name == 'jn' else name}\(.*\) is "
                                                            r"recorded in x only.* carries gradient"):
        getattr(aps, name)(p, x)
    with ap.ForwardAccumulator(p, 1.0), pytest.raises(TypeError, match="recorded in x only"):
        getattr(aps, name)(p, 0.8)


@pytest.mark.parametrize("name", IN_X)
def test_the_special_twins_still_record_x_and_give_scipys_value(name):
    x = ap.Variable([0.8, 1.9])
    with ap.GradientTape() as tape:
        y = getattr(aps, name)(2.0, x)
    ref = getattr(ss, name)(2.0, np.array([0.8, 1.9]))
    np.testing.assert_array_equal(y.numpy(), ref)
    h = 1e-6
    cd = (getattr(ss, name)(2.0, np.array([0.8, 1.9]) + h) - getattr(ss, name)(2.0, np.array([0.8, 1.9]) - h)) / (2 * h)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), cd, rtol=1e-6)
    # a plain order array, a constant Tensor order: values, no refusal
    np.testing.assert_array_equal(getattr(aps, name)(ap.constant([2.0, 3.0]), 0.8).numpy(),
                                  getattr(ss, name)([2.0, 3.0], 0.8))


# --- scipy.stats off the support and at invalid parameters ------------------------------------------
_X = np.array([-1.5, -0.2, 0.0, 0.3, 0.5, 1.0, 1.7, 4.0])
# (dist, method, args after x); each with x = _X, loc 0.2 and scale 1.5, and again with scale -1 and 0
CASES = [(d, m, a) for d, ms, a in [
    ("norm", ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"), ()),
    ("t", ("pdf", "logpdf", "cdf", "logcdf"), (3.5,)),
    ("gamma", ("pdf", "logpdf", "cdf"), (2.5,)), ("gamma", ("pdf", "logpdf", "cdf"), (1.0,)),
    ("gamma", ("pdf", "logpdf", "cdf"), (0.6,)),
    ("chi2", ("pdf", "logpdf", "cdf"), (3.0,)), ("chi2", ("pdf", "logpdf", "cdf"), (2.0,)),
    ("beta", ("pdf", "logpdf", "cdf"), (2.5, 1.7)), ("beta", ("pdf", "logpdf", "cdf"), (1.0, 1.0)),
] for m in ms]


def _values(dist, method, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = getattr(getattr(aps_stats, dist), method)(*args)
        return np.asarray(ours.numpy() if isinstance(ours, ap.Tensor) else ours), getattr(getattr(sst, dist), method)(*args)


@pytest.mark.parametrize("dist,method,shape", CASES, ids=[f"{d}.{m}{a}" for d, m, a in CASES])
@pytest.mark.parametrize("loc,scale", [(0.2, 1.5), (-0.3, 0.4), (0.2, -1.0), (0.2, 0.0)])
def test_stats_values_are_scipys_off_the_support_and_at_a_bad_scale(dist, method, shape, loc, scale):
    ours, theirs = _values(dist, method, _X, *shape, np.float64(loc), np.float64(scale))
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("dist,method,args", [
    ("gamma", "pdf", (1.0, -0.5)), ("gamma", "logpdf", (1.0, -0.5)), ("gamma", "cdf", (1.0, 0.0)),
    ("gamma", "pdf", (1.0, 0.0)), ("chi2", "logpdf", (1.0, -1.0)), ("chi2", "cdf", (1.0, 0.0)),
    ("t", "pdf", (1.0, -1.0)), ("t", "cdf", (1.0, 0.0)), ("beta", "logpdf", (0.5, -0.5, 2.0)),
    ("beta", "pdf", (0.5, 2.0, 0.0)), ("beta", "cdf", (0.5, 2.0, -1.0)),
    ("poisson", "logpmf", (0.0, -1.0)), ("poisson", "pmf", (0.0, -1.0)), ("poisson", "cdf", (0.0, -1.0)),
    ("poisson", "logpmf", (0.0, 0.0)), ("poisson", "cdf", (2.0, 0.0)),
])
def test_stats_values_are_scipys_at_a_shape_parameter_out_of_its_domain(dist, method, args):
    ours, theirs = _values(dist, method, *(np.float64(a) for a in args))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-300)


def _central(f, x, h=1e-6):
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        out.flat[i] = np.sum(f(x + e) - f(x - e)) / (2 * h)
    return out


@pytest.mark.parametrize("dist,method,shape", CASES, ids=[f"{d}.{m}{a}" for d, m, a in CASES])
def test_stats_gradients_are_zero_off_the_support_and_central_differences_inside(dist, method, shape):
    xs = np.array([-1.5, -0.2, 0.3, 0.5, 0.9, 1.6, 4.0])  # (loc 0.2, scale 1.5: the beta support is [0.2, 1.7])
    x = ap.Variable(xs)
    with ap.GradientTape() as tape:
        y = getattr(getattr(aps_stats, dist), method)(x, *shape, 0.2, 1.5)
        s = np.sum(np.where(np.isfinite(y.numpy()), y, 0.0))
    g = tape.gradient(s, x).numpy()
    ref = getattr(getattr(sst, dist), method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cd = np.array([_central(lambda v: ref(v, *shape, 0.2, 1.5), np.array([v]))[0] for v in xs])
    inside = np.isfinite(cd) & np.isfinite(ref(xs, *shape, 0.2, 1.5))
    assert np.all(np.isfinite(g)), g
    np.testing.assert_allclose(g[inside], cd[inside], rtol=1e-5, atol=1e-8)
    if dist in ("gamma", "chi2"):
        np.testing.assert_array_equal(g[xs < 0.2], 0.0)
    if dist == "beta":
        np.testing.assert_array_equal(g[(xs < 0.2) | (xs > 1.7)], 0.0)


def test_stats_gradient_of_the_scale_and_shape_skips_points_off_the_support():
    # the log-likelihood of data with some points off the support: -inf there, as scipy; the
    # gradient of a shape parameter over the points inside is finite and central differences'
    xs = np.array([0.3, 0.9, 2.5])
    a = ap.Variable(2.5)
    with ap.GradientTape() as tape:
        y = np.sum(aps_stats.gamma.logpdf(xs, a, 0.0, 1.5))
    cd = _central(lambda v: np.sum(sst.gamma.logpdf(xs, v[0], 0.0, 1.5)), np.array([2.5]))[0]
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), cd, rtol=1e-6)
    with ap.GradientTape() as tape:
        y = aps_stats.gamma.logpdf(np.array([-1.0, 0.9]), a)
    np.testing.assert_array_equal(y.numpy()[0], -np.inf)
    g = tape.gradient(y, a).numpy()
    np.testing.assert_allclose(g, np.log(0.9) - ss.digamma(2.5), rtol=1e-12)


# --- scipy.stats.dirichlet: scipy's checks, and x with K - 1 components -------------------------------
@pytest.mark.parametrize("x,alpha", [
    ([0.2, 0.3, 0.5], [0.0, 1.0, 2.0]), ([0.2, 0.3, 0.5], [-1.0, 1.0, 2.0]), ([0.0, 0.5, 0.5], [0.5, 1.0, 2.0]),
    ([0.2, 0.3, 0.5], [[1.0, 2.0, 3.0]]), ([0.2, 0.8], [1.0, 2.0, 3.0, 4.0]), ([0.7, 0.5], [1.0, 2.0, 3.0]),
    ([0.2, 0.3, 0.6], [1.0, 2.0, 3.0]), ([-0.2, 0.6, 0.6], [1.0, 2.0, 3.0]),
])
def test_dirichlet_refuses_what_scipy_refuses_with_scipys_message(x, alpha):
    with pytest.raises(ValueError) as theirs:
        sst.dirichlet.logpdf(np.array(x), np.array(alpha))
    with pytest.raises(ValueError, match=r"^" + __import__("re").escape(str(theirs.value)[:40])):
        aps_stats.dirichlet.logpdf(np.array(x), np.array(alpha))


def test_dirichlet_takes_x_with_one_component_fewer_as_scipy():
    alpha = np.array([0.7, 2.0, 3.5])
    xs = np.array([[0.2, 0.5], [0.3, 0.1]])  # (two points; their last components 0.5 and 0.4)
    x = ap.Variable(xs)
    with ap.GradientTape() as tape:
        y = aps_stats.dirichlet.logpdf(x, alpha)
        total = np.sum(y)
    np.testing.assert_allclose(y.numpy(), sst.dirichlet.logpdf(xs, alpha), rtol=1e-12)
    # d/dx_i = (alpha_i - 1) / x_i - (alpha_K - 1) / x_K, x_K = 1 - sum(x)
    last = 1.0 - xs.sum(axis=0)
    expect = (alpha[:2, None] - 1.0) / xs - (alpha[2] - 1.0) / last
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), expect, rtol=1e-12)
    cd = _central(lambda v: np.sum(sst.dirichlet.logpdf(v.reshape(2, 2), alpha)), xs.ravel()).reshape(2, 2)
    np.testing.assert_allclose(expect, cd, rtol=1e-5)


# --- scipy.linalg.solve_banded: (l, u) as scipy takes it ------------------------------------------------
@pytest.mark.parametrize("l_and_u", [(1.5, -0.5), (-1, 2), (2, -1), (1.0, 0)])
def test_solve_banded_refuses_l_and_u_that_are_not_non_negative_integers(l_and_u):
    from autoprop.scipy import linalg as apl

    ab = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    with pytest.raises(ValueError, match=r"solve_banded: \(l, u\) must be two non-negative integers"):
        apl.solve_banded(l_and_u, ap.constant(ab), np.ones(4))
    # numpy integers are integers: scipy's value
    np.testing.assert_allclose(apl.solve_banded((np.int64(1), np.int64(0)), ap.constant(ab), np.ones(4)).numpy(),
                               __import__("scipy.linalg").linalg.solve_banded((1, 0), ab, np.ones(4)), rtol=1e-12)


# --- scipy.signal: numbers and empty inputs ------------------------------------------------------------
def test_convolve_of_two_numbers_is_their_product_and_empty_inputs_are_refused_by_name():
    import scipy.signal as ssig

    from autoprop.scipy import signal as aps_signal

    a = ap.Variable(2.0)
    for fn in ("convolve", "correlate"):
        with ap.GradientTape() as tape:
            y = getattr(aps_signal, fn)(a, np.array(3.0))
        assert float(y.numpy()) == float(getattr(ssig, fn)(np.array(2.0), np.array(3.0))) == 6.0
        assert float(tape.gradient(y, a).numpy()) == 3.0
    with pytest.raises(ValueError, match=r"signal.convolve: an empty input \(shapes \(0,\) and \(1,\)\)"):
        aps_signal.convolve(ap.constant(np.array([])), np.array([1.0]))


# --- scipy.stats.t at a large df and at df = inf ------------------------------------------------------------------
@pytest.mark.parametrize("df", [50.0, 99.9, 100.0, 1e3, 1e6, 1e10, 1e15, 1e20, np.inf])
@pytest.mark.parametrize("method", ["logpdf", "pdf", "cdf", "logcdf"])
def test_t_is_scipys_at_a_large_df_and_the_normal_at_df_inf(df, method):
    """review24a: the difference of gammaln's in the log density cancelled (df = 1e10: logpdf off by 6e-7, 1e15: by 3)
    and the betainc form of the cdf lost its digits (df = 1e15: cdf(1.0) 0.883 for scipy's 0.841); df = inf gave nan
    (scipy: the normal)."""
    xs = np.array([-6.0, -1.0, 0.004, 1.0, 3.5])
    ours = getattr(aps_stats.t, method)(ap.constant(xs), df, 0.0, 1.0).numpy()
    np.testing.assert_allclose(ours, getattr(sst.t, method)(xs, df, 0.0, 1.0), rtol=1e-11, atol=1e-14)


def test_t_log_norm_series_meets_the_gammaln_form_and_its_df_gradient_is_digamma():
    from autoprop.core.prims.special import t_log_norm

    # either side of df = 100, where the series takes over, and far beyond: mpmath's values at 40 digits
    mp = {99.9: -0.9214409939202817077, 100.0: -0.92143849154300455812, 1000.0: -0.91918853316300612511,
          1e10: -0.91893853322967274178}
    np.testing.assert_allclose(t_log_norm(np.array(list(mp))), list(mp.values()), rtol=0, atol=1e-14)
    d = ap.Variable([3.0, 100.0, 1e4])
    with ap.GradientTape() as tape:
        y = np.sum(t_log_norm(d))
    a = d.numpy()
    expect = 0.5 * (ss.digamma((a + 1.0) / 2.0) - ss.digamma(a / 2.0)) - 0.5 / a  # d/d(df) of log c
    # (the digamma difference loses ~1e-16 absolute at df = 1e4, where the gradient is 1/(4 df^2) = 2.5e-9)
    np.testing.assert_allclose(tape.gradient(y, d).numpy(), expect, rtol=1e-9, atol=1e-15)


# --- scipy.special.gammainc's second derivative at x = 0 ---------------------------------------------------------
@pytest.mark.parametrize("a,d2", [(1.0, -1.0), (2.0, 1.0), (2.5, 0.0), (3.0, 0.0)])
def test_gammainc_second_derivative_at_zero_is_autograds(a, d2):
    """review24a: the first derivative's log form exp((a-1) log x - x) / gamma(a) is 0 times 1/x at x = 0, so the
    second derivative was 0 at a = 2, where P''(0) = e^0 (1 - 0) = 1 (autograd's: the power form)."""
    import autograd
    import autograd.scipy.special as ags

    x = ap.constant(np.array([0.0, 0.7]))
    with ap.GradientTape() as outer:
        outer.watch(x)
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = ss.gammainc(a, x) - ss.gammaincc(a, x)  # (= 2 P - 1)
        g = inner.gradient(y, x)
    h = outer.gradient(g, x).numpy()
    ref = autograd.elementwise_grad(autograd.elementwise_grad(lambda v: ags.gammainc(a, v) - ags.gammaincc(a, v)))
    np.testing.assert_allclose(h, ref(np.array([0.0, 0.7])), rtol=1e-12)
    assert h[0] == 2.0 * d2


@pytest.mark.parametrize("a,b,at0,at1", [(2.0, 2.0, 6.0, -6.0), (0.5, 2.0, -np.inf, -0.75), (2.0, 0.5, 0.75, np.inf),
                                         (3.0, 1.0, 0.0, 6.0), (1.0, 1.0, 0.0, 0.0)])
def test_betainc_second_derivative_at_the_ends(a, b, at0, at1):
    """review24a: as gammainc's, betainc's x-derivative x^(a-1) (1-x)^(b-1) / B(a, b) in logs lost its slope at x = 0
    and 1 (I = 3x^2 - 2x^3 for a = b = 2: I''(0) = 6, I''(1) = -6, were 0 and 0). The values: the powers
    differentiated, (a-1) x^(a-2) (1-x)^(b-1) / B - (b-1) x^(a-1) (1-x)^(b-2) / B."""
    x = ap.constant(np.array([0.0, 1.0, 0.4]))
    with ap.GradientTape() as outer:
        outer.watch(x)
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = ss.betainc(a, b, x)
        g = inner.gradient(y, x)
    h = outer.gradient(g, x).numpy()
    np.testing.assert_allclose(h[:2], [at0, at1], rtol=1e-12)
    cd = (ss.betainc(a, b, 0.4 + 1e-5) - 2 * ss.betainc(a, b, 0.4) + ss.betainc(a, b, 0.4 - 1e-5)) / 1e-10
    np.testing.assert_allclose(h[2], cd, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("who,call", [
    ("beta.cdf", lambda p: aps_stats.beta.cdf(0.3, 2.0, p)), ("t.cdf", lambda p: aps_stats.t.cdf(0.3, p)),
    ("t.logcdf", lambda p: aps_stats.t.logcdf(0.3, p)),  # named itself (review24: its own record)
])
def test_a_cdf_refuses_a_shape_parameter_by_the_distributions_name(who, call):
    """review24a: chi2.cdf(x, df) with a watched df was refused naming scipy.special.gammainc's ``a``."""
    p = ap.Variable(3.0)
    with ap.GradientTape(), pytest.raises(TypeError, match=rf"stats\.{who} is recorded in x, loc and scale only.*"
                                                            r"shape parameter (df|a|b) .*carries gradient"):
        call(p)


@pytest.mark.parametrize("x, a, loc, scale, d_gamma, d_chi2", [
    # jax.grad of jax.scipy.stats.gamma.cdf / chi2.cdf (df = 2a) in float64 (jax 0.10.2, peers venv)
    (1.7, 2.5, 0.0, 1.0, -0.26654260855002443, -0.07452656349574549),
    (0.3, 0.7, 0.1, 2.0, -0.536712129284841, -0.21332207096439457),
    (5.0, 3.0, 1.0, 0.5, -0.017791335986496494, -0.08912367893666458),
    (-1.0, 2.0, 0.0, 1.0, 0.0, 0.0),  # below the support: the cdf is 0 for every a
])
def test_gamma_and_chi2_cdfs_are_differentiable_in_their_shape(x, a, loc, scale, d_gamma, d_chi2):
    """gammainc is recorded in a (fixj25), so gamma.cdf's a and chi2.cdf's df are no longer refused (the refusal
    said jax does not differentiate them: it does); central differences agree too."""
    for dist, p, want in ((aps_stats.gamma, a, d_gamma), (aps_stats.chi2, 2 * a, d_chi2)):
        v = ap.Variable(p)
        with ap.GradientTape() as tape:
            y = dist.cdf(x, v, loc, scale)
        got = tape.gradient(y, v).numpy()
        h = 1e-6
        cd = (float(dist.cdf(x, p + h, loc, scale)) - float(dist.cdf(x, p - h, loc, scale))) / (2 * h)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(got, cd, rtol=1e-6, atol=1e-9)
