"""Losses with hand-derived gradients.

Keras argument order: ``forward(y_true, y_pred) -> float`` caches what is
needed, ``backward() -> dL/dy_pred`` (same shape and dtype as ``y_pred``).
``loss(y_true, y_pred)`` is ``loss.forward(y_true, y_pred)``.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    check_array,
    check_class_targets,
    check_forward_done,
    check_targets,
)

__all__ = ["Loss", "MeanSquaredError", "SoftmaxCrossEntropy"]


class Loss:
    """Small base class: ``cache``, ``__call__`` and the ``repr`` used in messages."""

    def __init__(self):
        self.cache = None

    def __call__(self, y_true, y_pred) -> float:
        return self.forward(y_true, y_pred)

    def _repr_args(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _where(self, method: str) -> str:
        return f"{self!r}.{method}"

    def backward(self) -> np.ndarray:
        """Return dL/dy_pred for the last ``forward`` (a new array each call)."""
        check_forward_done(self.cache, self._where("backward"))
        return self._backward()


class SoftmaxCrossEntropy(Loss):
    """Softmax followed by cross-entropy, on logits, averaged over the batch.

    ``forward(y_true, y_pred)`` with integer labels ``y_true`` of shape (N,)
    in ``[0, C)`` and logits ``y_pred`` of shape (N, C)::

        log p = z - logsumexp(z)          (row-wise, shifted by the row max)
        L     = -mean_i log p[i, y_i]
        dL/dz = (softmax(z) - onehot(y)) / N

    Shifting by the row maximum keeps every ``exp`` argument <= 0, so there
    is no overflow and no NaN for logits like ``[1000, 1001, 1002]``.
    Source: ``lessons/03-softmax-cross-entropy.md``.

    Raises
    ------
    TypeError
        Non-float logits or non-integer labels.
    ValueError
        Wrong shapes, empty batch, label out of range, NaN/inf logits.
    RuntimeError
        ``backward`` before ``forward``.
    """

    def forward(self, y_true, y_pred) -> float:
        where = self._where("forward")
        z = check_array(y_pred, where, "y_pred", shape=("batch", "classes"), nonempty=True)
        N, C = z.shape
        kind, y = check_class_targets(y_true, where, n_samples=N, n_classes=C, dtype=z.dtype)
        if kind != "labels":
            raise TypeError(
                f"{where}: y_true must be integer class labels of shape ({N},); got dtype {y.dtype}"
            )
        shifted = z - z.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        log_p = shifted - np.log(s)
        rows = np.arange(N)
        self.cache = {"p": e / s, "y": y}
        return float(-log_p[rows, y].mean())

    def _backward(self):
        p, y = self.cache["p"], self.cache["y"]
        dz = p.copy()
        dz[np.arange(len(y)), y] -= 1
        return dz / len(y)


class MeanSquaredError(Loss):
    """Mean squared error over all elements.

    ``L = mean((y_pred - y_true)**2)``, ``dL/dy_pred = 2 (y_pred - y_true) / size``.
    ``y_pred``: float array of any non-empty shape; ``y_true``: real numbers of
    the same shape (bool/int/float, cast to ``y_pred.dtype``).
    Source: ``lessons/04-regression-losses.md``.

    Raises
    ------
    TypeError
        Non-float ``y_pred`` or non-numeric ``y_true``.
    ValueError
        Shape mismatch, empty input, NaN/inf.
    RuntimeError
        ``backward`` before ``forward``.
    """

    def forward(self, y_true, y_pred) -> float:
        where = self._where("forward")
        yp = check_array(y_pred, where, "y_pred", nonempty=True)
        yt = check_targets(y_true, where, shape=yp.shape, dtype=yp.dtype)
        diff = yp - yt
        self.cache = {"diff": diff}
        return float(np.mean(diff * diff))

    def _backward(self):
        diff = self.cache["diff"]
        return 2 * diff / diff.size
