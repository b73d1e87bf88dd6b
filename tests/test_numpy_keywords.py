"""Every documented keyword of every numpy function that dispatches to autoprop either
works (the same values as numpy on the raw arrays) or is refused by name: accepting an
option and ignoring it is a silently wrong number (issue 12 §3).

The functions are read from the dispatch table (so new records are covered without an
edit here); each gets the first sample input that numpy itself accepts, and each keyword
with a default is tried with the non-default values below that numpy accepts.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import autoprop as ap
from autoprop.core import registry as R
from autoprop.core.prims.extra import VALUES_ONLY

_r = np.random.default_rng(7)
_M = _r.uniform(0.5, 2.0, (3, 4))
_SQ = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])  # SPD, distinct eigenvalues
_V = _r.uniform(0.5, 2.0, 4)
_MASK = np.array([[True, False, True, True], [False, True, True, False], [True, True, False, True]])
for _a in (_M, _SQ, _V, _MASK):  # shared by every case: a numpy function that writes in place (np.copyto, np.put,
    _a.setflags(write=False)      # np.fill_diagonal, now named by autoprop) must not change the next cases' samples

#: sample argument lists, tried in order: the first one numpy accepts is used
CANDIDATES = [
    (_M,), (_SQ,), (_M, _M), (_SQ, _SQ), (_V,), (_M, _V), (_M, _M.T), ([_M, _M],), ([_SQ, _SQ],),
    (_M, (4, 3)), (_M, 1), (_M, 0, 1), (_M, 0.5), (_M, 0.7, 1.5), (_MASK, _M, _M), (_SQ, 2),
    (_M, np.array([[0, 2], [1, 1], [3, 0]])), (_M, ((1, 0), (0, 2))), ("ij,jk->ik", _M, _M.T),
    (_M, _M.T, 1), (_M, 2), (_SQ, _V[:3]), (_V, (3, 4)),
]

#: non-default values tried per keyword name
VALUES = {
    "axis": [0, 1, -1, (0, 1), None], "keepdims": [True], "dtype": [np.float32, np.float64],
    "where": [_MASK, {"where": _MASK, "initial": 3.0}], "initial": [0.5, 3.0], "order": ["F", "A", "K"], "ddof": [1],
    "correction": [1], "decimals": [1, 2], "k": [1, -1], "UPLO": ["U"], "rcond": [0.5, None],
    "rtol": [0.5], "atol": [0.5], "hermitian": [True], "full_matrices": [False],
    "compute_uv": [False], "upper": [True], "equal_nan": [True], "kind": ["stable"], "include_initial": [True],
    "stable": [True], "casting": ["unsafe", "no", "equiv"], "shape": [(4, 3), (12,)],
    "copy": [True, False], "optimize": [True, "greedy"], "ord": [1, 2, np.inf, "fro", "nuc", -1],
    "mode": ["reflect", "edge", "clip", "wrap", "r", "complete"], "subok": [True],
    "device": ["cpu"], "mean": [None], "n": [2], "axes": [1, ([1], [0]), ([1], [1]), (1, 0)],
    # the vocabulary's functions (clip, diff, cov, trace, cross, linspace, nan_to_num, ...)
    "a_min": [0.7], "a_max": [1.5], "min": [0.7], "max": [1.5], "append": [0.0, _M[:, :1]],
    "prepend": [0.0, _M[:, :1]], "aweights": [np.array([1.0, 2.0, 0.5, 3.0])],
    "fweights": [np.array([1, 2, 1, 3])], "bias": [True], "rowvar": [False], "y": [_M],
    "axis1": [{"axis1": 1, "axis2": 0}], "axis2": [{"axis1": 1, "axis2": 0}], "offset": [1, -1], "axisa": [0], "axisb": [0], "axisc": [0],
    "default": [1.5], "deg": [True], "edge_order": [2], "endpoint": [False], "num": [5], "retstep": [True],
    "indexing": ["ij"], "sparse": [True], "nan": [1.0], "posinf": [9.0], "neginf": [-9.0],
    "overwrite_input": [True], "returned": [True], "weights": [_r.uniform(0.5, 2.0, (3, 4))],
    "start": [1], "tol": [1000],
}
SKIP = {"out"}  # refused everywhere, tested in test_autoprop_options.py
# keywords of the session-19 records, each differentiated by its own family test (a value of each there)
TESTED_ELSEWHERE = dict.fromkeys(["N", "increasing", "cov", "full", "w", "method", "p"], "test_autoprop_vocab19.py")
TESTED_ELSEWHERE |= dict.fromkeys(["return_counts", "return_index", "return_inverse", "sorted", "bins", "range",
                                   "density", "writeable", "trim"], "test_autoprop_numpy_more.py")
TESTED_ELSEWHERE |= dict.fromkeys(["assume_unique", "return_indices"], "test_autoprop_vocab20.py")
TESTED_ELSEWHERE |= dict.fromkeys(["discont", "period", "m", "to_begin", "to_end"], "test_autoprop_polynomial.py")


def _values(x):
    if isinstance(x, ap.Tensor):
        return x._value
    if isinstance(x, (list, tuple)):  # namedtuple results (eigh, svd, ...) become tuples
        return [_values(v) for v in x] if isinstance(x, list) else tuple(_values(v) for v in x)
    return x


def _tensors(args):
    return [ap.constant(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
            else [ap.constant(v) for v in a] if isinstance(a, list) else a for a in args]


def _same(got, want):
    got, want = _values(got), want
    if isinstance(want, tuple) and hasattr(want, "_fields"):
        want = tuple(want)
    if isinstance(want, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(
            _same(g, w) for g, w in zip(got, want))
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        return False
    if w.dtype.kind in "fc":
        return g.dtype == w.dtype and np.allclose(g, w, rtol=1e-6, atol=1e-9, equal_nan=True)
    return np.array_equal(g, w)


def _sample(f):
    for args in CANDIDATES:
        try:
            with np.errstate(all="ignore"):
                f(*args)
        except Exception:  # noqa: BLE001 - numpy refuses this sample: try the next
            continue
        try:
            _ = f(*_tensors(args))
        except Exception:  # noqa: BLE001 - autoprop refuses the positional form
            continue
        return args
    return None


def _cases():
    out = []
    for f in sorted(R._FUNCTIONS, key=lambda f: (f.__module__, f.__name__)):
        try:
            params = inspect.signature(f).parameters.values()
        except (TypeError, ValueError):
            continue
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is inspect.Parameter.empty:
                continue
            if p.name in SKIP:
                continue
            out.append(pytest.param(f, p.name, id=f"{f.__module__}.{f.__name__}:{p.name}"))
    return out


@pytest.mark.parametrize("f, kw", _cases())
def test_every_documented_keyword_works_or_is_refused_by_name(f, kw):
    args = _sample(f)
    if args is None:
        pytest.skip(f"no sample input that both numpy and autoprop accept for {f.__name__}")
    tried = 0
    for value in VALUES.get(kw, []):
        kwargs = value if isinstance(value, dict) else {kw: value}  # a dict: with companions
        try:
            with np.errstate(all="ignore"):
                want = f(*args, **kwargs)
        except Exception:  # noqa: BLE001 - numpy refuses this value: nothing to compare
            continue
        tried += 1
        try:
            with np.errstate(all="ignore"):
                got = f(*_tensors(args), **kwargs)
        except (TypeError, ValueError, NotImplementedError) as exc:
            assert kw in str(exc), (
                f"numpy.{f.__name__}(..., {kw}={value!r}) was refused without naming {kw!r}: {exc}")
            continue
        if f is np.empty_like:  # numpy's values are undefined: the option shows in the dtype and shape
            got, want = np.zeros_like(got.numpy() if isinstance(got, ap.Tensor) else got), np.zeros_like(want)
        assert _same(got, want), (
            f"numpy.{f.__name__}(..., {kw}={value!r}) on Tensors differs from numpy: the option "
            f"was accepted and ignored (or computed wrongly)")
    if not tried:
        pytest.skip(f"no non-default value of {kw!r} that numpy accepts on the sample")


def test_the_keyword_table_covers_the_keywords_in_use():
    # a keyword with no values to try would be checked by nothing: list them here instead
    # a function whose result has no derivative (VALUES_ONLY: integers, booleans, text) has no keyword to differentiate
    names = {p.name for f in R._FUNCTIONS if f not in VALUES_ONLY for p in _params(f)
             if p.default is not inspect.Parameter.empty}
    untried = sorted(n for n in names - SKIP - set(TESTED_ELSEWHERE) if n not in VALUES)
    assert len(untried) <= 12, untried


def _params(f):
    try:
        return list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return []


# --- the derivatives of every accepted keyword (the gap the forward-only sweep left) ----------
# The sweep above compares values only, so an option the forward pass honours but the VJP or
# JVP does not know (np.linalg.cholesky(x, upper=True): the record ran, gradient() raised a
# TypeError) passed it. Here every keyword value that a record accepts is also
# differentiated: reverse mode and forward mode against central differences of numpy itself
# on the same arguments.
def _float_leaves(x):
    x = _values(x)
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _float_leaves(item)]
    a = np.asarray(x)
    return [a] if a.dtype.kind == "f" else []


def _weights(leaves):
    r = np.random.default_rng(11)
    return [r.uniform(-1.0, 1.0, a.shape) for a in leaves]


def _loss_np(f, args, kwargs, ws, i, xi):
    a = list(args)
    a[i] = xi
    with np.errstate(all="ignore"):
        return sum(float(np.sum(w * v)) for w, v in zip(ws, _float_leaves(f(*a, **kwargs))))




# a sample may pass a float array where numpy wants integers (np.roll's shift): converting
# it warns, rightly; the numbers are checked against central differences all the same
@pytest.mark.filterwarnings("ignore::autoprop.TapeEscapeWarning")
@pytest.mark.parametrize("f, kw", _cases())
def test_every_accepted_keyword_is_differentiated_right(f, kw):
    args = _sample(f)
    if args is None:
        pytest.skip(f"no sample input that both numpy and autoprop accept for {f.__name__}")
    tried = 0
    for value in VALUES.get(kw, []):
        kwargs = value if isinstance(value, dict) else {kw: value}
        try:
            with np.errstate(all="ignore"):
                want = f(*args, **kwargs)
            got = f(*_tensors(args), **kwargs)
        except Exception:  # noqa: BLE001 - refused (checked by name above) or numpy refuses
            continue
        ws = _weights(_float_leaves(want))
        if not ws or any(w.dtype != np.float64 for w in _float_leaves(want)):
            continue  # integer/bool results: no derivative; float32: too coarse to difference
        for i, a in enumerate(args):
            if not (isinstance(a, np.ndarray) and a.dtype.kind == "f"):
                continue
            ts = _tensors(args)
            h = 1e-6
            num = np.zeros_like(a)
            for j in np.ndindex(a.shape):
                e = np.zeros_like(a)
                e[j] = h
                num[j] = (_loss_np(f, args, kwargs, ws, i, a + e) - _loss_np(f, args, kwargs, ws, i, a - e)) / (2 * h)
            with ap.GradientTape() as tape:
                tape.watch(ts[i])
                got = _float_leaves_t(f(*ts, **kwargs))
                loss = sum(ap.sum(ap.constant(w) * v) for w, v in zip(ws, got))
            try:
                g = tape.gradient(loss, ts[i], unconnected_gradients="zero")
            except TypeError as exc:  # a float argument numpy reads as integers (np.roll's shift) left the tape
                # and the target is a constant: refused, as a target made of escaped values is (fn41), not zeros
                assert "the target is a constant Tensor" in str(exc) and not np.any(num), exc
                tried += 1
                continue
            except ValueError as exc:  # a derivative refused where it does not exist, by name
                assert kw in str(exc), (
                    f"{f.__module__}.{f.__name__}(..., {kw}={value!r}): gradient() failed without "
                    f"naming {kw!r}: {exc}")
                tried += 1
                continue
            np.testing.assert_allclose(g.numpy(), num, rtol=1e-5, atol=1e-6, err_msg=(
                f"{f.__module__}.{f.__name__}(..., {kw}={value!r}): the VJP of argument {i} is wrong"))
            u = np.random.default_rng(5).standard_normal(a.shape)
            with ap.ForwardAccumulator(ts[i], u) as acc:
                got = _float_leaves_t(f(*ts, **kwargs))
                loss = sum(ap.sum(ap.constant(w) * v) for w, v in zip(ws, got))
            jvp = acc.jvp(loss, unconnected_gradients="zero")
            assert float(np.sum(jvp.numpy())) == pytest.approx(float(np.sum(num * u)), rel=1e-5, abs=1e-6), (
                f"{f.__module__}.{f.__name__}(..., {kw}={value!r}): the JVP of argument {i} is wrong")
            tried += 1
    if not tried:
        pytest.skip(f"no differentiable accepted value of {kw!r} on the sample")


def _float_leaves_t(x):
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _float_leaves_t(item)]
    return [x] if isinstance(x, ap.Tensor) and x.dtype.kind == "f" else []
