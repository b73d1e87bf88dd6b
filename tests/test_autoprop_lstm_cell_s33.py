"""``lstm_cell(c, i, f, g, o) -> (h, c')``: the LSTM twin's cell update as one record (issue 15, session 33).

``c' = f * c + i * g`` and ``h = o * tanh(c')`` were five records a step (two products, a sum, a
tanh, a product); one record with two outputs does the same arithmetic (the same bits) and its
VJPs are those five records' VJPs in one call. Checked here against the five records written
out on Tensors (the chain), against HIPS autograd, in saturation (``tanh'`` from ``1 / cosh^2``
where ``1 - tanh^2`` cancels), under the 0·inf rule, with second derivatives, and for bad input.
"""

import numpy as np
import pytest

import autoprop as ap
from autoprop.core import registry as R

NAMES = ("c", "i", "f", "g", "o")


def _inputs(seed=0, shape=(4, 3), scale=1.0):
    rng = np.random.default_rng(seed)
    c = rng.standard_normal(shape) * scale
    i, f, o = (1.0 / (1.0 + np.exp(-rng.standard_normal(shape))) for _ in range(3))
    g = np.tanh(rng.standard_normal(shape))
    return [c, i, f, g, o]


def _chain(c, i, f, g, o):
    c2 = f * c + i * g
    return o * R.tanh(c2), c2


def _grads(cell, arrays, Gh, Gc, persistent=False):
    ts = [ap.constant(a) for a in arrays]
    with ap.GradientTape(persistent=persistent) as tape:
        tape.watch(ts)
        h, c2 = cell(*ts)
        loss = ap.sum(h * Gh) + ap.sum(c2 * Gc)
    return (h.numpy(), c2.numpy()), [None if d is None else d.numpy() for d in tape.gradient(loss, ts)]


@pytest.mark.parametrize("scale", [1.0, 8.0])  # 8: most of c' saturates tanh
def test_values_and_the_five_gradients_are_the_chains_bits(scale):
    arrays = _inputs(1, scale=scale)
    rng = np.random.default_rng(2)
    Gh, Gc = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    (h, c2), grads = _grads(R.lstm_cell, arrays, Gh, Gc)
    (hr, c2r), ref = _grads(_chain, arrays, Gh, Gc)
    np.testing.assert_array_equal(h, hr)
    np.testing.assert_array_equal(c2, c2r)
    for name, a, b in zip(NAMES, grads, ref):
        np.testing.assert_array_equal(a, b, err_msg=name)
    c, i, f, g, o = arrays  # and the formulas (lessons/32-lstm.md)
    d = 1.0 / np.cosh(c2) ** 2
    dc2 = Gc + Gh * o * d
    np.testing.assert_allclose(grads[0], dc2 * f, rtol=1e-13)
    np.testing.assert_allclose(grads[4], Gh * np.tanh(c2), rtol=1e-13)


def test_against_hips_autograd_and_jvps_against_the_vjps():
    agnp = pytest.importorskip("autograd.numpy")
    autograd = pytest.importorskip("autograd")
    arrays = _inputs(3)
    rng = np.random.default_rng(4)
    Gh, Gc = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))

    def loss(c, i, f, g, o):
        c2 = f * c + i * g
        return agnp.sum(o * agnp.tanh(c2) * Gh) + agnp.sum(c2 * Gc)

    _, grads = _grads(R.lstm_cell, arrays, Gh, Gc)
    for k in range(5):
        np.testing.assert_allclose(grads[k], autograd.grad(loss, k)(*arrays), rtol=1e-13, atol=1e-15)
    # forward mode: <J t, G> = <t, J^T G> for a tangent in each input
    for k in range(5):
        t = rng.standard_normal((4, 3))
        ts = [ap.constant(a) for a in arrays]
        with ap.ForwardAccumulator(ts[k], ap.constant(t)) as acc:
            h, c2 = R.lstm_cell(*ts)
        jh, jc = acc.jvp(h), acc.jvp(c2)
        jh = np.zeros((4, 3)) if jh is None else jh.numpy()
        jc = np.zeros((4, 3)) if jc is None else jc.numpy()
        np.testing.assert_allclose(np.sum(jh * Gh) + np.sum(jc * Gc), np.sum(t * grads[k]), rtol=1e-12)


def test_saturated_cell_keeps_tanhs_derivative_where_one_minus_tanh_squared_cancels():
    # c' = 20: 1 - tanh(20)^2 is 0 in float64, tanh'(20) = 1 / cosh(20)^2 = 1.70e-17
    c, i, f, g, o = (np.full((1, 1), v) for v in (20.0, 0.0, 1.0, 0.0, 1.0))
    _, grads = _grads(R.lstm_cell, [c, i, f, g, o], np.ones((1, 1)), np.zeros((1, 1)))
    np.testing.assert_allclose(grads[0], 4.0 / (np.exp(20.0) + np.exp(-20.0)) ** 2, rtol=1e-14)
    assert grads[0][0, 0] > 1.6e-17


def test_zero_upstream_gradient_gives_zero_next_to_an_infinity_as_the_chain():
    arrays = _inputs(5)
    arrays[0][1, 2] = np.inf  # c' = inf there, h = o
    Gh, Gc = np.ones((4, 3)), np.ones((4, 3))
    Gh[1, 2] = Gc[1, 2] = 0.0  # nobody reads that entry
    _, grads = _grads(R.lstm_cell, arrays, Gh, Gc)
    _, ref = _grads(_chain, arrays, Gh, Gc)
    for name, a, b in zip(NAMES, grads, ref):
        np.testing.assert_array_equal(a, b, err_msg=name)  # (NaN where the chain has NaN)
    assert grads[2][1, 2] == 0.0  # df = dc' * c: 0 * inf is 0 under the rule, not NaN
    assert np.isfinite(np.delete(grads[2].ravel(), 5)).all()


@pytest.mark.filterwarnings("ignore:invalid value encountered in multiply:RuntimeWarning")  # the loss: inf * 0
def test_an_infinite_output_gate_with_zero_upstream_on_h_gives_the_chains_zeros():
    """o = inf at one entry (c' finite there, h = inf) and nothing reads that entry of h: the chain's
    ``o * tanh(c')`` VJP gives 0 there under the 0·inf rule, so dc, di, df, dg stay finite; the fused cell must
    not take the plain products because c' alone is finite (review34: mutant lstm_mul_one_output survived)."""
    arrays = _inputs(7)
    arrays[4][2, 1] = np.inf
    rng = np.random.default_rng(8)
    Gh, Gc = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    Gh[2, 1] = 0.0
    (h, c2), grads = _grads(R.lstm_cell, arrays, Gh, Gc)
    _, ref = _grads(_chain, arrays, Gh, Gc)
    assert np.isinf(h[2, 1]) and np.isfinite(c2).all()  # the case: h alone is infinite
    for name, a, b in zip(NAMES, grads, ref):
        np.testing.assert_array_equal(a, b, err_msg=name)
    for name, a in zip(NAMES[:4], grads[:4]):
        assert np.isfinite(a).all(), name  # 0 * inf is 0 under the rule, not NaN


def test_only_the_cell_state_used_gives_no_gradient_to_the_output_gate():
    arrays = _inputs(6)
    ts = [ap.constant(a) for a in arrays]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        _, c2 = R.lstm_cell(*ts)
        loss = ap.sum(c2 * c2)
    dc, di, df, dg, do = tape.gradient(loss, ts)
    assert do is None  # as the chain: o * tanh(c') is not on the way to the loss
    c, i, f, g, o = arrays
    np.testing.assert_allclose(df.numpy(), 2 * (f * c + i * g) * c, rtol=1e-14)


def test_second_derivatives_agree_with_the_chain():
    arrays = _inputs(7, scale=2.0)
    rng = np.random.default_rng(8)
    Gh, Gc = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    results = []
    for cell in (R.lstm_cell, _chain):
        ts = [ap.constant(a) for a in arrays]
        with ap.GradientTape() as outer:
            outer.watch(ts)
            with ap.GradientTape() as tape:
                tape.watch(ts)
                h, c2 = cell(*ts)
                loss = ap.sum(h * Gh) + ap.sum(c2 * Gc)
            first = tape.gradient(loss, ts)
            s = sum(ap.sum(d * d) for d in first)
        results.append([d.numpy() for d in outer.gradient(s, ts)])
    for name, a, b in zip(NAMES, *results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=name)


def test_bad_shapes_and_dtypes_are_named():
    arrays = _inputs(9)
    with pytest.raises(ValueError, match=r"lstm_cell: c, i, f, g and o must have one shape; got \(4, 3\), "
                                         r"\(4, 2\)"):
        R.lstm_cell(arrays[0], arrays[1][:, :2], *arrays[2:])
    with pytest.raises(TypeError, match=r"lstm_cell: real floating values only"):
        R.lstm_cell(*(a.astype(complex) for a in arrays))
