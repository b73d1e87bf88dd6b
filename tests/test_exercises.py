"""The exercise notebook (notebooks/07-exercises.ipynb) and ``gradcheck assignment release``.

Executed with nbclient on the project kernel (three runs, a few seconds each):

* the solution version runs to the end, every test cell passes, and no cell writes to
  stderr (nbgrader scores a cell with stderr output as failed);
* the student version made by ``gradcheck assignment release`` stops at the first
  exercise's test cell with ``NotImplementedError("Exercise 1: ...")``;
* a planted bug (``db`` averaged instead of summed in Linear) fails the Linear test cell
  with the checker's diagnosis in its output.

The release transformation itself is tested in-process on small notebooks.
"""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from test_cli import run_here

from gradcheck.assignment import (
    BEGIN_HIDDEN_TESTS,
    BEGIN_SOLUTION,
    END_SOLUTION,
    release,
    student_source,
)
from gradcheck.cli import main
from gradcheck.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks" / "07-exercises.ipynb"
KERNELSPEC = {"name": "backprop-lab", "display_name": "backprop-lab (.venv)", "language": "python"}
EXERCISES = ["Linear", "ReLU", "SoftmaxCrossEntropy", "BatchNorm1D", "Conv2D"]
SCRIPT = Path(sys.executable).parent / "gradcheck"


def read(path=NB):
    return nbformat.read(path, as_version=4)


def execute(nb):
    """Run ``nb`` in place on the project kernel; return the CellExecutionError or None."""
    client = NotebookClient(nb, kernel_name=KERNELSPEC["name"], timeout=120,
                            resources={"metadata": {"path": str(NB.parent)}})
    try:
        client.execute()
    except CellExecutionError as exc:
        return exc
    return None


def cell(nb, cid):
    (c,) = [c for c in nb.cells if c.get("id") == cid]
    return c


def streams(c, name):
    return "".join(o.get("text", "") for o in c.get("outputs", []) if o.output_type == "stream" and o.name == name)


def errors(nb):
    return [(c.id, o) for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


def stderr_cells(nb):
    return {c.id: streams(c, "stderr") for c in nb.cells if c.cell_type == "code" and streams(c, "stderr")}


# --------------------------------------------------------------------------- the solution notebook


@pytest.fixture(scope="module")
def solved():
    nb = read()
    err = execute(nb)
    assert err is None, f"the solution notebook failed:\n{err}"
    return nb


def test_notebook_layout():
    nb = read()
    assert nb.metadata.get("kernelspec") == KERNELSPEC
    for k, name in enumerate(EXERCISES, start=1):
        sol, tests = cell(nb, f"ex{k}-solution"), cell(nb, f"ex{k}-tests")
        assert sol.source.count(BEGIN_SOLUTION) == sol.source.count(END_SOLUTION) == 1
        assert f"class {name}" in sol.source and sol.metadata["nbgrader"]["solution"] is True
        visible, hidden = tests.source.split(BEGIN_HIDDEN_TESTS)
        assert "check_" in visible and "shape" in visible, f"exercise {k}: visible tests check shapes and gradients"
        assert "np.random.default_rng(70" in hidden, f"exercise {k}: hidden tests draw from a seeded generator"
        meta = tests.metadata["nbgrader"]
        assert meta["grade"] is True and meta["points"] > 0 and meta["locked"] is True


def test_solution_passes_every_test(solved):
    assert not errors(solved)
    for k, name in enumerate(EXERCISES, start=1):
        assert f"{name}: visible tests passed" in streams(cell(solved, f"ex{k}-tests"), "stdout")


def test_solution_writes_nothing_to_stderr(solved):
    assert not stderr_cells(solved)


def test_solution_draws_the_summary_figure(solved):
    assert any("image/png" in o.get("data", {}) for o in cell(solved, "summary").outputs)


# --------------------------------------------------------------------------- student version


def test_release_command_writes_the_student_version(tmp_path):
    cmd = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "gradcheck"]
    p = subprocess.run(cmd + ["assignment", "release", str(NB), "--out", str(tmp_path)], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "MPLBACKEND": "Agg"})
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    for k, name in enumerate(EXERCISES, start=1):
        assert f"Exercise {k}: implement the backward of {name}" in p.stdout
    assert "5 solution block(s) replaced, 5 hidden test block(s) removed" in p.stdout

    sol, stu = read(), read(tmp_path / NB.name)
    assert [c.id for c in stu.cells] == [c.id for c in sol.cells]
    assert stu.metadata == sol.metadata
    text = json.dumps([c.source for c in stu.cells])
    assert "### BEGIN" not in text and "### END" not in text
    for c in stu.cells:
        if c.cell_type == "code":
            assert not c.outputs and c.execution_count is None
    for k, name in enumerate(EXERCISES, start=1):
        before, _ = cell(sol, f"ex{k}-solution").source.split(BEGIN_SOLUTION)
        indent = before.splitlines()[-1]  # the marker's indentation (the line holds nothing else)
        assert cell(stu, f"ex{k}-solution").source == (
            f'{before}# YOUR CODE HERE\n{indent}raise NotImplementedError("Exercise {k}: implement the backward '
            f'of {name}")')
        visible = cell(sol, f"ex{k}-tests").source.split(BEGIN_HIDDEN_TESTS)[0].rstrip()
        assert cell(stu, f"ex{k}-tests").source == visible
    changed = {c.id for c, d in zip(sol.cells, stu.cells) if c.source != d.source}
    assert changed == {f"ex{k}-{w}" for k in range(1, 6) for w in ("solution", "tests")}


def test_readme_and_intros_give_the_release_command_of_the_student_versions(tmp_path):
    # newuser21 M2: notebooks 07 and 09 are stored solved while their intro said "Replace raise
    # NotImplementedError(...)", which a student opening them never saw; README and each intro now give the
    # command that makes the student copy. Each command, run as written (its --out in tmp_path), writes it.
    import re
    import shlex

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    said = re.findall(r"`\.venv/bin/gradcheck (assignment release [^`]+)`", readme)
    for name in ("07-exercises", "09-cs231n-exercises"):
        intro = "".join(read(ROOT / "notebooks" / f"{name}.ipynb").cells[0].source)
        said += [c for c in re.findall(r"`\.venv/bin/gradcheck (assignment release [^`]+)`", intro) if name in c]
        assert f"`{name}.ipynb` in the folder `build/student/`" in intro and "solution version" in intro
    assert len(said) == 3, said
    for k, command in enumerate(said):
        argv = shlex.split(command)
        assert argv[-2:] == ["--out", "build/student"], command
        out = tmp_path / str(k)
        # gradcheck.cli.main in this process, from the repository's root (test_cli.run_here): the command's parser,
        # checks and release as the console script runs them, without a Python start and its imports (2 CPU-s a
        # command); the console script itself runs release in test_release_command_writes_the_student_version
        p = run_here(*argv[:-1], out)
        assert p.returncode == 0, p.stderr
        for src in argv[2:-2]:
            text = "".join("".join(c.source) for c in read(out / Path(src).name).cells)
            assert "# YOUR CODE HERE" in text and "raise NotImplementedError(" in text and "### BEGIN" not in text


def test_student_version_stops_at_the_first_exercise(tmp_path):
    nb = read(release(NB, tmp_path).path)
    err = execute(nb)
    assert err is not None and err.ename == "NotImplementedError"
    assert err.evalue == "Exercise 1: implement the backward of Linear"
    (where, out), = errors(nb)
    assert where == "ex1-tests"
    after = [c for c in nb.cells[nb.cells.index(cell(nb, "ex1-tests")) + 1:] if c.cell_type == "code"]
    assert all(c.execution_count is None for c in after)
    assert not stderr_cells(nb)


def test_planted_bug_fails_the_linear_test_with_the_diagnosis():
    nb = read()
    sol = cell(nb, "ex1-solution")
    assert sol.source.count("dY.sum(axis=0)") == 1
    sol.source = sol.source.replace("dY.sum(axis=0)", "dY.mean(axis=0)")
    nb.cells = nb.cells[: nb.cells.index(cell(nb, "ex1-tests")) + 1]
    err = execute(nb)
    assert err is not None and err.ename == "AssertionError"
    (where, out), = errors(nb)
    assert where == "ex1-tests"
    assert "db is the mean over the batch, not the sum" in out.evalue
    printed = " ".join(streams(cell(nb, "ex1-tests"), "stdout").split())
    # the verdict per tensor (gradcheck.grading) and diagnose_layer's report both name the bug
    assert printed.count("db is the mean over the batch, not the sum") >= 2
    assert "- `dW`: ok" in printed and "- `dX`: ok" in printed and "FAIL" in printed
    assert not stderr_cells(nb)


# --------------------------------------------------------------------------- the transformation


def test_student_source_keeps_indentation_and_names_the_task():
    src = ("def helper(x):\n    return x\n\n\nclass Tanh:\n    def backward(self, dY):\n        if True:\n"
           "            ### BEGIN SOLUTION\n            out = dY\n            ### END SOLUTION\n"
           "        return out\n")
    new, n_sol, n_hidden, msgs = student_source(src, exercise=3)
    assert (n_sol, n_hidden) == (1, 0)
    assert msgs == ["Exercise 3: implement the backward of Tanh"]
    assert new == ("def helper(x):\n    return x\n\n\nclass Tanh:\n    def backward(self, dY):\n        if True:\n"
                   "            # YOUR CODE HERE\n"
                   '            raise NotImplementedError("Exercise 3: implement the backward of Tanh")\n'
                   "        return out\n")
    assert student_source("def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n",
                          exercise=1)[3] == ["Exercise 1: implement f"]
    assert student_source("### BEGIN SOLUTION\ny = 1\n### END SOLUTION", exercise=2, task="set y")[0] == \
        '# YOUR CODE HERE\nraise NotImplementedError("Exercise 2: set y")'


def test_hidden_tests_are_removed_and_markdown_answers_cleared():
    new, _, n_hidden, _ = student_source("assert f(1) == 1\n\n### BEGIN HIDDEN TESTS\nassert f(2) == 2\n"
                                         "### END HIDDEN TESTS\n")
    assert (new, n_hidden) == ("assert f(1) == 1\n", 1)
    assert student_source("Why?\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION", markdown=True)[0] == \
        "Why?\nYOUR ANSWER HERE"


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("### BEGIN SOLUTIONS\nx = 1\n### END SOLUTION", "looks like a marker"),
        ("## begin solution\nx = 1", "looks like a marker"),
        ("### BEGIN SOLUTION\nx = 1", "never closed"),
        ("x = 1\n### END SOLUTION", "no block is open"),
        ("### BEGIN SOLUTION\n### BEGIN HIDDEN TESTS\n", "inside the '### BEGIN SOLUTION' block"),
        ("### BEGIN HIDDEN TESTS\nx = 1\n### END SOLUTION", "the open block is '### BEGIN HIDDEN TESTS'"),
    ],
)
def test_bad_markers_are_usage_errors(source, words):
    with pytest.raises(UsageError, match="line"):
        try:
            student_source(source)
        except UsageError as exc:
            assert words in str(exc)
            raise


def _tiny(tmp_path, *cells, name="tiny.ipynb"):
    nb = new_notebook(cells=list(cells), metadata={"kernelspec": KERNELSPEC})
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def test_release_numbers_exercises_and_honours_overrides(tmp_path):
    first = new_code_cell("class A:\n    def backward(self, dY):\n        ### BEGIN SOLUTION\n        return dY\n"
                          "        ### END SOLUTION")
    second = new_code_cell("def g():\n    ### BEGIN SOLUTION\n    pass\n    ### END SOLUTION")
    second.metadata["backprop_lab"] = {"exercise": 7, "task": "write g"}
    path = _tiny(tmp_path, new_markdown_cell("# tiny"), first, second)
    rep = release(path, tmp_path / "out")
    assert rep.exercises == ["Exercise 1: implement the backward of A", "Exercise 7: write g"]
    assert (rep.solutions, rep.hidden_tests) == (2, 0)
    assert read(rep.path).cells[0].source == "# tiny"


def err(capsys):
    """stderr of the last main() call with the terminal wrapping undone."""
    return " ".join(capsys.readouterr().err.split())


def test_release_refuses_what_would_leak_or_overwrite(tmp_path, capsys):
    plain = _tiny(tmp_path, new_code_cell("x = 1"))
    assert main(["assignment", "release", str(plain), "--out", str(tmp_path / "out")]) == 2
    assert "nothing to release" in err(capsys)
    ex = _tiny(tmp_path, new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION"), name="ex.ipynb")
    before = ex.read_text()
    assert main(["assignment", "release", str(ex), "--out", str(tmp_path)]) == 2
    assert "would overwrite the solution notebook" in err(capsys)
    assert ex.read_text() == before
    assert main(["assignment", "release", str(tmp_path / "missing.ipynb"), "--out", str(tmp_path)]) == 2
    assert "is not a file" in err(capsys)
    (tmp_path / "bad.ipynb").write_text("{not json")
    assert main(["assignment", "release", str(tmp_path / "bad.ipynb"), "--out", str(tmp_path / "o")]) == 2
    assert "is not a readable Jupyter notebook: NotJSONError" in err(capsys)


def test_release_does_not_change_the_notebook_in_memory():
    from gradcheck.assignment import student_notebook

    nb = read()
    kept = copy.deepcopy(nb)
    student_notebook(nb)
    assert nb == kept


def test_release_out_must_be_a_writable_folder(tmp_path):
    src = "notebooks/07-exercises.ipynb"
    a_file = tmp_path / "x.txt"
    a_file.write_text("x")
    for out, words in ((str(a_file), "cannot"), ("/proc/nope/dir", "cannot"), (str(tmp_path / "s.ipynb"), "looks like a notebook")):
        r = run_here("assignment", "release", src, "--out", out)  # main in this process, from the root
        assert r.returncode == 2, (out, r.stderr)
        assert words in " ".join(r.stderr.split()) and "Traceback" not in r.stderr


# --------------------------------------------------------------------------- lessons (Markdown)


def test_markdown_lesson_release_replaces_code_and_text_solutions(tmp_path):
    from gradcheck.assignment import student_markdown

    text = ("# L\n\n```python file=a.py exercise=4\nclass A:\n    def backward(self, dY):\n"
            "        ### BEGIN SOLUTION\n        return 2 * dY\n        ### END SOLUTION\n```\n\n"
            "<!-- BEGIN SOLUTION -->\nThe answer is 2.\n<!-- END SOLUTION -->\n\n```text\n### not a marker\n```\n")
    new, msgs, n = student_markdown(text)
    assert msgs == ["Exercise 4: implement the backward of A"] and n == 2
    assert new == ("# L\n\n```python file=a.py exercise=4\nclass A:\n    def backward(self, dY):\n"
                   "        # YOUR CODE HERE\n"
                   '        raise NotImplementedError("Exercise 4: implement the backward of A")\n```\n\n'
                   "YOUR ANSWER HERE\n\n```text\n### not a marker\n```\n")
    src = tmp_path / "lesson.md"
    src.write_text(text)
    rep = release(src, tmp_path / "out")
    assert rep.path.read_text() == new and rep.solutions == 2


@pytest.mark.parametrize("text, words", [
    ("<!-- BEGIN SOLUTIONS -->\nx\n<!-- END SOLUTION -->\n", "looks like a marker"),
    ("<!-- BEGIN SOLUTION -->\nx\n", "never closed"),
    ("```python file=a.py\n### BEGIN SOLUTION\nx = 1\n```\n", "never closed"),
    ("```python\nx = 1\n", "never closed"),
    ("no solution here\n", "nothing to release"),
])
def test_markdown_bad_markers_are_usage_errors(tmp_path, text, words):
    src = tmp_path / "lesson.md"
    src.write_text(text)
    with pytest.raises(UsageError) as exc:
        release(src, tmp_path / "out")
    assert words in str(exc.value) and "lesson.md" in str(exc.value)
