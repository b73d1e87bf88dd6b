"""Losses written with tape operations, called Keras-style: ``loss_fn(y_true, y_pred)``.

Twins of :mod:`manualprop.losses` (same constructor arguments); each returns a
scalar Tensor, and the tape derives ``dL/dy_pred``. Target checks are manualprop's
(one place for validation).
"""

from __future__ import annotations

import numpy as np

from manualprop._validation import (
    Where,
    check_array,
    check_class_targets,
    check_option,
    check_scalar,
    check_targets,
    float_ss,
    int64_labels,
)

from .core import registry as R
from .core.tape import int_leaves, on_replay, replayed
from .core.tensor import _TRACERS, Tensor
from .layers.base import check_at_replay

__all__ = [
    "BinaryCrossEntropyWithLogits", "Huber", "Loss", "MeanSquaredError", "MulticlassHinge",
    "SoftmaxCrossEntropy",
]


class Loss:
    """Base class: ``reduction`` ("mean" or "sum"), ``__call__(y_true, y_pred)``."""

    def __init__(self, reduction="mean"):
        self.reduction = check_option(reduction, "reduction", type(self).__name__, ("mean", "sum"))

    def _repr_args(self) -> str:
        return f"reduction={self.reduction!r}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _where(self) -> Where:
        """``"autoprop.losses.<repr>"``, built only when a message is written."""
        return Where(self, "", "autoprop.losses.")

    def _pred(self, y_pred, y_true=None, **spec):  # spec: check_array's shape=, masked=
        value = y_pred._value if isinstance(y_pred, Tensor) else y_pred
        if y_true is not None and not (isinstance(value, np.ndarray) and value.dtype.kind in "fc"):
            self._check_order(value, y_true)  # (a float array, the common case: not swapped)
        check_array(value, self._where(), "y_pred", nonempty=True, **spec)
        if _TRACERS:  # (autoprop.function: the values checked again at each replay)
            check_at_replay(self._where(), y_pred, "y_pred", nonempty=True, **spec)
        return y_pred if isinstance(y_pred, Tensor) else Tensor(y_pred)

    def _check_order(self, y_pred, y_true):
        """TypeError when the arguments look swapped: integer (or bool) predictions beside float
        targets, PyTorch's ``cross_entropy(input, target)`` order given to Keras's
        ``loss(y_true, y_pred)`` (newuser36 L3: the message said to cast the labels to float)."""
        came = np.asarray(y_pred).dtype
        true = y_true._value if isinstance(y_true, Tensor) else y_true
        if came.kind in "biu" and np.asarray(true).dtype.kind == "f":
            name = type(self).__name__
            raise TypeError(
                f"{self._where()}: y_pred has dtype {came} (shape {np.shape(y_pred)}) and y_true "
                f"dtype {np.asarray(true).dtype} (shape {np.shape(true)}): the arguments look swapped. "
                f"Losses take Keras's order, loss(y_true, y_pred): the targets first, then the "
                f"predictions, {name}()(labels, logits) (PyTorch's F.cross_entropy(input, target) "
                f"takes the logits first)")

    def _labels_again(self, y_true, n, c):
        """:func:`int64_labels`'s check of labels passed to a replay of autoprop.function (the message
        from :func:`check_class_targets`): a negative label would index from the end, silently."""
        if not int64_labels(y_true, n, c):
            check_class_targets(y_true, self._where(), n_samples=n, n_classes=c, dtype=np.float64)

    def _class_targets(self, y_true, n, c, dtype, then=None):
        """:func:`check_class_targets` of ``y_true`` for scores ``(n, c)``, and ``then(labels)`` of
        integer labels (the hinge's one-hot matrix). While :func:`autoprop.function` traces, an
        integer label argument (an array or a Tensor) in another dtype (int32, uint8), as a Tensor
        or as a column ``(n, 1)`` is cast (and
        checked) to int64 labels again at each replay with that call's labels, as an eager call casts
        them; so is ``then`` (verify38 F7: the cast's new array was refused as "neither an argument
        nor a Variable").

        A Python list (or tuple) of integer labels is converted again at each replay, as an eager call
        converts it: an argument's list is part of the input signature by value (tf.function's rule: other
        values trace again), a list read from elsewhere is read anew (verify39 F2: the array made from it was
        refused as "neither an argument of the call nor a Variable"). A float argument arrives as a Tensor:
        its shape and dtype (the signature's) get the eager checks and messages (verify39 F3: "a numpy
        conversion of a traced tensor").
        """
        if _TRACERS and type(y_true) in (list, tuple) and int_leaves(y_true):
            def from_list(values):
                kind, y = check_class_targets(values, self._where(), n_samples=n, n_classes=c, dtype=dtype)
                if kind != "labels":  # (a list read from elsewhere, since made floats: the trace took labels)
                    raise TypeError(f"{self._where()}: y_true, a Python list of integer labels when traced, now "
                                    "holds floats: trace again (call the function undecorated, or pass an array)")
                return y if then is None else then(y)
            return "labels", replayed(from_list, y_true)
        if _TRACERS and isinstance(y_true, Tensor) and y_true.dtype.kind not in "iu":
            kind = check_class_targets(y_true._value, self._where(), n_samples=n, n_classes=c, dtype=dtype)[0]
            return kind, y_true  # (probabilities: refused by the caller under a trace, as before)
        if _TRACERS and (type(y_true) is not np.ndarray and isinstance(y_true, (np.ndarray, Tensor))) \
                and y_true.dtype.kind in "iu":  # (autoprop.function's guarded view of an argument, or a Tensor)
            def labels(values):
                y = check_class_targets(values.view(np.ndarray), self._where(), n_samples=n,
                                        n_classes=c, dtype=dtype)[1]
                return y if then is None else then(y)
            return "labels", replayed(labels, y_true)
        kind, y = check_class_targets(y_true, self._where(), n_samples=n, n_classes=c, dtype=dtype)
        return kind, (y if then is None or kind != "labels" else then(y))

    def _targets(self, y_true, like, **limits):
        """:func:`check_targets` of ``y_true`` against the prediction ``like`` (its shape and dtype;
        ``limits``: low=, high=). While :func:`autoprop.function` traces, a float target argument
        arrives as a Tensor: its values are checked (again at each replay, as an eager call checks
        them) and the Tensor itself is used when no cast is needed, so that each replay reads that
        call's targets (fnbreak38: MSE, Huber and BCE were refused)."""
        if _TRACERS and type(y_true) is Tensor:
            def check(values):
                return check_targets(values, self._where(), shape=like.shape, dtype=like.dtype, **limits)
            if on_replay(check, y_true) is y_true._value:
                return y_true
        return check_targets(y_true, self._where(), shape=like.shape, dtype=like.dtype, **limits)

    def _reduce(self, per):
        return R.mean(per) if self.reduction == "mean" else R.sum(per)


class SoftmaxCrossEntropy(Loss):
    """``-sum_c T log softmax(z)`` per sample, then mean or sum over the batch.

    ``y_true``: integer labels (N,) (or (N, 1), squeezed) or probabilities (N, C); ``label_smoothing`` eps
    gives ``T <- (1 - eps) T + eps / C``. ``y_pred``: logits (N, C); ``-inf`` masks a class
    (its ``0 * log 0`` term is 0), as manualprop and TensorFlow.
    Source: ``lessons/03-softmax-cross-entropy.md``.
    """

    def __init__(self, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.label_smoothing = check_scalar(
            label_smoothing, "label_smoothing", type(self).__name__, low=0.0, high=1.0
        )

    def __call__(self, y_true, y_pred):
        # _pred's checks, their common case inline as in manualprop's loss (a float array
        # (batch, classes), not empty, finite) and int64 labels in range (int64_labels, one
        # reduction); any doubt (or a masked -inf logit): the full checks and their messages
        v = y_pred._value if isinstance(y_pred, Tensor) else y_pred
        if float_ss(v) is None or v.ndim != 2 or not v.size:
            z = self._pred(y_pred, y_true, shape=("batch", "classes"), masked=True)
        else:
            z = y_pred if isinstance(y_pred, Tensor) else Tensor(y_pred)
            if _TRACERS:  # (autoprop.function: the values checked again at each replay)
                check_at_replay(self._where(), z, "y_pred", shape=("batch", "classes"), masked=True)
        n, c = z._value.shape  # (z.shape without the property's frame)
        labels = y_true
        if _TRACERS and type(y_true) is not np.ndarray and isinstance(y_true, np.ndarray):
            labels = y_true.view(np.ndarray)  # (autoprop.function's guarded view of an argument)
        if int64_labels(labels, n, c):
            kind, y = "labels", y_true
            if _TRACERS:  # autoprop.function: the labels' range checked again at each replay
                on_replay(self._labels_again, y_true, n, c)
        else:
            kind, y = self._class_targets(y_true, n, c, z.dtype)
        if kind == "labels" and not self.label_smoothing:
            if self.reduction == "mean":  # the loss and its mean, one record (torch's cross_entropy)
                return R.sparse_softmax_cross_entropy_mean(z, y)
            # the fused primitive, as tf.nn.sparse_softmax_cross_entropy_with_logits
            return self._reduce(R.sparse_softmax_cross_entropy_with_logits(z, y))
        if _TRACERS:  # (its masked-logits test below reads the values: a branch a trace would freeze)
            _TRACERS[-1].refuse("SoftmaxCrossEntropy with probability targets or label smoothing")
        logp = R.log_softmax(z, axis=-1)
        T = np.eye(c, dtype=z.dtype)[y] if kind == "labels" else y
        if self.label_smoothing:
            T = (1 - self.label_smoothing) * T + self.label_smoothing / c
        if not np.isfinite(z._value).all():  # masked logits: 0 * log 0 = 0
            logp = R.where(T == 0, 0.0, logp)
        return self._reduce(-R.sum(logp * T, axis=1))


class MeanSquaredError(Loss):
    """``(y_pred - y_true)^2`` averaged or summed over all elements.
    Source: ``lessons/04-regression-losses.md``."""

    def __call__(self, y_true, y_pred):
        yp = self._pred(y_pred, y_true)
        d = yp - self._targets(y_true, yp)
        return self._reduce(d * d)


class Huber(Loss):
    """``r^2 / 2`` for ``|r| <= delta``, ``delta (|r| - delta/2)`` beyond; r = y_pred - y_true.
    Source: ``lessons/04-regression-losses.md``."""

    def __init__(self, delta=1.0, reduction="mean"):
        super().__init__(reduction)
        self.delta = check_scalar(delta, "delta", type(self).__name__, low=0.0, low_inclusive=False)

    def _repr_args(self) -> str:
        return f"delta={self.delta}, " + super()._repr_args()

    def __call__(self, y_true, y_pred):
        yp = self._pred(y_pred, y_true)
        r = yp - self._targets(y_true, yp)
        a = R.absolute(r)
        d = self.delta
        return self._reduce(R.where(a <= d, 0.5 * r * r, d * (a - 0.5 * d)))


class BinaryCrossEntropyWithLogits(Loss):
    """``logaddexp(0, x) - x t`` = BCE of sigmoid(x) against t, mean or sum.

    Stable for any logit: at x = -800, t = 1 the loss is 800 and its gradient -1.
    Written with ``logaddexp`` (smooth), not ``max(x, 0) + log1p(exp(-|x|))``, whose
    kink conventions at x = 0 would give ``-t`` instead of ``0.5 - t``.
    Source: ``lessons/05-binary-cross-entropy.md``.
    """

    def __call__(self, y_true, y_pred):
        x = self._pred(y_pred, y_true)
        t = self._targets(y_true, x, low=0.0, high=1.0)
        return self._reduce(R.logaddexp(0.0, x) - x * t)


class MulticlassHinge(Loss):
    """``sum_{j != y} relu(s_j - s_y + margin)`` per sample, then mean or sum (twin of
    :class:`manualprop.MulticlassHinge`).

    Written forward only with public operations: the true class's score is picked with a
    one-hot product, its own term is masked out, and ``relu`` (``relu'(0) = 0``) gives the
    manual layer's convention at an exactly-zero margin.
    Source: ``lessons/05b-hinge-loss.md``.
    """

    def __init__(self, margin=1.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = check_scalar(margin, "margin", type(self).__name__, low=0.0, low_inclusive=False)

    def _repr_args(self) -> str:
        return f"margin={self.margin}, " + super()._repr_args()

    def __call__(self, y_true, y_pred):
        s = self._pred(y_pred, y_true, shape=("batch", "classes"))
        n, c = s.shape
        kind, onehot = self._class_targets(y_true, n, c, s.dtype, then=lambda y: np.eye(c, dtype=s.dtype)[y])
        if kind != "labels":
            raise TypeError(
                f"{self._where()}: y_true must be integer class labels of shape ({n},); got float "
                f"targets of shape {np.shape(y_true)} (the hinge loss takes labels, not probabilities)"
            )
        s_true = R.sum(s * onehot, axis=1, keepdims=True)      # (N, 1)
        others = replayed(np.subtract, 1.0, onehot)  # 1 - onehot (at each replay of autoprop.function)
        hinge = R.relu(s - s_true + self.margin) * others      # (N, C)
        return self._reduce(R.sum(hinge, axis=1))
