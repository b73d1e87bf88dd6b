"""Session 10 (issue 10; verify9 V11a, X8): what makes central differences of a float64 forward noise is
named for what it is. A softmax with its exp in float32 was read as elements "at a kink" and numerical
noise; np.round in forward was blamed on float32; a float16 cast was called float32; astype('f') got the
noise advice. Now the precision probe (:func:`gradcheck.diagnose._precision_inside`) runs before the
signatures whenever the check fails or excused elements as kinks, and tells float32 round-off, a float16
cast and a rounding to a grid apart; a bug far above that noise is still named beside it."""

import numpy as np
import pytest
from buggy_layers import diagnose
from buggy_layers.linear import LinearInOut

import manualprop as mp
from gradcheck.diagnose import _f64, _precision_inside, diagnose_layer

SOFTEXP32 = '''import numpy as np


class SoftExp32:
    """softmax with np.exp(..., dtype=np.float32)"""
    def forward(self, X, training=False):
        e = np.exp(X - X.max(1, keepdims=True), dtype=np.float32).astype(np.float64)
        self.Y = e / e.sum(1, keepdims=True)
        return self.Y

    def backward(self, dY):
        return self.Y * (dY - (dY * self.Y).sum(1, keepdims=True))
'''


def test_cli_softmax_with_float32_exp_is_float32_inside_not_a_kink(tmp_path):
    """verify9 V11a, its own repro and command: was exit 1 with "3 element(s) at a kink" and the noise diagnosis."""
    from test_cli import both, run

    f = tmp_path / "f32v.py"
    f.write_text(SOFTEXP32)
    p = run("check", f"{f}::SoftExp32", "--input-shape", "3,3")
    t = both(p)
    assert p.returncode == 1, t
    diagnosis = t.split("diagnosis:")[1]
    assert "forward loses precision inside for a float64 input" in diagnosis, t
    assert "so part of forward runs in float32" in diagnosis, t
    assert "numerical estimate's own uncertainty" not in diagnosis, t
    assert "at a kink (one-sided differences disagree and the manual value lies between them" not in t, t
    assert "are no kink but float32 round-off inside forward" in t, t


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("key, code", [("softmax.py::SoftmaxExpFloat32", "float32-inside"),
                                       ("linear.py::LinearAstypeF", "float32-inside"),
                                       ("linear.py::LinearHalf", "float16-inside"),
                                       ("linear.py::LinearRound", "piecewise-constant")])
def test_precision_named_for_what_it_is(key, code, seed):
    d = diagnose(key, seed=seed)
    assert d.codes == [code], d.report()
    s = d.sentence()
    assert "no gradient can be checked to 1e-6 and no bug in backward is named or ruled out" in s, s
    if code != "float32-inside":  # a float16 cast or a rounding is not float32
        assert "runs in float32" not in s and "astype(np.float32)" not in s, s
    if code == "float16-inside":
        assert "forward casts its inputs and parameters to float16" in s and "no astype(np.float16)" in s, s
    if code == "piecewise-constant":
        assert "forward is piecewise constant at the check's step (np.round, np.floor" in s, s


class LinearF32MeanBias(LinearInOut):
    """verify9's F32BugDb: float32 inside AND a db mean bug; the three findings used to contradict each other."""

    def forward(self, X, training=False):
        self.X = X
        W = self.params["W"].astype(np.float32)
        return (X.astype(np.float32) @ W).astype(np.float64) + self.params["b"]

    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["b"] = dY.mean(0)  # BUG: the mean, not the sum
        return dX


def test_a_bug_far_above_the_noise_is_named_beside_it():
    d = diagnose_layer(LinearF32MeanBias(), (6, 4), name="L")
    assert d.codes == ["bias-mean", "float32-inside"], d.report()
    s = d.sentence()
    assert "no bug besides the one named in db (far above this noise) is named or ruled out" in s, s
    assert "no bug in backward is named or ruled out" not in s, s
    assert "numerical estimate's own uncertainty" not in s, s


def test_a_real_kink_stays_a_kink():
    """The probe now runs on a passing check with kinks too: a float64 ReLU at its kink names nothing."""
    X = np.array([[1e-4, -2.0, 3.0], [0.5, -1.0, 2.0]])
    d = diagnose_layer(mp.ReLU(), X, eps=5e-3, mode="full", name="ReLU")
    assert d.passed and d.result.kinks == {"dX": [(0, 0)]}, d.report()
    assert "(1 element(s) at a kink excluded)" in d.sentence()
    assert _precision_inside(_f64(mp.ReLU(), False), [X], {}) is None
