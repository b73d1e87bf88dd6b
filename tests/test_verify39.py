"""verify39's HIGH findings, one test each (each failed on s39-leadm 1d5c9b74).

F1: ``autoprop.function`` froze a slice bound that is a 0-d integer array argument (``W[k:]``): every replay sliced
at the first call's k, silently. F4: ``gradcheck check --training`` PASSed a dropout whose backward calls forward
again (a new mask in use): the check's rewinding of the generators also ran for the call from backward, which got
forward's mask back. F7: the grader gave full marks to a model Linear -> ReLU -> Dropout whose dropout left out
1/(1 - p) (every seed) or read p as the keep probability (some seeds): a model's training output was never compared
with the reference's (its ``Y / X`` has no meaning), and the gradients' mean over 32 draws cannot see a 30% scale.
"""

import numpy as np
import pytest
from test_cli import check_source

import autoprop as ap
import manualprop as mp
from autoprop.tracing import TraceError
from gradcheck._adapters import hold_random
from gradcheck.grading.checks import layer_gradients


# --- F1 ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("body", ["W[k:]", "W[:k]", "W[1:k, 0]"])
def test_a_slice_bound_from_an_integer_array_argument_is_refused(body):
    W = ap.Variable(np.arange(24.0).reshape(6, 4))
    traced = ap.function(eval(f"lambda k: ap.reduce_sum({body} ** 2)", {"W": W, "ap": ap}))
    with pytest.raises(TraceError, match="a slice whose bound is an array"):
        traced(np.array(2))  # before: traced, then replayed at k = 2 whatever k was


def test_a_slice_bound_given_as_a_python_int_replays_the_eager_value():
    W = ap.Variable(np.arange(24.0).reshape(6, 4))
    fn = lambda k: ap.reduce_sum(W[k:] ** 2)  # noqa: E731
    traced = ap.function(fn)
    for k in (1, 2, 4, 2):
        assert np.array_equal(traced(k).numpy(), fn(k).numpy())
    assert traced.traces == 3  # (one per value)


# --- F4 ---------------------------------------------------------------------------------------------------------------
DROPOUTS = """
import numpy as np


class Dropout:
    def __init__(self, p=0.3, seed=1):
        self.p, self.rng, self.params, self.grads = p, np.random.default_rng(seed), {}, {}

    def forward(self, X, training=False):
        self.X = X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p) if training else 1.0
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class ForwardAgain(Dropout):
    def backward(self, dY):
        self.forward(self.X, training=True)  # a new mask in use: dX is not of the Y forward gave
        return dY * self.mask
"""
_LAYERS = {}
exec(DROPOUTS, _LAYERS)


@pytest.mark.parametrize("name,right", [("Dropout", True), ("ForwardAgain", False)])
def test_a_forward_called_from_backward_is_not_rewound(name, right):
    layer = _LAYERS[name]()
    assert hold_random(layer, "rewind") == "Generator"
    X = np.random.default_rng(0).standard_normal((20, 10))
    Y = layer.forward(X, training=True)
    dX = layer.backward(np.ones_like(X))
    assert np.array_equal(layer.forward(X, training=True), Y)  # the check's own forwards still held
    assert np.array_equal(dX, (Y != 0) / 0.7) == right  # before: True for ForwardAgain too


def test_check_fails_a_dropout_whose_backward_redraws_its_mask(tmp_path):
    code, out = check_source(tmp_path, DROPOUTS, "ForwardAgain", "--input-shape", "20,10", "--init", '{"p": 0.3}',
                             "--training")
    assert code == 1 and "FAIL: ForwardAgain: gradient mismatch in dX" in out, out  # before: PASS, exit 0


# --- F7 ---------------------------------------------------------------------------------------------------------------
class _Model:
    """Linear(5, 4) -> ReLU -> Dropout(p): right, or its dropout without 1/(1 - p), or p read as the keep share."""

    def __init__(self, kind="right", p=0.3, seed=0):
        r = np.random.default_rng(seed)
        self.params = {"0.W": r.standard_normal((4, 5)), "0.b": np.zeros(4)}
        self.grads, self.rng, self.p, self.kind = {}, np.random.default_rng(seed + 1), p, kind

    def forward(self, X, training=False):
        self.X, self.Z = X, X @ self.params["0.W"].T + self.params["0.b"]
        u = self.rng.random(self.Z.shape) if training else None
        self.mask = 1.0 if u is None else {"right": (u >= self.p) / (1 - self.p), "noscale": (u >= self.p) * 1.0,
                                           "keep": (u < self.p) / self.p}[self.kind]
        return np.maximum(self.Z, 0) * self.mask

    def backward(self, dY):
        dZ = dY * self.mask * (self.Z > 0)
        self.grads = {"0.W": dZ.T @ self.X, "0.b": dZ.sum(axis=0)}
        return dZ @ self.params["0.W"]


@pytest.mark.parametrize("kind,seed,passed", [("right", 0, True), ("noscale", 0, False), ("keep", 1, False)])
def test_a_model_holding_a_wrong_dropout_loses_its_gradient_points(kind, seed, passed):
    X = np.random.default_rng(100 + seed).standard_normal((6, 5))
    ref = mp.Sequential([mp.Linear(5, 4, rng=1), mp.ReLU(), mp.Dropout(0.3, rng=seed)])
    v = layer_gradients(_Model(kind, seed=seed), X, ref, training=True, seed=seed)
    assert v.passed == passed, [p.message for p in v.parts]  # before: passed, both wrong ones
    if not passed:
        assert all("at the same inputs and weights" in p.message for p in v.parts), [p.message for p in v.parts]
