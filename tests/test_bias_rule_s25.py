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
    ("dbeta", (5,), True), ("dW", (3,), False), ("db", (2, 3), False), ("dX", (1, 3), False)])
def test_one_rule_names_a_bias_gradient(tensor, shape, bias):
    assert is_bias_gradient(tensor, shape) is bias


@pytest.mark.parametrize("shape", [(3, 1), (3,), (1, 3)])
def test_the_grader_numbers_alone_say_what_check_says(shape):
    m = 8
    n = np.random.default_rng(0).standard_normal(shape)
    got = n / m
    said = diagnose("db", got, n, batch_size=m)
    bias = shape != (3, 1)
    assert said == name_signature("db", got, n, is_bias=bias, n_batch=m).sentence(), said
    assert ("mean over the batch" in said) is bias, said
