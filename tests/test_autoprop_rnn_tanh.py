"""``rnn_tanh(x, h0, W_ih, W_hh, b_ih, b_hh)``: the tanh RNN layer as one record (BPTT as its VJP).

Values, the six VJPs and the six JVPs against HIPS autograd (the oracle, differentiating the
recurrence written as a loop) and central differences, in float64 and float32, with and without
an initial state; saturation, second derivatives through nested tapes, the refusal of a tape
that follows the inputs but not the output, and the layer against manualprop's RNN.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import autoprop as ap
import manualprop as mp
from autoprop.core import registry as R
from tests.oracles import central

NAMES = ("x", "h0", "W_ih", "W_hh", "b_ih", "b_hh")
ALL = tuple(range(6))


def _ref(x, h0, W_ih, W_hh, b_ih, b_hh):
    """The recurrence as HIPS autograd differentiates it: a loop of tanh steps."""
    h, hs = h0, []
    for t in range(x.shape[1]):
        h = anp.tanh(x[:, t] @ W_ih.T + b_ih + b_hh + h @ W_hh.T)
        hs.append(h)
    return anp.stack(hs, axis=1)


def _args(scale, dtype=np.float64, seed=11):
    # x (3, 5, 2), h0 (3, 4), W_ih (4, 2), W_hh (4, 4), b_ih, b_hh (4,); scale 1: moderate
    # pre-activations; 12: many beyond +-1.6 (the entries the record keeps) and some far in
    # saturation (1 - y^2 rounds to 0)
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((3, 5, 2)) * scale).astype(dtype),
            np.tanh(rng.standard_normal((3, 4))).astype(dtype),
            rng.standard_normal((4, 2)).astype(dtype),
            (rng.standard_normal((4, 4)) * scale / 2).astype(dtype),
            rng.standard_normal(4).astype(dtype) * scale / 4,
            rng.standard_normal(4).astype(dtype) * scale / 4]


def _projection_args(A, W_hh, h0):
    """Arguments whose input projection is ``A`` itself: x = A, W_ih = I, zero biases."""
    H = A.shape[-1]
    return [A, h0, np.eye(H, dtype=A.dtype), W_hh, np.zeros(H, A.dtype), np.zeros(H, A.dtype)]


def _tape(args, G, watch=ALL):
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch([ts[i] for i in watch])
        y = R.rnn_tanh(*ts)
    return y, tape.gradient(y, [ts[i] for i in watch], output_gradients=G)


@pytest.mark.parametrize("scale", [1.0, 2.0, 12.0])
def test_values_vjps_jvps_against_autograd_and_central_differences_float64(scale):
    args = _args(scale)
    G = np.random.default_rng(3).standard_normal((3, 5, 4))
    y, grads = _tape(args, G)
    np.testing.assert_allclose(y.numpy(), _ref(*args), rtol=1e-14, atol=1e-16)
    for i, d in enumerate(grads):
        ag = autograd.grad(lambda *a: anp.sum(_ref(*a) * G), argnum=i)(*args)
        np.testing.assert_allclose(d.numpy(), ag, rtol=1e-12, atol=1e-300)
        num = central(lambda v, i=i: float(np.sum(_ref(*(args[:i] + [v] + args[i + 1:])) * G)),
                      args[i], h=1e-6)
        np.testing.assert_allclose(d.numpy(), num, rtol=1e-6, atol=1e-8)
    T = [np.random.default_rng(5 + i).standard_normal(a.shape) for i, a in enumerate(args)]
    for i in ALL:  # each input's tangent alone, then all six at once
        ts = [ap.constant(a) for a in args]
        with ap.ForwardAccumulator(ts[i], T[i]) as acc:
            y = R.rnn_tanh(*ts)
        want = autograd.make_jvp(lambda v, i=i: _ref(*(args[:i] + [v] + args[i + 1:])))(args[i])(T[i])[1]
        np.testing.assert_allclose(acc.jvp(y).numpy(), want, rtol=1e-12, atol=1e-300)
    ts = [ap.constant(a) for a in args]
    with ap.ForwardAccumulator(ts, T) as acc:
        y = R.rnn_tanh(*ts)
    want = autograd.make_jvp(lambda v: _ref(*v))(tuple(args))(tuple(T))[1]
    np.testing.assert_allclose(acc.jvp(y).numpy(), want, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("scale", [1.0, 12.0])
def test_float32_keeps_its_dtype_and_agrees_with_autograd_in_float64(scale):
    args = _args(scale, np.float32)
    G = np.random.default_rng(3).standard_normal((3, 5, 4)).astype(np.float32)
    y, grads = _tape(args, G)
    wide = [a.astype(np.float64) for a in args]
    assert y.dtype == np.float32 and all(d.dtype == np.float32 for d in grads)
    np.testing.assert_allclose(y.numpy(), _ref(*wide), rtol=2e-5, atol=1e-6)
    for i, d in enumerate(grads):
        ag = autograd.grad(lambda *a: anp.sum(_ref(*a) * G), argnum=i)(*wide)
        np.testing.assert_allclose(d.numpy(), ag, rtol=1e-4, atol=1e-4 * float(np.max(np.abs(ag))))
    t = np.random.default_rng(8).standard_normal(args[3].shape).astype(np.float32)
    ts = [ap.constant(a) for a in args]
    with ap.ForwardAccumulator(ts[3], t) as acc:
        y = R.rnn_tanh(*ts)
    want = autograd.make_jvp(lambda v: _ref(*wide[:3], v, *wide[4:]))(wide[3])(t.astype(np.float64))[1]
    assert acc.jvp(y).dtype == np.float32
    np.testing.assert_allclose(acc.jvp(y).numpy(), want, rtol=1e-4, atol=1e-4 * float(np.max(np.abs(want))))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("with_h0", [False, True])
def test_the_rnn_layer_is_manualprops_rnn_with_and_without_an_initial_state(dtype, with_h0):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4, 6, 3)).astype(dtype)
    G = rng.standard_normal((4, 6, 5)).astype(dtype)
    h0 = np.tanh(rng.standard_normal((4, 5))).astype(dtype) if with_h0 else None
    manual, twin = mp.RNN(3, 5, rng=2, dtype=dtype), ap.layers.RNN(3, 5, rng=2, dtype=dtype)
    Y = manual.forward(X, h0=h0)
    dX = manual.backward(G)
    x = ap.constant(X)
    h = None if h0 is None else ap.constant(h0)
    with ap.GradientTape() as tape:
        tape.watch(x)
        if h is not None:
            tape.watch(h)
        y = twin(x, h0=h)
    names = list(twin.variables)
    sources = [x] + [twin.variables[k] for k in names] + ([h] if h is not None else [])
    got = tape.gradient(y, sources, output_gradients=G)
    want = [dX] + [manual.grads[k] for k in names] + ([manual.dh0] if h is not None else [])
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y.numpy(), Y, rtol=tol, atol=tol)
    for g, w in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g.numpy(), w, rtol=tol, atol=tol * float(np.max(np.abs(w))))


@pytest.mark.parametrize("scale", [1.0, 12.0])
@pytest.mark.parametrize("watch", [(0,), (1,), (3,), (5,), (0, 1), (2, 3), (1, 3, 4)])
def test_joint_vjp_gives_each_tracked_input_the_bits_of_all_three_and_of_its_vjp_alone(watch, scale):
    args = _args(scale)
    G = np.random.default_rng(4).standard_normal((3, 5, 4))
    _, full = _tape(args, G)
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch([ts[i] for i in watch])
        y = R.rnn_tanh(*ts)
    (node,) = tape._nodes
    vals, kwargs = list(node.vals), node.kwargs
    got = tape.gradient(y, [ts[i] for i in watch], output_gradients=G)
    for i, d in zip(watch, got):
        np.testing.assert_array_equal(d.numpy(), full[i].numpy())
        alone = R.rnn_tanh.vjps[i](G, y.numpy(), *args)  # outside a tape: a from the inputs
        np.testing.assert_allclose(alone, full[i].numpy(), rtol=1e-13, atol=1e-300)
    assert kwargs["saved"] is not None and vals[0] is not None


def test_the_derivative_keeps_full_precision_in_saturation():
    # a = 20 and -30 at the first step: 1 - y^2 rounds to 0; the record kept those
    # pre-activations and takes 1 / cosh(a)^2 there (1.70e-17 at 20), as manualprop's RNN
    A = np.array([[[20.0, -30.0], [0.5, 1.0]]])  # (1, 2, 2)
    G = np.zeros((1, 2, 2))
    G[0, 0] = 1.0
    _, (dA, *_) = _tape(_projection_args(A, np.zeros((2, 2)), np.zeros((1, 2))), G)
    np.testing.assert_allclose(dA.numpy()[0, 0], 1.0 / np.cosh([20.0, -30.0]) ** 2, rtol=4e-15)
    assert dA.numpy()[0, 0, 0] > 1e-17 and np.all(dA.numpy()[0, 1] == 0)


def test_the_record_keeps_manualprops_cache_and_not_its_outputs():
    # x, h0 and the pre-activations a (N, T, H), as manualprop's RNN caches X, h0 and A: the
    # same bytes, not the hidden states too (its VJP takes tanh'(a) and the states from a)
    from autoprop.core.tape import NotSaved

    x, h0, W_ih, W_hh, b_ih, b_hh = _args(2.0)
    manual = mp.RNN(2, 4)
    for k, v in zip(("W_ih", "W_hh", "b_ih", "b_hh"), (W_ih, W_hh, b_ih, b_hh)):
        manual.params[k][...] = v
    Y = manual.forward(x, h0=h0)
    ts = [ap.constant(v) for v in (x, h0)]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        y = R.rnn_tanh(*ts, W_ih, W_hh, b_ih, b_hh)
    (node,) = tape._nodes
    np.testing.assert_array_equal(y.numpy(), Y)  # manualprop's forward, the same bits
    np.testing.assert_array_equal(node.kwargs["saved"], manual.cache["A"])
    assert type(node.out) is NotSaved
    kept = sum(v.nbytes for v in (x, h0, manual.cache["A"], W_ih, W_hh, b_ih, b_hh))  # (the weights
    assert f"({kept} bytes)" in tape.summary()  # are plain arrays here, not Variables: counted)


@pytest.mark.filterwarnings("ignore:GradientTape.gradient was called inside")  # (on purpose)
@pytest.mark.parametrize("scale", [1.0, 2.0, 12.0])
def test_second_derivatives_nested_tapes_and_a_tape_recording_its_own_walk(scale):
    args = _args(scale)
    G = np.random.default_rng(9).standard_normal((3, 5, 4))

    def q_ref(*a):
        fs = autograd.grad(lambda *b: anp.sum(_ref(*b) * G), argnum=ALL)(*a)
        return sum(anp.sum(f * f) for f in fs)

    want = [autograd.grad(q_ref, argnum=i)(*args) for i in ALL]
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as outer:
        outer.watch(ts)
        with ap.GradientTape() as inner:
            inner.watch(ts)
            s = ap.sum(R.rnn_tanh(*ts) * G)
        q = sum(ap.sum(f * f) for f in inner.gradient(s, ts))
    for d2, w in zip(outer.gradient(q, ts), want):
        np.testing.assert_allclose(d2.numpy(), w, rtol=1e-10, atol=1e-12)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(ts)
        s = ap.sum(R.rnn_tanh(*ts) * G)
        q = sum(ap.sum(f * f) for f in tape.gradient(s, ts))
    for d2, w in zip(tape.gradient(q, ts), want):
        np.testing.assert_allclose(d2.numpy(), w, rtol=1e-10, atol=1e-12)


def test_a_tape_opened_after_the_forward_differentiates_the_backward_pass_through_the_inputs():
    # the VJP on Tensors runs the forward again, recorded: a tape that follows the inputs but
    # not the output (opened after the forward) still gets the second derivatives right
    # (rnn_cell, which keeps its outputs, refuses this case)
    args = _args(2.0)
    G = np.random.default_rng(9).standard_normal((3, 5, 4))
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        y = R.rnn_tanh(*ts)
    with ap.GradientTape() as later:
        later.watch(ts)
        q = sum(ap.sum(f * f) for f in tape.gradient(y, ts, output_gradients=G))
    got = later.gradient(q, ts)

    def q_ref(*a):
        fs = autograd.grad(lambda *b: anp.sum(_ref(*b) * G), argnum=ALL)(*a)
        return sum(anp.sum(f * f) for f in fs)

    for i, d2 in enumerate(got):
        np.testing.assert_allclose(d2.numpy(), autograd.grad(q_ref, argnum=i)(*args), rtol=1e-10, atol=1e-12)


def test_a_nan_pre_activation_gives_nan_where_it_reaches_and_zero_upstream_stays_zero():
    args = _args(1.0)
    args[0][1, 2, 0] = np.nan  # sample 1, step 2: its states from step 2 on are NaN
    G = np.random.default_rng(2).standard_normal((3, 5, 4))
    G[1] = 0.0  # sample 1 sends no gradient: by the 0·inf rule it gets none back
    y, (dx, dh0) = _tape(args, G, watch=(0, 1))
    assert np.isnan(y.numpy()[1, 2, 0]) and np.isnan(y.numpy()[1, 3:]).all()
    assert np.isfinite(y.numpy()[[0, 2]]).all() and np.isfinite(y.numpy()[1, :2]).all()
    assert np.all(dx.numpy()[1, :2] == 0) and np.all(dh0.numpy()[1] == 0)  # (dx_t = da_t W_ih: NaN
    ok = [0, 2]  # where x_t is NaN, 0 before it)
    ag = autograd.grad(lambda v: anp.sum(_ref(v, args[1][ok], *args[2:]) * G[ok]))(args[0][ok])
    np.testing.assert_allclose(dx.numpy()[ok], ag, rtol=1e-12, atol=1e-300)


def test_bad_shapes_are_refused_naming_the_argument():
    x, h0, W_ih, W_hh, b_ih, b_hh = _args(1.0)
    with pytest.raises(ValueError, match=r"rnn_tanh: W_ih must be \(4, 2\).*got shape \(4, 3\)"):
        R.rnn_tanh(x, h0, np.ones((4, 3)), W_hh, b_ih, b_hh)
    with pytest.raises(ValueError, match=r"rnn_tanh: h0 must be \(3, 4\).*got shape \(2, 4\)"):
        R.rnn_tanh(x, h0[:2], W_ih, W_hh, b_ih, b_hh)
    with pytest.raises(ValueError, match=r"rnn_tanh: b_hh must be \(4,\).*got shape \(3,\)"):
        R.rnn_tanh(x, h0, W_ih, W_hh, b_ih, b_hh[:3])
    with pytest.raises(ValueError, match=r"rnn_tanh: x must be \(batch, time, features\)"):
        R.rnn_tanh(x[0], h0, W_ih, W_hh, b_ih, b_hh)
    with pytest.raises(TypeError, match="rnn_tanh: real floating values only"):
        R.rnn_tanh(x.astype(complex), h0, W_ih, W_hh, b_ih, b_hh)
