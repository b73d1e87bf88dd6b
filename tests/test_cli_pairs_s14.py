"""`gradcheck check` on function pairs and class styles (session 14, tester14): Andrew Ng's (Coursera DL
specialization) ``linear_activation_forward(A_prev, W, b, activation)`` / ``linear_activation_backward(dA, cache,
activation)`` pair (--init values that backward names go to backward too), Ng's 1/m inside every layer's backward
(named as an extra 1/batch, a convention), a Keras-style batch norm that treats the batch mean/var as constants
(named), and an Adam step inside backward (dX still checked). Each test fails on the code before its fix.
"""

import pytest
from test_cli import both, run, run_here, student

NG = """
import numpy as np
def sigmoid(Z):
    A = 1/(1+np.exp(-Z)); return A, Z
def relu(Z):
    return np.maximum(0, Z), Z
def relu_backward(dA, cache):
    Z = cache; dZ = np.array(dA, copy=True); dZ[Z <= 0] = 0; return dZ
def sigmoid_backward(dA, cache):
    Z = cache; s = 1/(1+np.exp(-Z)); return dA * s * (1-s)
def linear_forward(A, W, b):
    Z = np.dot(W, A) + b
    cache = (A, W, b)
    return Z, cache
def linear_backward(dZ, cache):
    A_prev, W, b = cache
    m = A_prev.shape[1]
    dW = 1./m * np.dot(dZ, A_prev.T)
    db = 1./m * np.sum(dZ, axis=1, keepdims=True)
    dA_prev = np.dot(W.T, dZ)
    return dA_prev, dW, db
def plain_linear_backward(dZ, cache):
    A_prev, W, b = cache
    return np.dot(W.T, dZ), np.dot(dZ, A_prev.T), np.sum(dZ, axis=1, keepdims=True)
def linear_activation_forward(A_prev, W, b, activation):
    if activation == "sigmoid":
        Z, linear_cache = linear_forward(A_prev, W, b); A, activation_cache = sigmoid(Z)
    elif activation == "relu":
        Z, linear_cache = linear_forward(A_prev, W, b); A, activation_cache = relu(Z)
    return A, (linear_cache, activation_cache)
def linear_activation_backward(dA, cache, activation):
    linear_cache, activation_cache = cache
    if activation == "relu":
        dZ = relu_backward(dA, activation_cache)
    elif activation == "sigmoid":
        dZ = SIGMOID_BACKWARD
    return plain_linear_backward(dZ, linear_cache)
"""
CORRECT_SIG = "sigmoid_backward(dA, activation_cache)"
BUGGY_SIG = "dA * (1/(1+np.exp(-activation_cache)))"  # BUG: forgot s * (1 - s)


def _ng(tmp_path, sig=CORRECT_SIG, init='{"activation": "sigmoid"}', name="linear_activation"):
    f = student(tmp_path, NG.replace("SIGMOID_BACKWARD", sig), "ng.py")
    args = ["check", f"{f}::{name}", "--input-shape", "5,8;3,5;3,1"] + (["--init", init] if init else [])
    p = run_here(*args)
    return p, both(p)


def test_ng_linear_activation_init_goes_to_backward(tmp_path):
    """Before: exit 3, "linear_activation_backward() missing 1 required positional argument: 'activation'"."""
    p, out = _ng(tmp_path)
    assert p.returncode == 0, out
    assert "PASS" in out and "missing 1 required" not in out, out
    assert "activation passed to linear_activation_backward too" in out, out


def test_ng_linear_activation_bug_fails(tmp_path):
    p, out = _ng(tmp_path, BUGGY_SIG)
    assert p.returncode == 1, out
    assert "FAIL" in out and "dA_prev" in out, out


def test_ng_backward_argument_nobody_gave_is_usage_error(tmp_path):
    """A backward argument that no --init gives: exit 2 naming it and the --init to pass."""
    body = NG.replace("SIGMOID_BACKWARD", CORRECT_SIG).replace(
        "b, activation):", 'b, activation="sigmoid"):')
    f = student(tmp_path, body, "ng.py")
    p = run("check", f"{f}::linear_activation", "--input-shape", "5,8;3,5;3,1")  # the console script
    out = both(p)
    assert p.returncode == 2, out
    assert "the checked code failed" not in out, out
    assert "activation" in out and "--init '{\"activation\": ...}'" in out, out


def test_ng_linear_backward_one_over_m_named_alike_for_dw_and_db(tmp_path):
    """Before: "dW is 0.125 times the correct gradient: a constant factor is wrong somewhere" beside db's "an
    extra 1/batch". Ng's 1/m in every layer's backward stays a FAIL, named as the course's convention."""
    p, out = _ng(tmp_path, init=None, name="linear")
    assert p.returncode == 1 and "FAIL" in out, out
    assert "constant factor is wrong" not in out, out
    assert "dW and db are 8 times too small: an extra 1/batch (1/m = 1/8" in out, out
    assert "convention" in out and "dAL" in out and "linear_m_backward" in out and "m * dW, m * db" in out, out


KERAS_BN = """
import numpy as np
class BN:
    def __init__(self, dim, momentum=0.99, epsilon=EPS):
        self.gamma = np.ones(dim); self.beta = np.zeros(dim)
        self.moving_mean = np.zeros(dim); self.moving_variance = np.ones(dim)
        self.momentum = momentum; self.epsilon = epsilon
    def call(self, x, training=False):
        if training:
            mu = x.mean(0); var = x.var(0)
            self.moving_mean = self.momentum * self.moving_mean + (1 - self.momentum) * mu
            self.moving_variance = self.momentum * self.moving_variance + (1 - self.momentum) * var
        else:
            mu, var = self.moving_mean, self.moving_variance
        self.training = training
        self.xhat = (x - mu) / np.sqrt(var + self.epsilon)
        self.inv = 1 / np.sqrt(var + self.epsilon)
        return self.gamma * self.xhat + self.beta
    def backward(self, dy):
        self.gamma_grad = (dy * self.xhat).sum(0)
        self.beta_grad = dy.sum(0)
        dxhat = dy * self.gamma
        if not self.training:
            return dxhat * self.inv
        N = dy.shape[0]
        return self.inv / N * (N * dxhat - dxhat.sum(0) - self.xhat * (dxhat * self.xhat).sum(0))
class BNBug(BN):
    def backward(self, dy):
        self.gamma_grad = (dy * self.xhat).sum(0)
        self.beta_grad = dy.sum(0)
        return dy * self.gamma * self.inv  # BUG: mean/var treated as constants
"""


@pytest.mark.parametrize("eps", ["1e-3", "1e-2"])
def test_keras_bn_missing_paths_named(tmp_path, eps):
    """Before: "dX differs ... (no known bug pattern)": Keras's epsilon=1e-3 inside sqrt(var + eps) moved the
    correct gradient 0.1% off the signature's eps-free xhat."""
    f = student(tmp_path, KERAS_BN.replace("EPS", eps), "keras_like.py")
    for cls, code in (("BN", 0), ("BNBug", 1)):
        p = run_here("check", f"{f}::{cls}", "--input-shape", "8,4", "--init", '{"dim": 4}')
        out = both(p)
        assert p.returncode == code, out
    assert "lacks the gradient through the batch mean and variance" in out, out
    assert "no known bug pattern" not in out, out


ADAM = """
import numpy as np
class DenseAdam:
    def __init__(self, n_in=4, n_out=3, lr=0.01):
        rng = np.random.default_rng(1)
        self.W = rng.standard_normal((n_in, n_out)) * 0.5
        self.b = rng.standard_normal(n_out) * 0.5
        self.lr = lr
        self.mW = np.zeros_like(self.W); self.vW = np.zeros_like(self.W)
        self.mb = np.zeros_like(self.b); self.vb = np.zeros_like(self.b)
        self.t = 0
    def forward(self, x):
        self.x = x
        return x @ self.W + self.b
    def backward(self, dout):
        dW = self.x.T @ dout
        db = dout.sum(axis=0)
        dx = DX
        self.t += 1
        for p, g, m, v in ((self.W, dW, self.mW, self.vW), (self.b, db, self.mb, self.vb)):
            m *= 0.9; m += 0.1 * g
            v *= 0.999; v += 0.001 * g * g
            mh = m / (1 - 0.9 ** self.t); vh = v / (1 - 0.999 ** self.t)
            p -= self.lr * mh / (np.sqrt(vh) + 1e-8)
        return dx
class DenseMomentum:
    def __init__(self, n_in=4, n_out=3, lr=0.1, momentum=0.9):
        rng = np.random.default_rng(1)
        self.W = rng.standard_normal((n_in, n_out)) * 0.5
        self.b = rng.standard_normal(n_out) * 0.5
        self.lr = lr; self.mu = momentum
        self.vW = np.zeros_like(self.W); self.vb = np.zeros_like(self.b)
    def forward(self, x):
        self.x = x
        return x @ self.W + self.b
    def backward(self, dout):
        dW = self.x.T @ dout
        db = dout.sum(axis=0)
        dx = DX
        self.vW = self.mu * self.vW - self.lr * dW
        self.vb = self.mu * self.vb - self.lr * db
        self.W += self.vW
        self.b += self.vb
        return dx
"""


@pytest.mark.parametrize("cls", ["DenseAdam", "DenseMomentum"])
@pytest.mark.parametrize(("dx", "code"), [("dout @ self.W.T", 3), ("dout @ self.W.T * 2", 1)])
def test_optimizer_inside_backward_dx_still_checked(tmp_path, cls, dx, code):
    """Before: exit 3 "no gradient was compared" for both; dX is now compared (a wrong dX FAILs, exit 1) and the
    weights' update is said not checkable (exit 3 when dX matches)."""
    f = student(tmp_path, ADAM.replace("DX", dx), "adam_inside.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "5,4")
    out = both(p)
    assert p.returncode == code, out
    assert "no gradient was compared" not in out, out
    assert "dX" in out and "not a plain gradient-descent step" in out, out
    if code == 3:
        assert "NOT CHECKED" in out and "dX matches" in out, out
    else:
        assert "FAIL" in out and "dX is 2 times" in out.replace("twice the true value", "2 times"), out
