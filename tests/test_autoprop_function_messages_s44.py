"""autoprop.function's refusals of an integer or boolean array argument name it, the line and what to do (verify44a
M1, M2, M3, L4 after session 44's guard, a plain object holding the array, not an ndarray subclass); the advised
forms replay each call's values (compared with the eager call over 3 calls with different values)."""

import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp

W1 = ap.Variable(np.linspace(-1.0, 1.0, 3).reshape(3, 1))
W = ap.Variable(np.linspace(-1.0, 1.0, 12).reshape(3, 4))
BCE = ap.losses.BinaryCrossEntropyWithLogits()
MSE = ap.losses.MeanSquaredError()
X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])


def _refusal(body, arg):
    f = ap.function(body)
    with pytest.raises(ap.TraceError) as info:
        f(X, arg)
    return " ".join(str(info.value).split())


def _replays(body, args):
    f = ap.function(body)
    for x, a in args:
        want = body(x, a).numpy()
        assert np.array_equal(f(x, a).numpy(), want)
    assert f.trace_count == 1


@pytest.mark.parametrize("body", [
    lambda x, y: BCE(y, (x @ W1)[:, 0]),
    lambda x, y: MSE(y, (x @ W1)[:, 0]),
    lambda x, y: BCE(y.astype(np.float64).reshape(-1, 1), x @ W1),
], ids=["bce", "mse", "bce-cast-by-user"])
def test_integer_targets_name_the_argument(body):
    """M1: the losses' cast of an integer target argument was "neither an argument of the call nor a Variable"."""
    msg = _refusal(body, np.array([0, 1]))
    assert "argument `y`" in msg and "check_targets" in msg and "now float64" in msg
    assert "y.astype(np.float64) before the call" in msg and "neither an argument" not in msg


def test_float_targets_as_advised_replay_each_call():
    rng = np.random.default_rng(0)
    args = [(rng.normal(size=(2, 3)), rng.integers(0, 2, size=2).astype(np.float64)) for _ in range(3)]
    _replays(lambda x, y: BCE(y, (x @ W1)[:, 0]), args)
    _replays(lambda x, y: MSE(y, (x @ W1)[:, 0]), args)


@pytest.mark.parametrize("name, body, arg", [
    ("sum", lambda x, m: anp.sum((x @ W) * m) / anp.sum(m), np.ones((2, 4), bool)),
    ("reshape", lambda x, y: anp.sum(anp.equal(anp.reshape(y, (-1, 1)), anp.arange(4)) * (x @ W)), np.array([0, 3])),
    ("expand_dims", lambda x, m: anp.sum((x @ W) * anp.expand_dims(m, 1)), np.array([True, False])),
    ("squeeze", lambda x, y: anp.sum(x @ W) * anp.sum(anp.squeeze(y)), np.array([[1], [2]])),
])
def test_anp_given_the_argument_as_data(name, body, arg):
    """M2: was "autoprop's dispatch_function reads ... as a shape ... Pass them as Python ints"."""
    msg = _refusal(body, arg)
    assert f"autoprop.numpy.{name}" in msg and "as data" in msg and "astype(np.float64) before the call" in msg
    assert "dispatch_function" not in msg and "Python ints" not in msg


def test_anp_float_mask_as_advised_replays_each_call():
    rng = np.random.default_rng(1)
    args = [(rng.normal(size=(2, 3)), (rng.random((2, 4)) > 0.5 * (k + 1) / 2).astype(np.float64)) for k in range(3)]
    args[0][1][0, 0] = 1.0  # (a nonzero count each call)
    _replays(lambda x, m: anp.sum((x @ W) * m) / anp.sum(m), args)


@pytest.mark.parametrize("what, body", [
    ("numpy.ma.core.MaskedArray.__new__", lambda x, m: anp.sum(x @ W) * np.ma.masked_array(m).sum()),
    ("numpy.ma.core.array", lambda x, m: anp.sum(x @ W) * np.ma.array(m).sum()),
    ("as_strided", lambda x, m: anp.sum(x @ W) * np.lib.stride_tricks.as_strided(m).sum()),
])
def test_numpy_python_handing_the_guard_to_c_is_refused_naming_it(what, body):
    """M3: a bare TypeError ("descriptor 'view' ... '_TracedInts'") or AttributeError (__array_interface__)."""
    msg = _refusal(body, np.ones((2, 4), bool))
    assert what in msg and "argument `m`" in msg and "test_autoprop_function_messages_s44.py" in msg


def test_round_is_refused_naming_the_argument():
    """L4: "type _TracedInts doesn't define __round__ method"."""
    msg = _refusal(lambda x, k: anp.sum(x @ W) * round(k), np.array(2))
    assert "round()" in msg and "argument `k`" in msg


@pytest.mark.parametrize("body", [
    lambda x, y: anp.sum(anp.dot(x @ W, y)),
    lambda x, y: anp.sum(ap.convert_to_tensor(y) * (x @ W)),
], ids=["anp.dot", "convert_to_tensor"])
def test_integer_argument_as_data_names_it(body):
    """L5: "a tensor made inside the function from a value that is not traced", not naming the argument."""
    msg = _refusal(body, np.array([0, 1, 2, 3]))
    assert "argument `y`" in msg and "y.astype(np.float64) before the call" in msg and "not traced" not in msg


@pytest.mark.parametrize("body", [
    lambda x, m: anp.sum(x @ W, where=m),
    lambda x, m: anp.mean(x @ W, where=m),
], ids=["sum", "mean"])
def test_mask_argument_as_where_names_it(body):
    """L2: "autoprop.where gets a numpy array that is neither an argument of the call nor a Variable" (m is one). A
    boolean mask argument is read at each replay since fn45 (test_autoprop_function_int_index_s45.py); a 0/1 integer
    one, cast to bool by autoprop's Python, is still refused, naming it."""
    msg = _refusal(body, np.array([[1, 0, 1, 1], [0, 1, 1, 0]]))
    assert "argument `m`" in msg and "anp.where(m, z, 0)" in msg and "neither an argument" not in msg
    assert "pass a boolean array as the argument" in msg


def test_mask_and_one_hot_as_advised_replay_each_call():
    rng = np.random.default_rng(2)
    masks = [(rng.normal(size=(2, 3)), rng.random((2, 4)) > 0.5) for _ in range(3)]
    _replays(lambda x, m: anp.sum(anp.where(m, x @ W, 0)), masks)
    eye = ap.constant(np.eye(4))
    labels = [(rng.normal(size=(2, 3)), np.array(ids)) for ids in ([0, 3], [2, 1], [3, 3])]
    _replays(lambda x, y: anp.sum(eye[y] * (x @ W)), labels)


def test_numpy_array_indexed_with_the_argument_says_so():
    """L3: "__array__() on the integer ... argument `y`": not what the student wrote."""
    msg = _refusal(lambda x, y: anp.sum(np.eye(4)[y] * (x @ W)), np.array([0, 3]))
    assert "a numpy array indexed with it" in msg and "I = autoprop.constant(np.eye(C)), then I[y]" in msg
