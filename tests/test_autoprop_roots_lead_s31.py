"""fixv30a leftover (session 31): np.roots with a *leading* zero coefficient. numpy drops leading zeros (their roots
are at infinity), so at p = [0, 1, -3, 2] it returns the two roots 2 and 1 of x^2 - 3x + 2. As p_0 leaves 0 a third
root comes from infinity and the two finite roots move by the implicit function theorem, dr/dp_0 = -r^3 / p'(r):
the record ``polyroots`` gives that limit. Oracles: the closed form, and central differences of the finite roots
(matched by nearness to numpy's, since off 0 np.roots returns three). jax 0.10 (x64) does not: ``jnp.roots(p)``
strips p_0 and gives 0 for it, ``strip_zeros=False`` puts a root at infinity into the sum (-0.97624622); its other
three entries are ours (printed by the session's script, stored below)."""

import numpy as np
from test_autoprop_roots_s30 import _f_exp, _grad, _implicit, _jvp

P = np.array([0.0, 1.0, -3.0, 2.0])
JAX_TAIL = np.array([-26.83794257, -12.05983037, -4.67077427])  # jax.grad of jnp.roots(p), p_1..p_3


def _finite_roots_f(p):
    """sum(exp(real(r))) over the roots of ``p`` nearest numpy's roots at P (those at infinity left out)."""
    r, r0 = np.roots(p), np.roots(P)
    return sum(np.exp(np.real(r[np.argmin(np.abs(r - a))])) for a in r0)


def test_a_leading_zero_coefficient_moves_the_finite_roots():
    g = _grad(_f_exp, P)
    closed = -8.0 * np.exp(2.0) + np.exp(1.0)  # d/dp_0 = -e^2 r^3/p'(r) at r = 2 (p' = 1), -e r^3/p'(r) at 1 (p' = -1)
    assert abs(g[0] - closed) < 1e-10 * abs(closed)
    np.testing.assert_allclose(g, _implicit(P, np.exp), rtol=1e-12)
    h = 1e-6
    cd = np.array([(_finite_roots_f(P + h * e) - _finite_roots_f(P - h * e)) / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(g, cd, rtol=1e-7)
    np.testing.assert_allclose(g[1:], JAX_TAIL, rtol=1e-8)
    np.testing.assert_allclose([_jvp(_f_exp, P, e) for e in np.eye(4)], g, rtol=1e-12)  # forward mode agrees
