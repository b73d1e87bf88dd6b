"""Session 20 (issue 15): in a Sequential, a built-in Linear followed by a built-in Tanh (then
another Linear, or the end) does not look at its output; where those values end up is looked at
instead (the next Linear's output, or the container's last output), and a NaN/inf found there is
traced back to the Linear that made it, with the message its own look gives when called alone.
An infinity, which tanh turns into +-1 exactly, is met by the Tanh's backward.

Each test compares the container's message with the one the layers raise when called one by one
(their own looks, as before the change)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import manualprop as mp
from manualprop._validation import NonFiniteError


@pytest.fixture
def overflow_quiet():
    """numpy's matmul warns of its overflow (an error under the suite's filterwarnings)."""
    with np.errstate(over="ignore", invalid="ignore"):
        yield


def _mlp(*sizes, seed=0):
    layers = []
    for k in range(len(sizes) - 1):
        layers.append(mp.Linear(sizes[k], sizes[k + 1], rng=seed + k))
        if k < len(sizes) - 2:
            layers.append(mp.Tanh())
    return mp.Sequential(layers)


def _X(n=5, d=4, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _alone_message(net, X, method="forward"):
    """The message the layers give called one by one (each its own looks), with the position
    Sequential adds: what the container said before session 20."""
    for i, layer in enumerate(net.layers):
        try:
            X = layer.forward(X)
        except NonFiniteError as err:
            return str(err.at(i))
    raise AssertionError("no layer raised")


def test_the_linear_before_a_tanh_skips_its_look_in_a_sequential_only():
    net = _mlp(4, 6, 3)
    X = _X()
    net.forward(X)
    assert math.isnan(net[0]._ss["Y"])  # not looked at: no bound claimed
    assert net[2]._ss["Y"] >= 0  # the last Linear looks at its output (the container's output)
    net[0].forward(X)  # alone: its look as before
    assert net[0]._ss["Y"] >= 0
    subclass = mp.Sequential(mp.Linear(4, 6, rng=0), type("MyTanh", (mp.Tanh,), {})(), mp.Linear(6, 3, rng=1))
    subclass.forward(X)  # a Tanh of your own: the Linear looks (only manualprop's own Tanh is known)
    assert subclass[0]._ss["Y"] >= 0
    relu = mp.Sequential(mp.Linear(4, 6, rng=0), mp.ReLU(), mp.Linear(6, 3, rng=1))
    relu.forward(X)  # ReLU turns NaN into 0: the Linear before it keeps its look
    assert relu[0]._ss["Y"] >= 0


def test_the_values_are_the_same_bits():
    net, X = _mlp(4, 6, 5, 3), _X()
    Y = net.forward(X, training=True)
    dY = np.random.default_rng(1).normal(size=Y.shape)
    dX = net.backward(dY)
    alone = [mp.Linear(4, 6, rng=0), mp.Tanh(), mp.Linear(6, 5, rng=1), mp.Tanh(), mp.Linear(5, 3, rng=2)]
    A = X
    for layer in alone:
        A = layer.forward(A)
    G = dY
    for layer in reversed(alone):
        G = layer.backward(G)
    assert np.array_equal(A, Y) and np.array_equal(G, dX)
    for a, b in zip(alone, net.layers):
        for k in a.grads:
            assert np.array_equal(a.grads[k], b.grads[k])


@pytest.mark.parametrize("position, key, index", [(0, "W", (2, 1)), (0, "b", (4,)), (2, "W", (1, 3)),
                                                  (2, "b", (0,)), (4, "W", (2, 0))])
def test_a_nan_parameter_is_named_by_its_layer(position, key, index):
    net, X = _mlp(4, 6, 5, 3), _X()
    net[position].params[key][index] = np.nan
    expected = _alone_message(net, X)
    assert f"Sequential layer {position} (" in expected and f"parameter {key} " in expected
    assert f"first at index {index}" in expected
    with pytest.raises(NonFiniteError) as info:
        net.forward(X)
    assert str(info.value) == expected


def test_a_nan_made_by_the_linear_before_the_last_tanh_is_found_by_the_containers_look():
    net, X = _mlp(4, 6, 3), _X()
    net.layers.pop()  # Linear, Tanh: the output of the Tanh is the container's, looked at once
    net[0].params["W"][3, 0] = np.nan
    expected = _alone_message(net, X)
    with pytest.raises(NonFiniteError) as info:
        net.forward(X)
    assert str(info.value) == expected and "Sequential layer 0 (" in expected


def _overflowing(net, X, sign_mix):
    """Finite weights so large that layer 0's output overflows: to +inf only (tanh hides
    it), or also to NaN (+inf and -inf in one sum); X >= 2, so every product overflows."""
    W = net[0].params["W"]
    W[...] = 1e308
    if sign_mix:
        W[:, 1] = -1e308
    return np.abs(X) + 2.0


def test_an_overflow_with_both_signs_inside_names_the_linear(overflow_quiet):
    net = _mlp(4, 6, 3)
    X = _overflowing(net, _X(), sign_mix=True)
    expected = _alone_message(net, X)
    assert "Y overflowed" in expected and "Sequential layer 0 (" in expected
    with pytest.raises(NonFiniteError) as info:  # NaN (+inf - inf) in forward, or, as BLAS
        Y = net.forward(X, training=True)  # sums (fma), +-inf only: then in the Tanh's backward
        net.backward(np.ones_like(Y), input_grad=False)
    assert str(info.value) == expected


@pytest.mark.parametrize("what", ["overflow", "inf parameter"])
def test_an_infinity_tanh_hides_is_named_by_the_backward(what, overflow_quiet):
    """tanh(+-inf) = +-1 and tanh'(+-inf) = 0 exactly, so the forward pass's numbers are right;
    the Tanh's backward meets the infinity in its saturated entries and the container raises
    the Linear's own message (before the change: the same message, from the forward pass)."""
    net = _mlp(4, 6, 3)
    X = np.abs(_X()) + 2.0
    if what == "overflow":
        X = _overflowing(net, X, sign_mix=False)
    else:
        net[0].params["W"][2, 1] = np.inf
    expected = _alone_message(net, X)
    assert "Sequential layer 0 (" in expected
    Y = net.forward(X, training=True)  # (before session 20: raised here)
    assert np.isfinite(Y).all()
    with pytest.raises(NonFiniteError) as info:
        net.backward(np.ones_like(Y), input_grad=False)
    assert str(info.value) == expected


def test_a_nan_input_and_a_nan_dY_are_named_as_before():
    net, X = _mlp(4, 6, 3), _X()
    X[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"^Linear\(in_features=4, out_features=6\)\.forward: X must "
                       r"contain only finite values; got 1 NaN/inf value\(s\), the first at index \(1, 2\)"):
        net.forward(X)
    Y = net.forward(_X())
    dY = np.ones_like(Y)
    dY[3, 1] = np.inf
    with pytest.raises(ValueError, match=r"^Linear\(in_features=6, out_features=3\)\.backward: dY must "
                       r"contain only finite values; got 1 NaN/inf value\(s\), the first at index \(3, 1\)"):
        net.backward(dY)


@pytest.mark.parametrize("what", ["nan", "inf", "overflow"])
def test_fit_and_train_step_raise_the_layers_message(what, overflow_quiet):
    net = _mlp(4, 6, 3).compile(mp.SGD(0.1), mp.SoftmaxCrossEntropy())
    X, y = np.abs(_X(8)) + 2.0, np.arange(8) % 3
    if what == "nan":
        net[0].params["b"][5] = np.nan
    elif what == "inf":
        net[0].params["W"][0, 3] = -np.inf
    else:
        X = _overflowing(net, X, sign_mix=False)
    expected = _alone_message(net, X)
    before = [p.copy() for p in net.params.values()]
    with pytest.raises(NonFiniteError) as info:
        net.train_step((X, y))
    assert str(info.value) == expected
    with pytest.raises(NonFiniteError) as info:
        net.fit(X, y, epochs=1, batch_size=8, verbose=0)
    assert str(info.value) == expected
    for a, b in zip(before, net.params.values()):  # nothing updated
        assert np.array_equal(a, b, equal_nan=True)


def test_the_output_of_a_container_is_never_non_finite():
    rng = np.random.default_rng(3)
    for _ in range(20):  # a NaN at a random place of a random layer of an MLP
        net, X = _mlp(4, 6, 5, 3, seed=int(rng.integers(100))), _X()
        layer = net[int(rng.choice([0, 2, 4]))]
        key = str(rng.choice(["W", "b"]))
        p = layer.params[key]
        p[tuple(int(rng.integers(s)) for s in p.shape)] = np.nan
        with pytest.raises(NonFiniteError):
            net.forward(X)
