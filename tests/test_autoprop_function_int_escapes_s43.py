"""verify42b F18: an integer array argument of autoprop.function (labels, token ids) left its guard through
numpy's C constructors and the array's plain views (``np.asarray(idx).tolist()``, ``np.array(idx)``,
``idx.view(np.ndarray)``, ``idx.base``, ``idx.flat``, a pickle): the Python values of the first call's ids were
frozen into every replay (``(x @ W)[:, np.asarray(idx).tolist()]``: the first batch's columns at every step, a
wrong gradient, no error). Each route is now refused while tracing, naming the argument and the line, or, where
the result is the argument's own values unchanged (``y = np.asarray(y)``), gives the argument itself, guarded."""
import pickle

import numpy as np
import pytest
from numpy import asarray as imported_asarray

import autoprop as ap
import autoprop.numpy as anp

W = ap.Variable(np.arange(1.0, 13.0).reshape(3, 4))
X = np.arange(6.0).reshape(2, 3)

ROUTES = {
    "np.asarray": lambda idx: np.asarray(idx).tolist(),
    "np.array": lambda idx: np.array(idx).tolist(),
    "np.array float": lambda idx: [int(v) for v in np.array(idx, dtype=float).tolist()],
    "np.asarray int32": lambda idx: np.asarray(idx, dtype=np.int32).tolist(),
    "np.ascontiguousarray": lambda idx: np.ascontiguousarray(idx).tolist(),
    "np.array of a list": lambda idx: np.array([idx])[0].tolist(),
    "imported asarray": lambda idx: imported_asarray(idx).tolist(),
    "view": lambda idx: idx.view(np.ndarray).tolist(),
    "__array__": lambda idx: idx.__array__().tolist(),
    "base": lambda idx: (idx if idx.base is None else idx.base).tolist(),
    "flat": lambda idx: [int(v) for v in idx.flat],
    "data": lambda idx: np.frombuffer(idx.data, dtype=idx.dtype).tolist(),
    "frombuffer": lambda idx: np.frombuffer(idx, dtype=idx.dtype).tolist(),
    "pickle": lambda idx: pickle.loads(pickle.dumps(idx)).tolist(),
}


@pytest.mark.parametrize("route", list(ROUTES))
def test_an_integer_arguments_values_leaving_its_guard_are_refused_naming_it(route):
    pick = ROUTES[route]

    def step(x, idx):
        with ap.GradientTape() as tape:
            y = anp.sum((x @ W)[:, pick(idx)] ** 2)
        return tape.gradient(y, W)

    traced = ap.function(step)
    with pytest.raises(ap.TraceError, match=r"argument `idx` .*test_autoprop_function_int_escapes_s43\.py"):
        for ids in ([0, 2], [3, 1]):  # (on main: the second call replayed the first ids' columns)
            idx = np.array(ids)
            assert np.array_equal(traced(X, idx).numpy(), step(X, idx).numpy()), (route, ids)


def test_a_one_hot_built_by_a_loop_over_np_asarray_labels_is_refused():
    def step(x, y):
        y = np.asarray(y)  # (the argument itself: still guarded)
        onehot = np.zeros((len(y), 4))
        for i, label in enumerate(y):
            onehot[i, label] = 1.0
        with ap.GradientTape() as tape:
            loss = anp.sum((x @ W) * ap.constant(onehot))
        return tape.gradient(loss, W)

    with pytest.raises(ap.TraceError, match=r"iterating on the integer .* argument `y`"):
        ap.function(step)(X, np.array([0, 2]))


def test_np_asarray_of_the_labels_then_a_loss_replays_each_calls_labels():
    model = ap.layers.Sequential(ap.layers.Linear(3, 4, rng=0))
    loss_fn = ap.losses.SoftmaxCrossEntropy()

    def step(x, y):
        y = np.asarray(y)  # (on main a plain copy of the first call's labels: the loss refused it)
        with ap.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        return [loss, *tape.gradient(loss, model.trainable_variables)]

    traced = ap.function(step)
    x = np.random.default_rng(0).normal(size=(5, 3))
    for labels in ([0, 1, 2, 3, 0], [3, 3, 1, 0, 2], [2, 0, 0, 1, 3]):
        y = np.array(labels)
        for got, want in zip(traced(x, y), step(x, y)):
            assert np.array_equal(got.numpy(), want.numpy()), labels
    assert traced.trace_count == 1


def test_the_refusal_names_an_argument_inside_a_tuple():
    def step(x, batch):
        return anp.sum(x[:, np.asarray(batch[1]).tolist()])

    with pytest.raises(ap.TraceError, match=r"argument `batch\[1\]`"):
        ap.function(step)(X, (0, np.array([0, 1])))
