"""Findings of session 16's new-user tester (fixer fixt16), in-process and on small shapes: a PASS with nothing
compared (H1), fast mode's PASS line saying what its directions proved (H2), a stateful forward that is NOT
CHECKED rather than FAIL (M5), the Python API taking what the CLI takes (M6, L15), Ng's function names in
suggested fixes (M3, M4, M7), and a misspelt option or class name offering the close match (L13, L14)."""

import numpy as np
from test_cli import both, run_here, student

SOFTMAX = """
import numpy as np

class SoftmaxRows:
    def forward(self, x):
        e = np.exp(x); self.s = e / e.sum(axis=1, keepdims=True); return self.s
    def backward(self, dy):
        s = self.s
        return s * (dy - (dy * s).sum(axis=0, keepdims=True))   # BUG: wrong axis

class NoParamsOfIndices:
    def forward(self, idx):
        return np.ones((idx.shape[0], 2))
    def backward(self, dY):
        return None
"""


def test_indices_on_a_differentiated_input_is_no_pass(tmp_path):
    """H1: --indices on a softmax (backward returns a float dX for it) gave PASS with an empty table."""
    f = student(tmp_path, SOFTMAX)
    p = run_here("check", f"{f}::SoftmaxRows", "--input-shape", "4,5", "--indices", "5")
    text = both(p)
    assert p.returncode == 2, text
    assert "PASS" not in text
    assert "--indices" in text and "differentiates" in text


def test_nothing_compared_is_not_checked(tmp_path):
    """H1's rule: a check that compared no gradient is NOT CHECKED (exit 3), never PASS."""
    f = student(tmp_path, SOFTMAX)
    p = run_here("check", f"{f}::NoParamsOfIndices", "--input-shape", "4,5", "--indices", "5")
    text = both(p)
    assert p.returncode == 3, text
    assert "PASS" not in text
    assert "NOT CHECKED: NoParamsOfIndices: no gradient was compared" in text


TANH = """
import numpy as np

class TanhLinear:
    def __init__(self):
        self.W = np.random.default_rng(1).standard_normal((6, 4))
    def forward(self, X):
        self.X = X; self.Y = np.tanh(X @ self.W); return self.Y
    def backward(self, dY):
        dZ = dY * (1 - self.Y ** 2)
        self.dW = self.X.T @ dZ
        return dZ @ self.W.T
"""


def test_fast_pass_says_what_its_directions_proved(tmp_path):
    """H2: fast mode's PASS claimed "every gradient matches within rtol" from 2 random directional derivatives, which
    missed a single entry 1e-4 off at 128x64; it now says directions, and the one-entry error they could miss."""
    import re

    f = student(tmp_path, TANH)
    p = run_here("check", f"{f}::TanhLinear", "--input-shape", "8,6")
    text = both(p)
    assert p.returncode == 0, text
    line = next(x for x in p.stdout.splitlines() if x.startswith("PASS"))
    assert "dX, dW along 2 random directions each, not entry by entry: an error in one entry can pass unseen" in line
    m = re.search(r"up to about ([0-9.e+-]+) in dX \(([0-9.e+-]+) of max\|dX\|\), ([0-9.e+-]+) in dW \(([0-9.e+-]+) "
                  r"of max\|dW\|\)", line)
    assert m, line
    assert all(0 < float(v) < 1e-3 for v in m.groups()), line
    assert line.endswith("--mode full checks every entry."), line


STATEFUL = """
import numpy as np

class StatefulRNN:
    def __init__(self, D=3, H=4):
        r = np.random.default_rng(0)
        self.Wx = r.normal(size=(D, H)) * 0.5; self.Wh = r.normal(size=(H, H)) * 0.5; self.b = np.zeros(H)
        self.h = None
    def forward(self, x):
        if self.h is None:
            self.h = np.zeros((x.shape[0], self.Wh.shape[0]))
        self.x, self.hprev = x, self.h
        self.h = np.tanh(x @ self.Wx + self.hprev @ self.Wh + self.b)
        return self.h
    def backward(self, dh):
        da = dh * (1 - self.h ** 2)
        self.dWx = self.x.T @ da; self.dWh = self.hprev.T @ da; self.db = da.sum(0)
        return da @ self.Wx.T
"""


def test_state_carried_between_calls_is_not_checked(tmp_path):
    """M5: a correct RNN carrying h between calls was FAIL (exit 1) like its buggy twin; no gradient was compared."""
    f = student(tmp_path, STATEFUL)
    p = run_here("check", f"{f}::StatefulRNN", "--input-shape", "2,3")
    text = both(p)
    assert p.returncode == 3, text
    assert "NOT CHECKED: StatefulRNN: forward changes the layer's state" in text and "FAIL" not in text
    assert "reset self.h before each forward" in text and "forward(x, h0)" in text  # tester19s: not the cache hprev
    assert "changes state the next call reads" in text and "is random" not in text


class _Softmax:
    def forward(self, x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        self.s = e / e.sum(axis=1, keepdims=True)
        return self.s

    def backward(self, dy):
        return self.s * (dy - (dy * self.s).sum(axis=1, keepdims=True))


class _SoftmaxAxisBug(_Softmax):
    def backward(self, dy):
        return self.s * (dy - (dy * self.s).sum(axis=0, keepdims=True))


def test_check_layer_takes_a_forward_without_training():
    """M6: the API raised "forward must accept a training keyword" for forward(self, x), which the CLI checks."""
    import gradcheck

    X = np.random.default_rng(0).standard_normal((4, 5))
    assert gradcheck.check_layer(_Softmax(), X, twin=None, mode="full").passed
    bad = gradcheck.check_layer(_SoftmaxAxisBug(), X, twin=None, mode="full")
    assert not bad.passed and bad.failing_tensors == ["dX"]


def test_check_layer_of_a_class_says_pass_an_instance():
    """L15: check_layer(SomeClass, X) said "type.forward(X, training=False) ... raised TypeError"."""
    import pytest

    import gradcheck
    from gradcheck.errors import UsageError

    with pytest.raises(UsageError, match=r"got the class _Softmax, not a layer: pass an instance, "
                                         r"check_layer\(_Softmax\(\.\.\.\), X\)"):
        gradcheck.check_layer(_Softmax, np.ones((2, 3)), twin=None)


NG = """
import numpy as np

def linear_forward(A, W, b):
    return W @ A + b, (A, W, b)

def linear_backward(dZ, cache):
    A_prev, W, b = cache
    m = A_prev.shape[1]
    return W.T @ dZ, dZ @ A_prev.T / m, np.sum(dZ, axis=1, keepdims=True) / m

def lin_mixed_forward(A, W, b):
    return W @ A + b, (A, W, b)

def lin_mixed_backward(dZ, cache):
    A_prev, W, b = cache
    m = A_prev.shape[1]
    return W.T @ dZ, dZ @ A_prev.T / m, np.sum(dZ, axis=1, keepdims=True)

def linear_activation_forward(A_prev, W, b, activation):
    Z = W @ A_prev + b
    return np.maximum(Z, 0), ((A_prev, W, b), Z)

def linear_activation_backward(dA, cache, activation):
    (A_prev, W, b), Z = cache
    dZ = dA * (Z > 0)
    m = A_prev.shape[1]
    return W.T @ dZ, dZ @ A_prev.T / m, np.sum(dZ, axis=1, keepdims=True) / m

class DenseColsM:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((3, 4)); self.b = np.zeros((3, 1))
    def forward(self, X):
        self.X = X; return self.W @ X + self.b
    def backward(self, dZ):
        m = self.X.shape[1]
        self.dW = dZ @ self.X.T / m; self.db = dZ.sum(axis=1, keepdims=True) / m
        return self.W.T @ dZ
"""
NG_SHAPES = ["--input-shape", "4,6;3,4;3,1"]


def test_ng_pair_fix_names_the_students_functions(tmp_path):
    """M3: the fix said `linear_forward_m_forward = linear_forward_forward` for ::linear_forward."""
    f = student(tmp_path, NG)
    text = both(run_here("check", f"{f}::linear_forward", *NG_SHAPES))
    assert "linear_m_forward = linear_forward;" in text and "linear_forward_forward" not in text, text
    assert "def linear_m_backward(dout, cache): dA, dW, db = linear_backward(dout, cache)" in text, text


def test_ng_pair_fix_passes_the_required_argument_and_the_fix_runs(tmp_path):
    """M3: the wrapper for linear_activation left out its required `activation`; the suggested pair now PASSes."""
    f = student(tmp_path, NG)
    init = ["--init", '{"activation": "relu"}']
    text = both(run_here("check", f"{f}::linear_activation", *NG_SHAPES, *init))
    want = ("def linear_activation_m_backward(dout, cache, activation): dA_prev, dW, db = "
            "linear_activation_backward(dout, cache, activation); m = dout.shape[1]; return dA_prev, m * dW, m * db")
    assert want in text, text
    f.write_text(NG + "\nlinear_activation_m_forward = linear_activation_forward\n"
                 "def linear_activation_m_backward(dout, cache, activation):\n"
                 "    dA_prev, dW, db = linear_activation_backward(dout, cache, activation)\n"
                 "    m = dout.shape[1]\n    return dA_prev, m * dW, m * db\n")
    p = run_here("check", f"{f}::linear_activation_m", *NG_SHAPES, *init)
    assert p.returncode == 0, both(p)


def test_ng_class_fix_is_a_subclass_not_a_function_pair(tmp_path):
    """M3: for a class the fix suggested a DenseColsM_forward/DenseColsM_backward pair the file does not have."""
    f = student(tmp_path, NG)
    text = both(run_here("check", f"{f}::DenseColsM", "--input-shape", "4,6"))
    assert "DenseColsM_forward" not in text and "class DenseColsMM(DenseColsM)" in text, text


def test_dw_over_m_and_db_not_is_named_a_bug(tmp_path):
    """M4: dW/m with db without it was "a convention mismatch, not necessarily a bug" with a fix that broke db."""
    f = student(tmp_path, NG)
    p = run_here("check", f"{f}::lin_mixed", *NG_SHAPES)
    text = both(p)
    assert p.returncode == 1, text
    assert "dW is 6 times too small" in text and "while db has no 1/m" in text, text
    assert "not necessarily a bug" not in text and "m * db" not in text, text


NG_MODEL = """
import numpy as np

def L_model_forward(X, parameters):
    AL = 1 / (1 + np.exp(-(parameters["W1"] @ X + parameters["b1"])))
    return AL, [(X, parameters)]

def L_model_backward(AL, Y, caches):
    return {"dW1": (AL - Y) @ caches[0][0].T}
"""


def test_ng_model_pair_names_the_protocols_signature(tmp_path):
    """M7: L_model gave "1 input shape given, but ... (X, parameters)", then with --init a crash blamed on the
    student (exit 3, "missing 1 required positional argument: 'caches'")."""
    f = student(tmp_path, NG_MODEL)
    for more in ([], ["--init", '{"parameters": {"W1": [[1, 2, 3, 4]], "b1": [[0]]}}']):
        p = run_here("check", f"{f}::L_model", "--input-shape", "4,8", *more)
        text = both(p)
        assert p.returncode == 2, text
        assert "L_model_backward(AL, Y, caches) does not fit the function-pair protocol" in text, text
        assert "L_model_backward(dout, cache)" in text and "requires 3 arguments (AL, Y, caches)" in text, text


def test_a_misspelt_option_names_itself_and_the_close_match(tmp_path):
    """L13: --input-shpe was reported as a missing --input-shape; --rtoll under the top-level usage."""
    f = student(tmp_path, SOFTMAX)
    p = run_here("check", f"{f}::SoftmaxRows", "--input-shpe", "4,5")
    assert p.returncode == 2 and "usage: gradcheck check" in p.stderr, both(p)
    assert "unrecognized option --input-shpe; did you mean --input-shape?" in p.stderr, both(p)
    p = run_here("check", f"{f}::SoftmaxRows", "--input-shape", "4,5", "--rtoll", "1e-3")
    assert p.returncode == 2 and "usage: gradcheck check" in p.stderr, both(p)
    assert "unrecognized option --rtoll; did you mean --rtol?" in p.stderr, both(p)


def test_a_class_name_in_the_wrong_case_offers_the_right_one(tmp_path):
    """L14: ::softmaxrows listed the classes but offered no "did you mean SoftmaxRows?"."""
    f = student(tmp_path, SOFTMAX)
    p = run_here("check", f"{f}::softmaxrows", "--input-shape", "4,5")
    assert p.returncode == 2 and "Did you mean SoftmaxRows?" in both(p), both(p)
