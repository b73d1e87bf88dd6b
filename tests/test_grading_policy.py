"""The staff policy ``gradcheck_no_forward_in_backward`` (issue 11 §2), off by default.

A Linear whose backward is made of central differences of its own forward gives the right
numbers, so no comparison can tell it apart; the sandbox child counts the calls of the layer's
forward made during backward and returns the count with the reply. With the marker the test
fails and says why; without it the same layer passes; an honest backward passes with it.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from gradcheck import check_layer
from gradcheck.errors import StudentCodeError
from gradcheck.grading.runner import grade_submission
from gradcheck.sandbox import Sandbox, SandboxError
from tests.test_grading_keys_s35 import shown

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = (ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py").read_text()
HONEST = '''    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(axis=0)
        return dY @ self.params["W"]
'''
NUMERIC = '''    def backward(self, dY, h=1e-6):
        X = self.X

        def central(arr, at):  # d sum(forward(at) * dY) / d arr, arr perturbed in place
            g = np.zeros_like(arr)
            for i in np.ndindex(arr.shape):
                old = arr[i]
                arr[i] = old + h
                up = np.sum(self.forward(at) * dY)
                arr[i] = old - h
                g[i] = (up - np.sum(self.forward(at) * dY)) / (2 * h)
                arr[i] = old
            return g

        self.grads["W"], self.grads["b"] = central(self.params["W"], X), central(self.params["b"], X)
        Xc = np.array(X, dtype=float)
        dX = central(Xc, Xc)
        self.X = X
        return dX
'''
assert SOLUTION.count(HONEST) == 1
CHEAT = SOLUTION.replace(HONEST, NUMERIC)
INIT = {"in_features": 5, "out_features": 3}

TESTS = '''
import pytest
from manualprop import Linear as RefLinear

@pytest.mark.points(3)
def test_linear_plain(student, grade, rng):
    grade.layer_gradients(student.layer("layers.py", "Linear", in_features=5, out_features=3),
                          rng.standard_normal((4, 5)), RefLinear(5, 3), seed=1)

@pytest.mark.points(4)
@pytest.mark.gradcheck_no_forward_in_backward
def test_linear_derived_by_hand(student, grade, rng):
    grade.layer_gradients(student.layer("layers.py", "Linear", in_features=5, out_features=3),
                          rng.standard_normal((4, 5)), RefLinear(5, 3), seed=1)
'''


def _sandbox(tmp_path, source):
    (tmp_path / "layers.py").write_text(source)
    return Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=10)


def graded(tmp_path, source, tests=TESTS, **options):
    """``source`` as a submission's layers.py graded by ``tests`` (a test file's text): its result and results.json."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(source)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_policy.py").write_text(tests)
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", **{"timeout": 10.0, **options})
    return r, json.loads(Path(r.results_path).read_text())


def test_the_count_is_kept_in_the_child_and_the_policy_is_off_by_default(tmp_path):
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.ones((4, 3))
    with _sandbox(tmp_path, CHEAT) as sb:
        free = sb.load_layer("layers.py", "Linear", INIT)
        assert check_layer(free, X, twin=None).passed  # right numbers: no comparison can tell
        free.forward(X)
        free.backward(dY)
        assert free.forward_calls_in_backward is None  # not counted unless asked
        strict = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        strict.forward(X)
        with pytest.raises(SandboxError) as info:
            strict.backward(dY)
        assert info.value.reason == "policy" and strict.forward_calls_in_backward == 2 * (15 + 3 + 20)
        assert "Linear.backward called Linear.forward 76 time(s)" in " ".join(str(info.value).split())
        assert strict.clone().no_forward_in_backward  # copies keep the policy


def test_an_honest_backward_passes_under_the_policy(tmp_path):
    X = np.random.default_rng(1).standard_normal((4, 5))
    with _sandbox(tmp_path, SOLUTION) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        assert check_layer(layer, X, twin=None).passed and layer.forward_calls_in_backward == 0


def test_switching_the_counter_off_fails_the_policy(tmp_path):
    src = SOLUTION.replace(HONEST, HONEST.replace("        return dY", "        import sys\n"
                                                  "        sys.setprofile(None)\n        return dY"))
    with _sandbox(tmp_path, src) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        layer.forward(np.ones((2, 5)))
        # the sandbox refuses sys.setprofile to submissions (tester18g H3: a profile function can rebind the audit
        # hook's closure): the switch fails the call, as its count switched off did
        with pytest.raises(StudentCodeError, match=r"does not allow profiling \(sys.setprofile\)"):
            layer.backward(np.ones((2, 3)))


@pytest.mark.parametrize("source, score", [(CHEAT, 2.0), (SOLUTION, 7.0)])
def test_the_marker_fails_only_the_marked_test(tmp_path, source, score):
    r, data = graded(tmp_path, source)
    assert r.score == pytest.approx(score), data
    if source is CHEAT:  # the marked test's 4 points; and since session 40 dX (1 of the unmarked test's 3): central
        # differences with h = 1e-5 at X + 1000 (the grader's large-input probe) lose that precision
        failed = [t for t in data["tests"] if t["status"] == "failed"]
        assert [t["max_score"] for t in failed] == [3.0, 4.0] and "called Linear.forward" in shown(failed[1]["output"])
        assert "at X + 1000" in shown(failed[0]["output"]) and "`dW`: ok" in shown(failed[0]["output"])


#: redteam25 H1: one line that took the policy's count away, each with the count or message it now gives
FORWARD_ELSEWHERE = {
    # the forward the grader calls is an instance attribute: the count looked only in the classes' dicts (28/28)
    "instance_attribute": ("    def __init__(self, in_features, out_features",
                           "    def __init__(self, in_features, out_features", "self.forward = self._fwd"),
    "partial": ("    def __init__(self, in_features, out_features", "    def __init__(self, in_features, out_features",
                "self.forward = functools.partial(type(self)._fwd, self)"),
}


def _with_forward_as(how):
    """The central-differences cheat with its forward renamed ``_fwd`` and bound in ``__init__`` as ``how`` says."""
    src = "import functools\n" + CHEAT.replace("    def forward(self, X", "    def _fwd(self, X", 1)
    init = src.index("    def __init__(self, in_features, out_features")
    body = src.index("\n\n", init)
    assign = FORWARD_ELSEWHERE[how][2]
    return src[:body] + f"\n        {assign}" + src[body:]


@pytest.mark.parametrize("how", sorted(FORWARD_ELSEWHERE))
def test_the_forward_the_grader_calls_is_counted(tmp_path, how):
    """H1a: ``self.forward = self._fwd`` (or a ``functools.partial`` of it) in ``__init__``: the grader calls the
    instance's forward, so its code is what the count looks for (76 calls, as the class-dict forward's)."""
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.ones((4, 3))
    with _sandbox(tmp_path, _with_forward_as(how)) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        layer.forward(X)
        with pytest.raises(SandboxError, match="Linear.backward called Linear.forward") as info:
            layer.backward(dY)
        assert info.value.reason == "policy" and layer.forward_calls_in_backward == 76


#: redteam25 H1b: a backward that edits the counter to say "not counted" (subs_fd/fd_poison edited the Python
#: profile function's closure: 28/28), each with the count it now gives (-1: the count was tampered with)
TAMPER = {
    # the C profiler's record emptied at the end of backward
    "profiler_cleared": ("import sys\n        sys.getprofile().clear()\n", -1),
    # cleared, then backward called again to put a record of its call back: the grader's mark made before
    # backward is gone all the same
    "cleared_and_called_again": ("import sys\n        if not getattr(self, '_again', False):\n"
                                 "            sys.getprofile().clear()\n            self._again = True\n"
                                 "            type(self).backward(self, dY)\n            self._again = False\n", -1),
    # fd_poison's edit: no closure to reach now (its AttributeError fails the test as well)
    "closure": ("import sys\n        sys.getprofile().__closure__\n", None),
}


@pytest.mark.parametrize("how", sorted(TAMPER))
def test_a_counter_edited_by_backward_fails_the_policy_with_a_word_to_staff(tmp_path, how):
    """H1b: the count runs in the submission's process; it is now the C profiler's (no closure or frame of a Python
    counter to edit), which the submission can only clear: then the profiler no longer holds the call the grader
    made before backward, and the policy fails with a sentence for staff, where fd_poison scored 28/28."""
    edit, code = TAMPER[how]
    src = CHEAT.replace("        self.X = X\n        return dX", "        " + edit + "        self.X = X\n        return dX")
    assert src != CHEAT
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.ones((4, 3))
    with _sandbox(tmp_path, src) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        layer.forward(X)
        if code is None:
            with pytest.raises(StudentCodeError, match="has no attribute '__closure__'"):
                layer.backward(dY)
            return
        with pytest.raises(SandboxError) as info:
            layer.backward(dY)
        text = " ".join(str(info.value).split())
        assert info.value.reason == "policy" and layer.forward_calls_in_backward == code, text
        assert "(or switched off the count of such calls)" in text and "Staff: the grader's" in text


def test_a_decorated_forward_and_backward_count_no_call(tmp_path):
    """A ``functools.wraps`` decorator on both forward and backward: the count looks for the wrapped forward's code,
    not the wrapper's, which backward's own call runs too (an honest backward counted 1 call of forward)."""
    deco = ("import functools\n\n\ndef logged(f):\n    @functools.wraps(f)\n    def wrapper(*a, **k):\n"
            "        return f(*a, **k)\n    return wrapper\n")
    src = deco + SOLUTION.replace("    def forward(self, X", "    @logged\n    def forward(self, X", 1).replace(
        "    def backward(self, dY", "    @logged\n    def backward(self, dY", 1)
    X = np.random.default_rng(1).standard_normal((4, 5))
    with _sandbox(tmp_path, src) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        assert check_layer(layer, X, twin=None).passed and layer.forward_calls_in_backward == 0
