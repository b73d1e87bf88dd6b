"""Escapes whose warning must name the recorded rewrite of the very call (tester22a M1, M3).

numpy code that never dispatches to autoprop converts a Tensor to a constant array; the
warning (an error under ``ap.strict_mode()``) is the student's only clue, so it names the
spelling that is recorded, and that spelling is checked to give the gradient.
"""

from __future__ import annotations

import numpy as np
import pytest

import autoprop as ap

X = np.arange(12.0).reshape(3, 4) / 10


def _escape(fn, source):
    with pytest.warns(ap.TapeEscapeWarning) as caught, ap.GradientTape():
        out = fn(source)
    assert type(out) is np.ndarray  # a constant: the path ended here
    return " ".join(str(w.message) for w in caught)


def test_ndarray_dot_with_a_variable_names_the_matmul_and_np_dot():
    # r_ndarray_dot.py: CS231n's scores = X.dot(W) gave a gradient of None, and the warning
    # advised np.stack for a list, which this line has not
    W = ap.Variable(np.ones((4, 2)), name="W")
    msg = _escape(lambda w: X.dot(w), W)
    assert "It happened inside a.dot(t)" in msg and "Write a @ t or np.dot(a, t) (recorded)" in msg
    assert "a.dot(t)" not in _escape(lambda w: np.asarray(w) + 1.0, W)  # only where .dot( runs
    for recorded in (lambda w: X @ w, lambda w: np.dot(X, w), lambda w: w.T.dot(X.T).T):
        with ap.GradientTape() as tape:
            loss = np.sum(recorded(W) ** 2)
        np.testing.assert_allclose(tape.gradient(loss, W).numpy(), 2 * X.T @ (X @ np.ones((4, 2))), rtol=1e-14)
    with ap.strict_mode(), pytest.raises(ap.TapeEscapeError, match=r"Write a @ t or np\.dot\(a, t\)"):
        with ap.GradientTape():
            X.dot(W)
