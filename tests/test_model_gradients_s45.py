"""students45 F1, F3: a model whose method returns its weights' gradients for data and labels, as two courses write
it: Deep Learning from Scratch vol. 1's ``loss(x, t)`` and ``gradient(x, t)`` (its ``TwoLayerNet``: a dict keyed as
``params``), CS231n assignment 2's ``loss(X, y=None) -> (loss, grads)``. The first was read as ML-From-Scratch's loss
``loss(y, y_pred)``, and the ``--loss`` command printed for it failed (exit 3, the right model's forward blamed); the
second got a wrapper template of forward and backward methods it has not. Both now get a usage error naming the model
and lines to add whose printed command runs: the right model PASSes, a planted bug FAILs."""

import re

import pytest
from test_cli import both, run_here, student

DLFS = """
import numpy as np

def softmax(x):
    x = x - np.max(x, axis=-1, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)

class TwoLayerNet:
    def __init__(self, input_size, hidden_size, output_size, weight_init_std=0.5):
        rng = np.random.default_rng(1)
        self.params = {'W1': weight_init_std * rng.standard_normal((input_size, hidden_size)),
                       'b1': 0.1 * rng.standard_normal(hidden_size),
                       'W2': weight_init_std * rng.standard_normal((hidden_size, output_size)),
                       'b2': 0.1 * rng.standard_normal(output_size)}

    def predict(self, x):
        h = np.tanh(x @ self.params['W1'] + self.params['b1'])
        return h @ self.params['W2'] + self.params['b2']

    def loss(self, x, t):
        y = softmax(self.predict(x))
        return -np.sum(np.log(y[np.arange(len(t)), t])) / len(t)

    def gradient(self, x, t):
        h = np.tanh(x @ self.params['W1'] + self.params['b1'])
        dy = softmax(h @ self.params['W2'] + self.params['b2'])
        dy[np.arange(len(t)), t] -= 1
        dy /= len(t)
        dh = (dy @ self.params['W2'].T) * (1 - h ** 2)
        return {'W1': x.T @ dh, 'b1': dh.sum(0), 'W2': h.T @ dy, 'b2': BIAS}
"""
CS231N = """
import numpy as np

class TwoLayerNet:
    def __init__(self, input_dim=3 * 32 * 32, hidden_dim=100, num_classes=10, reg=0.0):
        rng = np.random.default_rng(1)
        self.reg = reg
        self.params = {"W1": 0.5 * rng.standard_normal((input_dim, hidden_dim)), "b1": np.zeros(hidden_dim),
                       "W2": 0.5 * rng.standard_normal((hidden_dim, num_classes)), "b2": np.zeros(num_classes)}

    def loss(self, X, y=None):
        W1, b1, W2, b2 = self.params["W1"], self.params["b1"], self.params["W2"], self.params["b2"]
        h = np.maximum(X @ W1 + b1, 0)
        scores = h @ W2 + b2
        if y is None:
            return scores
        p = np.exp(scores - scores.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        loss = -np.log(p[np.arange(len(y)), y]).mean() + 0.5 * self.reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
        ds = p.copy()
        ds[np.arange(len(y)), y] -= 1
        ds /= len(y)
        dh = (ds @ W2.T) * (h > 0)
        return loss, {"W1": X.T @ dh + self.reg * W1, "b1": dh.sum(0), "W2": h.T @ ds + self.reg * W2,
                      "b2": ds.sum(0)}
"""
DLFS_INIT = '{"input_size": 4, "hidden_size": 5, "output_size": 3}'
CS_INIT = '{"input_dim": 4, "hidden_dim": 5, "num_classes": 3, "reg": 0.3}'


def _recipe_run(tmp_path, source, init, name, *extra):
    """The usage error for ``source``'s TwoLayerNet, then its printed lines added to the file and its printed command
    run (N = 5, K = 3, the ``--init`` given): ``(usage error text, exit code, output)``."""
    f = student(tmp_path, source, name)
    p = run_here("check", f"{f}::TwoLayerNet", "--input-shape", "5,4", "--init", init, *extra)
    text = both(p)
    assert p.returncode == 2, text
    code = re.findall(r"`([^`]*)`", text)
    assert len(code) > 1 and code[-1].startswith(f"gradcheck check {name}::TwoLayerNetCheck --input-shape N "
                                                 "--indices K --init '{"), text
    f.write_text(f.read_text() + "\n" + "\n".join(code[:-1]) + "\n")
    q = run_here("check", f"{f}::TwoLayerNetCheck", "--input-shape", "5", "--indices", "3", "--init", init)
    return text, q.returncode, both(q)


@pytest.mark.parametrize(("bias", "code"), [("dy.sum(0)", 0), ("dy.mean(0)", 1)])
def test_dlfs_model_recipe_runs_as_printed(tmp_path, bias, code):
    text, got, out = _recipe_run(tmp_path, DLFS.replace("BIAS", bias), DLFS_INIT, "two_layer_net.py")
    assert "Deep Learning from Scratch's model" in text and "ML-From-Scratch" not in text, text
    assert got == code, out
    assert ("PASS: TwoLayerNetCheck: every gradient (dW1, db1, dW2, db2) matches" if code == 0 else
            "FAIL: TwoLayerNetCheck: gradient mismatch in db2.") in out, out


def test_dlfs_model_with_loss_flag_gets_the_same_usage_error(tmp_path):
    """The printed ``--loss`` command of F1, run, called loss(x=y_pred, t=y_true) and failed (exit 3)."""
    f = student(tmp_path, DLFS.replace("BIAS", "dy.sum(0)"), "two_layer_net.py")
    p = run_here("check", f"{f}::TwoLayerNet", "--loss", "--input-shape", "5,4", "--init", DLFS_INIT)
    text = both(p)
    assert p.returncode == 2 and "Deep Learning from Scratch's model" in text and "ML-From-Scratch" not in text, text


def test_cs231n_model_recipe_runs_as_printed(tmp_path):
    text, got, out = _recipe_run(tmp_path, CS231N, CS_INIT, "fc_net.py")
    assert "CS231n's model" in text and "self.node" not in text, text
    assert got == 0 and "PASS: TwoLayerNetCheck: every gradient (dW1, db1, dW2, db2) matches" in out, out


NG_RNN = """
import numpy as np

def rnn_forward(x, a0, Wax, Waa, ba):
    n_x, m, T_x = x.shape
    a, a_next = np.zeros((Waa.shape[0], m, T_x)), a0
    for t in range(T_x):
        a_next = np.tanh(Wax @ x[:, :, t] + Waa @ a_next + ba)
        a[:, :, t] = a_next
    return a, (x, a0, Wax, Waa, ba, a)

def rnn_backward(da, cache):
    x, a0, Wax, Waa, ba, a = cache
    dx, dWax, dWaa, dba = np.zeros_like(x), np.zeros_like(Wax), np.zeros_like(Waa), np.zeros_like(ba)
    da_prev = np.zeros_like(a0)
    for t in reversed(range(x.shape[2])):
        dtanh = (1 - a[:, :, t] ** 2) * (da[:, :, t] + da_prev)
        a_prev = a[:, :, t - 1] if t else a0
        dx[:, :, t] = Wax.T @ dtanh
        dWax += dtanh @ x[:, :, t].T
        dWaa += dtanh @ a_prev.T
        dba += BIAS
        da_prev = Waa.T @ dtanh
    return dx, da_prev, dWax, dWaa, dba
"""


def test_ng_rnn_bias_over_m_is_not_named_an_extra_1_over_t(tmp_path):
    """students45 F4: in Andrew Ng's layout, x (n_x, m, T_x) beside a0 (n_a, m), axis 1 of x is the batch m; a dba
    averaged over it was diagnosed "an extra 1/T (T = 4, the time steps on axis 1 of x (3, 4, 6))" with CS231n's fix,
    db = dout.sum(axis=(0, 1)). The right pair PASSes; the bug FAILs without that misreading."""
    shapes = ("--input-shape", "3,4,6;5,4;5,3;5,5;5,1")
    f = student(tmp_path, NG_RNN.replace("BIAS", "dtanh.sum(axis=1, keepdims=True)"), "rnn_ok.py")
    p = run_here("check", f"{f}::rnn", *shapes)
    assert p.returncode == 0, both(p)
    f = student(tmp_path, NG_RNN.replace("BIAS", "dtanh.mean(axis=1, keepdims=True)"), "rnn_bug.py")
    p = run_here("check", f"{f}::rnn", *shapes)
    text = both(p)
    assert p.returncode == 1 and "FAIL: rnn: gradient mismatch in dba." in text, text
    assert "1/T" not in text and "time steps on axis 1" not in text, text


TEMPORAL = """
import numpy as np

def temporal_softmax_loss(x, y, mask, verbose=False):
    N, T, V = x.shape
    x_flat, y_flat, mask_flat = x.reshape(N * T, V), y.reshape(N * T), mask.reshape(N * T)
    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat])) / N
    dx_flat = probs.copy()
    dx_flat[np.arange(N * T), y_flat] -= 1
    dx_flat /= N
    dx_flat *= mask_flat[:, None]
    return loss, dx_flat.reshape(N, T, V)
"""
