"""Grading a layer of several outputs (session 8, gap 3): forward returns ``(Z, T)``, backward takes
``(dZ, dT)``. ``gradcheck check`` read it through ``gradcheck._adapters.Outputs``; the grader's
``layer_forward`` and ``layer_gradients`` said "gave Y as a tuple" and called the reference's backward
with one upstream gradient (TypeError). Now both read it through the same adapter, and agree, tensor by
tensor, on the right layer and on each planted bug; the oracle for the gradients is HIPS autograd.
"""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

from gradcheck import check_layer
from gradcheck.config import CheckConfig
from gradcheck.errors import GradientShapeError
from gradcheck.grading.checks import layer_forward, layer_gradients
from gradcheck.sandbox import Sandbox

TWO_HEADS = '''
import numpy as np


class TwoHeads:
    """forward(X) -> (Z, T): Z = X @ W, T = tanh(X @ W + b); backward(dZ, dT) -> dX."""

    def __init__(self, d, m):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((d, m)), "b": np.zeros(m)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        Z = X @ self.params["W"]
        self.T = np.tanh(Z + self.params["b"])
        return Z, self.T

    def backward(self, dZ, dT):
        dU = dT * (1 - self.T ** 2)
        dA = dZ + dU
        self.grads["W"] = self.X.T @ dA
        self.grads["b"] = dU.sum(axis=0)
        return dA @ self.params["W"].T
'''
BUGS = {  # planted bug -> the parts it must cost
    "dT_ignored_in_dX": ("return dA @ self.params[\"W\"].T", "return dZ @ self.params[\"W\"].T", {"dX"}),
    "db_from_both": ('self.grads["b"] = dU.sum(axis=0)', 'self.grads["b"] = dA.sum(axis=0)', {"db"}),
    "heads_swapped": ("def backward(self, dZ, dT):", "def backward(self, dT, dZ):", {"dX", "dW", "db"}),
}


def _reference():
    ns = {}
    exec(compile(TWO_HEADS, "reference", "exec"), ns)
    return ns["TwoHeads"](3, 2)


def _oracle(X, W, b, GZ, GT):
    """dX, dW, db of sum(Z * GZ) + sum(T * GT) by HIPS autograd."""
    def L(X, W, b):
        Z = anp.dot(X, W)
        return anp.sum(Z * GZ) + anp.sum(anp.tanh(Z + b) * GT)
    return [grad(L, i)(X, W, b) for i in range(3)]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    folder = tmp_path_factory.mktemp("multi")
    for name, src in {"ok": TWO_HEADS, **{k: TWO_HEADS.replace(a, b) for k, (a, b, _) in BUGS.items()}}.items():
        assert src != TWO_HEADS or name == "ok"
        (folder / f"{name}.py").write_text(src)
    with Sandbox(files={p.name: str(p) for p in folder.iterdir()}, timeout=60, hostile=True) as sb:
        yield sb


X = np.random.default_rng(5).standard_normal((4, 3))


def test_the_reference_and_the_adapter_agree_with_autograd():
    """The adapter's join and split against the oracle: G for the stacked Y is (GZ, GT)."""
    from gradcheck._adapters import class_outputs

    ref = _reference()
    assert class_outputs(ref, [X]).text().startswith("2 outputs (out0 (4, 2), out1 (4, 2)) checked as one stacked Y")
    G = np.random.default_rng(1).standard_normal((2, 4, 2))
    ref.forward(X)
    dX = ref.backward(G)
    want = _oracle(X, ref.params["W"], ref.params["b"], G[0], G[1])
    for got, w in zip([dX, ref.grads["W"], ref.grads["b"]], want):
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-12)


def test_grading_reads_several_outputs_as_gradcheck_check_does(sandbox):
    layer = sandbox.load_layer("ok.py", "TwoHeads", {"d": 3, "m": 2})
    assert layer_forward(layer, X, _reference()).passed
    v = layer_gradients(layer, X, _reference(), seed=3)
    assert [(p.name, p.passed) for p in v.parts] == [("dX", True), ("dW", True), ("db", True)], v.markdown()
    checked = sandbox.load_layer("ok.py", "TwoHeads", {"d": 3, "m": 2}, probe_inputs=[X])  # check's path
    assert "2 outputs (Z (4, 2), T (4, 2))" in checked.protocol["text"]  # (return Z, self.T: named since s40)
    assert check_layer(checked, X, config=CheckConfig(seed=3)).passed


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_planted_bug_costs_its_parts_in_grading_and_fails_gradcheck_check_alike(sandbox, bug):
    layer = sandbox.load_layer(f"{bug}.py", "TwoHeads", {"d": 3, "m": 2})
    v = layer_gradients(layer, X, _reference(), seed=3)
    failed = {p.name for p in v.parts if not p.passed}
    assert failed == BUGS[bug][2], v.markdown()
    checked = sandbox.load_layer(f"{bug}.py", "TwoHeads", {"d": 3, "m": 2}, probe_inputs=[X])
    res = check_layer(checked, X, config=CheckConfig(seed=3))
    assert {r.tensor for r in res.records if r.kind == "gradient" and not r.passed} == failed


def test_a_forward_only_reference_is_graded_as_before(sandbox):
    """The adapter looks for several outputs only where a backward takes them."""
    class ForwardOnly:
        def __init__(self):
            self.ref = _reference()
            self.params = self.ref.params

        def forward(self, X, training=False):
            return self.ref.forward(X)[0]

    layer = sandbox.load_layer("ok.py", "TwoHeads", {"d": 3, "m": 2})  # two outputs where one is expected
    with pytest.raises(GradientShapeError, match="gave Y as a tuple"):
        layer_forward(layer, X, ForwardOnly())
