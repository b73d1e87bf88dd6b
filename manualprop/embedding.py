"""Embedding: a trainable lookup table, with a hand-derived (scatter-add) backward.

Protocol note: the input of an embedding is an array of *integer indices*, which
has no gradient. ``backward(dY)`` therefore fills ``grads`` and returns ``None``
instead of ``dX`` (gradcheck skips dX for integer inputs).
Source: ``lessons/30-embedding.md``.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_float_dtype, check_indices, check_positive_int
from .init import embedding_params
from .layers import Layer

__all__ = ["Embedding"]


class Embedding(Layer):
    r"""Lookup table ``Y[..., :] = W[X[...], :]`` (PyTorch's ``nn.Embedding``).

    Parameters
    ----------
    num_embeddings : int
        Number of rows of the table (the vocabulary size ``V``).
    dim : int
        Length ``D`` of each embedding vector.
    rng : None, int or numpy.random.Generator
        Initialisation, see :func:`manualprop.init.embedding_params`
        (``W ~ N(0, 1)``, as PyTorch).
    dtype : {np.float64, np.float32}
        dtype of the table and of the output.

    Attributes
    ----------
    params : dict
        ``"W"``: (num_embeddings, dim).
    grads : dict
        ``"W"``: same shape, overwritten by each ``backward``.

    Notes
    -----
    Shapes: ``X`` integer indices of any shape ``S`` with values in
    ``[0, num_embeddings)``; ``Y`` has shape ``S + (dim,)``.

    Forward is a row selection, ``Y = W[X]``, i.e. ``Y = onehot(X) @ W``.
    Backward is its transpose, a scatter-add: every output row sends its
    gradient back to the row of ``W`` it was read from, and a row read ``k``
    times receives the SUM of ``k`` gradients::

        dW = zeros_like(W);  np.add.at(dW, X, dY)      # NOT dW[X] = dY (last write wins)

    ``X`` is integer-valued, so there is no ``dX``: ``backward`` returns
    ``None``. Source: ``lessons/30-embedding.md``.

    Raises
    ------
    TypeError
        ``X`` not of integer dtype (float indices are refused), ``dY`` not float.
    ValueError
        An index outside ``[0, num_embeddings)`` (negative indices are refused),
        ``dY`` not the shape of ``Y``.
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> emb = Embedding(3, 2, rng=0)
    >>> emb.params["W"][...] = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    >>> emb.forward(np.array([2, 0, 2]))
    array([[4., 5.],
           [0., 1.],
           [4., 5.]])
    >>> emb.backward(np.ones((3, 2))) is None
    True
    >>> emb.grads["W"]            # row 2 was used twice: its gradient is 2
    array([[1., 1.],
           [0., 0.],
           [2., 2.]])
    """

    def __init__(self, num_embeddings, dim, rng=None, dtype=np.float64):
        super().__init__()
        name = type(self).__name__
        self.num_embeddings = check_positive_int(num_embeddings, "num_embeddings", name)
        self.dim = check_positive_int(dim, "dim", name)
        self.dtype = check_float_dtype(dtype, name)
        self.params = embedding_params(self.num_embeddings, self.dim, rng, self.dtype)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._declare()

    def _repr_args(self) -> str:
        s = f"num_embeddings={self.num_embeddings}, dim={self.dim}"
        if self.dtype != np.float64:
            s += f", dtype={self.dtype}"
        return s

    def forward(self, X, training=False):
        """Rows of ``W`` picked by the integer array ``X`` (shape S) -> (S + (dim,))."""
        self._check_params("forward")
        idx = check_indices(X, self._where("forward"), high=self.num_embeddings)
        Y = self.params["W"][idx]
        self.cache = {"idx": idx, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """Scatter-add ``dY`` into ``grads["W"]`` (repeats accumulate); return ``None``."""
        self._check_params("backward")
        dY = self._check_dY(dY)
        dW = np.zeros_like(self.params["W"])
        np.add.at(dW, self.cache["idx"], dY)
        self.grads["W"] = dW
        return None
