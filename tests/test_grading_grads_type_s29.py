"""A ``grads`` that is not a dict is the student's failure, and a grader error in a hidden test changes nothing the
student sees at once (redteam29 F1, F1b, F2).

A tuple, list or MappingProxyType ``grads`` became a stand-in object in the sandbox's proxy; a grading check
(``.items()``) and a staff test (``lin.grads.get("W")``) raised AttributeError on it: a grader error, every visible
row rewritten "Not counted", the staff's test called faulty, and, with the tuple returned only on a hidden test's
batch, one bit of the hidden input told to the student per submission. Each test here is a hostile submission and
fails on the code before the fix.
"""

import json
from pathlib import Path

import pytest

from gradcheck.grading.runner import grade_submission
from tests.test_grading_keys_s35 import shown

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = (ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py").read_text()
BW = '''        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(axis=0)
        return dY @ self.params["W"]'''


def _with_grads(expr: str) -> str:
    """The solution's Linear with ``self.grads = expr`` (dW and db right) in its backward."""
    assert BW in SOLUTION
    return "import types\n" + SOLUTION.replace(BW, f'''        dW, db = dY.T @ self.X, dY.sum(axis=0)
        self.grads = {expr}
        return dY @ self.params["W"]''')


TESTS = '''import numpy as np
import pytest
from manualprop import Linear as RefLinear

@pytest.mark.visibility("visible")
@pytest.mark.points(6)
def test_visible(student, grade, rng):
    """Linear: gradients"""
    layer = student.layer("layers.py", "Linear", in_features=5, out_features=3)
    grade.layer_gradients(layer, rng.standard_normal((4, 5)), RefLinear(5, 3), parts={"dX": 2, "dW": 2, "db": 2})

@pytest.mark.visibility("visible")
@pytest.mark.points(1)
def test_reads_grads(student, grade, rng):
    """Linear: grads read by the test"""
    lin = student.layer("layers.py", "Linear", in_features=5, out_features=3)
    lin.forward(rng.standard_normal((4, 5)))
    lin.backward(np.ones((4, 3)))
    assert lin.grads.get("W").shape == (3, 5)

@pytest.mark.visibility("hidden")
@pytest.mark.points(6)
def test_hidden(student, grade, rng):
    """Hidden: Linear gradients, a big batch"""
    layer = student.layer("layers.py", "Linear", in_features=5, out_features=3)
    grade.layer_gradients(layer, rng.standard_normal((16, 5)), RefLinear(5, 3), parts={"dX": 2, "dW": 2, "db": 2})
HIDDEN_FAULT'''


def _grade(tmp_path, layers: str, tests: str = TESTS) -> tuple[object, dict, dict]:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(layers)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_staff.py").write_text(tests.replace("HIDDEN_FAULT", ""))
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", timeout=20.0, seed=5)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    return r, data, {t["name"]: t for t in data["tests"]}


def test_a_mapping_grads_is_read_as_a_dict(tmp_path):
    """review30: any Mapping is read as check_grads reads it in process (a MappingProxyType was 'must be a dict' in
    the sandbox alone); its right dW and db score, and the staff's own read of it works."""
    r, data, rows = _grade(tmp_path, _with_grads('types.MappingProxyType({"W": dW, "b": db})'))
    assert r.status == "graded" and "grader_error" not in data["extra_data"], data["extra_data"].get("grader_error")
    assert rows["Linear: gradients"]["score"] == 6.0 and rows["Linear: grads read by the test"]["score"] == 1.0, rows
    assert not any("must be a dict" in t["output"] for t in data["tests"])


@pytest.mark.parametrize("expr, kind", [("(dW, db)", "tuple"), ("[dW, db]", "list")])
def test_grads_not_a_dict_is_the_students_failure_in_checks_sentence(tmp_path, expr, kind):
    r, data, rows = _grade(tmp_path, _with_grads(expr))
    assert r.status == "graded" and "grader_error" not in data["extra_data"], data["extra_data"].get("grader_error")
    said = f"Linear.grads must be a dict; got {kind}"
    for name in ("Linear: gradients", "Linear: grads read by the test"):  # F1b; F2: the staff's own test
        row = rows[name]
        assert row["score"] < row["max_score"] and said in " ".join(shown(row["output"]).split()), row
        assert "faulty" not in row["output"] and "Not counted" not in row["output"], row
    assert not any(t["output"].startswith("Not counted") for t in data["tests"])


def test_a_tuple_on_a_hidden_batch_alone_leaks_nothing_to_the_visible_rows(tmp_path):
    # F1: the tuple only when the batch has >= 12 rows: the visible tests (4 rows) pass, the hidden one (16) fails
    r, data, rows = _grade(tmp_path, _with_grads('(dW, db) if dY.shape[0] >= 12 else {"W": dW, "b": db}'))
    assert r.status == "graded", data["extra_data"].get("grader_error")
    assert rows["Linear: gradients"]["score"] == 6.0 and rows["Linear: grads read by the test"]["score"] == 1.0
    assert data["output"].startswith("Score on the tests visible now: 7 / 7.")
    hidden = rows["Hidden: Linear gradients, a big batch"]
    assert "Linear.grads must be a dict; got tuple" in " ".join(shown(hidden["output"]).split()), hidden


def test_a_grader_error_in_a_hidden_test_leaves_the_visible_rows_as_they_were(tmp_path):
    # any grader error a submission can cause in a hidden test would otherwise tell one bit of its input: the visible
    # rows keep their scores and outputs and the top-level output is the visible score line, as _later_too_slow's
    fault = '''
@pytest.mark.visibility("hidden")
def test_hidden_faulty(student, grade, rng):
    """Hidden: a staff mistake"""
    student.layer("layers.py", "Linear", in_features=5, out_features=3)
    {}["missing"]
'''
    r, data, rows = _grade(tmp_path, SOLUTION, TESTS + fault.replace("HIDDEN_FAULT", ""))
    assert r.status == "grader error" and "test_hidden_faulty" in data["extra_data"]["grader_error"]
    visible = [t for t in data["tests"] if t["visibility"] == "visible"]
    assert [(t["score"], t["status"]) for t in visible] == [(6.0, "passed"), (1.0, "passed")], visible
    assert not any("Not counted" in t["output"] or "failed" in t["output"] for t in visible), visible
    assert data["output"].startswith("Score on the tests visible now: 7 / 7."), data["output"]
    hidden = [t for t in data["tests"] if t["visibility"] == "hidden"]
    assert all(t["score"] == 0 for t in hidden), hidden
