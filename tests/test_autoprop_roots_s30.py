"""Session 30 (fixv30a): review30's autoprop findings on np.roots, np.poly and np.linalg.eig/eigvals.

* ROOTS_TRAILING_ZERO: numpy's constant root 0 of a trailing zero coefficient moves with it
  (``dr/dp_n = -1/p_(n-1)``), and so do the other roots; the gradient is now the implicit function
  theorem's for every coefficient (the record ``polyroots``).
* ROOTS_REPEATED_SILENT: at a repeated root a gradient reaching it is NaN, never a finite number
  (``sum(roots)`` and ``sum(roots**2) / 2`` send the same ``g`` there and have different gradients).
* POLY_MATRIX_DEFECTIVE: np.poly(A) is recorded on its own (``charpoly``: the adjugate's
  Faddeev-LeVerrier terms), smooth at a Jordan block.
* eig/eigvals at a defective A: NaN (reverse and forward), the eigenvectors' gradient refused.
* review30's surviving mutants ``poly_noreal`` and ``unwrap_ge``.

Oracles: the closed forms (implicit function theorem, Jacobi's formula), central differences
(tests/oracles.py) and jax 0.10 (x64) / torch 2.13, whose numbers are stored below with the
script that printed them named."""

import numpy as np
import pytest
from oracles import central, central_each

import autoprop as ap

P3 = np.array([1.0, -3.0, 2.0, 0.0])  # x (x - 1) (x - 2): roots 2, 1 and numpy's appended 0


def _f_exp(m, p):
    return m.sum(m.exp(m.real(m.roots(p))))


def _grad(f, x):
    t = ap.Variable(x)
    with ap.GradientTape() as tape:
        y = f(np, t)
    return tape.gradient(y, t).numpy()


def _jvp(f, x, u):
    t = ap.constant(x)
    with ap.ForwardAccumulator(t, ap.constant(u)) as acc:
        y = f(np, t)
    return acc.jvp(y).numpy()


def _implicit(p, g_of_r):
    """sum_i g(r_i) dr_i/dp_k with dr/dp_k = -r^(L-1-k) / p'(r) (the implicit function theorem), on numpy's roots."""
    r = np.roots(p)
    L = len(p)
    dp = np.polyval(np.polyder(p), r)
    return np.real(sum(-g_of_r(ri) * ri ** np.arange(L - 1, -1, -1) / d for ri, d in zip(r, dp)))


def test_trailing_zero_root_moves_with_the_last_coefficient():
    g = _grad(_f_exp, P3)
    # jax 0.10 x64, jnp.roots(p, strip_zeros=False) (the full companion matrix), printed by the session's script
    jax_ref = np.array([-26.83794257, -12.05983037, -4.67077427, -1.47624622])
    np.testing.assert_allclose(g, jax_ref, rtol=1e-8)
    np.testing.assert_allclose(g, _implicit(P3, np.exp), rtol=1e-12)
    np.testing.assert_allclose(g, central(lambda p: _f_exp(np, p), P3, h=1e-6), rtol=1e-7)
    assert abs(g[3] - (-0.5 - np.exp(2.0) / 2.0 + np.exp(1.0))) < 1e-12  # d/dp3 = -e^0/p2 - e^2/p'(2) - e/p'(1)
    # the values stay numpy's (its order, its exact 0)
    np.testing.assert_array_equal(np.roots(ap.constant(P3)).numpy(), np.roots(P3))


def test_trailing_zero_forward_mode_and_second_order():
    u = np.array([0.3, -0.7, 1.1, 0.9])
    want = float(central(lambda p: _f_exp(np, p), P3, h=1e-6) @ u)
    assert abs(float(_jvp(_f_exp, P3, u)) - want) < 1e-7 * (1 + abs(want))
    t = ap.Variable(P3)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = _f_exp(np, t)
        gy = inner.gradient(y, t)
    h = outer.jacobian(gy, t).numpy()
    # torch 2.13: torch.func.hessian of exp(eigvals(companion of the full p)).real.sum()
    torch_ref = np.array([[137.252870, 45.8659154, 13.5914091, 3.48407121],
                          [45.8659154, 13.5914091, 3.48407121, 0.765789386],
                          [13.5914091, 3.48407121, 0.765789386, 0.144771583],
                          [3.48407121, 0.765789386, 0.144771583, 0.0237537790]])
    np.testing.assert_allclose(h, torch_ref, rtol=1e-8)
    np.testing.assert_allclose(h, h.T, rtol=1e-12)
    fd = np.array([central(lambda p, i=i: _grad(_f_exp, p)[i], P3, h=1e-5) for i in range(4)])
    np.testing.assert_allclose(h, fd, rtol=1e-6)


def test_roots_of_a_complex_pair_and_a_leading_coefficient_match_the_implicit_function_theorem():
    p = np.array([2.0, -0.4, 2.1, 0.3, 1.7])  # two complex-conjugate pairs, p0 != 1

    def f(m, q):
        r = m.roots(q)
        return m.sum(m.real(r) ** 3 + m.imag(r) ** 2)

    g = _grad(f, p)
    np.testing.assert_allclose(g, central(lambda q: f(np, q), p, h=1e-6), rtol=1e-6)
    r = np.roots(p)  # g_i = 3 Re(r)^2 + (d/dr of Im(r)^2 in autoprop's convention: -2i Im r)
    np.testing.assert_allclose(g, _implicit(p, lambda ri: 3 * ri.real ** 2 - 2j * ri.imag), rtol=1e-10)
    assert len(r) == 4


@pytest.mark.parametrize("loss", ["sum", "sum_sq", "first"])
def test_a_gradient_reaching_a_double_root_is_nan_never_a_finite_number(loss):
    p = np.array([1.0, -2.0, 1.0])  # (x - 1)^2
    f = {"sum": lambda m, t: m.sum(m.real(m.roots(t))),
         "sum_sq": lambda m, t: m.sum(m.real(m.roots(t) ** 2)),
         "first": lambda m, t: m.real(m.roots(t)[0])}[loss]
    g = _grad(f, p)
    assert np.all(np.isnan(g)), g  # before: [-1.79, -0.79, 0.21] for the sum (exact [-2, -1, 0])
    assert np.all(np.isnan(_jvp(lambda m, t: m.real(m.roots(t)), p, np.array([0.0, 1.0, 0.0]))))


def test_a_simple_root_beside_a_double_one_keeps_its_gradient_and_close_roots_theirs():
    p = np.polymul([1.0, -2.0, 1.0], [1.0, -3.0])  # (x - 1)^2 (x - 3)

    def f(m, t):
        r = m.real(m.roots(t))
        return m.sum(m.where(r.numpy() > 2, r, 0.0))  # only the root 3 gets a gradient

    np.testing.assert_allclose(_grad(f, p), -(3.0 ** np.arange(3, -1, -1)) / 4.0, rtol=1e-12)  # p'(3) = 4
    q = np.polymul([1.0, -1.0], [1.0, -1.001])  # distinct at 1e-3: resolved, the implicit function's number
    g = _grad(lambda m, t: m.sum(m.real(m.roots(t)) ** 2), q)
    np.testing.assert_allclose(g, _implicit(q, lambda r: 2 * r), rtol=1e-9)
    np.testing.assert_allclose(g, [-2 * (q[1] ** 2) + 2 * q[2], 2 * q[1], -2.0], rtol=1e-9)  # (p1^2 - 2 p2), p0 = 1


JORDAN = np.array([[2.0, 1.0], [0.0, 2.0]])


@pytest.mark.parametrize(("name", "a"), [("jordan", JORDAN), ("diag_repeated", 2 * np.eye(2)),
                                         ("near_jordan", np.array([[2.0, 1.0], [1e-9, 2.0]])),
                                         ("generic", np.array([[0.9, 0.2, -0.3], [0.4, 1.7, 0.5], [-0.1, 0.6, 2.4]]))])
def test_poly_of_a_matrix_is_smooth_at_a_jordan_block(name, a):
    n = len(a)
    w = np.array([0.3, -1.1, 0.7, 2.0])[:n + 1]

    def f(m, t):
        return m.sum(m.real(m.poly(t)) * w)

    t = ap.Variable(a)
    with ap.GradientTape() as tape:
        c = np.poly(t)
        y = np.sum(np.real(c) * w)
    np.testing.assert_array_equal(c.numpy(), np.poly(a))  # numpy's values
    g = tape.gradient(y, t).numpy()
    if n == 2:  # c1 = -tr A, c2 = det A (Jacobi: d det = adj(A)^T)
        adj = np.array([[a[1, 1], -a[1, 0]], [-a[0, 1], a[0, 0]]])
        np.testing.assert_allclose(g, -w[1] * np.eye(2) + w[2] * adj, rtol=1e-12, atol=1e-15)
    else:  # jax 0.10 x64, jax.grad of the same loss (its eigvals path is right away from repeated eigenvalues)
        np.testing.assert_allclose(g, [[-3.59, 1.74, -0.75], [1.18, -0.85, 0.7], [-1.01, 0.79, 0.02]], atol=1e-12)
    np.testing.assert_allclose(g, central(lambda x: f(np, x), a, h=1e-6), rtol=1e-7, atol=1e-8)
    u = np.random.default_rng(3).standard_normal(a.shape)
    assert abs(float(_jvp(f, a, u)) - float(np.sum(g * u))) < 1e-12 * (1 + np.abs(g).sum())
    with ap.GradientTape() as outer:  # second order: d/dA of the gradient (a polynomial in A)
        x = ap.Variable(a)
        outer.watch(x)
        with ap.GradientTape() as inner:
            y = f(np, x)
        gy = inner.gradient(y, x)
    h = outer.jacobian(gy, x).numpy()
    fd = central_each(lambda x_: _grad(f, x_).ravel() @ u.ravel(), [a], h=1e-5)[0]
    np.testing.assert_allclose(np.tensordot(u, h, axes=2), fd, rtol=1e-7, atol=1e-8)


def test_eigvals_at_a_defective_matrix_is_nan_and_its_eigenvectors_refused():
    g = _grad(lambda m, t: m.sum(m.real(m.linalg.eigvals(t))), JORDAN)
    assert np.all(np.isnan(g)), g  # (torch and jax: I for the sum, but also I for sum(w**2)/4, whose is A^T/2)
    assert np.all(np.isnan(_jvp(lambda m, t: m.real(m.linalg.eigvals(t)), JORDAN, np.eye(2))))
    with pytest.raises(ValueError, match="defective"):
        _grad(lambda m, t: m.sum(m.real(m.linalg.eig(t)[1])), JORDAN)
    # the simple eigenvalue 5 beside an exactly defective block: V^-1 is lost (session 30: 0.0314 for 1/15; sessions
    # 31-32: NaN); since session 33 its left eigenvector comes from the bordered solve (linalg_eig._reduced), exact
    a = np.array([[2.0, 1, 0], [0, 2, 0], [0.3, 0.1, 5]])

    def big(m, t):
        w = m.real(m.linalg.eigvals(t))
        return m.sum(m.where(w.numpy() > 4, w, 0.0))

    y = np.array([0.1, 1 / 15, 1.0])  # A^T y = 5 y (y3 = 1), x = e3: d lambda/dA = y x^T / (y^T x)
    np.testing.assert_allclose(_grad(big, a), np.outer(y, [0, 0, 1.0]), rtol=1e-12, atol=1e-12)
    b = a + np.array([[0, 0, 0], [1e-6, 0, 0], [0, 0, 0]])  # split by 2e-3: resolved, the left eigenvector's
    np.testing.assert_allclose(_grad(big, b), np.outer(y, [0, 0, 1.0]), rtol=1e-6, atol=1e-12)
    # a diagonalizable repeated eigenvalue is still defined (as jax: V = I)
    np.testing.assert_allclose(_grad(lambda m, t: m.real(m.linalg.eigvals(t))[0], 2 * np.eye(2)),
                               [[1.0, 0.0], [0.0, 0.0]])


def test_poly_of_conjugate_pairs_is_real_and_of_other_roots_complex():  # review30's mutant poly_noreal
    z = np.array([1 + 1j, 1 - 1j, 2.0])
    a = np.poly(ap.constant(z))
    assert a.dtype == np.float64 and np.poly(z).dtype == np.float64
    np.testing.assert_array_equal(a.numpy(), np.poly(z))  # [1, -4, 6, -4]
    np.testing.assert_array_equal(a.numpy(), [1.0, -4.0, 6.0, -4.0])
    b = np.poly(ap.constant(np.array([1 + 1j, 2.0])))
    assert b.dtype == np.complex128
    np.testing.assert_array_equal(b.numpy(), np.poly(np.array([1 + 1j, 2.0])))


def test_unwrap_corrects_a_jump_of_exactly_discont():  # numpy: |dd| < discont is left alone; review30's unwrap_ge
    p = np.array([0.0, 4.0, 4.5])
    got, want = np.unwrap(ap.constant(p), discont=4.0).numpy(), np.unwrap(p, discont=4.0)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(want, [0.0, 4.0 - 2 * np.pi, 4.5 - 2 * np.pi], rtol=1e-15)
    np.testing.assert_array_equal(np.unwrap(ap.constant(p), discont=4.0 + 1e-12).numpy(), p)  # just above: none


def test_ediff1d_of_an_empty_array_is_its_ends_alone():  # review30 LOW: the docstring's shape said size - 1
    got = np.ediff1d(ap.constant(np.zeros(0)), to_begin=[1.0, 2.0], to_end=3.0)
    assert got.shape == (3,)  # len(to_begin) + max(0 - 1, 0) + len(to_end)
    np.testing.assert_array_equal(got.numpy(), np.ediff1d(np.zeros(0), to_begin=[1.0, 2.0], to_end=3.0))


def test_a_batch_of_eigvals_puts_nan_on_the_defective_matrix_only():
    good = np.array([[1.0, 2.0], [0.5, -1.0]])
    g = _grad(lambda m, t: m.sum(m.real(m.linalg.eigvals(t))), np.stack([good, JORDAN]))
    np.testing.assert_allclose(g[0], np.eye(2), rtol=1e-12, atol=1e-15)  # d trace = I
    assert np.all(np.isnan(g[1]))
