"""newuser30's findings on ``gradcheck check``, fixed by fixn30 (in-process, small shapes).

* F2: Michael Nielsen's network.py ``backprop(x, y) -> (nabla_b, nabla_w)`` (no forward/backward, no dX, labels
  needed) is checked as a model against central differences of its cost (``--targets real@N_OUT,M``), the cost
  its own ``self.cost.fn`` when it has one (network2.py), else the quadratic cost; the usage message gives that
  command, which works as written.
"""

import re

import pytest
from test_cli import both, run_here, student

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
