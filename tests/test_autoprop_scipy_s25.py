"""review25a's findings in autoprop.scipy (session 25): sqrtm's gradient at a matrix with a tiny but nonzero
eigenvalue (inf for 2e10), the scale gradient of gamma/beta/chi2.cdf with a point at loc (nan), rgamma's
slope far left of 0. References: the exact eigenbasis formula, mpmath at 60 digits (values written here:
mpmath is not a dependency), HIPS autograd, central differences, scipy."""

import warnings

import autograd
import autograd.numpy as agn
import autograd.scipy.linalg as agl
import numpy as np
import pytest

import autoprop as ap
from autoprop.scipy import linalg as al
from autoprop.scipy import stats as st

G = np.array([[1.0, 2.0], [3.0, 4.0]])


def _sqrtm_grad(A, g=G):
    x = ap.Variable(np.asarray(A, dtype=np.float64))
    with ap.GradientTape() as t:
        y = (al.sqrtm(x) * g).sum()
    return np.asarray(t.gradient(y, x))


@pytest.mark.parametrize("e", [1e-20, 4e-16, 1e-30])
def test_sqrtm_gradient_at_a_tiny_eigenvalue_is_the_exact_finite_one(e):
    """review25a H3: at A = diag(1, 1e-20) the gradient was [0.5, 2, 3, inf] and at diag(1, 4e-16) inf too (a
    tiny eigenvalue was called 0 under sqrt(n eps)); Y = diag(1, sqrt(e)) is exact, and dA_ij = G_ij / (s_i + s_j)
    (Higham 2008, (6.5) in Y's eigenbasis): 2e10, 1e8, 2e15. HIPS autograd gives the same."""
    s = np.sqrt([1.0, e])
    exact = G / (s[:, None] + s[None, :])
    ours = _sqrtm_grad(np.diag([1.0, e]))
    np.testing.assert_allclose(ours, exact, rtol=1e-12)
    if e >= 1e-20:
        ag = autograd.grad(lambda a: agn.sum(agl.sqrtm(a) * G))(np.diag([1.0, e]))
        np.testing.assert_allclose(ours, ag, rtol=1e-12)


def test_sqrtm_gradient_near_singular_triangular_against_mpmath():
    """A non-diagonal A = [[1, 0.5], [0, e]] (eigenvalues exactly 1 and e): the VJP L solves Y^T L + L Y^T = G
    with Y exact (y12 = 0.5 / (1 + sqrt(e))), solved by mpmath at 60 digits. (0, 0) loses digits to cancellation
    (1e-10 out of terms of size 1: rtol 1e-6 there)."""
    cases = {1e-20: [1.0e-10, 2.0, -7.5e9, 1.5e10],
             4e-16: [1.99999994e-08, 1.99999996, -3.7499996e7, 7.5000001e7],
             1e-30: None}
    for e, exact in cases.items():
        ours = _sqrtm_grad([[1.0, 0.5], [0.0, e]]).ravel()
        if exact is not None:
            np.testing.assert_allclose(ours[1:], exact[1:], rtol=1e-7)
            np.testing.assert_allclose(ours[0], exact[0], rtol=1e-6)
        assert np.all(np.isfinite(ours))
    # A = [[2, -1], [0, 1e-30]]: s = (sqrt 2, 1e-15), still resolved: mpmath 0.70710678118654757, 1.4142135623730951,
    # 1.25e15, 2.5e15
    np.testing.assert_allclose(_sqrtm_grad([[2.0, -1.0], [0.0, 1e-30]]).ravel(),
                               [0.70710678118654757, 1.4142135623730951, 1.25e15, 2.5e15], rtol=1e-9)


def test_sqrtm_tangent_and_second_order_at_a_tiny_eigenvalue_are_given():
    """review25a H3: ForwardAccumulator at diag(1, 1e-20) raised 'A is singular'; dY = dA_ij / (s_i + s_j):
    5e9 at tangent diag(0, 1). The second derivative of sum(sqrtm(A)) in that direction: d2/dt2 sqrt(1e-20 + t) =
    -1/4 (1e-20)^(-3/2) = -2.5e29."""
    A = ap.Variable(np.diag([1.0, 1e-20]))
    with ap.ForwardAccumulator(A, np.diag([0.0, 1.0])) as acc:
        Y = al.sqrtm(A)
    np.testing.assert_allclose(np.asarray(acc.jvp(Y)), [[0.0, 0.0], [0.0, 5e9]], rtol=1e-12, atol=0)
    with ap.GradientTape() as t2:
        with ap.GradientTape() as t:
            y = al.sqrtm(A).sum()
        g11 = t.gradient(y, A)[1, 1]
    h = np.asarray(t2.gradient(g11, A))
    np.testing.assert_allclose(h[1, 1], -2.5e29, rtol=1e-9)
    # the singular case itself stays refused for a tangent (test_autoprop_scipy_s24r: inf in reverse mode)
    B = ap.Variable(np.diag([1.0, 0.0]))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="sqrtm: A is singular"):
            with ap.ForwardAccumulator(B, np.diag([0.0, 1.0])):
                al.sqrtm(B)


CDFS = {  # name: (autoprop's cdf(x, scale), scipy's)
    "gamma": (lambda x, s: _aps().gamma.cdf(x, 0.5, 0.0, s), lambda x, s: _sst().gamma.cdf(x, 0.5, 0.0, s)),
    "beta": (lambda x, s: _aps().beta.cdf(x, 0.5, 2.0, 0.0, s), lambda x, s: _sst().beta.cdf(x, 0.5, 2.0, 0.0, s)),
    "chi2": (lambda x, s: _aps().chi2.cdf(x, 1.0, 0.0, s), lambda x, s: _sst().chi2.cdf(x, 1.0, 0.0, s)),
}


def _aps():
    from autoprop.scipy import stats

    return stats


def _sst():
    import scipy.stats

    return scipy.stats


@pytest.mark.parametrize("name", list(CDFS))
def test_cdf_scale_gradient_with_a_point_at_loc_is_finite(name):
    """review25a M1: gamma/beta/chi2.cdf at x == loc with shape < 1 made the whole scale gradient nan (the density
    is infinite at 0, times dy/dscale = 0). At x == loc the cdf is 0 for every scale, so that entry's derivative is
    0, as off the support; the sum's slope is the other point's: central differences of scipy's cdf (h = 1e-6):
    gamma -0.15767343, beta -0.13608276, chi2(df=1) -0.15559955 (review25a's r/cdf_scale.py)."""
    ours, theirs = CDFS[name]
    xs = np.array([0.0, 1.0])
    s = ap.Variable(1.5)
    with ap.GradientTape() as t:
        y = ours(xs, s).sum()
    g = float(np.asarray(t.gradient(y, s)))
    h = 1e-6
    cd = (theirs(xs, 1.5 + h).sum() - theirs(xs, 1.5 - h).sum()) / (2 * h)
    assert np.isfinite(g) and g == pytest.approx(cd, rel=1e-7)
    assert g == pytest.approx({"gamma": -0.15767343, "beta": -0.13608276, "chi2": -0.15559955}[name], rel=1e-7)
    x = ap.Variable(xs)
    with ap.GradientTape() as t:  # in x: 0 at the support's edge (the cdf is 0 there and to its left)
        y = ours(x, 1.5).sum()
    gx = np.asarray(t.gradient(y, x))
    assert gx[0] == 0.0 and gx[1] == pytest.approx((theirs(1.0 + h, 1.5) - theirs(1.0 - h, 1.5)) / (2 * h), rel=1e-7)
    np.testing.assert_allclose(np.asarray(ours(xs, 1.5)), theirs(xs, 1.5), rtol=1e-14, atol=0)


@pytest.mark.parametrize("b", [0.5, 1.0, 2.0])
def test_beta_cdf_with_a_point_at_the_upper_edge_is_finite(b):
    """review26a L: beta.cdf with b < 1 and a point at x == loc + scale made the loc and scale gradients -inf (and
    d/dx inf there). The cdf is 1 there, taken as constant as at the lower edge (the derivative from outside);
    jax.grad of jax.scipy.stats.beta.cdf (clip) gives 0 there for every b, and the other point's slope:
    at b = 0.5 [[0.10825317547305485, 0.0], -0.10825317547305485, -0.027063293868263713]; central differences
    of scipy's cdf at the other point alone agree."""
    s, l, x = ap.Variable(2.0), ap.Variable(0.0), ap.Variable(np.array([0.5, 2.0]))
    with ap.GradientTape() as t:
        y = ap.reduce_sum(st.beta.cdf(x, 2.0, b, l, s))
    gx, gl, gs = (np.asarray(g) for g in t.gradient(y, [x, l, s]))
    assert gx[1] == 0.0 and np.all(np.isfinite([gx[0], gl, gs]))
    f = _sst().beta.cdf
    h = 1e-6
    assert gx[0] == pytest.approx((f(0.5 + h, 2.0, b, 0.0, 2.0) - f(0.5 - h, 2.0, b, 0.0, 2.0)) / (2 * h), rel=1e-7)
    assert float(gl) == pytest.approx(-gx[0], rel=1e-14)
    assert float(gs) == pytest.approx((f(0.5, 2.0, b, 0.0, 2.0 + h) - f(0.5, 2.0, b, 0.0, 2.0 - h)) / (2 * h), rel=1e-7)
    if b == 0.5:
        np.testing.assert_allclose([gx[0], float(gl), float(gs)],
                                   [0.10825317547305485, -0.10825317547305485, -0.027063293868263713], rtol=1e-13)


def test_rgamma_slope_at_zeros_left_of_minus_17():
    """review25a's mutation (_drgamma's overflow cut ``x < -170`` made ``x < -17``): rgamma'(-n) = (-1)^n n!, finite
    up to n = 170: 20! = 2432902008176640000 at -20, 170! = 7.257415615307999e306 at -170 (math.factorial)."""
    import math

    from autoprop.scipy import special as sp

    x = ap.Variable(np.array([-20.0, -21.0, -170.0]))
    with ap.GradientTape() as t:
        y = sp.rgamma(x).sum()
    g = np.asarray(t.gradient(y, x))
    np.testing.assert_allclose(g, [float(math.factorial(20)), -float(math.factorial(21)), float(math.factorial(170))],
                               rtol=1e-13, atol=0)


def test_rgamma_slope_and_curvature_near_its_zeros():
    """review25a LOW: near (not at) a zero -n, -rgamma(x) digamma(x) multiplies a tiny and a huge factor and its
    derivative cancels: rgamma'' at -1 + 1e-9 was 205.48 (mpmath 0.8456). Within 0.1 of -n the reflection
    formula's derivative is used. References: mpmath.diff(mpmath.rgamma, x, k) at 50 digits."""
    from autoprop.scipy import special as sp

    x0 = [-1 + 1e-9, -1e-9, -5 + 1e-7, -19.999999, -2.00000001, -0.03, -3.05]
    d1 = [-0.99999999915443135002, 0.99999999884556866823, -119.99995905317548694, 2432887310920319153.4,
          2.0000000369113725666, 0.96360140618082203905, -6.7167307886061349273]
    d2 = [0.84556867759549648071, 1.1544313337383341498, 409.46824754108224743, -14697234838530689916.0,
          -3.691137217789678085, 1.2719448080799590611, 13.49794809640837044]
    x = ap.Variable(np.array(x0))
    with ap.GradientTape() as t2:
        with ap.GradientTape() as t:
            y = sp.rgamma(x).sum()
        g = t.gradient(y, x)
    h = t2.gradient(g, x)
    np.testing.assert_allclose(np.asarray(g), d1, rtol=1e-13, atol=0)
    np.testing.assert_allclose(np.asarray(h), d2, rtol=1e-12, atol=0)
    with ap.ForwardAccumulator(x, np.ones(len(x0))) as acc:
        y = sp.rgamma(x)
    np.testing.assert_allclose(np.asarray(acc.jvp(y)), d1, rtol=1e-13, atol=0)


def test_t_logcdf_beyond_the_square_root_of_the_largest_float():
    """review25a LOW: t.logcdf for |x| > 1.3e154 was -inf (x^2 overflowed in log1p(x^2 / df)). References: mpmath at
    60 digits, log(betainc(df/2, 1/2, 0, df/(df + x^2), regularized)/2) and its derivative by mpmath.diff."""
    from autoprop.scipy import stats as aps

    xs = np.array([-1e240, -1e155, -1e200, -1e300, -2e154])
    dfs = np.array([3.0, 3.0, 1e4, 1.0, 30.0])
    val = [-1657.7635435166682926, -1070.6043448031866431, -4559124.0082619296468, -691.92025778406310543,
           -10610.347453340567013]
    d1 = [2.9999999999999999582e-240, 2.9999999999999999785e-155, 1.0000000000000000303e-196,
          9.999999999999999475e-301, 1.4999999999999999446e-153]
    x = ap.Variable(xs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no overflow warning either)
        with ap.GradientTape() as t:
            y = aps.t.logcdf(x, dfs)
            s = y.sum()
        g = t.gradient(s, x)
    np.testing.assert_allclose(np.asarray(y), val, rtol=1e-13, atol=0)
    # the slope is exp(log pdf - log cdf): at df = 1e4 both are -4.6e6, so their 1e-16 relative becomes 6e-10
    np.testing.assert_allclose(np.asarray(g), d1, rtol=2e-9, atol=0)


def test_t_logcdf_to_the_end_of_the_float_range():
    """review26a LOW: past |x| = 1.34e304 t.logcdf was again -inf with a NaN slope and an overflow warning (the
    far branch squared x / 1e150). References: mpmath at 60 digits, log(betainc(df/2, 1/2, 0, df/(df + x^2),
    regularized)/2) and pdf / cdf."""
    from autoprop.scipy import stats as aps

    xs = np.array([-2e304, -1e306, -1.7e308, -1.7e308])
    dfs = np.array([3.0, 3.0, 1.0, 30.0])
    val = [-2101.9393229132048996, -2113.675391929489338, -710.87156677907764121, -21243.415015088124824]
    d1 = [1.5000000000000000911e-304, 2.9999999999999999484e-306, 5.8823529411764707999e-309, 1.76470588235294124e-307]
    x = ap.Variable(xs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no overflow warning either)
        with ap.GradientTape() as t:
            s = aps.t.logcdf(x, dfs).sum()
        g = t.gradient(s, x)
    np.testing.assert_allclose(np.asarray(aps.t.logcdf(xs, dfs)), val, rtol=1e-13, atol=0)
    # the slope is exp(log pdf - log cdf), both near -2e4: their 1e-16 relative becomes 2e-12
    np.testing.assert_allclose(np.asarray(g), d1, rtol=1e-11, atol=0)


def test_sqrtm_gradient_where_eig_cannot_resolve_a_small_eigenvalue_is_inf():
    """review26a M: at A = Q diag(1, l) Q^T (Q a rotation by 0.3), stored in floats, A's small eigenvalue is known
    only to ~eps ||A||; for l = 1e-20 and 0 the stored matrix's is 9.9e-18, and session 25's test |s| <= n eps max|s|
    (right for a diagonal A only) called it resolved: a finite gradient 16% off the exact one at the stored matrix
    (mpmath at 60 digits: dA[0, 0] 3.87044e6 for autoprop's 3.26255e6). Now +-inf, as at an exact 0; just above the
    resolution the exact figures (mpmath, G = [[0.3, -0.7], [1.1, 0.4]]) within the decompositions' accuracy."""
    th = 0.3
    Q = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    G2 = np.array([[0.3, -0.7], [1.1, 0.4]])
    for lam in (1e-20, 0.0, 1e-16):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            g = _sqrtm_grad(Q @ np.diag([1.0, lam]) @ Q.T, G2)
        assert np.isinf(g[0, 0]) and np.all(np.isinf(g) | (g == 0))
    g = _sqrtm_grad(Q @ np.diag([1.0, 1e-12]) @ Q.T, G2)
    assert g[0, 0] == pytest.approx(12153.9, rel=2e-5)
    g = _sqrtm_grad(Q @ np.diag([1.0, 1e-10]) @ Q.T, G2)
    assert g[0, 0] == pytest.approx(1215.48, rel=1e-5)
