"""Session 42's speed changes keep every value and every error (issue 15, issue 10's checker figure).

``im2col`` builds its strided view directly (no ``np.pad``, ``sliding_window_view`` or ``moveaxis``):
the columns must be the ones the old construction gives, element for element, in the same C layout,
for any kernel, stride, padding and dilation, any memory layout of the input, and the same error
when a window does not fit.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from manualprop._im2col import im2col


def _reference(X, kernel_size, stride, padding, dilation):
    """The construction of sessions 1-41: np.pad, sliding_window_view of the dilated span, slices, moveaxis."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    X = np.asarray(X)
    if ph or pw:
        X = np.pad(X, [(0, 0)] * (X.ndim - 2) + [(ph, ph), (pw, pw)])
    v = sliding_window_view(X, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(-2, -1))
    v = v[..., ::sh, ::sw, ::dh, ::dw]
    return np.ascontiguousarray(np.moveaxis(v, (-2, -1), (-4, -3)))


SPECS = [
    ((3, 3), (1, 1), (1, 1), (1, 1)),
    ((3, 3), (2, 2), (0, 0), (1, 1)),
    ((2, 3), (2, 1), (1, 2), (2, 1)),
    ((1, 1), (1, 1), (0, 0), (1, 1)),
    ((5, 2), (3, 2), (2, 0), (1, 3)),
    ((4, 4), (1, 3), (3, 1), (2, 2)),
]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("layout", ["C", "F", "sliced", "reversed"])
def test_im2col_gives_the_old_columns_bit_for_bit_in_every_layout(spec, layout):
    rng = np.random.default_rng(len(layout))
    X = rng.standard_normal((2, 3, 9, 11))
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "sliced":
        X = rng.standard_normal((3, 5, 19, 23))[::2, ::2, 1::2, ::2]
    elif layout == "reversed":
        X = X[:, ::-1, ::-1, ::-1]
    got, want = im2col(X, *spec), _reference(X, *spec)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.flags.c_contiguous
    assert np.array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128, bool])
def test_im2col_keeps_the_dtype_and_pads_with_zeros(dtype):
    X = (np.arange(2 * 5 * 6).reshape(2, 5, 6) % 7).astype(dtype)
    got, want = im2col(X, 3, 1, 2), _reference(X, (3, 3), (1, 1), (2, 2), (1, 1))
    assert got.dtype == want.dtype == np.dtype(dtype)
    assert np.array_equal(got, want)


def test_im2col_of_a_spatial_only_and_an_empty_batch():
    X = np.arange(30.0).reshape(5, 6)
    assert np.array_equal(im2col(X, 2, 1, 1), _reference(X, (2, 2), (1, 1), (1, 1), (1, 1)))
    E = np.zeros((0, 3, 6, 6))
    assert im2col(E, 3, 1, 1).shape == _reference(E, (3, 3), (1, 1), (1, 1), (1, 1)).shape == (0, 3, 3, 3, 6, 6)


def test_im2col_does_not_write_or_alias_its_input():
    X = np.random.default_rng(0).standard_normal((2, 2, 5, 5))
    keep = X.copy()
    cols = im2col(X, 3, 1, 1)
    cols[...] = 7.0  # the columns are a new, writeable array
    assert np.array_equal(X, keep)
    cols = im2col(X, 3, 1, 0)
    assert not np.shares_memory(cols, X)


@pytest.mark.parametrize("args", [((2, 2, 3, 3), 5, 1, 0), ((2, 2, 3, 3), 3, 1, 0, 3), ((4,), 1, 1, 0)])
def test_im2col_raises_as_before_when_a_window_does_not_fit(args):
    shape, *spec = args
    X = np.ones(shape)
    with pytest.raises(ValueError) as new:
        im2col(X, *spec)
    full = [(s, s) if isinstance(s, int) else s for s in spec] + [(1, 1)] * (4 - len(spec))
    with pytest.raises(ValueError) as old:
        _reference(X, *full)
    assert str(new.value) == str(old.value)


def test_im2col_every_small_spec_against_the_reference():
    X = np.random.default_rng(1).standard_normal((1, 2, 6, 7))
    for kh, kw, sh, sw, ph, pw, dh, dw in itertools.product((1, 2, 3), (1, 3), (1, 2), (1, 3), (0, 1), (0, 2),
                                                            (1, 2), (1,)):
        spec = ((kh, kw), (sh, sw), (ph, pw), (dh, dw))
        assert np.array_equal(im2col(X, *spec), _reference(X, *spec)), spec
