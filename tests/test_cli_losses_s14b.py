"""`gradcheck check --loss` (session 14, tester14): an unnamed asymmetric loss whose order only backward decides
(y_true and y_pred of the same kind: a backward differentiating the wrong argument looked correct, exit 0; now a
usage error offering ``--pred-arg``, with which the bug is named), and a loss with a log eps whose verdict depended
on the seed (now the same verdict and note on every seed). Each test fails on the code before its fix.
"""

import pytest
from test_cli import both, run, student

CE_PQ = """
import numpy as np
class CE:
    '''L = -mean_n sum_k q log p; p = predicted probabilities, q = target probabilities'''
    def forward(self, p, q):
        self.p, self.q = p, q
        return -np.sum(q * np.log(p)) / p.shape[0]
    def backward(self):
        return BACKWARD
"""
RIGHT, WRONG_ARG = "-self.q / self.p / self.p.shape[0]", "-np.log(self.p) / self.p.shape[0]"
KL = """
import numpy as np
class KL:
    def forward(self, a, b):
        self.a, self.b = a, b
        return np.sum(a * np.log(a / b)) / a.shape[0]
    def backward(self):
        return BACKWARD
"""
KL_RIGHT, KL_WRONG_ARG = "(np.log(self.a / self.b) + 1) / self.a.shape[0]", "-self.a / self.b / self.a.shape[0]"
PROBS = ["--loss", "--input-shape", "6,4", "--pred", "probs", "--targets", "probs"]


@pytest.mark.parametrize(("src", "backward", "matched", "other"), [
    (CE_PQ, WRONG_ARG, "q", "p"), (CE_PQ, RIGHT, "p", "q"), (KL, KL_WRONG_ARG, "b", "a"), (KL, KL_RIGHT, "a", "b")])
def test_order_told_only_by_backward_is_a_usage_error(tmp_path, src, backward, matched, other):
    """Before: exit 0, "q is the prediction", read from backward itself: a gradient with respect to the wrong
    argument could never fail. The correct loss is the same usage error: the numbers cannot tell the two apart."""
    f = student(tmp_path, src.replace("BACKWARD", backward), "lo.py")
    cls = "CE" if src is CE_PQ else "KL"
    p = run("check", f"{f}::{cls}", *PROBS)
    out = both(p)
    assert p.returncode == 2, out
    assert "usage error (exit 2)" in out and "PASS" not in out, out
    assert f"backward matches dL/d{matched}" in out, out
    assert (f"a correct loss with {matched} as the prediction and a loss whose backward differentiates the wrong "
            f"argument ({other} the prediction) look the same") in out, out
    assert f"--pred-arg {matched}" in out and f"--pred-arg {other}" in out, out


@pytest.mark.parametrize(("src", "backward", "arg", "target", "code"), [
    (CE_PQ, WRONG_ARG, "p", "q", 1), (CE_PQ, RIGHT, "p", "q", 0), (KL, KL_WRONG_ARG, "a", "b", 1),
    (KL, KL_RIGHT, "a", "b", 0)])
def test_pred_arg_names_a_gradient_for_the_target(tmp_path, src, backward, arg, target, code):
    f = student(tmp_path, src.replace("BACKWARD", backward), "lo.py")
    cls = "CE" if src is CE_PQ else "KL"
    p = run("check", f"{f}::{cls}", *PROBS, "--pred-arg", arg)
    out = both(p)
    assert p.returncode == code, out
    assert f"the prediction goes to {arg}, as --pred-arg says" in out, out
    if code:
        assert f"backward returns dL/d{target}, the gradient for the target" in out, out
    else:
        assert f"PASS: {cls}" in out, out


CE_LABELS = """
import numpy as np
class CE:
    def forward(self, a, b):
        A, B = (a, b) if PRED_FIRST else (b, a)
        z = A - A.max(axis=1, keepdims=True)
        self.s = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True); self.t = B
        return -np.mean(np.log(self.s[np.arange(len(B)), B]))
    def backward(self):
        d = self.s.copy(); d[np.arange(len(self.t)), self.t] -= 1
        return FACTOR * d / len(self.t)
"""


@pytest.mark.parametrize(("first", "factor", "code"), [("True", "1", 0), ("False", "1", 0), ("True", "-1", 1),
                                                       ("False", "2", 1)])
def test_unnamed_loss_with_labels_is_still_ordered_by_the_data(tmp_path, first, factor, code):
    """Integer labels decide the order (backward has the prediction's shape): nothing changes for them."""
    f = student(tmp_path, CE_LABELS.replace("PRED_FIRST", first).replace("FACTOR", factor), "ce.py")
    p = run("check", f"{f}::CE", "--loss", "--input-shape", "6,4", "--targets", "labels")
    out = both(p)
    assert p.returncode == code, out
    assert ("forward(a=y_pred, b=y_true)" if first == "True" else "forward(a=y_true, b=y_pred)") in out, out

