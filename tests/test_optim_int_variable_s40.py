"""An optimizer refuses an integer variable, and a Linear whose W or b was replaced by an
array of another shape names it (speed40's two silent behaviours, session 40).

Before: ``SGD(0.5).step({"W": [[5, 5]]}, {"W": [[2.7, 0.9]]})`` left ``[[4, 5]]`` (each update
cast to int64: the gradient 0.9 moved nothing), and a Linear with a transposed W raised
numpy's ``matmul: Input operand 1 has a mismatch ...``.
"""
import numpy as np
import pytest

import autoprop as ap
import manualprop as mp

OPTIMIZERS = [
    lambda: mp.SGD(0.5),
    lambda: mp.SGD(0.5, momentum=0.9),
    lambda: mp.Adam(0.5),
    lambda: mp.RMSprop(0.5),
]


@pytest.mark.parametrize("make", OPTIMIZERS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_])
def test_an_integer_variable_is_refused_and_left_as_it_was(make, dtype):
    W = np.array([[5, 5]], dtype=dtype)
    before = W.copy()
    with pytest.raises(TypeError, match=r"params\['W'\] has dtype .*floating-point variables only"):
        make().step({"W": W}, {"W": np.array([[2.7, 0.9]])})
    np.testing.assert_array_equal(W, before)


def test_a_float_variable_of_another_width_still_updates():
    W = np.array([[5.0, 5.0]], dtype=np.float16)
    mp.SGD(0.5).step({"W": W}, {"W": np.array([[2.7, 0.9]])})
    assert W.dtype == np.float16
    np.testing.assert_array_equal(W, np.array([[3.65, 4.55]], dtype=np.float16))


def test_autoprop_apply_gradients_refuses_an_integer_variable():
    v = ap.Variable(np.array([[5, 5]]))
    with pytest.raises(TypeError, match="variable #0 has dtype int64"):
        ap.optimizers.SGD(0.5).apply_gradients([(np.array([[2.7, 0.9]]), v)])
    np.testing.assert_array_equal(v.numpy(), [[5, 5]])


@pytest.mark.parametrize("key, value, said", [
    ("W", np.zeros((4, 3)), r"params\['W'\] has shape \(4, 3\), expected \(3, 4\) \(a Linear keeps W"),
    ("W", np.zeros((3, 5)), r"params\['W'\] has shape \(3, 5\), expected \(3, 4\)"),
    ("b", np.zeros(4), r"params\['b'\] has shape \(4,\), expected \(3,\)$"),
])
def test_a_linear_names_a_parameter_of_the_wrong_shape(key, value, said):
    layer = mp.Linear(4, 3, rng=0)
    layer.params[key] = value
    with pytest.raises(ValueError, match=r"^Linear\(in_features=4, out_features=3\)\.forward: " + said):
        layer.forward(np.ones((2, 4)))
