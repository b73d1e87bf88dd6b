"""review39 F6: a dense ReLU layer with a zero bias (the usual initial value) whose dW skips ReLU's derivative
(``dW = X.T @ dY``) was told "forward is affine in X (no nonlinearity)": the affinity test ``Y(2X) - 2 Y(X) + Y(0)
= 0`` holds for any positively homogeneous forward. ``Y(X) + Y(-X) = 2 Y(0)`` tells them apart (relu(z) + relu(-z)
= |z|); a truly affine forward still gets ``weight-not-on-input`` (tests/test_diagnosis_affine_s38.py)."""

import numpy as np

import gradcheck


class ReluDenseNoDerivative:
    def __init__(self, n_in=4, n_out=3, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"W": rng.standard_normal((n_in, n_out)) * 0.5, "b": np.zeros(n_out)}
        self.grads = {}

    def forward(self, X):
        self.X = X
        self.Z = X @ self.params["W"] + self.params["b"]
        return np.maximum(self.Z, 0)

    def backward(self, dY):
        dZ = dY * (self.Z > 0)
        self.grads["W"] = self.X.T @ dY  # BUG: dY where dZ is due
        self.grads["b"] = dZ.sum(axis=0)
        return dZ @ self.params["W"].T


def test_a_relu_layer_with_a_zero_bias_is_told_its_skipped_derivative():
    d = gradcheck.diagnose_layer(ReluDenseNoDerivative(), np.random.default_rng(1).standard_normal((6, 4)))
    codes = [f.code for f in d.findings]
    assert not d.passed and "weight-skips-derivative" in codes and "weight-not-on-input" not in codes, codes
