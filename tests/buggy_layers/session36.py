"""Session 36 (newuser35 L1: an LSTM cell's backward bugs were "no known bug pattern"): one LSTM step in two layouts,
each with one planted line of backward changed (``# BUG``), named by :func:`gradcheck.diagnose._lstm_signature`.

* CS231n's ``lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b) -> (next_h, next_c, cache)`` with
  ``lstm_step_backward(dnext_h, dnext_c, cache)`` (assignment 3's ``rnn_layers.py``): Wx (D, 4H), Wh (H, 4H), b (4H,),
  gates i, f, o, g. The pairs ``lstm<bug>`` share session24.py's forward; each backward is the correct one with
  ``bug`` set.
* manualprop.LSTM's layout as a one-step class ``forward(x, h_prev, c_prev) -> (h, c)``, ``backward(dh, dc) -> (dx,
  dh_prev, dc_prev)``: W_ih (4H, D), W_hh (4H, H), b_ih, b_hh (4H,), PyTorch's gates i, f, g, o; a ``params``/``grads``
  dict. ``LSTMCellTorch<Bug>`` sets ``BUG``.

The bugs: ``fcell`` df = dc_t * c_t (the new cell state for c_prev); ``nof`` dc_prev = dc_t (f missing); ``tanhc``
dc_t = dc + dh * o (tanh(c)'s derivative missing); ``prei`` the input gate's sigmoid derivative at its pre-activation;
``nosig`` the output gate's derivative left out; ``order`` the gates' gradients joined in PyTorch's order i, f, g, o
where forward cut CS231n's i, f, o, g (the class: the other way); ``fdh`` df = dh * c_prev (newuser35's lstm_bug.py);
``meandb`` (a control: an unrelated bug, db the batch's mean) and ``two`` (two bugs at once: nothing names both).
GatedInput: a gate that is no LSTM step's, its planted bug keeping the generic "gate-factor-missing".
"""

import numpy as np

from .session24 import lstm_step_forward

INPUT = [(3, 2), (3, 4), (3, 4)]
KWARGS = {}
#: the pairs' inputs: x (N, D), prev_h, prev_c (N, H), Wx (D, 4H), Wh (H, 4H), b (4H,)
PAIRS = ("lstm", "lstmfcell", "lstmnof", "lstmtanhc", "lstmprei", "lstmnosig", "lstmorder", "lstmfdh", "lstmmeandb",
         "lstmtwo")
INPUTS = dict.fromkeys(PAIRS, [(3, 2), (3, 4), (3, 4), (2, 16), (4, 16), (16,)])


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _backward(dnext_h, dnext_c, cache, bug=""):
    """CS231n's lstm_step_backward for session24.py's lstm_step_forward (its cache), one line changed by ``bug``."""
    x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c = cache
    a_i = np.log(i / (1 - i))  # the input gate's pre-activation, for the bug that takes it
    tanh_c = np.tanh(next_c)
    dcell = dnext_c + dnext_h * (o if bug == "tanhc" else o * (1 - tanh_c ** 2))  # BUG (tanhc): tanh' missing
    di, do, dg = dcell * g, dnext_h * tanh_c, dcell * i
    df = {"fcell": dcell * next_c, "fdh": dnext_h * prev_c}.get(bug, dcell * prev_c)  # BUG (fcell, fdh)
    dprev_c = dcell if bug == "nof" else dcell * f  # BUG (nof): the forget gate missing
    da_i = di * a_i * (1 - a_i) if bug in ("prei", "two") else di * i * (1 - i)  # BUG (prei): at a
    da_o = do if bug == "nosig" else do * o * (1 - o)  # BUG (nosig): sigmoid's derivative left out
    parts = [da_i, df * f * (1 - f), dg * (1 - g ** 2), da_o] if bug in ("order", "two") else [  # BUG (order)
        da_i, df * f * (1 - f), da_o, dg * (1 - g ** 2)]
    da = np.hstack(parts)
    db = da.mean(axis=0) if bug == "meandb" else da.sum(axis=0)  # BUG (meandb): the control's
    return da.dot(Wx.T), da.dot(Wh.T), dprev_c, x.T.dot(da), prev_h.T.dot(da), db


def _pair(bug):
    """The pair ``lstm<bug>_forward`` / ``lstm<bug>_backward``: CS231n's forward, :func:`_backward` with ``bug``."""
    def backward(dnext_h, dnext_c, cache):
        return _backward(dnext_h, dnext_c, cache, bug)
    backward.__name__ = f"lstm{bug}_backward"
    return lstm_step_forward, backward


for _bug in ("", "fcell", "nof", "tanhc", "prei", "nosig", "order", "fdh", "meandb", "two"):
    globals()[f"lstm{_bug}_forward"], globals()[f"lstm{_bug}_backward"] = _pair(_bug)


class LSTMCellTorch:
    """manualprop.LSTM's layout, one step: W_ih (4H, D), W_hh (4H, H), b_ih, b_hh (4H,); gates i, f, g, o."""

    BUG = ""

    def __init__(self, input_size=2, hidden_size=4):
        rng = np.random.default_rng(0)
        H = self.H = hidden_size
        s = 1 / np.sqrt(H)
        self.params = {"W_ih": rng.uniform(-s, s, (4 * H, input_size)), "W_hh": rng.uniform(-s, s, (4 * H, H)),
                       "b_ih": rng.uniform(-s, s, 4 * H), "b_hh": rng.uniform(-s, s, 4 * H)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, x, h_prev, c_prev):
        H, p = self.H, self.params
        a = x @ p["W_ih"].T + p["b_ih"] + h_prev @ p["W_hh"].T + p["b_hh"]
        i, f, g, o = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H]), np.tanh(a[:, 2 * H:3 * H]), sigmoid(a[:, 3 * H:])
        c = f * c_prev + i * g
        self.cache = (x, h_prev, c_prev, a, i, f, g, o, c)
        return o * np.tanh(c), c

    def backward(self, dh, dc):
        x, h_prev, c_prev, a, i, f, g, o, c = self.cache
        H, p, bug = self.H, self.params, self.BUG
        tc = np.tanh(c)
        dc = dc + dh * (o if bug == "tanhc" else o * (1 - tc ** 2))  # BUG (tanhc)
        di, dg, do = dc * g, dc * i, dh * tc
        df = {"fcell": dc * c, "fdh": dh * c_prev}.get(bug, dc * c_prev)  # BUG (fcell, fdh)
        da_i = di * a[:, :H] * (1 - a[:, :H]) if bug == "prei" else di * i * (1 - i)  # BUG (prei)
        da_o = do if bug == "nosig" else do * o * (1 - o)  # BUG (nosig)
        parts = [da_i, df * f * (1 - f), dg * (1 - g ** 2), da_o]
        da = np.concatenate([parts[k] for k in ((0, 1, 3, 2) if bug == "order" else (0, 1, 2, 3))], axis=1)  # BUG
        self.grads["W_ih"], self.grads["W_hh"] = da.T @ x, da.T @ h_prev
        self.grads["b_ih"] = self.grads["b_hh"] = da.sum(axis=0)
        return da @ p["W_ih"], da @ p["W_hh"], dc if bug == "nof" else dc * f  # BUG (nof)


for _bug in ("fcell", "nof", "tanhc", "prei", "nosig", "order", "fdh"):  # LSTMCellTorchFcell, ...: one BUG each
    globals()[f"LSTMCellTorch{_bug.capitalize()}"] = type(f"LSTMCellTorch{_bug.capitalize()}", (LSTMCellTorch,),
                                                          {"BUG": _bug})


class GatedInput:
    """A gate on the second input, Y = sigmoid(X @ W) * tanh(H) (X (N, D), H (N, K), W (D, K)): not an LSTM step, so the
    gate missing from dH keeps the generic name ("gate-factor-missing"; lesson 32's LSTMCellNoForgetGate, which
    held it until session 36, is now named as a line of the LSTM step)."""

    INPUT = [(4, 3), (4, 5)]

    def __init__(self):
        self.params = {"W": np.random.default_rng(1).standard_normal((3, 5))}
        self.grads = {"W": np.zeros((3, 5))}

    def forward(self, X, H):
        s = sigmoid(X @ self.params["W"])
        self.cache = (X, H, s)
        return s * np.tanh(H)

    def backward(self, dY):
        X, H, s = self.cache
        t = np.tanh(H)
        da = dY * t * s * (1 - s)
        self.grads["W"] = X.T @ da
        return da @ self.params["W"].T, self._dH(dY, s, t)

    def _dH(self, dY, s, t):
        return dY * s * (1 - t ** 2)


class GatedInputNoGate(GatedInput):
    def _dH(self, dY, s, t):
        return dY * (1 - t ** 2)  # BUG: the gate s missing from dH
