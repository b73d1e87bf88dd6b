"""Issue 10 §4: the grader's verdict and diagnosis are ``gradcheck check``'s on the same layer.

A submission set of one attribute-style layer (``self.W``, ``self.b`` with ``self.dW``, ``self.db``) scaled by a fixed
array: correct (the constant private, ``self._class_weights``), with a named bug (``db`` the mean over the batch), and
with the constant named like a weight (``self.class_weights``, no gradient). ``check`` says PASS (exit 0), FAIL with
the diagnosis (exit 1) and NOT CHECKED as a whole (exit 3); the grader's per-test result says the same, in the same
words, through the same code (the layer read as check reads it, ``RemoteLayer.probed``; the undecided rule of
``check_command``). A grading test that declares the constant (``constants=``, as ``--constants``) gives the correct
submission with the constant full marks. Every grading run writes its gradebook.
"""

import csv
import json
import re

import pytest
from test_cli import both, run, run_here
from test_grading_keys_s35 import shown

from gradcheck.grading.runner import grade_batch

BODY = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((5, 3)) * 0.3
        self.b = np.zeros(3)
        self.NAME = np.array([1.0, 0.5, 2.0])  # fixed, not trained

    def forward(self, X):
        self.X = X
        return (X @ self.W + self.b) * self.NAME

    def backward(self, dY):
        d = dY * self.NAME
        self.dW = self.X.T @ d
        self.db = DB
        return d @ self.W.T
"""

DICT = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((5, 3)) * 0.3, "b": np.zeros(3)}
        self.grads = {}
        self.class_weights = np.array([1.0, 0.5, 2.0])  # outside params

    def forward(self, X, training=False):
        self.X = X
        return (X @ self.params["W"] + self.params["b"]) * self.class_weights

    def backward(self, dY):
        d = dY * self.class_weights
        self.grads["W"] = self.X.T @ d
        self.grads["b"] = d.sum(0)
        return d @ self.params["W"].T
"""

SUBMISSIONS = {"correct": ("_class_weights", "d.sum(axis=0)"), "named_bug": ("_class_weights", "d.mean(axis=0)"),
               "constant": ("class_weights", "d.sum(axis=0)"), "constant_in_dict": None,
               "forward_raises": ("_class_weights", "d.sum(axis=0)")}

TESTS = """
import numpy as np
import pytest


class Ref:  # the staff's reference: W (5, 3), b (3,) and the constant
    def __init__(self):
        self.params = {"W": np.zeros((5, 3)), "b": np.zeros(3)}
        self.grads = {}
        self.class_weights = np.array([1.0, 0.5, 2.0])

    def forward(self, X, training=False):
        self.X = X
        return (X @ self.params["W"] + self.params["b"]) * self.class_weights

    def backward(self, dY):
        d = dY * self.class_weights
        self.grads["W"] = self.X.T @ d
        self.grads["b"] = d.sum(0)
        return d @ self.params["W"].T


@pytest.mark.points(3)
def test_scaled(student, grade, rng):
    \"\"\"Scaled: gradients\"\"\"
    grade.layer_gradients(student.layer("layers.py", "L"), rng.standard_normal((8, 5)), Ref(), seed=1DECLARE)
"""


def _batch(tmp_path, declare="", before=""):
    subs, tests, out = tmp_path / "subs", tmp_path / "tests", tmp_path / "graded"
    for name, how in SUBMISSIONS.items():
        (subs / name).mkdir(parents=True)
        text = DICT if how is None else BODY.replace("NAME", how[0]).replace("DB", how[1])
        (subs / name / "layers.py").write_text(text.replace("self.X = X", 'raise ValueError("not yet")')
                                               if name == "forward_raises" else text)
    tests.mkdir()
    (tests / "test_scaled.py").write_text(TESTS.replace("DECLARE", declare).replace(
        "    grade.layer_gradients(", f"    {before}grade.layer_gradients("))
    res = grade_batch(subs, tests, out, workers=2, seed=5, timeout=5.0, progress=False)
    rows = {r["submission"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    graded = {n: json.loads((out / n / "results.json").read_text()) for n in SUBMISSIONS}
    return subs, res, rows, graded


def _check(path, through=run_here):
    p = through("check", f"{path}::L", "--input-shape", "8,5")
    return p.returncode, both(p)


def test_grader_and_check_agree_on_pass_named_bug_and_weight_or_constant(tmp_path):
    subs, res, rows, graded = _batch(tmp_path)
    assert set(rows) == set(SUBMISSIONS) and all(s.status == "graded" for s in res.submissions), rows
    out = {n: graded[n]["tests"][0] for n in SUBMISSIONS}

    code, said = _check(subs / "correct" / "layers.py", through=run)  # the console script; the rest in-process
    assert code == 0 and "PASS: L:" in said, said
    assert out["correct"]["status"] == "passed" and graded["correct"]["score"] == 3.0, out["correct"]
    assert rows["correct"]["score"] == "3"

    code, said = _check(subs / "named_bug" / "layers.py")
    # the diagnosis sentence, up to the lesson line check prints after it (fixd22) or the end
    diagnosis = re.search(r"diagnosis: (.*?\.)(?: read: |\n)", said.replace("\n", " ") + "\n").group(1)
    assert code == 1 and diagnosis.startswith("db is the mean over the batch, not the sum"), said
    assert out["named_bug"]["status"] == "failed" and diagnosis in shown(out["named_bug"]["output"]), out["named_bug"]
    assert "`db`: **wrong**" in out["named_bug"]["output"] and graded["named_bug"]["score"] == 2.0

    code, said = _check(subs / "forward_raises" / "layers.py")  # check and the grader name forward's error
    assert code == 3 and "raised ValueError: not yet" in said, said
    assert "forward raised ValueError: not yet" in out["forward_raises"]["output"], out["forward_raises"]
    assert graded["forward_raises"]["score"] == 0.0 and rows["forward_raises"]["status"] == "graded", rows

    for name in ("constant", "constant_in_dict"):  # the attribute style, and an array outside a params dict
        code, said = _check(subs / name / "layers.py")
        line = re.search(r"(NOT CHECKED as a whole: .*?\.)$", " ".join(said.split()), re.S).group(1)
        assert code == 3 and "cannot tell whether class_weights is a weight" in line, said
        assert line.endswith(", or pass --constants class_weights).") and "constants=[" not in line, line
        got = out[name]
        # the same line up to the declaration, which for the grader is the grading test's (a student cannot pass
        # --constants to the grader; issue 10, session 14's leftover)
        head, graded_line = line.split(", or pass --constants")[0], " ".join(shown(got["output"]).split())
        assert got["status"] == "failed" and head in graded_line, got
        assert "--constants" not in graded_line, got
        assert (head + "; if the assignment gives it as a constant, course staff declare it in the grading test: "
                "grade.layer_gradients(..., constants=['class_weights'])).") in graded_line, got
        assert "`dX`: ok" in got["output"] and "`db`: ok" in got["output"], got  # the checked parts shown
        assert "PASS" not in got["output"] and "Traceback" not in got["output"], got
        assert graded[name]["score"] == 0.0 and rows[name]["status"] == "graded", rows
    assert "grads['class_weights'], with it in params)" in out["constant_in_dict"]["output"]


def test_a_declared_constant_gives_full_marks(tmp_path):
    _, res, rows, graded = _batch(tmp_path, ', constants=["class_weights"]')
    assert all(s.status == "graded" for s in res.submissions), rows
    for name in ("constant", "constant_in_dict"):
        assert graded[name]["score"] == 3.0 and graded[name]["tests"][0]["status"] == "passed", graded[name]
    assert graded["correct"]["score"] == 3.0, graded["correct"]  # declared, not read by this one: nothing to say
    assert graded["named_bug"]["score"] == 2.0
    assert {r: rows[r]["score"] for r in rows} == {"correct": "3", "named_bug": "2", "constant": "3",
                                                   "constant_in_dict": "3", "forward_raises": "0"}


@pytest.mark.parametrize("given", [["W"], "class_weights", [""], [3], 3])
def test_constants_must_name_arrays_that_are_not_the_references_parameters(given):
    """A staff error is the test's, said before the student's code runs: a string (not a list of names), an empty or
    non-string name, or a parameter of the reference (graded, so not a constant)."""
    from types import SimpleNamespace

    import numpy as np

    from gradcheck.grading.checks import GradingTestError, layer_gradients

    ref = SimpleNamespace(params={"W": np.zeros((5, 3)), "b": np.zeros(3)})
    with pytest.raises(GradingTestError, match=r"constants .*: the names of array attributes"):
        layer_gradients(None, np.zeros((8, 5)), ref, constants=given)


def test_a_wrong_declaration_is_a_grader_error_and_the_gradebook_is_written(tmp_path):
    """No submission is scored 0 for the staff's mistake: every row is a grader error, the results and the
    gradebook are written, and the student reads that the test is faulty."""
    _, res, rows, graded = _batch(tmp_path, ', constants=["W"]')
    assert {s.status for s in res.submissions} == {"grader error"}, rows
    assert set(rows) == set(SUBMISSIONS) and {r["status"] for r in rows.values()} == {"grader error"}, rows
    for data in graded.values():
        assert data["extra_data"]["status"] == "grader error", data
        assert "constants ['W']: the names of array attributes" in data["extra_data"]["grader_error"], data
        assert "this test is faulty" in data["tests"][0]["output"], data


def test_the_constants_key_is_documented_with_the_grading_tests():
    from pathlib import Path

    doc = " ".join((Path(__file__).resolve().parents[1] / "docs" / "gradescope.md").read_text().split())
    assert 'grade.layer_gradients(..., constants=["class_weights"])' in doc and "NOT CHECKED as a whole" in doc


def test_a_typo_in_the_staffs_test_is_a_grader_error_not_a_lost_point(tmp_path):
    """tester16g H4: ``RefRelu()`` for ``RefReLU()`` in a grading test cost the reference solution a point
    ("The check stopped with NameError"), exit 0 and no grader error. A NameError raised in the tests' own
    file is the staff's mistake: every row a grader error naming the file and line, nothing scored."""
    _, res, rows, graded = _batch(tmp_path, before="Ref_typo(); ")
    assert {s.status for s in res.submissions} == {"grader error"}, rows
    for data in graded.values():
        error = data["extra_data"]["grader_error"]
        assert "the test raised NameError: name 'Ref_typo' is not defined (test_scaled.py, line" in error, data
        assert "this test is faulty" in data["tests"][0]["output"], data
