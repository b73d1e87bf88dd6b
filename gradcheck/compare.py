r"""The one comparison: one tolerance rule, one relative error, used by every verdict.

Two gradients pass where, per element, ``|a-b| <= atol`` or ``|a-b| <= rtol (|a|+|b|)``, i.e.

.. math:: r_i = \frac{|a_i - b_i|}{\max(|a_i| + |b_i|,\ \mathrm{atol}/\mathrm{rtol})} \le \mathrm{rtol},

with CS231n's symmetric denominator (``r <= 1``; the floor keeps gradients that are zero up to
rounding from reporting 1). Every verdict uses :func:`compare` (or :func:`close`, :func:`mismatched`,
:func:`relative_error`: written in :mod:`gradcheck._kernel`, which the sandbox child runs too, and exported here).

Default ``atol`` (:func:`default_atol`): the round-off of ``L``, about :math:`u\sum_i|Y_iG_i|`
(u = 2.2e-16), over the step ``h`` taken (the smallest of a tensor's ``eps max(1, |x_i|)``, halved for
Richardson): :math:`\max(10^{-9}, u\sum|YG|/h)`;
2e-7 for a Conv2D 8->16 on 4x8x16x16, whose measured round-off 5e-9 a fixed 1e-9 failed. Complex step: 1e-9.
A layer's entries below it are differenced again output entry by output entry and compared at their own round-off,
an ``atol`` per entry (:func:`gradcheck.numerical.local_differences`, ``gradcheck.check._judged_locally``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._kernel import TINY as _TINY
from ._kernel import close, mismatched, relative_error, richardson_step, sums_to_one

__all__ = ["ATOL_FLOOR", "NOISY", "VACUOUS", "relative_error", "norm_relative_error", "close", "mismatched", "sums_to_one", "default_atol",
           "own_scale_atol", "atol_swamp_notes", "swamped_by", "part_swamped", "PART", "Comparison", "compare", "kink_mask", "smooth_mask",
           "sides_agree_at", "FINER", "step_covered", "richardson", "extrapolated", "EXTRAPOLATION_ROUNDOFF"]

#: Smallest default absolute tolerance (see :func:`default_atol`).
ATOL_FLOOR = 1e-9
#: A default atol above this share of a tensor's largest |gradient| swamps it (the step grows, or a warning).
NOISY = 1e-3
#: A default atol above this share of a tensor's largest |value| leaves its comparison no verdict (NOT CHECKED): an
#: error of that share of the gradient would pass (review24g: at atol 47% of the largest |dX|, after the step had grown
#: 10000 times, a dX 1.5 times too large PASSed with a WARNING). Between :data:`NOISY` and this: a WARNING.
VACUOUS = 1e-2


def default_atol(Y: Any, G: Any, eps: float, method: str = "central", floor: float = ATOL_FLOOR,
                 steps: Any = None) -> float:
    """``max(floor, u * sum|Y * G| / h)`` (module docstring); for a loss ``Y`` = L, ``G`` = 1.

    ``steps``: the absolute steps the differences of one tensor take (:func:`gradcheck.numerical.step_sizes`,
    ``eps max(1, |x|)``, the one definition of the step); ``h`` is the smallest (halved for Richardson). None:
    ``h = eps`` (a tensor with every ``|x| <= 1``, or a directional derivative along ``z max(1, |x|)``, whose
    step is ``eps``). newuser23 H1: X ~ 1e14 N(0, 1) moves by ``eps |x|``, and an atol over ``eps`` alone was
    ``|x|`` times too large and passed a sign-flipped dX.

    >>> default_atol(np.ones(10), np.ones(10), 6.06e-6)  # small: the floor
    1e-09
    >>> round(default_atol(np.ones(100_000), np.ones(100_000), 6.06e-6), 9)  # u * 1e5 / 6.06e-6
    3.664e-06
    >>> round(default_atol(np.ones(100_000), np.ones(100_000), 6.06e-6, steps=[6.06e-5, 6.06e-4]), 10)  # |x| >= 10
    3.664e-07
    """
    h = float(eps) if steps is None else float(np.min(steps, initial=np.inf))
    h = (h if np.isfinite(h) and h > 0 else float(eps)) / (2.0 if method == "richardson" else 1.0)
    mag = float(np.sum(np.abs(np.asarray(Y, dtype=np.float64) * np.asarray(G, dtype=np.float64))))
    if method == "complex" or not np.isfinite(mag):
        return floor
    return max(floor, float(np.finfo(np.float64).eps) * mag / h)


#: How many times the round-off of one central difference ``C(h)`` :func:`extrapolated`'s convergence test needs in its
#: atol not to fail on round-off alone: ``R = (4 C(h/2) - C(h)) / 3`` carries up to ``(4 * 2 + 1) / 3 = 3`` times it,
#: ``R'`` one step down ``(4 * 4 + 2) / 3 = 6`` times, so ``R - R'`` up to 9 times, and the test allows a quarter of
#: atol: 36 (review27g M6: a correct Softmax at 800 + 40 N(0, 1) compared at its own scale, atol 1.5e-13, the round-off
#: of C(h), FAILed in fast mode, its extrapolation never converging).
EXTRAPOLATION_ROUNDOFF = 36.0


def own_scale_atol(top: float, roundoff: float, extrapolating: bool = False) -> float:
    """The atol of a tensor compared at its own scale: ``max(ATOL_FLOOR * top, roundoff)``, ``top`` its
    largest |entry| (below the floor, which would pass any gradient of that size), ``roundoff`` from
    :func:`default_atol` with ``floor=0``; ``extrapolating``: where its failing central differences may be replaced by
    :func:`extrapolated`'s ``R``, not below :data:`EXTRAPOLATION_ROUNDOFF` times ``roundoff``, the round-off of ``R``
    and of its convergence test, unless that allowance reaches :data:`VACUOUS` of ``top`` (fixg28 H1: W ~ 1e-10,
    |dX| <= 2.2e-10, round-off 5.9e-11: 36 times it, 2.1e-9, passed a doubled and a zero dX; the allowance is then
    dropped, the tensor compared at its own round-off, where no extrapolation is needed to pass a correct gradient of
    that size: truncation error scales with the gradient, round-off does not).

    >>> own_scale_atol(0.5, 1e-20)  # halving is exact
    5e-10
    >>> own_scale_atol(1e-3, 1e-11)  # the round-off is larger
    1e-11
    >>> own_scale_atol(1e-3, 1e-13, extrapolating=True)  # Richardson's R - R' carries up to 9 times C(h)'s
    3.6e-12
    >>> own_scale_atol(2.2e-10, 5.9e-11, extrapolating=True)  # 36 times would pass any gradient: the round-off alone
    5.9e-11
    """
    base = max(ATOL_FLOOR * float(top), float(roundoff))
    if not extrapolating:
        return base
    allowed = max(base, float(roundoff) * EXTRAPOLATION_ROUNDOFF)
    return allowed if allowed < VACUOUS * float(top) else base


def swamped_by(atol: float, arrays: list[np.ndarray], share: float = 1.0) -> tuple[bool, float]:
    """``(vacuous, biggest)``: ``biggest`` the largest finite |value| of the ``arrays`` compared (NaN: none),
    ``vacuous`` when ``atol`` exceeds ``share`` of it: with ``share=1``, a comparison that passes any gradient of that
    size (its negation, zero); with :data:`VACUOUS`, one that passes an error of that share of the gradient.

    >>> swamped_by(19.0, [np.array([3.0, -4.1])])
    (True, 4.1)
    >>> swamped_by(0.05, [np.array([3.0, -4.1])], share=VACUOUS)
    (True, 4.1)
    """
    with np.errstate(invalid="ignore"):
        finite = [float(np.nanmax(np.abs(np.asarray(a, dtype=np.float64)), initial=0.0)) for a in arrays if np.size(a)]
    biggest = max(finite, default=float("nan"))
    return bool(np.isfinite(biggest) and atol > share * biggest), biggest


#: :func:`part_swamped`: a tensor with more than this share of its entries (those not exactly 0 in every array) below the
#: default atol gives those entries no verdict (NOT CHECKED), even where its largest entries are far above it.
PART = 0.5


def part_swamped(atol: Any, arrays: list[np.ndarray], exempt: float = 0.0) -> tuple[int, int]:
    """``(below, n)``: how many entries of a tensor every compared array holds below ``atol`` in |value| (finite,
    not exactly 0 in every array), of the ``n`` entries not exactly 0 in every array. Such an entry passes the rule
    whatever its gradient (its negation or zero too): :func:`swamped_by` for one entry (verify40 L1: ``Y = [1e6
    X[:, :1], 1e-6 X[:, 1:]]``, the round-off of ``L``, 1.5e-4, the 1e6 column's, over the 1e-6 entries' whole
    gradient: a dX 2 times too large on 15 of 20 entries PASSed; the central differences at those entries are that
    round-off, 1.4e-5 off on a right layer too, so no tolerance can tell them there). ``atol`` may be an array, each
    entry's own (:func:`gradcheck.numerical.local_differences`' round-off, check42); an entry whose atol is at most
    ``exempt`` is not counted (near zero, checked as such). ``(0, 0)`` for no entries or arrays of several shapes.

    >>> part_swamped(1e-4, [np.array([1e6, 2e-6, 2e-6, 0.0]), np.array([1e6, 1e-5, -3e-6, 0.0])])
    (2, 3)
    """
    arrs = [np.abs(np.asarray(a, dtype=np.float64)) for a in arrays]
    if not arrs or any(a.shape != arrs[0].shape for a in arrs) or not arrs[0].size:
        return 0, 0
    with np.errstate(invalid="ignore"):
        top = np.maximum.reduce(arrs)
        zero = np.logical_and.reduce([a == 0 for a in arrs])
        below = np.isfinite(top) & (top < atol) & ~zero & (np.asarray(atol) > exempt)
    return int(below.sum()), int((~zero).sum())


def atol_swamp_notes(atol: float, grads: dict[str, list[np.ndarray]], how: str = "default") -> list[str]:
    """Lines for tensors (name -> arrays compared) whose largest |value| is below ``atol`` or within 1/:data:`VACUOUS`
    of it (:func:`swamped_by`: NOT CHECKED, the check passes any gradient of that size, or an error of that share of
    it), or within 1/:data:`NOISY` of it (``WARNING``: a wrong gradient of that size would pass). ``how``: where
    atol came from."""
    out = []
    fix = ("The output is too large for the step to move it measurably: check the layer on inputs or parameters that "
           "keep the output near 1 (subtract a large constant offset), or pass a smaller --atol / atol= to compare "
           "anyway")
    for name, arrays in grads.items():
        vacuous, biggest = swamped_by(atol, arrays, VACUOUS)
        if vacuous and atol > biggest:
            out.append(f"NOT CHECKED {name}: the {how} atol={atol:.3g} (the round-off of the finite differences) is "
                       f"larger than every |{name}| (at most {biggest:.3g}), so the check of {name} would pass any "
                       f"gradient of that size, its negation or zero too. {fix}")
        elif vacuous:
            out.append(f"NOT CHECKED {name}: the {how} atol={atol:.3g} (the round-off of the finite differences) is "
                       f"{100 * atol / biggest:.2g}% of the largest |{name}| ({biggest:.3g}), above "
                       f"{100 * VACUOUS:g}%, so the check of {name} would pass an error of that share of the gradient "
                       f"(a {name} {1 + atol / biggest:.2g} times too large). {fix}")
        elif np.isfinite(biggest) and atol > NOISY * biggest:
            out.append(f"WARNING: the {how} atol={atol:.3g} is {100 * atol / biggest:.2g}% of the largest |{name}| "
                       f"({biggest:.3g}): an error in {name} smaller than that would pass. The finite differences "
                       "are noisy because the output is large (atol grows with sum|Y*G|); check the layer on "
                       "inputs or parameters that keep the output near 1 for a sharper check")
    return out


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
    #: why this comparison gives no verdict (NOT CHECKED, never a PASS; ``passed`` then True, nothing found wrong):
    #: "atol", the default atol exceeds :data:`VACUOUS` of every |value| compared (:func:`swamped_by`, newuser23 H1); "step", every
    #: failing element is within the truncation error of the user's large step (:func:`step_covered`, newuser23 M4)
    unchecked: str = ""
    #: how many elements failed against the central difference at ``h`` and pass against Richardson's extrapolation
    #: of central differences at ``h``, ``h/2``, ``h/4``: the step's truncation error exceeded the tolerance
    #: (:func:`extrapolated`; newuser26: logits near 800 take a step of 4.9e-3)
    extrapolated: int = 0

    @property
    def names(self) -> tuple[str, str]:
        """The two compared sources, e.g. ``("manual", "numerical")``."""
        a, b = self.pair.split("-vs-")
        return a, b


def compare(a: np.ndarray, b: np.ndarray, pair: str, *, rtol: float, atol: float,
            mask: np.ndarray | None = None, kinks: np.ndarray | None = None, how: str = "elements") -> Comparison:
    """Compare two float64 arrays of one shape: a :class:`Comparison` labelled ``pair``. ``mask``: only
    these elements; ``kinks``: excluded and listed; ``rtol > 0``, ``atol >= 0`` (the floor ``atol/rtol``), a number or
    an array of ``a``'s shape, each element's own (the :class:`Comparison` keeps the largest)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    use = np.ones(a.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool).copy()
    k = np.zeros(a.shape, dtype=bool) if kinks is None else np.asarray(kinks, dtype=bool) & use
    kink_list = [tuple(int(i) for i in ix) for ix in np.argwhere(k)]
    use &= ~k
    kerr = {}
    if k.any():
        with np.errstate(invalid="ignore"):
            kerr = {"kink_abs_error": float(np.nanmax(np.abs(a[k] - b[k]), initial=0.0)),
                    "kink_rel_error": float(np.nanmax(relative_error(a[k], b[k], tiny=np.maximum(
                        np.broadcast_to(atol, a.shape)[k] / rtol, _TINY)), initial=0.0))}
    per_entry = np.ndim(atol) > 0  # (a number: Python's arithmetic, the fast path of every check)
    top = float(np.max(atol, initial=0.0)) if per_entry else float(atol)
    tiny = np.maximum(np.asarray(atol, dtype=np.float64) / rtol, _TINY) if per_entry else max(atol / rtol, _TINY)
    if a.size == 0 or not use.any():
        return Comparison(pair, 0.0, 0.0, (), float("nan"), float("nan"), True, how, 0, kink_list,
                          0.0, top, **kerr)
    aa, bb = np.where(use, a, 0.0), np.where(use, b, 0.0)
    rel = relative_error(aa, bb, tiny=tiny)
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(rel)), a.shape))
    return Comparison(pair, float(np.abs(aa - bb).max()), float(rel[idx]), idx, float(a[idx]), float(b[idx]),
                      bool(rel[idx] <= rtol), how, int(use.sum()), kink_list,
                      norm_relative_error(aa, bb), top, **kerr)


def kink_mask(analytic: np.ndarray, numerical: np.ndarray, d_plus: np.ndarray | None,
              d_minus: np.ndarray | None, *, rtol: float, atol: float) -> np.ndarray:
    """Elements at a kink: failing, with one-sided quotients that disagree, and the analytic value between them.

    ``d_plus`` and ``d_minus`` differ by over 1% (a smooth function's by about ``h |f''|``) and the
    analytic value lies between them, each end widened by the tolerance there (``relu'(0)`` in [0, 1]; case C28: relu
    at ``x = 1e-4``, ``h = 5e-3``: ``d_plus = 1``, ``d_minus = 0.02``, central 0.51). None: no kinks.
    """
    a = np.asarray(analytic, dtype=np.float64)
    if d_plus is None or d_minus is None:
        return np.zeros(a.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        fails = relative_error(a, numerical, tiny=np.maximum(np.asarray(atol, dtype=np.float64) / rtol, _TINY)) > rtol
        lo, hi = np.minimum(d_plus, d_minus), np.maximum(d_plus, d_minus)
        asym = sides_disagree(d_plus, d_minus, atol)
        # each end widened by the tolerance at that end (verify45a F3: widened by rtol of |lo| + |hi|, a one-sided
        # quotient of 1e261 at a step of 600 on exp(x - 1e8) made every value "between", a sign flip included)
        between = ((a >= lo - (rtol * (np.abs(a) + np.abs(lo)) + atol))
                   & (a <= hi + (rtol * (np.abs(a) + np.abs(hi)) + atol)))
    return np.nan_to_num(fails & asym & between, nan=0).astype(bool)


def sides_disagree(d_plus: Any, d_minus: Any, atol: Any) -> np.ndarray:
    """Where the one-sided quotients differ by over :data:`SIDES_AGREE` of ``|d_plus| + |d_minus|`` plus ``10 atol``
    (a smooth function's by about ``h |f''|``): a kink between ``x - h`` and ``x + h``, or a step ``h`` not small
    against the scale the function varies on there. The test of :func:`kink_mask`; bool array (False where NaN)."""
    dp, dm = np.asarray(d_plus, dtype=np.float64), np.asarray(d_minus, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.nan_to_num(np.abs(dp - dm) > SIDES_AGREE * (np.abs(dp) + np.abs(dm)) + 10 * np.asarray(atol),
                             nan=0).astype(bool)


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
        sn = [np.asarray(p, dtype=np.float64) - np.asarray(m, dtype=np.float64) for p, m in smaller]
        for n, x in enumerate(sn, 1):
            ok &= np.nan_to_num(np.abs(x - s / 2**n) <= 0.1 * np.abs(s), nan=0).astype(bool)
        if len(sn) >= 2:  # or the jump extrapolated to h -> 0 vanishes (newuser23 M4: a step so large h^3 counts)
            jump = (16 * sn[1] - 10 * sn[0] + s) / 7
            ok |= np.isfinite(s) & (s != 0) & np.nan_to_num(np.abs(jump) <= 0.05 * np.abs(s), nan=0).astype(bool)
    return ok



#: The factor by which :func:`sides_agree_at` shrinks the step from one try to the next.
FINER = 4.0

#: :func:`sides_agree_at`: one-sided differences agree when they differ, round-off included, by at most this share of
#: ``|d_plus| + |d_minus|`` (:func:`kink_mask`'s 1%: a kink's one-sided slopes differ by more).
SIDES_AGREE = 0.01


def sides_agree_at(sides: Any, floor: Any, roundoff: float, want: np.ndarray) -> np.ndarray:
    r"""The fraction of the step at which each suspected kink's one-sided differences agree: NaN where they
    disagree at every smaller step tried that is above their round-off (a kink).

    The step ``h = eps max(1, |x|)`` grows with ``|x|``; a function that varies on a scale far below it (``exp(x -
    c)`` at ``x = c + N(0, 1)``, ``c = 1e7``: ``h = 60``) has one-sided differences astronomically apart at ``h``,
    ``h/2``, ``h/4``, not halving as :func:`smooth_mask` expects, and looked like a kink (verify45a F3; steps46:
    every entry excused, a backward 1% too large PASSed). ``x + h - x`` is exact in float64 for every representable
    ``h``, so the step may shrink: at a kink the one-sided differences keep their jump at every step (ReLU at 0:
    ``1`` and ``0``), a smooth function's part as ``h f''`` and agree once ``h`` is below its scale. The steps
    ``h / FINER^n``, ``n = 1, 2, ...``, are tried down to ``floor`` times ``h`` (``1 / max(1, |x|)``: the step of an
    input of size 1, the one the default step assumes the function varies on) while the round-off of a one-sided
    difference, ``10 roundoff / f`` at the fraction ``f`` (:func:`kink_mask`'s allowance, growing as ``1/f``), is
    below :data:`SIDES_AGREE` of their size: there round-off, not the function, would decide (Moré & Wild,
    "Estimating derivatives of noisy simulations", ACM TOMS 38(3), 2012: a difference is worth its step only above
    the noise).

    Parameters
    ----------
    sides : callable
        ``sides(f, mask) -> (d_plus, d_minus)``: the one-sided differences at ``f`` times the step, arrays of
        ``want``'s shape (read only at ``mask``).
    floor : float or ndarray
        The smallest fraction to try, per entry (broadcast to ``want``'s shape).
    roundoff : float
        The round-off of a central difference at the full step (:func:`default_atol` without its floor).
    want : ndarray of bool
        The entries to try (the suspected kinks).

    Returns
    -------
    ndarray of float64, ``want``'s shape
        The fraction where the one-sided differences first agree; NaN at kinks and outside ``want``.
    """
    want = np.asarray(want, dtype=bool)
    at = np.full(want.shape, np.nan)
    floor = np.broadcast_to(np.asarray(floor, dtype=np.float64), want.shape)
    live, f = want.copy(), 1.0 / FINER
    while True:
        live &= floor <= f
        if not live.any():
            return at
        dp, dm = (np.asarray(v, dtype=np.float64) for v in sides(f, live))
        with np.errstate(invalid="ignore", over="ignore"):
            width, noise = SIDES_AGREE * (np.abs(dp) + np.abs(dm)), 10 * roundoff / f
            agree = live & np.isfinite(dp) & np.isfinite(dm) & ((dp == dm) | (np.abs(dp - dm) + noise <= width))
            live &= ~agree & np.isfinite(width) & (noise <= width)  # above the round-off: try a smaller step
        at[agree] = f
        f /= FINER

def step_covered(analytic: np.ndarray, c1: np.ndarray, c2: np.ndarray, c4: np.ndarray) -> np.ndarray:
    r"""Elements whose mismatch with central differences is within the truncation error of the step (newuser23 M4).

    ``c1``, ``c2``, ``c4``: central differences at ``h``, ``h/2``, ``h/4``. ``C(h) = f' + a h^2 + b h^4 + ...``
    (Nocedal & Wright sec. 8.1), so Richardson's ``R = (4 C(h/2) - C(h)) / 3`` cancels the ``h^2`` term; its error
    is estimated by ``E = max(|R - R'|, |C(h/2) - C(h/4)| / 4)``, ``R'`` the same one step down (the second term
    keeps ``E`` from vanishing where ``R - R'`` crosses 0). An element is covered when ``|analytic - R| <= 2 E``:
    a correct tanh at ``h`` up to 2 is (``|f' - R| <= 1.9 E`` on 4000 points of 1.5 N(0, 1)), one 0.1% too large
    at ``h = 0.1`` is not (up to 490 E). Returns a bool array (False where any value is not finite).
    """
    a = np.asarray(analytic, dtype=np.float64)
    R, R2 = richardson(c1, c2, c4)
    with np.errstate(invalid="ignore"):
        E = np.maximum(np.abs(R - R2), np.abs(np.asarray(c2, np.float64) - np.asarray(c4, np.float64)) / 4)
        return np.nan_to_num(np.abs(a - R) <= 2 * E, nan=0).astype(bool)


def richardson(c1: Any, c2: Any, c4: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""Richardson's extrapolations of central differences at ``h``, ``h/2``, ``h/4``: ``R = (4 C(h/2) - C(h)) / 3``
    and the same one step down, ``R' = (4 C(h/4) - C(h/2)) / 3``, each by :func:`gradcheck._kernel.richardson_step`
    (the one place the formula is written; the kernel's ``"richardson"`` method forms it too).

    ``C(h) = f' + a h^2 + b h^4 + ...`` (Nocedal & Wright sec. 8.1), so ``R = f' - b h^4 / 4 + ...``: the ``h^2``
    term cancels, and ``R - R'`` is 15/16 of ``R``'s own truncation error. Round-off: ``R``'s is at most 3 times
    ``C(h)``'s. Returns float64 arrays of the inputs' shape.

    >>> [float(v) for v in richardson(1 + 0.04, 1 + 0.01, 1 + 0.0025)]  # f' = 1, a h^2 = 0.04, no h^4 term
    [1.0, 1.0]
    """
    c1, c2, c4 = (np.asarray(v, dtype=np.float64) for v in (c1, c2, c4))
    with np.errstate(invalid="ignore"):
        return richardson_step(c1, c2), richardson_step(c2, c4)


def extrapolated(c1: Any, c2: Any, c4: Any, rtol: float, atol: float) -> tuple[np.ndarray, np.ndarray]:
    r"""``(R, converged)``: :func:`richardson`'s ``R`` of central differences at ``h``, ``h/2``, ``h/4``, and where
    its own truncation error is a small share of the tolerance: ``R`` and ``R'``, the extrapolation one step down,
    agree by the one rule (:func:`mismatched`) at a quarter of ``rtol`` and ``atol`` (an ``atol`` below
    :data:`EXTRAPOLATION_ROUNDOFF` times ``C(h)``'s round-off sees round-off alone).

    The central difference's error has two parts: round-off, bounded by :func:`default_atol`, and truncation,
    ``h^2 |f'''| / 6``, which nothing bounds at the default step ``h = eps max(1, |x|)`` where ``|x|`` is large and
    the function varies on a scale far below ``|x|`` (newuser26: softmax cross-entropy at logits
    ``800 + 40 N(0, 1)``, ``h = 4.9e-3``: the difference quotient off by 2.1e-9 at a gradient of 5.3e-4, a quarter of
    that at ``h/2``; a correct gradient FAILed at 2e-6). Where ``R`` has converged it is the better estimate of
    ``f'`` (truncation ``O(h^4)``, round-off at most 3 times ``C(h)``'s), to be compared by the same rule; where it
    has not (a kink, round-off above the tolerance) nothing is decided here. ``converged`` is a bool array, False
    where any value is not finite.

    >>> R, ok = extrapolated(1 + 0.04, 1 + 0.01, 1 + 0.0025, 1e-6, 1e-9)
    >>> float(R), bool(ok)
    (1.0, True)
    >>> bool(extrapolated(0.51, 0.52, 0.54, 1e-6, 1e-9)[1])  # relu beside its kink: no h^2 law
    False
    """
    R, R2 = richardson(c1, c2, c4)
    with np.errstate(invalid="ignore"):
        ok = ~mismatched(R, R2, rtol / 4, atol / 4) & np.isfinite(R) & np.isfinite(R2)
    return R, np.asarray(ok, dtype=bool)
