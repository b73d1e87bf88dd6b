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


def test_as_strided_reads_a_tensors_strides_and_numpys_own_names_sliding_window_view():
    # r_as_strided.py: x.strides raised AttributeError, and explicit strides gave a gradient of
    # None with the generic warning; the recorded rewrite is sliding_window_view. Session 35:
    # autoprop.numpy.lib.stride_tricks.as_strided is recorded on a Tensor (test_autoprop_as_strided_s35.py);
    # numpy's own function, which autoprop leaves alone, still warns and names both.
    from numpy.lib.stride_tricks import (
        as_strided,  # (numpy's own, never dispatching)
        sliding_window_view,
    )

    img = np.arange(36.0).reshape(6, 6) / 10
    x = ap.Variable(img, name="x")
    assert x.strides == img.strides == (48, 8) and (x * 2.0).strides == (48, 8)
    with pytest.raises(AttributeError):
        x.strides = (8, 48)  # read-only, as the value's
    for strides in (x.strides + x.strides, (48, 8, 48, 8)):
        msg = _escape(lambda t, s=strides: as_strided(t, shape=(4, 4, 3, 3), strides=s), x)
        assert "inside numpy's np.lib.stride_tricks.as_strided" in msg
        assert "np.lib.stride_tricks.sliding_window_view on the Tensor, with the window's shape" in msg
        assert "call autoprop.numpy.lib.stride_tricks.as_strided (the same arguments, recorded" in msg
    W3 = np.arange(9.0).reshape(3, 3)
    with ap.GradientTape() as tape:
        y = np.sum(np.einsum("ijkl,kl->ij", sliding_window_view(x, (3, 3)), W3) ** 2)
    windows = as_strided(img, shape=(4, 4, 3, 3), strides=img.strides * 2)
    conv = np.einsum("ijkl,kl->ij", windows, W3)
    want = np.zeros_like(img)  # d sum(conv^2) / d img: each window's 2 conv[i, j] W3 back in place
    for i, j in np.ndindex(4, 4):
        want[i:i + 3, j:j + 3] += 2 * conv[i, j] * W3
    assert float(y) == pytest.approx(float(np.sum(conv ** 2)), rel=1e-14)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-13)
    import autoprop.numpy as anp
    with ap.GradientTape() as tape:  # numpy's name under `import autoprop.numpy as np`: recorded
        y = np.sum(np.einsum("ijkl,kl->ij", anp.lib.stride_tricks.as_strided(x, (4, 4, 3, 3), x.strides * 2), W3) ** 2)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-13)
