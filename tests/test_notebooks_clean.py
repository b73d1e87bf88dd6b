"""Every notebook in notebooks/ is stored clean, runs on the project kernel, and draws a figure.

The notebooks themselves are executed by nbmake (``pytest notebooks/``); this test checks
what nbmake does not: that no outputs are committed (they would go stale and bloat diffs),
that the kernelspec is the project's ``backprop-lab`` kernel, and that each notebook shows
at least one figure inline. Outputs are not stored, so the figure check reads the source: a
code cell whose last statement is ``plt.show()`` or a bare expression that is a figure --
a name bound in that cell to ``Figure(...)`` / ``plt.figure(...)`` / ``plt.subplots(...)``
/ a ``plot_*(...)`` call, or such a call itself (``gradcheck.plots.plot_*`` return Figures).
"""

import ast
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
KERNELSPEC = {"name": "backprop-lab", "display_name": "backprop-lab (.venv)", "language": "python"}
FIGURE_MAKERS = {"Figure", "figure"}  # plus plot_*(...); plt.subplots() gives (fig, axes)


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell):
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def _callee(node):
    """Name of the called function: ``Figure`` for ``Figure(...)``, ``plot_x`` for ``m.plot_x(...)``."""
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _makes_figure(call):
    name = _callee(call)
    return name is not None and (name in FIGURE_MAKERS or name.startswith("plot_"))


def _shows_figure(source):
    """True when the cell's last statement displays a matplotlib figure."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    body = ast.parse(code).body
    if not body or not isinstance(body[-1], ast.Expr):
        return False
    last = body[-1].value
    if _callee(last) == "show":  # plt.show()
        return True
    if _makes_figure(last):
        return True
    if isinstance(last, ast.Name):  # `fig` at the end: was it bound to a figure in this cell?
        for node in ast.walk(ast.Module(body=body[:-1], type_ignores=[])):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if _makes_figure(node.value) and isinstance(target, ast.Name):
                    bound = target
                elif _callee(node.value) == "subplots" and isinstance(target, ast.Tuple):
                    bound = target.elts[0]  # fig, ax = plt.subplots()
                else:
                    continue
                if isinstance(bound, ast.Name) and bound.id == last.id:
                    return True
    return False


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 1


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_without_outputs(path):
    dirty = [
        i for i, cell in enumerate(_load(path)["cells"])
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)
    ]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or an execution count; clear them"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_kernelspec_is_backprop_lab(path):
    assert _load(path)["metadata"].get("kernelspec") == KERNELSPEC


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_has_an_inline_figure(path):
    cells = [_source(c) for c in _load(path)["cells"] if c["cell_type"] == "code"]
    assert any(_shows_figure(src) for src in cells), (
        f"{path.name}: no code cell ends with a figure (a Figure expression or plt.show())"
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("fig = Figure()\nax = fig.subplots()\nfig", True),
        ("fig, ax = plt.subplots()\nax.plot([1])\nfig", True),
        ("plots.plot_result(result)  # shown inline", True),
        ("%matplotlib inline\nplt.plot([1])\nplt.show()", True),
        ("fig = Figure()\nfig.savefig('x.png')", False),
        ("ax = fig.subplots()\nax", False),
        ("x = 1\nx", False),
        ("print('no figure')", False),
    ],
)
def test_figure_detection(source, expected):
    assert _shows_figure(source) is expected


def test_figures_a_cell_asserts_are_the_ones_its_markdown_states():
    """A code line ending in ``# stated in the text: A, B`` asserts A and B (equal as numbers to literals on that
    line; nbmake runs it), and the notebook's markdown states each, so the prose cannot drift from what the cell
    computes (newuser21: notebook 02 said p4(1 - p4) = 0.24 of 0.2347, notebook 03 quoted float32's optimal step
    as 5e-3, 7.1e-3 and 3.2e-3)."""
    import re

    seen = 0
    for path in NOTEBOOKS:
        cells = _load(path)["cells"]
        markdown = " ".join(_source(c) for c in cells if c["cell_type"] == "markdown")
        for c in cells:
            for line in _source(c).splitlines() if c["cell_type"] == "code" else ():
                m = re.search(r"# stated in the text: (.+)$", line)
                if not m:
                    continue
                seen += 1
                literals = {float(x) for x in re.findall(r"(?<![\w.])\d+\.?\d*(?:e-?\d+)?", line[:m.start()])}
                for figure in (f.strip() for f in m.group(1).split(",")):
                    assert float(figure) in literals, (path.name, figure, line)
                    assert re.search(rf"(?<![\d.]){re.escape(figure)}(?!\d)", markdown), (path.name, figure)
    assert seen >= 2
