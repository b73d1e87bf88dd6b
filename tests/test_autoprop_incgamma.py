"""scipy.special.gammainc / gammaincc differentiated in both arguments (autoprop/core/prims/incgamma.py).

Before: a watched ``a`` was refused with "its derivative in a (a series in log(x), which jax and
TensorFlow do not differentiate either)": false, jax differentiates it (``igamma_grad_a``, as TF).
The reference values: ``jax.grad(jax.scipy.special.gammainc, 0)`` (float64) and mpmath's
``diff(gammainc(s, 0, x, regularized=True), a, k)`` at 40 digits (the peers venv), which agree
to 1e-14; and central differences of scipy's own gammainc, computed here.
"""

import numpy as np
import pytest
import scipy.special

import autoprop as ap
from autoprop.scipy import special as aps

# (a, x): dP/da (mpmath), d2P/da2 (mpmath); jax's dP/da agrees with the first to 5e-15 relative
REF = [
    ((0.5, 1.2), -0.31600249979314277, -0.23929120119948208),
    ((1.5, 2.0), -0.2774335642087104, -0.07409338751048228),
    ((3.0, 2.0), -0.2318486720439896, 0.09884154888754006),  # x < a + 1: the series
    ((10.0, 15.0), -0.04008077846711626, -0.0163544718536797),  # x >= a + 1: the continued fraction
    ((100.0, 90.0), -0.02461191684397991, 0.002595492911274581),
    ((0.01, 1e-05), -9.816725261192564, 106.06012808817297),
    ((5.0, 40.0), -1.109352325918427e-12, -2.3405214264699648e-12),  # Q tiny
]
A = np.array([p[0][0] for p in REF])
X = np.array([p[0][1] for p in REF])
D1 = np.array([p[1] for p in REF])
D2 = np.array([p[2] for p in REF])


def _grads(fn, a0, x0):
    a, x = ap.Variable(a0), ap.Variable(x0)
    with ap.GradientTape() as tape:
        y = ap.reduce_sum(fn(a, x))
    return [g.numpy() for g in tape.gradient(y, [a, x])]


@pytest.mark.parametrize("fn", [scipy.special.gammainc, aps.gammainc])
def test_gammainc_gradient_in_a_matches_jax_mpmath_and_central_differences(fn):
    ga, gx = _grads(fn, A, X)
    np.testing.assert_allclose(ga, D1, rtol=1e-13)
    h = 1e-6 * A
    cd = (scipy.special.gammainc(A + h, X) - scipy.special.gammainc(A - h, X)) / (2 * h)
    np.testing.assert_allclose(ga[:-1], cd[:-1], rtol=1e-6)  # (the last: P = 1 - 1e-12, cd is noise)
    np.testing.assert_allclose(gx, np.exp((A - 1) * np.log(X) - X - scipy.special.gammaln(A)), rtol=1e-13)


def test_gammaincc_is_minus_gammainc_in_a_and_forward_mode_agrees():
    ga, _ = _grads(scipy.special.gammaincc, A, X)
    np.testing.assert_allclose(ga, -D1, rtol=1e-13)
    u = np.linspace(0.5, 2.0, len(A))
    a = ap.Variable(A)
    with ap.ForwardAccumulator(a, u) as acc:
        y = scipy.special.gammainc(a, X)
    np.testing.assert_allclose(acc.jvp(y).numpy(), D1 * u, rtol=1e-13)


def test_second_derivatives_in_a_and_mixed_match_mpmath_and_the_formula():
    """d2P/da2 (the series' and fraction's second a-derivatives, mpmath's figures) and
    d/dx dP/da = dP/dx (log x - digamma(a)) (DLMF 8.8.13 differentiated in a), by nested tapes."""
    a, x = ap.Variable(A), ap.Variable(X)
    with ap.GradientTape(persistent=True) as outer:
        with ap.GradientTape() as inner:
            y = ap.reduce_sum(scipy.special.gammainc(a, x))
        ga = ap.reduce_sum(inner.gradient(y, a))
    np.testing.assert_allclose(outer.gradient(ga, a).numpy(), D2, rtol=1e-12)
    dpdx = np.exp((A - 1) * np.log(X) - X - scipy.special.gammaln(A))
    np.testing.assert_allclose(outer.gradient(ga, x).numpy(), dpdx * (np.log(X) - scipy.special.digamma(A)),
                               rtol=1e-12)


def test_edges_and_the_third_derivative_in_a_refused_by_name():
    ga, gx = _grads(scipy.special.gammainc, np.array([2.0, 2.0, -1.0]), np.array([0.0, np.inf, 1.0]))
    assert ga[0] == 0.0 and ga[1] == 0.0 and np.isnan(ga[2])  # P(a, 0) = 0, P(a, inf) = 1 for every a
    a = ap.Variable(2.0)
    with ap.GradientTape() as t3:
        with ap.GradientTape() as t2:
            with ap.GradientTape() as t1:
                y = scipy.special.gammainc(a, 3.0)
            d1 = t1.gradient(y, a)
        d2 = t2.gradient(d1, a)
    with pytest.raises(TypeError, match=r"third derivative of scipy.special.gammainc.*in a"):
        t3.gradient(d2, a)
