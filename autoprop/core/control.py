"""Gradient control: stop_gradient, custom_gradient, numpy_function.

Source: ``lessons/10-gradient-tape.md``.
"""

from __future__ import annotations

import functools
import inspect

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
    x = x if isinstance(x, Tensor) else Tensor(x)
    out = Tensor._wrap(x._value)
    if _RECORDING:
        note_cut("stop_gradient", "stop_gradient() by design", (x,), (out,))
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
    stateful, name
        Accepted for TensorFlow compatibility; ignored.

    Returns
    -------
    Tensor or list of Tensor
    """
    inp = list(inp) if isinstance(inp, (list, tuple)) else [inp]
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


def custom_gradient(f=None):
    """Decorator: give a function its own gradient, as ``tf.custom_gradient``.

    ``f(*inputs)`` returns ``(y, grad_fn)``. The operations inside ``f`` are not
    recorded; instead the tape records one operation whose VJP is ``grad_fn``:
    ``grad_fn(upstream)`` gets dL/dy (a Tensor of y's shape) and returns dL/d(input)
    for every Tensor input (a tuple when there are several; None for "no gradient").
    If ``grad_fn`` has a ``variables`` keyword, ``f`` may read Variables: ``grad_fn(
    upstream, variables=[...])`` must then return ``(input_grads, variable_grads)``
    with one gradient per Variable that ``f`` read, in the order given.

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
        If ``f`` does not return ``(y, grad_fn)``.

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

    Plugging a manualprop layer's hand-written backward into a taped model: the
    layer's ``forward`` computes ``y`` on plain arrays, its ``backward`` is the VJP
    (and fills ``layer.grads`` for its own parameters as a side effect):

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
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        tensors = [a for a in args if isinstance(a, Tensor)]
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
        y_val = y._value if isinstance(y, Tensor) else np.array(y)
        takes_vars = "variables" in inspect.signature(grad_fn).parameters
        variables = [v for v in probe._accessed if isinstance(v, Variable)] if takes_vars else []
        del probe
        n_in = len(tensors)
        cache = {}

        def grads_for(g):
            if cache.get("g") is not g:
                gt = g if isinstance(g, Tensor) else Tensor._wrap(np.asarray(g))
                if takes_vars:
                    in_grads, var_grads = grad_fn(gt, variables=variables)
                else:
                    in_grads, var_grads = grad_fn(gt), []
                if not isinstance(in_grads, (list, tuple)):
                    in_grads = [in_grads]
                if len(in_grads) != n_in or len(var_grads) != len(variables):
                    raise ValueError(
                        f"custom_gradient: grad_fn of {f.__name__} returned {len(in_grads)} "
                        f"input gradients and {len(var_grads)} variable gradients; expected "
                        f"{n_in} and {len(variables)}"
                    )
                cache["g"] = g
                cache["r"] = list(in_grads) + list(var_grads)
            return cache["r"]

        def make_vjp(i):
            def vjp(g, ans, *ins):
                r = grads_for(g)[i]
                src = ins[i]
                if r is None:
                    r = np.zeros(np.shape(src), getattr(src, "dtype", np.float64))
                if not isinstance(g, Tensor):  # plain backward: ndarrays
                    r = r._value if isinstance(r, Tensor) else np.asarray(r)
                return r
            return vjp

        prim = Primitive(
            f"custom_gradient({f.__name__})",
            lambda *vals: y_val,
            tuple(make_vjp(i) for i in range(n_in + len(variables))),
            {"jacobian": "given by the user's grad_fn", "vjp": "grad_fn(upstream)",
             "shapes": "as f", "kinks": "as grad_fn"},
        )
        return prim(*tensors, *variables)

    return wrapped
