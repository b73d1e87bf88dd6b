"""The log-sum-exp family: logsumexp (``np.logaddexp.reduce``, scipy's logsumexp), logsumexp with
weights of any sign (scipy's ``b=``, ``return_sign``), log_softmax and softmax. One record each (registry.defprim): forward, VJP, JVP,
derivation text. (The pair ``logaddexp``/``logaddexp2`` are elementwise: ``elementwise._pair_share``.)

Every derivative here is a softmax share exp(x_i - y) of an output y = log(sum exp(x)), and is
computed from the inputs as exp(x_i - m) / sum(exp(x - m)), m a max of the inputs (a constant:
the shares do not depend on it), never from the rounded output: where |x| > ~1e16 a float's
spacing exceeds log 2 and exp(x - y) loses the log of the count (1 to each of [1e20, 1e20], not
1/2; session 26's note). Derivations: ``lessons/04-softmax-cross-entropy.md``.
"""

from __future__ import annotations

import numpy as np

try:  # (logsumexp_b's value is scipy's; reached only from autoprop.scipy.special)
    import scipy.special as _ss
except ImportError:  # pragma: no cover
    _ss = None

from ..observe import own
from ..registry import defprim
from ._common import REDUCED, SAME, _all_finite, _keep_reduced, _shape, _value, times, unbroadcast
from .elementwise import where

__all__ = ["logsumexp", "logsumexp_b", "log_softmax", "softmax"]

_REDUCED = REDUCED


def _logsumexp_fwd(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _finite_max(v, axis):
    """The max of the values ``v`` along ``axis`` (keepdims), a non-finite max replaced by 0: the shift
    of a stable softmax, a constant (softmax does not depend on it, so no derivative is lost)."""
    m = np.max(v, axis=axis, keepdims=True)
    return m if _all_finite(m) else np.where(np.isfinite(m), m, np.zeros((), m.dtype))


def _softmax_share(x, axis):
    """softmax(x) along ``axis`` (int, tuple or None), ``x``'s shape: d logsumexp(x)/dx, from the inputs
    as exp(x - m) / sum(exp(x - m)), m the max (a constant): exact at any magnitude. (exp(x - y) from the
    rounded output y = logsumexp(x) gave 1 to each of [1e20, 1e20], not 1/2.) An input at -inf gets 0,
    also where every input is -inf (0/0); where inputs are +inf, the limit: they share 1 evenly, the
    finite ones get 0. Tensors are recorded (higher orders)."""
    xv = _value(x)
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
          "where inputs are +inf, the softmax's limit: they share 1 evenly, the finite ones get 0",
          source="special.logsumexp({x}{_kw})",
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
    m = np.max(x, axis=axis, keepdims=True)
    if not np.isfinite(m).all():
        m = np.where(np.isfinite(m), m, 0.0)
    s = x - m
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
    lambda g, ans, x, axis=-1: ans * (g - (g * ans).sum(axis=axis, keepdims=True)), reads=(("ans",),),
    jvp=lambda t, ans, x, axis=-1: ans * (t - np.sum(t * ans, axis=axis, keepdims=True)),
    jacobian="diag(p) - p p^T along the axis", vjp="dx = p * (g - sum(g * p))", shapes=SAME,
    source="special.softmax({x}, axis={axis})",
)
