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


@pytest.mark.parametrize("method", ["forward", "richardson"])
def test_another_method_with_loss_is_refused_not_ignored(tmp_path, method):
    """review24g: --loss --method forward (or richardson) ran central differences, exit 0 (check_loss has no method):
    an option accepted and not honoured. --method central, what runs, is still accepted."""
    f = student(tmp_path, TANH)
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "4,3", "--method", method)
    text = both(p)
    assert p.returncode == 2 and f"--method {method}" in text and "central differences" in text, text
    assert "PASS" not in text, text
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "4,3", "--method", "central")
    assert p.returncode == 0 and "PASS: MSE" in both(p), both(p)


def test_the_refusal_names_only_what_exists():
    """review24g: it pointed to check_loss(..., method='complex'), which raises TypeError (no such keyword)."""
    import inspect

    from gradcheck import check_layer, check_loss
    from gradcheck.cli import _refuse_method
    from gradcheck.errors import UsageError

    with pytest.raises(UsageError) as err:
        _refuse_method("complex")
    assert "check_layer(" in str(err.value) and "method" in inspect.signature(check_layer).parameters
    assert ("check_loss(..., method=" in str(err.value)) == ("method" in inspect.signature(check_loss).parameters)
