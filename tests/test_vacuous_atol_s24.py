"""review24g: the default atol's NOT CHECKED rule (newuser23 H1) holds for losses and for an atol that is a sizeable
share of a gradient, not only for one above every |value| of a layer's.

Before:

* ``check_loss`` divided the round-off of ``L`` by ``eps`` while ``y_pred`` moves by ``eps max(1, |p|)`` (the layer
  path had been fixed, not this one) and never marked a tensor NOT CHECKED: an MSE whose gradient has the wrong sign
  PASSed at predictions ~1e10 (atol 1.08e10 against |dy_pred| <= 5e9), with no warning at all; ``sum(3 p) + 3e14``
  with a sign-flipped gradient PASSed with atol=11000.6 in ``gradcheck check --loss`` (exit 0).
* ``y = 3x + 5e13`` with ``dX = 4.5 dY`` (1.5 times the gradient) PASSed ``gradcheck check`` (exit 0): the grown step
  left atol=2.7, 47% of the largest |dX|, and only a WARNING said so.
"""

import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck import check_layer, check_loss
from gradcheck.compare import VACUOUS, swamped_by


class MSE:
    """mean((p - y)^2), its gradient times ``sign``."""

    def __init__(self, sign=1.0):
        self.sign = sign

    def forward(self, y_true, y_pred):
        self.d = y_pred - y_true
        return float(np.mean(self.d ** 2))

    def backward(self):
        return self.sign * 2.0 * self.d / self.d.size


class Offset:
    """y = 3x + c, dX = k dY."""

    def __init__(self, c, k):
        self.params, self.grads, self.c, self.k = {}, {}, c, k

    def forward(self, X, training=False):
        return 3.0 * X + self.c

    def backward(self, dY):
        return self.k * dY


@pytest.mark.parametrize("scale", [1e10, 1e14])
def test_a_sign_flipped_loss_gradient_at_large_predictions_fails(scale):
    rng = np.random.default_rng(0)
    yt, yp = rng.standard_normal((4, 3)) * scale, rng.standard_normal((4, 3)) * scale
    bad = check_loss(MSE(-1.0), yt, yp, twin=None)
    assert not bad.passed and bad.failing_tensors == ["dy_pred"], bad.table()
    assert bad.records[-1].get("manual-vs-numerical").max_rel_error == pytest.approx(1.0), bad.table()
    good = check_loss(MSE(1.0), yt, yp, twin=None)
    assert good.passed and good.unchecked == [], good.table()


def test_a_loss_the_step_cannot_move_is_not_checked():
    class Big:
        def __init__(self, sign):
            self.sign = sign

        def forward(self, y_true, y_pred):
            self.p = y_pred
            return float(np.sum(3.0 * y_pred) + 3e14)

        def backward(self):
            return self.sign * 3.0 * np.ones_like(self.p)

    rng = np.random.default_rng(0)
    for sign in (1.0, -1.0):
        res = check_loss(Big(sign), rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), twin=None)
        assert not res.passed and res.unchecked == ["dy_pred"] and res.failing_tensors == [], res.table()
        assert any("NOT CHECKED dy_pred" in n for n in res.notes), res.notes


def test_cli_loss_the_step_cannot_move_is_not_checked_exit_3(tmp_path):
    f = student(tmp_path, """
        import numpy as np

        class Big:
            def forward(self, y_true, y_pred):
                self.p = y_pred
                return float(np.sum(3.0 * y_pred) + 3e14)

            def backward(self):
                return -3.0 * np.ones_like(self.p)
        """)
    p = run_here("check", f"{f}::Big", "--loss", "--input-shape", "4,3")
    text = both(p)
    assert p.returncode == 3, text
    assert "NOT CHECKED: Big: the finite differences cannot tell dy_pred from any gradient" in text, text
    assert "PASS" not in text and "FAIL" not in text, text


def test_swamped_by_a_share():
    assert swamped_by(1.0, [np.array([3.0, -4.13])], share=VACUOUS) == (True, 4.13)
    assert swamped_by(0.04, [np.array([3.0, -4.13])], share=VACUOUS) == (False, 4.13)


@pytest.mark.parametrize("mode", ["fast", "full"])
def test_an_atol_a_sizeable_share_of_the_gradient_is_not_a_pass(mode):
    """At 5e13 the step grows 10000 times and atol is still 47% of the largest |dX|: dX 1.5 times too large was a
    PASS. NOT CHECKED (no verdict) for it and for the right dX; at an ordinary offset both are judged."""
    X = np.random.default_rng(0).standard_normal((4, 3))
    for k in (4.5, 3.0):
        res = check_layer(Offset(5e13, k), X, twin=None, mode=mode)
        assert not res.passed and res.unchecked == ["dX"] and res.failing_tensors == [], res.table()
        c = res.records[0].get("manual-vs-numerical")
        assert c.atol > VACUOUS * 3.0, c
    assert check_layer(Offset(5.0, 3.0), X, twin=None, mode=mode).passed
    assert check_layer(Offset(5.0, 4.5), X, twin=None, mode=mode).failing_tensors == ["dX"]


def test_cli_an_atol_a_sizeable_share_of_the_gradient_exit_3(tmp_path):
    f = student(tmp_path, """
        class Offset:
            def forward(self, X, training=False):
                return 3.0 * X + 5e13

            def backward(self, dY):
                return 4.5 * dY
        """)
    p = run_here("check", f"{f}::Offset", "--input-shape", "4,3")
    text = both(p)
    assert p.returncode == 3, text
    assert "NOT CHECKED: Offset:" in text and "PASS" not in text, text


class TanhOffset:
    """tanh(X) + c, its dX times k."""

    def __init__(self, c, k):
        self.params, self.grads, self.c, self.k = {}, {}, c, k

    def forward(self, X, training=False):
        self.Y = np.tanh(X)
        return self.Y + self.c

    def backward(self, dY):
        return self.k * dY * (1 - self.Y ** 2)


def test_a_tanh_10_percent_wrong_under_a_huge_offset_is_not_a_pass():
    """tanh(X) + 1e12 (8x6, full): atol 0.29 after the step grew; dX 1.1 times the gradient PASSed. At 1e10 (atol
    0.0044, a WARNING) a 1% error still FAILs and the right dX PASSes."""
    X = np.random.default_rng(0).standard_normal((8, 6))
    for k in (1.0, 1.1):
        res = check_layer(TanhOffset(1e12, k), X, twin=None, mode="full")
        assert not res.passed and res.unchecked == ["dX"] and res.failing_tensors == [], res.table()
    assert check_layer(TanhOffset(1e10, 1.01), X, twin=None, mode="full").failing_tensors == ["dX"]
    assert check_layer(TanhOffset(1e10, 1.0), X, twin=None, mode="full").passed
