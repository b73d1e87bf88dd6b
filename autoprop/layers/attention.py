"""Attention layers, forward only (the tape derives backward).

Twins of :mod:`manualprop.attention`. A layer with several inputs is called
``layer(Q, K, V, training=False)``; ``tape.gradient(y, [Q, K, V])`` gives the
three gradients the manual ``backward`` returns as a tuple.
Sources: ``lessons/33-attention.md``, ``lessons/34-multi-head-attention.md``.
"""

from __future__ import annotations

import math

import numpy as np

import manualprop as mp
from manualprop._validation import check_array
from manualprop.attention import causal_mask

from ..core import registry as R
from ..core.observe import own
from ..core.tape import replayed
from ..core.tensor import _TRACERS, Tensor
from .base import Layer, check_at_replay

__all__ = ["MultiHeadAttention", "ScaledDotProductAttention"]


class ScaledDotProductAttention(Layer):
    """``y = softmax(Q K^T / sqrt(d) + mask) V`` (twin of
    :class:`manualprop.ScaledDotProductAttention`).

    Parameters
    ----------
    causal : bool, default False
        Query ``i`` attends only to keys ``j <= i``.

    Notes
    -----
    Call ``layer(Q, K, V)``. Shapes: Q (B..., Tq, d), K (B..., Tk, d), V (B..., Tk, dv) -> (B..., Tq, dv).
    With ``causal=True`` scores of keys ``j > i`` are replaced by ``-inf`` (the
    ``where`` primitive passes them no gradient; softmax gives them weight 0).
    Source: ``lessons/33-attention.md``.
    """

    manual_class = mp.ScaledDotProductAttention

    def __call__(self, Q, K, V, training=None):
        return Layer.__call__(self, Q, K, V, training=training)  # the call context

    def call(self, Q, K, V, training=False):
        """Forward pass of the twin of ``manualprop.ScaledDotProductAttention``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        where = f"autoprop.layers.{self!r}.__call__"
        vals = [t._value if isinstance(t, Tensor) else np.asarray(t) for t in (Q, K, V)]
        q = check_array(vals[0], where, "Q", min_ndim=2, nonempty=True)
        B, d = q.shape[:-2], q.shape[-1]
        k = check_array(vals[1], where, "K", shape=(*B, "Tk", d), dtype=q.dtype, nonempty=True)
        check_array(vals[2], where, "V", shape=(*B, k.shape[-2], "dv"), dtype=q.dtype)
        if _TRACERS:  # (autoprop.function: the values checked again at each replay)
            for name, t in zip("QKV", (Q, K, V)):
                check_at_replay(where, t, name)
        Q, K, V = (t if isinstance(t, Tensor) else Tensor(t) for t in (Q, K, V))
        S = (Q @ K.swapaxes(-1, -2)) * own(1.0 / math.sqrt(d))  # (own: the layer's constant, observe.own)
        if self.causal:
            # (made again at each replay of autoprop.function: a numpy array it cannot prove constant)
            S = R.where(replayed(causal_mask, S.shape[-2], S.shape[-1]), -np.inf, S)
        return R.softmax(S, axis=-1) @ V


class MultiHeadAttention(Layer):
    """Multi-head self-attention, batch_first (twin of :class:`manualprop.MultiHeadAttention`).

    Parameters
    ----------
    embed_dim, num_heads : int
        ``E`` and ``h``; ``E`` divisible by ``h``.
    causal : bool, default False
        Causal mask in every head.
    rng : None, int or numpy.random.Generator
    dtype : {np.float64, np.float32}
    name, trainable
        Keras's, as every layer (:class:`~autoprop.layers.Layer`).

    Notes
    -----
    ``Q, K, V = x W_{q,k,v}^T + b_{q,k,v}``, split into ``h`` heads, attended,
    merged, ``y = O W_o^T + b_o``. Shapes: x (N, T, E) -> y (N, T, E). Variables ``W_q, W_k, W_v, W_o`` (E, E),
    ``b_q, b_k, b_v, b_o`` (E,), initialised by
    :func:`manualprop.init.attention_params`. Source: ``lessons/34-multi-head-attention.md``.
    """

    manual_class = mp.MultiHeadAttention

    def __init__(self, embed_dim, num_heads, causal=False, rng=None, dtype=np.float64, *,
                 name=None, trainable=True):
        super().__init__(embed_dim, num_heads, causal=causal, rng=rng, dtype=dtype, name=name,
                         trainable=trainable)
        self.attention = ScaledDotProductAttention(self.causal)  # the tape twin, not the manual one

    def _split(self, z, N, T):
        return z.reshape(N, T, self.num_heads, self.head_dim).transpose(0, 2, 1, 3)

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.MultiHeadAttention``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x = self._input(x, shape=("batch", "time", self.embed_dim), dtype=self.dtype, nonempty=True)
        v = self._variables  # its own (Layer.variables would walk self.attention as well, which holds none)
        N, T, E = x.shape
        q, k, val = (x @ v["W_" + s].T + v["b_" + s] for s in ("q", "k", "v"))
        o = self.attention(self._split(q, N, T), self._split(k, N, T), self._split(val, N, T))
        o = o.transpose(0, 2, 1, 3).reshape(N, T, E)
        return o @ v["W_o"].T + v["b_o"]
