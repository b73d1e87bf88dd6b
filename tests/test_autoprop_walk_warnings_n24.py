"""The README's edge cases give their documented gradients without a numpy warning from autoprop (newuser24 L3).

The naive softplus ``log(1 + exp(x))`` at 1000 (gradient 0, README) and ``sqrt(sum(x**2))**2`` at 0 (gradient 0,
the 0·inf rule) printed ``_common.py:272: RuntimeWarning: invalid value encountered in multiply`` and
``elementwise.py:200: RuntimeWarning: invalid value encountered in divide``: the product before the rule zeroes it.
The reverse walk now runs with numpy's divide and invalid warnings off; the forward's own warnings (the exp's
overflow, the user's computation) and numpy's settings outside the walk are unchanged.
"""

import warnings

import numpy as np
import pytest

import autoprop as ap


def test_documented_edge_cases_are_silent_in_backward():
    b = ap.Variable(1000.0)
    with ap.GradientTape() as tape:
        with pytest.warns(RuntimeWarning, match="overflow encountered in exp"):  # the forward's: the user's
            sp = np.log(1 + np.exp(b))
    c = ap.Variable(np.zeros(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(tape.gradient(sp, b)) == 0.0  # the README's figure
        with ap.GradientTape() as tape2:
            q = np.sqrt(np.sum(c**2)) ** 2
        np.testing.assert_array_equal(tape2.gradient(q, c).numpy(), [0.0, 0.0, 0.0])
        with ap.GradientTape() as outer:  # a recorded backward (second order) too
            with ap.GradientTape() as inner:
                q = np.sqrt(np.sum(c**2)) ** 2
            g = inner.gradient(q, c)
            s = np.sum(g)
        assert outer.gradient(s, c) is not None


def test_numpy_settings_outside_the_walk_are_unchanged():
    before = np.geterr()
    x = ap.Variable(np.array([0.0, 4.0]))
    with ap.GradientTape() as tape:
        y = np.sum(np.sqrt(x))
    g = tape.gradient(y, x).numpy()
    assert np.isinf(g[0]) and g[1] == 0.25  # 1/(2 sqrt(0)): a true infinite derivative, still returned
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.array(1.0) / np.array(0.0)
