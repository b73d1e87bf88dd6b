"""newuser31 F5: autoprop's functional index update, TensorFlow's ``tf.tensor_scatter_nd_add`` and
``tf.tensor_scatter_nd_update`` (jax's ``x.at[idx].add`` / ``.set``), and the refusal of ``y[1:3] += v`` naming it.

Values are TensorFlow's documented examples and hand-worked sums; gradients and tangents are checked against central
differences (and agreed with jax x64's ``.at[].add/.set`` to 0.0 on these cases, peers venv, session 31)."""

import numpy as np
import pytest

import autoprop as ap

RNG = np.random.default_rng(31)
#: (tensor shape, indices (..., K), updates shape): elements, rows (slices), matrix elements, indices of rank 3
CASES = [((5,), np.array([[1], [3], [1]]), (3,)), ((4, 3), np.array([[0], [2], [0]]), (3, 3)),
         ((3, 4), np.array([[0, 1], [2, 3], [0, 1]]), (3,)), ((2, 3, 2), np.array([[[1, 0], [0, 2]]]), (1, 2, 2))]


def test_tensorflow_s_documented_examples():
    # tf.tensor_scatter_nd_update's docstring: tensor ones(8), indices [[4], [3], [1], [7]], updates [9, 10, 11, 12]
    got = ap.tensor_scatter_nd_update(np.ones(8), [[4], [3], [1], [7]], np.array([9.0, 10, 11, 12]))
    np.testing.assert_array_equal(got.numpy(), [1, 11, 1, 10, 9, 1, 1, 12])
    got = ap.tensor_scatter_nd_add(np.ones(8), [[4], [3], [1], [7]], np.array([9.0, 10, 11, 12]))
    np.testing.assert_array_equal(got.numpy(), [1, 12, 1, 11, 10, 1, 1, 13])
    rows = ap.tensor_scatter_nd_update(np.ones((4, 2)), [[0], [2]], np.array([[5.0, 6.0], [7.0, 8.0]]))
    np.testing.assert_array_equal(rows.numpy(), [[5, 6], [1, 1], [7, 8], [1, 1]])


def test_repeated_indices_add_all_and_update_keeps_the_last():
    """TensorFlow: duplicates "are accumulated (summed)" by tensor_scatter_nd_add; tensor_scatter_nd_update "pick[s]
    the last update for the index" (deterministic here); the overwritten update gets no gradient."""
    x = ap.Variable([0.0, 1.0, 2.0, 3.0])
    u = ap.Variable([10.0, 20.0, 30.0])
    with ap.GradientTape(persistent=True) as tape:
        a = ap.tensor_scatter_nd_add(x, [[1], [3], [1]], u)
        s = ap.tensor_scatter_nd_update(x, [[1], [3], [1]], u)
        La, Ls = ap.reduce_sum(a * [1.0, 2.0, 3.0, 4.0]), ap.reduce_sum(s * [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(a.numpy(), [0, 41, 2, 23])
    np.testing.assert_array_equal(s.numpy(), [0, 30, 2, 20])
    np.testing.assert_array_equal(tape.gradient(La, u).numpy(), [2, 4, 2])
    np.testing.assert_array_equal(tape.gradient(La, x).numpy(), [1, 2, 3, 4])
    np.testing.assert_array_equal(tape.gradient(Ls, u).numpy(), [0, 4, 2])  # u[0] overwritten by u[2]
    np.testing.assert_array_equal(tape.gradient(Ls, x).numpy(), [1, 0, 3, 0])


def _central(f, x, u, tx, tu, h=1e-6):
    return (f(x + h * tx, u + h * tu) - f(x - h * tx, u - h * tu)) / (2 * h)


@pytest.mark.parametrize("op", ["add", "update"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_vjp_and_jvp_match_central_differences(op, case):
    shape, idx, ushape = CASES[case]
    fn = getattr(ap, f"tensor_scatter_nd_{op}")
    x, u = RNG.standard_normal(shape), RNG.standard_normal(ushape)

    def f(a, b):
        return fn(a, idx, b).numpy()

    G = RNG.standard_normal(shape)
    X, U = ap.Variable(x), ap.Variable(u)
    with ap.GradientTape() as tape:
        L = ap.reduce_sum(fn(X, idx, U) * G)
    gx, gu = (g.numpy() for g in tape.gradient(L, [X, U]))
    for k in range(3):  # <g, t> for random directions t of both arguments against d/dh sum(f * G)
        tx, tu = RNG.standard_normal(shape), RNG.standard_normal(ushape)
        d = float(np.sum(_central(f, x, u, tx, tu) * G))
        assert abs(float(np.sum(gx * tx) + np.sum(gu * tu)) - d) <= 1e-8 * (1 + abs(d)), (op, case, k)
    tx, tu = RNG.standard_normal(shape), RNG.standard_normal(ushape)
    with ap.ForwardAccumulator([X, U], [tx, tu]) as acc:
        Y = fn(X, idx, U)
    np.testing.assert_allclose(acc.jvp(Y).numpy(), _central(f, x, u, tx, tu), rtol=1e-7, atol=1e-8)


def test_second_order_through_the_scatter():
    """d/dx of the gradient: the VJPs are recorded when an outer tape watches (hessian of sum(y**3))."""
    x = ap.Variable([0.5, -0.2, 2.0, 0.3])
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = ap.tensor_scatter_nd_add(x * 1.0, [[1], [2]], 2 * x[:2])
            L = ap.reduce_sum(y**3)
        g = inner.gradient(L, x)
        s = ap.reduce_sum(g * [1.0, 0.0, 0.0, 0.0])
    # y = (x0, x1 + 2 x0, x2 + 2 x1, x3); dL/dx0 = 3 y0**2 + 6 y1**2; its gradient: (6 y0 + 24 y1, 12 y1, 0, 0)
    np.testing.assert_allclose(outer.gradient(s, x).numpy(), [6 * 0.5 + 24 * 0.8, 12 * 0.8, 0.0, 0.0], rtol=1e-12)


@pytest.mark.parametrize("args, err, words", [
    ((np.zeros(4), np.array([[1.0]]), np.ones(1)), TypeError, "indices must be integers (int32 or int64"),
    ((np.zeros(4), np.array([[1, 2]]), np.ones(1)), ValueError, "index K = 2 axes (its last axis) of a tensor of "
                                                                "shape (4,); expected 1 <= K <= 1"),
    ((np.zeros((4, 3)), np.array([[1], [2]]), np.ones(2)), ValueError, "updates of shape (2,); expected "
                                                                        "indices.shape[:-1] + tensor.shape[K:] = (2, 3)"),
    ((np.zeros(4), np.array([[1], [4]]), np.ones(2)), ValueError, "indices[1] = [4] is out of bounds for the first 1 "
                                                                  "axes (4,)"),
    ((np.zeros(4), np.array([[-1]]), np.ones(1)), ValueError, "a negative index does not count from the end"),
])
def test_bad_arguments_say_what_was_expected_and_what_came(args, err, words):
    for fn in (ap.tensor_scatter_nd_add, ap.tensor_scatter_nd_update):
        with pytest.raises(err, match="autoprop.tensor_scatter_nd_") as e:
            fn(*args)
        assert words in str(e.value), str(e.value)


def test_the_in_place_refusal_names_the_functional_update():
    x = ap.Variable([0.5, -1.0, 2.0, 0.3])
    with pytest.raises(TypeError) as e, ap.GradientTape():
        y = x * 1.0
        y[1:3] += 2 * x[:2]
    assert "for `b[idx] += v`, b = ap.tensor_scatter_nd_add(b, idx_nd, v)" in str(e.value), str(e.value)
    assert "e.g. b[1:3] is [[1], [2]]" in str(e.value) and "`t = t + value` if only t should change" in str(e.value)
    with pytest.raises(TypeError, match=r"ap\.tensor_scatter_nd_update\(b, idx_nd, b\[idx\] \* v\)"), ap.GradientTape():
        y = x * 1.0
        y[1:3] *= 2.0


@pytest.mark.parametrize("fn, want", [(ap.tensor_scatter_nd_add, [1.0, 2.75, 3.0]),
                                      (ap.tensor_scatter_nd_update, [1.0, 0.75, 3.0])])
def test_an_int_tensor_with_float_updates_is_promoted_not_truncated(fn, want):
    # review32 sc_dtype: numpy's result dtype of tensor and updates (documented; TensorFlow raises on the mismatch
    # instead). Copying the tensor's int dtype would truncate 2.75 to 2 without a word.
    out = fn(np.array([1, 2, 3]), np.array([[1]]), np.array([0.75]))
    assert np.asarray(out).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(out), want)
    f32 = fn(np.array([1.0, 2.0, 3.0], np.float32), np.array([[1]]), np.array([0.75], np.float32))
    assert np.asarray(f32).dtype == np.float32
