"""The grader's budget for check's signatures is a count of forwards, not seconds (session 24).

newuser24 M1 gave the grader ``gradcheck check``'s own signatures with a budget of 5 seconds a wrong part, so the
sentence a student read depended on the grading machine's load: ``max_pool_overwrites`` was named on one run and
not on the next. :func:`gradcheck.diagnose.name_graded` now counts the layer's forwards instead
(``checks.DIAGNOSIS_FORWARDS``): the same layer, input and upstream gradient give the same sentence on any machine.
"""

import time

import numpy as np
import pytest

from gradcheck.diagnose import name_graded
from gradcheck.grading import checks
from tests.buggy_layers.pool_embed_rnn import MaxPoolOverlap, MaxPoolOverlapOverwrites


class Counting(MaxPoolOverlapOverwrites):
    calls = 0

    def forward(self, X, training=False):
        type(self).calls += 1
        return super().forward(X, training)


def _graded_point():
    """The buggy layer after one forward and backward, its input, upstream gradient and both dX; calls reset."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal(MaxPoolOverlap.INPUT)
    ref, bug = MaxPoolOverlap(), Counting()
    G = rng.standard_normal(ref.forward(X).shape)
    ref.forward(X)
    expected = ref.backward(G)
    bug.forward(X)
    got = bug.backward(G.copy())
    Counting.calls = 0
    return bug, X, G, got, expected


def _graded(forwards):
    bug, X, G, got, expected = _graded_point()
    finding = name_graded(bug, [X], "dX", got, expected, G=G, forwards=forwards)
    return finding, Counting.calls


def test_the_default_budget_names_the_overwrite_as_check_does():
    unlimited, _ = _graded(None)
    assert unlimited.code == "scatter-overwrites"
    graded, calls = _graded(checks.DIAGNOSIS_FORWARDS)
    assert graded.code == "scatter-overwrites" and graded.sentence() == unlimited.sentence()
    assert calls <= checks.DIAGNOSIS_FORWARDS


def test_a_spent_budget_starts_no_further_signature():
    finding, calls = _graded(1)
    assert finding.code != "scatter-overwrites"
    _, unlimited = _graded(None)
    assert calls < unlimited  # the signatures after the first forward never started


def test_the_sentence_does_not_depend_on_the_clock(monkeypatch):
    """A clock that jumps an hour at every reading (a machine under heavy load) changes nothing."""
    before, _ = _graded(checks.DIAGNOSIS_FORWARDS)
    t = [time.monotonic()]

    def slow():
        t[0] += 3600.0
        return t[0]

    monkeypatch.setattr(time, "monotonic", slow)
    after, _ = _graded(checks.DIAGNOSIS_FORWARDS)
    assert after.code == before.code == "scatter-overwrites" and after.sentence() == before.sentence()


@pytest.mark.parametrize("forwards", [0])
def test_zero_means_numbers_alone(forwards):
    from gradcheck.grading.diagnosis import diagnose

    bug, X, G, got, expected = _graded_point()
    diagnose("dX", got, expected, layer=bug, inputs=[X], upstream=G, forwards=forwards)
    assert Counting.calls == 0
