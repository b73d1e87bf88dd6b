"""newuser23 M2: ``gradcheck check --method complex`` was accepted and run as central differences (the sandbox's pipe
carries real arrays only), exit 0, with --tape and --loss too: an option accepted and not honoured. Now refused,
exit 2, naming where it works (check_layer in Python), and --help says so."""

import pytest
from test_cli import both, run_here, student

TANH = """
import numpy as np
class Tanh:
    def __init__(self):
        self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        self.Y = np.tanh(X); return self.Y
    def backward(self, dY):
        return dY * (1 - self.Y**2)
class MSE:
    def forward(self, y_true, y_pred):
        self.d = y_pred - y_true; return float((self.d ** 2).mean())
    def backward(self):
        return 2 * self.d / self.d.size
"""


@pytest.mark.parametrize("extra", [[], ["--tape"], ["--mode", "full"]])
def test_method_complex_is_refused_with_exit_2(tmp_path, extra):
    f = student(tmp_path, TANH)
    p = run_here("check", f"{f}::Tanh", "--input-shape", "3,4", "--method", "complex", *extra)
    text = both(p)
    assert p.returncode == 2, text
    assert "--method complex is not available in gradcheck check" in text and "method='complex'" in text, text
    assert "PASS" not in text


def test_method_complex_with_loss_is_refused(tmp_path):
    f = student(tmp_path, TANH)
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "4,3", "--method", "complex")
    assert p.returncode == 2 and "--method complex is not available" in both(p), both(p)


def test_help_says_where_complex_works():
    p = run_here("check", "--help")
    assert "complex is refused here (exit 2)" in both(p) and "method='complex'" in both(p), both(p)


def test_other_methods_still_run(tmp_path):
    f = student(tmp_path, TANH)
    p = run_here("check", f"{f}::Tanh", "--input-shape", "3,4", "--method", "richardson")
    assert p.returncode == 0 and "PASS: Tanh" in both(p), both(p)
