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
    def __init__(self, num_features=3):
        C = num_features
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
                    '{"num_features": 3}', "--seed", "3")


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


def _suggested(out):
    """The ``--reference manualprop.X`` a PASS suggests, or None."""
    m = re.search(r"--reference (manualprop\.\w+)", out.replace("\n", " "))
    return m and m.group(1)


def test_the_suggested_reference_runs_on_mytorch_parameter_names(tmp_path):
    # tester32c M3: PASS said 'pass --reference manualprop.BatchNorm1D'; doing so was a usage error ("The reference
    # BatchNorm1D has parameters ['beta', 'gamma'] but BN has ['BW', 'Bb']"); the names map by role now, said
    f = student(tmp_path, BN.replace("POWER", "-3/2").replace("VARW", "1").replace("class BN", "class BatchNorm1d"),
                "bn.py")
    args = ("check", f"{f}::BatchNorm1d", "--input-shape", "6,3", "--training", "--init", '{"num_features": 3}')
    p = run_here(*args)
    ref = _suggested(both(p))
    assert p.returncode == 0 and ref == "manualprop.BatchNorm1D", both(p)
    p = run_here(*args, "--reference", ref)
    out = both(p)
    assert p.returncode == 0 and "PASS: BatchNorm1d: every gradient (dX, dBW, dBb) and the forward output" in out, out
    assert "BW as gamma, Bb as beta" in out, out


#: a layer holding its weights in a sub-layer (MyTorch's Conv2d: conv2d_stride1.W), MyTorch's dLdW names
WRAP = """
import numpy as np
class Dense:
    def __init__(self):
        self.W = np.linspace(-1, 1, 12).reshape(3, 4); self.b = np.linspace(0, 0.3, 3).reshape(1, 3)
    def forward(self, A): self.A = A; return A @ self.W.T + self.b
    def backward(self, dLdZ):
        self.dLdW = dLdZ.T @ self.A; self.dLdb = dLdZ.sum(axis=0, keepdims=True); return dLdZ @ self.W
class Linear:
    def __init__(self): self.dense = Dense()
    def forward(self, A): return self.dense.forward(A)
    def backward(self, dLdZ): return self.dense.backward(dLdZ)
"""


def test_a_sub_layers_parameters_map_to_the_references(tmp_path):
    # tester32c M3: Conv2d's conv2d_stride1.W was not matched to the reference's W
    f = student(tmp_path, WRAP, "lin.py")
    args = ("check", f"{f}::Linear", "--input-shape", "5,4")
    p = run_here(*args)
    ref = _suggested(both(p))
    assert p.returncode == 0 and ref == "manualprop.Linear", both(p)
    p = run_here(*args, "--reference", ref, "--reference-init", '{"in_features": 4, "out_features": 3}')
    out = both(p)
    assert p.returncode == 0 and "and the forward output match" in out and "dense.W as W, dense.b as b" in out, out


#: MyTorch-style losses: a mean over all N*C squared errors, a softmax cross-entropy of one-hot targets
LOSSES = """
import numpy as np
class MSELoss:
    def forward(self, A, Y):
        self.A, self.Y = A, Y; return np.sum((A - Y) ** 2) / A.size
    def backward(self): return 2 * (self.A - self.Y) / self.A.size
class CrossEntropyLoss:
    def forward(self, A, Y):
        e = np.exp(A - A.max(axis=1, keepdims=True)); self.p = e / e.sum(axis=1, keepdims=True); self.Y = Y
        return -np.sum(Y * np.log(self.p)) / len(A)
    def backward(self): return (self.p - self.Y) / len(self.p)
"""


def test_a_loss_pass_suggests_the_manualprop_loss_that_computes_it(tmp_path):
    # tester32c L1: MSELoss and CrossEntropyLoss were told 'e.g. manualprop.MulticlassHinge'; the class giving
    # the same L is found by its value, and the command runs as printed
    f = student(tmp_path, LOSSES, "loss.py")
    for cls, more, twin in [("MSELoss", (), "MeanSquaredError"),
                            ("CrossEntropyLoss", ("--targets", "onehot"), "SoftmaxCrossEntropy")]:
        args = ("check", f"{f}::{cls}", "--input-shape", "4,3", "--loss", *more)
        p = run_here(*args)
        out = both(p)
        assert p.returncode == 0 and "MulticlassHinge" not in out and _suggested(out) == f"manualprop.{twin}", out
        p = run_here(*args, "--reference", _suggested(out))
        assert p.returncode == 0 and f"PASS: {cls}: dL/dy_pred and L match" in both(p), both(p)


#: an RNN cell with CMU HW3P1's backward signature: backward(delta, h_t, h_prev_l, h_prev_t)
CELL = """
import numpy as np
class RNNCell:
    def __init__(self, input_size, hidden_size):
        self.W_ih = np.linspace(-1, 1, hidden_size * input_size).reshape(hidden_size, input_size)
        self.W_hh = np.linspace(-0.5, 0.7, hidden_size * hidden_size).reshape(hidden_size, hidden_size)
        self.b_ih = np.zeros(hidden_size); self.b_hh = np.zeros(hidden_size)
    def forward(self, x, h_prev_t):
        return np.tanh(x @ self.W_ih.T + self.b_ih + h_prev_t @ self.W_hh.T + self.b_hh)
    def backward(self, delta, h_t, h_prev_l, h_prev_t):
        dz = delta * (1 - h_t ** 2)
        self.dW_ih = dz.T @ h_prev_l; self.dW_hh = dz.T @ h_prev_t
        self.db_ih = dz.sum(axis=0); self.db_hh = dz.sum(axis=0)
        return dz @ self.W_ih, dz @ self.W_hh
"""


def test_a_backward_wanting_forwards_values_gets_the_convention_and_a_wrapper(tmp_path):
    # tester32c M1: HW3P1's RNNCell.backward(delta, h_t, h_prev_l, h_prev_t) was refused with a bare TypeError
    f = student(tmp_path, CELL, "rnn_cell.py")
    p = run_here("check", f"{f}::RNNCell", "--input-shape", "4,5;4,3", "--init", '{"input_size": 5, "hidden_size": 3}')
    out = " ".join(both(p).split())
    assert p.returncode == 3 and "missing 3 required positional arguments" in out, out
    assert "backward takes more than dY (h_t, h_prev_l, h_prev_t)" in out, out
    assert "return self.cell.backward(dh_t, self.h_t, self.x, self.h)" in out, out
