"""plot_gradient_heatmaps keeps the spatial layout of 3-D and 4-D gradients (issue 10, section 3):
a grid of H x W panels, rows = first axis, columns = second; values printed only in small panels."""

import numpy as np
import pytest
from student_layers import StudentLinear

import manualprop as mp
from gradcheck import check_layer
from gradcheck.plots import plot_gradient_heatmaps, save_figure


class DoubledDX(mp.Conv2D):
    """dX twice too large: the same picture, darker."""

    def backward(self, dY):
        return 2 * super().backward(dY)


class FlippedDW(mp.Conv2D):
    """dW of the kernel rotated by 180 degrees: each panel rotated."""

    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["W"] = self.grads["W"][..., ::-1, ::-1].copy()
        return dX


class TransposedDW(StudentLinear):
    def dW(self, dY):
        return super().dW(dY).T


class Scale3:
    """Y = X * [0, 1, 2] on the last axis of (N, T, 3); the backward halves row t = 2."""

    params, grads = {}, {}

    def forward(self, X, training=False):
        return X * np.arange(X.shape[-1])

    def backward(self, dY):
        return dY * np.arange(dY.shape[-1]) * np.where(np.arange(dY.shape[1])[:, None] == 2, 0.5, 1.0)


def _panels(fig):
    """Image axes (colour bars hold no image), in drawing order: manual, numerical, difference."""
    return [ax for ax in fig.axes if ax.images]


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def test_4d_dx_is_a_grid_of_spatial_panels_without_numbers(tmp_path):
    res = check_layer(DoubledDX(2, 3, 3, padding=1, rng=0), (2, 2, 5, 5), twin=None, mode="full")
    fig = plot_gradient_heatmaps(res, "dX")
    panels = _panels(fig)
    assert len(panels) == 3 * 2 * 2  # (manual, numerical, difference) x N x C
    assert all(ax.images[0].get_array().shape == (5, 5) for ax in panels)
    assert all(_texts(ax) == [] for ax in panels)  # 5 x 5 panels: colour bars only
    assert len(fig.axes) - len(panels) == 3  # one colour bar per block
    man, num = res.gradients["manual"]["dX"], res.gradients["numerical"]["dX"]
    titles = [ax.get_title() for ax in panels[:4]]
    assert titles == ["[0, 0]", "[0, 1]", "[1, 0]", "[1, 1]"]
    for k, (r, q) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):  # panel [r, q] is dX[r, q], as laid out
        np.testing.assert_array_equal(panels[k].images[0].get_array(), man[r, q])
        np.testing.assert_array_equal(panels[4 + k].images[0].get_array(), num[r, q])
    assert [sf._suptitle.get_text() for sf in fig.subfigs][:2] == ["manual dX", "numerical dX"]
    assert "(2, 2, 5, 5)" in fig._suptitle.get_text() and "FAIL" in fig._suptitle.get_text()
    assert save_figure(fig, tmp_path / "dx.png") and (tmp_path / "dx.png").stat().st_size > 20_000
    # plots48: save_figure lays out once itself (no savefig pre-draw): matplotlib's own savefig's pixels (of a fresh
    # twin: constrained layout run again on a laid-out figure moves it a little), and the figure keeps its
    # constrained layout and dpi (a notebook shows it after)
    assert type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine" and fig.get_dpi() == 100
    plot_gradient_heatmaps(res, "dX").savefig(tmp_path / "ref.png", dpi=120)
    from matplotlib.image import imread
    np.testing.assert_array_equal(imread(tmp_path / "dx.png"), imread(tmp_path / "ref.png"))


def test_4d_dw_small_kernels_print_their_values_and_show_the_flip():
    res = check_layer(FlippedDW(2, 3, 3, padding=1, rng=0), (2, 2, 5, 5), twin=None, mode="full")
    fig = plot_gradient_heatmaps(res, "dW")
    panels = _panels(fig)
    assert len(panels) == 3 * 3 * 2 and all(ax.images[0].get_array().shape == (3, 3) for ax in panels)
    assert all(len(_texts(ax)) == 9 for ax in panels)  # 3 x 3 panels: one number per cell
    man, num = res.gradients["manual"]["dW"], res.gradients["numerical"]["dW"]
    # the planted bug is visible panel by panel: manual = numerical rotated by 180 degrees
    for k in range(6):
        np.testing.assert_allclose(panels[k].images[0].get_array()[::-1, ::-1],
                                   panels[6 + k].images[0].get_array(), atol=1e-6)
    assert _texts(panels[0])[0] == f"{man[0, 0, 0, 0]:.2g}" and _texts(panels[6])[0] == f"{num[0, 0, 0, 0]:.2g}"


def test_3d_is_one_column_of_panels():
    res = check_layer(Scale3(), (2, 4, 3), twin=None, mode="full")
    fig = plot_gradient_heatmaps(res, "dX")
    panels = _panels(fig)
    assert len(panels) == 3 * 2 and all(ax.images[0].get_array().shape == (4, 3) for ax in panels)
    assert [ax.get_title() for ax in panels[:2]] == ["[0]", "[1]"]
    diff = panels[4].images[0].get_array()  # difference, sample 0: only row t = 2 is off
    assert np.abs(diff[2, 1:]).min() > 0.01 and np.abs(np.delete(diff, 2, axis=0)).max() < 1e-6
    # tester21s L3: the panels [i] are axis 0, rows and columns inside a panel axes 1 and 2 (was "rows: axis 0")
    assert "(shape (2, 4, 3): panels [i]: axis 0; in each panel, rows: axis 1, columns: axis 2)" in \
        fig._suptitle.get_text()


def test_2d_is_unchanged_three_panels():
    res = check_layer(TransposedDW(), (6, 4), twin=None)
    fig = plot_gradient_heatmaps(res)
    panels = _panels(fig)
    assert len(panels) == 3 and all(ax.images[0].get_array().shape == (4, 4) for ax in panels)
    assert [ax.get_title() for ax in panels[:2]] == ["manual dW", "numerical dW"]
    assert len(_texts(panels[0])) == 16


@pytest.mark.parametrize("shape, drawn", [((2, 10, 2, 2), (2, 8)), ((2, 2, 2, 3, 3), (4, 2))])
def test_large_and_5d_grids_are_capped_or_merged(shape, drawn):
    rng = np.random.default_rng(0)
    res = check_layer(mp.ReLU(), rng.standard_normal(shape) + 0.5, twin=None, mode="full")
    fig = plot_gradient_heatmaps(res, "dX")
    assert len(_panels(fig)) == 3 * drawn[0] * drawn[1]
    title = fig._suptitle.get_text()
    assert (f"the first {drawn[0]} x {drawn[1]} of" in title) == (shape[1] > 8)
