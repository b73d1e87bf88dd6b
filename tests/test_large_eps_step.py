"""newuser23 M4: a correct layer is never FAILed because of the user's step, nor given kinks on a smooth function.

``gradcheck check my_layer.py::Tanh --eps 1`` (a correct tanh) was exit 1 with a ``kinks 7`` column while its own
diagnosis said the mismatch came from the step. Now the step's truncation error (Richardson, from ``h``, ``h/2``,
``h/4``) covering every failing element gives NOT CHECKED (exit 3) naming the step; a tanh 0.1% too large at
eps=0.1 still FAILs (tests/test_large_eps_kinks.py keeps 0.1%, 0.3% and 1%)."""

import numpy as np
import pytest
from test_cli import both, run_here, student
from test_large_eps_kinks import ScaledTanh

from gradcheck import check_layer
from gradcheck.compare import smooth_mask, step_covered

X = np.random.default_rng(0).standard_normal((3, 4))


@pytest.mark.parametrize("mode", ["fast", "full"])
@pytest.mark.parametrize("eps", [1.0, 0.5])
def test_a_right_tanh_at_a_huge_eps_is_not_checked_and_has_no_kinks(mode, eps):
    res = check_layer(ScaledTanh(1.0), X, twin=None, eps=eps, mode=mode)
    assert res.kinks == {}, res.table()
    assert not res.passed and res.failing_tensors == [] and res.unchecked == ["dX"], res.table()
    assert res.records[0].get("manual-vs-numerical").unchecked == "step"


@pytest.mark.parametrize("factor", [1.001, 1.003])
def test_a_wrong_tanh_at_eps_0_1_still_fails(factor):
    res = check_layer(ScaledTanh(factor), X, twin=None, eps=0.1, mode="full")
    assert res.failing_tensors == ["dX"] and res.unchecked == [], res.table()


def test_a_wrong_tanh_at_eps_1_is_not_a_pass():
    res = check_layer(ScaledTanh(1.5), X, twin=None, eps=1.0, mode="full")
    assert res.failing_tensors == ["dX"], res.table()


def test_step_covered_and_the_extrapolated_jump():
    x = np.random.default_rng(1).standard_normal(500) * 1.5
    d = 1 - np.tanh(x) ** 2

    def C(h):
        return (np.tanh(x + h) - np.tanh(x - h)) / (2 * h)

    for h in (1.0, 0.5, 0.1):
        assert step_covered(d, C(h), C(h / 2), C(h / 4)).all()
    assert not step_covered(1.001 * d, C(0.1), C(0.05), C(0.025)).all()

    def sides(t):
        return (np.tanh(x + t) - np.tanh(x)) / t, (np.tanh(x) - np.tanh(x - t)) / t
    assert smooth_mask(*sides(1.0), [sides(0.5), sides(0.25)]).all()  # tanh at h = 1: no kink
    relu = [(1.0, 1e-4 / t) for t in (5e-3, 2.5e-3, 1.25e-3)]  # C28: still a kink
    assert not smooth_mask(np.array(relu[0][0]), np.array(relu[0][1]), relu[1:])


def test_cli_right_tanh_at_eps_1_exits_3_naming_the_step(tmp_path):
    f = student(tmp_path, """
        import numpy as np
        class Tanh:
            def __init__(self):
                self.params = {}; self.grads = {}
            def forward(self, X, training=False):
                self.Y = np.tanh(X); return self.Y
            def backward(self, dY):
                return dY * (1 - self.Y**2)
        """)
    p = run_here("check", f"{f}::Tanh", "--input-shape", "3,4", "--eps", "1")
    text = both(p)
    assert p.returncode == 3, text
    assert "NOT CHECKED: Tanh: dX differs from central differences at eps=1 only within their truncation" in text
    assert "kinks" not in text and "FAIL" not in text, text
