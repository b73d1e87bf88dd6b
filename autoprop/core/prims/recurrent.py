"""Recurrent-cell primitives: the LSTM's gate nonlinearities as one record.

``lstm_gates(a)`` is ``[sigmoid(a_i), sigmoid(a_f), tanh(a_g), sigmoid(a_o)]`` for the
pre-activations ``a`` (..., 4H) in PyTorch's block order i, f, g, o: what manualprop's LSTM
computes as one sigmoid over every block and one tanh over block g. Written with the
elementwise records it is three nodes (a sigmoid, a slice, a tanh) and a sigmoid VJP over
the g block that nobody reads; here it is one node, one VJP. The cell itself
(``c = f * c + i * g``, ``h = o * tanh(c)``) stays written with recorded products in
:class:`autoprop.layers.LSTM`: the tape, not a hand derivation, differentiates it.

The derivatives are taken from ``a`` (``s(a) s(-a)`` and ``1 / cosh(a)^2``, manualprop's
backward): the forms in the gate values (``s (1 - s)``, ``1 - g^2``) cancel to 0 once a gate
rounds to 0 or 1 (``tests/test_recurrent_saturated.py``). The VJP and JVP apply the 0·inf
rule (``_common.times``), as the elementwise records do; on Tensors (an outer tape records
the backward pass) they are written with recorded operations (higher derivatives).
Derivation: ``lessons/32-lstm.md``; tested against HIPS autograd and central differences
(``tests/test_autoprop_recurrent_prims.py``).
"""

from __future__ import annotations

import numpy as np

from ..registry import defprim
from ..tensor import Tensor
from ._common import _shape, times
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
    """dz/da, elementwise (..., 4H): ``s(a) s(-a)`` on blocks i, f, o, ``1 / cosh(a)^2`` on
    block g, from the pre-activations (no cancellation where a gate saturates)."""
    H = _shape(a)[-1] // 4
    if isinstance(a, Tensor):  # recorded, for higher derivatives
        d = sigmoid(a) * sigmoid(-a)
        return np.concatenate([d[..., :2 * H], _sech2(None, a[..., 2 * H:3 * H]), d[..., 3 * H:]],
                              axis=-1)
    e = np.exp(-np.abs(a))  # s(a) s(-a) = e / (1 + e)^2, e = exp(-|a|) <= 1 (manualprop's)
    q = 1.0 / (1.0 + e)
    e *= q
    e *= q
    e[..., 2 * H:3 * H] = _sech2(None, a[..., 2 * H:3 * H])
    return e


lstm_gates = defprim(
    "lstm_gates", _gates_fwd,
    lambda g, ans, a: times(g, _gates_d(a)),
    jvp=lambda t, ans, a: times(t, _gates_d(a)),
    jacobian="diagonal: s(a) s(-a) on the blocks i, f, o (s = sigmoid), 1 / cosh(a)^2 on block g",
    vjp="da = g * [s(a_i) s(-a_i), s(a_f) s(-a_f), 1 / cosh(a_g)^2, s(a_o) s(-a_o)] (from a: "
        "s (1 - s) and 1 - tanh^2 cancel where a gate saturates)",
    shapes="a (..., 4H), blocks i, f, g, o -> the same shape",
    source="{out} = 1.0 / (1.0 + np.exp(-{a}))\n"
           "{out}[..., {a}.shape[-1] // 2:3 * {a}.shape[-1] // 4] = "
           "np.tanh({a}[..., {a}.shape[-1] // 2:3 * {a}.shape[-1] // 4])",
    reads=((0,),),
)
