"""Session 37 (fix37a): planted bugs whose diagnosis named a pattern of another kind of layer.

- verify36 F8: an LSTM step whose dx is doubled, at a batch of 2 beside h of 4 units (2 = sqrt(4) = the batch size),
  was told "attention's 1/sqrt(d_k)"; it is a constant factor (the same at a batch of 3).
- corpus36 F5: Victor Zhou's softmax (cnn-from-scratch) uses the first nonzero entry of dY alone (a return inside the
  loop over dY), right for a one-hot dY only; it was told of max pooling's overlapping windows and "the first sample
  only". Here as Zhou writes it (one sample, its input flattened) and batched, one entry of each sample's row.

Session 37 (fix37d, corpus37 F3): a fully connected layer that flattens its input first, ``X.reshape(N, -1) @ W + b``
on X of shape (N, 2, 3), W square (6, 6), as CS7643's Linear; its dX missing ``.T`` (``(dY @ W).reshape(X.shape)``)
was "no known bug pattern", though the same line on a 2-D input is named (``transposed-weight``).
"""

import numpy as np

from .session36 import LSTMCellTorch

INPUT = (4, 5)
KWARGS = {}


class LSTMCellTorchDx2(LSTMCellTorch):
    """manualprop.LSTM's layout, one step, x (2, 2), h and c (2, 4): dx doubled."""

    INPUT = [(2, 2), (2, 4), (2, 4)]

    def backward(self, dh, dc):
        dx, dh_prev, dc_prev = super().backward(dh, dc)
        return 2.0 * dx, dh_prev, dc_prev  # BUG: dx doubled


class ZhouSoftmax:
    """Victor Zhou's Softmax layer (cnn-from-scratch's softmax.py): the input flattened, one sample, ``exp / sum``;
    its backward loops over dY's entries, each entry's contribution added (the correct counterpart)."""

    INPUT = (2, 2, 2)

    def __init__(self, input_len=8, nodes=3):
        rng = np.random.default_rng(4)
        self.params = {"weights": rng.standard_normal((input_len, nodes)) / input_len,
                       "biases": rng.standard_normal(nodes) * 0.1}
        self.grads = {}

    def forward(self, X):
        self.shape, self.x = X.shape, X.reshape(-1)
        self.t = self.x @ self.params["weights"] + self.params["biases"]
        e = np.exp(self.t)
        return e / e.sum()

    def _one(self, i, gradient):
        e = np.exp(self.t)
        S = e.sum()
        d_out_d_t = -e[i] * e / S ** 2
        d_out_d_t[i] = e[i] * (S - e[i]) / S ** 2
        d_t = gradient * d_out_d_t
        return np.outer(self.x, d_t), d_t, self.params["weights"] @ d_t

    def backward(self, dY):
        dW, db, dx = np.zeros_like(self.params["weights"]), np.zeros_like(self.params["biases"]), np.zeros_like(self.x)
        for i, gradient in enumerate(dY):
            if gradient == 0:
                continue
            a, b, c = self._one(i, gradient)
            dW, db, dx = dW + a, db + b, dx + c
        self.grads["weights"], self.grads["biases"] = dW, db
        return dx.reshape(self.shape)


class ZhouSoftmaxFirst(ZhouSoftmax):
    """Zhou's own: returns inside the loop, at dY's first nonzero entry."""

    def backward(self, dY):
        for i, gradient in enumerate(dY):
            if gradient == 0:
                continue
            dW, db, dx = self._one(i, gradient)
            self.grads["weights"], self.grads["biases"] = dW, db
            return dx.reshape(self.shape)  # BUG: the first nonzero entry of dY alone
        return np.zeros(self.shape)


class SoftmaxRows:
    """A batched softmax of a linear layer, Y = softmax(X @ W) row by row, backward written per sample and per
    output (the correct counterpart)."""

    def __init__(self):
        self.params = {"W": np.random.default_rng(5).standard_normal((5, 3)) * 0.5}
        self.grads = {}

    def forward(self, X):
        self.X = X
        z = X @ self.params["W"]
        e = np.exp(z - z.max(axis=1, keepdims=True))
        self.P = e / e.sum(axis=1, keepdims=True)
        return self.P

    def _term(self, n, j, g):
        p = self.P[n]
        dz = g * p[j] * ((np.arange(p.size) == j) - p)
        return np.outer(self.X[n], dz), self.params["W"] @ dz

    def backward(self, dY):
        dW, dX = np.zeros_like(self.params["W"]), np.zeros_like(self.X)
        for n in range(dY.shape[0]):
            for j in range(dY.shape[1]):
                a, b = self._term(n, j, dY[n, j])
                dW, dX[n] = dW + a, dX[n] + b
        self.grads["W"] = dW
        return dX


class SoftmaxRowsLast(SoftmaxRows):
    """Each sample's contribution assigned once per output: the last output's alone is left in each row."""

    def backward(self, dY):
        dW, dX = np.zeros_like(self.params["W"]), np.zeros_like(self.X)
        for n in range(dY.shape[0]):
            for j in range(dY.shape[1]):
                a, dX[n] = self._term(n, j, dY[n, j])  # BUG: dX[n] = where dX[n] += is due
                dW_n = a  # BUG: the same for the weights
            dW = dW + dW_n
        self.grads["W"] = dW
        return dX


class LinearFlat:
    """Y = X.reshape(N, -1) @ W + b, W of shape (6, 6) (in, out), dX reshaped back to X's shape."""

    INPUT = (8, 2, 3)

    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"W": 0.5 * rng.standard_normal((6, 6)), "b": rng.standard_normal(6)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        return X.reshape(len(X), -1) @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = self.X.reshape(len(self.X), -1).T @ dY
        self.grads["b"] = dY.sum(axis=0)
        return (dY @ self.params["W"].T).reshape(self.X.shape)


class LinearFlatDxNoT(LinearFlat):
    def backward(self, dY):
        super().backward(dY)
        return (dY @ self.params["W"]).reshape(self.X.shape)  # BUG: W where W.T is due (square W: the shapes agree)
