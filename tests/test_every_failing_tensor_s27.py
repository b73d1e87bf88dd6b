"""verify26 (session 26, left): on CMU 11-785's BatchNorm1d in eval mode, ``gradcheck check`` reported the shape FAIL
of dgamma/dbeta ((C,) for (1, C)) and stopped, so dX's eval-mode bug (backward uses the training formula) was not
mentioned, though it was named before the shape rule. As PyTorch's gradcheck and pytest do, a check reports every
failing tensor: a gradient of the wrong shape no longer stops the comparison of the others; a (C,) for a (1, C) is
compared reshaped and said right or wrong. ``gradcheck check``, ``check_layer`` and the grader give one verdict."""

import numpy as np
import pytest

from gradcheck import check_layer
from gradcheck.errors import GradientShapeError
from gradcheck.grading.checks import layer_gradients
from gradcheck.sandbox import Sandbox
from manualprop import Linear
from tests.test_cli import run_here

#: CMU 11-785 HW1's BatchNorm1d as published (dLdBW, dLdBb summed without keepdims: (C,) for (1, C)), whose
#: backward uses the training-mode formula whatever the mode (right in training mode, wrong in eval mode)
CMU_BN = '''
import numpy as np


class BatchNorm1d:
    def __init__(self, num_features, alpha=0.9):
        self.alpha, self.eps = alpha, 1e-8
        self.BW = np.ones((1, num_features))
        self.Bb = np.zeros((1, num_features))
        self.dLdBW = np.zeros((1, num_features))
        self.dLdBb = np.zeros((1, num_features))
        self.running_M = np.zeros((1, num_features))
        self.running_V = np.ones((1, num_features))

    def forward(self, Z, eval=False):
        self.Z, self.N = Z, Z.shape[0]
        self.M, self.V = np.mean(Z, axis=0), np.var(Z, axis=0)
        if eval == False:
            self.NZ = (self.Z - self.M) / np.sqrt(self.eps + self.V)
            self.running_M = self.alpha * self.running_M + (1 - self.alpha) * self.M
            self.running_V = self.alpha * self.running_V + (1 - self.alpha) * self.V
        else:
            self.NZ = (Z - self.running_M) / np.sqrt(self.eps + self.running_V)
        self.BZ = self.NZ * self.BW + self.Bb
        return self.BZ

    def backward(self, dLdBZ):
        self.dLdBW = np.sum(dLdBZ * self.NZ, axis=0)
        self.dLdBb = np.sum(dLdBZ, axis=0)
        dLdNZ = dLdBZ * self.BW
        dLdV = np.sum(dLdNZ * (self.Z - self.M) * (-0.5) * (self.eps + self.V) ** -1.5, axis=0)
        dLdM = np.sum(dLdNZ * (-1 / np.sqrt(self.eps + self.V)), axis=0)
        return dLdNZ / np.sqrt(self.eps + self.V) + dLdV * 2 * (self.Z - self.M) / self.N + dLdM / self.N
'''


class BiasRowDx2:
    """A Linear whose b is (1, out) and db (out,) (a keepdims too few: values right), and dX twice too large."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((3, 5)), "b": rng.standard_normal((1, 3))}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": dY.T @ self.X, "b": dY.sum(axis=0)}
        return 2 * dY @ self.params["W"]


class TransposedDwDx2(BiasRowDx2):
    """dW transposed ((5, 3) for (3, 5): no reshape gives it) and dX twice too large; db right."""

    def __init__(self):
        super().__init__()
        self.params["b"] = self.params["b"][0]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "b": dY.sum(axis=0)}
        return 2 * dY @ self.params["W"]


def test_check_layer_reports_a_wrong_shape_and_the_other_tensors_wrong_values_together():
    with pytest.raises(GradientShapeError) as info:
        check_layer(BiasRowDx2(), (8, 5), twin=None)
    exc, text = info.value, " ".join(str(info.value).split())
    assert "gave db with shape (3,); expected shape (1, 3)" in text  # the shape, as before
    assert "dX (the right shape) is wrong too: max relative error 3.33e-01 > rtol 1e-06" in text  # |2g-g|/|3g|
    assert "db's values, reshaped to (1, 3), are right" in text and "dW (the right shape) matches" in text
    assert exc.wrong_shapes == ["db"] and exc.result.failing_tensors == ["dX"]
    got = exc.result.gradients
    assert np.allclose(got["manual"]["dX"], 2 * got["numerical"]["dX"], rtol=1e-6)  # the values compared, not stubs


def test_a_shape_no_reshape_explains_is_reported_beside_the_other_wrong_values():
    with pytest.raises(GradientShapeError) as info:
        check_layer(TransposedDwDx2(), (8, 5), twin=None)
    text = " ".join(str(info.value).split())
    assert "gave dW with shape (5, 3)" in text and "dX (the right shape) is wrong too" in text
    assert "db (the right shape) matches central differences" in text
    assert info.value.wrong_shapes == ["dW"] and [r.tensor for r in info.value.result.records] == ["dX", "db"]


def test_gradcheck_check_names_dx_eval_mode_bug_beside_cmu_batchnorms_shapes(tmp_path):
    (tmp_path / "batchnorm.py").write_text(CMU_BN)
    p = run_here("check", tmp_path / "batchnorm.py::BatchNorm1d", "--input-shape", "8,4", "--init",
                 '{"num_features": 4}', "--eval")
    out = " ".join(p.stdout.split())
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAIL: BatchNorm1d: gradient mismatch in dX; wrong shape of dBW, dBb." in out, out
    assert "dBW has shape (4,), expected (1, 4), the shape of BW: values right, shape wrong" in out
    # dX's own bug, named as it is once the shapes are fixed (the eval-mode forward, the training formula)
    assert "dX is the gradient of the training-mode forward (eval='False'), but this forward ran in eval mode" in out
    assert "dBW (1, 4)" in out and "FAIL (values right, shape wrong)" in out  # every tensor in the table
    fixed = CMU_BN.replace("axis=0)\n        self.dLdBb = np.sum(dLdBZ, axis=0)",
                           "axis=0, keepdims=True)\n        self.dLdBb = np.sum(dLdBZ, axis=0, keepdims=True)")
    assert fixed != CMU_BN
    (tmp_path / "batchnorm.py").write_text(fixed)  # the shapes fixed: the same sentence on dX alone
    p = run_here("check", tmp_path / "batchnorm.py::BatchNorm1d", "--input-shape", "8,4", "--init",
                 '{"num_features": 4}', "--eval")
    out = " ".join(p.stdout.split())
    assert p.returncode == 1 and "FAIL: BatchNorm1d: gradient mismatch in dX." in out
    assert "dX is the gradient of the training-mode forward (eval='False'), but this forward ran in eval mode" in out


LINEAR_2B = '''
import numpy as np


class Linear:
    def __init__(self):
        self.params = {"W": np.full((3, 5), 0.3), "b": np.zeros(3)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + 2 * self.params["b"]

    def backward(self, dY):
        self.grads["W"], self.grads["b"] = dY.T @ self.X, dY.sum(axis=0)
        return (dY @ self.params["W"])[:, :4]
'''


def test_the_grader_reads_the_same_result_beside_a_gradient_of_the_wrong_shape(tmp_path):
    """A forward adding b twice (db matches the reference, central differences find it wrong) beside a dX of the
    wrong shape: the grader fails db with the check's own figures, as without the shape (it confirmed db along one
    random direction, "the numerical check stopped on another part")."""
    (tmp_path / "hw.py").write_text(LINEAR_2B)
    X = np.random.default_rng(0).standard_normal((8, 5))
    with Sandbox(files={"hw.py": str(tmp_path / "hw.py")}, timeout=30) as sb:
        v = layer_gradients(sb.load_layer("hw.py", "Linear"), X, Linear(5, 3), seed=2,
                            parts={"dX": 2, "dW": 2, "db": 2})
    parts = {p.name: p for p in v.parts}
    assert v.fraction == pytest.approx(1 / 3) and parts["dW"].passed and not parts["dX"].passed
    assert "db disagrees with central differences" in parts["db"].message
    assert "max relative error 3.33e-01 > 1e-06" in parts["db"].message  # 2 db against db: |2-1|/3
    assert "stopped on another part" not in parts["db"].message
