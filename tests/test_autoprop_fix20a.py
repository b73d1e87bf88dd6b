"""Session 20's tester findings (fixa20): clip with crossed bounds, Tensor keywords that
carry a derivative (np.pad's constant_values & co.), integer and boolean inputs computed in
numpy's result dtype (a sweep over the registry), numpy's bitwise operators, axis checks."""

import warnings

import numpy as np
import pytest

import autoprop as ap


def _grads(f, *xs):
    vs = [ap.Variable(np.asarray(x, dtype=float)) for x in xs]
    with ap.GradientTape() as tape:
        y = f(*vs)
    return [None if g is None else np.asarray(g) for g in tape.gradient(y, vs)]


def _central(f, xs, k, h=1e-6):
    """d sum(f) / d xs[k] by central differences."""
    xs = [np.array(x, dtype=float) for x in xs]
    out = np.zeros_like(xs[k])
    for i in np.ndindex(out.shape):
        up = [x.copy() for x in xs]
        dn = [x.copy() for x in xs]
        up[k][i] += h
        dn[k][i] -= h
        out[i] = (np.sum(f(*up)) - np.sum(f(*dn))) / (2 * h)
    return out


# --- 1. clip: numpy's minimum(maximum(x, lo), hi), also where lo > hi ----------------------
def test_clip_crossed_bounds_gradient_goes_to_hi():
    x, lo, hi = [0.1, 0.5, 2.0], [1.0, 1.0, 1.0], [0.8, 0.8, 0.8]
    gx, glo, ghi = _grads(lambda a, b, c: np.sum(np.clip(a, b, c)), x, lo, hi)
    np.testing.assert_array_equal(gx, [0, 0, 0])
    np.testing.assert_array_equal(glo, [0, 0, 0])  # torch and jax: 0 (was [1, 1, 0])
    np.testing.assert_array_equal(ghi, [1, 1, 1])  # (was [0, 0, 1])


def test_clip_random_bounds_match_central_differences_and_jvp():
    rng = np.random.default_rng(3)
    x, lo, hi = rng.normal(size=(3, 20))  # lo > hi in about half the entries; no ties
    ref = lambda a, b, c: np.minimum(np.maximum(a, b), c)  # noqa: E731
    grads = _grads(lambda a, b, c: np.sum(np.clip(a, b, c)), x, lo, hi)
    for k in range(3):
        np.testing.assert_allclose(grads[k], _central(ref, (x, lo, hi), k), atol=1e-8)
    tlo = ap.constant(lo)
    with ap.ForwardAccumulator(tlo, np.ones(20)) as acc:
        y = np.clip(ap.constant(x), tlo, ap.constant(hi))
    np.testing.assert_array_equal(np.asarray(acc.jvp(y)), _central(ref, (x, lo, hi), 1).round())
    with ap.ForwardAccumulator(thi := ap.constant(hi), np.ones(20)) as acc:
        y = ap.constant(x).clip(ap.constant(lo), thi)
    np.testing.assert_array_equal(np.asarray(acc.jvp(y)), _central(ref, (x, lo, hi), 2).round())


def test_clip_at_a_bound_still_gives_x_the_gradient():
    gx, glo, ghi = _grads(lambda a, b, c: np.sum(np.clip(a, b, c)), [1.0, 2.0], [1.0, 0.0], [3.0, 2.0])
    np.testing.assert_array_equal(gx, [1, 1])
    np.testing.assert_array_equal(glo, [0, 0])
    np.testing.assert_array_equal(ghi, [0, 0])
