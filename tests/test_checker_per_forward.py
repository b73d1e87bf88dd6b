"""What the checker does on each of its many forwards (a full check of a Linear(32, 64) runs about
4,200): the output's checks and the objective ``L = sum(Y * G)``.

The output is proven finite by one dot product (``Y . Y`` is finite only if every entry is), the
rule manualprop's own input checks use; only a non-finite dot (a NaN/inf, or squares that
overflow) looks at the entries, to name them. Every error is the one it was: same type, same
words. The objective is numpy's own pairwise sum, bit for bit what ``np.sum`` gives.
"""

import numpy as np
import pytest

from gradcheck import _validation as V
from gradcheck.errors import GradientShapeError, NonFiniteError, NotCheckedError
from gradcheck.numerical import scalar_objective


def out(value, **kw):
    return V.check_output(value, owner="Lin", tensor="Y", produced_by="forward(X)",
                          **{"expected_shape": None, **kw})


@pytest.mark.parametrize("bad, count, first, shown", [
    ({(1, 2): np.nan}, 1, (1, 2), "nan"),
    ({(0, 3): np.inf, (2, 0): -np.inf}, 2, (0, 3), "inf"),
    ({(2, 4): -np.inf}, 1, (2, 4), "-inf"),
])
def test_a_non_finite_output_is_named_as_before(bad, count, first, shown):
    Y = np.arange(15.0).reshape(3, 5)
    for i, v in bad.items():
        Y[i] = v
    with pytest.raises(NonFiniteError) as e:
        out(Y)
    assert " ".join(str(e.value).split()) == (
        f"Lin.forward(X) gave Y containing {count} non-finite value(s) (first at index {first}: {shown}); "
        "expected finite numbers. Check for division by zero, log of 0, or exp overflow.")


def test_finite_outputs_whose_squares_overflow_are_accepted_and_returned_exactly():
    Y = np.array([[1e200, -3e180], [2.5, 0.0]])  # Y . Y overflows to inf; every entry is finite
    got = out(Y)
    assert got.dtype == np.float64 and np.array_equal(got, Y) and got is not Y


@pytest.mark.parametrize("Y", [np.float32([1.0, np.inf]), np.array(np.nan), np.array([[np.nan]])],
                         ids=["float32-inf", "0-d-nan", "1x1-nan"])
def test_every_shape_and_float_dtype_is_still_checked(Y):
    with pytest.raises(NonFiniteError, match=r"containing 1 non-finite value\(s\)"):
        out(Y)


def test_empty_integer_and_wrong_shape_outputs_are_judged_as_before():
    with pytest.raises(NotCheckedError, match=r"returned an empty Y of shape \(0, 3\) \(size 0 along axis 0\)"):
        out(np.zeros((0, 3)))  # newuser35 M1: an empty forward output cannot be checked (a traceback followed)
    with pytest.raises(GradientShapeError, match="of dtype int64"):
        out(np.arange(3))
    with pytest.raises(GradientShapeError, match="That is the transpose of the expected shape"):
        out(np.zeros((3, 2)), expected_shape=(2, 3))


def test_a_finite_output_is_proven_finite_by_one_dot_without_an_element_scan(monkeypatch):
    """The per-forward cost: a finite Y is not scanned element by element (np.isfinite)."""
    def scan(*a, **k):
        raise AssertionError("element scan of a finite output")
    Y = np.random.default_rng(0).standard_normal((16, 64))
    monkeypatch.setattr(np, "isfinite", scan)
    assert np.array_equal(out(Y), Y)
    with pytest.raises(AssertionError, match="element scan"):  # a NaN is still looked for entry by entry
        out(np.where(Y > 2, np.nan, Y))


@pytest.mark.parametrize("shape", [(16, 64), (4, 8, 16, 16), (7,), ()])
def test_the_objective_is_bit_for_bit_numpys_sum(shape):
    rng = np.random.default_rng(3)
    Y, G = rng.standard_normal(shape) * 1e3, rng.standard_normal(shape)
    assert scalar_objective(Y, G) == float(np.sum(Y * G))
    Yt = np.asfortranarray(Y)  # another memory order: the same numbers
    assert scalar_objective(Yt, G) == float(np.sum(np.asarray(Yt, dtype=np.float64) * G))
    Y32 = Y.astype(np.float32)  # promoted to float64 first, as before
    assert scalar_objective(Y32, G) == float(np.sum(np.asarray(Y32, dtype=np.float64) * G))
