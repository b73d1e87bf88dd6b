"""Session 23 (newuser22's leftover): the lessons' planted bugs that got "no known bug pattern", each beside the
lesson's correct answer: an LSTM cell's dC without the forget gate (lesson 32), a GRU cell's dH without the direct
path dY * z (32b), self-attention's dX keeping the value projection's use alone (34), two residual branches whose
first is given dY where dH is due (35), a transposed convolution's backward reading dY without the stride (20b).
The classes are the lessons' files with defaults for the constructors' arguments (the table builds ``cls()``)."""

import numpy as np

INPUT = (5, 4)  # each class has its own INPUT


# ---- LSTMCell
def _sigmoid(a):
    return 0.5 * (1.0 + np.tanh(0.5 * a))


def _dsigmoid(a):  # sigma'(a) = sigma(a) (1 - sigma(a)) = 1 / (4 cosh(a/2)^2), from the input
    return 0.25 / np.cosh(0.5 * a) ** 2


class LSTMCell:
    """One LSTM step (PyTorch's gate order i, f, g, o): forward(X, H, C) -> h_t; backward -> (dX, dH, dC).

    X (N, D), H and C (N, hidden); W_ih (4H, D), W_hh (4H, H), b (4H,). The new cell state
    c_t is kept in the cache (a full LSTM also returns it; here only h_t is the output).
    """

    INPUT = [(4, 3), (4, 5), (4, 5)]

    def __init__(self, input_size=3, hidden_size=5, rng=0):
        rng = np.random.default_rng(rng)
        k, H = 1.0 / np.sqrt(hidden_size), hidden_size
        self.H = H
        self.params = {"W_ih": rng.uniform(-k, k, (4 * H, input_size)),
                       "W_hh": rng.uniform(-k, k, (4 * H, H)), "b": rng.uniform(-k, k, 4 * H)}
        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}

    def forward(self, X, H, C, training=False):
        p, n = self.params, self.H
        a = X @ p["W_ih"].T + H @ p["W_hh"].T + p["b"]
        i, f, o = _sigmoid(a[:, :n]), _sigmoid(a[:, n:2 * n]), _sigmoid(a[:, 3 * n:])
        g = np.tanh(a[:, 2 * n:3 * n])
        c = f * C + i * g
        self.cache = (X, H, C, a, i, f, g, o, c)
        return o * np.tanh(c)

    def backward(self, dY):
        X, H, C, a, i, f, g, o, c = self.cache
        n, ds = self.H, _dsigmoid(a)  # derivatives from the pre-activations, not the gates
        do = dY * np.tanh(c)
        dc = dY * o / np.cosh(c) ** 2
        di, df, dg = dc * g, dc * C, dc * i
        da = np.concatenate([di * ds[:, :n], df * ds[:, n:2 * n], dg / np.cosh(a[:, 2 * n:3 * n]) ** 2,
                             do * ds[:, 3 * n:]], axis=1)
        self.grads["W_ih"], self.grads["W_hh"] = da.T @ X, da.T @ H
        self.grads["b"] = da.sum(axis=0)
        return da @ self.params["W_ih"], da @ self.params["W_hh"], dc * f
        ### END SOLUTION


class LSTMCellNoForgetGate(LSTMCell):
    # BUG: dC = dc where dc * f is due (lesson 32's lstm_bug.py)
    def backward(self, dY):
        X, H, C, a, i, f, g, o, c = self.cache
        n, ds = self.H, _dsigmoid(a)  # derivatives from the pre-activations, not the gates
        do = dY * np.tanh(c)
        dc = dY * o / np.cosh(c) ** 2
        di, df, dg = dc * g, dc * C, dc * i
        da = np.concatenate([di * ds[:, :n], df * ds[:, n:2 * n], dg / np.cosh(a[:, 2 * n:3 * n]) ** 2,
                             do * ds[:, 3 * n:]], axis=1)
        self.grads["W_ih"], self.grads["W_hh"] = da.T @ X, da.T @ H
        self.grads["b"] = da.sum(axis=0)
        return da @ self.params["W_ih"], da @ self.params["W_hh"], dc


# ---- GRUCell
class GRUCell:
    """One GRU step in PyTorch's convention: forward(X, H) -> H_new; backward -> (dX, dH).

    X (N, D), H (N, hidden); W_ih (3H, D), W_hh (3H, H), b_ih, b_hh (3H,), blocks r, z, n.
    """

    INPUT = [(4, 3), (4, 5)]

    def __init__(self, input_size=3, hidden_size=5, rng=0):
        rng = np.random.default_rng(rng)
        k, H = 1.0 / np.sqrt(hidden_size), hidden_size
        self.H = H
        self.params = {
            "W_ih": rng.uniform(-k, k, (3 * H, input_size)), "W_hh": rng.uniform(-k, k, (3 * H, H)),
            "b_ih": rng.uniform(-k, k, 3 * H), "b_hh": rng.uniform(-k, k, 3 * H),
        }
        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}

    def forward(self, X, H, training=False):
        p, n_ = self.params, self.H
        ax = X @ p["W_ih"].T + p["b_ih"]
        ah = H @ p["W_hh"].T + p["b_hh"]
        arz = ax[:, :2 * n_] + ah[:, :2 * n_]     # pre-activations of r and z
        r, z = _sigmoid(arz[:, :n_]), _sigmoid(arz[:, n_:])
        an = ax[:, 2 * n_:] + r * ah[:, 2 * n_:]  # pre-activation of n
        n = np.tanh(an)
        self.cache = (X, H, r, z, n, arz, an, ah[:, 2 * n_:])
        return (1 - z) * n + z * H

    def backward(self, dY):
        X, H, r, z, n, arz, an, ahn = self.cache
        dn = dY * (1 - z)
        dz = dY * (H - n)
        dan = dn / np.cosh(an) ** 2               # tanh' from the pre-activation of n
        dr = dan * ahn
        dax = np.concatenate([dr, dz], axis=1) * _dsigmoid(arz)   # sigma' from the input
        dax = np.concatenate([dax, dan], axis=1)
        dah = np.concatenate([dax[:, :2 * self.H], dan * r], axis=1)
        self.grads["W_ih"], self.grads["b_ih"] = dax.T @ X, dax.sum(axis=0)
        self.grads["W_hh"], self.grads["b_hh"] = dah.T @ H, dah.sum(axis=0)
        dX = dax @ self.params["W_ih"]
        dH = dah @ self.params["W_hh"] + dY * z
        return dX, dH
        ### END SOLUTION


class GRUCellNoDirectPath(GRUCell):
    # BUG: dH without the direct path's dY * z (lesson 32b's gru_bug.py)
    def backward(self, dY):
        X, H, r, z, n, arz, an, ahn = self.cache
        dn = dY * (1 - z)
        dz = dY * (H - n)
        dan = dn / np.cosh(an) ** 2               # tanh' from the pre-activation of n
        dr = dan * ahn
        dax = np.concatenate([dr, dz], axis=1) * _dsigmoid(arz)   # sigma' from the input
        dax = np.concatenate([dax, dan], axis=1)
        dah = np.concatenate([dax[:, :2 * self.H], dan * r], axis=1)
        self.grads["W_ih"], self.grads["b_ih"] = dax.T @ X, dax.sum(axis=0)
        self.grads["W_hh"], self.grads["b_hh"] = dah.T @ H, dah.sum(axis=0)
        dX = dax @ self.params["W_ih"]
        dH = dah @ self.params["W_hh"]
        return dX, dH


# ---- SelfAttention
class SelfAttention:
    """One-head self-attention with projections: Q, K, V = X W_q^T, X W_k^T, X W_v^T,
    Y = softmax(Q K^T / sqrt(E)) V; X (N, T, E) -> Y (N, T, E); W_q, W_k, W_v (E, E)."""

    INPUT = (2, 4, 6)

    def __init__(self, embed_dim=6, rng=0):
        rng = np.random.default_rng(rng)
        k = 1.0 / np.sqrt(embed_dim)
        self.params = {name: rng.uniform(-k, k, (embed_dim, embed_dim)) for name in ("W_q", "W_k", "W_v")}
        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}

    def forward(self, X, training=False):
        p = self.params
        self.X = X
        self.Q, self.K, self.V = X @ p["W_q"].T, X @ p["W_k"].T, X @ p["W_v"].T
        self.scale = 1.0 / np.sqrt(X.shape[-1])
        S = self.Q @ self.K.transpose(0, 2, 1) * self.scale
        E = np.exp(S - S.max(axis=-1, keepdims=True))
        self.P = E / E.sum(axis=-1, keepdims=True)
        return self.P @ self.V

    def backward(self, dY):
        P, X, E = self.P, self.X, self.X.shape[-1]
        dV = P.transpose(0, 2, 1) @ dY
        dP = dY @ self.V.transpose(0, 2, 1)
        dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True)) * self.scale
        dQ, dK = dS @ self.K, dS.transpose(0, 2, 1) @ self.Q
        dX = 0
        for name, dZ in (("W_q", dQ), ("W_k", dK), ("W_v", dV)):
            self.grads[name] = dZ.reshape(-1, E).T @ X.reshape(-1, E)
            dX = dX + dZ @ self.params[name]          # X is used three times: the gradients add
        return dX
        ### END SOLUTION


class SelfAttentionLastUse(SelfAttention):
    # BUG: dX = dZ @ W in the loop over q, k, v: = where += is due (lesson 34's self_attention_bug.py)
    def backward(self, dY):
        P, X, E = self.P, self.X, self.X.shape[-1]
        dV = P.transpose(0, 2, 1) @ dY
        dP = dY @ self.V.transpose(0, 2, 1)
        dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True)) * self.scale
        dQ, dK = dS @ self.K, dS.transpose(0, 2, 1) @ self.Q
        dX = 0
        for name, dZ in (("W_q", dQ), ("W_k", dK), ("W_v", dV)):
            self.grads[name] = dZ.reshape(-1, E).T @ X.reshape(-1, E)
            dX = dZ @ self.params[name]
        return dX


# ---- ConvTranspose1D
class ConvTranspose1D:
    """Transposed 1-D convolution, PyTorch's layout: X (N, C_in, L), W (C_in, C_out, K), b (C_out,)
    -> Y (N, C_out, (L - 1) * stride + K); every input position scatters W-weighted copies."""

    INPUT = (2, 3, 4)

    def __init__(self, in_channels=3, out_channels=2, kernel_size=3, stride=2, rng=0):
        rng = np.random.default_rng(rng)
        k = 1.0 / np.sqrt(out_channels * kernel_size)
        self.K, self.s = kernel_size, stride
        self.params = {"W": rng.uniform(-k, k, (in_channels, out_channels, kernel_size)),
                       "b": rng.uniform(-k, k, out_channels)}
        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        N, _, L = X.shape
        Y = np.zeros((N, self.params["W"].shape[1], (L - 1) * self.s + self.K))
        for k in range(self.K):                   # tap k of every input position lands at l*s + k
            Y[:, :, k:k + (L - 1) * self.s + 1:self.s] += np.einsum("ncl,co->nol", X, self.params["W"][:, :, k])
        return Y + self.params["b"][:, None]

    def backward(self, dY):
        X, W, L = self.X, self.params["W"], self.X.shape[2]
        taps = [dY[:, :, k:k + (L - 1) * self.s + 1:self.s] for k in range(self.K)]   # (N, C_out, L) each
        self.grads["W"] = np.stack([np.einsum("ncl,nol->co", X, t) for t in taps], axis=2)
        self.grads["b"] = dY.sum(axis=(0, 2))
        return sum(np.einsum("nol,co->ncl", t, W[:, :, k]) for k, t in enumerate(taps))
        ### END SOLUTION


class ConvTranspose1DNoStride(ConvTranspose1D):
    # BUG: taps read without the stride (lesson 20b's conv_transpose_bug.py)
    def backward(self, dY):
        X, W, L = self.X, self.params["W"], self.X.shape[2]
        taps = [dY[:, :, k:k + L] for k in range(self.K)]
        self.grads["W"] = np.stack([np.einsum("ncl,nol->co", X, t) for t in taps], axis=2)
        self.grads["b"] = dY.sum(axis=(0, 2))
        return sum(np.einsum("nol,co->ncl", t, W[:, :, k]) for k, t in enumerate(taps))


# ---- TwoBranchBlock (lesson 35's exercise file, with its correct backward)
class TwoBranchBlock:
    """H = X + tanh(X @ A.T), Y = H + tanh(H @ B.T): two residual branches in a row; X (N, D)."""

    INPUT = (5, 4)

    def __init__(self, dim=4, rng=0):
        rng = np.random.default_rng(rng)
        k = 1.0 / np.sqrt(dim)
        self.params = {"A": rng.uniform(-k, k, (dim, dim)), "B": rng.uniform(-k, k, (dim, dim))}
        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        self.F1 = np.tanh(X @ self.params["A"].T)
        self.H = X + self.F1
        self.F2 = np.tanh(self.H @ self.params["B"].T)
        return self.H + self.F2

    def backward(self, dY):
        d2 = dY * (1 - self.F2 ** 2)                 # second branch
        self.grads["B"] = d2.T @ self.H
        dH = dY + d2 @ self.params["B"]
        d1 = dH * (1 - self.F1 ** 2)                 # first branch, from dH
        self.grads["A"] = d1.T @ self.X
        return dH + d1 @ self.params["A"]


class TwoBranchBlockDY(TwoBranchBlock):
    # BUG: the first branch given dY where dH is due (lesson 35's two_branch_bug.py)
    def backward(self, dY):
        d2 = dY * (1 - self.F2 ** 2)                 # second branch
        self.grads["B"] = d2.T @ self.H
        dH = dY + d2 @ self.params["B"]
        d1 = dY * (1 - self.F1 ** 2)                 # first branch
        self.grads["A"] = d1.T @ self.X
        return dH + d1 @ self.params["A"]
