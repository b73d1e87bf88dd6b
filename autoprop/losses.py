"""Losses written with tape operations, called Keras-style: ``loss_fn(y_true, y_pred)``.

Twins of :mod:`manualprop.losses`; each returns a scalar Tensor.
"""

from __future__ import annotations

import numpy as np

from manualprop._validation import check_array, check_class_targets, check_targets

from .core import registry as R
from .core.tensor import Tensor

__all__ = ["MeanSquaredError", "SoftmaxCrossEntropy"]


def _pred(y_pred, where):
    value = y_pred._value if isinstance(y_pred, Tensor) else y_pred
    check_array(value, where, "y_pred", nonempty=True)
    return y_pred if isinstance(y_pred, Tensor) else Tensor(y_pred)


class SoftmaxCrossEntropy:
    """Mean over the batch of ``-log softmax(z)[y]`` for integer labels.

    ``y_true`` (N,) integers in [0, C); ``y_pred`` logits (N, C). Computed with the
    stable ``log_softmax`` primitive. Source: ``lessons/03-softmax-cross-entropy.md``.
    """

    def __call__(self, y_true, y_pred):
        where = "autoprop.losses.SoftmaxCrossEntropy()"
        z = _pred(y_pred, where)
        if z.ndim != 2:
            raise ValueError(f"{where}: y_pred must have shape (batch, classes); got {z.shape}")
        n, c = z.shape
        kind, y = check_class_targets(y_true, where, n_samples=n, n_classes=c, dtype=z.dtype)
        logp = R.log_softmax(z, axis=-1)
        if kind == "labels":
            return -R.mean(logp[np.arange(n), y])
        return -R.sum(logp * y) / n


class MeanSquaredError:
    """``mean((y_pred - y_true)**2)`` over all elements. Source: ``lessons/04-regression-losses.md``."""

    def __call__(self, y_true, y_pred):
        where = "autoprop.losses.MeanSquaredError()"
        yp = _pred(y_pred, where)
        yt = check_targets(y_true, where, shape=yp.shape, dtype=yp.dtype)
        d = yp - yt
        return R.mean(d * d)
