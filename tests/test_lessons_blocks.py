"""Every Python code block in the lessons is executed: it must be written as `>>>` examples
(pytest's doctest runs them, `--doctest-glob=*.md`); pseudocode and diagrams are fenced as
``text``."""

import pathlib
import re

import pytest

LESSONS = sorted(pathlib.Path(__file__).resolve().parent.parent.joinpath("lessons").glob("*.md"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_every_python_block_is_a_doctest(path):
    text = path.read_text(encoding="utf-8")
    for m in FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        line = text[: m.start()].count("\n") + 1
        if path.name == "README.md" and lang in ("", "sh", "text"):
            continue
        assert lang in ("python", "text", "sh", "math"), f"{path.name}:{line}: fence the block as python or text"
        if lang == "python":
            assert ">>>" in body, f"{path.name}:{line}: a python block that the tests cannot run"


def test_there_are_lessons_with_examples():
    assert len(LESSONS) >= 20
    assert sum(p.read_text(encoding="utf-8").count(">>>") for p in LESSONS) > 300
