"""newuser22: scores.png's median line ran through the bar label it crossed ("4" above the bar at 22.7): the
labels are drawn on a white box above the mean and median lines."""

from types import SimpleNamespace

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgba

from gradcheck.grading.runner import _score_bars, plot_histogram


def test_bar_labels_sit_on_a_white_box_above_the_mean_and_median_lines(tmp_path, monkeypatch):
    figs = []
    monkeypatch.setattr(plt, "close", figs.append)  # keep the figure to look at it
    results = [SimpleNamespace(score=s, max_score=28) for s in (20, 20, 21, 22.7, 22.7, 22.7, 22.7, 26)]
    assert plot_histogram(tmp_path / "scores.png", results) == str(tmp_path / "scores.png")
    ax = figs[0].axes[0]
    labels = [t for t in ax.texts if t.get_text()]
    lines = [ln for ln in ax.lines if ln.get_label().startswith(("mean", "median"))]
    assert sorted(t.get_text() for t in labels) == ["1", "1", "2", "4"] and len(lines) == 2
    for t in labels:
        box = t.get_bbox_patch()
        assert box is not None and box.get_facecolor() == to_rgba("white"), t.get_text()
        assert all(t.get_zorder() > ln.get_zorder() for ln in lines)
    monkeypatch.undo()
    plt.close(figs[0])


def _bars(ax):
    """``{(left edge, colour): height}`` of the histogram's drawn bars, the gap between bars taken off."""
    return {(round(r.get_x() - 0.05 * r.get_width() / 0.9, 6), r.get_facecolor()): r.get_height()
            for r in ax.patches if r.get_height()}


def test_a_score_is_never_rounded_up_into_full_marks(tmp_path, monkeypatch):
    """newuser26: 29.5 of 30 was drawn in the 30 bar ("rounded to the nearest point"), as if full marks; 22.67 in
    the 23 bar. A bar from k to k+1 counts k <= score < k+1, full marks have their own bar."""
    figs = []
    monkeypatch.setattr(plt, "close", figs.append)
    scores = (30, 30, 29.5, 29.5, 29.5, 29, 28, 22.67, 22.67, 0)
    plot_histogram(tmp_path / "scores.png", [SimpleNamespace(score=s, max_score=30) for s in scores])
    ax = figs[0].axes[0]
    blue, orange = to_rgba("#4C72B0"), to_rgba("#DD8452")
    assert _bars(ax) == {(29.0, blue): 4, (28.0, blue): 1, (22.0, blue): 2, (0.0, blue): 1, (30.0, orange): 2}
    assert "k <= score < k+1" in ax.get_xlabel() and "rounded" not in ax.get_xlabel()
    assert {t.get_text() for t in ax.get_legend().get_texts()} >= {"full marks (30)", "scores below 30"}
    monkeypatch.undo()
    plt.close(figs[0])


def test_score_bars_edges_for_a_fractional_maximum_and_negative_scores():
    """A maximum of 22.5 ends the last bar at 22.5 (22.4 in it, 22.5 full marks); a negative score gets its bar."""
    edges, counts, full = _score_bars([22.4, 22.5, 22.0, -1.5, 0.0], 22.5)
    assert edges[0] == -2 and edges[-1] == 22.5 and edges[-2] == 22
    assert counts[list(edges).index(22.0)] == 2 and counts[0] == 1 and counts[2] == 1 and counts.sum() == 4
    assert full == 1


def test_the_legend_covers_no_bar_and_no_label_and_stays_in_the_figure(tmp_path, monkeypatch):
    """newuser33 LOW 1: the legend at the upper left sat on the label "6" of the bar of zero scores. It is drawn
    beside the axes now: its box meets no bar and no bar label, and it lies inside the saved figure."""
    figs = []
    monkeypatch.setattr(plt, "close", figs.append)
    scores = (0,) * 6 + (28, 28, 28, 22.67, 22.67, 14, 14, 16, 26, 26, 28, 28, 28)
    plot_histogram(tmp_path / "scores.png", [SimpleNamespace(score=s, max_score=28) for s in scores])
    fig = figs[0]
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    drawn = [t for t in ax.texts if t.get_text()] + [r for r in ax.patches if r.get_height()]
    assert drawn and not any(legend.overlaps(a.get_window_extent(renderer)) for a in drawn)
    figure = fig.bbox
    assert figure.x0 <= legend.x0 and legend.x1 <= figure.x1 and figure.y0 <= legend.y0 and legend.y1 <= figure.y1
    monkeypatch.undo()
    plt.close(fig)
