"""``autoprop.numpy.lib.stride_tricks.as_strided`` (numpy's name under ``import autoprop.numpy as np``) on a Tensor is recorded (session 35, corpus35 E3: ramisa2108's
CNN-From-Scratch-With-Numpy builds its conv and max-pool windows with it; it was refused, naming
sliding_window_view).

The view reads one element of x per element: its values are numpy's, its VJP adds g into the elements
read (overlapping windows add, as ``torch.as_strided``'s backward; the torch comparison is in the
session's report: the main suite cannot import torch), its JVP is the same view of the tangent. The
strides are bytes against x's value as numpy lays it out (``x.strides``, C order for most Tensors, a
transposed or flipped value's own). Expected gradients here are independent: loops over the view's
elements with the byte arithmetic written out, and central differences (``oracles.central``).
"""

import numpy as np
import pytest
from oracles import central

import autoprop as ap
import autoprop.numpy as anp

NUMPYS = np.lib._stride_tricks_impl.as_strided  # numpy's own function (never dispatches)
SWV = np.lib.stride_tricks.sliding_window_view


def strided(x, shape, strides, **kw):
    return anp.lib.stride_tricks.as_strided(x, shape, strides, **kw)  # numpy's name under `import autoprop.numpy as np`


def read_positions(value, shape, strides):
    """For each element of the view, the C-order index of the element of ``value`` at that byte offset
    (a loop: the byte arithmetic written out, independent of autoprop's)."""
    offsets = {sum(i * s for i, s in zip(idx, value.strides)): k
               for k, idx in enumerate(np.ndindex(value.shape))}
    return np.array([offsets[sum(i * s for i, s in zip(idx, strides))] for idx in np.ndindex(shape)],
                    dtype=np.intp).reshape(shape)


def scatter(G, pos, x_shape):
    out = np.zeros(int(np.prod(x_shape)))
    for g, p in zip(G.ravel(), pos.ravel()):
        out[p] += g
    return out.reshape(x_shape)


A = np.arange(20.0).reshape(4, 5) / 7 - 1
LAYOUTS = {"C": lambda a: a, "T": lambda a: a.T, "flip": lambda a: a[:, ::-1], "slice": lambda a: a[::2, 1::2]}
CASES = [  # (x's layout: the same function of A for the array and the Tensor, view shape, strides in bytes)
    ("C", (3, 4, 2, 2), (40, 8, 40, 8)),  # every 2x2 window, stride 1: overlapping
    ("C", (2, 2, 2, 2), (80, 16, 40, 8)),  # stride 2
    ("C", (2, 2, 3, 3), (40, 16, 40, 8)),  # rows stride 1, columns stride 2, 3x3 windows
    ("C", (20,), (8,)),  # ravel
    ("C", (5, 4), (8, 40)),  # transpose
    ("C", (3, 4), (0, 8)),  # a zero stride: the first row three times
    ("C", (4, 2), (48, 8)),  # diagonals: rows shifted by one each
    ("T", (4, 3, 2, 2), (8, 40) * 2),  # a transposed value: x.strides are its own, (8, 40)
    ("flip", (4, 4, 2), (40, -8, -8)),  # a flipped value: negative strides that stay inside x
    ("slice", (2, 2), (80, 16)),  # a strided slice: reads only its own elements
]


@pytest.mark.parametrize("layout,shape,strides", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_values_are_numpys_and_the_vjp_adds_g_into_the_elements_read(layout, shape, strides):
    value, base = LAYOUTS[layout](A), ap.Variable(A.copy())
    G = np.random.default_rng(3).integers(-4, 5, size=shape).astype(float)  # integer sums: exact in any order
    with ap.GradientTape() as tape:
        x = LAYOUTS[layout](base)
        w = strided(x, shape, strides)
        loss = np.sum(w * G)
    assert x.strides == value.strides  # (the layout the strides are read against: numpy's of the value)
    np.testing.assert_array_equal(w.numpy(), NUMPYS(value, shape, strides))
    assert w.shape == shape and w.dtype == value.dtype
    at = LAYOUTS[layout](np.arange(A.size).reshape(A.shape))  # where x's elements sit in A
    want = scatter(G, at.ravel()[read_positions(value, shape, strides)], A.shape)
    np.testing.assert_array_equal(tape.gradient(loss, base).numpy(), want)


@pytest.mark.parametrize("shape,strides", [c[1:] for c in CASES[:3] + CASES[6:7]], ids=["s1", "s2", "mixed", "diag"])
def test_the_jvp_is_the_same_view_of_the_tangent_and_the_gradient_matches_central_differences(shape, strides):
    value = A.copy()
    x = ap.Variable(value)
    u = np.random.default_rng(4).normal(size=value.shape)
    with ap.ForwardAccumulator(x, u) as acc:
        w = strided(x, shape, strides)
    np.testing.assert_array_equal(acc.jvp(w).numpy(), NUMPYS(u, shape, strides))
    G = np.random.default_rng(5).normal(size=shape)

    def f(v):
        return float(np.sum(np.sin(NUMPYS(v, shape, strides)) * G))
    with ap.GradientTape() as tape:
        loss = np.sum(np.sin(strided(x, shape, strides)) * G)
    assert float(loss) == f(value)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), central(f, value, h=1e-6), rtol=1e-7, atol=1e-8)


# --- an im2col conv and a max-pool over as_strided windows (ramisa2108's), against sliding_window_view ----
def conv_strided(X, W, s):
    n, c, h, w = X.shape
    k = W.shape[-1]
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    sn, sc, sh, sw = X.strides
    win = anp.lib.stride_tricks.as_strided(X, (n, c, oh, ow, k, k), (sn, sc, sh * s, sw * s, sh, sw))
    return np.einsum("bihwkl,oikl->bohw", win, W)


def conv_windows(X, W, s):
    k = W.shape[-1]
    win = SWV(X, (k, k), axis=(2, 3))[:, :, ::s, ::s]
    return np.einsum("bihwkl,oikl->bohw", win, W)


def pool_strided(X, k, s):
    n, c, h, w = X.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    sn, sc, sh, sw = X.strides
    win = anp.lib.stride_tricks.as_strided(X, (n, c, oh, ow, k, k), (sn, sc, sh * s, sw * s, sh, sw))
    return np.max(win, axis=(4, 5))


def pool_windows(X, k, s):
    return np.max(SWV(X, (k, k), axis=(2, 3))[:, :, ::s, ::s], axis=(4, 5))


def _grads(model, X, W, G):
    x, w = ap.Variable(X), ap.Variable(W)
    with ap.GradientTape() as tape:
        y = model(x, w)
        loss = np.sum(y * G)
    return y.numpy(), [g.numpy() for g in tape.gradient(loss, [x, w])]


@pytest.mark.parametrize("s", [1, 2])
def test_conv_and_max_pool_over_as_strided_windows_equal_the_sliding_window_view_ones(s):
    rng = np.random.default_rng(6)
    X, W = rng.normal(size=(2, 3, 7, 7)), rng.normal(size=(4, 3, 3, 3))
    oh = (7 - 3) // s + 1
    G = rng.normal(size=(2, 4, oh, oh))
    y1, g1 = _grads(lambda x, w: conv_strided(x, w, s), X, W, G)
    y2, g2 = _grads(lambda x, w: conv_windows(x, w, s), X, W, G)
    np.testing.assert_allclose(y1, y2, rtol=1e-12, atol=1e-13)  # (einsum's order follows the layout)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(g1[0], central(lambda v: float(np.sum(conv_windows(v, W, s) * G)), X, h=1e-6),
                               rtol=1e-6, atol=1e-8)
    Gp = rng.normal(size=(2, 3, oh, oh))
    p1, q1 = _grads(lambda x, w: pool_strided(x, 3, s) * w[0, 0, 0, 0], X, W, Gp)  # (w: carried along)
    p2, q2 = _grads(lambda x, w: pool_windows(x, 3, s) * w[0, 0, 0, 0], X, W, Gp)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_allclose(q1[0], q2[0], rtol=1e-14, atol=0)  # each max's g goes to its one element
    assert np.count_nonzero(q1[0]) < X.size  # (and the windows overlap for s = 1 and 2: some elements get two)


def test_second_order_through_as_strided():
    rng = np.random.default_rng(7)
    X, v = rng.normal(size=(5, 6)), rng.normal(size=(5, 6))
    x = ap.Variable(X)

    def hvp(windows):
        with ap.GradientTape() as outer:
            with ap.GradientTape() as inner:
                loss = np.sum(windows(x) ** 3)
            g = inner.gradient(loss, x)
            gv = np.sum(g * v)
        return outer.gradient(gv, x).numpy()
    got = hvp(lambda t: strided(t, (4, 5, 2, 2), t.strides * 2))
    want = hvp(lambda t: SWV(t, (2, 2)))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    count = scatter(np.ones((4, 5, 2, 2)), read_positions(X, (4, 5, 2, 2), X.strides * 2), X.shape)
    np.testing.assert_allclose(got, 6 * X * v * count, rtol=1e-12)  # d2/dx2 sum_windows x^3 = 6 x (times copies)


def test_float32_stays_float32():
    X = (np.arange(12, dtype=np.float32) / 3).reshape(3, 4)
    x = ap.Variable(X)
    with ap.GradientTape() as tape:
        w = strided(x, (2, 3, 2, 2), (16, 4, 16, 4))
        loss = np.sum(w)
    np.testing.assert_array_equal(w.numpy(), NUMPYS(X, (2, 3, 2, 2), (16, 4, 16, 4)))
    g = tape.gradient(loss, x)
    assert w.dtype == g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), [[1, 2, 2, 1], [2, 4, 4, 2], [1, 2, 2, 1]])


@pytest.mark.parametrize("kw,err,words", [
    (dict(shape=(2,), strides=(4,)), ValueError, r"multiple of x's itemsize, 8 bytes for float64"),
    (dict(shape=(4, 4, 2, 2), strides=(40, 8, 40, 8)), ValueError,
     r"shape=\(4, 4, 2, 2\), strides=\(40, 8, 40, 8\)\): the view reaches memory outside x's elements "
     r"\(x: shape \(4, 5\), float64 \(8 bytes each\), strides \(40, 8\), 160 bytes\): its element \(3, 0, 1, 0\) "
     r"reads byte offset 160"),
    (dict(shape=(2,), strides=(-8,)), ValueError, r"reads byte offset -8.*negative strides read before x"),
    (dict(shape=(2, 2), strides=(8,)), ValueError, r"one entry per axis"),
    (dict(shape=(2,), strides=(8,), writeable=True), TypeError, r"writeable=True: a Tensor is never written"),
])
def test_refusals_name_the_call_and_x(kw, err, words):
    x = ap.Variable(A.copy())
    with pytest.raises(err, match=words):
        strided(x, **kw)


def test_a_tensor_whose_elements_share_memory_is_refused_with_the_spelling_that_works():
    x = ap.Variable([1.0, 2.0, 3.0])
    b = np.broadcast_to(x, (2, 3))
    assert b.strides == (0, 8)
    with pytest.raises(ValueError, match=r"elements of x share memory .*strides \(0, 8\).*pass x \+ 0\.0"):
        strided(b, (2, 2), (24, 8))
    with ap.GradientTape() as tape:
        c = np.broadcast_to(x, (2, 3)) + 0.0
        loss = np.sum(strided(c, (2, 2), (24, 8)) * [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [1.0 + 3.0, 2.0 + 4.0, 0.0])


def test_the_view_refuses_augmented_assignment_and_arrays_still_get_numpys_function():
    x = ap.Variable(A.copy())
    w = strided(x, (4, 4), (40, 8), writeable=False)
    with pytest.raises(TypeError, match=r"made by np\.lib\.stride_tricks\.as_strided"):
        w += 1.0
    a = A.copy()
    v = strided(a, (4, 4), (40, 8))  # an ndarray: numpy's own writeable view
    assert type(v) is np.ndarray and np.shares_memory(v, a) and v.flags.writeable
    assert not strided(a, (4, 4), (40, 8), writeable=False).flags.writeable
    assert np.lib.stride_tricks.as_strided is NUMPYS  # autoprop leaves numpy's own function alone
