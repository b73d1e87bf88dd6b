"""One walk of a student's objects (gradcheck._adapters.walk), at any depth: a weight held by a plain object
paired with its gradient (``block.p.W`` with ``block.g.W``, ``layers.0.params.W`` with ``layers.0.grads.W``), a
dropout's ``fix_mask`` and a cache four objects or containers deep. Each planted bug PASSed (or was missed)
when these walks stopped at one object or at depth 3; each correct twin at the same depth PASSes."""

import numpy as np
import oracles
from test_cli import both as flat
from test_cli import run, run_here, student

from gradcheck import _adapters as AD

HEAD = """
import numpy as np
from types import SimpleNamespace
R = np.random.default_rng(0)
class Box:
    pass
"""

HELD = HEAD + """
class Block:  # a layer whose weights are plain objects' arrays: self.p.W with self.g.W
    def __init__(self):
        self.p = SimpleNamespace(W=R.standard_normal((5, 3)), b=R.standard_normal(3))
    def forward(self, X, training=False): self.X = X; return np.tanh(X @ self.p.W + self.p.b)
    def backward(self, dY):
        dZ = dY * (1 - np.tanh(self.X @ self.p.W + self.p.b) ** 2)
        self.g = SimpleNamespace(W=HALF * self.X.T @ dZ, b=dZ.sum(0)); return dZ @ self.p.W.T
class DeepNamespaces:  # net.stages.0.0.p.W with net.stages.0.0.g.W
    def __init__(self): self.net = {"stages": [[Block()]]}
    def forward(self, X, training=False): return self.net["stages"][0][0].forward(X)
    def backward(self, dY): return self.net["stages"][0][0].backward(dY)
class DeepHelpers:  # a.b.block.p.W with a.b.block.g.W: plain objects all the way
    def __init__(self):
        self.a = Box(); self.a.b = Box(); self.a.b.block = Box()
        self.a.b.block.p = SimpleNamespace(W=R.standard_normal((5, 3)))
    def forward(self, X, training=False): self.X = X; return X @ self.a.b.block.p.W
    def backward(self, dY):
        self.a.b.block.g = SimpleNamespace(W=HALF * self.X.T @ dY); return dY @ self.a.b.block.p.W.T
class NsLayer:  # self.params.W with self.grads.W, namespaces rather than dicts
    def __init__(self):
        self.params = SimpleNamespace(W=R.standard_normal((5, 3))); self.grads = SimpleNamespace(W=None)
    def forward(self, X, training=False): self.X = X; return X @ self.params.W
    def backward(self, dY): self.grads.W = HALF * self.X.T @ dY; return dY @ self.params.W.T
class DeepParams:  # model.layers.0.params.W with model.layers.0.grads.W
    def __init__(self): self.model = Box(); self.model.layers = [NsLayer()]
    def forward(self, X, training=False): return self.model.layers[0].forward(X)
    def backward(self, dY): return self.model.layers[0].backward(dY)
"""

MASKS = HEAD + """
class MaskDrop:  # a mask from a generator made anew per call, unless fix_mask(True) holds the last one
    def __init__(self): self.fixed, self.mask = False, None
    def fix_mask(self, on=True): self.fixed = on
    def forward(self, X, training=False):
        if not (self.fixed and self.mask is not None and self.mask.shape == X.shape):
            self.mask = (np.random.default_rng().random(X.shape) > 0.5) / 0.5
        self.training = training
        return X * self.mask if training else X
    def backward(self, dY): return dY * self.mask if self.training else dY
class Lin:
    def __init__(self): self.W = R.standard_normal((5, 3))
    def forward(self, X, training=False): self.X = X; return X @ self.W
    def backward(self, dY): self.dW = HALF * self.X.T @ dY; return dY @ self.W.T
class Stage:
    def __init__(self): self.drop = MaskDrop(); self.lin = Lin()
    def forward(self, X, training=False): return self.lin.forward(self.drop.forward(X, training), training)
    def backward(self, dY): return self.drop.backward(self.lin.backward(dY))
class DeepDropout:  # net.blocks.0.0.drop: a fix_mask four containers deep (the old walk: .layers, 3 deep)
    def __init__(self): self.net = {"blocks": [[Stage()]]}
    def forward(self, X, training=False): return self.net["blocks"][0][0].forward(X, training)
    def backward(self, dY): return self.net["blocks"][0][0].backward(dY)
"""

CACHES = """
import numpy as np
R = np.random.default_rng(0)
class DeepCache:  # forward caches a four containers deep; backward clips it in place (BUG)
    def __init__(self): self.W = R.standard_normal((5, 3))
    def forward(self, X, training=False):
        a = X @ self.W; self.state = {"a": [[{"x": X, "a": a}]]}; return np.maximum(a, 0)
    def backward(self, dY):
        c = self.state["a"][0][0]; a = c["a"]
        if BUG:
            a[a < 0] = 0
        da = dY * (a > 0); self.dW = c["x"].T @ da; return da @ self.W.T
def deep_forward(x, w):
    a = x @ w
    return np.maximum(a, 0), ((((x, w, a),),),)
def deep_backward(dout, cache):
    x, w, a = cache[0][0][0]
    if BUG:
        a[a < 0] = 0
    da = dout * (a > 0)
    return da @ w.T, x.T @ da
"""


def _check(tmp_path, src, target, shape="4,5", through=run_here, **subs):
    for k, v in subs.items():
        src = src.replace(k, repr(v))
    f = student(tmp_path, src, f"{target.lower()}_{'_'.join(map(str, subs.values()))}.py")
    p = through("check", f"{f}::{target}", "--input-shape", shape)
    return flat(p), p.returncode


def test_a_plain_objects_weight_pairs_with_its_gradient_at_any_depth(tmp_path):
    # gradient pairing p.W with g.W looked one object deep: these planted bugs PASSed (W "without gradients",
    # or "no parameters" for layers.0.params.W)
    for cls, names in [("DeepNamespaces", ["net.stages.0.0.p.W", "net.stages.0.0.p.b"]),
                       ("DeepHelpers", ["a.b.block.p.W"]), ("DeepParams", ["model.layers.0.params.W"])]:
        out, rc = _check(tmp_path, HELD, cls, HALF=0.5)
        assert rc == 1 and f"FAIL: {cls}: gradient mismatch in d{names[0]}." in out, out
        good, good_rc = _check(tmp_path, HELD, cls, HALF=1.0)
        grads = ", ".join(["dX"] + [f"d{n}" for n in names])
        assert good_rc == 0 and f"PASS: {cls}: every gradient ({grads}) matches" in good, good


def test_deep_plain_object_gradients_against_central_differences():
    ns = {"__name__": "student"}
    exec(HELD.replace("HALF", "1.0"), ns)  # noqa: S102 - the test's own layer source
    X, G = np.random.default_rng(1).standard_normal((4, 5)), np.random.default_rng(2).standard_normal((4, 3))
    for cls, name, grad, held in [
            ("DeepNamespaces", "net.stages.0.0.p.W", "g.W", lambda o: o.net["stages"][0][0].p.W),
            ("DeepHelpers", "a.b.block.p.W", "g.W", lambda o: o.a.b.block.p.W),
            ("DeepParams", "model.layers.0.params.W", "grads.W", lambda o: o.model.layers[0].params.W)]:
        obj = ns[cls]()
        layer, _ = AD.adapt(obj, [X])
        assert layer.pairs[name] == grad, layer.pairs  # read on the object holding both: block, layers.0
        layer.forward(X)
        layer.backward(G)
        num = oracles.central_in_place(lambda o=obj: np.sum(o.forward(X) * G), held(obj), h=1e-6)
        np.testing.assert_allclose(layer.grads[name], num, rtol=1e-6, atol=1e-8)


def test_a_fix_mask_four_containers_deep_holds_the_mask(tmp_path):
    # _fix_masks walked .layers three deep: the mask was not held, training mode read "random forward" (the
    # planted dW bug unnamed there, the correct layer FAILed)
    out, rc = _check(tmp_path, MASKS, "DeepDropout", through=run, HALF=0.5)  # the console script
    assert rc == 1 and "FAIL: DeepDropout [training]: gradient mismatch in dnet.blocks.0.0.lin.W." in out, out
    assert "fix_mask(True) on MaskDrop" in out and "random forward" not in out
    good, good_rc = _check(tmp_path, MASKS, "DeepDropout", HALF=1.0)
    assert good_rc == 0 and "PASS: DeepDropout: every gradient (dX, dnet.blocks.0.0.lin.W) matches" in good, good
    ns = {"__name__": "student"}
    exec(MASKS.replace("HALF", "1.0"), ns)  # noqa: S102 - the test's own layer source
    obj, X = ns["DeepDropout"](), np.ones((4, 5))
    assert AD.hold_random(obj, "fix_mask") == "MaskDrop"
    obj.forward(X, training=True)
    assert np.array_equal(obj.forward(X, training=True), obj.forward(X, training=True))


def test_a_cache_written_four_containers_deep_is_named(tmp_path):
    # the cache guard walked containers three deep: these in-place writes PASSed unnamed (the values stay right).
    # Session 26: a write into an array forward made (here a = X @ W, clipped in place) is no longer refused (exit 3):
    # each backward follows its own forward, so the verdict stands, and the note names the write.
    for target, shape, where in [("DeepCache", "4,5", "self.state['a'][0][0]['a']"),
                                 ("deep", "4,5;5,3", "cache[0][0][0][2]")]:
        out, rc = _check(tmp_path, CACHES, target, shape, BUG=True)
        assert rc == 0 and f"modified its cache ({where}, element [" in out, out
        assert "an array its forward made (not an input)" in out, out
        assert "gives the same answer here" in out, out  # (a function pair too since fixg27's one backward_twice)
        good, good_rc = _check(tmp_path, CACHES, target, shape, BUG=False)
        assert good_rc == 0 and "PASS" in good, good


def _chain(depth, leaf):
    chain = v = []
    for _ in range(depth):
        v.append([])
        v = v[0]
    v.append(leaf)
    return chain


def test_the_walk_is_bounded_by_objects_not_depth():
    holder = type("Holder", (), {})()
    near, deep, far = (np.random.default_rng(i) for i in range(3))
    holder.near, holder.deep = [[[[[[near]]]]]], _chain(AD.MAX_WALKED // 2, deep)  # deeper than 3, than 64
    holder.far = _chain(3 * AD.MAX_WALKED, far)  # deeper than the recursion limit and than the bound
    walked = AD.walk(holder)
    assert sum(isinstance(v, list) for _, v in walked) == AD.MAX_WALKED  # each object once, at most MAX_WALKED
    assert AD.generators(holder) == [near, deep]  # the far one lies beyond the bound
    holder.far = [holder, holder.near, [holder.deep]]  # a cycle, objects held twice
    assert AD.generators(holder) == [near, deep]
    assert [AD._label(p, dotted=True) for p, v in AD.walk(holder) if v is holder.near] == ["near"]


class _Dicts:  # a layer with its own params dict: listed, not entered
    def __init__(self): self.params, self.grads, self.inner = {"W": np.ones((2, 2))}, {}, [_Attr()]
    def forward(self, X): return X @ self.params["W"]
    def backward(self, dY): return dY @ self.params["W"].T


class _Attr:
    def __init__(self): self.W = np.ones((2, 2))
    def forward(self, X): return X @ self.W
    def backward(self, dY): return dY @ self.W.T


def test_a_layer_held_twice_is_one_sub_layer():
    net = _Attr()
    a = _Dicts()
    net.layers, net.first, net.box = [a, _Attr()], a, type("Box", (), {})()
    net.box.again = net.layers  # the same list again, below a plain object
    assert [n for n, _ in AD.sublayers(net)] == ["layers.0", "layers.1"]  # box holds no weights
