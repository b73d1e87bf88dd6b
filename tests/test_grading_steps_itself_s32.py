"""The grader reads ``gradcheck check``'s refusal of a backward that steps its own weights at a rate it cannot find
(newuser32 F4): a params-dict Linear whose backward ends ``self.params["W"] -= 0.1 * self.grads["W"]`` is exit 3 for
check ("backward updates the weights itself ... no gradient was compared") and scored 28/28 in ``grade``, graded as
loaded after its probe was refused. Now a gradient test gives it 0 with check's words; its forward is still graded."""
import json
from pathlib import Path

import pytest

from gradcheck.grading.runner import grade_submission

LAYER = '''
import numpy as np


class Linear:
    def __init__(self, stepping=True):
        rng = np.random.default_rng(3)
        self.params = {"W": rng.uniform(-0.5, 0.5, (3, 5)), "b": rng.uniform(-0.5, 0.5, 3)}
        self.grads, self.stepping = {}, stepping

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(axis=0)
        dX = dY @ self.params["W"]
        if self.stepping:
            self.params["W"] -= 0.1 * self.grads["W"]
            self.params["b"] -= 0.1 * self.grads["b"]
        return dX
'''

TESTS = '''
import numpy as np
import pytest

from manualprop import Linear as RefLinear


@pytest.mark.points(6)
@pytest.mark.parametrize("stepping", [True, False])
def test_gradients(student, grade, rng, stepping):
    grade.layer_gradients(student.layer("layers.py", "Linear", stepping=stepping), rng.standard_normal((4, 5)),
                          RefLinear(5, 3), seed=1)


@pytest.mark.points(2)
def test_forward(student, grade, rng):
    grade.layer_forward(student.layer("layers.py", "Linear"), rng.standard_normal((4, 5)), RefLinear(5, 3))
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The layer graded once: {test name: (score, output)}."""
    root = tmp_path_factory.mktemp("steps_itself")
    (root / "sub").mkdir()
    (root / "sub" / "layers.py").write_text(LAYER)
    (root / "tests").mkdir()
    (root / "tests" / "test_linear.py").write_text(TESTS)
    r = grade_submission(root / "sub", root / "tests", root / "out", timeout=20.0)
    tests = json.loads(Path(r.results_path).read_text())["tests"]
    return {t["name"]: (t["score"], " ".join(t.get("output", "").replace("\\", "").split())) for t in tests}


def test_a_backward_stepping_its_own_weights_scores_nothing_on_gradients_as_check_says(graded):
    score, out = graded["test_gradients[True]"]
    assert score == 0.0, out  # 6.0 before: graded as loaded, check says exit 3
    assert "Linear.backward updates the weights itself (params['W'], params['b'] moved)" in out, out
    assert "no gradient was compared" in out, out


def test_the_same_layer_without_the_step_scores_full(graded):
    score, out = graded["test_gradients[False]"]
    assert score == 6.0 and "All checked: `dX`, `dW`, `db` ok" in out, out


def test_its_forward_is_still_graded(graded):
    score, out = graded["test_forward"]
    assert score == 2.0, out
