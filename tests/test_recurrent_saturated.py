"""Issue 12 §4 for the recurrent layers: tanh' and sigmoid' from the pre-activations.

``1 - h**2`` and ``s * (1 - s)`` cancel to 0 once a hidden state or a gate rounds to
+-1 (``tanh'(20)`` is 1.70e-17, ``s'(40)`` is 4.25e-18; float32 ``tanh'(-9)`` comes out
2x too large). manualprop's RNN, LSTM and GRU take both derivatives from cached
pre-activations; autoprop's twins record ``tanh``/``sigmoid`` primitives whose VJPs read
the input. Oracle: the same cells written in HIPS autograd (its ``tanh`` VJP is
``g / cosh(x)**2``; the sigmoid is written ``1 / (1 + exp(-a))``, whose chain rule
``e / (1 + e)**2`` does not cancel), on inputs where every gradient term has one sign,
so that the sums keep full relative precision too.
"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import autoprop as ap
import manualprop as mp
from tests.zoo_seq_helpers import copy_params, manual_grads, tape_grads

NAMES = ("W_ih", "W_hh", "b_ih", "b_hh")


def _sig(a):
    return 1.0 / (1.0 + anp.exp(-a))


def _sech2(a):  # independent of both packages: 4e / (1 + e)^2 with e = exp(-2|a|)
    e = np.exp(-2 * np.abs(np.asarray(a, np.float64)))
    return 4 * e / (1 + e) ** 2


def _rnn(p, X, h):
    ys = []
    for t in range(X.shape[1]):
        h = anp.tanh(X[:, t] @ p["W_ih"].T + p["b_ih"] + h @ p["W_hh"].T + p["b_hh"])
        ys.append(h)
    return anp.stack(ys, axis=1)


def _lstm(p, X, h, c):
    H = h.shape[1]
    ys = []
    for t in range(X.shape[1]):
        a = X[:, t] @ p["W_ih"].T + p["b_ih"] + h @ p["W_hh"].T + p["b_hh"]
        i, f = _sig(a[:, :H]), _sig(a[:, H : 2 * H])
        g, o = anp.tanh(a[:, 2 * H : 3 * H]), _sig(a[:, 3 * H :])
        c = f * c + i * g
        h = o * anp.tanh(c)
        ys.append(h)
    return anp.stack(ys, axis=1)


def _gru(p, X, h):
    H = h.shape[1]
    ys = []
    for t in range(X.shape[1]):
        ax = X[:, t] @ p["W_ih"].T + p["b_ih"]
        ah = h @ p["W_hh"].T + p["b_hh"]
        r = _sig(ax[:, :H] + ah[:, :H])
        z = _sig(ax[:, H : 2 * H] + ah[:, H : 2 * H])
        n = anp.tanh(ax[:, 2 * H :] + r * ah[:, 2 * H :])
        h = (1 - z) * n + z * h
        ys.append(h)
    return anp.stack(ys, axis=1)


# Saturating configurations, one unit (H = D = 1), two steps, all weights positive:
# pre-activations 20 ... 48, every gate and hidden state rounds to 1 in float64.
CASES = {
    "RNN": (_rnn, {"W_ih": [[20.0]], "W_hh": [[0.5]], "b_ih": [0.0], "b_hh": [0.0]}),
    "LSTM": (_lstm, {"W_ih": [[40.0], [30.0], [20.0], [35.0]],
                     "W_hh": [[0.1], [0.2], [0.3], [0.4]], "b_ih": [0.0] * 4, "b_hh": [0.0] * 4}),
    "GRU": (_gru, {"W_ih": [[40.0], [30.0], [20.0]], "W_hh": [[0.1], [0.2], [0.3]],
                   "b_ih": [0.0] * 3, "b_hh": [0.0, 0.0, 0.5]}),
}
X = np.array([[[1.0], [1.2]]])
G = np.array([[[1.0], [0.7]]])
STATES = {"h0": np.array([[0.1]]), "c0": np.array([[0.2]])}


def _oracle(name):
    """Autograd's gradients of sum(Y * G) wrt the parameters, X and the initial states."""
    cell, params = CASES[name]
    p = {k: np.array(v) for k, v in params.items()}
    states = [STATES["h0"]] + ([STATES["c0"]] if name == "LSTM" else [])
    n = 2 + len(states)

    def loss(p, X, *states):
        return anp.sum(cell(p, X, *states) * G)

    grads = autograd.grad(loss, argnum=tuple(range(n)))(p, X, *states)
    return p, grads[0], grads[1], grads[2:]


def _layers(name, p, dtype=np.float64):
    layer = getattr(mp, name)(1, 1, rng=0, dtype=dtype)
    for k in NAMES:
        layer.params[k][...] = p[k]
    twin = getattr(ap.layers, name)(1, 1, rng=0, dtype=dtype)
    copy_params(layer, twin)
    return layer, twin


def _old_rule_is_wrong(A, gates):
    """The output-based derivatives at these pre-activations: exactly 0 or far off."""
    s = 1 / (1 + np.exp(-A))
    rules = [(1 - np.tanh(A) ** 2, _sech2(A))] + [(s * (1 - s), np.exp(-A) * s * s)] * gates
    for old, exact in rules:
        assert (np.abs(old - exact) > 1e-4 * exact).any()


@pytest.mark.parametrize("name", list(CASES))
def test_saturated_recurrent_gradients_match_autograd_to_full_precision(name):
    p, dP, dX_ref, dstates_ref = _oracle(name)
    layer, twin = _layers(name, p)
    kw = {k: STATES[k] for k in (("h0", "c0") if name == "LSTM" else ("h0",))}
    _, (dX,), dp = manual_grads(layer, [X], G, **kw)
    _old_rule_is_wrong(layer.cache["A"], gates=name != "RNN")
    manual_states = [layer.dh0] + ([layer.dc0] if name == "LSTM" else [])
    _, (tX,), tp = tape_grads(twin, [X], G, **kw)
    for got_X, got_p in ((dX, dp), (tX, tp)):
        np.testing.assert_allclose(got_X, dX_ref, rtol=1e-13, atol=0)
        for k in NAMES:
            assert (dP[k] != 0).all()  # every entry is compared relatively
            np.testing.assert_allclose(got_p[k], dP[k], rtol=1e-13, atol=0, err_msg=k)
    for got, want in zip(manual_states, dstates_ref, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def test_rnn_derivative_at_20_and_lstm_gate_at_40_are_the_issues_numbers():
    # RNN, one step, a = 20: dX = tanh'(20) = 1.70e-17 (1 - h^2 gives 0)
    layer = mp.RNN(1, 1, rng=0)
    for k, v in {"W_ih": 1.0, "W_hh": 0.0, "b_ih": 0.0, "b_hh": 0.0}.items():
        layer.params[k][...] = v
    layer.forward(np.array([[[20.0]]]))
    assert np.tanh(20.0) == 1.0  # the output has rounded: 1 - h^2 would be 0
    dX = layer.backward(np.ones((1, 1, 1)))[0, 0, 0]
    assert dX == pytest.approx(1.70e-17, rel=5e-3, abs=0)
    assert dX == pytest.approx(_sech2(20.0), rel=1e-14, abs=0)
    assert layer.grads["W_ih"][0, 0] == pytest.approx(20 * _sech2(20.0), rel=1e-14, abs=0)
    # LSTM, one step, every gate's pre-activation 40 (x = 1, W_ih = 40, zero states):
    # c = i g, h = o tanh(c); dh/da^o = tanh(c) s'(40) = tanh(c) 4.25e-18 (o (1 - o) = 0)
    lstm = mp.LSTM(1, 1, rng=0)
    for k in NAMES:
        lstm.params[k][...] = 0.0
    lstm.params["W_ih"][...] = 40.0
    lstm.forward(np.ones((1, 1, 1)))
    lstm.backward(np.ones((1, 1, 1)))
    s40 = np.exp(-40.0) / (1 + np.exp(-40.0)) ** 2
    assert s40 == pytest.approx(4.25e-18, rel=5e-3, abs=0)
    c = np.tanh(40.0)  # i = 1, g = tanh(40)
    d_ao = lstm.grads["b_ih"][3]  # b_ih's o entry: dL/da^o
    assert d_ao == pytest.approx(np.tanh(c) * s40, rel=1e-14, abs=0)
    d_ai = lstm.grads["b_ih"][0]  # dL/da^i = o tanh'(c) g s'(40)
    assert d_ai == pytest.approx(1.0 * _sech2(c) * np.tanh(40.0) * s40, rel=1e-14, abs=0)


@pytest.mark.parametrize("name", list(CASES))
def test_float32_tanh_near_minus_9_is_not_twice_too_large(name):
    # the tanh pre-activation (h for RNN, g for LSTM, n for GRU) is exactly -9 in float32;
    # 1 - tanh(-9)^2 rounds to 2x the true 6.09e-8 there
    x32 = np.float32(-9.0)
    assert float(1 - np.tanh(x32) ** 2) / _sech2(-9.0) > 1.9
    rows = {"RNN": 1, "LSTM": 4, "GRU": 3}[name]  # gates x hidden_size (1)
    p = {"W_ih": np.zeros((rows, 1)), "W_hh": np.zeros((rows, 1)),
         "b_ih": np.zeros(rows), "b_hh": np.zeros(rows)}
    p["W_ih"][-1 if name == "GRU" else 2 if name == "LSTM" else 0] = -9.0
    if name == "LSTM":
        p["b_ih"][:2] = 40.0  # i = f = 1; o = 1/2: h = tanh(g) / 2, g = tanh(-9)
    if name == "GRU":
        p["b_ih"][:2] = 40.0, -40.0  # r = 1, z = 0: h = n = tanh(-9)
    p32 = {k: v.astype(np.float32) for k, v in p.items()}
    layer, twin = _layers(name, p32, np.float32)
    X32 = np.ones((1, 1, 1), np.float32)
    G32 = np.ones((1, 1, 1), np.float32)
    _, (dX,), _ = manual_grads(layer, [X32], G32)
    _, (tX,), _ = tape_grads(twin, [X32], G32)
    cell = CASES[name][0]
    states = [np.zeros((1, 1))] * (2 if name == "LSTM" else 1)
    ref = autograd.grad(lambda X: anp.sum(cell(p, X, *states)))(np.ones((1, 1, 1)))
    if name == "RNN":
        assert ref[0, 0, 0] == pytest.approx(-9 * 6.0919e-8, rel=1e-4, abs=0)
    for got in (dX, tX):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref, rtol=1e-5)
