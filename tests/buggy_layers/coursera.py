"""Andrew Ng's Coursera Deep Learning specialization: ``linear_activation_forward(A_prev, W, b, activation)
-> (A, cache)``, ``linear_activation_backward(dA, cache, activation)`` (the --init value ``activation`` goes to
both), in the course's layout: ``W`` (out, in), ``A`` (in, m) with the batch on axis 1, ``b`` (out, 1).

Loaded as ``gradcheck check ng.py::NAME`` loads them (:mod:`gradcheck._adapters`, :data:`INIT`, :data:`INPUTS`).
"""

import numpy as np

INPUT = [(5, 8), (3, 5), (3, 1)]
INIT = {"linact": {"activation": "sigmoid"}, "linactnoderiv": {"activation": "sigmoid"},
        "linactrelu": {"activation": "relu"}}


def _sigmoid_backward(dA, Z):
    s = 1 / (1 + np.exp(-Z))
    return dA * s * (1 - s)


def linact_forward(A_prev, W, b, activation):
    Z = W @ A_prev + b
    A = 1 / (1 + np.exp(-Z)) if activation == "sigmoid" else np.maximum(0, Z)
    return A, ((A_prev, W, b), Z)


def _linear_backward(dZ, linear_cache):
    A_prev, W, _ = linear_cache
    return W.T @ dZ, dZ @ A_prev.T, dZ.sum(axis=1, keepdims=True)


def linact_backward(dA, cache, activation):
    linear_cache, Z = cache
    dZ = _sigmoid_backward(dA, Z) if activation == "sigmoid" else dA * (Z > 0)
    return _linear_backward(dZ, linear_cache)


linactrelu_forward, linactrelu_backward = linact_forward, linact_backward
linactnoderiv_forward = linact_forward


def linactnoderiv_backward(dA, cache, activation):
    linear_cache, Z = cache
    dZ = dA / (1 + np.exp(-Z)) if activation == "sigmoid" else dA  # BUG: s, not s * (1 - s)
    return _linear_backward(dZ, linear_cache)


def nglinear_forward(A, W, b):
    return W @ A + b, (A, W, b)


def nglinear_backward(dZ, cache):
    A_prev, W, _ = cache
    m = A_prev.shape[1]
    dW = 1. / m * dZ @ A_prev.T  # the course's convention: 1/m in every layer's backward
    db = 1. / m * np.sum(dZ, axis=1, keepdims=True)
    return W.T @ dZ, dW, db


class DenseColumns:
    """A ReLU layer in the course's layout as a class: ``W`` (out, in) square, ``A`` (in, m), no 1/m."""
    INPUT = (4, 6)

    def __init__(self):
        r = np.random.default_rng(0)
        self.params = {"W": r.normal(size=(4, 4)) * 0.5, "b": np.zeros((4, 1))}
        self.grads = {}

    def forward(self, A_prev, training=False):
        self.A_prev, self.Z = A_prev, self.params["W"] @ A_prev + self.params["b"]
        return np.maximum(0, self.Z)

    def backward(self, dA):
        dZ = dA * (self.Z > 0)
        self.grads["W"], self.grads["b"] = dZ @ self.A_prev.T, dZ.sum(axis=1, keepdims=True)
        return self.dA_prev(dZ)

    def dA_prev(self, dZ):
        return self.params["W"].T @ dZ


class DenseColumnsNoT(DenseColumns):
    def dA_prev(self, dZ):
        return self.params["W"] @ dZ  # BUG: W @ dZ, W.T @ dZ is due (W square: no shape error)


class NgDict:
    """deeplearning.ai's names in a class: ``self.parameters['W1']``, backward fills ``self.grads['dW1']``."""

    INPUT, ADAPT = (5, 8), True  # read as `gradcheck check` reads it (attribute style, its containers)

    def __init__(self):
        rng = np.random.default_rng(0)
        self.parameters = {"W1": rng.standard_normal((3, 5)), "b1": 0.1 * rng.standard_normal((3, 1))}
        self.grads = {}

    def forward(self, A):
        self.A = A
        return self.parameters["W1"] @ A + self.parameters["b1"]

    def backward(self, dZ):
        self.grads["dW1"] = dZ @ self.A.T
        self.grads["db1"] = self.db(dZ)
        return self.parameters["W1"].T @ dZ

    def db(self, dZ):
        return dZ.sum(axis=1, keepdims=True)


class NgDictDbHalf(NgDict):
    def db(self, dZ):
        return dZ.sum(axis=1, keepdims=True) / 2  # BUG: x0.5
