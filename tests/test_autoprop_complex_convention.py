"""The gradient of a real loss with respect to a complex source, at the public boundary:
TensorFlow's and PyTorch's convention, dL/dx + i dL/dy (z = x + iy), the steepest-ascent
direction, so `w.assign_sub(lr * tape.gradient(loss, w))` descends. Inside, every VJP keeps
HIPS autograd's convention (dL/dx - i dL/dy; autoprop/core/complex.py); tape.gradient,
jacobian/batch_jacobian of a real target and output_gradients conjugate at the boundary.
Reference values: torch 2 (z.grad after L.backward()), stored."""

import numpy as np
import pytest

import autoprop as ap

Z0 = np.array([0.3 + 0.8j, -1.1 + 0.4j, 0.7 - 0.5j])
A = np.array([[1.0 + 0.5j, -0.3j, 0.2], [0.4, 1.2 - 0.1j, 0.3 + 0.3j], [-0.2j, 0.1, 0.9]])

# torch: z = torch.tensor(Z0, requires_grad=True); f(torch, z).backward(); z.grad
TORCH = {
    "abs2": (lambda z: np.sum(np.abs(z) ** 2), [0.6 + 1.6j, -2.2 + 0.8j, 1.4 - 1j]),
    "real_exp": (lambda z: np.sum(np.real(np.exp(z) * (0.3 - 0.7j))),
                 [0.9599673126011786 + 0.3678201502959922j, 0.18271664529906434 + 0.1757283681731824j,
                  -0.14564085546560918 + 1.5266973249433422j]),
    "abs_matmul": (lambda z: np.sum(np.abs(A @ z)),
                   [0.48904001048624424 + 1.396864093307983j, -1.0556815341431278 + 0.8455896126793171j,
                    0.8077993189817482 + 0.10878440170817749j]),
    "angle_log": (lambda z: np.sum(np.angle(z) + np.imag(np.log(z))),
                  [-2.191780821917808 + 0.821917808219178j, -0.5839416058394159 - 1.6058394160583938j,
                   1.3513513513513513 + 1.8918918918918917j]),
    "conj_mul": (lambda z: np.sum(np.real(np.conj(z) * z * (1 + 2j))), [0.6 + 1.6j, -2.2 + 0.8j, 1.4 - 1j]),
}


@pytest.mark.parametrize("name", sorted(TORCH))
def test_complex_gradient_is_torchs(name):
    f, ref = TORCH[name]
    z = ap.Variable(Z0.copy())
    with ap.GradientTape(persistent=True) as tape:
        loss = f(z)
        twice = np.stack([loss, 2.0 * loss])
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(tape.jacobian(twice, z).numpy(), [ref, 2 * np.array(ref)], rtol=1e-12, atol=1e-15)


def test_gradient_descent_on_a_complex_variable_converges():
    """tester 19's repro: the minimum of |w - c|^2 at c = 1 + 1j (the step climbed in Im before)."""
    c = np.array([1.0 + 1.0j])
    w = ap.Variable(np.array([0.0 + 0.0j]))
    for step in range(30):
        with ap.GradientTape() as tape:
            loss = np.sum(np.abs(w - c) ** 2)
        g = tape.gradient(loss, w)
        if step == 0:
            np.testing.assert_allclose(g.numpy(), [-2.0 - 2.0j])  # torch's, 2 (w - c)
        w.assign_sub(0.1 * g)
    assert abs(w.numpy()[0] - c[0]) < 2e-3


def test_output_gradients_for_a_complex_target_are_in_the_same_convention():
    """L = Re(conj(v) . y) has gradient v for y (TF's pairing of an upstream gradient);
    y = 2 z gives dL/dz = 2 v, what torch's y.backward(v) gives (z.grad = 2 v)."""
    v = np.array([1.0 - 2.0j, 0.5j, 3.0])
    z = ap.Variable(Z0.copy())
    with ap.GradientTape(persistent=True) as tape:
        y = 2.0 * z
        loss = np.sum(np.real(np.conj(v) * y))
    np.testing.assert_allclose(tape.gradient(y, z, output_gradients=v).numpy(), 2 * v, rtol=1e-15)
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), 2 * v, rtol=1e-15)


def test_a_real_source_and_the_jacobian_of_a_complex_target_are_unchanged():
    x = ap.Variable(np.array([0.5, -1.0]))
    with ap.GradientTape(persistent=True) as tape:
        y = np.exp(1j * x)
        loss = np.sum(np.imag(y))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.cos(x.numpy()), rtol=1e-15)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), np.diag(1j * np.exp(1j * x.numpy())), rtol=1e-15)


def test_hessian_vector_product_of_a_complex_source_follows_the_convention():
    """L = |z|^2: the gradient is 2 z (torch: z.grad = 2 z); differentiating <Re, conj(v) . grad>
    again gives 2 v, the Hessian-vector product in the same convention."""
    v = np.array([1.0 + 1.0j, -0.5j, 2.0])
    z = ap.Variable(Z0.copy())
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            loss = np.sum(np.abs(z) ** 2)
        g = inner.gradient(loss, z)
        np.testing.assert_allclose(g.numpy(), 2 * Z0, rtol=1e-15)
        s = np.sum(np.real(np.conj(v) * g))
    np.testing.assert_allclose(outer.gradient(s, z).numpy(), 2 * v, rtol=1e-14)


def test_an_optimizer_refuses_a_complex_gradient_without_suggesting_to_drop_its_imaginary_part():
    w = ap.Variable(np.array([0.0 + 0.0j]))
    with ap.GradientTape() as tape:
        loss = np.sum(np.abs(w - (1.0 + 1.0j)) ** 2)
    with pytest.raises(TypeError, match=r"complex128: the layers and optimizers work on real values") as err:
        ap.optimizers.SGD(0.1).apply_gradients([(tape.gradient(loss, w), w)])
    assert "astype" not in str(err.value) and "w.assign_sub(lr * g)" in str(err.value)
