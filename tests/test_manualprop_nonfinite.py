"""A NaN/inf that a layer makes from finite input is named where it is made (issue 10, D1 and D2).

D1: a non-finite weight of a layer inside a Sequential used to be blamed on the next layer's
input (or, in the last Linear, not reported at all); now the layer, its position and the
weight are named. D2: a finite but huge dY used to overflow dW/db to inf with only numpy's
warning (the optimizer refused them later); now the backward that overflowed says so.
Also here: Tanh's derivative keeps full relative precision with the cheap ``1 - y**2`` form
where it is accurate and ``1 / cosh**2`` only on saturated entries (issue 15).
"""

import warnings
from decimal import Decimal, localcontext

import numpy as np
import pytest

import manualprop as mp
from manualprop import _validation as V
from manualprop import layers as L

LIN0 = r"Linear\(in_features=4, out_features=5\)"
LIN2 = r"Linear\(in_features=5, out_features=3\)"


def _net():
    return mp.Sequential(mp.Linear(4, 5, rng=0), mp.Tanh(), mp.Linear(5, 3, rng=1))


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    return rng.standard_normal((6, 4)), rng.standard_normal((6, 3))


# ---------------------------------------------------------------------------- D1: forward
@pytest.mark.parametrize("layer, key, index, count", [(2, "W", (1, 2), 6), (0, "W", (3, 0), 6),
                                                      (0, "b", (2,), 6), (2, "b", (0,), 6)])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_weight_is_named_with_its_layers_position(data, layer, key, index, count, bad):
    X, _ = data
    net = _net()
    for _ in range(2):  # the signatures are remembered: the value check still runs
        net.forward(X)
    net.layers[layer].params[key][index] = bad
    lin = LIN0 if layer == 0 else LIN2
    with pytest.raises(V.NonFiniteError, match=(
            rf"^Sequential layer {layer} \({lin}\)\.forward: parameter {key} contains 1 NaN/inf "
            rf"value\(s\), the first at index {re_index(index)} \(value {bad!r}\); from finite X, Y has "
            rf"{count} NaN/inf value\(s\)")) as info:
        Y = net.forward(X, training=True)
        # (session 20: an inf before the Tanh, which tanh makes +-1 exactly, is met by the
        # Tanh's backward, which names the Linear with the message its own look gave)
        assert layer == 0 and bad == np.inf
        net.backward(np.ones_like(Y))
    assert isinstance(info.value, ValueError)  # code that catches ValueError still catches it
    assert info.value.layer is net.layers[layer] and info.value.path == [layer]
    assert V.KNOWN_FINITE.array is None


def re_index(index):
    return "\\(" + ", ".join(map(str, index)) + (",\\)" if len(index) == 1 else "\\)")


def test_alone_a_linear_names_its_weight_and_an_overflow(data):
    X, _ = data
    lin = mp.Linear(4, 5, rng=0)
    lin.params["W"][0, 1] = np.nan
    with pytest.raises(V.NonFiniteError, match=rf"^{LIN0}\.forward: parameter W contains 1 NaN/inf value\(s\), "
                                               r"the first at index \(0, 1\) \(value nan\); from finite X, Y "
                                               r"has 6 NaN/inf value\(s\), the first at index \(0, 0\)"):
        lin.forward(X)
    lin = mp.Linear(4, 5, rng=0)
    lin.params["W"][...] = 1e308  # finite weights, each row's sum overflows
    with np.errstate(over="ignore"), pytest.raises(
            V.NonFiniteError, match=rf"^{LIN0}\.forward: Y overflowed: from finite X and finite "
                                    r"parameters, Y has \d+ NaN/inf value\(s\).*too large for float64"):
        lin.forward(np.abs(X) + 1.0)


def test_a_nan_made_by_another_built_in_layer_is_blamed_on_it_by_the_next_one():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2, 1, 5, 5))
    net = mp.Sequential(mp.Conv2D(1, 2, 3, rng=0), mp.ReLU(), mp.Flatten(), mp.Linear(18, 3, rng=1))
    net.forward(X)
    net.layers[0].params["W"][1, 0, 2, 2] = np.inf
    with np.errstate(invalid="ignore"), pytest.raises(V.NonFiniteError, match=r"^Sequential layer 0 \(Conv2D\(.*\)\)\.forward: parameter W "
                                               r"contains 1 NaN/inf value\(s\), the first at index "
                                               r"\(1, 0, 2, 2\) \(value inf\); from finite X, Y has") as info:
        net.forward(X)
    # the check that saw it was ReLU's, chained as the cause
    assert "ReLU().forward: X must contain only finite values" in str(info.value.__cause__)


def test_a_students_layer_that_makes_a_nan_is_named_without_claiming_an_overflow(data):
    X, _ = data

    class Shift:  # the student's layer with a parameter
        def __init__(self):
            self.params, self.grads = {"c": np.zeros(5)}, {"c": np.zeros(5)}

        def forward(self, X, training=False):
            return X + self.params["c"]

        def backward(self, dY):
            self.grads["c"] = dY.sum(axis=0)
            return dY

    net = mp.Sequential(mp.Linear(4, 5, rng=0), Shift(), mp.Tanh(), mp.Linear(5, 3, rng=1))
    net.forward(X)
    net.layers[1].params["c"][4] = np.nan
    with pytest.raises(V.NonFiniteError, match=r"^Sequential layer 1 \(.*Shift object.*\)\.forward: parameter c "
                                               r"contains 1 NaN/inf value\(s\), the first at index \(4,\)"):
        net.forward(X)
    net.layers[1].params["c"][4] = 0.0
    net.layers[1].forward = lambda X, training=False: X * np.inf  # noqa: ARG005 - no parameter at fault
    with np.errstate(invalid="ignore"), pytest.raises(
            V.NonFiniteError, match=r"^Sequential layer 1 \(.*Shift.*\)\.forward: from finite X and finite "
                                    r"parameters, Y has \d+ NaN/inf value\(s\)") as info:
        net.forward(X)
    assert "overflowed" not in str(info.value)


def test_an_input_nan_and_other_errors_are_not_reattributed(data):
    X, _ = data
    net = _net()
    X[1, 1] = np.nan  # the network's input: named by the first layer as before
    with pytest.raises(ValueError, match=rf"^{LIN0}\.forward: X must contain only finite values") as info:
        net.forward(X)
    assert not isinstance(info.value, V.NonFiniteError)
    with pytest.raises(ValueError, match=rf"^{LIN0}\.forward: X must have shape \(batch, 4\)"):
        net.forward(np.zeros((6, 3)))


# ---------------------------------------------------------------------------- D2: backward
def test_a_huge_finite_dy_that_overflows_dw_is_named_at_backward(data):
    X, _ = data
    net = _net()
    net.forward(X)
    before = {k: v.copy() for k, v in net.grads.items()}
    dY = np.full((6, 3), 1e308)
    with np.errstate(over="ignore"), pytest.raises(V.NonFiniteError, match=(
            rf"^Sequential layer 2 \({LIN2}\)\.backward: dW overflowed: from finite dY and X, dW has \d+ "
            r"NaN/inf value\(s\), the first at index \(\d+, \d+\) \(value -?inf\); the values are too large "
            r"for float64")):
        net.backward(dY, input_grad=False)
    for k, v in net.grads.items():  # nothing was overwritten with inf
        np.testing.assert_array_equal(v, before[k])
    # with numpy's warnings on, the warning comes first and the error still follows
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with pytest.warns(RuntimeWarning, match="overflow"), pytest.raises(V.NonFiniteError, match="dW overflowed"):
            net.backward(dY, input_grad=False)


def test_an_overflowing_dx_is_named_by_the_linear_that_made_it(data):
    X, _ = data
    lin = mp.Linear(4, 5, rng=0)
    lin.params["W"][...] = 1e200
    with np.errstate(over="ignore"):
        lin.forward(X * 1e-200)  # Y of order 1: fine
        with pytest.raises(V.NonFiniteError, match=rf"^{LIN0}\.backward: dX overflowed: from finite dY and "
                                                   r"finite parameters, dX has 24 NaN/inf value\(s\)"):
            lin.backward(np.full((6, 5), 1e200))
        lin.backward(np.full((6, 5), 1e200), input_grad=False)  # dW = dY.T @ X is of order 1: fine


def test_huge_but_finite_gradients_pass_and_ordinary_ones_are_not_looked_at(data, monkeypatch):
    X, dY = data
    lin = mp.Linear(4, 3, rng=0)
    lin.forward(X)
    big = np.full((6, 3), 1e160)  # its squares overflow (no bound), dW and db do not
    lin.backward(big)
    assert np.isfinite(lin.grads["W"]).all() and lin.grads["b"][0] == pytest.approx(6e160)
    looked = []
    real = np.isfinite
    monkeypatch.setattr(V.np, "isfinite", lambda A: looked.append(np.shape(A)) or real(A))
    lin.backward(dY)
    assert looked == []  # dW and db proven finite from dY . dY and X . X
    lin.backward(big)
    assert (3, 4) in looked and (3,) in looked  # no bound: each one looked at


def test_the_checks_of_huge_finite_values_never_trip_numpys_error_state():
    # squares that overflow make the one-dot check inconclusive: the element-wise check decides,
    # and neither reports an overflow of its own (only the layer's arithmetic could)
    rng = np.random.default_rng(1)
    net = mp.Sequential(mp.Linear(3, 4, rng=0), mp.Tanh(), mp.Linear(4, 2, rng=1))
    X = rng.standard_normal((5, 3)) * 1e200
    with np.errstate(all="raise"):
        for dtype_X in (X, (X * 1e-200 * 1e30).astype(np.float32)):
            if dtype_X.dtype == np.float32:
                net = mp.Sequential(mp.Linear(3, 4, rng=0, dtype=np.float32), mp.Tanh(),
                                    mp.Linear(4, 2, rng=1, dtype=np.float32))
            Y = net.forward(dtype_X)
            net.backward(np.ones_like(Y))
            assert all(np.isfinite(g).all() for g in net.grads.values())


def test_float32_overflow_of_dw_is_named():
    lin = mp.Linear(2, 2, rng=0, dtype=np.float32)
    lin.forward(np.full((4, 2), 1e20, dtype=np.float32))
    with np.errstate(over="ignore"), pytest.raises(V.NonFiniteError, match=r"dW overflowed.*too large for float32"):
        lin.backward(np.full((4, 2), 1e20, dtype=np.float32))


# ---------------------------------------------------------------------------- Tanh's derivative
def _sech2_exact(x):
    """1/cosh(x)**2 to 40 digits (decimal arithmetic), rounded once to float64."""
    with localcontext() as ctx:
        ctx.prec = 40
        e = Decimal(float(x)).exp()
        return float(4 / (e + 1 / e) ** 2)


def _tanh_backward(x, dtype=np.float64):
    t = mp.Tanh()
    x = np.asarray(x, dtype=dtype)
    t.forward(x)
    return t.backward(np.ones_like(x))


@pytest.mark.parametrize("x, value", [(20.0, 1.6993e-17), (-20.0, 1.6993e-17), (30.0, 3.5026e-26)])
def test_tanh_derivative_is_exact_where_one_minus_y_squared_is_zero(x, value):
    y = np.tanh(x)
    # the output-based form has lost everything here: 0 when tanh rounds to 1, or a few ulp of 1
    # (> 1e-16) from a tanh that is off by one ulp; either way wrong by more than half
    assert abs((1.0 - y * y) - value) >= 0.5 * value
    got = _tanh_backward([x])[0]
    assert got == pytest.approx(value, rel=1e-4, abs=0)
    assert got == pytest.approx(_sech2_exact(x), rel=1e-15, abs=0)


def test_tanh_derivative_keeps_relative_precision_across_the_cheap_and_precise_ranges():
    # moderate x (the cheap 1 - y**2), around the switch at 1 - y**2 = 1/8 (|x| = 1.73), and
    # the saturated range, all in one array (the saturated entries are patched in place)
    x = np.concatenate([np.linspace(-5, 5, 1001), np.linspace(1.70, 1.76, 61), [-1.7317, 1.7317, 40.0]])
    got = _tanh_backward(x)
    want = np.array([_sech2_exact(v) for v in x])
    rel = np.abs(got - want) / want
    # a bound for any tanh within 4 ulp: |error of 1 - y**2| <= 2 * 4 * 2**-53 (from y) + 2**-54
    # (rounding y*y), over 1 - y**2 >= 1/8 where that form is used: 68 * 2**-53 = 7.5e-15 (this
    # machine's tanh gives 1.6e-15; the test of test_numerics.py allows 1e-14)
    assert rel.max() <= 68 * 2.0 ** -53
    assert rel[np.abs(x) > 1.74].max() <= 8 * 2.0 ** -53  # 1/cosh(x)**2: cosh within 2 ulp, 3 roundings


def test_tanh_takes_the_precise_form_only_on_the_saturated_entries(monkeypatch):
    seen = []
    for name in ("_sech2", "_sech2_below_overflow"):  # guarded by np.errstate or not (a bound on X . X)
        real = getattr(L, name)
        monkeypatch.setattr(L, name, lambda x, real=real: seen.append(np.array(x)) or real(x))
    x = np.array([[0.1, -1.0, 1.7], [2.0, -25.0, 0.0]])
    got = _tanh_backward(x)
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], [2.0, -25.0])  # only |x| > 1.73
    np.testing.assert_array_equal(got[0], 1.0 - np.tanh(x[0]) ** 2)
    assert got[1, 1] == pytest.approx(_sech2_exact(-25.0), rel=1e-15, abs=0)
    seen.clear()
    _tanh_backward(np.linspace(-1.7, 1.7, 50))
    assert seen == []  # nothing saturated: no cosh at all


def test_tanh_derivative_in_float32_and_on_a_scalar():
    got = _tanh_backward([-9.0, 0.5], np.float32)
    assert got.dtype == np.float32
    assert got[0] == pytest.approx(_sech2_exact(-9.0), rel=1e-6, abs=0)  # not 2x too large
    assert got[1] == pytest.approx(_sech2_exact(0.5), rel=1e-6, abs=0)
    assert float(_tanh_backward(20.0)) == pytest.approx(_sech2_exact(20.0), rel=1e-15, abs=0)
