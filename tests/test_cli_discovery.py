"""Weights `gradcheck check` could not see, and so passed over in silence (session 9's new-user tester,
W5, W12, W13, W17, W20): ``__slots__`` layers, name-mangled ``self.__W``, weights in custom containers, in a
student's own Sequential or a deque, class attributes and module globals, learnable names read as
buffers. Each case is the tester's repro with its planted bug, run through the console script; a bug
that was a PASS must now be a FAIL (or a non-PASS with a WARNING naming what could not be read).
"""

import pytest
from test_cli_verdict import flat, run, write

LINEAR = """
import numpy as np

class Linear:
    __slots__ = ("W", "b", "dW", "db", "X")
    def __init__(self, in_features=5, out_features=3):
        self.W = np.random.default_rng(0).standard_normal((in_features, out_features))
        self.b = np.zeros(out_features)
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        self.dW = self.X.T @ dY
        self.db = dY.sum(0)
        return dY @ self.W.T

class Bug(Linear):
    __slots__ = ()
    def backward(self, dY):
        self.dW = np.zeros_like(self.W)   # BUG: weight gradient never computed
        self.db = dY.mean(0)              # BUG: mean instead of sum
        return dY @ self.W.T

class Mangled:
    def __init__(self, i=4, o=3):
        self.__W = np.random.default_rng(0).standard_normal((i, o)); self.__b = np.zeros(o)
    def forward(self, X):
        self.__X = X; return X @ self.__W + self.__b
    def backward(self, dY):
        self.__dW = self.__X.T @ dY * 2    # BUG
        self.__db = dY.sum(0)
        return dY @ self.__W.T
"""


def test_slots_layer_weights_are_read_and_a_zero_dw_fails(tmp_path):
    f = write(tmp_path, LINEAR)
    p = run("check", f"{f}::Bug", "--input-shape", "8,5")
    out = flat(p)
    assert p.returncode == 1, out
    assert "protocol: attribute style (W/dW, b/db)" in out and "forward raised" not in out, out
    assert "FAIL: Bug: gradient mismatch in dW, db." in out and "all zeros" in out and "mean" in out, out
    ok = run("check", f"{f}::Linear", "--input-shape", "8,5")
    out = flat(ok)
    assert ok.returncode == 0 and "every gradient (dX, dW, db) matches" in out, out


def test_name_mangled_weights_pair_with_their_mangled_gradients_under_the_names_written(tmp_path):
    f = write(tmp_path, LINEAR)
    p = run("check", f"{f}::Mangled", "--input-shape", "6,4")
    out = flat(p)
    assert p.returncode == 1, out
    assert "protocol: attribute style (__W/__dW, __b/__db)" in out, out
    assert "FAIL: Mangled: gradient mismatch in dW." in out and "2 times the correct gradient" in out, out
    assert "_Mangled__" not in out, out
