"""A loss whose value is NaN off its targets gives no "target-gradient" reading (lines43: a NaN direction was
counted as agreeing, so any backward was named as the target's gradient)."""
import numpy as np

from gradcheck.diagnose import name_target_gradient


def _kl(y_true, y_pred):
    # t log t is undefined for a target moved below 0: NaN along every random direction from a one-hot target
    return float(np.sum(y_true * np.log(y_true) - y_true * np.log(y_pred)) / len(y_pred))


def test_nan_directions_name_nothing():
    t = np.eye(3)[[0, 2, 1, 0]]
    p = np.full((4, 3), 1 / 3)
    with np.errstate(all="ignore"):
        manual = np.arange(12.0).reshape(4, 3)  # neither the target's nor the prediction's gradient
        assert name_target_gradient("dy_pred", manual, -t / p / 4, _kl, t, p) is None


def test_real_target_gradient_still_named():
    t = np.full((4, 3), 0.3) + np.arange(12).reshape(4, 3) * 0.01
    p = np.full((4, 3), 1 / 3)
    dq = (np.log(t) + 1 - np.log(p)) / 4  # dL/dt of the KL above: the bug returns it for dL/dp
    found = name_target_gradient("dy_pred", dq, -t / p / 4, _kl, t, p)
    assert found is not None and found.code == "target-gradient"
