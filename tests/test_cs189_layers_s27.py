"""Berkeley CS189's neural_networks homework conventions and numpy-ml's package layout, as tester27s found them
(session 27): weights built by the first forward into a dict bound anew (``self.parameters = {}`` until then),
activations written ``forward(Z)`` / ``backward(Z, dY)``, a string configuration compared with a number
(``keep_dim == -1``), a package's own absolute imports, a file inside a package that imports relatively. The
fixtures are small classes in the style of the published code. Each check runs ``gradcheck.cli.main`` in this
process (``test_cli.run_here``), the layer in its sandbox process."""

import importlib.util

import pytest
from test_cli import both, run_here, student

#: CS189's FullyConnected pattern (neural_networks/layers.py): n_in = None and parameters = {} until the first
#: forward binds new dicts; the activation's backward takes forward's input (Z) and dY. BUG edits db.
LAZY = """
import numpy as np

class TanH:
    def forward(self, Z):
        return np.tanh(Z)
    def backward(self, Z, dY):
        return dY * (1 - np.tanh(Z) ** 2)

class Dense:
    def __init__(self, n_out):
        self.n_in = None
        self.n_out = n_out
        self.activation = TanH()
        self.parameters = {}
        self.cache = {}
        self.gradients = {}
    def _init_parameters(self, X_shape):
        self.n_in = X_shape[1]
        W = np.random.randn(self.n_in, self.n_out) / np.sqrt(self.n_in)
        b = np.zeros((1, self.n_out))
        self.parameters = {"W": W, "b": b}
        self.cache = {"Z": [], "X": []}
        self.gradients = {"W": np.zeros_like(W), "b": np.zeros_like(b)}
    def forward(self, X):
        if self.n_in is None:
            self._init_parameters(X.shape)
        Z = X @ self.parameters["W"] + self.parameters["b"]
        self.cache["Z"] = Z
        self.cache["X"] = X
        return self.activation.forward(Z)
    def backward(self, dLdY):
        dZ = self.activation.backward(self.cache["Z"], dLdY)
        self.gradients["W"] = self.cache["X"].T @ dZ
        self.gradients["b"] = BIAS
        return dZ @ self.parameters["W"].T

class NoFlag:
    # parameters = {} rebuilt whenever it is empty (no n_in flag): a fresh copy draws other weights
    def __init__(self, n_out):
        self.n_out = n_out
        self.parameters = {}
        self.gradients = {}
    def forward(self, X):
        if not self.parameters:
            self.parameters = {"W": np.random.randn(X.shape[1], self.n_out)}
        self.X = X
        return X @ self.parameters["W"]
    def backward(self, dY):
        self.gradients["W"] = self.X.T @ dY * SCALE
        return dY @ self.parameters["W"].T
"""


def _lazy(tmp_path, bias="np.sum(dZ, axis=0, keepdims=True)", scale="1"):
    return student(tmp_path, LAZY.replace("BIAS", bias).replace("SCALE", scale), "cs189_lazy.py")


def test_parameters_dict_bound_by_the_first_forward_is_checked(tmp_path):
    # tester27s M1: parameters = {} bound anew by the first forward was undone while n_in stayed set: KeyError 'W',
    # "the error is in forward" (exit 3) for CS189's correct FullyConnected and Conv2D
    f = _lazy(tmp_path)
    p = run_here("check", f"{f}::Dense", "--input-shape", "8,5", "--init", '{"n_out": 3}')
    out = both(p)
    assert p.returncode == 0, out
    assert "(created by the first forward, then checked: parameters['W'], parameters['b'])" in out, out
    assert "dparameters['W']" in out and "dparameters['b']" in out and "KeyError" not in out, out
    bad = run_here("check", f"{_lazy(tmp_path, 'np.mean(dZ, axis=0, keepdims=True)')}::Dense", "--input-shape",
                   "8,5", "--init", '{"n_out": 3}')
    assert bad.returncode == 1 and "FAIL: Dense: gradient mismatch in dparameters['b']." in both(bad), both(bad)


def _api(path, cls, shape, **init):
    """``check_layer`` on the class ``cls`` of the file ``path`` imported here (the Python API's own run)."""
    from gradcheck import check_layer

    spec = importlib.util.spec_from_file_location(f"_s27_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return check_layer(getattr(mod, cls)(**init), shape, mode="fast", twin=None)


@pytest.mark.parametrize("scale", ["1", "2"])
def test_lazy_dict_without_flag_cli_and_api_agree(tmp_path, scale):
    # tester27s H1: NoFlag's correct gradient FAILed in the CLI ("forward returns what an earlier call computed":
    # the lazy dict was undone, so copies of the layer each drew their own weights) while check_layer PASSed
    # without checking W at all; now both check dparameters['W'] and agree (a doubled dW FAILs in both)
    f = _lazy(tmp_path, scale=scale)
    p = run_here("check", f"{f}::NoFlag", "--input-shape", "6,4", "--init", '{"n_out": 3}')
    out = both(p)
    assert p.returncode == (0 if scale == "1" else 1), out
    assert "stale output" not in out and "earlier call" not in out, out
    assert "created by the first forward, then checked: parameters['W']" in out, out
    res = _api(f, "NoFlag", (6, 4), n_out=3)
    assert res.passed == (scale == "1"), res
    assert {r.tensor for r in res.records if r.kind != "forward"} == {"dX", "dparameters['W']"}, res.records


ACT = """
import numpy as np

class Sigmoid:
    def forward(self, Z):
        return 1 / (1 + np.exp(-Z))
    def backward(self, Z, dY):
        s = 1 / (1 + np.exp(-Z))
        return dY * DERIV
"""


def test_activation_backward_taking_forwards_input(tmp_path):
    # tester27s M2: CS189's activations, backward(Z, dY), were refused: "missing 1 required positional argument"
    f = student(tmp_path, ACT.replace("DERIV", "s * (1 - s)"), "act.py")
    p = run_here("check", f"{f}::Sigmoid", "--input-shape", "8,5")
    out = both(p)
    assert p.returncode == 0, out
    assert ("backward(Z, dY) takes forward's input and then dY: forward's input is handed back to backward" in out
            ), out
    bad = student(tmp_path, ACT.replace("DERIV", "Z * (1 - Z)"), "act_bad.py")  # derivative at the input
    q = run_here("check", f"{bad}::Sigmoid", "--input-shape", "8,5")
    assert q.returncode == 1 and "FAIL: Sigmoid: gradient mismatch in dX." in both(q), both(q)
    assert _api(f, "Sigmoid", (8, 5)).passed and not _api(bad, "Sigmoid", (8, 5)).passed


FLATTEN = """
import numpy as np

class Flatten:
    def __init__(self, keep_dim="first"):
        self.keep_dim = keep_dim
        self.cache = {"in_dims": []}
    def forward(self, X):
        self.cache["in_dims"] = X.shape
        if self.keep_dim == -1:
            return X.flatten().reshape(1, -1)
        rs = (X.shape[0], -1) if self.keep_dim == "first" else (-1, X.shape[-1])
        return X.reshape(*rs)
    def backward(self, dLdY):
        return dLdY.reshape(SHAPE)
"""


def test_string_configuration_compared_with_a_number_is_warned_not_refused(tmp_path):
    # tester27s M3: NOT CHECKED "forward reads self.keep_dim = 'first' (its other values: none found in the class's
    # source)" though the source compares it with -1; docs/checking.md: a WARNING naming the --init, the check goes on
    f = student(tmp_path, FLATTEN.replace("SHAPE", "self.cache['in_dims']"), "flatten.py")
    p = run_here("check", f"{f}::Flatten", "--input-shape", "4,2,3,2")
    out = both(p)
    assert p.returncode == 0 and "NOT CHECKED" not in out, out
    assert ("WARNING: forward branches on self.keep_dim, the layer's configuration as built, which gradcheck does "
            "not switch: only the branch of self.keep_dim = 'first' was checked") in out, out
    assert "check the other with --init '{\"keep_dim\": -1}'" in out, out
    other = run_here("check", f"{f}::Flatten", "--input-shape", "4,2,3,2", "--init", '{"keep_dim": -1}')
    assert other.returncode == 0, both(other)
    bad = student(tmp_path, FLATTEN.replace("SHAPE", "self.cache['in_dims'][::-1]).transpose(3, 2, 1, 0"),
                  "flatten_bad.py")
    q = run_here("check", f"{bad}::Flatten", "--input-shape", "4,2,3,2")
    assert q.returncode == 1 and "FAIL: Flatten" in both(q), both(q)


#: CS189's Conv2D pattern: kernel_shape annotated Tuple[int, int] and concatenated with a tuple, pad "same" turned
#: into a tuple by the first forward beside n_in and the new parameters dict (NHWC, stride 1).
CONV = """
from typing import Tuple
import numpy as np

class Conv2D:
    def __init__(self, n_out: int, kernel_shape: Tuple[int, int], pad: str = "same"):
        self.n_in = None
        self.n_out = n_out
        self.kernel_shape = kernel_shape
        self.pad = pad
        self.parameters = {}
        self.cache = {}
        self.gradients = {}
    def _init_parameters(self, X_shape):
        self.n_in = X_shape[3]
        W_shape = self.kernel_shape + (self.n_in,) + (self.n_out,)
        self.parameters = {"W": np.random.randn(*W_shape) * 0.3, "b": np.zeros((1, self.n_out))}
        self.gradients = {"W": np.zeros(W_shape), "b": np.zeros((1, self.n_out))}
        self.pad = ((W_shape[0] - 1) // 2, (W_shape[1] - 1) // 2) if self.pad == "same" else (0, 0)
    def forward(self, X):
        if self.n_in is None:
            self._init_parameters(X.shape)
        W, b = self.parameters["W"], self.parameters["b"]
        kh, kw = self.kernel_shape
        P = np.pad(X, ((0, 0), (self.pad[0], self.pad[0]), (self.pad[1], self.pad[1]), (0, 0)))
        n, h, w, _ = X.shape
        Z = np.empty((n, h + 2 * self.pad[0] - kh + 1, w + 2 * self.pad[1] - kw + 1, self.n_out))
        for i in range(Z.shape[1]):
            for j in range(Z.shape[2]):
                Z[:, i, j] = np.tensordot(P[:, i:i + kh, j:j + kw], W, axes=3) + b
        self.cache = {"P": P}
        return Z
    def backward(self, dZ):
        W, P = self.parameters["W"], self.cache["P"]
        kh, kw = self.kernel_shape
        dP, dW = np.zeros_like(P), np.zeros_like(W)
        for i in range(dZ.shape[1]):
            for j in range(dZ.shape[2]):
                dP[:, i:i + kh, j:j + kw] += np.tensordot(dZ[:, i, j], W, axes=(1, 3))
                dW += np.tensordot(P[:, i:i + kh, j:j + kw], dZ[:, i, j], axes=(0, 0))
        self.gradients["W"] = dW
        self.gradients["b"] = DB
        ph, pw = self.pad
        return dP[:, ph:P.shape[1] - ph, pw:P.shape[2] - pw]
"""


@pytest.mark.parametrize("db", ["dZ.sum(axis=(0, 1, 2))[None]", "dZ.sum(axis=0)[0, 0][None]"])
def test_conv_built_by_first_forward_with_a_tuple_kernel_shape(tmp_path, db):
    # tester27s M1 (c189-conv): --init's JSON list for kernel_shape: Tuple[int, int] made `kernel_shape + (n_in,)` a
    # TypeError, after n_in was set: the probe kept n_in and undid the rest, so forward raised KeyError 'W' instead
    # (exit 3); the list is now passed as the tuple __init__ declares, and the first forward kept whole (pad as well)
    f = student(tmp_path, CONV.replace("DB", db), "conv.py")
    p = run_here("check", f"{f}::Conv2D", "--input-shape", "2,5,5,2", "--init", '{"n_out": 3, "kernel_shape": [3, 3]}')
    out = both(p)
    assert "created by the first forward, then checked: parameters['W'], parameters['b']" in out, out
    if db.startswith("dZ.sum(axis=(0"):
        assert p.returncode == 0 and "PASS: Conv2D" in out, out
    else:  # db of one position only
        assert p.returncode == 1 and "FAIL: Conv2D: gradient mismatch in dparameters['b']." in out, out


def test_a_lazy_build_that_raises_is_undone_whole(tmp_path):
    # the first forward raised after setting n_in (a list where a tuple is needed, no annotation to say so): the
    # error is the student's own TypeError, not a KeyError of a half-kept build
    f = student(tmp_path, CONV.replace("DB", "0").replace("kernel_shape: Tuple[int, int]", "kernel_shape"), "conv.py")
    p = run_here("check", f"{f}::Conv2D", "--input-shape", "2,5,5,2", "--init", '{"n_out": 3, "kernel_shape": [3, 3]}')
    out = both(p)
    assert p.returncode == 3 and "TypeError: can only concatenate list (not \"tuple\") to list" in out, out
    assert "KeyError" not in out, out


def _package(tmp_path, layer):
    pkg = tmp_path / "mypkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("def helper(x):\n    return 2 * x\n")
    (pkg / "sub" / "layer.py").write_text(layer)
    return pkg


DOUBLE = """{imp}

class Double:
    def forward(self, X):
        return helper(X)
    def backward(self, dY):
        return {k} * dY
"""


@pytest.mark.parametrize("isolation", ["process", "namespaces"])
def test_a_packages_own_import_gets_no_warning(tmp_path, isolation):
    # tester27s M4: "imports mypkg ... It does not import here either: it is not installed here; remove it" on a file
    # of mypkg importing mypkg.helpers, an import that works in the check (the package is copied into the sandbox);
    # under --isolation namespaces the package is left out (redteam27 M2) and the sandbox's own warning says why
    from gradcheck.sandbox import support

    if isolation == "namespaces" and support()[0] == "none":
        pytest.skip(f"no namespaces sandbox here: {support()[1]}")
    _package(tmp_path, DOUBLE.format(imp="from mypkg.helpers import helper", k=2))
    p = run_here("check", "mypkg/sub/layer.py::Double", "--input-shape", "4,3", "--isolation", isolation,
                 cwd=tmp_path)
    out = both(p)
    assert "imports mypkg" not in out and "remove it" not in out and "WARNING" not in out, out
    if isolation == "process":
        assert p.returncode == 0, out
    else:  # redteam27 M2's rule: the file sees its own folder alone; the one warning says how to check it
        flat = " ".join(out.split())
        assert p.returncode == 3 and "No module named 'mypkg'" in flat, out
        assert "was not copied into the sandbox" in flat and "check it from the top of its submission" in flat, out


@pytest.mark.parametrize("k", [2, 3])
def test_a_file_inside_a_package_imports_relatively(tmp_path, k):
    # tester27s M5: numpy-ml's layers.py checked at its path in the package exited 3, "attempted relative import
    # with no known parent package": it is imported as mypkg.sub.layer, the package root found as Python finds it
    _package(tmp_path, DOUBLE.format(imp="from ..helpers import helper", k=k))
    p = run_here("check", "mypkg/sub/layer.py::Double", "--input-shape", "4,3", cwd=tmp_path)
    out = both(p)
    assert p.returncode == (0 if k == 2 else 1), out
    assert "relative import" not in out, out
    assert ("PASS: Double" if k == 2 else "FAIL: Double: gradient mismatch in dX.") in out, out


def test_packaged_names_the_module_only_for_relative_imports(tmp_path):
    # the rule of gradcheck.sandbox._packaged: a top-level copy importing relatively, also copied inside packages
    from gradcheck.sandbox import _packaged

    work = tmp_path / "w"
    for rel, text in [("a/__init__.py", ""), ("a/b/__init__.py", ""), ("a/b/m.py", "from .. import x\n"),
                      ("m.py", "from .. import x\n"), ("a/b/n.py", "import numpy\n"), ("n.py", "import numpy\n")]:
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    src = {"m": str(tmp_path / "m_src.py"), "n": str(tmp_path / "n_src.py")}
    items = [("m.py", src["m"]), ("a/b/m.py", src["m"]), ("n.py", src["n"]), ("a/b/n.py", src["n"])]
    assert _packaged(str(work), items) == {"m.py": "a.b.m"}
    (work / "a" / "__init__.py").unlink()  # not a package from the root: loaded as before
    assert _packaged(str(work), items) == {}


#: A cross-entropy on probabilities (CS189's losses.py, MIT 6.036's NLL) whose backward is GRAD: the fused softmax +
#: cross-entropy gradient (p - y) / N is the students' usual slip (tester27s L2).
CE = """
import numpy as np

class CrossEntropy:
    def forward(self, Y, Y_hat):
        self.Y, self.Y_hat = Y, Y_hat
        return -np.sum(Y * np.log(Y_hat)) / Y.shape[0]
    def backward(self):
        return GRAD
"""


@pytest.mark.parametrize("grad", ["-self.Y / self.Y_hat / self.Y.shape[0]", "(self.Y_hat - self.Y) / self.Y.shape[0]"])
def test_fused_softmax_gradient_in_a_loss_on_probabilities_is_named(tmp_path, grad):
    f = student(tmp_path, CE.replace("GRAD", grad), "ce.py")
    p = run_here("check", f"{f}::CrossEntropy", "--input-shape", "8,5", "--loss", "--pred", "probs", "--targets",
                 "onehot")
    out = both(p)
    if grad.startswith("-"):
        assert p.returncode == 0, out
        return
    assert p.returncode == 1, out
    assert ("diagnosis: dy_pred is (Y_hat - y) / N, N = 8, the gradient of the softmax and the cross-entropy together "
            "with respect to the softmax's input (the logits)") in out, out
    assert "its gradient with respect to Y_hat is -y / (N * Y_hat)" in out and "no known bug pattern" not in out, out


#: MIT 6.036 hw7's NLL, batch-last: Ypred of shape (classes, batch), the max over axis 0 picking each column's label.
NLL = """
import numpy as np

class NLL:
    def forward(self, Ypred, Y):
        self.Ypred, self.Y = Ypred, Y
        return -np.sum(np.log(np.max(Y * Ypred, axis=0)))
    def backward(self):
        return -self.Y / self.Ypred
"""


def test_a_batch_last_loss_is_said_batch_last_not_log_of_0(tmp_path):
    # tester27s L1: on rows of classes (gradcheck's layout) a column may hold no label, so max(Y * Ypred, axis=0) is 0
    # and L inf: "Check for division by zero, log of 0" blamed forward; the layout is named, with the wrapper to use
    f = student(tmp_path, NLL, "nll.py")
    p = run_here("check", f"{f}::NLL", "--input-shape", "3,8", "--loss", "--pred", "probs", "--targets", "onehot")
    out = both(p)
    assert p.returncode == 2, out
    assert "forward is finite with the classes on axis 0" in out and "log of 0" not in out, out
    assert ("class NLLT(NLL): def forward(self, Ypred, Y): return super().forward(Ypred.T, Y.T); def backward(self): "
            "return super().backward().T") in out, out
    g = student(tmp_path, NLL + """
class NLLT(NLL):
    def forward(self, Ypred, Y): return super().forward(Ypred.T, Y.T)
    def backward(self): return super().backward().T
""", "nll_t.py")  # the advice, followed: checked, and right
    q = run_here("check", f"{g}::NLLT", "--input-shape", "8,3", "--loss", "--pred", "probs", "--targets", "onehot")
    assert q.returncode == 0 and "PASS: NLLT" in both(q), both(q)


def test_planted_bugs_of_tester27s_are_named():
    # tester27s L3/L4: an inverted ReLU mask was "no known bug pattern"; a halving at a batch of 2 was "an extra
    # 1/batch" alone, though the numbers cannot tell the two apart there
    from tests.buggy_layers import diagnose, first_code

    assert first_code(diagnose("tester27s.py::ReLU")) == "PASS"
    inverted = diagnose("tester27s.py::ReLUMaskInverted")
    assert first_code(inverted) == "relu-mask-inverted" and "dX = dY * (X <= 0)" in inverted.sentence()
    halved = diagnose("tester27s.py::ScaleHalved").sentence()
    assert "2 times too small (batch size 2; or a plain factor 1/2: at a batch of 2 the batch's 1/N and a " in halved
    assert first_code(diagnose("tester27s_loss.py::CrossEntropyFused")) == "fused-softmax-ce"
