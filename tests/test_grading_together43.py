"""verify42b F14: the model-level check of entries kept or dropped together (redteam42 F3) missed a dropout drawing one
keep per example in a model Linear(5, 4) -> ReLU -> dropout on a (6, 5) input at seeds 1, 2 and 4 (its test ran
seed 0 only): about half of the outputs are the ReLU's zeros at every draw, and their pairs only added spread. The
pairs are now counted over the entries some draw of the reference keeps, and a suspect count calls for more calls.
verify42b F7: a mask layer drawing one keep per example at p = 0.05 on an (8, 6) input passed at every seed (17
forwards, about 7 standard errors off, inside the second look's allowance); a suspect count now calls 64 forwards
more. In process; the right dropouts are the controls."""

import numpy as np
import pytest

import manualprop as mp
from gradcheck.grading.checks import layer_gradients
from tests.test_grading_redteam42 import Drop, Model, _model_parts


@pytest.mark.parametrize("seed", [1, 4])
def test_a_model_whose_dropout_drops_whole_examples_loses_its_points_at_other_seeds(seed):
    parts = _model_parts(Model(how="rows", seed=seed), seed=seed)
    assert not any(p.passed for p in parts)  # before: 3 / 3 at these seeds
    assert all("are both kept or both dropped" in p.message for p in parts), [p.message for p in parts]


def test_a_model_whose_dropout_drops_whole_features_and_dodges_the_probe_loses_its_points_at_seed_1():
    parts = _model_parts(Model(how="cols", seed=1, dodge=True), seed=1)
    assert not any(p.passed for p in parts)  # before: 3 / 3
    assert all("one per feature" in p.message for p in parts), [p.message for p in parts]


def test_the_right_model_keeps_its_points_at_seed_4():
    assert all(p.passed for p in _model_parts(Model(seed=4), seed=4))


def _small_p_parts(how, seed):
    X = np.random.default_rng(100 + seed).standard_normal((8, 6))
    return layer_gradients(Drop(0.05, how, seed), X, mp.Dropout(0.05, rng=seed + 50), training=True, seed=seed).parts


@pytest.mark.parametrize("seed", [0, 1])
def test_a_dropout_drawing_one_keep_per_example_at_p_005_loses_its_point(seed):
    (part,) = _small_p_parts("rows", seed)
    assert not part.passed  # before: passed
    assert "one per example" in part.message and "over 81 training forwards" in part.message, part.message


@pytest.mark.parametrize("seed", [0, 1])
def test_a_right_dropout_at_p_005_keeps_its_point(seed):
    assert all(p.passed for p in _small_p_parts("right", seed))
