"""Sequential decides which NaN/inf looks it may skip from the layers it holds at each call.

``Sequential.forward``/``backward`` hand a built-in layer an input as known to be finite, and
leave a ``Linear``'s output unlooked before a ``Tanh`` and a ``Linear``, from the types of the
layers in ``net.layers`` at that call (issue 15). A cache of those decisions per container
was tried in session 33 (it saved no instructions: hashing the tuple of types cost what the
type tests cost) and dropped; these tests guard the property any such cache must keep. They
change ``net.layers`` after steps, and assert the message each bad value gives: decisions kept
for the old layers would trust or defer where the new ones must not, and a NaN would pass
silently or be named at the wrong layer. Each fails with decisions cached per container.
"""

import numpy as np
import pytest

import manualprop as mp

LIN0 = r"Linear\(in_features=4, out_features=5\)"


class Spoiler(mp.Tanh.__mro__[1]):  # a student's element-wise layer: never trusted
    """tanh with a NaN written into its output's first entry."""

    def _forward(self, X):
        Y = np.tanh(X)
        Y.flat[0] = np.nan
        return Y, Y

    def _local_grad(self, Y):
        return 1.0 - Y * Y


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    return rng.standard_normal((6, 4)), rng.standard_normal((6, 3))


def _steps(net, X, dY, n=2):
    for _ in range(n):
        net.forward(X, training=True)
        net.backward(dY)


def test_a_students_layer_put_where_a_tanh_was_is_not_trusted(data):
    X, dY = data
    net = mp.Sequential(mp.Linear(4, 5, rng=0), mp.Tanh(), mp.Linear(5, 3, rng=1))
    _steps(net, X, dY)  # the plan of (Linear, Tanh, Linear): the second Linear trusts its input
    net.layers[1] = Spoiler()
    with pytest.raises(ValueError, match=r"^Sequential layer 1 \(Spoiler\(\)\)\.forward: from finite X, "
                                         r"Y has 1 NaN/inf value\(s\), the first at index \(0, 0\)"):
        net.forward(X, training=True)
    net.layers[1] = mp.Tanh()  # the old types again: the old plan, the same numbers as before
    ref = mp.Sequential(mp.Linear(4, 5, rng=0), mp.Tanh(), mp.Linear(5, 3, rng=1))
    np.testing.assert_array_equal(net.forward(X, training=True), ref.forward(X, training=True))


def test_a_linear_followed_by_something_else_than_a_linear_looks_at_its_output_again(data):
    X, dY = data
    net = mp.Sequential(mp.Linear(4, 5, rng=0), mp.Tanh(), mp.Linear(5, 3, rng=1))
    _steps(net, X, dY)  # the plan defers the first Linear's look (a Linear follows its Tanh)
    net.layers[2] = mp.ReLU()
    net.layers[0].params["W"][1, 2] = np.nan
    # with the old plan the NaN would pass the Tanh (trusted output) and the ReLU silently
    with pytest.raises(ValueError, match=rf"^Sequential layer 0 \({LIN0}\)\.forward: parameter W contains "
                                         r"1 NaN/inf value\(s\), the first at index \(1, 2\)"):
        net.forward(X, training=True)


def test_a_students_layer_put_where_a_tanh_was_is_not_trusted_in_the_backward(data):
    X, dY = data
    net = mp.Sequential(mp.Linear(4, 5, rng=0), mp.Tanh(), mp.Linear(5, 3, rng=1))
    _steps(net, X, dY)

    class LeakyBackward(mp.Tanh):  # a subclass: not one of manualprop's own classes
        def backward(self, dY):
            dX = super().backward(dY)
            dX[0, 0] = np.inf
            return dX

    net.layers[1] = LeakyBackward()
    net.forward(X, training=True)
    with pytest.raises(ValueError, match=r"^Sequential layer 1 \(LeakyBackward\(\)\)\.backward: from finite dY, "
                                         r"dX has 1 NaN/inf value\(s\), the first at index \(0, 0\)"):
        net.backward(dY)
