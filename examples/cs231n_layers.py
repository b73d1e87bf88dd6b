"""Layers written as CS231n function pairs: ``NAME_forward(...) -> (out, cache)`` and
``NAME_backward(dout, cache) -> gradients`` (one per array argument, in order).

Check them with (one ``--input-shape`` per array argument, other arguments in ``--init``)::

    gradcheck check examples/cs231n_layers.py::affine --input-shape '4,5;5,3;3'
    gradcheck check examples/cs231n_layers.py::relu --input-shape 4,5
    gradcheck check examples/cs231n_layers.py::conv --input-shape '2,3,5,6;4,3,3,3;4' \
        --init '{"conv_param": {"stride": 1, "pad": 1}}'
    gradcheck check examples/cs231n_layers.py::batchnorm --input-shape '6,4;4;4' \
        --init '{"bn_param": {"mode": "train"}}'

Shapes: affine x (N, D), w (D, M), b (M,); conv x (N, C, H, W), w (F, C, HH, WW), b (F,);
batchnorm x (N, D), gamma (D,), beta (D,).
"""

import numpy as np


def affine_forward(x, w, b):
    """out = x.reshape(N, D) @ w + b."""
    out = x.reshape(x.shape[0], -1) @ w + b
    return out, (x, w)


def affine_backward(dout, cache):
    x, w = cache
    dx = (dout @ w.T).reshape(x.shape)
    dw = x.reshape(x.shape[0], -1).T @ dout
    return dx, dw, dout.sum(axis=0)


def relu_forward(x):
    return np.maximum(x, 0), x


def relu_backward(dout, cache):
    return dout * (cache > 0)


def conv_forward_naive(x, w, b, conv_param):
    """Cross-correlation with zero padding, one output position at a time."""
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, _, H, W = x.shape
    F, _, HH, WW = w.shape
    Ho, Wo = 1 + (H + 2 * pad - HH) // stride, 1 + (W + 2 * pad - WW) // stride
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((N, F, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            patch = xp[:, :, i * stride:i * stride + HH, j * stride:j * stride + WW]  # (N, C, HH, WW)
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3])) + b
    return out, (x, w, conv_param)


def conv_backward_naive(dout, cache):
    x, w, conv_param = cache
    stride, pad = conv_param["stride"], conv_param["pad"]
    _, _, HH, WW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    for i in range(dout.shape[2]):
        for j in range(dout.shape[3]):
            sl = (slice(None), slice(None), slice(i * stride, i * stride + HH), slice(j * stride, j * stride + WW))
            g = dout[:, :, i, j]  # (N, F)
            dw += np.tensordot(g, xp[sl], axes=([0], [0]))  # (F, C, HH, WW)
            dxp[sl] += np.tensordot(g, w, axes=([1], [0]))  # (N, C, HH, WW)
    dx = dxp[:, :, pad:pad + x.shape[2], pad:pad + x.shape[3]]
    return dx, dw, dout.sum(axis=(0, 2, 3))


def batchnorm_forward(x, gamma, beta, bn_param):
    """Training mode: normalise with the batch's mean and variance; test mode: with the running ones."""
    eps, momentum = bn_param.get("eps", 1e-5), bn_param.get("momentum", 0.9)
    D = x.shape[1]
    running_mean = bn_param.get("running_mean", np.zeros(D))
    running_var = bn_param.get("running_var", np.ones(D))
    if bn_param["mode"] == "train":
        mu, var = x.mean(axis=0), x.var(axis=0)
        bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * mu
        bn_param["running_var"] = momentum * running_var + (1 - momentum) * var
    else:
        mu, var = running_mean, running_var
    inv = 1.0 / np.sqrt(var + eps)
    xhat = (x - mu) * inv
    return gamma * xhat + beta, (xhat, gamma, inv, bn_param["mode"])


def batchnorm_backward(dout, cache):
    """dx = inv/N * (N*dxhat - sum(dxhat) - xhat*sum(dxhat*xhat)) in training mode (the mean and
    variance depend on x); dx = dxhat * inv in test mode."""
    xhat, gamma, inv, mode = cache
    dgamma, dbeta = (dout * xhat).sum(axis=0), dout.sum(axis=0)
    dxhat = dout * gamma
    if mode != "train":
        return dxhat * inv, dgamma, dbeta
    N = dout.shape[0]
    dx = inv / N * (N * dxhat - dxhat.sum(axis=0) - xhat * (dxhat * xhat).sum(axis=0))
    return dx, dgamma, dbeta
