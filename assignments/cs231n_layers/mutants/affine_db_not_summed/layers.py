"""Assignment cs231n_layers: layers as forward/backward function pairs, gradients derived by hand.

Rules
-----
* numpy only: autoprop, autograd, torch, jax and tensorflow may not be imported. The grader
  provides only numpy and the standard library: scipy (``scipy.special.logsumexp``) or any
  other package is not available there, and a file importing one scores 0.
  ``gradcheck check`` warns about such an import.
* Every layer is a pair of functions. ``NAME_forward(inputs..., param_dict) -> (out, cache)``
  computes the output and returns, as ``cache``, whatever the backward needs;
  ``NAME_backward(dout, cache)`` receives ``dout = dL/dout`` (the shape of ``out``) and
  returns the gradient of the loss with respect to each array input of the forward, in
  the forward's order (``affine_backward`` returns ``(dx, dw, db)``).
* ``softmax_loss(x, y) -> (loss, dx)`` is a loss: the mean over the batch and its gradient.
* Work in float64; do not modify the arrays you receive (``x``, ``dout``) or your caches in place.
* Derive each backward by hand: ``NAME_backward`` must not call ``NAME_forward`` (keep what it
  needs in the cache instead). The grader counts the forward's calls during the backward: a
  pair whose backward calls its forward fails its gradient tests, even when the numbers are right.

Check a pair before submitting (one ``--input-shape`` per array input, separated by ';')::

    gradcheck check layers.py::affine --input-shape '4,5;5,3;3'
    gradcheck check layers.py::conv --input-shape '2,3,5,5;4,3,3,3;4' --init '{"conv_param": {"stride": 1, "pad": 1}}'
    gradcheck check layers.py::softmax_loss --loss --input-shape 5,4 --targets labels
"""

import numpy as np


def affine_forward(x, w, b):
    """Fully connected layer: ``out = x.reshape(N, D) @ w + b``.

    x has shape (N, d_1, ..., d_k) with D = d_1 * ... * d_k (each example is flattened),
    w (D, M), b (M,); out (N, M).
    """
    ### BEGIN SOLUTION
    out = x.reshape(x.shape[0], -1) @ w + b
    cache = (x, w)
    ### END SOLUTION
    return out, cache


def affine_backward(dout, cache):
    """Gradients of the affine layer: ``(dx, dw, db)`` with the shapes of x, w and b."""
    ### BEGIN SOLUTION
    x, w = cache
    x2 = x.reshape(x.shape[0], -1)
    dx = (dout @ w.T).reshape(x.shape)
    dw = x2.T @ dout
    db = dout
    ### END SOLUTION
    return dx, dw, db


def relu_forward(x):
    """``out = max(x, 0)`` element-wise, for x of any shape."""
    ### BEGIN SOLUTION
    out = np.maximum(x, 0.0)
    cache = x
    ### END SOLUTION
    return out, cache


def relu_backward(dout, cache):
    """``dx``: dout where x > 0, else 0 (at x == 0 the derivative is taken as 0, as PyTorch does)."""
    ### BEGIN SOLUTION
    x = cache
    dx = dout * (x > 0)
    ### END SOLUTION
    return dx


def softmax_loss(x, y):
    """Mean cross-entropy of softmax(x) against labels: ``(loss, dx)``.

    x (N, C) class scores, y (N,) integer labels in [0, C); loss is a float, dx = dL/dx (N, C).
    """
    ### BEGIN SOLUTION
    N = x.shape[0]
    shifted = x - x.max(axis=1, keepdims=True)  # exp cannot overflow
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = float(-log_p[np.arange(N), y].mean())
    dx = np.exp(log_p)
    dx[np.arange(N), y] -= 1.0
    dx /= N
    ### END SOLUTION
    return loss, dx


def batchnorm_forward(x, gamma, beta, bn_param):
    """Batch normalisation of x (N, D) per feature; gamma, beta (D,).

    ``bn_param``: ``mode`` ("train" or "test"), optional ``eps`` (1e-5), ``momentum`` (0.9),
    ``running_mean`` and ``running_var`` (D,) (zeros and ones when absent). In training the
    statistics are the batch's (the biased variance, divided by N) and the running ones are
    updated in ``bn_param``: ``running = momentum * running + (1 - momentum) * batch``; in test
    mode the running statistics normalise. ``out = gamma * xhat + beta``.
    """
    ### BEGIN SOLUTION
    mode, eps, momentum = bn_param["mode"], bn_param.get("eps", 1e-5), bn_param.get("momentum", 0.9)
    D = x.shape[1]
    running_mean = np.asarray(bn_param.get("running_mean", np.zeros(D)), dtype=np.float64)
    running_var = np.asarray(bn_param.get("running_var", np.ones(D)), dtype=np.float64)
    if mode == "train":
        mean, var = x.mean(axis=0), x.var(axis=0)
        bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * mean
        bn_param["running_var"] = momentum * running_var + (1 - momentum) * var
    elif mode == "test":
        mean, var = running_mean, running_var
    else:
        raise ValueError(f"batchnorm_forward: bn_param['mode'] must be 'train' or 'test'; got {mode!r}")
    inv_std = 1.0 / np.sqrt(var + eps)
    xhat = (x - mean) * inv_std
    out = gamma * xhat + beta
    cache = (xhat, gamma, inv_std, mode)
    ### END SOLUTION
    return out, cache


def batchnorm_backward(dout, cache):
    """Gradients of batch normalisation: ``(dx, dgamma, dbeta)``.

    In training x reaches the loss three ways: through xhat directly, through the batch mean
    and through the batch variance; in test mode the statistics are constants.
    """
    ### BEGIN SOLUTION
    xhat, gamma, inv_std, mode = cache
    dbeta = dout.sum(axis=0)
    dgamma = (dout * xhat).sum(axis=0)
    dxhat = dout * gamma
    if mode == "test":
        return dxhat * inv_std, dgamma, dbeta
    N = dout.shape[0]
    dx = inv_std / N * (N * dxhat - dxhat.sum(axis=0) - xhat * (dxhat * xhat).sum(axis=0))
    ### END SOLUTION
    return dx, dgamma, dbeta


def conv_forward_naive(x, w, b, conv_param):
    """Convolution (cross-correlation) with zero padding, written with loops.

    x (N, C, H, W), w (F, C, HH, WW), b (F,); ``conv_param``: ``stride`` and ``pad`` (ints).
    out (N, F, H', W') with H' = 1 + (H + 2 pad - HH) // stride, W' likewise;
    ``out[n, f, i, j] = b[f] + sum(xpad[n, :, i*stride : i*stride+HH, j*stride : j*stride+WW] * w[f])``.
    """
    ### BEGIN SOLUTION
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    Ho, Wo = 1 + (H + 2 * pad - HH) // stride, 1 + (W + 2 * pad - WW) // stride
    xpad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((N, F, Ho, Wo))
    for n in range(N):
        for f in range(F):
            for i in range(Ho):
                for j in range(Wo):
                    window = xpad[n, :, i * stride:i * stride + HH, j * stride:j * stride + WW]
                    out[n, f, i, j] = np.sum(window * w[f]) + b[f]
    cache = (x, w, conv_param)
    ### END SOLUTION
    return out, cache


def conv_backward_naive(dout, cache):
    """Gradients of the convolution: ``(dx, dw, db)``.

    Every window sends ``dout[n, f, i, j] * w[f]`` back to the padded input pixels it read
    (overlapping windows add up), then the padding is cropped off.
    """
    ### BEGIN SOLUTION
    x, w, conv_param = cache
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    _, _, Ho, Wo = dout.shape
    xpad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxpad, dw = np.zeros_like(xpad), np.zeros_like(w)
    for n in range(N):
        for f in range(F):
            for i in range(Ho):
                for j in range(Wo):
                    rows, cols = slice(i * stride, i * stride + HH), slice(j * stride, j * stride + WW)
                    dw[f] += dout[n, f, i, j] * xpad[n, :, rows, cols]
                    dxpad[n, :, rows, cols] += dout[n, f, i, j] * w[f]
    dx = dxpad[:, :, pad:pad + H, pad:pad + W]
    db = dout.sum(axis=(0, 2, 3))
    ### END SOLUTION
    return dx, dw, db


def max_pool_forward(x, pool_param):
    """Max pooling, written with loops: x (N, C, H, W); ``pool_param``: ``pool_height``,
    ``pool_width``, ``stride``. out (N, C, H', W') with H' = 1 + (H - pool_height) // stride."""
    ### BEGIN SOLUTION
    ph, pw, stride = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    N, C, H, W = x.shape
    Ho, Wo = 1 + (H - ph) // stride, 1 + (W - pw) // stride
    out = np.zeros((N, C, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            out[:, :, i, j] = x[:, :, i * stride:i * stride + ph, j * stride:j * stride + pw].max(axis=(2, 3))
    cache = (x, pool_param)
    ### END SOLUTION
    return out, cache


def max_pool_backward(dout, cache):
    """``dx``: each window's upstream gradient goes to the position of its maximum only
    (windows that overlap add up)."""
    ### BEGIN SOLUTION
    x, pool_param = cache
    ph, pw, stride = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    N, C, _, _ = x.shape
    _, _, Ho, Wo = dout.shape
    dx = np.zeros_like(x)
    for n in range(N):
        for c in range(C):
            for i in range(Ho):
                for j in range(Wo):
                    window = x[n, c, i * stride:i * stride + ph, j * stride:j * stride + pw]
                    p, q = np.unravel_index(np.argmax(window), window.shape)
                    dx[n, c, i * stride + p, j * stride + q] += dout[n, c, i, j]
    ### END SOLUTION
    return dx
