"""Reductions and normalisations: sum, mean, max/min, prod, cumsum, the fused sparse
cross-entropy, norm; var and std as composites (the log-sum-exp family is ``logexp``).
One record each (registry.defprim): forward, VJP, JVP, derivation text, numpy names.

A reduction's VJP reshapes ``g`` so it broadcasts against the input again
(``_keep_reduced``). Derivations: ``lessons/00-chain-rule.md`` (sum, mean, broadcast),
``lessons/04-softmax-cross-entropy.md``.
"""

from __future__ import annotations

import math

import numpy as np

from manualprop._extremes import rows, squares_finite  # (kernels: numpy only)

from ..observe import own, static
from ..registry import PRIMITIVES, defcomposite, defnondiff, defprim, linear_jvp
from ..tape import _F64, INDEX_ARGUMENTS, WithSaved
from ..tensor import _EXTRA, _KEEP_SAVED, _RECORDING, Tensor
from ..views import layout_as
from ._common import (
    REDUCED,
    _axes_tuple,
    _axis_index,
    _check_kw,
    _count,
    _ddof,
    _keep_reduced,
    _shape,
    _t,
    _value,
)
from .elementwise import absolute, where
from .logexp import _softmax_share, logcumsumexp, logsumexp

__all__ = [
    "sum", "mean", "max", "min", "prod", "cumsum",
    "sparse_softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_mean", "norm", "argmax", "argmin", "var", "std",
    "vector_norm", "matrix_norm",
]

_REDUCED = REDUCED


def _in_dtype(name, a, dtype):
    """``a`` as a Tensor cast to numpy's ``dtype=`` of a reduction (numpy computes in that
    dtype and returns it); the cast's VJP brings the gradient back in ``a``'s dtype.

    Raises
    ------
    TypeError
        A real or complex ``a`` to an integer or bool dtype (numpy truncates: no
        derivative), or across real and complex (no gradient rule is recorded for it).
    """
    a = _t(a)
    if dtype is None or np.dtype(dtype) == a.dtype:
        return a
    dt, kind = np.dtype(dtype), a.dtype.kind
    if kind in "fc" and dt.kind not in "fc":
        why = f"the cast from {a.dtype} to {dt} truncates: it has no derivative"
    elif kind in "fc" and (dt.kind == "c") != (kind == "c"):
        why = f"autoprop records no gradient of a cast between real and complex ({a.dtype} to {dt})"
    else:
        return a.astype(dt)
    raise TypeError(
        f"autoprop cannot record numpy.{name}(..., dtype={dt}) of a {a.dtype} Tensor: {why}. "
        f"Reduce in a float dtype, or on the values (numpy.{name}(t.numpy(), dtype=...)), "
        "which gives no gradient.")


def _as(r, dtype):
    """The reduction ``r`` in numpy's ``dtype=`` (a sum of int32 is int32 there, not int64)."""
    return r if dtype is None or r.dtype == np.dtype(dtype) else r.astype(dtype)


_NONE = object()  # no ``initial=`` given (None is no value numpy accepts there either)
#: the value that leaves each reduction unchanged: what ``where=False`` entries become
_IDENTITY = {"sum": 0.0, "prod": 1.0, "mean": 0.0}


def _np_reduction(name, prim=None):
    """numpy's signature (``dtype``, ``out``, list axes, ``initial``, ``where``) over the
    reduction primitive ``prim`` (default ``name``), looked up when called; ``dtype`` casts
    first (:func:`_in_dtype`), for the numpy functions that take it (not max and min).
    ``initial`` and ``where`` (not on mean's ``initial``, as numpy) are recorded around the
    primitive: :func:`_masked_reduction`."""
    takes_dtype = name in ("sum", "mean", "prod")
    base = prim or name

    def fn(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NONE, where=True, **kw):
        if base == "mean" and initial is not _NONE:  # (t.mean(initial=...), ap.numpy.mean)
            raise TypeError("mean() got an unexpected keyword argument 'initial' (as numpy)")
        _check_kw(name, dict(kw, out=out, dtype=None if takes_dtype else dtype))
        if isinstance(axis, list):
            axis = tuple(axis)
        x = _in_dtype(name, a, dtype)
        if initial is _NONE and where is True:
            r = PRIMITIVES[base](x, axis=axis, keepdims=bool(keepdims))
        else:
            r = _masked_reduction(name, base, x, axis, bool(keepdims), initial, where)
        return _as(r, dtype)
    fn.__name__ = name
    return fn


def _cast(v, dtype):
    """``v`` in ``dtype``: a Tensor (``initial=t``) through its recorded cast, so d/dt is kept; a number as a new
    array marked :func:`static` (a constant of a trace, as the number is: ``anp.sum(x, where=m, initial=2.0)``)."""
    if isinstance(v, Tensor):
        return v.astype(dtype)
    return static(np.asarray(v, dtype)) if isinstance(v, (int, float, complex, np.generic)) else np.asarray(v, dtype)


def _masked_reduction(name, base, x, axis, keepdims, initial, mask):
    """numpy's ``initial=`` and ``where=`` of sum, prod, mean, max and min, from recorded
    primitives: the entries ``where`` leaves out become the reduction's identity (0 for a
    sum or mean, 1 for a product, ``initial`` for max/min, which numpy requires then), so
    their gradient is 0; ``initial`` joins the result (``+`` for a sum, ``*`` for a product,
    ``maximum``/``minimum``: a tie with it shares the gradient, as every tie). A mean
    divides by the count of entries kept (nan where none, as numpy)."""
    from .elementwise import maximum, minimum
    from .elementwise import where as where_

    extreme = base in ("max", "min")
    if initial is not _NONE and not np.isscalar(initial) and np.ndim(_value(initial)) != 0:
        raise TypeError(f"numpy.{name}(..., initial=...): initial must be a number; got {initial!r}")
    if mask is not True:  # (a boolean argument of a traced call as itself: where_ reads it at each replay, fn45)
        m = mask if type(mask) in INDEX_ARGUMENTS and mask.dtype == bool else np.asarray(mask, dtype=bool)
        try:
            fits = np.broadcast_shapes(m.shape, x.shape) == x.shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"numpy.{name}(..., where=...): a mask of shape {m.shape} does not "
                             f"broadcast to the input's shape {x.shape}")
        if extreme and initial is _NONE:
            raise ValueError(f"numpy.{name}(..., where=...) needs initial=: the reduction "
                             f"'{'maximum' if base == 'max' else 'minimum'}' has no identity (as numpy)")
        x = where_(m, x, _cast(initial, x.dtype) if extreme else static(own(_cast(_IDENTITY[base], x.dtype))))
    if extreme and _count(x.shape, axis) == 0:  # nothing to reduce: initial, as numpy
        r = sum(x, axis=axis, keepdims=keepdims) + _cast(initial, x.dtype)
    elif base == "mean" and mask is not True:  # numpy's order: the kept entries' sum / their count
        if type(m) in INDEX_ARGUMENTS:  # recorded: the count of each replay's mask (a float sum of ones is exact)
            ones = where_(m, static(own(np.ones(x.shape, x.dtype))), static(own(_cast(0, x.dtype))))
            return sum(x, axis=axis, keepdims=keepdims) / sum(ones, axis=axis, keepdims=keepdims)
        kept = np.sum(np.broadcast_to(m, x.shape), axis=axis, keepdims=keepdims)
        with np.errstate(invalid="ignore", divide="ignore"):  # (a mean times count/kept was off by an ulp)
            r = sum(x, axis=axis, keepdims=keepdims) / own(np.asarray(kept, x.dtype))
    else:
        r = PRIMITIVES[base](x, axis=axis, keepdims=keepdims)
    if initial is _NONE or (extreme and _count(x.shape, axis) == 0):
        return r
    c = _cast(initial, x.dtype)
    return {"sum": lambda: r + c, "prod": lambda: r * c, "max": lambda: maximum(r, c),
            "min": lambda: minimum(r, c)}[base]()


def _sum_vjp(g, ans, x, axis=None, keepdims=False):
    return np.broadcast_to(_keep_reduced(g, x.shape, axis, keepdims), x.shape)


def _mean_vjp(g, ans, x, axis=None, keepdims=False):
    if axis is None and type(g) is np.ndarray and not g.ndim:  # the mean of a loss: g / n everywhere
        v = g / _count(x.shape, None)
        r = np.empty(x.shape, v.dtype)  # np.full's two steps, without its Python wrapper
        r.fill(v)
        return r
    return np.broadcast_to(_keep_reduced(g, x.shape, axis, keepdims), x.shape) / _count(x.shape, axis)


def _extreme_mask(x, a):
    """Where x is the extreme ``a`` (kept on the reduced axes): its equal elements, and where ``a`` is a NaN
    (numpy's max/min return a NaN of the slice) its NaNs, as maximum/minimum's NaN rule gives the gradient to
    the NaN returned (elementwise.NAN_RULE): before, no element equalled the NaN, so 0/0 made every element's
    gradient NaN."""
    mask = x == a
    an = np.isnan(_value(a))
    if an.any():
        mask = mask | (np.isnan(_value(x)) & an)
    return mask


def _extreme_vjp(g, ans, x, axis=None, keepdims=False):
    mask = _extreme_mask(x, _keep_reduced(ans, x.shape, axis, keepdims))
    return _keep_reduced(g, x.shape, axis, keepdims) * mask / mask.sum(axis=axis, keepdims=True)


def _extreme_jvp(t, ans, x, axis=None, keepdims=False):
    mask = _extreme_mask(x, _keep_reduced(ans, _shape(x), axis, keepdims))
    return np.sum(t * mask, axis=axis, keepdims=keepdims) / np.sum(mask, axis=axis, keepdims=keepdims)


sum = defprim("sum", lambda x, axis=None, keepdims=False: np.sum(x, axis=axis, keepdims=keepdims),  # noqa: A001
              _sum_vjp, jvp=linear_jvp("sum"), jacobian="a row of ones per output element",
              vjp="dx = g broadcast back over the summed axes", shapes=_REDUCED,
              numpy=((np.sum, _np_reduction("sum")),), methods=("sum",), source="{x}.sum({kw})",
              reads=((),))
def _mean_fwd(x, axis=None, keepdims=False):
    if axis is None and not keepdims and type(x) is np.ndarray and x.dtype.char in "fd" and x.size:
        return np.add.reduce(x, axis=None) / x.size  # np.mean's own steps (x.sum(), then divide), without their wrappers
    return np.mean(x, axis=axis, keepdims=keepdims)


mean = defprim("mean", _mean_fwd,
               _mean_vjp, jvp=linear_jvp("mean"), jacobian="1/n per summed element",
               vjp="dx = g / n broadcast back (n = number of averaged elements)", shapes=_REDUCED,
               numpy=((np.mean, _np_reduction("mean")),), methods=("mean",), source="{x}.mean({kw})",
               reads=((),))
def _extreme(name, fn, word):
    """max or min over ``axis``: the gradient goes to the extreme elements, ties split."""
    arg = "argmax" if name == "max" else "argmin"
    return defprim(
        name, lambda x, axis=None, keepdims=False: fn(x, axis=axis, keepdims=keepdims),
        _extreme_vjp, jvp=_extreme_jvp, jacobian=f"1 at the {word} element",
        vjp=f"dx = g at the {arg}, 0 elsewhere", shapes="x (...); reduced axes removed",
        kinks=f"ties: g split evenly among the tied {word[:3]}ima; a slice holding NaNs (numpy returns a NaN): g "
              "split evenly among its NaNs, the numbers 0 (maximum/minimum's NaN rule; as torch's Tensor."
              f"{name}() of a whole tensor, where torch.a{name}, jax and HIPS autograd give NaN to every element)",
        numpy=((getattr(np, name), _np_reduction(name)), (getattr(np, "a" + name), _np_reduction("a" + name, name))),
        methods=(name,), source="{x}." + name + "({kw})",
    )


max = _extreme("max", np.max, "maximal")  # noqa: A001
min = _extreme("min", np.min, "minimal")  # noqa: A001


def _prod_others(x, axis):
    """prod of the other elements along ``axis`` (x's shape), exact with zeros.

    On Tensors (an outer tape or accumulator differentiates the VJP/JVP) it is built from
    recorded primitives whose derivatives are exact at zeros too: row ``i`` of
    ``M = where(I, 1, x)`` holds the others of ``x_i`` and ``prod(M, -1)`` multiplies them
    (O(n^2) memory per reduced row, only when differentiating twice). The masked formula
    below would give wrong second derivatives at an exact 0 (x = [0, 2]: H [1, 1] = [1, 1])."""
    if isinstance(x, Tensor):
        return _prod_others_recorded(x, axis)
    zero = x == 0
    nz = np.sum(zero, axis=axis, keepdims=True)
    safe = np.where(zero, 1.0, x)
    p = np.prod(safe, axis=axis, keepdims=True)
    return np.where(nz == 0, p / safe, np.where(zero * (nz == 1), p, 0.0))


def _prod_others_recorded(x, axis):
    from .shape import reshape, transpose  # the shape family imports this one's neighbours

    nd = x.ndim
    if nd == 0:  # (numpy reduces a 0-d x over axis 0 or -1 too: no other element, product 1)
        return np.ones((), x.dtype)
    axes = tuple(range(nd)) if axis is None else tuple(sorted(_axes_tuple(axis, nd)))
    perm = tuple(d for d in range(nd) if d not in axes) + axes
    xt = transpose(x, axes=perm)
    n = _count(x.shape, axes)
    lead = xt.shape[:nd - len(axes)]
    m = where(np.eye(n, dtype=bool), np.ones((), x.dtype), reshape(xt, shape=lead + (1, n)))
    others = reshape(prod(m, axis=-1), shape=xt.shape)
    inverse = tuple(int(i) for i in np.argsort(perm))
    return transpose(others, axes=inverse)


prod = defprim(
    "prod", lambda x, axis=None, keepdims=False: np.prod(x, axis=axis, keepdims=keepdims),
    lambda g, ans, x, axis=None, keepdims=False: _keep_reduced(g, _shape(x), axis, keepdims)
    * _prod_others(x, axis),
    jvp=lambda t, ans, x, axis=None, keepdims=False: np.sum(
        t * _prod_others(x, axis), axis=axis, keepdims=keepdims),
    jacobian="d prod/dx_i = product of the other elements", vjp="dx_i = g * prod_{j != i} x_j",
    shapes=_REDUCED, numpy=((np.prod, _np_reduction("prod")),), methods=("prod",),
    kinks="exact with zeros (no division by x), second and higher derivatives too",
    source="{x}.prod({kw})",
)


def _cumsum_vjp(g, ans, x, axis=None):
    if axis is None or not _shape(x):  # (a 0-d x over axis 0 or -1: a 1-D result, as numpy)
        return np.flip(np.cumsum(np.flip(g, 0), 0), 0).reshape(_shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def _np_cumsum(a, axis=None, dtype=None, out=None):
    _check_kw("cumsum", {"out": out})
    return _as(cumsum(_in_dtype("cumsum", a, dtype), axis=axis), dtype)


cumsum = defprim(
    "cumsum", lambda x, axis=None: np.cumsum(x, axis=axis), _cumsum_vjp, jvp=linear_jvp("cumsum"),
    jacobian="lower-triangular ones along the axis", vjp="dx = reversed cumsum of g along the axis",
    shapes="same as x (axis=None: flattened to 1-D)", numpy=(np.cumsum,), np_call=_np_cumsum,
    methods=("cumsum",),
    source="np.cumsum({x}{_kw})",
)


def _label_index(labels):
    """Index of the label entries: (rows..., labels) -- plain fancy indexing (fast). For a batch of
    labels (1-D) the rows are ``np.arange(n)`` made once per batch size (read-only, shared with
    manualprop's loss: ``manualprop._extremes.rows``), not on every record and VJP."""
    if type(labels) is not np.ndarray:
        labels = np.asarray(labels)
    return (*np.indices(labels.shape, sparse=True), labels) if labels.ndim != 1 else \
        (rows(labels.shape[0]), labels)


def _row_max(logits):
    """The max along the last axis (keepdims), with a non-finite max (a row of -inf logits,
    or nan) replaced by 0. The ufuncs' reductions, not ``np.max`` or the ndarray methods: the
    same reductions without numpy's Python wrappers (half the cost at a batch of 16); the sum
    of ``m`` is finite only if every max is (and an overflowing sum only takes the exact path
    below)."""
    m = np.maximum.reduce(logits, axis=-1, keepdims=True)
    if not squares_finite(m):
        m = np.where(np.isfinite(m), m, 0.0)
    return m


def _sparse_ce_fwd(logits, labels):
    # -log_softmax(z)[label] = log(sum(exp(s))) - s[label] with s = z - max(z): only the
    # label entries of the log-softmax are formed (the same bits: -(a - b) is b - a)
    s = logits - _row_max(logits)
    idx = _label_index(labels)
    return np.log(np.add.reduce(np.exp(s), axis=-1)) - s[idx]  # (.sum(axis=-1): the same sum)


def _softmax_minus_onehot(logits, labels, p=None):
    """softmax(logits) - onehot(labels), written with recordable operations. ``p``: the
    forward's softmax of plain arrays (``sparse_softmax_cross_entropy_mean`` keeps it while a
    tape records), not formed again."""
    if isinstance(logits, Tensor):  # an outer tape records the backward pass
        onehot = np.eye(_shape(logits)[-1], dtype=logits.dtype)[np.asarray(labels)]
        return _softmax_share(logits, -1) - onehot  # (exp(z - logsumexp(z)): 1 each at z = [1e20, 1e20])
    if p is None:
        p = np.exp(logits - _row_max(logits))  # softmax as e / sum(e): a fresh array, normalised in place
        p /= np.add.reduce(p, axis=-1, keepdims=True)  # (p.sum(axis=-1, keepdims=True): the same sum)
    else:  # the same e, the same sums: the same bits, into a fresh array (p stays for a second walk)
        p = p.copy()
    p[_label_index(labels)] -= 1.0  # each (row, label) pair occurs once: no accumulation needed
    return p


def _sparse_ce_vjp(g, ans, logits, labels):
    d = _softmax_minus_onehot(logits, labels)
    if type(g) is np.ndarray and type(d) is np.ndarray and g.dtype == d.dtype:
        d *= g[..., None]  # plain backward: d is ours, scaled in place
        return d
    return np.expand_dims(g, -1) * d


sparse_softmax_cross_entropy_with_logits = defprim(
    "sparse_softmax_cross_entropy_with_logits", _sparse_ce_fwd,
    _sparse_ce_vjp,
    None,
    jvp=(lambda t, ans, logits, labels: np.sum(t * _softmax_minus_onehot(logits, labels), axis=-1), None),
    reads=((0, 1), ()),
    jacobian="d loss_i / d z_ic = softmax(z_i)_c - [c == y_i]",
    vjp="dz = g[:, None] * (softmax(z) - onehot(y)) (the fused kernel of "
        "tf.nn.sparse_softmax_cross_entropy_with_logits)",
    shapes="logits (..., C), integer labels (...) -> per-example loss (...)",
    kinks="none; stable for any logits (log-softmax shifted by the max); labels get no gradient",
    source="-np.take_along_axis(special.log_softmax({logits}, axis=-1), {labels}[..., None], axis=-1)[..., 0]",
)


# The mean of the per-example losses in the same record (PyTorch's
# cross_entropy(reduction="mean"), Keras's CategoricalCrossentropy loss): what
# SoftmaxCrossEntropy() records for integer labels, one node where the loss and its mean
# were two. The forward is the two records' (_mean_fwd of _sparse_ce_fwd: the same bits); the
# VJP is the fused kernel scaled by g / n, the mean's VJP and the cross-entropy's in one step
# (each entry (p - onehot) * (g / n): the same bits as the two VJPs).
#
# While a tape records (or an accumulator listens, or autoprop.function's replay runs this op of a
# recorded trace: tensor._KEEP_SAVED), the forward keeps the softmax
# exp(s) / sum(exp(s)), s = z - max z (N x C, what manualprop's loss caches), in the record
# (tape.WithSaved), divided by the row sums its loss took when the loss is finite (then every row
# sum is finite and positive, and the division warns of nothing): the VJP on arrays copies it instead
# of forming max, s, exp and the row sums again (five ufunc calls of a 64-32-10 B16 step's few
# dozen, sessions 17 and 31 of docs/speed.md); on Tensors (an outer tape) and in the JVP it is
# not read.
def _sparse_ce_mean_fwd(logits, labels):
    keep = _RECORDING or _EXTRA or _KEEP_SAVED  # (someone reads the VJP's softmax)
    if not keep or type(logits) is not np.ndarray or logits.dtype.kind != "f":
        return _mean_fwd(_sparse_ce_fwd(logits, labels))
    s = logits - _row_max(logits)  # _sparse_ce_fwd's steps: the same bits
    e = np.exp(s)
    sums = np.add.reduce(e, axis=-1)
    loss = _mean_fwd(np.log(sums) - s[_label_index(labels)])
    if not math.isfinite(loss):  # a row summed to 0 or inf: its softmax would be 0/0 or inf/inf (a warning
        return WithSaved((np.asarray(loss), None))  # here): nothing kept, the VJP forms it in the quiet walk
    e /= sums[..., None]  # the softmax in e's place, by the row sums the loss took (manualprop's loss too)
    return WithSaved((np.asarray(loss), e))  # a 0-d array, as the tape makes of a scalar


def _sparse_ce_mean_vjp(g, ans, logits, labels, saved=None):
    d = _softmax_minus_onehot(logits, labels, saved if type(logits) is np.ndarray else None)
    n = labels.size if type(labels) is np.ndarray else np.size(labels)  # (np.size: a Python frame)
    if type(g) is np.ndarray and type(d) is np.ndarray and g.dtype == d.dtype:
        if g.dtype is _F64 and not g.ndim:  # the usual seed, a 0-d float64: g / n as a Python float, the
            d *= float(g) / n  # same division and products without two ufunc calls on 0-d arrays
        else:
            d *= g / n  # plain backward: d is ours, scaled in place
        return d
    return (g / n) * d


sparse_softmax_cross_entropy_mean = defprim(
    "sparse_softmax_cross_entropy_mean", _sparse_ce_mean_fwd,
    _sparse_ce_mean_vjp,
    None,
    jvp=(lambda t, ans, logits, labels, saved=None:
         np.sum(t * _softmax_minus_onehot(logits, labels)) / np.size(labels), None),
    reads=((0, 1), ()),
    jacobian="d loss / d z_ic = (softmax(z_i)_c - [c == y_i]) / N (N = number of labels)",
    vjp="dz = (g / N) * (softmax(z) - onehot(y)) (the fused kernel of "
        "tf.nn.sparse_softmax_cross_entropy_with_logits, and the mean's 1 / N, in one step)",
    shapes="logits (..., C), integer labels (...) -> the mean loss ()",
    kinks="none; stable for any logits (log-softmax shifted by the max); labels get no gradient",
    source="-np.take_along_axis(special.log_softmax({logits}, axis=-1), {labels}[..., None], "
           "axis=-1).mean()",
)


def _safe_norm_parts(x, ans, axis, keepdims):
    n = _keep_reduced(ans, _shape(x), axis, keepdims)
    pos = n > 0
    return n, pos, np.where(pos, n, 1.0)


def _is_c(x):
    return (x._value if isinstance(x, Tensor) else x).dtype.kind == "c"


def _norm_fwd(x, axis=None, keepdims=False):
    if x.dtype.kind in "biu":  # numpy's norm of integers: in float64 (x * x would wrap or overflow)
        x = x.astype(np.float64)
    sq = (x * x.conj()).real if x.dtype.kind == "c" else x * x  # |x|^2 (complex: a real norm, as numpy)
    return np.sqrt(np.sum(sq, axis=axis, keepdims=keepdims))


def _norm_vjp(g, ans, x, axis=None, keepdims=False):
    # complex x: g conj(x) / ||x|| (autograd's convention, autoprop.core.complex)
    n, pos, safe = _safe_norm_parts(x, ans, axis, keepdims)
    return _keep_reduced(g, _shape(x), axis, keepdims) * np.where(pos, (np.conj(x) if _is_c(x) else x) / safe, 0.0)


def _norm_jvp(t, ans, x, axis=None, keepdims=False):
    n, pos, safe = _safe_norm_parts(x, ans, axis, keepdims)
    if _is_c(x):  # Re(sum(t conj(x))) / ||x||
        return np.real(np.sum(t * np.where(pos, np.conj(x) / safe, 0.0), axis=axis, keepdims=keepdims))
    return np.sum(t * np.where(pos, x / safe, 0.0), axis=axis, keepdims=keepdims)


def _order_read(out, ord):  # noqa: A002
    """``out`` times ``ord / ord`` (exactly ``out``) for a float order that picks a branch (2.0: the norm
    record, 1.0: a sum, -1.0 and -2.0 of a matrix): the order is then a recorded constant, so a value that
    left the tape and came back as the order (``ord=float(t)``: its slope d||x||_p/dp would be lost) is refused
    by the partial-escape check as any other constant is (review25a). An integer order is static (numpy's and
    jax's, which requires a concrete one); an infinite one picks max|x| (its slope in p tends to 0); another
    float order is recorded already (``abs(x) ** p``)."""
    if isinstance(ord, (float, np.floating)) and ord in (1, -1, 2, -2):
        return out * (ord / ord)
    return out


def _vector_norm(x, ord, axis, keepdims):  # noqa: A002
    return _order_read(_vector_norm_of(x, ord, axis, keepdims), ord)


def _vector_norm_of(x, ord, axis, keepdims):  # noqa: A002
    if ord is None or ord == 2:
        return norm(x, axis=axis, keepdims=keepdims)
    a = absolute(x)
    if ord == np.inf:
        return max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return min(a, axis=axis, keepdims=keepdims)
    if ord == 0:  # the number of nonzero entries: piecewise constant, no gradient
        return Tensor._wrap(np.asarray(np.sum(x._value != 0, axis=axis, keepdims=keepdims),
                                       dtype=a.dtype))  # (numpy: the real dtype)
    if ord == 1:
        return sum(a, axis=axis, keepdims=keepdims)
    return _p_norm(a, float(ord), axis, keepdims)


def _p_norm(a, p, axis, keepdims):
    """``sum(a**p)**(1/p)`` of ``a = |x|`` for a finite ``p`` other than 0, 1 and 2, with the
    subgradient 0 where a derivative is unbounded (torch's choice, for every p):
    at an entry ``a_i = 0`` (``p a^(p-1)`` is inf for ``p < 1``; ``0 * inf`` = NaN downstream for
    ``p < 0``) and at a reduced slice that is all 0 (``s^(1/p - 1) = inf`` times 0 = NaN for
    ``p > 1``). Only then is each zero replaced, through ``where``, by a constant: the value is
    numpy's, the other entries' derivatives unchanged, and higher derivatives there 0 too."""
    live = a._value > 0
    if live.all():
        return sum(a ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)
    one = own(np.ones((), a.dtype))
    at_zero = a * own(np.zeros((), a.dtype))  # (0, on the tape: a derivative 0 at every order)
    if p < 0:
        at_zero = at_zero + own(np.full((), np.inf, a.dtype))  # 0**p = inf
    s = sum(where(live, where(live, a, one) ** p, at_zero), axis=axis, keepdims=keepdims)
    empty = s._value == 0  # an all-zero slice (p > 0): the norm 0
    if not empty.any():
        return s ** (1.0 / p)
    return where(empty, s, where(empty, one, s) ** (1.0 / p))  # (s is 0 there)


def _matrix_norm(x, ord, axes, keepdims):  # noqa: A002
    return _order_read(_matrix_norm_of(x, ord, axes, keepdims), ord)


def _matrix_norm_of(x, ord, axes, keepdims):  # noqa: A002
    row, col = axes
    if ord in (None, "fro"):
        return norm(x, axis=axes, keepdims=keepdims)
    if ord in (1, -1, np.inf, -np.inf):
        summed, other = (row, col) if ord in (1, -1) else (col, row)  # column sums for 1
        s = sum(absolute(x), axis=summed, keepdims=True)
        pick = max if ord in (1, np.inf) else min
        out = pick(s, axis=other, keepdims=True)
        return out if keepdims else out.reshape(tuple(n for d, n in enumerate(out.shape) if d not in axes))
    if ord in (2, -2, "nuc"):  # from the singular values (the svd record, linalg family)
        from .linalg import svdvals
        from .shape import moveaxis

        s = svdvals(moveaxis(x, (row, col), (-2, -1)))
        out = {2: max, -2: min, "nuc": sum}[ord](s, axis=-1)
        if keepdims:
            out = out.reshape(tuple(1 if d in axes else n for d, n in enumerate(x.shape)))
        return out
    raise ValueError(f"numpy.linalg.norm: invalid norm order {ord!r} for matrices")


def _np_linalg_norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    x = _t(x)
    keepdims = bool(keepdims)
    if isinstance(axis, list):
        axis = tuple(axis)
    if axis is None and ord is not None:
        if x.ndim not in (1, 2):
            raise ValueError(f"numpy.linalg.norm: ord={ord!r} needs a 1-D or 2-D array; got {x.ndim}-D")
        axis = 0 if x.ndim == 1 else (0, 1)
    if isinstance(axis, tuple) and len(axis) == 2:
        return _matrix_norm(x, ord, _axes_tuple(axis, x.ndim), keepdims)
    if isinstance(axis, tuple) and len(axis) == 1:
        axis = axis[0]
    if axis is not None and not isinstance(axis, (int, np.integer)):
        raise ValueError(f"numpy.linalg.norm: axis must be None, an int or a pair; got {axis!r}")
    if axis is not None:  # numpy's AxisError (a 0-d x has no axis 0 here, unlike the reductions)
        axis = _axis_index(axis, x.ndim)
    if isinstance(ord, str):
        raise ValueError(f"numpy.linalg.norm: ord={ord!r} is a matrix norm; give a pair of axes")
    return _vector_norm(x, ord, axis, keepdims)


norm = defprim(
    "norm", _norm_fwd,
    _norm_vjp, jvp=_norm_jvp,
    jacobian="x^T / ||x|| (a row per output element)", vjp="dx = g * x / ||x||, 0 where ||x|| = 0",
    shapes=_REDUCED, numpy=(np.linalg.norm,), np_call=_np_linalg_norm,
    kinks="||x|| = 0: the subgradient 0 (never nan; sqrt(sum(x**2)) written out gives nan there)",
    source="np.sqrt(np.sum({x} * {x}{_kw}))",
)


# numpy >= 2's Array API names (absent from numpy 1.x: nothing registered there)
_NP2 = hasattr(np.linalg, "vector_norm")


@defcomposite("vector_norm", "numpy.linalg.norm's vector norms over any axes (axis=None: all of "
                             "them, as numpy)", numpy=(np.linalg.vector_norm,) if _NP2 else ())
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """``numpy.linalg.vector_norm`` (numpy 2) over Tensors: the vector p-norm over ``axis``.

    Parameters
    ----------
    x : Tensor or array_like
    axis : int, tuple of int or None
        None: over all axes (as numpy).
    keepdims : bool, default False
    ord : {2, 1, inf, -inf, 0, or another number}, default 2

    Returns
    -------
    Tensor
        The reduced shape, real.

    Raises
    ------
    ValueError
        For a string ``ord``.

    Notes
    -----
    ``numpy.linalg.norm``'s vector norms in recorded primitives: 2, the ``norm`` record (the
    subgradient 0 at ``x = 0``, never NaN); 1, ``sum(abs(x))`` (``abs'(0) = 0``); ``inf``/``-inf``,
    ``max``/``min`` of ``abs(x)`` (split evenly at ties); 0, the count of nonzeros, a constant
    (no gradient); another p, ``sum(abs(x)**p)**(1/p)``.
    """
    x = _t(x)
    if isinstance(ord, str):
        raise ValueError(f"numpy.linalg.vector_norm: invalid norm order {ord!r} for vectors")
    if axis is None:
        axis = tuple(range(x.ndim))
    elif isinstance(axis, list):
        axis = tuple(axis)
    axis = _axes_tuple(axis, x.ndim) if isinstance(axis, tuple) else _axis_index(axis, x.ndim)
    return _vector_norm(x, ord, axis, bool(keepdims))


@defcomposite("matrix_norm", "numpy.linalg.norm's matrix norms over the last two axes",
              numpy=(np.linalg.matrix_norm,) if _NP2 else ())
def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    """``numpy.linalg.matrix_norm`` (numpy 2) over Tensors: the matrix norm over the last two axes.

    Parameters
    ----------
    x : Tensor or array_like, shape (..., m, n)
    keepdims : bool, default False
    ord : {'fro', 'nuc', 1, -1, 2, -2, inf, -inf}, default 'fro'

    Returns
    -------
    Tensor, shape (...) (with keepdims (..., 1, 1)), real

    Raises
    ------
    ValueError
        For fewer than 2 axes, or another ``ord``.

    Notes
    -----
    ``numpy.linalg.norm``'s matrix norms in recorded primitives: 'fro', the ``norm`` record; 1,
    -1, inf, -inf, the max/min of the column/row sums of ``abs(x)`` (ties split evenly,
    ``abs'(0) = 0``); 2, -2, 'nuc', the largest, smallest or sum of the singular values (the
    ``svdvals`` record; tied largest values share the gradient evenly, the max rule).
    """
    x = _t(x)
    if x.ndim < 2:
        raise ValueError(f"numpy.linalg.matrix_norm: x must have at least 2 axes; got shape {x.shape}")
    return _matrix_norm(x, ord, (x.ndim - 2, x.ndim - 1), bool(keepdims))

def _np_arg(name):
    def fn(a, axis=None, out=None, *, keepdims=False):
        _check_kw(name, {"out": out})
        return PRIMITIVES[name](a, axis=axis, keepdims=bool(keepdims))
    fn.__name__ = name
    return fn


argmax = defnondiff("argmax", lambda x, axis=None, keepdims=False: np.argmax(x, axis=axis, keepdims=keepdims),
                    "an index is an integer", numpy=(np.argmax,), np_call=_np_arg("argmax"),
                    methods=("argmax",))
argmin = defnondiff("argmin", lambda x, axis=None, keepdims=False: np.argmin(x, axis=axis, keepdims=keepdims),
                    "an index is an integer", numpy=(np.argmin,), np_call=_np_arg("argmin"),
                    methods=("argmin",))


def _masked_spread(a, axis, ddof, keepdims, where_, name, given_mean=None):
    """var or std over the elements ``where_`` selects (numpy's ``where=``): the deviations
    from the masked mean, 0 outside the mask (no gradient there), over count(mask) - ddof."""
    w = np.broadcast_to(np.asarray(getattr(where_, "_value", where_), dtype=bool), a.shape)
    n = np.sum(w, axis=axis, keepdims=bool(keepdims)) - ddof
    d = a - (np.mean(a, axis=axis, keepdims=True, where=w) if given_mean is None else given_mean)
    d = d * own(w.astype(a.dtype))
    if name == "std":
        return norm(d, axis=axis, keepdims=bool(keepdims)) / own(np.sqrt(np.maximum(n, 0)).astype(np.finfo(a.dtype).dtype))
    dd = np.real(d * np.conj(d)) if d.dtype.kind == "c" else d * d
    return sum(dd, axis=axis, keepdims=bool(keepdims)) / own(n.astype(dd.dtype))


def _given_mean(name, m):
    """numpy 2's ``mean=`` of var/std (the mean, shaped as with keepdims=True, not computed
    again): a Tensor's gradient flows through it too (the chain rule; at the true mean that
    part is 0)."""
    if m is None:
        return None
    m = _t(m)
    if m.dtype.kind not in "fc":
        raise TypeError(f"numpy.{name}(..., mean=...): the mean must be a float array (as numpy "
                        f"returns it with keepdims=True); got dtype {m.dtype}")
    return m


@defcomposite("var", "mean(|x - mean(x)|**2) * n / (n - ddof): chain rule through mean, subtract, "
                     "multiply (conj and real for complex x)", numpy=(np.var,), methods=("var",))
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    """``numpy.var`` / ``Tensor.var``: the variance ``mean(|x - mean(x)|**2) * n / (n - ddof)``.

    Parameters
    ----------
    a : Tensor or array_like
    axis : int, tuple of int or None
    dtype : numpy dtype, optional
        A float dtype to compute in (a truncating cast is refused).
    ddof : int, default 0
    keepdims : bool, default False
    **kw
        numpy's ``where=`` (array_like of bool: only these elements count, the others get
        gradient 0), numpy 2's ``mean=`` (the precomputed mean, keepdims shape; a Tensor gets its
        gradient too, 0 at the true mean) and ``correction=`` (``ddof``'s numpy 2 name).

    Returns
    -------
    Tensor
        The reduced shape; real for complex input (``|d|**2``, as numpy).

    Raises
    ------
    TypeError
        For ``out=``, a non-float ``mean``, or a ``dtype`` whose cast truncates.
    ValueError
        For both ``ddof`` and ``correction``.

    Notes
    -----
    Recorded ``mean``, ``subtract``, ``multiply`` and ``sum`` (``conj`` and ``real`` for complex),
    so the gradient is the composition's, ``2 (x - mean) / (n - ddof)``.
    """
    where_, given = kw.pop("where", None), _given_mean("var", kw.pop("mean", None))
    ddof = _ddof(ddof, kw)
    _check_kw("var", dict(kw, out=out))
    a = _in_dtype("var", a, dtype)
    if isinstance(axis, list):
        axis = tuple(axis)
    if where_ is not None:
        return _masked_spread(a, axis, ddof, keepdims, where_, "var", given)
    d = a - (mean(a, axis=axis, keepdims=True) if given is None else given)
    dd = np.real(d * np.conj(d)) if d.dtype.kind == "c" else d * d  # |d|**2, real, as numpy's var of complex
    return sum(dd, axis=axis, keepdims=bool(keepdims)) / (_count(a.shape, axis) - ddof)


@defcomposite("std", "norm(x - mean(x)) / sqrt(n - ddof): the norm's subgradient 0 where the "
                     "variance is exactly 0 (never nan, unlike sqrt(var))", numpy=(np.std,),
              methods=("std",))
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    """``numpy.std`` / ``Tensor.std``: the standard deviation ``norm(x - mean(x)) / sqrt(n - ddof)``.

    Parameters
    ----------
    a : Tensor or array_like
    axis : int, tuple of int or None
    dtype : numpy dtype, optional
        A float dtype to compute in (a truncating cast is refused).
    ddof : int, default 0
    keepdims : bool, default False
    **kw
        numpy's ``where=`` (array_like of bool: only these elements count, the others get
        gradient 0), numpy 2's ``mean=`` (the precomputed mean, keepdims shape) and
        ``correction=`` (``ddof``'s numpy 2 name).

    Returns
    -------
    Tensor
        The reduced shape, real.

    Raises
    ------
    TypeError
        For ``out=``, a non-float ``mean``, or a ``dtype`` whose cast truncates.
    ValueError
        For both ``ddof`` and ``correction``.

    Notes
    -----
    The recorded ``norm`` of the deviations, divided by a constant: where the spread is exactly 0
    the gradient is the norm's subgradient 0 (never the NaN of ``sqrt(var)``'s derivative there).
    """
    where_, given = kw.pop("where", None), _given_mean("std", kw.pop("mean", None))
    ddof = _ddof(ddof, kw)
    _check_kw("std", dict(kw, out=out))
    a = _in_dtype("std", a, dtype)
    if isinstance(axis, list):
        axis = tuple(axis)
    if where_ is not None:
        return _masked_spread(a, axis, ddof, keepdims, where_, "std", given)
    d = a - (mean(a, axis=axis, keepdims=True) if given is None else given)
    return norm(d, axis=axis, keepdims=bool(keepdims)) / own(float(np.sqrt(_count(a.shape, axis) - ddof)))


#: ufunc.reduce and ufunc.accumulate as the numpy function they compute (numpy's own
#: identities: np.add.reduce is np.sum with axis=0 by default, np.add.accumulate np.cumsum)
_REDUCE = {np.add: np.sum, np.multiply: np.prod, np.maximum: np.max, np.minimum: np.min}
_ACCUMULATE = {np.add: np.cumsum, np.multiply: np.cumprod}


def _running_extreme(a, axis, ufunc):
    """``np.maximum.accumulate(a, axis)`` (or minimum): ``y_j = max(a_0..a_j)``, the max reduction of
    each prefix, with its convention at ties (registry: the gradient of ``y_j`` split evenly among
    the tied elements, so ``y_j``'s gradient is ``np.max(a[:j + 1])``'s; a NaN stays, as numpy's).
    Without ties it is a gather of ``a`` at the position of each running extreme (each output's
    gradient to that one input); with ties, the max (min) over the masked prefixes, one row per j
    (O(n^2) memory along the axis, as cumprod). torch's cummax sends a tie's gradient to the last
    tied position and jax's cummax splits it by its scan tree (1/4, 1/4, 1/2 for three): both are
    subgradients too; this one is the project's max rule."""
    from ..registry import _FUNCTIONS

    x = a._value
    axis = int(axis) % x.ndim if x.ndim else 0
    run = ufunc.accumulate(x, axis=axis)
    cut = [slice(None)] * x.ndim
    cut[axis] = slice(1, None)
    later, before = x[tuple(cut)], np.delete(run, -1, axis=axis)
    if np.any(later == before) and not np.any(np.isnan(x)):  # a tie: the max reduction's even split
        n = x.shape[axis]
        moved = _FUNCTIONS[np.moveaxis](a, axis, -1)
        rows = _FUNCTIONS[np.where](np.tri(n, dtype=bool), _FUNCTIONS[np.expand_dims](moved, -2),
                                    np.asarray(-np.inf if ufunc is np.maximum else np.inf, x.dtype))
        ext = (max if ufunc is np.maximum else min)(rows, axis=-1)
        return _FUNCTIONS[np.moveaxis](ext, -1, axis)
    with np.errstate(invalid="ignore"):  # a new record (False at NaN), or the first NaN
        better = (later > before) if ufunc is np.maximum else (later < before)
    new = np.concatenate([np.ones_like(np.take(x, [0], axis=axis), dtype=bool),
                          better | (np.isnan(later) & ~np.isnan(before))], axis=axis)
    pos = np.arange(x.shape[axis]).reshape([-1 if k == axis else 1 for k in range(x.ndim)])
    idx = np.maximum.accumulate(np.where(new, pos, 0), axis=axis)
    return layout_as(_FUNCTIONS[np.take_along_axis](a, idx, axis=axis), run)  # (numpy's layout: tape44 H1)


def ufunc_method(ufunc, method, inputs, kwargs):
    """``np.add.reduce(t)``, ``np.multiply.accumulate(t)``, ``np.logaddexp.reduce(t)`` and
    ``np.<binary ufunc>.outer(a, b)`` on Tensors: the recorded numpy function each one is
    (sum, prod, max, min; cumsum, cumprod; a gather at the running argmax/argmin for
    maximum/minimum.accumulate; logsumexp; logcumsumexp for logaddexp.accumulate; the ufunc on ``a`` reshaped to
    ``a.shape + (1,) * b.ndim``, broadcast against ``b``), so their derivatives are those
    records'. numpy's defaults are kept: ``axis=0`` for reduce and accumulate.

    Raises
    ------
    TypeError
        For another method (``reduceat``, ``at``: in place) or a ufunc without a recorded
        reduction, naming the autoprop function to call instead.
    """
    from ..registry import _FUNCTIONS, _UFUNCS

    name = f"numpy.{ufunc.__name__}.{method}"
    if method in ("reduce", "accumulate") and len(inputs) == 1:
        kw = dict(kwargs)
        axis = kw.pop("axis", 0)
        if method == "reduce" and ufunc is np.logaddexp:  # (keepdims as numpy's: review26a)
            keepdims = bool(kw.pop("keepdims", False))
            _check_kw(name, kw)
            return logsumexp(_t(inputs[0]), axis=axis, keepdims=keepdims)
        target = (_REDUCE if method == "reduce" else _ACCUMULATE).get(ufunc)
        if target is not None:
            return _FUNCTIONS[target](inputs[0], axis=axis, **kw)
        if method == "accumulate" and ufunc is np.logaddexp:  # (torch's logcumsumexp)
            _check_kw(name, kw)
            return logcumsumexp(_t(inputs[0]), axis=axis)
        if method == "accumulate" and ufunc in (np.maximum, np.minimum):
            _check_kw(name, kw)
            return _running_extreme(_t(inputs[0]), axis, ufunc)
    if method == "outer" and len(inputs) == 2 and ufunc in _UFUNCS and ufunc.nin == 2:
        _check_kw(name, kwargs)
        a, b = _t(inputs[0]), _t(inputs[1])
        return ufunc(a.reshape(a.shape + (1,) * b.ndim), b)
    raise TypeError(
        f"autoprop cannot record {name} on a Tensor: only plain calls of ufuncs, reduce and "
        "accumulate of add/multiply/maximum/minimum/logaddexp of one array (and logaddexp.reduce) and outer of a "
        "recorded binary ufunc are. " + _method_hint(ufunc, method))


_REDUCE_NAME = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                np.logaddexp: "autoprop.scipy.special.logsumexp"}


def _method_hint(ufunc, method):
    """What to write instead of an unrecorded ``np.<ufunc>.<method>``, in recorded functions."""
    red = _REDUCE_NAME.get(ufunc, "sum")
    red = red if red.startswith("autoprop") else "np." + red
    if method == "reduceat":
        return (f"{ufunc.__name__}.reduceat(x, idx) reduces the slices between consecutive indices: "
                f"np.stack([{red}(x[i:j], axis=0) for i, j in zip(idx, [*idx[1:], len(x)])]) "
                "(numpy gives x[i] itself where i >= j).")
    if method == "at":
        return "ufunc.at writes in place, which a Tensor never does."
    if ufunc is np.hypot and method == "reduce":
        return "np.hypot.reduce(x) is np.linalg.norm(x, axis=0)."
    if ufunc in (np.fmax, np.fmin) and method == "reduce":
        return f"np.{ufunc.__name__}.reduce(x) is np.nan{ufunc.__name__[1:]}(x, axis=0)."
    return ("Write it with the recorded numpy functions (np.sum for np.add.reduce, np.cumsum for "
            "np.add.accumulate, broadcasting for outer).")
