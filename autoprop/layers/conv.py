"""Convolution and pooling, forward only (the tape derives backward).

Twins of ``manualprop/conv.py``: same constructor arguments, same initial
parameters for the same ``rng`` (both call :func:`manualprop.init.conv2d_params`).
All three layers are built on ONE windowing primitive, ``extract_patches``
(``tf.image.extract_patches`` for NCHW; its VJP is the scatter-add col2im), plus
ordinary tape operations: a matrix product for Conv2D, ``argmax`` +
``take_along_axis`` for MaxPool2D, ``mean`` for AvgPool2D. ConvTranspose2D is
built on that primitive's transpose, ``scatter_patches`` (col2im), whose VJP is
``extract_patches`` again.
Sources: ``lessons/20-conv2d.md``, ``lessons/21-pooling.md``.
"""

from __future__ import annotations

import manualprop as mp
from manualprop._validation import (
    check_window,
)

from .. import numpy as ap_numpy
from ..core import registry as R
from ..core.tape import replayed
from .base import Layer

__all__ = ["AvgPool2D", "Conv2D", "ConvTranspose2D", "MaxPool2D"]


#: Keras's names of the convolutions' arguments that mean the same as ours.
_CONV_KERAS_NAMES = {"strides": "stride", "dilation_rate": "dilation", "use_bias": "bias"}


class _Window2D(Layer):
    padding = (0, 0)
    dilation = (1, 1)

    def _windows(self, x, channels=None, dtype=None):
        """Check x (N, C, H, W); return (x as Tensor, patches (N, C, kh, kw, Ho, Wo))."""
        x = self._input(
            x, shape=("batch", "channels" if channels is None else channels, "height", "width"),
            dtype=dtype,
        )
        check_window(
            x.shape[2:], f"autoprop.layers.{self!r}.__call__", "x", kernel_size=self.kernel_size,
            stride=self.stride, padding=self.padding, dilation=self.dilation,
        )
        patches = R.extract_patches(
            x, kernel_size=self.kernel_size, stride=self.stride, padding=self.padding,
            dilation=self.dilation,
        )
        return x, patches


class Conv2D(_Window2D):
    """2-D convolution on NCHW input (twin of :class:`manualprop.Conv2D`).

    ``patches = extract_patches(x)`` (N, C, kh, kw, Ho, Wo) -> (N, K, L);
    ``y = W.reshape(O, K) @ patches + b`` -> (N, O, Ho, Wo), with ``K = C*kh*kw``,
    ``L = Ho*Wo``. The tape's backward of this is exactly the manual one: the matmul
    VJP gives dW and dpatches, the VJP of ``extract_patches`` is col2im.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size, stride, padding, dilation : int or (int, int)
    bias : bool, default True
    strides, dilation_rate, use_bias
        Keras's names of stride, dilation and bias, accepted too.
    rng : None, int or numpy.random.Generator
        Same initialisation as manualprop (:func:`manualprop.init.conv2d_params`).
    dtype : {np.float64, np.float32}

    Shapes: x (N, in_channels, H, W) -> y (N, out_channels, Ho, Wo);
    W (out, in, kh, kw), b (out,). Source: ``lessons/20-conv2d.md``.
    """

    manual_class = mp.Conv2D
    keras_aliases = _CONV_KERAS_NAMES

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.Conv2D``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x, patches = self._windows(x, self.in_channels, self.dtype)
        N = x.shape[0]
        O = self.out_channels
        Ho, Wo = patches.shape[-2:]
        cols = patches.reshape(N, -1, Ho * Wo)  # (N, K, L)
        y = (self.variables["W"].reshape(O, -1) @ cols).reshape(N, O, Ho, Wo)
        if self.bias:
            y = y + self.variables["b"].reshape(O, 1, 1)
        return y


class ConvTranspose2D(Layer):
    """2-D transposed convolution on NCHW input (twin of :class:`manualprop.ConvTranspose2D`).

    ``cols = W.reshape(C_in, K).T @ x`` (N, K, H*W) -> (N, C_out, kh, kw, H, W);
    ``y = scatter_patches(cols)`` (the scatter-add col2im, registered as the transpose of
    ``extract_patches``) onto the unpadded span, cropped by ``padding``, zero-extended by
    ``output_padding``, ``+ b`` -> (N, C_out, Ho, Wo). The tape's backward is a gather
    (an ordinary convolution of ``dy``), as the manual layer writes by hand.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size, stride, padding, output_padding, dilation : int or (int, int)
    bias : bool, default True
    strides, dilation_rate, use_bias
        Keras's names of stride, dilation and bias, accepted too.
    rng : None, int or numpy.random.Generator
        Same initialisation as manualprop (:func:`manualprop.init.conv_transpose2d_params`).
    dtype : {np.float64, np.float32}

    Shapes: x (N, in_channels, H, W) -> y (N, out_channels, Ho, Wo) with
    ``Ho = (H - 1) sh - 2 ph + dh (kh - 1) + oph + 1``; W (in, out, kh, kw), b (out,).
    Source: ``lessons/20b-conv-transpose.md``.
    """

    manual_class = mp.ConvTranspose2D
    keras_aliases = _CONV_KERAS_NAMES

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.ConvTranspose2D``, recorded on any open
        tape; shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x = self._input(x, shape=("batch", self.in_channels, "height", "width"), dtype=self.dtype)
        N, C, H, W_ = x.shape
        where = f"autoprop.layers.{self!r}.__call__"
        Ho, Wo = mp.ConvTranspose2D.output_size(self, (H, W_), where)
        kh, kw = self.kernel_size
        O = self.out_channels
        cols = self.variables["W"].reshape(C, -1).T @ x.reshape(N, C, H * W_)  # (N, K, H*W)
        # scatter onto exactly the rows/columns the windows reach, F = (H - 1) s + span, so
        # that the VJP (extract_patches) finds H x W windows; then crop the padding and add
        # output_padding's zeros at the bottom/right (slices and pad are ordinary tape ops)
        (sh, sw), (ph, pw), (dh, dw) = self.stride, self.padding, self.dilation
        Fh, Fw = (H - 1) * sh + dh * (kh - 1) + 1, (W_ - 1) * sw + dw * (kw - 1) + 1
        full = R.scatter_patches(
            cols.reshape(N, O, kh, kw, H, W_), x_shape=(N, O, Fh, Fw), kernel_size=self.kernel_size,
            stride=self.stride, padding=0, dilation=self.dilation,
        )
        extra_h, extra_w = max(0, ph + Ho - Fh), max(0, pw + Wo - Fw)
        if extra_h or extra_w:
            full = ap_numpy.pad(full, ((0, 0), (0, 0), (0, extra_h), (0, extra_w)))
        y = full[:, :, ph : ph + Ho, pw : pw + Wo]
        if self.bias:
            y = y + self.variables["b"].reshape(O, 1, 1)
        return y


class _Pool2D(_Window2D):
    keras_aliases = {"pool_size": "kernel_size", "strides": "stride"}  # Keras's names

    def _flat_windows(self, x):
        x, patches = self._windows(x)
        N, C, kh, kw, Ho, Wo = patches.shape
        return patches.reshape(N, C, kh * kw, Ho, Wo)


def _argmax_windows(windows):
    """The index of each window's maximum (N, C, 1, Ho, Wo) from the windows' values (N, C, k, Ho, Wo)."""
    return windows.argmax(axis=2)[:, :, None]


class MaxPool2D(_Pool2D):
    """Max pooling (twin of :class:`manualprop.MaxPool2D`).

    ``windows = extract_patches(x)`` as (N, C, kh*kw, Ho, Wo);
    ``k = argmax(windows, axis=2)`` (plain numpy, no gradient);
    ``y = take_along_axis(windows, k, axis=2)``.

    Ties: ``np.argmax`` picks the first maximal element in row-major window order
    and ``take_along_axis`` sends the whole gradient to the picked element, the
    same rule as the manual layer (and PyTorch). ``ap.max(windows, axis=2)`` would
    split a tie evenly instead, so it is not used here.

    Parameters
    ----------
    kernel_size : int or (int, int)
    stride : int or (int, int), optional
        Defaults to ``kernel_size``. Keras's names ``pool_size`` and ``strides`` are
        accepted too.

    Shapes: x (N, C, H, W) -> y (N, C, Ho, Wo). Source: ``lessons/21-pooling.md``.
    """

    manual_class = mp.MaxPool2D

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.MaxPool2D``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        windows = self._flat_windows(x)
        # (N, C, 1, Ho, Wo): values, no gradient (computed again at each autoprop.function replay)
        idx = replayed(_argmax_windows, windows)
        y = R.take_along_axis(windows, idx, axis=2)
        return y.reshape(y.shape[:2] + y.shape[3:])


class AvgPool2D(_Pool2D):
    """Average pooling (twin of :class:`manualprop.AvgPool2D`): the mean of each window.

    ``y = extract_patches(x).sum(axis=(2, 3)) / (kh*kw)`` (the mean of each window).

    Parameters
    ----------
    kernel_size : int or (int, int)
    stride : int or (int, int), optional
        Defaults to ``kernel_size``. Keras's names ``pool_size`` and ``strides`` are
        accepted too.

    Shapes: x (N, C, H, W) -> y (N, C, Ho, Wo). Source: ``lessons/21-pooling.md``.
    """

    manual_class = mp.AvgPool2D

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.AvgPool2D``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        windows = self._flat_windows(x)
        return windows.sum(axis=2) / windows.shape[2]  # sum / n: the VJP of sum is a view


