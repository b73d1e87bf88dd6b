"""ConvTranspose2D (manualprop and autoprop): the definition (every input pixel scatters a
weighted kernel), the adjoint of Conv2D, three-way gradients, HIPS autograd on an
independent formulation (a 0/1 scatter matrix built by the definition loop), PyTorch's
output-size formula and initialisation rule, and bad input."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from zoo_cnn_helpers import randomize_params, rel_err, three_way

import autoprop as ap
from manualprop import Conv2D, ConvTranspose2D

CASES = [
    (dict(in_channels=2, out_channels=3, kernel_size=3), (2, 2, 4, 5)),
    (dict(in_channels=2, out_channels=3, kernel_size=3, padding=1), (2, 2, 4, 5)),
    (dict(in_channels=3, out_channels=2, kernel_size=(3, 2), stride=2), (2, 3, 3, 4)),
    (dict(in_channels=3, out_channels=2, kernel_size=(3, 2), stride=(2, 3), padding=(1, 0),
          output_padding=(1, 2)), (2, 3, 3, 4)),
    (dict(in_channels=2, out_channels=2, kernel_size=2, stride=2, dilation=3, output_padding=2,
          bias=False), (1, 2, 3, 3)),
    (dict(in_channels=1, out_channels=2, kernel_size=3, stride=2, padding=2, dilation=2), (2, 1, 4, 4)),
]


def by_definition(X, W, b, stride, padding, output_padding, dilation):
    """Loop over input pixels and kernel taps; scatter into the full output, then crop."""
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = stride, padding, output_padding, dilation
    N, C, H, Wd = X.shape
    _, O, kh, kw = W.shape
    Ho = (H - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1
    Wo = (Wd - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1
    full = np.zeros((N, O, Ho + 2 * ph, Wo + 2 * pw))
    for i in range(H):
        for j in range(Wd):
            for p in range(kh):
                for q in range(kw):
                    full[:, :, i * sh + p * dh, j * sw + q * dw] += X[:, :, i, j] @ W[:, :, p, q]
    Y = full[:, :, ph : ph + Ho, pw : pw + Wo]
    return Y + (0 if b is None else b[:, None, None])


def _pairs(layer):
    return layer.stride, layer.padding, layer.output_padding, layer.dilation


@pytest.mark.parametrize("kwargs,shape", CASES)
def test_forward_is_the_definition_and_the_output_size_is_pytorchs(kwargs, shape):
    rng = np.random.default_rng(0)
    layer = ConvTranspose2D(**kwargs, rng=1)
    X = rng.standard_normal(shape)
    Y = layer(X)
    ref = by_definition(X, layer.params["W"], layer.params.get("b"), *_pairs(layer))
    assert Y.shape == ref.shape
    np.testing.assert_allclose(Y, ref, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("kwargs,shape", CASES)
def test_three_way_and_autograd(kwargs, shape):
    rng = np.random.default_rng(1)
    layer = ConvTranspose2D(**kwargs, rng=2)
    twin = ap.layers.ConvTranspose2D(**kwargs, rng=2)
    randomize_params(layer, rng)
    X = rng.standard_normal(shape)
    G = rng.standard_normal(layer(X).shape)
    _, g = three_way(layer, twin, X, G)
    # autograd oracle: Y = S @ (W^T X) with the 0/1 scatter matrix S of the definition
    N, C, H, Wd = X.shape
    Cin, O, kh, kw = layer.params["W"].shape
    Ho, Wo = G.shape[2:]
    S = np.zeros((O * Ho * Wo, O * kh * kw * H * Wd))
    for o in range(O):
        for p in range(kh):
            for q in range(kw):
                for i in range(H):
                    for j in range(Wd):
                        col = np.ravel_multi_index((o, p, q, i, j), (O, kh, kw, H, Wd))
                        (sh, sw), (ph, pw), _, (dh, dw) = _pairs(layer)
                        y, x = i * sh + p * dh - ph, j * sw + q * dw - pw
                        if 0 <= y < Ho and 0 <= x < Wo:
                            S[np.ravel_multi_index((o, y, x), (O, Ho, Wo)), col] = 1.0
    b = layer.params.get("b")

    def f(Xa, Wa, ba):
        cols = anp.einsum("nchw,cokl->noklhw", Xa, Wa).reshape(N, -1)  # (N, O*kh*kw*H*W)
        Y = anp.dot(cols, S.T).reshape(N, O, Ho, Wo)
        if ba is not None:
            Y = Y + ba[:, None, None]
        return anp.sum(Y * G)

    W = layer.params["W"]
    assert rel_err(g["X"], grad(f, 0)(X, W, b)) < 1e-10
    assert rel_err(g["W"], grad(f, 1)(X, W, b)) < 1e-10
    if b is not None:
        assert rel_err(g["b"], grad(f, 2)(X, W, b)) < 1e-10


@pytest.mark.parametrize("kwargs,shape", CASES)
def test_it_is_conv2d_backward_and_its_backward_is_conv2d_forward(kwargs, shape):
    """<conv(Z), X> = <Z, convT(X)>: the transposed convolution is the adjoint of Conv2D."""
    rng = np.random.default_rng(2)
    up = ConvTranspose2D(**kwargs, rng=3)
    X = rng.standard_normal(shape)
    Y = up(X)
    conv = Conv2D(up.out_channels, up.in_channels, up.kernel_size, stride=up.stride,
                  padding=up.padding, dilation=up.dilation, bias=False)
    conv.params["W"][...] = up.params["W"]  # (in of convT = out of conv, out of convT = in of conv)
    Z = rng.standard_normal(Y.shape)
    convZ = conv(Z)
    # output_padding >= stride (possible when dilation > stride) adds windows that touch no
    # input pixel: conv sees them, the transpose has no input there (zeros)
    assert convZ.shape[2] >= X.shape[2] and convZ.shape[3] >= X.shape[3]
    Xp = np.zeros(convZ.shape)
    Xp[:, :, : X.shape[2], : X.shape[3]] = X
    b = up.params.get("b")
    Yb = Y - (0 if b is None else b[:, None, None])
    np.testing.assert_allclose(np.sum(convZ * Xp), np.sum(Z * Yb), rtol=1e-11)
    # and the other way: the forward is conv's dX, the backward's dX is conv's forward
    np.testing.assert_allclose(conv.backward(Xp), Yb, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(up.backward(Z), convZ[:, :, : X.shape[2], : X.shape[3]],
                               rtol=1e-12, atol=1e-13)


def test_pytorch_init_rule_and_twin_shares_it():
    layer = ConvTranspose2D(3, 20, kernel_size=(2, 3), rng=0)
    assert layer.params["W"].shape == (3, 20, 2, 3) and layer.params["b"].shape == (20,)
    k = 1 / np.sqrt(20 * 2 * 3)  # fan-in read from W's second axis, as PyTorch
    gen = np.random.default_rng(0)
    np.testing.assert_array_equal(layer.params["W"], gen.uniform(-k, k, size=(3, 20, 2, 3)))
    np.testing.assert_array_equal(layer.params["b"], gen.uniform(-k, k, size=(20,)))
    twin = ap.layers.ConvTranspose2D(3, 20, kernel_size=(2, 3), rng=0)
    np.testing.assert_array_equal(twin.variables["W"].numpy(), layer.params["W"])


def test_float32_kept():
    layer = ConvTranspose2D(2, 3, 3, stride=2, rng=0, dtype=np.float32)
    X = np.ones((1, 2, 3, 3), dtype=np.float32)
    Y = layer(X)
    assert Y.dtype == np.float32 and layer.backward(np.ones_like(Y)).dtype == np.float32
    assert all(g.dtype == np.float32 for g in layer.grads.values())


def test_bad_input_names_layer_and_problem():
    with pytest.raises(ValueError, match=r"ConvTranspose2D: output_padding must be smaller than stride or dilation"):
        ConvTranspose2D(1, 1, 3, stride=2, output_padding=2)
    layer = ConvTranspose2D(2, 1, 3, padding=3)
    with pytest.raises(ValueError, match=r"ConvTranspose2D\(2, 1, kernel_size=\(3, 3\), padding=\(3, 3\)\)\.forward: the output would be empty"):
        layer(np.zeros((1, 2, 2, 2)))
    with pytest.raises(ValueError, match=r"ConvTranspose2D\(.*\)\.forward: X must have shape \(batch, 2, height, width\)"):
        layer(np.zeros((1, 3, 5, 5)))
    with pytest.raises(RuntimeError, match=r"backward: must be called after forward"):
        ConvTranspose2D(1, 1, 2).backward(np.zeros((1, 1, 3, 3)))
    twin = ap.layers.ConvTranspose2D(2, 1, 3, padding=3)
    with pytest.raises(ValueError, match=r"autoprop\.layers\.ConvTranspose2D\(.*\)\.__call__: the output would be empty"):
        twin(np.zeros((1, 2, 2, 2)))
