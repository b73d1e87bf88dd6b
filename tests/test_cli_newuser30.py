"""newuser30's findings on ``gradcheck check``, fixed by fixn30 (in-process, small shapes).

* F2: Michael Nielsen's network.py ``backprop(x, y) -> (nabla_b, nabla_w)`` (no forward/backward, no dX, labels
  needed) is checked as a model against central differences of its cost (``--targets real@N_OUT,M``), the cost
  its own ``self.cost.fn`` when it has one (network2.py), else the quadratic cost; the usage message gives that
  command, which works as written.
* F3b: Andrew Ng's L_model_forward/L_model_backward(AL, Y, caches) usage message gives the function and command that
  check the model against its cost, which work as written.
* F4: pairs named ``forward_NAME``/``backward_NAME`` and ``NAME_fwd``/``NAME_bak`` are found (``::NAME``).
* F5: Coursera's ``db = 1/m * np.sum(dZ)`` (no axis) is named: the sum's missing axis (1, kept), not "build db with
  numpy operations".
* F6: a softmax (or log-softmax) backward returning dY is told its Jacobian is missing, with the row-wise formula,
  not "multiply dY by f'(X)" (its Jacobian is not diagonal).
* F7: a stray NUL byte in the checked file is said as Python says it (null bytes), not "saved as UTF-16".
* an empty layers.py is said to be empty, not "Classes defined in it: none. Function pairs: none".
* F11: a given --atol larger than every |gradient| is NOT CHECKED (exit 3), as the default atol would be, not a PASS.
"""

import json
import re

import numpy as np
import pytest
from student_layers import RELU_SOURCE
from test_cli import BIG, both, run_here, student

from gradcheck.diagnose import diagnose_layer

#: Nielsen's network.py (src/network.py, Python 3 port), the parts backprop needs
NIELSEN = """
import numpy as np

class Network(object):

    def __init__(self, sizes):
        self.num_layers = len(sizes)
        self.sizes = sizes
        self.biases = [np.random.randn(y, 1) for y in sizes[1:]]
        self.weights = [np.random.randn(y, x) for x, y in zip(sizes[:-1], sizes[1:])]

    def feedforward(self, a):
        for b, w in zip(self.biases, self.weights):
            a = sigmoid(np.dot(w, a) + b)
        return a

    def backprop(self, x, y):
        nabla_b = [np.zeros(b.shape) for b in self.biases]
        nabla_w = [np.zeros(w.shape) for w in self.weights]
        activation = x
        activations = [x]
        zs = []
        for b, w in zip(self.biases, self.weights):
            z = np.dot(w, activation) + b
            zs.append(z)
            activation = sigmoid(z)
            activations.append(activation)
        delta = DELTA
        nabla_b[-1] = delta
        nabla_w[-1] = np.dot(delta, activations[-2].transpose())
        for l in range(2, self.num_layers):
            z = zs[-l]
            sp = sigmoid_prime(z)
            delta = np.dot(self.weights[-l + 1].transpose(), delta) * sp
            nabla_b[-l] = delta
            nabla_w[-l] = np.dot(delta, activations[-l - 1].transpose())
        return (nabla_b, nabla_w)

    def cost_derivative(self, output_activations, y):
        return (output_activations - y)

COSTS

def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))

def sigmoid_prime(z):
    return sigmoid(z) * (1 SIGN sigmoid(z))
"""
QUADRATIC_DELTA = "self.cost_derivative(activations[-1], y) * sigmoid_prime(zs[-1])"
#: network2.py: the cost is an object of the network, fn(a, y) its value, delta(z, a, y) the output error
CROSS_ENTROPY = """
class CrossEntropyCost(object):
    @staticmethod
    def fn(a, y):
        return np.sum(np.nan_to_num(-y * np.log(a) - (1 - y) * np.log(1 - a)))

    @staticmethod
    def delta(z, a, y):
        return (a - y)

class Network2(Network):
    def __init__(self, sizes):
        super().__init__(sizes)
        self.cost = CrossEntropyCost
"""


def _src(sign="-", delta=QUADRATIC_DELTA, costs=""):
    return NIELSEN.replace("SIGN", sign).replace("DELTA", delta).replace("COSTS", costs)


def _rows(stdout):
    return dict(re.findall(r"^(?:\w+)?\s+(d[\w\[\]]+)\s+\(.*\s(ok|FAIL)$", stdout, re.M))


def test_nielsen_network_usage_message_gives_a_command_that_checks_it(tmp_path):
    """F2: exit 2 asked for a wrapper returning 'the gradient of X it computed', which backprop(x, y) never computes;
    the wrapper returning zeros FAILed 'dX is all zeros'. Now the message names the model route, and its command
    passes the network as published: every weight's gradient compared with central differences of the cost."""
    f = student(tmp_path, _src(), "network.py")
    p = run_here("check", f"{f}::Network", "--input-shape", "4,1", "--init", '{"sizes": [4, 3, 2]}')
    text = both(p)
    assert p.returncode == 2, text
    assert "the gradient of X it computed" not in text, text
    assert "its backprop(x, y) returns the gradients of its weights" in text, text
    assert "gradcheck check network.py::Network --input-shape 4,2 --targets real@2,2" in text, text
    p = run_here("check", f"{f}::Network", "--input-shape", "4,2", "--targets", "real@2,2", "--init",
                 '{"sizes": [4, 3, 2]}')
    text = both(p)
    assert p.returncode == 0, text
    assert "of 0.5*||a - y||^2, a = feedforward(x[:, j]), y = t[:, j]" in text, text
    assert _rows(p.stdout) == {"dX": "ok", "dbiases[0]": "ok", "dbiases[1]": "ok", "dweights[0]": "ok",
                               "dweights[1]": "ok"}, p.stdout


def test_nielsen_sigmoid_prime_bug_fails_in_every_weight(tmp_path):
    """sigmoid'(z) = s (1 + s): every gradient behind the output layer's delta is wrong, and FAILs."""
    f = student(tmp_path, _src(sign="+"), "network.py")
    p = run_here("check", f"{f}::Network", "--input-shape", "4,3", "--targets", "real@2,3", "--init",
                 '{"sizes": [4, 3, 2]}')
    text = both(p)
    assert p.returncode == 1, text
    assert set(_rows(p.stdout).values()) == {"FAIL"} and "dweights[0]" in _rows(p.stdout), p.stdout


@pytest.mark.parametrize(("delta", "code"), [("(self.cost).delta(zs[-1], activations[-1], y)", 0),
                                              (QUADRATIC_DELTA, 1)])
def test_network2_is_checked_against_its_own_cost(tmp_path, delta, code):
    """network2.py's self.cost = CrossEntropyCost: its fn(a, y) is the cost differentiated; a backprop whose output
    delta is the quadratic cost's (a - y) * sigmoid'(z) FAILs against it."""
    f = student(tmp_path, _src(delta=delta, costs=CROSS_ENTROPY), "network2.py")
    p = run_here("check", f"{f}::Network2", "--input-shape", "4,2", "--targets", "unit@2,2", "--init",
                 '{"sizes": [4, 3, 2]}')
    text = both(p)
    assert p.returncode == code, text
    assert "of CrossEntropyCost.fn(a, y)" in text, text
    assert ("PASS: Network2" in text) == (code == 0), text


RELU = RELU_SOURCE


def test_a_nul_byte_is_named_as_python_names_it(tmp_path):
    """F7: one NUL at the end of line 2 was reported as a file 'saved as UTF-16'."""
    f = tmp_path / "nul.py"
    f.write_bytes(RELU.replace("class ReLU:", "class ReLU:\x00").encode())
    p = run_here("check", f"{f}::ReLU", "--input-shape", "4,3")
    text = both(p)
    assert p.returncode == 3, text
    assert "source code cannot contain null bytes" in text and "on line 3" in text, text
    assert "UTF-16" not in text, text
    g = tmp_path / "u16.py"  # a file saved as UTF-16 is still named so
    g.write_bytes(RELU.encode("utf-16"))
    p = run_here("check", f"{g}::ReLU", "--input-shape", "4,3")
    assert p.returncode == 3 and "saved as UTF-16" in both(p), both(p)




@pytest.mark.parametrize(("atol", "code"), [("100", 3), ("1e-3", 1)])
def test_a_given_atol_larger_than_every_gradient_is_not_checked(tmp_path, atol, code):
    """F11: --atol 100 PASSed db = mean(dY) (exit 0, no word); now NOT CHECKED naming the atol given, while an atol
    below the gradients still FAILs the bug."""
    p = run_here("check", f"{student(tmp_path, BIG, 'dense.py')}::BigLinear", "--input-shape", "8,5", "--init",
                 '{"scale": 0.1, "rng": 0}', "--atol", atol)  # BIG: test_cli's linear layer whose db is a mean
    text = both(p)
    assert p.returncode == code, text
    assert "PASS" not in text, text
    if code == 3:
        assert "NOT CHECKED: BigLinear: the atol you gave (atol=100 for dX" in text, text
        assert "would pass any gradient of that size" in text and "round-off of the output" not in text, text
    else:
        assert "FAIL: BigLinear: gradient mismatch in db." in text, text


COURSERA_DB_SUM = """
import numpy as np

def linear_forward(A, W, b):
    return np.dot(W, A) + b, (A, W, b)

def linear_backward(dZ, cache):
    A_prev, W, b = cache
    m = A_prev.shape[1]
    dW = 1 / m * np.dot(dZ, A_prev.T)
    db = 1 / m * np.sum(dZ)
    return np.dot(W.T, dZ), dW, db
"""


def test_a_sum_without_its_axis_is_named_for_a_coursera_bias(tmp_path):
    """F5: db = 1/m * np.sum(dZ), one number where b is (3, 1): the advice was 'build db with numpy operations'."""
    p = run_here("check", f"{student(tmp_path, COURSERA_DB_SUM, 'lin.py')}::linear", "--input-shape", "5,4;3,5;3,1")
    text = both(p)
    assert p.returncode == 1, text
    assert "gave db as a single number (float64); expected a numpy ndarray of b's shape (3, 1)" in text, text
    assert "the sum is missing its axis, db = np.sum(dY, axis=1, keepdims=True)" in text, text
    assert "build db with numpy operations" not in text, text


class _SoftmaxStub:
    """A softmax whose backward returns dY ('combined with the cross-entropy' stub)."""

    def __init__(self, log=False):
        self.log, self.params, self.grads = log, {}, {}

    def forward(self, X, training=False):
        z = X - X.max(axis=-1, keepdims=True)
        self.out = z - np.log(np.exp(z).sum(axis=-1, keepdims=True)) if self.log else \
            np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
        return self.out

    def backward(self, dY):
        return dY


@pytest.mark.parametrize(("log", "fix"), [(False, "dX = s * (dY - np.sum(dY * s, axis=-1, keepdims=True))"),
                                          (True, "dX = dY - np.exp(Y) * np.sum(dY, axis=-1, keepdims=True)")])
def test_a_softmax_returning_dy_is_told_its_jacobian(log, fix):
    """F6: the diagnosis said "multiply dY by f'(X)", an elementwise fix that no softmax has."""
    diag = diagnose_layer(_SoftmaxStub(log), (6, 4), twin=None)
    assert not diag.passed
    assert "missing-softmax-jacobian" in diag.codes and "missing-local-derivative" not in diag.codes, diag.codes
    text = " ".join(f.message for f in diag.findings)
    assert fix in text and "f'(X)" in text and "multiply dY by f'(X)" not in text, text


PREFIX_PAIR = """
import numpy as np

def forward_linear(A, W, b):
    return W @ A + b, (A, W)

def backward_linear(dZ, cache):
    A_prev, W = cache
    return W.T @ dZ, dZ @ A_prev.T, np.sum(dZ, axis=1, keepdims=BIAS)
"""
ABBREVIATED_PAIR = """
import numpy as np

def relu_fwd(x):
    return np.maximum(x, 0), x

def relu_BACK(dout, cache):
    return dout * (cache > 0)
"""


@pytest.mark.parametrize(("src", "name", "shape"), [
    (PREFIX_PAIR.replace("BIAS", "True"), "linear", "5,4;3,5;3,1"),
    (ABBREVIATED_PAIR.replace("BACK", "bak"), "relu", "8,5"),
    (ABBREVIATED_PAIR.replace("BACK", "bwd"), "relu", "8,5")])
def test_pairs_named_forward_name_or_name_fwd_are_found(tmp_path, src, name, shape):
    """F4: 'has no class ... Function pairs: none' (exit 2) for forward_linear/backward_linear and relu_fwd/relu_bak."""
    p = run_here("check", f"{student(tmp_path, src, 'pairs.py')}::{name}", "--input-shape", shape)
    text = both(p)
    assert p.returncode == 0 and f"PASS: {name}" in text, text
    assert "CS231n function pair (" in text and "Function pairs: none" not in text, text


def test_a_prefix_pair_with_a_bug_fails(tmp_path):
    """The pair found is checked: db without keepdims has shape (3,), not b's (3, 1)."""
    p = run_here("check", f"{student(tmp_path, PREFIX_PAIR.replace('BIAS', 'False'), 'pairs.py')}::linear",
                 "--input-shape", "5,4;3,5;3,1")
    assert p.returncode == 1 and "db" in both(p), both(p)


NG_MODEL = """
import numpy as np

def L_model_forward(X, parameters):
    W1, b1, W2, b2 = parameters["W1"], parameters["b1"], parameters["W2"], parameters["b2"]
    Z1 = W1 @ X + b1
    A1 = np.maximum(Z1, 0)
    AL = 1 / (1 + np.exp(-(W2 @ A1 + b2)))
    return AL, (X, Z1, A1, W2)

def compute_cost(AL, Y):
    m = Y.shape[1]
    return float(-np.sum(Y * np.log(AL) + (1 - Y) * np.log(1 - AL)) / m)

def L_model_backward(AL, Y, caches):
    X, Z1, A1, W2 = caches
    m = Y.shape[1]
    dZ2 = AL - Y
    dA1 = W2.T @ dZ2
    dZ1 = dA1 * (Z1 > 0)
    return {"dW2": dZ2 @ A1.T / m, "db2": dZ2.sum(axis=1, keepdims=True) / m,
            "dW1": dZ1 @ X.T / m * SCALE, "db1": dZ1.sum(axis=1, keepdims=True) / m}
"""


@pytest.mark.parametrize(("scale", "code"), [("1", 0), ("3", 1)])
def test_l_model_message_gives_a_cost_check_that_works(tmp_path, scale, code):
    """F3b: 'or the model against its cost' named no way to do it; the function and command the message now gives,
    pasted, check dW1 (a factor 3 in it FAILs)."""
    f = student(tmp_path, NG_MODEL.replace("SCALE", scale), "dnn.py")
    p = run_here("check", f"{f}::L_model", "--input-shape", "3,4")
    text = both(p)
    assert p.returncode == 2, text
    start, end = text.index("def cost_W1("), text.index(" (your cost function")
    (tmp_path / "dnn.py").write_text(f.read_text() + "\n\n" + text[start:end].replace("; ", "\n    ").replace(
        "): ", "):\n    ", 1) + "\n")
    assert "--wrt W1" in text and "FILE::cost_W1 --loss" in text, text
    params = {"W1": [[0.5, -0.3, 0.2], [0.1, 0.4, -0.6]], "b1": [[0.1], [-0.2]], "W2": [[0.7, -0.5]], "b2": [[0.05]]}
    init = json.dumps({"Y": [[1, 0, 1, 0]], "parameters": params, "W1": params["W1"]})
    p = run_here("check", f"{f}::cost_W1", "--loss", "--input-shape", "3,4", "--init", init, "--wrt", "W1")
    text = both(p)
    assert p.returncode == code, text
    assert ("PASS: cost_W1: dL/dW1 matches" if code == 0 else "gradient mismatch in dW1") in text, text


@pytest.mark.parametrize("body", ["", "\n  \n# TODO: write the layers\n"])
def test_an_empty_file_is_said_to_be_empty(tmp_path, body):
    p = run_here("check", f"{student(tmp_path, body, 'layers.py')}::Linear", "--input-shape", "4,3")
    text = both(p)
    assert p.returncode == 2, text
    assert "layers.py has no class 'Linear': the file is empty" in text and "Function pairs: none" not in text, text
