"""Recurrent primitives: the RNN's step, its whole recurrence, and the LSTM's gate nonlinearities, one record each.

``rnn_cell(h, W, A, key=k)`` is ``tanh(h @ W.T + A[k])``: the tanh RNN's step ``t`` reading
its slice ``A[:, t]`` of the input projection (``linear_at`` and ``tanh`` as one record: one
record and one walk step per time step, not two). It keeps ``h`` (for ``dW``), its output
``y`` (the derivative ``1 - y^2``, where ``1 - y^2`` is at least 1/8) and, of the
pre-activation ``a``, which is internal to the record, only the entries beyond +-1.6
(``1 / cosh(a)^2`` there, where ``1 - y^2`` cancels): ``y`` is the next step's ``h``, so a
step saves about what manualprop's cache holds, not a second (N, H) array. Its three VJPs
share ``da = g * tanh'(a)``: the reverse walk calls them as one (``joint_vjp``, as jax's
``vjp``), which computes ``da`` once.
Derivation: ``lessons/31-rnn-bptt.md``.

``rnn_tanh(x, h0, W_ih, W_hh, b_ih, b_hh)`` is the whole tanh RNN layer as one record, as
PyTorch's ``rnn_tanh`` (same argument order) and TensorFlow's recurrent kernels are: every
hidden state ``h_t = tanh(x_t W_ih^T + b_ih + b_hh + h_{t-1} W_hh^T)`` (``h_{-1} = h0``),
manualprop's forward. Its VJP is backpropagation through time, manualprop's loop
(:func:`_bptt`), then the shared weights' gradients summed over every step; its JVP carries the
tangents forward in time. It keeps what manualprop's cache keeps: ``x``, ``h0`` and the
pre-activations ``a`` (N, T, H), from which the VJP takes ``tanh'(a) = 1 / cosh(a)^2`` (exact in
saturation) and the states (``tanh(a)``); not its outputs. On Tensors (an outer tape records
the backward pass) the VJP runs the forward again with recorded operations, so the derivatives
of the backward pass reach the inputs (:func:`_rnn_again`), whichever tape follows them. One
record and one walk step for the layer instead of one a step plus four (the biases' sum, two
reshapes and the input projection; :class:`autoprop.layers.RNN`, session 32 of ``docs/speed.md``);
``rnn_cell`` stays the step for RNN cells written as a loop.

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

``lstm_gates_at(h, W, A, key=k)`` is the LSTM twin's step: ``lstm_gates(h @ W.T + A[k])``
(``linear_at``'s pre-activation) split into its four blocks ``i, f, g, o``, one record with
four outputs where ``linear_at``, ``lstm_gates`` and ``split`` made three (as ``rnn_cell`` is
``linear_at`` and ``tanh``): a third of the step's records, about 12% of the twin's step
(session 28 of ``docs/speed.md``). Its VJPs are those three records' VJPs in one call (the
blocks' gradients side by side, times ``lstm_gates``' derivative, then ``linear_at``'s three),
the same bits. Like ``rnn_cell`` it keeps ``h`` (for ``dW``), its outputs (the gates, which the
cell's products read anyway) and, of the pre-activation, which is internal to the record,
only the entries near saturation (``lstm_gates``' rule); the cell itself stays recorded.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from manualprop._extremes import largest, sech2, smallest, squares_finite  # (kernels: numpy only)

from ..registry import defprim
from ..tape import PartlySaved, WithSaved, keep_entries, whole_value_needed
from ..tensor import _EXTRA, _FORWARD, _KEEP_SAVED, _RECORDING, Tensor
from ._common import _all_finite, _mT, _shape, _value, times, times_into
from .elementwise import _COSH_MAX, _sech2, _sigmoid_fwd, sigmoid
from .fused import _linear_at_fwd, linear_at
from .shape import _getitem_vjp, broadcast_to, concatenate

__all__ = ["lstm_cell", "lstm_gates", "lstm_gates_at", "rnn_cell", "rnn_tanh"]


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
    m = smallest(test) if test.size else 1.0  # NaN if a z is NaN
    finite = m == m
    if not m >= _CHEAP:  # (a NaN elsewhere too: the saturated entries keep their precision)
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
    return _output_form_recorded(z, a)


def _output_form_recorded(z, a):
    """:func:`_gates_d_recorded` past its check (``lstm_gates_at`` makes its own): the output
    form recorded in the gates ``z`` (a Tensor), plus the constant difference to the form in
    ``a`` (an array, or the kept entries) where it cancels."""
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


def _gates_d_unsaturated(z):
    """dz/da on arrays when the record kept no entry of ``a`` (:func:`_gates_keep` found every
    |a| <= 1.6, no NaN): the output form everywhere (``1 - s`` and ``1 - g^2`` above 0.15
    there), finite; :func:`_output_form`'s values without its test array and minimum."""
    H = z.shape[-1] // 4
    d = 1.0 - z
    np.multiply(z, d, out=d)  # (the bits of z * (1 - z))
    zg = z[..., 2 * H:3 * H]
    dg = d[..., 2 * H:3 * H]
    np.multiply(zg, zg, out=dg)
    np.subtract(1.0, dg, out=dg)
    return d, True


def _gates_times(g, ans, a):
    # the VJP (and JVP, with t for g): g * dz/da under the 0·inf rule
    if type(ans) is np.ndarray and (type(a) is np.ndarray or type(a) is PartlySaved):
        if type(a) is PartlySaved and a.mask is None:  # nothing near saturation (the usual case)
            return times_into(g, *_gates_d_unsaturated(ans))
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
    top, bottom = largest(a), smallest(a)  # (NaN if a NaN: argmax and argmin find it)
    if top <= _KEEP_G and bottom >= -_KEEP_G:
        return keep_entries(a)  # every |a| <= 1.6, no NaN: no entry (_gates_d_unsaturated)
    H = a.shape[-1] // 4
    keep = a > _KEEP_S
    keep[..., 2 * H:3 * H] = np.abs(a[..., 2 * H:3 * H]) > _KEEP_G
    if top == top and not keep.item(keep.argmax()):
        # no NaN and nothing to keep (an i, f or o pre-activation in 1.6..1.9 or below -1.6,
        # where 1 - s is accurate: 4 of the benchmark's 8 LSTM steps): as above, no mask, so
        # the VJP takes the output form without its test array and minimum, which would
        # find no entry below 1/8 (the same bits)
        return keep_entries(a)
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


# --- rnn_cell: tanh(h W^T + A[key]) as one record -------------------------------------
_RNN_KEEP = 1.6  # |a| above this may need 1 / cosh(a)^2 (1 - tanh^2 < 1/8 from 1.647): kept


def _cell_fwd(h, W, A, key):
    a = np.matmul(h, W.T)  # linear_at's forward (the same bits), inline: one frame fewer
    b = A[key]
    if a.shape == b.shape and a.dtype == b.dtype:
        a += b
    else:
        a = a + b
    if a.dtype.kind == "c":
        raise TypeError(f"rnn_cell: real values only (tanh's derivative from |a|); got {a.dtype}")
    y = np.tanh(a)
    if not (_RECORDING or _EXTRA or _KEEP_SAVED) or a.dtype.kind != "f":
        return y  # nobody differentiates it: nothing to keep
    return WithSaved((y, _keep_saturated(a)))


def _keep_saturated(a):
    """What a tanh record keeps of its pre-activation ``a`` (an array internal to the record)
    for ``1 / cosh(a)^2`` where ``1 - y^2`` cancels: nothing when every ``|a| <= 1.6`` (and
    no NaN), else the entries beyond +-1.6 (a :class:`PartlySaved`; clipped where cosh would
    overflow), or all of ``a`` when it has a NaN."""
    # |a|'s largest entry, NaN if an entry is NaN (argmax finds the first NaN): one look
    # by argmax, not a whole-array reduction (session 15); |a| is kept for the mask below,
    # which most steps of a trained or randomly initialised RNN need (session 20)
    m = np.abs(a)
    top = m.item(m.argmax()) if a.size else 0.0  # largest(m), inline (a frame fewer a step)
    if top <= _RNN_KEEP:  # no entry near saturation and no NaN: nothing of a
        return keep_entries(a)
    if top == top:  # some entries beyond +-1.6: those (usually a few)
        kept = keep_entries(a, m > _RNN_KEEP)
        if top > _COSH_MAX[a.dtype == np.float32] and type(kept) is PartlySaved:
            # where cosh overflows, 1 / cosh(a)^2 is 0 already: kept clipped, so that the VJP
            # takes cosh without _sech2's clip (two ufuncs a step)
            np.clip(kept.values, -_COSH_MAX[a.dtype == np.float32], _COSH_MAX[a.dtype == np.float32],
                    out=kept.values)
        return kept
    return a  # a NaN: all of a (the general path, as tanh's VJP)


def _cell_d(ans, h, W, A, key, saved):
    """:func:`_tanh_d` of ``rnn_cell``'s output; ``saved`` None (the VJP called outside a
    tape, as the registry's tests do): the pre-activation recomputed from the inputs."""
    return _tanh_d(ans, _linear_at_fwd(h, W, A, key) if saved is None else saved)


def _tanh_d(ans, saved):
    """tanh'(a) on arrays, ``(d, finite)`` (for times_into), for a record's output
    ``ans = tanh(a)``: 1 - y^2, and 1 / cosh(a)^2 where it may cancel, from the kept entries of
    the pre-activation (``saved``, a PartlySaved: the forward found no NaN in ``a``, so ``d``
    is finite) or from all of it (an array)."""
    d = ans * ans
    np.subtract(1.0, d, out=d)
    if type(saved) is PartlySaved:
        if saved.mask is not None:  # 1.6 < |a| <= 710 there (clipped in the forward): no NaN, finite
            r = np.cosh(saved.values)
            np.divide(1.0, r, out=r)
            d[saved.mask] = np.multiply(r, r, out=r)  # 1 / cosh(a)^2, _sech2's without its clip
        return d, True
    if not d.size:
        return d, True
    m = smallest(d)
    finite = m == m  # NaN exactly when 1 - y^2 has a NaN
    if not m >= _CHEAP:  # (a NaN elsewhere too: the saturated entries keep their precision)
        sat = d < _CHEAP
        s = _sech2(None, saved[sat])
        d[sat] = s
        finite = finite and _all_finite(s)
    return d, finite


def _cell_d_recorded(ans, h, W, A, key, saved):
    """:func:`_tanh_d_recorded` of ``rnn_cell``; ``saved`` None (the VJP called outside a
    tape): from the recorded pre-activation."""
    if saved is None:
        return _sech2(None, linear_at(h, W, A, key=key))
    return _tanh_d_recorded(ans, (h, W, A), saved, "rnn_cell")


def _tanh_d_recorded(ans, inputs, saved, name):
    """tanh'(a) on Tensors (an outer tape or accumulator records the backward pass) for the
    output ``ans = tanh(a)`` of the record ``name`` with ``inputs``: ``1 - y^2``, recorded
    (its derivative reaches the inputs through ``y``), plus where it cancels the constant
    difference to ``1 / cosh(a)^2`` from the kept entries ``saved`` (0 in exact arithmetic);
    a tape or accumulator that follows an input but not ``y`` is refused (TypeError)."""
    ins = [x for x in inputs if isinstance(x, Tensor)]
    if type(ans) is not Tensor or any(
            ans._key not in tp._tracked and any(x._key in tp._tracked for x in ins)
            for tp in _RECORDING) or any(
            id(ans) not in acc._tangents and any(id(x) in acc._tangents for x in ins)
            for acc in _FORWARD):
        raise TypeError(
            f"autoprop: {name}'s record keeps its output and only part of its pre-activation, "
            "but a tape or forward accumulator that follows its inputs and not its output is "
            "differentiating the backward pass: open it before the forward pass")
    d = 1.0 - ans * ans
    dv = 1.0 - ans._value * ans._value
    mask = (dv < _CHEAP) if type(saved) is np.ndarray else saved.mask
    if mask is not None and np.any(mask):
        c = np.zeros(dv.shape, dv.dtype)
        a = saved[mask] if type(saved) is np.ndarray else saved.values
        c[mask] = _sech2(None, a) - dv[mask]
        d = d + c
    return d


def _cell_vjps(pairs, g, ans, h, W, A, key, saved=None):
    """The three VJPs (dh, dW, dA) in one call, as jax's ``vjp``: ``da = g * tanh'(a)`` once,
    then the gradient of each input in ``pairs`` (the node's tracked ``(position, key)``
    pairs), by position: ``[dh, dW, dA]``, None for an input not asked for. The reverse walk
    calls this (``joint_vjp``); on Tensors (an outer tape records the backward pass) ``da`` is
    recorded once too, one ``da`` in the graph of the backward pass (``backward_source``)."""
    if type(g) is np.ndarray and type(ans) is np.ndarray:
        da = times_into(g, *_cell_d(ans, h, W, A, key, saved))
    else:
        da = times(g, _cell_d_recorded(ans, h, W, A, key, saved))
    return _linear_at_grads(pairs, da, ans, h, W, A, key)


def _linear_at_grads(pairs, da, ans, h, W, A, key):
    """``linear_at``'s VJPs (dh, dW, dA) of the pre-activation's gradient ``da``, for the inputs in ``pairs`` by
    position, None for one not asked for: ``rnn_cell``'s and ``lstm_gates_at``'s, which record ``linear_at``
    inside them."""
    out = [None, None, None]
    for i, _ in pairs:
        if i == 0:
            out[0] = da @ W
        elif i == 1:
            out[1] = _mT(da) @ h
        else:
            out[2] = _getitem_vjp(da, ans, A, key)
    return out


def _cell_vjp(i, g, ans, h, W, A, key, saved=None):
    """VJP ``i`` (dh, dW, dA) alone: :func:`_cell_vjps` for that input (forward mode's
    transposes and the registry's tests call the VJPs one by one)."""
    return _cell_vjps(((i, None),), g, ans, h, W, A, key, saved)[i]


def _cell_jvp(i, t, ans, h, W, A, key, saved=None):
    """JVP ``i``: tanh'(a) times the tangent of the pre-activation, under the 0·inf rule."""
    t = t @ _mT(W) if i == 0 else h @ _mT(t) if i == 1 else t[key]
    if type(t) is np.ndarray and type(ans) is np.ndarray:
        return times(t, _cell_d(ans, h, W, A, key, saved)[0])
    return times(t, _cell_d_recorded(ans, h, W, A, key, saved))


rnn_cell = defprim(
    "rnn_cell", _cell_fwd, *(partial(_cell_vjp, i) for i in range(3)),
    jvp=tuple(partial(_cell_jvp, i) for i in range(3)),
    jacobian="y = tanh(a), a = h W^T + A[key]: dy/da = diag(1 - y^2) = diag(1 / cosh(a)^2), "
             "then linear_at's (da/dh = W, da/dW = h, a selection of A)",
    vjp="da = g (1 - y^2), and g / cosh(a)^2 where |a| > 1.6 (a kept there only: 1 - y^2 "
        "cancels near |y| = 1); dh = da @ W, dW = da^T @ h, dA = zeros of A's shape with da "
        "at key (tape.Scatter)",
    shapes="h (N, H), W (H, H), A[key] (N, H) -> (N, H)",
    source="np.tanh({h} @ {W}.T + {A}[{key}])", reads=((1, "ans"), (0, "ans"), ("ans",)),
    joint_vjp=_cell_vjps,
)


# --- rnn_tanh: the whole RNN layer as one record, backpropagation through time as its VJP ---
def _rnn_check(x, h0, W_ih, W_hh, b_ih, b_hh):
    """The shapes ``rnn_tanh`` needs (arrays); ValueError naming the argument otherwise."""
    if x.ndim != 3:
        raise ValueError(f"rnn_tanh: x must be (batch, time, features); got shape {x.shape}")
    N, T, D = x.shape
    H = W_hh.shape[0] if W_hh.ndim == 2 else -1
    if (W_hh.shape, W_ih.shape, b_ih.shape, b_hh.shape, h0.shape) == ((H, H), (H, D), (H,), (H,), (N, H)):
        return  # (one tuple comparison: the usual case)
    for name, v, want in (("W_hh", W_hh, (H, H)), ("W_ih", W_ih, (H, D)), ("b_ih", b_ih, (H,)),
                          ("b_hh", b_hh, (H,)), ("h0", h0, (N, H))):
        if v.shape != want or H < 0:
            raise ValueError(f"rnn_tanh: {name} must be {want if H >= 0 else '(H, H)'} for x of "
                             f"shape {x.shape} and W_hh of shape {W_hh.shape}; got shape {v.shape}")


def _rnn_fwd(x, h0, W_ih, W_hh, b_ih, b_hh):
    """Every hidden state ``h_t = tanh(x_t W_ih^T + b_ih + b_hh + h_{t-1} W_hh^T)``,
    ``h_{-1} = h0``: manualprop's RNN forward (the input projection of every step at once,
    then the pre-activations ``a`` filled step by step in place). While a tape or an
    accumulator listens, the record keeps ``a`` (N, T, H), as manualprop's cache does, and
    not the outputs: the VJPs take ``tanh'(a) = 1 / cosh(a)^2`` and the states from it."""
    _rnn_check(x, h0, W_ih, W_hh, b_ih, b_hh)
    a = x @ W_ih.T  # + b_ih + b_hh: (N, T, H), then each step adds h_{t-1} W_hh^T
    if b_ih.dtype is a.dtype and b_hh.dtype is a.dtype:  # the same two sums in place (the same
        a += b_ih  # bits as a + b_ih + b_hh, without two (N, T, H) temporaries)
        a += b_hh
    else:  # numpy's promotion (a float32 a and float64 biases: float64)
        a = a + b_ih + b_hh
    if h0.dtype != a.dtype or W_hh.dtype != a.dtype:  # numpy's promotion over all six (review33
        # RNN_TANH_MIXED_DTYPE: a float64 h0 was added in place into float32 steps, y float32), as _rnn_again's
        a = a.astype(np.result_type(a, h0, W_hh), copy=False)
    if a.dtype.kind != "f":
        raise TypeError(f"rnn_tanh: real floating values only (tanh's derivative from |a|); got {a.dtype}")
    Y = np.empty_like(a)
    h = h0
    for t in range(a.shape[1]):
        a_t = a[:, t]
        a_t += h @ W_hh.T
        h = np.tanh(a_t, out=Y[:, t])
    if not (_RECORDING or _EXTRA or _KEEP_SAVED):
        return Y  # nobody differentiates it: nothing to keep
    return WithSaved((Y, a))


def _rnn_states_before(states, h0):
    """``h_{t-1}`` for every step, (N, T, H): ``h0`` then the states but the last."""
    N, T, H = _shape(states)
    return np.concatenate([np.reshape(h0, (N, 1, H)), states[:, :T - 1]], axis=1)


def _rnn_again(x, h0, W_ih, W_hh, b_ih, b_hh):
    """The forward once more with numpy functions that record on Tensors: ``(a, states)``,
    each (N, T, H), so that an outer tape or accumulator differentiates the VJP (higher
    derivatives; ``tape.backward_source``) through the inputs."""
    A = x @ _mT(W_ih) + b_ih + b_hh
    h, pre, states = h0, [], []
    for t in range(_shape(x)[1]):
        a_t = A[:, t] + h @ _mT(W_hh)
        h = np.tanh(a_t)
        pre.append(a_t)
        states.append(h)
    return np.stack(pre, axis=1), np.stack(states, axis=1)


def _rnn_local(args, saved):
    """``(d, finite, H_prev)``: ``tanh'(a) = 1 / cosh(a)^2`` (N, T, H) from the pre-activations
    (exact where ``1 - h^2`` would cancel to 0), whether every entry of ``d`` is finite (None:
    not known), and ``h_{t-1}`` for every step. From the record's ``a`` (``saved``) on arrays,
    as manualprop's backward (the states recomputed as ``tanh(a)``); else, on Tensors or
    called outside a tape, from :func:`_rnn_again`."""
    x, h0, W_ih, W_hh, b_ih, b_hh = args
    N, T, _ = _shape(x)
    H = _shape(W_hh)[0]
    if not T:
        z = np.zeros((N, 0, H), np.result_type(*(_value(v) for v in args)))
        return z, True, z
    if type(saved) is np.ndarray and not (isinstance(x, Tensor) or isinstance(h0, Tensor) or isinstance(
            W_ih, Tensor) or isinstance(W_hh, Tensor) or isinstance(b_ih, Tensor) or isinstance(b_hh, Tensor)):
        d = sech2(saved)  # manualprop's RNN's kernel (one np.errstate, not _sech2's clip: two passes fewer)
        m = smallest(d) if d.size else 1.0  # (N or H 0: no entry, review33 RNN_TANH_EMPTY_BATCH)
        H_prev = np.empty_like(saved)
        H_prev[:, 0] = h0
        np.tanh(saved[:, :-1], out=H_prev[:, 1:])
        return d, m == m, H_prev  # (m is NaN exactly when a has a NaN)
    a, states = _rnn_again(*args)
    return _sech2(None, a), None, _rnn_states_before(states, h0)


def _bptt(g, d, finite, W_hh):
    """Backpropagation through time: ``(dA, dh0)`` for the outputs' gradient ``g`` (N, T, H) and
    ``d = tanh'(a)``: ``dA[:, t]`` is dL/da_t. Going back from the last step, the state ``h_t``
    gets ``g[:, t]`` from the output and ``dh`` from step ``t+1``; ``da_t = (g[:, t] + dh) *
    d[:, t]``, and ``dh = da_t @ W_hh`` goes on to step ``t-1`` (manualprop.RNN.backward's loop;
    ``lessons/31-rnn-bptt.md``)."""
    N, T, H = _shape(d)
    if not T:
        return d, np.zeros((N, H), d.dtype)  # no step: nothing reaches h0
    if finite and type(g) is np.ndarray and g.shape == d.shape and g.dtype == d.dtype:
        dA, dh = d, None  # plain backward pass: d scaled in place, step by step (manualprop's)
        for t in range(T - 1, -1, -1):
            da = dA[:, t]
            da *= g[:, t] if dh is None else g[:, t] + dh
            dh = da @ W_hh
        return dA, dh
    g = broadcast_to(g, shape=_shape(d)) if isinstance(g, Tensor) else np.broadcast_to(g, _shape(d))
    das, dh = [None] * T, None  # else (Tensors, or d with a NaN): the same, under the 0·inf rule
    for t in range(T - 1, -1, -1):
        das[t] = times(g[:, t] if dh is None else g[:, t] + dh, d[:, t])
        dh = das[t] @ W_hh
    return np.stack(das, axis=1), dh


def _rnn_vjps(pairs, g, ans, x, h0, W_ih, W_hh, b_ih, b_hh, saved=None):
    """The six VJPs (dx, dh0, dW_ih, dW_hh, db_ih, db_hh) in one call (``joint_vjp``): one
    backward sweep (:func:`_bptt`), then, the weights being shared by every step, one product
    or sum over all (N*T) rows for each asked for (manualprop's ``_weight_grads``); by
    position, None for an input not in ``pairs``."""
    args = (x, h0, W_ih, W_hh, b_ih, b_hh)
    d, finite, H_prev = _rnn_local(args, saved)
    dA, dh0 = _bptt(g, d, finite, W_hh)
    H = _shape(dA)[-1]
    N, T, D = _shape(x)
    rows = dA.reshape(N * T, H)  # (N*T, H): da_t of every sample and step (not -1: N, T or H may be 0)
    out = [None] * 6
    db = None  # db_ih = db_hh, the sum over every row: summed once on arrays, a copy for the other
    for i, _ in pairs:
        if i == 0:
            out[0] = dA @ W_ih
        elif i == 1:
            out[1] = dh0
        elif i == 2:
            out[2] = rows.T @ x.reshape(N * T, D)
        elif i == 3:
            out[3] = rows.T @ H_prev.reshape(N * T, H)
        elif db is not None:
            out[i] = db.copy()  # (two arrays, as manualprop's: the same bits, one pass over rows)
        elif type(rows) is np.ndarray:
            out[i] = db = np.add.reduce(rows, axis=0)  # rows.sum(axis=0) without its Python wrapper
        else:
            out[i] = rows.sum(axis=0)  # (Tensors: recorded, each its own sum)
    return out


def _rnn_vjp(i, g, ans, *args, saved=None):
    """VJP ``i`` alone (forward mode's transposes and the registry's tests)."""
    return _rnn_vjps(((i, None),), g, ans, *args, saved=saved)[i]


def _rnn_jvp(i, t, ans, x, h0, W_ih, W_hh, b_ih, b_hh, saved=None):
    """JVP ``i``: the tangent of every state, forward in time. Input ``i``'s tangent enters
    each step's pre-activation (``tx_t W_ih^T``, ``x_t tW_ih^T``, ``h_{t-1} tW_hh^T``, ``tb``)
    or the first state (``th0``), and ``dh_t = tanh'(a_t) * (that + dh_{t-1} W_hh^T)``."""
    d, _, H_prev = _rnn_local((x, h0, W_ih, W_hh, b_ih, b_hh), saved)
    shape = _shape(d)
    if not shape[1]:
        return d  # no step, no state
    if i == 0:
        enter = t @ _mT(W_ih)
    elif i == 2:
        enter = x @ _mT(t)
    elif i == 3:
        enter = H_prev @ _mT(t)
    elif i >= 4:
        enter = broadcast_to(t, shape=shape) if isinstance(t, Tensor) else np.broadcast_to(t, shape)
    dh = t if i == 1 else None
    out = []
    for s in range(shape[1]):
        u = dh @ _mT(W_hh) if dh is not None else None
        if i != 1:
            u = enter[:, s] if u is None else enter[:, s] + u
        dh = times(u, d[:, s])
        out.append(dh)
    return np.stack(out, axis=1)


rnn_tanh = defprim(
    "rnn_tanh", _rnn_fwd, *(partial(_rnn_vjp, i) for i in range(6)),
    jvp=tuple(partial(_rnn_jvp, i) for i in range(6)),
    jacobian="h_t = tanh(a_t), a_t = x_t W_ih^T + b_ih + b_hh + h_{t-1} W_hh^T, h_{-1} = h0: "
             "each state depends on x[:, :t+1], h0 and the weights through the chain of steps "
             "(backpropagation through time)",
    vjp="back from t = T-1: da_t = (g[:, t] + dh) / cosh(a_t)^2 (the record keeps a, as "
        "manualprop's cache), dh = da_t @ W_hh; dx_t = da_t @ W_ih, dh0 = the last dh, "
        "dW_ih = sum_t da_t^T x_t, dW_hh = sum_t da_t^T h_{t-1}, db_ih = db_hh = sum_t da_t "
        "summed over the batch",
    shapes="x (N, T, D), h0 (N, H), W_ih (H, D), W_hh (H, H), b_ih, b_hh (H,) -> (N, T, H), "
           "every hidden state",
    source="{out} = [{h0}]\n"
           "for a_t in np.moveaxis({x} @ {W_ih}.T + {b_ih} + {b_hh}, 1, 0):\n"
           "    {out}.append(np.tanh(a_t + {out}[-1] @ {W_hh}.T))\n"
           "{out} = np.stack({out}[1:], axis=1)",
    reads=((0, 1, 2, 3, 4, 5),) * 6,  # (not its outputs: a, kept whole, gives the states)
    joint_vjp=_rnn_vjps,
)


# --- lstm_gates_at: linear_at, lstm_gates and split as one record ----------------------
def _gates_at_fwd(h, W, A, key):
    a = _linear_at_fwd(h, W, A, key)  # h W^T + A[key] (linear_at's bits)
    z = _gates_fwd(a)
    H = z.shape[-1] // 4
    pieces = (z[..., :H], z[..., H:2 * H], z[..., 2 * H:3 * H], z[..., 3 * H:])  # views of z
    if not (_RECORDING or _EXTRA or _KEEP_SAVED) or a.dtype.kind != "f":
        return pieces  # nobody differentiates it: nothing of a to keep
    return WithSaved((pieces, _gates_keep(a, False)))  # a near saturation only (usually nothing)


def _whole(pieces):
    """The gates ``z`` (..., 4H) of the four blocks (arrays): the array they are views of (the
    forward made them so), or their concatenation."""
    z = pieces[0].base
    if (type(z) is np.ndarray and z.ndim == pieces[0].ndim and z.shape[-1] == 4 * pieces[0].shape[-1]
            and pieces[1].base is z and pieces[2].base is z and pieces[3].base is z):
        return z
    return np.concatenate(pieces, axis=-1)


def _blocks_side_by_side(g, ans):
    """The four blocks' gradients (or tangents) as one (..., 4H): zeros for a block that got
    none (an output nobody used), each of its block's shape; recorded when one is a Tensor
    (an outer tape records the backward pass)."""
    if type(g[0]) is type(g[1]) is type(g[2]) is type(g[3]) is np.ndarray and (
            g[0].shape == g[1].shape == g[2].shape == g[3].shape == ans[0].shape):
        return np.concatenate(g, axis=-1)  # the usual case
    parts = []
    tensors = False
    for gi, z in zip(g, ans):
        if gi is None:
            gi = np.zeros(_shape(z), z.dtype)
        elif isinstance(gi, Tensor):
            tensors = True
            if gi.shape != _shape(z):
                gi = broadcast_to(gi, shape=_shape(z))
        elif np.shape(gi) != _shape(z):
            gi = np.broadcast_to(gi, _shape(z))
        parts.append(gi)
    return concatenate(*parts, axis=-1) if tensors else np.concatenate(parts, axis=-1)


def _gates_at_da(g, ans, h, W, A, key, saved):
    """``da = g * dz/da`` (..., 4H) for the gates' gradient ``g`` (..., 4H) and the record's
    outputs ``ans`` (the four blocks): ``lstm_gates``' VJP, from the kept entries of ``a``
    (``saved``) or, called outside a tape (``saved`` None), from the inputs. On Tensors (an outer tape or accumulator records
    the backward pass) the output form is recorded in the gates (its derivative reaches the
    inputs through them) plus the constant difference where it cancels, as ``rnn_cell``'s; a
    tape or accumulator that follows an input but not the gates is refused (TypeError)."""
    if type(ans[0]) is np.ndarray:
        return _gates_times(g, _whole(ans), _linear_at_fwd(h, W, A, key) if saved is None else saved)
    if saved is None:
        return times(g, _gates_d(linear_at(h, W, A, key=key)))
    ins = [x for x in (h, W, A) if isinstance(x, Tensor)]
    if any(ans[0]._key not in tp._tracked and any(x._key in tp._tracked for x in ins)
           for tp in _RECORDING) or any(
            id(ans[0]) not in acc._tangents and any(id(x) in acc._tangents for x in ins)
            for acc in _FORWARD):
        raise TypeError(
            "autoprop: lstm_gates_at's record keeps its outputs and only part of its "
            "pre-activation, but a tape or forward accumulator that follows its inputs and not "
            "its outputs is differentiating the backward pass: open it before the forward pass")
    return times(g, _output_form_recorded(concatenate(*ans, axis=-1), saved))


def _gates_at_vjps(pairs, g, ans, h, W, A, key, saved=None):
    """The three VJPs (dh, dW, dA) in one call (``joint_vjp``, as ``rnn_cell``'s): ``da`` once,
    then ``linear_at``'s VJP of each input in ``pairs``, by position; None for one not asked for."""
    da = _gates_at_da(_blocks_side_by_side(g, ans), ans, h, W, A, key, saved)
    return _linear_at_grads(pairs, da, ans, h, W, A, key)


def _gates_at_vjp(i, g, ans, h, W, A, key, saved=None):
    """VJP ``i`` (dh, dW, dA) alone (forward mode's transposes and the registry's tests)."""
    return _gates_at_vjps(((i, None),), g, ans, h, W, A, key, saved)[i]


def _gates_at_jvp(i, t, ans, h, W, A, key, saved=None):
    """JVP ``i``: the tangent of the pre-activation times ``dz/da``, split into the four blocks."""
    t = t @ _mT(W) if i == 0 else h @ _mT(t) if i == 1 else t[key]
    d = _gates_at_da(t, ans, h, W, A, key, saved)
    H = _shape(ans[0])[-1]
    return (d[..., :H], d[..., H:2 * H], d[..., 2 * H:3 * H], d[..., 3 * H:])


lstm_gates_at = defprim(
    "lstm_gates_at", _gates_at_fwd, *(partial(_gates_at_vjp, i) for i in range(3)),
    jvp=tuple(partial(_gates_at_jvp, i) for i in range(3)), multi=True,
    jacobian="i, f, g, o = the four blocks of lstm_gates(a), a = h W^T + A[key]: lstm_gates' "
             "diagonal, then linear_at's (da/dh = W, da/dW = h, a selection of A)",
    vjp="da = [g_i, g_f, g_g, g_o] (side by side) times lstm_gates' derivative (from the gates; "
        "from the kept entries of a where a gate saturates); dh = da @ W, dW = da^T @ h, "
        "dA = zeros of A's shape with da at key (tape.Scatter)",
    shapes="h (N, H), W (4H, H), A[key] (N, 4H) -> i, f, g, o, each (N, H)",
    source="{out} = {h} @ {W}.T + {A}[{key}]\n"
           "{out} = np.split(np.where(np.arange({out}.shape[-1]) // ({out}.shape[-1] // 4) == 2, "
           "np.tanh({out}), 1.0 / (1.0 + np.exp(-{out}))), 4, axis=-1)",
    reads=((1, "ans"), (0, "ans"), ("ans",)), joint_vjp=_gates_at_vjps,
)


# --- lstm_cell: the LSTM's cell update as one record ----------------------------------
def _lstm_cell_fwd(c, i, f, g, o):
    """``c' = f * c + i * g`` and ``h = o * tanh(c')``: the LSTM twin's cell, the bits of the
    recorded products, sum and tanh it replaces (``f * c`` then ``+= i * g``, ``o * tanh(c')``)."""
    shape = np.shape(c)
    if not (np.shape(i) == np.shape(f) == np.shape(g) == np.shape(o) == shape):
        raise ValueError("lstm_cell: c, i, f, g and o must have one shape; got "
                         f"{shape}, {np.shape(i)}, {np.shape(f)}, {np.shape(g)} and {np.shape(o)}")
    c_new = np.multiply(f, c)
    if c_new.dtype.kind != "f":
        raise TypeError(f"lstm_cell: real floating values only (tanh's derivative); got {c_new.dtype}")
    c_new += i * g
    return o * np.tanh(c_new), c_new


def _any_tensor(*values):
    """True if one of ``values`` is a Tensor (an outer tape or accumulator records the VJP)."""
    for v in values:  # (a loop, not any() of a generator: no frame on Python 3.11)
        if isinstance(v, Tensor):
            return True
    return False


def _lstm_cell_tanh(c_new, recorded):
    """``(tanh(c'), tanh'(c'))``: on arrays ``1 - tanh^2`` and ``1 / cosh^2`` where that cancels
    (:func:`_tanh_d`, from all of ``c'``: the record keeps it, the next step's input);
    on Tensors recorded, with :func:`_tanh_d_recorded`'s constant difference where it cancels."""
    if not recorded:
        y = np.tanh(c_new)
        return y, _tanh_d(y, c_new)[0]
    y = np.tanh(c_new)  # (a Tensor: recorded, so the derivative reaches c')
    return y, _tanh_d_recorded(y, (c_new,), _value(c_new), "lstm_cell")


def _lstm_cell_vjps(pairs, gs, ans, c, i, f, g, o):
    """The five VJPs (dc, di, df, dg, do) in one call (``joint_vjp``): the cell's gradient
    ``dc' = gc' + gh * o * tanh'(c')`` once, then ``dc = dc' f``, ``di = dc' g``, ``df = dc' c``,
    ``dg = dc' i`` and ``do = gh tanh(c')``, each under the 0·inf rule (``times``) as the
    recorded products' VJPs; by position, None for one not asked for (and ``do`` None when
    ``h`` got no gradient)."""
    gh, gc = gs
    recorded = _any_tensor(gh, gc, *ans, c, i, f, g, o)
    y, d = _lstm_cell_tanh(ans[1], recorded)
    # finite outputs h and c' prove every factor finite (an inf or a NaN in c, i, f or g makes c'
    # inf or NaN, one in o makes h so; tanh and its derivative of a finite c' are finite): then
    # the 0·inf rule has nothing to zero and the products are plain (times_into's reasoning)
    mul = np.multiply if not recorded and squares_finite(ans[0]) and squares_finite(ans[1]) else times
    dc = None if gh is None else mul(mul(gh, o), d)  # (o * tanh(c')'s VJP, then tanh's)
    if gc is not None:
        dc = gc if dc is None else gc + dc  # (the walk's sum: the next step's share first)
    out = [None] * 5
    for k, _ in pairs:
        if k == 4:
            out[4] = None if gh is None else mul(gh, y)
        else:
            out[k] = mul(dc, (f, g, c, i)[k])
    return out


def _lstm_cell_vjp(k, gs, ans, c, i, f, g, o):
    """VJP ``k`` alone (forward mode's transposes and the registry's tests)."""
    return _lstm_cell_vjps(((k, None),), gs, ans, c, i, f, g, o)[k]


def _lstm_cell_jvp(k, t, ans, c, i, f, g, o):
    """JVP ``k``: the tangent of ``c'`` (``t f``, ``t g``, ``t c``, ``t i``; none from ``o``) and
    of ``h`` (``o tanh'(c') tc'``, plus ``t tanh(c')`` from ``o``), under the 0·inf rule."""
    recorded = _any_tensor(t, *ans, c, i, f, g, o)
    y, d = _lstm_cell_tanh(ans[1], recorded)
    if k == 4:
        return times(t, y), np.zeros_like(_value(t))  # (o does not reach c': exactly 0, also beside an inf)
    tc = times(t, (f, g, c, i)[k])
    return times(o, times(tc, d)), tc


lstm_cell = defprim(
    "lstm_cell", _lstm_cell_fwd, *(partial(_lstm_cell_vjp, k) for k in range(5)),
    jvp=tuple(partial(_lstm_cell_jvp, k) for k in range(5)), multi=True,
    jacobian="c' = f c + i g, h = o tanh(c'): dc'/dc = f, dc'/di = g, dc'/df = c, dc'/dg = i; "
             "dh = o tanh'(c') dc' (+ tanh(c') do), all diagonal",
    vjp="dc' = gc' + gh o tanh'(c') (1 - tanh^2, and 1 / cosh^2 where that cancels); dc = dc' f, "
        "di = dc' g, df = dc' c, dg = dc' i, do = gh tanh(c')",
    shapes="c, i, f, g, o (N, H) -> h, c' (N, H)",
    source="{out} = {f} * {c} + {i} * {g}\n{out} = ({o} * np.tanh({out}), {out})",
    reads=((2, 4, "ans"), (3, 4, "ans"), (0, 4, "ans"), (1, 4, "ans"), ("ans",)),
    joint_vjp=_lstm_cell_vjps,
)
