"""Session 41 (the suite's time: the grading batches' setups): two walks the grader made again and again, each giving
what it gave before.

* A grading test's reference is copied for each probe (the large-input probe's ``copy.deepcopy(reference)``, the
  reference's own confirmation), and each copy's forward was walked from its source again (:func:`gradcheck.
  _switch_reach._walk` kept a walk per object). The newest walk of a class's forward is now given to another object of
  the class while every read it made gives the same value on that object; an object whose reads differ (another
  sub-layer, a dict with another key) is walked anew and read as itself.
* A random layer held by rewinding (:func:`gradcheck._adapters.hold_random`, ``"rewind"``: the grader's and check's
  training-mode check of a dropout) found its generators by walking itself at every forward, into the states it keeps
  under ``_gradcheck_rewind``: Python's ``random`` state alone is a tuple of 625 ints, so each of the check's thousands
  of forwards walked about 650 values (0.4 ms in process, about 1.5 ms in the sandbox under the staff policy's count;
  test_grading_policy_dropout_s39's sandbox used 21 s of CPU, 8 s after). The walk no longer enters them.
"""

import copy

import numpy as np

from gradcheck import _adapters
from gradcheck import _switch_reach as SR
from tests.test_switch_reach_cache_s40 import mod, switches  # noqa: F401 - the fixture, used by name


def test_a_copy_s_forward_is_not_walked_again_while_its_reads_agree(mod, monkeypatch):  # noqa: F811
    walked, real = [], SR._nodes

    def counted(tree):
        walked.append(tree)
        return real(tree)

    monkeypatch.setattr(SR, "_nodes", counted)
    net = mod.Net()
    assert switches(net.forward) == ["self.drop.training"]
    once = len(walked)
    assert once == 2  # Net.forward, then DropTraining.forward
    for _ in range(3):
        assert switches(copy.deepcopy(net).forward) == ["self.drop.training"]
    assert len(walked) == once  # before: 2 more walks per copy
    other = copy.deepcopy(net)
    other.drop = mod.DropMode()  # another sub-layer: the method its call resolves to differs
    assert switches(other.forward) == ["self.drop.mode"]
    assert len(walked) > once


def test_a_copy_whose_reads_differ_is_read_as_itself(mod):  # noqa: F811
    layer = mod.Keyed()
    assert SR.argument_words(layer.forward, "mode") == (["test", "train"], False)
    twin = copy.deepcopy(layer)
    twin.SCALES["eval"] = 1.0
    assert SR.argument_words(twin.forward, "mode") == (["test", "train", "eval"], False)
    assert SR.argument_words(layer.forward, "mode") == (["test", "train"], False)
    worded = mod.Worded()
    assert SR.argument_words(worded.forward, "mode") == (["train"], False)
    fit = mod.Worded()
    fit.TRAIN_WORD = "fit"
    assert SR.argument_words(fit.forward, "mode") == (["fit"], False)


class _Dropout:
    def __init__(self):
        self.p, self.rng, self.mask = 0.3, np.random.default_rng(0), None

    def forward(self, X, training=False):
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask


def test_a_rewinding_forward_walks_none_of_the_states_it_keeps(monkeypatch):
    layer = _Dropout()
    assert _adapters.hold_random(layer, "rewind") == "Generator"
    record = layer.__dict__["_gradcheck_rewind"]
    kept = {id(record), *(id(v) for part in record for v in part)}
    entered, real = [], _adapters._items

    def spied(v):
        entered.append(id(v))
        return real(v)

    monkeypatch.setattr(_adapters, "_items", spied)
    X = np.random.default_rng(1).standard_normal((5, 4))
    first = layer.forward(X.copy(), training=True)
    again = layer.forward(X.copy(), training=True)
    assert np.array_equal(first, again) and not np.array_equal(first, X / 0.7)  # rewound: the same mask
    assert entered and not kept & set(entered)  # before: the record, its lists and Python's random state entered
    assert _adapters.generators(layer) == [layer.rng]
    copied = copy.deepcopy(layer)  # a copy rewinds its own generator
    assert _adapters.generators(copied) == [copied.rng] and np.array_equal(copied.forward(X.copy()), first)
