"""CS231n function pairs (``NAME_forward(x, w, ...) -> (out, cache)``, ``NAME_backward(dout, cache)``).

Loaded as ``gradcheck check layers.py::NAME`` loads them: through
:mod:`gradcheck._adapters` (every array argument an input, the other arguments
from :data:`INIT`), with one input shape per array argument in :data:`INPUTS`.
"""

import numpy as np

INPUT = [(8, 4), (4,), (4,)]
INPUTS = {"conv": [(2, 3, 5, 5), (4, 3, 3, 3), (4,)], "convflipdx": [(2, 3, 5, 5), (4, 3, 3, 3), (4,)],
          "convhalfflip": [(2, 3, 5, 5), (4, 3, 3, 3), (4,)],
          "affine": [(6, 4), (4, 4), (4,)], "affinedxw": [(6, 4), (4, 4), (4,)],
          "affineorder": [(6, 4), (4, 3), (3,)], "affinedxwwide": [(6, 4), (4, 3), (3,)],
          "affinenoreshape": [(4, 2, 3), (6, 5), (5,)], "leaky": [(6, 5)], "leakynoalpha": [(6, 5)],
          "rnn": [(3, 4, 2), (3, 3), (2, 3), (3, 3), (3,)], "rnnnodprev": [(3, 4, 2), (3, 3), (2, 3), (3, 3), (3,)]}
INIT = {"leaky": {"alpha": 0.1}, "leakynoalpha": {"alpha": 0.1},
        "batchnorm": {"bn_param": {"mode": "train"}}, "bnnaive": {"bn_param": {"mode": "train"}},
        "bnswap": {"bn_param": {"mode": "train"}},
        "bntestbatch": {"bn_param": {"mode": "test", "running_mean": [0.1, 0.2, 0.3, 0.4],
                                     "running_var": [1.0, 2.0, 3.0, 4.0]}},
        "bntest": {"bn_param": {"mode": "test", "running_mean": [0.1, 0.2, 0.3, 0.4],
                                "running_var": [1.0, 2.0, 3.0, 4.0]}},
        "conv": {"conv_param": {"stride": 1, "pad": 1}}, "convflipdx": {"conv_param": {"stride": 1, "pad": 1}},
        "convhalfflip": {"conv_param": {"stride": 1, "pad": 1}}}


def batchnorm_forward(x, gamma, beta, bn_param):
    eps = bn_param.get("eps", 1e-5)
    if bn_param["mode"] == "train":
        mu, var = x.mean(axis=0), x.var(axis=0)
    else:
        mu, var = bn_param.get("running_mean", 0.0), bn_param.get("running_var", 1.0)
    xhat = (x - mu) / np.sqrt(var + eps)
    return gamma * xhat + beta, (xhat, gamma, var, eps)


def batchnorm_backward(dout, cache):
    xhat, gamma, var, eps = cache
    dxhat = dout * gamma
    dx = (dxhat - dxhat.mean(axis=0) - xhat * (dxhat * xhat).mean(axis=0)) / np.sqrt(var + eps)
    return dx, (dout * xhat).sum(axis=0), dout.sum(axis=0)


bnnaive_forward = batchnorm_forward


def bnnaive_backward(dout, cache):
    xhat, gamma, var, eps = cache
    dx = dout * gamma / np.sqrt(var + eps)  # BUG: the paths through the mean and variance are missing
    return dx, (dout * xhat).sum(axis=0), dout.sum(axis=0)


def conv_forward_naive(x, w, b, conv_param):
    s, p = conv_param["stride"], conv_param["pad"]
    N, _, H, W = x.shape
    F, _, HH, WW = w.shape
    Ho, Wo = 1 + (H + 2 * p - HH) // s, 1 + (W + 2 * p - WW) // s
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    out = np.zeros((N, F, Ho, Wo))
    for n in range(N):
        for f in range(F):
            for i in range(Ho):
                for j in range(Wo):
                    out[n, f, i, j] = np.sum(xp[n, :, i * s:i * s + HH, j * s:j * s + WW] * w[f]) + b[f]
    return out, (x, w, b, conv_param)


def _conv_backward(dout, cache, kernel):
    x, w, b, conv_param = cache
    s, p = conv_param["stride"], conv_param["pad"]
    _, _, H, W = x.shape
    F, _, HH, WW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    for n in range(dout.shape[0]):
        for f in range(F):
            for i in range(dout.shape[2]):
                for j in range(dout.shape[3]):
                    dxp[n, :, i * s:i * s + HH, j * s:j * s + WW] += kernel(w[f]) * dout[n, f, i, j]
                    dw[f] += xp[n, :, i * s:i * s + HH, j * s:j * s + WW] * dout[n, f, i, j]
    return dxp[:, :, p:p + H, p:p + W], dw, dout.sum(axis=(0, 2, 3))


def conv_backward_naive(dout, cache):
    return _conv_backward(dout, cache, lambda k: k)


convflipdx_forward_naive = conv_forward_naive


def convflipdx_backward_naive(dout, cache):
    return _conv_backward(dout, cache, lambda k: k[:, ::-1, ::-1])  # BUG: the kernel flipped for dx


convhalfflip_forward_naive = conv_forward_naive


def convhalfflip_backward_naive(dout, cache):
    return _conv_backward(dout, cache, lambda k: k[:, ::-1, :])  # BUG: one spatial axis flipped (unnamed)


def affine_forward(x, w, b):
    return x.reshape(len(x), -1) @ w + b, (x, w, b)


def affine_backward(dout, cache):
    x, w, b = cache
    return (dout @ w.T).reshape(x.shape), x.reshape(len(x), -1).T @ dout, dout.sum(axis=0)


affinedxw_forward = affine_forward


def affinedxw_backward(dout, cache):
    x, w, b = cache
    return (dout @ w).reshape(x.shape), x.reshape(len(x), -1).T @ dout, dout.sum(axis=0)  # BUG: w where w.T is due


affineorder_forward = affine_forward


def affineorder_backward(dout, cache):
    x, w, b = cache
    return (dout @ w.T).reshape(x.shape), dout.sum(axis=0), x.reshape(len(x), -1).T @ dout  # BUG: (dx, db, dw)


affinedxwwide_forward = affine_forward


def affinedxwwide_backward(dout, cache):
    x, w, b = cache
    return (dout @ w).reshape(x.shape), x.reshape(len(x), -1).T @ dout, dout.sum(axis=0)  # BUG: w, w is (4, 3)


affinenoreshape_forward = affine_forward


def affinenoreshape_backward(dout, cache):
    x, w, b = cache
    return dout @ w.T, x.reshape(len(x), -1).T @ dout, dout.sum(axis=0)  # BUG: dx not reshaped to x's (4, 2, 3)


bnswap_forward = batchnorm_forward


def bnswap_backward(dout, cache):
    dx, dgamma, dbeta = batchnorm_backward(dout, cache)
    return dx, dbeta, dgamma  # BUG: dgamma and dbeta in the wrong order


def bntest_forward(x, gamma, beta, bn_param):
    """Test mode as CS231n's solution writes it: the running statistics normalise."""
    eps = bn_param.get("eps", 1e-5)
    if bn_param["mode"] == "train":
        mu, var = x.mean(axis=0), x.var(axis=0)
    else:
        mu, var = np.asarray(bn_param["running_mean"]), np.asarray(bn_param["running_var"])
    xhat = (x - mu) / np.sqrt(var + eps)
    return gamma * xhat + beta, (xhat, gamma, var, eps, bn_param["mode"])


def bntest_backward(dout, cache):
    xhat, gamma, var, eps, mode = cache
    dxhat = dout * gamma
    if mode == "train":
        dx = (dxhat - dxhat.mean(axis=0) - xhat * (dxhat * xhat).mean(axis=0)) / np.sqrt(var + eps)
    else:
        dx = dxhat / np.sqrt(var + eps)  # the statistics are constants in test mode
    return dx, (dout * xhat).sum(axis=0), dout.sum(axis=0)


def bntestbatch_forward(x, gamma, beta, bn_param):
    eps = bn_param.get("eps", 1e-5)
    mu, var = x.mean(axis=0), x.var(axis=0)  # BUG: the batch's statistics in test mode too
    xhat = (x - mu) / np.sqrt(var + eps)
    return gamma * xhat + beta, (xhat, gamma, var, eps, bn_param["mode"])


bntestbatch_backward = bntest_backward


def leaky_forward(x, alpha):
    return np.where(x > 0, x, alpha * x), (x, alpha)


def leaky_backward(dout, cache):
    x, alpha = cache
    return dout * np.where(x > 0, 1, alpha)


leakynoalpha_forward = leaky_forward


def leakynoalpha_backward(dout, cache):
    x, alpha = cache
    return dout * (x > 0)  # BUG: the negative slope alpha missing (tester15 L3)


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x @ Wx + prev_h @ Wh + b)
    return next_h, (x, prev_h, Wx, Wh, next_h)


def rnn_step_backward(dnext_h, cache):
    x, prev_h, Wx, Wh, next_h = cache
    dz = dnext_h * (1 - next_h**2)
    return dz @ Wx.T, dz @ Wh.T, x.T @ dz, prev_h.T @ dz, dz.sum(axis=0)


def rnn_forward(x, h0, Wx, Wh, b):
    h, prev, cache = np.zeros((x.shape[0], x.shape[1], h0.shape[1])), h0, []
    for t in range(x.shape[1]):
        prev, c = rnn_step_forward(x[:, t, :], prev, Wx, Wh, b)
        h[:, t, :] = prev
        cache.append(c)
    return h, cache


def rnn_backward(dh, cache):
    x0, _, Wx, Wh, _ = cache[0]
    N, T, D = dh.shape[0], dh.shape[1], x0.shape[1]
    dx, dprev = np.zeros((N, T, D)), np.zeros((N, Wh.shape[0]))
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[0])
    for t in reversed(range(T)):
        dx[:, t, :], dprev, dWxt, dWht, dbt = rnn_step_backward(dh[:, t, :] + dprev, cache[t])
        dWx, dWh, db = dWx + dWxt, dWh + dWht, db + dbt
    return dx, dprev, dWx, dWh, db


rnnnodprev_forward = rnn_forward


def rnnnodprev_backward(dh, cache):
    x0, _, Wx, Wh, _ = cache[0]
    N, T, D = dh.shape[0], dh.shape[1], x0.shape[1]
    dx, dprev = np.zeros((N, T, D)), np.zeros((N, Wh.shape[0]))
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[0])
    for t in reversed(range(T)):
        dx[:, t, :], dprev, dWxt, dWht, dbt = rnn_step_backward(dh[:, t, :], cache[t])  # BUG: + dprev missing
        dWx, dWh, db = dWx + dWxt, dWh + dWht, db + dbt
    return dx, dprev, dWx, dWh, db
