"""Session 35's leftover (nielsen34 F6): a PASS of a Nielsen network said its ``update_mini_batch`` was not checked, so
a step not averaged over the mini-batch, averaged twice, of the wrong sign, that forgot the biases, used the last
sample's gradient alone, or an L2 decay on the biases or with the wrong n passed. Now one ``update_mini_batch`` runs
in the sandbox on a copy of the network (:meth:`gradcheck.sandbox.RemoteLayer.mini_batch_step`) and its new weights
are compared with the step of the network's own (checked) gradients (:mod:`gradcheck._nielsen_step`): network.py's
``w - (eta/m) * sum(nabla_w)``, network2.py's ``(1 - eta*lmbda/n) * w - (eta/m) * sum(nabla_w)`` with the biases not
decayed; each bug is named. The network is tests/fixtures/nielsen_s34/network2.py, each bug a replaced line.
"""

import pathlib

import pytest
from test_cli import both, run_here, student

HERE = pathlib.Path(__file__).parent / "fixtures" / "nielsen_s34"
ARGS = ("--input-shape", "4,3", "--targets", "unit@3,3", "--init", '{"sizes": [4, 3, 3, 3]}')
B_STEP = "        self.biases = [b - eta / len(batch) * s for b, s in zip(self.biases, sum_b)]\n"
W_STEP = "        self.weights = [w - eta / len(batch) * s for w, s in zip(self.weights, sum_w)]\n"
# network2.py's L2 step (chapter 3): the weights decayed by (1 - eta*lmbda/n), n the training set's size
L2 = [("    def update_mini_batch(self, batch, eta):", "    def update_mini_batch(self, batch, eta, lmbda, n):"),
      (W_STEP, W_STEP.replace("[w - eta", "[(1 - eta * lmbda / n) * w - eta"))]
L2_STEP = W_STEP.replace("[w - eta", "[(1 - eta * lmbda / n) * w - eta")
ALL = "biases[0], biases[1], biases[2], weights[0], weights[1], weights[2]"
PLAIN = "w - (eta/m) * sum(nabla_w), b - (eta/m) * sum(nabla_b), eta = 0.5, m = 3"
DECAY = ("(1 - eta*lmbda/n) * w - (eta/m) * sum(nabla_w) and b - (eta/m) * sum(nabla_b), eta = 0.5, lmbda = 5, n = 50, "
         "m = 3")


def _check(tmp_path, *edits):
    src = (HERE / "network2.py").read_text()
    for old, new in edits:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    p = run_here("check", f"{student(tmp_path, src, 'network2.py')}::Network", *ARGS)
    return p.returncode, both(p)


@pytest.mark.parametrize(("edits", "formula", "keywords"), [([], PLAIN, ""), (L2, DECAY, ", lmbda, n")])
def test_a_correct_step_passes_and_is_said_checked(tmp_path, edits, formula, keywords):
    """The controls: network.py's step and network2.py's L2 step PASS, and the PASS says what was compared (it said
    'not checked: ... update_mini_batch and SGD')."""
    code, text = _check(tmp_path, *edits)
    assert code == 0 and "PASS: Network: every gradient (dX, dbiases[0]" in text, text
    assert (f"update_mini_batch(batch, eta{keywords}): checked: one step on a mini-batch of 3 samples (x[:, j], "
            f"y[:, j]) from the checked weights gives {ALL} = {formula}, the step of backprop's gradients.") in text, text
    assert "nor update_mini_batch" not in text and "FAIL" not in text, text


@pytest.mark.parametrize(("edits", "wrong", "said"), [
    ([(B_STEP, B_STEP.replace("eta / len(batch)", "eta")), (W_STEP, W_STEP.replace("eta / len(batch)", "eta"))], ALL,
     "the step is eta * sum(nabla) where (eta/m) * sum(nabla) is due: the sum over the mini-batch is not divided by "
     "m = len(mini_batch)"),
    ([(B_STEP, B_STEP.replace("eta / len(batch)", "eta / len(batch) / len(batch)")),
      (W_STEP, W_STEP.replace("eta / len(batch)", "eta / len(batch) / len(batch)"))], ALL,
     "the step is (eta/m^2) * sum(nabla) where (eta/m) * sum(nabla) is due: the mean over the mini-batch is divided "
     "by m = len(mini_batch) again"),
    ([(B_STEP, B_STEP.replace("b - eta", "b + eta")), (W_STEP, W_STEP.replace("w - eta", "w + eta"))], ALL,
     "the step is + (eta/m) * sum(nabla) where - (eta/m) * sum(nabla) is due: it climbs the cost (sign flipped)"),
    ([(B_STEP, "")], "biases[0], biases[1], biases[2]", "it is not updated at all"),
    ([("            sum_b = [s + d for s, d in zip(sum_b, delta_nabla_b)]\n", "            sum_b = delta_nabla_b\n"),
      ("            sum_w = [s + d for s, d in zip(sum_w, delta_nabla_w)]\n", "            sum_w = delta_nabla_w\n")],
     ALL, "the step is (eta/m) * (the last sample's nabla) where (eta/m) * sum(nabla) over the mini-batch is due: the "
          "loop assigns nabla = delta_nabla where it must add"),
])
def test_a_wrong_step_fails_named(tmp_path, edits, wrong, said):
    """Each common bug of network.py's step PASSed (the PASS said the step was not checked); now a FAIL (exit 1)
    naming the arrays and the bug."""
    code, text = _check(tmp_path, *edits)
    assert code == 1, text
    assert "FAIL: Network: update_mini_batch's step is wrong (see the diagnosis)." in text, text
    assert (f"diagnosis: update_mini_batch(batch, eta) is not the step of backprop's gradients, {PLAIN}: "
            f"{wrong}: {said}") in text, text
    assert "backprop's gradients themselves match central differences" in text and "PASS" not in text, text


@pytest.mark.parametrize(("step", "wrong", "said"), [
    (L2_STEP.replace("w - eta", "w - eta") + B_STEP.replace("[b - eta", "[(1 - eta * lmbda / n) * b - eta"),
     "biases[0], biases[1], biases[2]",
     "the L2 decay (1 - eta*lmbda/n) is applied to the biases, which network2.py does not decay: b - (eta/m) * "
     "sum(nabla_b) is due"),
    (L2_STEP.replace("lmbda / n", "lmbda / len(batch)") + B_STEP, "weights[0], weights[1], weights[2]",
     "the L2 decay is (1 - eta*lmbda/m) with m = len(mini_batch) where (1 - eta*lmbda/n) is due, n the size of the "
     "whole training set (update_mini_batch's argument n)"),
    (W_STEP + B_STEP, "weights[0], weights[1], weights[2]",
     "no L2 decay: (1 - eta*lmbda/n) * w - (eta/m) * sum(nabla_w) is due"),
    (L2_STEP.replace("eta * lmbda / n", "2 * eta * lmbda / n") + B_STEP, "weights[0], weights[1], weights[2]",
     "the weights are decayed by the factor 0.9 where (1 - eta*lmbda/n) = 0.95 is due: the decay term is 2 times "
     "eta*lmbda/n"),
    (L2_STEP.replace("eta * lmbda / n", "eta * lmbda") + B_STEP, "weights[0], weights[1], weights[2]",
     "the weights are decayed by the factor -1.5 where (1 - eta*lmbda/n) = 0.95 is due: the decay term is 50 times "
     "eta*lmbda/n"),
])
def test_a_wrong_l2_step_fails_named(tmp_path, step, wrong, said):
    """network2.py's update_mini_batch(mini_batch, eta, lmbda, n): the decay on the biases, with n = len(mini_batch),
    missing, or by another factor (nielsen34's m09, doubled; m10, not divided by n), each named."""
    code, text = _check(tmp_path, L2[0], (B_STEP + W_STEP, step))
    assert code == 1, text
    assert (f"diagnosis: update_mini_batch(batch, eta, lmbda, n) is not the step of backprop's gradients, "
            f"{DECAY}: {wrong}: {said}") in text, text


def test_a_step_of_no_known_bug_gives_its_error(tmp_path):
    """A step outside the table: the arrays named, with the error."""
    code, text = _check(tmp_path, (B_STEP, B_STEP.replace("eta / len(batch)", "0.7 * eta / len(batch)")))
    assert code == 1, text
    assert f"{PLAIN}: biases[0]: not the step of its gradients (max relative error" in text, text
    assert "biases[2]: not the step of its gradients" in text and "weights[0]" not in text.partition(PLAIN)[2], text
