"""Containers of layers."""

from __future__ import annotations

from ._validation import check_layer

__all__ = ["Sequential"]


class Sequential:
    """Chain of layers: forward in order, backward in reverse.

    Parameters
    ----------
    *layers
        Objects following the manualprop protocol (``forward``, ``backward``,
        and optionally ``params``/``grads`` dicts), or a single list/tuple of
        them. Nested ``Sequential`` objects are allowed.

    Attributes
    ----------
    layers : list
        The layers, in order.
    params, grads : dict
        Flat views built on each access, keyed ``"<index>.<name>"`` as in
        PyTorch's ``state_dict`` (``"0.W"``, ``"0.b"``, ``"2.W"``, ...;
        nested containers give ``"1.0.W"``). The values are the layers' own
        arrays, so in-place optimizer updates of ``params`` reach the layers.

    Notes
    -----
    ``backward(dY)`` computes ``dX = J_1^T (J_2^T ( ... J_n^T dY))``: each
    layer's backward receives the gradient returned by the next layer.
    Source: ``lessons/07-sequential.md``.

    Raises
    ------
    TypeError
        A layer lacks callable ``forward``/``backward`` or non-dict
        ``params``/``grads`` (checked at construction). Errors of the layers
        themselves propagate unchanged.
    """

    def __init__(self, *layers):
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)):
            layers = tuple(layers[0])
        for i, layer in enumerate(layers):
            check_layer(layer, i, "Sequential")
        self.layers = list(layers)

    def __repr__(self) -> str:
        inner = ",\n".join(f"  ({i}): {layer!r}" for i, layer in enumerate(self.layers))
        return f"Sequential(\n{inner}\n)" if self.layers else "Sequential()"

    def __len__(self) -> int:
        return len(self.layers)

    def __iter__(self):
        return iter(self.layers)

    def __getitem__(self, index):
        return self.layers[index]

    def __call__(self, X, training=False):
        return self.forward(X, training=training)

    def _flat(self, attr: str) -> dict:
        out = {}
        for i, layer in enumerate(self.layers):
            for name, value in getattr(layer, attr, {}).items():
                out[f"{i}.{name}"] = value
        return out

    @property
    def params(self) -> dict:
        """Flat dict of all layers' parameters (the same array objects)."""
        return self._flat("params")

    @property
    def grads(self) -> dict:
        """Flat dict of all layers' gradients, keys as in ``params``."""
        return self._flat("grads")

    def forward(self, X, training=False):
        """Run ``X`` through every layer in order and return the last output."""
        for layer in self.layers:
            X = layer.forward(X, training=training)
        return X

    def backward(self, dY):
        """Run ``dY`` back through every layer in reverse; return dL/dX."""
        for layer in reversed(self.layers):
            dY = layer.backward(dY)
        return dY
