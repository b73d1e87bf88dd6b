"""np.linalg on Tensors: inv, det, slogdet, solve, cholesky, eigh, eigvalsh, svd, svdvals,
qr, pinv, lstsq, matrix_power, multi_dot, tensorsolve, tensorinv, norm, vector_norm,
matrix_norm.

Each is checked at well-conditioned inputs three ways: reverse mode against HIPS
autograd and against central differences of L(A) = sum(G * f(A)); forward mode (JVP)
against central differences along a random direction; and a second derivative
(reverse-over-reverse) against autograd or central differences of the gradient.
"""

import warnings

import autograd
import autograd.numpy as agn
import numpy as np
import pytest
from oracles import central

import autoprop as ap

_r = np.random.default_rng(7)
A3 = np.array([[2.0, 0.3, -0.4], [0.1, 1.5, 0.2], [-0.3, 0.4, 1.8]])
SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
_P = np.array([[1.0, 0.4, -0.2], [0.3, 1.0, 0.5], [-0.1, 0.2, 1.0]])
EIG = _P @ np.diag([0.5, 1.5, 3.0]) @ np.linalg.inv(_P)  # not symmetric, a real spectrum
B3 = _r.standard_normal((3, 2))
b3 = _r.standard_normal(3)
A34 = np.array([[2.0, 0.3, -0.4, 0.5], [0.1, 1.5, 0.2, -0.7], [-0.3, 0.4, 1.0, 0.2]])
A52 = _r.standard_normal((5, 2)) + np.eye(5, 2)
b5, B52 = _r.standard_normal(5), _r.standard_normal((5, 2))
M6 = 2.0 * np.eye(6) + 0.3 * _r.standard_normal((6, 6))  # well conditioned
TS, B23 = M6.reshape(2, 3, 2, 3), _r.standard_normal((2, 3))
TS_AXES = M6.reshape(6, 2, 3).transpose(1, 2, 0)  # b's axis last: axes=(0, 1) moves x's there
X234 = _r.uniform(0.2, 2.0, (2, 3, 4)) * np.where(np.arange(24).reshape(2, 3, 4) % 3 == 0, -1.0, 1.0)


def _ag_tensorsolve(a, b):
    """numpy's definition in autograd.numpy (autograd has no VJP for its tensorsolve): the
    square solve of a reshaped to (b.size, b.size), x of shape a.shape[b.ndim:]."""
    x = agn.linalg.solve(agn.reshape(a, (b.size, b.size)), agn.reshape(b, (b.size,)))
    return agn.reshape(x, a.shape[b.ndim:])


def _ag_qr(a0):
    """An independent QR in autograd.numpy: for m >= n, R = D chol(A^T A)^T and Q = A R^-1,
    D = the signs of numpy's diagonal of R at the input a0 (locally constant); a wide
    A = [X | Y] is Q R_X = X, R = [R_X | Q^T Y]."""
    m, n = a0.shape[-2:]
    d = np.sign(np.diagonal(np.linalg.qr(a0[..., :m] if m < n else a0)[1], axis1=-2, axis2=-1))

    def f(a):
        x = a[..., :m] if m < n else a
        r = d[..., :, None] * agn.swapaxes(agn.linalg.cholesky(agn.swapaxes(x, -1, -2) @ x), -1, -2)
        q = agn.swapaxes(agn.linalg.solve(agn.swapaxes(r, -1, -2), agn.swapaxes(x, -1, -2)), -1, -2)
        if m < n:
            r = agn.concatenate([r, agn.swapaxes(q, -1, -2) @ a[..., m:]], axis=-1)
        return q, r
    return f


def _ag_lstsq(a, b):
    """The least-squares (tall) or minimum-norm (wide) solution from the normal equations."""
    if a.shape[0] >= a.shape[1]:
        return agn.linalg.solve(a.T @ a, a.T @ b)
    return a.T @ agn.linalg.solve(a @ a.T, b)

# name, tape function of A, autograd function of A, input
CASES = [
    ("inv", np.linalg.inv, agn.linalg.inv, A3),
    ("inv_batch", np.linalg.inv, agn.linalg.inv, np.stack([A3, A3.T + np.eye(3)])),
    ("det", np.linalg.det, agn.linalg.det, A3),
    ("det_negative", np.linalg.det, agn.linalg.det, A3[::-1]),
    ("slogdet", lambda a: np.linalg.slogdet(a)[1], lambda a: agn.linalg.slogdet(a)[1], A3[::-1]),
    ("solve_matrix", lambda a: np.linalg.solve(a, B3), lambda a: agn.linalg.solve(a, B3), A3),
    ("solve_vector", lambda a: np.linalg.solve(a, b3), lambda a: agn.linalg.solve(a, b3), A3),
    ("eigh_values", lambda a: np.linalg.eigh(a)[0], lambda a: agn.linalg.eigh(a)[0], SPD),
    ("eigh_vectors", lambda a: np.linalg.eigh(a)[1], lambda a: agn.linalg.eigh(a)[1], SPD),
    ("eigvalsh", np.linalg.eigvalsh, lambda a: agn.linalg.eigh(a)[0], SPD),
    ("cholesky", np.linalg.cholesky, agn.linalg.cholesky, SPD),
    # eig of a non-symmetric matrix with a real spectrum (before: refused, "no registered
    # derivative"); autograd's eig on real values is the oracle
    ("eig_values", lambda a: np.linalg.eig(a)[0], lambda a: agn.linalg.eig(a)[0], EIG),
    ("eig_vectors", lambda a: np.linalg.eig(a).eigenvectors, lambda a: agn.linalg.eig(a)[1], EIG),
    ("eig_batch", lambda a: np.linalg.eig(a)[1] * np.linalg.eig(a)[0][..., None, :],
     lambda a: agn.linalg.eig(a)[1] * agn.linalg.eig(a)[0][..., None, :], np.stack([EIG, EIG.T + 0.2])),
    ("eigvals", np.linalg.eigvals, lambda a: agn.linalg.eig(a)[0], EIG),
    ("svd_values", lambda a: np.linalg.svd(a, compute_uv=False), lambda a: agn.linalg.svd(a, compute_uv=False), A34),
    ("svd_U", lambda a: np.linalg.svd(a, full_matrices=False)[0],
     lambda a: agn.linalg.svd(a, full_matrices=False)[0], A34),
    ("svd_Vh", lambda a: np.linalg.svd(a, full_matrices=False)[2],
     lambda a: agn.linalg.svd(a, full_matrices=False)[2], A34),
    ("svd_tall", lambda a: np.linalg.svd(a, full_matrices=False)[0],
     lambda a: agn.linalg.svd(a, full_matrices=False)[0], A34.T),
    ("svd_square", lambda a: np.linalg.svd(a)[2], lambda a: agn.linalg.svd(a, full_matrices=False)[2], A3),
    ("svdvals", np.linalg.svdvals, lambda a: agn.linalg.svd(a, compute_uv=False), A34),
    ("qr_square_Q", lambda a: np.linalg.qr(a)[0], lambda a: _ag_qr(A3)(a)[0], A3),
    ("qr_square_R", lambda a: np.linalg.qr(a)[1], lambda a: _ag_qr(A3)(a)[1], A3),
    ("qr_tall_Q", lambda a: np.linalg.qr(a).Q, lambda a: _ag_qr(A34.T)(a)[0], A34.T),
    ("qr_tall_R", lambda a: np.linalg.qr(a).R, lambda a: _ag_qr(A34.T)(a)[1], A34.T),
    ("qr_wide_Q", lambda a: np.linalg.qr(a)[0], lambda a: _ag_qr(A34)(a)[0], A34),
    ("qr_wide_R", lambda a: np.linalg.qr(a, mode="r"), lambda a: _ag_qr(A34)(a)[1], A34),
    ("qr_batch", lambda a: np.linalg.qr(a)[0] @ np.linalg.qr(a)[1][..., :1],
     lambda a: _ag_qr(np.stack([A3, A3[::-1]]))(a)[0] @ _ag_qr(np.stack([A3, A3[::-1]]))(a)[1][..., :1],
     np.stack([A3, A3[::-1]])),
    ("pinv_tall", np.linalg.pinv, agn.linalg.pinv, A34.T),
    ("pinv_wide", np.linalg.pinv, agn.linalg.pinv, A34),
    ("pinv_square", np.linalg.pinv, agn.linalg.pinv, A3),
    ("lstsq_tall_vector", lambda a: np.linalg.lstsq(a, b5)[0], lambda a: _ag_lstsq(a, b5), A52),
    ("lstsq_tall_matrix", lambda a: np.linalg.lstsq(a, B52)[0], lambda a: _ag_lstsq(a, B52), A52),
    ("lstsq_wide_min_norm", lambda a: np.linalg.lstsq(a, b3)[0], lambda a: _ag_lstsq(a, b3), A34),
    ("lstsq_residuals", lambda a: np.linalg.lstsq(a, B52)[1],
     lambda a: agn.sum((B52 - a @ _ag_lstsq(a, B52)) ** 2, axis=0), A52),
    ("lstsq_s", lambda a: np.linalg.lstsq(a, b5)[3], lambda a: agn.linalg.svd(a, compute_uv=False), A52),
    ("vector_norm", np.linalg.vector_norm, lambda a: _ag_norm(agn.reshape(a, -1)), X234),
    ("vector_norm_ord1_axes", lambda a: np.linalg.vector_norm(a, ord=1, axis=(0, 2)),
     lambda a: agn.sum(agn.abs(a), axis=(0, 2)), X234),
    ("vector_norm_inf_keepdims", lambda a: np.linalg.vector_norm(a, ord=np.inf, keepdims=True),
     lambda a: agn.reshape(agn.max(agn.abs(a)), (1, 1, 1)), X234),
    ("vector_norm_3_axis", lambda a: np.linalg.vector_norm(a, ord=3, axis=-1),
     lambda a: _ag_norm(a, ord=3, axis=-1), X234),
    ("matrix_norm_fro", np.linalg.matrix_norm, lambda a: _ag_norm(a, axis=(1, 2)), X234),
    ("matrix_norm_1", lambda a: np.linalg.matrix_norm(a, ord=1), lambda a: _ag_norm(a, ord=1, axis=(1, 2)), X234),
    ("matrix_norm_-inf_keepdims", lambda a: np.linalg.matrix_norm(a, ord=-np.inf, keepdims=True),
     lambda a: _ag_norm(a, ord=-np.inf, axis=(1, 2), keepdims=True), X234),
    ("matrix_norm_2", lambda a: np.linalg.matrix_norm(a, ord=2), lambda a: _ag_norm(a, ord=2, axis=(1, 2)), X234),
    ("matrix_norm_nuc", lambda a: np.linalg.matrix_norm(a, ord="nuc"),
     lambda a: _ag_norm(a, ord="nuc", axis=(1, 2)), X234),
    ("matrix_power_3", lambda a: np.linalg.matrix_power(a, 3), lambda a: a @ a @ a, A3),
    ("matrix_power_-2", lambda a: np.linalg.matrix_power(a, -2),
     lambda a: agn.linalg.inv(a) @ agn.linalg.inv(a), A3),
    ("tensorsolve", lambda a: np.linalg.tensorsolve(a, B23),
     lambda a: _ag_tensorsolve(a, B23), TS),
    ("tensorsolve_b", lambda b: np.linalg.tensorsolve(ap.constant(TS), b),
     lambda b: _ag_tensorsolve(TS, b), B23),
    ("tensorsolve_axes", lambda a: np.linalg.tensorsolve(a, B23[0, :2] @ np.ones((2, 6)), axes=(0, 1)),
     lambda a: _ag_tensorsolve(agn.transpose(a, (2, 0, 1)), B23[0, :2] @ np.ones((2, 6))),
     TS_AXES),
    ("tensorinv", lambda a: np.linalg.tensorinv(a, ind=1), lambda a: agn.reshape(agn.linalg.inv(agn.reshape(a, (6, 6))), (2, 3, 6)),
     M6.reshape(6, 2, 3)),
    ("multi_dot", lambda a: np.linalg.multi_dot([a, B3, B3.T, a]), lambda a: a @ B3 @ B3.T @ a, A3),
]
IDS = [c[0] for c in CASES]


def _loss(f, G):
    return lambda a: np.sum(G * f(a))


def _grad(f, a):
    A = ap.constant(a)
    with ap.GradientTape() as tape:
        tape.watch(A)
        y = f(A)
    return tape.gradient(y, A).numpy()


def _numpy_value(f, a):
    return np.asarray(f(ap.constant(a)).numpy())


@pytest.mark.parametrize("name,f,fa,a", CASES, ids=IDS)
def test_values_are_numpys(name, f, fa, a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(_numpy_value(f, a), fa(a), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("name,f,fa,a", CASES, ids=IDS)
def test_reverse_mode_against_autograd_and_central_differences(name, f, fa, a):
    G = _r.standard_normal(np.shape(fa(a)))
    g = _grad(lambda A: ap.sum(ap.constant(G) * f(A)), a)
    num = central(lambda x: float(np.sum(G * _numpy_value(f, x))), a, h=1e-6)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-7)
    ref = autograd.grad(lambda x: agn.sum(G * fa(x)))(a)
    if name == "cholesky":
        # numpy reads only the lower triangle: the gradient lives there; autograd (and TF)
        # give the symmetric matrix with the same action on symmetric perturbations
        g = (g + np.swapaxes(g, -1, -2)) / 2
    np.testing.assert_allclose(g, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,f,fa,a", CASES, ids=IDS)
def test_forward_mode_against_central_differences(name, f, fa, a):
    u = _r.standard_normal(a.shape)
    A = ap.constant(a)
    with ap.ForwardAccumulator(A, u) as acc:
        y = f(A)
    h = 1e-6
    num = (_numpy_value(f, a + h * u) - _numpy_value(f, a - h * u)) / (2 * h)
    np.testing.assert_allclose(acc.jvp(y).numpy(), num, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,f,fa,a", CASES, ids=IDS)
def test_second_derivative_reverse_over_reverse(name, f, fa, a):
    G = _r.standard_normal(np.shape(fa(a)))
    v = _r.standard_normal(a.shape)
    A = ap.constant(a)
    with ap.GradientTape() as outer:
        outer.watch(A)
        with ap.GradientTape() as inner:
            inner.watch(A)
            y = ap.sum(ap.constant(G) * f(A))
        s = ap.sum(inner.gradient(y, A) * ap.constant(v))
    hv = outer.gradient(s, A, unconnected_gradients="zero").numpy()  # 0: piecewise-linear norms
    # central differences of the (tape's, already checked) gradient along v
    h = 1e-5
    dir_grad = lambda x: float(np.sum(_grad(lambda B: ap.sum(ap.constant(G) * f(B)), x) * v))  # noqa: E731
    num = central(dir_grad, a, h=h)
    np.testing.assert_allclose(hv, num, rtol=1e-5, atol=1e-6)
    if name != "cholesky":  # autograd's cholesky gradient uses the symmetric convention
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = autograd.grad(lambda x: agn.sum(autograd.grad(lambda z: agn.sum(G * fa(z)))(x) * v))(a)
        np.testing.assert_allclose(hv, ref, rtol=1e-8, atol=1e-10)


def test_solve_broadcasts_a_batch_of_matrices_against_one_right_hand_side():
    As = np.stack([A3, A3.T + np.eye(3)])
    G = _r.standard_normal((2, 3, 2))
    A, B = ap.constant(As), ap.constant(B3)
    with ap.GradientTape() as tape:
        tape.watch([A, B])
        y = ap.sum(ap.constant(G) * np.linalg.solve(A, B))
    dA, dB = tape.gradient(y, [A, B])
    # autograd cannot broadcast here: one autograd call per batch element, dB summed
    refs = [autograd.grad(lambda x, z, k=k: agn.sum(G[k] * agn.linalg.solve(x, z)), argnum=(0, 1))(As[k], B3)
            for k in range(2)]
    assert dB.shape == (3, 2)
    np.testing.assert_allclose(dA.numpy(), np.stack([r[0] for r in refs]), rtol=1e-10)
    np.testing.assert_allclose(dB.numpy(), refs[0][1] + refs[1][1], rtol=1e-10)


def test_slogdet_returns_numpys_sign_and_log_abs_det():
    sign, logdet = np.linalg.slogdet(ap.constant(A3[::-1]))
    ref = np.linalg.slogdet(A3[::-1])
    assert sign.numpy() == ref.sign == -1.0
    np.testing.assert_allclose(logdet.numpy(), ref.logabsdet, rtol=1e-14)


def test_eigh_refuses_the_eigenvector_gradient_at_repeated_eigenvalues():
    A = ap.constant(np.diag([1.0, 1.0, 2.0]))
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(A)
        w, v = np.linalg.eigh(A)
        lv = ap.sum(v * v[::-1])
        lw = ap.sum(w * ap.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="repeated eigenvalues"):
        tape.gradient(lv, A)
    # the eigenvalues alone are fine: d(sum c_i w_i)/dA = V diag(c) V^T on the lower triangle
    np.testing.assert_allclose(tape.gradient(lw, A).numpy(), np.diag([1.0, 2.0, 3.0]), atol=1e-15)


def test_autoprop_numpy_linalg_names_record_the_same_primitives():
    import autoprop.numpy as anp

    x = ap.Variable(np.array([[2.0, 0.5], [0.5, 1.0]]))
    with ap.GradientTape() as tape:
        y = anp.linalg.det(x) + anp.linalg.slogdet(x)[1] + anp.sum(anp.linalg.inv(x))
    g = tape.gradient(y, x).numpy()
    inv_t = np.linalg.inv(x.numpy()).T
    expected = 1.75 * inv_t + inv_t - inv_t @ np.ones((2, 2)) @ inv_t  # det = 1.75
    np.testing.assert_allclose(g, expected, rtol=1e-13)


def test_matrix_power_zero_is_a_constant_identity_and_the_exponent_must_be_an_integer():
    A = ap.constant(A3)
    with ap.GradientTape() as tape:
        tape.watch(A)
        y = np.linalg.matrix_power(A, 0)
    np.testing.assert_array_equal(y.numpy(), np.eye(3))
    assert tape.gradient(ap.sum(y), A, unconnected_gradients="zero").numpy().sum() == 0.0
    with pytest.raises(TypeError, match="integer"):
        np.linalg.matrix_power(A, 1.5)


@pytest.mark.parametrize("shape, n", [((2, 3), 1), ((2, 3), 0), ((2, 3), 2), ((3,), 1), ((4, 2, 3), -1)])
def test_matrix_power_refuses_what_numpy_refuses(shape, n):
    # (docs21: a (2, 3) matrix to the power 1 had come back as itself, where numpy raises)
    x = np.ones(shape)
    with pytest.raises(np.linalg.LinAlgError) as want:
        np.linalg.matrix_power(x, n)
    with pytest.raises(np.linalg.LinAlgError, match=str(want.value)):
        np.linalg.matrix_power(ap.constant(x), n)


NORMS = [
    ("vec_2", {}, (5,)), ("vec_1", {"ord": 1}, (5,)), ("vec_inf", {"ord": np.inf}, (5,)),
    ("vec_-inf", {"ord": -np.inf}, (5,)), ("vec_3", {"ord": 3}, (5,)), ("vec_0.5", {"ord": 0.5}, (5,)),
    ("vec_axis", {"ord": 1, "axis": 1, "keepdims": True}, (3, 4)),
    ("mat_fro", {"ord": "fro"}, (3, 4)), ("mat_1", {"ord": 1}, (3, 4)), ("mat_-1", {"ord": -1}, (3, 4)),
    ("mat_inf", {"ord": np.inf}, (3, 4)), ("mat_-inf", {"ord": -np.inf}, (3, 4)),
    ("mat_axes", {"ord": 1, "axis": (2, 0)}, (3, 2, 4)),
    ("mat_keepdims", {"ord": np.inf, "axis": (0, 1), "keepdims": True}, (3, 4)),
    ("mat_2", {"ord": 2}, (3, 4)), ("mat_-2", {"ord": -2}, (4, 3)), ("mat_nuc", {"ord": "nuc"}, (3, 4)),
    ("mat_nuc_axes", {"ord": "nuc", "axis": (2, 0), "keepdims": True}, (3, 2, 4)),
]


@pytest.mark.parametrize("name,kw,shape", NORMS, ids=[n[0] for n in NORMS])
def test_norm_with_ord_matches_numpy_autograd_and_central_differences(name, kw, shape):
    x = np.random.default_rng(len(name)).uniform(0.2, 2.0, shape) * np.where(
        np.arange(np.prod(shape)).reshape(shape) % 3 == 0, -1.0, 1.0)  # no ties, no zeros
    f = lambda a: np.linalg.norm(a, **kw)  # noqa: E731
    np.testing.assert_allclose(_numpy_value(f, x), f(x), rtol=1e-13)
    G = _r.standard_normal(np.shape(f(x)))
    g = _grad(lambda A: ap.sum(ap.constant(G) * f(A)), x)
    np.testing.assert_allclose(g, central(lambda z: float(np.sum(G * f(z))), x, h=1e-6), rtol=1e-6, atol=1e-7)
    ref = autograd.grad(lambda z: agn.sum(G * _ag_norm(z, **kw)))(x)
    np.testing.assert_allclose(g, ref, rtol=1e-10, atol=1e-12)


def _ag_norm(z, ord=None, axis=None, keepdims=False):  # noqa: A002
    """numpy.linalg.norm's definitions written in autograd.numpy (autograd has gradients
    for ord=None/2/'fro' only)."""
    if axis is None:
        axis = 0 if z.ndim == 1 else (0, 1)
    if isinstance(axis, tuple):
        row, col = (a % z.ndim for a in axis)
        if ord in (None, "fro"):
            return agn.sqrt(agn.sum(z * z, axis=axis, keepdims=keepdims))
        if ord in (2, -2, "nuc"):
            s = agn.linalg.svd(agn.moveaxis(z, (row, col), (-2, -1)), compute_uv=False)
            out = {2: agn.max, -2: agn.min, "nuc": agn.sum}[ord](s, axis=-1)
            return agn.reshape(out, tuple(1 if d in (row, col) else n for d, n in enumerate(z.shape))) \
                if keepdims else out
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        pick = agn.max if ord in (1, np.inf) else agn.min
        out = pick(agn.sum(agn.abs(z), axis=summed, keepdims=True), axis=other, keepdims=True)
        return out if keepdims else agn.squeeze(out, axis=(row, col))
    a = agn.abs(z)
    if ord in (None, 2):
        return agn.sqrt(agn.sum(z * z, axis=axis, keepdims=keepdims))
    if ord in (np.inf, -np.inf):
        return (agn.max if ord > 0 else agn.min)(a, axis=axis, keepdims=keepdims)
    return agn.sum(a**ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def test_norm_ord_zero_counts_and_bad_orders_are_refused():
    x = ap.constant([0.0, 2.0, -1.0])
    assert np.linalg.norm(x, ord=0).numpy() == 2.0
    with pytest.raises(ValueError, match="invalid norm order"):
        np.linalg.norm(ap.constant(A3), ord=3)
    with pytest.raises(ValueError, match="matrix norm"):
        np.linalg.norm(ap.constant(A3), ord="fro", axis=0)


def test_svd_refuses_what_has_no_derivative():
    x = ap.constant(A34)  # full_matrices=True (the default) of a non-square A: recorded, but
    with ap.GradientTape() as tape:  # its extra rows of Vh have no derivative
        tape.watch(x)
        y = ap.sum(np.linalg.svd(x)[2])
    with pytest.raises(ValueError, match="full_matrices=True.*not unique"):
        tape.gradient(y, x)
    A = ap.constant(np.diag([2.0, 2.0, 1.0]))
    with ap.GradientTape() as tape:
        tape.watch(A)
        u, s, vh = np.linalg.svd(A)
        y = ap.sum(u * ap.constant(np.arange(9.0).reshape(3, 3)))
    with pytest.raises(ValueError, match="repeated or zero singular values"):
        tape.gradient(y, A)
    with ap.GradientTape() as tape:  # the values alone: d(sum s)/dA = U V^T
        tape.watch(A)
        y = ap.sum(np.linalg.svd(A, compute_uv=False))
    np.testing.assert_allclose(tape.gradient(y, A).numpy(), np.eye(3), atol=1e-15)


def test_lstsq_gradient_in_b_and_what_it_returns():
    A, B = ap.constant(A52), ap.constant(B52)
    G = _r.standard_normal((2, 2))
    with ap.GradientTape() as tape:
        tape.watch([A, B])
        x, res, rank, s = np.linalg.lstsq(A, B)
        y = ap.sum(ap.constant(G) * x) + ap.sum(res)
    dA, dB = tape.gradient(y, [A, B])
    ref = autograd.grad(lambda a, b: agn.sum(G * _ag_lstsq(a, b)) + agn.sum((b - a @ _ag_lstsq(a, b)) ** 2),
                        argnum=(0, 1))(A52, B52)
    np.testing.assert_allclose(dA.numpy(), ref[0], rtol=1e-10)
    np.testing.assert_allclose(dB.numpy(), ref[1], rtol=1e-10)
    x0, res0, rank0, s0 = np.linalg.lstsq(A52, B52)
    assert rank == rank0 == 2 and res.shape == res0.shape == (2,)
    np.testing.assert_allclose(res.numpy(), res0, rtol=1e-12)
    _, res_sq, _, _ = np.linalg.lstsq(ap.constant(A3), ap.constant(b3))  # m == n: no residuals
    assert res_sq.shape == (0,)


def test_pinv_and_lstsq_at_a_rank_deficient_matrix_differentiate_along_rank_keeping_paths():
    """Session 26 (was refused): A^+ at a rank-1 A has a derivative along paths that keep the rank (Golub &
    Pereyra 1973): the gradient paired with such a direction is central differences of numpy's pinv/lstsq along
    it; forward mode refuses a tangent that changes the rank (test_autoprop_gaps_s26 for more)."""
    u, v = np.array([1.0, 2.0, 0.5]), np.array([1.0, -1.0, 2.0, 0.5])
    du, dv = np.array([0.3, -0.2, 1.0]), np.array([0.1, 0.5, -0.3, 0.2])
    low = np.outer(u, v)  # rank 1
    A = ap.constant(low)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(A)
        p = np.linalg.pinv(A)
        x = np.linalg.lstsq(A, ap.constant(b3))[0]
        losses = (ap.sum(p * p), ap.sum(x * x))
    np.testing.assert_allclose(p.numpy(), np.linalg.pinv(low), rtol=1e-12)  # the values are numpy's
    np.testing.assert_allclose(x.numpy(), np.linalg.lstsq(low, b3)[0], rtol=1e-12)
    direction = np.outer(du, v) + np.outer(u, dv)  # d/ds of (u + s du)(v + s dv)^T at s = 0
    path = lambda s: np.outer(u + s * du, v + s * dv)  # noqa: E731
    for y, f in zip(losses, (lambda m: np.sum(np.linalg.pinv(m) ** 2), lambda m: np.sum(np.linalg.lstsq(m, b3)[0] ** 2))):
        h = 1e-6
        want = (f(path(h)) - f(path(-h))) / (2 * h)
        assert float(np.sum(tape.gradient(y, A).numpy() * direction)) == pytest.approx(want, rel=1e-7)
    with pytest.raises(ValueError, match="changes the rank"), ap.ForwardAccumulator(A, np.ones((3, 4))):
        np.linalg.pinv(A)
    np.testing.assert_allclose(np.linalg.pinv(ap.constant(SPD), hermitian=True).numpy(),  # (recorded since
                               np.linalg.pinv(SPD, hermitian=True), rtol=1e-12)  # session 19)
    with pytest.raises(ValueError, match="rcond or rtol"):
        np.linalg.pinv(A, rcond=1e-10, rtol=1e-10)


def test_pinv_rcond_and_rtol_cut_off_as_numpy():
    a = np.diag([1.0, 1e-8, 2.0])
    for kw in ({"rcond": 1e-6}, {"rtol": 1e-6}, {"rtol": None}, {}):
        np.testing.assert_allclose(np.linalg.pinv(ap.constant(a), **kw).numpy(), np.linalg.pinv(a, **kw),
                                   rtol=1e-12)
    assert np.linalg.pinv(ap.constant(a), rcond=1e-6).numpy()[1, 1] == 0.0  # cut off


def test_qr_modes_and_refusals():
    for a in (A3, A34, A34.T):
        r = np.linalg.qr(ap.constant(a), mode="r")
        np.testing.assert_allclose(r.numpy(), np.linalg.qr(a, mode="r"), rtol=1e-12, atol=1e-15)
    q, r = np.linalg.qr(ap.constant(A34), mode="complete")  # wide: complete == reduced
    np.testing.assert_allclose(q.numpy() @ r.numpy(), A34, atol=1e-14)
    q, r = np.linalg.qr(ap.constant(A34.T), mode="complete")  # tall: numpy's values (test_autoprop_gaps_s26)
    np.testing.assert_array_equal(q.numpy(), np.linalg.qr(A34.T, mode="complete")[0])
    np.testing.assert_array_equal(r.numpy(), np.linalg.qr(A34.T, mode="complete")[1])
    with pytest.raises(TypeError, match="mode='raw'"):
        np.linalg.qr(ap.constant(A3), mode="raw")
    A = ap.constant(np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]]))  # rank 1: R singular
    with ap.GradientTape() as tape:
        tape.watch(A)
        y = ap.sum(np.linalg.qr(A)[0])
    with pytest.raises(ValueError, match="rank-deficient"):
        tape.gradient(y, A)
    with pytest.raises(ValueError, match="rank-deficient"), ap.ForwardAccumulator(A, np.ones((3, 2))):
        np.linalg.qr(A)


def test_singular_values_alone_have_forward_mode_at_repeated_values():
    # the nuclear norm at the identity: d tr(S) = tr(U^T dA V) = tr(dA); svd's vector
    # derivative would refuse (repeated singular values), the values record does not
    u = _r.standard_normal((3, 3))
    A = ap.constant(np.eye(3))
    with ap.ForwardAccumulator(A, u) as acc:
        y = np.linalg.matrix_norm(A, ord="nuc")
    np.testing.assert_allclose(acc.jvp(y).numpy(), np.trace(u), rtol=1e-13)


def test_vector_and_matrix_norm_refuse_what_numpy_refuses():
    with pytest.raises(ValueError, match="invalid norm order 'fro' for vectors"):
        np.linalg.vector_norm(ap.constant(b3), ord="fro")
    with pytest.raises(ValueError, match="at least 2 axes"):
        np.linalg.matrix_norm(ap.constant(b3))
    with pytest.raises(ValueError, match="invalid norm order 3"):
        np.linalg.matrix_norm(ap.constant(A3), ord=3)
    import autoprop.numpy as anp

    assert anp.linalg.vector_norm(ap.constant([3.0, -4.0])).numpy() == 5.0


@pytest.mark.parametrize("kw", [{}, {"offset": 1}, {"offset": -1, "axis1": 1, "axis2": 2}])
def test_trace_and_diagonal_are_tensor_methods_as_ndarray_s(kw):
    x = ap.Variable(X234)
    G = _r.standard_normal(np.diagonal(X234, **kw).shape)
    with ap.GradientTape() as tape:
        t, d = x.trace(**kw), x.diagonal(**kw)
        loss = ap.sum(t * t) + ap.sum(ap.constant(G) * d)
    np.testing.assert_array_equal(t.numpy(), X234.trace(**kw))
    np.testing.assert_array_equal(d.numpy(), X234.diagonal(**kw))
    # autograd's diagonal has no VJP off the last two axes: central differences
    num = central(lambda a: float(np.sum(a.trace(**kw) ** 2) + np.sum(G * a.diagonal(**kw))),
                  X234, h=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), num, rtol=1e-7, atol=1e-8)


def test_tensorsolve_and_tensorinv_refuse_what_numpy_refuses_and_live_in_ap_numpy_linalg():
    assert ap.numpy.linalg.tensorsolve(TS, B23).shape == (2, 3)
    assert ap.numpy.linalg.tensorinv(M6.reshape(6, 2, 3), ind=1).shape == (2, 3, 6)
    for call in (lambda m: np.linalg.tensorsolve(m(np.ones((2, 3, 4))), m(np.ones(2))),
                 lambda m: np.linalg.tensorinv(m(np.ones((2, 3, 4))), ind=1)):
        with pytest.raises(np.linalg.LinAlgError):
            call(np.asarray)  # numpy's own refusal
        with pytest.raises(np.linalg.LinAlgError, match="numpy.linalg.tensor"):
            call(ap.constant)


def test_an_unsupported_function_is_named_with_its_module():
    # the message said "numpy.cond": not where it lives (np.linalg.cond is recorded since session 19,
    # np.linalg.matrix_rank is an integer computed on the values: prims/extra.py's VALUES_ONLY)
    import scipy.special

    assert np.linalg.matrix_rank(ap.constant(A3)) == np.linalg.matrix_rank(A3)
    # (spence is recorded since session 25: dawsn is not)
    with pytest.raises(TypeError, match=r"^autoprop cannot record scipy\.special\.dawsn on a Tensor"):
        scipy.special.dawsn(ap.constant(A3))


def test_eig_of_a_complex_spectrum_and_repeated_eigenvalues_refused_by_name():
    # a rotation: eigenvalues +-i (refused until session 21; tests/test_autoprop_vocab21.py for
    # the eigenvectors); Re sum(w^2) = tr(A^2), whose gradient is 2 A^T, real as A
    R = ap.Variable(np.array([[0.0, -1.0], [1.0, 0.0]]))
    with ap.GradientTape() as tape:
        w = np.linalg.eigvals(R)
        loss = np.real(np.sum(w ** 2))
    np.testing.assert_allclose(np.sort_complex(w.numpy()), [-1j, 1j], atol=1e-15)
    np.testing.assert_allclose(tape.gradient(loss, R).numpy(), [[0.0, 2.0], [-2.0, 0.0]], atol=1e-15)
    A = ap.Variable(np.eye(2))
    with ap.GradientTape() as tape:
        loss = ap.sum(np.linalg.eig(A)[1])
    with pytest.raises(ValueError, match=r"autoprop.eig: .*repeated eigenvalues.*np.linalg.eigvals \("):
        tape.gradient(loss, A)


@pytest.mark.parametrize("m, n, k", [(5, 3, None), (6, 2, 3), (2, 3, None)])
def test_lstsq_residuals_of_a_complex_system_are_numpy_s_real_norms(m, n, k):
    # before: sum(r * r), complex128 and another value (numpy's residuals are sum(|r|**2), float64)
    rng = np.random.default_rng(4)
    A = rng.standard_normal((m, n)) + 1j * rng.standard_normal((m, n))
    shape = (m,) if k is None else (m, k)
    b = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    want = np.linalg.lstsq(A, b, rcond=None)
    got = np.linalg.lstsq(ap.constant(A), ap.constant(b), rcond=None)
    assert got[1].dtype == want[1].dtype == np.float64 and got[1].shape == want[1].shape
    np.testing.assert_allclose(got[1].numpy(), want[1], rtol=1e-10)
    np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-10, atol=1e-12)
