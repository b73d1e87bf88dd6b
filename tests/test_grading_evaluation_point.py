"""The grader chooses the evaluation point and no non-finite value earns a point (issue 11, section 2).

The checks run here on plain (unsandboxed) student-style layers, so each case is one
call; tests/test_grading_hostile.py runs the same attacks through the sandbox.
"""

import numpy as np
import pytest
from student_layers import StudentLinear as BaseStudentLinear

from gradcheck.errors import NonFiniteError, StudentCodeError
from gradcheck.grading.checks import (
    GradingTestError,
    backward_repeatable,
    evaluation_point,
    layer_forward,
    layer_gradients,
    loss_gradient,
    loss_value,
)
from manualprop import Linear as RefLinear
from manualprop import SoftmaxCrossEntropy as RefCE


class StudentLinear(BaseStudentLinear):
    """The shared student-style Linear (5 -> 3), its bias set by the constructor."""

    def __init__(self, b=0.0):
        super().__init__(5, 3)
        self.params["b"][...] = b


class NoBias(StudentLinear):
    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T


class Nonsense(StudentLinear):
    """Whatever comes in, infinity goes out (forward and backward)."""

    def forward(self, X, training=False):
        self.X = X
        return np.full((X.shape[0], 3), np.inf)

    def backward(self, dY):
        self.grads = {"W": np.full((3, 5), np.inf), "b": np.full(3, np.inf)}
        return np.full(self.X.shape, np.inf)


class NaNReference(RefLinear):
    """A broken reference (the test's fault): NaN in its output and gradients."""

    def forward(self, X, training=False):
        return super().forward(X, training=training) * np.nan

    def backward(self, dY):
        return super().backward(dY) * np.nan


X = np.random.default_rng(1).standard_normal((8, 5))


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
def test_a_non_finite_parameter_of_the_student_is_refused(value):
    """Before: the student's b = inf was copied into the reference, so inf "matched" inf: 8 of 8 points."""
    for check in (layer_forward, layer_gradients):
        with pytest.raises(StudentCodeError, match=r"params\['b'\] holds NaN or infinity"):
            check(StudentLinear(b=value), X, RefLinear(5, 3))


def test_wrong_keys_or_shapes_of_the_students_parameters_are_refused():
    layer = StudentLinear()
    layer.params["b"] = np.zeros(4)
    with pytest.raises(StudentCodeError, match=r"params\['b'\] has shape \(4,\); the assignment expects \(3,\)"):
        layer_forward(layer, X, RefLinear(5, 3))
    layer.params = {"W": np.zeros((3, 5))}
    with pytest.raises(StudentCodeError, match=r"StudentLinear's parameters are W; the assignment expects W, b \(a params dict"):
        layer_gradients(layer, X, RefLinear(5, 3))


def test_the_grader_draws_the_parameters_and_writes_them_into_both_layers():
    layer, ref = StudentLinear(), RefLinear(5, 3)
    point = evaluation_point(layer, ref, seed=7)
    for k in ("W", "b"):
        assert np.array_equal(layer.params[k], point[k]) and np.array_equal(ref.params[k], point[k])
    assert np.all(point["b"] != 0)  # the student's zero bias is gone
    drawn = evaluation_point(BaseStudentLinear(400, 3), RefLinear(400, 3), seed=7)["W"]
    assert 0.5 / 20 < float(np.sqrt(np.mean(drawn ** 2))) < 2 / 20  # LeCun's scale 1/sqrt(400)
    again = evaluation_point(StudentLinear(), RefLinear(5, 3), seed=7)
    other = evaluation_point(StudentLinear(), RefLinear(5, 3), seed=8)
    assert np.array_equal(again["W"], point["W"]) and not np.array_equal(other["W"], point["W"])


def test_the_tests_own_parameters_are_used_and_checked():
    given = {"W": np.arange(15.0).reshape(3, 5), "b": np.array([1.0, -2.0, 3.0])}
    layer = StudentLinear()
    assert layer_forward(layer, X, RefLinear(5, 3), params=given).passed
    assert np.array_equal(layer.params["W"], given["W"]) and np.array_equal(layer.params["b"], given["b"])
    with pytest.raises(GradingTestError, match="do not match the reference"):
        evaluation_point(StudentLinear(), RefLinear(5, 3), params={"W": given["W"]})
    with pytest.raises(GradingTestError, match="contains NaN or infinity"):
        evaluation_point(StudentLinear(), RefLinear(5, 3), params={**given, "b": np.array([np.nan, 0, 0])})


def test_a_forward_without_the_bias_fails_now_that_the_bias_is_not_zero():
    """The student's constructor sets b = 0, which used to hide a forward that forgets ``+ b``."""
    assert layer_forward(StudentLinear(), X, RefLinear(5, 3)).passed
    v = layer_forward(NoBias(), X, RefLinear(5, 3))
    assert not v.passed and "the output differs from the expected one" in v.parts[0].message


def test_infinity_from_the_student_is_wrong_everywhere():
    with pytest.raises(NonFiniteError, match="gave Y containing 24 non-finite value"):
        layer_forward(Nonsense(), X, RefLinear(5, 3))
    with pytest.raises(NonFiniteError, match="non-finite"):  # the forward of a gradient test: refused
        layer_gradients(Nonsense(), X, RefLinear(5, 3))

    class InfBackward(Nonsense):
        forward = StudentLinear.forward

    v = layer_gradients(InfBackward(), X, RefLinear(5, 3), numerical=False)
    assert [(p.name, p.passed) for p in v.parts] == [("dX", False), ("dW", False), ("db", False)]
    assert all("contains NaN or infinity" in p.message for p in v.parts)
    twice = backward_repeatable(Nonsense(), [X], dY=np.ones((8, 3)))
    assert not twice.passed and "NaN or infinity" in twice.parts[0].message


def test_a_non_finite_reference_is_an_error_of_the_test_not_a_skipped_element():
    """Before: NaN in the reference gradient marked every element "untrustworthy", so any dX passed."""
    with pytest.raises(GradingTestError, match="reference output Y contains NaN or infinity"):
        layer_forward(StudentLinear(), X, NaNReference(5, 3))
    with pytest.raises(GradingTestError, match="reference output Y"):
        layer_gradients(StudentLinear(), X, NaNReference(5, 3))
    from gradcheck.errors import GraderError

    assert issubclass(GradingTestError, GraderError)  # the plugin reports a grader error, not a score


class InfLoss:
    """A loss whose value is +inf where the test expects it (log of 0)."""

    def __init__(self, value=np.inf, grad=None):
        self.value, self.grad = value, grad

    def forward(self, y_true, y_pred):
        self.n = y_pred.shape
        return self.value

    def backward(self):
        return np.zeros(self.n) if self.grad is None else self.grad


def test_expected_non_finite_values_must_be_matched_exactly():
    y, z = np.array([0, 1]), np.zeros((2, 3))
    with pytest.raises(GradingTestError, match="reference loss value"):
        loss_value(InfLoss(), y, z, InfLoss())
    assert loss_value(InfLoss(), y, z, InfLoss(), expect_nonfinite=True).passed
    assert not loss_value(InfLoss(-np.inf), y, z, InfLoss(), expect_nonfinite=True).passed
    assert not loss_value(InfLoss(1e300), y, z, InfLoss(), expect_nonfinite=True).passed
    ref = StudentLinear()
    ref.params["b"][:] = 1.0

    class InfAt(RefLinear):  # the test means Y[0, 0] = inf
        def forward(self, X, training=False):
            Y = super().forward(X, training=training)
            Y[0, 0] = np.inf
            return Y

    class SameInf(StudentLinear):
        def forward(self, X, training=False):
            Y = super().forward(X, training=training)
            Y[0, 0] = np.inf
            return Y

    assert layer_forward(SameInf(), X, InfAt(5, 3), expect_nonfinite=True).passed
    v = layer_forward(StudentLinear(), X, InfAt(5, 3), expect_nonfinite=True)
    assert not v.passed and "Y[0, 0]" in v.parts[0].message and "expected inf" in v.parts[0].message


def test_a_loss_gradient_with_nan_is_wrong_and_a_nan_reference_is_a_test_error():
    y, z = np.array([0, 1, 2]), np.random.default_rng(2).standard_normal((3, 4))
    ce = RefCE()
    ce.forward(y, z)
    good = ce.backward()
    assert loss_gradient(InfLoss(1.0, good), y, z, RefCE(), numerical=False).passed
    bad = good.copy()
    bad[1, 2] = np.nan
    v = loss_gradient(InfLoss(1.0, bad), y, z, RefCE(), numerical=False)
    assert not v.passed and "dy_pred contains NaN or infinity" in v.parts[0].message
    with pytest.raises(GradingTestError, match="reference gradient dL/dlogits"):
        loss_gradient(InfLoss(1.0, good), y, z, InfLoss(1.0, bad))


def test_the_one_rule_never_lets_an_infinity_match_a_number():
    """``|inf - x| <= rtol * (|inf| + |x|)`` holds for every x: the rule excludes it explicitly."""
    from gradcheck.compare import close

    assert not close(np.inf, 1.0) and not close(1.0, np.inf) and not close(np.inf, -np.inf)
    assert not close(np.inf, 1e300) and not close(np.nan, np.nan) and not close(np.nan, 1.0)
    assert close(np.inf, np.inf) and close(-np.inf, -np.inf) and close(np.nan, np.nan, equal_nan=True)
    assert close([1.0, 2.0], [1.0, 2.0 + 1e-12]) and not close([1.0, np.inf], [1.0, 2.0])
    ce = RefCE()  # before: a loss gradient of inf everywhere "matched" the reference (no finite check there)
    y, z = np.array([0, 1]), np.ones((2, 3))
    v = loss_gradient(InfLoss(1.0, np.full((2, 3), np.inf)), y, z, ce, numerical=False)
    assert not v.passed


def test_a_backward_that_matches_the_reference_but_not_its_own_forward_fails_by_central_differences():
    """The second source of truth: the pipeline's check_layer / check_loss on the student's object."""

    class DoubleBias(StudentLinear):  # forward adds 2 b; backward is the reference's (db = sum dY)
        def forward(self, X, training=False):
            return super().forward(X, training=training) + self.params["b"]

    v = layer_gradients(DoubleBias(), X, RefLinear(5, 3), parts={"dX": 1, "dW": 1, "db": 2})
    assert [(p.name, p.passed) for p in v.parts] == [("dX", True), ("dW", True), ("db", False)]
    assert v.fraction == pytest.approx(0.5)
    assert v.parts[2].message.startswith("db disagrees with central differences: max relative error ")
    assert "> 1e-06 (worst element db[" in v.parts[2].message
    assert layer_gradients(DoubleBias(), X, RefLinear(5, 3), numerical=False).passed  # the reference alone

    class InPlace(StudentLinear):  # right numbers, but backward writes into dY
        def backward(self, dY):
            out = super().backward(dY.copy())
            dY[...] = 0
            return out

    for numerical in (True, False):  # check's rule on dY, judged with or without central differences (tester21g H)
        v = layer_gradients(InPlace(), X, RefLinear(5, 3), numerical=numerical)
        assert not any(p.passed for p in v.parts)
        assert all(p.message.startswith("InPlace.backward modified its upstream gradient dY in place;")
                   for p in v.parts)

    y, z = np.array([0, 1, 2]), np.random.default_rng(3).standard_normal((3, 4))

    class DoubleCE(RefCE):  # forward twice the loss, backward the gradient of the loss once
        def forward(self, y_true, y_pred):
            return 2 * super().forward(y_true, y_pred)

    v = loss_gradient(DoubleCE(), y, z, RefCE())
    assert not v.passed and v.parts[0].message.startswith(
        "dy_pred disagrees with central differences of the loss: max relative error ")
    assert v.parts[0].message.endswith(  # the question answered: forward gives another L (newuser30 F8)
        "dy_pred matches the reference's, but your forward gives L = {:.6g} where the reference gives {:.6g} (2 times "
        "it): backward differentiates the assignment's function and forward another, and a gradient is judged against "
        "its own forward (fix forward; its own test says how).".format(DoubleCE().forward(y, z), RefCE().forward(y, z)))
    assert loss_gradient(RefCE(), y, z, RefCE()).passed
