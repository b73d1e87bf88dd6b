"""Notebook 06's first figure (newuser33 LOW 2, left by session 33): in its right panel the "ap.where version" line
was drawn under the loop's dots, which hid it (thin gray over filled dots of every grid point, the same zorder).
Now the dots are hollow rings at every 4th point, below the line, which is drawn above them: both are visible.

The notebook's code cells run here up to that figure (as nbmake runs them, without the magics)."""

import json
from pathlib import Path

import matplotlib
import numpy as np
import pytest

NB = Path(__file__).resolve().parents[1] / "notebooks" / "06-where-the-tape-cannot-help.ipynb"


@pytest.fixture(scope="module")
def panel():
    matplotlib.use("Agg")
    ns = {}
    for c in json.loads(NB.read_text(encoding="utf-8"))["cells"]:
        if c["cell_type"] != "code":
            continue
        src = "".join(c["source"])
        exec(compile("\n".join(x for x in src.splitlines() if not x.startswith("%")), str(NB), "exec"), ns)
        if "ap.where version" in src:
            return ns["fig"], ns["fig"].axes[1], ns["grid"]
    pytest.fail("no cell draws the 'ap.where version' line")


def test_the_where_line_is_drawn_above_the_dots(panel):
    fig, ax, grid = panel
    where = [ln for ln in ax.get_lines() if ln.get_linestyle() == "-" and ln.get_marker() in ("None", None, "")
             and np.asarray(ln.get_xdata()).size > 2]
    dots = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    assert len(where) == 2 and len(dots) == 2, (where, dots)
    assert any(ln.get_label().startswith("ap.where version") for ln in where)
    assert min(ln.get_zorder() for ln in where) > max(d.get_zorder() for d in dots)


def test_the_dots_leave_the_line_visible_between_and_through_them(panel):
    """Hollow rings at a fraction of the grid: the line shows through each ring and between them; every branch's
    point still drawn at x = 1, where the tape reports the right branch's slope."""
    fig, ax, grid = panel
    dots = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    for d in dots:
        assert d.get_markerfacecolor() == "none", d.get_markerfacecolor()
    shown = np.concatenate([np.asarray(d.get_xdata()) for d in dots])
    assert shown.size <= grid.size // 3, shown.size
    assert 1.0 in shown


def test_the_line_shows_in_the_rendered_panel(panel):
    """Rendered: the pixels the line changes (the panel with it against without it) are many, and black ones, its
    colour, appear along it (a line hidden under filled dots changed few pixels, and not to its colour)."""
    fig, ax, grid = panel
    where = [ln for ln in ax.get_lines() if ln.get_zorder() == max(x.get_zorder() for x in ax.get_lines())]

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # the notebook's Figure() has no canvas of its own

    def pixels():
        canvas.draw()
        return np.asarray(canvas.buffer_rgba())[..., :3].astype(int)

    with_line = pixels()
    for ln in where:
        ln.set_visible(False)
    try:
        without = pixels()
    finally:
        for ln in where:
            ln.set_visible(True)
    changed = np.any(with_line != without, axis=-1)
    dark = changed & np.all(with_line < 80, axis=-1)
    assert changed.sum() > 300 and dark.sum() > 200, (changed.sum(), dark.sum())
