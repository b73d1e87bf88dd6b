"""corpus35 F3: ``buf[:4] += ap.constant(...)`` raised TypeError with no tape and no Variable at all, though
``buf[:4] = t`` works (numpy reads the Tensor's values). An in-place op of numpy into a numpy array now refuses
only what would lose a gradient or could (a Tensor that carries one on a recording tape or accumulator, or a
trainable Variable, as PyTorch refuses a tensor that requires grad); otherwise it is numpy's own op on the values."""

import numpy as np
import pytest

import autoprop as ap


def test_augmented_assignment_of_a_constant_into_an_array_is_numpys():
    buf = np.zeros(6)
    buf[:4] += ap.constant(np.arange(4.0))
    np.testing.assert_array_equal(buf, [0.0, 1.0, 2.0, 3.0, 0.0, 0.0])
    buf *= ap.Variable(np.full(6, 2.0), trainable=False)  # a non-trainable Variable no tape tracks: its values
    np.testing.assert_array_equal(buf, [0.0, 2.0, 4.0, 6.0, 0.0, 0.0])
    with pytest.raises(TypeError, match=r"`buf` is a numpy array .*`buf \*= <Tensor>`"):
        buf *= ap.Variable(np.full(6, 2.0))  # a trainable one: refused with no tape too (torch: requires_grad)
    np.testing.assert_array_equal(buf, [0.0, 2.0, 4.0, 6.0, 0.0, 0.0])
    buf[1:3] -= ap.constant(np.array([1.0, 1.0]))
    np.testing.assert_array_equal(buf, [0.0, 1.0, 3.0, 6.0, 0.0, 0.0])


def test_inside_a_tape_a_constant_is_added_in_place_and_a_gradient_carrier_is_refused():
    v = ap.Variable(np.array([1.0, 2.0, 3.0]))
    with ap.GradientTape() as tape:
        mask = np.zeros(3)
        mask += ap.constant(np.array([1.0, 0.0, 1.0]))  # a constant: nothing to lose
        y = np.sum(v * mask)
        acc = np.zeros(3)
        with pytest.raises(TypeError, match=r"`acc` is a numpy array .*`acc \+= <Tensor>`.*Write `acc = acc \+"):
            acc += v * 2.0  # carries gradient: refused, as before
        np.testing.assert_array_equal(acc, [0.0, 0.0, 0.0])  # and nothing written
    np.testing.assert_array_equal(mask, [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [1.0, 0.0, 1.0])
    with ap.ForwardAccumulator(v, np.ones(3)):
        part = np.zeros(5)
        with pytest.raises(TypeError, match=r"part \(float64, shape \(3,\)\) of the numpy array `part`"):
            part[1:4] += v  # a tangent would be lost
