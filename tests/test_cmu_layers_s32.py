"""What tester32c found checking CMU 11-785 MyTorch (session 32): a BatchNorm whose dL/dvar has the power -1/2
for -3/2 named "lacks the gradient through the batch variance" (M2), ... Each check runs ``gradcheck.cli.main``
in this process (``test_cli.run_here``), the layer in its sandbox process; the layers are small ones written here
in MyTorch's style, not copies of its files."""

import re

from test_cli import both, run_here, student

#: a batch normalisation in MyTorch's style (BW/Bb, dLdBW/dLdBb, the variance path through dLdV and dLdM)
BN = """
import numpy as np
class BN:
    def __init__(self, C=3):
        self.BW = np.linspace(0.7, 1.4, C).reshape(1, C); self.Bb = np.linspace(-0.3, 0.2, C).reshape(1, C)
        self.eps = 1e-8
    def forward(self, Z, eval=False):
        self.Z, self.N = Z, Z.shape[0]
        self.M = Z.mean(axis=0, keepdims=True); self.V = Z.var(axis=0, keepdims=True)
        self.NZ = (Z - self.M) / np.sqrt(self.V + self.eps)
        return self.BW * self.NZ + self.Bb
    def backward(self, dLdBZ):
        self.dLdBW = np.sum(dLdBZ * self.NZ, axis=0, keepdims=True)
        self.dLdBb = np.sum(dLdBZ, axis=0, keepdims=True)
        dLdNZ = dLdBZ * self.BW
        dLdV = -0.5 * np.sum(dLdNZ * (self.Z - self.M) * (self.V + self.eps) ** (POWER), axis=0, keepdims=True)
        dLdM = -np.sum(dLdNZ / np.sqrt(self.V + self.eps), axis=0, keepdims=True) \\
            - 2 / self.N * dLdV * np.sum(self.Z - self.M, axis=0, keepdims=True)
        return (dLdNZ / np.sqrt(self.V + self.eps) + VARW * dLdV * 2 * (self.Z - self.M) / self.N
                + dLdM / self.N)
"""


def _bn(tmp_path, power, varw="1"):
    f = student(tmp_path, BN.replace("POWER", power).replace("VARW", varw), "bn.py")
    return run_here("check", f"{f}::BN", "--input-shape", "6,3", "--training", "--init",
                    '{"C": 3}', "--seed", "3")


def test_bn_variance_power_minus_half_is_named_not_missing(tmp_path):
    # tester32c M2: (V + eps)**(-1/2) where **(-3/2) is due was "dX lacks the gradient through the batch variance"
    p = _bn(tmp_path, "-3/2")
    assert p.returncode == 0, both(p)
    p = _bn(tmp_path, "-1/2")
    out = both(p)
    assert p.returncode == 1 and "FAIL: BN: gradient mismatch in dX." in out, out
    assert "lacks the gradient through" not in out, out
    assert "var + eps times its right size per feature" in out and "(var + eps)**(-3/2)" in out, out


def test_bn_variance_path_with_an_unknown_weight_gets_no_missing_path_name(tmp_path):
    # the same rule must not name a variance path that is there with some other per-feature weight
    p = _bn(tmp_path, "-3/2) * (1 + self.M ** 2")
    out = both(p)
    assert p.returncode == 1 and "FAIL: BN: gradient mismatch in dX." in out, out
    assert "lacks the gradient through" not in out and "var + eps times" not in out, out


def test_bn_variance_path_missing_is_still_named(tmp_path):
    # the missing path itself keeps its name
    p = _bn(tmp_path, "-3/2", "0")
    out = both(p)
    assert p.returncode == 1 and "lacks the gradient through the batch variance" in out, out
