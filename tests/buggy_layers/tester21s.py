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


# tester21s M4: a time-major RNN (T, N, D) whose backward takes the last step's dY alone


class TimeMajorRNN:
    """h_t = tanh(x_t Wx + h_{t-1} Wh + b) over axis 0 (time), all states returned (T, N, H), correct."""

    ADAPT = True
    INPUT = (4, 3, 2)

    def __init__(self, D=2, H=3):
        rng = np.random.default_rng(0)
        self.Wx = rng.standard_normal((D, H)) / np.sqrt(D)
        self.Wh = rng.standard_normal((H, H)) / np.sqrt(H)
        self.b = rng.standard_normal(H) * 0.1

    def forward(self, X):
        T, N, _ = X.shape
        self.X, self.hs = X, np.zeros((T + 1, N, self.Wh.shape[0]))
        for t in range(T):
            self.hs[t + 1] = np.tanh(X[t] @ self.Wx + self.hs[t] @ self.Wh + self.b)
        return self.hs[1:].copy()

    def _back(self, dY, last_only):
        self.dWx, self.dWh, self.db = np.zeros_like(self.Wx), np.zeros_like(self.Wh), np.zeros_like(self.b)
        dX, dh = np.zeros_like(self.X), np.zeros_like(dY[0])
        for t in reversed(range(dY.shape[0])):
            dh = (dY[-1] if t == dY.shape[0] - 1 else dh) if last_only else dh + dY[t]
            da = dh * (1 - self.hs[t + 1] ** 2)
            self.dWx += self.X[t].T @ da
            self.dWh += self.hs[t].T @ da
            self.db += da.sum(0)
            dX[t] = da @ self.Wx.T
            dh = da @ self.Wh.T
        return dX

    def backward(self, dY):
        return self._back(dY, False)


class TimeMajorRNNLastStepOnly(TimeMajorRNN):
    def backward(self, dY):
        return self._back(dY, True)  # BUG: dh = dY[-1] before the loop; dY[t] of the other steps never added


# tester21s M1: forward(logits, y) with y integer (--indices 1:4), backward returning dlogits alone


class SelectLogProb:
    """log_softmax(logits)[n, y[n]], correct; backward returns the float input's gradient alone."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, logits, y):
        z = logits - logits.max(1, keepdims=True)
        self.p, self.y = np.exp(z) / np.exp(z).sum(1, keepdims=True), y
        return np.log(self.p[np.arange(len(y)), y])

    def backward(self, dY):
        d = -self.p * dY[:, None]
        d[np.arange(len(self.y)), self.y] += dY
        return d


class SelectLogProbNoSoftmaxTerm(SelectLogProb):
    def backward(self, dY):
        d = np.zeros_like(self.p)
        d[np.arange(len(self.y)), self.y] = dY  # BUG: -p * dY forgotten
        return d


# tester21s M3: a CS231n pair whose forward returns cache None and whose backward needs nothing


def posadd_forward(x, P):
    """x (N, T, D) + P (T, D)."""
    return x + P[None], None


def posadd_backward(dout, cache):
    return dout, dout.sum(0)


def posaddmean_forward(x, P):
    return x + P[None], None


def posaddmean_backward(dout, cache):
    return dout, dout.mean(0)  # BUG: the mean over the batch where P's gradient sums


INPUTS = {"posadd": [(2, 3, 4), (3, 4)], "posaddmean": [(2, 3, 4), (3, 4)]}  # as test_cli_tester21s checks them


# tester21s M6: a loss FAIL with no pattern gets the layers' fallback line


class SmoothL1Beta2NoBeta:
    """Smooth L1 with beta = 2; backward's quadratic region returns d where d / beta is due."""

    def __init__(self, beta=2.0):
        self.beta = beta

    def forward(self, y_pred, y_true):
        self.d = y_pred - y_true
        a = np.abs(self.d)
        return np.mean(np.where(a < self.beta, 0.5 * self.d**2 / self.beta, a - 0.5 * self.beta))

    def backward(self):
        return np.where(np.abs(self.d) < self.beta, self.d, np.sign(self.d)) / self.d.size  # BUG: d, not d / beta


# tester21s M7: an embedding bag (the mean of L lookups per sample) whose backward writes dW[ids] += (buffered)


class EmbeddingBagMean:
    """W[ids].mean(1) for ids (N, L), correct (np.add.at)."""

    ADAPT = True
    INPUT = np.array([[0, 3, 1], [1, 0, 2], [3, 3, 1], [2, 3, 0], [1, 1, 2]])

    def __init__(self, V=4, D=3):
        self.params, self.grads = {"W": np.random.default_rng(0).standard_normal((V, D))}, {}

    def forward(self, ids):
        self.ids = ids
        return self.params["W"][ids].mean(1)

    def backward(self, dY):
        dW = np.zeros_like(self.params["W"])
        np.add.at(dW, self.ids, np.repeat(dY[:, None, :], self.ids.shape[1], axis=1) / self.ids.shape[1])
        self.grads["W"] = dW


class EmbeddingBagMeanFancyAssign(EmbeddingBagMean):
    def backward(self, dY):
        dW = np.zeros_like(self.params["W"])
        dW[self.ids] += dY[:, None, :] / self.ids.shape[1]  # BUG: buffered: one update per repeated row
        self.grads["W"] = dW


# tester21s L1: float32 parameters warned once each, with the layer's name


class LinearF32:
    """X @ W + b with W and b float32 (attribute style), correct."""

    def __init__(self, i=5, o=3):
        self.W = np.random.default_rng(0).standard_normal((i, o)).astype(np.float32)
        self.b = np.zeros(o, dtype=np.float32)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        return dY @ self.W.T


# tester21s L4: a slice start off by one in backward's scatter (was "two pieces joined in the wrong order")


class EveryOther:
    """(3 X)[:, ::2], correct."""

    ADAPT = True
    INPUT = (4, 6)

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        self.shape = X.shape
        return (X * 3)[:, ::2]

    def backward(self, dY):
        dX = np.zeros(self.shape)
        dX[:, ::2] = 3 * dY
        return dX


class EveryOtherOffByOne(EveryOther):
    def backward(self, dY):
        dX = np.zeros(self.shape)
        dX[:, 1::2] = 3 * dY  # BUG: [1::2] where [::2] is due
        return dX


class LogCoshTanh2:
    """mean(log(cosh(d))); backward's tanh(2 d) where tanh(d) is due: no known pattern (session 22: the
    fallback line's example, SmoothL1Beta2NoBeta now being named huber-branch-factor)."""

    def forward(self, y_pred, y_true):
        self.d = y_pred - y_true
        return np.mean(np.log(np.cosh(self.d)))

    def backward(self):
        return np.tanh(2 * self.d) / self.d.size  # BUG: tanh(2 d), not tanh(d)
