"""manualprop.init: the initialisers autoprop shares."""

import math

import numpy as np
import pytest

from manualprop import Linear
from manualprop.init import as_rng, linear_params


def test_as_rng():
    g = np.random.default_rng(3)
    assert as_rng(g) is g
    assert isinstance(as_rng(None), np.random.Generator)
    assert as_rng(7).random() == np.random.default_rng(7).random()
    assert as_rng(np.int64(7)).random() == np.random.default_rng(7).random()
    with pytest.raises(
        TypeError,
        match=r"as_rng: rng must be None, a non-negative int seed or a numpy.random.Generator .*; got RandomState",
    ):
        as_rng(np.random.RandomState(0))
    with pytest.raises(TypeError, match=r"got bool"):
        as_rng(True)
    with pytest.raises(TypeError, match=r"got float"):
        as_rng(1.0)
    with pytest.raises(ValueError, match=r"as_rng: rng seed must be a non-negative int; got -1"):
        as_rng(-1)


def test_linear_params_rule_w_first_then_b_same_generator():
    p = linear_params(4, 3, rng=11)
    ref = np.random.default_rng(11)
    k = 1 / math.sqrt(4)
    np.testing.assert_array_equal(p["W"], ref.uniform(-k, k, size=(3, 4)))
    np.testing.assert_array_equal(p["b"], ref.uniform(-k, k, size=(3,)))
    assert p["W"].dtype == p["b"].dtype == np.float64


def test_linear_params_bound_and_spread():
    p = linear_params(25, 400, rng=0)
    k = 0.2
    for a in (p["W"], p["b"]):
        assert a.min() >= -k and a.max() < k
    # U(-k, k): std k/sqrt(3); 10000 draws give it to well within 2%
    np.testing.assert_allclose(p["W"].std(), k / math.sqrt(3), rtol=0.02)
    assert p["W"].min() < -0.95 * k and p["W"].max() > 0.95 * k


def test_linear_params_float32_is_rounded_float64_and_generator_advances():
    p32 = linear_params(3, 2, rng=5, dtype=np.float32)
    p64 = linear_params(3, 2, rng=5)
    assert p32["W"].dtype == np.float32 and p32["b"].dtype == np.float32
    np.testing.assert_array_equal(p32["W"], p64["W"].astype(np.float32))
    g = np.random.default_rng(0)
    first, second = linear_params(3, 2, rng=g), linear_params(3, 2, rng=g)
    assert not np.array_equal(first["W"], second["W"])


def test_same_seed_same_weights_in_layer():
    a, b = Linear(5, 2, rng=42), Linear(5, 2, rng=42)
    np.testing.assert_array_equal(a.params["W"], b.params["W"])
    np.testing.assert_array_equal(a.params["W"], linear_params(5, 2, rng=42)["W"])


def test_linear_params_bad_args():
    with pytest.raises(
        ValueError, match=r"^linear_params: in_features must be a positive int; got -2$"
    ):
        linear_params(-2, 3)
    with pytest.raises(
        TypeError, match=r"^linear_params: dtype must be float32 or float64; got 'int64'$"
    ):
        linear_params(2, 3, dtype="int64")
