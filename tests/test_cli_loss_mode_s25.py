"""review25g L4: ``gradcheck check ... --loss --mode sample`` was accepted and ignored (the table said ``all 160``,
the footer ``mode full``): a loss is checked at every element (check_loss has no mode), so --mode other than full
is refused with --loss (exit 2), as --method is; a layer's default stays fast."""

from test_cli import both, run_here, student

MSE = """
import numpy as np


class MSE:
    def forward(self, y_true, y_pred):
        self.d = y_pred - y_true
        return float(np.mean(self.d ** 2))

    def backward(self):
        return 2 * self.d / self.d.size
"""


def test_loss_mode_sample_or_fast_is_refused_and_full_is_what_it_does(tmp_path):
    f = student(tmp_path, MSE)
    for mode in ("sample", "fast"):
        p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "4,3", "--mode", mode)
        text = both(p)
        assert p.returncode == 2 and f"--mode {mode}" in text and "every element" in text, text
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "4,3", "--mode", "full")
    assert p.returncode == 0 and "mode full" in both(p) and "all 12" in both(p), both(p)
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "4,3")
    assert p.returncode == 0 and "mode full" in both(p), both(p)


TANH = """
import numpy as np


class Tanh:
    def forward(self, X):
        self.Y = np.tanh(X)
        return self.Y

    def backward(self, dY):
        return dY * (1 - self.Y ** 2)
"""


def test_a_layers_mode_is_fast_by_default_and_sample_when_asked(tmp_path):
    f = student(tmp_path, TANH)
    p = run_here("check", f"{f}::Tanh", "--input-shape", "4,3")
    assert p.returncode == 0 and "mode fast" in both(p), both(p)
    p = run_here("check", f"{f}::Tanh", "--input-shape", "4,3", "--mode", "sample")
    assert p.returncode == 0 and "mode sample" in both(p), both(p)
