"""Paths of gradcheck.diagnose that coverage found untested: backward not linear in dY (2 dY), a
second backward that differs, the report of a model's first failing layer, and check_vjp with one
VJP for several inputs, a wrong VJP, an integer input and what it refuses."""

import numpy as np
import pytest

import manualprop as mp
from gradcheck.diagnose import check_vjp, diagnose_layer
from gradcheck.errors import UsageError


class SquaredUpstream:
    """An elementwise layer Y = X**2 whose backward squares dY: zero at dY = 0, but not linear."""

    params: dict = {}
    grads: dict = {}

    def forward(self, X, training=False):
        self.X = X
        return X**2

    def backward(self, dY):
        return 2 * self.X * dY**2  # BUG: dY squared


def test_backward_not_linear_in_dy_is_named():
    d = diagnose_layer(SquaredUpstream(), (4, 3))
    assert not d.passed and d.codes[0] == "not-linear"
    assert d.errors[0].message == ("backward is not linear in dY: backward(2 dY) is not 2 "
                                   "backward(dY) for dX")
    probe = next(p for p in d.probes if p.name == "backward linear in dY")
    assert probe.passed is False and probe.detail == "backward(2 dY) != 2 backward(dY) for dX"


class ScalesByCache:
    """Y = X**2 / 2, dX = dY * X, with a backward that doubles its cached X after reading it: right
    after each forward, wrong on a second backward."""

    params: dict = {}
    grads: dict = {}

    def forward(self, X, training=False):
        self.X = X.copy()
        return X**2 / 2

    def backward(self, dY):
        dX = dY * self.X
        self.X *= 2  # BUG: backward changes its own cache
        return dX


def test_a_write_into_its_own_cache_is_judged_by_checks_rule():
    """Session 26: a backward writing into an array its forward made (here the copy self.X) gets the gradient's
    verdict, as `gradcheck check` and the grader give it (sources.cache_write_verdict, one rule): each backward
    follows its own forward, as in training. Right gradient: passes, no second-backward finding."""
    d = diagnose_layer(ScalesByCache(), (4, 3))
    assert d.passed and "second-backward" not in d.codes, d.codes


class ScalesW:
    """Y = X W with a backward that doubles W after using it: the parameters change, so a second backward
    on the same forward gives another dX (and the next forward another Y)."""

    def __init__(self):
        self.params = {"W": np.ones((3, 2))}
        self.grads = {"W": np.zeros((3, 2))}

    def forward(self, X, training=False):
        self.X = X.copy()
        return X @ self.params["W"]

    def backward(self, dY):
        self.grads["W"][...] = self.X.T @ dY
        dX = dY @ self.params["W"].T
        self.params["W"] *= 2  # BUG: backward changes the parameters
        return dX


def test_second_backward_that_differs_is_named():
    d = diagnose_layer(ScalesW(), (4, 3))
    assert not d.passed and "second-backward" in d.codes
    f = next(f for f in d.errors if f.code == "second-backward")
    assert f.tensor == "dX" and f.message == ("a second backward on the same forward gives another "
                                              "dX: backward changes its own cache or the "
                                              "parameters")
    probe = next(p for p in d.probes if p.name == "second backward identical")
    assert probe.passed is False and probe.detail == "dX changed"


def test_report_shows_the_first_failing_layer():
    class MeanDb(mp.Linear):
        def backward(self, dY):
            dX = super().backward(dY)
            self.grads["b"] = dY.mean(axis=0)  # BUG: the mean, not the sum
            return dX

    model = mp.Sequential(mp.Linear(5, 4, rng=0), mp.Tanh(), MeanDb(4, 3, rng=1))
    d = diagnose_layer(model, (6, 5))
    assert d.sublayer is not None and d.sublayer[0] == 2
    lines = d.report().splitlines()
    at = lines.index("first failing layer: layers[2] = layers[2] MeanDb")
    assert any("db is the mean over the batch, not the sum" in line for line in lines[at:])


def test_check_vjp_with_one_vjp_returning_a_tuple_for_two_inputs():
    x, k = np.linspace(1.0, 2.0, 4), np.linspace(3.0, 4.0, 4)
    assert check_vjp(np.multiply, lambda g, ans, x, k: (g * k, g * x), x, k).passed
    res = check_vjp(np.multiply, lambda g, ans, x, k: (-g * k, g * x), x, k)  # d0's sign wrong
    assert [r.tensor for r in res.records if not r.passed] == ["d0", "<u,J^T v> 0"]
    assert res.notes[0] == ("d0 has the wrong sign: the opposite sign of the correct gradient "
                            "everywhere (a minus sign too many or too few)")


def test_check_vjp_skips_an_integer_input():
    res = check_vjp(np.multiply, [lambda g, ans, x, k: g * k, None], np.linspace(1.0, 2.0, 4),
                    np.arange(1, 5))
    assert res.passed and [r.tensor for r in res.records] == ["d0", "<u,J^T v> 0"]


def test_check_vjp_refuses_what_it_cannot_check():
    with pytest.raises(UsageError, match="autoprop has no primitive 'nope'"):
        check_vjp("nope", None, np.ones(3))
    with pytest.raises(UsageError, match="primitive less is not differentiable"):
        check_vjp("less", None, np.ones(3), np.zeros(3))
    with pytest.raises(UsageError, match="check_vjp needs a vjp"):
        check_vjp(np.tanh, None, np.ones(3))
    with pytest.raises(UsageError, match=r"check_vjp\(negative\): no floating-point input"):
        check_vjp(np.negative, lambda g, ans, x: -g, np.arange(3))
    with pytest.raises(UsageError, match=r"check_vjp\(add\): no input has a VJP to check"):
        check_vjp(np.add, [None, None], np.ones(3), np.ones(3))
