"""numpy's ``out`` given by position (corpus37 F1, F1b, F5).

``anp.exp(x, x)``, ``anp.multiply(x, 3.0, x)``: numpy takes the arguments after a ufunc's
``nin`` inputs as its outputs. ``autoprop.numpy``'s names passed them to the record as inputs, so
the Tensor's buffer was written and a tape that had recorded it returned a wrong gradient
(x = [1, 2], y = sum(x * x), then anp.exp(x, x): [5.437, 14.778], true [2, 4]); on a tape
``anp.maximum(x, x * 0.01, x)`` crashed with an IndexError in ``_record``. Now a positional
out is numpy's ``out=``: refused, the message naming the positional argument. The same for the
numpy functions whose signature takes ``out`` by position (``np.sum(a, axis, dtype, out)``,
``np.clip(a, a_min, a_max, out)``, ``np.dot(a, b, out)``), through ``anp`` and numpy's protocol.
"""

import inspect
import re
import warnings

import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp
from autoprop.core import registry as R

UFUNCS = sorted(R._UFUNCS, key=lambda u: u.__name__)


def _ordinal(n):
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n, 'th')}"


def _refusal(n):
    return rf"with its {_ordinal(n)} positional argument, which is numpy's out: writing into an existing array"


def _loop(u):
    """A loop of ``u`` over float64 and int64 only (float64 first): its input and output chars."""
    for kinds in ("d", "dl", "l"):
        for t in u.types:
            ins, outs = t.split("->")
            if set(ins) <= set(kinds) and (kinds != "dl" or "d" in ins):
                return ins, outs
    raise AssertionError(f"{u.__name__}: no float64/int64 loop in {u.types}")


def _inputs(u, make):
    ins, outs = _loop(u)
    cores = re.findall(r"\(([^)]*)\)", u.signature.split("->")[0]) if u.signature else ["n"] * u.nin
    shapes = [(2,) * max(1, len([d for d in core.split(",") if d])) for core in cores]  # (vecmat's (n),(n,m))
    vals = [np.resize([0.25, 0.5], s) if c == "d" else np.resize([1, 2], s) for c, s in zip(ins, shapes)]
    return [make(v) if c == "d" else ap.constant(v) for v, c in zip(vals, ins)], outs


@pytest.mark.parametrize("kind", ["Variable", "constant"])
@pytest.mark.parametrize("u", UFUNCS, ids=lambda u: u.__name__)
def test_every_registered_ufunc_refuses_its_positional_out_and_writes_nothing(u, kind):
    make = ap.Variable if kind == "Variable" else ap.constant
    inputs, outs = _inputs(u, make)
    first = inputs[0]
    # the in-place pattern when the output's dtype is the first input's, else a Tensor of the output's dtype
    out = first if np.dtype(outs[0]) == first.dtype else ap.constant(np.zeros(2, np.dtype(outs[0])))
    before = first.numpy().copy(), out.numpy().copy()
    f = R.numpy_name(u)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(first)
        y = (first * first).sum() if first.dtype.kind == "f" else None
        with pytest.raises(TypeError, match=_refusal(u.nin + 1)):
            f(*inputs, out)
    np.testing.assert_array_equal(first.numpy(), before[0])
    np.testing.assert_array_equal(out.numpy(), before[1])
    if y is not None:  # the tape's gradient of the earlier sum(x * x) is still 2x (exact: one product)
        np.testing.assert_array_equal(tape.gradient(y, first).numpy(), 2 * before[0])
    if u.nout == 2:  # the second output given alone: the (nin + 2)th positional argument
        with pytest.raises(TypeError, match=_refusal(u.nin + 2)):
            f(*inputs, None, out)


@pytest.mark.parametrize("u", UFUNCS, ids=lambda u: u.__name__)
def test_a_positional_out_of_none_is_numpys_default(u):
    inputs, _ = _inputs(u, ap.Variable)
    f = R.numpy_name(u)
    with np.errstate(all="ignore"):
        want, got = f(*inputs), f(*inputs, *(None,) * u.nout)
    want, got = ((want,), (got,)) if u.nout == 1 else (want, got)
    for w, g in zip(want, got, strict=True):  # (logical_xor's and frexp's int part: numpy's own arrays)
        np.testing.assert_array_equal(np.asarray(g.numpy() if isinstance(g, ap.Tensor) else g),
                                      np.asarray(w.numpy() if isinstance(w, ap.Tensor) else w))


def test_corpus37_exp_after_and_inside_a_tape_keeps_the_gradient():
    x = ap.Variable([1.0, 2.0], name="x")
    with ap.GradientTape() as t:
        y = anp.sum(x * x)
    with pytest.raises(TypeError, match=_refusal(2)):
        anp.exp(x, x)
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [2.0, 4.0])  # before: [5.437, 14.778]
    c, w = ap.constant([3.0, 4.0]), ap.Variable([1.0, 2.0], name="w")
    with ap.GradientTape() as t:
        y = anp.sum(w * c)
        with pytest.raises(TypeError, match=_refusal(2)):
            anp.exp(c, c)
    np.testing.assert_array_equal(t.gradient(y, w).numpy(), [3.0, 4.0])  # before: [20.09, 54.60]
    for call in (lambda: anp.multiply(x, 3.0, x), lambda: anp.add(x, 1.0, x)):
        with pytest.raises(TypeError, match=_refusal(3)):
            call()
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])


def test_corpus37_f1b_on_a_tape_the_refusal_not_an_internal_crash():
    z = ap.Variable([[-1.0, 2.0]], name="z")
    buf = np.zeros((1, 2))
    with ap.GradientTape():  # kwj2104's lrelu under `import autoprop.numpy as np`: IndexError in _record before
        with pytest.raises(TypeError, match=_refusal(3)):
            anp.maximum(z, z * 0.01, z)
        with pytest.raises(TypeError, match=_refusal(2)):  # before: ran, then tape.gradient's TypeError
            anp.exp(z, buf)
    np.testing.assert_array_equal(buf, [[0.0, 0.0]])
    np.testing.assert_array_equal(z.numpy(), [[-1.0, 2.0]])


def test_a_positional_out_with_where_is_numpys_masked_write_as_out_keyword():
    x, mask = ap.Variable([[1.0, 4.0]]), np.array([[True, False]])
    b1, b2 = np.full((1, 2), 7.0), np.full((1, 2), 7.0)
    with ap.GradientTape(persistent=True) as t:
        by_place = anp.sum(anp.divide(x, 2.0, b1, where=mask))
        by_name = anp.sum(anp.divide(x, 2.0, out=b2, where=mask))
    assert by_place.numpy() == by_name.numpy() == 7.5
    np.testing.assert_array_equal(b1, [[0.5, 7.0]])
    np.testing.assert_array_equal(t.gradient(by_place, x).numpy(), [[0.5, 0.0]])
    np.testing.assert_array_equal(t.gradient(by_name, x).numpy(), [[0.5, 0.0]])


def test_numpy_errors_for_too_many_positional_outputs_or_out_given_twice():
    x = ap.Variable([1.0, 2.0])
    with pytest.raises(TypeError, match=r"exp\(\) takes from 1 to 2 positional arguments but 3 were given"):
        anp.exp(x, None, None)
    with pytest.raises(TypeError, match="cannot specify 'out' as both a positional and keyword argument"):
        anp.exp(x, None, out=None)


def test_f5_numpys_protocol_names_the_positional_place_too():
    x = ap.Variable([[-1.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (numpy's: a 3rd argument of np.maximum)
        with pytest.raises(TypeError, match=r"numpy\.maximum\(\.\.\., out=\.\.\.\) \(numpy's out, given as "
                                            r"out= or as its 3rd positional argument\)"):
            np.maximum(x, x * 0.01, x)
    with pytest.raises(TypeError, match=r"given as out= or as its 2nd positional argument"):
        np.exp(x, x)
    np.testing.assert_array_equal(x.numpy(), [[-1.0, 2.0]])


def _positional_out_functions():
    """(numpy function, out's place from 0) for every registered numpy function whose signature
    takes ``out`` by position."""
    found = []
    for f in R._FUNCTIONS:
        names = [p.name for p in inspect.signature(f).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if "out" in names:
            found.append((f, names))
    return sorted(found, key=lambda fn: f"{fn[0].__module__}.{fn[0].__name__}")


FUNCS = _positional_out_functions()


def _before_out(f, names, t):
    """Arguments for ``f``'s positional parameters before ``out``: ``t`` as the array(s), numpy's
    defaults for the options, a value where numpy requires one."""
    given = {"a_min": 0.0, "a_max": 1.0, "q": 0.5, "indices": [0], "condition": [True, False, True],
             "choices": [t, t], "b": t, "x": t, "a": t, "arrays": [t, t]}
    if f in (np.concatenate,):
        given["a"] = [t, t]
    if f is np.choose:
        given["a"] = [0, 1, 0]
    if f in (np.percentile, np.nanpercentile):
        given["q"] = 50.0
    params = inspect.signature(f).parameters
    args = []
    for name in names[:names.index("out")]:
        if name in given:
            args.append(given[name])
        elif params[name].default is np._NoValue:
            args.append(None)
        else:
            args.append(params[name].default)
    return args


@pytest.mark.parametrize("f,names", FUNCS, ids=lambda v: v.__name__ if callable(v) else "")
@pytest.mark.parametrize("spelling", ["anp", "numpy"])
def test_every_registered_function_refuses_its_positional_out(f, names, spelling):
    t = ap.Variable([0.25, 0.5, 0.75])
    before = t.numpy().copy()
    args = _before_out(f, names, t)
    call = getattr(anp, f.__name__) if f.__module__ == "numpy" and spelling == "anp" else f
    if spelling == "anp" and f.__module__ != "numpy":
        call = getattr(getattr(anp, f.__module__.split(".")[1]), f.__name__)
    with pytest.raises(TypeError, match=rf"autoprop cannot record {re.escape(f.__module__)}\.\w+\(\.\.\.\) "
                                        + _refusal(len(args) + 1)):
        call(*args, t)
    np.testing.assert_array_equal(t.numpy(), before)


@pytest.mark.parametrize("f,args", [
    (np.max, (0, None, True)), (np.min, (0, None, True)), (np.amax, (0, None, True)),
    (np.sum, (0, None, None, True)), (np.mean, (1, None, None, True)), (np.std, (0, None, None, 1, True)),
    (np.take, ([0, 5], 1, None, "clip")), (np.median, (0, None, False, True)), (np.argmax, (1, None)),
    (np.cumsum, (1, None, None)), (np.clip, (1.0, 3.0, None)), (np.dot, (np.ones((3, 2)), None)),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_options_after_a_positional_out_of_none_mean_numpys_options(f, args):
    # np.max(x, 0, None, True): numpy's out=None, keepdims=True; the record took None as dtype and True as out
    v = np.arange(6.0).reshape(2, 3)
    want = f(v, *args)
    for call in (getattr(anp, f.__name__), f):
        got = call(ap.Variable(v), *args)
        got = got.numpy() if isinstance(got, ap.Tensor) else np.asarray(got)
        assert got.shape == np.shape(want)
        np.testing.assert_array_equal(got, want)
