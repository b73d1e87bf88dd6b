"""Batch norm in three students' styles, each with Keras's ``epsilon=1e-3`` inside ``sqrt(var + eps)`` (0.1% of a
unit variance, which the missing-paths signature must allow): a ``params``/``grads`` dict, attributes
``gamma``/``dgamma``, and Keras's ``call(x, training=False)`` with ``gamma_grad``. Each buggy twin's training
backward treats the batch mean and variance as constants (the classic bug)."""

import numpy as np

INPUT = (8, 4)
KWARGS = {"training": True}


def _dx(dxhat, xhat, inv):
    n = len(dxhat)
    return inv / n * (n * dxhat - dxhat.sum(0) - xhat * (dxhat * xhat).sum(0))


class BNParamsDict:
    def __init__(self, D=4, eps=1e-3, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"gamma": 1 + 0.3 * rng.standard_normal(D), "beta": 0.3 * rng.standard_normal(D)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.eps = eps

    def forward(self, X, training=False):
        mu, var = X.mean(0), X.var(0)
        self.inv = 1 / np.sqrt(var + self.eps)
        self.xhat = (X - mu) * self.inv
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def backward(self, dY):
        self.grads["gamma"] = (dY * self.xhat).sum(0)
        self.grads["beta"] = dY.sum(0)
        return self.dx(dY * self.params["gamma"])

    def dx(self, dxhat):
        return _dx(dxhat, self.xhat, self.inv)


class BNParamsDictNaive(BNParamsDict):
    def dx(self, dxhat):
        return dxhat * self.inv  # BUG: mean and variance treated as constants


class BNAttr:
    ADAPT, KWARGS = True, {}

    def __init__(self, D=4, eps=1e-3, seed=0):
        rng = np.random.default_rng(seed)
        self.gamma, self.beta = 1 + 0.3 * rng.standard_normal(D), 0.3 * rng.standard_normal(D)
        self.eps = eps

    def forward(self, X):
        mu, var = X.mean(0), X.var(0)
        self.inv = 1 / np.sqrt(var + self.eps)
        self.xhat = (X - mu) * self.inv
        return self.gamma * self.xhat + self.beta

    def backward(self, dY):
        self.dgamma, self.dbeta = (dY * self.xhat).sum(0), dY.sum(0)
        return self.dx(dY * self.gamma)

    def dx(self, dxhat):
        return _dx(dxhat, self.xhat, self.inv)


class BNAttrNaive(BNAttr):
    def dx(self, dxhat):
        return dxhat * self.inv  # BUG: mean and variance treated as constants


class KerasBN:
    """Keras's names: ``call(x, training=False)``, ``moving_mean``/``moving_variance``, ``gamma_grad``."""

    ADAPT = True

    def __init__(self, dim=4, momentum=0.99, epsilon=1e-3):
        rng = np.random.default_rng(0)
        self.gamma, self.beta = 1 + 0.3 * rng.standard_normal(dim), 0.3 * rng.standard_normal(dim)
        self.moving_mean, self.moving_variance = np.zeros(dim), np.ones(dim)
        self.momentum, self.epsilon = momentum, epsilon

    def call(self, x, training=False):
        if training:
            mu, var = x.mean(0), x.var(0)
            self.moving_mean = self.momentum * self.moving_mean + (1 - self.momentum) * mu
            self.moving_variance = self.momentum * self.moving_variance + (1 - self.momentum) * var
        else:
            mu, var = self.moving_mean, self.moving_variance
        self.training = training
        self.inv = 1 / np.sqrt(var + self.epsilon)
        self.xhat = (x - mu) * self.inv
        return self.gamma * self.xhat + self.beta

    def backward(self, dy):
        self.gamma_grad, self.beta_grad = (dy * self.xhat).sum(0), dy.sum(0)
        dxhat = dy * self.gamma
        return self.dx(dxhat) if self.training else dxhat * self.inv

    def dx(self, dxhat):
        return _dx(dxhat, self.xhat, self.inv)


class KerasBNNaive(KerasBN):
    def dx(self, dxhat):
        return dxhat * self.inv  # BUG: mean and variance treated as constants
