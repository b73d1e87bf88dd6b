"""Session 41's speed cuts keep their values and their checks (docs/speed.md, Session 41).

* The cross-entropy's row indices (``np.arange(n)`` of a label gather) are made once per batch size,
  read-only, and shared by manualprop's loss and autoprop's record and VJP
  (``manualprop._extremes.rows``): never written by a VJP, the same gradients as manualprop's.
* The mean cross-entropy's VJP scales by ``g / n`` as a Python float when ``g`` is a 0-d float64 (the
  usual seed): the same bits as the 0-d array ``g / n`` it replaced, for any upstream gradient.
* The tape reads a Variable's ``trainable`` flag from its slot: a frozen Variable is still not
  watched on its own, and unfreezing it is seen by the next tape.
"""

import numpy as np
import pytest

import autoprop as ap
import manualprop as mp
from autoprop import losses as alo
from autoprop.core.prims import reductions
from manualprop import _extremes
from manualprop import losses as mlosses


def test_the_row_indices_are_shared_read_only_and_never_written():
    rng = np.random.default_rng(41)
    z, y = rng.standard_normal((7, 5)), rng.integers(0, 5, 7)
    _extremes.ROWS.clear()
    logits = ap.Variable(z)
    with ap.GradientTape() as tape:
        loss = alo.SoftmaxCrossEntropy()(y, logits)
    dz = tape.gradient(loss, logits).numpy()
    rows = _extremes.rows(7)
    assert rows is mlosses._rows(7)  # one cache for both tracks
    assert not rows.flags.writeable
    np.testing.assert_array_equal(rows, np.arange(7))
    manual = mp.SoftmaxCrossEntropy()
    assert manual.forward(y, z) == float(loss.numpy())
    np.testing.assert_array_equal(manual.backward(), dz)  # the same bits as manualprop's
    np.testing.assert_array_equal(rows, np.arange(7))  # the VJP's p[rows, y] -= 1 wrote into p, not rows


@pytest.mark.parametrize("upstream", [1.0, 2.5, 1.0 / 3.0, -0.7, 1e-300, 3e300])
def test_the_mean_cross_entropy_scales_by_the_same_bits(upstream):
    rng = np.random.default_rng(7)
    z, y = rng.standard_normal((13, 6)), rng.integers(0, 6, 13)
    g = np.array(upstream)  # a 0-d float64, as the tape's seed and output_gradients give
    d = reductions._softmax_minus_onehot(z, y)
    expected = d * (g / y.size)  # the expression before session 41: 0-d array arithmetic
    got = reductions._sparse_ce_mean_vjp(g, None, z, y)
    np.testing.assert_array_equal(got, expected)
    logits = ap.Variable(z)
    with ap.GradientTape() as tape:
        loss = alo.SoftmaxCrossEntropy()(y, logits)
    np.testing.assert_array_equal(tape.gradient(loss, logits, output_gradients=upstream).numpy(), expected)


def test_the_mean_cross_entropy_in_float32_keeps_its_dtype_and_values():
    rng = np.random.default_rng(3)
    z, y = rng.standard_normal((9, 4)).astype(np.float32), rng.integers(0, 4, 9)
    g = np.array(0.3, np.float32)
    expected = reductions._softmax_minus_onehot(z, y) * (g / y.size)
    got = reductions._sparse_ce_mean_vjp(g, None, z, y)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


def test_a_frozen_variable_is_not_watched_and_unfreezing_it_is_seen():
    v = ap.Variable(np.array([1.0, 2.0]), trainable=False)
    with ap.GradientTape() as tape:
        y = ap.reduce_sum(v * v)
    assert tape.gradient(y, v) is None
    v.trainable = True
    with ap.GradientTape() as tape:
        y = ap.reduce_sum(v * v)
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [2.0, 4.0])
