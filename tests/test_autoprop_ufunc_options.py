"""numpy ufunc options on Tensors (seen by tape8, session 8): ``np.add(t, 1, dtype=np.float32)`` returned
float64 and ``np.multiply(t, 2, where=mask)`` multiplied everywhere: the options were dropped, so the
value was not numpy's. An option with no registered derivative is now refused by name, as ``out=``
is; the defaults (``where=True``, ``casting='same_kind'``, ``order='K'``, ``subok=True``) are accepted.
``dtype=`` is numpy's since session 20 (the inputs cast, recorded: tests/test_autoprop_fix20a.py)."""

import numpy as np
import pytest

import autoprop as ap


@pytest.mark.parametrize("call, option", [
    (lambda x: np.multiply(x, 2, where=np.array([True, False])), "where"),
    (lambda x: np.exp(x, casting="unsafe"), "casting"),
    (lambda x: np.tanh(x, order="F"), "order"),
])
def test_an_option_is_refused_by_name(call, option):
    x = ap.Variable(np.array([1.5, 2.5]))
    with ap.GradientTape():
        with pytest.raises(TypeError, match=rf"numpy\.\w+\(\.\.\., {option}=\.\.\.\)"):
            call(x)


def test_default_options_record_as_without_them():
    x = ap.Variable(np.array([1.5, 2.5]))
    with ap.GradientTape() as tape:
        y = np.sum(np.add(x, 1, where=True, casting="same_kind", order="K", subok=True) * np.exp(x, out=None))
    g = tape.gradient(y, x)
    v = np.array([1.5, 2.5])
    np.testing.assert_allclose(g.numpy(), np.exp(v) * (v + 2), rtol=1e-15)  # d/dx (x+1)e^x = (x+2)e^x
