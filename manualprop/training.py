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

import warnings

import numpy as np

from ._validation import check_positive_int
from .init import as_rng

__all__ = ["History", "accuracy", "compile_args", "evaluate_loop", "fit_loop", "iterate_minibatches",
           "output_layer", "progress_bar"]


def progress_bar():
    """tqdm's bar class as ``tqdm.auto`` chooses it (a widget in a notebook that has ipywidgets, else text), imported
    without its ``TqdmWarning: IProgress not found``: a notebook kernel without ipywidgets gets the text bar, and no
    warning under the first cell that checks or fits (newuser24 L6). The one import of tqdm of the three packages.

    Returns
    -------
    type
        ``tqdm.auto.tqdm``.
    """
    import warnings

    from tqdm import TqdmWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=TqdmWarning)
        from tqdm.auto import tqdm
    return tqdm


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


def accuracy(y_true, logits, loss=None, last_layer=None) -> float:
    """Fraction of the predictions that are right, read from the logits as Keras's ``"accuracy"``.

    Integer labels of shape ``logits.shape[:-1]``: the largest logit is at the label. One-hot (or
    probability) targets of the logits' shape: its largest logit is at the target's largest entry
    (Keras's categorical accuracy). A binary classifier, a single logit per example (``logits`` of
    shape (N,) or (N, 1)) or ``loss`` a ``BinaryCrossEntropyWithLogits`` (multi-label targets of the
    logits' shape): each logit is a prediction, positive above 0 (our losses take logits, so 0 is
    probability 1/2), compared with the 0/1 targets entry by entry (Keras's binary accuracy). An
    argmax over a single logit would be 0 for every example: the share of label 0 (verify41 H2).

    Parameters
    ----------
    y_true : ndarray
        Integer labels (N,), one-hot targets (N, C), or 0/1 targets of a binary classifier.
    logits : ndarray, shape (N, C), (N, 1) or (N,)
    loss : loss object, optional
        The compiled loss; a ``BinaryCrossEntropyWithLogits`` makes the accuracy binary.
    last_layer : object, optional
        The model's last layer: after a ``Sigmoid`` the outputs are probabilities, positive above 1/2
        (Keras's binary accuracy, threshold 0.5; verify41b F0: read as logits, every probability
        was positive and the accuracy the share of label 1). A ``MeanSquaredError`` or ``Huber`` loss
        fits the outputs to the 0/1 targets themselves: threshold 1/2 too, whatever the last layer
        (Keras's; verify42b F11: a linear output was cut at 0, and a subclassed model's at 0 after its
        Sigmoid).

    Returns
    -------
    float in [0, 1]

    Raises
    ------
    ValueError
        Targets whose shape is none of the above, named with the logits' shape.
    """
    logits, y = np.asarray(logits), np.asarray(y_true)
    binary = type(loss).__name__ == "BinaryCrossEntropyWithLogits" or logits.ndim == 1 or logits.shape[-1] == 1
    if binary:
        if y.size == logits.size and y.shape != logits.shape:
            y = y.reshape(logits.shape)  # labels (N,) beside logits (N, 1), or the other way
        if y.shape == logits.shape:
            cut = 0.5 if type(last_layer).__name__ == "Sigmoid" or type(loss).__name__ in _VALUE_LOSSES else 0.0
            return float(np.mean((logits > cut) == (y > 0.5)))
    elif y.shape in (logits.shape[:-1], logits.shape[:-1] + (1,)):  # labels (N,) or (N, 1), as Keras's
        return float(np.mean(np.argmax(logits, axis=-1) == y.reshape(logits.shape[:-1])))
    elif y.shape == logits.shape and np.all(y >= 0) and np.allclose(y.sum(axis=-1), 1.0):
        return float(np.mean(np.argmax(logits, axis=-1) == np.argmax(y, axis=-1)))
    kind = "0/1 targets of the logits' shape" if binary else (
        f"integer labels of shape {logits.shape[:-1]} or one-hot targets of shape {logits.shape} "
        "(rows of non-negative entries summing to 1)")
    raise ValueError(f"accuracy: targets of shape {y.shape} beside logits of shape {logits.shape}; expected {kind}")


#: Keras's optimizer identifiers and the classes they name (defaults as in manualprop.optim).
_OPTIMIZER_NAMES = {"sgd": "SGD", "adam": "Adam", "rmsprop": "RMSProp"}


#: Losses that fit the outputs to the targets' values: a binary accuracy cuts them at 1/2 (:func:`accuracy`).
_VALUE_LOSSES = ("MeanSquaredError", "Huber")

#: Last layers whose outputs are probabilities, and the losses that take logits (apply their own softmax/sigmoid).
_PROBABILITY_LAYERS = {"Softmax": "softmax", "Sigmoid": "sigmoid"}
_LOGITS_LOSSES = {"SoftmaxCrossEntropy": "softmax", "BinaryCrossEntropyWithLogits": "sigmoid"}


#: Layers that hand on their input's values (reshaped, or unchanged at inference, as a dropout): a model's outputs
#: are those of the layer before them (verify42b F5: a Sigmoid before a Dropout was read as logits).
_RESHAPES = ("Flatten", "Reshape", "Identity", "Dropout", "SpatialDropout1D", "SpatialDropout2D", "GaussianNoise")


def output_layer(layers):
    """The layer whose values a chain of ``layers`` (a Sequential's) outputs, and its position.

    The last layer, looked for inside a last nested ``Sequential`` or subclass of one (not a ``Residual``: its output
    is ``x + F(x)``) and before a last ``Flatten`` or ``Dropout`` (a reshape keeps the values, a dropout at inference
    too): ``Sequential(Linear, Sequential(ReLU, Softmax))``, ``Sequential(Linear, Softmax, Flatten)`` and
    ``Sequential(Linear, Softmax, Dropout(0.2))`` output a Softmax's probabilities (verify41b F4: compile's warning
    and the accuracy's threshold read the container or the Flatten), as Keras follows the output tensor to the
    operation that made it.

    Parameters
    ----------
    layers : sequence
        The layers, in order.

    Returns
    -------
    (object or None, str)
        The layer (None when there is none) and its position as the flat parameter names give it (``"1.1"``).
    """
    stack, opened = [(str(i), layer) for i, layer in enumerate(layers)], set()
    while stack:
        at, layer = stack.pop()
        kind = type(layer).__name__
        names = {c.__name__ for c in type(layer).__mro__}  # a subclass of Sequential too (verify42b F5), not a
        chain = "Sequential" in names and "Residual" not in names  # Residual (one in manualprop): x + F(x)
        inner = getattr(layer, "__dict__", {}).get("layers") if chain else None
        if isinstance(inner, list) and id(layer) not in opened:  # (a container holding itself is opened once)
            opened.add(id(layer))
            stack += [(f"{at}.{i}", sub) for i, sub in enumerate(inner)]
        elif kind not in _RESHAPES:
            return layer, at
    return None, ""


def _warn_probabilities_into_logits(where, last_layer, loss, at=""):
    """Warn when the model ends in a Softmax or Sigmoid layer and the loss takes logits (verify41 M4: the loss
    applied a second softmax, and the model trained toward another objective without a word; Keras warns for
    ``from_logits=True`` after a softmax activation). ``at``: the layer's position when it is inside a nested
    Sequential or before a Flatten (:func:`output_layer`)."""
    layer, lossname = type(last_layer).__name__, type(loss).__name__
    if layer in _PROBABILITY_LAYERS and lossname in _LOGITS_LOSSES:
        said = (f"the model's outputs are those of its {layer}, layer {at} (a nested Sequential, a Flatten or a "
                "Dropout hands them on)") if at else f"the last layer is {layer}"
        warnings.warn(
            f"{where}: {said} (its outputs are probabilities), but {lossname} takes logits "
            f"and applies its own {_LOGITS_LOSSES[lossname]}: the model would train toward another objective. "
            f"Remove the final {layer} (the loss includes it), and apply it to the outputs when you need "
            "probabilities.", UserWarning, stacklevel=4)


#: Keras's loss identifiers (``keras.losses.get``) -> the loss object that computes the same number, and
#: what differs. Strings stay refused: Keras's cross-entropy strings take probabilities, ours logits.
_KERAS_LOSS_STRINGS = {
    ("mse", "mean_squared_error", "meansquarederror"): ("MeanSquaredError()", "the same mean over all elements"),
    ("huber", "huber_loss"): ("Huber()", "the same loss, delta=1.0 as Keras's default"),
    ("binary_crossentropy", "binarycrossentropy", "bce"): (
        "BinaryCrossEntropyWithLogits()", "it takes logits (Keras's BinaryCrossentropy(from_logits=True)): "
        "remove a final sigmoid, Keras's string takes probabilities"),
    ("sparse_categorical_crossentropy", "sparsecategoricalcrossentropy", "categorical_crossentropy",
     "categoricalcrossentropy"): (
        "SoftmaxCrossEntropy()", "it takes logits (Keras's SparseCategoricalCrossentropy(from_logits=True); "
        "integer labels or one-hot/probability targets): remove a final softmax, Keras's string takes "
        "probabilities"),
}


def _loss_string_advice(where, loss, loss_names):
    """The refusal of a loss given as Keras's string: the matching loss object when there is one (F1 of
    tfport46: the advice named SoftmaxCrossEntropy for 'mse' too), else the strings that have one.
    ``loss_names`` ends with ``SoftmaxCrossEntropy()``; what precedes it is the package's prefix."""
    prefix = loss_names[: -len("SoftmaxCrossEntropy()")] if loss_names.endswith("SoftmaxCrossEntropy()") else ""
    key = loss.lower()
    for names, (obj, note) in _KERAS_LOSS_STRINGS.items():
        if key in names:
            return f"{where}: pass the loss as an object, not the string {loss!r}: use {prefix}{obj} ({note})."
    known = [names[0] for names in _KERAS_LOSS_STRINGS]
    return (f"{where}: pass the loss as an object, not the string {loss!r}, which has no loss object here; "
            f"the Keras strings with one: {known} (e.g. {prefix}MeanSquaredError(), {loss_names}).")


def compile_args(owner, optimizer, loss, metrics, loss_names, last_layer=None, at=""):
    """Check and resolve the arguments of ``compile`` (one place for both packages).

    Parameters
    ----------
    owner : str
        ``"Sequential"`` or the model's class name, for messages.
    optimizer : Optimizer or str
        An optimizer object, or Keras's identifier ``"sgd"``, ``"adam"``, ``"rmsprop"``
        (built with the default learning rate).
    loss : callable loss object
        ``loss(y_true, y_pred)``. Strings are refused: Keras's
        ``"sparse_categorical_crossentropy"`` expects probabilities, our losses take
        logits, so the loss is named explicitly; the message names the loss object that
        matches a Keras string (``"mse"``: ``MeanSquaredError()``).
    metrics : sequence of str
        ``"accuracy"`` is supported.
    loss_names : str
        How to build the package's losses, for the message (``"ap.losses.SoftmaxCrossEntropy()"``: the
        prefix before ``SoftmaxCrossEntropy()`` names the package's other losses).
    last_layer : object, optional
        The layer that makes the model's outputs (:func:`output_layer`): a ``Softmax`` or ``Sigmoid`` before a
        loss that takes logits is warned about (UserWarning), as Keras warns.
    at : str, optional
        ``last_layer``'s position when it is not the model's last layer (inside a nested ``Sequential``, or
        before a ``Flatten``), named in the warning.

    Returns
    -------
    (optimizer, loss, metrics)

    Raises
    ------
    TypeError
        A loss given as a string or not callable; an optimizer without ``apply_gradients``.
    ValueError
        An unknown optimizer identifier or metric name.
    """
    from . import optim

    where = f"{owner}.compile"
    if isinstance(optimizer, str):
        cls = _OPTIMIZER_NAMES.get(optimizer.lower())
        if cls is None:
            raise ValueError(f"{where}: unknown optimizer {optimizer!r}; use one of "
                             f"{sorted(_OPTIMIZER_NAMES)} or an optimizer object")
        optimizer = getattr(optim, cls)()
    if not callable(getattr(optimizer, "apply_gradients", None)):
        raise TypeError(f"{where}: optimizer must be an optimizer object (e.g. SGD(0.1)) or one of "
                        f"{sorted(_OPTIMIZER_NAMES)}; got {type(optimizer).__name__}")
    if isinstance(loss, str):
        raise TypeError(_loss_string_advice(where, loss, loss_names))
    if not callable(loss):
        raise TypeError(f"{where}: loss must be a loss object called as loss(y_true, y_pred); "
                        f"got {type(loss).__name__}")
    unknown = [m for m in metrics if m != "accuracy"]
    if unknown:
        raise ValueError(f"{where}: unknown metric(s) {unknown}; supported: ['accuracy']")
    _warn_probabilities_into_logits(where, last_layer, loss, at)
    return optimizer, loss, tuple(metrics)


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


def _batch_means(step, step_name, model, x, y, batches, bar) -> dict:
    """``step((x[idx], y[idx]))`` for each index array ``idx`` of ``batches``: the mean of each
    metric it returns over the batches, weighted by batch size (Keras's epoch and ``evaluate``
    logs: the loss tracker is updated with the batch's sample count), with a tqdm ``bar``."""
    sums: dict[str, float] = {}
    seen = 0
    for idx in batches:
        logs = step((x[idx], y[idx]))
        if not isinstance(logs, dict):
            raise TypeError(
                f"{type(model).__name__}.{step_name} must return a dict of metrics, e.g. "
                f"{{'loss': value}}; got {type(logs).__name__}"
            )
        for k, v in logs.items():
            sums[k] = sums.get(k, 0.0) + float(v) * len(idx)
        seen += len(idx)
        bar.update(len(idx))
        bar.set_postfix(loss=f"{sums.get('loss', float('nan')) / seen:.4f}")
    bar.close()
    return {k: v / seen for k, v in sums.items()}


def evaluate_loop(model, x, y, *, batch_size=None, verbose="auto", return_dict=False,
                  name="evaluate"):
    """Keras's ``model.evaluate``: the loss and metrics of ``model`` on ``(x, y)`` in inference
    mode, by batches.

    Parameters
    ----------
    model : object
        Has ``test_step((x_batch, y_batch)) -> dict of floats`` (``"loss"`` first, then the
        compiled metrics, ``"accuracy"``).
    x : ndarray, shape (N, ...)
    y : ndarray, shape (N, ...)
    batch_size : int, optional
        Samples per batch, default 32 (Keras's). The result is the mean over the batches
        weighted by batch size, which for a mean loss is the loss of the whole set (up to
        rounding): the batches bound the memory, not the value.
    verbose : {"auto", 0, 1, 2}
        0: silent; otherwise a tqdm progress bar ("auto" is 1, as Keras's).
    return_dict : bool, default False
        True: a dict ``{"loss": ..., "accuracy": ...}``.

    Returns
    -------
    float, list of float or dict
        As Keras's: the scalar loss when there are no metrics; ``[loss, *metrics]`` in the
        order of ``["loss", *metrics]`` when there are; the dict with ``return_dict=True``.

    Raises
    ------
    ValueError
        x and y of different lengths, empty data, a non-positive ``batch_size``, a
        ``verbose`` not in {"auto", 0, 1, 2}.
    TypeError
        ``return_dict`` not a bool; ``test_step`` not returning a dict.
    """
    where = f"{type(model).__name__}.{name}"
    x, y = _check_xy(x, y, where)
    batch_size = 32 if batch_size is None else check_positive_int(batch_size, "batch_size", where)
    if not (verbose == "auto" or (type(verbose) in (int, bool) and verbose in (0, 1, 2))):
        raise ValueError(f"{where}: verbose must be 'auto', 0, 1 or 2 (as Keras's); got {verbose!r}")
    if type(return_dict) is not bool:
        raise TypeError(f"{where}: return_dict must be True or False; got {return_dict!r}")
    bar = progress_bar()(total=len(x), desc=name, unit="sample", disable=verbose == 0, leave=False)
    logs = _batch_means(model.test_step, "test_step", model, x, y,
                        iterate_minibatches(len(x), batch_size, False, None), bar)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def iterate_minibatches(n, batch_size, shuffle, rng):
    """Yield index arrays covering ``range(n)`` in batches (the last may be smaller).

    Parameters
    ----------
    n, batch_size : int
    shuffle : bool
        A fresh permutation per call from ``rng`` (reproducible for a seeded rng).
    rng : numpy.random.Generator, or None when ``shuffle`` is False
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
    tqdm = progress_bar()
    where = f"{type(model).__name__}.{name}"
    x, y = _check_xy(x, y, where)
    epochs = check_positive_int(epochs, "epochs", where)
    batch_size = check_positive_int(batch_size, "batch_size", where)
    rng = as_rng(seed if seed is not None else 0)
    history = History()
    n = len(x)
    for epoch in range(epochs):
        bar = tqdm(total=n, desc=f"epoch {epoch + 1}/{epochs}", unit="sample",
                   disable=not verbose, leave=False)
        logs = _batch_means(model.train_step, "train_step", model, x, y,
                            iterate_minibatches(n, batch_size, shuffle, rng), bar)
        if validation_data is not None:
            xv, yv = _check_xy(*validation_data, where + " (validation_data)")
            logs.update({f"val_{k}": v for k, v in model.test_step((xv, yv)).items()})
        history._append(epoch, logs)
    return history
