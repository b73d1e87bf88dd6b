"""Session 41 (helper check41), grade40's leftover: the grader's forward-only tests (``layer_forward``,
``loss_value``) probe at inputs of size 1000 as ``layer_gradients``/``loss_gradient`` do: an unshifted softmax's
forward is NaN at X + 1000 (a wrong forward), and loses the test's points with check's sentence; the shifted keep
theirs. Forward alone, at most three forwards of the submission, the first difference ending the probe."""

import numpy as np
import pytest

from gradcheck.grading import checks, class_labels
from manualprop import Softmax as RefSoftmax
from manualprop import SoftmaxCrossEntropy as RefCE


class _Softmax:
    def __init__(self, how):
        self.how, self.params, self.grads = how, {}, {}

    def forward(self, X, training=False):
        m = {"row": X.max(axis=1, keepdims=True), "global": X.max(), "none": 0.0}[self.how]
        e = np.exp(X - m)
        return e / e.sum(axis=1, keepdims=True)

    def backward(self, dY):  # pragma: no cover - forward alone is graded
        raise AssertionError("layer_forward calls no backward")


class _CE:
    def __init__(self, how):
        self.how = how

    def forward(self, y_true, y_pred):
        m = {"row": y_pred.max(axis=1, keepdims=True), "none": 0.0}[self.how]
        e = np.exp(y_pred - m)
        p = e / e.sum(axis=1, keepdims=True)
        return float(-np.log(p[np.arange(len(y_true)), y_true]).mean())


@pytest.mark.parametrize("how, passed, at", [("row", True, ""), ("global", False, "X +/- 1000 by row"),
                                             ("none", False, "X + 1000")])
def test_layer_forward_is_graded_at_large_inputs_too(how, passed, at):
    X = np.random.default_rng(0).standard_normal((6, 4))
    with np.errstate(all="ignore"):
        v = checks.layer_forward(_Softmax(how), X, RefSoftmax())
    assert v.passed is passed, v.markdown()
    if not passed:
        said = v.parts[0].message
        assert said.startswith(f"Y matches the reference's at the test's input; at {at} "), said
        assert how == "global" or "subtract each row's max first" in said, said


@pytest.mark.parametrize("how", ["row", "none"])
def test_loss_value_is_graded_at_large_logits_too(how):
    rng = np.random.default_rng(1)
    z, y = 3 * rng.standard_normal((8, 4)), class_labels(rng, 8, 4)
    with np.errstate(all="ignore"):
        v = checks.loss_value(_CE(how), y, z, RefCE())
    assert v.passed is (how == "row"), v.markdown()
    if how == "none":
        assert v.parts[0].message.startswith("the loss matches the reference's at the test's logits; at y_pred + 1000")
        assert "subtract each row's max first" in v.parts[0].message
