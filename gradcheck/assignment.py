"""Exercises: ``gradcheck assignment release`` makes the student version of a solution notebook,
lesson or Python file.

::

    gradcheck assignment release notebooks/07-exercises.ipynb --out build/student
    gradcheck assignment release lessons/23-layernorm.md lessons/32b-gru.md --out build/student

The solution notebook marks, inside code cells, with nbgrader's markers:

``### BEGIN SOLUTION`` ... ``### END SOLUTION``
    The instructor's code. The student version keeps the marker's indentation and
    has, instead of the block::

        # YOUR CODE HERE
        raise NotImplementedError("Exercise 1: implement the backward of Linear")

    ``N`` counts the code cells that hold a solution (1, 2, ...); the task is read
    from the enclosing ``def``/``class`` (``backward`` in ``class Linear`` gives
    "implement the backward of Linear"). Cell metadata
    ``{"backprop_lab": {"exercise": N, "task": "..."}}`` overrides either.
    In a Markdown cell the block becomes ``YOUR ANSWER HERE``.

``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS``
    Tests run only when grading: removed with their markers (the cell stays).

Every other cell is copied unchanged (metadata, ids, nbgrader's cell metadata
included), outputs and execution counts are cleared. A marker that is misspelt
(a ``#`` line with BEGIN/END and SOLUTION/HIDDEN that is not one of the four),
nested or unbalanced is a usage error (exit 2) naming the cell and line, so no
solution leaks into the student version by accident. Needs ``nbformat``
(``pip install 'backprop-lab[notebooks]'``).

A Markdown lesson (``.md``) is released by the same rules, its fenced code blocks as code
cells and the text between them as Markdown cells:

* in a code block, ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` becomes
  ``# YOUR CODE HERE`` / ``raise NotImplementedError("Exercise N: ...")``; ``N`` counts the
  code blocks that hold a solution, or is given in the fence's info string
  (```` ```python file=rmsnorm.py exercise=2 ````);
* in the text, ``<!-- BEGIN SOLUTION -->`` ... ``<!-- END SOLUTION -->`` (HTML comments,
  invisible when the lesson is rendered) becomes ``YOUR ANSWER HERE``.

A misspelt HTML marker is a usage error as in a notebook.

A Python file (``.py``, an assignment's ``layers.py``) is released as the code cells of a
notebook would be, each top-level ``def`` or ``class`` (with its decorators) one cell: ``N`` of
"Exercise N: implement affine_backward" counts the functions and classes that hold a solution
block, in the file's order.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import EXIT_PASS, UsageError

__all__ = [
    "BEGIN_SOLUTION",
    "END_SOLUTION",
    "BEGIN_HIDDEN_TESTS",
    "END_HIDDEN_TESTS",
    "ReleaseReport",
    "student_source",
    "student_notebook",
    "student_markdown",
    "student_python",
    "release",
    "add_assignment_parser",
    "cmd_release",
]

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN_TESTS = "### BEGIN HIDDEN TESTS"
END_HIDDEN_TESTS = "### END HIDDEN TESTS"
_MARKERS = (BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS)
_LOOKS_LIKE_MARKER = re.compile(r"^\s*#+\s*(BEGIN|END)\b.*\b(SOLUTION|HIDDEN)", re.IGNORECASE)
MD_BEGIN_SOLUTION = "<!-- BEGIN SOLUTION -->"
MD_END_SOLUTION = "<!-- END SOLUTION -->"
_MD_MARKERS = {MD_BEGIN_SOLUTION: BEGIN_SOLUTION, MD_END_SOLUTION: END_SOLUTION}
_MD_LOOKS_LIKE_MARKER = re.compile(r"<!--\s*(BEGIN|END)\b.*\b(SOLUTION|HIDDEN)", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_EXERCISE_N = re.compile(r"\bexercise=(\d+)\b")
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)")
_CLASS = re.compile(r"^\s*class\s+(\w+)")
_TOP_LEVEL = re.compile(r"^(?:@|def\s|async\s+def\s|class\s)")


@dataclass
class ReleaseReport:
    """What :func:`release` wrote.

    Attributes
    ----------
    source, path : Path
        The solution notebook read and the student notebook written.
    exercises : list of str
        The ``NotImplementedError`` messages, in order ("Exercise 1: implement ...").
    solutions : int
        Solution blocks replaced.
    hidden_tests : int
        Hidden-test blocks removed.
    """

    source: Path
    path: Path
    exercises: list[str] = field(default_factory=list)
    solutions: int = 0
    hidden_tests: int = 0

    def summary(self) -> str:
        """Two lines for the terminal."""
        return (f"wrote {self.path} from {self.source}: {self.solutions} solution block(s) replaced, "
                f"{self.hidden_tests} hidden test block(s) removed\n"
                + "\n".join(f"  {e}" for e in self.exercises))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _task(lines: list[str], at: int) -> str:
    """What the student writes at line ``at``: read from the enclosing ``def`` and ``class``."""
    width = len(_indent(lines[at]))
    func = cls = None
    for line in reversed(lines[:at]):
        if not line.strip() or len(_indent(line)) >= width:
            continue
        if func is None and (m := _DEF.match(line)):
            func, width = m.group(1), len(_indent(line))
        elif m := _CLASS.match(line):
            cls = m.group(1)
            break
        else:
            width = len(_indent(line))
    if func and cls:
        return f"implement the {func} of {cls}" if func in ("forward", "backward") else f"implement {cls}.{func}"
    if func:
        return f"implement {func}"
    if cls:
        return f"implement {cls}"
    return "write your solution here"


def student_source(source: str, *, exercise: int = 1, task: str | None = None, markdown: bool = False,
                   where: str = "cell") -> tuple[str, int, int, list[str]]:
    """Replace the solution blocks of one cell's source and drop its hidden tests.

    Parameters
    ----------
    source : str
        The cell's source.
    exercise : int
        ``N`` of "Exercise N: ..." for this cell's solution blocks.
    task : str, optional
        The task ("implement the backward of Linear"); default read from the
        enclosing ``def``/``class`` of each block.
    markdown : bool
        A Markdown cell: a solution block becomes ``YOUR ANSWER HERE``.
    where : str
        How error messages name the cell.

    Returns
    -------
    (str, int, int, list of str)
        New source, solution blocks replaced, hidden-test blocks removed, the
        ``NotImplementedError`` messages written.

    Raises
    ------
    UsageError
        A misspelt, nested or unbalanced marker.
    """
    lines = source.splitlines()
    out: list[str] = []
    inside: tuple[str, int] | None = None  # (BEGIN marker, line number)
    n_sol = n_hidden = 0
    messages: list[str] = []
    for i, line in enumerate(lines):
        text = line.strip()
        if text in _MARKERS:
            if text.startswith("### BEGIN"):
                if inside is not None:
                    raise UsageError(f"{where}, line {i + 1}: {text!r} inside the {inside[0]!r} block opened at "
                                     f"line {inside[1]}; close it first ({inside[0].replace('BEGIN', 'END')!r}).")
                inside = (text, i + 1)
                if text == BEGIN_SOLUTION:
                    n_sol += 1
                    ind = _indent(line)
                    if markdown:
                        out.append(f"{ind}YOUR ANSWER HERE")
                    else:
                        msg = f"Exercise {exercise}: {task or _task(lines, i)}"
                        messages.append(msg)
                        out += [f"{ind}# YOUR CODE HERE", f"{ind}raise NotImplementedError({json.dumps(msg, ensure_ascii=False)})"]
                else:
                    n_hidden += 1
            else:
                expected = inside[0].replace("BEGIN", "END") if inside else None
                if text != expected:
                    opened = f"the open block is {inside[0]!r} (line {inside[1]})" if inside else "no block is open"
                    raise UsageError(f"{where}, line {i + 1}: {text!r} but {opened}.")
                inside = None
            continue
        if _LOOKS_LIKE_MARKER.match(line):
            raise UsageError(f"{where}, line {i + 1}: {text!r} looks like a marker but is none of "
                             f"{', '.join(repr(m) for m in _MARKERS)}; fix its spelling (or reword the "
                             f"comment) so that no solution or hidden test is released by accident.")
        if inside is None:
            out.append(line)
    if inside is not None:
        raise UsageError(f"{where}: {inside[0]!r} at line {inside[1]} is never closed "
                         f"({inside[0].replace('BEGIN', 'END')!r} missing).")
    while n_hidden and out and not out[-1].strip():  # the blank line that led into removed hidden tests
        out.pop()
    new = "\n".join(out)
    if source.endswith("\n") and out:
        new += "\n"
    return new, n_sol, n_hidden, messages


def _nbformat():
    try:
        import nbformat
    except ImportError as exc:  # pragma: no cover - nbformat comes with the notebooks extra
        raise UsageError("gradcheck assignment needs nbformat: pip install 'backprop-lab[notebooks]'.") from exc
    return nbformat


def student_notebook(nb: Any) -> tuple[Any, list[str], int, int]:
    """The student version of a notebook node (a deep copy; ``nb`` is not changed).

    Returns
    -------
    (NotebookNode, list of str, int, int)
        The student notebook, the exercise messages, solution blocks replaced,
        hidden-test blocks removed.
    """
    import copy

    new = copy.deepcopy(nb)
    messages: list[str] = []
    n_sol = n_hidden = 0
    number = 0
    for i, cell in enumerate(new.cells):
        src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        where = f"cell {i}" + (f" (id {cell.get('id')})" if cell.get("id") else "")
        override = cell.get("metadata", {}).get("backprop_lab", {}) or {}
        has_solution = any(line.strip() == BEGIN_SOLUTION for line in src.splitlines())
        if has_solution and cell.cell_type == "code":
            number = int(override.get("exercise", number + 1))
        cell.source, s, h, msgs = student_source(src, exercise=number, task=override.get("task"),
                                                 markdown=cell.cell_type == "markdown", where=where)
        n_sol, n_hidden, messages = n_sol + s, n_hidden + h, messages + msgs
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return new, messages, n_sol, n_hidden


def _segments(text: str) -> list[tuple[bool, int, str, list[str]]]:
    """Split Markdown into ``(is_code, first line number, fence info, lines)``: the bodies of
    fenced code blocks and the text between them (fence lines themselves in the text)."""
    out: list[tuple[bool, int, str, list[str]]] = []
    lines = text.splitlines()
    buf: list[str] = []
    start, fence, info = 1, None, ""
    for i, line in enumerate(lines, start=1):
        m = _FENCE.match(line)
        if fence is None and m:
            buf.append(line)
            out.append((False, start, "", buf))
            fence, info, buf, start = m.group(1), m.group(2).strip(), [], i + 1
        elif fence is not None and m and m.group(1).startswith(fence) and not m.group(2).strip():
            out.append((True, start, info, buf))
            buf, start, fence = [line], i, None
        else:
            buf.append(line)
    if fence is not None:
        raise UsageError(f"line {start - 1}: a code block ({fence}{info}) is never closed.")
    out.append((False, start, "", buf))
    return out


def student_markdown(text: str) -> tuple[str, list[str], int]:
    """The student version of a Markdown lesson's text (see the module docstring).

    Returns
    -------
    (str, list of str, int)
        The student text, the exercise messages, solution blocks replaced.

    Raises
    ------
    UsageError
        A misspelt, nested or unbalanced marker (line named), an unclosed code block.
    """
    parts: list[str] = []
    messages: list[str] = []
    n_sol = number = 0
    for is_code, start, info, lines in _segments(text):
        src = "\n".join(lines)
        if is_code:
            if any(line.strip() == BEGIN_SOLUTION for line in lines):
                m = _EXERCISE_N.search(info)
                number = int(m.group(1)) if m else number + 1
            new, s, _, msgs = student_source(src, exercise=number, where=f"the code block from line {start}")
        else:
            for k, line in enumerate(lines):
                if line.strip() not in _MD_MARKERS and _MD_LOOKS_LIKE_MARKER.search(line):
                    raise UsageError(f"line {start + k}: {line.strip()!r} looks like a marker but is neither "
                                     f"{MD_BEGIN_SOLUTION!r} nor {MD_END_SOLUTION!r}; fix its spelling so that "
                                     f"no solution is released by accident.")
            src = "\n".join(_MD_MARKERS.get(line.strip(), line) for line in lines)
            new, s, _, msgs = student_source(src, markdown=True, where=f"the text from line {start}")
        parts.append(new)
        n_sol, messages = n_sol + s, messages + msgs
    out = "\n".join(parts)
    return out + ("\n" if text.endswith("\n") and not out.endswith("\n") else ""), messages, n_sol


def student_python(text: str) -> tuple[str, list[str], int]:
    """The student version of a Python file's text (see the module docstring).

    Each top-level ``def``/``class`` (with the decorators above it) is one cell of
    :func:`student_source`; the text before the first is one more (the module docstring, imports).

    Returns
    -------
    (str, list of str, int)
        The student text, the exercise messages, solution blocks replaced.

    Raises
    ------
    UsageError
        A misspelt, nested or unbalanced marker (line named).
    """
    chunks: list[tuple[int, list[str]]] = [(1, [])]
    for i, line in enumerate(text.splitlines(), start=1):
        prev = next((x for x in reversed(chunks[-1][1]) if x.strip()), "")
        if _TOP_LEVEL.match(line) and not prev.startswith("@"):
            chunks.append((i, []))
        chunks[-1][1].append(line)
    parts: list[str] = []
    messages: list[str] = []
    n_sol = number = 0
    for start, lines in chunks:
        if any(line.strip() == BEGIN_SOLUTION for line in lines):
            number += 1
        if not lines:  # the file starts with a def: no text before it
            continue
        new, s, _, msgs = student_source("\n".join(lines), exercise=number,
                                         where=f"the code from line {start} (lines counted from there)")
        parts.append(new)
        n_sol, messages = n_sol + s, messages + msgs
    out = "\n".join(parts)
    return out + ("\n" if text.endswith("\n") and not out.endswith("\n") else ""), messages, n_sol


def _read_text(src: Path) -> str:
    try:
        return src.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{src} cannot be read as UTF-8 text: {exc}") from exc


def _release_markdown(src: Path) -> tuple[str, list[str], int]:
    try:
        return (student_python if src.suffix == ".py" else student_markdown)(_read_text(src))
    except UsageError as exc:
        raise UsageError(f"{src}: {exc}") from exc


def release(source: str | os.PathLike, out_dir: str | os.PathLike) -> ReleaseReport:
    """Write the student version of the solution notebook, lesson or Python file ``source`` to
    ``out_dir/<same name>``.

    Raises
    ------
    UsageError
        ``source`` missing or not a notebook (``.ipynb``), Markdown lesson (``.md``) or Python file (``.py``),
        no solution block in it, a bad marker, or ``out_dir`` would overwrite ``source``.
    """
    src = Path(source)
    if not src.is_file():
        raise UsageError(f"SOURCE {str(src)!r} is not a file (looked in {os.getcwd()!r}).")
    if src.suffix in (".md", ".py"):
        student, (text, messages, n_sol), n_hidden = None, _release_markdown(src), 0
    else:
        nbformat = _nbformat()
        try:
            nb = nbformat.read(src, as_version=4)
        except Exception as exc:  # noqa: BLE001 - json, schema or encoding errors: all mean "not a notebook"
            raise UsageError(f"{src} is not a readable Jupyter notebook: {type(exc).__name__}: {exc}") from exc
        try:
            student, messages, n_sol, n_hidden = student_notebook(nb)
        except UsageError as exc:
            raise UsageError(f"{src}: {exc}") from exc
    if n_sol == 0:
        where = "cell" if student is not None else "function or class" if src.suffix == ".py" else "code block or text"
        raise UsageError(f"{src} has no {BEGIN_SOLUTION!r} block in any {where}: nothing to release "
                         f"(is it already a student version?).")
    kind = {".ipynb": "a notebook", ".md": "a lesson", ".py": "a Python"}.get(Path(out_dir).suffix)
    if kind:
        raise UsageError(f"--out {str(out_dir)!r} looks like {kind} file; --out takes a folder "
                         f"(the student version is written as FOLDER/{src.name}).")
    out = Path(out_dir) / src.name
    if out.resolve() == src.resolve():
        raise UsageError(f"--out {str(out_dir)!r} would overwrite the solution notebook {src}; choose another folder.")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {str(out_dir)!r} cannot be used as the output folder "
                         f"({exc.strerror or exc}); give a folder you can write to.") from exc
    try:
        if student is None:
            out.write_text(text, encoding="utf-8")
        else:
            nbformat.validate(student)
            nbformat.write(student, out)
    except OSError as exc:
        raise UsageError(f"--out {str(out_dir)!r}: cannot write {out} ({exc.strerror or exc}).") from exc
    return ReleaseReport(src, out, messages, n_sol, n_hidden)


# --------------------------------------------------------------------------- command line

DESCRIPTION = """\
Make the student version of an exercise notebook, lesson or Python file: every block between
'### BEGIN SOLUTION' and '### END SOLUTION' (in a code cell, or a lesson's code block) becomes
'# YOUR CODE HERE' and 'raise NotImplementedError("Exercise N: implement ...")' (same
indentation), every block between '### BEGIN HIDDEN TESTS' and '### END HIDDEN TESTS' is
removed, outputs are cleared; in a lesson's text, '<!-- BEGIN SOLUTION -->' ...
'<!-- END SOLUTION -->' becomes 'YOUR ANSWER HERE'. In a Python file each top-level def or
class is numbered as one exercise. Writes DIR/<name of SOURCE>; never overwrites SOURCE."""

EXAMPLES = """\
examples:
  gradcheck assignment release notebooks/07-exercises.ipynb --out build/student
  gradcheck assignment release lessons/23-layernorm.md lessons/32b-gru.md --out build/student
  gradcheck assignment release assignments/cs231n_layers/solution/layers.py --out assignments/cs231n_layers/stub

exit codes:
  0  the student version(s) written
  2  usage error: SOURCE missing or not a notebook, lesson or Python file, no solution block, a misspelt, nested
     or unclosed marker (cell and line named), or --out would overwrite SOURCE

Write outside notebooks/ and lessons/: the test suite runs every notebook and lesson there,
and a student version stops at its first exercise.
"""


def add_assignment_parser(sub: argparse._SubParsersAction, epilog: str = "") -> argparse.ArgumentParser:
    """Add ``assignment`` (with its ``release`` subcommand) to the ``gradcheck`` parser's subparsers.

    ``epilog`` (the checker's exit codes) is accepted for symmetry with the other
    subcommands and not shown: release has its own exit codes.
    """
    del epilog
    fmt = argparse.RawDescriptionHelpFormatter
    a = sub.add_parser("assignment", help="exercise notebooks and lessons: make the student version (release)",
                       description="Author exercise notebooks (nbgrader's markers).", epilog=EXAMPLES,
                       formatter_class=fmt)
    asub = a.add_subparsers(dest="assignment_command", metavar="{release}", required=True)
    r = asub.add_parser("release", help="write the student version of solution notebooks",
                        description=DESCRIPTION, epilog=EXAMPLES, formatter_class=fmt)
    r.add_argument("sources", nargs="+", metavar="SOURCE", help="solution notebook(s) (.ipynb), lesson(s) (.md) or Python file(s) (.py)")
    r.add_argument("--out", required=True, metavar="DIR", help="folder for the student version(s)")
    r.set_defaults(func=cmd_release)
    return a


def cmd_release(args: argparse.Namespace) -> int:
    """Run ``gradcheck assignment release``; print what was written; return the exit code."""
    reports = [release(s, args.out) for s in args.sources]
    for rep in reports:
        print(rep.summary())
    return EXIT_PASS
