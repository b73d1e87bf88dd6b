"""Deep Learning from Scratch vol. 2's TwoLayerNet, a model ``forward(x, t) -> loss`` with zero biases (session 13,
tester12 M3), read as ``gradcheck check --targets labels:3`` reads it (``TARGETS``: t held fixed, then
:func:`gradcheck._adapters.adapt`): its zero output bias, which softmax sees only up to one shift of all its
entries, is a weight forward uses; a real bug is named whether or not the loss adds an eps inside its log."""

import numpy as np

INPUT = (5, 4)


class SoftmaxWithLoss:
    EPS = 0.0

    def forward(self, x, t):
        self.t = t
        x = x - x.max(axis=1, keepdims=True)
        e = np.exp(x)
        self.y = e / e.sum(axis=1, keepdims=True)
        return -np.log(self.y[np.arange(len(t)), t] + self.EPS).mean()

    def backward(self, dout=1):
        dx = self.y.copy()
        dx[np.arange(len(self.t)), self.t] -= 1
        return dx * dout / len(self.t)


class SoftmaxWithLossEps(SoftmaxWithLoss):
    EPS = 1e-7  # the book's cross_entropy_error: the gradient of -log(y) differs by about eps/y


class Affine:
    def __init__(self, W, b):
        self.params, self.grads = [W, b], [np.zeros_like(W), np.zeros_like(b)]

    def forward(self, x):
        self.x = x
        W, b = self.params
        return x @ W + b

    def backward(self, dout):
        W, _ = self.params
        self.grads[0][...] = self.x.T @ dout
        self.grads[1][...] = dout.sum(axis=0)
        return dout @ W.T


class TwoLayerNet:
    ADAPT = True  # read as `check` reads it (tests.buggy_layers.load)
    TARGETS = np.array([0, 2, 1, 1, 0])  # --targets labels:3
    LOSS = SoftmaxWithLoss

    def __init__(self):
        rng = np.random.default_rng(0)
        self.layers = [Affine(rng.normal(size=(4, 6)), np.zeros(6)), Affine(rng.normal(size=(6, 3)), np.zeros(3))]
        self.loss_layer = self.LOSS()
        self.params, self.grads = [], []
        for layer in self.layers:
            self.params += layer.params
            self.grads += layer.grads

    def forward(self, x, t):
        for layer in self.layers:
            x = layer.forward(x)
        return self.loss_layer.forward(x, t)

    def backward(self, dout=1):
        dout = self.loss_layer.backward(dout)
        for layer in reversed(self.layers):
            dout = layer.backward(dout)
        return dout


class TwoLayerNetForgotMean(TwoLayerNet):
    def backward(self, dout=1):
        dout = self.loss_layer.backward(dout) * len(self.loss_layer.t)  # BUG: the batch mean's 1/N undone
        for layer in reversed(self.layers):
            dout = layer.backward(dout)
        return dout


class TwoLayerNetEpsForgotMean(TwoLayerNetForgotMean):
    LOSS = SoftmaxWithLossEps


class Sigmoid:
    def __init__(self):
        self.params, self.grads = [], []

    def forward(self, x):
        self.out = 1 / (1 + np.exp(-x))
        return self.out

    def backward(self, dout):
        return dout * (1.0 - self.out) * self.out


class SigmoidNoOut(Sigmoid):
    def backward(self, dout):
        return dout * (1.0 - self.out)  # BUG: the factor out of out * (1 - out) missing


class ConfidentSigmoidNet(TwoLayerNet):
    """tester13 ConfidentNet: Affine, Sigmoid, Affine with the output weights x30 (probabilities near 0, where an
    eps inside the log changes the gradient most)."""

    SIGMOID = Sigmoid

    def __init__(self):
        super().__init__()
        self.layers.insert(1, self.SIGMOID())
        self.layers[2].params[0] *= 30  # in place: the model's params list holds the same array


class ConfidentSigmoidNetEpsNoOut(ConfidentSigmoidNet):
    """The sigmoid's bug beside a log(y + 1e-7) at high confidence: the sub-layer is named."""

    SIGMOID = SigmoidNoOut
    LOSS = SoftmaxWithLossEps
