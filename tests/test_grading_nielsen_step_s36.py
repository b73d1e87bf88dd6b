"""Session 35's leftover 2 through the grader: ``grade.mini_batch_step`` grades Nielsen's ``update_mini_batch`` in the
sandbox child (a request of its own, ``step``, whose reply fields :func:`gradcheck.sandbox._check_reply` checks and
the staff policy counts), each array of the network after one step its share: the step of the network's own
gradients (:mod:`gradcheck._nielsen_step`), a wrong array named by its bug. Graded through the runner
(``grade_submission``) on tests/fixtures/nielsen_s34/network.py (network.py's step) and a network2.py-style L2 step.
"""

import json
import pathlib

import numpy as np
import pytest

from gradcheck import sandbox
from gradcheck.grading.runner import grade_submission
from tests.test_grading_keys_s35 import NIELSEN_TEST, TENSORS, _parts, shown

NIELSEN = pathlib.Path(__file__).parent / "fixtures" / "nielsen_s34" / "network.py"
ARRAYS = ["biases[0]", "biases[1]", "biases[2]", "weights[0]", "weights[1]", "weights[2]"]
B_STEP = "        self.biases = [b - eta / len(batch) * g for b, g in zip(self.biases, gb)]\n"
W_STEP = "        self.weights = [w - eta / len(batch) * g for w, g in zip(self.weights, gw)]\n"
L2 = [("    def update_mini_batch(self, batch, eta):", "    def update_mini_batch(self, batch, eta, lmbda, n):"),
      (W_STEP, W_STEP.replace("[w - eta", "[(1 - eta * lmbda / n) * w - eta"))]

STEP_TEST = '''
import numpy as np
import pytest


@pytest.mark.points(6)
def test_step(student, grade, rng):
    """Network.update_mini_batch"""
    net = student.layer("network.py", "Network", targets="unit@3,3", sizes=[4, 3, 3, 3])
    grade.mini_batch_step(net, rng.standard_normal((4, 3)), points=6POLICY)
'''


def _grade(tmp_path, *edits, policy=False, test=STEP_TEST):
    """network.py with ``edits`` graded by ``test`` (the step's, under the staff policy with ``policy``): ``(result,
    its one test's row, that row's output on one line)``."""
    src = NIELSEN.read_text()
    for old, new in edits:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "network.py").write_text(src)
    (tmp_path / "tests").mkdir()
    test = test.replace("POLICY", "")
    if policy:
        test = test.replace("import pytest\n", "import pytest\n\npytestmark = pytest.mark.gradcheck_no_forward_in_backward\n")
    (tmp_path / "tests" / "test_it.py").write_text(test)
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", seed=1)
    (t,) = json.loads((tmp_path / "out" / "results.json").read_text())["tests"]
    return r, t, " ".join(t["output"].split())


@pytest.mark.parametrize(("edits", "policy"), [([], False), (L2, False), ([], True)],
                         ids=["network.py", "network2.py-L2", "network.py-policy"])
def test_a_correct_step_gets_full_marks(tmp_path, edits, policy):
    """The controls: network.py's step, network2.py's with lmbda and n, and the step counted under the staff
    policy, 6/6."""
    r, t, _ = _grade(tmp_path, *edits, policy=policy)
    assert (r.status, t["score"], t["max_score"]) == ("graded", 6.0, 6.0), t["output"]


def test_biases_not_updated_lose_their_share(tmp_path):
    """The biases' line left out: the three biases wrong (3 of 6), each named, the weights scored."""
    r, t, text = _grade(tmp_path, (B_STEP, ""))
    assert (r.status, t["score"]) == ("graded", 3.0), t["output"]
    assert _parts(t["output"]) == {k: "wrong" if k.startswith("b") else "ok" for k in ARRAYS}, t["output"]
    assert ("- `biases[0]`: **wrong** - after one update_mini_batch(batch, eta): it is not updated at all; due: w "
            "- (eta/m) \\* sum(nabla_w), b - (eta/m) \\* sum(nabla_b), eta = 0.5, m = 3.") in text, text


def test_a_step_not_averaged_scores_0_named(tmp_path):
    """eta * sum(nabla) for both lists: every array wrong, the missing 1/m named."""
    r, t, text = _grade(tmp_path, (B_STEP, B_STEP.replace("eta / len(batch)", "eta")),
                        (W_STEP, W_STEP.replace("eta / len(batch)", "eta")))
    assert (r.status, t["score"]) == ("graded", 0.0), t["output"]
    assert set(_parts(t["output"]).values()) == {"wrong"}, t["output"]
    assert "the sum over the mini-batch is not divided by m = len(mini_batch)" in text, text


def test_the_l2_decay_on_the_biases_is_named(tmp_path):
    """network2.py's decay applied to the biases too: the biases wrong, the weights right."""
    r, t, text = _grade(tmp_path, *L2, (B_STEP, B_STEP.replace("[b - eta", "[(1 - eta * lmbda / n) * b - eta")))
    assert (r.status, t["score"]) == ("graded", 3.0), t["output"]
    assert "the L2 decay (1 - eta\\*lmbda/n) is applied to the biases" in text, text
    assert "after one update_mini_batch(batch, eta, lmbda, n)" in text, text


def test_a_step_calling_forward_fails_the_staff_policy(tmp_path):
    """Counted as the other requests: under gradcheck_no_forward_in_backward, a step that calls the forward the grader
    checks (the model's, ``self.forward``) fails as a backward that does; without the policy the same code gets full
    marks."""
    edit = (B_STEP, B_STEP + "        self.forward(np.hstack([x for x, _ in batch]))\n")
    r, t, text = _grade(tmp_path, edit, policy=True)
    assert (r.status, t["score"]) == ("graded", 0.0), t["output"]
    assert "Network's update_mini_batch called Network.forward 1 time(s) while stepping" in shown(text), text
    (tmp_path / "b").mkdir()
    r, t, _ = _grade(tmp_path / "b", edit)
    assert t["score"] == 6.0, t["output"]


@pytest.mark.parametrize(("meta", "message"), [
    ({"stepped": {"kind": "dict", "items": {}}, "last": {"kind": "dict", "items": {}}, "method": "u", "taken": []},
     None),
    ({"refused": "no update_mini_batch", "forward_calls": None}, None),
    ({"stepped": {"kind": "dict", "items": {"weights[0]": {"kind": "array", "array": 3, "key_type": "str"}}},
      "last": {"kind": "dict", "items": {}}, "method": "u", "taken": []},
     "stepped[weights[0]].array is a number where the grader reads an array"),
    ({"stepped": {"kind": "absent"}, "last": {"kind": "dict", "items": {}}, "method": "u", "taken": []},
     "stepped is an object where the grader reads a described dict of arrays"),
    ({"stepped": {"kind": "dict", "items": {}}, "method": "u", "taken": []},
     "last is null where the grader reads a described dict of arrays"),
    ({"stepped": {"kind": "dict", "items": {}}, "last": {"kind": "dict", "items": {}}, "method": 5, "taken": []},
     "method is a number where the grader reads a method's name"),
    ({"stepped": {"kind": "dict", "items": {}}, "last": {"kind": "dict", "items": {}}, "taken": []},
     "method is null where the grader reads a method's name"),
    ({"stepped": {"kind": "dict", "items": {}}, "last": {"kind": "dict", "items": {}}, "method": "u", "taken": [1]},
     "taken is a list where the grader reads a list of strings"),
    ({"refused": ["x"]}, "refused is a list where the grader reads a string"),
])
def test_the_step_reply_is_checked(meta, message):
    """The new reply's fields in the one check (redteam35 F2's rule): a forged field is the submission's malformed
    reply, never a grader error in the reader."""
    if message is None:
        sandbox._check_reply("step", {}, True, meta)
        return
    with pytest.raises(sandbox.MalformedReply) as info:
        sandbox._check_reply("step", {}, True, meta)
    assert message in str(info.value), str(info.value)


def test_the_step_runs_on_a_copy(tmp_path):
    """The network the grader keeps is not stepped (its forward after the step is the one before), and the step is
    computed from the params the parent holds."""
    from gradcheck.check_command import model_targets
    from gradcheck.sandbox import Sandbox

    (tmp_path / "network.py").write_text(NIELSEN.read_text())
    X = np.random.default_rng(2).standard_normal((4, 3))
    with Sandbox(files=[str(tmp_path / "network.py")]) as sb:
        t = model_targets("unit@3,3", 0, (4, 3))
        net = sb.load_layer("network.py", "Network", {"sizes": [4, 3, 3, 3]}, seed=0, targets=t)
        net.params["weights[0]"][...] = 0.25
        before = net.forward(X.copy())
        net.backward(np.ones(1))
        want = 0.25 - 0.5 / 3 * net.grads["weights[0]"]  # the step from the parent's params
        stepped, method, taken, last, sums, params = net.mini_batch_step(X, t[0], 0.5)
        assert (method, taken) == ("update_mini_batch", []) and set(last) == set(sums) == set(ARRAYS)
        assert params == ["batch", "eta"]
        assert np.allclose(stepped["weights[0]"], want, rtol=1e-10, atol=1e-14), (stepped["weights[0]"], want)
        assert np.array_equal(net.forward(X.copy()), before)  # the network itself was not stepped


#: network.py whose constructor wraps the child's reply function (found through sys._getframe, redteam35 F2's way) so
#: that a step's reply carries ``stepped[weights[0]].array`` as a number
_FORGED_STEP = '''
import sys as _sys


def _forge():
    f = _sys._getframe(1)
    while f is not None and not (hasattr(f.f_locals.get("self"), "reply") and hasattr(f.f_locals["self"], "serve")):
        f = f.f_back
    if f is None:
        return
    s = f.f_locals["self"]
    orig = s.reply

    def reply(ok, meta=None, packer=None, error=None):
        meta = dict(meta or {})
        if ok and "stepped" in meta:
            meta["stepped"] = {"kind": "dict", "items": {"weights[0]": {"kind": "array", "array": 3, "key_type": "str"}}}
        return orig(ok, meta, packer, error)
    s.reply = reply


_init = Network.__init__


def _forging_init(self, *a, **k):
    _forge()
    _init(self, *a, **k)


Network.__init__ = _forging_init
'''


def test_a_forged_step_reply_scores_0_as_the_submissions(tmp_path):
    """A submission forging the step's reply (a number where the grader reads an array) stops its sandbox as a
    malformed reply: that test's 0, the submission's failure, never a grader error."""
    src = NIELSEN.read_text() + _FORGED_STEP
    r, t, text = _grade(tmp_path, (NIELSEN.read_text(), src))
    assert (r.status, t["score"]) == ("graded", 0.0), (r.status, r.message, t["output"])
    assert "the submission's process sent a malformed reply: stepped[weights[0]].array is a number" in text, text


# Session 35's leftover 2, second half: a gradient list of a wrong shape (one nabla_b of the wrong shape) was a
# BackpropResultError for the whole backward, so the grader scored every tensor of the gradient test 0; the grader's
# sandbox now keeps each returned array under its name (:attr:`gradcheck.sandbox.Sandbox.nabla_parts`), the wrong one
# fails its part alone, named with its shape. gradcheck check still stops there with exit 1 (tests/test_nielsen_s35.py).

def _gradients(tmp_path, *edits):
    return _grade(tmp_path, *edits, test=NIELSEN_TEST)


@pytest.mark.parametrize(("edit", "wrong", "said"), [
    (("            nb[-k] = delta\n", "            nb[-k] = delta if k > 1 else delta.sum(keepdims=True)\n"),
     {"dbiases[2]"}, "dbiases[2]"),
    (("            nw[-k] = delta @ acts[-k - 1].T\n", "            nw[-k] = delta @ acts[-k].T if k == 3 else "
                                                      "delta @ acts[-k - 1].T\n"), {"dweights[0]"}, "dweights[0]"),
    (("            nb[-k] = delta\n", "            nb[-k] = delta if k < 3 else delta.T\n"), {"dbiases[0]", "dX"},
     "dbiases[0]"),
])
def test_a_gradient_of_a_wrong_shape_fails_its_part_alone(tmp_path, edit, wrong, said):
    """One nabla_b or nabla_w of a wrong shape: that tensor wrong, named with its shape (dX too when it is nabla_b[0],
    which dX is read from), every other tensor scored (was 0 of 7 for all)."""
    r, t, text = _gradients(tmp_path, edit)
    assert (r.status, t["score"]) == ("graded", 7.0 - len(wrong)), t["output"]
    assert _parts(t["output"]) == {n: "wrong" if n in wrong else "ok" for n in TENSORS}, t["output"]
    assert f"- `{said}`: **wrong** - " in t["output"] and "shape" in text.partition(f"`{said}`: **wrong**")[2], text
    if "dX" in wrong:  # not "backward(dY) returned None": the student wrote no backward
        assert ("- `dX`: **wrong** - dX is read from backprop's first bias gradient (weights[0].T @ nabla_b[0], as z "
                "= weights[0] x + biases[0] gives it), which has the wrong shape (see dbiases[0]), so it could not be "
                "read; expected an array of shape (4, 3).") in t["output"], t["output"]


def test_a_swapped_result_still_fails_the_whole_gradient_test(tmp_path):
    """The control: a result in the wrong order cannot be scored per tensor (each list has the other's shapes): 0,
    named as before."""
    r, t, text = _gradients(tmp_path, ("        return (nb, nw)\n", "        return (nw, nb)\n"))
    assert (r.status, t["score"]) == ("graded", 0.0), t["output"]
    assert "returned in the wrong order (nabla_w, nabla_b)" in text, text
