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


# (a, z) with x = a + z sqrt(a): dP/da, d2P/da2 by mpmath.quad at 50 digits of int (log t - psi(a))^k' t^(a-1)
# e^-t / Gamma(a) dt (k' = 1; (log t - psi)^2 - psi'(a) for the second), mpmath's own loggamma, digamma and
# polygamma; at (1e4, -2) also mpmath.diff of gammainc (agrees to 1e-16). jax.grad at (1e10, 0): -3.98945156e-06,
# 7e-6 off (its prefactor x^a e^-x / Gamma(a) loses eps a log a; autoprop's did too: 2.5e-7 at 1e8).
LARGE_A = [
    ((1e4, -2.0), -0.00053081913130245155, 1.0724073357700988e-5),
    ((1e6, 0.5), -0.00035199202962341053, -1.7595204510217765e-7),
    ((1e8, -0.3), -3.8139319344825089e-5, 1.1441967443355345e-9),
    ((1e10, 0.0), -3.989422804047572e-6, None),  # (d2 crosses 0 near x = a: 3.3e-27, autoprop ~1e-15 / a off)
    ((1e13, 3.0), -1.4014768465684939e-9, -1.329557046274762e-15),
    ((1e16, -8.0), -5.0522626630915929e-23, 4.0418102921456882e-30),
    ((1e6, 35.0), -4.3285738822961806e-264, -1.489091296108714e-265),
]


def test_large_a_by_quadrature_each_element_alone_and_in_a_batch():
    """a >= 1e4 is the quadrature (review26a: one element a = 1e10 beside x ~ a made the series of the whole
    batch NaN after 3-5 s, and the prefactor lost 2.5e-7 at a = 1e8): each element alone and the batch with
    small ones (series and fraction) beside it give the same figures, mpmath's to 1e-11."""
    from autoprop.core.prims.incgamma import gammainc_a_derivative
    a0 = np.array([p[0][0] for p in LARGE_A])
    x0 = a0 + np.array([p[0][1] for p in LARGE_A]) * np.sqrt(a0)
    d1 = np.array([p[1] for p in LARGE_A])
    a_all, x_all = np.concatenate([a0, A]), np.concatenate([x0, X])
    ga, _ = _grads(scipy.special.gammainc, a_all, x_all)
    np.testing.assert_allclose(ga, np.concatenate([d1, D1]), rtol=1e-11, atol=0)
    for i, (_, want1, want2) in enumerate(LARGE_A):
        assert gammainc_a_derivative(a0[i], x0[i], 1) == pytest.approx(want1, rel=1e-11, abs=0)
        if want2 is not None:
            assert gammainc_a_derivative(a0[i], x0[i], 2) == pytest.approx(want2, rel=1e-10, abs=0)
        else:
            assert abs(gammainc_a_derivative(a0[i], x0[i], 2)) < 1e-15 / a0[i]
    # gamma.cdf and chi2.cdf take the same path (review26a: [nan nan])
    import autoprop.scipy.stats as st
    a = ap.Variable(np.array([4.0, 2e10]))
    with ap.GradientTape() as tape:
        y = ap.reduce_sum(st.chi2.cdf(np.array([1.0, 2e10]), a))
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), [-0.07551711845458525, 0.5 * -3.989422804047572e-6],
                               rtol=1e-11)


def test_an_element_that_does_not_converge_is_nan_alone(monkeypatch):
    """The series and the fraction stop per element: one element beyond the term limit is NaN, the others keep
    their values (before: the whole branch NaN)."""
    import autoprop.core.prims.incgamma as ig
    monkeypatch.setattr(ig, "_MAXITER", 60)
    got = ig.gammainc_a_derivative(np.array([3.0, 5000.0, 10.0, 5000.0]), np.array([2.0, 4990.0, 15.0, 5010.0]), 1)
    np.testing.assert_allclose(got[[0, 2]], [D1[2], D1[3]], rtol=1e-13)
    assert np.isnan(got[1]) and np.isnan(got[3])


def test_third_derivative_da2_dx_with_a_a_variable():
    """d3P/(da2 dx) is recorded (gammainc_daa's x-derivative dP/dx ((log x - psi(a))^2 - psi'(a))): with a a
    Variable the outer tape, asked for x only, called gammainc_daa's VJP for a and raised 'd3P/da3 is not
    recorded' (review26a); the walk calls no VJP for an input no source is computed from. mpmath.diff of
    gammainc(s, 0, z, regularized=True) at 30 digits: -0.028108381380361245 (a trigamma sign flipped in the
    formula, review26a's surviving mutant, gives 0.1645)."""
    a, x = ap.Variable(2.0), ap.Variable(3.0)
    with ap.GradientTape() as t3:
        with ap.GradientTape() as t2:
            with ap.GradientTape() as t1:
                y = scipy.special.gammainc(a, x)
            d1 = t1.gradient(y, a)
        d2 = t2.gradient(d1, a)
    assert float(t3.gradient(d2, x).numpy()) == pytest.approx(-0.028108381380361245, rel=1e-13)


def test_large_a_quadrature_in_blocks_gives_each_elements_own_value():
    """The quadrature runs in blocks of 2048 elements (384 nodes each): a batch across a block boundary gives
    every element its value alone."""
    from autoprop.core.prims.incgamma import gammainc_a_derivative
    a = np.full(2050, 1e6)
    x = a + np.linspace(-3.0, 3.0, a.size) * 1e3
    got = gammainc_a_derivative(a, x, 1)
    for i in (0, 2047, 2048, 2049):
        assert got[i] == gammainc_a_derivative(a[i], x[i], 1)
