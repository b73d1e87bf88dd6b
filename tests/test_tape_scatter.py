"""The sparse gradient of a basic-index getitem (``tape.Scatter``): the walk adds each slice's
gradient into one buffer per input, in place, instead of summing a zero array per slice.

Checked against the dense way (the same walk with every slice's VJP written as a full zero
array, ``prims.shape._index_add_fwd``) bit for bit, against HIPS autograd (the test oracle)
and against central differences, with overlapping slices, negative steps, integer indices,
mixed dense and sparse contributions, and second derivatives through getitem. The values
are dyadic (small integers and quarters), so every sum is exact whatever its order and the
oracle comparisons can be exact too.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import autoprop as ap
from autoprop.core import tape as tape_mod
from autoprop.core.prims import shape as shape_mod

#: basic keys into an (N, T, D) = (3, 6, 4) array: slices of every kind, overlapping
KEYS = [
    (slice(None), 0), (slice(None), 1), (slice(None), 2), (slice(None), 3),
    (slice(None), 4), (slice(None), 5),               # x[:, t] for every t (a recurrent layer)
    (slice(None), slice(1, 5)),                        # overlaps four of them
    (slice(None), slice(None, None, -1)),              # a negative step: all of time, reversed
    (slice(None), slice(5, 0, -2)),                    # negative step with a stride
    (1, -1),                                           # integers (negative too)
    (Ellipsis, 0),                                     # Ellipsis
    (None, 0, slice(None, None, 2)),                   # a new axis and a stride
    (2, 3, 1),                                         # one element (a 0-d slice)
    (2, 3, 1),                                         # ... twice
    (slice(-2, None), slice(2, 4), slice(None, None, -3)),
]


def _weights(rng, key, shape):
    """Dyadic weights of x[key]'s shape: every product and sum below is exact."""
    return rng.integers(-4, 5, size=np.zeros(shape)[key].shape) / 4.0


def _data(seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = (rng.integers(-8, 9, size=(3, 6, 4)) / 4.0).astype(dtype)
    ws = [_weights(rng, k, x.shape) for k in KEYS]
    return x, ws


def _f(x, ws, xnp=np):
    """sum_k sum(x[key_k]**2 * w_k): a nonlinear function reading x slice by slice."""
    total = 0.0
    for k, w in zip(KEYS, ws):
        s = x[k]
        total = total + xnp.sum(s * s * w)
    return total


def _tape_grad(x, ws):
    xt = ap.constant(x)
    with ap.GradientTape() as tape:
        tape.watch(xt)
        y = _f(xt, ws)
    return tape.gradient(y, xt).numpy()


def _dense(monkeypatch, fn, *args):
    """``fn(*args)`` with every getitem VJP written as a full zero array (the way before)."""
    with monkeypatch.context() as m:
        m.setattr(shape_mod, "_is_basic", lambda key: False)
        return fn(*args)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_many_slices_give_the_exact_values_of_the_dense_way(monkeypatch, dtype):
    x, ws = _data(dtype=dtype)
    sparse = _tape_grad(x, ws)
    dense = _dense(monkeypatch, _tape_grad, x, ws)
    assert sparse.dtype == dense.dtype == dtype
    np.testing.assert_array_equal(sparse, dense)
    # the formula, element by element: d/dx sum(x[k]^2 w) = 2 x[k] w scattered into place
    expect = np.zeros(x.shape)
    for k, w in zip(KEYS, ws):
        expect[k] += 2 * x.astype(np.float64)[k] * w
    np.testing.assert_array_equal(sparse, expect.astype(dtype))


def test_many_slices_match_hips_autograd_exactly():
    x, ws = _data(seed=1)
    oracle = autograd.grad(lambda v: _f(v, ws, anp))(x)
    np.testing.assert_array_equal(_tape_grad(x, ws), oracle)


def test_many_slices_match_central_differences():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 6, 4))
    keys = KEYS[1:7] + KEYS[8:10] + KEYS[11:]  # x[1:, 0] is read by none of them
    ws = [rng.standard_normal(np.zeros(x.shape)[k].shape) for k in keys]

    def f(v):
        return float(sum(np.sum(np.tanh(v[k]) * w) for k, w in zip(keys, ws)))

    xt = ap.constant(x)
    with ap.GradientTape() as tape:
        tape.watch(xt)
        y = sum(ap.sum(ap.tanh(xt[k]) * w) for k, w in zip(keys, ws))
    got = tape.gradient(y, xt).numpy()
    h, num = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        num[i] = (f(x + e) - f(x - e)) / (2 * h)
    np.testing.assert_allclose(got, num, rtol=1e-7, atol=1e-9)
    untouched = np.ones(x.shape, bool)
    for k in keys:
        untouched[k] = False
    assert untouched.any() and np.all(got[untouched] == 0)  # zero where no slice reads x


def test_dense_and_sparse_contributions_mixed_and_shared_buffers_untouched(monkeypatch):
    # the walk runs last op first: a's gradient starts as a view of b's (reshape's VJP
    # returns g.reshape), then slices of a add to it: the walk must copy, not write into
    # b's gradient (b is a source here); a dense product in between ends the walk's
    # buffer, and the next slices start a new one
    x, ws = _data(seed=3)
    d = np.random.default_rng(4).integers(-3, 4, size=x.shape) / 2.0

    def grads():
        xt = ap.constant(x)
        with ap.GradientTape() as tape:
            tape.watch(xt)
            a = xt * 1.0
            y = ap.sum(a[:, 1] * ws[1]) + ap.sum(a[:, 1:5] * ws[6])
            y = y + ap.sum(a * d)
            y = y + ap.sum(a[:, ::-1] * ws[7]) + ap.sum(a[1, -1] * ws[9])
            b = ap.reshape(a, (3, 24))  # recorded last: its VJP gives a's first gradient
            y = y + ap.sum(b * b)
        return [g.numpy() for g in tape.gradient(y, [xt, b, a])]

    sparse = grads()
    dense = _dense(monkeypatch, grads)
    for s, t in zip(sparse, dense):
        np.testing.assert_array_equal(s, t)
    np.testing.assert_array_equal(sparse[1], 2 * x.reshape(3, 24))  # b's own gradient, unchanged
    expect = 2 * x + d
    for k, w in ((KEYS[1], ws[1]), (KEYS[6], ws[6]), (KEYS[7], ws[7]), (KEYS[9], ws[9])):
        expect[k] += w
    np.testing.assert_array_equal(sparse[0], expect)
    np.testing.assert_array_equal(sparse[2], expect)


def test_the_walk_makes_one_buffer_per_input_not_one_per_slice(monkeypatch):
    made = []
    dense = tape_mod.Scatter.dense

    def counting(self, dtype=None):
        made.append(self.shape)
        return dense(self, dtype)

    monkeypatch.setattr(tape_mod.Scatter, "dense", counting)
    monkeypatch.setattr(shape_mod, "_index_add_fwd", None)  # the dense way would raise
    x, ws = _data(seed=5)
    np.testing.assert_array_equal(_tape_grad(x, ws), autograd.grad(lambda v: _f(v, ws, anp))(x))
    assert made == [x.shape]  # fifteen slices of x, one zero array


def test_recurrent_layers_use_one_buffer_for_the_input_and_agree_with_manualprop(monkeypatch):
    import manualprop as mp

    rng = np.random.default_rng(6)
    X, G = rng.standard_normal((4, 7, 3)), rng.standard_normal((4, 7, 5))
    for name in ("RNN", "LSTM", "GRU"):
        m = getattr(mp, name)(3, 5, rng=0)
        t = getattr(ap.layers, name)(3, 5)
        for k, v in t.variables.items():
            v.assign(m.params[k])
        m.forward(X, training=True)
        dX = m.backward(G)
        xt = ap.constant(X)
        with ap.GradientTape() as tape:
            tape.watch(xt)
            y = t(xt, training=True)
        sparse = tape.gradient(y, xt, output_gradients=G).numpy()
        np.testing.assert_allclose(sparse, dX, rtol=1e-12, atol=1e-14)

        def dense_grad(t=t, xt=xt):
            with ap.GradientTape() as tape:
                tape.watch(xt)
                y = t(xt, training=True)
            return tape.gradient(y, xt, output_gradients=G).numpy()

        np.testing.assert_array_equal(sparse, _dense(monkeypatch, dense_grad))


def test_advanced_indices_keep_the_dense_scatter_with_repeats():
    # integer arrays may repeat an index: np.add.at, as before (not a Scatter)
    x = np.arange(6.0)
    assert not shape_mod._is_basic((np.array([0, 0, 2]),))
    assert not shape_mod._is_basic(True) and not shape_mod._is_basic(np.bool_(True))
    assert shape_mod._is_basic((slice(None), np.int64(2), None, Ellipsis))
    xt = ap.constant(x)
    with ap.GradientTape() as tape:
        tape.watch(xt)
        y = ap.sum(xt[np.array([0, 0, 2])] * np.array([1.0, 2.0, 4.0])) + ap.sum(xt[1:3] * 8.0)
    np.testing.assert_array_equal(tape.gradient(y, xt).numpy(), [3.0, 8.0, 12.0, 0, 0, 0])


def test_a_scatter_reads_as_its_dense_array():
    s = tape_mod.Scatter((slice(None), 1), np.array([1.0, 2.0]), (2, 3))
    np.testing.assert_array_equal(np.asarray(s), [[0, 1, 0], [0, 2, 0]])
    buf, mine = s.add_to(None, False)
    assert mine
    prev = np.ones((2, 3))
    out, mine = s.add_to(prev, False)  # not the walk's own buffer: a copy, prev unchanged
    assert mine and out is not prev and np.all(prev == 1)
    again, _ = s.add_to(out, True)  # the walk's own buffer: written in place
    assert again is out
    np.testing.assert_array_equal(out, [[1, 3, 1], [1, 5, 1]])
    up, _ = s.add_to(np.ones((2, 3), np.float32), True)  # float64 into float32: upcast copy
    assert up.dtype == np.float64


def _second(x, v, ws, monkeypatch=None):
    """d/dx <v, d/dx f(x)> through nested tapes (the inner walk runs on Tensors)."""
    def run():
        xt = ap.constant(x)
        with ap.GradientTape() as outer:
            outer.watch(xt)
            with ap.GradientTape() as inner:
                inner.watch(xt)
                y = _f(xt, ws) + sum(ap.sum(xt[k] ** 3 * w) for k, w in zip(KEYS[:8], ws))
            g = inner.gradient(y, xt)
            s = ap.sum(g * v)
        return g.numpy(), outer.gradient(s, xt).numpy()

    return run() if monkeypatch is None else _dense(monkeypatch, run)


def test_second_derivatives_through_getitem(monkeypatch):
    x, ws = _data(seed=7)
    v = np.random.default_rng(8).integers(-2, 3, size=x.shape) / 2.0
    g, hv = _second(x, v, ws)
    g_dense, hv_dense = _second(x, v, ws, monkeypatch)
    np.testing.assert_array_equal(g, g_dense)
    np.testing.assert_array_equal(hv, hv_dense)

    def f(z):
        return _f(z, ws, anp) + sum(anp.sum(z[k] ** 3 * w) for k, w in zip(KEYS[:8], ws))

    np.testing.assert_array_equal(g, autograd.grad(f)(x))
    np.testing.assert_array_equal(hv, autograd.grad(lambda z: anp.sum(autograd.grad(f)(z) * v))(x))
    expect = np.zeros(x.shape)  # sum_k (2 w + 6 x w [k among the first 8]) v, at key k
    for j, (k, w) in enumerate(zip(KEYS, ws)):
        expect[k] += 2 * w * v[k] + (6 * x[k] * w * v[k] if j < 8 else 0)
    np.testing.assert_array_equal(hv, expect)
