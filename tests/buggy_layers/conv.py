"""Conv2D (stride 1, padding 1) twice: the naive loops and im2col, as students write them."""

import numpy as np

INPUT = (3, 2, 4, 4)


class ConvNaive:
    def __init__(self, C=2, F=3, k=3, pad=1, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"W": 0.5 * rng.standard_normal((F, C, k, k)), "b": rng.standard_normal(F)}
        self.grads = {k_: np.zeros_like(v) for k_, v in self.params.items()}
        self.k, self.pad = k, pad

    def forward(self, X, training=False):
        W, b, k, p = self.params["W"], self.params["b"], self.k, self.pad
        self.xp = np.pad(X, ((0, 0), (0, 0), (p, p), (p, p)))
        N, _, Hp, Wp = self.xp.shape
        out = np.zeros((N, W.shape[0], Hp - k + 1, Wp - k + 1))
        for n in range(N):
            for i in range(out.shape[2]):
                for j in range(out.shape[3]):
                    out[n, :, i, j] = np.tensordot(W, self.xp[n, :, i:i + k, j:j + k], axes=3) + b
        return out

    def batch(self, dout):
        return range(len(dout))

    def window_grad(self, g, window):
        return g[:, None, None, None] * window

    def dx_kernel(self, W):
        return W

    def backward(self, dout):
        W, k, p = self.params["W"], self.k, self.pad
        dxp, dW = np.zeros_like(self.xp), np.zeros_like(W)
        for n in self.batch(dout):
            for i in range(dout.shape[2]):
                for j in range(dout.shape[3]):
                    g = dout[n, :, i, j]
                    dW += self.window_grad(g, self.xp[n, :, i:i + k, j:j + k])
                    dxp[n, :, i:i + k, j:j + k] += np.tensordot(g, self.dx_kernel(W), axes=1)
        self.grads["W"] = dW
        self.grads["b"] = self.db(dout)
        return dxp[:, :, p:-p, p:-p]

    def db(self, dout):
        return dout.sum(axis=(0, 2, 3))


class ConvNaiveMissesLast(ConvNaive):
    def batch(self, dout):
        return range(len(dout) - 1)  # BUG: range(N - 1)


class ConvNaiveFlipped(ConvNaive):
    def window_grad(self, g, window):
        return g[:, None, None, None] * window[:, ::-1, ::-1]  # BUG: kernel flipped (convolution)


class ConvNaiveFlippedDx(ConvNaive):
    def dx_kernel(self, W):
        return W[:, :, ::-1, ::-1]  # BUG: dx scattered through the flipped kernel (conv_backward_naive style)


class ConvNaiveMeanBias(ConvNaive):
    def db(self, dout):
        return dout.mean(axis=(0, 2, 3))  # BUG


class ConvNaiveBiasNotSummed(ConvNaive):
    def db(self, dout):
        return dout.sum(axis=(2, 3))  # BUG: the batch axis is not summed


class ConvIm2col(ConvNaive):
    """The same convolution through im2col: cols (C*k*k, N*Ho*Wo), W as (F, C*k*k)."""

    def forward(self, X, training=False):
        W, b, k, p = self.params["W"], self.params["b"], self.k, self.pad
        xp = np.pad(X, ((0, 0), (0, 0), (p, p), (p, p)))
        self.shape = xp.shape
        N, C, Hp, Wp = xp.shape
        Ho, Wo = Hp - k + 1, Wp - k + 1
        cols = np.empty((C, k, k, N, Ho, Wo))
        for i in range(k):
            for j in range(k):
                cols[:, i, j] = xp[:, :, i:i + Ho, j:j + Wo].transpose(1, 0, 2, 3)
        self.cols = cols.reshape(C * k * k, -1)
        out = W.reshape(len(W), -1) @ self.cols + b[:, None]
        return out.reshape(len(W), N, Ho, Wo).transpose(1, 0, 2, 3)

    def dout_rows(self, dout):
        return dout.transpose(1, 0, 2, 3).reshape(dout.shape[1], -1)

    def backward(self, dout):
        W, k, p = self.params["W"], self.k, self.pad
        N, C, Hp, Wp = self.shape
        Ho, Wo = Hp - k + 1, Wp - k + 1
        d = self.dout_rows(dout)
        self.grads["W"] = (d @ self.cols.T).reshape(W.shape)
        self.grads["b"] = d.sum(axis=1)
        dcols = (W.reshape(len(W), -1).T @ d).reshape(C, k, k, N, Ho, Wo)
        dxp = np.zeros((C, N, Hp, Wp))  # accumulated channel-major, like cols
        for i in range(k):
            for j in range(k):
                dxp[:, :, i:i + Ho, j:j + Wo] += dcols[:, i, j]
        return self.to_batch_major(dxp[:, :, p:-p, p:-p])

    def to_batch_major(self, dx):
        return dx.transpose(1, 0, 2, 3)


class ConvIm2colReshapeDx(ConvIm2col):
    def to_batch_major(self, dx):
        C, N, H, W = dx.shape
        return dx.reshape(N, C, H, W)  # BUG: reshape where transpose(1, 0, 2, 3) is due


class ConvIm2colDoutNoTranspose(ConvIm2col):
    def dout_rows(self, dout):
        return dout.reshape(dout.shape[1], -1)  # BUG: transpose(1, 0, 2, 3) missing before the reshape


class Conv1x1:
    """Y[n, f, h, w] = sum_c W[f, c] X[n, c, h, w] + b[f] (a 1x1 convolution written with einsum)."""

    INPUT = (2, 3, 4, 4)

    def __init__(self, C=3, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"W": rng.standard_normal((C, C)), "b": rng.standard_normal(C)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        return np.einsum("fc,nchw->nfhw", self.params["W"], X) + self.params["b"][None, :, None, None]

    def backward(self, dY):
        self.grads["W"] = np.einsum("nfhw,nchw->fc", dY, self.X)
        self.grads["b"] = dY.sum(axis=(0, 2, 3))
        return self.dx(dY)

    def dx(self, dY):
        return np.einsum("fc,nfhw->nchw", self.params["W"], dY)


class Conv1x1NoTranspose(Conv1x1):
    def dx(self, dY):
        return np.einsum("cf,nfhw->nchw", self.params["W"], dY)  # BUG: the transpose is missing ('fc' is due)


class ConvIm2colAssign(ConvIm2col):
    def backward(self, dout):
        W, k, p = self.params["W"], self.k, self.pad
        N, C, Hp, Wp = self.shape
        Ho, Wo = Hp - k + 1, Wp - k + 1
        d = self.dout_rows(dout)
        self.grads["W"] = (d @ self.cols.T).reshape(W.shape)
        self.grads["b"] = d.sum(axis=1)
        dcols = (W.reshape(len(W), -1).T @ d).reshape(C, k, k, N, Ho, Wo)
        dxp = np.zeros((C, N, Hp, Wp))
        for i in range(k):
            for j in range(k):
                dxp[:, :, i:i + Ho, j:j + Wo] = dcols[:, i, j]  # BUG: = where += is due (session 20): col2im
        return self.to_batch_major(dxp[:, :, p:-p, p:-p])
