"""Session 24 (session 23's leftovers, "no known bug pattern" before): CS231n's ``rnn_layers.py`` pairs (assignment 3,
kantarcise/cs231n commit 2091513, as tester23s ran them) with one planted bug each, and numpy-ml's dense layer with a
tanh whose backward forgets the activation's derivative (tester23s's ``FullyConnectedTanh_bug_noact``).

* ``rnnoffbyone``: the loop back over the steps is ``reversed(range(1, T))``: step 0 skipped.
* ``rnnwlast``: ``dWx, dWh, db = `` (not ``+=``) in the loop: the last-processed step's (step 0's) alone.
* ``lstmnodc``: each step's backward given ``dnext_c = 0``: the cell state's gradient never carried back.
* ``NmDenseTanhNoAct``: numpy-ml's ``FullyConnected(act_fn="Tanh")`` whose ``_bwd`` takes ``dZ = dLdy``.
"""

import numpy as np

INPUT = (6, 4)
INPUTS = {n: [(2, 3, 4), (2, 5), (4, 5), (5, 5), (5,)] for n in ("rnn", "rnnoffbyone", "rnnwlast")}
INPUTS |= {n: [(2, 3, 4), (2, 5), (4, 20), (5, 20), (20,)] for n in ("lstm", "lstmnodc")}


# ---- CS231n's rnn_layers.py (the public functions, docstrings dropped)
def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x.dot(Wx) + prev_h.dot(Wh) + b)
    return next_h, (x, prev_h, Wx, Wh, next_h)


def rnn_step_backward(dnext_h, cache):
    x, prev_h, Wx, Wh, next_h = cache
    da = dnext_h * (1 - next_h**2)
    return da.dot(Wx.T), da.dot(Wh.T), x.T.dot(da), prev_h.T.dot(da), da.sum(axis=0)


def rnn_forward(x, h0, Wx, Wh, b):
    N, T, _ = x.shape
    h, step_caches, prev_h = np.empty((N, T, h0.shape[1]), dtype=x.dtype), [], h0
    for t in range(T):
        prev_h, step_cache = rnn_step_forward(x[:, t], prev_h, Wx, Wh, b)
        h[:, t] = prev_h
        step_caches.append(step_cache)
    return h, (step_caches, x.shape)


def rnn_backward(dh, cache):
    step_caches, x_shape = cache
    N, T, H = dh.shape
    D = x_shape[2]
    dx, dWx, dWh, db = np.zeros((N, T, D)), np.zeros((D, H)), np.zeros((H, H)), np.zeros(H)
    dprev_h = np.zeros((N, H))
    for t in reversed(range(T)):
        dx_t, dprev_h, dWx_t, dWh_t, db_t = rnn_step_backward(dh[:, t] + dprev_h, step_caches[t])
        dx[:, t] = dx_t
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    return dx, dprev_h, dWx, dWh, db


rnnoffbyone_forward = rnn_forward


def rnnoffbyone_backward(dh, cache):
    step_caches, x_shape = cache
    N, T, H = dh.shape
    D = x_shape[2]
    dx, dWx, dWh, db = np.zeros((N, T, D)), np.zeros((D, H)), np.zeros((H, H)), np.zeros(H)
    dprev_h = np.zeros((N, H))
    for t in reversed(range(1, T)):  # BUG: off by one, step 0 skipped
        dx_t, dprev_h, dWx_t, dWh_t, db_t = rnn_step_backward(dh[:, t] + dprev_h, step_caches[t])
        dx[:, t] = dx_t
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    return dx, dprev_h, dWx, dWh, db


rnnwlast_forward = rnn_forward


def rnnwlast_backward(dh, cache):
    step_caches, x_shape = cache
    N, T, H = dh.shape
    dx, dprev_h = np.zeros((N, T, x_shape[2])), np.zeros((N, H))
    for t in reversed(range(T)):
        dx_t, dprev_h, dWx, dWh, db = rnn_step_backward(dh[:, t] + dprev_h, step_caches[t])  # BUG: = not +=
        dx[:, t] = dx_t
    return dx, dprev_h, dWx, dWh, db


def sigmoid(x):
    pos_mask, neg_mask = x >= 0, x < 0
    z = np.zeros_like(x)
    z[pos_mask] = np.exp(-x[pos_mask])
    z[neg_mask] = np.exp(x[neg_mask])
    top = np.ones_like(x)
    top[neg_mask] = z[neg_mask]
    return top / (1 + z)


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    H = prev_h.shape[1]
    a = x.dot(Wx) + prev_h.dot(Wh) + b
    i, f, o = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H]), sigmoid(a[:, 2 * H:3 * H])
    g = np.tanh(a[:, 3 * H:])
    next_c = f * prev_c + i * g
    next_h = o * np.tanh(next_c)
    return next_h, next_c, (x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c)


def lstm_step_backward(dnext_h, dnext_c, cache):
    x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c = cache
    tanh_c = np.tanh(next_c)
    dcell = dnext_c + dnext_h * o * (1 - tanh_c**2)
    di, df, do, dg = dcell * g, dcell * prev_c, dnext_h * tanh_c, dcell * i
    dprev_c = dcell * f
    da = np.hstack((di * i * (1 - i), df * f * (1 - f), do * o * (1 - o), dg * (1 - g**2)))
    return da.dot(Wx.T), da.dot(Wh.T), dprev_c, x.T.dot(da), prev_h.T.dot(da), da.sum(axis=0)


def lstm_forward(x, h0, Wx, Wh, b):
    N, T, _ = x.shape
    h, step_caches = np.empty((N, T, h0.shape[1]), dtype=x.dtype), []
    prev_h, prev_c = h0, np.zeros_like(h0)
    for t in range(T):
        prev_h, prev_c, step_cache = lstm_step_forward(x[:, t], prev_h, prev_c, Wx, Wh, b)
        h[:, t] = prev_h
        step_caches.append(step_cache)
    return h, (step_caches, x.shape)


def lstm_backward(dh, cache):
    step_caches, x_shape = cache
    N, T, H = dh.shape
    D = x_shape[2]
    dx, dWx, dWh, db = np.zeros((N, T, D)), np.zeros((D, 4 * H)), np.zeros((H, 4 * H)), np.zeros(4 * H)
    dprev_h, dprev_c = np.zeros((N, H)), np.zeros((N, H))
    for t in reversed(range(T)):
        dx_t, dprev_h, dprev_c, dWx_t, dWh_t, db_t = lstm_step_backward(dh[:, t] + dprev_h, dprev_c, step_caches[t])
        dx[:, t] = dx_t
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    return dx, dprev_h, dWx, dWh, db


lstmnodc_forward = lstm_forward


def lstmnodc_backward(dh, cache):
    step_caches, x_shape = cache
    N, T, H = dh.shape
    D = x_shape[2]
    dx, dWx, dWh, db = np.zeros((N, T, D)), np.zeros((D, 4 * H)), np.zeros((H, 4 * H)), np.zeros(4 * H)
    dprev_h = np.zeros((N, H))
    for t in reversed(range(T)):
        dx_t, dprev_h, _, dWx_t, dWh_t, db_t = lstm_step_backward(
            dh[:, t] + dprev_h, np.zeros((N, H)), step_caches[t])  # BUG: the cell's gradient not carried back
        dx[:, t] = dx_t
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    return dx, dprev_h, dWx, dWh, db


# ---- numpy-ml's FullyConnected (ddbourgin/numpy-ml, neural_nets/layers/layers.py) with act_fn="Tanh", as tester23s's
# one-shot adapter ran it: parameters/gradients dicts, W (n_in, n_out) and b (1, n_out) zero, glorot-uniform W
class NmDenseTanh:
    INPUT, ADAPT = (6, 4), True

    def __init__(self, n_in=4, n_out=3):
        limit = np.sqrt(6 / (n_in + n_out))
        self.parameters = {"W": np.random.default_rng(0).uniform(-limit, limit, (n_in, n_out)),
                           "b": np.zeros((1, n_out))}
        self.gradients = {k: np.zeros_like(v) for k, v in self.parameters.items()}
        self.X = []

    def forward(self, X):
        self.X = [X]
        return np.tanh(X @ self.parameters["W"] + self.parameters["b"])

    def backward(self, dLdy):
        dX, dW, dB = self._bwd(dLdy, self.X[0])
        self.gradients["W"], self.gradients["b"] = dW, dB
        return dX

    def _bwd(self, dLdy, X):
        W = self.parameters["W"]
        dZ = dLdy * (1 - np.tanh(X @ W + self.parameters["b"]) ** 2)
        return dZ @ W.T, X.T @ dZ, dZ.sum(axis=0, keepdims=True)


class NmDenseTanhNoAct(NmDenseTanh):
    def _bwd(self, dLdy, X):
        W = self.parameters["W"]
        dZ = dLdy  # BUG: forgot the activation's derivative
        return dZ @ W.T, X.T @ dZ, dZ.sum(axis=0, keepdims=True)
