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
