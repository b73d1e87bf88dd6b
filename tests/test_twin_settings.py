"""The twin and the --reference are built with the checked layer's settings (--init, then its
attributes under the constructor's names or their common synonyms: alpha for negative_slope,
epsilon for eps, rate for p), and a forward that still differs from theirs is named as two
different functions, not as a gradient bug of the student's (tester6 D6)."""

import pytest
from test_cli import both, run, run_here, student

import autoprop as ap
import manualprop as mp
from gradcheck.errors import TwinError
from gradcheck.sources import constructor_kwargs

KNAME = """
import numpy as np

class LeakyReLU:  # the slope under a name no twin knows
    def __init__(self, k=0.1):
        self.k = k
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        self.X = X
        return np.where(X > 0, X, self.k * X)

    def backward(self, dY):
        return dY * np.where(self.X > 0, 1.0, self.k)
"""

LAYERS = """
import numpy as np

class LeakyReLU:
    def __init__(self, alpha=0.1):
        self.alpha = alpha
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        self.X = X
        return np.where(X > 0, X, self.alpha * X)

    def backward(self, dY):
        return dY * np.where(self.X > 0, 1.0, SLOPE)


class LayerNorm:
    def __init__(self, normalized_shape, eps=1e-3):
        D = normalized_shape
        self.params = {"gamma": np.linspace(0.5, 1.5, D), "beta": np.linspace(-0.2, 0.2, D)}
        self.grads, self.eps = {}, eps

    def forward(self, X, training=False):
        mu, var = X.mean(-1, keepdims=True), X.var(-1, keepdims=True)
        self.inv = 1 / np.sqrt(var + self.eps)
        self.xh = (X - mu) * self.inv
        return self.params["gamma"] * self.xh + self.params["beta"]

    def backward(self, dY):
        self.grads["gamma"], self.grads["beta"] = (dY * self.xh).sum(0), dY.sum(0)
        d = dY * self.params["gamma"]
        return self.inv * (d - d.mean(-1, keepdims=True) - self.xh * (d * self.xh).mean(-1, keepdims=True))
"""


class _Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def test_constructor_kwargs_take_init_then_attributes_then_synonyms_then_defaults():
    assert constructor_kwargs(ap.layers.LeakyReLU, _Obj(alpha=0.2), None, "L") == {"negative_slope": 0.2}
    assert constructor_kwargs(ap.layers.LeakyReLU, _Obj(alpha=0.2), {"negative_slope": 0.3}, "L") == {
        "negative_slope": 0.3}
    assert constructor_kwargs(mp.LayerNorm, _Obj(epsilon=1e-3), {"normalized_shape": 4}, "N") == {
        "normalized_shape": 4, "eps": 1e-3}
    assert constructor_kwargs(ap.layers.Dropout, _Obj(rate=0.25), None, "D") == {"p": 0.25}
    assert constructor_kwargs(ap.layers.LeakyReLU, _Obj(), None, "L") == {}  # its default
    assert constructor_kwargs(ap.layers.Softmax, _Obj(dim=0), None, "S") == {"axis": 0}  # PyTorch's name
    assert constructor_kwargs(ap.layers.GELU, _Obj(approx="tanh"), None, "G") == {"approximate": "tanh"}
    with pytest.raises(TwinError, match="takes no 'bias'"):
        constructor_kwargs(ap.layers.LeakyReLU, _Obj(), {"bias": False}, "L")
    with pytest.raises(TwinError, match="needs 'normalized_shape'"):
        constructor_kwargs(mp.LayerNorm, _Obj(), None, "N")


def test_a_twin_gets_the_students_slope_and_a_reference_its_eps(tmp_path):
    f = student(tmp_path, LAYERS.replace("SLOPE", "self.alpha"))
    p = run("check", f"{f}::LeakyReLU", "--input-shape", "3,4", "--twin")  # the console script
    assert p.returncode == 0 and "and the forward output match" in both(p), both(p)
    p = run_here("check", f"{f}::LayerNorm", "--input-shape", "3,4", "--init", '{"normalized_shape": 4}',
            "--reference", "manualprop.LayerNorm")
    assert p.returncode == 0 and "and the forward output match" in both(p), both(p)


def test_a_forward_that_still_differs_is_named_as_two_functions_not_a_gradient_bug(tmp_path):
    f = student(tmp_path, KNAME)
    p = run_here("check", f"{f}::LeakyReLU", "--input-shape", "3,4", "--twin")
    out = both(p)
    assert p.returncode == 1
    assert "Y differs from the twin's forward" in out and "its constructor takes negative_slope" in out
    assert ("FAIL: LeakyReLU: forward mismatch in Y; dX agrees with central differences of this forward, not with "
            "the twin's.") in out and "no known bug pattern" not in out and "gradient mismatch" not in out


def test_a_wrong_backward_beside_a_twin_is_still_named_as_a_gradient_bug(tmp_path):
    f = student(tmp_path, LAYERS.replace("SLOPE", "0.01"))  # backward ignores the layer's own slope
    p = run_here("check", f"{f}::LeakyReLU", "--input-shape", "3,4", "--twin")
    assert p.returncode == 1 and "differs from the twin's forward" not in both(p)
    assert "FAIL: LeakyReLU: gradient mismatch in dX" in both(p)
