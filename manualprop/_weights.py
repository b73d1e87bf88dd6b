"""Keras's ``get_weights``/``set_weights`` checks, written once for both packages.

autoprop's ``Layer.set_weights`` (its weights are Variables) and manualprop's ``Sequential.set_weights`` (its weights
are the layers' ``params`` arrays) take the same list: the weights in order, then, optionally, the state arrays (a
BatchNorm's ``running_mean`` and ``running_var``: PyTorch's buffers), and refuse or warn alike (verify41 H1,
verify41b F5).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["checked_values", "set_states", "state_values"]


def state_values(states) -> list:
    """Copies of the state arrays ``states`` (``(layer, name)`` pairs), in order: what ``get_weights`` lists after the
    weights."""
    return [np.array(getattr(layer, n), copy=True) for layer, n in states]


def checked_values(name, values, weights, states, hint=None) -> list:
    """``values`` (``set_weights``' argument) as a list, checked before anything is assigned.

    Parameters
    ----------
    name : str
        The model's name, for messages.
    values : sequence of array_like
    weights : list of (str, tuple)
        What each weight is called in a message (``"weight '0.W'"``) and its shape, in order.
    states : list of (object, str)
        The state arrays, ``(layer, attribute name)``, in order.
    hint : callable, optional
        ``hint() -> str``, appended to the count's message (autoprop: the layers not built yet).

    Returns
    -------
    list
        ``values``, as many as ``weights`` or as ``weights`` and ``states``.

    Raises
    ------
    ValueError
        Another number of values, or a value of another shape than its weight's or state's (named).
    TypeError
        A state value that is not real numbers (complex, strings, objects); the weights' own dtypes are checked by
        the caller, before anything is assigned too.
    """
    values = list(values)
    if len(values) not in (len(weights), len(weights) + len(states)):
        state = (f" (or {len(weights) + len(states)} with its {len(states)} state arrays, as get_weights() lists "
                 "them)" if states else "")
        raise ValueError(f"{name}.set_weights: got {len(values)} values for the {len(weights)} weights of the "
                         f"layer{state}{hint() if hint else ''}")
    targets = weights + [(f"state {type(layer).__name__}.{n}", np.shape(getattr(layer, n))) for layer, n in states]
    for i, (w, (what, shape)) in enumerate(zip(values, targets)):
        if np.shape(w) != shape:
            raise ValueError(f"{name}.set_weights: value {i} for {what} has shape {np.shape(w)}; the "
                             f"{what.split()[0]}'s shape is {shape}")
    for i, (w, (what, _)) in enumerate(zip(values, targets)):
        if i >= len(weights) and (kind := np.asarray(w).dtype.kind) not in "biuf":  # (verify42b F6: a string
            raise TypeError(f"{name}.set_weights: value {i} for {what} has dtype "  # state raised after the
                            f"{np.asarray(w).dtype} ({'complex' if kind == 'c' else 'not a number'}); a state "
                            "array holds real numbers (nothing was assigned)")  # weights were copied in)
    return values


def set_states(name, values, n_weights, states) -> None:
    """Assign the state arrays ``states`` the values after the first ``n_weights`` of ``values`` (copies, of each
    state's dtype); given the weights alone, leave them and warn (UserWarning) naming them."""
    if len(values) == n_weights and states:
        warnings.warn(f"{name}.set_weights: got the {n_weights} weights alone; the state arrays "
                      f"{', '.join(f'{type(layer).__name__}.{n}' for layer, n in states)} (PyTorch's "
                      "buffers, not weights) were left as they were: pass the whole list get_weights() "
                      "returns (the weights, then the state) to copy the inference output too",
                      UserWarning, stacklevel=3)
    for (layer, n), w in zip(states, values[n_weights:]):
        setattr(layer, n, np.array(w, dtype=np.asarray(getattr(layer, n)).dtype, copy=True))
