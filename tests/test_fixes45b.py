"""Session 45's fixes of verify45a's findings (helper fixes45b).

F7: a right layer of several inputs named like an autoprop class whose constructor needs sizes
(MultiHeadAttention, RNN) crashed in the ``add --twin`` advice after its table (exit 1, no verdict).
"""
import numpy as np
import pytest

# F7: a right RNN forward(x, h0), and the right SDPA forward(Q, K, V) of tests/test_fixes45.py, under the names of
# autoprop classes whose constructors need sizes (units, embed_dim).
MULTI = '''
import numpy as np

class RNN:
    def __init__(self, D=4, H=5):
        rng = np.random.default_rng(0)
        self.params = {"Wx": 0.5 * rng.standard_normal((D, H)), "Wh": 0.5 * rng.standard_normal((H, H)),
                       "b": 0.1 * rng.standard_normal(H)}
        self.grads = {}
    def forward(self, x, h0, training=False):
        Wx, Wh, b = self.params["Wx"], self.params["Wh"], self.params["b"]
        self.x, self.hs = x, [h0]
        for t in range(x.shape[1]):
            self.hs.append(np.tanh(x[:, t] @ Wx + self.hs[-1] @ Wh + b))
        return np.stack(self.hs[1:], 1)
    def backward(self, dh):
        Wx, Wh = self.params["Wx"], self.params["Wh"]
        x, hs = self.x, self.hs
        dx = np.zeros_like(x); dWx = np.zeros_like(Wx); dWh = np.zeros_like(Wh); db = np.zeros(Wh.shape[0])
        dprev = np.zeros_like(hs[0])
        for t in reversed(range(x.shape[1])):
            draw = (dh[:, t] + dprev) * (1 - hs[t + 1] ** 2)
            dx[:, t] = draw @ Wx.T; dWx += x[:, t].T @ draw; dWh += hs[t].T @ draw; db += draw.sum(0)
            dprev = draw @ Wh.T
        self.grads = {"Wx": dWx, "Wh": dWh, "b": db}
        return dx, dprev
'''


@pytest.mark.parametrize("name, shapes", [("MultiHeadAttention", "2,3,4;2,5,4;2,5,3"), ("RNN", "3,6,4;3,5")])
def test_f7_several_inputs_named_like_a_sized_autoprop_class_pass(tmp_path, name, shapes):
    import inspect

    from test_cli import both, run_here, student
    from test_fixes45 import SDPA  # the right softmax(Q K^T / sqrt d) V

    src = MULTI + inspect.getsource(SDPA).replace("class SDPA:", "class MultiHeadAttention:")
    p = run_here("check", f"{student(tmp_path, src)}::{name}", "--input-shape", shapes)
    text = both(p)
    assert p.returncode == 0 and f"PASS: {name}" in text and "Traceback" not in text, text
    assert "add --twin to compare" not in text, text  # --twin cannot build it: not advised


def test_f7_an_advice_that_raises_leaves_the_verdict(monkeypatch):
    """An error inside the advice code gives no advice; it never turns a PASS into an internal error."""
    from types import SimpleNamespace

    import gradcheck._same_function as sf
    from gradcheck.check_command import _checked_advice
    from gradcheck.sources import ADD_TWIN

    def boom(*a, **k):
        raise TypeError("planted")

    monkeypatch.setattr(sf, "twin_advice", boom)
    monkeypatch.setattr(sf, "reference_advice", boom)
    result = SimpleNamespace(twin_note=ADD_TWIN, records=[])
    diag = SimpleNamespace(passed=True, result=result, other_modes=[], findings=[])
    args = SimpleNamespace(tape=False, seed=0, reference=None)
    assert _checked_advice(args, object(), "Tanh", None, (4, 3), diag) is None  # no exception, no advice
    assert result.twin_note == ADD_TWIN


# F1: the batch-independence probe missed a right self-attention's row coupling at X + c and X - c in 4-22 of 40
# draws (rows added to the batch never win a saturated softmax), and the stacked scan FAILed the right layer's dX.
def _self_attention(causal):

    def forward(X):
        n, d = X.shape
        S = X @ X.T / np.sqrt(d)
        if causal:
            S = np.where(np.tril(np.ones((n, n), bool)), S, -np.inf)
        P = np.exp(S - S.max(-1, keepdims=True))
        return P / P.sum(-1, keepdims=True) @ X
    return forward


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("c", [-1e6, -100.0, 100.0, 1e6])
def test_f1_probe_sees_attention_coupling_in_every_draw(causal, c):

    from gradcheck.numerical import batch_independent

    f = _self_attention(causal)
    seen = [batch_independent(f, [np.random.default_rng(s).standard_normal((5, 6)) + c])[0] for s in range(40)]
    assert not any(seen), [s for s, ok in enumerate(seen) if ok]


def test_f1_right_attention_of_a_missed_draw_passes_against_autograd():
    """verify45a's case: X = N(0, 1) seed 3 (5, 6) + 100; the backward agrees with HIPS autograd, and check_layer
    (batched auto) PASSes it, as the element loop does."""
    import autograd.numpy as anp
    from autograd import grad
    from test_fixes45 import SelfAttention, _attn  # the right layer, and its forward for autograd

    from gradcheck import check_layer

    def loss(X, G):
        return anp.sum(_attn(X, anp) * G)

    X = np.random.default_rng(3).standard_normal((5, 6)) + 100.0
    G = np.random.default_rng(0).standard_normal((5, 6))
    lay = SelfAttention()
    lay.forward(X.copy())
    dX, ref = lay.backward(G), grad(loss)(X, G)
    assert np.abs(dX - ref).max() <= 1e-10 * np.abs(ref).max()  # measured 7e-13
    r = check_layer(SelfAttention(), X.copy(), twin=None, mode="full", upstream=G)
    assert r.passed, r.table()


# F5: CS231n's rnn (x (N, T, D), h0 (N, H), Wx (D, H), Wh (H, H)) with db divided by T lost its "extra 1/T" reading
# when H == T: h0, Wx and Wh also had x's axis-1 size on their axis 1, as Andrew Ng's a0 (n_a, m) has.
CS231N_RNN = '''
import numpy as np

def rnn_forward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    h, prev, cache = np.zeros((N, T, Wh.shape[0])), h0, []
    for t in range(T):
        nxt = np.tanh(x[:, t] @ Wx + prev @ Wh + b)
        cache.append((x[:, t], prev, nxt))
        h[:, t], prev = nxt, nxt
    return h, (cache, Wx, Wh)

def rnn_backward(dh, cache):
    steps, Wx, Wh = cache
    N, T, H = dh.shape
    dx, dWx, dWh, db = np.zeros((N, T, Wx.shape[0])), np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(H)
    dprev = np.zeros((N, H))
    for t in reversed(range(T)):
        xt, prev, nxt = steps[t]
        draw = (dh[:, t] + dprev) * (1 - nxt ** 2)
        dx[:, t] = draw @ Wx.T
        dWx += xt.T @ draw
        dWh += prev.T @ draw
        db += draw.sum(0) / T
        dprev = draw @ Wh.T
    return dx, dprev, dWx, dWh, db
'''


def test_f5_cs231n_rnn_with_hidden_size_equal_to_t_keeps_the_1_over_t_reading(tmp_path):
    from test_cli import both, run_here, student

    p = run_here("check", f"{student(tmp_path, CS231N_RNN, 'rnn_layers.py')}::rnn", "--input-shape", "3,5,4;3,5;4,5;5,5;5")
    text = " ".join(both(p).split())
    assert p.returncode == 1 and "FAIL: rnn: gradient mismatch in db" in text, text
    assert "db is 5 times too small: an extra 1/T (T = 5, the time steps on axis 1 of x (3, 5, 4)" in text, text
    assert "H*W" not in text, text


# F2: the "--targets labels:K" way out was given only when the labels were the first key of --init.


def test_f2_labels_advice_whatever_the_order_of_init(tmp_path):
    from test_cli import both, run_here, student
    from test_medium45 import (
        TEMPORAL,  # CS231n's temporal_softmax_loss(x, Y, mask), Y named by the test
    )

    init = '{"mask": [[1, 1, 0], [1, 0, 0]], "y": [[0.0, 1, 3], [2, 2, 0]]}'  # 0.0: float64 labels
    p = run_here("check", f"{student(tmp_path, TEMPORAL.replace('Y', 'y'), 'losses.py')}::temporal_softmax_loss", "--loss",
                 "--input-shape", "2,3,4", "--init", init)
    text = " ".join(both(p).split())
    assert p.returncode == 3 and "y: float64 array of shape (2, 3) of whole numbers" in text, text
    assert "leave y out of --init and draw it with --targets labels:K" in text, text


# F6: the plain-SGD fast path of apply_gradients skipped an _update_all set on the instance (main called it).
def test_f6_apply_gradients_calls_an_update_all_set_on_the_instance():

    from autoprop import Variable
    from autoprop.optimizers import SGD

    v = Variable(np.array([1.0, 2.0]))
    o, seen = SGD(0.1), []
    o._update_all = lambda grads, variables, *a, **k: seen.append([np.asarray(g) for g in grads])
    o.apply_gradients([(np.array([0.5, -1.0]), v)])
    assert len(seen) == 1 and np.array_equal(seen[0][0], [0.5, -1.0])
    assert np.array_equal(v.numpy(), [1.0, 2.0])  # the instance's update (none here), not the base's
    o2, w = SGD(0.1), Variable(np.array([1.0, 2.0]))
    o2.apply_gradients([(np.array([0.5, -1.0]), w)])
    assert np.array_equal(w.numpy(), [1.0 - 0.1 * 0.5, 2.0 + 0.1 * 1.0]) and o2.iterations == 1


# F3: exp(x - c) at X + c, c = 1e8: the step eps * |x| = 600 makes the one-sided quotients 1e261 apart; the kink
# test widened "the manual value lies between them" by rtol of |lo| + |hi|, so a sign-flipped backward was excused
# at every entry and PASSed. Each end is now widened by the tolerance at that end.
class _ExpShifted:
    params: dict = {}
    grads: dict = {}

    def __init__(self, c, sign=1.0):
        self.c, self.sign = c, sign

    def forward(self, X, training=False):
        self.Y = np.exp(X - self.c)
        return self.Y

    def backward(self, dY):
        return self.sign * dY * self.Y  # d/dx exp(x - c) = exp(x - c)


@pytest.mark.parametrize("c", [1e7, 1e8])
def test_f3_sign_flipped_exp_far_from_zero_is_not_excused_as_kinks(c):
    from gradcheck import check_layer

    X = np.random.default_rng(0).standard_normal((5, 6)) + c
    G = np.random.default_rng(1).standard_normal((5, 6))
    r = check_layer(_ExpShifted(c, -1.0), X.copy(), twin=None, mode="full", upstream=G)
    assert not r.passed, r.table()


def test_f3_kink_between_each_end_own_tolerance():
    from gradcheck.compare import kink_mask

    lo, hi = np.array([1.0]), np.array([1e261])
    # a value below lo, by far more than rtol of lo: not between (was, by rtol * 1e261)
    assert not kink_mask(np.array([-1.0]), (lo + hi) / 2, hi, lo, rtol=1e-6, atol=1e-9).any()
    # relu'(0) = 0 between the one-sided quotients 0 and 1 (and at either end to the tolerance): still a kink
    z, one = np.array([0.0]), np.array([1.0])
    for a in (0.0, 1.0, 1.0 + 5e-7, 0.5):
        assert kink_mask(np.array([a]), np.array([0.3]), one, z, rtol=1e-6, atol=1e-9).all(), a
