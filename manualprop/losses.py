"""Losses with hand-derived gradients.

Keras argument order: ``forward(y_true, y_pred) -> float`` caches what is
needed, ``backward() -> dL/dy_pred`` (same shape and dtype as ``y_pred``).
``loss(y_true, y_pred)`` is ``loss.forward(y_true, y_pred)``.

``reduction="mean"`` (default) averages the per-element losses (per-sample
for :class:`SoftmaxCrossEntropy`), ``"sum"`` adds them; the gradient is
scaled the same way (``1/n`` or ``1``), as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from ._extremes import ROWS as _ROWS  # noqa: F401  (the row indices by batch size: shared with autoprop's loss)
from ._extremes import ROWS_MAX as _ROWS_MAX  # noqa: F401
from ._extremes import rows as _rows
from ._validation import (
    Where,
    check_array,
    check_class_targets,
    check_forward_done,
    check_option,
    check_scalar,
    check_targets,
    float_ss,
    int64_labels,
)
from .layers import _sigmoid

__all__ = [
    "BinaryCrossEntropyWithLogits",
    "Huber",
    "Loss",
    "MeanSquaredError",
    "MulticlassHinge",
    "SoftmaxCrossEntropy",
]


class Loss:
    """Small base class: ``reduction``, ``cache``, ``__call__`` and the ``repr`` used in messages.

    Parameters
    ----------
    reduction : {"mean", "sum"}
    """

    def __init__(self, reduction="mean"):
        self.reduction = check_option(reduction, "reduction", type(self).__name__, ("mean", "sum"))
        self.cache = None

    def __call__(self, y_true, y_pred) -> float:
        return self.forward(y_true, y_pred)

    def _repr_args(self) -> str:
        return f"reduction={self.reduction!r}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _where(self, method: str) -> Where:
        """The prefix of this object's error messages, built only if one is written."""
        return Where(self, method)

    def _reduce(self, per: np.ndarray) -> tuple[float, float]:
        """Return (reduced loss as float, gradient scale 1/n or 1)."""
        # np.add.reduce is what ndarray.mean/sum run, without their Python wrappers; the mean
        # is that sum divided by the count, as numpy's (the same bits)
        total = float(np.add.reduce(per, axis=None))
        if self.reduction == "mean":
            return total / per.size, 1.0 / per.size
        return total, 1.0

    def backward(self) -> np.ndarray:
        """Return dL/dy_pred for the last ``forward`` (a new array each call).

        Raises
        ------
        RuntimeError
            Called before ``forward``.
        """
        if self.cache is None:
            check_forward_done(self.cache, self._where("backward"))
        return self._backward()


class SoftmaxCrossEntropy(Loss):
    """Softmax followed by cross-entropy, on logits ``z`` of shape (N, C).

    ``y_true`` is either integer class labels of shape (N,) in ``[0, C)`` (or (N, 1),
    squeezed, as Keras's SparseCategoricalCrossentropy)
    or float target probabilities ``T`` of shape (N, C) (non-negative).
    With ``eps = label_smoothing`` the targets become
    ``T <- (1 - eps) T + eps / C`` (labels are one-hot first), as in PyTorch::

        log p  = z - logsumexp(z)              (row-wise, shifted by the row max)
        L_i    = -sum_c T[i, c] log p[i, c]    (= -log p[i, y_i] for plain labels)
        L      = mean_i L_i  or  sum_i L_i
        dL/dz  = (p * sum_c T[i, c] - T) / N   (/ N only for "mean")

    which is the familiar ``(softmax(z) - onehot(y)) / N`` when rows of ``T``
    sum to 1. Shifting by the row maximum keeps every ``exp`` argument <= 0,
    so there is no overflow and no NaN for logits like ``[1000, 1001, 1002]``.
    A logit of ``-inf`` masks its class (probability 0, gradient 0; its ``0 * log 0``
    term is 0), as in TensorFlow: logits ``[0, -inf, 1]`` with label 2 give the gradient
    ``[0.269, 0, -0.269]``. Source: ``lessons/03-softmax-cross-entropy.md``.

    Parameters
    ----------
    reduction : {"mean", "sum"}
    label_smoothing : float in [0, 1]

    Raises
    ------
    TypeError
        Non-float logits, targets neither integer nor float.
    ValueError
        Wrong shapes, empty batch, label out of range, negative probability,
        NaN/+inf or a row of only -inf logits, bad hyperparameters.
    RuntimeError
        ``backward`` before ``forward``.
    """

    def __init__(self, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.label_smoothing = check_scalar(
            label_smoothing, "label_smoothing", type(self).__name__, low=0.0, high=1.0
        )

    def _repr_args(self) -> str:
        s = super()._repr_args()
        if self.label_smoothing:
            s += f", label_smoothing={self.label_smoothing}"
        return s

    def forward(self, y_true, y_pred) -> float:
        """Cross-entropy of logits ``y_pred`` (N, C) against ``y_true``; returns a float."""
        z = y_pred
        # check_array's structural checks inline (a float array of shape (batch, classes), not
        # empty), then its finiteness check; any doubt (or a masked -inf logit), the full check
        if float_ss(z) is None or z.ndim != 2 or not z.size:
            z = check_array(y_pred, self._where("forward"), "y_pred", shape=("batch", "classes"),
                            nonempty=True, masked=True)
        N, C = z.shape
        if int64_labels(y_true, N, C):
            kind, y = "labels", y_true
        else:
            kind, y = check_class_targets(y_true, self._where("forward"), n_samples=N, n_classes=C,
                                          dtype=z.dtype)
        # ndarray.max/sum without their Python wrappers (the same reductions, the same bits)
        shifted = z - np.maximum.reduce(z, axis=1, keepdims=True)
        e = np.exp(shifted)
        s = np.add.reduce(e, axis=1, keepdims=True)
        p = e
        p /= s  # e is not needed again: the softmax in its place (the same bits as e / s)
        if kind == "labels" and not self.label_smoothing:
            # -log_p[i, y_i] = log(s_i) - shifted[i, y_i] (the same bits): no full log_p
            per = np.log(s[:, 0]) - shifted[_rows(N), y]
            T = None
        else:
            log_p = shifted - np.log(s)
            T = np.eye(C, dtype=z.dtype)[y] if kind == "labels" else y
            if self.label_smoothing:
                eps = self.label_smoothing
                T = (1 - eps) * T + eps / C
            if not np.isfinite(log_p).all():  # masked logits: 0 * log 0 = 0
                log_p = np.where(T == 0, 0.0, log_p)
            per = -(T * log_p).sum(axis=1)
        value, scale = self._reduce(per)
        self.cache = {"p": p, "y": y, "T": T, "scale": scale}
        return value

    def backward(self) -> np.ndarray:
        """Return dL/dz for the last ``forward``: ``(p - onehot(y)) / N`` (a new array each call).

        Raises
        ------
        RuntimeError
            Called before ``forward``.
        """
        cache = self.cache
        if cache is None:
            check_forward_done(cache, self._where("backward"))
        p, y, T, scale = cache["p"], cache["y"], cache["T"], cache["scale"]
        if T is None:
            dz = p.copy()
            dz[_rows(len(y)), y] -= 1
        else:
            dz = p * T.sum(axis=1, keepdims=True) - T
        dz *= scale  # dz is a new array: scaled in place
        return dz


class MeanSquaredError(Loss):
    """Squared error ``(y_pred - y_true)**2``, averaged (or summed) over all elements.

    ``dL/dy_pred = 2 (y_pred - y_true) / size`` (``"mean"``) or
    ``2 (y_pred - y_true)`` (``"sum"``). ``y_pred``: float array of any
    non-empty shape; ``y_true``: real numbers of the same shape (bool/int/
    float, cast to ``y_pred.dtype``). Source: ``lessons/04-regression-losses.md``.

    Parameters
    ----------
    reduction : {"mean", "sum"}

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
        """Squared error of ``y_pred`` against ``y_true`` (same shape); returns a float."""
        where = self._where("forward")
        yp = check_array(y_pred, where, "y_pred", nonempty=True)
        yt = check_targets(y_true, where, shape=yp.shape, dtype=yp.dtype)
        diff = yp - yt
        value, scale = self._reduce(diff * diff)
        self.cache = {"diff": diff, "scale": scale}
        return value

    def _backward(self):
        return 2 * self.cache["diff"] * self.cache["scale"]


class Huber(Loss):
    """Huber loss with threshold ``delta`` (PyTorch's ``HuberLoss``), over all elements.

    With ``r = y_pred - y_true``::

        l(r)  = r**2 / 2                    if |r| <= delta
              = delta * (|r| - delta / 2)   otherwise
        dl/dr = clip(r, -delta, delta)

    then mean (``/ size``) or sum. Quadratic near 0, linear in the tails, so
    outliers pull with a bounded gradient. ``y_true`` as in
    :class:`MeanSquaredError`. Source: ``lessons/04-regression-losses.md``.

    Parameters
    ----------
    delta : float > 0
    reduction : {"mean", "sum"}

    Raises
    ------
    TypeError, ValueError, RuntimeError
        As :class:`MeanSquaredError`, plus a non-positive ``delta``.
    """

    def __init__(self, delta=1.0, reduction="mean"):
        super().__init__(reduction)
        self.delta = check_scalar(delta, "delta", type(self).__name__, low=0.0, low_inclusive=False)

    def _repr_args(self) -> str:
        return f"delta={self.delta}, " + super()._repr_args()

    def forward(self, y_true, y_pred) -> float:
        """Huber loss of ``y_pred`` against ``y_true`` (same shape); returns a float."""
        where = self._where("forward")
        yp = check_array(y_pred, where, "y_pred", nonempty=True)
        yt = check_targets(y_true, where, shape=yp.shape, dtype=yp.dtype)
        r = yp - yt
        a = np.abs(r)
        d = self.delta
        per = np.where(a <= d, 0.5 * r * r, d * (a - 0.5 * d))
        value, scale = self._reduce(per)
        self.cache = {"r": r, "scale": scale}
        return value

    def _backward(self):
        return np.clip(self.cache["r"], -self.delta, self.delta) * self.cache["scale"]


class BinaryCrossEntropyWithLogits(Loss):
    """Sigmoid followed by binary cross-entropy, on logits ``x``, over all elements.

    With targets ``t`` in [0, 1] (same shape as ``x``; bool/int/float)::

        l     = -t log sigmoid(x) - (1 - t) log(1 - sigmoid(x))
              = max(x, 0) - x t + log1p(exp(-|x|))      (stable form used)
        dl/dx = sigmoid(x) - t

    then mean (``/ size``) or sum. Only ``exp(-|x|) <= 1`` is evaluated, so
    ``x = -800, t = 1`` gives ``l = 800`` and ``dl/dx = -1`` with no
    overflow. Source: ``lessons/05-binary-cross-entropy.md``.

    Parameters
    ----------
    reduction : {"mean", "sum"}

    Raises
    ------
    TypeError
        Non-float logits or non-numeric targets.
    ValueError
        Shape mismatch, empty input, NaN/inf, target outside [0, 1].
    RuntimeError
        ``backward`` before ``forward``.
    """

    def forward(self, y_true, y_pred) -> float:
        """BCE of logits ``y_pred`` against targets ``y_true`` (same shape); returns a float."""
        where = self._where("forward")
        x = check_array(y_pred, where, "y_pred", nonempty=True)
        t = check_targets(y_true, where, shape=x.shape, dtype=x.dtype, low=0.0, high=1.0)
        per = np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x)))
        value, scale = self._reduce(per)
        self.cache = {"x": x, "t": t, "scale": scale}
        return value

    def _backward(self):
        return (_sigmoid(self.cache["x"]) - self.cache["t"]) * self.cache["scale"]


class MulticlassHinge(Loss):
    r"""Multiclass SVM (hinge) loss of CS231n (Weston and Watkins), on scores ``s`` (N, C).

    With integer labels ``y`` (N,) and ``margin`` :math:`\Delta`::

        m[i, j] = max(0, s[i, j] - s[i, y_i] + margin)   for j != y_i,  m[i, y_i] = 0
        L_i     = sum_j m[i, j]
        L       = mean_i L_i  or  sum_i L_i

    The gradient (a subgradient: at ``m = 0`` exactly the hinge counts as
    inactive, the convention ``relu'(0) = 0``)::

        dL/ds[i, j]   = [s[i, j] - s[i, y_i] + margin > 0]            (j != y_i)
        dL/ds[i, y_i] = -(number of classes j != y_i with an active hinge)

    times ``1/N`` for ``"mean"``. Each violating class pushes its own score down
    and the true score up by the same amount, so every row of ``dL/ds`` sums to 0.
    PyTorch's ``nn.MultiMarginLoss`` is this loss divided by ``C``; Keras's
    ``CategoricalHinge`` is a different loss (only the largest wrong score counts).
    Source: ``lessons/05b-hinge-loss.md``; CS231n, "Linear classification".

    Parameters
    ----------
    margin : float > 0, default 1.0
    reduction : {"mean", "sum"}
        Over samples.

    Raises
    ------
    TypeError
        Non-float scores; float (probability) targets: labels only.
    ValueError
        Scores not (batch, classes) or empty, labels not (N,) or out of
        ``[0, C)``, NaN/inf, non-positive ``margin``.
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> loss = MulticlassHinge()
    >>> round(loss.forward(np.array([0]), np.array([[3.2, 5.1, -1.7]])), 12)  # CS231n's cat image
    2.9
    >>> loss.backward()          # only class 1 (car) violates: it gets +1, the true class -1
    array([[-1.,  1.,  0.]])
    """

    def __init__(self, margin=1.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = check_scalar(margin, "margin", type(self).__name__, low=0.0, low_inclusive=False)

    def _repr_args(self) -> str:
        return f"margin={self.margin}, " + super()._repr_args()

    def forward(self, y_true, y_pred) -> float:
        """Hinge loss of scores ``y_pred`` (N, C) against labels ``y_true`` (N,); returns a float."""
        where = self._where("forward")
        s = check_array(y_pred, where, "y_pred", shape=("batch", "classes"), nonempty=True)
        N, C = s.shape
        kind, y = check_class_targets(y_true, where, n_samples=N, n_classes=C, dtype=s.dtype)
        if kind != "labels":
            raise TypeError(
                f"{where}: y_true must be integer class labels of shape ({N},); got float "
                f"targets of shape {np.shape(y_true)} (the hinge loss takes labels, not probabilities)"
            )
        rows = np.arange(N)
        m = s - s[rows, y][:, None] + self.margin
        m[rows, y] = 0.0
        active = m > 0
        value, scale = self._reduce(np.where(active, m, 0.0).sum(axis=1))
        self.cache = {"active": active, "y": y, "scale": scale, "dtype": s.dtype}
        return value

    def _backward(self):
        active, y, scale = self.cache["active"], self.cache["y"], self.cache["scale"]
        ds = active.astype(self.cache["dtype"])
        ds[np.arange(len(y)), y] = -active.sum(axis=1)
        return ds * scale
