"""Session 25's leftovers of session 24 (left25) checked through the CLI: bugs that FAILed with "no known bug pattern"
and are named from the numbers now, penalties read by the names of their strengths, and students' protocols."""

import json
import pathlib

from test_cli import both, run_here

TABLE = pathlib.Path(__file__).parent / "buggy_layers"


def test_pool_backward_ignoring_the_stride_is_named(tmp_path):
    """tester24s g07/g11: Kulbear's published ``pool_backward`` (deep-learning.ai's pooling pair) takes each window's
    corner at (h, w) where forward takes (h*stride, w*stride): FAILed "no known bug pattern" (22 of 96 elements
    wrong); named now, in max and average mode, with the fix; the course's own pair still passes."""
    f = TABLE / "session25.py"
    for mode in ("max", "average"):
        init = json.dumps({"hparameters": {"stride": 2, "f": 2}, "mode": mode})
        p = run_here("check", f"{f}::poolstride", "--input-shape", "2,4,4,3", "--init", init)
        text = both(p)
        assert p.returncode == 1, text
        assert f"diagnosis: dA_prev is {mode} pooling's gradient over windows whose corners are at (h, w), not at " \
               "(h*stride, w*stride): forward (stride 2, windows of 2x2)" in text, text
        assert "vert_start = h * stride, horiz_start = w * stride" in text and "no known bug pattern" not in text, text
        p = run_here("check", f"{f}::pool", "--input-shape", "2,4,4,3", "--init", init)
        assert p.returncode == 0 and "PASS: pool" in both(p), both(p)
    init = json.dumps({"hparameters": {"stride": 2, "f": 2}})  # g11: mode left at its default, "max"
    p = run_here("check", f"{f}::poolstride", "--input-shape", "2,4,4,3", "--init", init)
    assert p.returncode == 1 and "dA_prev is max pooling's gradient over windows" in both(p), both(p)


LIN = '''
import numpy as np


class Lin:
    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((4, 3)), "b": np.zeros(3)}
        self.grads = {}
        SETTING

    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY + COEF * self.params["W"]
        self.grads["b"] = dY.sum(0)
        return dY @ self.params["W"].T
'''


def lin(tmp_path, setting, coef, name="lin.py"):
    f = tmp_path / name
    f.write_text(LIN.replace("SETTING", setting).replace("COEF", coef))
    return f


def test_a_number_not_named_as_a_strength_never_explains_a_dy_free_term(tmp_path):
    """session 24's leftover: dW = X.T @ dY + 1*W in a layer with ``self.stride = 1`` was NOT CHECKED ("1 is
    stride"); a number explains the term as a penalty only when its name reads as a regulariser's strength: FAIL,
    naming the term; with ``self.reg = 1`` the same term is a penalty of that strength (NOT CHECKED, never PASS)."""
    p = run_here("check", f"{lin(tmp_path, 'self.stride = 1', '1')}::Lin", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 1, text
    assert "backward(0)'s dW = 1*W, and no number the layer states as a regulariser's strength explains it (it " \
           "states none;" in text and "NOT CHECKED" not in text and "stride" not in text, text
    p = run_here("check", f"{lin(tmp_path, 'self.reg = 1', '1')}::Lin", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 3 and "1 is reg with reg = 1" in text, text


def test_a_strength_held_in_a_private_attribute_is_read(tmp_path):
    """session 24's leftover: ``self._reg = 0.1`` beside dW's term 0.1*W was not seen (only public numbers were
    read), so a regulariser's gradient FAILed as a term no number explains; now NOT CHECKED naming _reg (exit 3), in
    the sandbox as here; 0.3*W (neither _reg nor 2*_reg) still FAILs."""
    p = run_here("check", f"{lin(tmp_path, 'self._reg = 0.1', 'self._reg')}::Lin", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 3, text
    assert "0.1*P with P = W: 0.1 is _reg with _reg = 0.1" in text and "set _reg to 0" in text, text
    p = run_here("check", f"{lin(tmp_path, 'self._reg = 0.1', '0.3')}::Lin", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 1 and "0.3*W" in text and "_reg = 0.1" in text and "NOT CHECKED" not in text, text


SVM = '''
import numpy as np


def svm_loss_naive(W, X, y, reg):
    loss = 0.0; dW = np.zeros_like(W)
    for i in range(X.shape[0]):
        s = X[i] @ W
        for j in range(W.shape[1]):
            if j == y[i]: continue
            m = s[j] - s[y[i]] + 1
            if m > 0:
                loss += m; dW[:, j] += X[i]; dW[:, y[i]] -= X[i]
    loss /= X.shape[0]; DATA
    loss += LOSS; dW += GRAD
    return loss, dW
'''
SVM_INIT = ("--loss", "--input-shape", "4,3", "--init", json.dumps(
    {"X": [[1.0, 0.5, -0.3, 0.2], [0.1, -1.2, 0.7, 0.4], [-0.5, 0.3, 0.9, -1.1]], "y": [0, 2, 1], "reg": 0.1}))


def svm(tmp_path, loss="reg * np.sum(W * W)", grad="2 * reg * W", data="dW /= X.shape[0]"):
    f = tmp_path / "svm.py"
    f.write_text(SVM.replace("LOSS", loss).replace("GRAD", grad).replace("DATA", data))
    return f


def test_a_loss_functions_penalty_gradient_of_another_convention_is_named(tmp_path):
    """newuser24 L9: CS231n's svm_loss_naive with ``loss += reg * np.sum(W * W)`` and ``dW += reg * W`` (2 * reg * W
    is due) FAILed "no known bug pattern"; backward read again at reg = 0 (its data part) names the conventions of
    the loss and of the gradient. The consistent conventions PASS; a data part wrong too is not called a penalty."""
    p = run_here("check", f"{svm(tmp_path, grad='reg * W')}::svm_loss_naive", *SVM_INIT)
    text = both(p)
    assert p.returncode == 1, text
    assert "diagnosis: dW's penalty term is not the gradient of the penalty the loss adds: with reg = 0 backward's " \
           "dW plus 2*reg*W is the gradient of the loss at reg = 0.1" in text, text
    assert "so the loss adds reg*np.sum(W*W), whose gradient is 2*reg*W, and backward adds reg*W" in text, text
    assert "add 2*reg*W to dW where it adds reg*W (dW += 2*reg*W), or make the loss add 0.5*reg*np.sum(W*W)" in text
    p = run_here("check", f"{svm(tmp_path, grad='0 * W')}::svm_loss_naive", *SVM_INIT)
    assert p.returncode == 1 and "and backward adds nothing (reg = 0.1, --init); add 2*reg*W to dW" in both(p), both(p)
    for loss, grad in (("reg * np.sum(W * W)", "2 * reg * W"), ("0.5 * reg * np.sum(W * W)", "reg * W")):
        p = run_here("check", f"{svm(tmp_path, loss, grad)}::svm_loss_naive", *SVM_INIT)
        assert p.returncode == 0, both(p)
    p = run_here("check", f"{svm(tmp_path, grad='reg * W', data='pass')}::svm_loss_naive", *SVM_INIT)
    assert p.returncode == 1 and "penalty term" not in both(p) and "no known bug pattern" in both(p), both(p)


def test_an_rnn_carrying_half_the_hidden_states_gradient_is_named(tmp_path):
    """The planted RNNNoCarryHalf (session 16: ``dY[:, t] + 0.5 * dprev``) FAILed "no known bug pattern" in every
    tensor: the factor is read off step T-2 (its gradient less step T-2's own output's is 0.5 times what step T-1's
    output sends back) and confirmed at step 0 (step tau's gradient reaching it times 0.5**tau): one sentence names
    it, with h0's and the weights' gradients wrong through it; the missing carry keeps its own name."""
    f = TABLE / "rnn_seq.py"
    p = run_here("check", f"{f}::RNNNoCarryHalf", "--input-shape", "3,4,2;3,3")
    text = both(p)
    assert p.returncode == 1, text
    assert "multiplied by 0.5 at each step (checked at steps 0 and 2 of 0..3, and right at the last): backward adds " \
           "0.5 * dprev to step t's upstream gradient" in text, text
    assert "dh0, dWx, dWh, db are wrong through the same scaled term" in text and "no known bug" not in text, text
    p = run_here("check", f"{f}::RNNNoCarry", "--input-shape", "3,4,2;3,3")
    assert p.returncode == 1 and "is the gradient of step t's own output alone" in both(p), both(p)


NODE = '''
import numpy as np


class Param:
    def __init__(self, n, d):
        rng = np.random.default_rng(0)
        self.w, self.b = 0.3 * rng.standard_normal((n, d + n)), 0.1 * rng.standard_normal(n)
        self.w_diff, self.b_diff = np.zeros_like(self.w), np.zeros_like(self.b)


class State:
    def __init__(self, n):
        self.h, self.bottom_diff_h = np.zeros(n), np.zeros(n)


class TanhNode:
    def __init__(self, param, state):
        self.param, self.state = param, state

    def bottom_data_is(self, x, h_prev=None):
        if h_prev is None:
            h_prev = np.zeros_like(self.state.h)
        self.xc = np.hstack((x, h_prev))
        self.state.h = np.tanh(self.param.w @ self.xc + self.param.b)

    def top_diff_is(self, top_diff_h):
        dz = DZ
        self.param.w_diff += np.outer(dz, self.xc)
        self.param.b_diff += dz
        self.state.bottom_diff_h = (self.param.w.T @ dz)[len(self.xc) - len(dz):]
'''
ADAPTER = '''
import numpy as np

from node import Param, State, TanhNode


class TanhNodeLayer:
    def __init__(self):
        self.param = Param(4, 3)
        self.node = TanhNode(self.param, State(4))
        self._x = np.linspace(-1, 1, 3)
        self.params = {"w": self.param.w, "b": self.param.b}
        self.grads = {}

    def forward(self, h_prev):
        self.node.bottom_data_is(self._x, h_prev)
        return self.node.state.h.copy()

    def backward(self, dh):
        self.param.w_diff, self.param.b_diff = np.zeros_like(self.param.w), np.zeros_like(self.param.b)
        self.node.top_diff_is(dh)
        self.grads = {"w": self.param.w_diff, "b": self.param.b_diff}
        return self.node.state.bottom_diff_h
'''


def test_a_class_without_forward_and_backward_is_told_so_with_the_adapter_to_write(tmp_path):
    """tester24s l01: nicodjimenez/lstm's LstmNode (Caffe's names: bottom_data_is(x, s_prev, h_prev), top_diff_is(
    top_diff_h, top_diff_s); objects as constructor arguments) got "LstmNode(lstm_param, lstm_state) needs
    lstm_param, lstm_state, which only --init can give". The refusal now says what it found (no forward, no backward;
    its methods) and the adapter class to write around it; the adapter written as it says (a node of the same
    protocol) is checked: PASS, and FAIL with the node's tanh derivative missing."""
    (tmp_path / "node.py").write_text(NODE.replace("DZ", "(1 - self.state.h ** 2) * top_diff_h"))
    p = run_here("check", f"{tmp_path / 'node.py'}::TanhNode", "--input-shape", "4")
    text = both(p)
    assert p.returncode == 2 and "which only --init can give" not in text, text
    assert "TanhNode has no forward() and no backward() method: its public methods are bottom_data_is(x, " \
           "h_prev=None), top_diff_is(top_diff_h), so gradcheck cannot call it as a layer" in text, text
    assert "class TanhNodeLayer: def __init__(self): self.node = TanhNode(param, state)" in text, text
    assert "def forward(self, X): self.node.bottom_data_is(X, ...)" in text, text
    assert "self.node.top_diff_is(dY, ...)" in text and "check FILE::TanhNodeLayer" in text, text
    (tmp_path / "layer.py").write_text(ADAPTER)
    p = run_here("check", f"{tmp_path / 'layer.py'}::TanhNodeLayer", "--input-shape", "4")
    assert p.returncode == 0 and "PASS: TanhNodeLayer" in both(p), both(p)
    (tmp_path / "node.py").write_text(NODE.replace("DZ", "top_diff_h"))
    p = run_here("check", f"{tmp_path / 'layer.py'}::TanhNodeLayer", "--input-shape", "4")
    assert p.returncode == 1, both(p)


def test_ng_rnn_and_lstm_cells_returning_a_dict_of_gradients_are_read_by_key(tmp_path):
    """tester24s g12: Andrew Ng's rnn_cell_forward(xt, a_prev, parameters) -> (a_next, yt_pred, cache) with
    rnn_cell_backward(da_next, cache) -> {"dxt": ..., "da_prev": ..., "dWax": ..., "dWaa": ..., "dba": ...} was
    refused (a tuple of 3; a dict). Now the outputs backward takes gradients for are checked (yt_pred is said not to
    be), the dict is read by the d<name> convention for each array argument and each array of parameters (weights,
    perturbed as forward's own), a weight without a key read as 0: the course's cells PASS (every gradient, dWya
    and dby 0), a missing dWaa FAILs, lstm_cell's ignored dc_next is named; keys naming nothing are refused."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("s25", TABLE / "session25.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    f = TABLE / "session25.py"
    rnn = ("--input-shape", "3,4;5,4", "--init", json.dumps(mod.INIT["rnncell"]))
    p = run_here("check", f"{f}::rnncell", *rnn)
    text = both(p)
    assert p.returncode == 0 and "PASS: rnncell: every gradient (dxt, da_prev, dWax, dWaa, dWya, dba, dby)" in text
    assert "a_next (5, 4) checked as Y" in text and "yt_pred (2, 4) (float64): backward takes no upstream gradient " \
           "for it, so it is not checked" in text, text
    assert "parameters['Wax'], parameters['Waa']" in text and "Wya, by: no key, read as 0" in text, text
    p = run_here("check", f"{f}::rnncellnodWaa", *rnn)
    assert p.returncode == 1 and "dWaa is all zeros" in both(p), both(p)
    lstm = ("--input-shape", "3,4;5,4;5,4", "--init", json.dumps(mod.INIT["lstmcell"]))
    p = run_here("check", f"{f}::lstmcell", *lstm)
    assert p.returncode == 0 and "PASS: lstmcell: every gradient (dxt, da_prev, dc_prev, dWf, dWi" in both(p), both(p)
    p = run_here("check", f"{f}::lstmcellnodc", *lstm)
    assert p.returncode == 1 and "backward does not use the upstream gradient dc_next" in both(p), both(p)
    g = tmp_path / "cell.py"
    g.write_text((TABLE / "session25.py").read_text().replace('"dba": np.sum(dtanh, axis=1, keepdims=1)}\n    return',
                                                              '"dba": np.sum(dtanh, axis=1, keepdims=1), "dbb": 0}\n'
                                                              '    return', 1))
    p = run_here("check", f"{g}::rnncell", *rnn)
    assert p.returncode == 3 and "keys dbb name no array argument of rnncell_forward" in both(p), both(p)
