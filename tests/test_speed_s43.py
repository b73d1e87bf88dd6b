"""Session 43's speed changes keep every value and every error (issue 15).

``autoprop.function``'s replayed ``opt.apply_gradients`` event takes plain SGD's checked update on
the plan's gradient arrays (no Tensors, no pairs' loop) when the optimizer is the base class's plain
SGD and nobody listens: the Variables must end with the eager step's bits, a bad gradient must be
refused with the eager message and nothing updated, and an optimizer that replaces
``apply_gradients``, one with momentum, and an outer listener must still be given the call.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import autoprop as ap
from autoprop import layers as al
from autoprop import losses as alo
from autoprop import tracing
from manualprop import optim as moptim


def _mlp(seed=0):
    net = al.Sequential(al.Linear(6, 5), al.Tanh(), al.Linear(5, 3))
    rng = np.random.default_rng(seed)
    for v in net.trainable_variables:
        v.assign(rng.standard_normal(v.shape) * 0.5)
    return net


def _data(n=4):
    rng = np.random.default_rng(1)
    return rng.standard_normal((n, 6)), rng.integers(0, 3, n)


def _stepper(net, opt, traced):
    loss_fn, variables = alo.SoftmaxCrossEntropy(), net.trainable_variables

    def step(x, y):
        with ap.GradientTape() as tape:
            loss = loss_fn(y, net(x, training=True))
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))
        return loss

    return ap.function(step) if traced else step


@pytest.mark.parametrize("make_opt", [lambda: ap.optimizers.SGD(0.1), lambda: ap.optimizers.SGD(0.1, momentum=0.9),
                                      lambda: ap.optimizers.Adam(0.01)])
def test_replayed_updates_are_the_eager_steps_bit_for_bit(make_opt):
    X, y = _data()
    nets, opts = [_mlp(), _mlp()], [make_opt(), make_opt()]
    steps = [_stepper(nets[0], opts[0], False), _stepper(nets[1], opts[1], True)]
    for _ in range(6):
        losses = [float(s(X, y).numpy()) for s in steps]
        assert losses[0] == losses[1]
    for a, b in zip(nets[0].trainable_variables, nets[1].trainable_variables):
        assert np.array_equal(a.numpy(), b.numpy())
    assert opts[0].iterations == opts[1].iterations == 6


def test_the_event_takes_the_array_update_for_plain_sgd(monkeypatch):
    """The fast path is taken (apply_gradients on Tensors is not called) and counts the iteration."""
    X, y = _data()
    net, opt = _mlp(), ap.optimizers.SGD(0.1)
    step = _stepper(net, opt, True)
    step(X, y)  # the trace
    calls = []
    real = moptim.Optimizer.apply_gradients
    monkeypatch.setattr(moptim.Optimizer, "apply_gradients", lambda self, gv: calls.append(1) or real(self, gv))
    monkeypatch.setattr(tracing, "_APPLY_GRADIENTS", moptim.Optimizer.apply_gradients)  # (the base's, patched)
    before = [v.numpy().copy() for v in net.trainable_variables]
    step(X, y)
    assert calls == [] and opt.iterations == 2
    assert not any(np.array_equal(b, v.numpy()) for b, v in zip(before, net.trainable_variables))


def _grads_and_vars(bad=None):
    net = _mlp()
    variables = net.trainable_variables
    grads = [np.full(v.shape, 0.25) for v in variables]
    if bad is not None:
        grads[-1] = grads[-1].copy()
        grads[-1].flat[0] = bad
    return net, variables, grads


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_gradient_is_refused_by_the_event_as_by_apply_gradients(bad):
    _, variables, grads = _grads_and_vars(bad)
    before = [v.numpy().copy() for v in variables]
    opt = ap.optimizers.SGD(0.1)
    with pytest.raises(ValueError) as replayed:
        tracing._apply_event(opt, tuple(variables), *grads)
    with pytest.raises(ValueError) as eager:
        opt.apply_gradients(zip([ap.constant(g) for g in grads], variables))
    assert str(replayed.value) == str(eager.value)
    assert "apply_gradients" in str(eager.value)
    assert all(np.array_equal(b, v.numpy()) for b, v in zip(before, variables))  # the first pairs too
    assert opt.iterations == 0


@pytest.mark.parametrize("change", ["dtype", "shape", "none"])
def test_other_gradients_take_apply_gradients_and_its_message(change):
    _, variables, grads = _grads_and_vars()
    if change == "dtype":
        grads[0] = grads[0].astype(np.float32)  # cast by the general path, as eager
    elif change == "shape":
        grads[1] = np.zeros(grads[1].shape + (1,))
    else:
        grads[2] = None
    opts = [ap.optimizers.SGD(0.1), ap.optimizers.SGD(0.1)]
    vs = [variables, _mlp().trainable_variables]
    outcomes = []
    for i, (opt, var) in enumerate(zip(opts, vs)):
        try:
            with pytest.warns(UserWarning) if change == "none" else contextlib.nullcontext():
                if i == 0:
                    tracing._apply_event(opt, tuple(var), *grads)
                else:
                    opt.apply_gradients(zip([None if g is None else ap.constant(g) for g in grads], var))
            outcomes.append(("ok", [v.numpy().copy() for v in var], opt.iterations))
        except ValueError as exc:
            outcomes.append(("error", str(exc), opt.iterations))
    assert outcomes[0][0] == outcomes[1][0] and outcomes[0][2] == outcomes[1][2]
    if outcomes[0][0] == "ok":
        assert all(np.array_equal(a, b) for a, b in zip(outcomes[0][1], outcomes[1][1]))
    else:
        assert outcomes[0][1] == outcomes[1][1]
    assert (outcomes[0][0] == "error") == (change == "shape")


def test_an_optimizer_that_replaces_apply_gradients_is_called_at_each_replay():
    seen = []

    class Counting(ap.optimizers.SGD):
        def apply_gradients(self, grads_and_vars):
            seen.append(1)
            return super().apply_gradients(grads_and_vars)

    X, y = _data()
    nets, opts = [_mlp(), _mlp()], [Counting(0.1), ap.optimizers.SGD(0.1)]
    traced, eager = _stepper(nets[0], opts[0], True), _stepper(nets[1], opts[1], False)
    traced(X, y)  # the trace (which runs the eager Python)
    eager(X, y)
    at_trace = len(seen)
    for _ in range(3):
        traced(X, y)
        eager(X, y)
    assert len(seen) == at_trace + 3  # once a replay
    for a, b in zip(nets[0].trainable_variables, nets[1].trainable_variables):
        assert np.array_equal(a.numpy(), b.numpy())


def test_a_listener_is_given_the_replayed_update():
    """An outer listener of apply_gradients (a trace in progress) sees the replay's update."""
    _, variables, grads = _grads_and_vars()
    opt, heard = ap.optimizers.SGD(0.1), []

    def hook(o, grads_and_vars):
        heard.append([type(g) for g, _ in grads_and_vars])
        return NotImplemented

    moptim._APPLY_HOOKS.append(hook)
    try:
        tracing._apply_event(opt, tuple(variables), *grads)
    finally:
        moptim._APPLY_HOOKS.remove(hook)
    assert heard and all(t is ap.Tensor for t in heard[0]) and opt.iterations == 1


def _overflowing_step(traced):
    """A step whose replay (with a huge loss scale) makes NaN/inf gradients while its forward is fine."""
    net = _mlp()
    opt, loss_fn, variables = ap.optimizers.SGD(0.1), alo.SoftmaxCrossEntropy(), net.trainable_variables

    def step(x, y, s):
        with ap.GradientTape() as tape:
            loss = loss_fn(y, net(x, training=True)) * s * s
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))
        return loss

    f = ap.function(step) if traced else step
    X, y = _data()
    f(X, y, np.array(1.0))  # (the trace)
    before = [v.numpy().copy() for v in variables]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (the overflow itself)
        with pytest.raises(ValueError) as err:
            f(X * 10, y, np.array(1e200))
    assert all(np.array_equal(b, v.numpy()) for b, v in zip(before, variables))
    return str(err.value), opt.iterations


def test_a_replay_whose_gradients_overflow_is_refused_as_the_eager_step():
    eager, replayed = _overflowing_step(False), _overflowing_step(True)
    assert replayed == eager
    assert "apply_gradients: gradient for variable #0 must contain only finite values" in eager[0]
    assert eager[1] == 1
