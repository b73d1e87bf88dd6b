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


def test_most_entries_below_the_default_atol_are_never_a_pass():
    """verify40 L1: 15 of 20 entries of dX 2 times too large PASSed under an atol of the 1e6 column's round-off. Session
    41 made them NOT CHECKED, the right layer's too; session 42 (check42) differences them output entry by output entry
    at their own round-off: the bug FAILs, the right layer PASSes (tests/test_check42.py)."""
    X = np.random.default_rng(3).standard_normal((5, 4))
    wrong, right = (check_layer(MixedScale(k), X, twin=None, mode="full") for k in (2.0, 1.0))
    assert not wrong.passed and wrong.failing_tensors == ["dX"] and not wrong.unchecked
    assert right.passed and not right.unchecked
    assert any("15 entries below the default atol" in n for n in right.notes)


def test_a_few_tiny_entries_leave_the_pass():
    res = check_layer(SmallTail(), np.random.default_rng(3).standard_normal((5, 4)), twin=None, mode="full")
    assert res.passed and not res.unchecked


class SharpCE:
    """Mean softmax cross-entropy of ``k`` times the logits (a confident network: most of dy_pred about 1e-12);
    ``wrong`` doubles every non-target entry of the gradient."""

    def __init__(self, k=20.0, wrong=False):
        self.k, self.wrong = k, wrong

    def forward(self, y_true, y_pred):
        z = self.k * y_pred
        z = z - z.max(axis=1, keepdims=True)
        self.p, self.y = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True), y_true
        return float(-np.log(self.p[np.arange(len(y_true)), y_true]).mean())

    def backward(self):
        n = len(self.y)
        g = self.p.copy()
        if self.wrong:
            g *= 2.0
        g[np.arange(n), self.y] = self.p[np.arange(n), self.y] - 1.0
        return self.k * g / n


def test_a_right_sharp_softmax_passes_and_its_bug_fails():
    """verify41b F6: the near-zero entries of a right sharp softmax under an atol at the floor were NOT CHECKED (exit 3,
    by the seed); at the floor they are checked as near-zero values: the right loss PASSes, the wrong one FAILs."""
    from gradcheck import check_loss

    rng = np.random.default_rng(2)
    for k in (20.0, 100.0):
        y_pred, y = rng.standard_normal((8, 10)), rng.integers(0, 10, 8)
        res = check_loss(SharpCE(k), y, y_pred, twin=None)
        assert res.passed and not res.unchecked, res.notes
        assert not check_loss(SharpCE(k, wrong=True), y, y_pred, twin=None).passed
