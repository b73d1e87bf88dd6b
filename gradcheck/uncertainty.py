"""How far a numerical gradient can be trusted: its own uncertainty, measured, for the diagnosis.

A finite difference errs by truncation (``O(h^2)``) and rounding (``~ u |L| / h``, more when the
forward cancels digits); both show in the estimates at ``2h`` and ``h/2``. A mismatch within their
spread cannot tell a bug from noise (Press et al., *Numerical Recipes*, 3rd ed., 5.7).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .compare import mismatched

__all__ = ["NOISE_FACTOR", "within_noise"]

#: The mismatch counts as noise when at most this many times the spread of the estimates.
NOISE_FACTOR = 2.0


def within_noise(manual: np.ndarray, numerical: np.ndarray,
                 estimate_at: Callable[[float], np.ndarray], eps: float, rtol: float,
                 atol: float) -> tuple[float, float] | None:
    """Whether every mismatching element of ``manual`` is within the numerical estimate's own uncertainty.

    Parameters
    ----------
    manual, numerical : ndarray, same shape
        The backward's gradient and the numerical one (NaN: not estimated; skipped).
    estimate_at : callable
        ``estimate_at(eps)``: the numerical gradient with relative step ``eps``.
    eps, rtol, atol : float
        The step of ``numerical``; the check's tolerances (mismatch: :func:`gradcheck.compare.mismatched`).

    Returns
    -------
    (float, float) or None
        ``(largest |m - n| of all entries, uncertainty at the largest mismatch)`` when each mismatch is at
        most :data:`NOISE_FACTOR` times ``max(|n - n(2 eps)|, |n - n(eps/2)|)``; None otherwise, when nothing
        mismatches, or when those estimates cannot be formed. The first is the table's max abs error (an entry
        within rtol of a large value can differ more than a failing small one: 4.6e-07, not 3.2e-08, fixn22 #3).
    """
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    if m.shape != n.shape:
        return None
    with np.errstate(invalid="ignore"):
        diff = np.abs(m - n)
    bad = np.isfinite(n) & mismatched(m, n, rtol, atol)  # an infinite m too: never noise
    if not bad.any():
        return None
    try:
        spread = np.maximum(*(np.abs(n - np.asarray(estimate_at(e), dtype=np.float64))
                              for e in (2 * eps, eps / 2)))
    except Exception:  # noqa: BLE001 - e.g. forward raises at the larger step: no claim of noise
        return None
    if spread.shape != n.shape or not np.all(np.isfinite(spread[bad])):
        return None
    if not np.all(diff[bad] <= NOISE_FACTOR * spread[bad]):
        return None
    i = np.flatnonzero(bad.ravel())[int(np.argmax(diff[bad]))]
    return float(np.max(diff[np.isfinite(diff)])), float(spread.ravel()[i])
