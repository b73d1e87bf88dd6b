"""`gradcheck check` on losses and models with a loss (session 13, tester12 M3, M6, M8): Deep Learning from
Scratch vol. 2's TwoLayerNet whose loss is ``-log(y + 1e-7)`` (the eps named, the zero bias not called unused, a
real bug still FAILed and named), Neural Networks from Scratch's loss on the default real inputs (which options
to use), and an unnamed ``forward(a, b)`` loss with a sign bug (compared with dL/d(prediction)). Each test fails
on the code before its fix. One test runs the console script, the others its ``gradcheck.cli.main`` in this
process (``test_cli.run_here``: the same parser, checks and report, the student's code in its sandbox process).
"""

import pytest
from nnfs_book import NNFS_LOSS
from test_cli import both, run, run_here, student

DLFS2 = """
import numpy as np
class SoftmaxWithLoss:
    def forward(self, x, t):
        self.t = t
        x = x - x.max(axis=1, keepdims=True); e = np.exp(x); self.y = e / e.sum(axis=1, keepdims=True)
        return -np.log(self.y[np.arange(len(t)), t]EPS).mean()
    def backward(self, dout=1):
        dx = self.y.copy(); dx[np.arange(len(self.t)), self.t] -= 1
        return dx * dout / len(self.t)
class Affine:
    def __init__(self, W, b):
        self.params = [W, b]; self.grads = [np.zeros_like(W), np.zeros_like(b)]
    def forward(self, x):
        self.x = x; W, b = self.params; return x @ W + b
    def backward(self, dout):
        W, b = self.params
        self.grads[0][...] = self.x.T @ dout; self.grads[1][...] = dout.sum(axis=0)
        return dout @ W.T
class TwoLayerNet:
    def __init__(self, input_size=4, hidden_size=6, output_size=3, bug=False):
        rng = np.random.default_rng(0)
        self.layers = [Affine(rng.normal(size=(input_size, hidden_size)), np.zeros(hidden_size)),
                       Affine(rng.normal(size=(hidden_size, output_size)), np.zeros(output_size))]
        self.loss_layer = SoftmaxWithLoss(); self.bug = bug
        self.params, self.grads = [], []
        for l in self.layers: self.params += l.params; self.grads += l.grads
    def forward(self, x, t):
        for l in self.layers: x = l.forward(x)
        return self.loss_layer.forward(x, t)
    def backward(self, dout=1):
        dout = self.loss_layer.backward(dout)
        if self.bug: dout = dout * len(self.loss_layer.t)  # forgot the batch mean
        for l in reversed(self.layers): dout = l.backward(dout)
        return dout
"""


def _dlfs2(tmp_path, eps, *extra):
    f = student(tmp_path, DLFS2.replace("EPS", eps), "two_layer_net.py")
    p = run_here("check", f"{f}::TwoLayerNet", "--input-shape", "5,4", "--targets", "labels:3", *extra)
    return p, both(p)


@pytest.mark.parametrize("eps", ["", " + 1e-7"])
def test_dlfs2_zero_output_bias_is_not_called_unused(tmp_path, eps):
    """Before: "forward does not use params[3] and layers.1.params[1]": the probe shifted the zero bias b2 by one
    constant, which softmax does not see; b2's entries one by one do change L."""
    p, out = _dlfs2(tmp_path, eps)
    assert "forward does not use" not in out, out
    assert "but forward does not use" not in out, out


def test_dlfs2_eps_inside_log_is_named_not_first_sample_only(tmp_path):
    """Before: FAIL (8.9e-6 > 1e-6) with "dparams[0] is the gradient of the first sample only"; the mismatch is
    the 1e-7 inside the log, measured by the numerical gradient of the same model with the eps removed. Since
    session 25 (tester25s M5) a PASS with a note naming the guard, as a loss's check gives (it was a FAIL saying
    "not a bug in backward")."""
    p, out = _dlfs2(tmp_path, " + 1e-7")
    assert "first sample only" not in out, out
    assert p.returncode == 0, out
    assert "PASS: TwoLayerNet" in out, out
    assert ("note: backward is the derivative of the loss without the 1e-07 that forward adds inside a log "
            "(two_layer_net.py;") in out, out
    assert "the table compares backward with the central differences of forward with the 1e-07 removed" in out, out


def test_dlfs2_real_bug_with_eps_is_still_named(tmp_path):
    p, out = _dlfs2(tmp_path, " + 1e-7", "--init", '{"bug": true}')
    assert p.returncode == 1, out
    assert "FAIL: TwoLayerNet: gradient mismatch in dX, dparams[0], dparams[1], dparams[2], dparams[3]" in out, out
    assert "a constant factor is wrong" in out or "times" in out, out
    assert "inside np.log" not in out, out


@pytest.mark.parametrize(("src", "want", "consts"), [
    ("import numpy as np\ndef f(y):\n    return -np.log(y + 1e-7)\n", "np.log(y)", [1e-7]),
    ("import numpy as np\ndef f(y, t):\n    delta = 1e-07\n    return -np.sum(t * np.log(y + delta))\n",
     "np.log(y)", [1e-7]),  # Deep Learning from Scratch's cross_entropy_error
    ("from numpy import log\ndef f(y):\n    return -log(1e-12 + y)\n", "log(y)", [1e-12]),
])
def test_eps_free_text_takes_the_eps_out_of_the_log(src, want, consts):
    from gradcheck._log_eps import eps_free_text

    text, found, _ = eps_free_text(src)
    assert want in text and found == consts, text


@pytest.mark.parametrize("src", ["import numpy as np\ndef f(y):\n    return np.log(y + 1.0)\n",  # log(1 + y): no eps
                                 "import numpy as np\ndef f(y):\n    return np.log(y) + 1e-7\n",
                                 "import numpy as np\ndef f(y):\n    return np.log(np.maximum(y, 1e-7))\n"])
def test_eps_free_text_leaves_other_logs(src):
    from gradcheck._log_eps import eps_free_text

    assert eps_free_text(src) is None




@pytest.mark.parametrize("given", [[], ["--pred", "probs"]])
def test_nnfs_loss_on_default_real_inputs_says_which_options(tmp_path, given):
    """Before: "wrong result (exit 1): ... gave L containing 1 non-finite value(s) (first at index (): nan)" and no
    word of --pred/--targets: the default y_pred and y_true are real numbers, and this loss takes probabilities."""
    f = student(tmp_path, NNFS_LOSS.replace("SAMPLES", "samples"), "nnfs_loss.py")
    p = run_here("check", f"{f}::Loss_CategoricalCrossentropy", "--loss", "--input-shape", "5,3", *given)
    out = both(p)
    assert p.returncode == 2, out
    assert "usage error (exit 2)" in out and "wrong result" not in out, out
    assert "finite on y_pred probs and y_true labels:3" in out, out
    assert f"gradcheck check {f}::Loss_CategoricalCrossentropy --loss --input-shape 5,3 --pred probs --targets labels:3" \
        in out, out


@pytest.mark.parametrize(("samples", "code"), [("samples", 0), ("1", 1)])
def test_nnfs_loss_with_the_suggested_options_is_checked(tmp_path, samples, code):
    f = student(tmp_path, NNFS_LOSS.replace("SAMPLES", samples), "nnfs_loss.py")
    p = run_here("check", f"{f}::Loss_CategoricalCrossentropy", "--loss", "--input-shape", "5,3", "--pred", "probs",
            "--targets", "labels:3")
    out = both(p)
    assert p.returncode == code, out
    assert ("a 1/batch is missing" in out) == bool(code), out


def test_loss_nan_on_every_input_kind_stays_a_wrong_result(tmp_path):
    """A loss that is NaN whatever the data (0/0) is still a wrong result, with no suggestion."""
    f = student(tmp_path, "import numpy as np\nclass L:\n    def forward(self, y_pred, y_true):\n"
                          "        return np.sum(y_pred) * np.float64(0) / np.float64(0)\n"
                          "    def backward(self):\n        return np.zeros(1)\n", "nan_loss.py")
    p = run_here("check", f"{f}::L", "--loss", "--input-shape", "5,3")
    out = both(p)
    assert p.returncode == 1, out
    assert "wrong result (exit 1)" in out and "finite on" not in out, out


LOSS_AB_CE = """
import numpy as np
class CE:
    '''softmax cross-entropy with soft targets; forward(a, b): a = logits, b = target probabilities'''
    def forward(self, a, b):
        z = a - a.max(axis=1, keepdims=True)
        self.p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True); self.b = b
        return -np.sum(b * np.log(self.p)) / len(a)
    def backward(self):
        return (self.p - self.b) / len(self.p) * FACTOR
"""


#: session 15: logits beside probability targets are ordered by the data (L is affine in the target), before
#: backward's result is read ("backward's result is -1 times the central differences of L with respect to a")
DATA_ORDER = ("the data say it (real y_pred beside probs y_true): L is affine in b when it holds y_true, as a "
              "cross-entropy is in its target, and not in a: a is the prediction")


@pytest.mark.parametrize(("factor", "said"), [("-1", DATA_ORDER), ("5", DATA_ORDER)])
def test_unnamed_asymmetric_loss_with_a_wrong_factor_is_compared_with_the_prediction(tmp_path, factor, said):
    """Before: backward (a sign or a factor wrong) matched neither dL/da nor dL/db, so Keras's order was assumed
    and the table compared it with dL/db, the target's gradient (a FAIL with no diagnosis)."""
    f = student(tmp_path, LOSS_AB_CE.replace("FACTOR", factor), "ce.py")
    p = run_here("check", f"{f}::CE", "--loss", "--input-shape", "5,3", "--targets", "probs")
    out = both(p)
    assert p.returncode == 1, out
    assert "loss: forward(a=y_pred, b=y_true)" in out and said in out, out
    assert "FAIL: CE: gradient mismatch in dy_pred." in out, out
    assert ("opposite sign" in out or "wrong sign" in out) if factor == "-1" else "5 times too large" in out, out


def test_unnamed_asymmetric_loss_correct_still_passes(tmp_path):
    f = student(tmp_path, LOSS_AB_CE.replace("FACTOR", "1"), "ce.py")
    p = run("check", f"{f}::CE", "--loss", "--input-shape", "5,3", "--targets", "probs")
    out = both(p)
    assert p.returncode == 0, out
    assert "loss: forward(a=y_pred, b=y_true)" in out and "PASS: CE: dL/dy_pred matches" in out, out


LOSS_AB_UNRELATED = """
import numpy as np
class Odd:
    def forward(self, a, b):
        self.a, self.b = a, b
        return np.sum(a ** 3 * b) / a.size
    def backward(self):
        return np.cos(self.a) * self.b
"""


def test_unnamed_loss_matching_neither_order_says_the_fail_holds_in_either(tmp_path):
    f = student(tmp_path, LOSS_AB_UNRELATED, "odd.py")
    p = run_here("check", f"{f}::Odd", "--loss", "--input-shape", "5,3")
    out = both(p)
    assert p.returncode == 1, out
    assert ("backward's result is no multiple of L's gradient with respect to a or b, so it is wrong whichever is "
            "the prediction") in out, out


MSE_AB = """
import numpy as np
class MSE:
    def forward(self, a, b):
        self.a, self.b = a, b
        return np.mean((a - b) ** 2)
    def backward(self):
        return SIGN * 2 * (self.a - self.b) / self.a.size
"""


@pytest.mark.parametrize(("sign", "pred"), [("1", "a"), ("-1", "b")])
def test_symmetric_unnamed_loss_says_which_argument_backward_fits(tmp_path, sign, pred):
    """L of a - b: a sign error and the other order give the same numbers; the usage error (tester13 H6) says
    which argument backward's result fits."""
    f = student(tmp_path, MSE_AB.replace("SIGN", sign), "mse.py")
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "5,3")
    out = both(p)
    assert p.returncode == 2, out
    assert f"backward returns dL/d{pred}, which is correct if {pred} is the prediction" in out, out
