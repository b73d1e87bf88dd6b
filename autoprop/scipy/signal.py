"""``scipy.signal``'s convolutions over autoprop Tensors, recorded on the tape.

scipy.signal's ``convolve``, ``correlate``, ``convolve2d`` and ``correlate2d`` are Python code that
converts its input to numpy arrays: called on a Tensor they return a plain array, off the tape (a
``TapeEscapeWarning`` while a tape records). These twins have scipy's signatures and are written
with recorded numpy functions: ``in1`` zero-padded (``np.pad``), its windows of ``in2``'s shape
(``np.lib.stride_tricks.sliding_window_view``, a gather) contracted with the flipped ``in2``
(``np.tensordot``), so both inputs are differentiable and the derivative is the chain rule through
those records (checked against HIPS autograd's ``autograd.scipy.signal.convolve`` and central
differences in ``tests/test_autoprop_scipy_more.py``). A call with no Tensor among its arguments is scipy's own function (plain arrays out, as scipy's), so a
twin replaces scipy's import in code that also computes on plain arrays (``autoprop/scipy/_plain.py``).

Real inputs of any (equal) number of dimensions; the modes ``'full'``, ``'valid'`` (the inputs
swapped when ``in2`` is the larger, as scipy) and ``'same'`` (centred on ``in1``, as scipy).
``method`` chooses scipy's algorithm, which changes no value beyond rounding: every method is the
direct sum here. ``convolve2d``/``correlate2d`` take ``boundary='fill'`` with ``fillvalue=0``
(scipy's default); other boundaries raise NotImplementedError.

Examples
--------
>>> import numpy as np, autoprop as ap
>>> from autoprop.scipy import signal
>>> k = ap.Variable([1.0, -1.0])
>>> with ap.GradientTape() as tape:
...     y = np.sum(signal.convolve(np.array([1.0, 2.0, 4.0]), k, mode="valid") ** 2)
>>> y.numpy(), tape.gradient(y, k).numpy()   # valid: [2 - 1, 4 - 2]; dy/dk = 2 (1 [2, 1] + 2 [4, 2])
(array(5.), array([20., 10.]))
"""

from __future__ import annotations

import numpy as _np

from ..core.prims._common import _t
from ._plain import scipy_on_plain as _scipy_on_plain

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d"]

_METHODS = ("auto", "direct", "fft")


def _check(in1, in2, mode, method, who):
    in1, in2 = _t(in1), _t(in2)
    if in1.dtype.kind == "c" or in2.dtype.kind == "c":
        raise TypeError(f"autoprop.scipy.signal.{who}: real inputs only; got {in1.dtype} and {in2.dtype}")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("full", "valid", "same"):
        raise ValueError("Acceptable mode flags are 'valid', 'same', or 'full'.")
    if method not in _METHODS:
        raise ValueError(f"Acceptable method flags are 'auto', 'direct', or 'fft'; got {method!r}")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"autoprop.scipy.signal.{who}: an empty input (shapes {in1.shape} and {in2.shape}); "
                         "scipy's direct method refuses it too")
    return in1, in2


def _convolve(in1, in2, mode):
    """The N-d convolution sum(in1[n - m] in2[m]): windows of the padded in1 against flipped in2."""
    s1 = in1.shape
    if in1.ndim == 0:  # (two numbers: their product, as scipy)
        return in1 * in2
    if mode == "valid":
        if not all(a >= b for a, b in zip(in1.shape, in2.shape)):
            if not all(b >= a for a, b in zip(in1.shape, in2.shape)):
                raise ValueError("For 'valid' mode, one must be at least as large as the other in every dimension")
            in1, in2 = in2, in1  # (convolution commutes; scipy swaps too)
        padded = in1
    else:
        padded = _np.pad(in1, [(k - 1, k - 1) for k in in2.shape])
    windows = _np.lib.stride_tricks.sliding_window_view(padded, in2.shape)
    out = _np.tensordot(windows, _np.flip(in2), axes=in2.ndim)
    if mode == "same":  # scipy's _centered(full, in1's shape)
        start = [(n - s) // 2 for n, s in zip(out.shape, s1)]
        out = out[tuple(slice(a, a + s) for a, s in zip(start, s1))]
    return out


def convolve(in1, in2, mode="full", method="auto"):
    """``scipy.signal.convolve``: the N-d convolution of ``in1`` and ``in2``, recorded.

    Parameters
    ----------
    in1, in2 : Tensor or array_like
        Real, the same number of dimensions.
    mode : {'full', 'valid', 'same'}
    method : {'auto', 'direct', 'fft'}
        scipy's algorithm (the value differs by rounding only): the direct sum here.

    Returns
    -------
    Tensor
        ``full``: ``in1.shape + in2.shape - 1``; ``valid``: ``|in1.shape - in2.shape| + 1``;
        ``same``: ``in1.shape``.

    Raises
    ------
    ValueError
        Different numbers of dimensions, an unknown mode or method, an empty input, or ``'valid'`` with
        neither input at least as large as the other in every dimension (scipy's messages). Two 0-d
        inputs give their product, as scipy.
    TypeError
        A complex input.

    Notes
    -----
    ``out[n] = sum_m in1[n - m] in2[m]``: bilinear, so ``d out = conv(d in1, in2) + conv(in1, d in2)``,
    recorded through pad, the window gather and tensordot (scipy's definition, ``scipy.signal.convolve``).
    """
    in1, in2 = _check(in1, in2, mode, method, "convolve")
    return _convolve(in1, in2, mode)


def correlate(in1, in2, mode="full", method="auto"):
    """``scipy.signal.correlate``: the N-d cross-correlation, recorded.

    Parameters
    ----------
    in1, in2 : Tensor or array_like
        Real, the same number of dimensions.
    mode : {'full', 'valid', 'same'}
    method : {'auto', 'direct', 'fft'}
        As :func:`convolve`.

    Returns
    -------
    Tensor
        As :func:`convolve`.

    Raises
    ------
    ValueError, TypeError
        As :func:`convolve`.

    Notes
    -----
    ``correlate(in1, in2) = convolve(in1, in2 reversed along every axis)`` (scipy's own fft path
    computes it so; real inputs: no conjugate).
    """
    in1, in2 = _check(in1, in2, mode, method, "correlate")
    return _convolve(in1, _np.flip(in2), mode)


def _two_d(in1, in2, boundary, fillvalue, who):
    if boundary not in ("fill", "pad") or _np.any(_np.asarray(getattr(fillvalue, "_value", fillvalue)) != 0):
        raise NotImplementedError(f"autoprop.scipy.signal.{who}: boundary='fill' with fillvalue=0 only (scipy's "
                                  f"default); got boundary={boundary!r}, fillvalue={fillvalue!r}")
    if _np.ndim(getattr(in1, "_value", in1)) != 2 or _np.ndim(getattr(in2, "_value", in2)) != 2:
        raise ValueError(f"{who} inputs must both be 2-D arrays")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """``scipy.signal.convolve2d``: the 2-D convolution, recorded (:func:`convolve` of 2-D inputs).

    Parameters
    ----------
    in1, in2 : Tensor or array_like, 2-D, real
    mode : {'full', 'valid', 'same'}
    boundary : {'fill'}
        Zero padding (scipy's default); 'wrap' and 'symm' are not twinned.
    fillvalue : 0

    Returns
    -------
    Tensor
        As :func:`convolve`.

    Raises
    ------
    ValueError
        Inputs that are not 2-D, or as :func:`convolve`.
    NotImplementedError
        Another boundary or a nonzero fillvalue.
    """
    _two_d(in1, in2, boundary, fillvalue, "convolve2d")
    return convolve(in1, in2, mode)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """``scipy.signal.correlate2d``: the 2-D cross-correlation, recorded (:func:`correlate` of 2-D inputs;
    ``'same'`` centred as scipy's correlate2d, which differs from correlate's for an even kernel).

    Parameters
    ----------
    in1, in2 : Tensor or array_like, 2-D, real
    mode : {'full', 'valid', 'same'}
    boundary : {'fill'}
        Zero padding (scipy's default); 'wrap' and 'symm' are not twinned.
    fillvalue : 0

    Returns
    -------
    Tensor
        As :func:`convolve`.

    Raises
    ------
    ValueError, NotImplementedError
        As :func:`convolve2d`.
    """
    _two_d(in1, in2, boundary, fillvalue, "correlate2d")
    if mode != "same":
        return correlate(in1, in2, mode)
    # 'same' here is centred differently from correlate's: the full result from k // 2 on each axis
    # (scipy's _correlate2d puts the kernel's origin there; correlate takes (k - 1) // 2)
    in1, in2 = _check(in1, in2, "full", "auto", "correlate2d")
    full = _convolve(in1, _np.flip(in2), "full")
    return full[tuple(slice(k // 2, k // 2 + n) for k, n in zip(in2.shape, in1.shape))]


# a call without a Tensor is scipy's own (ndarrays out, as the code the twin replaces scipy's in expects: corpus38 F7)
convolve, correlate, convolve2d, correlate2d = (_scipy_on_plain(f, "scipy.signal") for f in (
    convolve, correlate, convolve2d, correlate2d))
