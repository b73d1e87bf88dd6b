"""Session 46, fn46: autoprop's leftovers found by session 45's testers.

verify45d F1: an item assignment into ``layer.variables`` was lost without a word once the layer held sub-layers
(the dict is built at each access), and on a layer without sub-layers it replaced the Variable without an
``autoprop.function`` noticing (the replay kept the old one). Now a key of the layer's own weights is set in the
layer, whatever it holds; a sub-layer's or attribute's path raises TypeError naming where to set it and ``.assign``
(``tf.Module.variables`` is a tuple: item assignment raises; Keras's list loses it).
"""

import copy
import pickle

import numpy as np
import pytest

import autoprop as ap


class _Block(ap.layers.Layer):
    """The verify45d F1 layer: a sub-layer, then a weight of its own set as manualprop's params."""

    def __init__(self):
        super().__init__()
        self.fc = ap.layers.Linear(3, 2, rng=0)
        self.variables["scale"] = ap.Variable(np.array([2.0, -3.0]))

    def call(self, x):
        return self.fc(x) * self.variables["scale"]


class _MLP(ap.Model):
    def __init__(self):
        super().__init__()
        self.l1 = ap.layers.Linear(3, 4, rng=0)
        self.l2 = ap.layers.Linear(4, 2, rng=1)
        self.W1 = ap.Variable(np.ones(2))

    def call(self, x):
        return self.l2(self.l1(x)) * self.W1


def test_own_weight_set_in_a_layer_holding_sublayers_is_kept_and_trained():
    block = _Block()
    assert list(block.variables) == ["scale", "fc.W", "fc.b"]
    assert block.trainable_variables[0] is block.variables["scale"]
    x = np.ones((1, 3))
    with ap.GradientTape() as tape:
        y = ap.reduce_sum(block(x))
    g = tape.gradient(y, block.variables["scale"])
    np.testing.assert_array_equal(g.numpy(), block.fc(x).numpy()[0])
    d = block.variables
    del d["scale"]
    assert "scale" not in d and list(block.variables) == ["fc.W", "fc.b"]
    # copies are plain dicts; a layer pickles with its own dict
    m = _MLP()
    assert type(copy.deepcopy(m.variables)) is dict and type(dict(m.variables)) is dict
    m2 = pickle.loads(pickle.dumps(m))
    assert list(m2.variables) == list(m.variables)
    m2.l1.variables["W"] = ap.Variable(np.zeros((4, 3)))
    assert m2.variables["l1.W"] is m2.l1.variables["W"] and not np.array_equal(m.l1.variables["W"].numpy(), 0)


@pytest.mark.parametrize("key, words", [
    ("l1.W", ["'l1.W' is not one of _MLP's own weights", "layer.l1.variables['W'] = ap.Variable(",
              "layer.variables['l1.W'].assign(value)"]),
    ("W1", ["held by the attribute 'W1'", "layer.W1 = ap.Variable(...)"]),
    ("l1.extra", ["'l1' is a sub-layer or attribute of _MLP", "add_weight("]),
])
def test_assigning_a_sublayer_path_raises_naming_where(key, words):
    m = _MLP()
    before = {k: v for k, v in m.variables.items()}
    with pytest.raises(TypeError) as err:
        m.variables[key] = ap.Variable(np.zeros((4, 3)))
    for w in words:
        assert w in str(err.value), str(err.value)
    assert dict(m.variables) == before
    with pytest.raises(TypeError, match="cannot be deleted"):
        del m.variables["l2.b"]


def test_a_non_variable_is_refused_naming_assign():
    m = _MLP()
    for layer, key in [(m, "s"), (ap.layers.Linear(3, 2, rng=0), "W")]:
        with pytest.raises(TypeError, match=r"layer.variables\['%s'\].assign\(value\)" % key):
            layer.variables[key] = np.zeros(3)


@pytest.mark.parametrize("make, key", [
    (lambda: ap.layers.Sequential(ap.layers.Linear(3, 2, rng=0)), "0.W"),
    (lambda: ap.layers.TransformerBlock(4, 2, 8, rng=0), "linear1.W"),
    (lambda: ap.layers.TiedEmbedding(5, 4, rng=0), "W"),
])
def test_containers_refuse_item_assignment_and_blocks_refuse_variables_set(make, key):
    layer = make()
    old = layer.variables[key]
    with pytest.raises(TypeError, match="cannot be assigned"):
        layer.variables[key] = ap.Variable(np.zeros(old.shape))
    assert layer.variables[key] is old
    if not isinstance(layer, ap.layers.Sequential):  # was ignored without a word
        with pytest.raises(TypeError, match=r"variables cannot be assigned.*set_weights"):
            layer.variables = {key: ap.Variable(np.zeros(old.shape))}


def test_replacing_a_weight_after_tracing_traces_again():
    lin = ap.layers.Linear(3, 2, rng=0)
    f = ap.function(lambda x: lin(x))
    x = np.ones((1, 3))
    f(x)
    lin.variables["W"] = ap.Variable(np.zeros((2, 3)))
    np.testing.assert_array_equal(f(x).numpy(), lin(x).numpy())
    np.testing.assert_array_equal(f(x).numpy(), lin.variables["b"].numpy()[None])
