"""Session 28 (redteam28 F5): float32 code was judged on its float64 copy alone.

``gradcheck check`` checks Deep Learning from Scratch 2's ``dtype='f'`` layers on a copy with their dtypes written
float64 (``gradcheck._float64_copy``); a backward branch taken only in float32 (``if self.W.itemsize == 4``) never
ran there, and a layer whose real db is twice the gradient PASSed. The original's own float32 backward is now run on
the copy's inputs and parameters and compared with the copy's gradients at float32's tolerance (sqrt(eps32), 3.5e-4):
a factor of 2 (a relative 0.33) FAILs, a correct float32 layer still PASSes and says it was compared.
"""

import numpy as np
from test_cli import both, run_here, student
from test_float32_code_s26 import RNN_INIT, _book, book_built

INIT = '{"in_features": 5, "out_features": 3}'

AFFINE = """
import numpy as np


class Affine:
    def __init__(self, in_features, out_features):
        self.W = (0.1 * np.random.randn(in_features, out_features)).astype('f')
        self.b = np.zeros(out_features, dtype='f')
        self.dW, self.db = None, None

    def forward(self, X):
        self.X = X
        out = np.empty((X.shape[0], self.W.shape[1]), dtype='f')
        out[...] = np.dot(X, self.W) + self.b
        return out

    def backward(self, dout):
        self.dW = np.dot(self.X.T, dout)
        if self.W.itemsize == 4:
            self.db = FLOAT32_DB
        else:
            self.db = np.sum(dout, axis=0)
        return np.dot(dout, self.W.T)
"""


def _affine(tmp_path, db):
    return student(tmp_path, AFFINE.replace("FLOAT32_DB", db), "layers.py")


def test_a_float32_only_branch_of_backward_doubling_db_fails(tmp_path):
    """Was: exit 0, PASS: Affine (its float32 code checked on a float64 copy ...): the real layer's db is 2 times
    the gradient (16 for a batch of 8 with dY ones; right: 8)."""
    f = _affine(tmp_path, "2 * np.sum(dout, axis=0)")
    p = run_here("check", f"{f}::Affine", "--input-shape", "8,5", "--init", INIT)
    text = both(p)
    assert p.returncode == 1, text
    assert "PASS" not in text, text
    assert "FAIL: Affine: wrong result of db." in text, text
    assert ("Affine's own float32 code gives db 2 times its float64 copy's on the same inputs and parameters "
            "(largest relative difference 0.33, far above float32's round-off: tolerance 3.5e-04)") in text, text
    assert "dW" not in text.partition("diagnosis:")[2], text  # dX and dW agree: only db is named


def test_a_correct_float32_layer_still_passes_and_says_its_own_backward_was_compared(tmp_path):
    f = _affine(tmp_path, "np.sum(dout, axis=0)")
    p = run_here("check", f"{f}::Affine", "--input-shape", "8,5", "--init", INIT)
    text = both(p)
    assert p.returncode == 0, text
    assert "PASS: Affine (its float32 code checked on a float64 copy: see the note)" in text, text
    assert ("Its own float32 backward, run on the same inputs and parameters, gives the copy's gradients within "
            "float32's round-off (tolerance 3.5e-04)") in text, text


def test_the_books_time_rnn_passes_with_its_own_float32_backward_compared(tmp_path):
    f = book_built(_book(tmp_path), "TimeRNN", "Wx, Wh, b")  # the book's float32 weights (session 29)
    p = run_here("check", f"{f}::TimeRNN", "--input-shape", "2,3,3", "--init", RNN_INIT)
    text = both(p)
    assert p.returncode == 0, text
    assert "Its own float32 backward, run on the same inputs and parameters, gives the copy's gradients" in text, text


def test_a_float32_only_bug_in_the_books_time_rnn_fails(tmp_path):
    """dh not carried back in float32 alone: the copy (float64) is right, the float32 code is not."""
    f = _book(tmp_path, ("dx, dh = layer.backward(dhs[:, t, :] + dh)",
                         "dx, dh = layer.backward(dhs[:, t, :] + (dh if dxs.itemsize == 8 else 0 * dh))"))
    p = run_here("check", f"{book_built(f, 'TimeRNN', 'Wx, Wh, b')}::TimeRNN", "--input-shape", "2,3,3", "--init",
                 RNN_INIT)
    text = both(p)
    assert p.returncode == 1, text
    assert "TimeRNN's own float32 code gives" in text and "other values than its float64 copy's" in text, text


def test_own_differences_reads_a_factor_and_float32_round_off():
    from gradcheck._float64_copy import low_tolerance, own_differences

    rng = np.random.default_rng(0)
    b = rng.standard_normal((4, 3))
    tol = low_tolerance("float32")
    assert abs(tol - np.sqrt(np.finfo(np.float32).eps)) < 1e-12 and abs(tol - 3.45e-4) < 1e-6
    same = {"W": b.astype(np.float32)}  # float32 round-off alone: no difference
    assert own_differences(same, {"W": b}) == []
    (key, rel, c), = own_differences({"W": 2 * b}, {"W": b})
    assert key == "W" and abs(rel - 1 / 3) < 1e-12 and c == 2.0
    shifted = b.copy()
    shifted[0, 0] += 1.0
    (key, rel, c), = own_differences({"@X": shifted}, {"@X": b})
    assert key == "@X" and c is None and rel > 0.1


def test_a_float32_only_branch_in_training_mode_alone_fails_naming_the_mode(tmp_path):
    """Session 29 (fixr28's residual): the own-float32 comparison ran in the copy's first mode (eval) alone, so a
    float32-only branch taken in training mode PASSed; every mode the copy was checked in is compared now."""
    src = AFFINE.replace("    def forward(self, X):\n        self.X = X\n",
                         "    def forward(self, X, training=False):\n        self.X, self.training = X, training\n")
    src = src.replace("if self.W.itemsize == 4:", "if self.W.itemsize == 4 and self.training:")
    f = student(tmp_path, src.replace("FLOAT32_DB", "2 * np.sum(dout, axis=0)"), "layers.py")
    p = run_here("check", f"{f}::Affine", "--input-shape", "8,5", "--init", INIT)
    text = both(p)
    assert p.returncode == 1 and "PASS" not in text, text
    assert ("Affine's own float32 code gives db in training mode, 2 times its float64 copy's on the same inputs and "
            "parameters") in " ".join(text.split()), text
    ok = student(tmp_path, src.replace("FLOAT32_DB", "np.sum(dout, axis=0)"), "ok.py")
    p = run_here("check", f"{ok}::Affine", "--input-shape", "8,5", "--init", INIT)
    assert p.returncode == 0 and "Its own float32 backward, run on the same inputs" in both(p), both(p)


MODEL32 = """
import numpy as np


class SoftmaxModel:
    def __init__(self, n_in=5, n_out=3):
        self.params = [(0.5 * np.random.default_rng(0).standard_normal((n_in, n_out))).astype('f')]
        self.grads = [np.zeros_like(self.params[0])]

    def forward(self, x, t):
        z = x @ self.params[0]
        z = z - z.max(axis=1, keepdims=True)
        self.p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        self.x, self.t = x, t
        return -np.sum(np.log(self.p[np.arange(len(t)), t] + 1e-6)) / len(t)

    def backward(self, dout=1):
        d = self.p.copy()
        d[np.arange(len(self.t)), self.t] -= 1
        d *= dout / len(self.t)
        dW = self.x.T @ d
        if self.params[0].itemsize == 4:
            dW = FLOAT32_DW
        self.grads[0][...] = dW
        return d @ self.params[0].T
"""


def test_a_float32_only_branch_beside_a_log_eps_fails_on_the_eps_free_copy(tmp_path):
    """Session 29 (fixr28's residual): float32 code whose float64 copy fails by its log's float guard (1e-06) took the
    eps-free float64 copy's PASS without comparing its own float32 backward: a dW doubled in float32 alone PASSed.
    Now compared there too (0.33 relative, a factor 2); the correct model PASSes with both notes."""
    args = ["--input-shape", "4,5", "--targets", "labels:3"]
    bad = student(tmp_path, MODEL32.replace("FLOAT32_DW", "2 * dW"), "model32.py")
    p = run_here("check", f"{bad}::SoftmaxModel", *args)
    text = " ".join(both(p).split())
    assert p.returncode == 1 and "PASS" not in text, text
    assert ("SoftmaxModel's own float32 code gives dparams[0] 2 times its float64 copy's on the same inputs and "
            "parameters (largest relative difference 0.33") in text, text
    good = student(tmp_path, MODEL32.replace("FLOAT32_DW", "dW"), "good32.py")
    p = run_here("check", f"{good}::SoftmaxModel", *args)
    text = " ".join(both(p).split())
    assert p.returncode == 0 and "PASS: SoftmaxModel" in text, text
    assert "note: SoftmaxModel computes in float32" in text, text
    assert "note: backward is the derivative of the loss without the 1e-06 that forward adds inside a log" in text
