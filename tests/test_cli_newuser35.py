"""newuser35's findings (session 35): ``check --json`` always describes the run that wrote it (H1), a BatchNorm's
running averages compared after training forwards (H2), an empty forward output (M1) and an output shape unlike the
reference's (M2) said without a traceback, stride and LSTM forget-gate bugs named (L1), the wording of L2 and L3."""

import json
import os
from pathlib import Path

import pytest
from test_cli import ROOT, run_here

LINEAR_INIT = '{"in_features": 5, "out_features": 3}'
CORRECT = ROOT / "examples" / "student_linear_correct.py"


def _json(path):
    return json.loads(Path(path).read_text())


# --------------------------------------------------------------------------- H1: --json of THIS run


def test_json_of_a_run_without_verdict_replaces_an_earlier_pass(tmp_path):
    """H1: a PASS's report, then the same --json for a file that no longer imports (exit 3): the file says this run,
    passed false, with its outcome and message (main kept the earlier ``"passed": true``)."""
    f, out = tmp_path / "layers.py", tmp_path / "r.json"
    f.write_text(CORRECT.read_text())
    p = run_here("check", f"{f}::Linear", "--input-shape", "8,5", "--init", LINEAR_INIT, "--json", out)
    assert p.returncode == 0 and _json(out)["passed"] is True
    assert _json(out)["exit_code"] == 0 and _json(out)["outcome"] == "pass"
    f.write_text(CORRECT.read_text().replace("class Linear:", "class Linear"))  # a syntax error
    p = run_here("check", f"{f}::Linear", "--input-shape", "8,5", "--init", LINEAR_INIT, "--json", out)
    assert p.returncode == 3
    d = _json(out)
    assert d["passed"] is False and d["exit_code"] == 3 and d["outcome"] == "not checked"
    assert "does not import: SyntaxError" in d["message"] and "name" not in d  # no diagnosis: none was made
    assert sorted(os.listdir(tmp_path)) == ["layers.py", "r.json"]  # written atomically: no temporary file left


def test_json_of_a_usage_error_and_of_gradchecks_own_failure(tmp_path, monkeypatch):
    """H1: a class that does not exist (exit 2) and a failure of gradcheck's own code (a traceback) each leave a report
    of their own in place of the earlier PASS."""
    import gradcheck.check_command as cc
    from gradcheck.cli import main

    out = tmp_path / "r.json"
    out.write_text(json.dumps({"passed": True}))  # an earlier run's
    p = run_here("check", f"{CORRECT}::Linaer", "--input-shape", "8,5", "--init", LINEAR_INIT, "--json", out)
    assert p.returncode == 2 and _json(out)["passed"] is False and _json(out)["outcome"] == "usage error"
    assert "Linaer" in _json(out)["message"]
    out.write_text(json.dumps({"passed": True}))

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug of gradcheck's")

    monkeypatch.setattr(cc, "run_check", broken)
    with pytest.raises(ZeroDivisionError):
        main(["check", f"{CORRECT}::Linear", "--input-shape", "8,5", "--init", LINEAR_INIT, "--json", str(out)])
    assert _json(out) == {"passed": False, "exit_code": None, "outcome": "internal error",
                          "message": "ZeroDivisionError: a bug of gradcheck's"}


def test_json_refused_by_a_usage_error_is_not_written(tmp_path):
    """--json in a folder that does not exist stays a usage error that makes nothing (tester15 L6)."""
    out = tmp_path / "no" / "r.json"
    p = run_here("check", f"{CORRECT}::Linear", "--input-shape", "8,5", "--init", LINEAR_INIT, "--json", out)
    assert p.returncode == 2 and not (tmp_path / "no").exists()


# --------------------------------------------------------------------------- H2: running statistics


BN = '''import numpy as np


class BatchNorm:
    def __init__(self, D, eps=1e-5, momentum=MOMENTUM):
        self.eps, self.momentum = eps, momentum
        self.params = {"gamma": np.ones(D), "beta": np.zeros(D)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.running_mean = np.zeros(D)
        self.running_var = np.ones(D)

    def forward(self, X, training=True):
        g, b, m = self.params["gamma"], self.params["beta"], self.momentum
        if training:
            mu, var = X.mean(0), X.var(0)
            self.running_mean = UPDATE_MEAN
            self.running_var = UPDATE_VAR
            xhat = (X - mu) / np.sqrt(var + self.eps)
            self.cache = (xhat, var, True)
        else:
            xhat = (X - self.running_mean) / np.sqrt(self.running_var + self.eps)
            self.cache = (xhat, self.running_var, False)
        return g * xhat + b

    def backward(self, dY):
        xhat, var, training = self.cache
        g = self.params["gamma"]
        self.grads["gamma"] = (dY * xhat).sum(0)
        self.grads["beta"] = dY.sum(0)
        dxhat = dY * g
        inv = 1.0 / np.sqrt(var + self.eps)
        if not training:
            return dxhat * inv
        N = dY.shape[0]
        return inv / N * (N * dxhat - dxhat.sum(0) - xhat * (dxhat * xhat).sum(0))
'''
TORCH = ("(1 - m) * self.running_mean + m * mu", "(1 - m) * self.running_var + m * var")  # PyTorch's, biased var
SWAPPED = ("m * self.running_mean + (1 - m) * mu", "m * self.running_var + (1 - m) * var")  # newuser35's bug
REF = ("--reference", "manualprop.BatchNorm1D", "--reference-init", '{"num_features": 4}')


def _bn(tmp_path, update, momentum="0.1", unbiased=False):
    mean, var = update
    var = var.replace("* var", "* var * X.shape[0] / (X.shape[0] - 1)") if unbiased else var
    f = tmp_path / "bn.py"
    f.write_text(BN.replace("MOMENTUM", momentum).replace("UPDATE_MEAN", mean).replace("UPDATE_VAR", var))
    return f"{f}::BatchNorm"


def _one_line(p):
    return " ".join((p.stdout + p.stderr).split())


def test_swapped_momentum_fails_against_the_reference(tmp_path):
    """H2: running = (1-m)*running + m*batch with the kept-share convention's m = 0.9 PASSed with --reference
    manualprop.BatchNorm1D (its eval forward was compared only at the initial statistics); now FAIL, the share kept
    named. (m*running + (1-m)*batch with m = 0.1 keeps the layer's own momentum: accepted with a note since
    verify36 F5, tests/test_verify36_fixes.py.)"""
    p = run_here("check", _bn(tmp_path, TORCH, "0.9"), "--input-shape", "8,4", "--init", '{"D": 4}', *REF,
                 "--json", tmp_path / "r.json")
    text = _one_line(p)
    assert p.returncode == 1, text
    assert "running statistics differ from the reference" in text
    assert ("yours keeps 0.1 of the old value, manualprop.BatchNorm1D (momentum=0.1) keeps 0.9" in text
            and "the momentum looks swapped" in text and "read: lessons/22-batchnorm.md" in text)
    d = _json(tmp_path / "r.json")
    assert d["passed"] is False and any(f["code"] == "running-stats" for f in d["findings"])


@pytest.mark.parametrize("update, momentum, unbiased", [(TORCH, "0.1", False), (TORCH, "0.1", True),
                                                        (SWAPPED, "0.9", False)])  # Keras's/CS231n's convention
def test_right_running_averages_pass_against_the_reference(tmp_path, update, momentum, unbiased):
    """H2: PyTorch's update (the biased batch variance, CS231n's, accepted and said; or the unbiased, the reference's)
    and the kept-share convention with a momentum that keeps 0.9 pass, their statistics said compared."""
    p = run_here("check", _bn(tmp_path, update, momentum, unbiased), "--input-shape", "8,4", "--init", '{"D": 4}',
                 *REF)
    text = _one_line(p)
    assert p.returncode == 0, text
    assert ("note: running statistics: running_mean, running_var after a training forward and the eval output "
            "after it match manualprop.BatchNorm1D's") in text
    assert ("running_var keeps the biased batch variance" in text) is (not unbiased)
    assert "NOT checked" not in text


def test_without_reference_the_pass_says_the_running_averages_were_not_checked(tmp_path):
    """H2: without a reference the swapped update still passes (no reference-free rule tells the conventions apart),
    but the PASS line no longer stands alone: the update of running_mean, running_var is said NOT checked."""
    p = run_here("check", _bn(tmp_path, SWAPPED), "--input-shape", "8,4", "--init", '{"D": 4}')
    text = _one_line(p)
    assert p.returncode == 0, text
    assert "(the running statistics' update by a training forward: NOT checked, see below)" in text
    assert "BatchNorm: the update of running_mean, running_var (the running averages" in text
    assert "pass --reference manualprop.BatchNorm1D" in text


CS_BN = '''import numpy as np


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps, momentum = bn_param.get("eps", 1e-5), bn_param.get("momentum", 0.9)
    D = x.shape[1]
    rm = bn_param.get("running_mean", np.zeros(D))
    rv = bn_param.get("running_var", np.ones(D))
    if mode == "train":
        mu, var = x.mean(0), x.var(0)
        xhat = (x - mu) / np.sqrt(var + eps)
        rm = (1 - momentum) * rm + momentum * mu
        rv = (1 - momentum) * rv + momentum * var
        cache = (xhat, gamma, var, eps, True)
    else:
        xhat = (x - rm) / np.sqrt(rv + eps)
        cache = (xhat, gamma, rv, eps, False)
    bn_param["running_mean"], bn_param["running_var"] = rm, rv
    return gamma * xhat + beta, cache


def batchnorm_backward(dout, cache):
    xhat, gamma, var, eps, train = cache
    dgamma = (dout * xhat).sum(0)
    dbeta = dout.sum(0)
    dxhat = dout * gamma
    inv = 1 / np.sqrt(var + eps)
    if not train:
        return dxhat * inv, dgamma, dbeta
    N = dout.shape[0]
    return inv / N * (N * dxhat - dxhat.sum(0) - xhat * (dxhat * xhat).sum(0)), dgamma, dbeta
'''


def test_a_cs231n_pair_names_the_running_averages_it_stores_unchecked(tmp_path):
    """H2: the CS231n pair (bn_param['running_mean'] written in a tuple assignment) with the swapped momentum: the
    PASS says the update of both statistics was not checked, and how --reference checks them (session 36: a pair's
    statistics are compared with it, tests/test_lstm_bn_pair_s36.py)."""
    (tmp_path / "cs_bn.py").write_text(CS_BN)
    p = run_here("check", f"{tmp_path / 'cs_bn.py'}::batchnorm", "--input-shape", "8,4;4;4",
                 "--init", '{"bn_param": {"mode": "train"}}')
    text = _one_line(p)
    assert p.returncode == 0, text
    assert "batchnorm: the update of bn_param['running_mean'], bn_param['running_var'] (the running" in text
    assert ("pass --reference manualprop.BatchNorm1D (--reference-init '{\"num_features\": D}') with the dict's mode "
            "'train' in --init to compare them after a training forward") in text


# --------------------------------------------------------------------------- M1, M2: output shapes




def _conv(tmp_path, plus_one=True):
    """A plain Conv2D (stride, padding); ``plus_one`` False: the output size (H + 2p - k) // s, the + 1 missing."""
    f = tmp_path / "conv.py"
    f.write_text(f'''import numpy as np


class Conv2D:
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        rng = np.random.default_rng(0)
        self.k, self.s, self.p = kernel_size, stride, padding
        self.params = {{"W": rng.standard_normal((out_channels, in_channels, kernel_size, kernel_size)) * 0.3,
                       "b": rng.standard_normal(out_channels) * 0.1}}
        self.grads = {{}}

    def forward(self, X):
        k, s, p = self.k, self.s, self.p
        Xp = np.pad(X, ((0, 0), (0, 0), (p, p), (p, p)))
        N, C, H, W = Xp.shape
        Ho, Wo = (H - k) // s{" + 1" if plus_one else ""}, (W - k) // s{" + 1" if plus_one else ""}
        Y = np.zeros((N, self.params["W"].shape[0], Ho, Wo))
        for i in range(Ho):
            for j in range(Wo):
                patch = Xp[:, :, i * s:i * s + k, j * s:j * s + k]
                Y[:, :, i, j] = np.einsum("nchw,fchw->nf", patch, self.params["W"]) + self.params["b"]
        self.cache = Xp
        return Y

    def backward(self, dY):
        k, s, p, Xp = self.k, self.s, self.p, self.cache
        dXp = np.zeros_like(Xp)
        self.grads["W"] = np.zeros_like(self.params["W"])
        self.grads["b"] = dY.sum((0, 2, 3))
        for i in range(dY.shape[2]):
            for j in range(dY.shape[3]):
                patch = Xp[:, :, i * s:i * s + k, j * s:j * s + k]
                self.grads["W"] += np.einsum("nchw,nf->fchw", patch, dY[:, :, i, j])
                dXp[:, :, i * s:i * s + k, j * s:j * s + k] += np.einsum("fchw,nf->nchw", self.params["W"], dY[:, :, i, j])
        return dXp[:, :, p:dXp.shape[2] - p, p:dXp.shape[3] - p]
''')
    return f"{f}::Conv2D"


def test_an_empty_forward_output_is_not_checked_with_its_shape_and_cause(tmp_path):
    """M1: a 3x3 kernel on a 2x2 input without padding gives Y of shape (2, 2, 0, 0): a traceback in
    numerical.batch_independent before; now exit 3 naming the layer, the empty shape and the cause, and --json says so."""
    p = run_here("check", _conv(tmp_path), "--input-shape", "2,3,2,2", "--init",
                 '{"in_channels": 3, "out_channels": 2, "kernel_size": 3}', "--json", tmp_path / "r.json")
    text = _one_line(p)
    assert p.returncode == 3 and "Traceback" not in text, text
    assert ("gradcheck: not checked (exit 3): Conv2D.forward(X) returned an empty Y of shape (2, 2, 0, 0) (size 0 "
            "along axis 2, 3): it has no element") in text
    assert "give a larger --input-shape" in text and "change --input-shape; if that is" not in text
    assert _json(tmp_path / "r.json")["outcome"] == "not checked"


def test_an_output_shape_unlike_the_references_is_a_wrong_result(tmp_path):
    """M2: an output size without its + 1 ((7 + 2 - 3) // 2 = 3, not 4) with --reference manualprop.Conv2D: a
    traceback in manualprop's backward before; now exit 1 naming both shapes and the formula. The same layer with the
    + 1 passes (the reference's settings are the layer's)."""
    init = '{"in_channels": 3, "out_channels": 2, "kernel_size": 3, "stride": 2, "padding": 1}'
    p = run_here("check", _conv(tmp_path, plus_one=False), "--input-shape", "2,3,7,7", "--init", init,
                 "--reference", "manualprop.Conv2D")
    text = _one_line(p)
    assert p.returncode == 1 and "Traceback" not in text, text
    assert ("gradcheck: wrong result (exit 1): Conv2D.forward(X) with X of shape (2, 3, 7, 7) gave Y with shape "
            "(2, 2, 3, 3); the reference manualprop.Conv2D gives (2, 2, 4, 4) (axis 2, 3)") in text
    assert "(H + 2*padding - kernel) // stride + 1" in text and "change --input-shape" not in text
    p = run_here("check", _conv(tmp_path), "--input-shape", "2,3,7,7", "--init", init, "--reference",
                 "manualprop.Conv2D")
    assert p.returncode == 0, _one_line(p)


# --------------------------------------------------------------------------- L2, L3: wording


def test_an_integer_forward_output_gets_a_dtype_hint_not_the_input_shape_one(tmp_path):
    """L2: a forward returning (X * 3).astype(int) ended with "change --input-shape"; now a dtype hint."""
    f = tmp_path / "bad.py"
    f.write_text("import numpy as np\n\n\nclass IntOut:\n    def forward(self, X):\n        return (X * 3).astype(int)"
                 "\n\n    def backward(self, dY):\n        return dY * 3\n")
    p = run_here("check", f"{f}::IntOut", "--input-shape", "4,3")
    text = _one_line(p)
    assert p.returncode == 1, text
    assert "IntOut.forward(X) with X of shape (4, 3) returned Y of dtype int64" in text
    assert "--input-shape" not in text
    assert ("The input X was float64 (gradcheck draws float inputs; --dtype chooses their float type), so the int64 "
            "comes from forward itself") in text


def test_a_wrong_class_name_suggests_its_abbreviation_as_check_and_the_grader_say_it(tmp_path):
    """L3: the grader's "no class 'SoftmaxCrossEntropy'" listed SoftmaxCE without "did you mean" (difflib's ratio 0.64
    is under its cutoff); the one function both use (gradcheck._adapters.find) now names the abbreviation."""
    import types

    from gradcheck._adapters import AdapterError, abbreviates, find

    mod = types.ModuleType("layers")
    exec("class Linear:\n    pass\n\n\nclass SoftmaxCE:\n    pass\n", mod.__dict__)
    for cls in ("Linear", "SoftmaxCE"):
        getattr(mod, cls).__module__ = "layers"
    with pytest.raises(AdapterError) as exc:
        find(mod, "SoftmaxCrossEntropy")
    assert "Classes defined in it: Linear, SoftmaxCE. Function pairs: none. Did you mean SoftmaxCE?" in str(exc.value)
    assert [abbreviates(a, b) for a, b in [("SoftmaxCE", "SoftmaxCrossEntropy"), ("BN", "BatchNorm"),
                                           ("conv_t", "conv_transpose"), ("Linear", "ReLU"), ("Conv2D", "Conv"),
                                           ("ReLU", "Relu")]] == [True, True, True, False, False, False]


def test_a_complex_input_to_manualprop_is_not_told_to_drop_its_imaginary_part():
    """L3: manualprop's complex-input error said "convert with X.astype(np.float64)", which drops the imaginary part
    (numpy only warns); now it says so and what keeps it."""
    import numpy as np

    import manualprop

    with pytest.raises(TypeError) as exc:
        manualprop.Linear(5, 3).forward(np.ones((2, 5)) + 1j)
    text = str(exc.value)
    assert "got complex128" in text and "convert with" not in text
    assert "X.astype(np.float64) would drop the imaginary part (numpy only warns)" in text
    assert "np.concatenate([np.real(X), np.imag(X)], axis=-1)" in text and "np.real(X).astype(np.float64)" in text
    with pytest.raises(TypeError, match=r"got float32 \(convert with X\.astype\(np\.float64\)\)"):
        manualprop.Linear(5, 3).forward(np.ones((2, 5), dtype=np.float32))


# --------------------------------------------------------------------------- L1: stride and LSTM bugs named


def test_a_conv_backward_ignoring_the_stride_is_named(tmp_path):
    """L1: dX scattered at dXp[:, :, i:i + k, j:j + k] where i*s:i*s + k is due was "no known bug pattern"."""
    target = _conv(tmp_path)
    f = Path(target.rpartition("::")[0])
    f.write_text(f.read_text().replace("dXp[:, :, i * s:i * s + k, j * s:j * s + k] +=", "dXp[:, :, i:i + k, j:j + k] +="))
    p = run_here("check", target, "--input-shape", "2,3,7,7", "--init",
                 '{"in_channels": 3, "out_channels": 2, "kernel_size": 3, "stride": 2, "padding": 1}')
    text = _one_line(p)
    assert p.returncode == 1 and "no known bug" not in text, text
    assert ("diagnosis: dX is what backward gives adding each output position's contribution at (i, j) of the padded "
            "input, not at (i*2, j*2): forward (stride 2, padding 1, a 3x3 kernel)") in text
    assert "dXp[:, :, i*s:i*s + kh, j*s:j*s + kw] (s = 2)" in text and "read: lessons/20-conv2d.md" in text


LSTM_BUG = '''import numpy as np


def sig(z):
    return 1.0 / (1.0 + np.exp(-z))


class LSTMCell:
    def __init__(self, input_size, hidden_size, seed=0):
        rng = np.random.default_rng(seed)
        H = self.H = hidden_size
        self.params = {"Wx": rng.standard_normal((input_size, 4 * H)) * 0.3,
                       "Wh": rng.standard_normal((H, 4 * H)) * 0.3, "b": rng.standard_normal(4 * H) * 0.1}
        self.grads = {n: np.zeros_like(v) for n, v in self.params.items()}

    def forward(self, x, h_prev, c_prev):
        H = self.H
        a = x @ self.params["Wx"] + h_prev @ self.params["Wh"] + self.params["b"]
        i, f, o, g = sig(a[:, :H]), sig(a[:, H:2*H]), sig(a[:, 2*H:3*H]), np.tanh(a[:, 3*H:])
        c = f * c_prev + i * g
        tc = np.tanh(c)
        self.cache = (x, h_prev, c_prev, i, f, o, g, tc)
        return o * tc, c

    def backward(self, dh, dc):
        x, h_prev, c_prev, i, f, o, g, tc = self.cache
        dc = dc + dh * o * (1 - tc ** 2)
        do, di, df, dg = dh * tc, dc * g, dh * c_prev, dc * i  # df: dh where the total dc is due
        da = np.concatenate([di * i * (1 - i), df * f * (1 - f), do * o * (1 - o), dg * (1 - g ** 2)], axis=1)
        self.grads["Wx"], self.grads["Wh"], self.grads["b"] = x.T @ da, h_prev.T @ da, da.sum(0)
        return da @ self.params["Wx"].T, da @ self.params["Wh"].T, dc * f
'''


def test_an_lstm_cells_unnamed_bug_points_to_the_lstm_lesson(tmp_path):
    """L1: an LSTMCell (forward(x, h_prev, c_prev) -> (h, c)) whose forget gate takes dh for the total dc was sent to
    lesson 01b; a step of a recurrent cell is now recognised (diagnose._cell_kind): lesson 32."""
    (tmp_path / "lstm.py").write_text(LSTM_BUG)
    p = run_here("check", f"{tmp_path / 'lstm.py'}::LSTMCell", "--input-shape", "4,3;4,5;4,5",
                 "--init", '{"input_size": 3, "hidden_size": 5}')
    text = _one_line(p)
    assert p.returncode == 1, text
    assert "read: lessons/32-lstm.md" in text and "01b-numerical-gradients" not in text
