"""tester21g's grader findings (session 21): H a write into dY judged only when every other tensor matched (a second
bug raised the score), M1 the staff's own test code graded as the student's 0, M2 the no-forward-in-backward policy
beaten by a copy of forward's code, M3 a hidden input's bit leaking through the whole-submission time limit, and the
LOW staff mistakes (points that do not add up) and a copied signed results.json.
"""

import csv
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from gradcheck.grading.checks import layer_gradients
from gradcheck.grading.runner import grade_batch, grade_submission
from gradcheck.sandbox import Sandbox
from manualprop import Linear
from tests.test_cli import run_here
from tests.test_grading_keys_s35 import shown

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"

#: one bug each, as a student writes it: into the Linear below (``{bugs}`` a set of these names)
BUGS = {
    "db_mean": "db = dY.mean(axis=0)",  # a wrong part against the reference
    "dW_sign": "dW = -dW",  # another wrong part
    "zero_dY": "dY[...] = 0.0",  # check's FAIL of the layer as a whole: it wrote into dY
    "nan_dY": "dY[0, 0] = np.nan",  # the same, with NaN (tester21g: y3 had "dX ok, dW ok")
    "float32": "float32",  # forward in float32: check's FAIL as a whole (wrong precision of Y)
    "constant": "constant",  # an array forward reads with no gradient: check's NOT CHECKED as a whole
    "double_b": "double_b",  # forward adds b twice: db matches the reference, central differences find it wrong
    "dX_sign": "dX = -dX",  # a wrong dX value: check_layer runs, and finds db wrong beside double_b
    "dX_shape": "dX = dX[:, :4]",  # a dX of the wrong shape: check_layer stops on it (review22: db was spared)
    "dX_nan": "dX[0, 0] = np.nan",  # a NaN in dX: check_layer stops on it too (review22: db was spared)
}


def _linear(name: str, bugs: frozenset[str]) -> str:
    """A Linear (W (3, 5), b (3,)) with ``bugs`` planted, as the class ``name``."""
    scale = "        self.class_weights = np.ones(3)\n" if "constant" in bugs else ""
    out = "(self.X @ self.params['W'].T + self.params['b'])" + (" * self.class_weights" if "constant" in bugs else "")
    out += " + self.params['b']" if "double_b" in bugs else ""
    out = f"({out})"
    out += ".astype(np.float32)" if "float32" in bugs else ""
    lines = [BUGS[b] for b in ("db_mean", "dW_sign", "zero_dY", "nan_dY", "dX_sign", "dX_shape", "dX_nan")
             if b in bugs]
    after = "".join(f"        {line}\n" for line in lines if line.startswith(("dY", "dX")))
    return (f"class {name}:\n    def __init__(self):\n"
            f"        self.params = {{'W': np.full((3, 5), 0.3), 'b': np.zeros(3)}}\n        self.grads = {{}}\n{scale}"
            f"    def forward(self, X, training=False):\n        self.X = X\n        return {out}\n"
            f"    def backward(self, dY):\n        dW = dY.T @ self.X\n        db = dY.sum(axis=0)\n"
            + "".join(f"        {line}\n" for line in lines if not line.startswith(("dY", "dX"))) +
            f"        self.grads['W'], self.grads['b'] = dW, db\n        dX = dY @ self.params['W']\n{after}"
            f"        return dX\n")


def test_a_second_bug_never_raises_a_linear_layers_score(tmp_path):
    """H: a backward that wrote into dY failed only through the numerical check, which runs only when every part
    matched the reference: the write alone cost all 6 points, the write plus ``db = dY.mean`` only db's 2 (y8 14,
    y9 21; e_zero_dY 18, e_zero_dY_db_mean 22.67). Now check's verdicts on the layer as a whole (the write into
    dY, a float32 forward, an array with no gradient: NOT CHECKED) are decided whatever the parts say. The
    property, on a real sandbox: for every set S of at most one bug and every other bug b, the fraction of S + b
    is at most S's; and each whole-layer bug alone earns nothing. The parts that match the reference beside a wrong
    one are confirmed by central differences too (a forward adding b twice: db, 2/3 alone, was spared with dW
    wrong: 2/3 again, now 1/3), also when the other part's shape or a NaN in it stops check_layer (review22)."""
    sets = [frozenset(c) for k in range(3) for c in itertools.combinations(sorted(BUGS), k)]
    names = {s: "L_" + ("_".join(sorted(s)) or "correct") for s in sets}
    (tmp_path / "hw.py").write_text("import numpy as np\n\n" + "\n".join(_linear(names[s], s) for s in sets))
    X = np.random.default_rng(0).standard_normal((8, 5))
    with Sandbox(files={"hw.py": str(tmp_path / "hw.py")}, timeout=30) as sb:
        score = {s: layer_gradients(sb.load_layer("hw.py", names[s]), X, Linear(5, 3), seed=2,
                                    parts={"dX": 2, "dW": 2, "db": 2}).fraction for s in sets}
    assert score[frozenset()] == 1.0
    assert score[frozenset({"db_mean"})] == score[frozenset({"dW_sign"})] == pytest.approx(2 / 3)
    assert score[frozenset({"db_mean", "dW_sign"})] == pytest.approx(1 / 3)
    for bug in ("zero_dY", "nan_dY", "float32", "constant"):
        assert score[frozenset({bug})] == 0.0, bug
    # db found wrong by central differences alone, with another part wrong too (was: spared, 2/3 against 1/3)
    assert score[frozenset({"double_b"})] == score[frozenset({"double_b", "db_mean"})] == pytest.approx(2 / 3)
    assert score[frozenset({"double_b", "dW_sign"})] == pytest.approx(1 / 3)
    # review22: with dX's shape or a NaN in dX stopping the check, db was spared (2/3, above dX = -dX's 1/3); now
    # each part that matched is confirmed by a central difference of the student's forward all the same
    for dx in ("dX_sign", "dX_shape", "dX_nan"):
        assert score[frozenset({dx})] == pytest.approx(2 / 3), dx
        assert score[frozenset({"double_b", dx})] == pytest.approx(1 / 3), dx
    raised = [(sorted(s), b, score[s], score[s | {b}]) for s in sets if len(s) <= 1 for b in BUGS
              if b not in s and score[s | {b}] > score[s]]
    assert raised == []


def test_a_write_into_dY_costs_the_gradients_with_a_second_bug_too_in_a_real_batch(tmp_path):
    """H, as tester21g graded them (attacks4, ``gradcheck grade`` with the example assignment, seed 11): the
    solution's Linear writing zeros into dY after use scored 18 of 28 and with ``db = dY.mean`` beside it 22.67.
    Now the second bug costs what it costs (the float64 property's points): 18 and 16, and the message beside the
    db diagnosis names the write, as gradcheck check does."""
    solution = (ASSIGN / "solution" / "layers.py").read_text()
    ret = '        return dY @ self.params["W"]\n'
    assert solution.count(ret) == 1 and solution.count("dY.sum(axis=0)") == 1
    zero = solution.replace(ret, '        dX = dY @ self.params["W"]\n        dY[...] = 0.0\n        return dX\n')
    for name, text in {"e_zero_dY": zero, "e_zero_dY_db_mean": zero.replace("dY.sum(axis=0)", "dY.mean(axis=0)")
                       }.items():
        (tmp_path / "subs" / name).mkdir(parents=True)
        (tmp_path / "subs" / name / "layers.py").write_text(text)
    r = run_here("grade", tmp_path / "subs", "--tests", ASSIGN / "tests", "--out", tmp_path / "out",
                 "--workers", "2", "--seed", "11", "--no-progress")
    assert r.returncode == 0, r.stderr
    rows = {row["submission"]: row for row in csv.DictReader((tmp_path / "out" / "gradebook.csv").open())}
    assert {k: float(v["score"]) for k, v in rows.items()} == {"e_zero_dY": 18.0, "e_zero_dY_db_mean": 16.0}
    tests = json.loads((tmp_path / "out" / "e_zero_dY_db_mean" / "results.json").read_text())["tests"]
    (grads,) = [t for t in tests if t["name"].startswith("Linear: gradients")]
    assert grads["score"] == 0
    assert "- `dX`: **wrong** - Linear.backward modified its upstream gradient dY in place" in shown(grads["output"])
    assert "- `db`: **wrong** - db is the mean over the batch, not the sum" in grads["output"]


#: central differences of a copy of forward's code object: ``COPY`` made as tester21g's p01 made it
CODE_COPY = '''    def backward(self, dY):
        import types
        f = types.FunctionType(COPY, globals())
        X0, h, out = self.X.copy(), 1e-6, {}
        for name, P in list(self.params.items()) + [("X", X0)]:
            G = np.zeros_like(P)
            for i in np.ndindex(P.shape):
                old = P[i]
                P[i] = old + h
                a = float((f(self, X0, False) * dY).sum())
                P[i] = old - h
                G[i] = (a - float((f(self, X0, False) * dY).sum())) / (2 * h)
                P[i] = old
            out[name] = G
        self.X = X0
        self.grads["W"], self.grads["b"] = out["W"], out["b"]
        return out["X"]
'''
COPIES = {"renamed": 'type(self).forward.__code__.replace(co_name="fwd_copy", co_filename="elsewhere.py")',
          "marshalled": '__import__("marshal").loads(__import__("marshal").dumps(type(self).forward.__code__))'}


@pytest.mark.parametrize("how", sorted(COPIES))
def test_the_policy_counts_calls_of_a_copy_of_forwards_code(tmp_path, how):
    """M2: ``gradcheck_no_forward_in_backward`` counted the calls of forward's own code object, so central
    differences through ``types.FunctionType(forward.__code__.replace(co_name=...), globals())`` scored 28/28 (the
    direct control 16/28). Now a call counts when its code computes what forward's does (the same bytecode, names
    and constants, :func:`gradcheck._sandbox_child.code_key`), whatever its name, file or identity; an honest
    backward still counts 0 (tests/test_grading_policy.py)."""
    from tests.test_grading_policy import HONEST, SOLUTION, TESTS

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(SOLUTION.replace(HONEST, CODE_COPY.replace("COPY", COPIES[how])))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_policy.py").write_text(TESTS)
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", timeout=10.0)
    data = json.loads(Path(r.results_path).read_text())
    assert r.score == 2.0, data  # the unmarked test's dW and db: the copy's numbers are right, but central differences
    # at X + 1000 (the grader's large-input probe, session 40) lose dX's precision
    plain, failed = [t for t in data["tests"] if t["status"] == "failed"]
    assert plain["max_score"] == 3.0 and "at X + 1000" in " ".join(shown(plain["output"]).split())
    assert failed["max_score"] == 4.0 and "Linear.backward called Linear.forward 76 time(s)" in \
        " ".join(shown(failed["output"]).split())


def test_code_key_tells_a_copy_of_forward_from_other_code():
    """The key of the policy's count: equal for a renamed or re-created copy, different for other code (a forward
    of another body, the same body reading another constant)."""
    from gradcheck._sandbox_child import code_key

    def forward(self, X, training=False):
        return X @ self.W.T + 1.0

    def other(self, X, training=False):
        return X @ self.W.T + 2.0

    copy = forward.__code__.replace(co_name="fwd_copy", co_filename="x.py", co_firstlineno=1)
    assert copy != forward.__code__ and code_key(copy) == code_key(forward.__code__)
    assert code_key(other.__code__) != code_key(forward.__code__)
    assert code_key(test_code_key_tells_a_copy_of_forward_from_other_code.__code__) != code_key(forward.__code__)


_STAFF_TEST = '''import numpy as np
import pytest
from manualprop import Linear as RefLinear

@pytest.mark.points(2)
def test_linear(student, grade, rng):
    """Linear: gradients"""
    layer = student.layer("layers.py", "Linear", in_features=5, out_features=3)
    X = rng.standard_normal((8, 5))
BODY
'''
#: the staff's mistakes of tester21g's staffcfg/e12 and e3, each graded against the assignment's solution
MISTAKES = {
    "key_error": ('    d = {}\n    d["missing"]', "the test raised KeyError: 'missing' (test_staff.py, line 11, in "
                  "test_linear)"),
    "numpy_shape": ("    Y = X @ np.ones((4, 3))", "the test raised ValueError: matmul: Input operand 1 has a mismatch"),
    "reference_size": ("    grade.layer_gradients(layer, X, RefLinear(5, 4))",
                       "the reference solution would fail this test too"),
}


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_the_staffs_own_mistakes_are_grader_errors_and_the_students_errors_stay_theirs(tmp_path, mistake):
    """M1: a KeyError in the test's own code, numpy's shape error on the test's own arrays and a reference of other sizes than the student's layer (``RefLinear(5, 4)`` beside ``out_features=3``)
    graded the solution 0 with exit 0 ("The check stopped with ..."; "params['W'] has shape (3, 5); the assignment
    expects (4, 5)"). Now each is a grader error naming the test (exit 1, nothing scored): an exception raised by a
    frame of the test's file, and a reference whose own class built with the student's arguments has the
    student's shapes (the reference solution would fail the test too). A student's error reaching the test's
    frames stays the student's (below). An ``assert`` of the test's own is the test's verdict, as in pytest
    (newuser37 F3: ``tests/test_grading_newuser37.py``)."""
    body, said = MISTAKES[mistake]
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_staff.py").write_text(_STAFF_TEST.replace("BODY", body))
    r = run_here("grade", tmp_path / "sub", "--single", "--tests", tmp_path / "tests", "--out", tmp_path / "out",
                 "--seed", "1", "--no-progress")
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert r.returncode == 1, (r.stdout, r.stderr)
    error = " ".join(data["extra_data"]["grader_error"].split())
    assert error.startswith("test test_staff.py::test_linear: ") and said in error, error
    assert "this test is faulty" in data["tests"][0]["output"]


def test_a_students_error_through_the_tests_own_frames_stays_the_students(tmp_path):
    """M1's care: the student's forward raising inside a test that calls it from its own frames is the student's 0,
    exit 0, never a grader error."""
    src = (ASSIGN / "solution" / "layers.py").read_text()
    src = src.replace("        self.X = X\n", "        self.X = X\n        raise KeyError('student')\n", 1)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(src)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_staff.py").write_text(_STAFF_TEST.replace(
        "BODY", "    layer.forward(X)\n    grade.layer_forward(layer, X, RefLinear(5, 3), points=2)"))
    r = run_here("grade", tmp_path / "sub", "--single", "--tests", tmp_path / "tests", "--out", tmp_path / "out",
                 "--seed", "1", "--no-progress")
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert r.returncode == 0 and "grader_error" not in data["extra_data"], data
    assert data["score"] == 0 and "KeyError: 'student'" in data["tests"][0]["output"], data


#: Tanh whose forward sleeps on the hidden test's input only (its mean > 5: the hidden test's secret offset)
TIMING = """import time
import numpy as np

class Tanh:
    def __init__(self):
        self.params, self.grads = {}, {}
    def forward(self, X, training=False):
        if float(X.mean()) > 5:
            time.sleep(2.0)
        self.Y = np.tanh(X)
        return self.Y
    def backward(self, dY):
        return dY * (1 - self.Y ** 2)
"""
_TIMING_TESTS = """import pytest
from manualprop import Tanh

@pytest.mark.visibility("hidden")
def test_hidden(student, grade, rng):
    '''Hidden: Tanh'''
    for _ in range(6):
        grade.layer_forward(student.layer("hw.py", "Tanh"), rng.standard_normal((4, 3)) + 7.25, Tanh())

@pytest.mark.visibility("visible")
def test_visible(student, grade, rng):
    '''Tanh: forward'''
    grade.layer_forward(student.layer("hw.py", "Tanh"), rng.standard_normal((4, 3)), Tanh())
"""


def test_a_hidden_tests_time_never_changes_what_the_student_sees(tmp_path):
    """M3: a forward that slept only on the hidden test's input passed the whole submission's time limit, and the
    top-level output ("Score 0, too slow: the whole submission took more than ...") and every visible row ("Not
    counted ... Before that, this test had 2 / 2") told the student one bit of the hidden input. The hidden tests
    run after the visible ones; a limit passed while they run now costs the hidden rows alone: the visible rows
    keep their scores and the top-level output is the visible score line, saying nothing of time.

    Each call's limit is 10 s, not 3: a hidden forward sleeps 2 s, and a margin of 1 s, which a loaded CI machine can
    eat, made a forward's own limit end its test before the submission's (8 s); 6 such forwards still pass that."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "hw.py").write_text(TIMING)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_hw.py").write_text(_TIMING_TESTS)
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", timeout=10.0, submission_timeout=8)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    hidden, visible = data["tests"]
    assert r.status == "graded" and data["extra_data"]["later_tests_too_slow"] is True, data
    assert data["output"] == ("Score on the tests visible now: 1 / 1. Other tests, not shown to you, count in your "
                              "final score.")  # a hidden test is never shown (newuser26)
    assert (visible["score"], visible["status"], visible["output"]) == (1.0, "passed", "All checked: `Y` ok."), visible
    assert hidden["score"] == 0 and hidden["visibility"] == "hidden"
    assert "the tests shown later (hidden, or after the due date or publication) together ran past the " \
           "submission's time limit (8 s)" in hidden["output"]
    assert data["score"] == r.score == 1.0 and "hidden" in r.message


@pytest.mark.parametrize("marker, call, said", [
    ("points(5)", 'grade.layer_gradients(layer, X, RefLinear(5, 3), parts={"dX": 2, "dW": 2, "db": 2})',
     "points(5) but its one check, grade.layer_gradients(...), gives parts sum 6"),
    ("points(2)", "grade.layer_forward(layer, X, RefLinear(5, 3), points=3)",
     "points(2) but its one check, grade.layer_forward(...), gives points= 3"),
])
def test_points_that_contradict_themselves_are_refused(tmp_path, marker, call, said):
    """LOW: ``points(5)`` beside parts summing to 6 scaled a correct submission's 6 to 5 and db's loss to 1.67,
    and ``points(2)`` beside ``points=3`` gave 2/2, silently. Now a test of one check whose literal points do not
    add up to its marker is refused as a usage error naming it (exit 2), before anything is graded; a test of
    several checks or trials shares its points by their weights, as the example assignment's hidden test does."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_staff.py").write_text(_STAFF_TEST.replace("points(2)", marker).replace(
        "BODY", f"    {call}"))
    r = run_here("grade", tmp_path / "sub", "--single", "--tests", tmp_path / "tests", "--out", tmp_path / "out",
                 "--seed", "1", "--no-progress")
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "test_staff.py::test_linear: " + said in " ".join(r.stderr.split()), r.stderr


def test_a_signed_result_copied_from_another_submission_is_named_when_graded_again(tmp_path):
    """LOW: s01's signed results.json copied over s03's was graded again without a word (a hand-edited one is
    named). Now it is named as one that is not that submission's signed result."""
    solution = (ASSIGN / "solution" / "layers.py").read_text()
    for name, text in {"a": solution, "b": solution.replace("dY.sum(axis=0)", "dY.mean(axis=0)")}.items():
        (tmp_path / "subs" / name).mkdir(parents=True)
        (tmp_path / "subs" / name / "layers.py").write_text(text)
    kw = dict(progress=False, plot=False, seed=3, workers=2)
    first = grade_batch(tmp_path / "subs", ASSIGN / "tests", tmp_path / "out", **kw)
    assert {r.name: r.score for r in first.submissions} == {"a": 28.0, "b": 22.6667}
    (tmp_path / "out" / "b" / "results.json").write_bytes((tmp_path / "out" / "a" / "results.json").read_bytes())
    again = grade_batch(tmp_path / "subs", ASSIGN / "tests", tmp_path / "out", **kw)
    assert again.unsigned == ["b"] and {r.name: r.score for r in again.submissions} == {"a": 28.0, "b": 22.6667}
    assert "1 saved results.json did not carry this batch's signature of that submission (edited by hand, copied " \
           "from another submission or batch, or planted) and were graded again: b" in again.summary()
