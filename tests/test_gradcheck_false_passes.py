"""False PASSes of `gradcheck check` (first found by a new-user tester, session 6): gradients below the
absolute tolerance (D10), number parameters in attribute style and in a params dict (D5), a loss that
writes into y_pred or its cache (D3), parameters of sub-layers and parameters built in the first
forward (D4).

Each case is the tester's repro, run through the installed console script as the tester did (D3's loss), through
its ``gradcheck.cli.main`` in this process (``test_cli.run_here``: the same parser, checks and report, the student's
code in its sandbox process, without a Python started per check), or in process through ``check_layer``.
"""

import numpy as np
import pytest
from test_cli import run_here
from test_cli_verdict import flat, run, write

from gradcheck import check_layer

# --------------------------------------------------------------------------- D10: tiny gradients

TINY = """

class Tiny:
    def __init__(self): self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        self.X = X; return 1e-10 * X ** 2
    def backward(self, dY): return dY * 1e-10 * self.X   # BUG: should be 2e-10

class TinyOK(Tiny):
    def backward(self, dY): return dY * 2e-10 * self.X

class Tinier:
    def __init__(self): self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        self.X = X; return 1e-13 * X ** 2
    def backward(self, dY): return dY * 1e-13 * self.X   # BUG: a directional test passes it vacuously
"""


def _tiny():
    ns = {}
    exec(TINY, ns)  # noqa: S102 - the test's own layer source
    return ns


@pytest.mark.parametrize("mode", ["fast", "full", "sample"])
def test_a_x2_bug_in_gradients_below_atol_fails_at_their_own_scale(mode):
    ns = _tiny()
    res = check_layer(ns["Tiny"](), (8, 5), twin=None, mode=mode)
    assert not res.passed and res.failing_tensors == ["dX"]
    c = res.records[0].comparisons[0]
    assert c.atol < 1e-15  # 1e-9 of |dX| <= 4e-10, not the 1e-9 floor that passes anything
    assert any("own scale" in n for n in res.notes), res.notes
    ok = check_layer(ns["TinyOK"](), (8, 5), twin=None, mode=mode)
    assert ok.passed, ok.notes


def test_a_directional_test_below_atol_is_not_a_pass():
    res = check_layer(_tiny()["Tinier"](), (8, 5), twin=None, mode="fast")
    assert not res.passed and res.failing_tensors == ["dX"]


def test_cli_tiny_gradients_fail_and_never_say_directional_failed_then_pass(tmp_path):
    f = write(tmp_path, TINY)
    p = run_here("check", f"{f}::Tiny", "--input-shape", "8,5")
    out = flat(p)
    assert p.returncode == 1, out
    assert "FAIL: Tiny: gradient mismatch in dX" in out and "0.5 times the correct gradient" in out  # 1e-10 * X for 2e-10 * X
    assert "own scale" in out
    ok = run_here("check", f"{f}::TinyOK", "--input-shape", "8,5")
    out = flat(ok)
    assert ok.returncode == 0, out
    assert not ("directional test failed" in out and "PASS" in out), out


# --------------------------------------------------------------------------- D5: scalar parameters

PRELU = """
import numpy as np

def make(init, right=False):
    class P:
        def __init__(self):
            self.alpha = init()
        def forward(self, X, training=False):
            self.X = X; return np.where(X > 0, X, self.alpha * X)
        def backward(self, dY):
            self.dalpha = np.sum(dY * np.where(self.X > 0, 0.0, self.X if right else 1.0))  # BUG unless right
            return dY * np.where(self.X > 0, 1.0, self.alpha)
    return P

PReLUFloat = make(lambda: 0.25)
PReLUNp64 = make(lambda: np.float64(0.25))
PReLU0d = make(lambda: np.array(0.25))
PReLU1 = make(lambda: np.array([0.25]))
OKFloat = make(lambda: 0.25, right=True)
OKNp64 = make(lambda: np.float64(0.25), right=True)
OK0d = make(lambda: np.array(0.25), right=True)
OK1 = make(lambda: np.array([0.25]), right=True)

class OKFloatKeepsType(OKFloat):
    def forward(self, X, training=False):
        assert type(self.alpha) is float, type(self.alpha)  # perturbed by setting the attribute
        return super().forward(X, training)

class LeakyReLU:  # a float hyperparameter, no gradient: not a parameter
    def __init__(self, alpha=0.1):
        self.alpha = alpha
    def forward(self, X, training=False):
        self.X = X; return np.where(X > 0, X, self.alpha * X)
    def backward(self, dY):
        return dY * np.where(self.X > 0, 1.0, self.alpha)
"""


@pytest.mark.parametrize("cls", ["PReLUFloat", "PReLUNp64", "PReLU0d", "PReLU1"])
def test_a_scalar_parameter_with_a_wrong_gradient_fails(tmp_path, cls):
    f = write(tmp_path, PRELU)
    p = run_here("check", f"{f}::{cls}", "--input-shape", "8,5")
    out = flat(p)
    assert p.returncode == 1, out
    assert f"FAIL: {cls}: gradient mismatch in dalpha" in out
    assert "backward computes no dalpha" not in out and "no parameters" not in out


@pytest.mark.parametrize("cls", ["OKFloat", "OKNp64", "OK0d", "OK1", "OKFloatKeepsType"])
def test_a_scalar_parameter_with_the_right_gradient_passes_and_is_checked(tmp_path, cls):
    f = write(tmp_path, PRELU)
    p = run_here("check", f"{f}::{cls}", "--input-shape", "8,5", "--mode", "full")
    out = flat(p)
    assert p.returncode == 0, out
    assert "protocol: attribute style (alpha/dalpha" in out
    assert f"PASS: {cls}: every gradient (dX, dalpha) matches" in out
    assert "backward computes no dalpha" not in out


def test_a_float_hyperparameter_without_gradient_is_not_a_parameter(tmp_path):
    f = write(tmp_path, PRELU)
    p = run_here("check", f"{f}::LeakyReLU", "--input-shape", "8,5")
    out = flat(p)
    assert p.returncode == 0, out
    assert "no parameters" in out and "WARNING" not in out and "note: alpha" not in out


def test_scalar_parameter_in_process_through_the_adapter():
    from gradcheck import _adapters as AD

    ns = {}
    exec(PRELU, ns)  # noqa: S102 - the test's own layer source
    X = np.random.default_rng(0).standard_normal((8, 5))
    layer, info = AD.adapt(ns["OKFloat"](), [X])
    assert info["protocol"] == "attribute" and list(layer.params) == ["alpha"]
    buf = layer.params["alpha"]
    assert buf.shape == () and buf.dtype == np.float64
    buf[...] = 0.5  # the check perturbs the buffer in place
    layer.forward(X)
    assert type(layer.obj.alpha) is float and layer.obj.alpha == 0.5
    layer.backward(np.ones((8, 5)))
    g = layer.grads["alpha"]
    assert isinstance(g, np.ndarray) and g.shape == () and float(g) == pytest.approx(float(np.sum(np.minimum(X, 0))))
    assert check_layer(layer, X, twin=None, mode="full").passed
    bad, _ = AD.adapt(ns["PReLUFloat"](), [X])
    res = check_layer(bad, X, twin=None, mode="full")
    assert not res.passed and res.failing_tensors == ["dalpha"]


DICT_NUMBER = """
import numpy as np

def make(init, right=True):
    class P:
        def __init__(self):
            self.params = {"alpha": init()}
            self.grads = {"alpha": 0.0}
        def forward(self, X, training=False):
            assert type(self.params["alpha"]) is type(init()), type(self.params["alpha"])  # kept a number
            self.X = X; return np.where(X > 0, X, self.params["alpha"] * X)
        def backward(self, dY):
            self.grads["alpha"] = float(np.sum(dY * np.where(self.X > 0, 0.0, self.X if right else 1.0)))
            return dY * np.where(self.X > 0, 1.0, self.params["alpha"])
    return P

DictFloat = make(lambda: 0.25)
DictNp64 = make(lambda: np.float64(0.25))
DictFloatBug = make(lambda: 0.25, right=False)

class Net:  # a sub-layer whose params dict holds a number
    def __init__(self, right=True):
        self.act = (DictFloat if right else DictFloatBug)()
        self.W = np.linspace(-1.0, 1.0, 25).reshape(5, 5)
    def forward(self, X, training=False):
        self.X = X; return self.act.forward(X @ self.W)
    def backward(self, dY):
        dZ = self.act.backward(dY)
        self.dW = self.X.T @ dZ
        return dZ @ self.W.T

class NetBug(Net):
    def __init__(self):
        super().__init__(right=False)
"""


@pytest.mark.parametrize("cls", ["DictFloat", "DictNp64"])
def test_a_number_in_the_params_dict_is_checked_as_a_number_parameter(tmp_path, cls):
    """Before: exit 3, "params['alpha'] must be a numpy float array; got float"."""
    f = write(tmp_path, DICT_NUMBER)
    p = run_here("check", f"{f}::{cls}", "--input-shape", "8,5", "--mode", "full")
    out = flat(p)
    assert p.returncode == 0, out
    assert "protocol: manualprop (params/grads dicts; params['alpha'] a number, set in params)" in out
    assert f"PASS: {cls}: every gradient (dX, dalpha) matches" in out


def test_a_wrong_gradient_of_a_number_in_the_params_dict_fails(tmp_path):
    f = write(tmp_path, DICT_NUMBER)
    p = run_here("check", f"{f}::DictFloatBug", "--input-shape", "8,5")
    out = flat(p)
    assert p.returncode == 1, out
    assert "FAIL: DictFloatBug: gradient mismatch in dalpha" in out


@pytest.mark.parametrize("cls, code", [("Net", 0), ("NetBug", 1)])
def test_a_number_in_a_sub_layers_params_dict_is_checked_under_its_dotted_name(tmp_path, cls, code):
    f = write(tmp_path, DICT_NUMBER)
    p = run_here("check", f"{f}::{cls}", "--input-shape", "8,5", "--mode", "full")
    out = flat(p)
    assert p.returncode == code, out
    assert "sub-layers act (P: act.alpha, params/grads dicts)" in out
    assert (f"PASS: {cls}: every gradient (dX, dW, dact.alpha) matches" in out if code == 0 else
            f"FAIL: {cls}: gradient mismatch in dact.alpha" in out)


def test_a_number_in_the_params_dict_in_process_through_the_adapter():
    from gradcheck import _adapters as AD

    ns = {}
    exec(DICT_NUMBER, ns)  # noqa: S102 - the test's own layer source
    X = np.random.default_rng(0).standard_normal((8, 5))
    layer, info = AD.adapt(ns["DictFloat"](), [X])
    assert info["protocol"] == "manualprop" and list(layer.params) == ["alpha"]
    buf = layer.params["alpha"]
    assert buf.shape == () and buf.dtype == np.float64
    buf[...] = 0.5  # the check perturbs the buffer in place
    layer.forward(X)
    assert type(layer.obj.params["alpha"]) is float and layer.obj.params["alpha"] == 0.5
    layer.backward(np.ones((8, 5)))
    g = layer.grads["alpha"]
    assert isinstance(g, np.ndarray) and g.shape == () and float(g) == pytest.approx(float(np.sum(np.minimum(X, 0))))
    assert check_layer(layer, X, twin=None, mode="full").passed
    bad, _ = AD.adapt(ns["DictFloatBug"](), [X])
    res = check_layer(bad, X, twin=None, mode="full")
    assert not res.passed and res.failing_tensors == ["dalpha"]


# --------------------------------------------------------------------------- D3: a loss writing into y_pred or its cache

LOSSES = """
import numpy as np

class CELoss:
    def forward(self, y_true, y_pred):
        y_pred -= y_pred.max(axis=1, keepdims=True)      # writes into the caller's logits
        lp = y_pred - np.log(np.exp(y_pred).sum(1, keepdims=True))
        self.p = np.exp(lp); self.y = y_true; N = len(y_true)
        return float(-lp[np.arange(N), y_true].mean())
    def backward(self):
        N = len(self.y); d = self.p.copy(); d[np.arange(N), self.y] -= 1; return d / N

class CacheCE(CELoss):
    def forward(self, y_true, y_pred):
        return super().forward(y_true, y_pred.copy())
    def backward(self):
        N = len(self.y); d = self.p; d[np.arange(N), self.y] -= 1; return d / N   # writes into the cache

class GoodCE(CELoss):
    def forward(self, y_true, y_pred):
        return super().forward(y_true, y_pred.copy())
"""


def test_cli_loss_writing_into_y_pred_is_a_wrong_result_as_for_a_layer(tmp_path):
    f = write(tmp_path, LOSSES)
    p = run("check", f"{f}::CELoss", "--loss", "--input-shape", "8,5", "--targets", "labels")
    out = flat(p)
    assert p.returncode == 1, out
    assert "CELoss.forward modified its input y_pred in place" in out and "PASS" not in out
    assert "y_pred - y_pred.max(axis=1, keepdims=True) rather than y_pred -=" in out  # a loss's (verify41 L1)
    assert "np.maximum(X, 0)" not in out  # not a ReLU's
    ok = run("check", f"{f}::GoodCE", "--loss", "--input-shape", "8,5", "--targets", "labels")
    assert ok.returncode == 0, flat(ok)


def test_cli_loss_writing_into_its_cache_is_checked_and_named_as_for_a_layer(tmp_path):
    """Session 26: a write into an array forward made (the softmax self.p) was refused (exit 3); each backward follows
    its own forward, so the verdict stands (PASS: the gradient is right) and the note says a second backward after
    the same forward gives another answer."""
    f = write(tmp_path, LOSSES)
    p = run_here("check", f"{f}::CacheCE", "--loss", "--input-shape", "8,5", "--targets", "labels")
    out = flat(p)
    assert p.returncode == 0, out
    assert "CacheCE.backward modified its cache (self.p, element [" in out and "copy before writing" in out
    assert "a second backward after the same forward gives another answer (max difference" in out, out
    mutant = "assignments/linear_relu_ce/mutants/cache_mutated/layers.py"
    p = run_here("check", f"{mutant}::SoftmaxCrossEntropy", "--loss", "--input-shape", "8,5", "--targets", "labels")
    assert p.returncode == 0 and "modified its cache (self.p" in flat(p), flat(p)


def test_check_loss_in_process_sees_both_writes():
    from gradcheck import check_layer, check_loss
    from gradcheck.errors import InputModifiedError, StudentCodeError

    ns = {}
    exec(LOSSES, ns)  # noqa: S102 - the test's own loss source
    rng = np.random.default_rng(0)
    y, z = rng.integers(0, 5, 8), rng.standard_normal((8, 5))
    with pytest.raises(InputModifiedError, match="CELoss.forward modified its input y_pred in place"):
        check_loss(ns["CELoss"](), y, z, twin=None)
    # session 26, as gradcheck check (one rule, sources.cache_write_verdict): a write into an array forward made (the
    # softmax self.p) is checked, the gradient right, and named in a note; a write into the caller's array is refused
    res = check_loss(ns["CacheCE"](), y, z, twin=None)
    assert res.passed and len([n for n in res.notes if n.startswith("CacheCE.backward modified its cache (self.p, "
                                                                     "element [") and "the verdict does not rest on it" in n]) == 1
    assert check_loss(ns["GoodCE"](), y, z, twin=None).passed
    assert not any("modified its cache" in n for n in check_loss(ns["GoodCE"](), y, z, twin=None).notes)
    ns2 = {}
    exec(INX_LAYERS, ns2)  # noqa: S102 - the test's own layer source
    X = rng.standard_normal((4, 3))
    with pytest.raises(StudentCodeError, match=r"InX.backward modified its cache \(self.X, element \["):
        check_layer(ns2["InX"](), X, twin=None)
    res = check_layer(ns2["OwnY"](), X, twin=None)
    assert res.passed and any(n.startswith("OwnY.backward modified its cache (self.Y, element [") for n in res.notes)


#: a layer writing into the input its forward cached (the caller's array), and one writing into the output it made
INX_LAYERS = """
import numpy as np


class InX:
    def forward(self, X, training=False):
        self.X = X
        return np.maximum(X, 0)

    def backward(self, dY):
        self.X[self.X < 0] = 0.0
        return dY * (self.X > 0)


class OwnY:
    def forward(self, X, training=False):
        self.Y = np.tanh(X)
        return self.Y

    def backward(self, dY):
        d = self.Y
        d **= 2
        d *= -1
        d += 1
        return dY * d
"""


def test_grade_costs_a_loss_writing_into_y_pred_as_a_layer_writing_into_x(tmp_path):
    """In the grader a forward that writes into its input raises InputModifiedError (a wrong result),
    for a loss as for a layer, so the test that calls it earns nothing."""
    from gradcheck.errors import InputModifiedError
    from gradcheck.grading import checks
    from gradcheck.sandbox import Sandbox
    from manualprop import ReLU, SoftmaxCrossEntropy

    f = write(tmp_path, LOSSES + INX_RELU)
    rng = np.random.default_rng(1)
    y, z = rng.integers(0, 4, 8), rng.standard_normal((8, 4))
    with Sandbox({"losses.py": str(f)}) as sb:
        with pytest.raises(InputModifiedError, match="ReLUX.forward modified its input X"):
            checks.layer_forward(sb.load_layer("losses.py", "ReLUX"), z, ReLU())
        with pytest.raises(InputModifiedError, match="CELoss.forward modified its input y_pred"):
            checks.loss_value(sb.load_loss("losses.py", "CELoss"), y, z, SoftmaxCrossEntropy())
        assert checks.loss_gradient(sb.load_loss("losses.py", "GoodCE"), y, z, SoftmaxCrossEntropy()).passed


INX_RELU = """
class ReLUX:
    def __init__(self): self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        X[X < 0] = 0; self.X = X.copy(); return X   # writes into the caller's X
    def backward(self, dY):
        return dY * (self.X > 0)
"""


# --------------------------------------------------------------------------- D4: sub-layers, lazy build

SUBLAYERS = '''import numpy as np


class Linear:  # params/grads dicts
    def __init__(self, i, o, rng, bug=False):
        self.params = {"W": rng.standard_normal((o, i)) * 0.5, "b": np.zeros(o)}
        self.grads, self.bug = {}, bug

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.mean(0) if self.bug else dY.sum(0)
        return dY @ self.params["W"]


class Dense:  # attribute style, weights (in, out)
    def __init__(self, i, o, rng, bug=False, grads=True):
        self.W, self.b, self.bug, self.grads_on = rng.standard_normal((i, o)) * 0.5, np.zeros(o), bug, grads

    def forward(self, X, training=False):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        if self.grads_on:
            self.dW = self.X.T @ dY * (2 if self.bug else 1)
            self.db = dY.sum(0)
        return dY @ self.W.T


class Tanh:
    def forward(self, X, training=False):
        self.Y = np.tanh(X)
        return self.Y

    def backward(self, dY):
        return dY * (1 - self.Y ** 2)


class Net:
    """sub-layers as attributes, a list and a dict, in both styles"""

    def __init__(self, rng=None, bug=None, grads=True):
        rng = np.random.default_rng(rng)
        self.l1 = Linear(5, 4, rng, bug == "l1")
        self.blocks = [Tanh(), Dense(4, 4, rng, bug == "blocks", grads)]
        self.heads = {"out": Dense(4, 3, rng, bug == "heads")}

    def forward(self, X, training=False):
        h = self.blocks[1].forward(self.blocks[0].forward(self.l1.forward(X)))
        return self.heads["out"].forward(h)

    def backward(self, dY):
        d = self.heads["out"].backward(dY)
        return self.l1.backward(self.blocks[0].backward(self.blocks[1].backward(d)))


class NetL1Bug(Net):
    def __init__(self, rng=None):
        super().__init__(rng, "l1")


class NetBlocksBug(Net):
    def __init__(self, rng=None):
        super().__init__(rng, "blocks")


class NetHeadsBug(Net):
    def __init__(self, rng=None):
        super().__init__(rng, "heads")


class Outer:
    """a sub-layer inside a sub-layer"""

    def __init__(self, rng=None):
        self.inner = Net(rng)

    def forward(self, X, training=False):
        return self.inner.forward(X)

    def backward(self, dY):
        return self.inner.backward(dY)


class NoGradSub:
    """a sub-layer whose backward sets no gradient (seed style): named in a WARNING"""

    def __init__(self, rng=None):
        rng = np.random.default_rng(rng)
        self.act, self.lin = Tanh(), Dense(5, 3, rng, grads=False)

    def forward(self, X, training=False):
        return self.lin.forward(self.act.forward(X))

    def backward(self, dY):
        return self.act.backward(self.lin.backward(dY))


class DictMissing:
    """its own params dict holds none of its sub-layers' weights: named in a WARNING"""

    def __init__(self, rng=None):
        rng = np.random.default_rng(rng)
        self.params, self.grads = {}, {}
        self.lin = Linear(5, 3, rng)

    def forward(self, X, training=False):
        return self.lin.forward(X)

    def backward(self, dY):
        return self.lin.backward(dY)


class LazyLinear:
    """Keras-style: weights created on the first forward (in_features inferred)"""
    def __init__(self, out_features=3, rng=None, bug=True):
        self.out = out_features; self.rng = np.random.default_rng(rng); self.params = {}; self.grads = {}
        self.bug = bug
    def forward(self, X, training=False):
        if not self.params:
            self.params["W"] = self.rng.standard_normal((self.out, X.shape[1])); self.params["b"] = np.zeros(self.out)
        self.X = X; return X @ self.params["W"].T + self.params["b"]
    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X * (2 if self.bug else 1)   # BUG unless bug=False
        self.grads["b"] = dY.sum(0)
        return dY @ self.params["W"]


class LazyAttr:
    def __init__(self, out_features=3, rng=None, bug=True):
        self.out = out_features; self.rng = np.random.default_rng(rng); self.W = None; self.bug = bug
    def forward(self, X, training=False):
        if self.W is None:
            self.W = self.rng.standard_normal((X.shape[1], self.out))
        self.X = X; return X @ self.W
    def backward(self, dY):
        self.dW = self.X.T @ dY * (2 if self.bug else 1)   # BUG unless bug=False
        return dY @ self.W.T


class LazyMLP:
    """lazy sub-layers"""
    def __init__(self, rng=None):
        self.layers = [LazyLinear(4, rng, bug=False), Tanh(), LazyAttr(3, rng, bug=False)]
    def forward(self, X, training=False):
        for layer in self.layers:
            X = layer.forward(X)
        return X
    def backward(self, dY):
        for layer in reversed(self.layers):
            dY = layer.backward(dY)
        return dY
'''


@pytest.fixture(scope="module")
def sub_file(tmp_path_factory):
    return write(tmp_path_factory.mktemp("sub"), SUBLAYERS)


def test_sub_layer_parameters_are_checked_under_dotted_names(sub_file):
    p = run_here("check", f"{sub_file}::Net", "--input-shape", "8,5")
    out = flat(p)
    assert p.returncode == 0, out
    assert ("protocol: a layer made of sub-layers: l1 (Linear: l1.W, l1.b, params/grads dicts), blocks.0 (Tanh: "
            "no parameters), blocks.1 (Dense: blocks.1.W, blocks.1.b, attributes), heads.out (Dense: heads.out.W, "
            "heads.out.b, attributes)") in out
    assert ("PASS: Net: every gradient (dX, dl1.W, dl1.b, dblocks.1.W, dblocks.1.b, dheads.out.W, dheads.out.b) "
            "matches") in out


@pytest.mark.parametrize("cls, tensor, words", [
    ("NetL1Bug", "dl1.b", "dl1.b is the mean over the batch, not the sum"),
    ("NetBlocksBug", "dblocks.1.W", "dblocks.1.W is 2 times the correct gradient"),
    ("NetHeadsBug", "dheads.out.W", "dheads.out.W is 2 times")])
def test_a_bug_in_a_sub_layer_fails_and_is_named(sub_file, cls, tensor, words):
    p = run_here("check", f"{sub_file}::{cls}", "--input-shape", "8,5")
    out = flat(p)
    assert p.returncode == 1, out
    assert f"FAIL: {cls}: gradient mismatch in {tensor}." in out and words in out


MLP = '''
import numpy as np
class Linear:
    def __init__(self, i, o, rng):
        self.params = {"W": rng.standard_normal((o, i)) * 0.5, "b": np.zeros(o)}; self.grads = {}
    def forward(self, X, training=False):
        self.X = X; return X @ self.params["W"].T + self.params["b"]
    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.mean(0)          # BUG in the sub-layer's db
        return dY @ self.params["W"]
class Tanh:
    def __init__(self): self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        self.Y = np.tanh(X); return self.Y
    def backward(self, dY): return dY * (1 - self.Y ** 2)
class MLP:
    """a student's two-layer network: sub-layers as attributes"""
    def __init__(self, rng=None):
        rng = np.random.default_rng(rng)
        self.l1, self.act, self.l2 = Linear(5, 4, rng), Tanh(), Linear(4, 3, rng)
    def forward(self, X, training=False):
        return self.l2.forward(self.act.forward(self.l1.forward(X)))
    def backward(self, dY):
        return self.l1.backward(self.act.backward(self.l2.backward(dY)))
class MLPList:
    """sub-layers in a list"""
    def __init__(self, rng=None):
        rng = np.random.default_rng(rng)
        self.layers = [Linear(5, 4, rng), Tanh(), Linear(4, 3, rng)]
    def forward(self, X, training=False):
        for l in self.layers: X = l.forward(X)
        return X
    def backward(self, dY):
        for l in reversed(self.layers): dY = l.backward(dY)
        return dY
'''


def test_the_testers_mlp_repros_fail(tmp_path):
    f = write(tmp_path, MLP)
    p = run_here("check", f"{f}::MLP", "--input-shape", "8,5")
    assert p.returncode == 1 and "gradient mismatch in dl1.b, dl2.b" in flat(p), flat(p)
    p = run_here("check", f"{f}::MLPList", "--input-shape", "8,5")
    assert p.returncode == 1 and "gradient mismatch in dlayers.0.b, dlayers.2.b" in flat(p), flat(p)


def test_a_sub_layer_of_a_sub_layer(sub_file):
    p = run_here("check", f"{sub_file}::Outer", "--input-shape", "8,5", "--mode", "full")
    out = flat(p)
    assert p.returncode == 0, out
    assert "dinner.l1.W, dinner.l1.b, dinner.blocks.1.W, dinner.blocks.1.b, dinner.heads.out.W" in out


def test_sub_layer_arrays_the_checker_cannot_check_are_named_in_a_warning(sub_file):
    p = run_here("check", f"{sub_file}::NoGradSub", "--input-shape", "8,5")
    out = flat(p)
    assert "WARNING: forward uses the sub-layer arrays lin.W, lin.b, whose backward sets no gradient" in out, out
    assert p.returncode == 0 and "(lin.W, lin.b: no gradient checked, see above)" in out
    p = run_here("check", f"{sub_file}::DictMissing", "--input-shape", "8,5")
    out = flat(p)
    assert "WARNING: forward uses the array attributes lin.W, lin.b, not in params" in out, out


@pytest.mark.parametrize("cls, header", [
    ("LazyLinear", "protocol: manualprop (params/grads dicts) (created by the first forward, then checked: W, b)"),
    ("LazyAttr", "protocol: attribute style (W/dW), weights (in, out) (created by the first forward, then "
                 "checked: W)")])
def test_parameters_built_in_the_first_forward_are_checked(sub_file, cls, header):
    p = run_here("check", f"{sub_file}::{cls}", "--input-shape", "8,5")
    out = flat(p)
    assert p.returncode == 1, out
    assert header in out and f"FAIL: {cls}: gradient mismatch in dW." in out and "dW is 2 times" in out


def test_lazy_sub_layers_are_built_and_checked(sub_file):
    p = run_here("check", f"{sub_file}::LazyMLP", "--input-shape", "8,5", "--mode", "full")
    out = flat(p)
    assert p.returncode == 0, out
    assert "every gradient (dX, dlayers.0.W, dlayers.0.b, dlayers.2.W) matches" in out
    assert "created by the first forward, then checked: layers.0.W, layers.0.b, layers.2.W" in out


def test_sub_layers_in_process_perturb_the_sub_layers_arrays():
    from gradcheck import _adapters as AD

    ns = {}
    exec(SUBLAYERS, ns)  # noqa: S102 - the test's own layer source
    X = np.random.default_rng(0).standard_normal((8, 5))
    net = ns["Net"](0)
    layer, info = AD.adapt(net, [X])
    assert list(layer.params) == ["l1.W", "l1.b", "blocks.1.W", "blocks.1.b", "heads.out.W", "heads.out.b"]
    assert layer.params["l1.W"] is net.l1.params["W"] and layer.params["blocks.1.W"] is net.blocks[1].W
    res = check_layer(layer, X, twin=None, mode="full")
    assert res.passed and [r.tensor for r in res.records] == ["dX", "dl1.W", "dl1.b", "dblocks.1.W", "dblocks.1.b",
                                                              "dheads.out.W", "dheads.out.b"]
    bad, _ = AD.adapt(ns["NetBlocksBug"](0), [X])
    assert check_layer(bad, X, twin=None, mode="full").failing_tensors == ["dblocks.1.W"]
