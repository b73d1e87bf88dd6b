"""Session 29 (fixt29): numpy names numerical-methods courses use, recorded in
autoprop/core/prims/polynomial.py (np.polyadd, polysub, polymul, polyder, polyint, poly, polydiv,
roots, ediff1d, resize, unwrap, apply_over_axes, modf, frexp, i0).

Values against numpy (exactly: the compositions are numpy's own steps), gradients against jax
(stored: tests/poly29_refs.py, written by tests/poly29_cases.py) and float64 central differences;
forward mode (ForwardAccumulator) against the same differences, and second order through the
vocabulary check (tests/test_autoprop_vocabulary.py)."""

import numpy as np
import pytest
import test_autoprop_vocabulary as vocabulary
from oracles import central_each
from poly29_cases import JAX_CASES, SAMPLES29, XS
from poly29_refs import REFS

import autoprop as ap


def _grad(fn, xs):
    ts = [ap.Variable(x) for x in xs]
    with ap.GradientTape() as tape:
        y = fn(np, *ts)
    return float(y.numpy()), [g.numpy() for g in tape.gradient(y, ts, unconnected_gradients="zero")]


def _central(fn, xs, h=1e-6):
    return central_each(lambda *a: fn(np, *a), xs, h=h)  # fn(np, *arrays)


def _jvps(fn, xs, us):
    ts = [ap.constant(x) for x in xs]
    with ap.ForwardAccumulator(ts, [ap.constant(u) for u in us]) as acc:
        y = fn(np, *ts)
    return float(acc.jvp(y, unconnected_gradients="zero").numpy())


@pytest.mark.parametrize("name", sorted(JAX_CASES))
def test_gradient_matches_jax_and_central_differences_and_the_jvp_too(name):
    fn, xs = JAX_CASES[name]
    value, g = _grad(fn, xs)
    np.testing.assert_allclose(value, float(fn(np, *xs)), rtol=1e-13)  # numpy's own values
    fds = _central(fn, xs)
    for a, ref, fd in zip(g, REFS[name], fds):
        np.testing.assert_allclose(a, ref, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(a, fd, rtol=1e-5, atol=1e-6)
    us = [np.random.default_rng(7).standard_normal(np.shape(x)) for x in xs]
    want = sum(float(np.sum(fd * u)) for fd, u in zip(fds, us))
    assert abs(_jvps(fn, xs, us) - want) <= 1e-6 * (1 + abs(want))


# value, gradient, JVP and second order (reverse-over-reverse, forward-over-reverse) by the vocabulary
# check, on tests/poly29_cases.py's samples (on complex input too: tests/complex_scan.py)
@pytest.mark.parametrize("name", sorted(SAMPLES29))
def test_value_gradient_jvp_and_second_order(name, monkeypatch):
    monkeypatch.setitem(vocabulary.FUNCTION_SAMPLES, name, SAMPLES29[name])
    vocabulary.test_function_value_gradient_jvp_and_second_order(name)


def test_frexp_and_modf_are_numpy_s_values_the_other_outputs_constants():
    x = ap.Variable(np.concatenate([XS, [np.inf, -np.inf, -0.0, 5.0]]))
    with ap.GradientTape() as tape:
        m, e = np.frexp(x)
        f, i = np.modf(x)
        loss = np.sum(np.where(np.isfinite(x.numpy()), m + f, 0.0))
    want_m, want_e = np.frexp(x.numpy())
    want_f, want_i = np.modf(x.numpy())
    np.testing.assert_array_equal(m.numpy(), want_m)  # (the subnormal's exponent -1028 too)
    assert type(e) is np.ndarray and e.dtype == want_e.dtype and np.array_equal(e, want_e)
    np.testing.assert_array_equal(f.numpy(), want_f)
    np.testing.assert_array_equal(i.numpy(), want_i)
    g = tape.gradient(loss, x).numpy()
    fin = np.isfinite(x.numpy()) & (np.abs(x.numpy()) > 1e-300)  # (the subnormal's 2^1028 overflows)
    np.testing.assert_array_equal(g[fin], 1.0 + np.ldexp(1.0, -want_e[fin]))  # 1 + 2^-e, exactly
    for f_ in (np.frexp, np.modf):
        with pytest.raises(TypeError, match="out="):
            f_(x, np.empty(10))


def test_roots_are_numpy_s_in_numpy_s_order_with_trailing_zeros_and_dtype():
    for p in ([1.0, -3.0, 2.0], [1.0, 0.0, 1.0], [0.0, 2.0, -4.0, 0.0, 0.0], [3.0], [0.0, 0.0]):
        got, want = np.roots(ap.constant(p)), np.roots(np.array(p))
        assert got.dtype == want.dtype and got.shape == want.shape, (p, got, want)
        np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(ValueError, match="Input must be a rank-1 array"):
        np.roots(ap.constant(np.ones((2, 2))))


def test_polydiv_apply_over_axes_and_unwrap_follow_numpy():
    u, v = np.array([3.0, 5.0, 2.0]), np.array([2.0, 1.0])
    q, r = np.polydiv(ap.constant(u), ap.constant(v))
    for got, want in zip((q, r), np.polydiv(u, v)):
        np.testing.assert_array_equal(got.numpy(), want)
    a = np.arange(24.0).reshape(2, 3, 4)
    for axes in (0, [0, 2], (-1, 1)):
        np.testing.assert_array_equal(np.apply_over_axes(np.sum, ap.constant(a), axes).numpy(),
                                      np.apply_over_axes(np.sum, a, axes))
    with pytest.raises(ValueError, match="function is not returning an array of the correct shape"):
        np.apply_over_axes(lambda t, ax: t.ravel(), ap.constant(a), [0])
    p = np.array([1, 2, 10, 3], dtype=np.int64)  # integer period: numpy's integer rule, integer output
    got, want = np.unwrap(ap.constant(p), period=6), np.unwrap(p, period=6)
    assert got.dtype == want.dtype and np.array_equal(got.numpy(), want)
    with pytest.raises(TypeError, match="numpy.unwrap with a Tensor discont= or period="):
        np.unwrap(ap.constant([0.0, 4.0]), period=ap.constant(3.0))


def test_resize_and_ediff1d_edge_cases_are_numpy_s():
    a = np.arange(3.0)
    for shape in ((2, 4), 7, (0,), (1, 1)):
        np.testing.assert_array_equal(np.resize(ap.constant(a), shape).numpy(), np.resize(a, shape))
    np.testing.assert_array_equal(np.resize(ap.constant(np.zeros(0)), (2, 2)).numpy(), np.resize(np.zeros(0), (2, 2)))
    np.testing.assert_array_equal(np.ediff1d(ap.constant(a), to_begin=-99, to_end=[7, 8]).numpy(),
                                  np.ediff1d(a, to_begin=-99, to_end=[7, 8]))
    with pytest.raises(TypeError, match="same_kind"):
        np.ediff1d(ap.constant(np.arange(3)), to_begin=0.5)
