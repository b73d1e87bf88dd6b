"""A vanilla RNN over a whole sequence (session 16, tester15 L3), ``forward(xs, h0) -> hs`` with ``xs`` (N, T, D),
``hs`` (N, T, H), and the bug of a backward that does not add the gradient coming back from the next step through
the hidden state (``dprev``, ``dh_next``) to each step's upstream gradient."""

import numpy as np

INPUT = [(3, 4, 2), (3, 3)]


class RNN:
    def __init__(self, D=2, H=3, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"Wx": 0.7 * rng.standard_normal((D, H)), "Wh": 0.7 * rng.standard_normal((H, H)),
                       "b": 0.1 * rng.standard_normal(H)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, xs, h0, training=False):
        self.xs, self.hs = xs, []
        h = h0
        for t in range(xs.shape[1]):
            self.hs.append(h)
            h = np.tanh(xs[:, t] @ self.params["Wx"] + h @ self.params["Wh"] + self.params["b"])
        self.hs.append(h)
        return np.stack(self.hs[1:], axis=1)

    def step_backward(self, dh, t):
        dz = dh * (1 - self.hs[t + 1] ** 2)
        self.grads["Wx"] += self.xs[:, t].T @ dz
        self.grads["Wh"] += self.hs[t].T @ dz
        self.grads["b"] += dz.sum(axis=0)
        return dz @ self.params["Wx"].T, dz @ self.params["Wh"].T

    def backward(self, dhs):
        for g in self.grads.values():
            g[...] = 0
        dxs, dprev = np.zeros_like(self.xs), np.zeros_like(self.hs[0])
        for t in reversed(range(self.xs.shape[1])):
            dxs[:, t], dprev = self.step_backward(dhs[:, t] + dprev, t)
        return dxs, dprev


class RNNNoCarry(RNN):
    def backward(self, dhs):
        for g in self.grads.values():
            g[...] = 0
        dxs, dprev = np.zeros_like(self.xs), np.zeros_like(self.hs[0])
        for t in reversed(range(self.xs.shape[1])):
            dxs[:, t], dprev = self.step_backward(dhs[:, t], t)  # BUG: + dprev missing
        return dxs, dprev


class RNNNoCarryHalf(RNN):
    """Not this bug: the carried gradient halved (the carry is there, scaled; named rnn-carry-scaled since session 25,
    "no known bug pattern" before)."""

    def backward(self, dhs):
        for g in self.grads.values():
            g[...] = 0
        dxs, dprev = np.zeros_like(self.xs), np.zeros_like(self.hs[0])
        for t in reversed(range(self.xs.shape[1])):
            dxs[:, t], dprev = self.step_backward(dhs[:, t] + 0.5 * dprev, t)  # BUG: half the carry
        return dxs, dprev
