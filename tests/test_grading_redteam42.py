"""redteam42 F1: the classic crop of a conv's padded gradient, ``dxpad[:, :, pad:-pad, pad:-pad]``, is empty at pad 0
and scored 48 / 48 on cs231n_layers (every conv test padded by 1 or 2); the hidden test without padding takes it. F2: a
batchnorm ignoring bn_param's eps scored 48 / 48 (no test passed one); the hidden test's test-mode call now does.

F3: a dropout whose mask is shared along an axis of the batch, drawn once per example (a mask of shape
(N, 1): each row kept or dropped whole) or once per feature for the whole batch (``rng.random(D)`` broadcast over the
rows), keeps each entry's law (kept with 1 - p, scaled by 1/(1 - p)) and loses only the entries' independence: its
mean, mean square, gradients' mean and held central differences are all the reference's, and it kept its points,
alone and in a model (graded in the sandbox: 4 of 4 at every seed for the mask per example). The pairs of entries of
one row, and of one column, that are kept or dropped together now count as the reference's do. In process."""

import numpy as np
import pytest

import manualprop as mp
from gradcheck.grading.checks import layer_gradients
from tests.test_grading_hidden_inputs import CS, _submission, score

NEGATIVE_CROP = ("dx = dxpad[:, :, pad:pad + H, pad:pad + W]", "dx = dxpad[:, :, pad:-pad, pad:-pad]")


def test_the_negative_crop_of_a_conv_loses_the_no_padding_points_and_the_solution_keeps_them(monkeypatch):
    from gradcheck.grading import checks

    monkeypatch.setattr(checks, "DIAGNOSIS_FORWARDS", 0)  # scores only (test_grading_hidden_inputs' rule)
    bug, solution = _submission("cs231n_layers", "crop", NEGATIVE_CROP), _submission("cs231n_layers", "solution")
    for seed in (0, 1):  # before: no test had pad 0 (AttributeError on main)
        assert score(CS.test_hidden_conv_no_padding, bug, seed) == pytest.approx(2 / 3)  # dx, each trial
        assert score(CS.test_hidden_conv_no_padding, solution, seed) == 1.0


def test_a_batchnorm_ignoring_eps_loses_points_and_the_solution_keeps_them(monkeypatch):
    from gradcheck.grading import checks

    monkeypatch.setattr(checks, "DIAGNOSIS_FORWARDS", 0)
    bug = _submission("cs231n_layers", "eps", ('bn_param.get("eps", 1e-5)', "1e-5"))
    solution = _submission("cs231n_layers", "solution")
    for seed in (0, 1):
        assert score(CS.test_hidden_batchnorm, bug, seed) == pytest.approx(7 / 9)  # before: 1 (test mode's dx, dgamma)
        assert score(CS.test_hidden_batchnorm, solution, seed) == 1.0


def _mask(rng, shape, p, how):
    drawn = {"rows": (shape[0], 1), "cols": (shape[1],)}.get(how, shape)
    return np.broadcast_to((rng.random(drawn) >= p) / (1 - p), shape)


class Drop:
    """Inverted dropout whose mask is drawn per entry (``how="right"``), per example or per feature; ``dodge``:
    refusing a batch of 400 rows or more (the moments' probe, told by its size: redteam39 F1)."""

    def __init__(self, p=0.3, how="right", seed=0, dodge=False):
        self.p, self.how, self.dodge, self.rng, self.params, self.grads = p, how, dodge, \
            np.random.default_rng(seed), {}, {}

    def forward(self, X, training=False):
        if not training:
            return X
        if self.dodge and len(X) >= 400:
            raise MemoryError("no memory for this batch")
        self.mask = _mask(self.rng, X.shape, self.p, self.how)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class Model:
    """Linear(5, 4) -> ReLU -> Drop(0.3)."""

    def __init__(self, how="right", seed=0, dodge=False):
        self.params = {"0.W": np.random.default_rng(seed).standard_normal((4, 5)), "0.b": np.zeros(4)}
        self.grads, self.drop = {}, Drop(0.3, how, seed + 1, dodge)

    def forward(self, X, training=False):
        self.X, self.Z = X, X @ self.params["0.W"].T + self.params["0.b"]
        return self.drop.forward(np.maximum(self.Z, 0), training)

    def backward(self, dY):
        dZ = self.drop.backward(dY) * (self.Z > 0)
        self.grads = {"0.W": dZ.T @ self.X, "0.b": dZ.sum(axis=0)}
        return dZ @ self.params["0.W"]


def _dropout_parts(layer, seed=0):
    X = np.random.default_rng(100 + seed).standard_normal((8, 6))
    return layer_gradients(layer, X, mp.Dropout(0.3, rng=seed + 50), training=True, seed=seed).parts


def _model_parts(layer, seed=0):
    X = np.random.default_rng(200 + seed).standard_normal((6, 5))
    ref = mp.Sequential([mp.Linear(5, 4, rng=1), mp.ReLU(), mp.Dropout(0.3, rng=seed + 50)])
    return layer_gradients(layer, X, ref, training=True, seed=seed).parts


@pytest.mark.parametrize("how,dodge", [("rows", False), ("cols", True)])
def test_a_dropout_whose_mask_is_shared_along_the_batch_loses_its_point(how, dodge):
    (part,) = _dropout_parts(Drop(how=how, dodge=dodge))
    assert not part.passed  # before: passed (rows 5 of 5 seeds, cols refusing the probe 5 of 5)
    assert "are both kept or both dropped" in part.message and "independently" in part.message, part.message
    assert ("one per example" if how == "rows" else "one per feature") in part.message, part.message


def test_a_model_whose_dropout_drops_whole_examples_loses_its_points():
    parts = _model_parts(Model(how="rows"))
    assert not any(p.passed for p in parts)  # before: 3 / 3
    assert all("are both kept or both dropped" in p.message for p in parts), [p.message for p in parts]


def test_right_dropouts_keep_their_points():
    assert all(p.passed for p in _dropout_parts(Drop()))
    assert all(p.passed for p in _model_parts(Model()))
