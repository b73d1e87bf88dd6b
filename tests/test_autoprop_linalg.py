"""np.linalg on Tensors: inv, det, slogdet, solve, cholesky, eigh, eigvalsh, matrix_power,
multi_dot.

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

import autoprop as ap

_r = np.random.default_rng(7)
A3 = np.array([[2.0, 0.3, -0.4], [0.1, 1.5, 0.2], [-0.3, 0.4, 1.8]])
SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
B3 = _r.standard_normal((3, 2))
b3 = _r.standard_normal(3)
A34 = np.array([[2.0, 0.3, -0.4, 0.5], [0.1, 1.5, 0.2, -0.7], [-0.3, 0.4, 1.0, 0.2]])

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
    ("svd_values", lambda a: np.linalg.svd(a, compute_uv=False), lambda a: agn.linalg.svd(a, compute_uv=False), A34),
    ("svd_U", lambda a: np.linalg.svd(a, full_matrices=False)[0],
     lambda a: agn.linalg.svd(a, full_matrices=False)[0], A34),
    ("svd_Vh", lambda a: np.linalg.svd(a, full_matrices=False)[2],
     lambda a: agn.linalg.svd(a, full_matrices=False)[2], A34),
    ("svd_tall", lambda a: np.linalg.svd(a, full_matrices=False)[0],
     lambda a: agn.linalg.svd(a, full_matrices=False)[0], A34.T),
    ("svd_square", lambda a: np.linalg.svd(a)[2], lambda a: agn.linalg.svd(a, full_matrices=False)[2], A3),
    ("matrix_power_3", lambda a: np.linalg.matrix_power(a, 3), lambda a: a @ a @ a, A3),
    ("matrix_power_-2", lambda a: np.linalg.matrix_power(a, -2),
     lambda a: agn.linalg.inv(a) @ agn.linalg.inv(a), A3),
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


def _central(L, a, h=1e-6):
    out = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        p, m = a.copy(), a.copy()
        p[i] += h
        m[i] -= h
        out[i] = (L(p) - L(m)) / (2 * h)
    return out


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
    num = _central(lambda x: float(np.sum(G * _numpy_value(f, x))), a)
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
    hv = outer.gradient(s, A).numpy()
    # central differences of the (tape's, already checked) gradient along v
    h = 1e-5
    dir_grad = lambda x: float(np.sum(_grad(lambda B: ap.sum(ap.constant(G) * f(B)), x) * v))  # noqa: E731
    num = _central(dir_grad, a, h)
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
    np.testing.assert_allclose(g, _central(lambda z: float(np.sum(G * f(z))), x), rtol=1e-6, atol=1e-7)
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
    with pytest.raises(TypeError, match="full_matrices=False"):
        np.linalg.svd(ap.constant(A34))
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
