"""Session 32 (left32): numpy-ml's activations (``fn(z)``, ``grad(x, **kwargs)``) and losses (``loss(y, y_pred)``,
``grad(y, y_pred, z, act_fn)``) read by their names, the rows of the one table gradcheck reads ML-From-Scratch's by
(``gradcheck._adapters.ACTIVATION_NAMES``, ``LOSS_NAMES``; tester31m M4, M5: refused, exit 2, "Public methods found:
fn(), grad()"). Our own fixture in numpy-ml's names (tests/fixtures/numpyml_style.py)."""

import os

import pytest
from test_cli import both, run_here

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "numpyml_style.py")


@pytest.mark.parametrize(("cls", "code"), [("Softsign", 0), ("SoftsignBug", 1), ("Identity", 0)])
def test_activation_fn_grad_is_checked(cls, code):
    p = run_here("check", f"{FIX}::{cls}", "--input-shape", "5,3")
    text = " ".join(both(p).split())
    assert p.returncode == code, text
    assert "numpy-ml's activation protocol: forward is fn(x), backward is dX = dY * grad(x)" in text, text
    assert (f"PASS: {cls}: every gradient (dX) matches" if code == 0 else f"FAIL: {cls}: gradient mismatch in dX") \
        in text, text


@pytest.mark.parametrize(("cls", "code"), [("HalfSquared", 0), ("HalfSquaredBug", 1)])
def test_loss_grad_through_the_identity_is_checked(cls, code):
    p = run_here("check", f"{FIX}::{cls}", "--loss", "--input-shape", "5,3")
    text = " ".join(both(p).split())
    assert p.returncode == code, text
    assert "numpy-ml's loss protocol: L = the sum of loss(y, y_pred)'s per-element losses" in text, text
    assert "grad(y, y_pred, z, act_fn) with z = y_pred and act_fn the identity" in text, text
    assert (f"PASS: {cls}: dL/dy_pred matches" if code == 0 else "dy_pred has the wrong sign") in text, text


def test_numpyml_loss_without_loss_flag_is_told_to_add_it():
    p = run_here("check", f"{FIX}::HalfSquared", "--input-shape", "5,3")
    text = " ".join(both(p).split())
    assert p.returncode == 2 and "HalfSquared has loss(y, y_pred) and grad(y, y_pred, z, act_fn)" in text, text
    assert "numpy-ml's loss protocol: a loss, not a layer. Check it with --loss" in text, text
