"""A loss function ``huber_loss(x, y, delta=1.0) -> (loss, dx)`` (CS231n's layout, gradcheck._adapters.LossFunction) is
checked again with its float keyword at another value, as a loss class is (gradcheck.sources.each_other_arg; fix37a's
leftover: its dx clipping at 1 where delta is due PASSed at delta = 1.0)."""

import numpy as np

from gradcheck import check_loss
from gradcheck._adapters import LossFunction
from gradcheck.sources import symmetric_args


def huber_loss(x, y, delta=1.0):
    r = x - y
    small = np.abs(r) <= delta
    loss = np.where(small, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta)).mean()
    return loss, np.where(small, r, delta * np.sign(r)) / r.size


def huber_clips_at_1(x, y, delta=1.0):
    loss, _ = huber_loss(x, y, delta)
    r = x - y
    return loss, np.where(np.abs(r) <= 1.0, r, np.sign(r)) / r.size  # BUG: 1 where delta is due


def _data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((4, 3)), 2 * rng.standard_normal((4, 3))


def test_a_loss_functions_delta_1_is_checked_again_at_0_7():
    y, z = _data()
    res = check_loss(LossFunction(huber_clips_at_1), y, z, twin=None, name="huber_clips_at_1")
    assert not res.passed and res.args_failed and res.other_args == [("delta", 1.0, 0.7)], res.notes
    assert res.name == "huber_clips_at_1 [delta=0.7]" and res.failing_tensors == ["dx"], res.name
    assert check_loss(LossFunction(huber_clips_at_1), y, z, twin=None, values=False).passed  # the bug cancels at 1
    res = check_loss(LossFunction(huber_loss), y, z, twin=None)
    assert res.passed and res.notes[-1].endswith("also checked at delta=0.7 (passed)"), res.notes


def test_the_value_as_called_is_its_init_else_its_default():
    assert symmetric_args(LossFunction(huber_loss)) == [("delta", 1.0, 0.7)]
    assert symmetric_args(LossFunction(huber_loss, {"delta": 0.5})) == [("delta", 0.5, 0.3)]
    assert symmetric_args(LossFunction(huber_loss, {"delta": 2.0})) == []  # no value where a bug cancels
