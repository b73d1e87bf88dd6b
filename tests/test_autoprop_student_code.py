"""The tape on code students write: Python's scalar conversions that silently cut a gradient
path, det at singular matrices, cholesky(upper=True), and gaps in common student
code (copy, round, sort, flat, full_like, svd/eigh options, forward mode with an integer
primal). Oracles: HIPS autograd, central differences, closed forms."""

from __future__ import annotations

import linecache
import math
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import central

import autoprop as ap


def _escapes(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = fn()
    return out, [w for w in rec if issubclass(w.category, ap.TapeEscapeWarning)]


# --- 1. float()/math.*/np.float64/complex/fromiter of a tensor that carries gradient --------
CONVERSIONS = [
    ("math.exp", lambda t: math.exp(t)),
    ("math.sqrt", lambda t: math.sqrt(t)),
    ("math.log", lambda t: math.log(t)),
    ("math.tanh", lambda t: math.tanh(t)),
    ("math.pow", lambda t: math.pow(t, 3)),
    ("float", lambda t: float(t)),
    ("np.float64", lambda t: np.float64(t)),
    ("complex", lambda t: complex(t).real),
    ("int", lambda t: int(t)),
]


@pytest.mark.parametrize("name, conv", CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_a_python_number_conversion_of_a_tracked_tensor_warns_at_the_users_line(name, conv):
    x = ap.Variable([1.0, 2.0], name="x")
    with ap.GradientTape() as tape:
        y, got = _escapes(lambda: conv(x[0]) * x[1])
    assert len(got) == 1, name
    msg = str(got[0].message)
    # the warning points at the line that converts (in CONVERSIONS above)
    assert got[0].filename == __file__
    assert name.split(".")[-1] + "(t" in linecache.getline(__file__, got[0].lineno)
    assert "getitem" in msg and "shape ()" in msg and "Python number" in msg
    assert "np.exp(t)" in msg and ".item()" in msg and "stop_gradient" in msg
    # the path is cut, so the gradient would miss it (dx[0] = 0): refused since session 24; int()
    # is piecewise constant, so its derivative really is 0 and the gradient stands
    if name == "int":
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 1.0])
    else:
        with pytest.raises(ap.TapeEscapeError, match="left the tape implicitly"):
            tape.gradient(y, x)


@pytest.mark.parametrize("name, conv", CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_strict_mode_refuses_every_python_number_conversion(name, conv):
    x = ap.Variable([1.0, 2.0], name="x")
    with ap.GradientTape(), ap.strict_mode():
        with pytest.raises(ap.TapeEscapeError, match="Python number|plain numpy array"):
            conv(x[0])


def test_the_testers_example_warns_and_the_recorded_spelling_matches_autograd():
    x = ap.Variable([1.0, 2.0], name="x")
    with ap.GradientTape() as tape, ap.strict_mode():
        with pytest.raises(ap.TapeEscapeError, match="float\\(\\)"):
            math.exp(x[0]) * x[1]
        y = np.exp(x[0]) * x[1]  # the fix the message names
    want = autograd.grad(lambda v: anp.exp(v[0]) * v[1])(np.array([1.0, 2.0]))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-15)
    np.testing.assert_allclose(want, [2 * math.e, math.e], rtol=1e-15)


def test_fromiter_over_a_tensor_warns_once_for_the_line():
    x = ap.Variable([1.0, 2.0, 3.0], name="x")
    with ap.GradientTape():  # one warning per line per recording (the tape counts the three)
        s, got = _escapes(lambda: np.sum(np.fromiter((v for v in x), float)))
    assert s == 6.0 and len(got) == 1 and "not repeated" in str(got[0].message)


def test_explicit_ways_and_tensors_without_gradient_stay_quiet():
    x = ap.Variable([1.0, 2.0], name="x")
    c = ap.constant([3.0, 4.0])
    with ap.GradientTape():
        y = x * 2
        _, got = _escapes(lambda: (y.numpy(), y[0].item(), y.numpy().tolist(), float(ap.stop_gradient(y[0])),
                                   math.exp(c[0]), float(np.sum(c)), int(np.argmax(y))))
        assert not got
    _, got = _escapes(lambda: math.exp(x[0]))  # no tape recording
    assert not got
    with ap.GradientTape(watch_accessed_variables=False):
        _, got = _escapes(lambda: float(x[0]))  # not watched, never will be
    assert not got


def test_forward_mode_warns_for_a_tensor_with_a_tangent():
    x = ap.constant([1.0, 2.0])
    with ap.ForwardAccumulator(x, [1.0, 0.0]) as acc:
        (y, z), got = _escapes(lambda: (math.exp(x[0]) * x[1], x[1].item()))
    assert len(got) == 1 and "ForwardAccumulator" in str(got[0].message)
    with pytest.raises(ap.TapeEscapeError, match="ForwardAccumulator.jvp"):  # it would be 0, not 2e
        acc.jvp(y)


def test_explain_says_which_path_escaped_when_the_target_is_still_connected():
    x = ap.Variable([1.0, 2.0], name="x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ap.TapeEscapeWarning)
        with ap.GradientTape(persistent=True) as tape:
            y = math.exp(x[0]) * x[1]
            z = ap.sum(x * x)
    why = tape.explain(y, x)
    assert why.split(": ", 1)[1].startswith("connected")
    assert "path was cut" in why and "'getitem' (recorded op #0)" in why and "float()" in why
    # a target computed only from recorded ops is not blamed for an unrelated escape
    assert "path was cut" not in tape.explain(z, x)


def test_round_of_a_tensor_is_recorded_and_passes_no_gradient():
    x = ap.Variable([1.4, 2.6], name="x")
    with ap.GradientTape() as tape:
        (r, _), got = _escapes(lambda: (round(x), round(x[0])))
        y = ap.sum(round(x) * x)
    assert not got
    assert isinstance(r, ap.Tensor) and r.numpy().tolist() == [1.0, 3.0]
    np.testing.assert_array_equal(round(ap.constant([1.234, 5.678]), 1).numpy(), [1.2, 5.7])
    g = tape.gradient(y, x).numpy()  # d(round(x) * x)/dx = round(x): the round path passes none
    np.testing.assert_array_equal(g, [1.0, 3.0])


# --- 2. det at singular matrices: the adjugate ----------------------------------------------
def _cofactor(m):
    """Closed form: cof(A)_ij = (-1)^(i+j) det(A without row i, column j)."""
    n = m.shape[-1]
    out = np.empty_like(m)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(m, i, axis=0), j, axis=1)
            out[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return out


SINGULAR = {
    "2x2": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "3x3_rank2": np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),
    "3x3_rank1": np.outer([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]),
    "4x4_rank3": np.array([[2.0, 1.0, 0.0, 3.0], [1.0, 3.0, 1.0, 5.0], [0.0, 1.0, 4.0, 5.0], [1.0, 0.5, 2.0, 3.5]]),
    "zero": np.zeros((3, 3)),
    "1x1_zero": np.zeros((1, 1)),
}


@pytest.mark.parametrize("name", SINGULAR)
def test_det_gradient_and_jvp_at_a_singular_matrix_are_the_adjugate(name):
    m = SINGULAR[name]
    x = ap.constant(m)
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = np.linalg.det(x)
    g = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(g, _cofactor(m), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(g, central(np.linalg.det, m, h=1e-5), rtol=1e-6, atol=1e-6)
    u = np.random.default_rng(3).standard_normal(m.shape)
    with ap.ForwardAccumulator(x, u) as acc:
        y = np.linalg.det(x)
    assert float(acc.jvp(y)) == pytest.approx(np.sum(_cofactor(m) * u), rel=1e-9, abs=1e-9)


def test_the_testers_2x2_singular_det():
    x = ap.constant([[1.0, 2.0], [2.0, 4.0]])
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = np.linalg.det(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    with ap.ForwardAccumulator(x, np.eye(2)) as acc:
        y = np.linalg.det(x)
    assert float(acc.jvp(y)) == pytest.approx(5.0, abs=1e-12)


def test_one_singular_matrix_does_not_spoil_a_batched_det():
    regular = np.array([[2.0, 1.0], [1.0, 3.0]])
    batch = np.stack([SINGULAR["2x2"], regular])
    x = ap.constant(batch)
    w = np.array([1.5, -0.5])
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.linalg.det(x) * w)
    g = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(g[0], 1.5 * _cofactor(batch[0]), atol=1e-12)
    want = autograd.grad(lambda a: anp.linalg.det(a))(regular)  # regular: autograd is the oracle
    np.testing.assert_allclose(g[1], -0.5 * want, rtol=1e-12)


def test_det_second_derivative_at_a_singular_matrix():
    m, wgt = SINGULAR["3x3_rank2"], np.arange(9.0).reshape(3, 3) - 4.0
    x = ap.constant(m)
    with ap.GradientTape() as outer:
        outer.watch(x)
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = np.linalg.det(x)
        z = np.sum(inner.gradient(y, x) * wgt)
    h = outer.gradient(z, x).numpy()
    np.testing.assert_allclose(h, central(lambda a: np.sum(_cofactor(a) * wgt), m, h=1e-5), rtol=1e-6, atol=1e-6)
    assert np.any(h != 0)


# --- 3. cholesky(upper=True) ----------------------------------------------------------------
def test_cholesky_upper_gradient_and_jvp_against_central_differences():
    spd = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    a = spd.copy()
    a[2, 0] = 9.0  # numpy reads only the upper triangle with upper=True: the lower is ignored
    wgt = np.random.default_rng(1).standard_normal((3, 3))
    x = ap.constant(a)
    with ap.GradientTape() as tape:
        tape.watch(x)
        u = np.linalg.cholesky(x, upper=True)
        y = ap.sum(u * wgt)
    np.testing.assert_allclose(u.numpy(), np.linalg.cholesky(spd).T, rtol=1e-14)
    g = tape.gradient(y, x).numpy()
    num = central(lambda m: np.sum(np.linalg.cholesky(m, upper=True) * wgt), a, h=1e-5)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-7)
    assert np.all(np.tril(g, -1) == 0)  # the gradient lives on the triangle numpy reads
    # the symmetric-perturbation derivative agrees with autograd's (lower) cholesky of A^T
    sym = autograd.grad(lambda m: anp.sum(anp.linalg.cholesky(m).T * wgt))(spd)
    np.testing.assert_allclose(g + g.T - np.diag(np.diag(g)), sym + sym.T - np.diag(np.diag(sym)), rtol=1e-10)
    v = np.random.default_rng(2).standard_normal((3, 3))
    with ap.ForwardAccumulator(x, v) as acc:
        y = ap.sum(np.linalg.cholesky(x, upper=True) * wgt)
    assert float(acc.jvp(y)) == pytest.approx(float(np.sum(num * v)), rel=1e-6)


# --- 4. tape gaps in common student code ----------------------------------------------------
def test_copy_and_np_copy_are_recorded_identities():
    x = ap.Variable([[3.0, 1.0], [2.0, 5.0]], name="x")
    with ap.GradientTape() as tape:
        c, d = x.copy(), np.copy(x, order="F")
        y = ap.sum(c * d * np.exp(x))
    assert isinstance(c, ap.Tensor) and c is not x and isinstance(d, ap.Tensor)
    want = autograd.grad(lambda v: anp.sum(v * v * anp.exp(v)))(x.numpy())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-14)
    before = c.numpy()
    x.assign([[0.0, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(c.numpy(), before)  # a copy of a Variable keeps its value


def test_full_like_with_a_tensor_fill_value_is_recorded():
    x = ap.Variable([1.0, 2.0, 3.0], name="x")
    with ap.GradientTape() as tape:
        f = np.full_like(x, x[1] * 2.0)
        y = ap.sum(f * x)
    np.testing.assert_array_equal(f.numpy(), [4.0, 4.0, 4.0])
    want = autograd.grad(lambda v: anp.sum(anp.ones(3) * v[1] * 2.0 * v))(x.numpy())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-15)
    assert np.full_like(ap.constant([1, 2]), ap.constant(2.5)).numpy().tolist() == [2, 2]  # numpy's cast


def test_in_place_sort_and_flat_say_what_to_write_instead():
    x = ap.constant([3.0, 1.0, 2.0])
    with pytest.raises(TypeError, match=r"np\.sort\(t"):
        x.sort()
    with pytest.raises(AttributeError, match=r"t\.ravel\(\)"):
        x.flat  # noqa: B018
    np.testing.assert_array_equal(np.sort(x).numpy(), [1.0, 2.0, 3.0])


def test_eigh_upper_reads_the_upper_triangle_with_the_right_derivative():
    spd = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    a = spd.copy()
    a[2, 0], a[1, 0] = 7.0, -3.0  # ignored with UPLO='U'
    wgt = np.random.default_rng(4).standard_normal((4, 3))
    x = ap.constant(a)

    def loss_np(m):
        w, v = np.linalg.eigh(m, UPLO="U")
        return np.sum(wgt[0] * w) + np.sum(wgt[1:] * v)

    with ap.GradientTape() as tape:
        tape.watch(x)
        w, v = np.linalg.eigh(x, UPLO="U")
        y = ap.sum(wgt[0] * w) + ap.sum(wgt[1:] * v)
    ref = np.linalg.eigh(a, UPLO="U")
    np.testing.assert_allclose(w.numpy(), ref.eigenvalues, rtol=1e-13)
    np.testing.assert_allclose(v.numpy(), ref.eigenvectors, atol=1e-13)  # numpy's signs
    g = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(g, central(loss_np, a, h=1e-5), rtol=1e-6, atol=1e-7)
    assert np.all(np.tril(g, -1) == 0)
    wv = np.linalg.eigvalsh(x, UPLO="U")
    np.testing.assert_allclose(wv.numpy(), np.linalg.eigvalsh(a, UPLO="U"), rtol=1e-13)


def test_forward_accumulator_warns_for_an_integer_primal_as_the_tape_does():
    n = ap.constant([1, 2])
    with pytest.warns(UserWarning, match="int64 is not differentiable"):
        with ap.GradientTape() as tape:
            tape.watch(n)
    with pytest.warns(UserWarning, match="ForwardAccumulator: a primal of dtype int64 is not differentiable"):
        acc = ap.ForwardAccumulator(n, [1, 1])
    with acc:
        y = n * 2
    assert acc.jvp(y) is None


def _svd_loss(u_w, vh_w, s_w, ref_u):
    """sum(s_w * s) + sum(u_w * U[:, :k]) + sum(vh_w * Vh[:k]) of numpy's full SVD, with the
    signs of the first k singular vectors fixed to those of ``ref_u`` (locally constant)."""
    def f(m):
        u, s, vh = np.linalg.svd(m)
        k = s.shape[-1]
        d = np.sign(np.sum(u[:, :k] * ref_u[:, :k], axis=0))
        return np.sum(s_w * s) + np.sum(u_w * u[:, :k] * d) + np.sum(vh_w * vh[:k] * d[:, None])
    return f


@pytest.mark.parametrize("shape", [(3, 5), (5, 3)])
def test_svd_full_matrices_of_a_non_square_matrix_differentiates_what_is_unique(shape):
    m = np.random.default_rng(8).standard_normal(shape)
    k = min(shape)
    r = np.random.default_rng(9)
    s_w, u_w, vh_w = r.standard_normal(k), r.standard_normal((shape[0], k)), r.standard_normal((k, shape[1]))
    x = ap.constant(m)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        u, s, vh = np.linalg.svd(x)  # full_matrices=True, numpy's default
        only_s = ap.sum(s * s_w)
        unique = only_s + ap.sum(u[:, :k] * u_w) + ap.sum(vh[:k] * vh_w)
        extra = ap.sum(u) + ap.sum(vh)
    ref = np.linalg.svd(m)
    for got, want in zip((u, s, vh), ref):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-13)  # numpy's signs too
    np.testing.assert_allclose(tape.gradient(only_s, x).numpy(),
                               autograd.grad(lambda a: anp.sum(anp.linalg.svd(a, compute_uv=False) * s_w))(m),
                               rtol=1e-10)
    np.testing.assert_allclose(tape.gradient(unique, x).numpy(), central(_svd_loss(u_w, vh_w, s_w, ref[0]), m, h=1e-5),
                               rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="extra singular vectors"):
        tape.gradient(extra, x)
    with ap.ForwardAccumulator(x, np.ones(shape)) as acc:
        u, s, vh = np.linalg.svd(x)
        y = ap.sum(s * s_w)
    assert float(acc.jvp(y)) == pytest.approx(float(np.sum(tape.gradient(only_s, x).numpy())), rel=1e-10)
    extra_tangent = acc.jvp(u).numpy()[:, k:] if shape[0] > k else acc.jvp(vh).numpy()[k:]
    assert np.isnan(extra_tangent).all()  # undefined, never a silent number


def test_ndarray_augmented_assignment_of_a_tensor_names_the_variable_and_the_fix():
    """`total = np.zeros(3); total += v * i` was refused as "numpy.add(..., out=...) ... Drop
    out=", though the student wrote no out=; `total = total + v * i` gives the gradient 3."""
    v = ap.Variable(np.array([1.0, -2.0, 3.0]))
    with ap.GradientTape() as tape:
        total = np.zeros(3)
        with pytest.raises(TypeError, match=r"`total` is a numpy array .*`total \*= <Tensor>`.*"
                                            r"Write `total = total \* \.\.\.`"):
            total *= v
        for i in range(3):
            total = total + v * i
        y = np.sum(total)
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(np.zeros(3), [0.0, 0.0, 0.0])


def test_item_assignment_into_a_constant_tensor_explains_the_numpy_way():
    v = ap.Variable(np.array([1.0, -2.0, 3.0]))
    with ap.GradientTape() as tape:
        z = np.zeros_like(v)
        with pytest.raises(TypeError, match=r"constants too.*carries no gradient.*z = np.zeros\(t.shape\)"):
            z[0] = 1.0
        z = np.zeros(v.shape)
        z[0] = 1.0
        y = np.sum(z * v)
        with pytest.raises(TypeError, match="immutable: item assignment"):
            y[()] = 0.0  # carries gradient: the general message
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [1.0, 0.0, 0.0])


def test_item_assignment_into_a_mask_tensor_gives_the_working_line():
    # before: "Tensors are immutable, constants too ... np.zeros_like(t) ...": nothing about a mask
    x = ap.Variable(np.array([[1.0, -2.0, 3.0], [-1.0, -0.5, 2.0]]))
    with ap.GradientTape() as tape:
        m = x > 0
        with pytest.raises(TypeError, match=r"bool Tensor of shape \(2, 3\) is a boolean mask.*TensorFlow and jax.*"
                                            r"m = \(x > 0\)\.numpy\(\), then m\[:, 0\] = True.*np\.where"):
            m[:, 0] = True
        m = (x > 0).numpy()  # the line the message gives, which works
        m[:, 0] = True
        y = np.sum(np.where(m, x, 0.0) ** 2)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[2.0, 0.0, 6.0], [-2.0, 0.0, 4.0]])
    idx = ap.constant(np.array([0, 2, 1]))
    with pytest.raises(TypeError, match=r"int64 Tensor of shape \(3,\) is an integer Tensor.*numpy\(\)"):
        idx[0] = 1
