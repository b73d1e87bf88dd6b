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
    """H2: a gradient whose shape fits two arguments (neither the first) is not guessed: told by its central
    differences (review30: a's alone), else exit 2 naming --wrt; --wrt naming no argument, or more arguments than
    gradients returned, exit 2 too; --wrt with a loss class, exit 2."""
    src = """
    import numpy as np

    def cost(X, y, a, b):
        return float(np.sum((X @ a - y) ** 2) + np.sum(b ** 2)), 2 * X.T @ (X @ a - y)
    """
    init = json.dumps({"y": [1.0, 2.0, 0.5], "a": [0.1, 0.2], "b": [0.3, 0.4]})
    p, text = _check(tmp_path, src, "cost", "3,2", init)
    assert p.returncode == 0 and "fits a and b, and agrees with central differences of a alone" in " ".join(
        text.split()), text
    p, text = _check(tmp_path, src.replace("2 * X.T", "3 * X.T"), "cost", "3,2", init)
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


#: CS224n 2019 a2's naiveSoftmaxLossAndGradient (ZacBi's solution), its softmax from utils.py
NAIVE = """
import numpy as np


def softmax(x):
    x = x - np.max(x)
    e = np.exp(x)
    return e / np.sum(e)


def naiveSoftmaxLossAndGradient(centerWordVec, outsideWordIdx, outsideVectors, dataset):
    y_hat = softmax(np.dot(centerWordVec, outsideVectors.T))
    delta = y_hat.copy()
    delta[outsideWordIdx] -= 1
    loss = -np.log(y_hat)[outsideWordIdx]
    gradCenterVec = np.dot(delta, outsideVectors)
    gradOutsideVecs = np.dot(delta[:, np.newaxis], centerWordVec[np.newaxis, :])
    return loss, gradCenterVec, gradOutsideVecs
"""
U = [[0.1, 0.2, 0.3], [0.4, -0.5, 0.6], [-0.7, 0.8, 0.9], [0.3, 0.1, -0.2], [0.5, -0.3, 0.2]]
NAIVE_INIT = json.dumps({"outsideWordIdx": 2, "outsideVectors": U, "dataset": None})


@pytest.mark.parametrize("wrt", [(), ("--wrt", "centerWordVec,outsideVectors")])
def test_several_gradients_each_checked_against_its_argument(tmp_path, wrt):
    """M3: word2vec's (loss, gradCenterVec, gradOutsideVecs) was an exit 3 ("must return (loss, dx); got tuple of
    3"). Each gradient is checked against its argument, by --wrt or by their shapes ((3,) and (5, 3): one argument
    each), each with its own table and verdict."""
    p, text = _check(tmp_path, NAIVE, "naiveSoftmaxLossAndGradient", "3", NAIVE_INIT, *wrt)
    assert p.returncode == 0, text
    assert "PASS: naiveSoftmaxLossAndGradient: dL/dcenterWordVec matches" in text, text
    assert "gradient 2 of 2: doutsideVectors" in text, text
    assert "PASS: naiveSoftmaxLossAndGradient: dL/doutsideVectors matches" in text, text
    assert "the gradient of outsideVectors (returned second, of 2 gradients) is checked there, centerWordVec fixed " \
           "at data of shape (3,)" in text, text


def test_several_gradients_a_bug_in_one_fails_that_one(tmp_path):
    """M3: gradOutsideVecs from y_hat, without the -1 at the outside word (its truth: autograd's dU differs in row 2
    by centerWordVec): dcenterWordVec PASSes, doutsideVectors FAILs, exit 1."""
    bad = NAIVE.replace("np.dot(delta[:, np.newaxis]", "np.dot(y_hat[:, np.newaxis]")
    p, text = _check(tmp_path, bad, "naiveSoftmaxLossAndGradient", "3", NAIVE_INIT)
    assert p.returncode == 1, text
    assert "PASS: naiveSoftmaxLossAndGradient: dL/dcenterWordVec matches" in text, text
    assert "FAIL: naiveSoftmaxLossAndGradient: gradient mismatch in doutsideVectors." in text, text


NEG = """
import random

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def negSamplingLossAndGradient(centerWordVec, outsideWordIdx, outsideVectors, dataset, K=3):
    idx = [outsideWordIdx] + [dataset.sampleTokenIdx() for _ in range(K)]
    U = outsideVectors[idx]
    sign = np.array([1.0] + [-1.0] * K)
    z = sigmoid(sign * (U @ centerWordVec))
    loss = -np.sum(np.log(z))
    g = -(1.0 - z) * sign
    gradOutsideVecs = np.zeros_like(outsideVectors)
    np.add.at(gradOutsideVecs, idx, np.outer(g, centerWordVec))
    return loss, g @ U, gradOutsideVecs
"""


def test_an_object_argument_from_json_is_a_usage_error_with_the_wrapper(tmp_path):
    """M3: negSamplingLossAndGradient(..., dataset) with "dataset": null was an AttributeError exit 3. Exit 2 saying
    JSON gives no object, and the wrapper to write; that wrapper, written as said (its draws seeded), PASSes."""
    p, text = _check(tmp_path, NEG, "negSamplingLossAndGradient", "3", NAIVE_INIT)
    assert p.returncode == 2, text
    wrapper = ("def negSamplingLossAndGradient_checked(centerWordVec, outsideWordIdx, outsideVectors): return "
               "negSamplingLossAndGradient(centerWordVec, outsideWordIdx, outsideVectors, dataset=YourObject())")
    assert "so dataset must be an object with a method sampleTokenIdx" in text and wrapper in text, text
    src = NEG + "\n\nclass YourObject:\n    def sampleTokenIdx(self):\n        return random.randint(0, 4)\n\n\n" + \
        wrapper.replace(": return ", ":\n    random.seed(0)\n    return ") + "\n"
    init = json.dumps({"outsideWordIdx": 2, "outsideVectors": U})
    p, text = _check(tmp_path, src, "negSamplingLossAndGradient_checked", "3", init, name="wrapped.py")
    assert p.returncode == 0 and "PASS: negSamplingLossAndGradient_checked: dL/doutsideVectors matches" in text, text


#: Ng ex2's costFunction(theta, X, y), as published
COST = """
import numpy as np


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def costFunction(theta, X, y):
    m = y.size
    h = sigmoid(X @ theta)
    J = -1 / m * (y.T @ np.log(h) + (1 - y).T @ np.log(1 - h))
    grad = ((h-y).T @ X / m)
    return J, grad
"""
XL = [[1, 0.5, -1.0], [1, -0.3, 0.8], [1, 1.2, 0.1], [1, -0.7, -0.4], [1, 0.2, 0.9]]


def test_integer_labels_from_init_are_an_int_array(tmp_path):
    """M1: "y": [1, 0, 1, 0, 1] arrived as a Python list (``m = y.size``: AttributeError, exit 3). A function's flat
    integer list is an int64 array; one named like a size (``dims``) stays a list of Python ints (fixs28's rule for
    layer configs), which this cost asserts."""
    p, text = _check(tmp_path, COST, "costFunction", "3", json.dumps({"X": XL, "y": [1, 0, 1, 0, 1]}))
    assert p.returncode == 0 and "PASS: costFunction: dL/dtheta matches" in text, text
    src = COST.replace("def costFunction(theta, X, y):", "def costFunction(theta, X, y, dims):\n"
                       "    assert isinstance(dims, list) and all(type(d) is int for d in dims), dims")
    p, text = _check(tmp_path, src, "costFunction", "3", json.dumps({"X": XL, "y": [1, 0, 1, 0, 1], "dims": [3, 1]}),
                     name="dims.py")
    assert p.returncode == 0 and "PASS: costFunction: dL/dtheta matches" in text, text


SIG = """
import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def sigmoid_grad(s):
    return s * (1 - s)


def relu(x):
    return np.maximum(x, 0.0)


def relu_grad(x):
    return (x > 0).astype(float)
"""


@pytest.mark.parametrize(("fn", "at"), [("sigmoid", "output"), ("relu", "input")])
def test_derivative_helper_adapter_pasted_passes(tmp_path, fn, at):
    """H1: for CS224n's sigmoid_grad(s) (s the forward's output) the usage error suggested
    ``sigmoid_backward(dout, cache): return sigmoid_grad(dout, *cache)``, which FAILed a correct sigmoid ("backward is
    not linear in dY"). The helper is told by behaviour (at forward's output for sigmoid_grad, its input for
    relu_grad); the adapter suggested, pasted as written, PASSes."""
    import re

    f = student(tmp_path, SIG, "q2_sigmoid.py")
    p = run_here("check", f"{f}::{fn}", "--input-shape", "3,4")
    text = both(p)
    assert p.returncode == 2 and f"{fn}_grad takes forward's {at}" in text, text
    code = re.search(rf"(def {fn}_forward\(x\): .*? return dout \* {fn}_grad\(\*cache\))", text)[1]
    assert f"return dout * {fn}_grad(*cache)" in code and "(dout, *cache)" not in code, code
    f.write_text(SIG + "\n\n" + code.replace("; def", "\n\n\ndef") + "\n")
    p = run_here("check", f"{f}::{fn}", "--input-shape", "3,4")
    assert p.returncode == 0 and f"PASS: {fn}" in both(p), both(p)


def test_float32_inside_a_loss_is_named_not_an_expected_value(tmp_path):
    """H3: ``h = sigmoid(X @ theta).astype(np.float32)`` (the loss right to 1e-7 relative) was "no known bug pattern
    ... got -0.109579, expected -0.11418" with "2 elements at a kink" on a smooth loss: the expected number was
    float32 noise. Named float32 inside forward, as a layer's, the kinks counted again, no expected value."""
    src = COST.replace("h = sigmoid(X @ theta)", "h = sigmoid(X @ theta).astype(np.float32)")
    p, text = _check(tmp_path, src, "costFunction", "3", json.dumps({"X": XL, "y": [1.0, 0, 1, 0, 1]}))
    assert p.returncode == 1, text
    assert "diagnosis: forward loses precision inside for a float64 input" in text, text
    assert "so part of forward runs in float32" in text and "no expected value" in text, text
    assert "no known bug pattern" not in text and "expected -0.1" not in text, text
    assert "are no kink but float32 round-off inside forward" in text, text


def test_exit_3_of_a_function_of_several_arguments_says_what_it_was_given(tmp_path):
    """M2: the exit-3 message described data never passed ("It was given input_layer_size: real values, of shape
    (38,)" where --init gave 3) and advised --targets labels, which this mode does not use. It says what each
    argument was (the checked one's shape, --init's as the function got them) and no --targets."""
    src = """
    import numpy as np

    def cost(theta, X, y, n):
        m = y.shape[1]
        return float(np.sum((X @ theta - y) ** 2) / m), 2 * X.T @ (X @ theta - y) / m
    """
    p, text = _check(tmp_path, src, "cost", "2", json.dumps({"X": [[1.0, 2], [3, 4], [5, 6]], "y": [1, 0, 1], "n": 3}))
    assert p.returncode == 3, text
    assert "cost(theta, X, y, n) with theta of shape (2,) raised IndexError" in text, text
    assert "It was given theta of shape (2,) (float64) and X: float64 array of shape (3, 2); y: int64 array of shape " \
           "(3,); n: 3 (int); the error is in the function" in text, text
    assert "--targets" not in text and "real values" not in text, text


#: Ng ex2's costFunctionReg(theta, X, y, lambda_), as published: theta[0] left out of both the penalty and its gradient
COSTREG = """
import numpy as np


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def costFunctionReg(theta, X, y, lambda_):
    m = y.size
    h = sigmoid(X @ theta)
    J = -(y.T @ np.log(h) + (1-y.T) @ np.log(1-h)) / m
    J += (np.sum(theta**2) - theta[0]**2) * lambda_ / 2 / m
    grad = ((h-y).T @ X / m)
    reg = theta * lambda_ / m
    reg[0] = 0
    grad += reg
    return J, grad
"""
REG_INIT = json.dumps({"X": XL, "y": [1.0, 0, 1, 0, 1], "lambda_": 1.0})


@pytest.mark.parametrize(("edit", "says"), [
    (("    reg[0] = 0\n", ""), "so the loss adds lambda_/(2*m)*np.sum(theta[1:]*theta[1:]), whose gradient is "
     "lambda_/m*theta[1:] (0 at theta[0]), and backward adds lambda_/m*theta (lambda_ = 1, m = 5"),
    (("reg = theta * lambda_ / m", "reg = theta * lambda_ / 2 / m"), "and backward adds lambda_/(2*m)*theta[1:] (0 "
     "at theta[0]) (lambda_ = 1, m = 5"),
    (("(np.sum(theta**2) - theta[0]**2)", "np.sum(theta**2)"), "so the loss adds lambda_/(2*m)*np.sum(theta*theta), "
     "whose gradient is lambda_/m*theta, and backward adds lambda_/m*theta[1:] (0 at theta[0])"),
])
def test_ng_regulariser_conventions_are_named(tmp_path, edit, says):
    """M4: Ng's regulariser bugs (theta[0], the bias, penalised in the gradient and not in J, or the other way; a
    1/(2m) for 1/m) were "no known bug pattern" though the docs say penalty conventions are named: the 1/m factor and
    the first entry left out are read too. The published code PASSes."""
    p, text = _check(tmp_path, COSTREG, "costFunctionReg", "3", REG_INIT)
    assert p.returncode == 0, text
    p, text = _check(tmp_path, COSTREG.replace(*edit), "costFunctionReg", "3", REG_INIT, name="bad.py")
    assert p.returncode == 1 and "diagnosis: dtheta's penalty term is not the gradient of the penalty" in text, text
    assert says in text and "no known bug pattern" not in text, text
    assert "theta[0] the bias left out of both" in text, text


def test_low_zero_strength_note_alias_write_and_value_trailer(tmp_path):
    """LOW: with "lambda_": 0 a regulariser bug PASSed silently (now a NOTE says the penalty was not exercised and how
    to check it); the PASS trailer suggested --reference manualprop.MulticlassHinge for a logistic cost (no manualprop
    class is a function of several arguments); Ng's Hint 2 taken literally (``temp = theta; temp[0] = 0``) was told as
    "modified its input y_pred ... e.g. np.maximum(X, 0)" (theta is the argument, the advice a layer's)."""
    bad = COSTREG.replace("    reg[0] = 0\n", "")
    p, text = _check(tmp_path, bad, "costFunctionReg", "3", json.dumps({"X": XL, "y": [1.0, 0, 1, 0, 1], "lambda_": 0}))
    assert p.returncode == 0, text  # at lambda_ = 0 the bug is not there to find
    assert "NOTE: lambda_ = 0 in --init: the regulariser's penalty and its gradient were not exercised" in text, text
    assert '("lambda_": 1.0 in --init)' in text, text
    assert "MulticlassHinge" not in text and "compare it at one point with the value your assignment gives" in text
    alias = COSTREG.replace("    reg = theta * lambda_ / m\n    reg[0] = 0\n",
                            "    temp = theta\n    temp[0] = 0\n    reg = temp * lambda_ / m\n")
    p, text = _check(tmp_path, alias, "costFunctionReg", "3", REG_INIT, name="alias.py")
    assert p.returncode == 1, text
    assert "modified its argument theta in place; a cost function must not write into theta" in text, text
    assert "t = theta.copy(); t[0] = 0 rather than t = theta; t[0] = 0" in text and "y_pred" not in text, text


def test_pred_arg_with_a_loss_function_is_refused_naming_wrt(tmp_path):
    """H2: --pred-arg was accepted and ignored for a loss function (it binds a loss class's forward only): an option
    accepted and not honoured. Exit 2 naming --wrt."""
    p, text = _check(tmp_path, LINREG, "linearRegCostFunction", "5,2", LINREG_INIT, "--pred-arg", "theta")
    assert p.returncode == 2 and "--pred-arg names the prediction argument of a loss class's forward" in text, text
    assert "--wrt theta" in text, text


#: Andrew Ng's deep-learning course: a cost of the data X (n_x, m) given the dict `parameters` of arrays
NG_DICT = """
import numpy as np


def model_cost(X, Y, parameters):
    W1, b1 = parameters["W1"], parameters["b1"]
    m = X.shape[1]
    Z1 = np.dot(W1, X) + b1
    J = 0.5 * np.sum((Z1 - Y) ** 2) / m
    dZ1 = (Z1 - Y) / m
    grads = {"dW1": np.dot(dZ1, X.T), "db1": np.sum(dZ1, axis=1, keepdims=True), "dX": np.dot(W1.T, dZ1)}
    return J, grads["dX"]


def model_cost_W1(X, Y, parameters, W1):
    parameters = dict(parameters, W1=W1)
    W1, b1 = parameters["W1"], parameters["b1"]
    Z1 = np.dot(W1, X) + b1
    m = X.shape[1]
    dZ1 = (Z1 - Y) / m
    return 0.5 * np.sum((Z1 - Y) ** 2) / m, np.dot(dZ1, X.T) * SCALE
"""
NG_PARAMS = {"W1": [[0.5, -0.3, 0.2], [0.1, 0.4, -0.6]], "b1": [[0.1], [-0.2]]}
NG_INIT = json.dumps({"Y": [[1.0, 0.0, 1.0, 0.5], [0.0, 1.0, -1.0, 0.2]], "parameters": NG_PARAMS})


def test_a_dict_of_nested_lists_in_init_is_passed_as_arrays(tmp_path):
    """newuser30 F3: Ng's parameters {"W1": [[...]], ...} in --init stayed lists ('list' object has no attribute 'T',
    exit 3) while the message said nested lists become float64 arrays; now the dict's lists are arrays too."""
    p, text = _check(tmp_path, NG_DICT.replace("SCALE", "1"), "model_cost", "3,4", NG_INIT)
    assert p.returncode == 0, text
    assert "PASS: model_cost: dL/dX matches" in text and "no attribute" not in text, text


@pytest.mark.parametrize(("scale", "code"), [("1", 0), ("2", 1)])
def test_wrt_a_dict_argument_is_refused_with_a_recipe_that_works(tmp_path, scale, code):
    """--wrt parameters (a dict): a usage error naming its entries and the function to add; that function, checked as
    the message says, passes when right and fails a factor 2 in dW1."""
    p, text = _check(tmp_path, NG_DICT.replace("SCALE", scale), "model_cost", "3,4", NG_INIT, "--wrt", "parameters")
    assert p.returncode == 2, text
    assert "--wrt parameters: parameters is a dict of 2 entries (W1, b1), not an array" in text, text
    assert ("def model_cost_W1(X, Y, parameters, W1): parameters = dict(parameters, W1=W1); J, grads = "
            "model_cost(X, Y, parameters); return J, grads['dW1']") in text, text
    assert "--loss" in text and "--wrt W1" in text, text
    init = json.dumps({**json.loads(NG_INIT), "W1": NG_PARAMS["W1"]})
    p, text = _check(tmp_path, NG_DICT.replace("SCALE", scale), "model_cost_W1", "3,4", init, "--wrt", "W1")
    assert p.returncode == code, text
    assert ("PASS: model_cost_W1: dL/dW1 matches" if code == 0 else "gradient mismatch in dW1") in text, text
