"""The im2col / col2im kernels: plain numpy, written once, used by both tracks.

:func:`im2col` copies every receptive field of the (padded) last two axes into
columns; :func:`col2im` is its transpose, the scatter-add. ``manualprop.conv`` builds
Conv2D and pooling on them; ``autoprop``'s windows family registers them as the
``extract_patches`` / ``scatter_patches`` primitives (``tf.image.extract_patches``).
This module is a kernel, not a layer: it imports numpy only, so autoprop's core may
use it without knowing about layers. Derivation: ``lessons/20-conv2d.md``.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided, sliding_window_view

__all__ = ["col2im", "im2col"]


def _pair(v):
    if isinstance(v, (tuple, list)):
        return int(v[0]), int(v[1])
    return int(v), int(v)


def im2col(X, kernel_size, stride=(1, 1), padding=(0, 0), dilation=(1, 1)):
    """Copy every receptive field of ``X`` into columns (no loop over pixels).

    Parameters
    ----------
    X : ndarray, shape (..., H, W)
        The last two axes are the spatial ones (NCHW input: (N, C, H, W)).
    kernel_size, stride, padding, dilation : int or (int, int)
        Zero padding of ``padding`` pixels on each side.

    Returns
    -------
    cols : ndarray, shape (..., kh, kw, H_out, W_out), C-contiguous
        ``cols[..., p, q, i, j] = Xpad[..., i*sh + p*dh, j*sw + q*dw]``, with
        ``H_out = (H + 2 ph - dh (kh - 1) - 1) // sh + 1`` (same for ``W_out``).

    Notes
    -----
    The zero-padded copy of ``X`` (a new array filled with zeros and ``X`` written into its
    middle, as ``np.pad`` makes it without its Python-level bookkeeping) is read through one
    strided view (``as_strided``, read-only) of shape ``(..., kh, kw, H_out, W_out)``:
    offset ``(p, q)`` of window ``(i, j)`` is ``Xpad[..., i*sh + p*dh, j*sw + q*dw]``, so its
    strides are ``(dh, dw, sh, sw)`` times those of the last two axes. It is the
    ``sliding_window_view`` of the dilated span sliced with steps ``stride`` and ``dilation``
    (the same elements; that view is still taken, for its error message, when a window does
    not fit); only the final ``ascontiguousarray`` copies (the im2col memory cost: ``kh*kw``
    times the output's spatial size per channel). Building the view directly costs half as
    much as ``np.pad`` + ``sliding_window_view`` + ``moveaxis`` on a Conv2D's input of 4x8x16x16
    (about 115 against 280 us; issue 10's fast check calls a Conv2D 17 times).
    """
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = map(_pair, (kernel_size, stride, padding, dilation))
    X = np.asarray(X)
    if X.ndim >= 2:
        *lead, H, W = X.shape
        Hp, Wp = H + 2 * ph, W + 2 * pw
        H_out, W_out = (Hp - dh * (kh - 1) - 1) // sh + 1, (Wp - dw * (kw - 1) - 1) // sw + 1
        if H_out >= 1 and W_out >= 1 and min(kh, kw, sh, sw, dh, dw) >= 1 and ph >= 0 and pw >= 0:
            if ph or pw:
                Xp = np.zeros((*lead, Hp, Wp), dtype=X.dtype)
                Xp[..., ph : ph + H, pw : pw + W] = X
                X = Xp
            *s, s_h, s_w = X.strides
            v = as_strided(X, (*lead, kh, kw, H_out, W_out), (*s, s_h * dh, s_w * dw, s_h * sh, s_w * sw),
                           writeable=False)
            return np.ascontiguousarray(v)
    # a window that does not fit (or no two spatial axes): numpy's own error message
    if ph or pw:
        X = np.pad(X, [(0, 0)] * (X.ndim - 2) + [(ph, ph), (pw, pw)])
    v = sliding_window_view(X, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(-2, -1))
    v = v[..., ::sh, ::sw, ::dh, ::dw]  # (..., H_out, W_out, kh, kw), a strided view
    return np.ascontiguousarray(np.moveaxis(v, (-2, -1), (-4, -3)))


def col2im(cols, x_shape, kernel_size, stride=(1, 1), padding=(0, 0), dilation=(1, 1)):
    """Scatter-add columns back to an input-shaped array: the transpose of :func:`im2col`.

    Parameters
    ----------
    cols : ndarray, shape (..., kh, kw, H_out, W_out)
        Typically ``dL/dcols``.
    x_shape : tuple
        Shape of the (unpadded) input of :func:`im2col`; only its last two entries
        (H, W) are read, the leading axes are those of ``cols``.
    kernel_size, stride, padding, dilation : int or (int, int)

    Returns
    -------
    ndarray, shape ``cols.shape[:-4] + (H, W)``
        ``dX[..., y, x] = sum of cols[..., p, q, i, j]`` over all
        ``(p, q, i, j)`` with ``i*sh + p*dh - ph = y`` and
        ``j*sw + q*dw - pw = x``; gradients that land in the padding are
        dropped (the padding is a constant).

    Notes
    -----
    One vectorised ``+=`` per kernel offset ``(p, q)``: offset ``(p, q)`` of
    every window hits the strided grid ``Xpad[p*dh :: sh, q*dw :: sw]``. Within
    one offset the grid points are distinct, so ``+=`` on a strided slice is
    safe; across offsets they overlap when ``stride < span``, and the
    accumulation over offsets sums them.
    """
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = map(_pair, (kernel_size, stride, padding, dilation))
    cols = np.asarray(cols)
    H, W = x_shape[-2:]
    H_out, W_out = cols.shape[-2:]
    dXp = np.zeros(cols.shape[:-4] + (H + 2 * ph, W + 2 * pw), dtype=cols.dtype)
    for p in range(kh):
        h0 = p * dh
        rows = slice(h0, h0 + sh * (H_out - 1) + 1, sh)
        for q in range(kw):
            w0 = q * dw
            dXp[..., rows, w0 : w0 + sw * (W_out - 1) + 1 : sw] += cols[..., p, q, :, :]
    if ph or pw:
        return dXp[..., ph : ph + H, pw : pw + W]
    return dXp
