"""The grader reads ``gradcheck check``'s NOT CHECKED of a layer whose weights' update cannot be checked (newuser31b
F1's leftover, session 32): an ML-From-Scratch layer whose ``backward_pass`` never steps the optimizer
``initialize(optimizer)`` gave it, or steps with momentum. check says NOT CHECKED as a whole (exit 3); the grader
scored such a layer 2/2 on a test of dX alone and, against a reference with weights, 0 with a reason check does not
give; a right stepping layer FAILed a dX-only test ("Is the layer deterministic?": it was graded as loaded, its
weights moving at each backward)."""
import json
import shutil
from pathlib import Path

import pytest

from gradcheck.grading.runner import grade_submission

FIXTURE = Path(__file__).parent / "fixtures" / "mlfs_style" / "layers.py"

TESTS = '''
import numpy as np
import pytest


class Ref:
    """Dense (in, out), params W, w0, the fixture's initial values (rng 3)."""

    def __init__(self):
        rng = np.random.default_rng(3)
        self.params = {"W": rng.uniform(-0.5, 0.5, (5, 3)), "w0": rng.uniform(-0.5, 0.5, (1, 3))}
        self.grads = {}

    def forward(self, X, training=True):
        self.X = X
        return X @ self.params["W"] + self.params["w0"]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "w0": dY.sum(0, keepdims=True)}
        return dY @ self.params["W"].T


class RefX(Ref):
    """The same Dense graded on dX alone: W, w0 are not parameters of the test."""

    def __init__(self):
        super().__init__()
        self.W, self.w0 = self.params.pop("W"), self.params.pop("w0")

    def forward(self, X, training=True):
        return X @ self.W + self.w0

    def backward(self, dY):
        return dY @ self.W.T


@pytest.mark.points(3)
@pytest.mark.parametrize("cls", ["Dense", "DenseNoStep", "DenseMomentum"])
def test_weights(student, grade, rng, cls):
    grade.layer_gradients(student.layer("layers.py", cls, n_units=3, input_shape=(5,)),
                          rng.standard_normal((4, 5)), Ref(), seed=1)


@pytest.mark.points(2)
@pytest.mark.parametrize("cls", ["DenseNoStep", "DenseFrozen", "DenseMomentum"])
def test_dx(student, grade, rng, cls):
    grade.layer_gradients(student.layer("layers.py", cls, n_units=3, input_shape=(5,)),
                          rng.standard_normal((4, 5)), RefX(), seed=1)
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The fixture's layers graded once: {test name: (score, output)}."""
    root = tmp_path_factory.mktemp("not_plain")
    (root / "sub").mkdir()
    shutil.copy(FIXTURE, root / "sub" / "layers.py")
    (root / "tests").mkdir()
    (root / "tests" / "test_dense.py").write_text(TESTS)
    r = grade_submission(root / "sub", root / "tests", root / "out", timeout=20.0)
    tests = json.loads(Path(r.results_path).read_text())["tests"]
    return {t["name"]: (t["score"], " ".join(t.get("output", "").replace("\\", "").split())) for t in tests}


NEVER = "backward_pass never stepped its weights (W, w0) with the optimizer initialize(optimizer) gave it"


def test_a_layer_that_never_steps_scores_nothing_on_dx_alone_as_check_says(graded):
    score, out = graded["test_dx[DenseNoStep]"]
    assert score == 0.0, out  # 2.0 before: dX alone scored, check says NOT CHECKED (exit 3)
    assert "NOT CHECKED as a whole: DenseNoStep: the gradients that were checked match" in out, out
    assert NEVER in out and "`dX`: ok" in out, out


def test_a_frozen_layer_is_graded_on_dx(graded):
    score, out = graded["test_dx[DenseFrozen]"]
    assert score == 2.0 and "All checked: `dX` ok" in out, out


def test_a_momentum_step_is_not_checked_as_check_says_and_dx_matches(graded):
    score, out = graded["test_dx[DenseMomentum]"]
    assert score == 0.0 and "`dX`: ok" in out, out  # dX was "wrong ... Is the layer deterministic?" (as loaded)
    assert "NOT CHECKED as a whole: DenseMomentum" in out and "not a plain gradient-descent step" in out, out
    assert "deterministic" not in out, out


@pytest.mark.parametrize("cls", ["DenseNoStep", "DenseMomentum"])
def test_against_weights_the_reason_is_checks(graded, cls):
    score, out = graded[f"test_weights[{cls}]"]
    assert score == 0.0 and "gradcheck check says NOT CHECKED as a whole" in out, out
    assert (NEVER if cls == "DenseNoStep" else "not a plain gradient-descent step") in out, out


def test_a_right_stepping_dense_scores_full(graded):
    score, out = graded["test_weights[Dense]"]
    assert score == 3.0 and "All checked: `dX`, `dW`, `dw0` ok" in out, out
