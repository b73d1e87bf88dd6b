"""Issue 10 (tester9's W1, W14, W2-W4, W16): the names students give forward's training switch and a loss's
arguments. Each class here is checked through ``gradcheck check`` as a student runs it; each planted bug
passed before (a training branch never run, a loss called with its arguments swapped). W1's --training runs the
console script, the others its ``gradcheck.cli.main`` in this process (``test_cli.run_here``: the same parser,
checks and report, the student's code in its sandbox process), which spares the start of a Python per check.

Values are asserted against HIPS autograd (the loss binding, in process) and the verdicts against the bug
planted: a Dropout whose training backward forgets the 1/(1-p) scale must FAIL in training mode.
"""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad
from test_cli import both, run, run_here, student

DROPOUT = """
import numpy as np

class Dropout:
    def __init__(self, p=0.5):
        self.p = p

    def forward(self, X, {arg}={default}):
        if {train_test}:
            self.mask = (np.random.rand(*X.shape) > self.p) / (1 - self.p)
            return X * self.mask
        self.mask = None
        return X

    def backward(self, dY):
        if self.mask is None:
            return dY
        return dY * (self.mask > 0)  # BUG: the scale 1/(1-p) is missing
"""


def dropout(tmp_path, arg, default="False", train_test=None):
    return student(tmp_path, DROPOUT.format(arg=arg, default=default, train_test=train_test or arg))


@pytest.mark.parametrize("arg", ["train_flg", "train_mode", "is_train"])
def test_boolean_training_switches_check_the_training_branch(tmp_path, arg):
    """W1: train_flg (Deep Learning from Scratch), train_mode, is_train were not read: "forward has no training
    argument" and a PASS of the buggy training backward."""
    p = run_here("check", f"{dropout(tmp_path, arg)}::Dropout", "--input-shape", "4,3")
    out = both(p)
    assert "forward has no training switch" not in out, out
    assert f"mode: eval and training (forward(X, {arg}=False, then {arg}=True))" in out, out
    assert p.returncode == 1 and "FAIL: Dropout [training]" in out, out


def test_training_flag_reaches_a_switch_of_another_name(tmp_path):
    """W1: --training said "has no effect here" for train_flg, and the buggy branch passed."""
    p = run("check", f"{dropout(tmp_path, 'train_flg', 'True')}::Dropout", "--input-shape", "4,3", "--training")
    out = both(p)
    assert "mode: training (forward(X, train_flg=True)): as --training asks" in out, out
    assert p.returncode == 1 and "FAIL: Dropout" in out and "has no effect" not in out, out


@pytest.mark.parametrize("arg", ["deterministic", "eval"])
def test_inverted_switch_is_true_in_eval_mode(tmp_path, arg):
    """flax's deterministic=True (and eval=True) mean eval mode: the training branch is the False one."""
    p = run_here("check", f"{dropout(tmp_path, arg, 'True', f'not {arg}')}::Dropout", "--input-shape", "4,3")
    out = both(p)
    assert f"(forward(X, {arg}=True, then {arg}=False))" in out, out
    assert p.returncode == 1 and "FAIL: Dropout [training]" in out, out


def test_unknown_boolean_has_each_value_checked(tmp_path):
    """A boolean of a name gradcheck does not read (session 14's leftover): only its default ran, with a WARNING,
    and the buggy branch noisy=True PASSed. Like a switch attribute (F1), each value is now checked, the rows
    labelled with it, and the bug FAILs."""
    p = run_here("check", f"{dropout(tmp_path, 'noisy')}::Dropout", "--input-shape", "4,3")
    out = both(p)
    assert "forward has no training switch" not in out and "WARNING" not in out, out
    assert ("mode: each value of noisy (forward(X, noisy=False, then noisy=True)): forward takes noisy, which "
            "selects no training mode: each value is checked (--eval checks noisy=False alone, --training "
            "noisy=True)") in out, out
    assert p.returncode == 1 and "FAIL: Dropout [noisy=True]: gradient mismatch in dX" in out, out
    assert "Dropout [noisy=False] dX" in out, out


@pytest.mark.parametrize("flag, value, code", [("--training", "True", 1), ("--eval", "False", 0)])
def test_an_unknown_boolean_value_is_picked_by_training_or_eval(tmp_path, flag, value, code):
    """verify9 X7 said NOT CHECKED for --training/--eval on forward(X, noisy=False): gradcheck could not pass
    the value. Now --eval picks the default, --training the other value, and the header says which."""
    p = run_here("check", f"{dropout(tmp_path, 'noisy')}::Dropout", "--input-shape", "4,3", flag)
    out = both(p)
    assert p.returncode == code and f"mode: noisy={value} (forward(X, noisy={value})): as {flag} asks" in out, out


ODD_FLAGS = """
import numpy as np

class Verbose:
    def forward(self, X, verbose=False):  # the same values either way
        if verbose:
            print("forward", X.shape)
        self.X = X
        return np.tanh(X)

    def backward(self, dY):
        return dY * (1 - np.tanh(self.X) ** 2)

class ReturnsCache:
    def forward(self, X, return_cache=False):  # another kind of result
        self.X = X
        Y = np.tanh(X)
        return (Y, {"X": X}) if return_cache else Y

    def backward(self, dY):
        return dY * (1 - np.tanh(self.X) ** 2)
"""


def test_an_unknown_boolean_whose_other_value_gives_no_array_is_not_checked(tmp_path):
    """A boolean whose other value changes nothing is checked once (same output, same backward); one whose other
    value returns something no check can read (a tuple) is NOT CHECKED (exit 3) naming it and how to check the
    default, which --eval then checks."""
    f = student(tmp_path, ODD_FLAGS)
    p = run_here("check", f"{f}::Verbose", "--input-shape", "4,3")
    out = both(p)
    assert p.returncode == 0 and "PASS: Verbose" in out and "verbose=True and verbose=False give the same output on this input: checked once" in out, out
    p = run_here("check", f"{f}::ReturnsCache", "--input-shape", "4,3")
    out = both(p)
    assert p.returncode == 3 and "PASS" not in out, out
    assert ("gradcheck: not checked (exit 3): ReturnsCache: forward takes return_cache (return_cache=False by "
            "default), a boolean gradcheck does not read as a training switch, so each of its values is checked; "
            "but with return_cache=True forward returned a tuple, not an array of the default's shape (4, 3), which "
            "no check can read, so that branch was not checked, nor the layer as a whole. --eval checks "
            "return_cache=False (the default) alone") in out, out
    p = run_here("check", f"{f}::ReturnsCache", "--input-shape", "4,3", "--eval")
    assert p.returncode == 0 and "PASS: ReturnsCache" in both(p), both(p)


@pytest.mark.parametrize("arg, default, flag", [("mode", "0", "--training")])
def test_a_mode_asked_for_that_gradcheck_cannot_select_is_not_checked(tmp_path, arg, default, flag):
    """verify9 X7: --training on forward(X, mode=0) (training when mode == 1) said "WARNING: --training has no
    effect here" and PASSed, exit 0: a PASS for a mode that never ran. Now: not checked, exit 3, before any
    check, naming the mode, the argument and how to make it a switch."""
    f = dropout(tmp_path, arg, default, f"{arg} == 1" if arg == "mode" else arg)
    p = run_here("check", f"{f}::Dropout", "--input-shape", "4,3", flag)
    out = both(p)
    mode = flag.removeprefix("--")
    assert p.returncode == 3, out
    assert f"gradcheck: not checked (exit 3): Dropout: {flag} asks for the {mode} forward, but gradcheck cannot " \
           f"select it: forward takes {arg} ({arg}={default} by default)" in " ".join(out.split()), out
    assert "PASS" not in out and "has no effect" not in out, out
    assert "make mode a boolean" in " ".join(out.split()), out


def test_string_mode_uses_the_layers_own_words(tmp_path):
    """W14: forward(X, mode="training") was called with 'train' and 'test', never 'training': the buggy
    training branch never ran and the check said it "gave the same output"."""
    f = dropout(tmp_path, "mode", '"training"', 'mode == "training"')
    p = run_here("check", f"{f}::Dropout", "--input-shape", "4,3")
    out = both(p)
    assert "(forward(X, mode='test', then mode='training'))" in out, out
    assert p.returncode == 1 and "FAIL: Dropout [training]" in out, out
    p = run_here("check", f"{f}::Dropout", "--input-shape", "4,3", "--training")
    assert p.returncode == 1 and "(forward(X, mode='training')): as --training asks" in both(p), both(p)


def test_string_mode_without_a_readable_comparison(tmp_path):
    """No comparison of mode with a string that gradcheck can read (mode.startswith): the guessed 'train' and
    'test' reach one branch; the header said the layer "gave the same output", so was checked once."""
    f = student(tmp_path, """
    import numpy as np

    class Scale:
        def forward(self, X, mode):
            self.X = X
            return X * 2.0 if mode.startswith("fi") else X

        def backward(self, dY):
            return dY
    """)
    p = run_here("check", f"{f}::Scale", "--input-shape", "4,3")
    out = both(p)
    assert "its source compares mode with neither 'train' nor 'test'" in out, out
    assert "may never have run; only this one forward was checked" in out, out


MSE = """
import numpy as np

class MSETorch:
    def forward(self, input, target):
        self.diff = input - target
        return np.mean(self.diff ** 2)

    def backward(self):
        return -2 * self.diff / self.diff.size  # BUG: the sign (d/d input is +2 diff / size)

class MSE:
    def forward(self, y_pred, y_true):
        self.diff = y_pred - y_true
        return np.mean(self.diff ** 2)

    def backward(self):
        return 2 * self.diff / self.diff.size
"""

#: Deep Learning from Scratch's SoftmaxWithLoss, verbatim (common/layers.py, common/functions.py).
DLFS = """
import numpy as np

def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)

def cross_entropy_error(y, t):
    if y.ndim == 1:
        t = t.reshape(1, t.size)
        y = y.reshape(1, y.size)
    if t.size == y.size:
        t = t.argmax(axis=1)
    batch_size = y.shape[0]
    return -np.sum(np.log(y[np.arange(batch_size), t] + 1e-7)) / batch_size

class SoftmaxWithLoss:
    def __init__(self):
        self.loss = None
        self.y = None
        self.t = None

    def forward(self, x, t):
        self.t = t
        self.y = softmax(x)
        self.loss = cross_entropy_error(self.y, self.t)
        return self.loss

    def backward(self, dout=1):
        batch_size = self.t.shape[0]
        if self.t.size == self.y.size:
            dx = (self.y - self.t) / batch_size
        else:
            dx = self.y.copy()
            dx[np.arange(batch_size), self.t] -= 1
            dx = dx / batch_size
        return dx

class CE:
    def forward(self, y_true, y_pred):
        z = y_pred - y_pred.max(1, keepdims=True)
        self.p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
        self.y = y_true
        return -np.log(self.p[np.arange(len(y_true)), y_true]).mean()

    def backward(self, grad_output):
        d = self.p.copy()
        d[np.arange(len(self.y)), self.y] -= 1
        return grad_output * d / len(self.y)

class Unnamed:
    def forward(self, p, q):
        self.s = softmax(p)
        self.t = q.argmax(axis=1)
        return -np.mean(np.log(self.s[np.arange(len(p)), self.t]))

    def backward(self):
        d = self.s.copy()
        d[np.arange(len(self.t)), self.t] -= 1
        return d / len(self.t)
"""

LOSS = ["--loss", "--input-shape", "4,3"]


def test_pytorch_order_loss_with_a_sign_bug_fails(tmp_path):
    """W3: forward(input, target) was given y_true as input: the sign-flipped gradient passed."""
    p = run_here("check", f"{student(tmp_path, MSE)}::MSETorch", *LOSS)
    out = both(p)
    assert "loss: forward(input=y_pred, target=y_true): the prediction goes to input" in out, out
    assert p.returncode == 1 and "dy_pred has the wrong sign" in out, out


def test_loss_named_y_pred_y_true_passes(tmp_path):
    """W4: a correct forward(y_pred, y_true) was told its sign is wrong."""
    p = run_here("check", f"{student(tmp_path, MSE)}::MSE", *LOSS)
    out = both(p)
    assert "loss: forward(y_pred=y_pred, y_true=y_true)" in out, out
    assert p.returncode == 0 and "PASS: MSE" in out and "wrong sign" not in out, out


@pytest.mark.parametrize("targets", ["onehot", "labels"])
def test_dlfs_softmax_with_loss_verbatim(tmp_path, targets):
    """W2: the book's SoftmaxWithLoss forward(x, t), backward(dout=1), with one-hot or integer t. Its loss takes
    log(y + 1e-7) and its gradient is that of log(y): they differ by about 1e-6 relative, so rtol 1e-5."""
    p = run_here("check", f"{student(tmp_path, DLFS)}::SoftmaxWithLoss", *LOSS, "--targets", targets, "--rtol", "1e-5")
    out = both(p)
    assert "loss: forward(x=y_pred, t=y_true): the prediction goes to x" in out, out
    assert p.returncode == 0 and "PASS: SoftmaxWithLoss" in out, out


def test_backward_requiring_the_upstream_gradient_gets_one(tmp_path):
    """W16: backward(self, grad_output) raised TypeError (exit 3): it is given 1.0, and the header says so."""
    p = run_here("check", f"{student(tmp_path, DLFS)}::CE", *LOSS, "--targets", "labels")
    out = both(p)
    assert "backward: backward(grad_output=1.0): the upstream gradient dL/dL = 1.0" in out, out
    assert p.returncode == 0 and "PASS: CE" in out, out


def test_unnamed_order_is_said_assumed_and_a_zero_gradient_warned(tmp_path):
    """forward(p, q): names that say nothing. Since session 15 the order of logits beside one-hot targets is read
    from the data (L is affine in q, the target); a backward that tells nothing (zeros: L does not depend on q, the other reading)
    keeps Keras's assumed order, said, and the numerical gradient with respect to q, identically 0, is warned."""
    p = run_here("check", f"{student(tmp_path, DLFS)}::Unnamed", *LOSS, "--targets", "onehot")
    out = both(p)
    assert p.returncode == 0, out
    assert "loss: forward(p=y_pred, q=y_true): forward's parameter names do not say which is the prediction; " \
        "the data say it (real y_pred beside onehot y_true)" in out, out  # session 15: not read from backward
    zeros = DLFS + "\nclass UnnamedZero(Unnamed):\n    def backward(self):\n        return np.zeros_like(self.s)\n"
    # real targets (q.argmax reads them as labels): data of one kind, which cannot order it, and a backward of zeros
    p = run_here("check", f"{student(tmp_path, zeros)}::UnnamedZero", *LOSS, "--targets", "real")
    out = both(p)
    assert "loss: forward(p=y_true, q=y_pred): Keras's order (y_true, y_pred) assumed" in out, out
    assert "WARNING: the numerical gradient with respect to q, the assumed prediction, is identically 0" in out, out


@pytest.mark.parametrize("names", [("x", "t"), ("input", "target"), ("logits", "labels"), ("y_true", "y_pred"),
                                   ("scores", "y"), ("yhat", "y"), ("predictions", "targets"), ("output", "target"),
                                   # verify9 X2, X6: DLfS's cross_entropy_error(y, t); (predicted, actual)
                                   ("y", "t"), ("predicted", "actual")])
def test_binding_by_name_gives_the_gradient_of_the_prediction(names):
    """The bound loss's forward(y_true, y_pred) hands the prediction to the argument its name says, so its
    backward is dL/dy_pred of HIPS autograd's oracle (a cross entropy of softmax rows)."""
    from gradcheck._adapters import BoundLoss

    def oracle(yp, yt):
        z = yp - anp.max(yp, axis=1, keepdims=True)
        return -anp.sum(yt * (z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True)))) / yp.shape[0]

    a, b = names
    pred_first = a not in ("y_true",)
    src = f"""
import numpy as np
class L:
    def forward(self, {a}, {b}):
        yp, yt = ({a}, {b}) if {pred_first} else ({b}, {a})
        z = yp - yp.max(1, keepdims=True)
        self.p = np.exp(z) / np.exp(z).sum(1, keepdims=True); self.t = yt
        return -np.sum(yt * np.log(self.p)) / len(yp)
    def backward(self, dout):
        return dout * (self.p - self.t) / len(self.t)
"""
    ns = {}
    exec(src, ns)  # noqa: S102 - the test's own text
    rng = np.random.default_rng(0)
    yp, yt = rng.standard_normal((5, 4)), np.eye(4)[rng.integers(0, 4, 5)]
    loss = BoundLoss(ns["L"]())
    assert loss.pred_first is pred_first and loss.info["by_name"] and loss.info["upstream"] == "dout"
    assert np.isclose(loss.forward(yt, yp), oracle(yp, yt), rtol=1e-12, atol=0)
    np.testing.assert_allclose(loss.backward(), grad(oracle)(yp, yt), rtol=1e-10, atol=1e-14)


BN_SWITCH = """
import numpy as np

TRAIN = False


class BN:
    def __init__(self, D=3):
        self.gamma, self.beta = np.ones(D) + 0.1 * np.arange(D), np.zeros(D)
        self.running_mean, self.running_var = np.zeros(D), np.ones(D)
        self.bn_param = {'mode': 'test'}

    def forward(self, x):
        return self._fw(x, SWITCH)

    def _fw(self, x, train):
        if train:
            mu, var = x.mean(0), x.var(0)
        else:
            mu, var = self.running_mean, self.running_var
        self.inv = 1 / np.sqrt(var + 1e-5)
        self.xhat = (x - mu) * self.inv
        return self.gamma * self.xhat + self.beta

    def backward(self, dout):
        self.dgamma, self.dbeta = (dout * self.xhat).sum(0), dout.sum(0)
        return dout * self.gamma * self.inv  # BUG in training mode: the batch statistics' paths are missing
"""


@pytest.mark.parametrize("switch, header", [
    ("self.bn_param['mode'] == 'train'", "mode: eval and training (self.bn_param['mode'] = 'test', then 'train')"),
    ("TRAIN", "mode: eval and training (global TRAIN = False, then True)")])
def test_a_switch_outside_forwards_arguments_is_set_and_the_training_bug_fails(tmp_path, switch, header):
    """tester10 T3: CS231n's bn_param['mode'], a module flag: header "mode: forward has no training switch: one mode"
    and a silent PASS of a batch norm wrong in training mode. Now gradcheck sets the switch for each mode and puts
    it back: the training backward's missing batch-statistics paths FAIL."""
    f = student(tmp_path, BN_SWITCH.replace("SWITCH", switch))
    p = run_here("check", f"{f}::BN", "--input-shape", "6,3")
    out = " ".join(both(p).split())
    assert p.returncode == 1, out
    assert header in out and "FAIL: BN [training]: gradient mismatch in dX." in out, out


def test_a_switch_in_the_source_that_gradcheck_does_not_set_is_named(tmp_path):
    """A switch gradcheck cannot set (a method's result; an environment variable it now sets, session 12 Z3):
    the header names it in a WARNING (the branch it selects never ran), never "forward has no training argument",
    and --training is not checked (exit 3)."""
    shown = "`os.environ.get('MODE', 'test').lower() == 'train'` (line"
    f = student(tmp_path, "import os\n" + BN_SWITCH.replace("SWITCH", "os.environ.get('MODE', 'test').lower() == 'train'"))
    p = run_here("check", f"{f}::BN", "--input-shape", "6,3")
    out = " ".join(both(p).split())
    assert "forward has no training switch" not in out, out
    assert "mode: forward as it is (no training argument; see the WARNING)" in out, out
    assert f"WARNING: the class tests {shown}" in out and "a training switch gradcheck does not set" in out, out
    assert "the other mode's forward and backward were not checked" in out, out
    p = run_here("check", f"{f}::BN", "--input-shape", "6,3", "--training")
    out = " ".join(both(p).split())
    assert p.returncode == 3 and "PASS" not in out, out
    assert f"not checked (exit 3): BN: --training asks for the training forward, but gradcheck cannot select it: " \
           f"the class tests {shown}" in out, out


STRING_ARGS = """
import numpy as np

class Two:
    def forward(self, X, kind="lin"):  # 'sq' squares; its backward forgets the 2
        self.X, self.kind = X, kind
        return X ** 2 if kind == "sq" else 3.0 * X

    def backward(self, dY):
        return dY * self.X if self.kind == "sq" else 3.0 * dY

class Three:
    def forward(self, X, kind="relu"):
        self.X, self.kind = X, kind
        if kind == "relu":
            return np.maximum(X, 0)
        elif kind == "tanh":
            return np.tanh(X)
        elif kind == "sigmoid":
            return 1 / (1 + np.exp(-X))
        raise ValueError(kind)

    def backward(self, dY):
        if self.kind == "relu":
            return dY * (self.X > 0)
        if self.kind == "tanh":
            return dY * (1 - np.tanh(self.X))  # BUG: 1 - tanh**2
        s = 1 / (1 + np.exp(-self.X))
        return dY * s * (1 - s)
"""


def test_a_string_argument_is_checked_at_each_value_or_not_checked(tmp_path):
    """A string argument of forward compared with other strings (no mode words): only its default ran, with no
    word at all, and a bug in another branch PASSed. Two values: each checked (as a string attribute, F1);
    three: each checked too (session 16; NOT CHECKED before)."""
    f = student(tmp_path, STRING_ARGS)
    p = run_here("check", f"{f}::Two", "--input-shape", "4,3")
    out = both(p)
    assert "mode: each value of kind (forward(X, kind='lin', then kind='sq'))" in out, out
    assert p.returncode == 1 and "FAIL: Two [kind='sq']: gradient mismatch in dX" in out, out
    p = run_here("check", f"{f}::Three", "--input-shape", "4,3")
    out = both(p)  # session 16: three values, each checked (NOT CHECKED before)
    assert p.returncode == 1 and "FAIL: Three [kind='tanh']: gradient mismatch in dX" in out, out
    assert "Three [kind='sigmoid']" in out and "NOT CHECKED" not in out, out
