"""redteam43 F2: layers whose instances share state (a mutable class attribute) scored 28 / 28 on linear_relu_ce:
every test built one instance at a time. ``grade.instances_apart`` uses two instances in a network's order; the hidden
random-shape tests of Linear and ReLU end with it. In process (tests/test_grading_hidden_inputs' harness); the same
submissions through ``gradcheck grade`` in the sandbox score 27, 27 and 27.5 / 28 (docs/gradescope.md)."""

import numpy as np
import pytest

import manualprop as mp
from gradcheck.grading.checks import GradingTestError, instances_apart
from tests.test_grading_hidden_inputs import LRC, ROOT, _submission, score

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


CLASS_GRADS = ("        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}\n", "")


def test_a_grads_dict_on_the_class_is_seen_in_the_sandbox(tmp_path):
    """verify43c F5: the sandbox's proxy kept each backward's own copy of grads, so a grads dict on the class (both
    instances write one) scored 28 / 28 in the sandbox: the grads are read in the child after both backwards."""
    from gradcheck.sandbox import Sandbox

    text = (ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py").read_text()
    assert text.count(CLASS_GRADS[0]) == 1
    text = text.replace(CLASS_GRADS[0], "").replace("class Linear:\n", "class Linear:\n    grads = {}\n", 1)
    (tmp_path / "layers.py").write_text(text)
    X = np.random.default_rng(0).standard_normal((6, 4))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=10) as sb:
        a, b = (sb.load_layer("layers.py", "Linear", {"in_features": 4, "out_features": 3}) for _ in range(2))
        verdict = instances_apart([a, b], X, [mp.Linear(4, 3), mp.Linear(4, 3)])
    assert not verdict.passed and "share state" in verdict.parts[0].message, verdict.parts[0].message


def test_a_module_level_stack_of_caches_is_right():
    """verify43c F10: backwards run last to first, as a network runs them: a module-level stack of inputs (pushed in
    forward, popped in backward), right in any network, passes."""
    stack = []

    class Stacked(mp.Linear):
        def forward(self, X, training=False):
            stack.append(X)
            return X @ self.params["W"].T + self.params["b"]

        def backward(self, dY):
            X = stack.pop()
            self.grads["W"], self.grads["b"] = dY.T @ X, dY.sum(axis=0)
            return dY @ self.params["W"]
    X = np.random.default_rng(1).standard_normal((5, 4))
    assert instances_apart([Stacked(4, 3), Stacked(4, 3)], X, [mp.Linear(4, 3), mp.Linear(4, 3)]).passed
