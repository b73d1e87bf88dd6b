"""Embedding, forward only (the tape derives the scatter-add backward).

Twin of :class:`manualprop.Embedding`: same constructor, same initial table for
the same ``rng`` (both call :func:`manualprop.init.embedding_params`).
Source: ``lessons/30-embedding.md``.
"""

from __future__ import annotations

import numpy as np

import manualprop as mp
from manualprop._validation import check_indices

from ..core.tape import replayed
from .base import Layer

__all__ = ["Embedding"]


class Embedding(Layer):
    """Lookup table ``y = W[x]`` (twin of :class:`manualprop.Embedding`).

    Parameters
    ----------
    num_embeddings, dim : int
        Rows of the table and length of each vector (Keras's ``input_dim`` and
        ``output_dim``, also accepted).
    rng : None, int or numpy.random.Generator
        ``W ~ N(0, 1)`` (:func:`manualprop.init.embedding_params`).
    dtype : {np.float64, np.float32}

    Shapes: integer ``x`` of any shape S -> ``y`` (S + (dim,)); ``W``
    (num_embeddings, dim). The tape's VJP of indexing is ``np.add.at``, so
    repeated indices accumulate; ``x`` is integer and gets no gradient.
    Source: ``lessons/30-embedding.md``.
    """

    manual_class = mp.Embedding
    keras_aliases = {"input_dim": "num_embeddings", "output_dim": "dim"}  # Keras's names

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.Embedding``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        # the checked indices made again at each replay of autoprop.function (an integer argument:
        # the checks and the int64 cast run on each call's indices, as an eager call's)
        idx = replayed(self._indices, x)
        return self.variables["W"][idx]

    def _indices(self, x):
        return check_indices(x.view(np.ndarray) if isinstance(x, np.ndarray) else x,
                             f"autoprop.layers.{self!r}.__call__", "x", high=self.num_embeddings)
