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
    # YOUR CODE HERE
    raise NotImplementedError("Exercise 1: implement affine_forward")
    return out, cache


def affine_backward(dout, cache):
    """Gradients of the affine layer: ``(dx, dw, db)`` with the shapes of x, w and b."""
    # YOUR CODE HERE
    raise NotImplementedError("Exercise 2: implement affine_backward")
    return dx, dw, db


def relu_forward(x):
    """``out = max(x, 0)`` element-wise, for x of any shape."""
    # YOUR CODE HERE
    raise NotImplementedError("Exercise 3: implement relu_forward")
    return out, cache


def relu_backward(dout, cache):
    """``dx``: dout where x > 0, else 0 (at x == 0 the derivative is taken as 0, as PyTorch does)."""
    # YOUR CODE HERE
    raise NotImplementedError("Exercise 4: implement relu_backward")
    return dx


def softmax_loss(x, y):
    """Mean cross-entropy of softmax(x) against labels: ``(loss, dx)``.

    x (N, C) class scores, y (N,) integer labels in [0, C); loss is a float, dx = dL/dx (N, C).
    """
    # YOUR CODE HERE
    raise NotImplementedError("Exercise 5: implement softmax_loss")
    return loss, dx


def batchnorm_forward(x, gamma, beta, bn_param):
    """Batch normalisation of x (N, D) per feature; gamma, beta (D,).

    ``bn_param``: ``mode`` ("train" or "test"), optional ``eps`` (1e-5), ``momentum`` (0.9),
    ``running_mean`` and ``running_var`` (D,) (zeros and ones when absent). In training the
    statistics are the batch's (the biased variance, divided by N) and the running ones are
    updated in ``bn_param``: ``running = momentum * running + (1 - momentum) * batch``; in test
    mode the running statistics normalise. ``out = gamma * xhat + beta``.
    """
    # YOUR CODE HERE
    raise NotImplementedError("Exercise 6: implement batchnorm_forward")
    return out, cache


def batchnorm_backward(dout, cache):
    """Gradients of batch normalisation: ``(dx, dgamma, dbeta)``.

    In training x reaches the loss three ways: through xhat directly, through the batch mean
    and through the batch variance; in test mode the statistics are constants.
    """
    # YOUR CODE HERE
    raise NotImplementedError("Exercise 7: implement batchnorm_backward")
    return dx, dgamma, dbeta


def conv_forward_naive(x, w, b, conv_param):
    """Convolution (cross-correlation) with zero padding, written with loops.

    x (N, C, H, W), w (F, C, HH, WW), b (F,); ``conv_param``: ``stride`` and ``pad`` (ints).
    out (N, F, H', W') with H' = 1 + (H + 2 pad - HH) // stride, W' likewise;
    ``out[n, f, i, j] = b[f] + sum(xpad[n, :, i*stride : i*stride+HH, j*stride : j*stride+WW] * w[f])``.
    """
    # YOUR CODE HERE
    raise NotImplementedError("Exercise 8: implement conv_forward_naive")
    return out, cache


def conv_backward_naive(dout, cache):
    """Gradients of the convolution: ``(dx, dw, db)``.

    Every window sends ``dout[n, f, i, j] * w[f]`` back to the padded input pixels it read
    (overlapping windows add up), then the padding is cropped off.
    """
    # YOUR CODE HERE
    raise NotImplementedError("Exercise 9: implement conv_backward_naive")
    return dx, dw, db


def max_pool_forward(x, pool_param):
    """Max pooling, written with loops: x (N, C, H, W); ``pool_param``: ``pool_height``,
    ``pool_width``, ``stride``. out (N, C, H', W') with H' = 1 + (H - pool_height) // stride."""
    # YOUR CODE HERE
    raise NotImplementedError("Exercise 10: implement max_pool_forward")
    return out, cache


def max_pool_backward(dout, cache):
    """``dx``: each window's upstream gradient goes to the position of its maximum only
    (windows that overlap add up)."""
    # YOUR CODE HERE
    raise NotImplementedError("Exercise 11: implement max_pool_backward")
    return dx
