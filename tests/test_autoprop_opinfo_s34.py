"""Session 34's OpInfo findings (opinfo34, fixed by fixo34): numpy's dtype promotion of weights
in average/cov, pinv with every singular value cut, logsumexp on 0-d and empty input, imag of a
0-d complex Variable, norm(ord=0) of complex input, eig of empty matrices, take on 0-d input,
corrcoef's refusal of complex input, the NaN rule of maximum/minimum."""

import math
import warnings

import numpy as np
import pytest

import autoprop as ap


def _central(f, x, h=1e-6):
    """d f / d x (f real-valued) by central differences."""
    x = np.array(x, dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, dn = x.copy(), x.copy()
        up[i] += h
        dn[i] -= h
        out[i] = (f(up) - f(dn)) / (2 * h)
    return out


# --- F0: the weights are summed in numpy's result dtype, never their own -------------------
X3 = np.array([1.0, 2.0, 4.0])
W32 = np.array([0.3666413, 0.0583007, 0.7006447], dtype=np.float32)


def test_cov_float32_aweights_of_float64_data_summed_in_float64():
    got = float(np.asarray(np.cov(ap.constant(X3), ddof=2, aweights=ap.constant(W32))))
    # mpmath (50 digits) on the same inputs: 263.0960412744848; float32 sums gave 263.0937288...
    assert abs(got - 263.0960412744848) <= 1e-12 * 263.1
    for kw in (dict(ddof=2), dict(ddof=0), dict(), dict(fweights=np.array([1, 2, 1]))):
        for w in (ap.constant(W32), W32):
            got = np.asarray(np.cov(ap.constant(X3), aweights=w, **kw))
            want = np.cov(X3, aweights=W32, **kw)
            assert got.dtype == want.dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=1e-13)


def test_average_sums_float32_weights_in_the_result_dtype_and_returns_it():
    avg, scl = np.average(ap.constant(X3), weights=ap.constant(W32), returned=True)
    assert np.asarray(scl).dtype == np.float64 and np.asarray(avg).dtype == np.float64
    assert abs(float(np.asarray(scl)) - math.fsum(W32.astype(float))) <= 1e-15
    want = math.fsum(X3 * W32.astype(float)) / math.fsum(W32.astype(float))
    assert abs(float(np.asarray(avg)) - want) <= 1e-15 * abs(want)
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for w in (np.array([1, 2, 3]), np.array([0.5, 1.0, 2.0])):  # int64 / float64 weights, float32 data
        a, s = np.average(ap.constant(x), axis=1, weights=w, returned=True)
        na, ns = np.average(x, axis=1, weights=w, returned=True)
        assert (np.asarray(a).dtype, np.asarray(s).dtype) == (na.dtype, ns.dtype) == (np.float64,) * 2
        np.testing.assert_allclose(np.asarray(a), na, rtol=1e-15)


def test_cov_dtype_option_follows_numpy_promotion():
    x = np.array([[1.0, 2.5, 4.0, 0.5], [2.0, 0.0, 1.0, 3.0]])
    for kw in (dict(dtype=np.float32), dict(dtype=np.float32, aweights=W32[[0, 1, 2, 0]])):
        got, want = np.asarray(np.cov(ap.constant(x), **kw)), np.cov(x, **kw)
        assert got.dtype == want.dtype  # float32 without weights; float64 with (numpy's)
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_cov_weighted_gradients_match_central_differences():
    x = np.array([[1.0, 2.5, 4.0], [2.0, 0.0, 1.0]])
    w = np.array([0.5, 2.0, 1.25])
    f = lambda a, b: np.cov(a, ddof=2, aweights=b)[0, 1]  # noqa: E731
    vx, vw = ap.Variable(x), ap.Variable(w)
    with ap.GradientTape() as t:
        y = f(vx, vw)
    gx, gw = (np.asarray(g) for g in t.gradient(y, [vx, vw]))
    np.testing.assert_allclose(gx, _central(lambda a: f(a, w), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, _central(lambda b: f(x, b), w), rtol=1e-6, atol=1e-8)


# --- F1: pinv with every singular value cut (rcond >= 1): A^+ = 0 everywhere, derivative 0 ---
@pytest.mark.parametrize("kw", [dict(rtol=1.0), dict(rcond=1.5)])
def test_pinv_cutting_every_value_has_derivative_zero(kw):
    A = np.array([[2.0, 0.3], [0.1, 1.0], [0.5, -1.0]])
    f = lambda a: float(np.sum(np.linalg.pinv(a, **kw) * np.arange(6.0).reshape(2, 3)))  # noqa: E731
    x = ap.Variable(A)
    with ap.GradientTape() as t:
        y = np.sum(np.linalg.pinv(x, **kw) * np.arange(6.0).reshape(2, 3))
    g = np.asarray(t.gradient(y, x))
    np.testing.assert_array_equal(g, _central(f, A))  # central differences: exactly 0
    np.testing.assert_array_equal(g, np.zeros((3, 2)))
    with ap.ForwardAccumulator(x, np.ones((3, 2))) as acc:
        y = np.linalg.pinv(x, **kw)
    np.testing.assert_array_equal(np.asarray(acc.jvp(y)), np.zeros((2, 3)))


def test_pinv_batch_with_one_matrix_all_cut_keeps_the_others_gradient():
    A = np.array([[2.0, 0.3], [0.1, 1.0]])
    x = ap.Variable(np.stack([A, A]))
    with ap.GradientTape() as t:
        y = np.sum(np.linalg.pinv(x, rcond=np.array([1.0, 1e-15])))
    g = np.asarray(t.gradient(y, x))
    np.testing.assert_array_equal(g[0], np.zeros((2, 2)))
    np.testing.assert_allclose(g[1], _central(lambda a: np.sum(np.linalg.inv(a)), A), rtol=1e-6)


# --- F2, F8: scipy's logsumexp on 0-d input (atleast_1d) and on empty slices (-inf) -----------
@pytest.mark.parametrize("b", [None, 2.0, np.array([1.0, -1.0])])
@pytest.mark.parametrize("a", [np.float64(0.5), np.zeros(0), np.zeros((3, 0)), np.zeros((0, 3)), np.array([1.0, 2.0])])
def test_logsumexp_0d_and_empty_as_scipy(a, b):
    import scipy.special as sp

    from autoprop.scipy import special as asp
    for axis in (None, 0, -1, (0,), (-1,), 1):
        for keepdims in (False, True):
            kw = dict(axis=axis, b=b, keepdims=keepdims)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    want = np.asarray(sp.logsumexp(a, **kw))
            except (ValueError, IndexError):  # (scipy's own refusals: axis out of range, broadcast)
                continue
            got = np.asarray(asp.logsumexp(ap.Variable(a), **kw))
            assert got.shape == want.shape, kw
            np.testing.assert_allclose(got, want, rtol=1e-14)  # -inf where empty; one element: a itself


def test_logsumexp_0d_and_empty_gradients():
    from autoprop.scipy import special as asp
    for a, kw in ((np.float64(0.5), dict(axis=(0,), keepdims=True)), (np.float64(0.5), dict(axis=(-1,))),
                  (np.zeros(0), dict(axis=0)), (np.zeros((3, 0)), dict(axis=1)), (np.zeros((0, 3)), dict(axis=0))):
        for b in (None, 2.0):
            v = ap.Variable(a)
            with ap.GradientTape() as t:
                y = np.sum(asp.logsumexp(v, b=b, **kw))
            g = np.asarray(t.gradient(y, v))
            assert g.shape == a.shape
            np.testing.assert_array_equal(g, np.ones(a.shape))  # one element: d/da = 1; empty: empty
            with ap.ForwardAccumulator(v, np.ones(a.shape)) as acc:
                y = asp.logsumexp(v, b=b, **kw)
            np.testing.assert_array_equal(np.asarray(acc.jvp(y)), np.where(np.asarray(y) == -np.inf, 0.0, 1.0))


# --- F3: a rule on 0-d values that gives a Python number (-1j * numpy float scalar) ----------
@pytest.mark.parametrize("op", ["imag", "real", "conj", "angle", "abs", "exp", "square"])
def test_0d_complex_gradient_matches_its_1d_twin(op):
    z = 1 + 2j

    def grad(v):
        with ap.GradientTape() as t:
            y = np.sum(np.real(getattr(np, op)(v) * 3.0))
        return np.asarray(t.gradient(y, v))
    g0, g1 = grad(ap.Variable(np.complex128(z))), grad(ap.Variable(np.array([z])))
    assert g0.shape == () and g0.dtype == np.complex128
    assert g0 == g1[0]
    if op == "imag":
        assert g0 == 3j  # torch's (d/d conj(z) convention: HIPS autograd gives the conjugate, -3j)


# --- F4: the count norm (ord=0) of complex input is real, as numpy ---------------------------
@pytest.mark.parametrize("dt", [np.complex128, np.complex64, np.float32, np.float64])
def test_norm_ord0_has_numpys_real_dtype(dt):
    z = np.array([[1 + 2j, 0, 3j], [0, 0, 1]]).astype(dt) if np.dtype(dt).kind == "c" else \
        np.array([[1.0, 0, 3.0], [0, 0, 1]], dtype=dt)
    for f in (lambda a: np.linalg.norm(a[0], 0), lambda a: np.linalg.vector_norm(a, ord=0),
              lambda a: np.linalg.vector_norm(a, ord=0, axis=1, keepdims=True)):
        got, want = np.asarray(f(ap.constant(z))), f(z)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)  # counts: exact


# --- F5: eig / eigvals of empty matrices: the empty gradient ---------------------------------
@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
@pytest.mark.parametrize("dt", [float, complex])
def test_eig_of_empty_matrices_has_the_empty_gradient(shape, dt):
    A = ap.Variable(np.zeros(shape, dt))
    with ap.GradientTape() as t:
        w, v = np.linalg.eig(A)
        y = np.sum(np.real(np.linalg.eigvals(A))) + np.sum(np.abs(v)) + np.sum(np.real(w))
    g = np.asarray(t.gradient(y, A))
    assert g.shape == shape and g.dtype == np.dtype(dt)
    with ap.ForwardAccumulator(A, np.ones(shape, dt)) as acc:
        w = np.linalg.eigvals(A)
    assert np.asarray(acc.jvp(w)).shape == shape[:-1]


# --- F6: take on 0-d input (numpy: one element, as 1-D); expand_dims' axis checks -----------
def test_take_on_0d_input_as_numpy_with_its_gradient():
    x = np.array(2.0)
    for axis in (0, -1):
        for idx in ([0], 0, [[0, 0]], [-1]):
            got, want = np.asarray(np.take(ap.Variable(x), idx, axis=axis)), np.take(x, idx, axis=axis)
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want)
    v = ap.Variable(x)
    with ap.GradientTape() as t:
        y = np.sum(np.take(v, [0, 0, -1], axis=0) * np.array([1.0, 2.0, 3.0]))
    assert float(np.asarray(t.gradient(y, v))) == 6.0  # repeated indices accumulate: 1 + 2 + 3
    for axis, err in ((1, np.exceptions.AxisError), ((0,), TypeError)):
        with pytest.raises(err):
            np.take(x, [0], axis=axis)
        with pytest.raises(err):
            np.take(ap.Variable(x), [0], axis=axis)


@pytest.mark.parametrize("x", [np.array(2.0), np.ones(3)])
@pytest.mark.parametrize("axis", [1, 2, -2, -3, (0, 2), (1, 1), (0, 3), [0, 1]])
def test_expand_dims_checks_axes_as_numpy(x, axis):
    try:
        want = np.expand_dims(x, axis).shape
    except (np.exceptions.AxisError, ValueError) as e:
        with pytest.raises(type(e)):
            np.expand_dims(ap.Variable(x), axis)  # (was a silent reshape: axis taken modulo)
        return
    assert np.expand_dims(ap.Variable(x), axis).shape == want


# --- F7: corrcoef of complex input: numpy's clip of each part, recorded (was refused by clip) ---
def test_corrcoef_complex_values_and_gradient_match_numpy_and_central_differences():
    z0 = np.array([[1 + 1j, 2, 3], [1, 0, 2j]])
    W1, W2 = np.array([[0.3, 1.2], [-0.7, 0.5]]), np.array([[1.1, -0.4], [0.9, 0.2]])
    loss = lambda c: np.sum(np.real(c) * W1) + np.sum(np.imag(c) * W2)  # noqa: E731
    z = ap.Variable(z0)
    with ap.GradientTape() as t:
        c = np.corrcoef(z)
        y = loss(c)
    np.testing.assert_allclose(np.asarray(c), np.corrcoef(z0), rtol=1e-14, atol=1e-15)
    assert np.asarray(c).dtype == np.complex128
    g = np.asarray(t.gradient(y, z))  # autoprop's (torch's) convention: dL/dRe + i dL/dIm
    want = _central(lambda re: loss(np.corrcoef(re + 1j * z0.imag)), z0.real) \
        + 1j * _central(lambda im: loss(np.corrcoef(z0.real + 1j * im)), z0.imag)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


# --- F9: one NaN rule for maximum/minimum/fmax/fmin: the gradient goes to the returned input ---
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_nan_operand_gets_the_gradient_when_the_forward_returns_it(name):
    nan = np.nan
    propagates = name in ("maximum", "minimum")  # numpy: maximum/minimum return the NaN, fmax/fmin the number
    for a, b, want in ((nan, 1.0, [1.0, 0.0] if propagates else [0.0, 1.0]),
                       (1.0, nan, [0.0, 1.0] if propagates else [1.0, 0.0]),
                       (nan, nan, [0.5, 0.5]), (1.0, 1.0, [0.5, 0.5])):
        x, y = ap.Variable(np.array([a, 2.0])), ap.Variable(np.array([b, 0.0]))
        with ap.GradientTape() as t:
            z = np.sum(getattr(np, name)(x, y) * np.array([3.0, 1.0]))
        gx, gy = (np.asarray(g) for g in t.gradient(z, [x, y]))
        big = name in ("maximum", "fmax")
        np.testing.assert_array_equal([gx[0], gy[0]], np.multiply(want, 3.0))
        np.testing.assert_array_equal([gx[1], gy[1]], [1.0, 0.0] if big else [0.0, 1.0])
        with ap.ForwardAccumulator(x, np.ones(2)) as acc:
            z = getattr(np, name)(x, y)
        np.testing.assert_array_equal(np.asarray(acc.jvp(z)), [want[0], 1.0 if big else 0.0])
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()) as buf:
        ap.explain(name)
    out = buf.getvalue()
    assert "NaN input: the gradient goes to the argument the forward returns" in out


@pytest.mark.parametrize("a, axis", [(np.zeros(0), None), (np.zeros((3, 0)), 1), (np.zeros((0, 3)), 0)])
def test_logsumexp_of_an_empty_slice_warns_no_more_than_scipy(a, axis):
    """log 0 = -inf is the answer, not an accident: scipy's logsumexp gives it silently, so does ours (it
    said numpy's "divide by zero encountered in log")."""
    import scipy.special as sp

    from autoprop.scipy import special as asp
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = sp.logsumexp(a, axis=axis)
        got = asp.logsumexp(ap.Variable(a), axis=axis)
    np.testing.assert_array_equal(np.asarray(got), want)
