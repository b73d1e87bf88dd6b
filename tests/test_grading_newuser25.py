"""newuser25's findings on the grader (a LayerNorm, Conv1D and GRU cell assignment, 10 submissions).

H1: a diagnosis changed the score. Lesson 32b's ``gru_bug.py`` (dH without the direct path ``dY * z``) scored 1/6,
its correct dW_ih, dW_hh, db_ih and db_hh "all zeros", 5/6 with ``numerical=False``: the "gated direct path
missing" signature of dH ran the student's backward again after zeroing the layer's gradients in place, the very
arrays the grader then scored. What is scored is now copied before any diagnosis runs, and the evaluation point is
put back after it (:func:`gradcheck.grading.checks._frozen`, ``_params_kept``).
"""

from pathlib import Path

import numpy as np
import pytest

from gradcheck.grading import checks
from gradcheck.sandbox import Sandbox
from tests.buggy_layers import lessons23 as L23

GRU_X = [np.random.default_rng(0).standard_normal((4, 3)), np.random.default_rng(1).standard_normal((4, 5))]
LSTM_X = [np.random.default_rng(2).standard_normal((4, 3)), *np.random.default_rng(3).standard_normal((2, 4, 5))]


class GRUInPlace(L23.GRUCellNoDirectPath):
    """The same bug, its gradients written into the arrays ``grads`` already holds (``grads[k][...] = ...``): a
    backward run again by a diagnosis at another dY overwrites what the first one gave."""

    def backward(self, dY):
        kept = {k: v for k, v in self.grads.items()}
        ret = super().backward(dY)
        for k, v in kept.items():
            v[...] = self.grads[k]
            self.grads[k] = v
        return ret


def _graded(layer, xs, reference, numerical):
    verdict = checks.layer_gradients(layer, xs, reference, points=len(reference.params) + len(xs),
                                     numerical=numerical)
    return {p.name: p.passed for p in verdict.parts}, verdict


@pytest.mark.parametrize("bug,reference,xs,wrong", [
    (L23.GRUCellNoDirectPath, L23.GRUCell, GRU_X, "dH"),
    (GRUInPlace, L23.GRUCell, GRU_X, "dH"),
    (L23.LSTMCellNoForgetGate, L23.LSTMCell, LSTM_X, "dC"),
], ids=["gru", "gru-in-place", "lstm"])
def test_a_diagnosis_never_changes_the_score(bug, reference, xs, wrong):
    alone, _ = _graded(bug(), xs, reference(), numerical=False)  # named from its numbers: nothing runs again
    named, verdict = _graded(bug(), xs, reference(), numerical=True)
    assert named == alone, verdict.markdown()
    assert [n for n, ok in named.items() if not ok] == [wrong], verdict.markdown()
    assert "all zeros" not in verdict.markdown()


def test_the_gru_without_its_direct_path_scores_5_of_6_and_is_named():
    _, verdict = _graded(L23.GRUCellNoDirectPath(), GRU_X, L23.GRUCell(), numerical=True)
    assert verdict.fraction == pytest.approx(5 / 6), verdict.markdown()
    (part,) = [p for p in verdict.parts if not p.passed]
    assert part.message.startswith("dH lacks the direct path from H to the output"), part.message


def test_the_sandboxed_gru_scores_5_of_6(tmp_path):
    """As ``gradcheck grade`` runs it (newuser25's rep4: 1/6 before)."""
    with Sandbox(files={"lessons23.py": L23.__file__}, timeout=20, hostile=True) as sb:
        layer = sb.load_layer("lessons23.py", "GRUCellNoDirectPath", {})
        verdict = checks.layer_gradients(layer, GRU_X, L23.GRUCell(), points=6)
    assert {p.name: p.passed for p in verdict.parts} == {
        "dX": True, "dH": False, "dW_ih": True, "dW_hh": True, "db_ih": True, "db_hh": True}, verdict.markdown()
    assert verdict.fraction == pytest.approx(5 / 6)


def test_the_evaluation_point_is_put_back_after_the_diagnosis():
    """A signature that left a weight stepped would have the other parts confirmed at another point."""
    layer = L23.GRUCellNoDirectPath()
    point = {}

    diagnose = checks.diagnose

    def spoil(*args, **kwargs):
        said = diagnose(*args, **kwargs)
        if said and not point:
            point.update({k: v.copy() for k, v in layer.params.items()})
            layer.params["W_hh"][...] = 0.0  # what a signature that fails to put its weight back leaves
        return said

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checks, "diagnose", spoil)
        verdict = checks.layer_gradients(layer, GRU_X, L23.GRUCell(), points=6)
    assert point and all(np.array_equal(layer.params[k], v) for k, v in point.items())
    assert verdict.fraction == pytest.approx(5 / 6), verdict.markdown()


# ---- H2: every trial of a test runs and counts
ONE_BATCH_BUG = '''
import numpy as np

class Linear:
    def __init__(self, in_features, out_features):
        self.params = {"W": np.zeros((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.mean(axis=0) if len(dY) == 3 else dY.sum(axis=0)  # BUG at a batch of 3 alone
        return dY @ self.params["W"]
'''

TRIALS = '''
import pytest
from manualprop import Linear as RefLinear

def trials(student, grade, rng, batches):
    for trial, n in enumerate(batches):
        grade.note(f"trial {trial}: batch {n}")
        grade.layer_gradients(student.layer("layers.py", "Linear", in_features=3, out_features=2),
                              rng.standard_normal((n, 3)), RefLinear(3, 2), points=1, seed=trial)

@pytest.mark.points(6)
def test_bug_first(student, grade, rng):
    """the failing trial first"""
    trials(student, grade, rng, (3, 4))

@pytest.mark.points(6)
def test_bug_last(student, grade, rng):
    """the failing trial last"""
    trials(student, grade, rng, (4, 5, 3))

@pytest.mark.points(2)
def test_no_bug(student, grade, rng):
    """no failing trial"""
    trials(student, grade, rng, (2, 4))
'''


def _module(text, name):
    import types

    mod = types.ModuleType(name)
    exec(compile(text, f"{name}.py", "exec"), mod.__dict__)  # noqa: S102 - the test's own code
    return mod


def test_every_trial_counts_whichever_fails_first():
    """newuser25 H2: rep2's k1_only and cout1_only (one Conv1D bug, failing in another trial) scored 2/3 and 8/9 of
    the hidden test: the trials after the first failure never ran. Each trial's parts count now, in any order."""
    import types

    from gradcheck.grading.plugin import Grade
    from manualprop import Linear as RefLinear

    mod = _module(ONE_BATCH_BUG, "one_batch_bug")
    fractions = {}
    for batches in ((3, 4), (4, 3), (4, 5, 3)):
        grade = Grade(types.SimpleNamespace(stash={}))
        rng = np.random.default_rng(0)
        for trial, n in enumerate(batches):
            grade.note(f"trial {trial}: batch {n}")
            verdict = grade.layer_gradients(mod.Linear(3, 2), rng.standard_normal((n, 3)), RefLinear(3, 2), points=1)
            assert verdict.passed == (n != 3)  # the check returns its verdict; the test goes on
        failure = grade.failure()
        fractions[batches] = failure.fraction
        bad = batches.index(3)
        assert str(failure).startswith(f"1 of {len(batches)} checks failed: trial {bad}: batch 3."), str(failure)
        assert f"**trial {bad}: batch 3**\n\n- `db`: **wrong** - db is the mean over the batch" in str(failure)
    # db (1 of 3 parts) wrong in one trial of 2, or of 3
    assert fractions == pytest.approx({(3, 4): 5 / 6, (4, 3): 5 / 6, (4, 5, 3): 8 / 9})


def test_the_plugin_runs_every_trial_and_names_the_failing_one(tmp_path):
    import json

    from gradcheck.grading.runner import grade_submission

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(ONE_BATCH_BUG)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_trials.py").write_text(TRIALS)
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", timeout=10.0)
    rows = {t["name"]: t for t in json.loads(Path(r.results_path).read_text())["tests"]}
    assert {n: t["score"] for n, t in rows.items()} == pytest.approx(
        {"the failing trial first": 5.0, "the failing trial last": 6 * 8 / 9, "no failing trial": 2.0}, abs=1e-4)
    first, last = rows["the failing trial first"]["output"], rows["the failing trial last"]["output"]
    assert first.startswith("1 of 2 checks failed: trial 0: batch 3.") and "Passed: trial 1: batch 4." in first
    assert last.startswith("1 of 3 checks failed: trial 2: batch 3.") and \
        "Passed: trial 0: batch 4, trial 1: batch 5." in last
    assert rows["no failing trial"]["status"] == "passed"

