"""Dense and elementwise layers, forward only (the tape derives backward).

Twins of ``manualprop/layers.py``: same constructor arguments, same initial
parameters for the same ``rng`` (both call :mod:`manualprop.init`).
"""

from __future__ import annotations

import numpy as np

from manualprop._validation import (
    check_axis,
    check_float_dtype,
    check_int,
    check_option,
    check_positive_int,
    check_scalar,
)
from manualprop.init import linear_params

from ..core import registry as R
from ..core.tensor import Variable
from .base import Layer

__all__ = [
    "ELU", "Flatten", "GELU", "LeakyReLU", "Linear", "LogSoftmax", "ReLU", "Sigmoid",
    "Softmax", "Softplus", "Tanh",
]


class Linear(Layer):
    """Fully connected layer ``y = x @ W.T + b`` (twin of :class:`manualprop.Linear`).

    Parameters
    ----------
    in_features, out_features : int
    rng : None, int or numpy.random.Generator
        Same initialisation as manualprop (``manualprop.init.linear_params``).
    dtype : {np.float64, np.float32}

    Shapes: x (batch, in_features) -> y (batch, out_features); W (out, in), b (out,).
    Source: ``lessons/01-linear-layer.md``.
    """

    def __init__(self, in_features, out_features, rng=None, dtype=np.float64):
        super().__init__()
        self.in_features = check_positive_int(in_features, "in_features", "Linear")
        self.out_features = check_positive_int(out_features, "out_features", "Linear")
        self.dtype = check_float_dtype(dtype, "Linear")
        p = linear_params(self.in_features, self.out_features, rng, self.dtype)
        self.variables = {k: Variable(v, name=k) for k, v in p.items()}

    def _repr_args(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}"

    def call(self, x, training=False):
        x = self._input(x, shape=("batch", self.in_features), dtype=self.dtype)
        return x @ self.variables["W"].T + self.variables["b"]


class ReLU(Layer):
    """``y = max(x, 0)``; relu'(0) = 0. Source: ``lessons/02-activations.md``."""

    def call(self, x, training=False):
        return R.relu(self._input(x))


class Sigmoid(Layer):
    """``y = 1 / (1 + exp(-x))``, stable for large |x|. Source: ``lessons/02-activations.md``."""

    def call(self, x, training=False):
        return R.sigmoid(self._input(x))


class Tanh(Layer):
    """``y = tanh(x)``. Source: ``lessons/02-activations.md``."""

    def call(self, x, training=False):
        return R.tanh(self._input(x))


class LeakyReLU(Layer):
    """``y = x if x > 0 else negative_slope * x``; slope at 0 is ``negative_slope``
    (as PyTorch and the manual twin). Source: ``lessons/02-activations.md``."""

    def __init__(self, negative_slope=0.01):
        super().__init__()
        self.negative_slope = check_scalar(negative_slope, "negative_slope", "LeakyReLU", low=0.0)

    def _repr_args(self) -> str:
        return f"negative_slope={self.negative_slope}"

    def call(self, x, training=False):
        x = self._input(x)
        return R.where(x > 0, x, self.negative_slope * x)


class ELU(Layer):
    """``y = x`` for x > 0, ``alpha * expm1(x)`` otherwise.

    ``expm1`` is applied to ``min(x, 0)``: ``where`` differentiates BOTH branches, and
    ``expm1(800)`` = inf would turn the unselected branch's ``0 * inf`` into NaN.
    Source: ``lessons/02-activations.md``.
    """

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = check_scalar(alpha, "alpha", "ELU", low=0.0)

    def _repr_args(self) -> str:
        return f"alpha={self.alpha}"

    def call(self, x, training=False):
        x = self._input(x)
        return R.where(x > 0, x, self.alpha * R.expm1(R.minimum(x, 0.0)))


_SQRT_2 = float(np.sqrt(2.0))
_SQRT_2_OVER_PI = float(np.sqrt(2.0 / np.pi))


class GELU(Layer):
    """``y = x * Phi(x)``: exact (``erfc`` form) or PyTorch's tanh approximation.

    ``approximate="none"``: ``Phi(x) = erfc(-x / sqrt(2)) / 2``;
    ``approximate="tanh"``: ``y = x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2``.
    Source: ``lessons/02-activations.md``.
    """

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = check_option(approximate, "approximate", "GELU", ("none", "tanh"))

    def _repr_args(self) -> str:
        return f"approximate={self.approximate!r}"

    def call(self, x, training=False):
        x = self._input(x)
        if self.approximate == "none":
            return x * (0.5 * R.erfc(x * (-1.0 / _SQRT_2)))
        return 0.5 * x * (1.0 + R.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


class Softplus(Layer):
    """``y = log(1 + e^x)`` as ``logaddexp(0, x)``: stable, derivative ``sigmoid(x)``
    everywhere (0.5 at 0). Source: ``lessons/02-activations.md``."""

    def call(self, x, training=False):
        return R.logaddexp(0.0, self._input(x))


class Softmax(Layer):
    """Softmax along ``axis`` (shifted by the max: no overflow).
    Source: ``lessons/03-softmax-cross-entropy.md``."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = check_int(axis, "axis", type(self).__name__)

    def _repr_args(self) -> str:
        return f"axis={self.axis}"

    def call(self, x, training=False):
        x = self._input(x, min_ndim=1)
        return R.softmax(x, axis=check_axis(self.axis, x.ndim, repr(self)))


class LogSoftmax(Softmax):
    """``x - logsumexp(x)`` along ``axis``. Source: ``lessons/03-softmax-cross-entropy.md``."""

    def call(self, x, training=False):
        x = self._input(x, min_ndim=1)
        return R.log_softmax(x, axis=check_axis(self.axis, x.ndim, repr(self)))


class Flatten(Layer):
    """(N, d1, d2, ...) -> (N, d1*d2*...), as ``torch.nn.Flatten()``; (N,) -> (N, 1).
    Source: ``lessons/07-sequential.md``."""

    def call(self, x, training=False):
        x = self._input(x, min_ndim=1)
        n = x.shape[0]
        return x.reshape((n, int(np.prod(x.shape[1:], dtype=np.int64))))
