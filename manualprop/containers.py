"""Containers of layers."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ._validation import (
    KNOWN_FINITE,
    NonFiniteError,
    UnlookedInputError,
    check_layer,
    nonfinite_output,
    sum_of_squares,
)
from ._weights import checked_values, set_states, state_values
from .layers import Flatten, Layer, Linear, ReLU, Sigmoid, Softmax, Tanh
from .optim import Optimizer
from .training import accuracy, compile_args, evaluate_loop, fit_loop, output_layer

__all__ = ["Residual", "Sequential", "flat_dict"]

_SIZE = "size"
_INF = math.inf
#: Built-in layers whose forward output is known to be finite whenever their input is (which
#: they check), and where a bound on the output's sum of squares is found: ReLU and a reshape
#: keep their input's (``layer._ss["X"]``), tanh, the logistic and softmax are bounded by 1
#: (``Y.size``), and Linear checks its own output (``_ss["Y"]``). Not LogSoftmax (``X - max``
#: can overflow to -inf).
_FINITE_FORWARD = {ReLU: "X", Flatten: "X", Tanh: _SIZE, Sigmoid: _SIZE, Softmax: _SIZE, Linear: "Y"}
#: Built-in layers whose backward returns a finite dX whenever dY is (which they check):
#: ``dX = dY * f'(X)`` with ``|f'| <= 1``, or a reshape of dY (both bounded by ``_ss["dY"]``);
#: and Linear, which checks its dX (``_ss["dX"]``).
_FINITE_BACKWARD = {ReLU: "dY", Tanh: "dY", Sigmoid: "dY", Flatten: "dY", Linear: "dX"}
_BUILTIN: dict = {}


class _Names(dict):
    """``names[key]`` is ``f"{position}.{key}"``, made at the first use and kept (a str key's;
    any other key's is made on every use, so that keys equal to each other, ``1`` and ``True``,
    never share a name)."""

    def __init__(self, position: int):
        super().__init__()
        self.position = position

    def __missing__(self, key) -> str:
        name = f"{self.position}.{key}"
        if type(key) is str:
            self[key] = name
        return name


class _NamesByPosition(dict):
    """``_FLAT_NAMES[i]``: the :class:`_Names` of the layer at position ``i`` of a container."""

    def __missing__(self, position: int) -> _Names:
        self[position] = names = _Names(position)
        return names


#: the flat names of ``Sequential.params``/``grads``; they depend only on the position and the
#: key, so one table serves every container
_FLAT_NAMES = _NamesByPosition()


def _all_finite(A) -> bool:
    try:
        return bool(np.isfinite(A).all())
    except TypeError:  # not numbers: nothing to say
        return True


def _blame(err, layers, i, before, after, method):
    """The NonFiniteError for layer ``i``, whose output ``after`` (the input of the next layer,
    which raised ``err``) has NaN/inf while its input ``before`` was finite; None when that is
    not the case (``err`` is about something else, or the next layer is not ours and may have
    written into what it got)."""
    nxt = i + 1 if method == "forward" else i - 1
    if not (0 <= nxt < len(layers) and _builtin(type(layers[nxt])) and "finite" in str(err)):
        return None
    if before is None or after is before or _all_finite(after) or not _all_finite(before):
        return None
    name, inputs = ("Y", "X") if method == "forward" else ("dX", "dY")
    return nonfinite_output(layers[i], method, after, name, inputs, ours=_builtin(type(layers[i]))).at(i)


def _deferred_look(layers, held):
    """The NonFiniteError of the first Linear in ``held`` (``(position, output)`` pairs, in
    order) whose output has NaN/inf, as its own look at ``Y`` writes it (naming its
    non-finite parameter, or the overflow); None when every one is finite.

    ``Sequential.forward`` hands a built-in ``Linear`` followed by a built-in ``Tanh`` (and
    then another ``Linear`` or the end) the flag that skips the look at its output: a NaN
    there stays NaN through ``tanh`` and the next ``Linear``, whose own look (or the
    container's look at the last ``Tanh``'s output) fails; this finds where it came from, so
    the message is the one the first Linear's look gives. An infinity, which ``tanh`` turns
    into +-1, is met by the ``Tanh``'s backward (``UnlookedInputError``)."""
    for j, Y in held:
        if not _all_finite(Y):
            return nonfinite_output(layers[j], "forward", Y, "Y", "X").at(j)
    return None


def _builtin(kind) -> bool:
    """True for a layer class of manualprop itself (not a subclass of it, not a container).

    Only such a layer is handed an input as known to be finite: its checks are ours and it
    does not write into its input, so the array it checks is the one the previous layer made.
    """
    known = _BUILTIN.get(kind)
    if known is None:
        known = _BUILTIN[kind] = (issubclass(kind, Layer) and kind.__module__.startswith("manualprop.")
                                  and kind.__qualname__ == kind.__name__)
    return known


def flat_dict(named_layers, attr: str) -> dict:
    """One flat dict of the ``attr`` dicts (``params`` or ``grads``) of named sublayers.

    Keys are ``"<name>.<key>"`` as in PyTorch's ``state_dict`` (``"0.W"``,
    ``"self_attn.W_q"``); the values are the sublayers' own arrays, so in-place
    optimizer updates reach them. A layer without ``attr`` contributes nothing.
    """
    return {
        f"{name}.{key}": value
        for name, layer in named_layers
        for key, value in getattr(layer, attr, {}).items()
    }


class Sequential:
    """Chain of layers: forward in order, backward in reverse.

    Parameters
    ----------
    *layers
        Objects following the manualprop protocol (``forward``, ``backward``,
        and optionally ``params``/``grads`` dicts), or a single list/tuple of
        them. Nested ``Sequential`` objects are allowed.

    Attributes
    ----------
    layers : list
        The layers, in order.
    params, grads : dict
        Flat views built on each access, keyed ``"<index>.<name>"`` as in
        PyTorch's ``state_dict`` (``"0.W"``, ``"0.b"``, ``"2.W"``, ...;
        nested containers give ``"1.0.W"``). The values are the layers' own
        arrays, so in-place optimizer updates of ``params`` reach the layers.

    Notes
    -----
    ``backward(dY)`` computes ``dX = J_1^T (J_2^T ( ... J_n^T dY))``: each
    layer's backward receives the gradient returned by the next layer.
    Source: ``lessons/07-sequential.md``.

    Raises
    ------
    TypeError
        A layer lacks callable ``forward``/``backward`` or non-dict
        ``params``/``grads`` (checked at construction). Errors of the layers
        themselves propagate unchanged.
    """

    def __init__(self, *layers):
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)):
            layers = tuple(layers[0])
        for i, layer in enumerate(layers):
            check_layer(layer, i, "Sequential")
        self.layers = list(layers)

    def __repr__(self) -> str:
        inner = ",\n".join(f"  ({i}): {layer!r}" for i, layer in enumerate(self.layers))
        return f"Sequential(\n{inner}\n)" if self.layers else "Sequential()"

    def __len__(self) -> int:
        return len(self.layers)

    def __iter__(self):
        return iter(self.layers)

    def __getitem__(self, index):
        return self.layers[index]

    def __call__(self, X, training=False):
        return self.forward(X, training=training)

    def _flat(self, attr: str) -> dict:
        # flat_dict(enumerate(self.layers), attr), written out, with the names "<i>.<key>" made
        # once (_FLAT_NAMES): an f-string per key and step formatted the number and hashed a new
        # string each time (issue 15, session 18)
        out = {}
        for i, layer in enumerate(self.layers):
            d = getattr(layer, attr, None)
            if d:
                names = _FLAT_NAMES[i]
                for key, value in d.items():
                    out[names[key]] = value
        return out

    def _step_lists(self):
        """``(variables, gradients)``: the values of ``params`` and ``grads`` in ``params``'s order,
        as :meth:`Optimizer.step(model) <manualprop.optim.Optimizer.step>` reads them, without
        the flat dicts; None on any doubt (a layer's ``params`` and ``grads`` not two plain dicts
        with the same ``str`` keys in the same order): the optimizer then takes ``params`` and
        ``grads``, which give the message or the update."""
        variables, gradients = [], []
        for layer in self.layers:
            try:
                p, g = layer.params, layer.grads
            except AttributeError:  # (_flat: a layer without the dict adds nothing)
                p, g = getattr(layer, "params", None), getattr(layer, "grads", None)
            if not p:  # (_flat skips an empty or missing dict)
                if g:
                    return None
                continue
            if type(p) is not dict or type(g) is not dict:
                return None
            keys = [*p]
            if keys != [*g]:
                return None
            try:
                "".join(keys)  # every key a str (1 and True are equal keys with different flat names)
            except TypeError:
                return None
            variables += p.values()
            gradients += g.values()  # (the same keys in the same order)
        return variables, gradients

    @property
    def params(self) -> dict:
        """Flat dict of all layers' parameters (the same array objects)."""
        return self._flat("params")

    @property
    def grads(self) -> dict:
        """Flat dict of all layers' gradients, keys as in ``params``."""
        return self._flat("grads")

    # --- Keras's weights API, as autoprop's Sequential (verify41b F5) --------------------------------------------
    @property
    def variables(self) -> dict:
        """Keras's (and autoprop's) name for :attr:`params`: the same flat dict of the layers' own arrays."""
        return self.params

    @variables.setter
    def variables(self, value):
        """Refused, as autoprop's ``Sequential.variables``: a container's variables are its layers'.

        Raises
        ------
        TypeError
            Always: assigning would change nothing the model computes with (verify41b F5: it made a new
            attribute without a word).
        """
        raise TypeError(
            f"{type(self).__name__}.variables cannot be assigned: a Sequential's variables are its layers' "
            "params. To copy a model use b.set_weights(a.get_weights()); to change one weight, assign into its "
            "array (b.params['0.W'][...] = value)")

    @property
    def weights(self) -> list:
        """list of ndarray: the layers' parameter arrays (the same objects), in :attr:`params` order, each once
        (a weight shared by two layers is listed at its first key): Keras's ``model.weights``, as autoprop's."""
        seen, out = set(), []
        for v in self.params.values():
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        return out

    def _within(self) -> list:
        """Every layer inside, once each, depth first in layer order (a nested container's layers before the
        layers after it, as :attr:`params`' keys list their weights: ``0.*``, ``1.0.*``, ``2.*``)."""
        found, out = {id(self)}, []

        def walk(container):
            for layer in container.layers:
                if id(layer) not in found:
                    found.add(id(layer))
                    out.append(layer)
                    if isinstance(layer, Sequential):
                        walk(layer)

        walk(self)
        return out

    def _states(self) -> list:
        """``(layer, name)`` of every state array (a BatchNorm's ``running_mean`` and ``running_var``: its
        ``_state_names``) of the layers, in :meth:`_within`'s order, as autoprop lists them (verify42b F15:
        ``Sequential([BN_a, Sequential([BN_b]), BN_c])`` listed BN_c's before BN_b's)."""
        return [(layer, n) for layer in self._within() for n in getattr(layer, "_state_names", ())]

    def _undeclared_states(self) -> list:
        """``"Class.name"`` of the array attributes of the layers named as running statistics (``running_*``,
        ``moving_*``) that no ``_state_names`` declares: :meth:`get_weights` does not copy them (verify42b F13)."""
        return [f"{type(layer).__name__}.{k}" for layer in self._within() for k, v in vars(layer).items()
                if k.startswith(("running_", "moving_")) and isinstance(v, np.ndarray)
                and k not in getattr(layer, "_state_names", ())]

    def get_weights(self) -> list:
        """Keras's ``get_weights``, as autoprop's: copies of :attr:`weights`, then of the state arrays (a
        ``BatchNorm1D``'s or ``BatchNorm2D``'s ``running_mean`` and ``running_var``), so that
        ``b.set_weights(a.get_weights())`` copies ``a``'s inference output too. The state arrays are those each
        layer names in its class attribute ``_state_names`` (``BatchNorm1D._state_names = ("running_mean",
        "running_var")``), listed layer by layer, depth first, as the weights; a layer of your own that keeps
        running statistics names them there to have them copied.

        Returns
        -------
        list of ndarray
            Copies (a later update of the model does not change them).

        Warns
        -----
        UserWarning
            A layer holds an array attribute named as a running statistic (``running_*``, ``moving_*``) that its
            ``_state_names`` does not name: it is not in the list, and ``set_weights`` leaves it as it was.
        """
        if missed := self._undeclared_states():
            warnings.warn(f"{type(self).__name__}.get_weights lists no {', '.join(missed)} (a state array is "
                          "listed when its layer names it in the class attribute _state_names, as BatchNorm1D's "
                          "_state_names = ('running_mean', 'running_var')), so set_weights will not copy it; add "
                          "_state_names to your layer's class", UserWarning, stacklevel=2)
        return [np.array(v, copy=True) for v in self.weights] + state_values(self._states())

    def set_weights(self, weights) -> None:
        """Keras's ``set_weights``, as autoprop's: copy each value into its weight's array (in place: the layers
        and an optimizer's state keep the same arrays), then, when given, the state arrays. Given the weights
        alone, the state is left as it was and a ``UserWarning`` names it.

        Parameters
        ----------
        weights : sequence of array_like
            One value per weight, in the order of :attr:`weights`, each of its shape, then, optionally, one per
            state array, in :meth:`get_weights`'s order.

        Raises
        ------
        ValueError
            Another number of values, or a value of another shape (nothing assigned).
        TypeError
            A value the weight's dtype cannot hold (complex into float, float into int; nothing assigned).
        """
        own, states = self.weights, self._states()
        keys = {id(v): k for k, v in reversed(self.params.items())}
        name = type(self).__name__
        weights = checked_values(name, weights, [(f"weight {keys[id(v)]!r}", v.shape) for v in own], states)
        for v, w in zip(own, weights):
            w = np.asarray(w)
            if not np.can_cast(w.dtype, v.dtype, "same_kind"):
                raise TypeError(f"{name}.set_weights: weight {keys[id(v)]!r} of dtype {v.dtype} cannot hold a value "
                                f"of dtype {w.dtype} (numpy would drop its imaginary part or truncate it); cast the "
                                "value yourself")
        for v, w in zip(own, weights):
            np.copyto(v, w, casting="same_kind")
        set_states(name, weights, len(own), states)

    def forward(self, X, training=False):
        """Run ``X`` through every layer in order and return the last output.

        Every layer checks its input as when it is called alone, except that a built-in
        layer does not look for NaN/inf in the output of a built-in layer that cannot make
        one or has checked it (``Linear`` checks its output, which ``Tanh`` then does not;
        the ``Linear`` after that ``Tanh`` does not either); see ``_validation.KNOWN_FINITE``.
        A layer of your own is never trusted. A built-in ``Linear`` followed by a built-in
        ``Tanh`` and then a built-in ``Linear`` (or the end) does not look at its output: a
        NaN there reaches the next ``Linear``'s look (or this container's look at the
        ``Tanh``'s output), and the message is the first ``Linear``'s own (``_deferred_look``);
        an inf, which ``tanh`` makes +-1 exactly (the output's numbers are right), is named so
        by the ``Tanh``'s backward.

        Raises
        ------
        NonFiniteError (a ValueError)
            A layer made NaN/inf from a finite input: the message names its position and
            ``repr`` (``"Sequential layer 0 (Linear(...)).forward: parameter W contains ..."``)
            and its non-finite parameter, or says that the values overflowed.
        """
        known, layers = KNOWN_FINITE, self.layers
        bound = None  # the previous output is finite (_FINITE_FORWARD) and this bounds X . X
        before = None  # the input of the previous layer (for the message of a NaN it made)
        held = None  # [(position, output)] of the Linears whose output nobody looked at
        n = len(layers)
        i = -1
        try:
            for i in range(n):  # i: the position named if layer i raises
                layer = layers[i]
                kind = type(layer)
                if bound is not None and (_BUILTIN.get(kind) or _builtin(kind)):
                    known.array, known.ss = X, bound
                else:
                    known.array = None
                if kind is Linear and i + 1 < n and type(layers[i + 1]) is Tanh and (
                        i + 2 == n or type(layers[i + 2]) is Linear):
                    known.defer = True  # Y's look moves to where it ends up (_deferred_look)
                    before, X = X, layer.forward(X, training=training)
                    held = [(i, X)] if held is None else [*held, (i, X)]
                else:
                    before, X = X, layer.forward(X, training=training)
                rule = _FINITE_FORWARD.get(kind)
                bound = None if rule is None else (
                    float(X.size) if rule is _SIZE else layer._ss.get(rule, _INF))
            if held is not None and held[-1][0] == n - 2:  # the network ends in that Linear's Tanh
                i = n - 1
                if not sum_of_squares(X) < _INF:  # one look at the output (Y . Y <= size if finite)
                    raise NonFiniteError(layers[i], "forward", "the output has NaN/inf")
        except NonFiniteError as err:
            located = held and _deferred_look(layers, held)
            if located:
                raise located from None
            err.at(i)  # the position of the layer that made the values (or of its container)
            raise
        except ValueError as err:  # layer i refused its input: did layer i - 1 make a NaN?
            blamed = i > 0 and _blame(err, layers, i - 1, before, X, "forward")
            if blamed:
                raise blamed from err
            raise
        finally:
            known.array = None
            known.defer = False
        return X

    @property
    def input_grad_optional(self) -> bool:
        """True: ``backward(dY, input_grad=False)`` is understood (unless a subclass replaces it)."""
        return type(self).backward is Sequential.backward

    def backward(self, dY, input_grad=True):
        """Run ``dY`` back through every layer in reverse; return dL/dX.

        ``input_grad=False`` says that dL/dX is not needed (the input is data, as in
        a training step): then None is returned, and a first layer whose
        ``input_grad_optional`` is true (manualprop's ``Linear`` and ``Sequential``, not
        subclasses that replace ``backward``) is called as ``backward(dY,
        input_grad=False)`` and skips computing it; any other is called as ``backward(dY)``. The
        parameter gradients are the same either way.

        Raises
        ------
        NonFiniteError (a ValueError)
            A layer's backward made NaN/inf (its dX, or dW/db of a ``Linear``) from a finite
            dY: the message gives its position and ``repr`` and says whether a parameter is
            non-finite or the values overflowed.
        """
        layers, known = self.layers, KNOWN_FINITE
        bound = None  # dY is finite (from a backward of _FINITE_BACKWARD) and this bounds dY . dY
        before = None  # the dY of the layer after (for the message of a NaN it made)
        i = len(layers)
        try:
            for i in range(len(layers) - 1, -1, -1):
                layer = layers[i]
                kind = type(layer)
                if bound is not None and (_BUILTIN.get(kind) or _builtin(kind)):
                    known.array, known.ss = dY, bound
                else:
                    known.array = None
                if i or input_grad:
                    before, dY = dY, layer.backward(dY)
                    rule = _FINITE_BACKWARD.get(kind)
                    bound = None if rule is None else layer._ss.get(rule, _INF)
                elif kind is Linear or getattr(layer, "input_grad_optional", False):  # (Linear's is True)
                    layer.backward(dY, input_grad=False)
                    return None
                else:
                    layer.backward(dY)
                    return None
        except NonFiniteError as err:
            if type(err) is UnlookedInputError and 0 < i and type(layers[i - 1]) is Linear:
                # a Tanh met a +-inf in the output the Linear before it did not look at
                # (Sequential.forward): the Linear's own message, as its look would have given
                located = nonfinite_output(layers[i - 1], "forward", err.array, "Y", "X").at(i - 1)
                raise located from None
            err.at(i)
            raise
        except ValueError as err:  # layer i refused its dY: did layer i + 1 make a NaN?
            blamed = _blame(err, layers, i + 1, before, dY, "backward")
            if blamed:
                raise blamed from err
            raise
        finally:
            known.array = None
        return dY

    # --- the training loop (Keras-style), shared with autoprop via fit_loop ----------
    def compile(self, optimizer, loss, metrics=()):
        """Set what :meth:`fit` uses, as Keras's ``Model.compile``.

        Parameters
        ----------
        optimizer : manualprop.optim.Optimizer or {"sgd", "adam", "rmsprop"}
            Updated with ``optimizer.step(self.params, self.grads)`` (manualprop's optimizers:
            ``optimizer.step(self)``, the same update without building the two dicts).
        loss : manualprop loss object
            ``loss.forward(y_true, y_pred) -> float`` and ``loss.backward()``.
        metrics : sequence of str
            ``"accuracy"`` (argmax of the outputs against integer labels) is supported.

        Raises
        ------
        TypeError, ValueError
            See :func:`manualprop.training.compile_args`.
        """
        last, at = output_layer(self.layers)
        self.optimizer, self.loss, self.metrics = compile_args(
            "Sequential", optimizer, loss, metrics, "manualprop.SoftmaxCrossEntropy()", last,
            "" if self.layers and last is self.layers[-1] else at)
        return self

    def _compiled(self, where):
        if getattr(self, "optimizer", None) is None:
            raise RuntimeError(f"Sequential.{where}: call compile(optimizer, loss) first")

    def train_step(self, data):
        """One step on a batch: forward, loss, backward, optimizer step. Returns metrics.

        ``data`` is ``(x_batch, y_batch)``. Override it in a subclass to change how a
        step works; :meth:`fit` calls it once per batch.
        """
        x, y = data
        y_pred = self.forward(x, training=True)
        value = self.loss.forward(y, y_pred)
        self.backward(self.loss.backward(), input_grad=False)  # x is data: no dL/dx
        opt = self.optimizer
        if type(opt).step is Optimizer.step:  # ours: step(self) = step(self.params, self.grads)
            opt.step(self)  # (the same pairs and checks, without the two flat dicts)
        else:  # an optimizer of your own (or one that replaces step) gets the two dicts
            opt.step(self.params, self.grads)
        logs = {"loss": value}
        if "accuracy" in self.metrics:
            logs["accuracy"] = accuracy(y, y_pred, self.loss, output_layer(self.layers)[0])
        return logs

    def test_step(self, data):
        """Loss and metrics on ``(x, y)`` in inference mode (no update)."""
        x, y = data
        y_pred = self.forward(x, training=False)
        logs = {"loss": self.loss.forward(y, y_pred)}
        if "accuracy" in self.metrics:
            logs["accuracy"] = accuracy(y, y_pred, self.loss, output_layer(self.layers)[0])
        return logs

    def fit(self, x, y, epochs=1, batch_size=32, validation_data=None, shuffle=True, seed=None,
            verbose=1):
        """Train with :meth:`train_step` over minibatches; return a ``History``.

        Same arguments and batch order as autoprop's ``Model.fit`` (see
        :func:`manualprop.training.fit_loop`), so the two tracks can be compared step
        by step.
        """
        self._compiled("fit")
        return fit_loop(self, x, y, epochs=epochs, batch_size=batch_size,
                        validation_data=validation_data, shuffle=shuffle, seed=seed,
                        verbose=verbose)

    def evaluate(self, x, y, batch_size=None, verbose="auto", return_dict=False):
        """Keras's ``model.evaluate`` on ``(x, y)`` in inference mode, by batches through
        :meth:`test_step`: the scalar loss, ``[loss, accuracy]`` with ``metrics=["accuracy"]``,
        or the dict with ``return_dict=True``. Arguments, returns and errors:
        :func:`manualprop.training.evaluate_loop`; a RuntimeError if not compiled.
        """
        self._compiled("evaluate")
        return evaluate_loop(self, x, y, batch_size=batch_size, verbose=verbose,
                             return_dict=return_dict)

    def predict(self, x):
        """``forward(x, training=False)``."""
        return self.forward(x, training=False)


class Residual(Sequential):
    r"""Residual block: ``Y = X + F(X)`` with ``F`` the chain of ``layers`` (He et al., 2016).

    The input is used twice — by ``F`` and by the skip connection — so its gradient is
    the sum of both paths::

        dX = dY + F.backward(dY)       # identity path + the block's path

    The Jacobian is ``I + J_F``: however small ``J_F``, the identity hands ``dY`` to the
    layers before the block unchanged (the gradient highway of ``lessons/08-gradient-flow.md``).
    Parameters, ``params``/``grads`` keys and the training loop are :class:`Sequential`'s.
    Source: ``lessons/25-residual-block.md``.

    Parameters
    ----------
    *layers
        As :class:`Sequential`; their chain must map X to an array of X's shape.

    Raises
    ------
    TypeError
        As :class:`Sequential`.
    ValueError
        ``F(X)`` does not have the shape of ``X`` (the sum would broadcast or fail).

    Examples
    --------
    >>> import numpy as np
    >>> from manualprop import Linear, ReLU
    >>> block = Residual(Linear(3, 3, rng=0), ReLU())
    >>> X = np.ones((2, 3))
    >>> bool(np.array_equal(block.forward(X), X + np.maximum(block[0].forward(X), 0)))
    True
    """

    def __repr__(self) -> str:
        return "Residual" + super().__repr__()[len("Sequential"):]

    def forward(self, X, training=False):
        """``X + F(X)``; raises ValueError if ``F(X)`` changes the shape."""
        F = super().forward(X, training=training)
        shape = getattr(X, "shape", None)
        if getattr(F, "shape", None) != shape:
            raise ValueError(
                f"Residual.forward: the block's layers must keep the shape of X for X + F(X); "
                f"X has shape {shape}, F(X) has shape {getattr(F, 'shape', None)}"
            )
        return X + F

    def backward(self, dY):
        """``dY + F.backward(dY)``: both uses of X add their gradients."""
        return dY + super().backward(dY)
