"""gradcheck.grading: the example assignment's solution, stub and seeded mutants; outputs; CLI; units.

The mutant batch is graded once per session (module fixture) with 2 workers;
each test below reads its results.
"""

import csv
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from gradcheck.grading import diagnose, forbidden_imports
from gradcheck.grading.runner import (
    check_grading_inputs,
    grade_batch,
    grade_submission,
    is_single_submission,
)
from tests.test_grading_keys_s35 import shown

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
TESTS = ASSIGN / "tests"
#: two tests worth the assignment's 28 points, for the tests that read statuses, scores and files, not what a check found
#: (the assignment's eleven tests cost about 1.2 CPU-s more a grading; tests/fixtures/grading_28_points)
BOOKKEEPING = ROOT / "tests" / "fixtures" / "grading_28_points"
MUTANTS = json.loads((ASSIGN / "mutants" / "MUTANTS.json").read_text())
TOTAL = 28.0


def copy_submission(src: Path, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "layers.py").write_text((src / "layers.py").read_text())
    return dest


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """Grade solution, stub and every mutant in one batch (2 workers, seed 11)."""
    subs = tmp_path_factory.mktemp("subs")
    copy_submission(ASSIGN / "solution", subs / "solution")
    copy_submission(ASSIGN / "stub", subs / "stub")
    for name in MUTANTS:
        copy_submission(ASSIGN / "mutants" / name, subs / name)
    out = tmp_path_factory.mktemp("graded")
    res = grade_batch(subs, TESTS, out, workers=2, seed=11, timeout=3.0, progress=False)
    return subs, out, res


def results(out: Path, name: str) -> dict:
    return json.loads((out / name / "results.json").read_text())


def failing(data: dict) -> dict:
    return {t["name"]: t for t in data["tests"] if t["status"] != "passed"}


def test_solution_gets_full_marks(batch):
    _, out, _ = batch
    data = results(out, "solution")
    assert data["score"] == TOTAL and not failing(data)
    assert data["extra_data"]["seed"] == 11 and data["extra_data"]["complete"] is True
    # the three after_due_date tests share one process of their own (one per hidden visibility, not per test)
    assert data["extra_data"]["sandbox_starts"] == 1 and data["extra_data"]["hidden_sandbox_starts"] == 1


def test_stub_gets_zero_without_a_crash(batch):
    _, out, res = batch
    data = results(out, "stub")
    assert data["score"] == 0 and all(t["score"] == 0 for t in data["tests"])
    assert [s.status for s in res.submissions if s.name == "stub"] == ["graded"]
    first = shown(data["tests"][0]["output"])
    assert "raised NotImplementedError: Linear.forward is not written yet" in first
    assert "Traceback" not in json.dumps(data)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_fails_exactly_the_intended_tests(batch, mutant):
    _, out, _ = batch
    spec = MUTANTS[mutant]
    bad = failing(results(out, mutant))
    assert sorted(bad) == sorted(spec["fails"]), {k: v["output"] for k, v in bad.items()}
    for name in spec["fails"]:
        assert spec["diagnosis"] in bad[name]["output"], bad[name]["output"]
        assert "Traceback" not in bad[name]["output"] and "assert " not in bad[name]["output"]


def test_partial_credit_per_tensor(batch):
    _, out, _ = batch
    t = failing(results(out, "db_mean"))["Linear: gradients dX, dW, db (2 points each)"]
    assert (t["score"], t["max_score"]) == (4.0, 6.0)
    assert "`dX`: ok" in t["output"] and "`dW`: ok" in t["output"] and "`db`: **wrong**" in t["output"]


def test_results_json_follows_the_gradescope_schema(batch):
    _, out, _ = batch
    data = results(out, "db_mean")
    assert set(data) >= {"score", "tests", "output", "stdout_visibility", "execution_time"}
    assert data["stdout_visibility"] == "hidden"
    for t in data["tests"]:
        assert set(t) == {"name", "score", "max_score", "status", "output", "output_format", "visibility"}
        assert t["status"] in ("passed", "failed") and t["output_format"] == "md"
        assert t["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    vis = {t["name"]: t["visibility"] for t in data["tests"]}
    assert vis["Hidden: Linear gradients for random sizes and batch sizes"] == "after_due_date"
    assert vis["Linear: forward output"] == "visible"


def test_hidden_tests_record_their_seed(batch):
    _, out, _ = batch
    data = results(out, "solution")
    hidden = [t for t in data["tests"] if t["name"].startswith("Hidden")]
    assert hidden and all("(seed 11)" in t["output"] for t in hidden)


def test_docs_gradescope_example_states_this_batchs_scores(batch):
    # docs/gradescope.md's example is this batch (solution, stub, the 9 mutants, seed 11): its scores line must be
    # what grading it gives (it said mean 21.30 long after the batch gave 20.60)
    _, _, res = batch
    doc = (ROOT / "docs" / "gradescope.md").read_text()
    example = doc[doc.index("Example (the assignment's solution, stub and 9 mutants"):]
    assert "--seed 11" in example.split("```")[1]
    stated = next(line for line in example.splitlines() if line.startswith("scores out of 28: "))
    assert stated in res.summary().splitlines(), res.summary().splitlines()[1]


def test_junit_xml_has_points_as_properties(batch):
    _, out, _ = batch
    root = ET.parse(out / "db_mean" / "junit.xml").getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == 11
    props = {p.get("name"): p.get("value") for p in cases[1].findall(".//property")}
    assert props["points"] == "6.0" and props["score"] == "4.0"
    assert len(root.findall(".//failure")) == 3  # Linear, visible and hidden; float64 (right values only)


def test_gradebook_and_histogram(batch):
    _, out, res = batch
    rows = list(csv.DictReader(open(out / "gradebook.csv")))
    assert len(rows) == len(MUTANTS) + 2
    by = {r["submission"]: r for r in rows}
    assert by["solution"]["score"] == "28" and by["stub"]["score"] == "0" and by["solution"]["seed"] == "11"
    assert float(by["db_mean"]["Linear: gradients dX, dW, db (2 points each)"]) == 4.0
    assert (out / "scores.png").stat().st_size > 15_000
    assert "graded 11 submission(s)" in res.summary() and "per minute" in res.summary()


def test_batch_is_resumable_and_force_regrades(batch, tmp_path):
    subs, out, _ = batch
    again = grade_batch(subs, TESTS, out, workers=2, progress=False)
    assert {s.status for s in again.submissions} == {"skipped"} and again.seed == 11
    assert {s.name: s.score for s in again.submissions}["solution"] == TOTAL
    # a skipped submission's time is its saved grading's time, in the result and in the gradebook
    saved = results(out, "solution")["extra_data"]["seconds"]  # execution_time: whole seconds, as Gradescope's spec
    assert results(out, "solution")["execution_time"] == math.ceil(saved)
    assert saved > 0 and {s.name: s.seconds for s in again.submissions}["solution"] == saved
    with open(out / "gradebook.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["submission"] == "solution")
    assert row["status"] == "graded" and row["seconds"] == f"{saved:.2f}"
    # an incomplete (placeholder) results.json is regraded
    (out / "stub" / "results.json").write_text(json.dumps({"score": 0, "tests": [], "extra_data": {"complete": False}}))
    third = grade_batch(subs, TESTS, out, workers=2, progress=False, plot=False)
    assert {s.name: s.status for s in third.submissions}["stub"] == "graded"


@pytest.mark.fresh_grading_child  # the path of gradcheck grade --single: a fresh python -m pytest (tests/conftest.py)
def test_zero_score_results_exist_before_student_code_runs(tmp_path):
    sub = copy_submission(ASSIGN / "solution", tmp_path / "slow")
    (sub / "layers.py").write_text("import time\ntime.sleep(2.5)\n" + (sub / "layers.py").read_text())
    out = tmp_path / "out"
    seen = {}

    def watch():
        for _ in range(400):
            p = out / "results.json"
            if p.exists():
                seen.update(json.loads(p.read_text()))
                return
            time.sleep(0.01)

    th = threading.Thread(target=watch)
    th.start()
    r = grade_submission(sub, TESTS / "test_linear_relu_ce.py", out, timeout=3.0, submission_timeout=60)
    th.join()
    assert seen["score"] == 0 and seen["extra_data"]["complete"] is False
    assert r.status == "graded"


def test_forbidden_import_gets_no_credit_with_a_clear_message(tmp_path):
    sub = copy_submission(ASSIGN / "solution", tmp_path / "uses_autograd")
    (sub / "layers.py").write_text("import autograd.numpy as anp  # noqa\n" + (sub / "layers.py").read_text())
    r = grade_submission(sub, TESTS, tmp_path / "out", timeout=3.0)
    data = json.loads(Path(r.results_path).read_text())
    assert data["score"] == 0
    msg = data["tests"][0]["output"]
    assert "may not be imported" in msg and "`import autograd.numpy as anp" in msg and "line 1" in msg


def test_submission_conftest_and_ini_are_never_read(tmp_path):
    sub = copy_submission(ASSIGN / "mutants" / "db_mean", tmp_path / "sneaky")
    (sub / "conftest.py").write_text(
        "import pytest\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    out = yield\n"
        "    out.get_result().outcome = 'passed'\n")
    (sub / "pytest.ini").write_text("[pytest]\naddopts = -p no:gradcheck.grading.plugin\n")
    (sub / "sitecustomize.py").write_text("import numpy\nnumpy.allclose = lambda *a, **k: True\n")
    r = grade_submission(sub, TESTS, tmp_path / "out", timeout=3.0)
    # the db-mean bug: db, visible and hidden, and the float64 property (its points need right values)
    assert r.status == "graded" and r.score == pytest.approx(TOTAL - 2 - 4 / 3 - 2, abs=1e-3)


# --------------------------------------------------------------------------- CLI


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "gradcheck", "grade", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "MPLBACKEND": "Agg"})


def test_cli_grade_one_submission(tmp_path):
    p = _cli(ASSIGN / "mutants" / "float32", "--tests", TESTS, "--out", tmp_path / "one")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "float32: 22.6667 / 28" in p.stdout  # its dX parts too, as check fails a float32 dX (redteam25 M1)
    assert (tmp_path / "one" / "results.json").exists() and (tmp_path / "one" / "junit.xml").exists()


def test_cli_grade_usage_errors(tmp_path):
    p = _cli(tmp_path / "missing", "--tests", TESTS, "--out", tmp_path / "o")
    assert p.returncode == 2 and "not a folder" in " ".join(p.stderr.split())
    sub = copy_submission(ASSIGN / "solution", tmp_path / "s")
    p = _cli(sub, "--tests", TESTS, "--out", sub / "out")
    assert p.returncode == 2 and "must not be inside SUBMISSION" in " ".join(p.stderr.split())


@pytest.mark.parametrize("how", ["out_is_a_link_into", "submissions_through_a_link", "out_through_a_link"])
def test_out_inside_the_submissions_is_refused_through_links(tmp_path, how):
    """The real paths are compared (tester report, session 6, N9): before, an --out that is a link into
    the submissions folder, or the submissions folder given through a link, wrote the results among the
    students, and the next run graded them as a student."""
    from gradcheck.errors import UsageError
    from gradcheck.grading.runner import check_grading_inputs

    subs = tmp_path / "subs"
    copy_submission(ASSIGN / "solution", subs / "alice")
    (tmp_path / "subs_link").symlink_to(subs)
    (tmp_path / "out_link").symlink_to(subs / "zz_out")  # a link to a folder not made yet
    (tmp_path / "outs").symlink_to(subs)
    submissions, out = {"out_is_a_link_into": (subs, tmp_path / "out_link"),
                        "submissions_through_a_link": (tmp_path / "subs_link", subs / "zz_out"),
                        "out_through_a_link": (subs, tmp_path / "outs" / "zz_out")}[how]
    with pytest.raises(UsageError, match="--out must not be inside SUBMISSION"):
        check_grading_inputs(submissions, TESTS, out, batch=True, isolation_here=False)
    assert sorted(p.name for p in subs.iterdir()) == ["alice"]  # nothing written among the students
    check_grading_inputs(tmp_path / "subs_link", TESTS, tmp_path / "results", batch=True, isolation_here=False)


def test_a_link_in_a_submission_is_refused_saying_links_inside_a_submission(tmp_path):
    """A top-level link to a folder is a submission and graded (docs/gradescope.md), so the message
    says what is true: links *inside* a submission are never followed (tester report, session 6, N9)."""
    from gradcheck.grading.checks import GradingFailure
    from gradcheck.grading.plugin import _SandboxHolder

    sub = tmp_path / "bob"
    sub.mkdir()
    (sub / "layers.py").symlink_to(ASSIGN / "solution" / "layers.py")
    holder = _SandboxHolder(None, sub)
    with pytest.raises(GradingFailure) as exc:
        holder.require("layers.py")
    assert ("`layers.py` was not read: it is a symbolic link, and the autograder never follows links inside a "
            "submission (nor reads devices or pipes). Upload the file itself.") in str(exc.value)
    assert holder.notes == ["`layers.py` was not read: it is a symbolic link (the autograder never follows links "
                            "inside a submission, nor reads devices or pipes)."]


@pytest.mark.parametrize("place", [".hidden", ".git", "link"])
def test_a_layers_py_in_a_dot_folder_or_behind_a_link_is_named_as_not_read(tmp_path, place):
    """Before, such a submission was told 'found: no files at all' (tester report, session 6, N11)."""
    from gradcheck.grading.checks import GradingFailure
    from gradcheck.grading.plugin import _SandboxHolder

    sub = tmp_path / "gina"
    sub.mkdir()
    if place == "link":
        (sub / "sub").symlink_to(ASSIGN / "solution", target_is_directory=True)
    else:
        (sub / place).mkdir()
        (sub / place / "layers.py").write_text("x = 1\n")
        (sub / place / "config").write_text("")
    with pytest.raises(GradingFailure) as exc:
        _SandboxHolder(None, sub).require("layers.py")
    msg = str(exc.value)
    assert msg.startswith("Your submission has no `layers.py` at its top level; found: no file the autograder "
                          "reads. Not read: "), msg
    if place == "link":
        assert (f"Not read: `sub` (a symbolic link to `{ASSIGN / 'solution'}`: the autograder never follows links "
                "inside a submission).") in msg
        assert msg.endswith("Upload the files themselves, not a link to them.")
    else:
        assert (f"Not read: `{place}/` (a folder whose name starts with a dot: the autograder skips it; it holds "
                f"`{place}/layers.py`).") in msg
    assert "no files at all" not in msg and "Did you upload the right file" not in msg
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(GradingFailure, match="found: no files at all. Name the file exactly"):
        _SandboxHolder(None, empty).require("layers.py")


def test_a_link_to_a_folder_in_a_submission_gets_a_note_as_a_link_to_a_file_does(tmp_path):
    """Before: a linked folder beside a layers.py that was read (helpers the student's code may import)
    was skipped with no word in the results; a link to a file got its note."""
    from gradcheck.grading.plugin import _SandboxHolder

    sub = tmp_path / "erin"
    sub.mkdir()
    (sub / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "util.py").write_text("X = 1\n")
    (sub / "helpers").symlink_to(tmp_path / "shared", target_is_directory=True)
    holder = _SandboxHolder(None, sub)
    assert list(holder.files()) == ["layers.py"]
    holder.require("layers.py")
    assert holder.notes == ["`helpers/` was not read: it is a symbolic link to a folder (the autograder never "
                            "follows links inside a submission); upload the files themselves."]


def test_a_dot_file_is_named_among_what_the_submission_holds_but_is_not_read(tmp_path):
    """Before: a submission of `.layers.py` was told 'found: no files at all'."""
    from gradcheck.grading.checks import GradingFailure
    from gradcheck.grading.plugin import _SandboxHolder

    sub = tmp_path / "carol"
    (sub / "hw").mkdir(parents=True)
    (sub / ".layers.py").write_text("x = 1\n")
    (sub / "hw" / ".helper.py").write_text("x = 1\n")
    (sub / ".DS_Store").write_text("")  # not a .py file: not named
    with pytest.raises(GradingFailure) as exc:
        _SandboxHolder(None, sub).require("layers.py")
    msg = str(exc.value)
    assert msg.startswith("Your submission has no `layers.py` at its top level; found: no file the autograder "
                          "reads. Not read: `.layers.py` (a file whose name starts with a dot: the autograder skips "
                          "it); `hw/.helper.py` (a file whose name starts with a dot: the autograder skips it)."), msg
    assert ".DS_Store" not in msg and "no files at all" not in msg and "Did you upload the right file" not in msg


def test_single_or_batch_detection(tmp_path):
    assert is_single_submission(ASSIGN / "solution")
    assert not is_single_submission(ASSIGN / "mutants")


# --------------------------------------------------------------------------- units


def test_diagnose_signatures():
    rng = np.random.default_rng(0)
    E = rng.standard_normal((3, 5))
    assert "transposed" in diagnose("dW", E.T, E)
    assert "opposite sign" in diagnose("dX", -E, E)
    assert "mean over the batch" in diagnose("db", E[0] / 8, E[0], batch_size=8)  # a bias: (d,) (or (1, d))
    # a (3, 5) "db" is no bias by its shape (one rule with check's, review25g L3): the factor is named alone
    assert "8 times too small (batch size 8): an extra 1/batch" in diagnose("db", E / 8, E, batch_size=8)
    assert "8 times too large" in diagnose("db", E * 8, E, batch_size=8)
    assert "2 times the correct" in diagnose("dW", 2 * E, E)
    assert "not summed over the batch" in diagnose("db", np.stack([E[0] / 2, E[0] / 2]), E[0])
    assert "all zeros" in diagnose("dX", 0 * E, E)
    assert diagnose("dX", E, E) == ""
    assert "ignored" in diagnose("dX", E + 1, E, alternatives={"ignored": E + 1})
    S = rng.standard_normal((4, 4))
    assert "transposed" in diagnose("dW", S.T, S)
    assert "differs from the correct gradient in" in diagnose("dX", E + np.eye(3, 5), E)


def test_forbidden_imports_finds_every_form(tmp_path):
    f = tmp_path / "a.py"
    f.write_text("import numpy as np\nimport torch.nn as nn\nfrom jax import grad\n"
                 "m = __import__('tensorflow')\nimport importlib\nimportlib.import_module('autoprop.core')\n"
                 "from . import autograd\n")
    got = [(v.line, v.module) for v in forbidden_imports([str(f)])]
    assert got == [(2, "torch.nn"), (3, "jax"), (4, "tensorflow"), (6, "autoprop.core")]
    assert forbidden_imports([str(f)], ["scipy"]) == []


# --------------------------------------------------------------------------- staff errors (new-user report)


def _main(capsys, *args):
    from gradcheck.cli import main

    rc = main(["grade", *map(str, args)])
    out, err = capsys.readouterr()
    return rc, out, " ".join(err.split())


@pytest.mark.parametrize("case, needle", [
    ("seed", "--seed must be a non-negative integer; got -1"),
    ("memory", "--memory-mb must be at least 256 (MiB); got 1"),
    ("out_proc", "cannot be used as the output folder"),
    ("out_file", "exists and is not a folder"),
    ("tests_folder", "holds no grading tests: no test files"),
    ("tests_plain", "none of which takes the student or grade fixture"),
    ("empty_batch", "holds no submission folders (and no .zip files): nothing to grade (it is empty)"),
    ("tests_parent", "holds the grading tests of 2 assignments ('cs231n_layers', 'linear_relu_ce')"),
])
def test_grade_usage_errors_exit_2_before_anything_runs(tmp_path, capsys, case, needle):
    sub, out, tests, extra = ASSIGN / "solution", tmp_path / "out", TESTS, []
    if case == "seed":
        extra = ["--seed", "-1"]
    elif case == "memory":
        extra = ["--memory-mb", "1"]
    elif case == "out_proc":
        out = Path("/proc/nope")
    elif case == "out_file":
        out = ASSIGN / "README.md"
    elif case == "tests_folder":
        tests = ASSIGN / "solution"
    elif case == "tests_parent":
        tests = ROOT / "assignments"  # two assignments' tests: their points would mix into one score
    elif case == "tests_plain":
        tests = tmp_path / "test_plain.py"
        tests.write_text("def test_arithmetic():\n    assert sum([1, 1]) == 2\n")  # no grading test in it
    else:
        sub = tmp_path / "submissions"
        sub.mkdir()
    rc, stdout, err = _main(capsys, sub, "--tests", tests, "--out", out, *extra)
    assert rc == 2 and needle in err and "Traceback" not in err, err
    assert stdout == "" and not (tmp_path / "out").exists()


def test_grade_help_lists_the_exit_codes(capsys):
    from gradcheck.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["grade", "--help"])
    text = capsys.readouterr().out
    assert exc.value.code == 0 and "exit codes:" in text
    for code in ("0 ", "1 ", "2 ", "130 "):
        assert f"\n  {code}" in text, code


def test_a_sandbox_that_cannot_start_is_a_grader_error(tmp_path, capsys):
    from gradcheck.sandbox import Sandbox, SandboxError

    with pytest.raises(SandboxError) as exc:
        Sandbox(files={"layers.py": str(ASSIGN / "solution" / "layers.py")}, memory_mb=40, timeout=5)
    assert exc.value.reason == "start" and "before any submitted code ran" in str(exc.value)
    # through the whole grader: tests whose sandbox gets 40 MiB (below the CLI's minimum on purpose)
    tests = tmp_path / "tests" / "test_tiny.py"
    tests.parent.mkdir()
    tests.write_text(
        "import pytest\n\n@pytest.fixture(autouse=True)\ndef _tiny(pytestconfig):\n"
        "    pytestconfig.option.grading_memory_mb = 40\n\n"
        "@pytest.mark.points(2)\ndef test_a(student, grade):\n    'A'\n    student.layer('layers.py', 'Linear')\n\n"
        "def test_b(student, grade):\n    'B'\n    student.layer('layers.py', 'Linear')\n")
    rc, stdout, err = _main(capsys, ASSIGN / "solution", "--tests", tests.parent, "--out", tmp_path / "out")
    assert rc == 1 and "grader error (not the submission's fault)" in err and "could not start" in err
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["extra_data"]["status"] == "grader error" and "sys.exit" not in json.dumps(data)
    assert "problem on the grader's side" in data["output"]
    # the session stopped at test_a; test_b still counts its point (Gradescope counts a failed test's points)
    assert [(t["name"], t["score"], t["max_score"], t["status"]) for t in data["tests"]] == [
        ("A", 0.0, 2.0, "failed"), ("B", 0.0, 1.0, "failed")]
    assert "the autograder stopped before this test" in data["tests"][1]["output"]
    assert data["extra_data"]["max_score"] == 3.0


def test_a_grader_error_counts_out_of_the_assignments_full_points(tmp_path):
    """A grader error row is 0 out of the assignment's points in results.json, the result and the
    gradebook (it was 0 / 0, so the submission dropped out of the denominator): whether the grader
    failed before its child ran (no rows of its own: the tests are collected) or the child crashed
    after collecting them (its rows so far)."""
    from gradcheck.grading.runner import GRADER_ERROR, write_gradebook

    sub = copy_submission(ASSIGN / "solution", tmp_path / "sub")
    out = tmp_path / "out"
    (out / "results.json").mkdir(parents=True)  # the grader's own failure: results.json cannot be replaced
    before = grade_submission(sub, TESTS, out, unsafe_no_isolation=True)
    assert (before.status, before.score, before.max_score) == (GRADER_ERROR, 0.0, TOTAL)
    crash = tmp_path / "tests" / "test_crash.py"
    crash.parent.mkdir()
    crash.write_text(
        "import os\nimport pytest\n\n@pytest.mark.points(2)\ndef test_a(student, grade):\n    'A'\n\n"
        "@pytest.mark.points(5)\ndef test_b(student, grade):\n    'B'\n    os._exit(3)\n\n"
        "def test_c(student, grade):\n    'C'\n")
    after = grade_submission(sub, crash.parent, tmp_path / "crash", unsafe_no_isolation=True)
    data = json.loads((tmp_path / "crash" / "results.json").read_text())
    assert (after.status, after.score, after.max_score) == (GRADER_ERROR, 0.0, 8.0)
    assert "pytest exit code 3" in data["output"] and data["extra_data"]["max_score"] == 8.0
    assert [(t["name"], t["score"], t["max_score"], t["status"]) for t in data["tests"]] == [
        ("A", 0.0, 2.0, "failed"), ("B", 0.0, 5.0, "failed"), ("C", 0.0, 1.0, "failed")]
    assert all("problem on the grader's side" in t["output"] for t in data["tests"])
    write_gradebook(tmp_path / "gradebook.csv", [before, after], seed=0)
    rows = list(csv.DictReader((tmp_path / "gradebook.csv").open()))
    assert [(r["score"], r["max_score"], r["status"]) for r in rows] == [("0", "28", GRADER_ERROR), ("0", "8", GRADER_ERROR)]


def test_a_faulty_reference_is_reported_as_a_faulty_test_not_as_the_students(tmp_path, capsys):
    """A test whose reference gives NaN is the grader's fault; the student is told so, with no score."""
    tests = tmp_path / "tests" / "test_faulty.py"
    tests.parent.mkdir()
    tests.write_text(
        "import numpy as np\nimport pytest\nfrom manualprop import Linear\n\n"
        "class Broken(Linear):\n    def forward(self, X, training=False):\n"
        "        return super().forward(X, training=training) * np.nan\n\n"
        "@pytest.mark.points(2)\ndef test_a(student, grade, rng):\n    'A'\n"
        "    grade.layer_forward(student.layer('layers.py', 'Linear', in_features=5, out_features=3),\n"
        "                        rng.standard_normal((8, 5)), Broken(5, 3), points=2)\n")
    rc, stdout, err = _main(capsys, ASSIGN / "solution", "--tests", tests.parent, "--out", tmp_path / "out")
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert rc == 1 and data["extra_data"]["status"] == "grader error"
    assert data["tests"][0]["score"] == 0 and "this test is faulty" in data["tests"][0]["output"]
    assert "before running your code" not in json.dumps(data)  # the student's code did run


def test_ctrl_c_stops_a_batch_promptly_and_keeps_what_finished(tmp_path):
    from tests.test_startup_signals import python

    subs, out = tmp_path / "subs", tmp_path / "out"
    for name in ("a_fast", "b_fast"):
        copy_submission(ASSIGN / "solution", subs / name)
    for name in ("c_slow", "d_slow", "e_slow"):
        (subs / name).mkdir(parents=True)
        # slow in every test: a constructor that sleeps (a hang at import is recorded once and fails fast)
        # (a layer: forward and backward; a class without them is refused at load, before its constructor runs)
        (subs / name / "layers.py").write_text(
            "import time\n\nclass Linear:\n    def __init__(self, *a, **k):\n        time.sleep(60)\n\n"
            "    def forward(self, X):\n        return X\n\n    def backward(self, dY):\n        return dY\n\n"
            "ReLU = SoftmaxCrossEntropy = Linear\n")
    # the grader starts with SIGINT at its default, whatever pytest's is (a background job's is ignored)
    proc = subprocess.Popen(python("-m", "gradcheck", "grade", str(subs), "--tests", str(TESTS), "--out", str(out),
                                   "--workers", "2", "--timeout", "60", "--no-progress"), cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "MPLBACKEND": "Agg"})
    try:
        deadline = time.monotonic() + 120
        while not all((out / n / "results.json").exists() for n in ("c_slow", "d_slow")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        time.sleep(0.5)  # the slow ones are inside their sandboxes
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        proc.kill()
    assert proc.returncode == 130 and took < 10, (proc.returncode, took, stderr)
    assert "Traceback" not in stderr and "interrupted after 2 of 5 submission(s); rerun the same command" in stdout
    rows = [r for r in csv.DictReader(open(out / "gradebook.csv")) if r["status"] == "graded"]
    assert sorted(r["submission"] for r in rows) == ["a_fast", "b_fast"] and {r["score"] for r in rows} == {"28"}
    assert results(out, "c_slow")["extra_data"]["complete"] is False  # resumed by the same command
    # (the unfinished ones' rows say "not graded": tests/test_grading_sigterm.py)


def test_docs_and_setup_name_every_dependency():
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [d.split(">")[0].split("=")[0].split("[")[0].strip() for d in deps]
    docs, setup = (ROOT / "docs" / "gradescope.md").read_text(), (ASSIGN / "setup.sh").read_text()
    assert "scikit-learn" in names
    assert [n for n in names if n not in docs] == [] and [n for n in names if n not in setup] == []


def test_docs_run_autograder_excerpt_is_the_files_command():
    # newuser21 L2: the excerpt left out --submission-timeout 600 and `|| true`
    import re

    def command(text):
        return " ".join(text[text.index("gradcheck grade /autograder"):].replace("\\\n", " ").split("\n")[0].split())

    doc = (ROOT / "docs" / "gradescope.md").read_text()
    block = re.search(r"`run_autograder` is the same command.*?```bash\n(.*?)```", doc, re.S).group(1)
    assert command(block) == command((ASSIGN / "run_autograder").read_text())  # the doc's assignment, linear_relu_ce
    assert command(block).endswith("--submission-timeout 600 || true")


def test_a_stray_script_beside_submission_folders_is_refused_as_ambiguous_and_batch_grades_them(
        tmp_path, capsys):
    # tester 7's T16: the staff's own collect.py beside alice/ and bob/ made the whole folder one
    # submission (0/28, no gradebook, exit 0) and the two full-mark students got nothing
    subs = tmp_path / "subs"
    for name in ("alice", "bob"):
        copy_submission(ASSIGN / "solution", subs / name)
    (subs / "collect.py").write_text("print(1)\n")
    out = tmp_path / "out"
    rc, _, err = _main(capsys, subs, "--tests", TESTS, "--out", out, "--no-progress")
    assert rc == 2, err
    assert "could be one submission or a batch" in err and "(collect.py)" in err
    assert "2 sub-folder(s) holding .py files (alice, bob)" in err and "--batch" in err
    assert not (out / "results.json").exists() and not (out / "gradebook.csv").exists()
    # --batch grades each folder; the loose script is listed as not a submission, without a row
    res = grade_batch(subs, BOOKKEEPING, out, workers=2, seed=3, progress=False, plot=False)
    by = {s.name: s for s in res.submissions}
    assert by["alice"].score == by["bob"].score == TOTAL and sorted(by) == ["alice", "bob"]
    assert list(res.not_submissions) == ["collect.py"] and "collect.py: a .py file" in res.summary()
    assert is_single_submission(subs)  # the rule itself is unchanged; the CLI asks
    # one folder with its own helper package is still one submission, without asking
    one = copy_submission(ASSIGN / "solution", tmp_path / "one")
    (one / "helpers").mkdir()
    (one / "helpers" / "__init__.py").write_text("")
    assert check_grading_inputs(one, TESTS, tmp_path / "out1") is False


def test_resuming_with_changed_tests_or_options_grades_every_submission_again(tmp_path):
    # tester 7's T17: re-weighted tests on the same --out kept the old scores ("2 skipped")
    subs = tmp_path / "subs"
    copy_submission(ASSIGN / "solution", subs / "alice")
    copy_submission(ASSIGN / "mutants" / next(iter(MUTANTS)), subs / "bob")
    tests = tmp_path / "tests"
    shutil.copytree(BOOKKEEPING, tests)
    out = tmp_path / "out"
    first = grade_batch(subs, tests, out, workers=2, seed=5, progress=False, plot=False)
    assert {s.status for s in first.submissions} == {"graded"} and not first.regraded_because
    same = grade_batch(subs, tests, out, workers=2, progress=False, plot=False)
    assert {s.status for s in same.submissions} == {"skipped"} and not same.regraded_because
    # a __pycache__ that a run leaves in the tests folder is not a change
    (tests / "__pycache__").mkdir(exist_ok=True)
    (tests / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert {s.status for s in grade_batch(subs, tests, out, workers=2, progress=False,
                                          plot=False).submissions} == {"skipped"}
    test_file = next(tests.glob("test_*.py"))
    text = test_file.read_text()
    assert text.count("points(14)") == 2  # ReLU's, the last, re-weighted (Linear's parts sum to its 14: kept)
    head, _, tail = text.rpartition("points(14)")
    test_file.write_text(f"{head}points(15){tail}")
    again = grade_batch(subs, tests, out, workers=2, progress=False, plot=False)
    assert {s.status for s in again.submissions} == {"graded"}
    assert again.regraded_because == ["the grading tests"]
    assert "warning: the grading tests changed since this output folder was graded: every " \
           "submission was graded again" in again.summary()
    by = {s.name: s for s in again.submissions}
    assert by["alice"].max_score > TOTAL and by["alice"].score == by["alice"].max_score
    assert json.loads((out / "grading.json").read_text())["seed"] == 5
    # another --timeout: graded again too, said so
    other = grade_batch(subs, tests, out, workers=2, timeout=4.0, progress=False, plot=False)
    assert {s.status for s in other.submissions} == {"graded"}
    assert other.regraded_because and "options" in other.regraded_because[0]
    # another --seed (the hidden tests' inputs): graded again with it, never the old scores relabelled
    reseeded = grade_batch(subs, tests, out, workers=2, seed=6, timeout=4.0, progress=False, plot=False)
    assert {s.status for s in reseeded.submissions} == {"graded"} and reseeded.seed == 6
    assert reseeded.regraded_because == ["the seed (--seed: the hidden tests' inputs)"]
    assert json.loads((out / "alice" / "results.json").read_text())["extra_data"]["seed"] == 6
