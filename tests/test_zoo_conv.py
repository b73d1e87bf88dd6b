"""Layer zoo, convolution family: Conv2D, MaxPool2D, AvgPool2D (manualprop and autoprop).

Every gradient is checked three ways (manual vs central differences, tape vs central
differences, manual vs tape; max-norm relative error < 1e-7) with a random
non-uniform upstream gradient, and against HIPS autograd applied to the same forward
written independently in ``autograd.numpy`` (shifted slices, no im2col). Conv2D is
also compared with a naive loop reference (forward and backward).
"""

import doctest
import re

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from zoo_cnn_helpers import randomize_params, rel_err, tape_grads, three_way

import autoprop as ap
import autoprop.layers as apl
import manualprop
import manualprop.conv
from autoprop.core import registry as R
from manualprop import AvgPool2D, Conv2D, MaxPool2D
from manualprop.init import conv2d_params

# (kwargs, input shape): stride 2, padding 1, dilation 2, non-square kernels, bias=False
CONV_CASES = [
    (dict(in_channels=2, out_channels=3, kernel_size=3), (2, 2, 5, 6)),
    (dict(in_channels=2, out_channels=3, kernel_size=3, stride=2), (2, 2, 7, 6)),
    (dict(in_channels=3, out_channels=2, kernel_size=3, padding=1), (2, 3, 5, 5)),
    (dict(in_channels=2, out_channels=2, kernel_size=3, dilation=2), (2, 2, 7, 8)),
    (dict(in_channels=2, out_channels=3, kernel_size=(2, 3)), (2, 2, 5, 6)),
    (dict(in_channels=1, out_channels=2, kernel_size=(3, 1), stride=(1, 2), padding=(0, 2)), (3, 1, 4, 5)),
    (dict(in_channels=2, out_channels=2, kernel_size=3, bias=False), (2, 2, 5, 5)),
    (dict(in_channels=2, out_channels=3, kernel_size=(2, 3), stride=2, padding=1, dilation=2, bias=False),
     (2, 2, 6, 7)),
    (dict(in_channels=3, out_channels=2, kernel_size=(3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
     (1, 3, 6, 5)),
]
CONV_IDS = [
    "3x3", "stride2", "pad1", "dil2", "2x3", "3x1-s12-p02", "nobias", "2x3-s2-p1-d2-nobias", "mixed-pairs",
]


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv_spec(kw):
    return (_pair(kw.get("stride", 1)), _pair(kw.get("padding", 0)), _pair(kw.get("dilation", 1)))


def naive_conv(X, W, b, stride, padding, dilation):
    """Loop reference: forward Y and a backward function (loops over every index)."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    N, C, H, Wd = X.shape
    O, _, kh, kw = W.shape
    Xp = np.zeros((N, C, H + 2 * ph, Wd + 2 * pw))
    Xp[:, :, ph : ph + H, pw : pw + Wd] = X
    Ho = (H + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    Wo = (Wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    Y = np.zeros((N, O, Ho, Wo))
    taps = [(c, p, q) for c in range(C) for p in range(kh) for q in range(kw)]
    for n in range(N):
        for o in range(O):
            for i in range(Ho):
                for j in range(Wo):
                    s = 0.0 if b is None else b[o]
                    for c, p, q in taps:
                        s += W[o, c, p, q] * Xp[n, c, i * sh + p * dh, j * sw + q * dw]
                    Y[n, o, i, j] = s

    def backward(G):
        dXp, dW = np.zeros_like(Xp), np.zeros_like(W)
        for n in range(N):
            for o in range(O):
                for i in range(Ho):
                    for j in range(Wo):
                        for c, p, q in taps:
                            y, x = i * sh + p * dh, j * sw + q * dw
                            dW[o, c, p, q] += G[n, o, i, j] * Xp[n, c, y, x]
                            dXp[n, c, y, x] += G[n, o, i, j] * W[o, c, p, q]
        db = None if b is None else G.sum(axis=(0, 2, 3))
        return dXp[:, :, ph : ph + H, pw : pw + Wd], dW, db

    return Y, backward


def ag_conv(X, W, b, stride, padding, dilation):
    """Conv2D in autograd.numpy as a sum of shifted, strided slices (no im2col)."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    O, C, kh, kw = W.shape
    Xp = anp.pad(X, ((0, 0), (0, 0), (ph, ph), (pw, pw)), "constant")
    Hp, Wp = Xp.shape[2:]
    Ho = (Hp - dh * (kh - 1) - 1) // sh + 1
    Wo = (Wp - dw * (kw - 1) - 1) // sw + 1
    Y = 0.0
    for p in range(kh):
        for q in range(kw):
            xs = Xp[:, :, p * dh : p * dh + sh * (Ho - 1) + 1 : sh, q * dw : q * dw + sw * (Wo - 1) + 1 : sw]
            Y = Y + anp.einsum("oc,nchw->nohw", W[:, :, p, q], xs)
    if b is not None:
        Y = Y + anp.reshape(b, (1, -1, 1, 1))
    return Y


def ag_windows(X, kernel_size, stride):
    """(N, C, kh*kw, Ho, Wo) windows in autograd.numpy, stacked from strided slices."""
    (kh, kw), (sh, sw) = kernel_size, stride
    H, W = X.shape[2:]
    Ho, Wo = (H - kh) // sh + 1, (W - kw) // sw + 1
    parts = [
        X[:, :, p : p + sh * (Ho - 1) + 1 : sh, q : q + sw * (Wo - 1) + 1 : sw]
        for p in range(kh)
        for q in range(kw)
    ]
    return anp.stack(parts, axis=2)


# ---------------------------------------------------------------- Conv2D


@pytest.mark.parametrize("kw,shape", CONV_CASES, ids=CONV_IDS)
def test_conv_forward_and_backward_match_naive_loops(kw, shape):
    rng = np.random.default_rng(1)
    layer = Conv2D(**kw, rng=2)
    X = rng.standard_normal(shape)
    Y = layer.forward(X)
    b = layer.params.get("b")
    Y_ref, back = naive_conv(X, layer.params["W"], b, *conv_spec(kw))
    assert Y.shape == Y_ref.shape
    np.testing.assert_allclose(Y, Y_ref, rtol=1e-12, atol=1e-13)
    G = rng.standard_normal(Y.shape)
    dX = layer.backward(G)
    dX_ref, dW_ref, db_ref = back(G)
    np.testing.assert_allclose(dX, dX_ref, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(layer.grads["W"], dW_ref, rtol=1e-12, atol=1e-13)
    if b is not None:
        np.testing.assert_allclose(layer.grads["b"], db_ref, rtol=1e-12, atol=1e-13)
    else:
        assert set(layer.params) == set(layer.grads) == {"W"}


@pytest.mark.parametrize("kw,shape", CONV_CASES, ids=CONV_IDS)
def test_conv_three_way(kw, shape):
    rng = np.random.default_rng(3)
    layer, twin = Conv2D(**kw, rng=4), apl.Conv2D(**kw, rng=4)
    X = rng.standard_normal(shape)
    G = rng.standard_normal(layer.forward(X).shape)
    three_way(layer, twin, X, G)


@pytest.mark.parametrize("kw,shape", CONV_CASES, ids=CONV_IDS)
def test_conv_matches_autograd(kw, shape):
    rng = np.random.default_rng(5)
    layer = Conv2D(**kw, rng=6)
    X = rng.standard_normal(shape)
    Y = layer.forward(X)
    G = rng.standard_normal(Y.shape)
    dX = layer.backward(G)
    spec = conv_spec(kw)
    b = layer.params.get("b")
    np.testing.assert_allclose(Y, ag_conv(X, layer.params["W"], b, *spec), rtol=1e-12, atol=1e-13)

    def L(X, W, b):
        return anp.sum(ag_conv(X, W, b, *spec) * G)

    args = (X, layer.params["W"], b)
    assert rel_err(dX, grad(L, 0)(*args)) < 1e-10
    assert rel_err(layer.grads["W"], grad(L, 1)(*args)) < 1e-10
    if b is not None:
        assert rel_err(layer.grads["b"], grad(L, 2)(*args)) < 1e-10


def test_conv_same_initial_params_in_both_twins():
    m = Conv2D(3, 4, (2, 5), rng=7)
    t = apl.Conv2D(3, 4, (2, 5), rng=7)
    assert set(m.params) == set(t.variables) == {"W", "b"}
    for k in m.params:
        np.testing.assert_array_equal(m.params[k], t.variables[k].numpy())
    # PyTorch's rule: U(-k, k), k = 1/sqrt(in*kh*kw), W (out, in, kh, kw) drawn first, then b
    gen = np.random.default_rng(7)
    k = 1 / np.sqrt(3 * 2 * 5)
    np.testing.assert_array_equal(m.params["W"], gen.uniform(-k, k, (4, 3, 2, 5)))
    np.testing.assert_array_equal(m.params["b"], gen.uniform(-k, k, (4,)))
    p = conv2d_params(3, 4, 3, bias=False, rng=0)
    assert set(p) == {"W"} and p["W"].shape == (4, 3, 3, 3)
    assert set(apl.Conv2D(3, 4, 3, bias=False, rng=0).variables) == {"W"}


def test_conv_float32_kept():
    layer = Conv2D(2, 3, 3, padding=1, rng=0, dtype=np.float32)
    X = np.random.default_rng(0).standard_normal((2, 2, 4, 4)).astype(np.float32)
    Y = layer.forward(X)
    assert Y.dtype == np.float32
    assert layer.backward(np.ones_like(Y)).dtype == np.float32
    assert all(g.dtype == np.float32 for g in layer.grads.values())
    y = apl.Conv2D(2, 3, 3, padding=1, rng=0, dtype=np.float32)(X)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), Y, rtol=1e-5, atol=1e-6)


def test_conv_overlap_is_summed_by_col2im():
    """A 3x3 kernel of ones at stride 1: the centre pixel sits in 9 windows -> dX = 9."""
    layer = Conv2D(1, 1, 3, bias=False, rng=0)
    layer.params["W"][...] = 1.0
    layer.forward(np.zeros((1, 1, 5, 5)))
    dX = layer.backward(np.ones((1, 1, 3, 3)))[0, 0]
    expected = np.array([[1, 2, 3, 2, 1], [2, 4, 6, 4, 2], [3, 6, 9, 6, 3], [2, 4, 6, 4, 2], [1, 2, 3, 2, 1]])
    np.testing.assert_array_equal(dX, expected)


@pytest.mark.parametrize("ns", [manualprop, apl], ids=["manual", "tape"])
@pytest.mark.parametrize(
    "X,pattern",
    [
        (np.zeros((2, 3, 5)), r"Conv2D\(3, 4, kernel_size=\(3, 3\)\).* X must have shape \(batch, 3, height, width\); got \(2, 3, 5\)"),
        (np.zeros((2, 2, 5, 5)), r"Conv2D\(3, 4, kernel_size=\(3, 3\)\).* X must have shape \(batch, 3, height, width\); got \(2, 2, 5, 5\)"),
        (np.zeros((2, 3, 2, 9)), r"Conv2D\(3, 4, kernel_size=\(3, 3\)\).* the kernel must fit into X along its height: X has height 2, 2 with padding 0, smaller than the kernel span 3"),
    ],
    ids=["ndim", "channels", "kernel-too-large"],
)
def test_conv_bad_input_messages(ns, X, pattern):
    layer = ns.Conv2D(3, 4, 3, rng=0)
    with pytest.raises(ValueError, match=pattern.replace(" X ", " x ") if ns is apl else pattern):
        layer(X)


def test_conv_dilated_kernel_larger_than_padded_input():
    layer = Conv2D(1, 1, 3, padding=1, dilation=3, rng=0)  # span 7 > 4 + 2
    with pytest.raises(ValueError, match=r"Conv2D\(1, 1, kernel_size=\(3, 3\), padding=\(1, 1\), dilation=\(3, 3\)\)\.forward: the kernel must fit into X along its height: X has height 4, 6 with padding 1, smaller than the kernel span 7 \(kernel 3 with dilation 3\)"):
        layer.forward(np.zeros((1, 1, 4, 9)))


@pytest.mark.parametrize("bad,exc,msg", [
    (dict(kernel_size=0), ValueError, "kernel_size must be >= 1"),
    (dict(kernel_size=(2, 2, 2)), ValueError, "kernel_size must be an int or a pair"),
    (dict(kernel_size=2.0), TypeError, "kernel_size must be an int or a pair"),
    (dict(kernel_size=2, stride=0), ValueError, "stride must be >= 1"),
    (dict(kernel_size=2, padding=-1), ValueError, "padding must be >= 0"),
    (dict(kernel_size=2, dilation=(1, 0)), ValueError, "dilation must be >= 1"),
])
def test_conv_bad_hyperparameters(bad, exc, msg):
    for cls in (Conv2D, apl.Conv2D):
        with pytest.raises(exc, match="Conv2D: " + re.escape(msg)):
            cls(1, 1, **bad)


def test_conv_dtype_mismatch_and_backward_before_forward():
    layer = Conv2D(1, 1, 2, rng=0)
    with pytest.raises(RuntimeError, match=r"Conv2D\(.*\)\.backward: must be called after forward"):
        layer.backward(np.zeros((1, 1, 1, 1)))
    with pytest.raises(TypeError, match="X must have dtype float64"):
        layer.forward(np.zeros((1, 1, 3, 3), np.float32))
    layer.forward(np.zeros((1, 1, 3, 3)))
    with pytest.raises(ValueError, match=r"dY must have the shape of the forward output, \(1, 1, 2, 2\)"):
        layer.backward(np.zeros((1, 1, 3, 3)))


# ---------------------------------------------------------------- extract_patches primitive


def test_extract_patches_is_im2col_and_its_vjp_is_col2im():
    rng = np.random.default_rng(8)
    spec = dict(kernel_size=(2, 3), stride=(2, 1), padding=(1, 0), dilation=(1, 2))
    X = rng.standard_normal((2, 3, 6, 7))
    pairs = (spec["kernel_size"], spec["stride"], spec["padding"], spec["dilation"])
    cols = manualprop.conv.im2col(X, *pairs)
    x = ap.constant(X)
    with ap.GradientTape() as tape:
        tape.watch(x)
        p = R.extract_patches(x, **spec)
    np.testing.assert_array_equal(p.numpy(), cols)
    G = rng.standard_normal(cols.shape)
    dx = tape.gradient(p, x, output_gradients=G).numpy()
    np.testing.assert_allclose(dx, manualprop.conv.col2im(G, X.shape, *pairs), rtol=1e-14)
    # adjoint identity <P x, G> = <x, P^T G>
    assert abs(np.sum(cols * G) - np.sum(X * dx)) < 1e-12 * np.abs(cols * G).sum()


def test_extract_patches_second_order_matches_autograd():
    """Nested tapes differentiate through the col2im VJP (it is a recorded primitive too)."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((1, 2, 5, 5))
    W = rng.standard_normal((3, 2, 3, 3))
    spec = dict(stride=(2, 2), padding=(1, 1), dilation=(1, 1))

    def ag_f(X):
        return anp.sum(anp.tanh(ag_conv(X, W, None, *spec.values())) ** 2)

    def ag_h(X):  # |grad f|^2: needs the derivative of the gradient
        return anp.sum(grad(ag_f)(X) ** 2)

    x = ap.Variable(X)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            p = R.extract_patches(x, kernel_size=3, **spec)
            y = ap.tanh((W.reshape(3, -1) @ p.reshape(1, 18, -1)))
            f = ap.sum(y * y)
        g = inner.gradient(f, x)
        h = ap.sum(g * g)
    gg = outer.gradient(h, x)
    assert rel_err(g.numpy(), grad(ag_f)(X)) < 1e-10
    assert rel_err(gg.numpy(), grad(ag_h)(X)) < 1e-10


def test_zoo_primitives_are_documented():
    for name in ("extract_patches", "scatter_patches", "take_along_axis", "scatter_along_axis"):
        doc = ap.PRIMITIVES[name].doc
        assert all(doc[k] for k in ("jacobian", "vjp", "shapes", "kinks")), name


def test_take_along_axis_dispatch_and_repeats():
    rng = np.random.default_rng(10)
    A = rng.standard_normal((3, 4))
    idx = np.array([[0, 0, 2], [1, 3, 1], [2, 2, 2]])  # repeated indices accumulate
    a = ap.Variable(A)
    G = rng.standard_normal((3, 3))
    with ap.GradientTape() as tape:
        y = np.take_along_axis(a, idx, axis=1)
    np.testing.assert_array_equal(y.numpy(), np.take_along_axis(A, idx, axis=1))
    d = tape.gradient(y, a, output_gradients=G).numpy()
    expected = grad(lambda A: anp.sum(A[np.arange(3)[:, None], idx] * G))(A)
    np.testing.assert_allclose(d, expected, rtol=1e-14)


def test_take_along_axis_indices_broadcast_over_a_size_one_axis_accumulate():
    """Indices of width 1 along ``axis`` that broadcast over a size-1 axis of ``arr`` pick the
    same element many times: the VJP must add, not assign (JAX's testTakeAlongAxisIssue1521;
    jax.grad gives [[10, 10, 10]], the old put_along_axis path gave [[1, 1, 1]])."""
    x = ap.Variable(np.array([[0.0, 1.0, 2.0]]))
    idx = np.repeat(np.arange(3), 10).reshape(30, 1)
    with ap.GradientTape() as tape:
        y = ap.sum(np.take_along_axis(x, idx, axis=-1))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[10.0, 10.0, 10.0]])
    rng = np.random.default_rng(3)  # 3-D, the broadcast on the middle axis, random cotangent
    A, I, G = rng.standard_normal((4, 1, 3)), rng.integers(0, 3, (4, 5, 1)), rng.standard_normal((4, 5, 1))
    fancy = (np.arange(4)[:, None, None], np.zeros((1, 5, 1), int), I)  # the same gather, autograd's
    expected = grad(lambda A: anp.sum(A[fancy] * G))(A)
    a, g = ap.Variable(A), ap.Variable(G)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = np.take_along_axis(a, I, axis=2)
        d = inner.gradient(y, a, output_gradients=g)  # a recorded scatter_along_axis of g
        h = ap.sum(d * d)
    np.testing.assert_allclose(d.numpy(), expected, rtol=1e-14)
    np.testing.assert_allclose(outer.gradient(h, g).numpy(), 2 * expected[fancy], rtol=1e-14)
    src = ap.PRIMITIVES["scatter_along_axis"].source(dict(indices=I, axis=2, shape=(4, 1, 3)))
    assert "np.add.at" in src  # the written backward adds too


# ---------------------------------------------------------------- pooling

POOL_CASES = [
    (dict(kernel_size=2), (2, 3, 4, 6)),
    (dict(kernel_size=3, stride=1), (2, 2, 5, 5)),  # overlapping windows
    (dict(kernel_size=(2, 3), stride=(1, 2)), (2, 2, 5, 7)),
    (dict(kernel_size=2), (1, 2, 5, 5)),  # the last row/column is not covered
]
POOL_IDS = ["2x2", "3x3-s1-overlap", "2x3-s12", "2x2-odd"]


@pytest.mark.parametrize("kw,shape", POOL_CASES, ids=POOL_IDS)
@pytest.mark.parametrize("name", ["MaxPool2D", "AvgPool2D"])
def test_pool_three_way(name, kw, shape):
    rng = np.random.default_rng(11)
    layer, twin = getattr(manualprop, name)(**kw), getattr(apl, name)(**kw)
    X = rng.permutation(np.prod(shape)).reshape(shape) * 0.01 + rng.uniform(-1e-3, 1e-3, shape)
    # distinct values at least ~0.008 apart: no max-pool kink inside the FD step
    G = rng.standard_normal(layer.forward(X).shape)
    three_way(layer, twin, X, G)


@pytest.mark.parametrize("kw,shape", POOL_CASES, ids=POOL_IDS)
@pytest.mark.parametrize("name", ["MaxPool2D", "AvgPool2D"])
def test_pool_matches_autograd(name, kw, shape):
    rng = np.random.default_rng(12)
    layer = getattr(manualprop, name)(**kw)
    X = rng.standard_normal(shape)
    Y = layer.forward(X)
    G = rng.standard_normal(Y.shape)
    dX = layer.backward(G)
    reduce = anp.max if name == "MaxPool2D" else anp.mean

    def f(X):
        return reduce(ag_windows(X, layer.kernel_size, layer.stride), axis=2)

    np.testing.assert_allclose(Y, f(X), rtol=1e-14)
    assert rel_err(dX, grad(lambda X: anp.sum(f(X) * G))(X)) < 1e-12


def test_pool_stride_defaults_to_kernel():
    for cls in (MaxPool2D, AvgPool2D, apl.MaxPool2D, apl.AvgPool2D):
        assert cls(3).stride == (3, 3) and cls((2, 3)).stride == (2, 3) and cls(2, 1).stride == (1, 1)
    assert MaxPool2D(2).forward(np.zeros((1, 1, 5, 7))).shape == (1, 1, 2, 3)


@pytest.mark.parametrize(
    "X,expected",
    [
        # all four equal: the gradient goes to the first (top-left) element only
        (np.ones((1, 1, 2, 2)), [[1, 0], [0, 0]]),
        # tie between (0, 1) and (1, 0): row-major order picks (0, 1)
        (np.array([[[[1.0, 3.0], [3.0, 2.0]]]]), [[0, 1], [0, 0]]),
        # tie between (1, 0) and (1, 1): (1, 0)
        (np.array([[[[0.0, -1.0], [5.0, 5.0]]]]), [[0, 0], [1, 0]]),
    ],
    ids=["all-equal", "anti-diagonal", "bottom-row"],
)
def test_maxpool_ties_go_to_first_element_in_both_twins(X, expected):
    layer = MaxPool2D(2)
    layer.forward(X)
    G = np.full((1, 1, 1, 1), 2.5)
    np.testing.assert_array_equal(layer.backward(G)[0, 0], 2.5 * np.array(expected))
    _, g = tape_grads(apl.MaxPool2D(2), X, G, training=False)
    np.testing.assert_array_equal(g["X"][0, 0], 2.5 * np.array(expected))


def test_maxpool_overlapping_windows_accumulate_at_a_shared_maximum():
    X = np.zeros((1, 1, 3, 3))
    X[0, 0, 1, 1] = 1.0  # the centre is the max of all four 2x2 windows (stride 1)
    layer = MaxPool2D(2, stride=1)
    layer.forward(X)
    G = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    dX = layer.backward(G)
    assert dX[0, 0, 1, 1] == 10.0 and np.count_nonzero(dX) == 1
    _, g = tape_grads(apl.MaxPool2D(2, stride=1), X, G, training=False)
    np.testing.assert_array_equal(g["X"], dX)


@pytest.mark.parametrize("ns", [manualprop, apl], ids=["manual", "tape"])
@pytest.mark.parametrize("name", ["MaxPool2D", "AvgPool2D"])
def test_pool_bad_input_messages(ns, name):
    layer = getattr(ns, name)(3)
    t = "x" if ns is apl else "X"
    with pytest.raises(ValueError, match=rf"{name}\(kernel_size=\(3, 3\)\).* {t} must have shape \(batch, channels, height, width\); got \(4, 4\)"):
        layer(np.zeros((4, 4)))
    with pytest.raises(ValueError, match=rf"{name}\(kernel_size=\(3, 3\)\).* the kernel must fit into {t} along its width: {t} has width 2"):
        layer(np.zeros((1, 1, 4, 2)))


# ---------------------------------------------------------------- docs


def test_docstring_examples_run():
    res = doctest.testmod(manualprop.conv, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and res.attempted > 0


def test_random_params_keep_three_way():
    """Randomised (non-init) weights: the agreement does not depend on the initial draw."""
    rng = np.random.default_rng(13)
    layer, twin = Conv2D(2, 2, 2, stride=2, rng=0), apl.Conv2D(2, 2, 2, stride=2, rng=0)
    randomize_params(layer, rng, scale=3.0)
    X = rng.standard_normal((2, 2, 4, 4))
    three_way(layer, twin, X, rng.standard_normal((2, 2, 2, 2)))


@pytest.mark.skipif(not hasattr(ap, "ForwardAccumulator"), reason="forward mode not available")
@pytest.mark.parametrize("name", ["extract_patches", "scatter_patches", "take_along_axis", "scatter_along_axis"])
def test_zoo_primitives_forward_mode_dot_product_identity(name):
    """<v, J u> (forward mode, via the transpose trick) == <J^T v, u> (the tape)."""
    rng = np.random.default_rng(14)
    spec = dict(kernel_size=(2, 3), stride=(2, 1), padding=1, dilation=(1, 2))
    idx = rng.integers(0, 4, size=(3, 2, 5))
    if name == "extract_patches":
        arg, kw = rng.standard_normal((2, 2, 5, 6)), spec
    elif name == "scatter_patches":
        arg, kw = rng.standard_normal((2, 2, 2, 3, 3, 4)), dict(spec, x_shape=(2, 2, 5, 6))
    elif name == "take_along_axis":
        arg, kw = rng.standard_normal((3, 4, 5)), dict(axis=1)
    else:
        arg, kw = rng.standard_normal((3, 2, 5)), dict(axis=1, shape=(3, 4, 5))
    prim = ap.PRIMITIVES[name]
    args = (ap.constant(arg),) + ((idx,) if "along" in name else ())
    u = rng.standard_normal(arg.shape)
    with ap.ForwardAccumulator(args[0], u) as acc:
        out = prim(*args, **kw)
    jv = acc.jvp(out).numpy()
    v = rng.standard_normal(out.shape)
    with ap.GradientTape() as tape:
        tape.watch(args[0])
        out2 = prim(*args, **kw)
    jtv = tape.gradient(out2, args[0], output_gradients=v).numpy()
    np.testing.assert_allclose(np.sum(v * jv), np.sum(u * jtv), rtol=1e-12)
