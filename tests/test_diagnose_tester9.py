"""Issue 10 (tester9's W9, W2's remainder, an exit-3 error in one of two modes): diagnoses that were missing.

- a scalar parameter's gradient a simple ratio of the right one (PReLU ``dalpha * 0.5``) is named as arrays are;
- dX = d @ W for a square W where d @ W.T is due, d an inner gradient (an RNN step's ``dz @ Wh``), is named;
- a loss whose forward takes ``log(y + 1e-7)`` while backward is the gradient of ``log(y)`` (Deep Learning
  from Scratch's ``SoftmaxWithLoss``) is named from the numbers alone, stays a FAIL, and a real bug beside
  it is never read as that eps;
- an error the checked code raised while checking one mode says the mode and the calls.

Correct gradients come from HIPS autograd (the oracle); each planted bug got "no known bug pattern" (or no
diagnosis, or no mode in the error) before.
"""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from test_cli import both, run, run_here, student

from gradcheck.diagnose import _transposed_weight_signature, name_log_eps, name_signature
from tests.buggy_layers import diagnose

# ----------------------------------------------------------------------------- W9: scalar factor


def test_scalar_gradient_half_the_right_one_is_named():
    f = name_signature("dalpha", np.array(1.930333665), np.array(3.86066733))
    assert f is not None and f.code == "factor" and "0.5 times the correct gradient: a constant" in f.message, f


@pytest.mark.parametrize("ratio", [1.2345, -0.7, 0.9])
def test_scalar_gradient_off_by_no_simple_ratio_is_not_named_a_factor(ratio):
    """One number is always some multiple of another: only a simple ratio p/q (p, q <= 4) is named."""
    assert name_signature("dalpha", np.array(3.86 * ratio), np.array(3.86)) is None


def test_prelu_dalpha_halved_named_through_diagnose():
    d = diagnose("activations.py::PReLUDalphaHalf")
    assert d.codes[:1] == ["factor"] and "dalpha is 0.5 times" in d.sentence(), d.sentence()


# ----------------------------------------------------------------------------- W9: square weight untransposed


def _rnn(seed=0):
    rng = np.random.default_rng(seed)
    x, h, G = rng.standard_normal((4, 3)), rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    Wx, Wh, b = 0.5 * rng.standard_normal((3, 5)), 0.5 * rng.standard_normal((5, 5)), 0.1 * rng.standard_normal(5)
    return x, h, G, Wx, Wh, b


def test_rnn_dh_with_untransposed_square_weight_is_named_against_autograd():
    x, h, G, Wx, Wh, b = _rnn()
    right = grad(lambda hh: anp.sum(G * anp.tanh(x @ Wx + hh @ Wh + b)))(h)  # the oracle
    dz = G * (1 - np.tanh(x @ Wx + h @ Wh + b) ** 2)
    assert np.allclose(dz @ Wh.T, right, rtol=1e-12, atol=1e-12)
    code, fields = _transposed_weight_signature(dz @ Wh, right, G, {"Wh": Wh}, "dh")
    assert code == "transposed-weight" and fields["fix"] == "dh = d @ Wh.T, not d @ Wh", fields
    # another wrong dh (tanh' at the output, RNNTanhTwice) is no transposed weight
    other = (G * (1 - np.tanh(np.tanh(x @ Wx + h @ Wh + b)) ** 2)) @ Wh.T
    assert _transposed_weight_signature(other, right, G, {"Wh": Wh}, "dh") is None
    # a symmetric Wh: d @ Wh is d @ Wh.T, nothing to name
    S = Wh + Wh.T
    assert _transposed_weight_signature(dz @ S, dz @ S.T, G, {"Wh": S}, "dh") is None


def test_rnn_step_dh_untransposed_named_through_diagnose():
    d = diagnose("pool_embed_rnn.py::RNNDhUntransposed")
    s = d.sentence()
    assert d.codes[:1] == ["transposed-weight"] and "d @ Wh.T, not d @ Wh" in s, s
    assert diagnose("pool_embed_rnn.py::RNNStep").passed


# ----------------------------------------------------------------------------- W2: log(y + eps) in forward

EPS_LOSS = """
import numpy as np

def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)

def cross_entropy_error(y, t):
    if t.size == y.size:
        t = t.argmax(axis=1)
    return -np.sum(np.log(y[np.arange(y.shape[0]), t] + 1e-7)) / y.shape[0]

class SoftmaxWithLoss:
    def forward(self, x, t):
        self.t = t
        self.y = softmax(x)
        return cross_entropy_error(self.y, self.t)

    def backward(self, dout=1):
        n = self.t.shape[0]
        if self.t.size == self.y.size:
            return (self.y - self.t) / n {bug}
        dx = self.y.copy()
        dx[np.arange(n), self.t] -= 1
        return dx / n {bug}
"""


def _ce(c):
    def loss(x, w):
        z = x - anp.max(x, axis=-1, keepdims=True)
        p = anp.exp(z) / anp.sum(anp.exp(z), axis=-1, keepdims=True)
        return -anp.sum(w * anp.log(p + c)) / x.shape[0]
    return loss


@pytest.mark.parametrize("labels", [False, True])
def test_log_eps_named_from_numbers_against_autograd(labels):
    rng = np.random.default_rng(1)
    x, y = 3 * rng.standard_normal((4, 3)), rng.integers(0, 3, 4)  # some p of the true class small
    w = np.eye(3)[y]
    n = grad(_ce(1e-7))(x, w)  # what central differences of DLfS's forward estimate
    m = grad(_ce(0.0))(x, w)  # what its backward returns
    assert np.max(np.abs(m - n) / (np.abs(m) + np.abs(n))) > 1e-6  # a FAIL at the default rtol
    f = name_log_eps("dy_pred", m, n, y if labels else w, x)
    assert f is not None and f.code == "log-eps" and "c = 1e-07" in f.message and "--rtol 1e-04 accepts it" in f.message, f
    # a real bug beside the eps (one entry off by 1e-3, a 1/N missing) is never read as the eps
    bad = m.copy()
    bad[0, 0] += 1e-3
    assert name_log_eps("dy_pred", bad, n, w, x) is None
    assert name_log_eps("dy_pred", m * 4, n, w, x) is None
    # no eps in forward: the two agree and nothing is said
    assert name_log_eps("dy_pred", m, m, w, x) is None


@pytest.mark.parametrize("targets", ["onehot", "labels"])
def test_dlfs_softmax_with_loss_eps_is_named_and_passes(tmp_path, targets):
    # session 14 (tester14): this FAIL depended on the seed; backward is the derivative of the loss without its
    # eps (the book's convention), so it PASSes with a NOTE saying so on every seed (tests/test_cli_losses_s14b.py)
    path = student(tmp_path, EPS_LOSS.replace("{bug}", ""))
    p = run_here("check", f"{path}::SoftmaxWithLoss", "--loss", "--input-shape", "4,3", "--targets", targets)
    out = " ".join(both(p).split())
    assert p.returncode == 0 and "PASS: SoftmaxWithLoss" in out, out
    assert "NOTE: backward is the derivative of the loss without its 1e-07" in out, out
    p = run_here("check", f"{path}::SoftmaxWithLoss", "--loss", "--input-shape", "4,3", "--targets", targets,
                 "--rtol", "1e-5")
    assert p.returncode == 0, both(p)


def test_real_bug_beside_the_eps_is_not_called_the_eps(tmp_path):
    path = student(tmp_path, EPS_LOSS.replace("{bug}", "* 2  # BUG"))
    p = run_here("check", f"{path}::SoftmaxWithLoss", "--loss", "--input-shape", "4,3", "--targets", "onehot")
    out = both(p)
    assert p.returncode == 1 and "small constant inside a log" not in out, out


# ----------------------------------------------------------------------------- exit 3 in one mode

DLFS_DROPOUT = """
import numpy as np

class Dropout:
    def __init__(self, dropout_ratio=0.5):
        self.dropout_ratio = dropout_ratio
        self.mask = None

    def forward(self, x, train_flg=True):
        if train_flg:
            self.mask = np.random.rand(*x.shape) > self.dropout_ratio
            return x * self.mask
        return x * (1.0 - self.dropout_ratio)

    def backward(self, dout):
        return dout * self.mask
"""


def test_error_in_eval_mode_says_the_mode_and_the_stale_state(tmp_path):
    p = run("check", f"{student(tmp_path, DLFS_DROPOUT)}::Dropout", "--input-shape", "4,3")  # the console script
    out = both(p)
    assert p.returncode == 3, out
    assert ("while checking eval mode: forward(X, train_flg=False) then backward(dY): Dropout.backward(dY)"
            in out), out
    assert "Backward in eval mode reads state only a training forward sets" in out, out
