"""review36 F1: a Tensor's value has the layout numpy's result has, so ``as_strided`` reads numpy's elements.

numpy's ``fliplr``, ``flipud``, ``rot90``, ``diagonal``, ``sliding_window_view``, ``as_strided`` and ``atleast_*d``
return views with strides of their own; autoprop recorded a gather whose value was a C-order copy, so
``as_strided(view, shape, strides)`` with strides a numpy program takes from numpy's view read other elements,
silently (review36: after ``sliding_window_view`` numpy [[0, 1, 2], [4, 5, 6], [8, 9, 10]], autoprop [[0, 1, 1], ...]).
Now each gives numpy's own view (read-only) as its value (``autoprop.core.views.numpy_layout``); a read numpy makes
between or outside the view's elements, or of overlapping windows, is refused. The expected values and gradients are
numpy's own: ``as_strided`` applied by numpy to the same view of a float array of positions names the element each
entry reads, and the VJP of ``sum(g * view)`` adds ``g`` at those positions (``np.add.at``).
"""
import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp

X = np.arange(24.0).reshape(2, 3, 4)
ST = np.lib.stride_tricks

OPS = {
    "fliplr": lambda n, a: n.fliplr(a), "flipud": lambda n, a: n.flipud(a),
    "rot90": lambda n, a: n.rot90(a), "rot90_2": lambda n, a: n.rot90(a, 2), "rot90_3": lambda n, a: n.rot90(a, 3),
    "diagonal": lambda n, a: n.diagonal(a), "diagonal_method": lambda n, a: a.diagonal(1, 1, 2),
    "diagonal_2d": lambda n, a: n.diagonal(a[0]), "diagonal_of_T": lambda n, a: n.diagonal(a.T),
    "sliding_window_view": lambda n, a: n.lib.stride_tricks.sliding_window_view(a, (2, 2), axis=(1, 2)),
    "as_strided": lambda n, a: n.lib.stride_tricks.as_strided(a, (2, 2), (8, 8)),
    "atleast_3d": lambda n, a: n.atleast_3d(a[0, 0]), "atleast_2d": lambda n, a: n.atleast_2d(a[0, 0]),
    "rot90_of_T": lambda n, a: n.rot90(a.T, 1, (0, 2)),
    # (these were numpy's layout before; pinned so the rule holds for every view)
    "T": lambda n, a: a.T, "slice": lambda n, a: a[:, 1:, ::2], "negslice": lambda n, a: a[:, ::-1],
    "flip": lambda n, a: n.flip(a), "swapaxes": lambda n, a: n.swapaxes(a, 0, 2),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_a_views_value_has_numpys_strides_and_values(op):
    want = OPS[op](np, X)
    got = OPS[op](anp, ap.constant(X))
    assert got.strides == want.strides, (got.strides, want.strides)  # (before: fliplr (96, 32, 8), numpy's (96, -32, 8))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_review36_sliding_window_view_then_as_strided_by_xs_strides_is_refused_not_a_copys_values():
    """The reviewer's case: numpy reads x's memory under the overlapping windows ([[0, 1, 2], [4, 5, 6], [8, 9, 10]]);
    autoprop gave [[0, 1, 1], [2, 3, 4], [5, 6, 6]] (its copy's layout). The windows share x's elements, so no read
    names one element of the view: refused, naming why."""
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    w = anp.lib.stride_tricks.sliding_window_view(ap.constant(x), (2, 2), axis=(2, 3))
    assert w.strides == ST.sliding_window_view(x, (2, 2), axis=(2, 3)).strides
    with pytest.raises(ValueError, match="share memory.*overlapping windows"):
        anp.lib.stride_tricks.as_strided(w, (3, 3), (x.strides[2], x.strides[3]))


# (op, shape, strides as numpy's view's own) -- windows over a view with negative or diagonal strides
READS = {
    "fliplr 2x2 windows": (lambda n, a: n.fliplr(a), lambda v: ((2, 3, 2, 2), v.strides * 2)),
    "flipud rows": (lambda n, a: n.flipud(a), lambda v: ((2, 4), (v.strides[0], v.strides[1]))),
    "rot90 ravel by its strides": (lambda n, a: n.rot90(a), lambda v: ((4, 3), v.strides)),
    "diagonal pairs": (lambda n, a: n.diagonal(a), lambda v: ((2, 2), (v.strides[0], v.strides[0]))),
    "as_strided of as_strided": (lambda n, a: n.lib.stride_tricks.as_strided(a, (3, 2), (32, 8)),
                                 lambda v: ((2, 2, 2), (v.strides[0], v.strides[0], v.strides[1]))),
}


@pytest.mark.parametrize("case", sorted(READS))
def test_as_strided_of_a_view_reads_numpys_elements_and_its_vjp_adds_g_there(case):
    make, how = READS[case]
    x = np.arange(12.0).reshape(3, 4) * 1.5 + 1
    shape, strides = how(make(np, x))
    want = ST.as_strided(make(np, x), shape, strides)
    pos = ST.as_strided(make(np, np.arange(12.0).reshape(3, 4)), shape, strides).astype(np.intp)  # numpy's reads
    np.testing.assert_array_equal(want, x.ravel()[pos])  # (the oracle reads inside x)
    g = np.random.default_rng(0).standard_normal(shape)
    xt = ap.Variable(x)
    with ap.GradientTape() as tape:
        y = anp.lib.stride_tricks.as_strided(make(anp, xt), shape, strides)
        loss = anp.sum(y * g)
    np.testing.assert_array_equal(np.asarray(y), want)
    expect = np.zeros(12)
    np.add.at(expect, pos.ravel(), g.ravel())
    np.testing.assert_allclose(np.asarray(tape.gradient(loss, xt)), expect.reshape(3, 4), rtol=1e-15, atol=1e-15)


def test_as_strided_reading_outside_a_flipped_view_is_refused():
    """numpy's rot90(x, 2) has strides (-32, -8): ravelling it by (8,) reads memory after x's last element
    (review36's case; numpy gives garbage there)."""
    x = np.arange(12.0).reshape(3, 4)
    r = anp.rot90(ap.constant(x), 2)
    with pytest.raises(ValueError, match="outside x's elements"):
        anp.lib.stride_tricks.as_strided(r, (12,), (r.itemsize,))


def test_as_strided_of_a_diagonal_against_torch_as_strided():
    """torch's diagonal is a view with strides (n + 1,) as numpy's, and torch.as_strided reads its storage: computed
    in /work/main/.venv-peers/bin/python, torch 2.13.0+cpu: X = arange(12).reshape(3, 4) * 1.5 + 1 (float64),
    y = torch.as_strided(X.diagonal(), (2, 2), (5, 5)); (y * [[1, 2], [3, 4]]).sum().backward():
    y [[1.0, 8.5], [8.5, 16.0]], X.grad [[1, 0, 0, 0], [0, 5, 0, 0], [0, 0, 4, 0]]. (Before: autoprop's diagonal value
    was a copy of strides (8,), and 40-byte steps read past it: refused.)"""
    X = ap.Variable(np.arange(12.0).reshape(3, 4) * 1.5 + 1)
    with ap.GradientTape() as tape:
        d = anp.diagonal(X)
        s = X.strides[0] + X.strides[1]  # (a diagonal's step, as a numpy program takes it from X: 40 bytes)
        y = anp.lib.stride_tricks.as_strided(d, (2, 2), (s, s))
        loss = anp.sum(y * np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(np.asarray(y), [[1.0, 8.5], [8.5, 16.0]])
    np.testing.assert_array_equal(np.asarray(tape.gradient(loss, X)), [[1, 0, 0, 0], [0, 5, 0, 0], [0, 0, 4, 0]])


VIEWS = ["fliplr", "flipud", "rot90", "rot90_2", "rot90_3", "diagonal", "diagonal_method", "diagonal_2d",
         "diagonal_of_T", "sliding_window_view", "as_strided", "atleast_3d", "atleast_2d", "rot90_of_T"]


@pytest.mark.parametrize("op", VIEWS)
def test_a_views_value_is_read_only_so_the_input_cannot_change_through_it(op):
    """The value numpy_layout gives is numpy's view of the input's value: read-only (as numpy's
    ``sliding_window_view``), so that a write into it cannot change the input a tape saved (review37's
    nl_writeable survived: the flag was never asserted)."""
    x = ap.Variable(X.copy())
    got = OPS[op](anp, x)
    assert np.shares_memory(got._value, x._value)  # a view, not a copy
    assert got._value.flags.writeable is False
    with pytest.raises(ValueError, match="read-only"):
        got._value[...] = -1.0
    np.testing.assert_array_equal(x.numpy(), X)
