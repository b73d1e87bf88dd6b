"""Elementwise primitives: arithmetic with broadcasting, unary ufuncs, where, clip, and
the non-differentiable comparisons and roundings. One record each (registry.defprim):
forward, VJP and JVP per argument, derivation text, numpy names, Tensor methods.

Binary VJPs sum the gradient back to each input's shape (:func:`unbroadcast`); JVPs
return a contribution that broadcasts to the output (the accumulator broadcasts it).
Derivations: ``lessons/00-chain-rule.md``, ``lessons/02-activations.md``.
"""

from __future__ import annotations

import numpy as np

from manualprop._extremes import smallest  # (a kernel: numpy only)

from ..registry import defnondiff, defnumpy, defprim, linear_jvp
from ..tensor import Tensor
from ._common import (
    BCAST,
    SAME,
    _all_finite,
    _check_kw,
    _no_out,
    _shape,
    _value,
    times,
    times_into,
    unbroadcast,
    unbroadcast_like,
    zero_rule,
)

__all__ = [
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "logaddexp",
    "arctan2", "nextafter", "negative", "exp", "log", "sqrt", "square", "tanh", "sigmoid", "relu",
    "absolute", "sin", "cos", "log1p", "expm1", "erf", "erfc", "cast", "reciprocal", "log2",
    "log10", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "clip", "where",
    "less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "sign",
    "floor", "ceil", "floor_divide", "round", "logical_and", "logical_or", "logical_not", "isfinite",
    "isnan", "isinf", "signbit", "isneginf", "isposinf",
]

_LN2 = float(np.log(2.0))
_LN10 = float(np.log(10.0))

# --- binary (numpy broadcasting) -------------------------------------------------------
add = defprim(
    "add", np.add,
    lambda g, ans, a, b: unbroadcast_like(g, a),
    lambda g, ans, a, b: unbroadcast_like(g, b),
    jvp=(lambda t, ans, a, b: t, lambda t, ans, a, b: t),
    jacobian="d(a+b)/da = I, d(a+b)/db = I", vjp="da = g, db = g", shapes=BCAST,
    numpy=(np.add,), methods=("__add__", "__radd__"),
    source="{0} + {1}", reads=((), ()),
)
subtract = defprim(
    "subtract", np.subtract,
    lambda g, ans, a, b: unbroadcast_like(g, a),
    lambda g, ans, a, b: unbroadcast_like(-g, b),
    jvp=(lambda t, ans, a, b: t, lambda t, ans, a, b: -t),
    jacobian="d(a-b)/da = I, d(a-b)/db = -I", vjp="da = g, db = -g", shapes=BCAST,
    numpy=(np.subtract,), methods=("__sub__", "__rsub__"),
    source="{0} - {1}", reads=((), ()),
)
multiply = defprim(
    "multiply", np.multiply,
    lambda g, ans, a, b: unbroadcast_like(times(g, b), a),
    lambda g, ans, a, b: unbroadcast_like(times(g, a), b),
    jvp=linear_jvp("multiply", rule=zero_rule),
    jacobian="d(a*b)/da = diag(b), d(a*b)/db = diag(a)", vjp="da = g * b, db = g * a",
    shapes=BCAST, numpy=(np.multiply,), methods=("__mul__", "__rmul__"),
    source="{0} * {1}", reads=((1,), (0,)),
)
divide = defprim(
    "divide", np.true_divide,
    lambda g, ans, a, b: unbroadcast(zero_rule(g, g / b), _shape(a)),
    lambda g, ans, a, b: unbroadcast(zero_rule(g, -g * ans / b), _shape(b)),
    jvp=(lambda t, ans, a, b: zero_rule(t, t / b), lambda t, ans, a, b: zero_rule(t, -t * ans / b)),
    jacobian="d(a/b)/da = diag(1/b), d(a/b)/db = diag(-a/b^2)",
    vjp="da = g / b, db = -g * (a/b) / b", shapes=BCAST, kinks="b = 0: inf/nan as numpy, except 0 where g = 0 (the 0·inf rule)",
    numpy=(np.true_divide,), methods=("__truediv__", "__rtruediv__"),
    source="{0} / {1}", reads=((1,), ("ans", 1)),
)


def _aliases(fwd, numpy):
    return (fwd,) if numpy is True else () if numpy is False else tuple(numpy)


def _binary(name, fwd, da, db, jacobian, vjp, kinks="none (smooth)", numpy=True, methods=(), source=None,
            reads=None):
    """A broadcasting two-argument elementwise primitive with partial derivatives
    ``da(ans, a, b)``, ``db(ans, a, b)``: VJPs ``g * d`` summed back to each input's
    shape, JVPs ``t * d``, both under the 0·inf rule (:func:`~._common.times`)."""
    return defprim(
        name, fwd,
        lambda g, ans, a, b: unbroadcast(times(g, da(ans, a, b)), _shape(a)),
        lambda g, ans, a, b: unbroadcast(times(g, db(ans, a, b)), _shape(b)),
        jvp=(lambda t, ans, a, b: times(t, da(ans, a, b)), lambda t, ans, a, b: times(t, db(ans, a, b))),
        jacobian=jacobian, vjp=vjp, shapes=BCAST, kinks=kinks, numpy=_aliases(fwd, numpy), methods=methods,
        source=source, reads=reads,
    )


def _pow_da(a, b):
    # b * a**(b-1), written without dividing by a (so 0**3 gives 0, not nan). a**0 is the
    # constant 1 (numpy's 0**0 = 1), so d/da is 0 there, also at a = 0 where the formula is
    # 0 * 0**-1 = nan: a is replaced by 1 where a == b == 0 (a constant: higher orders 0 too)
    bv = b._value if isinstance(b, Tensor) else b
    zero_b = bv == 0 if isinstance(bv, (int, float)) else np.any(bv == 0)  # x**2: one comparison
    av = a._value if isinstance(a, Tensor) else a
    if not (zero_b and np.any(av == 0)):
        return b * a ** (b - 1)
    return b * np.where((av == 0) & (bv == 0), 1.0, a) ** (b - 1)


def _pow_db(ans, a):
    # ans * log(a); where a == 0 the factor ans is 0 for b > 0, so use log(1) = 0 there
    safe = np.where(a == 0, 1.0, a) if isinstance(a, (np.ndarray, Tensor)) else (a if a != 0 else 1.0)
    return ans * np.log(safe)


power = _binary(
    "power", np.power, lambda ans, a, b: _pow_da(a, b), lambda ans, a, b: _pow_db(ans, a),
    "d(a^b)/da = diag(b a^(b-1)), d(a^b)/db = diag(a^b log a)", "da = g * b * a**(b-1), db = g * a**b * log(a)",
    kinks="d/da of a**0 is 0, also at a = 0 (b a**(b-1) would be 0 * inf); "
          "d/db at a = 0 is taken as 0 (log(0) replaced by 0); a < 0 gives nan for d/db; "
          "0 where g = 0 (the 0·inf rule: d(x**0.5)/dx at 0 with g = 0 is 0)",
    methods=("__pow__", "__rpow__"),
    source="{0} ** {1}", reads=((0, 1), ("ans", 0)),
)


def _tie_share(a, b, larger=True, nan_wins=True):
    """``a``'s share of the gradient of maximum/minimum (``larger``) and fmax/fmin (``nan_wins=False``): the
    gradient goes to the argument the forward returns. 1 where a is the larger (smaller) one, 0.5 at a tie,
    0 where b is; beside a NaN, the one returned: maximum/minimum return the NaN (it gets 1, the number 0),
    fmax/fmin the number (the NaN gets 0); two NaNs: 0.5 each (a tie)."""
    share = ((a > b) if larger else (a < b)) * 1.0 + (a == b) * 0.5
    an, bn = np.isnan(_value(a)), np.isnan(_value(b))
    if not (an.any() or bn.any()):
        return share
    win, lose = (1.0, 0.0) if nan_wins else (0.0, 1.0)
    return np.where(bn, np.where(an, 0.5, lose), np.where(an, win, share))


#: The one NaN rule of maximum/minimum/fmax/fmin (autoprop.explain shows it).
NAN_RULE = ("the gradient goes to the argument the forward returns (the derivative of the selected branch): "
            "maximum/minimum return a NaN input (numpy propagates it), so it gets g and the number 0 (HIPS "
            "autograd and jax give 0 to both, torch g to both); fmax/fmin return the number, which gets g, the "
            "NaN 0; two NaNs: half each, as a tie")


def _tie_routed(name, fwd, word, op):
    """maximum / minimum: the gradient goes to the chosen argument, halves at a tie."""
    larger = name == "maximum"
    return defprim(
        name, fwd,
        lambda g, ans, a, b: unbroadcast(g * _tie_share(a, b, larger), _shape(a)),
        lambda g, ans, a, b: unbroadcast(g * _tie_share(b, a, larger), _shape(b)),
        jvp=(lambda t, ans, a, b: t * _tie_share(a, b, larger), lambda t, ans, a, b: t * _tie_share(b, a, larger)),
        jacobian=f"1 to the {word} argument", vjp=f"da = g * [a {op} b or a is NaN] + 0.5 g [a == b]",
        shapes=BCAST, kinks="a == b: each side gets half of g; a NaN input: " + NAN_RULE, numpy=(fwd,),
    )


maximum = _tie_routed("maximum", np.maximum, "larger", ">")
minimum = _tie_routed("minimum", np.minimum, "smaller", "<")
def _pair_share(a, b, exp=np.exp):
    """The share of ``a`` in ``y = logaddexp(a, b)``: dy/da = e^a / (e^a + e^b) = sigmoid(a - b)
    (``exp=np.exp2``, logaddexp2: 2^a / (2^a + 2^b) = 1 / (1 + 2^(b - a))), from the difference
    of the inputs, so exact wherever a - b is, at any magnitude. (``exp(a - y)`` used the rounded
    ``y``: at a = b = 1e20, y rounds to a, and each share came out 1, not 1/2; session 26's note.)

    Written as 1 / (1 + e) where a >= b and e / (1 + e) below, e = exp(-|a - b|) <= 1: nothing
    overflows, and the branch is chosen by ``where`` (-|a - b| as where(a >= b, b - a, a - b), not
    ``abs``), so each formula is the analytic one where it is used and the recorded higher
    derivatives are right at a tie too (sigmoid'(0) = 1/4). Limits where a - b is inf - inf: both
    at +inf share 1/2 each (sigmoid(0)); both at -inf (a masked pair) 0 each, never nan.

    Parameters
    ----------
    a, b : ndarray, Tensor or scalar
        The inputs (broadcast together); Tensors are recorded (higher orders).
    exp : callable
        ``np.exp`` (logaddexp) or ``np.exp2`` (logaddexp2).

    Returns
    -------
    ndarray or Tensor of the broadcast shape, in [0, 1] (nan where an input is nan).
    """
    d = a - b
    dv = _value(d)
    if isinstance(d, Tensor):  # an outer tape records: the branch by where, each formula analytic where used
        up = dv >= 0
        e = exp(np.where(up, -d, d))
        s = np.where(up, 1.0 / (1.0 + e), e / (1.0 + e))
    elif type(d) is np.ndarray and d.ndim:  # a plain backward: the same quotients, max(e, [d >= 0]) / (1 + e) (1 or
        e = np.abs(d)  # e on top), branch-free: np.where on a random sign pattern cost 4x the rest (branch misses)
        np.negative(e, out=e)
        exp(e, out=e)
        s = np.maximum(e, d >= 0)
        e += 1.0
        np.divide(s, e, out=s)
    else:
        e = exp(-np.abs(d))
        s = np.maximum(e, d >= 0) / (1.0 + e)
    if _all_finite(dv):
        return s
    av, bv = _value(a), _value(b)
    s = np.where(np.isneginf(av) & np.isneginf(bv), 0.0, s)
    return np.where(np.isposinf(av) & np.isposinf(bv), 0.5, s)


logaddexp = _binary(
    "logaddexp", np.logaddexp, lambda ans, a, b: _pair_share(a, b), lambda ans, a, b: _pair_share(b, a),
    "d log(e^a + e^b)/da = e^a / (e^a + e^b) = sigmoid(a - b)",
    "da = g * sigmoid(a - b), db = g * sigmoid(b - a) (from a - b: exact at any magnitude)",
    kinks="none: smooth everywhere; softplus(x) = logaddexp(0, x) has derivative sigmoid(x), 0.5 at 0; "
          "an input at -inf gets 0, also when both are -inf (a masked pair: never nan); at +inf the limit "
          "of sigmoid(a - b): 1 to an infinite input beside a finite one, 1/2 each when both are +inf "
          "(jax gives 1 each, and e^b to a finite b; torch nan); at |a|, |b| > ~1e16 the shares are "
          "sigmoid(a - b) still (1/2 each at a = b = 1e20, as torch; HIPS autograd's exp(a - y) gives 1)",
)
arctan2 = _binary(
    "arctan2", np.arctan2, lambda ans, y, x: x / (x * x + y * y), lambda ans, y, x: -y / (x * x + y * y),
    "d atan2(y, x)/dy = x/(x^2+y^2), d/dx = -y/(x^2+y^2)", "dy = g x / (x^2 + y^2), dx = -g y / (x^2 + y^2)",
    kinks="x = y = 0: nan (0/0), 0 where g = 0",
)
nextafter = defprim(
    "nextafter", np.nextafter,
    lambda g, ans, a, b: unbroadcast_like(g, a),
    lambda g, ans, a, b: np.zeros_like(unbroadcast_like(g, b)),
    jvp=(lambda t, ans, a, b: t, lambda t, ans, a, b: np.zeros_like(t)),
    jacobian="d nextafter(a, b)/da = I, d/db = 0", vjp="da = g, db = 0", shapes=BCAST,
    kinks="none: nextafter(a, b) is a moved one ulp toward b (b itself where a == b), the identity in a "
          "up to an ulp, and b sets only the direction: d/da = 1 and d/db = 0 everywhere, a == b too "
          "(TensorFlow's NextAfter gradient, math_grad.py; central differences with steps above an ulp "
          "agree; torch and jax define none)",
    numpy=(np.nextafter,), reads=((), ()),
)


# --- unary: d(x) is a diagonal Jacobian, so the JVP is the VJP's factor times t ------
def _unary(name, fwd, factor, jacobian, vjp, kinks="none (smooth)", numpy=True, methods=(), source=None,
           reads=None, compact=None):
    """A one-argument elementwise primitive whose derivative is ``factor(ans, x)``:
    VJP ``g * factor``, JVP ``t * factor`` (one formula, both modes; 0 where ``g`` or
    ``t`` is 0, the 0·inf rule of :func:`~._common.zero_rule`); ``fwd`` is the
    numpy ufunc that dispatches here unless ``numpy=False`` (or a tuple: these names)."""
    return defprim(
        name, fwd, lambda g, ans, x: times(g, factor(ans, x)),
        jvp=lambda t, ans, x: times(t, factor(ans, x)),
        jacobian=jacobian, vjp=vjp, shapes=SAME, kinks=kinks,
        numpy=_aliases(fwd, numpy), methods=methods, source=source, reads=reads, compact=compact,
    )


negative = defprim("negative", np.negative, lambda g, ans, x: -g, jvp=linear_jvp("negative"),
                   jacobian="-I", vjp="dx = -g", shapes=SAME, numpy=(np.negative,),
                   methods=("__neg__",), source="-{0}", reads=((),))
exp = defprim("exp", np.exp, lambda g, ans, x: times(g, ans), jvp=lambda t, ans, x: times(t, ans),
              jacobian="diag(exp(x))", vjp="dx = g * exp(x) (reuses the output)",
              shapes=SAME, numpy=(np.exp,), reads=(("ans",),))
log = defprim("log", np.log, lambda g, ans, x: zero_rule(g, g / x), jvp=lambda t, ans, x: zero_rule(t, t / x),
              jacobian="diag(1/x)", vjp="dx = g / x", shapes=SAME,
              kinks="x = 0: inf; x < 0: nan (as numpy); 0 where g = 0", numpy=(np.log,), reads=((0,),))
sqrt = defprim("sqrt", np.sqrt, lambda g, ans, x: zero_rule(g, g * 0.5 / ans),
               jvp=lambda t, ans, x: zero_rule(t, t * 0.5 / ans),
               jacobian="diag(1 / (2 sqrt(x)))", vjp="dx = g / (2 sqrt(x))", shapes=SAME,
               kinks="x = 0: inf, but 0 where g = 0 (the 0·inf rule, as TensorFlow's sqrt); "
                     "see ap.norm for a norm with the subgradient 0 at 0",
               numpy=(np.sqrt,), reads=(("ans",),))
square = _unary("square", np.square, lambda ans, x: 2.0 * x, "diag(2x)", "dx = 2 x g", reads=((0,),))
_COSH_MAX = (710.0, 89.0)  # float64, float32: the largest |x| with a finite cosh(x)


_TANH_CHEAP = 0.125  # 1 - y^2 at least this: within 8 ulp of 1 / cosh(x)^2 (manualprop's Tanh)


def _sech2(ans, x):
    # 1 / cosh(x)^2 from the input: 1 - tanh(x)^2 cancels to 0 once tanh(x) rounds to +-1
    # (x = 20: the true 1.70e-17; float32 x = -9: 2x too large). 0 only below ~1e-308.
    # 1/cosh, then squared: cosh is finite up to |x| = 710 (float64; 89 in float32), where
    # (1/cosh)^2 underflows quietly to 0 already; the clip only keeps cosh from warning
    # (np.errstate around ufuncs costs 10x the computation)
    bound = _COSH_MAX[getattr(x, "dtype", None) == np.float32]
    if type(x) is np.ndarray and x.ndim:  # plain backward: one temporary, in place (speed)
        r = np.minimum(x, bound)  # np.clip's two ufuncs without its Python wrapper (the same
        np.maximum(r, -bound, out=r)  # values, nan kept), which costs more at small sizes
        np.cosh(r, out=r)
        np.divide(1.0, r, out=r)
        return np.multiply(r, r, out=r)
    r = 1.0 / np.cosh(np.clip(x, -bound, bound))  # Tensors: recorded (higher orders)
    return r * r


def _tanh_d_finite(ans, x):
    # tanh'(x) on arrays to full relative precision, as manualprop's Tanh computes it (the
    # same bits): 1 - y^2 from the output where it is at least 1/8 (two cheap passes,
    # accurate there) and 1 / cosh(x)^2 (_sech2) only on the saturated entries, where
    # 1 - y^2 cancels; and whether every entry of the result is finite: the minimum
    # that decides whether any entry is saturated is NaN exactly when 1 - y^2 has a NaN
    # (argmin finds the first NaN; 1 - y^2 <= 1 has no +inf), and the saturated entries'
    # 1 / cosh(x)^2 are looked at (a few entries, usually none; with a NaN too)
    d = ans * ans
    np.subtract(1.0, d, out=d)
    if not d.size:
        return d, True
    m = smallest(d)  # d.min() by argmin (the same element; NaN if any): a third of a reduction
    finite = m == m
    if not m >= _TANH_CHEAP:  # (a NaN elsewhere too: the saturated entries keep their precision)
        saturated = d < _TANH_CHEAP
        s = _sech2(None, x[saturated])
        d[saturated] = s
        finite = finite and _all_finite(s)
    return d, finite


def _tanh_times(g, ans, x):
    # tanh's VJP (and JVP, with t for g): g * tanh'(x) under the 0·inf rule. Tensors (an
    # outer tape records the backward pass) take _sech2 everywhere. On arrays the
    # derivative is ours and its finiteness known from _tanh_d_finite's minimum, so the
    # product goes into it with no finiteness sum of the result (times_into)
    if type(ans) is not np.ndarray or type(x) is not np.ndarray or not ans.ndim or ans.dtype.kind == "c":
        if np.iscomplexobj(_value(x)):  # 1 / cosh(z)^2: no clip, no saturation test (real orders)
            r = 1.0 / np.cosh(x)
            return times(g, r * r)
        return times(g, _sech2(ans, x))
    return times_into(g, *_tanh_d_finite(ans, x))


tanh = defprim(
    "tanh", np.tanh, _tanh_times, jvp=_tanh_times,
    jacobian="diag(1 - tanh(x)^2) = diag(1 / cosh(x)^2)",
    vjp="dx = g (1 - y^2) where 1 - y^2 >= 1/8, else g / cosh(x)^2 (from the input: "
        "1 - y^2 cancels where |y| rounds to 1)",
    shapes=SAME, numpy=(np.tanh,), reads=((0, "ans"),),
)


def _sigmoid_complex(x):
    if np.iscomplexobj(x):  # exp(-|x|) and x >= 0 have no complex meaning
        raise TypeError("autoprop.sigmoid: complex values are not supported there (its forward "
                        "uses |x| and x >= 0); write 1 / (1 + np.exp(-z)) for a complex z")


def _sigmoid_fwd(x):
    # from e = exp(-|x|), at most 1 (no overflow, nothing cancels): 1 / (1 + e) for x >= 0,
    # e / (1 + e) below; manualprop's Sigmoid, the same bits (logaddexp, used before, gave
    # the same values to an ulp at 3-4x the cost)
    if type(x) is not np.ndarray or not x.ndim or x.dtype.kind == "c":
        _sigmoid_complex(x)
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    e = np.abs(x)  # an array: the same values with fewer temporaries (speed)
    np.negative(e, out=e)
    np.exp(e, out=e)
    d = e + 1.0
    n = np.where(x >= 0, 1.0, e)  # the numerator, then one division: the same quotients as a
    return np.divide(n, d, out=n)  # divide(1.0, d, where=x >= 0), whose masked loop runs once per
    # run of selected entries (callgrind: 280 K -> 200 K instructions on an LSTM's 16x128 gates)


def _sigmoid_d(ans, x):
    # s(x) s(-x) = s(x) (1 - s(x)), with 1 - s(x) computed as s(-x): no cancellation where
    # s(x) rounds to 1 (x = 40: the true 4.25e-18, not 0)
    return ans * (sigmoid(-x) if isinstance(x, Tensor) else _sigmoid_fwd(-x))


sigmoid = defprim("sigmoid", _sigmoid_fwd, lambda g, ans, x: times(g, _sigmoid_d(ans, x)),
                  jvp=lambda t, ans, x: times(t, _sigmoid_d(ans, x)),
                  jacobian="diag(s(1-s)), s = sigmoid(x)",
                  vjp="dx = g * s(x) * s(-x) (= s (1 - s), without the cancellation of 1 - s)",
                  shapes=SAME, source="{out}_e = np.exp(-np.abs({x})); "
                  "{out} = np.where({x} >= 0, 1.0 / (1.0 + {out}_e), {out}_e / (1.0 + {out}_e))",
                  reads=(("ans", 0),))
relu = _unary("relu", lambda x: np.maximum(x, 0), lambda ans, x: x > 0, "diag([x > 0])",
              "dx = g * [x > 0]", kinks="relu'(0) = 0", numpy=False, source="np.maximum({x}, 0)",
              reads=((0,),), compact={0: lambda x, shared: x > 0})  # the tape saves the mask: 1 byte each
def _abs_unit(ans, x):
    """abs's local factor: sign(x) for real x; conj(z) / |z| for complex z (autograd's
    convention, ``autoprop.core.complex``), 0 at z = 0 as abs'(0) = 0."""
    if not np.iscomplexobj(_value(x)):
        return np.sign(x)
    return np.conj(x) / np.where(_value(ans) == 0, 1.0, ans)


def _abs_jvp(t, ans, x):
    # real x: t sign(x); complex z: Re(conj(z) t) / |z|, the change of |z| along t
    r = times(t, _abs_unit(ans, x))
    return np.real(r) if np.iscomplexobj(_value(x)) else r


absolute = defprim("absolute", np.abs, lambda g, ans, x: times(g, _abs_unit(ans, x)), jvp=_abs_jvp,
                   jacobian="diag(sign(x)); complex z: conj(z) / |z| (autograd's convention)",
                   vjp="dx = g * sign(x); complex z: dz = g conj(z) / |z|", shapes=SAME,
                   kinks="abs'(0) = 0", numpy=(np.abs,), methods=("__abs__",))
sin = _unary("sin", np.sin, lambda ans, x: np.cos(x), "diag(cos x)", "dx = g cos(x)")
cos = defprim("cos", np.cos, lambda g, ans, x: times(g, -np.sin(x)), jvp=lambda t, ans, x: times(t, -np.sin(x)),
              jacobian="diag(-sin x)", vjp="dx = -g sin(x)", shapes=SAME, numpy=(np.cos,))
try:  # scipy.special's own expm1 and log1p ufuncs dispatch to numpy's records
    from scipy.special import expm1 as _sp_expm1
    from scipy.special import log1p as _sp_log1p
    _SCIPY_EXPM1, _SCIPY_LOG1P = (_sp_expm1,), (_sp_log1p,)
except ImportError:  # pragma: no cover
    _SCIPY_EXPM1 = _SCIPY_LOG1P = ()
log1p = defprim("log1p", np.log1p, lambda g, ans, x: zero_rule(g, g / (1.0 + x)),
                jvp=lambda t, ans, x: zero_rule(t, t / (1.0 + x)),
                jacobian="diag(1/(1+x))", vjp="dx = g / (1 + x)", shapes=SAME, numpy=(np.log1p, *_SCIPY_LOG1P))
expm1 = _unary("expm1", np.expm1, lambda ans, x: np.exp(x), "diag(exp(x))",
               "dx = g * exp(x) (not y + 1, which keeps no relative precision for x << 0)",
               numpy=(np.expm1, *_SCIPY_EXPM1))

try:  # scipy ships with scikit-learn; math.erf is the fallback
    from scipy.special import erf as _erf
    from scipy.special import erfc as _erfc

    _SCIPY_ERF = (_erf, _erfc)  # scipy.special.erf(tensor) dispatches to the records
except ImportError:  # pragma: no cover
    import math

    _erf = np.vectorize(math.erf, otypes=[np.float64])
    _erfc = np.vectorize(math.erfc, otypes=[np.float64])
    _SCIPY_ERF = ()

_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
erf = defprim("erf", lambda x: np.asarray(_erf(x), dtype=np.result_type(x, np.float32)),
              lambda g, ans, x: times(g, _TWO_OVER_SQRT_PI * np.exp(-(x * x))),
              jvp=lambda t, ans, x: times(t, _TWO_OVER_SQRT_PI * np.exp(-(x * x))),
              jacobian="diag(2/sqrt(pi) exp(-x^2))", vjp="dx = g * 2/sqrt(pi) * exp(-x^2)",
              shapes=SAME, numpy=_SCIPY_ERF[:1], source="special.erf({x})")
erfc = defprim("erfc", lambda x: np.asarray(_erfc(x), dtype=np.result_type(x, np.float32)),
               lambda g, ans, x: times(g, -_TWO_OVER_SQRT_PI * np.exp(-(x * x))),
               jvp=lambda t, ans, x: times(t, -_TWO_OVER_SQRT_PI * np.exp(-(x * x))),
               jacobian="diag(-2/sqrt(pi) exp(-x^2))", vjp="dx = -g * 2/sqrt(pi) * exp(-x^2)",
               shapes=SAME, kinks="keeps relative accuracy for large x, where 1 - erf(x) cancels",
               numpy=_SCIPY_ERF[1:], source="special.erfc({x})")
def _cast_back(g, ans, x, dtype):
    # g in x's dtype; a complex g for a real x: its real part (autograd's convention), not
    # numpy's cast, which drops the imaginary part with a ComplexWarning
    if np.iscomplexobj(_value(g)) and x.dtype.kind != "c":
        g = np.real(g)
    return g.astype(x.dtype)


def _cast_fwd(x, dtype):
    x = np.asarray(x)
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        raise TypeError(f"autoprop.cast: a complex tensor ({x.dtype}) cast to {np.dtype(dtype)} would drop "
                        "its imaginary part (numpy only warns); take np.real(t) (or np.abs) first")
    return x.astype(dtype)


cast = defprim("cast", _cast_fwd,
               _cast_back, jvp=lambda t, ans, x, dtype: _cast_back(t, None, ans, None), reads=((),),
               jacobian="I (between float dtypes)", vjp="dx = g cast back to x's dtype",
               shapes=SAME, methods=("astype",),
               kinks="a cast to an integer or bool dtype is not differentiable: no gradient", source="{x}.astype({dtype})")
reciprocal = defprim(
    "reciprocal", np.reciprocal, lambda g, ans, x: times(g, -(ans * ans)),
    jvp=lambda t, ans, x: times(t, -(ans * ans)),
    jacobian="diag(-1/x^2)", vjp="dx = -g / x^2 (= -g y^2)", shapes=SAME,
    kinks="x = 0: inf (as numpy)", numpy=(np.reciprocal,),
)
log2 = defprim(
    "log2", np.log2, lambda g, ans, x: zero_rule(g, g / (x * _LN2)),
    jvp=lambda t, ans, x: zero_rule(t, t / (x * _LN2)),
    jacobian="diag(1/(x ln 2))", vjp="dx = g / (x ln 2)", shapes=SAME,
    kinks="x = 0: inf; x < 0: nan (as numpy)", numpy=(np.log2,),
)
log10 = defprim(
    "log10", np.log10, lambda g, ans, x: zero_rule(g, g / (x * _LN10)),
    jvp=lambda t, ans, x: zero_rule(t, t / (x * _LN10)),
    jacobian="diag(1/(x ln 10))", vjp="dx = g / (x ln 10)", shapes=SAME,
    kinks="x = 0: inf; x < 0: nan (as numpy)", numpy=(np.log10,),
)
tan = _unary("tan", np.tan, lambda ans, x: 1.0 + ans * ans, "diag(1 + tan(x)^2)",
             "dx = g (1 + y^2), y = tan(x)", kinks="poles at pi/2 + k pi")
arcsin = defprim(
    "arcsin", np.arcsin, lambda g, ans, x: zero_rule(g, g / np.sqrt(1.0 - x * x)),
    jvp=lambda t, ans, x: zero_rule(t, t / np.sqrt(1.0 - x * x)),
    jacobian="diag(1/sqrt(1 - x^2))", vjp="dx = g / sqrt(1 - x^2)", shapes=SAME,
    kinks="|x| = 1: inf; |x| > 1: nan", numpy=(np.arcsin,),
)
arccos = defprim(
    "arccos", np.arccos, lambda g, ans, x: zero_rule(g, -g / np.sqrt(1.0 - x * x)),
    jvp=lambda t, ans, x: zero_rule(t, -t / np.sqrt(1.0 - x * x)),
    jacobian="diag(-1/sqrt(1 - x^2))", vjp="dx = -g / sqrt(1 - x^2)", shapes=SAME,
    kinks="|x| = 1: -inf; |x| > 1: nan", numpy=(np.arccos,),
)
arctan = defprim(
    "arctan", np.arctan, lambda g, ans, x: zero_rule(g, g / (1.0 + x * x)),
    jvp=lambda t, ans, x: zero_rule(t, t / (1.0 + x * x)),
    jacobian="diag(1/(1 + x^2))", vjp="dx = g / (1 + x^2)", shapes=SAME, numpy=(np.arctan,),
)
sinh = _unary("sinh", np.sinh, lambda ans, x: np.cosh(x), "diag(cosh x)", "dx = g cosh(x)")
cosh = _unary("cosh", np.cosh, lambda ans, x: np.sinh(x), "diag(sinh x)", "dx = g sinh(x)")


# --- clip and where: the gradient is routed, not scaled -------------------------------
def _clip_inside(x, lo, hi):
    """1 where lo <= x <= hi (a bound of None is no bound): the gradient passes there."""
    inside = None
    if lo is not None:
        inside = x >= lo
    if hi is not None:
        inside = (x <= hi) if inside is None else inside * (x <= hi)
    return 1.0 if inside is None else inside


def _clip_to_lo(x, lo, hi):
    """1 where the result is ``lo``: numpy's clip is ``minimum(maximum(x, lo), hi)``, so
    ``lo`` is used where x < lo, unless lo > hi (then the result is hi)."""
    return (x < lo) if hi is None else (x < lo) * (lo <= hi)


def _clip_to_hi(x, lo, hi):
    """1 where the result is ``hi``: where ``maximum(x, lo) > hi`` (a tie goes to x or lo)."""
    return (x > hi) if lo is None else (np.maximum(x, lo) > hi)


def _clip_nan_shares(x, lo, hi):
    """clip's shares where an input is NaN, by maximum/minimum's NaN rule (:data:`NAN_RULE`) on numpy's
    ``minimum(maximum(x, lo), hi)``: the NaN returned gets the gradient (two NaNs in one step: half each).
    None when no input is NaN; else ``(nan, sx, slo, shi)``: where a NaN is, and the shares there."""
    xn = np.isnan(_value(x))
    ln = False if lo is None else np.isnan(_value(lo))
    hn = False if hi is None else np.isnan(_value(hi))
    nan = xn | ln | hn
    if not np.any(nan):
        return None
    m = xn | ln  # maximum(x, lo) is a NaN
    m_share = np.where(hn, np.where(m, 0.5, 0.0), 1.0)
    return (nan, np.where(xn, np.where(ln, 0.5, 1.0), 0.0) * m_share, np.where(ln, np.where(xn, 0.5, 1.0), 0.0) * m_share,
            np.where(hn, np.where(m, 0.5, 1.0), 0.0))


def _clip_share(which, rule):
    """The share of input ``which`` (0: x, 1: lo, 2: hi): ``rule`` where no input is NaN, the NaN rule where one is
    (before, comparisons with a NaN x were all False: x got 0 though clip returns x's NaN)."""
    def share(x, lo, hi):
        r = rule(x, lo, hi)
        nan = _clip_nan_shares(x, lo, hi)
        return r if nan is None else np.where(nan[0], nan[1 + which], r)
    return share


def _np_clip(a, a_min=None, a_max=None, out=None, **kw):
    a_min = kw.pop("min", a_min)
    a_max = kw.pop("max", a_max)
    _check_kw("clip", dict(kw, out=out))
    return clip(a, a_min, a_max)


_clip_x, _clip_lo, _clip_hi = (_clip_share(i, r) for i, r in enumerate((_clip_inside, _clip_to_lo, _clip_to_hi)))
clip = defprim(
    "clip", lambda x, lo, hi: np.clip(x, lo, hi),
    lambda g, ans, x, lo, hi: unbroadcast(g * _clip_x(x, lo, hi), _shape(x)),
    lambda g, ans, x, lo, hi: unbroadcast(g * _clip_lo(x, lo, hi), _shape(lo)),
    lambda g, ans, x, lo, hi: unbroadcast(g * _clip_hi(x, lo, hi), _shape(hi)),
    jvp=(lambda t, ans, x, lo, hi: t * _clip_x(x, lo, hi),
         lambda t, ans, x, lo, hi: t * _clip_lo(x, lo, hi),
         lambda t, ans, x, lo, hi: t * _clip_hi(x, lo, hi)),
    jacobian="1 to x where lo <= x <= hi, else 1 to the bound that was used "
             "(numpy's minimum(maximum(x, lo), hi): hi where lo > hi)",
    vjp="dx = g [lo <= x <= hi], dlo = g [x < lo <= hi], dhi = g [max(x, lo) > hi]", shapes=BCAST,
    kinks="x exactly at a bound: the gradient goes to x (TensorFlow's clip_by_value rule, torch.clamp's); a NaN "
          "input: the gradient goes to the argument the forward returns (maximum/minimum's NaN rule on numpy's "
          "minimum(maximum(x, lo), hi)): the NaN returned gets g, the others 0; two NaNs: half each, as a tie "
          "(torch.clamp and jax.numpy.clip give 0 to every input at a NaN, HIPS autograd 1 to x)",
    numpy=(np.clip,), np_call=_np_clip, methods=("clip",),
    source="np.clip({x}, {lo}, {hi})",
)


def _np_where(condition, x=None, y=None):
    if x is None and y is None:
        return np.nonzero(condition._value if isinstance(condition, Tensor) else condition)
    return where(condition, x, y)


where = defprim(
    "where", lambda cond, x, y: np.where(cond, x, y),
    None,
    lambda g, ans, c, x, y: unbroadcast(np.where(c, g, 0.0), _shape(x)),
    lambda g, ans, c, x, y: unbroadcast(np.where(c, 0.0, g), _shape(y)),
    jvp=(None, lambda t, ans, c, x, y: np.where(c, t, 0.0), lambda t, ans, c, x, y: np.where(c, 0.0, t)),
    jacobian="1 to the chosen branch", vjp="dx = g where cond, dy = g where not cond",
    shapes=BCAST, kinks="the condition gets no gradient", numpy=(np.where,), np_call=_np_where,
    source="np.where({cond}, {x}, {y})", reads=((), (0,), (0,)),
)

# --- non-differentiable ---------------------------------------------------------------
_CMP = "comparisons are piecewise constant"
_BOOL = "booleans are not differentiable"
less = defnondiff("less", np.less, _CMP, numpy=(np.less,), methods=("__lt__",))
less_equal = defnondiff("less_equal", np.less_equal, _CMP, numpy=(np.less_equal,), methods=("__le__",))
greater = defnondiff("greater", np.greater, _CMP, numpy=(np.greater,), methods=("__gt__",))
greater_equal = defnondiff("greater_equal", np.greater_equal, _CMP, numpy=(np.greater_equal,),
                           methods=("__ge__",))
equal = defnondiff("equal", np.equal, _CMP, numpy=(np.equal,), methods=("__eq__",))
not_equal = defnondiff("not_equal", np.not_equal, _CMP, numpy=(np.not_equal,), methods=("__ne__",))
sign = defnondiff("sign", np.sign, "sign is piecewise constant (derivative 0, undefined at 0)",
                  numpy=(np.sign,))
floor = defnondiff("floor", np.floor, "floor is piecewise constant", numpy=(np.floor,))
ceil = defnondiff("ceil", np.ceil, "ceil is piecewise constant", numpy=(np.ceil,))
floor_divide = defnondiff("floor_divide", np.floor_divide, "a // b = floor(a / b) is piecewise constant",
                          numpy=(np.floor_divide,), methods=("__floordiv__", "__rfloordiv__"))
def _round(a, decimals=0, out=None):
    if out is not None:
        raise TypeError("autoprop cannot record numpy.round(..., out=...): drop out= and use the result")
    if not isinstance(decimals, (int, np.integer)):
        raise TypeError(f"numpy.round: decimals must be an integer; got {decimals!r}")
    return round(a, decimals=int(decimals))


round = defnondiff("round", np.round, "round is piecewise constant",  # noqa: A001
                   numpy=(np.rint, np.round, np.around),
                   np_call=lambda a, decimals=0, out=None: _round(a, decimals, out), methods=("round",))
logical_and = defnondiff("logical_and", np.logical_and, _BOOL, numpy=(np.logical_and,),
                         methods=("__and__", "__rand__"))
logical_or = defnondiff("logical_or", np.logical_or, _BOOL, numpy=(np.logical_or,),
                        methods=("__or__", "__ror__"))
logical_not = defnondiff("logical_not", np.logical_not, _BOOL, numpy=(np.logical_not,),
                         methods=("__invert__",))
isfinite = defnondiff("isfinite", np.isfinite, _BOOL, numpy=(np.isfinite,))
isnan = defnondiff("isnan", np.isnan, _BOOL, numpy=(np.isnan,))
# (the elementwise predicates, as comparisons: a bool Tensor of x's shape, no gradient, as
# tf.math.is_inf; numpy's isneginf/isposinf are functions over these two ufuncs)
isinf = defnondiff("isinf", np.isinf, _BOOL, numpy=(np.isinf,))
signbit = defnondiff("signbit", np.signbit, _BOOL, numpy=(np.signbit,))


def _inf_side(name, fn):  # np.isneginf(x, out): out= refused as np.isinf's (it crashed on the fwd's arity)
    def call(x, out=None):
        _no_out(name, {"out": out})
        return prim(x)
    prim = defnondiff(name, lambda x: fn(x), _BOOL, numpy=(fn,), np_call=call)
    return prim


isneginf = _inf_side("isneginf", np.isneginf)
isposinf = _inf_side("isposinf", np.isposinf)
defnumpy("positive", (np.positive,), lambda x: +x)  # a recorded copy, as dispatch_ufunc's (Tensor.__pos__)
