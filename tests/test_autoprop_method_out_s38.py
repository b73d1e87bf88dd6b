"""numpy's ``out`` given to a Tensor method (issue 10, session 37's leftover of corpus37 F1).

``t.sum(0, None, buf)`` was refused in ``numpy.sum(..., out=...)``'s words (the function's, whose out is its 4th
argument); the message now names the method and out's place among its arguments, as the function path does.
``t.any(0, buf)`` was refused as numpy.any's 3rd positional argument, and ``t.any(0, out=buf)``, ``np.any(t, 0,
out=buf)`` and ``np.sum(int_t, out=buf)`` wrote into ``buf`` (numpy's own function on the values): refused the same
way. Every ``ndarray`` method whose numpy signature takes ``out`` by position is checked, its place read from numpy.
"""

import inspect
import re

import numpy as np
import pytest

import autoprop as ap


def _methods():
    """``(name, the positional arguments numpy's ndarray.<name> takes before out)`` for each Tensor method."""
    given = {"axis": None, "dtype": None, "min": 0.0, "max": 1.0, "indices": [0], "other": np.eye(2),
             "decimals": 0, "offset": 0, "axis1": 0, "axis2": 1}
    found = []
    for name in sorted(dir(np.ndarray)):
        try:
            params = inspect.signature(getattr(np.ndarray, name)).parameters.values()
        except (TypeError, ValueError):
            continue
        names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][1:]
        if "out" in names and hasattr(ap.Tensor, name):
            found.append((name, [given[n] for n in names[:names.index("out")]]))
    return found


METHODS = _methods()


def _ordinal(n):
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n, 'th')}"


def test_the_methods_are_numpys():
    assert {m for m, _ in METHODS} >= {"sum", "mean", "max", "min", "prod", "cumsum", "cumprod", "var", "std",
                                       "trace", "clip", "take", "all", "any", "argmax", "argmin", "round", "dot"}


@pytest.mark.parametrize("name, before", METHODS, ids=[m for m, _ in METHODS])
def test_a_methods_positional_out_is_refused_naming_its_place(name, before):
    x = ap.Variable([[0.25, -0.5], [0.75, 0.0]])
    value = getattr(x.numpy(), name)(*before)
    buf = np.full(np.shape(value), 7, dtype=np.asarray(value).dtype)
    place = _ordinal(len(before) + 1)
    with pytest.raises(TypeError, match=rf"autoprop cannot record Tensor\.{name}\(.*\b{place} positional argument"
                                        rf".*y = t\.{name}\(\.\.\.\)"):
        getattr(x, name)(*before, buf)
    with pytest.raises(TypeError, match=rf"Tensor\.{name}\(\.\.\., out=\.\.\.\)|{place} positional argument"):
        getattr(x, name)(*before, out=buf)
    np.testing.assert_array_equal(buf, np.full_like(buf, 7))
    np.testing.assert_array_equal(x.numpy(), [[0.25, -0.5], [0.75, 0.0]])
    got = getattr(x, name)(*before, None)  # numpy's default, spelled out
    np.testing.assert_array_equal(np.asarray(got.numpy() if isinstance(got, ap.Tensor) else got), value)


def test_any_and_all_write_into_no_buffer_by_either_spelling():
    for x in (ap.Variable([[1.0, 0.0], [0.0, 0.0]]), ap.constant([[True, False], [False, False]])):
        for name in ("any", "all"):
            buf = np.array([False, True])
            with pytest.raises(TypeError, match=re.escape(f"cannot record Tensor.{name}(...) with its 2nd positional "
                                                          "argument, which is numpy's out")):
                getattr(x, name)(0, buf)
            with pytest.raises(TypeError, match=re.escape(f"Tensor.{name}(..., out=...) (numpy's out, given as out= "
                                                          "or as its 2nd positional argument)")):
                getattr(x, name)(axis=0, out=buf)
            with pytest.raises(TypeError, match=re.escape(f"numpy.{name}(..., out=...): writing into an existing")):
                getattr(np, name)(x, 0, out=buf)
            np.testing.assert_array_equal(buf, [False, True])
        np.testing.assert_array_equal(np.asarray(x.any(0, None, True)), [[True, False]])  # keepdims after out=None


def test_a_numpy_function_on_integer_tensors_writes_into_no_buffer():
    buf = np.zeros((), np.int64)
    with pytest.raises(TypeError, match=re.escape("numpy.sum(..., out=...): writing into an existing array")):
        np.sum(ap.constant([1, 2]), out=buf)
    assert buf == 0
