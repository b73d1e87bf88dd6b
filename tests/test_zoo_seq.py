"""Sequence layers of the zoo: Embedding, RNN, LSTM, GRU.

Manual (hand-derived backward) vs tape (autoprop twin) vs central finite
differences, with a random non-uniform upstream gradient, for every input and
parameter; HIPS autograd on the same forward written in autograd.numpy as an
independent oracle; identical initialisation; closed forms; input checks.
"""

import doctest
import pathlib

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from zoo_seq_helpers import (
    ATOL_TWIN,
    RTOL_FD,
    RTOL_TWIN,
    assert_same_init,
    manual_grads,
    numerical_grads,
    tape_grads,
    three_way,
)

import autoprop as ap
import manualprop as mp
import manualprop.embedding
import manualprop.recurrent

LESSONS = pathlib.Path(__file__).resolve().parent.parent / "lessons"


def oracle(f, args, G):
    """autograd gradients of sum(f(*args) * G) w.r.t. every argument."""

    def L(*a):
        return anp.sum(f(*a) * G)

    return [grad(L, i)(*args) for i in range(len(args))]


# ---------------------------------------------------------------- Embedding


def test_embedding_same_init_and_distribution():
    assert_same_init(lambda r: mp.Embedding(7, 3, rng=r), lambda r: ap.layers.Embedding(7, 3, rng=r))
    W = mp.Embedding(400, 50, rng=0).params["W"]
    assert W.shape == (400, 50) and W.dtype == np.float64
    assert abs(W.mean()) < 0.02 and abs(W.std() - 1.0) < 0.02  # N(0, 1), as PyTorch
    W32 = mp.Embedding(7, 3, rng=0, dtype=np.float32).params["W"]
    assert W32.dtype == np.float32
    np.testing.assert_array_equal(W32, mp.Embedding(7, 3, rng=0).params["W"].astype(np.float32))


@pytest.mark.parametrize("shape", [(6,), (3, 4), (2, 3, 2)])
def test_embedding_three_way(shape):
    rng = np.random.default_rng(10)
    X = rng.integers(0, 5, size=shape)
    X.flat[:3] = 2  # make sure there are repeats
    layer, twin = mp.Embedding(5, 3, rng=1), ap.layers.Embedding(5, 3, rng=1)
    G = rng.normal(size=shape + (3,))
    (dX,), dp = three_way(layer, twin, [X], G)
    assert dX is None  # integer input: no gradient (documented)
    (aW,) = oracle(lambda W: W[X], [layer.params["W"]], G)
    np.testing.assert_allclose(dp["W"], aW, rtol=RTOL_TWIN, atol=ATOL_TWIN)


def test_embedding_repeated_indices_accumulate_closed_form():
    layer = mp.Embedding(4, 2, rng=0)
    X = np.array([[0, 2, 2], [2, 1, 0]])
    G = np.arange(12, dtype=np.float64).reshape(2, 3, 2) + 1.0  # rows 1..12, all distinct
    layer.forward(X)
    assert layer.backward(G) is None
    expected = np.array(
        [
            G[0, 0] + G[1, 2],  # row 0 used at (0,0) and (1,2)
            G[1, 1],  # row 1 once
            G[0, 1] + G[0, 2] + G[1, 0],  # row 2 three times
            [0.0, 0.0],  # row 3 never
        ]
    )
    np.testing.assert_array_equal(layer.grads["W"], expected)
    # the classic mistake (last write wins) gives a different answer
    wrong = np.zeros((4, 2))
    wrong[X] = G
    assert not np.array_equal(wrong, expected)
    # and the tape agrees exactly
    twin = ap.layers.Embedding(4, 2, rng=0)
    _, _, dp = tape_grads(twin, [X], G)
    np.testing.assert_array_equal(dp["W"], expected)


def test_embedding_forward_is_row_lookup_and_grads_overwritten():
    layer = mp.Embedding(5, 3, rng=2)
    X = np.array([4, 0, 4])
    np.testing.assert_array_equal(layer(X), layer.params["W"][[4, 0, 4]])
    layer.backward(np.ones((3, 3)))
    layer.forward(np.array([1]))
    layer.backward(np.ones((1, 3)))
    assert layer.grads["W"].sum() == 3.0  # overwritten, not accumulated


def test_embedding_float32():
    layer = mp.Embedding(5, 3, rng=0, dtype=np.float32)
    Y = layer(np.array([1, 2]))
    assert Y.dtype == np.float32
    layer.backward(np.ones((2, 3)))  # float64 dY is cast
    assert layer.grads["W"].dtype == np.float32


def test_embedding_bad_inputs_name_layer_and_tensor():
    layer = mp.Embedding(5, 3, rng=0)
    where = r"Embedding\(num_embeddings=5, dim=3\)\.forward: X"
    with pytest.raises(TypeError, match=where + r" must be an array of integer indices; got dtype float64 \(convert"):
        layer.forward(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=where + r" must be an array of integer indices; got dtype bool"):
        layer.forward(np.array([True, False]))
    with pytest.raises(ValueError, match=where + r" must contain indices in \[0, 5\); got 1 out-of-range value\(s\), the first at index \(1,\) \(value 5\)"):
        layer.forward(np.array([0, 5, 1]))
    with pytest.raises(ValueError, match=where + r" must contain indices in \[0, 5\).*value -1"):
        layer.forward(np.array([[0], [-1]]))
    with pytest.raises(RuntimeError, match=r"Embedding\(num_embeddings=5, dim=3\)\.backward: must be called after forward"):
        layer.backward(np.ones((1, 3)))
    layer.forward(np.array([0, 1]))
    with pytest.raises(ValueError, match=r"\.backward: dY must have the shape of the forward output, \(2, 3\); got \(3, 2\)"):
        layer.backward(np.ones((3, 2)))
    with pytest.raises(TypeError, match=r"Embedding: num_embeddings must be a positive int"):
        mp.Embedding(2.5, 3)
    twin = ap.layers.Embedding(5, 3, rng=0)
    with pytest.raises(TypeError, match=r"autoprop\.layers\.Embedding\(num_embeddings=5, dim=3\)\.__call__: x must be an array of integer indices"):
        twin(np.array([0.0]))
    with pytest.raises(ValueError, match=r"autoprop\.layers\.Embedding\(.*\)\.__call__: x must contain indices in \[0, 5\)"):
        twin(np.array([7]))


# ---------------------------------------------------------------- RNN / LSTM: autograd oracles


def _ag_sigmoid(a):
    return 1.0 / (1.0 + anp.exp(-a))


def ag_rnn(X, h0, W_ih, W_hh, b_ih, b_hh):
    h, hs = h0, []
    for t in range(X.shape[1]):
        h = anp.tanh(anp.dot(X[:, t], W_ih.T) + b_ih + anp.dot(h, W_hh.T) + b_hh)
        hs.append(h)
    return anp.stack(hs, axis=1)


def ag_lstm(X, h0, c0, W_ih, W_hh, b_ih, b_hh):
    H = h0.shape[1]
    h, c, hs = h0, c0, []
    for t in range(X.shape[1]):
        a = anp.dot(X[:, t], W_ih.T) + b_ih + anp.dot(h, W_hh.T) + b_hh
        i, f = _ag_sigmoid(a[:, :H]), _ag_sigmoid(a[:, H : 2 * H])
        g, o = anp.tanh(a[:, 2 * H : 3 * H]), _ag_sigmoid(a[:, 3 * H :])
        c = f * c + i * g
        h = o * anp.tanh(c)
        hs.append(h)
    return anp.stack(hs, axis=1)


def ag_gru(X, h0, W_ih, W_hh, b_ih, b_hh):
    """PyTorch's nn.GRU written from its documentation (r, z, n; r multiplies W_hn h + b_hn)."""
    H = h0.shape[1]
    h, hs = h0, []
    for t in range(X.shape[1]):
        ax = anp.dot(X[:, t], W_ih.T) + b_ih
        ah = anp.dot(h, W_hh.T) + b_hh
        r = _ag_sigmoid(ax[:, :H] + ah[:, :H])
        z = _ag_sigmoid(ax[:, H : 2 * H] + ah[:, H : 2 * H])
        n = anp.tanh(ax[:, 2 * H :] + r * ah[:, 2 * H :])
        h = (1 - z) * n + z * h
        hs.append(h)
    return anp.stack(hs, axis=1)


PARAM_KEYS = ["W_ih", "W_hh", "b_ih", "b_hh"]
GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_recurrent_same_init_and_distribution(cls):
    M, A = getattr(mp, cls), getattr(ap.layers, cls)
    assert_same_init(lambda r: M(3, 4, rng=r), lambda r: A(3, 4, rng=r))
    gates = GATES[cls]
    layer = M(3, 25, rng=0)
    assert list(layer.params) == PARAM_KEYS
    shapes = [(gates * 25, 3), (gates * 25, 25), (gates * 25,), (gates * 25,)]
    assert [layer.params[k].shape for k in PARAM_KEYS] == shapes
    k = 1 / np.sqrt(25)  # U(-1/sqrt(H), 1/sqrt(H)) for every tensor, as PyTorch
    allw = np.concatenate([v.ravel() for v in layer.params.values()])
    assert allw.min() >= -k and allw.max() <= k and allw.max() - allw.min() > 1.8 * k
    # documented draw order: W_ih, W_hh, b_ih, b_hh from one generator
    gen = np.random.default_rng(0)
    for key, s in zip(PARAM_KEYS, shapes, strict=True):
        np.testing.assert_array_equal(layer.params[key], gen.uniform(-k, k, size=s))


@pytest.mark.parametrize("with_h0", [False, True])
def test_rnn_three_way_and_autograd(with_h0):
    rng = np.random.default_rng(20)
    N, T, D, H = 3, 5, 4, 3
    layer, twin = mp.RNN(D, H, rng=2), ap.layers.RNN(D, H, rng=2)
    X = rng.normal(size=(N, T, D))
    h0 = rng.normal(size=(N, H)) if with_h0 else None
    G = rng.normal(size=(N, T, H))
    kw = {"h0": h0} if with_h0 else {}
    (dX,), dp = three_way(layer, twin, [X], G, **kw)
    h0v = h0 if with_h0 else np.zeros((N, H))
    args = [X, h0v] + [layer.params[k] for k in PARAM_KEYS]
    ag = oracle(ag_rnn, args, G)
    np.testing.assert_allclose(dX, ag[0], rtol=RTOL_TWIN, atol=ATOL_TWIN)
    np.testing.assert_allclose(layer.dh0, ag[1], rtol=RTOL_TWIN, atol=ATOL_TWIN)
    for k, a in zip(PARAM_KEYS, ag[2:], strict=True):
        np.testing.assert_allclose(dp[k], a, rtol=RTOL_TWIN, atol=ATOL_TWIN)


@pytest.mark.parametrize("with_state", [False, True])
def test_lstm_three_way_and_autograd(with_state):
    rng = np.random.default_rng(21)
    N, T, D, H = 2, 5, 3, 4
    layer, twin = mp.LSTM(D, H, rng=3), ap.layers.LSTM(D, H, rng=3)
    for v in layer.params.values():  # larger weights: saturating gates are exercised too
        v *= 3.0
    X = rng.normal(size=(N, T, D))
    h0, c0 = rng.normal(size=(N, H)), rng.normal(size=(N, H))
    G = rng.normal(size=(N, T, H))
    kw = {"h0": h0, "c0": c0} if with_state else {}
    (dX,), dp = three_way(layer, twin, [X], G, **kw)
    if not with_state:
        h0, c0 = np.zeros((N, H)), np.zeros((N, H))
    args = [X, h0, c0] + [layer.params[k] for k in PARAM_KEYS]
    ag = oracle(ag_lstm, args, G)
    np.testing.assert_allclose(dX, ag[0], rtol=RTOL_TWIN, atol=ATOL_TWIN)
    np.testing.assert_allclose(layer.dh0, ag[1], rtol=RTOL_TWIN, atol=ATOL_TWIN)
    np.testing.assert_allclose(layer.dc0, ag[2], rtol=RTOL_TWIN, atol=ATOL_TWIN)
    for k, a in zip(PARAM_KEYS, ag[3:], strict=True):
        np.testing.assert_allclose(dp[k], a, rtol=RTOL_TWIN, atol=ATOL_TWIN)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_initial_state_gradients_vs_finite_differences_and_tape(cls):
    rng = np.random.default_rng(22)
    N, T, D, H = 2, 4, 3, 2
    layer, twin = getattr(mp, cls)(D, H, rng=4), getattr(ap.layers, cls)(D, H, rng=4)
    X = rng.normal(size=(N, T, D))
    G = rng.normal(size=(N, T, H))
    names = ["h0", "c0"] if cls == "LSTM" else ["h0"]
    state = {n: rng.normal(size=(N, H)) for n in names}
    layer.forward(X, **state)
    layer.backward(G)
    from gradcheck.numerical import numerical_gradient

    st_vars = {n: ap.Variable(v) for n, v in state.items()}
    with ap.GradientTape() as tape:
        y = twin(ap.constant(X), **st_vars)
    tape_g = tape.gradient(y, st_vars, output_gradients=G)
    for n in names:
        s = state[n]
        num = numerical_gradient(lambda: float(np.sum(layer.forward(X, **state) * G)), s)
        manual = getattr(layer, "d" + n)
        np.testing.assert_allclose(manual, num, rtol=RTOL_FD, atol=1e-8)
        np.testing.assert_allclose(manual, tape_g[n].numpy(), rtol=RTOL_TWIN, atol=ATOL_TWIN)


@pytest.mark.parametrize("with_h0", [False, True])
def test_gru_three_way_and_autograd(with_h0):
    rng = np.random.default_rng(27)
    N, T, D, H = 2, 6, 3, 4
    layer, twin = mp.GRU(D, H, rng=5), ap.layers.GRU(D, H, rng=5)
    for v in layer.params.values():  # larger weights: saturating gates are exercised too
        v *= 3.0
    X = rng.normal(size=(N, T, D))
    h0 = rng.normal(size=(N, H)) if with_h0 else None
    G = rng.normal(size=(N, T, H))
    kw = {"h0": h0} if with_h0 else {}
    (dX,), dp = three_way(layer, twin, [X], G, **kw)
    h0v = h0 if with_h0 else np.zeros((N, H))
    args = [X, h0v] + [layer.params[k] for k in PARAM_KEYS]
    ag = oracle(ag_gru, args, G)
    np.testing.assert_allclose(dX, ag[0], rtol=RTOL_TWIN, atol=ATOL_TWIN)
    np.testing.assert_allclose(layer.dh0, ag[1], rtol=RTOL_TWIN, atol=ATOL_TWIN)
    for k, a in zip(PARAM_KEYS, ag[2:], strict=True):
        np.testing.assert_allclose(dp[k], a, rtol=RTOL_TWIN, atol=ATOL_TWIN)
    # the reset gate sits between W_hn h and its bias b_hn: the two biases' n blocks differ
    assert not np.allclose(dp["b_ih"][2 * H :], dp["b_hh"][2 * H :])
    np.testing.assert_allclose(dp["b_ih"][: 2 * H], dp["b_hh"][: 2 * H], rtol=1e-14)


def test_gru_gate_order_is_r_z_n_and_reset_after():
    """With W = 0, the gates are functions of the biases alone: PyTorch's r, z, n order,
    and r multiplies b_hn (reset after the hidden projection, as nn.GRU)."""
    H = 2
    layer = mp.GRU(1, H, rng=0)
    for v in layer.params.values():
        v[...] = 0.0
    layer.params["b_hh"][2 * H :] = 1.0          # b_hn
    h0 = np.full((1, H), 0.3)
    x = np.zeros((1, 1, 1))

    def run(br, bz, bn):
        layer.params["b_ih"][...] = np.repeat([br, bz, bn], H)
        return layer(x, h0=h0)[0, 0]

    np.testing.assert_allclose(run(-40, -40, 0.5), np.tanh(0.5), rtol=1e-12)   # r = 0, z = 0: h = n
    np.testing.assert_allclose(run(40, -40, 0.5), np.tanh(1.5), rtol=1e-12)    # r = 1: n sees b_hn
    np.testing.assert_allclose(run(40, 40, 0.5), 0.3, rtol=1e-12)              # z = 1: h = h0
    np.testing.assert_allclose(run(0, 0, 0.5), 0.5 * np.tanh(1.0) + 0.5 * 0.3, rtol=1e-12)


def test_rnn_forward_matches_the_recurrence():
    rng = np.random.default_rng(23)
    layer = mp.RNN(2, 3, rng=5)
    X, h0 = rng.normal(size=(4, 3, 2)), rng.normal(size=(4, 3))
    p = layer.params
    h, expected = h0, []
    for t in range(3):
        h = np.tanh(X[:, t] @ p["W_ih"].T + p["b_ih"] + h @ p["W_hh"].T + p["b_hh"])
        expected.append(h)
    np.testing.assert_allclose(layer(X, h0=h0), np.stack(expected, 1), rtol=1e-14)


def test_bptt_carries_the_hidden_gradient_across_steps():
    """Loss on the LAST output only: the first input still gets a gradient, through h."""
    rng = np.random.default_rng(24)
    layer = mp.RNN(2, 3, rng=6)
    X = rng.normal(size=(2, 4, 2))
    G = np.zeros((2, 4, 3))
    G[:, -1] = rng.normal(size=(2, 3))
    layer.forward(X)
    dX = layer.backward(G)
    assert np.abs(dX[:, 0]).min() > 0
    # the truncated (wrong) version that drops dh_next only sees the last step
    A = layer.cache["A"]  # the pre-activations: tanh' = 1 / cosh(a)^2 from the input
    da_last = G[:, -1] / np.cosh(A[:, -1]) ** 2
    wrong = np.zeros_like(X)
    wrong[:, -1] = da_last @ layer.params["W_ih"]
    assert not np.allclose(dX, wrong)
    np.testing.assert_allclose(dX[:, -1], wrong[:, -1], rtol=1e-14)


def test_lstm_gate_order_is_i_f_g_o():
    """With W = 0, the gates are functions of the biases alone: check PyTorch's order."""
    H = 2
    layer = mp.LSTM(1, H, rng=0)
    for v in layer.params.values():
        v[...] = 0.0
    b = np.array([-20.0, -20.0, 20.0, 20.0, 0.5, 0.5, 0.0, 0.0])  # i ~ 0, f ~ 1, g = tanh(.5), o = 1/2
    layer.params["b_ih"][...] = b
    Y = layer(np.zeros((1, 1, 1)), c0=np.full((1, H), 0.3))
    # c = f*c0 + i*g ~ 0.3 (f ~ 1, i ~ 0): h = o * tanh(0.3) with o = sigmoid(0) = 1/2
    np.testing.assert_allclose(Y[0, 0], 0.5 * np.tanh(0.3), rtol=1e-8)
    b[:] = [-20, -20, 20, 20, 0.5, 0.5, 20, 20]  # o ~ 1 and i ~ 0: h ~ tanh(0.3)
    layer.params["b_ih"][...] = b
    np.testing.assert_allclose(layer(np.zeros((1, 1, 1)), c0=np.full((1, H), 0.3))[0, 0], np.tanh(0.3), rtol=1e-8)
    b[:] = [20, 20, -20, -20, 0.5, 0.5, 20, 20]  # i ~ 1, f ~ 0: c = g = tanh(.5), h = tanh(tanh(.5))
    layer.params["b_ih"][...] = b
    np.testing.assert_allclose(layer(np.zeros((1, 1, 1)), c0=np.full((1, H), 0.3))[0, 0], np.tanh(np.tanh(0.5)), rtol=1e-8)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_recurrent_float32_kept(cls):
    rng = np.random.default_rng(25)
    layer = getattr(mp, cls)(3, 2, rng=0, dtype=np.float32)
    X = rng.normal(size=(2, 4, 3)).astype(np.float32)
    Y = layer(X)
    assert Y.dtype == np.float32
    assert layer.backward(rng.normal(size=Y.shape)).dtype == np.float32
    assert all(g.dtype == np.float32 for g in layer.grads.values())
    ref = getattr(mp, cls)(3, 2, rng=0)
    np.testing.assert_allclose(Y, ref(X.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_recurrent_long_sequence_is_finite():
    rng = np.random.default_rng(26)
    for cls in ("RNN", "LSTM", "GRU"):
        layer = getattr(mp, cls)(2, 3, rng=1)
        for v in layer.params.values():
            v *= 50.0  # saturating
        Y = layer(rng.normal(scale=10, size=(2, 60, 2)))
        dX = layer.backward(rng.normal(size=Y.shape))
        assert np.isfinite(Y).all() and np.isfinite(dX).all()


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_recurrent_bad_inputs_name_layer_and_tensor(cls):
    layer = getattr(mp, cls)(3, 4, rng=0)
    where = rf"{cls}\(input_size=3, hidden_size=4\)\.forward: "
    with pytest.raises(ValueError, match=where + r"X must have shape \(batch, time, 3\); got \(2, 3\)"):
        layer.forward(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=where + r"X must have shape \(batch, time, 3\); got \(2, 5, 4\)"):
        layer.forward(np.zeros((2, 5, 4)))
    with pytest.raises(TypeError, match=where + r"X must have dtype float64 \(the dtype of the parameters\); got int64"):
        layer.forward(np.zeros((2, 5, 3), dtype=np.int64))
    with pytest.raises(ValueError, match=where + r"h0 must have shape \(2, 4\); got \(3, 4\)"):
        layer.forward(np.zeros((2, 5, 3)), h0=np.zeros((3, 4)))
    with pytest.raises(ValueError, match=where + r"X must contain only finite values"):
        layer.forward(np.full((1, 2, 3), np.nan))
    with pytest.raises(ValueError, match=where + r"X must not be empty; got shape \(2, 0, 3\)"):
        layer.forward(np.zeros((2, 0, 3)))
    if cls == "LSTM":
        with pytest.raises(ValueError, match=where + r"c0 must have shape \(2, 4\); got \(2,\)"):
            layer.forward(np.zeros((2, 5, 3)), c0=np.zeros(2))
    with pytest.raises(RuntimeError, match=rf"{cls}\(.*\)\.backward: must be called after forward"):
        layer.backward(np.zeros((2, 5, 4)))
    layer.forward(np.zeros((2, 5, 3)))
    with pytest.raises(ValueError, match=rf"{cls}\(.*\)\.backward: dY must have the shape of the forward output, \(2, 5, 4\); got \(2, 4\)"):
        layer.backward(np.zeros((2, 4)))
    twin = getattr(ap.layers, cls)(3, 4, rng=0)
    with pytest.raises(ValueError, match=rf"autoprop\.layers\.{cls}\(input_size=3, hidden_size=4\)\.__call__: x must have shape \(batch, time, 3\)"):
        twin(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"__call__: h0 must have shape \(2, 4\)"):
        twin(np.zeros((2, 5, 3)), h0=np.zeros((4,)))


def test_numerical_helper_agrees_with_manual_on_tiny_rnn():
    """The helper pipeline itself: a sanity check on the smallest case (T = 1, H = 1)."""
    layer, twin = mp.RNN(1, 1, rng=0), ap.layers.RNN(1, 1, rng=0)
    X, G = np.array([[[0.7]]]), np.array([[[1.3]]])
    _, (dX,), dp = manual_grads(layer, [X], G)
    a = layer.cache["A"][0, 0, 0]
    (nX,), ndp = numerical_grads(layer, [X], G)
    np.testing.assert_allclose(dX[0, 0, 0], 1.3 / np.cosh(a) ** 2 * layer.params["W_ih"][0, 0], rtol=1e-14)
    np.testing.assert_allclose(dX, nX, rtol=RTOL_FD)
    _, (tX,), _ = tape_grads(twin, [X], G)
    np.testing.assert_allclose(dX, tX, rtol=RTOL_TWIN)


# ---------------------------------------------------------------- docs


@pytest.mark.parametrize("module", [manualprop.embedding, manualprop.recurrent])
def test_docstring_examples_run(module):
    res = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and res.attempted > 0


@pytest.mark.parametrize("name", ["30-embedding.md", "31-rnn-bptt.md", "32-lstm.md"])
def test_lesson_examples_run(name):
    path = LESSONS / name
    res = doctest.testfile(
        str(path), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    )
    assert res.failed == 0 and res.attempted > 0
