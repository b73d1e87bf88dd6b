"""The grader names a wrong gradient as ``gradcheck check`` does (newuser24 M1).

The grader named a wrong tensor from its numbers alone, so a sigmoid missing its ``(1 - out)`` and a tanh whose
derivative was given the input (``1 - X**2``) were "dX differs from the correct gradient in 24 of 24 elements (no
known bug pattern)" in every student's results.json, while ``gradcheck check`` named both from the layer's output and
input. Both now go through one function (:func:`gradcheck.diagnose.layer_signature`): for each planted bug below the
grader's sentence for a wrong part is check's sentence for that tensor, word for word, on the same layer, input and
upstream gradient.
"""

from pathlib import Path

import numpy as np
import pytest

import manualprop as mp
from gradcheck.diagnose import diagnose_layer
from gradcheck.grading import checks
from gradcheck.sandbox import Sandbox

BUGGY = Path(__file__).resolve().parent / "buggy_layers"

NEWUSER = '''
import numpy as np

class SigmoidBug:
    def forward(self, X):
        self.s = 1 / (1 + np.exp(-X))
        return self.s

    def backward(self, dY):
        return dY * self.s  # BUG: (1 - s) missing

class TanhBug:
    def forward(self, X):
        self.X = X
        return np.tanh(X)

    def backward(self, dY):
        return dY * (1 - self.X ** 2)  # BUG: the input where the output belongs
'''

#: A CS231n pair whose arguments are not the reference's names (inp, weights, shift for x, w, b), db a mean
PAIR = '''
import numpy as np


def affine_forward(inp, weights, shift):
    return inp.reshape(inp.shape[0], -1) @ weights + shift, (inp, weights)


def affine_backward(dout, cache):
    x, w = cache
    return (dout @ w.T).reshape(x.shape), x.reshape(x.shape[0], -1).T @ dout, dout.mean(axis=0)  # BUG: mean
'''


class RefAffine:
    """``affine_forward(x, w, b)`` as manualprop.Linear (w (D, M) is Linear's W transposed), as the CS231n
    assignment's test grades it."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, x, w, b, training=False):
        self.shape, self.lin = x.shape, mp.Linear(*w.shape)
        self.lin.params["W"][...], self.lin.params["b"][...] = w.T, b
        return self.lin.forward(x.reshape(x.shape[0], -1))

    def backward(self, dout):
        dx = self.lin.backward(dout)
        return dx.reshape(self.shape), self.lin.grads["W"].T.copy(), self.lin.grads["b"]


#: (file, class, reference, input shape, training, the code check gives, the tensor it names)
CASES = [
    ("mine.py", "SigmoidBug", lambda: mp.Sigmoid(), (6, 4), False, "sigmoid-missing-one-minus", "dX"),
    ("mine.py", "TanhBug", lambda: mp.Tanh(), (6, 4), False, "derivative-at-input", "dX"),
    ("activations.py", "TanhNoSquare", lambda: mp.Tanh(), (5, 4), False, "tanh-missing-square", "dX"),
    ("softmax.py", "SoftmaxDiagonal", lambda: mp.Softmax(), (5, 4), False, "softmax-diagonal", "dX"),
    ("linear.py", "LinearDxWithWT", lambda: mp.Linear(4, 4), (5, 4), False, "transposed-weight", "dX"),
    ("linear.py", "LinearCachedY", lambda: mp.Linear(4, 4), (5, 4), False, "cached-output", "dW"),
    ("linear.py", "LinearMeanBias", lambda: mp.Linear(4, 4), (5, 4), False, "bias-mean", "db"),
    ("norm.py", "BatchNormNaive", lambda: mp.BatchNorm1D(4), (6, 4), True, "missing-mean-var-paths", "dX"),
]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    mine = tmp_path_factory.mktemp("n24") / "mine.py"
    mine.write_text(NEWUSER)
    pair = mine.parent / "pair.py"
    pair.write_text(PAIR)
    files = {"mine.py": str(mine), "pair.py": str(pair), **{f: str(BUGGY / f) for f in (
        "activations.py", "softmax.py", "linear.py", "norm.py")}}
    with Sandbox(files=files, timeout=20, hostile=True) as sb:
        yield sb


@pytest.mark.parametrize("file,name,reference,shape,training,code,tensor", CASES, ids=[c[1] for c in CASES])
def test_grade_names_the_bug_check_names(sandbox, file, name, reference, shape, training, code, tensor):
    X = checks.away_from_kinks(np.random.default_rng(3).standard_normal(shape))
    layer = sandbox.load_layer(file, name, {})
    verdict = checks.layer_gradients(layer, X, reference(), training=training, seed=0)
    wrong = {p.name: p.message for p in verdict.parts if not p.passed}
    assert tensor in wrong, verdict.markdown()
    # check, on the same layer (the grader's parameters), input and upstream gradient (both draw G from seed 0)
    diag = diagnose_layer(layer, X, training=training, seed=0, drawn=False)
    found = {f.tensor: f for f in diag.errors}
    assert found[tensor].code == code, diag.sentence()
    assert wrong[tensor] == found[tensor].sentence(), (wrong[tensor], found[tensor].sentence())
    assert "no known bug pattern" not in wrong[tensor]


def test_a_pairs_parts_are_named_after_the_references_inputs(sandbox):
    """review25g: the parts carry the reference's input names (``db`` is input ``b``: names=ref_call.names in
    checks.layer_gradients); a pair whose own arguments are named otherwise (``shift``) had its ``db``, a 1-D
    bias's mean over the batch, named "an extra 1/batch" when the names were its own (dropping them passed this
    file's other tests)."""
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((4, 2, 3)), rng.standard_normal((6, 5)) / np.sqrt(6), rng.standard_normal(5)]
    verdict = checks.layer_gradients(sandbox.load_layer("pair.py", "affine", {}), xs, RefAffine(), seed=0)
    wrong = {p.name: p.message for p in verdict.parts if not p.passed}
    assert list(wrong) == ["db"], verdict.markdown()
    assert wrong["db"].startswith("db is the mean over the batch, not the sum: it is 4 times too small"), wrong
