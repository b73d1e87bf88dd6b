"""Session 13 (issue 15): manualprop's cheaper common cases give the same values and the same errors.

Each fast path is pinned by a test that it runs (so that it cannot silently stop paying off)
and that the full path gives the same bits or message where the fast one does not apply.
"""

import numpy as np
import pytest

import manualprop as mp
from manualprop import layers as ML

LIN = r"Linear\(in_features={}, out_features={}\)"


def _saturating_net():
    """Linear(3, 4) -> Tanh -> Linear(4, 2) whose hidden pre-activations reach |x| = 20."""
    net = mp.Sequential(mp.Linear(3, 4, rng=0), mp.Tanh(), mp.Linear(4, 2, rng=1))
    net.layers[0].params["W"][...] = [[10.0, 0, 0], [0, 1.0, 0], [0, 0, -10.0], [0.5, 0.5, 0.5]]
    net.layers[0].params["b"][...] = 0.0
    return net


def test_tanh_saturated_entries_take_the_precise_form_without_errstate_when_the_bound_allows(monkeypatch):
    net = _saturating_net()
    X = np.array([[2.0, 0.5, -2.0], [-1.0, 0.1, 0.2]])  # x = 20, -20 (saturated), -10, ...
    dY = np.ones((2, 2))
    calls = []
    real = ML._sech2
    monkeypatch.setattr(ML, "_sech2", lambda x: calls.append(x.shape) or real(x))
    fast = []
    below = ML._sech2_below_overflow
    monkeypatch.setattr(ML, "_sech2_below_overflow", lambda x: fast.append(x.shape) or below(x))
    net.forward(X, training=True)
    net.backward(dY)
    tanh = net.layers[1]
    d = ML._tanh_grad(tanh.cache["X"], tanh.cache["Y"], tanh._ss["X"])
    assert calls == [] and len(fast) == 2  # backward and the call above; |x| <= 20 proven below 700 by X . X: no np.errstate
    A = tanh.cache["X"]
    sech = 1.0 / np.cosh(A)
    expected = np.where(1 - np.tanh(A) ** 2 < 0.125, sech * sech, 1 - np.tanh(A) ** 2)
    np.testing.assert_array_equal(d, expected)  # the same ufuncs as _sech2: the same bits
    assert d[0, 0] == pytest.approx(4.0 * np.exp(-40.0), rel=1e-14)  # 1.70e-17, not 0
    # without a bound (a Tanh alone is handed nothing) the same values, through _sech2
    d2 = ML._tanh_grad(tanh.cache["X"], tanh.cache["Y"])
    np.testing.assert_array_equal(d2, d)
    assert len(calls) == 1


def test_tanh_at_huge_inputs_in_a_network_takes_the_guarded_form_and_is_zero():
    net = _saturating_net()
    net.layers[0].params["W"][0, 0] = 1e3  # x = 800 and 2000: cosh overflows, 1 / inf = 0
    X = np.array([[0.8, 0.5, -2.0], [2.0, 0.1, 0.2]])
    with np.errstate(all="raise"):
        net.forward(X, training=True)
        tanh = net.layers[1]
        assert tanh._ss["X"] > 700.0 ** 2
        d = ML._tanh_grad(tanh.cache["X"], tanh.cache["Y"], tanh._ss["X"])
    assert d[0, 0] == 0.0 and d[1, 0] == 0.0


def test_tanh_backward_after_a_refused_forward_uses_the_cache_it_has():
    tanh = mp.Tanh()
    X = np.array([[30.0, 0.5]])
    tanh.forward(X)
    with pytest.raises(ValueError, match="X must contain only finite values"):
        tanh.forward(np.array([[np.nan, 0.0]]))
    d = tanh.backward(np.ones((1, 2)))  # the cached X of the good call, no bound: _sech2
    assert d[0, 0] == pytest.approx(4.0 * np.exp(-60.0), rel=1e-14)
