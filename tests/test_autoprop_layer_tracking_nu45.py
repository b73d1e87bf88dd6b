"""A subclass of ``ap.layers.Layer`` tracks the Variables and layers assigned as its attributes, as a
subclass of ``ap.Model`` does (newuser45 F1: a Keras-style residual ``Block(ap.layers.Layer)`` holding two
Linear layers inside a Model was missing from ``m.variables``, its weights named ``'W', 'b', 'W', 'b'``, and
the README's ``zip(grads, model.variables.values())`` step silently never trained them); a Variable given
no name and assigned to a model is named by its path (F2: it kept the default name ``'Variable'``)."""

import autograd
import autograd.numpy as anp
import numpy as np

import autoprop as ap
from autoprop.layers import Layer, Linear

X = np.random.default_rng(0).standard_normal((6, 4))
Y = np.random.default_rng(1).standard_normal((6, 2))


class Scale(Layer):
    def __init__(self):
        super().__init__()
        self.s = ap.Variable(np.linspace(0.5, 1.5, 4))

    def call(self, x, training=False):
        return x * self.s


class Block(Layer):  # a Keras-style residual block
    def __init__(self):
        super().__init__()
        self.fc1 = Linear(4, 4, rng=1)
        self.fc2 = Linear(4, 4, rng=2)

    def call(self, x, training=False):
        return x + self.fc2(ap.tanh(self.fc1(x)))


class Net(ap.Model):
    def __init__(self):
        super().__init__()
        self.scale = Scale()
        self.block = Block()
        self.head = Linear(4, 2, rng=3)

    def call(self, x, training=False):
        return self.head(self.block(self.scale(x)))


PATHS = ["scale.s", "block.fc1.W", "block.fc1.b", "block.fc2.W", "block.fc2.b", "head.W", "head.b"]


def test_a_layer_lists_its_attribute_variables_and_layers_by_path_in_assignment_order():
    assert list(Scale().variables) == ["s"] and Scale().variables["s"].name == "s"
    block = Block()
    assert list(block.variables) == ["fc1.W", "fc1.b", "fc2.W", "fc2.b"]
    assert block.trainable_variables == list(block.variables.values()) == block.weights
    m = Net()
    assert list(m.variables) == PATHS
    assert [v.name for v in m.trainable_variables] == PATHS  # unique paths, assignment order
    assert m.trainable_variables == list(m.variables.values()) and m.non_trainable_variables == []


def test_the_readme_step_zipped_with_variables_values_trains_every_weight_as_hips_autograd():
    m, lr = Net(), 0.1
    before = {k: v.numpy().copy() for k, v in m.variables.items()}

    def loss_np(ws):  # the same network in plain numpy, differentiated by HIPS autograd
        s, W1, b1, W2, b2, Wh, bh = ws
        h = X * s
        h = h + (anp.tanh(h @ W1.T + b1) @ W2.T + b2)
        return anp.mean((h @ Wh.T + bh - Y) ** 2)

    want = autograd.grad(loss_np)([before[k] for k in PATHS])
    with ap.GradientTape() as tape:
        loss = ap.reduce_mean((m(X) - Y) ** 2)
    grads = tape.gradient(loss, list(m.variables.values()))
    ap.optimizers.SGD(learning_rate=lr).apply_gradients(zip(grads, m.variables.values()))
    for k, g in zip(PATHS, want):
        np.testing.assert_allclose(m.variables[k].numpy() - before[k], -lr * g, rtol=1e-9, atol=1e-15)
        assert np.abs(g).max() > 1e-3, k  # every weight has a gradient to take


def test_a_shared_or_nested_layer_is_counted_once_under_its_first_path():
    class Outer(Layer):
        def __init__(self):
            super().__init__()
            self.inner = Block()
            self.again = [self.inner, self.inner.fc1]  # shared: not counted twice

    class Top(ap.Model):
        def __init__(self):
            super().__init__()
            self.outer = Outer()
            self.extra = {"s": Scale()}

    m = Top()
    assert list(m.variables) == ["outer.inner.fc1.W", "outer.inner.fc1.b", "outer.inner.fc2.W",
                                 "outer.inner.fc2.b", "extra.s.s"]
    assert [v.name for v in m.weights] == list(m.variables)
    m.outer.inner.fc2.trainable = False
    assert [v.name for v in m.trainable_variables] == ["outer.inner.fc1.W", "outer.inner.fc1.b", "extra.s.s"]
    assert [v.name for v in m.non_trainable_variables] == ["outer.inner.fc2.W", "outer.inner.fc2.b"]


def test_a_layer_holding_its_parent_is_listed_once():
    m = Net()
    m.block.owner = m  # a cycle: walked once
    assert list(m.variables) == PATHS and len(m.block.variables) == 4 + 3


def test_an_unnamed_variable_of_a_model_is_named_by_its_path_a_name_given_by_hand_stays():
    class Direct(ap.Model):
        def __init__(self):
            super().__init__()
            self.W1 = ap.Variable(np.ones((2, 3)))
            self.b1 = ap.Variable(np.zeros(3), name="bias")

        def call(self, x, training=False):
            return x @ self.W1 + self.b1

    m = Direct()
    assert list(m.variables) == ["W1", "b1"]
    assert [v.name for v in m.trainable_variables] == ["W1", "bias"]
