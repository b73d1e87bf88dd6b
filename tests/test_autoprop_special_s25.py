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
    for f in (np.logaddexp, lambda a, b: aps.logsumexp(np.stack([a, b]))):
        assert _grad(f, a0, b0) == want


def test_logsumexp_with_infinite_inputs_splits_evenly_among_them():
    x0 = np.array([[np.inf, 1.0, np.inf], [0.0, 1.0, 2.0]])
    g = _grad(lambda x: aps.logsumexp(x, axis=1), x0)[0]
    np.testing.assert_array_equal(g[0], [0.5, 0.0, 0.5])
    np.testing.assert_allclose(g[1], np.exp(x0[1] - ss.logsumexp(x0[1])), rtol=1e-15)
