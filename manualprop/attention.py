r"""Attention layers with hand-derived gradients.

Protocol extension for a layer with SEVERAL inputs
(:class:`ScaledDotProductAttention`)::

    Y = layer.forward(Q, K, V, training=False)     # also layer(Q, K, V)
    dQ, dK, dV = layer.backward(dY)                # a tuple, one gradient per input,
                                                   # in the order of forward's arguments

Everything else is the usual protocol (``params``/``grads`` dicts, ``cache``,
``backward`` overwrites). :class:`MultiHeadAttention` is self-attention and has
the one-input protocol, ``forward(X) -> Y``, ``backward(dY) -> dX``.
Sources: ``lessons/33-attention.md``, ``lessons/34-multi-head-attention.md``.
"""

from __future__ import annotations

import math

import numpy as np

from ._extremes import softmax_vjp
from ._validation import (
    MASK_HINT,
    check_array,
    check_float_dtype,
    check_positive_int,
    check_training,
)
from .init import attention_params
from .layers import Layer

__all__ = ["MultiHeadAttention", "ScaledDotProductAttention", "causal_mask"]


def causal_mask(Tq: int, Tk: int) -> np.ndarray:
    """Boolean (Tq, Tk) mask, True where query ``i`` must NOT see key ``j`` (``j > i``).

    Top-left aligned, as PyTorch's ``is_causal=True``: row ``i`` keeps keys
    ``0..i``, so every row keeps at least key 0 and no softmax row is empty.
    """
    return np.triu(np.ones((Tq, Tk), dtype=bool), k=1)


class ScaledDotProductAttention(Layer):
    r"""``Y = softmax(Q K^T / sqrt(d) + M) V``, a parameter-free layer of three inputs.

    Parameters
    ----------
    causal : bool, default False
        If True, query ``i`` attends only to keys ``j <= i``: ``M_ij = -inf``
        for ``j > i`` (see :func:`causal_mask`), else ``M = 0``.

    Notes
    -----
    Shapes (any leading batch dimensions ``B...``, e.g. (N,) or (N, heads)):
    ``Q`` (B..., Tq, d), ``K`` (B..., Tk, d), ``V`` (B..., Tk, dv)
    -> ``Y`` (B..., Tq, dv). Intermediates: scores ``S`` and weights ``P``
    (B..., Tq, Tk).

    Forward::

        S = Q @ K^T / sqrt(d)           (masked entries set to -inf)
        P = softmax(S, axis=-1)         (shifted by the row max: stable;
                                         exp(-inf) = 0 exactly)
        Y = P @ V

    Backward (``dY`` of shape (B..., Tq, dv))::

        dV = P^T @ dY                            (B..., Tk, dv)
        dP = dY @ V^T                            (B..., Tq, Tk)
        dS = P * (dP - sum(dP * P, axis=-1))     softmax's Jacobian-vector product,
                                                 dP shifted by its value at the row's
                                                 largest P (equal as sum(P) = 1; no
                                                 cancellation on a saturated row)
        dQ = dS @ K / sqrt(d),  dK = dS^T @ Q / sqrt(d)

    Masked entries have ``P = 0``, hence ``dS = 0``: no gradient flows from
    output ``t`` to keys/values after ``t``. ``backward`` returns the tuple
    ``(dQ, dK, dV)``. Source: ``lessons/33-attention.md``.

    Raises
    ------
    TypeError
        A non-float input, inputs of different dtypes, ``causal`` not bool.
    ValueError
        ``Q`` with fewer than 2 dimensions, ``K``/``V`` not matching ``Q``'s
        batch dimensions and ``d`` / each other's ``Tk``, empty ``Q`` or ``K``,
        ``dY`` not the shape of ``Y``, NaN/inf.
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> att = ScaledDotProductAttention(causal=True)
    >>> Q = K = np.zeros((1, 2, 4))
    >>> V = np.array([[[1.0], [3.0]]])
    >>> att(Q, K, V)[0, :, 0]     # t=0 sees only V[0]; t=1 averages both
    array([1., 2.])
    >>> dQ, dK, dV = att.backward(np.ones((1, 2, 1)))
    >>> dV[0, :, 0]
    array([1.5, 0.5])
    """

    def __init__(self, causal=False):
        super().__init__()
        if not isinstance(causal, (bool, np.bool_)):
            raise TypeError(
                f"{type(self).__name__}: causal must be a bool; got "
                f"{type(causal).__name__} {causal!r}"
            )
        self.causal = bool(causal)

    def __call__(self, Q, K, V, training=False):
        return self.forward(Q, K, V, training=training)

    def _repr_args(self) -> str:
        return f"causal={self.causal}"

    def _inputs(self, Q, K, V):
        where = self._where("forward")
        Q = check_array(Q, where, "Q", min_ndim=2, nonempty=True)
        B, d = Q.shape[:-2], Q.shape[-1]
        K = check_array(K, where, "K", shape=(*B, "Tk", d), dtype=Q.dtype, nonempty=True)
        V = check_array(V, where, "V", shape=(*B, K.shape[-2], "dv"), dtype=Q.dtype)
        return Q, K, V

    def forward(self, Q, K, V, training=False):
        """``softmax(Q K^T / sqrt(d) + mask) V``; see the class docstring for shapes."""
        check_training(training, self._where("forward"), MASK_HINT)
        Q, K, V = self._inputs(Q, K, V)
        scale = 1.0 / math.sqrt(Q.shape[-1])
        S = (Q @ np.swapaxes(K, -1, -2)) * scale
        if self.causal:
            S = np.where(causal_mask(S.shape[-2], S.shape[-1]), -np.inf, S)
        E = np.exp(S - S.max(axis=-1, keepdims=True))
        P = E / E.sum(axis=-1, keepdims=True)
        Y = P @ V
        self.cache = {
            "Q": Q, "K": K, "V": V, "P": P, "scale": scale,
            "out_shape": Y.shape, "dtype": Y.dtype,
        }
        return Y

    def backward(self, dY):
        """Return ``(dQ, dK, dV)`` for ``dY = dL/dY``."""
        dY = self._check_dY(dY)
        c = self.cache
        Q, K, V, P, scale = c["Q"], c["K"], c["V"], c["P"], c["scale"]
        dV = np.swapaxes(P, -1, -2) @ dY
        dP = dY @ np.swapaxes(V, -1, -2)
        dS = softmax_vjp(P, dP, axis=-1) * scale
        dQ = dS @ K
        dK = np.swapaxes(dS, -1, -2) @ Q
        return dQ, dK, dV


class MultiHeadAttention(Layer):
    r"""Multi-head self-attention, ``batch_first`` (PyTorch's ``nn.MultiheadAttention``).

    Parameters
    ----------
    embed_dim : int
        Model width ``E``; must be divisible by ``num_heads``.
    num_heads : int
        Number of heads ``h``; each works in ``dk = E / h`` dimensions.
    causal : bool, default False
        Causal mask inside every head (see :class:`ScaledDotProductAttention`).
    rng : None, int or numpy.random.Generator
        Initialisation, see :func:`manualprop.init.attention_params` (xavier
        uniform in-projection, ``U(-1/sqrt(E), 1/sqrt(E))`` out-projection,
        zero biases, as PyTorch).
    dtype : {np.float64, np.float32}

    Attributes
    ----------
    params, grads : dict
        ``"W_q", "W_k", "W_v", "W_o"`` (E, E) and ``"b_q", "b_k", "b_v", "b_o"`` (E,).
    attention : ScaledDotProductAttention
        The per-head attention (its forward/backward are reused).

    Notes
    -----
    Shapes: ``X`` (N, T, E) -> ``Y`` (N, T, E). Forward::

        Q = X @ W_q^T + b_q  (same for K, V)          (N, T, E)
        split(Q) = Q.reshape(N, T, h, dk).transpose(0, 2, 1, 3)   (N, h, T, dk)
        O = attention(split(Q), split(K), split(V))   (N, h, T, dk)
        merge(O) = O.transpose(0, 2, 1, 3).reshape(N, T, E)
        Y = merge(O) @ W_o^T + b_o                    (N, T, E)

    Backward runs the same steps in reverse; split and merge are permutations,
    so their backward is the other one. ``X`` feeds three projections, so
    ``dX = dQ @ W_q + dK @ W_k + dV @ W_v`` (three contributions summed).
    Source: ``lessons/34-multi-head-attention.md``.

    Raises
    ------
    TypeError
        Non-int sizes, ``causal`` not bool; ``X``/``dY`` not float or of a
        dtype other than the parameters'.
    ValueError
        ``embed_dim`` not divisible by ``num_heads``; ``X`` not (batch, time,
        embed_dim) or empty, ``dY`` not the shape of ``Y``, NaN/inf.
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> mha = MultiHeadAttention(8, 2, rng=0)
    >>> Y = mha.forward(np.ones((3, 5, 8)))
    >>> Y.shape, mha.backward(np.ones_like(Y)).shape, sorted(mha.grads)
    ((3, 5, 8), (3, 5, 8), ['W_k', 'W_o', 'W_q', 'W_v', 'b_k', 'b_o', 'b_q', 'b_v'])
    """

    def __init__(self, embed_dim, num_heads, causal=False, rng=None, dtype=np.float64):
        super().__init__()
        name = type(self).__name__
        self.embed_dim = check_positive_int(embed_dim, "embed_dim", name)
        self.num_heads = check_positive_int(num_heads, "num_heads", name)
        if self.embed_dim % self.num_heads:
            raise ValueError(
                f"{name}: embed_dim must be divisible by num_heads; got embed_dim="
                f"{self.embed_dim}, num_heads={self.num_heads}"
            )
        self.head_dim = self.embed_dim // self.num_heads
        self.dtype = check_float_dtype(dtype, name)
        self.attention = ScaledDotProductAttention(causal)
        self.causal = self.attention.causal
        self.params = attention_params(self.embed_dim, rng, self.dtype)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._declare()

    def _repr_args(self) -> str:
        s = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
        if self.causal:
            s += ", causal=True"
        if self.dtype != np.float64:
            s += f", dtype={self.dtype}"
        return s

    def _split(self, Z):
        N, T, _ = Z.shape
        return Z.reshape(N, T, self.num_heads, self.head_dim).transpose(0, 2, 1, 3)

    def _merge(self, Z):
        N, _, T, _ = Z.shape
        return Z.transpose(0, 2, 1, 3).reshape(N, T, self.embed_dim)

    def forward(self, X, training=False):
        """Self-attention of X (N, T, E) -> Y (N, T, E)."""
        check_training(training, self._where("forward"), MASK_HINT)
        self._check_params("forward")
        X = check_array(
            X, self._where("forward"), shape=("batch", "time", self.embed_dim), dtype=self.dtype,
            nonempty=True,
        )
        p = self.params
        Q = X @ p["W_q"].T + p["b_q"]
        K = X @ p["W_k"].T + p["b_k"]
        V = X @ p["W_v"].T + p["b_v"]
        O = self._merge(self.attention.forward(self._split(Q), self._split(K), self._split(V)))
        Y = O @ p["W_o"].T + p["b_o"]
        self.cache = {"X": X, "O": O, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """Fill grads for the four projections; return dX (N, T, E)."""
        self._check_params("backward")
        dY = self._check_dY(dY)
        p, E = self.params, self.embed_dim
        X2 = self.cache["X"].reshape(-1, E)
        dY2 = dY.reshape(-1, E)
        self.grads["W_o"] = dY2.T @ self.cache["O"].reshape(-1, E)
        self.grads["b_o"] = dY2.sum(axis=0)
        dO = dY @ p["W_o"]
        dQ, dK, dV = (self._merge(g) for g in self.attention.backward(self._split(dO)))
        dX = 0
        for name, dZ in (("q", dQ), ("k", dK), ("v", dV)):
            dZ2 = dZ.reshape(-1, E)
            self.grads["W_" + name] = dZ2.T @ X2
            self.grads["b_" + name] = dZ2.sum(axis=0)
            dX = dX + dZ @ p["W_" + name]
        return dX
