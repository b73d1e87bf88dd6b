"""tester29t's LOW findings, fixed by fixt29 (session 29): numpy's own behaviour on Tensors.

* ``np.iterable(ap.constant(1.0))`` was True and ``iter()`` of a 0-d Tensor made a generator:
  numpy's False and "iteration over a 0-d array".
* ``t.item(3)``, ``t.item((0, 1))``: numpy's item with an index.
* ``np.isneginf(x, out)`` / ``np.isposinf(x, out)`` crashed with a lambda's arity error: the
  ``out=`` refusal of ``np.isinf``.
* ``np.float_power`` of complex values or with ``dtype=complex`` named a cast to float64 the user never
  wrote: numpy's loops (complex in, complex out), power's holomorphic derivative; gradients against
  jax 0.10.2 (the references below: ``jax.grad`` of the same loss with x64) and central differences.
* ``x.astype(int, casting='same_value')`` (numpy 2.4) raised "casting must be one of".
* ``np.cumprod(..., dtype=float)`` was refused: numpy's cast first, recorded; an integer dtype of
  float values (numpy truncates them) refused, clearly.
"""

import numpy as np
import pytest
from oracles import central_each

import autoprop as ap


def test_a_0d_tensor_is_not_iterable_as_numpy_s():
    assert np.iterable(ap.constant(1.0)) is np.iterable(np.array(1.0)) is False
    assert np.iterable(ap.constant([1.0])) is True
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(ap.constant(1.0))
    assert [float(t) for t in ap.constant([1.0, 2.0])] == [1.0, 2.0]


def test_item_with_an_index_is_numpy_s():
    a = np.arange(6.0).reshape(2, 3)
    t = ap.constant(a)
    for args in ((3,), ((0, 1),), (1, 2), ((-1, -1),)):
        assert t.item(*args) == a.item(*args)
    assert ap.constant(2.5).item() == 2.5
    with pytest.raises(ValueError, match="can only convert an array of size 1"):
        t.item()
    with pytest.raises(IndexError):
        t.item(6)


@pytest.mark.parametrize("f", [np.isneginf, np.isposinf, np.isinf])
def test_isneginf_isposinf_refuse_out_as_isinf(f):
    x = ap.constant([1.0, np.inf, -np.inf])
    np.testing.assert_array_equal(f(x).numpy(), f(x.numpy()))
    for call in (lambda: f(x, np.zeros(3, bool)), lambda: f(x, out=np.zeros(3, bool))):
        with pytest.raises(TypeError, match=rf"numpy\.{f.__name__}\(\.\.\.(, out=\.\.\.)?\)"):  # (fix37d: positional)
            call()


X, Y = np.array([-2.0, 3.0, 0.5]), np.array([2.5, 1.5, 0.3])
#: jax.grad of sum(real(float_power(complex(x), complex(y)) * (1 - 2j))), argnums (0, 1)
FLOAT_POWER_JAX = [[-14.142135623730953, 2.598076211353316, 0.48735143781374124],
                   [-9.929466604885075, 5.708556905378076, -0.5630104584373838]]


def _fp_loss(x, y):
    return np.sum(np.real(np.float_power(x, y, dtype=complex) * (1 - 2j)))


def test_float_power_with_dtype_complex_is_numpy_s_and_differentiates_as_jax():
    xs = [ap.Variable(X), ap.Variable(Y)]
    with ap.GradientTape() as tape:
        z = np.float_power(xs[0], xs[1], dtype=complex)
        loss = np.sum(np.real(z * (1 - 2j)))
    want = np.float_power(X, Y, dtype=complex)
    assert z.dtype == want.dtype == np.complex128
    np.testing.assert_array_equal(z.numpy(), want)
    fds = central_each(_fp_loss, [X, Y])
    for g, ref, fd in zip(tape.gradient(loss, xs), FLOAT_POWER_JAX, fds):
        np.testing.assert_allclose(g.numpy(), ref, rtol=1e-12)
        np.testing.assert_allclose(g.numpy(), fd, rtol=1e-6)
    u = [np.array([0.3, -1.0, 0.7]), np.array([1.1, 0.2, -0.4])]
    cs = [ap.constant(X), ap.constant(Y)]
    with ap.ForwardAccumulator(cs, [ap.constant(v) for v in u]) as acc:
        y = np.sum(np.real(np.float_power(cs[0], cs[1], dtype=complex) * (1 - 2j)))
    want_jvp = sum(float(np.sum(fd * v)) for fd, v in zip(fds, u))
    assert abs(float(acc.jvp(y).numpy()) - want_jvp) <= 1e-6 * (1 + abs(want_jvp))


def test_float_power_of_complex_values_is_complex128_as_numpy():
    for a, b in (([1 + 1j, 2 - 1j], 2), ([1.5, 2.0], [0.5 + 1j, 2.0]), (np.array([1 + 1j], np.complex64), 2.0)):
        got, want = np.float_power(ap.constant(a), b), np.float_power(np.asarray(a), b)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
    assert np.float_power(ap.constant(np.array([2.0], np.float32)), 2).dtype == np.float64


def test_astype_casting_same_value_is_numpy_s():
    t = ap.constant([1.0, 2.0])
    got = t.astype(int, casting="same_value")
    assert got.dtype == np.dtype(int) and got.numpy().tolist() == [1, 2]
    with pytest.raises(ValueError, match="could not cast 'same_value'"):
        ap.constant([1.5]).astype(int, casting="same_value")
    with pytest.raises(TypeError, match="Cannot cast array data"):
        t.astype(int, casting="safe")


#: jax.grad of sum(cumprod(c, dtype=float64) * (1, 2, 3, 4))
CUMPROD_JAX = [-6.839999999999999, 16.799999999999997, -4.829999999999999, -8.399999999999999]


@pytest.mark.parametrize("dtype", [float, np.float64, "f8"])
def test_cumprod_with_a_float_dtype_is_recorded(dtype):
    c = np.array([1.5, -0.7, 2.0, 0.4])
    for x0 in (c, c.astype(np.float32)):
        x = ap.Variable(x0)
        with ap.GradientTape() as tape:
            y = np.cumprod(x, dtype=dtype)
            loss = np.sum(y * np.arange(1.0, 5.0))
        want = np.cumprod(x0, dtype=dtype)
        assert y.dtype == want.dtype == np.float64
        np.testing.assert_array_equal(y.numpy(), want)
        g = tape.gradient(loss, x).numpy()
        assert g.dtype == x0.dtype
        rtol = 1e-12 if x0.dtype == np.float64 else 1e-6  # (float32's values of c: 1e-7 apart)
        np.testing.assert_allclose(g, CUMPROD_JAX, rtol=rtol)
        fd = central_each(lambda v: np.sum(np.cumprod(v, dtype=float) * np.arange(1.0, 5.0)), [c])[0]
        np.testing.assert_allclose(g, fd, rtol=1e-6)
    np.testing.assert_array_equal(np.cumprod(ap.constant([1, 2, 3]), dtype=int).numpy(), [1, 2, 6])


def test_cumprod_with_a_dtype_numpy_truncates_to_is_refused_clearly():
    for dtype, words in ((int, "dropping their fractions"), (bool, "dropping their fractions")):
        with pytest.raises(TypeError, match=rf"numpy\.cumprod\(\.\.\., dtype=.*{words}"):
            np.cumprod(ap.Variable([1.5, 2.5]), dtype=dtype)
    with pytest.raises(TypeError, match="dropping the imaginary parts"):
        np.cumprod(ap.constant([1.5 + 1j]), dtype=float)
