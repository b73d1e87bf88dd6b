r"""The one comparison: one tolerance rule, one relative error, used by every verdict.

Every pair of gradients (manual, tape, reference, numerical) is compared element-wise with the relative error

.. math:: r_i = \frac{|a_i - b_i|}{\max(|a_i| + |b_i|,\ \tau)}, \qquad
          \tau = \mathrm{atol} / \mathrm{rtol},

and a pair passes when :math:`\max_i r_i \le \mathrm{rtol}`. The floor
:math:`\tau` makes that test exactly "``|a-b| <= atol`` or
``|a-b| <= rtol*(|a|+|b|)``" per element, so gradients that are zero up to
rounding do not report a relative error of 1. The symmetric denominator
:math:`|a|+|b|` is the one used in CS231n's gradient-check notes; it bounds
:math:`r` by 1.

Default ``atol`` (:func:`default_atol`). A central difference divides the
round-off of two evaluations of :math:`L` by the step: each of the terms
:math:`Y_i G_i` summed into :math:`L` carries a relative rounding error of about
:math:`u` (machine epsilon, 2.2e-16), so the estimate is off by up to about

.. math:: \mathrm{atol} = \max\Big(10^{-9},\ \frac{u \sum_i |Y_i G_i|}{h}\Big),
          \qquad h = \varepsilon \ (\varepsilon/2 \text{ for Richardson}),

i.e. :math:`u|L|/h` with :math:`|L|` measured before cancellation
(:math:`\sum|Y_i G_i| \ge |L|`; the smallest step :math:`h = \varepsilon` is used,
so it is an upper bound). That is what ``check_layer`` uses when ``atol`` is not
given: 1e-9 for small layers (a Linear 5->3 at batch 8 has
:math:`u\sum|YG|/h \approx 10^{-9}`), 2e-7 for a Conv2D 8->16 on 4x8x16x16
(measured round-off 5e-9, which the fixed 1e-9 failed). A planted bug changes
gradients by O(1) and still fails. For a loss, :math:`|L|` is the loss value.
The complex step has no cancellation and keeps 1e-9.

Every verdict of the package comes from here: ``check``, ``zoo``, ``train``,
``diagnose`` and ``grade`` compare with :func:`compare` (or its boolean form
:func:`close`, the same rule), so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ATOL_FLOOR", "relative_error", "norm_relative_error", "close", "default_atol", "atol_swamp_notes", "Comparison", "compare",
           "kink_mask"]

#: Smallest default absolute tolerance (see :func:`default_atol`).
ATOL_FLOOR = 1e-9
_TINY = float(np.finfo(np.float64).tiny)


def relative_error(a: Any, b: Any, tiny: float = _TINY) -> np.ndarray:
    """Element-wise relative error ``|a - b| / max(|a| + |b|, tiny)``.

    Parameters
    ----------
    a, b : array_like
        Broadcastable arrays (converted to float64).
    tiny : float, default smallest normal float64
        Floor of the denominator. With the default, ``a == b == 0`` gives 0.
        :func:`compare` passes ``atol / rtol``.

    Returns
    -------
    ndarray of float64, values in [0, 1].

    Examples
    --------
    >>> float(relative_error(1.0, 1.1))  # 0.1 / 2.1
    0.047619047619047...
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return np.abs(a - b) / np.maximum(np.abs(a) + np.abs(b), tiny)


def default_atol(Y: Any, G: Any, eps: float, method: str = "central") -> float:
    r"""The default absolute tolerance: the round-off of a finite difference of ``L = sum(Y * G)``.

    ``max(ATOL_FLOOR, u * sum|Y * G| / h)`` with ``u`` the float64 machine epsilon and
    ``h = eps`` (``eps / 2`` for Richardson, whose smaller step enters too); see the
    module docstring. The complex step has no cancellation: ``ATOL_FLOOR``.

    Parameters
    ----------
    Y : array_like
        The forward output (or, for a loss, the loss value).
    G : array_like
        The upstream gradient (1 for a loss).
    eps : float
        Relative step of the finite differences.
    method : str, default "central"

    Returns
    -------
    float

    Examples
    --------
    >>> default_atol(np.ones(10), np.ones(10), 6.06e-6)  # small: the floor
    1e-09
    >>> round(default_atol(np.ones(100_000), np.ones(100_000), 6.06e-6), 9)  # u * 1e5 / 6.06e-6
    3.664e-06
    """
    if method == "complex":
        return ATOL_FLOOR
    h = float(eps) / (2.0 if method == "richardson" else 1.0)
    mag = float(np.sum(np.abs(np.asarray(Y, dtype=np.float64) * np.asarray(G, dtype=np.float64))))
    if not np.isfinite(mag):
        return ATOL_FLOOR
    return max(ATOL_FLOOR, float(np.finfo(np.float64).eps) * mag / h)


def atol_swamp_notes(atol: float, grads: dict[str, list[np.ndarray]], how: str = "default") -> list[str]:
    """Warnings for tensors whose every gradient value is smaller than ``atol``.

    An element passes when ``|a - b| <= max(rtol * (|a| + |b|), atol)`` (see
    :func:`relative_error` and :func:`compare`); if ``atol`` exceeds the largest
    ``|gradient|`` of a tensor, a wrong gradient of that size passes too (e.g.
    ``db = dY.mean(0)`` instead of ``dY.sum(0)``), so the check says nothing.

    Parameters
    ----------
    atol : float
    grads : dict of str to list of ndarray
        Display name (``"db"``) -> the gradients of that tensor being compared
        (manual, tape, reference, numerical).
    how : str, default "default"
        Where ``atol`` came from, for the message (``"default"`` or ``"given"``).

    Returns
    -------
    list of str
        One ``WARNING: ...`` line per such tensor (empty if none).
    """
    out = []
    for name, arrays in grads.items():
        finite = [np.abs(np.asarray(a, dtype=np.float64)) for a in arrays if np.size(a)]
        if not finite:
            continue
        biggest = max(float(np.max(a)) for a in finite)
        if np.isfinite(biggest) and atol > biggest:
            out.append(f"WARNING: the {how} atol={atol:.3g} is larger than every |{name}| (at most {biggest:.3g}): "
                       f"the check of {name} would pass any gradient of that size. Pass a smaller --atol / atol= "
                       "(or scale the layer down) for a meaningful check")
    return out


def close(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-9, *, equal_nan: bool = False) -> bool:
    """True when ``a`` and ``b`` have the same shape and pass the tolerance rule everywhere.

    The rule of :func:`compare`: per element ``|a - b| <= atol`` or
    ``|a - b| <= rtol * (|a| + |b|)``. ``close(a, b, 0, 0)`` is exact equality. An
    infinity agrees only with the same infinity (``inf - x`` is within no tolerance,
    although ``inf <= rtol * inf`` would hold).

    Parameters
    ----------
    a, b : array_like
        Converted to float64.
    rtol : float, default 1e-6
    atol : float, default 1e-9
    equal_nan : bool, default False
        Whether NaN agrees with NaN (otherwise NaN never agrees).

    Returns
    -------
    bool
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    with np.errstate(invalid="ignore"):
        d = np.abs(a - b)  # infinite against anything but the same infinity: never within a tolerance
        ok = (np.isfinite(d) & ((d <= atol) | (d <= rtol * (np.abs(a) + np.abs(b))))) | (a == b)
    if equal_nan:
        ok |= np.isnan(a) & np.isnan(b)
    return bool(np.all(ok))


def norm_relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """``||a - b|| / (||a|| + ||b||)`` (Frobenius norms), 0 when both are 0.

    The whole-tensor summary of CS231n's gradient-checking notes, reported next to
    the element-wise :func:`relative_error` (which alone decides a verdict).

    Parameters
    ----------
    a, b : array_like, same shape

    Returns
    -------
    float in [0, 1]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    den = np.linalg.norm(a) + np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / den) if den > 0 else 0.0


@dataclass
class Comparison:
    """One pair of gradients of one tensor, compared element-wise.

    Attributes
    ----------
    pair : str
        One of :data:`PAIRS`, e.g. ``"manual-vs-numerical"``; ``a`` is the first name.
    max_abs_error : float
        ``max |a - b|`` over elements.
    max_rel_error : float
        ``max r_i`` (see the module docstring; floor ``atol/rtol``).
    worst_index : tuple of int
        Index of the element with the largest ``r_i`` (the one deciding pass/fail).
    worst_a, worst_b : float
        The two values at ``worst_index``.
    passed : bool
        ``max_rel_error <= rtol``.
    how : {"elements", "directional", "sample"}
        What was compared: every element, random directional derivatives
        ``<g, u>`` (fast mode; ``worst_index`` is then ``(direction,)``), or
        sampled elements.
    n_compared : int
        Number of elements (or directions) compared.
    kinks : list of tuple of int
        Elements excluded as "at a kink": the one-sided differences disagree and
        the analytic value lies between them (see :func:`kink_mask`).
    norm_rel_error : float
        ``||a-b|| / (||a||+||b||)`` over the compared elements (NaN for directional).
    """

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

    @property
    def names(self) -> tuple[str, str]:
        """The two compared sources, e.g. ``("manual", "numerical")``."""
        a, b = self.pair.split("-vs-")
        return a, b


def compare(a: np.ndarray, b: np.ndarray, pair: str, *, rtol: float, atol: float,
            mask: np.ndarray | None = None, kinks: np.ndarray | None = None,
            how: str = "elements") -> Comparison:
    """Compare two arrays of the same shape; see :class:`Comparison`.

    Parameters
    ----------
    a, b : ndarray of float64, same shape
    pair : str
        Label, e.g. ``"manual-vs-numerical"``.
    rtol : float
        Relative tolerance (> 0).
    atol : float
        Absolute tolerance (>= 0); enters as the denominator floor ``atol/rtol``.
    mask : ndarray of bool, optional
        Compare only these elements (sample mode); default all.
    kinks : ndarray of bool, optional
        Elements at a kink: excluded from the verdict and listed in ``Comparison.kinks``.
    how : str, default "elements"
        Stored in ``Comparison.how``.

    Returns
    -------
    Comparison
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    use = np.ones(a.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool).copy()
    kink_list: list[tuple[int, ...]] = []
    if kinks is not None:
        k = np.asarray(kinks, dtype=bool) & use
        kink_list = [tuple(int(i) for i in ix) for ix in np.argwhere(k)]
        use &= ~k
    if a.size == 0 or not use.any():
        return Comparison(pair, 0.0, 0.0, (), float("nan"), float("nan"), True, how, 0, kink_list, 0.0)
    aa = np.where(use, a, 0.0)
    bb = np.where(use, b, 0.0)
    abs_err = np.abs(aa - bb)
    rel = relative_error(aa, bb, tiny=max(atol / rtol, _TINY))
    flat = int(np.argmax(rel))
    idx = tuple(int(i) for i in np.unravel_index(flat, a.shape))
    max_rel = float(rel.flat[flat])
    return Comparison(
        pair=pair,
        max_abs_error=float(abs_err.max()),
        max_rel_error=max_rel,
        worst_index=idx,
        worst_a=float(a[idx]),
        worst_b=float(b[idx]),
        passed=bool(max_rel <= rtol),
        how=how,
        n_compared=int(use.sum()),
        kinks=kink_list,
        norm_rel_error=norm_relative_error(aa, bb),
    )


def kink_mask(analytic: np.ndarray, numerical: np.ndarray, d_plus: np.ndarray | None,
              d_minus: np.ndarray | None, *, rtol: float, atol: float) -> np.ndarray:
    """Elements "at a kink": failing elements whose one-sided differences disagree.

    An element is at a kink when (1) it fails the comparison of ``analytic`` and
    ``numerical``, (2) its forward and backward quotients ``d_plus`` and
    ``d_minus`` differ by more than 1% of their magnitudes (a smooth function
    gives a difference of about ``h |f''|``, tiny at the default step), and
    (3) the analytic value lies between them (widened by the tolerance): any
    value there is a valid one-sided derivative (e.g. ``relu'(0)`` in ``[0, 1]``).
    Such an element is reported and excluded from the verdict. Example (case
    C28): relu at ``x = 1e-4`` with ``h = 5e-3``: ``d_plus = 1``, ``d_minus = 0.02``,
    central 0.51, analytic 1.0: at a kink.

    Parameters
    ----------
    analytic, numerical : ndarray, same shape
    d_plus, d_minus : ndarray or None
        One-sided quotients (NaN where not evaluated); None gives no kinks.
    rtol, atol : float

    Returns
    -------
    ndarray of bool, shape of ``analytic``
    """
    a = np.asarray(analytic, dtype=np.float64)
    if d_plus is None or d_minus is None:
        return np.zeros(a.shape, dtype=bool)
    n = np.asarray(numerical, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        fails = relative_error(a, n, tiny=max(atol / rtol, _TINY)) > rtol
        lo = np.minimum(d_plus, d_minus)
        hi = np.maximum(d_plus, d_minus)
        asym = (hi - lo) > 0.01 * (np.abs(d_plus) + np.abs(d_minus)) + 10 * atol
        slack = rtol * (np.abs(lo) + np.abs(hi)) + atol
        between = (a >= lo - slack) & (a <= hi + slack)
    return np.nan_to_num(fails & asym & between, nan=0).astype(bool)
