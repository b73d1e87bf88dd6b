"""One look at a whole array: its smallest and largest element, and whether it is finite;
``tanh'`` of a whole array from its input (:func:`sech2`); and softmax's VJP without
cancellation on saturated rows (:func:`softmax_vjp`).

Kernels, not checks: plain numpy, written once, used by both tracks (manualprop's
validation and Tanh, autoprop's VJPs and recurrent records). At the sizes of a course's
networks (a few hundred to a few thousand elements) a whole-array ufunc reduction
(``np.minimum.reduce(a, axis=None)``, ``np.add.reduce``) spends most of its time setting up
numpy's reduction machinery, about 1.5-4 us a call; ``argmin`` and a BLAS dot cost a
third of that and give the same answer. This module imports numpy only, so autoprop's core
may use it without knowing about layers (as :mod:`manualprop._im2col`).
"""

from __future__ import annotations

from cmath import isfinite as _isfinite  # real and complex scalars

import numpy as np

__all__ = ["DOT_CHUNK", "largest", "rows", "sech2", "smallest", "softmax_vjp", "squares_finite"]

#: ``np.vdot`` without numpy's ``__array_function__`` dispatch (a Python-level call on every use)
_vdot = getattr(np.vdot, "_implementation", np.vdot)

#: The most elements one dot may take. OpenBLAS runs a dot of more than 10,000 elements on all
#: its threads, and its idle threads then spin: on a machine whose cores are busy (a shared
#: JupyterHub, a grading server) one such dot of 16,384 elements took 4 ms instead of 40 us,
#: and gradcheck's Conv2D check 65 s instead of 11 s. Larger arrays are summed in chunks of
#: this size, in a fixed order (so the value does not depend on the thread count either).
DOT_CHUNK = 8192

#: the dtypes whose dot is a BLAS call (float16's is numpy's own loop, and overflows at 65,504)
_BLAS = frozenset(np.dtype(t) for t in (np.float64, np.float32, np.complex128, np.complex64))


def smallest(a: np.ndarray):
    """``a.min()`` of a non-empty ndarray as a Python number; NaN if ``a`` holds a NaN, as ``a.min()``.

    By ``argmin`` (which returns the first NaN's index) and ``item``: a whole-array reduction
    (``np.minimum.reduce(a, axis=None)``) spends about 1.5 us setting up numpy's reduction
    machinery, ``argmin`` about 0.5 us in all at a few hundred elements; at 16,384 the two
    cost the same. The same value (the minimum is an element), so the same comparisons.
    """
    return a.item(a.argmin())


def largest(a: np.ndarray):
    """``a.max()`` of a non-empty ndarray as a Python number, as :func:`smallest` (NaN if any)."""
    return a.item(a.argmax())


def squares_finite(v: np.ndarray) -> bool:
    """True only if every element of the float or complex ndarray ``v`` is finite.

    One reduction proves it: the sum of squares ``v . v`` (one BLAS dot, up to
    :data:`DOT_CHUNK` elements of a float32/64 or complex64/128 array; 1.2-1.8 us against
    ``np.add.reduce``'s 4-5 at 512 elements), else the sum. A NaN or an inf anywhere makes
    either NaN or inf; False may also mean that finite values overflowed (``|v| > 1e154``
    for float64's squares, ``1e19`` for float32's), so False calls for the element-wise look
    and True needs none. The squares are never negative, so they never form ``inf - inf``,
    and the dot reports no overflow to numpy's error state.

    Parameters
    ----------
    v : ndarray of a float or complex dtype

    Returns
    -------
    bool
    """
    if v.size <= DOT_CHUNK and v.dtype in _BLAS:
        return _isfinite(_vdot(v, v))
    return _isfinite(np.add.reduce(v, axis=None))


def sech2(x: np.ndarray) -> np.ndarray:
    """``tanh'(x) = 1 / cosh(x)**2`` from the input, to full relative precision.

    ``1 - tanh(x)**2`` cancels to 0 once ``tanh(x)`` rounds to +-1 (at ``x = 20`` the
    derivative is 1.70e-17, not 0; in float32 near ``x = -9`` it is 2x too large).
    Used by manualprop's :class:`~manualprop.Tanh` and recurrent layers, and by autoprop's
    ``rnn_tanh`` record (the same kernel, so the same bits as manualprop's ``RNN``).

    Parameters
    ----------
    x : ndarray of float32 or float64, any shape (0-d too)

    Returns
    -------
    ndarray
        A new array of ``x``'s shape and dtype; 0 where ``|x| > 710`` (89 in float32), NaN
        where ``x`` is NaN.
    """
    # cosh overflows to inf where (1/cosh)^2 is below the smallest subnormal anyway
    # (|x| > 710; 89 in float32): 1/inf = 0 is the right value, so the overflow is not
    # reported (a clip to the bound costs two more passes over x: about 2 us of the 4,096
    # entries of train_step.py's RNN, against about 1 us for the np.errstate)
    with np.errstate(over="ignore"):
        c = np.cosh(x)
    if not c.ndim:
        c = 1.0 / c
        return c * c
    np.divide(1.0, c, out=c)
    return np.multiply(c, c, out=c)


#: ``np.arange(n)`` by batch size ``n``, read-only: the row index of a label gather
#: (``shifted[rows, y]``), made once per batch size instead of on every call (about 0.25 us a
#: call at a batch of 16, twice a step; issue 15): manualprop's and autoprop's cross-entropy
#: (forward and backward, or record and VJP). Cleared when it grows large.
ROWS: dict = {}
ROWS_MAX = 64


def rows(n: int) -> np.ndarray:
    """``np.arange(n)`` (int64, read-only), kept in :data:`ROWS`: the same indices, never written."""
    r = ROWS.get(n)
    if r is None:
        if len(ROWS) >= ROWS_MAX:
            ROWS.clear()
        r = ROWS[n] = np.arange(n)
        r.flags.writeable = False
    return r


def softmax_vjp(p, g, axis=-1):
    """Softmax's VJP (and JVP: its Jacobian is symmetric) from its output: ``p * (g - sum(g * p))``, no cancellation.

    As ``sum(p) = 1`` along ``axis``, ``g`` may be shifted by any constant per row: ``d = g - g[argmax p]``
    makes the largest ``p``'s term exactly 0. The textbook form subtracts two numbers of size ``|g|`` that
    agree to 1e-13 on a saturated row (``p`` nearly one-hot) and returns their round-off (attention at
    X + 3000: dW_q -5.2e-10 where the true one is -1.6e-13); this one keeps each entry's relative accuracy.
    The row sums are numpy's pairwise ``sum`` (einsum's sequential one lost a float32 digit on rows of 1e5).
    Where the shift overflows (``g`` with entries of both signs near the dtype's largest), the row sums are
    not finite: ``g`` is halved (exact above the subnormals) and the result doubled.

    The same operations, in the same order, run on numpy arrays (manualprop's Softmax and attention,
    autoprop's softmax VJP and JVP) and on autoprop's Tensors through numpy's dispatch (a tape recording
    the VJP: second order, and ``GradientTape.backward_source``, whose code then agrees with the tape bit
    for bit). The argmax is an index: constant where it is unique, so no derivative is lost.

    Parameters
    ----------
    p : ndarray
        The softmax's output (rows along ``axis`` summing to 1).
    g : ndarray
        Upstream gradient ``dY`` (or a tangent), ``p``'s shape or broadcastable to it.
    axis : int, tuple of int or None
        The softmax's axis (axes; None: all).

    Returns
    -------
    ndarray
        ``dX``, ``p``'s shape.
    """
    if np.shape(g) != np.shape(p):
        g = np.broadcast_to(g, np.shape(p))
    if axis is None or isinstance(axis, tuple):  # several axes: made one last axis, and back
        nd = np.ndim(p)
        axes = tuple(range(nd)) if axis is None else tuple(sorted(a % nd for a in axis))
        end = tuple(range(nd - len(axes), nd))
        if not np.size(p):
            return p * g
        moved = axes != end
        pm, gm = (np.moveaxis(p, axes, end), np.moveaxis(g, axes, end)) if moved else (p, g)
        shape = np.shape(pm)
        flat = shape[:nd - len(axes)] + (-1,)
        d = _softmax_rows(pm.reshape(flat), gm.reshape(flat), -1).reshape(shape)
        return np.moveaxis(d, end, axes) if moved else d
    if not np.size(p):
        return p * g
    return _softmax_rows(p, g, axis)


def _softmax_rows(p, g, axis):
    """:func:`softmax_vjp` along one int ``axis``.

    ``g - gk`` is computed twice rather than kept beside ``(g - gk) * p``: one full-size array
    at a time (numpy reuses a temporary in place, and the second is updated in place). Two
    alive at once cost, on every call, the page faults of memory the allocator had given back
    (about 100 a call at (8, 4, 32, 32), 1,000 at (4, 4, 128, 128): 5-8x the textbook form's time).
    On ndarrays the argmax and the gather are numpy's without its dispatch and index grids
    (the same values: a gather copies); on Tensors, numpy's functions (recorded).
    """
    arrays = type(g) is np.ndarray and type(p) is np.ndarray
    if arrays:
        k = p.argmax(axis=axis, keepdims=True)
        if axis in (-1, p.ndim - 1):
            gk = g.reshape(-1, g.shape[-1])[rows(k.size), k.reshape(-1)].reshape(k.shape)
        else:
            gk = np.take_along_axis(g, k, axis=axis)
    else:
        gk = np.take_along_axis(g, np.argmax(p, axis=axis, keepdims=True), axis=axis)
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is looked for below, and undone)
        s = ((g - gk) * p).sum(axis=axis, keepdims=True)
    half = not _isfinite(s.sum().item()) and np.isfinite(g).all().item()  # (.item(): a Tensor's explicit exit)
    if half:  # the shift overflowed (or the row sums' sum did): g / 2 cannot (exact above the subnormals)
        g, gk = g * 0.5, gk * 0.5
        s = ((g - gk) * p).sum(axis=axis, keepdims=True)
    if arrays and g.dtype == s.dtype == np.result_type(g, p):
        d = np.subtract(g, gk)  # (in place from here: the same values as the expression below)
        np.subtract(d, s, out=d)
        np.multiply(d, p, out=d)
    else:
        d = (g - gk - s) * p
    return d * 2.0 if half else d
