"""verify41 M4: a Sequential ending in Softmax (Sigmoid) compiled with a loss that takes logits trained without a
word: the loss applies a second softmax and the model trains toward another objective. Keras warns ("received
from_logits=True, but the output argument was produced by a Softmax activation"); so do we, at compile.
"""
import warnings

import pytest

import autoprop as ap
import manualprop as mp

CASES = [
    (lambda: mp.Sequential(mp.Linear(4, 3, rng=0), mp.Softmax()), mp.SoftmaxCrossEntropy, "Softmax"),
    (lambda: mp.Sequential(mp.Linear(4, 1, rng=0), mp.Sigmoid()), mp.BinaryCrossEntropyWithLogits, "Sigmoid"),
    (lambda: ap.Sequential([ap.layers.Linear(4, 3, rng=0), ap.layers.Softmax()]), ap.losses.SoftmaxCrossEntropy,
     "Softmax"),
    (lambda: ap.Sequential([ap.layers.Linear(4, 1, rng=0), ap.layers.Sigmoid()]),
     ap.losses.BinaryCrossEntropyWithLogits, "Sigmoid"),
]


@pytest.mark.parametrize("make, loss, last", CASES)
def test_probabilities_into_a_logits_loss_are_warned_naming_both(make, loss, last):
    with pytest.warns(UserWarning, match=rf"the last layer is {last} .*{loss.__name__} takes logits") as rec:
        make().compile("sgd", loss())
    assert rec[0].filename == __file__  # the user's compile line


@pytest.mark.parametrize("make", [
    lambda: mp.Sequential(mp.Linear(4, 3, rng=0), mp.Tanh(), mp.Linear(3, 3, rng=1)),
    lambda: ap.Sequential([ap.layers.Linear(4, 3, rng=0)]),
])
def test_a_model_ending_in_logits_is_not_warned(make):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make().compile("sgd", (mp.SoftmaxCrossEntropy if isinstance(make(), mp.Sequential)
                               else ap.losses.SoftmaxCrossEntropy)())


def test_a_softmax_before_a_loss_on_probabilities_is_not_warned():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mp.Sequential(mp.Linear(4, 3, rng=0), mp.Softmax()).compile("sgd", mp.MeanSquaredError())
