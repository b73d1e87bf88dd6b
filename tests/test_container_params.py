"""Weights in containers and deeper sub-layers, constant buffers, a CS231n backward that forgets a gradient
(tester 7's T19, T18 and the T3 follow-up). Run through the console script, as the tester did."""

import numpy as np
import oracles
from test_cli import both as flat
from test_cli import run, student

from gradcheck import _adapters as AD

HEAD = """
import numpy as np
R = np.random.default_rng(0)
"""

NAMES = HEAD + """
class WeightsGradients:
    def __init__(self): self.weights = {"W": R.standard_normal((5, 3))}; self.gradients = {}
    def forward(self, X): self.X = X; return X @ self.weights["W"]
    def backward(self, dY): self.gradients["W"] = HALF * self.X.T @ dY; return dY @ self.weights["W"].T
class ParamGradSingular:
    def __init__(self): self.param = {"W": R.standard_normal((5, 3))}; self.grad = {}
    def forward(self, X): self.X = X; return X @ self.param["W"]
    def backward(self, dY): self.grad["W"] = HALF * self.X.T @ dY; return dY @ self.param["W"].T
class ListOfWeights:
    def __init__(self): self.Ws = [R.standard_normal((5, 4)), R.standard_normal((4, 3))]
    def forward(self, X):
        self.X = X; self.H = np.tanh(X @ self.Ws[0]); return self.H @ self.Ws[1]
    def backward(self, dY):
        dH = dY @ self.Ws[1].T; dZ = dH * (1 - self.H ** 2)
        self.dWs = [self.X.T @ dZ, HALF * self.H.T @ dY]
        return dZ @ self.Ws[0].T
class TupleNoGrads:
    def __init__(self): self.Ws = (R.standard_normal((5, 3)),)
    def forward(self, X): return X @ self.Ws[0]
    def backward(self, dY): return dY @ self.Ws[0].T
"""

NESTED = HEAD + """
class Lin:
    def __init__(self, i, o, half=1.0):
        self.W = R.standard_normal((i, o)); self.b = R.standard_normal(o); self.half = half
    def forward(self, X): self.X = X; return X @ self.W + self.b
    def backward(self, dY):
        self.dW = self.half * self.X.T @ dY; self.db = dY.sum(0); return dY @ self.W.T
class Nested:
    def __init__(self): self.stages = [[Lin(5, 4)], {"head": Lin(4, 3, HALF)}]
    def forward(self, X): return self.stages[1]["head"].forward(self.stages[0][0].forward(X))
    def backward(self, dY): return self.stages[0][0].backward(self.stages[1]["head"].backward(dY))
class Deeper:
    def __init__(self): self.net = {"stages": [[Lin(5, 4)], [Lin(4, 3, HALF)]]}
    def forward(self, X): return self.net["stages"][1][0].forward(self.net["stages"][0][0].forward(X))
    def backward(self, dY): return self.net["stages"][0][0].backward(self.net["stages"][1][0].backward(dY))
class Wrapper:
    def __init__(self):
        class Box: pass
        self.box = Box(); self.box.layer = Lin(5, 3, HALF)
    def forward(self, X): return self.box.layer.forward(X)
    def backward(self, dY): return self.box.layer.backward(dY)
"""

BUFFERS = HEAD + """
class MaskedScores:
    def __init__(self, T=3, D=4):
        self.Wq = R.standard_normal((D, D)) * 0.5; self.causal = np.triu(np.full((T, T), -1e9), 1)
    def forward(self, X):
        self.X = X; self.Q = X @ self.Wq; return self.Q @ X.transpose(0, 2, 1) + self.causal
    def backward(self, dY):
        X = self.X; dQ = dY @ X
        self.dWq = HALF * np.einsum("btd,bte->de", X, dQ)
        return dQ @ self.Wq.T + dY.transpose(0, 2, 1) @ self.Q
class PosEnc:
    def __init__(self, T=5, D=4):
        pos = np.arange(T)[:, None]; i = np.arange(D)[None, :]
        self._pe = np.sin(pos / 10 ** (i / D)); self.scale = np.ones(D) + 0.1 * R.standard_normal(D)
    def forward(self, X): self.X = X; return X * self.scale + self._pe
    def backward(self, dY): self.dscale = HALF * (dY * self.X).sum((0, 1)); return dY * self.scale
"""

CS = """
import numpy as np
def affine_forward(x, w, b): return x @ w + b, (x, w)
def affine_backward(dout, cache):
    x, w = cache; return dout @ w.T, x.T @ dout
"""


def _check(tmp_path, src, cls, shape, half):
    f = student(tmp_path, src.replace("HALF", repr(half)), f"{cls.lower()}.py")
    return run("check", f"{f}::{cls}", "--input-shape", shape)


def test_dict_weights_found_and_checked(tmp_path):
    for cls, shown, grad in [("WeightsGradients", "weights['W']/gradients['W']", "dweights['W']"),
                             ("ParamGradSingular", "param['W']/grad['W']", "dparam['W']")]:
        bad = _check(tmp_path, NAMES, cls, "4,5", 0.5)
        out = flat(bad)
        assert bad.returncode == 1, out
        assert f"protocol: attribute style ({shown})" in out and "no parameters" not in out
        assert f"FAIL: {cls}: gradient mismatch in {grad}." in out
        good = _check(tmp_path, NAMES, cls, "4,5", 1.0)
        assert good.returncode == 0, flat(good)
        assert f"PASS: {cls}: every gradient (dX, {grad}) matches" in flat(good)


def test_list_weights_found_and_checked(tmp_path):
    bad = _check(tmp_path, NAMES, "ListOfWeights", "4,5", 0.5)
    out = flat(bad)
    assert bad.returncode == 1, out
    assert "protocol: attribute style (Ws[0]/dWs[0], Ws[1]/dWs[1])" in out
    assert "FAIL: ListOfWeights: gradient mismatch in dWs[1]." in out and "dWs[0]" not in out.split("FAIL:")[-1]
    good = _check(tmp_path, NAMES, "ListOfWeights", "4,5", 1.0)
    assert good.returncode == 0 and "every gradient (dX, dWs[0], dWs[1]) matches" in flat(good)


def test_container_array_without_gradient_is_named(tmp_path):
    p = _check(tmp_path, NAMES, "TupleNoGrads", "4,5", 1.0)
    out = flat(p)
    assert "protocol: array attributes without gradients (Ws[0])" in out and "no parameters" not in out
    assert p.returncode == 0, out


def test_list_parameter_gradient_against_central_differences():
    ns = {}
    exec(NAMES.replace("HALF", "1.0"), ns)  # noqa: S102 - the test's own layer source
    obj = ns["ListOfWeights"]()
    X = np.random.default_rng(1).standard_normal((4, 5))
    layer, info = AD.adapt(obj, [X])
    assert list(layer.params) == ["Ws[0]", "Ws[1]"] and info["protocol"] == "attribute"
    G = np.random.default_rng(2).standard_normal((4, 3))
    layer.forward(X)
    layer.backward(G)
    num = oracles.central_in_place(lambda: np.sum(obj.forward(X) * G), obj.Ws[1], h=1e-6)
    np.testing.assert_allclose(layer.grads["Ws[1]"], num, rtol=1e-6, atol=1e-8)


def test_nested_sublayers_found(tmp_path):
    for cls, name, header in [("Nested", "stages.1.head.W", "stages.0.0 (Lin: stages.0.0.W, stages.0.0.b, "
                               "attributes), stages.1.head (Lin: stages.1.head.W, stages.1.head.b, attributes)"),
                              ("Wrapper", "box.layer.W", "box.layer (Lin: box.layer.W, box.layer.b, attributes)")]:
        bad = _check(tmp_path, NESTED, cls, "4,5", 0.5)
        out = flat(bad)
        assert bad.returncode == 1, out
        assert f"protocol: a layer made of sub-layers: {header}" in out
        assert f"FAIL: {cls}: gradient mismatch in d{name}." in out
        good = _check(tmp_path, NESTED, cls, "4,5", 1.0)
        assert good.returncode == 0, flat(good)


def test_constant_buffer_warns_not_fails(tmp_path):
    for cls, shape, buf, grads in [("MaskedScores", "2,3,4", "causal", "dX, dWq"),
                                   ("PosEnc", "2,5,4", "_pe", "dX, dscale")]:
        good = _check(tmp_path, BUFFERS, cls, shape, 1.0)
        out = flat(good)
        assert good.returncode == 0, out
        assert (f"WARNING: forward uses {buf} but backward sets no gradient for it (d{buf}): read as a constant "
                "buffer") in out
        assert f"PASS: {cls}: every gradient ({grads}) matches" in out and f"({buf}: no gradient checked" in out
        bad = _check(tmp_path, BUFFERS, cls, shape, 0.5)
        assert bad.returncode == 1 and f"gradient mismatch in {grads.split(', ')[1]}." in flat(bad)


def test_split_buffers_rule():
    weights, buffers = AD._split_buffers(["b", "bq", "W_hh", "l1.b", "Ws[1]", "h0", "causal", "pe", "_pe", "mask",
                                           "running_mean", "l1.mask"])
    assert weights == ["b", "bq", "W_hh", "l1.b", "Ws[1]", "h0"]
    assert buffers == ["causal", "pe", "_pe", "mask", "running_mean", "l1.mask"]


def test_cs231n_backward_missing_db_is_a_wrong_result(tmp_path):
    f = student(tmp_path, CS, "cs.py")
    p = run("check", f"{f}::affine", "--input-shape", "4,5;5,3;3")
    out = flat(p)
    assert p.returncode == 1, out
    assert "expected a tuple of 3 gradients (dx, dw, db), one per input of forward, in the same order: db is " \
           "missing." in out
    assert "AdapterError" not in out


def test_probe_restores_list_weights_changed_in_place():
    ns = {}
    exec(HEAD + """
class StepInBackward:
    def __init__(self): self.Ws = [R.standard_normal((5, 3))]; self.cache = []
    def forward(self, X): self.cache.append(X); return X @ self.Ws[0]
    def backward(self, dY):
        X = self.cache.pop(); self.dWs = [X.T @ dY]; self.Ws[0] -= 0.1 * self.dWs[0]; return dY @ self.Ws[0].T
""", ns)  # noqa: S102 - the test's own layer source
    obj = ns["StepInBackward"]()
    W0 = obj.Ws[0].copy()
    _, info = AD.adapt(obj, [np.ones((4, 5))])
    assert info["text"].startswith("attribute style (Ws[0]/dWs[0])")
    np.testing.assert_array_equal(obj.Ws[0], W0)  # the probes' forward and backward left no trace
    assert not hasattr(obj, "dWs")


def test_a_sub_layer_three_containers_deep_is_found_and_checked(tmp_path):
    # the verifying tester's variation of T19: self.net = {"stages": [[A], [Bugged]]} passed silently
    bad = _check(tmp_path, NESTED, "Deeper", "4,5", 0.5)
    out = flat(bad)
    assert bad.returncode == 1, out
    assert "net.stages.1.0 (Lin: net.stages.1.0.W" in out and "no parameters" not in out
    assert "FAIL: Deeper: gradient mismatch in dnet.stages.1.0.W." in out
    good = _check(tmp_path, NESTED, "Deeper", "4,5", 1.0)
    assert good.returncode == 0, flat(good)
