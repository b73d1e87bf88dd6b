"""verify41b F0: ``compile(metrics=["accuracy"])`` on a one-output model ending in Sigmoid read each probability as a
logit (positive above 0): every prediction was 1 and the accuracy the share of label 1. After a Sigmoid the outputs
are probabilities, positive above 1/2, as Keras's binary accuracy thresholds them."""
import numpy as np
import pytest

import autoprop as ap
import manualprop as mp


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 4))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


@pytest.mark.parametrize("track", ["manualprop", "autoprop"])
def test_a_sigmoid_models_accuracy_is_counted_at_one_half(track):
    X, y = _data()
    if track == "manualprop":
        m = mp.Sequential(mp.Linear(4, 1, rng=0), mp.Sigmoid())
        m.compile(mp.SGD(learning_rate=0.1), mp.MeanSquaredError(), metrics=["accuracy"])
        p = m.forward(X)[:, 0]
    else:
        m = ap.layers.Sequential(ap.layers.Linear(4, 1, rng=0), ap.layers.Sigmoid())
        m.compile(ap.optimizers.SGD(learning_rate=0.1), ap.losses.MeanSquaredError(), metrics=["accuracy"])
        p = m(X).numpy()[:, 0]
    _, acc = m.evaluate(X, y.reshape(-1, 1).astype(float), verbose=0)
    by_hand = np.mean((p > 0.5) == (y == 1))
    assert p.min() > 0 and by_hand != y.mean()  # the case tells the two readings apart
    assert acc == by_hand


def test_a_logit_models_accuracy_is_still_counted_at_zero():
    X, y = _data()
    m = mp.Sequential(mp.Linear(4, 1, rng=0))
    m.compile(mp.SGD(learning_rate=0.1), mp.BinaryCrossEntropyWithLogits(), metrics=["accuracy"])
    z = m.forward(X)[:, 0]
    _, acc = m.evaluate(X, y.reshape(-1, 1).astype(float), verbose=0)
    assert acc == np.mean((z > 0) == (y == 1))
