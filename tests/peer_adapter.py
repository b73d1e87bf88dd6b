"""HIPS autograd's public API over autoprop: the adapter that runs autograd's own test
files against autoprop (tests/test_autoprop_peer.py).

Loaded as a pytest plugin (``-p peer_adapter``) in a child pytest process, it puts
stand-in modules under autograd's names into ``sys.modules`` before the downloaded
test files are imported, so ``import autograd.numpy as np`` and ``from autograd import
grad`` reach autoprop, never the real autograd (installed in the venv as the oracle of
the other tests). Nothing is installed when this module is merely imported (the main
suite imports it for its doctests).

Written from autograd's documented API, no code copied:

* ``grad(fun, argnum=0)``, ``value_and_grad``, ``elementwise_grad``, ``jacobian``: a
  GradientTape watches argument ``argnum`` (an int or a tuple of ints); called inside
  another of these (nested: higher-order derivatives) they return the Tensor, recorded
  by the outer tape, else a numpy array, as autograd.
* ``check_grads(fun, argnum=0, modes=("fwd", "rev"), order=2)(*args)``: the reverse
  mode ``<u, VJP(v)>`` and the forward mode ``<JVP(u), w>`` against a central
  difference of step 1e-6 along a random direction (autograd's tolerance: absolute or
  relative 1e-6), and for ``order > 1`` the same checks of the maps ``(x, v) -> VJP``
  and ``(x, u) -> JVP`` (reverse-over-reverse, forward-over-reverse, ...).
* ``combo_check(fun, argnums, **kw)(*arg_lists, **kw_lists)``: ``check_grads`` over
  every combination.
* ``deriv(fun)``: forward mode along a tangent of ones; ``holomorphic_grad``: complex input
  (counted "complex", below); ``grad`` of a complex output raises TypeError, as autograd.
* ``autograd.numpy``: numpy itself for plain values; a call with a Tensor anywhere in
  its arguments goes to :mod:`autoprop.numpy` (or to numpy's function, which dispatches
  to autoprop through ``__array_function__``); plus autograd's own ``make_diagonal``, and
  ``autograd.numpy.linalg``'s helpers ``T`` (a batched transpose) and ``_dot``.
* ``autograd.scipy``: ``special``, ``linalg``, ``stats`` and ``signal`` are scipy's modules
  routed to :mod:`autoprop.scipy`'s twins for Tensors (scipy's ufuncs dispatch to autoprop by
  themselves; autograd's own ``convolve(..., axes=, dot_axes=)`` is not scipy's signature);
  ``integrate``, of which autoprop has no twin, gives plain values scipy's answer and refuses
  a Tensor with NotImplementedError naming the function.

The checks' random directions for a complex output are complex, and the inner product is
``sum(Re(conj(a) b))`` (autograd's), so the imaginary part of a derivative is checked too.

Complex numbers: autoprop differentiates real functions. A check or derivative whose
input is complex is not run: it counts as "complex" and, if no real check ran in that
test before it, the test is skipped with the reason ``"complex input"`` (the peer test
excludes those from the pass rate).
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import sys
import types

import numpy as onp

import autoprop as ap
import autoprop.numpy as anp
from autoprop.core.tensor import Tensor

TOL = RTOL = 1e-6
EPS = 1e-6

_state = {"depth": 0, "real_checks": 0, "complex": 0}


class ComplexInput(Exception):
    """A derivative asked at a complex point (excluded from the pass rate)."""


# --- values and vector spaces (arrays, scalars, and tuples of them) -----------------------
def _has_tensor(x):
    if isinstance(x, Tensor):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_tensor(a) for a in x)
    if isinstance(x, dict):
        return any(_has_tensor(a) for a in x.values())
    return False


def _val(x):
    """Plain numpy values of a result (Tensors unwrapped, tuples kept)."""
    if isinstance(x, Tensor):
        return x.numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_val(a) for a in x)
    return onp.asarray(x)


def _is_complex(x):
    if isinstance(x, (list, tuple)):
        return any(_is_complex(a) for a in x)
    return onp.iscomplexobj(x._value if isinstance(x, Tensor) else x)


def _randn_like(x, complex_ok=False):
    """A random direction shaped as ``x``; with ``complex_ok``, complex where ``x`` is (so both
    the real and the imaginary parts of a complex output are checked)."""
    def draw(a):
        v = onp.random.randn(*onp.shape(_val(a)))
        if complex_ok and _is_complex(a):
            v = v + 1j * onp.random.randn(*onp.shape(_val(a)))
        return v
    return _unflat(x, [draw(a) for a in _flat(x)])


def _inner(a, b):
    """The real inner product ``sum(Re(conj(a) b))`` (autograd's, for complex vector spaces):
    with a complex direction ``v``, ``<v, dy>`` reads the real and the imaginary parts of dy;
    the tape reads a complex output gradient the same way (``Re(conj(g) dy)``)."""
    return sum(float(onp.sum(onp.real(onp.conj(onp.asarray(_val(p))) * onp.asarray(_val(q)))))
               for p, q in zip(_flat(a), _flat(b)))


def _axpy(alpha, v, x):
    """x + alpha v, leaf by leaf (plain values)."""
    return _unflat(x, [onp.asarray(_val(p), dtype=float) + alpha * onp.asarray(_val(q), dtype=float)
                       for p, q in zip(_flat(x), _flat(v))])


def _as_tensor(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_as_tensor(a) for a in x)
    if isinstance(x, Tensor):
        return x
    v = onp.asarray(x)
    return ap.constant(v if v.dtype.kind == "f" else v.astype(float))


def _flat(x):
    """The leaves of a nest of tuples and lists (autograd's tuple vector spaces)."""
    if isinstance(x, (list, tuple)):
        return [leaf for a in x for leaf in _flat(a)]
    return [x]


def _unflat(x, parts):
    """``parts`` (leaves) nested as ``x``."""
    it = iter(parts)

    def build(node):
        if isinstance(node, (list, tuple)):
            return type(node)(build(a) for a in node)
        return next(it)
    return build(x)


def _result(t):
    """A Tensor back to the caller: kept inside a differentiation, numpy values outside."""
    if _state["depth"] > 0:
        return t
    return _val(t)


def _call(fun, X):
    _state["depth"] += 1
    try:
        return fun(X)
    finally:
        _state["depth"] -= 1


def _zeros_where_none(grads, X):
    return [anp.zeros_like(x) if g is None else g for g, x in zip(grads, _flat(X))]


def make_vjp(fun, x):
    """(vjp, y): ``vjp(v)`` is the reverse-mode product of ``v`` with fun's Jacobian at x
    (``x``, ``y`` and ``v`` may be nests of tuples)."""
    if _is_complex(x):
        raise ComplexInput
    X = _as_tensor(x)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(_flat(X))
        y = _call(fun, X)

    def vjp(v):
        pairs = [(t, w) for t, w in zip(_flat(y), _flat(v)) if isinstance(t, Tensor)]
        if not pairs:  # a constant function
            return _unflat(X, [anp.zeros_like(a) for a in _flat(X)])
        ts = [t for t, _ in pairs]
        ws = [w if isinstance(w, Tensor) else onp.broadcast_to(_numeric(w), t.shape)
              for t, w in pairs]
        g = tape.gradient(ts, _flat(X), output_gradients=ws)
        return _unflat(X, _zeros_where_none(g, X))

    return vjp, y


def make_jvp(fun, x):
    """``jvp(u) -> (y, J u)``: forward mode (autoprop's ForwardAccumulator)."""
    if _is_complex(x):
        raise ComplexInput
    X = _as_tensor(x)

    def jvp(u):
        us = [a if isinstance(a, Tensor) else onp.asarray(a, dtype=float) for a in _flat(u)]
        with ap.ForwardAccumulator(_flat(X), us) as acc:
            y = _call(fun, X)
        leaves = [acc.jvp(t, unconnected_gradients="zero") if isinstance(t, Tensor)
                  else onp.zeros(onp.shape(t)) for t in _flat(y)]
        return y, _unflat(y, leaves)

    return jvp


# --- autograd's differential operators -------------------------------------------------
def _nary(unary):
    """``op(fun, argnum=0, ...)(*args, **kwargs)``: differentiate with respect to the
    argument(s) ``argnum`` (autograd's calling convention)."""
    @functools.wraps(unary)
    def op(fun, argnum=0, *op_args, **op_kwargs):
        @functools.wraps(fun)
        def nary(*args, **kwargs):
            nums = (argnum,) if isinstance(argnum, int) else tuple(argnum)

            def unary_f(x):
                sub = list(args)
                for i, v in zip(nums, (x,) if isinstance(argnum, int) else x):
                    sub[i] = v
                return fun(*sub, **kwargs)

            x = args[argnum] if isinstance(argnum, int) else tuple(args[i] for i in argnum)
            return unary(unary_f, x, *op_args, **op_kwargs)
        return nary
    return op


def _grad_or_complex(unary):
    def run(fun, x, *a, **k):
        if _is_complex(x):
            _note_complex()
        return unary(fun, x, *a, **k)
    run.__name__ = unary.__name__
    return run


@_nary
@_grad_or_complex
def grad(fun, x):
    """The gradient of a scalar-valued ``fun`` with respect to argument ``argnum``."""
    vjp, y = make_vjp(fun, x)
    if onp.size(_val(y)) != 1:
        raise TypeError(f"grad requires a scalar-valued function; got shape {onp.shape(_val(y))}")
    if _is_complex(y):  # autograd: "Grad only applies to real scalar-output functions"
        raise TypeError("grad requires a real scalar-valued function; got a complex output "
                        "(autograd's holomorphic_grad is for those)")
    return _result(vjp(onp.ones(onp.shape(_val(y)))))


@_nary
@_grad_or_complex
def deriv(fun, x):
    """The forward-mode derivative along a tangent of ones (autograd's ``deriv``: the
    derivative of a scalar function of a scalar, elementwise for elementwise functions)."""
    return _result(make_jvp(fun, x)(onp.ones(onp.shape(_val(x))))[1])


def holomorphic_grad(fun, argnum=0):
    """autograd's gradient of a holomorphic function at a complex point: complex input,
    which autoprop's real-function tests exclude (counted "complex", as ``check_grads``)."""
    def run(*args, **kwargs):
        _note_complex()
    return run


@_nary
@_grad_or_complex
def value_and_grad(fun, x):
    """(fun(x), grad(fun)(x))."""
    vjp, y = make_vjp(fun, x)
    return _result(y), _result(vjp(onp.ones(onp.shape(_val(y)))))


@_nary
@_grad_or_complex
def elementwise_grad(fun, x):
    """The VJP with a vector of ones: the derivative of each output element with respect
    to the matching input element, for elementwise functions."""
    vjp, y = make_vjp(fun, x)
    return _result(vjp(onp.ones(onp.shape(_val(y)))))


@_nary
@_grad_or_complex
def jacobian(fun, x):
    """The Jacobian, shape ``fun(x).shape + x.shape``: one VJP per output element."""
    vjp, y = make_vjp(fun, x)
    ys = onp.shape(_val(y))
    rows = []
    for k in range(int(onp.prod(ys))):
        e = onp.zeros(int(onp.prod(ys)))
        e[k] = 1.0
        rows.append(vjp(e.reshape(ys)))
    xs = onp.shape(_val(x))
    if not rows:
        return onp.zeros(ys + xs)
    if any(isinstance(r, Tensor) for r in rows) and _state["depth"] > 0:
        return anp.reshape(anp.stack(rows), ys + xs)
    return onp.stack([_val(r) for r in rows]).reshape(ys + xs)


# --- check_grads: derivatives against central differences ------------------------------
def _close(a, b):
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def _numerical_jvp(fun, x, u):
    plus = _val(fun(_axpy(EPS / 2, u, x)))
    minus = _val(fun(_axpy(-EPS / 2, u, x)))
    return _unflat(plus, [(_numeric(p) - _numeric(m)) / EPS for p, m in zip(_flat(plus), _flat(minus))])


def _numeric(a):
    """A value as a float or complex array (integers and booleans as floats)."""
    a = onp.asarray(a)
    return a if a.dtype.kind in "fc" else a.astype(float)


def _note_complex():
    _state["complex"] += 1
    if _state["real_checks"] == 0:
        import pytest

        pytest.skip("complex input")
    raise ComplexInput


def _check_vjp(fun, x):
    vjp, y = make_vjp(fun, x)
    u, v = _randn_like(x), _randn_like(_val(y), complex_ok=True)
    exact = _inner(u, vjp(v))
    numeric = _inner(v, _numerical_jvp(fun, x, u))
    assert _close(numeric, exact), (
        f"VJP check of {getattr(fun, '__name__', fun)} failed at {x}:\n"
        f"analytic {exact}\nnumeric  {numeric}")


def _check_jvp(fun, x):
    u = _randn_like(x)
    _, jv = make_jvp(fun, x)(u)
    w = _randn_like(_val(jv), complex_ok=True)
    exact, numeric = _inner(w, jv), _inner(w, _numerical_jvp(fun, x, u))
    assert _close(numeric, exact), (
        f"JVP check of {getattr(fun, '__name__', fun)} failed at {x}:\n"
        f"analytic {exact}\nnumeric  {numeric}")


def _check_grads(fun, x, modes=("fwd", "rev"), order=2):
    assert all(m in ("fwd", "rev") for m in modes), modes
    if _is_complex(x):
        try:
            _note_complex()
        except ComplexInput:
            return
    if "fwd" in modes:
        _check_jvp(fun, x)
        if order > 1:
            def jvp_f(x, u):
                return make_jvp(fun, x)(u)[1]
            jvp_f.__name__ = f"jvp_{getattr(fun, '__name__', 'f')}"
            check_grads(jvp_f, (0, 1), modes, order=order - 1)(x, _randn_like(x))
    if "rev" in modes:
        _check_vjp(fun, x)
        if order > 1:
            def vjp_f(x, v):
                return make_vjp(fun, x)[0](v)
            vjp_f.__name__ = f"vjp_{getattr(fun, '__name__', 'f')}"
            check_grads(vjp_f, (0, 1), modes, order=order - 1)(x, _randn_like(_val(fun(x))))
    _state["real_checks"] += 1


check_grads = _nary(_check_grads)


def combo_check(fun, *args, **kwargs):
    """``check_grads`` over every combination of the listed arguments and keywords."""
    def run(*arg_lists, **kw_lists):
        keyed = [[(k, v) for v in vs] for k, vs in kw_lists.items()]
        for combo in itertools.product(*arg_lists):
            for kws in itertools.product(*keyed):
                check_grads(functools.partial(fun, **dict(kws)), *args, **kwargs)(*combo)
    return run


# --- autograd.numpy: numpy for plain values, autoprop for Tensors -----------------------
def _routed(name, np_fn, ap_ns):
    ap_fn = getattr(ap_ns, name, None) if ap_ns is not None else None

    @functools.wraps(np_fn)
    def fn(*args, **kwargs):
        if ap_fn is not None and (_has_tensor(args) or _has_tensor(kwargs)):
            return ap_fn(*args, **kwargs)
        return np_fn(*args, **kwargs)
    return fn


class _RoutedIndex:
    """``np.r_[...]``-style objects: autoprop's for Tensors, numpy's otherwise."""

    def __init__(self, np_obj, ap_obj):
        self.np_obj, self.ap_obj = np_obj, ap_obj

    def __getitem__(self, key):
        return (self.ap_obj if _has_tensor(key) else self.np_obj)[key]


class _Stand(types.ModuleType):
    """A module whose attributes are numpy's (``np_mod``), routed to ``ap_ns`` for Tensors."""

    def __init__(self, name, np_mod, ap_ns):
        super().__init__(name)
        self.__dict__["_np"], self.__dict__["_ap"] = np_mod, ap_ns

    def __getattr__(self, name):
        obj = getattr(self._np, name)
        if callable(obj) and not isinstance(obj, type):
            obj = _routed(name, obj, self._ap)
        elif hasattr(obj, "__getitem__") and getattr(self._ap, name, obj) is not obj:  # np.r_, np.c_
            # (autoprop.numpy's own object: every other name it gives is numpy's, np.float64 too)
            obj = _RoutedIndex(obj, getattr(self._ap, name))
        self.__dict__[name] = obj
        return obj


def make_diagonal(D, offset=0, axis1=0, axis2=1):
    """autograd's own ``np.make_diagonal`` (numpy has none): ``D`` (..., n) -> (..., n, n)
    with ``D`` on the diagonal of the last two axes, the only case autograd implements
    (``offset=0, axis1=-1, axis2=-2``; others raise ``NotImplementedError``, as there).
    Written as ``D[..., None] * eye(n)``: autoprop ops for a Tensor, numpy's otherwise."""
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise NotImplementedError("make_diagonal: only offset=0, axis1=-1, axis2=-2 (as autograd)")
    n = onp.shape(_val(D))[-1]
    ns = anp if _has_tensor(D) else onp
    return ns.multiply(ns.expand_dims(D, -1), onp.eye(n))


def _T(x):
    """autograd.numpy.linalg's ``T``: the last two axes swapped (a batched transpose)."""
    return (anp if _has_tensor(x) else onp).swapaxes(x, -1, -2)


def _dot(a, b):
    """autograd.numpy.linalg's ``_dot``: ``einsum('...ij,...jk->...ik', a, b)``."""
    return (anp if _has_tensor((a, b)) else onp).einsum("...ij,...jk->...ik", a, b)


class _Unclaimed:
    """A scipy object (``scipy.stats.norm``, ``scipy.signal.convolve``, ...) of which autoprop
    has no twin: plain values go to scipy; a Tensor argument raises NotImplementedError naming
    it (called on a Tensor, scipy's Python code would take its values off the tape)."""

    def __init__(self, obj, path):
        self._obj, self._path = obj, path

    def __getattr__(self, name):
        return _Unclaimed(getattr(self._obj, name), f"{self._path}.{name}")

    def __call__(self, *args, **kwargs):
        if _has_tensor(args) or _has_tensor(kwargs):
            raise NotImplementedError(f"autoprop has no twin of {self._path} (autograd's "
                                      f"autograd.{self._path}); it is not differentiated here")
        return self._obj(*args, **kwargs)


class _RoutedObject:
    """A scipy object with methods (``scipy.stats.norm``): a method autoprop's twin ``ap_obj`` has
    goes there for Tensors and to scipy for plain values; the others are :class:`_Unclaimed`."""

    def __init__(self, obj, ap_obj, path):
        self._obj, self._ap, self._path = obj, ap_obj, path

    def __getattr__(self, name):
        if name in getattr(self._ap, "_methods", {}):
            return _routed(name, getattr(self._obj, name), self._ap)
        return _Unclaimed(getattr(self._obj, name), f"{self._path}.{name}")


def _unclaimed_module(name, scipy_name):
    """A module ``name`` over scipy's module or object ``scipy_name`` (``scipy.stats``,
    ``scipy.stats.multivariate_normal``), its attributes :class:`_Unclaimed`."""
    import importlib

    mod = types.ModuleType(name)
    mod.__path__ = []
    head, _, tail = scipy_name.partition(".stats.")
    real = importlib.import_module(head if tail else scipy_name)
    real = getattr(importlib.import_module("scipy.stats"), tail) if tail else real
    mod.__getattr__ = lambda attr: _Unclaimed(getattr(real, attr), f"{scipy_name}.{attr}")
    return mod


def _stats_module(name, real, twins):
    """``autograd.scipy.stats`` (or its ``multivariate_normal``): the distributions autoprop.scipy.stats
    twins are :class:`_RoutedObject`; a module ``twins`` of one distribution routes its methods."""
    mod = types.ModuleType(name)
    mod.__path__ = []

    def attr(a):
        if hasattr(twins, "_methods"):  # (the module stands for one distribution)
            return getattr(_RoutedObject(real, twins, f"scipy.stats.{twins._name}"), a)
        twin = getattr(twins, a, None)
        path = f"scipy.stats.{a}"
        return _RoutedObject(getattr(real, a), twin, path) if twin is not None else _Unclaimed(getattr(real, a), path)
    mod.__getattr__ = attr
    return mod


def _scipy_modules():
    """autograd.scipy's modules: ``special``, ``linalg``, ``stats`` and ``signal`` are scipy's,
    routed to :mod:`autoprop.scipy`'s twins for Tensors (scipy's ufuncs dispatch to autoprop by
    themselves); ``integrate`` (and stats' untwinned names), of which autoprop has no twin,
    answer plain values and refuse Tensors (:class:`_Unclaimed`)."""
    import scipy.linalg
    import scipy.special

    import autoprop.scipy as aps

    mods = {"autograd.scipy": types.ModuleType("autograd.scipy"),
            "autograd.scipy.special": _Stand("autograd.scipy.special", scipy.special, aps.special),
            "autograd.scipy.linalg": _Stand("autograd.scipy.linalg", scipy.linalg, aps.linalg)}
    import scipy.signal
    import scipy.stats

    mods["autograd.scipy.signal"] = _Stand("autograd.scipy.signal", scipy.signal, aps.signal)
    mods["autograd.scipy.integrate"] = _unclaimed_module("autograd.scipy.integrate", "scipy.integrate")
    mods["autograd.scipy.stats"] = _stats_module("autograd.scipy.stats", scipy.stats, aps.stats)
    mods["autograd.scipy.stats.multivariate_normal"] = _stats_module(
        "autograd.scipy.stats.multivariate_normal", scipy.stats.multivariate_normal, aps.stats.multivariate_normal)
    mods["autograd.scipy"].__path__ = []
    for full, mod in mods.items():
        parent, _, leaf = full.rpartition(".")
        if parent in mods:
            setattr(mods[parent], leaf, mod)
    return mods


def install():
    """Put the stand-ins under autograd's module names (sys.modules)."""
    pkg = types.ModuleType("autograd")
    pkg.__file__ = __file__
    pkg.__path__ = []
    numpy_mod = _Stand("autograd.numpy", onp, anp)
    numpy_mod.__path__ = []
    random_mod = _Stand("autograd.numpy.random", onp.random, None)
    linalg_mod = _Stand("autograd.numpy.linalg", onp.linalg, getattr(anp, "linalg", None))
    numpy_mod.__dict__.update(random=random_mod, linalg=linalg_mod, make_diagonal=make_diagonal)
    linalg_mod.__dict__.update(T=_T, _dot=_dot)
    test_util = types.ModuleType("autograd.test_util")
    test_util.__dict__.update(check_grads=check_grads, combo_check=combo_check)
    for op in (grad, value_and_grad, elementwise_grad, jacobian, deriv, holomorphic_grad):
        setattr(pkg, op.__name__, op)
    pkg.numpy, pkg.test_util = numpy_mod, test_util
    pkg.tuple = tuple  # autograd's differentiable tuple: a tape differentiates a plain one
    sys.modules.update({
        "autograd": pkg, "autograd.numpy": numpy_mod, "autograd.numpy.random": random_mod,
        "autograd.numpy.linalg": linalg_mod, "autograd.test_util": test_util,
    })
    scipy_mods = _scipy_modules()
    pkg.scipy = scipy_mods["autograd.scipy"]
    sys.modules.update(scipy_mods)


# --- the pytest plugin (child process only) --------------------------------------------
_outcomes = {}


def pytest_configure(config):
    install()


def pytest_runtest_setup(item):
    _state.update(real_checks=0, complex=0, depth=0)


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        outcome = report.outcome
        reason = ""
        if report.skipped:
            reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
        if report.failed:
            reason = str(report.longrepr.reprcrash.message) if hasattr(report.longrepr, "reprcrash") \
                else str(report.longrepr)[-300:]
        prev = _outcomes.get(report.nodeid)
        if prev is None or prev[0] == "passed":
            _outcomes[report.nodeid] = (outcome, reason[:300])


def pytest_sessionfinish(session):
    out = os.environ.get("PEER_RESULTS")
    if out:
        with open(out, "w") as f:
            json.dump({"autograd_file": sys.modules["autograd"].__file__,
                       "outcomes": _outcomes}, f, indent=1)
