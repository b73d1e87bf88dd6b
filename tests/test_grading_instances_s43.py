"""redteam43 F2: layers whose instances share state (a mutable class attribute) scored 28 / 28 on linear_relu_ce:
every test built one instance at a time. ``grade.instances_apart`` uses two instances in a network's order; the hidden
random-shape tests of Linear and ReLU end with it. In process (tests/test_grading_hidden_inputs' harness); the same
submissions through ``gradcheck grade`` in the sandbox score 27, 27 and 27.5 / 28 (docs/gradescope.md)."""

import numpy as np
import pytest

import manualprop as mp
from gradcheck.grading.checks import GradingTestError, instances_apart
from tests.test_grading_hidden_inputs import LRC, _submission, score

LINEAR_INIT = ('        self.params = {"W": rng.uniform(-k, k, size=(out_features, in_features)),\n'
               '                       "b": rng.uniform(-k, k, size=out_features)}\n'
               '        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}\n')
# params, grads = {}, {} in the class body, filled by __init__: every Linear holds the last one's weights
SHARED_PARAMS = (LINEAR_INIT, '        self.params.update({"W": rng.uniform(-k, k, size=(out_features, in_features)),\n'
                 '                            "b": rng.uniform(-k, k, size=out_features)})\n')
CLASS_DICTS = ("class Linear:\n", "class Linear:\n    params, grads = {}, {}\n")
SHARED_X = ("        self.X = X\n        return X @", "        Linear.X = X\n        return X @")
SHARED_MASK = ("        self.mask = X > 0\n", "        ReLU.mask = X > 0\n")

BUGS = {"shared_params": (LRC.test_hidden_linear_random_shapes, [CLASS_DICTS, SHARED_PARAMS]),
        "shared_cache": (LRC.test_hidden_linear_random_shapes, [SHARED_X]),
        "shared_mask": (LRC.test_hidden_relu_random_shapes, [SHARED_MASK])}


@pytest.mark.parametrize("name", sorted(BUGS))
@pytest.mark.parametrize("seed", [0, 3])
def test_state_shared_by_instances_loses_the_instances_part(name, seed):
    test, edits = BUGS[name]
    bug, solution = _submission("linear_relu_ce", name, *edits), _submission("linear_relu_ce", "solution")
    assert score(test, solution, seed) == 1.0
    assert score(test, bug, seed) == pytest.approx(1 - 1 / 4)  # before: 1 (each trial built one instance)


def _shared_relu():
    class Shared:  # a ReLU whose mask lives on the class
        def __init__(self):
            self.params, self.grads = {}, {}

        def forward(self, X, training=False):
            Shared.X = X
            return np.maximum(X, 0.0)

        def backward(self, dY):
            return dY * (Shared.X > 0)
    return Shared


def test_instances_apart_names_the_sharing():
    Shared = _shared_relu()
    X = np.array([[1.0, -2.0], [-3.0, 4.0], [5.0, 6.0]])
    verdict = instances_apart([Shared(), Shared()], X, [mp.ReLU(), mp.ReLU()])
    assert not verdict.passed
    part = verdict.parts[0]
    assert part.name == "instances apart" and "share state" in part.message and "Shared.X = X" in part.message
    assert "the first instance's dX" in part.message
    assert instances_apart([mp.ReLU(), mp.ReLU()], X, [mp.ReLU(), mp.ReLU()]).passed


def test_a_layer_wrong_alone_is_not_said_to_share():
    class Doubled:
        def __init__(self):
            self.params, self.grads = {}, {}

        def forward(self, X, training=False):
            self.X = X
            return np.maximum(X, 0.0)

        def backward(self, dY):
            return 2 * dY * (self.X > 0)
    verdict = instances_apart([Doubled(), Doubled()], np.array([[1.0, -2.0], [-3.0, 4.0]]), [mp.ReLU(), mp.ReLU()])
    part = verdict.parts[0]
    assert not part.passed and part.points == 0.0 and "share state" not in part.message
    assert "not judged: the first instance is wrong used alone" in part.message


def test_a_mutant_wrong_alone_keeps_its_score():
    """A layer wrong alone loses what the trials charge and nothing more: the db-mean mutant's hidden score is 2/3, as
    before the check was added (the hostile batch's and the mutants' scores stand)."""
    bug = _submission("linear_relu_ce", "db_mean", ("self.grads[\"b\"] = dY.sum(axis=0)",
                                                    "self.grads[\"b\"] = dY.mean(axis=0)"))
    assert score(LRC.test_hidden_linear_random_shapes, bug, 0) == pytest.approx(2 / 3)


def test_instances_apart_takes_two_of_each():
    with pytest.raises(GradingTestError, match="two layers and two references"):
        instances_apart([mp.ReLU()], np.ones((2, 2)), [mp.ReLU(), mp.ReLU()])
