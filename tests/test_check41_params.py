"""Session 41 (helper check41), verify40 M1: a forward that writes into its own weight gets one verdict naming it."""


import numpy as np
import pytest
from test_cli import run_here

from gradcheck import check_layer
from gradcheck.errors import InputModifiedError

SOURCE = '''
import numpy as np

class DecayInForward:
    """forward shrinks W in place (a weight decay in the wrong place); backward a plain linear."""
    def __init__(self):
        r = np.random.default_rng(0)
        self.W = r.standard_normal((5, 3)); self.b = r.standard_normal(3)
    def forward(self, X):
        self.W *= 0.9
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        self.dW = self.X.T @ dY; self.db = dY.sum(0)
        return dY @ self.W.T
'''


def test_forward_writing_its_weight_is_named_in_process():
    ns: dict = {}
    exec(compile(SOURCE, "mut.py", "exec"), ns)  # noqa: S102 - the layer under test
    with pytest.raises(InputModifiedError, match=r"DecayInForward\.forward.* modified its parameter W in place"):
        check_layer(ns["DecayInForward"](), np.random.default_rng(1).standard_normal((4, 5)), twin=None)


def test_forward_writing_its_weight_is_named_by_the_command(tmp_path):
    (tmp_path / "mut.py").write_text(SOURCE)
    out = run_here("check", f"{tmp_path / 'mut.py'}::DecayInForward", "--input-shape", "4,5")  # the layer sandboxed
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 1, text
    assert "modified its parameter W in place" in text and "forward modified W in place" in text
