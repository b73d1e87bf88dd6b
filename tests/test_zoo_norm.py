"""Layer zoo, normalisation and dropout: BatchNorm1D/2D, LayerNorm, Dropout (both packages).

Every gradient is checked three ways (manual vs central differences, tape vs central
differences, manual vs tape; max-norm relative error < 1e-7) with a random NON-UNIFORM
upstream gradient, in training and inference mode, and against HIPS autograd applied
to the same forward written in ``autograd.numpy``.
"""

import doctest
import re

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from zoo_cnn_helpers import randomize_params, rel_err, tape_grads, three_way

import autoprop as ap
import autoprop.layers as apl
import manualprop
import manualprop.dropout
import manualprop.norm
from manualprop import BatchNorm1D, BatchNorm2D, Dropout, LayerNorm

BN_CASES = [("BatchNorm1D", (6, 4)), ("BatchNorm2D", (3, 2, 3, 4))]
BN_AXES = {"BatchNorm1D": (0,), "BatchNorm2D": (0, 2, 3)}
BSHAPE = {"BatchNorm1D": (1, -1), "BatchNorm2D": (1, -1, 1, 1)}


def make_bn(name, C, rng, **kw):
    """A manual layer and its twin with the same random gamma/beta and running stats."""
    layer, twin = getattr(manualprop, name)(C, **kw), getattr(apl, name)(C, **kw)
    randomize_params(layer, rng)
    layer.running_mean = rng.standard_normal(C)
    layer.running_var = rng.uniform(0.5, 2.0, C)
    twin.running_mean, twin.running_var = layer.running_mean.copy(), layer.running_var.copy()
    return layer, twin


def ag_bn(X, gamma, beta, name, training, rm, rv, eps=1e-5):
    axes, bs = BN_AXES[name], BSHAPE[name]
    if training:
        mu = anp.mean(X, axis=axes, keepdims=True)
        var = anp.mean((X - mu) ** 2, axis=axes, keepdims=True)
    else:
        mu, var = rm.reshape(bs), rv.reshape(bs)
    return (X - mu) / anp.sqrt(var + eps) * anp.reshape(gamma, bs) + anp.reshape(beta, bs)


# ---------------------------------------------------------------- batch norm


@pytest.mark.parametrize("training", [True, False], ids=["train", "infer"])
@pytest.mark.parametrize("name,shape", BN_CASES, ids=[c[0] for c in BN_CASES])
def test_batchnorm_three_way(name, shape, training):
    rng = np.random.default_rng(0)
    layer, twin = make_bn(name, shape[1], rng)
    X = rng.normal(2.0, 3.0, shape)
    G = rng.standard_normal(shape)
    three_way(layer, twin, X, G, training=training)


@pytest.mark.parametrize("training", [True, False], ids=["train", "infer"])
@pytest.mark.parametrize("name,shape", BN_CASES, ids=[c[0] for c in BN_CASES])
def test_batchnorm_matches_autograd(name, shape, training):
    rng = np.random.default_rng(1)
    layer, _ = make_bn(name, shape[1], rng)
    rm, rv = layer.running_mean.copy(), layer.running_var.copy()
    X = rng.normal(-1.0, 2.0, shape)
    G = rng.standard_normal(shape)
    Y = layer.forward(X, training=training)
    dX = layer.backward(G)
    gamma, beta = layer.params["gamma"], layer.params["beta"]
    np.testing.assert_allclose(Y, ag_bn(X, gamma, beta, name, training, rm, rv), rtol=1e-12, atol=1e-13)

    def L(X, gamma, beta):
        return anp.sum(ag_bn(X, gamma, beta, name, training, rm, rv) * G)

    assert rel_err(dX, grad(L, 0)(X, gamma, beta)) < 1e-10
    assert rel_err(layer.grads["gamma"], grad(L, 1)(X, gamma, beta)) < 1e-10
    assert rel_err(layer.grads["beta"], grad(L, 2)(X, gamma, beta)) < 1e-10


@pytest.mark.parametrize("name,shape", BN_CASES, ids=[c[0] for c in BN_CASES])
def test_batchnorm_running_stats_follow_pytorch(name, shape):
    rng = np.random.default_rng(2)
    C = shape[1]
    axes = BN_AXES[name]
    layer, twin = getattr(manualprop, name)(C, momentum=0.3), getattr(apl, name)(C, momentum=0.3)
    np.testing.assert_array_equal(layer.running_mean, np.zeros(C))
    np.testing.assert_array_equal(layer.running_var, np.ones(C))
    rm, rv = np.zeros(C), np.ones(C)
    for _ in range(3):
        X = rng.normal(1.0, 2.0, shape)
        layer.forward(X, training=True)
        twin(X, training=True)
        rm = 0.7 * rm + 0.3 * X.mean(axis=axes)
        rv = 0.7 * rv + 0.3 * X.var(axis=axes, ddof=1)  # unbiased for the running variance
        for obj in (layer, twin):
            np.testing.assert_allclose(obj.running_mean, rm, rtol=1e-13)
            np.testing.assert_allclose(obj.running_var, rv, rtol=1e-13)
    # normalising uses the BIASED batch variance
    Y = layer.forward(X, training=True)
    np.testing.assert_allclose(Y.var(axis=axes), X.var(axis=axes) / (X.var(axis=axes) + 1e-5), rtol=1e-10)
    # inference does not touch the running statistics and uses them
    before = layer.running_mean.copy(), layer.running_var.copy()
    Yi = layer.forward(X)
    np.testing.assert_array_equal(layer.running_mean, before[0])
    bs = BSHAPE[name]
    rm, rv = (b.reshape(bs) for b in before)
    np.testing.assert_allclose(Yi, (X - rm) / np.sqrt(rv + 1e-5), rtol=1e-12)


def test_batchnorm_running_stats_are_state_not_params():
    for name in ("BatchNorm1D", "BatchNorm2D"):
        layer, twin = getattr(manualprop, name)(3), getattr(apl, name)(3)
        assert set(layer.params) == set(layer.grads) == set(twin.variables) == {"gamma", "beta"}
        assert all(v.trainable for v in twin.variables.values())
        np.testing.assert_array_equal(layer.params["gamma"], np.ones(3))
        np.testing.assert_array_equal(twin.variables["beta"].numpy(), np.zeros(3))
        assert isinstance(twin.running_mean, np.ndarray) and isinstance(layer.running_var, np.ndarray)


def test_sum_loss_is_blind_to_the_mean_and_variance_paths():
    """Why the checks use a random upstream gradient.

    With ``G = 1`` the true dX of batch norm (training) is exactly 0, and so is the
    dX of a wrong backward that forgets the variance path; a random G tells them apart.
    """
    rng = np.random.default_rng(3)
    layer = BatchNorm1D(3)
    randomize_params(layer, rng)
    X = rng.standard_normal((5, 3))

    def wrong_backward(G):  # direct path + mean path only
        k = layer.params["gamma"] * layer.cache["inv_std"]
        return k * (G - G.mean(axis=0))

    layer.forward(X, training=True)
    ones = np.ones((5, 3))
    assert np.abs(layer.backward(ones)).max() < 1e-14
    assert np.abs(wrong_backward(ones)).max() < 1e-14  # a sum loss cannot tell
    G = rng.standard_normal((5, 3))
    assert rel_err(layer.backward(G), wrong_backward(G)) > 0.01


@pytest.mark.parametrize("ns", [manualprop, apl], ids=["manual", "tape"])
def test_batchnorm_bad_input_messages(ns):
    t = "x" if ns is apl else "X"
    bn1, bn2 = ns.BatchNorm1D(3), ns.BatchNorm2D(3)
    with pytest.raises(ValueError, match=rf"BatchNorm1D\(3\).* {t} must have shape \(batch, 3\); got \(4, 3, 2\)"):
        bn1(np.zeros((4, 3, 2)))
    with pytest.raises(ValueError, match=rf"BatchNorm1D\(3\).* {t} must have shape \(batch, 3\); got \(4, 2\)"):
        bn1(np.zeros((4, 2)))
    with pytest.raises(ValueError, match=rf"BatchNorm2D\(3\).* {t} must have shape \(batch, 3, height, width\); got \(4, 3, 2\)"):
        bn2(np.zeros((4, 3, 2)))
    with pytest.raises(ValueError, match=rf"BatchNorm1D\(3\).* {t} must have more than 1 value per channel in training"):
        bn1(np.zeros((1, 3)), training=True)
    with pytest.raises(ValueError, match=r"BatchNorm2D\(3\).* more than 1 value per channel .* axes \(0, 2, 3\)\); got shape \(1, 3, 1, 1\)"):
        bn2(np.zeros((1, 3, 1, 1)), training=True)
    bn2(np.zeros((1, 3, 1, 1)))  # one sample is fine in inference
    bn2(np.random.default_rng(0).standard_normal((1, 3, 2, 1)), training=True)  # 2 pixels: fine
    for bad, msg in [(dict(eps=0.0), "eps must be in"), (dict(momentum=1.5), "momentum must be in")]:
        with pytest.raises(ValueError, match=f"BatchNorm1D: {msg}"):
            ns.BatchNorm1D(3, **bad)


def test_batchnorm_float32_kept():
    layer = BatchNorm2D(2, dtype=np.float32)
    X = np.random.default_rng(0).standard_normal((3, 2, 2, 2)).astype(np.float32)
    Y = layer.forward(X, training=True)
    assert Y.dtype == np.float32 and layer.running_var.dtype == np.float32
    assert layer.backward(np.ones_like(Y)).dtype == np.float32
    assert apl.BatchNorm2D(2, dtype=np.float32)(X, training=True).dtype == np.float32


# ---------------------------------------------------------------- layer norm

LN_CASES = [(5, (3, 5)), ((4, 5), (2, 3, 4, 5)), ((2, 3), (2, 3)), ((6,), (2, 2, 6))]
LN_IDS = ["int", "2-axes", "no-batch", "tuple-3d"]


def ag_ln(X, gamma, beta, k, eps=1e-5):
    axes = tuple(range(X.ndim - k, X.ndim))
    mu = anp.mean(X, axis=axes, keepdims=True)
    var = anp.mean((X - mu) ** 2, axis=axes, keepdims=True)
    return (X - mu) / anp.sqrt(var + eps) * gamma + beta


@pytest.mark.parametrize("training", [True, False], ids=["train", "infer"])
@pytest.mark.parametrize("ns_shape,shape", LN_CASES, ids=LN_IDS)
def test_layernorm_three_way(ns_shape, shape, training):
    rng = np.random.default_rng(4)
    layer, twin = LayerNorm(ns_shape), apl.LayerNorm(ns_shape)
    randomize_params(layer, rng)
    X = rng.normal(1.0, 2.0, shape)
    three_way(layer, twin, X, rng.standard_normal(shape), training=training)


@pytest.mark.parametrize("ns_shape,shape", LN_CASES, ids=LN_IDS)
def test_layernorm_matches_autograd(ns_shape, shape):
    rng = np.random.default_rng(5)
    layer = LayerNorm(ns_shape)
    randomize_params(layer, rng)
    k = len(layer.normalized_shape)
    X = rng.standard_normal(shape)
    G = rng.standard_normal(shape)
    Y = layer.forward(X)
    dX = layer.backward(G)
    gamma, beta = layer.params["gamma"], layer.params["beta"]
    np.testing.assert_allclose(Y, ag_ln(X, gamma, beta, k), rtol=1e-12, atol=1e-13)

    def L(X, gamma, beta):
        return anp.sum(ag_ln(X, gamma, beta, k) * G)

    assert rel_err(dX, grad(L, 0)(X, gamma, beta)) < 1e-10
    assert rel_err(layer.grads["gamma"], grad(L, 1)(X, gamma, beta)) < 1e-10
    assert rel_err(layer.grads["beta"], grad(L, 2)(X, gamma, beta)) < 1e-10


def test_layernorm_params_and_bad_input():
    layer, twin = LayerNorm((2, 3)), apl.LayerNorm((2, 3))
    assert set(layer.params) == set(twin.variables) == {"gamma", "beta"}
    np.testing.assert_array_equal(layer.params["gamma"], np.ones((2, 3)))
    for ns, t in ((manualprop, "X"), (apl, "x")):
        ln = ns.LayerNorm((2, 3))
        with pytest.raises(ValueError, match=rf"LayerNorm\(\(2, 3\)\).* {t} must have shape \(\*, 2, 3\); got \(4, 3, 2\)"):
            ln(np.zeros((4, 3, 2)))
        with pytest.raises(ValueError, match=rf"LayerNorm\(\(2, 3\)\).* {t} must have at least 2 dimension\(s\); got shape \(6,\)"):
            ln(np.zeros(6))
        with pytest.raises(TypeError, match="LayerNorm: normalized_shape must be a positive int or a non-empty tuple"):
            ns.LayerNorm(())
        with pytest.raises(ValueError, match="LayerNorm: normalized_shape must be a positive int"):
            ns.LayerNorm((2, 0))


# ---------------------------------------------------------------- dropout


@pytest.mark.parametrize("ns", [manualprop, apl], ids=["manual", "tape"])
def test_dropout_case_c29(ns):
    """x = [1, 2, 3, 4], w = 1, keep 0.5, mask [1, 0, 1, 1]: d/dw sum(dropout(w x)) = 16."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    drop = ns.Dropout(0.5)
    drop.fix_mask(np.array([1, 0, 1, 1]))
    if ns is manualprop:
        w = 1.0
        drop.forward(w * x, training=True)
        dw = float(np.sum(drop.backward(np.ones(4)) * x))
    else:
        w = ap.Variable(1.0)
        with ap.GradientTape() as tape:
            f = ap.sum(drop(w * x, training=True))
        dw = float(tape.gradient(f, w))
        assert float(f) == 16.0
    assert dw == 16.0


def test_dropout_same_masks_in_both_twins_and_rule():
    m, t = Dropout(0.3, rng=7), apl.Dropout(0.3, rng=7)
    ref = np.random.default_rng(7)
    X = np.random.default_rng(0).standard_normal((4, 5))
    for _ in range(3):
        Ym = m.forward(X, training=True)
        Yt = t(X, training=True).numpy()
        keep = ref.random(X.shape) >= 0.3  # the documented draw
        np.testing.assert_array_equal(m.mask, keep)
        np.testing.assert_array_equal(t.mask, keep)
        np.testing.assert_allclose(Ym, X * keep / 0.7, rtol=1e-15)
        np.testing.assert_array_equal(Ym, Yt)


@pytest.mark.parametrize("training", [True, False], ids=["train", "infer"])
def test_dropout_three_way_with_fixed_mask(training):
    rng = np.random.default_rng(8)
    m, t = Dropout(0.4, rng=1), apl.Dropout(0.4, rng=1)
    X = rng.standard_normal((3, 4, 2))
    if training:
        m.forward(X, training=True)
        t(X, training=True)
        m.fix_mask(True)
        t.fix_mask(True)
        np.testing.assert_array_equal(m.mask, t.mask)
    G = rng.standard_normal(X.shape)
    _, g = three_way(m, t, X, G, training=training)
    factor = m.mask / 0.6 if training else 1.0
    assert rel_err(g["X"], grad(lambda X: anp.sum(X * factor * G))(X)) < 1e-14


def test_dropout_fix_mask_semantics():
    d = Dropout(0.5, rng=0)
    X = np.ones((50, 40))
    d.forward(X, training=True)
    first = d.mask.copy()
    d.forward(X, training=True)
    assert not np.array_equal(d.mask, first)  # fresh draw per forward by default
    d.fix_mask(True)
    kept = d.mask.copy()
    for _ in range(2):
        d.forward(X, training=True)
        np.testing.assert_array_equal(d.mask, kept)
    d.fix_mask(False)
    d.forward(X, training=True)
    assert not np.array_equal(d.mask, kept)
    fresh = Dropout(0.5, rng=0)
    fresh.fix_mask(True)  # no mask yet: the next forward draws one, then keeps it
    a = fresh.forward(X, training=True)
    np.testing.assert_array_equal(fresh.forward(X, training=True), a)


def test_dropout_keep_fraction_and_expectation():
    d = Dropout(0.3, rng=2)
    Y = d.forward(np.ones((400, 500)), training=True)
    assert abs(d.mask.mean() - 0.7) < 0.005
    assert abs(Y.mean() - 1.0) < 0.01  # inverted scaling keeps E[Y] = X


@pytest.mark.parametrize("ns", [manualprop, apl], ids=["manual", "tape"])
def test_dropout_edge_probabilities_and_inference(ns):
    X = np.random.default_rng(3).standard_normal((3, 4))
    val = (lambda y: y) if ns is manualprop else (lambda y: y.numpy())
    np.testing.assert_array_equal(val(ns.Dropout(0.9, rng=0)(X)), X)  # inference: identity
    np.testing.assert_array_equal(val(ns.Dropout(0.0, rng=0)(X, training=True)), X)
    np.testing.assert_array_equal(val(ns.Dropout(1.0, rng=0)(X, training=True)), np.zeros_like(X))
    with pytest.raises(ValueError, match=r"Dropout: p must be in \[0.0, 1.0\]; got 1.5"):
        ns.Dropout(1.5)


@pytest.mark.parametrize("ns", [manualprop, apl], ids=["manual", "tape"])
def test_dropout_bad_masks(ns):
    d = ns.Dropout(0.5)
    d.fix_mask([1, 0, 1])
    with pytest.raises(ValueError, match=r"Dropout\(p=0.5\).* mask must have the shape of X, \(4,\); got \(3,\)"):
        d(np.ones(4), training=True)
    with pytest.raises(ValueError, match=r"Dropout\(p=0.5\).*fix_mask: mask must contain only 0 and 1"):
        d.fix_mask([0.5, 1.0])


def test_dropout_manual_float32():
    d = Dropout(0.5, rng=0)
    X = np.ones((2, 3), np.float32)
    assert d.forward(X, training=True).dtype == np.float32
    assert d.backward(np.ones((2, 3), np.float32)).dtype == np.float32


# ---------------------------------------------------------------- docs


@pytest.mark.parametrize("module", [manualprop.norm, manualprop.dropout])
def test_docstring_examples_run(module):
    res = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and res.attempted > 0


def test_tape_grads_helper_reports_every_variable():
    _, g = tape_grads(apl.LayerNorm(3), np.ones((2, 3)) * np.arange(3), np.ones((2, 3)), False)
    assert set(g) == {"X", "gamma", "beta"}
    assert re.match(r"LayerNorm\(\(3,\)\)", repr(LayerNorm(3)))
