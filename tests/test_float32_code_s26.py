"""Session 26 (left26c, note25 "Left"): float32 code checked in float64.

Deep Learning from Scratch 2 builds its layers with ``dtype='f'``; ``gradcheck check`` FAILed its correct TimeRNN and
TimeEmbedding "wrong dtype of Y". As ``torch.autograd.gradcheck`` asks for double precision, the formulas are now
checked on a copy of the files with the declared float32 dtypes written float64 (``gradcheck._float64_copy``), and the
report says so; a float64 layer casting what it computed to float32 still FAILs, and float32 the copy cannot remove is
NOT CHECKED, never a PASS.
"""

from pathlib import Path

from test_cli import both, run_here, student

from gradcheck._float64_copy import cast_lines, float64_text

BOOK = Path(__file__).resolve().parent / "fixtures" / "dlfs2" / "layers.py"
RNN_INIT = ('{"Wx": [[-0.2, 0.13, 0.3, -0.49], [0.38, 0.13, 0.39, 0.14], [0.58, -0.47, 0.89, 0.6]], '
            '"Wh": [[0.45, 0.38, -0.01, 0.33], [-0.33, -0.91, 0.84, 0.24], [-1.03, -0.53, -0.31, 0.17], '
            '[0.66, 0.15, -0.22, 0.23]], "b": [0.2, -0.28, 0.29, 0.02]}')
EMB = ["--input-shape", "6,4", "--indices", "3", "--init",
       '{"W": [[-1.14, -1.07, -0.76], [0.77, -1.04, -1.03], [-0.39, 1.39, -0.92]]}']


def _book(tmp_path, *edits):
    text = BOOK.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    f = tmp_path / "layers.py"
    f.write_text(text, encoding="utf-8")
    return f


def book_built(layers, cls: str, names: str, module: str = "layers", rest: str = "") -> Path:
    """``built.py`` beside ``layers`` (the book's file): its ``cls`` is the book's, built as the book's models build
    it (ch06/rnnlm.py: ``lstm_Wx = (rn(D, 4 * H) / np.sqrt(D)).astype('f')``), each parameter of ``names`` (``"Wx, Wh,
    b"``, as ``--init`` gives them) made float32, so the layer is float32 throughout and gradcheck checks its float64
    copy (session 29: given float64 weights the book's layer returns float32, a downcast, and FAILs); ``rest``: the
    constructor's other arguments, passed on as given (``", stateful=False"``)."""
    keys = [n.strip() for n in names.split(",")]
    f = Path(layers).parent / "built.py"
    f.write_text(f"""import numpy as np
from {module} import {cls} as _Book


class {cls}(_Book):
    \"\"\"The book's {cls} as its models build it: float32 parameters.\"\"\"

    def __init__(self, {names}{rest}):
        super().__init__({", ".join(f"np.asarray({k}).astype('f')" for k in keys)}{
            "".join(", " + r.split("=")[0].strip() for r in rest.split(",") if r.strip())})
""", encoding="utf-8")
    return f


def test_the_rewrite_keeps_every_line_and_changes_only_declared_dtypes():
    text = ("import numpy as np\nx = np.zeros((2, 3), 'f')  # é\ny = np.empty(3, dtype=\"float32\").astype(np.float16)\n"
            "s = 'f'\nw = np.full((2,), 1.0, 'f4')\n")
    out, lines = float64_text(text)
    assert out == ("import numpy as np\nx = np.zeros((2, 3), 'd')  # é\ny = np.empty(3, dtype='float64')"
                   ".astype(np.float16)\ns = 'f'\nw = np.full((2,), 1.0, 'f8')\n")  # float16: the student's cast
    assert lines == [2, 3, 5]
    assert float64_text("x = 1.0\n") is None


def test_the_books_float32_time_rnn_passes_on_its_float64_copy_and_says_so(tmp_path):
    """Was: FAIL: TimeRNN: wrong dtype of Y (the formulas are right: its float64 twin PASSes). Built with the book's
    float32 weights (session 29: float64 weights make it a downcast, test_the_books_time_rnn_given_float64_...)."""
    f = _book(tmp_path)
    p = run_here("check", f"{book_built(f, 'TimeRNN', 'Wx, Wh, b')}::TimeRNN", "--input-shape", "2,3,3", "--init",
                 RNN_INIT)
    text = both(p)
    assert p.returncode == 0, text
    assert "PASS: TimeRNN (its float32 code checked on a float64 copy: see the note): every gradient" in text, text
    assert "note: TimeRNN computes in float32 (built.py line 9: super().__init__(np.asarray(Wx).astype('f')" in text
    assert "layers.py line 216: hs = np.empty((N, T, H), dtype='f')" in " ".join(text.split()), text
    assert "as torch.autograd.gradcheck asks for double precision" in text, text
    assert "your files and layer are untouched" in text and "it does not check what float32 itself does" in text
    assert "wrong dtype" not in text, text
    assert "dtype='f'" in f.read_text(encoding="utf-8")  # the student's file as it was


def test_a_bug_in_float32_code_is_named_on_its_float64_copy(tmp_path):
    """dh not carried to the previous step: was FAILed "wrong dtype of Y" like the correct class."""
    f = _book(tmp_path, ("dx, dh = layer.backward(dhs[:, t, :] + dh)", "dx, dh = layer.backward(dhs[:, t, :])"))
    p = run_here("check", f"{book_built(f, 'TimeRNN', 'Wx, Wh, b')}::TimeRNN", "--input-shape", "2,3,3", "--init",
                 RNN_INIT)
    text = both(p)
    assert p.returncode == 1 and "FAIL: TimeRNN: gradient mismatch in" in text, text
    assert "wrong dtype" not in text and "note: TimeRNN computes in float32" in text, text


def test_the_books_float32_time_embedding_passes_built_with_the_books_float32_weights(tmp_path):
    """Its float32 W gathered and summed: its own float32 check passes (dparams[0] within 3.6e-08), no copy needed;
    given float64 weights it FAILs naming its 'f' buffer (tests/test_dlfs_books_s25.py, session 29)."""
    p = run_here("check", f"{book_built(_book(tmp_path), 'TimeEmbedding', 'W')}::TimeEmbedding", *EMB)
    text = both(p)
    assert p.returncode == 0 and "PASS: TimeEmbedding: every gradient (dparams[0])" in text, text
    assert "wrong dtype" not in text and "first layer whose own check fails" not in text, text
    assert "IndexError" not in text, text


def test_the_books_time_rnn_given_float64_weights_fails_naming_its_float32_buffer(tmp_path):
    """Session 29 (review28g H2, the lead's policy): the book's TimeRNN given float64 weights (``--init`` lists) and a
    float64 input returns float32 from ``hs = np.empty(..., dtype='f')``: what it does with the dtypes it was given
    is a downcast, which its float64 copy would not show (was: PASS on the copy). Built with float32 weights, as the
    book's models build it, it is float32 code and its copy judges it (the test above)."""
    p = run_here("check", f"{_book(tmp_path)}::TimeRNN", "--input-shape", "2,3,3", "--init", RNN_INIT)
    text = " ".join(both(p).split())
    assert p.returncode == 1 and "FAIL: TimeRNN: wrong dtype of Y." in text, text
    assert "float64 copy of its files (your files" not in text and "PASS" not in text, text
    assert ("TimeRNN was given float64 parameters, and its source makes the lower precision at layers.py line 216: "
            "hs = np.empty((N, T, H), dtype='f'); layers.py line 219: self.h = np.zeros((N, H), dtype='f') and 6 "
            "more; code that is float32 throughout, built with float32 parameters (as Deep Learning from Scratch 2's "
            "models build their layers, .astype('f')), is checked on a float64 copy of its files; if TimeRNN is meant "
            "to run in float32, check it with --dtype float32 (its inputs and --init weights then made float32).") \
        in text, text  # (session 29, dtype29: the option that checks it as the book runs it)


CAST = """
import numpy as np


class Lin:
    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((3, 2))}
        self.grads = {}

    def forward(self, X):
        self.X = X
        out = np.empty((X.shape[0], 2), dtype='f')
        out[...] = X @ self.params["W"]
        return out.astype(np.float32)  # a float64 layer rounding its output

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        return dY @ self.params["W"].T
"""


def test_a_float64_layer_casting_its_output_to_float32_still_fails(tmp_path):
    f = student(tmp_path, CAST)
    assert cast_lines(str(f), "Lin") == ["line 14: return out.astype(np.float32)  # a float64 layer rounding its output"]
    p = run_here("check", f"{f}::Lin", "--input-shape", "4,3")
    text = both(p)
    assert p.returncode == 1 and "FAIL: Lin: wrong dtype of Y." in text, text
    assert "float64 copy" not in text, text


KEPT = """
import numpy as np

LOW = "float" + "32"  # a dtype the copy cannot see as one


class Lin:
    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((3, 2)).astype('f')}
        self.grads = {}

    def forward(self, X):
        self.X = X
        out = np.empty((X.shape[0], 2), dtype=LOW)
        out[...] = X @ self.params["W"]
        return out

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        return dY @ self.params["W"].T
"""


def test_float32_the_copy_cannot_remove_is_not_checked(tmp_path):
    p = run_here("check", f"{student(tmp_path, KEPT)}::Lin", "--input-shape", "4,3")
    text = both(p)
    assert p.returncode == 3, text
    assert "Lin's forward returns float32 even on a copy of its files with its declared float32 dtypes written " \
           "float64 (student.py line 9:" in text, text
    assert "PASS" not in text and "gradcheck: not checked (exit 3): Lin's forward returns float32" in text, text
