"""Fused layer primitives: one record for what a layer of ``autoprop.layers`` does on every
call, with the hand-derived VJPs of its manualprop twin.

``linear`` is ``X @ W.T + b`` (the Linear layer): one node on the tape instead of a
``matmul`` and an ``add``, so one record and one reverse-walk step per layer, and no
``unbroadcast`` of ``g`` for the product that only passes it on. Its VJPs are the
expressions the two primitives' VJPs compute (the same bits). Derivation:
``lessons/01-linear-layer.md``.

``lstm_cell`` is one LSTM step after the matrix products, ``(a, c_prev) -> [h, c]``: one
node instead of fourteen (four gate slices, three sigmoids, two tanhs, four products, a
sum), and no zero-filled (N, 4H) array per gate slice in the reverse walk. Its VJP is lesson
32's BPTT step, with the gates and their derivatives from one ``exp(-|a|)`` as manualprop's
LSTM computes them (the unfused chain agrees to round-off); on Tensors (an outer tape
records the backward pass) it is written with the recorded primitives, so nested tapes
differentiate it again. Derivation: ``lessons/32-lstm.md``.
"""

from __future__ import annotations

from cmath import isfinite as _isfinite

import numpy as np

from ..registry import defprim
from ..tensor import Tensor
from ._common import _mT, _shape, times, unbroadcast
from .elementwise import _sech2, _sigmoid_d, sigmoid, tanh
from .shape import concatenate

__all__ = ["linear", "lstm_cell"]


def _linear_fwd(x, W, b):
    if np.ndim(x) != 2 or np.ndim(W) != 2 or np.ndim(b) not in (1, 2):
        raise ValueError("linear: x must be (batch, in), W (out, in) and b (out,) or (batch, out); "
                         f"got {np.ndim(x)}, {np.ndim(W)} and {np.ndim(b)} axes")
    y = np.matmul(x, W.T)
    if type(b) is np.ndarray and b.dtype == y.dtype and b.shape in (y.shape, y.shape[1:]):
        y += b  # the fresh product, in place: the bits of y + b without a second array
        return y
    return y + b


# One record for a whole fully connected layer: Linear's forward is one node, not a matmul
# and an add (two records, two reverse-walk steps and an unbroadcast of g for the product
# that just passes it on). dX, dW and db are the hand-derived ones (lesson 01); the same
# expressions as the two primitives' VJPs, so the same bits.
linear = defprim(
    "linear", _linear_fwd,
    lambda g, ans, x, W, b: g @ W,
    lambda g, ans, x, W, b: _mT(g) @ x,
    lambda g, ans, x, W, b: unbroadcast(g, _shape(b)),
    jvp=(lambda t, ans, x, W, b: t @ _mT(W), lambda t, ans, x, W, b: x @ _mT(t),
         lambda t, ans, x, W, b: t),
    jacobian="Y = X W^T + b: dY_nj/dX_nk = W_jk, dY_nj/dW_jk = X_nk, dY_nj/db_j = 1",
    vjp="dX = g @ W, dW = g^T @ X, db = g summed over the batch",
    shapes="X (N, in), W (out, in), b (out,) or (N, out) -> (N, out)",
    source="{x} @ {W}.T + {b}", reads=((1,), (0,), ()),
)


# --- one LSTM step -------------------------------------------------------------------------
def _cell_gates(a, c_prev):
    """(H, i, f, g, o, c) of one LSTM step, as recorded primitives (``a`` or ``c_prev`` is a
    Tensor: an outer tape records the backward pass, or a forward accumulator runs)."""
    H = _check_cell(a, c_prev)
    i, f, o = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H]), sigmoid(a[:, 3 * H:])
    g = tanh(a[:, 2 * H:3 * H])
    return H, i, f, g, o, f * c_prev + i * g


def _check_cell(a, c_prev):
    H = _shape(c_prev)[-1]
    if len(_shape(a)) != 2 or _shape(a)[-1] != 4 * H:
        raise ValueError(f"lstm_cell: a must be (batch, 4H) for c_prev (batch, H = {H}); "
                         f"got a of shape {_shape(a)}")
    return H


def _cell_plain(a, c_prev):
    """(H, s, ds, g, c) on ndarrays: ``s = sigmoid(a)`` and ``ds = s'(a) = s(a) s(-a)`` from one
    ``exp(-|a|)`` (manualprop's stable form: no overflow, and full relative precision where
    ``s (1 - s)`` cancels, ``s'(40) = 4.25e-18``), the g block ``tanh``, the new cell state."""
    H = _check_cell(a, c_prev)
    e = np.exp(-np.abs(a))
    q = 1.0 / (1.0 + e)
    s = np.where(a >= 0, q, e * q)
    e *= q
    e *= q  # e / (1 + e)^2
    g = np.tanh(a[:, 2 * H:3 * H])
    return H, s, e, g, s[:, H:2 * H] * c_prev + s[:, :H] * g


def _lstm_cell_fwd(a, c_prev):
    H, s, _, _, c = _cell_plain(a, c_prev)
    return np.concatenate([s[:, 3 * H:] * np.tanh(c), c], axis=-1)


def _lstm_cell_grads(G, a, c_prev):
    """(da, dc_prev) for the upstream gradient ``G = [dh, dc']`` (lesson 32's BPTT step)."""
    if isinstance(G, Tensor) or isinstance(a, Tensor) or isinstance(c_prev, Tensor):
        H, i, f, g, o, c = _cell_gates(a, c_prev)  # recorded: differentiable again
        gh, gc = G[:, :H], G[:, H:]
        dc = gc + times(times(gh, o), _sech2(None, c))
        parts = [times(times(dc, g), _sigmoid_d(i, a[:, :H])),
                 times(times(dc, c_prev), _sigmoid_d(f, a[:, H:2 * H])),
                 times(times(dc, i), _sech2(g, a[:, 2 * H:3 * H])),
                 times(times(gh, tanh(c)), _sigmoid_d(o, a[:, 3 * H:]))]
        return _cat(parts), times(dc, f)
    H, s, ds, g, c = _cell_plain(a, c_prev)
    i, f, o = s[:, :H], s[:, H:2 * H], s[:, 3 * H:]
    gh, gc = G[:, :H], G[:, H:]
    ds[:, 2 * H:3 * H] = _sech2(None, a[:, 2 * H:3 * H])  # the local derivatives, (N, 4H)
    dc = gc + gh * o * _sech2(None, c)  # through h = o tanh(c), and c's own
    up = np.concatenate([dc * g, dc * c_prev, dc * i, gh * np.tanh(c)], axis=-1)
    da, dc_prev = up * ds, dc * f
    if _isfinite(da.sum() + dc_prev.sum()):
        return da, dc_prev  # no product was inf or nan: the 0·inf rule changes nothing
    # the 0·inf rule (times) on every product, as the unfused chain applies it
    dc = gc + times(times(gh, o), _sech2(None, c))
    up = np.concatenate([times(dc, g), times(dc, c_prev), times(dc, i), times(gh, np.tanh(c))], axis=-1)
    return times(up, ds), times(dc, f)


#: ``[(G, a, c_prev), (da, dc_prev)]`` of the last plain VJP of ``lstm_cell`` with respect to
#: ``a``: the walk asks for ``dc_prev`` of the same node right after, which takes it from
#: here instead of computing the step twice (the entry is consumed by that call, and
#: replaced by the next node's; the arguments are the node's own objects, held here).
_LAST_CELL: list = []


def _lstm_cell_vjp(k, G, a, c_prev):
    last = _LAST_CELL
    if k == 1 and last and last[0][0] is G and last[0][1] is a and last[0][2] is c_prev:
        out = last[1]
        last.clear()
        return out[1]
    out = _lstm_cell_grads(G, a, c_prev)
    if k == 0 and type(G) is np.ndarray:
        last[:] = [(G, a, c_prev), out]
    else:
        last.clear()
    return out[k]


def _cat(parts):
    if any(isinstance(p, Tensor) for p in parts):
        return concatenate(*parts, axis=-1)  # recorded (the variadic primitive)
    return np.concatenate(parts, axis=-1)


def _lstm_cell_jvp(k, t, a, c_prev):
    """The tangent of [h, c] for a tangent ``t`` of ``a`` (k = 0) or of ``c_prev`` (k = 1)."""
    if isinstance(t, Tensor) or isinstance(a, Tensor) or isinstance(c_prev, Tensor):
        H, i, f, g, o, c = _cell_gates(a, c_prev)
        ds_i, ds_f, ds_o = _sigmoid_d(i, a[:, :H]), _sigmoid_d(f, a[:, H:2 * H]), _sigmoid_d(o, a[:, 3 * H:])
        dg = _sech2(g, a[:, 2 * H:3 * H])
        tanh_c = tanh(c)
    else:
        H, s, ds, g, c = _cell_plain(a, c_prev)
        i, f, o = s[:, :H], s[:, H:2 * H], s[:, 3 * H:]
        ds_i, ds_f, ds_o = ds[:, :H], ds[:, H:2 * H], ds[:, 3 * H:]
        dg = _sech2(None, a[:, 2 * H:3 * H])
        tanh_c = np.tanh(c)
    if k == 0:
        dc = (times(t[:, H:2 * H], ds_f) * c_prev + times(t[:, :H], ds_i) * g
              + i * times(t[:, 2 * H:3 * H], dg))
        dh = times(t[:, 3 * H:], ds_o) * tanh_c + o * times(dc, _sech2(None, c))
    else:
        dc = times(t, f)
        dh = o * times(dc, _sech2(None, c))
    return _cat([dh, dc])


lstm_cell = defprim(
    "lstm_cell", _lstm_cell_fwd,
    lambda G, ans, a, c_prev: _lstm_cell_vjp(0, G, a, c_prev),
    lambda G, ans, a, c_prev: _lstm_cell_vjp(1, G, a, c_prev),
    jvp=(lambda t, ans, a, c_prev: _lstm_cell_jvp(0, t, a, c_prev),
         lambda t, ans, a, c_prev: _lstm_cell_jvp(1, t, a, c_prev)),
    jacobian="[i, f, g, o] = [s, s, tanh, s](a), c = f c_prev + i g, h = o tanh(c): out = [h, c]",
    vjp="with [dh, dc'] = G: dc = dc' + dh o tanh'(c); da = [dc g s'(a_i), dc c_prev s'(a_f), "
        "dc i tanh'(a_g), dh tanh(c) s'(a_o)]; dc_prev = dc f (s' = s(a) s(-a), tanh' = 1/cosh^2)",
    shapes="a (N, 4H), gate order i, f, g, o; c_prev (N, H) -> [h, c] (N, 2H)",
    source=("{out}_H = {c_prev}.shape[-1]\n"
            "{out}_s = np.exp(-np.logaddexp(0.0, -{a}))\n"
            "{out}_c = {out}_s[:, {out}_H:2 * {out}_H] * {c_prev} + "
            "{out}_s[:, :{out}_H] * np.tanh({a}[:, 2 * {out}_H:3 * {out}_H])\n"
            "{out} = np.concatenate([{out}_s[:, 3 * {out}_H:] * np.tanh({out}_c), {out}_c], axis=-1)"),
    reads=((0, 1), (0, 1)),
)
