"""``opt.step(model)`` reads a Sequential's pairs at each call, also after many good steps.

Issue 15 (session 40) measured a cache of a Sequential's (parameter, gradient) pairs kept
between steps and checked at each call (the layers by identity, each layer's ``params`` and
``grads`` dicts by identity and length, the values read by the cached keys): it cost what
listing the pairs costs (``_step_lists``), so it was not kept. These tests guard the property
any such cache must keep: after warm steps, a change a user makes between ``backward`` and
``step`` (a layer that gains parameters, a key renamed in both dicts, a ``grads`` dict replaced
by another) is updated or refused exactly as ``opt.step(net.params, net.grads)`` does. A cache
of the pairs found at the first call fails each of them (a pair not updated, an old array
updated, or a bad gradient not seen).
"""

import numpy as np
import pytest

import manualprop as mp


class Lazy:
    """A student's layer with no parameters until ``build`` (``Y = X * a``), as a lazily built layer."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def build(self, n):
        self.params["a"] = np.full(n, 0.5)
        self.grads["a"] = np.zeros(n)

    def forward(self, X, training=False):
        self.X = X
        return X * self.params["a"] if self.params else X

    def backward(self, dY):
        if self.params:
            self.grads["a"] = (dY * self.X).sum(axis=0)
            return dY * self.params["a"]
        return dY


def _net():
    return mp.Sequential(mp.Linear(3, 4, rng=0), Lazy(), mp.Tanh(), mp.Linear(4, 2, rng=1))


def _backward(net, seed):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(5, 3)), np.array([0, 1, 1, 0, 1])
    loss = mp.SoftmaxCrossEntropy()
    loss.forward(y, net.forward(X, training=True))
    net.backward(loss.backward(), input_grad=False)


def _twins(change):
    """Two equal networks after five good steps each (by ``step(net)`` and by the dicts), then
    ``change`` applied to both between a backward and the next step; that step's error (or None)
    and the parameters after it, for each."""
    out = []
    for how in ("model", "dicts"):
        net, opt = _net(), mp.SGD(0.1)
        for seed in range(5):
            _backward(net, seed)
            opt.step(net) if how == "model" else opt.step(net.params, net.grads)
        _backward(net, 5)
        change(net)
        try:
            opt.step(net) if how == "model" else opt.step(net.params, net.grads)
            err = None
        except (TypeError, ValueError) as e:
            err = (type(e), str(e))
        out.append((err, {k: v.copy() for k, v in net.params.items()}, net))
    return out


def _same(model, dicts):
    assert model[0] == dicts[0]
    assert list(model[1]) == list(dicts[1])
    for k in model[1]:
        np.testing.assert_array_equal(model[1][k], dicts[1][k])


def test_a_layer_that_gains_parameters_after_warm_steps_is_updated():
    def build(net):
        net[1].build(4)
        net[1].grads["a"] = np.arange(4.0)

    model, dicts = _twins(build)
    _same(model, dicts)
    np.testing.assert_array_equal(model[1]["1.a"], 0.5 - 0.1 * np.arange(4.0))


def test_a_key_renamed_in_both_dicts_after_warm_steps_updates_the_new_array():
    def rename(net):
        layer = net[3]
        net.old_b = layer.params.pop("b")
        net.old_b_value = net.old_b.copy()
        layer.params["B"] = net.old_b.copy()  # the same number of keys, a new array
        layer.grads["B"] = layer.grads.pop("b")

    model, dicts = _twins(rename)
    _same(model, dicts)
    net = model[2]
    np.testing.assert_array_equal(net.old_b, net.old_b_value)  # the array no longer in the layer: left alone
    assert not np.array_equal(net[3].params["B"], net.old_b_value)  # the new one: updated


def test_a_grads_dict_replaced_after_warm_steps_is_read_and_checked():
    def replace(net):
        net[0].grads = {"W": net[0].grads["W"], "b": np.zeros(5)}  # a new dict, a gradient of the wrong shape

    model, dicts = _twins(replace)
    _same(model, dicts)
    assert model[0] is not None and "params['0.b']" in model[0][1] and "(4,)" in model[0][1]


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_a_non_finite_gradient_written_in_place_after_warm_steps_is_refused(value):
    def spoil(net):
        net[3].grads["W"][1, 2] = value

    model, dicts = _twins(spoil)
    _same(model, dicts)
    assert model[0] is not None and "params['3.W']" in model[0][1] and "(1, 2)" in model[0][1]
