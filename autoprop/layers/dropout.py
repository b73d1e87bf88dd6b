"""Inverted dropout, forward only (twin of :class:`manualprop.Dropout`).

The mask comes from the shared :class:`manualprop.dropout.DropoutMask`, so for the
same ``rng`` both twins draw the same masks, and ``fix_mask`` works the same way.
Source: ``lessons/24-dropout.md``.
"""

from __future__ import annotations

import manualprop as mp

from ..core.observe import own
from ..core.tape import replayed
from .base import Layer

__all__ = ["Dropout"]


class Dropout(Layer):
    """``y = x * mask / (1 - p)`` in training (``mask = rng.random(shape) >= p``), ``x`` otherwise.

    The mask is a constant for the tape, so the tape's backward is
    ``dx = dy * mask / (1 - p)``.

    Parameters
    ----------
    p : float in [0, 1], default 0.5
        The probability of dropping an element; ``rate=`` (Keras's name) is the same.
    rng : None, int or numpy.random.Generator
        The masks' draws; ``seed=`` (Keras's name) is the same.

    Notes
    -----
    ``fix_mask(True)`` keeps the last mask, ``fix_mask(M)`` uses the 0/1 array ``M``,
    ``fix_mask(False)`` draws a new mask per training call (the default).
    """

    manual_class = mp.Dropout
    keras_aliases = {"rate": "p", "seed": "rng"}  # Keras's names of the same arguments

    @property
    def mask(self):
        """ndarray of bool or None: the last keep-mask."""
        return self._masks.mask

    def fix_mask(self, mask=True):
        """``True``: keep the last mask; a 0/1 array: use it; ``False``: draw per call."""
        self._masks.fix(mask)

    def call(self, x, training=False):
        """Forward pass of the twin of ``manualprop.Dropout``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x = self._input(x)
        if not training or self.p == 0:
            return x
        shape, dtype = x.shape, x.dtype
        scale = 1.0 / (1.0 - self.p) if self.p < 1 else 0.0

        def mask():  # (a fresh draw at each replay of autoprop.function, as at each eager call)
            keep = self._masks.get(shape, f"autoprop.layers.{self!r}.__call__")
            return own((keep * scale).astype(dtype, copy=False))  # (the layer's own mask: observe.own)

        return x * replayed(mask)
