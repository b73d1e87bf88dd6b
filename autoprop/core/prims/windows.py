"""Windows: ``extract_patches`` (im2col, ``tf.image.extract_patches`` on the last two
axes) and its transpose ``scatter_patches`` (col2im, the scatter-add).

The kernels are :func:`manualprop._im2col.im2col` / ``col2im``: the same numpy code the
hand-derived Conv2D and pooling layers use, written once. Each primitive's VJP is the
other primitive, so an outer tape records the backward pass (higher-order derivatives);
both are linear, so their JVPs are the primitives applied to the tangent.
Derivations: ``lessons/20-conv2d.md`` (patches, col2im), ``lessons/21-pooling.md``.
"""

from __future__ import annotations

from manualprop._im2col import col2im, im2col

from ..registry import defprim, linear_jvp
from ..tensor import Tensor

__all__ = ["extract_patches", "scatter_patches"]


def _extract_patches_fwd(x, kernel_size, stride=1, padding=0, dilation=1):
    return im2col(x, kernel_size, stride, padding, dilation)


def _scatter_patches_fwd(g, x_shape, kernel_size, stride=1, padding=0, dilation=1):
    return col2im(g, x_shape, kernel_size, stride, padding, dilation)


def _extract_patches_vjp(g, ans, x, kernel_size, stride=1, padding=0, dilation=1):
    spec = dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
    if isinstance(g, Tensor):  # an outer tape records the backward pass
        return scatter_patches(g, x_shape=tuple(x.shape), **spec)
    return col2im(g, tuple(x.shape), **spec)


def _scatter_patches_vjp(gg, ans, g, x_shape, kernel_size, stride=1, padding=0, dilation=1):
    spec = dict(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
    if isinstance(gg, Tensor):
        return extract_patches(gg, **spec)
    return im2col(gg, **spec)


extract_patches = defprim(
    "extract_patches", _extract_patches_fwd, _extract_patches_vjp, jvp=linear_jvp("extract_patches"),
    jacobian="a 0/1 selection matrix: patch entry (p, q, i, j) is the padded input pixel "
             "(i sh + p dh, j sw + q dw) (tf.image.extract_patches; im2col)",
    vjp="dx = col2im(g): scatter-ADD every patch entry back to its pixel (pixels shared by "
        "overlapping windows sum their gradients); the padding's share is dropped",
    shapes="x (..., H, W) -> (..., kh, kw, Ho, Wo), Ho = (H + 2 ph - dh (kh - 1) - 1) // sh + 1 "
           "(same for Wo); kernel_size, stride, padding, dilation: int or (h, w) pair",
    kinks="none (linear). The last two axes are the spatial ones; zero padding",
    source="im2col({x}, {kernel_size}, {stride}, {padding}, {dilation})", reads=((),),
)
scatter_patches = defprim(
    "scatter_patches", _scatter_patches_fwd, _scatter_patches_vjp, jvp=linear_jvp("scatter_patches"),
    jacobian="the transpose of extract_patches' selection matrix (col2im)",
    vjp="dg = extract_patches(gg): the adjoint of a scatter-add is the gather",
    shapes="g (..., kh, kw, Ho, Wo) -> x_shape (..., H, W)",
    kinks="none (linear)",
    source="col2im({g}, {x_shape}, {kernel_size}, {stride}, {padding}, {dilation})", reads=((),),
)
