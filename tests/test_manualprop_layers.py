"""manualprop layers: gradients vs central finite differences and vs HIPS autograd."""

import doctest
import math
import re

import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np
import pytest
from autograd import grad

import manualprop
import manualprop.layers
from manualprop import (
    ELU,
    GELU,
    Flatten,
    LeakyReLU,
    Linear,
    LogSoftmax,
    ReLU,
    Sigmoid,
    Softmax,
    Softplus,
    Tanh,
)

STRICT = dict(over="raise", invalid="raise", divide="raise")  # underflow to 0 is fine

RTOL_ORACLE = 1e-7  # autograd computes the same quantity analytically
RTOL_FD, ATOL_FD = 1e-6, 1e-8  # central differences, h = 1e-6


def numerical_grad(f, x, h=1e-6):
    """Central differences of the scalar f() w.r.t. x, perturbing x in place."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + h
        fp = f()
        x[idx] = old - h
        fm = f()
        x[idx] = old
        g[idx] = (fp - fm) / (2 * h)
    return g


def away_from_zero(rng, shape, scale=2.0, gap=1e-2):
    """Random values with |x| >= gap, so kinks (ReLU at 0) are not straddled by FD."""
    x = rng.normal(scale=scale, size=shape)
    return np.where(np.abs(x) < gap, np.sign(x + 1e-300) * gap * 3, x)


# ---------------------------------------------------------------- Linear


def test_linear_forward_matches_formula():
    rng = np.random.default_rng(0)
    layer = Linear(4, 3, rng=1)
    X = rng.normal(size=(5, 4))
    W, b = layer.params["W"], layer.params["b"]
    expected = np.array(
        [[sum(X[n, i] * W[o, i] for i in range(4)) + b[o] for o in range(3)] for n in range(5)]
    )
    np.testing.assert_allclose(layer(X), expected, rtol=1e-12)


def test_linear_gradients_vs_finite_differences():
    rng = np.random.default_rng(1)
    layer = Linear(4, 3, rng=2)
    X = rng.normal(size=(5, 4))
    G = rng.normal(size=(5, 3))  # random, non-uniform upstream gradient
    layer.forward(X)
    dX = layer.backward(G)
    dW, db = layer.grads["W"].copy(), layer.grads["b"].copy()

    def L():
        return np.sum(layer.forward(X) * G)

    np.testing.assert_allclose(dX, numerical_grad(L, X), rtol=RTOL_FD, atol=ATOL_FD)
    np.testing.assert_allclose(dW, numerical_grad(L, layer.params["W"]), rtol=RTOL_FD, atol=ATOL_FD)
    np.testing.assert_allclose(db, numerical_grad(L, layer.params["b"]), rtol=RTOL_FD, atol=ATOL_FD)


def test_linear_gradients_vs_autograd():
    rng = np.random.default_rng(2)
    layer = Linear(6, 2, rng=3)
    X = rng.normal(size=(7, 6))
    G = rng.normal(size=(7, 2))
    W, b = layer.params["W"], layer.params["b"]

    def L(X, W, b):
        return anp.sum((anp.dot(X, W.T) + b) * G)

    layer.forward(X)
    dX = layer.backward(G)
    np.testing.assert_allclose(dX, grad(L, 0)(X, W, b), rtol=RTOL_ORACLE)
    np.testing.assert_allclose(layer.grads["W"], grad(L, 1)(X, W, b), rtol=RTOL_ORACLE)
    np.testing.assert_allclose(layer.grads["b"], grad(L, 2)(X, W, b), rtol=RTOL_ORACLE)


def test_linear_grads_are_overwritten_not_accumulated():
    rng = np.random.default_rng(3)
    layer = Linear(3, 2, rng=0)
    X = rng.normal(size=(4, 3))
    G1, G2 = rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    layer.forward(X)
    layer.backward(G1)
    layer.backward(G2)
    np.testing.assert_allclose(layer.grads["W"], G2.T @ X, rtol=1e-12)
    np.testing.assert_allclose(layer.grads["b"], G2.sum(0), rtol=1e-12)


def test_linear_params_and_grads_have_equal_keys_shapes_dtypes():
    for dtype in (np.float64, np.float32):
        layer = Linear(3, 2, rng=0, dtype=dtype)
        assert layer.params.keys() == layer.grads.keys() == {"W", "b"}
        assert layer.params["W"].shape == (2, 3) and layer.params["b"].shape == (2,)
        for k in layer.params:
            assert layer.grads[k].shape == layer.params[k].shape
            assert layer.grads[k].dtype == layer.params[k].dtype == np.dtype(dtype)


def test_linear_float32_kept():
    rng = np.random.default_rng(4)
    layer = Linear(3, 2, rng=0, dtype=np.float32)
    X = rng.normal(size=(4, 3)).astype(np.float32)
    Y = layer(X)
    assert Y.dtype == np.float32
    dX = layer.backward(rng.normal(size=(4, 2)))  # float64 dY is cast to the layer dtype
    assert dX.dtype == np.float32
    assert layer.grads["W"].dtype == np.float32 and layer.grads["b"].dtype == np.float32
    ref = Linear(3, 2, rng=0)  # same seed: float32 weights are the rounded float64 ones
    np.testing.assert_allclose(Y, ref(X.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_linear_docstring_example_runs():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(manualprop.layers) if t.examples]
    assert any(t.name.endswith("Linear") for t in tests)
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------- activations


def anp_gelu_tanh(x):
    return 0.5 * x * (1 + anp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


ACTIVATIONS = [
    ("ReLU", ReLU, lambda x: anp.maximum(x, 0.0)),
    ("Sigmoid", Sigmoid, lambda x: 1.0 / (1.0 + anp.exp(-x))),
    ("Tanh", Tanh, anp.tanh),
    ("LeakyReLU", LeakyReLU, lambda x: anp.where(x > 0, x, 0.01 * x)),
    ("LeakyReLU0.2", lambda: LeakyReLU(0.2), lambda x: anp.where(x > 0, x, 0.2 * x)),
    ("ELU", ELU, lambda x: anp.where(x > 0, x, anp.exp(x) - 1)),
    ("ELU0.5", lambda: ELU(alpha=0.5), lambda x: anp.where(x > 0, x, 0.5 * (anp.exp(x) - 1))),
    ("GELU", GELU, lambda x: x * 0.5 * (1 + asp.erf(x / math.sqrt(2)))),
    ("GELUtanh", lambda: GELU(approximate="tanh"), anp_gelu_tanh),
    ("Softplus", Softplus, lambda x: anp.log(1 + anp.exp(x))),
]
ELEMENTWISE = [a[1] for a in ACTIVATIONS]


@pytest.mark.parametrize("name,make,oracle", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4), (6,)])
def test_activation_vs_finite_differences_and_autograd(name, make, oracle, shape):
    rng = np.random.default_rng(5)
    X = away_from_zero(rng, shape)
    G = rng.normal(size=shape)
    layer = make()
    Y = layer.forward(X)
    np.testing.assert_allclose(Y, oracle(X), rtol=1e-12)
    dX = layer.backward(G)
    assert layer.params == {} and layer.grads == {}

    def L():
        return np.sum(layer.forward(X) * G)

    np.testing.assert_allclose(dX, numerical_grad(L, X), rtol=RTOL_FD, atol=ATOL_FD)
    np.testing.assert_allclose(dX, grad(lambda x: anp.sum(oracle(x) * G))(X), rtol=RTOL_ORACLE)


@pytest.mark.parametrize("make", ELEMENTWISE + [Softmax, LogSoftmax, Flatten])
def test_activation_float32_kept(make):
    X = np.array([[-1.5, 0.25], [2.0, -0.1]], dtype=np.float32)
    layer = make()
    Y = layer(X)
    assert Y.dtype == np.float32
    assert layer.backward(np.ones((2, 2))).dtype == np.float32
    assert layer.backward(np.ones((2, 2), dtype=np.float32)).dtype == np.float32


def test_relu_values_and_derivative_at_zero_is_zero():
    layer = ReLU()
    Y = layer(np.array([-2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(Y, [0.0, 0.0, 3.0])
    np.testing.assert_array_equal(layer.backward(np.array([5.0, 7.0, 11.0])), [0.0, 0.0, 11.0])


def test_sigmoid_case_c16_values_and_no_overflow():
    x = np.array([0.12, 0.34, -1234.1])
    layer = Sigmoid()
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        Y = layer(x)
        dX = layer.backward(np.ones(3))
    np.testing.assert_allclose(Y, [0.5299640518, 0.5841905229, 0.0], rtol=1e-9, atol=0)
    np.testing.assert_allclose(dX, [0.2491021556, 0.2429119558, 0.0], rtol=1e-9, atol=0)
    assert Y[2] == 0.0 and dX[2] == 0.0


def test_sigmoid_large_positive_and_symmetry():
    layer = Sigmoid()
    x = np.array([1234.1, 40.0, -40.0, 3.0, -3.0])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        Y = layer(x)
    assert Y[0] == 1.0
    np.testing.assert_allclose(Y[1] + Y[2], 1.0, rtol=1e-15)
    np.testing.assert_allclose(Y[3] + Y[4], 1.0, rtol=1e-15)
    np.testing.assert_allclose(Y[2], np.exp(-40.0) / (1 + np.exp(-40.0)), rtol=1e-14)


def test_tanh_derivative_closed_form():
    layer = Tanh()
    layer(np.array([0.0, 0.5]))
    np.testing.assert_allclose(
        layer.backward(np.array([1.0, 1.0])), [1.0, 1 - np.tanh(0.5) ** 2], rtol=1e-14
    )


# ---------------------------------------------------------------- bad input


def test_linear_wrong_shape_message():
    layer = Linear(5, 3)
    with pytest.raises(
        ValueError,
        match=r"^Linear\(in_features=5, out_features=3\)\.forward: X must have shape \(batch, 5\); got \(8, 4\)$",
    ):
        layer(np.zeros((8, 4)))
    with pytest.raises(ValueError, match=r"X must have shape \(batch, 5\); got \(5,\)"):
        layer(np.zeros(5))


def test_linear_bad_dtype_and_nonfinite():
    layer = Linear(2, 1)
    with pytest.raises(
        TypeError,
        match=r"Linear\(in_features=2, out_features=1\)\.forward: X must have dtype float64 \(the dtype of the parameters\); got int64",
    ):
        layer(np.zeros((3, 2), dtype=np.int64))
    with pytest.raises(
        TypeError, match=r"X must have dtype float64 \(the dtype of the parameters\); got float32"
    ):
        layer(np.zeros((3, 2), dtype=np.float32))
    X = np.zeros((3, 2))
    X[1, 0] = np.nan
    X[2, 1] = np.inf
    with pytest.raises(
        ValueError,
        match=r"X must contain only finite values; got 2 NaN/inf value\(s\), the first at index \(1, 0\)",
    ):
        layer(X)


def test_linear_backward_errors():
    layer = Linear(2, 3)
    with pytest.raises(
        RuntimeError,
        match=r"^Linear\(in_features=2, out_features=3\)\.backward: must be called after forward\(\)",
    ):
        layer.backward(np.zeros((4, 3)))
    layer(np.zeros((4, 2)))
    with pytest.raises(
        ValueError,
        match=r"\.backward: dY must have the shape of the forward output, \(4, 3\); got \(4, 2\)",
    ):
        layer.backward(np.zeros((4, 2)))
    with pytest.raises(TypeError, match=r"dY must have dtype float32 or float64; got int64"):
        layer.backward(np.zeros((4, 3), dtype=np.int64))
    with pytest.raises(ValueError, match=r"dY must contain only finite values"):
        layer.backward(np.full((4, 3), np.inf))


def test_linear_constructor_errors():
    with pytest.raises(ValueError, match=r"^Linear: in_features must be a positive int; got 0$"):
        Linear(0, 3)
    with pytest.raises(
        TypeError, match=r"^Linear: out_features must be a positive int; got float 2.0$"
    ):
        Linear(3, 2.0)
    with pytest.raises(
        TypeError, match=r"Linear: in_features must be a positive int; got bool True"
    ):
        Linear(True, 2)
    with pytest.raises(
        TypeError, match=r"^Linear: dtype must be float32 or float64; got <class 'numpy.int32'>$"
    ):
        Linear(2, 2, dtype=np.int32)
    assert (
        repr(Linear(2, 2, dtype=np.float32))
        == "Linear(in_features=2, out_features=2, dtype=float32)"
    )


@pytest.mark.parametrize("make", ELEMENTWISE + [Softmax, LogSoftmax, Flatten])
def test_activation_errors_name_the_layer(make):
    layer = make()
    name = re.escape(repr(layer))
    with pytest.raises(RuntimeError, match=rf"^{name}\.backward: must be called after forward\(\)"):
        layer.backward(np.zeros(3))
    with pytest.raises(
        TypeError, match=rf"^{name}\.forward: X must have dtype float32 or float64; got bool"
    ):
        layer(np.array([True, False]))
    with pytest.raises(ValueError, match=rf"^{name}\.forward: X must contain only finite values"):
        layer(np.array([0.0, -np.inf]))
    layer(np.zeros((2, 3)))
    with pytest.raises(
        ValueError,
        match=rf"^{name}\.backward: dY must have the shape of the forward output, \(2, 3\); got \(3, 2\)",
    ):
        layer.backward(np.zeros((3, 2)))


def test_list_input_is_accepted_and_object_input_rejected():
    np.testing.assert_array_equal(ReLU()([[-1.0, 2.0]]), [[0.0, 2.0]])
    with pytest.raises(
        TypeError,
        match=r"ReLU\(\)\.forward: X must be a NumPy array of numbers; got list that converts to dtype object",
    ):
        ReLU()([None, 1.0])
    with pytest.raises(
        TypeError,
        match=r"ReLU\(\)\.forward: X must be a NumPy array; got list that NumPy cannot convert",
    ):
        ReLU()([[1.0], [1.0, 2.0]])


# ---------------------------------------------------------------- more activations: closed forms


def test_leaky_relu_values_and_slope_at_zero():
    layer = LeakyReLU()
    np.testing.assert_allclose(layer(np.array([-2.0, 0.0, 3.0])), [-0.02, 0.0, 3.0], rtol=1e-15)
    np.testing.assert_allclose(layer.backward(np.array([1.0, 1.0, 1.0])), [0.01, 0.01, 1.0])


def test_elu_values_and_no_overflow():
    layer = ELU()
    with np.errstate(**STRICT):
        Y = layer(np.array([-1.0, 0.0, 1000.0, -1000.0]))
        d = layer.backward(np.ones(4))
    np.testing.assert_allclose(Y, [math.exp(-1) - 1, 0.0, 1000.0, -1.0], rtol=1e-15)
    np.testing.assert_allclose(d, [math.exp(-1), 1.0, 1.0, 0.0], rtol=1e-15, atol=1e-300)
    layer = ELU(alpha=2.0)
    layer(np.array([-0.5]))
    np.testing.assert_allclose(
        layer.backward(np.array([3.0])), [3 * 2 * math.exp(-0.5)], rtol=1e-15
    )


def test_gelu_exact_values():
    layer = GELU()
    Y = layer(np.array([1.0, -1.0, 0.0]))
    np.testing.assert_allclose(Y, [0.8413447460685429, -0.15865525393145707, 0.0], rtol=1e-14)
    d = layer.backward(np.ones(3))
    # Phi(x) + x phi(x): Phi(1) = 0.841344746..., phi(1) = 0.241970724...
    np.testing.assert_allclose(
        d,
        [0.8413447460685429 + 0.24197072451914337, 0.15865525393145707 - 0.24197072451914337, 0.5],
        rtol=1e-14,
    )


def test_gelu_tanh_values():
    def ref(x):
        return 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))

    layer = GELU(approximate="tanh")
    Y = layer(np.array([1.0, -0.5, 2.5]))
    np.testing.assert_allclose(Y, [ref(1.0), ref(-0.5), ref(2.5)], rtol=1e-15)
    np.testing.assert_allclose(Y[0], 0.8411919906082768, rtol=1e-15)
    # differs from the exact form by ~1.5e-4 at x = 1
    assert abs(Y[0] - 0.8413447460685429) > 1e-4


def test_gelu_extreme_inputs_no_overflow_and_accurate_left_tail():
    layer = GELU()
    x = np.array([1e200, -1e200, 50.0, -50.0, 25.0, -25.0, -10.0])
    with np.errstate(**STRICT):
        Y = layer(x)
        d = layer.backward(np.ones(7))

    def Phi(t):
        return 0.5 * math.erfc(-t / math.sqrt(2))

    def phi(t):
        return math.exp(-t * t / 2) / math.sqrt(2 * math.pi)

    np.testing.assert_array_equal(Y[:5], [1e200, 0.0, 50.0, 0.0, 25.0])
    np.testing.assert_array_equal(d[:5], [1.0, 0.0, 1.0, 0.0, 1.0])
    # left tail: tiny but not flushed to 0 (1 + erf would cancel here)
    for i, t in [(5, -25.0), (6, -10.0)]:
        np.testing.assert_allclose(Y[i], t * Phi(t), rtol=1e-12)
        np.testing.assert_allclose(d[i], Phi(t) + t * phi(t), rtol=1e-12)
    assert -1e-135 > d[5] > -1e-134


def test_gelu_tanh_extreme_inputs_no_overflow():
    layer = GELU(approximate="tanh")
    x = np.array([1e200, -1e200, 50.0, -50.0, 20.0, -20.0])
    with np.errstate(**STRICT):
        Y = layer(x)
        d = layer.backward(np.ones(6))
    np.testing.assert_array_equal(Y, [1e200, 0.0, 50.0, 0.0, 20.0, 0.0])
    np.testing.assert_array_equal(d, [1.0, 0.0, 1.0, 0.0, 1.0, 0.0])


def test_softplus_values_and_stability():
    layer = Softplus()
    with np.errstate(**STRICT):
        Y = layer(np.array([0.0, 1000.0, -1000.0, 1.0]))
        d = layer.backward(np.ones(4))
    np.testing.assert_allclose(Y, [math.log(2), 1000.0, 0.0, math.log1p(math.e)], rtol=1e-15)
    np.testing.assert_allclose(d, [0.5, 1.0, 0.0, 1 / (1 + math.exp(-1))], rtol=1e-15)


# ---------------------------------------------------------------- Softmax / LogSoftmax

SOFTMAXES = [
    ("Softmax", Softmax, lambda x, a: anp.exp(x - asp.logsumexp(x, axis=a, keepdims=True))),
    ("LogSoftmax", LogSoftmax, lambda x, a: x - asp.logsumexp(x, axis=a, keepdims=True)),
]


@pytest.mark.parametrize("name,make,oracle", SOFTMAXES, ids=[s[0] for s in SOFTMAXES])
@pytest.mark.parametrize("shape,axis", [((4, 5), -1), ((4, 5), 0), ((2, 3, 4), 1), ((6,), 0)])
def test_softmax_vs_finite_differences_and_autograd(name, make, oracle, shape, axis):
    rng = np.random.default_rng(6)
    X = rng.normal(scale=2.0, size=shape)
    G = rng.normal(size=shape)
    layer = make(axis=axis)
    Y = layer.forward(X)
    np.testing.assert_allclose(Y, oracle(X, axis), rtol=1e-12, atol=1e-15)
    dX = layer.backward(G)

    def L():
        return np.sum(layer.forward(X) * G)

    np.testing.assert_allclose(dX, numerical_grad(L, X), rtol=RTOL_FD, atol=ATOL_FD)
    np.testing.assert_allclose(
        dX, grad(lambda x: anp.sum(oracle(x, axis) * G))(X), rtol=RTOL_ORACLE, atol=1e-15
    )


def test_softmax_case_c14_and_rows_sum_to_one():
    with np.errstate(**STRICT):
        p = Softmax()(np.array([[1000.0, 1001.0, 1002.0], [0.0, -1000.0, 5.0]]))
        logp = LogSoftmax()(np.array([[0.0, -1000.0]]))
    np.testing.assert_allclose(p[0], [0.0900305732, 0.2447284711, 0.6652409558], rtol=1e-9)
    np.testing.assert_allclose(p.sum(axis=1), [1.0, 1.0], rtol=1e-15)
    np.testing.assert_array_equal(logp, [[0.0, -1000.0]])


def test_softmax_gradient_of_uniform_upstream_is_zero():
    # sum(softmax) = 1, so an upstream gradient constant along the axis has no effect
    layer = Softmax()
    layer(np.array([[0.3, -1.2, 2.0]]))
    np.testing.assert_allclose(layer.backward(np.full((1, 3), 4.0)), 0.0, atol=1e-15)


# ---------------------------------------------------------------- Flatten


def test_flatten_shapes_and_gradient():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(2, 3, 4))
    layer = Flatten()
    Y = layer(X)
    assert Y.shape == (2, 12)
    np.testing.assert_array_equal(Y[1], X[1].ravel())
    G = rng.normal(size=(2, 12))
    dX = layer.backward(G)
    np.testing.assert_array_equal(dX, G.reshape(2, 3, 4))
    np.testing.assert_allclose(
        dX, grad(lambda x: anp.sum(anp.reshape(x, (2, -1)) * G))(X), rtol=1e-15
    )
    assert Flatten()(np.zeros(5)).shape == (5, 1)
    assert Flatten()(np.zeros((0, 3, 2))).shape == (0, 6)


# ---------------------------------------------------------------- constructor and axis errors


def test_hyperparameter_errors():
    with pytest.raises(
        ValueError, match=r"^LeakyReLU: negative_slope must be in \[0.0, inf\); got -0.1$"
    ):
        LeakyReLU(-0.1)
    with pytest.raises(TypeError, match=r"^ELU: alpha must be a real number; got str '1'$"):
        ELU("1")
    with pytest.raises(
        ValueError, match=r"^GELU: approximate must be one of 'none', 'tanh'; got 'erf'$"
    ):
        GELU(approximate="erf")
    with pytest.raises(TypeError, match=r"^Softmax: axis must be an int; got float 1.0$"):
        Softmax(axis=1.0)
    with pytest.raises(
        ValueError,
        match=r"^LogSoftmax\(axis=2\)\.forward: axis must be in \[-2, 2\) for X with 2 dimension\(s\); got 2$",
    ):
        LogSoftmax(axis=2)(np.zeros((3, 4)))
    with pytest.raises(
        ValueError,
        match=r"^Softmax\(axis=-1\)\.forward: X must have at least 1 dimension\(s\); got shape \(\)$",
    ):
        Softmax()(np.array(1.0))
    with pytest.raises(
        ValueError,
        match=r"^Flatten\(\)\.forward: X must have at least 1 dimension\(s\); got shape \(\)$",
    ):
        Flatten()(np.array(1.0))
    assert repr(GELU(approximate="tanh")) == "GELU(approximate='tanh')"
