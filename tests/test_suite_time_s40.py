"""Session 40 (issue 10, the suite's time): nbmake's item of a notebook that a test of ours executes is left out of a
run that collected that test (``conftest.EXECUTED_BY``): each such test exists and executes that notebook, so the
notebook still runs once, checked."""

import ast
from pathlib import Path

from conftest import EXECUTED_BY

ROOT = Path(__file__).resolve().parents[1]


def test_each_notebook_left_to_a_test_is_executed_by_it():
    assert EXECUTED_BY
    for notebook, test in EXECUTED_BY.items():
        path, _, name = test.partition("::")
        assert (ROOT / notebook).is_file() and notebook.endswith(".ipynb"), notebook
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
        assert name in funcs, test
        # the test takes the fixture that executes the notebook and asserts it ran to its end without an error
        fixture = funcs[funcs[name].args.args[0].arg]
        source = ast.unparse(fixture)
        assert "execute(" in source and "assert err is None" in source, source
        assert Path(notebook).name in (ROOT / path).read_text(encoding="utf-8"), (path, notebook)
