"""The reverse walk's reach (tape._reaching) is skipped when every tensor the tape tracks from outside is a
source (``_roots_asked``: a training step asks for every trainable variable), and still prunes when one is
not: an input computed only from a watched tensor that was not asked for gets no VJP call."""

import numpy as np
import pytest

import autoprop as ap
from autoprop.core import tape as T


def _counted(calls, name):
    @ap.custom_gradient
    def f(x):
        def grad(dy):
            calls.append(name)
            return 3.0 * dy
        return 3.0 * x, grad
    return f


@pytest.mark.parametrize("watch", ["variables", "watch"])
def test_every_root_asked_skips_the_reach_pass_and_calls_every_vjp(monkeypatch, watch):
    def no_reach(nodes, keep):
        raise AssertionError("the reach pass ran although every root was asked for")
    monkeypatch.setattr(T, "_reaching", no_reach)
    calls = []
    a, b = ap.Variable(np.array([1.0, 2.0])), ap.Variable(np.array([0.5, -1.0]))
    with ap.GradientTape(watch_accessed_variables=(watch == "variables")) as tape:
        if watch == "watch":
            tape.watch([a, b])
        y = ap.reduce_sum(_counted(calls, "a")(a) * _counted(calls, "b")(b))
    ga, gb = tape.gradient(y, [a, b])
    np.testing.assert_array_equal(ga.numpy(), 9.0 * b.numpy())
    np.testing.assert_array_equal(gb.numpy(), 9.0 * a.numpy())
    assert sorted(calls) == ["a", "b"]


def test_a_root_not_asked_for_still_prunes_its_branch():
    calls = []
    a, b = ap.Variable(np.array([1.0, 2.0])), ap.Variable(np.array([0.5, -1.0]))
    with ap.GradientTape() as tape:
        y = ap.reduce_sum(_counted(calls, "a")(a) * _counted(calls, "b")(b))
    (ga,) = tape.gradient(y, [a])
    np.testing.assert_array_equal(ga.numpy(), 9.0 * b.numpy())
    assert calls == ["a"]  # b's branch reaches no source: its VJP is not asked for


def test_an_intermediate_source_keeps_the_reach_pass():
    """A source computed on the tape (not a root): the watched root is not asked for, so the reach pass
    runs and the gradient stops at the intermediate."""
    calls = []
    a = ap.Variable(np.array([1.0, 2.0]))
    with ap.GradientTape() as tape:
        h = _counted(calls, "a")(a)
        y = ap.reduce_sum(h * h)
    g = tape.gradient(y, h)
    np.testing.assert_array_equal(g.numpy(), 2.0 * h.numpy())
    assert calls == []


def test_a_watched_root_not_asked_for_still_prunes_its_branch():
    """tape.watch'ed tensors (no Variable read): b watched, only a asked for, so b's branch gets no VJP call
    (mutant roots_asked_watched: skipping the watched check called it)."""
    calls = []
    a, b = ap.constant(np.array([1.0, 2.0])), ap.constant(np.array([0.5, -1.0]))
    with ap.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch([a, b])
        y = ap.reduce_sum(_counted(calls, "a")(a) * _counted(calls, "b")(b))
    (ga,) = tape.gradient(y, [a])
    np.testing.assert_array_equal(ga.numpy(), 9.0 * b.numpy())
    assert calls == ["a"]
