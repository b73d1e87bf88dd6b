"""Session 22 (session 21's leftovers): a scale layer's backward without its factor (named "the activation's
derivative" before); multi-head attention with a fused q, k, v projection (GPT-2's c_attn, PyTorch's in_proj_weight)
or with biases, whose backward merges the heads (or splits dY) by reshape alone (head-merge-no-transpose matched only
square weights without biases); the planted losses are in loss_*22.py. Each bug with a correct twin that must
PASS."""

import numpy as np

INPUT = (6, 4)


class ScaleGamma:
    """Y = X * gamma, a learned per-feature scale (params/grads dicts)."""

    ADAPT = True

    def __init__(self, D=4):
        self.params = {"gamma": np.random.default_rng(0).uniform(0.5, 2.0, D)}
        self.grads = {"gamma": np.zeros(D)}

    def forward(self, X):
        self.X = X
        return X * self.params["gamma"]

    def backward(self, dY):
        self.grads["gamma"] = (dY * self.X).sum(axis=0)
        return dY * self.params["gamma"]


class ScaleGammaNoGamma(ScaleGamma):
    def backward(self, dY):
        self.grads["gamma"] = (dY * self.X).sum(axis=0)
        return dY  # BUG: the factor gamma forward multiplies X by is missing (was "the activation's derivative")


class ScaleSeed:
    """Y = X * self.s, the seed protocol (a weight without a gradient, backward returns dX alone)."""

    ADAPT = True

    def __init__(self, D=4):
        self.s = np.random.default_rng(1).uniform(0.5, 2.0, D)

    def forward(self, X):
        return X * self.s

    def backward(self, dY):
        return dY * self.s


class ScaleSeedNoS(ScaleSeed):
    def backward(self, dY):
        return dY  # BUG: dY * self.s


def _split(x, H):
    N, T, D = x.shape
    return x.reshape(N, T, H, D // H).transpose(0, 2, 1, 3)  # (N, H, T, d)


def _merge(x):
    N, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(N, T, H * d)  # (N, T, H*d)


class FusedQKVAttention:
    """Self-attention over X (N, T, D = 6) with one fused projection: qkv = X @ Wqkv + bqkv (Wqkv (D, 3D), q, k, v
    side by side, GPT-2's c_attn), split into H = 3 heads, softmax(q k^T / sqrt(d)) v, heads merged, @ Wo + bo."""

    ADAPT = True

    INPUT = (2, 4, 6)

    def __init__(self, D=6, H=3):
        rng = np.random.default_rng(4)
        self.H, self.D = H, D
        self.Wqkv, self.bqkv = rng.normal(0, 0.6, (D, 3 * D)), rng.normal(0, 0.3, 3 * D)
        self.Wo, self.bo = rng.normal(0, 0.6, (D, D)), rng.normal(0, 0.3, D)

    def forward(self, X):
        D, H = self.D, self.H
        self.X = X
        qkv = X @ self.Wqkv + self.bqkv
        self.q, self.k, self.v = (_split(qkv[..., i * D:(i + 1) * D], H) for i in range(3))
        self.s = 1 / np.sqrt(D // H)
        S = self.q @ self.k.swapaxes(-1, -2) * self.s
        e = np.exp(S - S.max(axis=-1, keepdims=True))
        self.P = e / e.sum(axis=-1, keepdims=True)
        self.M = _merge(self.P @ self.v)
        return self.M @ self.Wo + self.bo

    def split_grad(self, dM):
        return _split(dM, self.H)

    def backward(self, dY):
        self.dWo, self.dbo = np.einsum("ntd,nte->de", self.M, dY), dY.sum(axis=(0, 1))
        dO = self.split_grad(dY @ self.Wo.T)
        dP = dO @ self.v.swapaxes(-1, -2)
        dv = self.P.swapaxes(-1, -2) @ dO
        dS = self.P * (dP - (dP * self.P).sum(axis=-1, keepdims=True)) * self.s
        dqkv = np.concatenate([_merge(g) for g in (dS @ self.k, dS.swapaxes(-1, -2) @ self.q, dv)], axis=-1)
        self.dWqkv, self.dbqkv = np.einsum("ntd,nte->de", self.X, dqkv), dqkv.sum(axis=(0, 1))
        return dqkv @ self.Wqkv.T


class FusedQKVAttentionSplitReshape(FusedQKVAttention):
    def split_grad(self, dM):
        N, T, D = dM.shape
        return dM.reshape(N, self.H, T, D // self.H)  # BUG: (N, T, H*d) -> (N, H, T, d) by reshape alone


class InProjAttention:
    """PyTorch's nn.MultiheadAttention layout: in_proj_weight (3D, D) and in_proj_bias (3D,), q, k, v = X @ W.T + b
    in three blocks, H = 2 heads, no output projection here."""

    ADAPT = True

    INPUT = (2, 4, 6)

    def __init__(self, D=6, H=2):
        rng = np.random.default_rng(6)
        self.H, self.D = H, D
        self.in_proj_weight, self.in_proj_bias = rng.normal(0, 0.6, (3 * D, D)), rng.normal(0, 0.3, 3 * D)

    def forward(self, X):
        D, H = self.D, self.H
        self.X = X
        qkv = X @ self.in_proj_weight.T + self.in_proj_bias
        self.q, self.k, self.v = (_split(qkv[..., i * D:(i + 1) * D], H) for i in range(3))
        self.s = 1 / np.sqrt(D // H)
        S = self.q @ self.k.swapaxes(-1, -2) * self.s
        e = np.exp(S - S.max(axis=-1, keepdims=True))
        self.P = e / e.sum(axis=-1, keepdims=True)
        return _merge(self.P @ self.v)

    def merge_grad(self, d):
        return _merge(d)

    def backward(self, dY):
        dO = _split(dY, self.H)
        dP = dO @ self.v.swapaxes(-1, -2)
        dv = self.P.swapaxes(-1, -2) @ dO
        dS = self.P * (dP - (dP * self.P).sum(axis=-1, keepdims=True)) * self.s
        dqkv = np.concatenate([self.merge_grad(g) for g in (dS @ self.k, dS.swapaxes(-1, -2) @ self.q, dv)], axis=-1)
        self.din_proj_weight = np.einsum("ntd,nte->de", dqkv, self.X)
        self.din_proj_bias = dqkv.sum(axis=(0, 1))
        return dqkv @ self.in_proj_weight


class InProjAttentionMergeReshape(InProjAttention):
    def merge_grad(self, d):
        N, H, T, dh = d.shape
        return d.reshape(N, T, H * dh)  # BUG: no transpose(0, 2, 1, 3) before the reshape


class BiasedMultiHeadAttention:
    """Separate Wq, Wk, Wv, Wo (D, D) each with its bias bq, bk, bv, bo; H = 2 heads."""

    ADAPT = True

    INPUT = (2, 4, 6)

    def __init__(self, D=6, H=2):
        rng = np.random.default_rng(7)
        self.H = H
        self.Wq, self.Wk, self.Wv, self.Wo = (rng.normal(0, 0.6, (D, D)) for _ in range(4))
        self.bq, self.bk, self.bv, self.bo = (rng.normal(0, 0.3, D) for _ in range(4))

    def forward(self, X):
        H = self.H
        self.X = X
        self.q, self.k, self.v = (_split(X @ W + b, H) for W, b in ((self.Wq, self.bq), (self.Wk, self.bk),
                                                                      (self.Wv, self.bv)))
        self.s = 1 / np.sqrt(self.q.shape[-1])
        S = self.q @ self.k.swapaxes(-1, -2) * self.s
        e = np.exp(S - S.max(axis=-1, keepdims=True))
        self.P = e / e.sum(axis=-1, keepdims=True)
        self.M = _merge(self.P @ self.v)
        return self.M @ self.Wo + self.bo

    def merge_grad(self, d):
        return _merge(d)

    def backward(self, dY):
        self.dWo, self.dbo = np.einsum("ntd,nte->de", self.M, dY), dY.sum(axis=(0, 1))
        dO = _split(dY @ self.Wo.T, self.H)
        dP = dO @ self.v.swapaxes(-1, -2)
        dv = self.P.swapaxes(-1, -2) @ dO
        dS = self.P * (dP - (dP * self.P).sum(axis=-1, keepdims=True)) * self.s
        dQ, dK, dV = (self.merge_grad(g) for g in (dS @ self.k, dS.swapaxes(-1, -2) @ self.q, dv))
        self.dWq, self.dWk, self.dWv = (np.einsum("ntd,nte->de", self.X, g) for g in (dQ, dK, dV))
        self.dbq, self.dbk, self.dbv = (g.sum(axis=(0, 1)) for g in (dQ, dK, dV))
        return dQ @ self.Wq.T + dK @ self.Wk.T + dV @ self.Wv.T


class BiasedMultiHeadAttentionMergeReshape(BiasedMultiHeadAttention):
    def merge_grad(self, d):
        N, H, T, dh = d.shape
        return d.reshape(N, T, H * dh)  # BUG: no transpose(0, 2, 1, 3) before the reshape
