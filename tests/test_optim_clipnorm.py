"""Gradient clipping by norm on the shared optimizers, Keras's ``clipnorm`` (each gradient
on its own) and ``global_clipnorm`` (all gradients of one update together), tested against
the definitions written out here, in both calling styles and with autoprop Variables."""

import warnings

import numpy as np
import pytest

import autoprop as ap
import manualprop as mp
from manualprop.optim import SGD, Adam, RMSProp


def clip_each(grads, c):
    """tf.clip_by_norm's definition: g * c / max(||g||, c)."""
    return [g * c / max(np.linalg.norm(g.ravel()), c) for g in grads]


def clip_global(grads, c):
    """tf.clip_by_global_norm's definition: g_i * c / max(sqrt(sum ||g_i||^2), c)."""
    gn = np.sqrt(sum(np.linalg.norm(g.ravel()) ** 2 for g in grads))
    return [g * c / max(gn, c) for g in grads]


def grads_fixture():
    g1 = np.array([[3.0, 0.0], [0.0, 4.0]])     # norm 5
    g2 = np.array([0.3, -0.4])                  # norm 0.5
    return [g1, g2]


def sgd_deltas(opt, grads):
    params = [np.zeros_like(g) for g in grads]
    opt.apply_gradients(zip(grads, params))
    return [-p for p in params]  # lr = 1: delta = clipped gradient


def test_clipnorm_clips_each_gradient_on_its_own():
    grads = grads_fixture()
    d = sgd_deltas(SGD(learning_rate=1.0, clipnorm=1.0), grads)
    np.testing.assert_allclose(d[0], grads[0] / 5.0, rtol=1e-15)     # 5 > 1: rescaled to norm 1
    np.testing.assert_array_equal(d[1], grads[1])                     # 0.5 <= 1: untouched
    for got, want in zip(d, clip_each(grads, 1.0), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-15)
    assert np.linalg.norm(d[0]) == pytest.approx(1.0, rel=1e-15)


def test_global_clipnorm_scales_all_gradients_by_one_factor():
    grads = grads_fixture()
    d = sgd_deltas(SGD(learning_rate=1.0, global_clipnorm=1.0), grads)
    factor = 1.0 / np.sqrt(25.0 + 0.25)
    for got, g in zip(d, grads, strict=True):
        np.testing.assert_allclose(got, g * factor, rtol=1e-14)
    for got, want in zip(d, clip_global(grads, 1.0), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    total = np.sqrt(sum(np.sum(x * x) for x in d))
    assert total == pytest.approx(1.0, rel=1e-14)
    # the direction of the whole update is kept, which clipnorm does not do
    assert not np.allclose(sgd_deltas(SGD(learning_rate=1.0, clipnorm=1.0), grads)[1], d[1])


@pytest.mark.parametrize("kw", [{"clipnorm": 10.0}, {"global_clipnorm": 10.0}])
def test_below_the_threshold_nothing_changes(kw):
    grads = grads_fixture()
    for got, g in zip(sgd_deltas(SGD(learning_rate=1.0, **kw), grads), grads, strict=True):
        np.testing.assert_array_equal(got, g)


@pytest.mark.parametrize("cls", [Adam, RMSProp, SGD])
@pytest.mark.parametrize("opt", ["clipnorm", "global_clipnorm"])
def test_every_optimizer_sees_the_clipped_gradients(cls, opt):
    """Clipping then updating == updating with gradients clipped by the definition, over
    several steps with state (moments, momentum) and weight decay added after clipping."""
    rng = np.random.default_rng(0)
    kw = {"weight_decay": 0.1}
    if cls is SGD:
        kw["momentum"] = 0.9
    clipped_opt = cls(learning_rate=0.1, **kw, **{opt: 0.7})
    plain_opt = cls(learning_rate=0.1, **kw)
    p1 = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    p2 = [p.copy() for p in p1]
    clip = clip_each if opt == "clipnorm" else clip_global
    for _ in range(4):
        grads = [rng.standard_normal((3, 2)) * 3, rng.standard_normal(4) * 0.1]
        before = [g.copy() for g in grads]
        clipped_opt.apply_gradients(zip(grads, p1))
        plain_opt.apply_gradients(zip(clip(grads, 0.7), p2))
        for g, b in zip(grads, before, strict=True):
            np.testing.assert_array_equal(g, b)  # inputs are never modified
    for a, b in zip(p1, p2, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_step_style_and_autoprop_variables_use_the_same_code():
    assert ap.optimizers.SGD is mp.SGD and ap.optimizers.Adam is mp.Adam  # one implementation
    grads = grads_fixture()
    params = {"W": np.zeros((2, 2)), "b": np.zeros(2)}
    SGD(learning_rate=1.0, global_clipnorm=1.0).step(params, {"W": grads[0], "b": grads[1]})
    want = clip_global(grads, 1.0)
    np.testing.assert_allclose(-params["W"], want[0], rtol=1e-14)
    np.testing.assert_allclose(-params["b"], want[1], rtol=1e-14)
    variables = [ap.Variable(np.zeros((2, 2))), ap.Variable(np.zeros(2))]
    ap.optimizers.SGD(learning_rate=1.0, global_clipnorm=1.0).apply_gradients(
        zip([ap.constant(g) for g in grads], variables)
    )
    for v, w in zip(variables, want, strict=True):
        np.testing.assert_allclose(-v.numpy(), w, rtol=1e-14)


def test_missing_gradients_take_no_part_in_the_global_norm():
    g = np.array([3.0, 4.0])
    p, q = np.zeros(2), np.zeros(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SGD(learning_rate=1.0, global_clipnorm=1.0).apply_gradients([(g, p), (None, q)])
    np.testing.assert_allclose(-p, g / 5.0, rtol=1e-15)
    np.testing.assert_array_equal(q, 0.0)


def test_float32_kept_and_norm_is_exact_for_large_values():
    g = np.full(4, 1e20, dtype=np.float32)  # its squares overflow float32: the norm is taken in float64
    p = np.zeros(4, dtype=np.float32)
    SGD(learning_rate=1.0, clipnorm=2.0).apply_gradients([(g, p)])
    assert p.dtype == np.float32
    np.testing.assert_allclose(-p, np.full(4, 1.0, dtype=np.float32), rtol=1e-6)


def test_bad_options():
    with pytest.raises(ValueError, match=r"SGD: at most one of clipnorm and global_clipnorm"):
        SGD(clipnorm=1.0, global_clipnorm=1.0)
    with pytest.raises(ValueError, match="clipnorm"):
        Adam(clipnorm=0.0)
    with pytest.raises(ValueError, match="global_clipnorm"):
        RMSProp(global_clipnorm=-1.0)
    assert "global_clipnorm=2.0" in repr(Adam(global_clipnorm=2.0))
    assert "clipnorm=1.5" in repr(SGD(clipnorm=1.5))
