"""The gradient tape's core: closed forms, the shared gradient cases, and HIPS autograd."""

import subprocess
import sys
import textwrap
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from primitive_samples import SAMPLES

import autoprop as ap


def test_seed_snippet_prints_34_and_20():
    code = textwrap.dedent(
        """
        import autoprop as ap
        x = ap.Variable(3.0)
        with ap.GradientTape() as tape:
            y = x**3 + x**2 + x + 5
        print(tape.gradient(y, x).numpy())
        with ap.GradientTape() as t1:
            with ap.GradientTape() as t2:
                y = x**3 + x**2 + x + 5
            d1 = t2.gradient(y, x)
        print(t1.gradient(d1, x).numpy())
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["34.0", "20.0"]


# --- C01: unwatched sources -----------------------------------------------------------
def test_c01_constant_unwatched_is_none_and_watched_is_6():
    x = ap.constant(3.0)
    with ap.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x).numpy() == 6.0


def test_c01_unconnected_variable_none_or_zero():
    a, b = ap.Variable(2.0), ap.Variable(5.0)
    with ap.GradientTape(persistent=True) as tape:
        y = 3 * a
    assert tape.gradient(y, a).numpy() == 3.0
    assert tape.gradient(y, b) is None
    z = tape.gradient(y, b, unconnected_gradients="zero")
    assert z.numpy() == 0.0 and z.shape == ()


# --- C07: tape lifetime ----------------------------------------------------------------
def test_c07_persistent_tape_repeated_calls_do_not_accumulate():
    x = ap.constant(3.0)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    for _ in range(3):
        assert tape.gradient(z, x).numpy() == 108.0
        assert tape.gradient(y, x).numpy() == 6.0


def test_c07_second_call_on_non_persistent_tape_raises_with_reason():
    x = ap.constant(3.0)
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x).numpy() == 6.0
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.gradient(y, x)


# --- C10: broadcasting reductions -------------------------------------------------------
def test_c10_broadcast_add_reduces_to_input_shape():
    X = ap.constant(np.zeros((4, 4)))
    b = ap.constant([1.0, 2.0, 3.0, 4.0])
    W = np.arange(16.0).reshape(4, 4)
    with ap.GradientTape() as tape:
        tape.watch([X, b])
        L = ap.sum(W * (X + b))
    dX, db = tape.gradient(L, [X, b])
    np.testing.assert_array_equal(dX.numpy(), W)
    np.testing.assert_array_equal(db.numpy(), [24.0, 28.0, 32.0, 36.0])
    assert db.shape == (4,)


def test_c10_size_one_axes_are_kept():
    rng = np.random.default_rng(0)
    a = ap.constant([2.0])
    B = ap.constant(rng.standard_normal((5, 4)))
    p = ap.constant(rng.standard_normal((4, 1)))
    q = ap.constant(rng.standard_normal((1, 4)))
    with ap.GradientTape() as tape:
        tape.watch([a, p, q])
        L1 = ap.sum(a * B)
        L2 = ap.sum(p * q)
    da, dp, dq = tape.gradient([L1, L2], [a, p, q])
    assert da.shape == (1,)
    np.testing.assert_allclose(da.numpy(), [B.numpy().sum()])
    assert dp.shape == (4, 1) and dq.shape == (1, 4)
    np.testing.assert_allclose(dp.numpy(), np.full((4, 1), q.numpy().sum()))
    np.testing.assert_allclose(dq.numpy(), np.full((1, 4), p.numpy().sum()))


# --- C12: empty and 0-d ------------------------------------------------------------------
def test_c12_empty_and_zero_d():
    A = ap.constant(np.zeros((4, 0)))
    b = ap.constant(np.ones((4, 1)))
    with ap.GradientTape() as tape:
        tape.watch([A, b])
        L = ap.sum(A + b)
    dA, db = tape.gradient(L, [A, b])
    assert dA.shape == (4, 0)
    np.testing.assert_array_equal(db.numpy(), np.zeros((4, 1)))
    x = ap.constant(1.5)
    with ap.GradientTape() as tape:
        tape.watch(x)
        s = ap.sum(x)
    g = tape.gradient(s, x)
    assert g.shape == () and g.numpy() == 1.0


# --- C13: matmul transposes ----------------------------------------------------------------
def test_c13_square_matmul():
    A = ap.constant([[1.0, 2.0], [3.0, 4.0]])
    B = ap.constant([[5.0, 6.0], [7.0, 8.0]])
    with ap.GradientTape() as tape:
        tape.watch([A, B])
        L = ap.sum(A @ B)
    dA, dB = tape.gradient(L, [A, B])
    np.testing.assert_array_equal(dA.numpy(), [[11.0, 15.0], [11.0, 15.0]])
    np.testing.assert_array_equal(dB.numpy(), [[4.0, 4.0], [6.0, 6.0]])


def test_c13_matrix_vector():
    A = ap.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    v = ap.constant([1.0, 0.0, -1.0])
    with ap.GradientTape() as tape:
        tape.watch([A, v])
        y = A @ v
    dA, dv = tape.gradient(y, [A, v], output_gradients=np.array([1.0, 2.0]))
    np.testing.assert_array_equal(dA.numpy(), [[1.0, 0.0, -1.0], [2.0, 0.0, -2.0]])
    np.testing.assert_array_equal(dv.numpy(), [9.0, 12.0, 15.0])


@pytest.mark.parametrize(
    "sa,sb",
    [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
     ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4))],
)
def test_matmul_all_rank_combinations_match_autograd(sa, sb):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    g = rng.standard_normal(np.matmul(a, b).shape)
    A, B = ap.constant(a), ap.constant(b)
    with ap.GradientTape() as tape:
        tape.watch([A, B])
        y = A @ B
    dA, dB = tape.gradient(y, [A, B], output_gradients=g)
    ref = autograd.grad(lambda a_, b_: anp.sum(anp.matmul(a_, b_) * g), argnum=(0, 1))(a, b)
    np.testing.assert_allclose(dA.numpy(), ref[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dB.numpy(), ref[1], rtol=1e-12, atol=1e-12)


def test_transposed_weight_gradient_is_contiguous_and_right():
    rng = np.random.default_rng(2)
    X = ap.constant(rng.standard_normal((6, 4)))
    W = ap.Variable(rng.standard_normal((3, 4)))
    g = rng.standard_normal((6, 3))
    with ap.GradientTape() as tape:
        y = X @ W.T
    dW = tape.gradient(y, W, output_gradients=g)
    np.testing.assert_allclose(dW.numpy(), g.T @ X.numpy(), rtol=1e-13)


# --- C14: softmax cross-entropy through the tape ----------------------------------------------
def test_c14_log_softmax_cross_entropy_large_logits():
    z = ap.constant([[1000.0, 1001.0, 1002.0]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        with ap.GradientTape() as tape:
            tape.watch(z)
            loss = -ap.mean(ap.log_softmax(z)[np.arange(1), np.array([0])])
        dz = tape.gradient(loss, z)
    np.testing.assert_allclose(loss.numpy(), 2.40760596444, rtol=1e-11)
    np.testing.assert_allclose(dz.numpy(), [[-0.9099694268, 0.2447284711, 0.6652409558]], atol=1e-10)
    z2 = ap.constant([[0.0, -1000.0]])
    with ap.GradientTape() as tape:
        tape.watch(z2)
        loss2 = -ap.mean(ap.log_softmax(z2)[np.arange(1), np.array([1])])
    np.testing.assert_allclose(loss2.numpy(), 1000.0)
    np.testing.assert_allclose(tape.gradient(loss2, z2).numpy(), [[1.0, -1.0]])


# --- elementwise and reduction primitives against autograd -----------------------------------
# name (the primitive's, for its domain in tests/primitive_samples.py), tape function,
# autograd function
UNARY = [
    ("exp", ap.exp, anp.exp), ("log", ap.log, anp.log), ("tanh", ap.tanh, anp.tanh),
    ("sqrt", ap.sqrt, anp.sqrt), ("square", ap.square, anp.square),
    ("sin", ap.sin, anp.sin), ("cos", ap.cos, anp.cos),
    ("log1p", ap.log1p, anp.log1p), ("expm1", ap.expm1, anp.expm1),
    ("sigmoid", ap.sigmoid, lambda x: 1 / (1 + anp.exp(-x))),
    ("relu", ap.relu, lambda x: anp.maximum(x, 0.0)),
    ("absolute", ap.absolute, anp.abs),
    ("negative", lambda t: -t, lambda x: -x),
]


@pytest.mark.parametrize("name,f,fa", UNARY, ids=[u[0] for u in UNARY])
def test_unary_first_and_second_derivatives_match_autograd(name, f, fa):
    rng = np.random.default_rng(3)
    x = rng.uniform(*SAMPLES[name].dom(0), (3, 4))
    if name in ("relu", "absolute"):
        x = x * np.where(rng.random((3, 4)) < 0.5, -1.0, 1.0)  # both sides of the kink, never at 0
    g = rng.standard_normal(x.shape)
    X = ap.Variable(x)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = f(X)
        d1 = inner.gradient(y, X, output_gradients=g)
        s = ap.sum(d1 * g)
    d2 = outer.gradient(s, X, unconnected_gradients="zero")  # linear ops: d1 is constant
    ref1 = autograd.grad(lambda x_: anp.sum(fa(x_) * g))(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # autograd: "Output seems independent of input"
        ref2 = autograd.grad(lambda x_: anp.sum(autograd.grad(lambda z: anp.sum(fa(z) * g))(x_) * g))(x)
    np.testing.assert_allclose(y.numpy(), fa(x), rtol=1e-13)
    np.testing.assert_allclose(d1.numpy(), ref1, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d2.numpy(), ref2, rtol=1e-9, atol=1e-12)


BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)), ((), (2, 3))]
BINARY = [
    ("add", lambda a, b: a + b, lambda a, b: a + b),
    ("sub", lambda a, b: a - b, lambda a, b: a - b),
    ("mul", lambda a, b: a * b, lambda a, b: a * b),
    ("div", lambda a, b: a / b, lambda a, b: a / b),
    ("pow", lambda a, b: a**b, lambda a, b: a**b),
    ("maximum", ap.maximum, anp.maximum),
    ("minimum", ap.minimum, anp.minimum),
]


@pytest.mark.parametrize("sa,sb", BINARY_SHAPES)
@pytest.mark.parametrize("name,f,fa", BINARY, ids=[b[0] for b in BINARY])
def test_broadcasting_binary_ops_match_autograd(name, f, fa, sa, sb):
    rng = np.random.default_rng(4)
    a = rng.uniform(0.5, 2.0, sa)
    b = rng.uniform(0.5, 2.0, sb) + (0.3 if name in ("maximum", "minimum") else 0.0)
    g = rng.standard_normal(np.broadcast_shapes(sa, sb))
    A, B = ap.constant(a), ap.constant(b)
    with ap.GradientTape() as tape:
        tape.watch([A, B])
        y = f(A, B)
    dA, dB = tape.gradient(y, [A, B], output_gradients=g)
    ref = autograd.grad(lambda x, z: anp.sum(fa(x, z) * g), argnum=(0, 1))(a, b)
    assert dA.shape == sa and dB.shape == sb
    np.testing.assert_allclose(dA.numpy(), ref[0], rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(dB.numpy(), ref[1], rtol=1e-11, atol=1e-12)


REDUCTIONS = [
    ("sum", ap.sum, anp.sum), ("mean", ap.mean, anp.mean), ("max", ap.max, anp.max),
    ("min", ap.min, anp.min), ("logsumexp", ap.logsumexp, None),
]


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 2), False), (-1, False)])
@pytest.mark.parametrize("name,f,fa", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reductions_match_autograd(name, f, fa, axis, keepdims):
    from autograd.scipy.special import logsumexp as alse

    fa = fa or (lambda x, axis=None, keepdims=False: alse(x, axis=axis, keepdims=keepdims))
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 5))
    g = rng.standard_normal(np.shape(fa(x, axis=axis, keepdims=keepdims)))
    X = ap.constant(x)
    with ap.GradientTape() as tape:
        tape.watch(X)
        y = f(X, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(y.numpy(), fa(x, axis=axis, keepdims=keepdims), rtol=1e-12)
    dX = tape.gradient(y, X, output_gradients=g)
    ref = autograd.grad(lambda z: anp.sum(fa(z, axis=axis, keepdims=keepdims) * g))(x)
    np.testing.assert_allclose(dX.numpy(), ref, rtol=1e-11, atol=1e-12)


def test_log_softmax_and_softmax_match_autograd():
    from autograd.scipy.special import logsumexp as alse

    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 5)) * 3
    g = rng.standard_normal((4, 5))
    X = ap.constant(x)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(X)
        ls = ap.log_softmax(X)
        sm = ap.softmax(X)
    ref_ls = autograd.grad(lambda z: anp.sum((z - alse(z, axis=-1, keepdims=True)) * g))(x)
    ref_sm = autograd.grad(lambda z: anp.sum(anp.exp(z - alse(z, axis=-1, keepdims=True)) * g))(x)
    np.testing.assert_allclose(tape.gradient(ls, X, output_gradients=g).numpy(), ref_ls, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(tape.gradient(sm, X, output_gradients=g).numpy(), ref_sm, rtol=1e-11, atol=1e-13)


def test_repeated_integer_indices_accumulate():
    x = ap.constant([1.0, 2.0, 3.0])
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = ap.sum(x[np.array([0, 0, 2, 0])])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 0.0, 1.0])


def test_sources_keep_their_structure():
    a, b, c = ap.Variable(1.0), ap.Variable(2.0), ap.Variable(3.0)
    with ap.GradientTape() as tape:
        y = a * b * c
    g = tape.gradient(y, {"a": a, "rest": [b, (c,)]})
    assert set(g) == {"a", "rest"}
    assert g["a"].numpy() == 6.0 and g["rest"][0].numpy() == 3.0 and g["rest"][1][0].numpy() == 2.0
    assert isinstance(g["rest"][1], tuple)


def test_float32_gradient_keeps_dtype():
    x = ap.Variable(np.array([1.0, 2.0], dtype=np.float32))
    with ap.GradientTape() as tape:
        y = ap.sum(x * 2.5)
    g = tape.gradient(y, x)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), [2.5, 2.5])


def test_plain_numpy_calls_are_recorded():
    x = ap.Variable(np.array([0.5, 1.0, 2.0]))
    with ap.GradientTape() as tape:
        y = np.sum(np.exp(x) * np.tanh(x))
    g = tape.gradient(y, x).numpy()
    xv = x.numpy()
    np.testing.assert_allclose(g, np.exp(xv) * np.tanh(xv) + np.exp(xv) * (1 - np.tanh(xv) ** 2), rtol=1e-13)


def test_unsupported_numpy_function_names_itself():
    x = ap.Variable(np.array([0.5, 1.0]))
    with pytest.raises(TypeError, match="numpy.spacing"):
        np.spacing(x)


def test_in_place_operator_rebinds_a_tensor_and_item_assignment_is_refused():
    t = ap.constant([1.0, 2.0])
    key = t._key
    t += 1  # t = t + 1: a new tensor, as TF's eager tensors
    assert t._key != key and t.numpy().tolist() == [2.0, 3.0]
    t0 = t  # an alias: numpy's `t += 1` would change t0 too, so it is refused (tests/test_autoprop_aliases.py)
    with pytest.raises(TypeError, match="something else also holds"):
        t += 1
    assert t0.numpy().tolist() == [2.0, 3.0]
    with pytest.raises(TypeError, match="immutable"):
        t[0] = 3.0
    v = ap.Variable([1.0, 2.0])
    with pytest.raises(RuntimeError, match="assign_add"):
        v += 1


def test_c25_array_changed_after_forward_does_not_change_gradient():
    X = ap.Variable(np.ones((2, 2)))
    s = np.array(5.0)
    with ap.GradientTape() as tape:
        L = ap.sum(X * s)
    s[...] = 10.0
    np.testing.assert_array_equal(tape.gradient(L, X).numpy(), np.full((2, 2), 5.0))


def test_c25_numpy_view_of_tensor_is_read_only():
    a = ap.Variable(np.ones(3))
    with ap.GradientTape() as tape:
        b = a**2
        c = b**2
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(b)[1] = 3.3
    b.numpy()[1] = 3.3  # a copy: changing it cannot change the tape
    np.testing.assert_array_equal(tape.gradient(c, a).numpy(), [4.0, 4.0, 4.0])


def test_long_chain_has_no_recursion_limit():
    x = ap.Variable(1.0)
    with ap.GradientTape() as tape:
        y = x
        for _ in range(20000):
            y = y * 1.0
    assert tape.gradient(y, x).numpy() == 1.0


def test_gradient_inside_block_warns():
    x = ap.Variable(2.0)
    with ap.GradientTape() as tape:
        y = x * x
        with pytest.warns(UserWarning, match="inside the tape"):
            g = tape.gradient(y, x)
    assert g.numpy() == 4.0


def test_fused_sparse_softmax_cross_entropy_matches_composite_to_second_order():
    from autoprop.core import registry as R

    rng = np.random.default_rng(11)
    z = rng.standard_normal((5, 4)) * 3
    y = np.array([0, 3, 3, 1, 2])
    g = rng.standard_normal(5)
    Z = ap.Variable(z)
    with ap.GradientTape(persistent=True) as outer:
        with ap.GradientTape(persistent=True) as inner:
            fused = R.sparse_softmax_cross_entropy_with_logits(Z, y)
            composite = -ap.log_softmax(Z)[np.arange(5), y]
        d_fused = inner.gradient(fused, Z, output_gradients=g)
        d_comp = inner.gradient(composite, Z, output_gradients=g)
        s_fused, s_comp = ap.sum(d_fused * d_fused), ap.sum(d_comp * d_comp)
    np.testing.assert_allclose(fused.numpy(), composite.numpy(), rtol=1e-14)
    np.testing.assert_allclose(d_fused.numpy(), d_comp.numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(outer.gradient(s_fused, Z).numpy(), outer.gradient(s_comp, Z).numpy(),
                               rtol=1e-11, atol=1e-14)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(d_fused.numpy(), g[:, None] * (p - np.eye(4)[y]), rtol=1e-12)


@pytest.mark.parametrize("ta,tb", [(False, True), (True, False), (True, True)])
@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5))])
def test_matmul_transpose_flags_match_autograd_first_and_second_order(ta, tb, sa, sb):
    rng = np.random.default_rng(9)
    a = rng.standard_normal(sa[:-2] + sa[-2:][::-1] if ta else sa)
    b = rng.standard_normal(sb[:-2] + sb[-2:][::-1] if tb else sb)

    def f_ref(x, y):
        return anp.matmul(anp.swapaxes(x, -1, -2) if ta else x, anp.swapaxes(y, -1, -2) if tb else y)

    g = rng.standard_normal(f_ref(a, b).shape)
    A, B = ap.Variable(a), ap.Variable(b)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = ap.matmul(A, B, transpose_a=ta, transpose_b=tb)
        dA, dB = inner.gradient(y, [A, B], output_gradients=g)
        s = ap.sum(dA * dA) + ap.sum(dB * dB)
    d2A, d2B = outer.gradient(s, [A, B])
    np.testing.assert_allclose(y.numpy(), f_ref(a, b), rtol=1e-12)
    ref = autograd.grad(lambda x, z: anp.sum(f_ref(x, z) * g), argnum=(0, 1))(a, b)
    np.testing.assert_allclose(dA.numpy(), ref[0], rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(dB.numpy(), ref[1], rtol=1e-11, atol=1e-12)

    def s_ref(x, z):
        da, db = autograd.grad(lambda p, q: anp.sum(f_ref(p, q) * g), argnum=(0, 1))(x, z)
        return anp.sum(da * da) + anp.sum(db * db)

    ref2 = autograd.grad(s_ref, argnum=(0, 1))(a, b)
    np.testing.assert_allclose(d2A.numpy(), ref2[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d2B.numpy(), ref2[1], rtol=1e-10, atol=1e-12)


def test_zero_d_variable_stays_an_array_after_updates():
    v = ap.Variable(3.0)
    v.assign_sub(1.0)
    v.assign_add(0.5)
    assert type(np.asarray(v)) is np.ndarray and v.numpy().shape == ()
    ap.optimizers.SGD(0.5).apply_gradients([(ap.constant(1.0), v)])
    with ap.GradientTape() as tape:
        y = v * v
    assert float(tape.gradient(y, v)) == 2.0 * 2.0 and float(v) == 2.0
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(v)[...] = 0.0


def test_numpy_errors_name_the_operation_and_its_inputs():
    a, b = ap.constant(np.ones((2, 3))), ap.constant(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"autoprop\.matmul\(float64\(2, 3\), float64\(2, 3\)\): .*mismatch"):
        ap.matmul(a, b)
    with pytest.raises(ValueError, match=r"autoprop\.add\(float64\(2, 3\), float64\(4,\)\): operands could not be broadcast"):
        a + ap.constant(np.ones(4))


def test_gradient_of_none_or_a_string_is_a_clear_type_error():
    x = ap.Variable(3.0)
    with ap.GradientTape(persistent=True) as tape:
        _ = x * x
    with pytest.raises(TypeError, match="forget to return"):
        tape.gradient(None, x)
    with pytest.raises(TypeError, match="not a Tensor"):
        tape.gradient("loss", x)


def test_string_values_are_not_tensors():
    with pytest.raises(TypeError, match="cannot make a Tensor"):
        ap.Variable("abc")
    with pytest.raises(TypeError, match="cannot make a Tensor"):
        ap.constant(["a", "b"])


# --- format(t, spec): a 0-d tensor formats its value (numpy, torch); others take no spec ---------------
def test_format_of_a_0d_tensor_formats_its_value():
    assert f"{ap.constant(3.14159265):.4f}" == "3.1416"
    assert f"{ap.Variable(2.5):>8.2f}|" == "    2.50|"
    assert f"{ap.constant(-1234.5):,.1f}" == "-1,234.5"
    assert f"{ap.constant(0.000123):.2e}" == "1.23e-04"
    assert f"{ap.constant(7):03d}" == "007"  # an integer tensor takes integer specs
    assert f"{ap.constant(np.float32(0.1)):.10f}" == f"{float(np.float32(0.1)):.10f}"  # float32's own value
    assert f"{ap.constant(3.0)}" == "3.0" and f"{ap.constant(True)}" == "True"  # no spec: the value, as numpy


def test_format_of_a_tensor_being_recorded_gives_its_value_and_the_gradient_is_unchanged():
    x = ap.Variable(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # taking the value for display is deliberate: no TapeEscapeWarning
        with ap.GradientTape() as tape:
            y = x * x
            shown = f"loss {y:.3f}"
    assert shown == "loss 9.000"
    assert tape.gradient(y, x).numpy() == 6.0


def test_format_of_a_tensor_with_axes_takes_no_spec():
    t = ap.constant([1.0, 2.0])
    assert f"{t}" == str(t) and format(t) == str(t)  # no spec: str(t), as object.__format__ does
    with pytest.raises(TypeError, match=r"unsupported format string '\.2f' for a Tensor of shape \(2,\)") as e:
        f"{t:.2f}"
    assert "only a 0-d Tensor (one number) takes a format spec" in str(e.value)
    assert "t.numpy()" in str(e.value)
    with pytest.raises(TypeError, match=r"shape \(1, 1\)"):
        format(ap.constant([[5.0]]), ".1f")  # one element, but not 0-d (as torch and numpy)
