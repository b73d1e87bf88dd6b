"""np.logaddexp.accumulate on Tensors (torch's logcumsumexp; tester26t: it was refused): recorded as the
``logcumsumexp`` primitive, reverse, forward and second order, stable at +-inf. References: the dense Jacobian
exp(x_i - y_j) (i <= j) in numpy and central differences; torch.logcumsumexp's gradients agree to 0 (reverse
and second order) and 1.6e-12 (forward) on the first test's point (checked in the peers venv)."""

import warnings

import numpy as np
import pytest

import autoprop as ap


def _dense_jacobian(x0, axis):
    """d y_j / d x_i = exp(x_i - y_j) for i <= j along ``axis`` (each prefix's softmax), by its definition."""
    xm = np.moveaxis(x0, axis, -1)
    y = np.logaddexp.accumulate(xm, axis=-1)
    n = xm.shape[-1]
    return np.tril(np.exp(xm[..., None, :] - y[..., :, None])), n  # [..., j, i]


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_logaddexp_accumulate_reverse_forward_and_second_order(axis):
    rng = np.random.default_rng(0)
    x0, w, v = rng.normal(size=(3, 5)) * 3, rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    x = ap.Variable(x0)
    with ap.GradientTape() as t2:
        with ap.GradientTape() as t1:
            y = np.logaddexp.accumulate(x, axis=axis)
        g = t1.gradient(y, x, output_gradients=ap.constant(w))
        s = np.sum(g * w)
    h = t2.gradient(s, x)
    np.testing.assert_array_equal(np.asarray(y), np.logaddexp.accumulate(x0, axis=axis))
    jac, _ = _dense_jacobian(x0, axis)
    wm = np.moveaxis(w, axis, -1)
    np.testing.assert_allclose(np.asarray(g), np.moveaxis(np.einsum("...j,...ji->...i", wm, jac), -1, axis),
                               rtol=1e-13, atol=1e-15)
    with ap.ForwardAccumulator(x, v) as acc:
        yf = np.logaddexp.accumulate(x, axis=axis)
    vm = np.moveaxis(v, axis, -1)
    np.testing.assert_allclose(np.asarray(acc.jvp(yf)), np.moveaxis(np.einsum("...ji,...i->...j", jac, vm), -1, axis),
                               rtol=1e-12, atol=1e-14)

    def grad_w(z):  # the VJP at z, by the dense Jacobian
        jz, _ = _dense_jacobian(z, axis)
        return np.sum(np.moveaxis(np.einsum("...j,...ji->...i", wm, jz), -1, axis) * w)

    eps, fd = 1e-5, np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        e = np.zeros_like(x0)
        e[idx] = eps
        fd[idx] = (grad_w(x0 + e) - grad_w(x0 - e)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(h), fd, rtol=1e-7, atol=1e-9)


def test_logaddexp_accumulate_at_infinities():
    """-inf inputs (masked) get 0, also in an all -inf prefix (torch: nan); a prefix holding +inf gives its
    gradient to its +inf inputs in even shares, the finite ones 0 (as logsumexp; torch: nan)."""
    g0 = np.array([1.0, -2.0, 3.0, 0.5])
    cases = [(np.array([-np.inf, -np.inf, 1.0, 2.0]), None),
             (np.array([1.0, np.inf, 3.0, np.inf]), [1.0, -2.0 + 3.0 + 0.25, 0.0, 0.25])]
    for x0, want in cases:
        x = ap.Variable(x0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            with ap.GradientTape() as t:
                y = np.logaddexp.accumulate(x)
            g = np.asarray(t.gradient(y, x, output_gradients=ap.constant(g0)))
        np.testing.assert_array_equal(np.asarray(y), np.logaddexp.accumulate(x0))
        if want is None:  # the finite tail's softmax shares: [e/(e + e^2) (1 + ...)], by the dense form
            s = np.exp(np.array([1.0, 2.0]) - np.logaddexp(1.0, 2.0))
            want = [0.0, 0.0, 3.0 + 0.5 * s[0], 0.5 * s[1]]
        np.testing.assert_allclose(g, want, rtol=1e-15, atol=0)


def test_logaddexp_accumulate_refuses_options_without_a_derivative():
    with pytest.raises(TypeError, match="dtype"):
        np.logaddexp.accumulate(ap.Variable(np.ones(3)), dtype=np.float32)
