"""newuser22: scores.png's median line ran through the bar label it crossed ("4" above the bar at 22.7): the
labels are drawn on a white box above the mean and median lines."""

from types import SimpleNamespace

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgba

from gradcheck.grading.runner import plot_histogram


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
