"""Issue 15, session 24: manualprop's B16 step without work plain numpy does not do.

Each cut keeps every value and every check: the tests compare with the formula written out
(the same numpy calls, so the same bits) and make each check fire where it moved.
"""

import numpy as np
import pytest

import manualprop as mp
from manualprop import losses


def _ce_by_hand(z, y):
    """SoftmaxCrossEntropy's forward and backward as the seed writes them (np.arange each call)."""
    shifted = z - z.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    p = e / s
    n = len(y)
    value = float(np.add.reduce(np.log(s[:, 0]) - shifted[np.arange(n), y], axis=None)) / n
    dz = p.copy()
    dz[np.arange(n), y] -= 1
    dz *= 1.0 / n
    return value, dz


@pytest.mark.parametrize("n", [1, 3, 16, 16, 64, 5])
def test_cross_entropy_row_index_kept_per_batch_size_gives_the_same_bits(n):
    rng = np.random.default_rng(n)
    z = rng.standard_normal((n, 10)) * 3
    y = rng.integers(0, 10, size=n)
    loss = mp.SoftmaxCrossEntropy()
    value = loss.forward(y, z)
    dz = loss.backward()
    want_value, want_dz = _ce_by_hand(z, y)
    assert value == want_value
    assert np.array_equal(dz, want_dz)


def test_the_kept_row_index_is_arange_read_only_and_one_object_per_size():
    losses._ROWS.clear()
    rows = losses._rows(7)
    assert rows.dtype == np.arange(7).dtype and np.array_equal(rows, np.arange(7))
    assert losses._rows(7) is rows
    with pytest.raises(ValueError, match="read-only"):
        rows[0] = 3  # nobody can shift the labels of a later batch
    for n in range(1, losses._ROWS_MAX + 5):  # bounded: cleared when it grows large
        assert np.array_equal(losses._rows(n), np.arange(n))
        assert len(losses._ROWS) <= losses._ROWS_MAX


def test_a_label_out_of_range_is_still_refused_with_the_kept_row_index():
    loss = mp.SoftmaxCrossEntropy()
    z = np.zeros((4, 3))
    loss.forward(np.array([0, 1, 2, 0]), z)  # the index for 4 rows is kept now
    with pytest.raises(ValueError, match="y_true"):
        loss.forward(np.array([0, 1, 3, 0]), z)
    with pytest.raises(ValueError, match="y_true"):
        loss.forward(np.array([0, -1, 2, 0]), z)


class _SkipsLayerInit(mp.Linear):
    """A student's subclass whose __init__ does not call super().__init__()."""

    def __init__(self, W, b):
        self.in_features, self.out_features, self.dtype = W.shape[1], W.shape[0], W.dtype
        self.params = {"W": W, "b": b}
        self.grads = {"W": np.zeros_like(W), "b": np.zeros_like(b)}
        self.cache = None


def test_every_layer_has_its_own_sums_of_squares_from_construction_and_no_class_attribute():
    from manualprop.layers import Layer

    # a class attribute named _ss (session 16's descriptor) keeps CPython from specialising
    # the reads of layer._ss; Layer.__new__ makes the dict instead
    assert all("_ss" not in vars(cls) for cls in type(mp.Linear(2, 2)).__mro__)
    a, b = _SkipsLayerInit(np.ones((2, 3)), np.zeros(2)), mp.Tanh()
    assert a._ss == {} and b._ss == {} and a._ss is not b._ss and "_ss" in vars(a)
    a.forward(np.ones((4, 3)))
    assert a._ss["X"] == 12.0 and b._ss == {}
    assert Layer.__new__(mp.Tanh)._ss == {}
    import copy
    import pickle

    for c in (copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert c._ss == a._ss and c._ss is not a._ss


def test_float_ss_takes_the_known_bound_first_and_never_for_none():
    from manualprop import _validation as V

    known = V.KNOWN_FINITE
    X = np.full((2, 3), 2.0)
    assert known.array is None and V.float_ss(None) is None  # None is no array, even when nothing is known
    try:
        known.array, known.ss = X, 99.0
        assert V.float_ss(X) == 99.0  # the identity test, no look
        assert V.float_ss(X.copy()) == 24.0  # another object: its own look
        assert V.float_ss(None) is None and V.float_ss([[1.0]]) is None
    finally:
        known.array, known.ss = None, np.inf
    # a bad input still gets check_array's message, inside a container too
    with pytest.raises(TypeError, match=r"Linear\(in_features=3, out_features=2\)\.forward: X must be a NumPy array"):
        mp.Linear(3, 2).forward(None)
    with pytest.raises(TypeError, match=r"X must have dtype float64"):
        mp.Sequential(mp.Linear(3, 2), mp.Tanh()).forward(np.ones((2, 3), np.float32))
