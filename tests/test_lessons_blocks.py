"""Every Python code block in the lessons is executed: it must be written as `>>>` examples
(pytest's doctest runs them, `--doctest-glob=*.md`), or be an exercise's file
(```` ```python file=NAME.py ````, checked with ``gradcheck check`` by
``test_lesson_exercises.py``); pseudocode and diagrams are fenced as ``text``."""

import pathlib
import re

import pytest

LESSONS = sorted(pathlib.Path(__file__).resolve().parent.parent.joinpath("lessons").glob("*.md"))
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_every_python_block_is_a_doctest(path):
    text = path.read_text(encoding="utf-8")
    for m in FENCE.finditer(text):
        lang, info, body = m.group(1), m.group(2).strip(), m.group(3)
        line = text[: m.start()].count("\n") + 1
        if path.name == "README.md" and lang in ("", "sh", "text"):
            continue
        assert lang in ("python", "text", "sh", "math"), f"{path.name}:{line}: fence the block as python or text"
        if lang == "python" and info.startswith("file="):
            continue  # an exercise's file: run by tests/test_lesson_exercises.py with gradcheck check
        assert not info, f"{path.name}:{line}: only an exercise's python block has an info string (file=...)"
        if lang == "python":
            assert ">>>" in body, f"{path.name}:{line}: a python block that the tests cannot run"


def test_there_are_lessons_with_examples():
    assert len(LESSONS) >= 20
    assert sum(p.read_text(encoding="utf-8").count(">>>") for p in LESSONS) > 300
