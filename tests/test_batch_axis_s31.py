"""The batch-of-one warning when a weight multiplies X either way (review31 BATCH_AXIS_FEATURE_OF_ONE).

X of shape (4, 1) beside a weight (1, 4) is four samples of one feature to ``X @ W`` and one sample of four to
``W @ X`` (batch-last): the shapes cannot tell, so the warning gives both readings instead of asserting a batch of
one; a weight multiplying X one way only keeps its plain warning or none.
"""
import warnings

import numpy as np
import pytest

from gradcheck._validation import warn_batch_of_one


def _warned(X, weights):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = warn_batch_of_one([X], ["X"], "Lin", weights)
    assert [str(w.message) for w in caught] == ([text] if text else []), caught
    return text


def test_a_weight_of_shape_1_by_n_beside_x_n_by_1_gives_both_readings():
    text = _warned(np.ones((4, 1)), [np.ones((1, 4))])
    assert text.startswith("batch of one? Lin is checked with X of shape (4, 1) beside a weight of shape (1, 4)"), text
    assert "if each row is a sample (X @ W), the batch is 4 and this does not apply" in text, text
    assert "if each column is one (W @ X, batch-last), the batch is 1" in text and "e.g. (4, 2)." in text, text


@pytest.mark.parametrize(("X", "W", "start"), [
    ((5, 1), (3, 5), "batch of one: Lin is checked with X of shape (5, 1) (its batch axis is axis 1"),  # W @ X only
    ((1, 5), (5, 3), "batch of one: Lin is checked with X of shape (1, 5), and"),  # X @ W only, one row
    ((4, 1), (1, 3), ""),  # X @ W only: 4 samples of one feature, no warning
])
def test_a_weight_multiplying_x_one_way_only_keeps_its_reading(X, W, start):
    text = _warned(np.ones(X), [np.ones(W)])
    assert text.startswith(start) and (text == "") == (start == ""), text
