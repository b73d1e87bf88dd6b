"""newuser34 M2: a LayerNorm whose ``dgamma = dY.sum(axis=0)`` (beta's gradient, gamma's product with xhat left
out) was told the dense layer's story ("the gradient at the pre-activation Z = X @ W + b is due ... dZ = dY *
f'(Z)"), though the layer has no weight matrix and no activation. A 1-D parameter of a layer without a weight
matrix, whose gradient is dY's sum while its numerical gradient is not, is a scale summed as a bias; a dense tanh
layer's db = dY.sum(axis=0) keeps its own diagnosis."""

import numpy as np

from gradcheck import check_layer, diagnose_layer


class LayerNorm:
    """A LayerNorm over the last axis with a planted bug: dgamma = dY.sum(axis=0) (``fixed``: (dY * xhat).sum)."""

    def __init__(self, dim=5, fixed=False):
        rng = np.random.default_rng(1)
        self.params = {"gamma": 1.0 + 0.1 * rng.standard_normal(dim), "beta": 0.1 * rng.standard_normal(dim)}
        self.grads, self.fixed = {}, fixed

    def forward(self, X):
        mu, var = X.mean(axis=-1, keepdims=True), X.var(axis=-1, keepdims=True)
        inv = 1.0 / np.sqrt(var + 1e-5)
        self.cache = xhat, inv = (X - mu) * inv, inv
        return xhat * self.params["gamma"] + self.params["beta"]

    def backward(self, dY):
        xhat, inv = self.cache
        D = xhat.shape[-1]
        self.grads["gamma"] = (dY * xhat).sum(axis=0) if self.fixed else dY.sum(axis=0)
        self.grads["beta"] = dY.sum(axis=0)
        dxhat = dY * self.params["gamma"]
        return inv / D * (D * dxhat - dxhat.sum(-1, keepdims=True) - xhat * (dxhat * xhat).sum(-1, keepdims=True))


class DenseTanh:
    """A dense tanh layer whose db = dY.sum(axis=0) skips tanh's derivative (the dense layer's diagnosis)."""

    def __init__(self):
        rng = np.random.default_rng(2)
        self.params = {"W": rng.standard_normal((4, 3)), "b": rng.standard_normal(3)}
        self.grads = {}

    def forward(self, X):
        self.X, self.Y = X, np.tanh(X @ self.params["W"] + self.params["b"])
        return self.Y

    def backward(self, dY):
        dZ = dY * (1 - self.Y ** 2)
        self.grads["W"], self.grads["b"] = self.X.T @ dZ, dY.sum(axis=0)
        return dZ @ self.params["W"].T


def test_a_layernorm_dgamma_summed_as_a_bias_is_named_so():
    d = diagnose_layer(LayerNorm(), (4, 5))
    text = " ".join(d.sentence().split())
    assert "dgamma = dY.sum(axis=0): the gradient of a parameter added to each sample's output" in text, text
    assert "dgamma = (dY * xhat).sum(axis=0)" in text, text
    assert "pre-activation Z" not in text, text
    assert check_layer(LayerNorm(fixed=True), (4, 5), twin=None).passed


def test_a_dense_tanh_db_summed_from_dy_keeps_the_dense_diagnosis():
    d = diagnose_layer(DenseTanh(), (6, 4))
    text = " ".join(d.sentence().split())
    assert "pre-activation Z = X @ W + b" in text and "db = dZ.sum(axis=0)" in text, text
    assert "a scale" not in text, text
