"""manualprop.Sequential: chaining, flat parameter keys, whole-network gradients."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

from manualprop import SGD, Linear, ReLU, Sequential, Sigmoid, SoftmaxCrossEntropy, Tanh


def numerical_grad(f, x, h=1e-6):
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


def make_mlp(seed=0):
    rng = np.random.default_rng(seed)
    return Sequential(
        Linear(4, 6, rng=rng), Tanh(), Linear(6, 5, rng=rng), Sigmoid(), Linear(5, 3, rng=rng)
    )


def test_keys_follow_state_dict_convention_and_are_the_layers_arrays():
    model = Sequential(Linear(4, 6, rng=0), ReLU(), Linear(6, 3, rng=1))
    assert list(model.params) == ["0.W", "0.b", "2.W", "2.b"]
    assert list(model.grads) == list(model.params)
    assert model.params["2.W"] is model.layers[2].params["W"]
    assert len(model) == 3 and model[1] is model.layers[1]
    nested = Sequential([Sequential(Linear(2, 2, rng=0), ReLU()), Linear(2, 1, rng=0)])
    assert list(nested.params) == ["0.0.W", "0.0.b", "1.W", "1.b"]


def test_forward_chains_and_backward_runs_in_reverse():
    rng = np.random.default_rng(1)
    model = make_mlp()
    X = rng.normal(size=(7, 4))
    h = X
    for layer in model.layers:
        h = layer.forward(h)
    np.testing.assert_allclose(model(X), h, rtol=1e-14)
    G = rng.normal(size=(7, 3))
    dX = model.backward(G)
    d = G
    for layer in reversed(model.layers):
        d = layer.backward(d)
    np.testing.assert_allclose(dX, d, rtol=1e-14)


def test_whole_network_gradients_vs_finite_differences():
    rng = np.random.default_rng(2)
    model = make_mlp(3)
    X = rng.normal(size=(5, 4))
    G = rng.normal(size=(5, 3))
    model.forward(X)
    dX = model.backward(G)
    grads = {k: v.copy() for k, v in model.grads.items()}

    def L():
        return np.sum(model.forward(X) * G)

    np.testing.assert_allclose(dX, numerical_grad(L, X), rtol=1e-6, atol=1e-8)
    params = model.params
    for k in params:
        np.testing.assert_allclose(
            grads[k], numerical_grad(L, params[k]), rtol=1e-6, atol=1e-8, err_msg=k
        )


def test_network_with_cross_entropy_vs_autograd():
    rng = np.random.default_rng(4)
    model = make_mlp(5)
    loss = SoftmaxCrossEntropy()
    X = rng.normal(size=(8, 4))
    y = rng.integers(0, 3, size=8)
    keys = list(model.params)

    def L(X, *ps):
        W0, b0, W2, b2, W4, b4 = ps
        h = anp.tanh(anp.dot(X, W0.T) + b0)
        h = 1 / (1 + anp.exp(-(anp.dot(h, W2.T) + b2)))
        z = anp.dot(h, W4.T) + b4
        m = anp.max(z, axis=1, keepdims=True)
        logp = z - m - anp.log(anp.sum(anp.exp(z - m), axis=1, keepdims=True))
        return -anp.mean(logp[np.arange(len(y)), y])

    ps = [model.params[k] for k in keys]
    value = loss(y, model(X))
    dX = model.backward(loss.backward())
    np.testing.assert_allclose(value, L(X, *ps), rtol=1e-12)
    np.testing.assert_allclose(dX, grad(L, 0)(X, *ps), rtol=1e-7)
    for i, k in enumerate(keys):
        np.testing.assert_allclose(model.grads[k], grad(L, i + 1)(X, *ps), rtol=1e-7, err_msg=k)


def test_optimizer_step_on_flat_params_reaches_the_layers_and_lowers_the_loss():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(30, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 1).astype(np.int64)
    model = make_mlp(7)
    loss = SoftmaxCrossEntropy()
    opt = SGD(learning_rate=0.5, momentum=0.9)
    W0 = model.layers[0].params["W"]
    before = W0.copy()
    first = loss(y, model(X))
    for _ in range(60):
        loss(y, model(X, training=True))
        model.backward(loss.backward())
        opt.step(model.params, model.grads)
    assert model.layers[0].params["W"] is W0  # updated in place
    assert not np.allclose(W0, before)
    assert loss(y, model(X)) < 0.5 * first


def test_bad_layers_rejected():
    with pytest.raises(
        TypeError,
        match=r"^Sequential: layer 1 must have callable forward\(\) and backward\(\); got function without forward\(\)$",
    ):
        Sequential(ReLU(), lambda x: x)

    class NoDict:
        params = []
        grads = []

        def forward(self, X, training=False):
            return X

        def backward(self, dY):
            return dY

    with pytest.raises(
        TypeError,
        match=r"Sequential: layer 0 \(NoDict\) must have dict params and grads; got list and list",
    ):
        Sequential(NoDict())


def test_layer_errors_propagate_from_inside():
    model = Sequential(Linear(4, 3, rng=0), ReLU())
    with pytest.raises(
        ValueError,
        match=r"Linear\(in_features=4, out_features=3\)\.forward: X must have shape \(batch, 4\); got \(2, 5\)",
    ):
        model(np.zeros((2, 5)))
    with pytest.raises(RuntimeError, match=r"ReLU\(\)\.backward: must be called after forward"):
        Sequential(Linear(4, 3, rng=0), ReLU()).backward(np.zeros((2, 3)))
