"""The other-input probe: a backward right at the check's input and wrong at others is not said
to keep state for sure when it is right again at the first input (a bug at some input values
shows so too: tester 7's T14), a finding the table already contradicts is dropped, and a failure
found only by a probe has its FAIL line, which names the tensor (sample mode too); a sampled check
that the directional derivatives at the check's input contradict does not pass."""

import textwrap

import pytest

from gradcheck.cli import main

LAYERS = textwrap.dedent('''
    import numpy as np

    class TanhShortcut:
        """tanh whose backward returns 0 where |x| > 2.2 (a saturation shortcut): no state."""
        def __init__(self):
            self.params, self.grads = {}, {}
        def forward(self, X, training=False):
            self.X = X
            self.Y = np.tanh(X)
            return self.Y
        def backward(self, dY):
            return np.where(np.abs(self.X) > 2.2, 0.0, dY * (1 - self.Y ** 2))

    class FirstInputKept:
        """tanh whose cache is set on the first call only: state."""
        def __init__(self):
            self.params, self.grads = {}, {}
        def forward(self, X, training=False):
            if not hasattr(self, "X"):
                self.X = X
            return np.tanh(X)
        def backward(self, dY):
            return dY * (1 - np.tanh(self.X) ** 2)
''')


def run(capsys, tmp_path, cls, *extra):
    f = tmp_path / "layers.py"
    f.write_text(LAYERS)
    code = main(["check", f"{f}::{cls}", "--input-shape", "8,5", *extra])
    out = capsys.readouterr()
    return code, " ".join((out.out + out.err).split())


def test_an_input_dependent_bug_is_not_called_state_and_gets_a_fail_line(capsys, tmp_path):
    # at seed 1 every entry of the check's input has |x| <= 2.2: the table is all ok
    code, text = run(capsys, tmp_path, "TanhShortcut", "--seed", "1")
    assert code == 1, text
    assert "FAIL: TanhShortcut: gradient mismatch in dX (at another input; see the diagnosis)." in text
    assert "wrong at another one, dX wrong there" in text
    assert "right again at the first" in text and "or the bug shows for some input values only" in text
    assert "it uses state kept from an earlier call" not in text and "PASS" not in text


def test_state_kept_from_the_first_call_is_still_named(capsys, tmp_path):
    code, text = run(capsys, tmp_path, "FirstInputKept")
    assert code == 1, text
    assert "state kept from an earlier call" in text or "cache" in text, text
    assert "or the bug shows for some input values only" not in text


def test_in_sample_mode_the_fail_line_names_the_tensor(capsys, tmp_path):
    code, text = run(capsys, tmp_path, "TanhShortcut", "--seed", "1", "--mode", "sample")
    assert code == 1, text
    assert "FAIL: TanhShortcut: gradient mismatch in dX (at another input; see the diagnosis)." in text


def test_a_sampled_check_that_misses_the_wrong_entries_does_not_pass(capsys, tmp_path):
    # at seed 0 the check's input has entries with |x| > 2.2, but the sampled ones miss them
    code, text = run(capsys, tmp_path, "TanhShortcut", "--mode", "sample")
    assert code == 1, text
    assert "PASS" not in text
    assert "FAIL: TanhShortcut: gradient mismatch in dX (outside the sampled entries; see the diagnosis)." in text
    assert "entries the sample left out are wrong; run --mode full" in text


@pytest.mark.parametrize("seed", ["0", "1"])
def test_a_right_layer_passes_in_sample_mode(capsys, tmp_path, seed):
    f = tmp_path / "tanh.py"
    f.write_text("import numpy as np\n\nclass Tanh:\n    params, grads = {}, {}\n\n"
                 "    def forward(self, X, training=False):\n        self.Y = np.tanh(X)\n        return self.Y\n\n"
                 "    def backward(self, dY):\n        return dY * (1 - self.Y ** 2)\n")
    code = main(["check", f"{f}::Tanh", "--input-shape", "8,5", "--mode", "sample", "--seed", seed])
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0 and "PASS: Tanh: the sampled entries of (dX) match" in text, text
