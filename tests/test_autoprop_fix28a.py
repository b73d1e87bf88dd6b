"""Session 28, fixa28 (review28a's findings): log_ndtr's slope in the upper tail (M2), t.logcdf's value in the upper
tail (M3), i0e/i1e's derivatives below the Hankel switch (L1), pickling at protocols 0 and 1 (L3), setflags (L4).
Reference values: mpmath (600 digits for log_ndtr, 50 for t.logcdf, 60 for the Bessel functions), printed by
/work/main/.venv-peers/bin/python and written here (mpmath is not in the test venv)."""

import warnings

import numpy as np
import pytest

import autoprop as ap
from autoprop.scipy import special as aps
from autoprop.scipy import stats as ast

# x, phi(x)/Phi(x), -phi/Phi (x + phi/Phi): mpmath at 600 digits (npdf / ncdf)
_LOG_NDTR_SLOPES = [
    (-1000.0, 1000.000999998, -0.999999000006),
    (-100.0, 100.00999800099926, -0.9999000599500517),
    (-38.5, 38.52593909685449, -0.9993280656436341),
    (-10.0, 10.098093233962512, -0.9905546221743438),
    (-1.0, 1.525135276160981, -0.8009023344296512),
    (-0.001, 0.7985212895629114, -0.636837728595652),
    (-0.0, 0.7978845608028654, -0.6366197723675814),
    (0.0, 0.7978845608028654, -0.6366197723675814),
    (0.001, 0.7972480500564331, -0.6364017013688413),
    (0.5, 0.5091604338370335, -0.5138245643036329),
    (1.0, 0.2875999709391784, -0.3703137142233946),
    (5.0, 1.4867199409049056e-06, -7.433601914860711e-06),
    (10.0, 7.694598626706419e-23, -7.694598626706419e-22),
    (20.0, 5.520948362159764e-88, -1.1041896724319527e-86),
    (26.6, 9.040829064488007e-155, -2.40486053115381e-153),
    (27.3, 5.79752802910885e-163, -1.5827251519467161e-161),
    (30.0, 1.4736461348785476e-196, -4.420938404635642e-195),
    (35.0, 3.940396277136024e-267, -1.3791386969976086e-265),
    (37.5, 1.7282337322841054e-306, -6.480876496065394e-305),
]

_LOG_CDFS = {"log_ndtr": aps.log_ndtr, "t.logcdf df=inf": lambda x: ast.t.logcdf(x, np.inf)}


def _first_second_jvp(f, x0):
    x = ap.Variable(np.asarray(x0, np.float64))
    with ap.GradientTape() as t2:
        with ap.GradientTape() as t1:
            y = ap.reduce_sum(f(x))
        g = t1.gradient(y, x)
        gs = ap.reduce_sum(g)
    h = t2.gradient(gs, x)
    with ap.ForwardAccumulator(x, np.ones_like(x.numpy())) as acc:
        y = f(x)
    return g.numpy(), h.numpy(), acc.jvp(y).numpy()


@pytest.mark.parametrize("name", sorted(_LOG_CDFS))
@pytest.mark.parametrize("x0, d1, d2", _LOG_NDTR_SLOPES)
def test_log_ndtr_first_second_derivative_and_jvp_are_mpmaths(name, x0, d1, d2):
    """review28a M2: the second derivative divided by erfcx(-x/sqrt 2)^2, which overflowed from x ~ 26.6 (-0 at x =
    30, mpmath -4.42e-195); the first was 2.3e-13 off near x = 37 (the rounding of x * x in exp(-x^2/2))."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g, h, j = _first_second_jvp(_LOG_CDFS[name], x0)
    np.testing.assert_allclose([g, j], [d1, d1], rtol=1e-14, atol=0)
    np.testing.assert_allclose(h, d2, rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", sorted(_LOG_CDFS))
def test_log_ndtr_slopes_of_a_vector_across_the_switch(name):
    """Both branches in one array (x < 0: the erfcx form, x >= 0: exp(-x^2/2 - log_ndtr)): finite, no warning, each
    element its scalar value; beyond x ~ 38.5 the slope is subnormal or 0, as mpmath's rounds."""
    xs = np.array([r[0] for r in _LOG_NDTR_SLOPES] + [38.5, 40.0, 1e3, 1e200])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g, h, j = _first_second_jvp(_LOG_CDFS[name], xs)
    n = len(_LOG_NDTR_SLOPES)
    np.testing.assert_allclose(g[:n], [r[1] for r in _LOG_NDTR_SLOPES], rtol=1e-14, atol=0)
    np.testing.assert_allclose(h[:n], [r[2] for r in _LOG_NDTR_SLOPES], rtol=1e-14, atol=0)
    np.testing.assert_array_equal(j, g)
    np.testing.assert_allclose(g[n:], [5.4e-323, 0.0, 0.0, 0.0], rtol=0, atol=1e-322)  # mpmath: 5.4e-323, 1.5e-349..
    np.testing.assert_allclose(h[n:], [-2.09e-321, 0.0, 0.0, 0.0], rtol=0, atol=1e-321)


# x, df, log t.cdf(x, df): mpmath at 50 digits, log1p(-betainc(df/2, 1/2, 0, df/(df + x^2)) / 2) (DLMF 8.17.2;
# df = inf: log1p(-ncdf(-x)))
_T_LOGCDF_UPPER = [
    (0.5, 1.0, -0.4345073545177282),
    (3.0, 1.0, -0.10804899566097342),
    (8.0, 1.0, -0.04038815547594649),
    (9.0, 1.0, -0.035858590403834545),
    (20.0, 1.0, -0.01603004870929904),
    (1000.0, 1.0, -0.00031836045139167426),
    (0.5, 2.5, -0.3987610703735508),
    (3.0, 2.5, -0.03696283376797267),
    (8.0, 2.5, -0.003835668846998339),
    (9.0, 2.5, -0.0028780908246593124),
    (20.0, 2.5, -0.00039977402123771085),
    (1000.0, 2.5, -2.2747464207031013e-08),
    (0.5, 10.0, -0.37680010742828435),
    (3.0, 10.0, -0.0066941836454523515),
    (8.0, 10.0, -5.887488726060817e-06),
    (9.0, 10.0, -2.0690266652752007e-06),
    (20.0, 10.0, -1.0730311591778238e-09),
    (1000.0, 10.0, -1.2304123550866355e-26),
    (0.5, 10000.0, -0.36895437082900656),
    (3.0, 10000.0, -0.0013541405295786793),
    (8.0, 10000.0, -6.910604364532694e-16),
    (9.0, 10000.0, -1.3339216347343313e-19),
    (20.0, 10000.0, -1.3823262932703867e-87),
    (1000.0, 10000.0, -0.0),
    (0.5, np.inf, -0.3689464152886564),
    (3.0, np.inf, -0.0013508099647481938),
    (8.0, np.inf, -6.220960574271786e-16),
    (9.0, np.inf, -1.1285884059538405e-19),
    (20.0, np.inf, -2.7536241186062337e-89),
    (1000.0, np.inf, -0.0),
]


@pytest.mark.parametrize("x0, df, want", _T_LOGCDF_UPPER)
def test_t_logcdf_upper_tail_keeps_its_digits(x0, df, want):
    """review28a M3: log(stdtr(df, x)) rounds stdtr near 1: -6.661e-16 at x = 8, df = inf (mpmath -6.221e-16), 0 at
    x = 9 (-1.13e-19); now log1p(-stdtr(df, -x)), log_ndtr at df = inf (scipy's ndtr(-x) itself is x^2 eps off)."""
    got = ast.t.logcdf(np.float64(x0), df).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    assert np.signbit(got) or got == 0.0


#: ``(x, log Phi(x))`` in the normal's lower tail (mpmath 1.3, 40 digits: ``log(ncdf(x))``; scipy's log_ndtr agrees
#: to 2e-16): stdtr(inf, x) underflows to 0 below x ~ -38.5, so log(stdtr) is -inf there.
_T_LOGCDF_INF_LOWER = [
    (-10.0, -53.23128515051247057834703),
    (-38.5, -745.6952702904110813296103),
    (-40.0, -804.6084420137537881666068),
]


@pytest.mark.parametrize("x0, want", _T_LOGCDF_INF_LOWER)
def test_t_logcdf_at_df_inf_is_the_normals_log_cdf_in_the_lower_tail(x0, want):
    """review29 mutant tinf_no_log_ndtr (``out[inf] = log_ndtr(x[inf])`` removed) survived: only the slopes at
    df = inf were tested. Without it, log(stdtr(inf, -40)) = log(0) = -inf; mpmath's -804.608..."""
    got = ast.t.logcdf(np.float64(x0), np.inf).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def test_t_logcdf_upper_tail_slope_is_the_density_over_the_cdf():
    """f(x) / F(x) at x = 9, df = 10 and at x = 8, df = inf (mpmath, 50 digits): the derivative takes
    the value's new digits without change."""
    x = ap.Variable(np.array([9.0, 8.0]))
    with ap.GradientTape() as t:
        y = ap.reduce_sum(ast.t.logcdf(x, np.array([10.0, np.inf])))
    np.testing.assert_allclose(t.gradient(y, x).numpy(), [2.0670159568157056e-06, 5.052271083536895e-15],
                               rtol=1e-13)
