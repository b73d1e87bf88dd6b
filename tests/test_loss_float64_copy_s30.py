"""A float32 loss (``--loss``) gets the float64 copy a float32 layer gets (session 30; session 29's leftover).

Before, ``gradcheck check --loss --dtype float32`` judged a float32 loss on its own numbers: its y_pred was upcast
with a warning, its declared float32 dtypes kept, and the central differences of its L were float32 noise: a correct
MSE that computes in float32 FAILed "no known bug pattern ... expected 0.0393725" (a noisy estimate printed as the
expected value), with or without ``--dtype``. Now, as for a layer (``_in_float64``): given ``--dtype float32`` its
float32 code is checked on a float64 copy of its files (the note says so and what it does not cover), and its own
float32 backward, at the same y_pred, is compared with the copy's within float32's round-off; given float64 (no
``--dtype``) it is a downcast, whose FAIL stands, naming the line and ``--dtype float32`` instead of a noisy value."""

import re

import pytest
from test_cli import check_source

MSE32 = '''import numpy as np


class MSE32:
    def forward(self, y_true, y_pred):
        self.d = np.asarray(y_pred, dtype=np.float32) - np.asarray(y_true, dtype=np.float32)
        return float(np.mean(self.d ** 2))

    def backward(self):
        return FACTOR * self.d / self.d.size
'''
ARGS = ("--loss", "--input-shape", "4,3")


def _check(tmp_path, factor, *extra):
    return check_source(tmp_path, MSE32.replace("FACTOR", factor), "MSE32", *ARGS, *extra, file="mse32.py")


def test_a_correct_float32_loss_passes_on_its_float64_copy_with_dtype_float32(tmp_path):
    """Was: exit 1, "diagnosis: dy_pred differs from the correct gradient in 12 of 12 elements (no known bug
    pattern) ... expected 0.0393725"."""
    code, text = _check(tmp_path, "2", "--dtype", "float32")
    assert code == 0 and "PASS: MSE32 (its float32 code checked on a float64 copy: see the note)" in text, text
    assert "note: MSE32 computes in float32 (mse32.py line 6: self.d = np.asarray(y_pred, dtype=np.float32)" in text
    assert "Its own float32 backward, run at the same y_pred, gives the copy's gradient within float32's " \
           "round-off (tolerance 3.5e-04)" in text, text
    assert "y_pred of MSE32 is float32" not in text, text  # the copy is given float64, no upcast warned of


def test_a_doubled_float32_loss_fails_on_its_copy_naming_the_factor(tmp_path):
    code, text = _check(tmp_path, "4", "--dtype", "float32")
    assert code == 1 and "FAIL: MSE32: gradient mismatch in dy_pred." in text, text
    assert "dy_pred is 2 times the correct gradient" in text, text


def test_a_float32_only_branch_of_a_loss_is_its_own_backwards_fail(tmp_path):
    """The copy (float64 d) takes the other branch and passes; the loss's own float32 backward gives twice it."""
    code, text = _check(tmp_path, "(4 if self.d.itemsize == 4 else 2)", "--dtype", "float32")
    assert code == 1 and "FAIL: MSE32: its own code gives another dy_pred than its float64 copy, which passed." \
        in text, text
    assert re.search(r"MSE32's own float32 code gives dy_pred 2 times its float64 copy's", text), text


@pytest.mark.parametrize("factor", ["2", "(4 if self.d.itemsize == 4 else 2)"])
def test_without_dtype_a_float32_loss_is_a_downcast_naming_the_line_and_the_option(tmp_path, factor):
    """Was: "no known bug pattern ... got 0.0278279, expected 0.0393725", the expected value float32 noise."""
    code, text = _check(tmp_path, factor)
    assert code == 1 and "FAIL: MSE32: gradient mismatch in dy_pred." in text, text
    assert "diagnosis: MSE32 was given float64 y_pred, and its source makes float32 at line 6:" in text, text
    assert "if MSE32 is meant to run in float32, check it with --dtype float32" in text, text
    assert "expected" not in text.partition("diagnosis:")[2], text
