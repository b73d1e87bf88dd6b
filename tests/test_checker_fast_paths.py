"""The fast paths of ``check_layer``'s fast mode (issue 10, chkspeed2) keep every number and verdict.

Speed is measured in ``benchmarks/checker.py``, never here; these tests pin what a shortcut must
not change: the generator each mode starts from, the directional derivatives, the errors of a bad
output, and what the cache guard and the mask hold see.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from gradcheck import check as C
from gradcheck.errors import NonFiniteError, ProtocolError


def test_rewound_generator_draws_as_a_deep_copy_and_leaves_the_original():
    rng = np.random.default_rng(7)
    rng.standard_normal(5)  # mid-stream, as after the inputs were drawn
    rng.integers(0, 2**32)  # PCG64's buffered 32-bit half is part of the state
    twin = copy.deepcopy(rng)
    new = C._rewound(rng)
    assert new is not rng and new.bit_generator is not rng.bit_generator
    np.testing.assert_array_equal(new.standard_normal((3, 4)), twin.standard_normal((3, 4)))
    assert new.integers(0, 2**32) == twin.integers(0, 2**32)
    again = C._rewound(rng)  # the original was not advanced by the rewound ones' draws
    np.testing.assert_array_equal(again.standard_normal(3), rng.standard_normal(3))


def test_rewound_keeps_the_bit_generator_type():
    rng = np.random.Generator(np.random.Philox(3))
    rng.random(2)
    new = C._rewound(rng)
    assert type(new.bit_generator) is np.random.Philox
    np.testing.assert_array_equal(new.random(4), copy.deepcopy(rng).random(4))


class _Out:
    """A layer whose forward returns ``X @ W`` in a chosen form: a dtype, a transposed layout, a NaN."""

    def __init__(self, how):
        self.how = how
        self.params = {"W": np.random.default_rng(1).standard_normal((4, 3))}
        self.grads = {"W": np.zeros((4, 3))}

    def forward(self, X, training=False):
        self.X = X
        Y = X @ self.params["W"]
        if self.how == "float32":
            return Y.astype(np.float32)
        if self.how == "transposed":
            return np.asfortranarray(Y)
        if self.how == "nan":
            Y[1, 2] = np.nan
        if self.how == "none":
            return None
        return Y

    def backward(self, dY):
        self.grads["W"][...] = self.X.T @ dY
        return dY @ self.params["W"].T


def _call(how):
    from gradcheck.sources import Call

    layer = _Out(how)
    return Call(layer, "Out", [np.random.default_rng(2).standard_normal((5, 4))], ["X"], layer.params, False)


@pytest.mark.parametrize("how", ["plain", "float32", "transposed"])
def test_uncopied_output_gives_the_directional_numbers_of_the_validated_forward(how):
    from gradcheck.numerical import directional_derivatives

    call = _call(how)
    G = np.random.default_rng(3).standard_normal((5, 3))
    runs = [directional_derivatives(fwd, call.inputs, call.params, G, input_names=call.keys,
                                    groups=[["@X"], ["W"]], n_dirs=2, rng=np.random.default_rng(4))
            for fwd in (call.forward, call.output)]
    for key in runs[0]:
        for (u0, v0), (u1, v1) in zip(runs[0][key], runs[1][key]):
            assert v0 == v1 and np.isfinite(v0)  # bit for bit: the same sum of the same values
            for k in u0:
                np.testing.assert_array_equal(u0[k], u1[k])
    np.testing.assert_array_equal(call.inputs[0], np.random.default_rng(2).standard_normal((5, 4)))  # not written


@pytest.mark.parametrize("how, error, words", [("nan", NonFiniteError, "non-finite"),
                                               ("none", ProtocolError, "returned None")])
def test_uncopied_output_refuses_what_forward_refuses(how, error, words):
    call = _call(how)
    with pytest.raises(error, match=words):
        call.forward(*call.inputs)
    with pytest.raises(error, match=words):
        call.output(*call.inputs)


class _Nested:
    """A layer caching its input deep in a dict of tuples beside shape tuples, and an input-named gradient."""

    def forward(self, X, training=False):
        self.cache = {"shapes": (X.shape, (1, 2)), "saved": ({"x": X},)}
        self.dX = np.zeros_like(X)  # a gradient attribute: written by backward, not watched
        return 2 * X

    def backward(self, dY):
        self.cache["saved"][0]["x"][0, 1] += 1.0  # writes into its cache
        self.dX[...] = 2 * dY
        return self.dX


def test_cache_guard_labels_a_nested_write_and_skips_gradient_attributes():
    from gradcheck._adapters import _gradient_names, cache_guard

    layer = _Nested()
    layer.forward(np.ones((2, 3)))
    after = cache_guard(layer, ["X"])
    layer.backward(np.ones((2, 3)))
    assert "modified its cache (self.cache['saved'][0]['x'], element [0, 1])" in after()
    layer.forward(np.ones((2, 3)))
    after = cache_guard(layer, ["X"])
    layer.dX[...] = 5.0  # only the gradient attribute changes
    assert after() is None
    assert _gradient_names(("W", "X")) == {g.format(n) for n in "WX" for g in ("d{}", "d_{}", "grad_{}", "grad{}", "g{}", "nabla_{}", "dLd{}",
                                                                               "{}_grad")}
    assert "dX" not in _gradient_names(("W",))


def test_walk_still_enters_a_layer_held_as_a_dict_key_and_not_a_string_key():
    from gradcheck._adapters import _label, walk

    inner = _Nested()
    holder = type("Holder", (), {})()
    holder.order = {inner: "first", "name": 1, 3: 2.0}
    labels = [_label(p) for p, _ in walk(holder)]
    assert "order.keys" in labels and "order.keys[0]" in labels
    assert "order['name']" in labels and "order[3]" in labels
    assert [v for p, v in walk(holder) if _label(p) == "order.keys[0]"] == [inner]
