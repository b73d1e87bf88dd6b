"""newuser29's LOW findings: L1 a FAILing check showed nothing the checked code printed (docs/checking.md says its
prints reach the terminal; --help said the last 20 lines are shown "when the code fails"); L2 ``gradcheck check``
refused a write into the file's own folder (by its absolute path) as "the grading sandbox ... a submission may write
only into its own folder"; L3 a binary cross-entropy on (N, 1) probabilities with ``--pred probs`` (softmax rows of
one column are 1.0) got "wrong result ... log of 0" without naming ``--pred unit``; and a gradient stored as a list
(``self.dW = (...).tolist()``) was "backward sets no gradient attribute" or a dX-only PASS."""

from test_cli import both, run_here, student

TANH = """
import numpy as np
print("IMPORT-TIME PRINT")
class Tanh:
    def forward(self, X):
        print("FWD PRINT")
        self.Y = np.tanh(X)
        return self.Y
    def backward(self, dY):
        print("BWD PRINT")
        return dY * (1 - self.Y)  # BUG: (1 - Y**2)
"""


def test_prints_are_shown_on_a_fail(tmp_path):
    f = student(tmp_path, TANH)
    p = run_here("check", f"{f}::Tanh", "--input-shape", "4,3")
    assert p.returncode == 1 and "FAIL: Tanh" in both(p), both(p)
    assert "output of Tanh (its print calls, stdout and stderr)" in p.stderr and "| BWD PRINT" in p.stderr, p.stderr
    assert p.stderr.index("output of Tanh") > 0 and "FWD PRINT" in p.stderr


def test_prints_are_not_shown_on_a_pass(tmp_path):
    f = student(tmp_path, TANH.replace("(1 - self.Y)  # BUG: (1 - Y**2)", "(1 - self.Y ** 2)"))
    p = run_here("check", f"{f}::Tanh", "--input-shape", "4,3")
    assert p.returncode == 0 and "FWD PRINT" not in p.stdout + p.stderr, both(p)


def test_help_says_when_prints_are_shown():
    p = run_here("check", "--help")
    assert "shown when the check fails (a FAIL) or the code raises" in both(p), both(p)


def test_a_refused_write_is_said_in_checks_words(tmp_path):
    target = tmp_path / "debug.txt"
    f = student(tmp_path, f"""
import numpy as np
open({str(target)!r}, "w").write("x")
class Tanh:
    def forward(self, X):
        self.Y = np.tanh(X)
        return self.Y
    def backward(self, dY):
        return dY * (1 - self.Y ** 2)
""")
    p = run_here("check", f"{f}::Tanh", "--input-shape", "4,3")
    text = both(p)
    assert p.returncode == 3 and not target.exists(), text
    assert "grading sandbox" not in text and "a submission may" not in text, text
    assert (f"gradcheck's sandbox does not allow writing {str(target)!r}: gradcheck check runs the file on a copy in "
            "a temporary folder and lets it write only there, so that a check cannot change your files") in text, text


BCE = """
import numpy as np
class BCE:
    def forward(self, p, y):
        self.p, self.y = p, y
        return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    def backward(self):
        return (self.p - self.y) / (self.p * (1 - self.p)) / self.p.size
"""


def test_bce_on_one_column_of_probs_names_pred_unit(tmp_path):
    f = student(tmp_path, BCE)
    p = run_here("check", f"{f}::BCE", "--input-shape", "6,1", "--loss", "--pred", "probs", "--targets", "labels:2")
    text = both(p)
    assert p.returncode == 2, text  # a usage error: the loss is right, the data is not one it takes
    assert "a row of one column is 1.0 everywhere" in text and "use --pred unit" in text, text
    assert "forward is finite there" in text and "log of 0" not in text, text
    p = run_here("check", f"{f}::BCE", "--input-shape", "6,1", "--loss", "--pred", "unit", "--targets", "labels:2")
    assert p.returncode == 0 and "PASS: BCE" in both(p), both(p)


LIST_GRAD = """
import numpy as np


class ListGrad:
    def __init__(self, n_in=5, n_out=3):
        self.W = np.random.default_rng(0).normal(size=(n_in, n_out))

    def forward(self, X):
        self.X = X
        return X @ self.W

    def backward(self, dY):
        self.dW = (self.X.T @ dY).tolist()
        return dY @ self.W.T


"""


def test_a_gradient_stored_as_a_list_is_named_as_such(tmp_path):
    f = student(tmp_path, LIST_GRAD)
    p = run_here("check", f"{f}::ListGrad", "--input-shape", "8,5")
    text = both(p)
    assert p.returncode == 1, text  # was 0: "backward computes no dW", dX alone checked
    assert "gave dW as an object of type list; expected a numpy ndarray" in text, text
    assert "no gradient" not in text, text
