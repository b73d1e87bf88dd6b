"""verify43b F11: numpy functions that read a traced tensor's values (argwhere, flatnonzero, extract, compress, numpy's
own function on integer or boolean tensors) gave a plain value whose shape was the first call's: ``sum(x * x) /
argwhere(x > 0).shape[0]`` replayed 7.0 where eager gives 4.67 and 14.0. They are refused inside autoprop.function, as
np.nonzero is; eagerly they compute as before."""

import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp

XS = [np.array([1.0, -2.0, 3.0]), np.array([1.0, 2.0, 3.0]), np.array([-1.0, -2.0, 3.0])]
YS = [np.array([0, 1, 0]), np.array([1, 1, 2]), np.array([2, 0, 0])]

COUNTS = {
    "argwhere": lambda x, y: anp.sum(x * x) / anp.argwhere(x > 0).shape[0],
    "flatnonzero": lambda x, y: anp.sum(x * x) / anp.flatnonzero(x > 0).shape[0],
    "extract of a label argument": lambda x, y: anp.sum(x) / anp.extract(anp.not_equal(y, 0), y).shape[0],
    "compress": lambda x, y: anp.sum(x) / anp.compress(anp.not_equal(y, 0), y).shape[0],
}


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_a_count_read_from_values_is_refused(name):
    step = COUNTS[name]
    eager = [float(step(ap.constant(x), y).numpy()) for x, y in zip(XS, YS)]
    assert len(set(eager)) > 1  # the count changes between the calls
    with pytest.raises(ap.TraceError, match="a plain value computed from the tensor's values"):
        ap.function(step)(XS[0], YS[0])


def test_shape_facts_stay_allowed():
    @ap.function
    def step(x):
        rows, cols = np.triu_indices_from(anp.outer(x, x))
        return anp.sum(x) * len(rows) + np.iscomplexobj(x)
    assert [float(step(x).numpy()) for x in XS] == [float(np.sum(x)) * 6 for x in XS]


def test_labels_cast_inside_the_step_replay_each_call():
    """verify43b F7: y.astype(np.float64) inside the step was refused as "a numpy array that is neither an argument of
    the call nor a Variable", without naming y; then (session 43) refused naming it; since fn45 the cast and reshape
    are computed again at each replay from that call's labels."""
    W = ap.Variable(np.ones((3, 1)))

    @ap.function
    def step(x, y):
        return anp.sum((x @ W - y.astype(np.float64).reshape(-1, 1)) ** 2)
    for y in ([0, 1, 1, 0], [3, 0, 2, 2], [1, 1, 1, 5]):
        want = np.sum((np.ones((4, 1)) * 3.0 - np.array(y, float).reshape(-1, 1)) ** 2)
        assert float(step(np.ones((4, 3)), np.array(y)).numpy()) == want
    assert step.trace_count == 1
