"""Dense and elementwise layers, forward only (the tape derives backward).

Twins of ``manualprop/layers.py``: same constructor arguments, same initial
parameters for the same ``rng`` (both call :mod:`manualprop.init`).
"""

from __future__ import annotations

import numpy as np

from manualprop._validation import check_float_dtype, check_positive_int
from manualprop.init import linear_params

from ..core import registry as R
from ..core.tensor import Variable
from .base import Layer

__all__ = ["Linear", "ReLU", "Sigmoid", "Tanh"]


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
