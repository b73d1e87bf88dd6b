"""Issue 12, the last gaps: ``a**0`` at ``a = 0``, ``np.cov``/``np.corrcoef`` weights,
``np.gradient`` with coordinates and ``edge_order=2``, ``sinc''(0)``, in-place operators
on a Tensor, and scipy.special on a Tensor. Oracles: HIPS autograd, numpy's own values,
central differences."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import central

import autoprop as ap


def _grad(f, *xs):
    xs = [ap.constant(np.asarray(x, dtype=float)) for x in xs]
    with ap.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = f(*xs)
    g = tape.gradient(y, xs)
    return [None if v is None else v.numpy() for v in g]


def _grad2(f, x):
    """f''(x) reverse-over-reverse and forward-over-reverse (scalar x)."""
    x = ap.constant(float(x))
    with ap.GradientTape() as outer:
        outer.watch(x)
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        d = inner.gradient(y, x)
    rr = float(outer.gradient(d, x))
    with ap.ForwardAccumulator(x, ap.constant(1.0)) as acc:
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        d = inner.gradient(y, x)
    return rr, float(acc.jvp(d))


# --- a**0 at a = 0 (autograd's test_power_arg0) ------------------------------------------
def test_power_with_exponent_zero_has_derivative_zero_at_zero():
    f = lambda x: x ** 0.0  # noqa: E731
    assert autograd.grad(f)(0.0) == 0.0  # the oracle
    (g,) = _grad(f, 0.0)
    assert g == 0.0  # was 0 * 0**-1 = nan
    assert _grad2(f, 0.0) == (0.0, 0.0)
    x = np.array([0.0, 0.0, 2.0, 1.5])
    b = np.array([0.0, 3.0, 0.0, 2.0])
    ga, gb = _grad(lambda a, e: np.sum(np.power(a, e)), x, b)
    np.testing.assert_array_equal(ga, [0.0, 0.0, 0.0, 3.0])  # b a^(b-1) elsewhere unchanged
    # d/db: a^b log a, with log(0) taken as 0 (as before)
    np.testing.assert_allclose(gb, [0.0, 0.0, np.log(2.0), 1.5 ** 2 * np.log(1.5)], rtol=1e-15)


# --- sinc near 0 --------------------------------------------------------------------------
def _sinc_derivatives_exact(x, order):
    """sinc^(order)(x) for order 1, 2 from its Taylor series in 40-digit decimals."""
    from decimal import Decimal, getcontext
    getcontext().prec = 40
    pi = Decimal("3.141592653589793238462643383279502884197")
    u = pi * Decimal(float(x))
    total, fact = Decimal(0), Decimal(1)  # sin(u)/u = sum_k (-1)^k u^(2k) / (2k+1)!
    for k in range(0, 40):
        if k:
            fact *= (2 * k) * (2 * k + 1)
        n = 2 * k
        if n < order:
            continue
        coef = Decimal((-1) ** k) / fact
        for j in range(order):
            coef *= n - j
        total += coef * u ** (n - order)
    return float(total * pi ** order)


def test_sinc_second_derivative_at_zero_is_minus_pi_squared_over_3_in_both_modes():
    want = -np.pi ** 2 / 3
    rr, fr = _grad2(np.sinc, 0.0)
    assert rr == pytest.approx(want, rel=1e-15, abs=0)
    assert fr == pytest.approx(want, rel=1e-15, abs=0)


@pytest.mark.parametrize("x", [1e-9, 1e-5, -3e-3, 0.05, 0.2, -0.31, 0.32, 0.5, -0.9, 1.7])
def test_sinc_first_and_second_derivatives_keep_full_precision_near_zero(x):
    (g,) = _grad(np.sinc, x)
    assert g == pytest.approx(_sinc_derivatives_exact(x, 1), rel=2e-14, abs=0)
    rr, fr = _grad2(np.sinc, x)
    want2 = _sinc_derivatives_exact(x, 2)
    assert rr == pytest.approx(want2, rel=1e-12, abs=0)
    assert fr == pytest.approx(want2, rel=1e-12, abs=0)
    # and numpy's sinc agrees with the reference series (the reference is right)
    assert _sinc_derivatives_exact(x, 0) == pytest.approx(float(np.sinc(x)), rel=1e-15)


def test_sinc_gradient_on_an_array_matches_autograd_and_the_series():
    x = np.array([-1.3, -0.2, 0.0, 1e-7, 0.25, 0.5, 2.5])
    (g,) = _grad(lambda t: np.sum(np.sinc(t)), x)
    want = [_sinc_derivatives_exact(v, 1) for v in x]
    np.testing.assert_allclose(g, want, rtol=2e-14, atol=0)
    away = np.abs(x) > 0.3  # autograd's formula, (cos(pi x) pi x - sin(pi x)) / (pi x^2), cancels near 0
    np.testing.assert_allclose(g[away], autograd.elementwise_grad(anp.sinc)(x[away]), rtol=1e-13)


# --- np.cov with fweights / aweights ------------------------------------------------------
RNG = np.random.default_rng(12)
XC = RNG.normal(size=(3, 6))
FW = np.array([1, 2, 0, 3, 1, 2])
AW = RNG.uniform(0.2, 2.0, size=6)
COV_CASES = [dict(fweights=FW), dict(aweights=AW), dict(fweights=FW, aweights=AW),
             dict(fweights=FW, aweights=AW, ddof=0), dict(aweights=AW, bias=True),
             dict(fweights=FW, ddof=2), dict(aweights=AW, rowvar=False)]


@pytest.mark.parametrize("kw", COV_CASES, ids=[",".join(sorted(k)) for k in COV_CASES])
def test_weighted_cov_values_and_gradients(kw):
    X = XC if kw.get("rowvar", True) else XC.T.copy()  # observations in rows
    np.testing.assert_allclose(np.cov(ap.constant(X), **kw).numpy(), np.cov(X, **kw), rtol=1e-14)
    G = RNG.normal(size=np.cov(X, **kw).shape)
    loss = lambda x: float(np.sum(np.cov(x, **kw) * G))  # noqa: E731
    (g,) = _grad(lambda x: np.sum(np.cov(x, **kw) * G), X)
    np.testing.assert_allclose(g, central(loss, X, h=1e-6), rtol=1e-7, atol=1e-9)


def test_weighted_cov_gradient_wrt_the_weights_and_against_autograd():
    # aweights differentiable; oracle: numpy's formula written in autograd
    def cov_ag(x, aw, fw):
        w = fw * aw
        ws = anp.sum(w)
        xc = x - anp.sum(x * w, axis=1, keepdims=True) / ws
        fact = ws - anp.sum(w * aw) / ws
        return anp.dot(xc * w, xc.T) / fact

    G = RNG.normal(size=(3, 3))
    ag = autograd.grad(lambda x, aw: anp.sum(cov_ag(x, aw, FW) * G), argnum=(0, 1))(XC, AW)
    np.testing.assert_allclose(cov_ag(XC, AW, FW), np.cov(XC, fweights=FW, aweights=AW), rtol=1e-14)
    gx, gw = _grad(lambda x, aw: np.sum(np.cov(x, fweights=FW, aweights=aw) * G), XC, AW)
    np.testing.assert_allclose(gx, ag[0], rtol=1e-12)
    np.testing.assert_allclose(gw, ag[1], rtol=1e-12)
    loss_w = lambda aw: float(np.sum(np.cov(XC, fweights=FW, aweights=aw) * G))  # noqa: E731
    np.testing.assert_allclose(gw, central(loss_w, AW, h=1e-6), rtol=1e-7, atol=1e-9)


def test_weighted_cov_refuses_what_numpy_refuses():
    x = ap.constant(XC)
    for kw, err, msg in [(dict(fweights=[1.5] * 6), TypeError, "fweights must be integer"),
                         (dict(fweights=[1] * 5), RuntimeError, "incompatible numbers of samples and fweights"),
                         (dict(aweights=-AW), ValueError, "aweights cannot be negative"),
                         (dict(aweights=np.ones((2, 6))), RuntimeError, "multidimensional aweights"),
                         (dict(ddof=1.5), ValueError, "ddof must be integer")]:
        with pytest.raises(err, match=msg):
            np.cov(XC, **kw)
        with pytest.raises(err, match=msg):
            np.cov(x, **kw)


@pytest.mark.parametrize("f", [np.cov, np.corrcoef])
def test_cov_refuses_more_than_two_dimensions_as_numpy(f):
    # (docs21: a 3-D Tensor had reached the centred matmul and returned an array of zeros)
    x3 = XC[:2].reshape(2, 3, 2)
    for args, msg in [((x3,), "m has more than 2 dimensions"), ((XC, x3), "y has more than 2 dimensions")]:
        with pytest.raises(ValueError, match=msg):
            f(*args)
        with pytest.raises(ValueError, match=msg):
            f(*[ap.constant(a) for a in args])


# --- np.gradient with coordinate arrays and edge_order=2 ----------------------------------
XS = np.array([0.0, 0.3, 0.5, 1.2, 1.3, 2.0])  # uneven coordinates
F2 = RNG.normal(size=(4, 6))
GRAD_CASES = [((XS,), dict(axis=1)), ((XS,), dict(axis=1, edge_order=2)), ((XS,), dict(axis=-1, edge_order=1)),
              ((np.array([0.0, 1.0, 3.0, 4.5]), XS), dict(edge_order=2)),
              ((0.5, XS), dict()), ((np.arange(4), 2.0), dict(edge_order=2)),
              ((np.array([0.0, 2.0, 4.0, 6.0]), XS), dict(edge_order=2))]  # an even array: the scalar case


@pytest.mark.parametrize("args, kw", GRAD_CASES, ids=[str(i) for i in range(len(GRAD_CASES))])
def test_gradient_with_coordinates_matches_numpy_and_central_differences(args, kw):
    want = np.gradient(F2, *args, **kw)
    got = np.gradient(ap.constant(F2), *args, **kw)
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-13, atol=1e-13)
    Gs = [RNG.normal(size=w.shape) for w in want]

    def loss(f):
        r = np.gradient(f, *args, **kw)
        return sum(np.sum(a * b) for a, b in zip(r if isinstance(r, tuple) else (r,), Gs))
    (g,) = _grad(loss, F2)
    np.testing.assert_allclose(g, central(lambda f: float(loss(f)), F2, h=1e-6), rtol=1e-7, atol=1e-8)


def test_gradient_is_exact_for_quadratics_on_uneven_coordinates_with_edge_order_2():
    # numpy's formula is second order: exact for f = x^2 (interior and both edges)
    f = XS ** 2
    np.testing.assert_allclose(np.gradient(ap.constant(f), XS, edge_order=2).numpy(), 2 * XS, rtol=1e-13, atol=1e-14)


def test_gradient_coordinates_are_differentiable():
    x = ap.constant(XS)
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.gradient(ap.constant(F2[0]), x, edge_order=2) * F2[1])
    loss = lambda xs: float(np.sum(np.gradient(F2[0], xs, edge_order=2) * F2[1]))  # noqa: E731
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), central(loss, XS, h=1e-6), rtol=1e-7, atol=1e-8)


def test_gradient_refuses_what_numpy_refuses():
    f = ap.constant(F2)
    for args, kw, err, msg in [((XS[:5],), dict(axis=1), ValueError, "must match the length"),
                               ((np.ones((2, 6)),), dict(axis=1), ValueError, "scalars or 1d"),
                               ((XS,), dict(), TypeError, "invalid number of arguments")]:
        with pytest.raises(err, match=msg):
            np.gradient(F2, *args, **kw)
        with pytest.raises(err, match=msg):
            np.gradient(f, *args, **kw)


# --- in-place operators on a Tensor rebind (TF eager); a Variable refuses ------------------
def _inplace_chain(z, W):
    z += 1.0
    z *= z
    z -= 0.5
    z /= 3.0
    z **= 1.5
    z @= W
    return z


def test_gradients_and_tangents_through_in_place_operators():
    x0 = np.array([[0.3, 1.2], [0.7, 0.4]])
    W = np.array([[1.0, -2.0], [0.5, 0.25]])
    want = autograd.grad(lambda x: anp.sum(_inplace_chain(2.0 * x, W)))(x0)
    x = ap.Variable(x0)
    with ap.GradientTape() as tape:
        y = np.sum(_inplace_chain(2.0 * x, W))  # (a z the caller also held would be refused: an alias)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-13)
    u = RNG.normal(size=x0.shape)
    with ap.ForwardAccumulator(x, u) as acc:
        y = np.sum(_inplace_chain(2.0 * x, W))
    assert float(acc.jvp(y)) == pytest.approx(float(np.sum(want * u)), rel=1e-13)
    with pytest.raises(RuntimeError, match=r"Variable .*`v \+= value` is not supported.*assign_add"):
        x += 1.0
    np.testing.assert_array_equal(x.numpy(), x0)
    x.assign_add(np.ones_like(x0))  # the way to write into a Variable
    np.testing.assert_array_equal(x.numpy(), x0 + 1)


# --- scipy.special on a Tensor: dispatched, or a warning that names the autoprop twin -----
scipy_special = pytest.importorskip("scipy.special")


@pytest.mark.parametrize("name", ["logsumexp", "softmax", "log_softmax"])
def test_scipys_python_functions_on_a_tensor_warn_naming_the_twin_and_strict_mode_raises(name):
    import warnings

    from autoprop.scipy import special as aps
    f = getattr(scipy_special, name)
    x = ap.Variable([1.0, 2.0, 3.5], name="x")
    with pytest.warns(ap.TapeEscapeWarning, match=rf"Variable 'x'.*inside scipy\.special\.{name}\b.*"
                                                  rf"use autoprop\.scipy\.special\.{name} "):
        with ap.GradientTape():
            y = f(x)
    assert not isinstance(y, ap.Tensor)  # scipy's own result: detached, and said so
    with ap.strict_mode(), pytest.raises(ap.TapeEscapeError, match=rf"autoprop\.scipy\.special\.{name}"):
        with ap.GradientTape():
            f(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x)  # no tape: nothing to lose, no warning
    # the twin records; its gradient is autograd's (its logsumexp, and softmax from it)
    import autograd.scipy.special as ags
    oracle = {"logsumexp": ags.logsumexp, "softmax": lambda v: anp.exp(v - ags.logsumexp(v)),
              "log_softmax": lambda v: v - ags.logsumexp(v)}[name]
    w = np.array([0.3, -1.0, 2.0])
    with ap.GradientTape() as tape:
        y = np.sum(getattr(aps, name)(x) * w)
    want = autograd.grad(lambda v: anp.sum(oracle(v) * w))(x.numpy())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-13)


def test_scipys_ufuncs_dispatch_to_autoprop_and_unknown_scipy_functions_are_named():
    x = ap.Variable([0.2, 0.5, 0.9], name="x")
    with ap.GradientTape() as tape:
        y = np.sum(scipy_special.expit(x) + scipy_special.gammaln(x) + scipy_special.logit(x))
    assert isinstance(y, ap.Tensor)
    import autograd.scipy.special as ags
    want = autograd.grad(lambda v: anp.sum(ags.expit(v) + ags.gammaln(v) + ags.logit(v)))(x.numpy())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-13)
    stats = pytest.importorskip("scipy.stats")
    with pytest.warns(ap.TapeEscapeWarning, match=r"inside scipy\.stats\.zscore.*no autoprop twin"):
        with ap.GradientTape():
            stats.zscore(x)


# --- the shared oracle (tests/oracles.py) -------------------------------------------------
@pytest.mark.parametrize("h", [1e-5, 1e-6])
def test_the_central_difference_oracle_is_exact_on_a_quadratic_and_leaves_x_alone(h):
    w = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])
    x = np.array([[0.3, -1.2, 2.0], [0.0, 4.0, -0.7]])
    before = x.copy()
    g = central(lambda z: float(np.sum(w * z * z)), x, h=h)
    assert g.shape == x.shape and g.dtype == np.float64
    np.testing.assert_allclose(g, 2 * w * x, rtol=0, atol=1e-8)  # no truncation error for a quadratic
    assert np.array_equal(x, before)
    assert central(lambda z: float(z ** 3), 2.0, h=h).shape == ()  # a 0-d point: d/dz z^3 = 12
    assert central(lambda z: float(z ** 3), 2.0, h=h) == pytest.approx(12.0, abs=1e-6)


@pytest.mark.parametrize("call, name", [
    (lambda x: __import__("scipy.linalg").linalg.solve_triangular(x, np.ones(3), lower=True),
     "scipy.linalg.solve_triangular"),
    (lambda x: __import__("scipy.linalg").linalg.cho_solve((x, True), np.ones(3)), "scipy.linalg.cho_solve"),
    (lambda x: __import__("scipy.linalg").linalg.expm(x), "scipy.linalg.expm"),
])
def test_the_escape_warning_names_the_scipy_function_not_its_decorator(call, name):
    # before: "It happened inside scipy.wrapper" (the outermost scipy frame is scipy._lib's
    # array-batching decorator, which converts the arrays before it calls the function)
    x = ap.Variable(np.eye(3) * 2.0)
    with pytest.warns(ap.TapeEscapeWarning, match=rf"inside {name.replace('.', chr(92) + '.')}, a scipy"):
        with ap.GradientTape():
            call(x)


@pytest.mark.parametrize("call, hint", [
    (lambda x: np.r_[x, x], r"inside np\.r_\[\.\.\.\].*write ap\.numpy\.r_\[\.\.\.\]"),
    (lambda x: np.c_[x, x], r"inside np\.c_\[\.\.\.\].*write ap\.numpy\.c_\[\.\.\.\]"),
    (lambda x: np.full((2, 2), x[0]), r"inside np\.full\(shape, t\).*t \+ np\.zeros\(shape\)"),
])
def test_the_escape_warning_of_numpy_s_undispatched_builders_names_the_recorded_spelling(call, hint):
    # before: the generic escape text only (np.full(shape, t) and np.r_/np.c_ never dispatch)
    x = ap.Variable(np.array([1.0, 2.0]))
    with pytest.warns(ap.TapeEscapeWarning, match=hint):
        with ap.GradientTape():
            call(x)
    with ap.GradientTape(persistent=True) as tape:  # the spellings the hints give are recorded
        r, c = ap.numpy.r_[x, x], ap.numpy.c_[x, x]
        f = x[0] + np.zeros((2, 2))
        loss_r, loss_c, loss_f = np.sum(r * [1.0, 2.0, 3.0, 4.0]), np.sum(c * [[1.0, 2.0], [3.0, 4.0]]), np.sum(f)
    np.testing.assert_array_equal(tape.gradient(loss_r, x).numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(tape.gradient(loss_c, x).numpy(), [3.0, 7.0])
    np.testing.assert_array_equal(tape.gradient(loss_f, x).numpy(), [4.0, 0.0])
