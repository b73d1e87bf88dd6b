"""newuser29 H1: an attribute-style weight that is no float array (complex ``W + 0j``, a list of lists ``.tolist()``,
an object array ``.astype(object)``) was left out of the check in silence while backward set ``self.dW`` 123 times
too large: PASS on dX and db alone (exit 0). It is refused now (exit 3), as the same weight in a ``params`` dict is
and an integer one already was, naming the weight, what it is and what to do."""

import numpy as np
import pytest
from test_cli import both, run_here, student

import gradcheck
from gradcheck.errors import ProtocolError

LAYERS = """
import numpy as np


class CplxBug:
    def __init__(self, n_in=5, n_out=3):
        self.W = np.random.default_rng(0).normal(size=(n_in, n_out)) + 0j
        self.b = np.zeros(n_out)

    def forward(self, X):
        self.X = X
        return (X @ self.W + self.b).real

    def backward(self, dY):
        self.dW = 123.0 * self.X.T @ dY
        self.db = dY.sum(0)
        return (dY @ self.W.T).real


class ListBug:
    def __init__(self, n_in=5, n_out=3):
        self.W = np.random.default_rng(0).normal(size=(n_in, n_out)).tolist()
        self.b = np.zeros(n_out)

    def forward(self, X):
        self.X = X
        return X @ np.array(self.W) + self.b

    def backward(self, dY):
        self.dW = 123.0 * self.X.T @ dY
        self.db = dY.sum(0)
        return dY @ np.array(self.W).T


class ObjBug:
    def __init__(self, n_in=5, n_out=3):
        self.W = np.random.default_rng(0).normal(size=(n_in, n_out)).astype(object)
        self.b = np.zeros(n_out)

    def forward(self, X):
        self.X = X
        return (X @ self.W + self.b).astype(float)

    def backward(self, dY):
        self.dW = 123.0 * self.X.T @ dY
        self.db = dY.sum(0)
        return (dY @ self.W.T).astype(float)


class Sizes:
    # a list of numbers that is no weight (nothing writes dsizes): checked as before
    def __init__(self):
        self.sizes = [5, 3]
        self.W = np.random.default_rng(0).normal(size=(5, 3))

    def forward(self, X):
        self.X = X
        return X @ self.W

    def backward(self, dY):
        self.dW = self.X.T @ dY
        return dY @ self.W.T
"""


@pytest.mark.parametrize(("cls", "got", "advice"), [
    ("CplxBug", "ndarray of dtype complex128", "gradcheck checks real parameters (a complex weight's numerical "
                                               "gradient is taken along real steps only): create it as float64"),
    ("ListBug", "list", "Store it as a numpy float array, np.array(..., dtype=float)"),
    ("ObjBug", "ndarray of dtype object", "Write it as float: .astype(float)"),
])
def test_a_weight_that_is_no_float_array_is_refused_not_skipped(tmp_path, cls, got, advice):
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::{cls}", "--input-shape", "8,5")
    text = both(p)
    assert p.returncode == 3, text
    assert (f"{cls}.W must be a numpy float array (it is perturbed in place to compute the numerical gradient); "
            f"got {got} (backward writes a gradient for it, so it is a parameter). {advice}") in text, text
    assert "PASS" not in text, text


def test_in_process_check_layer_refuses_it_too(tmp_path):
    ns = {}
    exec(LAYERS, ns)  # noqa: S102 - the test's own layers
    with pytest.raises(ProtocolError, match=r"CplxBug\.W must be a numpy float array .* complex128"):
        gradcheck.check_layer(ns["CplxBug"](), (8, 5), twin=None)


def test_the_params_dict_style_gets_the_same_advice():
    class P:
        def __init__(self):
            self.params = {"W": np.random.default_rng(0).normal(size=(5, 3)) + 0j}
            self.grads = {}

        def forward(self, X, training=False):
            self.X = X
            return (X @ self.params["W"]).real

        def backward(self, dY):
            self.grads = {"W": self.X.T @ dY}
            return (dY @ self.params["W"].T).real

    with pytest.raises(ProtocolError, match=r"P\.params\['W'\] must be a numpy float array .* complex128\. "
                                            r"gradcheck checks real parameters"):
        gradcheck.check_layer(P(), (8, 5), twin=None)


def test_a_list_of_sizes_is_no_parameter(tmp_path):
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::Sizes", "--input-shape", "8,5")
    assert p.returncode == 0 and "PASS: Sizes: every gradient (dX, dW) matches" in both(p), both(p)
