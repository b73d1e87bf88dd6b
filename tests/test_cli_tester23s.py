"""Session 23's tester's findings (tester23s, fixer fixs23): public numpy layer code (CS231n, numpy-ml,
ML-From-Scratch, Nielsen) through ``gradcheck check``."""

import pytest
from test_cli import both, run_here, student

BUGGY = "tests/buggy_layers/tester23s.py"


@pytest.mark.parametrize(("cls", "grad"), [("BNTrainCacheDouble", "dgamma"), ("FrozenLinearDouble", "dW")])
def test_training_check_probes_in_training_mode(cls, grad):
    """H1: a mode set by train()/eval() or self.trainable, a backward that runs only after a training forward: the
    discovery probed in eval under --training, backward raised, the weights became "gradients unknown" and the planted
    factor 2 PASSed (exit 0). Probed in the checked mode, the gradient is paired and FAILs."""
    p = run_here("check", f"{BUGGY}::{cls}", "--input-shape", "6,4", "--training")
    text = both(p)
    assert p.returncode == 1 and f"FAIL: {cls}: gradient mismatch in {grad}." in text, text
    assert f"{grad} is 2 times the correct gradient" in text and "no gradient checked" not in text, text


@pytest.mark.parametrize(("cls", "grads"), [("BNTrainCache", "dX, dgamma, dbeta"), ("FrozenLinear", "dX, dW")])
def test_training_check_correct_twin_passes(cls, grads):
    p = run_here("check", f"{BUGGY}::{cls}", "--input-shape", "6,4", "--training")
    assert p.returncode == 0 and f"PASS: {cls}: every gradient ({grads}) matches" in both(p), both(p)


def test_backward_never_observed_with_weights_is_not_checked(tmp_path):
    """H1's guard: a probe backward that raised leaves the weights' gradients unknown; the check then compares dX
    alone and PASSed (exit 0) with a note. Now NOT CHECKED (exit 3): a gradient never seen is no PASS."""
    src = """
    import numpy as np

    class Flaky:
        calls = 0

        def __init__(self):
            self.W = np.random.default_rng(0).standard_normal(4) + 2.0

        def forward(self, X):
            self.X = X
            return X * self.W

        def backward(self, dY):
            Flaky.calls += 1
            if Flaky.calls <= 3:  # the discovery's probes
                raise RuntimeError("not ready")
            self.dW = 2.0 * (dY * self.X).sum(0)  # never checked
            return dY * self.W
    """
    p = run_here("check", f"{student(tmp_path, src, 'flaky.py')}::Flaky", "--input-shape", "3,4")
    text = both(p)
    assert p.returncode == 3 and "PASS" not in text, text
    assert "NOT CHECKED as a whole: Flaky: backward raised when gradcheck called it after its probe forward, so " \
           "gradcheck could not see whether backward sets the gradient of W (dW)" in " ".join(text.split()), text


@pytest.mark.parametrize("cls", ["NmDense", "NmBatchNorm"])
def test_numpy_ml_layer_checked_as_written(cls):
    """M1: numpy-ml's conventions (parameters built by the first forward in a dict of None, inputs appended to self.X,
    gradients[k] += ... reset by flush_gradients(), retain_derived, backward asserting self.trainable) FAILed "gave dX
    as a list" / "inside an object gradcheck does not read weights from". Now checked as written and PASS; BatchNorm's
    eval (trainable=False) has no backward, so training mode alone is checked, said in the header."""
    p = run_here("check", f"{BUGGY}::{cls}", "--input-shape", "6,4")
    text = " ".join(both(p).split())
    assert p.returncode == 0 and f"PASS: {cls}: every gradient" in text, text
    assert "created by the first forward, then checked" in text and "flush_gradients() is called before each " \
           "forward" in text, text
    if cls == "NmBatchNorm":
        assert "forward reads self.trainable, and backward asserts it" in text and "training mode alone" in text, text


def test_numpy_ml_planted_bug_fails():
    p = run_here("check", f"{BUGGY}::NmDenseDoubleDW", "--input-shape", "6,4")
    text = both(p)
    assert p.returncode == 1 and "FAIL: NmDenseDoubleDW: gradient mismatch in dparameters['W']." in text, text
    assert "dparameters['W'] is 2 times the correct gradient" in text, text


def test_stored_input_list_refusal_says_what_to_do():
    p = run_here("check", f"{BUGGY}::XList", "--input-shape", "6,4")
    text = " ".join(both(p).split())
    assert p.returncode == 3 and "XList.backward(dY) returned a list of 2 arrays" in text, text
    assert "numpy-ml's self.X.append(X)" in text and "flush_gradients()" in text, text


def test_layer_file_importing_pyplot_is_checked(tmp_path):
    """M2: the sandbox's HOME is its own folder, so ``import matplotlib.pyplot`` built the font cache there and started
    a threading.Timer: exit 3 "the grading sandbox does not allow starting threads". The cache is copied in: PASS."""
    pytest.importorskip("matplotlib")
    src = """
    import numpy as np
    import matplotlib.pyplot as plt

    class Scale:
        def __init__(self):
            self.a = np.array([1.5, -0.5, 2.0])

        def forward(self, X):
            self.X = X
            return X * self.a

        def backward(self, dY):
            self.da = (dY * self.X).sum(0)
            return dY * self.a
    """
    p = run_here("check", f"{student(tmp_path, src, 'mpl_layer.py')}::Scale", "--input-shape", "4,3")
    assert p.returncode == 0 and "PASS: Scale: every gradient (dX, da) matches" in both(p), both(p)


def test_package_folder_beside_the_checked_file_is_importable(tmp_path):
    """M3: CS231n's layout, ``from cs231n.layers import affine_forward, affine_backward`` in a file beside the cs231n/
    folder (with a relative import inside it): exit 3 "No module named 'cs231n'" before, as only the folder's own .py
    files were copied into the sandbox. The package's .py files are copied too: PASS."""
    pkg = tmp_path / "cs231n"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("def matmul(a, b):\n    return a @ b\n")
    (pkg / "layers.py").write_text(
        "from .helpers import matmul\n\n\n"
        "def affine_forward(x, w, b):\n    return matmul(x, w) + b, (x, w, b)\n\n\n"
        "def affine_backward(dout, cache):\n    x, w, b = cache\n"
        "    return dout @ w.T, x.T @ dout, dout.sum(axis=0)\n")
    (tmp_path / "check_affine.py").write_text("from cs231n.layers import affine_forward, affine_backward  # noqa\n")
    p = run_here("check", f"{tmp_path / 'check_affine.py'}::affine", "--input-shape", "4,3;3,5;5")
    assert p.returncode == 0 and "PASS: affine: every gradient (dx, dw, db) matches" in both(p), both(p)


def test_package_files_bounded(tmp_path):
    from gradcheck.sandbox import PACKAGE_FILES, sibling_files

    (tmp_path / "a.py").write_text("")
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "m.py").write_text("")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "h.py").write_text("")
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv" / "pyvenv.cfg").write_text("")
    (tmp_path / "venv" / "v.py").write_text("")
    assert sorted(sibling_files(str(tmp_path / "a.py"))) == ["a.py", "pkg/sub/m.py"]
    big = tmp_path / "big"
    big.mkdir()
    for i in range(PACKAGE_FILES + 1):
        (big / f"m{i}.py").write_text("")
    with pytest.warns(UserWarning, match=r"^big/ beside the checked file was not copied"):  # a project folder:
        got = sorted(sibling_files(str(tmp_path / "a.py")))  # skipped alone (review25g M4: it took pkg/ with it)
    assert got == ["a.py", "pkg/sub/m.py"]


SVM = """
import numpy as np

def svm_loss_naive(W, X, y, reg):
    dW = np.zeros(W.shape)
    loss = 0.0
    for i in range(X.shape[0]):
        scores = X[i].dot(W)
        for j in range(W.shape[1]):
            if j == y[i]:
                continue
            margin = scores[j] - scores[y[i]] + 1
            if margin > 0:
                loss += margin
                dW[:, j] += X[i]
                dW[:, y[i]] -= X[i]
    loss = loss / X.shape[0] + reg * np.sum(W * W)
    return loss, dW / X.shape[0] + 2 * reg * W * FACTOR
"""
SVM_INIT = '{"X": [[1.0, 2.0, -1.0, 0.5], [0.3, -1.2, 0.7, 2.0], [-0.4, 0.9, 1.1, -0.6]], "y": [0, 2, 1], "reg": 0.1}'


@pytest.mark.parametrize(("factor", "code"), [("1", 0), ("0.5", 1)])
def test_function_of_its_first_argument_with_data_in_init(tmp_path, factor, code):
    """M4: CS231n's svm_loss_naive(W, X, y, reg) -> (loss, dW): --loss took X for the target and refused X in --init
    (the messages went in a circle). --init naming the second argument makes it a function of W alone: its gradient
    is checked with X, y, reg fixed (the regularisation's dW halved: FAIL)."""
    path = student(tmp_path, SVM.replace("FACTOR", factor), "linear_svm.py")
    p = run_here("check", f"{path}::svm_loss_naive", "--loss", "--input-shape", "4,3", "--init", SVM_INIT)
    text = " ".join(both(p).split())
    assert p.returncode == code, text
    assert "a function of W alone: the gradient of W is checked, X, y, reg fixed as --init gives them" in text, text
    assert ("PASS: svm_loss_naive: dL/dW matches" if code == 0 else "FAIL: svm_loss_naive") in text, text


def test_function_with_data_messages_name_the_form(tmp_path):
    path = student(tmp_path, SVM.replace("FACTOR", "1"), "linear_svm.py")
    p = run_here("check", f"{path}::svm_loss_naive", "--input-shape", "4,3")
    assert p.returncode == 2 and "svm_loss_naive(W, X, y, reg) -> (loss, dW), is checked with --loss, --input-shape " \
        "giving W's shape and --init every other argument" in " ".join(both(p).split()), both(p)
    p = run_here("check", f"{path}::svm_loss_naive", "--loss", "--input-shape", "4,3")
    assert p.returncode == 2 and "give X in --init too: the gradient of W alone is then checked" in \
        " ".join(both(p).split()), both(p)


def test_forward_pass_backward_pass_layer_is_named(tmp_path):
    """M5: ML-From-Scratch's Dense (forward_pass/backward_pass, initialize(optimizer), weights stepped in
    backward_pass) was called "a module of scalar autograd values (micrograd's ...)"; then refused by its protocol's
    name (exit 2); since tester31e F1 it is checked as written."""
    src = """
    import numpy as np

    class Dense:
        def __init__(self, n_units=3, input_shape=(4,)):
            self.n_units, self.input_shape = n_units, input_shape

        def initialize(self, optimizer):
            self.W, self.W_opt = np.ones((self.input_shape[0], self.n_units)), optimizer

        def parameters(self):
            return self.W.size

        def forward_pass(self, X, training=True):
            self.layer_input = X
            return X @ self.W

        def backward_pass(self, accum_grad):
            W = self.W
            self.W = self.W_opt.update(self.W, self.layer_input.T @ accum_grad)
            return accum_grad @ W.T
    """
    p = run_here("check", f"{student(tmp_path, src, 'mlfs.py')}::Dense", "--input-shape", "6,4")
    text = " ".join(both(p).split())
    assert p.returncode == 0 and "micrograd" not in text, text
    assert "ML-From-Scratch's layer protocol: forward_pass(X, training) checked as forward" in text, text
    assert "PASS: Dense: every gradient (dX, dW) matches" in text, text


def test_package_files_do_not_walk_folders_without_python(tmp_path, monkeypatch):
    """review24: every identifier-named folder was walked 4 deep, .py files or not (a file checked in a large home
    folder was slow). Below a top folder (which may be a namespace package, ``pkg/sub/m.py``), a folder without .py
    files is listed but not entered; past PACKAGE_ENTRIES listed entries the folder is a project, not a package."""
    import os

    from gradcheck import sandbox

    (tmp_path / "a.py").write_text("")
    (tmp_path / "pkg" / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "m.py").write_text("")
    (tmp_path / "pkg" / "sub" / "deeper" / "x.py").write_text("")
    (tmp_path / "Documents" / "notes" / "old" / "older").mkdir(parents=True)
    (tmp_path / "Documents" / "notes" / "old" / "o.py").write_text("")
    listed = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p=".": listed.append(os.path.relpath(p, tmp_path)) or real(p))
    assert sorted(sandbox.sibling_files(str(tmp_path / "a.py"))) == ["a.py", "pkg/sub/deeper/x.py", "pkg/sub/m.py"]
    assert os.path.join("Documents", "notes") in listed and os.path.join("Documents", "notes", "old") not in listed
    monkeypatch.setattr(sandbox, "PACKAGE_ENTRIES", 6)
    for i in range(6):  # files of a folder without .py files are not counted (review25g M4)
        (tmp_path / "Documents" / f"photo{i}.jpg").write_text("")
    assert sorted(sandbox.sibling_files(str(tmp_path / "a.py"))) == ["a.py", "pkg/sub/deeper/x.py", "pkg/sub/m.py"]
    for i in range(6):  # those of a folder with .py files are: past the bound that folder alone is skipped
        (tmp_path / "Documents" / f"script{i}.py").write_text("")
    with pytest.warns(UserWarning, match=r"^Documents/ .*more than 6 entries"):
        got = sorted(sandbox.sibling_files(str(tmp_path / "a.py")))
    assert got == ["a.py", "pkg/sub/deeper/x.py", "pkg/sub/m.py"]
