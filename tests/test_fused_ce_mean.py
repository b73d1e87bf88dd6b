"""The loss's mean fused into the cross-entropy record (issue 15, session 13): one record
``sparse_softmax_cross_entropy_mean`` for ``SoftmaxCrossEntropy()`` with integer labels and
mean reduction (as PyTorch's ``cross_entropy(reduction="mean")``), checked against HIPS
autograd and central differences (value, first and second derivatives, JVP)."""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad as agrad
from autograd import hessian_vector_product

import autoprop as ap
from autoprop.core import registry as R


def _ce_mean_ref(z, y):
    """The mean cross-entropy written with autograd.numpy (the oracle)."""
    s = z - anp.max(z, axis=1, keepdims=True)
    logp = s - anp.log(anp.sum(anp.exp(s), axis=1, keepdims=True))
    return -anp.mean(logp[anp.arange(len(y)), y])


def _data(seed=0, n=6, c=5, scale=3.0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, c)) * scale, rng.integers(0, c, size=n)


def test_the_mean_loss_is_one_record():
    z, y = _data()
    Z = ap.Variable(z)
    with ap.GradientTape() as tape:
        loss = ap.losses.SoftmaxCrossEntropy()(y, Z)
    assert [n.prim.name for n in tape._nodes] == ["sparse_softmax_cross_entropy_mean"]
    assert loss.shape == ()


def test_sum_reduction_and_smoothing_keep_their_records():
    z, y = _data()
    Z = ap.Variable(z)
    with ap.GradientTape() as tape:
        ap.losses.SoftmaxCrossEntropy(reduction="sum")(y, Z)
    assert [n.prim.name for n in tape._nodes] == ["sparse_softmax_cross_entropy_with_logits", "sum"]


@pytest.mark.parametrize("seed,scale", [(0, 1.0), (1, 3.0), (2, 30.0)])
def test_value_and_gradient_match_autograd_and_central_differences(seed, scale):
    z, y = _data(seed, scale=scale)
    Z = ap.Variable(z)
    with ap.GradientTape() as tape:
        loss = R.sparse_softmax_cross_entropy_mean(Z, y)
    g = tape.gradient(loss, Z).numpy()
    np.testing.assert_allclose(loss.numpy(), _ce_mean_ref(z, y), rtol=1e-14)
    np.testing.assert_allclose(g, agrad(_ce_mean_ref)(z, y), rtol=1e-12, atol=1e-16)
    if scale > 3:  # (central differences of a loss of about 30 lose the small entries)
        return
    h, fd = 1e-6, np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        e = np.zeros_like(z)
        e[idx] = h
        fd[idx] = (_ce_mean_ref(z + e, y) - _ce_mean_ref(z - e, y)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_the_same_bits_as_the_two_records_it_replaces():
    z, y = _data(4)
    Z = ap.Variable(z)
    with ap.GradientTape(persistent=True) as tape:
        fused = R.sparse_softmax_cross_entropy_mean(Z, y)
        two = R.mean(R.sparse_softmax_cross_entropy_with_logits(Z, y))
    assert fused.numpy() == two.numpy()
    np.testing.assert_array_equal(tape.gradient(fused, Z).numpy(), tape.gradient(two, Z).numpy())


def test_an_upstream_gradient_scales_the_vjp():
    z, y = _data(5)
    Z = ap.Variable(z)
    with ap.GradientTape() as tape:
        loss = R.sparse_softmax_cross_entropy_mean(Z, y)
    g = tape.gradient(loss, Z, output_gradients=np.array(-2.5)).numpy()
    np.testing.assert_allclose(g, -2.5 * agrad(_ce_mean_ref)(z, y), rtol=1e-12, atol=1e-16)


def test_second_derivatives_match_autograd():
    z, y = _data(6)
    v = np.random.default_rng(7).standard_normal(z.shape)
    Z = ap.Variable(z)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            loss = R.sparse_softmax_cross_entropy_mean(Z, y)
        d = inner.gradient(loss, Z)
        s = ap.sum(d * v)
    hv = outer.gradient(s, Z).numpy()
    ref = hessian_vector_product(lambda zz: _ce_mean_ref(zz, y))(z, v)
    np.testing.assert_allclose(hv, ref, rtol=1e-11, atol=1e-15)


def test_jvp_matches_autograd_and_central_differences():
    z, y = _data(8)
    t = np.random.default_rng(9).standard_normal(z.shape)
    with _acc(z, t) as (acc, Z):
        loss = R.sparse_softmax_cross_entropy_mean(Z, y)
    jvp = float(np.asarray(acc.jvp(loss)))
    ref = float(np.sum(agrad(_ce_mean_ref)(z, y) * t))
    fd = (_ce_mean_ref(z + 1e-6 * t, y) - _ce_mean_ref(z - 1e-6 * t, y)) / 2e-6
    np.testing.assert_allclose(jvp, ref, rtol=1e-12)
    np.testing.assert_allclose(jvp, fd, rtol=1e-6)


class _acc:
    """``with _acc(z, t) as (acc, Z)``: a forward accumulator on the primal ``Z``."""

    def __init__(self, z, t):
        self.Z = ap.constant(z)
        self.acc = ap.ForwardAccumulator(self.Z, t)

    def __enter__(self):
        self.acc.__enter__()
        return self.acc, self.Z

    def __exit__(self, *exc):
        return self.acc.__exit__(*exc)


def test_a_masked_logit_gets_zero_gradient_and_labels_none():
    z, y = _data(10)
    z[0, (y[0] + 1) % 5] = -np.inf
    Z = ap.Variable(z)
    with ap.GradientTape() as tape:
        loss = ap.losses.SoftmaxCrossEntropy()(y, Z)
    g = tape.gradient(loss, Z).numpy()
    assert np.isfinite(loss.numpy()) and np.isfinite(g).all()
    assert g[0, (y[0] + 1) % 5] == 0.0
