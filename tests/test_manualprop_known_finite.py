"""Sequential skips only the NaN/inf checks that cannot fire (issue 15), and every other still does.

A built-in layer does not look for NaN/inf in the output of a built-in layer that cannot make
one from the finite input it checked (``Tanh``, ``ReLU``, ``Sigmoid``, ``Softmax``, ``Flatten``
forward; ``Tanh``, ``ReLU``, ``Sigmoid``, ``Flatten`` backward) or that checked it itself
(``Linear`` checks its Y and its dX, and names its own non-finite parameter or the overflow:
issue 10's D1 and D2). Each test puts a NaN or an inf in one position, after good calls of the
same signature, and asserts the message that names the layer and the tensor.
"""

import numpy as np
import pytest

import manualprop as mp
from manualprop import _validation as V

LIN0 = r"Linear\(in_features=4, out_features=5\)"
LIN2 = r"Linear\(in_features=5, out_features=3\)"


def _net(act=None):
    return mp.Sequential(mp.Linear(4, 5, rng=0), act or mp.Tanh(), mp.Linear(5, 3, rng=1))


def _warm(net, X, dY, n=2):
    for _ in range(n):
        net.forward(X, training=True)
        net.backward(dY)


def _with(A, index, value):
    A = A.copy()
    A[index] = value
    return A


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((6, 4)), rng.standard_normal((6, 3))


def _count_reductions(monkeypatch):
    """The shapes of the arrays whose sum of squares the checks take (every one is a BLAS dot,
    ``_validation._vdot``), in order."""
    calls = []
    real = V._vdot

    def counting(A, B):
        calls.append(A.shape)
        return real(A, B)

    monkeypatch.setattr(V, "_vdot", counting)
    return calls


def test_the_check_after_a_bounded_layer_is_skipped_and_only_that_one(data, monkeypatch):
    X, dY = data
    net = _net()
    _warm(net, X, dY)
    calls = _count_reductions(monkeypatch)
    net.forward(X, training=True)
    # X of Linear 0, not its Y (session 20: a Tanh follows, and a NaN there reaches the look at
    # the Y of Linear 2; an inf, tanh's backward), not tanh(...) (Linear 2)
    assert calls == [(6, 4), (6, 3)]
    calls.clear()
    net.backward(dY)
    # dY of Linear 2, and its W (3, 5), smaller than its dX (6, 5), which it proves finite (Tanh
    # is handed that dX); not Tanh's dX (Linear 0), then Linear 0's W (5, 4) for its dX (6, 4)
    assert calls == [(6, 3), (3, 5), (5, 4)]
    calls.clear()
    net.backward(dY, input_grad=False)  # a training step: no dX of Linear 0
    assert calls == [(6, 3), (3, 5)]
    calls.clear()
    net.forward(X[:2], training=True)
    calls.clear()
    net.backward(dY[:2])  # a batch of 2: each dX (2, 5), (2, 4) is smaller than its W: looked at
    assert calls == [(2, 3), (2, 5), (2, 4)]
    net.forward(X, training=True)
    calls.clear()
    lin = net.layers[2]
    lin.forward(np.tanh(X @ net.layers[0].params["W"].T))  # alone: nothing is known
    assert calls == [(6, 5), (6, 3)]
    assert V.KNOWN_FINITE.array is None


@pytest.mark.parametrize("act", [mp.Tanh, mp.ReLU, mp.Sigmoid])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_nan_in_the_input_or_made_by_a_linear_is_named_where_it_is_seen(data, act, bad):
    X, dY = data
    net = _net(act())
    _warm(net, X, dY)
    with pytest.raises(ValueError, match=LIN0 + r"\.forward: X must contain only finite values; got 1 "
                                              r"NaN/inf value\(s\), the first at index \(2, 1\)"):
        net.forward(_with(X, (2, 1), bad))
    # a weight of the first Linear makes column 3 of its output non-finite: that Linear, its
    # position and the weight are named (issue 10, D1), not the activation that would see it
    net.layers[0].params["W"][3, 0] = bad
    with pytest.raises(V.NonFiniteError, match=r"^Sequential layer 0 \(" + LIN0 + r"\)\.forward: parameter W "
                       rf"contains 1 NaN/inf value\(s\), the first at index \(3, 0\) \(value {bad!r}\); from "
                       r"finite X, Y has 6 NaN/inf value\(s\), the first at index \(0, 3\)"):
        net.forward(X, training=True)
        # (session 20: the Linear before a Tanh leaves its output unlooked; tanh(inf) = 1
        # exactly, and the Tanh's backward meets the inf and names the Linear as its look did)
        assert act is mp.Tanh and bad == np.inf
        net.backward(dY)
    assert V.KNOWN_FINITE.array is None  # cleared also when a layer raises


def test_an_overflowing_last_linear_is_named_by_itself_and_by_the_loss(data):
    X, dY = data
    net = _net()
    loss = mp.SoftmaxCrossEntropy()
    y = np.array([0, 1, 2, 0, 1, 2])
    for _ in range(2):
        loss.forward(y, net.forward(X))
    net.layers[0].params["W"][...] = 0.0
    net.layers[0].params["b"][...] = 5.0  # tanh(5) = 0.9999 in every entry
    net.layers[2].params["W"][...] = 1e308  # finite weights; five of them times 0.9999 overflow
    with np.errstate(over="ignore"):  # the forward names the last Linear and the overflow (D1)
        with pytest.raises(V.NonFiniteError, match=r"^Sequential layer 2 \(" + LIN2 + r"\)\.forward: Y "
                           r"overflowed: from finite X and finite parameters, Y has 18 NaN/inf value\(s\)"):
            net.forward(X)
        z = np.tanh(X @ net.layers[0].params["W"].T + 5.0) @ net.layers[2].params["W"].T
    assert not np.isfinite(z).all()
    with pytest.raises(ValueError, match=r"SoftmaxCrossEntropy\(reduction='mean'\)\.forward: y_pred must "
                                         r"contain only finite values"):
        loss.forward(y, z)


@pytest.mark.parametrize("bad", [np.nan, -np.inf])
def test_a_nan_in_each_position_of_the_backward_is_named(data, bad):
    X, dY = data
    net = _net()
    _warm(net, X, dY)
    net.forward(X)
    with pytest.raises(ValueError, match=LIN2 + r"\.backward: dY must contain only finite values; got 1 "
                                              r"NaN/inf value\(s\), the first at index \(4, 2\)"):
        net.backward(_with(dY, (4, 2), bad))
    # a weight of the last Linear, changed after forward, makes its dX (Tanh's dY) non-finite:
    # the Linear says so, with its position and the weight (D1), not Tanh
    net.forward(X)
    net.layers[2].params["W"][1, 2] = bad
    with pytest.raises(V.NonFiniteError, match=r"^Sequential layer 2 \(" + LIN2 + r"\)\.backward: parameter "
                       rf"W contains 1 NaN/inf value\(s\), the first at index \(1, 2\) \(value {bad!r}\); "
                       r"from finite dY, dX has 6 NaN/inf value\(s\), the first at index \(0, 2\)"):
        net.backward(dY, input_grad=False)
    assert V.KNOWN_FINITE.array is None
    # alone, the Linear names itself
    lin = net.layers[2]
    with pytest.raises(V.NonFiniteError, match=r"^" + LIN2 + r"\.backward: parameter W contains 1"):
        lin.backward(dY)


def test_a_students_layer_is_never_trusted_nor_handed_a_known_array(data):
    X, dY = data

    class Scale:  # the student's layer: writes into its input, then returns it
        params, grads = {}, {}

        def forward(self, X, training=False):
            X[0, 0] = np.nan
            return X

        def backward(self, dY):
            dY[0, 0] = np.inf
            return dY

    class Wrap:  # the student's layer around a built-in one: it writes into X first
        def __init__(self):
            self.inner = mp.Linear(5, 3, rng=1)
            self.params, self.grads = self.inner.params, self.inner.grads

        def forward(self, X, training=False):
            X[1, 1] = np.nan
            return self.inner.forward(X, training)

        def backward(self, dY):
            return self.inner.backward(dY)

    class MyTanh(mp.Tanh):  # a subclass of a built-in: its own code, not trusted either
        def forward(self, X, training=False):
            return super().forward(X) * np.inf

    net = mp.Sequential(mp.Linear(4, 5, rng=0), mp.Tanh(), Scale(), mp.Linear(5, 3, rng=1))
    _warm(mp.Sequential(mp.Linear(4, 5, rng=0), mp.Tanh(), mp.Linear(5, 3, rng=1)), X, dY)
    with pytest.raises(ValueError, match=LIN2 + r"\.forward: X must contain only finite values.*\(0, 0\)"):
        net.forward(X)
    net = mp.Sequential(mp.Linear(4, 5, rng=0), Scale(), mp.Tanh(), mp.Linear(5, 3, rng=1))
    net.layers[1] = mp.Tanh()
    net.forward(X)
    net.layers[2] = Scale()  # the list is read on each call
    with pytest.raises(ValueError, match=r"Tanh\(\)\.backward: dY must contain only finite values.*\(0, 0\)"):
        net.backward(dY)
    net = mp.Sequential(mp.Linear(4, 5, rng=0), mp.Tanh(), Wrap())
    with pytest.raises(ValueError, match=LIN2 + r"\.forward: X must contain only finite values.*\(1, 1\)"):
        net.forward(X)
    net = mp.Sequential(mp.Linear(4, 5, rng=0), MyTanh(), mp.Linear(5, 3, rng=1))
    with np.errstate(invalid="ignore"):
        for _ in range(2):  # the subclass made the infs from its finite X: it is named, not Linear 2,
            # and no overflow is claimed of code that is not manualprop's
            with pytest.raises(V.NonFiniteError, match=r"^Sequential layer 1 \(MyTanh\(\)\)\.forward: from "
                               r"finite X, Y has 30 NaN/inf value\(s\), the first at index \(0, 0\)"):
                net.forward(X)


def test_nested_containers_and_known_inputs_give_the_same_numbers(data):
    X, dY = data
    flat = mp.Sequential(mp.Linear(4, 5, rng=0), mp.ReLU(), mp.Linear(5, 5, rng=1), mp.Tanh(),
                         mp.Flatten(), mp.Linear(5, 3, rng=2))
    nested = mp.Sequential(mp.Sequential(mp.Linear(4, 5, rng=0), mp.ReLU()),
                           mp.Linear(5, 5, rng=1),
                           mp.Sequential(mp.Tanh(), mp.Flatten()), mp.Linear(5, 3, rng=2))
    for _ in range(2):
        Y1, Y2 = flat.forward(X), nested.forward(X)
        np.testing.assert_array_equal(Y1, Y2)
        np.testing.assert_array_equal(flat.backward(dY), nested.backward(dY))
        for k1, k2 in zip(flat.grads, nested.grads):
            np.testing.assert_array_equal(flat.grads[k1], nested.grads[k2])
    # inside a nested container the weight that made a NaN is named, at its nested position
    nested.layers[0].layers[0].params["W"][0, 0] = np.nan
    with pytest.raises(V.NonFiniteError, match=r"^Sequential layer 0\.0 \(" + LIN0 + r"\)\.forward: "
                                               r"parameter W contains 1 NaN/inf value\(s\)"):
        nested.forward(X)
    nested.layers[0].layers[0].params["W"][0, 0] = 0.0
    nested.layers[2].layers[0] = mp.Sigmoid()  # a NaN made by the Linear at 1: position 1
    nested.layers[1].params["b"][4] = np.inf
    with pytest.raises(V.NonFiniteError, match=r"^Sequential layer 1 \(Linear\(in_features=5, out_features=5\)"
                                               r"\)\.forward: parameter b contains 1 NaN/inf"):
        nested.forward(X)


def test_the_builtin_test_reads_the_class():
    from manualprop.containers import _builtin

    class Mine(mp.Linear):
        pass

    assert _builtin(mp.Linear) and _builtin(mp.Tanh) and _builtin(mp.Conv2D)
    assert not _builtin(Mine) and not _builtin(mp.Sequential) and not _builtin(object)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
def test_labels_of_every_integer_dtype_are_range_checked_on_every_call(dtype):
    loss = mp.SoftmaxCrossEntropy()
    z = np.zeros((4, 3))
    good = np.array([0, 1, 2, 1], dtype)
    for _ in range(2):
        assert loss.forward(good, z) == pytest.approx(np.log(3))
    with pytest.raises(ValueError, match=r"y_true labels must be in \[0, 3\); got min 0, max 3"):
        loss.forward(np.array([0, 1, 3, 1], dtype), z)
    if np.dtype(dtype).kind == "i":  # read as unsigned, -1 is the largest value: still refused
        low = np.iinfo(dtype).min
        with pytest.raises(ValueError, match=rf"y_true labels must be in \[0, 3\); got min {low}, max 2"):
            loss.forward(np.array([0, low, 2, 1], dtype), z)
    assert loss.forward(good[::2], z[:2]) == pytest.approx(np.log(3))  # a strided view


def test_tanh_backward_at_huge_inputs_is_zero_even_when_numpy_raises_on_every_error():
    tanh = mp.Tanh()
    x = np.array([[-1e4, -800.0, 0.0, 800.0, 1e4]])
    with np.errstate(all="raise"):
        tanh.forward(x)
        np.testing.assert_array_equal(tanh.backward(np.ones_like(x)), [[0.0, 0.0, 1.0, 0.0, 0.0]])
