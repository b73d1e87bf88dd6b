"""left30 leftover (session 31): a loss whose float32 comes only from ``--dtype``'s ``--init`` arrays (it computes in
their dtype: ``(y_pred - y_true).astype(self.w.dtype)``) had no float64 copy, so its central differences were
float32 noise and a correct loss FAILed under its own ``--dtype float32`` ("forward loses precision inside"). It is
now checked as such a layer is: its files as they are, given float64 ``--init`` arrays, its own float32 run compared."""

import pytest
from test_cli import both, run_here, student

WEIGHTED = """
import numpy as np


class WeightedMSE:
    def __init__(self, w):
        self.w = w

    def forward(self, y_pred, y_true):
        self.d = (y_pred - y_true).astype(self.w.dtype)
        return np.mean(self.w * self.d ** 2)

    def backward(self):
        return K * self.w * self.d / self.d.size
"""
ARGS = ("--loss", "--input-shape", "4,3", "--init", '{"w": [1.0, 2.0, 3.0]}', "--targets", "real",
        "--dtype", "float32")


def test_a_correct_loss_float32_by_its_init_arrays_passes_on_its_copy(tmp_path):
    """Was: exit 1, 'forward loses precision inside for a float64 input' (its own float32 noise)."""
    f = student(tmp_path, WEIGHTED.replace("K", "2"), "wl.py")
    p = run_here("check", f"{f}::WeightedMSE", *ARGS)
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert "PASS: WeightedMSE (its float32 code checked on a float64 copy: see the note)" in text, text
    assert ("no float32 dtype declared; the copy given float64 in place of --dtype float32's inputs and --init "
            "weights") in text, text
    assert "Its own float32 backward, run at the same y_pred, gives the copy's gradient" in text, text


@pytest.mark.parametrize("k", ["(4.0 if self.d.itemsize == 4 else 2.0)"])
def test_its_own_float32_branch_fails(tmp_path, k):
    f = student(tmp_path, WEIGHTED.replace("K", k), "wl.py")
    p = run_here("check", f"{f}::WeightedMSE", *ARGS)
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "FAIL: WeightedMSE: its own code gives another dy_pred than its float64 copy, which passed." in text, text
    assert "gives dy_pred 2 times its float64 copy's" in text, text
