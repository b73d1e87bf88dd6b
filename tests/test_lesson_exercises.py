"""The exercises at the end of the layer lessons, and their release to students.

A lesson's ``## Exercises`` section numbers 2 to 4 exercises. An exercise a student checks
with the checker gives its file as a fenced block ```` ```python file=NAME.py ```` (the
solution between ``### BEGIN SOLUTION`` / ``### END SOLUTION``; a derivation's answer in
the text between ``<!-- BEGIN SOLUTION -->`` / ``<!-- END SOLUTION -->``) and the command
in a ``sh`` block, ``gradcheck check NAME.py::Class ...``; a trailing ``# exit N: words``
says the exit code and words of the diagnosis expected (a file with a planted bug), default
exit 0.

* Solution version (the lesson as stored): every command, run on the files with the
  markers removed, exits as stated.
* Student version (``gradcheck assignment release`` of the lessons): no marker and no line
  of a solution is left, and no file repeats a solution (a planted-bug file that is an earlier
  exercise's answer with one bug holds its method bodies in solution blocks: it comes with the
  solutions); every command on a file that held a solution now exits 3 with the exercise's
  ``NotImplementedError``; any other file with a planted bug (another layer's) is released
  unchanged (so its check, run on the solution version, is the student's).
"""

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import run_here

from gradcheck.assignment import (
    BEGIN_SOLUTION,
    END_SOLUTION,
    MD_BEGIN_SOLUTION,
    MD_END_SOLUTION,
    student_markdown,
)
from gradcheck.cli import main

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
SCRIPT = Path(sys.executable).parent / "gradcheck"
GRADCHECK = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "gradcheck"]

SECTION = re.compile(r"^## Exercises\n(.*?)^---$", re.S | re.M)
ITEM = re.compile(r"^(\d+)\. ", re.M)
FILE_FENCE = re.compile(r"^```python file=(\S+)[^\n]*\n(.*?)^```", re.S | re.M)
SH_FENCE = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
EXPECT = re.compile(r"\s+#\s*exit (\d)(?::\s*(.*))?$")

#: Layer lessons whose exercises are checked with ``gradcheck check``.
WITH_CHECKED_EXERCISES = [
    "01-linear-layer.md",
    "02-activations.md",
    "03-softmax-cross-entropy.md",
    "04-regression-losses.md",
    "05-binary-cross-entropy.md",
    "05b-hinge-loss.md",
    "20-conv2d.md",
    "20b-conv-transpose.md",
    "21-pooling.md",
    "22-batchnorm.md",
    "23-layernorm.md",
    "24-dropout.md",
    "25-residual-block.md",
    "30-embedding.md",
    "30b-weight-tying.md",
    "31-rnn-bptt.md",
    "32-lstm.md",
    "32b-gru.md",
    "33-attention.md",
    "34-multi-head-attention.md",
    "35-transformer-block.md",
]


LAYER_LESSON = re.compile(r"^(0[1-5]|2\d|3\d)\w*-")   # parts 0 (01-05b), 2 and 3: a layer or a loss each


def test_every_layer_lesson_has_checked_exercises():
    layer_lessons = sorted(p.name for p in LESSONS.glob("*.md")
                           if LAYER_LESSON.match(p.name) and p.name != "01b-numerical-gradients.md")
    assert len(layer_lessons) >= 21
    assert sorted(WITH_CHECKED_EXERCISES) == layer_lessons


def exercises(name, text=None):
    text = (LESSONS / name).read_text(encoding="utf-8") if text is None else text
    m = SECTION.search(text)
    assert m, f"{name}: no '## Exercises' section before the footer"
    return m.group(1)


def files(section):
    return {fname: body for fname, body in FILE_FENCE.findall(section)}


def commands(section):
    """``(argv, expected exit, expected words)`` of every ``gradcheck check`` line."""
    out = []
    for block in SH_FENCE.findall(section):
        for line in block.splitlines():
            if not line.strip().startswith("gradcheck check "):
                continue
            m = EXPECT.search(line)
            cmd = line[: m.start()] if m else line
            out.append((shlex.split(cmd)[1:], int(m.group(1)) if m else 0, (m.group(2) or "") if m else ""))
    return out


def run(argv, cwd):
    """``gradcheck`` in this process (the checked file still runs in its sandbox child), in ``cwd``."""
    out, old = io.StringIO(), os.getcwd()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = main(argv)
    finally:
        os.chdir(old)
    return code, " ".join(out.getvalue().split())


def write_files(section, where):
    for fname, body in files(section).items():
        lines = [ln for ln in body.splitlines() if ln.strip() not in (BEGIN_SOLUTION, END_SOLUTION)]
        (where / fname).write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("name", WITH_CHECKED_EXERCISES)
def test_lesson_ends_with_two_to_four_exercises_and_a_check_command(name):
    section = exercises(name)
    numbers = [int(n) for n in ITEM.findall(section)]
    assert numbers == list(range(1, len(numbers) + 1)) and 2 <= len(numbers) <= 4, (name, numbers)
    cmds = commands(section)
    assert cmds, f"{name}: no 'gradcheck check' command in the exercises"
    for argv, _, _ in cmds:
        assert argv[1].split("::")[0] in files(section), f"{name}: {argv[1]} is not a file of the exercises"


@pytest.mark.parametrize("name", WITH_CHECKED_EXERCISES)
def test_solution_version_passes_its_checks(name, tmp_path):
    section = exercises(name)
    write_files(section, tmp_path)
    for argv, code, words in commands(section):
        got, out = run(argv, tmp_path)
        assert got == code, f"{name}: {' '.join(argv)} exited {got}, expected {code}:\n{out[-3000:]}"
        assert words in out, f"{name}: {' '.join(argv)}: {words!r} not in the output:\n{out[-3000:]}"


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    p = subprocess.run(GRADCHECK + ["assignment", "release", *[str(LESSONS / n) for n in WITH_CHECKED_EXERCISES],
                                    "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    for n in WITH_CHECKED_EXERCISES:
        assert f"wrote {out / n} from {LESSONS / n}" in p.stdout
    return out


def _solution_lines(text):
    """Lines inside solution blocks (code or text) and the lines outside them."""
    inside, outside, state = set(), set(), False
    for line in text.splitlines():
        s = line.strip()
        if s in (BEGIN_SOLUTION, MD_BEGIN_SOLUTION):
            state = True
        elif s in (END_SOLUTION, MD_END_SOLUTION):
            state = False
        elif s:
            (inside if state else outside).add(s)
    return inside, outside


@pytest.mark.parametrize("name", WITH_CHECKED_EXERCISES)
def test_student_version_has_no_solution_and_its_checks_stop_at_the_exercise(name, released, tmp_path):
    solution = (LESSONS / name).read_text(encoding="utf-8")
    student = (released / name).read_text(encoding="utf-8")
    for marker in (BEGIN_SOLUTION, END_SOLUTION, MD_BEGIN_SOLUTION, MD_END_SOLUTION):
        assert marker not in student
    inside, outside = _solution_lines(solution)
    assert inside, f"{name}: no solution block"
    leaked = [s for s in inside - outside if s in {ln.strip() for ln in student.splitlines()}]
    assert not leaked, f"{name}: solution lines in the student version: {leaked}"
    # everything outside the solutions is kept, in order
    kept = [ln for ln in student.splitlines() if ln.strip() not in ("YOUR ANSWER HERE", "# YOUR CODE HERE")
            and not ln.strip().startswith("raise NotImplementedError(\"Exercise ")]
    assert all(ln.strip() in outside or not ln.strip() for ln in kept)
    section = exercises(name, student)
    sol_files = files(exercises(name))
    write_files(section, tmp_path)
    for argv, _, _ in commands(section):
        fname = argv[1].split("::")[0]
        if BEGIN_SOLUTION in sol_files[fname]:
            got, out = run(argv, tmp_path)
            assert got == 3 and "NotImplementedError" in out and "Exercise " in out, (name, argv, got, out[-2000:])
        else:   # a file with a planted bug: the student gets it as it is (its check ran above)
            assert files(section)[fname] == sol_files[fname]


def _code(line):
    """A line of code as the leak check compares it: comment dropped, white space collapsed."""
    return " ".join(line.split("  #")[0].split())


def _repeated_solutions(solution, student):
    """Tester 7's leak check, automated: ``(file, found, total)`` for every file of the student version
    holding 3 or more of the lesson's solution lines (its ``### BEGIN SOLUTION`` blocks' code lines)."""
    sol = [_code(ln) for block in re.findall(rf"{BEGIN_SOLUTION}\n(.*?){END_SOLUTION}", solution, re.S)
           for ln in block.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    out = []
    for fname, body in FILE_FENCE.findall(student):
        present = {_code(ln) for ln in body.splitlines()}
        hit = [ln for ln in sol if ln in present]
        if len(hit) >= 3:
            out.append((fname, len(hit), len(sol)))
    return out


@pytest.mark.parametrize("name", WITH_CHECKED_EXERCISES)
def test_no_file_of_the_student_version_repeats_a_solution(name, released):
    """Tester 7, T5: exercise 2's planted-bug file was exercise 1's answer with one change, and was
    released as it was (in 11 lessons, up to 21 of 22 solution lines)."""
    solution = (LESSONS / name).read_text(encoding="utf-8")
    assert _repeated_solutions(solution, (released / name).read_text(encoding="utf-8")) == []


#: The lessons whose planted-bug file is an earlier exercise's answer with one bug (in solution blocks).
BUG_FILE_IS_AN_ANSWER = ["05b-hinge-loss.md", "20-conv2d.md", "20b-conv-transpose.md", "22-batchnorm.md",
                         "25-residual-block.md", "30-embedding.md", "30b-weight-tying.md", "32-lstm.md",
                         "32b-gru.md", "33-attention.md", "34-multi-head-attention.md"]


@pytest.mark.parametrize("name", WITH_CHECKED_EXERCISES)
def test_a_planted_bug_file_with_an_answer_in_it_is_released_with_the_solutions_and_says_so(name):
    section = exercises(name)
    later = [f for f, body in files(section).items() if f.endswith("_bug.py") and BEGIN_SOLUTION in body]
    assert (name in BUG_FILE_IS_AN_ANSWER) == bool(later), (name, later)
    for fname in later:
        text = " ".join(section.split())
        assert f"*When:* the methods of `{fname}` are the answer to exercise 1" in text, name
        assert "in the student version they are stubs (the check exits 3) and the file comes with the solutions" in text


@pytest.mark.parametrize("name", BUG_FILE_IS_AN_ANSWER)
def test_the_leak_check_and_release_catch_the_lessons_as_they_were(name, tmp_path):
    """The lessons before tester 7's report (the planted-bug file's methods outside solution blocks):
    the check above finds the answer in the student version, and release refuses them, exit 2."""
    text = (LESSONS / name).read_text(encoding="utf-8")
    fence = re.search(r'^```python file=(\S+_bug\.py) exercise=\d+ task="[^"]*"\n(.*?)^```', text, re.S | re.M)
    body = "\n".join(ln for ln in fence.group(2).splitlines() if ln.strip() not in (BEGIN_SOLUTION, END_SOLUTION))
    before = text[:fence.start()] + f"```python file={fence.group(1)}\n" + body + "\n" + text[fence.end() - 3:]
    student = student_markdown(before)[0]          # the student version as release wrote it then
    leaks = _repeated_solutions(before, student)
    assert [f for f, _, _ in leaks] == [fence.group(1)], leaks
    (tmp_path / name).write_text(before, encoding="utf-8")
    p = run_here("assignment", "release", tmp_path / name, "--out", tmp_path / "out")  # gradcheck.cli.main here
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and f"{tmp_path / name}: the solution block" in err, err
    assert "in the student version at lines" in err and "would give that solution away" in err, err
    assert not (tmp_path / "out" / name).exists()


#: Tester 18, H1: a loss whose L is wrong but whose backward is its exact derivative passed the exercise's
#: check (central differences differentiate L as written). ``(lesson, file, [(old, new), ...])``.
WRONG_LOSSES = [
    ("05b-hinge-loss.md", "hinge.py", [("return float(m.sum() / N)", "return float(m.sum() / N + self.margin)")]),
    ("05b-hinge-loss.md", "hinge.py", [("return float(m.sum() / N)", "return float(m.sum() / m.size)"),
                                       ("return dS / N", "return dS / dS.size")]),
    ("03-softmax-cross-entropy.md", "softmax_ce.py", [(".mean())", ".sum())"), ("return d / N", "return d")]),
]


@pytest.mark.parametrize("name, fname, edits", WRONG_LOSSES, ids=["hinge+margin", "hinge/NC", "softmax-ce-sum"])
def test_a_loss_exercise_check_catches_a_wrong_loss_value(name, fname, edits, tmp_path):
    section = exercises(name)
    write_files(section, tmp_path)
    body = (tmp_path / fname).read_text(encoding="utf-8")
    for old, new in edits:
        assert body.count(old) == 1, (fname, old)
        body = body.replace(old, new)
    (tmp_path / fname).write_text(body, encoding="utf-8")
    argv = next(a for a, code, _ in commands(section) if a[1].startswith(fname + "::") and code == 0)
    assert "--reference" in argv, argv
    got, out = run(argv, tmp_path)
    assert got == 1 and "the loss value L differs from the reference's" in out, out[-2000:]
    i = argv.index("--reference")
    got, out = run(argv[:i] + argv[i + 2:], tmp_path)   # the command as it was: the wrong L passed
    assert got == 0, out[-2000:]
