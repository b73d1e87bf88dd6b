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


# --- 2 and 7. a Tensor keyword that has a derivative is recorded, never cut ---------------------
class _Strict:
    """Every warning an error: a Tensor converted to numpy (TapeEscapeWarning) fails the test."""

    def __enter__(self):
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        return self._w.__exit__(*exc)


_X2 = np.arange(6.0).reshape(2, 3) - 2.5


@pytest.mark.parametrize("call, cval", [
    (lambda x, c: np.pad(x, 1, constant_values=c), 3.0),
    (lambda x, c: np.pad(x, ((1, 2), (2, 1)), constant_values=c), [[1.0, 2.0], [3.0, 4.0]]),
    (lambda x, c: np.pad(x, ((1, 0), (0, 2)), mode="constant", constant_values=c), [[5.0], [-1.0]]),
    (lambda x, c: np.pad(x, ((2, 1), (1, 3)), mode="linear_ramp", end_values=c), [[1.0, -2.0], [0.5, 4.0]]),
    (lambda x, c: np.pad(x, 2, mode="linear_ramp", end_values=c), 3.0),
    (lambda x, c: np.sum(x, initial=c), 3.0),
    (lambda x, c: np.prod(x, axis=0, initial=c), 3.0),
    (lambda x, c: np.max(x, axis=1, initial=c), 1.0),
    (lambda x, c: np.min(x, initial=c), -1.0),
])
def test_tensor_keyword_is_recorded_with_its_derivative(call, cval):
    w = np.random.default_rng(0).normal(size=np.shape(call(_X2, cval)))
    f = lambda x, c: np.sum(call(x, c) * w)  # noqa: E731
    with _Strict():
        y = call(ap.constant(_X2), ap.constant(np.asarray(cval)))
        gx, gc = _grads(f, _X2, cval)
    np.testing.assert_array_equal(np.asarray(y), call(_X2, np.asarray(cval)))
    np.testing.assert_allclose(gc, _central(f, (_X2, cval), 1), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(gx, _central(f, (_X2, cval), 0), rtol=1e-7, atol=1e-8)
    tc = ap.constant(np.asarray(cval))
    with ap.ForwardAccumulator(tc, np.ones(np.shape(cval))) as acc:
        yy = call(ap.constant(_X2), tc)
    np.testing.assert_allclose(np.sum(np.asarray(acc.jvp(yy)) * w),
                               np.sum(_central(f, (_X2, cval), 1)), rtol=1e-7)


def test_tensor_in_a_tuple_keyword_and_histogram_range():
    c = ap.Variable(3.0)
    with _Strict(), ap.GradientTape(persistent=True) as tape:
        y = np.pad(ap.constant([1.0, 2.0]), 1, constant_values=(c, 0.0))
        e = np.histogram_bin_edges(ap.constant([0.3, 1.2]), bins=2, range=(c - 5.0, 5.0))
        ly, le = np.sum(y * np.array([10.0, 1, 1, 20])), np.sum(e)
    np.testing.assert_array_equal(np.asarray(y), [3.0, 1.0, 2.0, 0.0])
    assert float(tape.gradient(ly, c)) == 10.0
    np.testing.assert_array_equal(np.asarray(e), [-2.0, 1.5, 5.0])
    assert float(tape.gradient(le, c)) == 1.5  # edges linspace(c - 5, 5, 3): 1 + 1/2 + 0


# --- 3, 4, 12. every registered numpy name in numpy's result dtype and values -------------------
_INTS = {
    "int8": np.array([[3, 100], [120, -7]], np.int8),
    "uint8": np.array([[3, 200], [250, 9]], np.uint8),
    "int32": np.array([[3, 50000], [7, 1]], np.int32),
    "bool": np.array([[True, False], [True, True]]),
    "float32": np.array([[0.3, 0.7], [0.9, 0.2]], np.float32),
    "complex64": np.array([[0.3, 0.7j], [0.9, 0.2]], np.complex64),
}
#: numpy's result is not a function of the values (np.empty_like: uninitialised memory)
_NOT_VALUES = {"empty_like"}
#: float32 / complex64 results that still differ from numpy's dtype (left: see the report)
_KNOWN = {("float_power", "complex64"), ("real_if_close", "complex64")}  # (eig/eigvals of complex64:
# numpy's complex64, since session 21's complex eig)


def _leaves(o):
    return [v for x in o for v in _leaves(x)] if isinstance(o, (list, tuple)) else [o]


def _registered():
    from autoprop.core import registry as R
    return [f for f in {**R._UFUNCS, **R._FUNCTIONS} if getattr(f, "__name__", "") not in _NOT_VALUES]


def _anp_name(f):
    """autoprop.numpy's name for the numpy (or scipy.special) callable ``f``, or None (anp.log1p
    is numpy's log1p: scipy's log1p, registered too, has no anp name of its own)."""
    import scipy.special as sp

    import autoprop.numpy as anp
    name = f.__name__
    if getattr(np.linalg, name, None) is f:
        return getattr(anp.linalg, name, None)
    if getattr(np, name, None) is f or (getattr(sp, name, None) is f and not hasattr(np, name)):
        return getattr(anp, name, None)
    return None


#: how the sweep calls each name: numpy's own function on Tensors (numpy's dispatch), and
#: autoprop.numpy's name on Tensors and on plain arrays (session 20 left 41 mismatches there,
#: 37 counted this way: gradient(uint8) wrapped, nanmean(bool) 3.0, fabs(int8) int8, ...)
_VIA = {"np": lambda f: f, "anp": _anp_name, "anp-arrays": _anp_name}


@pytest.mark.parametrize("via", list(_VIA))
@pytest.mark.parametrize("dtype", list(_INTS))
def test_every_registered_function_gives_numpy_s_values_and_dtype(dtype, via):
    """Each registered numpy/scipy name called as f(x) (a ufunc with two inputs: f(x, x[::-1])
    for integers, f(x, 0.5) for floats) on a tiny array: where numpy accepts the call, the
    Tensor call gives numpy's values and dtype (it was: norm of int32 nan, of uint8 13.78,
    gradient(uint8) wrapped, nanmean(bool) 3.0, sp.expm1(int8) float16 inf, float32 with 0.5
    float64, ...), whether spelled ``np.f(t)`` or ``anp.f(t)`` (or ``anp.f(array)``)."""
    x = _INTS[dtype]
    wrong, called = [], 0
    for f in _registered():
        ours = _VIA[via](f)
        if ours is None:
            continue
        nin = getattr(f, "nin", 1)
        args = (x,) if nin == 1 else (x, x[::-1].copy() if dtype in ("int8", "uint8", "int32", "bool")
                                      else 0.5)[:nin]
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                want = f(*args)
        except Exception:  # numpy refuses: nothing to compare
            continue
        if (f.__name__, dtype) in _KNOWN:
            continue
        called += 1
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                got = ours(*[ap.constant(a) if isinstance(a, np.ndarray) and via != "anp-arrays" else a
                             for a in args])
        except Exception as e:
            wrong.append(f"{f.__name__}: raises {type(e).__name__}: {str(e)[:60]}")
            continue
        for w, g in zip(_leaves(want), _leaves(got)):
            if not hasattr(w, "dtype"):
                continue
            w, g = np.asarray(w), np.asarray(g.numpy() if isinstance(g, ap.Tensor) else g)
            close = w.shape == g.shape and (np.array_equal(w, g, equal_nan=w.dtype.kind in "fc") or (
                w.dtype.kind in "fc" and np.allclose(w, g, rtol=1e-6, atol=0, equal_nan=True)))
            if w.dtype != g.dtype or not close:
                wrong.append(f"{f.__name__}: numpy {w.ravel()[:3]} {w.dtype}, ours {g.ravel()[:3]} {g.dtype}")
    assert called > (40 if via == "np" else 25)  # (the sweep reached the names)
    assert not wrong, "\n".join(wrong)


def test_anp_names_return_tensors_and_keep_recording():
    """autoprop.numpy's names on plain arrays and numbers still return Tensors, and on float
    Tensors still record (the float path is the record's own call, as np.f(t)'s)."""
    import autoprop.numpy as anp
    g = anp.gradient(np.array([3, 200, 250, 9], np.uint8))
    assert isinstance(g, ap.Tensor)
    np.testing.assert_array_equal(g.numpy(), np.gradient(np.array([3, 200, 250, 9], np.uint8)))
    assert isinstance(anp.exp(2.0), ap.Tensor) and isinstance(anp.split(np.ones(4), 2)[1], ap.Tensor)
    assert anp.deg2rad(ap.constant(np.array([90], np.int8))).dtype == np.float16  # numpy's
    v = ap.Variable([1.0, 2.0, 4.0])
    with ap.GradientTape() as tape:
        y = anp.sum(anp.gradient(v) * anp.deg2rad(v)) + anp.nanmean(anp.fabs(v))
    want = np.gradient(np.array([1.0, 2.0, 4.0]))  # d/dv of sum(gradient(v) * v * c) + mean(v)
    c = np.pi / 180
    gw = np.array([[-1, 1, 0], [-0.5, 0, 0.5], [0, -1, 1]]).T @ (np.array([1.0, 2.0, 4.0]) * c)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), gw + want * c + 1 / 3, rtol=1e-12)


def test_the_tester_s_integer_and_boolean_cases():
    import scipy.special as sp
    cases = [(np.linalg.norm, np.array([3, 50000, 7, 1], np.int32)),
             (np.linalg.norm, np.array([3, 200, 250, 9], np.uint8)),
             (np.gradient, np.array([3, 200, 250, 9], np.uint8)),
             (lambda v: np.interp(1.5, np.arange(4.0), v), np.array([3, -20000, 30000, 5], np.int16)),
             (sp.expm1, np.array([3, 100, 120], np.int8)),
             (lambda v: np.percentile(v, 30), np.array([3, 100, 120, -7], np.int8))]
    m = np.array([True, False, True, True])
    cases += [(f, m) for f in (np.nanmean, np.nanstd, np.nanvar, np.mean, np.nansum)]
    for f, v in cases:
        want, got = f(v), f(ap.constant(v))
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    assert float(np.linalg.norm(ap.constant(np.array([3, 50000, 7, 1], np.int32)))) == np.linalg.norm(
        np.array([3, 50000, 7, 1], np.int32))  # (was nan)


def test_a_float32_record_with_a_python_number_keeps_float32_and_its_gradient():
    x = ap.Variable(np.array([0.3, -0.7], np.float32))
    with ap.GradientTape() as tape:
        y = np.copysign(x, -0.5) + np.heaviside(x, 0.5)
    assert y.dtype == np.float32  # numpy: float32 (was float64)
    g = tape.gradient(y, x)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), [-1.0, 1.0])  # d copysign(x, -0.5) = sign(x) * -1


# --- 5, 10. &, |, ^, <<, >>, ~ and divmod as numpy's operators -----------------------------------
_I = np.array([3, -2, 7, 0])


@pytest.mark.parametrize("op", [lambda a, b: a | b, lambda a, b: a & b, lambda a, b: a ^ b,
                                lambda a, b: a << b, lambda a, b: a >> b, lambda a, b: b | a,
                                lambda a, b: b ^ a, lambda a, b: ~a, lambda a, b: b >> a % 3])
@pytest.mark.parametrize("b", [4, np.array([1, 2, 3, 1]), True])
def test_bitwise_operators_on_integer_tensors_are_numpy_s(op, b):
    want, got = op(_I, b), op(ap.constant(_I), b)
    assert isinstance(got, ap.Tensor)
    assert got.dtype == want.dtype  # int64 (was bool: logical or/and)
    np.testing.assert_array_equal(got.numpy(), want)


def test_bitwise_operators_on_booleans_are_logical_and_on_floats_refused_as_numpy():
    m, n = np.array([True, False, True]), np.array([True, True, False])
    for op in (lambda a, b: a | b, lambda a, b: a & b, lambda a, b: a ^ b, lambda a, b: ~a):
        np.testing.assert_array_equal(op(ap.constant(m), n).numpy(), op(m, n))
        with pytest.raises(TypeError):
            op(np.array([0.5, 2.0]), 1.0)
        with pytest.raises(TypeError):  # numpy raises TypeError; it was a bool tensor
            op(ap.constant(np.array([0.5, 2.0])), 1.0)


def test_augmented_bitwise_assignment_follows_the_rules_of_plus_equals():
    yi = ap.constant(np.arange(1, 5).reshape(2, 2))
    row = yi[0]  # a view of yi exists  # noqa: F841
    for aug in ("|=", "&=", "^=", "<<=", ">>="):
        with pytest.raises(TypeError, match=r"has a view"):
            exec(f"yi {aug} 1", {}, {"yi": yi})
    z = ap.constant(np.array([1, 2]))
    z |= 8
    np.testing.assert_array_equal(z.numpy(), [9, 10])


def test_builtin_divmod_of_tensors():
    x = ap.Variable(np.array([1.5, -2.3, 4.0]))
    with ap.GradientTape() as tape:
        q, r = divmod(x, 0.7)
    wq, wr = divmod(x.numpy(), 0.7)
    np.testing.assert_array_equal(q.numpy(), wq)
    np.testing.assert_allclose(r.numpy(), wr, rtol=1e-15)
    np.testing.assert_array_equal(tape.gradient(r, x).numpy(), [1.0, 1.0, 1.0])
    q2, r2 = divmod(5.0, ap.constant(np.array([2.0, 3.0])))
    np.testing.assert_array_equal(np.stack([q2.numpy(), r2.numpy()]), np.array(divmod(5.0, np.array([2.0, 3.0]))))
    qi, ri = divmod(ap.constant(_I), 3)
    assert qi.dtype == ri.dtype == np.int64
    np.testing.assert_array_equal(ri.numpy(), _I % 3)


# --- 6. an axis out of range is numpy's AxisError, in every registered function ------------------
@pytest.mark.parametrize("x", [np.arange(1.0, 4.0), np.arange(1.0, 7.0).reshape(2, 3)], ids=["1d", "2d"])
def test_every_function_refuses_an_out_of_range_axis_as_numpy(x):
    """f(x, axis=a) and f(x, 1, axis=a) (q, n, indices, ...) for a = ndim, -ndim-1 and in a
    tuple: where numpy raises AxisError, the Tensor call raises too (an int axis: AxisError).
    np.cumprod, np.diff, np.gradient, median/quantile, delete, take, trim_zeros,
    cumulative_prod, unstack, norm computed with the axis taken modulo ndim."""
    from autoprop.core import registry as R
    nd, accepted = x.ndim, []
    for f in R._FUNCTIONS:
        for ax in (nd, -nd - 1, (0, nd), (-nd - 1,)):
            for extra in ((), (1,)):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        f(x, *extra, axis=ax)
                    continue
                except np.exceptions.AxisError:
                    pass
                except Exception:
                    continue
                expected = np.exceptions.AxisError if np.ndim(ax) == 0 else Exception
                try:
                    f(ap.constant(x), *extra, axis=ax)
                    accepted.append(f"{f.__name__}(x, {extra}, axis={ax})")
                except expected:
                    pass
                except Exception as e:
                    accepted.append(f"{f.__name__}(x, {extra}, axis={ax}): {type(e).__name__}")
    assert not accepted, "\n".join(accepted)


# --- 8. np.nan_to_num with Tensor replacements: recorded --------------------------------------------
def test_nan_to_num_with_tensor_replacements():
    v = np.array([0.3, np.nan, np.inf, -np.inf, np.nan])
    c, p = ap.Variable(3.0), ap.Variable(-2.0)
    with _Strict(), ap.GradientTape(persistent=True) as tape:
        x = ap.Variable(v)
        y = np.nan_to_num(x, nan=c, posinf=p, neginf=0.5)
        loss = np.sum(y * np.arange(1.0, 6.0))
    np.testing.assert_array_equal(y.numpy(), np.nan_to_num(v, nan=3.0, posinf=-2.0, neginf=0.5))
    assert float(tape.gradient(loss, c)) == 2.0 + 5.0  # the two NaN entries
    assert float(tape.gradient(loss, p)) == 3.0
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [1.0, 0, 0, 0, 0])
    y32 = np.nan_to_num(ap.constant(v.astype(np.float32)), neginf=ap.constant(7.0))
    assert y32.dtype == np.float32
    np.testing.assert_array_equal(y32.numpy(), np.nan_to_num(v.astype(np.float32), neginf=7.0))


# --- 11. numpy's keywords: correction=, concatenate(dtype=), ufunc dtype=, astype(copy=) ----------
@pytest.mark.parametrize("fn", [np.std, np.var, np.nanstd, np.nanvar])
def test_correction_is_numpy_2_s_ddof(fn):
    v = np.array([[0.3, 1.2, -0.5], [2.0, 0.1, 0.7]])
    f = lambda a: np.sum(fn(a, axis=1, correction=1) * np.array([1.0, 3.0]))  # noqa: E731
    np.testing.assert_allclose(fn(ap.constant(v), axis=1, correction=1).numpy(), fn(v, axis=1, correction=1),
                               rtol=1e-15)
    np.testing.assert_allclose(_grads(f, v)[0], _central(f, (v,), 0), rtol=1e-6)
    with pytest.raises(ValueError, match="simultaneously"):
        fn(ap.constant(v), ddof=1, correction=1)


def test_concatenate_and_ufunc_dtype_and_astype_copy():
    x32 = ap.Variable(np.array([0.5, 1.0], np.float32))
    x64 = ap.Variable(np.array([0.25, 2.0]))
    with ap.GradientTape(persistent=True) as tape:
        c = np.concatenate([x32, x64], dtype=np.float32)
        e = np.exp(x32, dtype=np.float64)
        a = np.add(x32, 1, dtype=np.float64)
    want = np.concatenate([x32.numpy(), x64.numpy()], dtype=np.float32)
    assert c.dtype == want.dtype and np.array_equal(c.numpy(), want)
    assert e.dtype == a.dtype == np.float64  # numpy: the loop in float64
    np.testing.assert_array_equal(e.numpy(), np.exp(x32.numpy(), dtype=np.float64))
    np.testing.assert_array_equal(tape.gradient(c, x64).numpy(), [1.0, 1.0])
    np.testing.assert_allclose(tape.gradient(e, x32).numpy(), np.exp(x32.numpy().astype(float)), rtol=1e-7)
    with pytest.raises(TypeError, match="according to the rule 'same_kind'"):
        np.concatenate([x64, x32], dtype=np.int32)
    with pytest.raises(TypeError):
        np.concatenate([x64.numpy(), x32.numpy()], dtype=np.int32)  # (numpy: the same refusal)
    assert x64.astype(np.float64, copy=False) is x64  # numpy returns the array itself
    assert x64.astype(np.float32, copy=False).dtype == np.float32
    assert np.astype(x64, np.float64, copy=False) is x64
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        x64.astype(np.float32, casting="safe")


def test_float32_functions_and_boolean_power_in_numpy_s_dtypes():
    x = np.array([0.3, 1.7, -2.2, 0.9], np.float32)
    t = ap.constant(x)
    for f in (lambda v: np.select([v > 0], [v], 0.5), lambda v: np.linspace(v[0], v[1], 3),
              lambda v: np.cov(v), lambda v: np.corrcoef(v, v[::-1]), lambda v: np.vander(v, 3),
              lambda v: np.polyfit(np.arange(4.0, dtype=np.float32), v, 1)):
        want, got = f(x), f(t)
        assert got.dtype == want.dtype  # select, linspace: float32; cov, vander, polyfit: float64
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-7)
    b = np.array([True, False])
    assert (ap.constant(b) ** 2).dtype == (b ** 2).dtype == np.int8
    assert (ap.constant(b) ** 3).dtype == (b ** 3).dtype


# --- 9. numpy.fft's n= and s=: numpy's crop or zero-pad, differentiable (as torch and jax) --------
_FFT_CASES = [
    ("fft n=7 (pad)", lambda a: np.fft.fft(a, n=7), (5,), False),
    ("fft n=3 (crop)", lambda a: np.fft.fft(a, n=3, norm="ortho"), (5,), True),
    ("ifft n=6", lambda a: np.fft.ifft(a, n=6), (5,), True),
    ("rfft n=9", lambda a: np.fft.rfft(a, n=9), (6,), False),
    ("rfft n=4 axis 0", lambda a: np.fft.rfft(a, n=4, axis=0), (6, 2), False),
    ("irfft n=9 (odd)", lambda a: np.fft.irfft(a, n=9), (5,), True),
    ("irfft n=6 (crop)", lambda a: np.fft.irfft(a, n=6, norm="forward"), (5,), True),
    ("irfft n=11 (pad)", lambda a: np.fft.irfft(a, n=11, axis=0), (4, 2), True),
    ("hfft n=7", lambda a: np.fft.hfft(a, n=7), (4,), True),
    ("ihfft n=5", lambda a: np.fft.ihfft(a, n=5), (7,), False),
    ("fft2 s", lambda a: np.fft.fft2(a, s=(3, 5)), (2, 4), True),
    ("ifftn s", lambda a: np.fft.ifftn(a, s=(4,), axes=(0,)), (3, 2), False),
    ("rfftn s", lambda a: np.fft.rfftn(a, s=(3, 5), axes=(0, 1)), (2, 4), False),
    ("rfft2 s", lambda a: np.fft.rfft2(a, s=(4, 3)), (2, 4), False),
    ("irfft2 s odd", lambda a: np.fft.irfft2(a, s=(3, 5)), (2, 3), True),
    ("irfftn s", lambda a: np.fft.irfftn(a, s=(4, 7), axes=(0, 1), norm="ortho"), (3, 3), True),
]


@pytest.mark.parametrize("name, f, shape, cplx", _FFT_CASES, ids=[c[0] for c in _FFT_CASES])
def test_fft_lengths_match_numpy_and_central_differences(name, f, shape, cplx):
    rng = np.random.default_rng(7)
    v = rng.normal(size=shape) + (1j * rng.normal(size=shape) if cplx else 0)
    want = f(v)
    w = rng.normal(size=want.shape) + 1j * rng.normal(size=want.shape)
    loss = lambda y: np.sum(np.real(y) * w.real + np.imag(y) * w.imag)  # noqa: E731
    x = ap.Variable(v)
    with ap.GradientTape() as tape:
        y = f(x)
        ly = loss(y)
    assert y.shape == want.shape and y.dtype == want.dtype
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
    g = np.asarray(tape.gradient(ly, x))
    h, fd = 1e-6, np.zeros(shape, complex)  # dL/dRe + i dL/dIm (TF's and torch's convention)
    for i in np.ndindex(shape):
        for unit in ((1.0, 1j) if cplx else (1.0,)):
            e = np.zeros(shape, complex if cplx else float)
            e[i] = h * unit
            fd[i] += unit * (loss(f(v + e)) - loss(f(v - e))) / (2 * h)
    np.testing.assert_allclose(g, fd if cplx else fd.real, rtol=1e-6, atol=1e-7)


# --- 13, 14. messages name what the user called ------------------------------------------------------
def test_refusal_messages_name_the_function_called():
    import scipy.special as sp
    x = ap.Variable(np.array([0.3, 1.2, -0.5, 2.0]))
    with pytest.raises(TypeError, match=r"or call numpy\.percentile without weights"):
        np.percentile(x, 30, method="inverted_cdf", weights=np.ones(4))
    with pytest.raises(TypeError, match=r"record scipy\.special\.erf\(\.\.\., out=\.\.\.\).*y = scipy\.special\.erf"):
        sp.erf(x, out=np.zeros(4))
    a = ap.Variable(np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]]))  # rank 1: a tangent raising it is refused
    with pytest.raises(ValueError, match=r"numpy\.linalg\.pinv \(also inside numpy\.linalg\.lstsq"), \
            ap.ForwardAccumulator(a, np.ones((3, 2))):
        np.linalg.lstsq(a, np.array([1.0, 2.0, 3.0]), rcond=None)


def test_gradient_of_an_integer_target_warns():
    x = ap.Variable(np.array([0.3, -1.2]))
    with ap.GradientTape() as tape:
        k = np.argmax(x) + ap.constant(np.array(1))
    with pytest.warns(UserWarning, match="the target has the dtype int64, which carries no gradient"):
        assert tape.gradient(k, x) is None


def test_imag_of_a_real_tensor_is_no_view_and_boolean_inputs_are_numpy_s():
    a = np.arange(3.0)
    assert not np.shares_memory(np.imag(a), a)  # numpy 2: a new array
    t = ap.constant(a)
    i = np.imag(t)
    i += 1.0  # allowed: not a view (it was refused as one)
    np.testing.assert_array_equal(i.numpy(), [1.0, 1.0, 1.0])
    c = ap.constant(a + 1j)
    z = np.imag(c)
    with pytest.raises(TypeError, match="a view of another"):
        z += 1.0  # a complex input's imag is numpy's view: refused as every view while c lives
    b = np.array([True, False, True])
    for f in (np.diff, lambda v: np.linspace(v[0], v[1], 3), lambda v: np.interp(0.5, [0.0, 1.0], v[:2]),
              lambda v: np.histogram_bin_edges(v, 2)):
        want, got = f(b), f(ap.constant(b))
        assert got.dtype == want.dtype and np.array_equal(got.numpy(), want)  # (were refused)


def test_the_norm_record_of_integers_is_in_float64_through_ap_numpy_too():
    import autoprop.numpy as anp
    for v in (np.array([3, 50000, 7, 1], np.int32), np.array([3, 200, 250, 9], np.uint8)):
        for f in (anp.linalg.norm, anp.linalg.vector_norm):
            np.testing.assert_allclose(float(f(ap.constant(v))), np.linalg.norm(v), rtol=1e-15)  # (was nan, 13.78)


def test_a_source_used_with_zero_derivative_gets_zeros_not_none():
    x, b = ap.Variable(np.array([0.3, -1.2, 0.0])), ap.Variable(np.array([1.0, -1.0, 0.7]))
    with ap.GradientTape(persistent=True) as tape:
        lc = np.sum(np.copysign(x, b))
        lh = np.sum(np.heaviside(x, b))
    np.testing.assert_array_equal(tape.gradient(lc, b).numpy(), [0.0, 0.0, 0.0])  # (was None)
    np.testing.assert_array_equal(tape.gradient(lh, x).numpy(), [0.0, 0.0, 0.0])  # (was None)
    np.testing.assert_array_equal(tape.gradient(lh, b).numpy(), [0.0, 0.0, 1.0])  # 1 where x = 0
    np.testing.assert_array_equal(tape.gradient(lc, x).numpy(), [1.0, 1.0, 0.0])  # sign(b) sign(x)
