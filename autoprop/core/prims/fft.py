"""numpy.fft: the discrete Fourier transforms, complex-valued linear maps (HIPS autograd's
``autograd/numpy/fft.py`` rules, in autograd's convention for complex gradients,
``autoprop.core.complex``).

``fft``, ``ifft``, ``fft2``, ``ifft2``, ``fftn`` and ``ifftn`` are symmetric matrices
(``F[j, k] = exp(-2 pi i jk / n)``, any ``norm``), so each VJP is the transform itself
applied to ``g`` (a transpose, no conjugate), and each JVP too (linear). ``rfft`` is the
first ``n // 2 + 1`` rows of ``fft`` on a real input: its VJP is ``Re fft(g padded with
zeros to n)``. ``fftshift``/``ifftshift`` are rolls. The length options ``n``/``s`` are numpy's
crop or zero-pad of the input (recorded slices and np.pad: their VJPs crop or pad ``g`` back, as
torch and jax), then the transform; the inverse real ones take the output's lengths, ``irfftn``'s
``s`` (an odd length too). ``rfft2``/``rfftn`` are numpy's definition
(``rfft`` on the last axis, then ``fftn``). ``irfft``/``irfft2``/``irfftn`` are one record,
``irfftn`` (real-linear, not complex-linear: the hidden half of the spectrum is ``conj(c)``; its
VJP below), and ``hfft``/``ihfft`` numpy's definitions through ``irfftn`` and ``rfft``.
"""

from __future__ import annotations

import numpy as np

from ..registry import PRIMITIVES, defcomposite, defnumpy, defprim, linear_jvp
from ..tensor import Tensor
from ._common import SAME, _axes_tuple, _check_kw, _shape, _t
from .stacking import _moved

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "fftshift", "ifftshift"]


def _fit(a, axes, sizes):
    """numpy's ``n``/``s``: ``a`` cropped or zero-padded at the end of each axis to its size
    (recorded: a slice and np.pad; -1 keeps the axis, as numpy 2)."""
    a = _t(a)
    axes = _axes_tuple(axes, a.ndim)
    if len(sizes) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    for ax, size in zip(axes, (int(k) for k in sizes)):
        if size == -1 or size == a.shape[ax]:
            continue
        if size < 1:
            raise ValueError(f"Invalid number of FFT data points ({size}) specified.")
        if size < a.shape[ax]:
            a = a[(slice(None),) * ax + (slice(0, size),)]
        else:
            a = np.pad(a, [(0, size - a.shape[ax]) if d == ax else (0, 0) for d in range(a.ndim)])
    return a


def _s_axes(a, s, axes):
    """numpy's axes of ``s``: the last ``len(s)`` ones when ``axes`` is None."""
    return tuple(range(-len(s), 0)) if axes is None else axes


def _self_adjoint(name):
    """The VJP of a transform that is a symmetric matrix: the transform applied to ``g``."""
    def vjp(g, ans, a, **kw):
        return PRIMITIVES[name](g, **kw) if isinstance(g, Tensor) else PRIMITIVES[name].fwd(g, **kw)
    return vjp


def _one_axis(name, f):
    def fwd(a, axis=-1, norm=None):
        return f(a, axis=axis, norm=norm)

    def np_call(a, n=None, axis=-1, norm=None, out=None):
        _check_kw(name, {"out": out})
        return prim(a if n is None else _fit(a, (axis,), (n,)), axis=axis, norm=norm)

    prim = defprim(name, fwd, _self_adjoint(name), jvp=linear_jvp(name),
                   jacobian=f"the {name} matrix (symmetric)", vjp=f"da = {name}(g) (F^T = F)", shapes=SAME,
                   numpy=((f, np_call),), source=f"np.fft.{name}({{args}}{{_kw}})", reads=((),))
    return prim


def _many_axes(name, f, default):
    def fwd(a, axes=default, norm=None):
        return f(a, axes=axes, norm=norm)

    def np_call(a, s=None, axes=default, norm=None, out=None):
        _check_kw(name, {"out": out})
        if s is not None:
            axes = _s_axes(a, s, axes)
            a = _fit(a, axes, s)
        return prim(a, axes=axes, norm=norm)

    prim = defprim(name, fwd, _self_adjoint(name), jvp=linear_jvp(name),
                   jacobian=f"the {name} matrix (a product of symmetric ones)", vjp=f"da = {name}(g)",
                   shapes=SAME, numpy=((f, np_call),), source=f"np.fft.{name}({{args}}{{_kw}})", reads=((),))
    return prim


fft = _one_axis("fft", np.fft.fft)
ifft = _one_axis("ifft", np.fft.ifft)
fft2 = _many_axes("fft2", np.fft.fft2, (-2, -1))
ifft2 = _many_axes("ifft2", np.fft.ifft2, (-2, -1))
fftn = _many_axes("fftn", np.fft.fftn, None)
ifftn = _many_axes("ifftn", np.fft.ifftn, None)


def _rfft_vjp(g, ans, a, axis=-1, norm=None):
    # rfft = the first m = n // 2 + 1 rows of fft on a real input: Re fft(g with n - m zeros)
    ax = axis % len(_shape(a))
    n, m = _shape(a)[ax], _shape(g)[ax]
    widths = [(0, 0)] * len(_shape(a))
    widths[ax] = (0, n - m)
    return np.real(fft(np.pad(g, widths), axis=ax, norm=norm) if isinstance(g, Tensor)
                   else np.fft.fft(np.pad(g, widths), axis=ax, norm=norm))


def _rfft_fwd(a, axis=-1, norm=None):
    return np.fft.rfft(a, axis=axis, norm=norm)


def _np_rfft(a, n=None, axis=-1, norm=None, out=None):
    _check_kw("rfft", {"out": out})
    a = _t(a) if n is None else _fit(a, (axis,), (n,))
    if a.dtype.kind == "c":
        raise TypeError("autoprop cannot record numpy.fft.rfft of a complex Tensor (numpy drops "
                        "the imaginary part); use numpy.fft.fft")
    return rfft(a, axis=axis, norm=norm)


rfft = defprim("rfft", _rfft_fwd, _rfft_vjp, jvp=linear_jvp("rfft"),
               jacobian="the first n // 2 + 1 rows of the fft matrix", vjp="da = Re fft(g padded to n)",
               shapes="a: n along axis; the result: n // 2 + 1", numpy=((np.fft.rfft, _np_rfft),),
               source="np.fft.rfft({args}{_kw})", reads=((0,),))


fftshift = _moved("fftshift", np.fft.fftshift, "x rolled by n // 2 along each axis (a permutation)")
ifftshift = _moved("ifftshift", np.fft.ifftshift, "x rolled by -(n // 2) along each axis (a permutation)")


# --- numpy.fft's real transforms over several axes: rfft on the last axis, then fftn ------------
@defcomposite("rfftn", "fftn(rfft(x, axis=axes[-1]), axes[:-1]) (numpy's own definition)",
              numpy=(np.fft.rfftn,))
def rfftn(a, s=None, axes=None, norm=None, out=None):
    """``numpy.fft.rfftn`` over Tensors: the N-D FFT of a real input, half the last axis kept.

    Parameters
    ----------
    a : Tensor or array_like, real
    s : sequence of int, optional
        Lengths along ``axes`` (numpy's crop or zero-pad first, recorded).
    axes : sequence of int, optional
        Default: all (the last ``len(s)`` with ``s``).
    norm : {None, 'backward', 'ortho', 'forward'}

    Returns
    -------
    Tensor, complex, shape of ``a`` with the last axis of ``axes`` ``n // 2 + 1`` long

    Raises
    ------
    TypeError
        For ``out=``.
    ValueError
        For a length in ``s`` below 1, or ``s`` and ``axes`` of different lengths.

    Notes
    -----
    numpy's own definition in recorded primitives, ``fftn(rfft(a, axis=axes[-1]), axes[:-1])``, so
    its gradient is the composition's (autograd's rfft and fft rules; a real loss of the complex
    result gives a real gradient for a real ``a``).
    """
    _check_kw("fft.rfftn", {"out": out})
    a = _t(a)
    if s is not None:
        axes = _s_axes(a, s, axes)
        a = _fit(a, axes, s)
    axes = tuple(range(a.ndim)) if axes is None else tuple(axes)
    r = _np_rfft(a, axis=axes[-1], norm=norm)
    return fftn(r, axes=axes[:-1], norm=norm) if len(axes) > 1 else r


@defcomposite("rfft2", "rfftn over the last two axes", numpy=(np.fft.rfft2,))
def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """``numpy.fft.rfft2`` over Tensors: :func:`rfftn` over ``axes`` (default the last two).

    Parameters
    ----------
    a : Tensor or array_like, real
    s : sequence of int, optional
    axes : sequence of int, default (-2, -1)
    norm : {None, 'backward', 'ortho', 'forward'}

    Returns
    -------
    Tensor, complex

    Raises
    ------
    TypeError
        For ``out=``.
    ValueError
        As :func:`rfftn`.

    Notes
    -----
    Calls :func:`rfftn`: the same recorded ``rfft`` and ``fftn``.
    """
    return rfftn(a, s=s, axes=axes, norm=norm, out=out)



# --- the inverse real transforms (session 19) --------------------------------------------------
# y = irfftn(c): c holds the first m = n // 2 + 1 coefficients along the last axis of a Hermitian
# spectrum, y is real. y is linear in (Re c, Im c) but not complex-linear (the hidden half is
# conj(c)): y_j = Re sum_k w_k s c_k exp(2 pi i j.k / n), w_k = 1 at k = 0 and k = n/2 along the
# last axis (their imaginary parts are dropped) and 2 between, s the norm's scale (1/N, 1/sqrt N,
# 1). So dL = sum_j g_j dy_j = Re sum_k [w_k s conj(rfftn(g))_k] dc_k: the gradient in autograd's
# convention (complex.py) is G = w s conj(rfftn(g)) (autograd's irfft_grad; checked against it).
def _irfft_scale(norm, n):
    return {None: 1.0 / n, "backward": 1.0 / n, "ortho": 1.0 / np.sqrt(n), "forward": 1.0}[norm]


def _irfftn_vjp(g, ans, a, axes=None, norm=None, s=None):
    nd = len(_shape(a))
    axes = tuple(range(nd)) if axes is None else axes
    last = axes[-1] % nd
    n_last, m = _shape(g)[last], _shape(a)[last]
    w = np.full(m, 2.0)
    w[0] = 1.0
    if n_last % 2 == 0:
        w[-1] = 1.0
    w = w.reshape((m,) + (1,) * (nd - 1 - last))
    full = int(np.prod([_shape(g)[ax] for ax in axes]))
    if isinstance(g, Tensor):
        r = rfftn(g, axes=axes)  # (the composite, recorded: second order)
    else:
        r = np.fft.rfftn(g, axes=axes)
    return np.conj(r) * (w * _irfft_scale(norm, full))


def _irfftn_fwd(a, axes=None, norm=None, s=None):  # s: the output's lengths (an odd one too)
    return np.fft.irfftn(a, s=s, axes=axes, norm=norm)


irfftn_ = defprim("irfftn", _irfftn_fwd, _irfftn_vjp, jvp=linear_jvp("irfftn"),
                  jacobian="the inverse transform of the Hermitian spectrum whose first half is c "
                           "(real-linear in c, not complex-linear)",
                  vjp="dc = w s conj(rfftn(g)), w = 1 at the first and (even n) last coefficient "
                      "along the last axis, 2 between; s = 1/N, 1/sqrt(N) or 1 (norm)",
                  shapes="c: m = n // 2 + 1 along the last axis; the result: n = 2 (m - 1), or s",
                  source="np.fft.irfftn({args}{_kw})", reads=((0,),))


def _np_irfft_family(name, axes_of):
    def run(a, n_or_s=None, axes=None, norm=None, out=None, **kw):
        _check_kw(name, {"out": out})
        a = _t(a)
        if n_or_s is None:
            return irfftn_(a, axes=axes_of(a, axes), norm=norm)
        s = (n_or_s,) if name in ("irfft", "hfft") else tuple(n_or_s)
        axes = axes_of(a, _s_axes(a, s, axes) if name == "irfftn" else axes)
        return _irfft_sized(a, axes, s, norm)
    return run


def _irfft_sized(a, axes, s, norm):
    """numpy's inverse real transform with output lengths ``s``: the input cropped or padded to
    ``s`` on the other axes and to ``s[-1] // 2 + 1`` on the last (recorded), then ``irfftn``."""
    s = [a.shape[ax] if k == -1 else int(k) for ax, k in zip(axes, s[:-1])] + [
        2 * (a.shape[axes[-1]] - 1) if s[-1] == -1 else int(s[-1])]
    return irfftn_(_fit(a, axes, s[:-1] + [s[-1] // 2 + 1]), axes=axes, norm=norm, s=tuple(s))


def _axes_one(a, axis):
    return _axes_tuple(-1 if axis is None else axis, a.ndim)


def _axes_many(default):
    def get(a, axes):
        axes = default if axes is None else axes
        return _axes_tuple(range(a.ndim) if axes is None else axes, a.ndim)
    return get


def _np_irfft(a, n=None, axis=-1, norm=None, out=None):
    return _np_irfft_family("irfft", _axes_one)(a, n, axis, norm, out)


def _np_irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _np_irfft_family("irfft2", _axes_many((-2, -1)))(a, s, axes, norm, out)


def _np_irfftn(a, s=None, axes=None, norm=None, out=None):
    return _np_irfft_family("irfftn", _axes_many(None))(a, s, axes, norm, out)


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _np_hfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy's definition: ``irfft(conj(a), n, axis, norm=<swapped>)``."""
    _check_kw("hfft", {"out": out})
    a = _t(a)
    if n is not None:
        return _irfft_sized(np.conj(a), _axes_one(a, axis), (n,), _SWAP[norm])
    return irfftn_(np.conj(a), axes=_axes_one(a, axis), norm=_SWAP[norm])


def _np_ihfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy's definition: ``conj(rfft(a, n, axis, norm=<swapped>))``."""
    _check_kw("ihfft", {"out": out})
    return np.conj(_np_rfft(a, n=n, axis=axis, norm=_SWAP[norm]))


for _f, _impl in ((np.fft.irfft, _np_irfft), (np.fft.irfft2, _np_irfft2), (np.fft.irfftn, _np_irfftn),
                  (np.fft.hfft, _np_hfft), (np.fft.ihfft, _np_ihfft)):
    defnumpy("numpy.fft.irfft & co.", (_f,), _impl)  # (adaptors of the irfftn record)
del _f, _impl
__all__ += ["rfftn", "rfft2", "irfftn_"]
