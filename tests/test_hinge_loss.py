"""MulticlassHinge (CS231n's multiclass SVM loss): closed form, the definition written as
a loop, finite differences, HIPS autograd, the tape twin, conventions and bad input."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

import autoprop as ap
from gradcheck.numerical import numerical_gradient
from manualprop import MulticlassHinge


def hinge_by_loop(y, s, margin):
    """The definition, one term at a time: sum over j != y_i of max(0, s_ij - s_iy + margin)."""
    per = []
    for i in range(s.shape[0]):
        per.append(sum(max(0.0, s[i, j] - s[i, y[i]] + margin) for j in range(s.shape[1]) if j != y[i]))
    return per


def test_cs231n_worked_example():
    # CS231n "Linear classification": scores of the three images, true classes cat, car, frog
    s = np.array([[3.2, 5.1, -1.7], [1.3, 4.9, 2.0], [2.2, 2.5, -3.1]])
    y = np.array([0, 1, 2])
    loss = MulticlassHinge()
    assert loss(y, s) == pytest.approx((2.9 + 0.0 + 12.9) / 3, rel=1e-12)
    d = loss.backward()
    expected = np.array([[-1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, -2.0]]) / 3
    np.testing.assert_allclose(d, expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(d.sum(axis=1), 0.0, atol=1e-15)


@pytest.mark.parametrize("margin", [1.0, 0.3])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_against_definition_finite_differences_autograd_and_tape(margin, reduction):
    rng = np.random.default_rng(3)
    s = rng.standard_normal((7, 5))
    y = rng.integers(0, 5, size=7)
    loss = MulticlassHinge(margin=margin, reduction=reduction)
    value = loss(y, s)
    d = loss.backward()
    per = hinge_by_loop(y, s, margin)
    assert value == pytest.approx(np.mean(per) if reduction == "mean" else np.sum(per), rel=1e-12)

    num = numerical_gradient(lambda: loss.forward(y, s), s)
    np.testing.assert_allclose(d, num, rtol=1e-6, atol=1e-8)

    onehot = np.eye(5)[y]

    def f(z):
        m = anp.maximum(0.0, z - anp.sum(z * onehot, axis=1, keepdims=True) + margin) * (1 - onehot)
        per = anp.sum(m, axis=1)
        return anp.mean(per) if reduction == "mean" else anp.sum(per)

    np.testing.assert_allclose(d, grad(f)(s), rtol=1e-12, atol=1e-15)

    twin = ap.losses.MulticlassHinge(margin=margin, reduction=reduction)
    st = ap.Variable(s)
    with ap.GradientTape() as tape:
        L = twin(y, st)
    assert float(L.numpy()) == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(tape.gradient(L, st).numpy(), d, rtol=1e-12, atol=1e-15)


def test_exact_zero_margin_counts_as_inactive_in_both_packages():
    # s_1 - s_0 + 1 == 0 exactly: the hinge sits on its kink; both use relu'(0) = 0
    s = np.array([[2.0, 1.0, -5.0]])
    y = np.array([0])
    loss = MulticlassHinge()
    assert loss(y, s) == 0.0
    np.testing.assert_array_equal(loss.backward(), np.zeros((1, 3)))
    st = ap.Variable(s)
    with ap.GradientTape() as tape:
        L = ap.losses.MulticlassHinge()(y, st)
    np.testing.assert_array_equal(tape.gradient(L, st).numpy(), np.zeros((1, 3)))


def test_float32_kept():
    s = np.array([[0.5, 0.2], [0.1, 0.9]], dtype=np.float32)
    loss = MulticlassHinge()
    loss(np.array([0, 0]), s)
    assert loss.backward().dtype == np.float32


def test_bad_input_names_the_loss_and_the_problem():
    loss = MulticlassHinge()
    with pytest.raises(TypeError, match=r"MulticlassHinge.*labels, not probabilities"):
        loss(np.full((2, 3), 1 / 3), np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"MulticlassHinge.*\[0, 3\)"):
        loss(np.array([0, 3]), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="margin"):
        MulticlassHinge(margin=0.0)
    with pytest.raises(RuntimeError):
        MulticlassHinge().backward()
    with pytest.raises(TypeError, match=r"MulticlassHinge.*labels, not probabilities"):
        ap.losses.MulticlassHinge()(np.full((2, 3), 1 / 3), np.zeros((2, 3)))
