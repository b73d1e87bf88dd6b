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


# --- session 28 (review28a H1, M1, L5): numpy's working dtype is double for every mix of input dtypes ---

_DTYPES = [np.int64, np.int8, np.bool_, np.float32, np.float64, np.complex64, np.complex128]


def _cast(v, dt):
    return (v != 0) if dt is np.bool_ else v.astype(dt)


@pytest.mark.parametrize("da", _DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("db", _DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_pair_is_numpys_rank_dtypes_and_x(da, db):
    """review28a H1: a float32 a with a float64 b was cut with float32's eps (rank 2, numpy 3, another x);
    M1: an int a crashed in finfo. numpy solves all in float64/complex128 (numpy.linalg._commonType)."""
    a = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 2.0], [2.0, -1.0, 1.0]])
    if np.dtype(da).kind in "fc":
        a[2, 2] += 3e-6  # singular value ~1e-6: above float64's cut (8.9e-16), below float32's (4.8e-7)
    b = np.array([1.0, 2.0, 3.0, 4.0])
    a, b = _cast(a, da), _cast(b, db)
    xn, rn, kn, sn = np.linalg.lstsq(a, b, rcond=None)
    x, r, k, s = np.linalg.lstsq(ap.constant(a), ap.constant(b), rcond=None)
    assert int(k) == int(kn)
    assert (x.dtype, r.dtype, s.dtype, r.shape) == (xn.dtype, rn.dtype, sn.dtype, rn.shape)
    single = xn.dtype in (np.float32, np.complex64)
    np.testing.assert_allclose(x.numpy(), xn, rtol=1e-5 if single else 1e-8, atol=1e-6)
    np.testing.assert_allclose(s.numpy(), sn, rtol=0, atol=(1e-6 if single else 1e-12) * sn.max())


def test_float32_a_float64_b_keeps_the_small_singular_value():
    """review28a's H1 system: numpy's rank 3 and x ~ 2.15e5 (float32's eps gave rank 2 and x ~ 1)."""
    a = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 2.0 + 3e-6], [2.0, -1.0, 1.0]], np.float32)
    b = np.array([1.0, 2.0, 3.0, 4.0])
    xn, _, kn, _ = np.linalg.lstsq(a, b, rcond=None)
    x, _, k, _ = np.linalg.lstsq(ap.constant(a), ap.constant(b), rcond=None)
    assert kn == 3 and k == 3 and abs(xn[0]) > 1e5
    np.testing.assert_allclose(x.numpy(), xn, rtol=1e-8)


def test_int_a_float32_b_is_numpys_float64_solution():
    """review28a M1: finfo(int64) raised; numpy gives [4/3, 7/3] in float64."""
    a = np.array([[1, 0], [0, 1], [1, 1]])
    b = np.array([1.0, 2.0, 4.0], np.float32)
    x = np.linalg.lstsq(ap.constant(a), ap.constant(b), rcond=None)[0]
    assert x.dtype == np.float64
    np.testing.assert_allclose(x.numpy(), [4.0 / 3.0, 7.0 / 3.0], rtol=1e-14)


def test_rcond_negative_is_lapacks_half_eps():
    """rcond=-1 is DLAMCH('Epsilon') = 2^-53 = 1.1e-16 (gelsd_rcond): a singular value 1.5e-16 is kept, rank 2,
    as numpy (float64's eps 2.2e-16 would cut it: mutant gelsd_eps_52)."""
    a = np.diag([1.0, 1.5e-16])
    b = np.array([1.0, 1.5e-16])
    xn, _, kn, _ = np.linalg.lstsq(a, b, rcond=-1)
    x, _, k, _ = np.linalg.lstsq(ap.constant(a), ap.constant(b), rcond=-1)
    assert kn == 2 and k == 2
    np.testing.assert_allclose(x.numpy(), [1.0, 1.0], rtol=1e-14)
    np.testing.assert_allclose(xn, [1.0, 1.0], rtol=1e-14)


def test_complex64_system_is_solved_in_complex128():
    """A complex64 system with a singular value 1e-9 (below complex64's cut 2.4e-7 * 2): numpy keeps it (rank 2,
    x = [0.5, 2]), and rounds x to complex64 and s to float32 (mutant lstsq_c64_not_double)."""
    a = np.array([[1.0, 0.0], [0.0, 1e-9j], [0.0, 0.0]], dtype=np.complex64)
    b = np.array([0.5, 2e-9j, 1.0], dtype=np.complex64)
    xn, rn, kn, sn = np.linalg.lstsq(a, b, rcond=None)
    x, r, k, s = np.linalg.lstsq(ap.constant(a), ap.constant(b), rcond=None)
    assert kn == 2 and k == 2
    assert (x.dtype, r.dtype, s.dtype) == (np.complex64, np.float32, np.float32) == (xn.dtype, rn.dtype, sn.dtype)
    np.testing.assert_allclose(x.numpy(), [0.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(r.numpy(), [1.0], rtol=1e-6)


def test_complex_system_on_a_tape_is_refused_naming_the_users_dtype():
    """review28a L5: the refusal named complex128 (pinv's working dtype) for a complex64 system."""
    a = ap.Variable((np.arange(6.0).reshape(3, 2) + 1j).astype(np.complex64))
    b = np.ones(3, np.complex64)
    with pytest.raises(TypeError, match=r"autoprop\.lstsq: a complex system \(a complex64, b complex64\)"):
        with ap.GradientTape():
            np.linalg.lstsq(a, b, rcond=None)


def test_longdouble_is_refused_as_numpy_does():
    with pytest.raises(TypeError, match="float128 is unsupported in linalg"):
        np.linalg.lstsq(ap.constant(np.eye(2, dtype=np.longdouble)), ap.constant(np.ones(2)), rcond=None)
