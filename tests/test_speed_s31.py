"""Session 31's speed changes keep every value, warning and check (issue 15).

``tape._backward`` is ``np.errstate(divide="ignore", invalid="ignore")`` as a decorator of the walk
instead of a new ``with np.errstate(...)`` block on every gradient call: the same numpy state inside
the walk, restored after it (also when a VJP raises), and safe when a VJP opens a walk of its own
(one shared errstate object entered twice would raise ``TypeError: Cannot enter np.errstate twice``).
"""

import warnings

import numpy as np
import pytest

import autoprop as ap


def _silent_inner_gradient():
    """d/dv of sqrt(sum(v**2))**2 at 0: 0 by the 0·inf rule, a numpy warning without the errstate."""
    v = ap.Variable(np.zeros(2))
    with ap.GradientTape() as t:
        q = np.sqrt(np.sum(v**2)) ** 2
    return t.gradient(q, v).numpy()


def test_a_walk_inside_a_walk_is_quiet_and_leaves_the_settings_as_they_were():
    seen = []

    @ap.custom_gradient
    def double(x):
        def grad_fn(g):
            seen.append((_silent_inner_gradient(), np.geterr()["invalid"], np.geterr()["over"]))
            return g * 2.0
        return x * 2.0, grad_fn

    before = np.geterr()
    x = ap.Variable(np.array([1.0, -3.0]))
    with ap.GradientTape() as tape:
        y = np.sum(double(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = tape.gradient(y, x).numpy()
    np.testing.assert_array_equal(g, [2.0, 2.0])
    (inner, invalid, over), = seen
    np.testing.assert_array_equal(inner, [0.0, 0.0])
    assert (invalid, over) == ("ignore", before["over"])  # inside: divide/invalid off, overflow as the user set it
    assert np.geterr() == before


def test_the_settings_come_back_when_a_vjp_raises():
    @ap.custom_gradient
    def broken(x):
        def grad_fn(g):
            raise ArithmeticError("grad_fn failed")
        return x + 0.0, grad_fn

    before = np.geterr()
    x = ap.Variable(np.array([1.0]))
    with ap.GradientTape() as tape:
        y = np.sum(broken(x))
    with pytest.raises(ArithmeticError, match="grad_fn failed"):
        tape.gradient(y, x)
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning, match="invalid value"):
        np.array(0.0) / np.array(0.0)
