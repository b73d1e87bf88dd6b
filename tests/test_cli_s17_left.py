"""Session 16's tester findings fixed in session 17 (left17), in-process and on small shapes: the float32 warning
printed once (finding 9), argparse's own message when its internals are missing (the "did you mean" helper), ..."""

import argparse

import pytest
from test_cli import both, run_here, student

F32 = """
import numpy as np

class F32:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
        self.dW = np.zeros_like(self.W)
    def forward(self, x):
        self.x = x
        return x @ self.W
    def backward(self, dY):
        self.dW = self.x.T @ dY
        return dY @ self.W.T
"""


def test_the_float32_warning_is_printed_once_under_the_students_name(tmp_path):
    """Finding 9: ``F32.W is float32`` then ``F32.params['W'] is float32``, the diagnosis's proxy hiding the
    attribute protocol from the name."""
    f = student(tmp_path, F32)
    p = run_here("check", f"{f}::F32", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert text.count("is float32; it is perturbed in place") == 1, text
    assert "F32.W is float32" in text and "params['W']" not in text, text
