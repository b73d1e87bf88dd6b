"""Diagnosis sentences that named the wrong bug (or a right one in the wrong words), and the check
command's misleading messages (the session-6 new-user tester's report). Each repro fails before its fix."""

from pathlib import Path

import numpy as np
import pytest

from gradcheck.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("target, hint", [
    ("notebooks/01-manual-vs-tape.ipynb::Linear", "jupyter nbconvert --to script"),
    ("README.md::Linear", "a .py file"),
])
def test_a_target_that_is_not_a_py_file_is_a_usage_error(capsys, target, hint):
    code = main(["check", str(ROOT / target.split("::")[0]) + "::Linear", "--input-shape", "4,3"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "expected a .py file" in err and hint in err and "loader" not in err and "does not import" not in err

BATCHNORM = '''
import numpy as np

class BatchNorm:
    def __init__(self, num_features, momentum=0.9, eps=1e-5):
        self.params = {"gamma": np.ones(num_features) * 1.3, "beta": np.zeros(num_features) + 0.2}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.rm, self.rv, self.m, self.eps = np.zeros(num_features), np.ones(num_features), momentum, eps

    def forward(self, X, training=False):
        if training:
            mu, var = X.mean(0), X.var(0)
            self.rm = self.m * self.rm + (1 - self.m) * mu
            self.rv = self.m * self.rv + (1 - self.m) * var
        else:
            mu, var = self.rm, self.rv
        self.training = training
        self.inv = 1 / np.sqrt(var + self.eps)
        self.xh = (X - mu) * self.inv
        return self.params["gamma"] * self.xh + self.params["beta"]

    def backward(self, dY):
        g, N = self.params["gamma"], dY.shape[0]
        self.grads["gamma"] = (dY * self.xh).sum(0)
        self.grads["beta"] = dY.sum(0)
        dxh = dY * g
        if not self.training:
            return dxh * self.inv
        return self.inv / N * (N * dxh - dxh.sum(0) - self.xh * (dxh * self.xh).sum(0))
'''


def test_twin_given_says_why_there_is_no_tape_column_in_every_mode(capsys, tmp_path):
    f = tmp_path / "bn.py"
    f.write_text(BATCHNORM)
    code = main(["check", f"{f}::BatchNorm", "--init", '{"num_features": 3}', "--input-shape", "6,3", "--twin"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "add --twin" not in out, out  # it was given
    assert "BatchNorm [training]" in out and "BatchNorm [eval]" in out, out  # both modes say the true reason
    assert out.count("autoprop.layers / autoprop.losses has no class of that name") == 1, out


# ------------------------------------------------------------------ diagnosis sentences


@pytest.mark.parametrize("key, words, never", [
    # db = dY.sum(0, keepdims=True): the extra axis must go, not be kept
    ("linear.py::LinearDbKeepdims", ["db has shape (1, 4), expected (4,)", "the shape has an extra size-1 axis",
                                     "without keepdims", "dY.sum(axis=0)"], ["keep the axis"]),
    # a Linear whose backward returns dY: the weight is missing, not an activation's derivative
    ("linear.py::LinearReturnsDY", ["dX equals dY", "dX = dY @ W"], ["activation"]),
    # max pool assigning where overlapping windows must add
    ("pool_embed_rnn.py::MaxPoolOverlapOverwrites", ["assigns (=)", "+="], ["no known bug pattern"]),
    # CS231n test mode normalising with the batch's statistics: a forward bug
    ("cs231n.py::bntestbatch", ["in test mode", "forward normalises with the batch's own mean and variance",
                                "running_mean", "running_var"], ["lacks the gradient"]),
    # BatchNorm's eval backward with the training formula
    ("norm.py::BatchNormEvalTrainFormula", ["in eval mode", "training formula", "dxhat / sqrt(running_var + eps)"],
     ["no known bug pattern"]),
    # a one-element gradient: any wrong number is "a constant factor" of the right one, so none is named
    ("activations.py::PReLUDalphaNoX", ["dalpha differs from the correct gradient", "got", "expected"],
     ["times the correct gradient", "dalpha[]"]),
])
def test_sentence_names_the_real_bug(key, words, never):
    from buggy_layers import diagnose

    sentence = diagnose(key).sentence()
    for w in words:
        assert w in sentence, sentence
    for w in never:
        assert w not in sentence, sentence


def test_one_element_gradient_gets_no_constant_factor():
    from gradcheck.diagnose import name_signature

    f = name_signature("dalpha", np.array(0.3), np.array(-0.301), fallback=True)
    assert f.code == "wrong-values" and "dalpha[]" not in f.message, f.message
    assert "dalpha differs from the correct gradient (no known bug pattern): got 0.3, expected -0.301" in f.message
    # the exact numbers stay named: a sign, a batch size
    assert name_signature("dalpha", np.array(-0.3), np.array(0.3)).code == "wrong-sign"
    assert name_signature("dalpha", np.array([1.2]), np.array([0.3]), n_batch=4).code == "factor-batch"



MSE = '''
import numpy as np

class MSE:
    def forward(self, y_true, y_pred):
        self.d = y_pred - y_true
        return np.mean(self.d ** 2)

    def backward(self):
        return 2 * self.d / DIVISOR
'''


@pytest.mark.parametrize("divisor, words", [
    ("self.d.shape[0]", ["3 times too large", "mean over all N*D = 12 elements", "divides by 12, not by N = 4",
                         "y_pred.size"]),
    ("1", ["12 times too large", "N*D = 12"]),
])
def test_mse_normalisation_is_named(capsys, tmp_path, divisor, words):
    f = tmp_path / "mse.py"
    f.write_text(MSE.replace("DIVISOR", divisor))
    code = main(["check", f"{f}::MSE", "--loss", "--input-shape", "4,3"])
    out = capsys.readouterr().out
    assert code == 1, out
    text = " ".join(out.split())
    for w in words:
        assert w in text, text
    assert "a constant factor is wrong somewhere" not in text


ACCUMULATE = '''
import numpy as np

class Linear:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((3, 2))
        self.b = np.zeros(2)
        self.dW, self.db = np.zeros_like(self.W), np.zeros_like(self.b)

    def forward(self, X, training=False):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW += self.X.T @ dY
        self.db += dY.sum(axis=0)
        return dY @ self.W.T
'''


def test_accumulation_in_attribute_style_speaks_of_attributes(capsys, tmp_path):
    f = tmp_path / "acc.py"
    f.write_text(ACCUMULATE)
    code = main(["check", f"{f}::Linear", "--input-shape", "5,3"])
    text = " ".join(capsys.readouterr().out.split())
    assert code == 1, text
    assert "self.dW, self.db += ..." in text and "assign self.dW = ... in backward" in text, text
    assert "grads[" not in text, text


DROPOUT = '''
import numpy as np

class Dropout:
    def __init__(self, p=0.5):
        self.p = p
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        if not training:
            return X
        self.mask = (np.random.rand(*X.shape) > self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class DropoutNoScale(Dropout):
    def backward(self, dY):
        return dY * (self.mask > 0)  # BUG: the 1 / (1 - p) scale is missing


class DropoutModeAware(Dropout):
    def forward(self, X, training=False):
        self.training = training
        return super().forward(X, training)

    def backward(self, dY):
        return dY * self.mask if self.training else dY
'''


@pytest.mark.parametrize("cls, code, words", [
    # tester 7's T12: after a training step, backward after an eval forward must be dY, not dY * the
    # training forward's mask (the note of session 6 said "checked as the identity" and passed it)
    ("Dropout", 1, ["eval mode was checked after the training mode on the same layer",
                    "dX is dY times a mask (entries 0 and 2) while the forward is the identity"]),
    ("DropoutNoScale", 1, ["FAIL DropoutNoScale [training] dX", "dX is dY times a mask (entries 0 and 1)"]),
    ("DropoutModeAware", 0, ["PASS: DropoutModeAware"]),
])
def test_dropout_whose_eval_forward_sets_no_mask_is_checked(capsys, tmp_path, cls, code, words):
    f = tmp_path / "drop.py"
    f.write_text(DROPOUT)
    got = main(["check", f"{f}::{cls}", "--input-shape", "6,3"])
    captured = capsys.readouterr()
    text = " ".join((captured.out + captured.err).split())
    assert got == code, text
    assert cls != "Dropout" or "on a fresh layer raised" in text, text
    assert "gave the same output" not in text, text  # the header says why only training ran
    for w in words:
        assert w in text, text


def test_keepdims_bias_error_paragraph_speaks_of_the_size_one_axis(capsys):
    code = main(["check", str(ROOT / "tests" / "buggy_layers" / "linear.py") + "::LinearDbKeepdims",
                 "--input-shape", "5,4"])
    text = " ".join(capsys.readouterr().out.split())
    assert code == 1, text
    assert "drop the extra axis" in text and "only a size-1 axis differs" in text, text
    assert "a reshape or transpose went wrong" not in text, text


def test_class_batchnorm_eval_with_batch_statistics_names_both_readings():
    from buggy_layers import diagnose

    d = diagnose("norm.py::BatchNormEvalUsesBatch")
    assert d.codes == ["missing-mean-var-paths"], d.report()
    s = d.sentence()
    assert "lacks the gradient through the batch mean and variance" in s, s
    assert "if eval mode is meant to normalise with running statistics (a BatchNorm), the forward is the bug" in s, s
    assert "forward(X[:5]) is not forward(X)[:5]" in s, s
