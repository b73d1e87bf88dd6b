"""newuser23 H1: the default atol is the round-off over the step actually taken, and an atol that passes any gradient
of a tensor's size is NOT CHECKED, never a PASS (CLI and Python alike).

Before: ``default_atol`` divided by ``eps`` while an element moves by ``eps max(1, |x|)``, so at X ~ 1e14 N(0, 1) the
atol was ~1e14 times too large and a Linear whose dX had the wrong sign passed; and ``y = 3x + 3e14`` with
``dX = -3 dY`` passed with a WARNING (atol=18.8 above every |dX| <= 4.13)."""

import re

import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck import check_layer
from gradcheck.compare import default_atol, swamped_by
from gradcheck.numerical import step_sizes


class Offset:
    """y = 3x + 3e14: the step cannot move the output measurably; backward's sign is ``sign``."""

    def __init__(self, sign=-1.0):
        self.params, self.grads, self.sign = {}, {}, sign

    def forward(self, X, training=False):
        return 3.0 * X + 3e14

    def backward(self, dY):
        return self.sign * 3.0 * dY


class Linear:
    """X @ W.T + b with dX scaled by ``f`` (-1: the wrong sign)."""

    def __init__(self, f):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((3, 5)), "b": rng.standard_normal(3)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.f = f

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(0)
        return self.f * (dY @ self.params["W"])


def test_default_atol_is_over_the_smallest_step_taken():
    Y, G = np.full(10, 1e14), np.ones(10)
    x = np.array([1e14, -2e13, 0.5])
    u = float(np.finfo(np.float64).eps)
    assert default_atol(Y, G, 1e-5, steps=step_sizes(x, 1e-5)) == pytest.approx(u * 1e15 / 1e-5)  # |x| = 0.5: h = eps
    big = step_sizes(x[:2], 1e-5)  # |x| >= 2e13: h = 2e13 eps
    assert default_atol(Y, G, 1e-5, steps=big) == pytest.approx(u * 1e15 / (2e13 * 1e-5))
    assert default_atol(Y, G, 1e-5, "richardson", steps=big) == pytest.approx(2 * u * 1e15 / (2e13 * 1e-5))
    assert default_atol(Y, G, 1e-5) == pytest.approx(u * 1e15 / 1e-5)  # no steps: h = eps (a directional test)


def test_swamped_by():
    assert swamped_by(19.0, [np.array([3.0, -4.13]), np.array([[1.0]])]) == (True, 4.13)
    assert swamped_by(1.0, [np.array([3.0, -4.13])]) == (False, 4.13)
    vacuous, top = swamped_by(1.0, [np.array([])])
    assert not vacuous and np.isnan(top)


@pytest.mark.parametrize("mode", ["fast", "full"])
def test_a_sign_flipped_dX_at_huge_inputs_fails(mode):
    X = np.random.default_rng(1).standard_normal((8, 5)) * 1e14
    res = check_layer(Linear(-1.0), X, twin=None, mode=mode)
    assert not res.passed and "dX" in res.failing_tensors, res.table()
    c = res.records[0].get("manual-vs-numerical")
    assert c.atol < 1e-3 and c.max_rel_error == pytest.approx(1.0), res.table()
    ok = check_layer(Linear(1.0), X, twin=None, mode=mode)  # the right one: dX checked and within tolerance
    assert "dX" not in ok.failing_tensors and "dX" not in ok.unchecked, ok.table()


@pytest.mark.parametrize("mode", ["fast", "full"])
@pytest.mark.parametrize("sign", [-1.0, 1.0])
def test_an_offset_the_step_cannot_move_is_not_checked(mode, sign):
    X = np.random.default_rng(0).standard_normal((4, 3))
    res = check_layer(Offset(sign), X, twin=None, mode=mode)
    assert not res.passed and res.unchecked == ["dX"] and res.failing_tensors == [], res.table()
    assert res.atol_of("dX") > 4.0  # above every |dX| (3 |G|, at most 4.13)
    table = res.table()
    assert "NOT CHECKED" in table.splitlines()[2], table
    assert "would pass any gradient of that size" in " ".join(table.split()), table


def test_cli_offset_is_not_checked_exit_3(tmp_path):
    f = student(tmp_path, """
        class Offset:
            def __init__(self):
                self.params = {}; self.grads = {}
            def forward(self, X, training=False):
                return 3.0 * X + 3e14
            def backward(self, dY):
                return -3.0 * dY
        """)
    for mode in ("fast", "full"):
        p = run_here("check", f"{f}::Offset", "--input-shape", "4,3", "--mode", mode)
        text = both(p)
        assert p.returncode == 3, text
        assert "NOT CHECKED: Offset: the finite differences cannot tell dX from any gradient" in text, text
        assert "PASS" not in text, text
        # one number for the largest |dX| (was "swamps |dX| <= 3.91" beside "at most 4.13")
        tops = set(re.findall(r"\|dX\|(?: <=| \(at most) ([0-9.]+)", text))
        assert len(tops) == 1, (tops, text)
