"""Dense and elementwise layers, forward only (the tape derives backward).

Twins of ``manualprop/layers.py``: same constructor arguments, same initial
parameters for the same ``rng`` (both call :mod:`manualprop.init`).
"""

from __future__ import annotations

import numpy as np

import manualprop as mp
from manualprop._validation import (
    Where,
    check_axis,
    float_ss,
)

from ..core import registry as R
from ..core.observe import own
from ..core.tensor import _TRACERS, Tensor
from .base import BOUNDED_OUTPUT, LEAF_LAYERS, Layer, check_at_replay

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

    manual_class = mp.Linear

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.Linear``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        # check_array's checks, their common case inline as in manualprop.Linear.forward (a
        # float ndarray of the layer's dtype, (batch, in_features), finite); any doubt: in full
        v = x._value if isinstance(x, Tensor) else x
        if float_ss(v) is None or v.dtype is not self.dtype or v.ndim != 2 or v.shape[1] != self.in_features:
            x = self._input(x, shape=("batch", self.in_features), dtype=self.dtype)
        elif type(x) is np.ndarray:
            x = Tensor(x)
        elif _TRACERS:  # (autoprop.function: the values checked again at each replay)
            check_at_replay(Where(self, "__call__", "autoprop.layers."), x, "x")
        # one recorded op for the whole layer (the ``linear`` primitive): its VJPs are the
        # hand-derived dX = g @ W, dW = g.T @ x, db = g.sum(axis=0) of lesson 01
        return R.linear(x, self.variables["W"], self.variables["b"])


class ReLU(Layer):
    """``y = max(x, 0)``; relu'(0) = 0. Source: ``lessons/02-activations.md``."""

    manual_class = mp.ReLU

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.ReLU``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        return R.relu(self._input(x))


class Sigmoid(Layer):
    """``y = 1 / (1 + exp(-x))``, stable for large |x|. Source: ``lessons/02-activations.md``."""

    manual_class = mp.Sigmoid

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.Sigmoid``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        return R.sigmoid(self._input(x))


class Tanh(Layer):
    """``y = tanh(x)``. Source: ``lessons/02-activations.md``."""

    manual_class = mp.Tanh

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.Tanh``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        if type(x) is Tensor and not _TRACERS and float_ss(x._value) is not None:
            return R.tanh(x)  # _input's common case inline (a Tensor of finite floats): one frame fewer
        return R.tanh(self._input(x))


class LeakyReLU(Layer):
    """``y = x if x > 0 else negative_slope * x``; slope at 0 is ``negative_slope``
    (as PyTorch and the manual twin). Source: ``lessons/02-activations.md``."""

    manual_class = mp.LeakyReLU

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.LeakyReLU``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x = self._input(x)
        return R.where(x > 0, x, own(float(self.negative_slope)) * x)  # (own: a layer's constant, never a logged value)


class ELU(Layer):
    """``y = x`` for x > 0, ``alpha * expm1(x)`` otherwise.

    ``expm1`` is applied to ``min(x, 0)``, written ``where(x > 0, 0, x)`` so that the
    derivative at 0 is ``alpha`` (``minimum``'s even split at the tie would give
    ``alpha / 2``), and so that ``expm1(800) = inf`` never enters the unselected branch.
    Source: ``lessons/02-activations.md``.
    """

    manual_class = mp.ELU

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.ELU``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x = self._input(x)
        return R.where(x > 0, x, own(float(self.alpha)) * R.expm1(R.where(x > 0, _ZERO, x)))


# the layers' own constants (observe.own): a float() the user logged mid-tape cannot be one of them, so the
# partial-escape check does not count them (review26a: LayerNorm, LeakyReLU, GELU, ELU, Softplus were refused)
_ZERO, _HALF, _ONE = own(0.0), own(0.5), own(1.0)
_MINUS_INV_SQRT_2 = own(-1.0 / float(np.sqrt(2.0)))
_SQRT_2_OVER_PI = own(float(np.sqrt(2.0 / np.pi)))
_GELU_CUBIC = own(0.044715)


class GELU(Layer):
    """``y = x * Phi(x)``: exact (``erfc`` form) or PyTorch's tanh approximation.

    ``approximate="none"``: ``Phi(x) = erfc(-x / sqrt(2)) / 2``;
    ``approximate="tanh"``: ``y = x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2``.
    Source: ``lessons/02-activations.md``.
    """

    manual_class = mp.GELU

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.GELU``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x = self._input(x)
        if self.approximate == "none":
            return x * (_HALF * R.erfc(x * _MINUS_INV_SQRT_2))
        return _HALF * x * (_ONE + R.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)))


class Softplus(Layer):
    """``y = log(1 + e^x)`` as ``logaddexp(0, x)``: stable, derivative ``sigmoid(x)``
    everywhere (0.5 at 0). Source: ``lessons/02-activations.md``."""

    manual_class = mp.Softplus

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.Softplus``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        return R.logaddexp(_ZERO, self._input(x))


class Softmax(Layer):
    """Softmax along ``axis`` (shifted by the max: no overflow).
    Source: ``lessons/03-softmax-cross-entropy.md``."""

    manual_class = mp.Softmax

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.Softmax``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x = self._input(x, min_ndim=1)
        return R.softmax(x, axis=check_axis(self.axis, x.ndim, repr(self)))


class LogSoftmax(Softmax):
    """``x - logsumexp(x)`` along ``axis``. Source: ``lessons/03-softmax-cross-entropy.md``."""

    manual_class = mp.LogSoftmax

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.LogSoftmax``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x = self._input(x, min_ndim=1)
        return R.log_softmax(x, axis=check_axis(self.axis, x.ndim, repr(self)))


class Flatten(Layer):
    """(N, d1, d2, ...) -> (N, d1*d2*...), as ``torch.nn.Flatten()``; (N,) -> (N, 1).
    Source: ``lessons/07-sequential.md``."""

    manual_class = mp.Flatten

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.Flatten``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x = self._input(x, min_ndim=1)
        n = x.shape[0]
        return x.reshape((n, int(np.prod(x.shape[1:], dtype=np.int64))))


BOUNDED_OUTPUT.update((Tanh, Sigmoid, Softmax))  # |y| <= 1 of the finite input each checked
LEAF_LAYERS.update((Linear, ReLU, Sigmoid, Tanh, LeakyReLU, ELU, GELU, Softplus, Softmax, LogSoftmax,
                    Flatten))
