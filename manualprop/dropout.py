"""Inverted dropout with a hand-derived backward pass, and its mask source.

:class:`DropoutMask` (shared with ``autoprop.layers.Dropout``) owns the
random generator and the fix-the-mask switch, so the manual layer and its
tape twin draw the same masks for the same ``rng``, and a gradient checker
can freeze the mask to make the forward pass deterministic.
Source: ``lessons/24-dropout.md``.
"""

from __future__ import annotations

from ._validation import check_array, check_mask, check_scalar
from .init import as_rng
from .layers import Layer

__all__ = ["Dropout", "DropoutMask"]


class DropoutMask:
    """Where a dropout layer's keep-masks come from (one per training forward).

    Parameters
    ----------
    p : float
        Drop probability.
    rng : None, int or numpy.random.Generator
        See :func:`manualprop.init.as_rng`. A mask is drawn as
        ``rng.random(shape) >= p`` (keep with probability ``1 - p``).
    where : str
        Prefix of error messages (the owning layer).

    Notes
    -----
    ``fix(True)`` keeps reusing the last mask (the next training forward
    draws one if there is none yet); ``fix(mask_array)`` sets a given 0/1
    mask and keeps it; ``fix(False)`` goes back to a fresh draw per forward.
    While fixed, forwards do not advance ``rng``.
    """

    def __init__(self, p, rng=None, where="Dropout"):
        self.p = p
        self.rng = as_rng(rng)
        self.where = where
        self.mask = None
        self.fixed = False

    def fix(self, mask=True):
        """Freeze (``True`` or a 0/1 array) or release (``False``) the mask."""
        if mask is True or mask is False:
            self.fixed = mask
        else:
            self.mask = check_mask(mask, f"{self.where}.fix_mask")
            self.fixed = True

    def get(self, shape, where):
        """The keep-mask (bool array of ``shape``) for one training forward."""
        if self.fixed and self.mask is not None:
            return check_mask(self.mask, where, shape=shape)
        self.mask = self.rng.random(shape) >= self.p
        return self.mask


class Dropout(Layer):
    r"""Inverted dropout (PyTorch's ``nn.Dropout``): zero inputs with probability ``p``.

    Training (``training=True``), with a fresh keep-mask
    ``M = rng.random(X.shape) >= p`` per forward:

    .. math:: Y = X \odot M / (1 - p), \qquad
              \frac{\partial L}{\partial X} = \frac{\partial L}{\partial Y} \odot M / (1 - p)

    Scaling by ``1/(1 - p)`` at training time ("inverted") keeps
    ``E[Y] = X``, so inference (``training=False``, the default) is the
    identity, ``dX = dY``. With ``p = 1`` everything is dropped (``Y = 0``,
    ``dX = 0``).

    Parameters
    ----------
    p : float in [0, 1], default 0.5
        Drop probability.
    rng : None, int or numpy.random.Generator
        Source of the masks (``rng.random(shape) >= p``); the autoprop twin
        with the same ``rng`` draws the same masks.

    Attributes
    ----------
    mask : ndarray of bool or None
        The last keep-mask used.

    Notes
    -----
    **Fixing the mask** (for gradient checking: finite differences call
    forward many times and need the same mask each time):
    ``layer.fix_mask(True)`` keeps the last mask, ``layer.fix_mask(M)`` uses
    the 0/1 array ``M``, ``layer.fix_mask(False)`` draws again per forward.
    Shapes: X any shape -> Y same shape. Source: ``lessons/24-dropout.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Bad ``p``; non-float or non-finite X; a fixed mask of another shape
        than X; ``dY`` of the wrong shape; backward before forward.

    Examples
    --------
    >>> import numpy as np
    >>> drop = Dropout(0.5)
    >>> drop.fix_mask([1, 0, 1, 1])
    >>> drop.forward(np.array([1.0, 2.0, 3.0, 4.0]), training=True)
    array([2., 0., 6., 8.])
    >>> drop.backward(np.ones(4))
    array([2., 0., 2., 2.])
    >>> drop.forward(np.array([1.0, 2.0, 3.0, 4.0]))    # inference: identity
    array([1., 2., 3., 4.])
    """

    def __init__(self, p=0.5, rng=None):
        super().__init__()
        self.p = check_scalar(p, "p", type(self).__name__, low=0.0, high=1.0)
        self._masks = DropoutMask(self.p, rng, where=repr(self))

    def _repr_args(self) -> str:
        return f"p={self.p}"

    @property
    def mask(self):
        """ndarray of bool or None: the last keep-mask."""
        return self._masks.mask

    def fix_mask(self, mask=True):
        """``True``: keep the last mask; a 0/1 array: use it; ``False``: draw per forward."""
        self._masks.fix(mask)

    def forward(self, X, training=False):
        """Training: ``X * mask / (1 - p)``; inference: ``X`` unchanged."""
        where = self._where("forward")
        X = check_array(X, where)
        if training and self.p > 0:
            keep = self._masks.get(X.shape, where)
            scale = 1.0 / (1.0 - self.p) if self.p < 1 else 0.0
            factor = (keep * scale).astype(X.dtype, copy=False)
            Y = X * factor
        else:
            factor = None
            Y = X
        self.cache = {"factor": factor, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """``dX = dY * mask / (1 - p)`` (training) or ``dY`` (inference)."""
        dY = self._check_dY(dY)
        factor = self.cache["factor"]
        return dY if factor is None else dY * factor
