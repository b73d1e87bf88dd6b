"""Tester 13 M5/M6: messages about a wrong gradient or output use the student's own storage and call. A layer
keeping self.W/self.dW was told ``grads['W'] after backward(dY) gave dW ... (the shape of params['W'])``; a forward
without a training argument was quoted ``forward(X, training=False)``."""

from test_cli import both, run, run_here, student

ATTR = """
import numpy as np

class L:
    def __init__(self):
        self.W = np.ones((5, 3)) * 0.1
        self.b = np.zeros(3)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        BODY
        self.db = dY.sum(0)
        return dY @ self.W.T
"""


def _check(tmp_path, body, name):
    path = student(tmp_path, ATTR.replace("BODY", body), name)
    p = run_here("check", f"{path}::L", "--input-shape", "8,5")
    return p, both(p)


def test_a_wrong_shape_names_self_dw_and_self_w(tmp_path):
    p, out = _check(tmp_path, "self.dW = (self.X.T @ dY).T", "m5_shape.py")
    assert p.returncode == 1, out
    assert ("L.backward(dY) (in self.dW) gave dW with shape (3, 5); expected shape (5, 3) (the shape of self.W)"
            in out), out
    assert "grads['W']" not in out and "params['W']" not in out, out


def test_a_nan_gradient_names_self_dw(tmp_path):
    p, out = _check(tmp_path, "self.dW = self.X.T @ dY; self.dW[0, 0] = np.nan", "m5_nan.py")
    assert p.returncode == 1, out
    assert "L.backward(dY) (in self.dW) gave dW containing 1 non-finite value(s)" in out, out
    assert "grads['W']" not in out, out


NAN_FORWARD = """
import numpy as np

class L:
    def __init__(self, W=None):
        self.W = np.ones((5, 3)) * 0.1 if W is None else np.asarray(W, float)

    def forward(self, X):
        self.X = X
        return np.log(X) @ self.W

    def backward(self, dY):
        self.dW = np.log(self.X).T @ dY
        return (dY @ self.W.T) / self.X
"""


def test_a_forward_without_training_is_quoted_as_called(tmp_path):
    """M6: forward(X), not forward(X, training=False), for a forward that takes no training argument."""
    path = student(tmp_path, NAN_FORWARD, "m6_call.py")
    p = run_here("check", f"{path}::L", "--input-shape", "8,5")
    out = both(p)
    assert p.returncode == 1, out
    assert "L.forward(X) gave Y containing" in out and "training=False" not in out, out


def test_a_nan_given_in_init_is_said(tmp_path):
    """M6: a NaN from --init is said to come from --init."""
    path = student(tmp_path, NAN_FORWARD.replace("np.log(X)", "X").replace("np.log(self.X)", "self.X")
                   .replace("/ self.X", ""), "m6_init.py")
    W = [[1, "NaN", 0]] + [[0, 1, 0]] * 4
    init = '{"W": ' + str(W).replace("'NaN'", "NaN") + "}"
    p = run("check", f"{path}::L", "--input-shape", "8,5", "--init", init)  # the console script
    out = both(p)
    assert p.returncode == 1, out
    assert ("WARNING: --init gives non-finite numbers (W[0][1] = nan): a NaN or inf in the output or the gradients "
            "may come from them, not from the layer's code.") in out, out
    assert "L.forward(X) gave Y containing" in out and "training=False" not in out, out
