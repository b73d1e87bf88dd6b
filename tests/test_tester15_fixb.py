"""Tester 15: H3 (a weight whose gradient backward forgot PASSed when its name was not on a list of weight-like
names: Goodfellow's output bias ``c``, ``A``, a temperature ``T``), M4 (Deep Learning from Scratch vol. 2's losses
hold ``params, grads = [], []``), M5 (the books' Dropout and BatchNorm: the messages name ``--training``), L2
(``--targets labels:K`` past the class axis is a usage error). Each check runs ``gradcheck.cli.main`` in this
process (``test_cli.run_here``)."""

import pytest
from test_cli import both, run_here, student

NAMES = """
import numpy as np

class Goodfellow_out:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.V = rng.standard_normal((5, 3)); self.c = rng.standard_normal(3)
    def forward(self, h):
        self.h = h
        return h @ self.V + self.c
    def backward(self, do):
        self.dV = self.h.T @ do
        return do @ self.V.T

class Affine_A:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.A = rng.standard_normal((5, 3)); self.bias = rng.standard_normal(3)
    def forward(self, x):
        self.x = x
        return x @ self.A + self.bias
    def backward(self, dy):
        self.dbias = dy.sum(0)
        return dy @ self.A.T

class Temperature_forgot:
    def __init__(self):
        self.T = np.array([2.0]); self.W = np.eye(5)
    def forward(self, x):
        z = (x @ self.W) / self.T
        e = np.exp(z - z.max(1, keepdims=True)); self.y = e / e.sum(1, keepdims=True); self.x = x
        return self.y
    def backward(self, dy):
        dz = self.y * (dy - (dy * self.y).sum(1, keepdims=True))
        self.dW = self.x.T @ (dz / self.T)
        return (dz / self.T) @ self.W.T

class Temperature_private(Temperature_forgot):
    def __init__(self):
        self._T = np.array([2.0]); self.W = np.eye(5)
    def forward(self, x):
        self.T = self._T
        return super().forward(x)

class DictOut:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"V": rng.standard_normal((5, 3))}
        self.c = rng.standard_normal(3)
        self.grads = {}
    def forward(self, h):
        self.h = h
        return h @ self.params["V"] + self.c
    def backward(self, do):
        self.grads["V"] = self.h.T @ do
        return do @ self.params["V"].T
"""

DLFS2 = """
import numpy as np

class SoftmaxWithLoss:
    def __init__(self):
        self.params, self.grads = [], []
    def forward(self, x, t):
        e = np.exp(x - x.max(1, keepdims=True)); self.y = e / e.sum(1, keepdims=True); self.t = t
        return -np.log(self.y[np.arange(len(t)), t]).mean()
    def backward(self, dout=1):
        dx = self.y.copy(); dx[np.arange(len(self.t)), self.t] -= 1
        return dx * dout / len(self.t)

class SoftmaxWrong(SoftmaxWithLoss):
    def backward(self, dout=1):
        dx = self.y.copy(); dx[np.arange(len(self.t)), self.t] -= 1
        return dx * dout
"""

BOOKS = """
import numpy as np

class Layer_Dropout:
    def __init__(self, rate):
        self.rate = 1 - rate
    def forward(self, inputs, training):
        self.inputs = inputs
        if not training:
            self.output = inputs.copy()
            return
        self.binary_mask = np.random.binomial(1, self.rate, size=inputs.shape) / self.rate
        self.output = inputs * self.binary_mask
    def backward(self, dvalues):
        self.dinputs = dvalues * self.binary_mask

class Dropout:
    def __init__(self, dropout_ratio=0.5):
        self.dropout_ratio = dropout_ratio
        self.mask = None
    def forward(self, x, train_flg=True):
        if train_flg:
            self.mask = np.random.rand(*x.shape) > self.dropout_ratio
            return x * self.mask
        return x * (1.0 - self.dropout_ratio)
    def backward(self, dout):
        return dout * self.mask
"""


@pytest.mark.parametrize("cls, name, grad", [("Goodfellow_out", "c", "self.dc"), ("Affine_A", "A", "self.dA"),
                                             ("Temperature_forgot", "T", "self.dT")])
def test_a_forgotten_gradient_is_not_checked_whatever_the_name(tmp_path, cls, name, grad):
    f = student(tmp_path, NAMES, "names.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "8,5")
    out = both(p)
    assert p.returncode == 3, out
    assert "PASS:" not in out, out
    assert f"cannot tell whether {name} is a weight whose gradient backward forgot (then set {grad})" in \
        " ".join(out.split()), out
    declared = run_here("check", f"{f}::{cls}", "--input-shape", "8,5", "--constants", name)
    assert declared.returncode == 0 and f"PASS: {cls}" in both(declared), both(declared)


def test_a_private_constant_still_passes(tmp_path):
    f = student(tmp_path, NAMES, "names.py")
    p = run_here("check", f"{f}::Temperature_private", "--input-shape", "8,5")
    assert p.returncode == 0 and "PASS: Temperature_private" in both(p), both(p)


def test_an_array_outside_a_params_dict_is_not_checked_whatever_the_name(tmp_path):
    f = student(tmp_path, NAMES, "names.py")
    p = run_here("check", f"{f}::DictOut", "--input-shape", "8,5")
    out = " ".join(both(p).split())
    assert p.returncode == 3 and "forward uses the array attribute c, not in params" in out, out


def test_diagnose_names_a_forgotten_short_named_weight():
    """The planted twin (tests/buggy_layers styles.py::OutputLayerNoDc) is named, its correct twin passes."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from buggy_layers import diagnose

    d = diagnose("styles.py::OutputLayerNoDc")
    assert not d.passed and d.codes == ["weight-or-constant"], d.sentence()
    assert "cannot tell whether c is a weight whose gradient backward forgot (then set self.dc)" in d.sentence()
    assert diagnose("styles.py::OutputLayer").passed


def test_a_loss_with_empty_params_and_grads_lists_is_checked(tmp_path):
    f = student(tmp_path, DLFS2, "dlfs2.py")
    ok = run_here("check", f"{f}::SoftmaxWithLoss", "--loss", "--input-shape", "8,5", "--targets", "labels")
    assert ok.returncode == 0 and "PASS: SoftmaxWithLoss" in both(ok), both(ok)
    bad = run_here("check", f"{f}::SoftmaxWrong", "--loss", "--input-shape", "8,5", "--targets", "labels")
    assert bad.returncode == 1 and "times too large" in " ".join(both(bad).split()), both(bad)


def test_book_dropouts_name_the_training_option(tmp_path):
    f = student(tmp_path, BOOKS, "books.py")
    nnfs = run_here("check", f"{f}::Layer_Dropout", "--input-shape", "8,5", "--init", '{"rate": 0.3}')
    assert nnfs.returncode == 1 and "is checked in that mode alone by --training" in " ".join(
        both(nnfs).split()), both(nnfs)
    dlfs = run_here("check", f"{f}::Dropout", "--input-shape", "8,5")
    assert dlfs.returncode == 3 and "is checked in that mode alone by --training" in " ".join(
        both(dlfs).split()), both(dlfs)
    for cls, init in (("Layer_Dropout", '{"rate": 0.3}'), ("Dropout", "{}")):
        p = run_here("check", f"{f}::{cls}", "--input-shape", "8,5", "--init", init, "--training")
        assert p.returncode == 0 and f"PASS: {cls}" in both(p), both(p)


def test_labels_past_the_class_axis_are_a_usage_error(tmp_path):
    f = student(tmp_path, DLFS2, "dlfs2.py")
    p = run_here("check", f"{f}::SoftmaxWithLoss", "--loss", "--input-shape", "4,5", "--targets", "labels:9")
    out = " ".join(both(p).split())
    assert p.returncode == 2, out
    assert "--targets labels:9: y_pred's last axis, the classes, has 5 entries (--input-shape 4,5)" in out, out
