"""Keras's names in autoprop and manualprop (session 12, L6): ``RMSprop`` with Keras's formula and
defaults (``keras/src/optimizers/rmsprop.py``: epsilon inside the root, the learning rate inside the
momentum buffer), and ``ap.layers.BatchNormalization`` with Keras's arguments (axis=-1, momentum=0.99
weighing the old moving value, epsilon=0.001, biased moving variance). Each is checked against Keras's
formula written out by hand here; on main neither name existed."""

import math

import numpy as np
import pytest

import autoprop as ap
import manualprop as mp
from manualprop.optim import RMSprop


def keras_rmsprop(p, grad, steps, lr, rho, momentum, eps, centered):
    """Keras's ``RMSprop.update_step`` in plain Python floats, one variable."""
    v = a = m = 0.0
    out = []
    for _ in range(steps):
        g = grad(p)
        v = rho * v + (1 - rho) * g * g
        if centered:
            a = rho * a + (1 - rho) * g
            inc = lr * g / math.sqrt(v - a * a + eps)
        else:
            inc = lr * g / math.sqrt(v + eps)
        if momentum > 0:
            m = momentum * m + inc
            p -= m
        else:
            p -= inc
        out.append(p)
    return out


def test_rmsprop_defaults_are_keras_and_both_packages_name_it():
    opt = RMSprop()
    assert (opt.learning_rate, opt.rho, opt.momentum, opt.epsilon, opt.centered) == (0.001, 0.9, 0.0, 1e-7, False)
    assert ap.optimizers.RMSprop is mp.RMSprop is RMSprop


def test_rmsprop_keras_docstring_example():
    """Keras's example: loss p**2/2 from p = 10, learning_rate=0.1, one step: 9.683772."""
    p = np.array([10.0])
    RMSprop(learning_rate=0.1).apply_gradients([(p.copy(), p)])
    assert p[0] == pytest.approx(10 - 0.1 * 10 / math.sqrt(10 + 1e-7), rel=1e-14)
    assert round(float(p[0]), 6) == 9.683772


@pytest.mark.parametrize(("centered", "momentum"), [(False, 0.0), (False, 0.9), (True, 0.0), (True, 0.5)])
def test_rmsprop_follows_keras_formula_by_hand(centered, momentum):
    grad = lambda p: 3 * p**2 - 1.0  # noqa: E731 - the gradient of p**3 - p
    lr, rho, eps = 0.05, 0.8, 1e-3  # a large epsilon: inside or outside the root differ visibly
    want = keras_rmsprop(1.5, grad, 4, lr, rho, momentum, eps, centered)
    opt = RMSprop(learning_rate=lr, rho=rho, momentum=momentum, epsilon=eps, centered=centered)
    p, got = np.array([1.5]), []
    for _ in range(4):
        opt.apply_gradients([(grad(p), p)])
        got.append(p[0])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    torch_style = mp.RMSProp(learning_rate=lr, rho=rho, momentum=momentum, epsilon=eps, centered=centered)
    q = np.array([1.5])
    torch_style.apply_gradients([(grad(q), q)])
    assert abs(q[0] - want[0]) > 1e-5  # PyTorch's formula (eps outside the root) is another one


def test_rmsprop_on_an_autoprop_variable():
    v = ap.Variable(np.array([10.0]))
    ap.optimizers.RMSprop(learning_rate=0.1).apply_gradients([(np.array([10.0]), v)])
    assert v.numpy()[0] == pytest.approx(9.683772, abs=1e-6)


def test_rmsprop_takes_keras_weight_decay():
    # it refused a non-zero one while weight_decay meant L2 elsewhere; now every optimizer's is
    # Keras's decoupled decay (tests/test_keras_weight_decay.py): 10 - 10*0.01*0.1 = 9.99 first
    p = np.array([10.0])
    RMSprop(learning_rate=0.1, weight_decay=0.01).apply_gradients([(np.array([10.0]), p)])
    assert p[0] == pytest.approx(9.99 - 1.0 / np.sqrt(10 + 1e-7), rel=1e-14)
    assert RMSprop(weight_decay=None).weight_decay == 0.0


def keras_bn(x, axis, momentum, eps, mm, mv, training):
    axes = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    shape = [1] * x.ndim
    shape[axis] = -1
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        mm, mv = momentum * mm + (1 - momentum) * mean, momentum * mv + (1 - momentum) * var
    else:
        mean, var = mm, mv
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps), mm, mv


@pytest.mark.parametrize(("shape", "axis"), [((6, 3), -1), ((4, 2, 3, 5), -1), ((4, 3, 2, 2), 1)])
def test_batchnormalization_is_keras_formula(shape, axis):
    x = np.random.default_rng(0).standard_normal(shape) * 2 + 1
    bn = ap.layers.BatchNormalization(axis=axis)
    c = shape[axis]
    mm, mv = np.zeros(c), np.ones(c)
    for _ in range(2):
        want, mm, mv = keras_bn(x, axis, 0.99, 0.001, mm, mv, True)
        np.testing.assert_allclose(bn(x, training=True).numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(bn.moving_mean, mm, rtol=1e-12)
    np.testing.assert_allclose(bn.moving_variance, mv, rtol=1e-12)  # the biased variance, as Keras
    want, _, _ = keras_bn(x, axis, 0.99, 0.001, mm, mv, False)
    np.testing.assert_allclose(bn(x).numpy(), want, rtol=1e-12, atol=1e-12)
    # Keras's four weights, the moving statistics non-trainable (newuser36 H3: they were arrays)
    assert list(bn.variables) == ["gamma", "beta", "moving_mean", "moving_variance"]
    assert bn.variables["gamma"].shape == (c,)
    assert [v.name for v in bn.trainable_weights] == ["gamma", "beta"]


def test_batchnormalization_arguments_map_to_ours():
    bn = ap.layers.BatchNormalization(momentum=0.9, epsilon=1e-5)
    assert (bn.momentum, bn.eps, bn.epsilon) == (0.9, 1e-5, 1e-5)
    x = np.random.default_rng(1).standard_normal((8, 3))
    ours = ap.layers.BatchNorm1D(3, eps=1e-5)
    np.testing.assert_allclose(bn(x, training=True).numpy(), ours(x, training=True).numpy(), rtol=1e-12)
    np.testing.assert_allclose(bn.moving_mean, ours.running_mean, rtol=1e-12)  # 0.9 old = our momentum 0.1


def test_batchnormalization_gradient_by_the_tape_matches_central_differences():
    x = np.random.default_rng(2).standard_normal((5, 3))
    w = np.random.default_rng(3).standard_normal((5, 3))
    bn = ap.layers.BatchNormalization()
    with ap.GradientTape() as tape:
        xt = ap.Variable(x)
        loss = ap.sum(bn(xt, training=True) * w)
    dx = tape.gradient(loss, xt).numpy()
    f = lambda z: float(np.sum(keras_bn(z, -1, 0.99, 0.001, np.zeros(3), np.ones(3), True)[0] * w))  # noqa: E731
    num = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        num[i] = (f(x + e) - f(x - e)) / 2e-6
    np.testing.assert_allclose(dx, num, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize(("kwargs", "err", "words"), [
    ({"center": False}, ValueError, "center=False is not implemented"),
    ({"scale": False}, ValueError, "scale=False is not implemented"),
    ({"axis": [1, 2]}, TypeError, "a list of axes"),
    ({"beta_initializer": "zeros"}, TypeError, "it takes axis, momentum, epsilon"),
    ({"momentum": 1.5}, ValueError, "momentum"),
])
def test_batchnormalization_refuses_what_it_cannot_honour(kwargs, err, words):
    with pytest.raises(err, match=words):
        ap.layers.BatchNormalization(**kwargs)


def test_batchnormalization_axis_zero_is_refused_at_the_first_call():
    with pytest.raises(ValueError, match="the batch axis"):
        ap.layers.BatchNormalization(axis=0)(np.ones((4, 3)))
