"""redteam41's two LOW findings on a model test (a ``Sequential`` reference): the command the feedback prints runs,
and a square model's failing training moments are not told as ``Y / X``."""
import numpy as np

import manualprop as mp
from gradcheck.grading.checks import layer_gradients
from gradcheck.grading.diagnosis import reproduce


class Graded:
    file, class_name = "layers.py", "Model"


def test_a_sequential_reference_is_not_named_in_a_command_that_cannot_build_it():
    """``--reference manualprop.Sequential`` builds an empty Sequential (its layers are no constructor argument
    ``--reference-init`` can give): the printed command stopped with a usage error. It now says the course's
    reference is not in the command; a single layer's reference is still named with its settings."""
    said = reproduce(Graded(), (6, 5), training=True, reference=mp.Sequential(mp.Linear(5, 3), mp.ReLU()))
    assert "--reference" not in said and "`gradcheck check layers.py::Model --input-shape 6,5 --training`" in said
    assert "course's own reference, which this command does not have" in said
    said = reproduce(Graded(), (6, 5), training=True, reference=mp.Linear(5, 3))
    assert "--reference manualprop.Linear --reference-init '{\"in_features\": 5, \"out_features\": 3}'" in said


class SquareNoScale:
    """Linear(5, 5) -> ReLU -> Dropout(0.3) without 1/(1 - p): forward and backward agree, the output's scale is
    wrong; the output has the input's shape but is no elementwise function of it."""

    def __init__(self, seed):
        r = np.random.default_rng(seed)
        self.params = {"0.W": r.standard_normal((5, 5)), "0.b": np.zeros(5)}
        self.grads, self.rng = {}, np.random.default_rng(seed + 1)

    def forward(self, X, training=False):
        self.X, self.Z = X, X @ self.params["0.W"].T + self.params["0.b"]
        self.m = (self.rng.random(self.Z.shape) >= 0.3) * 1.0 if training else 1.0
        return np.maximum(self.Z, 0) * self.m

    def backward(self, dY):
        dZ = dY * self.m * (self.Z > 0)
        self.grads = {"0.W": dZ.T @ self.X, "0.b": dZ.sum(axis=0)}
        return dZ @ self.params["0.W"]


def test_a_square_models_wrong_scale_is_told_by_its_moments_not_by_y_over_x():
    X = np.random.default_rng(100).standard_normal((6, 5))
    ref = mp.Sequential([mp.Linear(5, 5, rng=1), mp.ReLU(), mp.Dropout(0.3, rng=0)])
    verdict = layer_gradients(SquareNoScale(0), X, ref, training=True, seed=0)
    assert not verdict.passed
    said = " ".join(p.message for p in verdict.parts)
    assert "SquareNoScale's output has a mean" in said and "Y / X" not in said, said


def test_a_right_square_model_keeps_its_points():
    X = np.random.default_rng(101).standard_normal((6, 5))
    ref = mp.Sequential([mp.Linear(5, 5, rng=1), mp.ReLU(), mp.Dropout(0.3, rng=0)])
    model = mp.Sequential([mp.Linear(5, 5, rng=1), mp.ReLU(), mp.Dropout(0.3, rng=7)])
    assert layer_gradients(model, X, ref, training=True, seed=1).passed
