"""Session 41's fixes to gradcheck's check (helper check41): each test failed before its fix."""

import numpy as np

from gradcheck import check_layer


class MixedScale:
    """Y = [1e6 X[:, :1], 1e-6 X[:, 1:]]; ``k`` the small columns' factor in backward (2: a bug, 1: right)."""

    def __init__(self, k=2.0):
        self.k = k

    def forward(self, X):
        return np.concatenate([1e6 * X[:, :1], 1e-6 * X[:, 1:]], axis=1)

    def backward(self, dY):
        return np.concatenate([1e6 * dY[:, :1], self.k * 1e-6 * dY[:, 1:]], axis=1)


class SmallTail:
    """Y = X * s, s from 1e4 down to 1e-12 along the columns: a right layer, a few tiny entries."""

    s = np.array([1e4, 1.0, 0.5, 1e-12])

    def forward(self, X):
        return X * self.s

    def backward(self, dY):
        return dY * self.s


def test_most_entries_below_the_default_atol_are_not_checked_never_a_pass():
    """verify40 L1: 15 of 20 entries of dX 2 times too large PASSed under an atol of the 1e6 column's round-off."""
    X = np.random.default_rng(3).standard_normal((5, 4))
    for k in (2.0, 1.0):  # the right layer too: its differences there are round-off (1.4e-5 off on 1e-6)
        res = check_layer(MixedScale(k), X, twin=None, mode="full")
        assert not res.passed and res.unchecked == ["dX"]
        assert any("15 of 20 entries of dX are below the default atol" in n for n in res.notes)


def test_a_few_tiny_entries_leave_the_pass():
    res = check_layer(SmallTail(), np.random.default_rng(3).standard_normal((5, 4)), twin=None, mode="full")
    assert res.passed and not res.unchecked
