"""Session 42 (helper verify42): the memory-layout rerun (gradcheck._layout) for a 1-d input or a (1, n) row, whose
C and Fortran orders are one buffer (a strided view now), and for losses (check_loss ran none). Each planted bug here
PASSed before (tests/buggy_layers/layout42.py, loss_layout42.py, loss_layout42b.py hold them for the table too)."""

from pathlib import Path

import numpy as np
import pytest
from buggy_layers import layout42, loss_layout42, loss_layout42b
from test_cli import run_here

import gradcheck
from gradcheck import _sandbox_child
from gradcheck._layout import relaid
from gradcheck.check import check_loss
from gradcheck.result import LAYOUT_PAIR
from gradcheck.sandbox import _fortran
from gradcheck.sources import strided_copy

BUGGY = Path(__file__).parent / "buggy_layers"


def _layout_failed(r, tensors):
    assert not r.passed
    assert sorted(r.failing_tensors) == sorted(tensors), r.table()
    assert all(c.pair == LAYOUT_PAIR for t in r.records if not t.passed for c in t.comparisons if not c.passed)
    return " ".join(" ".join(r.notes).split())


@pytest.mark.parametrize("cls, X, what", [
    (layout42.MovingSumShapeStrides, (9,), "X and dY as a strided view"),
    (layout42.RowPairsShapeStrides, (1, 8), "X and dY as a strided view"),
])
def test_an_as_strided_with_strides_from_the_shape_fails_on_a_1d_input_or_a_row(cls, X, what):
    note = _layout_failed(gradcheck.check_layer(cls(), X, twin=None, mode="fast"), ["Y"])
    assert f"ran again with {what} (every other element of a buffer twice its size)" in note, note


@pytest.mark.parametrize("cls, X", [(layout42.MovingSum, (9,)), (layout42.RowPairs, (1, 8))])
def test_the_right_strided_layers_pass(cls, X):
    r = gradcheck.check_layer(cls(), X, twin=None, mode="fast")
    assert r.passed and not any("memory layout" in n for n in r.notes), r.table()


def _loss_data(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), rng.standard_normal(shape)


def test_a_loss_flattening_y_pred_in_memory_order_fails():
    yt, yp = _loss_data((6, 5))
    r = check_loss(loss_layout42.MSEFlatK(), yt, yp, twin=None)
    note = _layout_failed(r, ["L", "dy_pred"])
    assert "ran again with y_true and y_pred in Fortran (column-major) order" in note, note
    assert r.mismatch().endswith("change with the memory layout (the same values in Fortran order or as a strided "
                                 "view give other numbers)")
    assert check_loss(loss_layout42.MSEFlat(), yt, yp, twin=None).passed


def test_a_loss_on_a_1d_signal_with_strides_from_the_shape_fails():
    yt, yp = _loss_data(9)
    note = _layout_failed(check_loss(loss_layout42b.SmoothMSEShapeStrides(), yt, yp, twin=None), ["L", "dy_pred"])
    assert "ran again with y_true and y_pred as a strided view" in note, note
    assert check_loss(loss_layout42b.SmoothMSE(), yt, yp, twin=None).passed


def test_the_loss_rerun_is_one_forward_and_one_backward_at_the_end():
    calls = []

    class MSE(loss_layout42.MSEFlat):
        def forward(self, y_true, y_pred):
            calls.append("forward F" if y_pred.flags.f_contiguous and not y_pred.flags.c_contiguous else "forward")
            return super().forward(y_true, y_pred)

        def backward(self):
            calls.append("backward")
            return super().backward()

    yt, yp = _loss_data((6, 5))
    assert check_loss(MSE(), yt, yp, twin=None, values=False).passed
    assert calls.count("forward F") == 1 and calls[-2:] == ["forward F", "backward"], calls


def test_labels_are_not_relaid_and_one_element_arrays_have_one_layout():
    labels = np.arange(6)
    assert relaid(labels) is labels
    one = np.ones(1)
    assert relaid(one) is one
    x = np.arange(5.0)
    s = relaid(x)
    assert not (s.flags.c_contiguous or s.flags.f_contiguous) and np.array_equal(s, x)


@pytest.mark.parametrize("shape", [(7,), (1, 6), (6, 1)])
def test_the_sandbox_child_builds_the_parent_s_strided_layout(shape):
    x = np.random.default_rng(1).standard_normal(shape)
    ours = strided_copy(x)
    req = _fortran([ours])
    assert req == {"strided": [0]}
    theirs = _sandbox_child._laid_out(np, [x.copy()], req)[0]  # the child gets C order and the request
    assert theirs.strides == ours.strides and np.array_equal(theirs, x)
    assert np.array_equal(theirs.base, ours.base)  # the gaps too: a read of them gives the same numbers


@pytest.mark.parametrize("target, extra", [
    ("layout42.py::MovingSumShapeStrides", ["--input-shape", "9"]),
    ("loss_layout42b.py::SmoothMSEShapeStrides", ["--loss", "--input-shape", "9"]),
])
def test_the_command_fails_them_sandboxed(target, extra):
    out = run_here("check", f"{BUGGY / target}", *extra)  # gradcheck.cli.main here; the layer in its sandbox
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 1, text
    assert "isolation namespaces" in text or "isolation process" in text
    assert "as a strided view (every other element of a buffer twice its size)" in text, text
    assert "change with the memory layout" in text or "changes with the memory layout" in text, text
