"""Session 21: np.linalg.eig and eigvals of a complex matrix and of a real matrix with a complex
spectrum (PyTorch's linalg_eig_backward and linalg_eig_jvp, in autoprop's convention: one
conjugate at the public boundary), a loss that depends on the eigenvectors' phases refused as
PyTorch refuses it. Gradients against torch (stored: tests/vocab21_refs.py, written by
tests/vocab21_cases.py), central differences, forward mode and a second derivative."""

import numpy as np
import pytest
from vocab21_cases import C33, CASES, R33
from vocab21_refs import REFS

import autoprop as ap


def _central(f, a, h=1e-6):
    """dL/dx + i dL/dy by central differences (PyTorch's convention, autoprop's public one; the
    real part alone for a real a)."""
    fd = np.zeros_like(a)
    for j in np.ndindex(a.shape):
        for unit in ((1.0, 1j) if np.iscomplexobj(a) else (1.0,)):
            e = np.zeros_like(a)
            e[j] = h * unit
            fd[j] += unit * (f(np, a + e) - f(np, a - e)) / (2 * h)
    return fd


def _direction(a):
    d = np.cos(np.arange(a.size)).reshape(a.shape)
    return d + 1j * np.sin(np.arange(a.size) * 0.7).reshape(a.shape) if np.iscomplexobj(a) else d


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_eig_matches_torch_central_differences_and_forward_mode(name):
    f, a = CASES[name]
    t = ap.Variable(a)
    with ap.GradientTape() as tape:
        loss = f(np, t)
    assert float(loss.numpy()) == float(f(np, a))  # numpy's eig itself
    g = tape.gradient(loss, t).numpy()
    assert g.dtype == a.dtype  # a real matrix's gradient is real (its complex spectrum's real part)
    np.testing.assert_allclose(g, np.array(REFS[name]), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(g, _central(f, a), rtol=1e-6, atol=1e-7)
    d = _direction(a)
    with ap.ForwardAccumulator(t, d) as acc:
        loss = f(np, t)
    jvp = float(np.real(acc.jvp(loss).numpy()))
    h = 1e-6
    np.testing.assert_allclose(jvp, (f(np, a + h * d) - f(np, a - h * d)) / (2 * h), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jvp, np.real(np.vdot(g, d)), rtol=1e-9)


@pytest.mark.parametrize("a", [C33, R33], ids=["complex", "real"])
def test_complex_eig_second_derivative_matches_central_differences(a):
    f = CASES["eig_complex33"][0]
    u = _direction(a)[::-1].copy()

    def directional(x):  # Re <grad L(x), u>
        tt = ap.Variable(x)
        with ap.GradientTape() as tp:
            loss = f(np, tt)
        return float(np.real(np.vdot(tp.gradient(loss, tt).numpy(), u)))
    t = ap.Variable(a)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            loss = f(np, t)
        g = inner.gradient(loss, t)
        s = np.real(np.sum(np.conj(g) * u))
    hv = outer.gradient(s, t).numpy()
    np.testing.assert_allclose(hv, _central(lambda _np, x: directional(x), a, h=1e-5), rtol=1e-7, atol=1e-7)


def test_values_dtypes_and_a_phase_dependent_loss_is_refused():
    for a in (C33, R33, C33.astype(np.complex64)):
        for got, want in zip(np.linalg.eig(ap.Variable(a)), np.linalg.eig(a)):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(), want)
    w, v = np.linalg.eig(ap.Variable(np.array([[2.0, 1.0], [0.0, 3.0]])))  # a real spectrum: real, as numpy
    assert w.dtype == v.dtype == np.float64
    t = ap.Variable(C33)
    with ap.GradientTape() as tape:
        loss = np.real(np.linalg.eig(t)[1][0]).sum()  # the first row's real parts: they turn with the phases
    with pytest.raises(ValueError, match="autoprop.eig: the eigenvectors of a complex matrix are each "
                                         "defined up to a phase"):
        tape.gradient(loss, t)
    with ap.GradientTape() as tape:  # the eigenvalues alone: no eigenvector term
        loss = np.real(np.sum(np.linalg.eigvals(t) ** 2))
    np.testing.assert_allclose(tape.gradient(loss, t).numpy(), 2 * np.conj(C33).T, rtol=1e-12)  # d tr(A^2)
