"""redteam35's findings on ``gradcheck grade`` attacked from inside a submission.

F2: the submission wrapped the sandbox child's own ``reply`` (found through ``sys._getframe``) and sent well-formed
frames with a field of the wrong type (``params[W].array`` a number, a forward's ``value.array`` a string,
``methods`` a number): the grader's own readers raised, and the test became a "grader error" (the student told the
autograder failed; graded again at every resume). Now every reply is checked in one place
(:func:`gradcheck.sandbox._check_reply`) against the shape of every field the grader reads; one of another shape is
the submission's failure ("the submission's process sent a malformed reply: ...").
"""

import numpy as np
import pytest

from gradcheck import sandbox
from gradcheck.sandbox import SandboxError
from tests.test_grading_policy import INIT, SOLUTION, _sandbox, graded

#: the assignment's solution, and ``_forge(edit)``: the child's reply function wrapped so that ``edit(meta)`` changes
#: every later successful reply's metadata before it is sent (redteam35's cases/forge_*)
_FORGE = SOLUTION + '''
import sys as _sys


def _forge(edit):
    f = _sys._getframe(1)
    while f is not None:
        s = f.f_locals.get("self")
        if s is not None and hasattr(s, "reply") and hasattr(s, "serve"):
            break
        f = f.f_back
    else:
        return
    orig = s.reply

    def reply(ok, meta=None, packer=None, error=None):
        meta = dict(meta or {})
        if ok:
            EDIT
        return orig(ok, meta, packer, error)
    s.reply = reply


_Linear_init = Linear.__init__


def _init(self, *a, **k):
    _forge(None)
    _Linear_init(self, *a, **k)


Linear.__init__ = _init
'''


def _forging(edit: str) -> str:
    """The solution whose Linear constructor makes the child send its replies with ``edit`` (Python code of a
    statement on ``meta``) applied."""
    return _FORGE.replace("EDIT", edit)


#: (what the forged reply answers, the edit, the field the message names, what the field held)
CASES = [
    ("load", 'meta["params"]["items"]["W"]["array"] = 1 if "methods" in meta else meta["params"]["items"]["W"]["array"]',
     "params[W].array", "a number"),
    ("load", 'meta.update(methods=5) if "methods" in meta else None', "methods", "a number"),
    ("load", 'meta.update(signature=[1]) if "methods" in meta else None', "signature", "a list"),
    ("load", 'meta["params"]["items"]["W"].update(layout="x") if "methods" in meta else None', "params[W].layout",
     "a string"),
    ("forward", 'meta.update(value={"kind": "array", "array": "x"}) if "keywords" in meta else None', "value.array",
     "a string"),
    ("backward", 'meta.update(grads={"kind": "dict", "items": {"W": {"kind": "array", "array": "x", "key_type": "str"}}})'
                 ' if "grads" in meta else None', "grads[W].array", "a string"),
    ("forward_many", 'meta.update(values=5) if "values" in meta else None', "values", "a number"),
    ("clone", 'meta.pop("id") if "id" in meta and "methods" not in meta else None', "id", "null"),
]


def _run(layer, what):
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.ones((4, 3))
    if what == "forward":
        layer.forward(X)
    elif what == "backward":
        layer.forward(X)
        layer.backward(dY)
    elif what == "forward_many":
        layer.forward_many([X, X])
    elif what == "clone":
        layer.clone()


@pytest.mark.parametrize("what, edit, field, held", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_f2_a_forged_reply_of_the_wrong_shape_is_the_submissions_failure(tmp_path, what, edit, field, held):
    """Each forged field was a non-gradcheck exception in the grader's own reader (AttributeError, TypeError,
    KeyError, IndexError: a grader error); now a SandboxError of the submission, naming the field and what it held."""
    with _sandbox(tmp_path, _forging(edit)) as sb:
        with pytest.raises(SandboxError) as info:
            _run(sb.load_layer("layers.py", "Linear", INIT), what)
    text = " ".join(str(info.value).split())
    assert info.value.reason == "protocol", text
    assert "the submission's process sent a malformed reply" in text, text
    assert f"{field} is {held} where the grader reads" in text, text


def test_f2_an_honest_reply_of_every_op_passes_the_check(tmp_path):
    """The check refuses nothing the child sends itself: the solution's load, forward, forward_many, backward and
    clone (params with their layout, grads, keywords, values, ids) are read as before."""
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.ones((4, 3))
    with _sandbox(tmp_path, SOLUTION) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT)
        Y = layer.forward(X)
        np.testing.assert_array_equal(Y, X @ layer.params["W"].T + layer.params["b"])
        np.testing.assert_array_equal(layer.forward_many([X, None])[1], Y)
        dX = layer.backward(dY)
        np.testing.assert_array_equal(dX, dY @ layer.params["W"])
        np.testing.assert_array_equal(layer.grads["b"], dY.sum(axis=0))
        assert layer.clone().params.keys() == {"W", "b"}


@pytest.mark.parametrize("meta, message", [
    ({"params": {"kind": "dict", "items": {"W": {"kind": "array", "array": np.zeros((2, 3)), "key_type": "str",
                                                  "layout": [[2, 3], [24, 8], 8]}}}}, None),
    ({"params": {"kind": "dict", "items": {"W": {"kind": "array", "array": np.zeros((2, 3)), "key_type": "str",
                                                  "layout": [[3, 2], [24, 8], 8]}}}},
     "params[W].layout is a list where the grader reads [the array's shape, its strides, its itemsize]"),
    ({"params": {"kind": "dict", "items": {"W": {"kind": "badarray", "dtype": "object", "shape": [2], "key_type": "str",
                                                  "layout": [[2], [8], 8]}}}}, None),
    ({"value": {"kind": "tuple", "items": [{"kind": "array", "array": np.zeros(2)}, {"kind": "scalar"}]}},
     "value.items[1].array is null where the grader reads an array"),
    ({"keywords": {"bn_param": {"running_mean": 3}}}, "keywords[bn_param][running_mean] is a number"),
    ({"scalars": {"in_features": [5]}}, "scalars is an object where the grader reads an object of numbers"),
    ({"unconnected": ["W", 1]}, "unconnected is a list where the grader reads a list of strings"),
    ({"forward_calls": "0"}, "forward_calls is a string where the grader reads an integer or null"),
])
def test_f2_the_check_names_the_field_and_what_it_held(meta, message):
    """The one check (no child needed): an honest shape passes, a wrong one names its path."""
    if message is None:
        sandbox._check_reply("forward", {}, True, meta)
        return
    with pytest.raises(sandbox.MalformedReply) as info:
        sandbox._check_reply("forward", {}, True, meta)
    assert message in str(info.value), str(info.value)


#: a Linear forward test beside a ReLU one (redteam33's FORWARD_TESTS)
FORWARD_TESTS = '''
import pytest
from manualprop import Linear as RefLinear, ReLU as RefReLU

@pytest.mark.points(2)
def test_linear_forward(student, grade, rng):
    grade.layer_forward(student.layer("layers.py", "Linear", in_features=5, out_features=3),
                        rng.standard_normal((8, 5)), RefLinear(5, 3), points=2)

@pytest.mark.points(1)
def test_relu_forward(student, grade, rng):
    grade.layer_forward(student.layer("layers.py", "ReLU"), rng.standard_normal((6, 4)) + 0.5, RefReLU())
'''


def test_f2_graded_a_forged_reply_scores_0_as_the_submissions_never_a_grader_error(tmp_path):
    """redteam35 F2 through the grader: the Linear test whose reply was forged was "grader error" (the run's status, a
    regrade at every resume); now it scores 0 as the submission's failure, said so, and the run is graded."""
    r, data = graded(tmp_path, _forging('meta.update(value={"kind": "array", "array": "x"}) if "keywords" in meta '
                                        'else None'), tests=FORWARD_TESTS)
    got = {t["name"]: (t["score"], " ".join(t["output"].split())) for t in data["tests"]}
    assert r.status == "graded", (r.status, r.message, got)
    score, text = got["test_linear_forward"]
    assert score == 0.0, got
    assert "the submission's process sent a malformed reply: value.array is a string" in text, got
    assert "autograder's own code failed" not in text and "grader" not in text.split("malformed")[0], got
    assert got["test_relu_forward"][0] == 1.0, got
    assert r.score == pytest.approx(1.0), got
