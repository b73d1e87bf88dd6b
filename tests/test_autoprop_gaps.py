"""Issue 12, the last gaps: ``a**0`` at ``a = 0``, ``np.cov``/``np.corrcoef`` weights,
``np.gradient`` with coordinates and ``edge_order=2``, ``sinc''(0)``, in-place operators
on a Tensor, and scipy.special on a Tensor. Oracles: HIPS autograd, numpy's own values,
central differences."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import autoprop as ap


def _grad(f, *xs):
    xs = [ap.constant(np.asarray(x, dtype=float)) for x in xs]
    with ap.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = f(*xs)
    g = tape.gradient(y, xs)
    return [None if v is None else v.numpy() for v in g]


def _grad2(f, x):
    """f''(x) reverse-over-reverse and forward-over-reverse (scalar x)."""
    x = ap.constant(float(x))
    with ap.GradientTape() as outer:
        outer.watch(x)
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        d = inner.gradient(y, x)
    rr = float(outer.gradient(d, x))
    with ap.ForwardAccumulator(x, ap.constant(1.0)) as acc:
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        d = inner.gradient(y, x)
    return rr, float(acc.jvp(d))


def _central(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


# --- a**0 at a = 0 (autograd's test_power_arg0) ------------------------------------------
def test_power_with_exponent_zero_has_derivative_zero_at_zero():
    f = lambda x: x ** 0.0  # noqa: E731
    assert autograd.grad(f)(0.0) == 0.0  # the oracle
    (g,) = _grad(f, 0.0)
    assert g == 0.0  # was 0 * 0**-1 = nan
    assert _grad2(f, 0.0) == (0.0, 0.0)
    x = np.array([0.0, 0.0, 2.0, 1.5])
    b = np.array([0.0, 3.0, 0.0, 2.0])
    ga, gb = _grad(lambda a, e: np.sum(np.power(a, e)), x, b)
    np.testing.assert_array_equal(ga, [0.0, 0.0, 0.0, 3.0])  # b a^(b-1) elsewhere unchanged
    # d/db: a^b log a, with log(0) taken as 0 (as before)
    np.testing.assert_allclose(gb, [0.0, 0.0, np.log(2.0), 1.5 ** 2 * np.log(1.5)], rtol=1e-15)


# --- sinc near 0 --------------------------------------------------------------------------
def _sinc_derivatives_exact(x, order):
    """sinc^(order)(x) for order 1, 2 from its Taylor series in 40-digit decimals."""
    from decimal import Decimal, getcontext
    getcontext().prec = 40
    pi = Decimal("3.141592653589793238462643383279502884197")
    u = pi * Decimal(float(x))
    total, fact = Decimal(0), Decimal(1)  # sin(u)/u = sum_k (-1)^k u^(2k) / (2k+1)!
    for k in range(0, 40):
        if k:
            fact *= (2 * k) * (2 * k + 1)
        n = 2 * k
        if n < order:
            continue
        coef = Decimal((-1) ** k) / fact
        for j in range(order):
            coef *= n - j
        total += coef * u ** (n - order)
    return float(total * pi ** order)


def test_sinc_second_derivative_at_zero_is_minus_pi_squared_over_3_in_both_modes():
    want = -np.pi ** 2 / 3
    rr, fr = _grad2(np.sinc, 0.0)
    assert rr == pytest.approx(want, rel=1e-15, abs=0)
    assert fr == pytest.approx(want, rel=1e-15, abs=0)


@pytest.mark.parametrize("x", [1e-9, 1e-5, -3e-3, 0.05, 0.2, -0.31, 0.32, 0.5, -0.9, 1.7])
def test_sinc_first_and_second_derivatives_keep_full_precision_near_zero(x):
    (g,) = _grad(np.sinc, x)
    assert g == pytest.approx(_sinc_derivatives_exact(x, 1), rel=2e-14, abs=0)
    rr, fr = _grad2(np.sinc, x)
    want2 = _sinc_derivatives_exact(x, 2)
    assert rr == pytest.approx(want2, rel=1e-12, abs=0)
    assert fr == pytest.approx(want2, rel=1e-12, abs=0)
    # and numpy's sinc agrees with the reference series (the reference is right)
    assert _sinc_derivatives_exact(x, 0) == pytest.approx(float(np.sinc(x)), rel=1e-15)


def test_sinc_gradient_on_an_array_matches_autograd_and_the_series():
    x = np.array([-1.3, -0.2, 0.0, 1e-7, 0.25, 0.5, 2.5])
    (g,) = _grad(lambda t: np.sum(np.sinc(t)), x)
    want = [_sinc_derivatives_exact(v, 1) for v in x]
    np.testing.assert_allclose(g, want, rtol=2e-14, atol=0)
    away = np.abs(x) > 0.3  # autograd's formula, (cos(pi x) pi x - sin(pi x)) / (pi x^2), cancels near 0
    np.testing.assert_allclose(g[away], autograd.elementwise_grad(anp.sinc)(x[away]), rtol=1e-13)
