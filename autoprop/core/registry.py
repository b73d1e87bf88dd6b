"""The primitive registry: one record per primitive, and the numpy dispatch tables built from them.

Each record (:class:`Primitive`) holds everything about one operation: how to compute it on numpy
arrays (``fwd``); for every differentiable argument ``i`` its vector-Jacobian product
``vjp_i(g, ans, *args, **kwargs)`` (given the upstream gradient ``g = dL/d(ans)`` it returns
``dL/d(args[i])`` with ``args[i]``'s shape) and its Jacobian-vector product
``jvp_i(t, ans, *args, **kwargs)`` (forward mode); the derivation in words (``jacobian``, ``vjp``,
``shapes``, ``kinks``); and the names that dispatch to it: the numpy functions and ufuncs
(``np.sum``, ``np.amax``) and the Tensor methods. The numpy dispatch tables are built from the
records; a name registered twice is an error at import time. The VJPs are written with numpy
functions and operators that work both on ndarrays (plain backward pass: nothing recorded) and on
Tensors (an outer tape records the backward pass for higher-order derivatives): that is the whole
trick behind nested tapes. A :class:`MultiPrimitive` has several outputs (``split``).

The records live in families: :mod:`.prims.elementwise`, :mod:`.prims.logexp`, :mod:`.prims.reductions`,
:mod:`.prims.shape` (shape and indexing), :mod:`.prims.linalg`, :mod:`.prims.windows`,
:mod:`.prims.special` (more ufuncs, scipy.special), :mod:`.prims.stacking` (numpy's stacking,
splitting, gathering and statistics functions built from the others), :mod:`.prims.fused` (one
record per layer operation: ``linear``, ``linear_at``). They sit above this module, which
imports none of them (nor does the tape or the Tensor below it); once they have loaded, every
primitive and composite is named here too (``registry.tanh``). The derivations are in ``lessons/``; :func:`autoprop.explain`
prints the text stored with each record. Conventions at kinks and ties (stated once, tested in
``tests/test_autoprop_conventions.py``):

* ``relu'(0) = 0``, ``abs'(0) = 0``, ``sign`` and comparisons pass no gradient.
* ``maximum(a, b)`` / ``minimum`` with ``a == b``: each side gets half (PyTorch's and JAX's rule),
  so the routed gradient sums to the upstream value whatever the order. TensorFlow gives the whole
  gradient to the first argument (``lessons/10-gradient-tape.md``, "Differences from TensorFlow").
* The 0·inf rule: where an elementwise primitive's local derivative is infinite or undefined and
  the upstream gradient (or tangent) is exactly 0, the contribution is 0
  (``prims._common.zero_rule``; ``lessons/12-when-to-write-backward.md``).
* ``max`` / ``min`` reductions with ties: the gradient is split evenly among the tied elements;
  so is each output's of ``np.maximum.accumulate`` / ``minimum.accumulate`` (the max of its prefix).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .tape import call, call_multi
from .tensor import Tensor


class Primitive:
    """A differentiable (or explicitly non-differentiable) operation: one record.

    Parameters
    ----------
    name : str
    fwd : callable
        Computes the result from numpy values.
    vjps : tuple of callables, _Variadic, or None
        One VJP per positional argument (None for an argument that is never differentiable);
        ``vjps=None``: non-differentiable (never recorded, so gradients through it are None).
    doc : dict
        ``jacobian``, ``vjp``, ``shapes``, ``kinks``: the derivative in words and formula.
    jvps : tuple of callables or _Variadic, optional
        Forward mode: one JVP ``jvp_i(t, ans, *args, **kwargs)`` per argument, mapping
        the tangent ``t`` of argument ``i`` to its contribution to the output tangent.
        A missing JVP (None) is derived from the VJP by the transpose trick
        (``J t = d/dg <VJP(g), t>``, see :mod:`autoprop.core.forward`).
    numpy : tuple
        The numpy functions and ufuncs that dispatch to this primitive.
    methods : tuple of str
        The :class:`~autoprop.Tensor` methods (and operators) that call it.
    source : str or callable, optional
        The forward as numpy source (``"{a} @ {b}"``; :mod:`autoprop.core.source`), for
        ``tape.backward_source``; None for a numpy/scipy ufunc: ``np.<name>(...)``.
    reads, compact : optional
        Per VJP, the argument positions and/or ``"ans"`` it reads (``multiply``: ``((1,), (0,))``;
        variadic: one tuple of ``"ans"``/``"args"``, ``stack``'s ``()``); the tape saves only
        those, others are :class:`~autoprop.core.tape.NotSaved` (None: all saved).
        ``compact={i: f}`` saves ``f(value, shared)``, read alike (``relu``: ``x > 0``; ``lstm_gates``: a ``PartlySaved``).
    joint_vjp : callable, optional
        Every tracked input's VJP in one call, as jax's ``vjp``, for a record whose VJPs share
        a computation (``rnn_cell``: ``da = g * tanh'(a)``): ``joint_vjp(pairs, g, ans, *args,
        **kwargs)`` returns the gradients of the inputs named in ``pairs`` (the node's
        ``(position, key)`` pairs), indexed by position (a list with None elsewhere, or a dict).
        The reverse walk calls it once a node instead of ``vjps[i]`` once per input; ``vjps``
        stay (forward mode's transposes and the registry's tests call them one by one) and
        give the same values (``rnn_cell``, ``stack``).
    """

    __slots__ = ("name", "fwd", "vjps", "doc", "jvps", "numpy", "methods", "source", "reads", "compact", "plans",
                 "joint_vjp")

    def __init__(self, name, fwd, vjps, doc, jvps=None, numpy=(), methods=(), source=None, reads=None, compact=None,
                 joint_vjp=None):
        self.name = name
        self.fwd = fwd
        self.vjps = vjps
        self.doc = doc
        self.jvps = jvps
        self.numpy = tuple(numpy)
        self.methods = tuple(methods)
        self.source = source
        if reads is not None and not _reads_ok(reads, vjps):  # (a variadic record: one tuple)
            raise ValueError(f"autoprop: {name!r}: reads= needs a tuple per VJP; got {reads!r}")
        self.reads, self.compact, self.plans = reads, compact, {}  # plans: tape._plan's cache
        self.joint_vjp = joint_vjp

    __call__ = call  # prim(*args, **kwargs): tape.call itself (no method frame around it)

    def __repr__(self):
        return f"<autoprop primitive {self.name}>"


class MultiPrimitive(Primitive):
    """A primitive with several outputs (``split``), recorded as one ``tape.MultiNode``: ``fwd``
    returns a tuple of arrays, a call a list of Tensors; each VJP gets ``g`` and ``ans`` as
    tuples (``g``'s None: an output that got no gradient); each JVP returns a tuple."""
    __slots__ = ()
    __call__ = call_multi


def _reads_ok(reads, vjps):  # (a well-formed ``reads`` for these VJPs: :class:`Primitive`)
    if isinstance(vjps, _Variadic):  # one tuple for all, of "ans" and/or "args" (every argument)
        return type(reads) is tuple and all(r in ("ans", "args") for r in reads)
    return type(reads) is tuple and vjps is not None and len(reads) == len(vjps) and all(
        type(rs) is tuple and all(r in ("ans", *range(len(vjps))) for r in rs) for rs in reads)


class _Variadic(dict):
    """VJPs (JVPs) of any number of arguments: ``fn(i, g, ans, *args, **kwargs)`` for each ``i``.

    ``vjps[i]`` is ``partial(fn, i)``, made once and then found by the dict's own lookup (no
    Python frame: a stack of a recurrent layer's T states asks T times a record and a walk)."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def __missing__(self, i):
        p = partial(self.fn, i)  # (no Python frame between the walk and fn)
        if len(self) < 4096:  # (a stack of more inputs makes its partials again: no growth)
            self[i] = p
        return p


#: name -> Primitive: the one table of primitives.
PRIMITIVES: dict[str, Primitive] = {}
#: name -> derivative text of the numpy functions built from primitives (``ap.explain``).
COMPOSITES: dict[str, str] = {}
#: numpy ufunc -> callable, and numpy function -> callable: built by the records below
#: (``_UFUNC_PRIMS``: the ufuncs whose keyword-free call is their primitive's).
_UFUNCS, _FUNCTIONS, _UFUNC_PRIMS = {}, {}, {}
#: numpy callable -> the record (primitive or composite name) that registered it.
_OWNER: dict = {}


def _register_numpy(owner, pairs):
    """Route each numpy callable to its implementation, ``pairs = [(f, impl), ...]``.

    Raises RuntimeError, before changing anything, if a callable is registered already
    (or twice in ``pairs``): each numpy name dispatches to exactly one record.
    """
    seen = set()
    for f, _ in pairs:
        if f in _OWNER or f in seen:
            raise RuntimeError(
                f"autoprop registry: numpy.{f.__name__} is registered twice, by "
                f"{_OWNER.get(f, owner)!r} and by {owner!r}; each numpy name dispatches to "
                "one record"
            )
        seen.add(f)
    for f, impl in pairs:
        _OWNER[f] = owner
        (_UFUNCS if isinstance(f, np.ufunc) else _FUNCTIONS)[f] = impl
        if isinstance(impl, Primitive) and isinstance(f, np.ufunc) and f is not np.positive:
            _UFUNC_PRIMS[f] = impl  # Tensor.__array_ufunc__'s fast path (no keywords)


def _add(prim, np_call):
    if prim.name in PRIMITIVES or prim.name in COMPOSITES:
        raise RuntimeError(f"autoprop registry: the primitive {prim.name!r} is registered twice")
    # a numpy entry: a callable (ufuncs get the prim, functions np_call or it) or a (callable, adaptor)
    pairs = [f if isinstance(f, tuple) else (f, prim if isinstance(f, np.ufunc) else np_call or prim)
             for f in prim.numpy]
    _register_numpy(prim.name, pairs)
    prim.numpy = tuple(f for f, _ in pairs)
    PRIMITIVES[prim.name] = prim
    return prim


def defprim(name, fwd, *vjps, jacobian="", vjp="", shapes="", kinks="none (smooth)", jvp=None,
            numpy=(), np_call=None, methods=(), source=None, reads=None, compact=None, multi=False,
            joint_vjp=None):
    """Register a primitive with one VJP (and JVP) per positional argument; return it.

    Parameters
    ----------
    name : str
        Unique; a second registration raises RuntimeError.
    fwd : callable
    *vjps : callables (None for a non-differentiable argument), or one ``_Variadic``
    jacobian, vjp, shapes, kinks : str
        The derivation text shown by ``ap.explain``.
    jvp : callable, tuple of callables, or _Variadic
        One JVP per argument (a callable for a one-argument primitive).
    numpy : tuple
        numpy ufuncs (called with the inputs) and functions (called through ``np_call``,
        default the primitive) that dispatch here; or ``(numpy function, adaptor)`` pairs.
    methods : tuple of str
        Tensor methods and operators that call the primitive (documentation, tested).
    source : str or callable, optional
        The forward as numpy source text (:class:`Primitive`; ``tape.backward_source``).
    reads, compact : optional
        What each VJP reads, and smaller forms to save (:class:`Primitive`).
    multi : bool, default False
        Several outputs: a :class:`MultiPrimitive`.
    joint_vjp : callable, optional
        All the VJPs in one call (:class:`Primitive`), for a record whose VJPs share work.
    """
    vjps = vjps[0] if len(vjps) == 1 and isinstance(vjps[0], _Variadic) else tuple(vjps)
    doc = {"jacobian": jacobian, "vjp": vjp, "shapes": shapes, "kinks": kinks}
    jvp = jvp if jvp is None or isinstance(jvp, (tuple, _Variadic)) else (jvp,)
    return _add((MultiPrimitive if multi else Primitive)(
        name, fwd, vjps, doc, jvp, numpy, methods, source, reads, compact, joint_vjp), np_call)


def defnondiff(name, fwd, why, numpy=(), np_call=None, methods=()):
    """Register a primitive that passes no gradient (its output is never recorded)."""
    doc = {"jacobian": "zero almost everywhere / undefined", "vjp": "none: " + why,
           "shapes": "", "kinks": ""}
    return _add(Primitive(name, fwd, None, doc, None, numpy, methods), np_call)


def defcomposite(name, formula, numpy=(), methods=()):
    """Decorator: a numpy function built from recorded primitives (its derivative is the
    chain rule through them); ``numpy`` lists the numpy callables that dispatch to it."""
    def deco(fn):
        if name in COMPOSITES or name in PRIMITIVES:
            raise RuntimeError(f"autoprop registry: the composite {name!r} is registered twice")
        _register_numpy(name, [(f, fn) for f in numpy])
        COMPOSITES[name] = formula
        fn.__name__ = name
        fn.methods = tuple(methods)
        if not fn.__doc__:
            fn.__doc__ = (
                f"``numpy.{name}`` over Tensors, built from recorded primitives.\n\nParameters\n"
                f"----------\nAs ``numpy.{name}``; Tensors, arrays or scalars (float64/float32 "
                f"values are differentiable).\n\nReturns\n-------\nTensor (``split``: a list of "
                f"Tensors), with numpy's shape and dtype.\n\nRaises\n------\nTypeError\n    For "
                f"``out=`` and options without a registered derivative.\n\nNotes\n-----\n"
                f"Derivative: {formula}. Source: ``lessons/10-gradient-tape.md``.\n"
            )
        return fn
    return deco


def defnumpy(owner, numpy, impl):
    """Route numpy callables that are no primitive (shape queries, values-only answers such as
    ``np.allclose``, constants such as ``np.zeros_like``) to ``impl``."""
    _register_numpy(owner, [(f, impl) for f in numpy])
    return impl


def linear_jvp(name, rule=None):
    """JVPs of a primitive that is linear in each argument separately (multilinear):
    ``J_i t = f(..., t, ...)``, the primitive itself with argument ``i`` replaced by its
    tangent (HIPS autograd's ``def_linear``). Serves multiply, matmul, tensordot, einsum
    and every linear map (sum, reshape, getitem, extract_patches, ...). ``rule(t, r)``, if
    given, is applied to each contribution: multiply's is the 0·inf rule (a zero tangent
    contributes 0 even against an inf factor; ``prims._common.zero_rule``), as every
    elementwise primitive's."""
    def jvp(i, t, ans, *args, **kwargs):
        prim = PRIMITIVES[name]
        args = args[:i] + (t,) + args[i + 1:]
        r = prim(*args, **kwargs) if isinstance(t, Tensor) else prim.fwd(*args, **kwargs)
        return r if rule is None else rule(t, r)
    return _Variadic(jvp)


# --- the records ----------------------------------------------------------------------
# The families (prims/, one module each) sit above this module: each imports defprim & co. from
# here and registers its records when it is imported. autoprop.core.prims, which imports them
# all, then adds their names to this module's namespace (``registry.tanh`` is the record, as
# ``registry.PRIMITIVES["tanh"]``; ``registry.unbroadcast``; ``FAMILIES``), with numpy's dispatch
# (``dispatch_ufunc``, ``dispatch_function``: prims/dispatch.py), so this module names no family.
__all__ = ["PRIMITIVES", "COMPOSITES", "Primitive", "MultiPrimitive", "defprim", "defnondiff", "defcomposite",
           "defnumpy", "linear_jvp"]  # (and, once autoprop.core has loaded, every family's names)
