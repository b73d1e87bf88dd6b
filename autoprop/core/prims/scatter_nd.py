"""TensorFlow's functional index updates, ``tensor_scatter_nd_add`` and ``tensor_scatter_nd_update`` (jax's
``x.at[idx].add`` / ``.set``): a tensor with some entries (or slices) added to or replaced, as a new tensor, where
numpy code writes ``y[1:3] += v`` into an array (refused on a tensor's view: lesson 10 section 7). One record each,
its forward, VJPs and JVPs side by side; the gather ``g[indices]`` is ``getitem``'s (``shape``)."""

from __future__ import annotations

import numpy as np

from ..registry import defprim
from ..tensor import Tensor
from ._common import _shape, _value
from .shape import _indices_value

__all__ = ["tensor_scatter_nd_add", "tensor_scatter_nd_update"]


# newuser31 F5: ``y[1:3] += v`` on a slice is refused (lesson 10 section 7); these build the result anew.
def _nd_key(tensor, indices, updates, name):
    """``(key, K)`` of ``name`` (TensorFlow's ``tf.<name>(tensor, indices, updates)``): ``key = tuple(indices[..., k]
    for k < K)``, numpy's fancy index of the first ``K = indices.shape[-1]`` axes of ``tensor``. TypeError for
    indices that are not integers; ValueError for a depth K outside 1..tensor.ndim, updates not of shape
    ``indices.shape[:-1] + tensor.shape[K:]``, or an index outside ``[0, tensor.shape[k])`` (TensorFlow's CPU kernel
    raises too; a negative index does not count from the end)."""
    idx, shape, ushape = _indices_value(indices), tuple(_shape(tensor)), tuple(_shape(updates))
    if idx.dtype.kind not in "iu":
        raise TypeError(f"autoprop.{name}: indices must be integers (int32 or int64, as TensorFlow's); got "
                        f"{idx.dtype} of shape {idx.shape}")
    K = idx.shape[-1] if idx.ndim else 0
    if not 1 <= K <= len(shape):
        raise ValueError(f"autoprop.{name}: indices of shape {idx.shape} index K = {K} axes (its last axis) of a "
                         f"tensor of shape {shape}; expected 1 <= K <= {len(shape)}")
    if ushape != idx.shape[:-1] + shape[K:]:
        raise ValueError(f"autoprop.{name}: updates of shape {ushape}; expected indices.shape[:-1] + "
                         f"tensor.shape[K:] = {idx.shape[:-1] + shape[K:]} (indices {idx.shape}, tensor {shape})")
    bad = np.argwhere(np.any((idx < 0) | (idx >= np.array(shape[:K])), axis=-1))
    if bad.size:
        at = tuple(int(i) for i in bad[0])
        raise ValueError(f"autoprop.{name}: indices[{', '.join(map(str, at))}] = {idx[at].tolist()} is out of bounds "
                         f"for the first {K} axes {shape[:K]} of the tensor (each index k in [0, shape[k]); a "
                         "negative index does not count from the end, as in TensorFlow)")
    return tuple(idx[..., k] for k in range(K)), K


def _last_wins(key, shape):
    """The updates that land (bool, ``indices.shape[:-1]``): of several that name one position, the last in
    C order, as TensorFlow's ``tensor_scatter_nd_update`` ("If indices contains duplicates, then we pick the last
    update for the index")."""
    flat = np.ravel_multi_index(key, shape).ravel()
    wins = np.zeros(flat.size, dtype=bool)
    _, last = np.unique(flat[::-1], return_index=True)
    wins[flat.size - 1 - last] = True
    return wins.reshape(key[0].shape)


def _nd_fwd(tensor, indices, updates, add):
    """``tensor`` with ``updates`` added (``add``: repeats accumulate, ``np.add.at``) or written (the last of
    repeats wins) at ``indices``: a new array of their result dtype."""
    key, K = _nd_key(tensor, indices, updates, "tensor_scatter_nd_" + ("add" if add else "update"))
    out = np.array(tensor, dtype=np.result_type(tensor, updates))
    if add:
        np.add.at(out, key, updates)
    else:
        w = _last_wins(key, out.shape[:K])
        out[tuple(k[w] for k in key)] = np.asarray(updates)[w]
    return out


def _nd_masks(tensor, indices, updates):
    """``(key, keep, wins)`` of a ``tensor_scatter_nd_update``: keep is 1 where the tensor's value stays and 0 where
    an update lands (tensor's shape, broadcast over the axes after K), wins 1 for the updates that land (the last
    of repeats; updates' shape, broadcast likewise)."""
    key, K = _nd_key(tensor, indices, updates, "tensor_scatter_nd_update")
    shape = tuple(_shape(tensor))
    keep = np.ones(shape[:K])
    keep[key] = 0.0
    tail = (1,) * (len(shape) - K)
    return key, keep.reshape(shape[:K] + tail), _last_wins(key, shape[:K]).reshape(key[0].shape + tail)


def _into_zeros(prim, t, tensor, indices):
    """``prim(zeros like tensor, indices, t)``: the scatter of a tangent ``t`` of the updates (recorded when ``t``
    is a Tensor, as :func:`autoprop.core.registry.linear_jvp`)."""
    z = np.zeros(_shape(tensor), dtype=np.result_type(_value(t)))
    return prim(z, indices, t) if isinstance(t, Tensor) else prim.fwd(z, indices, t)


_nd_add = defprim(
    "tensor_scatter_nd_add", lambda tensor, indices, updates: _nd_fwd(tensor, indices, updates, True),
    lambda g, ans, tensor, indices, updates: g,
    None,
    lambda g, ans, tensor, indices, updates: g[_nd_key(tensor, indices, updates, "tensor_scatter_nd_add")[0]],
    jvp=(lambda t, ans, tensor, indices, updates: t, None,
         lambda t, ans, tensor, indices, updates: _into_zeros(_nd_add, t, tensor, indices)),
    jacobian="tensor: the identity; updates: the scatter into the first K axes (repeats add)",
    vjp="dtensor = g; dupdates = g[tuple(indices[..., k] for k in range(K))] (tf.gather_nd(g, indices))",
    shapes="tensor (S0..Sn), int indices (..., K), updates indices.shape[:-1] + tensor.shape[K:] -> tensor's",
    kinks="none (linear); indices get no gradient; repeated indices accumulate (np.add.at)",
    source="{out} = np.array({tensor}, dtype=np.result_type({tensor}, {updates})); "
           "np.add.at({out}, tuple(np.moveaxis({indices}, -1, 0)), {updates})",
)

_nd_update = defprim(
    "tensor_scatter_nd_update", lambda tensor, indices, updates: _nd_fwd(tensor, indices, updates, False),
    lambda g, ans, tensor, indices, updates: g * _nd_masks(tensor, indices, updates)[1],
    None,
    lambda g, ans, tensor, indices, updates: (lambda m: g[m[0]] * m[2])(_nd_masks(tensor, indices, updates)),
    jvp=(lambda t, ans, tensor, indices, updates: t * _nd_masks(tensor, indices, updates)[1], None,
         lambda t, ans, tensor, indices, updates: _into_zeros(_nd_update, t, tensor, indices)),
    jacobian="tensor: 1 where no update lands, 0 where one does; updates: the scatter of the updates that land",
    vjp="dtensor = g with 0 where an update lands; dupdates = g[tuple(indices[..., k] for k in range(K))], 0 for "
        "an update a later one of the same index overwrote",
    shapes="tensor (S0..Sn), int indices (..., K), updates indices.shape[:-1] + tensor.shape[K:] -> tensor's",
    kinks="none (linear); indices get no gradient; of repeated indices the last update wins (TensorFlow's rule)",
    source="{out} = np.array({tensor}, dtype=np.result_type({tensor}, {updates})); "  # one index at a time, in
           "[{out}.__setitem__(tuple(i), u) for i, u in zip(np.reshape({indices}, (-1, np.shape({indices})[-1])), "
           "np.reshape({updates}, (-1, *np.shape({tensor})[np.shape({indices})[-1]:])))]",  # order: the last wins
)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` added at ``indices``, a new Tensor, as TensorFlow's ``tf.tensor_scatter_nd_add``
    (jax: ``x.at[idx].add(v)``; numpy: ``np.add.at`` on a copy).

    Parameters
    ----------
    tensor : Tensor or array_like, shape (S0, ..., Sn)
    indices : array_like of int, shape (..., K), 1 <= K <= n + 1
        Each row an index into the first K axes of ``tensor`` (an element for K = n + 1, a slice for fewer).
    updates : Tensor or array_like, shape ``indices.shape[:-1] + tensor.shape[K:]``
    name : str, optional
        TensorFlow's op name; unused.

    Returns
    -------
    Tensor
        ``tensor``'s shape, the result dtype of ``tensor`` and ``updates``; differentiable in both (float64,
        float32, complex): ``dtensor = g``, ``dupdates = g[indices]`` (``tf.gather_nd(g, indices)``).

    Raises
    ------
    TypeError
        For indices that are not integers.
    ValueError
        For a depth K outside 1..ndim, updates of another shape, or an index outside ``[0, shape[k])``.

    Notes
    -----
    Repeated indices add every update ("If indices contains duplicates, then their updates are accumulated
    (summed)", TensorFlow's documentation). Source: ``lessons/10-gradient-tape.md`` section 7.
    """
    return _nd_add(_nd_tensor(tensor), _indices_value(indices), updates)


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` written at ``indices``, a new Tensor, as TensorFlow's
    ``tf.tensor_scatter_nd_update`` (jax: ``x.at[idx].set(v)``).

    Parameters
    ----------
    tensor : Tensor or array_like, shape (S0, ..., Sn)
    indices : array_like of int, shape (..., K), 1 <= K <= n + 1
        Each row an index into the first K axes of ``tensor`` (an element for K = n + 1, a slice for fewer).
    updates : Tensor or array_like, shape ``indices.shape[:-1] + tensor.shape[K:]``
    name : str, optional
        TensorFlow's op name; unused.

    Returns
    -------
    Tensor
        ``tensor``'s shape, the result dtype of ``tensor`` and ``updates``; differentiable in both:
        ``dtensor = g`` with 0 where an update lands, ``dupdates = g[indices]``, 0 for an overwritten update.

    Raises
    ------
    TypeError
        For indices that are not integers.
    ValueError
        For a depth K outside 1..ndim, updates of another shape, or an index outside ``[0, shape[k])``.

    Notes
    -----
    Of repeated indices the last update wins, deterministically ("If indices contains duplicates, then we pick the
    last update for the index", TensorFlow's documentation of TensorScatterUpdate; its GPU kernel applies them in
    no fixed order); jax's ``.at[].set`` leaves the winner unspecified. Source: ``lessons/10-gradient-tape.md``
    section 7.
    """
    return _nd_update(_nd_tensor(tensor), _indices_value(indices), updates)


def _nd_tensor(x):
    """A Tensor as it is, anything else an array (a list's shape is read by the derivatives)."""
    return x if isinstance(x, Tensor) else np.asarray(x)
