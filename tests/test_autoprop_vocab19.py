"""numpy names recorded in session 19 (tester 18 found them refused): np.insert, np.linalg.cond
(every p), np.piecewise, np.polyfit (w=, cov=, full=), np.vander, np.var/np.std with mean=, np.pad's
remaining modes, np.quantile/percentile with every method, np.nanquantile, nanpercentile,
nanmedian, np.median over axis tuples.

Their values, gradients, JVPs and second derivatives against numpy and central differences run
in tests/test_autoprop_vocabulary.py (their FUNCTION_SAMPLES entries); here: the gradient and the
Hessian-vector product against jax (stored references, tests/vocab19_refs.py), float32 kept, the
discontinuous quantile methods' gradient going to the picked element, and the clear errors."""

import warnings

import numpy as np
import pytest
from primitive_samples import FUNCTION_SAMPLES, QUANTILE_METHODS
from vocab19_cases import JAX_NAMES, draw, leaves
from vocab19_refs import REFS

import autoprop as ap


def _grad_and_hvp(spec, xs, gs, us):
    ts = [ap.constant(x) for x in xs]
    with ap.GradientTape() as outer:
        outer.watch(ts)
        with ap.GradientTape() as tape:
            tape.watch(ts)
            y = sum((leaf * g).sum() for leaf, g in zip(leaves(spec.fn(np, *ts)), gs))
        d = tape.gradient(y, ts, unconnected_gradients="zero")
        du = sum((a * u).sum() for a, u in zip(d, us))
    return [a.numpy() for a in d], [a.numpy() for a in outer.gradient(du, ts, unconnected_gradients="zero")]


def _rel(a, b):
    return float(np.max(np.abs(a - b) / (np.abs(a) + np.abs(b) + 1e-12)))


@pytest.mark.parametrize("name", JAX_NAMES)
def test_gradient_and_hessian_vector_product_match_jax(name):
    spec = FUNCTION_SAMPLES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaN entries on purpose (nanquantile)
        shapes = [np.shape(r) for r in leaves(spec.fn(np, *spec.make(np.random.default_rng(sum(map(ord, name))))))]
        xs, gs, us = draw(name, spec, shapes)
        g, h = _grad_and_hvp(spec, xs, gs, us)
    ref_g, ref_h = REFS[name]
    for a, b in zip(g, ref_g):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
    for a, b in zip(h, ref_h):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


F32 = {
    "insert": lambda x: np.insert(x, 1, ap.constant(np.float64(2.0)), axis=0),
    "cond_fro": lambda x: np.linalg.cond(x + 3 * np.eye(3, dtype=np.float32), "fro"),
    "cond_2": lambda x: np.linalg.cond(x + 3 * np.eye(3, dtype=np.float32)),
    "piecewise": lambda x: np.piecewise(x, [x < 0], [lambda v: v * v, lambda v: v]),
    "polyfit": lambda x: np.polyfit(x[0], x[1], 1),
    "var_mean": lambda x: np.var(x, axis=0, mean=np.mean(x, axis=0, keepdims=True)),
    "pad_ramp": lambda x: np.pad(x, 2, mode="linear_ramp", end_values=1.5),
    "pad_mean": lambda x: np.pad(x, 1, mode="mean"),
    "pad_median": lambda x: np.pad(x, 1, mode="median"),
    "pad_odd": lambda x: np.pad(x, 2, mode="reflect", reflect_type="odd"),
    "quantile_hazen": lambda x: np.quantile(x, 0.7, method="hazen", axis=0),  # (a Python q: numpy keeps float32)
    "nanpercentile": lambda x: np.nanpercentile(x, 40.0, axis=1),
    "nanmedian": lambda x: np.nanmedian(x, axis=(0, 1)),
}


@pytest.mark.parametrize("name", sorted(F32))
def test_float32_stays_float32(name):
    x0 = np.array([[0.3, -1.2, 2.0], [1.1, 0.4, -0.7], [0.9, -0.2, 1.6]], dtype=np.float32)
    x = ap.Variable(x0)
    with ap.GradientTape() as tape:
        y = F32[name](x)
    assert y.dtype == F32[name](x0).dtype, y.dtype  # numpy's: float32 (polyfit: float64, as its vander)
    g = tape.gradient(y, x)
    assert g.dtype == np.float32 and np.all(np.isfinite(g.numpy()))


@pytest.mark.parametrize("method", QUANTILE_METHODS)
def test_quantile_gradient_goes_where_numpy_reads(method):
    """The gradient of each method: one order statistic (the discontinuous methods: all of it,
    as torch's and jax's), or two split (1 - gamma, gamma); ties in x share nothing: the element
    numpy's sort puts there gets it. Checked on a permutation of 0..9 (its value is its rank)."""
    x0 = np.array([7.0, 2.0, 9.0, 0.0, 4.0, 1.0, 8.0, 3.0, 6.0, 5.0])
    x = ap.Variable(x0)
    for q in (0.0, 0.21, 0.5, 0.85, 1.0):
        with ap.GradientTape() as tape:
            y = np.quantile(x, q, method=method)
        g = tape.gradient(y, x, unconnected_gradients="zero").numpy()
        v = float(np.quantile(x0, q, method=method))
        assert y.numpy() == v
        lo, hi = int(np.floor(v)), int(np.ceil(v))
        expect = np.zeros(10)
        expect[x0 == lo] += hi - v if hi != lo else 1.0
        expect[x0 == hi] += v - lo if hi != lo else 0.0
        np.testing.assert_allclose(g, expect, rtol=1e-12, atol=1e-15)


def test_quantile_ties_and_q_gradient():
    x = ap.Variable([3.0, 1.0, 3.0, 2.0])
    q = ap.Variable(0.7)
    with ap.GradientTape() as tape:
        y = np.quantile(x, q) + np.quantile(x, 0.9, method="higher")
    gx, gq = tape.gradient(y, [x, q])
    # linear: position 2.1 between sorted[2] = 3 (x[0]) and sorted[3] = 3 (x[2]); higher: sorted[3]
    np.testing.assert_allclose(gx.numpy(), [0.9, 0.0, 1.1, 0.0], rtol=1e-12)
    assert float(gq) == 0.0  # d/dq = (3 - 3) * 3
    with ap.GradientTape() as tape:
        y = np.quantile(x, q, method="weibull")  # position q (n + 1) - 1 = 2.5: between 3 and 3
        z = np.percentile(x, q * 50.0, method="hazen")  # position n q / 2 - 0.5 = 0.9: between 1 and 2
    assert float(tape.gradient(z, q)) == pytest.approx((2.0 - 1.0) * 4 * 0.5, rel=1e-12)
    assert np.array_equal(np.quantile(x.numpy(), 0.7, method="weibull"), y.numpy())


def test_refused_options_and_undefined_cases_say_why():
    x = ap.constant(np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match=r"numpy.quantile\(..., weights=...\)"):
        np.quantile(x, 0.5, weights=np.ones((2, 3)), method="inverted_cdf")
    with pytest.raises(ValueError, match="'bogus' is not a valid method"):
        np.quantile(x, 0.5, method="bogus")
    with pytest.raises(TypeError, match="the recorded modes are 'constant'"):
        np.pad(x, 1, mode=lambda v, w, i, k: None)
    with pytest.raises(ValueError, match=r"cond\(x, p='fro'\) of a singular matrix is inf"):
        np.linalg.cond(ap.constant(np.ones((2, 2))), "fro")
    assert np.isinf(np.linalg.cond(ap.constant(np.ones((2, 2)))).numpy())  # numpy's inf, via s_max / 0
    with pytest.raises(ValueError, match="rank-deficient"):
        np.polyfit(ap.constant([1.0, 1.0, 1.0]), ap.constant([0.0, 1.0, 2.0]), 1)
    with pytest.raises(ValueError, match="either 1 or 2 functions"):
        np.piecewise(x, [x.numpy() > 1], [1.0, 2.0, 3.0])
    # numpy's own errors for numpy's bad input
    with pytest.raises(ValueError):
        np.pad(ap.constant(np.zeros((0, 2))), 1, mode="maximum")


def test_full_polyfit_and_vander_and_empty_pad():
    xs, ys = np.linspace(0.0, 1.0, 5), np.array([0.1, 0.4, 0.2, 0.9, 1.3])
    c, res, rank, s, rcond = np.polyfit(ap.constant(xs), ap.constant(ys), 2, full=True)
    ref = np.polyfit(xs, ys, 2, full=True)
    np.testing.assert_allclose(c.numpy(), ref[0], rtol=1e-12)
    np.testing.assert_allclose(res.numpy(), ref[1], rtol=1e-10)
    assert rank == ref[2] and rcond == ref[4]
    np.testing.assert_allclose(s.numpy(), ref[3], rtol=1e-13)
    np.testing.assert_array_equal(np.vander(ap.constant(xs), 3, increasing=True).numpy(),
                                  np.vander(xs, 3, increasing=True))
    x = ap.Variable(np.ones((2, 2)))
    with ap.GradientTape() as tape:
        y = np.pad(x, 1, mode="empty")  # numpy leaves the pad uninitialised: 0 here
    assert y.shape == (4, 4) and np.all(y.numpy()[1:3, 1:3] == 1.0) and np.all(y.numpy()[0] == 0.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), np.ones((2, 2)))


@pytest.mark.parametrize("ufunc, reduce", [(np.maximum, np.max), (np.minimum, np.min)])
def test_running_extreme_ties_split_as_the_max_reduction(ufunc, reduce):
    """np.maximum.accumulate(x)[j] is max(x[:j + 1]): with ties its gradient is the max reduction's
    (split evenly among the tied elements: the registry's rule), not the first position's (before)
    nor torch's last position or jax's scan-tree split (1/4, 1/4, 1/2); float32 stays float32."""
    x0 = np.array([[1.0, 3.0, 2.0, 3.0, 3.0, 0.0], [4.0, 4.0, -1.0, 4.0, 6.0, 6.0]])
    x0 = x0 if ufunc is np.maximum else -x0
    for dt in (np.float64, np.float32):
        x = ap.Variable(x0.astype(dt))
        with ap.GradientTape(persistent=True) as tape:
            y = ufunc.accumulate(x, axis=1)
            rows = [reduce(x[:, :j + 1], axis=1) for j in range(6)]
        np.testing.assert_array_equal(y.numpy(), ufunc.accumulate(x0.astype(dt), axis=1))
        assert y.dtype == dt
        for j in range(6):
            g = np.zeros(x0.shape)
            g[:, j] = [0.7, -1.3]
            got = tape.gradient(y, x, output_gradients=g.astype(dt)).numpy()
            np.testing.assert_allclose(got, tape.gradient(rows[j], x, output_gradients=g[:, j].astype(dt)).numpy(), rtol=1e-6)
        g = tape.gradient(y, x).numpy()
        # row 0: y1, y2 -> x1; y3 splits x1, x3; y4, y5 split x1, x3, x4 (1/3 each)
        # row 1: y1, y2 split x0, x1; y3 splits x0, x1, x3; y4 -> x4; y5 splits x4, x5
        want = [[1.0, 2 + 1 / 2 + 2 / 3, 0.0, 1 / 2 + 2 / 3, 2 / 3, 0.0],
                [1 + 1 + 1 / 3, 1 + 1 / 3, 0.0, 1 / 3, 1.5, 0.5]]
        np.testing.assert_allclose(g, want, rtol=1e-6)


def test_quantile_dtype_is_numpys_and_piecewise_of_a_0d_tensor():
    """A Python-number q keeps float32 data float32 (numpy's weak scalar); a float64 array q
    promotes to float64, as numpy; integer data give float64. np.piecewise of a 0-d Tensor."""
    a0 = np.array([0.3, -1.2, 2.0, 1.1, 0.4], dtype=np.float32)
    for q in (0.3, np.float32(0.3), [0.2, 0.6], np.float64(0.3)):
        for f in (np.quantile, np.nanquantile):
            r, ref = f(ap.constant(a0), q, method="hazen"), f(a0, q, method="hazen")
            assert r.dtype == ref.dtype, (f, q, r.dtype, ref.dtype)
            np.testing.assert_allclose(r.numpy(), ref, rtol=1e-6)
    assert np.percentile(ap.constant(a0), 30).dtype == np.float32
    r = np.quantile(ap.constant(np.arange(5)), 0.3)
    assert r.dtype == np.float64 and r.numpy() == np.quantile(np.arange(5), 0.3)
    x = ap.Variable(np.float64(2.0))
    with ap.GradientTape() as tape:
        y = np.piecewise(x, [True], [lambda v: v * v])
    assert y.numpy() == 4.0 and float(tape.gradient(y, x)) == 4.0
