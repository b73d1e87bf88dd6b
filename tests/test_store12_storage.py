"""Session 12 (store12): where students keep weights and gradients, read as they wrote them (Z11, NoBias, Y23, Y25,
Y6, Y12, Y16, Z15); the planted bugs are also in tests/buggy_layers/styles.py."""

import numpy as np
import pytest
from test_cli import both, run, run_here, student

from gradcheck import _adapters as AD

SWAP = """
import numpy as np

class Scale:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.gamma, self.beta = rng.standard_normal(3), rng.standard_normal(3)
    def forward(self, X):
        self.X = X
        return X * self.gamma + self.beta
    def backward(self, dY):
        self.dbeta, self.dgamma = (self.X * dY).sum(0), dY.sum(0)
        return dY * self.gamma
"""


def test_a_swap_in_attributes_is_named_by_the_students_attributes(tmp_path):
    """Z11: the diagnosis said grads['gamma'] = dgamma where the student wrote self.dgamma."""
    p = run_here("check", f"{student(tmp_path, SWAP, 'z11.py')}::Scale", "--input-shape", "6,3")
    out = both(p)
    assert p.returncode == 1, out
    assert "self.dgamma holds the gradient of beta and vice versa" in out, out
    assert "self.dgamma = the gradient of gamma, self.dbeta = that of beta" in out and "grads[" not in out, out


VALUE = """
import numpy as np

class Tensor:
    def __init__(self, v):
        self.VAL, self.GRAD = v, np.zeros_like(v)

class Dense:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = Tensor(rng.standard_normal((5, 3))), Tensor(rng.standard_normal(3))
    def forward(self, X):
        self.X = X
        return X @ self.W.VAL + self.b.VAL
    def backward(self, dY):
        self.W.GRAD = BUG * self.X.T @ dY
        self.b.GRAD = dY.sum(0)
        return dY @ self.W.VAL.T
"""


@pytest.mark.parametrize("val, grad", [("value", "gradient"), ("data", "grad"), ("data", "gradient"),
                                       ("value", "grad")])
@pytest.mark.parametrize("bug", [1, 2])
def test_a_tensor_objects_value_and_gradient_are_the_weight_and_its_gradient(tmp_path, val, grad, bug):
    """Y25 (wrong PASS): W.value with W.gradient was "without gradients", dX alone checked: a x2 dW passed."""
    body = VALUE.replace("VAL", val).replace("GRAD", grad).replace("BUG", str(bug))
    p = run_here("check", f"{student(tmp_path, body, f'y25_{val}_{grad}_{bug}.py')}::Dense", "--input-shape", "6,5")
    out = both(p)
    assert "without gradients" not in out, out
    if bug == 1:
        assert p.returncode == 0 and "PASS: Dense: every gradient (dX, dW, db) matches" in out, out
    else:
        assert p.returncode == 1 and "FAIL: Dense: gradient mismatch in dW" in out and "2 times" in out, out


NOBIAS = """
import numpy as np

class Dense:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((5, 3)), rng.standard_normal(3)
    def forward(self, X):
        self.X = X
        return X @ self.W PLUS_B
    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        return dY @ self.W.T
"""


@pytest.mark.parametrize("plus_b", ["", "+ self.b"])
def test_a_bias_forward_ignores_is_checked_when_backward_writes_its_gradient(tmp_path, plus_b):
    """NoBias (wrong PASS): forward X @ W, backward db = dY.sum(0): PASS with dX, dW. b's numerical gradient is 0."""
    p = run_here("check", f"{student(tmp_path, NOBIAS.replace('PLUS_B', plus_b), f'nobias{len(plus_b)}.py')}::Dense",
            "--input-shape", "6,5")
    out = both(p)
    if plus_b:
        assert p.returncode == 0 and "PASS: Dense: every gradient (dX, dW, db) matches" in out, out
        assert "does not use" not in out, out
    else:
        assert p.returncode == 1, out
        assert ("FAIL: Dense: gradient mismatch in db (db is the gradient backward writes for b, but forward does "
                "not use b: changing it leaves the output unchanged, so its gradient is 0)") in out, out
        assert "forward does not use b, yet backward writes db" in out, out


def test_a_cache_forward_writes_is_not_taken_for_an_unused_weight():
    """A cache forward sets (self.X, with a self.dX of its shape from backward) is no weight: not paired."""
    class Cached:
        def __init__(self):
            self.W, self.X = np.random.default_rng(0).standard_normal((5, 3)), np.zeros((6, 5))

        def forward(self, X):
            self.X = X
            return X @ self.W

        def backward(self, dY):
            self.dW, self.dX = self.X.T @ dY, dY @ self.W.T
            return self.dX
    X = np.random.default_rng(1).standard_normal((6, 5))
    layer, info = AD.adapt(Cached(), [X])
    assert set(layer.pairs) == {"W"} and "idle" not in info, info


TIED = """
import numpy as np

class MatMul:
    def __init__(self, W):
        self.params, self.grads = [W], [np.zeros_like(W)]
    def forward(self, x):
        self.x = x
        return x @ self.params[0]
    def backward(self, dout):
        self.grads[0][...] = BUG * self.x.T @ dout
        return dout @ self.params[0].T

class Net:
    def __init__(self):
        W_in = np.random.default_rng(0).standard_normal((5, 3))
        self.layers = [MatMul(W_in), MatMul(W_in.T)]
        self.params, self.grads = [], []
        for layer in self.layers:
            self.params += layer.params
            self.grads += layer.grads
    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x
    def backward(self, dout):
        for layer in reversed(self.layers):
            dout = layer.backward(dout)
        return dout
"""


@pytest.mark.parametrize("bug", [1, -1])
def test_weights_tied_through_a_transpose_and_listed_twice_sum_their_gradients_once(tmp_path, bug):
    """Y12 (wrong FAIL): W_out = W_in.T in a DLfS-2 model's params: the book's remove_duplicate sums g_in + g_out.T;
    gradcheck added g_out.T twice (once as params[1], once as layers.1.params[0], the same array)."""
    p = run_here("check", f"{student(tmp_path, TIED.replace('BUG', str(bug)), f'tied{bug}.py')}::Net",
            "--input-shape", "6,5")
    out = both(p)
    assert "params[1] and layers.1.params[0] are one array listed twice" in out, out
    if bug == 1:
        assert p.returncode == 0 and "PASS: Net: every gradient (dX, dparams[0]) matches" in out, out
    else:
        assert p.returncode == 1 and "dparams[0] has the wrong sign" in out, out


def test_a_model_listing_copies_of_its_layers_arrays_is_refused_naming_each():
    """Y23 (wrong PASS): self.params += [p.copy() for p in layer.params]: the optimizer steps copies forward never
    reads. A protocol error (exit 3) naming params[i] and the array it copies; the book's own model is read."""
    from buggy_layers import load

    with pytest.raises(AD.AdapterError) as exc:
        load("styles.py::DLfS2NetCopies")
    msg = " ".join(str(exc.value).split())
    assert msg.startswith("DLfS2NetCopies.params[0], params[1], params[2] and params[3] are copies of "
                          "blocks.0.params[0], blocks.0.params[1], blocks.1.params[0] and blocks.1.params[1] "
                          "(the same values in their own memory)"), msg
    assert "self.params += layer.params, no .copy()" in msg, msg
    layer = load("styles.py::DLfS2Net")[0]  # the book's model: no error
    assert "params[0]" in layer.pairs, layer.pairs


def test_the_cli_refuses_a_model_of_copies_with_exit_3(tmp_path):
    from test_tester10_storage import DLFS2, IN_PLACE

    body = DLFS2.replace("STORE", IN_PLACE).replace("self.params += layer.params",
                                                    "self.params += [p.copy() for p in layer.params]")
    p = run("check", f"{student(tmp_path, body, 'copies.py')}::Net", "--input-shape", "6,5")  # the console script
    out = both(p)
    assert p.returncode == 3 and "PASS" not in out, out
    assert "Net.params[0] and params[1] are copies of layers.0.params[0] and layers.0.params[1]" in out, out


STORED_DX = """
import numpy as np

class Dense:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.weights, self.biases = rng.standard_normal((5, 3)), rng.standard_normal(3)
    def forward(self, inputs):
        self.inputs = inputs
        return inputs @ self.weights + self.biases
    def backward(self, dvalues):
        self.dweights, self.dbiases = self.inputs.T @ dvalues, dvalues.sum(0)
        self.NAME = STORED * dvalues @ self.weights.T
        return RETURNED * dvalues @ self.weights.T
"""


@pytest.mark.parametrize("name", ["dinputs", "dX"])
@pytest.mark.parametrize("stored, returned", [(1, 1), (2, 1), (1, -1)])
def test_a_stored_dx_beside_the_returned_one_is_checked_too(tmp_path, name, stored, returned):
    """Y6 (wrong PASS): backward returned a right dX and stored a wrong self.dinputs (what NNFS's next layer
    reads): the returned one alone was checked. The one further from a finite difference is read, and named."""
    body = STORED_DX.replace("NAME", name).replace("STORED", str(stored)).replace("RETURNED", str(returned))
    p = run_here("check", f"{student(tmp_path, body, f'y6_{name}_{stored}_{returned + 1}.py')}::Dense", "--input-shape",
            "6,5")
    out = both(p)
    if stored == returned:
        assert p.returncode == 0 and "PASS: Dense" in out and "they differ" not in out, out
    elif stored == 2:
        assert p.returncode == 1 and (f"FAIL: Dense: gradient mismatch in dX (dX is the stored self.{name}, not the "
                                      "dX backward returns (the two differ))") in out, out
        assert f"backward stores self.{name} and returns dX, and they differ" in out and "2 times" in out, out
    else:
        assert p.returncode == 1 and f"dX is the dX backward returns, not the stored self.{name}" in out, out
        assert "wrong sign" in out, out


def test_weights_in_a_2d_object_array_are_named_by_their_index():
    """Y16: W[1, 0] of a 2 x 2 object array was named W[2] (its flat index); dW[1, 0] x2 is found there."""
    from buggy_layers import diagnose, load

    layer = load("styles.py::GridSum")[0]
    assert list(layer.pairs) == ["W[0, 0]", "W[0, 1]", "W[1, 0]", "W[1, 1]"], layer.pairs
    assert layer.pairs["W[1, 0]"] == "dW[1, 0]", layer.pairs
    d = diagnose("styles.py::GridSumTwice")
    assert not d.passed and d.codes[0] == "factor", d.sentence()
    assert d.sentence().startswith("FAIL: GridSumTwice: dW[1, 0] is 2 times the correct gradient"), d.sentence()


BUFFERS = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((5, 3)), rng.standard_normal(3)
        self.EXTRA = rng.standard_normal(3)
        self.bi = rng.standard_normal(3)
    def forward(self, X, training=False):
        self.X = X
        Y = X @ self.W + self.b + self.bi
        if training and WRITES:
            self.EXTRA = 0.9 * self.EXTRA + 0.1 * Y.mean(0)
            return Y
        return Y + self.EXTRA
    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        if BI:
            self.dbi = dY.sum(0)
        return dY @ self.W.T
"""


@pytest.mark.parametrize("extra, writes, bi, code, words", [
    # read, not written, the output moving with it: a weight whose gradient backward forgot or a constant, whatever
    # its name: NOT CHECKED, exit 3 (H4; session 13 Z15: a short name was read as a buffer, a forgotten bh PASSed)
    ("bg", False, False, 3, "cannot tell whether bg is a weight whose gradient backward forgot (then set self.dbg)"),
    ("wts", False, False, 3, "or a constant (then name it self._wts, or pass --constants wts)"),
    ("_bg", False, False, 0, "PASS: L:"),  # a constant marked private
    # a running statistic forward writes, whatever its name: a buffer
    ("b_run", True, False, 0, "read as a constant buffer (forward writes it)"),
    # bg beside bi with dbi: a gate bias whose gradient backward forgot, or a constant: undecided
    ("bg", False, True, 3, "NOT CHECKED as a whole: L: the gradients that were checked match"),
    # a capital W with a subscript, and b itself, are weights
    ("Wh", False, False, 3, "cannot tell whether Wh is a weight"),
])
def test_arrays_without_gradients_are_told_from_weights_by_what_the_layer_does(tmp_path, extra, writes, bi, code,
                                                                               words):
    """Z15: an array forward writes (a running statistic) beside W/dW, b/db is a buffer; one it only reads may be a
    weight whose gradient backward forgot or a constant, whatever its name: NOT CHECKED, exit 3 (H4)."""
    body = BUFFERS.replace("EXTRA", extra).replace("WRITES", str(writes)).replace("BI:", f"{bi}:")
    if not bi:
        body = body.replace("        self.bi = rng.standard_normal(3)\n", "").replace(" + self.bi", "")
    p = run_here("check", f"{student(tmp_path, body, f'z15_{extra}_{writes}_{bi}.py')}::L", "--input-shape", "6,5")
    out = both(p)
    assert p.returncode == code and words in out, out
    assert ("PASS: L:" in out) == (code == 0), out
