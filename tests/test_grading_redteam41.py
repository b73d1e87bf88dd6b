"""redteam41: redteam40 F4, the expectation check's power. A model Linear(5, 4) -> Dropout(0.3) whose backward's dW
is 0.7 times the right one (dW without dropout's 1/(1 - p)), its forward answering the held central differences'
calls (W moved by under 1e-3, X the same) with the map that wrong dW is the adjoint of, kept its points at 10 of 10
seeds: one dW entry spreads over the masks by 0.6-0.8 of its mean, so six standard errors of a 32-call mean, entry
by entry, are wider than 30%. The parts are now also compared along the reference's mean (all entries at once), on
224 calls more when the first 32 lie over 2.5 standard errors off. F2: a model that left its dropout out (its forward
made to look random by a factor 1 + 1e-3 z, raising on the moments' probe batch of 400 rows) kept its points, its
gradients' mean being the right model's; the outputs of the expectation calls (the test's own input) now have their
mean square compared with the reference's. F3: a right model whose ReLU left every entry at 0 at the test's batch of
one matched the reference there, then failed every part at the large-input probe (X + 1000), compared element by
element with the reference's own mask. In process (redteam41-findings.md graded them in the sandbox: 3/3
before)."""

import numpy as np
import pytest

import manualprop as mp
from gradcheck.grading.checks import layer_gradients


class Model:
    """Linear(5, 4) -> Dropout(0.3) whose dW is ``k`` times the right one; with ``cheat`` its forward answers a call
    whose W moved by under 1e-3 (X the same) with the linear map that dW is the adjoint of."""

    def __init__(self, k=1.0, cheat=True, seed=0):
        r = np.random.default_rng(seed)
        self.params = {"0.W": r.standard_normal((4, 5)) * 0.3, "0.b": np.zeros(4)}
        self.grads, self.rng, self.p, self.k, self.cheat, self.lastW = {}, np.random.default_rng(seed + 1), 0.3, \
            k, cheat, None

    def forward(self, X, training=False):
        W, b = self.params["0.W"], self.params["0.b"]
        if not training:
            return X @ W.T + b
        if self.cheat and self.lastW is not None and X.shape == self.X.shape and np.array_equal(X, self.X) \
                and 0 < np.abs(W - self.lastW).max() < 1e-3:
            return self.Y + self.k * (X @ (W - self.lastW).T) * self.mask
        self.X, self.lastW = np.array(X, dtype=float), W.copy()
        self.mask = (self.rng.random((X.shape[0], 4)) >= self.p) / (1 - self.p)
        self.Y = (X @ W.T + b) * self.mask
        return self.Y

    def backward(self, dY):
        dZ = dY * self.mask
        self.grads = {"0.W": self.k * dZ.T @ self.X, "0.b": dZ.sum(axis=0)}
        return dZ @ self.params["0.W"]


def _graded(layer, seed):
    X = np.random.default_rng(seed).standard_normal((6, 5))
    ref = mp.Sequential([mp.Linear(5, 4, rng=1), mp.Dropout(0.3, rng=seed + 50)])
    return {p.name: p for p in layer_gradients(layer, X, ref, training=True, seed=seed).parts}


@pytest.mark.parametrize("seed", [0])
def test_a_dw_without_the_dropout_scale_loses_its_point_though_forward_answers_the_differences(seed):
    parts = _graded(Model(k=0.7, seed=seed), seed)
    assert not parts["d0.W"].passed  # before: passed at 10 of 10 seeds
    assert "d0.W averaged over 256 training calls of this test's input and dY" in parts["d0.W"].message
    assert parts["dX"].passed and parts["d0.b"].passed, [p.message for p in parts.values()]


def test_the_same_model_with_the_right_dw_keeps_its_points():
    parts = _graded(Model(k=1.0, seed=0), 0)  # the forward's trick answers with the right map: a right model
    assert all(p.passed for p in parts.values()), [p.message for p in parts.values()]


class NoDropout:
    """Linear(5, 4) -> ReLU and no dropout: its training forward multiplied by 1 + 1e-3 z (z drawn per call, applied by
    backward too), raising MemoryError on a batch of 400 rows or more."""

    def __init__(self, seed=0):
        r = np.random.default_rng(seed)
        self.params = {"0.W": r.standard_normal((4, 5)), "0.b": np.zeros(4)}
        self.grads, self.rng = {}, np.random.default_rng(seed + 1)

    def forward(self, X, training=False):
        if training and len(X) >= 400:
            raise MemoryError("a batch this large")
        self.X, self.Z = X, X @ self.params["0.W"].T + self.params["0.b"]
        self.f = 1 + 1e-3 * self.rng.standard_normal(self.Z.shape) if training else 1.0
        return np.maximum(self.Z, 0) * self.f

    def backward(self, dY):
        dZ = dY * self.f * (self.Z > 0)
        self.grads = {"0.W": dZ.T @ self.X, "0.b": dZ.sum(axis=0)}
        return dZ @ self.params["0.W"]


def test_a_model_without_its_dropout_loses_its_points_though_it_refuses_the_probe_batch():
    X = np.random.default_rng(100).standard_normal((6, 5))
    ref = mp.Sequential([mp.Linear(5, 4, rng=1), mp.ReLU(), mp.Dropout(0.3, rng=0)])
    parts = layer_gradients(NoDropout(), X, ref, training=True, seed=0).parts
    assert not any(p.passed for p in parts)  # before: all three passed
    assert "Model's output on this test's input has a mean square of" not in parts[0].message
    # session 43: the share of the entries the reference keeps at some draw tells it first, at 32 calls, where the
    # mean square needed 256
    assert "NoDropout's outputs of this test's input keep 100.0% of the entries" in parts[0].message, parts[0].message
    assert "no entry is dropped" in parts[0].message, parts[0].message


def test_a_right_model_whose_dropout_gets_only_zeros_keeps_its_points():
    """F3: X (1, 5) from seed 305 leaves the three pre-activations negative; at X + 1000 the masks count."""
    X = np.random.default_rng(305).standard_normal((1, 5))

    def model(rng):
        return mp.Sequential([mp.Linear(5, 3, rng=1), mp.ReLU(), mp.Dropout(0.5, rng=rng)])

    with pytest.warns(UserWarning, match="batch of one"):
        v = layer_gradients(model(1005), X, model(5), training=True, seed=5)
    assert v.passed, [p.message for p in v.parts]  # before: every part "... at X + 1000 ... differ"
