"""Batch norm and layer norm, forward only (the tape derives the three-path backward).

Twins of ``manualprop/norm.py``: same constructor arguments, same parameters
(``gamma`` = 1, ``beta`` = 0, :func:`manualprop.init.norm_params`). The running
statistics of batch norm are state, not variables: plain arrays
``running_mean``/``running_var`` updated by the shared
:func:`manualprop.norm.update_running_stats` (PyTorch's rule), so ``variables``
holds exactly the trainable ``gamma`` and ``beta``, as the manual ``params``.
Sources: ``lessons/22-batchnorm.md``, ``lessons/23-layernorm.md``.
"""

from __future__ import annotations

import numpy as np

import manualprop as mp
from manualprop._validation import (
    check_stat_count,
)
from manualprop.norm import update_running_stats

from .base import Layer

__all__ = ["BatchNorm1D", "BatchNorm2D", "LayerNorm"]


class _BatchNorm(Layer):
    keras_aliases = {"epsilon": "eps"}  # Keras's name; its momentum means 1 - ours: not one

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop._BatchNorm``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x = self._input(x, shape=self._spec, dtype=self.dtype)
        axes, bshape = self._axes, self._bshape
        gamma = self.variables["gamma"].reshape(bshape)
        beta = self.variables["beta"].reshape(bshape)
        if training and self.trainable:  # frozen: inference mode, as Keras's batch norm
            m = check_stat_count(x.shape, axes, f"autoprop.layers.{self!r}.__call__", "x")
            # sum / m rather than mean: the VJP of sum is a broadcast view, no full-size copy
            mean = x.sum(axis=axes, keepdims=True) / m
            xc = x - mean
            var = np.square(xc).sum(axis=axes, keepdims=True) / m  # biased: divide by m
            inv_std = 1.0 / np.sqrt(var + self.eps)
            self.running_mean, self.running_var = update_running_stats(
                self.running_mean, self.running_var, mean._value.reshape(-1),  # values only
                var._value.reshape(-1), m, self.momentum,
            )
        else:  # running statistics: constants for the tape
            xc = x - self.running_mean.reshape(bshape)
            inv_std = (1.0 / np.sqrt(self.running_var + self.eps)).reshape(bshape)
        return xc * (inv_std * gamma) + beta


class BatchNorm1D(_BatchNorm):
    """Batch norm of (N, C) features (twin of :class:`manualprop.BatchNorm1D`).

    Training: ``xhat = (x - mean) / sqrt(var + eps)`` with the batch mean and biased
    variance over axis 0, ``y = gamma * xhat + beta``, running statistics updated as
    PyTorch; inference: the running statistics. A frozen layer (``trainable=False``)
    runs in inference mode even when training, and leaves its statistics, as Keras's
    ``BatchNormalization``. Source: ``lessons/22-batchnorm.md``.

    Parameters
    ----------
    num_features : int
    eps : float, default 1e-5
        Keras's name ``epsilon`` is accepted too.
    momentum : float, default 0.1
    dtype : {np.float64, np.float32}
    """

    manual_class = mp.BatchNorm1D

    _axes = (0,)
    _bshape = (1, -1)

    @property
    def _spec(self):
        return ("batch", self.num_features)


class BatchNorm2D(_BatchNorm):
    """Batch norm of NCHW images per channel (twin of :class:`manualprop.BatchNorm2D`).

    As :class:`BatchNorm1D` with the statistics over axes (0, 2, 3).
    Source: ``lessons/22-batchnorm.md``.

    Parameters
    ----------
    num_features : int
    eps : float, default 1e-5
        Keras's name ``epsilon`` is accepted too.
    momentum : float, default 0.1
    dtype : {np.float64, np.float32}
    """

    manual_class = mp.BatchNorm2D

    _axes = (0, 2, 3)
    _bshape = (1, -1, 1, 1)

    @property
    def _spec(self):
        return ("batch", self.num_features, "height", "width")


class LayerNorm(Layer):
    """Layer norm over the trailing ``normalized_shape`` axes (twin of :class:`manualprop.LayerNorm`).

    ``y = gamma * (x - mean) / sqrt(var + eps) + beta``, statistics per sample over the
    trailing axes; ``gamma``, ``beta`` of shape ``normalized_shape``.
    Source: ``lessons/23-layernorm.md``.

    Parameters
    ----------
    normalized_shape : int or tuple of int
    eps : float, default 1e-5
        Keras's name ``epsilon`` is accepted too.
    dtype : {np.float64, np.float32}
    """

    manual_class = mp.LayerNorm
    keras_aliases = {"epsilon": "eps"}  # Keras's name

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.LayerNorm``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        k = len(self.normalized_shape)
        x = self._input(x, min_ndim=k, dtype=self.dtype)
        x = self._input(x, shape=("*",) * (x.ndim - k) + self.normalized_shape)
        axes = tuple(range(x.ndim - k, x.ndim))
        m = int(np.prod(self.normalized_shape))
        mean = x.sum(axis=axes, keepdims=True) / m  # sum / m: cheaper VJP than mean
        xc = x - mean
        var = np.square(xc).sum(axis=axes, keepdims=True) / m  # biased
        xhat = xc * (1.0 / np.sqrt(var + self.eps))
        return xhat * self.variables["gamma"] + self.variables["beta"]
