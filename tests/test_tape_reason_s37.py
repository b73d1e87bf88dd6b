"""``gradcheck check --tape``'s "no tape comparison" reason (corpus37 F4).

On a layer whose forward windows its padded input with numpy's ``as_strided`` the reason was cut at
500 characters, mid-word ("... The first: a tensor of shape (2, 2, 7, 7) lef; manual vs numerical
only"), before the sentence of autoprop's message that names the fix
(``autoprop.numpy.lib.stride_tricks.as_strided``). Now the sandbox sends the tape's reason whole (up
to 1900 characters) and :func:`gradcheck.student_tape.gist` keeps its opening, cut at a word's end,
and the fix's sentence.
"""

import re

from test_cli import check_source

from gradcheck._sandbox_child import cut_at_word
from gradcheck.student_tape import gist

STRIDED = """
import numpy as np

class Windowed:
    def __init__(self):
        self.params = {"W": np.linspace(-1.0, 1.0, 9).reshape(3, 3)}
        self.grads = {}

    def forward(self, X):
        self.X = X
        xp = np.pad(X, ((0, 0), (1, 1), (1, 1)))
        n, h, w = X.shape
        s = xp.strides
        win = np.lib.stride_tricks.as_strided(xp, (n, h, w, 3, 3), (s[0], s[1], s[2], s[1], s[2]))
        self.win = win
        return np.einsum("nhwij,ij->nhw", win, self.params["W"])

    def backward(self, dY):
        self.grads["W"] = np.einsum("nhwij,nhw->ij", self.win, dY)
        dxp = np.zeros((dY.shape[0], dY.shape[1] + 2, dY.shape[2] + 2))
        for i in range(3):
            for j in range(3):
                dxp[:, i:i + dY.shape[1], j:j + dY.shape[2]] += dY * self.params["W"][i, j]
        return dxp[:, 1:-1, 1:-1]
"""


def test_tape_reason_keeps_autoprops_as_strided_fix_and_cuts_no_word(tmp_path):
    code, text = check_source(tmp_path, STRIDED, "Windowed", "--input-shape", "2,5,5", "--tape")
    assert code == 0, text  # the layer is right: manual vs numerical
    m = re.search(r"no tape comparison for Windowed: (.*?); manual vs numerical only", text)
    assert m, text
    reason = m.group(1)
    assert "It happened inside numpy's np.lib.stride_tricks.as_strided" in reason  # before: cut before it
    assert "call autoprop.numpy.lib.stride_tricks.as_strided" in reason
    assert reason.startswith("Windowed.forward raised TapeEscapeError on autoprop tensors: GradientTape.gradient")
    cut = reason[:reason.index(" It happened inside")]
    assert len(reason) < 1200 and (cut.endswith(" ...") or cut.endswith(".")), reason  # at a word's end


def test_gist_keeps_a_short_message_and_the_fix_sentence_of_a_long_one():
    assert gist("numpy.foo has no VJP.") == "numpy.foo has no VJP."
    head = "GradientTape.gradient: refused, " + " ".join(f"word{i}" for i in range(200)) + "."
    fix = ("It happened inside numpy's np.lib.stride_tricks.as_strided, which reads memory: call "
           "autoprop.numpy.lib.stride_tricks.as_strided (the same arguments, recorded).")
    tail = " 1 in all, at 1 line: f.py:3 (1x). In general: " + "x " * 300
    out = gist(f"{head} {fix}{tail}")
    assert out.endswith(" ... " + fix), out
    kept = out[:-len(" ... " + fix)]
    assert head.startswith(kept) and head[len(kept)] == " "  # a whole word, then the cut
    assert len(out) <= 700 + 4
    plain = gist(head * 3)  # no fix sentence: the opening cut at a word's end
    assert plain.endswith(" ...") and len(plain) <= 700 and (head * 3).startswith(plain[:-4])


def test_the_childs_cut_ends_at_a_word():
    text = "alpha beta gamma delta epsilon"
    assert cut_at_word(text, 100) == text
    assert cut_at_word(text, 22) == "alpha beta gamma ..."  # not "alpha beta gamma d ..."
    assert len(cut_at_word("a " * 400, 500)) <= 500
    assert cut_at_word("a " + "x" * 1000, 500) == "a " + "x" * 494 + " ..."  # one long token: cut inside it
