"""Session 21 (tester21s): bugs in input ranges a standard-normal input never reaches (the clip of a ReLU6 at 6, a
hard sigmoid's at 3, a clamp at 4, softplus's threshold 20), found by the check again at inputs around forward's
constants (:func:`gradcheck.diagnose.at_straddled_inputs`); and correct layers with running statistics (a running
mean, an EMA, a running variance) whose eval forward after a training forward is not X times a mask (H1)."""

import numpy as np

INPUT = (6, 5)


class ReLU6:
    """min(max(x, 0), 6), correct (MobileNet)."""

    ADAPT = True

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        self.X = X
        return np.clip(X, 0, 6)

    def backward(self, dY):
        return dY * ((self.X > 0) & (self.X < 6))


class ReLU6NoUpper(ReLU6):
    def backward(self, dY):
        return dY * (self.X > 0)  # BUG: the clip at 6 forgotten: gradient 1 above 6


class HardSigmoid:
    """clip((x + 3) / 6, 0, 1), correct."""

    ADAPT = True

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        self.X = X
        return np.clip((X + 3) / 6, 0, 1)

    def backward(self, dY):
        return dY * ((self.X > -3) & (self.X < 3)) / 6


class HardSigmoidNoUpper(HardSigmoid):
    def backward(self, dY):
        return dY * (self.X > -3) / 6  # BUG: the upper clip at 3 forgotten


class SoftplusThreshold:
    """PyTorch's softplus with threshold 20 (linear above it), correct."""

    threshold = 20.0

    ADAPT = True

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        self.X = X
        return np.where(X > self.threshold, X, np.log1p(np.exp(np.minimum(X, self.threshold))))

    def backward(self, dY):
        s = 1 / (1 + np.exp(-np.minimum(self.X, self.threshold)))
        return dY * np.where(self.X > self.threshold, 1.0, s)


class SoftplusThresholdZero(SoftplusThreshold):
    def backward(self, dY):
        s = 1 / (1 + np.exp(-np.minimum(self.X, self.threshold)))
        return dY * np.where(self.X > self.threshold, 0.0, s)  # BUG: 0 above the threshold, where y = x


class ClampedExp:
    """exp(clip(x, -4, 4)), correct."""

    ADAPT = True

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        self.X = X
        self.Y = np.exp(np.clip(X, -4, 4))
        return self.Y

    def backward(self, dY):
        return dY * self.Y * (np.abs(self.X) < 4)


class ClampedExpNoMask(ClampedExp):
    def backward(self, dY):
        return dY * self.Y  # BUG: the clip's mask forgotten: gradient exp(4) beyond 4


class SoftplusThreshold40:
    """A softplus whose threshold 40 puts exp(40.1 + ...) ~ 1e18 into the check around it: correct, must PASS."""

    ADAPT = True

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        self.X = X
        return np.where(X > 40, X, np.log1p(np.exp(np.minimum(X, 40))))

    def backward(self, dY):
        return dY * np.where(self.X > 40, 1.0, 1 / (1 + np.exp(-np.minimum(self.X, 40))))


class Hardtanh:
    """clip(x, -1, 1) as np.maximum/np.minimum, correct (constants inside the drawn range: no second check)."""

    ADAPT = True

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        self.X = X
        return np.minimum(np.maximum(X, -1.0), 1.0)

    def backward(self, dY):
        return dY * ((self.X > -1) & (self.X < 1))


class RunningMeanCenter:
    """x - mean(x) in training (the running mean updated), x - running_mean in eval, correct (tester21s H1: once
    FAILed as "eval forward reuses the training mask")."""

    def __init__(self, D=5, momentum=0.9):
        self.running_mean, self.m = np.zeros(D), momentum
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        self.training = training
        if training:
            mu = X.mean(0)
            self.running_mean = self.m * self.running_mean + (1 - self.m) * mu
            return X - mu
        return X - self.running_mean

    def backward(self, dY):
        return dY - dY.mean(0) if self.training else dY


class MeanOnlyBN:
    """Mean-only batch norm (Salimans & Kingma 2016) with a bias and forward(X, train=True), correct."""

    def __init__(self, D=5, momentum=0.9):
        self.b, self.running_mean, self.momentum = np.zeros(D), np.zeros(D), momentum

    def forward(self, X, train=True):
        self.train = train
        if train:
            mu = X.mean(0)
            self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mu
        else:
            mu = self.running_mean
        return X - mu + self.b

    def backward(self, dY):
        self.db = dY.sum(0)
        return dY - dY.mean(0) if self.train else dY


class RunningVarScale:
    """x / sqrt(var(x) + eps) in training (the running variance, an EMA, updated), x / sqrt(running_var + eps) in
    eval; running_var starts at 1 and eps = 0, so a fresh layer's eval forward is X itself; correct."""

    def __init__(self, D=5, momentum=0.9):
        self.running_var, self.m = np.ones(D), momentum
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        self.training, self.X = training, X
        if training:
            self.var = X.var(0)
            self.running_var = self.m * self.running_var + (1 - self.m) * self.var
            self.xc = X - X.mean(0)
            return self.xc / np.sqrt(self.var)
        return X / np.sqrt(self.running_var)

    def backward(self, dY):
        if not self.training:
            return dY / np.sqrt(self.running_var)
        inv = 1 / np.sqrt(self.var)
        xh = self.xc * inv
        return inv * (dY - dY.mean(0) - xh * (dY * xh).mean(0))


# tester21s M2: a constant factor that equals the batch size (2) by chance, in layers whose factor is no 1/batch


class SquaredReLU:
    """relu(x)**2, correct; at a batch of 2."""

    ADAPT = True
    INPUT = (2, 5)

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        self.X = X
        return np.maximum(X, 0) ** 2

    def backward(self, dY):
        return dY * 2 * np.maximum(self.X, 0)


class SquaredReLUNo2(SquaredReLU):
    def backward(self, dY):
        return dY * np.maximum(self.X, 0)  # BUG: the 2 of the square forgotten (was "an extra 1/batch")


class SoftplusBetaExtraBeta:
    """softplus(beta x) / beta with beta = 2 at a batch of 2; backward multiplies by beta once too often."""

    ADAPT = True
    INPUT = (2, 5)

    def __init__(self, beta=2.0):
        self.params, self.grads, self.beta = {}, {}, beta

    def forward(self, X):
        self.X = X
        return np.logaddexp(0, self.beta * X) / self.beta

    def backward(self, dY):
        return dY * self.beta / (1 + np.exp(-self.beta * self.X))  # BUG: * self.beta (was "1/batch missing")


class Upsample2xMean:
    """Nearest-neighbour upsampling x2 whose backward averages each 2x2 block where it must sum (4 = Y.size /
    X.size was named "batch x positions")."""

    ADAPT = True
    INPUT = (2, 3, 3, 4)

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        return X.repeat(2, axis=2).repeat(2, axis=3)

    def backward(self, dY):
        N, C, H, W = dY.shape
        return dY.reshape(N, C, H // 2, 2, W // 2, 2).mean(axis=(3, 5))  # BUG: mean, not sum
