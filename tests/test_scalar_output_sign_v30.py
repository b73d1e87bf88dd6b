"""review30 LOW: a layer with a scalar output has one upstream number G; drawn positive (seeds 1-3), a backward that
takes ``abs(dY)`` (or ``np.maximum(dY, 0)``) gave the right numbers and PASSed. G of one entry is now negative."""

import numpy as np
import pytest

from gradcheck import check_layer
from gradcheck._kernel import probe_rng, upstream_draw


class SumSq:
    """Y = sum(X**2), a scalar; ``wrong``: backward passes dY through ``wrong`` first."""

    def __init__(self, wrong=None):
        self.params, self.grads, self.wrong = {}, {}, wrong

    def forward(self, X, training=False):
        self.X = X
        return np.sum(X ** 2)

    def backward(self, dY):
        return (dY if self.wrong is None else self.wrong(dY)) * 2 * self.X


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_abs_of_dy_in_a_scalar_layer_fails_at_every_seed(seed):
    assert check_layer(SumSq(), (4, 3), seed=seed).passed
    assert not check_layer(SumSq(np.abs), (4, 3), seed=seed).passed
    assert not check_layer(SumSq(lambda g: np.maximum(g, 0)), (4, 3), seed=seed).passed


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_one_entry_g_is_negative_and_a_larger_one_keeps_its_draw(shape):
    assert all(upstream_draw(probe_rng(s), shape) < 0 for s in range(20))
    assert np.array_equal(upstream_draw(probe_rng(1), (3, 2)), probe_rng(1).standard_normal((3, 2)))
