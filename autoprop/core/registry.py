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
    jvps : tuple of callables, optional
        Forward mode: one JVP ``jvp_i(t, ans, *args, **kwargs)`` per argument, mapping
        the tangent ``t`` of argument ``i`` to its contribution to the output tangent.
        A missing JVP (None) is derived from the VJP by the transpose trick
        (``J t = d/dg <VJP(g), t>``, see :mod:`autoprop.core.forward`).
    """

    __slots__ = ("name", "fwd", "vjps", "doc", "jvps")

    def __init__(self, name, fwd, vjps, doc, jvps=None):
        self.name = name
        self.fwd = fwd
        self.vjps = vjps
        self.doc = doc
        self.jvps = jvps

    def __call__(self, *args, **kwargs):
        return apply(self, args, kwargs)

    def __repr__(self):
        return f"<autoprop primitive {self.name}>"


#: name -> Primitive: the one table of primitives and their VJPs.
PRIMITIVES: dict[str, Primitive] = {}


def defprim(name, fwd, *vjps, jacobian="", vjp="", shapes="", kinks="none (smooth)", jvp=None):
    """Register a primitive with one VJP per positional argument; return it.

    ``jvp`` (optional): one JVP per argument (a tuple, or a callable for a one-argument
    primitive). A single ``_Variadic`` VJP (or JVP) serves any number of arguments.
    """
    if len(vjps) == 1 and type(vjps[0]).__name__ == "_Variadic":
        vjps = vjps[0]
    else:
        vjps = tuple(vjps)
    if jvp is not None and not isinstance(jvp, tuple) and type(jvp).__name__ != "_Variadic":
        jvp = (jvp,)
    prim = Primitive(
        name,
        fwd,
        vjps,
        {"jacobian": jacobian, "vjp": vjp, "shapes": shapes, "kinks": kinks},
        jvp,
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


def _plain_vjp_a(g, a, b):
    if b.ndim == 1:
        if a.ndim == 1:
            return g * b
        return unbroadcast(np.expand_dims(g, -1) * b, a.shape)
    if a.ndim == 1:
        return unbroadcast(np.sum(b * np.expand_dims(g, -2), axis=-1), a.shape)
    return unbroadcast(g @ _mT(b), a.shape)


def _plain_vjp_b(g, a, b):
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


def _matmul_fwd(a, b, transpose_a=False, transpose_b=False):
    if (transpose_a and np.ndim(a) < 2) or (transpose_b and np.ndim(b) < 2):
        raise ValueError("matmul: transpose_a/transpose_b need an operand with at least 2 axes")
    return np.matmul(_mT(a) if transpose_a else a, _mT(b) if transpose_b else b)


def _matmul_vjp_a(g, ans, a, b, transpose_a=False, transpose_b=False):
    bb = _mT(b) if transpose_b else b
    if transpose_a:  # C = A^T B': dA = (g B'^T)^T = B' g^T
        return unbroadcast(bb @ _mT(g), a.shape)
    return _plain_vjp_a(g, a, bb)


def _matmul_vjp_b(g, ans, a, b, transpose_a=False, transpose_b=False):
    aa = _mT(a) if transpose_a else a
    if transpose_b:  # C = A' B^T: dB = (A'^T g)^T = g^T A' (contiguous, as dW = dY.T @ X)
        return unbroadcast(_mT(g) @ aa, b.shape)
    return _plain_vjp_b(g, aa, b)


matmul = defprim(
    "matmul", _matmul_fwd, _matmul_vjp_a, _matmul_vjp_b,
    jacobian="C = A B: dC_ij/dA_ik = B_kj, dC_ij/dB_kj = A_ik",
    vjp="dA = g @ B^T, dB = A^T @ g (1-D operands: outer products; batch axes summed); "
        "with transpose_b (C = A @ B^T, tf.matmul's flag): dB = g^T @ A",
    shapes="A (..., n, k), B (..., k, m) -> (..., n, m); a 1-D operand is a vector; "
           "transpose_a/transpose_b swap the last two axes of A/B first",
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



def _label_index(labels):
    """Index of the label entries: (rows..., labels) -- plain fancy indexing (fast)."""
    labels = np.asarray(labels)
    return (*np.indices(labels.shape, sparse=True), labels) if labels.ndim != 1 else \
        (np.arange(labels.shape[0]), labels)


def _sparse_ce_fwd(logits, labels):
    return -_log_softmax_fwd(logits, axis=-1)[_label_index(labels)]


def _softmax_minus_onehot(logits, labels):
    """softmax(logits) - onehot(labels), written with recordable operations."""
    labels = np.asarray(labels)
    if isinstance(logits, Tensor):  # an outer tape records the backward pass
        onehot = np.eye(_shape(logits)[-1], dtype=logits.dtype)[labels]
        return np.exp(logits - logsumexp(logits, axis=-1, keepdims=True)) - onehot
    p = np.exp(_log_softmax_fwd(logits, axis=-1))  # a fresh array: subtract the one-hot in place
    p[_label_index(labels)] -= 1.0  # each (row, label) pair occurs once: no accumulation needed
    return p


sparse_softmax_cross_entropy_with_logits = defprim(
    "sparse_softmax_cross_entropy_with_logits", _sparse_ce_fwd,
    lambda g, ans, logits, labels: np.expand_dims(g, -1) * _softmax_minus_onehot(logits, labels),
    None,
    jvp=(lambda t, ans, logits, labels: np.sum(t * _softmax_minus_onehot(logits, labels), axis=-1), None),
    jacobian="d loss_i / d z_ic = softmax(z_i)_c - [c == y_i]",
    vjp="dz = g[:, None] * (softmax(z) - onehot(y)) (the fused kernel of "
        "tf.nn.sparse_softmax_cross_entropy_with_logits)",
    shapes="logits (..., C), integer labels (...) -> per-example loss (...)",
    kinks="none; stable for any logits (log-softmax shifted by the max); labels get no gradient",
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


# --- issue 3: the rest of numpy's differentiable vocabulary --------------------------
# Every entry below carries its JVP (forward mode) next to its VJPs. A JVP
# ``jvp_i(t, ans, *args, **kwargs)`` maps the tangent ``t`` of argument ``i`` (its
# shape) to that argument's contribution to the output tangent; contributions are
# broadcast to the output's shape and summed by :class:`autoprop.ForwardAccumulator`.
_SAME = "same as x"
_LN2 = float(np.log(2.0))
_LN10 = float(np.log(10.0))


def _lin(fwd):
    """The JVP of an argument the primitive is linear in: the same map applied to t."""
    return lambda t, ans, *args, **kw: fwd(t, **kw)


reciprocal = defprim(
    "reciprocal", np.reciprocal, lambda g, ans, x: -g * ans * ans,
    jvp=lambda t, ans, x: -t * ans * ans,
    jacobian="diag(-1/x^2)", vjp="dx = -g / x^2 (= -g y^2)", shapes=_SAME,
    kinks="x = 0: inf (as numpy)",
)
log2 = defprim(
    "log2", np.log2, lambda g, ans, x: g / (x * _LN2), jvp=lambda t, ans, x: t / (x * _LN2),
    jacobian="diag(1/(x ln 2))", vjp="dx = g / (x ln 2)", shapes=_SAME,
    kinks="x = 0: inf; x < 0: nan (as numpy)",
)
log10 = defprim(
    "log10", np.log10, lambda g, ans, x: g / (x * _LN10), jvp=lambda t, ans, x: t / (x * _LN10),
    jacobian="diag(1/(x ln 10))", vjp="dx = g / (x ln 10)", shapes=_SAME,
    kinks="x = 0: inf; x < 0: nan (as numpy)",
)
tan = defprim(
    "tan", np.tan, lambda g, ans, x: g * (1.0 + ans * ans), jvp=lambda t, ans, x: t * (1.0 + ans * ans),
    jacobian="diag(1 + tan(x)^2)", vjp="dx = g (1 + y^2), y = tan(x)", shapes=_SAME,
    kinks="poles at pi/2 + k pi",
)
arcsin = defprim(
    "arcsin", np.arcsin, lambda g, ans, x: g / np.sqrt(1.0 - x * x),
    jvp=lambda t, ans, x: t / np.sqrt(1.0 - x * x),
    jacobian="diag(1/sqrt(1 - x^2))", vjp="dx = g / sqrt(1 - x^2)", shapes=_SAME,
    kinks="|x| = 1: inf; |x| > 1: nan",
)
arccos = defprim(
    "arccos", np.arccos, lambda g, ans, x: -g / np.sqrt(1.0 - x * x),
    jvp=lambda t, ans, x: -t / np.sqrt(1.0 - x * x),
    jacobian="diag(-1/sqrt(1 - x^2))", vjp="dx = -g / sqrt(1 - x^2)", shapes=_SAME,
    kinks="|x| = 1: -inf; |x| > 1: nan",
)
arctan = defprim(
    "arctan", np.arctan, lambda g, ans, x: g / (1.0 + x * x), jvp=lambda t, ans, x: t / (1.0 + x * x),
    jacobian="diag(1/(1 + x^2))", vjp="dx = g / (1 + x^2)", shapes=_SAME,
)
sinh = defprim(
    "sinh", np.sinh, lambda g, ans, x: g * np.cosh(x), jvp=lambda t, ans, x: t * np.cosh(x),
    jacobian="diag(cosh x)", vjp="dx = g cosh(x)", shapes=_SAME,
)
cosh = defprim(
    "cosh", np.cosh, lambda g, ans, x: g * np.sinh(x), jvp=lambda t, ans, x: t * np.sinh(x),
    jacobian="diag(sinh x)", vjp="dx = g sinh(x)", shapes=_SAME,
)
arctan2 = defprim(
    "arctan2", np.arctan2,
    lambda g, ans, y, x: unbroadcast(g * x / (x * x + y * y), _shape(y)),
    lambda g, ans, y, x: unbroadcast(-g * y / (x * x + y * y), _shape(x)),
    jvp=(lambda t, ans, y, x: t * x / (x * x + y * y), lambda t, ans, y, x: -t * y / (x * x + y * y)),
    jacobian="d atan2(y, x)/dy = x/(x^2+y^2), d/dx = -y/(x^2+y^2)",
    vjp="dy = g x / (x^2 + y^2), dx = -g y / (x^2 + y^2)", shapes=_BCAST,
    kinks="x = y = 0: nan (0/0)",
)


def _clip_inside(x, lo, hi):
    """1 where lo <= x <= hi (a bound of None is no bound): the gradient passes there."""
    inside = None
    if lo is not None:
        inside = x >= lo
    if hi is not None:
        inside = (x <= hi) if inside is None else inside * (x <= hi)
    return 1.0 if inside is None else inside


clip = defprim(
    "clip", lambda x, lo, hi: np.clip(x, lo, hi),
    lambda g, ans, x, lo, hi: unbroadcast(g * _clip_inside(x, lo, hi), _shape(x)),
    lambda g, ans, x, lo, hi: unbroadcast(g * (x < lo), _shape(lo)),
    lambda g, ans, x, lo, hi: unbroadcast(g * (x > hi), _shape(hi)),
    jvp=(lambda t, ans, x, lo, hi: t * _clip_inside(x, lo, hi),
         lambda t, ans, x, lo, hi: t * (x < lo),
         lambda t, ans, x, lo, hi: t * (x > hi)),
    jacobian="1 to x where lo <= x <= hi, else 1 to the bound that was used",
    vjp="dx = g [lo <= x <= hi], dlo = g [x < lo], dhi = g [x > hi]", shapes=_BCAST,
    kinks="x exactly at a bound: the gradient goes to x (TensorFlow's clip_by_value rule)",
)


def _safe_norm_parts(x, ans, axis, keepdims):
    n = _keep_reduced(ans, _shape(x), axis, keepdims)
    pos = n > 0
    return n, pos, np.where(pos, n, 1.0)


def _norm_vjp(g, ans, x, axis=None, keepdims=False):
    n, pos, safe = _safe_norm_parts(x, ans, axis, keepdims)
    return _keep_reduced(g, _shape(x), axis, keepdims) * np.where(pos, x / safe, 0.0)


def _norm_jvp(t, ans, x, axis=None, keepdims=False):
    n, pos, safe = _safe_norm_parts(x, ans, axis, keepdims)
    return np.sum(t * np.where(pos, x / safe, 0.0), axis=axis, keepdims=keepdims)


norm = defprim(
    "norm", lambda x, axis=None, keepdims=False: np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims)),
    _norm_vjp, jvp=_norm_jvp,
    jacobian="x^T / ||x|| (a row per output element)", vjp="dx = g * x / ||x||, 0 where ||x|| = 0",
    shapes="x (...); reduced axes removed unless keepdims",
    kinks="||x|| = 0: the subgradient 0 (never nan; sqrt(sum(x**2)) written out gives nan there)",
)


def _prod_others(x, axis):
    """prod of the other elements along ``axis`` (keepdims shape of x), exact with zeros."""
    zero = x == 0
    nz = np.sum(zero, axis=axis, keepdims=True)
    safe = np.where(zero, 1.0, x)
    p = np.prod(safe, axis=axis, keepdims=True)
    return np.where(nz == 0, p / safe, np.where(zero * (nz == 1), p, 0.0))


prod = defprim(
    "prod", lambda x, axis=None, keepdims=False: np.prod(x, axis=axis, keepdims=keepdims),
    lambda g, ans, x, axis=None, keepdims=False: _keep_reduced(g, _shape(x), axis, keepdims)
    * _prod_others(x, axis),
    jvp=lambda t, ans, x, axis=None, keepdims=False: np.sum(
        t * _prod_others(x, axis), axis=axis, keepdims=keepdims),
    jacobian="d prod/dx_i = product of the other elements", vjp="dx_i = g * prod_{j != i} x_j",
    shapes="x (...); reduced axes removed unless keepdims",
    kinks="exact with zeros (no division by x); second derivatives at an exact 0 are not",
)


def _cumsum_vjp(g, ans, x, axis=None):
    if axis is None:
        return np.flip(np.cumsum(np.flip(g, 0), 0), 0).reshape(_shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


cumsum = defprim(
    "cumsum", lambda x, axis=None: np.cumsum(x, axis=axis), _cumsum_vjp,
    jvp=lambda t, ans, x, axis=None: np.cumsum(t, axis=axis),
    jacobian="lower-triangular ones along the axis", vjp="dx = reversed cumsum of g along the axis",
    shapes="same as x (axis=None: flattened to 1-D)",
)
flip = defprim(
    "flip", lambda x, axis=None: np.flip(x, axis), lambda g, ans, x, axis=None: np.flip(g, axis),
    jvp=lambda t, ans, x, axis=None: np.flip(t, axis),
    jacobian="a permutation (reversal)", vjp="dx = g flipped back", shapes=_SAME,
)


def _pad_fwd(x, pad_width, constant_values=0):
    return np.pad(x, pad_width, mode="constant", constant_values=constant_values)


def _unpad(g, pad_width):
    return g[tuple(builtins.slice(b, _shape(g)[d] - a) for d, (b, a) in enumerate(pad_width))]


pad = defprim(
    "pad", _pad_fwd, lambda g, ans, x, pad_width, constant_values=0: _unpad(g, pad_width),
    jvp=lambda t, ans, x, pad_width, constant_values=0: np.pad(t, pad_width),
    jacobian="an embedding (copies x into the middle)", vjp="dx = g with the padding sliced off",
    shapes="x (...) -> each axis grows by before + after",
    kinks="mode='constant' only; the padding value gets no gradient",
)


class _Variadic:
    """VJPs (or JVPs) of a primitive with any number of positional arguments.

    ``fn(i, g, ans, *args, **kwargs)`` serves every argument ``i``.
    """

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, i):
        fn = self.fn
        return lambda *a, **kw: fn(i, *a, **kw)


def _concat_offsets(i, xs, axis):
    shapes = [_shape(x) for x in xs]
    if axis is None:
        start = builtins.sum(int(np.prod(s)) for s in shapes[:i])
        return start, int(np.prod(shapes[i]))
    return builtins.sum(s[axis] for s in shapes[:i]), shapes[i][axis]


def _concat_vjp(i, g, ans, *xs, axis=0):
    if axis is None:
        start, n = _concat_offsets(i, xs, None)
        return g[start:start + n].reshape(_shape(xs[i]))
    ax = axis % len(_shape(ans))
    start, n = _concat_offsets(i, xs, ax)
    return g[(builtins.slice(None),) * ax + (builtins.slice(start, start + n),)]


def _concat_jvp(i, t, ans, *xs, axis=0):
    total = _shape(ans)[0 if axis is None else axis % len(_shape(ans))]
    if axis is None:
        start, n = _concat_offsets(i, xs, None)
        return np.pad(np.reshape(t, (-1,)), ((start, total - start - n),))
    ax = axis % len(_shape(ans))
    start, n = _concat_offsets(i, xs, ax)
    widths = tuple((start, total - start - n) if d == ax else (0, 0) for d in range(len(_shape(ans))))
    return np.pad(t, widths)


concatenate = defprim(
    "concatenate", lambda *xs, axis=0: np.concatenate(xs, axis=axis), _Variadic(_concat_vjp),
    jvp=_Variadic(_concat_jvp),
    jacobian="a block embedding per input", vjp="dx_i = the slice of g that x_i filled",
    shapes="inputs equal except along axis; axis=None flattens",
)


def _tensordot_axes(axes, nda, ndb):
    """Normalise tensordot's ``axes`` to two tuples of non-negative axis numbers."""
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        return tuple(range(nda - n, nda)), tuple(range(n))
    a_ax, b_ax = axes
    a_ax = (a_ax,) if isinstance(a_ax, (int, np.integer)) else tuple(a_ax)
    b_ax = (b_ax,) if isinstance(b_ax, (int, np.integer)) else tuple(b_ax)
    return tuple(int(a) % nda for a in a_ax), tuple(int(b) % ndb for b in b_ax)


def _tensordot_vjp_a(g, ans, a, b, axes):
    a_ax, b_ax = axes
    nda, ndb = len(_shape(a)), len(_shape(b))
    a_free = [d for d in range(nda) if d not in a_ax]
    b_free = [d for d in range(ndb) if d not in b_ax]
    r = np.tensordot(g, b, axes=(list(range(len(a_free), len(_shape(g)))), b_free))
    # r's axes: a_free, then b's summed axes in increasing order -> matching a axes
    order = sorted(range(len(b_ax)), key=lambda k: b_ax[k])
    src = a_free + [a_ax[k] for k in order]
    return np.transpose(r, tuple(int(p) for p in np.argsort(src)))


def _tensordot_vjp_b(g, ans, a, b, axes):
    a_ax, b_ax = axes
    nda, ndb = len(_shape(a)), len(_shape(b))
    a_free = [d for d in range(nda) if d not in a_ax]
    b_free = [d for d in range(ndb) if d not in b_ax]
    r = np.tensordot(a, g, axes=(a_free, list(range(len(a_free)))))
    order = sorted(range(len(a_ax)), key=lambda k: a_ax[k])
    src = [b_ax[k] for k in order] + b_free
    return np.transpose(r, tuple(int(p) for p in np.argsort(src)))


tensordot = defprim(
    "tensordot", lambda a, b, axes: np.tensordot(a, b, axes=axes), _tensordot_vjp_a, _tensordot_vjp_b,
    jvp=(lambda t, ans, a, b, axes: np.tensordot(t, b, axes=axes),
         lambda t, ans, a, b, axes: np.tensordot(a, t, axes=axes)),
    jacobian="bilinear: C = sum over the paired axes of A B",
    vjp="dA = tensordot(g, B) over B's free axes, transposed back; dB likewise",
    shapes="A's free axes then B's free axes",
)


def _einsum_normalize(subscripts, shapes):
    """Rewrite einsum subscripts in explicit form ('ij,jk->ik'), ellipses spelled out."""
    s = subscripts.replace(" ", "")
    ins, out = s.split("->") if "->" in s else (s, None)
    subs = ins.split(",")
    if len(subs) != len(shapes):
        raise ValueError(f"einsum: {len(subs)} operand subscripts for {len(shapes)} operands")
    used = {c for c in s if c.isalpha()}
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    n_ell = [len(shp) - (len(sub) - 3) if "..." in sub else 0 for sub, shp in zip(subs, shapes)]
    m = builtins.max(n_ell, default=0)
    ell = "".join(free[:m])
    subs = [sub.replace("...", ell[m - n:]) if "..." in sub else sub for sub, n in zip(subs, n_ell)]
    if out is None:
        letters = "".join(subs)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return ",".join(subs) + "->" + out


def _einsum_vjp(i, g, ans, *ops, subscripts):
    ins, out = subscripts.split("->")
    subs = ins.split(",")
    mine = subs[i]
    if len(set(mine)) != len(mine):
        raise NotImplementedError(
            f"autoprop: the gradient of einsum {subscripts!r} for operand {i} is not recorded: "
            "a repeated index inside one operand (a diagonal such as 'ii') has no VJP here. "
            "Take the diagonal first with x[np.arange(n), np.arange(n)], then einsum."
        )
    others = [s for j, s in enumerate(subs) if j != i]
    avail = set(out).union(*others)
    keep = "".join(c for c in mine if c in avail)
    r = np.einsum(",".join([out] + others) + "->" + keep, g, *[o for j, o in enumerate(ops) if j != i])
    shape_i = _shape(ops[i])
    if len(keep) != len(mine):
        rs = _shape(r)
        r = r.reshape(tuple(rs[keep.index(c)] if c in keep else 1 for c in mine))
    axes = tuple(d for d, n in enumerate(shape_i) if n == 1 and _shape(r)[d] != 1)
    if axes:
        r = r.sum(axis=axes, keepdims=True)
    if _shape(r) != shape_i:
        r = np.broadcast_to(r, shape_i)
    return r


def _einsum_jvp(i, t, ans, *ops, subscripts):
    return np.einsum(subscripts, *[t if j == i else o for j, o in enumerate(ops)])


einsum = defprim(
    "einsum", lambda *ops, subscripts: np.einsum(subscripts, *ops), _Variadic(_einsum_vjp),
    jvp=_Variadic(_einsum_jvp),
    jacobian="multilinear: the einsum of the other operands",
    vjp="dX_i = einsum('<out>,<others>-><X_i>', g, *others), broadcast over X_i-only indices",
    shapes="as numpy.einsum (subscripts stored in explicit form)",
    kinks="no gradient for an operand with a repeated index ('ii'): NotImplementedError",
)

# composites: numpy functions built from the primitives above (their derivative is the
# chain rule through those primitives; autoprop.explain prints the formula)
COMPOSITES = {}


def _composite(name, formula):
    def deco(fn):
        COMPOSITES[name] = formula
        fn.__name__ = name
        if not fn.__doc__:
            fn.__doc__ = (
                f"``numpy.{name}`` over Tensors, built from recorded primitives.\n\n"
                f"Parameters\n----------\nAs ``numpy.{name}``; Tensors, arrays or scalars "
                f"(float64/float32 values are differentiable).\n\n"
                f"Returns\n-------\nTensor (``split``: a list of Tensors), with numpy's shape "
                f"and dtype.\n\nRaises\n------\nTypeError\n    For ``out=`` and options "
                f"without a registered derivative.\n\nNotes\n-----\nDerivative: {formula}. "
                f"Source: ``lessons/10-gradient-tape.md``.\n"
            )
        return fn
    return deco


def _t(x):
    return x if isinstance(x, Tensor) else Tensor(x)


def _axes_tuple(axis, ndim):
    return tuple(a % ndim for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis))


def _set_jvps(table):
    """Attach forward-mode rules to entries registered before forward mode existed."""
    for prim, jvps in table.items():
        prim.jvps = jvps if isinstance(jvps, (tuple, _Variadic)) else (jvps,)


def _extreme_jvp(t, ans, x, axis=None, keepdims=False):
    mask = x == _keep_reduced(ans, _shape(x), axis, keepdims)
    return np.sum(t * mask, axis=axis, keepdims=keepdims) / np.sum(mask, axis=axis, keepdims=keepdims)


def _index_add_jvp(t, ans, g, key, shape):
    if isinstance(t, Tensor):
        return index_add(t, key=key, shape=shape)
    return _index_add_fwd(t, key, shape)


_set_jvps({
    add: (lambda t, ans, a, b: t, lambda t, ans, a, b: t),
    subtract: (lambda t, ans, a, b: t, lambda t, ans, a, b: -t),
    multiply: (lambda t, ans, a, b: t * b, lambda t, ans, a, b: t * a),
    divide: (lambda t, ans, a, b: t / b, lambda t, ans, a, b: -t * ans / b),
    power: (lambda t, ans, a, b: t * b * a ** (b - 1),
            lambda t, ans, a, b: t * ans * np.log(
                np.where(a == 0, 1.0, a) if isinstance(a, (np.ndarray, Tensor)) else (a if a != 0 else 1.0))),
    maximum: (lambda t, ans, a, b: t * _tie_share(a, b), lambda t, ans, a, b: t * _tie_share(b, a)),
    minimum: (lambda t, ans, a, b: t * _tie_share(b, a), lambda t, ans, a, b: t * _tie_share(a, b)),
    matmul: (lambda t, ans, a, b, transpose_a=False, transpose_b=False: matmul(
                 t, b, transpose_a=transpose_a, transpose_b=transpose_b) if isinstance(t, Tensor)
             else _matmul_fwd(t, b, transpose_a, transpose_b),
             lambda t, ans, a, b, transpose_a=False, transpose_b=False: matmul(
                 a, t, transpose_a=transpose_a, transpose_b=transpose_b) if isinstance(t, Tensor)
             else _matmul_fwd(a, t, transpose_a, transpose_b)),
    negative: lambda t, ans, x: -t,
    exp: lambda t, ans, x: t * ans,
    log: lambda t, ans, x: t / x,
    sqrt: lambda t, ans, x: t * 0.5 / ans,
    square: lambda t, ans, x: t * 2.0 * x,
    tanh: lambda t, ans, x: t * (1.0 - ans * ans),
    sigmoid: lambda t, ans, x: t * ans * (1.0 - ans),
    relu: lambda t, ans, x: t * (x > 0),
    absolute: lambda t, ans, x: t * np.sign(x),
    sin: lambda t, ans, x: t * np.cos(x),
    cos: lambda t, ans, x: -t * np.sin(x),
    log1p: lambda t, ans, x: t / (1.0 + x),
    expm1: lambda t, ans, x: t * (ans + 1.0),
    cast: lambda t, ans, x, dtype: t.astype(dtype),
    sum: _lin(lambda x, axis=None, keepdims=False: np.sum(x, axis=axis, keepdims=keepdims)),
    mean: _lin(lambda x, axis=None, keepdims=False: np.mean(x, axis=axis, keepdims=keepdims)),
    max: _extreme_jvp,
    min: _extreme_jvp,
    logsumexp: lambda t, ans, x, axis=None, keepdims=False: np.sum(
        t * np.exp(x - _keep_reduced(ans, _shape(x), axis, keepdims)), axis=axis, keepdims=keepdims),
    log_softmax: lambda t, ans, x, axis=-1: t - np.sum(t * np.exp(ans), axis=axis, keepdims=True),
    softmax: lambda t, ans, x, axis=-1: ans * (t - np.sum(t * ans, axis=axis, keepdims=True)),
    reshape: _lin(lambda x, shape: np.reshape(x, shape)),
    transpose: _lin(lambda x, axes=None: np.transpose(x, axes)),
    broadcast_to: _lin(lambda x, shape: np.broadcast_to(x, shape)),
    squeeze: _lin(lambda x, axis=None: np.squeeze(x, axis=axis)),
    where: (None, lambda t, ans, c, x, y: np.where(c, t, 0.0), lambda t, ans, c, x, y: np.where(c, 0.0, t)),
    index_add: _index_add_jvp,
    _getitem_prim: _lin(lambda x, key: x[key]),
})
_set_jvps({
    logaddexp: (lambda t, ans, a, b: t * np.exp(a - ans), lambda t, ans, a, b: t * np.exp(b - ans)),
    erf: lambda t, ans, x: t * _TWO_OVER_SQRT_PI * np.exp(-(x * x)),
    erfc: lambda t, ans, x: -t * _TWO_OVER_SQRT_PI * np.exp(-(x * x)),
})


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


# --- issue 3: composites and the numpy names they answer to ---------------------------
def _check_kw(name, kwargs, allowed=()):
    _no_out(name, kwargs)
    bad = [k for k, v in kwargs.items() if k not in allowed and k != "out" and v is not None
           and not (k in ("order", "casting") and v in ("C", "K", "A", "same_kind"))]
    if bad:
        raise TypeError(
            f"autoprop cannot record numpy.{name}(..., {bad[0]}=...): that option has no "
            f"registered derivative. Call numpy.{name} without it (or compute on values "
            "with ap.numpy_function, which gives no gradient)."
        )


@_composite("ravel", "reshape(x, (-1,)): the VJP reshapes g back")
def ravel(a, order="C"):
    return reshape(_t(a), shape=(-1,))


@_composite("moveaxis", "a transpose: the VJP applies the inverse permutation")
def moveaxis(a, source, destination):
    a = _t(a)
    nd = a.ndim
    src = _axes_tuple(source, nd)
    dst = _axes_tuple(destination, nd)
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, axes=tuple(order))


@_composite("stack", "concatenate of expand_dims: dx_i = g taken at index i along axis")
def stack(arrays, axis=0, out=None, **kw):
    _check_kw("stack", dict(kw, out=out))
    arrays = [_t(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    nd = arrays[0].ndim + 1
    ax = axis % nd
    return concatenate(*[reshape(a, shape=a.shape[:ax] + (1,) + a.shape[ax:]) for a in arrays], axis=ax)


def _concatenate(arrays, axis=0, out=None, **kw):
    _check_kw("concatenate", dict(kw, out=out))
    return concatenate(*[_t(a) for a in arrays], axis=axis)


@_composite("split", "slices (getitem): each piece's VJP scatters g back into place")
def split(ary, indices_or_sections, axis=0):
    ary = _t(ary)
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError("array split does not result in an equal division")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    lead = (builtins.slice(None),) * (axis % ary.ndim)
    return [getitem(ary, lead + (builtins.slice(lo, builtins.max(lo, hi)),))
            for lo, hi in zip(bounds[:-1], bounds[1:])]


@_composite("take", "x[indices] along axis: repeated indices accumulate in the VJP")
def take(a, indices, axis=None, out=None, mode=None):
    _check_kw("take", {"out": out, "mode": mode})
    a = _t(a)
    idx = np.asarray(indices._value if isinstance(indices, Tensor) else indices)
    if axis is None:
        return getitem(reshape(a, shape=(-1,)), idx)
    return getitem(a, (builtins.slice(None),) * (axis % a.ndim) + (idx,))


@_composite("take_along_axis", "a gather along one axis; its VJP scatters g back (repeated indices accumulate)")
def _take_along_axis(arr, indices, axis=-1):
    # numpy's signature (axis=None flattens) over the take_along_axis primitive below
    arr = _t(arr)
    idx = _indices_value(indices)
    if axis is None:
        return take_along_axis(reshape(arr, shape=(-1,)), idx, axis=0)
    return take_along_axis(arr, idx, axis=axis)


def _tri_mask(shape, k, lower):
    n, m = shape[-2], shape[-1]
    return np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)


@_composite("tril", "where(lower-triangle mask, x, 0): the VJP masks g the same way")
def tril(m, k=0):
    m = _t(m)
    return where(_tri_mask(m.shape, k, True), m, np.zeros((), m.dtype))


@_composite("triu", "where(upper-triangle mask, x, 0): the VJP masks g the same way")
def triu(m, k=0):
    m = _t(m)
    return where(_tri_mask(m.shape, k, False), m, np.zeros((), m.dtype))


@_composite("outer", "reshape(a, (-1, 1)) * reshape(b, (1, -1)): da = g @ b, db = g^T @ a")
def outer(a, b, out=None):
    _no_out("outer", {"out": out})
    return multiply(reshape(_t(a), shape=(-1, 1)), reshape(_t(b), shape=(1, -1)))


@_composite("dot", "matmul for 1-D/2-D operands, tensordot over (last of a, second-to-last of b) above")
def dot(a, b, out=None):
    _no_out("dot", {"out": out})
    a, b = _t(a), _t(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=((a.ndim - 1,), ((b.ndim - 2) if b.ndim > 1 else 0,)))


def _tensordot(a, b, axes=2):
    a, b = _t(a), _t(b)
    return tensordot(a, b, axes=_tensordot_axes(axes, a.ndim, b.ndim))


def _einsum(*operands, out=None, optimize=False, **kw):
    _check_kw("einsum", dict(kw, out=out))
    if not operands or not isinstance(operands[0], str):
        raise TypeError(
            "autoprop records numpy.einsum only in its subscripts form, "
            "np.einsum('ij,jk->ik', a, b); the interleaved (operand, sublist) form is not "
            "supported: rewrite it with a subscripts string."
        )
    ops = [_t(o) for o in operands[1:]]
    return einsum(*ops, subscripts=_einsum_normalize(operands[0], [o.shape for o in ops]))


@_composite("var", "mean((x - mean(x))**2) * n / (n - ddof): chain rule through mean, subtract, multiply")
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    _check_kw("var", dict(kw, out=out, dtype=dtype))
    a = _t(a)
    if isinstance(axis, list):
        axis = tuple(axis)
    d = a - mean(a, axis=axis, keepdims=True)
    return sum(d * d, axis=axis, keepdims=bool(keepdims)) / (_count(a.shape, axis) - ddof)


@_composite("std", "norm(x - mean(x)) / sqrt(n - ddof): the norm's subgradient 0 where the "
                   "variance is exactly 0 (never nan, unlike sqrt(var))")
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    _check_kw("std", dict(kw, out=out, dtype=dtype))
    a = _t(a)
    if isinstance(axis, list):
        axis = tuple(axis)
    d = a - mean(a, axis=axis, keepdims=True)
    return norm(d, axis=axis, keepdims=bool(keepdims)) / float(np.sqrt(_count(a.shape, axis) - ddof))


def _clip(a, a_min=None, a_max=None, out=None, **kw):
    a_min = kw.pop("min", a_min)
    a_max = kw.pop("max", a_max)
    _check_kw("clip", dict(kw, out=out))
    return clip(a, a_min, a_max)


def _pad(array, pad_width, mode="constant", constant_values=0, **kw):
    if mode != "constant" or kw:
        raise TypeError(
            f"autoprop cannot record numpy.pad(..., mode={mode!r}): only mode='constant' has "
            "a registered VJP. Build other paddings from slices and np.concatenate, which "
            "are recorded."
        )
    a = _t(array)
    widths = tuple(tuple(int(v) for v in row)
                   for row in np.broadcast_to(np.asarray(pad_width, dtype=int), (a.ndim, 2)))
    cv = constant_values._value if isinstance(constant_values, Tensor) else constant_values
    return pad(a, pad_width=widths, constant_values=cv)


def _linalg_norm(x, ord=None, axis=None, keepdims=False):
    if ord is not None:
        raise TypeError(
            f"autoprop records numpy.linalg.norm only with ord=None (the 2-norm / Frobenius "
            f"norm, as ap.norm); got ord={ord!r}. Write the norm out with tape ops instead, "
            "e.g. np.sum(np.abs(x)) for ord=1."
        )
    return norm(_t(x), axis=axis, keepdims=bool(keepdims))


def _value_only(fn):
    """numpy functions that return plain values (bools, indices): computed on the values."""
    def run(*args, **kwargs):
        args = [a._value if isinstance(a, Tensor) else a for a in args]
        kwargs = {k: (v._value if isinstance(v, Tensor) else v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)
    return run


def _like(fn):
    def run(a, *args, **kwargs):
        return Tensor._wrap(fn(a._value if isinstance(a, Tensor) else a, *args, **kwargs))
    return run


def _where3(condition, x=None, y=None):
    if x is None and y is None:
        return np.nonzero(condition._value if isinstance(condition, Tensor) else condition)
    return where(condition, x, y)


def _reduction_strict(prim, name):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        _check_kw(name, dict(kw, out=out, dtype=dtype))
        if isinstance(axis, list):
            axis = tuple(axis)
        return prim(a, axis=axis, keepdims=bool(keepdims))
    fn.__name__ = name
    return fn


def _cumsum(a, axis=None, dtype=None, out=None):
    _check_kw("cumsum", {"out": out, "dtype": dtype})
    return cumsum(a, axis=axis)


def _flip(m, axis=None):
    return flip(m, axis=axis)


_UFUNCS.update({
    np.reciprocal: reciprocal, np.log2: log2, np.log10: log10, np.tan: tan,
    np.arcsin: arcsin, np.arccos: arccos, np.arctan: arctan, np.sinh: sinh, np.cosh: cosh,
    np.arctan2: arctan2, np.logaddexp: logaddexp, np.rint: round,
})
_FUNCTIONS.update({
    np.sum: _reduction_strict(sum, "sum"),
    np.mean: _reduction_strict(mean, "mean"),
    np.max: _reduction_strict(max, "max"),
    np.amax: _reduction_strict(max, "amax"),
    np.min: _reduction_strict(min, "min"),
    np.amin: _reduction_strict(min, "amin"),
    np.prod: _reduction_strict(prod, "prod"),
    np.cumsum: _cumsum,
    np.var: var,
    np.std: std,
    np.ravel: ravel,
    np.moveaxis: moveaxis,
    np.concatenate: _concatenate,
    np.stack: stack,
    np.split: split,
    np.pad: _pad,
    np.flip: _flip,
    np.take: take,
    np.take_along_axis: _take_along_axis,
    np.triu: triu,
    np.tril: tril,
    np.dot: dot,
    np.einsum: _einsum,
    np.tensordot: _tensordot,
    np.outer: outer,
    np.clip: _clip,
    np.where: _where3,
    np.linalg.norm: _linalg_norm,
    np.zeros_like: _like(np.zeros_like),
    np.ones_like: _like(np.ones_like),
    np.full_like: _like(np.full_like),
    np.allclose: _value_only(np.allclose),
    np.isclose: _value_only(np.isclose),
    np.array_equal: _value_only(np.array_equal),
    np.all: _value_only(np.all),
    np.any: _value_only(np.any),
    np.count_nonzero: _value_only(np.count_nonzero),
    np.argsort: _value_only(np.argsort),
    np.nonzero: _value_only(np.nonzero),
    np.around: lambda a, decimals=0, out=None: round(a),
})


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
def _linear_jvp(name):
    """JVP of a primitive that is linear in its first argument: the primitive applied to
    the tangent (``J t`` for a selection or scatter matrix ``J``)."""

    def jvp(t, ans, x, *rest, **kwargs):
        prim = PRIMITIVES[name]
        return prim(t, *rest, **kwargs) if isinstance(t, Tensor) else prim.fwd(t, *rest, **kwargs)

    return jvp


extract_patches = defprim(
    "extract_patches", _extract_patches_fwd, _extract_patches_vjp,
    jacobian="a 0/1 selection matrix: patch entry (p, q, i, j) is the padded input pixel "
             "(i sh + p dh, j sw + q dw) (tf.image.extract_patches; im2col)",
    vjp="dx = col2im(g): scatter-ADD every patch entry back to its pixel (pixels shared by "
        "overlapping windows sum their gradients); the padding's share is dropped",
    shapes=_PATCH_SHAPES,
    kinks="none (linear). The last two axes are the spatial ones; zero padding",
    jvp=_linear_jvp("extract_patches"),
)
scatter_patches = defprim(
    "scatter_patches", _scatter_patches_fwd, _scatter_patches_vjp,
    jacobian="the transpose of extract_patches' selection matrix (col2im)",
    vjp="dg = extract_patches(gg): the adjoint of a scatter-add is the gather",
    shapes="g (..., kh, kw, Ho, Wo) -> x_shape (..., H, W)",
    kinks="none (linear)",
    jvp=_linear_jvp("scatter_patches"),
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


take_along_axis = defprim(
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
    jvp=(_linear_jvp("take_along_axis"), None)
)
scatter_along_axis = defprim(
    "scatter_along_axis", _scatter_along_axis_fwd, _scatter_along_axis_vjp, None,
    jacobian="the transpose of take_along_axis' selection matrix",
    vjp="dg = take_along_axis(gg, indices, axis)",
    shapes="g (indices' shape) -> shape",
    kinks="indices get no gradient; repeated indices accumulate",
    jvp=(_linear_jvp("scatter_along_axis"), None)
)
