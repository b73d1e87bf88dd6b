"""Session 21 (session 20's leftovers): tied weights whose backward keeps one use's gradient, multi-head attention
whose backward merges the heads by reshape alone, ELU's derivative taken as ``out`` where ``out + alpha`` is due, and
a layer whose backward ignores the mode string of its param dict; each with a correct twin that must PASS."""

import numpy as np

INPUT = (4, 6)


class TiedAutoencoder:
    """h = tanh(X @ W), Y = h @ W.T: the decoder's weight is the encoder's, transposed (W (D, H))."""

    ADAPT = True

    def __init__(self, D=6, H=3):
        self.params = {"W": np.random.default_rng(0).normal(0, 0.5, (D, H))}
        self.grads = {"W": np.zeros((D, H))}

    def forward(self, X):
        self.X = X
        self.h = np.tanh(X @ self.params["W"])
        return self.h @ self.params["W"].T

    def backward(self, dY):
        W = self.params["W"]
        dh = dY @ W
        da = dh * (1 - self.h**2)
        self.grads["W"] = self.X.T @ da + dY.T @ self.h  # the encoder's use, then the decoder's (W.T)
        return da @ W.T


class TiedAutoencoderNoDecoderTerm(TiedAutoencoder):
    def backward(self, dY):
        W = self.params["W"]
        da = dY @ W * (1 - self.h**2)
        self.grads["W"] = self.X.T @ da  # BUG: the decoder's term dY.T @ h (the W.T use) is missing
        return da @ W.T


class TiedLM:
    """One table for the lookup and the output projection: E = W[ids], logits = E @ W.T (W (V, D))."""

    ADAPT = True

    INPUT = np.array([[0, 3, 1], [4, 0, 2], [6, 5, 1], [2, 3, 0]])

    def __init__(self, V=7, D=4):
        self.W = np.random.default_rng(1).normal(0, 0.5, (V, D))

    def forward(self, ids):
        self.ids = ids
        self.E = self.W[ids]
        return self.E @ self.W.T

    def backward(self, dY):
        dE = dY @ self.W
        self.dW = np.einsum("ntv,ntd->vd", dY, self.E)  # the projection's use (W.T)
        np.add.at(self.dW, self.ids, dE)  # plus the lookup's
        return None


class TiedLMLookupOnly(TiedLM):
    def backward(self, dY):
        self.dW = np.zeros_like(self.W)
        np.add.at(self.dW, self.ids, dY @ self.W)  # BUG: the output projection's dY^T E (its W.T use) is missing
        return None


def _split(x, H):
    N, T, D = x.shape
    return x.reshape(N, T, H, D // H).transpose(0, 2, 1, 3)  # (N, H, T, d)


def _merge(x):
    N, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(N, T, H * d)  # (N, T, H*d)


class MultiHeadAttention:
    """Self-attention over X (N, T, D = 6): Q, K, V = X @ Wq, X @ Wk, X @ Wv, split into H heads, softmax(q k^T /
    sqrt(d)) v per head, heads merged, then @ Wo."""

    ADAPT = True

    INPUT = (2, 4, 6)

    def __init__(self, D=6, H=2):
        rng = np.random.default_rng(2)
        self.H = H
        self.Wq, self.Wk, self.Wv, self.Wo = (rng.normal(0, 0.6, (D, D)) for _ in range(4))

    def forward(self, X):
        H = self.H
        self.X = X
        self.q, self.k, self.v = _split(X @ self.Wq, H), _split(X @ self.Wk, H), _split(X @ self.Wv, H)
        self.s = 1 / np.sqrt(self.q.shape[-1])
        S = self.q @ self.k.swapaxes(-1, -2) * self.s
        e = np.exp(S - S.max(axis=-1, keepdims=True))
        self.P = e / e.sum(axis=-1, keepdims=True)
        self.M = _merge(self.P @ self.v)
        return self.M @ self.Wo

    def merge_grad(self, d):
        return _merge(d)

    def backward(self, dY):
        self.dWo = np.einsum("ntd,nte->de", self.M, dY)
        dO = _split(dY @ self.Wo.T, self.H)
        dP = dO @ self.v.swapaxes(-1, -2)
        dv = self.P.swapaxes(-1, -2) @ dO
        dS = self.P * (dP - (dP * self.P).sum(axis=-1, keepdims=True)) * self.s
        dq, dk = dS @ self.k, dS.swapaxes(-1, -2) @ self.q
        dQ, dK, dV = self.merge_grad(dq), self.merge_grad(dk), self.merge_grad(dv)
        self.dWq, self.dWk, self.dWv = (np.einsum("ntd,nte->de", self.X, g) for g in (dQ, dK, dV))
        return dQ @ self.Wq.T + dK @ self.Wk.T + dV @ self.Wv.T


class MultiHeadAttentionMergeReshape(MultiHeadAttention):
    def merge_grad(self, d):
        N, H, T, dh = d.shape
        return d.reshape(N, T, H * dh)  # BUG: (N, H, T, d) -> (N, T, H*d) by reshape alone, no transpose(0, 2, 1, 3)


class ELU:
    """Y = X where X > 0, alpha (exp(X) - 1) elsewhere; dY/dX = alpha exp(X) = out + alpha there."""

    ADAPT = True

    def __init__(self, alpha=0.7):
        self.alpha = alpha

    def forward(self, X):
        self.X = X
        self.out = np.where(X > 0, X, self.alpha * (np.exp(X) - 1))
        return self.out

    def backward(self, dY):
        return dY * np.where(self.X > 0, 1.0, self.out + self.alpha)


class ELUOutNoAlpha(ELU):
    def backward(self, dY):
        return dY * np.where(self.X > 0, 1.0, self.out)  # BUG: out where out + alpha (= alpha exp(X)) is due


class ScaledDropout:
    """CS231n style: self.dropout_param = {'mode': 'train' or 'test', 'p': keep probability, 'seed'}; a dropout that
    scales at test time (train: X * mask, test: X * p), its mask drawn from the param dict's seed in either mode;
    backward branches on the mode the forward ran in."""

    ADAPT = True

    def __init__(self, p=0.6):
        self.dropout_param = {"mode": "train", "p": p, "seed": 3}

    def forward(self, X):
        p, mode = self.dropout_param["p"], self.dropout_param["mode"]
        self.mask = np.random.default_rng(self.dropout_param["seed"]).random(X.shape) < p
        self.mode = mode  # kept for backward (an attribute forward writes: no switch of its own)
        return X * self.mask if mode == "train" else X * p

    def backward(self, dY):
        return dY * self.mask if self.mode == "train" else dY * self.dropout_param["p"]


class InvertedDropout(ScaledDropout):
    """ScaledDropout made inverted, the correct control (session 38: ScaledDropout, classic dropout scaled at test
    time, is named 'classic-dropout' since): train X * mask / p, test X."""

    def forward(self, X):
        p, mode = self.dropout_param["p"], self.dropout_param["mode"]
        self.mask = np.random.default_rng(self.dropout_param["seed"]).random(X.shape) < p
        self.mode = mode
        return X * self.mask / p if mode == "train" else X

    def backward(self, dY):
        return dY * self.mask / self.dropout_param["p"] if self.mode == "train" else dY


class ScaledDropoutIgnoresMode(ScaledDropout):
    def backward(self, dY):
        return dY * self.mask  # BUG: the training formula after a test-mode forward too (the mode is ignored)

INIT = {"dropout": {"dropout_param": {"mode": "test", "p": 0.6, "seed": 5}},
        "dropoutignoresmode": {"dropout_param": {"mode": "test", "p": 0.6, "seed": 5}}}
INPUTS = {"dropout": [(4, 6)], "dropoutignoresmode": [(4, 6)]}


def dropout_forward(x, dropout_param):
    """A dropout scaling at test time (train: x * mask, test: x * p; p the keep probability), the mask drawn from
    the param dict's seed."""
    p, mode = dropout_param["p"], dropout_param["mode"]
    mask = np.random.default_rng(dropout_param.get("seed")).random(x.shape) < p
    out = x * mask if mode == "train" else x * p
    return out, (dropout_param, mask)


def dropout_backward(dout, cache):
    dropout_param, mask = cache
    return dout * mask if dropout_param["mode"] == "train" else dout * dropout_param["p"]


dropoutignoresmode_forward = dropout_forward


def dropoutignoresmode_backward(dout, cache):
    dropout_param, mask = cache
    return dout * mask  # BUG: the training formula whatever dropout_param['mode'] says


class MultiHeadAttentionSplitReshape(MultiHeadAttention):
    def backward(self, dY):
        N, T, D = dY.shape
        self.dWo = np.einsum("ntd,nte->de", self.M, dY)
        dO = (dY @ self.Wo.T).reshape(N, self.H, T, D // self.H)  # BUG: dY's split into heads by reshape alone
        dP = dO @ self.v.swapaxes(-1, -2)
        dv = self.P.swapaxes(-1, -2) @ dO
        dS = self.P * (dP - (dP * self.P).sum(axis=-1, keepdims=True)) * self.s
        dQ, dK, dV = _merge(dS @ self.k), _merge(dS.swapaxes(-1, -2) @ self.q), _merge(dv)
        self.dWq, self.dWk, self.dWv = (np.einsum("ntd,nte->de", self.X, g) for g in (dQ, dK, dV))
        return dQ @ self.Wq.T + dK @ self.Wk.T + dV @ self.Wv.T


class SeedLinearZeros:
    """The seed's own style (session 20's leftover 2): self.W used in forward, no gradient, backward(dY) -> dX alone;
    W starts at zeros (a placeholder the assignment fills later), so it is checked at drawn values."""

    ADAPT = True
    INPUT = (5, 4)

    def __init__(self, n=4):
        self.W = np.zeros((n, n))

    def forward(self, X):
        return X @ self.W

    def backward(self, dY):
        return dY @ self.W.T


class SeedLinearZerosNoT(SeedLinearZeros):
    def backward(self, dY):
        return dY @ self.W  # BUG: W.T due; W = zeros gives 0 either way


class SeedLinearOnes(SeedLinearZeros):
    """The same, W all ones (square, symmetric: W.T == W)."""

    def __init__(self, n=4):
        self.W = np.ones((n, n))


class SeedLinearOnesNoT(SeedLinearOnes):
    def backward(self, dY):
        return dY @ self.W  # BUG: W.T due; W = ones is symmetric, so the two agree there
