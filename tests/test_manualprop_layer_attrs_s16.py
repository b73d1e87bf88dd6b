"""manualprop's layers define no ``__getattr__`` (issue 15, session 16), and what it did still works.

``Layer.__getattr__`` gave a subclass whose ``__init__`` skipped ``Layer.__init__`` its ``_ss``
(the sums of squares its checks keep). A class that defines ``__getattr__`` has every
attribute read of its objects go through it, which also keeps CPython from specialising the
reads (11,700 of a B16 MLP step's 604,000 instructions). Session 16 replaced it by a class
attribute that made the dict at the first read, which still kept every read of ``layer._ss``
from being specialised; since session 24 ``Layer.__new__`` makes it (tested below, and in
tests/test_manualprop_s24.py).
"""

import numpy as np
import pytest

import manualprop as mp
from manualprop.layers import Layer


def _layer_classes():
    seen, todo = [], [Layer]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return [c for c in seen if c.__module__.startswith("manualprop")]


def test_no_layer_class_of_manualprop_defines_getattr():
    classes = _layer_classes()
    assert {mp.Linear, mp.Tanh, mp.ReLU, mp.Conv2D, mp.LSTM} <= set(classes)
    assert [c.__name__ for c in classes if "__getattr__" in vars(c)] == []


class _NoBaseInit(mp.Tanh):
    """A student's subclass whose __init__ does not call super().__init__()."""

    def __init__(self):
        self.params, self.grads, self.cache = {}, {}, None


class _LinearNoBaseInit(mp.Linear):
    def __init__(self, W, b):
        self.in_features, self.out_features, self.dtype = W.shape[1], W.shape[0], W.dtype
        self.params = {"W": W, "b": b}
        self.grads = {"W": np.zeros_like(W), "b": np.zeros_like(b)}
        self.cache = None


def test_a_subclass_that_skipped_layer_init_gets_its_own_sums_of_squares():
    rng = np.random.default_rng(0)
    X, dY = rng.standard_normal((4, 3)) * 30.0, rng.standard_normal((4, 3))
    a, b, ref = _NoBaseInit(), _NoBaseInit(), mp.Tanh()
    np.testing.assert_array_equal(a.forward(X), ref.forward(X))
    np.testing.assert_array_equal(a.backward(dY), ref.backward(dY))  # the saturated entries too
    assert a._ss == ref._ss and a._ss["X"] == pytest.approx(float(np.vdot(X, X)))
    assert b._ss == {} and b._ss is not a._ss  # its own dict, not the other's or a shared one
    assert "_ss" in vars(a) and "_ss" in vars(b)  # kept in the object: the next read finds it there
    lin = _LinearNoBaseInit(rng.standard_normal((2, 3)), np.zeros(2))
    ref = mp.Linear(3, 2)
    ref.params["W"][...] = lin.params["W"]
    ref.params["b"][...] = 0.0
    np.testing.assert_array_equal(lin.forward(X), ref.forward(X))
    G = rng.standard_normal((4, 2))
    np.testing.assert_array_equal(lin.backward(G), ref.backward(G))
    np.testing.assert_array_equal(lin.grads["W"], ref.grads["W"])
    assert lin._ss.keys() == ref._ss.keys()


def test_a_missing_attribute_and_backward_before_forward_say_what_they_said():
    with pytest.raises(AttributeError, match=r"^'Linear' object has no attribute 'weights'$"):
        getattr(mp.Linear(3, 2), "weights")  # noqa: B009 - the read is the test
    with pytest.raises(RuntimeError, match=r"^Tanh\(\)\.backward: must be called after forward\(\)"):
        mp.Tanh().backward(np.ones((2, 2)))
    with pytest.raises(RuntimeError, match=r"must be called after forward\(\)"):
        _NoBaseInit().backward(np.ones((2, 2)))
