"""The Keras-style ``Layer`` and ``Model`` base classes and the ``Sequential`` container."""

from __future__ import annotations

import inspect

import numpy as np

from manualprop._validation import KNOWN_FINITE, Where, check_array, float_ss
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


_TRACKABLE = (Variable, list, tuple, dict)  # and Layer (added below, once it exists)


def _tracked(obj):
    """``(path, item)`` for every :class:`Layer` and :class:`Variable` held in ``obj``'s
    attributes (other than its own ``variables``), directly or inside lists, tuples and
    dicts (nested), in attribute assignment order (``Layer.__setattr__`` notes the names
    of the attributes that may hold them; their current values are walked, so a list
    appended to later is seen); each object once. ``path`` is the dotted name, ``"l1"``,
    ``"blocks.0"``, ``"heads.q"``."""
    seen = {id(obj)}

    def walk(path, value):
        if isinstance(value, (Layer, Variable)):
            if id(value) not in seen:
                seen.add(id(value))
                yield path, value
        elif isinstance(value, (list, tuple)):
            for i, x in enumerate(value):
                yield from walk(f"{path}.{i}", x)
        elif isinstance(value, dict):
            for k, x in value.items():
                yield from walk(f"{path}.{k}", x)

    attrs = obj.__dict__
    for name in attrs.get("_tracked_names", ()):
        if name in attrs:
            yield from walk(name, attrs[name])


def _layers_within(layer):
    """Every sub-layer tracked in ``layer``, at any depth, once each (not ``layer``)."""
    found, stack = {id(layer): layer}, [layer]
    while stack:
        for _, item in _tracked(stack.pop()):
            if isinstance(item, Layer) and id(item) not in found:
                found[id(item)] = item
                stack.append(item)
    del found[id(layer)]
    return list(found.values())


def _twin_init(cls):
    """A twin's ``__init__`` (``Layer.__init__``, which passes every argument to the
    manualprop class) with that class's parameters as its signature and docstring, so
    ``help()`` and ``inspect.signature(cls.__init__)`` show them."""
    def __init__(self, *args, **kwargs):
        Layer.__init__(self, *args, **kwargs)

    manual = cls.manual_class
    __init__.__signature__ = inspect.signature(manual.__init__)
    __init__.__doc__ = (  # not manual's own text: its examples are manualprop's doctests
        f"Build the twin of {manual.__module__}.{manual.__qualname__} from the same "
        "arguments: its constructor checks them and, for the same rng, makes the same "
        "initial parameters (as Variables)."
    )
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    __init__._twin_init = True
    return __init__


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
            if getattr(cls.__init__, "_twin_init", cls.__init__ is Layer.__init__):
                cls.__init__ = _twin_init(cls)  # Layer's, showing the manual parameters

    def __init__(self, *args, **kwargs):
        self.variables: dict[str, Variable] = {}
        if self.manual_class is None:
            if args or kwargs:
                raise TypeError(f"{type(self).__name__}() takes no arguments")
            return
        spec = self.manual_class(*args, **kwargs)
        for k, v in vars(spec).items():  # hyperparameters and state (running statistics, rng)
            if k not in ("params", "grads", "cache"):
                # manualprop's objects hold no autoprop Layer or Variable: not tracked
                object.__setattr__(self, k, v)
        self.variables = {k: Variable(v, name=k) for k, v in spec.params.items()}

    def __setattr__(self, name, value):
        if isinstance(value, _TRACKABLE) and name not in ("variables", "_variables"):
            names = self.__dict__.setdefault("_tracked_names", {})
            names[name] = None  # a dict: assignment order, each name once
        object.__setattr__(self, name, value)

    def __call__(self, x, training=False):
        return self.call(x, training=training)

    def call(self, x, training=False):  # pragma: no cover - abstract
        """The forward pass on tape operations; subclasses implement it (the tape derives backward)."""
        raise NotImplementedError

    @property
    def trainable(self):
        """bool: False freezes the layer (Keras's ``layer.trainable = False``).

        Setting it sets ``trainable`` on every Variable of the layer and of its tracked
        sub-layers (recursively), so a frozen layer's Variables leave
        :attr:`trainable_variables` (``fit`` and ``apply_gradients`` do not change
        them) and a tape does not watch them when read, exactly as a
        ``Variable(..., trainable=False)``: ``tape.gradient`` gives None for one unless
        it was watched explicitly. A Variable shared with another layer is frozen there
        too (the flag belongs to the Variable). Setting it back to True unfreezes them all.
        """
        return self.__dict__.get("_trainable", True)

    @trainable.setter
    def trainable(self, value):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(
                f"{type(self).__name__}.trainable must be True or False; got {value!r}"
            )
        self.__dict__["_trainable"] = bool(value)
        for layer in _layers_within(self):
            layer.__dict__["_trainable"] = bool(value)
        for v in self._all_variables():
            v.trainable = bool(value)

    def _all_variables(self):
        """Every Variable of the layer, once each: its own ``variables`` first, then
        those of the sub-layers and Variables assigned as attributes (directly or in
        lists, tuples and dicts), in assignment order, as ``keras.Model`` tracks them."""
        out, seen, visiting = [], set(), {id(self)}

        def add_value(value):  # the hot path of every train_step: no generators
            if isinstance(value, Variable):
                if id(value) not in seen:
                    seen.add(id(value))
                    out.append(value)
            elif isinstance(value, Layer):
                if id(value) not in visiting:  # a cycle is walked once
                    visiting.add(id(value))
                    add_layer(value)
            elif isinstance(value, (list, tuple)):
                for x in value:
                    add_value(x)
            elif isinstance(value, dict):
                for x in value.values():
                    add_value(x)

        def add_layer(layer):
            for v in layer.variables.values():
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
            attrs = layer.__dict__
            for name in attrs.get("_tracked_names", ()):
                if name in attrs:
                    add_value(attrs[name])

        add_layer(self)
        return out

    @property
    def trainable_variables(self):
        """list of Variable: the trainable variables: the layer's own (``variables`` key
        order), then its tracked sub-layers' and Variables' in assignment order; a frozen
        layer's (``trainable = False``) and ``Variable(trainable=False)`` are left out."""
        return [v for v in self._all_variables() if v.trainable]

    @property
    def trainable_weights(self):
        """Keras's name for :attr:`trainable_variables`."""
        return self.trainable_variables

    @property
    def non_trainable_variables(self):
        """list of Variable: the variables left out of :attr:`trainable_variables`."""
        return [v for v in self._all_variables() if not v.trainable]

    @property
    def non_trainable_weights(self):
        """Keras's name for :attr:`non_trainable_variables`."""
        return self.non_trainable_variables

    def _repr_args(self) -> str:
        return self.manual_class._repr_args(self) if self.manual_class is not None else ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _input(self, x, **spec):
        """Check ``x`` (one place: manualprop's validation) and return it as a Tensor.

        Without ``spec``, the common case (a float64/float32 ndarray without NaN/inf) is
        ``float_ss``'s identity tests and one dot, as manualprop's element-wise layers; any
        doubt runs ``check_array``, which writes the message."""
        value = x._value if isinstance(x, Tensor) else x
        if spec or float_ss(value) is None:
            check_array(value, Where(self, "__call__", "autoprop.layers."), "x", **spec)
        return x if isinstance(x, Tensor) else Tensor(x)


_TRACKABLE += (Layer,)

#: The built-in layers (filled by their modules) whose output is finite with every value in
#: [-1, 1] whenever they return: each checked its input for NaN/inf (:meth:`Sequential.call`).
BOUNDED_OUTPUT: set = set()


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

    Subclassing as in Keras: assign the layers (and any Variable) as attributes in
    ``__init__``, directly or in lists, tuples and dicts, and write ``call``; the model
    tracks them in assignment order (:attr:`variables` keys ``"l1.W"``,
    ``"blocks.0.b"``, ...), so ``trainable_variables``, ``fit`` and ``apply_gradients``
    see them. ``layer.trainable = False`` freezes a layer.
    """

    def __init__(self):
        super().__init__()

    @property
    def variables(self):
        """dict of Variable: the model's own variables and, keyed by their dotted paths
        (``"l1.W"``, ``"blocks.0.b"``), those of the sub-layers and Variables assigned
        as attributes (directly or in lists, tuples and dicts), in assignment order, as
        ``keras.Model`` tracks them. Each Variable once (a shared one under its first
        path)."""
        out = dict(self.__dict__.get("_variables", {}))
        seen = {id(v) for v in out.values()}
        for path, item in _tracked(self):
            named = item.variables.items() if isinstance(item, Layer) else (("", item),)
            for key, v in named:
                if id(v) not in seen:
                    seen.add(id(v))
                    out[f"{path}.{key}" if key else path] = v
        return out

    @variables.setter
    def variables(self, value):
        self.__dict__["_variables"] = dict(value)

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

        Raises
        ------
        RuntimeError
            If the model was not compiled.
        ValueError
            If the model has no trainable variables (no layers tracked, or all frozen):
            training would change nothing. Keras only warns; ``evaluate`` and ``predict``
            still work on such a model.
        """
        self._compiled("fit")
        if not self.trainable_variables:
            raise ValueError(self._nothing_to_train())
        return fit_loop(self, x, y, epochs=epochs, batch_size=batch_size,
                        validation_data=validation_data, shuffle=shuffle, seed=seed,
                        verbose=verbose)

    def _nothing_to_train(self) -> str:
        name = type(self).__name__
        frozen = self.non_trainable_variables
        if frozen:
            why = (f"its {len(frozen)} variable(s) are all frozen (a layer's trainable = "
                   "False, or Variable(trainable=False))")
        else:
            why = ("it holds no Variables: keep its layers as attributes (self.l1 = "
                   "Linear(...)), or in lists, tuples or dicts assigned as attributes, "
                   "so the model tracks them")
        return (f"{name}.fit: the model has no trainable variables, so fit would change "
                f"nothing: {why}")

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
        """Run ``x`` through every layer in order; returns the last output (a Tensor).

        Every layer checks its input as when it is called alone, except that a built-in
        layer does not look for NaN/inf in the output of a built-in ``Tanh``, ``Sigmoid`` or
        ``Softmax``: finite, each value in [-1, 1], from the input that layer checked; as
        :meth:`manualprop.Sequential.forward` (``manualprop._validation.KNOWN_FINITE``, an
        identity test for the span of one layer's call). A layer of your own is never trusted.
        """
        known, bounded = KNOWN_FINITE, None
        try:
            for layer in self.layers:
                if bounded is not None and type(layer).__module__.startswith("autoprop.layers."):
                    known.array, known.ss = bounded, float(bounded.size)
                else:
                    known.array = None
                x = layer(x, training=training)
                bounded = x._value if type(layer) in BOUNDED_OUTPUT and type(x) is Tensor else None
        finally:
            known.array = None
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
