"""Session 45: outside44's and verify44b's caught-but-unnamed bugs named by kind (one reading per kind, each
confirmed by recomputing the suspected wrong gradient): a constant factor that is a count of the input's shape, a
skip path added twice, an ELU/SELU/leaky ReLU branch slip, the product rule dropped, an embedding loop's buffered +=,
a size kept from the first call. Each layer's backward changes one thing from the right one (``# BUG``)."""
import numpy as np
import pytest
from buggy_layers.cs231n import rnn_step_forward
from buggy_layers.tester17 import pool_forward
from oracles import central

from gradcheck.diagnose import diagnose_layer


def _said(d):
    return " ".join(d.sentence().split())


class _Elementwise:
    """An activation ``Y = f(X)``; ``bug`` picks backward's local derivative."""

    params, grads = {}, {}
    LAM, ALP = 1.0507, 1.67326

    def __init__(self, kind):
        self.kind = kind

    def forward(self, X):
        self.X, k = X, self.kind
        if k == "elu":
            self.Y = np.where(X > 0, X, 0.7 * np.expm1(np.minimum(X, 0)))
        elif k == "selu":
            self.Y = self.LAM * np.where(X > 0, X, self.ALP * np.expm1(np.minimum(X, 0)))
        elif k == "leaky":
            self.Y = np.where(X > 0, X, 0.01 * X)
        elif k == "gelu":
            self.t = np.tanh(np.sqrt(2 / np.pi) * (X + 0.044715 * X ** 3))
            self.Y = 0.5 * X * (1 + self.t)
        else:  # swish
            self.s = 1 / (1 + np.exp(-X))
            self.Y = X * self.s
        return self.Y

    def backward(self, dY):
        X, Y, k = self.X, self.Y, self.kind
        if k == "elu":
            return dY * np.where(X > 0, 1.0, Y + 1)  # BUG: Y + alpha (alpha = 0.7)
        if k == "selu":
            return dY * np.where(X > 0, 1.0, self.LAM * self.ALP * np.exp(X))  # BUG: LAM where X > 0
        if k == "leaky":
            return dY * np.where(X > 0, 0.01, 1.0)  # BUG: the slopes swapped
        if k == "gelu":  # BUG: 1 + 3 * 0.044715 * X ** 2
            return dY * (0.5 * (1 + self.t) + 0.5 * X * (1 - self.t ** 2) * np.sqrt(2 / np.pi) * (1 + 0.044715 * X ** 2))
        return dY * self.s  # BUG: s + X * s * (1 - s)


@pytest.mark.parametrize("kind,code", [("elu", "elu-alpha-one"), ("selu", "selu-scale-missing"),
                                       ("leaky", "leaky-slopes-swapped"), ("swish", "product-rule-dropped"),
                                       ("gelu", "gelu-cube-derivative")])
def test_activation_branch_slips_are_named(kind, code):
    """outside44 ELUNoAlpha, SELUNoScale, LeakyReLUSwapped, SwishSigmoidOnly/MishNoInner, GELUNoCube: 'no known bug
    pattern'."""
    d = diagnose_layer(_Elementwise(kind), (6, 5), twin=None)
    assert not d.passed and d.codes[0] == code, _said(d)


class _SizeScaled:
    """A global average pool (N, C, H, W) -> (N, C), a nearest upsampling by 2, or X * sqrt(D) + a constant."""

    params, grads = {}, {}

    def __init__(self, kind, bug=True):
        self.kind, self.bug = kind, bug

    def forward(self, X):
        self.shape = X.shape
        if self.kind == "gap":
            return X.mean(axis=(2, 3))
        if self.kind == "up":
            return np.repeat(np.repeat(X, 2, axis=2), 2, axis=3)
        return X * np.sqrt(X.shape[-1]) + 0.5

    def backward(self, dY):
        N, C, *_ = self.shape
        if self.kind == "gap":
            dX = np.broadcast_to(dY[:, :, None, None], self.shape).copy()
            return dX if self.bug else dX / (self.shape[2] * self.shape[3])  # BUG: no / (H * W)
        if self.kind == "up":
            blocks = dY.reshape(N, C, self.shape[2], 2, self.shape[3], 2)
            return blocks.mean(axis=(3, 5)) if self.bug else blocks.sum(axis=(3, 5))  # BUG: mean for sum
        return dY if self.bug else dY * np.sqrt(self.shape[-1])  # BUG: sqrt(D) left out


@pytest.mark.parametrize("kind,shape,words", [
    ("gap", (2, 3, 4, 5), "20 = 4 x 5 comes from the sizes of axes 2 and 3 of X"),
    ("up", (2, 2, 3, 4), "0.25 = 1/4 comes from the outputs per input"),
    ("scale", (3, 4, 6), "= 1/sqrt(6) comes from the size of axis 2 of X")])
def test_a_factor_that_is_a_count_of_the_input_shape_is_named(kind, shape, words):
    """outside44 gap_nodiv, gap_divH, up_avg, ScaledSinusoidNoScale: 'a constant factor is wrong somewhere'; the
    count is named and confirmed at a grown input (the right layers PASS)."""
    d = diagnose_layer(_SizeScaled(kind), shape, twin=None)
    said = _said(d)
    assert not d.passed and d.codes[0] == "factor-axis-sizes" and words in said, said
    assert diagnose_layer(_SizeScaled(kind, bug=False), shape, twin=None).passed


class _ResidualTwice:
    """Y = X + tanh(X W); backward adds dY twice."""

    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((5, 5)) / 3}
        self.grads = {"W": np.zeros((5, 5))}

    def forward(self, X):
        self.X, self.h = X, np.tanh(X @ self.params["W"])
        return X + self.h

    def backward(self, dY):
        dz = dY * (1 - self.h ** 2)
        self.grads["W"] = self.X.T @ dz
        return 2 * dY + dz @ self.params["W"].T  # BUG: dY + ...


class _TanhPlusOne:
    """tanh whose backward gives dY * (2 - Y**2): dY more than the gradient, but no skip path in forward."""

    params, grads = {}, {}

    def forward(self, X):
        self.Y = np.tanh(X)
        return self.Y

    def backward(self, dY):
        return dY * (2 - self.Y ** 2)  # BUG: 1 - Y**2


def test_a_skip_path_added_twice_is_named():
    """outside44 ResidualSkipTwice (its sibling, the skip missing, was named); a tanh whose dX is dY too large has no
    skip path (its weights zeroed do not leave dY: it has none) and is not told so (test_cache_rewrite_s26's Own)."""
    d = diagnose_layer(_ResidualTwice(), (6, 5), twin=None)
    assert not d.passed and d.codes[0] == "skip-path-twice", _said(d)
    d = diagnose_layer(_TanhPlusOne(), (6, 5), twin=None)
    assert not d.passed and "skip-path-twice" not in d.codes, _said(d)


class _EmbeddingRowLoop:
    """ids (N, T) -> W[ids]; backward loops over rows with a buffered += (karpathy/nn-zero-to-hero#57)."""

    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((5, 3))}
        self.grads = {"W": np.zeros((5, 3))}

    def forward(self, ids):
        self.ids = ids
        return self.params["W"][ids]

    def backward(self, dY):
        self.grads["W"] = np.zeros((5, 3))
        for k in range(self.ids.shape[0]):
            self.grads["W"][self.ids[k]] += dY[k]  # BUG: np.add.at
        return None


def test_an_embedding_loop_with_a_buffered_add_is_named():
    """outside44 EmbeddingRowLoop/EmbeddingTimeLoop: 'no known bug pattern'."""
    ids = np.array([[0, 1, 1, 2, 3, 0], [4, 4, 2, 1, 0, 3], [2, 2, 2, 0, 1, 4], [3, 1, 0, 3, 2, 2]])
    d = diagnose_layer(_EmbeddingRowLoop(), ids, twin=None)
    said = _said(d)
    assert not d.passed and d.codes[0] == "repeated-index-loop" and "axis 0" in said, said


class _StaleN:
    """A batch norm without affine whose backward keeps the first forward's batch size (verify44b F7)."""

    params, grads = {}, {}

    def forward(self, X):
        if not hasattr(self, "N"):
            self.N = X.shape[0]  # BUG: the first batch's size, kept
        self.s = np.sqrt(X.var(0, keepdims=True) + 1e-5)
        self.xh = (X - X.mean(0, keepdims=True)) / self.s
        return self.xh

    def backward(self, dY):
        n = self.N
        return (dY - dY.sum(0, keepdims=True) / n - self.xh * (dY * self.xh).sum(0, keepdims=True) / n) / self.s


def test_a_size_kept_from_the_first_call_is_not_called_the_other_axis():
    """verify44b F7: right at 5 x 5, wrong at 6 x 5 and at 6 x 6 (a size from the other axis passes there)."""
    d = diagnose_layer(_StaleN(), (5, 5), twin=None)
    said = _said(d)
    assert not d.passed and d.codes[0] == "size-kept" and "(6, 6)" in said, said


class _LogSoftmaxNoSum:
    """Y = log_softmax(X) over the last axis; backward p * dY where p * dY.sum(-1) is due."""

    params, grads = {}, {}

    def forward(self, X):
        Z = X - X.max(axis=-1, keepdims=True)
        self.Y = Z - np.log(np.exp(Z).sum(axis=-1, keepdims=True))
        return self.Y

    def backward(self, dY):
        return dY - np.exp(self.Y) * dY  # BUG: dY.sum(axis=-1, keepdims=True)


class _AttentionDV:
    """softmax(Q K^T / sqrt(d)) V; backward's dV = P @ dY (P not transposed) at equal query and key lengths."""

    params, grads = {}, {}

    def forward(self, Q, K, V):
        self.Q, self.K, self.V, self.s = Q, K, V, 1 / np.sqrt(Q.shape[-1])
        Z = Q @ K.transpose(0, 2, 1) * self.s
        e = np.exp(Z - Z.max(axis=-1, keepdims=True))
        self.P = e / e.sum(axis=-1, keepdims=True)
        return self.P @ V

    def backward(self, dY):
        P = self.P
        dP = dY @ self.V.transpose(0, 2, 1)
        dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True)) * self.s
        return dS @ self.K, dS.transpose(0, 2, 1) @ self.Q, P @ dY  # BUG: P.transpose(0, 2, 1) @ dY


@pytest.mark.parametrize("layer,shape,code", [
    (_LogSoftmaxNoSum, (6, 5), "log-softmax-no-sum"),
    (_AttentionDV, [(2, 4, 4), (2, 4, 4), (2, 4, 6)], "attention-dv-untransposed")])
def test_a_log_softmax_without_the_sum_and_an_untransposed_dv_are_named(layer, shape, code):
    """outside44 LogSoftmaxNoSum, AttentionVTransposed: 'no known bug pattern'."""
    d = diagnose_layer(layer(), shape, twin=None)
    assert not d.passed and d.codes[0] == code, _said(d)


def _smoothed(N, K, y, on, off):
    t = np.full((N, K), off)
    t[np.arange(N), y] = on
    return t


def test_a_label_smoothing_target_backward_does_not_use_is_named():
    """outside44 LabelSmoothCEHardGrad (p - onehot) and LabelSmoothCEKm1 (a/K in backward, a/(K-1) in forward)."""
    from gradcheck.diagnose import name_loss_gradient

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((6, 5)), np.array([0, 3, 1, 4, 2, 3])
    p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    t = _smoothed(6, 5, y, 0.9, 0.1 / 4)  # forward's: 1 - a at the label, a / (K - 1) elsewhere

    def forward(y_true, z):
        q = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        return float(-(t * np.log(q)).sum() / 6)

    n = central(lambda z: forward(y, z), x, h=1e-6)
    assert np.allclose(n, (p - t) / 6, atol=1e-8)
    for wrong, words in ((np.eye(5)[y], "hard one-hot"), (_smoothed(6, 5, y, 0.92, 0.02), "0.92 at the label")):
        f = name_loss_gradient("dx", (p - wrong) / 6, n, forward, y, x, names=("x", "t"))
        assert f is not None and f.code == "label-smoothing-target" and words in f.message, f
    assert name_loss_gradient("dx", (p - t) / 6 * 1.5, n, forward, y, x).code != "label-smoothing-target"


def test_a_hinge_counting_margins_of_zero_is_named():
    """outside44 svm_loss_ge: mask = margins >= 0 after the clamp (every entry counted, the label's too)."""
    from gradcheck.diagnose import name_loss_gradient

    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((6, 5)), np.array([0, 3, 1, 4, 2, 3])

    def forward(y_true, s):
        margins = np.maximum(0, s - s[np.arange(6), y][:, None] + 1.0)
        margins[np.arange(6), y] = 0
        return float(margins.sum() / 6)

    n = central(lambda s: forward(y, s), x, h=1e-6)
    wrong = np.ones((6, 5))
    wrong[np.arange(6), y] -= 5  # BUG: (margins >= 0) counts all 5 columns
    f = name_loss_gradient("dx", wrong / 6, n, forward, y, x)
    assert f is not None and f.code == "hinge-zero-margins" and "1/N = 1/6" in f.message, f


def _pool_backward_with(bug):
    def pool_backward(dout, cache):
        x, pp = cache
        ph, pw, s = pp["pool_height"], pp["pool_width"], pp["stride"]
        dx = np.zeros_like(x)
        for i in range(dout.shape[2]):
            for j in range(dout.shape[3]):
                k = x[:, :, i * s:i * s + ph, j * s:j * s + pw].reshape(*x.shape[:2], -1).argmax(-1)
                r, q = (np.minimum(k % ph, ph - 1), np.minimum(k // ph, pw - 1)) if bug == "F" else (k // pw, k % pw)
                at_i, at_j = (i, j) if bug == "stride" else (i * s, j * s)  # BUG (stride): i * s, j * s
                for n in range(x.shape[0]):
                    for c in range(x.shape[1]):
                        dx[n, c, at_i + r[n, c], at_j + q[n, c]] += dout[n, c, i, j]
        return dx
    return pool_backward


@pytest.mark.parametrize("bug,pp,shape,code", [
    ("F", {"pool_height": 3, "pool_width": 2, "stride": 2}, (2, 2, 7, 6), "maxpool-unravel-swapped"),
    ("stride", {"pool_height": 2, "pool_width": 3, "stride": 2}, (2, 2, 6, 7), "pool-stride-ignored")])
def test_a_max_pool_pair_unravelling_column_major_or_without_the_stride_is_named(bug, pp, shape, code):
    """verify44c F4: r, q = k % ph, k // ph (the unravel written by hand), and the window's argmax placed from (i, j)
    where (i * s, j * s) is due: 'no known bug pattern'."""
    import gradcheck

    d = diagnose_layer(gradcheck.function_pair(pool_forward, _pool_backward_with(bug), pool_param=pp), shape,
                       twin=None)
    assert not d.passed and d.codes[0] == code, _said(d)


def _rnn_step_backward(dnext_h, cache):
    x, prev_h, Wx, Wh, next_h = cache
    da = dnext_h * (1 - next_h ** 2)
    return da @ Wx.T, da @ Wh.T, x.T @ da, next_h.T @ da, da.sum(0)  # BUG: prev_h.T @ da


def test_a_cs231n_rnn_step_pair_taking_next_h_for_dwh_is_named():
    """verify44c F4: named for a sequence class, not for CS231n's rnn_step pair (Wh an input there)."""
    import gradcheck

    d = diagnose_layer(gradcheck.function_pair(rnn_step_forward, _rnn_step_backward),
                       [(3, 2), (3, 4), (2, 4), (4, 4), (4,)], twin=None)
    assert not d.passed and d.codes[0] == "next-h-for-prev-h", _said(d)


def _sig(v):
    return 1 / (1 + np.exp(-v))


def _lstm_forward(x, prev_h, prev_c, Wx, Wh, b):
    H = prev_h.shape[1]
    a = x @ Wx + prev_h @ Wh + b
    i, f, g, o = _sig(a[:, :H]), _sig(a[:, H:2 * H]), np.tanh(a[:, 2 * H:3 * H]), _sig(a[:, 3 * H:])
    c = f * prev_c + i * g
    return o * np.tanh(c), c, (x, prev_h, prev_c, Wx, Wh, i, f, g, o, c)


def _lstm_backward_with(bug):
    def lstm_backward(dnext_h, dnext_c, cache):
        x, prev_h, prev_c, Wx, Wh, i, f, g, o, c = cache
        tc = np.tanh(c)
        do = dnext_h * (np.tanh(prev_c) if bug == "o" else tc)  # BUG (o): tanh(c)
        dc = dnext_c + dnext_h * o * (1 - tc ** 2)
        da = np.hstack([dc * g * i * (1 - i), dc * prev_c * f * (1 - f), dc * i * (1 - g ** 2), do * o * (1 - o)])
        dprev_c = dc * i if bug == "carry" else dc * f  # BUG (carry): dc * f
        return da @ Wx.T, da @ Wh.T, dprev_c, x.T @ da, prev_h.T @ da, da.sum(0)
    return lstm_backward


@pytest.mark.parametrize("bug,words", [("o", "do = dnext_h * tanh(c_prev)"), ("carry", "dc_prev = dc_t * i")])
def test_an_lstm_steps_other_two_slips_are_named(bug, words):
    """verify44c F4: lstm-line named df = dc * c_t, not do = dh * tanh(c_prev) nor dc_prev = dc * i."""
    import gradcheck

    d = diagnose_layer(gradcheck.function_pair(_lstm_forward, _lstm_backward_with(bug)),
                       [(3, 2), (3, 4), (3, 4), (2, 16), (4, 16), (16,)], twin=None)
    said = _said(d)
    assert not d.passed and d.codes[0] == "lstm-line" and words in said, said


class _RMSNorm:
    """gamma * X / rms over the last axis; ``bug`` "path": dX = dY * gamma / rms; "axis": the path summed over axis 0."""

    def __init__(self, bug):
        self.bug = bug
        self.params = {"gamma": np.linspace(0.6, 1.4, 5)}
        self.grads = {"gamma": np.zeros(5)}

    def forward(self, X):
        self.X, self.r = X, np.sqrt((X ** 2).mean(axis=-1, keepdims=True) + 1e-6)
        return self.params["gamma"] * X / self.r

    def backward(self, dY):
        X, r, dxh = self.X, self.r, dY * self.params["gamma"]
        self.grads["gamma"] = (dY * X / r).sum(axis=0)
        if self.bug == "path":
            return dxh / r  # BUG: - X * (dxh * X).sum(-1) / (D r**3)
        return dxh / r - X * (dxh * X).sum(axis=0, keepdims=True) / (X.shape[0] * r ** 3)  # BUG: axis=-1, D


class _HighwayNoCarry:
    """y = t * relu(X Wh) + (1 - t) * X, t = sigmoid(X Wt); backward without the carry's dY * (1 - t)."""

    def __init__(self):
        r = np.random.default_rng(0)
        self.params = {"Wh": r.standard_normal((5, 5)) / 2, "Wt": r.standard_normal((5, 5)) / 2}
        self.grads = {}

    def forward(self, X):
        self.X, self.ah = X, X @ self.params["Wh"]
        self.h, self.t = np.maximum(self.ah, 0), _sig(X @ self.params["Wt"])
        return self.t * self.h + (1 - self.t) * X

    def backward(self, dY):
        X, t, h = self.X, self.t, self.h
        dat, dah = dY * (h - X) * t * (1 - t), dY * t * (self.ah > 0)
        self.grads = {"Wh": X.T @ dah, "Wt": X.T @ dat}
        return dah @ self.params["Wh"].T + dat @ self.params["Wt"].T  # BUG: + dY * (1 - t)


@pytest.mark.parametrize("layer,code", [(lambda: _RMSNorm("path"), "rms-path-missing"),
                                        (lambda: _RMSNorm("axis"), "rms-wrong-axis"),
                                        (_HighwayNoCarry, "gated-skip-missing")])
def test_an_rms_norms_two_slips_and_a_highway_without_its_carry_are_named(layer, code):
    """outside44 RMSNormNoRmsPath (it must not read as Swish's product rule: dY * gamma / rms is dY * Y / X),
    RMSNormBatchMean, HighwayNoCarry: 'no known bug pattern'."""
    d = diagnose_layer(layer(), (6, 5), twin=None)
    assert not d.passed and d.codes[0] == code, _said(d)
