"""autoprop.function and integer array arguments (session 38, fnbreak38's findings).

Integer arrays (labels, masks) reach the traced function as arrays, not Tensors; the user's own
numpy on one ran only at trace time, so its result was frozen into every replay (a silently wrong
loss), and the same array passed twice shared one slot. Now each integer argument is its own
guarded view: the user's numpy on it is refused at trace time, naming the line.
"""

import numpy as np
import pytest

import autoprop as ap
from autoprop import layers as al
from autoprop import losses as alo
from autoprop.tracing import TraceError

X = np.random.default_rng(0).random((6, 4))
Y1, Y2 = np.array([1, 2, 0, 0, 0, 0]), np.array([1, 2, 1, 2, 1, 0])


def _model():
    return al.Sequential(al.Linear(4, 3, rng=0))


def test_a_python_value_of_an_integer_argument_is_refused_naming_the_line():
    model, loss_fn = _model(), alo.SoftmaxCrossEntropy(reduction="sum")

    @ap.function
    def step(x, y):
        n_valid = np.count_nonzero(y != 0)  # frozen at the trace's count before the fix
        return loss_fn(y, model(x)) / n_valid

    with pytest.raises(TraceError, match=r"n_valid = np.count_nonzero\(y != 0\)"):
        step(X, Y1)


@pytest.mark.parametrize("body", ["y -= 1", "int(y.max())", "y.tolist()", "list(y)"])
def test_other_numpy_on_an_integer_argument_is_refused(body):
    model = _model()
    ns = {"model": model}
    exec(f"def step(x, y):\n    {body}\n    return model(x)\n", ns)
    y = Y2.copy()
    with pytest.raises(TraceError, match="integer or boolean array argument"):
        ap.function(ns["step"])(X, y)
    assert np.array_equal(y, Y2)  # (refused before it wrote)


def test_the_refusals_fix_replays_the_eager_values():
    model, loss_fn = _model(), alo.SoftmaxCrossEntropy(reduction="sum")

    def step(x, y, n_valid):
        return loss_fn(y, model(x)) / n_valid
    traced = ap.function(step)
    for y in (Y1, Y2):
        n = np.asarray(np.count_nonzero(y), dtype=np.float64)
        assert np.array_equal(traced(X, y, n).numpy(), step(X, y, n).numpy())
    assert traced.trace_count == 1


def test_the_same_integer_array_passed_twice_is_two_arguments_at_replay():
    model, loss_fn = _model(), alo.SoftmaxCrossEntropy()

    def step(x, y_a, y_b):
        out = model(x)
        return loss_fn(y_a, out) + 2.0 * loss_fn(y_b, out)
    traced = ap.function(step)
    traced(X, Y1, Y1)  # traced with one array in both places
    yb = np.array([0, 0, 0, 1, 1, 1])
    assert np.array_equal(traced(X, Y2, yb).numpy(), step(X, Y2, yb).numpy())
    assert traced.trace_count == 1


def test_a_generator_function_is_refused():
    model = _model()

    @ap.function
    def batches(x):
        yield model(x)

    with pytest.raises(TraceError, match="generator function"):
        batches(X)
    with pytest.raises(TraceError, match="generator function"):  # (nothing cached: refused again)
        batches(X)


def test_another_threads_eager_step_is_not_recorded_into_a_trace():
    """Thread B trains its own model eagerly while thread A's function traces: B's step ran with
    a spurious TraceError (its numpy input), or, with a Tensor input, was recorded into A's trace,
    so that every replay of A applied B's update to B's model again."""
    import threading

    x_b = ap.constant(X)
    model_a, model_b = _model(), al.Sequential(al.Linear(4, 3, rng=1))
    opt_a, opt_b = ap.optimizers.SGD(0.1), ap.optimizers.SGD(0.1)
    loss_fn = alo.SoftmaxCrossEntropy()
    go, done, errors = threading.Event(), threading.Event(), []

    def b_step():
        go.wait(60)
        try:
            for x in (X, x_b):
                with ap.GradientTape() as tape:
                    loss = ap.reduce_sum(model_b(x) ** 2)
                grads = tape.gradient(loss, model_b.trainable_variables)
                opt_b.apply_gradients(zip(grads, model_b.trainable_variables))
        except Exception as exc:  # (reported in the main thread)
            errors.append(exc)
        done.set()

    @ap.function
    def a_step(x, y):
        with ap.GradientTape() as tape:
            loss = loss_fn(y, model_a(x))
        grads = tape.gradient(loss, model_a.trainable_variables)
        opt_a.apply_gradients(zip(grads, model_a.trainable_variables))
        go.set()
        done.wait(60)  # (B's steps run while A's trace records)
        return loss

    thread = threading.Thread(target=b_step)
    thread.start()
    a_step(X, Y2)
    thread.join()
    assert errors == []
    before = [v.numpy().copy() for v in model_b.trainable_variables]
    a_step(X, Y2)  # a replay of A only
    for v, w in zip(before, model_b.trainable_variables):
        assert np.array_equal(v, w.numpy())


def test_an_optimizer_made_inside_the_function_is_refused():
    """Eager makes a fresh optimizer (fresh momentum) at each call; the replay kept the trace's
    and its momentum from call to call: a silently different model from the third call."""
    model, loss_fn = _model(), alo.SoftmaxCrossEntropy()

    @ap.function
    def step(x, y):
        opt = ap.optimizers.SGD(0.1, momentum=0.9)
        with ap.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    with pytest.raises(TraceError, match="optimizer was made inside the traced function"):
        step(X, Y2)


def test_zero_and_negative_zero_are_two_signatures():
    divide = ap.function(lambda x, s: x / s)
    ones = np.ones(2)
    with np.errstate(divide="ignore"):
        assert np.array_equal(divide(ones, 0.0).numpy(), [np.inf, np.inf])
        assert np.array_equal(divide(ones, -0.0).numpy(), [-np.inf, -np.inf])


@pytest.mark.parametrize("change", ["pop", "del", "swap"])
def test_sequential_layers_changed_in_place_trace_again(change):
    """model.layers.pop() set no attribute: the replay ran the old architecture."""
    model = al.Sequential(al.Linear(4, 4, rng=0), al.Linear(4, 4, rng=1), al.Linear(4, 2, rng=2))
    forward = ap.function(lambda x: model(x))
    forward(X)
    if change == "pop":
        model.layers.pop()
    elif change == "del":
        del model.layers[0]
    else:
        model.layers[:2] = model.layers[1::-1]  # (the first two layers swapped)
    assert np.array_equal(forward(X).numpy(), model(X).numpy())
    assert forward.traces == 2


@pytest.mark.parametrize("loss", ["mse", "huber", "bce"])
def test_regression_and_binary_losses_replay_the_eager_step(loss):
    """Float targets arrive as Tensors; the losses' check converted them (refused before)."""
    make = {"mse": alo.MeanSquaredError, "huber": alo.Huber, "bce": alo.BinaryCrossEntropyWithLogits}[loss]
    rng = np.random.default_rng(4)
    batches = [(rng.random((6, 4)), rng.random((6, 3))) for _ in range(3)]

    def step_fn(model, opt, loss_fn):
        def step(x, t):
            with ap.GradientTape() as tape:
                value = loss_fn(t, model(x))
            grads = tape.gradient(value, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return value
        return step
    m_eager, m_fn = _model(), _model()
    eager = step_fn(m_eager, ap.optimizers.Adam(0.01), make())
    traced = ap.function(step_fn(m_fn, ap.optimizers.Adam(0.01), make()))
    for x, t in batches:
        assert np.array_equal(eager(x, t).numpy(), traced(x, t).numpy())
    for a, b in zip(m_eager.trainable_variables, m_fn.trainable_variables):
        assert np.array_equal(a.numpy(), b.numpy())
    assert traced.trace_count == 1
    bad = batches[0][1].copy()
    bad[0, 0] = np.nan if loss != "bce" else 1.5
    with pytest.raises(ValueError, match="y_true"):  # (checked at each replay, as eagerly)
        traced(batches[0][0], bad)
