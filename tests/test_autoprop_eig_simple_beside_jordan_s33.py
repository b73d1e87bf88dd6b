"""Session 33 (left33): SIMPLE_EIGENVALUE_BESIDE_JORDAN_NAN (review32; session 32's note).

``A = [[2, 1, .3], [0, 2, .7], [0, 0, 5]]``: a 2x2 Jordan block at 2 beside the simple eigenvalue 5. The derivative
of a simple eigenvalue is ``y x^T / (y x)`` (its left and right eigenvectors; Magnus 1985) whatever the others are;
autoprop gave NaN for every entry of d(w_5^2)/dA, because it took ``y`` from a row of ``V^-1`` (which is lost when
V holds the block's two nearly parallel columns) and bounded its error term by term over the other eigenvalues
(each term huge at the block, their sum, the reduced resolvent, not). Now a rejected eigenvalue gets a second look
(``linalg_eig.resolvent_bound``): ``y = c N^-1`` with ``N = A - w I + x c`` and the reduced resolvent as a whole;
the block's own eigenvalues stay NaN (their eigenvectors' gradient: ValueError), as documented.

Oracles: closed forms (the left eigenvector of a triangular matrix's last diagonal entry is e_3; the right one by
back substitution), central differences (tests/oracles.py), scipy's left and right eigenvectors (LAPACK's geev with
left vectors, a different computation from autoprop's) for the points near A. torch 2.13's ``linalg.eigvals`` and
jax (x64) give the same row [1.7778, 2.3333, 10.0] as the closed form (to 1.2e-16 and 2.8e-17), mpmath at 60 digits
on 240 matrices with a Jordan block of size 2 or 3 beside 1 to 3 simple eigenvalues (triangular, rotated, similar
by a random matrix, scaled, permuted, nearly defective): 480 of 485 simple eigenvalues' gradients given, none off by
more than 1e-6 (before: 154 given, 331 NaN), no eigenvalue of a block given a wrong number
(/work/wt/left33_scratch/sweep33.py).

Tolerances: the eigenvalue 5 of A is well conditioned (``|x| |y| / |y x|`` = 1.05, gap 3 to the block), so its
derivative is computed to a few eps whatever the BLAS's summation order: 1e-12 relative is far above that and far
below any error a wrong formula makes. The central differences' own error (h^2 times the third derivative, about
1e-10 at h = 1e-5; eps |f| / h) sets theirs.
"""

import numpy as np
import pytest
import scipy.linalg
from oracles import central

import autoprop as ap

A = np.array([[2.0, 1.0, 0.3], [0.0, 2.0, 0.7], [0.0, 0.0, 5.0]])
X5 = np.array([16 / 90, 7 / 30, 1.0])  # (A - 5 I) x = 0, x_3 = 1 (back substitution); y = e_3, y x = 1
G5 = np.outer([0.0, 0.0, 1.0], X5)  # d w_5 / dA = y x^T / (y x)
Q = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0]


def _grad(f, x):
    t = ap.Variable(x)
    with ap.GradientTape() as tape:
        y = f(t)
    return tape.gradient(y, t).numpy()


def _jvp(f, x, u):
    t = ap.constant(x)
    with ap.ForwardAccumulator(t, ap.constant(u)) as acc:
        y = f(t)
    return [acc.jvp(z).numpy() for z in y] if isinstance(y, tuple) else acc.jvp(y).numpy()


def _simple(a, near=5.0):
    """The index (numpy's order) of the eigenvalue of ``a`` nearest ``near``."""
    return int(np.argmin(np.abs(np.linalg.eigvals(a) - near)))


def _ref_grad(a, near=5.0):
    """d w / dA of the eigenvalue nearest ``near`` from scipy's left and right eigenvectors (real A, real w)."""
    w, vl, vr = scipy.linalg.eig(a, left=True, right=True)
    i = int(np.argmin(np.abs(w - near)))
    y, x = np.conj(vl[:, i]), vr[:, i]
    return np.real(np.outer(y, x) / (y @ x))


def test_the_simple_eigenvalue_beside_a_jordan_block_gets_its_gradient():
    k = _simple(A)
    g = _grad(lambda t: np.real(np.linalg.eigvals(t))[k] ** 2, A)  # before: all NaN
    np.testing.assert_allclose(g, 10.0 * G5, rtol=1e-12, atol=1e-12 * 10)
    np.testing.assert_allclose(g[2], [1.7777777777777777, 2.3333333333333335, 10.0], rtol=1e-12)  # torch's, jax's
    ge = _grad(lambda t: np.real(np.linalg.eig(t)[0])[k] ** 2, A)  # eig's eigenvalue row: the same rule
    np.testing.assert_allclose(ge, 10.0 * G5, rtol=1e-12, atol=1e-12 * 10)
    fd = central(lambda x: np.max(np.real(np.linalg.eigvals(x))) ** 2, A, h=1e-5)  # (5 stays the largest)
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-7)


def test_the_jordan_blocks_own_eigenvalues_stay_nan_and_their_eigenvectors_refused():
    k = _simple(A)
    j = [i for i in range(3) if i != k]
    assert np.all(np.isnan(_grad(lambda t: np.sum(np.real(np.linalg.eigvals(t)) ** 2), A)))
    assert np.all(np.isnan(_grad(lambda t: np.real(np.linalg.eigvals(t))[j[0]], A)))
    with pytest.raises(ValueError, match="defective"):
        _grad(lambda t: np.sum(np.real(np.linalg.eig(t)[1][:, j[0]])), A)


def test_the_simple_eigenvalues_eigenvector_gets_its_gradient_through_the_reduced_resolvent():
    # dx = -S dA x (S the reduced resolvent): the sum over the other eigenvalues would hold the block's huge terms
    k = _simple(A)

    def x5(a):  # the unit eigenvector of the eigenvalue nearest 5, its sign fixed by its last entry (positive)
        w, v = np.linalg.eig(a)
        i = int(np.argmin(np.abs(w - 5.0)))
        return np.real(v[:, i] * np.sign(np.real(v[2, i])))

    c = np.array([0.3, -1.2, 0.7])
    g = _grad(lambda t: np.sum(np.real(np.linalg.eig(t)[1][:, k]) * c), A)
    fd = central(lambda x: x5(x) @ c, A, h=1e-6)
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-8)


def test_a_batch_gives_each_matrix_its_own_answer():
    jordan3 = np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.0, 2.0]])
    plain = np.array([[1.0, 2.0, 0.5], [0.5, 3.0, 1.0], [0.0, 1.0, -1.0]])
    b = np.stack([A, Q @ A @ Q.T, plain, jordan3, np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.3, 0.1, 5.0]])])
    mask = np.zeros((5, 3), bool)
    for m in (0, 1, 4):
        mask[m, _simple(b[m])] = True
    mask[2, :] = True  # (every eigenvalue of the ordinary matrix: d sum(w)/dA = I)
    g = _grad(lambda t: np.sum(np.where(mask, np.real(np.linalg.eigvals(t)), 0.0)), b)
    np.testing.assert_allclose(g[0], G5, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g[1], _ref_grad(b[1]), rtol=1e-9, atol=1e-9)  # (rotated: cond(V) 4e7, y's rows)
    np.testing.assert_allclose(g[2], np.eye(3), atol=1e-12)
    assert np.all(g[3] == 0)  # (no gradient reached the 3x3 Jordan block: 0, not NaN)
    # session 30's case: y = (0.1, 1/15, 1) (A^T y = 5 y), x = e_3 (before: NaN; in session 30, 0.0314 for 1/15)
    np.testing.assert_allclose(g[4], np.outer([0.1, 1 / 15, 1.0], [0.0, 0.0, 1.0]), rtol=1e-12, atol=1e-12)
    h = _grad(lambda t: np.sum(np.real(np.linalg.eigvals(t)) ** 2), b)  # sum(w^2) = trace(A^2): 2 A^T where defined
    assert np.all(np.isnan(h[[0, 1, 3, 4]]))  # (Q A Q^T too: its block is computed as 2 +- 2.7e-8 i)
    np.testing.assert_allclose(h[2], 2 * b[2].T, rtol=1e-12, atol=1e-12)


def test_forward_mode_gives_the_simple_eigenvalue_and_its_eigenvector_their_tangents():
    u = np.random.default_rng(1).standard_normal((3, 3))
    k = _simple(A)
    dw, dv = _jvp(lambda t: tuple(np.linalg.eig(t)), A, u)
    assert np.isnan(dw[[i for i in range(3) if i != k]]).all() and np.isnan(dv[:, [i for i in range(3) if i != k]]).all()
    np.testing.assert_allclose(dw[k], np.sum(G5 * u), rtol=1e-12)  # before: NaN
    h = 1e-6
    w1, v1 = np.linalg.eig(A + h * u)
    w0, v0 = np.linalg.eig(A - h * u)
    x1, x0 = v1[:, np.argmin(np.abs(w1 - 5))], v0[:, np.argmin(np.abs(w0 - 5))]
    np.testing.assert_allclose(dv[:, k], np.real(x1 * np.sign(x1[2]) - x0 * np.sign(x0[2])) / (2 * h), atol=1e-8)


def test_second_derivatives_of_the_simple_eigenvalue():
    # reverse over reverse and forward over reverse, against central differences of scipy's left/right-vector
    # gradient (the eigenvalue is smooth near A; the block splits, 5 stays simple)
    k = _simple(A)
    x = ap.Variable(A)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = np.real(np.linalg.eigvals(x))[k]
        g = inner.gradient(y, x)
    hess = np.asarray(outer.jacobian(g, x))  # (3, 3, 3, 3): d g_ij / dA_kl
    fd = np.stack([central(lambda a, i=i: _ref_grad(a).ravel()[i], A, h=1e-5) for i in range(9)]).reshape(3, 3, 3, 3)
    np.testing.assert_allclose(hess, fd, atol=1e-8)
    assert np.abs(fd).max() > 0.1
    u = np.random.default_rng(2).standard_normal((3, 3))
    with ap.ForwardAccumulator(x, ap.constant(u)) as acc:
        with ap.GradientTape() as tape:
            y = np.real(np.linalg.eigvals(x))[k]
        g = tape.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(g).numpy(), np.tensordot(fd, u, axes=2), atol=1e-8)


def test_float32_and_complex():
    a32 = A.astype(np.float32)  # (A's entries are float32 exactly but .3, .7: the closed form at the stored values)
    y, x = np.array([0.0, 0.0, 1.0]), np.linalg.solve((a32.astype(float) - 5 * np.eye(3))[:2, :2], -a32[:2, 2])
    g = _grad(lambda t: np.real(np.linalg.eigvals(t))[_simple(A)], a32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.outer(y, np.append(x, 1.0)), rtol=1e-5, atol=1e-6)  # (float32's rounding)
    # a complex A: the block at 2 + i, the simple eigenvalue 5 - i; a real loss's gradient in autoprop's convention
    # dL/dRe + i dL/dIm (PyTorch's) is conj(y x^T / (y x)) for L = Re w
    ac = np.array([[2 + 1j, 1.0, 0.3], [0, 2 + 1j, 0.7j], [0, 0, 5 - 1j]])
    x2 = -0.7j / (2 + 1j - (5 - 1j))
    x1 = -(x2 + 0.3) / (2 + 1j - (5 - 1j))
    k = _simple(ac, 5 - 1j)
    g = _grad(lambda t: np.real(np.linalg.eigvals(t))[k], ac)
    np.testing.assert_allclose(g, np.conj(np.outer([0, 0, 1.0], [x1, x2, 1.0])), rtol=1e-12, atol=1e-12)
    def re5(m):  # (the eigenvalue nearest 5 - i: a step splits the block, and numpy's order may change)
        w = np.linalg.eigvals(m)
        return np.real(w[np.argmin(np.abs(w - (5 - 1j)))])

    fr = central(lambda r: re5(r + 1j * ac.imag), ac.real, h=1e-6)
    fi = central(lambda i: re5(ac.real + 1j * i), ac.imag, h=1e-6)
    np.testing.assert_allclose(g, fr + 1j * fi, atol=1e-8)


def test_a_near_multiple_eigenvalue_of_an_isolated_block_stays_nan():
    # a Jordan block at -3 beside -3 + 4.4e-16 (a triple eigenvalue rounded: no exact tie), scaled and permuted so
    # that LAPACK isolates most of it; the rounding model of isolated entries alone would call those eigenvalues
    # resolved (bound 1e-14) with ``N`` singular to working precision: the solve term (with N's LU factors) keeps them NaN
    # (mpmath at 60 digits: the gradient it gave was 56% off). The three simple eigenvalues keep theirs.
    a = _isolated_case()
    w = np.linalg.eigvals(a)
    for i in range(len(w)):
        g = _grad(lambda t, i=i: np.real(np.linalg.eigvals(t))[i], a)
        if abs(w[i] + 3) < 1e-6:
            assert np.all(np.isnan(g))
        else:
            np.testing.assert_allclose(g, _ref_grad(a, w[i].real), rtol=1e-6, atol=1e-6 * np.abs(g).max())


@pytest.mark.parametrize("side", ["upper", "lower"])
def test_the_second_looks_threshold_from_both_sides(side):
    # the simple eigenvalue 2 + d beside a Jordan block at 2, triangular (numpy computes it exactly): the second
    # look's bound is about 4 eps / d (the right eigenvector's term for the upper matrix, the left one's for its
    # transpose): d = 2^-26 (bound 3e-7) finite and exact, y x^T / (y x) with y = e_3, x = ((1/d + 1)/d, 1/d, 1)
    # (transposed for the lower one); d = 2^-32 (2e-5) NaN. Kills a second look that gives up (NaN at 2^-26) and
    # one with a threshold 100x looser (finite at 2^-32).
    def w_near(t):
        w = np.real(np.linalg.eigvals(t))
        return np.sum(np.where(w.numpy() > 2, w, 0.0))

    for k, finite in ((26, True), (32, False)):
        d = 2.0 ** -k
        a = np.array([[2.0, 1.0, 1.0], [0.0, 2.0, 1.0], [0.0, 0.0, 2.0 + d]])
        e = np.outer([0.0, 0.0, 1.0], [(1 / d + 1) / d, 1 / d, 1.0])
        a, e = (a, e) if side == "upper" else (a.T, e.T)
        g = _grad(w_near, a)
        if finite:
            assert np.linalg.norm(g - e) <= 1e-12 * np.linalg.norm(e)
        else:
            assert np.all(np.isnan(g))


def _isolated_case():
    return np.array([  # (left33_scratch/sweep33.py's k76: D^-1 T D permuted, T a Jordan block at -3 and 3 simple)
        [-7.9847848339817160e+00, 0.0, 0.0, 0.0, 0.0, 0.0],
        [1.0730723782424616e+03, -4.4011060493016085e+00, 0.0, 0.0, 0.0, 0.0],
        [-8.3284463518012308e-01, -2.0967075916900029e-05, -3.0, 0.0, 6.4765493825064732e-04, 5.6631962690695419e+00],
        [1.2556396278668464e+04, -1.5895120951873070e+01, 2.2164311118282170e+04, -3.0, -4.5250103374528670e+01, 0.0],
        [-5.2775440256584226e+01, 2.3804116268235245e-01, 0.0, 0.0, -4.5916990189682299e+00, 0.0],
        [1.0111806869907435e-01, -3.6841340471382494e-05, 0.0, 0.0, -5.2902625684666377e-04, -2.9999999999999996e+00]])
