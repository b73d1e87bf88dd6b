"""Session 12 (store12): where students keep weights and gradients, read as they wrote them (Z11, NoBias, Y23, Y25,
Y6, Y12, Y16, Z15); the planted bugs are also in tests/buggy_layers/styles.py."""

import pytest
from test_cli import both, run, student

SWAP = """
import numpy as np

class Scale:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.gamma, self.beta = rng.standard_normal(3), rng.standard_normal(3)
    def forward(self, X):
        self.X = X
        return X * self.gamma + self.beta
    def backward(self, dY):
        self.dbeta, self.dgamma = (self.X * dY).sum(0), dY.sum(0)
        return dY * self.gamma
"""


def test_a_swap_in_attributes_is_named_by_the_students_attributes(tmp_path):
    """Z11: the diagnosis said grads['gamma'] = dgamma where the student wrote self.dgamma."""
    p = run("check", f"{student(tmp_path, SWAP, 'z11.py')}::Scale", "--input-shape", "6,3")
    out = both(p)
    assert p.returncode == 1, out
    assert "self.dgamma holds the gradient of beta and vice versa" in out, out
    assert "self.dgamma = dgamma, self.dbeta = dbeta" in out and "grads[" not in out, out


VALUE = """
import numpy as np

class Tensor:
    def __init__(self, v):
        self.VAL, self.GRAD = v, np.zeros_like(v)

class Dense:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = Tensor(rng.standard_normal((5, 3))), Tensor(rng.standard_normal(3))
    def forward(self, X):
        self.X = X
        return X @ self.W.VAL + self.b.VAL
    def backward(self, dY):
        self.W.GRAD = BUG * self.X.T @ dY
        self.b.GRAD = dY.sum(0)
        return dY @ self.W.VAL.T
"""


@pytest.mark.parametrize("val, grad", [("value", "gradient"), ("data", "grad"), ("data", "gradient"),
                                       ("value", "grad")])
@pytest.mark.parametrize("bug", [1, 2])
def test_a_tensor_objects_value_and_gradient_are_the_weight_and_its_gradient(tmp_path, val, grad, bug):
    """Y25 (wrong PASS): W.value with W.gradient was "without gradients", dX alone checked: a x2 dW passed."""
    body = VALUE.replace("VAL", val).replace("GRAD", grad).replace("BUG", str(bug))
    p = run("check", f"{student(tmp_path, body, f'y25_{val}_{grad}_{bug}.py')}::Dense", "--input-shape", "6,5")
    out = both(p)
    assert "without gradients" not in out, out
    if bug == 1:
        assert p.returncode == 0 and "PASS: Dense: every gradient (dX, dW, db) matches" in out, out
    else:
        assert p.returncode == 1 and "FAIL: Dense: gradient mismatch in dW" in out and "2 times" in out, out
