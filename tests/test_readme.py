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
