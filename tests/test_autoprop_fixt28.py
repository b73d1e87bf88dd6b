"""tester28t's port of TensorFlow's own tape tests (backprop_test.py, forwardprop_test.py, math_grad_test.py) as
fixt28 fixed it: the nesting of tapes and accumulators, ``Variable.read_value``/``value``, ``jacobian``'s
options on a non-persistent tape, ``np.nextafter``'s derivative, TensorFlow's exception types."""

import math

import numpy as np
import pytest

import autoprop as ap

X0 = np.array([0.3, -1.2, 2.0])
U = np.array([1.0, -0.5, 0.25])
V = np.array([0.2, 0.7, -1.0])


def _f(x):
    return np.sum(np.sin(x) * x**2)


def _hess(x):
    """The Hessian of ``_f``, by hand: d2/dx2 (x^2 sin x) = 2 sin x + 4 x cos x - x^2 sin x (diagonal)."""
    return np.diag(2 * np.sin(x) + 4 * x * np.cos(x) - x**2 * np.sin(x))


def _third(x, a, b):
    """The third derivative of ``_f`` contracted with ``a`` and ``b``: d3/dx3 (x^2 sin x) = 6 cos x - 6 x sin x
    - x^2 cos x (diagonal), times a * b."""
    return (6 * np.cos(x) - 6 * x * np.sin(x) - x**2 * np.cos(x)) * a * b


# --- 1. the nesting decides who records an accumulator's tangent computations --------------------------------
def test_tape_inside_accumulator_does_not_record_its_tangents():
    """tensorflow/python/eager/forwardprop_test.py::ForwardpropTest.testForwardOverBackwardMemoryEfficiency: with
    the accumulator outside, ``tape.gradient(acc.jvp(d), c)`` is None. Before (tester28t): the inner tape recorded the tangent's
    operations and gave -0.05403023 (d/dc of the tangent -0.1 sin(c) is -0.1 cos(1))."""
    c = ap.constant(1.0)
    with ap.ForwardAccumulator(c, 0.1) as acc:
        with ap.GradientTape() as tape:
            tape.watch(c)
            d = np.cos(c)
    assert tape.gradient(acc.jvp(d), c) is None
    np.testing.assert_allclose(acc.jvp(d).numpy(), -0.1 * math.sin(1.0), rtol=1e-15)


def test_tangent_is_a_constant_to_an_inner_tape():
    """tester28t's repro_fwd_over_back.py: d(cos c + jvp(cos c))/dc is -sin(1) for TF's inner tape (the JVP is
    a constant there); autoprop gave -0.8955 = -sin(1) - 0.1 cos(1)."""
    c = ap.constant(1.0)
    with ap.ForwardAccumulator(c, 0.1) as acc:
        with ap.GradientTape() as tape:
            tape.watch(c)
            d = np.cos(c)
            loss = d + acc.jvp(d)
    np.testing.assert_allclose(float(tape.gradient(loss, c)), -math.sin(1.0), rtol=1e-15)


def test_inner_tape_keeps_no_tangent_operation():
    """forwardprop_test.py::testForwardOverBackwardMemoryEfficiency's point: the inner tape holds the primal's
    operations only, as many nodes as without the accumulator (before: the tangents' too, 5 for 2)."""
    x = ap.constant(X0)

    def nodes(with_acc):
        with ap.ForwardAccumulator(x, U) if with_acc else _null():
            with ap.GradientTape() as tape:
                tape.watch(x)
                np.sum(np.cos(x) * x)
        return len(tape._nodes)

    assert nodes(True) == nodes(False) == 3


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_forward_over_backward_and_backward_over_forward_still_give_hvps():
    """forwardprop_test.py::_hvp (forward-over-backward: ``with acc: with tape:``, ``acc.jvp(tape.gradient)``)
    and backward-over-forward (``with tape: with acc:``, ``tape.gradient(acc.jvp)``): H u both."""
    x = ap.constant(X0)
    want = _hess(X0) @ U
    with ap.ForwardAccumulator(x, U) as acc:
        with ap.GradientTape() as tape:
            tape.watch(x)
            y = _f(x)
        g = tape.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(g).numpy(), want, rtol=1e-13)
    with ap.GradientTape() as tape:
        tape.watch(x)
        with ap.ForwardAccumulator(x, U) as acc:
            y = _f(x)
        d = acc.jvp(y)
    np.testing.assert_allclose(tape.gradient(d, x).numpy(), want, rtol=1e-13)


def test_backward_over_forward_survives_stop_recording_inside_the_accumulator():
    """A tape resumed after ``stop_recording`` keeps its place (outside the accumulator): the JVP operations after
    the pause are recorded, so the HVP is whole (TF gives the resumed tape a new nesting id, and would miss
    them: autoprop keeps the ``with`` order, see ``tape._next_nesting``)."""
    x = ap.constant(X0)
    with ap.GradientTape() as tape:
        tape.watch(x)
        with ap.ForwardAccumulator(x, U) as acc:
            with tape.stop_recording():
                pass
            y = _f(x)
        d = acc.jvp(y)
    np.testing.assert_allclose(tape.gradient(d, x).numpy(), _hess(X0) @ U, rtol=1e-13)


def test_third_order_nestings():
    """acc in acc in tape, tape in acc in tape, acc in tape in acc, tape in tape in acc: each third derivative
    sum_jk T_ijk a_j b_k against its formula (JAX's jax.grad of jax.jvp of jax.grad agrees, fixt28's check)."""
    x = ap.constant(X0)
    with ap.GradientTape() as t:
        t.watch(x)
        with ap.ForwardAccumulator(x, U) as a1:
            with ap.ForwardAccumulator(x, V) as a2:
                y = _f(x)
            d2 = a2.jvp(y)
        d12 = a1.jvp(d2)
    np.testing.assert_allclose(t.gradient(d12, x).numpy(), _third(X0, U, V), rtol=1e-13)
    with ap.GradientTape() as t1:
        t1.watch(x)
        with ap.ForwardAccumulator(x, U) as a:
            with ap.GradientTape() as t2:
                t2.watch(x)
                y = _f(x)
            g = t2.gradient(y, x)
        s = np.sum(a.jvp(g) * V)
    np.testing.assert_allclose(t1.gradient(s, x).numpy(), _third(X0, U, V), rtol=1e-13)
    with ap.ForwardAccumulator(x, U) as a1:
        with ap.GradientTape() as t:
            t.watch(x)
            with ap.ForwardAccumulator(x, V) as a2:
                y = _f(x)
            d = a2.jvp(y)
        g = t.gradient(d, x)
    np.testing.assert_allclose(a1.jvp(g).numpy(), _third(X0, U, V), rtol=1e-13)
    np.testing.assert_allclose(a1.jvp(d).numpy(), U @ _hess(X0) @ V, rtol=1e-13)  # a1 sees a2's work
    with ap.ForwardAccumulator(x, U) as a:
        with ap.GradientTape() as t1:
            t1.watch(x)
            with ap.GradientTape() as t2:
                t2.watch(x)
                y = _f(x)
            s = np.sum(t2.gradient(y, x) * V)
        g = t1.gradient(s, x)
    np.testing.assert_allclose(a.jvp(g).numpy(), _third(X0, U, V), rtol=1e-13)


def test_inner_accumulator_does_not_see_the_outer_ones_tangents():
    """forwardprop_test.py::ForwardpropTest.testHigherOrderPureForward: ``acc.jvp(outer_acc.jvp(y))`` is None."""
    x = ap.constant(1.1)
    with ap.ForwardAccumulator(x, 1.0) as outer:
        with ap.ForwardAccumulator(x, 1.0) as inner:
            y = x**3.5
    np.testing.assert_allclose(outer.jvp(inner.jvp(y)).numpy(), 3.5 * 2.5 * 1.1**1.5, rtol=1e-14)
    assert inner.jvp(outer.jvp(y)) is None


# --- 2. Variable.read_value() and value() ---------------------------------------------------------------------
@pytest.mark.parametrize("method", ["read_value", "value"])
def test_variable_read_is_a_recorded_identity(method):
    """tensorflow/python/eager/backprop_test.py::BackpropTest.testTapeNoOpOnVariableIsIdentity: the gradient
    through ``v.read_value()`` is 1.0 (before: AttributeError); ``value()`` as TF's eager one, the same read.
    Forward mode too, and a non-trainable variable is not watched (None), as any read of it."""
    v = ap.Variable(1.0)
    with ap.GradientTape() as t:
        y = getattr(v, method)()
    assert type(y) is ap.Tensor and y.dtype == np.float64
    assert float(t.gradient(y, v)) == 1.0
    w = ap.Variable([1.0, 2.0], name="w")
    with ap.GradientTape() as t:
        y = getattr(w, method)() * np.array([3.0, -4.0])
    np.testing.assert_array_equal(t.gradient(y, w).numpy(), [3.0, -4.0])
    with ap.ForwardAccumulator(w, [1.0, 0.5]) as acc:
        y = getattr(w, method)()
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [1.0, 0.5])
    frozen = ap.Variable(2.0, trainable=False)
    with ap.GradientTape() as t:
        y = getattr(frozen, method)()
    assert t.gradient(y, frozen) is None


@pytest.mark.parametrize("method", ["read_value", "value"])
def test_variable_read_is_a_snapshot(method):
    """TF's eager read: the Tensor keeps the value read, a later ``assign`` changes the variable only."""
    v = ap.Variable([1.0, 2.0])
    r = getattr(v, method)()
    v.assign([7.0, 8.0])
    np.testing.assert_array_equal(r.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(getattr(v, method)().numpy(), [7.0, 8.0])
