"""verify41 H1: ``b.set_weights(a.get_weights())`` copies a model holding a BatchNorm1D/BatchNorm2D.

Their running statistics are state (PyTorch's buffers), not Variables, so ``weights`` left them out and
the copy's inference output differed from the original's, silently (max diff 2.32 with a BatchNorm1D,
0.851 with a BatchNorm2D). Oracle: the original model's own inference output (Keras's ``set_weights``
and PyTorch's ``load_state_dict`` both copy the statistics), and the statistics themselves.
"""

import warnings

import numpy as np
import pytest

import autoprop as ap

L = ap.layers


def _trained(make, x):
    a = make()
    for _ in range(3):
        a(x, training=True)  # training forwards move the running statistics away from 0 and 1
    b = make()
    b(x[:2], training=False)
    return a, b


@pytest.mark.parametrize("make, shape", [
    (lambda: ap.Sequential([L.Linear(4, 3, rng=0), L.BatchNorm1D(3)]), (16, 4)),
    (lambda: ap.Sequential([L.Conv2D(2, 3, 3, rng=0), L.BatchNorm2D(3), L.Flatten(), L.Linear(48, 2, rng=1)]),
     (4, 2, 6, 6)),
])
def test_set_weights_of_get_weights_copies_the_running_statistics(make, shape):
    x = np.random.default_rng(0).normal(3.0, 2.0, size=shape)
    a, b = _trained(make, x)
    got = a.get_weights()
    assert len(got) == len(a.weights) + 2  # the weights, then running_mean and running_var
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b.set_weights(got)
    np.testing.assert_array_equal(b(x, training=False).numpy(), a(x, training=False).numpy())
    bn_a, bn_b = a.layers[1], b.layers[1]
    np.testing.assert_array_equal(bn_b.running_mean, bn_a.running_mean)
    np.testing.assert_array_equal(bn_b.running_var, bn_a.running_var)
    got[-1][:] = 7.0  # copies: neither model changes with the list
    assert not np.any(bn_a.running_var == 7.0) and not np.any(bn_b.running_var == 7.0)


def test_the_weights_alone_leave_the_state_and_say_so():
    x = np.random.default_rng(0).normal(3.0, 2.0, size=(16, 4))
    a, b = _trained(lambda: ap.Sequential([L.Linear(4, 3, rng=0), L.BatchNorm1D(3)]), x)
    got = a.get_weights()
    with pytest.warns(UserWarning, match=r"got the 4 weights alone; the state arrays BatchNorm1D.running_mean, "
                                         r"BatchNorm1D.running_var .* were left as they were"):
        b.set_weights(got[:4])
    np.testing.assert_array_equal(b.weights[0].numpy(), a.weights[0].numpy())
    np.testing.assert_array_equal(b.layers[1].running_mean, np.zeros(3))
    with pytest.raises(ValueError, match=r"got 5 values for the 4 weights of the layer \(or 6 with its 2 state "
                                         r"arrays, as get_weights\(\) lists them\)"):
        b.set_weights(got[:5])
    with pytest.raises(ValueError, match=r"value 5 for state BatchNorm1D.running_var has shape \(4,\); "
                                         r"the state's shape is \(3,\)"):
        b.set_weights(got[:5] + [np.ones(4)])
