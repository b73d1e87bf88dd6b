"""review30 leftover (session 31): a one-element output has one upstream number G, drawn negative; a backward that
keeps one sign of dY (``np.minimum(dY, 0)``) gave the right numbers there and PASSed in check, diagnose and grade.
Backward is linear in dY: each route runs it again at -G (``gradcheck.sources.one_sign_only``)."""

import numpy as np
import pytest
from test_scalar_output_sign_v30 import (
    SumSq,  # Y = sum(X**2); SumSq(wrong): backward passes dY through wrong
)

from gradcheck import check_layer, diagnose_layer
from gradcheck._kernel import probe_rng, upstream_draw
from gradcheck.grading.checks import layer_gradients


def KEEP_NEGATIVE(g):
    return np.minimum(g, 0)


class ScaledSum:
    """Y = sum(X * w) for a weight w of one entry; backward's dw keeps the negative dY only."""

    def __init__(self, bug=True):
        self.params, self.grads, self.bug = {"w": np.array([1.5])}, {}, bug

    def forward(self, X, training=False):
        self.X = X
        return np.sum(X * self.params["w"])

    def backward(self, dY):
        self.grads["w"] = np.array([(np.minimum(dY, 0) if self.bug else dY) * np.sum(self.X)])
        return dY * self.params["w"] * np.ones_like(self.X)


def test_g_of_one_entry_is_negative_at_these_seeds():  # the bug's cover: np.minimum(G, 0) is G itself
    assert all(float(upstream_draw(probe_rng(s), ())) < 0 for s in range(6))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_check_layer_fails_a_backward_keeping_one_sign_of_dy(seed):
    assert check_layer(SumSq(), (4, 3), seed=seed).passed
    res = check_layer(SumSq(KEEP_NEGATIVE), (4, 3), seed=seed)
    assert not res.passed and res.failing_tensors == ["dX"]
    c = next(r for r in res.records if r.tensor == "dX").get("call1-vs-call2")
    assert c is not None and not c.passed and c.worst_b == 0.0  # the second backward (dY > 0) gives 0 everywhere
    assert c.max_rel_error == 1.0 and c.n_compared == 12
    assert any(n.startswith("dX is not linear in dY: the output is one number") for n in res.notes)


def test_check_layer_names_a_parameter_gradient_keeping_one_sign():
    res = check_layer(ScaledSum(), (4, 3))
    assert res.failing_tensors == ["dw"]
    assert check_layer(ScaledSum(bug=False), (4, 3)).passed


def test_diagnose_names_the_bug_not_linear():
    d = diagnose_layer(SumSq(KEEP_NEGATIVE), (4, 3))
    assert not d.passed and d.codes[0] == "not-linear"
    assert d.errors[0].message == "backward is not linear in dY: backward(-2 dY) is not -2 backward(dY) for dX"
    assert diagnose_layer(SumSq(), (4, 3)).passed


def test_grading_fails_the_part_with_the_same_sentence():
    X = np.random.default_rng(5).standard_normal((4, 3))
    assert layer_gradients(SumSq(), X, SumSq()).passed
    v = layer_gradients(SumSq(KEEP_NEGATIVE), X, SumSq())
    (p,) = v.parts
    G = float(upstream_draw(probe_rng(0), ()))
    assert not p.passed and p.message.startswith(
        f"dX is not linear in dY: the output is one number, so backward ran for dY = {G:.6g} and again for dY = "
        f"{-G:.6g}, and dX was not -1 times the first")


def test_one_sign_only_values_and_a_penalty_term_exempt():
    from gradcheck.sources import one_sign_only

    X = np.arange(1.0, 4.0)
    G = np.array(-0.5)
    found = one_sign_only(lambda g: {"dX": np.minimum(g, 0) * X}, G, {"dX": -0.5 * X}, 1e-6, 1e-9)
    note, other = found["dX"]
    np.testing.assert_array_equal(other, np.zeros(3))
    assert "dX[0]: -0.5, then 0)" in note
    # a term without dY: backward(G) + backward(-G) = 2 backward(0), judged apart (the penalty's route)
    assert one_sign_only(lambda g: {"dW": g * X + 7.0}, G, {"dW": -0.5 * X + 7.0}, 1e-6, 1e-9) == {}
    assert one_sign_only(lambda g: {"dX": g * X}, G, {"dX": -0.5 * X}, 1e-6, 1e-9) == {}
    # more than one entry: not run (the comparison at G sees a sign-keeping backward)
    assert one_sign_only(lambda g: 1 / 0, np.array([-0.5, 1.0]), {"dX": X}, 1e-6, 1e-9) == {}
