"""Optimizers, written once and used by both manualprop and autoprop.

Two ways to call them:

* ``apply_gradients(grads_and_vars)`` (Keras style): an iterable of
  ``(grad, var)`` pairs. ``var`` is either a NumPy array, updated in place,
  or any object with ``assign_sub(delta)`` and ``numpy()`` (autoprop's
  ``Variable``; duck-typed, autoprop is never imported). ``grad`` is an
  array or anything with ``numpy()``; pairs with ``grad is None`` are
  skipped (variable not on the gradient path).
* ``step(params, grads)`` (manualprop style): two dicts with equal keys,
  e.g. ``model.params, model.grads``; the ``params`` arrays are updated in
  place. ``step(model)`` does the same for a ``Sequential`` without building
  its two flat dicts (the pairs come from its layers, in the same order).

Update formulas are PyTorch's (``torch.optim``); ``weight_decay`` is Keras's
(``keras.optimizers``' ``BaseOptimizer._apply_weight_decay``), on every optimizer:
*decoupled* weight decay, each variable shrunk before its step by

    p <- p - p * weight_decay * learning_rate

(``torch.optim.AdamW``'s decay, there for every optimizer; not PyTorch's
``weight_decay`` of ``SGD``/``Adam``/``RMSprop``, which is L2 added to the gradient,
``g <- g + weight_decay * p``: for that add ``0.5 * weight_decay * sum(p**2)`` to the
loss). Variables whose gradient is None are not decayed (Keras's), and
:meth:`Optimizer.exclude_from_weight_decay` leaves chosen ones out. For plain SGD the
two meanings give the same step (``p - lr * (g + wd * p)``); with momentum, Adam or
RMSProp they differ. Per-variable state is kept in ``self.state`` keyed by ``id(var)``; the
entry also holds a reference to ``var`` so the id cannot be reused by another
object while the optimizer lives. Gradients passed in are never modified.

Gradient clipping by norm, Keras's options on every optimizer (at most one of them):

* ``clipnorm=c``: each variable's gradient is rescaled on its own so that its
  L2 norm is at most ``c``: ``g <- g * c / max(||g||, c)`` (``tf.clip_by_norm``);
* ``global_clipnorm=c``: all gradients of one call are rescaled by the same
  factor so that their joint norm ``sqrt(sum_i ||g_i||^2)`` is at most ``c``:
  ``g_i <- g_i * c / max(global_norm, c)`` (``tf.clip_by_global_norm``; PyTorch's
  ``clip_grad_norm_`` up to its 1e-6 in the denominator).

Clipping acts on the gradients as passed in (as PyTorch's ``clip_grad_norm_``
before ``step``); weight decay acts on the variables, not on the gradients. Pairs whose
gradient is ``None`` take no part in the global norm.
Source: ``lessons/06-optimizers.md``.
"""

from __future__ import annotations

import itertools
import math
import re
import warnings

import numpy as np

from ._validation import (
    _F32,
    _F64,
    DOT_CHUNK,
    Where,
    _sum_is_finite,
    _vdot,
    check_init_keywords,
    check_option,
    check_scalar,
    check_update,
    sum_of_squares,
)

__all__ = ["Adam", "Optimizer", "RMSProp", "RMSprop", "SGD"]


def _sgd_on_arrays(learning_rate: float, grads: list, variables: list) -> bool:
    """Plain SGD's update ``var -= learning_rate * grad`` of array pairs, checked first.

    The common case of :meth:`Optimizer._update_all` for SGD without momentum, decay or
    clipping: every variable a writeable float64/float32 ndarray, every gradient an ndarray of
    its dtype and shape without NaN/inf (float64: one dot, :func:`sum_of_squares` inline).
    Returns False, with nothing updated, at the first pair that is anything else; the general
    path then checks every pair again and writes the message (or casts, or reads the object).
    """
    ndarray, f64, f32, chunk, vdot, isfinite = np.ndarray, _F64, _F32, DOT_CHUNK, _vdot, math.isfinite
    for grad, var in zip(grads, variables):
        if type(grad) is not ndarray or type(var) is not ndarray:
            return False
        dt = grad.dtype
        if dt is not var.dtype or grad.shape != var.shape or not var.flags.writeable:
            return False
        if dt is f64:  # _sum_is_finite's look, inline (one dot; by chunks above DOT_CHUNK elements)
            if not isfinite(vdot(grad, grad) if grad.size <= chunk else sum_of_squares(grad)):
                return False
        elif dt is not f32 or not _sum_is_finite(grad):
            return False
    for grad, var in zip(grads, variables):
        var -= learning_rate * grad
    return True


#: type of a variable -> plain SGD's checked update of pairs whose first variable is of that
#: type, as :func:`_sgd_on_arrays` (``fn(learning_rate, grads, variables) -> bool``: False, with
#: nothing updated, at the first pair it does not take; the general path then runs). autoprop
#: registers its ``Variable``'s (``autoprop.optimizers``; manualprop never imports autoprop).
_SGD_ON: dict = {np.ndarray: _sgd_on_arrays}


def _plain_sgd(opt) -> bool:
    """True for an :class:`SGD` without momentum, weight decay or clipping (its update is
    ``var -= learning_rate * grad``); read on every call, as these may change between steps."""
    return (type(opt)._delta is SGD._delta and not opt.momentum and not opt.weight_decay
            and opt.clipnorm is None and opt.global_clipnorm is None)


def _base_update_all(opt) -> bool:
    """True when ``opt._update_all`` is :meth:`Optimizer._update_all` itself: not a subclass's, nor a function set on
    the instance (verify45a F6: the plain-SGD fast path skipped an ``_update_all`` set on the instance)."""
    return getattr(getattr(opt, "_update_all", None), "__func__", None) is Optimizer._update_all


def _label(var, i: int) -> str:
    name = getattr(var, "name", None)
    return f"variable #{i}" + (f" ({name!r})" if isinstance(name, str) else "")


def _via_numpy(obj) -> np.ndarray:
    return np.asarray(obj.numpy())


def _via_array(obj) -> np.ndarray:
    """``np.asarray(obj)`` of an object with ``__array__`` (autoprop's Tensor: a read-only
    view, no copy), the method called directly: numpy's own lookup of the protocol costs
    more than the call (about 0.8 against 0.35 us for a Tensor)."""
    a = type(obj).__array__(obj)
    return a if type(a) is np.ndarray else np.asarray(a)


#: type -> how to read a variable of that type: ``_via_array`` (its ``__array__``, a read-only
#: view, no copy) or ``_via_numpy``. Filled by :func:`_read` for a class that itself defines
#: ``assign_sub()`` and ``numpy()`` (so every object of it has them): the duck-type check runs
#: once per type, not on every call.
#: Listeners of ``apply_gradients`` (innermost last): ``hook(optimizer, grads_and_vars)`` runs
#: instead of it and runs it itself, or returns ``NotImplemented`` to decline (this code runs then).
#: ``autoprop.function`` registers one while it traces, so the update becomes an event of its
#: replay (it declines another thread's update); manualprop imports nothing of autoprop.
_APPLY_HOOKS: list = []
#: Each optimizer's creation number (``_serial``, set in ``__new__``): a listener can tell an
#: optimizer made after it started (``autoprop.function`` refuses one made inside a trace).
_SERIALS = itertools.count()
_VARIABLE_READERS: dict = {}
#: type -> how to read a gradient object that is not an ndarray (``__array__`` or ``numpy()``).
_GRADIENT_READERS: dict = {}


def _class_has(obj, *methods) -> bool:
    return all(callable(getattr(type(obj), m, None)) for m in methods)


def _read(var, where: str, label: str) -> np.ndarray:
    if isinstance(var, np.ndarray):
        if not var.flags.writeable:
            raise ValueError(
                f"{where}: {label} must be a writeable array (updated in place); got a read-only array"
            )
        return var
    read = _VARIABLE_READERS.get(type(var))
    if read is not None:
        return read(var)
    if callable(getattr(var, "assign_sub", None)) and callable(getattr(var, "numpy", None)):
        # __array__ gives a read-only view (no copy); numpy() is the fallback
        read = _via_array if _class_has(var, "__array__") else _via_numpy
        if _class_has(var, "assign_sub", "numpy") and len(_VARIABLE_READERS) < 64:
            _VARIABLE_READERS[type(var)] = read
        return read(var)
    if isinstance(var, str):  # zip(grads, model.variables), a dict: zip gives its keys (newuser27 #6)
        raise TypeError(
            f"{where}: {label} must be a NumPy array (updated in place) or an object with "
            f"assign_sub() and numpy(); got the str {var!r}, a key: zip over a dict (model.variables "
            f"is a dict of names) gives its keys, not its values. Zip a list of variables: "
            f"zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables), or a "
            f"dict's values: zip(tape.gradient(loss, model.variables).values(), model.variables.values())"
        )
    raise TypeError(
        f"{where}: {label} must be a NumPy array (updated in place) or an object with "
        f"assign_sub() and numpy(); got {type(var).__name__}"
    )


def _gradient_value(grad):
    """``grad`` as an array when it is an object with ``numpy()`` (a Tensor); anything else
    unchanged, for :func:`~manualprop._validation.check_update` to check and name."""
    read = _GRADIENT_READERS.get(type(grad))
    if read is not None:
        return read(grad)
    if not isinstance(grad, np.ndarray) and callable(getattr(grad, "numpy", None)):
        read = _via_array if _class_has(grad, "__array__") else type(grad).numpy
        if _class_has(grad, "numpy") and len(_GRADIENT_READERS) < 64:
            _GRADIENT_READERS[type(grad)] = read
        return read(grad)
    return grad


class _StepLabel:
    """``label(i)`` of :meth:`Optimizer.step`'s pair ``i``: a :class:`_ParamKey` of the ``i``-th key
    of ``params`` (or, for ``step(model)``, of ``model.params``, the flat dict made only when a
    message is written)."""

    __slots__ = ("params", "model")

    def __init__(self, params, model: bool):
        self.params, self.model = params, model

    def __call__(self, i: int) -> _ParamKey:
        return _ParamKey(self.keys()[i])

    def keys(self) -> list:
        """The keys of ``params`` (of ``model.params``), in the pairs' order: the names
        ``exclude_from_weight_decay(var_names=...)`` is matched against in ``step``."""
        return list(self.params.params if self.model else self.params)


class _ParamKey:
    """The label ``params['<key>']`` of a :meth:`Optimizer.step` pair, formatted only for a message."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __str__(self) -> str:
        return f"params[{self.key!r}]"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


class Optimizer:
    """Base class: bookkeeping shared by all optimizers.

    Subclasses implement ``_delta(g, p, slots) -> delta`` where ``g`` is the
    (clipped) gradient, ``p`` the current value and ``slots`` the
    variable's state dict; the variable is then updated by ``p -= delta``,
    after its weight decay ``p -= p * weight_decay * learning_rate`` (Keras's).

    Attributes
    ----------
    learning_rate : float
        May be changed between steps (schedules).
    weight_decay : float
        Keras's decoupled weight decay: before its step each variable (not excluded by
        :meth:`exclude_from_weight_decay`) becomes ``p - p * weight_decay * learning_rate``
        (module docstring). 0 (or None, Keras's default) for none.
    clipnorm, global_clipnorm : float or None
        Keras's gradient clipping by norm (see the module docstring); at most one.
    state : dict
        ``id(var) -> {"var": var, <slot name>: ndarray or int, ...}``.
    iterations : int
        The number of updates made so far (calls of ``apply_gradients`` or ``step``
        that updated), as Keras's ``optimizer.iterations``. The formulas do not read it:
        :class:`Adam`'s bias correction counts each variable's own updates (PyTorch's).

    Raises
    ------
    TypeError
        A keyword the constructor does not take, named with its close match
        (``SGD(momentun=0.9)``: did you mean 'momentum'?), as a layer's.
    """

    def __new__(cls, *args, **kwargs):
        # a misspelt keyword names its close match (SGD(momentun=0.9)), as a layer's
        check_init_keywords(cls, kwargs)
        opt = super().__new__(cls)
        opt._serial = next(_SERIALS)
        return opt

    def __init__(self, learning_rate, weight_decay=0.0, clipnorm=None, global_clipnorm=None):
        name = type(self).__name__
        self.learning_rate = check_scalar(learning_rate, "learning_rate", name, low=0.0)
        self.weight_decay = (0.0 if weight_decay is None  # (Keras's default: None, no decay)
                             else check_scalar(weight_decay, "weight_decay", name, low=0.0))
        self._excluded_ids: dict[int, object] = {}  # exclude_from_weight_decay(var_list=...)
        self._excluded_names = None  # its var_names, one compiled pattern
        self._unmatched_names: dict = {}  # each var_names pattern not yet matched (see _warn_unmatched_names)
        if clipnorm is not None and global_clipnorm is not None:
            raise ValueError(
                f"{name}: at most one of clipnorm and global_clipnorm can be set (as in Keras); "
                f"got clipnorm={clipnorm!r}, global_clipnorm={global_clipnorm!r}"
            )
        self.clipnorm = (None if clipnorm is None else
                         check_scalar(clipnorm, "clipnorm", name, low=0.0, low_inclusive=False))
        self.global_clipnorm = (None if global_clipnorm is None else
                                check_scalar(global_clipnorm, "global_clipnorm", name, low=0.0,
                                             low_inclusive=False))
        self.state: dict[int, dict] = {}
        self.iterations = 0

    def _repr_args(self) -> str:
        return f"learning_rate={self.learning_rate}, weight_decay={self.weight_decay}"

    def _clip_repr(self) -> str:
        if self.clipnorm is not None:
            return f", clipnorm={self.clipnorm}"
        if self.global_clipnorm is not None:
            return f", global_clipnorm={self.global_clipnorm}"
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()}{self._clip_repr()})"

    def exclude_from_weight_decay(self, var_list=None, var_names=None) -> None:
        """Leave variables out of the weight decay (Keras's ``exclude_from_weight_decay``).

        Each call replaces the previous one's choice (as in Keras).

        Parameters
        ----------
        var_list : iterable of variables, optional
            These objects (arrays or Variables, by identity) are not decayed.
        var_names : iterable of str, optional
            A variable whose name contains one of these (``re.search``, as Keras's
            ``variable.name``) is not decayed. The name is the variable's ``name`` in
            ``apply_gradients`` (autoprop's ``0.W``, ``0.b``: Keras's ``["bias"]`` is
            ``[r"\\.b$"]`` here) and its key in ``step(params, grads)`` / ``step(model)``
            (``"l1.b"``). A pattern that matches none of the variables of an update is
            warned of (UserWarning naming it, once): it excludes nothing.

        Raises
        ------
        TypeError
            An entry of ``var_names`` is not a string.
        """
        self._excluded_ids = {id(v): v for v in (var_list or ())}  # (the object kept: its id stays its own)
        names = list(var_names or ())
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"{Where(self, 'exclude_from_weight_decay')}: var_names must be "
                                f"strings; got {type(n).__name__} {n!r}")
        self._excluded_names = re.compile("|".join(sorted(set(names)))) if names else None
        # each pattern on its own, until it matches a variable updated (one that never does is warned of once)
        self._unmatched_names = {n: re.compile(n) for n in sorted(set(names))}

    def _decays(self, var, name) -> bool:
        """Whether ``var`` takes the weight decay: not excluded by :meth:`exclude_from_weight_decay`
        (by identity, or its ``name``, searched for the ``var_names`` patterns)."""
        if self._excluded_ids.get(id(var)) is var:
            return False
        pattern = self._excluded_names
        return pattern is None or not (isinstance(name, str) and pattern.search(name))

    def _warn_unmatched_names(self, names: list, method: str) -> None:
        """Warn (UserWarning, once per pattern) of a ``var_names`` pattern of
        :meth:`exclude_from_weight_decay` that matches none of ``names``, the names of the
        variables of one update: every one of them is decayed, which the pattern did not mean."""
        unmatched = self._unmatched_names
        for text, pattern in list(unmatched.items()):
            del unmatched[text]  # matched (never warned of) or warned of now, once
            if any(isinstance(n, str) and pattern.search(n) for n in names):
                continue
            shown = [n for n in names if isinstance(n, str)]
            seen = ", ".join(map(repr, shown[:8])) + (", ..." if len(shown) > 8 else "")
            warnings.warn(
                f"{Where(self, method)}: exclude_from_weight_decay(var_names=...): the "
                f"pattern {text!r} matches none of the {len(names)} variables updated, so it excludes "
                f"nothing. The patterns are searched (re.search, as Keras) in "
                + ("the keys of step(params, grads)" if method == "step" else "each variable's name")
                + (f": {seen}" if shown else ": these have no name (list arrays in var_list)")
                + " (autoprop names a layer's weights W and b, '0.W', '0.b': Keras's 'bias' is "
                r"r'\.b$' here)",
                UserWarning, stacklevel=4)

    def _slots(self, var) -> dict:
        entry = self.state.get(id(var))
        if entry is None or entry["var"] is not var:
            entry = {"var": var}
            self.state[id(var)] = entry
        return entry

    def clip(self, grads: list) -> list:
        """Apply ``clipnorm`` / ``global_clipnorm`` to a list of gradient arrays.

        Parameters
        ----------
        grads : list of ndarray
            Checked gradients of one update (one call of ``apply_gradients`` or ``step``).

        Returns
        -------
        list of ndarray
            New arrays when a gradient is rescaled; the inputs are never modified.
            Norms are accumulated in float64, the result keeps each gradient's dtype.
        """
        if self.clipnorm is not None:
            c = self.clipnorm
            out = []
            for g in grads:
                norm = float(np.sqrt(np.sum(np.square(g, dtype=np.float64))))
                out.append(g * (c / norm) if norm > c else g)
            return out
        if self.global_clipnorm is not None and grads:
            c = self.global_clipnorm
            norm = float(np.sqrt(sum(np.sum(np.square(g, dtype=np.float64)) for g in grads)))
            if norm > c:
                return [g * (c / norm) for g in grads]
        return grads

    def _update_all(self, grads: list, variables: list, method: str, label, names=None) -> None:
        """Check every pair, clip the gradients together, then update each variable.

        Parameters
        ----------
        grads, variables : list
            The pairs of one update, in order.
        method : str
            ``"step"`` or ``"apply_gradients"``: the method named in messages.
        label : callable
            ``label(i)`` names pair ``i`` in a message (called only to write one).
        names : callable, optional
            ``names()``: the variables' names for ``exclude_from_weight_decay(var_names=...)``
            (``step``'s dict keys), called only when var_names are set; default each ``var.name``.

        Every pair is checked before any variable changes (a NaN in the last gradient leaves the
        first variable as it was): an array pair's types, dtypes, shapes and finiteness inline,
        anything else by ``check_update`` (which writes the messages; objects read as :func:`_read`).
        """
        if _plain_sgd(self) and variables:
            sgd_on = _SGD_ON.get(type(variables[0]))
            if sgd_on is not None and sgd_on(self.learning_rate, grads, variables):
                return  # plain SGD on checked array (or Variable) pairs, done
        ndarray, f64, f32, finite = np.ndarray, _F64, _F32, _sum_is_finite
        isfinite, vdot, chunk, ss = math.isfinite, _vdot, DOT_CHUNK, sum_of_squares
        var_reader, grad_reader = _VARIABLE_READERS.get, _GRADIENT_READERS.get
        values, checked = [], []
        where = None
        for grad, var in zip(grads, variables):
            # the common case first, check_update's checks inline: a writeable array variable, a
            # float32/float64 array gradient of its shape (numpy's dtype objects of native floats
            # are singletons: any other dtype object takes the full check), and finite (float64:
            # _sum_is_finite's one dot, inline, up to DOT_CHUNK elements)
            if type(var) is ndarray and type(grad) is ndarray and grad.shape == var.shape:
                dt = grad.dtype
                if (dt is f64 and var.flags.writeable and isfinite(
                        vdot(grad, grad) if grad.size <= chunk else ss(grad))) or (
                        dt is f32 and var.flags.writeable and finite(grad)):
                    if dt is var.dtype:
                        values.append(var)
                        checked.append(grad)
                        continue
                    if var.dtype is f64 or var.dtype is f32:
                        values.append(var)
                        checked.append(grad.astype(var.dtype))
                        continue
            i = len(values)  # the position of this pair (one value per pair before it)
            if type(var) is ndarray and var.flags.writeable:
                p = var
            else:  # _read, its common case inline: a kind of object already read once (a Tensor)
                read = var_reader(type(var))
                if read is None:
                    where = where or Where(self, method)
                p = read(var) if read is not None else _read(var, where, label(i))
            if type(grad) is not ndarray:
                read = grad_reader(type(grad))
                grad = read(grad) if read is not None else _gradient_value(grad)
            values.append(p)
            # an object's pair (a Variable and a Tensor, read as arrays): the same inline checks
            # as an array pair's above (float64: the one dot, inline)
            dt = grad.dtype if type(grad) is ndarray else None
            if (dt is f64 or dt is f32) and (p.dtype is f64 or p.dtype is f32) and (
                    grad.shape == p.shape) and (
                    isfinite(vdot(grad, grad) if grad.size <= chunk else ss(grad)) if dt is f64
                    else finite(grad)):
                checked.append(grad if dt is p.dtype else grad.astype(p.dtype))
                continue
            where = where or Where(self, method)
            checked.append(check_update(grad, p, where, label(i)))
        if self.clipnorm is not None or self.global_clipnorm is not None:
            checked = self.clip(checked)
        decays = None
        if self.weight_decay and (self._excluded_ids or self._excluded_names is not None):
            keys = (names() if names is not None
                    else [getattr(v, "name", None) for v in variables])
            decays = [self._decays(v, n) for v, n in zip(variables, keys)]
            if self._unmatched_names:
                self._warn_unmatched_names(keys, method)
        self._apply_checked(variables, values, checked, decays)

    def _apply_checked(self, variables: list, values: list, checked: list, decays=None) -> None:
        """The update of :meth:`_update_all` once every pair is checked (and clipped): each variable
        (its array ``values``, read once) takes its step from its checked gradient, and its weight
        decay unless ``decays[i]`` is False (:meth:`exclude_from_weight_decay`; None: all decay)."""
        f64, f32, ndarray = _F64, _F32, np.ndarray
        decay, delta_of = self.weight_decay, self._delta
        # plain SGD (no momentum, no decay): its delta, learning_rate * g, computed inline
        lr = (self.learning_rate if not decay and type(self)._delta is SGD._delta and not self.momentum
              else None)
        for i, (var, p, g) in enumerate(zip(variables, values, checked)):
            if g.dtype is not p.dtype and g.dtype != p.dtype:  # cast already; clip keeps the dtype
                g = g.astype(p.dtype)
            if lr is not None and (p.dtype is f64 or p.dtype is f32):
                if type(var) is ndarray:
                    var -= lr * g
                else:  # a Variable: its assign_sub (a new array, so that a tape's saved value stays)
                    var.assign_sub(lr * g)
                continue
            # Keras's decoupled weight decay, p - p * weight_decay * learning_rate, before the step
            shrink = p * (decay * self.learning_rate) if decay and (decays is None or decays[i]) else None
            if shrink is not None and shrink.dtype != p.dtype:
                shrink = shrink.astype(p.dtype)
            delta = delta_of(g, p, var)
            if type(delta) is not ndarray or (delta.dtype is not p.dtype and delta.dtype != p.dtype):
                delta = np.asarray(delta, dtype=p.dtype)
            if type(var) is ndarray:
                if shrink is not None:
                    var -= shrink
                var -= delta
            else:
                if shrink is not None:
                    var.assign_sub(shrink)
                var.assign_sub(delta)

    def _delta(self, g, p, var):  # pragma: no cover - abstract
        """The step ``delta`` (``p <- p - delta``); state via ``self._slots(var)``."""
        raise NotImplementedError

    def apply_gradients(self, grads_and_vars) -> None:
        """Update each variable from its gradient (Keras style).

        Parameters
        ----------
        grads_and_vars : iterable of (grad, var)
            ``var``: ndarray (updated in place) or object with ``assign_sub``
            and ``numpy``; ``grad``: float array of ``var``'s shape (cast to
            its dtype), or ``None`` to skip the pair (with a warning; a
            ValueError when every gradient is None, as in TensorFlow).

        Raises
        ------
        TypeError
            A pair is not a 2-tuple, a variable is neither kind, a gradient is
            not float.
        ValueError
            Gradient shape differs from its variable's, NaN/inf gradient,
            read-only array variable.
        """
        if _APPLY_HOOKS:
            done = _APPLY_HOOKS[-1](self, grads_and_vars)
            if done is not NotImplemented:  # (NotImplemented: the hook declines, this code runs)
                return done
        grads, variables, missing = [], [], []
        numbers = None  # the pairs' positions once one is skipped (until then pair j is #j)
        for i, pair in enumerate(grads_and_vars):
            if type(pair) is not tuple or len(pair) != 2:  # (zip's tuples: the usual case)
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise TypeError(
                        f"{Where(self, 'apply_gradients')}: item {i} must be a (grad, var) pair "
                        f"(tuple or list of 2); got {type(pair).__name__}"
                    )
            grad, var = pair
            if grad is None:
                missing.append(_label(var, i))
                if numbers is None:
                    numbers = list(range(len(grads)))
            else:
                grads.append(grad)
                variables.append(var)
                if numbers is not None:
                    numbers.append(i)
        # plain SGD on pairs _SGD_ON takes (every gradient there, no _update_all of a subclass or the instance): its checked
        # update, as step() takes it, without _update_all's frame (about 1% of a 64-32-10 B16 autoprop step,
        # session 45 of docs/speed.md); a pair it does not take leaves every variable as it was, and
        # _update_all below checks the pairs again and writes the message
        if not missing and variables and _base_update_all(self) and _plain_sgd(self):
            sgd_on = _SGD_ON.get(type(variables[0]))
            if sgd_on is not None and sgd_on(self.learning_rate, grads, variables):
                self.iterations += 1
                return
        if missing and not grads:
            raise ValueError(
                f"{Where(self, 'apply_gradients')}: no gradients provided for any variable ({', '.join(missing)}): "
                "the loss does not depend on them on the tape (see GradientTape.explain)"
            )
        if missing:
            warnings.warn(
                f"{Where(self, 'apply_gradients')}: gradients do not exist for {', '.join(missing)}; they are not updated",
                stacklevel=2,
            )
        self._update_all(grads, variables, "apply_gradients",
                         lambda j: f"variable #{j if numbers is None else numbers[j]}")
        self.iterations += 1

    def step(self, params, grads=None) -> None:
        """Update every ``params[k]`` in place from ``grads[k]`` (manualprop style).

        Parameters
        ----------
        params : dict or model
            The arrays to update (``layer.params``, ``model.params``); or, with ``grads``
            left out, the model itself: ``opt.step(model)`` is ``opt.step(model.params,
            model.grads)`` (the same pairs, checks, messages and update) for a model that
            lists its pairs (``manualprop.Sequential``), without building the two flat dicts.
        grads : dict, optional
            The gradients, with the keys of ``params``. Only left out with a model.

        Raises
        ------
        TypeError
            ``grads`` left out and ``params`` is not a model with ``params`` and ``grads``,
            or as :meth:`apply_gradients`.
        ValueError
            ``params`` and ``grads`` have different keys, or as
            :meth:`apply_gradients`.
        """
        if grads is None:  # opt.step(model): its pairs as two lists, then the update of step
            model = params
            lists = getattr(model, "_step_lists", None)
            lists = lists() if lists is not None else None
            if lists is None:  # not a model that lists its pairs (or doubt): its flat dicts
                if not (isinstance(getattr(model, "params", None), dict)
                        and isinstance(getattr(model, "grads", None), dict)):
                    raise TypeError(
                        f"{Where(self, 'step')}: step(params, grads) takes two dicts, or a model "
                        f"with params and grads alone; got {type(model).__name__} without grads"
                    )
                self.step(model.params, model.grads)
                return
            variables, gradients = lists
        else:
            if params.keys() != grads.keys():  # compared as sets
                raise ValueError(
                    f"{Where(self, 'step')}: params and grads must have the same keys; got params-only "
                    f"{sorted(set(params) - set(grads))}, grads-only {sorted(set(grads) - set(params))}"
                )
            variables, gradients = [*params.values()], [*map(grads.__getitem__, params)]
        if not (_plain_sgd(self) and _sgd_on_arrays(self.learning_rate, gradients, variables)):
            # the general path; its messages name pair i as params[<key>] (a model's flat dict
            # made only to write one)
            label = _StepLabel(params, grads is None)
            self._update_all(gradients, variables, "step", label, label.keys)
        self.iterations += 1


class SGD(Optimizer):
    """Stochastic gradient descent with optional (Nesterov) momentum, PyTorch's formula.

    For each variable ``p`` with gradient ``g`` (dampening 0)::

        p <- p - p * weight_decay * learning_rate  (Keras's decoupled decay, if > 0)
        v <- momentum * v + g                      (v = g on the first step)
        g <- g + momentum * v   if nesterov else   g <- v
        p <- p - learning_rate * g

    With ``momentum = 0`` this is ``p <- p - learning_rate * g``. Note that
    PyTorch puts ``learning_rate`` outside the buffer (Keras and some texts use
    ``v <- momentum * v - lr * g; p <- p + v``; the two agree only for a
    constant learning rate). ``weight_decay`` is Keras's (decoupled, the first line),
    not ``torch.optim.SGD``'s L2 ``g <- g + weight_decay * p``: the two agree without
    momentum, not with it. Source: ``lessons/06-optimizers.md``.

    Parameters
    ----------
    learning_rate : float >= 0
    momentum : float in [0, 1)
    nesterov : bool
        Requires ``momentum > 0``.
    weight_decay : float >= 0 or None
        Keras's decoupled weight decay (module docstring); None or 0: none.
    clipnorm, global_clipnorm : float > 0 or None
        Gradient clipping by norm, Keras's semantics (module docstring); at most one.

    Raises
    ------
    TypeError, ValueError
        Hyperparameters of the wrong type or out of range; both clip options set.
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=0.0,
                 clipnorm=None, global_clipnorm=None):
        super().__init__(learning_rate, weight_decay, clipnorm, global_clipnorm)
        name = type(self).__name__
        self.momentum = check_scalar(
            momentum, "momentum", name, low=0.0, high=1.0, high_inclusive=False
        )
        self.nesterov = bool(check_option(nesterov, "nesterov", name, (False, True)))
        if self.nesterov and self.momentum == 0:
            raise ValueError(f"{name}: nesterov=True must have momentum > 0; got momentum=0.0")

    def _repr_args(self) -> str:
        return (
            f"learning_rate={self.learning_rate}, momentum={self.momentum}, "
            f"nesterov={self.nesterov}, weight_decay={self.weight_decay}"
        )

    def _delta(self, g, p, var):
        if self.momentum:
            slots = self._slots(var)
            v = slots.get("momentum_buffer")
            if v is None:
                v = g.copy()
            else:
                v *= self.momentum
                v += g
            slots["momentum_buffer"] = v
            g = g + self.momentum * v if self.nesterov else v
        return self.learning_rate * g


class Adam(Optimizer):
    """Adam with bias correction, PyTorch's formula and defaults (``torch.optim.Adam``).

    For each variable ``p`` with gradient ``g`` and its own step count ``t``
    (1 on the first update)::

        p <- p - p * weight_decay * learning_rate    (Keras's decoupled decay, as AdamW)
        m <- beta_1 m + (1 - beta_1) g               (m, v start at 0)
        v <- beta_2 v + (1 - beta_2) g**2
        p <- p - lr / (1 - beta_1**t) * m / (sqrt(v) / sqrt(1 - beta_2**t) + epsilon)

    i.e. ``p -= lr * m_hat / (sqrt(v_hat) + epsilon)`` with
    ``m_hat = m / (1 - beta_1**t)``, ``v_hat = v / (1 - beta_2**t)``. The
    argument names are Keras's; the defaults (``epsilon=1e-8``) and the place
    of ``epsilon`` are PyTorch's. Source: ``lessons/06-optimizers.md``.

    ``keras.optimizers.Adam`` differs in three ways, so no ``epsilon`` reproduces its
    updates exactly. Keras's ``epsilon`` (default 1e-7) is the paper's "epsilon hat",
    added to ``sqrt(v)`` with the bias correction moved into the learning rate::

        p <- p - lr * sqrt(1 - beta_2**t) / (1 - beta_1**t) * m / (sqrt(v) + epsilon)

    which is the formula above with ``epsilon = epsilon_keras / sqrt(1 - beta_2**t)``: a
    value that changes every step (31.6x ``epsilon_keras`` at ``t = 1``, toward 1x as ``t``
    grows). Passing ``epsilon=1e-7`` therefore matches Keras only while ``epsilon`` is
    negligible beside ``sqrt(v_hat)`` (about ``|g|``): for a gradient of 1e-6 at ``lr=1e-3``
    the first step here is -9.09e-4, Keras's -2.40e-4. Keras's ``t`` is the
    optimizer's global ``iterations`` + 1, so a variable whose gradient was None on
    the first call gets, on its first update at call 2, Keras's second-step bias
    correction where PyTorch's (here) gives the first-step one. ``iterations`` counts
    the updates as Keras's does. ``torch.optim.Adam`` (same ``epsilon``) is matched.

    ``weight_decay`` is Keras's (the first line: decoupled, what ``torch.optim.AdamW``
    does), not ``torch.optim.Adam``'s L2 in the gradient, which Adam's denominator
    rescales. ``exclude_from_weight_decay`` as Keras's.

    Parameters
    ----------
    learning_rate : float >= 0
    beta_1, beta_2 : float in [0, 1)
    epsilon : float >= 0
    weight_decay : float >= 0 or None
        Keras's decoupled weight decay (module docstring); None or 0: none.
    clipnorm, global_clipnorm : float > 0 or None
        Gradient clipping by norm, Keras's semantics (module docstring); at most one.

    Raises
    ------
    TypeError, ValueError
        Hyperparameters of the wrong type or out of range; both clip options set.
    """

    def __init__(
        self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=0.0,
        clipnorm=None, global_clipnorm=None,
    ):
        super().__init__(learning_rate, weight_decay, clipnorm, global_clipnorm)
        name = type(self).__name__
        self.beta_1 = check_scalar(beta_1, "beta_1", name, low=0.0, high=1.0, high_inclusive=False)
        self.beta_2 = check_scalar(beta_2, "beta_2", name, low=0.0, high=1.0, high_inclusive=False)
        self.epsilon = check_scalar(epsilon, "epsilon", name, low=0.0)

    def _repr_args(self) -> str:
        return (
            f"learning_rate={self.learning_rate}, beta_1={self.beta_1}, beta_2={self.beta_2}, "
            f"epsilon={self.epsilon}, weight_decay={self.weight_decay}"
        )

    def _delta(self, g, p, var):
        slots = self._slots(var)
        if "step" not in slots:
            slots["step"] = 0
            slots["m"] = np.zeros_like(p)
            slots["v"] = np.zeros_like(p)
        slots["step"] += 1
        t, m, v = slots["step"], slots["m"], slots["v"]
        m *= self.beta_1
        m += (1 - self.beta_1) * g
        v *= self.beta_2
        v += (1 - self.beta_2) * g * g
        bias_correction1 = 1 - self.beta_1**t
        bias_correction2 = 1 - self.beta_2**t
        denom = np.sqrt(v) / np.sqrt(bias_correction2) + self.epsilon
        return (self.learning_rate / bias_correction1) * m / denom


class RMSProp(Optimizer):
    """RMSProp, PyTorch's formula and defaults (``torch.optim.RMSprop``).

    For each variable ``p`` with gradient ``g``::

        p   <- p - p * weight_decay * learning_rate  (Keras's decoupled decay)
        s   <- rho s + (1 - rho) g**2                (s starts at 0)
        avg <- sqrt(s) + epsilon
               (centered: a <- rho a + (1 - rho) g;  avg <- sqrt(s - a**2) + epsilon)
        p   <- p - lr * g / avg                      (momentum = 0)
        b   <- momentum b + g / avg;  p <- p - lr * b   (momentum > 0, b starts at 0)

    ``epsilon`` is added outside the square root (PyTorch; Keras adds it
    inside). In the centered form ``s - a**2`` is clipped at 0 against
    rounding, where PyTorch would take the root of a tiny negative number.
    Argument names are Keras's (``rho`` is PyTorch's ``alpha``); defaults are
    PyTorch's. ``weight_decay`` is Keras's, as on every optimizer here (decoupled, the
    first line), not ``torch.optim.RMSprop``'s L2 in the gradient.
    Source: ``lessons/06-optimizers.md``.

    Parameters
    ----------
    learning_rate : float >= 0
    rho : float in [0, 1)
    momentum : float in [0, 1)
    epsilon : float >= 0
    centered : bool
    weight_decay : float >= 0 or None
        Keras's decoupled weight decay (module docstring); None or 0: none.
    clipnorm, global_clipnorm : float > 0 or None
        Gradient clipping by norm, Keras's semantics (module docstring); at most one.

    Raises
    ------
    TypeError, ValueError
        Hyperparameters of the wrong type or out of range; both clip options set.
    """

    def __init__(
        self,
        learning_rate=0.01,
        rho=0.99,
        momentum=0.0,
        epsilon=1e-8,
        centered=False,
        weight_decay=0.0,
        clipnorm=None,
        global_clipnorm=None,
    ):
        super().__init__(learning_rate, weight_decay, clipnorm, global_clipnorm)
        name = type(self).__name__
        self.rho = check_scalar(rho, "rho", name, low=0.0, high=1.0, high_inclusive=False)
        self.momentum = check_scalar(
            momentum, "momentum", name, low=0.0, high=1.0, high_inclusive=False
        )
        self.epsilon = check_scalar(epsilon, "epsilon", name, low=0.0)
        self.centered = bool(check_option(centered, "centered", name, (False, True)))

    def _repr_args(self) -> str:
        return (
            f"learning_rate={self.learning_rate}, rho={self.rho}, momentum={self.momentum}, "
            f"epsilon={self.epsilon}, centered={self.centered}, weight_decay={self.weight_decay}"
        )

    def _delta(self, g, p, var):
        slots = self._slots(var)
        if "square_avg" not in slots:
            slots["square_avg"] = np.zeros_like(p)
            if self.centered:
                slots["grad_avg"] = np.zeros_like(p)
            if self.momentum:
                slots["momentum_buffer"] = np.zeros_like(p)
        s = slots["square_avg"]
        s *= self.rho
        s += (1 - self.rho) * g * g
        if self.centered:
            a = slots["grad_avg"]
            a *= self.rho
            a += (1 - self.rho) * g
            avg = np.sqrt(np.maximum(s - a * a, 0)) + self.epsilon
        else:
            avg = np.sqrt(s) + self.epsilon
        if self.momentum:
            b = slots["momentum_buffer"]
            b *= self.momentum
            b += g / avg
            return self.learning_rate * b
        return self.learning_rate * g / avg


class RMSprop(RMSProp):
    """RMSprop, Keras's formula and defaults (``keras.optimizers.RMSprop``).

    For each variable ``p`` with gradient ``g``::

        p <- p - p * weight_decay * learning_rate    (decoupled decay, if weight_decay)
        v <- rho v + (1 - rho) g**2                  (v starts at 0)
        d <- sqrt(v + epsilon)
             (centered: a <- rho a + (1 - rho) g;  d <- sqrt(v - a**2 + epsilon))
        p <- p - lr * g / d                          (momentum = 0)
        m <- momentum m + lr * g / d;  p <- p - m    (momentum > 0, m starts at 0)

    It differs from :class:`RMSProp` (PyTorch's) in three places: ``epsilon`` is added
    inside the square root, the learning rate is inside the momentum buffer, and the
    defaults are Keras's. In the centered form ``v - a**2`` is clipped at 0 against
    rounding, where Keras would take the root of a tiny negative number.

    Parameters
    ----------
    learning_rate : float >= 0, default 0.001
    rho : float in [0, 1), default 0.9
    momentum : float in [0, 1), default 0.0
    epsilon : float >= 0, default 1e-07
    centered : bool, default False
    weight_decay : float >= 0 or None, default None
        Keras's decoupled weight decay (the first line; module docstring).
    clipnorm, global_clipnorm : float > 0 or None
        Gradient clipping by norm, Keras's semantics (module docstring); at most one.

    Raises
    ------
    TypeError, ValueError
        Hyperparameters of the wrong type or out of range; both clip options set.

    Examples
    --------
    Keras's own example: the loss ``p**2 / 2`` (gradient ``p``) from ``p = 10``, one step
    with ``learning_rate=0.1``: ``v = 0.1 * 100 = 10``, ``p = 10 - 0.1 * 10 / sqrt(10 + 1e-7)``.

    >>> import numpy as np
    >>> p = np.array([10.0])
    >>> RMSprop(learning_rate=0.1).apply_gradients([(p.copy(), p)])
    >>> print(f"{p[0]:.6f}")
    9.683772
    """

    def __init__(
        self,
        learning_rate=0.001,
        rho=0.9,
        momentum=0.0,
        epsilon=1e-7,
        centered=False,
        weight_decay=None,
        clipnorm=None,
        global_clipnorm=None,
    ):
        super().__init__(learning_rate, rho, momentum, epsilon, centered, weight_decay, clipnorm,
                         global_clipnorm)

    def _delta(self, g, p, var):
        slots = self._slots(var)
        if "velocity" not in slots:
            slots["velocity"] = np.zeros_like(p)
            if self.centered:
                slots["average_gradient"] = np.zeros_like(p)
            if self.momentum:
                slots["momentum"] = np.zeros_like(p)
        v = slots["velocity"]
        v *= self.rho
        v += (1 - self.rho) * g * g
        if self.centered:
            a = slots["average_gradient"]
            a *= self.rho
            a += (1 - self.rho) * g
            denominator = np.maximum(v - a * a, 0) + self.epsilon
        else:
            denominator = v + self.epsilon
        increment = self.learning_rate * g / np.sqrt(denominator)
        if self.momentum:
            m = slots["momentum"]
            m *= self.momentum
            m += increment
            return m.copy()
        return increment
