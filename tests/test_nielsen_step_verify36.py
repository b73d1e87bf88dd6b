"""verify36's findings on Nielsen's ``update_mini_batch`` step check (:mod:`gradcheck._nielsen_step`), on
tests/fixtures/nielsen_s34/network.py with its step replaced:

* F1 (HIGH): a correct matrix-based step (the mini-batch stacked, one ``backprop(X, Y)``, the bias deltas' columns
  summed by the step, Nielsen's chapter 2 exercise) scored 3 of 6: the step due was made of the whole batch's
  ``nabla_b`` (3, m) and compared with the (3, 1) bias by broadcasting. It is made of the one-sample gradients' sum.
* F11 (HIGH): a step writing into its mini-batch's ``x`` (the training data) PASSed; now a FAIL naming it.
* F6 (LOW): ``eta/2`` at m = 2 was named "divided by m again" (eta/(2m) = eta/m^2 there): both readings are said.
* F7 (LOW): ``update_mini_batch(self, eta, mini_batch)`` got a bare TypeError; the messages used gradcheck's names.
"""

import pathlib

from test_cli import both, run_here, student

from tests.test_grading_keys_s35 import _parts
from tests.test_grading_nielsen_step_s36 import ARRAYS, _grade

NIELSEN = pathlib.Path(__file__).parent / "fixtures" / "nielsen_s34" / "network.py"
STEP = NIELSEN.read_text().split("    def update_mini_batch(self, batch, eta):\n")[1].split("    def backprop")[0]
HEAD = "    def update_mini_batch(self, batch, eta):\n"
MATRIX = (HEAD + STEP, HEAD + """        X = np.hstack([x for x, y in batch]); Y = np.hstack([y for x, y in batch])
        nb, nw = self.backprop(X, Y)
        nb = [d.sum(axis=1, keepdims=True) for d in nb]
        self.biases = [b - eta / X.shape[1] * d for b, d in zip(self.biases, nb)]
        self.weights = [w - eta / X.shape[1] * d for w, d in zip(self.weights, nw)]

""")
MUTATES = (STEP, STEP + "        for x, y in batch:\n            x *= 0\n\n")
SWAPPED = (HEAD, "    def update_mini_batch(self, eta, batch):\n")
HALF = ("        for x, y in batch:\n", "        eta = eta / 2\n        for x, y in batch:\n")


def _check(tmp_path, *edits, shape="4,3"):
    src = NIELSEN.read_text()
    for old, new in edits:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    m = shape.split(",")[1]
    p = run_here("check", f"{student(tmp_path, src, 'network.py')}::Network", "--input-shape", shape, "--targets",
                 f"unit@3,{m}", "--init", '{"sizes": [4, 3, 3, 3]}')
    return p.returncode, " ".join(both(p).split())


def test_a_correct_matrix_based_step_gets_full_marks(tmp_path):
    """F1: the matrix-based step equals network.py's (its model's whole-batch nabla_b is (3, 3)): 6 of 6, every array
    ok (it was 3 of 6, the biases "not the step of its gradients")."""
    r, t, _ = _grade(tmp_path, MATRIX)
    assert (r.status, t["score"], t["max_score"]) == ("graded", 6.0, 6.0), t["output"]
    assert "All checked: `biases[0]`, `biases[1]`, `biases[2]`, `weights[0]`, `weights[1]`, `weights[2]` ok." in \
        t["output"], t["output"]


def test_a_matrix_based_step_without_the_bias_sum_is_still_wrong(tmp_path):
    """F1's control: the same step without summing the bias columns (biases become (3, 3), verify36's Bcast) loses
    the biases' share, each named by its shape (it scored 6 of 6: the (3, 3) biases equalled the (3, 3) step due)."""
    r, t, _ = _grade(tmp_path, (MATRIX[0], MATRIX[1].replace("        nb = [d.sum(axis=1, keepdims=True) for d in nb]\n",
                                                           "")))
    assert (r.status, t["score"]) == ("graded", 3.0), t["output"]
    assert _parts(t["output"]) == {k: "wrong" if k.startswith("b") else "ok" for k in ARRAYS}, t["output"]
    assert "left it of shape (3, 3), expected an array of shape (3, 1)" in t["output"], t["output"]


def test_a_step_writing_into_its_mini_batch_fails_named(tmp_path):
    """F11: network.py's step, then x *= 0 on the mini-batch's arrays (the training data): a FAIL (exit 1) naming
    it (it PASSed, "checked: one step ..."); the grader scores the step 0."""
    code, out = _check(tmp_path, MUTATES)
    assert code == 1, out
    assert "update_mini_batch modified its mini-batch's x in place (sample 0, update_mini_batch(batch, eta) wrote " \
           "into it)" in out, out
    (tmp_path / "g").mkdir()
    r, t, _ = _grade(tmp_path / "g", MUTATES)
    assert (r.status, t["score"]) == ("graded", 0.0), t["output"]
    assert "modified its mini-batch's x in place" in t["output"], t["output"]


def test_half_eta_at_two_samples_names_both_readings(tmp_path):
    """F6: at m = 2 the step eta/2 is the step eta/m^2: both readings are said, neither alone; at m = 3 it is not
    called a mean divided twice."""
    code, out = _check(tmp_path, HALF, shape="4,2")
    assert code == 1, out
    assert "the step is (eta/4) * sum(nabla) where (eta/2) * sum(nabla) is due (m = 2): eta halved, or (eta/m)/m" in out
    assert "divided by m = len(mini_batch) again" not in out, out
    (tmp_path / "m3").mkdir()
    code, out = _check(tmp_path / "m3", HALF)
    assert code == 1 and "not the step of its gradients" in out and "eta halved" not in out, out
    assert "again" not in out.split("diagnosis:")[1], out


def test_eta_first_is_said_and_the_students_names_are_used(tmp_path):
    """F7: update_mini_batch(self, eta, batch) is told that gradcheck calls it (mini_batch, eta) and to put the
    mini-batch first; a correct step's PASS names the student's parameters (batch, eta)."""
    code, out = _check(tmp_path, SWAPPED)
    assert code == 3, out
    assert ("gradcheck calls update_mini_batch as Nielsen's network.py does, positionally as "
            "update_mini_batch(mini_batch, eta); Network.update_mini_batch takes (eta, batch): put the mini-batch "
            "first, (batch, eta)") in out, out
    (tmp_path / "ok").mkdir()
    code, out = _check(tmp_path / "ok")
    assert code == 0 and "update_mini_batch(batch, eta): checked: one step on a mini-batch of 3 samples" in out, out


def test_check_reads_a_matrix_ports_per_column_bias_deltas(tmp_path):
    """F2: gradcheck check of the matrix-based network (backprop(X, Y) returns network.py's per-column bias deltas,
    (3, 3), summed by its step) PASSes, its step checked (it FAILed "nabla_b[0] has shape (3, 3), expected (3, 1)");
    the step leaving those (3, 3) biases FAILs on the step, each bias named by its shape."""
    code, out = _check(tmp_path, MATRIX)
    assert code == 0 and "PASS" in out and "expected (3, 1)" not in out, out
    assert "update_mini_batch(batch, eta): checked: one step on a mini-batch of 3 samples" in out, out
    (tmp_path / "b").mkdir()
    code, out = _check(tmp_path / "b", (MATRIX[0], MATRIX[1].replace(
        "        nb = [d.sum(axis=1, keepdims=True) for d in nb]\n", "")))
    assert code == 1, out
    assert ("biases[0], biases[1], biases[2]: update_mini_batch left it of shape (3, 3), expected an array of shape "
            "(3, 1)") in out, out
