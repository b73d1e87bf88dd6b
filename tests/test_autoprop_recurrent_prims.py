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


def test_recurrent_twins_record_one_projection_then_rnn_tanh_or_lstm_gates_per_step():
    x = ap.constant(np.random.default_rng(4).standard_normal((2, 5, 3)))
    layer = ap.layers.RNN(3, 4)
    with ap.GradientTape() as tape:
        tape.watch(x)
        layer(x)
    # the whole layer as one record (its VJP is BPTT), whatever T
    assert [n.prim.name for n in tape._nodes] == ["rnn_tanh"]
    layer = ap.layers.LSTM(3, 4)
    with ap.GradientTape() as tape:
        tape.watch(x)
        layer(x)
    names = [n.prim.name for n in tape._nodes]
    # each step reads its rows A[t::T] inside its lstm_gates_at record (no slice or reshape record)
    per_step = ["lstm_gates_at", "lstm_cell"]  # (its cell: one record, session 33)
    assert names[:3] == ["add", "reshape", "linear"]
    assert names[3:-1] == per_step * 5 and names[-1] == "stack"


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


def _rnn_ref(h, W, A, key):
    return anp.tanh(h @ W.T + A[key])


def _rnn_args(scale, seed=11):
    # h (4, 3), W (3, 3), A (4, 5, 3); scale 1: moderate pre-activations; 12: many beyond
    # +-1.6 (the entries rnn_cell keeps) and some far in saturation (1 - y^2 rounds to 0)
    rng = np.random.default_rng(seed)
    return [np.tanh(rng.standard_normal((4, 3))), rng.standard_normal((3, 3)) * scale,
            rng.standard_normal((4, 5, 3)) * scale]


@pytest.mark.parametrize("scale", [1.0, 2.0, 12.0])
@pytest.mark.parametrize("key", [(slice(None), 2), (slice(None), -1)])
def test_rnn_cell_value_vjp_jvp_against_autograd_and_central_differences(key, scale):
    # tanh(h @ W.T + A[key]) as one record: values, the three VJPs (each from one shared
    # da = g * tanh'(a)) and the JVPs against HIPS autograd (whose tanh derivative is
    # 1 / cosh(a)^2: full relative precision in saturation) and central differences
    args = _rnn_args(scale)
    G = np.random.default_rng(3).standard_normal((4, 3))
    y, grads = _tape_vjp(lambda h, w, a: R.rnn_cell(h, w, a, key=key), args, G)
    np.testing.assert_allclose(y, _rnn_ref(*args, key), rtol=1e-14, atol=1e-16)
    np.testing.assert_array_equal(y, R.tanh(R.linear_at(*args, key=key)).numpy())  # the same bits
    for i, d in enumerate(grads):
        ag = autograd.grad(lambda *a: anp.sum(_rnn_ref(*a, key) * G), argnum=i)(*args)
        np.testing.assert_allclose(d, ag, rtol=1e-13, atol=1e-300)
        num = central(lambda v, i=i: float(np.sum(_rnn_ref(*(args[:i] + [v] + args[i + 1:]), key) * G)),
                      args[i], h=1e-6)
        np.testing.assert_allclose(d, num, rtol=1e-6, atol=1e-8)
    T = [np.random.default_rng(5 + i).standard_normal(a.shape) for i, a in enumerate(args)]
    jv = _jvp(lambda h, w, a: R.rnn_cell(h, w, a, key=key), args, T)
    want = autograd.make_jvp(lambda v: _rnn_ref(v[0], v[1], v[2], key))(tuple(args))(tuple(T))[1]
    np.testing.assert_allclose(jv, want, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("scale", [1.0, 12.0])
@pytest.mark.parametrize("tracked", [(0,), (1,), (2,), (0, 2), (1, 2)])
def test_rnn_cell_joint_vjp_gives_each_tracked_input_its_own_gradient(tracked, scale):
    # the walk calls rnn_cell's joint_vjp once a node with the node's tracked inputs: a tape
    # that follows only some of h, W, A gets, for each, the bits it gets when all three are
    # followed, and the VJP called alone (registry.rnn_cell.vjps[i]) gives the same bits
    args = _rnn_args(scale)
    G = np.random.default_rng(4).standard_normal((4, 3))
    key = (slice(None), 1)
    _, full = _tape_vjp(lambda h, w, a: R.rnn_cell(h, w, a, key=key), args, G)
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch([ts[i] for i in tracked])
        y = R.rnn_cell(*ts, key=key)
    (node,) = tape._nodes
    assert [i for i, _ in node.pairs] == list(tracked)
    vals, kwargs = list(node.vals), node.kwargs
    got = tape.gradient(y, [ts[i] for i in tracked], output_gradients=G)
    for i, d in zip(tracked, got):
        np.testing.assert_array_equal(d.numpy(), full[i])
        alone = R.rnn_cell.vjps[i](G, y.numpy(), *vals, **kwargs)
        np.testing.assert_array_equal(np.asarray(alone), full[i])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack_joint_vjp_hands_each_tracked_input_its_slice_of_g(axis):
    # stack's joint_vjp (the walk's one call for its T inputs) with a constant among them: each
    # tracked input gets its own slice of g along axis, the bits of the VJP called alone
    rng = np.random.default_rng(6)
    xs = [rng.standard_normal((2, 3)) for _ in range(4)]
    ts = [ap.constant(x) for x in xs]
    tracked = [0, 1, 3]
    with ap.GradientTape() as tape:
        tape.watch([ts[i] for i in tracked])
        y = R.stack([ts[0], ts[1], xs[2], ts[3]], axis=axis)
    G = rng.standard_normal(y.shape)
    got = tape.gradient(y, [ts[i] for i in tracked], output_gradients=G)
    for i, d in zip(tracked, got):
        np.testing.assert_array_equal(d.numpy(), np.take(G, i, axis=axis))
        alone = R.PRIMITIVES["stack"].vjps[i](G, y.numpy(), *xs, axis=axis)
        np.testing.assert_array_equal(alone, d.numpy())


def test_rnn_cell_derivative_keeps_full_precision_in_saturation():
    # a = 20 and -30: 1 - y^2 rounds to 0; the record kept those pre-activations and takes
    # 1 / cosh(a)^2 there (1.70e-17 at 20), as manualprop's RNN
    h, W = np.zeros((1, 2)), np.zeros((2, 2))
    A = np.array([[[20.0, -30.0]], [[0.5, 1.0]]]).transpose(1, 0, 2)  # (1, 2, 2)
    _, (dh, dW, dA) = _tape_vjp(lambda h, w, a: R.rnn_cell(h, w, a, key=(slice(None), 0)),
                                [h, W, A], np.ones((1, 2)))
    np.testing.assert_allclose(dA[0, 0], 1.0 / np.cosh([20.0, -30.0]) ** 2, rtol=4e-15)
    assert dA[0, 0, 0] > 1e-17 and np.all(dA[0, 1] == 0)


@pytest.mark.parametrize("scale", [1.0, 2.0, 12.0])
def test_rnn_cell_second_derivatives_nested_tapes_and_a_tape_recording_its_own_walk(scale):
    # the VJPs on Tensors: nested tapes (both record the forward) and one persistent tape that
    # records its own backward pass (the record kept a only in part: 1 - y^2 recorded plus a
    # constant correction where it cancels), against autograd
    args = _rnn_args(scale)
    key = (slice(None), 1)
    G = np.random.default_rng(9).standard_normal((4, 3))

    def q_ref(*a):
        fs = autograd.grad(lambda *b: anp.sum(_rnn_ref(*b, key) * G), argnum=(0, 1, 2))(*a)
        return sum(anp.sum(f * f) for f in fs)

    want = [autograd.grad(q_ref, argnum=i)(*args) for i in range(3)]
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as outer:
        outer.watch(ts)
        with ap.GradientTape() as inner:
            inner.watch(ts)
            s = ap.sum(R.rnn_cell(*ts, key=key) * G)
        q = sum(ap.sum(f * f) for f in inner.gradient(s, ts))
    for d2, w in zip(outer.gradient(q, ts), want):
        np.testing.assert_allclose(d2.numpy(), w, rtol=1e-11, atol=1e-13)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(ts)
        s = ap.sum(R.rnn_cell(*ts, key=key) * G)
        q = sum(ap.sum(f * f) for f in tape.gradient(s, ts))
    for d2, w in zip(tape.gradient(q, ts), want):
        np.testing.assert_allclose(d2.numpy(), w, rtol=1e-11, atol=1e-13)


def test_rnn_cell_refuses_a_later_tape_that_follows_its_inputs_but_not_its_output():
    args = _rnn_args(2.0)  # (some entries beyond 1.6, not 7/8 of them)
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        y = R.rnn_cell(*ts, key=(slice(None), 0))
    with ap.GradientTape() as later:
        later.watch(ts)
        with pytest.raises(TypeError, match="open it before the forward pass"):
            tape.gradient(y, ts)


def test_rnn_cell_shares_da_within_one_walk_only():
    # a persistent tape walked twice with the same seed array, changed in place in between:
    # the second walk must not reuse the first walk's da, and each walk's three gradients
    # come from one da (the walk calls the record's joint_vjp)
    args = _rnn_args(12.0)
    ts = [ap.constant(a) for a in args]
    key = (slice(None), 3)
    G = np.random.default_rng(2).standard_normal((4, 3))
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(ts)
        y = R.rnn_cell(*ts, key=key)
    first = [d.numpy() for d in tape.gradient(y, ts, output_gradients=G)]
    G *= -3.0
    second = [d.numpy() for d in tape.gradient(y, ts, output_gradients=G)]
    for a, b in zip(first, second):
        np.testing.assert_allclose(b, -3.0 * a, rtol=1e-14, atol=1e-300)


def test_rnn_cell_keeps_only_the_pre_activations_beyond_1_6_and_summary_counts_them():
    args = _rnn_args(2.0)  # (some entries beyond 1.6, not 7/8 of them)
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        R.rnn_cell(*ts, key=(slice(None), 0))
    (node,) = tape._nodes
    kept = node.kwargs["saved"]
    a = args[0] @ args[1].T + args[2][:, 0]
    np.testing.assert_array_equal(kept.mask, np.abs(a) > 1.6)
    np.testing.assert_array_equal(kept.values, a[np.abs(a) > 1.6])
    assert f"saved=[(4, 3): {kept.values.size} kept]" in tape.summary()
    h, W, A = ts
    with ap.GradientTape() as tape:
        tape.watch(ts)
        R.rnn_cell(h * 0.0, W, A * 0.0, key=(slice(None), 0))  # a = 0: nothing kept
    assert tape._nodes[-1].kwargs["saved"].mask is None and "saved=[(4, 3): 0 kept]" in tape.summary()


@pytest.mark.parametrize("dtype, big", [(np.float64, 1000.0), (np.float32, 100.0)])
def test_rnn_cell_derivative_is_zero_without_a_warning_where_cosh_overflows(dtype, big):
    # |a| beyond 710 (float64) or 89 (float32): 1 / cosh(a)^2 is 0; the record keeps those
    # entries clipped there, so the VJP's cosh neither overflows nor warns
    import warnings

    h, W = np.zeros((1, 4), dtype), np.zeros((4, 4), dtype)
    A = np.array([[[big, -big, 20.0, 0.5]]], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, (dh, dW, dA) = _tape_vjp(lambda h, w, a: R.rnn_cell(h, w, a, key=(slice(None), 0)),
                                    [h, W, A], np.ones((1, 4), dtype))
    assert dA.dtype == dtype
    np.testing.assert_allclose(dA[0, 0], (1.0 / np.cosh(np.array([0.0, 0.0, 20.0, 0.5]))) ** 2
                               * [0, 0, 1, 1], rtol=4e-6 if dtype == np.float32 else 4e-15)
    assert dA[0, 0, 0] == 0 and dA[0, 0, 1] == 0 and dA[0, 0, 2] > 0


def test_rnn_backward_source_writes_bptt_with_one_derivative_and_runs_to_the_tapes_gradient():
    # tape.backward_source walks again on Tensors: rnn_tanh's VJP is written out as numpy, the
    # states again (as manualprop's backward recomputes them), the derivative 1 / cosh(a)^2
    # once for every step, each step's carry da_t @ W_hh once (T - 1 of them), and the code
    # gives the walk's gradients
    x = ap.constant(np.random.default_rng(0).standard_normal((2, 3, 3)) * 3)
    layer = ap.layers.RNN(3, 4, rng=0)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = layer(x)
    sources = [x, *layer.variables.values()]
    src = tape.backward_source(y, sources)
    code = str(src)
    assert code.count("np.cosh") == 1 and code.count("np.tanh") == 3
    assert code.count("@ W_hh") == 2 and "@ W_hh.T" not in code
    for got, want in zip(src.run(), tape.gradient(y, sources)):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-13, atol=1e-15)


# --- lstm_gates_at: linear_at, lstm_gates and split as one record (session 28) ---------------
def _gates_at_ref(h, W, A, key):
    return _ag_gates(h @ W.T + A[key])


def _gates_at_args(scale, seed=21):
    # h (3, 2), W (8, 2), A (3, 4, 8): H = 2; scale 1: moderate pre-activations; 6 and 30: many
    # gates saturated (1 - s and 1 - g^2 below 1/8, and rounding to 0)
    rng = np.random.default_rng(seed)
    return [np.tanh(rng.standard_normal((3, 2))), rng.standard_normal((8, 2)) * scale,
            rng.standard_normal((3, 4, 8)) * scale]


def _gates_at_tape(args, key, G, chain=False, watch=(0, 1, 2)):
    """The four blocks and the gradients of sum(concat(blocks) * G) w.r.t. the watched inputs,
    by lstm_gates_at or (``chain``) by the three records it replaces."""
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch([ts[i] for i in watch])
        if chain:
            blocks = R.split(R.lstm_gates(R.linear_at(*ts, key=key)), 4, axis=-1)
        else:
            blocks = R.lstm_gates_at(*ts, key=key)
    H = G.shape[-1] // 4
    gs = [G[..., k * H:(k + 1) * H] for k in range(4)]
    grads = tape.gradient(blocks, [ts[i] for i in watch], output_gradients=gs)
    return [b.numpy() for b in blocks], [d.numpy() for d in grads], tape


@pytest.mark.parametrize("scale", [1.0, 6.0, 30.0])
@pytest.mark.parametrize("key", [(slice(None), 2), (slice(None), -1)])
def test_lstm_gates_at_values_vjps_jvps_against_autograd_central_differences_and_the_chain(key, scale):
    # one record for linear_at, lstm_gates and split: the bits of the three records (values and
    # gradients), autograd's values, VJPs and JVPs, and central differences
    args = _gates_at_args(scale)
    G = np.random.default_rng(3).standard_normal((3, 8))
    blocks, grads, _ = _gates_at_tape(args, key, G)
    chain_blocks, chain_grads, _ = _gates_at_tape(args, key, G, chain=True)
    for a, b in zip(blocks + grads, chain_blocks + chain_grads):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.concatenate(blocks, axis=-1), _gates_at_ref(*args, key), rtol=1e-14, atol=1e-300)
    for i, d in enumerate(grads):
        ag = autograd.grad(lambda *a: anp.sum(_gates_at_ref(*a, key) * G), argnum=i)(*args)
        np.testing.assert_allclose(d, ag, rtol=1e-12, atol=1e-300)
        num = central(lambda v, i=i: float(np.sum(_gates_at_ref(*(args[:i] + [v] + args[i + 1:]), key) * G)),
                      args[i], h=1e-6)
        np.testing.assert_allclose(d, num, rtol=1e-6, atol=1e-8)
    T = [np.random.default_rng(5 + i).standard_normal(a.shape) for i, a in enumerate(args)]
    ts = [ap.constant(a) for a in args]
    with ap.ForwardAccumulator(ts, T) as acc:
        out = R.lstm_gates_at(*ts, key=key)
    jv = np.concatenate([acc.jvp(o).numpy() for o in out], axis=-1)
    want = autograd.make_jvp(lambda v: _gates_at_ref(v[0], v[1], v[2], key))(tuple(args))(tuple(T))[1]
    np.testing.assert_allclose(jv, want, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("scale", [1.0, 30.0])
@pytest.mark.parametrize("watch", [(0,), (1,), (2,), (0, 2), (1, 2)])
def test_lstm_gates_at_joint_vjp_and_unused_blocks(watch, scale):
    # a tape that follows some of h, W, A gets, for each, the bits it gets when all three are
    # followed, and so does the VJP called alone; a block nobody used contributes nothing
    args = _gates_at_args(scale)
    key = (slice(None), 1)
    G = np.random.default_rng(4).standard_normal((3, 8))
    _, full, _ = _gates_at_tape(args, key, G)
    _, part, _ = _gates_at_tape(args, key, G, watch=watch)
    for i, d in zip(watch, part):
        np.testing.assert_array_equal(d, full[i])
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        i_, f_, g_, o_ = R.lstm_gates_at(*ts, key=key)
        s = ap.sum(i_ * G[:, :2]) + ap.sum(o_ * G[:, 6:])  # f and g unused
    (node,) = [n for n in tape._nodes if n.prim.name == "lstm_gates_at"]
    vals, kwargs, outs = list(node.vals), node.kwargs, tuple(o.numpy() for o in node.out)
    got = tape.gradient(s, ts)
    G2 = G.copy()
    G2[:, 2:6] = 0.0
    for i, d in enumerate(got):
        ag = autograd.grad(lambda *a: anp.sum(_gates_at_ref(*a, key) * G2), argnum=i)(*args)
        np.testing.assert_allclose(d.numpy(), ag, rtol=1e-12, atol=1e-300)
        alone = R.lstm_gates_at.vjps[i]((G[:, :2], None, None, G[:, 6:]), outs, *vals, **kwargs)
        alone = alone.dense() if hasattr(alone, "dense") else alone  # (A's: a tape.Scatter)
        np.testing.assert_array_equal(np.asarray(alone), d.numpy())


@pytest.mark.parametrize("scale", [1.0, 6.0])
def test_lstm_gates_at_second_derivatives_nested_tapes_and_a_tape_recording_its_own_walk(scale):
    # the VJPs on Tensors (the record kept a only in part: the output form recorded in the gates
    # plus a constant correction where it cancels), against autograd
    args = _gates_at_args(scale)
    key = (slice(None), 0)
    G = np.random.default_rng(9).standard_normal((3, 8))

    def q_ref(*a):
        fs = autograd.grad(lambda *b: anp.sum(_gates_at_ref(*b, key) * G), argnum=(0, 1, 2))(*a)
        return sum(anp.sum(f * f) for f in fs)

    want = [autograd.grad(q_ref, argnum=i)(*args) for i in range(3)]
    ts = [ap.constant(a) for a in args]

    def s_of(ts):
        return sum(ap.sum(b * G[:, 2 * k:2 * k + 2]) for k, b in enumerate(R.lstm_gates_at(*ts, key=key)))

    with ap.GradientTape() as outer:
        outer.watch(ts)
        with ap.GradientTape() as inner:
            inner.watch(ts)
            s = s_of(ts)
        q = sum(ap.sum(f * f) for f in inner.gradient(s, ts))
    for d2, w in zip(outer.gradient(q, ts), want):
        np.testing.assert_allclose(d2.numpy(), w, rtol=1e-10, atol=1e-12)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(ts)
        s = s_of(ts)
        q = sum(ap.sum(f * f) for f in tape.gradient(s, ts))
    for d2, w in zip(tape.gradient(q, ts), want):
        np.testing.assert_allclose(d2.numpy(), w, rtol=1e-10, atol=1e-12)


def test_lstm_gates_at_refuses_a_later_tape_that_follows_its_inputs_but_not_its_outputs():
    args = _gates_at_args(6.0)  # (gates near saturation: entries of a kept)
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        blocks = R.lstm_gates_at(*ts, key=(slice(None), 0))
    with ap.GradientTape() as later:
        later.watch(ts)
        with pytest.raises(TypeError, match="open it before the forward pass"):
            tape.gradient(blocks, ts)


def test_lstm_gates_at_keeps_lstm_gates_entries_of_a_and_summary_counts_them():
    # the pre-activation is internal to the record: it keeps what lstm_gates' record keeps of
    # its input a (the entries near saturation: 6 of 24 here), and the gates (its outputs)
    args = _gates_at_args(2.0)
    ts = [ap.constant(a) for a in args]
    key = (slice(None), 0)
    with ap.GradientTape() as tape2:  # (first: a tape that has exited listens, and lstm_gates
        tape2.watch(ts)  # keeps all of its input a for a second tape)
        R.lstm_gates(R.linear_at(*ts, key=key))
    with ap.GradientTape() as tape:
        tape.watch(ts)
        R.lstm_gates_at(*ts, key=key)
    (node,) = tape._nodes
    kept, want = node.kwargs["saved"], tape2._nodes[-1].vals[0]
    np.testing.assert_array_equal(kept.mask, want.mask)
    np.testing.assert_array_equal(kept.values, want.values)
    assert kept.values.size and f"saved=[(3, 8): {kept.values.size} kept]" in tape.summary()
    assert all(type(o) is ap.Tensor for o in node.out) and node.out[0]._value.base is node.out[3]._value.base


def test_a_multi_output_record_still_marks_pieces_that_view_an_input_through_another_base():
    # call_multi looks at a base once when it shares no memory with an input (lstm_gates_at's own
    # gates); pieces of a base that does overlap an input (here the array an input is a view of)
    # are still marked, so `piece *= 2` is refused as numpy would write through into the input
    from autoprop.core.registry import MultiPrimitive

    whole = np.arange(12.0).reshape(3, 4)
    x = ap.constant(whole)[1:]  # a view of the constant's values
    prim = MultiPrimitive("pieces_of_base", lambda v: (v.base[:1], v.base[1:]), (lambda g, ans, v: None,),
                          "", None, (), (), None, None, None, None)
    _, second = prim(x)
    assert second._value.base is x._value.base
    with pytest.raises(TypeError, match="a view of another tensor's values"):
        second *= 2.0


def test_lstm_gates_at_with_a_nan_and_a_zero_upstream_gradient_has_the_chains_bits():
    # a NaN pre-activation (lstm_gates keeps the entries near saturation, its VJP takes the
    # general path, the 0·inf rule where the upstream gradient is 0): the bits of the chain
    args = _gates_at_args(6.0)
    args[2][1, 0, 5] = np.nan
    G = np.random.default_rng(8).standard_normal((3, 8))
    G[1, 5] = 0.0
    G[0] = 0.0
    one, two = _gates_at_tape(args, (slice(None), 0), G), _gates_at_tape(args, (slice(None), 0), G, chain=True)
    for a, b in zip(one[0] + one[1], two[0] + two[1]):
        np.testing.assert_array_equal(a, b)  # (NaN where NaN)
    assert np.isnan(one[0][2][1, 1])  # the NaN's gate (block g, column 1)
    assert one[1][2][1, 0, 5] == 0 and all(np.isfinite(d).all() for d in one[1])  # g = 0 there: 0, not NaN
