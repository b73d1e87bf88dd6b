"""The Keras-style training loop, written once and used by both packages.

``fit`` on a manual :class:`~manualprop.Sequential` and on an autoprop ``Model`` runs
:func:`fit_loop`: it batches and shuffles the data, calls the model's
``train_step(data)`` once per batch, averages the returned metrics per epoch, runs
``test_step`` on validation data, shows a tqdm progress bar and returns a
:class:`History`. What differs between the packages is only ``train_step``: the manual
one calls ``forward``, ``loss.backward`` and ``backward`` by hand; the tape one records
the forward pass and asks the tape (``lessons/07-sequential.md``).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_positive_int
from .init import as_rng

__all__ = ["History", "accuracy", "fit_loop", "iterate_minibatches"]


class History:
    """What ``fit`` returns, as Keras's ``History``.

    Attributes
    ----------
    history : dict[str, list[float]]
        One list per metric, one value per epoch: ``"loss"``, ``"accuracy"``, and
        ``"val_loss"``, ``"val_accuracy"`` when validation data was given. Epoch values
        are the mean over the epoch's batches, weighted by batch size.
    epoch : list of int
    """

    def __init__(self):
        self.history: dict[str, list[float]] = {}
        self.epoch: list[int] = []

    def _append(self, epoch: int, logs: dict) -> None:
        self.epoch.append(epoch)
        for k, v in logs.items():
            self.history.setdefault(k, []).append(float(v))

    def __repr__(self) -> str:
        last = {k: round(v[-1], 4) for k, v in self.history.items() if v}
        return f"History(epochs={len(self.epoch)}, last={last})"


def accuracy(y_true, logits) -> float:
    """Fraction of rows whose largest logit is at the integer label.

    Parameters
    ----------
    y_true : ndarray of int, shape (N,)
    logits : ndarray, shape (N, C)

    Returns
    -------
    float in [0, 1]
    """
    logits = np.asarray(logits)
    return float(np.mean(np.argmax(logits, axis=-1) == np.asarray(y_true)))


def _check_xy(x, y, where):
    x = np.asarray(x)
    y = np.asarray(y)
    if x.ndim == 0 or y.ndim == 0 or len(x) != len(y):
        raise ValueError(
            f"{where}: x and y must have the same number of samples (first axis); "
            f"got x {x.shape} and y {y.shape}"
        )
    if len(x) == 0:
        raise ValueError(f"{where}: x is empty; got shape {x.shape}")
    return x, y


def iterate_minibatches(n, batch_size, shuffle, rng):
    """Yield index arrays covering ``range(n)`` in batches (the last may be smaller).

    Parameters
    ----------
    n, batch_size : int
    shuffle : bool
        A fresh permutation per call from ``rng`` (reproducible for a seeded rng).
    rng : numpy.random.Generator
    """
    order = rng.permutation(n) if shuffle else np.arange(n)
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


def fit_loop(model, x, y, *, epochs=1, batch_size=32, validation_data=None, shuffle=True,
             seed=None, verbose=1, name="fit"):
    """Train ``model`` with its own ``train_step`` over ``epochs`` passes of the data.

    Parameters
    ----------
    model : object
        Has ``train_step((x_batch, y_batch)) -> dict of floats`` and, for validation,
        ``test_step((x, y)) -> dict of floats``.
    x : ndarray, shape (N, ...)
    y : ndarray, shape (N, ...)
    epochs, batch_size : int
    validation_data : tuple (x_val, y_val), optional
    shuffle : bool
        Shuffle the training samples at the start of every epoch.
    seed : int or numpy.random.Generator, optional
        Makes the batch order reproducible (two models fitted with the same seed see
        the same batches in the same order).
    verbose : int
        0: silent; 1: a tqdm progress bar per epoch with the running loss.

    Returns
    -------
    History

    Raises
    ------
    ValueError
        x and y of different lengths, empty data, non-positive epochs or batch_size.
    """
    from tqdm.auto import tqdm

    where = f"{type(model).__name__}.{name}"
    x, y = _check_xy(x, y, where)
    epochs = check_positive_int(epochs, "epochs", where)
    batch_size = check_positive_int(batch_size, "batch_size", where)
    rng = as_rng(seed if seed is not None else 0)
    history = History()
    n = len(x)
    for epoch in range(epochs):
        sums: dict[str, float] = {}
        seen = 0
        bar = tqdm(total=n, desc=f"epoch {epoch + 1}/{epochs}", unit="sample",
                   disable=not verbose, leave=False)
        for idx in iterate_minibatches(n, batch_size, shuffle, rng):
            logs = model.train_step((x[idx], y[idx]))
            for k, v in logs.items():
                sums[k] = sums.get(k, 0.0) + float(v) * len(idx)
            seen += len(idx)
            bar.update(len(idx))
            bar.set_postfix(loss=f"{sums.get('loss', float('nan')) / seen:.4f}")
        bar.close()
        logs = {k: v / seen for k, v in sums.items()}
        if validation_data is not None:
            xv, yv = _check_xy(*validation_data, where + " (validation_data)")
            logs.update({f"val_{k}": v for k, v in model.test_step((xv, yv)).items()})
        history._append(epoch, logs)
    return history
