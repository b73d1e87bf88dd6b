"""redteam38: ``grade.layer_gradients(..., training=True)`` against a random reference judged a dropout's gradients by
central differences of its own forward (newuser37 F1) and so gave full points to a dropout whose forward and backward
both leave out 1/(1 - p), where ``gradcheck check --training --reference manualprop.Dropout`` FAILs it by the
training output's mean (newuser37 F7, :func:`gradcheck.diagnose.random_mean_finding`). The grader now compares the means as check does."""

import numpy as np

import manualprop as mp
from gradcheck.grading.checks import layer_gradients


class NoScaleDropout:
    """Inverted dropout without its scale: Y = X * mask, dX = dY * mask (forward and backward agree)."""

    def __init__(self, p=0.5, seed=0):
        self.p, self.rng = p, np.random.default_rng(seed)

    def forward(self, X, training=False):
        if not training:
            return X
        self.mask = self.rng.random(X.shape) >= self.p
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class ScaledDropout(NoScaleDropout):
    def forward(self, X, training=False):
        if not training:
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask


def test_a_dropout_without_its_scale_loses_the_gradient_points():
    X = np.random.default_rng(0).standard_normal((6, 5))
    v = layer_gradients(NoScaleDropout(0.5), X, mp.Dropout(0.5, rng=2), training=True, seed=7)
    assert not v.passed  # before: passed (its mask held, its own forward the judge)
    msg = " ".join(p.message for p in v.parts)
    assert "in training mode, NoScaleDropout's output averages 0.49 X over 4000 entries, Dropout's 0.99 X" in msg, msg
    assert "1/(1 - p)" in msg


def test_a_correct_dropout_keeps_them_with_the_comparison_said():
    X = np.random.default_rng(0).standard_normal((6, 5))
    v = layer_gradients(ScaledDropout(0.5), X, mp.Dropout(0.5, rng=2), training=True, seed=7)
    assert v.passed, [p.message for p in v.parts]
    assert any("the training output's mean compared with Dropout's" in n for n in v.notes), v.notes
