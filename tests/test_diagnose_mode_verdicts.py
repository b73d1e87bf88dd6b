"""Session 8's verdicts per mode: an eval forward that updates its running statistics is named as
such (T13, not "a dropout mask"); every failing mode prints its FAIL line and diagnosis (a
Dropout wrong in both modes); --eval alone checks a Dropout after a training forward (T12: a
stale mask, in backward or in the eval forward, FAILs; a right one PASSes); a failure found only
at another input names its tensor in the FAIL line, in sample mode too (T14)."""

import textwrap

import pytest

from gradcheck.cli import main

LAYERS = textwrap.dedent('''
    import numpy as np

    class BatchNormEvalUpdates:
        """Eval mode normalises with running statistics it updates first (the bug)."""
        def __init__(self, D=4):
            self.params = {"gamma": np.linspace(0.5, 1.5, D), "beta": np.linspace(-0.2, 0.2, D)}
            self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
            self.running_mean, self.running_var = np.zeros(D), np.ones(D)
        def forward(self, X, training=False):
            mu, var = X.mean(axis=0), X.var(axis=0)
            self.running_mean = 0.9 * self.running_mean + 0.1 * mu
            self.running_var = 0.9 * self.running_var + 0.1 * var
            if not training:
                mu, var = self.running_mean, self.running_var
            self.xhat = (X - mu) / np.sqrt(var + 1e-5)
            self.istd = 1 / np.sqrt(var + 1e-5)
            return self.params["gamma"] * self.xhat + self.params["beta"]
        def backward(self, dY):
            self.grads["gamma"] = np.sum(dY * self.xhat, axis=0)
            self.grads["beta"] = np.sum(dY, axis=0)
            return dY * self.params["gamma"] * self.istd

    class GlobalDropout:
        """A mask from np.random.default_rng() made anew in forward: random, not held."""
        params, grads = {}, {}
        def forward(self, X, training=False):
            self.mask = (np.random.default_rng().random(X.shape) > 0.5) * 2.0
            return X * self.mask
        def backward(self, dY):
            return dY * self.mask

    class Dropout:
        """Inverted dropout; its eval forward sets no mask (backward reads the training one)."""
        def __init__(self, p=0.5, seed=0):
            self.p, self.rng, self.params, self.grads = p, np.random.default_rng(seed), {}, {}
        def forward(self, X, training=False):
            if not training:
                return X
            self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
            return X * self.mask
        def backward(self, dY):
            return dY * self.mask

    class DropoutNoScale(Dropout):
        def backward(self, dY):
            return dY * (self.mask > 0)  # and the 1 / (1 - p) is missing in training

    class DropoutModeAware(Dropout):
        def forward(self, X, training=False):
            self.training = training
            return super().forward(X, training)
        def backward(self, dY):
            return dY * self.mask if self.training else dY

    class DropoutOnes(Dropout):
        def forward(self, X, training=False):
            if not training:
                self.mask = np.ones_like(X)
                return X
            return super().forward(X, training)

    class DropoutEvalReusesMask(Dropout):
        def forward(self, X, training=False):
            if training:
                self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
            elif not hasattr(self, "mask"):
                self.mask = np.ones_like(X)
            return X * self.mask  # the eval forward reuses the training mask

    class TanhShortcut:
        """tanh whose backward returns 0 where |x| > 2.2: wrong at some inputs only."""
        def __init__(self):
            self.params, self.grads = {}, {}
        def forward(self, X, training=False):
            self.X, self.Y = X, np.tanh(X)
            return self.Y
        def backward(self, dY):
            return np.where(np.abs(self.X) > 2.2, 0.0, dY * (1 - self.Y ** 2))
''')


def run(capsys, tmp_path, cls, shape, *extra):
    f = tmp_path / "layers.py"
    f.write_text(LAYERS)
    code = main(["check", f"{f}::{cls}", "--input-shape", shape, *extra])
    out = capsys.readouterr()
    return code, " ".join((out.out + out.err).split())


def test_eval_forward_that_updates_running_statistics_is_named(capsys, tmp_path):
    code, text = run(capsys, tmp_path, "BatchNormEvalUpdates", "6,4", "--eval")
    assert code == 1, text
    assert "FAIL: BatchNormEvalUpdates: forward changes the layer's state (see the diagnosis)." in text
    assert "forward(X, training=False) changes the layer's state" in text
    assert "so the forward is not random" in text and "running statistics updated in eval mode" in text
    assert "update running_mean and running_var only when training=True" in text
    assert "dropout" not in text.lower(), text


def test_a_random_forward_is_still_called_random(capsys, tmp_path):
    code, text = run(capsys, tmp_path, "GlobalDropout", "6,4", "--training")
    assert code == 1, text
    assert "the forward is non-deterministic" in text and "a dropout mask drawn afresh" in text
    assert "changes the layer's state" not in text


def test_every_failing_mode_has_its_fail_line_and_diagnosis(capsys, tmp_path):
    code, text = run(capsys, tmp_path, "DropoutNoScale", "6,3")
    assert code == 1, text
    assert "FAIL: DropoutNoScale [eval]: gradient mismatch in dX. diagnosis: dX is dY times a mask" in text
    assert ("FAIL: DropoutNoScale [training]: gradient mismatch in dX. diagnosis: dX is 0.5 times the "
            "correct gradient") in text


@pytest.mark.parametrize("cls, code, words", [
    ("Dropout", 1, ["FAIL: Dropout: gradient mismatch in dX.", "dX is dY times a mask (entries 0 and 2) while the "
                    "forward is the identity", "backward after it on a fresh layer raised, so eval mode was checked "
                    "after one forward(X, training=True) on the same layer (not itself checked)"]),
    ("DropoutNoScale", 1, ["dX is dY times a mask (entries 0 and 1)"]),
    ("DropoutEvalReusesMask", 1, ["FAIL: DropoutEvalReusesMask: eval forward reuses the training mask",
                                  "X times a mask (entries 0, 2) after a training forward",
                                  "checked on a fresh layer it passed"]),
    ("DropoutModeAware", 0, ["PASS: DropoutModeAware"]),
    ("DropoutOnes", 0, ["PASS: DropoutOnes"]),
])
def test_eval_alone_checks_a_dropout_after_a_training_forward(capsys, tmp_path, cls, code, words):
    got, text = run(capsys, tmp_path, cls, "6,3", "--eval")
    assert got == code, text
    assert "as --eval asks" in text and "[training]" not in text
    for w in words:
        assert w in text, text


def test_eval_forward_reusing_the_mask_fails_in_both_modes_too(capsys, tmp_path):
    code, text = run(capsys, tmp_path, "DropoutEvalReusesMask", "6,3")
    assert code == 1, text
    assert "FAIL: DropoutEvalReusesMask [eval]: eval forward reuses the training mask" in text


@pytest.mark.parametrize("extra", [(), ("--mode", "sample")])
def test_a_failure_found_at_another_input_names_its_tensor(capsys, tmp_path, extra):
    # at seed 1 every entry of the check's input has |x| <= 2.2: only the other-input probe sees the bug
    code, text = run(capsys, tmp_path, "TanhShortcut", "8,5", "--seed", "1", *extra)
    assert code == 1, text
    assert "FAIL: TanhShortcut: gradient mismatch in dX (at another input; see the diagnosis)." in text
    assert "wrong at another one, dX wrong there" in text
