"""numpy and scipy names recorded in session 20: complex np.linalg.eigh, svd and qr (PyTorch's
formulas and convention; a loss that depends on the vectors' phases refused, as PyTorch does); the set functions (np.union1d, intersect1d with
return_indices, setdiff1d, setxor1d; np.isin stays values only), np.histogram2d/histogramdd and
np.histogram's weighted counts (differentiable in the weights), scipy.special.betainc (in x; a and
b refused by name), the elementwise predicates np.isinf/isneginf/isposinf/signbit as bool Tensors
(as np.isnan/isfinite), numpy 2's cumulative_sum/cumulative_prod through one helper.

Values against numpy, gradients against jax and torch (stored: tests/vocab20_refs.py, written by
tests/vocab20_cases.py) and central differences; the JVPs and second derivatives of the same
functions run in tests/test_autoprop_numpy_more.py (tests/more_samples.py's entries)."""

import numpy as np
import pytest
import scipy.special
from oracles import central_each
from vocab20_cases import COMPLEX_CASES, JAX_CASES, SET_CASES, set_loss
from vocab20_refs import REFS

import autoprop as ap


def _grad(fn, xs):
    ts = [ap.Variable(x) for x in xs]
    with ap.GradientTape() as tape:
        y = fn(np, *ts)
    return float(y.numpy()), [g.numpy() for g in tape.gradient(y, ts, unconnected_gradients="zero")]


def _central(fn, xs, h=1e-6):
    return central_each(lambda *a: fn(np, *a), xs, h=h)  # fn(np, *arrays)


@pytest.mark.parametrize("name", sorted(JAX_CASES))
def test_histograms_and_betainc_match_jax_and_central_differences(name):
    fn, xs = JAX_CASES[name]
    value, g = _grad(fn, xs)
    assert value == float(fn(np, *xs))  # numpy's own values (weighted counts: numpy's summation)
    for a, ref, fd in zip(g, REFS[name], _central(fn, xs)):
        np.testing.assert_allclose(a, ref, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(a, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(SET_CASES))
def test_set_functions_match_torch_and_central_differences(name):
    f, kw, xs = SET_CASES[name]

    def fn(np_, a, b):
        return set_loss(np_, f, kw, a, b)
    value, g = _grad(fn, xs)
    assert value == float(fn(np, *xs))
    cat = np.concatenate(xs)
    for a, x, ref, fd in zip(g, xs, REFS[name], _central(fn, xs)):
        np.testing.assert_array_equal(a, ref)  # at a value both hold: the convention (torch's reference)
        alone = np.array([np.sum(cat == v) == 1 for v in x])  # elsewhere the set is locally a gather
        np.testing.assert_allclose(a[alone], fd[alone], rtol=1e-6, atol=1e-8)


def test_set_functions_values_indices_and_options_are_numpy_s():
    a, b = ap.Variable([3.0, 1.0, 3.0, 2.0, np.nan]), ap.Variable([2.0, 5.0, 3.0, np.nan])
    av, bv = a.numpy(), b.numpy()
    for f in (np.union1d, np.intersect1d, np.setdiff1d, np.setxor1d):
        got, want = f(a, b), f(av, bv)
        assert isinstance(got, ap.Tensor) and np.array_equal(got.numpy(), want, equal_nan=True)
    with ap.GradientTape() as tape:
        vals, i1, i2 = np.intersect1d(a, b, return_indices=True)
        loss = np.sum(vals * np.array([10.0, 100.0]))
    for got, want in zip((i1, i2), np.intersect1d(av, bv, return_indices=True)[1:]):
        assert type(got) is np.ndarray and np.array_equal(got, want)
    np.testing.assert_array_equal(tape.gradient(loss, a).numpy(), [100.0, 0.0, 0.0, 10.0, 0.0])  # at ind1
    with ap.GradientTape() as tape:
        d = np.setdiff1d(a, [2.0], assume_unique=True)  # ar1's order, no sorting (as numpy)
        loss = np.sum(d[:3] * np.array([1.0, 2.0, 3.0]))
    assert np.array_equal(d.numpy(), np.setdiff1d(av, [2.0], assume_unique=True), equal_nan=True)
    np.testing.assert_array_equal(tape.gradient(loss, a).numpy(), [1.0, 2.0, 3.0, 0.0, 0.0])
    x = np.setxor1d(ap.Variable([1.0, 4.0]), ap.Variable([4.0, 2.0]), assume_unique=True)
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
    assert type(np.isin(a, b)) is np.ndarray and np.array_equal(np.isin(a, b), np.isin(av, bv))


def test_histograms_values_types_and_unweighted_counts_are_constants():
    x, y, w = (ap.Variable(v) for v in (JAX_CASES["histogram2d_weighted_density"][1]))
    for kw in ({}, {"bins": 3, "density": True}, {"bins": np.array([-3.0, 0.0, 0.5, 3.0])},
               {"bins": [2, np.array([-3.0, 0.0, 3.0])], "range": None}):
        h, xe, ye = np.histogram2d(x, y, **kw)
        ref = np.histogram2d(x.numpy(), y.numpy(), **kw)
        for got, want in zip((h, xe, ye), ref):
            assert isinstance(got, ap.Tensor) and got.dtype == want.dtype and np.array_equal(got.numpy(), want)
    with ap.GradientTape() as tape:
        h = np.histogram2d(x, y, bins=2, range=[(-3, 3), (-3, 3)])[0]
        assert h.dtype == np.float64
        loss = np.sum(h * h)
    assert tape.gradient(loss, [x, y], unconnected_gradients="zero")[0].numpy().tolist() == [0.0] * 7
    counts, edges = np.histogram(x, bins=3)
    assert type(counts) is np.ndarray and counts.dtype.kind == "i"  # integers, as numpy's
    hw, _ = np.histogram(x, bins=3, weights=ap.Variable(w.numpy().astype(np.float32)))
    assert hw.dtype == np.float32 and np.array_equal(hw.numpy(), np.histogram(x.numpy(), 3, weights=w.numpy().astype(np.float32))[0])
    hd, ed = np.histogramdd(x, bins=4, weights=w)  # a 1-D sample: one dimension, as numpy
    rd = np.histogramdd(x.numpy(), bins=4, weights=w.numpy())
    assert np.array_equal(hd.numpy(), rd[0]) and np.array_equal(ed[0].numpy(), rd[1][0])
    s = ap.Variable(JAX_CASES["histogramdd_weighted"][1][0])
    grads = []
    for bins in ([2, 3], np.array([2, 3])):  # bin counts per axis, a list or an array (numpy's len() rule)
        with ap.GradientTape() as tape:
            _, edges = np.histogramdd(s, bins=bins)
            loss = np.sum(edges[0] ** 2) + np.sum(edges[1] ** 3)
        grads.append(tape.gradient(loss, s).numpy())
    assert np.count_nonzero(grads[0]) == 4  # min and max of each column
    np.testing.assert_array_equal(grads[0], grads[1])


def test_betainc_refuses_a_gradient_in_a_or_b_by_name_and_its_jvp_is_the_closed_form():
    a, b, x = ap.Variable(2.0), ap.Variable(3.0), ap.Variable([0.2, 0.7])
    for bad, name in ((a, "a"), (b, "b")):
        args = (bad, 3.0, x) if name == "a" else (2.0, bad, x)
        with ap.GradientTape(), pytest.raises(TypeError, match=f"shape parameter {name} .* {name} carries gradient"):
            scipy.special.betainc(*args)
    with ap.ForwardAccumulator(x, np.array([1.0, -2.0])) as acc:
        y = scipy.special.betainc(2.0, 3.0, x)
    xv = x.numpy()
    pdf = xv * (1 - xv) ** 2 / scipy.special.beta(2.0, 3.0)
    np.testing.assert_allclose(acc.jvp(y).numpy(), pdf * [1.0, -2.0], rtol=1e-12)
    np.testing.assert_array_equal(y.numpy(), scipy.special.betainc(2.0, 3.0, xv))
    assert isinstance(scipy.special.betainc(a, b, 0.5), ap.Tensor)  # not watched: a value, no refusal


def test_predicates_are_bool_tensors_as_isnan_and_isfinite():
    t = ap.Variable([1.0, np.inf, -np.inf, -0.0, np.nan])
    for f in (np.isnan, np.isfinite, np.isinf, np.isneginf, np.isposinf, np.signbit):
        got = f(t)
        assert isinstance(got, ap.Tensor) and got.dtype == bool and np.array_equal(got.numpy(), f(t.numpy()))
    with ap.GradientTape() as tape:
        y = np.sum(np.where(np.isinf(t) | np.isnan(t), 0.0, t * 3.0))
    np.testing.assert_array_equal(tape.gradient(y, t).numpy(), [3.0, 0.0, 0.0, 3.0, 0.0])


def test_cumulative_sum_and_prod_share_their_argument_handling():
    x = ap.Variable(np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]))
    for f, first in ((np.cumulative_sum, 0.0), (np.cumulative_prod, 1.0)):
        got = f(x, axis=1, include_initial=True)
        np.testing.assert_array_equal(got.numpy(), f(x.numpy(), axis=1, include_initial=True))
        assert np.all(got.numpy()[:, 0] == first)
        with pytest.raises(ValueError, match=rf"numpy.{f.__name__}: axis is required for a 2-D array"):
            f(x)
        np.testing.assert_array_equal(f(x[0]).numpy(), f(x.numpy()[0]))


def _complex_central(f, a, extra, h=1e-6):
    """dL/dx + i dL/dy by central differences (PyTorch's convention, autoprop's public one)."""
    fd = np.zeros_like(a)
    for j in np.ndindex(a.shape):
        for unit in (1.0, 1j):
            e = np.zeros_like(a)
            e[j] = h * unit
            fd[j] += unit * (f(np, a + e, *extra) - f(np, a - e, *extra)) / (2 * h)
    return fd


@pytest.mark.parametrize("name", sorted(COMPLEX_CASES))
def test_complex_eigh_svd_qr_match_torch_central_differences_and_forward_mode(name):
    f, a, extra = COMPLEX_CASES[name]
    t = ap.Variable(a)
    with ap.GradientTape() as tape:
        loss = f(np, t, *extra)
    # numpy's decomposition (UPLO='U' and a wide QR: through the transpose and Q^H Y, to rounding)
    np.testing.assert_allclose(float(loss.numpy()), float(f(np, a, *extra)), rtol=1e-13)
    g = tape.gradient(loss, t).numpy()
    np.testing.assert_allclose(g, np.array(REFS[name]), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(g, _complex_central(f, a, extra), rtol=1e-6, atol=1e-7)
    direction = np.cos(np.arange(a.size)).reshape(a.shape) + 1j * np.sin(np.arange(a.size) * 0.7).reshape(a.shape)
    with ap.ForwardAccumulator(t, direction) as acc:
        loss = f(np, t, *extra)
    h = 1e-6
    fd = (f(np, a + h * direction, *extra) - f(np, a - h * direction, *extra)) / (2 * h)
    np.testing.assert_allclose(float(np.real(acc.jvp(loss).numpy())), fd, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(float(np.real(acc.jvp(loss).numpy())), np.real(np.vdot(g, direction)), rtol=1e-9)


def test_complex_decompositions_values_and_a_phase_dependent_loss_is_refused():
    f, a, _ = COMPLEX_CASES["svd_wide"]
    t = ap.Variable(a)
    for got, want in zip(np.linalg.svd(t), np.linalg.svd(a)):  # full_matrices=True: numpy's phases
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    for uplo in ("L", "U"):
        h = COMPLEX_CASES["eigh"][1]
        for got, want in zip(np.linalg.eigh(ap.Variable(h), UPLO=uplo), np.linalg.eigh(h, UPLO=uplo)):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    for got, want in zip(np.linalg.qr(t), np.linalg.qr(a)):  # a wide A: R = [R_X | Q^H Y]
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    for call, what in ((lambda x: np.real(np.linalg.svd(x)[0]).sum(), "svd: the singular vectors"),
                       (lambda x: np.imag(np.linalg.eigh(x)[1][0]).sum(), "eigh: the eigenvectors")):
        with ap.GradientTape() as tape:
            loss = call(t if "svd" in what else ap.Variable(COMPLEX_CASES["eigh"][1]))
        with pytest.raises(ValueError, match=f"autoprop.{what} of a complex matrix are each defined up to a phase"):
            tape.gradient(loss, tape.watched_variables())
    with ap.GradientTape() as tape:  # the singular values alone: defined (svdvals)
        s = np.linalg.svd(t, compute_uv=False)
        loss = np.sum(s ** 2)
    np.testing.assert_allclose(tape.gradient(loss, t).numpy(), 2 * a, rtol=1e-12)  # d ||A||_F^2 = 2 A
