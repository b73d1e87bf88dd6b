"""Session 19's tester's bugs (fixer fixs19, tester19s's repro/*.py): attention whose backward omits the
1/sqrt(d_k) scale at a batch of 2 (d_k = 4: the factor is the batch size too)."""

import numpy as np

INPUT = [(2, 3, 4), (2, 3, 4), (2, 3, 4)]


def _softmax(S):
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class Attention:
    """softmax(Q K^T / sqrt(d)) V over a batch of sequences."""

    ADAPT = True

    def forward(self, Q, K, V):
        self.Q, self.K, self.V = Q, K, V
        self.s = 1 / np.sqrt(Q.shape[-1])
        self.P = _softmax(Q @ K.swapaxes(-1, -2) * self.s)
        return self.P @ V

    def backward(self, dO):
        dV = self.P.swapaxes(-1, -2) @ dO
        dP = dO @ self.V.swapaxes(-1, -2)
        dS = self.P * (dP - (dP * self.P).sum(-1, keepdims=True)) * self.s
        return dS @ self.K, dS.swapaxes(-1, -2) @ self.Q, dV


class AttentionNoScaleBwd(Attention):
    def backward(self, dO):
        dV = self.P.swapaxes(-1, -2) @ dO
        dP = dO @ self.V.swapaxes(-1, -2)
        dS = self.P * (dP - (dP * self.P).sum(-1, keepdims=True))  # BUG: * self.s missing
        return dS @ self.K, dS.swapaxes(-1, -2) @ self.Q, dV
