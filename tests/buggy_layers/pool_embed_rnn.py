"""MaxPool 2x2 (loops), Embedding, and one vanilla RNN step, as students write them."""

import numpy as np

INPUT = (3, 2, 4, 4)


class MaxPool:
    params, grads = {}, {}

    def forward(self, X, training=False):
        self.X = X
        N, C, H, W = X.shape
        return X.reshape(N, C, H // 2, 2, W // 2, 2).max(axis=(3, 5))

    def batch(self, dout):
        return range(len(dout))

    def where(self, k):
        return divmod(k, 2)  # row, column of the max in its 2x2 window

    def backward(self, dout):
        dX = np.zeros_like(self.X)
        for n in self.batch(dout):
            for c in range(dout.shape[1]):
                for i in range(dout.shape[2]):
                    for j in range(dout.shape[3]):
                        r, s = self.where(np.argmax(self.X[n, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2]))
                        dX[n, c, 2 * i + r, 2 * j + s] = dout[n, c, i, j]
        return dX


class MaxPoolMissesLast(MaxPool):
    def batch(self, dout):
        return range(len(dout) - 1)  # BUG


class MaxPoolSwappedArgmax(MaxPool):
    def where(self, k):
        s, r = divmod(k, 2)  # BUG: row and column swapped
        return r, s


class Embedding:
    INPUT = np.array([[0, 3, 1], [4, 0, 2], [5, 5, 1], [2, 3, 0]])

    def __init__(self, V=6, D=3, seed=0):
        self.params = {"W": np.random.default_rng(seed).standard_normal((V, D))}
        self.grads = {"W": np.zeros((V, D))}

    def forward(self, ids, training=False):
        self.ids = ids
        return self.params["W"][ids]

    def backward(self, dY):
        dW = np.zeros_like(self.params["W"])
        np.add.at(dW, self.ids, dY)
        self.grads["W"] = dW
        return None  # integer indices have no gradient


class EmbeddingMissesLast(Embedding):
    def backward(self, dY):
        dW = np.zeros_like(self.params["W"])
        for n in range(len(dY) - 1):  # BUG
            np.add.at(dW, self.ids[n], dY[n])
        self.grads["W"] = dW


class EmbeddingPlusTypo(Embedding):
    def backward(self, dY):
        dW = np.zeros_like(self.params["W"])
        for n, i in enumerate(self.ids.ravel()):
            dW[i] + dY.reshape(-1, dW.shape[1])[n]  # BUG: + where += is due
        self.grads["W"] = dW


class EmbeddingOverN(Embedding):
    def backward(self, dY):
        super().backward(dY)
        self.grads["W"] /= len(dY)  # BUG


class RNNStep:
    """h = tanh(x @ Wx + h_prev @ Wh + b); inputs x (N, D), h_prev (N, H)."""

    INPUT = [(4, 3), (4, 5)]

    def __init__(self, D=3, H=5, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"Wx": 0.5 * rng.standard_normal((D, H)), "Wh": 0.5 * rng.standard_normal((H, H)),
                       "b": 0.1 * rng.standard_normal(H)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, x, h_prev, training=False):
        self.x, self.h_prev = x, h_prev
        self.h = np.tanh(x @ self.params["Wx"] + h_prev @ self.params["Wh"] + self.params["b"])
        return self.h

    def backward(self, dh):
        dz = dh * (1 - self.h**2)
        self.grads["Wx"] = self.x.T @ dz
        self.grads["Wh"] = self.h_prev.T @ dz
        self.grads["b"] = dz.sum(axis=0)
        return dz @ self.params["Wx"].T, dz @ self.params["Wh"].T


class RNNWhSwapped(RNNStep):
    def backward(self, dh):
        ret = super().backward(dh)
        dz = dh * (1 - self.h**2)
        self.grads["Wh"] = dz.T @ self.h_prev  # BUG
        return ret


class RNNDhUntransposed(RNNStep):
    def backward(self, dh):
        dx, _ = super().backward(dh)
        return dx, (dh * (1 - self.h**2)) @ self.params["Wh"]  # BUG: Wh (square) not transposed


class RNNMeanBias(RNNStep):
    def backward(self, dh):
        ret = super().backward(dh)
        self.grads["b"] = (dh * (1 - self.h**2)).mean(axis=0)  # BUG
        return ret


class MaxPoolWholeWindow(MaxPool):
    def backward(self, dout):
        return dout.repeat(2, axis=2).repeat(2, axis=3)  # BUG: every element of the window gets dY


class EmbeddingBufferedAdd(Embedding):
    def backward(self, dY):
        dW = np.zeros_like(self.params["W"])
        dW[self.ids] += dY  # BUG: a repeated index keeps only one of its contributions
        self.grads["W"] = dW


class RNNTanhTwice(RNNStep):
    def backward(self, dh):
        dz = dh * (1 - np.tanh(self.h) ** 2)  # BUG: tanh of the cached output
        self.grads["Wx"] = self.x.T @ dz
        self.grads["Wh"] = self.h_prev.T @ dz
        self.grads["b"] = dz.sum(axis=0)
        return dz @ self.params["Wx"].T, dz @ self.params["Wh"].T


class MaxPoolOverlap:
    """2x2 windows with stride 1: the windows overlap, so a pixel can be the maximum of several."""

    INPUT = (2, 2, 5, 5)
    params, grads = {}, {}

    def forward(self, X, training=False):
        self.X = X
        N, C, H, W = X.shape
        out = np.zeros((N, C, H - 1, W - 1))
        for i in range(H - 1):
            for j in range(W - 1):
                out[:, :, i, j] = X[:, :, i:i + 2, j:j + 2].max(axis=(2, 3))
        return out

    def put(self, dX, n, c, r, s, g):
        dX[n, c, r, s] += g

    def backward(self, dout):
        dX = np.zeros_like(self.X)
        N, C, Ho, Wo = dout.shape
        for n in range(N):
            for c in range(C):
                for i in range(Ho):
                    for j in range(Wo):
                        r, s = divmod(int(np.argmax(self.X[n, c, i:i + 2, j:j + 2])), 2)
                        self.put(dX, n, c, i + r, j + s, dout[n, c, i, j])
        return dX


class MaxPoolOverlapOverwrites(MaxPoolOverlap):
    def put(self, dX, n, c, r, s, g):
        dX[n, c, r, s] = g  # BUG: = where += is due (overlapping windows share a maximum)


class EmbeddingConcat(Embedding):
    """makemore's lookup: each sample's embeddings concatenated, emb.view(n, -1)."""

    def forward(self, ids, training=False):
        self.ids = ids
        return self.params["W"][ids].reshape(len(ids), -1)

    def backward(self, dY):
        return super().backward(dY.reshape(*self.ids.shape, -1))


class EmbeddingConcatBufferedAdd(EmbeddingConcat):
    def backward(self, dY):
        dW = np.zeros_like(self.params["W"])
        dW[self.ids] += dY.reshape(*self.ids.shape, -1)  # BUG: buffered: a repeated id keeps one update
        self.grads["W"] = dW
