"""Findings of session 17's new-user tester (fixer fixt17), in-process and on small shapes: a zero bias with a
keepdims db (M1), ...."""

from test_cli import both, run_here, student

BIAS = """
import numpy as np

class BiasKeepdims:
    def __init__(self):
        self.b = np.zeros(5)
    def forward(self, X):
        return X + self.b
    def backward(self, dY):
        self.db = dY.sum(0, keepdims=True)
        return dY
"""


def test_zero_bias_keepdims_is_diagnosed(tmp_path):
    """M1: a zero bias makes forward the identity, and the keepdims db's shape error was taken for a Dropout's
    eval backward raising: every mode set aside, then IndexError in ``_diagnose_modes``."""
    f = student(tmp_path, BIAS)
    p = run_here("check", f"{f}::BiasKeepdims", "--input-shape", "4,5")
    text = both(p)
    assert p.returncode == 1, text
    assert "Traceback" not in text
    assert "db has shape (1, 5), expected (5,)" in text and "keepdims" in text
