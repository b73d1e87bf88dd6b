"""The Keras-style layer base class and the Sequential container."""

from __future__ import annotations

from manualprop._validation import check_array

from ..core.tensor import Tensor, Variable

__all__ = ["Layer", "Sequential"]


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
