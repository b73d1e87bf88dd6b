"""Session 19 (issue 10's leftovers from session 18): a layer PASS without --reference says that forward values were
not checked, naming the matching manualprop class; the grader's hint for gradients that accumulate across backward
calls; LayerNorm statistics over the batch axis named; has_* and enabled switches never a silent PASS of one branch."""

import numpy as np
import pytest
from test_cli import both, run_here, student

LINEAR = """
import numpy as np

class Linear:
    def __init__(self, in_features=5, out_features=3, rng=0):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": rng.standard_normal(out_features)}
        self.grads = {}
    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]
    def backward(self, dY):
        self.grads = {"W": dY.T @ self.X, "b": dY.sum(axis=0)}
        return dY @ self.params["W"]

class Affine(Linear):
    pass

class LinearAccumulates(Linear):  # notebook 07's Exercise 1 with += into grads
    def __init__(self, in_features=5, out_features=3, rng=0):
        super().__init__(in_features, out_features, rng)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
    def backward(self, dY):
        self.grads["W"] += dY.T @ self.X
        self.grads["b"] += dY.sum(axis=0)
        return dY @ self.params["W"]
"""


@pytest.mark.parametrize("cls, hint", [("Linear", "--reference manualprop.Linear to compare them"),
                                       ("Affine", "--reference manualprop.NAME (e.g. manualprop.Linear)")])
def test_a_layer_pass_without_reference_says_forward_values_were_not_checked(tmp_path, cls, hint):
    f = student(tmp_path, LINEAR, "lin.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 0 and f"PASS: {cls}:" in out, out
    assert f"{cls}: forward values not checked (central differences test backward against your own forward): " \
           f"pass {hint}" in out, out


def test_a_pass_that_compared_forward_values_stays_quiet(tmp_path):
    f = student(tmp_path, LINEAR, "lin.py")
    p = run_here("check", f"{f}::Linear", "--input-shape", "4,5", "--reference", "manualprop.Linear",
                 "--init", '{"in_features": 5, "out_features": 3}')
    out = both(p)
    assert p.returncode == 0 and "the forward output match" in out, out
    assert "forward values not checked" not in out, out


def test_grader_names_gradients_that_accumulate_across_backward_calls(tmp_path):
    """Notebook 07 cell 4 said "Is the layer deterministic?" of a Linear whose backward adds into grads (+=): its
    first call matches the reference, the check's later calls give 2x."""
    import manualprop as mp
    from gradcheck.grading import layer_gradients

    ns = {}
    exec(LINEAR, ns)  # noqa: S102 - the test's own layer
    X = np.random.default_rng(0).standard_normal((4, 5))
    v = layer_gradients(ns["LinearAccumulates"](5, 3, rng=1), X, mp.Linear(5, 3))
    text = v.markdown()
    assert not v.passed, text
    assert "deterministic" not in text, text
    for t in ("dW", "db"):
        assert f"{t} matched the reference on the first backward call, and is 2 times the correct gradient" in text
    assert "the gradients accumulate across backward calls (grads[...] += ...). Assign them" in text, text
    assert layer_gradients(ns["Linear"](5, 3, rng=1), X, mp.Linear(5, 3)).passed


def test_layernorm_statistics_over_the_batch_axis_are_named_not_elsewhere():
    """Session 18 left LayerNormWrongAxis as 'no known bug pattern': a LayerNorm whose backward (the compact formula,
    CS231n's batchnorm_backward) or forward reduces over axis 0. Named norm-wrong-axis; a correct BatchNorm and
    LayerNorm still PASS, and BatchNorm's own missing paths keep their name."""
    from buggy_layers import diagnose, first_code

    got = {k: first_code(diagnose(f"norm.py::{k}")) for k in ("LayerNormWrongAxis", "LayerNormWrongAxisForward",
                                                              "LayerNormWrongAxisCS231n", "LayerNorm", "BatchNorm1D",
                                                              "BatchNormNaive", "LayerNormNaive")}
    assert got == {"LayerNormWrongAxis": "norm-wrong-axis", "LayerNormWrongAxisForward": "norm-wrong-axis",
                   "LayerNormWrongAxisCS231n": "norm-wrong-axis", "LayerNorm": "PASS", "BatchNorm1D": "PASS",
                   "BatchNormNaive": "missing-mean-var-paths", "LayerNormNaive": "missing-mean-var-paths"}, got
    said = diagnose("norm.py::LayerNormWrongAxis").sentence()
    assert "over axis=0 (the batch: BatchNorm's statistics), but forward normalises over axis=-1" in said, said
    assert "LayerNorm takes each sample's mean and variance over its features (axis=-1" in said, said
    said = diagnose("norm.py::LayerNormWrongAxisForward").sentence()
    assert "in a LayerNorm, forward's statistics are on the wrong axis: X.mean(axis=-1, keepdims=True)" in said, said


HAS_BIAS = """
import numpy as np

class LinearHasBias:
    K = 1
    def __init__(self, n_in=5, n_out=3):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((n_in, n_out)); self.b = rng.standard_normal(n_out)
        self.has_bias = True
    def forward(self, x):
        self.x = x
        return x @ self.W + self.b if self.has_bias else x @ self.W
    def backward(self, dy):
        self.dW = self.x.T @ dy
        if self.has_bias:
            self.db = dy.sum(axis=0)
            return dy @ self.W.T
        return dy @ self.W.T * self.K

class LinearBiasArgBug(LinearHasBias):  # PyTorch's bias=True; the no-bias branch's dX is x2
    K = 2
    def __init__(self, n_in=5, n_out=3, bias=True):
        super().__init__(n_in, n_out)
        self.has_bias = bias
"""


def test_a_has_bias_switch_is_checked_as_built_and_the_other_branch_named(tmp_path):
    """has_* adds or removes a weight: flipped on a layer built with b, a correct backward that writes no db there
    FAILed and the discovery lost b in both branches (a db bug PASSed); so it is checked as built, and the header WARNS
    that the other branch did not run, with the --init that checks it (was a PASS without a word)."""
    f = student(tmp_path, HAS_BIAS, "has_bias.py")
    p = run_here("check", f"{f}::LinearHasBias", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 0 and "every gradient (dX, dW, db) matches" in out, out
    assert ("WARNING: forward branches on self.has_bias, the layer's configuration as built, which gradcheck does not "
            "switch: only the branch of self.has_bias = True was checked, a bug in the other would pass unseen; "
            "self.has_bias is a constant of __init__: make it an argument (e.g. self.has_bias = bias)") in out, out
    p = run_here("check", f"{f}::LinearBiasArgBug", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 0 and "only the branch of self.has_bias = True was checked" in out, out
    assert "check the other with --init '{\"bias\": false}'" in out, out
    p = run_here("check", f"{f}::LinearBiasArgBug", "--input-shape", "4,5", "--init", '{"bias": false}')
    out = both(p)
    assert p.returncode == 1 and "FAIL: LinearBiasArgBug: gradient mismatch in dX" in out, out


def test_enabled_and_has_bias_planted_bugs_are_named():
    """self.enabled (a dropout switched off) is checked at each value: its disabled branch's x2 is named; a has_bias
    layer's b keeps its gradient check (the mean-for-sum bug named), as a constant or from an argument."""
    from buggy_layers import diagnose, first_code

    keys = ["DropEnabledBug", "LinearHasBiasMeanBias", "LinearBiasArgMeanBias", "DropEnabled", "LinearHasBias",
            "LinearBiasArg"]
    got = [first_code(diagnose(f"switches.py::{k}")) for k in keys]
    assert got == ["factor", "bias-mean", "bias-mean", "PASS", "PASS", "PASS"], got
