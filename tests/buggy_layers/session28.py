"""Session 28 (session 27's caught-but-unnamed bugs, tester27s): Berkeley CS189's channels-last layers (X of shape
(N, H, W, C), kernels (kh, kw, cin, cout)), written with its loops, and a CS189 FullyConnected whose activation's
derivative is taken at the output; each bug ONE edit of the correct layer above it."""

import numpy as np

from .conv import ConvNaive
from .pool_embed_rnn import MaxPool

INPUT = (2, 5, 5, 2)


class ConvNHWC:
    """CS189's Conv2D (stride 1, padding 1): X (N, H, W, C), W (kh, kw, cin, cout), b (1, cout); correct."""

    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"W": 0.5 * rng.standard_normal((3, 3, 2, 3)), "b": rng.standard_normal((1, 3))}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        W, b = self.params["W"], self.params["b"]
        self.X = np.pad(X, ((0, 0), (1, 1), (1, 1), (0, 0)))
        N, Hp, Wp, _ = self.X.shape
        out = np.zeros((N, Hp - 2, Wp - 2, W.shape[3]))
        for i in range(Hp - 2):
            for j in range(Wp - 2):
                out[:, i, j, :] = np.tensordot(self.X[:, i:i + 3, j:j + 3, :], W, axes=3) + b
        return out

    def dw_window(self, dW, n, window, dz):
        dW[:, :, :, n] += np.sum(window * dz, axis=0)

    def dx_kernel(self, W, n):
        return W[:, :, :, n]

    def backward(self, dY):
        W = self.params["W"]
        dXp, dW = np.zeros_like(self.X), np.zeros_like(W)
        for i in range(dY.shape[1]):
            for j in range(dY.shape[2]):
                for n in range(W.shape[3]):
                    dz = dY[:, i:i + 1, j:j + 1, None, n]
                    self.dw_window(dW, n, self.X[:, i:i + 3, j:j + 3, :], dz)
                    dXp[:, i:i + 3, j:j + 3, :] += self.dx_kernel(W, n) * dz
        self.grads["W"], self.grads["b"] = dW, dY.sum(axis=(0, 1, 2)).reshape(1, -1)
        return dXp[:, 1:-1, 1:-1, :]


class ConvNHWCdWAssigned(ConvNHWC):
    """tester27s c189a-conv-dw-noacc: dW[..., n] assigned in the loop over positions (the last one survives)."""

    def dw_window(self, dW, n, window, dz):
        dW[:, :, :, n] = np.sum(window * dz, axis=0)  # BUG: = where += is due


class ConvNHWCFlippedDx(ConvNHWC):
    """tester27s c189a-conv-dx-flip: dX scattered through the kernel flipped in its spatial axes, (kh, kw) first."""

    def dx_kernel(self, W, n):
        return W[::-1, ::-1, :, n]  # BUG: flipped


class ConvNHWCFlippedDw(ConvNHWC):
    """dW flipped in its spatial axes, the kernel laid out (kh, kw, cin, cout)."""

    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["W"] = self.grads["W"][::-1, ::-1]  # BUG: flipped
        return dX


class ConvNaiveDwAssigned(ConvNaive):
    """The channels-first naive convolution (lesson 20's loops) with ``dW = ...`` in the loop over samples and
    positions: the last sample's last window survives."""

    INPUT = (3, 2, 4, 4)

    def backward(self, dout):
        W, k, p = self.params["W"], self.k, self.pad
        dxp, dW = np.zeros_like(self.xp), np.zeros_like(W)
        for n in range(len(dout)):
            for i in range(dout.shape[2]):
                for j in range(dout.shape[3]):
                    g = dout[n, :, i, j]
                    dW = g[:, None, None, None] * self.xp[n, :, i:i + k, j:j + k]  # BUG: = where += is due
                    dxp[n, :, i:i + k, j:j + k] += np.tensordot(g, W, axes=1)
        self.grads["W"], self.grads["b"] = dW, dout.sum(axis=(0, 2, 3))
        return dxp[:, :, p:-p, p:-p]


class PoolNHWC:
    """CS189's Pool2D in max mode (2x2 windows, stride 1) on (N, H, W, C), routing by argmax; correct."""

    INPUT = (2, 5, 5, 3)

    def forward(self, X, training=False):
        self.X = X
        N, H, W_, C = X.shape
        out = np.zeros((N, H - 1, W_ - 1, C))
        for i in range(H - 1):
            for j in range(W_ - 1):
                out[:, i, j, :] = X[:, i:i + 2, j:j + 2, :].max(axis=(1, 2))
        return out

    def pick(self, flat):
        return np.argmax(flat, axis=1)

    def backward(self, dY):
        X = self.X
        N, _, _, C = X.shape
        dX = np.zeros_like(X)
        n_idx, c_idx = np.meshgrid(np.arange(N), np.arange(C), indexing="ij")
        for i in range(dY.shape[1]):
            for j in range(dY.shape[2]):
                window = X[:, i:i + 2, j:j + 2, :].reshape(N, 4, C)
                k = self.pick(window)
                dX[n_idx, i + k // 2, j + k % 2, c_idx] += dY[:, i, j, :]
        return dX


class PoolNHWCArgmin(PoolNHWC):
    """tester27s c189-pool-max-argmin: each window's dY routed to its smallest entry."""

    def pick(self, flat):
        return np.argmin(flat, axis=1)  # BUG: argmin where argmax is due


class MaxPoolArgmin(MaxPool):
    """The channels-first max pooling of pool_embed_rnn.py routed to each window's minimum (numpy-ml's
    ``np.argwhere(xi == np.min(xi))`` of tester27s npml-pool-max-b8)."""

    INPUT = (3, 2, 4, 4)

    def backward(self, dout):
        dX = np.zeros_like(self.X)
        for n in range(dout.shape[0]):
            for c in range(dout.shape[1]):
                for i in range(dout.shape[2]):
                    for j in range(dout.shape[3]):
                        r, s = divmod(np.argmin(self.X[n, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2]), 2)  # BUG: argmin
                        dX[n, c, 2 * i + r, 2 * j + s] = dout[n, c, i, j]
        return dX


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


#: CS189's activations as ``(forward, derivative at the activation's input)``.
_ACTS = {"sigmoid": (_sigmoid, lambda z: _sigmoid(z) * (1 - _sigmoid(z))),
         "tanh": (np.tanh, lambda z: 1 - np.tanh(z) ** 2),
         "arctan": (np.arctan, lambda z: 1 / (z ** 2 + 1))}


class FCAct:
    """CS189's FullyConnected: Z = X W + b, Y = act(Z), backward dZ = act'(Z) * dY (parameters/gradients dicts)."""

    ADAPT = True
    INPUT = (8, 5)
    ACT = "sigmoid"

    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.parameters = {"W": 0.5 * rng.standard_normal((5, 3)), "b": 0.1 * rng.standard_normal((1, 3))}
        self.gradients = {k: np.zeros_like(v) for k, v in self.parameters.items()}

    def forward(self, X, training=False):
        self.X = X
        self.Z = X @ self.parameters["W"] + self.parameters["b"]
        self.Y = _ACTS[self.ACT][0](self.Z)
        return self.Y

    def dZ(self, dY):
        return _ACTS[self.ACT][1](self.Z) * dY

    def backward(self, dY):
        dZ = self.dZ(dY)
        self.gradients["W"], self.gradients["b"] = self.X.T @ dZ, dZ.sum(axis=0, keepdims=True)
        return dZ @ self.parameters["W"].T


class FCTanh(FCAct):
    ACT = "tanh"


class FCArctan(FCAct):
    ACT = "arctan"


class FCSigmoidAtOutput(FCAct):
    """tester27s c189a-fc-sigmoid-act-out: ``self.activation.backward(self.activation(Z), dY)``."""

    def dZ(self, dY):
        return _ACTS[self.ACT][1](self.Y) * dY  # BUG: the derivative at Y = act(Z), not at Z


class FCTanhAtOutput(FCTanh):
    """tester27s c189a-fc-tanh-act-out."""

    def dZ(self, dY):
        return _ACTS[self.ACT][1](self.Y) * dY  # BUG: the derivative at Y = act(Z), not at Z


class FCArctanAtOutput(FCArctan):
    def dZ(self, dY):
        return _ACTS[self.ACT][1](self.Y) * dY  # BUG: the derivative at Y = act(Z), not at Z


class FCSigmoidDerivIsS(FCAct):
    """tester27s npml-fc-sigmoid-a0: sigmoid's derivative written as s (numpy-ml's ``grad`` returning fn_x)."""

    def dZ(self, dY):
        return self.Y * dY  # BUG: s where s * (1 - s) is due


class FCTanhOneMinusY(FCTanh):
    """tester27s npml-fc-tanh-a2: tanh's derivative written 1 - t."""

    def dZ(self, dY):
        return (1 - self.Y) * dY  # BUG: 1 - t where 1 - t**2 is due
