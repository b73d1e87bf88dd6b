"""Session 29 (dtype29): ``gradcheck check --dtype {float64,float32,float16}``.

Since review28g H2 (commit b71e20c) float32 code is checked on its float64 copy only when it is float32 as given
(float32 parameters); a layer given float64 parameters and a float64 input that returns float32 keeps its FAIL. Through
the CLI ``--init`` made float64 arrays and the input was drawn float64, so the book's correct TimeEmbedding with
``--init`` weights, or a parameterless float32 layer, got a FAIL its author could not avoid: gradcheck made the float64
it was blamed for. ``--dtype float32`` draws the inputs and makes ``--init``'s weight arrays float32, so code written
for float32 runs as written and is judged on its float64 copy; the FAIL of a downcast says to use it.
"""

from pathlib import Path

import numpy as np
from test_cli import both, run_here

from gradcheck._adapters import init_arrays

BOOK = Path(__file__).resolve().parent / "fixtures" / "dlfs2" / "layers.py"
EMB = ["--input-shape", "6,4", "--indices", "3", "--init",
       '{"W": [[-1.14, -1.07, -0.76], [0.77, -1.04, -1.03], [-0.39, 1.39, -0.92]]}']

SCALE = '''import numpy as np


class Scale:
    """No parameters; computes into a float32 buffer, as Deep Learning from Scratch 2's layers do."""

    def __init__(self):
        self.params, self.grads = [], []

    def forward(self, x):
        N, D = x.shape
        out = np.empty((N, D), dtype='f')
        out[...] = 3.0 * x * x
        self.x = x
        return out

    def backward(self, dout):
        return {factor} * self.x * dout
'''

CAST = '''import numpy as np


class Linear:
    def __init__(self, W):
        self.params, self.grads = {"W": W}, {}

    def forward(self, X):
        self.X = X
        return (X @ self.params["W"]).astype(np.float32)

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY}
        return dY @ self.params["W"].T
'''

#: a layer computing in its weights' dtype (no dtype declared): float16 code when given float16 weights
LIN = '''import numpy as np


class Lin:
    def __init__(self, W):
        self.params, self.grads = {"W": W}, {}

    def forward(self, X):
        self.X = X.astype(self.params["W"].dtype)
        return self.X @ self.params["W"]

    def backward(self, dY):
        dY = dY.astype(self.params["W"].dtype)
        self.grads = {"W": self.X.T @ dY}
        return FACTORdY @ self.params["W"].T
'''
W32 = '{"W": [[0.5, -1.0], [0.25, 2.0], [1.5, -0.75]]}'


def _text(p):
    return " ".join(both(p).split())


def test_init_arrays_are_made_in_the_dtype_asked():
    out, shapes = init_arrays({"W": [[0.1, 0.2], [0.3, 0.4]], "sizes": [4, 3], "n": 5}, dtype="float32")
    assert out["W"].dtype == np.float32 and shapes == {"W": (2, 2)}
    assert out["W"][0, 0] == np.float32(0.1) and out["sizes"] == [4, 3] and out["n"] == 5
    assert init_arrays({"W": [[0.1]]})[0]["W"].dtype == np.float64


def test_the_books_time_embedding_with_init_weights_passes_in_float32_and_a_doubled_gradient_fails(tmp_path):
    p = run_here("check", f"{BOOK}::TimeEmbedding", *EMB, "--dtype", "float32")
    text = _text(p)
    assert p.returncode == 0 and "PASS: TimeEmbedding" in text, text
    assert "mode fast, dtype float32" in text and "given to the constructor as float32 arrays" in text, text
    bad = tmp_path / "layers.py"
    src = BOOK.read_text(encoding="utf-8")
    assert src.count("        self.grads[0][...] = grad\n") == 1
    bad.write_text(src.replace("        self.grads[0][...] = grad\n", "        self.grads[0][...] = 2 * grad\n"),
                   encoding="utf-8")
    p = run_here("check", f"{bad}::TimeEmbedding", *EMB, "--dtype", "float32")
    text = _text(p)
    assert p.returncode == 1 and "FAIL: TimeEmbedding" in text and "dparams[0]" in text, text
    assert "2 times" in text or "factor 2" in text or "twice" in text, text


def test_a_parameterless_float32_layer_passes_with_dtype_float32_and_its_fail_says_so_without(tmp_path):
    f = tmp_path / "scale.py"
    f.write_text(SCALE.format(factor="6.0"))
    p = run_here("check", f"{f}::Scale", "--input-shape", "4,3")
    text = _text(p)
    assert p.returncode == 1 and "FAIL: Scale: wrong dtype of Y." in text, text
    assert "scale.py line 12: out = np.empty((N, D), dtype='f')" in text, text
    assert "if Scale is meant to run in float32, check it with --dtype float32" in text, text
    p = run_here("check", f"{f}::Scale", "--input-shape", "4,3", "--dtype", "float32")
    text = _text(p)
    assert p.returncode == 0 and "PASS: Scale (its float32 code checked on a float64 copy" in text, text
    assert "Its own float32 backward, run on the same inputs and parameters, gives the copy's gradients" in text, text
    f.write_text(SCALE.format(factor="12.0"))  # a doubled gradient: the copy's FAIL
    p = run_here("check", f"{f}::Scale", "--input-shape", "4,3", "--dtype", "float32")
    assert p.returncode == 1 and "FAIL: Scale: gradient mismatch in dX" in _text(p), _text(p)


def test_a_float64_layer_casting_to_float32_still_fails_in_float64(tmp_path):
    f = tmp_path / "cast.py"
    f.write_text(CAST)
    for extra in ([], ["--dtype", "float64"]):
        p = run_here("check", f"{f}::Linear", "--input-shape", "5,3", "--init", W32, *extra)
        text = _text(p)
        assert p.returncode == 1 and "FAIL: Linear: wrong dtype of Y." in text, text
        assert "line 10: return (X @ self.params[\"W\"]).astype(np.float32)" in text, text
        assert "mode fast, dtype float64" in text and "as float64 arrays" in text, text


def test_dtype_float16_on_a_layer_computing_in_its_weights_dtype(tmp_path):
    f = tmp_path / "lin.py"
    f.write_text(LIN.replace("FACTOR", ""))
    p = run_here("check", f"{f}::Lin", "--input-shape", "4,3", "--init", W32, "--dtype", "float16")
    text = _text(p)
    assert p.returncode == 0 and "PASS: Lin (its float16 code checked on a float64 copy" in text, text
    assert "given to the constructor as float16 arrays" in text and "dtype float16" in text, text
    assert "Its own float16 backward" in text and "within float16's round-off" in text, text
    f.write_text(LIN.replace("FACTOR", "2 * "))
    p = run_here("check", f"{f}::Lin", "--input-shape", "4,3", "--init", W32, "--dtype", "float16")
    assert p.returncode == 1 and "FAIL: Lin: gradient mismatch in dX" in _text(p), _text(p)


def test_a_loss_gets_its_init_arrays_and_y_pred_in_the_dtype(tmp_path):
    f = tmp_path / "mse.py"
    f.write_text('''import numpy as np


class MSE:
    def __init__(self, w):
        assert w.dtype == np.float32, w.dtype
        self.w = w

    def forward(self, y_pred, y_true):
        self.d = y_pred - y_true
        return float(np.sum(self.w * self.d ** 2))

    def backward(self):
        return 2 * self.w * self.d
''')
    args = ["check", f"{f}::MSE", "--loss", "--input-shape", "4,3", "--init", '{"w": [0.5, 1.5, 2.0]}']
    p = run_here(*args, "--dtype", "float32")
    text = _text(p)
    assert p.returncode == 0 and "PASS: MSE" in text and "dtype float32" in text, text
    # its np.float32 (the assert) declares float32 code: since session 30 checked on its float64 copy, as a layer is,
    # its own float32 run (float32 w and y_pred, which the assert holds to) compared with it
    assert "checked on a float64 copy" in text and "Its own float32 backward, run at the same y_pred" in text, text
    p = run_here(*args)
    assert p.returncode == 3 and "AssertionError" in _text(p), _text(p)


def test_a_dtype_not_offered_is_a_usage_error_naming_the_choices(tmp_path):
    f = tmp_path / "scale.py"
    f.write_text(SCALE.format(factor="6.0"))
    p = run_here("check", f"{f}::Scale", "--input-shape", "4,3", "--dtype", "float8")
    text = _text(p)
    assert p.returncode == 2 and "float64" in text and "float32" in text and "float16" in text, text
    assert "--dtype" in text, text
