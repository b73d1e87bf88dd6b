"""numpy names recorded in session 19 (autoprop/core/prims/extra.py, the inverse real FFTs in
prims/fft.py, pinv(hermitian=True)): each function's value against numpy, its gradient, JVP and
second derivatives against central differences (test_autoprop_vocabulary's check, run on the
samples below), the inverse real FFTs against HIPS autograd, and the values-only table: integer,
boolean and metadata results computed on a Tensor's values instead of a refusal."""

import numpy as np
import pytest
import scipy.special
import test_autoprop_vocabulary as vocabulary
from more_samples import SAMPLES19

import autoprop as ap


@pytest.mark.parametrize("name", sorted(SAMPLES19))
def test_value_gradient_jvp_and_second_order(name, monkeypatch):
    monkeypatch.setitem(vocabulary.FUNCTION_SAMPLES, name, SAMPLES19[name])
    vocabulary.test_function_value_gradient_jvp_and_second_order(name)


def test_unique_gives_the_first_occurrence_the_gradient_and_index_outputs_stay_integers():
    x = ap.Variable([2.0, 1.0, 2.0, 3.0, 1.0])
    with ap.GradientTape() as tape:
        u, idx, inv, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        loss = np.sum(u * np.array([10.0, 100.0, 1000.0]))
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [100.0, 10.0, 0.0, 1000.0, 0.0])
    for got, ref in zip((idx, inv, counts), np.unique(x.numpy(), return_index=True, return_inverse=True,
                                                      return_counts=True)[1:]):
        assert type(got) is np.ndarray and np.array_equal(got, ref)
    assert type(np.unique_all(x)).__name__ == "UniqueAllResult"


@pytest.mark.parametrize("call", [
    lambda t: np.argwhere(t > 0), lambda t: np.flatnonzero(t), lambda t: np.digitize(t, [0.0, 0.5]),
    lambda t: np.lexsort((t, -t)), lambda t: np.isin(t, [0.5]),
    lambda t: np.linalg.matrix_rank(np.outer(t, t)), lambda t: np.nanargmin(t),
    lambda t: np.nanargmax(t), lambda t: np.tril_indices_from(np.outer(t, t)),
    lambda t: np.diag_indices_from(np.outer(t, t)), lambda t: np.iscomplexobj(t), lambda t: np.result_type(t),
    lambda t: np.histogram(t, bins=2)[0], lambda t: np.array_equiv(t, t),
], ids=lambda c: c.__code__.co_positions and "")
def test_integer_boolean_and_metadata_results_are_computed_on_the_values(call):
    v = np.array([0.5, -1.0, 0.0, 2.0])
    t = ap.Variable(v)
    with ap.GradientTape():
        got = call(t)
    ref = call(v)
    for g_, r in zip(got if isinstance(got, tuple) else [got], ref if isinstance(ref, tuple) else [ref]):
        assert not isinstance(g_, ap.Tensor) and np.array_equal(g_, r)


def test_empty_like_and_sort_complex_and_zeta_refusal():
    t = ap.Variable([3.0, 1.0])
    e = np.empty_like(t)
    assert isinstance(e, ap.Tensor) and e.shape == (2,) and e.dtype == np.float64
    np.testing.assert_array_equal(np.sort_complex(t).numpy(), np.sort_complex(t.numpy()))
    with ap.GradientTape(), pytest.raises(TypeError, match=r"zeta\(x\) \(Riemann's\) is recorded in x for x > 1"):
        scipy.special.zeta(t - 2.5)  # (zeta(x, q) is differentiable in x since session 26: test_autoprop_gaps_s26)
    np.testing.assert_array_equal(scipy.special.zeta(ap.constant([2.0, 3.0])).numpy(), scipy.special.zeta([2.0, 3.0]))


def test_sliding_window_view_is_a_view_that_refuses_writes():
    t = ap.Variable(np.arange(6.0))
    w = np.lib.stride_tricks.sliding_window_view(t, 3)
    with pytest.raises(TypeError, match="sliding_window_view"):
        w += 1
    with pytest.raises(TypeError, match="sliding_window_view with writeable=True"):
        np.lib.stride_tricks.sliding_window_view(t, 3, writeable=True)


def test_pinv_hermitian_reads_the_lower_triangle_as_numpy():
    a = np.array([[3.0, 0.9], [0.2, 2.0]])  # upper differs from lower: numpy reads the lower
    x = ap.Variable(a)
    with ap.GradientTape() as tape:
        y = np.linalg.pinv(x, hermitian=True)
        loss = np.sum(y * np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(y.numpy(), np.linalg.pinv(a, hermitian=True), rtol=1e-14)
    g = tape.gradient(loss, x).numpy()
    assert g[0, 1] == 0.0 and g[1, 0] != 0.0


# --- messages: what the user wrote, and the recorded way to write it ---------------------------
def test_a_frompyfunc_ufunc_is_not_called_scipy_special():
    with pytest.raises(TypeError, match=r"the ufunc '<lambda> \(vectorized\)' \(made by np.frompyfunc") as err:
        np.frompyfunc(lambda a: a, 1, 1)(ap.Variable([1.0]))
    assert "scipy" not in str(err.value)


def test_adding_a_tensor_into_part_of_a_numpy_array_names_the_array():
    x = ap.Variable([1.0, 2.0, 3.0])
    acc = np.zeros(5)
    with pytest.raises(TypeError, match=r"`acc\[\.\.\.\] \+= <Tensor>`.*numpy array `acc`.*acc = acc \+ np\.pad"):
        acc[1:4] += x
    with ap.GradientTape(), pytest.raises(TypeError, match=r"`acc` is a numpy array.*acc = acc \+"):
        acc += np.pad(x, 1)  # carries x's gradient on the tape (outside one, a constant's values: numpy's add)


@pytest.mark.parametrize(("call", "words"), [
    (lambda t: np.put(t, [0], 1.0), r"numpy\.put writes into its first argument.*np\.where"),
    (lambda t: np.place(t, t > 1, 0.0), r"numpy\.place writes.*np\.where\(mask, new, t\)"),
    (lambda t: np.fill_diagonal(t.reshape(1, 3), 0.0), r"numpy\.fill_diagonal writes.*np\.eye"),
    (lambda t: np.put_along_axis(t, np.array([0]), 1.0, axis=0), r"numpy\.put_along_axis writes"),
    (lambda t: np.copyto(np.zeros(3), t), r"numpy\.copyto writes.*np\.where\(where, src, dst\)"),
    (lambda t: t.fill(0.0), r"t\.fill\(value\) would overwrite.*np\.full_like"),
    (lambda t: t.resize((3, 1)), r"t\.resize\(shape\) would change t in place.*t\.reshape\(shape\)"),
    (lambda t: np.random.default_rng(0).shuffle(t), r"shuffle\(t\)\) permutes t in place.*rng\.permutation"),
    (lambda t: np.add.at(np.zeros(3), [0, 0], t), r"numpy\.add\.at.*np\.eye\(V\)\[ids\.ravel\(\)\]\.T @ dY.*bincount"),
    (lambda t: np.geomspace(t[0], t[1], 3), r"numpy\.geomspace.*Recorded equivalent: np\.exp\(np\.linspace"),
])
def test_in_place_and_unrecorded_names_say_what_to_write(call, words):
    with pytest.raises(TypeError, match=words):
        call(ap.Variable([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("call", [lambda m, c: m.fft.irfft(c), lambda m, c: m.fft.irfft(c, axis=0, norm="ortho"),
                                  lambda m, c: m.fft.irfft2(c)])
def test_irfft_of_a_complex_variable_against_autograd(call):
    """The gradient in autograd's convention inside (conjugated at tape.gradient: TF's, PyTorch's)."""
    import autograd
    import autograd.numpy as agn

    rng = np.random.default_rng(3)
    c0 = rng.normal(size=(3, 5)) + 1j * rng.normal(size=(3, 5))
    w = rng.normal(size=call(np, c0).shape)
    c = ap.Variable(c0)
    with ap.GradientTape() as tape:
        loss = np.sum(call(np, c) * w)
    ref = autograd.grad(lambda z: agn.sum(call(agn, z) * w))(c0)
    np.testing.assert_allclose(tape.gradient(loss, c).numpy(), np.conj(ref), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", [np.tril, np.triu])
@pytest.mark.parametrize("k", [-1, 0, 1])
def test_tril_triu_of_a_vector_are_numpys_square_matrix_and_its_gradient(f, k):
    # numpy broadcasts a 1-D m as the rows of an (n, n) matrix (docs21: it had raised IndexError)
    v = np.array([1.0, -2.0, 3.0])
    G = np.arange(1.0, 10.0).reshape(3, 3)
    x = ap.Variable(v)
    with ap.GradientTape() as tape:
        y = f(x, k)
        loss = np.sum(y * G)
    np.testing.assert_array_equal(y.numpy(), f(v, k))
    kept = f(np.ones((3, 3)), k)  # v[j] sits in column j of every row; d/dv[j] = sum of G[i, j] kept
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), np.sum(kept * G, axis=0))
