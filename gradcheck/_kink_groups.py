r"""Kinks judged together: the entries of one tensor excused one at a time as kinks, moved together.

The kink test (:func:`gradcheck.compare.kink_mask`, :func:`gradcheck.numerical.directional_kinks`) excuses an entry
whose analytic value lies between its own one-sided differences: any value of a subgradient there. It never tests
entries jointly, and a joint error passed: a 2x2 max-pool whose window holds a 3-way tie, a backward routing ``dY`` to
every tied entry (the window's ``dX`` sums to ``3 dY``; every valid subgradient sums to ``dY``), PASSed in every mode
(verify48c H3): each tied entry's 1 lies between its own one-sided slopes, 1 and 0.

Moved together, such entries often give a smooth direction: the max of a tie moves by ``t`` on both sides. Along
``d = sum_i max(1, |x_i|) e_i`` over a group of them, where the one-sided differences agree (at the step, or at a finer
one, :func:`_along_group`), ``sum_i g_i d_i`` must match the central difference along ``d`` by
the one rule: for a convex or concave piece (a max, a min, a sort) every subgradient ``g`` gives the same
``g . d`` where the one-sided derivatives along ``d`` agree. Where they disagree along every group (ReLUs at their
kinks, each its own group, or a tie beside a ReLU's kink) nothing new is asserted.

Groups: the entries whose perturbation (each by its own step, either way) changes a common output entry (a pooling
window's tied entries change its one output), found with two forwards per entry for at most :data:`GROUPED` of them;
all the kinks of the tensor are tried as one group first (three forwards), which settles the common cases (every tie's
window smooth at once, or one entry alone).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ._kernel import TINY, kernel
from .compare import FINER, SIDES_AGREE, close, compare, relative_error, smooth_mask
from .numerical import _mover, _right_at

#: The most entries at kinks of one tensor grouped by the output entries they move (two forwards each); beyond it
#: only the whole set of them is moved together.
GROUPED = 64


def joint_wrong(call: Any, G: np.ndarray, key: str, kinks: dict[str, list], analytic: dict[str, np.ndarray], *,
                rtol: float, atol: float, eps: float) -> dict[str, list[tuple[list, float, float]]]:
    """The groups of entries at kinks whose analytic sum disagrees with the difference along them.

    Parameters
    ----------
    call : gradcheck.sources.Call
        The layer call (``forward``, ``output``, ``inputs``, ``params``, ``keys``).
    G : ndarray
        The upstream gradient ``dY`` of ``L = sum(Y * G)``.
    key : str
        The tensor (an input's name or a parameter's).
    kinks : dict
        ``{source: [index, ...]}``: the entries of ``key`` excused as kinks, per analytic source.
    analytic : dict
        ``{source: gradient of key}``.
    rtol, atol : float
        The one rule's tolerances (:func:`gradcheck.compare.close`).
    eps : float
        The relative step (an entry moves by ``eps max(1, |x|)``).

    Returns
    -------
    dict
        ``{source: [(group, analytic sum, central difference, fraction of the step it was taken at), ...]}`` for the sources with a wrong group (empty:
        nothing wrong, or nothing could be asserted).
    """
    every = sorted({tuple(ix) for ks in kinks.values() for ix in ks})
    if len(every) < 2:
        return {}
    base, pos, along = _mover(call.output, call.inputs, call.params, G, call.keys)
    x = np.asarray(base[pos[key]] if key in pos else call.params[key], dtype=np.float64)
    Y0 = along({}, 0.0, output=True)
    L0 = float(np.sum(Y0 * G))
    noise = 2 * np.finfo(np.float64).eps * float(np.sum(np.abs(Y0 * G))) / eps  # a quotient's round-off

    def agree(a, c):
        return bool(close(a, c, rtol, float(np.max(atol))))

    def verdicts(group):
        part = np.zeros(x.shape)
        for ix in group:
            part[ix] = max(1.0, abs(float(x[ix])))
        top = float(np.max(np.abs(x[tuple(np.array(group).T)])))
        out = {}
        for src, g in analytic.items():
            if not any(tuple(ix) in group for ix in map(tuple, kinks.get(src, []))):
                continue
            a = float(np.sum(np.asarray(g, dtype=np.float64) * part))
            v, c, f = _along_group(along, L0, {key: part}, a, eps, top, noise, agree)
            if v is None:  # reported per unit move of the largest entry (the sums of a tie at 1e6 read as at 0)
                w = float(part[tuple(np.array(group).T)].max())
                out[src] = (list(group), a / w, c / w, f)
        return out

    wrong = {}  # the smallest wrong group named (one pooling window), the whole set where none is (verify49c F5)
    if len(every) <= GROUPED:
        for group in _groups(along, key, x, every, eps, Y0):
            if len(group) >= 2 and len(group) < len(every):
                for src, w in verdicts(group).items():
                    wrong.setdefault(src, w)
    for src, w in verdicts(every).items():
        wrong.setdefault(src, w)
    return {src: [w] for src, w in wrong.items()}


def _along_group(along, L0, part, a, eps, top, noise, agree) -> tuple[str | None, float, float]:
    """``(verdict, central difference, fraction of the step)`` of the analytic sum ``a`` along ``part``: ``"fine"``
    where it agrees (within the quotient's round-off too); None where it is wrong: at the step or a finer one
    (:data:`~gradcheck.compare.FINER` times smaller each, down to the step of an input of size 1, ``top`` the largest
    ``|x|`` moved) the one-sided differences agree to their round-off (linear along ``part``) and the central
    difference there does not match ``a``, or they are within :data:`~gradcheck.compare.SIDES_AGREE` of each other and
    part as a smooth function's (:func:`smooth_mask`: a tie under a tanh) and no central
    difference or extrapolation there or finer does (:func:`gradcheck.numerical._right_at`); ``"kink"`` (nothing
    asserted) where every step tried crosses a kink or the round-off decides. Agreement to 1% alone, enough for one
    entry (:func:`~gradcheck.compare.sides_agree_at`), is not here: the jumps of several kinks can nearly cancel."""
    f, floor, first = 1.0, 1.0 / max(1.0, top), None
    while f >= floor * (1 - 1e-12):
        e = f * eps
        c, dp, dm = (float(v) for v in kernel("central", [along(part, e), along(part, -e)], [e, -e], L0))
        first = c if first is None else first
        if agree(a, c) or abs(c - a) <= noise / f:
            return "fine", c, f
        if abs(dp - dm) <= 4 * noise / f:  # linear along part, if the central difference a step finer is the same:
            g = f / FINER  # a median's tie carried past both its neighbours, symmetric about it, by a step of 6 at
            if g < floor * (1 - 1e-12):  # 1e6 gives equal sides too, a secant (verify49c F10)
                return None, c, f
            e2 = g * eps
            c2 = float(kernel("central", [along(part, e2), along(part, -e2)], [e2, -e2], L0)[0])
            if abs(c2 - c) <= 4 * noise / g:
                return None, c, f
            f = g
            continue
        if 4 * noise / f >= SIDES_AGREE * (abs(dp) + abs(dm)):
            break
        if abs(dp - dm) > SIDES_AGREE * (abs(dp) + abs(dm)):  # several kinks at their distances within the step
            f /= FINER  # can part as a smooth function's does (a right clip's db summed over rows at 1e6 FAILed)
            continue
        smaller = [kernel("central", [along(part, g), along(part, -g)], [g, -g], L0)[1:] for g in (e / 2, e / 4)]
        if smooth_mask(np.array(dp), np.array(dm), smaller):
            return _right_at(part, along, L0, a, eps, f, top, noise, agree), c, f
        f /= FINER
    return "kink", first, 1.0


def _groups(along, key, x, entries, eps, Y0) -> list[list[tuple[int, ...]]]:
    """``entries`` grouped by the output entries they change, moved by their own step either way (connected
    components: two entries changing one output entry are in one group)."""
    moved = []
    for ix in entries:
        d = np.zeros(x.shape)
        d[ix] = max(1.0, abs(float(x[ix])))
        moved.append(np.ravel((along({key: d}, eps, output=True) != Y0) | (along({key: d}, -eps, output=True) != Y0)))
    M = np.array(moved, dtype=np.float64)
    link = (M @ M.T) > 0
    seen, out = np.zeros(len(entries), dtype=bool), []
    for i in range(len(entries)):
        if seen[i]:
            continue
        comp, stack = [], [i]
        seen[i] = True
        while stack:
            j = stack.pop()
            comp.append(entries[j])
            for n in np.flatnonzero(link[j] & ~seen):
                seen[n] = True
                stack.append(int(n))
        out.append(sorted(comp))
    return out


def joint_checked(call: Any, G: np.ndarray, key: str, comparisons: dict, analytic: dict[str, np.ndarray],
                  numerical: np.ndarray, rtol: float, atol: Any, eps: float, name: str, notes: list[str],
                  mask: np.ndarray | None = None) -> dict:
    """``comparisons`` (``{pair: Comparison}`` of tensor ``key``, made with ``mask``: the entries compared, None
    every one) with the entries of each wrong group (:func:`joint_wrong`) no longer excused as kinks: that
    comparison fails, and a note gives the sums."""
    kinks = {p.split("-vs-")[0]: c.kinks for p, c in comparisons.items() if c.kinks and p.endswith("-vs-numerical")}
    kinks = {src: ks for src, ks in kinks.items() if src in analytic}
    if not kinks or sum(len(k) for k in kinks.values()) < 2:
        return comparisons
    wrong = joint_wrong(call, G, key, kinks, analytic, rtol=rtol, atol=atol, eps=eps)
    out = dict(comparisons)
    for src, groups in wrong.items():
        pair = f"{src}-vs-numerical"
        c = out[pair]
        drop = {tuple(ix) for group, *_ in groups for ix in group}
        still = np.zeros(np.shape(numerical), dtype=bool)
        for ix in c.kinks:
            still[tuple(ix)] = tuple(ix) not in drop
        new = compare(analytic[src], numerical, pair, rtol=rtol, atol=atol, kinks=still, how=c.how,
                      mask=mask)
        group, a, num, f = groups[0]
        if new.passed:  # each entry matches its own central difference: the sum is what fails
            new = dataclasses.replace(new, passed=False, max_abs_error=abs(a - num), worst_index=tuple(group[0]),
                                      max_rel_error=float(relative_error(np.array(a), np.array(num),
                                                                         tiny=max(float(np.max(atol)) / rtol, TINY))))
        out[pair] = dataclasses.replace(new, extrapolated=c.extrapolated)
        shown = ", ".join(str(list(ix)) for ix in group[:6]) + (" ..." if len(group) > 6 else "")
        notes.append(f"{name}: the {len(group)} entries {shown}, each at a kink alone (its {src} value between its own "
                     f"one-sided differences), moved together change the output smoothly: "
                     f"the sum of {src} {name} over them is {a:.6g}, the central difference "
                     f"along them {num:.6g} (each entry moved by its own step, eps max(1, |x|), at {f:g} of it, where the one-sided differences along them agree; both per unit move of the largest); any valid subgradient (one winner of a tie, or a split) sums to the "
                     f"latter. " + ("Gradient routed to several tied entries at once?" if abs(a) > abs(num) else
                                  "Gradient routed to none of the tied entries, or only part of it?"))
    return out

