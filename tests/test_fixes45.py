"""Session 45's fixes of verify44c's findings: right layers the checker FAILed or advised wrongly.

F2: a right self-attention softmax(X X^T / sqrt d) X at X + c FAILed dX because the batch-independence probe
drew its rows around 0: X's own rows won every softmax, the probe saw no coupling and the stacked scan moved
element p of every row at once. Checked against HIPS autograd and against the element loop (batched=False).
"""
import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

from gradcheck import check_layer
from gradcheck.numerical import batch_independent


def _attn(X, xp=np):
    S = X @ X.T / np.sqrt(X.shape[-1])
    S = S - xp.max(S, -1, keepdims=True)
    P = xp.exp(S)
    P = P / xp.sum(P, -1, keepdims=True)
    return P @ X


class SelfAttention:
    """Right self-attention softmax(X X^T / sqrt d) X (no parameters)."""

    params: dict = {}
    grads: dict = {}

    def forward(self, X, training=False):
        self.X = X
        d = X.shape[-1]
        S = X @ X.T / np.sqrt(d)
        P = np.exp(S - S.max(-1, keepdims=True))
        self.P = P / P.sum(-1, keepdims=True)
        return self.P @ X

    def backward(self, dY):
        X, P = self.X, self.P
        dP = dY @ X.T
        dS = P * (dP - (dP * P).sum(-1, keepdims=True)) / np.sqrt(X.shape[-1])
        return P.T @ dY + dS @ X + dS.T @ X


_Z = np.random.default_rng(3).standard_normal((4, 6))
_G = np.random.default_rng(0).standard_normal((4, 6))


@pytest.mark.parametrize("c", [100.0, 1e4, 1e6])
def test_f2_probe_sees_attention_coupling_at_offset_inputs(c):
    X = _Z + c
    ok, why = batch_independent(lambda x: _attn(x), [X])
    assert not ok and "interact" in why


@pytest.mark.parametrize("c", [100.0, 1e6])
def test_f2_right_self_attention_at_offset_passes(c):
    X = _Z + c
    lay = SelfAttention()
    lay.forward(X.copy())
    dX = lay.backward(_G)
    ag = grad(lambda x: anp.sum(_attn(x, anp) * _G))(X)
    assert np.max(np.abs(dX - ag)) <= 1e-8 * np.max(np.abs(ag))  # the backward is right (autograd)
    r = check_layer(SelfAttention(), X.copy(), twin=None, mode="full", upstream=_G)
    assert r.passed, r.table()


def test_f2_per_sample_layers_still_stacked():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((5, 4)) + 1e4
    W = rng.standard_normal((4, 3))
    mu, var = rng.standard_normal(4), rng.random(4) + 0.5
    for f in (lambda x: x @ W, lambda x: np.maximum(x - 1e4, 0), lambda x: (x - mu) / np.sqrt(var + 1e-5),
              lambda x: np.tanh(x * 1e-4)):
        assert batch_independent(f, [X]) == (True, "")


# F5: a PASS said "add --twin" for layers whose twin --twin cannot build (exit 2 when followed).
ADV_LAYERS = '''
import numpy as np

class Linear:  # W (in, out), params w/b, constructor n_in/n_out: --twin cannot read in_features
    def __init__(self, n_in=5, n_out=3):
        r = np.random.default_rng(0)
        self.params = {"w": r.standard_normal((n_in, n_out)), "b": np.zeros(n_out)}; self.grads = {}
    def forward(self, X, training=False): self.X = X; return X @ self.params["w"] + self.params["b"]
    def backward(self, dY):
        self.grads = {"w": self.X.T @ dY, "b": dY.sum(0)}; return dY @ self.params["w"].T

class LayerNorm:  # eps 1e-3, no gamma/beta: autoprop's LayerNorm holds both, no twin matches
    def __init__(self): self.params, self.grads, self.eps = {}, {}, 1e-3
    def forward(self, X, training=False):
        xc = X - X.mean(-1, keepdims=True); self.inv = 1 / np.sqrt((xc**2).mean(-1, keepdims=True) + self.eps)
        self.xh = xc * self.inv; return self.xh
    def backward(self, dY):
        xh = self.xh
        return self.inv * (dY - dY.mean(-1, keepdims=True) - xh * (dY * xh).mean(-1, keepdims=True))
'''


def test_f5_twin_advice_names_the_sizes_and_the_command_runs(tmp_path):
    import re

    from test_cli import both, run_here, student

    f = student(tmp_path, ADV_LAYERS)
    p = run_here("check", f"{f}::Linear", "--input-shape", "6,5")
    text = both(p)
    assert p.returncode == 0 and "add --twin to compare" not in text, text
    m = re.search(r"add --twin --twin-init '(\{[^']*\})'", text)
    assert m and m.group(1) == '{"in_features": 5, "out_features": 3}', text
    p = run_here("check", f"{f}::Linear", "--input-shape", "6,5", "--twin",
                 "--twin-init", m.group(1))
    assert p.returncode == 0 and "forward output match" in both(p), both(p)


def test_f5_no_twin_suggested_for_a_layer_norm_without_gamma_beta(tmp_path):
    from test_cli import both, run_here, student

    p = run_here("check", f"{student(tmp_path, ADV_LAYERS)}::LayerNorm", "--input-shape", "6,5")
    text = both(p)
    assert p.returncode == 0 and "add --twin" not in text, text
    assert "autoprop's LayerNorm cannot be built from LayerNorm" in text and "so --twin is not suggested" in text


# F7: a right forward(Q, K, V) attention at K + 1e6 FAILed dQ: its scores of 1e6 put round-off of ~1e-10 into the
# loss, the central differences' error is that over the step, and Richardson walked down into it (0.29). The noise of
# the loss is now measured (Moré & Wild's ECnoise) where the extrapolation may leave an entry unsettled.
def _sdpa(Q, K, V, xp=np):
    S = xp.einsum("nqd,nkd->nqk", Q, K) / np.sqrt(Q.shape[-1])
    P = xp.exp(S - xp.max(S, -1, keepdims=True))
    return xp.einsum("nqk,nkd->nqd", P / xp.sum(P, -1, keepdims=True), V)


class SDPA:
    """softmax(Q K^T / sqrt d) V, CS231n style; ``bug`` plants an error in dS or dV."""

    def __init__(self, bug=None):
        self.bug, self.params, self.grads = bug, {}, {}

    def forward(self, Q, K, V, training=False):
        self.c, self.s = (Q, K, V), 1 / np.sqrt(Q.shape[-1])
        S = Q @ K.transpose(0, 2, 1) * self.s
        P = np.exp(S - S.max(-1, keepdims=True))
        self.P = P / P.sum(-1, keepdims=True)
        return self.P @ V

    def backward(self, dO):
        Q, K, V = self.c
        P = self.P
        dV, dP = P.transpose(0, 2, 1) @ dO, dO @ V.transpose(0, 2, 1)
        dS = P * (dP - (dP * P).sum(-1, keepdims=True)) * self.s
        dS = {"x1.01": 1.01 * dS, "sign": -dS}.get(self.bug, dS)
        return dS @ K, dS.transpose(0, 2, 1) @ Q, 1.01 * dV if self.bug == "dV1.01" else dV


_R5 = np.random.default_rng(5)
_R5.standard_normal(24), _R5.standard_normal(40), _R5.standard_normal(30)  # the tester's second draw
_Q, _K, _V = _R5.standard_normal((2, 3, 4)), _R5.standard_normal((2, 5, 4)), _R5.standard_normal((2, 5, 3))
_GO = np.random.default_rng(9).standard_normal((2, 3, 3))


@pytest.mark.parametrize("mode", ["full", "fast"])
def test_f7_right_attention_at_k_plus_1e6_is_not_failed(mode):
    ins = [_Q, _K + 1e6, _V]
    lay = SDPA()
    lay.forward(*ins)
    dQ = lay.backward(_GO)[0]
    ag = grad(lambda q: anp.sum(_sdpa(q, ins[1], ins[2], anp) * _GO))(ins[0])
    assert np.max(np.abs(dQ - ag)) <= 1e-8 * np.max(np.abs(ag))  # right (autograd)
    r = check_layer(SDPA(), [x.copy() for x in ins], twin=None, mode=mode, upstream=_GO)
    assert not r.failing_tensors and (r.passed or r.unchecked), r.table()  # PASS or NOT CHECKED, never FAIL
    for t in r.unchecked:  # not told "every entry matches" beside its NOT CHECKED
        assert not any(n.startswith(f"fast mode: the directional test of {t} ") and "every entry matches" in n
                       for n in r.notes), r.notes


@pytest.mark.parametrize("bug", ["x1.01", "sign", "dV1.01"])
@pytest.mark.parametrize("c,which", [(1e2, "K"), (1e4, "V"), (1e6, "K"), (1e6, "KV")])
def test_f7_planted_attention_bugs_still_fail_at_offsets(bug, c, which):
    ins = [_Q, _K + c * ("K" in which), _V + c * ("V" in which)]
    r = check_layer(SDPA(bug), [x.copy() for x in ins], twin=None, mode="fast", upstream=_GO)
    assert not r.passed and set(r.failing_tensors) >= ({"dV"} if bug == "dV1.01" else {"dQ", "dK"}), r.table()


def test_f7_noise_level_measures_added_noise():
    """Moré & Wild's estimate on a smooth function plus noise of known deviation (and none on a quantized one)."""
    from gradcheck.numerical import noise_level

    rng = np.random.default_rng(0)
    x = np.arange(-3, 4)[:, None] * 1e-4
    est = noise_level(np.sin(1 + x) + 1e-10 * rng.standard_normal((7, 400)))
    found = est[np.isfinite(est)]
    assert len(found) > 200 and 0.5e-10 < np.median(found) < 2e-10
    assert np.all(noise_level(np.ones((7, 3))) == 0)


# F3: a layer norm keeping eps inside the square root in forward and in backward's 1/sqrt(var + eps), dropping it in
# d(den)/d(var) alone, was told "dX is the gradient of (x - mean) / (np.sqrt(var) + eps)" (autograd: it is not) and to
# "put eps in the same place in both" (it is). The reading now says what backward did.
class _LNDropsEpsInDvar:
    def __init__(self, eps=0.1):
        r = np.random.default_rng(0)
        self.eps, self.params, self.grads = eps, {"gamma": 1 + 0.1 * r.standard_normal(6), "beta": np.zeros(6)}, {}

    def forward(self, X, training=False):
        self.xc = X - X.mean(-1, keepdims=True)
        self.var = (self.xc ** 2).mean(-1, keepdims=True)
        self.den = np.sqrt(self.var + self.eps)
        self.xh = self.xc / self.den
        return self.params["gamma"] * self.xh + self.params["beta"]

    def backward(self, dY):
        self.grads = {"gamma": (dY * self.xh).sum(0), "beta": dY.sum(0)}
        dxh = dY * self.params["gamma"]
        dden_dvar = 0.5 / np.sqrt(self.var)  # the bug: eps dropped here alone
        dvar = (dxh * self.xc).sum(-1, keepdims=True) * (-1 / self.den ** 2) * dden_dvar
        dxc = dxh / self.den + dvar * 2 * self.xc / self.xc.shape[-1]
        return dxc - dxc.mean(-1, keepdims=True)


def test_f3_eps_dropped_in_the_variance_path_alone_is_read_as_such():
    from gradcheck import diagnose_layer

    X = np.random.default_rng(0).standard_normal((5, 6))
    G = np.random.default_rng(1).standard_normal((5, 6))
    lay = _LNDropsEpsInDvar()
    lay.forward(X)
    dX = lay.backward(G)
    g, e = lay.params["gamma"], lay.eps

    def ln(x, outside):
        c = x - anp.mean(x, -1, keepdims=True)
        v = anp.mean(c ** 2, -1, keepdims=True)
        return g * c / ((anp.sqrt(v) + e) if outside else anp.sqrt(v + e))

    for outside in (False, True):  # neither placement's gradient (autograd)
        assert np.abs(dX - grad(lambda x, o=outside: anp.sum(ln(x, o) * G))(X)).max() > 0.05
    d = diagnose_layer(_LNDropsEpsInDvar(), (5, 6))
    assert d.codes == ["eps-placement"], d.codes
    text = d.errors[0].message
    assert "0.5 / np.sqrt(var), without eps" in text and "d(den)/d(var) = 0.5 / np.sqrt(var + eps)" in text, text
    assert "is the gradient of (x - mean) / (np.sqrt(var) + eps)" not in text and "same place in both" not in text


# F6: the --reference advice was tested at one drawn input; the advised run also compares at X +/- 1000, where a
# ReLU6 named ReLU (np.clip(X, 0, 6)) is not manualprop.ReLU and the advised run FAILed.
class ReLU:
    def __init__(self, top=None):
        self.top, self.params, self.grads = top, {}, {}

    def forward(self, X, training=False):
        self.X = X
        return np.clip(X, 0, self.top) if self.top else np.maximum(X, 0)

    def backward(self, dY):
        return dY * ((self.X > 0) & (self.X < (self.top or np.inf)))


def test_f6_reference_advice_is_tested_at_the_shifted_inputs_too():
    from gradcheck._same_function import reference_advice
    from gradcheck.check_command import build_reference

    def advice(layer):
        return reference_advice(layer, "ReLU", "manualprop.ReLU",
                                lambda own: build_reference("manualprop.ReLU", {}, 0, layer, "ReLU", own), (6, 5), 0)

    ref = build_reference("manualprop.ReLU", {}, 0, ReLU(6), "ReLU")
    X = np.random.default_rng(0).standard_normal((6, 5)) + 1000
    assert not np.allclose(ReLU(6).forward(X), ref.forward(X))  # the advised run's X + 1000 comparison fails
    said = advice(ReLU(6))
    assert "not suggested" in said and "X + 1000" in said and "pass --reference" not in said, said
    assert advice(ReLU()) == "pass --reference manualprop.ReLU to compare them"
