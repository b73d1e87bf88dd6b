"""Fused layer primitives: one record for what a layer of ``autoprop.layers`` does on every
call, with the hand-derived VJPs of its manualprop twin.

``linear`` is ``X @ W.T + b`` (the Linear layer): one node on the tape instead of a
``matmul`` and an ``add``, so one record and one reverse-walk step per layer, and no
``unbroadcast`` of ``g`` for the product that only passes it on. Its VJPs are the
expressions the two primitives' VJPs compute (the same bits). Derivation:
``lessons/01-linear-layer.md``.

``linear_at`` is ``X @ W.T + B[key]``: ``linear`` whose bias is a slice of a larger array,
the step ``t`` of a recurrent layer's input projection computed for every step at once
(``B[:, t]``). One record instead of a ``getitem`` and a ``linear``; ``B``'s gradient is
``getitem``'s VJP (the walk adds ``g`` into one buffer for all the steps, ``tape.Scatter``),
and the values are those of ``linear(X, W, B[key])``.
"""

from __future__ import annotations

import numpy as np

from ..registry import defprim
from ._common import _mT, _shape, unbroadcast
from .shape import _getitem_vjp

__all__ = ["linear", "linear_at"]


def _linear_fwd(x, W, b):
    arrays = type(x) is type(W) is type(b) is np.ndarray  # the usual case: no np.ndim calls
    if arrays and (x.ndim != 2 or W.ndim != 2 or b.ndim not in (1, 2)) or not arrays and (
            np.ndim(x) != 2 or np.ndim(W) != 2 or np.ndim(b) not in (1, 2)):
        raise ValueError("linear: x must be (batch, in), W (out, in) and b (out,) or (batch, out); "
                         f"got {np.ndim(x)}, {np.ndim(W)} and {np.ndim(b)} axes")
    y = np.matmul(x, W.T)
    if type(b) is np.ndarray and b.dtype == y.dtype and b.shape in (y.shape, y.shape[1:]):
        y += b  # the fresh product, in place: the bits of y + b without a second array
        return y
    return y + b


# One record for a whole fully connected layer: Linear's forward is one node, not a matmul
# and an add (two records, two reverse-walk steps and an unbroadcast of g for the product
# that just passes it on). dX, dW and db are the hand-derived ones (lesson 01); the same
# expressions as the two primitives' VJPs, so the same bits.
def _linear_db(g, ans, x, W, b):
    # db: g summed over the batch. A bias (out,) and a plain g (N, out): the sum unbroadcast
    # makes (np.add.reduce over axis 0, the same bits) without its two frames
    if type(g) is np.ndarray and g.ndim == 2 and len(b.shape) == 1:
        return np.add.reduce(g, axis=0)
    return unbroadcast(g, _shape(b))


linear = defprim(
    "linear", _linear_fwd,
    lambda g, ans, x, W, b: g @ W,
    lambda g, ans, x, W, b: g.T @ x,  # (g is (N, out): always 2-d)
    _linear_db,
    jvp=(lambda t, ans, x, W, b: t @ _mT(W), lambda t, ans, x, W, b: x @ _mT(t),
         lambda t, ans, x, W, b: t),
    jacobian="Y = X W^T + b: dY_nj/dX_nk = W_jk, dY_nj/dW_jk = X_nk, dY_nj/db_j = 1",
    vjp="dX = g @ W, dW = g^T @ X, db = g summed over the batch",
    shapes="X (N, in), W (out, in), b (out,) or (N, out) -> (N, out)",
    source="{x} @ {W}.T + {b}", reads=((1,), (0,), ()),
)



def _linear_at_fwd(x, W, B, key):
    y = np.matmul(x, W.T)
    b = B[key]
    if y.shape == b.shape and y.dtype == b.dtype:
        y += b  # the fresh product, in place: the bits of linear(x, W, B[key])
        return y
    return y + b


def _linear_at_jvp_b(t, ans, x, W, B, key):
    return t[key]


linear_at = defprim(
    "linear_at", _linear_at_fwd,
    lambda g, ans, x, W, B, key: g @ W,
    lambda g, ans, x, W, B, key: _mT(g) @ x,
    lambda g, ans, x, W, B, key: _getitem_vjp(g, ans, B, key),
    jvp=(lambda t, ans, x, W, B, key: t @ _mT(W), lambda t, ans, x, W, B, key: x @ _mT(t),
         _linear_at_jvp_b),
    jacobian="Y = X W^T + B[key]: dY_nj/dX_nk = W_jk, dY_nj/dW_jk = X_nk, and a selection "
             "of B (getitem's)",
    vjp="dX = g @ W, dW = g^T @ X, dB = zeros of B's shape with g at key (for a basic key the "
        "walk adds it into one buffer per B, tape.Scatter)",
    shapes="X (N, in), W (out, in), B[key] (N, out) -> (N, out)",
    source="{x} @ {W}.T + {B}[{key}]", reads=((1,), (0,), ()),
)
