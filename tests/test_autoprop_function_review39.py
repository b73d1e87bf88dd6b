"""review39: what autoprop.function replayed wrongly after session 38 (each test failed on main at 5136c70a).

F1: a list or dict of layers that was empty when set (``self.blocks = []`` then ``append``), or nested
(``self.stages = [[a, b], [c]]``), was a plain container: its in-place changes between calls were replayed with the
old architecture. F2: a Variable replaced in a list held by a layer was read as the old one. F3: the list set as
an attribute was copied (session 38's ``_LayerList``), so layers appended under the user's own name were not the
model's, eagerly. F4: a 0-d integer array argument as a slice bound (``x[:n]``) was frozen into the replays.
Now each layer called while tracing has its lists, tuples and dicts compared at each call (``layers.base._layout``),
and a slice's bound is an array refused as an index array is.
"""

import numpy as np
import pytest
from test_autoprop_function_s38 import eager_and_traced_losses

import autoprop as ap
from autoprop import layers as al
from autoprop.tracing import TraceError

X, Y = np.random.default_rng(0).random((5, 4)), np.array([0, 1, 2, 0, 1])


class _Filled(al.Model):
    """Its containers built empty and filled, or nested."""

    def __init__(self):
        super().__init__()
        self.blocks = []
        for i in range(2):
            self.blocks.append(al.Linear(4, 4, rng=i))
        self.stages = [[al.Linear(4, 4, rng=3), al.Linear(4, 4, rng=4)], [al.Linear(4, 4, rng=5)]]
        self.heads = {}
        self.heads["a"] = al.Linear(4, 3, rng=6)
        self.heads["b"] = al.Linear(4, 3, rng=7)

    def call(self, x, training=False):
        for b in self.blocks:
            x = ap.tanh(b(x))
        for stage in self.stages:
            for b in stage:
                x = ap.tanh(b(x))
        return sum(h(x) for h in self.heads.values())


@pytest.mark.parametrize("change", [lambda m: m.blocks.pop(), lambda m: m.stages[0].pop(),
                                    lambda m: m.heads.pop("b"), lambda m: m.stages.reverse()],
                         ids=["empty-list-pop", "nested-pop", "empty-dict-pop", "nested-reverse"])
def test_containers_filled_after_being_set_or_nested_trace_again(change):
    losses = eager_and_traced_losses(_Filled, change, X, Y, steps=3, at=1)
    assert all(np.array_equal(a, b) for a, b in zip(*losses)), losses  # main: the old architecture replayed


def test_a_variable_replaced_in_a_list_is_read_at_replay():
    class M(al.Model):
        def __init__(self):
            super().__init__()
            self.ws = [ap.Variable(np.full((4, 3), 0.5)), ap.Variable(np.full((3, 2), 0.25))]

        def call(self, x, training=False):
            for w in self.ws:
                x = x @ w
            return x

    m = M()
    f = ap.function(lambda x: ap.reduce_sum(m(x)))
    assert float(f(np.ones((2, 4))).numpy()) == 6.0
    m.ws[1] = ap.Variable(np.full((3, 2), 2.0))
    assert float(f(np.ones((2, 4))).numpy()) == 48.0  # main: 6.0, the old Variable


def test_a_list_of_layers_stays_the_users_list():
    class M(al.Model):
        def __init__(self):
            super().__init__()
            blocks = [al.Linear(4, 4, rng=0)]
            self.blocks = blocks
            blocks.append(al.Linear(4, 4, rng=1))  # under the user's own name

        def call(self, x, training=False):
            for b in self.blocks:
                x = b(x)
            return x

    m = M()
    assert len(m.blocks) == 2 and len(m.trainable_variables) == 4  # main: 1 and 2 (a copy was set)
    model = al.Sequential(al.Linear(4, 4, rng=0))
    assert type(model.layers) is list


def test_a_list_of_numbers_on_a_layer_does_not_trace_every_call():
    """(passes on main too: the cost of the layouts' comparison kept small, one trace more at most)"""
    m = al.Sequential(al.Linear(4, 2, rng=0))
    m.log = []  # a Python value of the trace: appended between calls
    f = ap.function(lambda x: m(x))
    for i in range(4):
        f(X)
        m.log.append(float(i))
    assert f.traces <= 2


def test_an_integer_array_as_a_slice_bound_is_refused():
    f = ap.function(lambda x, n: ap.reduce_sum(x[:n]))
    with pytest.raises(TraceError, match="a slice whose bound is an array"):
        f(np.arange(5.0), np.array(2))  # main: traced, then 1.0 for n = 3 too (eager 3.0)
    g = ap.function(lambda x, n: ap.reduce_sum(x[:n]))  # a Python int: part of the signature
    assert float(g(np.arange(5.0), 2).numpy()) == 1.0 and float(g(np.arange(5.0), 3).numpy()) == 3.0
