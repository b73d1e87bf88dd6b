"""Attention layers of the zoo: ScaledDotProductAttention (three inputs), MultiHeadAttention.

Manual vs tape vs central finite differences with a random non-uniform upstream
gradient, for every input and parameter; HIPS autograd as an independent oracle;
identical initialisation; the causal mask (exact zeros); stability; input checks.
"""

import doctest
import math
import pathlib

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from zoo_seq_helpers import (
    ATOL_TWIN,
    RTOL_TWIN,
    assert_same_init,
    copy_params,
    randomize_params,
    tape_grads,
    three_way,
)

import autoprop as ap
import manualprop as mp
import manualprop.attention

LESSONS = pathlib.Path(__file__).resolve().parent.parent / "lessons"
STRICT = dict(over="raise", invalid="raise", divide="raise")


def oracle(f, args, G):
    def L(*a):
        return anp.sum(f(*a) * G)

    return [grad(L, i)(*args) for i in range(len(args))]


def ag_sdpa(Q, K, V, causal=False):
    S = anp.matmul(Q, anp.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
    if causal:
        S = anp.where(np.triu(np.ones(S.shape[-2:], bool), 1), -1e300, S)
    S = S - anp.max(S, axis=-1, keepdims=True)
    E = anp.exp(S)
    return anp.matmul(E / anp.sum(E, axis=-1, keepdims=True), V)


def ag_mha(X, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, heads, causal):
    N, T, E = X.shape
    dk = E // heads

    def split(Z):
        return anp.transpose(anp.reshape(Z, (N, T, heads, dk)), (0, 2, 1, 3))

    Q, K, V = (anp.dot(X, W.T) + b for W, b in ((W_q, b_q), (W_k, b_k), (W_v, b_v)))
    O = ag_sdpa(split(Q), split(K), split(V), causal)
    O = anp.reshape(anp.transpose(O, (0, 2, 1, 3)), (N, T, E))
    return anp.dot(O, W_o.T) + b_o


MHA_KEYS = ["W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"]


# ---------------------------------------------------------------- ScaledDotProductAttention


@pytest.mark.parametrize(
    "causal, qshape, kshape, vshape",
    [
        (False, (2, 3, 4), (2, 5, 4), (2, 5, 2)),  # Tq != Tk, dv != d
        (True, (2, 4, 3), (2, 4, 3), (2, 4, 5)),
        (True, (2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 4)),  # extra batch axis (heads)
        (False, (3, 2), (4, 2), (4, 3)),  # no batch axis
    ],
)
def test_sdpa_three_way_and_autograd(causal, qshape, kshape, vshape):
    rng = np.random.default_rng(30)
    Q, K, V = (rng.normal(size=s) for s in (qshape, kshape, vshape))
    layer = mp.ScaledDotProductAttention(causal=causal)
    twin = ap.layers.ScaledDotProductAttention(causal=causal)
    G = rng.normal(size=qshape[:-1] + vshape[-1:])
    (dQ, dK, dV), dp = three_way(layer, twin, [Q, K, V], G)
    assert dp == {} and layer.params == {}
    ag = oracle(lambda q, k, v: ag_sdpa(q, k, v, causal), [Q, K, V], G)
    for mine, ref in zip((dQ, dK, dV), ag, strict=True):
        np.testing.assert_allclose(mine, ref, rtol=RTOL_TWIN, atol=ATOL_TWIN)


def test_sdpa_backward_returns_a_tuple_of_three():
    rng = np.random.default_rng(31)
    layer = mp.ScaledDotProductAttention()
    Q, K, V = rng.normal(size=(1, 2, 3)), rng.normal(size=(1, 4, 3)), rng.normal(size=(1, 4, 5))
    Y = layer(Q, K, V)
    out = layer.backward(np.ones_like(Y))
    assert isinstance(out, tuple) and [g.shape for g in out] == [Q.shape, K.shape, V.shape]


def test_sdpa_forward_closed_form():
    rng = np.random.default_rng(32)
    Q, K, V = rng.normal(size=(2, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    S = Q @ K.T / math.sqrt(3)
    P = np.exp(S) / np.exp(S).sum(1, keepdims=True)
    np.testing.assert_allclose(mp.ScaledDotProductAttention()(Q, K, V), P @ V, rtol=1e-13)
    # causal: row 0 sees only key 0, so Y[0] == V[0] exactly
    Qc, Kc, Vc = rng.normal(size=(3, 3)), rng.normal(size=(3, 3)), rng.normal(size=(3, 2))
    Y = mp.ScaledDotProductAttention(causal=True)(Qc, Kc, Vc)
    np.testing.assert_array_equal(Y[0], Vc[0])


@pytest.mark.parametrize("which", ["manual", "tape"])
def test_sdpa_causal_output_at_t_ignores_the_future(which):
    rng = np.random.default_rng(33)
    N, T, d = 2, 5, 3
    Q, K, V = (rng.normal(size=(N, T, d)) for _ in range(3))
    layer = mp.ScaledDotProductAttention(causal=True)
    twin = ap.layers.ScaledDotProductAttention(causal=True)
    for t in range(T):
        G = np.zeros((N, T, d))
        G[:, t] = rng.normal(size=(N, d))  # the loss reads output t only
        if which == "manual":
            layer(Q, K, V)
            dQ, dK, dV = layer.backward(G)
        else:
            _, (dQ, dK, dV), _ = tape_grads(twin, [Q, K, V], G)
        # exactly zero, not just small: the masked weights are exactly 0
        assert np.all(dK[:, t + 1 :] == 0) and np.all(dV[:, t + 1 :] == 0)
        assert np.all(np.delete(dQ, t, axis=1) == 0)
        assert np.abs(dV[:, : t + 1]).min() > 0
        if t > 0:  # at t = 0 the softmax has one entry, P = 1 whatever the score: dK = 0
            assert np.abs(dK[:, : t + 1]).min() > 0
    # and the forward: changing the future does not change the past, bit for bit
    Y = layer(Q, K, V)
    K2, V2, Q2 = K.copy(), V.copy(), Q.copy()
    K2[:, 3:] += 10.0
    V2[:, 3:] -= 7.0
    Q2[:, 3:] *= -3.0
    np.testing.assert_array_equal(layer(Q2, K2, V2)[:, :3], Y[:, :3])


def test_sdpa_is_stable_for_huge_scores():
    rng = np.random.default_rng(34)
    Q, K, V = rng.normal(size=(2, 4, 3)) * 1e3, rng.normal(size=(2, 4, 3)) * 1e3, rng.normal(size=(2, 4, 2))
    for causal in (False, True):
        layer = mp.ScaledDotProductAttention(causal=causal)
        with np.errstate(**STRICT):
            Y = layer(Q, K, V)
            grads = layer.backward(rng.normal(size=Y.shape))
        P = layer.cache["P"]
        assert np.isfinite(Y).all() and all(np.isfinite(g).all() for g in grads)
        np.testing.assert_allclose(P.sum(-1), 1.0, rtol=1e-14)
        twin = ap.layers.ScaledDotProductAttention(causal=causal)
        np.testing.assert_allclose(twin(Q, K, V).numpy(), Y, rtol=1e-12)


def test_sdpa_float32_kept():
    rng = np.random.default_rng(35)
    Q, K, V = (rng.normal(size=(2, 3, 4)).astype(np.float32) for _ in range(3))
    layer = mp.ScaledDotProductAttention(causal=True)
    Y = layer(Q, K, V)
    assert Y.dtype == np.float32
    assert all(g.dtype == np.float32 for g in layer.backward(rng.normal(size=Y.shape)))


def test_sdpa_bad_inputs_name_layer_and_tensor():
    layer = mp.ScaledDotProductAttention(causal=True)
    where = r"ScaledDotProductAttention\(causal=True\)\.forward: "
    Q = np.zeros((2, 3, 4))
    with pytest.raises(ValueError, match=where + r"Q must have at least 2 dimension\(s\); got shape \(4,\)"):
        layer(np.zeros(4), Q, Q)
    with pytest.raises(ValueError, match=where + r"K must have shape \(2, Tk, 4\); got \(2, 3, 5\)"):
        layer(Q, np.zeros((2, 3, 5)), Q)
    with pytest.raises(ValueError, match=where + r"K must have shape \(2, Tk, 4\); got \(3, 3, 4\)"):
        layer(Q, np.zeros((3, 3, 4)), Q)
    with pytest.raises(ValueError, match=where + r"V must have shape \(2, 6, dv\); got \(2, 3, 4\)"):
        layer(Q, np.zeros((2, 6, 4)), Q)
    with pytest.raises(TypeError, match=where + r"V must have dtype float64 \(the dtype of the parameters\); got float32"):
        layer(Q, Q, Q.astype(np.float32))
    with pytest.raises(TypeError, match=where + r"Q must have dtype float32 or float64; got int64"):
        layer(np.zeros((2, 3), dtype=np.int64), Q, Q)
    with pytest.raises(ValueError, match=where + r"K must not be empty; got shape \(2, 0, 4\)"):
        layer(Q, np.zeros((2, 0, 4)), np.zeros((2, 0, 4)))
    with pytest.raises(TypeError, match=r"ScaledDotProductAttention: causal must be a bool; got str 'yes'"):
        mp.ScaledDotProductAttention(causal="yes")
    with pytest.raises(RuntimeError, match=where[:-11] + r"\.backward: must be called after forward"):
        layer.backward(Q)
    layer(Q, Q, Q)
    with pytest.raises(ValueError, match=r"\.backward: dY must have the shape of the forward output, \(2, 3, 4\)"):
        layer.backward(np.zeros((2, 4, 3)))
    twin = ap.layers.ScaledDotProductAttention()
    with pytest.raises(ValueError, match=r"autoprop\.layers\.ScaledDotProductAttention\(causal=False\)\.__call__: K must have shape \(2, Tk, 4\)"):
        twin(Q, np.zeros((2, 3, 5)), Q)


# ---------------------------------------------------------------- MultiHeadAttention


def test_mha_same_init_and_distribution():
    assert_same_init(
        lambda r: mp.MultiHeadAttention(8, 2, rng=r), lambda r: ap.layers.MultiHeadAttention(8, 2, rng=r)
    )
    E = 32
    p = mp.MultiHeadAttention(E, 4, rng=0).params
    assert list(p) == MHA_KEYS
    assert all(p[k].shape == (E, E) for k in MHA_KEYS[:4]) and all(p[k].shape == (E,) for k in MHA_KEYS[4:])
    assert all(np.all(p[k] == 0) for k in MHA_KEYS[4:])  # PyTorch zeroes the biases
    a, k = math.sqrt(6 / (4 * E)), 1 / math.sqrt(E)  # xavier on (3E, E); nn.Linear for out_proj
    gen = np.random.default_rng(0)  # documented draw order: in_proj (3E, E), then W_o
    np.testing.assert_array_equal(np.concatenate([p["W_q"], p["W_k"], p["W_v"]]), gen.uniform(-a, a, (3 * E, E)))
    np.testing.assert_array_equal(p["W_o"], gen.uniform(-k, k, (E, E)))


@pytest.mark.parametrize("causal, heads", [(False, 2), (True, 2), (True, 1), (False, 4)])
def test_mha_three_way_and_autograd(causal, heads):
    rng = np.random.default_rng(40)
    N, T, E = 2, 4, 8
    layer = mp.MultiHeadAttention(E, heads, causal=causal, rng=1)
    twin = ap.layers.MultiHeadAttention(E, heads, causal=causal, rng=1)
    randomize_params(layer, rng)  # non-zero biases, so their gradients are exercised
    X = rng.normal(size=(N, T, E))
    G = rng.normal(size=(N, T, E))
    (dX,), dp = three_way(layer, twin, [X], G)
    ag = oracle(
        lambda X, *ps: ag_mha(X, *ps, heads=heads, causal=causal),
        [X] + [layer.params[k] for k in MHA_KEYS],
        G,
    )
    np.testing.assert_allclose(dX, ag[0], rtol=RTOL_TWIN, atol=ATOL_TWIN)
    for k, a in zip(MHA_KEYS, ag[1:], strict=True):
        np.testing.assert_allclose(dp[k], a, rtol=RTOL_TWIN, atol=ATOL_TWIN, err_msg=k)
    # softmax ignores a constant added to a row of scores: b_k only adds q . b_k to every score
    np.testing.assert_allclose(dp["b_k"], 0.0, atol=1e-12)


@pytest.mark.parametrize("which", ["manual", "tape"])
def test_mha_causal_output_at_t_ignores_the_future(which):
    rng = np.random.default_rng(41)
    N, T, E = 2, 5, 6
    layer = mp.MultiHeadAttention(E, 3, causal=True, rng=2)
    twin = ap.layers.MultiHeadAttention(E, 3, causal=True, rng=2)
    randomize_params(layer, rng)
    copy_params(layer, twin)
    X = rng.normal(size=(N, T, E))
    for t in range(T):
        G = np.zeros((N, T, E))
        G[:, t] = rng.normal(size=(N, E))
        if which == "manual":
            layer(X)
            dX = layer.backward(G)
        else:
            _, (dX,), _ = tape_grads(twin, [X], G)
        assert np.all(dX[:, t + 1 :] == 0)  # exactly 0
        assert np.abs(dX[:, : t + 1]).min() > 0
    Y = layer(X)
    X2 = X.copy()
    X2[:, 2:] = rng.normal(size=(N, T - 2, E))
    np.testing.assert_array_equal(layer(X2)[:, :2], Y[:, :2])


def test_mha_non_causal_sees_the_future():
    rng = np.random.default_rng(42)
    layer = mp.MultiHeadAttention(4, 2, rng=0)
    X = rng.normal(size=(1, 3, 4))
    G = np.zeros((1, 3, 4))
    G[:, 0] = 1.0
    layer(X)
    assert np.abs(layer.backward(G)[:, 1:]).min() > 0


def test_mha_float32_kept():
    rng = np.random.default_rng(43)
    layer = mp.MultiHeadAttention(4, 2, rng=0, dtype=np.float32)
    X = rng.normal(size=(2, 3, 4)).astype(np.float32)
    Y = layer(X)
    assert Y.dtype == np.float32
    assert layer.backward(rng.normal(size=Y.shape)).dtype == np.float32
    assert all(g.dtype == np.float32 for g in layer.grads.values())
    np.testing.assert_allclose(Y, mp.MultiHeadAttention(4, 2, rng=0)(X.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_mha_bad_inputs_name_layer_and_tensor():
    with pytest.raises(ValueError, match=r"MultiHeadAttention: embed_dim must be divisible by num_heads; got embed_dim=6, num_heads=4"):
        mp.MultiHeadAttention(6, 4)
    with pytest.raises(ValueError, match=r"autoprop|MultiHeadAttention: embed_dim must be divisible"):
        ap.layers.MultiHeadAttention(6, 4)
    with pytest.raises(TypeError, match=r"MultiHeadAttention: num_heads must be a positive int"):
        mp.MultiHeadAttention(6, 2.0)
    layer = mp.MultiHeadAttention(8, 2, causal=True, rng=0)
    where = r"MultiHeadAttention\(embed_dim=8, num_heads=2, causal=True\)\.forward: "
    with pytest.raises(ValueError, match=where + r"X must have shape \(batch, time, 8\); got \(3, 8\)"):
        layer(np.zeros((3, 8)))
    with pytest.raises(ValueError, match=where + r"X must have shape \(batch, time, 8\); got \(1, 3, 6\)"):
        layer(np.zeros((1, 3, 6)))
    with pytest.raises(ValueError, match=where + r"X must not be empty; got shape \(1, 0, 8\)"):
        layer(np.zeros((1, 0, 8)))
    with pytest.raises(TypeError, match=where + r"X must have dtype float64 \(the dtype of the parameters\); got float32"):
        layer(np.zeros((1, 3, 8), dtype=np.float32))
    twin = ap.layers.MultiHeadAttention(8, 2, causal=True, rng=0)
    with pytest.raises(ValueError, match=r"autoprop\.layers\.MultiHeadAttention\(embed_dim=8, num_heads=2, causal=True\)\.__call__: x must have shape \(batch, time, 8\)"):
        twin(np.zeros((3, 8)))


# ---------------------------------------------------------------- docs


def test_docstring_examples_run():
    res = doctest.testmod(manualprop.attention, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and res.attempted > 0


@pytest.mark.parametrize("name", ["33-attention.md", "34-multi-head-attention.md"])
def test_lesson_examples_run(name):
    res = doctest.testfile(
        str(LESSONS / name), module_relative=False,
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS,
    )
    assert res.failed == 0 and res.attempted > 0
