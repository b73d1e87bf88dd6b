"""Sequential skips only the NaN/inf checks that cannot fire (issue 15), and every other still does.

A built-in layer does not look for NaN/inf in the output of a built-in layer that cannot make
one from the finite input it checked (``Tanh``, ``ReLU``, ``Sigmoid``, ``Softmax``, ``Flatten``
forward; ``Tanh``, ``ReLU``, ``Sigmoid``, ``Flatten`` backward). Each test puts a NaN or an
inf in one position, after good calls of the same signature, and asserts the message that
names the layer and the tensor, as without the skip.
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
    calls = []
    real = V._sum_is_finite

    def counting(X):
        calls.append(X.shape)
        return real(X)

    monkeypatch.setattr(V, "_sum_is_finite", counting)
    return calls


def test_the_check_after_a_bounded_layer_is_skipped_and_only_that_one(data, monkeypatch):
    X, dY = data
    net = _net()
    _warm(net, X, dY)
    calls = _count_reductions(monkeypatch)
    net.forward(X, training=True)
    assert calls == [(6, 4), (6, 5)]  # X (Linear 0), X @ W.T + b (Tanh); not tanh(...) (Linear 2)
    calls.clear()
    net.backward(dY)
    assert calls == [(6, 3), (6, 5)]  # dY (Linear 2), dY @ W (Tanh); not Tanh's dX (Linear 0)
    calls.clear()
    lin = net.layers[2]
    lin.forward(np.tanh(X @ net.layers[0].params["W"].T))  # alone: nothing is known
    assert calls == [(6, 5)]
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
    # a weight of the first Linear makes column 3 of its output non-finite: the activation says so
    net.layers[0].params["W"][3, 0] = bad
    name = act.__name__
    with pytest.raises(ValueError, match=name + r"\(\)\.forward: X must contain only finite values; got "
                                                r"6 NaN/inf value\(s\), the first at index \(0, 3\)"):
        net.forward(X)
    assert V.KNOWN_FINITE.array is None  # cleared also when a layer raises


def test_an_overflowing_last_linear_is_named_by_the_loss(data):
    X, dY = data
    net = _net()
    loss = mp.SoftmaxCrossEntropy()
    y = np.array([0, 1, 2, 0, 1, 2])
    for _ in range(2):
        loss.forward(y, net.forward(X))
    net.layers[0].params["W"][...] = 0.0
    net.layers[0].params["b"][...] = 5.0  # tanh(5) = 0.9999 in every entry
    net.layers[2].params["W"][...] = 1e308  # finite weights; five of them times 0.9999 overflow
    with np.errstate(over="ignore"):
        z = net.forward(X)
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
    # a weight of the last Linear makes its dX (Tanh's dY) non-finite: Tanh says so
    net.layers[2].params["W"][1, 2] = bad
    net.forward(X)  # the NaN weight reaches the output too; only backward is asked here
    with pytest.raises(ValueError, match=r"Tanh\(\)\.backward: dY must contain only finite values; "
                                         r"got 6 NaN/inf value\(s\), the first at index \(0, 2\)"):
        net.backward(dY, input_grad=False)
    assert V.KNOWN_FINITE.array is None


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
        for _ in range(2):
            with pytest.raises(ValueError, match=LIN2 + r"\.forward: X must contain only finite"):
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
    # inside a nested container a NaN input to its first layer is still named
    nested.layers[0].layers[0].params["W"][0, 0] = np.nan
    with pytest.raises(ValueError, match=r"ReLU\(\)\.forward: X must contain only finite"):
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
