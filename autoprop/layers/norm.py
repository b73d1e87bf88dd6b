"""Batch norm and layer norm, forward only (the tape derives the three-path backward).

Twins of ``manualprop/norm.py``: same constructor arguments, same parameters
(``gamma`` = 1, ``beta`` = 0, :func:`manualprop.init.norm_params`). The running
statistics of ``BatchNorm1D``/``BatchNorm2D`` are state, not variables (PyTorch's buffers):
plain arrays ``running_mean``/``running_var`` updated by the shared
:func:`manualprop.norm.update_running_stats` (PyTorch's rule), so ``variables``
holds exactly the trainable ``gamma`` and ``beta``, as the manual ``params``. Keras's
``BatchNormalization`` keeps them as Keras does: the non-trainable Variables
``moving_mean``/``moving_variance``, in ``weights`` and ``non_trainable_weights``, updated
by ``assign`` in training.
Sources: ``lessons/22-batchnorm.md``, ``lessons/23-layernorm.md``.
"""

from __future__ import annotations

import numpy as np

import manualprop as mp
from manualprop._validation import (
    check_scalar,
    check_stat_count,
)
from manualprop.norm import update_running_stats

from ..core.observe import own
from ..core.tape import on_replay, replayed
from .base import Layer

__all__ = ["BatchNorm1D", "BatchNorm2D", "BatchNormalization", "LayerNorm"]


class _BatchNorm(Layer):
    keras_aliases = {"epsilon": "eps"}  # Keras's name; its momentum means 1 - ours: not one
    _state_names = ("running_mean", "running_var")  # PyTorch's buffers: get_weights lists them after the weights

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
            inv_std = own(1.0) / np.sqrt(var + own(float(self.eps)))  # (own: the layer's constants, observe.own)
            on_replay(self._update_running, mean, var, m)  # values only (again at each autoprop.function replay)
        else:  # running statistics: constants for the tape, the layer's own (state without gradient, as
            # PyTorch's buffers: never a value the user logged, so the partial-escape check passes them);
            # read again at each replay of autoprop.function (tape.replayed)
            xc = x - replayed(lambda: own(self.running_mean.reshape(bshape)))
            inv_std = replayed(lambda: own((1.0 / np.sqrt(self.running_var + self.eps)).reshape(bshape)))
        return xc * (inv_std * gamma) + beta

    def _update_running(self, mean, var, m):
        """Set the running statistics from a training batch's ``mean`` and biased ``var`` (arrays)."""
        self.running_mean, self.running_var = self._running_stats(mean.reshape(-1), var.reshape(-1), m)

    def _running_stats(self, mean, var, m):
        """The new running mean and variance after a training batch of ``m`` values per
        feature with ``mean`` and biased ``var``: PyTorch's rule (:func:`update_running_stats`)."""
        return update_running_stats(self.running_mean, self.running_var, mean, var, m, self.momentum)


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
        xhat = xc * (own(1.0) / np.sqrt(var + own(float(self.eps))))  # (own: the layer's constants)
        return xhat * self.variables["gamma"] + self.variables["beta"]


class BatchNormalization(_BatchNorm):
    """Keras's ``BatchNormalization``: the batch norm of :class:`BatchNorm1D`/:class:`BatchNorm2D`
    with Keras's arguments, defaults and running-statistics rule, built on the first call.

    The statistics are over every axis but ``axis`` (the features: ``-1``, channels last, by
    default; ``axis=1`` on NCHW images is :class:`BatchNorm2D`). Where the names differ from
    ours: ``epsilon`` is our ``eps``, and Keras's ``momentum`` weighs the old running value,
    ``1 - momentum`` ours::

        moving_mean     = momentum * moving_mean     + (1 - momentum) * mean
        moving_variance = momentum * moving_variance + (1 - momentum) * var

    with the biased batch variance ``var`` (Keras; PyTorch's rule, ours, stores the unbiased
    one). ``gamma`` starts at 1, ``beta`` at 0, ``moving_mean`` at 0, ``moving_variance`` at 1.
    Training uses the batch's statistics, inference the moving ones; a frozen layer
    (``trainable=False``) runs in inference mode, as Keras's.

    As in Keras, ``moving_mean`` and ``moving_variance`` are non-trainable Variables (made by
    ``build``, updated with ``assign`` by each training call): ``layer.weights`` is ``[gamma,
    beta, moving_mean, moving_variance]``, ``non_trainable_weights`` the last two, so copying
    ``weights`` (``for s, d in zip(a.weights, b.weights): d.assign(s)``) copies the inference
    function. ``running_mean``/``running_var`` (the names of :class:`BatchNorm1D`) read their
    values as arrays.

    Parameters
    ----------
    axis : int, default -1
        The feature axis of the input; a list of axes is refused (not implemented).
    momentum : float in [0, 1], default 0.99
    epsilon : float > 0, default 0.001
    center, scale : True
        Keras's ``center=False`` (no ``beta``) and ``scale=False`` (no ``gamma``) are refused:
        this layer always has both.
    name, trainable, dtype
        Keras's layer keywords (:class:`~autoprop.layers.Layer`).

    Raises
    ------
    TypeError, ValueError
        An argument of the wrong type or out of range, ``center``/``scale`` not True, an
        unknown keyword (with its close match); at the first call, an input without the
        axis ``axis``.

    Examples
    --------
    >>> import numpy as np, autoprop as ap
    >>> bn = ap.layers.BatchNormalization()
    >>> x = np.array([[1.0, 10.0], [3.0, 30.0]])
    >>> y = bn(x, training=True)
    >>> np.round(y.numpy(), 3).tolist(), bn.moving_mean.numpy().round(3).tolist()
    ([[-1.0, -1.0], [1.0, 1.0]], [0.02, 0.2])
    >>> [v.name for v in bn.weights], [v.name for v in bn.non_trainable_weights]
    (['gamma', 'beta', 'moving_mean', 'moving_variance'], ['moving_mean', 'moving_variance'])
    """

    _state_names = ()  # its statistics are the weights moving_mean, moving_variance

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True, *, name=None,
                 trainable=True, dtype=np.float64):
        Layer.__init__(self, name=name, trainable=trainable, dtype=dtype)
        name = type(self).__name__
        if self.dtype not in (np.float64, np.float32):
            raise TypeError(f"{name}: dtype must be float64 or float32; got {self.dtype}")
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"{name}: axis must be one int (the feature axis); got {axis!r}: a list "
                            "of axes, which Keras allows, is not implemented here")
        for flag, value in (("center", center), ("scale", scale)):
            if value is not True:
                raise ValueError(f"{name}: {flag}={value!r} is not implemented: this layer always "
                                 "has gamma (scale) and beta (center); leave it True")
        self.axis = int(axis)
        self.momentum = check_scalar(momentum, "momentum", name, low=0.0, high=1.0)
        self.eps = check_scalar(epsilon, "epsilon", name, low=0.0, low_inclusive=False)

    @property
    def epsilon(self):
        """float: Keras's name of ``eps``."""
        return self.eps

    def build(self, input_shape):
        """Make ``gamma``, ``beta`` and the non-trainable ``moving_mean``, ``moving_variance``
        (Variables, Keras's four weights in Keras's order) for the features on ``axis`` of
        ``input_shape``."""
        ndim = len(input_shape)
        if not -ndim <= self.axis < ndim or ndim < 2:
            raise ValueError(f"{self!r}: axis={self.axis} is not an axis of an input of shape "
                             f"{tuple(input_shape)} (a batch axis and at least one more are needed)")
        ax = self.axis % ndim
        if ax == 0:
            raise ValueError(f"{self!r}: axis={self.axis} is the batch axis of an input of shape "
                             f"{tuple(input_shape)}; give the feature axis (-1: the last)")
        self.num_features = int(input_shape[ax])
        self._axes = tuple(i for i in range(ndim) if i != ax)
        self._bshape = tuple(-1 if i == ax else 1 for i in range(ndim))
        self._shape = ("batch",) + tuple(self.num_features if i == ax else f"axis {i}"
                                         for i in range(1, ndim))
        self.gamma = self.add_weight((self.num_features,), "ones", name="gamma")
        self.beta = self.add_weight((self.num_features,), "zeros", name="beta")
        self.moving_mean = self.add_weight((self.num_features,), "zeros", trainable=False,
                                           name="moving_mean")
        self.moving_variance = self.add_weight((self.num_features,), "ones", trainable=False,
                                               name="moving_variance")

    @property
    def _spec(self):
        return self._shape

    @property
    def running_mean(self):
        """ndarray: the value of ``moving_mean`` (a copy), :class:`BatchNorm1D`'s name."""
        return self.moving_mean.numpy()

    @running_mean.setter
    def running_mean(self, value):
        """Assign ``value`` to ``moving_mean`` (a training call's update: the Variable stays the same)."""
        self.moving_mean.assign(value)

    @property
    def running_var(self):
        """ndarray: the value of ``moving_variance`` (a copy), :class:`BatchNorm1D`'s name."""
        return self.moving_variance.numpy()

    @running_var.setter
    def running_var(self, value):
        """Assign ``value`` to ``moving_variance`` (a training call's update)."""
        self.moving_variance.assign(value)

    def _running_stats(self, mean, var, m):
        keep = self.momentum  # Keras's rule: its momentum weighs the old value, var is biased
        return (keep * self.moving_mean._value + (1 - keep) * mean,
                keep * self.moving_variance._value + (1 - keep) * var)
