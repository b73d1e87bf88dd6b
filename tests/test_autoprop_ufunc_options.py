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


@pytest.mark.parametrize("f, shapes", [
    (np.matmul, ((2, 3), (3, 4))), (np.matmul, ((3,), (3, 4))), (np.matmul, ((5, 2, 3), (3,))),
    (np.vecdot, ((2, 3), (3,))), (np.matvec, ((4, 3), (2, 3))), (np.vecmat, ((3,), (3, 4))),
])
@pytest.mark.parametrize("src, dtype", [(np.float64, np.float32), (np.float32, np.float64),
                                        (np.float64, np.float64)])
def test_a_gufunc_s_dtype_is_numpy_s(f, shapes, src, dtype):
    # before: np.matmul(x, y, dtype=np.float64) on Tensors raised "Input operand 0 does not have
    # enough dimensions": the dtype was resolved with 0-d stand-ins, which a gufunc refuses
    r = np.random.default_rng(3)
    a, b = (r.standard_normal(s).astype(src) for s in shapes)
    want = f(a, b, dtype=dtype)
    x, y = ap.Variable(a), ap.Variable(b)
    with ap.GradientTape() as tape:
        out = f(x, y, dtype=dtype)
        w = np.cos(np.arange(out.size)).reshape(out.shape)
        loss = ap.reduce_sum(out * w.astype(dtype))
    gx, gy = tape.gradient(loss, [x, y])
    assert out.dtype == want.dtype == np.dtype(dtype)
    tol = 1e-6 if np.float32 in (src, dtype) else 1e-13
    np.testing.assert_allclose(out.numpy(), want, rtol=tol, atol=tol)
    # the gradient of sum(w * f(a, b)), f bilinear: f(e_i, b) and f(a, e_j) summed against w, by
    # numpy's own f in float64 (an independent route: no transpose rule is used)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    for g, arg, other, first in ((gx, a64, b64, True), (gy, b64, a64, False)):
        assert g.dtype == np.dtype(src)
        want_g = np.zeros(arg.shape)
        for i in np.ndindex(arg.shape):
            e = np.zeros(arg.shape)
            e[i] = 1.0
            want_g[i] = np.sum(w * (f(e, other) if first else f(other, e)))
        np.testing.assert_allclose(g.numpy(), want_g, rtol=tol * 10, atol=tol * 10)
