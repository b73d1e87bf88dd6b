"""The Keras-style ``Layer`` and ``Model`` base classes and the ``Sequential`` container."""

from __future__ import annotations

import functools
import inspect
import threading

import numpy as np

from manualprop._validation import (
    KNOWN_FINITE,
    Where,
    check_array,
    check_init_keywords,
    check_keywords,
    check_training,
    float_ss,
)
from manualprop._weights import checked_values, set_states, state_values
from manualprop.init import keras_initial_value
from manualprop.training import accuracy, compile_args, evaluate_loop, fit_loop, output_layer

from ..core.tape import GradientTape, on_replay
from ..core.tensor import _STATE, _TRACERS, Tensor, Variable
from ._variables import ListedVariables, OwnVariables

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


def _name_by_path(variables):
    """Name each Variable of ``variables`` (a model's ``variables``: dotted path -> Variable) by its path, as Keras
    names a variable by its layer's (``"d1.W"``, newuser24 L2: ``[v.name for v in model.trainable_variables]`` was
    ``['W', 'b', 'W', 'b']``), when its name is still a part of the path (a layer's key ``"W"``, or the shorter path
    of a sub-model, ``"d1.W"`` under ``"enc.d1.W"``): a name given by hand (``Variable(..., name="scale")``) stays.
    A Variable made without a name (``ap.Variable(x)``: the default name ``"Variable"``, TensorFlow's) is named by
    its path too (newuser45 F2: ``self.W1 = ap.Variable(...)`` in a model kept the name ``'Variable'``).
    Returns ``variables``."""
    for path, v in variables.items():
        name = v.name
        if name != path and (path.endswith("." + name) or name == "Variable"):
            v.name = path
    return variables


def _freeze(value):
    """Freeze what ``value`` holds (a Variable, a Layer, or lists, tuples and dicts of
    them): assigned as an attribute of a frozen layer (in its ``build``, say)."""
    if isinstance(value, Variable):
        value.trainable = False
    elif isinstance(value, Layer):
        if value.trainable:
            value.trainable = False
    elif isinstance(value, (list, tuple)):
        for x in value:
            _freeze(x)
    elif isinstance(value, dict):
        for x in value.values():
            _freeze(x)


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


#: Keras's layer keywords every built-in layer takes besides its own arguments.
_KERAS_OPTIONS = (
    inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None),
    inspect.Parameter("trainable", inspect.Parameter.KEYWORD_ONLY, default=True),
)
_OPTION_NAMES = tuple(p.name for p in _KERAS_OPTIONS)


def _twin_signature(cls, function):
    """The signature of ``function`` (the manualprop class's ``__init__``) followed by
    what a twin takes besides, keyword only: Keras's names of its arguments
    (``cls.keras_aliases``, default None) and Keras's ``name`` and ``trainable``."""
    sig = inspect.signature(function)
    extra = [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=None)
             for k in cls.keras_aliases]
    return sig.replace(parameters=[*sig.parameters.values(), *extra, *_KERAS_OPTIONS])


def _twin_init(cls):
    """A twin's ``__init__`` (``Layer.__init__``, which passes every argument to the
    manualprop class) with that class's parameters as its signature and docstring, so
    ``help()`` and ``inspect.signature(cls.__init__)`` show them (and the keywords a twin
    takes besides: :func:`_twin_signature`)."""
    def __init__(self, *args, **kwargs):
        Layer.__init__(self, *args, **kwargs)

    manual = cls.manual_class
    __init__.__signature__ = _twin_signature(cls, manual.__init__)
    __init__.__doc__ = (  # not manual's own text: its examples are manualprop's doctests
        f"Build the twin of {manual.__module__}.{manual.__qualname__} from the same "
        "arguments: its constructor checks them and, for the same rng, makes the same "
        "initial parameters (as Variables)."
    )
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    __init__._twin_init = True
    return __init__


def _marks_built(build):
    """``build`` wrapped to set ``built = True`` once it returns, as Keras wraps a layer's
    ``build``: called by the first ``__call__`` or explicitly (``layer.build(shape)``)."""
    @functools.wraps(build)
    def wrapper(self, *args, **kwargs):
        result = build(self, *args, **kwargs)
        self.__dict__["built"] = True
        return result
    return wrapper


def _takes_training(call):
    """Whether ``call`` accepts ``training=`` (a parameter of that name, or ``**kwargs``):
    Keras passes it only then."""
    try:
        params = inspect.signature(call).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - a builtin call
        return True
    return any(p.name == "training" or p.kind is p.VAR_KEYWORD for p in params)


def _training_default(call):
    """The default of ``call``'s ``training`` parameter when it is a bool (Keras's value for
    the outermost call that is not given one), else False."""
    try:
        p = inspect.signature(call).parameters.get("training")
    except (TypeError, ValueError):  # pragma: no cover - a builtin call
        return False
    return p.default if p is not None and isinstance(p.default, bool) else False


#: The call context: the stack of ``training`` values of the layer calls under way in
#: this thread (Keras's call context): a layer called inside another layer's ``call``
#: without ``training=`` takes the innermost one.
_CALL_CONTEXT = threading.local()
_LISTING = threading.local()  # .ids: the layers whose Layer.variables is being listed in this thread (a cycle guard)


def _is_structure(x) -> bool:
    """Whether ``x`` is a structure of inputs (a dict; a list or tuple holding an array,
    a Tensor or a structure) rather than one array given as nested lists of numbers."""
    if isinstance(x, dict):
        return True
    return isinstance(x, (list, tuple)) and any(
        isinstance(e, (Tensor, np.ndarray)) or _is_structure(e) for e in x)


def _input_shape(x):
    """What ``build`` receives for the first input ``x``, as Keras (``tree.map_structure``
    of the shapes): an array's or Tensor's shape as a tuple; for a structure of inputs the
    same structure of shapes: a dict of shapes for a dict (same keys), a list for a
    list, a tuple for a tuple, nested alike. A list of numbers is one array (its
    ``np.shape``)."""
    if isinstance(x, (Tensor, np.ndarray)):
        return tuple(x.shape)
    if isinstance(x, dict):
        return {k: _input_shape(v) for k, v in x.items()}
    if _is_structure(x):
        shapes = [_input_shape(e) for e in x]
        return tuple(shapes) if isinstance(x, tuple) else shapes
    return np.shape(x)


#: Keras's base ``Layer`` keywords that autoprop's base takes (a twin's are its manualprop
#: class's).
_BASE_KEYWORDS = ("trainable", "name", "dtype")


#: Keras's and PyTorch's names of a layer's weights, with the key of ``layer.variables`` holding them.
_WEIGHT_NAMES = {"kernel": "W", "weight": "W", "weights": "W", "bias": "b"}


def _missing_attribute(layer, name: str) -> str:
    """The message of :meth:`Layer.__getattr__` for ``name``: Python's, and for a weight's name where the weights are."""
    cls = type(layer).__name__
    plain = f"{cls!r} object has no attribute {name!r}"
    own = layer.__dict__.get("_variables")  # a layer's own dict; the property is walked for a weight's name alone
    if name.startswith("_") or name == "variables" or name not in _WEIGHT_NAMES and name not in (own or ()):
        return plain
    try:
        held = dict(layer.variables)
    except Exception:  # noqa: BLE001 - a layer not built yet (no variables): Python's own words
        return plain
    key = name if name in held else _WEIGHT_NAMES.get(name)
    if key not in held:
        return plain
    shape = tuple(held[key].shape)
    where = f"{plain}: autoprop's {cls} holds its weights in layer.variables, by name: {key!r} of shape {shape}"
    if name == "kernel" and len(shape) == 2 and "in_features" in layer.__dict__:  # a Linear's W (out, in)
        where += (f" (out_features, in_features), the transpose of Keras's kernel (in, out) = {shape[::-1]}: "
                  f"layer.variables[{key!r}].T where Keras code reads layer.kernel")
    elif name != key:
        where += f" ({name} is {key} here)"
    return f"{where}; read layer.variables[{key!r}] (all of them: {', '.join(held)})."


class Layer:
    """Base class: ``__call__(x, training=None)``, ``variables``, ``trainable_variables``.

    ``training`` not given is inherited from the layer call around this one (Keras's call
    context), else False; see :meth:`__call__`.

    Subclasses implement ``call(x, training)`` (``training`` may be left out of the
    signature, as in Keras: it is then not passed). A subclass may also define
    ``build(self, input_shape)`` and create its weights there with :meth:`add_weight`:
    the first call runs ``build`` once, with the input's shape, before ``call``, as
    Keras does; :attr:`built` says whether it ran (a layer without its own ``build`` is
    built from the start).

    Parameters
    ----------
    trainable : bool, default True
        Keras's keyword, taken by every built-in layer too (``Linear(3, 2,
        trainable=False)``): False freezes the layer (:attr:`trainable`): its Variables
        leave :attr:`trainable_variables`, so ``fit`` and ``apply_gradients`` do not
        change them, including the weights its ``build`` makes later
        (:meth:`add_weight`, or Variables and sub-layers assigned as attributes). A
        frozen batch norm also runs in inference mode, as Keras's.
    name : str, optional
        The layer's name (``layer.name``, and in its ``repr``, so in the messages of its
        errors; default: the class name); every built-in layer takes it too.
    dtype : numpy dtype, optional
        The default dtype of :meth:`add_weight` (default float64); a twin takes its
        manualprop class's ``dtype`` where it has one.

    A twin also takes Keras's names of its arguments where they mean the same
    (:attr:`keras_aliases`: ``Dropout(rate=0.5)`` is ``Dropout(p=0.5)``).

    Raises
    ------
    TypeError
        For any other keyword, naming it and its close match (``trainabel`` ->
        ``trainable``), as Keras refuses unknown layer keywords; a twin refuses the
        keywords its manualprop constructor does not take the same way
        (:func:`manualprop._validation.check_init_keywords`, shared with the optimizers).
    """

    #: The manualprop class this layer is the tape twin of. Its constructor is the
    #: twin's: the same argument checks and, for the same ``rng``, the same initial
    #: parameters, written once (``manualprop``); the twin only adds ``call``.
    manual_class = None

    #: What check_training adds when ``training`` is not a bool (a recurrent layer's keyword-only state).
    _training_hint = ""

    #: Whether ``call`` takes ``training=`` (set per class by ``__init_subclass__``).
    _call_takes_training = True

    #: ``training`` when neither the caller nor an outer call gives one (per class).
    _call_training_default = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            cls.build = _marks_built(cls.__dict__["build"])
        if "call" in cls.__dict__:
            cls._call_takes_training = _takes_training(cls.__dict__["call"])
            cls._call_training_default = _training_default(cls.__dict__["call"])
        # the class's signature lists the layer's own arguments (a twin's: its manualprop
        # class's), which tools read to build a twin from a layer's attributes
        # (gradcheck.sources.constructor_kwargs); __init__'s shows the Keras options too
        if "__init__" in cls.__dict__:
            cls.__signature__ = None  # its own constructor: inspect reads it
            if cls.__dict__.get("manual_class") is not None:  # a built-in with its own __init__
                sig = inspect.signature(cls.__init__)
                cls.__signature__ = sig.replace(parameters=[
                    p for p in list(sig.parameters.values())[1:] if p.name not in _OPTION_NAMES])
        elif cls.__dict__.get("manual_class") is not None:
            cls.__signature__ = inspect.signature(cls.manual_class)
            if getattr(cls.__init__, "_twin_init", cls.__init__ is Layer.__init__):
                cls.__init__ = _twin_init(cls)  # Layer's, showing the manual parameters

    #: Keras's names of a twin's arguments that mean the same (``{"rate": "p"}`` for
    #: Dropout): accepted as keywords, passed on under the manualprop name.
    keras_aliases: dict = {}

    def __new__(cls, *args, **kwargs):
        # every layer's keywords, checked in one place with their close match (a twin's:
        # its manualprop arguments, their Keras names, name and trainable)
        check_init_keywords(cls, kwargs)
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        self.variables: dict[str, Variable] = {}
        # built at once unless the class writes its own build (Keras's _build_at_init)
        self.__dict__["built"] = type(self).build is Layer.build
        name = type(self).__name__
        if self.manual_class is None:
            if args:
                raise TypeError(f"{name}() takes no positional arguments; got {len(args)}")
            check_keywords(kwargs, _BASE_KEYWORDS, f"{name}()")
            if kwargs.get("dtype") is not None:
                self.dtype = np.dtype(kwargs["dtype"])
            self._keras_options(kwargs.get("name"), kwargs.get("trainable", True))
            return
        layer_name, trainable = kwargs.pop("name", None), kwargs.pop("trainable", True)
        spec = self.manual_class(*args, **self._our_names(args, kwargs))
        for k, v in vars(spec).items():  # hyperparameters and state (running statistics, rng)
            if k not in ("params", "grads", "cache"):
                # manualprop's objects hold no autoprop Layer or Variable: not tracked
                object.__setattr__(self, k, v)
        self.variables = {k: Variable(v, name=k) for k, v in spec.params.items()}
        self._keras_options(layer_name, trainable)

    def _our_names(self, args, kwargs):
        """``kwargs`` with Keras's names of the twin's arguments (:attr:`keras_aliases`)
        replaced by the manualprop names; TypeError when both name one argument."""
        if not self.keras_aliases:
            return kwargs
        params = list(inspect.signature(self.manual_class).parameters)
        for keras_name, ours in self.keras_aliases.items():
            if keras_name in kwargs:
                if ours in kwargs or ours in params[:len(args)]:
                    raise TypeError(
                        f"{type(self).__name__}() got {ours!r} twice: {keras_name}= is "
                        f"Keras's name for {ours}; give one of them")
                kwargs[ours] = kwargs.pop(keras_name)
        return kwargs

    def _keras_options(self, name, trainable):
        """Apply Keras's ``name`` (``layer.name``, shown in the layer's ``repr`` and so in
        its error messages; default the class name) and ``trainable`` (False freezes the
        layer and its Variables, :attr:`trainable`), once the Variables exist."""
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}(): name must be a str; got {name!r}")
        self.name = name or type(self).__name__
        if trainable is not True:
            self.trainable = trainable  # the setter refuses what is not a bool

    def __setattr__(self, name, value):
        if type(value) is Variable and not value.trainable and self.trainable:
            self._fix(value)  # declared non-trainable: unfreezing the layer leaves it
        if isinstance(value, _TRACKABLE) and name not in ("variables", "_variables"):
            names = self.__dict__.setdefault("_tracked_names", {})
            names[name] = None  # a dict: assignment order, each name once
            if not self.trainable:  # a frozen layer's new weights (build) are frozen, as Keras
                _freeze(value)
        object.__setattr__(self, name, value)
        _STATE[0] += 1  # (autoprop.function's guard: a trace read the layers' Python state as it was)

    def __getattr__(self, name):
        """Called only for an attribute not found: AttributeError, naming ``layer.variables`` when ``name`` is one
        of its keys (``W``) or a weight's name in Keras or PyTorch (``kernel``, ``weight``, ``bias``): no alias,
        the weights are read by name (newuser38 F7: TF's Hessian example reads ``layer1.kernel``)."""
        raise AttributeError(_missing_attribute(self, name))

    def __call__(self, x, *args, training=None, **kwargs):
        """Build on the first call (``build(input_shape)`` of ``x``, when the layer has
        its own ``build``), then return ``call(x, *args, training=training, **kwargs)``;
        ``training`` is passed only if ``call`` takes it, as Keras.

        ``training`` is resolved as Keras's call context: the value given (not None)
        wins; else that of the layer call under way around this one (a sub-layer
        called in ``call`` without ``training=`` inherits it: a Dropout inside a block
        drops in ``fit``); else the default of ``call``'s ``training`` parameter, else
        False (inference). Sub-layers called in ``call`` see the value resolved here.
        """
        try:
            stack = _CALL_CONTEXT.training
        except AttributeError:  # this thread's first layer call
            stack = _CALL_CONTEXT.training = []
        if training is None:
            training = stack[-1] if stack else self._call_training_default
        elif training is not True and training is not False:  # (a bool passes: no message built, issue 15)
            # an array or a tuple here is PyTorch's positional state or mask (gru(x, h0)): refused, not read as True
            check_training(training, f"{self!r}.__call__", self._training_hint)
        if _TRACERS:  # autoprop.function: its lists and dicts of layers compared at each call (_layout)
            _TRACERS[-1].layer_called(self, _layout, _layout_same)
        if not self.__dict__.get("built", True):
            self.build(_input_shape(x))
        if self._call_takes_training:
            kwargs["training"] = training
        stack.append(bool(training))
        try:
            return self.call(x, *args, **kwargs)
        finally:
            stack.pop()

    def build(self, input_shape):
        """Create the weights that depend on the input's shape; the base creates none.

        Override it as in Keras: ``__call__`` runs it once, before the first ``call``,
        with the shape of the first input (a tuple, batch axis included; for a dict,
        list or tuple of inputs, the same structure of shapes: a dict of shapes, ...),
        and sets :attr:`built`. Create the weights with
        :meth:`add_weight`. Calling it yourself (``layer.build((None, 4))``) also builds.
        """
        self.__dict__["built"] = True

    @property
    def built(self):
        """bool: whether the weights exist: ``build`` ran (or the layer has no ``build``
        of its own, so it was built by its constructor)."""
        return self.__dict__.get("built", True)

    @built.setter
    def built(self, value):
        """Set the flag (``bool(value)``); ``build`` sets it to True itself."""
        self.__dict__["built"] = bool(value)

    def _own_variables(self):
        """The dict of the layer's own Variables, where :meth:`add_weight` puts one."""
        if "_variables" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}: call super().__init__() first in __init__: the "
                "layer has no variables yet to add a weight to")
        return self.__dict__["_variables"]

    @property
    def variables(self):
        """dict of Variable: the layer's own variables (those :meth:`add_weight` made, a built-in layer's
        ``"W"``, ``"b"``) and, keyed by their dotted paths (``"fc1.W"``, ``"blocks.0.b"``), those of the
        sub-layers (at any depth) and Variables assigned as attributes (directly or in lists, tuples and dicts),
        in assignment order, as ``tf.Module`` and ``keras.Layer`` track them (newuser45 F1: a ``Layer``
        subclass listed only its own). Each Variable once (a shared one under its first path), and named by
        its path (``v.name == "fc1.W"``: unique, as Keras's names; :func:`_name_by_path`). A layer holding
        no sub-layer nor Variable as attribute gives its own dict itself (a ``call`` reads
        ``self.variables["W"]`` at no cost); otherwise a new dict (:class:`ListedVariables`), in which an item
        assignment of one of the layer's own weights (or of a new key) is set in the layer's own dict, and one of
        a sub-layer's or attribute's path raises TypeError naming where to set it (never lost: verify45d F1)."""
        d = self.__dict__
        own = d.get("_variables")
        if "_tracked_names" not in d:  # (the hot path: a built-in layer's call reads its own)
            return own if own is not None else ListedVariables.of({}, self, None)
        if own is None:
            own = {}
        try:
            listing = _LISTING.ids
        except AttributeError:  # this thread's first listing
            listing = _LISTING.ids = set()
        if id(self) in listing:  # a cycle (a layer holding its parent): walked once
            return own
        listing.add(id(self))
        try:
            out, seen = dict(own), {id(v) for v in own.values()}
            for path, item in _tracked(self):
                named = item.variables.items() if isinstance(item, Layer) else (("", item),)
                for key, v in named:
                    if id(v) not in seen:
                        seen.add(id(v))
                        out[f"{path}.{key}" if key else path] = v
        finally:
            listing.discard(id(self))
        if len(out) == len(own) and own is d.get("_variables"):
            return _name_by_path(own)
        return _name_by_path(ListedVariables.of(out, self, d.get("_variables"), d["_tracked_names"]))

    @variables.setter
    def variables(self, value):
        """Replace the layer's own Variables (those :meth:`add_weight` made) by the dict ``value``
        (name -> Variable), copied; the sub-layers' and the attributes' Variables are still tracked. A key of a
        sub-layer's or attribute's path raises TypeError, as the item assignment (:class:`ListedVariables`; it was
        set as a stray weight of this layer's own, read by nothing: verify46b F7); ``layer.variables |= {...}`` sets
        its keys by item assignment, and Python's rebinding of the listing then changes nothing."""
        if isinstance(value, ListedVariables) and value._owner is self:
            return  # (``|=``: the items are set in the own dict already; the listing holds the sub-layers' too)
        if "_tracked_names" in self.__dict__ and value:
            listing, own = self.variables, self.__dict__.get("_variables") or {}
            for key in value:
                if (key in listing and key not in own) or (
                        "." in key and key.split(".", 1)[0] in listing._held):
                    raise listing._refusal(key, "assigned")
        self.__dict__["_variables"] = OwnVariables(value)

    def add_weight(self, shape=None, initializer=None, dtype=None, trainable=True, name=None,
                   *, rng=None):
        """Create a weight (a :class:`~autoprop.Variable`), track it and return it, as
        Keras's ``add_weight``.

        Parameters
        ----------
        shape : tuple of int, optional
            Default ``()``, a scalar.
        initializer : str or callable, optional
            A Keras name (``"glorot_uniform"``, ``"zeros"``, ``"ones"``, ``"he_normal"``,
            ``"random_normal"``, ...) or a callable ``initializer(shape, dtype=...)``;
            default ``"glorot_uniform"`` for a float dtype, ``"zeros"`` otherwise
            (Keras's defaults). Drawn as :func:`manualprop.init.keras_initial_value`.
        dtype : numpy dtype, optional
            Default: the layer's ``dtype`` (float64 when it has none).
        trainable : bool, default True
            False puts the weight in :attr:`non_trainable_variables` (updated by hand,
            not by ``fit``); a frozen layer's weights are made non-trainable.
        name : str, optional
            Its key in :attr:`variables` and the Variable's name; default
            ``"variable"``, ``"variable_1"``, ... .
        rng : None, int or numpy.random.Generator, keyword only
            The draws of a random initializer (Keras's initializers take a ``seed``).

        Returns
        -------
        Variable

        Raises
        ------
        ValueError
            A name the layer already uses, a shape with a negative or None entry, an
            unknown initializer name (with the close match), or a name passed
            positionally (``add_weight("w", ...)``, Keras 2's order, as Keras 3 refuses).
        """
        where = f"{type(self).__name__}.add_weight"
        if isinstance(shape, str):
            raise ValueError(f"{where}: name must be passed as a keyword argument; got "
                             f"add_weight({shape!r}, ...). Use add_weight(shape=..., name={shape!r})")
        own = self._own_variables()
        shape = () if shape is None else (tuple(shape) if np.iterable(shape) else (shape,))
        if not all(isinstance(d, (int, np.integer)) and d >= 0 for d in shape):
            raise ValueError(f"{where}: shape must be fully defined, non-negative ints; got {shape}")
        shape = tuple(int(d) for d in shape)
        dt = np.dtype(dtype if dtype is not None else getattr(self, "dtype", np.float64))
        if initializer is None:
            initializer = "glorot_uniform" if dt.kind == "f" else "zeros"
        key = name
        if key is None:
            key, i = "variable", 0
            while key in own:
                i += 1
                key = f"variable_{i}"
        elif key in own:
            raise ValueError(f"{where}: the layer already has a weight named {key!r}; give each "
                             "weight its own name")
        value = keras_initial_value(initializer, shape, dt, rng, where)
        v = Variable(value, trainable=bool(trainable) and self.trainable, name=key, dtype=dt)
        own[key] = v
        if not trainable:
            self._fix(v)
        return v

    def _fix(self, v):
        """Note Variable ``v`` as declared non-trainable (see :attr:`trainable`)."""
        fixed = self.__dict__.setdefault("_fixed_variables", [])
        if not any(v is f for f in fixed):
            fixed.append(v)

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
        too (the flag belongs to the Variable). Setting it back to True unfreezes them all,
        except the weights declared non-trainable, which stay so (as Keras's setter
        touches only the trainable weights): ``add_weight(trainable=False)``, and a
        ``Variable(trainable=False)`` assigned as an attribute of a layer not frozen.
        """
        return self.__dict__.get("_trainable", True)

    @trainable.setter
    def trainable(self, value):
        """Freeze (False) or unfreeze (True) the layer, its sub-layers and their Variables.

        The weights declared non-trainable (``add_weight(trainable=False)``) stay so.

        Raises
        ------
        TypeError
            For a value that is not a bool (``True``/``False``, or numpy's bool).
        """
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(
                f"{type(self).__name__}.trainable must be True or False; got {value!r}"
            )
        self.__dict__["_trainable"] = bool(value)
        layers = _layers_within(self)
        fixed = set()  # ids of the weights declared non-trainable: they stay so
        for layer in (self, *layers):
            layer.__dict__["_trainable"] = bool(value)
            fixed.update(id(v) for v in layer.__dict__.get("_fixed_variables", ()))
        for v in self._all_variables():
            if id(v) not in fixed:
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

        def add_layer(layer):  # its own Variables (a class's own variables property: all it lists), then attributes
            own = (layer.__dict__.get("_variables") or {}) if type(layer).variables is _LAYER_VARIABLES \
                else layer.variables
            for v in own.values():
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
            attrs = layer.__dict__
            for name in attrs.get("_tracked_names", ()):
                if name in attrs:
                    add_value(attrs[name])

        add_layer(self)
        named = self.__dict__.setdefault("_path_named", set())
        for v in out:  # named by their paths in variables the first time the layer lists them (at no cost after)
            if id(v) not in named:
                _name_by_path(self.variables)
                named.update(id(v) for v in out)
                break
        return out

    @property
    def trainable_variables(self):
        """list of Variable: the trainable variables: the layer's own (``variables`` key
        order), then its tracked sub-layers' and Variables' in assignment order; a frozen
        layer's (``trainable = False``) and ``Variable(trainable=False)`` are left out.
        A frozen layer has none, whatever its sub-layers say (Keras 3's rule: after
        ``model.trainable = False; model.fc.trainable = True``, ``model.trainable_variables``
        is empty and ``model.fc.trainable_variables`` holds fc's weights)."""
        if not self.trainable:
            return []
        return [v for v in self._all_variables() if v.trainable]

    @property
    def trainable_weights(self):
        """Keras's name for :attr:`trainable_variables`."""
        return self.trainable_variables

    @property
    def non_trainable_variables(self):
        """list of Variable: the variables left out of :attr:`trainable_variables` (a
        frozen layer's: all of them, as Keras)."""
        if not self.trainable:
            return self._all_variables()
        return [v for v in self._all_variables() if not v.trainable]

    @property
    def non_trainable_weights(self):
        """Keras's name for :attr:`non_trainable_variables`."""
        return self.non_trainable_variables

    @property
    def weights(self):
        """list of Variable: every variable of the layer, trainable or not, each once, in the order of
        :meth:`_all_variables` (its own, then its sub-layers' and Variables' in assignment order): Keras's
        ``layer.weights``, the list beside :attr:`variables` (a dict here, as manualprop's ``params``)."""
        return self._all_variables()

    #: Names of array attributes that are state, not weights (PyTorch's buffers: :class:`BatchNorm1D`'s
    #: ``running_mean``/``running_var``), which :meth:`get_weights` lists after the weights.
    _state_names = ()

    def _states(self):
        """``(layer, name)`` of every state array (:attr:`_state_names`) of the layer and its sub-layers,
        depth first in the order they are held (a nested container's before the layers after it), as the
        weights are listed: Keras's ``non_trainable_weights`` and PyTorch's ``state_dict`` order (verify42b F15:
        ``Sequential([BN_a, Sequential([BN_b]), BN_c])`` listed BN_c's statistics before BN_b's); manualprop's
        ``Sequential`` lists them alike."""
        found, out = {id(self)}, []

        def walk(layer):
            out.extend((layer, n) for n in layer._state_names)
            for _, item in _tracked(layer):
                if isinstance(item, Layer) and id(item) not in found:
                    found.add(id(item))
                    walk(item)

        walk(self)
        return out

    def get_weights(self):
        """Keras's ``get_weights``: the values of :attr:`weights`, in its order, then those of the
        state arrays (a :class:`BatchNorm1D`'s or :class:`BatchNorm2D`'s ``running_mean`` and
        ``running_var``: PyTorch's buffers, not Variables), so that ``b.set_weights(a.get_weights())``
        copies ``a``'s inference output as well (verify41 H1; Keras's ``BatchNormalization`` keeps its
        statistics as weights, listed among them). The state arrays are those each layer names in its class
        attribute :attr:`_state_names`, layer by layer, depth first; a layer of your own keeping running
        statistics as arrays names them there (or keeps them as non-trainable Variables, ``add_weight(...,
        trainable=False)``) to have them copied.

        Returns
        -------
        list of ndarray
            Copies (a later update of the layer does not change them).
        """
        return [v.numpy() for v in self.weights] + state_values(self._states())

    def set_weights(self, weights):
        """Keras's ``set_weights``: assign each of :attr:`weights` its value from ``weights``.

        ``b.set_weights(a.get_weights())`` copies ``a`` into ``b``: a ``BatchNormalization``'s
        moving statistics too (they are weights, as Keras's), and a ``BatchNorm1D``'s or
        ``BatchNorm2D``'s running statistics (state, PyTorch's buffers), which :meth:`get_weights`
        lists after the weights. Given the weights alone (as many values as :attr:`weights`), that
        state is left as it was, and a ``UserWarning`` names it.

        Parameters
        ----------
        weights : sequence of array_like
            One value per weight, in the order of :attr:`weights`, each of its shape, then,
            optionally, one per state array, in :meth:`get_weights`'s order.

        Raises
        ------
        ValueError
            A number of values other than the number of weights, with or without the state
            arrays (nothing assigned: a layer not built yet has fewer weights, as Keras's), or a
            value of another shape (nothing assigned).
        TypeError
            A value the weight's dtype cannot hold (``Variable.assign``).
        """
        own, states = self.weights, self._states()
        name = getattr(self, "name", type(self).__name__)
        weights = checked_values(name, weights, [(f"weight {v.name!r}", v.shape) for v in own], states,
                                 self._unbuilt_hint)
        for v, w in zip(own, weights):
            v.assign(w)
        set_states(name, weights, len(own), states)

    def _unbuilt_hint(self):
        """set_weights' words on the layers not built yet (their weights are made by their first call)."""
        unbuilt = [type(layer).__name__ for layer in (self, *_layers_within(self))
                   if not layer.__dict__.get("built", True)]
        return (f"; not built yet: {', '.join(unbuilt)} (its weights are made by its first call: call the model "
                "once, e.g. on a batch of the data)" if unbuilt else "")

    def _repr_args(self) -> str:
        return self.manual_class._repr_args(self) if self.manual_class is not None else ""

    def __repr__(self) -> str:
        args, name = self._repr_args(), self.__dict__.get("name")
        if name is not None and name != type(self).__name__:  # Keras's name=, when given
            args = f"{args}, name={name!r}" if args else f"name={name!r}"
        if self.__dict__.get("_trainable", True) is False:  # a frozen layer says so (newuser22)
            args = f"{args}, trainable=False" if args else "trainable=False"
        return f"{type(self).__name__}({args})"

    def _input(self, x, **spec):
        """Check ``x`` (one place: manualprop's validation) and return it as a Tensor.

        Without ``spec``, the common case (a float64/float32 ndarray without NaN/inf) is
        ``float_ss``'s identity tests and one dot, as manualprop's element-wise layers; any
        doubt runs ``check_array``, which writes the message."""
        value = x._value if isinstance(x, Tensor) else x
        if spec or float_ss(value) is None:
            check_array(value, Where(self, "__call__", "autoprop.layers."), "x", **spec)
        if _TRACERS:
            check_at_replay(Where(self, "__call__", "autoprop.layers."), x, "x", **spec)
        return x if isinstance(x, Tensor) else Tensor(x)


_TRACKABLE += (Layer,)
_LAYER_VARIABLES = Layer.variables  # (Layer._all_variables: a class overriding it lists its variables itself)


def check_at_replay(where, x, name, **spec):
    """While :func:`autoprop.function` traces: ``x``'s check for NaN/inf (``float_ss``, then
    ``check_array``'s message) again at each replay, on that call's values, as an eager call checks
    them (note38: a NaN input replayed to a NaN loss, and BatchNorm's running statistics took it,
    where the eager step raised). Only a float tensor the trace saw checked: the output of a
    built-in Tanh, Sigmoid or Softmax inside a Sequential is not looked at (``KNOWN_FINITE``), as
    eagerly."""
    value = x._value if isinstance(x, Tensor) else None
    if (type(value) is not np.ndarray or value.dtype.kind != "f" or value is KNOWN_FINITE.array
            or not _TRACERS[-1].active):
        return
    def check(v):
        if float_ss(v) is None:
            check_array(v, where, name, **spec)
    on_replay(check, x)

#: The built-in layers (filled by their modules) whose output is finite with every value in
#: [-1, 1] whenever they return: each checked its input for NaN/inf (:meth:`Sequential.call`).
BOUNDED_OUTPUT: set = set()

#: The built-in layers (filled by their modules) whose ``call`` runs no other layer and reads
#: nothing of :meth:`Layer.__call__`'s context (that context is for the sub-layers a ``call``
#: runs): :meth:`Sequential.call` calls their ``call`` directly, one frame fewer a layer.
LEAF_LAYERS: set = set()


def _last_layer(model):
    """A Sequential's output layer and its position (:func:`manualprop.training.output_layer`: inside a nested
    Sequential, before a Flatten); ``(None, "")`` for another model (its order of calls is its ``call``'s)."""
    layers = model.__dict__.get("layers")
    return output_layer(layers) if isinstance(layers, list) else (None, "")


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

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def _own_variables(self):
        return self.__dict__.setdefault("_variables", OwnVariables())

    def compile(self, optimizer, loss, metrics=()):
        """Set the optimizer (an object or ``"sgd"``/``"adam"``/``"rmsprop"``), the loss
        (an object called ``loss(y_true, y_pred)``) and metrics (``"accuracy"``).

        Raises
        ------
        TypeError, ValueError
            See :func:`manualprop.training.compile_args`.
        """
        last, at = _last_layer(self)
        self.optimizer, self.loss, self.metrics = compile_args(
            type(self).__name__, optimizer, loss, metrics, "ap.losses.SoftmaxCrossEntropy()", last,
            "" if last is not None and last is self.layers[-1] else at)
        return self

    def _compiled(self, where):
        if getattr(self, "optimizer", None) is None:
            raise RuntimeError(f"{type(self).__name__}.{where}: call compile(optimizer, loss) first")

    def _logs(self, loss, y, y_pred):
        logs = {"loss": float(loss)}
        if "accuracy" in self.metrics:
            values = y_pred.numpy() if isinstance(y_pred, Tensor) else np.asarray(y_pred)
            logs["accuracy"] = accuracy(y, values, self.loss, _last_layer(self)[0])
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
            training would change nothing. Layers not built yet (their own ``build``)
            are built first, on the first ``batch_size`` samples. Keras only warns; ``evaluate`` and ``predict``
            still work on such a model.
        """
        self._compiled("fit")
        if not self.trainable_variables and not all(
                layer.built for layer in (self, *_layers_within(self))):
            # weights made by build: build them on the first batch (inference mode, so
            # nothing is drawn or updated) before judging that there is nothing to train
            self(np.asarray(x)[:batch_size], training=False)
        if not self.trainable_variables:
            raise ValueError(self._nothing_to_train())
        return fit_loop(self, x, y, epochs=epochs, batch_size=batch_size,
                        validation_data=validation_data, shuffle=shuffle, seed=seed,
                        verbose=verbose)

    def _nothing_to_train(self) -> str:
        name = type(self).__name__
        frozen = self.non_trainable_variables
        if not self.trainable and any(v.trainable for v in frozen):
            why = (f"{name}.trainable is False, and a frozen layer has no trainable variables "
                   "whatever its sub-layers' trainable says (as Keras); set "
                   f"{name}.trainable = True, then trainable = False on the layers to freeze")
        elif frozen:
            why = (f"its {len(frozen)} variable(s) are all frozen (a layer's trainable = "
                   "False, or Variable(trainable=False))")
        else:
            why = ("it holds no Variables: keep its layers as attributes (self.l1 = "
                   "Linear(...)), or in lists, tuples or dicts assigned as attributes, "
                   "so the model tracks them")
        return (f"{name}.fit: the model has no trainable variables, so fit would change "
                f"nothing: {why}")

    def evaluate(self, x, y, batch_size=None, verbose="auto", return_dict=False):
        """Loss and metrics on ``(x, y)`` in inference mode, as Keras's ``model.evaluate``.

        By batches of ``batch_size`` (default 32) through :meth:`test_step`, averaged weighted
        by batch size (:func:`manualprop.training.evaluate_loop`).

        Returns
        -------
        float, list of float or dict
            The loss alone when no metric was compiled; ``[loss, accuracy]`` with
            ``metrics=["accuracy"]`` (``loss, acc = model.evaluate(x, y)``); a dict
            ``{"loss": ..., "accuracy": ...}`` with ``return_dict=True``.

        Raises
        ------
        RuntimeError
            If the model was not compiled.
        ValueError, TypeError
            As :func:`manualprop.training.evaluate_loop`.
        """
        self._compiled("evaluate")
        return evaluate_loop(self, x, y, batch_size=batch_size, verbose=verbose,
                             return_dict=return_dict)

    def predict(self, x):
        """``self(x, training=False)`` as a numpy array."""
        return np.asarray(self(x, training=False))


def _items(v):
    """The items of the list, tuple or dict ``v`` as a tuple (a dict's as ``(key, item)`` pairs; a nested list's,
    tuple's or dict's as its own such tuple), held by reference; None when ``v`` is not empty and holds no
    :class:`Layer`, Variable or other callable (a Sequential's function) at any depth (a list of numbers: a Python
    value of a trace, as a float attribute is)."""
    out, held = [], not v
    for k, e in (v.items() if type(v) is dict else enumerate(v)):
        if type(e) in (list, tuple, dict):
            e = _items(e)
            held = held or e is not None
        else:
            held = held or isinstance(e, (Layer, Variable)) or callable(e)
        out.append((k, e) if type(v) is dict else e)
    return tuple(out) if held else None


def _layout(layer):
    """The items of ``layer``'s list, tuple and dict attributes that hold layers, Variables or functions or are empty (filled
    later: ``self.blocks = []`` then ``append``), nested ones' too, held by reference (:func:`_items`), as ``(name,
    items)`` pairs: :func:`autoprop.function` takes it of each layer called while it traces and compares it at each
    call, so that a change in place (``model.layers.pop()``, ``self.heads["c"] = ...``, ``self.stages[0].pop()``, a
    Variable replaced in a list) traces again, as an attribute set does (``_STATE``), without the lists being copied
    (a list kept under another name stays the layer's: review39; fnbreak38, verify38 F0)."""
    d = layer.__dict__
    return tuple((n, s) for n in d.get("_tracked_names", ()) if type(d.get(n)) in (list, tuple, dict)
                 and (s := _items(d[n])) is not None)


def _layout_same(layer, then) -> bool:
    """Whether :func:`_layout` of ``layer`` holds now the objects of ``then`` (its value when traced), as
    ``autoprop.tracing._same(_layout(layer), then)`` says, without building the new layout: the lists, tuples and
    dicts are walked against ``then`` item by item by identity (issue 15: ``autoprop.function``'s check at each
    call, about 4 us of a B16 MLP step when the layout was built and then compared). Any doubt (a name or a key
    not the same object, a nested item not a tuple in ``then``) takes the comparison of the built layout."""
    d = layer.__dict__
    i, m = 0, len(then)
    for n in d.get("_tracked_names", ()):
        v = d.get(n)
        if type(v) not in (list, tuple, dict):
            continue
        if i < m and then[i][0] is n:
            if not _items_same(v, then[i][1]):
                return False
            i += 1
        elif _items(v) is not None:  # (a name _layout leaves out: one whose items hold no layer)
            return _layout_compared(layer, then)
    return i == m


def _items_same(v, then) -> bool:
    """``_same(_items(v), then)`` for the list, tuple or dict ``v``, walked without building ``_items(v)``."""
    if type(then) is not tuple or len(then) != len(v):
        return _same_items_built(v, then)
    pairs = zip(v, then)
    if type(v) is dict:  # then holds (key, items) pairs: the same key objects, then the items
        pairs = []
        for (k, e), pair in zip(v.items(), then):
            if type(pair) is not tuple or len(pair) != 2 or pair[0] is not k:
                return _same_items_built(v, then)
            pairs.append((e, pair[1]))
    held = not v
    for e, t in pairs:
        if type(e) in (list, tuple, dict):
            if not _items_same(e, t):
                return False
            held = held or t is not None
        elif e is not t:
            return False
        else:
            held = held or isinstance(e, (Layer, Variable)) or callable(e)
    return held


def _same_items_built(v, then) -> bool:
    from autoprop.tracing import _same  # (the tracer's comparison, imported for a doubt only)

    return _same(_items(v), then)


def _layout_compared(layer, then) -> bool:
    from autoprop.tracing import _same

    return _same(_layout(layer), then)


class Sequential(Model):
    """Layers applied in order (twin of :class:`manualprop.Sequential`).

    ``variables`` keys are ``"<index>.<name>"`` (``"0.W"``, ``"0.b"``, ...), the same
    as the manual container's ``params``.

    Parameters
    ----------
    *layers : callables, or one list or tuple of them
    name : str, optional
        Keras's: ``model.name`` (default ``"Sequential"``).
    trainable : bool, default True
        Keras's: False freezes every layer given (:attr:`Layer.trainable`).
    """

    def __init__(self, *layers, name=None, trainable=True):
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
        self._keras_options(name, trainable)

    @property
    def variables(self):
        """dict of Variable: every layer's variables, keyed ``"<index>.<name>"`` as the
        manual ``Sequential.params`` (``"0.W"``, ``"0.b"``, ...), after the weights a
        subclass made with :meth:`add_weight` (keyed by their names); each Variable named by its
        key (:func:`_name_by_path`)."""
        own = self.__dict__.get("_variables")
        return _name_by_path(ListedVariables.of({**(own or {}), **flat_variables(enumerate(self.layers))}, self, own,
                                                ("layers", *map(str, range(len(self.layers))))))

    @variables.setter
    def variables(self, value):
        """Only ``{}`` (``Layer.__init__``'s): a container's variables are its layers'.

        Raises
        ------
        TypeError
            For any other value: assigning it would change nothing (verify41 M3); as
            ``keras.Sequential.variables``, which has no setter.
        """
        if value:
            raise TypeError(
                f"{type(self).__name__}.variables cannot be assigned: a Sequential's variables are its "
                "layers'. To copy a model use b.set_weights(a.get_weights()); to change one weight, "
                "assign into its Variable (b.variables['0.W'].assign(value))"
            )

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
                kind = type(layer)
                if bounded is not None and kind.__module__.startswith("autoprop.layers."):
                    known.array, known.ss = bounded, float(bounded.size)
                else:
                    known.array = None
                if kind in LEAF_LAYERS and layer.__dict__.get("built", True):
                    x = layer.call(x, training=training)  # what layer(x, training=...) runs
                else:
                    x = layer(x, training=training)
                bounded = x._value if kind in BOUNDED_OUTPUT and type(x) is Tensor else None
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
