"""scipy.special names and limits found missing or wrong by tester25a (JAX's tests as oracle), session 25."""

import numpy as np
import pytest
import scipy.special as ss

import autoprop as ap
from autoprop.scipy import special as aps


def _grad(f, *x0):
    xs = [ap.Variable(np.asarray(v, float)) for v in x0]
    with ap.GradientTape() as tape:
        y = ap.reduce_sum(f(*xs))
    return [g.numpy() for g in tape.gradient(y, xs)]


def _cd(f, x0, h=1e-6):
    x0 = np.asarray(x0, float)
    return (f(x0 + h) - f(x0 - h)) / (2 * h)


def test_beta_betainc_and_zeta_are_names_of_autoprop_scipy_special():
    """aps.beta raised AttributeError (it dispatched only through scipy.special.beta)."""
    x0 = np.array([0.3, 0.6, 1.7])
    np.testing.assert_allclose(_grad(lambda x: aps.beta(2.0, x + 1.0), x0)[0],
                               _cd(lambda x: ss.beta(2.0, x + 1.0), x0), rtol=1e-7)
    np.testing.assert_allclose(_grad(lambda x: aps.betainc(2.0, 3.0, x / 2), x0)[0],
                               _cd(lambda x: ss.betainc(2.0, 3.0, x / 2), x0), rtol=1e-7)
    np.testing.assert_allclose(_grad(lambda q: aps.zeta(3.0, q), x0)[0], -3.0 * ss.zeta(4.0, x0), rtol=1e-13)
    assert float(aps.zeta(2.0).numpy()) == pytest.approx(np.pi ** 2 / 6, rel=1e-15)
    with ap.GradientTape(), pytest.raises(TypeError, match=r"betainc\(a, b, x\) is recorded in x only"):
        aps.betainc(ap.Variable(2.0), 3.0, 0.5)


@pytest.mark.parametrize("a0,b0,want", [
    (np.inf, np.inf, [0.5, 0.5]),  # sigmoid(a - b) on a = b (jax: 1 each; torch: nan; before: nan)
    (np.inf, 5.0, [1.0, 0.0]),  # sigmoid(a - b) -> 1 (jax gives e^5 = 148.4 to b; before: nan to a)
    (-np.inf, -np.inf, [0.0, 0.0]),  # a masked pair (unchanged)
    (-np.inf, 3.0, [0.0, 1.0]),
])
def test_logaddexp_at_infinities_takes_the_limit_of_its_weights(a0, b0, want):
    for f in (np.logaddexp, np.logaddexp2, lambda a, b: aps.logsumexp(np.stack([a, b]))):
        assert _grad(f, a0, b0) == want


def test_logsumexp_with_infinite_inputs_splits_evenly_among_them():
    x0 = np.array([[np.inf, 1.0, np.inf], [0.0, 1.0, 2.0]])
    g = _grad(lambda x: aps.logsumexp(x, axis=1), x0)[0]
    np.testing.assert_array_equal(g[0], [0.5, 0.0, 0.5])
    np.testing.assert_allclose(g[1], np.exp(x0[1] - ss.logsumexp(x0[1])), rtol=1e-15)


def _derivs(f, x0, n):
    """The first ``n`` derivatives of the scalar ``f`` at ``x0`` by nested tapes."""
    x = ap.Variable(float(x0))
    tapes = [ap.GradientTape(persistent=True) for _ in range(n)]
    for t in tapes:
        t.__enter__()
    y, out = f(x), []
    for t in reversed(tapes):
        t.__exit__(None, None, None)
        y = t.gradient(y, x)
        out.append(float(y.numpy()))
    return out


# (name, x, d1, d2): jax.grad of jax.scipy.special's function (float64), where jax differentiates it;
# else (exp1: jax raises; spence at z >= 1: jax gives 0 and nan) the closed form and central differences
NEW = [
    ("i0e", 0.5, -0.4886144672643, 0.6643873281588), ("i0e", -1.3, 0.1831273248889, 0.1991026591241),
    ("i0e", 20.0, -2.274089701537e-03, 1.728682939102e-04),
    ("i1e", 0.5, 0.1757728608945, -0.3902498372084), ("i1e", -1.3, 1.597533423518e-02, 8.281292341751e-02),
    ("i1e", 1e-3, 0.4990009369169, -0.9981267489068), ("i1e", 0.0, 0.5, 0.0),  # (i1e'' jumps at 0: -1 | 1)
    ("expi", 0.5, 3.2974425414, -3.2974425414), ("expi", -1.3, -0.2096398407954, -0.3709012567919),
    ("exp1", 1.3, -0.2096398407954, 0.3709012567919),  # -e^-x / x; d2 = e^-x (1/x + 1/x^2)
    ("spence", 0.5, -1.386294361120, 1.227411277760), ("spence", 3.0, -0.5493061443341, 0.1079864055004),
    ("spence", 1.0, -1.0, 0.5),  # log(z)/(1 - z) -> -1, its slope 1/2 (its Taylor series at 1)
    ("spence", 1.1, np.log(1.1) / -0.1, None),
]


@pytest.mark.parametrize("name,x0,d1,d2", NEW, ids=[f"{c[0]}({c[1]})" for c in NEW])
def test_new_special_functions_first_and_second_derivatives(name, x0, d1, d2):
    """i0e, i1e, exp1, expi, spence were not recorded (scipy.special's call on a Tensor was refused)."""
    f = getattr(ss, name)
    assert float(getattr(aps, name)(ap.constant(x0)).numpy()) == f(x0)
    g1, g2 = _derivs(f, x0, 2)
    assert g1 == pytest.approx(d1, rel=1e-11, abs=1e-15)
    h = 1e-6
    if x0 != 0.0:  # (i1e at 0: its second derivative jumps, central differences are off by h/2)
        assert g1 == pytest.approx((f(x0 + h) - f(x0 - h)) / (2 * h), rel=1e-7, abs=1e-9)
    if d2 is not None:
        assert g2 == pytest.approx(d2, rel=1e-9, abs=1e-15)
    if x0 not in (0.0, 1.0):  # the second against central differences of the first (off the kink)
        assert g2 == pytest.approx((_derivs(f, x0 + h, 1)[0] - _derivs(f, x0 - h, 1)[0]) / (2 * h), rel=1e-6)


@pytest.mark.parametrize("name", ["rel_entr", "kl_div"])
def test_rel_entr_and_kl_div_in_both_arguments(name):
    """jax's figures at (0.5, 1.5) and (2.0, 0.7); at x = 0 the one-sided -inf (jax: 0 and -1)."""
    f = getattr(ss, name)
    x0, y0 = np.array([0.5, 2.0]), np.array([1.5, 0.7])
    gx, gy = _grad(f, x0, y0)
    want_x = np.log(x0 / y0) + (1.0 if name == "rel_entr" else 0.0)
    want_y = -x0 / y0 + (0.0 if name == "rel_entr" else 1.0)
    np.testing.assert_allclose(gx, want_x, rtol=1e-14)
    np.testing.assert_allclose(gy, want_y, rtol=1e-14)
    np.testing.assert_allclose(gx, [-9.861229e-02, 2.049822] if name == "rel_entr" else [-1.098612, 1.049822],
                               rtol=1e-6)
    with np.errstate(divide="ignore"):
        gx0, gy0 = _grad(f, 0.0, 1.0)
    assert gx0 == -np.inf and gy0 == (0.0 if name == "rel_entr" else 1.0)
