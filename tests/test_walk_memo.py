"""Session 12 (diag12, checker speed): the walks' per-class memo (:func:`gradcheck._adapters._slot_names`) and the
values they no longer enter (numbers, numeric arrays, tuples of numbers) leave what they find unchanged."""

import gc

import numpy as np

from gradcheck import _adapters as AD


def test_slot_names_are_memoised_per_class_and_forgotten_with_it():
    class A:
        __slots__ = ("W", "__b")

    class B(A):
        __slots__ = ("c",)

    assert AD._slot_names(A) == AD._slot_names(A) == {"W": A.W, "_A__b": A._A__b}
    assert set(AD._slot_names(B)) == {"W", "_A__b", "c"}
    key = id(B)
    del B
    gc.collect()
    assert key not in AD._SLOTS  # a new class at a reused id is computed anew


def test_cache_guard_still_sees_arrays_in_tuples_and_skips_numbers():
    class L:
        def __init__(self):
            self.stride, self.cache, self.p = (1, 1), (np.ones(3), 2), 0.5

        def forward(self, X, training=False):
            return X

        def backward(self, dY):
            self.cache[0][1] = 7.0  # BUG: writes into its cache
            return dY

    layer = L()
    after = AD.cache_guard(layer)
    layer.backward(np.ones(3))
    assert "modified its cache (self.cache[0], element [1]) in place" in after()


def test_walk_lists_scalars_without_entering_them():
    class H:
        def __init__(self):
            self.n, self.s, self.a, self.t = 3, "x", np.zeros(2), (1, 2.0)

    got = [(AD._label(p), v) for p, v in AD.walk(H())]
    assert [k for k, _ in got] == ["n", "s", "a", "t", "t[0]", "t[1]"], got
