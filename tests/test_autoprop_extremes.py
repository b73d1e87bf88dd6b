"""The looks at a whole array that autoprop's VJPs and recurrent records take (session 15):
``manualprop._extremes`` (``smallest``/``largest`` by argmin/argmax, ``squares_finite`` by
one BLAS dot), a kernel module autoprop's core imports as it imports ``_im2col``.

What moved to the cheaper look must still fire: the 0·inf rule of every elementwise VJP
(``_common.times``), tanh's saturation and NaN test, ``rnn_cell``'s and ``lstm_gates``'s
choice of the pre-activations they keep.
"""

from __future__ import annotations

import ast
import pathlib

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import autoprop as ap
from autoprop.core import registry as R
from autoprop.core.prims._common import _all_finite, times
from autoprop.core.tape import PartlySaved
from manualprop import _extremes
from manualprop._extremes import DOT_CHUNK, largest, smallest, squares_finite

CORE = pathlib.Path(ap.__file__).parent / "core"


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def test_autoprop_core_imports_only_kernels_from_manualprop():
    # autoprop.core knows nothing of layers: from manualprop it takes the two kernel modules,
    # and those import numpy (and the standard library) only
    seen = set()
    for path in CORE.rglob("*.py"):
        for name in _imports(path):
            if name.split(".")[0] == "manualprop":
                seen.add(name)
    assert seen <= {"manualprop._im2col", "manualprop._extremes"}, seen
    assert "manualprop._extremes" in seen
    for name in ("_extremes", "_im2col"):
        path = pathlib.Path(_extremes.__file__).with_name(name + ".py")
        assert {m.split(".")[0] for m in _imports(path)} <= {"numpy", "cmath", "__future__"}


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64, np.float16])
@pytest.mark.parametrize("size", [1, 37, DOT_CHUNK, DOT_CHUNK + 1])
def test_squares_finite_is_false_for_a_nan_or_an_inf_anywhere_and_true_for_finite_values(dtype, size):
    rng = np.random.default_rng(size)
    v = rng.standard_normal(size).astype(dtype)
    assert squares_finite(v) is True and squares_finite(v.reshape(1, -1)[:, ::-1]) is True
    for bad in (np.nan, np.inf, -np.inf):
        for at in {0, size // 2, size - 1}:
            w = v.copy()
            w[at] = bad
            assert squares_finite(w) is False, (bad, at)
    if np.dtype(dtype).kind == "c":
        w = v.copy()
        w[-1] = complex(0.0, np.inf)
        assert squares_finite(w) is False
    assert squares_finite(np.zeros((0, 3), dtype)) is True


def test_smallest_and_largest_find_a_nan_anywhere_and_autoprop_uses_these_kernels():
    a = np.array([[0.5, -2.0], [3.0, 1.0]])
    assert (smallest(a), largest(a)) == (-2.0, 3.0)
    for at in range(4):
        b = a.copy()
        b.flat[at] = np.nan
        assert np.isnan(smallest(b)) and np.isnan(largest(b))
    from autoprop.core.prims import _common, elementwise, recurrent
    from manualprop import _validation
    assert _validation.smallest is recurrent.smallest is elementwise.smallest is smallest
    assert _common.squares_finite is squares_finite


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_zero_times_inf_rule_still_fires_and_huge_finite_products_stay_exact(dtype):
    # times(g, f): g * f, with 0 where g == 0 once the product has a NaN or an inf; the look
    # is now a dot of the product with itself, which also overflows for finite entries beyond
    # 1e154 (float64) or 1e19 (float32): those take the exact path, the same values
    g = np.array([0.0, 1.0, -2.0, 0.0], dtype)
    f = np.array([np.inf, 3.0, 0.5, np.nan], dtype)
    with np.errstate(invalid="ignore"):  # (0 * inf: numpy's warning; the rule makes it 0)
        np.testing.assert_array_equal(times(g, f), np.array([0.0, 3.0, -1.0, 0.0], dtype))
    big = np.array([1e200 if dtype == np.float64 else 1e30, 2.0, -3.0, 1.0], dtype)
    r = times(np.array([1.0, 1.0, 0.0, 2.0], dtype), big)
    np.testing.assert_array_equal(r, big * np.array([1.0, 1.0, 0.0, 2.0], dtype))
    assert _all_finite(big) is False and _all_finite(big / big.max()) is True
    x = ap.Variable(np.array([2.0, -1.0, 0.5], dtype))
    with ap.GradientTape() as tape:
        y = x * np.array([np.inf, 2.0, 1.0], dtype)
    with np.errstate(invalid="ignore"):
        d = tape.gradient(y, x, output_gradients=np.array([0.0, 1.0, 1.0], dtype)).numpy()
    np.testing.assert_array_equal(d, np.array([0.0, 2.0, 1.0], dtype))


def test_tanh_vjp_still_sees_a_nan_and_the_saturated_entries_against_autograd():
    x = np.array([[np.nan, 0.5, 30.0, -1.7]])
    g = np.array([[0.0, 1.0, 1.0, 2.0]])
    v = ap.Variable(x)
    with ap.GradientTape() as tape:
        y = np.tanh(v)
    d = tape.gradient(y, v, output_gradients=g).numpy()
    want = autograd.grad(lambda z: anp.sum(anp.tanh(z[:, 1:]) * g[:, 1:]))(x)
    assert d[0, 0] == 0.0  # the NaN's derivative meets g = 0: 0 (the 0·inf rule)
    np.testing.assert_allclose(d[:, 1:], want[:, 1:], rtol=4e-15)
    assert d[0, 2] > 0  # 1 / cosh(30)^2, not 1 - 1


def _cell(A, g=None):
    h, W = np.zeros((1, A.shape[-1])), np.zeros((A.shape[-1],) * 2)
    ts = [ap.constant(h), ap.constant(W), ap.constant(A)]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        y = R.rnn_cell(*ts, key=(slice(None), 0))
    saved = tape._nodes[-1].kwargs["saved"]
    return saved, tape.gradient(y, ts, output_gradients=g)[2].numpy()[:, 0]


def test_rnn_cell_keeps_the_entries_beyond_1_6_at_its_edges_and_all_of_a_with_a_nan():
    # the forward's look (the largest |a|, by argmax: session 20) decides: every |a| <= 1.6
    # keeps nothing; the next float beyond +-1.6 is kept (on either side); a NaN keeps all of
    # a, before or after an entry beyond 1.6 (argmax finds the first NaN either way)
    up, down = np.nextafter(1.6, 2.0), np.nextafter(-1.6, -2.0)
    saved, _ = _cell(np.array([[[1.6, -1.6, 0.0]]]))
    assert type(saved) is PartlySaved and saved.mask is None
    for edge, at in ((up, 0), (down, 1)):
        A = np.array([[[0.3, -0.2, 0.1]]])
        A[0, 0, at] = edge
        saved, dA = _cell(A, np.ones((1, 3)))
        assert type(saved) is PartlySaved and saved.mask.tolist() == [[i == at for i in range(3)]]
        np.testing.assert_allclose(dA, 1.0 / np.cosh(A[:, 0]) ** 2, rtol=4e-15)
    for A in (np.array([[[0.3, np.nan, 25.0]]]), np.array([[[0.3, -25.0, np.nan]]])):
        g = np.where(np.isnan(A[:, 0]), 0.0, 1.0)
        saved, dA = _cell(A, g)
        assert type(saved) is np.ndarray  # all of a: the general path, as tanh's VJP
        want = np.where(np.isnan(A[:, 0]), 0.0, 1.0 / np.cosh(np.nan_to_num(A[:, 0])) ** 2)
        np.testing.assert_allclose(dA, want, rtol=4e-15)


def test_lstm_gates_keep_nothing_at_the_edges_and_see_a_nan():
    # lstm_gates's record keeps none of a when every |a| <= 1.6 (largest and smallest), some
    # entries beyond it, and its VJP's saturation look (smallest of 1 - s, 1 - g^2) sees a NaN
    a = np.array([[1.6, -1.6, 1.6, -1.6, 0.0, 0.0, 0.0, 0.0]])
    ts = ap.constant(a)
    with ap.GradientTape() as tape:
        tape.watch(ts)
        R.lstm_gates(ts)
    assert tape._nodes[-1].vals[0].mask is None
    b = a.copy()
    b[0, 4] = np.nextafter(1.6, 2.0)  # block g: kept
    tb = ap.constant(b)
    with ap.GradientTape() as tape:
        tape.watch(tb)
        R.lstm_gates(tb)
    assert tape._nodes[-1].vals[0].mask.tolist() == [[i == 4 for i in range(8)]]
    c = a.copy()
    c[0, 0] = np.nan
    tc = ap.constant(c)
    with ap.GradientTape() as tape:
        tape.watch(tc)
        z = R.lstm_gates(tc)
    d = tape.gradient(z, tc, output_gradients=np.array([[0.0] + [1.0] * 7])).numpy()
    assert d[0, 0] == 0.0 and np.all(np.isfinite(d))
