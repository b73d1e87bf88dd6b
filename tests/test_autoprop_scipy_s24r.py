"""review24's leftovers in autoprop.scipy: rgamma's slope at its zeros, sqrtm at a singular matrix,
multivariate_normal's mean against cov, t.logcdf far in the tail (references: mpmath at 40 digits, scipy)."""

import numpy as np
import pytest

import autoprop as ap
from autoprop.scipy import special as sp


def _grads(f, x0):
    x = ap.Variable(np.asarray(x0, dtype=np.float64))
    with ap.GradientTape() as t2:
        with ap.GradientTape() as t:
            y = f(x)
        g = t.gradient(y, x)
    return np.asarray(g), np.asarray(t2.gradient(g, x))


def test_rgamma_slope_at_its_zeros():
    """d/dx 1/gamma(x) at x = -n is (-1)^n n! (it was nan: 0 times digamma's pole); the second derivative there
    too (mpmath.diff(mpmath.rgamma, x, 2) at 40 digits: 1.1544313298030657 = 2 euler_gamma at 0)."""
    x = [0.0, -1.0, -2.0, -3.0, -10.0, -0.5, 1.5]
    g, h = _grads(lambda t: sp.rgamma(t).sum(), x)
    assert np.allclose(g, [1.0, -1.0, 2.0, -6.0, 3628800.0, 0.010293631611320775, -0.0411745264452831],
                       rtol=1e-13, atol=0)
    assert np.allclose(h, [1.1544313298030657, 0.8455686701969343, -3.6911373403938685, 15.073412021181605,
                           -17068079.590410635, 2.5200855519537972, -1.053308871051089], rtol=1e-12, atol=0)
    x = ap.Variable(np.array([-171.0, -172.0]))
    with ap.GradientTape() as t:
        y = sp.rgamma(x).sum()
    g = np.asarray(t.gradient(y, x))
    assert np.array_equal(g, [-np.inf, np.inf])  # (-1)^n n! overflows


def test_multivariate_normal_dimension_as_scipy_infers_it():
    """scipy (1.17, _process_parameters_psd) takes the dimension from mean's size, else from a matrix cov, else 1,
    and a one-dimensional distribution needs a cov of one entry: a scalar mean with a (2, 2) or (2,) cov, or no mean
    with a (2,) cov, is refused (it was broadcast to a 2-D distribution: a value scipy never gives)."""
    from scipy.stats import multivariate_normal as mvn

    from autoprop.scipy.stats import multivariate_normal as amvn

    x = [0.1, 0.2]
    for mean, cov in ((0.5, np.eye(2)), (0.5, [1.0, 2.0]), (None, [1.0, 2.0]), ([0.5, 0.2], [1.0, 2.0, 3.0])):
        with pytest.raises(ValueError):
            mvn.logpdf(x, mean, cov)
        with pytest.raises(ValueError, match="multivariate_normal: .*cov"):
            amvn.logpdf(x, mean, cov)
    for mean, cov in ((0.5, [[2.0]]), ([0.5], [2.0]), (None, 3.0), ([0.5, 0.2], 2.0), (None, np.eye(2)),
                      ([0.5, 0.2], [1.0, 2.0]), (0.5, 2.0)):
        assert np.allclose(np.asarray(amvn.logpdf(x, mean, cov)), mvn.logpdf(x, mean, cov), rtol=1e-12, atol=0)


def test_sqrtm_gradient_at_a_singular_matrix_is_infinite_where_it_is():
    """review24: at A = diag(1, 0) the gradient of sum(sqrtm(A)) was 4.5e15 (autograd gives the same: its Sylvester
    solve divides by rounding noise). In Y's eigenbasis dA_ij = h_ij / (s_i + s_j): at the null eigenvalue the
    derivative is infinite (d sqrt(lam)/d lam = 1 / (2 sqrt(lam))), 1 / (1 + 0) beside it; a gradient not reaching
    the null space stays finite; higher order and tangents are refused there."""
    from autoprop.scipy import linalg as al

    def grad(A, G):
        x = ap.Variable(np.asarray(A, dtype=np.float64))
        with ap.GradientTape() as t:
            y = (al.sqrtm(x) * G).sum()
        return np.asarray(t.gradient(y, x))

    with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore")  # scipy's LinAlgWarning: the matrix is singular
        assert np.array_equal(grad([[1.0, 0.0], [0.0, 0.0]], np.ones((2, 2))), [[0.5, 1.0], [1.0, np.inf]])
        # rank one [[2, 1], [1, 0.5]]: null vector (1, -2) / sqrt(5), so the signs of its outer product
        assert np.array_equal(grad([[2.0, 1.0], [1.0, 0.5]], np.ones((2, 2))), [[np.inf, -np.inf], [-np.inf, np.inf]])
        assert np.array_equal(grad([[1.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]]), [[0.5, 0.0], [0.0, 0.0]])
        # near-singular but not singular: the Sylvester solve, 1 / (2 sqrt(1e-12)) = 5e5 exactly
        assert np.allclose(grad([[1.0, 0.0], [0.0, 1e-12]], np.ones((2, 2))), [[0.5, 1 / (1 + 1e-6)],
                                                                             [1 / (1 + 1e-6), 5e5]], rtol=1e-9)
        x = ap.Variable(np.array([[1.0, 0.0], [0.0, 0.0]]))
        with pytest.raises(ValueError, match="sqrtm: A is singular"):
            with ap.GradientTape() as t2:
                with ap.GradientTape() as t:
                    y = al.sqrtm(x).sum()
                g = t.gradient(y, x)
            t2.gradient(g.sum(), x)


def test_t_logcdf_far_in_the_lower_tail_is_finite_and_exact():
    """review24: t.logcdf(-100, df=1e4) was log(0) = -inf (scipy's too) with a nan gradient; the true value and
    slope are finite. References: mpmath at 50 digits, log(betainc(df/2, 1/2, 0, df/(df+x^2))/2) (ncdf at df =
    inf), its first and second derivatives by mpmath.diff. Where stdtr does not underflow the value is scipy's."""
    from scipy.stats import t as st_t

    from autoprop.scipy import stats as aps

    xs = np.array([-100.0, -40.0, -30.0, -1e5, -1e3, -2.0, 0.5, 3.0, -40.0])
    dfs = np.array([1e4, 1e6, 1e3, 1.0, 30.0, 1e4, 5.0, 2.0, np.inf])
    val = [-3470.9135628836716, -803.968324750342, -324.9275079010712, -12.657655350852963, -158.8430025917148,
           -3.7825911775789804, -0.38441243277190856, -0.04890980361596748, -804.6084420137538]
    d1 = [50.00499800139854, 39.961031147588635, 15.806944023233713, 9.999999999333333e-06, 0.029999128151107387,
          2.372223207621227, 0.48163069633041633, 0.028784071850490894, 40.02496884720726]
    d2 = [9.994006191394569e-05, -0.9945891077908942, -0.026569344323790663, 9.999999998e-11, 2.9997384505535363e-05,
          -0.8844192963529343, -0.5071856684079596, -0.024379127033604956, -0.9993773316214086]
    x = ap.Variable(xs)
    with ap.GradientTape() as t2:
        with ap.GradientTape() as t:
            y = aps.t.logcdf(x, dfs)
            s = y.sum()
        g = t.gradient(s, x)
    h = t2.gradient(g, x)
    assert np.allclose(np.asarray(y), val, rtol=1e-12, atol=0)
    assert np.allclose(np.asarray(g), d1, rtol=1e-9, atol=0)
    # the second derivative pdf/cdf (dlog pdf - pdf/cdf) cancels far in the tail (2500 - 2500 to 1e-4 at x = -100):
    # the value's 1e-16 relative becomes 2e-5 there
    assert np.allclose(np.asarray(h), d2, rtol=5e-5, atol=1e-12)
    ok = np.isfinite(st_t.logcdf(xs, dfs))  # where scipy's is finite, the same value
    assert np.allclose(np.asarray(y)[ok], st_t.logcdf(xs, dfs)[ok], rtol=1e-13, atol=0)
