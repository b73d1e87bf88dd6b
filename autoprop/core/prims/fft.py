"""numpy.fft: the discrete Fourier transforms, complex-valued linear maps (HIPS autograd's
``autograd/numpy/fft.py`` rules, in autograd's convention for complex gradients,
``autoprop.core.complex``).

``fft``, ``ifft``, ``fft2``, ``ifft2``, ``fftn`` and ``ifftn`` are symmetric matrices
(``F[j, k] = exp(-2 pi i jk / n)``, any ``norm``), so each VJP is the transform itself
applied to ``g`` (a transpose, no conjugate), and each JVP too (linear). ``rfft`` is the
first ``n // 2 + 1`` rows of ``fft`` on a real input: its VJP is ``Re fft(g padded with
zeros to n)``. ``fftshift``/``ifftshift`` are rolls. The length options ``n``/``s`` (a
zero-padded or truncated transform) are refused, as are ``irfft``/``hfft`` (not
registered: numpy's own error names them), whose Hermitian symmetry is no complex-linear map.
"""

from __future__ import annotations

import numpy as np

from ..registry import PRIMITIVES, defprim, linear_jvp
from ..tensor import Tensor
from ._common import SAME, _check_kw, _shape, _t
from .stacking import _moved

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "fftshift", "ifftshift"]


def _refuse_length(name, value, what):
    if value is not None:
        raise TypeError(
            f"autoprop cannot record numpy.fft.{name}(..., {what}={value!r}): a zero-padded or "
            f"truncated transform has no registered derivative; pad or slice the Tensor first "
            f"(np.pad, x[..., :k]) and call numpy.fft.{name} without {what}")


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
        _refuse_length(name, n, "n")
        return prim(a, axis=axis, norm=norm)

    prim = defprim(name, fwd, _self_adjoint(name), jvp=linear_jvp(name),
                   jacobian=f"the {name} matrix (symmetric)", vjp=f"da = {name}(g) (F^T = F)", shapes=SAME,
                   numpy=((f, np_call),), source=f"np.fft.{name}({{args}}{{_kw}})", reads=((),))
    return prim


def _many_axes(name, f, default):
    def fwd(a, axes=default, norm=None):
        return f(a, axes=axes, norm=norm)

    def np_call(a, s=None, axes=default, norm=None, out=None):
        _check_kw(name, {"out": out})
        _refuse_length(name, s, "s")
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
    _refuse_length("rfft", n, "n")
    if _t(a).dtype.kind == "c":
        raise TypeError("autoprop cannot record numpy.fft.rfft of a complex Tensor (numpy drops "
                        "the imaginary part); use numpy.fft.fft")
    return rfft(a, axis=axis, norm=norm)


rfft = defprim("rfft", _rfft_fwd, _rfft_vjp, jvp=linear_jvp("rfft"),
               jacobian="the first n // 2 + 1 rows of the fft matrix", vjp="da = Re fft(g padded to n)",
               shapes="a: n along axis; the result: n // 2 + 1", numpy=((np.fft.rfft, _np_rfft),),
               source="np.fft.rfft({args}{_kw})", reads=((0,),))


fftshift = _moved("fftshift", np.fft.fftshift, "x rolled by n // 2 along each axis (a permutation)")
ifftshift = _moved("ifftshift", np.fft.ifftshift, "x rolled by -(n // 2) along each axis (a permutation)")
