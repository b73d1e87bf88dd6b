"""numpy's ``dtype=`` of the reductions on Tensors: ``np.mean(t, dtype=np.float64)``.

numpy computes ``mean``, ``sum``, ``prod``, ``var``, ``std`` and ``cumsum`` in the ``dtype``
given and returns that dtype; autoprop does the same (a cast, then the reduction), and the
gradient comes back in the input's dtype, as every gradient comes back in its source's.
Only a cast without a derivative is refused, by name: a float Tensor to an integer or bool
dtype (numpy truncates), or across real and complex. Repro before: every ``dtype=`` was
refused ("that option has no registered derivative"). Oracles: numpy for the values, HIPS
autograd for the gradients (of the same function in float64).
"""

import autograd
import autograd.numpy as agn
import numpy as np
import pytest

import autoprop as ap

X = np.random.default_rng(4).uniform(0.5, 1.5, (3, 4))

CASES = [  # (numpy function, autograd's, keywords)
    (np.mean, agn.mean, {"axis": 1}), (np.sum, agn.sum, {"axis": 0}), (np.prod, agn.prod, {}),
    (np.var, agn.var, {"axis": 1, "ddof": 1}), (np.std, agn.std, {}),
    (np.cumsum, agn.cumsum, {"axis": 1}),
]


@pytest.mark.parametrize("fn, ag, kw", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("source, dtype", [(np.float64, np.float32), (np.float32, np.float64),
                                           (np.float64, np.float64)])
def test_a_reduction_in_another_float_dtype_matches_numpy_and_autograd(fn, ag, kw, source, dtype):
    x = ap.Variable(X.astype(source))
    want = fn(X.astype(source), dtype=dtype, **kw)
    weights = np.random.default_rng(5).standard_normal(np.shape(want))  # each output its own
    with ap.GradientTape() as tape:
        y = fn(x, dtype=dtype, **kw)
        loss = ap.reduce_sum(y * weights.astype(dtype))
    assert y.dtype == want.dtype == np.dtype(dtype)  # numpy's result dtype
    g = tape.gradient(loss, x)
    assert g.dtype == np.dtype(source)  # back in the input's dtype
    oracle = autograd.grad(lambda v: agn.sum(ag(v, **kw) * weights))(X.astype(source).astype(np.float64))
    # float32 somewhere: its rounding (in any summation order); else float64's
    rtol = 1e-5 if np.float32 in (source, dtype) else 1e-12
    np.testing.assert_allclose(y.numpy(), want, rtol=rtol)
    np.testing.assert_allclose(g.numpy(), oracle, rtol=rtol, atol=rtol * np.abs(oracle).max())


def test_ap_numpy_and_numpy_s_dispatch_agree():
    x = ap.Variable(X)
    np.testing.assert_array_equal(ap.numpy.mean(x, dtype=np.float32).numpy(),
                                  np.mean(x, dtype=np.float32).numpy())


def test_integer_tensors_reduce_in_numpy_s_dtype():
    i = ap.constant(np.arange(6, dtype=np.int32).reshape(2, 3))
    for fn, dtype in [(np.sum, np.int32), (np.sum, np.int16), (np.cumsum, np.int32),
                      (np.mean, np.float32), (np.prod, np.float64)]:
        want = fn(np.arange(6, dtype=np.int32).reshape(2, 3), dtype=dtype)
        got = fn(i, dtype=dtype)
        assert got.dtype == want.dtype, (fn, dtype)
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("dtype, why", [
    (np.int64, "the cast from float64 to int64 truncates: it has no derivative"),
    (bool, "the cast from float64 to bool truncates: it has no derivative"),
    (np.complex128, "autoprop records no gradient of a cast between real and complex "
                    "(float64 to complex128)"),
])
def test_a_cast_without_a_derivative_is_refused_by_name(dtype, why):
    x = ap.Variable(X)
    with pytest.raises(TypeError) as e:
        np.sum(x, dtype=dtype)
    assert str(e.value) == (
        f"autoprop cannot record numpy.sum(..., dtype={np.dtype(dtype)}) of a float64 Tensor: "
        f"{why}. Reduce in a float dtype, or on the values (numpy.sum(t.numpy(), dtype=...)), "
        "which gives no gradient.")
    with pytest.raises(TypeError, match=r"numpy.var\(\.\.\., dtype=int64\) of a float64 Tensor"):
        np.var(x, dtype=np.int64)


def test_max_and_min_still_take_no_dtype():
    with pytest.raises(TypeError, match=r"numpy.max\(\.\.\., dtype=\.\.\.\): that option"):
        ap.numpy.max(ap.Variable(X), dtype=np.float32)


METHOD_CASES = [  # (method, numpy's positional arguments after axis, keywords): ndarray's order
    ("mean", (), {"axis": 1, "dtype": np.float32}),
    ("sum", (), {"axis": 1, "dtype": np.float32, "keepdims": True}),
    ("var", (), {"dtype": np.float32, "ddof": 1}),
    ("std", (0, np.float32), {}),  # positional: axis, dtype (as ndarray.std)
    ("prod", (1, np.float64), {}),
    ("cumsum", (1, np.float32), {}),
    ("sum", ((0, 1), None, None, True), {}),  # positional keepdims is 4th, as ndarray.sum
    ("max", (1,), {"keepdims": True}), ("min", (), {"axis": (0, 1)}),
]


@pytest.mark.parametrize("method, args, kw", METHOD_CASES, ids=[c[0] + str(i) for i, c in enumerate(METHOD_CASES)])
def test_the_tensor_methods_take_ndarray_s_dtype_and_argument_order(method, args, kw):
    # verify9 X14: x.mean(dtype=np.float32) raised "Tensor.mean() got an unexpected keyword
    # argument 'dtype'" (np.mean(x, dtype=...) took it); t.var(0, 1) read 1 as ddof
    x = ap.Variable(X)
    want = getattr(X, method)(*args, **kw)
    weights = np.random.default_rng(6).standard_normal(np.shape(want))
    with ap.GradientTape() as tape:
        y = getattr(x, method)(*args, **kw)
        loss = ap.reduce_sum(y * weights.astype(want.dtype))
    assert y.dtype == want.dtype and y.shape == want.shape
    rtol = 1e-5 if want.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y.numpy(), want, rtol=rtol)
    fn = getattr(agn, method)
    agkw = {k: v for k, v in kw.items() if k != "dtype"}
    oracle = autograd.grad(lambda v: agn.sum(fn(v, *args[:1], **agkw).reshape(np.shape(want)) * weights))(X)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), oracle, rtol=rtol, atol=rtol * np.abs(oracle).max())


def test_the_methods_refuse_a_truncating_dtype_and_out_as_the_functions():
    x = ap.Variable(X)
    with pytest.raises(TypeError, match=r"numpy.mean\(\.\.\., dtype=int64\) of a float64 Tensor"):
        x.mean(dtype=np.int64)
    with pytest.raises(TypeError, match="out="):
        x.sum(out=np.empty(()))


_U8 = np.array([[3, 200], [7, 1]], np.uint8)


@pytest.mark.parametrize("f", [
    lambda a: np.logaddexp.reduce(a, axis=1), lambda a: np.logaddexp.accumulate(a, axis=0),
    lambda a: np.hypot.reduce(a, axis=None), lambda a: np.add.accumulate(a, axis=0),
    lambda a: np.multiply.outer(a[0], a[1]), lambda a: np.add.reduce(a, dtype=np.float32),
    lambda a: np.maximum.reduce(a, axis=0), lambda a: np.logical_or.reduce(a > 5),
    lambda a: np.divide.reduce(a, axis=1), lambda a: np.arctan2.outer(a[0], a[1]),
], ids=["logaddexp.reduce", "logaddexp.accumulate", "hypot.reduce", "add.accumulate", "multiply.outer",
        "add.reduce dtype", "maximum.reduce", "logical_or.reduce", "divide.reduce", "arctan2.outer"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int64, np.bool_])
def test_ufunc_methods_of_integer_tensors_follow_numpy_s_dtypes(f, dtype):
    # before: np.logaddexp.reduce of uint8 Tensors was float64 (numpy computes in float16)
    a = _U8.astype(dtype)
    try:
        with np.errstate(all="ignore"):
            want = np.asarray(f(a))
    except TypeError:  # (numpy has no loop: the same refusal)
        with pytest.raises(TypeError):
            f(ap.constant(a))
        return
    with np.errstate(all="ignore"):
        got = f(ap.constant(a))
    assert isinstance(got, ap.Tensor) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
