"""tester17g's grader findings (session 17): F1 the top-level output showed hidden tests' points, M4 a grader
error kept finished tests' points in results.json (0 in the gradebook), F2 a submission's freed address space
made every check a grader error, F6 resume kept scores after a reference outside ``--tests`` changed, F3 the
200-file cap and deep folders, F4 a deep zip, F7 escapes in names, F5 a package's notes.

Plain (unsandboxed) runs where the finding is in the grader; the sandbox only where the finding lives there.
"""

import csv
import json
import os
from pathlib import Path

from gradcheck.grading.runner import GRADER_ERROR, grade_submission, write_gradebook

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "assignments" / "linear_relu_ce" / "solution"

_HEAD = ("import numpy as np\nimport pytest\nfrom manualprop import Linear\n\n"
         "class Broken(Linear):\n    def forward(self, X, training=False):\n"
         "        return super().forward(X, training=training) * np.nan\n\n")
_TEST = ("@pytest.mark.points({pts})\n@pytest.mark.visibility('{vis}')\ndef test_{n}(student, grade, rng):\n"
         "    '{n}'\n    grade.layer_forward(student.layer('layers.py', 'Linear', in_features=5, out_features=3),\n"
         "                        rng.standard_normal((8, 5)), {ref}(5, 3), points={pts})\n\n")


def _tests(folder: Path, *specs: tuple) -> Path:
    folder.mkdir(parents=True)
    body = "".join(_TEST.format(n=n, pts=p, vis=v, ref=r) for n, p, v, r in specs)
    (folder / "test_t.py").write_text(_HEAD + body)
    return folder


def test_the_output_students_see_counts_only_the_tests_visible_to_them_now(tmp_path):
    """F1: "Score: 22.6667 / 28." counted hidden and after_due_date tests; the score keeps the full total."""
    tests = _tests(tmp_path / "tests", ("a", 2, "visible", "Linear"), ("b", 3, "hidden", "Linear"),
                   ("c", 4, "after_due_date", "Linear"))
    r = grade_submission(SOLUTION, tests, tmp_path / "out", unsafe_no_isolation=True)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert r.status == "graded" and data["score"] == 9.0 and data["extra_data"]["max_score"] == 9.0
    assert data["output"].startswith("Score on the tests visible now: 2 / 2. Other tests count in your final score: "
                                      "some are shown later, some are not shown.")  # hidden and after_due_date
    assert "9" not in data["output"].split("Note:")[0]


def test_a_grader_error_scores_0_in_results_json_as_in_the_gradebook(tmp_path):
    """M4: a faulty reference's grader error kept the finished test's 2 points in results.json (0 in the
    gradebook); both say 0 now, the finished test's row saying what it gave."""
    tests = _tests(tmp_path / "tests", ("a", 2, "visible", "Linear"), ("b", 3, "visible", "Broken"))
    r = grade_submission(SOLUTION, tests, tmp_path / "out", unsafe_no_isolation=True)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert r.status == GRADER_ERROR and data["extra_data"]["status"] == GRADER_ERROR
    assert data["score"] == 0.0 and [t["score"] for t in data["tests"]] == [0.0, 0.0]
    assert data["tests"][0]["output"].startswith("Not counted: the autograder failed in another test")
    assert "this test gave 2 / 2" in data["tests"][0]["output"] and "not final" in data["output"]
    write_gradebook(tmp_path / "gradebook.csv", [r], seed=0)
    row = next(csv.DictReader((tmp_path / "gradebook.csv").open()))
    assert (row["score"], row["status"]) == ("0", GRADER_ERROR)


def test_resume_grades_again_when_a_reference_outside_the_tests_folder_changed(tmp_path):
    """F6: the tests import their reference from a staff folder beside them (sys.path.insert); fixing its
    db (a mean) kept the stale 4 / 6 on resume ("1 skipped"). The modules the tests load from outside their
    folder (and gradcheck's, manualprop's sources) are recorded in each result and compared on resume."""
    from gradcheck.grading.runner import grade_batch

    (tmp_path / "ref").mkdir()
    ref = tmp_path / "ref" / "ref_linear.py"
    ref.write_text("from manualprop import Linear as _L\n\nclass Linear(_L):\n    def backward(self, dY):\n"
                   "        dX = super().backward(dY)\n        self.grads['b'] = dY.mean(axis=0)\n        return dX\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_ext.py").write_text(
        "import os, sys\nimport pytest\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'ref'))\n"
        "from ref_linear import Linear as RefLinear\n\n@pytest.mark.points(6)\n"
        "def test_lin(student, grade, rng):\n    'Linear'\n"
        "    grade.layer_gradients(student.layer('layers.py', 'Linear', in_features=5, out_features=3),\n"
        "                          rng.standard_normal((8, 5)), RefLinear(5, 3), parts={'dX': 2, 'dW': 2, 'db': 2},"
        " numerical=False)\n")
    subs = tmp_path / "subs"
    (subs / "sol").mkdir(parents=True)
    (subs / "sol" / "layers.py").write_text((SOLUTION / "layers.py").read_text())
    kw = dict(workers=1, seed=1, progress=False, plot=False, unsafe_no_isolation=True)
    first = grade_batch(subs, tmp_path / "tests", tmp_path / "out", **kw)
    assert [(s.status, s.score) for s in first.submissions] == [("graded", 4.0)]
    recorded = json.loads((tmp_path / "out" / "sol" / "results.json").read_text())["extra_data"]["tests_imports"]
    assert recorded["../ref/ref_linear.py"] and "package:gradcheck" in recorded  # newuser24 L7: no host path
    assert not any(os.path.isabs(p) for p in recorded)
    ref.write_text(ref.read_text().replace("dY.mean(axis=0)", "dY.sum(axis=0)"))
    again = grade_batch(subs, tmp_path / "tests", tmp_path / "out", **kw)
    assert [(s.status, s.score) for s in again.submissions] == [("graded", 6.0)]
    assert f"warning: the modules the grading tests import from outside --tests ({ref.resolve()}) changed" \
        in again.summary()


def test_resume_grades_again_when_a_reference_imported_inside_a_test_function_changed(tmp_path):
    """F6 (rest): a reference imported only inside the test function (after collection) was not recorded: a
    resume after staff fixed it kept the stale 4 / 6. The tests' files are walked for imports anywhere; an
    ``importlib.import_module`` of a computed name is named in a warning on resume, never silently ignored."""
    from gradcheck.grading.runner import grade_batch

    (tmp_path / "ref").mkdir()
    ref = tmp_path / "ref" / "ref_linear.py"
    ref.write_text("from manualprop import Linear as _L\n\nclass Linear(_L):\n    def backward(self, dY):\n"
                   "        dX = super().backward(dY)\n        self.grads['b'] = dY.mean(axis=0)\n        return dX\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(
        "import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'ref'))\n\n"
        "def helper(name):\n    import importlib\n    return importlib.import_module(name)\n")
    (tmp_path / "tests" / "test_in.py").write_text(
        "import pytest\n\n@pytest.mark.points(6)\ndef test_lin(student, grade, rng):\n    'Linear'\n"
        "    from ref_linear import Linear as RefLinear\n"
        "    grade.layer_gradients(student.layer('layers.py', 'Linear', in_features=5, out_features=3),\n"
        "                          rng.standard_normal((8, 5)), RefLinear(5, 3), parts={'dX': 2, 'dW': 2, 'db': 2},"
        " numerical=False)\n")
    subs = tmp_path / "subs"
    (subs / "sol").mkdir(parents=True)
    (subs / "sol" / "layers.py").write_text((SOLUTION / "layers.py").read_text())
    kw = dict(workers=1, seed=1, progress=False, plot=False, unsafe_no_isolation=True)
    first = grade_batch(subs, tmp_path / "tests", tmp_path / "out", **kw)
    assert [(s.status, s.score) for s in first.submissions] == [("graded", 4.0)]
    recorded = json.loads((tmp_path / "out" / "sol" / "results.json").read_text())["extra_data"]["tests_imports"]
    assert recorded["../ref/ref_linear.py"] and recorded["conftest.py:6"] == "dynamic"
    ref.write_text(ref.read_text().replace("dY.mean(axis=0)", "dY.sum(axis=0)"))
    again = grade_batch(subs, tmp_path / "tests", tmp_path / "out", **kw)
    assert [(s.status, s.score) for s in again.submissions] == [("graded", 6.0)]
    assert f"warning: the modules the grading tests import from outside --tests ({ref.resolve()}) changed" \
        in again.summary()
    kept = grade_batch(subs, tmp_path / "tests", tmp_path / "out", **kw)  # nothing changed: kept, with a warning
    assert [(s.status, s.score) for s in kept.submissions] == [("skipped", 6.0)]
    assert "warning: the grading tests import a module by a name computed at run time (conftest.py:6): cannot " \
        "tell whether it changed" in kept.summary()


def test_a_reference_that_disagrees_with_its_own_central_differences_is_a_faulty_test():
    """F6 (related): a reference with db = dY.mean told a correct student "db is 8 times too large"; the
    reference's own gradients are checked by central differences when the student's disagree with them."""
    import numpy as np
    import pytest

    from gradcheck.grading.checks import GradingTestError, layer_gradients
    from manualprop import Linear

    class MeanDb(Linear):
        def backward(self, dY):
            dX = super().backward(dY)
            self.grads["b"] = dY.mean(axis=0)
            return dX

    X = np.random.default_rng(1).standard_normal((8, 5))
    with pytest.raises(GradingTestError, match=r"the reference's own gradient db disagrees with central differences"):
        layer_gradients(Linear(5, 3), X, MeanDb(5, 3), parts={"dX": 2, "dW": 2, "db": 2}, seed=1)
    wrong = layer_gradients(MeanDb(5, 3), X, Linear(5, 3), parts={"dX": 2, "dW": 2, "db": 2}, seed=1)
    assert [p.passed for p in wrong.parts] == [True, True, False]  # a wrong student against a right reference


def test_the_files_the_tests_load_by_name_are_read_whatever_the_count_cap(tmp_path):
    """F3 'many': 10,000 f*.py files and layers.py; the 200-file cap kept the first 200 in walk order, and
    layers.py was "larger than 1 MiB (or ... more than 200 .py files)". The file a test names is read."""
    from gradcheck.grading.plugin import MAX_FILES, _SandboxHolder

    for i in range(MAX_FILES + 10):
        (tmp_path / f"f{i:05d}.py").write_text("")
    (tmp_path / "layers.py").write_text("x = 1\n")
    (tmp_path / "big.py").write_text("#" * (1 << 20) + "\n")
    holder = _SandboxHolder(None, tmp_path)
    assert "layers.py" not in holder.files() and len(holder.files()) == MAX_FILES
    holder.require("layers.py")
    files = holder.files()
    assert "layers.py" in files and len(files) == MAX_FILES
    assert any(f"has {MAX_FILES + 11} .py files; the autograder reads at most {MAX_FILES}" in n for n in holder.notes)
    try:
        holder.require("big.py")
    except AssertionError as exc:  # GradingFailure
        assert str(exc) == ("Your submission's `big.py` was not loaded: it holds 1,048,577 bytes, more than the "
                            "1,048,576 bytes (1 MiB) the autograder reads of one file.")
    else:
        raise AssertionError("big.py was read")


def test_a_package_in_place_of_the_module_gets_one_clear_message(tmp_path):
    """L9: layers/__init__.py alone got "graded as if at the top level" and "no layers.py at its top level"."""
    from gradcheck.grading.plugin import _SandboxHolder

    (tmp_path / "layers").mkdir()
    (tmp_path / "layers" / "__init__.py").write_text("x = 1\n")
    holder = _SandboxHolder(None, tmp_path)
    try:
        holder.require("layers.py")
    except AssertionError as exc:
        msg = str(exc)
    assert holder.root == tmp_path and not holder.notes
    assert "`layers/` is a package (a folder holding `__init__.py`), not the file `layers.py`" in msg
    assert "Did you upload the right file" not in msg


def test_deep_folders_and_deep_zip_members_are_refused_naming_the_depth(tmp_path):
    """F3 'deep' (900 nested folders: 1.85 s a walk, at each load) and F4 (a 1500-deep zip member read as "not a
    zip archive ... RecursionError"): refused, saying the depth is the problem."""
    import zipfile

    import pytest

    from gradcheck.grading.archive import MAX_DEPTH, ArchiveRefused, unpack
    from gradcheck.grading.runner import not_a_submission, submission_digest

    deep = tmp_path / "deep"
    (deep / Path(*["d"] * (MAX_DEPTH + 1))).mkdir(parents=True)
    (deep / "layers.py").write_text("x = 1\n")
    why = not_a_submission(deep)
    assert why.startswith(f"This submission is not graded: its folders nest more than {MAX_DEPTH} levels deep")
    assert submission_digest(deep) == submission_digest(deep)
    ok = tmp_path / "ok"
    (ok / Path(*["d"] * MAX_DEPTH)).mkdir(parents=True)
    assert not_a_submission(ok) is None
    with zipfile.ZipFile(tmp_path / "deep.zip", "w") as zf:
        zf.writestr("a/" * 1500 + "layers.py", "x = 1\n")
    (tmp_path / "into").mkdir()
    with pytest.raises(ArchiveRefused, match=f"lies 1500 folders deep, more than the {MAX_DEPTH} the grader unpacks"):
        unpack(tmp_path / "deep.zip", tmp_path / "into")
