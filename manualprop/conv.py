"""Convolution and pooling on NCHW arrays, with hand-derived backward passes.

Every layer here is built on one pair of functions:

* :func:`im2col` (in :mod:`manualprop._im2col`, shared with autoprop) copies every receptive field of the (padded) input into a
  column array ``cols`` of shape ``(N, C, kh, kw, H_out, W_out)``, using
  ``numpy.lib.stride_tricks.sliding_window_view`` (a strided view, no Python
  loop over pixels) and one contiguous copy;
* :func:`col2im` is its transpose (the vector-Jacobian product of
  ``im2col``): it scatter-adds a column array back into an input-shaped
  array. Windows overlap when ``stride < kernel``, so an input pixel that
  sits in several windows receives the SUM of their gradients; that ``+=``
  is the whole point (``lessons/20-conv2d.md``). It loops over the
  ``kh * kw`` kernel offsets, each step a vectorised strided add.

A convolution is then one matrix product with the columns, and pooling a
reduction over the window axes. Output sizes follow PyTorch::

    H_out = (H + 2 padding - dilation (kh - 1) - 1) // stride + 1

A transposed convolution swaps the two: its forward is col2im, its backward im2col.

Sources: ``lessons/20-conv2d.md``, ``lessons/20b-conv-transpose.md``, ``lessons/21-pooling.md``.
"""

from __future__ import annotations

import numpy as np

from ._im2col import col2im, im2col
from ._validation import (
    check_array,
    check_float_dtype,
    check_int_pair,
    check_positive_int,
    check_transposed_window,
    check_window,
)
from .init import conv2d_params, conv_transpose2d_params
from .layers import Layer

__all__ = ["AvgPool2D", "Conv2D", "ConvTranspose2D", "MaxPool2D", "col2im", "im2col"]


class _Window2D(Layer):
    """Shared input check of the 2-D windowed layers (NCHW, kernel must fit)."""

    padding = (0, 0)
    dilation = (1, 1)

    def _check_input(self, X, channels=None, dtype=None):
        where = self._where("forward")
        X = check_array(
            X, where, shape=("batch", "channels" if channels is None else channels, "height", "width"),
            dtype=dtype,
        )
        out_hw = check_window(
            X.shape[2:], where, kernel_size=self.kernel_size, stride=self.stride,
            padding=self.padding, dilation=self.dilation,
        )
        return X, out_hw


class Conv2D(_Window2D):
    r"""2-D convolution (cross-correlation, as PyTorch's ``nn.Conv2d``) on NCHW input.

    .. math::

        Y_{n,o,i,j} = b_o + \sum_{c,p,q} W_{o,c,p,q}\,
                      X^{pad}_{n,\,c,\,i s_h + p d_h,\,j s_w + q d_w}

    computed as one matrix product with the im2col columns::

        cols = im2col(X)                     (N, C, kh, kw, Ho, Wo) -> (N, K, L)
        Y    = W.reshape(O, K) @ cols + b    (N, O, L) -> (N, O, Ho, Wo)

    with ``K = C*kh*kw`` and ``L = Ho*Wo``. Backward, with ``G = dY`` as
    (N, O, L)::

        db    = G.sum over (n, l)                      (O,)
        dW    = sum_n G[n] @ cols[n].T                 (O, K) -> (O, C, kh, kw)
        dcols = W.reshape(O, K).T @ G                  (N, K, L)
        dX    = col2im(dcols)   # scatter-add: overlapping windows sum

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or (int, int)
        ``(kh, kw)``.
    stride : int or (int, int), default 1
    padding : int or (int, int), default 0
        Zeros added on both sides of each spatial axis.
    dilation : int or (int, int), default 1
        Spacing between kernel taps.
    bias : bool, default True
    rng : None, int or numpy.random.Generator
        Initialisation, see :func:`manualprop.init.conv2d_params` (PyTorch's
        rule ``U(-k, k)``, ``k = 1/sqrt(in_channels*kh*kw)``, W first).
    dtype : {np.float64, np.float32}

    Attributes
    ----------
    params, grads : dict
        ``"W"``: (out_channels, in_channels, kh, kw); ``"b"``: (out_channels,)
        (absent when ``bias=False``).

    Notes
    -----
    Shapes: X (N, in_channels, H, W) -> Y (N, out_channels, Ho, Wo) with
    ``Ho = (H + 2 ph - dh (kh - 1) - 1) // sh + 1`` (same for ``Wo``).
    The cache holds the columns (``kh*kw`` times the output's pixels per input
    channel), trading memory for one BLAS call per image.
    Derivation: ``lessons/20-conv2d.md``.

    Raises
    ------
    TypeError
        Non-int hyperparameters, non-float X, X dtype differs from the params'.
    ValueError
        X not 4-D with ``in_channels`` channels, NaN/inf, or the dilated kernel
        larger than the padded input; ``dY`` not the shape of Y.
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> conv = Conv2D(1, 1, kernel_size=2, bias=False)
    >>> conv.params["W"][...] = [[[[1.0, 0.0], [0.0, -1.0]]]]
    >>> X = np.arange(9.0).reshape(1, 1, 3, 3)
    >>> conv.forward(X)[0, 0]
    array([[-4., -4.],
           [-4., -4.]])
    >>> conv.backward(np.ones((1, 1, 2, 2)))[0, 0]
    array([[ 1.,  1.,  0.],
           [ 1.,  0., -1.],
           [ 0., -1., -1.]])
    """

    def __init__(
        self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
        bias=True, rng=None, dtype=np.float64,
    ):
        super().__init__()
        name = type(self).__name__
        self.in_channels = check_positive_int(in_channels, "in_channels", name)
        self.out_channels = check_positive_int(out_channels, "out_channels", name)
        self.kernel_size = check_int_pair(kernel_size, "kernel_size", name, low=1)
        self.stride = check_int_pair(stride, "stride", name, low=1)
        self.padding = check_int_pair(padding, "padding", name, low=0)
        self.dilation = check_int_pair(dilation, "dilation", name, low=1)
        self.bias = bool(bias)
        self.dtype = check_float_dtype(dtype, name)
        self.params = conv2d_params(
            self.in_channels, self.out_channels, self.kernel_size, self.bias, rng, self.dtype
        )
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._declare()

    def _repr_args(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
        if self.stride != (1, 1):
            s += f", stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if not self.bias:
            s += ", bias=False"
        return s

    def _spec(self):
        return self.kernel_size, self.stride, self.padding, self.dilation

    def forward(self, X, training=False):
        """Convolve X (N, in_channels, H, W) -> Y (N, out_channels, Ho, Wo)."""
        self._check_params("forward")
        X, (Ho, Wo) = self._check_input(X, self.in_channels, self.dtype)
        N = X.shape[0]
        W = self.params["W"]
        cols = im2col(X, *self._spec()).reshape(N, -1, Ho * Wo)  # (N, K, L)
        Y = W.reshape(self.out_channels, -1) @ cols  # (N, O, L)
        Y = Y.reshape(N, self.out_channels, Ho, Wo)
        if self.bias:
            Y += self.params["b"][:, None, None]
        self.cache = {"cols": cols, "x_shape": X.shape, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """Fill ``grads["W"]``, ``grads["b"]``; return dX via col2im."""
        self._check_params("backward")
        dY = self._check_dY(dY)
        cols, x_shape = self.cache["cols"], self.cache["x_shape"]
        N, O = dY.shape[:2]
        W = self.params["W"]
        G = dY.reshape(N, O, -1)  # (N, O, L)
        self.grads["W"] = (G @ cols.transpose(0, 2, 1)).sum(axis=0).reshape(W.shape)
        if self.bias:
            self.grads["b"] = dY.sum(axis=(0, 2, 3))
        dcols = W.reshape(O, -1).T @ G  # (N, K, L)
        kh, kw = self.kernel_size
        dcols = dcols.reshape(N, self.in_channels, kh, kw, *dY.shape[2:])
        return col2im(dcols, x_shape, *self._spec())


class ConvTranspose2D(Layer):
    r"""2-D transposed convolution on NCHW input (PyTorch's ``nn.ConvTranspose2d``).

    The forward pass of this layer is the backward pass (w.r.t. the input) of a
    :class:`Conv2D` with the same ``W``, ``kernel_size``, ``stride``, ``padding`` and
    ``dilation``: every input pixel scatters a ``W``-weighted copy of the kernel into
    the output, and overlapping copies add. Built on the same two kernels, swapped::

        cols = W.reshape(C_in, K).T @ X          (N, K, H*W),  K = C_out*kh*kw
        Y    = col2im(cols) + b                  (N, C_out, Ho, Wo)   # scatter-add

    Backward, with ``dcols = im2col(dY)`` (N, K, H*W) — the gather that is col2im's
    transpose, i.e. an ordinary convolution of ``dY`` with ``W``::

        dX = W.reshape(C_in, K) @ dcols          (N, C_in, H, W)
        dW = sum_n X[n] @ dcols[n].T             (C_in, K) -> (C_in, C_out, kh, kw)
        db = dY.sum over (n, i, j)               (C_out,)

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or (int, int)
    stride : int or (int, int), default 1
    padding : int or (int, int), default 0
        Rows/columns removed from each side of the full output (the padding of the
        convolution being transposed).
    output_padding : int or (int, int), default 0
        Extra rows/columns added at the bottom/right, to pick one of the input sizes a
        strided convolution maps to the same output size; smaller than ``stride`` or
        ``dilation`` along its axis, as PyTorch requires.
    dilation : int or (int, int), default 1
    bias : bool, default True
    rng : None, int or numpy.random.Generator
        See :func:`manualprop.init.conv_transpose2d_params` (PyTorch's rule).
    dtype : {np.float64, np.float32}

    Attributes
    ----------
    params, grads : dict
        ``"W"``: (in_channels, out_channels, kh, kw) — PyTorch's layout, the shape of
        the transposed convolution's weight; ``"b"``: (out_channels,) (absent when
        ``bias=False``).

    Notes
    -----
    Shapes: X (N, in_channels, H, W) -> Y (N, out_channels, Ho, Wo) with
    ``Ho = (H - 1) sh - 2 ph + dh (kh - 1) + oph + 1`` (same for ``Wo``).
    The cache holds X only. Derivation: ``lessons/20b-conv-transpose.md``.

    Raises
    ------
    TypeError
        Non-int hyperparameters, non-float X, X dtype differs from the params'.
    ValueError
        X not 4-D with ``in_channels`` channels, NaN/inf, an empty output,
        ``output_padding`` not smaller than stride or dilation; ``dY`` not the shape of Y.
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    Stride 2 and a 2x2 kernel of ones: every input pixel becomes a 2x2 block.

    >>> import numpy as np
    >>> up = ConvTranspose2D(1, 1, kernel_size=2, stride=2, bias=False)
    >>> up.params["W"][...] = 1.0
    >>> up.forward(np.array([[[[1.0, 2.0], [3.0, 4.0]]]]))[0, 0]
    array([[1., 1., 2., 2.],
           [1., 1., 2., 2.],
           [3., 3., 4., 4.],
           [3., 3., 4., 4.]])
    """

    def __init__(
        self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
        dilation=1, bias=True, rng=None, dtype=np.float64,
    ):
        super().__init__()
        name = type(self).__name__
        self.in_channels = check_positive_int(in_channels, "in_channels", name)
        self.out_channels = check_positive_int(out_channels, "out_channels", name)
        self.kernel_size = check_int_pair(kernel_size, "kernel_size", name, low=1)
        self.stride = check_int_pair(stride, "stride", name, low=1)
        self.padding = check_int_pair(padding, "padding", name, low=0)
        self.output_padding = check_int_pair(output_padding, "output_padding", name, low=0)
        self.dilation = check_int_pair(dilation, "dilation", name, low=1)
        for op, s, d in zip(self.output_padding, self.stride, self.dilation):
            if op >= max(s, d):
                raise ValueError(
                    f"{name}: output_padding must be smaller than stride or dilation along each "
                    f"axis; got output_padding={self.output_padding}, stride={self.stride}, "
                    f"dilation={self.dilation}"
                )
        self.bias = bool(bias)
        self.dtype = check_float_dtype(dtype, name)
        self.params = conv_transpose2d_params(
            self.in_channels, self.out_channels, self.kernel_size, self.bias, rng, self.dtype
        )
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._declare()

    def _repr_args(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
        for key, default in (("stride", (1, 1)), ("padding", (0, 0)), ("output_padding", (0, 0)),
                             ("dilation", (1, 1))):
            if getattr(self, key) != default:
                s += f", {key}={getattr(self, key)}"
        if not self.bias:
            s += ", bias=False"
        return s

    def _spec(self):
        return self.kernel_size, self.stride, self.padding, self.dilation

    def output_size(self, spatial, where=None):
        """``(Ho, Wo)`` for an input of spatial size ``(H, W)`` (raises ValueError if empty)."""
        return check_transposed_window(
            tuple(spatial), where or self._where("forward"), kernel_size=self.kernel_size,
            stride=self.stride, padding=self.padding, output_padding=self.output_padding,
            dilation=self.dilation,
        )

    def forward(self, X, training=False):
        """Transposed convolution X (N, in_channels, H, W) -> Y (N, out_channels, Ho, Wo)."""
        self._check_params("forward")
        X = check_array(
            X, self._where("forward"), shape=("batch", self.in_channels, "height", "width"),
            dtype=self.dtype,
        )
        N, C, H, W_ = X.shape
        Ho, Wo = self.output_size((H, W_))
        kh, kw = self.kernel_size
        Wt = self.params["W"].reshape(C, -1)  # (C_in, K)
        cols = Wt.T @ X.reshape(N, C, H * W_)  # (N, K, H*W)
        cols = cols.reshape(N, self.out_channels, kh, kw, H, W_)
        Y = col2im(cols, (N, self.out_channels, Ho, Wo), *self._spec())
        if self.bias:
            Y = Y + self.params["b"][:, None, None]
        self.cache = {"X": X, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """Fill ``grads["W"]``, ``grads["b"]``; return dX via im2col (a convolution of dY)."""
        self._check_params("backward")
        dY = self._check_dY(dY)
        X = self.cache["X"]
        N, C, H, W_ = X.shape
        # windows past the input's size (output_padding >= stride) touch no input pixel
        dcols = im2col(dY, *self._spec())[..., :H, :W_].reshape(N, -1, H * W_)  # (N, K, H*W)
        Wt = self.params["W"].reshape(C, -1)
        self.grads["W"] = (X.reshape(N, C, -1) @ dcols.transpose(0, 2, 1)).sum(axis=0).reshape(
            self.params["W"].shape
        )
        if self.bias:
            self.grads["b"] = dY.sum(axis=(0, 2, 3))
        return (Wt @ dcols).reshape(X.shape)


class _Pool2D(_Window2D):
    def __init__(self, kernel_size, stride=None):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = check_int_pair(kernel_size, "kernel_size", name, low=1)
        self.stride = (
            self.kernel_size if stride is None else check_int_pair(stride, "stride", name, low=1)
        )

    def _repr_args(self) -> str:
        s = f"kernel_size={self.kernel_size}"
        return s if self.stride == self.kernel_size else s + f", stride={self.stride}"

    def _windows(self, X):
        X, (Ho, Wo) = self._check_input(X)
        N, C = X.shape[:2]
        kh, kw = self.kernel_size
        cols = im2col(X, self.kernel_size, self.stride).reshape(N, C, kh * kw, Ho, Wo)
        return X, cols

    def _scatter(self, dcols):
        N, C, _, Ho, Wo = dcols.shape
        kh, kw = self.kernel_size
        return col2im(
            dcols.reshape(N, C, kh, kw, Ho, Wo), self.cache["x_shape"], self.kernel_size, self.stride
        )


class MaxPool2D(_Pool2D):
    r"""Max pooling over ``kh x kw`` windows of NCHW input (PyTorch's ``nn.MaxPool2d``).

    .. math:: Y_{n,c,i,j} = \max_{p,q} X_{n,\,c,\,i s_h + p,\,j s_w + q}

    Backward routes ``dY`` to the maximal element of each window (the
    Jacobian of a max is a one-hot row)::

        k     = argmax over the window, flattened row-major (p * kw + q)
        dX    = col2im(one_hot(k) * dY)    # overlapping windows sum

    **Ties**: the whole gradient goes to ONE element, the first maximal one in
    row-major window order (``np.argmax`` returns the first occurrence), as
    PyTorch does on CPU. This differs from ``autoprop.max`` (a reduction),
    which splits a tie evenly. Either is a valid subgradient; finite
    differences at a tie see neither (the function has a kink there).

    Parameters
    ----------
    kernel_size : int or (int, int)
    stride : int or (int, int), optional
        Defaults to ``kernel_size`` (non-overlapping windows), as in PyTorch.

    Notes
    -----
    Shapes: X (N, C, H, W) -> Y (N, C, Ho, Wo), ``Ho = (H - kh) // sh + 1``.
    Caches the argmax indices (N, C, Ho, Wo). Derivation: ``lessons/21-pooling.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Bad hyperparameters; X not a finite float 4-D array or smaller than the
        kernel; ``dY`` of the wrong shape; backward before forward.

    Examples
    --------
    >>> import numpy as np
    >>> pool = MaxPool2D(2)
    >>> X = np.array([[[[1.0, 3.0], [3.0, 2.0]]]])   # a tie between (0, 1) and (1, 0)
    >>> pool.forward(X)
    array([[[[3.]]]])
    >>> pool.backward(np.ones((1, 1, 1, 1)))          # first in row-major order wins
    array([[[[0., 1.],
             [0., 0.]]]])
    """

    def forward(self, X, training=False):
        """Max over each window: X (N, C, H, W) -> Y (N, C, Ho, Wo)."""
        X, cols = self._windows(X)
        idx = cols.argmax(axis=2)[:, :, None]  # (N, C, 1, Ho, Wo)
        Y = np.take_along_axis(cols, idx, axis=2)[:, :, 0]
        self.cache = {
            "idx": idx, "n_win": cols.shape[2], "x_shape": X.shape, "out_shape": Y.shape,
            "dtype": Y.dtype,
        }
        return Y

    def backward(self, dY):
        """dX: each dY value added at its window's (first) argmax."""
        dY = self._check_dY(dY)
        N, C, Ho, Wo = dY.shape
        dcols = np.zeros((N, C, self.cache["n_win"], Ho, Wo), dtype=dY.dtype)
        np.put_along_axis(dcols, self.cache["idx"], dY[:, :, None], axis=2)
        return self._scatter(dcols)


class AvgPool2D(_Pool2D):
    r"""Average pooling over ``kh x kw`` windows of NCHW input (PyTorch's ``nn.AvgPool2d``).

    .. math:: Y_{n,c,i,j} = \frac{1}{k_h k_w} \sum_{p,q} X_{n,\,c,\,i s_h + p,\,j s_w + q}

    Backward: every element of a window gets ``dY / (kh*kw)``; overlapping
    windows sum (``dX = col2im(broadcast(dY) / (kh*kw))``).

    Parameters
    ----------
    kernel_size : int or (int, int)
    stride : int or (int, int), optional
        Defaults to ``kernel_size``, as in PyTorch.

    Notes
    -----
    Shapes: X (N, C, H, W) -> Y (N, C, Ho, Wo), ``Ho = (H - kh) // sh + 1``.
    Derivation: ``lessons/21-pooling.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        As :class:`MaxPool2D`.

    Examples
    --------
    >>> import numpy as np
    >>> pool = AvgPool2D(2)
    >>> pool.forward(np.arange(4.0).reshape(1, 1, 2, 2))
    array([[[[1.5]]]])
    >>> pool.backward(np.ones((1, 1, 1, 1)))
    array([[[[0.25, 0.25],
             [0.25, 0.25]]]])
    """

    def forward(self, X, training=False):
        """Mean over each window: X (N, C, H, W) -> Y (N, C, Ho, Wo)."""
        X, cols = self._windows(X)
        Y = cols.mean(axis=2)
        self.cache = {
            "n_win": cols.shape[2], "x_shape": X.shape, "out_shape": Y.shape, "dtype": Y.dtype,
        }
        return Y

    def backward(self, dY):
        """dX: ``dY / (kh*kw)`` spread over each window, overlaps summed."""
        dY = self._check_dY(dY)
        N, C, Ho, Wo = dY.shape
        n = self.cache["n_win"]
        dcols = np.broadcast_to((dY / n)[:, :, None], (N, C, n, Ho, Wo))
        return self._scatter(dcols)
