"""``gradcheck check`` of a forward returning ``(output, attention map)`` as attributes of self (``return self.out,
self.attn``, naye971012/numpy_transformer's Attention_np, torch.nn.MultiheadAttention's pair) beside a backward that
takes the output's gradient alone (session 40, corpus39 M2): the first output is checked, the map said not checked
(before: "wrong result (exit 1) ... gave Y as a tuple", as numpy-ml's ``return At, Ct`` with plain names was not)."""

import pytest
from test_cli import check_source

SOURCE = '''
import numpy as np


class Attention:
    """(output, attention map), as torch.nn.MultiheadAttention; backward takes dY of the output."""

    def __init__(self, d=3, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"Wq": rng.standard_normal((d, d)), "Wk": rng.standard_normal((d, d))}
        self.grads = {}

    def forward(self, q, k, v):
        self.q, self.k, self.v = q, k, v
        Q, K = q @ self.params["Wq"], k @ self.params["Wk"]
        S = Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
        A = np.exp(S - S.max(axis=-1, keepdims=True))
        self.attn = A / A.sum(axis=-1, keepdims=True)
        self.Q, self.K = Q, K
        self.out = self.attn @ v
        return self.out, self.attn

    def backward(self, dY):
        A = self.attn
        dv = A.transpose(0, 2, 1) @ dY
        dA = dY @ self.v.transpose(0, 2, 1)
        dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True)) / np.sqrt(self.Q.shape[-1])
        dQ, dK = dS @ self.K, dS.transpose(0, 2, 1) @ self.Q
        self.grads = {"Wq": np.einsum("bti,btj->ij", self.q, dQ), "Wk": np.einsum("bti,btj->ij", self.k, dK)}
        return dQ @ self.params["Wq"].T, dK @ self.params["Wk"].T, dv


class AttentionNoScaleInBackward(Attention):
    def backward(self, dY):
        A = self.attn
        dv = A.transpose(0, 2, 1) @ dY
        dA = dY @ self.v.transpose(0, 2, 1)
        dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
        dQ, dK = dS @ self.K, dS.transpose(0, 2, 1) @ self.Q
        self.grads = {"Wq": np.einsum("bti,btj->ij", self.q, dQ), "Wk": np.einsum("bti,btj->ij", self.k, dK)}
        return dQ @ self.params["Wq"].T, dK @ self.params["Wk"].T, dv
'''
SHAPES = ("--input-shape", "2,4,3;2,5,3;2,5,3")


def test_a_forward_returning_its_output_and_attention_map_as_attributes_is_checked_on_the_output(tmp_path):
    code, out = check_source(tmp_path, SOURCE, "Attention", *SHAPES)
    text = " ".join(out.split())
    assert code == 0, text
    assert "2 outputs: out (2, 4, 3) checked as Y, backward gets its dY; attn (2, 4, 5) (float64): backward takes no " \
           "upstream gradient for it, so it is not checked" in text, text
    assert "PASS: Attention: every gradient (dq, dk, dv, dWq, dWk) matches" in text, text


@pytest.mark.parametrize("name", ["AttentionNoScaleInBackward"])
def test_its_wrong_backward_still_fails(tmp_path, name):
    code, out = check_source(tmp_path, SOURCE, name, *SHAPES)
    text = " ".join(out.split())
    assert code == 1 and f"FAIL: {name}: gradient mismatch in dq, dk, dWq, dWk." in text, text
    assert "a factor 1/sqrt(3) is missing" in text, text
