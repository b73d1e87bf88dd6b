"""Transformer block (pre-LN and post-LN) and weight tying (manualprop and autoprop), checked
against an independent HIPS autograd implementation, finite differences and the tape; the
tied table's gradient is the sum of its two uses; clear errors."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from autograd.scipy.special import erf

import autoprop as ap
import manualprop as mp
from gradcheck.numerical import numerical_gradient


def _ln(z, g, b, eps=1e-5):
    mu = anp.mean(z, axis=-1, keepdims=True)
    var = anp.mean((z - mu) ** 2, axis=-1, keepdims=True)
    return (z - mu) / anp.sqrt(var + eps) * g + b


def _mha(x, p, h, causal):
    N, T, E = x.shape
    dk = E // h
    split = lambda z: anp.transpose(anp.reshape(z, (N, T, h, dk)), (0, 2, 1, 3))  # noqa: E731
    q, k, v = (split(anp.dot(x, p["self_attn.W_" + s].T) + p["self_attn.b_" + s]) for s in "qkv")
    s = anp.einsum("nhtd,nhsd->nhts", q, k) / np.sqrt(dk)
    if causal:
        s = s - 1e30 * np.triu(np.ones((T, T)), 1)
    e = anp.exp(s - anp.max(s, axis=-1, keepdims=True))
    a = e / anp.sum(e, axis=-1, keepdims=True)
    o = anp.reshape(anp.transpose(anp.einsum("nhts,nhsd->nhtd", a, v), (0, 2, 1, 3)), (N, T, E))
    return anp.dot(o, p["self_attn.W_o"].T) + p["self_attn.b_o"]


def _block(x, p, h, norm_first, causal):
    lin = lambda z, k: anp.dot(z, p[k + ".W"].T) + p[k + ".b"]  # noqa: E731
    gelu = lambda z: 0.5 * z * (1 + erf(z / np.sqrt(2)))  # noqa: E731
    mlp = lambda z: lin(gelu(lin(z, "linear1")), "linear2")  # noqa: E731
    ln = lambda z, k: _ln(z, p[k + ".gamma"], p[k + ".beta"])  # noqa: E731
    if norm_first:
        hid = x + _mha(ln(x, "norm1"), p, h, causal)
        return hid + mlp(ln(hid, "norm2"))
    hid = ln(x + _mha(x, p, h, causal), "norm1")
    return ln(hid + mlp(hid), "norm2")


@pytest.mark.parametrize("norm_first, causal", [(True, False), (False, False), (True, True), (False, True)])
def test_block_against_autograd_finite_differences_and_tape(norm_first, causal):
    rng = np.random.default_rng(3)
    block = mp.TransformerBlock(6, 3, 10, norm_first=norm_first, causal=causal, rng=7)
    twin = ap.layers.TransformerBlock(6, 3, 10, norm_first=norm_first, causal=causal, rng=7)
    for k, v in block.params.items():  # gamma, beta away from 1, 0: a wrong LN path shows
        v += 0.3 * rng.standard_normal(v.shape)
        twin.variables[k].assign(v)
    X, G = rng.standard_normal((2, 4, 6)), rng.standard_normal((2, 4, 6))
    Y = block.forward(X)
    dX = block.backward(G)
    p = {k: v.copy() for k, v in block.params.items()}
    f = lambda X, p: anp.sum(_block(X, p, 3, norm_first, causal) * G)  # noqa: E731
    np.testing.assert_allclose(Y, _block(X, p, 3, norm_first, causal), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(dX, grad(f, 0)(X, p), rtol=1e-10, atol=1e-12)
    gp = grad(f, 1)(X, p)
    assert set(gp) == set(block.grads) == set(twin.variables)
    for k in p:
        np.testing.assert_allclose(block.grads[k], gp[k], rtol=1e-10, atol=1e-12, err_msg=k)
    num = numerical_gradient(lambda: float(np.sum(block.forward(X) * G)), X)
    np.testing.assert_allclose(dX, num, rtol=1e-6, atol=1e-8)
    Xt = ap.Variable(X)
    with ap.GradientTape() as tape:
        Yt = twin(Xt)
    np.testing.assert_allclose(Yt.numpy(), Y, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(tape.gradient(Yt, Xt, output_gradients=G).numpy(), dX, rtol=1e-10, atol=1e-12)


def test_block_pre_ln_gradient_is_identity_plus_branches():
    """Pre-LN: with both branches' output projections zero the block is the identity and so is dX."""
    block = mp.TransformerBlock(4, 2, 8, rng=0)
    for k in ("self_attn.W_o", "self_attn.b_o", "linear2.W", "linear2.b"):
        block.params[k][...] = 0.0
    X = np.random.default_rng(0).standard_normal((2, 3, 4))
    G = np.random.default_rng(1).standard_normal((2, 3, 4))
    np.testing.assert_array_equal(block.forward(X), X)
    np.testing.assert_array_equal(block.backward(G), G)


def test_block_twin_starts_from_the_same_weights_and_errors_name_the_layer():
    block, twin = mp.TransformerBlock(4, 2, 8, rng=5), ap.layers.TransformerBlock(4, 2, 8, rng=5)
    for k, v in block.params.items():
        np.testing.assert_array_equal(twin.variables[k].numpy(), v)
    assert repr(twin) == repr(block) == "TransformerBlock(embed_dim=4, num_heads=2, ff_dim=8)"
    with pytest.raises(ValueError, match=r"TransformerBlock\(.*\)\.forward: X must have shape \(batch, time, 4\)"):
        block.forward(np.ones((2, 4)))
    with pytest.raises(ValueError, match="divisible by num_heads"):
        mp.TransformerBlock(5, 2, 8)
    with pytest.raises(TypeError, match="norm_first must be a bool"):
        mp.TransformerBlock(4, 2, 8, norm_first="pre")
    with pytest.raises(RuntimeError):
        mp.TransformerBlock(4, 2, 8).backward(np.ones((1, 2, 4)))


def _tied_model(ns, V=6, D=4):
    return ns.TiedEmbedding(V, D, ns.Linear(D, D, rng=1), ns.Tanh(), rng=0)


def test_tied_embedding_against_autograd_and_tape_gradient_sums_both_uses():
    rng = np.random.default_rng(2)
    model, twin = _tied_model(mp), _tied_model(ap.layers)
    ids = np.array([0, 3, 3, 5, 1, 3])          # row 3 read three times, rows 2 and 4 never
    G = rng.standard_normal((6, 6))
    Z = model.forward(ids)
    assert model.backward(G) is None
    p = {k: v.copy() for k, v in model.params.items()}

    def f(p):
        h = anp.tanh(anp.dot(p["W"][ids], p["body.0.W"].T) + p["body.0.b"])
        return anp.sum(anp.dot(h, p["W"].T) * G)

    gp = grad(f)(p)
    assert set(model.grads) == set(twin.variables) == {"W", "body.0.W", "body.0.b"}
    for k in p:
        np.testing.assert_allclose(model.grads[k], gp[k], rtol=1e-12, atol=1e-14, err_msg=k)
    W = model.params["W"]
    num = numerical_gradient(lambda: float(np.sum(model.forward(ids) * G)), W)
    np.testing.assert_allclose(model.grads["W"], num, rtol=1e-6, atol=1e-8)
    # each use alone is wrong: the tied gradient is their sum
    H = np.tanh(W[ids] @ p["body.0.W"].T + p["body.0.b"])
    dW_out = G.T @ H
    assert np.abs(model.grads["W"] - dW_out).max() > 0.1
    assert np.abs(model.grads["W"][[2, 4]] - dW_out[[2, 4]]).max() == 0.0   # unread rows: projection only
    with ap.GradientTape() as tape:
        Zt = twin(ids)
    np.testing.assert_allclose(Zt.numpy(), Z, rtol=1e-13)
    np.testing.assert_allclose(tape.gradient(Zt, twin.variables["W"], output_gradients=G).numpy(),
                               model.grads["W"], rtol=1e-12, atol=1e-14)


def test_tied_embedding_without_body_and_on_sequences():
    model = mp.TiedEmbedding(5, 3, rng=0)
    ids = np.array([[1, 4, 1], [0, 2, 2]])
    Z = model.forward(ids)
    W = model.params["W"]
    np.testing.assert_allclose(Z, W[ids] @ W.T, rtol=1e-15)
    G = np.random.default_rng(0).standard_normal(Z.shape)
    model.backward(G)
    num = numerical_gradient(lambda: float(np.sum(model.forward(ids) * G)), W)
    np.testing.assert_allclose(model.grads["W"], num, rtol=1e-6, atol=1e-8)


def test_tied_embedding_errors():
    with pytest.raises(ValueError, match=r"TiedEmbedding\(.*\)\.forward: the body must keep the shape"):
        mp.TiedEmbedding(5, 3, mp.Linear(3, 2, rng=0), rng=0).forward(np.array([1, 2]))
    with pytest.raises(ValueError, match="the body must keep the shape"):
        ap.layers.TiedEmbedding(5, 3, ap.layers.Linear(3, 2, rng=0), rng=0)(np.array([1, 2]))
    with pytest.raises(TypeError, match="must have callable forward"):
        mp.TiedEmbedding(5, 3, object())
    with pytest.raises(ValueError):
        mp.TiedEmbedding(5, 3).forward(np.array([5]))
