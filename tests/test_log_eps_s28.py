"""Session 28 (redteam28 F7): a ``log(p + eps)`` read as 0 although backward itself changes without the eps.

When the copy of the files without the eps passes, ``gradcheck check`` read the eps as a float guard and PASSed
(``--loss``: :func:`gradcheck._log_eps.pick_eps_reading`; a layer: ``name_removed_eps(swap=True)``), with the note
"as written the difference is at most a relative 3.3e-01 here (about eps/y per value y), which is no bug": a relative
0.33 is a factor of 2, and eps/y at these probabilities is about 1e-6. The copy may now stand for the code as written
only when backward moves between the two by at most what the eps makes (10 times max eps/|y| at the predictions, or
the rtol): a backward that is right only without the eps keeps its FAIL.
"""

import numpy as np

from test_cli import both, run_here, student

CE = """
import numpy as np


class CrossEntropy:
    def forward(self, y_true, y_pred):
        self.y, self.p = y_true, y_pred
        self.L = -np.sum(y_true * np.log(y_pred + 1e-7)) / len(y_pred)
        return self.L

    def backward(self):
        g = -self.y / self.p / len(self.p)
        plain = -np.sum(self.y * np.log(self.p)) / len(self.p)
        return RETURN
"""

LOG_SQUARE = """
import numpy as np


class LogSquare:
    def forward(self, X):
        self.X = X
        self.Y = np.log(X * X + 1e-7)
        return self.Y

    def backward(self, dY):
        g = dY * 2 / self.X
        return RETURN
"""


def _ce(tmp_path, ret):
    f = student(tmp_path, CE.replace("RETURN", ret), "losses.py")
    return run_here("check", f"{f}::CrossEntropy", "--loss", "--input-shape", "8,4", "--targets", "onehot",
                    "--pred", "probs")


def test_a_loss_whose_backward_is_right_only_without_the_eps_fails(tmp_path):
    """Was: exit 0, PASS, "as written the difference is at most a relative 3.3e-01 here ..., which is no bug"."""
    p = _ce(tmp_path, "g if self.L == plain else 2 * g")
    text = both(p)
    assert p.returncode == 1, text
    assert "PASS" not in text and "which is no bug" not in text, text
    assert "FAIL: CrossEntropy: gradient mismatch in dy_pred." in text, text
    assert "dy_pred is 2 times the correct gradient" in text, text


def test_the_textbook_backward_beside_log_p_plus_eps_still_passes_with_its_note(tmp_path):
    p = _ce(tmp_path, "g")
    text = both(p)
    assert p.returncode == 0, text
    assert "PASS: CrossEntropy" in text and "which is no bug" in text, text


def test_a_layer_whose_backward_is_right_only_without_the_eps_fails(tmp_path):
    """The layer path (name_removed_eps with swap): was exit 0, PASS."""
    f = student(tmp_path, LOG_SQUARE.replace("RETURN", "g if np.array_equal(self.Y, np.log(self.X * self.X)) "
                                                       "else 2 * g"), "layers.py")
    p = run_here("check", f"{f}::LogSquare", "--input-shape", "8,5")
    text = both(p)
    assert p.returncode == 1, text
    assert "PASS" not in text and "read as 0" not in text, text
    assert "FAIL: LogSquare: gradient mismatch in dX." in text, text


def test_eps_bound_is_eps_over_the_smallest_value_or_one_minus_it():
    from gradcheck._log_eps import eps_bound

    assert eps_bound([1e-7], np.array([0.5, 0.25, 0.9])) == 1e-7 / (1 - 0.9)  # 1 - y for probabilities
    assert eps_bound([1e-7, 1e-9], np.array([[2.0, -0.5], [3.0, 0.0]])) == 1e-7 / 0.5  # 0 left out; not in [0, 1]
    assert eps_bound([1e-7]) == 0.0


def test_the_same_layer_with_the_derivative_of_log_x_squared_passes_reading_the_eps_as_0(tmp_path):
    f = student(tmp_path, LOG_SQUARE.replace("RETURN", "g"), "layers.py")
    p = run_here("check", f"{f}::LogSquare", "--input-shape", "8,5")
    text = both(p)
    assert p.returncode == 0, text
    assert "PASS: LogSquare" in text, text
