# redteam38: the linear_relu_ce solution with Linear.backward made of central differences of its own forward
# (test_grading_policy NUMERIC). Graded under the assignment's gradcheck_no_forward_in_backward: it must lose
# the Linear gradient tests' points.
# Attack: test_grading_fix37b's TAMPERED prelude (the child's _count_calls replaced by one that reports 0).

import sys as _sys

_child = _sys.modules.get("__main__")
if _child is not None and callable(getattr(_child, "_count_calls", None)):
    _real = _child._count_calls

    def _zero(*args, **kw):
        return _real(*args, **kw)[0], 0

    _child._count_calls = _zero

"""Reference solution of the linear_relu_ce assignment (course staff only).

Linear, ReLU and softmax cross-entropy with hand-derived gradients, following
the manualprop protocol: ``params``/``grads`` dicts, ``forward(X, training=False)``
stores what backward needs, ``backward(dY)`` returns dX and fills ``grads``.
"""

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

    def backward(self, dY, h=1e-6):
        X = self.X

        def central(arr, at):  # d sum(forward(at) * dY) / d arr, arr perturbed in place
            g = np.zeros_like(arr)
            for i in np.ndindex(arr.shape):
                old = arr[i]
                arr[i] = old + h
                up = np.sum(self.forward(at) * dY)
                arr[i] = old - h
                g[i] = (up - np.sum(self.forward(at) * dY)) / (2 * h)
                arr[i] = old
            return g

        self.grads["W"], self.grads["b"] = central(self.params["W"], X), central(self.params["b"], X)
        Xc = np.array(X, dtype=float)
        dX = central(Xc, Xc)
        self.X = X
        return dX


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
        z = y_pred - y_pred.max(axis=1, keepdims=True)
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
