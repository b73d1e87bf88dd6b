"""The log-sum-exp family at |x| > ~1e16 and the running logsumexp (session 26's note, "Left").

Where a float's spacing exceeds log 2, y = log(sum exp(x)) rounds to max(x), and a share computed as
exp(x_i - y) loses the log of the count: logaddexp(1e20, 1e20)'s gradient came out [1, 1] (right: 1/2
each). The shares are now formed from the inputs (sigmoid(a - b); exp(x - m) / sum(exp(x - m)), m a max).
``np.logaddexp.accumulate`` is recorded (session 26's record was linear in g only away from g = 0 and was
reverted). The same kind elsewhere (a ratio as exp of a difference of two large rounded logs, or a derivative
whose two terms cancel): log_ndtr's slope, t.logcdf's slope in the lower tail, erfcx's derivative for large x.
Expected numbers are closed forms (the softmax of a tie is 1/n), the dense Jacobian of the
definition at moderate x, and central differences; engines checked against, in the peers venv: torch
(logaddexp, logaddexp2: 1/2 at 1e20; logsumexp, logcumsumexp: 1 each, wrong), jax (logsumexp 1/2;
logaddexp 1, wrong; cumlogsumexp [2, 1, 1], wrong), HIPS autograd (1 each, wrong).
"""

import numpy as np
import pytest
from oracles import central

import autoprop as ap
from autoprop.core import registry as R
from autoprop.scipy import special as aps

LN2 = np.log(2.0)
PAIRS = {"logaddexp": (np.logaddexp, np.exp, 1.0), "logaddexp2": (np.logaddexp2, np.exp2, LN2)}


def _pair_derivatives(f, a0, b0, ta=1.0, tb=0.0):
    """Gradient, JVP along (ta, tb), and the Hessian's first row (d/da, d/db of df/da) of f(a, b)."""
    a, b = ap.Variable(np.float64(a0)), ap.Variable(np.float64(b0))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = f(a, b)
        ga, gb = inner.gradient(y, [a, b])
    haa, hab = outer.gradient(ga, [a, b])
    with ap.ForwardAccumulator([a, b], [np.float64(ta), np.float64(tb)]) as acc:
        yf = f(a, b)
    return [float(ga), float(gb)], float(acc.jvp(yf)), [float(haa), float(hab)]


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("a0, b0, share", [
    (1e20, 1e20, 0.5), (1e300, 1e300, 0.5), (-1e300, -1e300, 0.5), (-1e20, -1e20, 0.5),
    (1e20, -1e20, 1.0), (1e308, -1e308, 1.0), (-np.inf, 1e20, 0.0), (1e300, -np.inf, 1.0)])
def test_logaddexp_pair_shares_are_exact_at_any_magnitude(name, a0, b0, share):
    """d/da = sigmoid(a - b) (logaddexp2: 1 / (1 + 2^(b - a))), 1/2 at a tie of any size; the second
    derivative c s (1 - s) (c = 1, ln 2): c/4 at a tie; the JVP along (1, 0) is the share."""
    f, _, c = PAIRS[name]
    g, jvp, h = _pair_derivatives(f, a0, b0)
    assert g == [share, 1.0 - share] and jvp == share
    np.testing.assert_allclose(h, [c * share * (1 - share), -c * share * (1 - share)], rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_logaddexp_pair_shares_at_1e16_are_those_of_the_offsets(name):
    """At 1e16 the spacing is 2: logaddexp(1e16 + 4, 1e16)'s shares are those of (4, 0), by shift invariance
    (before: exp(a - y) with y rounded to 1e16 + 4 gave 1 to a, in both modes)."""
    f, ex, c = PAIRS[name]
    want = 1.0 / (1.0 + ex(-4.0))
    g, jvp, h = _pair_derivatives(f, 1e16 + 4.0, 1e16, ta=0.5, tb=-2.0)
    np.testing.assert_allclose(g, [want, 1 - want], rtol=1e-15)
    np.testing.assert_allclose(jvp, 0.5 * want - 2.0 * (1 - want), rtol=1e-15)
    np.testing.assert_allclose(h, [c * want * (1 - want), -c * want * (1 - want)], rtol=1e-14)


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("d", [-40.0, -1.5, 0.0, 0.7, 30.0])
def test_logaddexp_pair_first_and_second_order_match_central_differences(name, d):
    """The share's two branches (a >= b and below, chosen by where) and their recorded derivatives: the
    gradient against central differences of numpy's value, the Hessian row against central differences
    of the closed-form share (c s (1 - s) at a tie: where, not abs, picks the branch)."""
    f, ex, c = PAIRS[name]
    a0, b0 = 0.3 + d, 0.3
    g, _, h = _pair_derivatives(f, a0, b0)
    np.testing.assert_allclose(g[0], central(lambda v: f(v, b0), np.float64(a0), h=1e-6), rtol=1e-8, atol=1e-12)
    sa, sb = 1.0 / (1.0 + ex(b0 - a0)), 1.0 / (1.0 + ex(a0 - b0))
    np.testing.assert_allclose(h[0], c * sa * sb, rtol=1e-14)
    small = (lambda v: 1.0 / (1.0 + ex(b0 - v))) if d <= 0 else (lambda v: -1.0 / (1.0 + ex(v - b0)))  # noqa: E731
    np.testing.assert_allclose(h[0], central(small, np.float64(a0), h=1e-5), rtol=1e-7)  # (no cancellation)
    np.testing.assert_allclose(h[1], -h[0], rtol=1e-15)


def test_logaddexp_limits_at_infinities_are_kept():
    """Both at +inf: 1/2 each; both at -inf (a masked pair): 0 each, never nan (session 25's rule)."""
    for f in (np.logaddexp, np.logaddexp2):
        assert _pair_derivatives(f, np.inf, np.inf)[0] == [0.5, 0.5]
        assert _pair_derivatives(f, -np.inf, -np.inf)[0] == [0.0, 0.0]


def _grad_jvp(f, x0, t):
    x = ap.Variable(x0)
    with ap.GradientTape() as tape:
        y = f(x)
    g = tape.gradient(y, x).numpy()
    with ap.ForwardAccumulator(x, t) as acc:
        yf = f(x)
    return g, acc.jvp(yf).numpy()


def test_logsumexp_shares_at_huge_magnitudes_with_ties_and_minus_inf():
    """Each row's softmax: a tie of n shares 1/n at 1e20 and 1e300, -inf entries get 0, a row of -inf 0;
    torch.logsumexp gives 1 each to [1e20, 1e20] (exp(x - y)), jax 1/2."""
    x0 = np.array([[1e20, 1e20, -np.inf], [-1e300, -1e300, -1e300], [-np.inf] * 3, [1e300, -1e300, 1e300]])
    want = np.array([[0.5, 0.5, 0.0], [1 / 3] * 3, [0.0] * 3, [0.5, 0.0, 0.5]])
    t = np.array([[1.0, 3.0, 5.0], [1.0, 2.0, 6.0], [1.0, 1.0, 1.0], [2.0, 7.0, 4.0]])
    for f in (lambda x: aps.logsumexp(x, axis=1), lambda x: np.logaddexp.reduce(x, axis=1)):
        g, jvp = _grad_jvp(f, x0, t)
        np.testing.assert_allclose(g, want, rtol=1e-15, atol=0)
        np.testing.assert_allclose(jvp, np.sum(t * want, axis=1), rtol=1e-15)
    g, _ = _grad_jvp(lambda x: ap.logsumexp(x), np.full((2, 2), -1e20), np.ones((2, 2)))
    np.testing.assert_array_equal(g, np.full((2, 2), 0.25))


def test_logsumexp_at_1e16_is_the_softmax_of_the_offsets_and_its_hessian_at_a_tie():
    z = np.array([0.0, 2.0, 4.0])
    g, _ = _grad_jvp(lambda x: aps.logsumexp(x), 1e16 + z, np.ones(3))
    p = np.exp(z - 4.0) / np.sum(np.exp(z - 4.0))
    np.testing.assert_allclose(g, p, rtol=1e-15)
    H = ap.hessian(lambda x: aps.logsumexp(x), np.array([1e20, 1e20])).numpy()
    np.testing.assert_array_equal(H, [[0.25, -0.25], [-0.25, 0.25]])  # diag(p) - p p^T (jax.hessian: the same)


def test_logsumexp_with_weights_at_1e20():
    """d log|S|/da = b e^a / S, d/db = e^a / S: at a tie e^a / S = 1 / sum(b) (jax: [1/3, 2/3] for b = [1, 2];
    before: exp(a - log|S|) = 1, so da = b); with a negative weight and return_sign, the signed shares."""
    a, b = ap.Variable(np.array([1e20, 1e20])), ap.Variable(np.array([1.0, 2.0]))
    with ap.GradientTape(persistent=True) as tape:
        y = aps.logsumexp(a, b=b)
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), [1 / 3, 2 / 3], rtol=1e-15)
    np.testing.assert_allclose(tape.gradient(y, b).numpy(), [1 / 3, 1 / 3], rtol=1e-15)
    b = ap.Variable(np.array([1.0, -3.0]))
    with ap.GradientTape(persistent=True) as tape:
        y, sign = aps.logsumexp(a, b=b, return_sign=True)
    assert float(sign) == -1.0
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), [-0.5, 1.5], rtol=1e-15)
    np.testing.assert_allclose(tape.gradient(y, b).numpy(), [-0.5, -0.5], rtol=1e-15)
    with ap.ForwardAccumulator([a, b], [np.array([1.0, 2.0]), np.array([0.5, 0.25])]) as acc:
        y = aps.logsumexp(a, b=b, return_sign=True)[0]
    np.testing.assert_allclose(float(acc.jvp(y)), -0.5 + 2 * 1.5 - 0.5 * 0.5 - 0.5 * 0.25, rtol=1e-15)


def test_logsumexp_with_weights_second_order_at_1e20():
    """d/db_j of <d/da, V> = w_j (V_j - sum_i V_i b_i w_i), w = e^a / S (the closed form of
    test_autoprop_gaps_s26, at a tie w = 1 / sum(b))."""
    v, b0 = np.array([0.3, -1.1]), np.array([1.0, 2.0])
    a, b = ap.Variable(np.array([1e20, 1e20])), ap.Variable(b0)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = aps.logsumexp(a, b=b)
        z = np.sum(inner.gradient(y, a) * v)
    w = np.full(2, 1 / 3)
    np.testing.assert_allclose(outer.gradient(z, b).numpy(), w * (v - np.sum(v * b0 * w)), rtol=1e-14)


def test_softmax_and_the_fused_cross_entropy_under_an_outer_tape_at_1e20():
    """The fused cross-entropy's recorded backward (an outer tape) was exp(z - logsumexp(z)) - onehot:
    [0, 1, 0] at z = [1e20, 1e20, 0], label 0; right softmax - onehot = [-1/2, 1/2, 0], and the second
    order d/dz sum(w (p - onehot)) = p (w - sum(w p)) = [-1/4, 1/4, 0] for w = [1, 2, 3]."""
    for name in ("sparse_softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_mean"):
        z = ap.Variable(np.array([[1e20, 1e20, 0.0]]))
        with ap.GradientTape() as outer:
            with ap.GradientTape() as inner:
                loss = np.sum(getattr(R, name)(z, np.array([0])))
            g = inner.gradient(loss, z)
            s = np.sum(g * np.array([[1.0, 2.0, 3.0]]))
        np.testing.assert_array_equal(g.numpy(), [[-0.5, 0.5, 0.0]])
        np.testing.assert_array_equal(outer.gradient(s, z).numpy(), [[-0.25, 0.25, 0.0]])
    g, _ = _grad_jvp(lambda x: aps.softmax(x)[0] + aps.log_softmax(x)[1], np.array([1e20, 1e20]), np.ones(2))
    np.testing.assert_allclose(g, [0.25 + -0.5, -0.25 + 0.5], rtol=1e-15)


# --- np.logaddexp.accumulate: the logcumsumexp record ---------------------------------------------------
def _dense_jacobian(x0, axis):
    """d y_j / d x_i = exp(x_i - y_j) for i <= j along ``axis``, by its definition: [..., j, i]."""
    xm = np.moveaxis(x0, axis, -1)
    y = np.logaddexp.accumulate(xm, axis=-1)
    return np.tril(np.exp(xm[..., None, :] - y[..., :, None]))


def _lcse_all_modes(x0, w, v, axis):
    """Value, VJP of w, JVP along v, and the gradient of <VJP(w), v> (second order) of the running logsumexp."""
    x = ap.Variable(x0)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = np.logaddexp.accumulate(x, axis=axis)
        g = inner.gradient(y, x, output_gradients=ap.constant(w))
        s = np.sum(g * v)
    h = outer.gradient(s, x)
    with ap.ForwardAccumulator(x, v) as acc:
        yf = np.logaddexp.accumulate(x, axis=axis)
    return y.numpy(), g.numpy(), acc.jvp(yf).numpy(), h.numpy()


@pytest.mark.parametrize("shape, axis", [((3, 5), 0), ((3, 5), 1), ((2, 150), -1), ((2, 70, 2), 1)])
def test_logaddexp_accumulate_reverse_forward_and_second_order(shape, axis):
    """Against the dense Jacobian (VJP, JVP: 1e-12 relative to the largest entry) and central differences
    of the dense VJP (second order); 150 and 70 cross the 64-entry blocks. torch.logcumsumexp agrees: VJP 2.5e-15,
    second order 4.9e-15 (its forward mode 2e-9 off: mpmath's 40 digits put this JVP at 7e-16)."""
    rng = np.random.default_rng(27)
    x0, w, v = rng.normal(size=shape) * 3, rng.normal(size=shape), rng.normal(size=shape)
    w.flat[::4] = 0.0  # zero cotangents and tangents: session 26's log|g| record was not linear there
    v.flat[1::5] = 0.0
    y, g, jvp, h = _lcse_all_modes(x0, w, v, axis)
    np.testing.assert_array_equal(y, np.logaddexp.accumulate(x0, axis=axis))
    jac, wm, vm = _dense_jacobian(x0, axis), np.moveaxis(w, axis, -1), np.moveaxis(v, axis, -1)
    want_g = np.moveaxis(np.einsum("...j,...ji->...i", wm, jac), -1, axis)
    want_jvp = np.moveaxis(np.einsum("...ji,...i->...j", jac, vm), -1, axis)
    np.testing.assert_allclose(g, want_g, rtol=0, atol=1e-12 * np.max(np.abs(want_g)))
    np.testing.assert_allclose(jvp, want_jvp, rtol=0, atol=1e-12 * np.max(np.abs(want_jvp)))
    np.testing.assert_allclose(np.sum(g * v), np.sum(w * jvp), rtol=1e-12)  # the transpose of each other
    if x0.size <= 40:
        fd = central(lambda z: np.sum(np.moveaxis(np.einsum("...j,...ji->...i", wm, _dense_jacobian(z, axis)),
                                                  -1, axis) * v), x0, h=1e-5)
        np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-8)


def test_logaddexp_accumulate_is_linear_in_the_cotangent_at_zero():
    """VJP(g1 + g2) = VJP(g1) + VJP(g2) with zeros in g1, and the JVP along a basis vector is column i of the
    Jacobian, not 0 (session 26's record: its JVP came out 0, test_autoprop_forward's transpose test)."""
    x0 = np.array([0.3, -1.2, 2.0, 0.5])
    g1, g2 = np.array([0.0, 1.0, 0.0, -2.0]), np.array([1.5, 0.0, -0.5, 0.0])
    jac = _dense_jacobian(x0, 0)
    for w in (g1, g2, g1 + g2):
        np.testing.assert_allclose(_lcse_all_modes(x0, w, np.zeros(4), 0)[1], w @ jac, rtol=1e-14, atol=1e-16)
    for i in range(4):
        np.testing.assert_allclose(_lcse_all_modes(x0, np.ones(4), np.eye(4)[i], 0)[2], jac[:, i], rtol=1e-14,
                                   atol=1e-16)


@pytest.mark.parametrize("x0, want", [
    ([-1e20, -1e20, 1e20], [1.5, 0.5, 1.0]),  # torch: [1, 1, 1]; jax: [2, 1, 1]
    ([1e300, 1e300, 1e300], [11 / 6, 5 / 6, 1 / 3]),
    ([-1e308, 1e308], [1.0, 1.0]),
    ([-np.inf, -np.inf, 1e20, 1e20], [0.0, 0.0, 1.5, 0.5]),
    ([1.0, np.inf, 3.0, np.inf], [1.0, 2.5, 0.0, 0.5]),  # +inf: even shares of each prefix (torch: nan)
])
def test_logaddexp_accumulate_at_huge_magnitudes_and_infinities(x0, want):
    x0 = np.asarray(x0)
    with np.errstate(over="ignore"):
        y, g, jvp, _ = _lcse_all_modes(x0, np.ones(x0.size), np.eye(x0.size)[-1], 0)
    np.testing.assert_array_equal(y, np.logaddexp.accumulate(x0))
    np.testing.assert_allclose(g, want, rtol=1e-15, atol=0)
    last_share = np.asarray(want) - np.concatenate([want[1:], [0.0]])  # the JVP along e_last: J[:, last]
    np.testing.assert_allclose(jvp[-1], last_share[-1], rtol=1e-15)


def test_logaddexp_accumulate_second_order_at_a_tie_of_1e20():
    """y = [x0, lse(x0, x1)]: the Hessian of y_1 at a tie is [[1/4, -1/4], [-1/4, 1/4]] (that of logsumexp)."""
    H = ap.hessian(lambda x: np.logaddexp.accumulate(x)[1], np.array([1e20, 1e20])).numpy()
    np.testing.assert_array_equal(H, [[0.25, -0.25], [-0.25, 0.25]])


def test_logaddexp_accumulate_keeps_float32_and_refuses_options_without_a_derivative():
    x = ap.Variable(np.array([0.5, 1.0, -2.0], np.float32))
    with ap.GradientTape() as tape:
        y = np.logaddexp.accumulate(x)
    g = tape.gradient(y, x).numpy()
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, _dense_jacobian(np.array([0.5, 1.0, -2.0]), 0).sum(axis=0), rtol=1e-6)
    with pytest.raises(TypeError, match="dtype"):
        np.logaddexp.accumulate(ap.Variable(np.ones(3)), dtype=np.float32)


# --- log_ndtr: the same kind (a ratio as exp of a difference of rounded logs) -------------------------------
@pytest.mark.parametrize("x0, want", [  # phi(x) / Phi(x) by mpmath, 50 digits
    (-1e10, 10000000000.0), (-1e8, 100000000.00000001), (-1e5, 100000.00001), (-40.0, 40.02496884720726),
    (-5.0, 5.186503967125842), (0.0, 0.7978845608028654), (2.0, 0.055247862678989956), (8.0, 5.052271083536895e-15)])
def test_log_ndtr_derivative_far_in_the_left_tail(x0, want):
    """d log Phi(x)/dx = phi(x) / Phi(x) = sqrt(2/pi) / erfcx(-x/sqrt 2): exp(-x^2/2 - log_ndtr(x)) rounded
    x^2/2 and log_ndtr(x) apart, 7.4e-7 off at -1e5, 1.9e8 at -1e8, inf at -1e10 (torch.special.log_ndtr the
    same; jax 1.0 at -1e10)."""
    x = ap.Variable(np.float64(x0))
    with ap.GradientTape() as tape:
        y = aps.log_ndtr(x)
    np.testing.assert_allclose(float(tape.gradient(y, x)), want, rtol=1e-14)
    with ap.ForwardAccumulator(x, np.float64(1.0)) as acc:
        yf = aps.log_ndtr(x)
    np.testing.assert_allclose(float(acc.jvp(yf)), want, rtol=1e-14)


@pytest.mark.parametrize("x0, df0, d1, d2", [  # f/F and its x-derivative f/F (f'/f - f/F): mpmath, 50 digits
    (-1000.0, 10000.0, 9.90099999800041, 0.009704960390040854),
    (-100000.0, 1000000000000.0, 99009.901, -0.9704930888118812),
    (-10000.0, 10000000000.0, 9900.9901980198, -0.9704930788158029),
    (-50.0, 1000000.0, 49.89524587732397, -0.9921311052556469),
    (-1e150, 99999.0, 99999.0 / 1e150, 99999.0 / 1e150 * (100000.0 - 99999.0) / 1e150),  # (power tail: df/|x|)
    (-100000.0, np.inf, 100000.00001, None),
    (-100000000.0, np.inf, 100000000.00000001, None),
    (-10000000000.0, np.inf, 10000000000.0, None),
])
def test_t_logcdf_slope_in_the_lower_tail(x0, df0, d1, d2):
    """d log F/dx = f/F was exp(log f - log F), two large logs: at df = inf 6.4e-7 off at x = -1e5, 78% at -1e8
    (log_ndtr's defect); at df = 1e12, x = -1e5 3.3e-7, at df = 1e4, x = -1e3 2.2e-12, the second derivatives
    2e-8 and worse. Now the normal's sqrt(2/pi) / erfcx(-x/sqrt 2) and, in the tail the value computes by
    quadrature or continued fraction, k / S or df / (|x| cf), where the two logs cancel in closed form."""
    from autoprop.scipy import stats

    x = ap.Variable(np.float64(x0))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = stats.t.logcdf(x, df0)
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)
    np.testing.assert_allclose(float(g), d1, rtol=1e-14)
    if d2 is not None:  # (df = inf: erfcx's own derivative cancels far out, 2x erfcx(x) - 2/sqrt(pi): left)
        np.testing.assert_allclose(float(h), d2, rtol=1e-13)


@pytest.mark.parametrize("x0, d1, d2", [  # mpmath, 100 digits: erfcx' = 2x erfcx - 2/sqrt(pi), erfcx'' = 2 erfcx + 2x erfcx'
    (2.5, -0.07434734678979467, 0.04987599417331381), (3.0, -0.05437226000717287, 0.03176874231974267),
    (8.0, -0.008616507881417731, 0.00210620629907817), (50.0, -0.00022554056313532387, 9.016217115157223e-06),
    (1e4, -5.641895750849127e-09, 1.1283791332441388e-12), (1e8, -5.641895835477562e-17, 1.1283791670955122e-24),
])
def test_erfcx_derivatives_for_large_x(x0, d1, d2):
    """2x erfcx(x) - 2/sqrt(pi) cancels: 2.4e-8 relative at 1e4, 0 at 1e8 (so log_ndtr's second derivative was 0
    at -1e8, for -1). From x = 2 on, Laplace's continued fraction: -2/sqrt(pi) T / (x + T)."""
    from autoprop.scipy import special as aps

    x = ap.Variable(np.float64(x0))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = aps.erfcx(x)
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)
    np.testing.assert_allclose(float(g), d1, rtol=1e-15)
    np.testing.assert_allclose(float(h), d2, rtol=2e-15)


@pytest.mark.parametrize("x0, d2", [(-40.0, -0.9993773316214086), (-1e4, -0.9999999900000006), (-1e5, -0.9999999999),
                                    (-1e8, -0.9999999999999999)])  # mpmath, 100 digits: -m (x + m), m = phi / Phi
def test_log_ndtr_second_derivative_far_in_the_left_tail(x0, d2):
    x = ap.Variable(np.float64(x0))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = aps.log_ndtr(x)
        g = inner.gradient(y, x)
    np.testing.assert_allclose(float(outer.gradient(g, x)), d2, rtol=1e-15)


@pytest.mark.parametrize("x0", [np.float64(-4.8), np.array(1231.8), np.array([[3.0]]), np.array([[1e300, 1e300]])])
def test_logsumexp_of_0d_and_one_entry_inputs(x0):
    """The plain backward's in-place softmax needs an array (a 0-d input gave a numpy scalar: TypeError, PyTorch
    OpInfo's 0-d samples); one entry's share is 1, two tied 1/2."""
    g, jvp = _grad_jvp(lambda x: aps.logsumexp(x), x0, np.ones(np.shape(x0)))
    np.testing.assert_array_equal(g, np.full(np.shape(x0), 1.0 / np.size(x0)))
    assert float(jvp) == 1.0


@pytest.mark.parametrize("axis", [1, 0, -1])
def test_logsumexp_with_weights_along_an_axis_at_huge_magnitudes(axis):
    """Rows [1e20, 1e20] with b = [1, 2] (shares 1/3, 2/3) and [1e300, -1e300] with b = [1, -1] (all to the first),
    along either axis: m is each row's max where b != 0."""
    a0, b0 = np.array([[1e20, 1e20], [1e300, -1e300]]), np.array([[1.0, 2.0], [1.0, -1.0]])
    da, db = np.array([[1 / 3, 2 / 3], [1.0, 0.0]]), np.array([[1 / 3, 1 / 3], [1.0, 0.0]])
    if axis == 0:
        a0, b0, da, db = a0.T, b0.T, da.T, db.T
    a, b = ap.Variable(a0), ap.Variable(b0)
    with ap.GradientTape(persistent=True) as tape:
        y = np.sum(aps.logsumexp(a, axis=axis, b=b, return_sign=True)[0])
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), da, rtol=1e-15, atol=0)
    np.testing.assert_allclose(tape.gradient(y, b).numpy(), db, rtol=1e-15, atol=0)


def test_logaddexp_plain_backward_shares_are_the_logistic_to_an_ulp():
    """The first-order (plain array) backward of logaddexp/logaddexp2: d/da = 1 / (1 + e^-(a-b)) for a >= b and
    e^(a-b) / (1 + e^(a-b)) below, exactly 1/2 at a tie (mutant pair_share_plain_e2: 1 + e off by 1e-12).
    Reference: the same logistic in float64 written out, and the shares summing to 1."""
    d = np.array([0.0, 1.0, -1.0, 3.5, -3.5, 30.0, -30.0, 1e-9])
    a, b = ap.Variable(d + 2.0), ap.Variable(np.full(d.shape, 2.0))
    for f, ex in ((np.logaddexp, np.exp), (np.logaddexp2, np.exp2)):
        with ap.GradientTape() as tape:
            y = ap.reduce_sum(f(a, b))
        ga, gb = (g.numpy() for g in tape.gradient(y, [a, b]))
        e = ex(-np.abs(d))
        want = np.where(d >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        np.testing.assert_allclose(ga, want, rtol=4e-16, atol=0)
        np.testing.assert_allclose(ga + gb, np.ones_like(d), rtol=4e-16, atol=0)
        assert ga[0] == 0.5 and gb[0] == 0.5
