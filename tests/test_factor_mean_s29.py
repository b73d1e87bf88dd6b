"""tester28s (session 28, left): Raschka's NeuralNetMLP checked with the loss the book reports, ``np.mean`` over
every entry of (batch, classes), where its backward divides by the batch alone: every gradient is C = 3 times the
loss's, and the diagnosis said "3 is self.C (self.C = 3), a setting forward applies: ... apply self.C in backward as
forward does" (``factor-attribute``). Forward's source now tells it: the mean's count is the factor
(``factor-mean``, :func:`gradcheck.diagnose._whole_mean`)."""

from test_cli import both, run_here, student

from gradcheck.diagnose import DIAGNOSES

MODEL = """
import numpy as np


class Model:
    def __init__(self, num_features=6, num_classes=3):
        self.C = num_classes
        self.params = {"W": np.random.default_rng(0).normal(0, 0.5, (num_features, num_classes))}
        self.grads = {}

    def forward(self, x, t):
        self.x, self.onehot = x, np.eye(self.C)[t]
        self.a = 1 / (1 + np.exp(-(x @ self.params["W"])))
        return LOSS

    def backward(self, dout=1):
        d_z = 2 * (self.a - self.onehot) / self.x.shape[0] * self.a * (1 - self.a)  # divides by the batch's N
        self.grads["W"] = self.x.T @ d_z * dout
        return d_z @ self.params["W"].T * dout
"""


def _check(tmp_path, loss):
    f = student(tmp_path, MODEL.replace("LOSS", loss))
    p = run_here("check", f"{f}::Model", "--input-shape", "4,6", "--targets", "labels:3")
    return p.returncode, " ".join(both(p).split())


def test_a_mean_over_batch_and_classes_is_named_as_the_factor(tmp_path):
    code, out = _check(tmp_path, "np.mean((self.onehot - self.a) ** 2)")
    assert code == 1 and "FAIL: Model: gradient mismatch in dX, dW." in out, out
    assert ("dX and dW are 3 times the correct gradient, and 3 is self.C (self.C = 3): forward averages over a whole "
            "array (line 14: return np.mean((self.onehot - self.a) ** 2)), dividing by every entry it holds, so "
            "backward divides by 3 times fewer entries than that mean") in out, out
    assert "a setting forward applies" not in out, out
    assert DIAGNOSES["factor-mean"].name == "mean's count missed"


def test_the_loss_backward_differentiates_passes(tmp_path):
    """The loss the backward is written for (sum over classes, mean over the batch): PASS."""
    code, out = _check(tmp_path, "np.sum((self.onehot - self.a) ** 2) / self.x.shape[0]")
    assert code == 0 and "PASS: Model" in out, out
