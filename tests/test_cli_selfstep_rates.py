"""`gradcheck check` on layers whose backward steps their own weights at a rate held where gradcheck did not look
(issue 10, tester13 H1, H2, M1, L1): a module-level dict (``CONFIG["lr"]``), a SimpleNamespace or an object held
by a module global, a rate named ``alpha``; a literal rate (``self.W -= 0.01 * dW``), which cannot be set, exits 3
naming the weights that moved instead of failing a correct dX; a layer that stores dW and also steps has its
stored dW checked.

Each runs the CLI (the student's code in its sandbox) and fails on the code before these fixes: one test the
console script, the others its ``gradcheck.cli.main`` in this process (``test_cli.run_here``), which spares the
start of a Python per check.
"""

import re

import pytest
from test_cli import both, run, run_here, student

LAYER = """
import types

import numpy as np

CONFIG = {"lr": 0.1}
cfg = types.SimpleNamespace(lr=0.1)

class Hyper:
    def __init__(self):
        self.learning_rate = 0.05

hp = Hyper()

class Linear:
    def __init__(self):
        rng = np.random.default_rng(1)
        self.W = rng.normal(size=(5, 3)); self.b = rng.normal(size=3) * 0.1
        self.alpha = 0.1; self.eta = 0.1; self.step_size = 0.1; self.hyper = (0.1,)
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        dX = dY @ self.W.T
        lr = RATE
        self.W -= lr * (self.X.T @ dY)
        self.b -= lr * dY.BIAS(axis=0)
        return dX
"""

#: Rates gradcheck finds and sets: the header's words for each.
FOUND = {'CONFIG["lr"]': "CONFIG['lr'] (a module's global)", "cfg.lr": "cfg.lr (a module's global)",
         "hp.learning_rate": "hp.learning_rate (a module's global)", "self.alpha": "self.alpha",
         "self.eta": "self.eta", "self.step_size": "self.step_size"}


@pytest.mark.parametrize("rate", list(FOUND))
@pytest.mark.parametrize(("bias", "code"), [("sum", 0), ("mean", 1)])
def test_a_rate_held_in_a_module_dict_namespace_or_object_is_found(tmp_path, rate, bias, code):
    """A rate in a module-level dict, SimpleNamespace or object, or named alpha/eta/step_size, was not found: the
    step was taken as a backward that changes its weights, a FAIL in dX of a correct layer (H1, H2)."""
    src = LAYER.replace("RATE", rate).replace("BIAS", bias)
    p = run_here("check", f"{student(tmp_path, src, 'rate.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    assert f"it steps with the rate in {FOUND[rate]}, set to 0.25" in out, out
    assert "moving W, b" in out, out
    if code:
        assert "FAIL: Linear: gradient mismatch in db." in out, out
        assert "mismatch in dX" not in out, out
    else:
        assert "PASS: Linear: every gradient (dX, dW, db)" in out, out


@pytest.mark.parametrize("rate", ["0.01", "self.hyper[0]", "[0.1][0]"])
def test_a_rate_that_cannot_be_set_is_not_checkable(tmp_path, rate):
    """A literal rate (``self.W -= 0.01 * dW``), or one held where gradcheck does not look, FAILed dX of a correct
    layer ("backward is not linear in dY"): a backward that moves the weights at a rate that cannot be set exits 3
    naming the weights that moved (H2, the whole kind)."""
    src = LAYER.replace("RATE", rate).replace("BIAS", "sum")
    p = run_here("check", f"{student(tmp_path, src, 'lit.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 3, out
    assert "backward updates the weights itself (W, b moved), at a rate gradcheck could not find or set" in out, out
    assert "only store the gradients (self.dW = ...), without stepping" in out and "self.lr" in out, out
    assert "FAIL" not in out and "PASS" not in out, out


STORES = """
import numpy as np

class Optimizer_SGD:
    def __init__(self, learning_rate=1.0):
        self.learning_rate = learning_rate
    def update_params(self, layer):
        layer.weights += -self.learning_rate * layer.dweights
        layer.biases += -self.learning_rate * layer.dbiases

class Own:
    def __init__(self):
        rng = np.random.default_rng(1)
        self.weights = rng.normal(size=(5, 3)); self.biases = rng.normal(size=(1, 3)) * 0.1
        self.optimizer = Optimizer_SGD(0.1)
    def forward(self, X):
        self.X = X
        return X @ self.weights + self.biases
    def backward(self, dY):
        self.dweights = self.X.T @ dY
        self.dbiases = DB
        dX = dY @ self.weights.T
        self.optimizer.update_params(self)
        return dX

class Steps:
    def __init__(self):
        rng = np.random.default_rng(1)
        self.W = rng.normal(size=(5, 3)); self.b = rng.normal(size=3) * 0.1; self.lr = 0.1
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        self.dW = self.X.T @ dY
        self.db = dY.sum(0)
        dX = dY @ self.W.T
        self.W -= self.lr * self.dW
        self.b -= self.lr * self.db * FACTOR
        return dX
"""


@pytest.mark.parametrize(("name", "db", "factor", "code", "bad"), [
    ("Own", "dY.sum(0, keepdims=True)", "1", 0, None), ("Own", "dY.mean(0, keepdims=True)", "1", 1, "dbiases"),
    ("Steps", "0", "1", 0, None), ("Steps", "0", "2", 1, "db")])
def test_a_layer_that_stores_its_gradient_and_steps_is_checked(tmp_path, name, db, factor, code, bad):
    """``self.dW = ...; self.W -= lr * self.dW`` (or an NNFS optimizer called in backward) exited 3 "W has several
    gradient attributes (dW, W_grad)": the stored gradient is checked, a step that disagrees with it FAILs (M1)."""
    src = STORES.replace("DB", db).replace("FACTOR", factor)
    p = run_here("check", f"{student(tmp_path, src, 'own.py')}::{name}", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    assert "several gradient attributes" not in out, out
    if code:
        assert f"FAIL: {name}: gradient mismatch in {bad}" in out, out  # "." or " (db is b's step ...)"
    else:
        assert f"PASS: {name}: every gradient" in out, out


def test_the_header_names_each_weights_read_gradient(tmp_path):
    """The header named every read step W_grad, even b's: each weight's own name (L1)."""
    src = LAYER.replace("RATE", "self.alpha").replace("BIAS", "sum").replace("self.alpha = 0.1", "self.lr = 0.1")
    src = src.replace("lr = self.alpha", "lr = self.lr")
    p = run("check", f"{student(tmp_path, src, 'hdr.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 0, out
    assert "is read as its gradient (W_grad, b_grad; a gradient backward also stores beside the step" in out, out


@pytest.mark.parametrize(("store", "names"), [("list", "dparams[0], dparams[1]"), ("dict", "grads['W'], grads['b']")])
def test_the_header_names_where_an_items_read_gradient_is_put(tmp_path, store, names):
    """Weights in a ``params`` list or dict: the header names the read steps where they are put (L1)."""
    from test_cli_selfstep_storage import layer

    p = run_here("check", f"{student(tmp_path, layer(store), 'items.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 0, out
    assert f"is read as its gradient ({names};" in out, out


CS231N = """
import numpy as np

def sgd(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-2)
    w -= config["learning_rate"] * dw
    return w, config

class Linear:
    def __init__(self):
        rng = np.random.default_rng(1)
        self.W = rng.normal(size=(5, 3)); self.b = rng.normal(size=3) * 0.1
        self.configs = {"W": {"learning_rate": 0.1}, "b": {"learning_rate": 0.1}}
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        dX = dY @ self.W.T
        self.W, self.configs["W"] = sgd(self.W, self.X.T @ dY, self.configs["W"])
        self.b, self.configs["b"] = sgd(self.b, dY.BIAS(0), self.configs["b"])
        return dX
"""


@pytest.mark.parametrize(("bias", "code"), [("sum", 0), ("mean", 1)])
def test_cs231n_per_parameter_configs_are_found(tmp_path, bias, code):
    """CS231n's ``sgd(w, dw, config)`` with a config per parameter (``self.configs['W']['learning_rate']``) FAILed
    dX of a correct layer: each rate is found and set (H1)."""
    p = run_here("check", f"{student(tmp_path, CS231N.replace('BIAS', bias), 'cs.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    assert "self.configs['W']['learning_rate']" in out and "moving W, b" in out, out
    if code:
        assert "FAIL: Linear: gradient mismatch in db." in out, out
    else:
        assert "PASS: Linear: every gradient (dX, dW, db)" in out, out


PRACTICAL_DL = """
import numpy as np

class Dense:
    def __init__(self, input_units, output_units, learning_rate=0.1):
        self.learning_rate = learning_rate
        self.weights = np.random.randn(input_units, output_units) * 0.01
        self.biases = np.zeros(output_units)
    def forward(self, input):
        return np.dot(input, self.weights) + self.biases
    def backward(self, input, grad_output):
        grad_input = np.dot(grad_output, self.weights.T)
        grad_weights = np.dot(input.T, grad_output)
        grad_biases = grad_output.BIAS(axis=0)
        self.weights = self.weights - self.learning_rate * grad_weights
        self.biases = self.biases - self.learning_rate * grad_biases
        return grad_input
"""


@pytest.mark.parametrize(("bias", "code"), [("sum", 0), ("mean", 1)])
def test_practical_dl_backward_of_input_and_grad_output_that_steps_is_checked(tmp_path, bias, code):
    """Practical-DL's Dense.backward(input, grad_output) stepping self.weights at self.learning_rate (newuser30 F1):
    exit 3, TypeError 'missing 1 required positional argument', before; forward's input handed back, the step read
    as the gradient after: the right layer passes, a mean over the batch for db fails in dbiases alone."""
    p = run_here("check", f"{student(tmp_path, PRACTICAL_DL.replace('BIAS', bias), 'pdl.py')}::Dense",
                 "--input-shape", "8,5", "--init", '{"input_units": 5, "output_units": 3}')
    out = both(p)
    assert p.returncode == code, out
    assert "forward's input is handed back to backward" in out, out
    assert "it steps with the rate in self.learning_rate, set to 0.25" in out, out
    rows = dict(re.findall(r"^(?:Dense)?\s+(d\w+)\s+\(.*\s(ok|FAIL)$", p.stdout, re.M))
    assert rows == {"dX": "ok", "dweights": "ok", "dbiases": "ok" if code == 0 else "FAIL"}, p.stdout
