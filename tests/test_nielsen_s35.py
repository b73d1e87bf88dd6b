"""nielsen34's findings left by session 34, fixed by nielsen35, on Nielsen-style networks (``backprop(x, y) ->
(nabla_b, nabla_w)``, checked as a model of their cost):

* F9: the common backprop bugs FAILed as "no known bug pattern"; each is named (:func:`gradcheck.diagnose.
  _nielsen_signature`): the sigmoid derivative's forms (:data:`gradcheck.diagnose._INSIDE`), W for W.T, ``zs[-l+1]``,
  the output delta of the other cost, dC/da for dC/dz, one array for every bias gradient.
* F10: a cost ``fn`` without its 0.5 (its delta that of 0.5*||a - y||^2) was "0.5 times the correct gradient": the
  cost and its delta are said to disagree by a factor 2.
* F11: a backprop writing into its x was undetected (its gradients blamed on "two residual branches"): a FAIL,
  "modified its input x in place".
* F2/F4: a returned list in the wrong order or of a wrong shape stopped with exit 3 ("raised ValueError"): exit 1.
The network is tests/fixtures/nielsen_s34/network2.py (written for these tests), each bug a replaced line.
"""

import pathlib

import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck import diagnose as D

HERE = pathlib.Path(__file__).parent / "fixtures" / "nielsen_s34"
ARGS = ("--input-shape", "4,3", "--targets", "unit@3,3", "--init", '{"sizes": [4, 3, 3, 3]}')
ALL = "dX, dbiases[0], dbiases[1], dbiases[2], dweights[0], dweights[1], dweights[2] are"
HIDDEN = "dX, dbiases[0], dbiases[1], dweights[0], dweights[1] are"  # the last layer's gradients are right
CE = ("def __init__(self, sizes, cost=QuadraticCost):", "def __init__(self, sizes, cost=CrossEntropyCost):")


def _check(tmp_path, *edits, name="network2.py", args=ARGS):
    src = (HERE / name).read_text()
    for old, new in edits:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    p = run_here("check", f"{student(tmp_path, src, name)}::Network", *args)
    return p.returncode, both(p)


def test_the_correct_network_passes_with_either_cost(tmp_path):
    """The control: no diagnosis where there is no bug, with the quadratic cost and with the cross-entropy."""
    for i, edits in enumerate([(), (CE,)]):
        (tmp_path / str(i)).mkdir()
        code, text = _check(tmp_path / str(i), *edits)
        assert code == 0 and "PASS: Network: every gradient (dX, dbiases[0]" in text, text
        # verify36 F7: the step is said in the method's own parameter names, (batch, eta)
        # F6: the PASS said nothing of update_mini_batch (nielsen36: now checked, tests/test_nielsen_step_s36.py)
        assert ("Network: checked: backprop's gradients (and dX read from them) against central differences of the "
                "cost of feedforward's output, both as written; not checked: feedforward's values (no reference "
                "computes them), nor SGD's loop over epochs and mini-batches. update_mini_batch(batch, eta): "
                "checked: one step") in text, text
        assert "pass --reference" not in text, text


def test_tape_says_why_it_cannot_follow_the_network(tmp_path):
    """F5: --tape on a Nielsen network said 'the tape lost track of X at <gradcheck adapters>:2080 in forward', at
    gradcheck's own adapter, as if the student's forward had left the tape."""
    code, text = _check(tmp_path, args=(*ARGS, "--tape"))
    assert code == 0 and "PASS: Network" in text, text
    assert ("no tape comparison for Network: --tape records a forward whose weights are params' arrays, but Network "
            "is Nielsen's network: its forward is gradcheck's own") in text, text
    assert "lost track" not in text and "gradcheck adapters" not in text, text


def test_a_switch_of_a_method_the_check_never_runs_is_not_warned_of(tmp_path):
    """F7: SGD's ``if monitor_training_cost:`` was told as "a training switch gradcheck does not set, so only the branch
    its current value selects ran" of the checked forward (feedforward and backprop never read it)."""
    code, text = _check(tmp_path)
    assert code == 0 and "mode: forward has no training switch: one mode" in text, text
    assert "WARNING" not in text and "monitor_training_cost" not in text, text


def test_a_switch_backprop_reaches_is_still_warned_of(tmp_path):
    """F7's control: a switch in a method backprop calls (``self.step_sp``) is read as before."""
    code, text = _check(tmp_path, ("            sp = sigmoid_prime(zs[-k])\n", "            sp = self.step_sp(zs[-k])\n"),
                        ("    def SGD(self,", "    def step_sp(self, z):\n        if self.training:\n            return "
                         "sigmoid_prime(z)\n        return sigmoid_prime(z)\n\n    def SGD(self,"),
                        ("        self.cost = cost\n", "        self.cost = cost\n        self.training = True\n"))
    assert code == 0, text
    assert "WARNING: the class tests `self.training` (line" in text, text


SIGMOID_PRIME = "    return sigmoid(z) * (1 - sigmoid(z))"
AT_OUTPUT = ("what backward gives with sigmoid's derivative evaluated at forward's output out = sigmoid(z) instead of "
             "at z, the activation's input (the pre-activation, e.g. z = X @ W + b): sigmoid(out) * (1 - sigmoid(out))")


@pytest.mark.parametrize(("edits", "head", "said"), [
    ([(SIGMOID_PRIME, "    return sigmoid(z) * (1 + sigmoid(z))")], ALL,
     "what backward gives with sigmoid's derivative taken as out * (1 + out) where out * (1 - out) is due"),
    ([(SIGMOID_PRIME, "    return sigmoid(z) * (1 + sigmoid(z))"), CE], HIDDEN,  # the cross-entropy's delta: no sigma'
     "what backward gives with sigmoid's derivative taken as out * (1 + out) where out * (1 - out) is due"),
    ([(SIGMOID_PRIME, "    return sigmoid(z)")], ALL,
     "what backward gives with sigmoid's derivative taken as out where out * (1 - out) is due (out = the sigmoid "
     "forward returns): the factor (1 - out) is missing"),
    ([(SIGMOID_PRIME, "    return z * (1 - z)")], ALL,
     "what backward gives with sigmoid's derivative written in its output, out * (1 - out) (out = sigmoid(z)), "
     "given z, the activation's input, instead: z * (1 - z)"),
    ([("sp = sigmoid_prime(zs[-k])", "sp = sigmoid_prime(activations[-k])")], HIDDEN,
     AT_OUTPUT + " (sigmoid_prime(activations[-l]) in the hidden layers' delta) where "
     "sigmoid(z) * (1 - sigmoid(z)) (= out * (1 - out)) is due"),
    ([("return (a - y) * sigmoid_prime(z)", "return (a - y) * sigmoid_prime(a)")], ALL,
     AT_OUTPUT + " (sigmoid_prime(activations[-1]) in the output delta) where"),
    ([("(self.weights[-k + 1].T @ delta)", "(self.weights[-k + 1] @ delta)")], HIDDEN,
     "what backprop gives with np.dot(weights[-l+1], delta) where np.dot(weights[-l+1].transpose(), delta) is due"),
    ([("sp = sigmoid_prime(zs[-k])", "sp = sigmoid_prime(zs[-k + 1])")], HIDDEN,
     "what backprop gives with sigmoid_prime(zs[-l+1]), the z of the layer above, in the hidden layers' delta where "
     "sigmoid_prime(zs[-l]), the layer's own z, is due"),
    ([("return (a - y) * sigmoid_prime(z)", "return (a - y)")], ALL,
     "what backprop gives with the output delta a - y where (a - y) * sigmoid_prime(z) (the quadratic cost's) is "
     "due: a - y is the cross-entropy cost's delta"),
    ([CE, ("        return a - y\n", "        return (a - y) * sigmoid_prime(z)\n")], ALL,
     "what backprop gives with the output delta (a - y) * sigmoid_prime(z) (the quadratic cost's) where a - y is "
     "due: for the cross-entropy CrossEntropyCost.fn(a, y), dC/da = (a - y) / (a (1 - a))"),
    ([CE, ("        return a - y\n", "        return (a - y) / (a * (1 - a))\n")], ALL,
     "what backprop gives with the output delta (a - y) / (a * (1 - a)), the cost's dC/da where its dC/dz = a - y "
     "is due"),
])
def test_a_common_backprop_bug_is_named(tmp_path, edits, head, said):
    """F9: each was "no known bug pattern" (nielsen34's mutants n01-n06, n10, n12, m01, m03, m05, m07); named now
    for exactly the tensors it makes wrong."""
    code, text = _check(tmp_path, *edits)
    assert code == 1, text
    assert f"diagnosis: {head} {said}" in text, text
    assert "no known bug pattern" not in text, text


def test_one_array_for_every_bias_gradient_is_named(tmp_path):
    """F9 (mutant n17): ``[np.zeros(...)] * n`` with ``+=``: every nabla_b[i] is the sum of the layers' deltas."""
    code, text = _check(tmp_path, ("nabla_b = [np.zeros(b.shape) for b in self.biases]",
                                   "nabla_b = [np.zeros(self.biases[0].shape)] * len(self.biases)"),
                        ("        nabla_b[-1] = delta\n", "        nabla_b[-1] += delta\n"),
                        ("            nabla_b[-k] = delta\n", "            nabla_b[-k] += delta\n"))
    assert code == 1, text
    assert ("diagnosis: dX, dbiases[0], dbiases[1], dbiases[2] are what backprop gives with one array for every "
            "nabla_b[i] ([np.zeros(...)] * n, then +=) where a new array per layer ([np.zeros(b.shape) for b in "
            "self.biases]) is due") in text, text


def test_a_bug_outside_the_table_keeps_its_own_name(tmp_path):
    """Not every FAIL of a Nielsen network is read as a changed line: a hidden nabla_w halved is the factor rule's."""
    code, text = _check(tmp_path, ("nabla_w[-k] = delta @ activations[-k - 1].T",
                                   "nabla_w[-k] = 0.5 * (delta @ activations[-k - 1].T)"))
    assert code == 1, text
    assert "diagnosis: dweights[0] and dweights[1] are 0.5 times the correct gradient" in text, text


def test_a_cost_without_its_half_disagrees_with_its_delta(tmp_path):
    """F10 (mutant m06): QuadraticCost.fn without the 0.5 was 'every gradient 0.5 times the correct gradient: a
    constant factor is wrong somewhere'; backprop is right for the cost it differentiates."""
    code, text = _check(tmp_path, ("return 0.5 * np.sum((a - y) ** 2)", "return np.sum((a - y) ** 2)"))
    assert code == 1, text
    assert (f"diagnosis: {ALL} exactly the gradient of 0.5*||a - y||^2, the cost whose output delta backprop starts "
            "from ((a - y) * sigmoid_prime(z)), but the cost forward computes, QuadraticCost.fn(a, y), is 2 times "
            "that: the cost and its delta disagree by a factor 2, so every gradient is 0.5 times the gradient of the "
            "cost; make them one cost: fn = 0.5*np.linalg.norm(a-y)**2") in text, text


def test_a_backprop_writing_into_x_fails(tmp_path):
    """F11 (mutant v08): a backprop centring its x in place (the caller's array: network.py's training data) was
    undetected, its gradients blamed on 'two residual branches'."""
    code, text = _check(tmp_path, ("        activations, zs = [x], []\n",
                                   "        x -= x.mean(axis=0, keepdims=True)\n        activations, zs = [x], []\n"))
    assert code == 1, text
    assert ("gradcheck: wrong result (exit 1): Network.backprop(x, y) modified its input x in place; backprop must "
            "not write into x (update_mini_batch gives it the training data itself") in text, text
    assert "residual" not in text, text


def test_a_backprop_writing_into_y_fails(tmp_path):
    """F11: y is the caller's too."""
    code, text = _check(tmp_path, ("        delta = self.cost.delta(zs[-1], activations[-1], y)\n",
                                   "        y *= 1.0001\n        delta = self.cost.delta(zs[-1], activations[-1], y)\n"))
    assert code == 1 and "Network.backprop(x, y) modified its input y in place" in text, text


def test_a_swapped_return_is_a_wrong_result(tmp_path):
    """F2: 'returned in the wrong order' stopped with exit 3, as if the code had raised ('raised ValueError')."""
    code, text = _check(tmp_path, ("return (nabla_b, nabla_w)", "return (nabla_w, nabla_b)"))
    assert code == 1, text
    assert ("gradcheck: wrong result (exit 1): Network.backward(dY) with dY of shape (1,): backprop(x, y) with one "
            "sample x[:, j] of shape (4, 1) returned in the wrong order (nabla_w, nabla_b)") in text, text
    assert "raised" not in text, text


def test_a_wrong_shape_is_a_wrong_result(tmp_path):
    """F4: the shape named, exit 1 (was 3, 'raised ValueError')."""
    code, text = _check(tmp_path, ("nabla_w[-k] = delta @ activations[-k - 1].T",
                                   "nabla_w[-k] = delta @ activations[-k].T"))
    assert code == 1, text
    assert ("wrong result (exit 1): Network.backward(dY) with dY of shape (1,): backprop(x, y) with one sample x[:, j] "
            "of shape (4, 1): nabla_w[0] has shape (3, 3), expected (3, 4) (the shape of weights[0]).") in text, text


def test_an_exception_of_that_name_from_the_submission_is_its_own(tmp_path):
    """Only the adapters' reading is a wrong result: the same class name raised by the submission (a frame of it in
    the traceback) is the code raising (exit 3), as any exception."""
    code, text = _check(tmp_path, ("    def backprop(self, x, y):\n",
                                   "    def backprop(self, x, y):\n        raise BackpropResultError('mine')\n"),
                        ("import numpy as np\n", "import numpy as np\n\n\nclass BackpropResultError(ValueError):\n"
                                                 "    pass\n"))
    assert code == 3 and "raised BackpropResultError: mine" in text, text


def test_the_simulated_backprop_is_the_gradient_of_the_cost():
    """:func:`gradcheck.diagnose._nielsen_backprop` unchanged gives the gradients of the summed cost: against central
    differences of the cost (an independent oracle, step 1e-6, float64), both costs, a non-square network."""
    rng = np.random.default_rng(3)
    sizes = [4, 5, 2]
    Ws = [rng.standard_normal((k, j)) for j, k in zip(sizes[:-1], sizes[1:])]
    bs = [rng.standard_normal((k, 1)) for k in sizes[1:]]
    X, T = rng.standard_normal((4, 3)), rng.uniform(0.1, 0.9, (2, 3))
    for cost, (value, *_) in D._NIELSEN_COSTS.items():
        def C(Ws_, bs_, X_, value=value):
            a = X_
            for W, b in zip(Ws_, bs_):
                a = D._sig(W @ a + b)
            return value(a, T)
        nb, nw, d1 = D._nielsen_backprop(Ws, bs, X, T, cost)
        for arrays, grads in ((Ws, nw), (bs, nb)):
            for A, G in zip(arrays, grads):
                num = np.zeros_like(A)
                for i in np.ndindex(A.shape):
                    old = A[i]
                    A[i] = old + 1e-6
                    up = C(Ws, bs, X)
                    A[i] = old - 1e-6
                    num[i] = (up - C(Ws, bs, X)) / 2e-6
                    A[i] = old
                np.testing.assert_allclose(G, num, rtol=1e-6, atol=1e-9)
        dX = np.zeros_like(X)
        for i in np.ndindex(X.shape):
            Xp, Xm = X.copy(), X.copy()
            Xp[i] += 1e-6
            Xm[i] -= 1e-6
            dX[i] = (C(Ws, bs, Xp) - C(Ws, bs, Xm)) / 2e-6
        np.testing.assert_allclose(Ws[0].T @ d1, dX, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(("code", "wrong"), [
    ("sigmoid-one-plus-inside", lambda z, y: y * (1 + y)),
    ("derivative-at-input-inside", lambda z, y: z * (1 - z)),
])
def test_the_new_inside_ratios_are_wrong_over_the_derivative(code, wrong):
    """The two sigmoid rows added to :data:`gradcheck.diagnose._INSIDE`: the wrong derivative over sigmoid'(z), as a
    function of out = sigmoid(z), sigmoid'(z) from central differences (step 1e-5) at z = -3..3."""
    z = np.linspace(-3, 3, 61)
    y = 1 / (1 + np.exp(-z))
    right = (1 / (1 + np.exp(-(z + 1e-5))) - 1 / (1 + np.exp(-(z - 1e-5)))) / 2e-5
    row = next(r for r in D._INSIDE if r[0] == code)
    assert row[1](y) and D._sigmoid_inside(row)
    np.testing.assert_allclose(row[2](y) * right, wrong(z, y), rtol=1e-8, atol=1e-12)
