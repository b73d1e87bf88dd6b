"""students45 F1, F3, issue 10 §2 (model45): a model whose method returns its weights' gradients for data and labels,
as two courses write it: Deep Learning from Scratch vol. 1's ``loss(x, t)`` and ``gradient(x, t)`` (its
``TwoLayerNet``: a dict keyed as ``params``), CS231n assignment 2's ``loss(X, y=None) -> (loss, grads)``. The first was
read as ML-From-Scratch's loss ``loss(y, y_pred)``, and the ``--loss`` command printed for it failed (exit 3, the right
model's forward blamed); the second got a wrapper template of forward and backward methods it has not; then both got a
usage error with four lines to paste into the file. Now the command a student writes (``--targets labels:K``) checks
each params array against central differences of the loss: the right model PASSes, a planted bug FAILs named."""


import pytest
from test_cli import both, run_here, student

DLFS = """
import numpy as np

def softmax(x):
    x = x - np.max(x, axis=-1, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)

class TwoLayerNet:
    def __init__(self, input_size, hidden_size, output_size, weight_init_std=0.5):
        rng = np.random.default_rng(1)
        self.params = {'W1': weight_init_std * rng.standard_normal((input_size, hidden_size)),
                       'b1': 0.1 * rng.standard_normal(hidden_size),
                       'W2': weight_init_std * rng.standard_normal((hidden_size, output_size)),
                       'b2': 0.1 * rng.standard_normal(output_size)}

    def predict(self, x):
        h = np.tanh(x @ self.params['W1'] + self.params['b1'])
        return h @ self.params['W2'] + self.params['b2']

    def loss(self, x, t):
        y = softmax(self.predict(x))
        return -np.sum(np.log(y[np.arange(len(t)), t])) / len(t)

    def gradient(self, x, t):
        h = np.tanh(x @ self.params['W1'] + self.params['b1'])
        dy = softmax(h @ self.params['W2'] + self.params['b2'])
        dy[np.arange(len(t)), t] -= 1
        dy /= len(t)
        dh = (dy @ self.params['W2'].T) * (1 - h ** 2)
        return {'W1': x.T @ dh, 'b1': dh.sum(0), 'W2': h.T @ dy, 'b2': BIAS}
"""
CS231N = """
import numpy as np

class TwoLayerNet:
    def __init__(self, input_dim=3 * 32 * 32, hidden_dim=100, num_classes=10, reg=0.0):
        rng = np.random.default_rng(1)
        self.reg = reg
        self.params = {"W1": 0.5 * rng.standard_normal((input_dim, hidden_dim)), "b1": np.zeros(hidden_dim),
                       "W2": 0.5 * rng.standard_normal((hidden_dim, num_classes)), "b2": np.zeros(num_classes)}

    def loss(self, X, y=None):
        W1, b1, W2, b2 = self.params["W1"], self.params["b1"], self.params["W2"], self.params["b2"]
        h = np.maximum(X @ W1 + b1, 0)
        scores = h @ W2 + b2
        if y is None:
            return scores
        p = np.exp(scores - scores.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        loss = -np.log(p[np.arange(len(y)), y]).mean() + 0.5 * self.reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
        ds = p.copy()
        ds[np.arange(len(y)), y] -= 1
        ds /= len(y)
        dh = (ds @ W2.T) * (h > 0)
        return loss, {"W1": X.T @ dh + self.reg * W1, "b1": dh.sum(0), "W2": h.T @ ds + self.reg * W2,
                      "b2": ds.sum(0)}
"""
DLFS_INIT = '{"input_size": 4, "hidden_size": 5, "output_size": 3}'
CS_INIT = '{"input_dim": 4, "hidden_dim": 5, "num_classes": 3, "reg": 0.3}'


DROPOUT = """
import numpy as np

class TwoLayerNet:
    def __init__(self, input_dim=4, hidden_dim=5, num_classes=3, seed=None):
        rng = np.random.default_rng(1)
        self.seed = seed
        self.params = {"W1": rng.standard_normal((input_dim, hidden_dim)), "b1": 0.1 * rng.standard_normal(hidden_dim),
                       "W2": rng.standard_normal((hidden_dim, num_classes)), "b2": np.zeros(num_classes)}

    def loss(self, X, y=None):
        if self.seed is not None:  # CS231n's dropout_forward: np.random.seed(dropout_param["seed"]) on every call
            np.random.seed(self.seed)
        W1, b1, W2, b2 = self.params["W1"], self.params["b1"], self.params["W2"], self.params["b2"]
        a = np.tanh(X @ W1 + b1)
        mask = (np.random.rand(*a.shape) < 0.5) / 0.5
        h = a * mask
        scores = h @ W2 + b2
        if y is None:
            return scores
        p = np.exp(scores - scores.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        ds = p.copy()
        ds[np.arange(len(y)), y] -= 1
        ds /= len(y)
        dpre = (ds @ W2.T) * mask * (1 - a ** 2)
        return -np.log(p[np.arange(len(y)), y]).mean(), {"W1": X.T @ dpre, "b1": dpre.sum(0), "W2": h.T @ ds,
                                                          "b2": ds.sum(0)}
"""


def _check(tmp_path, source, init, name, *extra):
    """``gradcheck check FILE::TwoLayerNet --input-shape 5,4 --targets labels:3 --init INIT *extra``, the command a
    student of either course writes: ``(exit code, output)``."""
    f = student(tmp_path, source, name)
    p = run_here("check", f"{f}::TwoLayerNet", "--input-shape", "5,4", "--targets", "labels:3", "--init", init, *extra)
    return p.returncode, both(p)


@pytest.mark.parametrize(("bias", "code"), [("dy.sum(0)", 0), ("dy.mean(0)", 1)])
def test_dlfs_model_is_checked_as_written(tmp_path, bias, code):
    """F1: the book's gradient(x, t) checked as its gradient_check.py does: each params array against central
    differences of loss(x, t), x fixed, t the labels; a db2 averaged over the batch FAILs named (truth: my own
    central differences, /work/wt/notes/model45-cases/verify.py, on the book's TwoLayerNet and its b2 bug)."""
    got, out = _check(tmp_path, DLFS.replace("BIAS", bias), DLFS_INIT, "two_layer_net.py")
    assert got == code, out
    assert "protocol: model: Deep Learning from Scratch's loss(x, t)/gradient(x, t)" in out, out
    assert "the model computes no dX (none checked)" in out and "dX" not in out.partition("name tensor")[2], out
    assert ("PASS: TwoLayerNet: every gradient (dW1, db1, dW2, db2) matches" if code == 0 else
            "FAIL: TwoLayerNet: gradient mismatch in db2.") in out, out
    if code:
        assert "db2 is the mean over the batch, not the sum" in out, out


@pytest.mark.parametrize(("reg", "code"), [("self.reg * W1", 0), ("2 * self.reg * W1", 1)])
def test_cs231n_model_is_checked_as_written(tmp_path, reg, code):
    """F3: CS231n's loss(X, y) -> (loss, grads) checked as eval_numerical_gradient(lambda W: model.loss(X, y)[0],
    model.params[name]) does; the 0.5 * reg * ||W||^2 penalty's gradient doubled FAILs dW1 alone."""
    got, out = _check(tmp_path, CS231N.replace("self.reg * W1", reg), CS_INIT, "fc_net.py")
    assert got == code, out
    assert "protocol: model: CS231n's loss(X, y) -> (loss, grads)" in out, out
    assert "mode: training (loss(X, y) with labels" in out, out
    assert ("PASS: TwoLayerNet: every gradient (dW1, db1, dW2, db2) matches" if code == 0 else
            "FAIL: TwoLayerNet: gradient mismatch in dW1.") in out, out


def test_model_without_targets_or_with_loss_or_eval_is_told_the_command(tmp_path):
    """No labels, --loss (F1's printed command: loss(x=y_pred, t=y_true)) and --eval (the gradients are of the
    training loss: gradient(x, t) calls loss(x, t, train_flg=True)) are usage errors naming what runs."""
    f = student(tmp_path, DLFS.replace("BIAS", "dy.sum(0)"), "two_layer_net.py")
    for extra, said in [((), "so the labels are needed"), (("--loss", "--targets", "labels:3"), "without --loss"),
                        (("--eval", "--targets", "labels:3"), "--eval: TwoLayerNet is a model whose gradient(x, t)")]:
        p = run_here("check", f"{f}::TwoLayerNet", "--input-shape", "5,4", "--init", DLFS_INIT, *extra)
        text = both(p)
        assert p.returncode == 2 and said in text and "ML-From-Scratch" not in text, text
        if not extra or "--loss" in extra:
            assert "gradcheck check two_layer_net.py::TwoLayerNet --input-shape N,4 --targets labels:3" in text, text


def test_model_drawing_new_masks_is_refused_and_a_seeded_one_checked(tmp_path):
    """CS231n's FullyConnectedNet with dropout: with a seed, dropout_forward reseeds on each call and the model is
    checked (its masks the same in loss and grads); without one, each loss call draws new masks and no central
    difference means anything: refused, naming why."""
    init = '{"input_dim": 4, "hidden_dim": 5, "num_classes": 3'
    got, out = _check(tmp_path, DROPOUT, init + "}", "fc_net.py")
    assert got == 2 and "it draws new random numbers on every call" in out, out
    got, out = _check(tmp_path, DROPOUT, init + ', "seed": 3}', "fc_net.py")
    assert got == 0 and "PASS: TwoLayerNet: every gradient (dW1, db1, dW2, db2) matches" in out, out


def test_python_api_model():
    """gradcheck.model(net, t): the same adapter for check_layer."""
    import numpy as np

    from gradcheck import UsageError, check_layer, model

    ns = {}
    exec(DLFS.replace("BIAS", "dy.mean(0)"), ns)  # noqa: S102 - the test's own source
    t = np.array([0, 2, 1, 1, 0])
    r = check_layer(model(ns["TwoLayerNet"](4, 5, 3), t), (5, 4), twin=None)
    assert not r.passed and {x.tensor for x in r.records if not x.passed} == {"db2"}, r
    assert {x.tensor for x in r.records} == {"dW1", "db1", "dW2", "db2"}, r  # no dX
    exec(DLFS.replace("BIAS", "dy.sum(0)"), ns)  # noqa: S102
    assert check_layer(model(ns["TwoLayerNet"](4, 5, 3), t), (5, 4), twin=None).passed
    with pytest.raises(UsageError, match="object is neither"):
        model(object(), t)


GRADE_TEST = """
import numpy as np
import pytest


class Ref:
    def __init__(self, t):
        rng = np.random.default_rng(1)
        self.t, self.grads = t, {}
        self.params = {'W1': 0.5 * rng.standard_normal((4, 5)), 'b1': 0.1 * rng.standard_normal(5),
                       'W2': 0.5 * rng.standard_normal((5, 3)), 'b2': 0.1 * rng.standard_normal(3)}

    def forward(self, X, training=False):
        self.X, self.h = X, np.tanh(X @ self.params['W1'] + self.params['b1'])
        s = self.h @ self.params['W2'] + self.params['b2']
        p = np.exp(s - s.max(1, keepdims=True))
        self.p = p / p.sum(1, keepdims=True)
        return np.array([-np.mean(np.log(self.p[np.arange(len(self.t)), self.t]))])

    def backward(self, dL):
        ds = self.p.copy()
        ds[np.arange(len(self.t)), self.t] -= 1
        ds *= dL[0] / len(self.t)
        dh = (ds @ self.params['W2'].T) * (1 - self.h ** 2)
        self.grads = {'W1': self.X.T @ dh, 'b1': dh.sum(0), 'W2': self.h.T @ ds, 'b2': ds.sum(0)}
        return dh @ self.params['W1'].T


@pytest.mark.points(4)
def test_model(student, grade, rng):
    \"\"\"TwoLayerNet.gradient\"\"\"
    net = student.layer("two_layer_net.py", "TwoLayerNet", targets="labels:3@5", input_size=4, hidden_size=5,
                        output_size=3)
    grade.layer_gradients(net, rng.standard_normal((5, 4)), Ref(net.targets), points=4)
"""


@pytest.mark.parametrize(("bias", "score"), [("dy.sum(0)", 4.0), ("dy.mean(0)", 3.0)])
def test_grading_a_model_scores_its_weights_alone(tmp_path, bias, score):
    """The grader loads the model through the same adapter (student.layer(..., targets=...)): each params gradient a
    part, no dX part (the model computes none); the wrong db2 loses its point alone."""
    import json

    from gradcheck.grading.runner import grade_submission

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "two_layer_net.py").write_text(DLFS.replace("BIAS", bias))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text(GRADE_TEST)
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", seed=1)
    (t,) = json.loads((tmp_path / "out" / "results.json").read_text())["tests"]
    assert (r.status, t["score"], t["max_score"]) == ("graded", score, 4.0), t["output"]
    assert "dX" not in t["output"] and (score == 4.0 or "- `db2`: **wrong**" in t["output"]), t["output"]


NG_RNN = """
import numpy as np

def rnn_forward(x, a0, Wax, Waa, ba):
    n_x, m, T_x = x.shape
    a, a_next = np.zeros((Waa.shape[0], m, T_x)), a0
    for t in range(T_x):
        a_next = np.tanh(Wax @ x[:, :, t] + Waa @ a_next + ba)
        a[:, :, t] = a_next
    return a, (x, a0, Wax, Waa, ba, a)

def rnn_backward(da, cache):
    x, a0, Wax, Waa, ba, a = cache
    dx, dWax, dWaa, dba = np.zeros_like(x), np.zeros_like(Wax), np.zeros_like(Waa), np.zeros_like(ba)
    da_prev = np.zeros_like(a0)
    for t in reversed(range(x.shape[2])):
        dtanh = (1 - a[:, :, t] ** 2) * (da[:, :, t] + da_prev)
        a_prev = a[:, :, t - 1] if t else a0
        dx[:, :, t] = Wax.T @ dtanh
        dWax += dtanh @ x[:, :, t].T
        dWaa += dtanh @ a_prev.T
        dba += BIAS
        da_prev = Waa.T @ dtanh
    return dx, da_prev, dWax, dWaa, dba
"""


def test_ng_rnn_bias_over_m_is_not_named_an_extra_1_over_t(tmp_path):
    """students45 F4: in Andrew Ng's layout, x (n_x, m, T_x) beside a0 (n_a, m), axis 1 of x is the batch m; a dba
    averaged over it was diagnosed "an extra 1/T (T = 4, the time steps on axis 1 of x (3, 4, 6))" with CS231n's fix,
    db = dout.sum(axis=(0, 1)). The right pair PASSes; the bug FAILs without that misreading."""
    shapes = ("--input-shape", "3,4,6;5,4;5,3;5,5;5,1")
    f = student(tmp_path, NG_RNN.replace("BIAS", "dtanh.sum(axis=1, keepdims=True)"), "rnn_ok.py")
    p = run_here("check", f"{f}::rnn", *shapes)
    assert p.returncode == 0, both(p)
    f = student(tmp_path, NG_RNN.replace("BIAS", "dtanh.mean(axis=1, keepdims=True)"), "rnn_bug.py")
    p = run_here("check", f"{f}::rnn", *shapes)
    text = both(p)
    assert p.returncode == 1 and "FAIL: rnn: gradient mismatch in dba." in text, text
    assert "1/T" not in text and "time steps on axis 1" not in text, text
