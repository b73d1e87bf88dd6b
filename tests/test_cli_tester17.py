"""Findings of session 17's new-user tester (fixer fixt17), in-process and on small shapes: a zero bias with a
keepdims db (M1), ...."""

from test_cli import both, run_here, student

BIAS = """
import numpy as np

class BiasKeepdims:
    def __init__(self):
        self.b = np.zeros(5)
    def forward(self, X):
        return X + self.b
    def backward(self, dY):
        self.db = dY.sum(0, keepdims=True)
        return dY
"""


def test_zero_bias_keepdims_is_diagnosed(tmp_path):
    """M1: a zero bias makes forward the identity, and the keepdims db's shape error was taken for a Dropout's
    eval backward raising: every mode set aside, then IndexError in ``_diagnose_modes``."""
    f = student(tmp_path, BIAS)
    p = run_here("check", f"{f}::BiasKeepdims", "--input-shape", "4,5")
    text = both(p)
    assert p.returncode == 1, text
    assert "Traceback" not in text
    assert "db has shape (1, 5), expected (5,)" in text and "keepdims" in text


NONSCALAR = """
import numpy as np

class Net:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((5, 3))
    def forward(self, x, t):
        self.x = x
        return x @ self.W
    def backward(self, dout=1):
        self.dW = self.x.T @ dout
        return dout @ self.W.T
"""


def test_targets_on_a_training_switch_is_a_usage_error():
    """M2: --targets without --loss read forward(X, training=False) as a model's forward(x, t) and blamed the
    student's backward for the float dout it was given."""
    p = run_here("check", "examples/student_linear_correct.py::Linear", "--input-shape", "4,5", "--init",
                 '{"in_features": 5, "out_features": 3}', "--targets", "labels:3")
    text = " ".join(both(p).split())
    assert p.returncode == 2, text
    assert "--targets without --loss is for a model forward(x, t) -> loss" in text
    assert "Linear.forward takes X, training (training: a training switch, not targets)" in text
    assert "AttributeError" not in text


def test_targets_on_a_non_scalar_forward_is_a_usage_error(tmp_path):
    """M2: a forward(x, t) returning an array is no model-with-targets either (its loss is a scalar)."""
    f = student(tmp_path, NONSCALAR)
    p = run_here("check", f"{f}::Net", "--input-shape", "4,5", "--targets", "labels:3")
    text = " ".join(both(p).split())
    assert p.returncode == 2, text
    assert "a scalar; Net.forward(x, t) returned shape (4, 3)" in text


def test_no_switch_mode_line(tmp_path):
    """L8: a forward with no training switch (an rnn_step, a layernorm, a max_pool) said "mode: eval (forward has no
    training argument)": it has one mode, neither eval nor training."""
    f = student(tmp_path, BIAS.replace("zeros(5)", "arange(5.0)").replace(", keepdims=True", ""))
    p = run_here("check", f"{f}::BiasKeepdims", "--input-shape", "4,5")
    text = both(p)
    assert p.returncode == 0, text
    assert "mode: forward has no training switch: one mode" in text
    assert "eval" not in text


TEMPORAL = """
import numpy as np

def temporal_softmax_loss(x, y, mask):
    N, T, V = x.shape
    xf = x.reshape(N * T, V); yf = y.reshape(N * T); mf = mask.reshape(N * T)
    p = np.exp(xf - xf.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
    loss = -np.sum(mf * np.log(p[np.arange(N * T), yf])) / N
    dx = p.copy(); dx[np.arange(N * T), yf] -= 1; dx /= N; dx *= mf[:, None]
    return loss, dx.reshape(N, T, V)
"""


def test_loss_function_extra_argument_from_init(tmp_path):
    """M3: CS231n's temporal_softmax_loss(x, y, mask): the missing mask was a TypeError blamed on the student, and
    --init's mask came as a list; now a usage error naming it, and --init's nested list a float64 array."""
    f = student(tmp_path, TEMPORAL)
    args = ("check", f"{f}::temporal_softmax_loss", "--input-shape", "2,3,4", "--loss", "--targets", "labels:4")
    p = run_here(*args)
    text = " ".join(both(p).split())
    assert p.returncode == 2, text
    assert "temporal_softmax_loss(x, y, mask) needs mask, which only --init can give" in text
    assert """--init '{"mask": ...}'""" in text
    p = run_here(*args, "--init", '{"mask": [[1, 1, 0], [1, 0, 0]]}')
    text = both(p)
    assert p.returncode == 0, text
    assert "PASS: temporal_softmax_loss" in text
    assert "(loss), x shape (2, 3, 4) (real), y: 4-class labels of shape (2, 3)" in text


F16 = """
import numpy as np

class F16:
    def forward(self, X):
        return (2 * X).astype(np.float16)
    def backward(self, dY):
        return 2 * dY
"""


def test_float16_is_told_its_own_precision(tmp_path):
    """4: float16's diagnosis said float32's "about 7 significant digits" and "no astype(np.float32)"."""
    f = student(tmp_path, F16)
    p = run_here("check", f"{f}::F16", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "float16 keeps about 3 significant digits (eps 9.8e-04)" in text
    assert "e.g. no astype(np.float16)" in text
    assert "float32" not in text


ATTRS = """
import numpy as np

class DenseAccum:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((5, 3)); self.b = np.zeros(3)
        self.dW = np.zeros_like(self.W); self.db = np.zeros_like(self.b)
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        self.dW += self.X.T @ dY
        self.db += dY.sum(0)
        return dY @ self.W.T

class TwoW:
    def __init__(self):
        r = np.random.default_rng(0)
        self.W1 = r.standard_normal((5, 3)); self.W2 = r.standard_normal((5, 3))
    def forward(self, X):
        self.X = X; self.a = X @ self.W1; self.s = 1 / (1 + np.exp(-(X @ self.W2)))
        return self.a * self.s
    def backward(self, dY):
        da = dY * self.s; dz = dY * self.a * self.s * (1 - self.s)
        self.dW2 = self.X.T @ da; self.dW1 = self.X.T @ dz
        return da @ self.W1.T + dz @ self.W2.T

class LinKeepdims:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((5, 3)); self.b = np.zeros(3)
    def forward(self, X):
        self.X = X; return X @ self.W + self.b
    def backward(self, dY):
        self.dW = self.X.T @ dY; self.db = dY.sum(0, keepdims=True)
        return dY @ self.W.T
"""


def test_attribute_layers_are_told_in_their_own_names(tmp_path):
    """5: a sandboxed attribute-style layer's diagnoses said grads['W'] and params['b'] (grad_slots read no
    RemoteLayer: its class lives in gradcheck.sandbox.remote)."""
    f = student(tmp_path, ATTRS)
    texts = {}
    for cls in ("DenseAccum", "TwoW", "LinKeepdims"):
        p = run_here("check", f"{f}::{cls}", "--input-shape", "6,5")
        texts[cls] = " ".join(both(p).split())
        assert p.returncode == 1, texts[cls]
        assert "grads[" not in texts[cls] and "params[" not in texts[cls], texts[cls]
    assert "(self.dW, self.db += ...: every backward adds to them" in texts["DenseAccum"]
    assert "assign self.dW = ... in backward" in texts["DenseAccum"]
    assert ("self.dW1 holds the gradient of W2 and vice versa; store each gradient in its own place: self.dW1 = the "
            "gradient of W1, self.dW2 = that of W2") in texts["TwoW"]
    assert "LinKeepdims.backward(dY) (in self.db) gave db with shape (1, 3)" in texts["LinKeepdims"]
    assert "(the shape of self.b)" in texts["LinKeepdims"]


def test_init_key_given_twice_is_refused():
    """10: --init '{"a": 1, "a": 2}' silently took the last value."""
    p = run_here("check", "examples/student_linear_correct.py::Linear", "--input-shape", "4,5", "--init",
                 '{"in_features": 5, "out_features": 3, "in_features": 4}')
    text = " ".join(both(p).split())
    assert p.returncode == 2, text
    assert "--init: key 'in_features' given twice in one JSON object" in text


DROPOUT_PAIR = """
import numpy as np

def dropbug_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    np.random.seed(dropout_param["seed"])
    mask = (np.random.rand(*x.shape) < p) / p if mode == "train" else None
    return (x * mask if mode == "train" else x), (dropout_param, mask)

def dropbug_backward(dout, cache):
    dp, mask = cache
    return dout * (mask > 0) if dp["mode"] == "train" else dout
"""


def test_single_input_pair_is_told_in_its_own_names(tmp_path):
    """9: a one-input CS231n pair's gradient was dX (several inputs' are dx, dw), and the dropout advice said
    dX = dY * self.mask to a pair that has no self."""
    f = student(tmp_path, DROPOUT_PAIR)
    p = run_here("check", f"{f}::dropbug", "--input-shape", "4,5", "--init",
                 '{"dropout_param": {"p": 0.5, "mode": "train", "seed": 1}}')
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "dropbug dx (4, 5)" in text and " dX " not in text
    assert "forward multiplies x by a mask with entries 0 and 2" in text
    assert "dx = dout * mask, the mask from the cache" in text and "self.mask" not in text
