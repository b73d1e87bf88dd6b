"""numpy's dispatch protocols over Tensors: ``np.tanh(t)``, ``np.sum(t)`` reach their record.

``Tensor.__array_ufunc__`` and ``__array_function__`` call these (through the registry, where
:mod:`autoprop.core.prims` puts them: ``registry.dispatch_ufunc``), with the tables the
records built (``registry._UFUNCS``, ``_FUNCTIONS``). A numpy function whose result is a
view of its input marks the Tensor it returns as one (:mod:`autoprop.core.views`).

The rules, each in one function: a call in which no Tensor is float or complex is numpy's own
function on the values, returned as constant Tensors; a result comes in numpy's dtype
(:func:`numpy_typed`: the ufunc's own type resolution; ``dtype=`` casts the inputs first,
``_common._cast_inputs``); numpy's required parameters given by keyword move to their positions
(:func:`_bind`), as the records take their arrays by position; a ufunc's ``where=`` with ``out=``
is recorded as jax's "double where" (:func:`_masked`), and without ``out=`` refused; the functions
that write into an argument (``_IN_PLACE``) and the names without a record (``_SUGGEST``) are
refused naming the recorded way to write them.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..observe import _numpy_hint, is_static
from ..registry import _FUNCTIONS, _OWNER, _UFUNC_PRIMS, _UFUNCS, Primitive
from ..tape import guard_traced, int_leaves, tracing
from ..tensor import Tensor, _own_dtypes
from ..views import VIEW_FUNCTIONS, mark_view
from ._common import _cast_inputs, _check_kw, _holds_tensor, _no_out, _read_values, _values
from .reductions import ufunc_method
from .shape import reshape

__all__ = ["dispatch_ufunc", "dispatch_function", "numpy_views", "numpy_name", "method_out"]


def dispatch_ufunc(ufunc, method, inputs, kwargs):
    """Route ``np.<ufunc>(tensor, ...)`` to the registered primitive, or explain why not."""
    name = ufunc.__name__
    if method == "at":
        _add_at(ufunc, inputs)
    if method != "__call__":  # reduce, accumulate, outer: the numpy function each computes
        if not _carries_float(inputs) and not _carries_float(kwargs.values()):
            # integer and boolean Tensors only (no derivative): numpy's own method on the values,
            # in numpy's dtype (np.logaddexp.reduce of uint8 computes in float16)
            return _as_tensors(getattr(ufunc, method)(*_values(inputs), **{
                k: _values(v) for k, v in kwargs.items()}))
        return ufunc_method(ufunc, method, inputs, kwargs)
    if kwargs.get("where", True) is not True:  # the safe-divide idiom: out's values where not
        return _masked(ufunc, inputs, kwargs)  # (dtype= too: its plain call below honours it)
    dtype = kwargs.get("dtype")
    if dtype is not None:  # numpy's dtype=: the output's dtype, the inputs cast to it (recorded)
        kwargs = {k: v for k, v in kwargs.items() if k != "dtype"}
    # other options: refused, never dropped (a dropped option is a wrong number), naming scipy's ufuncs as scipy's
    label = name if getattr(np, name, None) is ufunc else _ufunc_name(ufunc)
    _no_out(label if label.startswith("scipy.") else name, kwargs, at=ufunc.nin + 1)  # (out= or positional)
    _check_kw(label if label.startswith("scipy.") else name, kwargs)
    if ufunc is np.positive:  # (a new tensor, as numpy's is a new array: Tensor.__pos__)
        return +inputs[0]
    prim = _UFUNCS.get(ufunc)
    if prim is None:
        raise TypeError(
            f"autoprop cannot record {_ufunc_name(ufunc)} on a Tensor: it has no registered "
            "derivative (VJP), so a tape could not differentiate through it. "
            + _SUGGEST.get(ufunc, "Use a supported function (see autoprop.PRIMITIVES), or ") +
            "ap.numpy_function(...) to run it as plain numpy with no gradient."
        )
    if dtype is not None:
        want = ufunc(*_stand_ins(inputs, ufunc), dtype=dtype).dtype  # (numpy's own TypeError for a bad cast)
        if want.kind in "fc":
            inputs = _cast_inputs(list(inputs), want, "unsafe")
        out = numpy_typed(ufunc, prim, inputs)
        return out if out.dtype == want else out.astype(want)
    return numpy_typed(ufunc, prim, inputs)


def _masked(ufunc, inputs, kwargs):
    """``np.divide(a, b, out=o, where=m)``: numpy's ufunc where ``m`` holds and ``o``'s values
    elsewhere, as ``np.where(m, ufunc(a', b'), o)``, recorded.

    ``a'``, ``b'`` are the inputs with their unselected entries replaced by their values at the
    first selected entry (the "double where" of jax's FAQ), so the recorded ufunc is computed,
    and differentiated, only at values the mask selects: the unselected entries' 0-division,
    log(0) or nan never reach the forward or the gradient. The gradient of the result reaches
    the inputs in the selected entries and ``o`` (a Tensor) in the others. numpy writes the
    result into ``o``: an ndarray ``o`` gets numpy's values too (a later read of it is numpy's
    number, with no gradient: use the returned Tensor); a Tensor ``o`` is never written (it is
    immutable), the returned Tensor is the result.

    Parameters
    ----------
    ufunc : np.ufunc with one output
    inputs : tuple of Tensors, arrays or numbers
    kwargs : dict
        numpy's keywords: ``where`` (a boolean array or Tensor, broadcast to the result),
        ``out`` (numpy's one-element tuple: an array or Tensor of the result's shape), others
        as the ufunc's plain call takes them (``dtype=``).

    Returns
    -------
    Tensor of ``o``'s shape and dtype (numpy's result).

    Raises
    ------
    TypeError
        Without ``out=`` (numpy leaves the unselected entries uninitialised), with a Tensor
        input as ``out`` (written in place), several outputs, a mask that is not boolean, or
        an output dtype numpy's ``same_kind`` casting refuses; each message names the rewrite
        ``np.where(m, f(np.where(m, x, 1)), fill)``.
    """
    name = _ufunc_name(ufunc)
    short = f"np.{ufunc.__name__}" if name == f"numpy.{ufunc.__name__}" else name
    rewrite = (f"write np.where(mask, {short}(np.where(mask, x, 1)), fill), the safe value 1 (or any "
               "value in the function's domain) where the mask is False, so the gradient never "
               "sees an unselected entry")
    kw = dict(kwargs)
    where, out = kw.pop("where"), kw.pop("out", None)
    if out is None:
        raise TypeError(f"autoprop cannot record {name}(..., where=...) without out=: numpy leaves "
                        f"the unselected entries uninitialised (arbitrary values). Give out= (a new "
                        f"array, e.g. out=np.zeros_like(x)), or {rewrite}.")
    out = out[0] if type(out) is tuple and len(out) == 1 else out
    if ufunc.nout != 1 or type(out) is tuple:
        raise TypeError(f"autoprop cannot record {name}(..., where=...) with several outputs; {rewrite}.")
    if isinstance(out, Tensor) and any(a is out for a in inputs):
        raise TypeError(f"autoprop Tensors are immutable: {name}(..., out=x, where=...) writes into its "
                        f"input x. Instead, {rewrite.replace('fill', 'x')}.")
    mask = np.asarray(_values(where))
    if mask.dtype != np.bool_:
        raise TypeError(f"autoprop cannot record {name}(..., where=...) with a mask of dtype {mask.dtype}: "
                        "numpy takes a boolean where= (write where=m != 0)")
    shape = np.shape(_values(out))
    mask = np.broadcast_to(mask, shape)
    first = np.flatnonzero(mask)[:1]

    def safe(a):  # a's entries where the mask holds; elsewhere a's value at the first such entry
        v = _values(a)
        if not isinstance(v, np.ndarray):
            return a
        b = np.broadcast_to(v, shape)
        fill = b.reshape(-1)[first] if first.size else np.ones((), v.dtype)
        if isinstance(a, Tensor):
            return np.where(mask, np.broadcast_to(a, shape), fill.reshape(()))
        return np.where(mask, b, fill.reshape(()))
    y = dispatch_ufunc(ufunc, "__call__", [safe(a) for a in inputs], kw)
    want = np.dtype(_values(out).dtype)
    if y.dtype != want:
        if not np.can_cast(y.dtype, want, "same_kind"):
            raise TypeError(f"Cannot cast ufunc {ufunc.__name__!r} output from {y.dtype!r} to {want!r} "
                            f"with casting rule 'same_kind' (numpy's error for out= of dtype {want})")
        y = y.astype(want)
    res = np.where(mask, y, out if isinstance(out, Tensor) else np.asarray(out))
    res = res if res.dtype == want else res.astype(want)
    if isinstance(out, np.ndarray):
        np.copyto(out, res._value if isinstance(res, Tensor) else res)  # numpy's write into out
    return res


def _stand_ins(inputs, ufunc=None):
    """One-element arrays of the inputs' dtypes (numbers as they are: numpy's weak scalars), of
    the inputs' ndim for a gufunc (``np.matmul``'s core dimensions: 0-d stand-ins it refuses)."""
    if ufunc is not None and ufunc.signature is not None:
        return [np.ones((1,) * v.ndim, v.dtype) if isinstance(v, np.ndarray) else v
                for v in (_values(a) for a in inputs)]
    return [np.ones((), v.dtype) if isinstance(v, np.ndarray) else v for v in (_values(a) for a in inputs)]


def numpy_typed(ufunc, prim, inputs):
    """``prim(*inputs)`` in numpy's result dtype: the ufunc's own type resolution (scipy's erf of
    int8 is float64, numpy's rint of int8 float16, float32 with 0.5 float32). Inputs that carry
    no derivative (integer and boolean Tensors, arrays, numbers) are the ufunc's own call on the
    values, a constant Tensor; otherwise the record's result is cast to numpy's dtype (a recorded
    cast) where it differs."""
    if not _carries_float(inputs):
        return _as_tensors(ufunc(*[_values(a) for a in inputs]))
    try:
        with np.errstate(all="ignore"):  # (numpy's dtype, from one-element stand-ins)
            want = ufunc(*_stand_ins(inputs, ufunc)).dtype
    except (TypeError, ValueError, AttributeError):  # no loop, several outputs: the record decides
        return prim(*inputs)
    out = prim(*inputs)
    return out if not isinstance(out, Tensor) or out.dtype == want else out.astype(want)


def _carries_float(args):
    """True when an argument (in lists and tuples too) is a float or complex Tensor, the only
    ones a derivative reaches; False when every Tensor is integer or boolean."""
    for a in args:
        if isinstance(a, Tensor):
            if a._value.dtype.kind in "fc":
                return True
        elif type(a) in (list, tuple) and _carries_float(a):
            return True
    return False


def _as_tensors(out):
    """numpy's result with its arrays and numpy scalars as (constant) Tensors."""
    if isinstance(out, (np.ndarray, np.generic)) and not isinstance(out, (np.str_, np.bytes_)):
        return Tensor._wrap(np.asarray(out))
    if isinstance(out, tuple) and hasattr(out, "_fields"):  # numpy's named results (SlogdetResult)
        return type(out)(*(_as_tensors(o) for o in out))
    return type(out)(_as_tensors(o) for o in out) if type(out) in (list, tuple) else out


def _ufunc_name(ufunc):
    """``numpy.exp``, ``scipy.special.expit``, or a ufunc of np.frompyfunc / another library."""
    name = ufunc.__name__
    if getattr(np, name, None) is ufunc:
        return f"numpy.{name}"
    try:
        import scipy.special as ss
    except ImportError:  # pragma: no cover
        ss = None
    if ss is not None and getattr(ss, name, None) is ufunc:
        return f"scipy.special.{name}"
    return (f"the ufunc {name!r} (made by np.frompyfunc or np.vectorize: a Python function called "
            "element by element, which a tape cannot see into; write it with numpy functions on "
            "the Tensor instead)")


def _add_at(ufunc, inputs):
    """``np.add.at(a, indices, t)``: numpy adds into ``a`` in place, which no tape records."""
    tensor_target = isinstance(inputs[0], Tensor) if inputs else False
    raise TypeError(
        f"autoprop cannot record numpy.{ufunc.__name__}.at on a Tensor: it writes in place into its first "
        f"argument ({'a Tensor, which never changes' if tensor_target else 'a numpy array'}"
        "), which no tape can record. Build the result as a new Tensor: the scatter-add "
        "`dW = np.zeros((V, D)); np.add.at(dW, ids, dY)` (lesson 30) is "
        "`dW = np.eye(V)[ids.ravel()].T @ dY.reshape(-1, D)` (a one-hot product, recorded), or "
        "`np.bincount(ids, weights=w, minlength=V)` for 1-D weights (recorded in w); "
        "`np.add.at(x, idx, t)` on a 1-D x is `x + np.bincount(idx, weights=t, minlength=len(x))`.")


def dispatch_function(func, args, kwargs, named=False):
    """Route ``np.<function>(tensor, ...)`` to autoprop, or explain why it cannot.

    ``named``: the call came through ``autoprop.numpy``'s name (:func:`numpy_name`), not numpy's
    protocol, so it may hold no Tensor at all; such a call is numpy's own too (nothing in it
    has a derivative)."""
    impl = _FUNCTIONS.get(func)
    if impl is None:
        name = _label(func)
        if func in _IN_PLACE:
            if hint := _numpy_hint():  # numpy's np.full(shape, t, dtype=...): copyto into its own array
                raise TypeError(f"{name} would copy a Tensor into a numpy array, which leaves the tape.{hint}")
            raise TypeError(
                f"autoprop Tensors are immutable: {name} writes into its first argument in place "
                f"(a Tensor never changes, and values written into a numpy array from a Tensor "
                f"leave the tape). Build a new tensor instead: {_IN_PLACE[func]}.")
        raise TypeError(f"autoprop cannot record {name} on a Tensor: it has no registered "
                        "derivative (VJP). " + _SUGGEST.get(func, "Use a supported function (see "
                                                              "autoprop.numpy), or ") +
                        "ap.numpy_function(...) to run it as plain numpy with no gradient.")
    if len(args) > _out_at(func):  # np.sum(t, None, None, buf): numpy's out given by position
        args, kwargs = _positional_tail(func, args, kwargs)
    if kwargs.get("out") is not None:  # np.any(t, out=buf), np.sum(int_t, out=buf): numpy's own on values wrote buf
        _no_out(_label(func), kwargs)
    if kwargs:  # np.linalg.inv(a=t): the records take numpy's required arguments by position
        args, kwargs = _bind(func, args, kwargs)
    if tracing():  # a list of ints given as an option (np.reshape(t, SHAPE), np.transpose(t, AXES)): its items
        for v in (*args, *kwargs.values()):  # are part of the trace's signature, as np.pad's pad_width (verify42b F16)
            if type(v) is list and int_leaves(v):
                guard_traced(v)
    if tracing() and func in _GATHERS and args and _traced_table(args[0]):
        args = (Tensor._wrap(args[0]), *args[1:])  # (a constant Tensor: its take is recorded, the index read anew)
    if _OWNER.get(func) not in _ON_VALUES and not _carries_float(args) and not _carries_float(
            kwargs.values()) and (named or _holds_tensor(args) or _holds_tensor(kwargs.values())):
        # integer and boolean Tensors only (no derivative): numpy's own function on the values; not recorded, so
        # refused on a traced tensor (its result's shape may come from the values: np.extract(y != 0, y).shape[0],
        # verify43b F11), as np.nonzero is
        _read_values(func.__name__, (*args, *kwargs.values()))
        out = _as_tensors(func(*_values(args), **{k: _values(v) for k, v in kwargs.items()}))
    else:
        out = impl(*args, **kwargs)
    return numpy_views(func, args, out) if func in VIEW_FUNCTIONS else out


#: numpy's gathers whose table may be a constant of an autoprop.function's trace (:func:`_traced_table`)
_GATHERS = (np.take, np.take_along_axis)


def _traced_table(a):
    """True for a float array that autoprop.function holds as a constant of its trace (``observe.static``: made in
    the traced code from shapes and numbers, ``np.eye(K)``): ``anp.take(np.eye(K), y, axis=0)`` is then a recorded
    gather from it, which each replay computes again from that call's ``y`` (fn46: the one-hot was refused as
    numpy's own function on the values), the eager call's values."""
    return type(a) is np.ndarray and a.dtype.kind in "fc" and is_static(a)


def _label(func):
    """``numpy.sum``, ``numpy.linalg.inv``, ``scipy.special.logsumexp``: a numpy or scipy function's name as the
    messages give it."""
    return f"{getattr(func, '__module__', None) or 'numpy'}.{func.__name__}"


def numpy_name(f):
    """``autoprop.numpy``'s name for the numpy function or ufunc ``f``: ``np.f``'s own dispatch.

    ``anp.f(*args)`` is what ``np.f(*args)`` does on Tensors (``Tensor.__array_ufunc__``'s
    straight call of the record when every input is a float/complex Tensor, else
    :func:`dispatch_ufunc`; :func:`dispatch_function`), so the two spellings follow one rule: a
    call in which no Tensor is float or complex (integer or boolean Tensors, arrays and numbers
    only) is numpy's own function on the values, returned as constant Tensors, and a ufunc's
    record gives the ufunc's own result dtype (:func:`numpy_typed`).

    Parameters
    ----------
    f : numpy function or ufunc (scipy.special's ufuncs too) with a registered record

    Returns
    -------
    callable
        Named as ``f``; it accepts Tensors, arrays and numbers and returns Tensors (a list or
        tuple of them where numpy returns several arrays).
    """
    if isinstance(f, np.ufunc):
        prim = _UFUNC_PRIMS.get(f)

        def bound(*inputs, **kwargs):
            if len(inputs) > f.nin:  # anp.exp(x, x): numpy's positional out (corpus37 F1)
                inputs, kwargs = _positional_outs(f, inputs, kwargs)
            if not kwargs and prim is not None and _own_dtypes(inputs):  # (Tensor.__array_ufunc__'s
                return prim(*inputs)  # straight call: float/complex Tensors, numbers beside float64)
            return dispatch_ufunc(f, "__call__", inputs, kwargs)
        impl = _UFUNCS[f]
        for method in _UFUNC_METHOD_ARGS:  # anp.add.reduce, anp.maximum.accumulate, anp.multiply.outer
            setattr(bound, method, _ufunc_method(f, method))
        bound.nin, bound.nout, bound.identity = f.nin, f.nout, f.identity
    else:
        def bound(*args, **kwargs):
            return dispatch_function(f, args, kwargs, True)
        impl = _FUNCTIONS[f]
    bound.__name__ = bound.__qualname__ = f.__name__
    bound.__doc__ = (getattr(impl, "__doc__", None) if not isinstance(impl, Primitive) else None) or (
        f"``numpy.{f.__name__}`` over Tensors (numpy's own dispatch; the derivative: "
        f"``autoprop.explain({(impl.name if isinstance(impl, Primitive) else f.__name__)!r})``).")
    return bound


def _positional_outs(ufunc, inputs, kwargs):
    """``inputs, kwargs`` of ``anp.<ufunc>(*inputs, **kwargs)`` with numpy's positional outputs
    (the arguments after the ufunc's ``nin`` inputs: ``np.exp(x, out)``, ``np.maximum(x, y, out)``)
    taken as numpy takes them: as ``out=``.

    Before, they reached the record as inputs: ``anp.exp(x, x)`` wrote into the Tensor ``x``'s
    buffer, and a tape that had recorded ``x`` returned a wrong gradient (corpus37 F1);
    ``anp.maximum(x, y, x)`` on a tape crashed (F1b).

    Parameters
    ----------
    ufunc : np.ufunc
    inputs : tuple
        The positional arguments, more than ``ufunc.nin``.
    kwargs : dict
        The keywords.

    Returns
    -------
    tuple, dict
        The ``nin`` inputs, and ``kwargs`` with ``out`` (numpy's tuple of the outputs) when one
        is not None and ``where=`` is given (recorded as numpy's masked write, ``_masked``).

    Raises
    ------
    TypeError
        An output that is not None without ``where=``: :func:`~._common._no_out`, naming the
        positional argument; more positional arguments than ``nin + nout``, or ``out`` given
        both ways (numpy's errors).
    """
    n, outs = ufunc.nin, tuple(inputs[ufunc.nin:])
    if len(outs) > ufunc.nout:
        raise TypeError(f"{ufunc.__name__}() takes from {n} to {n + ufunc.nout} positional arguments but "
                        f"{len(inputs)} were given")
    if "out" in kwargs:
        raise TypeError("cannot specify 'out' as both a positional and keyword argument")
    if all(o is None for o in outs):  # numpy's default, spelled out
        return inputs[:n], kwargs
    if kwargs.get("where", True) is True:
        first = next(i for i, o in enumerate(outs) if o is not None)
        _no_out(_ufunc_name(ufunc), {"out": outs}, at=n + 1 + first, given=True)
    return inputs[:n], dict(kwargs, out=outs)


def _out_at(func):
    """The place of numpy's ``out`` among ``func``'s positional parameters, counted from 0
    (``np.sum``: 3, ``np.clip``: 3, ``np.dot``: 2), from numpy's signature, read once per
    function; a number no call reaches when ``out`` is keyword-only or absent."""
    at = _OUT_AT.get(func)
    if at is None:
        names = _positional_names(func)
        at = _OUT_AT[func] = names.index("out") if "out" in names else 1 << 30
    return at


def _positional_names(func):
    """The names of ``func``'s parameters that a call may give by position (numpy's
    ``inspect.signature``; none when it has no signature)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # (a C function without a text signature)
        return ()
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _positional_tail(func, args, kwargs):
    """``args, kwargs`` of ``np.<func>(*args, **kwargs)`` when the call reaches numpy's ``out``
    by position (``np.sum(t, None, None, buf)``, ``np.clip(t, 0, 1, t)``, ``np.max(t, 0, None,
    True)``): ``out`` and the arguments after it move to numpy's keywords, as the records take
    them (``np.max``'s record takes ``dtype`` third, where numpy takes ``out``); ``out=None``
    and numpy's "not given" (``np._NoValue``) are dropped.

    Raises
    ------
    TypeError
        ``out`` not None: :func:`~._common._no_out`, naming the positional argument (corpus37
        F1/F5); more positional arguments than numpy's signature takes, or one given both by
        position and keyword (numpy's errors).
    """
    names, at = _positional_names(func), _out_at(func)
    label = _label(func)
    if len(args) > len(names):
        raise TypeError(f"{func.__name__}() takes from 1 to {len(names)} positional arguments but "
                        f"{len(args)} were given")
    kwargs = dict(kwargs)
    for name, value in zip(names[at:], args[at:]):
        if name in kwargs:
            raise TypeError(f"{func.__name__}() got multiple values for argument {name!r}")
        if value is not np._NoValue:
            kwargs[name] = value
    _no_out(label, kwargs, at=at + 1, given=True)
    kwargs.pop("out", None)
    return tuple(args[:at]), kwargs


#: numpy function -> the place of its positional ``out`` (:func:`_out_at`)
_OUT_AT: dict = {}


def method_out(name, out=None, args=None):
    """Refuse numpy's ``out`` given to the Tensor method ``name`` (``t.sum(0, None, buf)``,
    ``t.any(0, buf)``), naming its place among the method's positional arguments after ``self``
    (``ndarray.<name>``'s, from numpy's signature: :func:`_out_at`), as the function path does.

    Parameters
    ----------
    name : str
        The method's name, an ``np.ndarray`` method taking ``out`` by position.
    out : object, optional
        The method's own ``out`` parameter, given by keyword or by position (the message names
        both spellings; ``None`` is numpy's default).
    args : tuple, optional
        The positional arguments after ``self`` of a method taking ``*args`` (``all``, ``any``):
        an ``out`` among them is named as given there.

    Raises
    ------
    TypeError
        :func:`~._common._no_out`'s, with the label ``Tensor.<name>``: the write into a user's
        buffer from a recorded call, whether or not the result has a gradient (``t.any(0, buf)``
        wrote into ``buf`` before).
    """
    at = _out_at(getattr(np.ndarray, name))  # (self is place 0: out's place among the method's arguments, from 1)
    if args is not None and len(args) >= at:
        _no_out(f"Tensor.{name}", {"out": args[at - 1]}, at=at, given=True)
    _no_out(f"Tensor.{name}", {"out": out}, at=at)


# a ufunc method's parameters after its array(s), in numpy's order (numpy's __array_ufunc__ hands
# them to dispatch_ufunc by keyword; the names' methods take them by position too)
_UFUNC_METHOD_ARGS = {
    "reduce": (1, ("axis", "dtype", "out", "keepdims", "initial", "where")),
    "accumulate": (1, ("axis", "dtype", "out")),
    "outer": (2, ()),
    "reduceat": (1, ("indices", "axis", "dtype", "out")),
    "at": (1, ("indices", "b")),
}


def _ufunc_method(f, method):
    """``anp.<ufunc>.<method>``: numpy's ``np.<ufunc>.<method>`` as numpy dispatches it on Tensors
    (:func:`dispatch_ufunc`: reduce, accumulate and outer recorded as the numpy function each
    computes, :func:`~.reductions.ufunc_method`; the others refused, naming what to write), with
    arrays and numbers accepted as by every ``autoprop.numpy`` name. ``at`` with no Tensor at all
    is numpy's own (in place into the array, as numpy)."""
    n_arrays, names = _UFUNC_METHOD_ARGS[method]

    def call(*args, **kwargs):
        if len(args) > n_arrays + len(names):
            raise TypeError(f"{f.__name__}.{method}() takes at most {n_arrays + len(names)} "
                            f"positional arguments ({len(args)} given)")
        inputs = args[:n_arrays]
        for name, value in zip(names, args[n_arrays:]):
            if name in kwargs:
                raise TypeError(f"{f.__name__}.{method}() got multiple values for argument {name!r}")
            kwargs[name] = value
        if kwargs.get("out", 0) is None:  # numpy's default, as numpy's protocol drops it
            del kwargs["out"]
        if method == "at":
            if not _holds_tensor(args) and not _holds_tensor(kwargs.values()):  # plain arrays: numpy's own
                for name in set(kwargs) - {"indices", "b"}:
                    raise TypeError(f"{f.__name__}.at() got an unexpected keyword argument {name!r}")
                return f.at(args[0], *(kwargs[n] for n in ("indices", "b") if n in kwargs))  # (in place)
            _add_at(f, args)
        if method == "reduceat":  # the indices are an argument of the method, not an input
            inputs = inputs + (kwargs.pop("indices"),) if "indices" in kwargs else inputs
        return dispatch_ufunc(f, method, inputs, kwargs)

    call.__name__ = method
    call.__qualname__ = f"{f.__name__}.{method}"
    call.__doc__ = (f"``numpy.{f.__name__}.{method}`` over Tensors (numpy's own dispatch: reduce, "
                    "accumulate and outer are recorded as the numpy function each computes, "
                    "``autoprop.core.prims.reductions.ufunc_method``).")
    return call


def _bind(func, args, kwargs):
    """``args, kwargs`` of ``np.<func>(...)`` with numpy's required parameters given by keyword
    (``np.linalg.inv(a=t)``, ``np.diag(v=t)``, ``np.linalg.solve(t, b=u)``) moved into ``args``,
    in numpy's order, as far as they follow the positional ones without a gap.

    The records take their arrays by position (a record reads its Tensors from ``args``; one
    with its Tensor in ``kwargs`` would call numpy again, which dispatches back) and name them
    freely (``_moved``'s ``a`` is numpy's ``v``, ``m``, ``x``), so numpy's own signature decides,
    read once per function (:func:`_required`). Optional parameters (``axis=``,
    ``weights=``) stay keywords, as the records take them.
    """
    names = _REQUIRED.get(func)
    if names is None:
        names = _REQUIRED[func] = _required(func)
    n = len(args)
    if n >= len(names) or names[n] not in kwargs:
        return args, kwargs
    args, kwargs = list(args), dict(kwargs)
    for name in names[n:]:
        if name not in kwargs:
            break
        args.append(kwargs.pop(name))
    return tuple(args), kwargs


def _required(func):
    """The names of ``func``'s leading parameters that have no default and may be given by
    position or keyword (numpy's ``inspect.signature``; none when it has no signature)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # (a C function without a text signature)
        return ()
    names = []
    for p in params:
        if p.kind is not p.POSITIONAL_OR_KEYWORD or p.default is not p.empty:
            break
        names.append(p.name)
    return tuple(names)


#: numpy function -> its required positional-or-keyword parameters' names (:func:`_required`)
_REQUIRED: dict = {}


#: the registry's owners whose functions compute on the values already (no Tensor wrapped)
_ON_VALUES = ("values only", "shape facts", "constants")


#: numpy functions that write into their first argument: the recorded way to build the result.
_IN_PLACE = {f: how for f, how in (
    (np.put, "t = np.where(np.isin(np.arange(t.size), ind).reshape(t.shape), new, t) with new "
             "holding the values at those flat positions (or np.concatenate of pieces)"),
    (np.place, "t = np.where(mask, new, t), new holding the values where mask is True"),
    (np.putmask, "t = np.where(mask, values, t)"),
    (np.copyto, "dst = np.where(where, src, dst) (or dst = src + np.zeros(dst.shape))"),
    (np.fill_diagonal, "t = np.where(np.eye(*t.shape, dtype=bool), value, t)"),
    (np.put_along_axis, "t = np.where(mask, new, t), with the mask and new values built by "
                        "np.put_along_axis on numpy arrays (no Tensor)"),
) if f is not None}

#: numpy names without a record, and the recorded functions that compute them.
_SUGGEST = {f: f"Recorded equivalent: {how}; or " for f, how in (
    (getattr(np, "geomspace", None), "np.exp(np.linspace(np.log(start), np.log(stop), num))"),
    (getattr(np, "logspace", None), "base ** np.linspace(start, stop, num)"),
) if f is not None}


def numpy_views(func, args, out):
    """``out`` of ``np.<func>(*args)`` on tensors, each result marked as the view numpy would give
    (a result that is an input tensor itself becomes a new recorded tensor, as numpy's new view)."""
    if type(out) is Tensor and getattr(out, "_view", None) is not None and not any(a is out for a in args):
        return out  # (a new tensor that tape.call's view check marked already)
    tensors = [a for a in args if isinstance(a, Tensor)]
    if func is np.imag and tensors and tensors[0].dtype.kind != "c":
        return out  # numpy's imag of a real array is a new array of zeros, not a view

    def one(o):
        if not isinstance(o, Tensor) or not tensors:
            return o
        base = next((a for a in tensors if a is o or np.may_share_memory(a._value, o._value)), tensors[0])
        if o is base:
            o = reshape(o, shape=o.shape)
        if getattr(o, "_view", None) is None:
            mark_view(o, base, f"numpy.{func.__name__}")
        return o
    return type(out)(one(o) for o in out) if isinstance(out, (list, tuple)) else one(out)
