"""fixv30g leftover (session 31): under ``--dtype float32`` a layer without parameters (an activation) whose backward
branches on its input's dtype was never run with float32 X: the check takes X in float64, and the comparison of the
code's own float32 run with its float64 copy was skipped for a layer with no weights to give, so a dX doubled only
for float32 X PASSed (exit 0). Its own float32 run is now compared, as a parametrised layer's is."""

import pytest
from test_cli import both, run_here, student

SQUARE = """
import numpy as np


class Square:
    def forward(self, X):
        self.X = X
        return X * X

    def backward(self, dY):
        return K * 2 * self.X * dY
"""


def _checked(tmp_path, k):
    """``gradcheck check act.py::Square --input-shape 4,3 --dtype float32`` of SQUARE with the factor ``k``: (exit
    code, its output on one line)."""
    f = student(tmp_path, SQUARE.replace("K", k), "act.py")
    p = run_here("check", f"{f}::Square", "--input-shape", "4,3", "--dtype", "float32")
    return p.returncode, " ".join(both(p).split())


@pytest.mark.parametrize("k", ["(2.0 if self.X.itemsize == 4 else 1.0)",
                               "(2.0 if str(self.X.dtype) == 'float32' else 1.0)"])
def test_a_float32_input_only_branch_of_an_activation_fails(tmp_path, k):
    """Was: exit 0, PASS: Square: every gradient (dX) matches."""
    rc, text = _checked(tmp_path, k)
    assert rc == 1 and "PASS" not in text and "FAIL: Square: wrong result of dX." in text, text
    assert "Square's own float32 code gives dX 2 times its float64 copy's on the same inputs" in text, text


def test_a_correct_activation_passes_with_its_own_float32_run_compared(tmp_path):
    rc, text = _checked(tmp_path, "1.0")
    assert rc == 0, text
    assert "Its own float32 backward, run on the same inputs and parameters, gives the copy's gradients" in text, text


def test_a_wrong_activation_keeps_its_own_diagnosis_without_a_copy(tmp_path):
    rc, text = _checked(tmp_path, "3.0")
    assert rc == 1 and "dX is 3 times the correct gradient" in text and "copy of its files" not in text, text
