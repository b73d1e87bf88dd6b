"""The sum of squares behind manualprop's and gradcheck's NaN/inf checks (``sum_of_squares``).

OpenBLAS runs a dot of more than 10,000 elements on all its threads; on a machine whose cores
are busy, its idle threads spin, and one such dot took 4 ms instead of 40 us (gradcheck's
Conv2D check: 65 s instead of 11 s). No check may hand BLAS a dot that large, whatever the
array's size, and the value must not depend on how the dot was split.
"""

import math
import warnings

import numpy as np
import pytest

import manualprop as mp
from gradcheck import _validation as GV
from manualprop import _validation as V

OPENBLAS_THREADED_ABOVE = 10_000  # interface/dot.c: n <= 10000 runs on one thread


@pytest.fixture
def dot_sizes(monkeypatch):
    """Record the length of every dot the checks ask for (both the bound and np.vdot itself)."""
    sizes = []
    real = V._vdot

    def recording(a, b):
        sizes.append(np.size(a))
        return real(a, b)

    monkeypatch.setattr(V, "_vdot", recording)
    monkeypatch.setattr(np, "vdot", recording)
    return sizes


@pytest.mark.parametrize("shape", [(3,), (8192,), (8193,), (4, 16, 16, 16), (64, 8, 16, 16)])
def test_value_is_the_sum_of_squares_in_chunks_small_enough_for_one_thread(shape, dot_sizes):
    X = np.random.default_rng(0).standard_normal(shape)
    got = V.sum_of_squares(X)
    assert isinstance(got, float)
    assert got == pytest.approx(math.fsum((X * X).ravel().tolist()), rel=1e-13)
    assert dot_sizes and max(dot_sizes) <= V.DOT_CHUNK <= OPENBLAS_THREADED_ABOVE
    assert len(dot_sizes) == -(-X.size // V.DOT_CHUNK)


def test_non_contiguous_and_integer_arrays():
    X = np.arange(40_000, dtype=np.float64).reshape(200, 200)[:, ::2]
    assert V.sum_of_squares(X) == pytest.approx(math.fsum((X * X).ravel().tolist()), rel=1e-13)
    n = np.arange(20_000, dtype=np.int64) % 7
    assert V.sum_of_squares(n) == float(np.sum(n * n))


@pytest.mark.parametrize("bad, expect", [(np.nan, "nan"), (np.inf, "inf"), (-np.inf, "inf"), (1e200, "inf")])
def test_nan_and_inf_anywhere_and_overflow_silently(bad, expect):
    X = np.ones(30_000)
    X[-1] = bad  # in the last chunk
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = V.sum_of_squares(X)
    assert math.isnan(got) if expect == "nan" else got == math.inf


def test_layers_and_the_checker_never_ask_for_a_threaded_dot(dot_sizes):
    """A batch whose output has 2048 x 256 elements and a 64 x 256 weight: Linear's, the
    optimizer's and gradcheck's checks."""
    rng = np.random.default_rng(1)
    layer = mp.Linear(64, 256, rng=0)
    X = rng.standard_normal((2048, 64))
    Y = layer.forward(X)
    layer.backward(rng.standard_normal(Y.shape))
    mp.SGD(learning_rate=0.1).step(layer.params, layer.grads)  # the optimizer's look at each gradient
    out = GV.check_output(Y, owner="Linear", tensor="Y", produced_by="forward(X)", expected_shape=Y.shape)
    np.testing.assert_array_equal(out, Y)
    assert dot_sizes and max(dot_sizes) <= OPENBLAS_THREADED_ABOVE
    with pytest.raises(Exception, match="non-finite"):
        GV.check_output(np.where(np.arange(Y.size).reshape(Y.shape) == 100_000, np.nan, Y), owner="Linear",
                        tensor="Y", produced_by="forward(X)", expected_shape=Y.shape)
