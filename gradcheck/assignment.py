"""``gradcheck assignment release``: the student version of a solution notebook, lesson or Python file;
``gradcheck assignment autograder``: the zip Gradescope builds an assignment's autograder from (:func:`autograder_zip`).

The markers are nbgrader's; what becomes of them, and what is refused so that no solution leaks,
is :data:`DESCRIPTION`. "Exercise N" counts the cells (a lesson's code blocks, a Python file's
top-level ``def``/``class``) holding a solution; the task is read from the enclosing ``def``/``class``
(:func:`_task`); cell metadata ``{"backprop_lab": {"exercise": N, "task": "..."}}`` or a fence's
``exercise=N task="..."`` overrides them. Notebooks need ``nbformat`` (the ``notebooks`` extra).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import stat
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from . import _pyast
from .errors import EXIT_PASS, UsageError

__all__ = ["BEGIN_SOLUTION", "END_SOLUTION", "BEGIN_HIDDEN_TESTS", "END_HIDDEN_TESTS",
           "ReleaseReport", "holds_solutions", "solution_cell", "student_source", "student_notebook",
           "student_markdown", "student_python", "release", "add_assignment_parser", "cmd_release", "cmd_autograder",
           "autograder_zip", "AUTOGRADER_PACKAGES"]

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN_TESTS = "### BEGIN HIDDEN TESTS"
END_HIDDEN_TESTS = "### END HIDDEN TESTS"
_MARKERS = (BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN_TESTS, END_HIDDEN_TESTS)
# marker words behind comment characters or other text: a marker to nbgrader (substring), refused here
_LOOKS_LIKE_MARKER = re.compile(r"^[^\w'\"]*#[^\w'\"]*(BEGIN|END)(\b.*\b(SOLUTION|HIDDEN)|[\s_-]*(SOL|HID))",
                                re.IGNORECASE)
_MARKER_WORDS = re.compile(r"\b(BEGIN|END)[ \t-]+(SOLUTION|HIDDEN[ \t_-]*TESTS?)\b", re.IGNORECASE)  # not end_solution
MD_BEGIN_SOLUTION = "<!-- BEGIN SOLUTION -->"
MD_END_SOLUTION = "<!-- END SOLUTION -->"
TEXT_STUB = "YOUR ANSWER HERE"
_MD_MARKER = re.compile(r"<!--[ \t]*(BEGIN|END)[ \t]+SOLUTION[ \t]*-->")  # inline or on its own line
_MD_LOOKS_LIKE_MARKER = re.compile(r"\b(BEGIN|END)[\s_-]*(SOL|HID)|<!--\s*(BEGIN|END)\b", re.IGNORECASE)
_HTML_LOOKS_LIKE_MARKER = re.compile(r"<!--\s*(BEGIN|END)\b|\b(BEGIN|END)[\s_-]*SOL\w*[\s_-]*-->", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_EXERCISE_N = re.compile(r"\bexercise=(\d+)\b")
_FENCE_TASK = re.compile(r'\btask="([^"]*)"')
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)")
_CLASS = re.compile(r"^\s*class\s+(\w+)")
_TOP_LEVEL = re.compile(r"^(?:@|def\s|async\s+def\s|class\s)")


@dataclass
class ReleaseReport:
    """What :func:`release` read and wrote, the ``NotImplementedError`` messages, blocks replaced and removed."""

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
    return f"implement {func or cls}" if func or cls else "write your solution here"


def _close(block: tuple[str, int]) -> str:
    return block[0].replace("BEGIN", "END")


def _text_solutions(source: str, where: str, *, python: bool = False, first_line: int = 1) -> tuple[str, int]:
    """``(text, n)``: each ``<!-- BEGIN SOLUTION -->`` ... ``<!-- END SOLUTION -->`` region replaced by
    :data:`TEXT_STUB`; UsageError for a bad or near marker (``python``: HTML-like ones only)."""
    near = _HTML_LOOKS_LIKE_MARKER if python else _MD_LOOKS_LIKE_MARKER
    for i, line in enumerate(source.splitlines(), start=first_line):
        if line.strip() not in _MARKERS and near.search(_MD_MARKER.sub("", line)):
            raise UsageError(f"{where}, line {i}: {line.strip()!r} looks like a marker but is none of "
                             f"{MD_BEGIN_SOLUTION!r}, {MD_END_SOLUTION!r} (inline or on its own line) or "
                             f"{BEGIN_SOLUTION!r}, {END_SOLUTION!r} (on its own line); fix its spelling (or "
                             f"reword the text) so that no solution is released by accident.")
    out, n, pos, opened = [], 0, 0, None
    for m in _MD_MARKER.finditer(source):
        line = source.count("\n", 0, m.start()) + first_line
        if m.group(1) == "BEGIN" and opened is not None:
            raise UsageError(f"{where}, line {line}: {m.group(0)!r} inside the solution opened at line "
                             f"{opened[1]}; close it first ({MD_END_SOLUTION!r}).")
        if m.group(1) == "END" and opened is None:
            raise UsageError(f"{where}, line {line}: {m.group(0)!r} but no block is open.")
        if m.group(1) == "BEGIN":
            out.append(source[pos:m.start()])
            opened = (m.group(0), line)
        else:
            out.append(TEXT_STUB)
            n, opened = n + 1, None
        pos = m.end()
    if opened is not None:
        raise UsageError(f"{where}: {opened[0]!r} at line {opened[1]} is never closed ({MD_END_SOLUTION!r} missing).")
    new = "".join(out) + source[pos:]
    if not python and (m := _SOLUTION_DETAILS.search(new)):  # a fold is no marker: it would be released
        raise UsageError(f"{where}, line {new.count(chr(10), 0, m.start()) + first_line}: {m.group(0)!r} outside a "
                         f"solution region would be released as it is; put the answer between "
                         f"{MD_BEGIN_SOLUTION!r} and {MD_END_SOLUTION!r}.")
    return new, n


#: A folded block titled as an answer (``<details><summary>Solution</summary>``): not a marker.
_SOLUTION_DETAILS = re.compile(r"<summary>[^<]*\b(solutions?|answers?)\b[^<]*</summary>", re.IGNORECASE)


def student_source(source: str, *, exercise: int = 1, task: str | None = None, markdown: bool = False,
                   where: str = "cell", html: bool = False, first_line: int = 1) -> tuple[str, int, int, list[str]]:
    """Replace the solution blocks of one cell's source and drop its hidden tests.

    Parameters
    ----------
    source : str
        The cell's source.
    exercise : int
        ``N`` of "Exercise N: ..."; ``task`` its text (default :func:`_task`).
    markdown : bool
        A Markdown or raw cell: blocks and ``<!-- ... -->`` regions become :data:`TEXT_STUB`.
    where, first_line : str, int
        How errors name the cell and number its first line.
    html : bool
        The caller replaces the ``<!-- ... -->`` regions (:func:`student_python`).

    Returns
    -------
    (str, int, int, list of str)
        New source, solution blocks replaced, hidden-test blocks removed, the messages written.

    Raises
    ------
    UsageError
        A misspelt, nested or unbalanced marker.
    """
    source, n_sol = _text_solutions(source, where, first_line=first_line) if markdown else (source, 0)
    lines = source.splitlines()
    out: list[str] = []
    inside: tuple[str, int] | None = None  # (BEGIN marker, line number)
    n_hidden = 0
    messages: list[str] = []
    for i, line in enumerate(lines):
        n = i + first_line
        text, ind = line.strip(), _indent(line)
        bare = _MD_MARKER.sub("", line) if html else line
        if text in (BEGIN_SOLUTION, BEGIN_HIDDEN_TESTS):
            if inside is not None:
                raise UsageError(f"{where}, line {n}: {text!r} inside the {inside[0]!r} block opened at "
                                 f"line {inside[1]}; close it first ({_close(inside)!r}).")
            inside = (text, n)
            n_hidden += text == BEGIN_HIDDEN_TESTS
            n_sol += text == BEGIN_SOLUTION
            if text == BEGIN_SOLUTION and markdown:
                out.append(f"{ind}{TEXT_STUB}")
            elif text == BEGIN_SOLUTION:
                messages.append(f"Exercise {exercise}: {task or _task(lines, i)}")
                msg = json.dumps(messages[-1], ensure_ascii=False)
                out += [f"{ind}# YOUR CODE HERE", f"{ind}raise NotImplementedError({msg})"]
        elif text in _MARKERS:
            if inside is None or text != _close(inside):
                opened = (f"the open block is {inside[0]!r} (line {inside[1]})" if inside
                          else "no block is open")
                raise UsageError(f"{where}, line {n}: {text!r} but {opened}.")
            inside = None
        elif _LOOKS_LIKE_MARKER.match(bare) or _MARKER_WORDS.search(bare):
            raise UsageError(f"{where}, line {n}: {text!r} looks like a marker but is none of "
                             f"{', '.join(repr(m) for m in _MARKERS)} (a marker stands alone on its line, "
                             f"not behind comment characters or other text); fix its spelling (or reword "
                             f"the comment) so that no solution or hidden test is released by accident.")
        elif inside is None:
            out.append(line)
    if inside is not None:
        raise UsageError(f"{where}: {inside[0]!r} at line {inside[1]} is never closed "
                         f"({_close(inside)!r} missing).")
    while n_hidden and out and not out[-1].strip():  # the blank line that led into removed hidden tests
        out.pop()
    new = "\n".join(out) + ("\n" if source.endswith("\n") and out else "")
    return new, n_sol, n_hidden, messages


_EXERCISE_FLAGS = ("solution", "solution2")  # the exercise and exercise2 notebook extensions
_SOLUTION_TAGS = ("solution", "solutions")
_READ_KEYS = {("nbgrader", "solution"), *((k,) for k in _EXERCISE_FLAGS),
              *((f"{k}_first",) for k in _EXERCISE_FLAGS)}


def _unreadable(where: str, what: str, why: str) -> UsageError:
    return UsageError(f"{where}: {what}: {why}; cannot tell for sure whether it marks a solution, so it is "
                      f"not released. Mark a solution cell with nbgrader's \"solution\": true, the tag "
                      f"\"solution\" or solution blocks, and remove the metadata otherwise.")


def _said_solution(meta: Any, where: str, path: tuple = ()) -> None:
    """Refuse metadata under ``path`` that says "solution" where :func:`solution_cell` does not read it:
    a key naming solution, or a string value that is "solution(s)"."""
    if isinstance(meta, dict):
        for key, value in meta.items():
            here = (*path, str(key))
            if path == () and key in ("tags", "backprop_lab"):
                continue  # read by solution_cell; our own task text may say "solution"
            if "solution" in str(key).lower() and here not in _READ_KEYS:
                raise _unreadable(where, f"metadata {'.'.join(here)} = {value!r}", "no known convention "
                                  "uses this key")
            _said_solution(value, where, here)
    elif isinstance(meta, list):
        for value in meta:
            _said_solution(value, where, path)
    elif isinstance(meta, str) and meta.strip().lower() in _SOLUTION_TAGS:
        raise _unreadable(where, f"metadata {'.'.join(path)} = {meta!r}", "no known convention uses this value")


def solution_cell(metadata: Any, where: str = "cell") -> bool:
    """Whether a notebook cell's ``metadata`` marks it as a solution cell, one rule for every convention.

    nbgrader's ``{"nbgrader": {"solution": true}}`` (or ``"true"``), a tag ``"solution(s)"`` (any case),
    or the exercise/exercise2 extensions' ``{"solution(2)": "hidden"}`` (``"shown"``, ``true``) on any
    but the exercise's first cell (``"solution_first": true``).

    Raises
    ------
    UsageError
        Metadata saying solution in a form not read for sure (nbgrader's flag other than true/false/
        ``"true"``, another flag value, ``"hide-solution"``, ``{"exercise": {"solution": 1}}``), named by ``where``.
    """
    meta = metadata if isinstance(metadata, dict) else {}
    _said_solution(meta, where)
    verdict = False
    grader = meta.get("nbgrader")
    if isinstance(grader, dict) and "solution" in grader:
        flag = grader["solution"]
        if isinstance(flag, str) and flag.strip().lower() == "true":
            flag = True
        if not isinstance(flag, (bool, type(None))):
            raise _unreadable(where, f"metadata nbgrader.solution = {flag!r}", "not true or false (nbgrader "
                              "itself reads any non-empty value, \"false\" too, as true)")
        verdict |= flag is True
    for key in _EXERCISE_FLAGS:
        flag, first = meta.get(key), meta.get(f"{key}_first", False)
        if not isinstance(first, bool):
            raise _unreadable(where, f"metadata {key}_first = {first!r}", "not true or false")
        if isinstance(flag, str) and flag.strip().lower() in ("hidden", "shown"):
            flag = True
        if not isinstance(flag, (bool, type(None))):
            raise _unreadable(where, f"metadata {key} = {flag!r}", "not \"hidden\", \"shown\", true or false")
        verdict |= flag is True and not first
    tags = meta.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        if "solution" in repr(tags).lower():
            raise _unreadable(where, f"metadata tags = {tags!r}", "not a list of strings")
        tags = []
    for tag in tags:
        if tag.strip().lower() in _SOLUTION_TAGS:
            verdict = True
        elif "solution" in tag.lower():
            raise _unreadable(where, f"tag {tag!r}", "a tag naming solution that is not \"solution\"")
    return verdict


def _whole_answer(source: str, exercise: int, task: str | None, markdown: bool) -> tuple[str, list[str]]:
    """The stub replacing a solution cell without blocks, its task naming the first ``def``/``class``."""
    if markdown:
        return TEXT_STUB, []
    name = next((m.group(1) for line in source.splitlines() if _TOP_LEVEL.match(line)
                 for m in [_DEF.match(line) or _CLASS.match(line)] if m), None)
    message = f"Exercise {exercise}: {task or (f'implement {name}' if name else 'write your solution here')}"
    return f"# YOUR CODE HERE\nraise NotImplementedError({json.dumps(message, ensure_ascii=False)})", [message]


def _student_cells(cells: list[tuple], html: bool = False) -> tuple[list[str], list[str], int, int]:
    """:func:`student_source` over ``(source, where, markdown, numbered, exercise, task, whole[, first_line])``
    cells; a numbered solution is exercise ``exercise`` (default: last + 1); a ``whole`` cell without
    blocks is replaced whole. Returns sources, messages, blocks replaced, hidden blocks removed."""
    sources, messages, n_sol, n_hidden, number = [], [], 0, 0, 0
    for src, where, markdown, numbered, exercise, task, whole, *first in cells:
        has_block = (any(line.strip() == BEGIN_SOLUTION for line in src.splitlines())
                     or (markdown and _MD_MARKER.search(src) is not None))
        if numbered and (has_block or whole):
            number = int(exercise) if exercise is not None else number + 1
        new, s, h, msgs = student_source(src, exercise=number, task=task, markdown=markdown,
                                         where=where, html=html, first_line=first[0] if first else 1)
        # (a bad marker is refused even in a whole answer)
        if whole and not has_block:
            (new, msgs), s, h = _whole_answer(src, number, task, markdown), 1, 0
        sources.append(new)
        messages, n_sol, n_hidden = messages + msgs, n_sol + s, n_hidden + h
    return sources, messages, n_sol, n_hidden


#: The metadata a cell that held a solution keeps: Jupyter's keys and the conventions' (others may hold it).
_CELL_KEYS: dict[str, tuple[str, ...] | None] = {
    **dict.fromkeys(("jupyter", "collapsed", "scrolled", "deletable", "editable", "format", "name", "tags",
                     "solution", "solution2", "solution_first", "solution2_first")),
    "nbgrader": ("grade", "grade_id", "locked", "points", "schema_version", "solution", "task"),
    "backprop_lab": ("exercise", "task"),
}


def _kept_metadata(meta: Any) -> dict:
    """``meta`` of a cell that held a solution, with only the keys of :data:`_CELL_KEYS` (deep copies)."""
    kept = {}
    for key, value in (meta.items() if isinstance(meta, dict) else ()):
        if key in _CELL_KEYS:
            sub = _CELL_KEYS[key]
            kept[key] = ({k: copy.deepcopy(v) for k, v in value.items() if k in sub}
                         if sub is not None and isinstance(value, dict) else copy.deepcopy(value))
    return kept


#: The notebook metadata released: what Jupyter and nbformat read (other keys, papermill's parameters or an
#: author's notes, may hold an answer).
_NOTEBOOK_KEYS = ("kernelspec", "language_info", "jupytext", "title", "authors")
#: A Markdown attachment reference (``![a](attachment:plot.png)``, ``<img src="attachment:plot.png">``).
_ATTACHMENT_REF = re.compile(r"attachment:([^\s)\"'<>]+)")


def _released_cell(cell: Any, src: str, held_solution: bool) -> None:
    """Set ``cell`` to its student version ``src``: a cell that ``held_solution`` keeps only
    :data:`_CELL_KEYS` of its metadata (its id, an identifier as nbgrader's grade_id, is kept); timings and
    outputs cleared; only the attachments ``src`` still names (by their whole name) kept."""
    if held_solution:
        cell.metadata = _kept_metadata(cell.get("metadata", {}))
    cell.source = src
    cell.get("metadata", {}).pop("execution", None)  # run timestamps, as nbconvert's ClearOutput
    if cell.cell_type == "code":
        cell.outputs, cell.execution_count = [], None
    if "attachments" in cell:
        named = set(_ATTACHMENT_REF.findall(src))
        cell.attachments = {k: v for k, v in cell.attachments.items() if k in named or quote(k) in named}
        if not cell.attachments:
            del cell["attachments"]


def student_notebook(nb: Any) -> tuple[Any, list[str], int, int]:
    """The student version of a notebook node (a deep copy), as nbgrader's ``ClearSolutions`` and ``ClearOutput``.

    Each cell through :func:`student_source` (a solution cell, :func:`solution_cell`, without blocks
    replaced whole); a cell that held a solution keeps only :data:`_CELL_KEYS` of its metadata; outputs, execution counts and timings, the notebook's metadata but :data:`_NOTEBOOK_KEYS` (widget
    state too) and attachments the source no longer names cleared (:func:`_released_cell`).

    Returns
    -------
    (NotebookNode, list of str, int, int)
        The student notebook, the exercise messages, solution blocks replaced,
        hidden-test blocks removed.

    Raises
    ------
    UsageError
        A misspelt, nested or unbalanced marker, or cell or notebook metadata that says solution
        in a form :func:`solution_cell` does not read for sure (cell named).
    """
    new = copy.deepcopy(nb)
    cells = []
    for i, cell in enumerate(new.cells):
        meta = cell.get("metadata", {}).get("backprop_lab", {}) or {}
        src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        where = f"cell {i}" + (f" (id {cell.get('id')})" if cell.get("id") else "")
        whole = solution_cell(cell.get("metadata", {}), where)
        cells.append((src, where, cell.cell_type != "code", cell.cell_type == "code",
                      meta.get("exercise"), meta.get("task"), whole))
    new.metadata.pop("widgets", None)
    _said_solution(dict(new.metadata), "the notebook")
    for key in [k for k in new.metadata if k not in _NOTEBOOK_KEYS]:
        del new.metadata[key]
    sources, messages, n_sol, n_hidden = _student_cells(cells)
    for cell, src, (old, _, markdown, _, _, _, whole) in zip(new.cells, sources, cells):
        held = whole or any(line.strip() in _MARKERS for line in old.splitlines()) or bool(
            markdown and _MD_MARKER.search(old))
        _released_cell(cell, src, held)
    return new, messages, n_sol, n_hidden


def holds_solutions(path: str | os.PathLike) -> bool:
    """Whether the notebook at ``path`` has anything :func:`student_notebook` would take out or refuse
    (a marker or near-marker, a solution cell, metadata saying solution): publish its student version only.

    Raises
    ------
    UsageError
        ``path`` is not a readable notebook.
    """
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
        cells, metadata = nb.get("cells", []), dict(nb.get("metadata", {}))
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, TypeError) as exc:
        raise UsageError(f"{path} is not a readable Jupyter notebook: {type(exc).__name__}: {exc}") from exc
    try:
        metadata.pop("widgets", None)
        _said_solution(metadata, "the notebook")
        whole = [solution_cell(cell.get("metadata", {})) for cell in cells]
    except UsageError:
        return True  # release refuses it
    for cell, is_solution in zip(cells, whole):
        src = cell.get("source", "")
        lines = (src if isinstance(src, str) else "".join(src)).splitlines()
        if is_solution or any(line.strip() in _MARKERS or _LOOKS_LIKE_MARKER.match(line)
                              or _MARKER_WORDS.search(line) or _MD_LOOKS_LIKE_MARKER.search(line) for line in lines):
            return True
    return False


def _student_text(text: str, cells: list, html: bool = False) -> tuple[str, list[str], int, int]:
    """The parts of ``text`` (cells of :func:`_student_cells`) released and joined again."""
    sources, messages, n_sol, n_hidden = _student_cells(cells, html)
    out = "\n".join(sources)
    return out + ("\n" if text.endswith("\n") and not out.endswith("\n") else ""), messages, n_sol, n_hidden


def _markdown_parts(text: str) -> tuple[str, list[str], int, int]:
    """student_markdown with the number of hidden-test blocks removed as a fourth value."""
    cells, buf, start, fence, info = [], [], 1, None, ""

    def text_cell():
        cells.append(("\n".join(buf), "the lesson", True, False, None, None, False, start))

    for i, line in enumerate(text.splitlines(), start=1):
        m = _FENCE.match(line)
        if fence is None and m:
            buf.append(line)
            text_cell()
            fence, info, buf, start = m.group(1), m.group(2).strip(), [], i + 1
        elif fence is not None and m and m.group(1).startswith(fence) and not m.group(2).strip():
            n, task = _EXERCISE_N.search(info), _FENCE_TASK.search(info)
            cells.append(("\n".join(buf), "the lesson", False, True, n and n.group(1), task and task.group(1),
                          False, start))
            buf, start, fence = [line], i, None
        else:
            buf.append(line)
    if fence is not None:
        raise UsageError(f"line {start - 1}: a code block ({fence}{info}) is never closed.")
    text_cell()
    return _student_text(text, cells)



def student_markdown(text: str) -> tuple[str, list[str], int]:
    """The student version of a lesson: code blocks' bodies are code cells, the text between Markdown cells.

    Returns
    -------
    (str, list of str, int)
        The student text, the exercise messages, solution blocks replaced.

    Raises
    ------
    UsageError
        A misspelt, nested or unbalanced marker (line named), an unclosed code block.
    """
    return _markdown_parts(text)[:3]


def _python_parts(text: str) -> tuple[str, list[str], int, int]:
    """student_python with the number of hidden-test blocks removed as a fourth value."""
    chunks: list[tuple[int, list[str]]] = [(1, [])]
    for i, line in enumerate(text.splitlines(), start=1):
        prev = next((x for x in reversed(chunks[-1][1]) if x.strip()), "")
        if _TOP_LEVEL.match(line) and not prev.startswith("@"):
            chunks.append((i, []))
        chunks[-1][1].append(line)
    _text_solutions(text, "the file", python=True)  # a bad HTML marker, named by the file's line
    new, messages, n_sol, n_hidden = _student_text(text, [("\n".join(lines), "the file", False, True, None, None,
                                                           False, start) for start, lines in chunks if lines],
                                                   html=True)
    new, n_text = _text_solutions(new, "the file after its solution blocks were replaced", python=True)
    if n_text:
        try:
            _pyast.parse(text)
        except SyntaxError:
            pass  # not Python before either: nothing to keep
        else:
            try:
                _pyast.parse(new)
            except SyntaxError as exc:
                raise UsageError(f"the student version is no longer Python once its {MD_BEGIN_SOLUTION!r} "
                                 f"regions are replaced by {TEXT_STUB!r} (line {exc.lineno} of it: {exc.msg}); "
                                 f"keep each region inside one comment or one string.") from exc
    if new.strip() and not new.endswith("\n"):
        new += "\n"   # a Python file ends with a newline, as tools and editors expect
    return new, messages, n_sol + n_text, n_hidden



def student_python(text: str) -> tuple[str, list[str], int]:
    """The student version of a Python file: each top-level ``def``/``class`` (decorators included) and the
    text before the first is a cell; a ``<!-- BEGIN SOLUTION -->`` region becomes :data:`TEXT_STUB`.

    Returns
    -------
    (str, list of str, int)
        The student text, the exercise messages, solution blocks replaced.

    Raises
    ------
    UsageError
        A misspelt, nested or unbalanced marker (line named); a region whose replacement leaves no
        valid Python.
    """
    return _python_parts(text)[:3]


# --------------------------------------------------------------------------- a solution copied elsewhere

#: A normalised line shorter than this (spaces not counted: ``return dX``) tells nothing when it reappears.
_TRIVIAL_CHARS = 12


def _normalised(line: str) -> str:
    """``line`` without its comment, every run of white space one space."""
    quote, i = None, 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#":
            line = line[:i]
            break
        i += 1
    return " ".join(line.split())


def _telling(line: str) -> bool:
    return len(_normalised(line).replace(" ", "")) >= _TRIVIAL_CHARS


@dataclass
class _Region:
    """A solution block (or a whole solution cell) of the source: where it is and its telling lines."""

    where: str                      # "line 40" or "cell 3 (id c3), line 2"
    lines: list[str]                # normalised telling lines, in order
    parts: tuple[str, ...] = ()     # the blocks' ``where`` of a region made of several blocks


#: A telling line of the student version: ``(cell prefix or "", line number, normalised line)``.
_Released = tuple[str, int, str]


def _released_lines(source: str, prefix: str = "") -> list[_Released]:
    return [(prefix, i, _normalised(line)) for i, line in enumerate(source.splitlines(), start=1) if _telling(line)]


def _blocks(source: str, prefix: str = "", whole: bool = False, fences: bool = False) -> list[_Region]:
    """The solution blocks of ``source`` (``whole``: the source if none), and the blocks of one cell
    (``fences``: of one code block) together as one more region: one answer, each block maybe too short."""
    regions: list[_Region] = []
    inside: _Region | None = None
    group: list[_Region] = []

    def together():
        if len(group) > 1:
            regions.append(_Region(f"{prefix}lines {', '.join(r.where.split('line ')[-1] for r in group)} "
                                   f"(one exercise's blocks together)", [x for r in group for x in r.lines],
                                   tuple(r.where for r in group)))
        group.clear()

    for i, line in enumerate(source.splitlines(), start=1):
        text = line.strip()
        if fences and inside is None and _FENCE.match(line):
            together()
        if text == BEGIN_SOLUTION:
            inside = _Region(f"{prefix}line {i}", [])
        elif text == END_SOLUTION and inside is not None:
            regions.append(inside)
            group.append(inside)
            inside = None
        elif inside is not None and _telling(line):
            inside.lines.append(_normalised(line))
    together()
    if whole and not regions:
        regions.append(_Region(f"{prefix}line 1 (the whole solution cell)",
                               [_normalised(line) for line in source.splitlines() if _telling(line)]))
    return regions


def _copied(region: _Region, released: list[_Released]) -> tuple[int, list[_Released]] | None:
    """``(lines of region found, where)`` if ``released`` repeats it, else None: a run of 3 lines in a
    row (one may differ), or anywhere all (>= 2), all but one (of >= 3), or over half (>= 3) of them."""
    wanted = set(region.lines)
    found = {line for _, _, line in released if line in wanted}
    k = len(region.lines)
    best_run: list[int] = []
    text = [line for _, _, line in released]
    for start in range(len(region.lines)):
        for pos in (p for p, line in enumerate(text) if line == region.lines[start]):
            run, changed, j = [], 0, 0
            while start + j < k and pos + j < len(text):
                if text[pos + j] == region.lines[start + j]:
                    run.append(pos + j)
                elif changed:
                    break
                else:
                    changed = 1
                j += 1
            if len(run) > len(best_run):
                best_run = run
    if (len(best_run) >= 3 or (k >= 3 and len(found) >= k - 1) or (len(found) >= 3 and 2 * len(found) > k)
            or (k >= 2 and len(found) == k)):
        at = best_run if len(best_run) >= 3 else [p for p, line in enumerate(text) if line in wanted]
        return len(found), [released[p] for p in at]
    return None


def _spans(at: list[_Released]) -> str:
    """Line numbers as ranges per cell: ``"lines 3-5, 9"``, ``"cell 4 (id c4), lines 1-6"``."""
    out: list[str] = []
    for prefix in dict.fromkeys(p for p, _, _ in at):
        nums = sorted({n for p, n, _ in at if p == prefix})
        ranges, start = [], nums[0]
        for a, b in zip(nums, nums[1:] + [None]):
            if b != a + 1:
                ranges.append(f"{start}" if start == a else f"{start}-{a}")
                start = b
        out.append(f"{prefix}line{'s' if len(nums) > 1 else ''} {', '.join(ranges)}")
    return "; ".join(out)


def _refuse_copies(src: Path, regions: list[_Region], released: list[_Released]) -> None:
    """Refuse (UsageError) a student version that repeats a solution region outside the solutions."""
    leaks, told = [], set()
    for region in regions:
        hit = _copied(region, released)
        if hit and not (region.parts and told.issuperset(region.parts)):   # said already, block by block
            told.add(region.where)
            n, at = hit
            leaks.append(f"the solution block{'s' * ('lines ' in region.where)} at {region.where} ({n} of its "
                         f"{len(region.lines)} lines) reappear{'s' * ('lines ' not in region.where)} "
                         f"in the student version at {_spans(at)}")
    if leaks:
        raise UsageError(f"{src}: {'; '.join(leaks)} (white space, comments and lines under "
                         f"{_TRIVIAL_CHARS} characters such as 'return dX' ignored; one line may differ), "
                         f"outside any solution block, so the student version would give that solution away. "
                         f"Put the copy inside a solution block too (it is then released with the solutions), "
                         f"or change it so that it no longer repeats the solution.")


def _valid_notebook(nb: Any, src: Path) -> None:
    """UsageError naming what and where (cell number and id) for a notebook nbformat's schema rejects."""
    import nbformat
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        path = list(getattr(exc, "absolute_path", None) or getattr(exc, "path", None) or [])
        where = ".".join(str(p) for p in path) or "the notebook"
        if len(path) >= 2 and path[0] == "cells" and isinstance(path[1], int) and path[1] < len(nb.cells):
            cell_id = nb.cells[path[1]].get("id")
            where = (f"cell {path[1]}" + (f" (id {cell_id})" if cell_id else "")
                     + (f", {'.'.join(str(p) for p in path[2:])}" if path[2:] else ""))
        message = getattr(exc, "message", None) or str(exc).splitlines()[0]
        raise UsageError(f"{src} is not a valid Jupyter notebook (nbformat {nb.get('nbformat')}."
                         f"{nb.get('nbformat_minor')} schema): {where}: {message}. Fix that in the notebook "
                         f"and release again (nbformat.validate reports the same).") from exc


def release(source: str | os.PathLike, out_dir: str | os.PathLike) -> ReleaseReport:
    """Write the student version of the solution notebook, lesson or Python file ``source`` to
    ``out_dir/<same name>``.

    Raises
    ------
    UsageError
        ``source`` missing or no valid ``.ipynb``, ``.md`` or ``.py``, no solution block, a bad marker, a
        solution block repeated outside the solutions (:func:`_refuse_copies`), ``out_dir`` would overwrite it.
    """
    src = Path(source)
    if not src.is_file():
        raise UsageError(f"SOURCE {str(src)!r} is not a file (looked in {os.getcwd()!r}).")
    student, n_hidden, is_text = None, 0, src.suffix in (".md", ".py")
    if is_text:
        try:
            text = src.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{src} cannot be read as UTF-8 text: {exc}") from exc
    else:
        try:
            import nbformat
        except ImportError as exc:  # pragma: no cover - nbformat comes with the notebooks extra
            raise UsageError("gradcheck assignment needs nbformat: pip install 'backprop-lab[notebooks]'.") from exc
        try:
            nb = nbformat.read(src, as_version=4)
        except Exception as exc:  # noqa: BLE001 - json, schema or encoding errors: all mean "not a notebook"
            raise UsageError(f"{src} is not a readable Jupyter notebook: {type(exc).__name__}: {exc}") from exc
        _valid_notebook(nb, src)
    try:
        if is_text:
            to_student = _python_parts if src.suffix == ".py" else _markdown_parts
            text, messages, n_sol, n_hidden = to_student(text)
        else:
            student, messages, n_sol, n_hidden = student_notebook(nb)
    except UsageError as exc:
        raise UsageError(f"{src}: {exc}") from exc
    if is_text:
        regions = _blocks(src.read_text(encoding="utf-8"), fences=src.suffix == ".md")
        released = _released_lines(text)
    else:
        regions, released = [], []
        for i, (old, cell) in enumerate(zip(nb.cells, student.cells)):
            prefix = f"cell {i}" + (f" (id {old.get('id')})" if old.get("id") else "") + ", "
            src_text = old.source if isinstance(old.source, str) else "".join(old.source)
            regions += _blocks(src_text, prefix, whole=solution_cell(old.get("metadata", {})))
            released += _released_lines(cell.source, prefix)
    _refuse_copies(src, regions, released)
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
removed; in Markdown (a lesson's text, a notebook's Markdown or raw cell) a solution block and
'<!-- BEGIN SOLUTION -->' ... '<!-- END SOLUTION -->' (inline or on lines of their own) become
'YOUR ANSWER HERE'. A solution cell (nbgrader's metadata "solution": true, the tag "solution",
the exercise2 extension's "solution2": "hidden") with no block is replaced whole; metadata that
says solution in another form is refused; a solution cell keeps only Jupyter's own metadata and the conventions'
keys. A student version that repeats a solution block's code outside the solution blocks (white space and
comments ignored, one line may differ: a planted-bug file made from the answer) is refused, the block and the
lines named: put the copy in a solution block too (released with the solutions) or change it.
Outputs, widget state and attachments only a solution named are cleared. In a
Python file each top-level def or class is numbered as one exercise, and a '<!-- BEGIN SOLUTION -->'
region (a jupytext Markdown cell's comment, a docstring) becomes 'YOUR ANSWER HERE'. Writes DIR/<name of
SOURCE>; never overwrites SOURCE."""

EXAMPLES = """\
examples:
  gradcheck assignment release notebooks/07-exercises.ipynb --out build/student
  gradcheck assignment release lessons/23-layernorm.md lessons/32b-gru.md --out build/student
  gradcheck assignment release assignments/cs231n_layers/solution/layers.py --out assignments/cs231n_layers/stub

exit codes:
  0  the student version(s) written
  2  usage error: SOURCE missing or not a (valid) notebook, lesson or Python file, no solution block, a misspelt, nested
     or unclosed marker or one behind comment characters ('# ### BEGIN HIDDEN TESTS'; cell and line named),
     cell metadata that says solution in a form not read for sure, a solution block's code repeated outside
     the solution blocks (block and lines named), or --out would overwrite SOURCE

Write outside notebooks/ and lessons/: the test suite runs every notebook and lesson there,
and a student version stops at its first exercise.
"""


# ---------------------------------------------------------------- gradcheck assignment autograder
# The zip Gradescope builds an assignment's autograder image from: ``setup.sh`` and ``run_autograder`` at its top, the
# grading tests, and ``backprop-lab/``, the source ``setup.sh`` installs: ``pyproject.toml``, ``README.md`` and the
# ``.py`` files of manualprop, autoprop and gradcheck, nothing else. So no ``.venv``, ``.git``, ``__pycache__``,
# solution, mutant, notebook or lesson reaches the image the students' code runs beside; a file of the tests that
# holds a solution (a notebook :func:`holds_solutions` finds, a ``.py`` or ``.md`` file with ``### BEGIN SOLUTION``)
# is refused (newuser26 M5: the docs said "backprop-lab/: this repository", and a TA zipped the working copy).

#: The import packages ``setup.sh`` installs, copied from the source tree (``.py`` files only: they hold no other)
AUTOGRADER_PACKAGES = ("manualprop", "autoprop", "gradcheck")
#: The files of the source tree's top that ``pip install`` reads (``pyproject.toml`` names ``README.md``)
_TOP_FILES = ("pyproject.toml", "README.md")
_ENTRY = ("setup.sh", "run_autograder")


#: The assignment whose ``setup.sh`` and ``run_autograder`` serve a folder that has none (:func:`entry_script`)
_ENTRY_MODEL = Path("assignments") / "linear_relu_ce"


def entry_script(root: str | os.PathLike, name: str, assignment: str) -> str:
    """The text of the entry script ``name`` (``"setup.sh"`` or ``"run_autograder"``) for an assignment folder named
    ``assignment`` that has none: the source tree ``root``'s ``assignments/linear_relu_ce`` script, its comments naming
    ``assignment`` (the two are the same for every assignment: they install backprop-lab and run ``gradcheck grade``
    on ``tests/``; only their comments name it; newuser30 F10: a new folder was refused and told to copy them).

    Raises
    ------
    UsageError
        ``root`` has no such script.
    """
    path = Path(root) / _ENTRY_MODEL / name
    if name not in _ENTRY or not path.is_file():
        raise UsageError(f"{str(path)!r}: no such entry script in the source tree (expected one of {_ENTRY}).")
    return path.read_text().replace(_ENTRY_MODEL.name, assignment)


def _source_tree(source: str | os.PathLike | None) -> Path:
    """The backprop-lab source tree: ``source``, or the one this gradcheck was imported from; UsageError when it is
    not one (an installed copy has no ``pyproject.toml`` beside its packages)."""
    root = Path(source) if source is not None else Path(__file__).resolve().parents[1]
    missing = [n for n in (*_TOP_FILES, *AUTOGRADER_PACKAGES) if not (root / n).exists()]
    if missing:
        raise UsageError(f"{str(root)!r} is not a backprop-lab source tree (no {', '.join(missing)}): run this from a "
                         f"checkout of the repository (pip install -e .), or pass --source PATH to one.")
    return root


def _files(folder: Path) -> list[Path]:
    """The regular files under ``folder`` (links not followed), without ``__pycache__``, compiled files and names
    starting with a dot, in name order."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        for f in sorted(filenames):
            p = Path(dirpath) / f
            if not f.startswith(".") and not f.endswith((".pyc", ".pyo")) and stat.S_ISREG(p.lstat().st_mode):
                out.append(p)
    return out


def _not_an_assignment(assignment) -> str:
    """The usage error for an assignment folder without ``tests/``, the one entry the package cannot write."""
    return (f"{str(assignment)!r} is not an assignment folder: it has no tests/ (the grading tests, as "
            "assignments/linear_relu_ce/tests holds them; setup.sh and run_autograder are written when it has none).")


def autograder_zip(assignment: str | os.PathLike, out: str | os.PathLike, *,
                   source: str | os.PathLike | None = None) -> Path:
    """Write ``out/autograder-<assignment's name>.zip`` for Gradescope and return its path.

    Parameters
    ----------
    assignment : path
        A folder holding ``tests/`` (the grading tests, with any helpers), and ``setup.sh`` and ``run_autograder`` when
        it has its own: a script it lacks is written from the source tree's (:func:`entry_script`, the same for every
        assignment; newuser30 F10: a new folder was refused and told to copy them by hand).
    out : path
        The folder for the zip (created).
    source : path, optional
        The backprop-lab source tree (default: the one this gradcheck was imported from).

    Returns
    -------
    Path
        The zip: ``setup.sh`` and ``run_autograder`` (mode 755), ``tests/...``, ``backprop-lab/{pyproject.toml,
        README.md}`` and ``backprop-lab/<package>/**/*.py`` for each of :data:`AUTOGRADER_PACKAGES`.

    Raises
    ------
    UsageError
        ``assignment`` has no ``tests/``, ``source`` is not a source tree, or a file of the tests holds a solution
        (module docstring).
    """
    a = Path(assignment)
    if not (a / "tests").is_dir():
        raise UsageError(_not_an_assignment(assignment))
    root = _source_tree(source)
    members: list[tuple[Path | bytes, str]] = [
        (a / n if (a / n).exists() else entry_script(root, n, a.resolve().name).encode(), n) for n in _ENTRY]
    members += [(p, "tests/" + p.relative_to(a / "tests").as_posix()) for p in _files(a / "tests")]
    files = [(p, name) for p, name in members if isinstance(p, Path)]
    leaks = [name for p, name in files if p.suffix == ".ipynb" and holds_solutions(p)] + [
        name for p, name in files if p.suffix in (".py", ".md") and BEGIN_SOLUTION in p.read_text(errors="replace")]
    if leaks:
        raise UsageError(f"{', '.join(leaks)} hold solution markers (### BEGIN SOLUTION): not packed, as the image "
                         f"runs the students' code beside the tests. Remove the solutions from the tests first.")
    from .grading.runner import check_tests_collect

    try:  # what grading refuses at collection (a timeout(0) marker) is the staff's, seen before students submit
        check_tests_collect(a / "tests")
    except UsageError as exc:  # (verify45b F10: packed, every Gradescope submission was a grader error)
        raise UsageError(f"{exc}\nThe autograder is not packed: fix the tests first.") from None
    members += [(root / n, "backprop-lab/" + n) for n in _TOP_FILES]
    members += [(p, "backprop-lab/" + p.relative_to(root).as_posix()) for pkg in AUTOGRADER_PACKAGES
                for p in _files(root / pkg) if p.suffix == ".py"]
    Path(out).mkdir(parents=True, exist_ok=True)
    path = Path(out) / f"autograder-{a.resolve().name}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for p, name in members:  # a script the folder lacks: the package's (bytes), dated now
            info = zipfile.ZipInfo.from_file(p, name) if isinstance(p, Path) else zipfile.ZipInfo(
                name, time.localtime()[:6])
            info.external_attr = ((0o755 if name in _ENTRY else 0o644) | stat.S_IFREG) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, p.read_bytes() if isinstance(p, Path) else p)
    return path


def add_assignment_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``assignment`` (and its ``release``) to the ``gradcheck`` parser's subparsers."""
    fmt = argparse.RawDescriptionHelpFormatter
    a = sub.add_parser("assignment", help="exercise notebooks and lessons: make the student version (release)",
                       description="Author exercise notebooks (nbgrader's markers).", epilog=EXAMPLES,
                       formatter_class=fmt)
    asub = a.add_subparsers(dest="assignment_command", metavar="{release,autograder}", required=True)
    r = asub.add_parser("release", help="write the student version of solution notebooks",
                        description=DESCRIPTION, epilog=EXAMPLES, formatter_class=fmt)
    r.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="solution notebook(s) (.ipynb), lesson(s) (.md) or Python file(s) (.py)")
    r.add_argument("--out", required=True, metavar="DIR", help="folder for the student version(s)")
    r.set_defaults(func=cmd_release)
    z = asub.add_parser("autograder", help="write the zip Gradescope builds an assignment's autograder from",
                        description="Write OUT/autograder-NAME.zip for Gradescope from an assignment folder (tests/, and "
                        "setup.sh and run_autograder when it has its own, else gradcheck's): those, and backprop-lab/ with pyproject.toml, README.md and the "
                        "packages' .py files only (no .venv, .git, solutions, mutants, notebooks or lessons). "
                        "docs/gradescope.md says how to upload and check it.", formatter_class=fmt,
                        epilog="example:\n  gradcheck assignment autograder assignments/linear_relu_ce --out dist/")
    z.add_argument("assignment", metavar="ASSIGNMENT", help="the assignment folder, e.g. assignments/linear_relu_ce")
    z.add_argument("--out", required=True, metavar="DIR", help="folder for the zip (created)")
    z.add_argument("--source", metavar="PATH", default=None,
                   help="the backprop-lab source tree to pack (default: the one gradcheck runs from)")
    z.set_defaults(func=cmd_autograder)
    return a


def cmd_autograder(args: argparse.Namespace) -> int:
    """Run ``gradcheck assignment autograder``; print the zip's path and size; return the exit code."""
    path = autograder_zip(args.assignment, args.out, source=args.source)
    with zipfile.ZipFile(path) as z:
        n = len(z.namelist())
    print(f"wrote {path} ({n} files, {path.stat().st_size / 1024:.0f} KiB): upload it as the autograder of the "
          f"Gradescope assignment (docs/gradescope.md)")
    if written := [e for e in _ENTRY if not (Path(args.assignment) / e).exists()]:
        print(f"{' and '.join(written)}: gradcheck's own (the folder has none; the same for every assignment: they "
              "install backprop-lab and run gradcheck grade on tests/); put yours in the folder to pack those instead")
    return EXIT_PASS


def cmd_release(args: argparse.Namespace) -> int:
    """Run ``gradcheck assignment release``; print what was written; return the exit code."""
    reports = [release(s, args.out) for s in args.sources]
    print("\n".join(rep.summary() for rep in reports))
    return EXIT_PASS
