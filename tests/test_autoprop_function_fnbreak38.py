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
