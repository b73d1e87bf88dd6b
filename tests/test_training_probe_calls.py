"""Session 13 (chkspeed, issue 10): the training-mode probe of ``check_layer`` (a layer whose forward takes
``training``) reuses the eval check's output, gradients and dY: one training forward and one backward, not
the eval and training forwards again plus two backwards (which made the fast mode 10.7 ms on the benchmark's
Conv2D instead of about 7). The verdicts stay: the same gradients keep eval's verdict; a backward that
branches on the mode still gets the training check (Z13). Counted calls, not times."""

import numpy as np

from gradcheck import check_layer
from gradcheck.sources import SAME_BACKWARD_CHECKED, SAME_IN_BOTH_MODES, SAME_Y_OTHER_BACKWARD


class Scale:
    """Y = 2 X in both modes; backward counts its calls and, with ``bug``, is wrong in training mode only."""

    def __init__(self, bug=False):
        self.params, self.grads, self.bug = {}, {}, bug
        self.calls = {"forward": {False: 0, True: 0}, "backward": 0, "fortran": []}

    def forward(self, X, training=False):
        if _fortran(X):  # the check's memory-layout rerun (gradcheck._layout): counted apart
            self.calls["fortran"].append(("forward", training))
        else:
            self.calls["forward"][training] += 1
        self.training = training
        return 2.0 * X

    def backward(self, dY):
        if _fortran(dY):
            self.calls["fortran"].append("backward")
        else:
            self.calls["backward"] += 1
        return (3.0 if self.bug and self.training else 2.0) * dY


def _fortran(a):
    return a.flags.f_contiguous and not a.flags.c_contiguous


def test_the_probe_runs_one_training_forward_and_one_backward():
    layer = Scale()
    r = check_layer(layer, (4, 3), twin=None, mode="fast")
    assert r.passed and r.other_modes == []
    assert r.notes[-1] == SAME_IN_BOTH_MODES + SAME_BACKWARD_CHECKED
    assert layer.calls["forward"][True] == 1
    assert layer.calls["backward"] == 2  # the eval check's and the probe's
    assert layer.calls["fortran"] == [("forward", False), "backward"]  # the eval check's layout rerun, once


def test_a_backward_wrong_in_training_mode_only_is_still_checked_and_fails():
    layer = Scale(bug=True)
    r = check_layer(layer, (4, 3), twin=None, mode="fast")
    assert not r.passed and r.training is True
    assert [m.training for m in r.other_modes] == [False] and r.other_modes[0].passed
    assert SAME_Y_OTHER_BACKWARD in r.notes
    rec = next(rec for rec in r.records if rec.tensor == "dX")
    assert not rec.passed


def test_the_probe_uses_the_check_s_own_upstream():
    """A dY under which the training branch's gradient equals eval's: the same gradients, one verdict."""
    class Masked(Scale):
        def backward(self, dY):
            g = super().backward(dY)  # counted there
            if self.training:
                g[:, 0] = 5.0 * dY[:, 0]  # wrong, but only where dY is zero
            return g

    G = np.ones((4, 3))
    G[:, 0] = 0.0
    layer = Masked()
    r = check_layer(layer, (4, 3), twin=None, mode="full", upstream=G)
    assert r.passed and r.notes[-1] == SAME_IN_BOTH_MODES + SAME_BACKWARD_CHECKED
    assert layer.calls["backward"] == 2 and layer.calls["fortran"] == [("forward", False), "backward"]
    layer = Masked()
    r = check_layer(layer, (4, 3), twin=None, mode="full")  # a random dY: the branch shows and fails
    assert not r.passed and r.training is True and SAME_Y_OTHER_BACKWARD in r.notes


def test_identical_is_array_equal_with_nan_equal():
    from gradcheck._validation import identical

    a = np.array([1.0, np.nan, -0.0, np.inf])
    assert identical(a, np.array([1.0, np.nan, 0.0, np.inf]))
    assert not identical(a, np.array([1.0, np.nan, 0.0, -np.inf]))
    assert not identical(a, np.array([1.0, 2.0, 0.0, np.inf]))
    assert not identical(a, a[:3])
    assert identical(np.arange(3), np.arange(3)) and not identical(np.arange(3), np.arange(1, 4))


def test_a_backward_writing_nan_into_its_cache_is_still_caught():
    """The cache guard's comparison tries the plain array_equal first: a NaN written in is still a write."""
    from gradcheck._adapters import cache_guard

    class Cached:
        def forward(self, X, training=False):
            self.X = X.copy()
            return X

        def backward(self, dY):
            self.X[0, 0] = np.nan
            return dY

    layer = Cached()
    layer.forward(np.ones((2, 2)))
    after = cache_guard(layer, ["X"])
    layer.backward(np.ones((2, 2)))
    assert "modified its cache (self.X, element [0, 0])" in after()
    layer.forward(np.full((2, 2), np.nan))
    after = cache_guard(layer, ["X"])
    assert after() is None
