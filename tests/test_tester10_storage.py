"""Issue 10, the session-10 tester's findings on where students keep parameters and gradients (T1, T2, T4, T5, T6,
T10); the planted bugs are also in tests/buggy_layers/styles.py (DLfS2NetRebind, GradsObjLinearTwice,
FlatLinearForgetsB).

T1 (wrong PASS): Deep Learning from Scratch 2's model collects its layers' arrays (``self.params += layer.params``):
``params[0]`` and ``layers.0.params[0]`` were taken for a tied weight and their gradients summed, so a layer that
rebinds ``self.grads`` (the model's ``grads`` keep the zeros) PASSed; T2: the correct book model FAILed "2 times".
T5: ``params`` with ``param_grads``: "L.grads has no key 'W' ... found []". T10: a stateless loss
``backward(self, y_pred, y_true)`` was called ``backward(y_pred=1.0)`` (exit 3)."""

import numpy as np
import pytest
from test_cli import both, run, run_here, student

from gradcheck import _adapters as AD

DLFS2 = """
import numpy as np

class Affine:
    def __init__(self, W, b):
        self.params = [W, b]
        self.grads = [np.zeros_like(W), np.zeros_like(b)]
    def forward(self, x):
        W, b = self.params
        self.x = x
        return np.dot(x, W) + b
    def backward(self, dout):
        W, b = self.params
        dx = np.dot(dout, W.T)
        STORE
        return dx

class Net:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.layers = [Affine(rng.standard_normal((5, 3)), np.zeros(3))]
        self.params, self.grads = [], []
        for layer in self.layers:
            self.params += layer.params
            self.grads += layer.grads
    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x
    def backward(self, dout=1):
        for layer in reversed(self.layers):
            dout = layer.backward(dout)
        return dout
"""
IN_PLACE = "self.grads[0][...] = np.dot(self.x.T, dout); self.grads[1][...] = np.sum(dout, axis=0)"
REBIND = "self.grads = [np.dot(self.x.T, dout), np.sum(dout, axis=0)]"


@pytest.mark.parametrize("store, code, words", [
    (IN_PLACE, 0, "PASS: Net: every gradient (dX, dparams[0], dparams[1]) matches"),
    # one sentence for both (fixd22), which says "them", not "it" (session 23)
    (REBIND, 1, "diagnosis: backward bound grads to a new list (self.grads = [...]) instead of writing into "
                "layers.0.grads[0] and layers.0.grads[1]; models that collected layer.grads keep the old ones (this "
                "model's grads[0] and grads[1], never written: its optimizer steps with zeros)"),  # tester25s H2
])
def test_a_model_listing_its_layers_arrays_checks_its_own_gradients(tmp_path, store, code, words):
    p = run_here("check", f"{student(tmp_path, DLFS2.replace('STORE', store), f'dlfs2_{code}.py')}::Net",
            "--input-shape", "6,5")
    out = both(p)
    assert p.returncode == code and words in out, out
    assert ("params[0] and layers.0.params[0] are one array listed twice (the model's params[0] collects "
            "layers.0.params[0]): checked once, with the model's gradient grads[0]") in out, out
    assert "summed" not in out and "double" not in out, out


PARAM_GRADS = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {'W': rng.standard_normal((5, 3)) * 0.4, 'b': np.zeros(3) + 0.1}
        self.param_grads = {}
    def forward(self, X):
        self.X = X
        return X @ self.params['W'] + self.params['b']
    def backward(self, dY):
        self.param_grads['W'] = SIGN * self.X.T @ dY; self.param_grads['b'] = dY.sum(0)
        return dY @ self.params['W'].T
"""


def test_params_with_param_grads_are_read_as_the_manualprop_pair(tmp_path):
    ns = {}
    exec(PARAM_GRADS.replace("SIGN", "-1"), ns)  # noqa: S102 - the test's own layer
    X, G = np.random.default_rng(1).standard_normal((6, 5)), np.random.default_rng(2).standard_normal((6, 3))
    layer, info = AD.adapt(ns["L"](), [X])
    assert info["text"].startswith("manualprop (params/param_grads dicts")
    layer.forward(X)
    layer.backward(G)
    np.testing.assert_allclose(layer.grads["W"], -(X.T @ G))


LOSS = """
import numpy as np

class MSE2:
    def forward(self, y_pred, y_true):
        return float(np.mean((y_pred - y_true) ** 2))
    def backward(self, y_pred, y_true):
        return SIGN * 2 * (y_pred - y_true) / y_pred.size

class NNFS:
    def forward(self, output, y):
        return float(np.mean((output - y) ** 2))
    def backward(self, dvalues, y_true):
        return SIGN * 2 * (dvalues - y_true) / dvalues.size
"""


@pytest.mark.parametrize("cls, call", [
    ("MSE2", "forward(y_pred=y_pred, y_true=y_true) and backward(y_pred=y_pred, y_true=y_true)"),
    ("NNFS", "forward(output=y_pred, y=y_true) and backward(dvalues=y_pred, y_true=y_true)"),
])
@pytest.mark.parametrize("sign", [1, -1])
def test_a_stateless_loss_backward_gets_the_prediction_and_target(tmp_path, cls, call, sign):
    p = run_here("check", f"{student(tmp_path, LOSS.replace('SIGN', str(sign)), f'l{sign + 1}.py')}::{cls}",
            "--loss", "--input-shape", "6,2")
    out = both(p)
    assert f"loss: {call}" in out and "=1.0" not in out, out
    assert (p.returncode, f"PASS: {cls}" in out) == ((0, True) if sign == 1 else (1, False)), out
    if sign == -1:
        assert "dy_pred has the wrong sign" in out, out


REMADE = """
import numpy as np

class Reinit:
    def __init__(self, units=3):
        self.units = units
    def forward(self, x):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((x.shape[-1], self.units)) * 0.3
        self.b = np.zeros(self.units)
        self.x = x
        return x @ self.W + self.b
    def backward(self, dy):
        self.dW = 3 * self.x.T @ dy; self.db = dy.mean(0)
        return dy @ self.W.T

class ListW:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = (rng.standard_normal((5, 3)) * 0.3).tolist(); self.b = [0.0, 0.0, 0.0]
    def forward(self, x):
        self.x = x
        return x @ np.array(self.W) + np.array(self.b)
    def backward(self, dy):
        self.dW = (2 * self.x.T @ dy).tolist(); self.db = dy.sum(0).tolist()
        return dy @ np.array(self.W).T
"""


@pytest.mark.parametrize("cls, line", [
    ("Reinit", "FAIL: Reinit: forward creates W, b anew on every call, and backward writes dW, db"),
    ("ListW", "FAIL: ListW: forward reads W, b, Python lists of numbers: gradcheck perturbs and checks numpy arrays "
              "only, so dW, db, written by backward, cannot be checked"),
])
def test_weights_remade_in_forward_or_kept_as_lists_are_not_passed_over(tmp_path, cls, line):
    """T7, T8 (wrong PASS): "a class with forward/backward and no parameters", PASS, exit 0, with dW x3 (x2)."""
    run_ = run if cls == "ListW" else run_here  # one class through the console script
    p = run_("check", f"{student(tmp_path, REMADE, 'remade.py')}::{cls}", "--input-shape", "6,5")
    out = both(p)
    assert p.returncode == 1 and line in out and f"PASS: {cls}" not in out, out


def test_a_weight_built_once_in_forward_is_not_taken_for_remade():
    ns = {}
    exec(REMADE.replace("        rng = np.random", "        if getattr(self, 'W', None) is not None:\n"  # noqa: S102
                        "            self.x = x\n            return x @ self.W + self.b\n        rng = np.random"), ns)
    X = np.random.default_rng(1).standard_normal((6, 5))
    _, info = AD.adapt(ns["Reinit"](), [X])
    assert "recreated" not in info and "W/dW" in info["text"], info


DKEYS = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {'W': rng.standard_normal((5, 3)) * 0.4, 'b': np.zeros(3)}
        self.grads = {}
    def forward(self, X):
        self.X = X
        return X @ self.params['W'] + self.params['b']
    def backward(self, dY):
        self.grads['dW'] = SIGN * self.X.T @ dY
        self.grads['db'] = dY.sum(0)
        return dY @ self.params['W'].T
"""


@pytest.mark.parametrize("sign", [1, -1])
def test_grads_named_dw_beside_params_w_are_read(sign):
    """T14: deeplearning.ai's grads['dW'] beside params['W'] was 'a wrong result' (exit 1)."""
    ns = {}
    exec(DKEYS.replace("SIGN", str(sign)), ns)  # noqa: S102 - the test's own layer
    X, G = np.random.default_rng(1).standard_normal((6, 5)), np.random.default_rng(2).standard_normal((6, 3))
    layer, info = AD.adapt(ns["L"](), [X])
    assert "grads['dW'] read for params['W']" in info["text"], info["text"]
    layer.forward(X)
    layer.backward(G)
    np.testing.assert_allclose(layer.grads["W"], sign * (X.T @ G))
    np.testing.assert_allclose(layer.grads["b"], G.sum(0))


TORCHLIKE = """
import numpy as np

class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)
    def zero_grad(self):
        self.grad = np.zeros_like(self.data)

class Linear:
    def __init__(self, i=5, o=3):
        rng = np.random.default_rng(0)
        self.weight = Parameter(rng.standard_normal((o, i)) * 0.4)
        self.bias = Parameter(np.zeros(o))
    def parameters(self):
        return [self.weight, self.bias]
    def forward(self, x):
        self.x = x
        return x @ self.weight.data.T + self.bias.data
    def backward(self, dy):
        self.weight.grad += FACTOR * dy.T @ self.x
        self.bias.grad += dy.sum(0)
        return dy @ self.weight.data
"""


@pytest.mark.parametrize("factor, code", [(1, 0), (2, 1)])
def test_parameters_accumulating_grad_are_zeroed_through_parameters(tmp_path, factor, code):
    """T11: a student's Parameter.zero_grad(), reached through parameters() as PyTorch's loop does, was never
    called: the correct layer FAILed 'gradients accumulated across calls'."""
    p = run_here("check", f"{student(tmp_path, TORCHLIKE.replace('FACTOR', str(factor)), f't{factor}.py')}::Linear",
            "--input-shape", "6,5")
    out = both(p)
    assert "each of parameters()'s zero_grad() is called before each backward" in out, out
    assert p.returncode == code and "accumulated" not in out, out
    assert ("PASS: Linear" in out) if code == 0 else ("dweight is 2 times the correct gradient" in out), out
