"""Samples of the numpy names recorded in session 19 (autoprop/core/prims/extra.py, the inverse real
FFTs, pinv(hermitian=True)), one per composite, as tests/primitive_samples.py's FUNCTION_SAMPLES:
checked by tests/test_autoprop_numpy_more.py (value, gradient, JVP, second order) and, on complex
input, by tests/complex_scan.py (which adds them to its COMPOSITE_SAMPLES)."""

import numpy as np
import scipy.special
from primitive_samples import F

_NAN3 = np.array([1.0, np.nan, 1.0])

SAMPLES19 = {
    "unique": F(lambda np, a: np.unique(a) ** 2 + np.unique(a, return_index=True)[0]
                + np.unique(a, return_inverse=True, return_counts=True)[0], (6,), autograd=False),
    "unique_axis": F(lambda np, a: np.unique(np.concatenate([a, a[:1]]), axis=0) ** 2, (3, 2), autograd=False),
    "unique_all": F(lambda np, a: np.sum(np.unique_all(a).values ** 2) + np.sum(np.unique_values(a) * 2.0)
                    + np.sum(np.unique_counts(a)[0] ** 3) + np.sum(np.unique_inverse(a).values), (2, 3),
                    autograd=False),  # (sums: numpy 2.3+'s unique_values may come in any order)
    "sort_complex": F(lambda np, a: np.real(np.sort_complex(a) * np.array([1.0, 2.0, 3.0])), (2, 3),
                      autograd=False),
    "trim_zeros": F(lambda np, a: np.trim_zeros(a * np.array([0.0, 1.0, 1.0, 0.0]), "f") ** 2
                    + np.trim_zeros(a * np.array([0.0, 1.0, 1.0, 0.0])).sum(), (4,), autograd=False),
    "histogram": F(lambda np, a: np.histogram(a, bins=3, density=True)[0] * np.arange(3.0), (7,), autograd=False),
    "histogram_bin_edges": F(lambda np, a: np.histogram_bin_edges(a, bins=3) ** 2, (7,), autograd=False),
    "nanvar": F(lambda np, a: np.nanvar(a * _NAN3, axis=1, ddof=1) + np.nanvar(a * _NAN3), (2, 3),
                autograd=False),
    "nancumprod": F(lambda np, a: np.nancumprod(a * _NAN3, axis=1), (2, 3), autograd=False),
    "cumulative_prod": F(lambda np, a: np.cumulative_prod(a, axis=1, include_initial=True), (2, 3),
                         autograd=False),
    "divmod": F(lambda np, a, b: np.divmod(a, b)[1] ** 2 + np.divmod(a, b)[0], (4,), (4,),
                domain=[(1.1, 1.4), (0.7, 0.9)], autograd=False),
    "choose": F(lambda np, a, b: np.choose(np.array([0, 1, 1, 0]), [a, b ** 2]) + np.choose(
        np.array([3, -1, 1, 0]), [a, b, a * b], mode="clip"), (4,), (4,), autograd=False),
    "sliding_window_view": F(lambda np, a: np.lib.stride_tricks.sliding_window_view(a, (2, 2)).sum((-1, -2)) ** 2
                             + np.lib.stride_tricks.sliding_window_view(a, 2, axis=0)[:, :3, 1] ** 3, (3, 4),
                             autograd=False),
    "rfftn": F(lambda np, a: np.abs(np.fft.rfftn(a)) ** 2, (3, 4)),
    "rfft2": F(lambda np, a: np.real(np.fft.rfft2(a, norm="ortho") * (1.0 - 2.0j)), (3, 4)),
    "irfft": F(lambda np, a: np.fft.irfft(a) * np.fft.irfft2(a)[:3] + np.fft.irfftn(a, axes=(1,), norm="ortho"),
               (3, 4)),
    "hfft": F(lambda np, a: np.fft.hfft(a, norm="ortho") + np.real(np.fft.ihfft(a).sum()), (2, 5), autograd=False),
    "pinv_hermitian": F(lambda np, a: np.linalg.pinv(a + np.array([[3.0, 0.2, 0.0], [0.4, 2.0, 0.1],
                                                                   [0.3, 0.0, 4.0]]), hermitian=True), (3, 3),
                        autograd=False),
    "astype": F(lambda np, a: np.astype(a, a.dtype) * a, (2, 3), autograd=False),
    "unstack": F(lambda np, a: np.unstack(a, axis=1)[1] ** 2, (2, 3), autograd=False),
    "scipy_beta_zeta": F(lambda np, a, b: scipy.special.beta(a, b) + scipy.special.zeta(2.5, a + b),
                         (3,), (3,), domain=[(0.4, 2.0), (0.4, 2.0)], autograd=False),
    # session 20: the set functions (a value in both arrays: the first copy in concatenate(a, b)),
    # weighted 2-D/N-D histograms (in the weights and, through the edges, in the samples), betainc in x
    "union1d": F(lambda np, a, b: np.union1d(np.concatenate([a, a[:1]]), b) * np.arange(1.0, 7.0)
                 + np.union1d(a, a[1:]).sum(), (3,), (3,), autograd=False),
    "intersect1d": F(lambda np, a, b: np.intersect1d(np.concatenate([a, a[:1], b[:2]]), np.concatenate([b[1:], a[2:]]))
                     * np.arange(1.0, 3.0) + np.intersect1d(a, a, return_indices=True)[0].sum(), (3,), (3,),
                     autograd=False),
    "setdiff1d": F(lambda np, a, b: np.setdiff1d(np.concatenate([a, b[:1], a[:1]]), b) * np.arange(1.0, 4.0)
                   + np.setdiff1d(a, b[:1], assume_unique=True), (3,), (3,), autograd=False),
    "setxor1d": F(lambda np, a, b: np.setxor1d(np.concatenate([a, b[:1]]), b) * np.arange(1.0, 6.0), (3,), (3,),
                  autograd=False),
    "histogram2d": F(lambda np, a, b, w: np.histogram2d(a, b, bins=[2, 3], weights=w)[0] ** 2
                     + np.histogram2d(a, b, bins=2)[1] * 3.0 + np.histogram2d(a, b, bins=2, density=True,
                                                                              weights=w)[0].sum(),
                     (7,), (7,), (7,), domain=[None, None, (0.5, 2.0)], autograd=False),
    "histogramdd": F(lambda np, a, w: np.histogramdd(a, bins=(2, 2), range=[(0.0, 0.5), (0.0, 1.0)], weights=w)[0]
                     + np.histogramdd(a, bins=2)[1][1].sum(), (6, 2), (6,), autograd=False),
    "histogram_weighted": F(lambda np, a, w: np.histogram(a, bins=3, weights=w)[0] ** 2
                            + np.histogram(a, bins=3, weights=w, density=True)[0], (7,), (7,), autograd=False),
    "betainc": F(lambda np, x: scipy.special.betainc(np.array([2.0, 0.5, 3.0]), 1.5, x) ** 2, (3,),
                 domain=[(0.05, 0.95)], autograd=False),
}
