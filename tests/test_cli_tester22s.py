"""Session 22's tester's findings (tester22s, fixer fixs22) through the CLI in this process and through
:func:`gradcheck.diagnose.diagnose_layer`: a square weight symmetric at init hides a missing ``.T`` (H1)."""

import numpy as np
import pytest
from test_cli import both, run_here

from gradcheck.diagnose import _transpose_blind, diagnose_layer
from tests.buggy_layers import load

BUGGY = "tests/buggy_layers/tester22s.py"


@pytest.mark.parametrize("cls", ["SymTanhNoT", "SeedSymLinearNoT", "EyeDenseNoT"])
def test_symmetric_weight_at_init_is_checked_at_drawn_values(cls):
    """H1: dX = d @ W where d @ W.T is due passed while W was symmetric (the identity, (A + A.T) / 2); checked again
    at drawn values it FAILs, named the transposed weight, and the header says why."""
    p = run_here("check", f"{BUGGY}::{cls}", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 1 and f"FAIL: {cls}" in text, text
    assert "symmetric at init" in text and "hides a missing .T" in text and "FAILS at the drawn ones" in text, text
    assert "transposed weight" in text, text


@pytest.mark.parametrize("cls", ["SymTanh", "SeedSymLinear", "EyeDense"])
def test_symmetric_weight_correct_twin_passes_at_both_points(cls):
    layer, X, kw = load(f"tester22s.py::{cls}")
    d = diagnose_layer(layer, X, **kw)
    assert d.passed and d.drawn == ["W"] and not d.drawn_failed, d.report()
    assert d.drawn_words in ("symmetric", "identity"), d.drawn_words


def test_transpose_blind_weights():
    """Square, 2 x 2 or more, equal to its transpose within 1e-6 relative, not constant (that rule is its own)."""
    A = np.random.default_rng(0).standard_normal((3, 3))
    assert _transpose_blind(A + A.T) and _transpose_blind(np.eye(3)) and _transpose_blind(np.diag([1.0, 2, 3]))
    assert not _transpose_blind(A) and not _transpose_blind(np.ones((3, 3)))  # constant: constant_params' rule
    assert not _transpose_blind(np.eye(1)) and not _transpose_blind(np.eye(3)[:2]) and not _transpose_blind(A[0])
    assert not _transpose_blind(np.eye(3, dtype=int))


def test_weight_behind_a_property_is_paired_with_its_public_gradient():
    """H2: W a property over self._w and backward's self.dW twice the right value: "_w is a parameter with no gradient
    to check" then PASS before; now dW is checked (named dW, the student's name) and FAILs as a factor 2."""
    p = run_here("check", f"{BUGGY}::PropWDouble", "--input-shape", "5,3")
    text = both(p)
    assert p.returncode == 1 and "FAIL: PropWDouble: gradient mismatch in dW." in text, text
    assert "dW is 2 times the correct gradient" in text and "no gradient to check" not in text, text
    p = run_here("check", f"{BUGGY}::PropW", "--input-shape", "5,3")
    assert p.returncode == 0 and "PASS: PropW: every gradient (dX, dW) matches" in both(p), both(p)


@pytest.mark.parametrize(("cls", "what", "got"), [("IntWeights", "W", "ndarray of dtype int64"),
                                                  ("IntScale", "s", "int")])
def test_integer_attribute_with_a_gradient_is_refused_as_a_params_dict_entry_is(cls, what, got):
    """H3: an integer attribute backward writes a gradient for is a parameter: exit 3 with the params dict's message
    (it was skipped: "a class with forward/backward and no parameters", then PASS with a wrong dW or ds)."""
    p = run_here("check", f"{BUGGY}::{cls}", "--input-shape", "5,4" if cls == "IntScale" else "5,3")
    text = both(p)
    assert p.returncode == 3, text
    assert (f"{cls}.{what} must be a numpy float array (it is perturbed in place to compute the numerical "
            f"gradient); got {got} (backward writes a gradient for it, so it is a parameter). Write it as float") \
        in text, text


def test_integer_counter_beside_a_time_step_is_no_parameter():
    """self.t = 0 (an int) beside self.dt = 0.1 that backward never writes: not a parameter, the layer checked."""
    p = run_here("check", f"{BUGGY}::IntCounter", "--input-shape", "5,4")
    assert p.returncode == 0 and "PASS: IntCounter: every gradient (dX, ds) matches" in both(p), both(p)

