"""`gradcheck check --loss` (session 14, tester14): an unnamed asymmetric loss whose order only backward decides
(y_true and y_pred of the same kind: a backward differentiating the wrong argument looked correct, exit 0; now a
usage error offering ``--pred-arg``, with which the bug is named), and a loss with a log eps whose verdict depended
on the seed (now the same verdict and note on every seed). Each test fails on the code before its fix.
"""

import pytest
from test_cli import both, run, run_here, student

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
    through = run if backward == WRONG_ARG else run_here  # one case through the console script, the rest in-process
    p = through("check", f"{f}::{cls}", *PROBS)
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
    p = run_here("check", f"{f}::{cls}", *PROBS, "--pred-arg", arg)
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
    p = run_here("check", f"{f}::CE", "--loss", "--input-shape", "6,4", "--targets", "labels")
    out = both(p)
    assert p.returncode == code, out
    assert ("forward(a=y_pred, b=y_true)" if first == "True" else "forward(a=y_true, b=y_pred)") in out, out


# ------------------------------------------------------- finding 2: a log eps, the same verdict on every seed
DLFS = """
import numpy as np
def softmax(x):
    x = x - np.max(x, axis=-1, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)
def cross_entropy_error(y, t):
    if y.ndim == 1:
        t = t.reshape(1, t.size); y = y.reshape(1, y.size)
    if t.size == y.size:
        t = t.argmax(axis=1)
    batch_size = y.shape[0]
    return -np.sum(np.log(y[np.arange(batch_size), t] + 1e-7)) / batch_size
class SoftmaxWithLoss:
    def __init__(self):
        self.loss = None; self.y = None; self.t = None
    def forward(self, x, t):
        self.t = t; self.y = softmax(x)
        self.loss = cross_entropy_error(self.y, self.t)
        return self.loss
    def backward(self, dout=1):
        batch_size = self.t.shape[0]
        if self.t.size == self.y.size:
            dx = (self.y - self.t) / batch_size
        else:
            dx = self.y.copy(); dx[np.arange(batch_size), self.t] -= 1; dx = dx / batch_size
        return FACTOR * dx * dout
class WithEps(SoftmaxWithLoss):
    '''backward is the derivative of the loss as written, log(y + 1e-7)'''
    def backward(self, dout=1):
        n, k = self.y.shape
        yt = self.y[np.arange(n), self.t]
        w = yt / (yt + 1e-7)
        dx = self.y * w[:, None]; dx[np.arange(n), self.t] -= w
        return FACTOR * dx / n * dout
"""
NOTE_FREE = ("NOTE: backward is the derivative of the loss without its 1e-07 (forward's log(y + 1e-07) read as "
             "log(y), the convention of Deep Learning from Scratch")
NOTE_AS_WRITTEN = ("NOTE: backward is the derivative of the loss as written, with forward's 1e-07 inside a log (in a "
                   "function it calls) and backward's 1e-07 in a denominator")  # session 16: whose eps, where


def _seeds(tmp_path, cls, factor):
    f = student(tmp_path, DLFS.replace("FACTOR", factor), "dlfs.py")
    for seed in range(6):
        p = run_here("check", f"{f}::{cls}", "--loss", "--input-shape", "6,4", "--targets", "labels", "--seed",
                     str(seed))
        yield seed, p.returncode, " ".join(both(p).split())


@pytest.mark.parametrize(("cls", "note", "other"), [("SoftmaxWithLoss", NOTE_FREE, NOTE_AS_WRITTEN),
                                                    ("WithEps", NOTE_AS_WRITTEN, NOTE_FREE)])
def test_loss_with_a_log_eps_has_one_verdict_and_note_on_every_seed(tmp_path, cls, note, other):
    """Before: the book's SoftmaxWithLoss exited 1 on seeds 0 and 3 ("expected from such an eps, not a bug"), 0 on
    seeds 1, 2, 4. Now it passes on every seed, and the note says which loss backward is the derivative of."""
    for seed, code, out in _seeds(tmp_path, cls, "1"):
        assert code == 0, (seed, out)
        assert note in out and other not in out and f"PASS: {cls}" in out, (seed, out)
        assert "with the eps the difference is at most a relative" in out or "without the eps the difference" \
            in out, (seed, out)


@pytest.mark.parametrize("factor", ["-1", "2"])
def test_a_bug_beside_the_log_eps_fails_on_every_seed(tmp_path, factor):
    for seed, code, out in _seeds(tmp_path, "SoftmaxWithLoss", factor):
        assert code == 1, (seed, out)
        assert "NOTE: backward is the derivative" not in out and "FAIL: SoftmaxWithLoss" in out, (seed, out)
        assert ("wrong sign" in out) if factor == "-1" else ("2 times" in out), (seed, out)
