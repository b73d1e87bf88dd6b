"""What lesson 10's list says of cholesky and eigh against TensorFlow (newuser24 L1), on TensorFlow's own formulas.

TensorFlow's gradients (``tensorflow/python/ops/linalg_grad.py``), transcribed in numpy: ``_CholeskyGrad`` returns
the symmetrized ``(grad_a + grad_a^H) / 2``; ``_SelfAdjointEigV2Grad`` returns ``band_part(grad_a + grad_a^H, -1,
0)`` with the diagonal halved, the lower triangle. autoprop's ``eigh`` is TensorFlow's to round-off; its
``cholesky`` is lower triangular and is TensorFlow's once symmetrized.
"""

import numpy as np

import autoprop as ap


def _point():
    r = np.random.default_rng(0)
    B = r.standard_normal((4, 4))
    return B @ B.T + 4 * np.eye(4), r.standard_normal(4), r.standard_normal((4, 4))


def test_eigh_is_tensorflows_lower_triangle():
    A, c, D = _point()
    Av = ap.Variable(A)
    with ap.GradientTape() as tape:
        w, V = np.linalg.eigh(Av)
        loss = np.sum(w * c) + np.sum(V**2 * D)  # invariant to the eigenvectors' signs
    got = tape.gradient(loss, Av).numpy()
    e, v = np.linalg.eigh(A)
    f = 1 / (e[None, :] - e[:, None] + np.eye(4))
    np.fill_diagonal(f, 0)
    grad_a = v @ ((np.diag(c) + f * (v.T @ (2 * v * D))) @ v.T)
    tf = np.tril(grad_a + grad_a.T)
    tf[np.diag_indices(4)] *= 0.5
    np.testing.assert_allclose(got, tf, rtol=1e-10, atol=1e-12)


def test_cholesky_is_tensorflows_once_symmetrized():
    A, _, D = _point()
    Av = ap.Variable(A)
    with ap.GradientTape() as tape:
        loss = np.sum(np.linalg.cholesky(Av) * D)
    got = tape.gradient(loss, Av).numpy()
    l = np.linalg.cholesky(A)
    li = np.linalg.inv(l)
    middle = np.tril(l.T @ D)
    middle[np.diag_indices(4)] *= 0.5
    grad_a = li.T @ middle @ li
    tf = (grad_a + grad_a.T) / 2
    assert np.allclose(np.triu(got, 1), 0) and not np.allclose(got, tf, atol=1e-3)  # the difference lesson 10 lists
    np.testing.assert_allclose((got + got.T) / 2, tf, rtol=1e-10, atol=1e-12)
