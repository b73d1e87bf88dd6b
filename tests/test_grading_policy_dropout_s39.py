"""verify38 F4: under the staff policy ``gradcheck_no_forward_in_backward`` a correct dropout scored 0 on its
training gradients, "Dropout.forward called Dropout.forward again 1 time(s)": the grader holds a random forward's
draws by a subclass whose ``forward`` rewinds the generators and then calls the student's (``_adapters._rewinding``),
and the sandbox child's count read that one call as forward entered again. The policy must charge only calls the
student's code makes: a correct dropout keeps its points (drawing from its own generator or numpy's global one), a
dropout without its scale loses them for its scale, and a backward that calls forward is still caught."""

import json
from pathlib import Path

import pytest

from gradcheck.grading.runner import grade_submission
from tests.test_grading_keys_s35 import shown

LAYERS = '''
import numpy as np


class Dropout:
    """Inverted dropout with its own generator."""

    def __init__(self, p=0.5, seed=0):
        self.p, self.rng, self.mask = p, np.random.default_rng(seed), None
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask


class BareDropout(Dropout):
    """The same without params and grads dicts (read through the attribute-style adapter)."""

    def __init__(self, p=0.5, seed=0):
        self.p, self.rng, self.mask = p, np.random.default_rng(seed), None


class GlobalDropout(Dropout):
    """The same, drawing from numpy's global generator (np.random.rand)."""

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        self.mask = (np.random.rand(*X.shape) >= self.p) / (1 - self.p)
        return X * self.mask


class NoScaleDropout(Dropout):
    """Forward and backward both without 1/(1 - p)."""

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) * 1.0
        return X * self.mask


class ForwardAgainDropout(Dropout):
    """A backward that runs forward again (the policy's case): its numbers are right."""

    def forward(self, X, training=False):
        self.X = X
        return super().forward(X, training)

    def backward(self, dY):
        Y = self.forward(self.X, True)
        return dY * (Y / np.where(self.X == 0, 1, self.X))
'''

TESTS = '''
import pytest
from manualprop import Dropout as RefDropout

pytestmark = [pytest.mark.gradcheck_no_forward_in_backward]


@pytest.mark.parametrize("name", ["Dropout", "BareDropout", "GlobalDropout", "NoScaleDropout",
                                  "ForwardAgainDropout"])
@pytest.mark.points(4)
def test_dropout_training(student, grade, rng, name):
    grade.layer_gradients(student.layer("layers.py", name, p=0.3, seed=0), rng.standard_normal((12, 10)),
                          RefDropout(p=0.3, rng=0), training=True, seed=3)
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("dropout_policy")
    for folder, name, text in [("sub", "layers.py", LAYERS), ("tests", "test_dropout.py", TESTS)]:
        (root / folder).mkdir()
        (root / folder / name).write_text(text)
    r = grade_submission(root / "sub", root / "tests", root / "out", timeout=10.0)
    data = json.loads(Path(r.results_path).read_text())
    return {t["name"].split("[")[-1].rstrip("]"): t for t in data["tests"]}


@pytest.mark.parametrize("name", ["Dropout", "BareDropout", "GlobalDropout"])
def test_a_correct_dropout_keeps_its_points_under_the_policy(graded, name):
    t = graded[name]
    assert t["score"] == 4.0, shown(t["output"])  # before: 0.0, "Dropout.forward called Dropout.forward again"


def test_a_dropout_without_its_scale_loses_them_for_its_scale(graded):
    t = graded["NoScaleDropout"]
    said = " ".join(shown(t["output"]).split())
    assert t["score"] == 0.0 and "scaled by 1," in said and "1/(1 - p)" in said, said
    assert "called" not in said, said


def test_a_backward_calling_forward_is_still_caught(graded):
    t = graded["ForwardAgainDropout"]
    said = " ".join(shown(t["output"]).split())
    assert t["score"] == 0.0 and "ForwardAgainDropout.backward called ForwardAgainDropout.forward 1 time(s)" in said, \
        said
