"""``gradcheck check`` of a layer whose sub-layers' weights are idle on the checked input (session 40, fix39corpus):
an attention whose every query sees one key (a context of length 1 here; numpy-transformer's MultiHeadAttention at a
batch of one, its mask leaving one key) does not depend on its queries or keys there, so the Q and K projections'
gradients are 0 and 0 = 0 checks nothing. They were "q_proj (Dense: no parameters)" and the verdict "every gradient
(dx, ...) matches"; now the header and the verdict say which gradients were not checked and why."""

from test_cli import check_source

SOURCE = '''
import numpy as np


class Dense:
    def __init__(self, n, m, rng):
        self.w, self.b = rng.standard_normal((n, m)), rng.standard_normal(m)

    def forward(self, x):
        self.x = x
        return x @ self.w + self.b

    def backward(self, g):
        self.grad_w = self.x.reshape(-1, self.x.shape[-1]).T @ g.reshape(-1, g.shape[-1])
        self.grad_b = g.reshape(-1, g.shape[-1]).sum(axis=0)
        return g @ self.w.T


class CrossAttention:
    def __init__(self, d=4, seed=0):
        rng = np.random.default_rng(seed)
        self.q_proj, self.k_proj, self.v_proj = Dense(d, d, rng), Dense(d, d, rng), Dense(d, d, rng)

    def forward(self, x, ctx):
        self.Q, self.K, self.V = self.q_proj.forward(x), self.k_proj.forward(ctx), self.v_proj.forward(ctx)
        S = self.Q @ self.K.transpose(0, 2, 1) / np.sqrt(self.Q.shape[-1])
        A = np.exp(S - S.max(axis=-1, keepdims=True))
        self.A = A / A.sum(axis=-1, keepdims=True)
        return self.A @ self.V

    def backward(self, dY):
        A = self.A
        dV = A.transpose(0, 2, 1) @ dY
        dA = dY @ self.V.transpose(0, 2, 1)
        dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True)) / np.sqrt(self.Q.shape[-1])
        dQ, dK = dS @ self.K, dS.transpose(0, 2, 1) @ self.Q
        dx = self.q_proj.backward(dQ)
        dctx = self.k_proj.backward(dK) + self.v_proj.backward(dV)
        return dx, dctx
'''


def test_weights_idle_on_the_input_and_the_zero_input_gradient_are_said_not_checked(tmp_path):
    code, out = check_source(tmp_path, SOURCE, "CrossAttention", "--input-shape", "2,3,4;2,1,4")
    text = " ".join(out.split())
    assert code == 0, text
    assert "q_proj (Dense: q_proj.w, q_proj.b idle on this input, not checked (see below))" in text, text
    assert "WARNING: forward reads q_proj.w, q_proj.b, k_proj.w and k_proj.b, but on this input its output does not " \
           "move with them, and backward writes 0 for q_proj.grad_w, q_proj.grad_b, k_proj.grad_w and k_proj.grad_b" \
           in text, text
    assert "PASS: CrossAttention: every gradient (dctx, dv_proj.w, dv_proj.b) matches" in text, text
    assert "(q_proj.w, q_proj.b, k_proj.w, k_proj.b: no gradient checked, see above) (dx: 0 on this input, compared " \
           "with 0 alone, so not checked: see above)" in text, text


def test_at_a_context_of_several_keys_they_are_checked(tmp_path):
    code, out = check_source(tmp_path, SOURCE, "CrossAttention", "--input-shape", "2,3,4;2,5,4")
    text = " ".join(out.split())
    assert code == 0 and "idle on this input" not in text and "so not checked" not in text, text
    assert "PASS: CrossAttention: every gradient (dx, dctx, dq_proj.w, dq_proj.b, dk_proj.w, dk_proj.b, dv_proj.w, " \
           "dv_proj.b) matches" in text, text
