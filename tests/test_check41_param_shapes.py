"""Session 41 (helper check41), verify40b F6 and the general case: every manualprop layer with parameters holds them
to the shapes it was built with (Layer._declare, Layer._check_params: one place), naming the layer, the parameter, its
shape and the expected one, at forward and at backward (numpy's broadcast or matmul message before, or none)."""

import numpy as np
import pytest

import manualprop as mp

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape)


CASES = [  # (layer, input, parameter, wrong value, the message's start)
    (lambda: mp.Linear(4, 3, rng=0), _x(2, 4), "b", np.zeros((1, 3)),
     r"Linear\(in_features=4, out_features=3\)\.{m}: params\['b'\] has shape \(1, 3\), expected \(3,\)$"),
    (lambda: mp.Linear(4, 3, rng=0), _x(2, 4), "W", [[0.0] * 4] * 3,
     r"Linear\(in_features=4, out_features=3\)\.{m}: params\['W'\] is a list, expected an array of shape \(3, 4\)"),
    (lambda: mp.Linear(4, 3, rng=0), _x(2, 4), "W", np.zeros((4, 3)),
     r"\.{m}: params\['W'\] has shape \(4, 3\), expected \(3, 4\) \(a Linear keeps W as \(3, 4\); this is its transp"),
    (lambda: mp.Conv2D(3, 4, 3), _x(1, 3, 5, 5), "W", np.zeros((4, 3, 2, 3)),
     r"Conv2D\(.*\)\.{m}: params\['W'\] has shape \(4, 3, 2, 3\), expected \(4, 3, 3, 3\)"),
    (lambda: mp.BatchNorm1D(4), _x(3, 4), "gamma", np.ones(5),
     r"BatchNorm1D\(4\)\.{m}: params\['gamma'\] has shape \(5,\), expected \(4,\)"),
    (lambda: mp.LayerNorm(4), _x(3, 4), "beta", np.ones((1, 4)),
     r"LayerNorm\(.*\)\.{m}: params\['beta'\] has shape \(1, 4\), expected \(4,\)"),
    (lambda: mp.LSTM(3, 4), _x(2, 5, 3), "W_hh", np.zeros((4, 4)),
     r"LSTM\(input_size=3, hidden_size=4\)\.{m}: params\['W_hh'\] has shape \(4, 4\), expected \(16, 4\)"),
    (lambda: mp.Embedding(10, 4), np.array([[1, 2]]), "W", np.zeros((4, 10)),
     r"Embedding\(.*\)\.{m}: params\['W'\] has shape \(4, 10\), expected \(10, 4\) \(an Embedding keeps W"),
    (lambda: mp.MultiHeadAttention(8, 2), _x(2, 3, 8), "W_q", np.zeros((8, 4)),
     r"MultiHeadAttention\(.*\)\.{m}: params\['W_q'\] has shape \(8, 4\), expected \(8, 8\)"),
]


@pytest.mark.parametrize("make, X, key, value, said", CASES)
def test_a_parameter_of_another_shape_is_named_at_forward_and_at_backward(make, X, key, value, said):
    layer = make()
    layer.params[key] = value
    with pytest.raises(ValueError, match=said.format(m="forward")):
        layer.forward(X, training=True)
    layer = make()
    Y = layer.forward(X, training=True)
    layer.params[key] = value  # replaced between forward and backward
    with pytest.raises(ValueError, match=said.format(m="backward")):
        layer.backward(np.ones_like(Y))


def test_a_parameter_of_its_own_shape_may_be_replaced():
    layer = mp.Linear(4, 3, rng=0)
    layer.params["W"] = np.ones((3, 4))
    assert layer.forward(np.ones((2, 4))).tolist() == [[4.0 + b for b in layer.params["b"]]] * 2
