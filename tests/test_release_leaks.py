"""``gradcheck assignment release`` leaks nothing of a solution notebook (tester report, session 6, D7).

Each notebook here rebuilds one the tester released: every string that must not reach students
holds ``SECRET``, and the released file (its raw JSON, outputs, attachments and metadata included)
must hold none. What nbgrader's ``ClearSolutions`` does is the model: a solution region in a code
or Markdown cell is replaced by the stub or ``YOUR ANSWER HERE``, a cell with nbgrader's metadata
``{"nbgrader": {"solution": true}}`` and no region is replaced as a whole; outputs and the
notebook's widget state are cleared. A marker that is nearly right is refused (exit 2).
"""

import base64

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

from gradcheck.assignment import release, student_markdown
from gradcheck.cli import main
from gradcheck.errors import UsageError

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
SOLVED_F = "def f(x):\n    ### BEGIN SOLUTION\n    return x * 42\n    ### END SOLUTION\n"
STUB_F = 'def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError("Exercise 1: implement f")\n'


def _write(tmp_path, cells, name="sol.ipynb", **metadata):
    nb = new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC, **metadata})
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def _released(path, tmp_path):
    rep = release(path, tmp_path / "out")
    text = rep.path.read_text(encoding="utf-8")
    assert "SECRET" not in text, [line for line in text.splitlines() if "SECRET" in line]
    return rep, nbformat.read(rep.path, as_version=4)


def _nbgrader(solution=True, grade=False, grade_id="x", points=None):
    meta = {"solution": solution, "grade": grade, "grade_id": grade_id, "locked": False, "schema_version": 3}
    return {"nbgrader": meta | ({"points": points} if points is not None else {})}


def test_markdown_solution_regions_inline_on_their_own_lines_and_without_spaces(tmp_path):
    """The tester's sol2.ipynb: the three ways of writing nbgrader's Markdown markers."""
    path = _write(tmp_path, [
        new_code_cell("def f(x):\n    ### BEGIN SOLUTION\n    return x * 42\n    ### END SOLUTION\n"),
        new_markdown_cell("Why?\n\n<!-- BEGIN SOLUTION -->\nSECRET_OWNLINE_ANSWER\n<!-- END SOLUTION -->\n"),
        new_markdown_cell("Why? <!-- BEGIN SOLUTION -->SECRET_INLINE_ANSWER<!-- END SOLUTION -->"),
        new_markdown_cell("Why?\n<!--BEGIN SOLUTION-->\nSECRET_NOSPACE_ANSWER\n<!--END SOLUTION-->\n"),
        new_markdown_cell("A <!-- BEGIN SOLUTION -->SECRET_A<!-- END SOLUTION --> and "
                          "<!-- BEGIN SOLUTION -->SECRET_B\nSECRET_C<!-- END SOLUTION --> end."),
    ])
    rep, nb = _released(path, tmp_path)
    assert [c.source for c in nb.cells[1:]] == [
        "Why?\n\nYOUR ANSWER HERE\n", "Why? YOUR ANSWER HERE", "Why?\nYOUR ANSWER HERE\n",
        "A YOUR ANSWER HERE and YOUR ANSWER HERE end."]
    assert rep.solutions == 6 and rep.exercises == ["Exercise 1: implement f"]


def test_nbgrader_solution_cells_without_markers_are_replaced_whole(tmp_path):
    """The tester's sol3.ipynb: nbgrader's "solution" metadata marks the whole cell as the answer."""
    code = new_code_cell("def g(x):\n    return x + 1  # SECRET_NBGRADER_CODE_NO_MARKERS\n",
                         metadata=_nbgrader(grade_id="g"))
    prose = new_markdown_cell("SECRET_NBGRADER_MARKDOWN_ANSWER: because the bias is shared by every sample.",
                              metadata=_nbgrader(grade=True, grade_id="why", points=2))
    marked = new_code_cell(SOLVED_F, metadata=_nbgrader(grade_id="f"))
    not_a_solution = new_code_cell("assert g(1) == 2\n", metadata=_nbgrader(solution=False, grade=True,
                                                                             grade_id="t", points=1))
    rep, nb = _released(_write(tmp_path, [marked, prose, code, not_a_solution]), tmp_path)
    assert [c.source for c in nb.cells] == [
        STUB_F, "YOUR ANSWER HERE",
        '# YOUR CODE HERE\nraise NotImplementedError("Exercise 2: implement g")', "assert g(1) == 2\n"]
    assert rep.exercises == ["Exercise 1: implement f", "Exercise 2: implement g"]
    assert rep.solutions == 3
    assert nb.cells[2].metadata == code.metadata  # nbgrader's ids stay, for its own autograding


def test_a_notebook_of_nbgrader_solution_cells_alone_is_released(tmp_path):
    path = _write(tmp_path, [new_markdown_cell("# Q"), new_code_cell(
        "class A:\n    pass  # SECRET\n", metadata=_nbgrader())])
    rep, nb = _released(path, tmp_path)
    assert nb.cells[1].source == '# YOUR CODE HERE\nraise NotImplementedError("Exercise 1: implement A")'
    assert rep.solutions == 1


def test_outputs_widget_state_and_orphaned_attachments_are_cleared(tmp_path):
    """The tester's sol.ipynb: outputs, the notebook's widget state, an attachment only a solution used."""
    widgets = {"application/vnd.jupyter.widget-state+json": {
        "state": {"m": {"model_name": "TextModel", "model_module": "@jupyter-widgets/controls",
                        "model_module_version": "2.0.0", "state": {"value": "SECRET_SOLUTION_dW = dY.T @ X"}}},
        "version_major": 2, "version_minor": 0}}
    solved = new_code_cell(SOLVED_F.replace("42", "42  # SECRET_1"), execution_count=3, outputs=[
        new_output("stream", name="stdout", text="SECRET_SOLUTION_OUTPUT\n")])
    shown = new_code_cell("print(f(1))\n", execution_count=4, outputs=[
        new_output("execute_result", data={"text/plain": "SECRET_SOLUTION_42"}, execution_count=4)])
    png = base64.b64encode(b"SECRET_SOLUTION_IMAGE").decode()
    answer = new_markdown_cell("Answer: <!-- BEGIN SOLUTION -->SECRET_TEXT ![plot](attachment:answer.png)"
                               "<!-- END SOLUTION -->\n![question](attachment:question.png)",
                               attachments={"answer.png": {"image/png": png}, "question.png": {"image/png": "AAAA"}})
    raw = new_raw_cell("### BEGIN SOLUTION\nSECRET_SOLUTION_RAW\n### END SOLUTION\n")
    hidden = new_code_cell("### BEGIN HIDDEN TESTS\nassert f(1) == 42  # SECRET_HIDDEN\n### END HIDDEN TESTS\n")
    fenced = new_markdown_cell("```python\n### BEGIN SOLUTION\nSECRET_SOLUTION_IN_MD_CODE\n### END SOLUTION\n```\n")
    path = _write(tmp_path, [solved, shown, answer, raw, hidden, fenced], widgets=widgets)
    rep, nb = _released(path, tmp_path)
    assert "widgets" not in nb.metadata and nb.metadata.kernelspec == KERNELSPEC
    assert all(c.outputs == [] and c.execution_count is None for c in nb.cells if c.cell_type == "code")
    assert nb.cells[2].source == "Answer: YOUR ANSWER HERE\n![question](attachment:question.png)"
    assert nb.cells[2].attachments == {"question.png": {"image/png": "AAAA"}}
    assert nb.cells[3].source == "YOUR ANSWER HERE\n"  # a raw cell's answer is text, as in Markdown
    assert nb.cells[5].source == "```python\nYOUR ANSWER HERE\n```\n"
    assert (rep.solutions, rep.hidden_tests) == (4, 1)


@pytest.mark.parametrize(("source", "words"), [
    ("Why? <!-- BEGIN SOLUTIONS -->SECRET<!-- END SOLUTION -->", "looks like a marker"),
    ("<!-- begin solution -->\nSECRET\n<!-- end solution -->", "looks like a marker"),
    ("<!-- BEGIN SOLUTION\nSECRET\nEND SOLUTION -->", "looks like a marker"),
    ("<!-- BEGIN HIDDEN TESTS -->\nSECRET\n<!-- END HIDDEN TESTS -->", "looks like a marker"),
    ("<!-- BEGIN SOLUTON -->\nSECRET\n", "looks like a marker"),
    ("<!-- BEGIN_SOLUTION -->\nSECRET\n<!-- END_SOLUTION -->", "looks like a marker"),
    ("Why? <!-- BEGIN SOLUTION -->SECRET", "never closed"),
    ("<!-- BEGIN SOLUTION -->A <!-- BEGIN SOLUTION -->SECRET<!-- END SOLUTION -->", "inside"),
    ("SECRET <!-- END SOLUTION -->", "no block is open"),
])
def test_a_malformed_markdown_marker_is_refused_with_exit_2(tmp_path, capsys, source, words):
    path = _write(tmp_path, [new_code_cell(SOLVED_F), new_markdown_cell(source)])
    assert main(["assignment", "release", str(path), "--out", str(tmp_path / "out")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert words in err and "cell 1" in err and "line 1" in err, err
    assert not (tmp_path / "out" / "sol.ipynb").exists()


def test_lesson_text_markers_inline_and_without_spaces_are_released_like_a_notebook_s():
    """The tester's lesson.md: the same Markdown rule in a lesson's text (these were refused before)."""
    text = ("# L\n\nText. <!-- BEGIN SOLUTION -->SECRET_LESSON_INLINE<!-- END SOLUTION -->\n\n"
            "<!-- BEGIN SOLUTION -->\nSECRET_LESSON_OWNLINE\n<!-- END SOLUTION -->\n\n"
            "<!--BEGIN SOLUTION-->\nSECRET_LESSON_NOSPACE\n<!--END SOLUTION-->\n\n"
            "```python\ndef f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n```\n")
    new, msgs, n = student_markdown(text)
    assert new == ("# L\n\nText. YOUR ANSWER HERE\n\nYOUR ANSWER HERE\n\nYOUR ANSWER HERE\n\n```python\ndef f(x):\n"
                   '    # YOUR CODE HERE\n    raise NotImplementedError("Exercise 1: implement f")\n```\n')
    assert (msgs, n) == (["Exercise 1: implement f"], 4)
    with pytest.raises(UsageError, match="looks like a marker"):
        student_markdown("Text. <!-- BEGIN SOLUTON -->SECRET<!-- END SOLUTION -->\n")


@pytest.mark.parametrize("source", ["### BEGIN SOLUTON\nx = 1  # SECRET\n", "# BEGIN_SOLUTION\nx = 1  # SECRET\n"])
def test_a_misspelt_code_marker_is_refused(tmp_path, capsys, source):
    path = _write(tmp_path, [new_code_cell(SOLVED_F), new_code_cell(source)])
    assert main(["assignment", "release", str(path), "--out", str(tmp_path / "out")]) == 2
    assert "looks like a marker" in " ".join(capsys.readouterr().err.split())


def test_the_site_publishes_every_notebook_with_a_solution_as_its_student_version_only(tmp_path):
    """The site decides by holds_solutions which notebooks go out released: it saw only '### BEGIN SOLUTION'."""
    from gradcheck.assignment import holds_solutions

    root = __import__("pathlib").Path(__file__).resolve().parents[1] / "notebooks"
    assert {p.name for p in root.glob("*.ipynb") if holds_solutions(p)} == {"07-exercises.ipynb",
                                                                          "09-cs231n-exercises.ipynb"}
    for i, cell in enumerate([new_markdown_cell("Why? <!--BEGIN SOLUTION-->SECRET<!--END SOLUTION-->"),
                              new_code_cell("x = 1  # SECRET", metadata=_nbgrader()),
                              new_raw_cell("<!-- BEGIN SOLUTON -->\nSECRET\n")]):
        assert holds_solutions(_write(tmp_path, [new_markdown_cell("# Q"), cell], name=f"{i}.ipynb"))
    assert not holds_solutions(_write(tmp_path, [new_code_cell("x = 1", metadata=_nbgrader(solution=False))]))


@pytest.mark.parametrize("block", [
    "# ### BEGIN HIDDEN TESTS\nassert f(2) == 84  # SECRET_H\n# ### END HIDDEN TESTS\n",
    "# ### BEGIN SOLUTION\nx = 1  # SECRET_S\n# ### END SOLUTION\n",
    "#   ### BEGIN HIDDEN TESTS\nassert f(2) == 84  # SECRET_H\n",
    "# # END HIDDEN TESTS\n",
    "x = f(2)  # ### BEGIN HIDDEN TESTS\nassert x == 84  # SECRET_H\n",
])
def test_a_marker_behind_comment_characters_is_refused_in_a_notebook_and_a_python_file(tmp_path, capsys, block):
    """Tester 6b, N6: '# ### BEGIN HIDDEN TESTS' ... was released verbatim (next to a proper solution block)."""
    hidden = new_code_cell("y = 1\n" + block)
    hidden.id = "c1"
    nb = _write(tmp_path, [new_code_cell(SOLVED_F), hidden])
    py = tmp_path / "sol.py"
    py.write_text(SOLVED_F + "\n\ndef g():\n    pass\n" + block, encoding="utf-8")
    for path, where in ((nb, "cell 1 (id c1), line 2:"),
                        (py, "the file, line 9:")):
        assert main(["assignment", "release", str(path), "--out", str(tmp_path / "out")]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"{path}: {where}" in err and "looks like a marker" in err, err
        assert not (tmp_path / "out" / path.name).exists()


@pytest.mark.parametrize("metadata", [
    {"tags": ["solution"]}, {"tags": ["hide-input", "Solution"]}, {"solution2": "hidden"}, {"solution2": "shown"},
    {"solution": "hidden"}, {"nbgrader": {"solution": "true", "grade_id": "s"}},
])
def test_a_cell_marked_as_a_solution_by_any_known_convention_is_replaced_whole(tmp_path, metadata):
    """Tester 6b, N7: a "solution" tag, exercise2's {"solution2": "hidden"} and nbgrader's "solution": "true"
    (a string) were released verbatim. One rule (solution_cell) for every convention; the exercise's first
    cell (exercise2's "solution2_first": true, the question) stays."""
    from gradcheck.assignment import holds_solutions

    question = new_markdown_cell("Write g.", metadata={"solution2": "hidden", "solution2_first": True})
    code = new_code_cell("def g(x):\n    return x + 1  # SECRET_CODE\n", metadata=metadata)
    prose = new_markdown_cell("Because SECRET_PROSE.", metadata=metadata)
    path = _write(tmp_path, [new_code_cell(SOLVED_F), question, code, prose])
    assert holds_solutions(_write(tmp_path, [code], name="only.ipynb"))
    rep, nb = _released(path, tmp_path)
    assert [c.source for c in nb.cells] == [
        STUB_F, "Write g.", '# YOUR CODE HERE\nraise NotImplementedError("Exercise 2: implement g")',
        "YOUR ANSWER HERE"]
    assert rep.solutions == 3 and rep.exercises == ["Exercise 1: implement f", "Exercise 2: implement g"]


@pytest.mark.parametrize(("metadata", "words"), [
    ({"nbgrader": {"solution": "false"}}, "nbgrader.solution = 'false'"),
    ({"nbgrader": {"solution": 1}}, "nbgrader.solution = 1"),
    ({"nbgrader": {"solution": "yes"}}, "nbgrader.solution = 'yes'"),
    ({"tags": ["hide-solution"]}, "tag 'hide-solution'"),
    ({"solution2": "visible"}, "solution2 = 'visible'"),
    ({"solution2": "hidden", "solution2_first": "yes"}, "solution2_first = 'yes'"),
    ({"exercise": {"solution": True}}, "exercise.solution = True"),
    ({"role": "solution"}, "role = 'solution'"),
])
def test_metadata_that_says_solution_in_a_form_not_read_for_sure_is_refused(tmp_path, capsys, metadata, words):
    cell = new_code_cell("x = 1  # SECRET\n", metadata=metadata)
    cell.id = "c1"
    path = _write(tmp_path, [new_code_cell(SOLVED_F), cell])
    assert main(["assignment", "release", str(path), "--out", str(tmp_path / "out")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{path}: cell 1 (id c1): metadata {words}" in err or f"{path}: cell 1 (id c1): {words}" in err, err
    assert "cannot tell for sure whether it marks a solution" in err, err
    assert not (tmp_path / "out" / "sol.ipynb").exists()


def test_notebook_metadata_that_says_solution_is_refused(tmp_path, capsys):
    path = _write(tmp_path, [new_code_cell(SOLVED_F)], exercise={"solutions": "SECRET"})
    assert main(["assignment", "release", str(path), "--out", str(tmp_path / "out")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "sol.ipynb: the notebook: metadata exercise.solutions = 'SECRET'" in err, err


def test_html_solution_regions_in_a_python_file_are_replaced_like_markdown_s(tmp_path):
    """Tester 6b, N13: a jupytext Markdown cell's and a docstring's <!-- BEGIN SOLUTION --> regions were
    copied verbatim from a Python file."""
    path = tmp_path / "jt.py"
    path.write_text('"""Module doc.\n\n<!-- BEGIN SOLUTION -->SECRET_DOCSTRING<!-- END SOLUTION -->\n"""\n'
                    "# %% [markdown]\n# Why?\n# <!-- BEGIN SOLUTION -->\n# SECRET_JUPYTEXT_MD\n"
                    "# <!-- END SOLUTION -->\n\n"
                    "# %%\n" + SOLVED_F + "\n\nend_solution = 1  # a name, not a marker\n", encoding="utf-8")
    rep = release(path, tmp_path / "out")
    assert rep.path.read_text(encoding="utf-8") == (
        '"""Module doc.\n\nYOUR ANSWER HERE\n"""\n# %% [markdown]\n# Why?\n# YOUR ANSWER HERE\n\n# %%\n' + STUB_F
        + "\n\nend_solution = 1  # a name, not a marker\n")
    assert (rep.solutions, rep.exercises) == (3, ["Exercise 1: implement f"])


@pytest.mark.parametrize(("text", "words"), [
    ("# <!-- begin solution -->\n# SECRET\n# <!-- end solution -->\n",
     "line 6: '# <!-- begin solution -->' looks like"),
    ("# <!-- BEGIN SOLUTION -->\n# SECRET\n", "the file: '<!-- BEGIN SOLUTION -->' at line 6 is never closed"),
    ("s = '''<!-- BEGIN SOLUTION -->SECRET'''\n# <!-- END SOLUTION -->\n", "no longer Python"),
])
def test_a_bad_html_solution_region_in_a_python_file_is_refused(tmp_path, capsys, text, words):
    path = tmp_path / "sol.py"
    path.write_text(SOLVED_F + "\n" + text, encoding="utf-8")
    assert main(["assignment", "release", str(path), "--out", str(tmp_path / "out")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{path}: " in err and words in err, err
    assert not (tmp_path / "out" / "sol.py").exists()


@pytest.mark.parametrize(("change", "words"), [
    (lambda nb: nb["metadata"]["kernelspec"].pop("display_name"),
     "metadata.kernelspec: 'display_name' is a required property"),
    (lambda nb: nb["cells"][1].update(outputs=[]), "cell 1 (id m1): Additional properties are not allowed "
                                                   "('outputs' was unexpected)"),
])
def test_a_notebook_nbformat_finds_invalid_is_a_usage_error_naming_what_is_invalid(tmp_path, capsys, change, words):
    """Tester 6b, N8: a kernelspec without display_name, a Markdown cell with outputs: a traceback, exit 1."""
    import json

    prose = new_markdown_cell("Why?")
    prose.id = "m1"
    path = _write(tmp_path, [new_code_cell(SOLVED_F), prose])
    nb = json.loads(path.read_text(encoding="utf-8"))
    change(nb)
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert main(["assignment", "release", str(path), "--out", str(tmp_path / "out")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{path} is not a valid Jupyter notebook (nbformat 4." in err and f"schema): {words}" in err, err
    assert not (tmp_path / "out" / "sol.ipynb").exists()


@pytest.mark.parametrize(("name", "text"), [
    ("sol.py", SOLVED_F + "\n\n### BEGIN HIDDEN TESTS\nassert f(2) == 84  # SECRET_H\n### END HIDDEN TESTS\n"),
    ("sol.md", "# L\n\n```python\n" + SOLVED_F + "```\n\n```python\n### BEGIN HIDDEN TESTS\n"
               "assert f(2) == 84  # SECRET_H\n### END HIDDEN TESTS\n```\n"),
])
def test_the_summary_counts_the_hidden_tests_removed_from_a_python_file_or_lesson(tmp_path, name, text):
    """Tester 6b's hp.py and hm.md: the hidden tests were removed, yet the summary said 0 removed."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    rep = release(path, tmp_path / "out")
    assert "SECRET" not in rep.path.read_text(encoding="utf-8")
    assert (rep.solutions, rep.hidden_tests) == (1, 1)
    assert "1 solution block(s) replaced, 1 hidden test block(s) removed" in rep.summary()


def test_cell_run_timings_are_cleared_as_outputs_are(tmp_path):
    timed = new_code_cell(SOLVED_F, metadata={"execution": {"iopub.execute_input": "2026-12-02T05:00:00Z",
                                                            "shell.execute_reply": "2026-12-02T05:00:01Z"}})
    rep, nb = _released(_write(tmp_path, [timed]), tmp_path)
    assert "execution" not in nb.cells[0].metadata


@pytest.mark.parametrize("fold", ["<details><summary>Solution</summary>\nSECRET\n</details>",
                                  "<details>\n<summary>Show the answer</summary>\nSECRET\n</details>"])
def test_a_folded_solution_outside_markers_is_refused_in_a_lesson_and_a_notebook(tmp_path, capsys, fold):
    # a <details> fold is no marker: it was released as it is
    lesson = tmp_path / "l.md"
    lesson.write_text("# L\n\nWhat is f(1)?\n\n" + fold + "\n")
    assert main(["assignment", "release", str(lesson), "--out", str(tmp_path / "out")]) == 2
    assert "outside a solution region would be released" in " ".join(capsys.readouterr().err.split())
    nb = _write(tmp_path, [new_markdown_cell(fold)])
    assert main(["assignment", "release", str(nb), "--out", str(tmp_path / "out2")]) == 2
    inside = _write(tmp_path, [new_markdown_cell(f"<!-- BEGIN SOLUTION -->\n{fold}\n<!-- END SOLUTION -->")],
                    name="ok.ipynb")
    _released(inside, tmp_path)  # inside a region it is replaced with the rest


# --------------------------------------------------------------------------- tester 7: T5, T6, T7

CONV_FORWARD = ("        self.X = X\n"
                "        L_out = X.shape[2] - self.K + 1\n"
                "        self.cols = np.stack([X[:, :, j:j + L_out] for j in range(self.K)], axis=2)   # (N, C, K, L)\n"
                "        return np.einsum('nckl,fck->nfl', self.cols, self.W) + self.b[:, None]\n")
CONV_BACKWARD = ("        self.dW = np.einsum('nfl,nckl->fck', dY, self.cols)\n"
                 "        self.db = dY.sum(axis=(0, 2))\n"
                 "        dcols = np.einsum('nfl,fck->nckl', dY, self.W)\n"
                 "        dX = np.zeros_like(self.X)\n"
                 "        for j in range(self.K):\n"
                 "            dX[:, :, j:j + dY.shape[2]] += dcols[:, :, j]\n"
                 "        return dX\n")


def _conv(forward, backward, marked):
    begin, end = ("        ### BEGIN SOLUTION\n", "        ### END SOLUTION\n") if marked else ("", "")
    return ("import numpy as np\n\n\nclass Conv1D:\n    def forward(self, X):\n" + begin + forward + end
            + "\n    def backward(self, dY):\n" + begin + backward + end)


def _lesson(bug_file):
    return ("# Conv1D\n\n## Exercises\n\n1. Write Conv1D.\n\n```python file=conv1d.py\n"
            + _conv(CONV_FORWARD, CONV_BACKWARD, True) + "```\n\n2. Find the planted bug.\n\n"
            "```python file=conv1d_bug.py\n" + bug_file + "```\n")


@pytest.mark.parametrize("bug_file", [
    # tester 7's 20-conv2d.md: the solution with one `+=` turned into `=`
    _conv(CONV_FORWARD, CONV_BACKWARD.replace("] += dcols", "] = dcols"), False),
    # the same, re-indented, comments dropped, spaces changed
    _conv(CONV_FORWARD.replace("   # (N, C, K, L)", "").replace(" - ", "-"),
          CONV_BACKWARD.replace("        ", "    ").replace("] += dcols", "] -= dcols"), False),
    # the backward alone, with one line changed
    _conv("        return None\n", CONV_BACKWARD.replace("dY.sum(axis=(0, 2))", "dY.mean(axis=(0, 2))"), False),
])
def test_a_lesson_whose_student_version_repeats_a_solution_is_refused(tmp_path, capsys, bug_file):
    """Tester 7, T5: exercise 2's planted-bug file was exercise 1's solution with one change, released
    as it was; release now refuses, naming the file, the solution block and the student version's lines."""
    path = tmp_path / "conv.md"
    path.write_text(_lesson(bug_file), encoding="utf-8")
    assert main(["assignment", "release", str(path), "--out", str(tmp_path / "out")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{path}: the solution block at line " in err and "reappears in the student version at lines " in err, err
    assert "would give that solution away" in err and "inside a solution block too" in err, err
    assert not (tmp_path / "out" / "conv.md").exists()


def test_the_refusal_names_the_block_and_the_student_lines():
    """The exact lines: the forward's block opens at line 13 of the lesson, the backward's at line 21;
    their copies in the student version (the bug file's bodies) are at lines 30-32 and 35-39 (the stubs
    make the student version shorter; `self.X = X` and `return dX` are too short to tell)."""
    import gradcheck.assignment as a

    text = _lesson(_conv(CONV_FORWARD, CONV_BACKWARD.replace("] += dcols", "] = dcols"), False))
    student = student_markdown(text)[0]
    assert text.splitlines()[12].strip() == text.splitlines()[20].strip() == "### BEGIN SOLUTION"
    assert student.splitlines()[34].strip().startswith("self.dW = np.einsum(")
    with pytest.raises(UsageError) as err:
        a._refuse_copies(a.Path("conv.md"), a._blocks(text, fences=True), a._released_lines(student))
    msg = str(err.value)
    assert msg.startswith("conv.md: the solution block at line 13 (3 of its 3 lines) reappears in the student "
                          "version at lines 30-32; the solution block at line 21 (5 of its 6 lines) reappears "
                          "in the student version at lines 35-39 (white space, comments and lines under 12 "
                          "characters such as 'return dX' ignored; one line may differ), outside any solution block"), msg


@pytest.mark.parametrize("other", [
    # another layer's bug file that shares a line or two of boilerplate with the solution
    "class Pool:\n    def backward(self, dY):\n        dX = np.zeros_like(self.X)\n"
    "        dX[self.mask] = dY.ravel()\n        return dX\n",
    # the same solution's methods held in solution blocks too (released with the solutions)
    _conv(CONV_FORWARD, CONV_BACKWARD.replace("] += dcols", "] = dcols"), True),
])
def test_a_lesson_whose_other_files_do_not_repeat_a_solution_is_released(tmp_path, other):
    path = tmp_path / "conv.md"
    path.write_text(_lesson(other), encoding="utf-8")
    rep = release(path, tmp_path / "out")
    student = rep.path.read_text(encoding="utf-8")
    assert "+= dcols" not in student and "] = dcols" not in student and "np.einsum" not in student


def test_a_notebook_or_python_file_that_repeats_a_solution_is_refused(tmp_path, capsys):
    solved = "import numpy as np\n\n\ndef backward(dY, W, cols):\n    ### BEGIN SOLUTION\n" + CONV_BACKWARD[4:].replace(
        "\n        ", "\n    ") + "    ### END SOLUTION\n"
    hint = "def backward_buggy(dY, W, cols):\n" + CONV_BACKWARD.replace("        ", "    ").replace("+=", "=")
    cell, first = new_code_cell(hint), new_code_cell(solved)
    cell.id, first.id = "hint", "sol"
    nb = _write(tmp_path, [first, cell])
    py = tmp_path / "sol.py"
    py.write_text(solved + "\n\n" + hint, encoding="utf-8")
    for path, where in ((nb, "the solution block at cell 0 (id sol), line 5 (5 of its 6 lines) reappears in the "
                             "student version at cell 1 (id hint), lines 2-6"),
                        (py, "the solution block at line 5 (5 of its 6 lines) reappears in the student version at "
                             "lines 10-14")):
        assert main(["assignment", "release", str(path), "--out", str(tmp_path / "out")]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"{path}: {where}" in err, err
        assert not (tmp_path / "out" / path.name).exists()


def test_a_whole_solution_cell_repeated_in_another_cell_is_refused(tmp_path, capsys):
    answer = new_code_cell("def g(x):\n    y = np.tanh(x) * 2.5\n    z = np.exp(-y) + 1.0\n    return z / np.sum(z)\n",
                           metadata={"tags": ["solution"]})
    copy_ = new_code_cell("def g2(x):\n    y = np.tanh(x) * 2.5\n    z = np.exp(-y) + 1.0\n    return z / np.sum(z)\n")
    answer.id, copy_.id = "a", "c"
    path = _write(tmp_path, [new_code_cell(SOLVED_F), answer, copy_])
    assert main(["assignment", "release", str(path), "--out", str(tmp_path / "out")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert ("the solution block at cell 1 (id a), line 1 (the whole solution cell) (3 of its 3 lines) reappears "
            "in the student version at cell 2 (id c), lines 2-4") in err, err


@pytest.mark.parametrize("metadata", [
    {"notes": "x * 42 SECRET_NOTES"},                                     # tester 7's nb_cell_meta
    {"tags": ["solution"], "answer": "x*42 SECRET_ANSWER"},                # nb2_answer
    _nbgrader() | {"nbgrader": _nbgrader()["nbgrader"] | {"comment": "answer is SECRET_COMMENT"}},  # nb2_nbgcomment
    {"backprop_lab": {"exercise": 1, "hint": "SECRET_HINT"}},
])
def test_a_solution_cell_keeps_only_the_metadata_jupyter_and_the_conventions_read(tmp_path, metadata):
    """Tester 7, T6: a solution cell's own metadata ("notes", "answer", nbgrader's "comment") was copied
    verbatim. It keeps nbformat's keys and the conventions' documented keys; other cells keep all theirs."""
    meta = metadata | {"jupyter": {"source_hidden": False}, "editable": True}
    solved = new_code_cell(SOLVED_F, metadata=meta)
    other = new_code_cell("f(1)\n", metadata={"notes": "kept: this cell holds no solution"})
    rep, nb = _released(_write(tmp_path, [solved, other]), tmp_path)
    kept = nb.cells[0].metadata
    assert kept["jupyter"] == {"source_hidden": False} and kept["editable"] is True
    assert kept.get("tags") == metadata.get("tags")
    if "nbgrader" in metadata:
        assert kept["nbgrader"] == _nbgrader()["nbgrader"]
    if "backprop_lab" in metadata:
        assert kept["backprop_lab"] == {"exercise": 1}
    assert set(kept) <= {"jupyter", "editable", "tags", "nbgrader", "backprop_lab"}
    assert nb.cells[1].metadata == {"notes": "kept: this cell holds no solution"}
    assert nb.cells[0].source == STUB_F


def test_a_misspelt_marker_is_named_by_its_line_in_the_file(tmp_path, capsys):
    """Tester 7, T7: m1.py's '## BEGIN SOLUTION' at file line 6 was 'the code from line 4 (lines counted
    from there), line 3'."""
    py = tmp_path / "m1.py"
    py.write_text('import numpy as np\n\n\ndef f(x):\n    """doc"""\n    ## BEGIN SOLUTION\n    secret = x * 4242\n'
                  "    ### END SOLUTION\n    return secret\n", encoding="utf-8")
    md = tmp_path / "m1.md"
    md.write_text("# L\n\nText.\n\n```python\n" + SOLVED_F + "```\n\n```python\ndef g(x):\n    ## BEGIN SOLUTION\n"
                  "    return x\n    ### END SOLUTION\n```\n", encoding="utf-8")
    for path, where in ((py, "the file, line 6: '## BEGIN SOLUTION' looks like a marker"),
                        (md, "the lesson, line 14: '## BEGIN SOLUTION' looks like a marker")):
        assert main(["assignment", "release", str(path), "--out", str(tmp_path / "out")]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"{path}: {where}" in err, err


def test_a_released_python_file_ends_with_a_newline(tmp_path):
    """Tester 7, T7: a released .py is a text file: it ends with one newline, even when the solution file
    did not."""
    py = tmp_path / "m17.py"
    py.write_text("def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n\n\ndef g(x):\n"
                  "    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION", encoding="utf-8")
    text = release(py, tmp_path / "out").path.read_text(encoding="utf-8")
    assert text.endswith('raise NotImplementedError("Exercise 2: implement g")\n') and not text.endswith("\n\n")


def test_a_marker_planted_in_every_place_of_a_solution_is_absent_from_the_release(tmp_path):
    """Z14: a unique marker in the notebook's metadata, a solution cell's metadata, an attachment only
    the answer shows (its name a prefix of the question's), outputs, and the docstring, comments and strings
    of removed solution code; none may reach the student version (raw JSON, every byte)."""
    solved = new_code_cell(
        'def f(x):\n    """Return 42 x."""\n    ### BEGIN SOLUTION\n    """SECRET_DOCSTRING"""\n'
        '    # SECRET_COMMENT\n    note = "SECRET_STRING"\n    return x * 42\n    ### END SOLUTION\n',
        metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": "f", "locked": False,
                               "schema_version": 3}, "answer": "SECRET_CELL_METADATA"},
        execution_count=1, outputs=[new_output("stream", name="stdout", text="SECRET_OUTPUT\n")])
    whole = new_code_cell('def g(x):\n    """SECRET_WHOLE_DOCSTRING"""\n    return x  # SECRET_WHOLE_COMMENT\n',
                          metadata={"tags": ["solution"]})
    shown = new_code_cell("print(f(1))\n", execution_count=2, outputs=[
        new_output("execute_result", data={"text/plain": "SECRET_RESULT", "image/png": "U0VDUkVU"},
                   execution_count=2)])
    secret_png = base64.b64encode(b"SECRET_ATTACHMENT").decode()
    answer = new_markdown_cell(
        "Plot: ![q](attachment:plot.png.question.png) <!-- BEGIN SOLUTION -->![a](attachment:plot.png)"
        "<!-- END SOLUTION -->",
        attachments={"plot.png": {"image/png": secret_png}, "plot.png.question.png": {"image/png": "AAAA"}})
    path = _write(tmp_path, [solved, whole, shown, answer], answer_key="SECRET_NOTEBOOK_METADATA",
                  papermill={"parameters": {"expected": "SECRET_PAPERMILL"}},
                  language_info={"name": "python"})
    raw = path.read_text()
    assert raw.count("SECRET") == 10 and secret_png in raw  # every marker is in the solution
    rep, nb = _released(path, tmp_path)
    text = rep.path.read_text()
    assert "U0VDUkVU" not in text and secret_png not in text
    assert nb.metadata == {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    assert nb.cells[3].attachments == {"plot.png.question.png": {"image/png": "AAAA"}}
    assert nb.cells[0].source == ('def f(x):\n    """Return 42 x."""\n    # YOUR CODE HERE\n'
                                  '    raise NotImplementedError("Exercise 1: implement f")\n')
    assert [c.id for c in nb.cells] == [c.id for c in (solved, whole, shown, answer)]  # ids are identifiers, kept


@pytest.mark.parametrize("name", ["layers.py", "lesson.md"])
def test_the_docstring_comments_and_strings_of_removed_solution_code_are_absent_from_a_file_release(tmp_path, name):
    """Z14, in a Python file and a lesson: what the removed solution code held is gone with it."""
    code = ('def f(x):\n    """Return 42 x <!-- BEGIN SOLUTION -->SECRET_HTML<!-- END SOLUTION -->."""\n'
            '    ### BEGIN SOLUTION\n    """SECRET_DOCSTRING"""\n    # SECRET_COMMENT\n'
            '    note = "SECRET_STRING"  # SECRET_TRAILING\n    return x * 42\n    ### END SOLUTION\n')
    path = tmp_path / name
    if name.endswith(".md"):  # (a lesson's code refuses an HTML marker, as one that looks like a marker)
        code = code.replace(" <!-- BEGIN SOLUTION -->SECRET_HTML<!-- END SOLUTION -->", "")
    path.write_text(code if name.endswith(".py") else f"# Lesson\n\n```python exercise=1\n{code}```\n")
    rep = release(path, tmp_path / "out")
    text = rep.path.read_text()
    assert "SECRET" not in text and 'raise NotImplementedError("Exercise 1: implement f")' in text, text
