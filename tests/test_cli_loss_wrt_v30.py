"""review30 WRT_FIRST_SILENT and LOSS_DTYPE_YPRED_WORDING: ``cost(x, w) -> (J, dJ/dw)`` with x (the data of
--input-shape) and w (--init) of one shape: the gradient was taken as x's silently and correct code FAILed with "no
known bug pattern"; a float32 warning called ``cost(a, b)``'s a "y_pred"."""

import json

from test_cli import both, run_here, student

COST = """
import numpy as np


def cost(x, w):
    r = x * w - 1.0
    return np.sum(r ** 2), K * r * x
"""
INIT = json.dumps({"w": [0.5, -1.0, 2.0]})


def _check(tmp_path, k, *more):
    p = run_here("check", f"{student(tmp_path, COST.replace('K', k), 'cost.py')}::cost", "--loss", "--input-shape",
                 "3", "--init", INIT, *more)
    return p, " ".join(both(p).split())


def test_a_gradient_of_the_shape_of_two_arguments_is_told_by_its_central_differences(tmp_path):
    """Was: exit 1, 'FAIL cost dx', no word of --wrt."""
    p, text = _check(tmp_path, "2")
    assert p.returncode == 0, text
    assert "the gradient of w is checked there, x fixed at data of shape (3,)" in text, text
    assert "whose gradient: w, gradient 1 (3,) fits x and w, and agrees with central differences of w alone" in text


def test_a_gradient_of_neither_is_exit_2_naming_wrt_and_with_wrt_a_fail(tmp_path):
    p, text = _check(tmp_path, "3")
    assert p.returncode == 2, text
    assert ("gradient 1 (3,) fits x and w and agrees with central differences of none of them" in text and
            "with --wrt (e.g. --wrt w, choosing among x|w; x is the data of --input-shape)" in text), text
    p, text = _check(tmp_path, "3", "--wrt", "w")
    assert p.returncode == 1 and "FAIL cost dw" in text, text


def test_a_float32_warning_names_the_argument_as_the_function_does(tmp_path):
    """review30: the float32 warning said y_pred for cost(a)'s a. With a float32 --init array beside it (b), the
    function is checked on its float64 copy instead (left31: a loss float32 by --init arrays alone), whose note
    names no y_pred either."""
    src = """
import numpy as np


def cost_dt(a):
    return np.sum(a.astype(np.float64) ** 2), 2 * a.astype(np.float64)


def cost_dtb(a, b):
    return np.sum(a.astype(np.float64) ** 2 * b), 2 * a.astype(np.float64) * b
"""
    f = student(tmp_path, src, "dt.py")
    p = run_here("check", f"{f}::cost_dt", "--loss", "--input-shape", "3", "--dtype", "float32")
    text = " ".join(both(p).split())
    assert "warning: a of cost_dt is float32; upcasting to float64" in text and "y_pred" not in text, text
    p = run_here("check", f"{f}::cost_dtb", "--loss", "--input-shape", "3", "--init", '{"b": [1.0, 2.0, 3.0]}',
                 "--dtype", "float32")
    text = " ".join(both(p).split())
    assert p.returncode == 0 and "the gradient of a is checked" in text and "y_pred" not in text, text

