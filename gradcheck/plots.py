"""Matplotlib figures of check results and of the training comparison.

Every function returns a :class:`matplotlib.figure.Figure` (so a notebook shows
it inline) built with the object-oriented API (``Figure`` + Agg canvas), never
``pyplot``: nothing opens a window, no global figure is left behind, and the
functions work under ``MPLBACKEND=Agg`` or any other backend.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .check import ALL_PAIRS, CheckResult

__all__ = ["ERROR_FLOOR", "PAIR_COLORS", "plot_result", "plot_results", "plot_training", "save_figure"]

#: Relative errors below this (including exact zeros) are drawn at this value so
#: a log axis can show them; the legend says so.
ERROR_FLOOR = 1e-17

# Bars start one decade below the floor, so a clamped value is a visible stub.
_BASE = ERROR_FLOOR / 10

#: One colour per comparison pair (colour-blind-safe Okabe-Ito palette).
PAIR_COLORS = {
    "manual-vs-numerical": "#0072B2",
    "tape-vs-numerical": "#E69F00",
    "manual-vs-tape": "#009E73",
    "manual-vs-reference": "#CC79A7",
}


def _new_figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _bars(ax, labels: list[str], values: dict[str, list[float]], passed: dict[str, list[bool]],
          rtol: float, title: str, horizontal: bool, groups: list[int] | None = None) -> None:
    n = len(labels)
    if groups is not None:  # shade every other layer so its tensors read as one block
        for g in sorted(set(groups))[1::2]:
            idx = [i for i, gi in enumerate(groups) if gi == g]
            (ax.axhspan if horizontal else ax.axvspan)(min(idx) - 0.5, max(idx) + 0.5, color="#000000",
                                                       alpha=0.05, linewidth=0)
    pairs = [p for p in ALL_PAIRS if any(v is not None for v in values[p])]
    width = 0.8 / max(len(pairs), 1)
    pos = np.arange(n)
    clamped_any = False
    for j, pair in enumerate(pairs):
        off = pos - 0.4 + width * (j + 0.5)
        vals = np.array([np.nan if v is None else v for v in values[pair]], dtype=float)
        shown = np.where(np.isnan(vals), np.nan, np.maximum(vals, ERROR_FLOOR))
        clamped_any |= bool(np.any(vals[~np.isnan(vals)] < ERROR_FLOOR))
        heights = shown - _BASE
        fails = [not ok for ok in passed[pair]]
        kw = dict(color=PAIR_COLORS[pair], label=pair, edgecolor=["#D00000" if f else "none" for f in fails],
                  linewidth=[2.0 if f else 0 for f in fails])
        if horizontal:
            ax.barh(off, np.nan_to_num(heights), height=width, left=_BASE, **kw)
        else:
            ax.bar(off, np.nan_to_num(heights), width=width, bottom=_BASE, **kw)
    line = ax.axvline if horizontal else ax.axhline
    line(rtol, color="#D00000", linestyle="--", linewidth=1.2, label=f"tolerance rtol = {rtol:g}")
    if horizontal:
        ax.set_xscale("log")
        ax.set_yticks(pos, labels)
        ax.set_ylim(n - 0.5, -0.5)
        ax.set_xlabel("max relative error  |a-b| / max(|a|+|b|, atol/rtol)")
        ax.set_xlim(_BASE, 3.0)
        ax.grid(axis="x", which="major", alpha=0.3)
    else:
        ax.set_yscale("log")
        tilt = sum(len(t) + 2 for t in labels) > 12 * ax.figure.get_figwidth()
        ax.set_xticks(pos, labels, rotation=30 if tilt else 0, ha="right" if tilt else "center")
        ax.set_ylabel("max relative error\n|a-b| / max(|a|+|b|, atol/rtol)")
        ax.set_ylim(_BASE, 3.0)
        ax.grid(axis="y", which="major", alpha=0.3)
    ax.set_title(title)
    handles, labs = ax.get_legend_handles_labels()
    if clamped_any:
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="none", edgecolor="none"))
        labs.append(f"errors < {ERROR_FLOOR:g} (incl. exact 0) drawn at {ERROR_FLOOR:g}")
    if any(not ok for p in pairs for ok in passed[p]):
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="white", edgecolor="#D00000", linewidth=2))
        labs.append("red outline: above tolerance (FAIL)")
    ax.figure.legend(handles, labs, fontsize="small", loc="outside lower center", ncol=3, frameon=False)


def _collect(results: Sequence[CheckResult], prefix: bool):
    labels, values, passed, groups = [], {p: [] for p in ALL_PAIRS}, {p: [] for p in ALL_PAIRS}, []
    for gi, res in enumerate(results):
        for rec in res.records:
            groups.append(gi)
            label = rec.tensor + (" (fwd)" if rec.kind == "forward" else "")
            labels.append(f"{res.name} {label}" if prefix else label)
            for p in ALL_PAIRS:
                c = rec.get(p)
                values[p].append(None if c is None else c.max_rel_error)
                passed[p].append(True if c is None else c.passed)
    return labels, values, passed, groups


def plot_result(result: CheckResult) -> Figure:
    """Bar chart of one result: max relative error per tensor and pair, log axis.

    Parameters
    ----------
    result : CheckResult

    Returns
    -------
    matplotlib.figure.Figure
        Bars per tensor (``Y (fwd)``, ``dX``, ``dW``, ...), one colour per pair,
        a dashed line at ``rtol``; failing bars are outlined in red. Zero errors
        are clamped to :data:`ERROR_FLOOR` (said in the legend).
    """
    labels, values, passed, _ = _collect([result], prefix=False)
    fig = _new_figure(max(7.5, 0.9 * len(labels) + 2.5), 4.4)
    ax = fig.add_subplot()
    status = "PASS" if result.passed else "FAIL: " + ", ".join(result.failing_tensors)
    _bars(ax, labels, values, passed, result.rtol, f"{result.name}: gradient check ({status})", horizontal=False)
    return fig


def plot_results(results: Sequence[CheckResult], title: str = "gradcheck zoo") -> Figure:
    """Summary of many results: one row per layer/loss, the worst tensor per pair.

    Each bar is the largest max-relative-error over that result's tensors
    (forward value included) for one comparison pair; :func:`plot_result`
    shows the tensors of one result.

    Parameters
    ----------
    results : sequence of CheckResult
    title : str

    Returns
    -------
    matplotlib.figure.Figure
        Horizontal bars on a log axis, the tolerance as a dashed line, failing
        rows labelled with their failing tensors and outlined in red.
    """
    labels, values, passed = [], {p: [] for p in ALL_PAIRS}, {p: [] for p in ALL_PAIRS}
    for res in results:
        n_t = sum(r.kind == "gradient" for r in res.records)
        labels.append(f"{res.name} ({n_t} grad{'s' if n_t != 1 else ''})" if res.passed
                      else f"{res.name}: FAIL {', '.join(res.failing_tensors)}")
        for p in ALL_PAIRS:
            cs = [c for r in res.records if (c := r.get(p)) is not None]
            values[p].append(max(c.max_rel_error for c in cs) if cs else None)
            passed[p].append(all(c.passed for c in cs))
    fig = _new_figure(9.0, max(3.0, 0.34 * len(labels) + 1.8))
    ax = fig.add_subplot()
    n_fail = sum(not r.passed for r in results)
    _bars(ax, labels, values, passed, results[0].rtol if results else 1e-6,
          f"{title}: {len(results) - n_fail}/{len(results)} passed (worst tensor per row)", horizontal=True,
          groups=list(range(len(labels))))
    return fig


def plot_training(steps: np.ndarray, loss_manual: np.ndarray, loss_tape: np.ndarray,
                  rel_loss_diff: np.ndarray, rel_grad_diff: np.ndarray, *, steps_per_epoch: int,
                  tolerance: float, model_name: str = "MLP") -> Figure:
    """Loss curves of manual and tape training, and their per-step relative differences.

    Parameters
    ----------
    steps : ndarray of int, shape (n,)
    loss_manual, loss_tape : ndarray of float, shape (n,)
        Minibatch loss per step.
    rel_loss_diff, rel_grad_diff : ndarray of float, shape (n,)
        ``|Lm - Lt| / max(|Lm| + |Lt|, tiny)`` and the largest gradient relative
        error of the step. Zeros are drawn at :data:`ERROR_FLOOR`.
    steps_per_epoch : int
        For the epoch axis on top.
    tolerance : float
        The loss-agreement requirement, drawn as a dashed line.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: loss (top, both curves, the tape one dashed over the manual
        one), relative differences on a log axis (bottom).
    """
    fig = _new_figure(9.0, 6.0)
    ax1, ax2 = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    ax1.plot(steps, loss_manual, color="#0072B2", linewidth=1.4, alpha=0.45, label="manualprop, per step")
    ax1.plot(steps, loss_tape, color="#E69F00", linewidth=1.0, alpha=0.7, linestyle=(0, (4, 3)),
             label="autoprop (tape), per step")
    n_ep = len(steps) // steps_per_epoch
    if n_ep:
        ends = steps_per_epoch * np.arange(1, n_ep + 1)
        mean_m = np.asarray(loss_manual)[: n_ep * steps_per_epoch].reshape(n_ep, -1).mean(axis=1)
        mean_t = np.asarray(loss_tape)[: n_ep * steps_per_epoch].reshape(n_ep, -1).mean(axis=1)
        ax1.plot(ends, mean_m, "o-", color="#0072B2", markersize=7, linewidth=1.8, label="manualprop, epoch mean")
        ax1.plot(ends, mean_t, "x", color="#E69F00", markersize=7, markeredgewidth=2,
                 label="autoprop, epoch mean")
    ax1.set_yscale("log")
    ax1.set_ylabel("minibatch cross-entropy")
    ax1.set_title(f"Training the same {model_name} twice from identical weights: manual vs tape gradients")
    ax1.legend(loc="upper right", ncol=2, fontsize="small")
    ax1.grid(alpha=0.3)
    sec = ax1.secondary_xaxis("top", functions=(lambda s: s / steps_per_epoch, lambda e: e * steps_per_epoch))
    sec.set_xlabel("epoch")
    clamped = bool(np.any(rel_loss_diff < ERROR_FLOOR) or np.any(rel_grad_diff < ERROR_FLOOR))
    ax2.plot(steps, np.maximum(rel_loss_diff, ERROR_FLOOR), color="#009E73", linewidth=1.0,
             label="loss: |Lm-Lt| / (|Lm|+|Lt|)")
    ax2.plot(steps, np.maximum(rel_grad_diff, ERROR_FLOOR), color="#CC79A7", linewidth=1.0, alpha=0.8,
             label="gradients: max relative error")
    ax2.axhline(tolerance, color="#D00000", linestyle="--", linewidth=1.2, label=f"requirement {tolerance:g}")
    ax2.set_yscale("log")
    ax2.set_ylim(ERROR_FLOOR / 3, max(1.0, tolerance * 10))
    ax2.set_xlabel("step")
    ax2.set_ylabel("relative difference")
    ax2.grid(alpha=0.3)
    handles, labs = ax2.get_legend_handles_labels()
    if clamped:
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="none", edgecolor="none"))
        labs.append(f"values < {ERROR_FLOOR:g} (incl. exact 0) drawn at {ERROR_FLOOR:g}")
    ax2.legend(handles, labs, fontsize="small", loc="upper left", ncol=2)
    return fig


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = 120) -> str:
    """Save ``fig`` as PNG, creating the directory; return the path written.

    Raises
    ------
    OSError
        If the file cannot be written.
    """
    path = os.fspath(path)
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path
