"""verify42b F5 and F11: the binary accuracy's threshold and compile's probabilities warning read the layer that
makes a model's outputs behind a Dropout and inside a subclass of Sequential (both packages), and a loss that fits
the outputs to 0/1 targets (MSE, Huber) cuts them at 1/2 as Keras's binary accuracy does, whatever the model."""
import warnings

import numpy as np
import pytest

import autoprop as ap
import manualprop as mp

RNG = np.random.default_rng(0)
X = RNG.normal(size=(200, 3))
Y = (RNG.random(200) < 0.3).astype(float).reshape(-1, 1)


class Block(mp.Sequential):
    pass


class ABlock(ap.Sequential):
    pass


def numpy_accuracy(p):
    """Keras's binary accuracy of probabilities or values: (p > 0.5) == (y > 0.5)."""
    return float(np.mean((np.asarray(p) > 0.5) == (Y > 0.5)))


@pytest.mark.parametrize("make", [
    lambda: [mp.Linear(3, 1, rng=1), mp.Sigmoid(), mp.Dropout(0.2)],
    lambda: [mp.Linear(3, 1, rng=1), Block([mp.Sigmoid()])],
    lambda: [mp.Linear(3, 1, rng=1)],  # a linear output fitted to 0/1 targets by MSE (F11)
], ids=["sigmoid-dropout", "subclass", "linear-mse"])
def test_manualprop_accuracy_cuts_probabilities_and_values_at_one_half(make):
    m = mp.Sequential(make())
    m.compile(loss=mp.MeanSquaredError(), optimizer=mp.SGD(learning_rate=0.1), metrics=["accuracy"])
    want = numpy_accuracy(m.forward(X, training=False))
    assert want != pytest.approx(Y.mean()) and want != pytest.approx(1 - Y.mean())  # not the share of a label
    assert m.evaluate(X, Y, verbose=0)[1] == pytest.approx(want)


@pytest.mark.parametrize("make", [
    lambda: [ap.layers.Linear(3, 1), ap.layers.Sigmoid(), ap.layers.Dropout(0.2)],
    lambda: [ap.layers.Linear(3, 1), ABlock([ap.layers.Sigmoid()])],
], ids=["sigmoid-dropout", "subclass"])
def test_autoprop_accuracy_cuts_probabilities_at_one_half(make):
    m = ap.Sequential(make())
    m.compile(loss=ap.losses.MeanSquaredError(), optimizer="sgd", metrics=["accuracy"])
    m(ap.constant(X))  # built: its weights set from a seed, so that the outputs straddle 1/2
    m.set_weights([np.random.default_rng(1).standard_normal(np.shape(w)) for w in m.get_weights()])
    want = numpy_accuracy(m(ap.constant(X)).numpy())
    assert want != pytest.approx(Y.mean()) and want != pytest.approx(1 - Y.mean())  # not the share of a label
    assert m.evaluate(X, Y, verbose=0)[1] == pytest.approx(want)


def test_a_logits_output_is_still_cut_at_zero():
    m = mp.Sequential([mp.Linear(3, 1, rng=1)])
    m.compile(loss=mp.BinaryCrossEntropyWithLogits(), optimizer=mp.SGD(learning_rate=0.1), metrics=["accuracy"])
    logits = m.forward(X, training=False)
    assert m.evaluate(X, Y, verbose=0)[1] == pytest.approx(float(np.mean((logits > 0) == (Y > 0.5))))


@pytest.mark.parametrize("make", [lambda: [mp.Linear(3, 4, rng=1), mp.Softmax(), mp.Dropout(0.2)],
                                  lambda: [mp.Linear(3, 4, rng=1), Block([mp.Softmax()])]],
                         ids=["softmax-dropout", "subclass"])
def test_compile_warns_of_probabilities_behind_a_dropout_or_in_a_subclass(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.Sequential(make()).compile(loss=mp.SoftmaxCrossEntropy(), optimizer=mp.SGD(learning_rate=0.1))
    said = [str(w.message) for w in caught]
    assert any("outputs are those of its Softmax" in s and "takes logits" in s for s in said), said
