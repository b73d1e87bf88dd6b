"""False PASSes a new-user tester found in `gradcheck check` (session 6): gradients below the
absolute tolerance (D10), scalar parameters in attribute style (D5), a loss that writes into
y_pred or its cache (D3), parameters of sub-layers and parameters built in the first forward (D4).

Each case is the tester's repro, run through the installed console script as the tester did, or
in process through ``check_layer``.
"""

import numpy as np
import pytest
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
    p = run("check", f"{f}::Tiny", "--input-shape", "8,5")
    out = flat(p)
    assert p.returncode == 1, out
    assert "FAIL: Tiny: gradient mismatch in dX" in out and "0.5 times the correct gradient" in out  # 1e-10 * X for 2e-10 * X
    assert "own scale" in out
    ok = run("check", f"{f}::TinyOK", "--input-shape", "8,5")
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
    p = run("check", f"{f}::{cls}", "--input-shape", "8,5")
    out = flat(p)
    assert p.returncode == 1, out
    assert f"FAIL: {cls}: gradient mismatch in dalpha" in out
    assert "backward computes no dalpha" not in out and "no parameters" not in out


@pytest.mark.parametrize("cls", ["OKFloat", "OKNp64", "OK0d", "OK1", "OKFloatKeepsType"])
def test_a_scalar_parameter_with_the_right_gradient_passes_and_is_checked(tmp_path, cls):
    f = write(tmp_path, PRELU)
    p = run("check", f"{f}::{cls}", "--input-shape", "8,5", "--mode", "full")
    out = flat(p)
    assert p.returncode == 0, out
    assert "protocol: attribute style (alpha/dalpha" in out
    assert f"PASS: {cls}: every gradient (dX, dalpha) matches" in out
    assert "backward computes no dalpha" not in out


def test_a_float_hyperparameter_without_gradient_is_not_a_parameter(tmp_path):
    f = write(tmp_path, PRELU)
    p = run("check", f"{f}::LeakyReLU", "--input-shape", "8,5")
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
    ok = run("check", f"{f}::GoodCE", "--loss", "--input-shape", "8,5", "--targets", "labels")
    assert ok.returncode == 0, flat(ok)


def test_cli_loss_writing_into_its_cache_exits_3_as_for_a_layer(tmp_path):
    f = write(tmp_path, LOSSES)
    p = run("check", f"{f}::CacheCE", "--loss", "--input-shape", "8,5", "--targets", "labels")
    out = flat(p)
    assert p.returncode == 3, out
    assert "CacheCE.backward modified its cache (self.p, element [" in out and "copy before writing" in out
    mutant = "assignments/linear_relu_ce/mutants/cache_mutated/layers.py"
    p = run("check", f"{mutant}::SoftmaxCrossEntropy", "--loss", "--input-shape", "8,5", "--targets", "labels")
    assert p.returncode == 3 and "modified its cache (self.p" in flat(p), flat(p)


def test_check_loss_in_process_sees_both_writes():
    from gradcheck import check_loss
    from gradcheck.errors import InputModifiedError, StudentCodeError

    ns = {}
    exec(LOSSES, ns)  # noqa: S102 - the test's own loss source
    rng = np.random.default_rng(0)
    y, z = rng.integers(0, 5, 8), rng.standard_normal((8, 5))
    with pytest.raises(InputModifiedError, match="CELoss.forward modified its input y_pred in place"):
        check_loss(ns["CELoss"](), y, z, twin=None)
    with pytest.raises(StudentCodeError, match=r"CacheCE.backward modified its cache \(self.p"):
        check_loss(ns["CacheCE"](), y, z, twin=None)
    assert check_loss(ns["GoodCE"](), y, z, twin=None).passed


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

