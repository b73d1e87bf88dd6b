"""Training switches gradcheck must find and set in both modes (session 12: Y9, Y20, Y26, Z3, Z13, Y14, Y10).

Each correct layer has a buggy twin (``...Bug``) whose training branch of backward is wrong; the eval branch is
right, so a check of eval mode alone PASSes it.
"""

import os
from types import SimpleNamespace

import numpy as np

from . import switch_cfg as cfgmod

INPUT = (8, 6)
KWARGS = {}


class Drop:
    """Inverted dropout whose mode is its ``train`` argument."""

    def __init__(self, p=0.5, seed=0):
        self.p, self.rng, self.mask = p, np.random.default_rng(seed), None

    def forward(self, X, train=False):
        if not train:
            self.mask = None
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask


class DropBug(Drop):
    def backward(self, dY):
        return dY if self.mask is None else dY * (self.mask > 0)  # BUG: 1 / (1 - p) missing


def _drop(bug):
    return DropBug() if bug else Drop()


class _Net:
    """A model whose one sub-layer is a dropout; ``switch()`` reads the mode from where the student keeps it."""

    ADAPT = True
    BUG = False

    def __init__(self):
        self.drop = _drop(self.BUG)

    def backward(self, dY):
        return self.drop.backward(dY)


# Y9: a sub-layer's string switch (self.drop.mode) and dict switch (self.drop.drop_param['mode'])
class SubModeNet(_Net):
    def __init__(self):
        super().__init__()
        self.drop.mode = "test"

    def forward(self, X):
        if self.drop.mode == "train":
            return self.drop.forward(X, True)
        return self.drop.forward(X, False)


class SubModeNetBug(SubModeNet):
    BUG = True


class _ModeDrop(Drop):
    def __init__(self, bug=False):
        super().__init__()
        self.bug, self.mode = bug, "test"

    def forward(self, X):
        return super().forward(X, self.mode == "train")

    def backward(self, dY):
        return DropBug.backward(self, dY) if self.bug else super().backward(dY)


class SubOwnModeNet(_Net):
    def __init__(self):
        self.drop = _ModeDrop(self.BUG)

    def forward(self, X):
        return self.drop.forward(X)


class SubOwnModeNetBug(SubOwnModeNet):
    BUG = True


class SubParamNet(_Net):
    def __init__(self):
        super().__init__()
        self.drop.drop_param = {"mode": "test", "p": 0.5}

    def forward(self, X):
        return self.drop.forward(X, self.drop.drop_param["mode"] == "train")


class SubParamNetBug(SubParamNet):
    BUG = True


# Y20: a switch in another module (import cfgmod ... if cfgmod.TRAIN), a config object (self.cfg.training)
class CfgModuleNet(_Net):
    def forward(self, X):
        if cfgmod.TRAIN:
            return self.drop.forward(X, True)
        return self.drop.forward(X, False)


class CfgModuleNetBug(CfgModuleNet):
    BUG = True


class CfgObjectNet(_Net):
    def __init__(self):
        super().__init__()
        self.cfg = SimpleNamespace(training=False, lr=0.1)

    def forward(self, X):
        return self.drop.forward(X, train=self.cfg.training)


class CfgObjectNetBug(CfgObjectNet):
    BUG = True


# Z3: a module dict, an environment variable, any bool attribute, a state string, a set_training() global
CONFIG = {"train": False, "lr": 0.1}
_ACTIVE = False


def set_training(flag):
    global _ACTIVE
    _ACTIVE = flag


class ConfigDictNet(_Net):
    def forward(self, X):
        return self.drop.forward(X, CONFIG["train"])


class ConfigDictNetBug(ConfigDictNet):
    BUG = True


class EnvNet(_Net):
    def forward(self, X):
        return self.drop.forward(X, os.environ.get("TRAINING") == "1")


class EnvNetBug(EnvNet):
    BUG = True


class FittingNet(_Net):
    def __init__(self):
        super().__init__()
        self.fitting = False

    def forward(self, X):
        if self.fitting:
            return self.drop.forward(X, True)
        return self.drop.forward(X, False)


class FittingNetBug(FittingNet):
    BUG = True


class StateNet(_Net):
    def __init__(self):
        super().__init__()
        self.state = "inference"

    def forward(self, X):
        return self.drop.forward(X, self.state == "fitting")


class StateNetBug(StateNet):
    BUG = True


class SetTrainingNet(_Net):
    def forward(self, X):
        return self.drop.forward(X, _ACTIVE)


class SetTrainingNetBug(SetTrainingNet):
    BUG = True


# Y26: CS231n's FullyConnectedNet: self.bn_params[i]['mode'], compared in a module function forward calls
def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    if mode == "train":
        mu, var = x.mean(axis=0), x.var(axis=0)
    else:
        mu, var = bn_param["running_mean"], bn_param["running_var"]
    xhat = (x - mu) / np.sqrt(var + 1e-5)
    return gamma * xhat + beta, (mode, xhat, var, gamma)


def batchnorm_backward(dout, cache, naive=False):
    mode, xhat, var, gamma = cache
    dgamma, dbeta = np.sum(dout * xhat, axis=0), dout.sum(axis=0)
    dxhat, istd = dout * gamma, 1 / np.sqrt(var + 1e-5)
    if mode != "train" or naive:  # naive: the BUG of BNNetBug (mean and variance taken as constants)
        return dxhat * istd, dgamma, dbeta
    n = len(dout)
    return istd / n * (n * dxhat - dxhat.sum(axis=0) - xhat * np.sum(dxhat * xhat, axis=0)), dgamma, dbeta


class BNNet:
    """Two affine + batchnorm layers; the training loop sets every ``bn_param['mode']``."""

    ADAPT = True

    NAIVE = False

    def __init__(self, D=6, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {}
        for i in range(2):
            self.params[f"W{i}"] = rng.standard_normal((D, D)) / np.sqrt(D)
            self.params[f"gamma{i}"] = 1 + 0.3 * rng.standard_normal(D)
            self.params[f"beta{i}"] = 0.3 * rng.standard_normal(D)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.bn_params = [{"mode": "test", "running_mean": 0.1 * rng.standard_normal(D),
                           "running_var": 1 + 0.2 * rng.random(D)} for _ in range(2)]

    def forward(self, X):
        self.caches = []
        for i in range(2):
            A = X @ self.params[f"W{i}"]
            Y, c = batchnorm_forward(A, self.params[f"gamma{i}"], self.params[f"beta{i}"], self.bn_params[i])
            self.caches.append((X, c))
            X = Y
        return X

    def backward(self, dY):
        for i in (1, 0):
            X, c = self.caches[i]
            dA, self.grads[f"gamma{i}"], self.grads[f"beta{i}"] = batchnorm_backward(dY, c, self.NAIVE)
            self.grads[f"W{i}"] = X.T @ dA
            dY = dA @ self.params[f"W{i}"].T
        return dY


class BNNetBug(BNNet):
    NAIVE = True  # BUG: the training backward treats the batch mean and variance as constants


# Z13: Y is the same in both modes; backward has a training branch
class ScaleTrainBackward:
    """Y = X * w; in training mode backward computes dX through a second (here equal) path."""

    BUG = False

    def __init__(self, D=6, seed=0):
        self.params = {"w": 1 + 0.3 * np.random.default_rng(seed).standard_normal(D)}
        self.grads = {"w": np.zeros(D)}

    def forward(self, X, training=False):
        self.X, self.training = X, training
        return X * self.params["w"]

    def backward(self, dY):
        self.grads["w"] = np.sum(dY * self.X, axis=0)
        if self.training:
            return dY * self.params["w"] * (2.0 if self.BUG else 1.0)  # the BUG of ScaleTrainBackwardBug: x2
        return dY * self.params["w"]


class ScaleTrainBackwardBug(ScaleTrainBackward):
    BUG = True


# Y14: forward(X, training) does not pass training on; the sub-layer reads its own self.training
class _AttrDrop(Drop):
    def __init__(self, bug=False):
        super().__init__()
        self.bug, self.training = bug, False

    def forward(self, X):
        return super().forward(X, self.training)

    def backward(self, dY):
        return DropBug.backward(self, dY) if self.bug else super().backward(dY)


class ArgAndSubNet(_Net):
    def __init__(self):
        self.drop = _AttrDrop(self.BUG)

    def forward(self, X, training=False):
        return self.drop.forward(X)


class ArgAndSubNetBug(ArgAndSubNet):
    BUG = True


# Y10: a read-only training property over self._training
class PropDrop(Drop):
    ADAPT = True
    BUG = False

    def __init__(self):
        super().__init__()
        self._training = False

    @property
    def training(self):
        return self._training

    def forward(self, X):
        return super().forward(X, self.training)

    def backward(self, dY):
        return DropBug.backward(self, dY) if self.BUG else super().backward(dY)


class PropDropBug(PropDrop):
    BUG = True


# session 13 (H3): a boolean switch named with an eval stem (self.is_predicting) is True in eval mode; the bug is in
# that branch only, so reading it as a training switch (set False by --eval) PASSed it
class PredictingScale:
    """Y = c * X * w, c = 0.5 while ``self.is_predicting``; the Bug's backward is wrong only there."""

    ADAPT = True
    BUG = False

    def __init__(self, D=6, seed=0):
        self.params = {"w": 1 + 0.3 * np.random.default_rng(seed).standard_normal(D)}
        self.grads = {"w": np.zeros(D)}
        self.is_predicting = False

    def forward(self, X):
        self.X, self.c = X, 0.5 if self.is_predicting else 1.0
        return self.c * X * self.params["w"]

    def backward(self, dY):
        self.grads["w"] = self.c * np.sum(dY * self.X, axis=0)
        bad = 3.0 if self.BUG and self.is_predicting else 1.0  # the BUG of PredictingScaleBug: dX x3 when predicting
        return self.c * dY * self.params["w"] * bad


class PredictingScaleBug(PredictingScale):
    BUG = True


# session 13 (M7): Lightning's stage argument (stage="fit"/"validate") is a string switch
class StageScale(PredictingScale):
    """Y = c * X * w, c = 0.5 when ``stage == "validate"``; the Bug's backward forgets c there only."""

    def forward(self, X, stage="fit"):
        self.X, self.stage = X, stage
        self.c = 0.5 if stage == "validate" else 1.0
        return self.c * X * self.params["w"]

    def backward(self, dY):
        self.grads["w"] = self.c * np.sum(dY * self.X, axis=0)
        keep = 1.0 if self.BUG and self.stage == "validate" else self.c  # the BUG of StageScaleBug: c forgotten
        return keep * dY * self.params["w"]


class StageScaleBug(StageScale):
    BUG = True


# session 13 (M8): the switch read with getattr(self, name) and copied into self.flag, which forward overwrites
class GetattrFlagScale(PredictingScale):
    """Y = c * X * w, c = 0.5 while ``getattr(self, "is_eval")``, copied to ``self.flag``; the Bug's backward is
    wrong only there."""

    SWITCH = "is_eval"

    def __init__(self):
        super().__init__()
        setattr(self, self.SWITCH, False)

    def forward(self, X):
        self.X, self.flag = X, False
        self.flag = bool(getattr(self, self.SWITCH))
        self.c = 0.5 if self.flag else 1.0
        return self.c * X * self.params["w"]

    def backward(self, dY):
        self.grads["w"] = self.c * np.sum(dY * self.X, axis=0)
        bad = 3.0 if self.BUG and self.flag else 1.0  # the BUG of GetattrFlagScaleBug: dX x3 when is_eval
        return self.c * dY * self.params["w"] * bad


class GetattrFlagScaleBug(GetattrFlagScale):
    BUG = True


# session 14 (F1): a switch that selects no training mode (a string compared with other words, a boolean not
# named as a mode): each value is checked; the bug is in the branch of the value the layer does not start with
class KindScale(PredictingScale):
    """Y = c * X * w, c = 0.5 when ``self.kind == "half"`` (it starts "full"); the Bug's backward forgets c there."""

    def __init__(self):
        super().__init__()
        self.kind = "full"

    def forward(self, X):
        self.X = X
        self.c = 0.5 if self.kind == "half" else 1.0
        return self.c * X * self.params["w"]

    def backward(self, dY):
        self.grads["w"] = self.c * np.sum(dY * self.X, axis=0)
        keep = 1.0 if self.BUG and self.kind == "half" else self.c  # the BUG of KindScaleBug: c forgotten
        return keep * dY * self.params["w"]


class KindScaleBug(KindScale):
    BUG = True


class NoisyScale(PredictingScale):
    """Y = c * X * w, c = 0.5 while ``self.noisy`` (it starts False); the Bug's backward is x3 there only."""

    def __init__(self):
        super().__init__()
        self.noisy = False

    def forward(self, X):
        self.X, self.c = X, 0.5 if self.noisy else 1.0
        return self.c * X * self.params["w"]

    def backward(self, dY):
        self.grads["w"] = self.c * np.sum(dY * self.X, axis=0)
        bad = 3.0 if self.BUG and self.noisy else 1.0  # the BUG of NoisyScaleBug: dX x3 when noisy
        return self.c * dY * self.params["w"] * bad


class NoisyScaleBug(NoisyScale):
    BUG = True


# session 16 (tester15b H6): PyTorch's nn.ReLU(inplace=True): the in-place branch writes into X, as asked
class ReLUInplace:
    """ReLU whose ``inplace=True`` writes into X; the Bug reads its mask after the write (all True)."""

    BUG = False

    def forward(self, X, inplace=False):
        if inplace:
            self.mask = X > 0 if not self.BUG else None
            np.maximum(X, 0, out=X)
            if self.BUG:
                self.mask = X >= 0  # the BUG of ReLUInplaceBug: read after the write, every entry True
            return X
        self.mask = X > 0
        return np.maximum(X, 0)

    def backward(self, dY):
        return dY * self.mask


class ReLUInplaceBug(ReLUInplace):
    BUG = True


# session 16 (issue 10): two booleans forward reads, each combination checked; a bug in one combination
class SquareDouble:
    """Y = X ** 2 (square) or X, times 2 (double); the Bug's backward forgets the 2 of double when square."""

    BUG = False

    def forward(self, X, square=False, double=False):
        self.X, self.s, self.d = X, square, double
        Y = X ** 2 if square else X * 1.0
        return 2 * Y if double else Y

    def backward(self, dY):
        g = 2 * self.X * dY if self.s else dY * 1.0
        return g if self.BUG and self.s and self.d else 2 * g if self.d else g  # the BUG: x0.5 there


class SquareDoubleBug(SquareDouble):
    BUG = True


# session 16 (issue 10): a string compared with three values, each checked
class ActThree:
    """relu, tanh or sigmoid by ``activation``; the Bug's sigmoid backward is x2."""

    BUG = False

    def forward(self, X, activation="relu"):
        self.a, self.X = activation, X
        if activation == "relu":
            return np.maximum(X, 0)
        if activation == "tanh":
            return np.tanh(X)
        if activation == "sigmoid":
            return 1 / (1 + np.exp(-X))
        raise ValueError(activation)

    def backward(self, dY):
        if self.a == "relu":
            return dY * (self.X > 0)
        if self.a == "tanh":
            return dY * (1 - np.tanh(self.X) ** 2)
        s = 1 / (1 + np.exp(-self.X))
        return dY * s * (1 - s) * (2.0 if self.BUG else 1.0)  # the BUG of ActThreeBug: x2 at sigmoid


class ActThreeBug(ActThree):
    BUG = True


# session 19 (issue 10, session 18's leftover): self.enabled, a training-like toggle, is checked at each value; a
# has_* switch is configuration (a layer built with a bias keeps it), checked as built with the header's WARNING
class DropEnabled:
    """An inverted dropout switched off by ``self.enabled = False``; the Bug's disabled branch doubles dY."""

    ADAPT, K = True, 1

    def __init__(self, p=0.5):
        self.p, self.enabled = p, True

    def forward(self, X):
        if self.enabled:
            self.mask = (np.random.rand(*X.shape) > self.p) / (1 - self.p)
            return X * self.mask
        return X

    def backward(self, dY):
        return dY * self.mask if self.enabled else dY * self.K


class DropEnabledBug(DropEnabled):
    K = 2  # BUG: the disabled branch's backward doubles dY


class LinearHasBias:
    """Y = X @ W (+ b when ``self.has_bias``), weights (in, out), attribute style; the Bug's db is a mean."""

    ADAPT = True

    def __init__(self, n_in=6, n_out=3):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((n_in, n_out)), rng.standard_normal(n_out)
        self.has_bias = True

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b if self.has_bias else X @ self.W

    def backward(self, dY):
        self.dW = self.X.T @ dY
        if self.has_bias:
            self.db = self.bias_grad(dY)
        return dY @ self.W.T

    def bias_grad(self, dY):
        return dY.sum(axis=0)


class LinearHasBiasMeanBias(LinearHasBias):
    def bias_grad(self, dY):
        return dY.mean(axis=0)  # BUG


class LinearBiasArg(LinearHasBias):
    def __init__(self, n_in=6, n_out=3, bias=True):
        super().__init__(n_in, n_out)
        self.has_bias = bias


class LinearBiasArgMeanBias(LinearBiasArg):
    def bias_grad(self, dY):
        return dY.mean(axis=0)  # BUG
