"""fixd26: a loss whose forward returns a (1, 1) array (CMU 11-785's CrossEntropyLoss, ``Ones_N.T @ ce / N``) was a
FAIL for the shape alone (exit 1), and a backward without its 1/N was never told. The shape FAIL stands (the
grader's rule, ``_validation.loss_scalar``, is unchanged); ``gradcheck check`` also checks the gradient of the one
element and says whether it matches or what is wrong."""

from test_cli import both, run_here, student

CE = """
import numpy as np


class CrossEntropyLoss:
    def forward(self, A, Y):
        self.A, self.Y = A, Y
        N, C = A.shape
        exp_A = np.exp(A)
        self.softmax = exp_A / (exp_A @ np.ones((C, 1)))
        crossentropy = -(Y * np.log(self.softmax)) @ np.ones((C, 1))
        return np.ones((N, 1)).T @ crossentropy / N  # shape (1, 1)

    def backward(self):
        return {back}
"""
ARGS = ["--loss", "--input-shape", "8,5", "--targets", "onehot"]
SHAPE = "CrossEntropyLoss.forward(self, A, Y) gave L with shape (1, 1); expected shape ()"


def test_a_1x1_loss_without_its_1_over_n_is_told_both(tmp_path):
    p = run_here("check", f"{student(tmp_path, CE.format(back='self.softmax - self.Y'))}::CrossEntropyLoss", *ARGS)
    text = " ".join(both(p).split())
    assert p.returncode == 1 and SHAPE in text, text
    assert "with L read as its one element (L.reshape(()) of the (1, 1) array), the gradient is wrong as well" in text
    assert "is 8 times too large (batch size 8): a 1/batch is missing" in text, text


def test_a_1x1_loss_with_a_right_gradient_is_told_only_the_shape_is_wrong(tmp_path):
    back = "(self.softmax - self.Y) / self.A.shape[0]"
    p = run_here("check", f"{student(tmp_path, CE.format(back=back))}::CrossEntropyLoss", *ARGS)
    text = " ".join(both(p).split())
    assert p.returncode == 1 and SHAPE in text, text
    assert "matches central differences within rtol=" in text and "only the shape of L is wrong" in text, text
    assert "PASS" not in text, text
