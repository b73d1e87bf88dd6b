"""Mutant ce_no_max_shift of the linear_relu_ce solution: SoftmaxCrossEntropy.forward takes exp of the logits without
subtracting each row's maximum (newuser31 F4).

Seeded bug for testing the grader; see ../MUTANTS.json for the test it must fail."""

import numpy as np


class Linear:
    """Y = X @ W.T + b with W (out, in), b (out,)."""

    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        k = 1.0 / np.sqrt(in_features)
        self.in_features, self.out_features = in_features, out_features
        self.params = {"W": rng.uniform(-k, k, size=(out_features, in_features)),
                       "b": rng.uniform(-k, k, size=out_features)}
        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(axis=0)
        return dY @ self.params["W"]


class ReLU:
    """Y = max(X, 0); dX = dY where X > 0, else 0."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        self.mask = X > 0
        return np.where(self.mask, X, 0.0)

    def backward(self, dY):
        return dY * self.mask


class SoftmaxCrossEntropy:
    """Mean cross-entropy of softmax(logits) against integer labels; backward gives dL/dlogits."""

    def forward(self, y_true, y_pred):
        z = y_pred  # MUTANT: ce_no_max_shift (exp(z) overflows to inf above 709.78)
        log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        self.p = np.exp(log_p)
        self.y = np.asarray(y_true)
        n = len(self.y)
        return float(-log_p[np.arange(n), self.y].mean())

    def backward(self):
        n = len(self.y)
        d = self.p.copy()
        d[np.arange(n), self.y] -= 1.0
        return d / n
