"""Issue 10 leftovers of how ``gradcheck check`` reads a layer's switches (tester15b H6, H3 follow-up, M3, M4, L1,
L2; each test fails on the code before its fix): an ``inplace=True`` option that writes into X as asked, every
combination of up to 3 booleans, each value of a string compared with 3 and more, ``keepdims=True`` (an output of
another shape), and the notes' words for a switch that is not a training mode."""

import pytest
from test_cli import both, run_here, student

INPLACE = """
import numpy as np
class ReLUInplace:
    '''correct: inplace=True writes into X, as PyTorch's nn.ReLU(inplace=True) does'''
    def forward(self, X, inplace=False):
        self.mask = X > 0
        if inplace:
            X[~self.mask] = 0
            return X
        return np.where(self.mask, X, 0)
    def backward(self, dY):
        return dY * self.mask
class ReLUInplaceBug:
    '''bug under inplace=True: the mask is read after the write, so it is all True'''
    def forward(self, X, inplace=False):
        if inplace:
            np.maximum(X, 0, out=X)
            self.mask = X >= 0
            return X
        self.mask = X > 0
        return np.maximum(X, 0)
    def backward(self, dY):
        return dY * self.mask
class ReLUDefaultWrites(ReLUInplace):
    '''inplace=False writes into X too: a wrong result'''
    def forward(self, X, inplace=False):
        self.mask = X > 0
        X[~self.mask] = 0
        return X if inplace else X.copy()
class ReLUFastWrites(ReLUInplace):
    '''fast=True writes into X: not an in-place switch's name, a wrong result naming its branch'''
    def forward(self, X, fast=False):
        self.mask = X > 0
        if fast:
            X[~self.mask] = 0
            return X
        return np.where(self.mask, X, 0)
"""


@pytest.mark.parametrize(("cls", "code", "said"), [
    ("ReLUInplace", 0, "PASS: ReLUInplace"),
    ("ReLUInplaceBug", 1, "FAIL: ReLUInplaceBug [inplace=True]: gradient mismatch in dX. diagnosis: dX equals dY"),
    ("ReLUDefaultWrites", 1, "ReLUDefaultWrites.forward [inplace=False] modified its input X in place"),
    ("ReLUFastWrites", 1, "ReLUFastWrites.forward [fast=True] modified its input X in place")])
def test_an_inplace_switch_may_write_into_x(tmp_path, cls, code, said):
    """H6: before, every one of them was exit 1 "forward modified its input X in place", naming no branch; the
    correct ReLUInplace FAILed and ReLUInplaceBug never reached its mask bug."""
    f = student(tmp_path, INPLACE, "relu.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "4,5")
    out = " ".join(both(p).split())
    assert p.returncode == code and said in out, out
    noted = "NOTE: with inplace=True forward overwrites the caller's X in place, as inplace=True asks"
    assert (noted in out) == (cls != "ReLUFastWrites"), out  # ReLUDefaultWrites: its inplace=True as asked


FLAGS = """
import numpy as np
class TwoFlags:
    def forward(self, X, square=False, double=False):
        self.X, self.s, self.d = X, square, double
        Y = X ** 2 if square else X * 1.0
        return 2 * Y if double else Y
    def backward(self, dY):
        g = 2 * self.X * dY if self.s else dY * 1.0
        return 2 * g if self.d else g
class ThreeFlagsBug:
    '''bug only with double=True and negate=True, square either way'''
    def forward(self, X, square=False, double=False, negate=False):
        self.X, self.s, self.d, self.n = X, square, double, negate
        Y = X ** 2 if square else X * 1.0
        Y = 2 * Y if double else Y
        return -Y if negate else Y
    def backward(self, dY):
        g = 2 * self.X * dY if self.s else dY * 1.0
        g = 2 * g if self.d else g
        return g if self.d and self.n else -g if self.n else g
class FourFlags:
    def forward(self, X, a=False, b=False, c=False, d=False):
        self.f = (a, b, c, d)
        return X * np.prod([k + 2 for k, on in enumerate(self.f) if on])
    def backward(self, dY):
        return dY * np.prod([k + 2 for k, on in enumerate(self.f) if on])
"""


def test_two_correct_booleans_are_checked_in_every_combination(tmp_path):
    """Before, a second boolean forward reads was NOT CHECKED (exit 3) even when both were correct."""
    f = student(tmp_path, FLAGS, "flags.py")
    p = run_here("check", f"{f}::TwoFlags", "--input-shape", "3,4")
    out = " ".join(both(p).split())
    assert p.returncode == 0 and "NOT CHECKED" not in out, out
    for row in ("square=False, double=False", "square=True, double=False", "square=False, double=True",
                "square=True, double=True"):
        assert f"TwoFlags [{row}] " in out, out


def test_a_bug_in_one_combination_of_three_booleans_fails_naming_it(tmp_path):
    f = student(tmp_path, FLAGS, "flags.py")
    p = run_here("check", f"{f}::ThreeFlagsBug", "--input-shape", "3,4")
    out = both(p)
    assert p.returncode == 1 and out.count("ThreeFlagsBug [") >= 8, out
    assert "FAIL: ThreeFlagsBug [square=False, double=True, negate=True]: gradient mismatch in dX" in out, out


def test_four_booleans_are_not_checked_naming_the_cap(tmp_path):
    f = student(tmp_path, FLAGS, "flags.py")
    p = run_here("check", f"{f}::FourFlags", "--input-shape", "3,4")
    out = " ".join(both(p).split())
    assert p.returncode == 3 and "NOT CHECKED: FourFlags: forward reads b = False" in out, out
    assert "every combination of at most 3 booleans (8 checks), and forward reads 4" in out, out


ACT = """
import numpy as np
class Act:
    def forward(self, X, activation="relu"):
        self.a, self.X = activation, X
        if activation == "relu":
            return np.maximum(X, 0)
        if activation in ("tanh",):
            return np.tanh(X)
        if activation == "sigmoid":
            return 1 / (1 + np.exp(-X))
        raise ValueError(activation)
    def backward(self, dY):
        if self.a == "relu":
            return dY * (self.X > 0)
        if self.a == "tanh":
            return dY * (1 - np.tanh(self.X) ** 2)
        s = 1 / (1 + np.exp(-self.X))
        return dY * s * (1 - s)
class ActBug(Act):
    '''bug in the 'sigmoid' branch only: (1 - s) forgotten'''
    def backward(self, dY):
        if self.a == "sigmoid":
            return dY / (1 + np.exp(-self.X))
        return super().backward(dY)
"""


@pytest.mark.parametrize(("cls", "code"), [("Act", 0), ("ActBug", 1)])
def test_each_of_three_string_values_is_checked(tmp_path, cls, code):
    """Before, a string compared with 3 values was NOT CHECKED (exit 3), naming 'tanh', 'sigmoid' as not run."""
    f = student(tmp_path, ACT, "act.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "3,4")
    out = both(p)
    assert p.returncode == code and "NOT CHECKED" not in out, out
    for v in ("relu", "tanh", "sigmoid"):
        assert f"{cls} [activation='{v}']" in out, out
    assert code == 0 or f"FAIL: {cls} [activation='sigmoid']: gradient mismatch in dX" in out, out


KEEPDIMS = """
import numpy as np
class SumKeepdims:
    def forward(self, X, keepdims=False):
        self.X, self.k = X, keepdims
        return (X ** 2).sum(axis=1, keepdims=keepdims)
    def backward(self, dY):
        return (dY if self.k else dY[:, None]) * 2 * self.X
class SumKeepdimsBug(SumKeepdims):
    '''bug with keepdims=True: the factor 2 forgotten'''
    def backward(self, dY):
        return dY * self.X if self.k else dY[:, None] * 2 * self.X
"""


@pytest.mark.parametrize(("cls", "code"), [("SumKeepdims", 0), ("SumKeepdimsBug", 1)])
def test_keepdims_is_checked_with_an_upstream_gradient_of_its_shape(tmp_path, cls, code):
    """M3: before, keepdims=True (shape (3, 1) where the default gives (3,)) was NOT CHECKED, with the advice
    "make forward return one array there"."""
    f = student(tmp_path, KEEPDIMS, "kd.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "3,4")
    out = both(p)
    assert p.returncode == code and f"{cls} [keepdims=True]" in out and "one array there" not in out, out


WORDS = """
import numpy as np
class ReLUVerbose:
    def forward(self, X, verbose=False):
        self.X = X
        if verbose:
            print("relu", X.shape)
        return np.maximum(X, 0)
    def backward(self, dY):
        return dY * (self.X > 0)
class SigmoidDebugBug:
    '''debug=True keeps the pre-activation: backward wrong there, forward the same'''
    def forward(self, X, debug=False):
        Y = 1 / (1 + np.exp(-X))
        self.Y = X if debug else Y
        return Y
    def backward(self, dY):
        return dY * self.Y * (1 - self.Y)
class DropoutDLfS:
    '''Deep Learning from Scratch's Dropout: the mask only a training forward sets'''
    def __init__(self, dropout_ratio=0.5):
        self.dropout_ratio, self.mask = dropout_ratio, None
    def forward(self, x, train_flg=True):
        if train_flg:
            self.mask = np.random.rand(*x.shape) > self.dropout_ratio
            return x * self.mask
        return x * (1.0 - self.dropout_ratio)
    def backward(self, dout):
        return dout * self.mask
"""


def test_a_flag_that_is_no_mode_gets_its_own_words(tmp_path):
    """M4: before, "training and eval forwards give the same output ... (pass training=True / --training to check
    the training forward alone)" for verbose=True/False."""
    f = student(tmp_path, WORDS, "w.py")
    p = run_here("check", f"{f}::ReLUVerbose", "--input-shape", "3,4")
    out = " ".join(both(p).split())
    assert p.returncode == 0 and "verbose=True and verbose=False give the same output" in out, out
    assert "training" not in out.replace("--training", ""), out


def test_same_output_other_backward_reads_as_sentences(tmp_path):
    """L1: before, "... but backward may still branch on the mode, which selects no training mode: each value is
    checked" (two clauses run together), and the footer spoke of training and eval mode."""
    f = student(tmp_path, WORDS, "w.py")
    p = run_here("check", f"{f}::SigmoidDebugBug", "--input-shape", "3,4")
    out = " ".join(both(p).split())
    assert p.returncode == 1 and "but backward may still branch on debug, so each value is checked" in out, out
    assert "backward fails with debug=True only" in out and "training mode" not in out, out


def test_a_footer_names_the_layer_own_switch(tmp_path):
    """L2: before, "backward after forward(X, training=False) on a fresh layer raised" for a switch named
    train_flg."""
    f = student(tmp_path, WORDS, "w.py")
    p = run_here("check", f"{f}::DropoutDLfS", "--input-shape", "3,4", "--init", '{"dropout_ratio": 0.0}')
    out = " ".join(both(p).split())
    assert p.returncode == 0 and "forward(X, train_flg=False) on a fresh layer raised" in out, out
    assert "training=False" not in out, out


UNSAFE = """
import numpy as np
class SquareCache:
    '''correct; return_cache=True returns (Y, cache): that combination cannot be checked'''
    def forward(self, X, square=False, return_cache=False):
        self.X, self.s = X, square
        Y = X ** 2 if square else X * 1.0
        return (Y, {"X": X}) if return_cache else Y
    def backward(self, dY):
        return 2 * self.X * dY if self.s else dY * 1.0
class ActRaises:
    def forward(self, X, activation="relu"):
        self.a, self.X = activation, X
        if activation == "relu":
            return np.maximum(X, 0)
        if activation == "tanh":
            return np.tanh(X)
        if activation == "sigmoid":
            raise NotImplementedError("TODO")
        raise ValueError(activation)
    def backward(self, dY):
        return dY * (self.X > 0) if self.a == "relu" else dY * (1 - np.tanh(self.X) ** 2)
"""


@pytest.mark.parametrize(("cls", "said"), [
    ("SquareCache", "forward reads return_cache = False (other value True not run: with square=False, "
                    "return_cache=True forward returned a tuple)"),
    ("ActRaises", "forward reads activation = 'relu' (other value 'sigmoid' not run: with it forward raised "
                  "NotImplementedError: TODO)")])
def test_a_combination_forward_cannot_give_an_array_for_is_not_checked(tmp_path, cls, said):
    """A combination whose forward returns no float array (or raises) is NOT CHECKED, naming it: not a FAIL of a
    correct layer (the first version of the combinations said "wrong result (exit 1) ... gave Y as a tuple")."""
    f = student(tmp_path, UNSAFE, "unsafe.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "3,4")
    out = " ".join(both(p).split())
    assert p.returncode == 3 and f"NOT CHECKED: {cls}: {said}" in out, out
    assert "Make forward return one float array with each value" in out, out


MIXED = """
import numpy as np
class FlagAndKindBug:
    '''a boolean beside a two-valued string; bug only with kind='sq' '''
    def forward(self, X, noisy=False, kind="lin"):
        self.X, self.kind = X, kind
        return X ** 2 if kind == "sq" else 3.0 * X
    def backward(self, dY):
        return dY * self.X if self.kind == "sq" else 3.0 * dY
"""


def test_a_string_beside_a_switched_boolean_is_checked_at_each_value(tmp_path):
    """Before, a two-valued string beside the boolean switched was never run nor named: the bug PASSed (exit 0);
    then it was NOT CHECKED (exit 3); since session 17 each of its values is combined with the boolean's and the
    bug FAILs where it is."""
    f = student(tmp_path, MIXED, "mixed.py")
    p = run_here("check", f"{f}::FlagAndKindBug", "--input-shape", "3,4")
    out = " ".join(both(p).split())
    assert p.returncode == 1 and "FAIL: FlagAndKindBug [noisy=False, kind='sq']: gradient mismatch in dX." in out, out
    assert "dX is 0.5 times the correct gradient" in out and "PASS" not in out, out
