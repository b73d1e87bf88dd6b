"""Session 26's autoprop diff as review27a read it (fixed by fixa27): lstsq's rcond <= 0 or >= 1 (LAPACK's
2^-53), qr(mode='complete')'s guard per matrix of a batch, slogdet's forward mode at a singular matrix
whose tangent is 0, zeta's third-derivative advice. (i0e/i1e at large |x|: test_autoprop_special_s25.py.)"""

import numpy as np
import pytest
from oracles import central

import autoprop as ap

R = np.random.default_rng(27)


# --- lstsq: numpy hands rcond to LAPACK's gelsd, whose DLALSD takes rcond <= 0 or >= 1 as 2^-53 -------------
def _diag_system(small):
    """A 4x3 A with singular values 1, 0.5, ``small`` exactly (a diagonal: LAPACK's SVD is exact), and b."""
    a = np.zeros((4, 3))
    a[0, 0], a[1, 1], a[2, 2] = 1.0, 0.5, small
    return a, np.array([1.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize("rcond", [-1, -1e-300, 0.0, 1.0, 2.0, np.inf, -np.inf])
@pytest.mark.parametrize("small", [1e-17, 1e-15])
def test_lstsq_rcond_outside_0_1_is_lapack_s_machine_precision(rcond, small):
    # 2^-53 = 1.1e-16: 1e-17 is cut (x_3 = 0, rank 2), 1e-15 kept (x_3 = 3e15, rank 3), as numpy's. Before
    # (review27a): rcond = -1 and 0 kept 1e-17 (x_3 = 3e17), 1 and 2 cut every value (x = 0)
    a, b = _diag_system(small)
    want = np.linalg.lstsq(a, b, rcond=rcond)
    x, res, rank, s = np.linalg.lstsq(ap.Variable(a), ap.Variable(b), rcond=rcond)
    assert rank == want[2] == (2 if small < 1e-16 else 3)
    np.testing.assert_allclose(x.numpy(), [1.0, 4.0, 0.0 if small < 1e-16 else 3.0 / small], rtol=1e-15)
    np.testing.assert_allclose(x.numpy(), want[0], rtol=1e-15)
    np.testing.assert_array_equal(s.numpy(), want[3])
    np.testing.assert_allclose(res.numpy(), want[1], rtol=1e-12)  # (rank 3 < m = 4: 4^2 = 16; rank 2: empty)
    assert res.shape == want[1].shape


def test_lstsq_rcond_none_and_positive_at_review27a_s_matrix_are_numpy_s():
    """review27a's rank-2 4x3 A (singular values 1.94, 0.19 and 2.1e-16: 1.07e-16 relative, cut by the default
    4 eps = 8.9e-16 and by 1e-10; at rcond=-1 too, by 2^-53 = 1.11e-16 (x ~ 1e16 before), but so near that
    cut-off that another LAPACK's rounding may keep it: the diagonal systems above test rcond=-1)."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 2)) @ rng.normal(size=(2, 3))
    a = np.vstack([a, 2 * a[:1]])
    b = rng.normal(size=4)
    for rcond in (None, 1e-10):
        x = np.linalg.lstsq(ap.Variable(a), ap.Variable(b), rcond=rcond)[0].numpy()
        np.testing.assert_allclose(x, [-0.25960544, 0.11270681, -0.51334783], rtol=1e-7)
        np.testing.assert_allclose(x, np.linalg.lstsq(a, b, rcond=None)[0], rtol=1e-10)


def test_lstsq_rcond_minus_one_gradient_is_central_differences_along_a_rank_2_path():
    # A = [B C; 0] (4x3, rank 2 for every B, C: its two zero rows stay zero, its third singular value exactly 0,
    # cut by 2^-53 on every perturbed copy, so numpy's rank stays 2 and central differences see the derivative)
    b2, c, b = R.standard_normal((2, 2)), R.standard_normal((2, 3)), R.standard_normal(4)
    w = R.standard_normal(3)

    def build(bm, cm):
        return np.concatenate([bm @ cm, np.zeros((2, 3))], axis=0)

    def f(bm, cm, bv):
        return float(np.linalg.lstsq(build(bm, cm), bv, rcond=-1)[0] @ w)
    vs = [ap.Variable(v) for v in (b2, c, b)]
    with ap.GradientTape() as tape:
        x, _, rank, _ = np.linalg.lstsq(build(vs[0], vs[1]), vs[2], rcond=-1)
        loss = np.sum(x * w)
    assert rank == 2
    assert float(loss.numpy()) == pytest.approx(f(b2, c, b), rel=1e-13)
    got = [g.numpy() for g in tape.gradient(loss, vs)]
    want = [central(lambda v: f(v, c, b), b2, h=1e-6), central(lambda v: f(b2, v, b), c, h=1e-6),
            central(lambda v: f(b2, c, v), b, h=1e-6)]
    for g, cd in zip(got, want):
        np.testing.assert_allclose(g, cd, rtol=1e-6, atol=1e-8)


def test_lstsq_rcond_nan_is_refused_by_name():
    a, b = _diag_system(1e-17)
    with pytest.raises(ValueError, match=r"numpy.linalg.lstsq: rcond is nan"):
        np.linalg.lstsq(ap.Variable(a), b, rcond=np.nan)


# --- qr(mode='complete'): the guard of a skipped reflection is per matrix of a batch --------------------------
def _complete_q_grad(a0, w, pick):
    """The gradient of sum(w * Q[pick][..., :, n:]) for Q of qr(a0, mode='complete'), and Q's value."""
    a = ap.Variable(a0)
    with ap.GradientTape() as tape:
        q = np.linalg.qr(a, mode="complete")[0]
        loss = np.sum(q[pick][..., :, a0.shape[-1]:] * w)
    return tape.gradient(loss, a).numpy(), q.numpy()


def test_qr_complete_batch_guards_only_the_matrix_with_a_skipped_reflection():
    # eye(3, 2) and an upper triangular A: LAPACK skips both reflections (tau = 0), [[0, 0], [0, 1], [1, 0]] the
    # second: their Q's third column jumps under a perturbation (guarded). Before (review27a) the whole batch's
    # third columns came from the guard: ValueError for the ordinary matrix too
    b = R.standard_normal((3, 2))
    a0 = np.stack([np.eye(3, 2), b, np.eye(3, 2)[::-1].copy(), np.array([[2.0, 1.0], [0.0, 3.0], [0.0, 0.0]])])
    w = R.standard_normal((3, 1))
    g, q = _complete_q_grad(a0, w, 1)
    np.testing.assert_array_equal(q, np.linalg.qr(a0, mode="complete")[0])
    g_alone = _complete_q_grad(b, w, Ellipsis)[0]
    np.testing.assert_allclose(g[1], g_alone, rtol=1e-13, atol=1e-15)
    assert not g[[0, 2, 3]].any()
    # central differences of numpy's third column of the ordinary matrix
    cd = central(lambda v: float(np.sum(np.linalg.qr(v, mode="complete")[0][:, 2:] * w)), b, h=1e-6)
    np.testing.assert_allclose(g[1], cd, rtol=1e-6, atol=1e-8)
    for pick in (0, 2, 3):  # a gradient reaching a skipped matrix's columns is still refused
        with pytest.raises(ValueError, match=r"skipped a Householder reflection"):
            _complete_q_grad(a0, w, pick)
    # forward mode: the ordinary matrix's tangent is its own; the skipped one's third column NaN ("undefined")
    t = R.standard_normal(a0.shape)
    x = ap.Variable(a0)
    with ap.ForwardAccumulator(x, ap.constant(t)) as acc:
        qq = np.linalg.qr(x, mode="complete")[0]
    jv = acc.jvp(qq).numpy()
    xb = ap.Variable(b)
    with ap.ForwardAccumulator(xb, ap.constant(t[1])) as acc1:
        q1 = np.linalg.qr(xb, mode="complete")[0]
    np.testing.assert_allclose(jv[1], acc1.jvp(q1).numpy(), rtol=1e-13, atol=1e-15)
    assert np.isnan(jv[[0, 2, 3]][..., 2:]).all() and np.isfinite(jv[..., :2]).all()


# --- slogdet forward mode at a singular matrix whose tangent is 0 -------------------------------------------
def test_slogdet_forward_mode_gives_0_to_a_singular_matrix_standing_still():
    # review27a: the batch was refused; right: [0, tr(A1^-1 T1)] = [0, (3 - 1 - 1 + 2) / 5] = [0, 0.6], as reverse
    # mode gives 0 to a singular matrix whose cotangent is 0 (session 26's rule)
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]])
    t = np.zeros_like(a)
    t[1] = 1.0
    x = ap.Variable(a)
    with ap.ForwardAccumulator(x, ap.constant(t)) as acc:
        sign, logdet = np.linalg.slogdet(x)
    np.testing.assert_allclose(acc.jvp(logdet).numpy(), [0.0, 0.6], rtol=1e-15, atol=0)
    np.testing.assert_array_equal(acc.jvp(sign).numpy(), [0.0, 0.0])
    with ap.GradientTape() as tape:  # reverse mode, the same figure: <dlogdet[1]/dA, T>
        loss = np.linalg.slogdet(x)[1][1]
    assert float(np.sum(tape.gradient(loss, x).numpy() * t)) == pytest.approx(0.6, rel=1e-15)
    t[0, 0, 0] = 1e-300  # a tangent that moves the singular matrix: still refused, by batch index
    with pytest.raises(ValueError, match=r"batch index \(0,\)"):
        with ap.ForwardAccumulator(x, ap.constant(t)) as acc:
            np.linalg.slogdet(x)
