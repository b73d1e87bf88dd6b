"""Session 8's verdicts per mode, on the planted bugs of tests/buggy_layers as ``gradcheck check``
prints them: an eval forward that updates its running statistics is named as such (T13, not "a
dropout mask"); every failing mode prints its FAIL line and diagnosis (a Dropout wrong in both
modes); --eval alone checks a Dropout after a training forward (T12: a stale mask, in backward or
in the eval forward, FAILs; a right one PASSes)."""

from pathlib import Path

import pytest

from gradcheck.cli import main

LAYERS = Path(__file__).resolve().parent / "buggy_layers"


def run(capsys, key, shape, *extra):
    code = main(["check", str(LAYERS / key), "--input-shape", shape, *extra])
    out = capsys.readouterr()
    return code, " ".join((out.out + out.err).split())


def test_eval_forward_that_updates_running_statistics_is_named(capsys):
    code, text = run(capsys, "norm.py::BatchNormEvalUpdatesRunning", "6,4", "--eval")
    assert code == 1, text
    assert "FAIL: BatchNormEvalUpdatesRunning: forward changes the layer's state (see the diagnosis)." in text
    assert "forward(X, training=False) changes the layer's state" in text
    assert "so the forward is not random" in text and "running statistics updated in eval mode" in text
    assert "update running_mean and running_var only when training=True" in text
    assert "dropout" not in text.lower(), text


def test_every_failing_mode_has_its_fail_line_and_diagnosis(capsys):
    code, text = run(capsys, "activations.py::DropoutNoScaleBothModes", "5,4")
    assert code == 1, text
    assert ("FAIL: DropoutNoScaleBothModes [eval]: gradient mismatch in dX. diagnosis: dX is dY times a mask "
            "(entries 0 and 1) while the forward is the identity") in text
    assert ("FAIL: DropoutNoScaleBothModes [training]: gradient mismatch in dX. diagnosis: dX is dY times a mask "
            "with entries 0 and 1 while the forward multiplies X by a mask with entries 0 and 2: the forward's "
            "scale 2 (1 / the keep probability) is missing in backward") in text
    assert "dX = dY * self.mask" in text


@pytest.mark.parametrize("cls, code, words", [
    ("DropoutEvalNoMask", 1, ["FAIL: DropoutEvalNoMask: gradient mismatch in dX.", "dX is dY times a mask (entries "
                              "0 and 2) while the forward is the identity", "backward after it on a fresh layer "
                              "raised, so eval mode was checked after one forward(X, training=True) on the same "
                              "layer (not itself checked)"]),
    ("DropoutNoScaleBothModes", 1, ["dX is dY times a mask (entries 0 and 1)"]),
    ("DropoutEvalReusesMask", 1, ["FAIL: DropoutEvalReusesMask: eval forward reuses the training mask",
                                  "X times a mask (entries 0, 2) after a training forward",
                                  "checked on a fresh layer it passed"]),
    ("DropoutModeAware", 0, ["PASS: DropoutModeAware"]),
    ("Dropout", 0, ["PASS: Dropout"]),  # its eval forward sets a mask of ones
])
def test_eval_alone_checks_a_dropout_after_a_training_forward(capsys, cls, code, words):
    got, text = run(capsys, f"activations.py::{cls}", "5,4", "--eval")
    assert got == code, text
    assert "as --eval asks" in text and "[training]" not in text
    for w in words:
        assert w in text, text


def test_eval_forward_reusing_the_mask_fails_in_both_modes_too(capsys):
    code, text = run(capsys, "activations.py::DropoutEvalReusesMask", "5,4")
    assert code == 1, text
    assert "FAIL: DropoutEvalReusesMask [eval]: eval forward reuses the training mask" in text
