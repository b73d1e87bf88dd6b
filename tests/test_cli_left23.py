"""Session 23 (left23): session 22's leftovers through the CLI in this process and through the diagnosis."""

import numpy as np
import pytest
from test_cli import both, run_here

from gradcheck.check_command import _target_values
from gradcheck.diagnose import name_ignored_target

IGNORE = "tests/buggy_layers/loss_ignore23.py"


@pytest.mark.parametrize(("cls", "code", "words"), [
    ("MaskedCE", 0, "PASS: MaskedCE"),
    ("MaskedCENoMask", 1, "dy_pred is not zero at the 4 of 12 rows whose target is -100, where the loss's gradient "
                          "is 0"),
    ("MaskedCEAllRows", 1, "dy_pred is 8/12 = 0.666667 times the correct gradient"),
])
def test_a_loss_ignoring_a_label_is_checked_with_labels_at_that_value(cls, code, words):
    """Session 22's leftover: a masked cross-entropy with ignore_index -100 passed a backward forgetting its mask, the
    drawn labels (0 to 3) never being -100. Forward compares the labels with -100, so the loss is checked again with
    every third label -100: the buggy ones FAIL, named; the correct one PASSes, its header saying so."""
    p = run_here("check", f"{IGNORE}::{cls}", "--loss", "--input-shape", "12,4", "--targets", "labels")
    text = " ".join(both(p).split())
    assert p.returncode == code, text
    assert ("forward compares labels with -100, which the drawn labels never hold: also checked with every third "
            "entry of labels set to -100") in text, text
    assert ("FAILS there" in text) == bool(code) and words in text, text


def test_target_values_replace_every_third_entry_only_with_a_value_the_draw_lacks():
    y = np.array([0, 1, 2, 3, 0, 1, 2])
    consts, y2 = _target_values([-100.0, 2.0, 0.5], y)  # 2 is drawn; 0.5 no integer label
    assert consts == [-100.0] and y2.dtype == y.dtype and y2.tolist() == [-100, 1, 2, -100, 0, 1, -100]
    assert _target_values([2.0], y) is None and _target_values([-1.0], y.astype(np.uint8)) is None
    assert _target_values([-100.0], y[:1]) is None  # one entry: it must keep a drawn value
    r = np.array([[0.5, -0.2], [1.5, 0.1]])
    consts, r2 = _target_values([0.0, -1.0, 7.0], r)  # floats: only beyond the drawn range
    assert consts == [-1.0, 7.0] and r2.ravel().tolist() == [-1.0, -0.2, 1.5, 7.0]


def test_ignored_target_names_only_a_gradient_zero_at_one_target_value():
    rng = np.random.default_rng(0)
    n = rng.standard_normal((6, 3))
    y = np.array([1, -100, 2, 0, -100, 1])
    n[y == -100] = 0.0
    m = n.copy()
    m[y == -100] = rng.standard_normal((2, 3))
    f = name_ignored_target("dy", m, n, y)
    assert f is not None and f.code == "ignored-target-not-masked" and "the 2 of 6 rows whose target is -100" in \
        f.message, f
    assert name_ignored_target("dy", n * 4 / 6, n, y).code == "ignored-target-count"
    m[0, 0] += 1  # a kept row wrong too: another bug
    assert name_ignored_target("dy", m, n, y) is None and name_ignored_target("dy", n, n, y) is None


def test_several_tensors_said_once_say_them_they_or_the_names_never_it():
    """Session 22's leftover: "dparams[0] and dparams[1] are all zeros: backward never computes it"."""
    from gradcheck.diagnose import Finding, _said_once

    def two(text):
        return _said_once([Finding("zero", text.replace("T", t), t) for t in ("dA", "dB")])

    assert two("T is all zeros: backward never computes T (or overwrites T with zeros)") == [
        "dA and dB are all zeros: backward never computes them (or overwrites them with zeros)."]
    assert two("T is 2 times too large, so T lacks x; the correct T is y; start T from zeros") == [
        "dA and dB are 2 times too large, so they lack x; the correct dA and dB are y; start them from zeros."]
    assert _said_once([Finding("zero", "dA is all zeros: backward never computes dA", "dA")]) == [
        "dA is all zeros: backward never computes dA."]


def test_twin_false_is_no_twin_and_true_is_auto():
    """Session 22's leftover: check_layer(..., twin=False) raised "The twin of Tanh has no 'variables' dict"."""
    from gradcheck import check_layer
    from gradcheck.errors import UsageError
    from manualprop import Tanh

    off = check_layer(Tanh(), (4, 3), twin=False)
    assert off.passed and off.twin is None and "tape" not in off.gradients
    on = check_layer(Tanh(), (4, 3), twin=True)
    assert on.passed and on.twin == "autoprop.layers.dense.Tanh" and "tape" in on.gradients
    with pytest.raises(UsageError, match=r"twin must be 'auto' \(or True\), None \(or False\)"):
        check_layer(Tanh(), (4, 3), twin="yes")


@pytest.mark.parametrize(("key", "code", "words"), [
    ("tester22s.py::EMACenterNoMeanPath", "mean-path-missing", "the correct gradient is dY - 0.1 * dY.mean(axis=0)"),
    ("session23.py::NablaWNoDerivative", "weight-skips-derivative", "dW = X.T @ dY: it takes dY itself"),
    ("lessons23.py::LSTMCellNoForgetGate", "lstm-line", "dC is what an LSTM step's backward gives with dc_prev = dc_t "
     "where dc_prev = dc_t * f is due"),  # session 36: the line of the LSTM step (gate-factor-missing before)
    ("session36.py::GatedInputNoGate", "gate-factor-missing", "dX1 is the correct gradient divided by a factor"),
    ("lessons23.py::GRUCellNoDirectPath", "gated-skip-missing", "dH lacks the direct path from H to the output"),
    ("lessons23.py::SelfAttentionLastUse", "attention-use-missing",
     "dX is the gradient through the value projection X @ W_v.T alone"),
    ("lessons23.py::ConvTranspose1DNoStride", "transposed-conv-stride", "reading dY at positions l + k"),
    ("lessons23.py::TwoBranchBlockDY", "branch-upstream-dY", "dA is the gradient dA would have if B were zero"),
])
def test_session_22s_unnamed_and_misnamed_bugs_are_named(key, code, words):
    """The lessons' planted bugs (newuser22) and tester22s's EMANorm_bug_const (named an activation's derivative)
    and NablaW_bug (no name): each named, its sentence the fix; the correct twins PASS (the planted-bug table)."""
    from tests.buggy_layers import diagnose, first_code

    d = diagnose(key)
    assert first_code(d) == code and words in d.sentence(), d.sentence()
