"""The grader compares a layer or loss with its reference at large inputs too, as ``gradcheck check`` does (session 40).

``gradcheck check --reference`` compares a layer or loss again at inputs shifted by 1000 (X + 1000, X - 1000, rows
shifted apart: :mod:`gradcheck._large_inputs`), so a softmax without the max shift FAILs there; the grader's
``layer_gradients`` and ``loss_gradient`` compared at the test's input alone, where it is right, and gave it full
marks. Now the same probe runs in the grader: the unshifted softmax and cross-entropy lose the test's points, the
sentence saying why (inputs of size 1000 overflow exp; subtract each row's max); the shifted ones keep theirs. The
submissions are graded in the sandbox (the layer's copies are the child's clones; the reference runs here).
"""

import json
from pathlib import Path

import numpy as np
import pytest

from gradcheck.grading import checks, class_labels
from manualprop import Softmax as RefSoftmax
from manualprop import SoftmaxCrossEntropy as RefCE

SOFTMAX = '''
import numpy as np


class Softmax:
    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        e = np.exp(SHIFTED)
        self.Y = e / e.sum(axis=1, keepdims=True)
        return self.Y

    def backward(self, dY):
        return self.Y * (dY - (dY * self.Y).sum(axis=1, keepdims=True))


class SoftmaxCrossEntropy:
    def forward(self, y_true, y_pred):
        X = y_pred
        e = np.exp(SHIFTED)
        self.p, self.y = e / e.sum(axis=1, keepdims=True), np.asarray(y_true)
        return float(-np.log(self.p[np.arange(len(self.y)), self.y]).mean())

    def backward(self):
        d = self.p.copy()
        d[np.arange(len(self.y)), self.y] -= 1.0
        return d / len(self.y)
'''

TESTS = '''
import pytest
from gradcheck.grading import class_labels
from manualprop import Softmax as RefSoftmax
from manualprop import SoftmaxCrossEntropy as RefCE


@pytest.mark.points(2)
def test_softmax(student, grade, rng):
    """Softmax: gradient dX"""
    grade.layer_gradients(student.layer("layers.py", "Softmax"), rng.standard_normal((6, 4)), RefSoftmax(), seed=1)


@pytest.mark.points(3)
def test_ce(student, grade, rng):
    """Cross-entropy: gradient dL/dlogits"""
    z = 3 * rng.standard_normal((8, 4))
    grade.loss_gradient(student.loss("layers.py", "SoftmaxCrossEntropy"), class_labels(rng, 8, 4), z, RefCE(),
                        points=3)
'''

ROW_MAX = "X - X.max(axis=1, keepdims=True)"


def _rows(tmp_path: Path, shifted: str) -> dict:
    from gradcheck.grading.runner import grade_submission
    from gradcheck.sandbox import support

    sub, tests = tmp_path / "sub", tmp_path / "tests"
    sub.mkdir()
    tests.mkdir()
    (sub / "layers.py").write_text(SOFTMAX.replace("SHIFTED", shifted))
    (tests / "test_softmax.py").write_text(TESTS)
    r = grade_submission(sub, tests, tmp_path / "out", unsafe_no_isolation=support()[0] == "none")
    return {t["name"]: t for t in json.loads(Path(r.results_path).read_text())["tests"]}


def test_an_unshifted_softmax_and_cross_entropy_lose_their_points_saying_why(tmp_path):
    rows = _rows(tmp_path, "X")
    for name, part in (("Softmax: gradient dX", "dX"), ("Cross-entropy: gradient dL/dlogits", "dy_pred")):
        said = " ".join(rows[name]["output"].split())
        assert rows[name]["score"] == 0, (name, said)
        assert f"{part} matches the reference's at the test's" in said and "1000" in said, said
        assert "overflow" in said and "subtract each row's max first" in said, said


def test_the_shifted_ones_keep_their_points(tmp_path):
    rows = _rows(tmp_path, ROW_MAX)
    assert {n: (t["score"], t["max_score"]) for n, t in rows.items()} == {
        "Softmax: gradient dX": (2, 2), "Cross-entropy: gradient dL/dlogits": (3, 3)}, rows


class _Softmax:
    """In this process: the max subtracted by row, over the whole batch (``"global"``: X - 1000 and X + 1000 pass,
    the rows shifted apart do not), or not at all."""

    def __init__(self, how):
        self.how, self.params, self.grads = how, {}, {}

    def forward(self, X, training=False):
        m = {"row": X.max(axis=1, keepdims=True), "global": X.max(), "none": 0.0}[self.how]
        e = np.exp(X - m)
        self.Y = e / e.sum(axis=1, keepdims=True)
        return self.Y

    def backward(self, dY):
        return self.Y * (dY - (dY * self.Y).sum(axis=1, keepdims=True))


@pytest.mark.parametrize("how, passed, at", [("row", True, ""), ("global", False, "X +/- 1000 by row"),
                                             ("none", False, "X + 1000")])
def test_each_shift_is_graded_as_check_judges_it(how, passed, at):
    X = np.random.default_rng(0).standard_normal((6, 4))
    with np.errstate(all="ignore"):
        v = checks.layer_gradients(_Softmax(how), X, RefSoftmax())
    assert v.passed is passed, v.markdown()
    if not passed:
        assert v.parts[0].message.startswith(f"dX matches the reference's at the test's input; at {at} "), v.markdown()


def test_a_correct_cross_entropy_graded_at_logits_near_800_keeps_its_points():
    """newuser26's hidden test's logits, 800 + 40 N(0, 1): compared again near 1800 and -200, it still matches."""
    rng = np.random.default_rng(1)
    z, y = 800 + 40 * rng.standard_normal((6, 5)), class_labels(rng, 6, 5)
    v = checks.loss_gradient(RefCE(), y, z, RefCE(), points=1)
    assert v.passed and v.fraction == 1.0, v.markdown()
