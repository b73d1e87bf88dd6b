"""`gradcheck check --loss` (session 16, issue 10 leftovers): the header never calls a factor of 1 a bug (tester15b
M2); the eps NOTE names only the loss's own constants, says "its" only for a forward with one and "in a denominator"
only where there is one (tester15b M1); an eps larger than the tolerance is not read as 0 (FAIL, named); a backward
whose eps differs from forward's is named (tester15b L3). Each test fails on the code before its fix."""

import json

import numpy as np
from test_cli import both, run_here, student

from gradcheck import _adapters


class _NearlyKL:
    """KL(a || b) with backward 1.003 times dL/da: the directional test fails (relative 1.5e-3), the factor fits."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return np.sum(a * np.log(a / b)) / a.shape[0]

    def backward(self):
        return 1.003 * (np.log(self.a / self.b) + 1) / self.a.shape[0]


def test_a_factor_of_one_is_never_called_a_bug():
    """Before: "backward's result is 1 times the central differences of L with respect to a (a sign or a constant
    factor wrong)"."""
    rng = np.random.default_rng(0)
    p, q = rng.uniform(0.1, 0.9, (6, 4)), rng.uniform(0.1, 0.9, (6, 4))
    why = _adapters.BoundLoss(_NearlyKL(), (q, p), None).info["by_role"]
    assert "close to the central differences of L with respect to a (a factor of 1.003: no sign or factor" in why, why
    assert "1 times" not in why and "constant factor wrong" not in why, why


CE = """
import numpy as np
class CE:
    def forward(self, y_pred, y_true):
        self.p, self.t = y_pred, y_true
        return -np.sum(y_true * np.log(FWD)) / y_pred.shape[0]
    def backward(self):
        return -self.t / (self.p + BWD) / self.p.shape[0]
class Other:
    '''another class's eps, in a denominator: not the checked loss's'''
    def forward(self, y_pred, y_true):
        return -np.sum(y_true * np.log(y_pred + 1e-3))
    def backward(self):
        return 1 / (self.p + 1e-10)
"""
PROBS = ["--loss", "--input-shape", "6,4", "--pred", "probs", "--targets", "onehot"]


def _ce(tmp_path, fwd, bwd):
    return student(tmp_path, CE.replace("FWD", fwd).replace("BWD", bwd), "ce.py")


def test_a_float_guard_in_backward_alone_is_not_called_forward_s(tmp_path):
    """M1: before, "the derivative of the loss without its 1e-07" for a forward with no eps."""
    p = run_here("check", f"{_ce(tmp_path, 'y_pred', '1e-7')}::CE", *PROBS, "--json", tmp_path / "o.json")
    out = both(p)
    assert p.returncode == 0 and "PASS: CE" in out, out
    assert ("NOTE: backward is the derivative of the loss forward computes, which has no eps (backward's 1e-07 in a "
            "denominator, read as 0)") in out and "without its" not in out and "0.001" not in out, out
    got = json.loads((tmp_path / "o.json").read_text())["log_eps"]
    assert got["constants"] == [1e-7] and got["in"] == ["backward"], got


def test_an_eps_above_the_tolerance_fails_named(tmp_path):
    """The 1e-3 case (tester15b M1): before, PASS with the NOTE "read as 0"; the 1e-3 moves the gradient by a
    relative 1.3e-2 here."""
    p = run_here("check", f"{_ce(tmp_path, 'y_pred', '1e-3')}::CE", *PROBS, "--json", tmp_path / "o.json")
    out = both(p)
    assert p.returncode == 1 and "FAIL: CE" in out and "NOTE" not in out, out
    assert ("diagnosis: dy_pred differs from the derivative of the loss only by the eps 0.001 (backward's 0.001 in a "
            "denominator)") in out and "larger than the check's tolerance (rtol 1e-06)" in out, out
    assert "moves the gradient by up to a relative 0.013 here" in out and "forward has no eps: backward adds one" in out
    got = json.loads((tmp_path / "o.json").read_text())
    assert got["diagnosis"]["code"] == "large-eps" and got["log_eps"]["constants"] == [0.001], got["log_eps"]
    # --rtol above the eps: the same 1e-3 is a guard again, read as 0 (the rule is the tolerance's)
    p = run_here("check", f"{_ce(tmp_path, 'y_pred', '1e-3')}::CE", *PROBS, "--rtol", "1e-2")
    assert p.returncode == 0 and "NOTE: backward is the derivative of the loss forward computes" in both(p), both(p)


def test_backward_eps_differing_from_forward_s_is_named(tmp_path):
    """tester15b L3: forward log(p + 1e-7), backward 1/(p + 1e-2): before, FAIL with no diagnosis line."""
    p = run_here("check", f"{_ce(tmp_path, 'y_pred + 1e-7', '1e-2')}::CE", *PROBS)
    out = both(p)
    assert p.returncode == 1 and "(forward's 1e-07 inside a log and backward's 0.01 in a denominator)" in out, out
    assert "forward's eps (1e-07) and backward's (0.01) differ" in out and "0.001" not in out, out


def test_svm_loss_pair_names_the_margin_count(tmp_path):
    """tester15 L3 (svm_minus1): CS231n's svm_loss with dx[y] -= 1: before, FAIL and no diagnosis line at all."""
    f = student(tmp_path, """
        import numpy as np
        def svm_loss(x, y):
            N = x.shape[0]
            correct = x[np.arange(N), y][:, None]
            margins = np.maximum(0, x - correct + 1.0)
            margins[np.arange(N), y] = 0
            loss = margins.sum() / N
            dx = (margins > 0).astype(float)
            dx[np.arange(N), y] -= 1
            return loss, dx / N
        """, "cs.py")
    p = run_here("check", f"{f}::svm_loss", "--loss", "--input-shape", "4,5", "--targets", "labels")
    out = both(p)
    assert p.returncode == 1 and "diagnosis: dx at the correct class" in out, out
    assert "it subtracts 1 (times the scale) in every row, not the count" in out, out


def test_pred_arg_names_the_labels_gradient(tmp_path):
    """tester15b LOW: with --pred-arg a, a BCE on logits whose backward differentiates the 0/1 labels b FAILed with no
    diagnosis."""
    f = student(tmp_path, """
        import numpy as np
        class BCE:
            def forward(self, a, b):
                self.s, self.y = 1 / (1 + np.exp(-a)), b
                return -np.mean(b * np.log(self.s) + (1 - b) * np.log(1 - self.s))
            def backward(self):
                return -(np.log(self.s) - np.log(1 - self.s)) / self.s.size
        """, "bce.py")
    p = run_here("check", f"{f}::BCE", "--loss", "--input-shape", "8,1", "--targets", "labels:2", "--pred-arg", "a")
    out = both(p)
    assert p.returncode == 1 and "diagnosis: dy_pred is not dL/da: backward returns dL/db" in out, out
