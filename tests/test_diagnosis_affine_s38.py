"""newuser38 F1: a dW that forgets what W multiplies in an affine forward is not told of a missing activation
derivative; and a fault in gradcheck's own diagnosis code at the second point (drawn parameters) is raised, never
read as "cannot be checked there" (which left the first point's PASS standing: the FAIL was lost)."""

import pytest
from buggy_layers import diagnose, first_code

import gradcheck.diagnose as D


def test_affine_layer_dw_without_the_shift_is_not_told_of_a_nonlinearity():
    d = diagnose("lead38.py::ShiftLinearDW")
    assert not d.passed and d.drawn_failed  # b is zeros at init: the bug shows at the drawn b only
    assert first_code(d) == "weight-not-on-input", d.sentence()  # before: weight-skips-derivative
    s = " ".join(d.sentence().split())
    assert "forward is affine in X" in s and "nonlinearity to Z" not in s and "f'(Z)" not in s, s


def test_the_correct_affine_layer_passes():
    assert diagnose("lead38.py::ShiftLinear").passed


def test_a_dense_tanh_layer_keeps_the_missing_derivative_sentence():
    d = diagnose("session23.py::NablaWNoDerivative")  # not affine: the activation's derivative is what is missing
    assert first_code(d) == "weight-skips-derivative", d.sentence()


def test_an_own_fault_at_the_drawn_point_is_raised_not_a_pass(monkeypatch):
    broken = D.DIAGNOSES["weight-not-on-input"]._replace(message="{eq}: {no_such_field}")
    monkeypatch.setitem(D.DIAGNOSES, "weight-not-on-input", broken)
    with pytest.raises(KeyError, match="no_such_field"):
        diagnose("lead38.py::ShiftLinearDW")
