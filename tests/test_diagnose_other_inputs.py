"""The other-input probe: a backward right at the check's input and wrong at others is not said
to keep state for sure when it is right again at the first input (a bug at some input values
shows so too: tester 7's T14), a finding the table already contradicts is dropped, and a failure
found only by a probe has its FAIL line."""

import textwrap

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
    assert "right again at the first" in text and "or the bug shows for some input values only" in text
    assert "it uses state kept from an earlier call" not in text and "PASS" not in text


def test_state_kept_from_the_first_call_is_still_named(capsys, tmp_path):
    code, text = run(capsys, tmp_path, "FirstInputKept")
    assert code == 1, text
    assert "state kept from an earlier call" in text or "cache" in text, text
    assert "or the bug shows for some input values only" not in text
