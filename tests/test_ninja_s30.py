"""Karpathy's "backprop ninja" (makemore part 4) as a model ``forward(Xb, Yb) -> loss`` checked with ``--targets``
and ``--indices`` (tester30k, session 30): an embedding, a Linear with a bias before a batch norm, tanh and a
softmax cross-entropy, each backward step by hand; ``NET`` is right, and each test plants one bug by replacing a
line. C, W1 and b1 are multiples of 1/16 so that ``emb @ W1 + b1`` and its batch mean are exact in any summation
order: the batch norm takes b1 off exactly, as it does in the notebook's numbers."""

import pytest
from test_cli import both, run_here, student

NET = '''
import numpy as np


class Net:
    def __init__(self, seed=0):
        r = np.random.default_rng(seed)
        self.C = r.integers(-8, 9, (10, 3)) / 8
        self.W1 = r.integers(-8, 9, (6, 5)) / 16
        self.b1 = r.integers(-8, 9, 5) / 8
        self.bngain = r.standard_normal((1, 5)) * 0.1 + 1.0
        self.bnbias = r.standard_normal((1, 5)) * 0.1
        self.W2 = r.standard_normal((5, 4)) * 0.5

    def forward(self, Xb, Yb):
        n = Xb.shape[0]
        self.Xb, self.Yb = Xb, Yb
        self.emb = self.C[Xb].reshape(n, -1)
        hpre = self.emb @ self.W1 + self.b1
        self.diff = hpre - hpre.mean(0, keepdims=True)
        self.inv = (((self.diff ** 2).sum(0, keepdims=True) / (n - 1)) + 1e-5) ** -0.5
        self.raw = self.diff * self.inv
        self.h = np.tanh(self.bngain * self.raw + self.bnbias)
        logits = self.h @ self.W2
        e = np.exp(logits - logits.max(1, keepdims=True))
        self.p = e / e.sum(1, keepdims=True)
        return -np.log(self.p[range(n), Yb]).mean()

    def backward(self, dout=1.0):
        n = self.Xb.shape[0]
        dlogits = self.p.copy()
        dlogits[range(n), self.Yb] -= 1
        dlogits *= dout / n
        self.dW2 = self.h.T @ dlogits
        dhpre = (1 - self.h ** 2) * (dlogits @ self.W2.T)
        self.dbngain = (self.raw * dhpre).sum(0, keepdims=True)
        self.dbnbias = dhpre.sum(0, keepdims=True)
        draw = self.bngain * dhpre
        dhb = self.inv / n * (n * draw - draw.sum(0) - n / (n - 1) * self.raw * (draw * self.raw).sum(0))
        self.db1 = dhb.sum(0)
        self.dW1 = self.emb.T @ dhb
        demb = (dhb @ self.W1.T).reshape(n, -1, 3)
        self.dC = np.zeros_like(self.C)
        np.add.at(self.dC, self.Xb, demb)
'''

#: 8 examples of 2 ids in [0, 10), 4 classes
ARGS = ["--input-shape", "8,2", "--indices", "10", "--targets", "labels:4"]


def check(tmp_path, *extra, swap=(), **lines):
    """``gradcheck check net.py::Net`` on ``NET`` with the lines ``old=new, old2=new2`` replaced (``old``: the name a
    line assigns, as ``db1``), and the text ``swap[0]`` by ``swap[1]``."""
    src = NET
    if swap:
        assert src.count(swap[0]) == 1, swap
        src = src.replace(*swap)
    for old, new in lines.items():
        at = [ln for ln in src.splitlines() if ln.strip().startswith(f"self.{old} =") or ln.strip().startswith(old + " =")]
        assert len(at) == 1, old
        src = src.replace(at[0].strip(), new)
    student(tmp_path, src, "net.py")
    p = run_here("check", "net.py::Net", *ARGS, *extra, cwd=tmp_path)
    return p, both(p)


def test_a_models_loss_on_the_tape_is_compared_with_the_tape(tmp_path):
    """M2: gradcheck's own wrapper did ``np.array(loss)`` on the tape's Tensor: "no tape comparison ... the tape lost
    track of a tensor ... at <gradcheck adapters>" and never a tape column."""
    p, out = check(tmp_path, "--tape")
    assert p.returncode == 0, out
    assert "no tape comparison" not in out, out
    assert "manual~tape" in out and "tape~num" in out, out
    assert "PASS: Net: every gradient (" in out and ") and the forward output match" in out, out


def test_a_tensor_copied_out_of_the_tape_in_a_models_forward_is_still_named(tmp_path):
    """M2: the wrapper keeps the Tensor; the student's own ``np.array`` on one is still the line reported."""
    p, out = check(tmp_path, "--tape", p="self.p = np.array(e / e.sum(1, keepdims=True))")
    assert "no tape comparison for Net: the tape lost track of a tensor computed from the inputs at net.py:26" in out, out
    assert "gradcheck adapters" not in out, out


def test_a_bias_a_batch_norm_cancels_is_said_read_not_unused(tmp_path):
    """M3: b1 before the batch norm is read by forward, yet the loss does not change with it (the batch mean takes
    it off again); the header and the FAIL line said "forward does not use b1". Backward here skips the batch norm
    for db1 (``db1 = dhpre.sum(0)``, nonzero), so db1 FAILs against its numerical 0."""
    p, out = check(tmp_path, db1="self.db1 = dhpre.sum(0)")
    assert p.returncode == 1, out
    assert "does not use b1" not in out, out
    assert ("the output does not depend on b1 (forward reads it, but changing it leaves the output unchanged, e.g. a "
            "bias followed by a normalisation that subtracts the mean), yet backward writes db1: checked against the "
            "numerical gradient, 0") in out, out
    assert ("FAIL: Net: gradient mismatch in db1 (db1 is the gradient backward writes for b1, but the output does not "
            "depend on b1: forward reads it, yet changing it leaves the output unchanged (e.g. a bias followed by a "
            "normalisation that subtracts the mean), so its gradient is 0)") in out, out


def test_a_bias_forward_never_reads_is_still_said_unused(tmp_path):
    """M3: the NaN probe tells a bias forward never reads (``emb @ W1`` alone) from one it reads and cancels."""
    p, out = check(tmp_path, hpre="hpre = self.emb @ self.W1", db1="self.db1 = dhpre.sum(0)")
    assert p.returncode == 1, out
    assert "forward does not use b1, yet backward writes db1" in out, out
    assert "does not depend on b1" not in out, out


@pytest.mark.parametrize("op", ["=", "+="])
def test_a_models_lookup_gradient_assigned_at_repeated_ids_names_np_add_at(tmp_path, op):
    """M4: ``dC[Xb] = demb`` (or ``+=``) in a model's backward: "no known bug pattern", where an Embedding layer alone
    names np.add.at. Here the ids repeat (16 lookups of 10 rows): the rows of dC that are wrong are those."""
    p, out = check(tmp_path, swap=("np.add.at(self.dC, self.Xb, demb)", f"self.dC[self.Xb] {op} demb"))
    assert p.returncode == 1, out
    assert "FAIL: Net: gradient mismatch in dC." in out, out
    assert ("dC keeps one update per row where an index repeats (4 of 10 rows of dC are looked up more than once by "
            "X): dC[idx] += dY (or = dY) is numpy's buffered fancy-index assignment") in out, out
    assert "accumulate with np.add.at(dC, idx, dY)" in out and "no known bug pattern" not in out, out


def test_a_wrong_row_looked_up_once_is_not_taken_for_repeated_ids(tmp_path):
    """M4: the rows rule names np.add.at only when every wrong row is a repeated id's: dC doubled is all rows."""
    p, out = check(tmp_path, swap=("np.add.at(self.dC, self.Xb, demb)", "np.add.at(self.dC, self.Xb, 2 * demb)"))
    assert p.returncode == 1, out
    assert "np.add.at(dC" not in out and "looked up more than once" not in out, out


def test_a_models_bias_gradient_not_summed_over_the_batch_is_a_named_fail(tmp_path):
    """M5: ``dbnbias = dhpre`` (shape (8, 5) for bnbias (1, 5)) in a model told of the targets' shape and "the error
    is in forward"; it is a FAIL naming the missing sum over axis 0, keepdims=True."""
    p, out = check(tmp_path, dbnbias="self.dbnbias = dhpre")
    assert p.returncode == 1, out
    assert ("FAIL: Net: wrong shape of dbnbias. diagnosis: dbnbias was not summed over the batch: it has shape (8, 5), "
            "one row per example, but the correct gradient has shape (1, 5)") in out, out
    assert "dY.sum(axis=0, keepdims=True), which keeps the size-1 axis of shape (1, 5)" in out, out
    assert "error is in forward" not in out and "gradcheck drew the targets" not in out, out


#: exercise 2: the cross-entropy's one-line backward; LABEL and DIV are the two lines the slips change
CE = '''
import numpy as np


class CrossEntropy:
    def forward(self, logits, labels):
        n = logits.shape[0]
        z = logits - logits.max(1, keepdims=True)
        logprobs = z - np.log(np.exp(z).sum(1, keepdims=True))
        self.logits, self.labels = logits, labels
        return -logprobs[range(n), labels].mean()

    def backward(self):
        n = self.logits.shape[0]
        e = np.exp(self.logits - self.logits.max(AXIS, keepdims=True))
        dlogits = e / e.sum(AXIS, keepdims=True)
        LABEL
        dlogits /= n
        return dlogits
'''


@pytest.mark.parametrize("axis,label,words", [
    (1, "pass", "dy_pred is softmax(logits) / N (N = 6), where the cross-entropy of softmax(logits) has the gradient "
                "(softmax(logits) - onehot(y)) / N (N = 6): the -1 at each row's label is missing (dy_pred minus the "
                "correct gradient is onehot(y) / N (N = 6) exactly); subtract 1 at the labels"),
    (1, "dlogits -= 1", "dy_pred is (softmax(logits) - 1) / N (N = 6), where the cross-entropy of softmax(logits) has "
                        "the gradient (softmax(logits) - onehot(y)) / N (N = 6): 1 is subtracted from every entry, not "
                        "at the label alone"),
    (0, "dlogits[range(n), self.labels] -= 1", "dy_pred is (softmax(logits, axis=0) - onehot(y)) / N (N = 6), where "
                                               "the cross-entropy of softmax(logits) has the gradient (softmax(logits) "
                                               "- onehot(y)) / N (N = 6): its softmax is taken over the batch (axis 0)"),
    (1, "dlogits[range(n), self.labels] -= 1 / n", "dy_pred is (softmax(logits) - onehot(y) / N) / N (N = 6), where the "
                                                   "cross-entropy of softmax(logits) has the gradient (softmax(logits) "
                                                   "- onehot(y)) / N (N = 6): at the label it subtracts 1/N, not 1: "
                                                   "the mean's 1/N is applied there twice"),
])
def test_the_classic_cross_entropy_backward_slips_are_named(tmp_path, axis, label, words):
    """L3: forgetting the -1 at the label, -1 everywhere, the softmax over the batch and 1/N twice at the label were
    each "no known bug pattern"."""
    student(tmp_path, CE.replace("AXIS", str(axis)).replace("LABEL", label), "ce.py")
    p = run_here("check", "ce.py::CrossEntropy", "--loss", "--input-shape", "6,5", "--targets", "labels:5",
                 cwd=tmp_path)
    out = both(p)
    assert p.returncode == 1 and "FAIL: CrossEntropy: gradient mismatch in dy_pred." in out, out
    assert words in out and "no known bug pattern" not in out, out


def test_the_right_cross_entropy_backward_passes(tmp_path):
    student(tmp_path, CE.replace("AXIS", "1").replace("LABEL", "dlogits[range(n), self.labels] -= 1"), "ce.py")
    p = run_here("check", "ce.py::CrossEntropy", "--loss", "--input-shape", "6,5", "--targets", "labels:5",
                 cwd=tmp_path)
    assert p.returncode == 0 and "PASS: CrossEntropy" in both(p), both(p)
