"""review25g L3: the grader's numbers-only diagnosis read any tensor named ``db...`` as a bias, check's (the
signature of a graded layer) a ``b`` of shape (d,) or (1, d) only, so Andrew Ng's (d, 1) column ``b`` (whose
course divides db by m) got "the mean over the batch" from the grader and "an extra 1/batch" from check. One rule,
:func:`gradcheck.diagnose.is_bias_gradient`, is used by both."""

import numpy as np
import pytest

from gradcheck.diagnose import is_bias_gradient, name_signature
from gradcheck.grading.diagnosis import diagnose


@pytest.mark.parametrize(("tensor", "shape", "bias"), [
    ("db", (3,), True), ("db", (1, 3), True), ("db", (3, 1), False), ("dbiases", (1, 4), True),
    ("dbeta", (5,), True), ("db", (2, 3), False), ("dX", (1, 3), False), ("dinputs", (4,), False),
    ("dparams[1]", (3,), True), ("dW", (3,), True), ("dparams[0]", (5, 3), False)])
def test_one_rule_names_a_bias_gradient(tensor, shape, bias):
    """By role and shape (review26g L3: DLfS-2's dparams[1] of shape (d,) was no bias, read by its name): a
    parameter's row, (d,) or (1, d), broadcast over the batch (a (3,) per-feature scale W too), never an input's."""
    assert is_bias_gradient(tensor, shape) is bias
    assert is_bias_gradient(tensor, shape, parameter=False) is False
    assert is_bias_gradient("dX", (3,), parameter=True) and not is_bias_gradient("db", (3,), parameter=False)


LIST_MEAN_BIAS = """
import numpy as np

W0 = np.array([[0.3, -1.2, 0.5], [1.1, 0.4, -0.7], [-0.2, 0.9, 1.3], [0.6, -0.5, 0.1], [-1.0, 0.2, 0.8]])


class Affine:
    def __init__(self):
        self.params = [W0.copy(), np.array([0.1, -0.2, 0.3])]
        self.grads = [np.zeros_like(W0), np.zeros(3)]

    def forward(self, x):
        self.x = x
        return x @ self.params[0] + self.params[1]

    def backward(self, dout):
        self.grads[0][...] = self.x.T @ dout
        self.grads[1][...] = dout.mean(axis=0)
        return dout @ self.params[0].T
"""


def test_a_list_style_bias_with_a_mean_is_named_as_a_dict_layers_db(tmp_path):
    """review26g L3: the book-2 Affine's dparams[1] = dout.mean(axis=0) was "an extra 1/batch"."""
    from test_cli import both, run_here

    f = tmp_path / "affine.py"
    f.write_text(LIST_MEAN_BIAS, encoding="utf-8")
    p = run_here("check", f"{f}::Affine", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 1 and "diagnosis: dparams[1] is the mean over the batch, not the sum: it is 4 times too " \
        "small (batch size 4)" in text, text
    assert "extra 1/batch" not in text, text


@pytest.mark.parametrize("shape", [(3, 1), (3,), (1, 3)])
def test_the_grader_numbers_alone_say_what_check_says(shape):
    m = 8
    n = np.random.default_rng(0).standard_normal(shape)
    got = n / m
    said = diagnose("db", got, n, batch_size=m)
    bias = shape != (3, 1)
    assert said == name_signature("db", got, n, is_bias=bias, n_batch=m).sentence(), said
    assert ("mean over the batch" in said) is bias, said
