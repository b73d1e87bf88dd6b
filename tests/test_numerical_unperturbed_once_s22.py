"""The numerical plans read forward's output at the unperturbed point from one call (session 22, issue 15).

The stacked batch's independence probe, its objective ``L0`` and each chunked tensor's ``f0``
(:func:`gradcheck.numerical.many_scan`: a sandboxed layer's parameters) used to call forward at the
unperturbed point once each, four round trips for a sandboxed Linear; now
:func:`gradcheck.numerical.layer_numerical_gradients` calls it once for all of them. The numbers are the
plans' own: each plan called alone, computing its own unperturbed output, gives the same bits.
"""

import numpy as np
import pytest

from gradcheck.numerical import (
    batch_independent,
    batched_input_scan,
    layer_numerical_gradients,
    local_forward_many,
    many_scan,
)
from manualprop import Linear


class Centre:
    """``Y = (X - X.mean(axis=0)) * s``: the rows interact, so the input is not stacked (the chunked plan)."""

    def __init__(self, d):
        self.params = {"s": np.linspace(0.5, 1.5, d)}

    def forward(self, X):
        return (X - X.mean(axis=0)) * self.params["s"]


def _counted(layer, X):
    """``forward(X)`` of ``layer`` that counts its calls at the unperturbed point (X and every parameter as
    given), the chunked protocol over it, and the counts."""
    X0, P0 = X.copy(), {k: v.copy() for k, v in layer.params.items()}
    calls = {"unperturbed": 0, "all": 0}

    def forward(x):
        calls["all"] += 1
        if x.shape == X0.shape and np.array_equal(x, X0) and all(
                np.array_equal(layer.params[k], v) for k, v in P0.items()):
            calls["unperturbed"] += 1
        return np.array(layer.forward(x.copy()), dtype=np.float64)

    return forward, local_forward_many(forward, layer.params), calls


def _same(a, b):
    """Two Scans with the same bits (NaN where both are NaN)."""
    for f in ("grad", "d_plus", "d_minus", "evaluated"):
        x, y = getattr(a, f), getattr(b, f)
        assert (x is None) == (y is None), f
        if x is not None:
            assert np.array_equal(x, y, equal_nan=True), f
    assert a.how == b.how


@pytest.mark.parametrize("make", [lambda: Linear(5, 3, rng=0), lambda: Centre(5)], ids=["Linear", "Centre"])
def test_forward_at_the_unperturbed_point_is_called_once_for_every_plan(make):
    layer = make()
    rng = np.random.default_rng(3)
    X = rng.standard_normal((8, 5))
    forward, many, calls = _counted(layer, X)
    G = rng.standard_normal(forward(X).shape)
    calls.update(unperturbed=0, all=0)
    got = layer_numerical_gradients(forward, X, layer.params, G, forward_many=many, detail=True)
    # main: 4 for the Linear (probe, L0, W's f0, b's f0), 3 for Centre (probe, X's f0, s's f0)
    assert calls["unperturbed"] == 1
    stacked, _ = batch_independent(forward, [X.copy()])
    assert stacked == isinstance(layer, Linear)
    # each plan alone, calling forward for its own unperturbed output: the same bits
    alone = {"X": (batched_input_scan(forward, [X.copy()], 0, G) if stacked
                   else many_scan(many, [X.copy()], layer.params, 0, G))}
    alone.update({k: many_scan(many, [X.copy()], layer.params, k, G) for k in layer.params})
    assert set(got) == set(alone)
    for k in got:
        _same(got[k], alone[k])
    # and they are the gradients: backward's (Linear), the product rule's (Centre)
    if isinstance(layer, Linear):
        layer.forward(X.copy())
        dX = layer.backward(G.copy())
        expected = {"X": dX, "W": layer.grads["W"], "b": layer.grads["b"]}
    else:
        Xc = X - X.mean(axis=0)
        Gs = G * layer.params["s"]
        expected = {"X": Gs - Gs.mean(axis=0), "s": np.sum(G * Xc, axis=0)}
    for k, g in expected.items():
        np.testing.assert_allclose(got[k].grad, g, rtol=1e-7, atol=1e-9)
