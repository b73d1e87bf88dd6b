"""A model's Variables are named by their paths, unique as Keras's names are (newuser24 L2).

``[v.name for v in model.trainable_variables]`` gave ``['W', 'b', 'W', 'b']`` for two Linear layers while
``model.variables`` keys were ``'d1.W'``...: a Keras user's habit (``{v.name: v}``, checkpoints, logging) lost
half the weights. A Variable is now named by its path in the model the first time the model lists it; a name given
by hand stays, a sub-model's variables take the outer path, and a Sequential's are ``"<index>.<name>"``.
"""

import numpy as np

import autoprop as ap
from autoprop.layers import Linear, Tanh


class MLP(ap.Model):
    def __init__(self):
        super().__init__()
        self.d1 = Linear(4, 8, rng=0)
        self.d2 = Linear(8, 3, rng=1)

    def call(self, x, training=False):
        return self.d2(np.tanh(self.d1(x)))


class Outer(ap.Model):
    def __init__(self):
        super().__init__()
        self.enc = MLP()
        self.scale = ap.Variable(2.0, name="temperature")  # a name given by hand
        self.blocks = [Linear(3, 3, rng=2)]

    def call(self, x, training=False):
        return self.blocks[0](self.enc(x)) * self.scale


def test_names_are_the_unique_paths_of_model_variables():
    m = MLP()
    names = [v.name for v in m.trainable_variables]
    assert names == ["d1.W", "d1.b", "d2.W", "d2.b"] == list(m.variables)
    o = Outer()
    assert list(o.enc.variables) == ["d1.W", "d1.b", "d2.W", "d2.b"]  # listed first: its shorter paths give way
    assert [v.name for v in o.trainable_variables] == ["enc.d1.W", "enc.d1.b", "enc.d2.W", "enc.d2.b",
                                                       "temperature", "blocks.0.W", "blocks.0.b"]
    assert list(o.variables)[4] == "scale"  # the key is the attribute; the hand-given name stays
    assert len(o.enc.variables) == 4  # listing the sub-model again renames nothing
    assert o.enc.d1.variables["W"].name == "enc.d1.W"
    seq = ap.Sequential(Linear(3, 4, rng=0), Tanh(), Linear(4, 2, rng=1))
    assert [v.name for v in seq.trainable_variables] == ["0.W", "0.b", "2.W", "2.b"]


def test_training_and_the_tape_read_the_new_names():
    m = MLP()
    x = ap.constant(np.random.default_rng(0).standard_normal((5, 4)))
    with ap.GradientTape(persistent=True) as tape:
        loss = ap.reduce_sum(m(x) ** 2)
    grads = tape.gradient(loss, m.trainable_variables)
    by_name = dict(zip([v.name for v in m.trainable_variables], grads))
    assert len(by_name) == 4 and by_name["d2.b"].shape == (3,)
    src = str(tape.backward_source(loss, m.trainable_variables))
    assert "dd2_W = " in src and "dd1_b = " in src  # identifiers from the names
    ap.optimizers.SGD(learning_rate=0.1).apply_gradients(zip(grads, m.trainable_variables))
