"""The grader names one layer object used twice in a model's ``layers`` as ``gradcheck check`` does (session 40).

Lesson 07's bug: ``act = Tanh(); layers = [Linear, act, Linear, act, Linear]``, one activation object whose second
forward overwrites the cache the first use's backward needs. ``gradcheck check`` names it (``reused-sublayer``) for a
layer in its process; the grader, whose layer is sandboxed, said "no known bug pattern" for dX, dW0 and db0: the
diagnosis read ``layers`` in the grader's process alone, and the grader's naming never asked it. Now the list is read
where the layer lives (the child, for a sandboxed one: the ``reused_layers`` adapter call) and the grader's naming
(``name_graded``) gives the same finding where the numbers name no bug.
"""

import json
from pathlib import Path

import numpy as np

from gradcheck.grading import checks
from tests.test_check_fix39 import SHARED_ACTIVATION

#: test_check_fix39's Linear(n_in, n_out, rng) and Tanh (newuser38 F8's model), then a model of them in a list
MODEL = SHARED_ACTIVATION.partition("class MLPShared")[0] + '''
class Net:
    def __init__(self):
        rng = np.random.default_rng(1)
        LAYERS

    @property
    def params(self):
        return {f"{k}{i}": v for i, lay in enumerate(self.layers) for k, v in getattr(lay, "params", {}).items()}

    @property
    def grads(self):
        return {f"{k}{i}": v for i, lay in enumerate(self.layers) for k, v in getattr(lay, "grads", {}).items()}

    def forward(self, X, training=False):
        for layer in self.layers:
            X = layer.forward(X)
        return X

    def backward(self, dY):
        for layer in reversed(self.layers):
            dY = layer.backward(dY)
        return dY
'''
SHARED = MODEL.replace("LAYERS", "act = Tanh()\n        self.layers = [Linear(4, 5, rng), act, Linear(5, 5, rng), act, "
                                 "Linear(5, 2, rng)]")
OWN = MODEL.replace("LAYERS", "self.layers = [Linear(4, 5, rng), Tanh(), Linear(5, 5, rng), Tanh(), Linear(5, 2, rng)]")

TESTS = '''
import pytest
from reference_net import Net as RefNet


@pytest.mark.points(4)
def test_net(student, grade, rng):
    """Net: gradients"""
    grade.layer_gradients(student.layer("layers.py", "Net"), rng.standard_normal((6, 4)), RefNet(), seed=1)
'''

NAMED = ("Net.layers holds one object at layers[1] and layers[3]: one layer object keeps one cache, so its second call "
         "overwrites what the first call's backward needs")


def _module(text: str, name: str):
    ns: dict = {}
    exec(compile(text, name, "exec"), ns)  # noqa: S102 - the test's own model
    return ns


def test_the_grader_names_a_sandboxed_models_reused_activation(tmp_path):
    from gradcheck.grading.runner import grade_submission
    from gradcheck.sandbox import support

    sub, tests = tmp_path / "sub", tmp_path / "tests"
    sub.mkdir()
    tests.mkdir()
    (sub / "layers.py").write_text(SHARED)
    (tests / "reference_net.py").write_text(OWN)
    (tests / "test_net.py").write_text(TESTS)
    r = grade_submission(sub, tests, tmp_path / "out", unsafe_no_isolation=support()[0] == "none")
    row = json.loads(Path(r.results_path).read_text())["tests"][0]
    said = " ".join(row["output"].replace("\\", "").split())  # Markdown's escapes removed
    assert row["score"] < 4 and "no known bug pattern" not in said, said
    for part in ("dX", "dW0", "db0"):  # each wrong part: the reuse, and the fix
        assert f"`{part}`: **wrong** - {NAMED}" in said, said
    assert "give each use its own object" in said and "`dW4`: ok" in said, said


def test_the_grader_names_it_in_process_too_and_not_in_a_model_without_it():
    X = np.random.default_rng(0).standard_normal((6, 4))
    shared, own = _module(SHARED, "shared.py")["Net"](), _module(OWN, "own.py")["Net"]()
    v = checks.layer_gradients(shared, X, _module(OWN, "ref.py")["Net"](), seed=1)
    wrong = {p.name: p.message for p in v.parts if not p.passed}
    assert sorted(wrong) == ["dW0", "dX", "db0"] and all(m.startswith(NAMED) for m in wrong.values()), wrong
    assert checks.layer_gradients(own, X, _module(OWN, "ref.py")["Net"](), seed=1).passed
