"""Session 40 (the lead's fixes of two tester findings).

redteam40 F1 on ``gradcheck check``: a right dropout at a low rate on a small input FAILed "non-deterministic
forward" at 16 of 40 seeds: its three probe forwards agreed by chance (Dropout(0.05) keeps all 6 entries three times
running 40% of the time), so its draws were not held, and the check's two calls then differed. Three agreeing
forwards that moved the layer's generators are now followed by up to 43 more looking for a difference.

verify40b F2: a loss a constant factor off (0.5 * mean MSE, a doubled cross-entropy, a per-feature sum at N = C) was
told "the loss sums over the batch where the reference averages; divide by N" whenever the factor happened to equal
the batch size; the batch's reduction is now named only where the loss is the sum (mean) of its rows alone and each
row agrees with the reference's, the others as a constant factor.
"""
import pytest
from test_cli import check_source

DROPOUT = """
import numpy as np

class Dropout:
    def __init__(self, p=0.5):
        self.p, self.rng = p, np.random.default_rng(SEED)
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        if not training:
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask
"""


@pytest.mark.parametrize("seed", ["2", "3"])  # the layer's own seed: both FAILed before ("two calls ... differ")
def test_a_right_dropout_whose_probe_forwards_agree_by_chance_passes(tmp_path, seed):
    code, out = check_source(tmp_path, DROPOUT.replace("SEED", seed), "Dropout", "--input-shape", "2,3", "--init", '{"p": 0.05}',
                             "--training", "--reference", "manualprop.Dropout", "--reference-init", '{"p": 0.05}',
                             "--seed", "0")
    assert code == 0, out
    assert "PASS: Dropout" in out and "its draws held fixed" in " ".join(out.split()), out


def test_a_dropout_without_its_scale_still_fails_there(tmp_path):
    code, out = check_source(tmp_path, DROPOUT.replace(" / (1 - self.p)", "").replace("SEED", "0"), "Dropout", "--input-shape", "4,5",
                             "--init", '{"p": 0.3}', "--training", "--reference", "manualprop.Dropout",
                             "--reference-init", '{"p": 0.3}', "--seed", "0")
    assert code == 1, out


LOSSES = """
import numpy as np

def _logp(y_pred):
    z = y_pred - y_pred.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

class MSEHalf:
    def forward(self, y_pred, y_true):
        self.d = y_pred - y_true
        return 0.5 * np.mean(self.d ** 2)
    def backward(self):
        return self.d / self.d.size

class MSEPerSample:
    def forward(self, y_pred, y_true):
        self.d = y_pred - y_true
        return np.sum(self.d ** 2) / len(y_pred)
    def backward(self):
        return 2 * self.d / len(self.d)

class CEDouble:
    def forward(self, y_pred, y_true):
        logp = _logp(y_pred)
        self.p, self.y = np.exp(logp), y_true
        return -2 * logp[np.arange(len(y_true)), y_true].mean()
    def backward(self):
        d = self.p.copy(); d[np.arange(len(self.y)), self.y] -= 1
        return 2 * d / len(self.y)

class CESum:
    def forward(self, y_pred, y_true):
        logp = _logp(y_pred)
        self.p, self.y = np.exp(logp), y_true
        return -logp[np.arange(len(y_true)), y_true].sum()
    def backward(self):
        d = self.p.copy(); d[np.arange(len(self.y)), self.y] -= 1
        return d
"""
MSE, CE = ("--reference", "manualprop.MeanSquaredError"), ("--targets", "labels", "--reference",
                                                             "manualprop.SoftmaxCrossEntropy")


@pytest.mark.parametrize("name, shape, ref, factor", [
    ("MSEHalf", "2,3", MSE, "L is 2 times too small: L and dy_pred are both 0.5 times the reference's"),
    ("CEDouble", "2,5", CE, "L is 2 times too large: L and dy_pred are both 2 times the reference's"),
    ("MSEPerSample", "5,5", MSE, "L is 5 times too large: L and dy_pred are both 5 times the reference's"),
])
def test_a_constant_factor_equal_to_the_batch_size_is_not_called_the_batch_reduction(tmp_path, name, shape, ref,
                                                                                     factor):
    code, out = check_source(tmp_path, LOSSES, name, "--loss", "--input-shape", shape, *ref)
    text = " ".join(out.split())
    assert code == 1, text
    assert "divide by N" not in text and "multiply by N" not in text, text  # (before: one of them, wrongly)
    assert factor in text and "not the batch's reduction alone" in text, text


def test_a_loss_summed_over_the_batch_is_still_named_so(tmp_path):
    code, out = check_source(tmp_path, LOSSES, "CESum", "--loss", "--input-shape", "3,5", *CE)
    text = " ".join(out.split())
    assert code == 1 and "the loss sums over the batch where the reference averages; divide by N" in text, text
