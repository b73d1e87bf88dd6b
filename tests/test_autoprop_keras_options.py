"""Keras's layer keywords on autoprop's built-in layers, and the constructors' typo check.

``name=`` and ``trainable=`` are accepted by every built-in layer and mean what Keras means
(``layer.name``, shown in its repr and errors; ``trainable=False`` freezes: not in
``trainable_variables``, untouched by ``apply_gradients``; a frozen batch norm runs in
inference mode). Keras's names of arguments that mean the same as ours are accepted
(``Dropout(rate=0.5)``). A misspelt keyword of a layer or an optimizer names its close match
(``SGD(momentun=0.9)``). Repro before: ``Linear(3, 2, name="fc1", trainable=False)`` and
``Dropout(rate=0.5)`` raised TypeError, ``SGD(momentun=0.9)`` said only "unexpected keyword
argument". Oracle: HIPS autograd for the gradient the trainable layer is updated with.
"""

import autograd
import autograd.numpy as agn
import numpy as np
import pytest

import autoprop as ap
import manualprop as mp
from autoprop.layers import (
    BatchNorm1D,
    Conv2D,
    Dropout,
    Embedding,
    LayerNorm,
    Linear,
    MaxPool2D,
    MultiHeadAttention,
    ReLU,
    Sequential,
    Tanh,
    TiedEmbedding,
    TransformerBlock,
)


def test_a_frozen_built_in_layer_is_left_out_and_untouched_while_the_other_learns():
    rng = np.random.default_rng(0)
    x, target = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    fc1 = Linear(3, 4, name="fc1", trainable=False, rng=1)
    fc2 = Linear(4, 2, name="fc2", rng=2)
    model = Sequential(fc1, Tanh(), fc2)
    assert model.trainable_variables == [fc2.variables["W"], fc2.variables["b"]]
    assert [v.name for v in model.non_trainable_variables] == ["0.W", "0.b"]  # its path in the model (newuser24 L2)
    W1, b1 = fc1.variables["W"].numpy().copy(), fc1.variables["b"].numpy().copy()
    W2, b2 = fc2.variables["W"].numpy().copy(), fc2.variables["b"].numpy().copy()

    with ap.GradientTape() as tape:
        loss = ap.reduce_sum((model(x, training=True) - target) ** 2)
    variables = [fc1.variables["W"], *model.trainable_variables]
    g_W1, g_W2, g_b2 = tape.gradient(loss, variables)
    assert g_W1 is None  # a frozen Variable is not watched, as a Variable(trainable=False)
    ap.optimizers.SGD(learning_rate=0.1).apply_gradients(
        zip([g_W2, g_b2], model.trainable_variables))

    def oracle(W2_, b2_):
        h = agn.tanh(x @ W1.T + b1)
        return agn.sum((h @ W2_.T + b2_ - target) ** 2)

    want_W2, want_b2 = autograd.grad(oracle, (0, 1))(W2, b2)
    np.testing.assert_allclose(g_W2.numpy(), want_W2, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fc2.variables["W"].numpy(), W2 - 0.1 * want_W2, rtol=1e-12)
    np.testing.assert_allclose(fc2.variables["b"].numpy(), b2 - 0.1 * want_b2, rtol=1e-12)
    np.testing.assert_array_equal(fc1.variables["W"].numpy(), W1)  # frozen: not one bit moved
    np.testing.assert_array_equal(fc1.variables["b"].numpy(), b1)
    fc1.trainable = True  # the constructor's flag is the setter's: unfreezing works
    assert len(model.trainable_variables) == 4


def test_fit_on_a_model_of_frozen_built_in_layers_refuses_as_for_the_setter():
    model = Sequential(Linear(3, 2, trainable=False, rng=0), ReLU())
    model.compile("sgd", ap.losses.MeanSquaredError())
    with pytest.raises(ValueError, match="its 2 variable\\(s\\) are all frozen"):
        model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)


def test_every_built_in_layer_takes_name_and_trainable():
    layers = [
        Linear(3, 2, rng=0, trainable=False, name="a"), ReLU(name="a", trainable=False),
        Dropout(0.1, name="a", trainable=False), Embedding(5, 3, trainable=False, name="a"),
        Conv2D(1, 2, 3, name="a", trainable=False), MaxPool2D(2, name="a", trainable=False),
        BatchNorm1D(3, name="a", trainable=False), LayerNorm(3, name="a", trainable=False),
        MultiHeadAttention(4, 2, name="a", trainable=False),
        TransformerBlock(4, 2, 8, name="a", trainable=False),
        TiedEmbedding(5, 4, Linear(4, 4), name="a", trainable=False),
        Sequential(Linear(2, 2), ReLU(), name="a", trainable=False),
        ap.layers.LSTM(3, 2, name="a", trainable=False),
    ]
    for layer in layers:
        assert layer.name == "a" and not layer.trainable, layer
        assert layer.trainable_variables == [], layer
        assert all(not v.trainable for v in layer.non_trainable_variables), layer
    with_weights = [layer for layer in layers if layer.non_trainable_variables]
    assert len(with_weights) == 10
    assert Linear(3, 2).name == "Linear" and Linear(3, 2).trainable  # Keras's defaults
    with pytest.raises(TypeError, match=r"Linear\(\): name must be a str; got 3"):
        Linear(3, 2, name=3)
    with pytest.raises(TypeError, match="Linear.trainable must be True or False; got 'no'"):
        Linear(3, 2, trainable="no")  # truthy, but not a bool: refused, not taken as True


def test_the_name_shows_in_the_repr_and_so_in_the_layer_s_errors():
    fc1 = Linear(3, 2, name="fc1", rng=0)
    assert repr(fc1) == "Linear(in_features=3, out_features=2, name='fc1')"
    assert repr(ReLU(name="act")) == "ReLU(name='act')"
    assert repr(Linear(3, 2)) == repr(mp.Linear(3, 2))  # no name given: the manual repr
    with pytest.raises(ValueError) as e:
        fc1(np.ones((2, 4)))
    assert str(e.value) == ("autoprop.layers.Linear(in_features=3, out_features=2, "
                            "name='fc1').__call__: x must have shape (batch, 3); got (2, 4)")


def test_a_frozen_batch_norm_runs_in_inference_mode_as_keras():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 3)) * 2 + 1
    bn = BatchNorm1D(3, trainable=False)
    bn.running_mean, bn.running_var = np.array([0.5, -1.0, 2.0]), np.array([4.0, 0.25, 1.0])
    y = bn(x, training=True).numpy()
    want = (x - bn.running_mean) / np.sqrt(bn.running_var + bn.eps)  # gamma 1, beta 0
    np.testing.assert_allclose(y, want, rtol=1e-14)
    np.testing.assert_array_equal(bn.running_mean, [0.5, -1.0, 2.0])  # statistics left alone
    np.testing.assert_array_equal(bn.running_var, [4.0, 0.25, 1.0])
    live = BatchNorm1D(3)  # trainable: batch statistics in training, as before
    np.testing.assert_allclose(live(x, training=True).numpy().mean(axis=0), 0.0, atol=1e-12)


def test_keras_names_of_our_arguments_are_accepted_and_mean_the_same():
    x = np.random.default_rng(1).standard_normal((2, 1, 6, 6))
    drop = Dropout(rate=0.3, seed=7)
    assert drop.p == 0.3
    ours = Dropout(0.3, rng=7)
    np.testing.assert_array_equal(drop(x, training=True).numpy(), ours(x, training=True).numpy())
    emb = Embedding(input_dim=5, output_dim=3, rng=0)
    np.testing.assert_array_equal(emb.variables["W"].numpy(), Embedding(5, 3, rng=0).variables["W"].numpy())
    conv = Conv2D(1, 2, 3, strides=2, dilation_rate=1, use_bias=False, rng=0)
    assert repr(conv) == repr(Conv2D(1, 2, 3, stride=2, dilation=1, bias=False, rng=0))
    assert list(conv.variables) == ["W"]
    assert repr(MaxPool2D(pool_size=3, strides=1)) == repr(MaxPool2D(3, stride=1))
    assert BatchNorm1D(3, epsilon=1e-3).eps == 1e-3 and LayerNorm(3, epsilon=1e-2).eps == 1e-2
    with pytest.raises(TypeError, match=r"Dropout\(\) got 'p' twice: rate= is Keras's name for "
                                        r"p; give one of them"):
        Dropout(0.2, rate=0.3)
    with pytest.raises(TypeError, match="got 'p' twice"):
        Dropout(p=0.2, rate=0.3)


@pytest.mark.parametrize("make, message", [
    (lambda: ap.optimizers.SGD(momentun=0.9),
     "SGD() got an unexpected keyword argument 'momentun' (did you mean 'momentum'?); it takes "
     "learning_rate, momentum, nesterov, weight_decay, clipnorm, global_clipnorm"),
    (lambda: ap.optimizers.Adam(learning_rate=1e-3, beta1=0.9),
     "Adam() got an unexpected keyword argument 'beta1' (did you mean 'beta_1'?); it takes "
     "learning_rate, beta_1, beta_2, epsilon, weight_decay, clipnorm, global_clipnorm"),
    (lambda: ap.optimizers.RMSProp(centred=True),
     "RMSProp() got an unexpected keyword argument 'centred' (did you mean 'centered'?); it "
     "takes learning_rate, rho, momentum, epsilon, centered, weight_decay, clipnorm, "
     "global_clipnorm"),
])
def test_an_optimizer_keyword_typo_names_its_close_match(make, message):
    with pytest.raises(TypeError) as e:
        make()
    assert str(e.value) == message


def test_a_subclassed_optimizer_is_checked_against_its_own_constructor():
    class Halved(mp.SGD):
        def __init__(self, learning_rate=0.01, halve=True):
            super().__init__(learning_rate / 2 if halve else learning_rate)

    assert Halved(learning_rate=0.2).learning_rate == 0.1
    with pytest.raises(TypeError, match=r"Halved\(\) got an unexpected keyword argument 'halv' "
                                        r"\(did you mean 'halve'\?\); it takes learning_rate, halve$"):
        Halved(halv=False)


@pytest.mark.parametrize("make, words", [
    (lambda: mp.SGD(lr=0.1), "'lr' (PyTorch's name; here it is 'learning_rate')"),
    (lambda: mp.Adam(betas=(0.9, 0.99)), "'betas' (PyTorch's name; here it is 'beta_1' and 'beta_2')"),
    (lambda: ap.optimizers.Adam(eps=1e-7), "'eps' (PyTorch's name; here it is 'epsilon')"),
    (lambda: mp.RMSProp(alpha=0.9), "'alpha' (PyTorch's name; here it is 'rho')"),
])
def test_pytorchs_option_names_are_refused_with_ours(make, words):
    with pytest.raises(TypeError) as info:
        make()
    assert words in str(info.value)


def test_a_frozen_layer_says_so_in_its_repr():
    # newuser22: Linear(3, 2, trainable=False) printed as Linear(in_features=3, out_features=2), as a trainable one
    assert repr(Linear(3, 2, name="fc1", trainable=False)) == \
        "Linear(in_features=3, out_features=2, name='fc1', trainable=False)"
    relu = ReLU()
    relu.trainable = False
    assert repr(relu) == "ReLU(trainable=False)"
    relu.trainable = True
    assert repr(relu) == repr(ReLU())
