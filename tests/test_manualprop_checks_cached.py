"""manualprop's checks are remembered per input signature (issue 15), and still fire.

The structural checks (type, dtype, shape) run once per ``(shape, dtype)`` and expectation;
the finiteness check runs on every call, as one sum with the element-wise check behind it.
Each test first passes a good input, then a bad one of the SAME signature, so that a check
which was only done on the first call would be caught missing.
"""

import numpy as np
import pytest

import manualprop as mp
from manualprop import _validation as V


def _net():
    return mp.Sequential(mp.Linear(4, 5, rng=0), mp.Tanh(), mp.Linear(5, 3, rng=1))


def _with(X, index, value):
    X = X.copy()
    X[index] = value
    return X


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_input_after_a_good_one_of_the_same_signature_is_refused(bad):
    lin = mp.Linear(4, 5, rng=0)
    X = np.random.default_rng(0).standard_normal((6, 4))
    lin.forward(X)
    lin.forward(X)  # the signature is remembered now
    with pytest.raises(ValueError, match=r"Linear\(in_features=4, out_features=5\)\.forward: X must "
                                         r"contain only finite values; got 1 NaN/inf value\(s\), "
                                         r"the first at index \(2, 3\)"):
        lin.forward(_with(X, (2, 3), bad))


def test_each_layer_of_a_network_still_names_a_nan_in_its_own_input():
    net = _net()
    X = np.random.default_rng(1).standard_normal((6, 4))
    for _ in range(2):
        net.forward(X)
    tanh = net.layers[1]
    with pytest.raises(ValueError, match=r"Tanh\(\)\.forward: X must contain only finite"):
        tanh.forward(_with(np.zeros((6, 5)), (0, 0), np.nan))
    with pytest.raises(ValueError, match=r"Linear\(in_features=4, out_features=5\)\.forward"):
        net.forward(_with(X, (5, 0), np.inf))


def test_a_nan_upstream_gradient_after_a_good_one_is_refused():
    lin = mp.Linear(4, 5, rng=0)
    X = np.random.default_rng(2).standard_normal((6, 4))
    dY = np.ones((6, 5))
    for _ in range(2):
        lin.forward(X)
        lin.backward(dY)
    lin.forward(X)
    with pytest.raises(ValueError, match=r"Linear\(in_features=4, out_features=5\)\.backward: dY must "
                                         r"contain only finite values.*index \(1, 4\)"):
        lin.backward(_with(dY, (1, 4), np.nan))


def test_loss_inputs_after_good_ones_are_still_checked():
    loss = mp.SoftmaxCrossEntropy()
    z = np.zeros((4, 3))
    y = np.array([0, 1, 2, 1])
    for _ in range(2):
        loss.forward(y, z)
    with pytest.raises(ValueError, match=r"SoftmaxCrossEntropy\(reduction='mean'\)\.forward: y_pred "
                                         r"must contain only finite"):
        loss.forward(y, _with(z, (3, 2), np.nan))
    with pytest.raises(ValueError, match=r"y_true labels must be in \[0, 3\); got min 0, max 3"):
        loss.forward(np.array([0, 1, 3, 1]), z)
    with pytest.raises(ValueError, match=r"y_true labels must be in \[0, 3\); got min -1, max 2"):
        loss.forward(np.array([0, -1, 2, 1]), z)
    probs = np.full((4, 3), 1 / 3)
    for _ in range(2):
        loss.forward(probs, z)
    with pytest.raises(ValueError, match=r"y_true must contain only finite"):
        loss.forward(_with(probs, (0, 0), np.inf), z)
    with pytest.raises(ValueError, match=r"y_true probabilities must be >= 0"):
        loss.forward(_with(probs, (0, 0), -0.5), z)


def test_a_nan_gradient_after_good_ones_is_refused_by_the_optimizer_before_any_update():
    opt = mp.SGD(learning_rate=0.1)
    params = {"W": np.ones((2, 3)), "b": np.zeros(3)}
    grads = {"W": np.ones((2, 3)), "b": np.ones(3)}
    for _ in range(2):
        opt.step(params, grads)
    before = {k: v.copy() for k, v in params.items()}
    with pytest.raises(ValueError, match=r"SGD\(learning_rate=0\.1.*\)\.step: gradient for "
                                         r"params\['b'\] must contain only finite values"):
        opt.step(params, {"W": grads["W"], "b": _with(grads["b"], 1, np.nan)})
    for k in params:
        np.testing.assert_array_equal(params[k], before[k])


def test_a_new_signature_is_checked_in_full():
    lin = mp.Linear(4, 5, rng=0)
    X = np.zeros((6, 4))
    lin.forward(X)
    with pytest.raises(ValueError, match=r"X must have shape \(batch, 4\); got \(6, 3\)"):
        lin.forward(np.zeros((6, 3)))
    with pytest.raises(TypeError, match=r"X must have dtype float64 \(the dtype of the parameters\); "
                                        r"got float32"):
        lin.forward(X.astype(np.float32))
    with pytest.raises(TypeError, match=r"X must have dtype float64.*got int64"):
        lin.forward(X.astype(np.int64))
    lin.forward(X)
    with pytest.raises(ValueError, match=r"dY must have the shape of the forward output, \(6, 5\); "
                                         r"got \(6, 4\)"):
        lin.backward(np.zeros((6, 4)))


def test_finite_values_whose_sum_overflows_pass_as_before():
    X = np.full((2, 2), 1e308)  # the sum is inf; the element-wise check says: all finite
    assert not V._sum_is_finite(X)
    np.testing.assert_array_equal(V.check_array(X, "here"), X)
    with pytest.raises(ValueError, match=r"here: X must contain only finite values; got 1 NaN/inf "
                                         r"value\(s\), the first at index \(1, 0\)"):
        V.check_array(_with(X, (1, 0), np.nan), "here")


def test_the_sum_test_is_exact_for_float32_and_empty_arrays():
    assert V._sum_is_finite(np.zeros((0, 3)))
    assert V._sum_is_finite(np.ones(5, np.float32))
    assert not V._sum_is_finite(_with(np.ones(5, np.float32), 2, np.nan))
    assert V._sum_is_finite(np.full(3, np.finfo(np.float32).max, np.float32))  # summed in float64
    assert not V._sum_is_finite(np.array([np.inf, -np.inf]))  # NaN, or numpy's warning as an error
    assert not V._sum_is_finite(np.arange(3))  # integers take the element-wise check
    V.check_array(np.full(3, np.finfo(np.float32).max, np.float32), "here")
    with pytest.raises(ValueError, match=r"got 2 NaN/inf value\(s\), the first at index \(0,\)"):
        V.check_array(np.array([np.inf, -np.inf]), "here")


def test_where_builds_the_repr_only_when_formatted():
    calls = []

    class Thing:
        def __repr__(self):
            calls.append(1)
            return "Thing(a=1)"

    w = V.Where(Thing(), "forward")
    assert calls == []
    assert f"{w}: x" == "Thing(a=1).forward: x"
    assert str(w) == "Thing(a=1).forward" and w + "!" == "Thing(a=1).forward!"
    # the repr is read when the message is written: a changed hyperparameter shows
    drop = mp.Dropout(0.5, rng=0)
    drop.p = 0.25
    with pytest.raises(ValueError, match=r"Dropout\(p=0\.25.*\)\.forward"):
        drop.forward(np.full((2, 2), np.nan), training=True)


def test_the_remembered_signatures_stay_bounded():
    V._PASSED.clear()
    for n in range(1, V._PASSED_MAX + 10):
        V.check_array(np.zeros(n), "here")
    assert 0 < len(V._PASSED) <= V._PASSED_MAX


# ----------------------------------------------------------------- backward without dL/dX


def test_sequential_backward_without_the_input_gradient_gives_the_same_parameter_gradients():
    rng = np.random.default_rng(3)
    X, dY = rng.standard_normal((6, 4)), rng.standard_normal((6, 3))
    a, b = _net(), _net()
    a.forward(X)
    dX = a.backward(dY)
    b.forward(X)
    assert b.backward(dY, input_grad=False) is None
    assert dX.shape == X.shape
    for k in a.grads:
        np.testing.assert_array_equal(a.grads[k], b.grads[k])
    lin = mp.Linear(4, 5, rng=0)
    lin.forward(X)
    assert lin.backward(np.ones((6, 5)), input_grad=False) is None
    np.testing.assert_array_equal(lin.grads["W"], np.ones((6, 5)).T @ X)


def test_a_first_layer_without_the_option_is_called_as_the_protocol_says():
    calls = []

    class Student:
        params, grads = {}, {}

        def forward(self, X, training=False):
            return X * 2

        def backward(self, dY):  # no input_grad keyword: the protocol's two methods only
            calls.append(dY.shape)
            return dY * 2

    net = mp.Sequential(Student(), mp.Linear(4, 2, rng=0))
    net.forward(np.ones((3, 4)))
    assert net.backward(np.ones((3, 2)), input_grad=False) is None
    assert calls == [(3, 4)]
    nested = mp.Sequential(mp.Sequential(mp.Linear(4, 4, rng=0), mp.Tanh()), mp.Linear(4, 2, rng=1))
    nested.forward(np.ones((3, 4)))
    assert nested.backward(np.ones((3, 2)), input_grad=False) is None


def test_a_subclass_of_linear_with_its_own_backward_is_called_without_the_keyword():
    seen = []

    class MeanBias(mp.Linear):  # the lessons' planted bug: db averaged instead of summed
        def backward(self, dY):  # takes no input_grad: Sequential must not pass it
            seen.append(dY.copy())
            dX = super().backward(dY)
            self.grads["b"] = dY.mean(axis=0)
            return dX

    net = mp.Sequential(MeanBias(4, 3, rng=0), mp.Tanh(), mp.Linear(3, 2, rng=1))
    assert not net.layers[0].input_grad_optional and net.layers[2].input_grad_optional
    net.compile(mp.SGD(learning_rate=0.1), mp.SoftmaxCrossEntropy())
    net.train_step((np.ones((5, 4)), np.array([0, 1, 0, 1, 1])))
    assert len(seen) == 1
    np.testing.assert_array_equal(net.layers[0].grads["b"], seen[0].mean(axis=0))


def test_flat_keys_follow_a_layer_whose_keys_change_after_good_calls():
    net = _net()
    for _ in range(2):
        assert list(net.params) == ["0.W", "0.b", "2.W", "2.b"]
    lin = net.layers[2]
    lin.params = {"V": lin.params["W"], 7: lin.params["b"]}  # new keys at the same position
    assert list(net.params) == ["0.W", "0.b", "2.V", "2.7"]
    assert net.params["2.V"] is lin.params["V"] and net.params["2.7"] is lin.params[7]
    lin.params = {True: lin.params["V"]}  # equal to 1, named as itself
    assert list(net.params) == ["0.W", "0.b", "2.True"]


def test_optimizer_refuses_a_nan_float32_and_a_changed_shape_after_good_steps():
    p = {"a": np.zeros(3), "b": np.zeros(2, dtype=np.float32)}
    g = {"a": np.ones(3), "b": np.ones(2, dtype=np.float32)}
    opt = mp.SGD(learning_rate=0.5)
    for _ in range(2):
        opt.step(p, g)
    assert p["a"].tolist() == [-1.0, -1.0, -1.0] and p["b"].tolist() == [-1.0, -1.0]
    with pytest.raises(ValueError, match=r"gradient for params\['b'\] must contain only finite values; "
                                         r"got 1 NaN/inf value\(s\), the first at index \(1,\)"):
        opt.step(p, {"a": g["a"], "b": np.array([1.0, np.nan], dtype=np.float32)})
    with pytest.raises(ValueError, match=r"gradient for params\['a'\] must have the variable's shape \(3,\); "
                                         r"got \(4,\)"):
        opt.step(p, {"a": np.ones(4), "b": g["b"]})
    assert p["a"].tolist() == [-1.0, -1.0, -1.0] and p["b"].tolist() == [-1.0, -1.0]  # nothing moved
