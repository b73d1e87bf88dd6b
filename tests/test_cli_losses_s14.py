"""Losses (session 14, tester13): integer labels of shape (N, 1) in both tracks' SoftmaxCrossEntropy (as Keras's
SparseCategoricalCrossentropy, which squeezes the last axis), a constant factor in a symmetric unnamed loss named,
and a sub-layer's bug named next to a ``log(y + eps)`` at high confidence. Each test fails on the code before its
fix.
"""

import numpy as np
import pytest

import autoprop as ap
import manualprop as mp

RNG = np.random.default_rng(3)
Z = RNG.standard_normal((6, 4))
Y = np.array([0, 3, 1, 2, 2, 1])


def _manual(y, **kw):
    loss = mp.SoftmaxCrossEntropy(**kw)
    value = loss(y, Z.copy())
    return value, loss.backward()


def _auto(y, **kw):
    z = ap.Variable(Z.copy(), name="z")
    with ap.GradientTape() as tape:
        value = ap.losses.SoftmaxCrossEntropy(**kw)(y, z)
    return float(np.asarray(value)), np.asarray(tape.gradient(value, z))


@pytest.mark.parametrize("track", [_manual, _auto])
@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"label_smoothing": 0.1}])
@pytest.mark.parametrize("column", [Y[:, None], Y[:, None].astype(np.int32), Y[:, None].tolist()])
def test_label_column_n_by_1_gives_the_loss_and_gradient_of_labels_n(track, kw, column):
    """Before: ValueError "y_true must be integer class labels of shape (6,) ...; got integer array of shape
    (6, 1)"; Keras's SparseCategoricalCrossentropy squeezes the last axis of (N, 1) labels."""
    want_value, want_grad = track(Y, **kw)
    value, grad = track(column, **kw)
    assert value == pytest.approx(want_value, rel=1e-12, abs=0.0)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=0.0)
    assert grad.shape == Z.shape


@pytest.mark.parametrize("track", [_manual, _auto])
def test_label_column_twice_still_right(track):
    """The shape checks are cached per (shape, dtype): a second call with (N, 1) labels takes the cached path."""
    want_value, want_grad = track(Y)
    for labels in (Y[:, None], Y[:, None][::-1][::-1]):
        value, grad = track(labels)
        assert value == pytest.approx(want_value, rel=1e-12, abs=0.0)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=0.0)


@pytest.mark.parametrize("track", [_manual, _auto])
@pytest.mark.parametrize("shape", [(6, 2), (1, 6), (6, 1, 1)])
def test_other_label_shapes_keep_the_clear_error(track, shape):
    labels = np.resize(Y, shape)
    with pytest.raises(ValueError, match=r"y_true must be integer class labels of shape \(6,\) or float "
                                         rf"probabilities of shape \(6, 4\); got integer array of shape "
                                         rf"\({shape[0]}, {shape[1]}"):
        track(labels)


@pytest.mark.parametrize("track", [_manual, _auto])
def test_label_column_out_of_range_is_named(track):
    with pytest.raises(ValueError, match=r"y_true labels must be in \[0, 4\); got min 0, max 4"):
        track(np.array([[0], [4], [1], [2], [2], [1]]))


# ---------------------------------------------------------------- finding 1: a factor in a symmetric unnamed loss

MSE_AB = """
import numpy as np
class MSE:
    def forward(self, a, b):
        self.a, self.b = a, b
        return np.mean((a - b) ** 2)
    def backward(self):
        return BACKWARD
"""


def _mse(tmp_path, backward, *extra, src=MSE_AB, shape="8,3"):
    from test_cli import both, run_here, student

    f = student(tmp_path, src.replace("BACKWARD", backward), "mse.py")
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", shape, *extra)
    return p, both(p)


@pytest.mark.parametrize(("backward", "pred", "c", "said"), [
    ("(self.a - self.b) / self.a.size", "a", "0.5", "factor 2 of the derivative of the square"),
    ("-(self.a - self.b) / self.a.size", "b", "0.5", "factor 2 of the derivative of the square"),
    ("4 * (self.a - self.b) / self.a.size", "a", "2", "2 times the correct gradient: a constant factor"),
    ("-3 * (self.a - self.b) / self.a.size", "b", "1.5", "1.5 times the correct gradient"),
    ("2 * (self.a - self.b) / len(self.a)", "a", "3", "a mean over all N*D = 24 elements of y_pred divides by 24, "
                                                     "not by N = 8"),
    ("2 * (self.a - self.b)", "a", "24", "the mean's 1/(N*D) is missing"),
])
def test_symmetric_unnamed_loss_with_a_wrong_factor_names_the_factor(tmp_path, backward, pred, c, said):
    """Before: "matches the central differences of L with respect to neither, but points along the one with
    respect to a": the factor, the same whichever argument is the prediction (only its sign changes), unnamed."""
    p, out = _mse(tmp_path, backward)
    other = "b" if pred == "a" else "a"
    assert p.returncode == 1, out
    assert (f"backward's result is {c} times the central differences of L with respect to {pred} and -{c} times "
            f"those with respect to {other} (dL/da = -dL/db, a loss of a - b): a constant factor is wrong whichever "
            f"is the prediction") in out, out
    assert f"{pred} is taken as the prediction" in out, out
    assert "FAIL: MSE: gradient mismatch in dy_pred." in out, out
    diagnosis = out.split("diagnosis: ")[1]
    assert said in diagnosis, out


def test_symmetric_unnamed_loss_correct_factor_is_still_the_usage_error(tmp_path):
    p, out = _mse(tmp_path, "2 * (self.a - self.b) / self.a.size")
    assert p.returncode == 2 and "only you can tell" in out, out


@pytest.mark.parametrize(("arg", "code"), [("a", 1), ("b", 1)])
def test_symmetric_loss_factor_with_pred_arg_is_named_in_either_order(tmp_path, arg, code):
    p, out = _mse(tmp_path, "(self.a - self.b) / self.a.size", "--pred-arg", arg)
    assert p.returncode == code, out
    assert "factor 2 of the derivative of the square" in out.split("diagnosis: ")[1], out


NAMED_POWER = """
import numpy as np
class MSE:
    def forward(self, y_pred, y_true):
        self.a, self.b = y_pred, y_true
        return np.mean(np.abs(y_pred - y_true) ** POWER)
    def backward(self):
        d = self.a - self.b
        return BACKWARD
"""


@pytest.mark.parametrize(("power", "backward", "said"), [
    ("2", "d / d.size", "the factor 2 of the derivative of the square (d/dx x**2 = 2 x) is missing"),
    ("3", "np.abs(d) * d / d.size", "the factor 3 of the derivative of the power 3 (d/dx x**3 = 3 x**2) is missing"),
    ("2", "3 * d / d.size", "1.5 times the correct gradient"),  # no 1/power: the plain factor sentence
])
def test_named_power_loss_missing_its_power_factor_is_named(tmp_path, power, backward, said):
    """Before: "0.5 times the correct gradient, half the true value (x0.5): a constant factor is wrong somewhere".
    (5 values a sample: a factor 1/3 is no N*D normalisation.)"""
    p, out = _mse(tmp_path, backward, src=NAMED_POWER.replace("POWER", power), shape="8,5")
    assert p.returncode == 1, out
    assert said in out.split("diagnosis: ")[1], out


# ---------------------------------------------------------------- finding 2: a sub-layer's bug beside log(y + eps)

SIGMOID_NET = """
class Sigmoid:
    def __init__(self):
        self.params, self.grads = [], []
    def forward(self, x):
        self.out = 1 / (1 + np.exp(-x)); return self.out
    def backward(self, dout):
        return dout * (1.0 - self.out) * self.out
class SigmoidNoOut(Sigmoid):
    def backward(self, dout):
        return dout * (1.0 - self.out)  # BUG: the factor out missing
class Net(TwoLayerNet):
    def __init__(self):
        super().__init__()
        self.layers.insert(1, SIGMOID())
        self.layers[2].params[0] *= SCALE
"""


def _sigmoid_net(tmp_path, sigmoid, scale, eps, console=False):
    from test_cli import both, run, run_here, student
    from test_cli_losses_s13 import DLFS2

    src = DLFS2.replace("EPS", eps) + SIGMOID_NET.replace("SIGMOID", sigmoid).replace("SCALE", scale)
    f = student(tmp_path, src, "sigmoid_net.py")
    p = (run if console else run_here)("check", f"{f}::Net", "--input-shape", "5,4", "--targets", "labels:3")
    return p, both(p)


@pytest.mark.parametrize(("scale", "eps"), [("30", " + 1e-7"), ("1", " + 1e-7"), ("1", "")])
def test_sigmoid_bug_in_a_model_is_localised_beside_the_log_eps(tmp_path, scale, eps):
    """Before: "dX differs from the correct gradient in 40 of 40 elements (no known bug pattern)" for each tensor:
    the sandboxed model's sub-layers were never checked one by one (a local model's are)."""
    p, out = _sigmoid_net(tmp_path, "SigmoidNoOut", scale, eps)
    assert p.returncode == 1, out
    diagnosis = out.split("diagnosis: ")[1]
    assert diagnosis.startswith("the first layer whose own check fails is layers[1] (SigmoidNoOut): dX differs"), out
    assert "inside np.log" not in diagnosis, out


def test_correct_sigmoid_model_keeps_the_log_eps_diagnosis(tmp_path):
    p, out = _sigmoid_net(tmp_path, "Sigmoid", "30", " + 1e-7")
    assert p.returncode == 0, out  # session 25 (tester25s M5): a PASS with the note, was a FAIL "not a bug"
    assert "backward is the derivative of the loss without the 1e-07 that forward adds inside a log" in out, out
    assert "whose own check fails" not in out, out


def test_correct_sigmoid_model_without_eps_passes(tmp_path):
    p, out = _sigmoid_net(tmp_path, "Sigmoid", "30", "", console=True)  # the console script
    assert p.returncode == 0, out
