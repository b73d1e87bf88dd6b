"""Session 31 (fixv31a): review31's autoprop findings on the NaN rule of eigvals / np.roots.

* HESSIAN_FINITE_WHERE_GRADIENT_NAN: where the first derivative is NaN on purpose (a double root, a Jordan
  block), every higher one is NaN too (the NaN linked to the inputs: ``linalg_eig.nan_linked``), reverse over
  reverse, forward over reverse; before: a Hessian of finite zeros (or None).
* NAN_WELL_CONDITIONED / NAN_FLOAT32_WELL_SEPARATED: the rule is now first-order perturbation theory of the
  eigenvectors under LAPACK's rounding (``linalg_eig.unresolved``, ``lapack_coupling``; roots:
  ``polynomial._roots_unresolved``), scale invariant; ``[[1, 1e6], [0, 2]]``, the roots of ``prod (x - k)``
  and the float32 cases get their exact derivatives.
* review31's surviving mutants: the threshold pinned from both sides (a case just resolved is finite and right,
  one just unresolved NaN), complex coefficients, forward mode at a lost V^-1 (the block NaN, the simple
  eigenvalue beside it exact since session 33), leading zero coefficients.

Oracles: closed forms (the implicit function theorem ``dr/dp_k = -r^(L-1-k) / p'(r)``; the eigenvalue gradient
``y x^T / (y x)`` of ``[[1, 1], [s^2, 1]]``), central differences (tests/oracles.py); mpmath at 60 digits agreed
with both (fixv31a's sweep, /work/wt/fixv31a_sweep/sweep.py). Tolerances: the rule gives a derivative only where
its first-order error bound is at most 1e-6 (float64), so 1e-6 relative is the honest tolerance near the threshold.
"""

import numpy as np
import pytest
from oracles import central

import autoprop as ap
from tests.test_autoprop_roots_s30 import _grad, _jvp

JORDAN = np.array([[2.0, 1.0], [0.0, 2.0]])
DOUBLE = np.array([1.0, -2.0, 1.0])  # (x - 1)^2
Q = np.array([[0.8, -0.6], [0.6, 0.8]])  # a rotation: the near-Jordan test matrices are dense


def _eig_sq(m, a):
    return m.sum(m.real(m.linalg.eigvals(a)) ** 2)


def _roots_sq(m, p):
    return m.sum(m.real(m.roots(p)) ** 2)


@pytest.mark.parametrize("f, x", [(_eig_sq, JORDAN), (_roots_sq, DOUBLE)], ids=["jordan", "double_root"])
def test_the_hessian_is_nan_where_the_gradient_is_nan(f, x):
    t = ap.Variable(x)
    with ap.GradientTape(persistent=True) as outer:
        with ap.GradientTape() as inner:
            y = f(np, t)
        g = inner.gradient(y, t)
    assert np.all(np.isnan(g.numpy()))
    for kw in ({}, {"unconnected_gradients": "zero"}):  # before: None / all 0.0 (true Hessians are nonzero)
        h = outer.jacobian(g, t, **kw)
        assert h is not None and np.all(np.isnan(h.numpy()))


@pytest.mark.parametrize("f, x", [(_eig_sq, JORDAN), (_roots_sq, DOUBLE)], ids=["jordan", "double_root"])
def test_forward_over_reverse_and_the_tangent_derivative_are_nan_there(f, x):
    u = np.ones_like(x)
    t = ap.Variable(x)
    with ap.ForwardAccumulator(t, ap.constant(u)) as acc:  # a Hessian-vector product
        with ap.GradientTape() as tape:
            y = f(np, t)
        g = tape.gradient(y, t)
    assert np.all(np.isnan(acc.jvp(g).numpy()))  # (before: zeros at the Jordan block)
    if f is _eig_sq:  # (reverse over forward there reaches the eigenvectors: refused, ValueError, as before)
        return
    with ap.GradientTape() as tape:  # the derivative of a tangent
        tape.watch(t)
        with ap.ForwardAccumulator(t, ap.constant(u)) as acc:
            y = f(np, t)
        d = acc.jvp(y)
    assert np.isnan(d.numpy()) and np.all(np.isnan(tape.gradient(d, t).numpy()))


@pytest.mark.parametrize("c", [1.0, 1e-3, 1e5])
def test_a_triangular_matrix_with_a_large_corner_gets_the_trace_gradient_at_every_scale(c):
    # review31: session 30's kappa rule NaN'd it; numpy computes a triangular A's eigenvalues exactly (LAPACK
    # isolates them) and d sum(w)/dA = I exactly; c A decides as A (the rule is scale invariant)
    a = c * np.array([[1.0, 1e6], [0.0, 2.0]])
    np.testing.assert_allclose(_grad(lambda m, x: m.sum(m.real(m.linalg.eigvals(x))), a), np.eye(2), atol=1e-9)
    w = np.linalg.eigvals(a)  # each eigenvalue alone: y x^T / (y x), here e_1 (e_1 - 1e6 e_2)^T for w = c
    g = _grad(lambda m, x: m.real(m.linalg.eigvals(x))[int(np.argmin(w))], a)
    np.testing.assert_allclose(g, [[1.0, 0.0], [-1e6, 0.0]], rtol=1e-9, atol=1e-9)


def test_the_roots_of_a_product_of_eight_factors_get_their_derivative():
    # review31: NaN before; sum(r) = -p1 / p0, so d sum(r)/dp = [p1 / p0^2, -1 / p0, 0, ...] = [-36, -1, 0, ...]
    p = np.poly(np.arange(1.0, 9.0))
    g = _grad(lambda m, q: m.sum(m.real(m.roots(q))), p)
    np.testing.assert_allclose(g, [-36.0, -1.0] + [0.0] * 7, rtol=1e-6, atol=1e-6 * 36)


def test_float32_well_separated_cases_are_finite_and_right():
    for off in (10.0, 30.0, 100.0):  # review31: 30 and 100 NaN before
        a = np.array([[1.0, off], [0.0, 2.0]], np.float32)
        np.testing.assert_allclose(_grad(lambda m, x: m.sum(m.real(m.linalg.eigvals(x))), a), np.eye(2), atol=1e-5)
    p = np.poly([1.0, 2.0, 3.0, 4.0]).astype(np.float32)  # NaN before
    g = _grad(lambda m, q: m.sum(m.real(m.roots(q))), p)
    np.testing.assert_allclose(g, [-10.0, -1.0, 0.0, 0.0, 0.0], rtol=2e-3, atol=2e-3 * 10)


def _pair_exact(s):
    """d sum(r^2)/dp for the roots 1, 1 + s of p = (x - 1)(x - 1 - s): sum_i 2 r_i (-r_i^(2-k) / p'(r_i))."""
    return sum(2 * r * -(r ** np.arange(2, -1, -1)) / d for r, d in ((1.0, -s), (1.0 + s, s)))


def test_the_threshold_from_both_sides_for_roots():
    # a close pair at distance s: the bound is ~4e-15 / s^2, 1e-6 at s ~ 6e-5. s = 2e-4 (bound 1e-7): finite and
    # right to 1e-6; s = 2e-5 (bound 1e-5): NaN. Kills a threshold 1e-1 (review31's thr_loose) and 1e-11.
    g = _grad(_roots_sq, np.polymul([1.0, -1.0], [1.0, -(1.0 + 2e-4)]))
    e = _pair_exact(2e-4)
    assert np.linalg.norm(g - e) <= 1e-6 * np.linalg.norm(e)
    assert np.all(np.isnan(_grad(_roots_sq, np.polymul([1.0, -1.0], [1.0, -(1.0 + 2e-5)]))))


def _near_jordan(s):
    return Q @ np.array([[1.0, 1.0], [s * s, 1.0]]) @ Q.T  # eigenvalues 1 +- s


def test_the_threshold_from_both_sides_for_eigvals():
    # the bound is ~3.5e-16 / s^2: s = 6e-5 (1e-7) finite and right, s = 6e-6 (1e-5) NaN
    def top(m, a):
        return m.max(m.real(m.linalg.eigvals(a)))

    s = 6e-5
    g = _grad(top, _near_jordan(s))  # w = 1 + s: y = (s, 1), x = (1, s), y x = 2 s, rotated by Q
    e = Q @ (np.array([[s, s * s], [1.0, s]]) / (2 * s)) @ Q.T
    assert np.linalg.norm(g - e) <= 1e-6 * np.linalg.norm(e)
    assert np.all(np.isnan(_grad(top, _near_jordan(6e-6))))


def test_a_jvp_is_nan_at_the_jordan_block_and_exact_at_the_simple_eigenvalue_beside_it():
    # V^-1 of the Jordan block is lost (cond(V) ~ 1/eps); the isolated eigenvalue 5's left eigenvector is not a row
    # of it since session 33 (left33, SIMPLE_EIGENVALUE_BESIDE_JORDAN_NAN: the bordered solve, linalg_eig._reduced):
    # its tangent and gradient are exact (y = x = e_3: u_33 and e_3 e_3^T; NaN in sessions 31-32), the block's NaN
    a = np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 5.0]])
    u = np.zeros((3, 3))
    u[2, 2] = 1.0
    d = _jvp(lambda m, x: m.real(m.linalg.eigvals(x)), a, u)
    assert np.all(np.isnan(d[:2])) and d[2] == 1.0
    np.testing.assert_array_equal(_grad(lambda m, x: m.real(m.linalg.eigvals(x))[2], a), u)
    assert np.all(np.isnan(_grad(lambda m, x: m.real(m.linalg.eigvals(x))[0], a)))


def test_complex_coefficients_keep_their_complex_gradient():
    # autoprop's convention for a real loss of a complex input: dL/dRe + i dL/dIm (PyTorch's; jax's conjugate)
    p = np.array([1.0 + 0.5j, -2.0 + 1.0j, 3.0 - 0.25j])

    def f(m, q):
        r = m.roots(q)
        return m.sum(m.real(r) ** 2 + m.imag(r))

    g = _grad(f, p)
    fr = central(lambda x: f(np, x + 1j * p.imag), p.real, h=1e-6)
    fi = central(lambda y: f(np, p.real + 1j * y), p.imag, h=1e-6)
    np.testing.assert_allclose(g, fr + 1j * fi, rtol=1e-6, atol=1e-8)
    assert np.abs(g.imag).max() > 0.1  # (np.real of it would drop this)


@pytest.mark.parametrize("p", [[0.0, 1.0, -3.0, 2.0], [0.0, 0.0, 1.0, -3.0, 2.0]], ids=["lead0", "lead00"])
def test_leading_zero_coefficients_get_the_implicit_function_theorem(p):
    # numpy drops leading zeros (roots at infinity); the finite roots 2, 1 move with every coefficient,
    # the leading zeros too: dr/dp_k = -r^(L-1-k) / p'(r), p'(r) = 2 r - 3 (jax x64 on np.roots agrees)
    p = np.array(p)
    L = len(p)
    g = _grad(_roots_sq, p)
    e = sum(2 * r * -(r ** np.arange(L - 1, -1, -1)) / (2 * r - 3) for r in (1.0, 2.0))
    np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def test_a_triangular_close_pair_one_sided_coupling():
    # [[1, 1], [0, 1 + s]]: the rounding of A couples the pair one way only (x_2 moves, x_1 = e_1 does not), so the
    # bound of w_2's derivative is its right eigenvector's term: ~ eps / s relative (the stored 1 + s's rounding).
    # s = 1e-8 (bound ~2e-8): finite and exact, [[0, 0], [1/s, 1]] (y_2 = e_2, x_2 = (1, s), y_2 x_2 = s);
    # s = 1e-11 (~2e-5): NaN. (Kills a rule that drops the gap from the right eigenvector's term.)
    def top(m, a):
        return m.max(m.real(m.linalg.eigvals(a)))

    a = np.array([[1.0, 1.0], [0.0, 1.0 + 1e-8]])
    s = a[1, 1] - 1.0  # (exact: Sterbenz)
    np.testing.assert_allclose(_grad(top, a), [[0.0, 0.0], [1.0 / s, 1.0]], rtol=1e-6, atol=1e-6)
    assert np.all(np.isnan(_grad(top, np.array([[1.0, 1.0], [0.0, 1.0 + 1e-11]]))))


def test_a_tiny_entry_in_lapacks_active_block_is_not_taken_as_exact():
    # [[2, 1], [d, 2]] with d = 1e-14 (eigenvalues 2 +- 1e-7): LAPACK does not balance it away, and its backward
    # error is normwise in the block, ~eps ||A|| = 4e-16 in the entry d: the derivative ~1/(2 sqrt(d)) of the
    # matrix LAPACK solved is that of one 2% off, so no digit is guaranteed: NaN. A componentwise model (d's own
    # rounding only) would give a finite number here (kills the mutant that drops the block term). At d = 1e-4
    # (eigenvalues 2 +- 1e-2) the derivative is given: y x^T / (y x), y = (sqrt(d), 1), x = (1, sqrt(d)).
    def top(m, a):
        return m.max(m.real(m.linalg.eigvals(a)))

    assert np.all(np.isnan(_grad(top, np.array([[2.0, 1.0], [1e-14, 2.0]]))))
    r = np.sqrt(1e-4)
    e = np.array([[r, r * r], [1.0, r]]) / (2 * r)
    np.testing.assert_allclose(_grad(top, np.array([[2.0, 1.0], [1e-4, 2.0]])), e, rtol=1e-9)


# --- review32, F32_EIG_NAN_NUMPY_COMPUTES_IN_FLOAT64: numpy's eig and roots compute float32 input in double
# precision and round only w, V (and roots' first row -p[1:] / p[0]) to float32; the rule charged float32's eps to
# LAPACK and NaN'd a symmetric pair 1e-4 apart (cond(V) = 1), which torch differentiates to 5e-8.
def _f64_eigvals_grad(a, wgt):
    """d sum(wgt_i Re w_i)/dA of the float32 matrix as stored, in float64, weights matched to numpy's float32 order."""
    w32 = np.linalg.eigvals(a)
    w, v = np.linalg.eig(a.astype(np.float64))
    y = np.linalg.inv(v)
    return sum(wgt[i] * np.real(np.outer(y[j], v[:, j])).T for i, j in
               enumerate(int(np.argmin(np.abs(w - z))) for z in w32))


def test_float32_symmetric_close_pair_gets_its_gradient():
    c, s = np.cos(0.3), np.sin(0.3)
    q = np.array([[c, -s], [s, c]])
    wgt = np.array([1.0, 2.0], np.float32)
    for gap in (1e-4, 1e-5):
        a = (q @ np.diag([1.0, 1.0 + gap]) @ q.T).astype(np.float32)
        g = _grad(lambda m, x: m.sum(m.real(m.linalg.eigvals(x)) * wgt), a)  # NaN before
        e = _f64_eigvals_grad(a, wgt)
        assert np.linalg.norm(g - e) <= 1e-5 * np.linalg.norm(e)


def _roots_f32_exact(p, wgt):
    """d sum(wgt_i Re r_i)/dp of float32 ``p`` as stored: -r_i^(L-1-k) / p'(r_i) at its float64 roots."""
    r32, r = np.roots(p), np.roots(p.astype(np.float64))
    L = len(p)
    out = np.zeros(L)
    for i, z in enumerate(r32):
        ri = r[int(np.argmin(np.abs(r - z)))]
        out += wgt[i] * np.real(-ri ** np.arange(L - 1, -1, -1) / np.polyval(np.polyder(p.astype(np.float64)), ri))
    return out


def test_the_float32_threshold_from_both_sides_for_roots():
    # 3 (x - 1)(x - 1 - s) in float32: numpy's first row -p[1:] / 3 is rounded to float32 (its error, ~6e-8 / s^2
    # relative in the derivative, is what binds; the double-precision LAPACK part is ~1e-16 / s^2). s = 0.01:
    # bound 1.7e-3 below float32's 1.9e-3 (RESOLVED (eps32 / eps64)^(3/8)), finite and right to it; s = 0.008:
    # bound 3.8e-3, NaN. Kills an exponent 1/4 (threshold 1.5e-4) and 1/2 (2.3e-2): review32's f32_exp.
    wgt = np.array([1.0, 2.0], np.float32)

    def f(m, p):
        return m.sum(m.real(m.roots(p)) * wgt)

    p = (3.0 * np.poly([1.0, 1.01])).astype(np.float32)
    g, e = _grad(f, p), _roots_f32_exact(p, wgt)
    assert np.linalg.norm(g - e) <= 1.9e-3 * np.linalg.norm(e)
    assert np.all(np.isnan(_grad(f, (3.0 * np.poly([1.0, 1.008])).astype(np.float32))))
    p = np.poly([1.0, 1.001]).astype(np.float32)  # p[0] = 1: the first row exact, the roots 7e-4 apart (NaN before)
    g, e = _grad(f, p), _roots_f32_exact(p, wgt)
    assert np.linalg.norm(g - e) <= 1.9e-3 * np.linalg.norm(e)  # (1e-4: the roots rounded to float32)


def test_a_batch_hessian_is_nan_only_for_its_defective_matrix():
    # review32 BATCH_HESSIAN_ONE_DEFECTIVE_RAISES: a Jordan block beside an ordinary matrix raised "the derivative of
    # the eigenvectors is undefined" for the whole batch. sum(w^2) = trace(A^2): its Hessian is 2 delta_il delta_jk
    a = np.array([[[2.0, 1.0], [0.0, 2.0]], [[1.0, 2.0], [0.5, 3.0]]])
    x = ap.Variable(a)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = np.sum(np.real(np.linalg.eigvals(x)) ** 2)
        g = inner.gradient(y, x)
    h = np.asarray(outer.jacobian(g, x))  # (2, 2, 2, 2, 2, 2)
    assert np.all(np.isnan(np.asarray(g)[0])) and np.all(np.isnan(h[0, :, :, 0]))
    np.testing.assert_allclose(np.asarray(g)[1], 2 * a[1].T, atol=1e-12)
    np.testing.assert_allclose(h[1, :, :, 1], 2 * np.einsum("il,jk->ijkl", np.eye(2), np.eye(2)), atol=1e-12)
    assert np.all(h[1, :, :, 0] == 0) and np.all(h[0, :, :, 1] == 0)  # (no matrix's gradient depends on the other)
