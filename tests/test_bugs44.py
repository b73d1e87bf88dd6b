"""Realistic buggy layers from public reports (session 43's bugs43 cases, their sources outside the tree) that
``gradcheck check`` FAILed without naming, or named misleadingly, now named (session 44, bugs44); written here in
those layouts, not copied. Each named reading is a hypothesis confirmed numerically (a candidate gradient computed
and compared), never the source read; each reading runs only on a FAIL (bugs43's 29 right versions, run outside
the suite, all PASS, and the planted-bug table's right layers too).

- bugs43 L6: ``gradcheck.diagnose_layer`` (the API) and ``gradcheck check`` give one verdict on a dropout whose drop
  probability p is scaled by 1/p (CS231n's keep-probability formula): the own-mean check runs in the diagnosis.
- conv-stride-ignored: a CS231n ``conv_forward(x, w, b, conv_param)`` pair whose backward puts window (i, j) at
  (i, j), not (i*s, j*s) (github.com/enggen/Deep-Learning-Coursera issue 7); named before for a layer with ``self.W``
  alone, not for the pair whose w and b are inputs beside x.
- scale-grad-of-input: a normalisation's ``dgamma = (dY * x).sum(axis=0)``, the raw input for x_hat (the bn_gammax
  case, Kratzert's staged BatchNorm backward as quoted in datascience.stackexchange question 10741).
- softmax-jacobian-input-inside: a softmax backward ``s * (dY - (dY * x).sum(-1))``, the input where the output is
  due in the inner sum (newbe.dev's numpy softmax-derivative question, the asker's ``value[i] * (1 - input[i])``).
- maxpool-spread-whole: a max pool's backward giving every element of the window the whole dY (average pooling's
  routing undivided; errorhandle.ai's max-pooling backpropagation page).
- maxpool-unravel-swapped: the window's argmax unravelled with ``(pool_width, pool_height)`` (github.com/0809zheng/
  CS231n-assignment2019 issue 19), right for a square window alone.
- lstm-line, two more lines: an LSTM step's ``dc = dnext_c + dnext_h * o * (1 - next_c**2)`` (tanh's derivative at
  the cell state, not at tanh(c)) and ``do = dnext_h * next_c`` (the cell state for tanh(c)) (torchedup.dev's
  lstm-bptt problem; PyTorch extension-cpp's lltm_baseline.py backward).
- rnn-line: a tanh RNN's backward through time with ``da = dh * (1 - a**2)``, the pre-activation for h_t
  (github.com/OT1devl/Deep-Learning's ``derv_tanh(x) = 1 - x**2``), or ``dWh += h_t.T @ da``, the step's output
  for h_(t-1) (github.com/leoniloris/Visualization-In-Data-Science's ``prev_s.T.dot(d_Ws)``).
- attention-mask-after: causal attention whose forward multiplies the softmax by the mask (lynx-cortex.pages.dev's
  masking page: "a classic bug"); attention-backward-unmasked: its backward recomputing the softmax without the mask
  (tracker-7ex.pages.dev's masking-in-code page).
- eps-placement (bugs43 M2, named "other weights than the forward's statistics need" before): a layer norm whose
  forward divides by ``std + eps`` (liorsinai.github.io's layernorm post) and whose backward is the ``sqrt(var +
  eps)`` formula, or the reverse.
"""

from test_bugs43 import _drop

import gradcheck


def _layer(source: str, name: str, **kw):
    ns: dict = {}
    exec(source, ns)  # noqa: S102 - the test's own layer, in this process
    return ns[name](**kw)


def test_the_api_fails_a_drop_probability_scaled_by_one_over_p_as_the_cli_does():
    d = gradcheck.diagnose_layer(_layer(_drop("1", "self.p"), "Drop", p=0.3), (6, 5))
    assert not d.passed and "own-mean" in [f.code for x in [d, *d.other_modes] for f in x.findings], d.codes
    ok = gradcheck.diagnose_layer(_layer(_drop("1", "(1 - self.p)"), "Drop", p=0.3), (6, 5))
    assert ok.passed, ok.codes


CONV = """
import numpy as np

def conv_forward(x, w, b, conv_param):
    s, p = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    Ho, Wo = 1 + (H + 2 * p - HH) // s, 1 + (W + 2 * p - WW) // s
    out = np.zeros((N, F, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            out[:, :, i, j] = np.einsum("nchw,fchw->nf", xp[:, :, i * s:i * s + HH, j * s:j * s + WW], w) + b
    return out, (x, w, b, conv_param)

def conv_backward(dout, cache):
    x, w, b, conv_param = cache
    s, p = conv_param["stride"], conv_param["pad"]
    HH, WW = w.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    for i in range(dout.shape[2]):
        for j in range(dout.shape[3]):
            win = xp[:, :, i:i + HH, j:j + WW]  # the bug: i*s, j*s in forward
            dw += np.einsum("nchw,nf->fchw", win, dout[:, :, i, j])
            dxp[:, :, i:i + HH, j:j + WW] += np.einsum("fchw,nf->nchw", w, dout[:, :, i, j])
    return dxp[:, :, p:p + x.shape[2], p:p + x.shape[3]], dw, dout.sum(axis=(0, 2, 3))
"""


def test_a_conv_pair_ignoring_the_stride_in_backward_is_named():
    ns: dict = {}
    exec(CONV, ns)  # noqa: S102 - the test's own pair, in this process
    pair = gradcheck.function_pair(ns["conv_forward"], ns["conv_backward"], conv_param={"stride": 2, "pad": 1})
    d = gradcheck.diagnose_layer(pair, [(2, 1, 5, 5), (2, 1, 3, 3), (2,)])
    assert not d.passed and set(d.codes) == {"conv-stride-ignored"}, [f.message for f in d.errors]
    assert "not at (i*2, j*2)" in d.errors[0].message, d.errors[0].message


LAYER_NORM = """
import numpy as np

class LN:
    def __init__(self, dim, eps=1e-5):
        rng = np.random.default_rng(0)
        self.eps = eps
        self.params = {"gamma": 1 + 0.1 * rng.standard_normal(dim), "beta": 0.1 * rng.standard_normal(dim)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X, self.xc, self.std = X, X - X.mean(axis=-1, keepdims=True), X.std(axis=-1, keepdims=True)
        self.istd = 1.0 / DENOMINATOR
        self.xhat = self.xc * self.istd
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def backward(self, dY):
        self.grads["gamma"] = (dY * GAMMA_INPUT).sum(axis=0)
        self.grads["beta"] = dY.sum(axis=0)
        dxh = dY * self.params["gamma"]
        BACKWARD
"""
SQRT_FORMULA = ("return self.istd * (dxh - dxh.mean(axis=-1, keepdims=True) "
                "- self.xhat * (dxh * self.xhat).mean(axis=-1, keepdims=True))")
OUTSIDE_FORMULA = ("i = 1.0 / (self.std + self.eps); return i * (dxh - dxh.mean(axis=-1, keepdims=True)) "
                   "- i**2 * self.xc / self.std * (dxh * self.xc).mean(axis=-1, keepdims=True)")


def _layer_norm(gamma_input="self.xhat", denominator="np.sqrt(self.std**2 + self.eps)", backward=SQRT_FORMULA):
    source = LAYER_NORM.replace("GAMMA_INPUT", gamma_input).replace("DENOMINATOR", denominator)
    return _layer(source.replace("BACKWARD", backward), "LN", dim=5)


def test_a_scale_gradient_taken_with_the_input_for_x_hat_is_named():
    d = gradcheck.diagnose_layer(_layer_norm(gamma_input="self.X"), (6, 5))
    assert not d.passed and d.codes == ["scale-grad-of-input"], d.codes
    assert "dgamma is (dY * X).sum(axis=0) with X the layer's input" in d.errors[0].message, d.errors[0].message
    assert "per-sample statistics over axis=1" in d.errors[0].message, d.errors[0].message


SOFTMAX = """
import numpy as np

class Softmax:
    def forward(self, x):
        self.x = x
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        self.out = e / e.sum(axis=-1, keepdims=True)
        return self.out

    def backward(self, dout):
        return self.out * (dout - (dout * self.x).sum(axis=-1, keepdims=True))
"""


def test_a_softmax_backward_with_the_input_in_its_inner_sum_is_named():
    d = gradcheck.diagnose_layer(_layer(SOFTMAX, "Softmax"), (6, 5))
    assert not d.passed and d.codes == ["softmax-jacobian-input-inside"], d.codes


POOL = """
import numpy as np

def max_pool_forward(x, pool_param):
    ph, pw, s = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    N, C, H, W = x.shape
    out = np.zeros((N, C, 1 + (H - ph) // s, 1 + (W - pw) // s))
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            out[:, :, i, j] = x[:, :, i * s:i * s + ph, j * s:j * s + pw].max(axis=(2, 3))
    return out, (x, pool_param)

def max_pool_backward(dout, cache):
    x, pool_param = cache
    ph, pw, s = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    dx = np.zeros_like(x)
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(dout.shape[2]):
                for j in range(dout.shape[3]):
                    win = x[n, c, i * s:i * s + ph, j * s:j * s + pw]
                    ROUTE
    return dx
"""
SPREAD = "dx[n, c, i * s:i * s + ph, j * s:j * s + pw] += dout[n, c, i, j]"
UNRAVEL = ("r, q = np.unravel_index(np.argmax(win), (pw, ph)); "
           "dx[n, c, i * s + min(r, ph - 1), j * s + min(q, pw - 1)] += dout[n, c, i, j]")


def _pool(route: str, ph: int, pw: int, s: int):
    ns: dict = {}
    exec(POOL.replace("ROUTE", route), ns)  # noqa: S102 - the test's own pair, in this process
    return gradcheck.function_pair(ns["max_pool_forward"], ns["max_pool_backward"],
                                   pool_param={"pool_height": ph, "pool_width": pw, "stride": s})


def test_a_max_pool_giving_the_whole_window_its_gradient_is_named():
    d = gradcheck.diagnose_layer(_pool(SPREAD, 2, 2, 2), (2, 1, 4, 4))
    assert not d.passed and d.codes == ["maxpool-spread-whole"], d.codes


def test_a_max_pool_unravelling_its_argmax_with_the_window_axes_swapped_is_named():
    d = gradcheck.diagnose_layer(_pool(UNRAVEL, 2, 3, 2), (2, 1, 4, 5))
    assert not d.passed and d.codes == ["maxpool-unravel-swapped"], d.codes
    assert "np.unravel_index(argmax, (3, 2)) of a 2x3 window" in d.errors[0].message, d.errors[0].message


LSTM = """
import numpy as np

def sig(v):
    return 1 / (1 + np.exp(-v))

def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    H = prev_h.shape[1]
    a = x @ Wx + prev_h @ Wh + b
    i, f, o, g = sig(a[:, :H]), sig(a[:, H:2 * H]), sig(a[:, 2 * H:3 * H]), np.tanh(a[:, 3 * H:])
    next_c = f * prev_c + i * g
    tc = np.tanh(next_c)
    return o * tc, next_c, (x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c, tc)

def lstm_step_backward(dnext_h, dnext_c, cache):
    x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c, tc = cache
    do = dnext_h * DO_FACTOR
    dc = dnext_c + dnext_h * o * (1 - DC_INSIDE ** 2)
    di, df, dg = dc * g, dc * prev_c, dc * i
    da = np.hstack([di * i * (1 - i), df * f * (1 - f), do * o * (1 - o), dg * (1 - g ** 2)])
    return da @ Wx.T, da @ Wh.T, dc * f, x.T @ da, prev_h.T @ da, da.sum(axis=0)
"""
LSTM_SHAPES = [(3, 2), (3, 4), (3, 4), (2, 16), (4, 16), (16,)]


def _lstm(do_factor: str, dc_inside: str):
    ns: dict = {}
    exec(LSTM.replace("DO_FACTOR", do_factor).replace("DC_INSIDE", dc_inside), ns)  # noqa: S102 - the test's pair
    return gradcheck.function_pair(ns["lstm_step_forward"], ns["lstm_step_backward"])


def test_an_lstm_step_taking_tanhs_derivative_at_the_cell_state_is_named():
    d = gradcheck.diagnose_layer(_lstm("tc", "next_c"), LSTM_SHAPES)
    assert not d.passed and set(d.codes) == {"lstm-line"}, d.codes
    assert "(1 - c_t**2), tanh's derivative at the cell state c_t itself" in d.errors[0].message, d.errors[0].message


def test_an_lstm_step_whose_output_gate_takes_the_cell_state_is_named():
    d = gradcheck.diagnose_layer(_lstm("next_c", "tc"), LSTM_SHAPES)
    assert not d.passed and set(d.codes) == {"lstm-line"}, d.codes
    assert "do = dnext_h * c_t, the cell state," in d.errors[0].message, d.errors[0].message


RNN = """
import numpy as np

class RNN:
    def __init__(self, D, Hd):
        rng = np.random.default_rng(0)
        self.Wx = rng.standard_normal((D, Hd)) * 0.5
        self.Wh = rng.standard_normal((Hd, Hd)) * 0.5
        self.b = rng.standard_normal(Hd) * 0.1

    def forward(self, X):
        N, T, D = X.shape
        self.X, self.H, self.A = X, [np.zeros((N, self.Wh.shape[0]))], []
        for t in range(T):
            self.A.append(X[:, t] @ self.Wx + self.H[-1] @ self.Wh + self.b)
            self.H.append(np.tanh(self.A[-1]))
        return np.stack(self.H[1:], axis=1)

    def backward(self, dH):
        self.dWx, self.dWh, self.db = np.zeros_like(self.Wx), np.zeros_like(self.Wh), np.zeros_like(self.b)
        dX, dh_next = np.zeros_like(self.X), np.zeros_like(self.H[0])
        for t in reversed(range(self.X.shape[1])):
            da = (dH[:, t] + dh_next) * (1 - LOCAL ** 2)
            self.dWx += self.X[:, t].T @ da
            self.dWh += WH_FROM.T @ da
            self.db += da.sum(axis=0)
            dX[:, t] = da @ self.Wx.T
            dh_next = da @ self.Wh.T
        return dX
"""


def _rnn(local: str, wh_from: str):
    return _layer(RNN.replace("LOCAL", local).replace("WH_FROM", wh_from), "RNN", D=2, Hd=3)


def test_an_rnn_taking_tanhs_derivative_at_the_pre_activation_is_named():
    d = gradcheck.diagnose_layer(_rnn("self.A[t]", "self.H[t]"), (3, 4, 2))
    assert not d.passed and set(d.codes) == {"rnn-line"}, d.codes
    assert "da = dh * (1 - a**2), tanh's derivative at the pre-activation" in d.errors[0].message, d.errors[0].message


def test_an_rnn_whose_hidden_weight_gradient_takes_the_steps_output_is_named():
    d = gradcheck.diagnose_layer(_rnn("self.H[t + 1]", "self.H[t + 1]"), (3, 4, 2))
    assert not d.passed and d.codes == ["rnn-line"], d.codes
    assert "dWh is what a tanh RNN's backward through time gives with dWh += h_t.T @ da" in d.errors[0].message


ATTENTION = """
import numpy as np

def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

class Attention:
    def forward(self, Q, K, V):
        self.Q, self.K, self.V = Q, K, V
        self.scale = 1.0 / np.sqrt(Q.shape[-1])
        mask = np.tril(np.ones((Q.shape[1], K.shape[1]), dtype=bool))
        self.S = Q @ K.transpose(0, 2, 1) * self.scale
        self.P = FORWARD_P
        return self.P @ V

    def backward(self, dout):
        P = BACKWARD_P
        dP = dout @ self.V.transpose(0, 2, 1)
        dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True)) * self.scale
        return dS @ self.K, dS.transpose(0, 2, 1) @ self.Q, self.P.transpose(0, 2, 1) @ dout
"""
ATTENTION_SHAPES = [(2, 4, 3), (2, 4, 3), (2, 4, 5)]


def _attention(forward_p: str, backward_p: str):
    return _layer(ATTENTION.replace("FORWARD_P", forward_p).replace("BACKWARD_P", backward_p), "Attention")


def test_attention_masked_after_its_softmax_is_named():
    d = gradcheck.diagnose_layer(_attention("softmax(self.S) * mask", "self.P"), ATTENTION_SHAPES)
    assert not d.passed and set(d.codes) == {"attention-mask-after"}, d.codes


def test_attention_whose_backward_leaves_the_mask_out_is_named():
    d = gradcheck.diagnose_layer(_attention("softmax(np.where(mask, self.S, -1e9))", "softmax(self.S)"),
                                 ATTENTION_SHAPES)
    assert not d.passed and set(d.codes) == {"attention-backward-unmasked"}, d.codes


def test_a_layer_norm_with_eps_outside_the_square_root_in_forward_alone_is_named():
    d = gradcheck.diagnose_layer(_layer_norm(denominator="(self.std + self.eps)"), (6, 5))
    assert not d.passed and d.codes == ["eps-placement"], d.codes
    text = d.errors[0].message
    assert "dX is (dxhat - dxhat.mean(axis=-1) - xhat * (dxhat * xhat).mean(axis=-1)) / den with forward's xhat " \
           "and den = np.sqrt(var) + eps, while forward normalises with eps outside the square root" in text, text
    assert "the derivative only when eps is inside the square root" in text, text  # verify44c F3: what it did


def test_a_layer_norm_with_eps_outside_the_square_root_in_backward_alone_is_named():
    d = gradcheck.diagnose_layer(_layer_norm(backward=OUTSIDE_FORMULA), (6, 5))
    assert not d.passed and d.codes == ["eps-placement"], d.codes
    assert "while forward normalises with eps inside the square root" in d.errors[0].message, d.errors[0].message
