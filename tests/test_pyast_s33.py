"""Every ``ast.parse`` of gradcheck goes through :func:`gradcheck._pyast.parse`, which tries a parse again when
CPython 3.11's race of the AST constructor's recursion depth (python/cpython#106905, fixed in 3.11.8) failed it: the
first clean-clone CI of session 32's merge failed ``test_grading_dask``'s resumed batch on ``SystemError: AST
constructor recursion depth mismatch (before=147, after=96)`` from ``find_grading_tests``. Here ``ast.parse`` fails
as that race does, a chosen number of times; any other SystemError, and a SyntaxError, is not tried again."""

import ast
import re
from pathlib import Path

import pytest

from gradcheck import _pyast
from gradcheck.errors import UsageError
from gradcheck.grading.runner import find_grading_tests

ROOT = Path(__file__).resolve().parents[1]
RACE = "AST constructor recursion depth mismatch (before=147, after=96)"  # the CI's message


@pytest.fixture
def failing_parse(monkeypatch):
    """``ast.parse`` that raises ``SystemError(message)`` on its first ``times`` calls, then parses; its calls."""
    real, calls = ast.parse, []

    def arm(times: int, message: str = RACE):
        def parse(*args, **kwargs):
            calls.append(args[0])
            if len(calls) <= times:
                raise SystemError(message)
            return real(*args, **kwargs)

        monkeypatch.setattr(ast, "parse", parse)
        return calls

    return arm


def test_the_race_once_costs_a_retry_not_the_grading_run(failing_parse, tmp_path):
    (tmp_path / "test_a.py").write_text("def test_one(student):\n    pass\n\n\ndef test_two(grade):\n    pass\n")
    calls = failing_parse(1)
    found = find_grading_tests(tmp_path)  # SystemError before
    assert found == [f"{tmp_path / 'test_a.py'}::test_one", f"{tmp_path / 'test_a.py'}::test_two"]
    assert len(calls) == 2  # the same text parsed again
    assert calls[0] == calls[1]


def test_the_race_is_tried_again_up_to_retries_times(failing_parse):
    calls = failing_parse(_pyast.RETRIES)
    tree = _pyast.parse("x = 1", mode="exec")
    assert isinstance(tree, ast.Module) and ast.unparse(tree) == "x = 1"
    assert len(calls) == _pyast.RETRIES + 1


def test_the_race_every_time_still_raises_it(failing_parse):
    calls = failing_parse(10**6)
    with pytest.raises(SystemError, match=re.escape(RACE)):
        _pyast.parse("x = 1")
    assert len(calls) == _pyast.RETRIES + 1  # not forever


def test_another_system_error_is_raised_at_once(failing_parse):
    calls = failing_parse(1, "error return without exception set")
    with pytest.raises(SystemError, match="error return without exception set"):
        _pyast.parse("x = 1")
    assert len(calls) == 1


def test_a_syntax_error_is_not_tried_again(failing_parse, tmp_path):
    calls = failing_parse(0)
    with pytest.raises(SyntaxError):
        _pyast.parse("def f(:\n")
    assert len(calls) == 1
    (tmp_path / "test_bad.py").write_text("def test_one(student:\n")
    with pytest.raises(UsageError, match=r"do not parse: .*test_bad.py, line 1"):  # as before: the staff's error
        find_grading_tests(tmp_path)
    assert len(calls) == 2


def test_gradcheck_has_no_ast_parse_of_its_own():
    """One helper for every parse (the sandbox's child file, sent as it is, parses nothing)."""
    found = [f"{p.relative_to(ROOT)}:{i}" for p in sorted((ROOT / "gradcheck").rglob("*.py")) if p.name != "_pyast.py"
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\bast\.parse\(|PyCF_ONLY_AST", line)]
    assert found == []
