"""autoprop gaps left by session 25 (note25 "Left"; tester25a's JAX cases, review25a), closed in session 26:
logsumexp with signed weights and return_sign, tall qr(mode='complete'), pinv at a constant rank, zeta in x,
t.logcdf / t.logpdf at large df. Every expected number is a closed form, mpmath (40 digits) or central
differences of scipy's value; the engines the formulas were checked against (jax, torch) are named in each test.
"""

import numpy as np
import pytest
import scipy.special as ss
from oracles import central

import autoprop as ap
from autoprop.scipy import special as aps

RNG = np.random.default_rng(26)
A0 = RNG.normal(size=(3, 4))
B0 = np.array([[1.0], [-2.0], [0.5]]) * np.ones((3, 4))
B0[1, 2] = 0.0  # a zero weight: d/db there is e^a / S (jax's mask gives 0)


def _cd(f, x0):
    """The tests' one central-difference oracle (``oracles.central``) at this file's step, 1e-6."""
    return central(f, x0, h=1e-6)


@pytest.mark.parametrize("axis", [0, None, (0, 1)])
def test_logsumexp_with_signed_weights_returns_scipys_value_and_sign_and_differentiates_both(axis):
    """tester25a's "logsumexp return_sign" (TypeError before): log|S|, S = sum(b e^a), and sign(S) as scipy's;
    d/da = b e^a / S, d/db = e^a / S in closed form, and central differences of scipy's value. Checked in
    session 26 against jax.grad (a: 9e-16; b: equal except at b = 0, where jax gives 0) and torch (2e-15)."""
    a, b = ap.Variable(A0), ap.Variable(B0)
    with ap.GradientTape(persistent=True) as tape:
        out, sign = aps.logsumexp(a, axis=axis, b=b, return_sign=True)
        y = np.sum(out * np.cos(np.arange(out.size)).reshape(out.shape))
    want_out, want_sign = ss.logsumexp(A0, axis=axis, b=B0, return_sign=True)
    np.testing.assert_array_equal(out.numpy(), want_out)
    np.testing.assert_array_equal(sign.numpy(), want_sign)
    w = np.cos(np.arange(np.size(want_out))).reshape(np.shape(want_out))
    s = np.sum(B0 * np.exp(A0), axis=axis, keepdims=True)
    wk = w if axis is None or axis == (0, 1) else np.expand_dims(w, axis)
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), wk * B0 * np.exp(A0) / s, rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(y, b).numpy(), wk * np.exp(A0) / s, rtol=1e-12)
    f = lambda av, bv: np.sum(ss.logsumexp(av, axis=axis, b=bv, return_sign=True)[0] * w)  # noqa: E731
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), _cd(lambda v: f(v, B0), A0), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(tape.gradient(y, b).numpy(), _cd(lambda v: f(A0, v), B0), rtol=1e-7, atol=1e-9)
    assert tape.gradient(sign, a) is None  # the sign is piecewise constant


def test_logsumexp_b_second_order_and_forward_mode():
    """d/db_j of <d/da, V> = V_j e^(a_j) / S - e^(a_j) / S^2 sum_i V_i b_i e^(a_i) (the closed form differentiated;
    jax's nested grad agrees to 5e-15), and the JVP along (ta, tb) = sum((ta b + tb) e^a) / S (jax.jvp: 1e-14)."""
    a0, b0, v = A0[:, 0], B0[:, 0], np.array([0.3, -1.1, 0.7])
    a, b = ap.Variable(a0), ap.Variable(b0)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = aps.logsumexp(a, b=b, return_sign=True)[0]
        z = np.sum(inner.gradient(y, a) * v)
    s, e = np.sum(b0 * np.exp(a0)), np.exp(a0)
    np.testing.assert_allclose(outer.gradient(z, b).numpy(), v * e / s - e / s ** 2 * np.sum(v * b0 * e), rtol=1e-12)
    ta, tb = np.array([0.2, 0.5, -0.4]), np.array([1.0, -0.3, 0.25])
    with ap.ForwardAccumulator([a, b], [ta, tb]) as acc:
        y = aps.logsumexp(a, b=b, return_sign=True)[0]
    np.testing.assert_allclose(float(acc.jvp(y).numpy()), np.sum((ta * b0 + tb) * e) / s, rtol=1e-12)


@pytest.mark.parametrize("b1", [1.0, -1.0])
def test_logsumexp_b_zero_weight_on_a_huge_input_gets_0_not_nan(b1):
    """d/da_i = sign(S) b_i exp(a_i - log|S|) at a = [1000, 0], b = [0, +-1]: S = +-1, so exp(1000 - 0) overflows and
    0 * inf would be NaN; the weight's 0 wins: [0, 1], in both modes (review27a's surviving mutant lse_b0_mask_off,
    the b == 0 mask switched off, passed every test)."""
    a, b = ap.Variable(np.array([1000.0, 0.0])), ap.Variable(np.array([0.0, b1]))
    with ap.GradientTape() as tape:
        y = aps.logsumexp(a, b=b, return_sign=True)[0]
    assert float(y.numpy()) == 0.0
    np.testing.assert_array_equal(tape.gradient(y, a).numpy(), [0.0, 1.0])
    with ap.ForwardAccumulator(a, ap.constant(np.array([1.0, 0.5]))) as acc:
        y = aps.logsumexp(a, b=b, return_sign=True)[0]
    assert float(acc.jvp(y).numpy()) == 0.5


def test_logsumexp_b_without_return_sign_is_nan_where_the_sum_is_negative_as_scipy():
    """scipy's logsumexp(a, b) is log of a negative sum, NaN, there (jax too); elsewhere log S and its gradient.
    Positive weights keep session 25's values (a + log b then logsumexp: equal to rounding)."""
    a = ap.Variable(A0)
    with ap.GradientTape() as tape:
        y = aps.logsumexp(a, axis=0, b=B0)
        loss = np.sum(np.where(np.isnan(y.numpy()), 0.0, y))
    with np.errstate(invalid="ignore"):
        want = ss.logsumexp(A0, axis=0, b=B0)
    np.testing.assert_array_equal(y.numpy(), want)
    ok = ~np.isnan(want)
    s = np.sum(B0 * np.exp(A0), axis=0)
    np.testing.assert_allclose(tape.gradient(loss, a).numpy()[:, ok], (B0 * np.exp(A0) / s)[:, ok], rtol=1e-12)
    bp = np.abs(B0) + 0.5
    with ap.GradientTape() as tape:
        y = aps.logsumexp(a, axis=1, b=bp)
    np.testing.assert_allclose(y.numpy(), ss.logsumexp(A0, axis=1, b=bp), rtol=1e-15)
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), bp * np.exp(A0) / np.sum(bp * np.exp(A0), 1, keepdims=True),
                               rtol=1e-13)


# d/dx zeta(x, q) and d2/dx2 at 40 digits: mpmath's Euler-Maclaurin (400 terms summed, 15 Bernoulli corrections)
# differentiated by mp.diff (mpmath's own zeta(x, q, derivative=k) is off in the 11th digit at x = 30, q = 100)
ZETA_X = [  # (x, q, d1, d2)
    (1.5, 0.5, -2.0682093782329916, None),
    (3.0, 0.001, 6907755278.7831382, 47717082994.545269),
    (30.0, 10.0, -2.4515778883426859e-30, 5.6602732787981655e-30),
    (60.0, 100.0, -1.0364688494477336e-119, 4.7860654862505434e-119),
]


@pytest.mark.parametrize("x0,q0,d1,d2", ZETA_X)
def test_zeta_is_differentiable_in_x_to_second_order(x0, q0, d1, d2):
    """tester25a's "zeta in x" (refused before): d/dx zeta(x, q) = -sum_k log(k + q) (k + q)^-x and its second
    derivative, by Euler-Maclaurin; against the 40-digit values above to 2e-14 (exp(-x log a)'s own rounding at
    x = 60). jax.grad agreed to 1.6e-15 (first), 1.9e-15 (second and mixed) at five points in session 26."""
    x = ap.Variable(x0)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = ss.zeta(x, q0)  # scipy's own name on a Tensor
        g = inner.gradient(y, x)
    assert float(y.numpy()) == ss.zeta(x0, q0)
    assert float(g.numpy()) == pytest.approx(d1, rel=3e-14, abs=0)
    if d2 is not None:
        assert float(outer.gradient(g, x).numpy()) == pytest.approx(d2, rel=3e-14, abs=0)


def test_zeta_mixed_derivatives_riemann_and_the_refusals():
    """d2/dx dq = d/dx (-x zeta(x + 1, q)) = -zeta(x + 1, q) - x zeta_x(x + 1, q) (recorded: zeta, zeta_dx); central
    differences of scipy's zeta for the first derivatives; Riemann's zeta(x) as zeta(x, 1) for x > 1, refused at
    x <= 1 (scipy's continuation); the third derivative in x refused by name."""
    from autoprop.core.prims.extra import zeta_x_derivative

    x0, q0 = np.array([1.5, 2.0, 3.7]), np.array([0.3, 1.0, 2.5])
    x, q = ap.Variable(x0), ap.Variable(q0)
    with ap.GradientTape(persistent=True) as outer:
        with ap.GradientTape(persistent=True) as inner:
            y = np.sum(aps.zeta(x, q))
        gx, gq = inner.gradient(y, x), inner.gradient(y, q)
        sx = np.sum(gx)
    h = 1e-6
    np.testing.assert_allclose(gx.numpy(), (ss.zeta(x0 + h, q0) - ss.zeta(x0 - h, q0)) / (2 * h), rtol=1e-8)
    np.testing.assert_allclose(gq.numpy(), (ss.zeta(x0, q0 + h) - ss.zeta(x0, q0 - h)) / (2 * h), rtol=1e-8)
    np.testing.assert_allclose(outer.gradient(sx, q).numpy(),
                               -ss.zeta(x0 + 1, q0) - x0 * zeta_x_derivative(x0 + 1, q0), rtol=1e-13)
    with ap.GradientTape() as tape:
        r = np.sum(ss.zeta(x))
    assert float(r.numpy()) == np.sum(ss.zeta(x0))  # (scipy's Riemann values, not zeta(x, 1)'s)
    with ap.GradientTape():
        z = ss.zeta(ap.Variable(np.linspace(1.001, 60, 1001)))
    np.testing.assert_array_equal(z.numpy(), ss.zeta(np.linspace(1.001, 60, 1001)))
    np.testing.assert_allclose(tape.gradient(r, x).numpy(), zeta_x_derivative(x0, 1.0), rtol=1e-15)
    assert zeta_x_derivative(2.0, 1.0) == pytest.approx(-0.93754825431584375370, rel=1e-15, abs=0)  # zeta'(2), DLMF 25.6.11
    with ap.GradientTape(), pytest.raises(TypeError, match=r"at or below 1"):
        ss.zeta(x - 1.0)
    v = ap.Variable(3.0)
    with ap.GradientTape() as t3:
        with ap.GradientTape() as t2:
            with ap.GradientTape() as t1:
                y = aps.zeta(v, 2.0)
            g1 = t1.gradient(y, v)
        g2 = t2.gradient(g1, v)
    with pytest.raises(TypeError, match="third derivative of scipy.special.zeta") as err:
        t3.gradient(g2, v)
    # the advice is gammainc's (review27a): stop_gradient(x) would cut x on every tape, the first two derivatives too
    assert "ask that tape for q only (tape.gradient(d2, q))" in str(err.value)
    assert "stop_gradient" not in str(err.value)


# d/dq of zeta's second x-derivative, -2 zeta_x(x + 1, q) - x zeta_xx(x + 1, q): mpmath (60 digits), as
# mp.diff(lambda q: mp.zeta(x, q, 2), q), which agrees with that formula to every digit shown
ZETA_XXQ = [(3.0, 2.0, -0.057351952311391226), (1.5, 0.3, -92.888110903728154), (2.5, 1.5, 0.0084183853416986244)]


@pytest.mark.parametrize("x0,q0,want", ZETA_XXQ)
def test_zeta_mixed_third_derivative_xxq_is_mpmath_s(x0, q0, want):
    # review27a's surviving mutant zeta_dq_sign (-1 zeta_x for -2 zeta_x: -0.126 at (3, 2)) passed every test
    x, q = ap.Variable(x0), ap.Variable(q0)
    with ap.GradientTape() as t3:
        with ap.GradientTape() as t2:
            with ap.GradientTape() as t1:
                y = aps.zeta(x, q)
            g1 = t1.gradient(y, x)
        g2 = t2.gradient(g1, x)
    assert float(t3.gradient(g2, q).numpy()) == pytest.approx(want, rel=1e-13, abs=0)
    with ap.ForwardAccumulator(q, ap.constant(1.0)) as acc:  # forward mode over the two tapes
        with ap.GradientTape() as t2:
            with ap.GradientTape() as t1:
                y = aps.zeta(x, q)
            g1 = t1.gradient(y, x)
        g2 = t2.gradient(g1, x)
    assert float(acc.jvp(g2).numpy()) == pytest.approx(want, rel=1e-13, abs=0)


def _cd_matrix(f, a0, h=1e-6):
    """Central differences of the real scalar ``f`` at a real or complex matrix ``a0`` (autoprop's convention for a
    complex input: d/dRe + i d/dIm)."""
    g = _cd(lambda v: f(v.astype(a0.dtype) if not np.iscomplexobj(a0) else v + 1j * a0.imag), a0.real.copy())
    if np.iscomplexobj(a0):
        g = g + 1j * _cd(lambda v: f(a0.real + 1j * v), a0.imag.copy())
    return g


@pytest.mark.parametrize("m,n,cplx", [(4, 3, False), (5, 2, False), (2, 1, False), (6, 4, True)])
def test_qr_complete_of_a_tall_matrix_differentiates_numpys_q_and_r(m, n, cplx):
    """tester25a's "qr complete" (TypeError before): R = [R1; 0] and all of numpy's Q, whose last m - n columns
    are LAPACK's Householder completion, a definite smooth function of A (recorded from the reduced Q:
    _linalg_helpers.qr_complete). Values bit-equal to numpy's; the gradient of a loss on every entry of Q and R
    against central differences of np.linalg.qr itself. jax.grad (arXiv 2409.13374) agreed to 9e-16 and jax.jvp
    to 2e-15 at these shapes in session 26."""
    rng = np.random.default_rng(m * 10 + n)
    a0 = rng.normal(size=(m, n)) + (1j * rng.normal(size=(m, n)) if cplx else 0)
    wq, wr = rng.normal(size=(m, m)), rng.normal(size=(m, n))

    def loss(qr):
        return np.sum(np.real(qr[0]) * wq) + np.sum(np.real(qr[1]) * wr)

    a = ap.Variable(a0)
    with ap.GradientTape() as tape:
        q, r = np.linalg.qr(a, mode="complete")
        y = loss((q, r))
    qn, rn = np.linalg.qr(a0, mode="complete")
    np.testing.assert_array_equal(q.numpy(), qn)
    np.testing.assert_array_equal(r.numpy(), rn)
    want = _cd_matrix(lambda v: loss(np.linalg.qr(v, mode="complete")), a0)
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), want, rtol=1e-7, atol=1e-8)
    t = rng.normal(size=(m, n))
    with ap.ForwardAccumulator(a, t.astype(a0.dtype)) as acc:
        q, r = np.linalg.qr(a, mode="complete")
        y = loss((q, r))
    h = 1e-6
    jv = (loss(np.linalg.qr(a0 + h * t, mode="complete")) - loss(np.linalg.qr(a0 - h * t, mode="complete"))) / (2 * h)
    assert float(np.real(acc.jvp(y).numpy())) == pytest.approx(jv, rel=1e-7, abs=0)


def test_qr_complete_where_lapack_skipped_a_reflection_refuses_only_the_extra_columns():
    """A first column already zero below its diagonal: LAPACK skips that reflection (tau = 0) and numpy's
    completion of Q jumps under a perturbation: a gradient reaching Q's last m - n columns raises ValueError by
    name; R and Q's first n columns keep the reduced record's derivative (the same numbers as mode='reduced')."""
    a0 = np.array([[1.0, 2.0], [0.0, 3.0], [0.0, 0.0], [0.0, 1.0]])
    a = ap.Variable(a0)
    w = np.arange(8.0).reshape(4, 2)
    with ap.GradientTape(persistent=True) as tape:
        q, r = np.linalg.qr(a, mode="complete")
        q1, r1 = np.linalg.qr(a)
        y_r, y_q1, y_q = np.sum(r[:2] * w[:2]) + np.sum(q[:, :2] * w), np.sum(r1 * w[:2]) + np.sum(q1 * w), np.sum(q)
    np.testing.assert_array_equal(q.numpy(), np.linalg.qr(a0, mode="complete")[0])
    np.testing.assert_array_equal(tape.gradient(y_r, a).numpy(), tape.gradient(y_q1, a).numpy())
    with pytest.raises(ValueError, match="skipped a Householder reflection"):
        tape.gradient(y_q, a)


def test_pinv_along_a_path_of_constant_rank_is_differentiable():
    """tester25a's "pinv #2792 rank-deficient" (JAX's issue 2792; refused before): A(p) = [[0, 0], [-p, 1]] /
    (1 + p^2) has rank 1 for every p, so A^+ is differentiable in p (Golub & Pereyra 1973, Theorem 4.3): d/dp of
    sum(A^+ * W) = -2 at p = 2 (jax.grad: -1.9999999999999993), reverse and forward mode, and central differences.
    autograd's pinv(x^T x) of a (2, 4) x (rank 2 of 4): torch and jax agreed to 2e-14 in session 26."""
    w = np.array([[1.0, 2.0], [3.0, 4.0]])

    def a_of(p):
        return np.stack([np.stack([p * 0, p * 0]), np.stack([-p, p * 0 + 1.0])]) / (1 + p ** 2)

    p = ap.Variable(2.0)
    with ap.GradientTape() as tape:
        y = np.sum(np.linalg.pinv(a_of(p)) * w)
    with ap.ForwardAccumulator(p, 1.0) as acc:
        yf = np.sum(np.linalg.pinv(a_of(p)) * w)
    h = 1e-6
    want = (np.sum(np.linalg.pinv(a_of(2.0 + h)) * w) - np.sum(np.linalg.pinv(a_of(2.0 - h)) * w)) / (2 * h)
    assert want == pytest.approx(-2.0, rel=1e-8, abs=0)
    assert float(tape.gradient(y, p).numpy()) == pytest.approx(-2.0, rel=1e-14, abs=0)
    assert float(acc.jvp(yf).numpy()) == pytest.approx(-2.0, rel=1e-14, abs=0)
    x0 = RNG.normal(size=(2, 4))
    wx = RNG.normal(size=(4, 4))
    x = ap.Variable(x0)
    with ap.GradientTape() as tape:
        y = np.sum(np.linalg.pinv(x.T @ x) * wx)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), _cd(lambda v: np.sum(np.linalg.pinv(v.T @ v) * wx), x0),
                               rtol=1e-6, atol=1e-7)


def test_pinv_refuses_a_tangent_that_changes_the_rank():
    """At a rank-deficient A, a direction with a part in both null spaces (U_perp^T dA V_perp != 0) raises the rank
    and A^+ jumps (central differences grow as 1/h): forward mode refuses it by name; a rank-keeping tangent of the
    same A gets central differences' value."""
    u, v = np.array([1.0, 2.0, 0.5]), np.array([1.0, -1.0, 2.0, 0.5])
    a = ap.Variable(np.outer(u, v))
    with pytest.raises(ValueError, match=r"rank 1 < min\(m, n\) = 3.*changes the rank"), \
            ap.ForwardAccumulator(a, np.ones((3, 4))):
        np.linalg.pinv(a)
    du, dv = np.array([0.3, -0.2, 1.0]), np.array([0.1, 0.5, -0.3, 0.2])
    with ap.ForwardAccumulator(a, np.outer(du, v) + np.outer(u, dv)) as acc:
        x = np.linalg.pinv(a)
    h = 1e-6
    want = (np.linalg.pinv(np.outer(u + h * du, v + h * dv)) - np.linalg.pinv(np.outer(u - h * du, v - h * dv))) / (2 * h)
    np.testing.assert_allclose(acc.jvp(x).numpy(), want, rtol=1e-7, atol=1e-9)


# t.logpdf(1.5, df) in df at 50 digits (mpmath: loggamma's and log1p, differentiated by mp.diff)
T_DF = [("1e12", 1.09375000001265625e-25, -2.1875000000379644411e-37),
        ("1e8", 1.0937501265624959595e-17, -2.1875003796874838379e-25),
        ("3e4", 1.2157464778989425586e-10, -8.1065386868147758125e-15)]


@pytest.mark.parametrize("df0,d1,d2", T_DF)
def test_t_logpdf_df_derivatives_keep_their_digits_at_a_large_df(df0, d1, d2):
    """review25a: d/d(df) of t.logpdf at df = 1e12 was off by 7.4e-4 relative (the log1p kernel's two terms of
    size z^2/(2 df) cancel to O(1/df^2)), the second derivative by 1e-5: the kernel is now -z^2/2 - z^2/(2 df) +
    (df + 1)/2 (u - log1p(u)), u = z^2/df, with u - log1p(u) as its series (scipy.stats' t uses the log1p form).
    Against mpmath to 1e-13 relative (1.7e-15 at df = 1e12)."""
    from autoprop.scipy import stats

    df = ap.Variable(float(df0))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = stats.t.logpdf(1.5, df)
        g = inner.gradient(y, df)
    assert float(g.numpy()) == pytest.approx(d1, rel=1e-13, abs=0)
    assert float(outer.gradient(g, df).numpy()) == pytest.approx(d2, rel=1e-13, abs=0)
    import scipy.stats as sst
    assert float(y.numpy()) == pytest.approx(sst.t.logpdf(1.5, float(df0)), rel=1e-15)


# log stdtr(df, x) and its slope at 60 digits (mpmath's betainc through w = df / (df + x^2))
T_TAIL = [(1e16, -40.0, -804.60844201368970819, 40.024968847200859723),
          (1e12, -40.0, -804.60844137295403761, 40.024968783167263888),
          (1e10, -38.0, -726.55716381825001579, 38.026273975576669098),
          (1e6, -40.0, -803.96832475034200031, 39.961031147588633149)]


# below df = 1e5 the tail is the continued fraction, its constant -log(a) - betaln(a, 1/2) from t_log_norm's series
# (scipy's betaln(df/2, 1/2) cancels: 6.3e-14 off at df = 99999; review27a's surviving mutant betainc_tail_betaln
# restored it, as the tests probed only df >= 1e5). mpmath, 60 digits, as T_TAIL
T_TAIL_CF = [(99999.0, -38.5, -740.24887967042312182, 37.963223078578909338),
             (1e4, -100.0, -3470.913562883671597, 50.004998001398541979),
             (2000.0, -60.0, -1034.1182928762434159, 21.43451457230739272)]


@pytest.mark.parametrize("df0,x0,value,slope", T_TAIL_CF)
def test_t_logcdf_far_tail_below_df_1e5_keeps_its_constant_s_digits(df0, x0, value, slope):
    from autoprop.scipy import stats

    x = ap.Variable(x0)
    with ap.GradientTape() as tape:
        y = stats.t.logcdf(x, df0)
    assert float(y.numpy()) == pytest.approx(value, rel=1e-15, abs=0)  # (the betaln form: 6.3e-14 at 99999)
    assert float(tape.gradient(y, x).numpy()) == pytest.approx(slope, rel=1e-12, abs=0)


@pytest.mark.parametrize("df0,x0,value,slope", T_TAIL)
def test_t_logcdf_far_tail_at_a_large_df(df0, x0, value, slope):
    """review25a: t.logcdf at df = 1e16, x = -40 was 8.2e-7 off (the continued fraction needs O(sqrt(df)) terms
    there), its slope 6.6e-4; 2.6e-13 at df = 1e6 (scipy's betaln(df/2, 1/2) cancels). For df >= 1e5 the tail is
    now f(x) times the Mills-ratio integral by Gauss-Laguerre quadrature; below it the fraction's constant comes
    from t_log_norm's series. Against mpmath: 1e-15 relative, the slope (pdf / cdf) 1e-13."""
    from autoprop.scipy import stats

    x = ap.Variable(x0)
    with ap.GradientTape() as tape:
        y = stats.t.logcdf(x, df0)
    assert float(y.numpy()) == pytest.approx(value, rel=1e-15, abs=0)
    assert float(tape.gradient(y, x).numpy()) == pytest.approx(slope, rel=1e-13, abs=0)
