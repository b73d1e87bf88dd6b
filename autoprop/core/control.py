"""Gradient control: stop_gradient, custom_gradient, numpy_function.

Source: ``lessons/10-gradient-tape.md``.

Plugging a manualprop layer's hand-written backward into a taped model with
:func:`custom_gradient`: the layer's ``forward`` computes ``y`` on plain arrays, its
``backward`` is the VJP (and fills ``layer.grads`` for its own parameters as a side effect):

>>> import numpy as np
>>> import autoprop as ap
>>> import manualprop as mp
>>> layer = mp.Linear(3, 2, rng=0)
>>> @ap.custom_gradient
... def manual_linear(x):
...     y = layer.forward(x.numpy())
...     def grad_fn(dy):
...         return layer.backward(np.array(dy))
...     return y, grad_fn
>>> x = ap.Variable(np.ones((4, 3)))
>>> with ap.GradientTape() as tape:
...     loss = ap.sum(ap.tanh(manual_linear(x)))
>>> dx = tape.gradient(loss, x)
>>> dx.shape, layer.grads["W"].shape
((4, 3), (2, 3))
"""

from __future__ import annotations

import functools
import inspect
import numbers

import numpy as np

from . import tape as _tape
from .registry import Primitive
from .tape import _FORWARD, _RECORDING, _sync_extra, note_cut
from .tensor import Tensor, Variable


def stop_gradient(x):
    """Return ``x``'s value as a new Tensor that no tape connects to ``x``.

    The result is a constant for every tape and accumulator, so gradients do not flow
    through it (``tf.stop_gradient``). :meth:`GradientTape.explain` reports it.

    Parameters
    ----------
    x : Tensor or array_like

    Returns
    -------
    Tensor
        Same value, shape and dtype (no copy: Tensors are immutable).
    """
    given = x
    x = x if isinstance(x, Tensor) else Tensor(x)
    out = Tensor._wrap(x._value)
    if _RECORDING:
        note_cut("stop_gradient", "stop_gradient() by design", (x,), (out,))
    if _tape.tracing():  # autoprop.function: the replay passes x's value on (verify41 M1)
        _tape._TRACERS[-1].same_value(given, out)
    return out


def numpy_function(func, inp, Tout=None, stateful=True, name=None):
    """Run arbitrary numpy code on the values of ``inp``; the outputs pass no gradient.

    As ``tf.numpy_function``: ``func`` receives plain ndarrays (copies: it cannot change
    the tensors) and returns arrays. The tape cannot look inside ``func`` (it is not
    made of registered primitives, so no VJP exists), hence the outputs are constants:
    a source reached only through ``numpy_function`` gets None, and
    :meth:`GradientTape.explain` says so. To give such code a gradient, wrap it with
    :func:`custom_gradient`.

    Parameters
    ----------
    func : callable
        ``func(*arrays) -> array or tuple of arrays``.
    inp : list of Tensor or array_like
    Tout : numpy dtype or list of dtypes, optional
        The output dtype(s); None keeps what ``func`` returned.
    stateful : bool, default True
        Inside :func:`autoprop.function` (``func`` runs again at each replay): False says ``func`` is a function of
        its inputs alone (no side effect, no Variable or other state read), so that, given only arguments of the
        call, it runs before the replay's other steps and an output of another shape than the traced one traces
        again; with True such an output is refused (TraceError), and a ``numpy_function`` after a
        ``Variable.assign*`` or ``apply_gradients`` is refused at the trace. Ignored eagerly.
    name
        Accepted for TensorFlow compatibility; ignored.

    Returns
    -------
    Tensor or list of Tensor
    """
    inp = list(inp) if isinstance(inp, (list, tuple)) else [inp]
    if _tape.tracing():  # autoprop.function: func runs again at each replay on that call's values (tf.function's)
        return _numpy_function_traced(func, inp, Tout, stateful)
    arrays = [np.array(x._value if isinstance(x, Tensor) else x) for x in inp]
    result = func(*arrays)
    multi = isinstance(result, (list, tuple))
    results = list(result) if multi else [result]
    touts = Tout if isinstance(Tout, (list, tuple)) else [Tout] * len(results)
    outs = [Tensor(r, dtype=t) for r, t in zip(results, touts)]
    if _RECORDING:
        note_cut("numpy_function", f"numpy_function({getattr(func, '__name__', 'func')})",
                 tuple(x for x in inp if isinstance(x, Tensor)), outs)
    return outs if multi else outs[0]


#: what to do when a traced numpy_function's output changes shape at a replay: stateful=True; stateful=False with
#: the call's arguments as inputs (an event before it: refused after it); stateful=False with an input made inside
_SHAPE_HINTS = (
    "Refused before any Variable changed. If func is a function of its inputs alone (no side effect, no Variable "
    "or other state read) and they are arguments of the call, pass stateful=False: each new shape then traces "
    "again. Otherwise compute it outside the function and pass the result in as an argument.",
    "Refused.",
    "Refused before any Variable changed. stateful=False traces again for a new shape only when every input of "
    "func is an argument of the call itself (an input here is computed inside the function): give func the "
    "arguments and compute inside it (ap.numpy_function(lambda a: g(2 * a), [x], stateful=False) for "
    "g(2 * x)), or compute it outside the function and pass the result in as an argument.")


def _numpy_function_traced(func, inp, Tout, stateful):
    """:func:`numpy_function` while :func:`autoprop.function` traces: one output, made by the trace's ``produce``
    (``func`` runs at the trace and again at each replay, on copies of that call's values: an integer argument's
    labels, a traced tensor's values), as TensorFlow runs a ``numpy_function`` at each call of a ``tf.function``.
    Several outputs raise TypeError (one array: stack them). The operations after it are traced for its output's
    shape and dtype: a replay's output of another shape or dtype raises ``tape.ShapeChanged`` (verify45c H2: anp.var
    of a longer output kept the traced count), which traces again where ``func`` is pure (``stateful=False``) of the
    call's arguments (run first), and is refused otherwise; so ``func`` with ``stateful=True`` after an event is
    refused at the trace (its refusal at a replay would come after that event had changed the Variables)."""
    tout = Tout[0] if isinstance(Tout, (list, tuple)) and len(Tout) == 1 else Tout
    traced, label, early = [], f"ap.numpy_function({getattr(func, '__name__', 'func')})", []
    trace = _tape._TRACERS[-1]

    def run(*values):
        result = func(*[np.array(v) for v in values])
        if isinstance(result, (list, tuple)) or isinstance(tout, (list, tuple)):
            raise TypeError(
                f"autoprop.numpy_function inside autoprop.function: {label} "
                + (f"returns {len(result)} outputs" if isinstance(result, (list, tuple)) else f"has Tout={Tout!r}")
                + " where a traced numpy_function returns one array (a replay runs func again for each output otherwise): make one "
                "numpy_function call per output, or return one array (np.stack of outputs of one shape, "
                "np.concatenate of raveled ones) and split it after the call")
        out = Tensor(result, dtype=tout)._value
        if not traced:
            traced.append((out.shape, out.dtype))
        elif (out.shape, out.dtype) != traced[0]:
            raise _tape.ShapeChanged(
                f"autoprop.function: {label} returns {out.dtype} of shape {out.shape} at this call, where the traced "
                f"call's returned {traced[0][1]} of shape {traced[0][0]}: the operations after it were traced for "
                "that shape (tf.function gives it an unknown shape; a trace here fixes every shape). "
                + (_SHAPE_HINTS[0] if stateful else _SHAPE_HINTS[1] if early else _SHAPE_HINTS[2]))
        return out
    late = trace.effects_recorded()
    value = trace.produce(run, inp, pure=not stateful)
    if trace.steps and trace.steps[-1][0] == "early":
        early.append(True)
    if late and trace.steps[-1][0] != "early":
        trace.refuse(f"{label} after a Variable.assign* or apply_gradients (a replay whose func returned another "
                     "shape could be refused only after that change; call it before them, or pass stateful=False "
                     "where func is a function of its inputs alone and they are arguments of the call)")
    out = Tensor._wrap(value)
    if _RECORDING:
        note_cut("numpy_function", f"numpy_function({getattr(func, '__name__', 'func')})",
                 tuple(x for x in inp if isinstance(x, Tensor)), (out,))
    _tape._TRACERS[-1].same_value(value, out)
    return out


def custom_gradient(f=None):
    """Decorator: give a function its own gradient, as ``tf.custom_gradient``.

    ``f(*inputs)`` returns ``(y, grad_fn)``. The operations inside ``f`` are not
    recorded; instead the tape records one operation whose VJP is ``grad_fn``:
    ``grad_fn(upstream)`` gets dL/dy (a Tensor of y's shape) and returns dL/d(input)
    for every Tensor input (a tuple when there are several), in the order of ``f``'s
    positional arguments. A positional argument that is a number (``f(x, 3.0)``) counts
    too, as TensorFlow converts it to a constant: grad_fn returns a gradient for it as
    well, None or a value, which is checked (a scalar) and dropped, since no tape can ask
    for a number's gradient; ``f`` receives the number itself. Keyword arguments and
    other objects (a string, a callable) get no gradient. Each must have exactly its
    input's shape (a scalar for a scalar input): it is never broadcast or summed to fit,
    as TensorFlow raises on a mismatch. None means "no gradient" for that input
    (``tape.gradient`` gives None unless another path connects it, as TensorFlow). A
    gradient of another real dtype is cast to the input's dtype (as
    :meth:`GradientTape.gradient` returns every gradient in its source's dtype).
    ``f`` may read Variables, as TensorFlow allows: the trainable float Variables that
    ``f``'s operations read and that are not among its arguments (a Variable passed as
    an argument is an input like any Tensor; so is a numeric numpy array argument,
    which ``f`` receives as a Tensor, as TensorFlow converts it). When there are any, ``grad_fn`` must
    accept a ``variables`` keyword (``grad_fn(*upstream, variables=None)``, or
    ``**kwargs``); it is called as ``grad_fn(upstream, variables=[...])`` (those
    Variables, in the order ``f`` first read them) and must return ``(input_grads,
    variable_grads)``, ``variable_grads`` a list with one gradient (or None) per
    Variable. When ``f`` reads none, ``grad_fn(upstream)`` is called without it and
    returns the input gradients alone, as TensorFlow.

    Higher-order derivatives work when ``grad_fn`` is written with tape operations.

    Parameters
    ----------
    f : callable

    Returns
    -------
    callable
        The wrapped function, returning ``y`` as a Tensor.

    Raises
    ------
    TypeError
        If ``f`` does not return ``(y, grad_fn)``, or (when the call is made, as
        TensorFlow) if ``f`` read Variables and ``grad_fn`` has no ``variables``
        keyword: it would have no way to give their gradients.
    ValueError
        During ``tape.gradient``: if ``grad_fn`` returns the wrong number of gradients,
        or a gradient whose shape is not its input's, or that is complex for a real
        input or not numeric; the message names the function, the argument (position
        and name) or Variable, the expected shape and what came.

    Examples
    --------
    A numerically stable ``log(1 + exp(x))`` with a hand-written gradient:

    >>> import numpy as np
    >>> import autoprop as ap
    >>> @ap.custom_gradient
    ... def softplus(x):
    ...     y = ap.logaddexp(0.0, x)
    ...     def grad_fn(dy):
    ...         return dy * ap.sigmoid(x)
    ...     return y, grad_fn
    >>> x = ap.constant(1000.0)
    >>> with ap.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = softplus(x)
    >>> float(tape.gradient(y, x))
    1.0

    A manualprop layer's hand-written backward as the VJP: the module's docstring.
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        return _call_custom(f, args, kwargs)

    return wrapped


def _call_custom(f, args, kwargs):
    """One call of :func:`custom_gradient`'s wrapped ``f``: ``f`` run with every tape paused, then one
    recorded operation whose VJP is its ``grad_fn`` (:func:`_custom_primitive`)."""
    # a numpy array argument is an input too, as TensorFlow converts it to a tensor:
    # f sees the Tensor and grad_fn owes it a gradient (unused by any tape)
    args = tuple(Tensor(a) if type(a) is np.ndarray and a.dtype.kind in "iufc" else a
                 for a in args)
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    # a number argument is a constant with a gradient slot, as TensorFlow converts every
    # positional argument: grad_fn returns one gradient per slot (None, or a value
    # that is checked and dropped: no tape can ask for a number's gradient)
    slots = [i for i, a in enumerate(args) if i in positions or _is_number(a)]
    # run f with every tape paused: its operations are replaced by grad_fn
    saved_rec, saved_fwd = _RECORDING[:], _FORWARD[:]
    _RECORDING[:] = []
    _FORWARD[:] = []
    _sync_extra()
    probe = _tape.GradientTape(watch_accessed_variables=True)
    try:
        with probe:  # only to learn which Variables f reads
            result = f(*args, **kwargs)
    finally:
        _RECORDING[:] = saved_rec
        _FORWARD[:] = saved_fwd
        _sync_extra()
    if not (isinstance(result, tuple) and len(result) == 2 and callable(result[1])):
        raise TypeError(
            f"custom_gradient: {f.__name__} must return (y, grad_fn); got "
            f"{type(result).__name__}"
        )
    y, grad_fn = result
    # the Variables grad_fn owes gradients for: those f read that are not its inputs
    inputs_given = [*args, *kwargs.values()]
    variables = [v for v in probe._accessed
                 if isinstance(v, Variable) and not any(v is a for a in inputs_given)]
    del probe
    if variables and not _accepts_variables(grad_fn):
        raise TypeError(
            f"custom_gradient: grad_fn of {f.__name__} must accept the keyword argument "
            f"'variables', since {f.__name__} uses variables: "
            f"{[v.name for v in variables]} (write grad_fn(*upstream, variables=None) "
            "returning (input_grads, variable_grads), as tf.custom_gradient)"
        )
    prim = _custom_primitive(f, grad_fn, y._value if isinstance(y, Tensor) else np.array(y), args, positions,
                             slots, variables)
    return prim(*[args[i] for i in positions], *variables)


def _custom_primitive(f, grad_fn, y_val, args, positions, slots, variables):
    """The recorded operation of one :func:`_call_custom`: forward ``y_val``, one VJP per Tensor argument (at
    ``positions``) and per Variable ``f`` read, each reading its gradient from one call of ``grad_fn`` per
    upstream gradient (checked by :func:`_checked_gradient`; ``slots``: the arguments owed a gradient)."""
    takes_vars = bool(variables)
    n_in = len(slots)
    inputs = [args[i] if i in positions else np.asarray(args[i]) + 0.0 for i in slots]
    inputs += variables
    names = _argument_names(f, slots, variables)
    # the slot of each recorded input: the Tensor arguments', then the Variables'
    slot_of = [slots.index(i) for i in positions] + [n_in + k for k in range(len(variables))]
    cache = {}

    def grads_for(g):
        if cache.get("g") is not g:
            gt = g if isinstance(g, Tensor) else Tensor._wrap(np.asarray(g))
            if takes_vars:
                pair = grad_fn(gt, variables=variables)
                if not (isinstance(pair, (list, tuple)) and len(pair) == 2
                        and isinstance(pair[1], (list, tuple))):
                    raise ValueError(
                        f"custom_gradient: grad_fn of {f.__name__} was called with "
                        f"variables= ({len(variables)} Variable(s) {f.__name__} read) "
                        "and must return (input_grads, variable_grads), variable_grads "
                        f"a list of one gradient per variable; got {_kind(pair)}"
                    )
                in_grads, var_grads = pair
            else:
                in_grads, var_grads = grad_fn(gt), []
            if not isinstance(in_grads, (list, tuple)):
                in_grads = [in_grads]
            if len(in_grads) != n_in or len(var_grads) != len(variables):
                raise ValueError(
                    f"custom_gradient: grad_fn of {f.__name__} returned {len(in_grads)} "
                    f"input gradients and {len(var_grads)} variable gradients; expected "
                    f"{n_in} and {len(variables)}{_slots_note(args, slots, names)}"
                )
            cache["g"] = g
            cache["r"] = [
                _checked_gradient(f.__name__, names[i], inputs[i], r)
                for i, r in enumerate([*in_grads, *var_grads])
            ]
        return cache["r"]

    def make_vjp(i):
        def vjp(g, ans, *ins):
            r = grads_for(g)[slot_of[i]]  # None: no gradient (the walk skips it, as TensorFlow)
            if r is not None and not isinstance(g, Tensor):  # plain backward: ndarrays
                r = r._value if isinstance(r, Tensor) else r
            return r
        return vjp

    return Primitive(
        f"custom_gradient({f.__name__})",
        lambda *vals: y_val,
        tuple(make_vjp(i) for i in range(len(positions) + len(variables))),
        {"jacobian": "given by the user's grad_fn", "vjp": "grad_fn(upstream)",
         "shapes": "as f", "kinks": "as grad_fn"},
    )


def _accepts_variables(grad_fn):
    """Whether ``grad_fn`` can be called with ``variables=``: a parameter of that name
    (positional-or-keyword or keyword-only) or a ``**kwargs`` (TensorFlow's test)."""
    try:
        params = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):  # a builtin: no signature to read
        return False
    return any((p.name == "variables" and p.kind is not p.VAR_POSITIONAL
                and p.kind is not p.POSITIONAL_ONLY) or p.kind is p.VAR_KEYWORD
               for p in params)


def _is_number(value) -> bool:
    """A Python or numpy number (``3``, ``0.5``, ``True``, ``np.float32(2)``, ``np.bool_(True)``)
    or a boolean array (``np.array(True)``): a positional argument of a custom_gradient
    function that TensorFlow converts to a constant (a bool tensor for the booleans, as for
    Python's ``True``)."""
    return ((isinstance(value, (numbers.Number, np.bool_)) and not isinstance(value, Tensor))
            or (type(value) is np.ndarray and value.dtype.kind == "b"))


def _slots_note(args, slots, names) -> str:
    """The note of the gradient-count error when some arguments are numbers: they count."""
    numbers_given = [names[k] for k, i in enumerate(slots) if not isinstance(args[i], Tensor)]
    if not numbers_given:
        return ""
    bools = {isinstance(args[i], (bool, np.bool_, np.ndarray)) for i in slots if not isinstance(args[i], Tensor)}
    kind = ("a number", "numbers") if bools == {False} else ("a boolean", "booleans") if bools == {True} else (
        "a number or a boolean", "numbers or booleans")
    return (f": one per argument that is {'a Tensor or a number' if bools == {False} else 'a Tensor, a number or a boolean'}, "
            f"as tf.custom_gradient; {', '.join(numbers_given)} "
            f"{'is ' + kind[0] if len(numbers_given) == 1 else 'are ' + kind[1]}, a constant: return None for it")


def _kind(value):
    """A short description of what grad_fn returned, for an error message."""
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    return type(value).__name__


def _argument_names(f, positions, variables):
    """How an error names each differentiated input of ``f``: ``"argument 0 (x)"`` (its
    position among ``f``'s arguments and, when ``f``'s signature gives it, its name), and
    ``"variable 'w'"`` for a Variable ``f`` read."""
    try:
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):  # a builtin or C callable: no signature
        params = []
    names = []
    for pos in positions:
        if pos < len(params) and params[pos].kind is not params[pos].VAR_POSITIONAL:
            names.append(f"argument {pos} ({params[pos].name})")
        elif params and params[-1].kind is params[-1].VAR_POSITIONAL:
            names.append(f"argument {pos} (*{params[-1].name})")
        else:
            names.append(f"argument {pos}")
    return names + [f"variable {v.name!r}" if v.name else "a variable it read"
                    for v in variables]


def _checked_gradient(fname, what, source, r):
    """The gradient ``grad_fn`` returned for ``source``, checked: None (no gradient) as
    is; otherwise exactly ``source``'s shape (a user-supplied gradient is never broadcast
    or summed to fit, as TensorFlow raises "Incompatible shapes between op input and
    calculated input gradient"), in ``source``'s dtype (another real dtype is cast, as
    :meth:`GradientTape.gradient` returns every gradient in its source's dtype; a complex
    gradient for a real input, or a non-numeric one, raises).

    Returns an ndarray or (when an outer tape records the backward pass) a Tensor.

    Raises
    ------
    ValueError
        Naming the custom_gradient function, the argument, the expected shape and dtype
        and what came.
    """
    if r is None:
        return None
    value = r._value if isinstance(r, Tensor) else np.asarray(r)
    shape, dtype = tuple(source.shape), source.dtype
    where = f"custom_gradient({fname}): grad_fn returned a gradient for {what}"
    if value.dtype.kind not in "iufc":
        raise ValueError(
            f"{where} of dtype {value.dtype}; expected a number array of the input's "
            f"shape {shape} and dtype {dtype}"
        )
    if value.dtype.kind == "c" and dtype.kind != "c":
        raise ValueError(
            f"{where} of complex dtype {value.dtype}; the input is real ({dtype}): "
            "return the gradient's real part if that is what you mean"
        )
    if tuple(value.shape) != shape:
        raise ValueError(
            f"{where} of shape {tuple(value.shape)}; the input has shape {shape}, and the "
            "gradient of an input must have exactly its shape (it is not broadcast)"
        )
    if isinstance(r, Tensor):
        return r if r.dtype == dtype else r.astype(dtype)
    return value if value.dtype == dtype else value.astype(dtype)
