"""A loss function with its derivative beside it (tester22s losses2.py: ``mse(y_true, y_pred) -> float`` and
``mse_prime(y_true, y_pred) -> dL/dy_pred``, the tutorial style), found from ``path.py::mse`` by the suffix
``_prime``/``_grad``/``_derivative`` as CS231n pairs are by ``NAME_forward``/``NAME_backward`` (was exit 3,
'mse must return (loss, dx); got float64')."""

import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck import check_loss, loss_function

SRC = """
import numpy as np

def mse(y_true, y_pred):
    return np.mean((y_true - y_pred) ** 2)

def mse_SUFFIX(y_true, y_pred):
    return 2 * (y_pred - y_true) / DIV

def bce(p, y):
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))

def bce_grad(p, y):
    return ((1 - y) / (1 - p) - y / p) / y.size
"""


@pytest.mark.parametrize("suffix", ["prime", "grad", "derivative"])
@pytest.mark.parametrize("div, rc", [("y_true.size", 0), ("y_true.shape[0]", 1)])
def test_mse_with_its_derivative_beside_it(tmp_path, suffix, div, rc):
    f = student(tmp_path, SRC.replace("SUFFIX", suffix).replace("DIV", div), "losses.py")
    p = run_here("check", f"{f}::mse", "--loss", "--input-shape", "6,3")
    out = both(p)
    assert p.returncode == rc, out
    assert (f"loss: mse(y_true=y_true, y_pred=y_pred) -> loss and mse_{suffix}(y_true=y_true, y_pred=y_pred) -> "
            f"dL/dy_pred (a loss function with its derivative mse_{suffix} beside it): the prediction goes to "
            "y_pred") in out, out
    if rc:
        assert "FAIL: mse: gradient mismatch in dy_pred." in out and "3 times too large" in out, out
    else:
        assert "PASS: mse: dL/dy_pred matches" in out


def test_the_derivative_pair_against_the_closed_form():
    rng = np.random.default_rng(0)
    p, y = rng.uniform(0.1, 0.9, (4, 3)), rng.integers(0, 2, (4, 3)).astype(float)
    ns = {}
    exec(SRC.replace("SUFFIX", "prime").replace("DIV", "y_true.size"), ns)  # noqa: S102 - the test's own source
    loss = loss_function(ns["bce"])
    assert loss.forward(y, p) == pytest.approx(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    assert np.allclose(loss.backward(), (p - y) / (p * (1 - p)) / y.size, rtol=1e-13)
    assert loss.gradient_name == "dp"
    assert check_loss(loss_function(ns["mse"]), y, p, twin=None).passed


SWAPPED = """
import numpy as np

def mse(y_pred, y_true):
    return np.mean((y_pred - y_true) ** 2)

def mse_prime(y_true, y_pred):
    return 2 * (y_pred - y_true) / y_true.size
"""


def test_the_derivative_is_called_in_its_own_names_order(tmp_path):
    """review23: mse(y_pred, y_true) beside mse_prime(y_true, y_pred) (each order said by its names) FAILed, the
    derivative handed the arguments in the loss's order (its result the exact gradient's negative, relative error
    1.0), while the header said mse_prime(y_pred=y_pred, y_true=y_true)."""
    f = student(tmp_path, SWAPPED, "losses.py")
    p = run_here("check", f"{f}::mse", "--loss", "--input-shape", "6,3")
    out = both(p)
    assert p.returncode == 0 and "PASS: mse: dL/dy_pred matches" in out, out
    assert "mse(y_pred=y_pred, y_true=y_true) -> loss and mse_prime(y_true=y_true, y_pred=y_pred)" in out, out
    rng = np.random.default_rng(1)
    yp, yt = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    ns = {}
    exec(SWAPPED, ns)  # noqa: S102 - the test's own source
    loss = loss_function(ns["mse"])
    assert loss.forward(yt, yp) == pytest.approx(np.mean((yp - yt) ** 2), rel=1e-15)
    np.testing.assert_allclose(loss.backward(), 2 * (yp - yt) / yt.size, rtol=1e-15)
