"""The records the recurrent layers use: ``lstm_gates`` (sigmoid on blocks i, f, o, tanh on
block g, one record) and ``stack`` (one record for any number of inputs).

Values, VJPs and JVPs against HIPS autograd (the oracle) and central differences; the gate
derivative at saturation against the closed form; second derivatives through nested tapes.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import autoprop as ap
from autoprop.core import registry as R
from tests.oracles import central


def _ag_gates(a):
    """The gates as HIPS autograd writes them: its sigmoid ``1 / (1 + exp(-a))`` (whose chain
    rule ``e / (1 + e)^2`` does not cancel) and its tanh, block by block."""
    H = a.shape[-1] // 4
    s = 1.0 / (1.0 + anp.exp(-a))
    return anp.concatenate([s[..., :2 * H], anp.tanh(a[..., 2 * H:3 * H]), s[..., 3 * H:]], axis=-1)


def _tape_vjp(prim_call, args, g):
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        y = prim_call(*ts)
    return y.numpy(), [d.numpy() for d in tape.gradient(y, ts, output_gradients=g)]


def _jvp(prim_call, args, tangents):
    ts = [ap.constant(a) for a in args]
    with ap.ForwardAccumulator(ts, tangents) as acc:
        y = prim_call(*ts)
    return acc.jvp(y).numpy()


@pytest.mark.parametrize("shape", [(5, 8), (2, 3, 12), (4,)])
def test_lstm_gates_value_vjp_jvp_against_autograd_and_central_differences(shape):
    rng = np.random.default_rng(1)
    a = rng.uniform(-4, 4, shape)
    g, t = rng.standard_normal(shape), rng.standard_normal(shape)
    y, (da,) = _tape_vjp(lambda x: R.lstm_gates(x), [a], g)
    np.testing.assert_allclose(y, _ag_gates(a), rtol=1e-14, atol=1e-16)
    ref = autograd.grad(lambda x: anp.sum(_ag_gates(x) * g))(a)
    np.testing.assert_allclose(da, ref, rtol=1e-12, atol=1e-15)
    num = central(lambda x: float(np.sum(R.lstm_gates.fwd(x) * g)), a, h=1e-6)
    np.testing.assert_allclose(da, num, rtol=1e-6, atol=1e-8)
    jv = _jvp(lambda x: R.lstm_gates(x), [a], [t])
    np.testing.assert_allclose(jv, autograd.make_jvp(_ag_gates)(a)(t)[1], rtol=1e-12, atol=1e-15)
    H = shape[-1] // 4  # the blocks: sigmoid on i, f, o; tanh on g
    s = 1.0 / (1.0 + np.exp(-a))
    np.testing.assert_allclose(y[..., 2 * H:3 * H], np.tanh(a[..., 2 * H:3 * H]), rtol=1e-15)
    np.testing.assert_allclose(y[..., 3 * H:], s[..., 3 * H:], rtol=1e-15)


def test_lstm_gates_second_derivative_through_nested_tapes_against_autograd():
    rng = np.random.default_rng(2)
    a, g = rng.uniform(-3, 3, (3, 8)), rng.standard_normal((3, 8))
    x = ap.constant(a)
    with ap.GradientTape() as outer:
        outer.watch(x)
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = ap.sum(R.lstm_gates(x) * g)
        d = inner.gradient(y, x)
        s = ap.sum(d * d)
    d2 = outer.gradient(s, x).numpy()

    def first(z):
        return autograd.grad(lambda w: anp.sum(_ag_gates(w) * g))(z)

    ref = autograd.grad(lambda z: anp.sum(first(z) ** 2))(a)
    np.testing.assert_allclose(d2, ref, rtol=1e-10, atol=1e-13)


def test_lstm_gates_derivative_keeps_full_precision_where_a_gate_saturates():
    # s'(40) = 4.25e-18 and tanh'(20) = 1.70e-17: s (1 - s) and 1 - tanh^2 would give 0
    a = np.array([[40.0, -40.0, 20.0, 0.5]])
    _, (da,) = _tape_vjp(lambda x: R.lstm_gates(x), [a], np.ones_like(a))
    e = np.exp(-40.0)
    np.testing.assert_allclose(da[0, :2], [e / (1 + e) ** 2] * 2, rtol=1e-14)
    np.testing.assert_allclose(da[0, 2], 1.0 / np.cosh(20.0) ** 2, rtol=1e-14)
    assert da[0, 0] > 0 and da[0, 2] > 0


def test_lstm_gates_follow_the_zero_times_inf_rule_and_refuse_a_width_not_four_blocks():
    a = np.array([[np.nan, 0.0, 0.0, 0.0]])
    _, (da,) = _tape_vjp(lambda x: R.lstm_gates(x), [a], np.array([[0.0, 1.0, 1.0, 1.0]]))
    np.testing.assert_array_equal(da, [[0.0, 0.25, 1.0, 0.25]])  # g = 0 contributes 0, not nan
    with pytest.raises(ValueError, match=r"lstm_gates: the last axis must hold 4 blocks .* got shape \(2, 6\)"):
        R.lstm_gates(np.zeros((2, 6)))


@pytest.mark.parametrize("axis", [0, 1, -1, -3])
def test_stack_is_one_record_with_autograds_values_vjps_and_jvps(axis):
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((2, 3)) for _ in range(4)]
    out_shape = np.stack(xs, axis=axis).shape
    g = rng.standard_normal(out_shape)
    ts = [ap.constant(x) for x in xs]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        y = np.stack(ts, axis=axis)
    assert [n.prim.name for n in tape._nodes] == ["stack"]
    np.testing.assert_array_equal(y.numpy(), np.stack(xs, axis=axis))
    grads = tape.gradient(y, ts, output_gradients=g)
    refs = autograd.grad(lambda *a: anp.sum(anp.stack(a, axis=axis) * g), argnum=(0, 1, 2, 3))(*xs)
    for d, r in zip(grads, refs):
        np.testing.assert_array_equal(d.numpy(), r)
    for k in range(4):  # central differences, input by input
        num = central(lambda v, k=k: float(np.sum(np.stack(xs[:k] + [v] + xs[k + 1:], axis=axis) * g)),
                      xs[k], h=1e-6)
        np.testing.assert_allclose(grads[k].numpy(), num, rtol=1e-8, atol=1e-9)
    tangents = [rng.standard_normal((2, 3)) for _ in range(4)]
    jv = _jvp(lambda *a: np.stack(a, axis=axis), xs, tangents)
    np.testing.assert_array_equal(jv, np.stack(tangents, axis=axis))


def test_stack_second_derivative_and_mixed_inputs():
    x = ap.constant([1.0, 2.0])
    with ap.GradientTape() as outer:
        outer.watch(x)
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = ap.sum(np.stack([x * x, np.array([5.0, 6.0]), x], axis=1) ** 2)
        d = inner.gradient(y, x)  # 4 x^3 + 2 x
    np.testing.assert_allclose(d.numpy(), [6.0, 36.0])
    np.testing.assert_allclose(outer.gradient(d, x).numpy(), [14.0, 50.0])  # 12 x^2 + 2
    with pytest.raises(ValueError, match="need at least one array to stack"):
        ap.numpy.stack([])
    with pytest.raises(TypeError, match="out="):
        np.stack([x, x], out=np.zeros((2, 2)))


def test_recurrent_twins_record_one_projection_one_stack_and_lstm_gates():
    x = ap.constant(np.random.default_rng(4).standard_normal((2, 5, 3)))
    for name, per_step in (("RNN", ["linear_at", "tanh"]),
                           ("LSTM", ["linear_at", "lstm_gates", "getitem", "getitem",
                                     "getitem", "getitem", "multiply", "multiply", "add", "tanh",
                                     "multiply"])):
        layer = getattr(ap.layers, name)(3, 4)
        with ap.GradientTape() as tape:
            tape.watch(x)
            layer(x)
        names = [n.prim.name for n in tape._nodes]
        # b_ih + b_hh, x W_ih^T for every step at once; each step reads its slice A[:, t]
        # inside its linear_at record (no slice record)
        assert names[:4] == ["add", "reshape", "linear", "reshape"]
        assert names[4:-1] == per_step * 5 and names[-1] == "stack"


@pytest.mark.parametrize("key", [(slice(None), 2), (slice(None), -1), 1])
def test_linear_at_value_vjp_jvp_and_second_derivative_against_autograd(key):
    # X @ W.T + B[key]: the step of a recurrent layer reading its slice of the input
    # projection inside one record; values, VJPs, JVPs, second derivatives (nested tapes)
    # against HIPS autograd, VJPs against central differences
    rng = np.random.default_rng(7)
    X, W = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    B = rng.standard_normal((4, 6, 5)) if key != 1 else rng.standard_normal((3, 4, 5))
    G = rng.standard_normal((4, 5))

    def ref(x, w, b):
        return x @ w.T + b[key]

    y, grads = _tape_vjp(lambda x, w, b: R.linear_at(x, w, b, key=key), [X, W, B], G)
    np.testing.assert_array_equal(y, R.linear(X, W, B[key]).numpy())  # linear's bits
    np.testing.assert_allclose(y, ref(X, W, B), rtol=1e-14)
    args = [X, W, B]
    for i, d in enumerate(grads):
        ag = autograd.grad(lambda *a: anp.sum(ref(*a) * G), argnum=i)(*args)
        np.testing.assert_allclose(d, ag, rtol=1e-13, atol=1e-14)
        num = central(lambda v, i=i, a=args: float(np.sum(ref(*(a[:i] + [v] + a[i + 1:])) * G)),
                      args[i], h=1e-6)
        np.testing.assert_allclose(d, num, rtol=1e-7, atol=1e-8)
    T = [rng.standard_normal(a.shape) for a in (X, W, B)]
    jv = _jvp(lambda x, w, b: R.linear_at(x, w, b, key=key), [X, W, B], T)
    np.testing.assert_allclose(jv, autograd.make_jvp(lambda v: ref(v[0], v[1], v[2]))((X, W, B))(tuple(T))[1],
                               rtol=1e-13, atol=1e-14)
    ts = [ap.constant(a) for a in (X, W, B)]
    with ap.GradientTape() as outer:
        outer.watch(ts)
        with ap.GradientTape() as inner:
            inner.watch(ts)
            s = ap.sum(ap.tanh(R.linear_at(*ts, key=key)) * G)
        firsts = inner.gradient(s, ts)
        q = sum(ap.sum(f * f) for f in firsts)
    seconds = outer.gradient(q, ts)

    def q_ref(*a):
        fs = autograd.grad(lambda *b: anp.sum(anp.tanh(ref(*b)) * G), argnum=(0, 1, 2))(*a)
        return sum(anp.sum(f * f) for f in fs)

    for i, d2 in enumerate(seconds):
        np.testing.assert_allclose(d2.numpy(), autograd.grad(q_ref, argnum=i)(X, W, B),
                                   rtol=1e-11, atol=1e-13)
