"""staff45 F2: a BatchNorm's running statistics are compared whatever the student named them.

The comparison with the reference's (``gradcheck check --training --reference``, and ``grade.layer_gradients(...,
training=True)``, which fails every gradient part on a difference: redteam43 F5) found the student's statistics by
name or role alone (``running_*``, ``moving_*``, ``mean``, ``var``), so one bug scored two ways: a momentum-swapped
BatchNorm2D with ``running_mean``/``running_var`` scored 24 / 30 on staff45's assignment, the same file with the
attributes renamed ``run_mu``/``run_sigma2`` 30 / 30. Arrays the training forward writes whose names tell no role are
now matched to the reference's statistics by their values, when they are as many as its statistics and of their
shapes.
"""

import numpy as np
import pytest

import manualprop as mp
from gradcheck.grading.checks import layer_gradients
from tests.test_grading_redteam43 import BatchNorm


class Renamed(BatchNorm):
    """redteam43's class batchnorm with its running statistics kept as ``run_mu``/``run_sigma2``."""

    def __init__(self, num_features, update="right"):
        super().__init__(num_features, update)
        self.run_mu, self.run_sigma2 = self.__dict__.pop("running_mean"), self.__dict__.pop("running_var")

    def forward(self, X, training=False):
        self.running_mean, self.running_var = self.run_mu, self.run_sigma2
        Y = super().forward(X, training)
        self.run_mu, self.run_sigma2 = self.__dict__.pop("running_mean"), self.__dict__.pop("running_var")
        return Y


X = np.random.default_rng(3).normal(1.0, 2.0, (6, 4))


@pytest.mark.parametrize("update", ["swapped"])  # "none": renamed arrays no forward moves are not found (left)
def test_renamed_wrong_statistics_lose_the_training_points_as_running_mean_does(update):
    named = layer_gradients(BatchNorm(4, update), X, mp.BatchNorm1D(4), training=True, seed=1)
    renamed = layer_gradients(Renamed(4, update), X, mp.BatchNorm1D(4), training=True, seed=1)
    assert not any(p.passed for p in named.parts), named.markdown()
    assert not any(p.passed for p in renamed.parts), renamed.markdown()  # before: every part passed (not compared)
    assert "run_mu" in renamed.parts[0].message, renamed.parts[0].message


def test_renamed_right_statistics_keep_their_points():
    renamed = layer_gradients(Renamed(4), X, mp.BatchNorm1D(4), training=True, seed=1)
    assert renamed.passed, renamed.markdown()
