r"""The transformer block and weight tying: layers built from other layers, with the
backward through the graph written by hand.

Both are *graphs*, not chains: a value is used twice, and its gradient is the sum of the
gradients of its uses (lesson 00b's rule at layer scale).

* :class:`TransformerBlock` — residual + LayerNorm + multi-head self-attention + MLP,
  reusing :class:`~manualprop.LayerNorm`, :class:`~manualprop.MultiHeadAttention`,
  :class:`~manualprop.Linear` and :class:`~manualprop.GELU`; pre-LN (GPT-2) or post-LN
  (the original transformer).
* :class:`TiedEmbedding` — an embedding table that is also the output projection,
  ``logits = body(W[ids]) @ W.T`` (Press & Wolf, 2017): ``dW`` sums both uses.

Sources: ``lessons/35-transformer-block.md``, ``lessons/30b-weight-tying.md``.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    MASK_HINT,
    check_array,
    check_float_dtype,
    check_positive_int,
    check_scalar,
    check_training,
)
from .attention import MultiHeadAttention
from .containers import Sequential, flat_dict
from .embedding import Embedding
from .init import as_rng
from .layers import GELU, Layer, Linear
from .norm import LayerNorm

__all__ = ["TiedEmbedding", "TransformerBlock"]


class TransformerBlock(Layer):
    r"""One transformer encoder layer on (N, T, E) (PyTorch's ``nn.TransformerEncoderLayer``
    without dropout, ``activation="gelu"``, ``batch_first=True``).

    Parameters
    ----------
    embed_dim : int
        Model width ``E``; divisible by ``num_heads``.
    num_heads : int
        Heads of the self-attention.
    ff_dim : int
        Hidden width ``F`` of the MLP (often ``4 E``).
    norm_first : bool, default True
        True: **pre-LN** (GPT-2; the residual path is the identity)::

            H = X + MHA(LN1(X));          Y = H + MLP(LN2(H))

        False: **post-LN** (Vaswani et al. 2017, PyTorch's default)::

            H = LN1(X + MHA(X));          Y = LN2(H + MLP(H))

        with ``MLP(Z) = GELU(Z W1^T + b1) W2^T + b2`` applied to every position.
    causal : bool, default False
        Causal mask in the attention.
    eps : float > 0, default 1e-5
        LayerNorm's constant.
    rng : None, int or numpy.random.Generator
        Initialises, in this order, the attention (:func:`manualprop.init.attention_params`),
        ``linear1`` and ``linear2`` (:func:`manualprop.init.linear_params`).
    dtype : {np.float64, np.float32}

    Attributes
    ----------
    self_attn, linear1, activation, linear2, norm1, norm2
        The sublayers (PyTorch's names); their own forward and backward are used.
    params, grads : dict
        Flat views ``"<sublayer>.<name>"`` (``"self_attn.W_q"``, ``"linear1.W"``,
        ``"norm1.gamma"``, ...), the sublayers' own arrays.

    Notes
    -----
    Backward of pre-LN, each residual sum handing ``dY`` to both of its inputs::

        dH = dY + LN2.backward(MLP.backward(dY))       # H feeds the skip and the MLP
        dX = dH + LN1.backward(MHA.backward(dH))       # X feeds the skip and the attention

    post-LN::

        dS2 = LN2.backward(dY);   dH = dS2 + MLP.backward(dS2)
        dS1 = LN1.backward(dH);   dX = dS1 + MHA.backward(dS1)

    Source: ``lessons/35-transformer-block.md``.

    Raises
    ------
    TypeError
        Non-int sizes, ``norm_first``/``causal`` not bool, a non-float dtype.
    ValueError
        ``embed_dim`` not divisible by ``num_heads``; ``X`` not (batch, time, embed_dim);
        ``dY`` not the shape of ``Y`` (the sublayers name the tensor).
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> block = TransformerBlock(4, 2, 8, rng=0)
    >>> X = np.random.default_rng(1).standard_normal((2, 3, 4))
    >>> Y = block.forward(X)
    >>> Y.shape, block.backward(np.ones_like(Y)).shape, len(block.params)
    ((2, 3, 4), (2, 3, 4), 16)
    """

    def __init__(self, embed_dim, num_heads, ff_dim, norm_first=True, causal=False, eps=1e-5,
                 rng=None, dtype=np.float64):
        name = type(self).__name__
        self.cache = None
        for flag, value in (("norm_first", norm_first), ("causal", causal)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name}: {flag} must be a bool; got {type(value).__name__} {value!r}")
        self.embed_dim = check_positive_int(embed_dim, "embed_dim", name)
        self.num_heads = check_positive_int(num_heads, "num_heads", name)
        self.ff_dim = check_positive_int(ff_dim, "ff_dim", name)
        self.norm_first, self.causal = bool(norm_first), bool(causal)
        self.eps = check_scalar(eps, "eps", name, low=0.0, low_inclusive=False)
        self.dtype = check_float_dtype(dtype, name)
        rng = as_rng(rng)
        E = self.embed_dim
        self.self_attn = MultiHeadAttention(E, self.num_heads, causal=self.causal, rng=rng, dtype=self.dtype)
        self.linear1 = Linear(E, self.ff_dim, rng=rng, dtype=self.dtype)
        self.activation = GELU()
        self.linear2 = Linear(self.ff_dim, E, rng=rng, dtype=self.dtype)
        self.norm1 = LayerNorm(E, eps=self.eps, dtype=self.dtype)
        self.norm2 = LayerNorm(E, eps=self.eps, dtype=self.dtype)

    SUBLAYERS = ("self_attn", "linear1", "linear2", "norm1", "norm2")

    def _repr_args(self) -> str:
        s = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, ff_dim={self.ff_dim}"
        if not self.norm_first:
            s += ", norm_first=False"
        if self.causal:
            s += ", causal=True"
        if self.dtype != np.float64:
            s += f", dtype={self.dtype}"
        return s

    @property
    def params(self) -> dict:
        """Flat dict of the sublayers' parameters (the same array objects)."""
        return flat_dict(((n, getattr(self, n)) for n in self.SUBLAYERS), "params")

    @property
    def grads(self) -> dict:
        """Flat dict of the sublayers' gradients, keys as in ``params``."""
        return flat_dict(((n, getattr(self, n)) for n in self.SUBLAYERS), "grads")

    def _mlp(self, Z):
        N, T, E = Z.shape
        hidden = self.activation.forward(self.linear1.forward(Z.reshape(N * T, E)))
        return self.linear2.forward(hidden).reshape(N, T, E)

    def _mlp_backward(self, dM):
        N, T, E = dM.shape
        d = self.linear2.backward(dM.reshape(N * T, E))
        return self.linear1.backward(self.activation.backward(d)).reshape(N, T, E)

    def forward(self, X, training=False):
        """The block on X (N, T, E) -> Y (N, T, E); see the class docstring."""
        check_training(training, self._where("forward"), MASK_HINT)
        X = check_array(
            X, self._where("forward"), shape=("batch", "time", self.embed_dim), dtype=self.dtype,
            nonempty=True,
        )
        if self.norm_first:
            H = X + self.self_attn.forward(self.norm1.forward(X))
            Y = H + self._mlp(self.norm2.forward(H))
        else:
            H = self.norm1.forward(X + self.self_attn.forward(X))
            Y = self.norm2.forward(H + self._mlp(H))
        self.cache = {"out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """Fill every sublayer's ``grads``; return dX (N, T, E). Each residual sum sends
        its upstream gradient to both inputs, and the two gradients of a value add."""
        dY = self._check_dY(dY)
        if self.norm_first:
            dH = dY + self.norm2.backward(self._mlp_backward(dY))
            return dH + self.norm1.backward(self.self_attn.backward(dH))
        dS2 = self.norm2.backward(dY)
        dH = dS2 + self._mlp_backward(dS2)
        dS1 = self.norm1.backward(dH)
        return dS1 + self.self_attn.backward(dS1)


class TiedEmbedding(Layer):
    r"""Embedding, a body, and the output projection with the embedding's own table.

    ``logits = body(W[ids]) @ W.T``: one matrix ``W`` (V, D) is read twice, as the lookup
    table (row ``ids[n]`` for sample ``n``) and as the projection onto the ``V`` classes
    (Press & Wolf 2017; GPT-2, BERT). Its gradient is the sum over both uses.

    Parameters
    ----------
    num_embeddings : int
        Vocabulary size ``V``.
    dim : int
        Embedding width ``D``.
    *layers
        The body between lookup and projection (manualprop protocol), applied to the
        embedded array of shape ``ids.shape + (D,)`` and keeping it; none: the identity.
    rng : None, int or numpy.random.Generator
        The table, as :class:`~manualprop.Embedding` (``N(0, 1)``).
    dtype : {np.float64, np.float32}

    Attributes
    ----------
    embedding : Embedding
        The lookup (its scatter-add backward is reused).
    body : Sequential
        The layers.
    params, grads : dict
        ``"W"`` (V, D), the one shared table, then the body's as ``"body.<key>"``.

    Notes
    -----
    Forward and backward (``S`` the shape of ``ids``, rows flattened over ``S``)::

        E = W[ids]                 S + (D,)
        H = body(E)                S + (D,)
        Z = H @ W.T                S + (V,)      logits

        dW_out = dZ^T @ H          (V, D)        the projection's use
        dE = body.backward(dZ @ W)
        dW_in = scatter_add(ids, dE)  (V, D)     the lookup's use
        dW = dW_in + dW_out

    ``ids`` are integers: ``backward`` returns ``None``, like :class:`~manualprop.Embedding`.
    Source: ``lessons/30b-weight-tying.md``.

    Raises
    ------
    TypeError
        A layer not following the protocol; non-integer ids; ``dY`` not float.
    ValueError
        An id outside ``[0, V)``; the body changing the shape of ``E``; ``dY`` not the
        shape of the logits.
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> tied = TiedEmbedding(3, 2, rng=0)
    >>> tied.params["W"][...] = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> tied.forward(np.array([2]))          # W[2] @ W.T
    array([[1., 1., 2.]])
    >>> tied.backward(np.array([[1.0, 0.0, 0.0]])) is None
    True
    >>> tied.grads["W"]                      # out: row 0 += W[2]; in: row 2 += W[0]
    array([[1., 1.],
           [0., 0.],
           [1., 0.]])
    """

    def __init__(self, num_embeddings, dim, *layers, rng=None, dtype=np.float64):
        self.cache = None
        self.embedding = Embedding(num_embeddings, dim, rng=rng, dtype=dtype)
        e = self.embedding
        self.num_embeddings, self.dim, self.dtype = e.num_embeddings, e.dim, e.dtype
        self.body = Sequential(*layers)

    def _repr_args(self) -> str:
        s = f"num_embeddings={self.num_embeddings}, dim={self.dim}"
        body = ", ".join(repr(layer) for layer in self.body.layers)
        return s + (f", {body}" if body else "")

    @property
    def params(self) -> dict:
        """``"W"``, the shared table, then the body's parameters (the same arrays)."""
        return {"W": self.embedding.params["W"], **flat_dict([("body", self.body)], "params")}

    @property
    def grads(self) -> dict:
        """``"W"``, the sum over both uses of the table, then the body's gradients."""
        return {"W": self.embedding.grads["W"], **flat_dict([("body", self.body)], "grads")}

    def forward(self, X, training=False):
        """Logits ``body(W[X]) @ W.T`` for integer ids X (shape S) -> (S + (V,))."""
        E = self.embedding.forward(X)
        H = self.body.forward(E, training=training)
        if getattr(H, "shape", None) != E.shape:
            raise ValueError(
                f"{self._where('forward')}: the body must keep the shape of the embedded ids "
                f"{E.shape} (its output is projected with the table); got {getattr(H, 'shape', None)}"
            )
        W = self.embedding.params["W"]
        Z = H @ W.T
        self.cache = {"H": H, "out_shape": Z.shape, "dtype": Z.dtype}
        return Z

    def backward(self, dY):
        """``grads["W"] = dW_in + dW_out`` (both uses of the table); return ``None``."""
        dY = self._check_dY(dY)
        W, H = self.embedding.params["W"], self.cache["H"]
        dW_out = dY.reshape(-1, self.num_embeddings).T @ H.reshape(-1, self.dim)
        self.embedding.backward(self.body.backward(dY @ W))   # scatter-add: dW_in
        self.embedding.grads["W"] = self.embedding.grads["W"] + dW_out
        return None
