r"""The one comparison: one tolerance rule, one relative error, used by every verdict.

Two gradients pass where, per element, ``|a-b| <= atol`` or ``|a-b| <= rtol (|a|+|b|)``, i.e.

.. math:: r_i = \frac{|a_i - b_i|}{\max(|a_i| + |b_i|,\ \mathrm{atol}/\mathrm{rtol})} \le \mathrm{rtol},

with CS231n's symmetric denominator (``r <= 1``; the floor keeps gradients that are zero up to
rounding from reporting 1). Every verdict uses :func:`compare` (or :func:`close`).

Default ``atol`` (:func:`default_atol`): the round-off of ``L``, about :math:`u\sum_i|Y_iG_i|`
(u = 2.2e-16), over the step ``h`` (``eps/2`` for Richardson): :math:`\max(10^{-9}, u\sum|YG|/h)`;
2e-7 for a Conv2D 8->16 on 4x8x16x16, whose measured round-off 5e-9 a fixed 1e-9 failed. Complex step: 1e-9.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ATOL_FLOOR", "NOISY", "relative_error", "norm_relative_error", "close", "mismatched", "default_atol",
           "own_scale_atol", "atol_swamp_notes", "Comparison", "compare", "kink_mask", "smooth_mask"]

#: Smallest default absolute tolerance (see :func:`default_atol`).
ATOL_FLOOR = 1e-9
#: A default atol above this share of a tensor's largest |gradient| swamps it (the step grows, or a warning).
NOISY = 1e-3
_TINY = float(np.finfo(np.float64).tiny)


def relative_error(a: Any, b: Any, tiny: float = _TINY) -> np.ndarray:
    """Element-wise ``|a - b| / max(|a| + |b|, tiny)`` in float64, in [0, 1] (``a == b == 0`` gives 0).

    >>> float(relative_error(1.0, 1.1))  # 0.1 / 2.1
    0.047619047619047...
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.abs(a - b) / np.maximum(np.abs(a) + np.abs(b), tiny)


def default_atol(Y: Any, G: Any, eps: float, method: str = "central", floor: float = ATOL_FLOOR) -> float:
    """``max(floor, u * sum|Y * G| / h)`` (module docstring); for a loss ``Y`` = L, ``G`` = 1.

    >>> default_atol(np.ones(10), np.ones(10), 6.06e-6)  # small: the floor
    1e-09
    >>> round(default_atol(np.ones(100_000), np.ones(100_000), 6.06e-6), 9)  # u * 1e5 / 6.06e-6
    3.664e-06
    """
    h = float(eps) / (2.0 if method == "richardson" else 1.0)
    mag = float(np.sum(np.abs(np.asarray(Y, dtype=np.float64) * np.asarray(G, dtype=np.float64))))
    if method == "complex" or not np.isfinite(mag):
        return floor
    return max(floor, float(np.finfo(np.float64).eps) * mag / h)


def own_scale_atol(top: float, roundoff: float) -> float:
    """The atol of a tensor compared at its own scale: ``max(ATOL_FLOOR * top, roundoff)``, ``top`` its
    largest |entry| (below the floor, which would pass any gradient of that size), ``roundoff`` from
    :func:`default_atol` with ``floor=0``.

    >>> own_scale_atol(0.5, 1e-20)  # halving is exact
    5e-10
    >>> own_scale_atol(1e-3, 1e-11)  # the round-off is larger
    1e-11
    """
    return max(ATOL_FLOOR * float(top), float(roundoff))


def atol_swamp_notes(atol: float, grads: dict[str, list[np.ndarray]], how: str = "default") -> list[str]:
    """``WARNING`` lines for tensors (name -> arrays compared) whose largest |value| is below ``atol``, or
    within 1/:data:`NOISY` of it: a wrong gradient of that size would pass. ``how``: where atol came from."""
    out = []
    for name, arrays in grads.items():
        finite = [float(np.max(np.abs(np.asarray(a, dtype=np.float64)))) for a in arrays if np.size(a)]
        biggest = max(finite, default=float("nan"))
        if np.isfinite(biggest) and atol > biggest:
            out.append(f"WARNING: the {how} atol={atol:.3g} is larger than every |{name}| (at most {biggest:.3g}): "
                       f"the check of {name} would pass any gradient of that size. Pass a smaller --atol / atol= "
                       "(or scale the layer down) for a meaningful check")
        elif np.isfinite(biggest) and atol > NOISY * biggest:
            out.append(f"WARNING: the {how} atol={atol:.3g} is {100 * atol / biggest:.2g}% of the largest |{name}| "
                       f"({biggest:.3g}): an error in {name} smaller than that would pass. The finite differences "
                       "are noisy because the output is large (atol grows with sum|Y*G|); check the layer on "
                       "inputs or parameters that keep the output near 1 for a sharper check")
    return out


def close(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-9, *, equal_nan: bool = False) -> bool:
    """True when ``a`` and ``b`` have one shape and pass the rule of :func:`compare` everywhere
    (``close(a, b, 0, 0)``: equality; an infinity agrees only with itself; ``equal_nan``: NaN with NaN)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    if np.array_equal(a, b):  # equal everywhere (no NaN): the rule holds, whatever rtol and atol
        return True
    return bool(np.all(~mismatched(a, b, rtol, atol) | (equal_nan & np.isnan(a) & np.isnan(b))))


def mismatched(a: Any, b: Any, rtol: float, atol: float) -> np.ndarray:
    """The elements where ``a`` and ``b`` (one shape) break the rule of :func:`compare`: ``|a - b|``
    above both ``atol`` and ``rtol (|a| + |b|)``, or not finite where they differ (an infinity
    agrees only with itself; NaN with nothing).

    Returns
    -------
    ndarray of bool, the shape of ``a``

    Examples
    --------
    >>> mismatched(np.array([1.0, np.inf, 2.0]), np.array([1.0, 1.0, 2.1]), 1e-6, 1e-9)
    array([False,  True,  True])
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        d = np.abs(a - b)
        ok = (np.isfinite(d) & ((d <= atol) | (d <= rtol * (np.abs(a) + np.abs(b))))) | (a == b)
    return ~ok


def norm_relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """``||a - b|| / (||a|| + ||b||)`` (Frobenius; 0 when both are 0): CS231n's summary, never a verdict."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    den = np.linalg.norm(a) + np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / den) if den > 0 else 0.0


@dataclass
class Comparison:
    """One pair of gradients of one tensor compared element-wise (:func:`compare`): ``pair`` (``a`` first),
    ``max |a - b|``, ``max r_i`` at ``worst_index`` (``(direction,)`` in fast mode) with its values,
    ``passed``, ``how`` ("elements", "directional", "sample"), ``n_compared``, the ``kinks`` excluded
    (:func:`kink_mask`), ``norm_rel_error``, and the ``atol`` used."""

    pair: str
    max_abs_error: float
    max_rel_error: float
    worst_index: tuple[int, ...]
    worst_a: float
    worst_b: float
    passed: bool
    how: str = "elements"
    n_compared: int = -1
    kinks: list[tuple[int, ...]] = field(default_factory=list)
    norm_rel_error: float = float("nan")
    atol: float = float("nan")
    #: a directional comparison's blind spot (tester16 H2): the error in one entry that every direction could
    #: miss, the median over the entries of min over directions of (tolerance left) / |u_i|; NaN otherwise
    missable: float = float("nan")
    #: the largest ``|a - b|`` and ``r_i`` over the ``kinks`` (excused, so not in ``max_*``; shown, never 0 by omission)
    kink_abs_error: float = 0.0
    kink_rel_error: float = 0.0

    @property
    def names(self) -> tuple[str, str]:
        """The two compared sources, e.g. ``("manual", "numerical")``."""
        a, b = self.pair.split("-vs-")
        return a, b


def compare(a: np.ndarray, b: np.ndarray, pair: str, *, rtol: float, atol: float,
            mask: np.ndarray | None = None, kinks: np.ndarray | None = None, how: str = "elements") -> Comparison:
    """Compare two float64 arrays of one shape: a :class:`Comparison` labelled ``pair``. ``mask``: only
    these elements; ``kinks``: excluded and listed; ``rtol > 0``, ``atol >= 0`` (the floor ``atol/rtol``)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    use = np.ones(a.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool).copy()
    k = np.zeros(a.shape, dtype=bool) if kinks is None else np.asarray(kinks, dtype=bool) & use
    kink_list = [tuple(int(i) for i in ix) for ix in np.argwhere(k)]
    use &= ~k
    kerr = {}
    if k.any():
        with np.errstate(invalid="ignore"):
            kerr = {"kink_abs_error": float(np.nanmax(np.abs(a[k] - b[k]), initial=0.0)),
                    "kink_rel_error": float(np.nanmax(relative_error(a[k], b[k], tiny=max(atol / rtol, _TINY)),
                                                      initial=0.0))}
    if a.size == 0 or not use.any():
        return Comparison(pair, 0.0, 0.0, (), float("nan"), float("nan"), True, how, 0, kink_list,
                          0.0, float(atol), **kerr)
    aa, bb = np.where(use, a, 0.0), np.where(use, b, 0.0)
    rel = relative_error(aa, bb, tiny=max(atol / rtol, _TINY))
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(rel)), a.shape))
    return Comparison(pair, float(np.abs(aa - bb).max()), float(rel[idx]), idx, float(a[idx]), float(b[idx]),
                      bool(rel[idx] <= rtol), how, int(use.sum()), kink_list,
                      norm_relative_error(aa, bb), float(atol), **kerr)


def kink_mask(analytic: np.ndarray, numerical: np.ndarray, d_plus: np.ndarray | None,
              d_minus: np.ndarray | None, *, rtol: float, atol: float) -> np.ndarray:
    """Elements at a kink: failing, with one-sided quotients that disagree, and the analytic value between them.

    ``d_plus`` and ``d_minus`` differ by over 1% (a smooth function's by about ``h |f''|``) and the
    analytic value lies between them, widened by the tolerance (``relu'(0)`` in [0, 1]; case C28: relu
    at ``x = 1e-4``, ``h = 5e-3``: ``d_plus = 1``, ``d_minus = 0.02``, central 0.51). None: no kinks.
    """
    a = np.asarray(analytic, dtype=np.float64)
    if d_plus is None or d_minus is None:
        return np.zeros(a.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        fails = relative_error(a, numerical, tiny=max(atol / rtol, _TINY)) > rtol
        lo, hi = np.minimum(d_plus, d_minus), np.maximum(d_plus, d_minus)
        asym = (hi - lo) > 0.01 * (np.abs(d_plus) + np.abs(d_minus)) + 10 * atol
        slack = rtol * (np.abs(lo) + np.abs(hi)) + atol
        between = (a >= lo - slack) & (a <= hi + slack)
    return np.nan_to_num(fails & asym & between, nan=0).astype(bool)


def smooth_mask(d_plus: np.ndarray, d_minus: np.ndarray, smaller: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Elements whose one-sided quotients disagree as a smooth function's do, so no kink (fixn22 #1).

    ``s(h) = d_plus - d_minus = (f(x+h) - 2 f(x) + f(x-h)) / h`` is ``h f''(x) + O(h^3)`` for a smooth ``f``:
    it halves with the step. ``smaller``: the one-sided quotients ``(d_plus, d_minus)`` at ``h/2``, ``h/4``,
    ...; an element is smooth when each ``s(h/2^n)`` is within 10% of ``|s(h)|`` of ``s(h) / 2^n``. At a kink
    the jump stays: ReLU at ``x = 1e-4`` (case C28), ``h = 5e-3``: ``s = 0.98, 0.96, 0.92``, not ``0.98, 0.49,
    0.245``; tanh at ``h = 0.1``, whose one-sided quotients disagree by 10%, halves to 1e-3 of ``s``. A kink
    at ``x`` between ``h/4`` and ``h/2`` from the point fits one halving (``s(h/2) = s(h)/2`` at ``h/3``),
    not two. Returns a bool array (False where any value is not finite, or ``s(h) = 0``).
    """
    s = np.asarray(d_plus, dtype=np.float64) - np.asarray(d_minus, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(s) & (s != 0)
        for n, (p, m) in enumerate(smaller, 1):
            sn = np.asarray(p, dtype=np.float64) - np.asarray(m, dtype=np.float64)
            ok &= np.nan_to_num(np.abs(sn - s / 2**n) <= 0.1 * np.abs(s), nan=0).astype(bool)
    return ok
