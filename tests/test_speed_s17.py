"""Session 17's two cuts of an autoprop MLP step (docs/speed.md): plain SGD on Variable pairs
without the general path's readers, and the mean cross-entropy's exp kept for its VJP (since
session 31 its softmax: the exp divided by the loss's row sums).
Both give the bits of the path they replace; these tests hold them to it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autoprop as ap
from autoprop import losses as alo
from autoprop.core import registry as R
from autoprop.core.prims import reductions as Rd
from manualprop import optim


def _pairs(dtype=np.float64):
    rng = np.random.default_rng(0)
    vs = [ap.Variable(rng.standard_normal(s).astype(dtype)) for s in ((5, 3), (5,), ())]
    gs = [ap.constant(rng.standard_normal(v.shape).astype(dtype)) for v in vs]
    return vs, gs


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sgd_on_variables_gives_assign_subs_bits_in_new_arrays(dtype, monkeypatch):
    vs, gs = _pairs(dtype)
    old = [v._value for v in vs]
    before = [a.copy() for a in old]
    expected = [a - 0.05 * g.numpy() for a, g in zip(before, gs)]  # assign_sub(lr * g)
    reads = []  # the general path reads each Variable through its registered reader
    real = dict(optim._VARIABLE_READERS)
    for k, f in real.items():
        monkeypatch.setitem(optim._VARIABLE_READERS, k, lambda t, f=f: reads.append(t) or f(t))
    ap.optimizers.SGD(learning_rate=0.05).apply_gradients(zip(gs, vs))
    assert reads == []  # the fast path: no reader
    for v, e, o, b in zip(vs, expected, old, before):
        assert v.dtype == dtype and v.shape == e.shape
        np.testing.assert_array_equal(v.numpy(), e)  # the same bits
        assert v._value is not o  # a new array: what a tape saved stays
        np.testing.assert_array_equal(o, b)


def test_sgd_on_variables_looks_at_a_product_whose_rate_is_not_a_python_float():
    # session 30: with a Python float learning rate the product's shape is the gradient's (no
    # look); a numpy float64 rate makes a float64 product of a float32 gradient, and an array rate
    # may broadcast to another shape: both go to assign_sub, which keeps the dtype or refuses
    v = ap.Variable(np.ones((3, 5), np.float32))
    g = ap.constant(np.full((3, 5), 2.0, np.float32))
    opt = ap.optimizers.SGD(learning_rate=0.5)
    opt.learning_rate = np.float64(0.25)
    opt.apply_gradients([(g, v)])
    assert v.dtype == np.float32
    np.testing.assert_array_equal(v.numpy(), np.full((3, 5), 0.5, np.float32))
    opt.learning_rate = np.full((2, 1, 5), 0.25, np.float32)  # float32, broadcasts the (3, 5) gradient to (2, 3, 5)
    with pytest.raises(ValueError, match="shape"):
        opt.apply_gradients([(g, v)])
    np.testing.assert_array_equal(v.numpy(), np.full((3, 5), 0.5, np.float32))
    opt.learning_rate = 0.25  # a Python float: the fast path, the same bits as assign_sub
    expected = v.numpy() - np.float32(0.25) * g.numpy()
    opt.apply_gradients([(g, v)])
    assert v.dtype == np.float32
    np.testing.assert_array_equal(v.numpy(), expected)


def test_sgd_on_variables_refuses_a_nan_gradient_before_any_update():
    vs, gs = _pairs()
    gs[1] = ap.constant(np.array([1.0, np.nan, 0, 0, 0]))
    before = [v.numpy().copy() for v in vs]
    with pytest.raises(ValueError, match="NaN"):
        ap.optimizers.SGD(learning_rate=0.05).apply_gradients(zip(gs, vs))
    for v, b in zip(vs, before):
        np.testing.assert_array_equal(v.numpy(), b)


def test_sgd_on_variables_leaves_mixed_and_recorded_updates_to_the_general_path(monkeypatch):
    vs, gs = _pairs()
    arr = np.ones(3)
    # an ndarray among Variables, and a call inside a recording tape: the general path's
    # reader runs (and the values are the same)
    reads = []
    real = dict(optim._VARIABLE_READERS)
    for k, f in real.items():
        monkeypatch.setitem(optim._VARIABLE_READERS, k, lambda t, f=f: reads.append(t) or f(t))
    expected = vs[0].numpy() - 0.5 * gs[0].numpy()
    ap.optimizers.SGD(learning_rate=0.5).apply_gradients([(gs[0], vs[0]), (np.ones(3), arr)])
    np.testing.assert_array_equal(vs[0].numpy(), expected)
    np.testing.assert_array_equal(arr, 0.5)
    assert len(reads) == 1
    with ap.GradientTape(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the general path reads the Variable: a TapeEscapeWarning)
        ap.optimizers.SGD(learning_rate=0.5).apply_gradients([(gs[1], vs[1])])
    assert len(reads) == 2


def _mlp_loss_tape(persistent=False):
    rng = np.random.default_rng(1)
    z = ap.Variable(rng.standard_normal((6, 4)) * 3)
    y = rng.integers(0, 4, 6)
    with ap.GradientTape(persistent=persistent) as tape:
        loss = alo.SoftmaxCrossEntropy()(y, z)
    return tape, loss, z, y


def test_the_mean_cross_entropy_keeps_its_softmax_and_its_vjp_gives_the_same_bits():
    tape, loss, z, y = _mlp_loss_tape(persistent=True)
    (node,) = tape._nodes
    assert node.prim is R.sparse_softmax_cross_entropy_mean
    s = z.numpy() - z.numpy().max(axis=1, keepdims=True)
    # the softmax, divided by the row sums the loss took (session 31; session 17 kept exp(s))
    np.testing.assert_array_equal(node.kwargs["saved"], np.exp(s) / np.add.reduce(np.exp(s), axis=1, keepdims=True))
    np.testing.assert_array_equal(loss.numpy(), Rd._mean_fwd(Rd._sparse_ce_fwd(z.numpy(), y)))
    without = Rd._sparse_ce_mean_vjp(np.array(1.0), None, z.numpy(), y)  # recomputed softmax
    first = tape.gradient(loss, z).numpy()
    np.testing.assert_array_equal(first, without)
    np.testing.assert_array_equal(tape.gradient(loss, z).numpy(), first)  # the exp stays as it was
    p = np.exp(s) / np.exp(s).sum(axis=1, keepdims=True)
    p[np.arange(6), y] -= 1
    np.testing.assert_allclose(first, p / 6, rtol=1e-14, atol=1e-17)


def test_the_mean_cross_entropy_outside_a_tape_keeps_nothing_and_second_orders_ignore_the_exp():
    z, y = np.random.default_rng(2).standard_normal((5, 3)), np.array([0, 2, 1, 1, 0])
    assert type(R.sparse_softmax_cross_entropy_mean(z, y)) is ap.Tensor  # no tape: a plain forward
    zv = ap.Variable(z)
    u = np.random.default_rng(3).standard_normal((5, 3))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            loss = R.sparse_softmax_cross_entropy_mean(zv, y)
        gz = inner.gradient(loss, zv)
        gu = R.sum(gz * u)
    hv = outer.gradient(gu, zv).numpy()
    with ap.GradientTape() as outer:  # the same Hessian-vector product through two records
        with ap.GradientTape() as inner:
            loss = R.mean(R.sparse_softmax_cross_entropy_with_logits(zv, y))
        gu = R.sum(inner.gradient(loss, zv) * u)
    np.testing.assert_allclose(hv, outer.gradient(gu, zv).numpy(), rtol=1e-12, atol=1e-15)
    assert np.abs(hv).max() > 1e-3
