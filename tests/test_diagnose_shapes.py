"""Gradients of the wrong shape (new-user report 3, items 1, 2 and 8): every detector tolerates any
shape, and the right values in the wrong shape are named as such, in ``gradcheck check`` and in grading."""

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_cli import run_here

from gradcheck.diagnose import _permuted_copies, name_signature
from gradcheck.grading.diagnosis import diagnose

ROOT = Path(__file__).resolve().parents[1]
GRADCHECK = Path(sys.executable).parent / "gradcheck"
SHAPES = [(), (1,), (3,), (6,), (1, 3), (3, 1), (2, 3), (3, 2), (4, 6), (4, 2, 3), (2, 3, 1), (1, 2, 3),
          (2, 1, 3, 1), (0, 3), (3, 0)]


@pytest.mark.parametrize("got_shape, exp_shape", list(itertools.product(SHAPES, SHAPES)))
def test_every_shape_pair_gets_a_finding_and_no_exception(got_shape, exp_shape):
    rng = np.random.default_rng(0)
    n = rng.standard_normal(exp_shape)
    candidates = [rng.standard_normal(got_shape)]
    if n.size == int(np.prod(got_shape)):
        candidates.append(n.reshape(got_shape))
    for m in candidates:
        f = name_signature("dx", m, n, fallback=True)
        assert (f is None) == (m.shape == n.shape and np.allclose(m, n)) or n.size == 0
        if f is not None and m.shape != n.shape:
            assert f.code in ("values-right-shape-wrong", "wrong-shape", "transposed", "not-summed", "permuted")
        s = diagnose("dx", m, n, batch_size=2)  # the grader's face: a sentence, never an exception
        assert isinstance(s, str)
    for _words, cand in _permuted_copies(n, got_shape):  # the copies have the asked shape (or the same axes)
        assert cand.size == n.size


def test_values_right_after_a_reshape_are_named_with_both_shapes():
    n = np.arange(1.0, 25.0).reshape(4, 2, 3)
    f = name_signature("dx", n.reshape(4, 6), n)
    assert f.code == "values-right-shape-wrong"
    assert f.sentence() == ("dx has shape (4, 6), expected (4, 2, 3), the shape of x: values right, shape wrong (the "
                            "elements are in the right order, only the shape differs); reshape dx to x's shape: "
                            "dx.reshape(x.shape).")
    # wrong values in the wrong shape are not "values right"
    assert name_signature("dx", n.reshape(4, 6)[:, ::-1], n).code != "values-right-shape-wrong"
    # a real reshape-for-transpose bug keeps its own name
    assert name_signature("dx", n.transpose(0, 2, 1).reshape(4, 6), n).code == "permuted"


@pytest.mark.parametrize("got, exp, words", [((3,), (1, 3), "lacks a size-1 axis"),
                                             ((1, 3), (3,), "has an extra size-1 axis"),
                                             ((3, 1), (1, 3), "a size-1 axis is in the wrong place"),
                                             ((5, 3), (5, 3, 1), "lacks a size-1 axis")])
def test_size_one_axes_are_named_not_called_a_transpose(got, exp, words):
    n = np.array([2.0, -1.0, 0.5, 4.0, 3.0] * 3)[:int(np.prod(exp))].reshape(exp)
    f = name_signature("dW", n.reshape(got), n)
    assert f.code == "values-right-shape-wrong" and words in f.message, f.message
    assert "keepdims=True" in f.message and "dW.reshape(W.shape)" in f.message
    assert "transpose" not in f.message


def test_values_unknown_are_not_called_right():
    n = np.full((4, 2, 3), np.nan)  # the numerical gradient could not run
    f = name_signature("dx", np.ones((4, 6)), n, fallback=True)
    assert f.code == "wrong-shape" and "values right" not in f.message


def _check(tmp_path, source, target, *args, here=False):
    """``gradcheck check layers.py::target`` in ``tmp_path``: the console script, or (``here``) in this process."""
    (tmp_path / "layers.py").write_text(source)
    if here:
        return run_here("check", f"layers.py::{target}", *args, cwd=tmp_path)
    return subprocess.run([str(GRADCHECK), "check", f"layers.py::{target}", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "MPLBACKEND": "Agg"})


AFFINE = '''import numpy as np
def affine_forward(x, w, b):
    return x.reshape(x.shape[0], -1) @ w + b, (x, w, b)
def affine_backward(dout, cache):
    x, w, b = cache
    return dout @ w.T, x.reshape(x.shape[0], -1).T @ dout, dout.sum(axis=0)
'''
FLAT = '''import numpy as np
class Flatten:
    def forward(self, X):
        self.shape = X.shape
        return X.reshape(X.shape[0], -1)
    def backward(self, dY):
        return dY
class Scale:
    def __init__(self):
        self.params = {"W": np.array([[2.0, -1.0, 0.5]])}; self.grads = {}
    def forward(self, X):
        self.X = X
        return X * self.params["W"]
    def backward(self, dY):
        self.grads["W"] = (dY * self.X).sum(axis=0)
        return dY * self.params["W"]
'''


@pytest.mark.parametrize("source, target, shape, words", [
    (AFFINE, "affine", "4,2,3;6,5;5", "FAIL: affine: wrong shape of dx. diagnosis: dx has shape (4, 6), expected (4, 2, 3), the shape of x: values "
     "right, shape wrong"),
    (FLAT, "Flatten", "2,3,2,2", "FAIL: Flatten: wrong shape of dX. diagnosis: dX has shape (2, 12), expected (2, 3, 2, 2), the shape of X: values "
     "right, shape wrong"),
    (FLAT, "Scale", "4,3", "dW has shape (3,), expected (1, 3), the shape of W: values right, shape wrong (the shape "
     "lacks a size-1 axis)"),
])
def test_cli_fails_a_wrong_shape_with_exit_1(tmp_path, source, target, shape, words):
    p = _check(tmp_path, source, target, "--input-shape", shape, here=True)
    out = " ".join(p.stdout.split())
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and words in out, out
    assert "right values in the wrong places" not in out


def test_grading_costs_only_the_wrong_shaped_tensor(tmp_path):
    """CS231n's affine with dx not reshaped: dw and db keep their points, dx is named (no crash, no 0/6)."""
    src = ROOT / "assignments" / "cs231n_layers"
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text((src / "solution" / "layers.py").read_text().replace(
        "dx = (dout @ w.T).reshape(x.shape)", "dx = dout @ w.T"))
    assert "dx = dout @ w.T\n" in (sub / "layers.py").read_text()
    p = run_here("grade", sub, "--tests", src / "tests", "--out", tmp_path / "out")
    assert p.returncode == 0, p.stdout + p.stderr
    data = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())
    bad = {t["name"]: t for t in data["tests"] if t["status"] != "passed"}
    hidden = "Hidden: affine gradients for random input shapes and sizes"
    assert set(bad) - {hidden} == {"affine_backward: gradients dx, dw, db (2 points each)"}, bad
    vis = bad["affine_backward: gradients dx, dw, db (2 points each)"]
    assert (vis["score"], vis["max_score"]) == (4.0, 6.0)
    assert "dx has shape (4, 6), expected (4, 2, 3), the shape of x: values right, shape wrong" in vis["output"]
    assert "`dw`: ok" in vis["output"] and "`db`: ok" in vis["output"]
    assert all("IndexError" not in t["output"] and "wrong places" not in t["output"] for t in bad.values())
    lost = bad[hidden]["max_score"] - bad[hidden]["score"] if hidden in bad else 0.0
    assert lost <= 1 and (hidden not in bad or "values right, shape wrong" in bad[hidden]["output"])  # dx's point
    assert data["score"] == data["extra_data"]["max_score"] - 2 - lost


# --------------------------------------------------------------------------- item 10: two gradients swapped

BN_SWAPPED = '''import numpy as np
class BatchNormGradsSwapped:
    def __init__(self, num_features, eps=1e-5):
        self.params = {"gamma": np.linspace(0.5, 1.5, num_features), "beta": np.linspace(-0.2, 0.2, num_features)}
        self.grads = {}
        self.eps = eps
    def forward(self, X):
        mu = X.mean(0); var = X.var(0)
        self.inv = 1/np.sqrt(var + self.eps)
        self.xhat = (X - mu) * self.inv
        return self.params["gamma"] * self.xhat + self.params["beta"]
    def backward(self, dY):
        N = dY.shape[0]
        self.grads["beta"] = (dY * self.xhat).sum(0)
        self.grads["gamma"] = dY.sum(0)
        dxh = dY * self.params["gamma"]
        return self.inv / N * (N*dxh - dxh.sum(0) - self.xhat*(dxh*self.xhat).sum(0))
'''


def test_name_swaps_names_each_slot_in_its_protocol():
    from gradcheck.diagnose import name_swaps

    a, b, c = np.array([1.0, 2.0]), np.array([3.0, -4.0]), np.array([0.5, 0.25])
    right = {"dx": c, "dgamma": a, "dbeta": b}
    got = name_swaps({"dx": c, "dgamma": b, "dbeta": a}, right, keys=["gamma", "beta"])
    assert set(got) == {"dgamma", "dbeta"} and {f.code for f in got.values()} == {"swapped"}
    assert got["dbeta"].message.startswith("grads['beta'] holds the gradient of gamma and vice versa")
    ret = name_swaps({"dx": c, "dgamma": b, "dbeta": a}, right)  # returned by a CS231n pair
    assert ret["dgamma"].message.startswith("dgamma holds the gradient of beta and vice versa: backward returns them")
    # not a swap: one of them right, or the other one wrong as well, or shapes differ
    assert name_swaps({"dgamma": a, "dbeta": a}, right) == {}
    assert name_swaps({"dgamma": b, "dbeta": 2 * a}, right) == {}
    assert name_swaps({"dgamma": b[:1], "dbeta": a}, right) == {}


def test_cli_names_grads_keys_swapped(tmp_path):
    p = _check(tmp_path, BN_SWAPPED, "BatchNormGradsSwapped", "--input-shape", "4,3", "--init",
               '{"num_features": 3}')
    out = " ".join(p.stdout.split())
    assert p.returncode == 1, p.stdout + p.stderr
    assert "grads['gamma'] holds the gradient of beta and vice versa" in out and "no known bug pattern" not in out


def test_grader_names_grads_keys_swapped_for_a_class():
    import manualprop as mp
    from gradcheck.grading import checks

    ns: dict = {}
    exec(BN_SWAPPED.replace("(self, X)", "(self, X, training=False)"), ns)  # the grader's protocol (a sandbox adapts)
    X = np.random.default_rng(0).standard_normal((6, 3))
    v = checks.layer_gradients(ns["BatchNormGradsSwapped"](3), X, mp.BatchNorm1D(3), seed=0, training=True)
    msgs = {p.name: (p.passed, p.message) for p in v.parts}
    assert msgs["dX"][0] and not msgs["dgamma"][0] and not msgs["dbeta"][0]
    assert msgs["dgamma"][1].startswith("grads['gamma'] holds the gradient of beta and vice versa")
    assert msgs["dbeta"][1].startswith("grads['beta'] holds the gradient of gamma and vice versa")


def test_grading_names_a_cs231n_pair_returning_dbeta_for_dgamma(tmp_path):
    src = ROOT / "assignments" / "cs231n_layers"
    sub = tmp_path / "sub"
    sub.mkdir()
    text = (src / "solution" / "layers.py").read_text()
    assert "    return dx, dgamma, dbeta\n" in text
    (sub / "layers.py").write_text(text.replace("    return dx, dgamma, dbeta\n", "    return dx, dbeta, dgamma\n"))
    p = run_here("grade", sub, "--tests", src / "tests", "--out", tmp_path / "out")
    assert p.returncode == 0, p.stdout + p.stderr
    data = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())
    out = next(t["output"] for t in data["tests"] if t["name"].startswith("batchnorm_backward"))
    assert "dgamma holds the gradient of beta and vice versa: backward returns them in the wrong order" in out, out
    assert "dbeta holds the gradient of gamma and vice versa" in out and "no known bug pattern" not in out
    assert "`dx`: ok" in out


@pytest.mark.parametrize("expected", [(1, 5), (5,)])
def test_a_gradient_with_its_batch_axis_not_summed_is_named_with_the_sum_that_keeps_the_shape(expected):
    """tester30k M5: makemore's ``dbnbias = dhpreact`` (shape (8, 5) for a bias (1, 5)) was "wrong shape" alone, not
    the unsummed batch axis (which (8, 5) for (5,) already was); the sum named keeps the (1, 5) shape."""
    m = np.random.default_rng(0).standard_normal((8, 5))
    f = name_signature("dbnbias", m, m.sum(axis=0).reshape(expected), fallback=True)
    assert f.code == "not-summed", f.sentence()
    assert f.sentence().startswith(f"dbnbias was not summed over the batch: it has shape (8, 5), one row per example, "
                                   f"but the correct gradient has shape {expected}"), f.sentence()
    if expected == (1, 5):
        assert "(e.g. dY.sum(axis=0, keepdims=True), which keeps the size-1 axis of shape (1, 5))" in f.sentence()
    else:
        assert "(e.g. dY.sum(axis=0))" in f.sentence()
    # the values of another gradient: an extra batch axis, not a missing sum
    g = name_signature("dbnbias", m, 2 * m.sum(axis=0).reshape(expected), fallback=True)
    assert g.code == "not-summed" and "has an extra batch axis: shape (8, 5)" in g.sentence(), g.sentence()
