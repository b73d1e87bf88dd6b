"""The grader's check of its own reference (:func:`gradcheck.grading.checks._reference_confirmed`, run when a
submission's gradient failed against it) reads the reference forward's switches once (session 41: a reading of
forward's source, :func:`gradcheck._adapters.mode_keyword`, before each of its 2 + 2 x failed-tensors forwards,
on a deep copy whose every forward read it again: a fifth to a third of a failing ReLU's, affine's or max-pool's
hidden test), and each of those forwards still runs in eval mode, as the test graded it."""

import numpy as np
import pytest

from gradcheck import _adapters
from gradcheck.config import CheckConfig
from gradcheck.grading import checks
from gradcheck.grading.checks import GradingTestError


class Doubling:
    """``forward(x, w)``: ``x * w`` in eval mode, twice that in training mode (its default); ``backward`` gives the
    eval gradients, times ``k`` for dx (a faulty reference when k != 1)."""

    def __init__(self, k=1.0):
        self.params, self.grads, self.k = {}, {}, k

    def forward(self, x, w, training=True):
        self.x, self.w = x, w
        return x * w * (2.0 if training else 1.0)

    def backward(self, dout):
        return self.k * dout * self.w, dout * self.x


@pytest.fixture
def readings(monkeypatch):
    calls, real = [], _adapters.mode_keyword
    monkeypatch.setattr(_adapters, "mode_keyword", lambda fn: calls.append(fn) or real(fn))
    return calls


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))]


def test_a_correct_reference_is_read_once_and_differenced_in_eval_mode(readings):
    # training mode (forward's default) at any of the differences would disagree with the eval gradient: an error
    assert checks._reference_confirmed(Doubling(), _inputs(), ["dx", "dw"], ["dx", "dw"],
                                       CheckConfig(training=False, seed=3)) is None
    assert len(readings) == 1  # 6 before


def test_a_faulty_reference_is_still_named_with_one_reading(readings):
    with pytest.raises(GradingTestError, match="the reference's own gradient dx disagrees"):
        checks._reference_confirmed(Doubling(k=3.0), _inputs(), ["dx", "dw"], ["dx", "dw"],
                                    CheckConfig(training=False, seed=3))
    assert len(readings) == 1


def test_the_copy_takes_the_reading_of_the_reference_it_copies(monkeypatch):
    """The deep copy _reference_confirmed differences is the same code on copies of the same objects: its forward is
    never walked, the reference's reading is taken (kept by the grader's own forwards of the reference; a walk of
    forward's source and what it reaches was a fifth of a failing ReLU's hidden test)."""
    import manualprop as mp
    from gradcheck import _switch_reach

    ref, xs = mp.ReLU(), _inputs()[:1]
    _adapters.forward_in_mode(ref, xs, False)  # as the grader ran it
    walked, real = [], _switch_reach._Walk.visit
    monkeypatch.setattr(_switch_reach._Walk, "visit", lambda self, *a: walked.append(self.obj) or real(self, *a))
    assert checks._reference_confirmed(ref, xs, ["dX"], ["dX"], CheckConfig(training=False, seed=3)) is None
    assert walked and all(o is ref for o in walked)  # the copy's before
