"""Residual block (manualprop and autoprop): Y = X + F(X), dX = dY + F.backward(dY), checked
against HIPS autograd, finite differences and the tape; shape errors; nesting."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

import autoprop as ap
import manualprop as mp
from gradcheck.numerical import numerical_gradient


def make(ns):
    return ns.Sequential(
        ns.Linear(4, 6, rng=0),
        ns.Residual(ns.Linear(6, 6, rng=1), ns.Tanh(), ns.Linear(6, 6, rng=2)),
        ns.Residual(ns.Linear(6, 6, rng=3), ns.Sigmoid()),
        ns.Linear(6, 3, rng=4),
    )


def test_residual_network_against_autograd_finite_differences_and_tape():
    rng = np.random.default_rng(0)
    model, twin = make(mp), make(ap.layers)
    X, G = rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    Y = model.forward(X)
    dX = model.backward(G)
    assert set(model.params) == set(twin.variables) == {
        "0.W", "0.b", "1.0.W", "1.0.b", "1.2.W", "1.2.b", "2.0.W", "2.0.b", "3.W", "3.b"}
    p = {k: v.copy() for k, v in model.params.items()}

    def f(X, p):
        lin = lambda h, k: anp.dot(h, p[k + ".W"].T) + p[k + ".b"]  # noqa: E731
        h = lin(X, "0")
        h = h + lin(anp.tanh(lin(h, "1.0")), "1.2")
        h = h + 1 / (1 + anp.exp(-lin(h, "2.0")))
        return anp.sum(lin(h, "3") * G)

    np.testing.assert_allclose(dX, grad(f, 0)(X, p), rtol=1e-12, atol=1e-14)
    gp = grad(f, 1)(X, p)
    for k in p:
        np.testing.assert_allclose(model.grads[k], gp[k], rtol=1e-12, atol=1e-14)
    num = numerical_gradient(lambda: float(np.sum(model.forward(X) * G)), X)
    np.testing.assert_allclose(dX, num, rtol=1e-6, atol=1e-8)
    Xt = ap.Variable(X)
    with ap.GradientTape() as tape:
        Yt = twin(Xt)
    np.testing.assert_allclose(Yt.numpy(), Y, rtol=1e-13)
    np.testing.assert_allclose(tape.gradient(Yt, Xt, output_gradients=G).numpy(), dX, rtol=1e-12, atol=1e-14)


def test_backward_is_identity_plus_block():
    rng = np.random.default_rng(1)
    block = mp.Residual(mp.Linear(3, 3, rng=0), mp.ReLU())
    X, G = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    block.forward(X)
    dX = block.backward(G)
    inner = mp.Sequential(block[0], block[1])
    inner.forward(X)
    np.testing.assert_allclose(dX, G + inner.backward(G), rtol=1e-15)
    for v in block.params.values():
        v[...] = 0.0                      # F = 0: the block is the identity, so is its gradient
    block.forward(X)
    np.testing.assert_array_equal(block.backward(G), G)


def test_shape_changing_block_is_a_clear_error():
    X = np.ones((2, 3))
    with pytest.raises(ValueError, match=r"Residual.forward: .*X has shape \(2, 3\), F\(X\) has shape \(2, 4\)"):
        mp.Residual(mp.Linear(3, 4, rng=0)).forward(X)
    with pytest.raises(ValueError, match=r"Residual.__call__: .*x has shape \(2, 3\), F\(x\) has shape \(2, 4\)"):
        ap.layers.Residual(ap.layers.Linear(3, 4, rng=0))(X)
    assert repr(mp.Residual(mp.ReLU())).startswith("Residual(")
