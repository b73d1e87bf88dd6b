"""Tester 14: array attributes without a gradient, and how a layer's output is read.

#1: a learnable scalar (a PReLU's ``alpha``) held as a 0-d array or a numpy scalar (``np.float64``) is an array
attribute like any other, in every storage style: its gradient forgotten, the layer is NOT CHECKED as a whole (exit 3),
as for ``alpha`` of shape (1,), never a silent PASS; alone (no stored gradient at all) it is named as a parameter with
no gradient to check; a Python float stays a hyperparameter; a stored ``dalpha`` is checked."""

import pytest
from test_cli import both, run, run_here, student

PRELU = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((5, 3)) * 0.5
        self.b = rng.standard_normal(3) * 0.1
        self.alpha = ALPHA

    def forward(self, X):
        self.X = X
        self.Z = X @ self.W + self.b
        return np.where(self.Z > 0, self.Z, self.alpha * self.Z)

    def backward(self, dY):
        dZ = dY * np.where(self.Z > 0, 1.0, self.alpha)
        self.dW = self.X.T @ dZ
        self.db = dZ.sum(0)
        DALPHA
        return dZ @ self.W.T
"""

ALONE = """
import numpy as np

class L:
    def __init__(self):
        self.alpha = ALPHA

    def forward(self, X):
        self.X = X
        return np.where(X > 0, X, self.alpha * X)

    def backward(self, dY):
        return dY * np.where(self.X > 0, 1.0, self.alpha)
"""

PARAMS_LIST = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = [rng.standard_normal((5, 3)) * 0.5, rng.standard_normal(3) * 0.1, ALPHA]
        self.grads = [None, None, None]

    def forward(self, X):
        W, b, a = self.params
        self.X, self.Z = X, X @ W + b
        return np.where(self.Z > 0, self.Z, a * self.Z)

    def backward(self, dY):
        W, b, a = self.params
        dZ = dY * np.where(self.Z > 0, 1.0, a)
        self.grads[0], self.grads[1] = self.X.T @ dZ, dZ.sum(0)
        return dZ @ W.T
"""

PARAMS_DICT = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((5, 3)) * 0.5, "b": rng.standard_normal(3) * 0.1}
        self.grads = {}
        self.alpha = ALPHA

    def forward(self, X, training=False):
        self.X, self.Z = X, X @ self.params["W"] + self.params["b"]
        return np.where(self.Z > 0, self.Z, self.alpha * self.Z)

    def backward(self, dY):
        dZ = dY * np.where(self.Z > 0, 1.0, self.alpha)
        self.grads["W"], self.grads["b"] = self.X.T @ dZ, dZ.sum(0)
        return dZ @ self.params["W"].T
"""

OUTER = PRELU.replace("class L:", "class Inner:") + """

class L:
    def __init__(self):
        self.inner = Inner()

    def forward(self, X):
        return self.inner.forward(X)

    def backward(self, dY):
        return self.inner.backward(dY)
"""

SCALARS = ["np.array(0.25)", "np.float64(0.25)", "np.float32(0.25)"]
WRONG_DALPHA = "self.dalpha = -np.sum(dY * self.Z * (self.Z > 0))  # BUG: wrong mask and sign"
RIGHT_DALPHA = "self.dalpha = np.sum(dY * self.Z * (self.Z <= 0))"


def _check(tmp_path, body, alpha, dalpha="pass", name="alpha"):
    src = body.replace("DALPHA", dalpha).replace("ALPHA", alpha)
    path = student(tmp_path, src, f"t14_{abs(hash(src))}.py")
    p = run_here("check", f"{path}::L", "--input-shape", "8,5")
    return p, both(p)


@pytest.mark.parametrize("alpha", SCALARS)
def test_forgotten_gradient_of_a_scalar_weight_is_not_a_silent_pass(tmp_path, alpha):
    p, out = _check(tmp_path, PRELU, alpha)
    assert p.returncode == 3, out
    assert ("NOT CHECKED as a whole: L: the gradients that were checked match (see above), but gradcheck cannot tell "
            "whether alpha is a weight whose gradient backward forgot (then set self.dalpha) or a constant (then name "
            "it self._alpha, or pass --constants alpha).") in out, out
    assert "PASS" not in out, out


@pytest.mark.parametrize("alpha", SCALARS + ["np.array([0.25])"])
def test_scalar_weight_in_a_sub_layer_is_not_a_silent_pass(tmp_path, alpha):
    p, out = _check(tmp_path, OUTER, alpha)
    assert p.returncode == 3, out
    assert "cannot tell whether inner.alpha is a weight whose gradient backward forgot" in out, out


@pytest.mark.parametrize("alpha", SCALARS)
def test_scalar_outside_a_params_dict_is_not_a_silent_pass(tmp_path, alpha):
    p, out = _check(tmp_path, PARAMS_DICT, alpha)
    assert p.returncode == 3, out
    assert "cannot tell whether alpha is a weight whose gradient backward forgot" in out, out
    assert "PASS" not in out, out


def test_zero_d_array_in_a_params_list_without_its_gradient_is_not_silent(tmp_path):
    """params[2] without grads[2]: undecided, as an array of any name is (tester15 H3: no list of weight-like
    names tells a weight from a constant)."""
    p, out = _check(tmp_path, PARAMS_LIST, "np.array(0.25)")
    assert p.returncode == 3, out
    assert "cannot tell whether params[2] is a weight whose gradient backward forgot" in out, out
    assert "PASS" not in out, out


@pytest.mark.parametrize("alpha", SCALARS)
def test_scalar_alone_is_named_a_parameter_with_no_gradient(tmp_path, alpha):
    p, out = _check(tmp_path, ALONE, alpha)
    assert ("note: alpha is a parameter with no gradient to check: backward computes no dalpha, so only the gradient "
            "of the input is checked.") in out, out
    assert "no parameters" not in out, out


@pytest.mark.parametrize("alpha", SCALARS)
def test_scalar_alone_not_named_like_a_weight_is_a_hyperparameter(tmp_path, alpha):
    """Without any stored gradient, a 0-d ``rate`` (a dropout's, M4) is not called a parameter."""
    p, out = _check(tmp_path, ALONE.replace("alpha", "rate"), alpha)
    assert p.returncode == 0 and "no parameters" in out and "note:" not in out, out


@pytest.mark.parametrize("alpha", SCALARS + ["0.25"])
def test_a_stored_wrong_dalpha_is_checked_and_fails(tmp_path, alpha):
    p, out = _check(tmp_path, PRELU, alpha, WRONG_DALPHA)
    assert p.returncode == 1, out
    assert "dalpha" in out and "FAIL" in out, out


@pytest.mark.parametrize("alpha", SCALARS)
def test_a_stored_right_dalpha_passes(tmp_path, alpha):
    p, out = _check(tmp_path, PRELU, alpha, RIGHT_DALPHA)
    assert p.returncode == 0, out
    assert "PASS: L: every gradient (dX, dW, db, dalpha) matches" in out, out


def test_a_python_float_stays_a_hyperparameter(tmp_path):
    """LeakyReLU's fixed slope as a Python float: a hyperparameter, no warning, PASS (unchanged)."""
    p, out = _check(tmp_path, PRELU, "0.25")
    assert p.returncode == 0, out
    assert "PASS: L: every gradient (dX, dW, db) matches" in out and "WARNING" not in out, out


def test_a_zero_d_array_forward_does_not_read_is_not_named(tmp_path):
    """A 0-d array forward never reads (a learning rate kept for an update method) is no unchecked weight."""
    body = PRELU.replace("self.alpha = ALPHA", "self.alpha = 0.25\n        self.lr = np.array(0.01)")
    p, out = _check(tmp_path, body, "0.25")
    assert p.returncode == 0 and "lr" not in out.split("name tensor")[0], out


def test_a_rate_moved_past_one_still_reads_as_used(tmp_path):
    """M4 (tester13): a dropout's 0-d rate moved past 1 makes binomial raise; the probe still measures the rest."""
    body = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((5, 3))
        self.keep = np.array(1.0)

    def forward(self, X):
        self.X = X
        m = np.random.binomial(1, self.keep, size=(X.shape[0], 3)) / self.keep
        self.m = m
        return (X @ self.W) * m

    def backward(self, dY):
        d = dY * self.m
        self.dW = self.X.T @ d
        return d @ self.W.T
"""
    p, out = _check(tmp_path, body, "")
    assert "found without measuring" not in out and " dW (5, 3) " in out, out


def test_diagnose_names_a_forgotten_scalar_gradient():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from buggy_layers import diagnose

    for key in ("scalars.py::PReLUDenseNoGrad", "scalars.py::PReLUDenseF64NoGrad"):
        d = diagnose(key)
        assert not d.passed and d.codes == ["weight-or-constant"], d.sentence()
        assert "cannot tell whether alpha is a weight whose gradient backward forgot" in d.sentence(), d.sentence()
    for key in ("scalars.py::PReLUDense", "scalars.py::PReLUDenseF64"):
        assert diagnose(key).passed, key


# #2: the one rule for an array forward reads (the output moves with it) that has no gradient, as the README states it.
RULE = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((5, 3)) * 0.5
        self.NAME = np.linspace(0.5, 1.5, 3)

    def forward(self, X):
        self.X = X
        return (X @ self.W) * self.NAME

    def backward(self, dY):
        d = dY * self.NAME
        STORE
        return d @ self.W.T
"""


def _rule(tmp_path, name, stored):
    body = RULE.replace("NAME", name).replace("STORE", "self.dW = self.X.T @ d" if stored else "pass")
    path = student(tmp_path, body, f"rule_{name}_{stored}.py")
    p = run_here("check", f"{path}::L", "--input-shape", "8,5")
    return p, both(p)


@pytest.mark.parametrize("name", ["gamma", "scale", "alpha", "mask", "running_mean", "foo", "c", "T"])
def test_rule_weight_name_beside_stored_gradients_is_not_checked_exit_3(tmp_path, name):
    """Whatever the name (tester15 H3: Goodfellow's ``c``, a temperature ``T`` once PASSed)."""
    p, out = _rule(tmp_path, name, True)
    assert p.returncode == 3, out
    assert f"NOT CHECKED as a whole: L: the gradients that were checked match (see above), but gradcheck cannot tell " \
           f"whether {name} is a weight whose gradient backward forgot" in out, out


@pytest.mark.parametrize("name", ["_mask", "_gamma"])
def test_rule_private_name_beside_stored_gradients_is_a_warned_buffer_exit_0(tmp_path, name):
    p, out = _rule(tmp_path, name, True)
    assert p.returncode == 0, out
    assert f"WARNING: forward uses {name} but backward sets no gradient for it" in out, out
    assert "read as a constant buffer" in out and "PASS: L: every gradient (dX, dW) matches" in out, out


@pytest.mark.parametrize("name", ["gamma", "mask", "foo"])
def test_rule_without_stored_gradients_names_every_array_a_parameter_with_no_gradient(tmp_path, name):
    p, out = _rule(tmp_path, name, False)
    assert p.returncode == 0, out
    assert ("note: W, {0} are parameters with no gradient to check: backward computes no dW, d{0}, so only the "
            "gradient of the input is checked.").format(name) in out, out


def test_readme_states_the_rule_once():
    from pathlib import Path

    readme = " ".join((Path(__file__).resolve().parents[1] / "docs" / "checking.md").read_text().split())
    assert "is a weight whose gradient was forgotten (a wrong result, exit 1) when it is named like a weight" \
        not in readme
    assert "when it is named like a weight" not in readme  # tester15 H3: no list of weight-like names
    assert "is `NOT CHECKED as a whole` (exit 3) whatever it is called" in readme
    assert "one with a private name (`self._pe`, `self._T`), and one forward writes, in either mode, or reads in " \
        "eval mode alone" in readme
    assert "a layer whose backward stores no gradient at all" in readme


# #3: a forward that returns None and stores self.output (the NNFS convention) is read there, whatever backward returns.
SIG = """
import numpy as np

class L:
    def forward(self, X):
        self.ATTR = 1 / (1 + np.exp(-X))

    def backward(self, dY):
        return dY * self.ATTR * (FACTOR - self.ATTR)
"""


def _sig(tmp_path, attr, factor="1", through=run_here):
    body = SIG.replace("ATTR", attr).replace("FACTOR", factor)
    p = through("check", f"{student(tmp_path, body, f'sig_{attr}_{factor}.py')}::L", "--input-shape", "6,4")
    return p, both(p)


def test_forward_storing_self_output_with_backward_returning_dx_is_read_there(tmp_path):
    p, out = _sig(tmp_path, "output", through=run)  # the console script; the other checks run in this process
    assert p.returncode == 0, out
    assert ("forward returns nothing and stores Y in self.output (Neural Networks from Scratch): Y is read there, dX "
            "is what backward returns") in out, out
    assert "PASS: L: every gradient (dX) matches" in out, out


def test_forward_storing_self_output_with_a_wrong_backward_fails(tmp_path):
    p, out = _sig(tmp_path, "output", "2")  # BUG: sigmoid' = s (2 - s)
    assert p.returncode == 1 and "FAIL: L" in out, out


def test_forward_storing_another_attribute_is_told_to_return_it(tmp_path):
    p, out = _sig(tmp_path, "out")
    assert p.returncode == 3, out
    assert ("returned None, so there is no output to check: gradcheck reads the Y that forward returns (return Y), or, "
            "when forward returns nothing, the Y it stores in self.output") in out, out
    assert "`return self.dinputs`" not in out, out


# #4: a forward without a training argument that changes state: named by what it changes, no mode, no BatchNorm.
def test_a_call_counter_is_named_without_a_training_argument_or_running_statistics():
    from pathlib import Path

    path = Path(__file__).resolve().parent / "buggy_layers" / "state.py"
    p = run_here("check", f"{path}::AnnealedTanhCounts", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 3, out  # tester16 M5: state carried between calls, no gradient compared: NOT CHECKED
    assert "NOT CHECKED: AnnealedTanhCounts: forward changes the layer's state" in out, out
    # self.s = 1 / (1 + 0.001 * self.t) is recomputed by every call: only self.t is carried (tester19s)
    assert "forward changes self.t between calls, so two calls on the same input differ" in out, out
    assert ("diagnosis: forward(X) changes the layer's state: two calls with the same input differ by up to") in out
    assert "each call updates state (self.t) that the next call reads (state carried from one call" in out
    assert "a counter or schedule: change it outside forward" in out, out
    for invented in ("training=", "running_mean", "running statistics", "generator gradcheck cannot rewind"):
        assert invented not in out, (invented, out)
    p = run_here("check", f"{path}::AnnealedTanh", "--input-shape", "4,5")
    assert p.returncode == 0 and "PASS: AnnealedTanh" in both(p), both(p)


def test_diagnose_names_the_call_counter():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from buggy_layers import diagnose

    d = diagnose("state.py::AnnealedTanhCounts")
    assert not d.passed and d.codes[0] == "forward-changes-state", d.sentence()
    assert "training=" not in d.sentence() and "running" not in d.sentence(), d.sentence()
    assert diagnose("state.py::AnnealedTanh").passed
