"""Session 29 (review28g H2): float32 code is judged by what it does with the dtypes it was given, not by spelling.

``gradcheck check`` checks float32 code on a copy of its files with its float32 dtypes written float64. A float64
layer that rounds what it computed to float32 must keep its FAIL, as ``check_layer`` gives it, but the rule read the
conversion's spelling and missed ``.astype(np.dtype("float32"))``, ``np.add(..., dtype=np.float32)`` and a float32
buffer written with ``out[...] = Y``: the CLI PASSed them on the copy (exit 0). The lead's policy: a layer given
float64 parameters and a float64 input that returns a lower precision downcasts, and its FAIL stands, naming the line;
only code float32 throughout as given (float32 parameters) is judged by its float64 copy.
"""

import importlib.util

import numpy as np
import pytest

from gradcheck.check import check_layer
from gradcheck.cli import main

LINEAR = '''import numpy as np

DT = np.float32


def to32(a):
    return a.astype(DT)


class Linear:
    def __init__(self, n_in=4, n_out=3):
        rng = np.random.default_rng(0)
        self.params = {{"W": rng.standard_normal((n_in, n_out)){low}, "b": np.zeros(n_out){low}}}
        self.grads = {{}}
        self.dt = np.float32

    def forward(self, X, training=False):
        self.X = X
        Y = X @ self.params["W"] + self.params["b"]
        {ret}

    def backward(self, dY):
        self.grads = {{"W": self.X.T @ dY, "b": dY.sum(axis=0)}}
        return dY @ self.params["W"].T
'''

#: (the end of forward, the line its FAIL names): the three spellings review28g found PASSing first
SPELLINGS = [
    ('return Y.astype(np.dtype("float32"))', 'line 20: return Y.astype(np.dtype("float32"))'),
    ("return np.add(Y, 0.0, dtype=np.float32)", "f64.py line 20: return np.add(Y, 0.0, dtype=np.float32)"),
    ("out = np.empty(Y.shape, dtype=np.float32)\n        out[...] = Y\n        return out",
     "f64.py line 20: out = np.empty(Y.shape, dtype=np.float32)"),
    ("return Y.astype(np.float32)", "line 20: return Y.astype(np.float32)"),
    ("return Y.astype(self.dt)", "line 20: return Y.astype(self.dt)"),
    ("return to32(Y)", "line 7: return a.astype(DT)"),
]


def _check(tmp_path, capsys, ret, low=""):
    f = tmp_path / "f64.py"
    f.write_text(LINEAR.format(ret=ret, low=low))
    code = main(["check", f"{f}::Linear", "--input-shape", "5,4"])
    return f, code, " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(("ret", "line"), SPELLINGS)
def test_a_float64_layer_rounding_its_output_keeps_its_fail_however_spelled(tmp_path, capsys, ret, line):
    """The first three were exit 0, "PASS: Linear (its float32 code checked on a float64 copy ...)", while check_layer
    FAILed them; now exit 1 as check_layer, naming where the source makes float32."""
    f, code, out = _check(tmp_path, capsys, ret)
    assert code == 1 and "FAIL: Linear: wrong dtype of Y." in out, out
    assert "float64 copy" not in out and "PASS" not in out, out
    assert f"Linear was given float64 parameters, and its source makes the lower precision at {line}" in out, out
    spec = importlib.util.spec_from_file_location("f64", f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    X = np.random.default_rng(1).standard_normal((5, 4))
    assert mod.Linear().forward(X).dtype == np.float32  # what it does: float64 in, float32 out
    assert not check_layer(mod.Linear(), X, twin=None).passed  # the API's verdict, which the CLI now gives


@pytest.mark.parametrize(("ret", "line"), SPELLINGS[:3])
def test_the_same_code_with_float32_parameters_is_judged_by_its_float64_copy(tmp_path, capsys, ret, line):
    """Float32 throughout as given (its weights made with .astype('f'), as Deep Learning from Scratch 2 makes them):
    the copy, with every declared float32 written float64, stands for its formulas: PASS, said."""
    _, code, out = _check(tmp_path, capsys, ret, low=".astype('f')")
    assert code == 0 and "PASS: Linear (its float32 code checked on a float64 copy: see the note)" in out, out
    assert "note: Linear computes in float32" in out and "Its own float32 backward" in out, out


def test_a_parameterless_float32_buffer_given_a_float64_input_fails_naming_it(tmp_path, capsys):
    """No parameters, a float64 input, a float32 Y: a downcast (the policy: only float32 input the user chose makes it
    float32 code, and the CLI draws float64 inputs)."""
    f = tmp_path / "act.py"
    f.write_text("import numpy as np\n\n\nclass Tanh:\n    def forward(self, X):\n        self.Y = np.empty(X.shape, "
                 "dtype='f')\n        self.Y[...] = np.tanh(X)\n        return self.Y\n\n    def backward(self, dY):\n"
                 "        return dY * (1 - self.Y ** 2)\n")
    code = main(["check", f"{f}::Tanh", "--input-shape", "5,4"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 1 and "FAIL: Tanh: wrong dtype of Y." in out and "float64 copy" not in out, out
    assert ("Tanh was given a float64 input, and its source makes the lower precision at act.py line 6: self.Y = "
            "np.empty(X.shape, dtype='f')") in out, out
