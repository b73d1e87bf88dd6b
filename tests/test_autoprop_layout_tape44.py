"""Session 44, tape44: student numpy code whose numbers autoprop got wrong or refused.

* H1: a Tensor's value must have numpy's memory layout (the rule of ``views.numpy_layout``), because
  ``ravel``/``flatten``/``reshape`` with ``order='K'`` or ``'A'`` read it: ``x.T.copy()``,
  ``np.copy(x, order='F')``, ``astype(order=)``, and the gathers ``np.sort``, ``np.partition``,
  ``np.roll``, ``np.tile``, ``np.take(axis=)``, ``np.pad(mode='reflect')``, ``np.heaviside``,
  ``np.copysign`` and ``np.maximum.accumulate`` of an F-ordered value gave other values than numpy.
* H2: ``np.linalg.pinv(C, hermitian=True)`` of a complex C read the lower triangle without the
  conjugate (a complex-symmetric matrix, not numpy's Hermitian one).
* L1: ``y[idx] += v`` on a Tensor is refused; the message now gives the scatter that computes numpy's
  buffered ``+=`` (the last of repeated positions wins), checked here against numpy.
* M1: ``np.einsum`` with an ellipsis and a repeated letter in one operand (``'...ii->...i'``, a batch
  of diagonals) refused its gradient. M2: ``np.linalg.svd(A, hermitian=True, compute_uv=False)`` was refused.

Independent values: numpy itself (values) and central differences of the same numpy code.
"""

import numpy as np
import pytest

import autoprop as ap

X = np.arange(1.0, 13.0).reshape(3, 4) / 13

LAYOUT_CASES = {
    "method copy (order C)": lambda x: x.T.copy(),
    "np.copy order F": lambda x: np.copy(x, order="F"),
    "astype order F": lambda x: x.astype(np.float64, order="F"),
    "sort": lambda x: np.sort(x.T, axis=0),
    "partition": lambda x: np.partition(x.T, 1),
    "roll": lambda x: np.roll(x.T, 1, axis=0),
    "tile": lambda x: np.tile(x.T, 1),
    "take axis": lambda x: np.take(x.T, [0, 2, 1], axis=1),
    "pad reflect": lambda x: np.pad(x.T, 1, mode="reflect"),
    "heaviside": lambda x: np.heaviside(x.T - 0.5, 0.5),
    "copysign": lambda x: np.copysign(x.T, -1.0),
}


@pytest.mark.parametrize("name", list(LAYOUT_CASES))
@pytest.mark.parametrize("order", ["K", "A"])
def test_memory_order_reads_give_numpys_values(name, order):
    f = LAYOUT_CASES[name]
    want = f(X).ravel(order)
    got = f(ap.constant(X)).ravel(order).numpy()
    np.testing.assert_array_equal(got, want)


def test_running_max_of_a_transposed_value_reads_numpys_values():
    def f(x):  # (a 3-D transpose: neither C- nor F-contiguous, so only 'K' reads its layout)
        return np.maximum.accumulate(np.transpose(x.reshape(3, 2, 2), (2, 0, 1)))
    np.testing.assert_array_equal(f(ap.constant(X)).ravel("K").numpy(), f(X).ravel("K"))


def _central(f, x, G, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (np.sum(f(x + e) * G) - np.sum(f(x - e) * G)) / (2 * h)
    return g


def test_gradient_through_a_K_order_read_of_an_F_copy():
    def f(x):
        return np.copy(x, order="F").ravel("K") * np.arange(1.0, 13.0)
    G = np.random.default_rng(0).standard_normal(12)
    x = ap.Variable(X)
    with ap.GradientTape() as tape:
        loss = np.sum(f(x) * G)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), _central(f, X, G), atol=1e-8)


@pytest.mark.parametrize("sub", ["...ii->...i", "i...i", "...ii->...", "ii...->..."])
def test_einsum_ellipsis_diagonal_gradient_and_jvp(sub):
    r = np.random.default_rng(1)
    a0 = r.standard_normal((3, 2, 3)) if sub == "i...i" else r.standard_normal((2, 3, 3))
    if sub.startswith("ii"):
        a0 = r.standard_normal((3, 3, 2))
    G = r.standard_normal(np.einsum(sub, a0).shape)
    u = r.standard_normal(a0.shape)
    a = ap.Variable(a0)
    with ap.GradientTape() as tape:
        loss = np.sum(np.einsum(sub, a) * G)
    np.testing.assert_allclose(tape.gradient(loss, a).numpy(),
                               _central(lambda v: np.einsum(sub, v), a0, G), atol=1e-8)
    with ap.ForwardAccumulator(a, u) as acc:
        y = np.einsum(sub, a)
    np.testing.assert_allclose(acc.jvp(y).numpy(), np.einsum(sub, u), atol=1e-12)  # linear: J u = f(u)


def test_pinv_hermitian_complex_reads_numpys_hermitian_matrix():
    r = np.random.default_rng(2)
    c = r.standard_normal((4, 4)) + 1j * r.standard_normal((4, 4))
    np.testing.assert_allclose(np.linalg.pinv(ap.constant(c), hermitian=True).numpy(),
                               np.linalg.pinv(c, hermitian=True), atol=1e-10)


def test_svd_hermitian_values_recorded():
    r = np.random.default_rng(3)
    s0 = r.standard_normal((3, 3)) + np.triu(np.ones((3, 3)), 1)  # the upper triangle is never read
    c = r.standard_normal((3, 3)) + 1j * r.standard_normal((3, 3))
    np.testing.assert_allclose(np.linalg.svd(ap.constant(c), hermitian=True, compute_uv=False).numpy(),
                               np.linalg.svd(c, hermitian=True, compute_uv=False), atol=1e-10)
    G = r.standard_normal(3)

    def f(v):
        return np.linalg.svd(v, hermitian=True, compute_uv=False)
    s = ap.Variable(s0)
    with ap.GradientTape() as tape:
        loss = np.sum(f(s) * G)
    np.testing.assert_allclose(tape.gradient(loss, s).numpy(), _central(f, s0, G), atol=1e-7)
    with pytest.raises(TypeError, match="eigh"):
        np.linalg.svd(s, hermitian=True)


def test_item_assignment_refusal_names_the_scatter_that_computes_numpys_update():
    x0, idx, v0 = np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([0, 2, 2]), np.array([10.0, 20.0, 30.0])
    x, v = ap.Variable(x0), ap.Variable(v0)
    with ap.GradientTape(), pytest.raises(TypeError, match=r"t = ap.tensor_scatter_nd_update\(t, idx\[:, None\], t\[idx\] \+ v\)"):
        y = x * 1.0  # (recorded: a tensor that carries gradient)
        y[idx] += v
    with ap.GradientTape() as tape:
        z = ap.tensor_scatter_nd_update(x, idx[:, None], x[idx] + v)  # the rewrite the message gives
        loss = np.sum(z * np.arange(1.0, 6.0))
    want = x0.copy()
    want[idx] += v0  # numpy: buffered, position 2 gets x[2] + 30
    np.testing.assert_array_equal(z.numpy(), want)
    gx, gv = tape.gradient(loss, [x, v])
    np.testing.assert_array_equal(gx.numpy(), [1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(gv.numpy(), [1.0, 0.0, 3.0])  # the overwritten update gets none
