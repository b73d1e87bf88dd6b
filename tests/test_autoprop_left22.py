"""Session 21's autoprop leftovers (left22): ``np.split`` of a Tensor reads its indices as numpy does (a float
index raises numpy's TypeError; a float number of sections is numpy's ``int``), and ``np.full(shape, t,
dtype=...)``, whose result numpy makes itself, is refused naming np.full and the recorded spelling."""

import numpy as np
import pytest

import autoprop as ap

SLICE_ERROR = "slice indices must be integers or None or have an __index__ method"


@pytest.mark.parametrize("split", [np.split, np.array_split])
@pytest.mark.parametrize("indices", [ap.Tensor(np.array([1.0, 2.0])), np.array([1.0, 4.0]), [1.0, 2]],
                         ids=["float Tensor", "float array", "float list"])
def test_split_at_float_indices_raises_numpys_error(split, indices):
    """numpy uses the indices as slice bounds (x[st:end]), so a float one raises TypeError (numpy 2.4:
    _shape_base_impl.array_split); autoprop had truncated it with int() and returned pieces."""
    x = ap.Variable(np.arange(6.0))
    with pytest.raises(TypeError, match=r"^slice indices must be integers"):
        split(np.arange(6.0), np.asarray(indices) if isinstance(indices, ap.Tensor) else indices)
    with pytest.raises(TypeError, match=SLICE_ERROR.replace("(", r"\(")), ap.GradientTape():
        split(x, indices)


@pytest.mark.parametrize(("split", "sections", "shapes"), [
    (np.split, 2.0, [(3,), (3,)]), (np.array_split, 2.5, [(3,), (3,)]), (np.split, np.array(3.0), [(2,)] * 3),
    (np.array_split, 4, [(2,), (2,), (1,), (1,)])])
def test_split_into_a_float_number_of_sections_as_numpy(split, sections, shapes):
    """What has no len() is a number of sections, int() of it (numpy's scalar branch): np.split(x, 2.0) gives
    numpy's two pieces (autoprop had raised "'float' object is not iterable"); the gradient puts them back."""
    assert [p.shape for p in split(np.arange(6.0), sections)] == shapes
    x = ap.Variable(np.arange(6.0))
    with ap.GradientTape() as tape:
        pieces = split(x, sections)
        loss = sum(np.sum(p * (k + 1)) for k, p in enumerate(pieces))
    assert [p.shape for p in pieces] == shapes
    want = np.concatenate([np.full(s, k + 1.0) for k, s in enumerate(shapes)])
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), want)


def test_split_with_a_non_equal_float_section_count_raises_numpys_error():
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        np.split(np.arange(6.0), 2.5)
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        np.split(ap.Variable(np.arange(6.0)), 2.5)


def test_split_at_integer_tensor_indices_is_recorded():
    x = ap.Variable(np.arange(6.0))
    with ap.GradientTape() as tape:
        a, b, c = np.split(x, ap.Tensor(np.array([1, 4])))
        loss = np.sum(a) + 2 * np.sum(b) + 3 * np.sum(c)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [1, 2, 2, 2, 3, 3])


@pytest.mark.parametrize("tape", [True, False])
def test_full_with_a_dtype_names_np_full_and_the_recorded_spelling(tape):
    """np.full(shape, t, dtype=...) runs ``a = empty(shape, dtype); copyto(a, t); return a`` (numpy/_core/numeric.py):
    copyto dispatches to autoprop, but np.full returns its own ``a``, so no Tensor can come back. The refusal named
    copyto alone ("dst = np.where(where, src, dst)"); it now names np.full and what to write."""
    x = ap.Variable(np.array([2.0, 3.0]))
    with pytest.raises(TypeError, match=r"numpy\.copyto would copy a Tensor into a numpy array.*inside "
                                        r"np\.full\(shape, t\).*never a Tensor: write t \+ np\.zeros\(shape\)"):
        if tape:
            with ap.GradientTape():
                np.full((2, 2), x[0], dtype=np.float32)
        else:
            np.full((2, 2), x[0], dtype=np.float32)
    with pytest.raises(TypeError, match=r"numpy\.copyto writes into its first argument.*np\.where\(where"):
        np.copyto(np.zeros(2), x)  # copyto itself keeps its own message
