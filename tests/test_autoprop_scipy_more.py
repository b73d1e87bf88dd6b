"""scipy.special's incomplete gamma and Bessel functions, erfcinv, rgamma, gammasgn and
multigammaln, and scipy.linalg's sqrtm, solve_sylvester and solve_banded, on the tape (session 23:
the gaps HIPS autograd's own tests/test_scipy.py found, tests/test_autoprop_peer.py).

Every derivative is checked against HIPS autograd (the oracle; its autograd.scipy has each of
these but ``yv``) and central differences, first and second order.
"""

import autograd
import autograd.scipy.special as ags
import numpy as np
import pytest
import scipy.special as ss

import autoprop as ap
from autoprop.scipy import special as aps

X = np.array([0.45, 1.3, 2.7, 4.1])


def _cd(f, x, h=1e-6):
    """Central differences of an elementwise f (float64)."""
    return (f(x + h) - f(x - h)) / (2 * h)


def _tape_d1_d2(f, x):
    """f'(x) and f''(x) elementwise, reverse over reverse."""
    X = ap.constant(x)
    with ap.GradientTape() as outer:
        outer.watch(X)
        with ap.GradientTape() as inner:
            inner.watch(X)
            y = f(X)
        d1 = inner.gradient(y, X)
    d2 = outer.gradient(d1, X)
    return d1.numpy(), d2.numpy()


# name, autoprop function (scipy's ufunc: dispatched), autograd function or None, points
UNARY_X = [
    ("gammainc", lambda x: ss.gammainc(1.7, x), lambda x: ags.gammainc(1.7, x), X),
    ("gammaincc", lambda x: ss.gammaincc(0.6, x), lambda x: ags.gammaincc(0.6, x), X),
    ("jv", lambda x: ss.jv(2.5, x), lambda x: ags.jn(2.5, x), X),
    ("jn", lambda x: ss.jn(3, x), lambda x: ags.jn(3, x), X),
    ("yv", lambda x: ss.yv(1.5, x), None, X),
    ("yn", lambda x: ss.yn(2, x), lambda x: ags.yn(2, x), X),
    ("iv", lambda x: ss.iv(1.5, x), lambda x: ags.iv(1.5, x), X),
    ("ive", lambda x: ss.ive(2.0, x), lambda x: ags.ive(2.0, x), np.array([-2.1, -0.4, 0.8, 3.3])),
    ("j0", ss.j0, ags.j0, np.array([-5.0, -0.3, 1.2, 9.0])),
    ("j1", ss.j1, ags.j1, np.array([-5.0, -0.3, 1.2, 9.0])),
    ("y0", ss.y0, ags.y0, X),
    ("y1", ss.y1, ags.y1, X),
    ("erfcinv", ss.erfcinv, ags.erfcinv, np.array([0.1, 0.7, 1.2, 1.9])),
    ("rgamma", ss.rgamma, ags.rgamma, np.array([-2.5, -0.7, 0.4, 3.2])),
    ("multigammaln", lambda x: aps.multigammaln(x, 3), lambda x: ags.multigammaln(x, 3), X + 1.0),
]


@pytest.mark.parametrize("name,f,fa,x", UNARY_X, ids=[u[0] for u in UNARY_X])
def test_first_and_second_derivatives_match_autograd_and_central_differences(name, f, fa, x):
    d1, d2 = _tape_d1_d2(f, x)
    plain = (lambda v: ss.multigammaln(v, 3) if np.ndim(v) == 0
             else np.array([ss.multigammaln(e, 3) for e in v])) if name == "multigammaln" else f
    np.testing.assert_allclose(d1, _cd(plain, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d2, _cd(lambda v: _tape_d1_d2(f, v)[0], x), rtol=1e-5, atol=1e-7)
    if fa is not None:
        ag1 = autograd.elementwise_grad(fa)(x)
        np.testing.assert_allclose(d1, ag1, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(d2, autograd.elementwise_grad(autograd.elementwise_grad(fa))(x),
                                   rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name,f,fa,x", UNARY_X[:8], ids=[u[0] for u in UNARY_X[:8]])
def test_forward_mode_matches_reverse_mode(name, f, fa, x):
    X = ap.constant(x)
    u = np.linspace(-1.0, 1.0, x.size)
    with ap.ForwardAccumulator(X, u) as acc:
        y = f(X)
    np.testing.assert_allclose(acc.jvp(y).numpy(), _tape_d1_d2(f, x)[0] * u, rtol=1e-12)


def test_values_are_scipys_and_gammasgn_passes_no_gradient():
    x = ap.Variable(X)
    with ap.GradientTape(persistent=True) as tape:
        y = ss.gammainc(1.7, x)
        s = ss.gammasgn(x - 3.0)
    np.testing.assert_array_equal(y.numpy(), ss.gammainc(1.7, X))
    np.testing.assert_array_equal(s.numpy(), ss.gammasgn(X - 3.0))
    assert tape.gradient(s, x) is None
    np.testing.assert_array_equal(aps.multigammaln(ap.constant(X + 1.0), 3).numpy(), ss.multigammaln(X + 1.0, 3))


def test_a_gradient_for_the_order_or_shape_parameter_is_refused_by_name():
    a, v = ap.Variable([1.5, 2.0]), ap.Variable([0.5, 1.0])
    with ap.GradientTape() as tape:  # gammainc's a is differentiated (tests/test_autoprop_incgamma.py)
        y = ap.reduce_sum(ss.gammainc(a, 0.7))
    h = 1e-6
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), (ss.gammainc(np.array([1.5, 2.0]) + h, 0.7)
                                                            - ss.gammainc(np.array([1.5, 2.0]) - h, 0.7)) / (2 * h),
                               rtol=1e-7)
    with ap.GradientTape(), pytest.raises(TypeError, match=r"jv\(v, x\) is recorded in x only.*v carries"):
        ss.jv(v, 0.7)
    # a Tensor that carries no gradient is a value: no refusal
    assert np.allclose(ss.iv(ap.constant([0.5, 1.0]), 0.7).numpy(), ss.iv([0.5, 1.0], 0.7))


def test_multigammaln_refuses_what_scipy_refuses():
    with pytest.raises(ValueError, match="positive integer"):
        aps.multigammaln(ap.constant(3.0), 2.5)
    with pytest.raises(ValueError, match=r"> 0.5 \* \(d-1\)"):
        aps.multigammaln(ap.constant([3.0, 0.9]), 3)


# --- scipy.linalg: sqrtm, solve_sylvester, solve_banded ------------------------------------------
import autograd.numpy as agn  # noqa: E402
import autograd.scipy.linalg as agl  # noqa: E402
import scipy.linalg as sl  # noqa: E402

from autoprop.scipy import linalg as apl  # noqa: E402

_R = np.random.default_rng(23)
SPD = (lambda m: m @ m.T + 3.0 * np.eye(3))(_R.standard_normal((3, 3)))
A3, B2, Q32 = _R.standard_normal((3, 3)) + 2 * np.eye(3), _R.standard_normal((2, 2)) + 2 * np.eye(2), \
    _R.standard_normal((3, 2))
AB = np.array([[0.0, 0.7, -0.4, 0.3, 0.9], [2.5, 3.1, 2.2, 2.9, 3.4], [0.5, -0.6, 0.8, 0.2, 0.0]])
W_OUT = _R.standard_normal((3, 3))


def _central_grad(f, x, h=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (float(f(x + e)) - float(f(x - e))) / (2 * h)
    return out


def _tape_grad_hvp(f, x, v):
    """grad f(x) and the Hessian-vector product H v, reverse over reverse."""
    X = ap.constant(x)
    with ap.GradientTape() as outer:
        outer.watch(X)
        with ap.GradientTape() as inner:
            inner.watch(X)
            y = f(X)
        g = inner.gradient(y, X)
        gv = np.sum(g * v)
    return g.numpy(), outer.gradient(gv, X).numpy()


# name, autoprop loss (np: autoprop's twins), autograd loss, point
LINALG = [
    ("sqrtm", lambda x: np.sum(np.sin(apl.sqrtm(x)) * W_OUT), lambda x: agn.sum(agn.sin(agl.sqrtm(x)) * W_OUT),
     SPD),
    ("sylvester_a", lambda x: np.sum(apl.solve_sylvester(x, B2, Q32) ** 2),
     lambda x: agn.sum(agl.solve_sylvester(x, B2, Q32) ** 2), A3),
    ("sylvester_b", lambda x: np.sum(apl.solve_sylvester(A3, x, Q32) ** 2),
     lambda x: agn.sum(agl.solve_sylvester(A3, x, Q32) ** 2), B2),
    ("sylvester_q", lambda x: np.sum(np.cos(apl.solve_sylvester(A3, B2, x))),
     lambda x: agn.sum(agn.cos(agl.solve_sylvester(A3, B2, x))), Q32),
    ("banded_ab", lambda x: np.sum(apl.solve_banded((1, 1), x, np.arange(1.0, 6.0)) ** 3),
     lambda x: agn.sum(agl.solve_banded((1, 1), x, np.arange(1.0, 6.0)) ** 3), AB),
    ("banded_b", lambda x: np.sum(apl.solve_banded((1, 1), AB, x) ** 3),
     lambda x: agn.sum(agl.solve_banded((1, 1), AB, x) ** 3), np.arange(1.0, 6.0)),
]


@pytest.mark.parametrize("name,f,fa,x", LINALG, ids=[c[0] for c in LINALG])
def test_scipy_linalg_gradients_and_hvps_match_autograd_and_central_differences(name, f, fa, x):
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    g, hv = _tape_grad_hvp(f, x, v)
    plain = lambda z: f(ap.constant(z)).numpy()  # noqa: E731  (a plain array: scipy's own)
    np.testing.assert_allclose(g, _central_grad(plain, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g, autograd.grad(fa)(x), rtol=1e-9, atol=1e-11)
    if not name.startswith("banded"):  # (autograd's solve_banded VJP is not differentiable again)
        ag_hv = autograd.grad(lambda z: agn.sum(autograd.grad(fa)(z) * v))(x)
        np.testing.assert_allclose(hv, ag_hv, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(hv, _central_grad(lambda z: np.sum(_tape_grad_hvp(f, z, v)[0] * v), x),
                               rtol=1e-5, atol=1e-7)


def test_values_are_scipys_and_batches_are_matrix_by_matrix():
    np.testing.assert_allclose(apl.sqrtm(ap.constant(SPD)).numpy(), sl.sqrtm(SPD), rtol=1e-12)
    np.testing.assert_allclose(apl.solve_sylvester(ap.constant(A3), B2, Q32).numpy(), sl.solve_sylvester(A3, B2, Q32), rtol=1e-12)
    b = np.arange(1.0, 6.0)
    np.testing.assert_allclose(apl.solve_banded((1, 1), ap.constant(AB), b).numpy(), sl.solve_banded((1, 1), AB, b), rtol=1e-12)
    # a batch: each matrix's own gradient (sqrtm's VJP solves a batch of Sylvester equations)
    stack = np.stack([SPD, SPD @ SPD / 10.0 + np.eye(3)])
    X = ap.Variable(stack)
    with ap.GradientTape() as tape:
        y = np.sum(np.sin(apl.sqrtm(X)) * W_OUT)
    g = tape.gradient(y, X).numpy()
    for k in range(2):
        np.testing.assert_allclose(g[k], autograd.grad(LINALG[0][2])(stack[k]), rtol=1e-9)
    Q = ap.Variable(np.stack([Q32, 2 * Q32]))
    with ap.GradientTape() as tape:
        y = np.sum(apl.solve_sylvester(A3, B2, Q) ** 2)
    gq, ga = tape.gradient(y, [Q, X])
    assert ga is None
    for k, s in enumerate((1.0, 2.0)):
        ref = autograd.grad(lambda q: agn.sum(agl.solve_sylvester(A3, B2, q) ** 2))(s * Q32)
        np.testing.assert_allclose(gq.numpy()[k], ref, rtol=1e-9)


def test_shape_errors_name_the_function_and_the_shapes():
    with pytest.raises(ValueError, match=r"solve_sylvester: q must have shape \(\.\.\., 3, 2\).*got shape \(2, 3\)"):
        apl.solve_sylvester(ap.constant(A3), B2, Q32.T)
    with pytest.raises(ValueError, match=r"solve_banded: ab must have shape \(l \+ u \+ 1, n\) = \(4, n\)"):
        apl.solve_banded((2, 1), ap.constant(AB), np.ones(5))
    with pytest.raises(ValueError, match=r"solve_banded: b must have 5 rows"):
        apl.solve_banded((1, 1), ap.constant(AB), np.ones(4))
    with pytest.raises(ValueError, match=r"sqrtm: expected a square matrix"):
        apl.sqrtm(ap.constant(np.ones((2, 3))))


def test_a_real_matrix_with_a_complex_square_root_matches_central_differences():
    """(autograd's own sqrtm VJP is wrong at complex values: tests/test_autoprop_complex.py)"""
    a0 = np.array([[-1.0, 0.2], [0.3, 2.0]])  # an eigenvalue below 0: scipy's sqrtm is complex
    w = np.array([[0.3 - 0.2j, 1.1], [-0.4j, 0.7 + 0.5j]])

    def f(a):
        return np.sum(np.real(apl.sqrtm(a) * w)) + np.sum(np.abs(apl.sqrtm(a)) ** 2)

    A = ap.Variable(a0)
    with ap.GradientTape() as tape:
        y = f(A)
    assert apl.sqrtm(ap.constant(a0)).numpy().dtype.kind == "c"
    np.testing.assert_allclose(tape.gradient(y, A).numpy(), _central_grad(lambda z: f(ap.constant(z)).numpy(), a0),
                               rtol=1e-6, atol=1e-8)


# --- scipy.stats --------------------------------------------------------------------------------
import autograd.scipy.stats as ags_stats  # noqa: E402
import scipy.stats as sst  # noqa: E402

from autoprop.scipy import stats as aps_stats  # noqa: E402

_XS = np.array([[-0.7, 0.2, 1.9], [0.4, -1.3, 0.8]])
_POS = np.array([[0.6, 1.7, 3.2], [2.2, 0.9, 4.1]])
_U = np.array([[0.15, 0.5, 0.85], [0.3, 0.62, 0.07]])
_LOC, _SCALE = np.array([0.3, -0.2, 0.1]), np.array([[1.3], [0.7]])
_COV = np.array([[2.0, 0.3, -0.2], [0.3, 1.5, 0.4], [-0.2, 0.4, 1.2]])
_ALPHA = np.array([1.5, 2.2, 3.1])
_XD = np.array([0.2, 0.5, 0.3])
# (dist, method, args, which args get a gradient)
STATS = [
    ("norm", m, (_XS, _LOC, _SCALE), (0, 1, 2)) for m in ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf")
] + [
    ("t", "pdf", (_XS, 3.5, _LOC, _SCALE), (0, 1, 2, 3)), ("t", "logpdf", (_XS, 3.5, _LOC, _SCALE), (0, 1, 2, 3)),
    ("t", "cdf", (_XS, np.array([2.5, 4.0, 7.0]), _LOC, _SCALE), (0, 2, 3)),
    ("t", "logcdf", (_XS, 4.0, _LOC, _SCALE), (0, 2, 3)),
    ("gamma", "pdf", (_POS, 2.3), (0, 1)), ("gamma", "logpdf", (_POS, 2.3, 0.1, 1.4), (0, 1, 2, 3)),
    ("gamma", "cdf", (_POS, 2.3), (0,)),
    ("chi2", "pdf", (_POS, 3.0), (0, 1)), ("chi2", "logpdf", (_POS, 3.0), (0, 1)), ("chi2", "cdf", (_POS, 3.0), (0,)),
    ("beta", "pdf", (_U, 2.5, 1.7), (0, 1, 2)), ("beta", "logpdf", (_U, 2.5, 1.7), (0, 1, 2)),
    ("beta", "cdf", (_U, 2.5, 1.7), (0,)),
    ("poisson", "pmf", (np.array([0.0, 2.0, 5.0]), _POS), (1,)), ("poisson", "logpmf", (np.array([3.0]), _POS), (1,)),
    ("poisson", "cdf", (np.array([0.0, 2.0, 5.0]), _POS), (1,)),
    ("multivariate_normal", "logpdf", (_XS, _LOC, _COV), (0, 1, 2)),
    ("multivariate_normal", "pdf", (_XS[0], _LOC, _COV), (0, 1, 2)),
    ("dirichlet", "logpdf", (_XD, _ALPHA), (1,)), ("dirichlet", "pdf", (_XD, _ALPHA), (1,)),
]


# the arguments autograd 1.9.1 differentiates (others: central differences only); its multivariate
# normal reads the whole cov, scipy (and autoprop, below) its lower triangle
AUTOGRAD_WRT = {("t", "cdf"): (0, 2), ("t", "logcdf"): (0, 2), ("gamma", "logpdf"): (), ("chi2", "pdf"): (0,),
                ("chi2", "logpdf"): (0,), ("multivariate_normal", "logpdf"): (0, 1),
                ("multivariate_normal", "pdf"): (0, 1), ("gamma", "pdf"): (0, 1)}


def _ag_stats(dist, method):
    mod = ags_stats.multivariate_normal if dist == "multivariate_normal" else getattr(ags_stats, dist)
    return getattr(mod, method)


@pytest.mark.parametrize("dist,method,args,wrt", STATS, ids=[f"{d}.{m}" for d, m, _, _ in STATS])
def test_scipy_stats_values_are_scipys_and_gradients_autograds_and_central_differences(dist, method, args, wrt):
    ours, theirs = getattr(getattr(aps_stats, dist), method), getattr(getattr(sst, dist), method)
    r = ours(*args)  # (plain arguments: a plain array or a constant Tensor)
    np.testing.assert_allclose(r.numpy() if isinstance(r, ap.Tensor) else r, theirs(*args), rtol=1e-10, atol=1e-300)

    def at(fn, i, z, m=np):  # sum(sin(fn(args with args[i] = z)))
        return m.sum(m.sin(fn(*[z if k == i else a for k, a in enumerate(args)])))

    for i in wrt:
        xi = np.asarray(args[i], dtype=float)
        v = ap.Variable(xi)
        with ap.GradientTape() as tape:
            y = at(ours, i, v)
        g = tape.gradient(y, v).numpy()
        np.testing.assert_allclose(g, _central_grad(lambda z, i=i: at(theirs, i, z), xi), rtol=1e-5, atol=1e-8)
        if i in AUTOGRAD_WRT.get((dist, method), wrt):
            ref = autograd.grad(lambda z, i=i: at(_ag_stats(dist, method), i, z, agn))(xi)
            np.testing.assert_allclose(g, ref, rtol=1e-8, atol=1e-12)


def test_scipy_stats_refusals_say_what_is_twinned():
    with pytest.raises(AttributeError, match=r"stats.norm has no 'rvs': its twinned methods are cdf, logcdf"):
        aps_stats.norm.rvs(size=3)
    with pytest.raises(TypeError, match="frozen distributions are not twinned"):
        aps_stats.norm(0.0, 1.0)
    df = ap.Variable([3.0])
    with ap.GradientTape(), pytest.raises(TypeError, match=r"stats.t.cdf is recorded in x, loc and scale only.*df carries"):
        aps_stats.t.cdf(0.5, df)
    with pytest.raises(ValueError, match="normal simplex"):
        aps_stats.dirichlet.logpdf(np.array([0.2, 0.5, 0.4]), _ALPHA)
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        aps_stats.multivariate_normal.logpdf(_XS, _LOC, np.diag([1.0, 1.0, 0.0]))


# --- scipy.signal -------------------------------------------------------------------------------
import autograd.scipy.signal as ags_signal  # noqa: E402
import scipy.signal as ssig  # noqa: E402

from autoprop.scipy import signal as aps_signal  # noqa: E402

CONV = [((6,), (3,)), ((3,), (5,)), ((5, 4), (3, 2)), ((4, 3), (4, 1)), ((3, 3, 2), (2, 2, 2))]


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("s1,s2", CONV, ids=[f"{a}x{b}" for a, b in CONV])
def test_convolve_and_correlate_values_are_scipys_and_gradients_autograds(s1, s2, mode):
    r = np.random.default_rng(len(s1) * 10 + s2[0])
    a, b = r.normal(size=s1), r.normal(size=s2)
    pairs = [(aps_signal.convolve, ssig.convolve), (aps_signal.correlate, ssig.correlate)]
    if len(s1) == 2:
        pairs += [(aps_signal.convolve2d, ssig.convolve2d), (aps_signal.correlate2d, ssig.correlate2d)]
    for ours, theirs in pairs:
        ref = theirs(a, b, mode)
        np.testing.assert_allclose(ours(ap.constant(a), b, mode).numpy(), ref, rtol=1e-12, atol=1e-13)
        w = r.normal(size=ref.shape)
        A, B = ap.Variable(a), ap.Variable(b)
        with ap.GradientTape() as tape:
            y = np.sum(ours(A, B, mode) * w)
        ga, gb = (g.numpy() for g in tape.gradient(y, [A, B]))
        np.testing.assert_allclose(ga, _central_grad(lambda z, f=theirs, w=w: np.sum(f(z, b, mode) * w), a),
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gb, _central_grad(lambda z, f=theirs, w=w: np.sum(f(a, z, mode) * w), b),
                                   rtol=1e-6, atol=1e-8)
        if ours is aps_signal.convolve and not (mode == "valid" and s1[0] < s2[0]):  # (autograd swaps no inputs)
            ref_a, ref_b = autograd.grad(lambda p, q, w=w: agn.sum(ags_signal.convolve(p, q, mode=mode) * w),
                                         (0, 1))(a, b)
            np.testing.assert_allclose(ga, ref_a, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(gb, ref_b, rtol=1e-10, atol=1e-12)


def test_convolve2d_correlate2d_and_refusals():
    r = np.random.default_rng(5)
    a = r.normal(size=(5, 6))
    for s2 in ((3, 2), (2, 2), (4, 3), (1, 4), (6, 7)):  # even and odd kernels; one larger than a
        b = r.normal(size=s2)
        for mode in ("full", "valid", "same"):
            for ours, theirs in ((aps_signal.convolve2d, ssig.convolve2d), (aps_signal.correlate2d, ssig.correlate2d)):
                try:
                    ref = theirs(a, b, mode)
                except ValueError:
                    with pytest.raises(ValueError):
                        ours(ap.constant(a), b, mode)
                    continue
                np.testing.assert_allclose(ours(ap.constant(a), b, mode).numpy(), ref, rtol=1e-12, atol=1e-13)
    b = r.normal(size=(3, 2))
    with pytest.raises(NotImplementedError, match="boundary='fill' with fillvalue=0 only"):
        aps_signal.convolve2d(ap.constant(a), b, boundary="wrap")
    with pytest.raises(ValueError, match="same dimensionality"):
        aps_signal.convolve(ap.constant(a), b[0])
    with pytest.raises(ValueError, match="one must be at least as large as the other"):
        aps_signal.convolve(ap.constant(a), r.normal(size=(6, 5)), mode="valid")


def test_t_cdf_is_smooth_through_its_centre():
    """The betainc form's slope was 0 * inf at z = 0 (nan, and inf at 1e-9 before a series); now scipy's stdtr, whose
    recorded derivative is the density."""
    xs = np.array([0.0, 1e-9, -3e-3, 0.0099, 0.0101, 0.5, -2.0])
    for df in (1.0, 3.0, 30.0):
        x = ap.Variable(xs)
        with ap.GradientTape() as outer:
            with ap.GradientTape() as inner:
                y = np.sum(aps_stats.t.cdf(x, df, 0.0, 1.0))
            g = inner.gradient(y, x)
            s = np.sum(g)
        np.testing.assert_allclose(g.numpy(), sst.t.pdf(xs, df), rtol=1e-10)
        np.testing.assert_allclose(outer.gradient(s, x).numpy(),
                                   (sst.t.pdf(xs + 1e-6, df) - sst.t.pdf(xs - 1e-6, df)) / 2e-6, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(np.asarray(aps_stats.t.cdf(xs[2:], df)), sst.t.cdf(xs[2:], df), rtol=1e-13)
