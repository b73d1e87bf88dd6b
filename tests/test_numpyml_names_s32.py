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
    assert "grad(y, y_pred, z, act_fn) / cosh(z) with act_fn a non-identity activation, fn = sinh" in text, text
    assert (f"PASS: {cls}: dL/dy_pred matches" if code == 0 else f"FAIL: {cls}: gradient mismatch in dy_pred") \
        in text, text


@pytest.mark.parametrize(("cls", "code"), [("HalfSquaredNoAct", 1), ("HalfSquaredUsesZ", 1), ("HalfSquaredFnZ", 0)])
def test_loss_grad_is_checked_through_a_non_identity_activation(cls, code):
    """newuser32 F1 (a wrong PASS): grad(y, y_pred, z, act_fn) was called with z = y_pred and the identity only, so a
    grad without act_fn.grad(z) passed; now act_fn is sinh (fn, grad = cosh), z = arcsinh(y_pred): a grad that drops
    act_fn.grad(z) FAILs, act_fn.fn(z) with act_fn.grad(z) (numpy-ml's output layer: y_pred = act_fn.fn(z)) passes."""
    p = run_here("check", f"{FIX}::{cls}", "--loss", "--input-shape", "5,3")
    text = " ".join(both(p).split())
    assert p.returncode == code, text
    assert (f"PASS: {cls}: dL/dy_pred matches" if code == 0 else f"FAIL: {cls}: gradient mismatch in dy_pred") \
        in text, text


@pytest.mark.parametrize(("cls", "targets", "code"), [("SoftmaxCrossEntropy", "onehot", 0),
                                                      ("SoftmaxCrossEntropy", "probs", 0),
                                                      ("SoftmaxCrossEntropyMean", "onehot", 1)])
def test_cross_entropy_grad_is_checked_through_the_softmax(cls, targets, code):
    """newuser32 F2: numpy-ml's CrossEntropy (loss(y, y_pred), grad(y, y_pred) = dL/dz, y_pred = softmax(z)) was
    refused, exit 2, 'has no forward() method'; now checked as dL/dz of the loss of softmax(z)."""
    p = run_here("check", f"{FIX}::{cls}", "--loss", "--input-shape", "4,3", "--targets", targets)
    text = " ".join(both(p).split())
    assert p.returncode == code, text
    assert "dL/dz = grad(y, y_pred) with y_pred = softmax(z) over the last axis" in text, text
    assert (f"PASS: {cls}: dL/dy_pred matches" if code == 0 else f"FAIL: {cls}: gradient mismatch in dy_pred") \
        in text, text


def test_cross_entropy_grad_with_real_targets_is_told_to_use_onehot():
    """y_pred - y is dL/dz only for targets whose rows sum to 1: with the default real targets, said so."""
    p = run_here("check", f"{FIX}::SoftmaxCrossEntropy", "--loss", "--input-shape", "4,3")
    text = " ".join(both(p).split())
    assert p.returncode != 0 and "PASS" not in text, text
    assert "numpy-ml's CrossEntropy convention" in text and "add --targets onehot" in text, text


def test_numpyml_loss_without_loss_flag_is_told_to_add_it():
    p = run_here("check", f"{FIX}::HalfSquared", "--input-shape", "5,3")
    text = " ".join(both(p).split())
    assert p.returncode == 2 and "HalfSquared has loss(y, y_pred) and grad(y, y_pred, z, act_fn)" in text, text
    assert "numpy-ml's loss protocol: a loss, not a layer. Check it with --loss" in text, text
