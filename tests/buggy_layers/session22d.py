"""Session 22 (newuser22): the lessons' planted bugs that got "no known bug pattern" or "a constant factor", each
with its correct twin: a BPTT whose weight gradients are assigned (``=``) in the loop over the time steps where they
must accumulate (lesson 31's ``rnn_bug.py``), and an attention whose backward misses the scores' 1/sqrt(d_k)
(lesson 33's ``attention_bug.py``)."""

import numpy as np

INPUT = (2, 4, 3)


class RNN:
    """tanh RNN over X (N, T, D) from h = 0; returns every state (N, T, H)."""

    INPUT = (2, 4, 3)

    def __init__(self, D=3, H=4, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"W_ih": 0.6 * rng.standard_normal((H, D)), "W_hh": 0.6 * rng.standard_normal((H, H)),
                       "b": 0.1 * rng.standard_normal(H)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        p, (N, T, _) = self.params, X.shape
        h = np.zeros((N, p["W_hh"].shape[0]))
        self.X, self.hs, self.As = X, [h], []
        for t in range(T):
            a = X[:, t] @ p["W_ih"].T + h @ p["W_hh"].T + p["b"]
            h = np.tanh(a)
            self.hs.append(h)
            self.As.append(a)
        return np.stack(self.hs[1:], axis=1)

    def step(self, dA, t):
        """Step t's contribution to each weight's gradient."""
        return {"W_ih": dA.T @ self.X[:, t], "W_hh": dA.T @ self.hs[t], "b": dA.sum(axis=0)}

    def backward(self, dY):
        p, T = self.params, dY.shape[1]
        for g in self.grads.values():
            g[...] = 0
        dX, dh_next = np.zeros_like(self.X), np.zeros_like(self.hs[0])
        for t in reversed(range(T)):
            dA = (dY[:, t] + dh_next) / np.cosh(self.As[t]) ** 2
            for k, v in self.step(dA, t).items():
                self.grads[k] += v
            dX[:, t] = dA @ p["W_ih"]
            dh_next = dA @ p["W_hh"]
        return dX


class RNNStepsOverwrite(RNN):
    def backward(self, dY):
        p, T = self.params, dY.shape[1]
        dX, dh_next = np.zeros_like(self.X), np.zeros_like(self.hs[0])
        for t in reversed(range(T)):
            dA = (dY[:, t] + dh_next) / np.cosh(self.As[t]) ** 2
            for k, v in self.step(dA, t).items():
                self.grads[k] = v  # BUG: = where += is due: step 0's contribution alone is left
            dX[:, t] = dA @ p["W_ih"]
            dh_next = dA @ p["W_hh"]
        return dX


class Attention:
    """softmax(Q K^T / sqrt(d)) V for Q (N, Tq, d), K (N, Tk, d), V (N, Tk, dv); backward -> (dQ, dK, dV)."""

    INPUT = [(2, 4, 3), (2, 5, 3), (2, 5, 6)]
    MISSING = 1.0  # what backward multiplies dS by beside the scale

    def forward(self, Q, K, V, training=False):
        self.Q, self.K, self.V = Q, K, V  # the scale is not stored: forward and backward compute it
        S = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])
        e = np.exp(S - S.max(axis=-1, keepdims=True))
        self.P = e / e.sum(axis=-1, keepdims=True)
        return self.P @ V

    def backward(self, dY):
        P = self.P
        dP = dY @ self.V.swapaxes(-1, -2)
        dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True)) / np.sqrt(self.Q.shape[-1]) * self.MISSING
        return dS @ self.K, dS.swapaxes(-1, -2) @ self.Q, P.swapaxes(-1, -2) @ dY


class AttentionNoScaleBackward(Attention):
    MISSING = np.sqrt(3.0)  # BUG: backward leaves out the 1/sqrt(d_k) = 1/sqrt(3) of the scores


class AttentionScaleTwice(Attention):
    MISSING = 1 / np.sqrt(3.0)  # BUG: backward applies the 1/sqrt(d_k) of the scores twice
