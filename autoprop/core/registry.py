"""The primitive registry: one table mapping each primitive to its forward and VJPs.

Each entry says how to compute the operation on numpy arrays (``fwd``) and, for every
differentiable argument ``i``, its vector-Jacobian product ``vjp_i(g, ans, *args,
**kwargs)``: given the upstream gradient ``g = dL/d(ans)`` it returns ``dL/d(args[i])``
with ``args[i]``'s shape. The VJPs are written with numpy functions and operators
that work both on ndarrays (plain backward pass: nothing recorded) and on Tensors
(an outer tape records the backward pass for higher-order derivatives): that is the
whole trick behind nested tapes.

The derivations are in ``lessons/``; :func:`explain` prints the formula stored with
each entry. Conventions at kinks and ties (stated once, tested in
``tests/test_autoprop_conventions.py``):

* ``relu'(0) = 0``, ``abs'(0) = 0``, ``sign`` and comparisons pass no gradient.
* ``maximum(a, b)`` / ``minimum`` with ``a == b``: each side gets half (TensorFlow's and
  JAX's rule), so the routed gradient sums to the upstream value whatever the order.
* ``max`` / ``min`` reductions with ties: the gradient is split evenly among the tied
  elements.
"""

from __future__ import annotations

import builtins

import numpy as np

from .tape import apply
from .tensor import Tensor


class Primitive:
    """A differentiable (or explicitly non-differentiable) operation.

    Parameters
    ----------
    name : str
    fwd : callable
        Computes the result from numpy values.
    vjps : tuple of callables or None
        One VJP per positional argument (None for an argument that is never
        differentiable); ``vjps=None`` marks the whole primitive non-differentiable:
        its result is never recorded, so gradients through it are None.
    doc : dict
        ``jacobian``, ``vjp``, ``shapes``, ``kinks``: the derivative in words and formula.
    """

    __slots__ = ("name", "fwd", "vjps", "doc")

    def __init__(self, name, fwd, vjps, doc):
        self.name = name
        self.fwd = fwd
        self.vjps = vjps
        self.doc = doc

    def __call__(self, *args, **kwargs):
        return apply(self, args, kwargs)

    def __repr__(self):
        return f"<autoprop primitive {self.name}>"


#: name -> Primitive: the one table of primitives and their VJPs.
PRIMITIVES: dict[str, Primitive] = {}


def defprim(name, fwd, *vjps, jacobian="", vjp="", shapes="", kinks="none (smooth)"):
    """Register a primitive with one VJP per positional argument; return it."""
    prim = Primitive(
        name,
        fwd,
        tuple(vjps),
        {"jacobian": jacobian, "vjp": vjp, "shapes": shapes, "kinks": kinks},
    )
    PRIMITIVES[name] = prim
    return prim


def defnondiff(name, fwd, why):
    """Register a primitive that passes no gradient (its output is never recorded)."""
    prim = Primitive(
        name,
        fwd,
        None,
        {"jacobian": "zero almost everywhere / undefined", "vjp": "none: " + why, "shapes": "", "kinks": ""},
    )
    PRIMITIVES[name] = prim
    return prim


# --- helpers used inside VJPs (work on ndarrays and on Tensors) ----------------------
def _shape(x):
    return x.shape if hasattr(x, "shape") else ()


def unbroadcast(g, shape):
    """Sum ``g`` over the axes that broadcasting added or stretched, back to ``shape``.

    This is the VJP of broadcasting: an input of shape (4,) added to a (3, 4) array
    was used 3 times, so its gradient is the sum of the 3 rows (``lessons/00-chain-rule.md``).
    """
    gs = _shape(g)
    if gs == shape:
        return g
    extra = len(gs) - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and _shape(g)[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def _keep_reduced(g, shape, axis, keepdims):
    """Reshape a reduction's gradient so it broadcasts against the input again."""
    if keepdims:
        return g
    if axis is None:
        return g.reshape((1,) * len(shape)) if len(shape) else g
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = {a % len(shape) for a in axes}
    return g.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))


def _count(shape, axis):
    if axis is None:
        return int(np.prod(shape)) if len(shape) else 1
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return int(np.prod([shape[a] for a in axes]))


def _mT(x):
    return x.T if x.ndim == 2 else np.swapaxes(x, -1, -2)


# --- elementwise binary (numpy broadcasting; VJPs sum back to each input's shape) ----
_BCAST = "broadcasting: each gradient is summed back to its input's shape"

add = defprim(
    "add", np.add,
    lambda g, ans, a, b: unbroadcast(g, _shape(a)),
    lambda g, ans, a, b: unbroadcast(g, _shape(b)),
    jacobian="d(a+b)/da = I, d(a+b)/db = I", vjp="da = g, db = g", shapes=_BCAST,
)
subtract = defprim(
    "subtract", np.subtract,
    lambda g, ans, a, b: unbroadcast(g, _shape(a)),
    lambda g, ans, a, b: unbroadcast(-g, _shape(b)),
    jacobian="d(a-b)/da = I, d(a-b)/db = -I", vjp="da = g, db = -g", shapes=_BCAST,
)
multiply = defprim(
    "multiply", np.multiply,
    lambda g, ans, a, b: unbroadcast(g * b, _shape(a)),
    lambda g, ans, a, b: unbroadcast(g * a, _shape(b)),
    jacobian="d(a*b)/da = diag(b), d(a*b)/db = diag(a)", vjp="da = g * b, db = g * a",
    shapes=_BCAST,
)
divide = defprim(
    "divide", np.true_divide,
    lambda g, ans, a, b: unbroadcast(g / b, _shape(a)),
    lambda g, ans, a, b: unbroadcast(-g * ans / b, _shape(b)),
    jacobian="d(a/b)/da = diag(1/b), d(a/b)/db = diag(-a/b^2)",
    vjp="da = g / b, db = -g * (a/b) / b", shapes=_BCAST, kinks="b = 0: inf/nan as numpy",
)


def _pow_vjp_a(g, ans, a, b):
    # b * a**(b-1), written without dividing by a (so 0**3 gives 0, not nan)
    return unbroadcast(g * b * a ** (b - 1), _shape(a))


def _pow_vjp_b(g, ans, a, b):
    # ans * log(a); where a == 0 the factor ans is 0 for b > 0, so use log(1) = 0 there
    safe = np.where(a == 0, 1.0, a) if isinstance(a, (np.ndarray, Tensor)) else (a if a != 0 else 1.0)
    return unbroadcast(g * ans * np.log(safe), _shape(b))


power = defprim(
    "power", np.power, _pow_vjp_a, _pow_vjp_b,
    jacobian="d(a^b)/da = diag(b a^(b-1)), d(a^b)/db = diag(a^b log a)",
    vjp="da = g * b * a**(b-1), db = g * a**b * log(a)", shapes=_BCAST,
    kinks="d/db at a = 0 is taken as 0 (log(0) replaced by 0); a < 0 gives nan for d/db",
)


def _tie_share(a, b):
    """1 where a > b, 0.5 where a == b, 0 where a < b (the even split at ties)."""
    return (a > b) * 1.0 + (a == b) * 0.5


maximum = defprim(
    "maximum", np.maximum,
    lambda g, ans, a, b: unbroadcast(g * _tie_share(a, b), _shape(a)),
    lambda g, ans, a, b: unbroadcast(g * _tie_share(b, a), _shape(b)),
    jacobian="1 to the larger argument", vjp="da = g * [a > b] + 0.5 g [a == b]",
    shapes=_BCAST, kinks="a == b: each side gets half of g",
)
minimum = defprim(
    "minimum", np.minimum,
    lambda g, ans, a, b: unbroadcast(g * _tie_share(b, a), _shape(a)),
    lambda g, ans, a, b: unbroadcast(g * _tie_share(a, b), _shape(b)),
    jacobian="1 to the smaller argument", vjp="da = g * [a < b] + 0.5 g [a == b]",
    shapes=_BCAST, kinks="a == b: each side gets half of g",
)


logaddexp = defprim(
    "logaddexp", np.logaddexp,
    lambda g, ans, a, b: unbroadcast(g * np.exp(a - ans), _shape(a)),
    lambda g, ans, a, b: unbroadcast(g * np.exp(b - ans), _shape(b)),
    jacobian="d log(e^a + e^b)/da = e^a / (e^a + e^b) = sigmoid(a - b)",
    vjp="da = g * exp(a - y), db = g * exp(b - y), y = logaddexp(a, b)", shapes=_BCAST,
    kinks="none: smooth everywhere; softplus(x) = logaddexp(0, x) has derivative sigmoid(x), 0.5 at 0",
)


def _matmul_vjp_a(g, ans, a, b):
    if b.ndim == 1:
        if a.ndim == 1:
            return g * b
        return unbroadcast(np.expand_dims(g, -1) * b, a.shape)
    if a.ndim == 1:
        return unbroadcast(np.sum(b * np.expand_dims(g, -2), axis=-1), a.shape)
    return unbroadcast(g @ _mT(b), a.shape)


def _matmul_vjp_b(g, ans, a, b):
    if a.ndim == 1:
        if b.ndim == 1:
            return g * a
        return unbroadcast(np.expand_dims(a, -1) * np.expand_dims(g, -2), b.shape)
    if b.ndim == 1:
        return unbroadcast(np.sum(a * np.expand_dims(g, -1), axis=-2), b.shape)
    if type(b) is np.ndarray and b.ndim == 2 and a.ndim == 2 and not b.flags.c_contiguous:
        # b is a transposed view (x @ W.T): give the gradient b's layout, so the VJP
        # of the transpose hands W a contiguous dW = g.T @ a (same flops)
        return (g.T @ a).T
    return unbroadcast(_mT(a) @ g, b.shape)


matmul = defprim(
    "matmul", np.matmul, _matmul_vjp_a, _matmul_vjp_b,
    jacobian="C = A B: dC_ij/dA_ik = B_kj, dC_ij/dB_kj = A_ik",
    vjp="dA = g @ B^T, dB = A^T @ g (1-D operands: outer products; batch axes summed)",
    shapes="A (..., n, k), B (..., k, m) -> (..., n, m); a 1-D operand is a vector",
)

# --- elementwise unary ---------------------------------------------------------------
negative = defprim("negative", np.negative, lambda g, ans, x: -g,
                   jacobian="-I", vjp="dx = -g", shapes="same as x")
exp = defprim("exp", np.exp, lambda g, ans, x: g * ans,
              jacobian="diag(exp(x))", vjp="dx = g * exp(x) (reuses the output)",
              shapes="same as x")
log = defprim("log", np.log, lambda g, ans, x: g / x,
              jacobian="diag(1/x)", vjp="dx = g / x", shapes="same as x",
              kinks="x = 0: inf; x < 0: nan (as numpy)")
sqrt = defprim("sqrt", np.sqrt, lambda g, ans, x: g * 0.5 / ans,
               jacobian="diag(1 / (2 sqrt(x)))", vjp="dx = g / (2 sqrt(x))", shapes="same as x",
               kinks="x = 0: inf (and 0 * inf = nan downstream); see ap.norm for a safe norm")
square = defprim("square", np.square, lambda g, ans, x: g * 2.0 * x,
                 jacobian="diag(2x)", vjp="dx = 2 x g", shapes="same as x")
tanh = defprim("tanh", np.tanh, lambda g, ans, x: g * (1.0 - ans * ans),
               jacobian="diag(1 - tanh(x)^2)", vjp="dx = g * (1 - y^2), y = tanh(x)",
               shapes="same as x")


def _sigmoid_fwd(x):
    # exp(-log(1 + exp(-x))): no overflow for large |x| (exp underflows to 0 quietly)
    return np.exp(-np.logaddexp(0.0, -x))


sigmoid = defprim("sigmoid", _sigmoid_fwd, lambda g, ans, x: g * ans * (1.0 - ans),
                  jacobian="diag(s(1-s)), s = sigmoid(x)", vjp="dx = g * s * (1 - s)",
                  shapes="same as x")
relu = defprim("relu", lambda x: np.maximum(x, 0), lambda g, ans, x: g * (x > 0),
               jacobian="diag([x > 0])", vjp="dx = g * [x > 0]", shapes="same as x",
               kinks="relu'(0) = 0")
absolute = defprim("absolute", np.abs, lambda g, ans, x: g * np.sign(x),
                   jacobian="diag(sign(x))", vjp="dx = g * sign(x)", shapes="same as x",
                   kinks="abs'(0) = 0")
sin = defprim("sin", np.sin, lambda g, ans, x: g * np.cos(x),
              jacobian="diag(cos x)", vjp="dx = g cos(x)", shapes="same as x")
cos = defprim("cos", np.cos, lambda g, ans, x: -g * np.sin(x),
              jacobian="diag(-sin x)", vjp="dx = -g sin(x)", shapes="same as x")
log1p = defprim("log1p", np.log1p, lambda g, ans, x: g / (1.0 + x),
                jacobian="diag(1/(1+x))", vjp="dx = g / (1 + x)", shapes="same as x")
expm1 = defprim("expm1", np.expm1, lambda g, ans, x: g * (ans + 1.0),
                jacobian="diag(exp(x))", vjp="dx = g * (y + 1)", shapes="same as x")


try:  # scipy ships with scikit-learn; math.erf is the fallback
    from scipy.special import erf as _erf
    from scipy.special import erfc as _erfc
except ImportError:  # pragma: no cover
    import math

    _erf = np.vectorize(math.erf, otypes=[np.float64])
    _erfc = np.vectorize(math.erfc, otypes=[np.float64])

_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
erf = defprim("erf", lambda x: np.asarray(_erf(x), dtype=np.result_type(x, np.float32)),
              lambda g, ans, x: g * _TWO_OVER_SQRT_PI * np.exp(-(x * x)),
              jacobian="diag(2/sqrt(pi) exp(-x^2))", vjp="dx = g * 2/sqrt(pi) * exp(-x^2)",
              shapes="same as x")
erfc = defprim("erfc", lambda x: np.asarray(_erfc(x), dtype=np.result_type(x, np.float32)),
               lambda g, ans, x: -g * _TWO_OVER_SQRT_PI * np.exp(-(x * x)),
               jacobian="diag(-2/sqrt(pi) exp(-x^2))", vjp="dx = -g * 2/sqrt(pi) * exp(-x^2)",
               shapes="same as x", kinks="keeps relative accuracy for large x, where 1 - erf(x) cancels")


def _cast_vjp(g, ans, x, dtype):
    return g.astype(x.dtype)


cast = defprim("cast", lambda x, dtype: np.asarray(x).astype(dtype), _cast_vjp,
               jacobian="I (between float dtypes)", vjp="dx = g cast back to x's dtype",
               shapes="same as x",
               kinks="a cast to an integer or bool dtype is not differentiable: no gradient")

# --- reductions ----------------------------------------------------------------------


def _sum_vjp(g, ans, x, axis=None, keepdims=False):
    return np.broadcast_to(_keep_reduced(g, x.shape, axis, keepdims), x.shape)


def _mean_vjp(g, ans, x, axis=None, keepdims=False):
    return np.broadcast_to(_keep_reduced(g, x.shape, axis, keepdims), x.shape) / _count(x.shape, axis)


def _extreme_vjp(g, ans, x, axis=None, keepdims=False):
    a = _keep_reduced(ans, x.shape, axis, keepdims)
    mask = x == a
    return _keep_reduced(g, x.shape, axis, keepdims) * mask / mask.sum(axis=axis, keepdims=True)


sum = defprim("sum", lambda x, axis=None, keepdims=False: np.sum(x, axis=axis, keepdims=keepdims),
              _sum_vjp, jacobian="a row of ones per output element",
              vjp="dx = g broadcast back over the summed axes",
              shapes="x (...); reduced axes removed unless keepdims")
mean = defprim("mean", lambda x, axis=None, keepdims=False: np.mean(x, axis=axis, keepdims=keepdims),
               _mean_vjp, jacobian="1/n per summed element",
               vjp="dx = g / n broadcast back (n = number of averaged elements)",
               shapes="x (...); reduced axes removed unless keepdims")
max = defprim("max", lambda x, axis=None, keepdims=False: np.max(x, axis=axis, keepdims=keepdims),
              _extreme_vjp, jacobian="1 at the maximal element",
              vjp="dx = g at the argmax, 0 elsewhere", shapes="x (...); reduced axes removed",
              kinks="ties: g split evenly among the tied maxima")
min = defprim("min", lambda x, axis=None, keepdims=False: np.min(x, axis=axis, keepdims=keepdims),
              _extreme_vjp, jacobian="1 at the minimal element",
              vjp="dx = g at the argmin, 0 elsewhere", shapes="x (...); reduced axes removed",
              kinks="ties: g split evenly among the tied minima")


def _logsumexp_fwd(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


logsumexp = defprim(
    "logsumexp", _logsumexp_fwd,
    lambda g, ans, x, axis=None, keepdims=False: _keep_reduced(g, x.shape, axis, keepdims)
    * np.exp(x - _keep_reduced(ans, x.shape, axis, keepdims)),
    jacobian="softmax(x) along the axis", vjp="dx = g * softmax(x)",
    shapes="x (...); reduced axes removed unless keepdims",
    kinks="computed as m + log(sum(exp(x - m))), m = max: no overflow",
)
def _log_softmax_fwd(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    if not np.isfinite(m).all():
        m = np.where(np.isfinite(m), m, 0.0)
    s = x - m
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


log_softmax = defprim(
    "log_softmax", _log_softmax_fwd,
    lambda g, ans, x, axis=-1: g - np.exp(ans) * g.sum(axis=axis, keepdims=True),
    jacobian="I - 1 softmax(x)^T along the axis", vjp="dx = g - softmax(x) * sum(g)",
    shapes="same as x", kinks="stable: x - logsumexp(x)",
)
softmax = defprim(
    "softmax",
    lambda x, axis=-1: np.exp(_log_softmax_fwd(x, axis=axis)),
    lambda g, ans, x, axis=-1: ans * (g - (g * ans).sum(axis=axis, keepdims=True)),
    jacobian="diag(p) - p p^T along the axis", vjp="dx = p * (g - sum(g * p))",
    shapes="same as x",
)

# --- shape ---------------------------------------------------------------------------


def _inverse_perm(axes, ndim):
    if axes is None:
        return None
    inv = [0] * ndim
    for i, a in enumerate(axes):
        inv[a % ndim] = i
    return tuple(inv)


reshape = defprim("reshape", lambda x, shape: np.reshape(x, shape),
                  lambda g, ans, x, shape: g.reshape(x.shape),
                  jacobian="a permutation-free identity", vjp="dx = g reshaped to x's shape",
                  shapes="any shape with the same size")
transpose = defprim("transpose", lambda x, axes=None: np.transpose(x, axes),
                    lambda g, ans, x, axes=None: np.transpose(g, _inverse_perm(axes, x.ndim)),
                    jacobian="a permutation", vjp="dx = g transposed back (inverse permutation)",
                    shapes="axes permuted")
broadcast_to = defprim("broadcast_to", lambda x, shape: np.broadcast_to(x, shape),
                       lambda g, ans, x, shape: unbroadcast(g, _shape(x)),
                       jacobian="copies", vjp="dx = g summed over the broadcast axes",
                       shapes="x broadcast to shape")
squeeze = defprim("squeeze", lambda x, axis=None: np.squeeze(x, axis=axis),
                  lambda g, ans, x, axis=None: g.reshape(x.shape),
                  jacobian="identity", vjp="dx = g reshaped", shapes="length-1 axes removed")


def _where_fwd(cond, x, y):
    return np.where(cond, x, y)


where = defprim(
    "where", _where_fwd,
    None,
    lambda g, ans, c, x, y: unbroadcast(np.where(c, g, 0.0), _shape(x)),
    lambda g, ans, c, x, y: unbroadcast(np.where(c, 0.0, g), _shape(y)),
    jacobian="1 to the chosen branch", vjp="dx = g where cond, dy = g where not cond",
    shapes=_BCAST, kinks="the condition gets no gradient",
)

# --- indexing ------------------------------------------------------------------------


def _is_advanced(key):
    parts = key if isinstance(key, tuple) else (key,)
    return builtins.any(isinstance(k, (np.ndarray, list)) for k in parts)


def _index_add_fwd(g, key, shape):
    z = np.zeros(shape, dtype=np.result_type(g))
    if _is_advanced(key):
        np.add.at(z, key, g)  # repeated indices accumulate
    else:
        z[key] = g
    return z


index_add = defprim(
    "index_add", _index_add_fwd,
    lambda gg, ans, g, key, shape: gg[key],
    jacobian="scatter: the transpose of x[key]", vjp="dg = gg[key]",
    shapes="g (x[key].shape) -> shape",
)
def _getitem_vjp(g, ans, x, key):
    if isinstance(g, Tensor):  # an outer tape records the backward pass
        return index_add(g, key=key, shape=x.shape)
    return _index_add_fwd(g, key, x.shape)


getitem = defprim(
    "getitem", lambda x, key: x[key], _getitem_vjp,
    jacobian="a selection matrix", vjp="dx = zeros with g added at key (repeats accumulate)",
    shapes="x[key]", kinks="repeated integer indices accumulate their gradients",
)


def _plain_key(key):
    """Indices may be Tensors (a boolean mask from a comparison): use their values."""
    if isinstance(key, tuple):
        return tuple(_plain_key(k) for k in key)
    if isinstance(key, Tensor):
        return key._value
    if isinstance(key, list):
        return np.asarray(key)
    return key


_getitem_prim = getitem


def getitem(x, key):  # noqa: F811  (the public call converts the key, then applies the primitive)
    """``x[key]`` for Tensors: ints, slices, None, Ellipsis, boolean masks, integer arrays."""
    return _getitem_prim(x, key=_plain_key(key))


# --- non-differentiable --------------------------------------------------------------
_CMP = "comparisons are piecewise constant"
less = defnondiff("less", np.less, _CMP)
less_equal = defnondiff("less_equal", np.less_equal, _CMP)
greater = defnondiff("greater", np.greater, _CMP)
greater_equal = defnondiff("greater_equal", np.greater_equal, _CMP)
equal = defnondiff("equal", np.equal, _CMP)
not_equal = defnondiff("not_equal", np.not_equal, _CMP)
sign = defnondiff("sign", np.sign, "sign is piecewise constant (derivative 0, undefined at 0)")
argmax = defnondiff("argmax", lambda x, axis=None: np.argmax(x, axis=axis), "an index is an integer")
argmin = defnondiff("argmin", lambda x, axis=None: np.argmin(x, axis=axis), "an index is an integer")
floor = defnondiff("floor", np.floor, "floor is piecewise constant")
ceil = defnondiff("ceil", np.ceil, "ceil is piecewise constant")
round = defnondiff("round", np.round, "round is piecewise constant")
logical_and = defnondiff("logical_and", np.logical_and, "booleans are not differentiable")
logical_or = defnondiff("logical_or", np.logical_or, "booleans are not differentiable")
logical_not = defnondiff("logical_not", np.logical_not, "booleans are not differentiable")
isfinite = defnondiff("isfinite", np.isfinite, "booleans are not differentiable")
isnan = defnondiff("isnan", np.isnan, "booleans are not differentiable")


# --- numpy dispatch ------------------------------------------------------------------
_UFUNCS = {
    np.add: add, np.subtract: subtract, np.multiply: multiply, np.true_divide: divide,
    np.power: power, np.maximum: maximum, np.minimum: minimum, np.matmul: matmul,
    np.negative: negative, np.exp: exp, np.log: log, np.sqrt: sqrt, np.square: square,
    np.tanh: tanh, np.absolute: absolute, np.sin: sin, np.cos: cos, np.log1p: log1p,
    np.expm1: expm1, np.logaddexp: logaddexp,
    np.less: less, np.less_equal: less_equal, np.greater: greater,
    np.greater_equal: greater_equal, np.equal: equal, np.not_equal: not_equal,
    np.sign: sign, np.floor: floor, np.ceil: ceil, np.logical_and: logical_and,
    np.logical_or: logical_or, np.logical_not: logical_not, np.isfinite: isfinite,
    np.isnan: isnan,
}


def _positive(x):
    return x


def _expand_dims(a, axis):
    shape = list(_shape(a))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = len(shape) + len(axes)
    for ax in sorted(x % nd for x in axes):
        shape.insert(ax, 1)
    return reshape(a, shape=tuple(shape))


def _swapaxes(a, axis1, axis2):
    axes = list(range(a.ndim))
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return transpose(a, axes=tuple(axes))


def _no_out(name, kwargs):
    if kwargs.get("out") is not None:
        raise TypeError(
            f"autoprop cannot record numpy.{name}(..., out=...): writing into an existing "
            "array is an in-place update, which the tape cannot undo in the backward pass. "
            f"Drop out= and use the returned tensor: y = np.{name}(...)."
        )


def _reduction(prim, name):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        _no_out(name, {"out": out})
        if isinstance(axis, list):
            axis = tuple(axis)
        return prim(a, axis=axis, keepdims=bool(keepdims))
    fn.__name__ = name
    return fn


_FUNCTIONS = {
    np.sum: _reduction(sum, "sum"),
    np.mean: _reduction(mean, "mean"),
    np.max: _reduction(max, "max"),
    np.amax: _reduction(max, "amax"),
    np.min: _reduction(min, "min"),
    np.amin: _reduction(min, "amin"),
    np.reshape: lambda a, shape=None, *args, **kw: reshape(a, shape=tuple(np.atleast_1d(shape)) if not isinstance(shape, int) else (shape,)),
    np.transpose: lambda a, axes=None: transpose(a, axes=None if axes is None else tuple(axes)),
    np.broadcast_to: lambda a, shape, **kw: broadcast_to(a, shape=tuple(shape) if not isinstance(shape, int) else (shape,)),
    np.squeeze: lambda a, axis=None: squeeze(a, axis=axis),
    np.expand_dims: _expand_dims,
    np.swapaxes: _swapaxes,
    np.where: lambda c, x=None, y=None: where(c, x, y),
    np.argmax: lambda a, axis=None, **kw: argmax(a, axis=axis),
    np.argmin: lambda a, axis=None, **kw: argmin(a, axis=axis),
    np.round: lambda a, decimals=0, **kw: round(a),
    np.shape: lambda a: _shape(a),
    np.ndim: lambda a: len(_shape(a)),
    np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis],
}


def dispatch_ufunc(ufunc, method, inputs, kwargs):
    """Route ``np.<ufunc>(tensor, ...)`` to the registered primitive, or explain why not."""
    name = ufunc.__name__
    if method != "__call__":
        raise TypeError(
            f"autoprop cannot record numpy.{name}.{method} on a Tensor: only plain calls "
            f"of ufuncs are recorded. Use the autoprop function instead (for example "
            f"ap.sum for np.add.reduce)."
        )
    _no_out(name, kwargs)
    if ufunc is np.positive:
        return inputs[0]
    prim = _UFUNCS.get(ufunc)
    if prim is None:
        raise TypeError(
            f"autoprop cannot record numpy.{name} on a Tensor: it has no registered "
            "derivative (VJP), so a tape could not differentiate through it. Use a "
            "supported function (see autoprop.PRIMITIVES), or ap.numpy_function(...) to "
            "run it as plain numpy with no gradient."
        )
    return prim(*inputs)


def dispatch_function(func, args, kwargs):
    """Route ``np.<function>(tensor, ...)`` to autoprop, or explain why it cannot."""
    impl = _FUNCTIONS.get(func)
    if impl is None:
        raise TypeError(
            f"autoprop cannot record numpy.{func.__name__} on a Tensor: it has no "
            "registered derivative (VJP). Use a supported function (see "
            "autoprop.numpy), or ap.numpy_function(...) to run it as plain numpy with "
            "no gradient."
        )
    return impl(*args, **kwargs)


# =====================================================================================
# --- layer zoo: windows (conv / pooling) and gathers along an axis -------------------
# Used by autoprop.layers.conv (Conv2D, MaxPool2D, AvgPool2D). Each primitive comes
# with its transpose as a second primitive, so the VJPs are themselves recorded when an
# outer tape is open (higher-order derivatives), as index_add does for getitem.
# Derivations: lessons/20-conv2d.md (patches, col2im), lessons/21-pooling.md (gather).
# =====================================================================================


def _pair(v):
    if isinstance(v, (tuple, list)):
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _window_spec(kernel_size, stride, padding, dilation):
    return _pair(kernel_size), _pair(stride), _pair(padding), _pair(dilation)


def _extract_patches_fwd(x, kernel_size, stride=1, padding=0, dilation=1):
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = _window_spec(kernel_size, stride, padding, dilation)
    x = np.asarray(x)
    if ph or pw:
        x = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(ph, ph), (pw, pw)])
    v = np.lib.stride_tricks.sliding_window_view(
        x, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(-2, -1)
    )
    v = v[..., ::sh, ::sw, ::dh, ::dw]  # (..., Ho, Wo, kh, kw), a strided view
    return np.ascontiguousarray(np.moveaxis(v, (-2, -1), (-4, -3)))


def _scatter_patches_fwd(g, x_shape, kernel_size, stride=1, padding=0, dilation=1):
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = _window_spec(kernel_size, stride, padding, dilation)
    g = np.asarray(g)
    H, W = x_shape[-2:]
    Ho, Wo = g.shape[-2:]
    out = np.zeros(g.shape[:-4] + (H + 2 * ph, W + 2 * pw), dtype=g.dtype)
    for p in range(kh):
        rows = slice(p * dh, p * dh + sh * (Ho - 1) + 1, sh)
        for q in range(kw):
            out[..., rows, q * dw : q * dw + sw * (Wo - 1) + 1 : sw] += g[..., p, q, :, :]
    if ph or pw:
        out = out[..., ph : ph + H, pw : pw + W]
    return out


def _extract_patches_vjp(g, ans, x, kernel_size, stride=1, padding=0, dilation=1):
    spec = dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
    if isinstance(g, Tensor):  # an outer tape records the backward pass
        return scatter_patches(g, x_shape=tuple(x.shape), **spec)
    return _scatter_patches_fwd(g, tuple(x.shape), **spec)


def _scatter_patches_vjp(gg, ans, g, x_shape, kernel_size, stride=1, padding=0, dilation=1):
    spec = dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
    if isinstance(gg, Tensor):
        return extract_patches(gg, **spec)
    return _extract_patches_fwd(gg, **spec)


_PATCH_SHAPES = (
    "x (..., H, W) -> (..., kh, kw, Ho, Wo), Ho = (H + 2 ph - dh (kh - 1) - 1) // sh + 1 "
    "(same for Wo); kernel_size, stride, padding, dilation: int or (h, w) pair"
)
extract_patches = defprim(
    "extract_patches", _extract_patches_fwd, _extract_patches_vjp,
    jacobian="a 0/1 selection matrix: patch entry (p, q, i, j) is the padded input pixel "
             "(i sh + p dh, j sw + q dw) (tf.image.extract_patches; im2col)",
    vjp="dx = col2im(g): scatter-ADD every patch entry back to its pixel (pixels shared by "
        "overlapping windows sum their gradients); the padding's share is dropped",
    shapes=_PATCH_SHAPES,
    kinks="none (linear). The last two axes are the spatial ones; zero padding",
)
scatter_patches = defprim(
    "scatter_patches", _scatter_patches_fwd, _scatter_patches_vjp,
    jacobian="the transpose of extract_patches' selection matrix (col2im)",
    vjp="dg = extract_patches(gg): the adjoint of a scatter-add is the gather",
    shapes="g (..., kh, kw, Ho, Wo) -> x_shape (..., H, W)",
    kinks="none (linear)",
)


def _along_axis_index(indices, axis, shape):
    """The full fancy index that ``np.take_along_axis(arr, indices, axis)`` uses."""
    nd = len(shape)
    idx = []
    for d in range(nd):
        if d == axis:
            idx.append(indices)
        else:
            s = [1] * nd
            s[d] = shape[d]
            idx.append(np.arange(shape[d]).reshape(s))
    return tuple(idx)


def _indices_value(indices):
    return np.asarray(indices._value if isinstance(indices, Tensor) else indices)


def _scatter_along_axis_fwd(g, indices, axis, shape):
    g = np.asarray(g)
    indices = _indices_value(indices)
    axis = axis % len(shape)
    out = np.zeros(shape, dtype=g.dtype)
    if indices.shape[axis] == 1:
        # one index per row along the axis: no repeats, plain assignment is exact
        np.put_along_axis(out, indices, g, axis=axis)
    else:
        np.add.at(out, _along_axis_index(indices, axis, shape), g)  # repeats accumulate
    return out


def _take_along_axis_vjp(g, ans, arr, indices, axis):
    if isinstance(g, Tensor):
        return scatter_along_axis(g, indices, axis=axis, shape=tuple(arr.shape))
    return _scatter_along_axis_fwd(g, indices, axis, tuple(arr.shape))


def _scatter_along_axis_vjp(gg, ans, g, indices, axis, shape):
    if isinstance(gg, Tensor):
        return take_along_axis(gg, indices, axis=axis)
    return np.take_along_axis(np.asarray(gg), _indices_value(indices), axis=axis)


# the core section may define take_along_axis itself one day: keep the first definition
take_along_axis = PRIMITIVES.get("take_along_axis") or defprim(
    "take_along_axis",
    lambda arr, indices, axis: np.take_along_axis(arr, np.asarray(indices), axis=axis),
    _take_along_axis_vjp, None,
    jacobian="a 0/1 selection matrix: out[..., k, ...] = arr[..., indices[..., k, ...], ...]",
    vjp="darr = zeros with g added at the selected positions (repeated indices accumulate)",
    shapes="arr (..., n, ...), integer indices (..., k, ...) broadcastable on the other "
           "axes -> (..., k, ...)",
    kinks="indices get no gradient. argmax + take_along_axis routes a max's gradient to "
          "ONE element (the first maximum in np.argmax's order), unlike ap.max, which "
          "splits ties evenly: the rule MaxPool2D uses (as PyTorch)",
)
scatter_along_axis = defprim(
    "scatter_along_axis", _scatter_along_axis_fwd, _scatter_along_axis_vjp, None,
    jacobian="the transpose of take_along_axis' selection matrix",
    vjp="dg = take_along_axis(gg, indices, axis)",
    shapes="g (indices' shape) -> shape",
    kinks="indices get no gradient; repeated indices accumulate",
)
if np.take_along_axis not in _FUNCTIONS:
    _FUNCTIONS[np.take_along_axis] = lambda arr, indices, axis: take_along_axis(
        arr, _indices_value(indices), axis=axis
    )
