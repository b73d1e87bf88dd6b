"""Layers whose backward steps their own weights (The Independent Code's ``backward(output_gradient,
learning_rate)``, a model stepping its layers at ``self.lr``), read as ``gradcheck check`` reads them: given a rate
of 0.25, each weight's step over it is the gradient (:func:`gradcheck._adapters.stored_results`). Each correct one
with a one-bug twin (verify10 Y1, Y21, Y28)."""

import numpy as np

INPUT = (6, 4)


class SgdDense:
    """A Dense whose backward computes dX first, then steps W and b at the rate it is given."""

    ADAPT = True

    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((4, 3)) * 0.5, rng.standard_normal(3) * 0.1

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY, learning_rate):
        dX = dY @ self.W.T
        self.W -= learning_rate * (self.X.T @ dY)
        self.b -= learning_rate * dY.sum(0)
        return dX


class SgdDenseDxAfterStep(SgdDense):
    def backward(self, dY, learning_rate):
        self.W -= learning_rate * (self.X.T @ dY)
        self.b -= learning_rate * dY.sum(0)
        return dY @ self.W.T  # BUG: dX with the weights after the step


class SgdDenseRateTwice(SgdDense):
    def backward(self, dY, learning_rate):
        dX = dY @ self.W.T
        self.W -= learning_rate * learning_rate * (self.X.T @ dY)  # BUG: the rate applied twice
        self.b -= learning_rate * dY.sum(0)
        return dX


class Param:
    """A Parameter-like box: the array in ``data``."""

    def __init__(self, a):
        self.data = a


class SgdData:
    """A Dense of Parameter-like weights whose backward rebinds ``.data`` to the stepped array (verify10 Y28)."""

    ADAPT = True

    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = Param(rng.standard_normal((4, 3)) * 0.5), Param(rng.standard_normal(3) * 0.1)

    def forward(self, X):
        self.X = X
        return X @ self.W.data + self.b.data

    def backward(self, dY, learning_rate):
        dX = dY @ self.W.data.T
        self.W.data = self.W.data - learning_rate * (self.X.T @ dY)
        self.b.data = self.b.data - learning_rate * dY.sum(0)
        return dX


class SgdDataMeanBias(SgdData):
    def backward(self, dY, learning_rate):
        dX = dY @ self.W.data.T
        self.W.data = self.W.data - learning_rate * (self.X.T @ dY)
        self.b.data = self.b.data - learning_rate * dY.mean(0)  # BUG: mean, not sum
        return dX


class SgdModel:
    """A model stepping its sub-layers at the rate it holds, ``self.lr`` (verify10 Y21)."""

    ADAPT = True

    def __init__(self):
        self.layers, self.lr = [SgdDense(), SgdTanh()], 0.1

    def forward(self, X):
        for layer in self.layers:
            X = layer.forward(X)
        return X

    def backward(self, dY):
        for layer in reversed(self.layers):
            dY = layer.backward(dY, self.lr)
        return dY


class SgdTanh:
    def forward(self, X):
        self.Y = np.tanh(X)
        return self.Y

    def backward(self, dY, learning_rate):
        return dY * (1 - self.Y ** 2)



class SgdParamsDict:
    """A Dense whose weights live in a ``params`` dict with no ``grads`` dict, stepped in backward (tester12 M1)."""

    ADAPT = True

    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((4, 3)) * 0.5, "b": rng.standard_normal(3) * 0.1}

    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY, lr=0.01):
        dX = dY @ self.params["W"].T
        self.params["W"] -= lr * (self.X.T @ dY)
        self.params["b"] -= lr * dY.sum(axis=0)
        return dX


class SgdParamsDictMeanBias(SgdParamsDict):
    def backward(self, dY, lr=0.01):
        dX = dY @ self.params["W"].T
        self.params["W"] -= lr * (self.X.T @ dY)
        self.params["b"] -= lr * dY.mean(axis=0)  # BUG: mean, not sum
        return dX


class SgdParamsList:
    """DLfS-2's ``self.params = [W, b]`` with no ``grads`` list, stepped in backward at ``self.lr`` (tester12 M1)."""

    ADAPT = True

    def __init__(self):
        rng = np.random.default_rng(0)
        self.params, self.lr = [rng.standard_normal((4, 3)) * 0.5, rng.standard_normal(3) * 0.1], 0.05

    def forward(self, X):
        self.X = X
        W, b = self.params
        return X @ W + b

    def backward(self, dY):
        W, b = self.params
        dX = dY @ W.T
        self.params[0] -= self.lr * (self.X.T @ dY)
        self.params[1] -= self.lr * dY.sum(axis=0)
        return dX


class SgdParamsListRateTwice(SgdParamsList):
    def backward(self, dY):
        W, b = self.params
        dX = dY @ W.T
        self.params[0] -= self.lr * self.lr * (self.X.T @ dY)  # BUG: the rate applied twice
        self.params[1] -= self.lr * dY.sum(axis=0)
        return dX


class Opt:
    """An optimizer's settings held by its class (tester12 M2)."""

    lr = 0.1


class SgdClassRate:
    """A Dense stepping at ``self.opt.lr``, a class attribute of ``Opt`` (tester12 M2)."""

    ADAPT = True

    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b, self.opt = rng.standard_normal((4, 3)) * 0.5, rng.standard_normal(3) * 0.1, Opt()

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= self.opt.lr * (self.X.T @ dY)
        self.b -= self.opt.lr * dY.sum(axis=0)
        return dX


class SgdClassRateMeanBias(SgdClassRate):
    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= self.opt.lr * (self.X.T @ dY)
        self.b -= self.opt.lr * dY.mean(axis=0)  # BUG: mean, not sum
        return dX


class SgdOwnClassRate(SgdClassRate):
    """A Dense stepping at ``self.lr``, its class's attribute (tester12 M2)."""

    lr = 0.05

    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= self.lr * (self.X.T @ dY)
        self.b -= self.lr * dY.sum(axis=0)
        return dX


class SgdOwnClassRateSign(SgdOwnClassRate):
    def backward(self, dY):
        dX = -(dY @ self.W.T)  # BUG: the sign of dX
        self.W -= self.lr * (self.X.T @ dY)
        self.b -= self.lr * dY.sum(axis=0)
        return dX


#: The rate a layer below steps at, a global of its module.
LEARNING_RATE = 0.1


class SgdGlobalRate(SgdClassRate):
    """A Dense stepping at ``LEARNING_RATE``, its module's global."""

    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= LEARNING_RATE * (self.X.T @ dY)
        self.b -= LEARNING_RATE * dY.sum(axis=0)
        return dX


class SgdGlobalRateOverN(SgdGlobalRate):
    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= LEARNING_RATE * (self.X.T @ dY) / len(dY)  # BUG: divided by the batch size
        self.b -= LEARNING_RATE * dY.sum(axis=0)
        return dX


class SgdConfigRate(SgdClassRate):
    """A Dense stepping at ``self.config['learning_rate']`` (CS231n's optim config)."""

    def __init__(self):
        super().__init__()
        self.config = {"learning_rate": 0.1}

    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= self.config["learning_rate"] * (self.X.T @ dY)
        self.b -= self.config["learning_rate"] * dY.sum(axis=0)
        return dX


class SgdConfigRateBiasTwice(SgdConfigRate):
    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= self.config["learning_rate"] * (self.X.T @ dY)
        self.b -= self.config["learning_rate"] * dY.sum(axis=0) * 2  # BUG: twice the bias gradient
        return dX


class SgdAlphaRate(SgdClassRate):
    """A Dense stepping at ``self.alpha`` (tester13 H2)."""

    def __init__(self):
        super().__init__()
        self.alpha = 0.1

    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= self.alpha * (self.X.T @ dY)
        self.b -= self.alpha * dY.sum(axis=0)
        return dX


class SgdAlphaRateMeanBias(SgdAlphaRate):
    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= self.alpha * (self.X.T @ dY)
        self.b -= self.alpha * dY.mean(axis=0)  # BUG: the mean over the batch, not the sum
        return dX


#: The rate a layer below steps at, a key of its module's dict (tester13 H1).
CONFIG = {"lr": 0.1}


class SgdModuleDictRate(SgdClassRate):
    """A Dense stepping at ``CONFIG["lr"]``, a key of its module's dict."""

    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= CONFIG["lr"] * (self.X.T @ dY)
        self.b -= CONFIG["lr"] * dY.sum(axis=0)
        return dX


class SgdModuleDictRateSign(SgdModuleDictRate):
    def backward(self, dY):
        dX = -(dY @ self.W.T)  # BUG: the sign of dX
        self.W -= CONFIG["lr"] * (self.X.T @ dY)
        self.b -= CONFIG["lr"] * dY.sum(axis=0)
        return dX


class SgdStoresAndSteps(SgdClassRate):
    """A Dense that stores dW, db and steps with them at ``self.lr`` (tester13 M1): the stored ones are checked."""

    def __init__(self):
        super().__init__()
        self.lr = 0.1

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(axis=0)
        dX = dY @ self.W.T
        self.W -= self.lr * self.dW
        self.b -= self.lr * self.db
        return dX


class SgdStoresAndStepsBiasTwice(SgdStoresAndSteps):
    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(axis=0)
        dX = dY @ self.W.T
        self.W -= self.lr * self.dW
        self.b -= self.lr * self.db * 2  # BUG: steps b twice as far as the db it stores
        return dX


def _cs231n_sgd(w, dw, config=None):
    """CS231n's ``optim.sgd``: ``w -= config['learning_rate'] * dw``."""
    config = {} if config is None else config
    config.setdefault("learning_rate", 1e-2)
    w -= config["learning_rate"] * dw
    return w, config


class SgdPerParamConfigs(SgdClassRate):
    """A Dense stepping with CS231n's sgd and a config per parameter, ``self.configs['W']['learning_rate']``
    (tester13 H1)."""

    def __init__(self):
        super().__init__()
        self.configs = {"W": {"learning_rate": 0.1}, "b": {"learning_rate": 0.1}}

    def backward(self, dY):
        dX = dY @ self.W.T
        self.W, self.configs["W"] = _cs231n_sgd(self.W, self.X.T @ dY, self.configs["W"])
        self.b, self.configs["b"] = _cs231n_sgd(self.b, dY.sum(axis=0), self.configs["b"])
        return dX


class SgdPerParamConfigsMeanBias(SgdPerParamConfigs):
    def backward(self, dY):
        dX = dY @ self.W.T
        self.W, self.configs["W"] = _cs231n_sgd(self.W, self.X.T @ dY, self.configs["W"])
        self.b, self.configs["b"] = _cs231n_sgd(self.b, dY.mean(axis=0), self.configs["b"])  # BUG: the mean
        return dX


class SgdStoresAndStepsStoredOverN(SgdStoresAndSteps):
    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY / len(dY), dY.sum(axis=0)  # BUG: the stored dW divided by the batch size
        dX = dY @ self.W.T
        self.W -= self.lr * (self.X.T @ dY)  # the step itself is right
        self.b -= self.lr * self.db
        return dX


class SgdGradsDict:
    """A Dense with ``params`` and ``grads`` dicts whose backward fills grads and steps params at ``self.lr``
    (session 14, finding 1): the stored grads are checked beside the step."""

    ADAPT = True

    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((4, 3)) * 0.5, "b": rng.standard_normal(3) * 0.1}
        self.grads, self.lr = {}, 0.1

    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads["W"], self.grads["b"] = self.X.T @ dY, dY.sum(axis=0)
        dX = dY @ self.params["W"].T
        for k in self.params:
            self.params[k] -= self.lr * self.grads[k]
        return dX


class SgdGradsDictStoredMeanBias(SgdGradsDict):
    def backward(self, dY):
        self.grads["W"], self.grads["b"] = self.X.T @ dY, dY.mean(axis=0)  # BUG: the stored db is the mean
        dX = dY @ self.params["W"].T
        self.params["W"] -= self.lr * self.grads["W"]
        self.params["b"] -= self.lr * dY.sum(axis=0)  # the step itself is right
        return dX


class _SGD:
    """A module-level optimizer whose own method steps a layer at ``self.lr`` (session 14, finding 2)."""

    def __init__(self, lr):
        self.lr = lr

    def step(self, layer, dW, db):
        layer.W -= self.lr * dW
        layer.b -= self.lr * db


#: The optimizer a layer below calls in its backward, and the config another reads its rate from two keys deep.
OPT = _SGD(0.1)
NESTED_CONFIG = {"optim": {"lr": 0.1}}


class SgdGlobalOptimizer(SgdClassRate):
    """A Dense whose backward calls a module-level optimizer, ``OPT.step(self, dW, db)`` (session 14, finding 2)."""

    def backward(self, dY):
        dX = dY @ self.W.T
        OPT.step(self, self.X.T @ dY, dY.sum(axis=0))
        return dX


class SgdGlobalOptimizerMeanBias(SgdGlobalOptimizer):
    def backward(self, dY):
        dX = dY @ self.W.T
        OPT.step(self, self.X.T @ dY, dY.mean(axis=0))  # BUG: the mean over the batch, not the sum
        return dX


class SgdNestedConfigRate(SgdClassRate):
    """A Dense stepping at ``NESTED_CONFIG["optim"]["lr"]``, two keys into a module's dict (session 14, finding 2)."""

    def backward(self, dY):
        lr = NESTED_CONFIG["optim"]["lr"]
        dX = dY @ self.W.T
        self.W -= lr * (self.X.T @ dY)
        self.b -= lr * dY.sum(axis=0)
        return dX


class SgdNestedConfigRateSign(SgdNestedConfigRate):
    def backward(self, dY):
        lr = NESTED_CONFIG["optim"]["lr"]
        dX = dY @ self.W.T
        self.W += lr * (self.X.T @ dY)  # BUG: a step up the gradient (the sign of dW)
        self.b -= lr * dY.sum(axis=0)
        return dX


class _DenseParams:
    """A Dense without backward holding its weights in a ``params`` dict."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((4, 3)) * 0.5, "b": rng.standard_normal(3) * 0.1}

    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]


class SgdNestedWeights:
    """A model stepping ``self.layers[0].params['W']`` at ``self.lr`` (session 14, finding 2)."""

    ADAPT = True

    def __init__(self):
        self.layers, self.lr = [_DenseParams()], 0.1

    def forward(self, X):
        return self.layers[0].forward(X)

    def backward(self, dY):
        layer = self.layers[0]
        dX = dY @ layer.params["W"].T
        self.layers[0].params["W"] -= self.lr * (layer.X.T @ dY)
        self.layers[0].params["b"] -= self.lr * dY.sum(axis=0)
        return dX


class SgdNestedWeightsOverN(SgdNestedWeights):
    def backward(self, dY):
        layer = self.layers[0]
        dX = dY @ layer.params["W"].T
        self.layers[0].params["W"] -= self.lr * (layer.X.T @ dY) / len(dY)  # BUG: divided by the batch size
        self.layers[0].params["b"] -= self.lr * dY.sum(axis=0)
        return dX


class AdamDense:
    """An Adam step inside backward (tester14): not plain gradient descent, so only dX is checked (its steps
    undone after each backward: :func:`gradcheck._adapters._steps_undone`)."""

    ADAPT = True

    def __init__(self):
        rng = np.random.default_rng(1)
        self.W, self.b = rng.standard_normal((4, 3)) * 0.5, rng.standard_normal(3) * 0.5
        self.lr, self.t = 0.01, 0
        self.m = [np.zeros_like(self.W), np.zeros_like(self.b)]
        self.v = [np.zeros_like(self.W), np.zeros_like(self.b)]

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        dX = self.dx(dY)
        self.t += 1
        for p, g, m, v in zip((self.W, self.b), (self.X.T @ dY, dY.sum(0)), self.m, self.v):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            p -= self.lr * (m / (1 - 0.9**self.t)) / (np.sqrt(v / (1 - 0.999**self.t)) + 1e-8)
        return dX

    def dx(self, dY):
        return dY @ self.W.T


class AdamDenseSignDx(AdamDense):
    def dx(self, dY):
        return -dY @ self.W.T  # BUG: the sign of dX
