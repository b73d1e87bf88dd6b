"""The Keras-style ``Layer`` and ``Model`` base classes and the ``Sequential`` container."""

from __future__ import annotations

import inspect

import numpy as np

from manualprop._validation import Where, check_array
from manualprop.training import accuracy, compile_args, fit_loop

from ..core.tape import GradientTape
from ..core.tensor import Tensor, Variable

__all__ = ["Layer", "Model", "Residual", "Sequential", "flat_variables"]


def flat_variables(named_layers) -> dict:
    """One flat dict of the ``variables`` of named sublayers, keyed ``"<name>.<key>"``
    as :func:`manualprop.containers.flat_dict` keys the manual ``params``."""
    return {
        f"{name}.{key}": v
        for name, layer in named_layers
        for key, v in getattr(layer, "variables", {}).items()
    }


class Layer:
    """Base class: ``__call__(x, training=False)``, ``variables``, ``trainable_variables``.

    Subclasses implement ``call(x, training)``.
    """

    #: The manualprop class this layer is the tape twin of. Its constructor is the
    #: twin's: the same argument checks and, for the same ``rng``, the same initial
    #: parameters, written once (``manualprop``); the twin only adds ``call``.
    manual_class = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__signature__ = None  # its own constructor: inspect reads it
        elif cls.__dict__.get("manual_class") is not None:
            cls.__signature__ = inspect.signature(cls.manual_class)

    def __init__(self, *args, **kwargs):
        self.variables: dict[str, Variable] = {}
        if self.manual_class is None:
            if args or kwargs:
                raise TypeError(f"{type(self).__name__}() takes no arguments")
            return
        spec = self.manual_class(*args, **kwargs)
        for k, v in vars(spec).items():  # hyperparameters and state (running statistics, rng)
            if k not in ("params", "grads", "cache"):
                setattr(self, k, v)
        self.variables = {k: Variable(v, name=k) for k, v in spec.params.items()}

    def __call__(self, x, training=False):
        return self.call(x, training=training)

    def call(self, x, training=False):  # pragma: no cover - abstract
        """The forward pass on tape operations; subclasses implement it (the tape derives backward)."""
        raise NotImplementedError

    @property
    def trainable_variables(self):
        """list of Variable: the trainable variables, in ``variables`` key order."""
        return [v for v in self.variables.values() if v.trainable]

    @property
    def trainable_weights(self):
        """Keras's name for :attr:`trainable_variables`."""
        return self.trainable_variables

    def _repr_args(self) -> str:
        return self.manual_class._repr_args(self) if self.manual_class is not None else ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _input(self, x, **spec):
        """Check ``x`` (one place: manualprop's validation) and return it as a Tensor."""
        value = x._value if isinstance(x, Tensor) else x
        check_array(value, Where(self, "__call__", "autoprop.layers."), "x", **spec)
        return x if isinstance(x, Tensor) else Tensor(x)


class Model(Layer):
    """A layer you can ``compile`` and ``fit``, as ``keras.Model``.

    ``fit`` calls :meth:`train_step` once per batch; override ``train_step(data)`` in a
    subclass exactly as in Keras and ``fit`` uses it. The default step is the
    TensorFlow loop::

        with ap.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.loss(y, y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))

    The batching, shuffling, progress bar and history are
    :func:`manualprop.training.fit_loop`, shared with the manual ``Sequential.fit``.
    """

    def compile(self, optimizer, loss, metrics=()):
        """Set the optimizer (an object or ``"sgd"``/``"adam"``/``"rmsprop"``), the loss
        (an object called ``loss(y_true, y_pred)``) and metrics (``"accuracy"``).

        Raises
        ------
        TypeError, ValueError
            See :func:`manualprop.training.compile_args`.
        """
        self.optimizer, self.loss, self.metrics = compile_args(
            type(self).__name__, optimizer, loss, metrics, "ap.losses.SoftmaxCrossEntropy()"
        )
        return self

    def _compiled(self, where):
        if getattr(self, "optimizer", None) is None:
            raise RuntimeError(f"{type(self).__name__}.{where}: call compile(optimizer, loss) first")

    def _logs(self, loss, y, y_pred):
        logs = {"loss": float(loss)}
        if "accuracy" in self.metrics:
            values = y_pred.numpy() if isinstance(y_pred, Tensor) else np.asarray(y_pred)
            logs["accuracy"] = accuracy(y, values)
        return logs

    def train_step(self, data):
        """One optimisation step on ``data = (x, y)``; returns a dict of metrics."""
        x, y = data
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.loss(y, y_pred)
        variables = self.trainable_variables
        grads = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        return self._logs(loss, y, y_pred)

    def test_step(self, data):
        """Loss and metrics on ``data = (x, y)`` in inference mode, nothing recorded."""
        x, y = data
        y_pred = self(x, training=False)
        return self._logs(self.loss(y, y_pred), y, y_pred)

    def fit(self, x, y, epochs=1, batch_size=32, validation_data=None, shuffle=True, seed=None,
            verbose=1):
        """Train over minibatches with :meth:`train_step`; return a ``History``.

        Parameters
        ----------
        x : ndarray (N, ...); y : ndarray (N, ...)
        epochs, batch_size : int
        validation_data : (x_val, y_val), optional
        shuffle : bool
        seed : int, optional
            Batch order; the manual ``Sequential.fit`` with the same seed sees the same
            batches.
        verbose : int
            1 shows a tqdm progress bar.
        """
        self._compiled("fit")
        return fit_loop(self, x, y, epochs=epochs, batch_size=batch_size,
                        validation_data=validation_data, shuffle=shuffle, seed=seed,
                        verbose=verbose)

    def evaluate(self, x, y):
        """Loss and metrics on ``(x, y)`` as a dict."""
        self._compiled("evaluate")
        return self.test_step((x, y))

    def predict(self, x):
        """``self(x, training=False)`` as a numpy array."""
        return np.asarray(self(x, training=False))


class Sequential(Model):
    """Layers applied in order (twin of :class:`manualprop.Sequential`).

    ``variables`` keys are ``"<index>.<name>"`` (``"0.W"``, ``"0.b"``, ...), the same
    as the manual container's ``params``.
    """

    def __init__(self, *layers):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)):
            layers = tuple(layers[0])
        for i, layer in enumerate(layers):
            if not callable(layer):
                raise TypeError(
                    f"Sequential: layer {i} must be callable as layer(x, training=...); "
                    f"got {type(layer).__name__}"
                )
        self.layers = list(layers)

    @property
    def variables(self):
        """dict of Variable: every layer's variables, keyed ``"<index>.<name>"`` as the
        manual ``Sequential.params`` (``"0.W"``, ``"0.b"``, ...)."""
        return flat_variables(enumerate(self.layers))

    @variables.setter
    def variables(self, value):
        """Ignored: a container's variables are its layers' (Layer.__init__ assigns {})."""

    def call(self, x, training=False):
        """Run ``x`` through every layer in order; returns the last output (a Tensor)."""
        for layer in self.layers:
            x = layer(x, training=training)
        return x

    def __repr__(self) -> str:
        inner = ",\n".join(f"  ({i}): {layer!r}" for i, layer in enumerate(self.layers))
        return f"Sequential(\n{inner}\n)" if self.layers else "Sequential()"


class Residual(Sequential):
    """Residual block ``y = x + F(x)`` (twin of :class:`manualprop.Residual`): forward only,
    the tape adds the gradients of the two uses of ``x``. Keys as :class:`Sequential`.
    Source: ``lessons/25-residual-block.md``."""

    def call(self, x, training=False):
        """``x + F(x)`` with ``F`` the layers in order; ValueError if ``F`` changes the shape."""
        f = super().call(x, training=training)
        if tuple(f.shape) != tuple(np.shape(x)):
            raise ValueError(
                f"Residual.__call__: the block's layers must keep the shape of x for x + F(x); "
                f"x has shape {tuple(np.shape(x))}, F(x) has shape {tuple(f.shape)}"
            )
        return x + f

    def __repr__(self) -> str:
        return "Residual" + super().__repr__()[len("Sequential"):]
