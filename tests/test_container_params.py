"""Weights in containers and deeper sub-layers, constant buffers, a CS231n backward that forgets a gradient
(tester 7's T19, T18 and the T3 follow-up). The CS231n case runs the console script, as the tester did; the others
its ``gradcheck.cli.main`` in this process (``test_cli.run_here``: the same parser, checks and report, the layer in
its sandbox process), which spares the start of a Python per check."""

import numpy as np
import oracles
import pytest
from test_cli import both as flat
from test_cli import run, run_here, student

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
        self.Wq = R.standard_normal((D, D)) * 0.5; self._causal = np.triu(np.full((T, T), -1e9), 1)
    def forward(self, X):
        self.X = X; self.Q = X @ self.Wq; return self.Q @ X.transpose(0, 2, 1) + self._causal
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
    return run_here("check", f"{f}::{cls}", "--input-shape", shape)


def _bad_and_good(tmp_path, src, cls, shape="4,5"):
    """``(output, exit code)`` of the check of ``cls`` with a gradient halved (HALF 0.5), then with it right."""
    return [(flat(p), p.returncode) for p in (_check(tmp_path, src, cls, shape, h) for h in (0.5, 1.0))]


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


def _adapted_against_central_differences(src, cls, name, held):
    """Adapt ``cls`` of ``src`` (probe input X (4, 5)); its gradient of parameter ``name`` against central
    differences of L = sum(Y * G) over ``held(obj)``, the array itself; returns the adapted layer and info."""
    ns = {"__name__": "student"}  # a student's module: its classes are not builtins
    exec(src.replace("HALF", "1.0"), ns)  # noqa: S102 - the test's own layer source
    obj = ns[cls]()
    X = np.random.default_rng(1).standard_normal((4, 5))
    layer, info = AD.adapt(obj, [X])
    G = np.random.default_rng(2).standard_normal((4, 3))
    layer.forward(X)
    layer.backward(G)
    num = oracles.central_in_place(lambda: np.sum(obj.forward(X) * G), held(obj), h=1e-6)
    np.testing.assert_allclose(layer.grads[name], num, rtol=1e-6, atol=1e-8)
    return layer, info


def test_list_parameter_gradient_against_central_differences():
    layer, info = _adapted_against_central_differences(NAMES, "ListOfWeights", "Ws[1]", lambda o: o.Ws[1])
    assert list(layer.params) == ["Ws[0]", "Ws[1]"] and info["protocol"] == "attribute"


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
    for cls, shape, buf, grads, dbuf in [("MaskedScores", "2,3,4", "_causal", "dX, dWq", "_dcausal"),
                                         ("PosEnc", "2,5,4", "_pe", "dX, dscale", "_dpe")]:  # as students write it
        good = _check(tmp_path, BUFFERS, cls, shape, 1.0)
        out = flat(good)
        assert good.returncode == 0, out
        assert (f"WARNING: forward uses {buf} but backward sets no gradient for it ({dbuf}): read as a constant "
                "buffer") in out
        assert f"PASS: {cls}: every gradient ({grads}) matches" in out and f"({buf}: no gradient checked" in out
        bad = _check(tmp_path, BUFFERS, cls, shape, 0.5)
        assert bad.returncode == 1 and f"gradient mismatch in {grads.split(', ')[1]}." in flat(bad)


def test_split_buffers_rule():
    """Tester 15 H3: only a private name says "a constant" (``causal``, ``pe``, ``mask``, ``c``, ``T`` may be
    weights whose gradients backward forgot: :func:`_buffers_by_behaviour` and ``--constants`` tell them)."""
    weights, buffers = AD._split_buffers(["b", "bq", "W_hh", "l1.b", "Ws[1]", "h0", "p['W']", "causal", "pe", "_pe",
                                           "mask", "running_mean", "l1.mask", "stats['running_mean']", "_c['W']",
                                           "c", "T", "l1._T"])
    assert weights == ["b", "bq", "W_hh", "l1.b", "Ws[1]", "h0", "p['W']", "causal", "pe", "mask", "running_mean",
                       "l1.mask", "stats['running_mean']", "c", "T"]
    assert buffers == ["_pe", "_c['W']", "l1._T"]


def test_cs231n_backward_missing_db_is_a_wrong_result(tmp_path):
    f = student(tmp_path, CS, "cs.py")
    p = run("check", f"{f}::affine", "--input-shape", "4,5;5,3;3")  # the console script; the others in this process
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
    # a literal rate (0.1) cannot be set: not checkable as written (tester13 H1/H2), naming the weight it moves
    with pytest.raises(AD.AdapterError, match=r"updates the weights itself \(Ws\[0\] moved\)"):
        AD.adapt(obj, [np.ones((4, 5))])
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


# ----------------------------------------------------------------- session 8: pairing by structure, any depth

PLACED = HEAD + """
class ParallelDicts:
    def __init__(self): self.p = {"W": R.standard_normal((5, 3)), "b": R.standard_normal(3)}; self.g = {}
    def forward(self, X): self.X = X; return X @ self.p["W"] + self.p["b"]
    def backward(self, dY):
        self.g["W"] = HALF * self.X.T @ dY; self.g["b"] = dY.sum(0); return dY @ self.p["W"].T
class KeyedByName:
    def __init__(self): self.W = R.standard_normal((5, 3)); self.g = {}
    def forward(self, X): self.X = X; return X @ self.W
    def backward(self, dY): self.g["W"] = HALF * self.X.T @ dY; return dY @ self.W.T
class WeightGrads:
    def __init__(self): self.weights = [R.standard_normal((5, 4)), R.standard_normal((4, 3))]
    def forward(self, X): self.X = X; self.H = X @ self.weights[0]; return self.H @ self.weights[1]
    def backward(self, dY):
        self.weight_grads = [self.X.T @ (dY @ self.weights[1].T), HALF * self.H.T @ dY]
        return dY @ self.weights[1].T @ self.weights[0].T
class TwoCandidates:
    def __init__(self): self.W = R.standard_normal((5, 3))
    def forward(self, X): self.X = X; return X @ self.W
    def backward(self, dY): self.kW = HALF * self.X.T @ dY; self.hW = self.X.T @ dY; return dY @ self.W.T
class TwoParallel:
    def __init__(self):
        self.p = {"W": R.standard_normal((5, 3))}; self.b = R.standard_normal(3); self.g1 = {}; self.g2 = {}
    def forward(self, X): self.X = X; return X @ self.p["W"] + self.b
    def backward(self, dY):
        self.g1["W"] = HALF * self.X.T @ dY; self.g2["W"] = self.X.T @ dY; self.db = dY.sum(0)
        return dY @ self.p["W"].T
"""

DEEP = NESTED + """
class Seq:
    def __init__(self, layers): self.layers = layers; self.me = [self, [self.layers]]  # cycles end the walk
    def forward(self, X):
        for l in self.layers: X = l.forward(X)
        return X
    def backward(self, dY):
        for l in reversed(self.layers): dY = l.backward(dY)
        return dY
class FourDeep:
    def __init__(self): self.net = {"a": {"stages": [[Lin(5, 4)], [Lin(4, 3, HALF)]]}}
    def forward(self, X): return self.net["a"]["stages"][1][0].forward(self.net["a"]["stages"][0][0].forward(X))
    def backward(self, dY): return self.net["a"]["stages"][0][0].backward(self.net["a"]["stages"][1][0].backward(dY))
class FourSeqs:
    def __init__(self): self.m = Seq([Seq([Seq([Seq([Lin(5, 4)]), Lin(4, 3, HALF)])])])
    def forward(self, X): return self.m.forward(X)
    def backward(self, dY): return self.m.backward(dY)
"""


def test_gradients_found_by_their_place_in_a_parallel_container(tmp_path):
    # T19: self.p = {'W'} with self.g = {'W'} passed silently with a wrong g['W'] (only dX was checked)
    for cls, shown, grad in [("ParallelDicts", "p['W']/g['W'], p['b']/g['b']", "dp['W']"),
                             ("KeyedByName", "W/g['W']", "dW"),
                             ("WeightGrads", "weights[0]/weight_grads[0], weights[1]/weight_grads[1]", "dweights[1]")]:
        (out, rc), (good, good_rc) = _bad_and_good(tmp_path, PLACED, cls)
        assert rc == 1, out
        assert f"protocol: attribute style ({shown})" in out and "found by place and shape, not by name" in out
        assert f"FAIL: {cls}: gradient mismatch in {grad}." in out
        assert good_rc == 0 and f"PASS: {cls}: every gradient" in good, good


def test_a_gradient_found_by_place_against_central_differences():
    layer, _ = _adapted_against_central_differences(PLACED, "ParallelDicts", "p['W']", lambda o: o.p["W"])
    assert layer.pairs == {"p['W']": "g['W']", "p['b']": "g['b']"}


def test_an_ambiguous_gradient_is_named_in_a_warning_never_passed_silently(tmp_path):
    p = _check(tmp_path, PLACED, "TwoCandidates", "4,5", 0.5)
    out = flat(p)
    assert ("WARNING: backward writes kW, hW, shaped like W (5, 3), but gradcheck cannot tell which, if any, is the "
            "gradient of W") in out
    assert p.returncode == 3 and "backward computes no" not in out and "PASS" not in out  # not checked, not FAIL
    assert ("NOT CHECKED as a whole: TwoCandidates: backward writes kW, hW, shaped like W (5, 3), but gradcheck "
            "cannot tell that one of them is W's gradient: name it dW (or grad_W, W_grad)") in out
    p = _check(tmp_path, PLACED, "TwoParallel", "4,5", 1.0)  # b/db checked: p['W'] without a sure gradient fails
    out = flat(p)
    assert "WARNING: backward writes g1['W'], g2['W'], shaped like p['W'] (5, 3)" in out
    assert p.returncode == 3 and ("NOT CHECKED as a whole: TwoParallel: backward writes g1['W'], g2['W'], shaped "
                                  "like p['W']") in out


UNPAIRED = HEAD + """
class Proj:
    def __init__(self): self.W = R.standard_normal((5, 3))
    def forward(self, X): self.X = X; return X @ self.W
    def backward(self, dY): self.g = self.X.T @ dY * HALF; return dY @ self.W.T
class Update(Proj):
    def backward(self, dY): self.update = self.X.T @ dY * HALF; return dY @ self.W.T
class Two:
    def __init__(self): self.A = R.standard_normal((5, 5)) * .5; self.B = R.standard_normal((5, 5)) * .5
    def forward(self, X): self.X = X; self.H = np.tanh(X @ self.A); return self.H @ self.B
    def backward(self, dY):
        self.grad_second = self.H.T @ dY * HALF; dZ = dY @ self.B.T * (1 - self.H ** 2)
        self.grad_first = self.X.T @ dZ; return dZ @ self.A.T
class TwoDict(Two):
    def backward(self, dY):
        self.gradients = {"second": self.H.T @ dY * HALF}; dZ = dY @ self.B.T * (1 - self.H ** 2)
        self.gradients["first"] = self.X.T @ dZ; return dZ @ self.A.T
"""


def test_an_array_of_a_weights_shape_backward_writes_unpaired_never_passes(tmp_path):
    # V3: self.g = X.T @ dY * 2 beside W passed (only dX checked); so did A, B with grad_first, grad_second
    for cls, arrays, weights in [("Proj", "g", ["W (5, 3)"]), ("Update", "update", ["W (5, 3)"]),
                                 ("Two", "grad_second, grad_first", ["A (5, 5)", "B (5, 5)"]),
                                 ("TwoDict", "gradients['second'], gradients['first']", ["A (5, 5)", "B (5, 5)"])]:
        for out, rc in _bad_and_good(tmp_path, UNPAIRED, cls, "4,5"):
            assert rc == 3 and "PASS" not in out and "backward computes no" not in out, out  # not checked (tester22s)
            for w in weights:
                name = w.split(" ")[0]
                assert (f"NOT CHECKED as a whole: {cls}: backward writes {arrays}, shaped like {w}, but gradcheck "
                        f"cannot tell that {'it is' if ',' not in arrays else 'one of them is'} {name}'s gradient: "
                        f"name it d{name} (or grad_{name}, {name}_grad)") in out, out


LOOSE = HEAD + """
class Linear:
    def __init__(self): self.W = R.standard_normal((5, 3)); self.b = R.standard_normal(3)
    def forward(self, X): self.X = X; return X @ self.W + self.b
    def backward(self, dY): self.NAME = self.X.T @ dY * HALF; self.db = dY.sum(0); return dY @ self.W.T
"""


def test_a_gradient_named_loosely_pairs_when_alone_of_its_shape(tmp_path):
    # V9a: self.dw, self.gW, self.W_g beside W: a correct layer FAILed ("sets no gradient for W")
    for name in ("dw", "gW", "W_g", "dL_dW", "gradw"):
        (out, rc), (good, good_rc) = _bad_and_good(tmp_path, LOOSE.replace("NAME", name), "Linear")
        shown = "dw" if name == "dw" else "dW"  # (self.dw is reported by its own name: fixn27)
        assert rc == 1 and f"FAIL: Linear: gradient mismatch in {shown}." in out, out
        assert f"W/{name}" in good and good_rc == 0 and f"PASS: Linear: every gradient (dX, {shown}, db) match" in good, good


def test_sub_layers_four_containers_deep_are_found_and_checked(tmp_path):
    for cls, bad_name in [("FourDeep", "dnet.a.stages.1.0.W"), ("FourSeqs", "dm.layers.0.layers.0.layers.1.W")]:
        (out, rc), (good, good_rc) = _bad_and_good(tmp_path, DEEP, cls)
        assert rc == 1 and "no parameters)" not in out.split("mode:")[0].split("(Lin")[-1], out
        assert f"FAIL: {cls}: gradient mismatch in {bad_name}." in out
        assert good_rc == 0, good


def test_the_walks_go_to_any_depth_and_end_on_cycles():
    ns = {}
    exec(DEEP.replace("HALF", "1.0"), ns)  # noqa: S102 - the test's own layer source
    obj = ns["FourSeqs"]()
    names = [n for n, _ in AD.sublayers(obj)]
    assert names == ["m", "m.layers.0", "m.layers.0.layers.0", "m.layers.0.layers.0.layers.0",
                     "m.layers.0.layers.0.layers.0.layers.0", "m.layers.0.layers.0.layers.1"]
    deep = [[[[[np.ones(3)]]]]]
    deep[0][0].append(deep)  # a list that holds itself
    holder = type("Holder", (), {})()
    holder.ws, holder.rng = {"a": deep}, {"x": [[[[np.random.default_rng(3)]]]]}
    assert list(AD._arrays(holder)) == ["ws['a'][0][0][0][0][0]"]
    assert len(AD.generators(holder)) == 1


SUBBUFFERS = HEAD + """
class Lin:
    def __init__(self, i, o, half=1.0):
        self.params = {"W": R.standard_normal((i, o)), "b": R.standard_normal(o)}; self.grads = {}; self.half = half
    def forward(self, X, training=False): self.X = X; return X @ self.params["W"] + self.params["b"]
    def backward(self, dY):
        self.grads["W"] = self.half * self.X.T @ dY; self.grads["b"] = dY.sum(0); return dY @ self.params["W"].T
class BN:
    def __init__(self, d):
        self.params = {"gamma": np.ones(d), "beta": np.zeros(d)}; self.grads = {}
        self.running_mean = np.zeros(d); self.running_var = np.ones(d)
    def forward(self, X, training=False):
        if training:
            mu, var = X.mean(0), X.var(0)
            self.running_mean = 0.9 * self.running_mean + 0.1 * mu; self.running_var = 0.9 * self.running_var + 0.1 * var
        else:
            mu, var = self.running_mean, self.running_var
        self.std = np.sqrt(var + 1e-5); self.xhat = (X - mu) / self.std; self.training = training
        return self.params["gamma"] * self.xhat + self.params["beta"]
    def backward(self, dY):
        self.grads["gamma"] = (dY * self.xhat).sum(0); self.grads["beta"] = dY.sum(0)
        d = dY * self.params["gamma"]
        if not self.training:
            return d / self.std
        return (len(dY) * d - d.sum(0) - self.xhat * (d * self.xhat).sum(0)) / (len(dY) * self.std)
class FixedMask:
    def __init__(self): self.params = {}; self.grads = {}; self._mask = (R.random((4, 5)) > 0.3) / 0.7
    def forward(self, X, training=False): return X * self._mask
    def backward(self, dY): return dY * self._mask
class Pair:
    def __init__(self, first): self.layers = [first, Lin(5, 3, HALF)]
    def forward(self, X, training=False):
        for l in self.layers: X = l.forward(X, training=training)
        return X
    def backward(self, dY):
        for l in reversed(self.layers): dY = l.backward(dY)
        return dY
class BNPair(Pair):
    def __init__(self): super().__init__(BN(5))
class MaskPair(Pair):
    def __init__(self): super().__init__(FixedMask())
class Outer:
    def __init__(self): self.blocks = {"a": [[BNPair()]]}
    def forward(self, X, training=False): return self.blocks["a"][0][0].forward(X, training=training)
    def backward(self, dY): return self.blocks["a"][0][0].backward(dY)
"""


def test_buffers_of_sub_layers_warn_with_their_path(tmp_path):
    # T18: the buffer warning looked at the top layer's arrays and at training mode alone
    for cls, bufs in [("BNPair", "layers.0.running_mean, layers.0.running_var"), ("MaskPair", "layers.0._mask"),  # private: a constant (tester15 H3)
                      ("Outer", "blocks.a.0.0.layers.0.running_mean, blocks.a.0.0.layers.0.running_var")]:
        (bad, rc), (out, good_rc) = _bad_and_good(tmp_path, SUBBUFFERS, cls)
        assert good_rc == 0, out
        assert f"WARNING: forward uses {bufs} but backward sets no gradient for" in out
        assert f"({bufs}: no gradient checked, see above)" in out
        assert rc == 1 and "gradient mismatch in d" in bad and ".W." in bad


RANDOM = HEAD + """
import random
class NumpyGlobal:
    def __init__(self): self.W = R.standard_normal((5, 3))
    def forward(self, X):
        self.X = X; self.mask = np.random.rand(*X.shape) > 0.5; return (X * self.mask) @ self.W
    def backward(self, dY): self.dW = HALF * (self.X * self.mask).T @ dY; return (dY @ self.W.T) * self.mask
class PythonRandom:
    def __init__(self): self.W = R.standard_normal((5, 3))
    def forward(self, X):
        self.X = X; self.mask = np.array([[random.random() > 0.5 for _ in row] for row in X])
        return (X * self.mask) @ self.W
    def backward(self, dY): self.dW = HALF * (self.X * self.mask).T @ dY; return (dY @ self.W.T) * self.mask
class NondetForward:
    def __init__(self): self.W = R.standard_normal((5, 3))
    def forward(self, X):
        self.X = X; self.mask = np.random.default_rng().random(X.shape) > 0.5; return (X * self.mask) @ self.W
    def backward(self, dY): self.dW = HALF * (self.X * self.mask).T @ dY; return (dY @ self.W.T) * self.mask
"""


def test_weights_of_a_forward_drawing_from_global_generators_are_checked(tmp_path):
    # np.random.rand in forward: the probe saw two outputs, found no weights, and only dX was checked (a PASS
    # with dW wrong); Python's random module was not rewound at all (a non-deterministic FAIL)
    for cls in ("NumpyGlobal", "PythonRandom"):
        (out, rc), (good, good_rc) = _bad_and_good(tmp_path, RANDOM, cls)
        assert rc == 1 and "protocol: attribute style (W/dW)" in out, out
        assert f"FAIL: {cls}: gradient mismatch in dW." in out
        assert good_rc == 0, good
        assert ("its random generator (numpy's global generator and Python's random module's) was rewound before "
                "every forward") in good


def test_an_unrewindable_forward_says_so_in_its_protocol_line(tmp_path):
    p = _check(tmp_path, RANDOM, "NondetForward", "4,5", 1.0)
    out = flat(p)
    assert p.returncode == 3 and "no parameters" not in out, out  # not checkable (tester9 W15), not wrong
    assert ("protocol: attribute style (W/dW) (found without measuring which arrays forward uses: forward gave two "
            "different outputs for the same input") in out
    assert "gradient mismatch" not in out and "the forward is non-deterministic" in out


# ----------------------------------------------------------------- session 8 (tester 8): params lists, private names

LISTS = HEAD + """
class ParamsList:
    def __init__(self): self.params = [R.standard_normal((5, 3)), R.standard_normal(3)]; self.grads = [None, None]
    def forward(self, X, training=False): W, b = self.params; self.X = X; return X @ W + b
    def backward(self, dY):
        self.grads[0] = HALF * self.X.T @ dY; self.grads[1] = dY.sum(0); return dY @ self.params[0].T
class ParamsTuple:
    def __init__(self): self.params = (R.standard_normal((5, 3)), R.standard_normal(3))
    def forward(self, X, training=False): self.X = X; return X @ self.params[0] + self.params[1]
    def backward(self, dY):
        self.grads = (HALF * self.X.T @ dY, dY.sum(0)); return dY @ self.params[0].T
class Private:
    def __init__(self): self._W = R.standard_normal((5, 3)); self._b = R.standard_normal(3)
    def forward(self, X, training=False): self._X = X; return X @ self._W + self._b
    def backward(self, dY): self._dW = HALF * self._X.T @ dY; self._db = dY.sum(0); return dY @ self._W.T
"""


def test_params_and_grads_lists_are_paired_item_for_item(tmp_path):
    # tester 8's V1: self.params = [W, b] with self.grads = [dW, db] read as "no parameters" and PASS (dX only)
    for cls in ("ParamsList", "ParamsTuple"):
        (out, rc), (good, good_rc) = _bad_and_good(tmp_path, LISTS, cls)
        assert rc == 1, out
        assert "protocol: attribute style (params[0]/grads[0], params[1]/grads[1])" in out and "no parameters" not in out
        assert f"FAIL: {cls}: gradient mismatch in dparams[0]." in out
        assert good_rc == 0 and f"PASS: {cls}: every gradient (dX, dparams[0], dparams[1]) matches" in good, good
    layer, _ = _adapted_against_central_differences(LISTS, "ParamsList", "params[0]", lambda o: o.params[0])
    assert layer.pairs == {"params[0]": "grads[0]", "params[1]": "grads[1]"}


def test_private_weights_pair_with_private_gradients(tmp_path):
    # tester 8's V4: self._W with self._dW read as "array attributes without gradients (_W, _b)" and PASS
    (out, rc), (good, good_rc) = _bad_and_good(tmp_path, LISTS, "Private")
    assert rc == 1, out
    assert "protocol: attribute style (_W/_dW, _b/_db)" in out and "FAIL: Private: gradient mismatch in _dW." in out
    assert good_rc == 0 and "PASS: Private: every gradient (dX, _dW, _db) matches" in good, good
    assert "d_W" not in out + good, out + good  # tester9 W8: the table named the student's _dW "d_W"
    assert "diagnosis: _dW is 0.5 times the correct gradient" in out, out  # the signature reads _dW back as _W
    layer, _ = _adapted_against_central_differences(LISTS, "Private", "_W", lambda o: o._W)
    assert {"_dW", "_grad_W", "_W_grad"} <= set(AD._grad_candidates("_W"))


HELD = HEAD + """
from types import SimpleNamespace
class Parameter:
    def __init__(self, data): self.data = data; self.grad = np.zeros_like(data)
class TorchLike:
    def __init__(self): self.weight = Parameter(R.standard_normal((3, 5))); self.bias = Parameter(R.standard_normal(3))
    def forward(self, X, training=False): self.X = X; return X @ self.weight.data.T + self.bias.data
    def backward(self, dY):
        self.weight.grad = HALF * dY.T @ self.X; self.bias.grad = dY.sum(0); return dY @ self.weight.data
class Namespaces:
    def __init__(self): self.p = SimpleNamespace(W=R.standard_normal((5, 3)), b=R.standard_normal(3))
    def forward(self, X, training=False): self.X = X; return X @ self.p.W + self.p.b
    def backward(self, dY):
        self.g = SimpleNamespace(W=HALF * self.X.T @ dY, b=dY.sum(0)); return dY @ self.p.W.T
"""


def test_weights_held_by_plain_objects_are_found_and_checked(tmp_path):
    # tester 8's V2: self.weight = Parameter(W) (.data/.grad) and self.p.W with self.g.W read as "no parameters"
    # a Parameter's weight.data (with weight.grad) is named as PyTorch's named_parameters() names it: weight
    for cls, bad_name, grads in [("TorchLike", "dweight", "dX, dweight, dbias"),
                                 ("Namespaces", "dp.W", "dX, dp.W, dp.b")]:
        (out, rc), (good, good_rc) = _bad_and_good(tmp_path, HELD, cls)
        assert rc == 1, out
        assert "protocol: weights held by plain objects" in out and "no parameters" not in out
        assert f"FAIL: {cls}: gradient mismatch in {bad_name}." in out
        assert good_rc == 0 and f"PASS: {cls}: every gradient ({grads}) matches" in good, good
    layer, _ = _adapted_against_central_differences(HELD, "TorchLike", "weight", lambda o: o.weight.data)
    assert layer.pairs == {"weight": "grad", "bias": "grad"}
    layer, _ = _adapted_against_central_differences(HELD, "Namespaces", "p.W", lambda o: o.p.W)
    assert layer.pairs == {"p.W": "g.W", "p.b": "g.b"}


PARAMS_GRADIENTS = HEAD + """
class Linear:
    def __init__(self): self.params = {"W": R.standard_normal((5, 3)), "b": R.standard_normal(3)}
    def forward(self, X): self.X = X; return X @ self.params["W"] + self.params["b"]
    def backward(self, dY):
        self.gradients = {"W": HALF * self.X.T @ dY, "b": dY.sum(0)}; return dY @ self.params["W"].T
"""


def test_params_with_a_gradients_dict_are_checked(tmp_path):
    # V9b: self.params with self.gradients (no self.grads) gave "Linear.grads has no key 'W'" for a correct layer
    (out, rc), (good, good_rc) = _bad_and_good(tmp_path, PARAMS_GRADIENTS, "Linear")
    assert rc == 1 and "protocol: manualprop (params/gradients dicts)" in out, out
    assert "FAIL: Linear: gradient mismatch in dW." in out and "has no key" not in out, out
    assert good_rc == 0 and "PASS: Linear: every gradient (dX, dW, db) match" in good, good


@pytest.mark.parametrize("key, name", [("W", "dW"), ("_W", "_dW"), ("__W", "__dW"), ("layers.0._W", "dlayers.0._W"),
                                       ("X", "dX"), ("_", "d_"), ("dW", "ddW")])
def test_a_gradient_is_named_as_students_write_it_and_read_back(key, name):
    from gradcheck._validation import grad_key, grad_name

    assert grad_name(key) == name and grad_key(name) == key


NABLA = HEAD + """
class NablaW:
    def __init__(self): self.W = R.standard_normal((4, 3)); self.b = np.array([0.1, 0.0, -0.1])
    def forward(self, X): self.X = X; self.Y = np.tanh(X @ self.W + self.b); return self.Y
    def backward(self, dY):
        dZ = dY * (1 - self.Y ** 2)
        self.nabla_W = HALF * self.X.T @ dZ; self.nabla_b = dZ.sum(0); return dZ @ self.W.T
"""


def test_nielsens_nabla_names_are_gradient_names(tmp_path):
    # tester22s: nabla_W, nabla_b (Nielsen's book) were 'cannot tell that it is W's gradient', exit 1 FAIL
    (bad, rc_bad), (good, rc_good) = _bad_and_good(tmp_path, NABLA, "NablaW", "5,4")
    assert rc_good == 0 and "PASS: NablaW: every gradient (dX, dW, db) matches" in good, good
    assert rc_bad == 1 and "FAIL: NablaW: gradient mismatch in dW." in bad and "cannot tell" not in bad, bad
