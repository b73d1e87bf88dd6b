"""The README's Python snippets run as written (in order, in one namespace)."""

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_snippets_run_and_print_34():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 2
    ns: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for code in blocks:
            exec(compile(code, str(README), "exec"), ns)  # noqa: S102 - our own README
    assert out.getvalue().split()[0] == "34.0"
    assert float(ns["loss_value"]) > 0 and len(ns["grads"]) == 4


def test_readme_counts_the_example_assignments_mutants():
    """newuser34 L1: the README said eight seeded mutants after a ninth was added; its count is the folders'."""
    folder = README.parent / "assignments" / "linear_relu_ce" / "mutants"
    n = sum(p.is_dir() for p in folder.iterdir())
    words = {8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert f"example assignment's {words[n]} seeded mutants: `graded {n} submission(s)" in text, n
