"""C21: ties and kinks follow one stated rule (autoprop.core.registry's docstring).

* maximum/minimum with a == b: each side gets half, whatever the argument order.
* max/min reductions with ties: the gradient is split evenly among the tied elements.
* relu'(0) = 0, abs'(0) = 0; sign and comparisons pass no gradient.
* clip at a bound: the gradient goes to x.
"""

import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp


def _grads(f, *values):
    ts = [ap.constant(v) for v in values]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        y = f(*ts)
    return [g.numpy() for g in tape.gradient(y, ts)]


def test_c21_max_reduction_ties_split_evenly():
    (g,) = _grads(lambda x: ap.max(x), [0.6, 0.6, 0.3])
    np.testing.assert_array_equal(g, [0.5, 0.5, 0.0])
    (g,) = _grads(lambda x: np.amax(x), [0.6, 0.6, 0.3])
    np.testing.assert_array_equal(g, [0.5, 0.5, 0.0])
    (g,) = _grads(lambda x: ap.min(x), [0.3, 0.6, 0.3])
    np.testing.assert_array_equal(g, [0.5, 0.0, 0.5])


@pytest.mark.parametrize("f", [ap.max, ap.min, anp.amax, anp.amin])
def test_c21_reduction_ties_sum_to_upstream_along_axes(f):
    x = np.array([[1.0, 1.0, 1.0], [2.0, 5.0, 5.0]])
    (g,) = _grads(lambda t: f(t, axis=1) * np.array([3.0, 4.0]), x)
    np.testing.assert_allclose(g.sum(axis=1), [3.0, 4.0])
    assert np.all(g[0] == 1.0)


def test_c21_maximum_tie_gives_half_each_independent_of_order():
    ga, gb = _grads(ap.maximum, 1.0, 1.0)
    assert ga == gb == 0.5
    gb2, ga2 = _grads(lambda b, a: ap.maximum(b, a), 1.0, 1.0)
    assert ga2 == gb2 == 0.5
    ga, gb = _grads(ap.minimum, 1.0, 1.0)
    assert ga == gb == 0.5
    ga, gb = _grads(lambda a, b: np.maximum(a, b), [1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    np.testing.assert_array_equal(ga, [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(gb, [0.5, 1.0, 0.0])


def test_c21_relu_and_abs_at_zero_are_zero():
    (g,) = _grads(lambda x: ap.sum(ap.relu(x)), [-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])
    (g,) = _grads(lambda x: ap.sum(ap.abs(x)), [-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(g, [-1.0, 0.0, 1.0])
    (g,) = _grads(lambda x: np.sum(np.abs(x)), [0.0])
    np.testing.assert_array_equal(g, [0.0])


def test_c21_relu_second_derivative_is_zero_everywhere():
    x = ap.constant([-1.0, 0.0, 2.0])
    with ap.GradientTape() as outer:
        outer.watch(x)
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = ap.sum(ap.relu(x) * x)
        g = inner.gradient(y, x)
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 4.0])
    np.testing.assert_array_equal(outer.gradient(g, x).numpy(), [0.0, 0.0, 2.0])


def test_clip_at_bound_passes_gradient_to_x():
    (g,) = _grads(lambda x: ap.sum(np.clip(x, 0.0, 1.0)), [-0.5, 0.0, 0.5, 1.0, 1.5])
    np.testing.assert_array_equal(g, [0.0, 1.0, 1.0, 1.0, 0.0])
    gx, glo, ghi = _grads(lambda x, lo, hi: ap.sum(anp.clip(x, lo, hi)),
                          [-1.0, 0.5, 3.0], [0.0, 0.0, 0.0], 1.0)
    np.testing.assert_array_equal(gx, [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(glo, [1.0, 0.0, 0.0])
    assert ghi == 1.0


def test_convention_is_stated_in_the_registry_docstring():
    from autoprop.core import registry

    doc = registry.__doc__
    assert "relu'(0) = 0" in doc and "abs'(0) = 0" in doc
    assert "each side gets half" in doc and "split evenly" in doc
