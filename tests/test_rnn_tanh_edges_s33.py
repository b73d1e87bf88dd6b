"""Session 33 (fixv33; review33 RNN_TANH_EMPTY_BATCH, RNN_TANH_MIXED_DTYPE and the surviving mutant rnn_T0_dtype):
``rnn_tanh`` with an empty size (N, H or D 0: the gradients raised argmin of an empty sequence or a reshape error;
torch's ``rnn_tanh`` handles N=0) and with mixed dtypes (float32 x and weights, float64 h0: a float64 h0 was added in
place into float32 steps, y float32 where numpy's own loop gives float64). Now: zeros of the right shapes, and
numpy's promotion over all six inputs for the output, each gradient in its input's dtype (as every record's, e.g.
``matmul``'s). The oracle: HIPS autograd differentiating the recurrence written as a loop, in float64."""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import autoprop as ap
from autoprop.core import registry as R
from autoprop.core.prims import recurrent
from tests.test_autoprop_rnn_tanh import _ref as _loop

ALL = tuple(range(6))


def _ref(x, h0, *weights):
    """test_autoprop_rnn_tanh's loop of tanh steps, and no state at T = 0."""
    return _loop(x, h0, *weights) if x.shape[1] else anp.zeros((x.shape[0], 0, h0.shape[1]))


def _args(N, T, D, H, dtypes=(np.float64,) * 6, seed=3):
    rng = np.random.default_rng(seed)
    shapes = [(N, T, D), (N, H), (H, D), (H, H), (H,), (H,)]
    return [(rng.standard_normal(s) * 0.7).astype(dt) for s, dt in zip(shapes, dtypes)]


def _tape(args, G):
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        y = R.rnn_tanh(*ts)
    return y, tape.gradient(y, ts, output_gradients=G)


@pytest.mark.parametrize(("N", "T", "D", "H"), [(0, 3, 2, 4), (2, 3, 2, 0), (2, 3, 0, 4), (0, 0, 0, 0), (2, 0, 2, 4)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_empty_sizes_give_gradients_of_the_right_shapes(N, T, D, H, dtype):
    args = _args(N, T, D, H, (dtype,) * 6)
    G = np.random.default_rng(1).standard_normal((N, T, H)).astype(dtype)
    y, grads = _tape(args, G)
    assert y.shape == (N, T, H) and y.dtype == dtype
    want = autograd.grad(lambda *a: anp.sum(_ref(*a) * G.astype(np.float64)), ALL)(
        *[a.astype(np.float64) for a in args])
    for name, got, ref, a in zip(("x", "h0", "W_ih", "W_hh", "b_ih", "b_hh"), grads, want, args):
        got = np.asarray(got)
        assert got.shape == a.shape and got.dtype == dtype, (name, got.shape, got.dtype)
        np.testing.assert_allclose(got, ref, rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-5 if
                                   dtype == np.float32 else 1e-12, err_msg=name)


def test_zero_features_match_the_same_layer_fed_zeros():
    """D = 0: the recurrence runs on h0 and the biases alone, as with D = 1 and x = 0 (dh0, dW_hh and the biases'
    gradients nonzero, dx and dW_ih empty)."""
    args = _args(2, 3, 0, 4)
    G = np.random.default_rng(1).standard_normal((2, 3, 4))
    y, grads = _tape(args, G)
    fed = [np.zeros((2, 3, 1)), args[1], np.ones((4, 1)), *args[3:]]
    y1, grads1 = _tape(fed, G)
    np.testing.assert_allclose(np.asarray(y), np.asarray(y1), rtol=1e-13, atol=1e-15)
    assert np.abs(np.asarray(grads[1])).max() > 1e-3
    for i in (1, 3, 4, 5):
        np.testing.assert_allclose(np.asarray(grads[i]), np.asarray(grads1[i]), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("wide", [1, 3, 4, 5])  # which input is float64: h0 or W_hh (the two added step by step),
# or a bias (speed37: the forward adds the biases in place only when they have the product's dtype)
def test_mixed_dtypes_follow_numpys_promotion(wide):
    dtypes = [np.float32] * 6
    dtypes[wide] = np.float64
    args = _args(2, 3, 2, 4, tuple(dtypes))
    args[1] = args[1] * 1e-4 + 0.1  # (review33's case: below float32's resolution in a step)
    G = np.random.default_rng(1).standard_normal((2, 3, 4))
    ref = _ref(*args)  # numpy's own loop: float64
    y, grads = _tape(args, G)
    assert ref.dtype == np.float64 and y.dtype == np.float64
    np.testing.assert_allclose(np.asarray(y), ref, rtol=1e-12, atol=1e-14)
    want = autograd.grad(lambda *a: anp.sum(_ref(*a) * G), ALL)(*args)  # with numpy's promotion, as ours
    for got, ref_g, a in zip(grads, want, args):
        got = np.asarray(got)
        assert got.dtype == a.dtype  # each gradient in its input's dtype (the tape's rule, as matmul's)
        # computed in float64 (float32's rounding would be ~1e-7 of the largest entry, at every step), then rounded
        # once to the input's dtype: within a few ulp of the largest entry
        np.testing.assert_allclose(got, ref_g, rtol=0, atol=4 * np.finfo(a.dtype).eps * np.abs(ref_g).max())


def test_no_step_gives_dh0_in_the_states_dtype():
    """T = 0 (mutant rnn_T0_dtype): the VJP's dh0 is zeros in the record's dtype, float32 for float32 inputs."""
    args = _args(2, 0, 2, 4, (np.float32,) * 6)
    ans = R.rnn_tanh(*args)
    out = recurrent._rnn_vjps([(i, None) for i in ALL], np.zeros((2, 0, 4), np.float32), ans, *args)
    for got, a in zip(out, args):
        assert got.shape == a.shape and got.dtype == np.float32 and not np.any(got)


def test_db_ih_and_db_hh_are_two_arrays_of_the_same_sum():
    """speed37: the VJP sums the rows of dA once and gives db_hh a copy (two arrays, as manualprop's
    grads: no memory shared), each the oracle's."""
    args = _args(3, 4, 2, 5)
    G = np.random.default_rng(2).standard_normal((3, 4, 5))
    _, grads = _tape(args, G)
    db_ih, db_hh = np.asarray(grads[4]), np.asarray(grads[5])
    assert not np.shares_memory(db_ih, db_hh)
    np.testing.assert_array_equal(db_ih, db_hh)
    want = autograd.grad(lambda b: anp.sum(_ref(*args[:4], b, args[5]) * G))(args[4])  # the oracle
    np.testing.assert_allclose(db_ih, want, rtol=1e-12, atol=1e-14)
