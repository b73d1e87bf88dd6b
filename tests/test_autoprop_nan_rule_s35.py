"""maximum/minimum's NaN rule (the gradient goes to the argument the forward returns; session 34's F9) carried to
the two primitives session 34 left: ``clip`` (numpy's ``minimum(maximum(x, lo), hi)``: a NaN x is returned, and
got 0) and the ``max``/``min`` reductions (a slice holding a NaN returns a NaN; no element equalled it, so 0/0 made
every element's gradient NaN). Values are the rule's, on the tape (VJP), its second order, and the
ForwardAccumulator (JVP); away from NaNs the rule is the one tested elsewhere (ties, bounds)."""

import contextlib
import io

import numpy as np
import pytest

import autoprop as ap

nan = np.nan


def _grads(f, *args):
    vs = [ap.Variable(np.asarray(a, dtype=float)) for a in args]
    with ap.GradientTape() as t:
        y = f(*vs)
    return np.asarray(y), [np.asarray(g) for g in t.gradient(y, vs)]


def test_clip_gives_a_nan_x_the_gradient_and_its_bounds_none():
    w = np.array([1.0, 2.0, 3.0, 4.0])
    y, (gx,) = _grads(lambda x: np.sum(np.clip(x, -1.0, 1.0) * w), [nan, 0.5, 3.0, -2.0])
    assert np.isnan(y)
    np.testing.assert_array_equal(gx, [1.0, 2.0, 0.0, 0.0])  # was [0, 2, 0, 0]


@pytest.mark.parametrize("x, lo, hi, want", [
    (nan, 0.0, 1.0, [1.0, 0.0, 0.0]),  # x's NaN returned
    (0.5, nan, 1.0, [0.0, 1.0, 0.0]),  # maximum(x, lo) returns lo's NaN, then minimum returns it
    (0.5, 0.0, nan, [0.0, 0.0, 1.0]),  # minimum(m, hi) returns hi's NaN
    (nan, nan, 1.0, [0.5, 0.5, 0.0]),  # two NaNs in maximum: half each (a tie)
    (nan, 0.0, nan, [0.5, 0.0, 0.5]),  # two NaNs in minimum: half each
    (nan, nan, nan, [0.25, 0.25, 0.5]),
    (0.5, 0.0, 1.0, [1.0, 0.0, 0.0]),  # no NaN: inside, x gets it (unchanged)
    (2.0, 0.0, 1.0, [0.0, 0.0, 1.0]),  # above: hi (unchanged)
])
def test_clip_with_array_bounds_routes_a_nan_as_minimum_of_maximum(x, lo, hi, want):
    y, g = _grads(lambda a, b, c: np.clip(a, b, c), x, lo, hi)
    np.testing.assert_array_equal(y, np.clip(x, lo, hi))  # NaNs compare equal here
    np.testing.assert_array_equal(g, want)
    xs, los, his = (ap.Variable(np.array(v)) for v in (x, lo, hi))
    for i, v in enumerate((xs, los, his)):  # the JVP: the same share of each input
        with ap.ForwardAccumulator(v, np.array(1.0)) as acc:
            z = np.clip(xs, los, his)
        assert float(np.asarray(acc.jvp(z))) == want[i]


def test_clip_second_order_through_a_nan_x():
    x = ap.Variable(np.array([nan, 0.5, 3.0]))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            z = np.sum(np.clip(x ** 2, 0.0, 1.0))
        g = inner.gradient(z, x)
        s = np.sum(g)
    np.testing.assert_array_equal(np.asarray(g)[1:], [1.0, 0.0])
    assert np.isnan(np.asarray(g)[0])  # 2x at the NaN x: NaN, by the chain rule
    np.testing.assert_array_equal(np.asarray(outer.gradient(s, x)), [2.0, 2.0, 0.0])


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_max_min_reductions_give_the_returned_nan_the_gradient(name):
    f = getattr(np, name)
    y, (gx,) = _grads(lambda x: f(x), [nan, 0.5, 3.0, -2.0])
    assert np.isnan(y)
    np.testing.assert_array_equal(gx, [1.0, 0.0, 0.0, 0.0])  # was all NaN
    X = [[nan, 0.5, nan, -2.0], [1.0, 4.0, -3.0, 2.0]]
    y, (gX,) = _grads(lambda x: np.sum(f(x, axis=1) * np.array([2.0, 3.0])), X)
    big = name.endswith("max")
    np.testing.assert_array_equal(gX, [[1.0, 0.0, 1.0, 0.0], [0.0, 3.0 if big else 0.0, 0.0 if big else 3.0, 0.0]])
    with ap.ForwardAccumulator(xv := ap.Variable(np.array(X)), np.arange(8.0).reshape(2, 4)) as acc:
        z = f(xv, axis=1, keepdims=True)
    np.testing.assert_array_equal(np.asarray(acc.jvp(z)), [[1.0], [5.0 if big else 6.0]])  # (0 + 2) / 2 at the NaNs


def test_max_reduction_second_order_and_explain():
    x = ap.Variable(np.array([nan, 0.5, 3.0]))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            z = np.max(x * x)
        g = inner.gradient(z, x)
        s = np.sum(g)
    np.testing.assert_array_equal(np.asarray(g)[1:], [0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(outer.gradient(s, x)), [2.0, 0.0, 0.0])
    for name, words in (("max", "split evenly among its NaNs"),
                        ("clip", "NaN input: the gradient goes to the argument the forward returns")):
        with contextlib.redirect_stdout(io.StringIO()) as buf:
            ap.explain(name)
        assert words in buf.getvalue()
