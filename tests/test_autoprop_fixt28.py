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


# --- 3. jacobian's and batch_jacobian's loop options, checked as TensorFlow checks them -----------------------
def _tape_xy(persistent, x0):
    x = ap.constant(x0)
    with ap.GradientTape(persistent=persistent) as g:
        g.watch(x)
        y = x * x
    return g, x, y


def test_sequential_loop_needs_a_persistent_tape():
    """tensorflow/python/eager/backprop_test.py::JacobianTest.testPersistentTape and
    BatchJacobianTest.testPersistentTape: ``experimental_use_pfor=False`` on a non-persistent tape raises
    RuntimeError matching 'persistent' (before: computed, the option "accepted and ignored")."""
    g, x, y = _tape_xy(False, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="persistent=True.*experimental_use_pfor"):
        g.jacobian(y, x, experimental_use_pfor=False)
    np.testing.assert_array_equal(g.jacobian(y, x).numpy(), [[2.0, 0.0], [0.0, 4.0]])  # (not used by the refusal)
    g, x, y = _tape_xy(False, [[1.0, 2.0]])
    with pytest.raises(RuntimeError, match="persistent"):
        g.batch_jacobian(y, x, experimental_use_pfor=False)


def test_batch_jacobian_parallel_iterations_on_a_non_persistent_tape():
    """backprop_test.py::BackpropTest.testBatchJacobianParallelIterations: 16 elements per example,
    parallel_iterations=8, a non-persistent tape: RuntimeError 'persistent=True.*parallel_iterations'; with
    persistent=True the numbers, 4 * 3^3 sixteen times."""
    for persistent in (False, True):
        x = ap.constant([[3.0]])
        with ap.GradientTape(persistent=persistent) as t:
            t.watch(x)
            y = x * x
            z = np.tile(y * y, [1, 16])
        if not persistent:
            with pytest.raises(RuntimeError, match="persistent=True.*parallel_iterations"):
                t.batch_jacobian(z, x, parallel_iterations=8)
        else:
            np.testing.assert_array_equal(t.batch_jacobian(z, x, parallel_iterations=8).numpy(),
                                          [[[4.0 * 3.0**3]] * 16])
    g, x, y = _tape_xy(False, [[1.0, 2.0]])  # more in flight than rows: TF's pfor runs once (no tiling)
    np.testing.assert_array_equal(g.batch_jacobian(y, x, parallel_iterations=3).numpy(), [[[2.0, 0.0], [0.0, 4.0]]])


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_options_change_no_number_and_bad_parallel_iterations_are_refused(method):
    """On a persistent tape every option gives the same numbers (TF's test_parallel_iterations: 2 and 3 agree);
    parallel_iterations < 1, or 1 with pfor, is TF's ValueError; a float a TypeError."""
    g, x, y = _tape_xy(True, [[1.0, 2.0], [3.0, 4.0]])
    f = getattr(g, method)
    want = f(y, x).numpy()
    for kw in ({"parallel_iterations": 2}, {"parallel_iterations": 3}, {"experimental_use_pfor": False},
               {"experimental_use_pfor": False, "parallel_iterations": 1}):
        np.testing.assert_array_equal(f(y, x, **kw).numpy(), want)
    for bad in (0, -2, 1):
        with pytest.raises(ValueError, match="parallel_iterations"):
            f(y, x, parallel_iterations=bad)
    with pytest.raises(TypeError, match="parallel_iterations"):
        f(y, x, parallel_iterations=2.0)


# --- 4. np.nextafter's derivative ------------------------------------------------------------------------------
def test_nextafter_gradient_is_tensorflow_s():
    """tensorflow/python/ops/math_grad_test.py::NextAfterTest.testBasic: the gradient of nextafter(0.1, 3.1) with
    respect to (x1, x2) is [1.0, 0.0] (before: TypeError, no derivative rule). Central differences (steps far
    above an ulp) agree, also where x1 == x2 (the result is x2 there, d/dx1 still 1 along x1 alone)."""
    x1, x2 = ap.constant(0.1), ap.constant(3.1)
    with ap.GradientTape() as t:
        t.watch([x1, x2])
        y = np.nextafter(x1, x2)
    assert y.numpy() == np.nextafter(0.1, 3.1)
    assert [float(g) for g in t.gradient(y, [x1, x2])] == [1.0, 0.0]
    a0 = np.array([[-1.0, 0.5, 1.0, 2.5], [3.0, -2.0, 0.25, 2.5]])
    b0 = np.array([2.0, -1.0, 1.0, 2.5])  # (a == b at [0, 2], [0, 3] and [1, 3])
    w = np.array([[0.3, -1.2, 2.0, 0.7], [1.1, -0.4, 0.9, -2.0]])
    a, b = ap.constant(a0), ap.constant(b0)
    with ap.GradientTape() as t:
        t.watch([a, b])
        y = np.sum(np.nextafter(a, b) * w)
    ga, gb = t.gradient(y, [a, b])
    h = 1e-6
    for k in np.ndindex(a0.shape):
        e = np.zeros_like(a0)
        e[k] = h
        cd = (np.sum(np.nextafter(a0 + e, b0) * w) - np.sum(np.nextafter(a0 - e, b0) * w)) / (2 * h)
        np.testing.assert_allclose(ga.numpy()[k], cd, rtol=1e-8)
    np.testing.assert_array_equal(ga.numpy(), w)
    np.testing.assert_array_equal(gb.numpy(), np.zeros(4))  # (a connected zero, as TF: not None)


def test_nextafter_forward_mode_and_second_order():
    """math_grad_test.py::NextAfterTest.testWithGradientChecker's a * 1 + 0 * nextafter(a, 2), forward mode
    (tangent u of x1 passes, x2's tangent contributes 0) and the second derivative (0: d/dx1 is constant)."""
    a = ap.constant(np.array([-1.0, 0.5, 1.0, 2.5, 3.0]))
    with ap.GradientTape() as outer:
        outer.watch(a)
        with ap.GradientTape() as t:
            t.watch(a)
            y = np.sum(a * 1.0 + 0 * np.nextafter(a, 2.0)) + np.sum(np.nextafter(a, 2.0) ** 2)
        g = t.gradient(y, a)
    np.testing.assert_allclose(g.numpy(), 1.0 + 2 * np.nextafter(a.numpy(), 2.0), rtol=1e-15)
    np.testing.assert_allclose(outer.gradient(g, a).numpy(), 2.0)
    x1, x2 = ap.constant([0.1, 5.0]), ap.constant([3.1, -1.0])
    with ap.ForwardAccumulator([x1, x2], [[0.5, -2.0], [7.0, 9.0]]) as acc:
        y = np.nextafter(x1, x2)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [0.5, -2.0])


# --- 5. the exceptions are also TensorFlow's types -------------------------------------------------------------
def test_reentering_a_tape_or_an_accumulator_is_a_runtime_and_a_value_error():
    """backprop_test.py::BackpropTest.testNestedSelfContexts and forwardprop_test.py::ForwardpropTest.testReenter
    raise ValueError; autoprop raised RuntimeError (still caught as one: ap.TapeStateError is both)."""
    with ap.GradientTape() as t:
        for kind in (ValueError, RuntimeError, ap.TapeStateError):
            with pytest.raises(kind, match="already recording"):
                with t:
                    pass
    x = ap.constant(1.0)
    with ap.ForwardAccumulator(x, 1.5) as acc:
        for kind in (ValueError, RuntimeError):
            with pytest.raises(kind, match="already recording"):
                with acc:
                    pass
        y = 4.0 * x
    with acc:  # (re-entered after its block: it records again, as TF's testReenter)
        yy = y * y
    assert float(acc.jvp(yy)) == 2 * 4.0 * 6.0  # 2 y jvp(y)


def test_bad_watch_and_none_target_are_type_and_value_errors():
    """backprop_test.py::BackpropTest.testWatchBadThing (``watch(np.array(1.))``, ValueError matching 'ndarray')
    and testDifferentiatingFunctionThatReturnsNone (a None target, ValueError); autoprop raised TypeError, which
    still catches them (ap.TapeArgumentError is both), jacobian's and batch_jacobian's None target too."""
    g = ap.GradientTape()
    for kind in (ValueError, TypeError, ap.TapeArgumentError):
        with pytest.raises(kind, match="ndarray"):
            g.watch(np.array(1.0))
    x = ap.constant([[1.0]])
    for method in ("gradient", "jacobian", "batch_jacobian"):
        with ap.GradientTape(persistent=True) as t:
            t.watch(x)
        for kind in (ValueError, TypeError):
            with pytest.raises(kind, match="the target is None"):
                getattr(t, method)(None, x)
