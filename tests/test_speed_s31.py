"""Session 31's speed changes keep every value, warning and check (issue 15).

``tape._backward`` is ``np.errstate(divide="ignore", invalid="ignore")`` as a decorator of the walk
instead of a new ``with np.errstate(...)`` block on every gradient call: the same numpy state inside
the walk, restored after it (also when a VJP raises), and safe when a VJP opens a walk of its own
(one shared errstate object entered twice would raise ``TypeError: Cannot enter np.errstate twice``).
"""

import warnings

import numpy as np
import pytest

import autoprop as ap


def _silent_inner_gradient():
    """d/dv of sqrt(sum(v**2))**2 at 0: 0 by the 0·inf rule, a numpy warning without the errstate."""
    v = ap.Variable(np.zeros(2))
    with ap.GradientTape() as t:
        q = np.sqrt(np.sum(v**2)) ** 2
    return t.gradient(q, v).numpy()


def test_a_walk_inside_a_walk_is_quiet_and_leaves_the_settings_as_they_were():
    seen = []

    @ap.custom_gradient
    def double(x):
        def grad_fn(g):
            seen.append((_silent_inner_gradient(), np.geterr()["invalid"], np.geterr()["over"]))
            return g * 2.0
        return x * 2.0, grad_fn

    before = np.geterr()
    x = ap.Variable(np.array([1.0, -3.0]))
    with ap.GradientTape() as tape:
        y = np.sum(double(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = tape.gradient(y, x).numpy()
    np.testing.assert_array_equal(g, [2.0, 2.0])
    (inner, invalid, over), = seen
    np.testing.assert_array_equal(inner, [0.0, 0.0])
    assert (invalid, over) == ("ignore", before["over"])  # inside: divide/invalid off, overflow as the user set it
    assert np.geterr() == before


def test_the_settings_come_back_when_a_vjp_raises():
    @ap.custom_gradient
    def broken(x):
        def grad_fn(g):
            raise ArithmeticError("grad_fn failed")
        return x + 0.0, grad_fn

    before = np.geterr()
    x = ap.Variable(np.array([1.0]))
    with ap.GradientTape() as tape:
        y = np.sum(broken(x))
    with pytest.raises(ArithmeticError, match="grad_fn failed"):
        tape.gradient(y, x)
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning, match="invalid value"):
        np.array(0.0) / np.array(0.0)


# ``sparse_softmax_cross_entropy_mean`` keeps the softmax (exp(s) divided by the row sums its loss took) in
# its record, and its VJP copies it. A row summing to 0 (every logit -inf) or to inf (a +inf logit) has no
# softmax (0/0, inf/inf): then the loss is not finite, nothing is kept (no division, no warning of it in
# the forward) and the VJP forms the softmax inside the walk, as before: the same values and warnings.
from autoprop.core import registry as R  # noqa: E402
from autoprop.core.prims import reductions as Rd  # noqa: E402


@pytest.mark.parametrize("bad", [-np.inf, np.inf])
def test_the_fused_mean_cross_entropy_divides_no_row_without_a_softmax(bad):
    z0 = np.array([[bad, bad, bad], [0.2, 0.1, 0.3]]) if bad < 0 else np.array([[0.5, bad, 0.1], [0.2, 0.1, 0.3]])
    y = np.array([0, 1])
    z = ap.Variable(z0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ap.GradientTape() as tape:
            loss = R.sparse_softmax_cross_entropy_mean(z, y)
    assert not np.isfinite(loss.numpy())
    assert not any("encountered in divide" in str(w.message) for w in caught), [str(w.message) for w in caught]
    (node,) = tape._nodes
    assert node.kwargs["saved"] is None  # nothing kept: the VJP forms the softmax again
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the walk is quiet (divide and invalid off)
        g = tape.gradient(loss, z).numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = Rd._sparse_ce_mean_vjp(np.array(1.0), None, z0, y)
    np.testing.assert_array_equal(g, expected)  # (NaN in the same places: assert_array_equal treats NaN as equal)


def test_the_fused_mean_cross_entropy_keeps_the_softmax_of_a_finite_loss():
    rng = np.random.default_rng(5)
    z0, y = rng.standard_normal((7, 4)) * 4, rng.integers(0, 4, 7)
    z = ap.Variable(z0)
    with ap.GradientTape(persistent=True) as tape:
        loss = R.sparse_softmax_cross_entropy_mean(z, y)
    (node,) = tape._nodes
    e = np.exp(z0 - z0.max(axis=1, keepdims=True))
    np.testing.assert_array_equal(node.kwargs["saved"], e / e.sum(axis=1, keepdims=True))
    first = tape.gradient(loss, z).numpy()
    np.testing.assert_array_equal(first, Rd._sparse_ce_mean_vjp(np.array(1.0), None, z0, y))  # recomputed: same bits
    np.testing.assert_array_equal(tape.gradient(loss, z).numpy(), first)  # the kept softmax is not written
