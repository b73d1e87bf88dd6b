"""Issue 15, session 18: Sequential's flat names made once, and the chunked looks of Linear's
output and plain SGD's gradients (arrays above DOT_CHUNK elements) still fire after good calls."""

from __future__ import annotations

import numpy as np
import pytest

import manualprop as mp
from manualprop._validation import DOT_CHUNK, NonFiniteError


class _Keys(mp.Layer):
    """A parameter-only layer of the caller's own, with any dict keys."""

    def __init__(self, keys):
        super().__init__()
        self.params = {k: np.zeros(1) for k in keys}
        self.grads = {k: np.ones(1) for k in keys}

    def forward(self, X, training=False):
        return X

    def backward(self, dY):
        return dY


def test_flat_names_follow_position_and_key_whatever_the_layers_and_keys():
    first = mp.Sequential(mp.Linear(2, 3, rng=0), mp.Tanh(), _Keys(["W", 1]))
    assert list(first.params) == ["0.W", "0.b", "2.W", "2.1"]
    assert first.params["2.1"] is first[2].params[1]
    # keys equal to the cached ones but of another type keep their own text
    # (a cache keyed by the key itself would give "2.1" for True after 1 and "0.1" for 1.0)
    third = mp.Sequential(_Keys([1.0]), mp.Tanh(), _Keys([True]))
    assert list(third.params) == ["0.1.0", "2.True"]
    # the names follow the list when it changes (a layer removed, inserted, replaced)
    first.layers.insert(0, _Keys(["a"]))
    assert list(first.params) == ["0.a", "1.W", "1.b", "3.W", "3.1"]
    assert list(first.grads) == list(first.params)
    del first.layers[:2]
    assert list(first.grads) == ["1.W", "1.1"]


def test_a_nan_parameter_is_named_when_the_output_is_looked_at_by_chunks():
    layer, X = mp.Linear(64, 256, rng=0), np.ones((64, 64))
    assert 64 * 256 > DOT_CHUNK
    for _ in range(2):
        layer.forward(X)
    layer.params["W"][-1, 3] = np.nan  # in the output's last column: its second chunk
    with pytest.raises(NonFiniteError, match=r"Linear\(in_features=64, out_features=256\)\.forward: "
                                             r"parameter W contains 1 NaN/inf value\(s\), the first at index \(255, 3\)"):
        layer.forward(X)
    layer.params["W"][-1] = 1e308  # finite, but their sum overflows to inf
    with np.errstate(over="ignore"), pytest.raises(  # (the product's own overflow warning aside)
            NonFiniteError, match=r"\.forward: Y overflowed: .* the first at index \(0, 255\)"):
        layer.forward(X)


def test_plain_sgd_refuses_a_nan_in_the_last_chunk_of_a_network_gradient_after_good_steps():
    net = mp.Sequential(mp.Linear(64, 256, rng=0), mp.Tanh(), mp.Linear(256, 10, rng=1))
    loss, opt = mp.SoftmaxCrossEntropy(), mp.SGD(learning_rate=0.1)
    X, y = np.random.default_rng(0).standard_normal((64, 64)), np.arange(64) % 10
    for _ in range(2):
        loss.forward(y, net.forward(X, training=True))
        net.backward(loss.backward(), input_grad=False)
        opt.step(net.params, net.grads)
    grads = net.grads
    assert grads["0.W"].size > DOT_CHUNK
    grads["0.W"][-1, -1] = np.inf
    before = {k: v.copy() for k, v in net.params.items()}
    with pytest.raises(ValueError, match=r"gradient for params\['0.W'\] must contain only finite values; "
                                         r"got 1 NaN/inf value\(s\), the first at index \(255, 63\)"):
        opt.step(net.params, grads)
    for k, v in net.params.items():
        np.testing.assert_array_equal(v, before[k])
