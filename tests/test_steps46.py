"""steps46 (issue 10, verdicts you can trust): at inputs far from zero the step ``eps |x|`` is far above the scale a
function varies on; a suspected kink is tried at smaller steps before it is excused.

``exp(x - c)`` at ``x = c + N(0, 1)``, ``c = 1e7``: ``h = 60``, one-sided differences ``e^60`` apart at ``h``, ``h/2``,
``h/4``; every entry was excused as a kink and a backward 1% (0.1%) too large PASSed, in full and fast mode. Real kinks
(ReLU, abs at 0, at offset inputs too) keep their one-sided differences apart at every step and stay kinks. The true
gradient is HIPS autograd's."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

from gradcheck import check_layer
from gradcheck.compare import sides_agree_at


class _Shifted:
    """``f(X - c)`` with a backward ``factor`` times HIPS autograd's VJP (``factor`` 1: right)."""

    def __init__(self, f, c, factor=1.0):
        self.f, self.c, self.factor, self.params, self.grads = f, c, factor, {}, {}

    def forward(self, X, training=False):
        self.X = X.copy()
        return np.asarray(self.f(X - self.c))

    def backward(self, dY):
        return self.factor * grad(lambda X: anp.sum(self.f(X - self.c) * dY))(self.X)


def _x(c, shape=(4, 5)):
    return np.random.default_rng(0).standard_normal(shape) + c


@pytest.mark.parametrize("c, mode", [(1e7, "full"), (1e7, "fast"), (-1e7, "fast"), (1e8, "full"), (1e8, "fast")])
@pytest.mark.parametrize("factor", [1.01, 1.001])
def test_a_slightly_wrong_exp_far_from_zero_fails_not_excused_as_kinks(c, mode, factor):
    res = check_layer(_Shifted(anp.exp, c, factor), _x(c), twin=None, seed=0, mode=mode)
    assert not res.passed and res.failing_tensors == ["dX"] and res.kinks == {}, res.table()


@pytest.mark.parametrize("c, mode", [(1e7, "full"), (1e8, "full"), (-1e7, "full"), (1e8, "fast")])
def test_a_right_exp_far_from_zero_passes_without_kinks(c, mode):
    """In fast mode at 1e8 the directional test's step, ``|z|`` times an entry's, overflowed ``exp`` (an error for a
    right layer): every element is checked instead, as in full mode."""
    res = check_layer(_Shifted(anp.exp, c), _x(c), twin=None, seed=0, mode=mode)
    assert res.passed and res.kinks == {} and not res.unchecked, res.table()


@pytest.mark.parametrize("f, name", [(lambda z: anp.where(z > 0, z, 0.0), "relu"), (lambda z: anp.where(z >= 0, z, -z),
                                                                                     "abs")])
def test_kinks_at_zero_far_from_zero_stay_kinks(f, name):
    """The entries exactly at the kink, ``x = c``, keep one-sided differences 1 and 0 (ReLU, whose backward gives 0
    there) or 1 and -1 (abs, 1 there) at every step, the central difference 0.5 or 0: excused as kinks, and a wrong
    backward elsewhere still FAILs. The others are no kinks: the step of 60 crossed 0, a step below 1 does not (all
    20 entries were excused before)."""
    c = 1e7
    X = _x(c)
    X[0, :3] = c
    res = check_layer(_Shifted(f, c), X.copy(), twin=None, seed=0, mode="full")
    assert res.passed and res.kinks == {"dX": [(0, 0), (0, 1), (0, 2)]}, res.table()
    assert not check_layer(_Shifted(f, c, 1.01), X.copy(), twin=None, seed=0, mode="full").passed


def test_sides_agree_at_tells_a_kink_from_a_step_above_the_function_scale():
    x, h = np.array([0.3, -1.2]), 60.0  # exp(x) at h = 60 (x = 1e7 + N(0, 1)); relu at 0 in the second

    def sides(f, live):
        t = f * h
        exp = ((np.exp(x + t) - np.exp(x)) / t, (np.exp(x) - np.exp(x - t)) / t)
        relu = (np.full(2, 1.0), np.zeros(2))
        return np.array([exp[0][0], relu[0][1]]), np.array([exp[1][0], relu[1][1]])

    at = sides_agree_at(sides, 1e-7, 1e-18, np.array([True, True]))
    assert 1e-5 < at[0] * h < 1e-1 and np.isnan(at[1])  # exp's agree to 1% below a step of 0.1; relu's never


_SAMPLED = '''
import numpy as np
C = 1e7
class _B:
    def __init__(self):
        self.params = {"b": C + np.r_[0.0, 1.0, -0.3, 0.6]}  # b[0] at ReLU's kink
        self.grads = {}
class ExpRight(_B):
    def forward(self, X, training=False): self.Y = np.exp(X + (self.params["b"] - C)); return self.Y
    def backward(self, dY): self.grads["b"] = (dY * self.Y).sum(0); return dY * self.Y
class ExpWrong(ExpRight):
    def backward(self, dY): self.grads["b"] = (1.01 * dY * self.Y).sum(0); return dY * self.Y
class Relu(_B):
    def forward(self, X, training=False): self.Z = 0.0 * X + (self.params["b"] - C); return np.maximum(self.Z, 0.0)
    def backward(self, dY): self.grads["b"] = (dY * (self.Z > 0)).sum(0); return 0 * dY
'''


@pytest.mark.parametrize("name, code", [("ExpRight", 0), ("Relu", 0), ("ExpWrong", 1)])
def test_sample_mode_probe_excuses_a_step_too_large_not_a_wrong_parameter(tmp_path, name, code):
    """verify46c F4: a parameter near 1e7 (every entry sampled and matching); the diagnosis' directional probe, at the
    step ``eps |b|``, disagreed, and the entries' one-sided differences agree at a smaller step (no kink): the right
    layers FAILed "wrong outside the sampled entries". Its central difference at that smaller step decides now."""
    from gradcheck.cli import main
    (tmp_path / "layers.py").write_text(_SAMPLED)
    assert main(["check", f"{tmp_path / 'layers.py'}::{name}", "--input-shape", "3,4", "--mode", "sample"]) == code
