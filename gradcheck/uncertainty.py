"""How far a numerical gradient can be trusted: its own uncertainty, measured, for the diagnosis.

A finite difference errs by truncation (``O(h^2)`` for central differences) and by the rounding
of the forward divided by the step (``~ u |L| / h``, larger when the forward cancels digits
inside, e.g. ``X * 1e-3 + 100`` before a normalisation). Neither is known in advance, but both
show when the same estimate is formed with other steps: the central difference at ``2h`` (four
times the truncation, half the rounding) and at ``h/2`` (the opposite). Where the manual
gradient's mismatch is within the spread of those estimates, the numerical gradient cannot tell
a bug from its own noise (Press et al., *Numerical Recipes*, 3rd ed., 5.7; Nocedal & Wright,
*Numerical Optimization*, 2nd ed., 8.1).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["NOISE_FACTOR", "within_noise"]

#: The mismatch counts as noise when at most this many times the spread of the estimates.
NOISE_FACTOR = 2.0


def within_noise(manual: np.ndarray, numerical: np.ndarray,
                 estimate_at: Callable[[float], np.ndarray], eps: float, rtol: float,
                 atol: float) -> tuple[float, float] | None:
    """Whether every mismatching element of ``manual`` is within the numerical estimate's own
    uncertainty.

    Parameters
    ----------
    manual, numerical : ndarray, same shape
        The backward's gradient and the check's numerical one (NaN: not estimated, e.g. at a
        kink; skipped).
    estimate_at : callable
        ``estimate_at(eps)``: the same numerical gradient formed with relative step ``eps``
        (same shape).
    eps : float
        The relative step ``numerical`` was formed with.
    rtol, atol : float
        The check's tolerances: an element mismatches when ``|m - n| > atol`` and
        ``> rtol (|m| + |n|)``.

    Returns
    -------
    (float, float) or None
        ``(largest mismatch, uncertainty there)`` when each mismatching element's ``|m - n|``
        is at most :data:`NOISE_FACTOR` times the spread ``max(|n - n(2 eps)|, |n - n(eps/2)|)``
        at that element; None when some mismatch is larger (a real difference), when nothing
        mismatches, or when the other estimates cannot be formed (the forward raised, or gave
        NaN there).
    """
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    if m.shape != n.shape:
        return None
    diff = np.abs(m - n)
    bad = np.isfinite(n) & (diff > atol) & (diff > rtol * (np.abs(m) + np.abs(n)))
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
    return float(diff.ravel()[i]), float(spread.ravel()[i])
