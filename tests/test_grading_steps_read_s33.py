"""Session 33 (fixv33; review33's surviving mutant grd_steps_read_no_colon): a sandboxed attribute-style layer whose
``backward(dY, lr)`` takes the gradient-descent step itself (its gradients read from the steps: ``grad_attrs``
``W:...``) is graded through its probed copy, as ``gradcheck check`` reads it, not as loaded (where its weights move
at each backward), whether or not the reference has parameters (``grading.checks._steps_read``)."""
import json
import shutil
from pathlib import Path

import pytest

from gradcheck.grading.runner import grade_submission

FIXTURE = Path(__file__).parent / "fixtures" / "steps_itself_s33" / "layers.py"

TESTS = '''
import numpy as np
import pytest


class Ref:
    def __init__(self):
        rng = np.random.default_rng(3)
        self.params = {"W": rng.uniform(-0.5, 0.5, (5, 3)), "b": rng.uniform(-0.5, 0.5, 3)}
        self.grads = {}

    def forward(self, X, training=True):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "b": dY.sum(0)}
        return dY @ self.params["W"].T


class RefX:
    def __init__(self):
        rng = np.random.default_rng(3)
        self.W, self.b = rng.uniform(-0.5, 0.5, (5, 3)), rng.uniform(-0.5, 0.5, 3)
        self.params, self.grads = {}, {}

    def forward(self, X, training=True):
        return X @ self.W + self.b

    def backward(self, dY):
        return dY @ self.W.T


@pytest.mark.points(3)
def test_weights(student, grade, rng):
    grade.layer_gradients(student.layer("layers.py", "Dense"), rng.standard_normal((4, 5)), Ref(), seed=1)


@pytest.mark.points(2)
def test_dx(student, grade, rng):
    grade.layer_gradients(student.layer("layers.py", "Dense"), rng.standard_normal((4, 5)), RefX(), seed=1)
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("steps_read")
    (root / "sub").mkdir()
    shutil.copy(FIXTURE, root / "sub" / "layers.py")
    (root / "tests").mkdir()
    (root / "tests" / "test_dense.py").write_text(TESTS)
    r = grade_submission(root / "sub", root / "tests", root / "out", timeout=20.0)
    tests = json.loads(Path(r.results_path).read_text())["tests"]
    return {t["name"]: (t["score"], " ".join(t.get("output", "").replace("\\", "").split())) for t in tests}


def test_a_self_stepping_layer_is_graded_on_its_steps(graded):
    score, out = graded["test_weights"]
    assert score == 3.0 and "All checked: `dX`, `dW`, `db` ok." in out, out


def test_a_self_stepping_layer_against_a_reference_without_parameters_is_read_as_check_reads_it(graded):
    """Through the probed copy (the one check reads): its parameters W, b against a reference with none, said so
    with how its steps are read; as loaded (the mutant) it scored 2/2 on dX without a word of its weights."""
    score, out = graded["test_dx"]
    assert score == 0.0, out
    assert "Dense's parameters are W, b; the assignment's reference has no parameters" in out, out
    assert "backward(dY, lr) updates the weights itself" in out, out
