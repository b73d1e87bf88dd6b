"""numpy's functions over Tensors beyond the core primitives (prims/special.py and
prims/stacking.py): each one's value against numpy, and its reverse-mode gradient,
forward-mode JVP and second derivatives (reverse-over-reverse and forward-over-reverse)
against central differences and, where HIPS autograd has the function, against autograd.
The inputs are tests/primitive_samples.py's FUNCTION_SAMPLES (the new primitives are in
its SAMPLES, checked by the registry-wide tests of test_autoprop_forward.py)."""

import warnings

import autograd
import autograd.numpy as agn
import autograd.scipy.special
import numpy as np
import pytest
import scipy.special
from primitive_samples import FUNCTION_SAMPLES, SAMPLES

import autoprop as ap
import autoprop.numpy as anp
from autoprop.core import registry as R
from autoprop.scipy import special as aps

H = 1e-6


def _leaves(out):
    if isinstance(out, (list, tuple)):
        return [leaf for o in out for leaf in _leaves(o)]
    return [out]


class _Both:
    """autoprop.numpy's names, numpy's for the rest (np.arange, np.nan, ...)."""

    def __getattr__(self, name):
        return getattr(anp, name) if hasattr(anp, name) else getattr(np, name)


def _namespace(name, oracle=False, numpy_calls=False):
    if name == "scipy_special":
        return scipy.special if oracle else aps
    return agn if oracle else (np if numpy_calls else _Both())


def _scalar(f, gs):
    """x -> <g, f(x)> summed over the outputs."""
    def s(*xs):
        return sum((leaf * g).sum() for leaf, g in zip(_leaves(f(*xs)), gs))
    return s


def _first(f, gs, xs):
    """The tape's gradient of <g, f> at the Tensors xs (recorded by an outer tape)."""
    with ap.GradientTape() as tape:
        tape.watch(xs)
        y = _scalar(f, gs)(*xs)
    return tape.gradient(y, xs, unconnected_gradients="zero")


def _dir_fd(fun, xs, us):
    """Central difference of the scalar fun along us."""
    plus = fun(*[x + H * u for x, u in zip(xs, us)])
    minus = fun(*[x - H * u for x, u in zip(xs, us)])
    return float((np.asarray(plus) - np.asarray(minus)) / (2 * H))


def _dot(a, b):
    return float(sum(np.sum(np.asarray(p) * np.asarray(q)) for p, q in zip(a, b)))


@pytest.mark.parametrize("name", sorted(FUNCTION_SAMPLES))
def test_function_value_gradient_jvp_and_second_order(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    spec = FUNCTION_SAMPLES[name]
    xs = spec.make(rng)
    ns = _namespace(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaN entries on purpose

        def f(*a):
            return spec.fn(ns, *a)
        ref = _leaves(spec.fn(scipy.special if name == "scipy_special" else np, *xs))
        ts = [ap.constant(x) for x in xs]
        got = _leaves(f(*ts))
        assert len(got) == len(ref)
        for g_, r in zip(got, ref):
            assert isinstance(g_, ap.Tensor), type(g_)
            np.testing.assert_allclose(g_.numpy(), r, rtol=1e-12, atol=1e-14)
        if name not in ("array_of_mixed_list", "scipy_special"):  # np.array cannot dispatch
            via_np = _leaves(spec.fn(_namespace(name, numpy_calls=True), *ts))
            for g_, r in zip(via_np, ref):  # the same records reached through numpy's names
                assert isinstance(g_, ap.Tensor), (name, type(g_))
                np.testing.assert_allclose(g_.numpy(), r, rtol=1e-12, atol=1e-14)
        gs = [rng.standard_normal(np.shape(r)) for r in ref]
        us = [rng.standard_normal(x.shape) for x in xs]
        vs = [rng.standard_normal(x.shape) for x in xs]
        plain = _scalar(lambda *a: spec.fn(scipy.special if name == "scipy_special" else np, *a), gs)

        # reverse mode: <grad, u> against the central difference along u
        grads = _first(f, gs, ts)
        num = _dir_fd(plain, xs, us)
        assert abs(_dot(grads, us) - num) <= 1e-6 * (1 + abs(num)), (_dot(grads, us), num)
        if spec.autograd:  # and element by element against HIPS autograd
            ref_g = autograd.grad(lambda *a: _scalar(lambda *b: spec.fn(agn, *b), gs)(*a),
                                  argnum=tuple(range(len(xs))))(*xs)
            for g_, r in zip(grads, ref_g):
                np.testing.assert_allclose(g_.numpy(), r, rtol=1e-10, atol=1e-12)

        # forward mode: the JVP along u against the same difference
        with ap.ForwardAccumulator(ts, us) as acc:
            out = _leaves(f(*ts))
        jvps = [acc.jvp(o, unconnected_gradients="zero") for o in out]
        assert abs(_dot(jvps, gs) - num) <= 1e-6 * (1 + abs(num)), (_dot(jvps, gs), num)

        # second order: d/dx <grad(x), v> along u, reverse-over-reverse and forward-over-reverse
        def s(*a):
            return _dot([g_.numpy() for g_ in _first(f, gs, [ap.constant(x) for x in a])], vs)
        num2 = _dir_fd(s, xs, us)
        with ap.GradientTape() as outer:
            outer.watch(ts)
            inner = _first(f, gs, ts)
            sv = sum((g_ * v).sum() for g_, v in zip(inner, vs))
        h_rr = outer.gradient(sv, ts, unconnected_gradients="zero")
        assert abs(_dot(h_rr, us) - num2) <= 1e-5 * (1 + abs(num2)), (_dot(h_rr, us), num2)
        with ap.ForwardAccumulator(ts, us) as acc:
            inner = _first(f, gs, ts)
        h_fr = [acc.jvp(g_, unconnected_gradients="zero") for g_ in inner]
        assert abs(_dot(h_fr, vs) - num2) <= 1e-5 * (1 + abs(num2)), (_dot(h_fr, vs), num2)


# cbrt and fmod: autograd has no derivative (FUNCTION_SAMPLES checks them by differences)
NEW_UFUNCS = ["exp2", "arcsinh", "arccosh", "arctanh", "sinc", "hypot", "logaddexp2", "fmax",
              "fmin", "remainder"]


@pytest.mark.parametrize("name", NEW_UFUNCS)
def test_new_ufuncs_against_autograd_to_second_order(name):
    rng = np.random.default_rng(7)
    args, _ = SAMPLES[name].make(rng)
    fa = getattr(agn, name)
    fn = getattr(np, name)
    gs = rng.standard_normal(np.broadcast_shapes(*[a.shape for a in args]))
    argnum = tuple(range(len(args)))
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as outer:
        outer.watch(ts)
        with ap.GradientTape() as tape:
            tape.watch(ts)
            y = fn(*ts)
        d1 = tape.gradient(y, ts, output_gradients=gs)
        s = sum((d * d).sum() for d in d1)
    d2 = outer.gradient(s, ts, unconnected_gradients="zero")

    def first(*a):
        return autograd.grad(lambda *b: agn.sum(fa(*b) * gs), argnum=argnum)(*a)
    ref1 = first(*args)
    ref2 = autograd.grad(lambda *a: sum(agn.sum(d * d) for d in first(*a)), argnum=argnum)(*args)
    np.testing.assert_allclose(y.numpy(), fn(*args), rtol=1e-13)
    for a, b in zip(d1, ref1):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-10, atol=1e-12)
    for a, b in zip(d2, ref2):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-9, atol=1e-11)


def test_scipy_special_ufuncs_on_tensors_are_recorded():
    x = ap.constant([0.3, 1.2, 2.5])
    with ap.GradientTape() as tape:
        tape.watch(x)
        ys = [scipy.special.expit(x), scipy.special.erf(x), scipy.special.gammaln(x),
              scipy.special.digamma(x), scipy.special.xlogy(x, x), scipy.special.erfinv(x / 3)]
    assert all(isinstance(y, ap.Tensor) for y in ys)
    names = [n.prim.name for n in tape._nodes]
    for prim in ("sigmoid", "erf", "gammaln", "digamma", "xlogy", "erfinv"):
        assert prim in names
    g = tape.gradient(ys[2], x).numpy()
    np.testing.assert_allclose(g, scipy.special.digamma([0.3, 1.2, 2.5]), rtol=1e-13)
    # gammaln to the third derivative (polygamma records its own derivative)
    with ap.GradientTape() as t3:
        t3.watch(x)
        with ap.GradientTape() as t2:
            t2.watch(x)
            with ap.GradientTape() as t1:
                t1.watch(x)
                y = scipy.special.gammaln(x)
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    np.testing.assert_allclose(d3.numpy(), scipy.special.polygamma(2, [0.3, 1.2, 2.5]), rtol=1e-12)


# scipy.special ufuncs recorded since session 18 (jax.scipy.special differentiates them); autograd
# has gamma, betaln, i0, i1 (compared element by element, to second order)
NEW_SCIPY = ["ndtr", "log_ndtr", "ndtri", "gamma", "loggamma", "i0", "i1", "entr", "log_expit", "erfcx",
             "betaln", "xlog1py"]


@pytest.mark.parametrize("name", NEW_SCIPY)
def test_new_scipy_special_records_to_second_order(name):
    """Value (scipy's), <grad, u> and the JVP along u against central differences of scipy's
    function, the second derivative (reverse-over-reverse and forward-over-reverse) against
    central differences of the first; both spellings (scipy.special.X on a Tensor,
    autoprop.scipy.special.X) reach the record."""
    rng = np.random.default_rng(sum(map(ord, name)))
    xs, _ = SAMPLES[name].make(rng)
    fs, fa = getattr(scipy.special, name), getattr(aps, name)
    ts = [ap.constant(x) for x in xs]
    for f in (fs, fa):
        np.testing.assert_allclose(f(*ts).numpy(), fs(*xs), rtol=1e-13, atol=1e-15)
    gs = [rng.standard_normal(np.broadcast_shapes(*[x.shape for x in xs]))]
    us = [rng.standard_normal(x.shape) for x in xs]
    vs = [rng.standard_normal(x.shape) for x in xs]
    grads = _first(fs, gs, ts)
    num = _dir_fd(_scalar(fs, gs), xs, us)
    assert abs(_dot(grads, us) - num) <= 1e-6 * (1 + abs(num)), (_dot(grads, us), num)
    with ap.ForwardAccumulator(ts, us) as acc:
        y = fa(*ts)
    assert abs(float(np.sum(acc.jvp(y).numpy() * gs[0])) - num) <= 1e-6 * (1 + abs(num))
    num2 = _dir_fd(lambda *a: _dot([g.numpy() for g in _first(fs, gs, [ap.constant(x) for x in a])], vs), xs, us)
    with ap.GradientTape() as outer:
        outer.watch(ts)
        sv = sum((g * v).sum() for g, v in zip(_first(fs, gs, ts), vs))
    h_rr = outer.gradient(sv, ts, unconnected_gradients="zero")
    assert abs(_dot(h_rr, us) - num2) <= 1e-5 * (1 + abs(num2)), (_dot(h_rr, us), num2)
    with ap.ForwardAccumulator(ts, us) as acc:
        inner = _first(fs, gs, ts)
    h_fr = [acc.jvp(g, unconnected_gradients="zero") for g in inner]
    assert abs(_dot(h_fr, vs) - num2) <= 1e-5 * (1 + abs(num2)), (_dot(h_fr, vs), num2)
    agf = getattr(autograd.scipy.special, name, None) if name != "log_ndtr" else None
    if agf is not None:
        argnum = tuple(range(len(xs)))

        def first(*a):
            return autograd.grad(lambda *b: agn.sum(agf(*b) * gs[0]), argnum=argnum)(*a)
        for g, r in zip(grads, first(*xs)):
            np.testing.assert_allclose(g.numpy(), r, rtol=1e-10, atol=1e-12)
        ref2 = autograd.grad(lambda *a: sum(agn.sum(d * v) for d, v in zip(first(*a), vs)), argnum=argnum)(*xs)
        for g, r in zip(h_rr, ref2):
            np.testing.assert_allclose(g.numpy(), r, rtol=1e-9, atol=1e-11)


def test_scipy_polygamma_twin_expm1_log1p_and_unrecorded_scipy_names():
    """scipy.special.polygamma is Python code that converts x with np.asarray (no dispatch):
    it warns and names autoprop.scipy.special.polygamma, the recorded twin (autograd's values);
    scipy's own expm1/log1p ufuncs reach numpy's records; an unrecorded scipy ufunc is
    named scipy.special.X (it said numpy.X)."""
    x0 = np.array([0.3, 0.7, 1.2])
    x = ap.Variable(x0)
    with ap.GradientTape(persistent=True) as tape:
        with pytest.warns(ap.TapeEscapeWarning, match=r"use autoprop\.scipy\.special\.polygamma"):
            scipy.special.polygamma(1, x)
        y = aps.polygamma(1, x)
        e = scipy.special.expm1(x) + scipy.special.log1p(x)
        with pytest.raises(TypeError, match=r"cannot record scipy\.special\.struve on a Tensor"):
            scipy.special.struve(1.0, x)
    np.testing.assert_allclose(y.numpy(), scipy.special.polygamma(1, x0), rtol=1e-14)
    ref = autograd.elementwise_grad(lambda a: autograd.scipy.special.polygamma(1, a))(x0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(e, x).numpy(), np.exp(x0) + 1 / (1 + x0), rtol=1e-14)


def test_floor_division_is_piecewise_constant_and_passes_no_gradient():
    # a // b as numpy computes it (floor of the quotient, Python's sign rule), recorded as
    # floor is: no gradient to either side, a source reached only through it gets None
    # (TensorFlow's floordiv has no gradient either); //= and b // a as well
    a, b = ap.constant([5.5, -5.5, 2.0]), ap.constant([2.0, 2.0, -3.0])
    with ap.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        q, r, n = a // b, 7.0 // b, np.floor_divide(a, 0.5)
        c = a * 1.0
        c //= b
    np.testing.assert_array_equal(q.numpy(), [2.0, -3.0, -1.0])
    np.testing.assert_array_equal(r.numpy(), [3.0, 3.0, -3.0])
    np.testing.assert_array_equal(n.numpy(), [11.0, -11.0, 4.0])
    np.testing.assert_array_equal(c.numpy(), q.numpy())
    assert tape.gradient(q, [a, b]) == [None, None]
    assert tape.gradient(r, b) is None and tape.gradient(n, a) is None
    assert tape.gradient(c, a) is None


def test_the_percent_operator_and_sinc_at_zero():
    a, b = ap.constant([5.5, -5.5, 2.0]), ap.constant([2.0, 2.0, -3.0])
    with ap.GradientTape() as tape:
        tape.watch([a, b])
        y = a % b
    np.testing.assert_array_equal(y.numpy(), np.array([5.5, -5.5, 2.0]) % np.array([2.0, 2.0, -3.0]))
    da, db = tape.gradient(y, [a, b])
    np.testing.assert_array_equal(da.numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(db.numpy(), -np.floor_divide([5.5, -5.5, 2.0], [2.0, 2.0, -3.0]))
    x = ap.constant([0.0, 0.5])
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = np.sinc(x)
    g = tape.gradient(y, x).numpy()
    assert g[0] == 0.0 and np.isclose(g[1], (np.cos(np.pi * 0.5) - np.sinc(0.5)) / 0.5, rtol=1e-14)


def test_arrays_of_lists_mixing_tensors_and_numbers():
    x = ap.Variable(2.0)
    with ap.GradientTape() as tape:
        a = anp.array([[x, 1.0], [3.0, x * x]])
        s = anp.stack([[x, 2.0], [1.0, 1.0]])
        # a list reaching numpy's own reduction: numpy makes plain numbers of the Tensors,
        # never silently: an error naming np.stack (tester10 T13; a warning before)
        with pytest.raises(ap.TapeEscapeError, match=r"numpy.mean was given .* inside a list"):
            np.mean([x, x * 3.0])
        y = anp.sum(a) + anp.sum(s) + anp.mean(anp.asarray([x, 4.0])) + anp.mean([x, x])
    assert a.shape == (2, 2) and s.shape == (2, 2)
    assert float(tape.gradient(y, x)) == 1.0 + 4.0 + 1.0 + 0.5 + 1.0
    with pytest.raises(ValueError, match="different shapes"):
        anp.array([x, [1.0, 2.0]])


def test_options_without_a_derivative_are_refused_by_name():
    x = ap.constant(np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match="mode=<function"):  # (reflect_type='odd', linear_ramp: recorded)
        np.pad(x, 1, mode=lambda v, w, i, k: None)
    # (cov's fweights/aweights and gradient's coordinate arrays work: test_autoprop_gaps.py)
    with pytest.raises(TypeError, match="complex"):
        np.real_if_close(ap.constant(np.array([1 + 2j])))
    with pytest.raises(TypeError, match="casting='unsafe'"):
        np.vstack([x, x], casting="unsafe")
    # options that change values work: dtype, and NaN in a median
    assert np.vstack([x, x], dtype=np.float32).dtype == np.float32
    assert np.cov(x, dtype=np.float32).dtype == np.float32
    v = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 4.0]])
    np.testing.assert_array_equal(np.median(ap.constant(v), axis=1).numpy(), np.median(v, axis=1))


def test_registry_records_of_the_new_families_are_complete():
    from autoprop.core.prims import special, stacking

    assert special in R.FAMILIES and stacking in R.FAMILIES
    for name in ("exp2", "hypot", "remainder", "sinc", "xlogy", "polygamma"):
        prim = R.PRIMITIVES[name]
        assert prim.jvps is not None and prim.doc["jacobian"]
    assert "__mod__" in R.PRIMITIVES["remainder"].methods
    for f in (np.vstack, np.kron, np.cov, np.median, np.fabs, np.deg2rad, np.nan_to_num):
        assert R._OWNER[f] in R.COMPOSITES


def _nested(f, x0, y0, first, second):
    """d/d(second) of d f / d(first) at (x0, y0), by two nested tapes."""
    x, y = ap.Variable(x0), ap.Variable(y0)
    with ap.GradientTape() as t2:
        with ap.GradientTape() as t1:
            out = f(x, y)
        g = t1.gradient(out, (x, y)[first])
    return float(g.numpy()), float(t2.gradient(g, (x, y)[second]).numpy())


@pytest.mark.parametrize("name,den", [("xlogy", lambda b: b), ("xlog1py", lambda b: 1.0 + b)])
def test_xlogy_db_keeps_its_dependence_on_a_at_a_zero(name, den):
    """d/db xlogy(a, b) = a / b is 0 at a = 0, and its derivative in a is 1 / b there (jax's
    testGradOfXlogyAtZero: 1/3 at b = 3; xlog1py 1/4). A guard on a = 0 alone gave 0."""
    f = getattr(scipy.special, name)
    for b in (3.0, 0.5, -0.25):
        db, d2 = _nested(f, 0.0, b, 1, 0)
        assert db == 0.0
        assert d2 == pytest.approx(1.0 / den(b), rel=1e-15)
        a = ap.Variable(0.0)  # forward over reverse: the same mixed derivative
        bb = ap.Variable(b)
        with ap.ForwardAccumulator(a, 1.0) as acc:
            with ap.GradientTape() as t:
                out = f(a, bb)
            g = t.gradient(out, bb)
        assert float(acc.jvp(g).numpy()) == pytest.approx(1.0 / den(b), rel=1e-15)
        h = 1e-6  # central differences of the analytic d/db = a / den(b) in a
        assert d2 == pytest.approx((h / den(b) - (-h) / den(b)) / (2 * h), rel=1e-9)
    pole = 0.0 if name == "xlogy" else -1.0  # a = 0 at the pole of d/db: 0, not 0/0
    db, d2 = _nested(f, 0.0, pole, 1, 1)
    assert (db, d2) == (0.0, 0.0)


def test_i1_derivatives_at_and_near_zero_from_its_series():
    """i1(x) = x/2 + x^3/16 + x^5/384 + ... (DLMF 10.25.2): i1''(0) = 0, i1'''(0) = 3/8, and
    i1'''(x) = 3/8 + 5 x^2 / 32 + ... near 0. A guard at 0 in i1' = i0 - i1/x gave 1/2 at 0
    (jax, whose guard is another, gives i1''(0) = 1, i1'''(0) = 3/2)."""
    for x0, d2_true, d3_true in ((0.0, 0.0, 0.375), (1e-3, 3e-3 / 8 + 5e-9 / 96, 0.375 + 5e-6 / 32)):
        x = ap.Variable(x0)
        with ap.GradientTape() as t3:
            with ap.GradientTape() as t2:
                with ap.GradientTape() as t1:
                    y = scipy.special.i1(x)
                d1 = t1.gradient(y, x)
            d2 = t2.gradient(d1, x)
        d3 = t3.gradient(d2, x)
        assert float(d2.numpy()) == pytest.approx(d2_true, abs=1e-15)
        assert float(d3.numpy()) == pytest.approx(d3_true, rel=1e-12)
    for x0 in (0.5, -0.9, 1.5):  # the series (|x| < 1) and the quotient agree with central differences
        h = 1e-5
        d1 = [float(autograd.grad(autograd.scipy.special.i1)(x0 + s * h)) for s in (1, -1)]
        x = ap.Variable(x0)
        with ap.GradientTape() as t2:
            with ap.GradientTape() as t1:
                y = scipy.special.i1(x)
            g = t1.gradient(y, x)
        assert float(t2.gradient(g, x).numpy()) == pytest.approx((d1[0] - d1[1]) / (2 * h), rel=1e-8)
