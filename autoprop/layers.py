"""manualprop's layers written forward-only with tape operations (Keras style).

Each layer has the same constructor arguments as its manualprop twin and, for the
same ``rng``, the same initial parameters (both call :mod:`manualprop.init`).
``layer(x, training=False)`` returns a Tensor; ``layer.variables`` maps the same keys
as the manual layer's ``params`` to :class:`~autoprop.Variable` objects. There is no
backward here: the tape derives it (compare ``manualprop/layers.py``, where it is
written by hand, and ``lessons/01-linear-layer.md`` for the derivation).
"""

from __future__ import annotations

import numpy as np

from manualprop._validation import check_array, check_float_dtype, check_positive_int
from manualprop.init import linear_params

from .core import registry as R
from .core.tensor import Tensor, Variable

__all__ = ["Layer", "Linear", "ReLU", "Sequential", "Sigmoid", "Tanh"]


class Layer:
    """Base class: ``__call__(x, training=False)``, ``variables``, ``trainable_variables``.

    Subclasses implement ``call(x, training)``.
    """

    def __init__(self):
        self.variables: dict[str, Variable] = {}

    def __call__(self, x, training=False):
        return self.call(x, training=training)

    def call(self, x, training=False):  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def trainable_variables(self):
        """list of Variable: the trainable variables, in ``variables`` key order."""
        return [v for v in self.variables.values() if v.trainable]

    @property
    def trainable_weights(self):
        """Keras's name for :attr:`trainable_variables`."""
        return self.trainable_variables

    def _repr_args(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _input(self, x, **spec):
        """Check ``x`` (one place: manualprop's validation) and return it as a Tensor."""
        value = x._value if isinstance(x, Tensor) else x
        check_array(value, f"autoprop.layers.{self!r}.__call__", "x", **spec)
        return x if isinstance(x, Tensor) else Tensor(x)


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


class Sequential(Layer):
    """Layers applied in order (twin of :class:`manualprop.Sequential`).

    ``variables`` keys are ``"<index>.<name>"`` (``"0.W"``, ``"0.b"``, ...), the same
    as the manual container's ``params``.
    """

    def __init__(self, *layers):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)):
            layers = tuple(layers[0])
        for i, layer in enumerate(layers):
            if not callable(layer):
                raise TypeError(
                    f"Sequential: layer {i} must be callable as layer(x, training=...); "
                    f"got {type(layer).__name__}"
                )
        self.layers = list(layers)

    @property
    def variables(self):
        out = {}
        for i, layer in enumerate(self.layers):
            for k, v in getattr(layer, "variables", {}).items():
                out[f"{i}.{k}"] = v
        return out

    @variables.setter
    def variables(self, value):  # Layer.__init__ assigns an empty dict
        pass

    def call(self, x, training=False):
        for layer in self.layers:
            x = layer(x, training=training)
        return x

    def __repr__(self) -> str:
        inner = ",\n".join(f"  ({i}): {layer!r}" for i, layer in enumerate(self.layers))
        return f"Sequential(\n{inner}\n)" if self.layers else "Sequential()"
