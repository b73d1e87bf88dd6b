"""Draw what a GradientTape recorded: :func:`draw_tape`.

Pure matplotlib (no graphviz needed): the recorded graph is laid out in columns by
depth, left (watched sources) to right (the last operations). Source:
``lessons/10-gradient-tape.md``.
"""

from __future__ import annotations

import numpy as np

from .core.tape import NotSaved
from .core.tensor import Tensor, Variable

__all__ = ["draw_tape"]


def _wrap_name(name, width=16):
    """Break a long primitive name at underscores so it fits its box."""
    lines, line = [], ""
    for part in name.split("_"):
        piece = part if not line else "_" + part
        if line and len(line) + len(piece) > width:
            lines.append(line + "_")
            line = part
        else:
            line += piece
    return "\n".join(lines + [line])


def _label_source(t):
    if isinstance(t, Variable):
        return f"{t.name}\n{t.shape}"
    return f"watched\n{t.shape}"


def _sizes(items, ncol, nrow, heading):
    """A box's width and the figure's size in inches: each column as wide as the longest label
    needs (9-point monospace: 0.075 in a character) and the figure at least as wide as its
    title (11 points: about 0.09 in a character), no wider: a notebook shrinks a wide figure,
    and its labels with it."""
    widest = max(len(line) for _k, label, _kind, _d in items for line in label.splitlines())
    box_in = 0.075 * widest + 0.3
    fig_w = min(max(0.6 + (box_in + 0.45) * ncol, 0.09 * len(heading) + 0.5), 40)
    return box_in, (fig_w, min(1.2 + 0.85 * nrow, 30))


def draw_tape(tape, path=None, title=None, max_ops=60):
    """Draw the recorded graph of ``tape`` with matplotlib and return the Figure.

    Green boxes are the tensors the tape watches (sources); blue boxes are recorded
    operations, labelled with their position on the tape, their name and their output
    shape; grey boxes are constants (untracked inputs, which get no VJP). Arrows follow
    the forward pass; the backward walk runs them in reverse.

    Parameters
    ----------
    tape : GradientTape
        A tape with records (a non-persistent tape after ``gradient`` has none).
    path : str or path-like, optional
        Also save the figure there (PNG, SVG, PDF by extension).
    title : str, optional
    max_ops : int, default 60
        Only the first ``max_ops`` operations are drawn (a note says how many more).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If the tape holds no records.
    """
    import matplotlib

    if path is not None:
        matplotlib.use(matplotlib.get_backend())
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    nodes = list(tape._nodes)
    if not nodes:
        raise ValueError(
            "draw_tape: the tape holds no records (nothing was recorded, or a "
            "non-persistent tape released them in gradient(); use persistent=True)."
        )
    more = len(nodes) - max_ops
    nodes = nodes[:max_ops]
    items, edges = _graph(nodes)
    columns, y = _layout(items, edges)
    ncol, nrow, pos_of = max(columns) + 1, max(len(v) for v in columns.values()), {}
    heading = title or f"GradientTape: {len(tape._nodes)} recorded ops (forward pass, left to right)"
    if more > 0:
        heading += f" - first {max_ops} shown, {more} more"
    box_in, size = _sizes(items, ncol, nrow, heading)
    fig, ax = plt.subplots(figsize=size)
    for c, col in columns.items():
        for key, _l, _k in col:
            pos_of[key] = (c * 2.3, y[key])
    colors = {"src": ("#d9f2d9", "#2e7d32"), "op": ("#dbe8fb", "#1f4e9c"),
              "const": ("#eeeeee", "#888888")}
    w, h = 2.3 * box_in / (box_in + 0.45), 0.62
    for a, b in edges:
        (x0, y0), (x1, y1) = pos_of[a], pos_of[b]
        ax.annotate("", xy=(x1 - w / 2, y1), xytext=(x0 + w / 2, y0),
                    arrowprops=dict(arrowstyle="-|>", color="#555555", lw=1.1,
                                    shrinkA=2, shrinkB=2, connectionstyle="arc3,rad=0.05"))
    for key, label, kind, _d in items:
        x, y = pos_of[key]
        face, edge = colors[kind]
        ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h,
                                    boxstyle="round,pad=0.02,rounding_size=0.08",
                                    facecolor=face, edgecolor=edge, lw=1.4))
        ax.text(x, y, label, ha="center", va="center", fontsize=9,
                color="#222222" if kind != "const" else "#555555", family="monospace")
    ax.set_xlim(-1.3, (ncol - 1) * 2.3 + 1.3)
    ax.set_ylim(-(nrow / 2.0) - 0.3, nrow / 2.0 + 0.3)
    ax.set_axis_off()
    ax.set_title(heading, fontsize=11)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


def _graph(nodes):
    """:func:`draw_tape`'s boxes and arrows: ``items`` ``(key, label, kind)`` (``("src", tensor key)``,
    ``("op", index)``, ``("const", op index, arg index)``) and ``edges`` ``(from key, to key)``, each box's
    column its depth (sources and constants one column left of their first consumer)."""
    # graph items: ("src", tensor) / ("op", index) / ("const", (op index, arg index))
    depth, items, edges = {}, [], []
    out_ids = {ko: k for k, n in enumerate(nodes) for ko in n.out_keys()}  # Tensor._key of each output -> op
    for k, node in enumerate(nodes):
        d = 0
        for i, a in enumerate(node.args):
            key = None
            if i in node.parents:
                tk = node.keys[node.parents.index(i)]
                if tk in out_ids and out_ids[tk] < k:
                    key = ("op", out_ids[tk])
                else:
                    key = ("src", tk)
                    if key not in depth:
                        depth[key] = 0
                        items.append((key, _label_source(a), "src"))
            elif isinstance(a, (Tensor, np.ndarray, NotSaved)) and np.ndim(a) > 0 or isinstance(a, Tensor):
                key = ("const", k, i)
                depth[key] = 0
                items.append((key, f"const\n{tuple(np.shape(a))}", "const"))
            if key is not None:
                edges.append((key, ("op", k)))
                d = max(d, depth[key] + 1)
        depth[("op", k)] = max(d, 1)
        items.append((("op", k), f"#{k} {_wrap_name(node.prim.name)}\n{' '.join(str(o.shape) for o in node.outs())}", "op"))
    # sources and constants sit one column left of their first consumer
    consumers: dict = {}
    for a, b in edges:
        consumers.setdefault(a, []).append(b)
    for key, _label, kind in items:
        if kind in ("src", "const"):
            depth[key] = min(depth[b] for b in consumers[key]) - 1
    return [(key, label, kind, depth[key]) for key, label, kind in items], edges


def _layout(items, edges):
    """:func:`draw_tape`'s ``columns`` ``{depth: [(key, label, kind)]}`` and the height ``y`` of each box: each
    column ordered by the mean height of its neighbours (barycentre sweeps), so that arrows stay short and
    rarely cross a box."""
    columns: dict[int, list] = {}
    for key, label, kind, d in items:
        columns.setdefault(d, []).append((key, label, kind))
    neighbours: dict = {}
    for a, b in edges:
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)
    y = {}
    for col in columns.values():
        for r, (key, _l, _k) in enumerate(col):
            y[key] = (len(col) - 1) / 2.0 - r
    for _sweep in range(6):
        for c in sorted(columns, reverse=bool(_sweep % 2)):
            col = columns[c]
            bary = {key: np.mean([y[nb] for nb in neighbours.get(key, [key])]) for key, _l, _k in col}
            col.sort(key=lambda it: -bary[it[0]])
            n = len(col)
            for r, (key, _l, _k) in enumerate(col):
                y[key] = (n - 1) / 2.0 - r
    return columns, y
