"""Matplotlib figures of check results and of the training comparison: ``Figure`` + Agg canvas, never
``pyplot`` (no window, no global figure, any ``MPLBACKEND``; a notebook shows it inline)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.mathtext import MathTextParser

from .check import ALL_PAIRS, CheckResult

__all__ = ["ERROR_FLOOR", "PAIR_COLORS", "plot_result", "plot_results", "plot_training", "save_figure",
           "safe_file_name", "plot_gradient_heatmaps", "plot_step_error", "plot_jacobian", "tape_jacobian"]

#: Relative errors below this (exact zeros too) are drawn at this value on a log axis; the legend says so.
ERROR_FLOOR = 1e-17
_BASE = ERROR_FLOOR / 10  # bars start one decade below the floor: a clamped value is a visible stub

#: One colour per comparison pair (colour-blind-safe Okabe-Ito palette).
PAIR_COLORS = {"manual-vs-numerical": "#0072B2", "tape-vs-numerical": "#E69F00", "manual-vs-tape": "#009E73",
               "manual-vs-reference": "#CC79A7", "call1-vs-call2": "#D55E00",
               "C-order-vs-Fortran-order": "#56B4E9"}


def _plain(text: str) -> str:
    """``text`` drawn as written: each ``$`` escaped, so that a class or tensor name checked code chose (a parameter
    key ``W$\\undefinedmacro{x}$``: redteam28 F2, a ParseFatalException that crashed ``check --plots``) is not read
    as mathtext. Matplotlib draws ``\\$`` as ``$`` in a text with no mathtext; the axes' own tick labels (a log
    axis's ``10^{-5}``) keep theirs.

    >>> print(_plain("W$x$"))
    W\\$x\\$
    """
    return str(text).replace("$", r"\$")


class _Canvas(FigureCanvasAgg):
    """Agg canvas whose renderers share one mathtext parser: matplotlib caches parsed mathtext (a log axis's tick
    labels ``10^{-5}``, ~15 ms each to parse) per parser, and each canvas's renderer makes its own, so every figure
    parsed the same labels again."""

    def get_renderer(self):
        renderer = super().get_renderer()
        renderer.mathtext_parser = _MATHTEXT
        return renderer


_MATHTEXT = MathTextParser("path")


def _new_figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    _Canvas(fig)
    return fig


def _legend_note(handles: list, labels: list, text: str, edge: str = "none") -> None:
    """One more legend entry: a text (an invisible patch) or, with ``edge``, an outlined box."""
    from matplotlib.patches import Patch
    handles.append(Patch(facecolor="white" if edge != "none" else "none", edgecolor=edge,
                         linewidth=2 if edge != "none" else 1))
    labels.append(text)


def _bars(ax, labels: list[str], values: dict[str, list[float]], passed: dict[str, list[bool]],
          rtol: float, title: str, horizontal: bool, groups: list[int] | None = None) -> None:
    """Bars of max relative errors per label and pair on a log axis, clamped at :data:`ERROR_FLOOR`; ``labels`` and
    ``title`` drawn as written (:func:`_plain`)."""
    labels, title = [_plain(x) for x in labels], _plain(title)
    n, pos = len(labels), np.arange(len(labels))
    for g in sorted(set(groups or []))[1::2]:  # shade every other layer so its tensors read as one block
        idx = [i for i, gi in enumerate(groups) if gi == g]
        (ax.axhspan if horizontal else ax.axvspan)(min(idx) - 0.5, max(idx) + 0.5, color="#000000", alpha=0.05,
                                                   linewidth=0)
    pairs = [p for p in ALL_PAIRS if any(v is not None for v in values[p])]
    width = 0.8 / max(len(pairs), 1)
    clamped = False
    for j, pair in enumerate(pairs):
        vals = np.array([np.nan if v is None else v for v in values[pair]], dtype=float)
        clamped |= bool(np.any(vals[~np.isnan(vals)] < ERROR_FLOOR))
        heights = np.nan_to_num(np.where(np.isnan(vals), np.nan, np.maximum(vals, ERROR_FLOOR)) - _BASE)
        fails = [not ok for ok in passed[pair]]
        kw = dict(color=PAIR_COLORS[pair], label=pair, edgecolor=["#D00000" if f else "none" for f in fails],
                  linewidth=[2.0 if f else 0 for f in fails])
        off = pos - 0.4 + width * (j + 0.5)
        (ax.barh(off, heights, height=width, left=_BASE, **kw) if horizontal else
         ax.bar(off, heights, width=width, bottom=_BASE, **kw))
    (ax.axvline if horizontal else ax.axhline)(rtol, color="#D00000", linestyle="--", linewidth=1.2,
                                               label=f"tolerance rtol = {rtol:g}")
    err = "max relative error" + (" " if horizontal else "\n") + "|a-b| / max(|a|+|b|, atol/rtol)"
    if horizontal:
        ax.set(xscale="log", ylim=(n - 0.5, -0.5), xlabel=err, xlim=(_BASE, 3.0))
        ax.set_yticks(pos, labels)
    else:
        tilt = sum(len(t) + 2 for t in labels) > 12 * ax.figure.get_figwidth()
        ax.set(yscale="log", ylabel=err, ylim=(_BASE, 3.0))
        ax.set_xticks(pos, labels, rotation=30 if tilt else 0, ha="right" if tilt else "center")
    ax.grid(axis="x" if horizontal else "y", which="major", alpha=0.3)
    ax.set_title(title)
    handles, labs = ax.get_legend_handles_labels()
    if clamped:
        _legend_note(handles, labs, f"errors < {ERROR_FLOOR:g} (incl. exact 0) drawn at {ERROR_FLOOR:g}")
    if any(not ok for p in pairs for ok in passed[p]):
        _legend_note(handles, labs, "red outline: above tolerance (FAIL)", edge="#D00000")
    ax.figure.legend(handles, labs, fontsize="small", loc="outside lower center", ncol=3, frameon=False)


def _collect(results: Sequence[CheckResult], worst: bool):
    """Labels, values and verdicts per pair: a row per tensor, or (``worst``) per result."""
    labels, values, passed, groups = [], {p: [] for p in ALL_PAIRS}, {p: [] for p in ALL_PAIRS}, []
    for gi, res in enumerate(results):
        rows = [res.records] if worst else [[r] for r in res.records]
        for recs in rows:
            groups.append(gi)
            if worst:
                n_t = sum(r.kind == "gradient" for r in res.records)
                labels.append(f"{res.name} ({n_t} grad{'s' if n_t != 1 else ''})" if res.passed
                              else f"{res.name}: FAIL {', '.join(res.failing_tensors)}")
            else:
                rec = recs[0]
                directional = any(c.how == "directional" for c in rec.comparisons)
                labels.append(rec.tensor + (" (fwd)" if rec.kind == "forward" else
                                            " (random dirs)" if directional else ""))
            for p in ALL_PAIRS:
                cs = [c for r in recs if (c := r.get(p)) is not None]
                values[p].append(max(c.max_rel_error for c in cs) if cs else None)
                passed[p].append(all(c.passed for c in cs))
    return labels, values, passed, groups


def plot_result(result: CheckResult) -> Figure:
    """Bar chart of one result: max relative error per tensor and pair, log axis, a dashed line at ``rtol``,
    failing bars outlined in red, zero errors clamped to :data:`ERROR_FLOOR`."""
    labels, values, passed, _ = _collect([result], worst=False)
    ax = _new_figure(max(7.5, 0.9 * len(labels) + 2.5), 4.4).add_subplot()
    status = "PASS" if result.passed else "FAIL: " + ", ".join(result.failing_tensors)
    _bars(ax, labels, values, passed, result.rtol, f"{result.name}: gradient check ({status})", horizontal=False)
    return ax.figure


def plot_results(results: Sequence[CheckResult], title: str = "gradcheck zoo") -> Figure:
    """Summary of many results as horizontal bars (as :func:`plot_result`): one row per layer or loss, its
    worst tensor per pair; failing rows name their failing tensors."""
    labels, values, passed, _ = _collect(results, worst=True)
    ax = _new_figure(9.0, max(3.0, 0.34 * len(labels) + 1.8)).add_subplot()
    n_ok = sum(r.passed for r in results)
    _bars(ax, labels, values, passed, results[0].rtol if results else 1e-6,
          f"{title}: {n_ok}/{len(results)} passed (worst tensor per row)", horizontal=True,
          groups=list(range(len(labels))))
    return ax.figure


def plot_training(steps: np.ndarray, loss_manual: np.ndarray, loss_tape: np.ndarray,
                  rel_loss_diff: np.ndarray, rel_grad_diff: np.ndarray, *, steps_per_epoch: int,
                  tolerance: float, model_name: str = "MLP") -> Figure:
    """Loss curves of manual and tape training (top), their relative differences (bottom, log axis).

    All arrays have shape ``(n,)``: steps, losses, their relative difference and the step's largest
    gradient relative error; ``steps_per_epoch`` gives the epoch axis; ``tolerance`` is drawn dashed.
    """
    fig = _new_figure(9.0, 6.0)
    ax1, ax2 = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    ax1.plot(steps, loss_manual, color="#0072B2", linewidth=1.4, alpha=0.45, label="manualprop, per step")
    ax1.plot(steps, loss_tape, color="#E69F00", linewidth=1.0, alpha=0.7, linestyle=(0, (4, 3)),
             label="autoprop (tape), per step")
    n_ep = len(steps) // steps_per_epoch
    if n_ep:
        ends = steps_per_epoch * np.arange(1, n_ep + 1)
        mean_m, mean_t = (np.asarray(v)[: n_ep * steps_per_epoch].reshape(n_ep, -1).mean(axis=1)
                          for v in (loss_manual, loss_tape))
        ax1.plot(ends, mean_m, "o-", color="#0072B2", markersize=7, linewidth=1.8, label="manualprop, epoch mean")
        ax1.plot(ends, mean_t, "x", color="#E69F00", markersize=7, markeredgewidth=2, label="autoprop, epoch mean")
    ax1.set(yscale="log", ylabel="minibatch cross-entropy",
            title=f"Training the same {model_name} twice from identical weights: manual vs tape gradients")
    ax1.legend(loc="upper right", ncol=2, fontsize="small")
    ax1.grid(alpha=0.3)
    ax1.secondary_xaxis("top", functions=(lambda s: s / steps_per_epoch, lambda e: e * steps_per_epoch)
                        ).set_xlabel("epoch")
    clamped = bool(np.any(rel_loss_diff < ERROR_FLOOR) or np.any(rel_grad_diff < ERROR_FLOOR))
    for v, col, alpha, label in ((rel_loss_diff, "#009E73", 1.0, "loss: |Lm-Lt| / (|Lm|+|Lt|)"),
                                 (rel_grad_diff, "#CC79A7", 0.8, "gradients: max relative error")):
        ax2.plot(steps, np.maximum(v, ERROR_FLOOR), color=col, linewidth=1.0, alpha=alpha, label=label)
    ax2.axhline(tolerance, color="#D00000", linestyle="--", linewidth=1.2, label=f"requirement {tolerance:g}")
    ax2.set(yscale="log", ylim=(ERROR_FLOOR / 3, max(1.0, tolerance * 10)), xlabel="step",
            ylabel="relative difference")
    ax2.grid(alpha=0.3)
    handles, labs = ax2.get_legend_handles_labels()
    if clamped:
        _legend_note(handles, labs, f"values < {ERROR_FLOOR:g} (incl. exact 0) drawn at {ERROR_FLOOR:g}")
    ax2.legend(handles, labs, fontsize="small", loc="upper left", ncol=2)
    return fig


_CELL_TEXT, _CELL_PLAIN = 0.42, 0.24  # side of a heatmap cell (inches), value printed or not
_MAX_GRID = 8  # at most this many rows and columns of panels are drawn


def _grid(a: np.ndarray) -> np.ndarray:
    """``a`` as a grid ``(rows, columns, H, W)`` of 2-D panels (more axes merge into the first)."""
    a = np.asarray(a, dtype=np.float64)
    return a.reshape((1, 1) + (1,) * (2 - a.ndim) + a.shape if a.ndim <= 2 else
                     (a.shape[0], 1) + a.shape[1:] if a.ndim == 3 else (-1,) + a.shape[-3:])


def _heatmaps(a, b, names: tuple[str, str], title: str, kinks=(), labels=("column", "row"), unit="value") -> Figure:
    """``a``, ``b`` (one colour scale) and ``a - b`` side by side, each a grid of panels (:func:`_grid`),
    values printed when at most 64 fit in 18 inches; ``kinks`` (indices into ``a``) outlined; ``names`` and ``title``
    drawn as written (:func:`_plain`)."""
    from matplotlib.patches import Rectangle
    names, title = (_plain(names[0]), _plain(names[1])), _plain(title)
    from matplotlib.ticker import MaxNLocator
    shape = np.shape(a)
    m, n = _grid(a), _grid(b)
    d = m - n
    vmax = float(np.nanmax(np.abs(np.concatenate([m.ravel(), n.ravel()])))) or 1.0
    dmax = float(np.nanmax(np.abs(d))) if np.isfinite(d).any() else 0.0
    full = m.shape[:2]
    m, n, d = (x[:_MAX_GRID, :_MAX_GRID] for x in (m, n, d))  # the colour scales above are of the whole tensor
    R, C, H, W = m.shape
    one = R == C == 1
    text = m.size <= 64 and (one or 3 * C * (W * _CELL_TEXT + 0.25) + 3 <= 18)
    if one:
        fig = _new_figure(min(16.0, max(11.0, 1.1 * W + 6)), max(3.2, min(8.0, 1.8 + 0.35 * H)))
    else:
        cell = _CELL_TEXT if text else min(_CELL_PLAIN, 14.0 / (3 * C * W))
        fig = _new_figure(max(9.0, min(18.0, 3 * (C * (W * cell + 0.25) + 1.4))),
                          max(3.2, min(14.0, R * (H * cell + 0.35) + 1.3)))
    at = [np.unravel_index(int(np.ravel_multi_index(ix, shape)) if shape else 0, full + (H, W)) for ix in kinks]
    blocks = ((m, names[0], "RdBu_r", vmax, unit), (n, names[1], "RdBu_r", vmax, unit),
              (d, f"{names[0].split()[0]} - {names[1].split()[0]} (max |diff| {dmax:.2g})", "PuOr_r", dmax or 1.0,
               "difference"))
    for sub, (data, name, cmap, top, label) in zip(fig.subfigures(1, 3), blocks):
        axes = sub.subplots(R, C, squeeze=False)
        for (r, q), ax in np.ndenumerate(axes):
            im = ax.imshow(data[r, q], cmap=cmap, vmin=-top, vmax=top, interpolation="nearest",
                           aspect="auto" if one else None)
            if one:
                ax.set(xlabel=labels[0], ylabel=labels[1])
                ax.set_title(name, fontsize="medium")
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
                ax.yaxis.set_major_locator(MaxNLocator(integer=True))
                if H == 1:
                    ax.set_yticks([0])
            else:
                ax.set(xticks=[], yticks=[])
                ax.set_title(f"[{r}, {q}]" if len(shape) != 3 else f"[{r}]", fontsize="x-small", pad=2)
            for (i, j), v in np.ndenumerate(data[r, q]) if text else ():
                if np.isfinite(v):
                    ax.text(j, i, f"{v:.2g}", ha="center", va="center", fontsize="x-small",
                            color="white" if abs(v) > 0.6 * top else "black")
            for i, j in [(i, j) for kr, kq, i, j in at if (kr, kq) == (r, q)]:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.5))
        if not one:
            sub.suptitle(name, fontsize="medium")
        sub.colorbar(im, ax=axes, shrink=0.85, label=label)
    k = len(shape)  # tester21s L3: a 3-D tensor's panels [i] are indexed by axis 0 ("rows: axis 0" said otherwise)
    inside = f"in each panel, rows: axis {k - 2}, columns: axis {k - 1}"
    words = ("" if k <= 2 else f"panels [i]: axis 0; {inside}" if k == 3 else
             f"panels [i, j]: axes 0 and 1; {inside}" if k == 4 else
             f"panels [i, j]: axes 0-{k - 4} merged and axis {k - 3}; {inside}")
    out = (f" (shape {tuple(shape)}: {words})" if words else "") + (
        f"; {len(at)} element(s) at a kink outlined" if at else "")
    if full != (R, C):
        out += f"; the first {R} x {C} of {full[0]} x {full[1]} panels shown"
    fig.suptitle(title + out)
    return fig


def plot_gradient_heatmaps(result: CheckResult, tensor: str | None = None) -> Figure:
    """Manual, numerical and their difference for one gradient, side by side as heatmaps (:func:`_heatmaps`).

    3-D and 4-D gradients as grids of ``H x W`` panels. ``tensor`` (e.g. ``"dW"``) defaults to the first
    failing gradient, else the first 2-D one. KeyError when there is no manual and numerical gradient for it.
    """
    man, num = result.gradients.get("manual", {}), result.gradients.get("numerical", {})
    if tensor is None:
        cands = [r.tensor for r in result.records if r.kind == "gradient" and r.tensor in num]
        failing = [t for t in result.failing_tensors if t in num]
        tensor = (failing or [t for t in cands if np.ndim(num[t]) >= 2] or cands or [None])[0]
    if tensor is None or tensor not in man or tensor not in num:
        raise KeyError(f"no manual and numerical gradient for {tensor!r} in {result.name} "
                       f"(numerical ones: {sorted(num)}; fast mode keeps only failing tensors)")
    rec = next((r for r in result.records if r.tensor == tensor), None)
    c = rec.get("manual-vs-numerical") if rec is not None else None
    drawn = "" if np.ndim(man[tensor]) != 1 else f" (shape {np.shape(man[tensor])} drawn as 1x{np.size(man[tensor])})"
    return _heatmaps(man[tensor], num[tensor], (f"manual {tensor}", f"numerical {tensor}"),
                     f"{result.name} {tensor}: {'ok' if rec is None or rec.passed else 'FAIL'}{drawn}",
                     kinks=c.kinks if c is not None else ())


def plot_step_error(f=np.exp, x0: float = 1.0, df=None, *, hs=None, dtypes=(np.float64, np.float32)) -> Figure:
    r"""Error of the central difference against the step ``h`` (the V curve), per dtype, on log-log axes.

    With truncation :math:`h^2 |f^{(3)}(x_0)| / 6`, round-off :math:`u |f(x_0)| / h` and the optimal step
    :math:`(3 u |f| / |f^{(3)}|)^{1/3}` (Nocedal & Wright, sec. 8.1); estimates exactly 0 are marked at
    the top. ``df``: the exact derivative (default: a float64 five-point estimate, ``np.exp`` for ``np.exp``).
    """
    from .numerical import difference_quotient, step_error_curve
    hs = np.logspace(-16, 0, 161) if hs is None else np.asarray(hs, dtype=np.float64)
    h = 1e-3
    if df is None and f is np.exp:
        true = f3 = float(np.exp(x0))
    elif df is None:
        true = difference_quotient(lambda t: f(x0 + t), 2 * h, "richardson")  # the five-point stencil
        f3 = float((f(x0 + 2 * h) - 2 * f(x0 + h) + 2 * f(x0 - h) - f(x0 - 2 * h)) / (2 * h**3))
    else:
        true = float(df(x0))
        f3 = float((df(x0 + h) - 2 * df(x0) + df(x0 - h)) / h**2)
    fx = abs(float(f(x0)))
    ax, top = _new_figure(9.0, 5.6).add_subplot(), 10.0
    colors = {np.dtype(np.float64): "#0072B2", np.dtype(np.float32): "#D55E00", np.dtype(np.float16): "#009E73"}
    ax.loglog(hs, hs**2 * abs(f3) / 6, ":", color="#333333", linewidth=1.4,
              label="theory: truncation h^2 |f'''(x0)| / 6 (slope 2, any dtype)")
    for j, dt in enumerate(dtypes):
        dt = np.dtype(dt)
        est = step_error_curve(f, x0, hs, dtype=dt)
        zero, col, u = est == 0, colors.get(dt, "#555555"), float(np.finfo(dt).eps)
        ax.loglog(hs[~zero], np.maximum(np.abs(est - true)[~zero], 1e-18), "o-", markersize=2.5, linewidth=1.2, color=col,
                  label=f"{dt.name}: measured error")
        if zero.any():
            ax.plot(hs[zero], np.full(zero.sum(), top / 4 ** j), "v", color=col, markersize=4,
                    label=f"{dt.name}: estimate exactly 0 (x0 + h == x0)")
        ax.loglog(hs, u * fx / hs, "--", color=col, linewidth=1.2,
                  label=f"theory: round-off eps |f(x0)| / h, eps = {u:.1e} = 2u (slope -1)")
        h_opt = (3 * u * fx / max(abs(f3), 1e-300)) ** (1 / 3)
        ax.axvline(h_opt, color=col, alpha=0.3, linewidth=4)
        # below the curves, beside its line (nothing is drawn there): not over the legend or a line
        ax.annotate(f"{dt.name}: optimal h = {h_opt:.1e}", (h_opt, 1e-15 if j == 0 else 1e-16),
                    color=col, fontsize="small", xytext=(6 if j == 0 else -6, 0), textcoords="offset points",
                    ha="left" if j == 0 else "right",
                    va="center", bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": col,
                                       "alpha": 0.9})
    ax.set(ylim=(1e-17, top * 3), xlim=(hs.min(), hs.max()), xlabel="step h",
           ylabel="absolute error of the estimate of f'(x0)",
           title=f"Central differences of {getattr(f, '__name__', 'f')} at x0 = {x0:g}: error against step")
    ax.grid(alpha=0.3, which="major")
    ax.legend(fontsize="small", loc="lower left")
    return ax.figure


def tape_jacobian(forward_tape, X: np.ndarray) -> tuple[np.ndarray, str]:
    """Jacobian ``dY/dX`` of ``forward_tape`` (on autoprop Tensors) from the tape: ``(J (Y.size, X.size), how)``."""
    import autoprop as ap
    x = ap.constant(np.array(X, dtype=np.float64))
    with ap.GradientTape() as tape:
        tape.watch(x)
        Y = forward_tape(x)
    J = np.asarray(tape.jacobian(Y, x), dtype=np.float64)
    return J.reshape(-1, np.size(X)), "GradientTape.jacobian"


def plot_jacobian(forward, forward_tape, X: np.ndarray, *, title: str = "layer",
                  tape: tuple[np.ndarray, str] | None = None, numerical: np.ndarray | None = None,
                  manual: np.ndarray | None = None) -> Figure:
    """A Jacobian dY/dX beside the numerical one, and their difference, as heatmaps, for a small layer.

    The first is ``manual`` when given (the student's backward: row ``i`` is ``backward(e_i)``, see
    :func:`gradcheck.check_command.manual_jacobian`; newuser27: the tape's was drawn, right where the student's
    backward was wrong), else the tape's: ``tape`` (``(J, how)``) or from ``forward_tape`` (autoprop Tensors). The
    numerical one is ``numerical`` or from ``forward`` (numpy). Rows are ``Y``'s elements, columns ``X``'s (flattened).
    """
    from .numerical import numerical_jacobian
    if manual is not None:
        Ja, name = np.asarray(manual, dtype=np.float64), "manual (your backward, row i: backward(e_i))"
    else:
        Ja, how = tape_jacobian(forward_tape, X) if tape is None else tape
        name = f"tape ({how})"
    Jn = numerical_jacobian(forward, X) if numerical is None else numerical
    return _heatmaps(Ja, Jn, (name, "numerical (central differences)"),
                     f"{title}: Jacobian dY/dX, {Ja.shape[0]} x {Ja.shape[1]}", unit="dY_i / dX_j",
                     labels=(f"input element j (X {tuple(np.shape(X))} flattened)", "output element i (Y flattened)"))


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = 120) -> str:
    """Save ``fig`` as PNG, creating the directory; return the path written (OSError if it cannot be). ``path`` is the
    caller's: a file name made of checked code's strings goes through :func:`safe_file_name` first."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    engine, old_dpi = fig.get_layout_engine(), fig.get_dpi()
    if engine is None:
        fig.savefig(path, dpi=dpi)
        return path
    # savefig with a layout engine draws the whole figure twice: once (rendering nothing) to run the layout,
    # once for the pixels. Running the layout alone at the PNG's dpi, then saving with the layout fixed, places
    # every artist where savefig did (the same pixels) without the discarded draw.
    fig.set_dpi(dpi)
    try:
        engine.execute(fig)
        with rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
            fig.set_layout_engine(None)  # None, not "none": savefig pre-draws for any engine, a placeholder too
        fig.savefig(path, dpi=dpi)
    finally:
        fig.set_layout_engine(engine)
        fig.set_dpi(old_dpi)
    return path


def safe_file_name(name: str, taken: set[str] | None = None, suffix: str = ".png") -> str:
    """One plain file name for ``name`` (a figure's name built from a class or tensor name that checked code chose:
    redteam28 F1, a parameter key ``"W/../../x"`` wrote outside ``--plots``): every run of characters other than ASCII
    letters, digits, ``_``, ``.`` and ``-`` made one ``-``, every run of dots one dot, leading and trailing dots and
    dashes dropped, at most 120 characters before ``suffix`` (``"figure"`` when nothing is left), so never a separator,
    a ``..`` or a leading dot; with ``taken`` (the names given so far, updated), ``-2``, ``-3``... added to one that
    collides.

    >>> safe_file_name("Linear-W/../../../tmp/x-heatmap.png")
    'Linear-W-.-.-.-tmp-x-heatmap.png'
    >>> taken = set(); [safe_file_name(n, taken) for n in ("a/b.png", "a:b.png", "..png")]
    ['a-b.png', 'a-b-2.png', 'figure.png']
    """
    stem = name[: -len(suffix)] if suffix and name.endswith(suffix) else name
    stem = re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9_.-]+", "-", stem)).strip(".-")
    stem = stem[:120].strip(".-") or "figure"
    out, i = stem + suffix, 2
    while taken is not None and out in taken:
        out, i = f"{stem}-{i}{suffix}", i + 1
    if taken is not None:
        taken.add(out)
    return out
