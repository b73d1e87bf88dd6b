"""``method='complex'`` differences a complex-analytic forward by the complex step (fixn22 #2): check_output refused
forward's complex128 output, so every layer fell back to central differences under a footer saying 'complex step,
eps=6.06e-06'. Checked against HIPS autograd (the oracle) and central differences."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

from gradcheck import check_layer
from gradcheck.numerical import numerical_jacobian

RNG = np.random.default_rng(3)
W0, X0 = RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3))
G0 = RNG.standard_normal((4, 2))


class TanhLinear:
    def __init__(self):
        self.params, self.grads = {"W": W0.copy()}, {}

    def forward(self, X, training=False):
        self.X = X
        return np.tanh(X @ self.params["W"])

    def backward(self, dY):
        dZ = dY * (1 - np.tanh(self.X @ self.params["W"]) ** 2)
        self.grads["W"] = self.X.T @ dZ
        return dZ @ self.params["W"].T


def test_the_complex_step_differences_dx_to_machine_precision():
    res = check_layer(TanhLinear(), X0, twin=None, method="complex", mode="full", upstream=G0)
    oracle = autograd.grad(lambda X: anp.sum(anp.tanh(X @ W0) * G0))(X0)
    num = res.gradients["numerical"]["dX"]
    assert np.max(np.abs(num - oracle)) <= 1e-14 * np.max(np.abs(oracle))  # central: ~1e-10
    central = np.sum(numerical_jacobian(lambda X: np.tanh(X @ W0), X0).reshape(4, 2, 4, 3) * G0[:, :, None, None],
                     axis=(0, 1))
    assert np.max(np.abs(num - central)) < 1e-8
    assert res.passed and res.complex_step == ["dX"]
    words = " ".join(res.table().split())
    assert "numerical = complex step Im L(x+ih)/h with h=1e-20 for dX; central differences for dW" in words
    assert "parameters are checked by central differences" in words


def test_a_forward_that_is_not_analytic_says_so_and_the_footer_names_central_differences():
    class Abs:
        params, grads = {}, {}

        def forward(self, X, training=False):
            self.X = X
            return np.abs(X)

        def backward(self, dY):
            return dY * np.sign(self.X)
    res = check_layer(Abs(), X0, twin=None, method="complex", mode="full")
    words = " ".join(res.table().split())
    assert res.complex_step == [] and "complex step not used for @X" in words
    assert "numerical = central differences (the complex step was asked for but not used: see the notes)" in words


@pytest.mark.parametrize("mode", ["fast"])
def test_fast_mode_that_never_needed_the_complex_step_says_so(mode):
    res = check_layer(TanhLinear(), X0, twin=None, method="complex", mode=mode)
    assert res.passed and "the complex step, asked for, differences only a tensor whose directional test fails" in \
        " ".join(res.table().split())


class TanhPlusTinyAbs:
    """tanh(X) + 1e-6 |X|, whose backward forgets the 1e-6 sign(X) (review23)."""
    params, grads = {}, {}

    def forward(self, X, training=False):
        self.X = X
        return np.tanh(X) + 1e-6 * np.abs(X)

    def backward(self, dY):
        return dY * (1 - np.tanh(self.X) ** 2)


def test_a_small_non_analytic_term_is_not_differenced_by_the_complex_step():
    """review23: the screen let tanh(X) + 1e-6 |X| through (complex step and central differences 1.7e-6 apart, under
    its 1e-5), and the complex step, blind to abs's derivative, PASSed a backward missing 1e-6 sign(X) that central
    differences FAIL. At a tenth of rtol, beyond Richardson's round-off, the screen refuses it: the verdicts agree."""
    X = np.random.default_rng(0).standard_normal((50, 40))
    central = check_layer(TanhPlusTinyAbs(), X, twin=None, method="central", mode="full")
    cx = check_layer(TanhPlusTinyAbs(), X, twin=None, method="complex", mode="full")
    assert not central.passed and not cx.passed and cx.complex_step == []
    assert "complex step not used for @X" in " ".join(cx.table().split())


@pytest.mark.parametrize("seed", range(8))
def test_the_screen_takes_analytic_forwards_with_steep_directions(seed):
    """The screen's finite difference is Richardson's: central differences' truncation put tanh(X @ W) (W of 60 rows)
    2.4e-7 off along some directions, above the 1e-7 screen."""
    from gradcheck.numerical import complex_step_supported

    rng = np.random.default_rng(seed)
    W, X = rng.standard_normal((60, 40)), rng.standard_normal((50, 60))
    for f in (lambda X: np.tanh(X @ W), lambda X: np.exp(3 * X), lambda X: np.cos(5 * X)):
        G = rng.standard_normal(f(X).shape)
        assert complex_step_supported(f, [X], 0, G, np.random.default_rng(seed)) == (True, "")
