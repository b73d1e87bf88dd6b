"""numpy 2's array-API names on Tensors (autoprop/core/prims/array_api.py): numpy.linalg.matmul,
trace, diagonal, outer, cross, vecdot, matrix_transpose, tensordot, and numpy.vecdot,
matrix_transpose, matvec, vecmat. Values against numpy's own function on arrays;
gradients of L = sum(G * f(x1, x2)) with respect to each argument against HIPS autograd
and central differences; their conventions (the last two axes) against the older names'."""

import autograd
import autograd.numpy as agn
import numpy as np
import pytest
from oracles import central

import autoprop as ap

_r = np.random.default_rng(11)
M = _r.standard_normal((2, 3, 4))  # a stack of two 3x4 matrices
N = _r.standard_normal((2, 4, 3))
v3, w3 = _r.standard_normal(3), _r.standard_normal(3)
V4 = _r.standard_normal((2, 4))
V3 = _r.standard_normal((2, 3))

# name, numpy function of (x1, x2), autograd expression of (x1, x2), x1, x2
CASES = [
    ("linalg.matmul", lambda a, b: np.linalg.matmul(a, b), lambda a, b: a @ b, M, N),
    ("linalg.tensordot", lambda a, b: np.linalg.tensordot(a, b, axes=1),
     lambda a, b: agn.tensordot(a, b, axes=1), M, N.transpose(1, 0, 2)),
    ("linalg.trace", lambda a, b: np.linalg.trace(a, offset=1) * b[0, 0, 0],
     lambda a, b: agn.sum(a[..., [0, 1, 2], [1, 2, 3]], axis=-1) * b[0, 0, 0], M, N),
    ("linalg.diagonal", lambda a, b: np.linalg.diagonal(a) * b[:, 0, :3],
     lambda a, b: a[..., [0, 1, 2], [0, 1, 2]] * b[:, 0, :3], M, N),
    ("linalg.outer", lambda a, b: np.linalg.outer(a, b), lambda a, b: agn.outer(a, b), v3, w3),
    ("linalg.cross", lambda a, b: np.linalg.cross(a, b), lambda a, b: agn.cross(a, b), V3, V3[::-1]),
    ("linalg.vecdot", lambda a, b: np.linalg.vecdot(a, b, axis=-1), lambda a, b: agn.sum(a * b, axis=-1),
     V4, M[:, 0, :]),
    ("linalg.matrix_transpose", lambda a, b: np.linalg.matrix_transpose(a) @ b[0],
     lambda a, b: agn.swapaxes(a, -1, -2) @ b[0], M, N[:, :3, :]),
    ("vecdot", lambda a, b: np.vecdot(a, b), lambda a, b: agn.sum(a * b, axis=-1), M, V4[:, None, :]),
    ("matrix_transpose", lambda a, b: np.matrix_transpose(a) * b, lambda a, b: agn.swapaxes(a, -1, -2) * b,
     M, N),
    ("matvec", lambda a, b: np.matvec(a, b), lambda a, b: agn.sum(a * b[:, None, :], axis=-1), M, V4),
    ("vecmat", lambda a, b: np.vecmat(a, b), lambda a, b: agn.sum(a[:, :, None] * b, axis=-2), V4, N),
]
CASES = [c for c in CASES if hasattr(np.linalg if c[0].startswith("linalg.") else np, c[0].split(".")[-1])]


@pytest.mark.parametrize("name,f,fa,x1,x2", CASES, ids=[c[0] for c in CASES])
def test_value_is_numpys_and_gradients_are_autograds_and_central_differences(name, f, fa, x1, x2):
    a, b = ap.Variable(x1), ap.Variable(x2)
    want = f(x1, x2)
    with ap.GradientTape() as tape:
        y = f(a, b)
        G = _r.standard_normal(np.shape(want))
        loss = ap.sum(ap.constant(G) * y)
    # numpy's own function on arrays (vecdot: numpy sums in its own order, so to rounding)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-14, atol=1e-15)
    ga, gb = (g.numpy() for g in tape.gradient(loss, [a, b]))
    ra, rb = autograd.grad(lambda p, q: agn.sum(G * fa(p, q)), (0, 1))(x1, x2)
    np.testing.assert_allclose(ga, ra, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(gb, rb, rtol=1e-12, atol=1e-13)
    na = central(lambda p: float(np.sum(G * f(p, x2))), x1, h=1e-6)
    np.testing.assert_allclose(ga, na, rtol=1e-6, atol=1e-8)


def test_linalg_names_take_the_last_two_axes_where_the_old_names_take_the_first():
    x = ap.constant(M)
    np.testing.assert_array_equal(np.linalg.trace(x).numpy(), np.trace(M, axis1=-2, axis2=-1))
    np.testing.assert_array_equal(np.linalg.diagonal(x).numpy(), np.diagonal(M, axis1=-2, axis2=-1))
    assert np.trace(x).shape == (4,)  # np.trace: the first two axes, as numpy


def test_what_numpy_refuses_is_refused_and_complex_vecdot_is_conjugated():
    with pytest.raises(ValueError, match="1-dimensional"):
        np.linalg.outer(ap.constant(M), ap.constant(v3))
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        np.linalg.cross(ap.constant(V4), ap.constant(V4))
    with pytest.raises(ValueError, match="at least 2 axes"):
        np.linalg.trace(ap.constant(v3))
    # vecdot and vecmat conjugate x1, matvec does not (numpy's values; the message refusing all
    # three said matvec conjugates: tests/complex_scan.py checks their gradients)
    z0, m0 = np.array([1 + 2j, 3 - 1j]), np.array([[1 - 1j, 2j], [0.5, 1 + 3j]])
    z, m = ap.constant(z0), ap.constant(m0)
    assert np.vecdot(z, z).numpy() == 15.0 == np.vecdot(z0, z0)
    np.testing.assert_array_equal(np.vecmat(z, m).numpy(), z0.conj() @ m0)
    np.testing.assert_array_equal(np.matvec(m, z).numpy(), m0 @ z0)
