"""The shortcuts of autoprop's training step (issue 15) give what the general paths give.

Each shortcut of the MLP step (the bias VJP of ``linear`` without ``unbroadcast``, the
optimizer's one-frame reader of Variables and gradient Tensors, the gradient seed without
``np.ones``) is checked against the general path it replaces, bit for bit, and the checks
that the general path makes are shown to fire still.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autoprop as ap
from autoprop import layers as al
from autoprop.core import registry as R
from autoprop.core.prims import fused
from autoprop.core.prims._common import unbroadcast
from autoprop.core.tape import NotSaved
from manualprop import optim


def test_linear_bias_vjp_is_unbroadcast_bit_for_bit_on_arrays_and_tensors():
    rng = np.random.default_rng(3)
    g = rng.standard_normal((7, 5)) * 1e3
    b = NotSaved((5,), np.dtype(np.float64))  # what the walk hands the VJP for b
    fast = fused._linear_db(g, None, None, None, b)
    np.testing.assert_array_equal(fast, unbroadcast(g, (5,)))
    assert fast.shape == (5,) and fast.dtype == np.float64
    # a per-example bias (N, out) keeps g; a Tensor g (an outer tape records) takes unbroadcast
    assert fused._linear_db(g, None, None, None, NotSaved((7, 5), g.dtype)) is g
    gt = ap.constant(g)
    np.testing.assert_array_equal(fused._linear_db(gt, None, None, None, b).numpy(), fast)


def test_linear_gradients_match_matmul_plus_add_and_bad_shapes_still_raise():
    rng = np.random.default_rng(4)
    X = ap.constant(rng.standard_normal((6, 4)))
    W = ap.Variable(rng.standard_normal((3, 4)))
    b = ap.Variable(rng.standard_normal(3))
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(X)
        fused_out = R.linear(X, W, b)
        composed = X @ W.T + b
        a, c = ap.sum(fused_out * fused_out), ap.sum(composed * composed)
    for ga, gc in zip(tape.gradient(a, [X, W, b]), tape.gradient(c, [X, W, b])):
        np.testing.assert_allclose(ga.numpy(), gc.numpy(), rtol=1e-13)
    with pytest.raises(ValueError, match=r"linear: x must be \(batch, in\).*got 1, 2 and 1 axes"):
        R.linear(ap.constant(np.ones(4)), W, b)
    with pytest.raises(ValueError, match=r"got 2, 2 and 0 axes"):
        R.linear(X, W, 1.0)  # a scalar bias: the general path's message


def test_gradient_seed_is_ones_of_the_targets_shape_and_dtype():
    x = ap.Variable(np.array([1.0, 2.0], dtype=np.float32))
    with ap.GradientTape() as tape:
        y = x * x  # a non-scalar target: seeded with ones, as np.ones
    g = tape.gradient(y, x)
    np.testing.assert_array_equal(g.numpy(), np.array([2.0, 4.0], dtype=np.float32))
    assert g.dtype == np.float32


def test_the_optimizer_reads_variables_as_read_only_views_in_one_frame():
    assert optim._VARIABLE_READERS[ap.Variable] is ap.optimizers._read_only
    assert optim._GRADIENT_READERS[ap.Tensor] is ap.optimizers._read_only
    v = ap.Variable(np.ones(3))
    r = ap.optimizers._read_only(v)
    assert not r.flags.writeable and np.shares_memory(r, v._value)

    class Writes(optim.SGD):  # a custom rule that writes into the value it is given
        def _delta(self, g, p, var):
            p *= 0.0
            return g

    with pytest.raises(ValueError, match="read-only"):
        Writes(learning_rate=0.1, momentum=0.5).apply_gradients([(ap.constant(np.ones(3)), v)])
    np.testing.assert_array_equal(v.numpy(), np.ones(3))  # unchanged


def test_the_update_inside_a_recording_tape_still_notes_the_escape():
    v = ap.Variable(np.ones(3))
    opt = ap.optimizers.SGD(learning_rate=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ap.GradientTape():
            ap.sum(v * v)
            opt.apply_gradients([(ap.constant(np.ones(3)), v)])
    assert any(w.category is ap.TapeEscapeWarning for w in caught)
    np.testing.assert_array_equal(v.numpy(), np.full(3, 0.9))


def test_a_nan_gradient_tensor_is_still_refused_before_any_update():
    v, w = ap.Variable(np.ones(2)), ap.Variable(np.ones(2))
    opt = ap.optimizers.SGD(learning_rate=0.1)
    with pytest.raises(ValueError, match=r"variable #1"):
        opt.apply_gradients([(ap.constant([1.0, 1.0]), v), (ap.constant([1.0, np.nan]), w)])
    np.testing.assert_array_equal(v.numpy(), np.ones(2))  # checked before any variable changed


def test_variable_pairs_inline_checks_match_the_full_check_and_pairs_keep_their_numbers():
    # apply_gradients' object pairs (a Variable and a gradient Tensor) take the array pairs'
    # inline finiteness test (the one dot, or sum_of_squares past DOT_CHUNK): the same
    # refusals and messages as the full check, and the same bits as `p - lr * g`
    from manualprop._validation import DOT_CHUNK

    n = DOT_CHUNK + 5  # past one dot: the chunked sum of squares
    big = np.linspace(-1.0, 1.0, n)
    v, w = ap.Variable(np.ones(n)), ap.Variable(np.ones(3))
    opt = ap.optimizers.SGD(learning_rate=0.1)
    for bad in (np.inf, np.nan):
        g = big.copy()
        g[-1] = bad  # in the last chunk
        with pytest.raises(ValueError, match=r"gradient for variable #0 must contain only finite values"):
            opt.apply_gradients([(ap.constant(g), v), (ap.constant(np.ones(3)), w)])
    g32 = ap.constant(np.array([1.0, np.nan, 0.0], np.float32))
    with pytest.raises(ValueError, match=r"gradient for variable #1 must contain only finite"):
        opt.apply_gradients([(ap.constant(big), v), (g32, w)])
    np.testing.assert_array_equal(v.numpy(), np.ones(n))  # nothing changed before the refusal
    with pytest.raises(ValueError, match=r"gradient for variable #1 must have the variable's shape"):
        opt.apply_gradients([(ap.constant(big), v), (ap.constant(np.ones(4)), w)])
    # a list pair is a pair; a skipped pair keeps the numbering of those after it
    with pytest.warns(UserWarning, match=r"gradients do not exist for variable #1"):
        with pytest.raises(ValueError, match=r"gradient for variable #2 must have the variable's shape"):
            opt.apply_gradients([[ap.constant(big), v], (None, w), (ap.constant(np.ones(2)), w)])
    with pytest.raises(TypeError, match=r"item 1 must be a \(grad, var\) pair"):
        opt.apply_gradients([(ap.constant(big), v), (ap.constant(np.ones(3)), w, 0)])
    opt.apply_gradients([[ap.constant(big), v], (ap.constant(np.ones(3, np.float32)), w)])
    np.testing.assert_array_equal(v.numpy(), np.ones(n) - 0.1 * big)  # the bits of p - lr * g
    np.testing.assert_array_equal(w.numpy(), np.ones(3) - 0.1 * np.ones(3))  # float32 g cast


def test_sequential_calls_a_leaf_layers_call_directly_with_what_layer_call_gives(monkeypatch):
    # Sequential.call runs a built-in leaf layer's call without Layer.__call__ (whose context
    # is for sub-layers): the same values, bit for bit, and the same records on the tape as
    # the general path (LEAF_LAYERS empty), in training and inference mode
    from autoprop.layers import base

    def layers():
        return [al.Linear(6, 5, rng=0), al.Tanh(), al.Linear(5, 5, rng=1), al.ReLU(), al.Sigmoid(),
                al.LeakyReLU(), al.ELU(), al.GELU(), al.GELU(approximate="tanh"), al.Softplus(),
                al.Softmax(), al.LogSoftmax(), al.Flatten()]

    assert {type(layer) for layer in layers()} <= base.LEAF_LAYERS
    assert all(kind._call_takes_training for kind in base.LEAF_LAYERS)
    x = ap.constant(np.random.default_rng(0).standard_normal((4, 6)))

    def run(leaves, training):
        monkeypatch.setattr(base, "LEAF_LAYERS", leaves)
        net = al.Sequential(layers())
        with ap.GradientTape() as tape:
            out = net(x, training=training)
            names = [n.prim.name for n in tape._nodes]
            loss = ap.sum(out * out)
        grads = tape.gradient(loss, net.trainable_variables)
        return out.numpy(), names, [g.numpy() for g in grads]

    leaves = set(base.LEAF_LAYERS)
    for training in (True, False):
        fast, general = run(leaves, training), run(set(), training)
        np.testing.assert_array_equal(fast[0], general[0])
        assert fast[1] == general[1] and len(fast[1]) >= 13
        for a, b in zip(fast[2], general[2]):
            np.testing.assert_array_equal(a, b)


def test_sequential_still_calls_dunder_call_of_a_subclass_and_of_an_unbuilt_layer():
    calls = []

    class Logged(al.Linear):  # a subclass: not a leaf (its __call__ may do more)
        def __call__(self, x, *args, **kwargs):
            calls.append("logged")
            return super().__call__(x, *args, **kwargs)

    class Lazy(al.Layer):  # Keras's deferred build: built by the first __call__
        def build(self, input_shape):
            calls.append(("build", tuple(input_shape)))
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")

        def call(self, x, training=False):
            return x * self.w

    net = al.Sequential(Logged(3, 2, rng=0), al.Tanh(), Lazy())
    out = net(ap.constant(np.ones((2, 3))), training=True)
    assert calls == ["logged", ("build", (2, 2))] and out.shape == (2, 2)


def test_the_mean_of_a_loss_is_np_mean_bit_for_bit():
    # mean's forward for a whole float array: np.add.reduce and a division, without
    # ndarray.sum's and np.mean's Python wrappers: np.mean's own value, bit for bit
    from autoprop.core.prims import reductions

    rng = np.random.default_rng(3)
    for x in (rng.standard_normal(1000) * 1e3, rng.standard_normal((7, 13)).astype(np.float32),
              np.array([1e300, -1e300, 3.0]), np.array([np.nan, 1.0]), np.array([2.5])):
        got = reductions._mean_fwd(x)
        want = np.mean(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert R.mean(ap.constant(np.arange(4.0))).numpy() == 1.5


def test_a_tensors_numpy_view_is_read_only_and_shares_its_value():
    t = ap.constant(np.arange(3.0))
    v = np.asarray(t)
    assert not v.flags.writeable and np.shares_memory(v, t._value)
    with pytest.raises(ValueError, match="read-only"):
        v[0] = 5.0
    assert t.numpy()[0] == 0.0
    w = ap.Variable(np.ones(2, dtype=np.float32))
    w.assign_sub(np.full(2, 0.5, dtype=np.float32))  # the optimizer's fast path: same dtype object
    np.testing.assert_array_equal(w.numpy(), np.full(2, 0.5, dtype=np.float32))
    w.assign_sub(np.full(2, 0.25))  # float64 delta: the converting path, float32 kept
    assert w.dtype == np.float32 and w.numpy()[0] == np.float32(0.25)
