"""Session 24 (fixl24): a diagnosis probe that zeroes a weight must not leak into what is checked next.

Deep Learning from Scratch 2's two-layer net with a real missing 1/N and ``log(y + 1e-7)`` at high confidence was
named "5 times too large" until e48bd23; then "layers[1] (Affine): the weights are all zero (as the constructor left
them)": :func:`gradcheck.diagnose._branch_signature` took the output bias b2 (3,) for a weight matrix (the (1, K) rule
``min(shape) < 2`` let a (K,) one through), zeroed W2 for its probe, and the sandboxed model's last forward carried
that zero W2 to the child; the sub-layer check (``RemoteLayer.sublayer``) then read the child's arrays as they were."""

from types import SimpleNamespace

import numpy as np

from gradcheck.diagnose import _branch_signature
from gradcheck.sandbox import Sandbox

NET = """
import numpy as np
class Affine:
    def __init__(self, W, b):
        self.params = [W, b]; self.grads = [np.zeros_like(W), np.zeros_like(b)]
    def forward(self, x):
        self.x = x; W, b = self.params; return x @ W + b
    def backward(self, dout):
        W, b = self.params
        self.grads[0][...] = self.x.T @ dout; self.grads[1][...] = dout.sum(axis=0)
        return dout @ W.T
class Net:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.layers = [Affine(rng.normal(size=(4, 6)), np.zeros(6)), Affine(rng.normal(size=(6, 3)), np.zeros(3))]
        self.params, self.grads = [], []
        for l in self.layers: self.params += l.params; self.grads += l.grads
    def forward(self, x):
        for l in self.layers: x = l.forward(x)
        return x
    def backward(self, dout):
        for l in reversed(self.layers): dout = l.backward(dout)
        return dout
"""


def test_a_bias_is_no_weight_matrix_for_the_branch_probe():
    """A (K,) bias and a (1, K) one: no probe runs (none zeroes W), nothing is named."""
    calls = []
    W = np.arange(1.0, 13.0).reshape(4, 3)

    def fwd(*xs):
        calls.append(W.copy())
        return xs[0] @ W

    for b in (np.zeros(3), np.zeros((1, 3))):
        L = SimpleNamespace(params={"W": W, "b": b}, fwd=fwd, inputs=[np.ones((2, 4))], Y=np.ones((2, 4)) @ W,
                            numer=lambda which: {k: np.zeros(3) for k in which})
        assert _branch_signature(L, "b", np.ones(b.shape), np.full(b.shape, 2.0)) is None
    assert calls == [], calls


def test_a_sublayer_is_read_with_the_models_params_not_a_probes_last_ones(tmp_path):
    """A forward with W2 zeroed (a probe's), then layers[1]: its W is the model's W2, not the zeros sent last."""
    f = tmp_path / "net.py"
    f.write_text(NET)
    X = np.random.default_rng(1).standard_normal((5, 4))
    with Sandbox(files={"net.py": str(f)}, timeout=20) as sb:
        net = sb.load_layer("net.py", "Net", probe_inputs=[X])  # adapted as the check reads it: params[0..3]
        keys = list(net.params)
        W2 = np.array(net.params[keys[2]], copy=True)
        assert W2.shape == (6, 3) and np.any(W2), keys
        probe = {k: np.zeros_like(v) if k == keys[2] else v for k, v in net.params.items()}
        net.forward_many([X], [probe])
        H = X @ net.params[keys[0]] + net.params[keys[1]]
        sub = net.sublayer(1, [H], None)
        assert sub is not None
        got = [np.asarray(v) for v in sub.params.values() if np.shape(v) == (6, 3)]
        assert len(got) == 1 and np.array_equal(got[0], W2), sub.params
