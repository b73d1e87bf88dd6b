"""newuser25's findings on the grader (a LayerNorm, Conv1D and GRU cell assignment, 10 submissions).

H1: a diagnosis changed the score. Lesson 32b's ``gru_bug.py`` (dH without the direct path ``dY * z``) scored 1/6,
its correct dW_ih, dW_hh, db_ih and db_hh "all zeros", 5/6 with ``numerical=False``: the "gated direct path
missing" signature of dH ran the student's backward again after zeroing the layer's gradients in place, the very
arrays the grader then scored. What is scored is now copied before any diagnosis runs, and the evaluation point is
put back after it (:func:`gradcheck.grading.checks._frozen`, ``_params_kept``).
"""

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
