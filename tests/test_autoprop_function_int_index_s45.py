"""autoprop.function: an integer or boolean array argument given to autoprop's functions that take it as data (an
index or a mask read by the primitive's forward at each replay, as ``t[y]`` is) traces once and replays each call's
values: ``anp.take(t, y, axis=1)`` (mode='wrap' too), ``anp.take_along_axis(t, idx, axis=1)``, ``ap.tensor_scatter_nd_add(t, idx, u)``,
``anp.sum(t, where=m)``, ``anp.mean(t, where=m)`` (they were refused: the composite made numpy's plain array of the
first call's values, fn45). Each replay against numpy's value and autograd's gradient, on three index values; and
``np.shape(y)``, ``np.ndim(y)``, ``np.size(y)`` read the signature's metadata as ``y.shape`` does (verify44a L1)."""
import autograd
import autograd.numpy as agnp
import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp

X = np.sin(np.arange(20.0)).reshape(5, 4) + 1.5
RANGE = ap.constant(np.arange(4))


def _scatter_rows(n, idx):
    """(n, len(idx)) 0/1 matrix P with P[idx[k], k] = 1: P @ u adds row k of u to row idx[k] (repeats add)."""
    p = np.zeros((n, len(idx)))
    np.add.at(p, (idx, np.arange(len(idx))), 1.0)
    return p


CASES = {  # name: (autoprop loss, autograd loss on the same values, three index arguments)
    "take axis=1": (lambda t, y: anp.sum(anp.take(t, y, axis=1) ** 3),
                    lambda a, y: agnp.sum(a[:, y] ** 3),
                    [np.array([0, 3, 3]), np.array([2, 1, 0]), np.array([-1, 0, 2])]),
    "take mode='wrap'": (lambda t, y: anp.sum(anp.take(t, y, axis=1, mode="wrap") ** 3),
                         lambda a, y: agnp.sum(a[:, np.mod(y, 4)] ** 3),
                         [np.array([0, 7, -6]), np.array([9, 1, 0]), np.array([-1, 4, 2])]),
    "take flat": (lambda t, y: anp.sum(anp.take(t, y) ** 3),
                  lambda a, y: agnp.sum(agnp.reshape(a, (-1,))[y] ** 3),
                  [np.array([[0, 19], [7, 7]]), np.array([[3, 4], [5, 6]]), np.array([[1, 1], [1, 2]])]),
    "take_along_axis": (lambda t, y: -anp.mean(anp.take_along_axis(t, y, axis=1)),
                        lambda a, y: -agnp.mean(a[np.arange(5)[:, None], y]),
                        [np.array([[0], [3], [1], [1], [2]]), np.array([[3], [3], [3], [0], [0]]),
                         np.array([[2], [0], [1], [3], [2]])]),
    "tensor_scatter_nd_add": (lambda t, i: anp.sum(ap.tensor_scatter_nd_add(t, i, t[:3] * 2.0) ** 2),
                              lambda a, i: agnp.sum((a + agnp.dot(_scatter_rows(5, i[:, 0]), a[:3] * 2.0)) ** 2),
                              [np.array([[0], [4], [4]]), np.array([[1], [2], [3]]), np.array([[3], [0], [1]])]),
    "sum where=m": (lambda t, m: anp.sum(t ** 2, where=m),
                    lambda a, m: agnp.sum(agnp.where(m, a ** 2, 0.0)),
                    [X > 1.5, X < 1.0, np.eye(5, 4, dtype=bool)]),
    "mean axis=1 where=m": (lambda t, m: anp.sum(anp.mean(t ** 2, axis=1, where=m) ** 2),
                            lambda a, m: agnp.sum((agnp.sum(agnp.where(m, a ** 2, 0.0), axis=1) / m.sum(axis=1)) ** 2),
                            [np.arange(20).reshape(5, 4) % 3 != 1, np.arange(20).reshape(5, 4) % 2 == 0,
                             np.eye(5, 4, dtype=bool) | (np.arange(4) == 3)]),
}


def _replays_as_numpy_and_autograd(f, ref, indices):
    """The traced step (loss f(x, y) and its gradient in x) on each index value: numpy's loss, autograd's gradient."""
    def step(x, y):
        with ap.GradientTape() as tape:
            tape.watch(x)
            loss = f(x, y)
        return loss, tape.gradient(loss, x)

    traced = ap.function(step)
    for y in indices:
        loss, dx = traced(X, y)
        np.testing.assert_allclose(loss.numpy(), ref(X, y), rtol=1e-12)
        np.testing.assert_allclose(dx.numpy(), autograd.grad(ref)(X, y), rtol=1e-12, atol=1e-15)
    assert traced.trace_count == 1  # (replayed, not traced again)


@pytest.mark.parametrize("name", CASES)
def test_index_or_mask_argument_replays_each_call(name):
    _replays_as_numpy_and_autograd(*CASES[name])


@pytest.mark.parametrize("meta", [np.shape, np.ndim, np.size])
def test_numpy_metadata_functions_of_an_int_argument(meta):
    traced = ap.function(lambda t, y: anp.sum(t) * float(np.sum(meta(y))))
    for y in (np.array([1, 2]), np.array([0, 0]), np.array([[3, 1, 2]])):  # (the last: another signature)
        np.testing.assert_allclose(traced(X, y).numpy(), X.sum() * np.sum(meta(y)), rtol=1e-12)
    assert traced.trace_count == 2


def test_numpy_function_of_an_int_argument_runs_at_each_call():
    """``ap.numpy_function(f, [y])`` runs ``f`` again at each replay, once per call, as TensorFlow runs a
    numpy_function at each call of a tf.function (it was refused: "a tensor made inside the function from a value that
    is not traced", not naming ``y``)."""
    calls = []

    def counts(y, x):
        calls.append(1)
        return np.bincount(y, minlength=4) * x.sum()

    traced = ap.function(lambda x, y: anp.sum(x) * ap.numpy_function(counts, [y, x], np.float64))
    for y in (np.array([0, 3, 3]), np.array([1, 1, 2]), np.array([2, 0, 0])):
        got = traced(X[0], y).numpy()
        np.testing.assert_allclose(got, X[0].sum() * np.bincount(y, minlength=4) * X[0].sum(), rtol=1e-12)
    assert len(calls) == 3 and traced.trace_count == 1


def test_shape_only_constants_of_an_int_argument_replay():
    """``anp.ones_like(y)``, ``np.full_like(y, 3)``: made from the shape and dtype only, constants of the trace (they were
    refused as "autoprop's run reads the values ... Pass them as Python ints")."""
    traced = ap.function(lambda t, y: t * anp.ones_like(y) + np.full_like(y, 3))
    for y in (np.array([1, 2, 3, 4]), np.array([0, 0, 7, 1])):
        np.testing.assert_array_equal(traced(X, y).numpy(), X + 3.0)
    assert traced.trace_count == 1


@pytest.mark.parametrize("body", [
    lambda t, y: anp.sum(t) * anp.sum(ap.convert_to_tensor(y)),
    lambda t, y: anp.sum(t) * anp.sum(anp.abs(y)),
    lambda t, y: anp.sum(t) * anp.sum(RANGE[y]),
], ids=["convert_to_tensor", "anp.abs", "sum of a recorded int tensor"])
def test_plain_value_of_an_int_argument_names_it(body):
    """verify44a L5: "np.sum (a plain value computed from the tensor's values) of a traced tensor", naming nothing."""
    with pytest.raises(ap.TraceError) as info:
        ap.function(body)(X, np.array([0, 1, 2, 3]))
    msg = str(info.value)
    assert "argument `y`" in msg and "y.astype(np.float64) before the call" in msg
    assert "test_autoprop_function_int_index_s45.py" in msg


LABELS = [np.array([0, 3, 1, 1, 2]), np.array([3, 3, 3, 0, 0]), np.array([2, 0, 1, 3, 2])]
DERIVED = {  # the function's own numpy on the argument, computed again at each replay: (autoprop, autograd)
    "take_along_axis y[:, None]": (lambda t, y: -anp.mean(anp.take_along_axis(t, y[:, None], axis=1)),
                                   lambda a, y: -agnp.mean(a[np.arange(5), y])),
    "y.reshape(-1, 1) == 2 mask": (lambda t, y: anp.sum(anp.where(y.reshape(-1, 1) == 2, t, 0.0) ** 2),
                                   lambda a, y: agnp.sum(agnp.where(y.reshape(-1, 1) == 2, a, 0.0) ** 2)),
    "t * y.astype(float)[:, None]": (lambda t, y: anp.sum(t * y.astype(np.float64)[:, None] ** 2),
                                     lambda a, y: agnp.sum(a * y.astype(np.float64)[:, None] ** 2)),
    "t[:, y - 1]": (lambda t, y: anp.sum(t[:, y - 1] ** 3), lambda a, y: agnp.sum(a[:, y - 1] ** 3)),
}


@pytest.mark.parametrize("name", DERIVED)
def test_numpy_of_an_int_argument_in_the_function_replays_each_call(name):
    """``y[:, None]``, ``y.reshape(-1, 1) == 2``, ``y.astype(float)``, ``y - 1`` in the function's own code: a value
    the trace computes again at each replay from that call's labels (they were refused: "indexing on the integer
    argument", "np.equal on ...")."""
    _replays_as_numpy_and_autograd(*DERIVED[name], LABELS)


def test_numpy_of_an_int_argument_whose_shape_follows_the_values_traces_again():
    """``y[m]`` with a mask argument: the shape is the mask's count; a replay whose count differs traces again (it was
    refused at that replay, after the step's events had run: verify45c H1), and each count's trace is kept."""
    traced = ap.function(lambda t, y, m: anp.sum(t[y[m]] ** 2))
    y = np.array([0, 1, 2, 3, 4])
    m1, m2, m3 = np.array([1, 0, 1, 0, 0], bool), np.array([0, 1, 0, 1, 0], bool), np.array([1, 1, 1, 0, 0], bool)
    for m in (m1, m2, m3, m2, m3):  # (the same count: each call's rows)
        np.testing.assert_allclose(traced(X, y, m).numpy(), np.sum(X[y[m]] ** 2), rtol=1e-12)
    assert traced.traces == 2
