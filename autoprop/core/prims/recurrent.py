"""Recurrent-cell primitives: the LSTM's gate nonlinearities as one record.

``lstm_gates(a)`` is ``[sigmoid(a_i), sigmoid(a_f), tanh(a_g), sigmoid(a_o)]`` for the
pre-activations ``a`` (..., 4H) in PyTorch's block order i, f, g, o: what manualprop's LSTM
computes as one sigmoid over every block and one tanh over block g. Written with the
elementwise records it is three nodes (a sigmoid, a slice, a tanh) and a sigmoid VJP over
the g block that nobody reads; here it is one node, one VJP. The cell itself
(``c = f * c + i * g``, ``h = o * tanh(c)``) stays written with recorded products in
:class:`autoprop.layers.LSTM`: the tape, not a hand derivation, differentiates it.

The derivative on arrays (a plain backward pass) is taken from the gate values, ``s (1 - s)``
and ``1 - g^2``, where those are accurate (``1 - s`` and ``1 - g^2`` at least 1/8: a few ulp,
as ``tanh``'s VJP), and from ``a`` (``s(a) s(-a)``, ``1 / cosh(a)^2``, manualprop's
backward) where a gate saturates and the output forms cancel to 0
(``tests/test_recurrent_saturated.py``). So the record saves ``z``, which the cell's products
read anyway, and of ``a`` only the entries near saturation (usually none;
:class:`~autoprop.core.tape.PartlySaved`), not all of ``a`` (session 10 of
``docs/speed.md``). The VJP and JVP apply the 0·inf rule (``_common.times``), as the
elementwise records do; on Tensors (an outer tape records the backward pass) they are written
with recorded operations (higher derivatives).
Derivation: ``lessons/32-lstm.md``; tested against HIPS autograd and central differences
(``tests/test_autoprop_recurrent_prims.py``).
"""

from __future__ import annotations

import numpy as np

from ..registry import defprim
from ..tape import PartlySaved, keep_entries, whole_value_needed
from ._common import _shape, times, times_into
from .elementwise import _sech2, _sigmoid_fwd, sigmoid

__all__ = ["lstm_gates"]


def _gates_fwd(a):
    shape = np.shape(a)
    if not shape or shape[-1] % 4:
        raise ValueError("lstm_gates: the last axis must hold 4 blocks (i, f, g, o) of H "
                         f"pre-activations; got shape {shape}")
    H = shape[-1] // 4
    z = _sigmoid_fwd(np.asarray(a))  # every block at once (manualprop's LSTM), then g's
    z[..., 2 * H:3 * H] = np.tanh(a[..., 2 * H:3 * H])
    return z


def _gates_d(a):
    """dz/da, elementwise (..., 4H), recorded on Tensors (higher derivatives): ``s(a) s(-a)``
    on blocks i, f, o, ``1 / cosh(a)^2`` on block g, from the pre-activations."""
    H = _shape(a)[-1] // 4
    d = sigmoid(a) * sigmoid(-a)
    return np.concatenate([d[..., :2 * H], _sech2(None, a[..., 2 * H:3 * H]), d[..., 3 * H:]],
                          axis=-1)


_CHEAP = 0.125  # 1 - s and 1 - g^2 at least this: s (1 - s), 1 - g^2 within a few ulp
_KEEP_S, _KEEP_G = 1.9, 1.6  # a above these may need the form in a (1 - s < 1/8 from ln 7 = 1.946,
# 1 - tanh^2 < 1/8 from 1.647): kept, a margin far above rounding


def _output_form(z):
    """``(d, test)``: ``s (1 - s)`` on blocks i, f, o and ``1 - g^2`` on g from the gate values
    (..., 4H), and the quantity that must be at least 1/8 for that form to be accurate
    (``1 - s``, exact for ``s >= 1/2``; ``1 - g^2``)."""
    H = z.shape[-1] // 4
    test = 1.0 - z
    d = z * test
    zg = z[..., 2 * H:3 * H]
    dg = d[..., 2 * H:3 * H]
    np.multiply(zg, zg, out=dg)
    np.subtract(1.0, dg, out=dg)
    test[..., 2 * H:3 * H] = dg
    return d, test


def _exact_form(av, in_g):
    """The derivative in the pre-activations ``av`` (1-d): ``e / (1 + e)^2``, ``e = exp(-|a|)``
    (manualprop's ``s(a) s(-a)``), and ``1 / cosh(a)^2`` where ``in_g``."""
    e = np.exp(-np.abs(av))
    q = 1.0 / (1.0 + e)
    return np.where(in_g, _sech2(None, av), e * q * q)


def _saturated(z, test, a):
    """``(mask, exact)``: where the output form cancels (``test < 1/8``) and the exact form
    there, from ``a`` (an array, or the record's :class:`~autoprop.core.tape.PartlySaved`)."""
    mask = test < _CHEAP
    H = z.shape[-1] // 4
    in_g = np.zeros(z.shape[-1], bool)
    in_g[2 * H:3 * H] = True
    av = a[mask] if type(a) is np.ndarray else a.take(mask)
    return mask, _exact_form(av, np.broadcast_to(in_g, z.shape)[mask])


def _gates_d_arrays(z, a):
    """dz/da on arrays: the output form where it is accurate, the form in ``a`` where a gate
    saturates (``1 - s`` or ``1 - g^2`` below 1/8). Returns ``(d, finite)`` (times_into)."""
    d, test = _output_form(z)
    m = np.minimum.reduce(test, axis=None) if test.size else 1.0  # NaN if a z is NaN
    finite = m == m
    if m < _CHEAP:
        mask, exact = _saturated(z, test, a)
        d[mask] = exact
    return d, finite


def _gates_d_recorded(z, a):
    """dz/da on Tensors when the record kept ``a`` only in part: the output form, recorded
    (its derivative reaches ``a`` through ``z``), plus, where it cancels, the constant
    difference to the form in ``a`` (0 in exact arithmetic: no derivative is lost)."""
    if whole_value_needed(a, z):
        raise TypeError(
            "autoprop: lstm_gates's record kept its input only in part (its tape recorded "
            "alone), but a tape or forward accumulator that follows that input and not the "
            "gates is differentiating the backward pass: open it before the forward pass")
    H = z.shape[-1] // 4
    one = 1.0 - z
    zg = z[..., 2 * H:3 * H]
    zo = z * one
    d = np.concatenate([zo[..., :2 * H], 1.0 - zg * zg, zo[..., 3 * H:]], axis=-1)
    dv, test = _output_form(z._value)
    if np.any(test < _CHEAP):
        mask, exact = _saturated(z._value, test, a)
        c = np.zeros(dv.shape, dv.dtype)
        c[mask] = exact - dv[mask]
        d = d + c
    return d


def _gates_times(g, ans, a):
    # the VJP (and JVP, with t for g): g * dz/da under the 0·inf rule
    if type(ans) is np.ndarray and (type(a) is np.ndarray or type(a) is PartlySaved):
        return times_into(g, *_gates_d_arrays(ans, a))
    if type(a) is PartlySaved:
        return times(g, _gates_d_recorded(ans, a))
    return times(g, _gates_d(a))


def _gates_keep(a, shared):
    # the record keeps z and, of a, only the entries where the output form cancels (usually
    # none), on a tape that records alone (``shared`` False): under nested tapes the outer
    # one differentiates the VJP through all of a
    if shared or type(a) is not np.ndarray or a.dtype.kind != "f":
        return a
    if np.maximum.reduce(a, axis=None) <= _KEEP_G and np.minimum.reduce(a, axis=None) >= -_KEEP_G:
        return keep_entries(a)
    H = a.shape[-1] // 4
    keep = a > _KEEP_S
    keep[..., 2 * H:3 * H] = np.abs(a[..., 2 * H:3 * H]) > _KEEP_G
    return keep_entries(a, keep)



lstm_gates = defprim(
    "lstm_gates", _gates_fwd, _gates_times, jvp=_gates_times,
    jacobian="diagonal: s(a) s(-a) on the blocks i, f, o (s = sigmoid), 1 / cosh(a)^2 on block g",
    vjp="da = g * [s (1 - s), s (1 - s), 1 - g^2, s (1 - s)] from the gate values where 1 - s "
        "and 1 - g^2 are at least 1/8; where a gate saturates from a: s(a) s(-a), 1 / cosh(a)^2 "
        "(the output forms cancel there)",
    shapes="a (..., 4H), blocks i, f, g, o -> the same shape",
    source="{out} = 1.0 / (1.0 + np.exp(-{a}))\n"
           "{out}[..., {a}.shape[-1] // 2:3 * {a}.shape[-1] // 4] = "
           "np.tanh({a}[..., {a}.shape[-1] // 2:3 * {a}.shape[-1] // 4])",
    reads=((0, "ans"),), compact={0: _gates_keep},
)
