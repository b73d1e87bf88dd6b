"""Session 13: ``diagnose``'s localisation of a failing model calls each sub-layer through the adapters the
check uses (:func:`gradcheck._adapters.adapt`), not bare with ``training=``: a model of two attribute-style
sub-layers (``forward(X)`` without a training argument) whose SECOND has the bug was named as failing in
``layers[0]`` ("forward must accept a training keyword"), a misleading first finding."""

import numpy as np

from gradcheck import _adapters
from gradcheck.diagnose import diagnose_layer


class Dense:
    """attribute style (W/dW, b/db), ``forward(X)`` without a training argument; ``bug``: dX scaled"""

    def __init__(self, n_in, n_out, seed, bug=1.0):
        rng = np.random.default_rng(seed)
        self.W, self.b, self.bug = rng.standard_normal((n_in, n_out)), rng.standard_normal(n_out), bug

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        return self.bug * dY @ self.W.T


class Net:
    def __init__(self, bug=2.0):
        self.layers = [Dense(5, 4, 0), Dense(4, 3, 1, bug=bug)]

    def forward(self, X):
        for layer in self.layers:
            X = layer.forward(X)
        return X

    def backward(self, dY):
        for layer in reversed(self.layers):
            dY = layer.backward(dY)
        return dY


def _diagnose(net):
    X = np.random.default_rng(0).standard_normal((4, 5))
    return diagnose_layer(_adapters.adapt(net, (X,))[0], (4, 5), name="Net")


def test_the_second_sub_layer_is_named_first_failing():
    d = _diagnose(Net())
    assert not d.passed and d.codes[0] == "first-failing-layer", d.report()
    i, sub = d.sublayer
    assert i == 1, d.sentence()
    assert sub.codes[0] == "factor" and "training" not in sub.sentence(), sub.sentence()
    assert "layers[1] (Dense)" in d.sentence() and "2 times the correct gradient" in d.sentence(), d.sentence()


def test_a_correct_model_passes():
    assert _diagnose(Net(bug=1.0)).passed


class DenseStep:
    """a Dense whose backward steps W and b at its own rate ``self.lr``; ``after``: dX with the stepped W (a bug)"""

    def __init__(self, n_in, n_out, seed, after=False):
        rng = np.random.default_rng(seed)
        self.W, self.b, self.after = rng.standard_normal((n_in, n_out)) * 0.5, rng.standard_normal(n_out), after
        self.lr = 0.1

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= self.lr * (self.X.T @ dY)
        self.b -= self.lr * dY.sum(0)
        return dY @ self.W.T if self.after else dX


class StepNet(Net):
    """a model of two sub-layers stepping their own weights; the FIRST computes dX after its step (in the second,
    the bug would make the first's step depend on the rate through its dY: the model is then refused as not a
    plain gradient-descent step before any check, so nothing is localised)"""

    def __init__(self, after=True):
        self.layers = [DenseStep(5, 4, 0, after=after), DenseStep(4, 3, 1)]


def test_a_sub_layer_that_steps_its_weights_is_checked_as_the_check_reads_it():
    d = _diagnose(StepNet())
    assert not d.passed and d.codes[0] == "first-failing-layer", d.report()
    i, sub = d.sublayer
    assert i == 0 and sub.codes[0] == "dx-after-step", (i, sub.sentence())
    assert _diagnose(StepNet(after=False)).passed
