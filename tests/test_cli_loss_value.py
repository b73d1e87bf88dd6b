"""A loss's value (a new-user tester's U7, session 8): central differences see only the gradient, so
a CS231n svm_loss that keeps the true class's margin (L one too high per sample, the gradient
unchanged) passed. ``--reference manualprop.NAME`` with ``--loss`` compares L and dL/dy_pred with our
loss; without a reference or twin, the PASS says that L itself was not checked.

The right value is computed here independently (a loop over the samples) and pinned against
manualprop.MulticlassHinge, so the reference the test relies on is itself checked.
"""

import numpy as np
from test_cli import both, run, run_here, student

SVM = """
import numpy as np

def _svm(x, y, keep_true):
    N = x.shape[0]
    margins = np.maximum(0, x - x[np.arange(N), y][:, None] + 1.0)
    if not keep_true:
        margins[np.arange(N), y] = 0
    dx = (margins > 0).astype(float)
    dx[np.arange(N), y] = 0
    dx[np.arange(N), y] -= dx.sum(axis=1)
    return margins.sum() / N, dx / N

def svm_loss(x, y):
    return _svm(x, y, keep_true=False)

def svmbug_loss(x, y):
    return _svm(x, y, keep_true=True)  # BUG: the true class's margin (1) counted
"""
ARGS = ["--loss", "--input-shape", "6,4", "--targets", "labels"]


def test_reference_catches_a_loss_off_by_a_constant(tmp_path):
    f = student(tmp_path, SVM)
    p = run("check", f"{f}::svmbug_loss", *ARGS, "--reference", "manualprop.MulticlassHinge")  # the console script
    text = both(p)
    assert p.returncode == 1, text
    assert "FAIL: svmbug_loss: the loss value L differs from the reference's." in text
    assert "gradient mismatch" not in text  # the gradient is right


def test_reference_passes_the_right_loss(tmp_path):
    f = student(tmp_path, SVM)
    p = run_here("check", f"{f}::svm_loss", *ARGS, "--reference", "manualprop.MulticlassHinge")
    text = both(p)
    assert p.returncode == 0, text
    assert "PASS: svm_loss: dL/dx and L match" in text and "not checked" not in text


def test_without_a_reference_the_pass_says_L_was_not_checked(tmp_path):
    f = student(tmp_path, SVM)
    p = run_here("check", f"{f}::svmbug_loss", *ARGS)
    text = both(p)
    assert p.returncode == 0, text
    assert "the value L itself was not checked" in text and "--reference manualprop.NAME" in text


def test_the_reference_value_is_the_hinge_loss():
    import manualprop

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((6, 4)), rng.integers(0, 4, size=6)
    loop = sum(max(0.0, x[i, j] - x[i, y[i]] + 1.0) for i in range(6) for j in range(4) if j != y[i]) / 6
    assert np.isclose(manualprop.MulticlassHinge().forward(y, x), loop, rtol=1e-14, atol=0)


def test_pytorch_argument_order_is_named(tmp_path):
    """forward(logits, target) (PyTorch's order) got only numpy's AxisError (the tester's U8); then a hint to
    swap the arguments; now the prediction is bound to logits by its name."""
    f = student(tmp_path, """
    import numpy as np

    class CEtorch:
        def forward(self, logits, target):
            z = logits - logits.max(axis=1, keepdims=True)
            self.p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
            self.t = target
            return -np.log(self.p[np.arange(len(target)), target]).mean()

        def backward(self):
            g = self.p.copy()
            g[np.arange(len(self.t)), self.t] -= 1
            return g / len(self.t)
    """)
    p = run_here("check", f"{f}::CEtorch", *ARGS)  # bound by the names now (issue 10, W3): the correct loss passes
    assert p.returncode == 0, both(p)
    assert "loss: forward(logits=y_pred, target=y_true): the prediction goes to logits" in p.stdout, both(p)


def test_utf16_source_says_save_as_utf8(tmp_path):
    """A file saved as UTF-16 (Notepad's 'Unicode') got "source code string cannot contain null bytes"."""
    f = tmp_path / "lin16.py"
    f.write_bytes(SVM.encode("utf-16"))
    p = run_here("check", f"{f}::svm_loss", *ARGS)
    assert p.returncode == 3
    assert "saved as UTF-16" in both(p) and "save it as UTF-8" in both(p)


CE_SUM = """
import numpy as np

class CEsum:
    def forward(self, y_true, y_pred):
        self.y, z = y_true, y_pred - y_pred.max(1, keepdims=True)
        self.p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
        return -np.log(self.p[np.arange(len(self.y)), self.y]).SUM()  # BUG when SUM is sum: the mean is due

    def backward(self):
        d = self.p.copy()
        d[np.arange(len(self.y)), self.y] -= 1
        return d / len(self.y)  # right: the gradient of the mean
"""


def test_a_loss_value_summed_over_the_batch_is_named_and_its_right_gradient_kept(tmp_path):
    # before: "dy_pred is 6 times too small ... do not divide again", advice that breaks the right gradient
    ref = ("--reference", "manualprop.SoftmaxCrossEntropy")
    p = run_here("check", f"{student(tmp_path, CE_SUM.replace('SUM', 'sum'))}::CEsum", *ARGS, *ref)
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "FAIL: CEsum: the loss value L differs from the reference's; gradient mismatch in dy_pred." in text
    assert ("diagnosis: L is 6 times too large: it is the reference's times N = 6, the batch size: a sum over "
            "the batch where the mean is due (divide by N); dy_pred matches the reference's, keep it") in text
    assert "too small" not in text and "do not divide" not in text, text
    p = run_here("check", f"{student(tmp_path, CE_SUM.replace('SUM', 'mean'))}::CEsum", *ARGS, *ref)
    assert p.returncode == 0 and "PASS: CEsum: dL/dy_pred and L match" in both(p), both(p)
    p = run_here("check", f"{student(tmp_path, CE_SUM.replace('SUM', 'sum').replace('-np.log', '-np.log2'))}::CEsum",
            *ARGS, *ref)  # L neither N times nor right, the gradient still the reference's
    text = " ".join(both(p).split())
    assert "diagnosis: dy_pred matches the reference's, L does not: fix the value L" in text, text


MSE = '''
import numpy as np

class MeanSquaredError:
    def forward(self, y_true, y_pred):
        self.r = y_pred - y_true
        return float((self.r ** 2).mean()) + 1.0      # L off by a constant: its gradient is right

    def backward(self):
        return 2 * self.r / self.r.size
'''


def test_the_pass_names_the_manualprop_class_of_the_same_name(tmp_path):
    """Tester 18: the hint always said ``(e.g. manualprop.MulticlassHinge)``."""
    f = student(tmp_path, MSE)
    p = run_here("check", f"{f}::MeanSquaredError", "--loss", "--input-shape", "4,3")
    text = both(p)
    assert p.returncode == 0, text
    assert "--reference manualprop.MeanSquaredError compares it" in text and "e.g." not in text, text
