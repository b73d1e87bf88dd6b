"""`gradcheck check` on more students' protocols (session 12): weights given in ``__init__`` (Y27), Neural
Networks from Scratch's losses (Y17), a loss's argument order told by backward (Z17), Keras-style ``call``
(Z4), Deep Learning from Scratch vol. 2's models (Y13). Each test fails on the code before its fix. Y13's targets
run the console script, the others its ``gradcheck.cli.main`` in this process (``test_cli.run_here``: the same
parser, checks and report, the student's code in its sandbox process), which spares the start of a Python per check.
"""

from pathlib import Path

import pytest
from nnfs_book import NNFS_LOSS
from test_cli import both, run, run_here, student

LAYERS = Path(__file__).parent / "buggy_layers" / "protocols.py"

# --------------------------------------------------------------------------- Y27: weight arrays in __init__

WEIGHTS_IN_INIT = """
import numpy as np

class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        self.dW = self.X.T @ dY * BUG
        self.db = dY.sum(0)
        return dY @ self.W.T
"""
W_INIT = '{"W": [[1, 2, 3], [4, 5, 6]], "b": [0, 1, 2]}'


@pytest.mark.parametrize(("bug", "code"), [("1", 0), ("2", 1)])
def test_init_lists_are_float64_weight_arrays(tmp_path, bug, code):
    """Before: W reached __init__ as a list, and backward raised AttributeError: 'list' object has no attribute
    'T' (exit 3)."""
    p = run_here("check", f"{student(tmp_path, WEIGHTS_IN_INIT.replace('BUG', bug), 'w.py')}::Dense",
            "--input-shape", "4,2", "--init", W_INIT)
    out = both(p)
    assert p.returncode == code, out
    assert "init: W (2, 3), b (3,) given to the constructor as float64 arrays" in out, out
    assert ("FAIL: Dense: gradient mismatch in dW." in out) == bool(code), out


@pytest.mark.parametrize(("init", "said"), [
    (None, "An array is a JSON list, nested for a matrix (W: [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]] is 2x3)"),
    ('{"W": [[1, 2, 3], [4, 5]], "b": [0, 1, 2]}', "--init key 'W': a nested list whose rows differ in length"),
    ('{"W": [[1, 2, 3], [4, 5, 6], [7, 8, 9]], "b": [0, 1, 2]}',
     "--input-shape 4,3 --init '{\"W\": [[1, 2, 3], [4, 5, 6], [7, 8, 9]], \"b\": [0, 1, 2]}'"),
])
def test_missing_or_ill_shaped_init_array_is_a_usage_error_with_an_example(tmp_path, init, said):
    """A W that fits no axis of X was exit 3 ("the error is in forward"); a ragged list reached the student's code."""
    f = student(tmp_path, WEIGHTS_IN_INIT.replace("BUG", "1"), "w.py")
    p = run_here("check", f"{f}::Dense", "--input-shape", "4,2", *(["--init", init] if init else []))
    out = both(p)
    assert p.returncode == 2, out
    assert "usage error (exit 2)" in out and said in out, out


# --------------------------------------------------------------------------- Y17: Neural Networks from Scratch's loss



@pytest.mark.parametrize("targets", ["labels", "onehot"])
@pytest.mark.parametrize(("samples", "code"), [("samples", 0), ("1", 1)])
def test_nnfs_loss_is_read_through_calculate_and_dinputs(tmp_path, targets, samples, code):
    """Before: exit 1, "returned an array of shape (6,); expected a single number" (forward's per-sample losses)."""
    f = student(tmp_path, NNFS_LOSS.replace("SAMPLES", samples), "nnfs_loss.py")
    p = run_here("check", f"{f}::Loss_CategoricalCrossentropy", "--loss", "--input-shape", "6,3",
            "--targets", targets, "--pred", "probs")
    out = both(p)
    assert p.returncode == code, out
    assert "calculate(output=y_pred, y=y_true), Neural Networks from Scratch's mean of forward's per-sample" in out, out
    assert "backward(dvalues=y_pred, y_true=y_true), which stores dL/dy_pred in self.dinputs" in out, out
    assert ("FAIL: Loss_CategoricalCrossentropy: gradient mismatch in dy_pred." in out) == bool(code), out


# --------------------------------------------------------------------------- Z17: forward(a, b), the order told by backward

UNNAMED_ORDER = """
import numpy as np

class MSE:
    def forward(self, a, b):
        self.a, self.b = a, b
        return float(np.mean((a - b) ** 2 + 0.1 * a ** 3))
    def backward(self):
        return (2 * (self.a - self.b) + 0.3 * self.a ** 2) * FACTOR / self.a.size

class CE:
    def forward(self, p, q):
        self.p, self.q = p, q
        n = p.shape[0]
        return float(-np.log(p[np.arange(n), q]).mean())
    def backward(self):
        n = self.p.shape[0]
        g = np.zeros_like(self.p)
        g[np.arange(n), self.q] = -FACTOR / self.p[np.arange(n), self.q] / n
        return g
"""


@pytest.mark.parametrize(("factor", "code"), [("1", 0), ("0.5", 1)])
def test_prediction_first_unnamed_loss_order_is_read_from_what_backward_returns(tmp_path, factor, code):
    """forward(a, b) with a the prediction: Keras's order was assumed and a correct loss FAILed (Z17), a
    factor bug was called -0.5 times. Now a is found by backward matching dL/da (or pointing along it)."""
    f = student(tmp_path, UNNAMED_ORDER.replace("FACTOR", factor), "order.py")
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "6,3")
    out = both(p)
    if not code:  # session 14 (tester14): backward matching dL/da on data of one kind cannot say a is the
        flat = " ".join(out.split())  # prediction (dL/d(target) of the other order looks the same): exit 2
        assert p.returncode == 2 and "backward matches dL/da" in flat and "--pred-arg a" in flat, out
        p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "6,3", "--pred-arg", "a")
        assert p.returncode == 0 and "PASS: MSE" in both(p), both(p)
        return
    assert p.returncode == code, out
    assert "loss: forward(a=y_pred, b=y_true): forward's parameter names do not say which is the prediction" in out
    assert "a is the prediction" in out or "a is taken as the prediction" in out, out
    assert "(order (prediction, target))" in out, out
    if code:
        assert "dy_pred is 0.5 times the correct gradient" in out, out


@pytest.mark.parametrize(("factor", "code"), [("1", 0), ("2", 1)])
def test_unnamed_loss_order_is_read_from_backward_shape_with_labels(tmp_path, factor, code):
    f = student(tmp_path, UNNAMED_ORDER.replace("FACTOR", factor), "order.py")
    p = run_here("check", f"{f}::CE", "--loss", "--input-shape", "6,3", "--targets", "labels", "--pred", "probs")
    out = both(p)
    assert p.returncode == code, out
    assert "backward returns an array of p's shape (6, 3), not q's (6,): p is the prediction" in out, out
    assert ("FAIL: CE: gradient mismatch in dy_pred." in out) == bool(code), out


# --------------------------------------------------------------------------- Z4: Keras-style call(self, x)

KERAS_CALL = """
import numpy as np

class Dense:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((4, 3)), rng.standard_normal(3)
    def call(self, x, training=False):
        self.x = x
        return x @ self.W + self.b
    def backward(self, dY):
        self.dW = self.x.T @ dY
        self.db = dY.SUM(0)
        return dY @ self.W.T
"""


@pytest.mark.parametrize(("reduce", "code"), [("sum", 0), ("mean", 1)])
def test_keras_call_is_read_as_forward(tmp_path, reduce, code):
    """Before: exit 3, "has no forward() method"."""
    p = run_here("check", f"{student(tmp_path, KERAS_CALL.replace('SUM', reduce), 'kcall.py')}::Dense", "--input-shape", "5,4")
    out = both(p)
    assert p.returncode == code, out
    assert "forward is call() (Keras's name: the class has no forward)" in out, out
    assert ("FAIL: Dense: gradient mismatch in db." in out) == bool(code), out


# --------------------------------------------------------------------------- L2: a backward that draws new random numbers


@pytest.mark.parametrize(("cls", "code"), [("DropoutOwnRng", 0), ("DropoutBackwardRedraws", 1)])
def test_backward_drawing_a_new_mask_is_named_random_backward(cls, code):
    """Before: "a second backward on the same forward gives another dX: backward changes its own cache or the
    parameters" (second-backward), which misses the new mask."""
    p = run_here("check", f"{LAYERS}::{cls}", "--input-shape", "8,6", "--training")
    out = both(p)
    assert p.returncode == code, out
    assert ("diagnosis: backward draws new random numbers: it moves the random generator (its Generator)" in out) \
        == bool(code), out
    assert "backward changes its own cache" not in out, out


# --------------------------------------------------------------------------- Y13: DLfS vol. 2's model forward(x, t)

DLFS2_MODEL = """
import numpy as np

class Affine:
    def __init__(self, W, b):
        self.params = [W, b]
        self.grads = [np.zeros_like(W), np.zeros_like(b)]
    def forward(self, x):
        W, b = self.params
        self.x = x
        return np.dot(x, W) + b
    def backward(self, dout):
        W, b = self.params
        self.grads[0][...] = np.dot(self.x.T, dout)
        self.grads[1][...] = np.SUM(dout, axis=0)
        return np.dot(dout, W.T)

class Sigmoid:
    def __init__(self):
        self.params, self.grads = [], []
    def forward(self, x):
        self.out = 1 / (1 + np.exp(-x))
        return self.out
    def backward(self, dout):
        return dout * (1.0 - self.out) * self.out

class SoftmaxWithLoss:
    def __init__(self):
        self.params, self.grads = [], []
    def forward(self, x, t):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        self.y = e / e.sum(axis=1, keepdims=True)
        self.t = t.argmax(axis=1) if t.size == self.y.size else t
        n = self.y.shape[0]
        return -np.sum(np.log(self.y[np.arange(n), self.t] + 1e-7)) / n
    def backward(self, dout=1):
        n = self.t.shape[0]
        dx = self.y.copy()
        dx[np.arange(n), self.t] -= 1
        return dx * dout / n

class TwoLayerNet:
    def __init__(self, input_size=4, hidden_size=5, output_size=3):
        rng = np.random.default_rng(0)
        W1, b1 = 0.5 * rng.standard_normal((input_size, hidden_size)), 0.1 * rng.standard_normal(hidden_size)
        W2, b2 = 0.5 * rng.standard_normal((hidden_size, output_size)), 0.1 * rng.standard_normal(output_size)
        self.layers = [Affine(W1, b1), Sigmoid(), Affine(W2, b2)]
        self.loss_layer = SoftmaxWithLoss()
        self.params, self.grads = [], []
        for layer in self.layers:
            self.params += layer.params
            self.grads += layer.grads
    def predict(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x
    def forward(self, x, t):
        score = self.predict(x)
        return self.loss_layer.forward(score, t)
    def backward(self, dout=1):
        dout = self.loss_layer.backward(dout)
        for layer in reversed(self.layers):
            dout = layer.backward(dout)
        return dout
"""


@pytest.mark.parametrize("targets", ["labels:3", "onehot:3"])
@pytest.mark.parametrize(("reduce", "code"), [("sum", 0), ("mean", 1)])
def test_dlfs2_model_with_targets_is_checked_as_forward_x_to_loss(tmp_path, targets, reduce, code):
    """Before: "--targets and --pred describe the data of a loss; add --loss" (exit 2); without --targets, forward
    takes 2 inputs (x, t); with --loss, "params must be a dict" (exit 3)."""
    f = student(tmp_path, DLFS2_MODEL.replace("SUM", reduce), "two_layer_net.py")
    p = run_here("check", f"{f}::TwoLayerNet", "--input-shape", "6,4", "--targets", targets)
    out = both(p)
    assert p.returncode == code, out
    assert f"a model with targets: forward(x, t) -> loss L, t fixed (--targets {targets}:" in out, out
    assert "checked as forward(x) -> L with backward(dout=dL)" in out, out
    if code:
        assert "FAIL: TwoLayerNet: gradient mismatch in dparams[1], dparams[3]." in out, out
    else:
        assert "PASS: TwoLayerNet: every gradient (dX, dparams[0], dparams[1], dparams[2], dparams[3])" in out, out


def test_model_targets_must_be_classes(tmp_path):
    f = student(tmp_path, DLFS2_MODEL.replace("SUM", "sum"), "two_layer_net.py")
    p = run("check", f"{f}::TwoLayerNet", "--input-shape", "6,4", "--targets", "labels")
    out = both(p)
    assert p.returncode == 2, out
    assert "takes its targets as labels:K or onehot:K (K classes), e.g. gradcheck check model.py::TwoLayerNet" in out


CBOW_LIKE = """
import numpy as np
class Embed:
    def __init__(self, W):
        self.params, self.grads = [W], [np.zeros_like(W)]
    def forward(self, idx):
        self.idx = idx
        return self.params[0][idx]
    def backward(self, dout):
        dW, = self.grads
        dW[...] = 0
        np.add.at(dW, self.idx, dout)
class SimpleLM:
    def __init__(self, V=7, H=4):
        rng = np.random.default_rng(0)
        self.emb = Embed(0.5 * rng.standard_normal((V, H)))
        self.W = 0.5 * rng.standard_normal((H, V))
        self.params = self.emb.params + [self.W]
        self.grads = self.emb.grads + [np.zeros_like(self.W)]
    def forward(self, contexts, target):
        h = self.emb.forward(contexts).mean(axis=1)
        s = h @ self.W
        e = np.exp(s - s.max(axis=1, keepdims=True)); self.y = e / e.sum(1, keepdims=True)
        self.h, self.t = h, target
        n = len(target)
        return -np.log(self.y[np.arange(n), target]).mean()
    def backward(self, dout=1):
        n = len(self.t)
        ds = self.y.copy(); ds[np.arange(n), self.t] -= 1; ds *= dout / N_BUG
        self.grads[1][...] = self.h.T @ ds
        dh = ds @ self.W.T
        k = self.emb.idx.shape[1]
        self.emb.backward(np.repeat(dh[:, None, :] / k, k, axis=1))
        return None
"""


@pytest.mark.parametrize(("n", "code"), [("n", 0), ("1", 1)])
def test_dlfs2_model_on_word_ids_whose_backward_returns_none(tmp_path, n, code):
    """SimpleCBOW's shape: forward(contexts, target) on word ids (--indices), backward(dout=1) -> None."""
    f = student(tmp_path, CBOW_LIKE.replace("N_BUG", n), "cbow.py")
    p = run_here("check", f"{f}::SimpleLM", "--input-shape", "6,2", "--indices", "7", "--targets", "labels:7")
    out = both(p)
    assert p.returncode == code, out
    assert "a model with targets: forward(x, t) -> loss L, t fixed (--targets labels:7: 7-class labels" in out, out
    assert ("FAIL: SimpleLM: gradient mismatch in dparams[0], dparams[1]." in out) == bool(code), out


MSE_AB = """
import numpy as np


class MSE:
    def __init__(self, bug=False):
        self.bug = bug

    def forward(self, a, b):
        self.a, self.b = a, b
        return np.mean((a - b) ** 2)

    def backward(self):
        g = 2 * (self.a - self.b) / self.a.size
        return -g if self.bug else g
"""


@pytest.mark.parametrize("bug", [False, True])
def test_a_loss_of_a_minus_b_with_unnamed_arguments_is_a_usage_error(tmp_path, bug):
    """tester12 H3, tester13 H6: for L(a - b), dL/da = -dL/db, so a sign error in backward matches the other order
    exactly: only the user can tell the order (a usage error naming --pred-arg), never a PASS with a warning."""
    f = tmp_path / "loss_ab.py"
    f.write_text(MSE_AB)
    p = run_here("check", f"{f}::MSE", "--input-shape", "5,3", "--loss", "--init", f'{{"bug": {str(bug).lower()}}}')
    out = both(p)
    pred, other = ("b", "a") if bug else ("a", "b")
    assert p.returncode == 2, out
    assert (f"backward returns dL/d{pred}, which is correct if {pred} is the prediction and has the wrong sign if "
            f"{other} is") in out, out
