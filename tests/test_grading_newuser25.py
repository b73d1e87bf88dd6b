"""newuser25's findings on the grader (a LayerNorm, Conv1D and GRU cell assignment, 10 submissions).

H1: a diagnosis changed the score. Lesson 32b's ``gru_bug.py`` (dH without the direct path ``dY * z``) scored 1/6,
its correct dW_ih, dW_hh, db_ih and db_hh "all zeros", 5/6 with ``numerical=False``: the "gated direct path
missing" signature of dH ran the student's backward again after zeroing the layer's gradients in place, the very
arrays the grader then scored. What is scored is now copied before any diagnosis runs, and the evaluation point is
put back after it (:func:`gradcheck._adapters._copy` in :func:`gradcheck.grading.checks.layer_gradients`,
``_params_kept``).
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


# ---- H3: a backward of two inputs returning one gradient
class GRUDxOnly(L23.GRUCell):
    def backward(self, dY):
        return super().backward(dY)[0]  # BUG: dH forgotten


class GRUDxOnlyDoubled(GRUDxOnly):
    def forward(self, X, H, training=False):
        return 2 * super().forward(X, H)  # its weights' gradients are the reference's, not this forward's


def test_a_forgotten_input_gradient_costs_the_inputs_parts_alone():
    """newuser25 H3: ``return dx`` where ``return dx, dh`` is due scored 0 on every part, its correct dW and db
    too. The parameters' gradients are read and graded; which input a lone array belongs to cannot be told, so both
    inputs' parts fail with the sentence."""
    verdict = checks.layer_gradients(GRUDxOnly(), GRU_X, L23.GRUCell(), points=6)
    said = ("backward(dY) returned one ndarray; expected a tuple of 2 gradients (dX, dH), one per input of forward, "
            "in order.")
    assert {p.name: (p.passed, p.message) for p in verdict.parts} == {
        "dX": (False, said), "dH": (False, said), "dW_ih": (True, ""), "dW_hh": (True, ""), "db_ih": (True, ""),
        "db_hh": (True, "")}
    assert verdict.fraction == pytest.approx(4 / 6)


def test_the_weights_read_beside_a_forgotten_input_gradient_are_still_confirmed_numerically():
    verdict = checks.layer_gradients(GRUDxOnlyDoubled(), GRU_X, L23.GRUCell(), points=6)
    assert verdict.fraction == 0.0, verdict.markdown()
    assert "disagrees with the central difference of your forward" in {p.name: p.message for p in verdict.parts}[
        "dW_ih"]


# ---- M1: a forward of its own, its backward consistent with it
class GRUGateOrder(L23.GRUCell):
    """r and z swapped in forward and backward alike (newuser25's j_gru_gate_order): rows [z, r, n] read where the
    reference has [r, z, n]. Its forward takes ``training`` and ignores it."""

    def _swapped(self, arrays):
        H = self.H
        order = np.r_[H:2 * H, 0:H, 2 * H:3 * H]  # its own inverse
        return {k: v[order] for k, v in arrays.items()}

    def forward(self, X, H, training=False):
        kept, self.params = self.params, self._swapped(self.params)
        try:
            return super().forward(X, H)
        finally:
            self.params = kept

    def backward(self, dY):
        kept, self.params = self.params, self._swapped(self.params)
        try:
            ret = super().backward(dY)
        finally:
            self.params = kept
        self.grads = self._swapped(self.grads)
        return ret


def test_a_consistent_layer_with_another_forward_is_told_so_and_nothing_of_modes():
    """newuser25 M1: "dx is the gradient of the training-mode forward (training=True) ... branch on the mode in
    backward" for a GRU whose forward ignores ``training``."""
    verdict = checks.layer_gradients(GRUGateOrder(), GRU_X, L23.GRUCell(), points=6)
    assert verdict.fraction == 0.0
    for p in verdict.parts:
        assert p.message.startswith(f"{p.name} is not the reference's gradient, but it is the gradient of your own "
                                    f"forward"), p.message
        assert "forward computes another function than the assignment's" in p.message
        assert "mode" not in p.message and "training" not in p.message, p.message


def test_the_mode_signature_needs_two_modes():
    from gradcheck.diagnose import name_graded

    layer, ref = GRUGateOrder(), L23.GRUCell()
    verdict = checks.layer_gradients(layer, GRU_X, ref, points=6, numerical=False)  # sets the evaluation point
    G = np.random.default_rng(0).standard_normal((4, 5))
    layer.forward(*GRU_X)
    got = layer.backward(G.copy())[0]
    ref.forward(*GRU_X)
    finding = name_graded(layer, GRU_X, "dX", got, ref.backward(G.copy())[0], G=G)
    assert finding.code != "backward-ignores-mode", (finding.sentence(), verdict.markdown())


# ---- M4: float32
class GRUFloat32(L23.GRUCell):
    def forward(self, X, H, training=False):
        kept = self.params
        self.params = {k: v.astype(np.float32) for k, v in kept.items()}
        try:
            return super().forward(X.astype(np.float32), H.astype(np.float32))
        finally:
            self.params = kept

    def backward(self, dY):
        kept = self.params
        self.params = {k: v.astype(np.float32) for k, v in kept.items()}
        try:
            return super().backward(dY.astype(np.float32))
        finally:
            self.params = kept


@pytest.mark.parametrize("numerical", [True, False])
def test_every_part_of_a_float32_layer_names_float32(numerical):
    """newuser25 M4: the parts that missed the reference by float32 round-off were "differs ... in 1 of 54 elements
    (no known bug pattern)", without a word of float32."""
    verdict = checks.layer_gradients(GRUFloat32(), GRU_X, L23.GRUCell(), points=6, numerical=numerical)
    failed = [p for p in verdict.parts if not p.passed]
    assert failed if numerical else True
    for p in failed:
        assert "FAIL: wrong dtype of Y): forward returns float32 for a float64 input" in p.message, p.message
        assert "no known bug pattern" not in p.message, p.message


def test_staff_accept_float32_by_the_reference_alone_at_its_precision():
    """The policy's one knob (docs/gradescope.md): ``numerical=False, rtol=1e-4`` compares with the reference alone,
    to a tolerance float32 meets; with the default central differences a float32 forward earns nothing."""
    assert checks.layer_gradients(GRUFloat32(), GRU_X, L23.GRUCell(), points=6).fraction == 0.0
    assert checks.layer_gradients(GRUFloat32(), GRU_X, L23.GRUCell(), points=6, numerical=False,
                                  rtol=1e-4).fraction == 1.0


# ---- M2, M3: docs/gradescope.md's examples, run as written
DOC = Path(__file__).resolve().parents[1] / "docs" / "gradescope.md"
ASSIGN = Path(__file__).resolve().parents[1] / "assignments" / "linear_relu_ce"


def _section(title):
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"### {title}")
    return text[start:text.index("\n## ", start)]


def test_the_two_input_example_grades_as_the_docs_say(tmp_path):
    import json
    import re

    from gradcheck.grading.runner import grade_submission

    section = _section("A layer with two inputs, and a reference beside the tests")
    files = re.findall(r"^```python file=(\S+)\n(.*?)^```", section, re.S | re.M)
    assert [f for f, _ in files] == ["tests/ref_rnn.py", "tests/test_rnn.py", "submission/layers.py"]
    for name, body in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    r = grade_submission(tmp_path / "submission", tmp_path / "tests", tmp_path / "out", timeout=10.0)
    (test,) = json.loads(Path(r.results_path).read_text())["tests"]
    said = re.search(r"^submission: (\S+) / (\S+) in .*\n +(\S+)  (.*)$", section, re.M)
    assert (r.score, r.max_score, test["score"], test["name"]) == (float(said[1]), float(said[2]), float(said[3]),
                                                                   said[4])
    shown = section.split("The test's output in `results.json`:\n\n```\n")[1].split("```")[0]
    assert test["output"].startswith(shown.strip()), test["output"]


def test_the_regrade_of_one_submission_works_as_the_docs_say(tmp_path):
    """Its results.json deleted, the batch's own command grades that submission alone again."""
    from gradcheck.grading.runner import grade_batch

    assert "rm graded/alice/results.json" in _section("Regrading one submission")
    solution = (ASSIGN / "solution" / "layers.py").read_text()
    for name, text in {"alice": solution, "bob": solution.replace("dY.sum(axis=0)", "dY.mean(axis=0)")}.items():
        (tmp_path / "subs" / name).mkdir(parents=True)
        (tmp_path / "subs" / name / "layers.py").write_text(text)
    kw = dict(progress=False, plot=False, seed=3, workers=2)
    first = grade_batch(tmp_path / "subs", ASSIGN / "tests", tmp_path / "graded", **kw)
    (tmp_path / "graded" / "alice" / "results.json").unlink()
    again = grade_batch(tmp_path / "subs", ASSIGN / "tests", tmp_path / "graded", **kw)
    assert {r.name: r.status for r in again.submissions} == {"alice": "graded", "bob": "skipped"}
    assert {r.name: r.score for r in again.submissions} == {r.name: r.score for r in first.submissions}
    assert "alice" in (tmp_path / "graded" / "gradebook.csv").read_text()


def test_only_grades_the_named_submission_and_keeps_the_others(tmp_path):
    """``gradcheck grade ... --only NAME`` (newuser25 M2): the one named graded again, the others kept; one never
    graded is left out with its row saying so; a changed seed, --force or an unknown name is refused before
    anything is written."""
    from gradcheck.errors import UsageError
    from gradcheck.grading.runner import ONLY_LEFT, grade_batch

    solution = (ASSIGN / "solution" / "layers.py").read_text()
    for name, text in {"alice": solution, "bob": solution.replace("dY.sum(axis=0)", "dY.mean(axis=0)")}.items():
        (tmp_path / "subs" / name).mkdir(parents=True)
        (tmp_path / "subs" / name / "layers.py").write_text(text)
    kw = dict(progress=False, plot=False, workers=2)
    first = grade_batch(tmp_path / "subs", ASSIGN / "tests", tmp_path / "graded", seed=3, **kw)
    (tmp_path / "subs" / "carol").mkdir()
    (tmp_path / "subs" / "carol" / "layers.py").write_text(solution)
    meta = (tmp_path / "graded" / "grading.json").read_text()
    for bad, said in [(dict(only=["dave"]), "--only 'dave': the batch has no submission of that name (its "
                                            "submissions: alice, bob, carol)."),
                      (dict(only=["bob"], force=True), "--force grades every submission again: give one of them."),
                      (dict(only=["bob"], seed=4), "--only: the seed (--seed: the hidden tests' inputs) changed since")]:
        with pytest.raises(UsageError) as exc:
            grade_batch(tmp_path / "subs", ASSIGN / "tests", tmp_path / "graded", **{"seed": 3, **bad}, **kw)
        assert said in str(exc.value)
        assert (tmp_path / "graded" / "grading.json").read_text() == meta and not (tmp_path / "graded" / "carol").exists()
    res = grade_batch(tmp_path / "subs", ASSIGN / "tests", tmp_path / "graded", only=["bob"], **kw)
    assert {r.name: r.status for r in res.submissions} == {"alice": "skipped", "bob": "graded"}
    assert {r.name: r.score for r in res.submissions} == {r.name: r.score for r in first.submissions}
    assert res.only_left == ["carol"] and "left out by --only have no saved result of their files" in res.summary()
    rows = (tmp_path / "graded" / "gradebook.csv").read_text().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["alice", "bob", "carol"] and ONLY_LEFT in rows[3]
    assert not (tmp_path / "graded" / "carol" / "results.json").exists()


# ---- LOW: check's hint of a reference for a layer manualprop has no twin of
def test_the_reference_hint_says_when_manualprop_has_no_class_of_the_name():
    from types import SimpleNamespace

    from gradcheck.check_command import _forward_unchecked

    res = SimpleNamespace(input_shape=(2, 3, 9))
    conv, linear = _forward_unchecked("Conv1D", {}, res), _forward_unchecked("Linear", {}, res)
    assert "pass --reference manualprop.NAME (e.g. manualprop.Linear) to compare them, when one of manualprop's " \
           "classes computes what Conv1D does under another name (manualprop has none named Conv1D; when none " \
           "does, compare its output with the assignment's formula" in conv, conv
    assert linear.endswith("pass --reference manualprop.Linear to compare them."), linear
