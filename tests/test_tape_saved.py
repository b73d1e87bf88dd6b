"""What the tape saves for the backward pass (issue 15): only what each record's VJPs read.

A record declares ``reads`` (per VJP: argument positions and/or ``"ans"``); the tape saves
those values and hands every other input or output to the VJP as a ``NotSaved`` (shape and
dtype; reading its values raises). These tests check, for every primitive that declares
``reads``, that the gradients are bit-for-bit those of a tape that saves everything; that a
wrong declaration fails loudly; that an intermediate nobody reads is freed; and that the
walk names tensors by ``Tensor._key``, so a freed tensor's ``id()`` reused by a new one
cannot mix their gradients.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import autoprop as ap
from autoprop.core import registry as R
from autoprop.core.tape import NotSaved
from tests.primitive_samples import SAMPLES

DECLARED = sorted(name for name, p in R.PRIMITIVES.items() if p.reads is not None and name in SAMPLES)


def test_the_training_primitives_declare_what_they_read():
    # the MLP, CNN and LSTM steps of benchmarks/train_step.py run on these
    for name in ("add", "subtract", "multiply", "matmul", "tanh", "sigmoid", "relu", "exp", "mean",
                 "sum", "reshape", "transpose", "getitem", "extract_patches", "take_along_axis",
                 "sparse_softmax_cross_entropy_with_logits"):
        assert R.PRIMITIVES[name].reads is not None, name
    assert set(DECLARED) >= {"add", "multiply", "matmul", "tanh", "relu"}


def _grads(name, save_all, seed=0):
    prim = R.PRIMITIVES[name]
    rng = np.random.default_rng(seed)
    args, kwargs = SAMPLES[name].make(rng)
    ts = [ap.constant(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in args]
    diff = [t for i, t in enumerate(ts) if isinstance(t, ap.Tensor) and prim.vjps[i] is not None]
    with ap.GradientTape(persistent=True) as tape:
        tape._save_all = save_all
        tape.watch(diff)
        y = prim(*ts, **kwargs)
    r = np.random.default_rng(seed + 1)
    if isinstance(y, list):  # a MultiPrimitive (split): a gradient per output
        G = [r.standard_normal(o.shape) for o in y]
    else:
        G = r.standard_normal(y.shape)
    return tape, [g.numpy() for g in tape.gradient(y, diff, output_gradients=G)]


@pytest.mark.parametrize("name", DECLARED)
def test_saving_only_what_the_vjps_read_gives_the_same_bits(name):
    _, full = _grads(name, save_all=True)
    tape, part = _grads(name, save_all=False)
    for a, b in zip(full, part):
        np.testing.assert_array_equal(a, b)
    assert all(isinstance(v, (np.ndarray, NotSaved)) or not isinstance(v, np.ndarray)
               for v in tape._nodes[0].vals)


@pytest.mark.parametrize("name", DECLARED)
def test_second_derivatives_with_only_what_the_vjps_read(name):
    # nested tapes: the inner walk runs on Tensors; NotSaved stands in there too
    prim = R.PRIMITIVES[name]
    args, kwargs = SAMPLES[name].make(np.random.default_rng(3))
    i = next((i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
              and prim.vjps[i] is not None), None)
    if i is None:
        pytest.skip("no float argument")
    out = []
    for save_all in (True, False):
        ts = [ap.constant(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in args]
        with ap.GradientTape() as outer:
            outer.watch(ts[i])
            with ap.GradientTape() as inner:
                inner._save_all = save_all
                inner.watch(ts[i])
                y = prim(*ts, **kwargs)
            g = inner.gradient(y, ts[i])
            s = ap.sum(g * g)
        h = outer.gradient(s, ts[i])
        out.append(None if h is None else h.numpy())
    if out[0] is None:
        assert out[1] is None
    else:
        np.testing.assert_array_equal(out[0], out[1])


def test_not_saved_gives_shape_and_dtype_and_refuses_values():
    ns = NotSaved((3, 4), np.dtype(np.float64))
    assert ns.shape == (3, 4) and ns.ndim == 2 and ns.size == 12 and len(ns) == 3
    assert np.shape(ns) == (3, 4) and np.ndim(ns) == 2
    for use in (lambda: np.ones(3) * ns, lambda: ns + 1.0, lambda: np.asarray(ns), lambda: ns[0],
                lambda: np.exp(ns), lambda: ns > 0):
        with pytest.raises(TypeError, match="does not save|NotSaved"):
            use()
    for use in (lambda: ns.T, lambda: ns.sum(), lambda: ns.flags):
        with pytest.raises(AttributeError, match="does not save"):
            use()
    assert getattr(ns, "name", None) is None and not hasattr(ns, "_value")


def test_a_wrong_reads_declaration_fails_loudly_not_silently():
    # a record that claims its VJP reads nothing, while the VJP reads x: TypeError, no number
    bad = R.Primitive("square_wrongly_declared", np.square,
                      (lambda g, ans, x: g * 2.0 * x,), {"jacobian": ""}, reads=((),))
    x = ap.constant([1.0, 2.0])
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = bad(x)
    with pytest.raises(TypeError, match="reads="):
        tape.gradient(y, x)
    with pytest.raises(ValueError, match="reads="):
        R.Primitive("p", np.square, (lambda g, ans, x: g,), {}, reads=((0,), ()))  # two for one VJP


def test_a_variadic_record_saves_only_what_its_declaration_names():
    # stack's and concatenate's VJPs read shapes only (reads=()): neither the inputs nor the
    # output is saved, and an input nobody else holds is freed; einsum's read the operands
    xs = [ap.constant(np.arange(6.0).reshape(2, 3) + k) for k in range(3)]
    G = np.random.default_rng(0).standard_normal((4, 3))
    with ap.GradientTape() as tape:
        tape.watch(xs)
        h = xs[0] * 2.0
        ref = weakref.ref(h)
        y = np.stack([h, xs[1], xs[2]], axis=-1)
        del h
        gc.collect()
        assert ref() is None
        c = np.concatenate([y, y], axis=0)
        e = np.einsum("ijk,ijk->ij", c, c)
    st, cat, ein = tape._nodes[1:]
    for node in (st, cat):
        assert isinstance(node.out, NotSaved) and all(isinstance(v, NotSaved) for v in node.vals)
        assert all(isinstance(a, NotSaved) for a in node.args)
    assert isinstance(ein.out, NotSaved) and all(type(v) is np.ndarray for v in ein.vals)
    g0, g1, g2 = tape.gradient(e, xs, output_gradients=G)
    C = np.concatenate([np.stack([xs[0].numpy() * 2.0, xs[1].numpy(), xs[2].numpy()], axis=-1)] * 2)
    dC = 2.0 * C * G[..., None]
    dY = dC[:2] + dC[2:]
    np.testing.assert_allclose(g0.numpy(), 2.0 * dY[..., 0], rtol=1e-14)
    np.testing.assert_allclose(g1.numpy(), dY[..., 1], rtol=1e-14)
    np.testing.assert_allclose(g2.numpy(), dY[..., 2], rtol=1e-14)
    with pytest.raises(ValueError, match="reads="):  # a variadic record: one tuple of "ans"/"args"
        R.Primitive("v", np.add, R._Variadic(lambda i, g, ans, *xs: g), {}, reads=((0,),))


def test_an_intermediate_no_vjp_reads_is_freed_during_the_forward():
    W = ap.Variable(np.ones((3, 4)))
    b = ap.Variable(np.zeros(3))
    X = ap.constant(np.arange(8.0).reshape(2, 4))
    with ap.GradientTape() as tape:
        xw = ap.matmul(X, W, transpose_b=True)
        ref = weakref.ref(xw)
        z = xw + b  # add's VJPs read only shapes: xw is not saved
        del xw
        gc.collect()
        assert ref() is None
        loss = ap.sum(ap.tanh(z))  # tanh saves its input z
    text = tape.summary()
    assert "[(2, 3)]*" in text  # add's input: its shape only
    gW, gb = tape.gradient(loss, [W, b])
    d = 1.0 / np.cosh(np.arange(8.0).reshape(2, 4).sum(axis=1, keepdims=True).repeat(3, 1)) ** 2
    np.testing.assert_allclose(gb.numpy(), d.sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose(gW.numpy(), d.T @ np.arange(8.0).reshape(2, 4), rtol=1e-13)


def test_relu_saves_its_mask_one_byte_per_element():
    x = ap.Variable(np.linspace(-1.0, 1.0, 64).reshape(8, 8))
    with ap.GradientTape(persistent=True) as tape:
        y = ap.sum(ap.relu(x) * 3.0)
    node = tape._nodes[0]
    assert node.vals[0].dtype == np.bool_ and node.vals[0].nbytes == 64
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), 3.0 * (x.numpy() > 0))
    assert "64 B" in tape.summary().splitlines()[2]


def test_a_freed_tensors_id_reused_by_a_new_watched_tensor_gets_its_own_gradient():
    # the walk names tensors by Tensor._key: ids of freed intermediates come back (CPython
    # reuses memory at once), and a new tensor at the same address must not collect
    # the gradient of the old one
    x = ap.Variable(np.full(3, 2.0))
    with ap.GradientTape(persistent=True) as tape:
        acc = x * 0.0
        for _ in range(50):
            acc = acc + ap.exp(x) * 1.0  # each `exp(x) * 1.0` is freed after the add
        ys = [ap.constant(np.full(3, float(k))) for k in range(50)]
        for y in ys:
            tape.watch(y)
        total = ap.sum(acc) + sum(ap.sum(y * 5.0) for y in ys)
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), 50 * np.exp(2.0), rtol=1e-13)
    for g in tape.gradient(total, ys):
        np.testing.assert_array_equal(g.numpy(), np.full(3, 5.0))


def test_a_plain_array_the_vjp_reads_is_still_copied_but_one_it_does_not_read_is_not():
    x = ap.Variable(np.ones(3))
    c = np.full(3, 2.0)
    d = np.full(3, 7.0)
    with ap.GradientTape() as tape:
        y = ap.sum((x * c) + d)
    c[:] = 100.0  # in-place change after the forward: the VJP sees the forward's value
    d[:] = 100.0  # d is never read by a VJP (add), so nothing was copied
    mul, add = tape._nodes[0], tape._nodes[1]
    assert mul.vals[1] is not c and isinstance(add.vals[1], NotSaved)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 2.0, 2.0])


def test_a_copied_or_unpickled_tensor_gets_a_new_identity():
    import copy
    import pickle

    x = ap.Variable([1.0, 2.0], name="x")
    c = ap.constant([3.0, 4.0])
    for other in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x), pickle.loads(pickle.dumps(c))):
        assert other._key not in (x._key, c._key)
    y = pickle.loads(pickle.dumps(x))
    assert (type(y), y.name, y.trainable, y.numpy().tolist()) == (ap.Variable, "x", True, [1.0, 2.0])
    with ap.GradientTape() as tape:
        z = ap.sum(x * 2.0 + y * 3.0)  # two Variables with equal values: separate gradients
    gx, gy = tape.gradient(z, [x, y])
    assert gx.numpy().tolist() == [2.0, 2.0] and gy.numpy().tolist() == [3.0, 3.0]


def test_a_source_that_is_an_intermediate_keeps_its_gradient_and_passes_it_on():
    # the walk pops each node's gradient as it goes; a source computed on the tape (y) is put
    # back: its gradient is the total over its consumers, and x gets the chain through it
    x = ap.constant([1.0, -2.0, 3.0])
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.watch(y)
        z = ap.sum(y * 3.0) + ap.sum(y * y)
    gy, gx = tape.gradient(z, [y, x])
    xv = np.array([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(gy.numpy(), 3.0 + 2.0 * xv * xv)
    np.testing.assert_array_equal(gx.numpy(), (3.0 + 2.0 * xv * xv) * 2.0 * xv)


def _gates_tape(A, save_all=False, persistent=False):
    a = ap.constant(A)
    with ap.GradientTape(persistent=persistent) as tape:
        tape._save_all = save_all
        tape.watch(a)
        z = R.lstm_gates(a * 1.0)
    return tape, a, z


def test_a_partly_saved_input_counts_its_mask_and_values_and_refuses_the_rest():
    # lstm_gates keeps the gates and, of a, the entries near saturation (a > 1.9 on the
    # sigmoid blocks, |a| > 1.6 on block g): the summary counts the mask and those values
    from autoprop.core.tape import PartlySaved

    A = np.random.default_rng(0).uniform(-1.5, 1.5, (8, 16))
    A[0, 0], A[1, 3], A[2, 9], A[3, 5], A[4, 10] = 25.0, -3.0, -40.0, 1.95, -np.inf
    tape, a, z = _gates_tape(A)
    kept = tape._nodes[1].vals[0]
    keep = A > 1.9
    keep[:, 8:12] = np.abs(A[:, 8:12]) > 1.6
    assert type(kept) is PartlySaved and int(keep.sum()) == 4  # -3.0 in block i: s(a) -> 0
    np.testing.assert_array_equal(kept.mask, keep)
    np.testing.assert_array_equal(kept.values, A[keep])
    assert "[(8, 16): 4 kept]*" in tape.summary()
    assert f"({8 * 16 * 8 + 8 * 16 + 4 * 8} bytes)" in tape.summary()  # z, the mask, 4 values
    with pytest.raises(TypeError, match="does not save"):
        np.asarray(kept)
    with pytest.raises(TypeError, match="an entry it did not keep"):
        kept.take(np.abs(A) > 1.0)
    G = np.random.default_rng(1).standard_normal(A.shape)
    g = tape.gradient(z, a, output_gradients=G).numpy()
    full, fa, fz = _gates_tape(A, save_all=True)
    np.testing.assert_array_equal(g, full.gradient(fz, fa, output_gradients=G).numpy())
    assert g[0, 0] != 0 and g[2, 9] != 0  # s'(25), tanh'(-40): tiny, not 0


def _ag_gates(w):
    import autograd.numpy as anp

    H = w.shape[-1] // 4
    s = 1.0 / (1.0 + anp.exp(-w))
    return anp.concatenate([s[:, :2 * H], anp.tanh(w[:, 2 * H:3 * H]), s[:, 3 * H:]], axis=1)


def test_gates_kept_in_part_under_a_tape_that_records_its_own_backward_pass():
    # a tape that recorded alone and differentiates its own backward pass (gradient inside its
    # block, persistent): the VJP on Tensors is the output form, recorded, plus a constant
    # correction where it cancels; first and second derivatives against HIPS autograd
    import autograd
    import autograd.numpy as anp

    A = np.random.default_rng(2).uniform(-1.5, 1.5, (4, 8))
    A[0, 0], A[1, 4], A[2, 5], A[3, 7] = 25.0, -2.0, 1.7, 2.2
    G = np.random.default_rng(3).standard_normal(A.shape)
    a = ap.constant(A)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(a)
        z = R.lstm_gates(a * 1.0)
        assert type(tape._nodes[1].vals[0]).__name__ == "PartlySaved"
        with pytest.warns(UserWarning, match="inside the tape's"):
            d = tape.gradient(ap.sum(z * G), a)
        s = ap.sum(d * d)
    d2 = tape.gradient(s, a).numpy()

    def first(w):
        return autograd.grad(lambda v: anp.sum(_ag_gates(v) * G))(w)

    np.testing.assert_allclose(d.numpy(), first(A), rtol=4e-15, atol=1e-300)
    ref = autograd.grad(lambda w: anp.sum(first(w) ** 2))(A)
    np.testing.assert_allclose(d2, ref, rtol=1e-12, atol=1e-30)


def test_gates_kept_in_part_refuse_a_later_tape_that_follows_their_input():
    # a tape opened after the forward pass that watches lstm_gates' input would need the whole
    # a (it does not follow z): a clear error, not a second derivative silently missing a term
    A = np.full((2, 8), 0.5)
    a = ap.constant(A)
    with ap.GradientTape() as tape:
        tape.watch(a)
        z = R.lstm_gates(a)
    with ap.GradientTape() as later:
        later.watch(a)
        with pytest.raises(TypeError, match="open it before the forward pass"):
            tape.gradient(z, a)
    a2 = ap.constant(A)
    with ap.GradientTape() as tape:
        tape.watch(a2)
        z = R.lstm_gates(a2)
    with ap.GradientTape():  # an unrelated tape: the constant derivative is right
        g = tape.gradient(z, a2)
    s = 1.0 / (1.0 + np.exp(-0.5))
    np.testing.assert_allclose(g.numpy()[0], [s * (1 - s)] * 4 + [1 - np.tanh(0.5) ** 2] * 2
                               + [s * (1 - s)] * 2, rtol=1e-15)


def test_nested_tapes_and_variables_keep_the_gates_whole_input():
    # the outer tape differentiates the VJP through all of a: under nesting nothing is dropped
    a = ap.constant(np.full((2, 8), 2.0))
    with ap.GradientTape() as outer:
        outer.watch(a)
        with ap.GradientTape() as inner:
            inner.watch(a)
            R.lstm_gates(a * 1.0)
    assert type(inner._nodes[1].vals[0]) is np.ndarray
    v = ap.Variable(np.full((2, 8), 2.0))
    with ap.GradientTape() as tape:
        R.lstm_gates(v)
    assert tape._nodes[0].args[0] is v


def test_lstm_gates_keep_the_gates_and_only_the_pre_activations_near_saturation():
    # the gate derivative from z (s (1 - s), 1 - g^2) where 1 - s and 1 - g^2 >= 1/8, from a
    # elsewhere: bits as a tape that saves everything, values as HIPS autograd's across the
    # switch (a from -45 to 45, the band 1.5..2.5 included)
    import autograd
    import autograd.numpy as anp

    from autoprop.core.tape import PartlySaved

    rng = np.random.default_rng(4)
    A = rng.uniform(-1.0, 1.0, (6, 16))
    A[0] = np.linspace(-45.0, 45.0, 16)
    A[1] = np.linspace(1.5, 2.5, 16)
    G = rng.standard_normal(A.shape)
    grads = []
    for save_all in (False, True):
        a = ap.constant(A)
        with ap.GradientTape() as tape:
            tape._save_all = save_all
            tape.watch(a)
            z = R.lstm_gates(a * 1.0)
        if not save_all:
            kept = tape._nodes[1].vals[0]
            H = 4
            keep = A > 1.9
            keep[:, 2 * H:3 * H] = np.abs(A[:, 2 * H:3 * H]) > 1.6
            assert type(kept) is PartlySaved and np.array_equal(kept.mask, keep)
        grads.append(tape.gradient(z, a, output_gradients=G).numpy())
    np.testing.assert_array_equal(grads[0], grads[1])

    def gates(w):
        s = 1.0 / (1.0 + anp.exp(-w))
        return anp.concatenate([s[:, :8], anp.tanh(w[:, 8:12]), s[:, 12:]], axis=1)

    ref = autograd.grad(lambda w: anp.sum(gates(w) * G))(A)
    np.testing.assert_allclose(grads[0], ref, rtol=4e-15, atol=0)


def test_lstm_gates_with_no_entry_kept_take_the_output_form_everywhere():
    # every |a| <= 1.6 (the edges included): the record keeps no entry and its VJP takes
    # s (1 - s) and 1 - g^2 without looking for saturated entries (session 13); the bits of
    # a tape that saves everything and the values of HIPS autograd
    import autograd
    import autograd.numpy as anp

    from autoprop.core.tape import PartlySaved

    rng = np.random.default_rng(7)
    A = rng.uniform(-1.6, 1.6, (5, 16))
    A[0] = np.linspace(-1.6, 1.6, 16)
    G = rng.standard_normal(A.shape)
    grads = []
    for save_all in (False, True):
        a = ap.constant(A)
        with ap.GradientTape() as tape:
            tape._save_all = save_all
            tape.watch(a)
            z = R.lstm_gates(a * 1.0)
        if not save_all:
            kept = tape._nodes[1].vals[0]
            assert type(kept) is PartlySaved and kept.mask is None and kept.values.size == 0
        grads.append(tape.gradient(z, a, output_gradients=G).numpy())
    np.testing.assert_array_equal(grads[0], grads[1])

    def gates(w):
        s = 1.0 / (1.0 + anp.exp(-w))
        return anp.concatenate([s[:, :8], anp.tanh(w[:, 8:12]), s[:, 12:]], axis=1)

    ref = autograd.grad(lambda w: anp.sum(gates(w) * G))(A)
    np.testing.assert_allclose(grads[0], ref, rtol=4e-15, atol=0)
    # a pre-activation just beyond 1.6 in block g is kept, and still matches autograd
    A[1, 8] = np.nextafter(1.6, 2.0)
    a = ap.constant(A)
    with ap.GradientTape() as tape:
        tape.watch(a)
        z = R.lstm_gates(a * 1.0)
    kept = tape._nodes[1].vals[0]
    assert type(kept) is PartlySaved and kept.mask is not None and kept.values.tolist() == [A[1, 8]]
    ref = autograd.grad(lambda w: anp.sum(gates(w) * G))(A)
    np.testing.assert_allclose(tape.gradient(z, a, output_gradients=G).numpy(), ref, rtol=4e-15, atol=0)


def test_lstm_gates_with_nothing_beyond_the_thresholds_keep_no_mask():
    # session 24: a sigmoid pre-activation in 1.6..1.9 or below -1.6 fails the quick |a| <= 1.6
    # test, but 1 - s is accurate there, so nothing is kept: the record keeps no mask either,
    # and its VJP takes the output form everywhere (the bits of a save-all tape, HIPS autograd's
    # values); a NaN still keeps the mask, so that the VJP applies the 0·inf rule there
    import autograd
    import autograd.numpy as anp

    from autoprop.core.tape import PartlySaved

    rng = np.random.default_rng(11)
    A = rng.uniform(-1.5, 1.5, (5, 16))
    A[0, :4] = [1.7, 1.9, -1.7, -40.0]  # block i: not kept (1 - s >= 0.13 there)
    A[1, 12:] = [np.nextafter(1.9, 0.0), -3.0, -30.0, 1.61]  # block o
    G = rng.standard_normal(A.shape)

    def gates(w):
        s = 1.0 / (1.0 + anp.exp(-w))
        return anp.concatenate([s[:, :8], anp.tanh(w[:, 8:12]), s[:, 12:]], axis=1)

    grads = []
    for save_all in (False, True):
        a = ap.constant(A)
        with ap.GradientTape() as tape:
            tape._save_all = save_all
            tape.watch(a)
            z = R.lstm_gates(a * 1.0)
        if not save_all:
            kept = tape._nodes[1].vals[0]
            assert type(kept) is PartlySaved and kept.mask is None and kept.values.size == 0
        grads.append(tape.gradient(z, a, output_gradients=G).numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    ref = autograd.grad(lambda w: anp.sum(gates(w) * G))(A)
    np.testing.assert_allclose(grads[0], ref, rtol=4e-15, atol=0)

    A[2, 5] = np.nan  # block f; nothing else beyond a threshold
    G[2, 5] = 0.0
    a = ap.constant(A)
    with ap.GradientTape() as tape:
        tape.watch(a)
        z = R.lstm_gates(a * 1.0)
    kept = tape._nodes[1].vals[0]
    assert type(kept) is PartlySaved and kept.mask is not None and kept.values.size == 0
    g = tape.gradient(z, a, output_gradients=G).numpy()
    assert g[2, 5] == 0.0  # 0 * NaN is 0 under the 0·inf rule
    ok = np.ones(A.shape, bool)
    ok[2, 5] = False
    np.testing.assert_array_equal(g[ok], grads[0][ok])


@pytest.mark.parametrize("kind", ["LSTM", "RNN"])
def test_the_recurrent_twins_save_at_most_1_2x_manualprops_caches(kind):
    # issue 15's memory target for the recurrent steps of benchmarks/train_step.py (16->32, B16,
    # T=8), counted by the benchmark's own functions (each block of memory once, parameters
    # apart). (The RNN was 1.62x before rnn_cell: tanh's input at every step, docs/speed.md.)
    import importlib.util
    from pathlib import Path

    import manualprop as mp
    from autoprop import layers as al

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "train_step.py"
    spec = importlib.util.spec_from_file_location("_train_step_bench", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rng = np.random.default_rng(0)
    Xs = rng.standard_normal((16, 8, 16))
    m, t = getattr(mp, kind)(16, 32, rng=0), getattr(al, kind)(16, 32)
    for k, v in t.variables.items():
        v.assign(m.params[k])
    m.forward(Xs, training=True)
    manual = bench._saved_bytes_manual([m])
    xs = ap.constant(Xs)
    with ap.GradientTape() as tape:
        tape.watch(xs)
        t(xs, training=True)
    assert bench._saved_bytes_tape(tape) <= 1.2 * manual == 1.2 * {"LSTM": 221184, "RNN": 53248}[kind], kind


def test_deepcopy_of_a_tensor_on_the_tape_is_a_recorded_copy_that_keeps_the_gradient():
    # tester22a H2 (r_deepcopy.py): copy.deepcopy of a Tensor was a new constant, and the gradient
    # silently lost that path: [0.462, -0.762, 0.964] for tanh(x) + x (1 - tanh(x)^2)
    import copy

    x0 = np.array([0.5, -1.0, 2.0])
    want = np.tanh(x0) + x0 * (1 - np.tanh(x0) ** 2)
    x = ap.Variable(x0)
    with ap.GradientTape() as tape:
        h = np.tanh(x)
        cache = copy.deepcopy({"h": h, "same": h})  # a student snapshotting the forward's cache
        y = np.sum(cache["h"] * x)
        d = copy.deepcopy(h)
        d *= 2.0  # a new tensor, as numpy's deepcopy is a new array: rebinds d, h unchanged
    assert cache["h"] is not h and cache["same"] is cache["h"]  # (the memo: one copy of one tensor)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-14)
    np.testing.assert_array_equal(h.numpy(), np.tanh(x0))
    np.testing.assert_array_equal(d.numpy(), 2.0 * np.tanh(x0))
    with ap.ForwardAccumulator(x, np.ones(3)) as acc:
        y = np.sum(copy.deepcopy(np.tanh(x)) * x)
    assert float(acc.jvp(y)) == pytest.approx(float(np.sum(want)), rel=1e-14)
    v = copy.deepcopy(x)  # a Variable's is a new Variable (tf.Variable's): its own gradient
    assert type(v) is ap.Variable and v is not x and v.name == x.name and v.trainable
    with ap.GradientTape() as tape:
        z = np.sum(x * v)
    gx, gv = tape.gradient(z, [x, v])
    np.testing.assert_array_equal(gx.numpy(), x0)
    np.testing.assert_array_equal(gv.numpy(), x0)
