"""Grading tests of the linear_relu_ce assignment (run by `gradcheck grade`, never by the course's own suite).

The student's classes run in a sandbox process; references (manualprop), numerical
gradients and verdicts stay in the grader. Visible tests use fixed shapes; hidden
tests are properties over random shapes and batch sizes drawn from the session
seed (recorded in results.json), with inputs kept away from ReLU's kink. Every input reaches
each branch its test grades, whatever the seed: a ReLU input has entries on both sides of 0
(``away_from_kinks``), a batch of labels two classes at least (``class_labels``).
"""

import numpy as np
import pytest

from gradcheck.grading import away_from_kinks, class_labels
from gradcheck.grading.checks import as_checked, evaluation_point
from manualprop import Linear as RefLinear
from manualprop import ReLU as RefReLU
from manualprop import SoftmaxCrossEntropy as RefCE

FILE = "layers.py"

# Hand-derived gradients only: no automatic differentiation in the submission.
pytestmark = [pytest.mark.forbid_imports("autoprop", "autograd", "torch", "jax", "tensorflow"),
              pytest.mark.gradcheck_no_forward_in_backward,  # a backward by differences of forward: no credit
              pytest.mark.timeout(3)]


def linear(student, n_in=5, n_out=3):
    return student.layer(FILE, "Linear", in_features=n_in, out_features=n_out)


# --------------------------------------------------------------------------- visible


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
def test_linear_forward(student, grade, rng):
    """Linear: forward output"""
    grade.layer_forward(linear(student), rng.standard_normal((8, 5)), RefLinear(5, 3), points=2)


@pytest.mark.points(6)
@pytest.mark.visibility("visible")
def test_linear_gradients(student, grade, rng):
    """Linear: gradients dX, dW, db (2 points each)"""
    grade.layer_gradients(linear(student), rng.standard_normal((8, 5)), RefLinear(5, 3),
                          parts={"dX": 2, "dW": 2, "db": 2}, seed=1)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
def test_relu_forward(student, grade, rng):
    """ReLU: forward output"""
    X = away_from_kinks(rng.standard_normal((6, 4)))
    grade.layer_forward(student.layer(FILE, "ReLU"), X, RefReLU())


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
def test_relu_gradients(student, grade, rng):
    """ReLU: gradient dX"""
    X = away_from_kinks(rng.standard_normal((6, 4)))
    grade.layer_gradients(student.layer(FILE, "ReLU"), X, RefReLU(), seed=2)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
def test_ce_value(student, grade, rng):
    """Softmax cross-entropy: loss value (mean over the batch)"""
    z = 3 * rng.standard_normal((8, 4))
    y = class_labels(rng, 8, 4)
    grade.loss_value(student.loss(FILE, "SoftmaxCrossEntropy"), y, z, RefCE(), points=2)


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
def test_ce_gradient(student, grade, rng):
    """Softmax cross-entropy: gradient dL/dlogits"""
    z = 3 * rng.standard_normal((8, 4))
    y = class_labels(rng, 8, 4)
    grade.loss_gradient(student.loss(FILE, "SoftmaxCrossEntropy"), y, z, RefCE(), points=3)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
def test_ce_backward_repeatable(student, grade, rng):
    """Softmax cross-entropy: backward() twice gives the same gradient (cache not modified)"""
    z = rng.standard_normal((5, 3))
    y = class_labels(rng, 5, 3)
    ref = RefCE()
    ref.forward(y.copy(), z.copy())  # the points come only with the right gradient
    grade.backward_repeatable(student.loss(FILE, "SoftmaxCrossEntropy"), [y, z], expected=ref.backward())


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.gradcheck_no_forward_in_backward(False)  # a property of dtypes: the policy is the gradient tests' own
def test_dtypes(student, grade, rng):
    """All layers: outputs and gradients are float64"""
    X = away_from_kinks(rng.standard_normal((4, 5)))
    ref_lin, ref_relu, ref_ce = RefLinear(5, 3), RefReLU(), RefCE()
    lin, relu = as_checked(linear(student), ref_lin, X), student.layer(FILE, "ReLU")  # self.W/self.dW too, as check
    ce = student.loss(FILE, "SoftmaxCrossEntropy")
    evaluation_point(lin, ref_lin, seed=4)  # the points come only with right values: the reference's here
    y, Y_ref = np.array([0, 1, 2, 0]), ref_lin.forward(X.copy())
    ref_ce.forward(y.copy(), Y_ref.copy())
    correct = {"Linear Y": Y_ref, "Linear dX": ref_lin.backward(np.ones_like(Y_ref)), "Linear dW": ref_lin.grads["W"],
               "Linear db": ref_lin.grads["b"], "ReLU Y": ref_relu.forward(X.copy()),
               "ReLU dX": ref_relu.backward(np.ones_like(X)), "SoftmaxCrossEntropy dy_pred": ref_ce.backward()}
    Y = lin.forward(X)
    dX = lin.backward(np.ones_like(Y))
    R = relu.forward(X)
    dR = relu.backward(np.ones_like(R))
    ce.forward(y, Y_ref.copy())
    dz = ce.backward()
    grade.dtypes({"Linear Y": Y, "Linear dX": dX, "Linear dW": lin.grads.get("W"),
                  "Linear db": lin.grads.get("b"), "ReLU Y": R, "ReLU dX": dR,
                  "SoftmaxCrossEntropy dy_pred": dz}, points=2, correct=correct, batch_size=4,
                 reproduce_with={"Linear": (lin, X.shape, False), "ReLU": (relu, X.shape, False),
                                 "SoftmaxCrossEntropy": (ce, Y_ref.shape, True)})


# --------------------------------------------------------------------------- hidden properties


@pytest.mark.points(4)
@pytest.mark.visibility("after_due_date")
def test_hidden_linear_random_shapes(student, grade, rng, grading_seed):
    """Hidden: Linear gradients for random sizes and batch sizes"""
    for trial in range(3):
        n, d_in, d_out = (int(v) for v in (rng.integers(2, 17), rng.integers(2, 10), rng.integers(2, 8)))
        grade.note(f"trial {trial}: batch {n}, in {d_in}, out {d_out} (seed {grading_seed})")
        grade.layer_gradients(linear(student, d_in, d_out), rng.standard_normal((n, d_in)),
                              RefLinear(d_in, d_out), parts={"dX": 1, "dW": 1, "db": 1},
                              seed=int(rng.integers(2**31)))
    # a network's two layers: state kept on the class (params = {} in the class body, Linear.X = X) is shared
    grade.note(f"two instances in turn: batch {n}, in {d_in}, out {d_out} (seed {grading_seed})")
    grade.instances_apart([linear(student, d_in, d_out), linear(student, d_in, d_out)],
                          rng.standard_normal((n, d_in)), [RefLinear(d_in, d_out), RefLinear(d_in, d_out)],
                          points=3, seed=int(rng.integers(2**31)))


@pytest.mark.points(2)
@pytest.mark.visibility("after_due_date")
def test_hidden_relu_random_shapes(student, grade, rng, grading_seed):
    """Hidden: ReLU gradient for random shapes (inputs away from 0)"""
    for trial in range(3):
        shape = tuple(int(v) for v in rng.integers(2, 9, size=int(rng.integers(1, 4))))
        grade.note(f"trial {trial}: shape {shape} (seed {grading_seed})")
        X = away_from_kinks(rng.standard_normal(shape) * rng.uniform(0.5, 3))
        grade.layer_gradients(student.layer(FILE, "ReLU"), X, RefReLU(), seed=int(rng.integers(2**31)))
    grade.note(f"two instances in turn: shape {shape} (seed {grading_seed})")  # ReLU.mask = ...: one mask for both
    grade.instances_apart([student.layer(FILE, "ReLU"), student.layer(FILE, "ReLU")], X, [RefReLU(), RefReLU()],
                          seed=int(rng.integers(2**31)))


@pytest.mark.points(2)
@pytest.mark.visibility("after_due_date")
def test_hidden_ce_random(student, grade, rng, grading_seed):
    """Hidden: cross-entropy value and gradient for random batch sizes, classes and logit scales"""
    for trial in range(3):
        n, c = int(rng.integers(2, 17)), int(rng.integers(2, 11))
        grade.note(f"trial {trial}: batch {n}, classes {c} (seed {grading_seed})")
        z = rng.standard_normal((n, c))
        if trial < 2:
            z = z * rng.uniform(0.5, 20)
        else:  # each row's largest logit 1000: exp overflows in float64 (above 709.78) without the max shift
            z = 1000.0 * z / np.take_along_axis(z, np.abs(z).argmax(axis=1)[:, None], axis=1)
        y = class_labels(rng, n, c)
        grade.loss_gradient(student.loss(FILE, "SoftmaxCrossEntropy"), y, z, RefCE())
