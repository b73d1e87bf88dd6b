"""Session 20b (tester20s): bugs hidden by parameters that start constant (gamma = ones, b = zeros, Wh = zeros), which
the check finds at drawn parameter values (:func:`gradcheck.diagnose.at_drawn_params`), and their correct
counterparts, which pass at both points."""

import numpy as np

INPUT = (5, 4)


class LNOnes:
    """LayerNorm over the last axis, gamma ones and beta zeros at init (attribute style)."""

    ADAPT = True

    def __init__(self, d=4):
        self.gamma, self.beta = np.ones(d), np.zeros(d)

    def forward(self, x):
        mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
        self.inv = 1 / np.sqrt(var + 1e-5)
        self.xhat = (x - mu) * self.inv
        return self.gamma * self.xhat + self.beta

    def backward(self, dy):
        self.dgamma, self.dbeta = (dy * self.xhat).sum(0), dy.sum(0)
        dxh, D = dy * self.gamma, dy.shape[1]
        return self.inv / D * (D * dxh - dxh.sum(1, keepdims=True) - self.xhat * (dxh * self.xhat).sum(1, keepdims=True))


class LNGammaForgot(LNOnes):
    def backward(self, dy):
        self.dgamma, self.dbeta = (dy * self.xhat).sum(0), dy.sum(0)
        dxh, D = dy, dy.shape[1]  # BUG: dy * gamma due (gamma = ones at init hides it)
        return self.inv / D * (D * dxh - dxh.sum(1, keepdims=True) - self.xhat * (dxh * self.xhat).sum(1, keepdims=True))


class LinearReLUZeroBias:
    """Linear + ReLU fused, b zeros at init."""

    ADAPT = True

    def __init__(self, n=4, m=3):
        self.W, self.b = np.random.default_rng(0).normal(0, .5, (n, m)), np.zeros(m)

    def forward(self, x):
        self.x, self.z = x, x @ self.W + self.b
        return np.maximum(self.z, 0)

    def backward(self, dy):
        da = dy * (self.z > 0)
        self.dW, self.db = self.x.T @ da, da.sum(0)
        return da @ self.W.T


class LinearReLUMaskNoBias(LinearReLUZeroBias):
    def forward(self, x):
        self.x, self.z = x, x @ self.W  # BUG: the mask read from X @ W, without b (zeros at init hide it)
        return np.maximum(self.z + self.b, 0)


class RNNStepZeroWh:
    """tanh(x Wx + h Wh + b), Wh and b zeros at init, two inputs."""

    INPUT = [(3, 2), (3, 4)]
    ADAPT = True

    def __init__(self, D=2, H=4):
        self.Wx, self.Wh, self.b = np.random.default_rng(0).normal(0, .3, (D, H)), np.zeros((H, H)), np.zeros(H)

    def forward(self, x, h):
        self.x, self.h = x, h
        self.hn = np.tanh(x @ self.Wx + h @ self.Wh + self.b)
        return self.hn

    def backward(self, dhn):
        da = dhn * (1 - self.hn**2)
        self.dWx, self.dWh, self.db = self.x.T @ da, self.h.T @ da, da.sum(0)
        return da @ self.Wx.T, da @ self.Wh.T


class RNNStepWhNotTransposed(RNNStepZeroWh):
    def backward(self, dhn):
        da = dhn * (1 - self.hn**2)
        self.dWx, self.dWh, self.db = self.x.T @ da, self.h.T @ da, da.sum(0)
        return da @ self.Wx.T, da @ self.Wh  # BUG: Wh.T due (Wh = zeros at init hides it)


class Affine:
    """y = gamma * x + beta per feature (params/grads dicts), gamma 1.5 (a constant) and beta zeros at init."""

    def __init__(self, d=4):
        self.params, self.grads = {"gamma": np.full(d, 1.5), "beta": np.zeros(d)}, {}

    def forward(self, x, training=False):
        self.x = x
        return x * self.params["gamma"] + self.params["beta"]

    def backward(self, dy):
        self.grads["gamma"], self.grads["beta"] = (dy * self.x).sum(0), dy.sum(0)
        return dy * self.params["gamma"]


class AffineBiasInDx(Affine):
    def backward(self, dy):
        self.grads["gamma"], self.grads["beta"] = (dy * self.x).sum(0), dy.sum(0)
        return dy * (self.params["gamma"] + self.params["beta"])  # BUG: beta has no part in dX (zeros hide it)


class TanhCache:
    """tanh, its output cached for backward."""

    INPUT = (6, 5)
    KWARGS = {"mode": "full"}

    def forward(self, x, training=False):
        self.y = np.tanh(x)
        return self.y

    def backward(self, dy):
        return dy * (1 - self.y**2)


class TanhFloat32Cache(TanhCache):
    def forward(self, x, training=False):
        self.y = np.tanh(x).astype(np.float32)  # BUG: a float32 cache: backward's 1 - y**2 at float32's precision
        return np.tanh(x)


class DropoutInverted:
    """params/grads dicts, forward(X, training): the mask drawn in eval, the identity in training (switch inverted)."""

    INPUT = (4, 3)

    def __init__(self, p=0.5):
        self.p, self.params, self.grads = p, {}, {}
        self.rng = np.random.default_rng(0)

    def forward(self, X, training=False):
        if not training:  # BUG: inverted; a dropout draws its mask in training
            self.mask = self.rng.random(X.shape) > self.p
            return X * self.mask / (1 - self.p)
        self.mask = None
        return X

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask / (1 - self.p)


class DropoutEvalScale:
    """forward(x, train_flg): inverted dropout whose eval forward multiplies by 1 - p (its backward the identity)."""

    INPUT = (6, 5)

    def __init__(self, p=0.3):
        self.p = p

    def forward(self, x, train_flg=True):
        self.train_flg = train_flg
        if train_flg:
            self.mask = np.random.rand(*x.shape) > self.p
            return x * self.mask / (1 - self.p)
        return x * (1 - self.p)  # BUG: inverted dropout is the identity in eval

    def backward(self, dy):
        return dy * self.mask / (1 - self.p) if self.train_flg else dy


class BNEval:
    """BatchNorm, both modes; eval reads running_mean = 0, running_var = 1 as built (attribute style)."""

    INPUT = (6, 4)
    ADAPT = True

    def __init__(self, d=4):
        self.gamma, self.beta = np.linspace(.5, 1.5, d), np.linspace(-.2, .3, d)
        self.running_mean, self.running_var = np.zeros(d), np.ones(d)

    def forward(self, x, training=False):
        self.training = training
        mu, var = (x.mean(0), x.var(0)) if training else (self.running_mean, self.running_var)
        self.inv = 1 / np.sqrt(var + 1e-5)
        self.xhat = (x - mu) * self.inv
        return self.gamma * self.xhat + self.beta

    def backward(self, dy):
        self.dgamma, self.dbeta = (dy * self.xhat).sum(0), dy.sum(0)
        dxh = dy * self.gamma
        if not self.training:
            return dxh * self.inv
        N = dy.shape[0]
        return self.inv / N * (N * dxh - dxh.sum(0) - self.xhat * (dxh * self.xhat).sum(0))


class BNEvalNoInv(BNEval):
    def backward(self, dy):
        self.dgamma, self.dbeta = (dy * self.xhat).sum(0), dy.sum(0)
        dxh = dy * self.gamma
        if not self.training:
            return dxh  # BUG: * self.inv (1/sqrt(1 + 1e-5) at the running var as built) missing
        N = dy.shape[0]
        return self.inv / N * (N * dxh - dxh.sum(0) - self.xhat * (dxh * self.xhat).sum(0))


class LinearSquare:
    """X @ W + b, (in, out) weights; checked with as many samples as outputs (3)."""

    INPUT = (3, 4)
    ADAPT = True

    def __init__(self, n=4, m=3):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((n, m)) * 0.2, rng.standard_normal(m)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(axis=0)
        return dY @ self.W.T


class LinearDbAxis(LinearSquare):
    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(axis=1)  # BUG: axis=0 (N == out, so the shape agrees)
        return dY @ self.W.T


def _sig(z):
    return 1 / (1 + np.exp(-z))


class LSTMCell:
    """One LSTM step (x, h, c) -> (h, c), the gates sliced i, f, o, g from one product."""

    INPUT = [(3, 2), (3, 4), (3, 4)]
    ADAPT = True

    def __init__(self, D=2, H=4):
        rng = np.random.default_rng(0)
        self.W, self.b, self.H = rng.normal(0, 0.3, (D + H, 4 * H)), rng.normal(0, 0.3, 4 * H), H

    def forward(self, x, h, c):
        H = self.H
        self.z = np.concatenate([x, h], 1)
        a = self.z @ self.W + self.b
        self.i, self.f, self.o, self.g = _sig(a[:, :H]), _sig(a[:, H:2 * H]), _sig(a[:, 2 * H:3 * H]), np.tanh(a[:, 3 * H:])
        self.c_prev, self.c = c, self.f * c + self.i * self.g
        self.tc = np.tanh(self.c)
        return self.o * self.tc, self.c

    def gates(self, di, df, do, dg):
        return [di * self.i * (1 - self.i), df * self.f * (1 - self.f), do * self.o * (1 - self.o),
                dg * (1 - self.g**2)]

    def backward(self, dh, dc):
        dc = dc + dh * self.o * (1 - self.tc**2)
        da = np.concatenate(self.gates(dc * self.g, dc * self.c_prev, dh * self.tc, dc * self.i), 1)
        self.dW, self.db = self.z.T @ da, da.sum(0)
        dz = da @ self.W.T
        D = dz.shape[1] - self.H
        return dz[:, :D], dz[:, D:], dc * self.f


class LSTMCellGateOrder(LSTMCell):
    def gates(self, di, df, do, dg):
        i, f, o, g = super().gates(di, df, do, dg)
        return [i, f, g, o]  # BUG: forward slices i, f, o, g


class Conv1D:
    """A valid 1-D convolution over the last axis, its loops over the output positions."""

    INPUT = (3, 7)
    ADAPT = True

    def __init__(self, k=3):
        self.w = np.random.default_rng(0).normal(size=k)

    def forward(self, x):
        self.x, k = x, len(self.w)
        return np.stack([x[:, i:i + k] @ self.w for i in range(x.shape[1] - k + 1)], 1)

    def positions(self, dy):
        return range(dy.shape[1])

    def backward(self, dy):
        k = len(self.w)
        dx, self.dw = np.zeros_like(self.x), np.zeros_like(self.w)
        for i in self.positions(dy):
            dx[:, i:i + k] += dy[:, i:i + 1] * self.w
            self.dw += dy[:, i] @ self.x[:, i:i + k]
        return dx


class Conv1DMissesLast(Conv1D):
    def positions(self, dy):
        return range(dy.shape[1] - 1)  # BUG: the last output position skipped


class BiasAdd:
    """x + b, b a vector of random values (params/grads dicts)."""

    INPUT = (4, 3)

    def __init__(self):
        self.params, self.grads = {"b": np.random.default_rng(1).standard_normal(3)}, {}

    def forward(self, x, training=False):
        return x + self.params["b"]

    def backward(self, dy):
        self.grads["b"] = dy.sum(axis=0)
        return dy


class BiasSumAll(BiasAdd):
    def backward(self, dy):
        self.grads["b"] = np.full_like(self.params["b"], dy.sum())  # BUG: dy.sum(axis=0)
        return dy


class SoftmaxT:
    """softmax(x / T), T = 2."""

    INPUT = (4, 3)
    ADAPT = True

    def __init__(self, T=2.0):
        self.T = T

    def forward(self, x):
        z = x / self.T
        e = np.exp(z - z.max(1, keepdims=True))
        self.y = e / e.sum(1, keepdims=True)
        return self.y

    def backward(self, dy):
        return self.y * (dy - (dy * self.y).sum(1, keepdims=True)) / self.T


class SoftmaxTNoInverse(SoftmaxT):
    def backward(self, dy):
        return self.y * (dy - (dy * self.y).sum(1, keepdims=True))  # BUG: / self.T missing


class RNNStepPreact(RNNStepZeroWh):
    """tanh(x Wx + h Wh + b), the weights drawn (none constant)."""

    def __init__(self, D=2, H=4):
        rng = np.random.default_rng(0)
        self.Wx, self.Wh, self.b = rng.normal(0, .6, (D, H)), rng.normal(0, .6, (H, H)), rng.normal(0, .6, H)


class RNNStepTanhPreact(RNNStepPreact):
    def forward(self, x, h):
        self.x, self.h = x, h
        self.a = x @ self.Wx + h @ self.Wh + self.b
        self.hn = np.tanh(self.a)
        return self.hn

    def backward(self, dhn):
        da = dhn * (1 - self.a**2)  # BUG: 1 - tanh(a)**2 = 1 - hn**2 due
        self.dWx, self.dWh, self.db = self.x.T @ da, self.h.T @ da, da.sum(0)
        return da @ self.Wx.T, da @ self.Wh.T
