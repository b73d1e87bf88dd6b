"""manualprop's input checks in their inline common case (issue 15), and every error still fires.

``Linear``, ``Tanh`` (and the other element-wise layers), every layer's ``dY``, softmax
cross-entropy's logits and int64 labels, and the optimizer's array pairs test the common case
of their structural checks inline (an ndarray of the right float dtype, number of dimensions
and shape: identity and integer tests) and then check the values (one sum of squares); the
optimizer remembers the signatures that passed. Anything else runs the full check, which
writes the message. Each test first makes the fast path run (two good calls), then changes
ONE thing of the input's signature or of the parameters, and asserts the message the check
gave before (or, where no error is due, the value).
"""

import re

import numpy as np
import pytest

import manualprop as mp
from manualprop import _validation as V

LIN = r"Linear\(in_features=4, out_features=3\)"


def _warm_linear(lin, N=5):
    X, dY = np.ones((N, 4)), np.ones((N, 3))
    for _ in range(2):
        lin.forward(X)
        lin.backward(dY)
    return X, dY


@pytest.mark.parametrize("X, error, message", [
    (np.ones((5, 4), np.float32), TypeError,
     r"X must have dtype float64 \(the dtype of the parameters\); got float32 "
     r"\(convert with X\.astype\(np\.float64\)\)"),
    (np.ones((5, 4), np.int64), TypeError, r"X must have dtype float64 .*; got int64"),
    (np.ones((5, 4), ">f8"), TypeError, r"X must have dtype float64 .*; got >f8"),  # not native
    (np.ones((5, 5)), ValueError, r"X must have shape \(batch, 4\); got \(5, 5\)"),
    (np.ones(4), ValueError, r"X must have shape \(batch, 4\); got \(4,\)"),
    (np.ones((2, 5, 4)), ValueError, r"X must have shape \(batch, 4\); got \(2, 5, 4\)"),
    (np.ones((5, 4), np.complex128), TypeError, r"X must have dtype float64 .*; got complex128"),
])
def test_linear_input_of_another_signature_after_good_ones_gets_the_full_check(X, error, message):
    lin = mp.Linear(4, 3, rng=0)
    _warm_linear(lin)
    with pytest.raises(error, match=rf"^{LIN}\.forward: {message}"):
        lin.forward(X)


def test_linear_accepts_what_the_full_check_accepts_and_gives_the_same_values():
    lin = mp.Linear(4, 3, rng=0)
    X, _ = _warm_linear(lin)
    W, b = lin.params["W"], lin.params["b"]
    np.testing.assert_array_equal(lin.forward([[1.0] * 4] * 2), np.ones((2, 4)) @ W.T + b)  # a list
    np.testing.assert_array_equal(lin.forward(np.ones((7, 4))), np.ones((7, 4)) @ W.T + b)  # new batch
    Xf = np.asfortranarray(np.arange(20.0).reshape(5, 4))  # another memory layout
    np.testing.assert_array_equal(lin.forward(Xf), Xf @ W.T + b)
    big = np.full((5, 4), 1e160)  # finite, but its sum of squares overflows: the full check passes it
    assert V.float_ss(big) is None
    np.testing.assert_array_equal(lin.forward(big), big @ W.T + b)
    assert lin._ss["X"] == np.inf  # no bound known: the backward looks at dW, db in full


def test_linear_dY_of_another_signature_after_good_ones_gets_the_full_check():
    lin = mp.Linear(4, 3, rng=0)
    X, dY = _warm_linear(lin)
    lin.forward(X)
    with pytest.raises(ValueError, match=rf"^{LIN}\.backward: dY must have the shape of the forward "
                                         r"output, \(5, 3\); got \(5, 4\)"):
        lin.backward(np.ones((5, 4)))
    with pytest.raises(ValueError, match=r"dY must have the shape of the forward output, \(5, 3\); "
                                         r"got \(3, 5\)"):
        lin.backward(np.ones((3, 5)))
    with pytest.raises(TypeError, match=rf"^{LIN}\.backward: dY must have dtype float32 or float64; "
                                        r"got int64"):
        lin.backward(np.ones((5, 3), np.int64))
    with pytest.raises(ValueError, match=r"dY must contain only finite values; got 1 NaN/inf value\(s\), "
                                         r"the first at index \(4, 2\)"):
        dYn = dY.copy()
        dYn[4, 2] = np.nan
        lin.backward(dYn)
    # a float32 dY for a float64 layer is cast, as before; the gradients are those of its values
    lin.backward(dY.astype(np.float32))
    assert lin.grads["W"].dtype == np.float64
    np.testing.assert_array_equal(lin.grads["W"], dY.T @ X)
    # a new forward of another batch size: the old dY no longer fits
    lin.forward(np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"dY must have the shape of the forward output, \(2, 3\); "
                                         r"got \(5, 3\)"):
        lin.backward(dY)


def test_backward_before_forward_is_refused_by_the_fast_path_too():
    for layer in (mp.Linear(4, 3, rng=0), mp.Tanh(), mp.ReLU()):
        name = re.escape(repr(layer))
        with pytest.raises(RuntimeError, match=rf"^{name}\.backward: must be called after forward\(\)"):
            layer.backward(np.ones((5, 3)))
    loss = mp.SoftmaxCrossEntropy()
    with pytest.raises(RuntimeError, match=r"^SoftmaxCrossEntropy\(reduction='mean'\)\.backward: must be "
                                           r"called after forward\(\)"):
        loss.backward()


@pytest.mark.parametrize("make", [mp.Tanh, mp.ReLU, mp.Sigmoid])
def test_elementwise_inputs_of_another_signature_after_good_ones(make):
    layer = make()
    name = re.escape(repr(layer))
    X = np.linspace(-2, 2, 12).reshape(3, 4)
    for _ in range(2):
        layer.forward(X)
        layer.backward(np.ones_like(X))
    with pytest.raises(TypeError, match=rf"^{name}\.forward: X must have dtype float32 or float64; got int64"):
        layer.forward(np.ones((3, 4), np.int64))
    with pytest.raises(ValueError, match=rf"^{name}\.forward: X must contain only finite values; got 1 "
                                         r"NaN/inf value\(s\), the first at index \(1, 2\)"):
        Xn = X.copy()
        Xn[1, 2] = -np.inf
        layer.forward(Xn)
    Y32 = layer.forward(X.astype(np.float32))  # float32 is kept, as before
    assert Y32.dtype == np.float32
    np.testing.assert_allclose(Y32, make().forward(X), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match=rf"^{name}\.backward: dY must have the shape of the forward "
                                         r"output, \(3, 4\); got \(4, 3\)"):
        layer.backward(np.ones((4, 3), np.float32))
    dX = layer.backward(np.ones((3, 4)))  # float64 dY for a float32 forward: cast, as before
    assert dX.dtype == np.float32


def test_softmax_cross_entropy_inputs_of_another_signature_after_good_ones():
    loss = mp.SoftmaxCrossEntropy()
    z, y = np.zeros((4, 3)), np.array([0, 1, 2, 1])
    for _ in range(2):
        loss.forward(y, z)
        loss.backward()
    pre = r"^SoftmaxCrossEntropy\(reduction='mean'\)\.forward: "
    with pytest.raises(ValueError, match=pre + r"y_pred must have shape \(batch, classes\); got \(4, 3, 1\)"):
        loss.forward(y, np.zeros((4, 3, 1)))
    with pytest.raises(TypeError, match=pre + r"y_pred must have dtype float32 or float64; got int64"):
        loss.forward(y, np.zeros((4, 3), np.int64))
    with pytest.raises(ValueError, match=pre + r"y_pred must not be empty; got shape \(0, 3\)"):
        loss.forward(y[:0], np.zeros((0, 3)))
    with pytest.raises(ValueError, match=pre + r"y_true labels must be in \[0, 3\); got min -1, max 2"):
        loss.forward(np.array([0, -1, 2, 1]), z)
    with pytest.raises(ValueError, match=pre + r"y_true labels must be in \[0, 3\); got min 0, max 3"):
        loss.forward(np.array([0, 3, 2, 1]), z)
    with pytest.raises(ValueError, match=pre + r"y_true must be integer class labels of shape \(4,\) or "
                                               r"float probabilities of shape \(4, 3\); got integer array "
                                               r"of shape \(3,\)"):
        loss.forward(np.array([0, 1, 2]), z)
    # int32 labels and a masked logit (-inf) take the full checks and pass, as before
    assert loss.forward(np.array([0, 1, 2, 1], np.int32), z) == pytest.approx(np.log(3))
    zm = z.copy()
    zm[0, 1] = -np.inf
    assert loss.forward(y, zm) == pytest.approx((np.log(2) + 3 * np.log(3)) / 4)
    np.testing.assert_array_equal(loss.backward()[0], [-0.125, 0.0, 0.125])
    zm[2] = -np.inf
    with pytest.raises(ValueError, match=pre + r"y_pred masks every entry of row 2 with -inf"):
        loss.forward(y, zm)


def _params():
    return {"W": np.ones((2, 3)), "b": np.zeros(3)}, {"W": np.full((2, 3), 0.5), "b": np.ones(3)}


def _warm_opt(opt, params, grads):
    for _ in range(2):
        opt.step(params, grads)


def test_optimizer_a_changed_parameter_shape_is_caught():
    opt = mp.SGD(learning_rate=0.1)
    params, grads = _params()
    _warm_opt(opt, params, grads)
    params["W"] = np.ones((3, 2))  # the layer's W replaced by one of another shape
    with pytest.raises(ValueError, match=r"^SGD\(.*\)\.step: gradient for params\['W'\] must have the "
                                         r"variable's shape \(3, 2\); got \(2, 3\)$"):
        opt.step(params, grads)
    np.testing.assert_array_equal(params["b"], -0.2 * np.ones(3))  # nothing updated by the failed step


def test_optimizer_a_changed_parameter_dtype_is_followed():
    opt = mp.SGD(learning_rate=0.5)
    params, grads = _params()
    _warm_opt(opt, params, grads)
    params["W"] = np.ones((2, 3), np.float32)  # the gradient is cast to the variable's dtype, as before
    opt.step(params, grads)
    assert params["W"].dtype == np.float32
    np.testing.assert_array_equal(params["W"], np.full((2, 3), 0.75, np.float32))


def test_optimizer_a_parameter_made_read_only_is_caught():
    opt = mp.SGD(learning_rate=0.1)
    params, grads = _params()
    _warm_opt(opt, params, grads)
    params["b"].flags.writeable = False
    before = params["W"].copy()
    with pytest.raises(ValueError, match=r"^SGD\(.*\)\.step: params\['b'\] must be a writeable array "
                                         r"\(updated in place\); got a read-only array$"):
        opt.step(params, grads)
    np.testing.assert_array_equal(params["W"], before)  # checked before any update


def test_optimizer_gradients_of_another_signature_after_good_ones():
    opt = mp.SGD(learning_rate=0.1)
    params, grads = _params()
    _warm_opt(opt, params, grads)
    with pytest.raises(TypeError, match=r"gradient for params\['b'\] must have dtype float32 or float64; "
                                        r"got int64"):
        opt.step(params, {"W": grads["W"], "b": np.ones(3, np.int64)})
    with pytest.raises(ValueError, match=r"gradient for params\['b'\] must have the variable's shape \(3,\); "
                                         r"got \(1, 3\)"):
        opt.step(params, {"W": grads["W"], "b": np.ones((1, 3))})
    with pytest.raises(ValueError, match=r"gradient for params\['W'\] must contain only finite values; got 1 "
                                         r"NaN/inf value\(s\), the first at index \(1, 1\)"):
        g = grads["W"].copy()
        g[1, 1] = np.inf
        opt.step(params, {"W": g, "b": grads["b"]})
    with pytest.raises(ValueError, match=r"apply_gradients: gradient for variable #2 must have the variable's "
                                         r"shape \(3,\); got \(2,\)"):
        with pytest.warns(UserWarning, match=r"gradients do not exist for variable #1"):
            opt.apply_gradients([(grads["W"], params["W"]), (None, np.zeros(1)), (np.ones(2), params["b"])])


def test_the_inline_dtype_test_is_an_identity_test_of_numpys_float_dtypes():
    # what the fast path relies on: arrays of native float64/float32 carry these very objects
    assert np.zeros(3).dtype is np.dtype(np.float64) is np.dtype("float64")
    assert np.ones((2, 2), np.float32).dtype is np.dtype(np.float32)
    assert (np.zeros(3) @ np.zeros(3)).dtype is np.dtype(np.float64)
    assert V.float_ss(np.zeros(3, ">f8")) is None  # another dtype object: the full check decides
    assert V.float_ss(np.zeros(3, np.float16)) is None
    assert V.float_ss(np.ma.zeros(3)) is None  # a subclass: the full check decides
    assert V.float_ss(np.array([3.0, 4.0])) == 25.0
    assert V.float_ss(np.array([1.0, np.nan])) is None
    assert V.float_ss(np.full(2, 1e200)) is None  # finite, squares overflow: the full check passes it


@pytest.mark.parametrize("shape", [(7,), (16, 32), (64, 256)])
def test_smallest_and_largest_are_min_and_max_with_nan_where_min_has_one(shape):
    # issue 15: the saturation test of Tanh's backward and the labels' range test take the
    # extreme element by argmin/argmax (less setup than a whole-array ufunc reduction): the
    # same value as min/max, also for a transposed view, -0.0, and NaN anywhere (first, last)
    from manualprop._validation import largest, smallest

    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape)
    for arr in (a, a.T, -a):
        assert smallest(arr) == arr.min() and largest(arr) == arr.max()
        assert type(smallest(arr)) is float
    z = np.array([0.0, -0.0, 0.0])
    assert smallest(z) == 0.0 and largest(z) == 0.0
    for at in (0, a.size - 1):
        b = a.copy()
        b.flat[at] = np.nan
        assert np.isnan(smallest(b)) and np.isnan(largest(b)) and np.isnan(b.min())
    u = np.array([2, -1, 0], dtype=np.int64).view(np.uint64)  # a negative label read as unsigned
    assert largest(u) == u.max() == 2**64 - 1


def test_tanh_backward_still_takes_the_precise_derivative_for_saturated_entries_after_good_calls():
    # the saturation test now by smallest(): a batch without saturated entries twice, then one
    # with x = 20 and x = -9 (float32): 1/cosh(x)^2 there, not the cancelled 1 - tanh(x)^2
    for dtype, x, want in ((np.float64, 20.0, 1.0 / np.cosh(20.0) ** 2), (np.float32, -9.0, 1.0 / np.cosh(9.0) ** 2)):
        layer = mp.Tanh()
        X = np.full((4, 3), 0.5, dtype=dtype)
        for _ in range(2):
            layer.forward(X)
            np.testing.assert_allclose(layer.backward(np.ones_like(X)), 1 - np.tanh(X) ** 2, rtol=1e-6)
        X = X.copy()
        X[2, 1] = x
        layer.forward(X)
        d = layer.backward(np.ones_like(X))
        np.testing.assert_allclose(float(d[2, 1]), want, rtol=1e-5 if dtype == np.float32 else 1e-14)
        assert float(d[2, 1]) > 0
