"""``opt.step(model)`` (issue 15, session 19): a Sequential's pairs listed from its layers.

It must be ``opt.step(model.params, model.grads)`` in every way a user can see: the same
update (bit for bit), the same refusals with the same messages and indices, nothing updated
when a pair is refused, and it follows a layer list or a parameter array that changes
between steps.
"""

import numpy as np
import pytest

import manualprop as mp


def _net():
    return mp.Sequential(mp.Linear(3, 4, rng=0), mp.Tanh(), mp.Linear(4, 2, rng=1))


def _backward(net, seed=0):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(5, 3)), np.array([0, 1, 1, 0, 1])
    loss = mp.SoftmaxCrossEntropy()
    loss.forward(y, net.forward(X, training=True))
    net.backward(loss.backward(), input_grad=False)


def _both(opt_factory, spoil=lambda net: None):
    """The error (or None) and the parameters after a step, by ``step(params, grads)`` and ``step(net)``."""
    out = []
    for how in ("dicts", "model"):
        net, opt = _net(), opt_factory()
        _backward(net)
        opt.step(net) if how == "model" else opt.step(net.params, net.grads)  # a good step first
        _backward(net, seed=1)
        spoil(net)
        before = {k: v.copy() for k, v in net.params.items()}
        try:
            opt.step(net) if how == "model" else opt.step(net.params, net.grads)
            err = None
        except (TypeError, ValueError) as e:
            err = (type(e), str(e))
            for k, v in net.params.items():  # refused: nothing updated
                np.testing.assert_array_equal(v, before[k])
        out.append((err, {k: v.copy() for k, v in net.params.items()}, opt.iterations))
    return out


def _set(layer, attr, key, value):
    getattr(layer, attr)[key] = value


SPOILS = {
    "NaN in the last gradient": lambda n: n[2].grads["b"].__setitem__(1, np.nan),
    "inf in the first gradient": lambda n: n[0].grads["W"].__setitem__((3, 2), np.inf),
    "gradient of another shape": lambda n: _set(n[2], "grads", "W", np.zeros((4, 2))),
    "integer gradient": lambda n: _set(n[0], "grads", "b", np.zeros(4, dtype=np.int64)),
    "float32 gradient (cast)": lambda n: _set(n[2], "grads", "W", n[2].grads["W"].astype(np.float32)),
    "read-only parameter": lambda n: setattr(n[2].params["b"].flags, "writeable", False),
    "a gradient key missing": lambda n: n[2].grads.pop("b"),
    "a list as gradient": lambda n: _set(n[0], "grads", "b", n[0].grads["b"].tolist()),
}


@pytest.mark.parametrize("spoil", list(SPOILS), ids=list(SPOILS))
@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_step_model_refuses_and_updates_as_the_dicts(spoil, opt):
    make = (lambda: mp.SGD(0.1)) if opt == "sgd" else (lambda: mp.Adam(0.01))
    (err_d, after_d, it_d), (err_m, after_m, it_m) = _both(make, SPOILS[spoil])
    assert err_d == err_m
    assert it_d == it_m
    assert after_d.keys() == after_m.keys()
    for k in after_d:
        np.testing.assert_array_equal(after_m[k], after_d[k])
    if spoil.startswith(("NaN", "inf")):  # the pair and the first bad index are named
        assert err_m is not None and "finite" in err_m[1]
        assert ("params['2.b']" in err_m[1] and "(1,)" in err_m[1]) or (
            "params['0.W']" in err_m[1] and "(3, 2)" in err_m[1])


def test_step_model_follows_layer_list_and_replaced_arrays():
    net, opt = _net(), mp.SGD(0.5)
    _backward(net)
    opt.step(net)
    old_W = net[0].params["W"]
    net[0].params["W"] = new_W = old_W.copy()  # a parameter array replaced by a new object
    keep = old_W.copy()
    net.layers.insert(2, mp.Linear(4, 4, rng=3))  # the layer list changes between steps
    _backward(net, seed=2)
    expect = {k: v - 0.5 * net.grads[k] for k, v in net.params.items()}
    opt.step(net)
    assert list(net.params) == ["0.W", "0.b", "2.W", "2.b", "3.W", "3.b"]
    for k, v in net.params.items():
        np.testing.assert_array_equal(v, expect[k])
    assert net[0].params["W"] is new_W
    np.testing.assert_array_equal(old_W, keep)  # the array no longer in the layer is left alone
    net[3].grads["W"] = np.full((2, 4), np.nan)  # the new position is named in the message
    with pytest.raises(ValueError, match=r"params\['3\.W'\] must contain only finite values.*\(0, 0\)"):
        opt.step(net)


def test_step_model_nested_and_non_str_keys_take_the_dicts():
    inner = mp.Sequential(mp.Linear(4, 4, rng=2), mp.Tanh())
    net = mp.Sequential(mp.Linear(3, 4, rng=0), inner, mp.Linear(4, 2, rng=1))
    _backward(net)
    expect = {k: v - 0.1 * net.grads[k] for k, v in net.params.items()}
    mp.SGD(0.1).step(net)
    for k, v in net.params.items():
        np.testing.assert_array_equal(v, expect[k])

    class Odd:  # keys 1 and True are equal, but their flat names "0.1" and "0.True" are not
        def __init__(self):
            self.params, self.grads = {1: np.zeros(2)}, {True: np.ones(2)}

        def forward(self, X, training=False):
            return X

        def backward(self, dY):
            return dY

    odd = mp.Sequential(Odd())
    for call in (lambda o: o.step(odd.params, odd.grads), lambda o: o.step(odd)):
        with pytest.raises(ValueError, match=r"same keys; got params-only \['0\.1'\], grads-only \['0\.True'\]"):
            call(mp.SGD(0.1))


def test_step_without_grads_needs_a_model():
    with pytest.raises(TypeError, match=r"step\(params, grads\) takes two dicts, or a model"):
        mp.SGD(0.1).step({"W": np.zeros(2)})


def test_fit_with_an_optimizer_of_your_own_gets_the_dicts():
    seen = []

    class Mine(mp.SGD):
        def step(self, params, grads):  # a student's optimizer: two dicts, always
            seen.append((type(params), sorted(params), sorted(grads)))
            super().step(params, grads)

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(8, 3)), rng.integers(0, 2, size=8)
    net = _net().compile(Mine(0.1), mp.SoftmaxCrossEntropy())
    net.fit(X, y, epochs=1, batch_size=8, verbose=0)
    assert seen == [(dict, ["0.W", "0.b", "2.W", "2.b"], ["0.W", "0.b", "2.W", "2.b"])]


def test_step_model_grads_in_another_order_update_as_the_dicts():
    class Swapped:  # grads with params's keys in the other order: step(params, grads) pairs them by key
        def __init__(self):
            self.params = {"W": np.arange(4.0), "b": np.arange(2.0)}
            self.grads = {"b": np.full(2, 10.0), "W": np.ones(4)}

        def forward(self, X, training=False):
            return X

        def backward(self, dY):
            return dY

    net = mp.Sequential(Swapped())
    mp.SGD(0.5).step(net)
    np.testing.assert_array_equal(net[0].params["W"], np.arange(4.0) - 0.5)
    np.testing.assert_array_equal(net[0].params["b"], np.arange(2.0) - 5.0)
