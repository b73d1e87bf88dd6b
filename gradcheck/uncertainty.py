"""How far a numerical gradient can be trusted: its own uncertainty, measured, for the diagnosis.

A finite difference errs by truncation (``O(h^2)``) and rounding (``~ u |L| / h``, more when the
forward cancels digits); both show in the estimates at ``2h``, ``h/2`` and ``h/4``. A mismatch within
their spread cannot tell a bug from noise (Press et al., *Numerical Recipes*, 3rd ed., 5.7).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .compare import mismatched

__all__ = ["NOISE_FACTOR", "NOISE_STEPS", "within_noise"]

#: The mismatch counts as noise when at most this many times the spread of the estimates.
NOISE_FACTOR = 2.0

#: The steps, as multiples of the check's ``eps``, whose estimates measure the spread. Truncation grows with the step
#: (``2``), round-off as ``1/h`` (``1/2``, ``1/4``): with ``1/2`` alone, a forward that cancels digits (its values on
#: a grid of a few ulps per step) could give estimates at ``2h`` and ``h/2`` that land near each other by chance, and
#: a correct layer's noise was named as a bug (fixq29: a LayerNorm adding 1e7, "differs from the correct gradient in
#: 6 of 6 elements" with the correct dX, HIPS autograd's to 1e-16, and the estimate at ``h/4`` 4e-1 away).
NOISE_STEPS = (2.0, 0.5, 0.25)


def within_noise(manual: np.ndarray, numerical: np.ndarray,
                 estimate_at: Callable[[float], np.ndarray], eps: float, rtol: float,
                 atol: float, some: Callable[[float, list], np.ndarray] | None = None) -> tuple[float, float] | None:
    """Whether every mismatching element of ``manual`` is within the numerical estimate's own uncertainty.

    Parameters
    ----------
    manual, numerical : ndarray, same shape
        The backward's gradient and the numerical one (NaN: not estimated; skipped).
    estimate_at : callable
        ``estimate_at(eps)``: the numerical gradient with relative step ``eps``.
    eps, rtol, atol : float
        The step of ``numerical``; the check's tolerances (mismatch: :func:`gradcheck.compare.mismatched`).
    some : callable, optional
        ``some(eps, indices)``: the numerical gradient at those entries only (NaN elsewhere). Given, the largest
        mismatch is tried alone first (two evaluations per step, not one per entry): when it is not within noise
        the answer is None without the whole estimate (newuser24 L5: at 1000x2000 the whole one was 258 sandboxed
        forwards, 130 s of 210, for a plain bug); the answer is the same, the rule being per entry.

    Returns
    -------
    (float, float) or None
        ``(largest |m - n| of all entries, uncertainty at the largest mismatch)`` when each mismatch is at
        most :data:`NOISE_FACTOR` times ``max(|n - n(k eps)|)`` over ``k`` in :data:`NOISE_STEPS`; None otherwise, when nothing
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
    if some is not None:
        w = np.unravel_index(np.flatnonzero(bad.ravel())[int(np.argmax(diff[bad]))], n.shape)
        try:
            one = _converging_spread(float(n[w]), lambda e: float(np.asarray(
                some(e, [tuple(int(i) for i in w)]), dtype=np.float64)[w]), eps)
        except Exception:  # noqa: BLE001 - as the whole estimate's: no claim of noise
            return None
        if not (np.isfinite(one) and diff[w] <= NOISE_FACTOR * one):
            return None
    try:
        spread = np.maximum.reduce([np.abs(n - np.asarray(estimate_at(k * eps), dtype=np.float64))
                                    for k in NOISE_STEPS])
    except Exception:  # noqa: BLE001 - e.g. forward raises at the larger step: no claim of noise
        return None
    if spread.shape != n.shape or not np.all(np.isfinite(spread[bad])):
        return None
    if not np.all(diff[bad] <= NOISE_FACTOR * spread[bad]):
        return None
    i = np.flatnonzero(bad.ravel())[int(np.argmax(diff[bad]))]
    return float(np.max(diff[np.isfinite(diff)])), float(spread.ravel()[i])


#: How many more quarterings of the step :func:`_converging_spread` may take (down to ``4^-12 / 4`` of the step).
CONVERGING_STEPS = 12


def _converging_spread(n: float, at: Callable[[float], float], eps: float) -> float:
    """The spread of one entry's estimates at :data:`NOISE_STEPS` times ``eps`` about ``n``; where their distance to
    ``n`` at least halves at each smaller step (truncation shrinking toward ``n``, not noise: ``exp(x - 1e7)``,
    whose estimates at ``2h = 120`` and ``h/2`` are off by 1e50 and 1e11 while the check's own, from smaller steps,
    is right; large47: a backward 1% wrong was called "within the numerical estimate's own uncertainty"), the step
    is quartered again (up to :data:`CONVERGING_STEPS` times) while that holds, and the spread is that of the last
    three steps."""
    k, ds = NOISE_STEPS[-1], [abs(n - at(k * eps)) for k in NOISE_STEPS]
    for _ in range(CONVERGING_STEPS):
        if not all(np.isfinite(ds[-3:])) or not all(b <= a / 2 for a, b in zip(ds[-3:], ds[-2:])):
            break
        k /= 4
        ds.append(abs(n - at(k * eps)))
    return max(ds[-3:])
