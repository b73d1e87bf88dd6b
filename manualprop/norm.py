"""Normalisation layers with hand-derived backward passes: batch norm and layer norm.

Both normalise, then scale and shift::

    xhat = (X - mean) / sqrt(var + eps)        # biased variance (divide by m)
    Y    = gamma * xhat + beta

and differ only in the axes the statistics run over: the batch (and, for
images, the pixels) for batch norm, the trailing feature axes of each sample
for layer norm. Because ``mean`` and ``var`` depend on every input, the
gradient reaches ``X`` along three paths (directly, through the mean, through
the variance), and they collapse to the compact formula, with ``m`` the
number of values per statistic and ``dxhat = dY * gamma``::

    dX = (1 / (m sqrt(var + eps))) * (m dxhat - sum(dxhat) - xhat * sum(dxhat * xhat))

Sources: ``lessons/22-batchnorm.md``, ``lessons/23-layernorm.md``.
"""

from __future__ import annotations

import numbers
import sys
import warnings

import numpy as np

from ._validation import (
    check_array,
    check_float_dtype,
    check_positive_int,
    check_scalar,
    check_stat_count,
)
from .init import norm_params
from .layers import Layer

__all__ = ["BatchNorm1D", "BatchNorm2D", "LayerNorm", "update_running_stats", "MomentumConventionWarning"]

#: A batch norm's ``momentum`` above it warns (:class:`MomentumConventionWarning`): PyTorch's default is 0.1, Keras's
#: 0.99 (which means 0.01 here).
KERAS_LIKE_MOMENTUM = 0.5


class MomentumConventionWarning(UserWarning):
    """A batch norm built with ``momentum`` above :data:`KERAS_LIKE_MOMENTUM`: here, as in PyTorch, ``momentum``
    weighs the new batch, while Keras's weighs the old running value (its 0.99 is 0.01 here; newuser24 L10: a
    Keras user's ``BatchNorm1D(3, momentum=0.99)`` silently kept 1% of the running statistics per step). Silence it
    with ``warnings.filterwarnings("ignore", category=MomentumConventionWarning)`` when PyTorch's meaning is meant."""


def _momentum_convention(momentum: float, name: str) -> None:
    """Warn (:class:`MomentumConventionWarning`) when ``momentum`` > :data:`KERAS_LIKE_MOMENTUM`, naming both
    conventions and the value that means Keras's; ``name`` is the layer's class name."""
    if momentum <= KERAS_LIKE_MOMENTUM:
        return
    keep = 1 - momentum
    warnings.warn(
        f"{name}(momentum={momentum:g}): here momentum weighs the NEW batch, as PyTorch's does "
        f"(running = (1 - momentum) * running + momentum * batch), so {momentum:g} keeps only {keep:.3g} of the "
        f"running statistics at each training step. Keras's momentum weighs the OLD value (moving = momentum * "
        f"moving + (1 - momentum) * batch): Keras's momentum={momentum:g} is momentum={keep:.3g} here (or use "
        f"autoprop.layers.BatchNormalization(momentum={momentum:g}), which takes Keras's meaning). If PyTorch's "
        f"meaning is intended, silence this with warnings.filterwarnings('ignore', "
        f"category=manualprop.norm.MomentumConventionWarning).", MomentumConventionWarning, stacklevel=_caller())


def _caller() -> int:
    """The ``stacklevel`` of the first frame outside manualprop and autoprop (the line that built the layer, through
    autoprop's twin constructors too)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] in ("manualprop", "autoprop"):
        frame, level = frame.f_back, level + 1
    return level


def update_running_stats(running_mean, running_var, mean, var, count, momentum):
    """PyTorch's running-statistics update (shared by manualprop and autoprop).

    ::

        running_mean = (1 - momentum) * running_mean + momentum * mean
        running_var  = (1 - momentum) * running_var  + momentum * var * count / (count - 1)

    ``var`` is the biased batch variance used for normalising; the running
    variance stores the unbiased one (Bessel's correction), as PyTorch.

    Returns
    -------
    (ndarray, ndarray)
        New arrays (the old ones are not changed).
    """
    unbiased = var * (count / (count - 1))
    return (
        (1 - momentum) * running_mean + momentum * mean,
        (1 - momentum) * running_var + momentum * unbiased,
    )


class _BatchNorm(Layer):
    """Shared code of BatchNorm1D/2D; subclasses set ``_axes`` and ``_spec``."""

    _axes: tuple = (0,)
    #: State, not parameters (PyTorch's buffers): ``Sequential.get_weights`` lists them after the weights.
    _state_names = ("running_mean", "running_var")

    def __init__(self, num_features, eps=1e-5, momentum=0.1, dtype=np.float64):
        super().__init__()
        name = type(self).__name__
        self.num_features = check_positive_int(num_features, "num_features", name)
        self.eps = check_scalar(eps, "eps", name, low=0.0, low_inclusive=False)
        self.momentum = check_scalar(momentum, "momentum", name, low=0.0, high=1.0)
        _momentum_convention(self.momentum, name)
        self.dtype = check_float_dtype(dtype, name)
        self.params = norm_params(self.num_features, self.dtype)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._declare()
        self.running_mean = np.zeros(self.num_features, self.dtype)
        self.running_var = np.ones(self.num_features, self.dtype)

    def _repr_args(self) -> str:
        s = f"{self.num_features}"
        if self.eps != 1e-5:
            s += f", eps={self.eps}"
        if self.momentum != 0.1:
            s += f", momentum={self.momentum}"
        return s

    def _bcast(self, v):
        """(C,) -> broadcastable against X: (1, C) or (1, C, 1, 1)."""
        return v.reshape(self._bshape)

    def forward(self, X, training=False):
        """Normalise with batch statistics (training) or running statistics (inference)."""
        self._check_params("forward")
        where = self._where("forward")
        X = check_array(X, where, shape=self._spec, dtype=self.dtype)
        axes = self._axes
        if training:
            m = check_stat_count(X.shape, axes, where)
            mean = X.mean(axis=axes, keepdims=True)
            xc = X - mean
            var = np.mean(xc * xc, axis=axes, keepdims=True)  # biased: divide by m
            inv_std = 1.0 / np.sqrt(var + self.eps)
            self.running_mean, self.running_var = update_running_stats(
                self.running_mean, self.running_var, mean.reshape(-1), var.reshape(-1), m,
                self.momentum,
            )
        else:
            m = None
            xc = X - self._bcast(self.running_mean)
            inv_std = self._bcast(1.0 / np.sqrt(self.running_var + self.eps))
        xhat = xc * inv_std
        Y = xhat * self._bcast(self.params["gamma"]) + self._bcast(self.params["beta"])
        self.cache = {
            "xhat": xhat, "inv_std": inv_std, "m": m, "out_shape": Y.shape, "dtype": Y.dtype,
        }
        return Y

    def backward(self, dY):
        """Fill ``grads``; return dX (three-path formula in training, a scale in inference)."""
        self._check_params("backward")
        dY = self._check_dY(dY)
        xhat, inv_std, m = self.cache["xhat"], self.cache["inv_std"], self.cache["m"]
        axes = self._axes
        dbeta = dY.sum(axis=axes)
        dgamma = np.sum(dY * xhat, axis=axes)
        self.grads["beta"] = dbeta
        self.grads["gamma"] = dgamma
        k = self._bcast(self.params["gamma"]) * inv_std  # d Y / d X along the direct path
        if m is None:  # inference: mean and var are constants, one path
            return dY * k
        # training: dxhat = dY*gamma, so sum(dxhat) = gamma*dbeta, sum(dxhat*xhat) = gamma*dgamma
        return (k / m) * (m * dY - self._bcast(dbeta) - xhat * self._bcast(dgamma))


class BatchNorm1D(_BatchNorm):
    r"""Batch normalisation of (N, C) features (PyTorch's ``nn.BatchNorm1d`` on 2-D input).

    .. math::

        \hat x_{nc} = \frac{x_{nc} - \mu_c}{\sqrt{\sigma_c^2 + \epsilon}}, \qquad
        y_{nc} = \gamma_c \hat x_{nc} + \beta_c

    Training (``training=True``): ``mu``, ``sigma^2`` are the batch mean and
    BIASED variance over ``n`` (``m = N`` values per channel), and the running
    statistics are updated as PyTorch (``momentum`` weights the new batch, the
    running variance gets the UNBIASED batch variance)::

        running_mean = (1 - momentum) running_mean + momentum mu
        running_var  = (1 - momentum) running_var  + momentum sigma^2 m / (m - 1)

    Inference (``training=False``, the default): the running statistics are
    used and are constants for backward.

    Backward in training, the compact three-path formula (derived in
    ``lessons/22-batchnorm.md``)::

        dbeta  = sum_n dY                      (C,)
        dgamma = sum_n dY * xhat               (C,)
        dX     = gamma / (m sqrt(var + eps)) * (m dY - dbeta - xhat * dgamma)

    in inference ``dX = dY * gamma / sqrt(running_var + eps)``.

    Parameters
    ----------
    num_features : int
        ``C``.
    eps : float > 0, default 1e-5
    momentum : float in [0, 1], default 0.1
        The weight of the new batch in the running statistics (PyTorch's meaning; Keras's ``momentum`` is ``1 -``
        this one). Above 0.5 a :class:`MomentumConventionWarning` says so.
    dtype : {np.float64, np.float32}

    Attributes
    ----------
    params, grads : dict
        ``"gamma"`` (PyTorch's ``weight``, starts at 1) and ``"beta"``
        (``bias``, starts at 0), shape (C,).
    running_mean, running_var : ndarray, shape (C,)
        State, not parameters (no gradient): start at 0 and 1.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Bad hyperparameters; X not (N, C) finite float of the params' dtype;
        N = 1 in training; ``dY`` of the wrong shape; backward before forward.

    Examples
    --------
    >>> import numpy as np
    >>> bn = BatchNorm1D(1)
    >>> bn.forward(np.array([[1.0], [3.0]]), training=True)   # mean 2, var 1
    array([[-0.999995],
           [ 0.999995]])
    >>> bn.running_mean, bn.running_var                       # unbiased var 2
    (array([0.2]), array([1.1]))
    >>> bn.backward(np.array([[1.0], [1.0]]))                 # a shift does nothing
    array([[0.],
           [0.]])
    """

    _axes = (0,)
    _bshape = (1, -1)

    @property
    def _spec(self):
        return ("batch", self.num_features)


class BatchNorm2D(_BatchNorm):
    r"""Batch normalisation of NCHW images per channel (PyTorch's ``nn.BatchNorm2d``).

    As :class:`BatchNorm1D` with the statistics over ``(n, h, w)``, so each
    channel's mean and variance average ``m = N*H*W`` values; ``gamma``,
    ``beta`` and the running statistics have shape (C,) and broadcast as
    (1, C, 1, 1). Backward in training::

        dbeta  = sum_{n,h,w} dY,   dgamma = sum_{n,h,w} dY * xhat
        dX     = gamma / (m sqrt(var + eps)) * (m dY - dbeta - xhat * dgamma)

    Parameters
    ----------
    num_features : int
        ``C``.
    eps : float > 0, default 1e-5
    momentum : float in [0, 1], default 0.1
        The weight of the new batch in the running statistics (PyTorch's meaning; Keras's ``momentum`` is ``1 -``
        this one). Above 0.5 a :class:`MomentumConventionWarning` says so.
    dtype : {np.float64, np.float32}

    Notes
    -----
    Shapes: X (N, C, H, W) -> Y (N, C, H, W). Source: ``lessons/22-batchnorm.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        As :class:`BatchNorm1D`; X must be (N, C, H, W).

    Examples
    --------
    >>> import numpy as np
    >>> bn = BatchNorm2D(2)
    >>> X = np.random.default_rng(0).normal(3.0, 2.0, size=(4, 2, 5, 5))
    >>> Y = bn.forward(X, training=True)
    >>> bool(np.allclose(Y.mean(axis=(0, 2, 3)), 0)), np.round(Y.var(axis=(0, 2, 3)), 3)
    (True, array([1., 1.]))
    """

    _axes = (0, 2, 3)
    _bshape = (1, -1, 1, 1)

    @property
    def _spec(self):
        return ("batch", self.num_features, "height", "width")


class LayerNorm(Layer):
    r"""Layer normalisation over the trailing ``normalized_shape`` axes (PyTorch's ``nn.LayerNorm``).

    For every sample (every index of the leading axes) separately:

    .. math::

        \hat x = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}, \qquad
        y = \gamma \odot \hat x + \beta

    with ``mu``, ``sigma^2`` the mean and biased variance over the
    ``m = prod(normalized_shape)`` trailing values. Same in training and
    inference (no running statistics). ``gamma``/``beta`` have shape
    ``normalized_shape`` (elementwise affine). Backward (``A`` = the trailing
    axes, ``B`` = the leading ones)::

        dbeta  = sum_B dY,   dgamma = sum_B dY * xhat          normalized_shape
        dxhat  = dY * gamma
        dX     = (m dxhat - sum_A dxhat - xhat * sum_A(dxhat * xhat)) / (m sqrt(var + eps))

    Parameters
    ----------
    normalized_shape : int or tuple of int
        The trailing shape of X that is normalised.
    eps : float > 0, default 1e-5
    dtype : {np.float64, np.float32}

    Notes
    -----
    Shapes: X (*, *normalized_shape) -> Y of the same shape.
    Source: ``lessons/23-layernorm.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Bad hyperparameters; X whose trailing shape is not ``normalized_shape``,
        non-float or non-finite; ``dY`` of the wrong shape; backward before forward.

    Examples
    --------
    >>> import numpy as np
    >>> ln = LayerNorm(2)
    >>> ln.forward(np.array([[1.0, 3.0], [10.0, 10.0]]))
    array([[-0.999995,  0.999995],
           [ 0.      ,  0.      ]])
    """

    def __init__(self, normalized_shape, eps=1e-5, dtype=np.float64):
        super().__init__()
        name = type(self).__name__
        if isinstance(normalized_shape, numbers.Integral) and not isinstance(normalized_shape, bool):
            normalized_shape = (normalized_shape,)
        if not isinstance(normalized_shape, (tuple, list)) or not normalized_shape:
            raise TypeError(
                f"{name}: normalized_shape must be a positive int or a non-empty tuple of "
                f"positive ints; got {type(normalized_shape).__name__} {normalized_shape!r}"
            )
        self.normalized_shape = tuple(
            check_positive_int(n, "normalized_shape", name) for n in normalized_shape
        )
        self.eps = check_scalar(eps, "eps", name, low=0.0, low_inclusive=False)
        self.dtype = check_float_dtype(dtype, name)
        self.params = norm_params(self.normalized_shape, self.dtype)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._declare()

    def _repr_args(self) -> str:
        s = f"{self.normalized_shape}"
        return s if self.eps == 1e-5 else s + f", eps={self.eps}"

    def forward(self, X, training=False):
        """Normalise each sample over its trailing ``normalized_shape`` axes."""
        self._check_params("forward")
        where = self._where("forward")
        k = len(self.normalized_shape)
        X = check_array(X, where, min_ndim=k, dtype=self.dtype)
        X = check_array(X, where, shape=("*",) * (X.ndim - k) + self.normalized_shape)
        axes = tuple(range(X.ndim - k, X.ndim))
        mean = X.mean(axis=axes, keepdims=True)
        xc = X - mean
        var = np.mean(xc * xc, axis=axes, keepdims=True)
        inv_std = 1.0 / np.sqrt(var + self.eps)
        xhat = xc * inv_std
        Y = xhat * self.params["gamma"] + self.params["beta"]
        self.cache = {
            "xhat": xhat, "inv_std": inv_std, "axes": axes, "out_shape": Y.shape, "dtype": Y.dtype,
        }
        return Y

    def backward(self, dY):
        """Fill ``grads``; return dX by the compact formula over the normalised axes."""
        self._check_params("backward")
        dY = self._check_dY(dY)
        xhat, inv_std, axes = self.cache["xhat"], self.cache["inv_std"], self.cache["axes"]
        lead = tuple(range(dY.ndim - len(axes)))
        m = int(np.prod(self.normalized_shape))
        self.grads["beta"] = dY.sum(axis=lead) if lead else dY.copy()
        self.grads["gamma"] = np.sum(dY * xhat, axis=lead) if lead else dY * xhat
        dxhat = dY * self.params["gamma"]
        s1 = dxhat.sum(axis=axes, keepdims=True)
        s2 = np.sum(dxhat * xhat, axis=axes, keepdims=True)
        return (inv_std / m) * (m * dxhat - s1 - xhat * s2)
