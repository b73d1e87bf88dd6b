"""newuser23 M1: fast mode on a large tensor whose directional test fails checks a random sample of its entries
(enough to show and name the failure, said in the notes and the 'checked' column) instead of every entry, whose
cost grew with the square of the size (TanhTiny at 1000x1000: nothing printed for over 10 minutes); a sample that
passes leaves every entry to be checked, so a bug in one entry is still found."""

import numpy as np

from gradcheck import check_layer, diagnose_layer
from gradcheck.check import FAST_SAMPLE, FAST_SAMPLE_ABOVE


class Tanh:
    """tanh whose backward is scaled by ``factor``, and by ``one`` at entry [0, 0] alone."""

    def __init__(self, factor=1.0, one=1.0):
        self.params, self.grads, self.factor, self.one = {}, {}, factor, one

    def forward(self, X, training=False):
        self.Y = np.tanh(X)
        return self.Y

    def backward(self, dY):
        dX = dY * (1 - self.Y ** 2) * self.factor
        dX[0, 0] *= self.one
        return dX


X = np.random.default_rng(0).standard_normal((120, 100))  # 12000 entries


def test_sizes():
    assert X.size > FAST_SAMPLE_ABOVE and FAST_SAMPLE == 64


def test_an_error_everywhere_is_shown_by_a_sample():
    res = check_layer(Tanh(1 + 1e-5), X, twin=None, mode="fast")
    c = res.records[0].get("manual-vs-numerical")
    assert res.failing_tensors == ["dX"] and c.how == "sample" and c.n_compared == FAST_SAMPLE, res.table()
    words = " ".join(res.table().split())
    assert f"random sample of {FAST_SAMPLE} of its 12,000 entries" in words and f"{FAST_SAMPLE}/12000" in words
    assert int(np.isfinite(res.gradients["numerical"]["dX"]).sum()) == FAST_SAMPLE


def test_the_diagnosis_counts_the_sampled_entries():
    d = diagnose_layer(Tanh(1 + 1e-5), X, mode="fast")
    s = d.sentence()
    assert not d.passed and f"of {FAST_SAMPLE} sampled elements" in s, s


def test_an_error_in_one_entry_the_sample_misses_is_found_entry_by_entry():
    res = check_layer(Tanh(1.0, one=1.5), X, twin=None, mode="fast")
    c = res.records[0].get("manual-vs-numerical")
    assert res.failing_tensors == ["dX"] and c.how == "elements" and c.worst_index == (0, 0), res.table()


def test_a_right_tanh_still_passes_on_its_directional_test():
    res = check_layer(Tanh(), X, twin=None, mode="fast")
    assert res.passed and res.records[0].get("manual-vs-numerical").how == "directional", res.table()
