"""The log-sum-exp family: logsumexp (``np.logaddexp.reduce``, scipy's logsumexp), its running form
logcumsumexp (``np.logaddexp.accumulate``), logsumexp with weights of any sign (scipy's ``b=``,
``return_sign``), log_softmax and softmax. One record each (registry.defprim): forward, VJP, JVP,
derivation text. (The pair ``logaddexp``/``logaddexp2`` are elementwise: ``elementwise._pair_share``.)

Every derivative here is a softmax share exp(x_i - y) of an output y = log(sum exp(x)), and is
computed from the inputs as exp(x_i - m) / sum(exp(x - m)), m a max of the inputs (a constant:
the shares do not depend on it), never from the rounded output: where |x| > ~1e16 a float's
spacing exceeds log 2 and exp(x - y) loses the log of the count (1 to each of [1e20, 1e20], not
1/2; session 26's note). Derivations: ``lessons/04-softmax-cross-entropy.md``.
"""

from __future__ import annotations

import numpy as np

from manualprop._extremes import softmax_vjp  # (numpy only; Tensors by dispatch)

try:  # (logsumexp_b's value is scipy's; reached only from autoprop.scipy.special)
    import scipy.special as _ss
except ImportError:  # pragma: no cover
    _ss = None

from ..observe import own
from ..registry import defprim
from ..tensor import Tensor
from ._common import REDUCED, SAME, _all_finite, _keep_reduced, _shape, _value, times, unbroadcast
from .elementwise import where

__all__ = ["logsumexp", "logcumsumexp", "logsumexp_b", "log_softmax", "softmax"]

_REDUCED = REDUCED


def _logsumexp_fwd(x, axis=None, keepdims=False):
    m = _finite_max(x, axis)
    s = np.sum(np.exp(x - m), axis=axis, keepdims=True)
    if 0 in np.shape(x):  # an empty slice: log 0 = -inf without numpy's divide warning, as scipy's
        with np.errstate(divide="ignore"):
            return _logsumexp_out(np.log(s) + m, axis, keepdims)
    return _logsumexp_out(np.log(s) + m, axis, keepdims)


def _logsumexp_out(out, axis, keepdims):
    return out if keepdims else np.squeeze(out, axis=axis)


def _finite_max(v, axis):
    """The max of the values ``v`` along ``axis`` (keepdims), a non-finite max replaced by 0: the shift
    of a stable softmax, a constant (softmax does not depend on it, so no derivative is lost). An empty
    slice has the max -inf (so 0: logsumexp of nothing is log 0 = -inf, as scipy's)."""
    if v.dtype.kind in "biu":  # integers: the float64 scipy promotes them to (-inf has no integer; review35 F1)
        v = v.astype(np.float64)
    m = np.maximum.reduce(v, axis=axis, keepdims=True, initial=-np.inf)  # (np.max without its Python wrapper)
    return m if _all_finite(m) else np.where(np.isfinite(m), m, np.zeros((), m.dtype))


def _softmax_share(x, axis):
    """softmax(x) along ``axis`` (int, tuple or None), ``x``'s shape: d logsumexp(x)/dx, from the inputs
    as exp(x - m) / sum(exp(x - m)), m the max (a constant): exact at any magnitude. (exp(x - y) from the
    rounded output y = logsumexp(x) gave 1 to each of [1e20, 1e20], not 1/2.) An input at -inf gets 0,
    also where every input is -inf (0/0); where inputs are +inf, the limit: they share 1 evenly, the
    finite ones get 0. Tensors are recorded (higher orders)."""
    xv = _value(x)
    if type(x) is np.ndarray and x.ndim and x.dtype.kind == "f":  # a plain backward: one temporary, in place
        w = np.subtract(x, _finite_max(xv, axis))
        np.exp(w, out=w)
        np.divide(w, np.add.reduce(w, axis=axis, keepdims=True), out=w)
    else:
        e = np.exp(x - _finite_max(xv, axis))
        w = e / np.sum(e, axis=axis, keepdims=True)
    if _all_finite(w):
        return w
    w = np.where(np.isneginf(xv), 0.0, w)
    top = np.isposinf(xv)
    k = np.sum(top, axis=axis, keepdims=True)
    return np.where(k > 0, top / np.maximum(k, 1), w) if np.any(top) else w


logsumexp = defprim(
    "logsumexp", _logsumexp_fwd,
    lambda g, ans, x, axis=None, keepdims=False: times(
        _keep_reduced(g, x.shape, axis, keepdims), _softmax_share(x, axis)),
    jvp=lambda t, ans, x, axis=None, keepdims=False: np.sum(
        times(t, _softmax_share(x, axis)), axis=axis, keepdims=keepdims),
    jacobian="softmax(x) along the axis", vjp="dx = g * softmax(x), softmax(x) = exp(x - m) / sum(exp(x - m))",
    shapes=_REDUCED,
    kinks="computed as m + log(sum(exp(x - m))), m = max: no overflow; the softmax from x too, not from the "
          "rounded output (exact at |x| = 1e20, where exp(x - y) gives [1, 1] for [1e20, 1e20]: HIPS "
          "autograd's and torch's); an input at -inf (masked) "
          "gets 0, also when every input is -inf (the result is -inf, the gradient 0, never nan); "
          "where inputs are +inf, the softmax's limit: they share 1 evenly, the finite ones get 0; an empty "
          "slice gives -inf (log 0, scipy's) and the empty gradient",
          source="special.logsumexp({x}{_kw})",
)


# --- the running logsumexp, y_j = log sum_(i <= j) exp(x_i) (np.logaddexp.accumulate; torch's logcumsumexp) ------
# dy_j/dx_i = exp(x_i - y_j) = exp(x_i - m_j) / s_j for i <= j, m_j the running max (a constant) and s_j =
# sum_(i <= j) exp(x_i - m_j): each prefix's softmax, from the inputs (not the rounded y: at x = [-1e20, -1e20,
# 1e20], exp(x - y) gives each prefix share 1). The VJP and the JVP apply this triangular matrix and its transpose
# blockwise (_LCSE_BLOCK entries along the axis: a dense triangle per block, the earlier or later blocks carried as
# one running sum rescaled by exp(m_p - m_j) <= 1): linear in g and in t (the transpose of each other), no exp
# above 1, O(n * block) memory. Session 26's record went through log|g|: linear only away from g = 0, its JVP
# came out 0 and it was reverted.
_LCSE_BLOCK = 64


def _lcse_consts(xv, axis):
    """Values along the last axis: the +inf mask, their count in each prefix (k), the running max m of the
    other inputs (non-decreasing; before the first finite input, that input's value; 0 in a lane without
    one), and the indices of the scan axis moved last."""
    xm = np.moveaxis(xv, axis, -1)
    top = np.isposinf(xm)
    k = np.cumsum(top, axis=-1)
    m = np.maximum.accumulate(np.where(top, -np.inf, xm), axis=-1) if xm.shape[-1] else xm
    if not _all_finite(m):
        first = np.min(np.where(np.isfinite(m), m, np.inf), axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, np.where(np.isfinite(first), first, 0.0))
    return top, k, m


def _mark(*operands):
    """:func:`~autoprop.core.observe.own` when an operand is a Tensor (an outer tape records: the constants
    made here from values are autoprop's own), else nothing (a plain backward keeps plain ndarrays)."""
    return own if any(isinstance(v, Tensor) for v in operands) else (lambda v: v)


def _lcse_block_exp(xb, mb, c):
    """exp(x_i - m_j) for i <= j in one block, 0 above the diagonal (masked before exp): [..., j, i]."""
    n = _shape(xb)[-1]
    low = where(np.tri(n, dtype=bool), xb[..., None, :], c(np.asarray(-np.inf, mb.dtype)))
    return np.exp(low - c(mb[..., :, None]))


def _lcse_lower(v, x, m):
    """L(v)_j = sum_(i <= j) v_i exp(x_i - m_j) along the last axis, block by block (the earlier blocks as
    the running L at the block's start, rescaled by exp(m_prev - m_j) <= 1)."""
    n, out, carry, c = m.shape[-1], [], None, _mark(v, x)
    for a in range(0, n, _LCSE_BLOCK):
        b = n if n - a < _LCSE_BLOCK else a + _LCSE_BLOCK  # (min is the module's reduction)
        mb = m[..., a:b]
        loc = np.sum(_lcse_block_exp(x[..., a:b], mb, c) * v[..., None, a:b], axis=-1)
        if carry is not None:
            loc = loc + carry[..., None] * c(np.exp(m[..., a - 1:a] - mb))
        out.append(loc)
        carry = loc[..., -1]
    return v * c(np.zeros((), m.dtype)) if not out else out[0] if len(out) == 1 else np.concatenate(out, axis=-1)


def _lcse_upper(h, x, m):
    """U(h)_i = sum_(j >= i) h_j exp(x_i - m_j), the transpose of :func:`_lcse_lower`, from the last block back
    (the later blocks as D = sum_(j >= b) h_j exp(m_(b-1) - m_j), factors <= 1)."""
    n, out, d, c = m.shape[-1], [], None, _mark(h, x)
    for a in reversed(range(0, n, _LCSE_BLOCK)):
        b = n if n - a < _LCSE_BLOCK else a + _LCSE_BLOCK  # (min is the module's reduction)
        mb, hb, xb = m[..., a:b], h[..., a:b], x[..., a:b]
        loc = np.sum(_lcse_block_exp(xb, mb, c) * hb[..., :, None], axis=-2)
        if d is not None:
            loc = loc + np.exp(xb - c(m[..., b - 1:b])) * d[..., None]
        if a:
            rest = np.sum(hb * c(np.exp(m[..., a - 1:a] - mb)), axis=-1)
            d = rest if d is None else rest + c(np.exp(m[..., a - 1] - m[..., b - 1])) * d
        out.insert(0, loc)
    return h * c(np.zeros((), m.dtype)) if not out else out[0] if len(out) == 1 else np.concatenate(out, axis=-1)


def _lcse_parts(x, axis):
    """x with the scan axis last and +inf masked to -inf; the +inf mask, k, m (:func:`_lcse_consts`) and
    s_j = L(1)_j (at least 1 where the prefix has a finite input; 1 where it has none: its terms are 0)."""
    top, k, m = _lcse_consts(_value(x), axis)
    c = _mark(x)
    xs = np.moveaxis(x, axis, -1)
    if top.any():
        xs = where(top, c(np.asarray(-np.inf, m.dtype)), xs)
    s = _lcse_lower(np.ones(m.shape, m.dtype), xs, m)
    sv = _value(s)
    return xs, top, k, m, (where(sv == 0, c(np.ones((), sv.dtype)), s) if np.any(sv == 0) else s)


def _lcse_vjp(g, ans, x, axis=0):
    xs, top, k, m, s = _lcse_parts(x, axis)
    gm, c = np.moveaxis(g, axis, -1), _mark(g, x)
    h = gm / s
    if top.any():  # a prefix with +inf inputs gives its gradient to them in even shares
        zero = c(np.zeros((), m.dtype))
        share = where(k > 0, gm / c(np.maximum(k, 1).astype(m.dtype)), zero)
        dx = where(top, np.flip(np.cumsum(np.flip(share, -1), axis=-1), -1), _lcse_upper(where(k > 0, zero, h), xs, m))
    else:
        dx = _lcse_upper(h, xs, m)
    return np.moveaxis(dx, -1, axis)


def _lcse_jvp(t, ans, x, axis=0):
    xs, top, k, m, s = _lcse_parts(x, axis)
    tm, c = np.moveaxis(t, axis, -1), _mark(t, x)
    if not top.any():
        return np.moveaxis(_lcse_lower(tm, xs, m) / s, -1, axis)
    zero = c(np.zeros((), m.dtype))
    dy = where(k > 0, np.cumsum(where(top, tm, zero), axis=-1) / c(np.maximum(k, 1).astype(m.dtype)),
               _lcse_lower(where(top, zero, tm), xs, m) / s)
    return np.moveaxis(dy, -1, axis)


def _lcse_fwd(x, axis=0):
    return np.logaddexp.accumulate(x, axis=axis)


logcumsumexp = defprim(
    "logcumsumexp", _lcse_fwd, _lcse_vjp, jvp=_lcse_jvp,
    jacobian="d y_j/dx_i = exp(x_i - y_j) = exp(x_i - m_j) / sum_(k <= j) exp(x_k - m_j) for i <= j, m_j the "
             "running max (the softmax of each prefix)",
    vjp="dx_i = sum_(j >= i) (g_j / s_j) exp(x_i - m_j), s_j = sum_(k <= j) exp(x_k - m_j): linear in g, "
        "blockwise (64 along the axis) with running sums rescaled by exp(m_p - m_j) <= 1",
    shapes="same as x (np.logaddexp.accumulate on a Tensor, axis=0 by default)",
    kinks="an input at -inf gets 0 (also in a prefix of -inf only, whose output is -inf); a prefix with +inf "
          "inputs gives its gradient to them in even shares (as logsumexp; torch: nan); the shares come from "
          "x - m, not the rounded y: x = [-1e20, -1e20, 1e20] with g = 1 gives [1.5, 0.5, 1] (torch's "
          "exp(x - y) gives [1, 1, 1], jax's cumlogsumexp [2, 1, 1])",
    source="np.logaddexp.accumulate({x}{_kw})",
)


# --- logsumexp with weights b of any sign: log|S|, S = sum(b exp(a)) (scipy's return_sign=True) ---------------
# d log|S| / da_i = b_i e^(a_i) / S, d/db_i = e^(a_i) / S = exp(a_i - m) / sum(b exp(a - m)) (_lse_b_factor): the
# weights' own derivative at b_i = 0 too (e^(a_i) / S, where jax's mask b == 0 -> a = -inf gives 0). sign(S) is
# piecewise constant: no gradient (as jax's return_sign).
def _lse_b_fwd(a, b, axis=None, keepdims=False):
    return _ss.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)[0]


def _lse_b_factor(ans, a, b, axis, keepdims):
    """e^a / S = exp(a - m) / sum(b exp(a - m)) in a and b's broadcast shape, m the max of a where b != 0 (a
    constant; 0 if none is finite): d log|S|/db, with sign(S) in it. From the inputs, not from the rounded
    log|S| (exp(a - log|S|) gave 1 to each of a = [1e20, 1e20], b = 1, not 1/2). NaN where S = 0 (log|S| =
    -inf: the derivative is +-inf by side)."""
    av, bv = _value(a), _value(b)
    shape = np.broadcast_shapes(np.shape(av), np.shape(bv))
    live = np.broadcast_to(bv, shape) != 0
    m = _finite_max(np.where(live, av, -np.inf), axis)
    e = np.exp(a - m)
    be = b * e if live.all() else where(live, b * e, own(np.zeros((), _value(e).dtype)))  # (0 * inf: 0)
    s = np.sum(be, axis=axis, keepdims=True)
    sv = _value(s)
    if np.any(sv == 0):
        s = where(sv == 0, own(np.asarray(np.nan, sv.dtype)), s)
    return e / s


def _lse_b_da(ans, a, b, axis, keepdims):
    w = b * _lse_b_factor(ans, a, b, axis, keepdims)
    zero = _value(b) == 0  # (b_i = 0: 0, also where exp(a_i - m) overflows)
    return where(zero, own(np.zeros((), w.dtype)), w) if np.any(zero) else w


logsumexp_b = defprim(
    "logsumexp_b", _lse_b_fwd,
    lambda g, ans, a, b, axis=None, keepdims=False: unbroadcast(times(
        _keep_reduced(g, np.broadcast_shapes(_shape(a), _shape(b)), axis, keepdims),
        _lse_b_da(ans, a, b, axis, keepdims)), _shape(a)),
    lambda g, ans, a, b, axis=None, keepdims=False: unbroadcast(times(
        _keep_reduced(g, np.broadcast_shapes(_shape(a), _shape(b)), axis, keepdims),
        _lse_b_factor(ans, a, b, axis, keepdims)), _shape(b)),
    jvp=(lambda t, ans, a, b, axis=None, keepdims=False: np.sum(
        times(t, _lse_b_da(ans, a, b, axis, keepdims)), axis=axis, keepdims=keepdims),
         lambda t, ans, a, b, axis=None, keepdims=False: np.sum(
        times(t, _lse_b_factor(ans, a, b, axis, keepdims)), axis=axis, keepdims=keepdims)),
    jacobian="log|S|, S = sum(b exp(a)) along the axis: d/da = b e^a / S, d/db = e^a / S (sign(S) no gradient)",
    vjp="da = g b w, db = g w, w = exp(a - m) / sum(b exp(a - m)), m = max of a where b != 0 (exact at any "
        "magnitude)", shapes="a, b broadcast; " + _REDUCED,
    kinks="S = 0 (log|S| = -inf): nan (+-inf by side); b_i = 0: d/da_i = 0 and d/db_i = e^(a_i) / S (jax gives 0 there); "
          "the value is scipy's logsumexp(a, b=b, return_sign=True)[0]",
    source="special.logsumexp({0}, b={1}{_kw}, return_sign=True)[0]",
)


def _log_softmax_fwd(x, axis=-1):
    s = x - _finite_max(x, axis)
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


log_softmax = defprim(
    "log_softmax", _log_softmax_fwd,
    lambda g, ans, x, axis=-1: g - np.exp(ans) * g.sum(axis=axis, keepdims=True), reads=(("ans",),),
    jvp=lambda t, ans, x, axis=-1: t - np.sum(t * np.exp(ans), axis=axis, keepdims=True),
    jacobian="I - 1 softmax(x)^T along the axis", vjp="dx = g - softmax(x) * sum(g)",
    shapes=SAME, kinks="stable: x - logsumexp(x)",
    source="special.log_softmax({x}, axis={axis})",
)
softmax = defprim(
    "softmax",
    lambda x, axis=-1: np.exp(_log_softmax_fwd(x, axis=axis)),
    lambda g, ans, x, axis=-1: softmax_vjp(ans, g, axis), reads=(("ans",),),
    jvp=lambda t, ans, x, axis=-1: softmax_vjp(ans, t, axis),
    jacobian="diag(p) - p p^T along the axis",
    vjp="dx = p * (g - sum(g * p)), g shifted by g at the row's largest p (no cancellation when p is one-hot)",
    shapes=SAME,
    source="special.softmax({x}, axis={axis})",
)
