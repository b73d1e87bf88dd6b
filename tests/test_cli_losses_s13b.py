"""`gradcheck check --loss` (session 13, tester13 H5, H6, M2, M3, L2): Neural Networks from Scratch's combined
softmax and cross-entropy (backward(self.output, y_true) -> self.dinputs, dL/dinputs), a symmetric unnamed loss
``forward(a, b)`` of ``a - b`` (whose order only the user can tell: a usage error, or ``--pred-arg NAME``), the
log-eps advice (an rtol the CLI accepts, or none), a real bug in a model with the eps at high confidence, and the
NNFS usage error quoting the student's own argument order. Each test fails on the code before its fix. The
advised --rtol runs the console script, the rest its ``gradcheck.cli.main`` in this process (``test_cli.run_here``).
"""

import re

import pytest
from nnfs_book import NNFS_LOSS, SAMPLES, book_source
from test_cli import both, run, run_here, student

MSE_AB = """
import numpy as np
class MSE:
    def forward(self, a, b):
        self.a, self.b = a, b
        return np.mean((a - b) ** 2)
    def backward(self):
        return SIGN * 2 * (self.a - self.b) / self.a.size
"""


@pytest.mark.parametrize("sign", ["1", "-1"])
def test_symmetric_unnamed_loss_is_a_usage_error_naming_the_ways_out(tmp_path, sign):
    """Before: exit 0 with a WARNING: MSE(a, b) and sign-flipped MSE with the other order give the same numbers."""
    f = student(tmp_path, MSE_AB.replace("SIGN", sign), "mse.py")
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "5,3")
    out = both(p)
    assert p.returncode == 2, out
    assert "usage error (exit 2)" in out, out
    assert "dL/da = -dL/db" in out and "only you can tell" in out, out
    assert "--pred-arg a" in out and "--pred-arg b" in out and "(y_pred, y_true)" in out, out


@pytest.mark.parametrize(("sign", "arg", "code"), [("1", "a", 0), ("-1", "b", 0), ("-1", "a", 1), ("1", "b", 1)])
def test_pred_arg_binds_the_prediction_and_a_sign_bug_fails(tmp_path, sign, arg, code):
    f = student(tmp_path, MSE_AB.replace("SIGN", sign), "mse.py")
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "5,3", "--pred-arg", arg)
    out = both(p)
    assert p.returncode == code, out
    assert f"the prediction goes to {arg}, as --pred-arg says" in out, out
    assert "WARNING: L depends on" not in out, out
    if code:
        assert "FAIL: MSE: gradient mismatch in dy_pred." in out, out
        assert "sign" in out.split("FAIL: MSE")[1], out


def test_pred_arg_must_name_an_argument_of_forward(tmp_path):
    f = student(tmp_path, MSE_AB.replace("SIGN", "1"), "mse.py")
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "5,3", "--pred-arg", "y_hat")
    out = both(p)
    assert p.returncode == 2, out
    assert "--pred-arg y_hat" in out and "forward(self, a, b)" in out, out


def test_pred_arg_without_loss_is_a_usage_error(tmp_path):
    f = student(tmp_path, MSE_AB.replace("SIGN", "1"), "mse.py")
    p = run_here("check", f"{f}::MSE", "--input-shape", "5,3", "--pred-arg", "a")
    assert p.returncode == 2 and "--pred-arg" in both(p), both(p)


#: Ch10-17's combined class (its forward runs the softmax and the loss) around the book's own backward (Ch22's)
NNFS_COMBINED = NNFS_LOSS.replace("SAMPLES", "samples") + """

class Activation_Softmax:
    def forward(self, inputs):
        exp_values = np.exp(inputs - np.max(inputs, axis=1, keepdims=True))
        self.output = exp_values / np.sum(exp_values, axis=1, keepdims=True)


class Activation_Softmax_Loss_CategoricalCrossentropy:
    def __init__(self):
        self.activation = Activation_Softmax()
        self.loss = Loss_CategoricalCrossentropy()

    def forward(self, inputs, y_true):
        self.activation.forward(inputs)
        self.output = self.activation.output
        return self.loss.calculate(self.output, y_true)

""" + book_source("Activation_Softmax_Loss_CategoricalCrossentropy", "backward", SAMPLES)


@pytest.mark.parametrize(("samples", "code"), [("samples", 0), ("1", 1)])
def test_nnfs_combined_softmax_loss_backward_gets_its_own_output(tmp_path, samples, code):
    """Before: FAIL with no diagnosis: backward(dvalues, y_true) was given the logits, not the softmax output."""
    f = student(tmp_path, NNFS_COMBINED.replace("SAMPLES", samples), "combined.py")
    p = run_here("check", f"{f}::Activation_Softmax_Loss_CategoricalCrossentropy", "--loss", "--input-shape", "8,3",
            "--targets", "labels:3")
    out = both(p)
    assert p.returncode == code, out
    assert "backward(dvalues=self.output, y_true=y_true)" in out, out
    assert "the layer's own output" in out, out
    if code:
        assert "a 1/batch is missing" in out, out


def test_nnfs_usage_error_quotes_the_students_own_signature(tmp_path):
    """Before: "Loss_CategoricalCrossentropy.forward(y_true, y_pred) gave L containing ... nan", the checker's
    internal order, while the student wrote forward(self, y_pred, y_true)."""
    f = student(tmp_path, NNFS_LOSS.replace("SAMPLES", "samples"), "nnfs_loss.py")
    p = run_here("check", f"{f}::Loss_CategoricalCrossentropy", "--loss", "--input-shape", "5,3")
    out = both(p)
    assert p.returncode == 2, out
    assert "Loss_CategoricalCrossentropy.forward(self, y_pred, y_true) gave L containing" in out, out
    assert "forward(y_true, y_pred)" not in out, out


def _dlfs2(tmp_path, scale, eps, *extra):
    from test_cli_losses_s13 import DLFS2

    src = DLFS2.replace("EPS", eps).replace("rng.normal(size=(hidden_size, output_size))",
                                            f"{scale} * rng.normal(size=(hidden_size, output_size))")
    f = student(tmp_path, src, "two_layer_net.py")
    p = run_here("check", f"{f}::TwoLayerNet", "--input-shape", "5,4", "--targets", "labels:3", *extra)
    return p, both(p), f


def test_log_eps_rtol_advice_is_accepted_and_passes(tmp_path):
    """The advised --rtol, run: the CLI takes it and the model PASSes with it. Since session 25 (tester25s M5) the
    model PASSes without it, the eps read as 0 with a note, and the advice is the named FAIL's of a check with a
    twin or reference (:func:`gradcheck._log_eps.name_removed_eps`); --rtol 1e-5 still passes as written."""
    p, out, f = _dlfs2(tmp_path, "1", " + 1e-7")
    assert p.returncode == 0 and "inside a log" in out and "which is no bug" in out, out
    p2 = run("check", f"{f}::TwoLayerNet", "--input-shape", "5,4", "--targets", "labels:3", "--rtol", "1e-5")
    assert p2.returncode == 0, both(p2)  # the console


def test_log_eps_at_high_confidence_advises_no_rtol_the_cli_rejects(tmp_path):
    """Before: "--rtol 1e+01 accepts it", which the CLI rejects (rtol must be in (0, 1)). Since session 25 a PASS
    whose note says how large the eps's effect is at these probabilities (no --rtol advised)."""
    p, out, _ = _dlfs2(tmp_path, "30", " + 1e-7")
    assert p.returncode == 0 and "inside a log" in out, out
    said = out.replace("\n", " ")
    assert "accepts it" not in said and "--rtol 1e+" not in said, out
    e = float(re.search(r"as written the difference is at most a relative (\S+) here", said).group(1))
    assert e > 1e-6, out  # the eps's effect at these probabilities, beyond the tolerance, said


def test_real_bug_with_log_eps_at_high_confidence_is_named_from_the_eps_free_copy(tmp_path):
    """Before: "no known bug pattern": the eps hid the factor N; the eps-free copy shows it."""
    p, out, _ = _dlfs2(tmp_path, "30", " + 1e-7", "--init", '{"bug": true}')
    said = out.replace("\n", " ")
    assert p.returncode == 1, out
    assert "no known bug pattern" not in said, out
    assert "a 1/batch is missing" in said or "5 times too large" in said, out
    assert "with the constant 1e-07 removed from forward's log, to diagnose" in said, out
