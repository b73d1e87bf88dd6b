"""Diagnoses that were wrong or missing (session 3): a batch-mean layer's missing mean term, dX with the
weight the wrong way round for a non-square W, a CS231n pair's gradients returned in the wrong order,
a built-in layer's error called the student's, and the grader's "how to reproduce" line."""

import json
import shlex
from pathlib import Path

import numpy as np
import pytest
from buggy_layers import diagnose, first_code
from test_cli import run_here

import manualprop as mp
from gradcheck import _adapters
from gradcheck.check import check_loss, loss_gradient_name
from gradcheck.diagnose import (
    DIAGNOSES,
    SIGNATURES,
    _find,
    _norm_signature,
    _order_signature,
    diagnose_layer,
    name_signature,
)

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"


def test_every_code_has_a_record_and_every_signature_is_a_code():
    assert set(SIGNATURES) <= set(DIAGNOSES) and {"wrong-order", "missing-mean-var-paths"} <= set(SIGNATURES)
    assert DIAGNOSES["transposed-weight"].name == "transposed weight in dX"
    assert all(r.lesson == "" or (ROOT / "lessons" / r.lesson).is_file() for r in DIAGNOSES.values())
    f = _find("bias-mean", "db", count=8, words="batch size 8", over="the batch")
    assert f.message == ("db is the mean over the batch, not the sum: it is 8 times too small (batch size 8); use "
                         "dY.sum(...) instead of dY.mean(...)")
    assert f.name == "mean, not sum" and f.lesson == "lessons/01-linear-layer.md"


# --------------------------------------------------------------------------- (a) batch-mean layers


@pytest.mark.parametrize("key", ["norm.py::MeanCenterNoMean", "norm.py::BatchCenterNoMean"])
def test_batch_mean_layer_without_its_mean_term_is_named(key):
    """dX = dY for Y = X - X.mean(0) was called "activation derivative missing"."""
    d = diagnose(key)
    assert first_code(d) == "missing-mean-var-paths", d.report()
    assert "lacks the gradient through the batch mean" in d.sentence()
    assert "true - given is constant over axis=0" in d.sentence() and "activation" not in d.sentence()


def test_mean_term_signature_needs_a_batch_constant_correction():
    rng = np.random.default_rng(0)
    X, G = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
    right = G - G.mean(axis=0)
    code, fields = _norm_signature(G, right, X)
    assert code == "missing-mean-var-paths" and fields["which"] == "mean" and fields["ax"] == "axis=0"
    # per sample (over the features): the same bug in a LayerNorm-like centring
    code, fields = _norm_signature(G, G - G.mean(axis=1, keepdims=True), X)
    assert fields["scope"] == "per-sample" and fields["ax"] == "axis=1"
    # off by something that is not constant over the batch: not this bug
    assert _norm_signature(G, right + 0.1 * rng.standard_normal(G.shape), X) is None
    # a correction constant over the batch, but the correct gradient is not centred: no mean path to miss
    assert _norm_signature(G, G + 1.0, X) is None


# --------------------------------------------------------------------------- (b) dX = dY @ W for a non-square W


@pytest.mark.parametrize("key, fix", [("linear.py::LinearInOutDxWithWWide", "dX = dY @ W.T (shape (5, 4) @ (4, 3))"),
                                      ("linear.py::LinearOutInDxWithWTWide", "dX = dY @ W (shape (5, 4) @ (4, 3))"),
                                      ("cs231n.py::affinedxwwide", "dx = dY @ w.T (shape (6, 3) @ (3, 4))")])
def test_non_square_weight_the_wrong_way_round_is_named(key, fix):
    d = diagnose(key)
    assert d.codes == ["transposed-weight"] and d.error is not None, d.report()
    assert "multiplies dY by the transposed weight: backward raised a matmul shape error" in d.sentence()
    assert fix in d.sentence()


def test_np_dot_shape_error_names_the_weight_too():
    from gradcheck.diagnose import _raised_weight_signature

    X, G, W = np.zeros((5, 3)), np.zeros((5, 4)), {"W": np.zeros((3, 4))}
    err = ValueError("Linear.backward(dY) raised ValueError: shapes (5,4) and (3,4) not aligned: 4 (dim 1) != 3 (dim 0)")
    code, fields = _raised_weight_signature(err, X, G, W)
    assert code == "transposed-weight" and fields["fix"].startswith("dX = dY @ W.T")
    other = ValueError("Linear.backward(dY) raised ValueError: shapes (5,4) and (7,2) not aligned: 4 (dim 1) != 7")
    assert _raised_weight_signature(other, X, G, W) is None


def test_another_matmul_error_is_not_called_a_transposed_weight():
    class Broken(mp.Linear):
        def backward(self, dY):
            return dY @ np.ones((7, 2))  # a shape error that is no weight of the layer

    d = diagnose_layer(Broken(3, 4, rng=0), (5, 3))
    assert d.codes == ["student-code"] and "matmul" in d.sentence()


# --------------------------------------------------------------------------- (c) gradients in the wrong order


def test_cs231n_pair_returning_dx_db_dw_is_told_the_order():
    d = diagnose("cs231n.py::affineorder")
    assert d.codes == ["wrong-order"], d.report()
    assert "expected (dx, dw, db)" in d.sentence() and "it returned (dx, db, dw)" in d.sentence()
    assert d.findings[0].tensor == "dw"  # the first slot holding another gradient


def test_order_signature_on_same_shape_gradients():
    rng = np.random.default_rng(0)
    right = {"dx": rng.standard_normal((4, 4)), "dw": rng.standard_normal((4, 4)), "db": rng.standard_normal(4)}
    swapped = {"dx": right["dw"], "dw": right["dx"], "db": right["db"]}
    f = _order_signature(swapped, right, ["dx", "dw", "db"])
    assert f.code == "wrong-order" and "returned (dw, dx, db)" in f.message and f.tensor == "dx"
    assert _order_signature(right, right, ["dx", "dw", "db"]) is None  # the right order
    assert _order_signature({**swapped, "dw": 2 * right["dx"]}, right, ["dx", "dw", "db"]) is None  # not a swap


# --------------------------------------------------------------------------- (d) a built-in layer's error


def test_zoo_dropout_with_a_held_mask_is_not_probed_on_a_batch_of_another_size():
    """The zoo's Dropout holds a (4, 6) mask: a forward on another batch size was bound to raise, and the note
    about it alarmed readers (tester17 L11); a layer whose mask is held is not probed so (sources.masks_held)."""
    from gradcheck import check_layer
    from gradcheck.zoo import ENTRIES

    entry = next(e for e in ENTRIES if e.label == "Dropout[train]")
    res = check_layer(entry.make(mp, np.random.default_rng(0)), np.random.default_rng(1).standard_normal((4, 6)),
                      training=True)
    assert res.passed and not any("batch of another size" in n for n in res.notes), res.notes


# --------------------------------------------------------------------------- 3. the grader's reproduce line


def _run_printed(cmd: str, folder: Path):
    """The ``gradcheck check ...`` line ``cmd`` run as printed in ``folder``, in this process (``test_cli.run_here``:
    the same parser, checks and report as the console script, whose own start is test_cli's)."""
    argv = shlex.split(cmd)
    assert argv[0] == "gradcheck", cmd
    return run_here(*argv[1:], cwd=folder)


def test_grader_message_gives_a_command_that_reproduces_the_failure(tmp_path):
    """The line the grader shows is a real `gradcheck check file.py::NAME` that FAILs the same bug."""
    from gradcheck.grading import checks
    from gradcheck.sandbox import Sandbox

    sub = ASSIGN / "mutants" / "transposed_dW"
    init = {"in_features": 5, "out_features": 3}
    with Sandbox(files={"layers.py": str(sub / "layers.py")}, timeout=60) as sb:
        layer = sb.load_layer("layers.py", "Linear", init, seed=0)
        layer.init_kwargs = init  # what the grading plugin's student.layer sets
        X = np.random.default_rng(0).standard_normal((8, 5))
        verdict = checks.layer_gradients(layer, X, mp.Linear(5, 3, rng=0), seed=0)
    assert not verdict.passed
    line = next(n for n in verdict.notes if "gradcheck check" in n)
    cmd = line.split("`")[1]
    # with the reference, so that a forward-side bug is not blamed on backward (tester23g M3)
    assert cmd == ("gradcheck check layers.py::Linear --init '{\"in_features\": 5, \"out_features\": 3}' --input-shape "
                   "8,5 --reference manualprop.Linear --reference-init '{\"in_features\": 5, \"out_features\": 3}'")
    p = _run_printed(cmd, sub)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "dW is transposed" in " ".join(p.stdout.split())


def test_grading_results_tell_the_student_how_to_reproduce(tmp_path):
    """Through the plugin: the Gradescope output of a failing test holds the command with its --init."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text((ASSIGN / "mutants" / "db_mean" / "layers.py").read_text())
    p = run_here("grade", sub, "--tests", ASSIGN / "tests", "--out", tmp_path / "out")
    assert p.returncode == 0, p.stdout + p.stderr
    data = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())
    bad = [t for t in data["tests"] if t["status"] != "passed"]
    assert bad and all("db is the mean over the batch" in t["output"] for t in bad)
    assert all("`gradcheck check layers.py::Linear --init '{\"in_features\": " in t["output"] for t in bad), bad


def test_cs231n_grading_reproduce_line_has_one_shape_per_array_and_fails_the_same_bug(tmp_path):
    """A CS231n pair graded with x, w, b: the line gives '4,2,3;6,5;5' and, run, FAILs the mutant."""
    src = ROOT / "assignments" / "cs231n_layers"
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text((src / "mutants" / "affine_dw_transposed" / "layers.py").read_text())
    p = run_here("grade", sub, "--tests", src / "tests", "--out", tmp_path / "out")
    assert p.returncode == 0, p.stdout + p.stderr
    data = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())
    out = next(t["output"] for t in data["tests"] if t["name"].startswith("affine_backward"))
    cmd = out.split("run: `")[1].split("`")[0]
    assert cmd == "gradcheck check layers.py::affine --input-shape '4,2,3;6,5;5'", out
    q = _run_printed(cmd, sub)
    assert q.returncode == 1 and "FAIL" in q.stdout, q.stdout + q.stderr


# --------------------------------------------------------------------------- softmax cross-entropy sign flipped
def _softmax_loss_flipped(x, y):
    """A CS231n softmax_loss(x, y) -> (loss, dx) whose dx is y_onehot - p."""
    p = np.exp(x - x.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return float(-np.log(p[np.arange(len(x)), y]).mean()), (np.eye(x.shape[1])[y] - p) / len(x)


class _SumCrossEntropyFlipped:
    """A manualprop-style loss (the sum over the batch) whose backward returns y_onehot - p."""

    def forward(self, y_true, y_pred):
        self.y, self.p = y_true, np.exp(y_pred) / np.exp(y_pred).sum(axis=1, keepdims=True)
        return float(-np.log(self.p[np.arange(len(y_pred)), y_true]).sum())

    def backward(self):
        return np.eye(self.p.shape[1])[self.y] - self.p


@pytest.mark.parametrize("loss, got", [
    (_adapters.loss_function(_softmax_loss_flipped), "(y_onehot - p) / N"),
    (_SumCrossEntropyFlipped(), "y_onehot - p")])
def test_softmax_cross_entropy_with_the_sign_flipped_is_named(loss, got):
    rng = np.random.default_rng(1)
    y, x = rng.integers(0, 4, size=6), rng.standard_normal((6, 4))
    res = check_loss(loss, y, x, twin=None)
    g = loss_gradient_name(loss)
    m, n = res.gradients["manual"][g], res.gradients["numerical"][g]
    np.testing.assert_allclose(m, -n, rtol=1e-6, atol=1e-9)
    f = name_signature(g, m, n, n_batch=6, y_size=24)  # what `gradcheck check --loss` says
    assert f.code == "softmax-ce-sign" and f.lesson == "lessons/03-softmax-cross-entropy.md"
    assert f.message.startswith(f"{g} has the wrong sign: it is {got} where the gradient of the softmax "
                                f"cross-entropy -log p[y] is {got.replace('y_onehot - p', 'p - y_onehot')}")
    assert f"{g}[np.arange(N), y] -= 1" in f.message
    assert ("divide by N" in f.message) == ("/ N" in got)


def test_a_sign_flip_without_the_softmax_cross_entropy_pattern_stays_generic():
    rng = np.random.default_rng(2)
    n = rng.standard_normal((6, 4))
    n -= n.mean(axis=1, keepdims=True)  # rows sum to zero, but no row is p - y_onehot
    assert name_signature("dx", -n, n, n_batch=6).code == "wrong-sign"
    p = np.exp(n) / np.exp(n).sum(axis=1, keepdims=True)
    assert name_signature("dx", p, -p, n_batch=6).code == "wrong-sign"  # probabilities, not p - y_onehot


# ----------------------------------------------------------------- session 5: a grown step's own atol


class _BigBias:
    """Y = X W^T + b with b = 1e8, so the default atol (0.059) swamps |db| ~ 1 and the step grows;
    ``scale`` multiplies db element-wise (one element 1% off: no bug pattern a signature names)."""

    def __init__(self, scale=(1.0, 1.0, 1.0)):
        rng = np.random.default_rng(1)
        self.params = {"W": rng.standard_normal((3, 5)), "b": np.full(3, 1e8)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.scale = np.array(scale)

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(0) * self.scale
        return dY @ self.params["W"]


@pytest.mark.parametrize("mode", ["fast", "full", "sample"])
def test_a_grown_step_tensor_is_diagnosed_with_its_own_atol(mode):
    """db's error (0.01) is below the default atol (0.059) but far above db's own (about 6e-6): the
    diagnosis counts the wrong element with db's own atol, as the check did (it said "0 of 3")."""
    d = diagnose_layer(_BigBias((1.01, 1.0, 1.0)), (8, 5), mode=mode, n_samples=15)
    res = d.result
    assert res.failing_tensors == ["db"], res.table()
    own = res.atol_of("db")
    assert own == res.records[-1].get("manual-vs-numerical").atol and own < 1e-4 < 0.05 < res.atol
    assert d.codes == ["wrong-values"], d.sentence()
    assert "db differs from the correct gradient in 1 of 3 elements" in d.sentence(), d.sentence()
    assert "largest error is at db[0]" in d.sentence()


def test_the_verdict_states_each_grown_tensors_own_atol_and_one_atol_otherwise():
    res = diagnose_layer(_BigBias(), (8, 5), mode="full").result
    assert res.passed, res.table()
    own = {t: res.atol_of(t) for t in ("dX", "dW", "db")}
    assert all(a < 1e-4 < 0.05 < res.atol for a in own.values()), own
    words = res.atol_words()
    assert words == "atol=" + ", ".join(f"{a:.3g} ({t})" for t, a in own.items()) and f"{res.atol:g}" not in words
    lin = diagnose_layer(mp.Linear(5, 3, rng=0), (8, 5), mode="full").result
    assert lin.passed and all(lin.atol_of(t) == lin.atol for t in ("dX", "dW", "db"))
    assert lin.atol_words() == f"atol={lin.atol:g}"
