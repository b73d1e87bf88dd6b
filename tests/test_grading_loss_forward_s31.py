"""newuser30 F8 (session 31): an MSE whose forward sums where the reference averages, with a backward matching the
reference's, lost the gradient test (0 of 3: 'disagrees with central differences of the loss. Does forward compute
the same loss backward differentiates?') and its output never said that the gradient matched the reference. Decided:
a gradient is judged against the student's own forward, as a layer's is (test_grading_evaluation_point's second
source of truth: backward must differentiate the code it belongs to), so the points stay lost; the message now says
plainly that dy_pred matches the reference's while forward computes another loss, with both values."""

import numpy as np
import pytest

from gradcheck.grading.checks import loss_gradient, loss_value
from manualprop import MeanSquaredError


class StudentMSE:
    """``forward`` sums (``mean=False``) or averages; ``backward`` is the reference's (mean) or its own forward's."""

    def __init__(self, mean=False, own=False):
        self.mean, self.own = mean, own

    def forward(self, y_true, y_pred):
        self.diff = y_pred - y_true
        return float(np.mean(self.diff ** 2) if self.mean else np.sum(self.diff ** 2))

    def backward(self):
        return 2.0 * self.diff / (1 if self.own else self.diff.size)


@pytest.fixture
def point():
    rng = np.random.default_rng(3)
    return rng.standard_normal((4, 3)), rng.standard_normal((4, 3))


def test_sum_forward_with_the_reference_s_backward_is_told_it_matches_the_reference(point):
    y, p = point
    assert not loss_value(StudentMSE(), y, p, MeanSquaredError(), points=2).passed  # the forward's test fails too
    v = loss_gradient(StudentMSE(), y, p, MeanSquaredError(), points=3)
    (part,) = v.parts
    L, L_ref = float(np.sum((p - y) ** 2)), float(np.mean((p - y) ** 2))
    assert not v.passed and v.fraction == 0.0
    assert part.message.startswith("dy_pred disagrees with central differences of the loss: max relative error ")
    assert part.message.endswith(
        f"dy_pred matches the reference's, but your forward gives L = {L:.6g} where the reference gives {L_ref:.6g} "
        "(12 times it): backward differentiates the assignment's function and forward another, and a gradient is "
        "judged against its own forward (fix forward; its own test says how).")
    assert loss_gradient(StudentMSE(), y, p, MeanSquaredError(), points=3, numerical=False).passed  # the reference alone


def test_a_backward_of_its_own_sum_forward_still_fails_against_the_reference(point):
    y, p = point
    v = loss_gradient(StudentMSE(own=True), y, p, MeanSquaredError(), points=3)
    assert not v.passed and v.fraction == 0.0


def test_a_right_forward_with_a_backward_unlike_its_central_differences_still_fails(point):
    class Drifting(StudentMSE):  # matches the reference once, then accumulates: the check's later calls see 2x
        calls = 0

        def backward(self):
            Drifting.calls += 1
            return Drifting.calls * super().backward()

    y, p = point
    assert loss_value(Drifting(mean=True), y, p, MeanSquaredError()).passed
    v = loss_gradient(Drifting(mean=True), y, p, MeanSquaredError(), points=3)
    assert not v.passed and "matches the reference's, but your forward" not in v.parts[0].message
