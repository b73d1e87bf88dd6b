"""Session 29's tester (tester29s, fixer fixs29): ``gradcheck check --loss`` on the cost-and-gradient functions of
Andrew Ng's ML course (Python port, dibgerge/ml-coursera-python-assignments as alexanderGerbik solved it), CS224n
2017 a1 and CS224n 2019 a2 (word2vec), each written here in the published code's shape."""

import json

import numpy as np
import pytest
from test_cli import both, run_here, student

#: Ng ex5's linearRegCostFunction(X, y, theta, lambda_) -> (J, grad): the gradient is theta's, the third argument
LINREG = """
import numpy as np


def linearRegCostFunction(X, y, theta, lambda_=0.0):
    m = y.size
    h = X @ theta
    diff = h - y
    th = theta[1::]
    J = diff.T @ diff / 2 / m + th.T @ th * lambda_ / 2 / m
    grad = ((h - y).T @ X / m)
    reg = theta * lambda_ / m
    reg[0] = 0
    grad += reg
    return J, grad
"""
LINREG_INIT = json.dumps({"y": [1.5, -0.2, 2.0, -1.1, 0.4], "theta": [0.3, -0.4], "lambda_": 1.0})

#: CS224n 2017 a1 q2_neural.forward_backward_prop(data, labels, params, dimensions) -> (cost, grad of params)
FBPROP = """
import numpy as np


def softmax(x):
    x = x - np.max(x, axis=1, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=1, keepdims=True)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def sigmoid_grad(s):
    return s * (1.0 - s)


def forward_backward_prop(data, labels, params, dimensions):
    ofs = 0
    Dx, H, Dy = (dimensions[0], dimensions[1], dimensions[2])
    W1 = np.reshape(params[ofs:ofs + Dx * H], (Dx, H))
    ofs += Dx * H
    b1 = np.reshape(params[ofs:ofs + H], (1, H))
    ofs += H
    W2 = np.reshape(params[ofs:ofs + H * Dy], (H, Dy))
    ofs += H * Dy
    b2 = np.reshape(params[ofs:ofs + Dy], (1, Dy))
    h = sigmoid(data.dot(W1) + b1)
    y_hat = softmax(h.dot(W2) + b2)
    cost = np.sum(-np.log(y_hat[labels == 1]))
    d3 = y_hat - labels
    gradW2 = np.dot(h.T, d3)
    gradb2 = np.sum(d3, axis=0, keepdims=True)
    dh = np.dot(d3, W2.T)
    da1 = dh * sigmoid_grad(h)
    gradW1 = np.dot(data.T, da1)
    gradb1 = np.sum(da1, axis=0, keepdims=True)
    grad = np.concatenate((gradW1.flatten(), gradb1.flatten(), gradW2.flatten(), gradb2.flatten()))
    return cost, grad
"""
FBPROP_INIT = json.dumps({"labels": [[1.0, 0], [0, 1], [1, 0], [0, 1]], "params": np.linspace(-1, 1, 14).tolist(),
                          "dimensions": [3, 2, 2]})


def _check(tmp_path, src, fn, shape, init, *more, name="student.py"):
    p = run_here("check", f"{student(tmp_path, src, name)}::{fn}", "--loss", "--input-shape", shape, "--init", init,
                 *more)
    return p, both(p)


@pytest.mark.parametrize("wrt", [(), ("--wrt", "theta")])
def test_gradient_of_a_later_argument_passes(tmp_path, wrt):
    """H2: Ng's linearRegCostFunction(X, y, theta, lambda_) returns theta's gradient (2,), not X's (5, 2): it FAILed
    "backward() gave dX with shape (2,); expected shape (5, 2)" on correct code. The gradient's shape is theta's alone
    (told so under the header), or --wrt theta says it; theta is checked at its --init value, X held."""
    p, text = _check(tmp_path, LINREG, "linearRegCostFunction", "5,2", LINREG_INIT, *wrt)
    assert p.returncode == 0, text
    assert "PASS: linearRegCostFunction: dL/dtheta matches" in text, text
    assert "the gradient of theta is checked there, X fixed at data of shape (5, 2)" in text, text
    assert ("whose gradient: theta, as --wrt theta says" if wrt else
            "whose gradient: theta, the returned gradient's shape (2,) is theta's alone (the other arrays: X (5, 2), "
            "y (5,))") in text, text
    assert "expected shape (5, 2)" not in text, text


def test_gradient_of_a_later_argument_fails_a_planted_bug(tmp_path):
    """H2's other side: the gradient without its 1/m (truth: 5 times too large in its data part) FAILs in dtheta."""
    p, text = _check(tmp_path, LINREG.replace("grad = ((h - y).T @ X / m)", "grad = ((h - y).T @ X)"),
                     "linearRegCostFunction", "5,2", LINREG_INIT)
    assert p.returncode == 1 and "FAIL: linearRegCostFunction: gradient mismatch in dtheta." in text, text


def test_cs224n_forward_backward_prop_params_gradient(tmp_path):
    """H2: CS224n 2017's forward_backward_prop(data, labels, params, dimensions) FAILed "gave ddata with shape (14,);
    expected shape (4, 3)"; its gradient is params'. The planted sigmoid_grad at the pre-activation FAILs in dparams."""
    p, text = _check(tmp_path, FBPROP, "forward_backward_prop", "4,3", FBPROP_INIT)
    assert p.returncode == 0 and "PASS: forward_backward_prop: dL/dparams matches" in text, text
    bad = FBPROP.replace("da1 = dh * sigmoid_grad(h)", "da1 = dh * sigmoid_grad(data.dot(W1) + b1)")
    p, text = _check(tmp_path, bad, "forward_backward_prop", "4,3", FBPROP_INIT, name="bad.py")
    assert p.returncode == 1 and "FAIL: forward_backward_prop: gradient mismatch in dparams." in text, text


def test_ambiguous_or_wrong_wrt_is_a_usage_error(tmp_path):
    """H2: a gradient whose shape fits two arguments (neither the first) is not guessed: exit 2 naming --wrt; --wrt
    naming no argument, or more arguments than gradients returned, exit 2 too; --wrt with a loss class, exit 2."""
    src = """
    import numpy as np

    def cost(X, y, a, b):
        return float(np.sum((X @ a - y) ** 2) + np.sum(b ** 2)), 2 * X.T @ (X @ a - y)
    """
    init = json.dumps({"y": [1.0, 2.0, 0.5], "a": [0.1, 0.2], "b": [0.3, 0.4]})
    p, text = _check(tmp_path, src, "cost", "3,2", init)
    assert p.returncode == 2 and "fits a and b" in text and "--wrt" in text, text
    p, text = _check(tmp_path, src, "cost", "3,2", init, "--wrt", "a")
    assert p.returncode == 0 and "PASS: cost: dL/da matches" in text, text
    p, text = _check(tmp_path, src, "cost", "3,2", init, "--wrt", "c")
    assert p.returncode == 2 and "--wrt c: cost(X, y, a, b) has no argument c" in text, text
    p, text = _check(tmp_path, src, "cost", "3,2", init, "--wrt", "a,b")
    assert p.returncode == 2 and "returned 1 gradient(s)" in text, text
    cls = """
    import numpy as np

    class MSE:
        def forward(self, y_pred, y_true):
            self.d = y_pred - y_true
            return float(np.mean(self.d ** 2))

        def backward(self):
            return 2 * self.d / self.d.size
    """
    p = run_here("check", f"{student(tmp_path, cls, 'mse.py')}::MSE", "--loss", "--input-shape", "3", "--wrt", "y_pred")
    assert p.returncode == 2 and "--wrt names the arguments of a (loss, grad, ...) function" in both(p), both(p)
