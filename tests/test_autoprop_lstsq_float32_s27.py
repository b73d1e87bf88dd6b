"""np.linalg.lstsq of a float32 system: numpy solves it in float64 (numpy.linalg._commonType) with float64's eps
for rcond=None and rounds x, residuals and s to float32; autoprop cut at float32's eps, so a singular value of
1e-9 was zero for autoprop (rank 1) and not for numpy (rank 2): another x (fixa27's report)."""

import numpy as np
import pytest

import autoprop as ap


def _system():
    a = np.array([[1.0, 0.0], [0.0, 1e-9], [0.0, 0.0]], dtype=np.float32)
    b = np.array([0.5, 2e-9, 1.0], dtype=np.float32)
    return a, b


def test_float32_rank_and_solution_are_numpys():
    a, b = _system()
    xn, rn, kn, sn = np.linalg.lstsq(a, b, rcond=None)
    x, r, k, s = np.linalg.lstsq(ap.constant(a), ap.constant(b), rcond=None)
    assert kn == 2 and k == 2
    assert x.dtype == np.float32 and r.dtype == np.float32 and s.dtype == np.float32
    np.testing.assert_array_equal(x.numpy(), xn)  # [0.5, 2.0]: the 1e-9 singular value kept
    np.testing.assert_array_equal(r.numpy(), rn)
    np.testing.assert_array_equal(s.numpy(), sn)


def test_float32_gradient_is_the_float64_systems_rounded():
    """d sum(x) / d b = pinv(a)^T 1, computed in float64 and rounded: [1, 1e9, 0] (1 / 1e-9 in float32)."""
    a, b = _system()
    av, bv = ap.Variable(a), ap.Variable(b)
    with ap.GradientTape() as tape:
        x = np.linalg.lstsq(av, bv, rcond=None)[0]
        loss = ap.reduce_sum(x)
    ga, gb = tape.gradient(loss, [av, bv])
    assert gb.dtype == np.float32 and ga.dtype == np.float32
    np.testing.assert_allclose(gb.numpy(), np.float32([1.0, 1.0 / np.float32(1e-9), 0.0]), rtol=1e-6)
    # full column rank: dx = (A^T A)^-1 dA^T r - A^+ dA x (Golub & Pereyra), so d sum(x) / d a =
    # r ((A^T A)^-1 1)^T - (A^+T 1) x^T, with x = [0.5, 2], r = b - a x = [0, 0, 1], (A^T A)^-1 1 = [1, 1e18]
    want = np.outer([0.0, 0.0, 1.0], [1.0, 1e18]) - np.outer([1.0, 1e9, 0.0], [0.5, 2.0])
    np.testing.assert_allclose(ga.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("rcond", [None, 1e-3, -1])
def test_float64_systems_are_unchanged(rcond):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal(5)
    xn = np.linalg.lstsq(a, b, rcond=rcond)[0]
    x = np.linalg.lstsq(ap.constant(a), ap.constant(b), rcond=rcond)[0]
    assert x.dtype == np.float64
    np.testing.assert_allclose(x.numpy(), xn, rtol=1e-12)
