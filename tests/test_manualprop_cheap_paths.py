"""Session 13 (issue 15): manualprop's cheaper common cases give the same values and the same errors.

Each fast path is pinned by a test that it runs (so that it cannot silently stop paying off)
and that the full path gives the same bits or message where the fast one does not apply.
"""

import re

import numpy as np
import pytest

import manualprop as mp
from manualprop import _validation as V
from manualprop import layers as ML

LIN = r"Linear\(in_features={}, out_features={}\)"


def _saturating_net():
    """Linear(3, 4) -> Tanh -> Linear(4, 2) whose hidden pre-activations reach |x| = 20."""
    net = mp.Sequential(mp.Linear(3, 4, rng=0), mp.Tanh(), mp.Linear(4, 2, rng=1))
    net.layers[0].params["W"][...] = [[10.0, 0, 0], [0, 1.0, 0], [0, 0, -10.0], [0.5, 0.5, 0.5]]
    net.layers[0].params["b"][...] = 0.0
    return net


def test_tanh_saturated_entries_take_the_precise_form_without_errstate_when_the_bound_allows(monkeypatch):
    net = _saturating_net()
    X = np.array([[2.0, 0.5, -2.0], [-1.0, 0.1, 0.2]])  # x = 20, -20 (saturated), -10, ...
    dY = np.ones((2, 2))
    calls = []
    real = ML._sech2
    monkeypatch.setattr(ML, "_sech2", lambda x: calls.append(x.shape) or real(x))
    fast = []
    below = ML._sech2_below_overflow
    monkeypatch.setattr(ML, "_sech2_below_overflow", lambda x: fast.append(x.shape) or below(x))
    net.forward(X, training=True)
    net.backward(dY)
    tanh = net.layers[1]
    d = ML._tanh_grad(tanh.cache["X"], tanh.cache["Y"], tanh._ss["X"])
    assert calls == [] and len(fast) == 2  # backward and the call above; |x| <= 20 proven below 700 by X . X: no np.errstate
    A = tanh.cache["X"]
    sech = 1.0 / np.cosh(A)
    expected = np.where(1 - np.tanh(A) ** 2 < 0.125, sech * sech, 1 - np.tanh(A) ** 2)
    np.testing.assert_array_equal(d, expected)  # the same ufuncs as _sech2: the same bits
    assert d[0, 0] == pytest.approx(4.0 * np.exp(-40.0), rel=1e-14)  # 1.70e-17, not 0
    # without a bound (a Tanh alone is handed nothing) the same values, through _sech2
    d2 = ML._tanh_grad(tanh.cache["X"], tanh.cache["Y"])
    np.testing.assert_array_equal(d2, d)
    assert len(calls) == 1


def test_tanh_at_huge_inputs_in_a_network_takes_the_guarded_form_and_is_zero():
    net = _saturating_net()
    net.layers[0].params["W"][0, 0] = 1e3  # x = 800 and 2000: cosh overflows, 1 / inf = 0
    X = np.array([[0.8, 0.5, -2.0], [2.0, 0.1, 0.2]])
    with np.errstate(all="raise"):
        net.forward(X, training=True)
        tanh = net.layers[1]
        # no bound below 700^2: NaN in a Sequential (the Linear before it left its output
        # unlooked, session 20; its saturated entries' bound, 2000^2, is found in _tanh_grad)
        assert not tanh._ss["X"] <= 700.0 ** 2
        d = ML._tanh_grad(tanh.cache["X"], tanh.cache["Y"], tanh._ss["X"])
    assert d[0, 0] == 0.0 and d[1, 0] == 0.0


def test_tanh_backward_after_a_refused_forward_uses_the_cache_it_has():
    tanh = mp.Tanh()
    X = np.array([[30.0, 0.5]])
    tanh.forward(X)
    with pytest.raises(ValueError, match="X must contain only finite values"):
        tanh.forward(np.array([[np.nan, 0.0]]))
    d = tanh.backward(np.ones((1, 2)))  # the cached X of the good call, no bound: _sech2
    assert d[0, 0] == pytest.approx(4.0 * np.exp(-60.0), rel=1e-14)


# ---------------------------------------------------------------------------- errors keep their names
def _deep():
    """Linear(3, 4) Tanh Linear(4, 5) Sequential(ReLU, Linear(5, 2)): positions 0, 1, 2, 3.0, 3.1."""
    return mp.Sequential(mp.Linear(3, 4, rng=0), mp.Tanh(), mp.Linear(4, 5, rng=1),
                         mp.Sequential(mp.ReLU(), mp.Linear(5, 2, rng=2)))


def _layer(net, path):
    for i in path:
        net = net.layers[i]
    return net


@pytest.mark.parametrize("path, key, index, rows", [((0,), "W", (2, 1), 5), ((2,), "b", (3,), 5),
                                                   ((3, 1), "W", (1, 4), 5)])
def test_a_nan_made_inside_layer_k_is_named_as_layer_k_with_its_position_in_forward(path, key, index, rows):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 3))
    net = _deep()
    for _ in range(3):  # the same signature as the failing call: every fast path is warm
        net.forward(X, training=True)
    lin = _layer(net, path)
    lin.params[key][index] = np.nan
    where = ".".join(map(str, path))
    with pytest.raises(V.NonFiniteError, match=(
            rf"^Sequential layer {re.escape(where)} \({re.escape(repr(lin))}\)\.forward: parameter {key} "
            rf"contains 1 NaN/inf value\(s\), the first at index {re.escape(str(index))} \(value nan\); "
            rf"from finite X, Y has {rows} NaN/inf value\(s\)")) as info:
        net.forward(X, training=True)
    assert info.value.layer is lin and info.value.path == list(path)


@pytest.mark.parametrize("path, index", [((2,), (1, 3)), ((3, 1), (0, 2))])
def test_a_nan_made_inside_layer_k_is_named_as_layer_k_with_its_position_in_backward(path, index):
    rng = np.random.default_rng(1)
    X, dY = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    net = _deep()
    for _ in range(3):
        net.forward(X, training=True)
        net.backward(dY)
    net.forward(X, training=True)
    lin = _layer(net, path)
    lin.params["W"][index] = np.inf  # after forward: only this Linear's dX = dY @ W is non-finite
    where = ".".join(map(str, path))
    with pytest.raises(V.NonFiniteError, match=(
            rf"^Sequential layer {re.escape(where)} \({re.escape(repr(lin))}\)\.backward: parameter W "
            rf"contains 1 NaN/inf value\(s\), the first at index {re.escape(str(index))} \(value inf\); "
            r"from finite dY, dX has \d+ NaN/inf value\(s\)")) as info, np.errstate(invalid="ignore"):
        net.backward(dY, input_grad=False)  # inf * 0 (a ReLU's zero dY) is NaN: no warning asked
    assert info.value.layer is lin and info.value.path == list(path)


def test_an_overflow_in_front_of_tanh_is_named_at_the_linear_not_squashed_to_one():
    # why the Linear's look at its Y cannot move to the loss: tanh(inf) = 1 would hide it; in a
    # Sequential it moves to the Tanh's backward (session 20), which meets the inf in its
    # saturated entries: the forward's numbers are right (tanh(inf) = 1, tanh'(inf) = 0)
    net = mp.Sequential(mp.Linear(2, 2, rng=0), mp.Tanh(), mp.Linear(2, 2, rng=1))
    X = np.array([[1.0, 1.0]])
    net.forward(X)
    net.layers[0].params["W"][...] = 1e308
    with np.errstate(over="ignore"):
        Y = net.forward(X, training=True)
        assert np.array_equal(net.layers[1].cache["Y"], np.ones((1, 2)))
        with pytest.raises(V.NonFiniteError, match=r"^Sequential layer 0 \(Linear\(in_features=2, "
                           r"out_features=2\)\)\.forward: Y overflowed: from finite X and finite parameters"):
            net.backward(np.ones_like(Y))
        with pytest.raises(V.NonFiniteError, match=r"^Linear\(in_features=2, out_features=2\)\.forward: "
                           r"Y overflowed"):
            net.layers[0].forward(X)  # alone: its own look, in the forward pass


def test_a_bad_shape_at_a_second_call_with_a_new_signature_gets_the_clear_error():
    net = _deep()
    loss, opt = mp.SoftmaxCrossEntropy(), mp.SGD(learning_rate=0.1)
    X, y = np.ones((5, 3)), np.array([0, 1, 0, 1, 1])
    for _ in range(2):
        loss.forward(y, net.forward(X, training=True))
        net.backward(loss.backward(), input_grad=False)
        opt.step(net.params, net.grads)
    net.forward(np.ones((7, 3)))  # a new batch size: a new signature that is fine
    with pytest.raises(ValueError, match=r"^Linear\(in_features=3, out_features=4\)\.forward: X must have "
                                         r"shape \(batch, 3\); got \(7, 4\)$"):
        net.forward(np.ones((7, 4)))
    net.forward(X, training=True)
    with pytest.raises(ValueError, match=r"^Linear\(in_features=5, out_features=2\)\.backward: dY must have "
                                         r"the shape of the forward output, \(5, 2\); got \(5, 3\)$"):
        net.backward(np.ones((5, 3)))
    with pytest.raises(ValueError, match=r"y_pred must have shape \(batch, classes\); got \(5,\)"):
        loss.forward(y, np.ones(5))
    g = net.grads
    g["0.W"] = np.ones((3, 4))
    W = net.params["0.W"].copy()
    with pytest.raises(ValueError, match=r"gradient for .*0\.W.* must have the variable's shape \(4, 3\); "
                                         r"got \(3, 4\)"):
        opt.step(net.params, g)
    np.testing.assert_array_equal(net.params["0.W"], W)  # nothing updated
