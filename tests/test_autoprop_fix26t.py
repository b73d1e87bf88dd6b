"""Session 26's OpInfo findings (tester26t, fixed by fixt26): np.diff's every argument form
(n == 0 returns the input, as numpy), reductions of a 0-d Tensor over axis 0 or -1, slogdet at a
singular matrix, norm's subgradient 0 at the origin for every ord, block_diag, batched lstsq."""

import itertools
import zlib

import numpy as np
import pytest
from oracles import central

import autoprop as ap

R = np.random.default_rng(26)


def _value_and_grads(f, xs, w):
    """``f(*xs)``'s value and the gradients of ``sum(f * w)`` in every ``xs`` (None: unconnected)."""
    vs = [ap.Variable(np.array(x, dtype=float)) for x in xs]
    with ap.GradientTape() as tape:
        y = f(*vs)
        loss = ap.reduce_sum(y * w)
    return y.numpy(), [None if g is None else np.asarray(g) for g in tape.gradient(loss, vs)]


# --- 1. np.diff, every argument form ------------------------------------------------------
_X = R.standard_normal((3, 4))
_EXTRAS = {"none": None, "scalar": 0.7, "row": R.standard_normal((3, 2)), "col": R.standard_normal((2, 4))}


def _diff_cases():
    for n, axis, pre, app in itertools.product((0, 1, 2, 3, 5, 7), (-1, 0, 1), _EXTRAS, _EXTRAS):
        ax = axis % 2
        fits = {"none": True, "scalar": True, "row": ax == 1, "col": ax == 0}
        if fits[pre] and fits[app]:
            yield n, axis, pre, app


@pytest.mark.parametrize("n, axis, pre, app", list(_diff_cases()))
def test_diff_every_argument_form_is_numpy_s_value_with_the_central_difference_gradient(n, axis, pre, app):
    # before: n == 0 with prepend/append returned the joined array; numpy returns x unchanged
    extras = [(k, _EXTRAS[name]) for k, name in (("prepend", pre), ("append", app)) if _EXTRAS[name] is not None]
    xs = [_X] + [np.asarray(v, dtype=float) for _, v in extras]

    def f(x, *e):
        return np.diff(x, n=n, axis=axis, **{k: v for (k, _), v in zip(extras, e)})

    want = f(*xs)
    # its own draw (R's depends on the tests run before it in the same xdist worker: fixt28 saw a relative 5.3e-7
    # in one order), and h = 1: diff is linear in each argument, so the central difference is exact but for rounding
    # at any step, and h = 1e-6 made that rounding (eps * |f . w| / h) the test's largest error
    w = np.random.default_rng(zlib.crc32(f"{n} {axis} {pre} {app}".encode())).standard_normal(want.shape)
    y, grads = _value_and_grads(f, xs, w)
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-14, atol=1e-15)
    if n == 0:  # x itself: the extras take no part
        np.testing.assert_array_equal(grads[0], w)
        assert all(g is None for g in grads[1:])
        return
    for k, g in enumerate(grads):
        cd = central(lambda z, k=k: np.sum(f(*xs[:k], z, *xs[k + 1:]) * w), xs[k], h=1.0)
        if g is None:  # (an extra the differences never reach: n > the joined length)
            np.testing.assert_array_equal(cd, 0.0)
        else:
            np.testing.assert_allclose(g, cd, rtol=1e-10, atol=1e-10)


def test_diff_n0_returns_the_tensor_itself_and_refuses_as_numpy():
    x = ap.Variable([1.0, 4.0, 9.0])
    assert np.diff(x, n=0, prepend=5.0, append=[1.0, 2.0]) is x  # (numpy: `return a`)
    assert np.diff(ap.Variable(3.0), n=0) is not None  # 0-d and n == 0: numpy returns it too
    with pytest.raises(ValueError, match="diff requires input that is at least one dimensional"):
        np.diff(ap.Variable(3.0))
    with pytest.raises(ValueError, match="order must be non-negative but got -1"):
        np.diff(x, n=-1)
    with pytest.raises(np.exceptions.AxisError):
        np.diff(x, axis=1)


# --- 2. reductions of a 0-d Tensor over axis 0 or -1 (numpy accepts them) ---------------------
_REDUCE_0D = {
    "sum": np.sum, "max": np.max, "amax": np.amax, "min": np.min, "amin": np.amin, "prod": np.prod,
    "nansum": np.nansum, "nanmean": np.nanmean, "nanprod": np.nanprod, "nanmax": np.nanmax,
    "nanmin": np.nanmin, "nanvar": np.nanvar, "nanstd": np.nanstd, "ptp": np.ptp,
    "cumsum": np.cumsum, "cumprod": np.cumprod, "method sum": lambda x, **kw: x.sum(**kw),
    "method prod": lambda x, **kw: x.prod(**kw), "add.reduce": lambda x, **kw: np.add.reduce(x, **kw),
}


def _second(f, x0):
    """f's value, first derivative (reverse), second derivative (reverse over reverse) and JVP at x0."""
    x = ap.Variable(x0)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = f(x)
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)
    with ap.ForwardAccumulator(x, ap.constant(1.0)) as acc:
        j = acc.jvp(f(x))
    return y.numpy(), g.numpy(), None if h is None else h.numpy(), j.numpy()


@pytest.mark.parametrize("name, keepdims, axis", [
    (n, k, a) for n in sorted(_REDUCE_0D) for k in (False, True, None) for a in (0, -1)
    if k is None or not n.startswith("cum")])  # (numpy's cumsum/cumprod take no keepdims)
def test_reductions_of_a_0d_tensor_over_axis_0_or_minus_1_are_numpy_s(name, keepdims, axis):
    # before: tape.gradient raised ZeroDivisionError in _keep_reduced (sum, max, min, prod,
    # nansum, nanmean ...); prod's second derivative and cumsum/cumprod raised AxisError
    fn = _REDUCE_0D[name]
    kw = {"axis": axis} if keepdims is None else {"axis": axis, "keepdims": keepdims}
    x0 = np.float64(1.5)
    want = fn(x0, **kw)
    y, g, h, j = _second(lambda x: np.sum(fn(x, **kw) ** 3), x0)  # x^3 where the reduction is x
    np.testing.assert_array_equal(fn(ap.constant(x0), **kw).numpy(), want)
    if name in ("nanvar", "nanstd", "ptp"):  # 0 whatever x: a constant
        assert float(g) == 0.0 and float(j) == 0.0 and (h is None or float(h) == 0.0)
    else:
        np.testing.assert_allclose([float(y), float(g), float(h), float(j)],
                                   [x0 ** 3, 3 * x0 ** 2, 6 * x0, 3 * x0 ** 2], rtol=1e-15)


@pytest.mark.parametrize("call", [lambda x: np.linalg.norm(x, axis=0), lambda x: np.linalg.norm(x, 2, -1),
                                  lambda x: np.linalg.vector_norm(x, axis=0),
                                  lambda x: np.linalg.vector_norm(x, axis=-1, keepdims=True)])
def test_norm_of_a_0d_tensor_over_an_axis_is_numpy_s_axis_error(call):
    # before: vector_norm raised ZeroDivisionError (numpy: AxisError); norm returned a value
    with pytest.raises(np.exceptions.AxisError):
        call(np.float64(2.0))
    with pytest.raises(np.exceptions.AxisError):
        call(ap.Variable(2.0))
    np.testing.assert_array_equal(np.linalg.norm(ap.Variable(-2.0)).numpy(), 2.0)


# --- 3. slogdet at a singular matrix; det's gradient there is the cofactor matrix ---------------
_SING = np.array([[1.0, 2.0], [2.0, 4.0]])


def test_slogdet_at_a_singular_matrix_refuses_its_derivative_by_name():
    # before: numpy's values, then a bare "LinAlgError: Singular matrix" from np.linalg.inv in
    # the VJP (torch gives [[-inf, inf], [inf, -inf]], jax the opposite signs: no derivative)
    a = ap.Variable(_SING)
    with ap.GradientTape() as tape:
        sign, logdet = np.linalg.slogdet(a)
    assert (float(sign.numpy()), float(logdet.numpy())) == (0.0, -np.inf)
    with pytest.raises(ValueError, match=r"numpy.linalg.slogdet: the derivative of logabsdet .* singular A; "
                                         r"the 2x2 matrix is singular .*np.linalg.det\(A\)'s gradient"):
        tape.gradient(logdet, a)
    with pytest.raises(ValueError, match=r"slogdet.*2x2 matrix is singular"):
        with ap.ForwardAccumulator(a, ap.constant(np.ones((2, 2)))) as acc:
            acc.jvp(np.linalg.slogdet(a)[1])


def test_slogdet_of_a_batch_names_the_singular_matrix_and_a_zero_cotangent_passes():
    batch = np.stack([np.diag([2.0, 3.0]), _SING])
    a = ap.Variable(batch)
    with ap.GradientTape(persistent=True) as tape:
        logdet = np.linalg.slogdet(a)[1]
        first = logdet[0] * 1.5  # the singular matrix's logabsdet carries no derivative here
        both = ap.reduce_sum(logdet)
    np.testing.assert_allclose(tape.gradient(first, a).numpy(), [np.diag([0.75, 0.5]), np.zeros((2, 2))],
                               rtol=1e-15)
    with pytest.raises(ValueError, match=r"slogdet.*matrix \(batch index \(1,\)\) is singular"):
        tape.gradient(both, a)


def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix():
    # (kept: torch 2.13 gives another value here; central differences agree with the cofactor)
    a = ap.Variable(_SING)
    with ap.GradientTape() as tape:
        d = np.linalg.det(a)
    g = tape.gradient(d, a).numpy()
    np.testing.assert_allclose(g, [[4.0, -2.0], [-2.0, 1.0]], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g, central(np.linalg.det, _SING, h=1e-6), rtol=1e-8, atol=1e-9)


# --- 4. norm's subgradient 0 at the origin for every order --------------------------------------
_ROWS = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, -2.0], [0.5, -1.5, 2.0]])  # the origin, a zero entry, none


def _p_norm_grad(x, p):
    """d ||x||_p / dx of one row: sign(x) |x|^(p-1) ||x||^(1-p) where it exists, 0 elsewhere (torch's)."""
    a = np.abs(x)
    if not a.any() or (p < 0 and not a.all()):
        return np.zeros_like(x)
    n = np.sum(a[a > 0] ** p) ** (1 / p)
    return np.where(a > 0, np.sign(x) * np.where(a > 0, a, 1.0) ** (p - 1) * n ** (1 - p), 0.0)


@pytest.mark.parametrize("p", [0.5, 1.5, 3, 3.5, 4, -1, -1.5, 2.5])
@pytest.mark.parametrize("how", ["norm axis", "norm axis keepdims", "vector_norm tuple axis", "norm 1-D"])
def test_p_norm_gradient_is_0_at_zero_entries_and_the_origin_never_nan(p, how):
    # before: NaN at the origin for p = 1.5, 3, 3.5, 4 (lesson 10 promises the subgradient 0,
    # torch gives 0), NaN at a zero entry for p = 0.5
    calls = {"norm axis": lambda x: np.linalg.norm(x, ord=p, axis=1),
             "norm axis keepdims": lambda x: np.linalg.norm(x, ord=p, axis=1, keepdims=True),
             "vector_norm tuple axis": lambda x: np.linalg.vector_norm(x, ord=p, axis=(1,)),
             "norm 1-D": lambda x: np.stack([np.linalg.norm(x[i], ord=p) for i in range(3)])}
    f = calls[how]
    w = np.array([1.0, -2.0, 0.5])
    x = ap.Variable(_ROWS)
    with ap.GradientTape(persistent=True) as outer:
        with ap.GradientTape() as tape:
            y = f(x)
            loss = ap.reduce_sum(np.reshape(y, (3,)) * w)
        g = tape.gradient(loss, x)
        gsum = ap.reduce_sum(g[0])  # the origin's row: no Hessian; 0 given (torch: NaN)
    with np.errstate(divide="ignore"):  # (numpy's own 0 ** p, p < 0)
        ref = [np.linalg.norm(r, ord=p) for r in _ROWS]
        cd = central(lambda z: np.linalg.norm(z[2], ord=p) * w[2], _ROWS, h=1e-6)
    np.testing.assert_allclose(np.reshape(y.numpy(), (3,)), ref, rtol=1e-15)
    want = np.stack([wi * _p_norm_grad(r, p) for wi, r in zip(w, _ROWS)])
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(g.numpy()[2], cd[2], rtol=1e-7)  # (the smooth row)
    h = outer.gradient(gsum, x)
    np.testing.assert_array_equal(h.numpy()[0], 0.0)
    assert not np.isnan(h.numpy()).any()
    t = R.standard_normal(_ROWS.shape)
    with ap.ForwardAccumulator(x, ap.constant(t)) as acc:
        y = f(x)
    np.testing.assert_allclose(np.reshape(acc.jvp(y).numpy(), (3,)), np.sum(want / w[:, None] * t, axis=1),
                               rtol=1e-13, atol=1e-300)


# --- 5. block_diag's twin, batched lstsq's class, the second order of the nuclear norm --------
@pytest.mark.parametrize("args", [
    (np.float64(2.0), np.array([1.0, 2.0]), R.standard_normal((2, 2))), (),
    (R.standard_normal((2, 1, 1)), R.standard_normal((2, 1))), (np.zeros((0, 3)), np.ones((1, 1))),
    (R.standard_normal((3, 2, 2)), R.standard_normal((2, 3))), (np.int64(1), np.float32(2.0))])
def test_block_diag_twin_is_scipy_s_value_with_each_block_s_slice_of_the_gradient(args):
    # before: scipy.linalg.block_diag on a Tensor escaped the tape with the generic advice
    import scipy.linalg

    from autoprop.scipy import linalg

    want = scipy.linalg.block_diag(*args)
    got = linalg.block_diag(*[ap.constant(a) for a in args])
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)  # (no block: no Tensor, scipy's own array)
    floats = [np.asarray(a, dtype=float) for a in args]
    if not floats:
        return
    w = np.random.default_rng(7).standard_normal(want.shape)  # (its own draw: R's depends on the tests run before)
    _, grads = _value_and_grads(linalg.block_diag, floats, w)
    for k, g in enumerate(grads):
        cd = central(lambda z, k=k: np.sum(scipy.linalg.block_diag(*floats[:k], z, *floats[k + 1:]) * w),
                     floats[k], h=1e-6)
        # linear in each block: the central difference's error is rounding alone, about eps * sum|w| / h (the
        # old atol 1e-10 failed at 6.8e-10 when another test order gave another w)
        np.testing.assert_allclose(g, cd, rtol=1e-8, atol=1e-8)


def test_scipy_block_diag_on_a_tensor_names_the_twin():
    import scipy.linalg

    x = ap.Variable(np.ones((2, 2)))
    with ap.GradientTape(), pytest.warns(ap.TapeEscapeWarning,
                                         match=r"use autoprop\.scipy\.linalg\.block_diag \(the same signature"):
        scipy.linalg.block_diag(x, np.eye(1))


@pytest.mark.parametrize("a, b", [(np.ones((2, 3, 3)), np.ones((2, 3))), (np.ones((3, 3)), np.ones((2, 3, 3))),
                                  (np.ones(3), np.ones(3))])
def test_lstsq_of_a_batch_raises_numpy_s_linalg_error(a, b):
    # before: ValueError (numpy raises LinAlgError, which code may catch)
    with pytest.raises(np.linalg.LinAlgError) as numpy_s:
        np.linalg.lstsq(a, b)
    with pytest.raises(np.linalg.LinAlgError, match=str(numpy_s.value) + r" \(numpy\.linalg\.lstsq: a must be 2-D"):
        np.linalg.lstsq(ap.Variable(a), b)


@pytest.mark.parametrize("ord_", ["nuc", 2, -2])
def test_second_order_of_a_singular_value_norm_at_the_zero_matrix_names_the_norm(ord_):
    # before: the message told the user to call svd(compute_uv=False), which they never wrote
    x = ap.Variable(np.zeros((2, 3)))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as tape:
            y = np.linalg.norm(x, ord_)
        g = tape.gradient(y, x)  # the first order exists (a subgradient from LAPACK's U and V)
        gs = ap.reduce_sum(g * g)
    assert np.isfinite(g.numpy()).all()
    with pytest.raises(ValueError, match=r"If you wrote no svd: this is the second derivative of singular values "
                                         r"\(np\.linalg\.norm\(A, 'nuc'\)"):
        outer.gradient(gs, x)
